/* The CUDA backend's automatic walk, on the host: the registry walk is pure
 * planning (no device touched), so convt3d_cuda_walk_choice() runs it with
 * an H200's limits on a machine without a GPU.  The target for the
 * f32 walk: the generic direct kernel (cuda/f32_direct_generic, about 1% of
 * the fp32 FMA rate) chosen for no problem with C_in/G >= 4 or C_out/G >= 4
 * and every input size >= 8 -- checked on the problems of
 * bench/inputs/classes.txt and on a grid of dilated, strided and grouped
 * problems in both layouts.  CONVT3D_TEST_WALK=1 prints every choice of the
 * class list.  SKIPs in a build without CUDA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/cases.h"
#include "test_classes.h"
#include "cuda_walk.h"
#include "test_util.h"

#define GENERIC "cuda/f32_direct_generic"

/* An H200's cudaDeviceProp: sharedMemPerBlockOptin, sharedMemPerMultiprocessor,
 * multiProcessorCount (the limits the planners' rules were measured with). */
enum { H200_SMEM_OPTIN = 232448, H200_SMEM_SM = 233472, H200_SMS = 132 };

/* Whether the target covers s: channels on one side, sizes. */
static int covered(const convt3d_shape *s)
{
    if (s->cig < 4 && s->cog < 4)
        return 0;
    for (int d = 0; d < 3; d++)
        if (s->in[d] < 8)
            return 0;
    return 1;
}

/* The walk's choice for p; 0 (printed) where the target covers p and the
 * choice is the generic kernel, or where no implementation is chosen. */
static int walk_ok(const convt3d_problem *p, const char *what, int print, int *n_covered)
{
    convt3d_shape s;
    if (convt3d_shape_from_problem(p, &s) != CONVT3D_SUCCESS)
        return 1; /* not a problem this test is about */
    const char *name = convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
    char desc[512];
    convt3d_problem_to_string(p, desc, sizeof desc);
    if (!name) {
        printf("\n  %s: no CUDA implementation chosen: %s", what, desc);
        return 0;
    }
    const int cov = covered(&s);
    *n_covered += cov;
    if (print)
        printf("\n  %-32s %s%s", what, name, cov ? "" : " (not covered)");
    if (cov && strcmp(name, GENERIC) == 0) {
        printf("\n  FAILED %s: %s chosen for %s", what, GENERIC, desc);
        return 0;
    }
    return 1;
}

static int no_cuda(void)
{
#if CONVT3D_HAVE_CUDA
    return 0;
#else
    test_skip("the CUDA walk: a build without CUDA");
    return 1;
#endif
}

/* Every runnable problem of the class list. */
static void test_classes(void)
{
    if (no_cuda())
        return;
    case_list cl;
    CU_ASSERT_FATAL(read_classes(&cl) == 0);
    const char *env = getenv("CONVT3D_TEST_WALK");
    const int print = env && *env && strcmp(env, "0") != 0;
    int ran = 0, n_covered = 0, bad = 0;
    for (size_t i = 0; i < cl.n; i++) {
        if (cl.v[i].kind != CASE_RUN)
            continue;
        ran++;
        bad += !walk_ok(&cl.v[i].problem, cl.v[i].label, print, &n_covered);
    }
    printf("\n  %d problems, %d covered by the target, %d failed ", ran, n_covered, bad);
    CU_ASSERT(ran > 50 && n_covered > 30);
    CU_ASSERT_EQUAL(bad, 0);
    cases_free(&cl);
}

/* A grid: channels a group on either side of 4, groups, kernels, strides
 * (W stride up to 4, past the phase kernel's 2), dilations (W dilation 2
 * and 3 at W strides it does not divide), both layouts, sizes 8 and 11. */
static void test_grid(void)
{
    if (no_cuda())
        return;
    static const int cigs[] = {1, 3, 4, 16}, cogs[] = {1, 4, 40}, ks[] = {1, 3, 5};
    int ran = 0, n_covered = 0, bad = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 3; k++)
                for (int sw = 1; sw <= 4; sw++)
                    for (int lw = 1; lw <= 3; lw++)
                        for (int v = 0; v < 4; v++) {
                            const int g = v & 1 ? 3 : 1;
                            const int size = v & 2 ? 11 : 8;
                            const convt3d_layout layout =
                                (a + b + k + sw + lw) & 1 ? CONVT3D_LAYOUT_NDHWC
                                                         : CONVT3D_LAYOUT_NCDHW;
                            convt3d_problem p =
                                make_problem(1, g * cigs[a], g * cogs[b], g, size, size, size,
                                             ks[k], 1, ks[k] / 2, 0, v & 1, layout);
                            p.stride[2] = sw;
                            p.stride[0] = 1 + (v >> 1);
                            p.dilation[2] = lw;
                            p.dilation[1] = 1 + (lw == 3);
                            if (convt3d_validate(&p) != CONVT3D_SUCCESS)
                                continue;
                            ran++;
                            bad += !walk_ok(&p, "grid", 0, &n_covered);
                        }
    printf("\n  %d problems, %d covered by the target, %d failed ", ran, n_covered, bad);
    CU_ASSERT(ran > 500 && n_covered > 300);
    CU_ASSERT_EQUAL(bad, 0);
}

void register_cuda_walk_tests(void)
{
    static const test_entry tests[] = {
        {"classes.txt: no generic kernel where C_in/G or C_out/G >= 4 and sizes >= 8",
         test_classes},
        {"a grid of dilated, strided, grouped problems: the same", test_grid},
        {NULL, NULL}};
    add_suite("cuda walk (host, H200 limits)", tests);
}
