/* The CUDA backend's automatic walk, on the host: the registry walk is pure
 * planning (no device touched), so convt3d_cuda_walk_choice() runs it with
 * an H200's limits on a machine without a GPU.  The target for the
 * f32 walk: the generic direct kernel (cuda/f32_direct_generic, about 1% of
 * the fp32 FMA rate) chosen for no problem with C_in/G >= 4 or C_out/G >= 4
 * and every input size >= 8 -- checked on the problems of
 * bench/inputs/classes.txt and on a grid of dilated, strided and grouped
 * problems in both layouts.  Few output channels (igemm/plan.cu,
 * igemm_preferred; fewout/plan.cu, fewout_preferred): with C_out/G <= 4
 * never the implicit-GEMM FMA engine; C_in/G >= 16 with C_in/G x taps >= 256
 * (C_out/G <= 8), or C_out/G <= 4 in one group on at most 250,000
 * positions, to cuda/f32_fewout_ksplit (but for C_in/G <= 2, the few-input
 * kernel's).  Depthwise problems in NDHWC (the ndhwc_depthwise class, the
 * suite's depthwise shape, a grid) get cuda/f32_dwlast, their NCDHW twins
 * the depthwise tile kernel, or with fewer taps than stride phases the
 * four-output depthwise kernel.  CONVT3D_TEST_WALK=1 prints every choice of the
 * class list.  SKIPs in a build without CUDA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/cases.h"
#include "../bench/descriptor.h"
#include "../bench/suite.h"
#include "test_classes.h"
#include "cuda_walk.h"
#include "test_util.h"

#define GENERIC "cuda/f32_direct_generic"
#define FEWOUT "cuda/f32_fewout_ksplit"
#define DWLAST "cuda/f32_dwlast"
#define FEWIN "cuda/f32_fewin_phase_4"

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

/* gcd, written here rather than taken from the planners, so that the
 * rule below is stated independently of the code it checks. */
static long long gcd_ll(long long a, long long b)
{
    while (b) {
        const long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The most taps of a stride phase: per dim, a phase's taps are dilation
 * steps s / gcd(s, l) apart in k (l the dilation), so ceil(k / that). */
static long long most_phase_taps(const convt3d_problem *p)
{
    long long taps = 1;
    for (int d = 0; d < 3; d++) {
        const long long step = p->stride[d] / gcd_ll(p->stride[d], p->dilation[d]);
        taps *= (p->kernel[d] + step - 1) / step;
    }
    return taps;
}

/* Whether the walk's choice for p agrees with the few-output-channel rule
 * (fewout/plan.cu, fewout_preferred): with C_out/G <= 4 the implicit-GEMM
 * FMA engine is never chosen (the few-output kernel takes what it would
 * take), and C_in/G >= 16 with a phase's K (C_in/G x its taps) >= 256 (C_out/G
 * <= 8), or C_out/G <= 4 in one group on at most 250,000 positions, goes
 * to the few-output kernel; prints p if not.  *small counts the problems
 * the second part covers. */
static int fewout_rule_ok(const convt3d_problem *p, const char *what, int *small)
{
    convt3d_shape s;
    if (convt3d_shape_from_problem(p, &s) != CONVT3D_SUCCESS)
        return 1;
    const char *name = convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
    const int want_fewout = s.cig >= 16 && s.cog <= 8 &&
                            (s.cig * most_phase_taps(p) >= 256 ||
                             (s.cog <= 4 && s.groups == 1 && s.n * s.out_spatial <= 250000));
    *small += want_fewout;
    const int ok = name && !(s.cog <= 4 && strcmp(name, "cuda/f32_igemm_8x8") == 0) &&
                   (!want_fewout || strcmp(name, FEWOUT) == 0);
    if (ok)
        return 1;
    char desc[512];
    convt3d_problem_to_string(p, desc, sizeof desc);
    printf("\n  FAILED %s: %s chosen for %s (C_in/G %lld, C_out/G %lld)", what,
           name ? name : "nothing", desc, (long long)s.cig, (long long)s.cog);
    return 0;
}

/* The out_c1_3 class (k4 s2 p1 decoder heads, both layouts) and a grid of
 * problems with 1-8 output and 8-128 input channels a group (strides 1-3,
 * dilation, groups, both layouts; 6^3 and 16^3 inputs) follow the
 * few-output rule above. */
static void test_fewout_rule(void)
{
    if (no_cuda())
        return;
    case_list cl;
    CU_ASSERT_FATAL(read_classes(&cl) == 0);
    int in_class = 0, small = 0, bad = 0;
    for (size_t i = 0; i < cl.n; i++) {
        if (cl.v[i].kind != CASE_RUN || strcmp(cl.v[i].klass, "out_c1_3") != 0)
            continue;
        in_class++;
        bad += !fewout_rule_ok(&cl.v[i].problem, cl.v[i].label, &small);
    }
    CU_ASSERT(in_class >= 3);
    cases_free(&cl);
    static const int cigs[] = {8, 16, 128}, cogs[] = {1, 2, 3, 4, 6, 8};
    int ran = 0, grid_small = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 6; b++)
            for (int st = 1; st <= 3; st++)
                for (int v = 0; v < 16; v++) {
                    const int g = v & 1 ? 2 : 1, k = st == 2 ? 4 : 3, side = v & 8 ? 6 : 16;
                    const convt3d_layout layout =
                        v & 2 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
                    convt3d_problem p = make_problem(1 + (v & 1), g * cigs[a], g * cogs[b], g,
                                                     side, side, side, k, st, 1, 0, v & 1, layout);
                    if (v & 4)
                        p.dilation[0] = p.dilation[2] = 2;
                    if (convt3d_validate(&p) != CONVT3D_SUCCESS)
                        continue;
                    ran++;
                    bad += !fewout_rule_ok(&p, "grid", &grid_small);
                }
    printf("\n  out_c1_3: %d problems; grid: %d problems, %d for the few-output kernel, %d failed ",
           in_class, ran, grid_small, bad);
    CU_ASSERT(ran > 400 && grid_small > 50);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The walk's choice for p is `want` (a name, or a prefix ending in '*');
 * prints p if not. */
static int choice_is(const convt3d_problem *p, const char *what, const char *want)
{
    convt3d_shape s;
    if (convt3d_shape_from_problem(p, &s) != CONVT3D_SUCCESS)
        return 0;
    const char *name = convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
    const size_t n = strlen(want);
    const int ok = name && (want[n - 1] == '*' ? strncmp(name, want, n - 1) == 0
                                               : strcmp(name, want) == 0);
    if (!ok) {
        char desc[512];
        convt3d_problem_to_string(p, desc, sizeof desc);
        printf("\n  FAILED %s: %s chosen for %s, not %s", what, name ? name : "nothing", desc,
               want);
    }
    return ok;
}

/* The few-input kernel's rule (simple/plan.cu, fewin_entry_passed_over):
 * C_in/G <= 8, C_in/G x k_volume <= the stride product, not depthwise, in
 * NCDHW or (C_out/G 2-8) in NDHWC; and, in either layout, C_in/G <= 2
 * where the implicit-GEMM engine would take the problem
 * (fewin_preferred_over_engine; in the grid below that is W stride 3, where
 * no phase kernel is built), in NDHWC any C_in/G with at most 8 products an
 * output (round 35) -- the random
 * problems it was measured on (rounds 20 and 21), and a grid of channels,
 * kernels and strides in both layouts. */
static void test_fewin_rule(void)
{
    if (no_cuda())
        return;
    int bad = 0, ran = 0, taken = 0;
    /* random_236 of seed 1: 1 -> 128 channels, k(4,2,1) s2 */
    convt3d_problem p = make_problem(1, 1, 128, 1, 22, 26, 17, 2, 2, 0, 0, 0,
                                     CONVT3D_LAYOUT_NCDHW);
    p.kernel[0] = 4;
    p.kernel[2] = 1;
    p.padding[0] = 2;
    p.padding[1] = 1;
    bad += !choice_is(&p, "random_236", FEWIN);
    /* random_47: 1 -> 47, k1 s2; and in NDHWC */
    p = make_problem(4, 1, 47, 1, 12, 12, 12, 1, 2, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    bad += !choice_is(&p, "random_47", FEWIN);
    p.layout = CONVT3D_LAYOUT_NDHWC;
    bad += choice_is(&p, "random_47 NDHWC", "cuda/f32_phase_*") == 0;
    /* random_283 of seed 1 (round 21): NDHWC, 1 -> 32, k(5,4,2) s(3,1,3),
       which the implicit-GEMM engine took at 0.57 ms (this kernel 0.23) */
    p = make_problem(3, 1, 32, 1, 30, 30, 30, 1, 1, 0, 0, 0, CONVT3D_LAYOUT_NDHWC);
    p.kernel[0] = 5, p.kernel[1] = 4, p.kernel[2] = 2;
    p.stride[0] = 3, p.stride[2] = 3;
    p.padding[0] = p.padding[1] = 1;
    bad += !choice_is(&p, "random_283", FEWIN);
    /* random_201 of seed 1: NCDHW, 1 -> 4, k(1,1,3) W dilation 3, which the
       few-output kernel took (0.0144 ms; this kernel 0.0059) */
    p = make_problem(2, 1, 4, 1, 23, 7, 15, 1, 1, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    p.kernel[2] = 3;
    p.padding[2] = 3;
    p.dilation[2] = 3;
    bad += !choice_is(&p, "random_201", FEWIN);
    /* depthwise at W stride 3 (no tile kernel): the depthwise build, not this one */
    p = make_problem(6, 4, 4, 4, 10, 10, 10, 1, 3, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    bad += !choice_is(&p, "depthwise k1 s3", "cuda/f32_depthwise_phase_4");
    /* one product an output with 8 input channels */
    p = make_problem(16, 8, 64, 1, 19, 24, 4, 1, 2, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    bad += !choice_is(&p, "8 -> 64, k1 s2", FEWIN);
    /* (C_out/G <= 4 may go to the few-output kernel first: fewout_preferred) */
    static const int cigs[] = {1, 2, 4, 8, 12}, cogs[] = {8, 16, 64};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 1; k <= 3; k++)
                for (int st = 1; st <= 3; st++)
                    for (int l = 0; l < 2; l++) {
                        const convt3d_layout layout = l ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
                        p = make_problem(2, cigs[a], cogs[b], 1, 10, 12, 14, k, st, 0, 0, b & 1,
                                         layout);
                        if (convt3d_validate(&p) != CONVT3D_SUCCESS)
                            continue;
                        ran++;
                        const int want =
                            (cigs[a] <= 8 && cigs[a] * k * k * k <= st * st * st &&
                             (!l || cogs[b] <= 8)) ||
                            (cigs[a] <= 2 && st == 3) ||
                            (l && st == 3 && cigs[a] * k * k * k <= 8 * st * st * st);
                        taken += want;
                        convt3d_shape sh;
                        convt3d_shape_from_problem(&p, &sh);
                        const char *name =
                            convt3d_cuda_walk_choice(&sh, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
                        if (!name || (strcmp(name, FEWIN) == 0) != want) {
                            char desc[512];
                            convt3d_problem_to_string(&p, desc, sizeof desc);
                            printf("\n  FAILED grid: %s chosen for %s (want the few-input kernel: "
                                   "%d)",
                                   name ? name : "nothing", desc, want);
                            bad++;
                        }
                    }
    printf("\n  grid: %d problems, %d for the few-input kernel, %d failed ", ran, taken, bad);
    CU_ASSERT(ran > 200 && taken > 50);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The problem a bench descriptor names, with every tensor of type t. */
static convt3d_problem problem_of_desc(const char *desc, convt3d_dtype t)
{
    bench_desc d;
    desc_error err;
    convt3d_problem p;
    char reason[256];
    memset(&p, 0, sizeof p);
    CU_ASSERT_FATAL(desc_parse(desc, &d, &err) == 0);
    CU_ASSERT_FATAL(desc_to_problem(&d, &p, reason, sizeof reason) == DESC_EXPRESSIBLE);
    p.x_type = p.w_type = p.bias_type = p.y_type = t;
    return p;
}

/* A bench descriptor with every tensor of type `type`, and the walk's
 * expected choice: a name, or a prefix ending in '*'. */
typedef struct {
    const char *desc;
    convt3d_dtype type;
    const char *want;
} walk_case;

/* How many of the n cases the walk gets wrong (each printed). */
static int walk_cases_failed(const walk_case *cases, size_t n, const char *what)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        convt3d_problem p = problem_of_desc(cases[i].desc, cases[i].type);
        bad += !choice_is(&p, what, cases[i].want);
    }
    return bad;
}

/* Round 34's two rules, on random problems of that measurement (H100,
 * `--random 400 --all-kernels`, f32): the four-output kernel for NDHWC with
 * C_out/G 2-8 and <= 1 product an output (simple/plan.cu,
 * fewin_entry_passed_over), and the few-output kernel for small problems
 * (<= 10,000 positions, C_in/G >= 5, more than one product an output; f32
 * data only: fewout/plan.cu, fewout_preferred). */
static void test_round34_rules(void)
{
    if (no_cuda())
        return;
    static const walk_case cases[] = {
        {"g32mb4_ic32id22ih24iw22_oc64od45oh47ow43_kd5kh1kw1_sd2sh2sw2_pd1ph0pw0_dd0dh0dw0_bias0_"
         "layoutndhwc",
         CONVT3D_F32, FEWIN}, /* seed 2 random_251: 0.497 ms on the phase kernel, 0.112 here */
        {"g1mb3_ic3id16ih31iw23_oc3od46oh91ow67_kd1kh1kw1_sd3sh3sw3_pd0ph0pw0_dd0dh0dw0_bias0_"
         "layoutndhwc",
         CONVT3D_F32, FEWIN}, /* seed 2 random_382: 0.063 ms generic, 0.020 here */
        {"g1mb3_ic3id16ih31iw23_oc24od46oh91ow67_kd1kh1kw1_sd3sh3sw3_pd0ph0pw0_dd0dh0dw0_bias0_"
         "layoutndhwc",
         CONVT3D_F32, FEWIN}, /* 24 output channels: round 35's NDHWC short sums */
        {"g1mb15_ic13id4ih4iw4_oc1od10oh6ow6_kd4kh4kw4_sd2sh2sw2_pd0ph2pw2_dd0dh0dw0_bias1_"
         "layoutncdhw",
         CONVT3D_F32, FEWOUT}, /* seed 2 random_193: 0.036 ms phase, 0.011 here */
        {"g2mb4_ic162id6ih6iw6_oc8od11oh11ow11_kd1kh1kw1_sd2sh2sw2_pd0ph0pw0_dd0dh0dw0_bias1_"
         "layoutndhwc",
         CONVT3D_F32, FEWOUT}, /* seed 1 random_346: 0.046 ms phase, 0.010 here */
        {"g1mb15_ic13id4ih4iw4_oc1od10oh6ow6_kd4kh4kw4_sd2sh2sw2_pd0ph2pw2_dd0dh0dw0_bias1_"
         "layoutncdhw",
         CONVT3D_F16, "cuda/f16_phase_*"}, /* half data: not measured, unchanged */
    };
    CU_ASSERT_EQUAL(walk_cases_failed(cases, sizeof cases / sizeof cases[0], "round 34"), 0);
}

/* Round 35's rules, on random problems of that measurement (H100, seeds 1-2
 * of `--random 400 --all-kernels`, f32): phase-kernel problems whose grouped
 * tiling gives at most one block to every second multiprocessor take tiled
 * mode (phase/plan.cu, grouped_leaves_sms_idle), and C_out/G > 16 takes 4
 * output channels a thread where 8 would give at most one block a
 * multiprocessor (eight_channel_blocks_few), and where few input channels
 * at stride 2 sent 8 channels a thread to tiled mode, grouped mode with 4
 * (few_inputs_grouped_four); larger grids and half data keep grouped mode
 * and 8 channels.  And NDHWC problems of at most 8 products an output that
 * the FMA engine would take go to the four-output kernel (simple/plan.cu,
 * fewin_preferred_over_engine); NCDHW and longer sums keep the engine. */
static void test_round35_rule(void)
{
    if (no_cuda())
        return;
    static const walk_case cases[] = {
        {"g1mb2_ic4id8ih8iw8_oc11od18oh21ow11_kd4kh4kw4_sd2sh3sw1_pd0ph2pw0_dd0dh0dw0_bias0_"
         "layoutndhwc",
         CONVT3D_F32, "cuda/f32_phase_tiled_1x8x4"}, /* seed 1 random_100: 0.032 -> 0.013 ms */
        {"g1mb2_ic8id11ih12iw30_oc4od21oh25ow61_kd3kh2kw2_sd2sh2sw2_pd1ph0pw0_dd0dh0dw0_bias0_"
         "layoutncdhw",
         CONVT3D_F32, "cuda/f32_phase_tiled_2x4x4"}, /* seed 2 random_327: 0.022 -> 0.013 */
        {"g1mb1_ic7id11ih11iw11_oc144od21oh33ow22_kd2kh2kw2_sd2sh3sw2_pd1ph0pw0_dd1dh1dw0_bias0_"
         "layoutncdhw",
         CONVT3D_F32, "cuda/f32_phase_tiled_2x4x8"}, /* seed 1 random_72: 0.069 -> 0.039 */
        {"g4mb3_ic32id6ih6iw6_oc40od12oh11ow12_kd4kh2kw5_sd2sh2sw2_pd1ph1pw2_dd0dh0dw0_bias1_"
         "layoutncdhw",
         CONVT3D_F32, "cuda/f32_phase_tiled_2x4x4"}, /* seed 2 random_371: 0.021 -> 0.014 */
        {"g1mb2_ic8id23ih23iw23_oc112od47oh22ow24_kd2kh2kw2_sd2sh1sw1_pd0ph1pw0_dd0dh0dw0_bias0_"
         "layoutndhwc",
         CONVT3D_F32, "cuda/f32_phase_grouped_1x8x8"}, /* seed 1 random_230: 288 blocks */
        {"g16mb4_ic80id24ih5iw13_oc176od70oh10ow16_kd1kh2kw4_sd3sh2sw1_pd0ph0pw0_dd0dh0dw0_bias0_"
         "layoutncdhw",
         CONVT3D_F32, "cuda/f32_phase_grouped_1x8x4"}, /* seed 2 random_322: 384 blocks */
        {"g1mb1_ic14id10ih10iw10_oc39od19oh23ow23_kd5kh5kw5_sd2sh2sw2_pd2ph0pw0_dd0dh0dw0_bias1_"
         "layoutndhwc",
         CONVT3D_F32, "cuda/f32_phase_tiled_2x4x4"}, /* seed 2 random_3: 0.055 -> 0.031 (x8) */
        {"g1mb3_ic1id11ih16iw32_oc18od21oh17ow33_kd3kh2kw2_sd2sh1sw1_pd1ph0pw0_dd0dh0dw0_bias1_"
         "layoutndhwc",
         CONVT3D_F32, "cuda/f32_phase_grouped_1x8x4"}, /* seed 2 random_190: 0.023 -> 0.016 */
        {"g1mb1_ic2id24ih29iw10_oc30od47oh58ow21_kd3kh3kw3_sd2sh2sw2_pd1ph1pw0_dd0dh0dw0_bias1_"
         "layoutndhwc",
         CONVT3D_F32, "cuda/f32_phase_grouped_2x4x4"}, /* seed 2 random_21: 0.030 -> 0.018 */
        {"g1mb2_ic3id17ih11iw8_oc32od33oh23ow15_kd3kh3kw3_sd2sh2sw2_pd1ph0pw1_dd0dh0dw0_bias0_"
         "layoutncdhw",
         CONVT3D_F32, "cuda/f32_phase_tiled_2x4x4"}, /* seed 2 random_181: few blocks, tiled x4 */
        {"g1mb3_ic4id21ih21iw21_oc28od41oh41ow41_kd1kh1kw1_sd2sh2sw2_pd0ph0pw0_dd2dh1dw2_bias0_"
         "layoutndhwc",
         CONVT3D_F32, FEWIN}, /* seed 2 random_294: 0.154 ms on the FMA engine, 0.036 here */
        {"g8mb11_ic64id21ih19iw17_oc24od44oh40ow36_kd2kh2kw2_sd2sh2sw2_pd0ph0pw0_dd2dh2dw2_bias1_"
         "layoutndhwc",
         CONVT3D_F32, FEWIN}, /* seed 2 random_246: 0.560 ms few-output, 0.240 here */
        {"g1mb1_ic14id5ih5iw5_oc256od13oh15ow12_kd5kh3kw2_sd3sh3sw3_pd2ph0pw1_dd0dh0dw0_bias0_"
         "layoutndhwc",
         CONVT3D_F32, "cuda/f32_igemm_8x8"}, /* seed 1 random_251: 15.6 products an output */
        {"g8mb2_ic64id13ih24iw7_oc256od47oh70ow19_kd5kh1kw1_sd3sh3sw3_pd1ph0pw0_dd2dh0dw1_bias1_"
         "layoutncdhw",
         CONVT3D_F32, "cuda/f32_igemm_8x8"}, /* seed 2 random_297: NCDHW keeps the engine */
        {"g1mb2_ic8id11ih12iw30_oc4od21oh25ow61_kd3kh2kw2_sd2sh2sw2_pd1ph0pw0_dd0dh0dw0_bias0_"
         "layoutncdhw",
         CONVT3D_F16, "cuda/f16_phase_grouped_*"}, /* half data: not measured, unchanged */
    };
    CU_ASSERT_EQUAL(walk_cases_failed(cases, sizeof cases / sizeof cases[0], "round 35"), 0);
}

/* Round 38's rule (igemm/plan.cu, igemm_takes_tiny_volume): many channels
 * a group (>= 128 each side) on at most 8192 output positions an image,
 * where the phase kernel's plan has at most two blocks a multiprocessor,
 * go to the FMA engine in either layout (H100: unet_3d deconv7 NCDHW 0.553
 * -> 0.344 ms, tiny_c256to128_5_b8 NDHWC 0.328 -> 0.085); a larger volume
 * and fewer channels keep their kernels. */
static void test_round38_rule(void)
{
    if (no_cuda())
        return;
    static const walk_case cases[] = {
        {"g1mb1ic256ih11iw11id10oc256oh13ow13od12kh3kw3kd3sh1sw1sd1ph0pw0dh0dw0_layoutncdhw",
         CONVT3D_F32, "cuda/f32_igemm_8x8"},
        {"g1mb1ic256ih11iw11id10oc256oh13ow13od12kh3kw3kd3sh1sw1sd1ph0pw0dh0dw0_layoutndhwc",
         CONVT3D_F32, "cuda/f32_igemm_8x8"},
        {"mb8ic256oc128_id5kd3sd2pd1_layoutndhwc", CONVT3D_F32, "cuda/f32_igemm_8x8"},
        {"mb1ic256oc256_id24kd3pd1_layoutncdhw", CONVT3D_F32, "cuda/f32_phase_*"},
        {"mb2ic96oc96_id12kd3pd1_layoutndhwc", CONVT3D_F32, "cuda/f32_phase_*"},
    };
    CU_ASSERT_EQUAL(walk_cases_failed(cases, sizeof cases / sizeof cases[0], "round 38"), 0);
}

/* The plan the walk makes for p described (convt3d_cuda_walk_describe) into
 * buf: the implementation's name, or NULL (none, or a build without CUDA). */
static const char *walk_describe(const convt3d_problem *p, convt3d_math_mode math, char *buf,
                                 size_t size)
{
    buf[0] = '\0';
#if CONVT3D_HAVE_CUDA
    convt3d_shape s;
    if (convt3d_shape_from_problem(p, &s) != CONVT3D_SUCCESS)
        return NULL;
    s.math = math;
    return convt3d_cuda_walk_describe(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS, buf, size);
#else
    (void)p;
    (void)math;
    (void)size;
    return NULL;
#endif
}

/* The implicit-GEMM engine's cluster size in a described plan ("clusters of
 * N"), or 0 where the plan is another kernel's. */
static int igemm_cluster_of(const char *name, const char *desc)
{
    const char *at = name && strstr(name, "igemm") ? strstr(desc, "clusters of ") : NULL;
    return at ? atoi(at + strlen("clusters of ")) : 0;
}

/* The FMA engine's tile and cluster size where even an eight-block split
 * of its widest tile leaves block slots idle (igemm/plan.cu:
 * igemm_small_grid_tile, igemm_row_cluster_size): with C_out/G > 64 and at
 * least 16 K steps one warp row (1 x 4 warps, 64 positions x 128 channels)
 * in clusters of the largest power of two up to 16 that leaves each block
 * at least 4 K steps; with fewer K steps or C_out/G <= 64 still 2 x 1 warps
 * in clusters of at most 8; the plans that fill the GPU with their 8-warp
 * tile keep it (tiny_c256to128_5_b8).
 * Round 40's sweep (H100) fitted the rule on the tiny-volume class and
 * unet_3d deconv7/8, round 41 measured it out of sample (bench/NOTES.md).
 * Rows: those problems (the 1 x 4 tile past 64 positions a phase, clusters
 * of 16, of 4 where 24 K steps allow no more), one of the kind round 41
 * drew (2 x 128 channels on 5^3 at stride 1), and the branches left as they
 * were.  And every
 * automatic plan of the engine with a cluster past 8 (the non-portable
 * sizes) is the FMA engine's row tile: the class list in f32, tf32, 3xtf32
 * and f16, and a grid of many-channel problems on small volumes, both
 * layouts. */
typedef struct {
    const char *desc; /* bench descriptor, f32 */
    const char *plan; /* what the plan's description must contain */
} plan_case;

#define ROW_TILE "cuda/f32_igemm_8x8: warps 1 x 4 (tile 64 x 128), clusters of "

static void test_igemm_tiny_plans(void)
{
    if (no_cuda())
        return;
    static const plan_case cases[] = {
        {"g1mb1ic512ih9iw9id8oc256oh11ow11od10kh3kw3kd3sh1sw1sd1ph0pw0dh0dw0_layoutncdhw",
         ROW_TILE "16, 38 tiles"},
        {"g1mb1ic256ih11iw11id10oc256oh13ow13od12kh3kw3kd3sh1sw1sd1ph0pw0dh0dw0_layoutncdhw",
         ROW_TILE "16, 64 tiles"},
        {"g1mb1ic256ih11iw11id10oc256oh13ow13od12kh3kw3kd3sh1sw1sd1ph0pw0dh0dw0_layoutndhwc",
         ROW_TILE "16, 64 tiles"},
        {"g1mb1ic512ih7iw7id6oc256oh11ow11od10kh3kw3kd3sh1sw1sd1ph0pw0dh1dw1dd1_layoutncdhw",
         ROW_TILE "16, 38 tiles"},
        {"mb1ic512oc256_id4kd4sd2pd1_layoutncdhw", ROW_TILE "16, 16 tiles"},
        {"mb2ic256oc256_id8kd3pd1_layoutncdhw", ROW_TILE "16, 32 tiles"},
        {"mb4ic512oc512_id4kd3pd1_layoutndhwc", ROW_TILE "16, 16 tiles"},
        {"mb1ic384oc256_id6kd2sd2_layoutndhwc", ROW_TILE "4, 64 tiles"},
        {"mb2ic128oc128_id5kd3pd1_layoutncdhw", ROW_TILE "16, 4 tiles"},
        /* left as they were: fewer than 16 K steps (clusters of 1-2: round
           41 measured the row tile slower there: 96 output channels, 12 K
           steps; s4304_r65, 11 x 4 -> 256 channels, k1); the 8-warp tile
           that fills the GPU; 2 x 1 warps for C_out/G <= 64 */
        {"mb1ic192oc96_id6kd2sd2_layoutndhwc",
         "cuda/f32_igemm_8x8: warps 2 x 1 (tile 128 x 32), clusters of 2, 48 tiles"},
        {"g1mb11_ic4id4ih4iw4_oc256od4oh4ow4_kd1kh1kw1_sd1sh1sw1_pd0ph0pw0_dd2dh0dw1_bias1_layoutncdhw",
         "cuda/f32_igemm_8x8: warps 2 x 1 (tile 128 x 32), clusters of 1, 48 tiles"},
        {"mb8ic256oc128_id5kd3sd2pd1_layoutncdhw",
         "cuda/f32_igemm_8x8: warps 2 x 4 (tile 128 x 128), clusters of 8, 48 tiles"},
        {"mb2ic256oc64_id5kd3pd1_layoutncdhw",
         "cuda/f32_igemm_8x8: warps 2 x 1 (tile 128 x 32), clusters of 8, "},
    };
    int bad = 0;
    char buf[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const convt3d_problem p = problem_of_desc(cases[i].desc, CONVT3D_F32);
        const char *name = walk_describe(&p, CONVT3D_MATH_F32, buf, sizeof buf);
        if (!name || !strstr(buf, cases[i].plan)) {
            printf("\n  FAILED %s: planned \"%s\", not \"%s\"", cases[i].desc, buf,
                   cases[i].plan);
            bad++;
        }
    }
    /* automatic plans: clusters past 8 only on the FMA engine's row tile */
    case_list cl;
    CU_ASSERT_FATAL(read_classes(&cl) == 0);
    int engine = 0, wide = 0, stray = 0;
    static const convt3d_math_mode maths[] = {CONVT3D_MATH_F32, CONVT3D_MATH_TF32,
                                              CONVT3D_MATH_3XTF32, CONVT3D_MATH_F32};
    for (size_t i = 0; i < cl.n; i++) {
        if (cl.v[i].kind != CASE_RUN)
            continue;
        for (int m = 0; m < 4; m++) {
            convt3d_problem p = cl.v[i].problem;
            if (m == 3) /* f16 data */
                p.x_type = p.w_type = p.bias_type = p.y_type = CONVT3D_F16;
            const char *name = walk_describe(&p, maths[m], buf, sizeof buf);
            const int cs = igemm_cluster_of(name, buf);
            engine += cs > 0;
            wide += cs > 8;
            if (cs > 8 && !strstr(buf, ROW_TILE)) {
                printf("\n  FAILED %s: %s", cl.v[i].label, buf);
                stray++;
            }
        }
    }
    cases_free(&cl);
    static const int chans[] = {128, 256, 512}, vols[] = {3, 4, 6, 9};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int v = 0; v < 4; v++)
                for (int k = 2; k <= 4; k++)
                    for (int st = 1; st <= 2; st++)
                        for (int l = 0; l < 2; l++) {
                            const convt3d_problem p =
                                make_problem(1 + (v & 1) * 3, chans[a], chans[b] / 2, 1,
                                             vols[v], vols[v], vols[v], k, st, k / 2 - 1 + (st == 1), 0, 0,
                                             l ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW);
                            const char *name =
                                walk_describe(&p, CONVT3D_MATH_F32, buf, sizeof buf);
                            const int cs = igemm_cluster_of(name, buf);
                            engine += cs > 0;
                            wide += cs > 8;
                            if (cs > 8 && !strstr(buf, ROW_TILE)) {
                                printf("\n  FAILED: %s", buf);
                                stray++;
                            }
                        }
    printf("\n  %d plans of the engine, %d with clusters past 8, %d of them not the row tile ",
           engine, wide, stray);
    CU_ASSERT(engine > 100);
    CU_ASSERT(wide > 0);
    CU_ASSERT_EQUAL(stray, 0);
    CU_ASSERT_EQUAL(bad, 0);
}

/* Depthwise NDHWC goes to the channels-last depthwise kernel, NCDHW to the
 * depthwise tile kernel (where it applies: W stride <= 2) but for fewer
 * taps than stride phases, which go to the four-output depthwise kernel
 * (simple/plan.cu, depthwise_four_preferred): the ndhwc_depthwise class and
 * the suite's depthwise row in both layouts, the random problems of round
 * 21, and a grid of channel counts (misaligned ones too), kernels, strides
 * up to 4 and dilations in both layouts. */
#define DW4 "cuda/f32_depthwise_phase_4"

/* Depthwise NCDHW at W stride <= 2: the rule restated. */
static const char *dw_ncdhw_want(const convt3d_problem *p)
{
    const int64_t taps = p->kernel[0] * p->kernel[1] * p->kernel[2];
    return taps < p->stride[0] * p->stride[1] * p->stride[2] ? DW4 : "cuda/f32_dwtile_run8*";
}

static void test_depthwise_layouts(void)
{
    if (no_cuda())
        return;
    case_list cl;
    CU_ASSERT_FATAL(read_classes(&cl) == 0);
    int in_class = 0, bad = 0;
    for (size_t i = 0; i < cl.n; i++) {
        const bench_case *c = &cl.v[i];
        if (c->kind != CASE_RUN || c->problem.groups != c->problem.in_channels ||
            c->problem.groups != c->problem.out_channels)
            continue;
        convt3d_problem p = c->problem;
        p.layout = CONVT3D_LAYOUT_NDHWC;
        bad += !choice_is(&p, c->label, DWLAST);
        p.layout = CONVT3D_LAYOUT_NCDHW;
        if (p.stride[2] <= 2)
            bad += !choice_is(&p, c->label, dw_ncdhw_want(&p));
        in_class++;
    }
    CU_ASSERT(in_class >= 5);
    cases_free(&cl);
    /* random_393 of seed 1: 64 channels, k1 s2 (tile kernel 0.0228 ms, the
       four-output kernel 0.0113); random_318: k(4,1,1) s2; random_154: k2
       s2, where the tile kernel stays (0.72x with the other) */
    convt3d_problem q = make_problem(1, 64, 64, 64, 15, 15, 15, 1, 2, 0, 0, 0,
                                     CONVT3D_LAYOUT_NCDHW);
    q.dilation[1] = q.dilation[2] = 2;
    bad += !choice_is(&q, "random_393", DW4);
    q = make_problem(12, 32, 32, 32, 12, 18, 5, 1, 2, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    q.kernel[0] = 4;
    q.padding[0] = 2;
    bad += !choice_is(&q, "random_318", DW4);
    q = make_problem(1, 44, 44, 44, 27, 27, 27, 2, 2, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    q.padding[2] = 1;
    bad += !choice_is(&q, "random_154", "cuda/f32_dwtile_run8*");
    static const int cs[] = {1, 3, 8, 64, 130}, ks[] = {1, 3, 4, 5};
    int ran = 0, fewer_taps = 0;
    for (int a = 0; a < 5; a++)
        for (int k = 0; k < 4; k++)
            for (int st = 1; st <= 4; st++)
                for (int l = 1; l <= 2; l++) {
                    convt3d_problem p = make_problem(2, cs[a], cs[a], cs[a], 8, 9, 10, ks[k],
                                                     st, ks[k] / 2, 0, (a + k) & 1,
                                                     CONVT3D_LAYOUT_NDHWC);
                    p.dilation[0] = p.dilation[2] = l;
                    if (convt3d_validate(&p) != CONVT3D_SUCCESS)
                        continue;
                    ran++;
                    bad += !choice_is(&p, "grid", DWLAST);
                    /* NCDHW: the rule's side (the other side depends on what the
                       tile kernel applies to: dilation, taps a W phase) */
                    p.layout = CONVT3D_LAYOUT_NCDHW;
                    if (ks[k] * ks[k] * ks[k] < st * st * st) {
                        bad += !choice_is(&p, "grid NCDHW", DW4);
                        fewer_taps++;
                    }
                }
    printf("\n  %d depthwise class problems, a grid of %d (%d NCDHW with fewer taps than "
           "phases), %d failed ",
           in_class, ran, fewer_taps, bad);
    CU_ASSERT(ran > 100 && fewer_taps > 20);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The tensor-core window kernel's rule (tcwin/plan.cu,
 * tcwin_entry_passed_over), restated for a test: 0 where it must not be
 * chosen (C_in/G < 16, C_out/G < 16 but with half data and at most 128
 * input channels a group, fewer than min_taps taps a phase on average), 1
 * where it must (all that holds in NCDHW, and every phase of every dim has
 * a multiple of 16 positions, so the boxes are full whatever their shape),
 * 2 where the planner's box shares decide, or in NDHWC whether the
 * channels-last window fits its shared-memory budget. */
static int tcwin_rule(const convt3d_shape *s, long long min_taps, int half)
{
    const int channels = s->cig >= 16 && (s->cog >= 16 || (half && s->cig <= 128));
    /* with C_in/G <= 16 the kernel also takes what the rest of the walk
     * would give the implicit-GEMM engine (test_tcwin_few_inputs) */
    const int few_inputs = s->cig <= 16 && s->math != CONVT3D_MATH_3XTF32 &&
                           (!half || (s->layout == CONVT3D_LAYOUT_NDHWC && s->cog >= 16));
    /* channels-last staging copies half data by 16-byte words where C_in/G
     * is a multiple of 8: the vector staging's threshold then */
    if (half && s->layout == CONVT3D_LAYOUT_NDHWC && s->cig % 8 == 0)
        min_taps = 3;
    if (!channels || s->k_volume < min_taps * s->s[0] * s->s[1] * s->s[2])
        return few_inputs ? 2 : 0;
    if (s->layout != CONVT3D_LAYOUT_NCDHW)
        return 2;
    for (int d = 0; d < 3; d++)
        for (long long r = 0; r < s->s[d]; r++)
            if (convt3d_phase_of(s, d, r).qcount % 16 != 0)
                return 2;
    return 1;
}

/* Whether the choice name agrees with tcwin_rule's verdict want. */
static int tcwin_choice_ok(const char *name, int want)
{
    const int got = name && strstr(name, "_tcwin_mma") != NULL;
    return want == 2 || want == got;
}

/* TF32 and 3xTF32 on f32 data: the window kernel exactly where its rule
 * says (suite shapes and a grid), and never an f16/bf16 entry. */
static void test_tf32_walk(void)
{
    if (no_cuda())
        return;
    static const convt3d_math_mode maths[] = {CONVT3D_MATH_TF32, CONVT3D_MATH_3XTF32};
    static const int cigs[] = {8, 16, 32, 64};
    int bad = 0, ran = 0, window = 0, must = 0;
    for (int m = 0; m < 2; m++) {
        for (size_t i = 0; i < suite_count(); i++)
            for (int layout = 0; layout < 2; layout++) {
                convt3d_problem p = suite_at(i)->problem;
                p.layout = layout ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
                convt3d_shape s;
                CU_ASSERT_FATAL(convt3d_shape_from_problem(&p, &s) == CONVT3D_SUCCESS);
                s.math = maths[m];
                const char *name =
                    convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
                /* in NDHWC too: channels-last staging fits two blocks */
                const int want = strcmp(suite_at(i)->name, "k3s1p1") == 0 ||
                                 strcmp(suite_at(i)->name, "k4s2p1") == 0;
                const int got = name && strstr(name, "_tcwin_mma") != NULL;
                ran++;
                window += got;
                if (!name || want != got) {
                    printf("\n  FAILED %s %s: %s chosen", suite_at(i)->name,
                           layout ? "ndhwc" : "ncdhw", name ? name : "nothing");
                    bad++;
                }
            }
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int k = 1; k <= 4; k++)
                    for (int v = 0; v < 8; v++) {
                        const int g = v & 1 ? 2 : 1, st = v & 2 ? 2 : 1;
                        /* k odd at stride 1 and k = 4 at stride 2 keep 16 positions a
                         * phase (full boxes); W = 14 does not */
                        convt3d_problem p = make_problem(
                            1, g * cigs[a], g * cigs[b], g, 16, 16, v & 4 ? 14 : 16, k, st,
                            st == 2 ? (k - 1) / 2 : k / 2, 0, 1, CONVT3D_LAYOUT_NCDHW);
                        convt3d_shape s;
                        if (convt3d_validate(&p) != CONVT3D_SUCCESS ||
                            convt3d_shape_from_problem(&p, &s) != CONVT3D_SUCCESS)
                            continue;
                        s.math = maths[m];
                        const char *name =
                            convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
                        const int want = tcwin_rule(&s, 6, 0);
                        must += want == 1;
                        ran++;
                        window += name && strstr(name, "_tcwin_mma") != NULL;
                        if (!name || !tcwin_choice_ok(name, want) ||
                            strncmp(name, "cuda/f16", 8) == 0 ||
                            strncmp(name, "cuda/bf16", 9) == 0) {
                            char desc[512];
                            convt3d_problem_to_string(&p, desc, sizeof desc);
                            printf("\n  FAILED grid: %s chosen for %s", name ? name : "nothing",
                                   desc);
                            bad++;
                        }
                    }
    }
    printf("\n  %d problems, %d on the window kernel (%d by the rule's clear cases), %d failed ",
           ran, window, must, bad);
    CU_ASSERT(ran > 500 && window > 40 && must > 20);
    CU_ASSERT_EQUAL(bad, 0);
}

/* Checks one problem for test_3xtf32_igemm_walk in both layouts: the
 * split-TF32 entry in 3xTF32 exactly where TF32 takes the TF32 entry in
 * NDHWC, and always where clear.  Counts into *ran, *taken, *bad. */
static void check_3xtf32_igemm(convt3d_problem p, int clear, int *ran, int *taken, int *bad)
{
    for (int layout = 0; layout < 2; layout++) {
        p.layout = layout ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
        convt3d_shape s;
        if (convt3d_validate(&p) != CONVT3D_SUCCESS ||
            convt3d_shape_from_problem(&p, &s) != CONVT3D_SUCCESS)
            continue;
        s.math = CONVT3D_MATH_TF32;
        const char *tf32 = convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
        s.math = CONVT3D_MATH_3XTF32;
        const char *x3 = convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
        const int want = layout && tf32 && strcmp(tf32, "cuda/tf32_igemm_mma") == 0;
        const int got = x3 && strcmp(x3, "cuda/3xtf32_igemm_mma") == 0;
        (*ran)++;
        *taken += got;
        if (!x3 || want != got || (clear && layout && !got)) {
            char desc[512];
            convt3d_problem_to_string(&p, desc, sizeof desc);
            printf("\n  FAILED %s in 3xTF32 (TF32: %s) for %s", x3 ? x3 : "nothing",
                   tf32 ? tf32 : "nothing", desc);
            (*bad)++;
        }
    }
}

/* 3xTF32 (igemm/plan.cu, igemm_entry_passed_over): the implicit-GEMM
 * engine's split-TF32 entry in NDHWC exactly where TF32 takes the TF32
 * entry, never in NCDHW (the exact FMA kernels keep those); the suite's
 * k3s2p1op1_wide in NDHWC is a clear case (round 30). */
static void test_3xtf32_igemm_walk(void)
{
    if (no_cuda())
        return;
    static const int cigs[] = {4, 16, 32, 64, 128};
    int bad = 0, ran = 0, taken = 0, clear = 0;
    for (size_t i = 0; i < suite_count(); i++) {
        const int wide = strcmp(suite_at(i)->name, "k3s2p1op1_wide") == 0;
        clear += wide;
        check_3xtf32_igemm(suite_at(i)->problem, wide, &ran, &taken, &bad);
    }
    for (int b = 0; b < 5; b++)
        for (int a = 0; a < 5; a++)
            for (int st = 1; st <= 2; st++)
                for (int k = 1; k <= 3; k++)
                    for (int n = 1; n <= 2; n++)
                        check_3xtf32_igemm(make_problem(n, cigs[a], cigs[b], 1, 8, 8, 12, k, st,
                                                        st == 2 ? (k - 1) / 2 : k / 2, 0, 1,
                                                        CONVT3D_LAYOUT_NCDHW),
                                           0, &ran, &taken, &bad);
    printf("\n  %d problems, %d on the split-TF32 engine, %d failed ", ran, taken, bad);
    CU_ASSERT(ran > 400 && taken >= 10 && clear == 1);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The walk on f16 and bf16 data (igemm/plan.cu, igemm_half_loses;
 * tcwin/plan.cu): the window kernel, staging by 16-byte words (NCDHW) or
 * channels-last (NDHWC), takes k4s2p1, k3s2p1op1_wide (8 and 3.4 taps a
 * phase, round 27) and k3s1p1 (27 taps) in both layouts; unet_up_k2s2 (1
 * tap a phase) goes to the shuffle kernel in both; the
 * phase kernel on half data takes kernelbench (8 channels a group) in both
 * layouts, the depthwise kernels the depthwise shape (dwtile in NCDHW).
 * Then a grid: no f32 entry ever, the window kernel only where its rule
 * allows (>= 16 taps a phase on half data staged by element, as every
 * NCDHW grid problem is: W 12 is no multiple of a 16-byte word; fewer than
 * 16 output channels with at most 128 input channels a group too), and the
 * half phase kernel exactly where the rule says (fewer than 16 input
 * channels a group, or NCDHW at stride 1 with 16-32 channels and >= 27
 * taps) and the window kernel did not take the problem. */
static const char *half_expected(const char *shape, convt3d_layout layout)
{
    (void)layout;
    if (strcmp(shape, "unet_up_k2s2") == 0)
        return "_shuffle_mma";
    if (strcmp(shape, "kernelbench") == 0)
        return "_phase_grouped_2x4x8";
    if (strcmp(shape, "k3s1p1") == 0)
        return "_tcwin_mma";
    if (strcmp(shape, "depthwise") == 0)
        return layout == CONVT3D_LAYOUT_NCDHW ? "_dwtile_run8" : "_dwlast";
    if (strcmp(shape, "k4s2p1") == 0 || strcmp(shape, "k3s2p1op1_wide") == 0)
        return "_tcwin_mma"; /* NDHWC: channels-last staging, 16-byte copies */
    return "_igemm_mma";
}

/* Few output channels on half data (round 19's sweep, bench/NOTES.md): the
 * few-output kernel where its f32 rule takes the problem (C_out/G <= 8 and
 * C_in/G x the taps of a phase >= 256, or up to 4 output channels in one
 * group), else the window kernel where a full box of 16 x 16 positions
 * meets 27 taps and at most 128 input channels, else the half MMA -- never
 * the phase kernel, which gives each thread a whole K sum there. */
static const struct {
    int cin, cout, size, k, stride, pad;
    convt3d_layout layout;
    const char *want;
} kHalfFewOut[] = {
    {32, 6, 16, 3, 1, 1, CONVT3D_LAYOUT_NCDHW, "_fewout_ksplit"},
    {128, 2, 16, 3, 1, 1, CONVT3D_LAYOUT_NCDHW, "_fewout_ksplit"},
    {256, 6, 12, 2, 2, 0, CONVT3D_LAYOUT_NCDHW, "_fewout_ksplit"},
    {64, 4, 10, 4, 2, 1, CONVT3D_LAYOUT_NCDHW, "_fewout_ksplit"},
    {32, 6, 16, 3, 1, 1, CONVT3D_LAYOUT_NDHWC, "_fewout_ksplit"},
    {32, 12, 16, 3, 1, 1, CONVT3D_LAYOUT_NCDHW, "_tcwin_mma"},
    {256, 12, 16, 3, 1, 1, CONVT3D_LAYOUT_NCDHW, "_igemm_mma"},
    {64, 6, 12, 2, 2, 0, CONVT3D_LAYOUT_NCDHW, "_igemm_mma"},
    {16, 12, 12, 2, 2, 0, CONVT3D_LAYOUT_NDHWC, "_shuffle_mma"}, /* kernel = stride */
};

static int half_few_out_failures(convt3d_dtype type)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof kHalfFewOut / sizeof kHalfFewOut[0]; i++) {
        convt3d_problem p = make_problem(2, kHalfFewOut[i].cin, kHalfFewOut[i].cout, 1,
                                         kHalfFewOut[i].size, kHalfFewOut[i].size,
                                         kHalfFewOut[i].size, kHalfFewOut[i].k,
                                         kHalfFewOut[i].stride, kHalfFewOut[i].pad, 0, 1,
                                         kHalfFewOut[i].layout);
        p.x_type = p.w_type = p.bias_type = p.y_type = type;
        convt3d_shape s;
        CU_ASSERT_FATAL(convt3d_shape_from_problem(&p, &s) == CONVT3D_SUCCESS);
        const char *name = convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
        if (!name || !strstr(name, kHalfFewOut[i].want)) {
            char desc[512];
            convt3d_problem_to_string(&p, desc, sizeof desc);
            printf("\n  FAILED few outputs %s: %s chosen for %s, want *%s",
                   convt3d_dtype_name(type), name ? name : "nothing", desc, kHalfFewOut[i].want);
            bad++;
        }
    }
    return bad;
}

static void test_half_walk(void)
{
    if (no_cuda())
        return;
    static const convt3d_dtype types[] = {CONVT3D_F16, CONVT3D_BF16};
    int bad = 0, checked = 0;
    for (int t = 0; t < 2; t++)
        bad += half_few_out_failures(types[t]);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < suite_count(); i++)
            for (int layout = 0; layout < 2; layout++) {
                convt3d_problem p = suite_at(i)->problem;
                p.layout = layout ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
                p.x_type = p.w_type = p.bias_type = p.y_type = types[t];
                convt3d_shape s;
                CU_ASSERT_FATAL(convt3d_shape_from_problem(&p, &s) == CONVT3D_SUCCESS);
                const char *name =
                    convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
                const char *want = half_expected(suite_at(i)->name, p.layout);
                char prefix[16];
                snprintf(prefix, sizeof prefix, "cuda/%s_", convt3d_dtype_name(types[t]));
                checked++;
                if (!name || strncmp(name, prefix, strlen(prefix)) != 0 || !strstr(name, want)) {
                    printf("\n  FAILED %s %s %s: %s chosen, want %s*%s", suite_at(i)->name,
                           convt3d_dtype_name(types[t]), layout ? "ndhwc" : "ncdhw",
                           name ? name : "nothing", prefix, want);
                    bad++;
                }
            }
    /* the grid: channels on either side of 16 and 32, strides 1 and 2,
     * kernels 1-3, groups, both layouts */
    static const int cigs[] = {4, 8, 16, 32, 64}, cogs[] = {4, 8, 16, 32, 64};
    int ran = 0, half_phase = 0, window = 0;
    for (int t = 0; t < 2; t++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++)
                for (int k = 1; k <= 3; k++)
                    for (int v = 0; v < 8; v++) {
                        const int g = v & 1 ? 2 : 1, st = v & 2 ? 2 : 1;
                        convt3d_problem p = make_problem(
                            1, g * cigs[a], g * cogs[b], g, 12, 12, 12, k, st, k / 2, 0, 1,
                            v & 4 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW);
                        p.x_type = p.w_type = p.bias_type = p.y_type = types[t];
                        convt3d_shape s;
                        if (convt3d_validate(&p) != CONVT3D_SUCCESS ||
                            convt3d_shape_from_problem(&p, &s) != CONVT3D_SUCCESS)
                            continue;
                        const char *name =
                            convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
                        ran++;
                        const int few = s.cig < 16;
                        const int small_s1 = st == 1 && s.layout == CONVT3D_LAYOUT_NCDHW &&
                                             s.cig <= 32 && s.cog >= 16 && s.cog <= 32 &&
                                             s.k_volume >= 27;
                        const int want_window = tcwin_rule(&s, 16, 1);
                        const int got_window = name && strstr(name, "_tcwin_mma") != NULL;
                        const int want_phase = (few || small_s1) && !got_window;
                        window += got_window;
                        const int got_phase = name && strstr(name, "16_phase_") != NULL;
                        half_phase += got_phase;
                        if (!name || strncmp(name, "cuda/f32_", 9) == 0 ||
                            want_phase != got_phase || !tcwin_choice_ok(name, want_window)) {
                            char desc[512];
                            convt3d_problem_to_string(&p, desc, sizeof desc);
                            printf("\n  FAILED grid %s: %s chosen for %s",
                                   convt3d_dtype_name(types[t]), name ? name : "nothing", desc);
                            bad++;
                        }
                    }
    printf("\n  suite: %d choices; grid: %d problems, %d on the half phase kernel, %d on the "
           "window kernel, %d failed ",
           checked, ran, half_phase, window, bad);
    CU_ASSERT(ran > 1000 && half_phase > 300 && window > 20);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The tensor-core shuffle kernel's rule (shuffle/plan.cu), restated: in
 * every mode that permits tensor cores, problems (both layouts) whose taps do not
 * overlap (kernel = stride in every dim, no padding, no output padding,
 * 2-16 taps, or 1 in NDHWC) with C_in/G >= 16 and C_out/G x taps >= 64 take it -- but
 * for half data the few-output kernel, which comes first, may keep
 * C_out/G <= 8 -- and nothing else does; exact fp32 never does.  A grid of
 * strides (1,1,1), (1,2,2), (2,2,2), (2,2,1), (3,3,1), channels either side
 * of the thresholds, groups, padding 0 or 1, both layouts. */
static int shuffle_rule(const convt3d_shape *s)
{
    for (int d = 0; d < 3; d++)
        if (s->k[d] != s->s[d] || s->p[d] != 0 || s->op[d] != 0)
            return 0;
    return (s->k_volume >= 2 || s->layout == CONVT3D_LAYOUT_NDHWC) && s->k_volume <= 16 &&
           s->cig >= 16 && s->cog * s->k_volume >= 64;
}

static void test_shuffle_walk(void)
{
    if (no_cuda())
        return;
    static const convt3d_dtype types[] = {CONVT3D_F32, CONVT3D_F32, CONVT3D_F32, CONVT3D_F16,
                                          CONVT3D_BF16};
    static const convt3d_math_mode maths[] = {CONVT3D_MATH_F32, CONVT3D_MATH_TF32,
                                              CONVT3D_MATH_3XTF32, CONVT3D_MATH_F32,
                                              CONVT3D_MATH_F32};
    static const int strides[][3] = {{1, 1, 1}, {1, 2, 2}, {2, 2, 2}, {2, 2, 1}, {3, 3, 1}};
    static const int cigs[] = {8, 16, 64}, cogs[] = {4, 8, 16, 64};
    int ran = 0, taken = 0, bad = 0;
    for (int m = 0; m < 5; m++)
        for (int st = 0; st < 5; st++)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 4; b++)
                    for (int v = 0; v < 8; v++) {
                        const int g = v & 1 ? 2 : 1, pad = v & 2 ? 1 : 0;
                        convt3d_problem p = make_problem(
                            2, g * cigs[a], g * cogs[b], g, 8, 12, 16, 1, 1, 0, 0, 1,
                            v & 4 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW);
                        for (int d = 0; d < 3; d++) {
                            p.kernel[d] = p.stride[d] = strides[st][d];
                            p.padding[d] = pad && strides[st][d] > 1 ? 1 : 0;
                        }
                        p.x_type = p.w_type = p.bias_type = p.y_type = types[m];
                        convt3d_shape s;
                        if (convt3d_validate(&p) != CONVT3D_SUCCESS ||
                            convt3d_shape_from_problem(&p, &s) != CONVT3D_SUCCESS)
                            continue;
                        s.math = maths[m];
                        const char *name =
                            convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
                        const int got = name && strstr(name, "_shuffle_mma") != NULL;
                        int want = m > 0 && shuffle_rule(&s);
                        if (want && types[m] != CONVT3D_F32 && s.cog <= 8 && name &&
                            strstr(name, "_fewout_ksplit"))
                            want = 0; /* the few-output kernel comes first on half data */
                        ran++;
                        taken += got;
                        if (!name || got != want) {
                            char desc[512];
                            convt3d_problem_to_string(&p, desc, sizeof desc);
                            printf("\n  FAILED %s math %d: %s chosen for %s",
                                   convt3d_dtype_name(types[m]), (int)maths[m],
                                   name ? name : "nothing", desc);
                            bad++;
                        }
                    }
    printf("\n  %d problems, %d on the shuffle kernel, %d failed ", ran, taken, bad);
    CU_ASSERT(ran > 2000 && taken > 100);
    CU_ASSERT_EQUAL(bad, 0);
}

/* Few input channels (tcwin/plan.cu, tcwin_takes_few_inputs): random
 * problems of round 24's measurement (seed 1), each with the kernel the walk
 * must give it in its mode.  The window kernel where the FMA engine was the
 * choice in TF32 mode, or the half MMA on NDHWC half data with C_out/G >=
 * 16; not in NCDHW on half data, not above 16 input channels a group, not
 * in 3xTF32. */
static void test_tcwin_few_inputs(void)
{
    if (no_cuda())
        return;
    static const struct {
        const char *desc;
        convt3d_math_mode math;
        convt3d_dtype type;
        int window; /* 1: the window kernel must be chosen, 0: must not */
    } cases[] = {
        {"g8mb2_ic32id18ih15iw28_oc256od17oh16ow82_kd4kh2kw5_sd1sh1sw3_pd2ph0pw2_layoutndhwc",
         CONVT3D_MATH_TF32, CONVT3D_F32, 1}, /* random_64 */
        {"g1mb3_ic8id23ih10iw5_oc256od25oh12ow13_kd1kh3kw5_sd1sh1sw1_pd0ph0pw3_dd2dh0dw2_bias1_"
         "layoutndhwc",
         CONVT3D_MATH_TF32, CONVT3D_F32, 1}, /* random_190 */
        {"g1mb3_ic5id12ih12iw12_oc188od23oh23ow36_kd1kh2kw3_sd2sh2sw3_pd0ph1pw0_dd0dh1dw0_bias0_"
         "layoutndhwc",
         CONVT3D_MATH_TF32, CONVT3D_F32, 1}, /* random_194 */
        {"g8mb2_ic32id18ih15iw28_oc256od17oh16ow82_kd4kh2kw5_sd1sh1sw3_pd2ph0pw2_layoutndhwc",
         CONVT3D_MATH_3XTF32, CONVT3D_F32, 0},
        {"g8mb2_ic32id18ih15iw28_oc256od17oh16ow82_kd4kh2kw5_sd1sh1sw3_pd2ph0pw2_layoutndhwc",
         CONVT3D_MATH_F32, CONVT3D_F32, 0},
        {"g1mb3_ic256id11ih11iw11_oc12od31oh31ow31_kd1kh1kw1_sd3sh3sw3_pd0ph0pw0_dd2dh0dw0_bias1_"
         "layoutncdhw",
         CONVT3D_MATH_TF32, CONVT3D_F32, 0}, /* random_70: 256 input channels */
        {"g1mb1_ic16id25ih25iw25_oc256od49oh25ow49_kd1kh1kw1_sd2sh1sw2_pd0ph0pw0_dd0dh0dw0_bias1_"
         "layoutndhwc",
         CONVT3D_MATH_F32, CONVT3D_F16, 1}, /* random_23 */
        {"g1mb1_ic16id25ih25iw25_oc256od49oh25ow49_kd1kh1kw1_sd2sh1sw2_pd0ph0pw0_dd0dh0dw0_bias1_"
         "layoutndhwc",
         CONVT3D_MATH_F32, CONVT3D_BF16, 1},
        {"g1mb1_ic16id25ih25iw25_oc256od49oh25ow49_kd1kh1kw1_sd2sh1sw2_pd0ph0pw0_dd0dh0dw0_bias1_"
         "layoutncdhw",
         CONVT3D_MATH_F32, CONVT3D_F16, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        convt3d_problem p = problem_of_desc(cases[i].desc, cases[i].type);
        convt3d_shape s;
        CU_ASSERT_FATAL(convt3d_shape_from_problem(&p, &s) == CONVT3D_SUCCESS);
        s.math = cases[i].math;
        const char *name = convt3d_cuda_walk_choice(&s, H200_SMEM_OPTIN, H200_SMEM_SM, H200_SMS);
        const int got = name && strstr(name, "_tcwin_mma") != NULL;
        printf("\n  %s %s math %d: %s", cases[i].desc, convt3d_dtype_name(cases[i].type),
               (int)cases[i].math, name ? name : "nothing");
        if (!name || got != cases[i].window) {
            printf("  FAILED (window kernel %s)", cases[i].window ? "expected" : "not expected");
            bad++;
        }
    }
    printf("\n  %d cases, %d failed ", (int)(sizeof cases / sizeof cases[0]), bad);
    CU_ASSERT_EQUAL(bad, 0);
}

void register_cuda_walk_tests(void)
{
    static const test_entry tests[] = {
        {"classes.txt: no generic kernel where C_in/G or C_out/G >= 4 and sizes >= 8",
         test_classes},
        {"tf32 and 3xtf32: the tensor-core window kernel where its rule says", test_tf32_walk},
        {"3xtf32: the split-TF32 implicit-GEMM engine in NDHWC where TF32 takes its engine, "
         "never in NCDHW",
         test_3xtf32_igemm_walk},
        {"few input channels: the window kernel instead of the implicit-GEMM engine "
         "(TF32; NDHWC half data)",
         test_tcwin_few_inputs},
        {"kernel = stride, no padding: the tensor-core shuffle kernel where its rule says",
         test_shuffle_walk},
        {"a grid of dilated, strided, grouped problems: the same", test_grid},
        {"C_out/G <= 4 (out_c1_3 and a grid): the few-output kernel for C_in/G >= 16 with "
         "long sums or one group on small volumes, never the FMA igemm",
         test_fewout_rule},
        {"depthwise: NDHWC to the channels-last kernel, NCDHW to the tile kernel (the "
         "four-output kernel with fewer taps than phases)",
         test_depthwise_layouts},
        {"round 34: the four-output kernel for NDHWC with 2-8 output channels a group, the "
         "few-output kernel for small problems",
         test_round34_rules},
        {"round 35: tiled phase mode where grouped tiles leave most multiprocessors idle, 4 "
         "channels a thread where 8 leave few blocks, NDHWC short sums to the four-output kernel",
         test_round35_rule},
        {"round 38: many channels on a tiny volume with a small phase grid: the FMA engine",
         test_round38_rule},
        {"round 41: the FMA engine's row tile in clusters of up to 16 on unfilled grids; "
         "automatic clusters past 8 on that tile only",
         test_igemm_tiny_plans},
        {"few input channels, <= 1 product an output, NCDHW (or 1-2 where the engine would "
         "take them): the few-input kernel",
         test_fewin_rule},
        {"f16/bf16 data: the half MMA, the half phase kernel and the half dwtile where "
         "measured best (suite) and by the rule (a grid)",
         test_half_walk},
        {NULL, NULL}};
    add_suite("cuda walk (host, H200 limits)", tests);
}
