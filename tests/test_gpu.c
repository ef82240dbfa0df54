/* The CUDA backend's own test program (tests/test_gpu): the stream variant,
 * device vs host pointers (bitwise equal), determinism, every CUDA
 * implementation of the library (enumerated through
 * convt3d_implementation_count/name/device, so a new kernel is tested
 * without edits here) forced by its exact name on the bench shapes scaled
 * down, random and edge-case problems it says it applies to -- each plan's
 * name checked against the forced one, and convt3d_implementation_applies()
 * checked against what forcing does -- with tilings forced through
 * CONVT3D_CUDA_TILE / CONVT3D_CUDA_IGEMM; the caller's current device kept,
 * several GPUs (cuda:N), concurrent execute on one plan, CUDA error mapping
 * (out of device memory), execute_on_stream captured into a CUDA graph and
 * replayed, the few-output-channel kernel on many input channels, and,
 * with CONVT3D_TEST_BIG=1, tensors past 2^31
 * elements.  Exits 77 (automake: SKIP) in a build without CUDA or on a
 * machine without a CUDA device. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "internal.h"
#include "test_util.h"

#if CONVT3D_HAVE_CUDA
#include <cuda_runtime_api.h>

#define TOL 1e-5

/* main() exits 77 before any case runs without a device. */
static int skip_without_gpu(void) { return 0; }

static float *dev_copy(const float *h, int64_t n)
{
    void *d = NULL;
    if (cudaMalloc(&d, (size_t)(n > 0 ? n : 1) * sizeof(float)) != cudaSuccess)
        return NULL;
    if (h && cudaMemcpy(d, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(d);
        return NULL;
    }
    return d;
}

/* Host data for one problem, the reference output, and device copies. */
typedef struct problem_data {
    convt3d_problem p;
    int64_t nx, nw, ny;
    float *x, *w, *b, *ref;
    float *dx, *dw, *db;
} problem_data;

static int data_make(problem_data *d, const convt3d_problem *p, uint64_t seed, int small_ints)
{
    memset(d, 0, sizeof *d);
    d->p = *p;
    if (convt3d_tensor_elems(p, &d->nx, &d->nw, &d->ny) != CONVT3D_SUCCESS)
        return 0;
    d->x = malloc((size_t)d->nx * sizeof(float));
    d->w = malloc((size_t)d->nw * sizeof(float));
    d->b = malloc((size_t)p->out_channels * sizeof(float));
    d->ref = malloc((size_t)d->ny * sizeof(float));
    if (!d->x || !d->w || !d->b || !d->ref)
        return 0;
    rng r = rng_make(seed);
    void (*fill)(rng *, float *, int64_t) = small_ints ? fill_small_ints : fill_uniform;
    fill(&r, d->x, d->nx);
    fill(&r, d->w, d->nw);
    fill(&r, d->b, p->out_channels);
    if (convt3d_reference(p, d->x, d->w, d->b, d->ref) != CONVT3D_SUCCESS)
        return 0;
    d->dx = dev_copy(d->x, d->nx);
    d->dw = dev_copy(d->w, d->nw);
    d->db = dev_copy(d->b, p->out_channels);
    return d->dx && d->dw && d->db;
}

static void data_free(problem_data *d)
{
    free(d->x);
    free(d->w);
    free(d->b);
    free(d->ref);
    cudaFree(d->dx);
    cudaFree(d->dw);
    cudaFree(d->db);
}

static void report(const convt3d_problem *p, const char *what, const char *detail)
{
    char desc[512];
    problem_describe(p, desc, sizeof desc);
    printf("\n  FAILED: %s: %s\n    problem: %s\n", what, detail, desc);
}

/* Plan on cuda:0 from device weights (implementation impl forced by name,
 * NULL: the library's choice), run on `stream` with device pointers, copy y
 * to out_host; returns the kernel name in name (if given). */
static int run_impl_on_stream(const problem_data *d, const char *impl, cudaStream_t stream,
                              const char **name, float *out_host)
{
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    convt3d_plan *plan = NULL;
    convt3d_plan_options opts;
    convt3d_plan_options_init(&opts);
    opts.implementation = impl;
    float *dy = dev_copy(NULL, d->ny);
    int ok = dy != NULL;
    if (ok && convt3d_plan_create_ex(&plan, &d->p, gpu, d->dw, d->p.has_bias ? d->db : NULL,
                                     &opts) != CONVT3D_SUCCESS) {
        report(&d->p, impl ? impl : "plan_create", convt3d_last_error());
        ok = 0;
    }
    if (ok && impl && strcmp(convt3d_plan_kernel_name(plan), impl) != 0) {
        report(&d->p, impl, "the plan runs another implementation");
        ok = 0;
    }
    if (ok && name)
        *name = convt3d_plan_kernel_name(plan);
    if (ok && cudaMemset(dy, 0xff, (size_t)d->ny * sizeof(float)) != cudaSuccess)
        ok = 0;
    if (ok && convt3d_execute_on_stream(plan, d->dx, dy, stream) != CONVT3D_SUCCESS) {
        report(&d->p, "execute_on_stream", convt3d_last_error());
        ok = 0;
    }
    if (ok && (cudaStreamSynchronize(stream) != cudaSuccess ||
               cudaMemcpy(out_host, dy, (size_t)d->ny * sizeof(float), cudaMemcpyDeviceToHost) !=
                   cudaSuccess))
        ok = 0;
    convt3d_plan_destroy(plan);
    cudaFree(dy);
    return ok;
}

static int run_on_stream(const problem_data *d, cudaStream_t stream, const char **name,
                         float *out_host)
{
    return run_impl_on_stream(d, NULL, stream, name, out_host);
}

static int compare(const problem_data *d, const float *y, int exact, const char *what)
{
    const double err = exact ? max_abs_error(y, d->ref, d->ny) : rel_l2_error(y, d->ref, d->ny);
    if (exact ? err != 0.0 : !(err <= TOL)) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s error %g", exact ? "max abs" : "rel L2", err);
        report(&d->p, what, msg);
        return 0;
    }
    return 1;
}

static void test_stream_variant(void)
{
    if (skip_without_gpu())
        return;
    cudaStream_t stream;
    CU_ASSERT_FATAL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    convt3d_problem p = make_problem(2, 8, 12, 2, 5, 6, 9, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
    for (int exact = 0; exact <= 1; exact++) {
        problem_data d;
        CU_ASSERT_FATAL(data_make(&d, &p, 101 + exact, exact));
        float *y = malloc((size_t)d.ny * sizeof(float));
        CU_ASSERT(y && run_on_stream(&d, stream, NULL, y) && compare(&d, y, exact, "stream"));
        free(y);
        data_free(&d);
    }
    cudaStreamDestroy(stream);
}

/* Host pointers (staged) and device pointers give the same bits; twice the
 * same call gives the same bits. */
static void test_host_device_bitwise(void)
{
    if (skip_without_gpu())
        return;
    convt3d_problem p = make_problem(2, 16, 24, 1, 6, 7, 10, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NDHWC);
    problem_data d;
    CU_ASSERT_FATAL(data_make(&d, &p, 7, 0));
    float *yh = malloc((size_t)d.ny * sizeof(float)), *yd = malloc((size_t)d.ny * sizeof(float));
    float *yd2 = malloc((size_t)d.ny * sizeof(float));
    CU_ASSERT_FATAL(yh && yd && yd2);
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    poison(yh, d.ny);
    CU_ASSERT_EQUAL(convt3d_forward(&p, gpu, d.x, d.w, d.b, yh), CONVT3D_SUCCESS);
    CU_ASSERT(run_on_stream(&d, 0, NULL, yd));
    CU_ASSERT(run_on_stream(&d, 0, NULL, yd2));
    CU_ASSERT(memcmp(yh, yd, (size_t)d.ny * sizeof(float)) == 0);
    CU_ASSERT(memcmp(yd, yd2, (size_t)d.ny * sizeof(float)) == 0);
    CU_ASSERT(compare(&d, yh, 0, "host pointers"));
    free(yh);
    free(yd);
    free(yd2);
    data_free(&d);
}

/* The bench suite's shapes at a quarter of their size, both layouts, with
 * the heuristic's choice and each kernel forced. */
static convt3d_problem bench_like(int i)
{
    convt3d_problem p;
    switch (i) {
    case 0:
        p = make_problem(1, 32, 32, 4, 4, 7, 13, 3, 2, 1, 1, 0, CONVT3D_LAYOUT_NCDHW);
        p.kernel[1] = 5, p.kernel[2] = 7, p.padding[1] = 2, p.padding[2] = 3;
        break;
    case 1: p = make_problem(1, 128, 64, 1, 4, 5, 9, 2, 2, 0, 0, 1, CONVT3D_LAYOUT_NCDHW); break;
    case 2: p = make_problem(1, 64, 32, 1, 4, 5, 8, 4, 2, 1, 0, 1, CONVT3D_LAYOUT_NCDHW); break;
    case 3: p = make_problem(1, 256, 128, 1, 3, 4, 4, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW); break;
    case 4: p = make_problem(1, 64, 64, 64, 4, 8, 9, 3, 2, 1, 1, 0, CONVT3D_LAYOUT_NCDHW); break;
    default: p = make_problem(1, 32, 32, 1, 5, 6, 9, 3, 1, 1, 0, 0, CONVT3D_LAYOUT_NCDHW); break;
    }
    return p;
}

/* ---- every CUDA implementation, enumerated ------------------------------ */

enum { MAX_IMPLS = 64 };

/* The CUDA implementations of this library, in registry order. */
static int cuda_impls(const char *names[MAX_IMPLS])
{
    int n = 0;
    for (int i = 0; i < convt3d_implementation_count() && n < MAX_IMPLS; i++)
        if (convt3d_implementation_device(i) == CONVT3D_DEVICE_CUDA)
            names[n++] = convt3d_implementation_name(i);
    return n;
}

static int applies(const char *name, const convt3d_problem *p)
{
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    return convt3d_implementation_applies(name, p, gpu, NULL) == CONVT3D_SUCCESS;
}

/* impl forced by name on p (it applies): the plan says impl, and y matches
 * the reference bit-exactly on small-integer data and within TOL (relative
 * L2; max abs 1e-4 where the result cancels) on uniform data. */
static int check_impl(const convt3d_problem *p, const char *impl, uint64_t seed)
{
    int ok = 1;
    for (int exact = 1; exact >= 0 && ok; exact--) {
        problem_data d;
        ok = data_make(&d, p, seed + (uint64_t)exact, exact);
        float *y = ok ? malloc((size_t)d.ny * sizeof(float)) : NULL;
        ok = ok && y && run_impl_on_stream(&d, impl, 0, NULL, y);
        if (ok && !exact && !(rel_l2_error(y, d.ref, d.ny) <= TOL) &&
            max_abs_error(y, d.ref, d.ny) <= 1e-4)
            ; /* cancellation: the absolute error is what fp32 can do */
        else if (ok)
            ok = compare(&d, y, exact, impl);
        free(y);
        data_free(&d);
    }
    if (!ok)
        printf("    (forced %s, seed %llu)\n", impl, (unsigned long long)seed);
    return ok;
}

/* The bench suite's shapes at a quarter of their size, both layouts: the
 * library's choice, then every CUDA implementation that applies, forced. */
static void test_bench_shapes_each_kernel(void)
{
    if (skip_without_gpu())
        return;
    const char *names[MAX_IMPLS];
    const int n = cuda_impls(names);
    CU_ASSERT_FATAL(n > 0);
    for (int i = 0; i < 6; i++)
        for (int layout = 0; layout < 2; layout++) {
            convt3d_problem p = bench_like(i);
            p.layout = (convt3d_layout)layout;
            convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
            check_result res = check_backend(&p, gpu, 1000 + 10 * i + layout, DEVICE_POINTERS, TOL);
            assert_check(&res, &p, 1000 + 10 * i + layout);
            for (int k = 0; k < n; k++)
                if (applies(names[k], &p))
                    CU_ASSERT(check_impl(&p, names[k], 2000 + 10 * i + layout));
        }
}

/* The bench suite's shapes at a quarter of their size in f16 and bf16 data,
 * both layouts, with and without bias, on aligned device pointers (so the
 * half phase kernel's packed 8-byte stores run; the registry harness uses
 * misaligned ones): the library's choice, then every CUDA implementation
 * that computes the type and applies, forced, each with the type's
 * tolerance and the exact small-integer pass.  The half phase entries
 * (cuda/f16_phase_*, cuda/bf16_phase_*) must have run, grouped and tiled. */
static void test_bench_shapes_half(void)
{
    if (skip_without_gpu())
        return;
    const char *names[MAX_IMPLS];
    const int n = cuda_impls(names);
    static const convt3d_dtype types[] = {CONVT3D_F16, CONVT3D_BF16};
    int half_phase_runs = 0, grouped = 0, tiled = 0;
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 6; i++)
            for (int v = 0; v < 4; v++) {
                convt3d_problem p = bench_like(i);
                p.layout = v & 1 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
                p.has_bias = v >> 1;
                p.x_type = p.w_type = p.bias_type = p.y_type = types[t];
                const double tol = mode_tolerance(types[t], CONVT3D_MATH_F32, TOL);
                const uint64_t seed = 4000 + 100 * (uint64_t)t + 10 * (uint64_t)i + (uint64_t)v;
                check_result res = check_implementation_math(&p, gpu, NULL, CONVT3D_MATH_F32,
                                                             seed, DEVICE_POINTERS, tol);
                assert_check(&res, &p, seed);
                for (int k = 0; k < n; k++) {
                    if (!applies(names[k], &p))
                        continue;
                    res = check_implementation_math(&p, gpu, names[k], CONVT3D_MATH_F32,
                                                    seed + 7, DEVICE_POINTERS, tol);
                    assert_check(&res, &p, seed + 7);
                    if (strstr(names[k], "16_phase_")) {
                        half_phase_runs++;
                        grouped += strstr(names[k], "_grouped_") != NULL;
                        tiled += strstr(names[k], "_tiled_") != NULL;
                    }
                }
            }
    printf("\n  half phase entries forced %d times (%d grouped, %d tiled) ", half_phase_runs,
           grouped, tiled);
    CU_ASSERT(grouped > 0 && tiled > 0);
}

/* convt3d_implementation_applies() is exact: forcing an implementation by
 * name succeeds (and names it) iff it says it applies, and otherwise fails
 * with CONVT3D_ERR_NOT_APPLICABLE, never running another one. */
static void test_applies_is_exact(void)
{
    if (skip_without_gpu())
        return;
    const char *names[MAX_IMPLS];
    const int n = cuda_impls(names);
    rng r = rng_make(test_seed() * 41 + 3);
    int taken[MAX_IMPLS] = {0};
    for (int i = 0; i < 60; i++) {
        const convt3d_problem p = i < 12 ? bench_like(i % 6) : random_problem(&r, 4e5, 40000);
        problem_data d;
        CU_ASSERT_FATAL(data_make(&d, &p, 5 + i, 1));
        convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
        for (int k = 0; k < n; k++) {
            const int yes = applies(names[k], &p);
            convt3d_plan_options opts;
            convt3d_plan_options_init(&opts);
            opts.implementation = names[k];
            convt3d_plan *plan = NULL;
            const convt3d_status st =
                convt3d_plan_create_ex(&plan, &p, gpu, d.dw, p.has_bias ? d.db : NULL, &opts);
            CU_ASSERT_EQUAL(st, yes ? CONVT3D_SUCCESS : CONVT3D_ERR_NOT_APPLICABLE);
            if (st != (yes ? CONVT3D_SUCCESS : CONVT3D_ERR_NOT_APPLICABLE))
                report(&p, names[k], convt3d_last_error());
            if (st == CONVT3D_SUCCESS) {
                CU_ASSERT_STRING_EQUAL(convt3d_plan_kernel_name(plan), names[k]);
                taken[k]++;
            } else {
                CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "does not apply"));
            }
            convt3d_plan_destroy(plan);
        }
        data_free(&d);
    }
    /* CONVT3D_CUDA_KERNEL set to something that does not apply fails too */
    convt3d_problem p = bench_like(5); /* not depthwise */
    problem_data d;
    CU_ASSERT_FATAL(data_make(&d, &p, 77, 1));
    setenv("CONVT3D_CUDA_KERNEL", "cuda/f32_depthwise_phase_4", 1);
    convt3d_plan *plan = NULL;
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &p, gpu, d.dw, NULL), CONVT3D_ERR_NOT_APPLICABLE);
    setenv("CONVT3D_CUDA_KERNEL", "dwtile", 1);
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &p, gpu, d.dw, NULL), CONVT3D_ERR_NOT_APPLICABLE);
    setenv("CONVT3D_CUDA_KERNEL", "tiled", 1);
    CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &p, gpu, d.dw, NULL), CONVT3D_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_plan_kernel_name(plan), "_tiled_"));
    convt3d_plan_destroy(plan);
    unsetenv("CONVT3D_CUDA_KERNEL");
    data_free(&d);
    for (int k = 0; k < n; k++)
        if (!taken[k])
            printf("(%s applied to none of these problems) ", names[k]);
}

/* Every CUDA implementation on random problems it applies to (up to `per`
 * each), and with odd tilings for the phase and implicit-GEMM kernels:
 * partial chunks, one-thread-wide tiles, channel sub-blocks wider than Cog,
 * input-channel slices (ks 2 and 4, more slices than some chunks'
 * channels), the fused W slot pair off; every compiled block shape and
 * cluster sizes 1 to 16 (12 and 16: Hopper's non-portable sizes; more ranks
 * than some tiles' K steps). */
static void test_random_forced(void)
{
    if (skip_without_gpu())
        return;
    static const char *const tiles[] = {NULL,          "1,2,2,8,3",     "4,2,4,1,2",
                                        "2,4,1,4,5",   "16,2,1,1,7",    "3,1,2,16,2",
                                        "4,2,2,4,8,2", "2,2,2,8,6,4",   "4,2,1,4,8,2,0"};
    static const char *const igemm_tiles[] = {NULL,    "2,4,1", "4,2,2",  "2,2,4", "4,1,8",
                                              "1,4,2", "2,1,16", "2,4,8", "2,4,12"};
    const char *names[MAX_IMPLS];
    const int n = cuda_impls(names);
    const char *count_env = getenv("CONVT3D_TEST_PROBLEMS");
    const int per = count_env && *count_env ? (atoi(count_env) + 9) / 10 : 12;
    rng r = rng_make(test_seed() * 31 + 5);
    for (int k = 0; k < n; k++) {
        const int phase = strstr(names[k], "_phase_") && !strstr(names[k], "depthwise");
        const int igemm = strstr(names[k], "igemm") != NULL;
        const char *tile_var = igemm ? "CONVT3D_CUDA_IGEMM" : "CONVT3D_CUDA_TILE";
        int ran = 0;
        for (size_t t = 0; t < sizeof tiles / sizeof *tiles; t++) {
            if (t > 0 && !phase && !igemm)
                break; /* tilings apply to the phase and implicit-GEMM kernels only */
            const char *tile = igemm ? igemm_tiles[t] : tiles[t];
            if (tile)
                setenv(tile_var, tile, 1);
            /* depthwise kernels need depthwise problems: make some */
            for (int i = 0, tries = 0; i < per && tries < 400 * per; tries++) {
                convt3d_problem p = random_problem(&r, 4e5, 40000);
                if (strstr(names[k], "dwtile") || strstr(names[k], "dwlast") ||
                    strstr(names[k], "depthwise")) {
                    p.groups = p.in_channels = p.out_channels = rng_int(&r, 1, 12);
                    if (convt3d_validate(&p) != CONVT3D_SUCCESS)
                        continue;
                }
                if (!applies(names[k], &p))
                    continue;
                CU_ASSERT(check_impl(&p, names[k], rng_next(&r)));
                if (tile && !ran)
                    printf("(%s=%s) ", tile_var, tile);
                i++;
                ran++;
            }
            unsetenv(tile_var);
        }
        if (!ran)
            printf("(%s: no random problem it applies to) ", names[k]);
    }
}

/* Edge cases for every CUDA implementation that takes them: one element,
 * 1-tap kernels, strides larger than the output, dilations, output
 * padding, odd group counts, W runs that are not a multiple of 4. */
static void test_edge_cases(void)
{
    if (skip_without_gpu())
        return;
    const char *names[MAX_IMPLS];
    const int n = cuda_impls(names);
    convt3d_problem edge[12];
    edge[0] = make_problem(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    edge[1] = make_problem(1, 3, 5, 1, 2, 3, 5, 1, 3, 0, 2, 0, CONVT3D_LAYOUT_NCDHW);
    edge[2] = make_problem(2, 4, 4, 4, 3, 2, 7, 3, 2, 2, 1, 1, CONVT3D_LAYOUT_NCDHW);
    edge[3] = make_problem(1, 6, 9, 3, 2, 5, 3, 2, 5, 1, 3, 1, CONVT3D_LAYOUT_NCDHW);
    edge[4] = make_problem(1, 32, 64, 1, 2, 3, 5, 2, 2, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    edge[5] = make_problem(1, 8, 8, 8, 3, 4, 13, 3, 1, 1, 0, 0, CONVT3D_LAYOUT_NCDHW);
    edge[6] = make_problem(1, 5, 7, 1, 1, 1, 17, 4, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
    edge[7] = make_problem(1, 16, 16, 16, 2, 3, 9, 4, 2, 1, 0, 1, CONVT3D_LAYOUT_NCDHW);
    edge[8] = make_problem(1, 2, 2, 2, 4, 4, 4, 3, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    edge[8].dilation[0] = 2, edge[8].dilation[2] = 2;
    edge[9] = make_problem(1, 4, 4, 1, 3, 3, 6, 3, 2, 1, 1, 0, CONVT3D_LAYOUT_NCDHW);
    edge[9].dilation[2] = 2;
    edge[10] = make_problem(2, 48, 40, 2, 3, 2, 4, 2, 2, 0, 1, 1, CONVT3D_LAYOUT_NCDHW);
    edge[11] = make_problem(1, 1, 1, 1, 2, 2, 2, 3, 7, 1, 6, 1, CONVT3D_LAYOUT_NCDHW);
    int ran = 0;
    for (int e = 0; e < 12; e++)
        for (int layout = 0; layout < 2; layout++) {
            convt3d_problem p = edge[e];
            p.layout = (convt3d_layout)layout;
            CU_ASSERT_FATAL(convt3d_validate(&p) == CONVT3D_SUCCESS);
            for (int k = 0; k < n; k++)
                if (applies(names[k], &p)) {
                    CU_ASSERT(check_impl(&p, names[k], 300 + 10 * e + layout));
                    ran++;
                }
        }
    CU_ASSERT(ran > 12);
}

/* The implicit-GEMM kernel where it is meant to run: channel counts past its
 * K step (16 input channels) and its output-channel block (32 to 128), so
 * that partial K steps, several K steps a tap and several blocks of output
 * channels all occur; every compiled block shape and cluster size in turn;
 * both layouts, and every third problem dilated along W (2 or 3), where the
 * automatic walk takes this kernel when the phase kernel cannot. */
static void test_igemm_channels(void)
{
    if (skip_without_gpu())
        return;
    static const char *const shapes[] = {"2,4,1", "4,2,2", "2,2,4", "4,1,8",
                                         "1,4,1", "2,1,16", "2,4,8", "4,1,6"};
    const char *count_env = getenv("CONVT3D_TEST_PROBLEMS");
    const int count = count_env && *count_env ? (atoi(count_env) + 3) / 4 : 48;
    rng r = rng_make(test_seed() * 37 + 11);
    for (int i = 0; i < count; i++) {
        convt3d_problem p = random_problem(&r, 4e5, 40000);
        p.layout = i % 2 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
        p.groups = rng_int(&r, 1, 2);
        p.in_channels = p.groups * rng_int(&r, 1, 70);
        p.out_channels = p.groups * rng_int(&r, 1, 140);
        if (i % 3 == 1) {
            p.dilation[2] = rng_int(&r, 2, 3);
            p.output_padding[2] = 0;
        }
        convt3d_shape sh;
        if (convt3d_shape_from_problem(&p, &sh) != CONVT3D_SUCCESS || sh.macs > 3e6 ||
            sh.y_elems > 400000 || !applies("cuda/f32_igemm_8x8", &p)) {
            i--;
            continue;
        }
        setenv("CONVT3D_CUDA_IGEMM", shapes[i % 8], 1);
        CU_ASSERT(check_impl(&p, "cuda/f32_igemm_8x8", rng_next(&r)));
        unsetenv("CONVT3D_CUDA_IGEMM");
    }
}

/* The FMA engine's automatic plans where its widest tile leaves the GPU
 * idle (igemm/plan.cu: igemm_small_grid_tile, igemm_row_cluster_size): one
 * warp row of 64 x 128 in clusters of up to 16 blocks (Hopper's
 * non-portable sizes; on 132 multiprocessors 16 for the first, second and
 * fourth problem; the third, 12 K steps, keeps 2 x 1 warps in clusters of
 * 2), both layouts: exact on small integers,
 * within TOL on uniform data, the same bits on a second run (a cluster's
 * partial sums meet in rank order). */
static void test_igemm_row_tile_auto(void)
{
    if (skip_without_gpu())
        return;
    const convt3d_problem ps[] = {
        make_problem(1, 256, 128, 1, 4, 4, 4, 4, 2, 1, 0, 1, CONVT3D_LAYOUT_NCDHW),
        make_problem(2, 128, 128, 1, 5, 5, 5, 3, 1, 1, 0, 0, CONVT3D_LAYOUT_NCDHW),
        make_problem(1, 192, 96, 1, 6, 6, 6, 2, 2, 0, 0, 1, CONVT3D_LAYOUT_NCDHW),
        make_problem(1, 256, 80, 1, 4, 4, 4, 3, 1, 1, 0, 1, CONVT3D_LAYOUT_NCDHW),
    };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (int layout = 0; layout < 2; layout++)
            for (int exact = 0; exact <= 1; exact++) {
                convt3d_problem p = ps[i];
                p.layout = (convt3d_layout)layout;
                problem_data d;
                CU_ASSERT_FATAL(data_make(&d, &p, 4100 + 4 * i + 2 * layout + exact, exact));
                float *y1 = malloc((size_t)d.ny * sizeof(float));
                float *y2 = malloc((size_t)d.ny * sizeof(float));
                CU_ASSERT_FATAL(y1 && y2);
                const char *name = NULL;
                CU_ASSERT(run_on_stream(&d, 0, &name, y1) && run_on_stream(&d, 0, NULL, y2));
                if (!name || !strstr(name, "igemm"))
                    report(&p, "automatic plan", name ? name : "none");
                CU_ASSERT(name && strstr(name, "igemm"));
                CU_ASSERT(compare(&d, y1, exact, "row tile, automatic"));
                CU_ASSERT(memcmp(y1, y2, (size_t)d.ny * sizeof(float)) == 0);
                free(y1);
                free(y2);
                data_free(&d);
            }
}

/* The half entry of the few-output kernel (cuda/f16_fewout_ksplit or
 * cuda/bf16_fewout_ksplit) forced on p in that type, with and without bias,
 * against the reference with the type's tolerance and the exact
 * small-integer pass (it applies wherever the f32 entry does). */
static void check_fewout_half(const convt3d_problem *p32, convt3d_dtype type, uint64_t seed)
{
    convt3d_problem p = *p32;
    p.x_type = p.w_type = p.bias_type = p.y_type = type;
    p.has_bias = (int)(seed & 1);
    const char *name =
        type == CONVT3D_F16 ? "cuda/f16_fewout_ksplit" : "cuda/bf16_fewout_ksplit";
    CU_ASSERT_FATAL(applies(name, &p));
    const convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    const check_result res =
        check_implementation_math(&p, gpu, name, CONVT3D_MATH_F32, seed, DEVICE_POINTERS,
                                  mode_tolerance(type, CONVT3D_MATH_F32, TOL));
    assert_check(&res, &p, seed);
}

/* The few-output-channel kernel where it is meant to run: 1-8 output and
 * 16-150 input channels a group, so that several weight chunks (many taps:
 * kernels up to 5 at stride 1), partial chunks and partial tiles occur;
 * both layouts, groups, every third problem dilated; a quarter of them one
 * group of 64-256 input channels on a small grid (fewout/plan.cu,
 * split_for_small_grids: clusters of up to 8 blocks, then more slices);
 * every fifth with the cluster bounded to 1, 2 or 4 (CONVT3D_CUDA_FEWOUT);
 * each problem also in f16 or bf16 data through the half entries. */
static void test_fewout_channels(void)
{
    if (skip_without_gpu())
        return;
    const char *count_env = getenv("CONVT3D_TEST_PROBLEMS");
    const int count = count_env && *count_env ? (atoi(count_env) + 3) / 4 : 32;
    rng r = rng_make(test_seed() * 43 + 17);
    for (int i = 0; i < count; i++) {
        convt3d_problem p = random_problem(&r, 4e5, 40000);
        p.layout = i % 2 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
        p.groups = rng_int(&r, 1, 2);
        p.in_channels = p.groups * rng_int(&r, 16, 150);
        p.out_channels = p.groups * rng_int(&r, 1, 8);
        if (i % 4 == 3)
            for (int d = 0; d < 3; d++) {
                p.stride[d] = 1;
                p.kernel[d] = rng_int(&r, 3, 5);
                p.output_padding[d] = 0;
            }
        if (i % 3 == 1) {
            p.dilation[0] = p.dilation[2] = rng_int(&r, 2, 3);
            p.output_padding[0] = p.output_padding[2] = 0;
        }
        /* a decoder's last layer on a small volume: 64-256 input channels,
         * where the small-grid rule takes 16-128 slices (with the stride-1
         * taps above, weight chunks above 48 KB) */
        const int wide = i % 8 == 5 || i % 8 == 7;
        if (wide) {
            p.groups = 1;
            p.in_channels = rng_int(&r, 64, 256);
            p.out_channels = rng_int(&r, 1, 3);
        }
        convt3d_shape sh;
        if (convt3d_shape_from_problem(&p, &sh) != CONVT3D_SUCCESS ||
            sh.macs > (wide ? 2e7 : 3e6) ||
            sh.y_elems > 400000 || !applies("cuda/f32_fewout_ksplit", &p)) {
            i--;
            continue;
        }
        static const char *const bounds[] = {"1", "2", "4"};
        if (i % 5 == 2)
            setenv("CONVT3D_CUDA_FEWOUT", bounds[i / 5 % 3], 1);
        CU_ASSERT(check_impl(&p, "cuda/f32_fewout_ksplit", rng_next(&r)));
        check_fewout_half(&p, i % 2 ? CONVT3D_BF16 : CONVT3D_F16, rng_next(&r));
        unsetenv("CONVT3D_CUDA_FEWOUT");
    }
}

/* The channels-last depthwise kernel where it is meant to run: NDHWC
 * depthwise problems with channel counts that fill a block's 64 (4 a
 * thread), leave a partial chunk (20, 68, 132), are no multiple of 4 (one
 * a thread: 1, 3, 7, 30) or exceed a block's (256); strides 1-4, kernels
 * 1-5 (some 9 long: fewer channels a block's staged weights), dilation,
 * output padding, bias every other problem; each forced.  Then the registry
 * harness on four depthwise problems (every implementation, both layouts,
 * bias on and off, f32/f16/bf16: the half builds), on aligned and on
 * misaligned device tensors (the launch falls back to one channel a
 * thread). */
static void test_dwlast_channels(void)
{
    if (skip_without_gpu())
        return;
    static const int cs[] = {4, 8, 20, 64, 68, 132, 256, 1, 3, 7, 30, 12};
    const char *count_env = getenv("CONVT3D_TEST_PROBLEMS");
    const int count = count_env && *count_env ? (atoi(count_env) + 3) / 4 : 36;
    rng r = rng_make(test_seed() * 47 + 19);
    for (int i = 0; i < count; i++) {
        const int c = cs[i % 12];
        convt3d_problem p = make_problem(rng_int(&r, 1, 2), c, c, c, rng_int(&r, 1, 9),
                                         rng_int(&r, 1, 9), rng_int(&r, 1, 19), 3, 2, 1, 1,
                                         i % 2, CONVT3D_LAYOUT_NDHWC);
        for (int d = 0; d < 3; d++) {
            p.kernel[d] = i % 7 == 6 && d == 0 ? 9 : rng_int(&r, 1, 5);
            p.stride[d] = rng_int(&r, 1, 4);
            p.dilation[d] = rng_int(&r, 0, 3) == 0 ? rng_int(&r, 2, 3) : 1;
            p.padding[d] = rng_int(&r, 0, (int)p.kernel[d] - 1);
            const int most = (int)(p.stride[d] > p.dilation[d] ? p.stride[d] : p.dilation[d]);
            p.output_padding[d] = rng_int(&r, 0, most - 1);
        }
        convt3d_shape sh;
        if (convt3d_shape_from_problem(&p, &sh) != CONVT3D_SUCCESS || sh.y_elems > 2000000 ||
            !applies("cuda/f32_dwlast", &p)) {
            i--;
            continue;
        }
        CU_ASSERT(check_impl(&p, "cuda/f32_dwlast", rng_next(&r)));
    }
    convt3d_problem dw[4] = {
        make_problem(2, 8, 8, 8, 3, 4, 13, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NDHWC),
        make_problem(1, 20, 20, 20, 4, 3, 9, 4, 2, 1, 0, 0, CONVT3D_LAYOUT_NDHWC),
        make_problem(1, 64, 64, 64, 2, 4, 8, 3, 1, 1, 0, 1, CONVT3D_LAYOUT_NDHWC),
        make_problem(2, 3, 3, 3, 3, 3, 5, 3, 3, 1, 2, 1, CONVT3D_LAYOUT_NDHWC)};
    dw[1].dilation[2] = 2;
    for (int m = 0; m < 2; m++) {
        const impl_stats st =
            check_registry(CONVT3D_DEVICE_CUDA, dw, 4, test_seed() + 907 + 100 * m,
                           m ? DEVICE_POINTERS_MISALIGNED : DEVICE_POINTERS, TOL);
        printf("\n  %s: %d CUDA implementations, %d checks, %d failed ",
               m ? "misaligned" : "aligned", st.implementations, st.checks, st.failed);
        CU_ASSERT(st.checks > 0 && st.failed == 0);
    }
}

/* Every CUDA implementation on device tensors one element past their
 * allocation's start (a slice of a larger tensor): kernels with 16-byte
 * copies (the tensor-core igemm's K-contiguous input tile in NDHWC) must
 * take their element-wise path, none may fault or read past the tensors.
 * Random problems plus NDHWC ones with C_in/G a multiple of 8. */
static void test_misaligned_pointers(void)
{
    if (skip_without_gpu())
        return;
    enum { NRANDOM = 10, NKC = 6 };
    convt3d_problem problems[NRANDOM + NKC];
    rng r = rng_make(test_seed() * 53 + 5);
    for (int i = 0; i < NRANDOM; i++)
        problems[i] = random_problem(&r, 4e5, 40000);
    for (int i = 0; i < NKC; i++) {
        convt3d_problem p = random_problem(&r, 4e5, 40000);
        p.layout = CONVT3D_LAYOUT_NDHWC;
        p.groups = rng_int(&r, 1, 2);
        p.in_channels = p.groups * 8 * rng_int(&r, 1, 6);
        p.out_channels = p.groups * rng_int(&r, 16, 80);
        convt3d_shape sh;
        if (convt3d_shape_from_problem(&p, &sh) != CONVT3D_SUCCESS || sh.macs > 3e6 ||
            sh.y_elems > 400000) {
            i--;
            continue;
        }
        problems[NRANDOM + i] = p;
    }
    const impl_stats st = check_registry(CONVT3D_DEVICE_CUDA, problems, NRANDOM + NKC,
                                         test_seed() + 811, DEVICE_POINTERS_MISALIGNED, TOL);
    printf("\n  %d CUDA implementations, %d checks, %d failed ", st.implementations, st.checks,
           st.failed);
    CU_ASSERT(st.checks > 0);
}

/* The tensor-core igemm's NCDHW input runs (igemm_plan.runs: half data in
 * 16-byte loads of 8 positions along W realigned in registers, f32 data for
 * TF32 in 16- or 8-byte cp.async of 4 positions): problems
 * whose output W is a multiple of 8 strides, so that every W phase holds a
 * multiple of 8 positions; 16-80 input channels, taps of every alignment,
 * padding (runs that fall back to element loads at the edges), groups,
 * dilation; each tensor-core block shape; f16, bf16 and TF32; device tensors
 * aligned and one element past their allocation (no covering 16-byte word
 * may reach outside x). */
static void test_igemm_half_runs(void)
{
    if (skip_without_gpu())
        return;
    static const char *const shapes[] = {"2,4,1", "4,2,1", "4,1,1", "2,4,2", "4,2,4", "4,1,8"};
    const char *count_env = getenv("CONVT3D_TEST_PROBLEMS");
    const int count = count_env && *count_env ? (atoi(count_env) + 3) / 4 : 24;
    rng r = rng_make(test_seed() * 41 + 13);
    for (int i = 0, tries = 0; i < count && tries < 400 * count; tries++) {
        convt3d_problem p = random_problem(&r, 4e5, 40000);
        p.layout = CONVT3D_LAYOUT_NCDHW;
        p.groups = rng_int(&r, 1, 2);
        p.in_channels = p.groups * rng_int(&r, 16, 80);
        p.out_channels = p.groups * rng_int(&r, 8, 100);
        if (i % 3 == 1)
            p.dilation[2] = rng_int(&r, 2, 3);
        p.output_padding[2] = 0;
        int found = 0;
        for (int64_t w = 1; w <= 48 && !found; w++) {
            p.in_size[2] = w;
            convt3d_shape sh;
            found = convt3d_shape_from_problem(&p, &sh) == CONVT3D_SUCCESS &&
                    sh.out[2] % (8 * sh.s[2]) == 0;
        }
        convt3d_shape sh;
        if (!found || convt3d_shape_from_problem(&p, &sh) != CONVT3D_SUCCESS || sh.macs > 3e6 ||
            sh.y_elems > 400000)
            continue;
        static const convt3d_dtype types[] = {CONVT3D_F16, CONVT3D_BF16, CONVT3D_F32};
        static const char *const impls[] = {"cuda/f16_igemm_mma", "cuda/bf16_igemm_mma",
                                            "cuda/tf32_igemm_mma"};
        const convt3d_dtype type = types[i % 3];
        const convt3d_math_mode math = type == CONVT3D_F32 ? CONVT3D_MATH_TF32 : CONVT3D_MATH_F32;
        p.x_type = p.w_type = p.bias_type = p.y_type = type;
        const char *impl = impls[i % 3];
        setenv("CONVT3D_CUDA_IGEMM", shapes[(i / 3) % 6], 1);
        for (int m = 0; m < 2; m++) {
            const pointer_mode mode = m ? DEVICE_POINTERS_MISALIGNED : DEVICE_POINTERS;
            const check_result res = check_implementation_math(
                &p, (convt3d_device){CONVT3D_DEVICE_CUDA, 0}, impl, math, rng_next(&r), mode,
                mode_tolerance(type, math, TOL));
            if (!res.ok)
                printf("\n  FAILED %s (tile %s, %s): %s", impl, shapes[(i / 3) % 6],
                       m ? "misaligned" : "aligned", res.message);
            CU_ASSERT(res.ok);
        }
        unsetenv("CONVT3D_CUDA_IGEMM");
        i++;
    }
}

/* The four inner products of a tensor-core family's entries, in the order
 * of their names in the tests below: f16 and bf16 data, TF32 and 3xTF32
 * on f32 data. */
static const convt3d_dtype tc_types[] = {CONVT3D_F16, CONVT3D_BF16, CONVT3D_F32, CONVT3D_F32};
static const convt3d_math_mode tc_maths[] = {CONVT3D_MATH_F32, CONVT3D_MATH_F32,
                                             CONVT3D_MATH_TF32, CONVT3D_MATH_3XTF32};

/* impl (inner product k of tc_types / tc_maths) forced on p in that type,
 * on aligned device tensors and on tensors one element past their
 * allocation, each against the reference with the mode's tolerance and the
 * exact small-integer pass; how many of the two passed. */
static int check_tc_both_alignments(convt3d_problem *p, const char *impl, int k, rng *r)
{
    p->x_type = p->w_type = p->bias_type = p->y_type = tc_types[k];
    int passed = 0;
    for (int m = 0; m < 2; m++) {
        const pointer_mode mode = m ? DEVICE_POINTERS_MISALIGNED : DEVICE_POINTERS;
        const uint64_t seed = rng_next(r);
        const check_result res = check_implementation_math(
            p, (convt3d_device){CONVT3D_DEVICE_CUDA, 0}, impl, tc_maths[k], seed, mode,
            mode_tolerance(tc_types[k], tc_maths[k], TOL));
        if (!res.ok)
            printf("\n  FAILED %s (%s)", impl, m ? "misaligned" : "aligned");
        assert_check(&res, p, seed);
        passed += res.ok;
    }
    return passed;
}

/* The tensor-core window kernel's vector and channels-last staging
 * (CONVT3D_CUDA_TCWIN=1): random problems, half NCDHW with W a multiple of
 * 8 (every x row on a 16-byte word for f16 / bf16 and f32), half NDHWC
 * (channels-last windows; C_in/G a multiple of 8 every other time, the
 * 16-byte copies), 1-40 input channels a group (several chunks, ragged
 * ones), strides up to 3, dilation, bias or not -- each through the f16,
 * bf16, TF32 and 3xTF32 entries, on aligned device tensors (16-byte words)
 * and on tensors one element past their allocation (the launch falls back
 * to element copies in the same layout), with the mode's tolerance and the
 * exact small-integer pass; y poisoned first. */
static void test_tcwin_vec_staging(void)
{
    if (skip_without_gpu())
        return;
    static const char *const impls[] = {"cuda/f16_tcwin_mma", "cuda/bf16_tcwin_mma",
                                        "cuda/tf32_tcwin_mma", "cuda/3xtf32_tcwin_mma"};
    const char *count_env = getenv("CONVT3D_TEST_PROBLEMS");
    const int count = count_env && *count_env ? (atoi(count_env) + 3) / 4 * 4 : 32;
    rng r = rng_make(test_seed() * 47 + 19);
    int ran = 0;
    setenv("CONVT3D_CUDA_TCWIN", "1", 1);
    for (int i = 0, tries = 0; i < count && tries < 400 * count; tries++) {
        convt3d_problem p = random_problem(&r, 4e5, 40000);
        const int cl = (i / 4) % 2;
        p.layout = cl ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
        p.groups = rng_int(&r, 1, 2);
        p.in_channels = p.groups * (cl && (i / 8) % 2 ? 8 * rng_int(&r, 1, 5) : rng_int(&r, 1, 40));
        p.out_channels = p.groups * rng_int(&r, 1, 72);
        if (!cl)
            p.in_size[2] = 8 * rng_int(&r, 1, 5);
        const int k = i % 4;
        p.x_type = p.w_type = p.bias_type = p.y_type = tc_types[k];
        convt3d_shape sh;
        if (convt3d_shape_from_problem(&p, &sh) != CONVT3D_SUCCESS || sh.macs > 3e6 ||
            sh.y_elems > 400000)
            continue;
        convt3d_plan_options o;
        convt3d_plan_options_init(&o);
        o.math_mode = tc_maths[k];
        if (convt3d_implementation_applies(impls[k], &p, (convt3d_device){CONVT3D_DEVICE_CUDA, 0},
                                           &o) != CONVT3D_SUCCESS)
            continue;
        ran += check_tc_both_alignments(&p, impls[k], k, &r);
        i++;
    }
    unsetenv("CONVT3D_CUDA_TCWIN");
    CU_ASSERT(ran == 2 * count);
}

/* The tensor-core shuffle kernel (taps that do not overlap: kernel = stride,
 * no padding): random such problems -- kernels of 1-3 a dim (up to 16 taps),
 * 1-80 channels a group on each side (several K steps, ragged ones, several
 * output-channel blocks), 1-2 groups, 1-12 inputs a dim (image positions a
 * multiple of the 16-byte copy or not), NCDHW and NDHWC (C_in/G a multiple
 * of 8 or not), bias or not -- each through its f16,
 * bf16, TF32 and 3xTF32 entry, on aligned device tensors and on tensors one
 * element past their allocation (the element copies of x), with the mode's
 * tolerance and the exact small-integer pass; the output poisoned first. */
static void test_shuffle_kernel(void)
{
    if (skip_without_gpu())
        return;
    static const char *const impls[] = {"cuda/f16_shuffle_mma", "cuda/bf16_shuffle_mma",
                                        "cuda/tf32_shuffle_mma", "cuda/3xtf32_shuffle_mma"};
    const char *count_env = getenv("CONVT3D_TEST_PROBLEMS");
    const int count = count_env && *count_env ? (atoi(count_env) + 3) / 4 * 4 : 32;
    rng r = rng_make(test_seed() * 43 + 17);
    int ran = 0;
    for (int i = 0, tries = 0; i < count && tries < 100 * count; tries++) {
        convt3d_problem p;
        convt3d_problem_init(&p);
        p.batch = rng_int(&r, 1, 2);
        p.groups = rng_int(&r, 1, 2);
        p.in_channels = p.groups * rng_int(&r, 1, 80);
        p.out_channels = p.groups * rng_int(&r, 1, 80);
        int64_t taps = 1;
        for (int d = 0; d < 3; d++) {
            p.in_size[d] = rng_int(&r, 1, 12);
            p.kernel[d] = p.stride[d] = rng_int(&r, 1, 3);
            taps *= p.kernel[d];
        }
        if (i % 3 == 0) /* the suite's up-convolution, k2 s2 */
            p.kernel[0] = p.kernel[1] = p.kernel[2] = p.stride[0] = p.stride[1] =
                p.stride[2] = 2, taps = 8;
        if (i % 2 == 0)
            p.in_size[2] = 8; /* image positions a multiple of 8 */
        if ((i / 4) % 2) { /* NDHWC: channels-last stage and stores */
            p.layout = CONVT3D_LAYOUT_NDHWC;
            if ((i / 8) % 2) /* C_in/G a multiple of 8: the 16-byte copies */
                p.in_channels = p.groups * 8 * rng_int(&r, 1, 10);
        }
        p.has_bias = rng_int(&r, 0, 1);
        convt3d_shape sh;
        if (taps > 16 || convt3d_shape_from_problem(&p, &sh) != CONVT3D_SUCCESS ||
            sh.y_elems > 400000)
            continue;
        ran += check_tc_both_alignments(&p, impls[i % 4], i % 4, &r);
        i++;
    }
    CU_ASSERT(ran == 2 * count);
}

/* Plans with different tiles of one kernel coexist: a plan created later
 * (smaller shared-memory tile) must not break an earlier one. */
static void test_plans_coexist(void)
{
    if (skip_without_gpu())
        return;
    convt3d_problem big = bench_like(0); /* grouped, > 48 KB of shared memory */
    /* same instantiation (W stride 2, 8 channels a thread), less shared memory */
    convt3d_problem small = make_problem(1, 8, 8, 1, 3, 3, 5, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
    problem_data a, b;
    CU_ASSERT_FATAL(data_make(&a, &big, 61, 1));
    CU_ASSERT_FATAL(data_make(&b, &small, 62, 1));
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    convt3d_plan *pa = NULL, *pb = NULL;
    CU_ASSERT_FATAL(convt3d_plan_create(&pa, &big, gpu, a.w, NULL) == CONVT3D_SUCCESS);
    CU_ASSERT_FATAL(convt3d_plan_create(&pb, &small, gpu, b.w, b.b) == CONVT3D_SUCCESS);
    float *ya = malloc((size_t)a.ny * sizeof(float)), *yb = malloc((size_t)b.ny * sizeof(float));
    CU_ASSERT_FATAL(ya && yb);
    for (int round = 0; round < 2; round++) {
        poison(ya, a.ny);
        poison(yb, b.ny);
        const convt3d_status sa = convt3d_execute(pa, a.x, ya);
        if (sa != CONVT3D_SUCCESS)
            report(&big, "execute after a second plan", convt3d_last_error());
        CU_ASSERT(sa == CONVT3D_SUCCESS && compare(&a, ya, 1, "first plan"));
        CU_ASSERT(convt3d_execute(pb, b.x, yb) == CONVT3D_SUCCESS && compare(&b, yb, 1, "second plan"));
    }
    convt3d_plan_destroy(pa);
    convt3d_plan_destroy(pb);
    free(ya);
    free(yb);
    data_free(&a);
    data_free(&b);
}

/* The caller's current device is the same after every call. */
static void test_current_device_kept(void)
{
    if (skip_without_gpu())
        return;
    const int n = convt3d_cuda_device_count();
    const int last = n - 1;
    CU_ASSERT_FATAL(cudaSetDevice(last) == cudaSuccess);
    convt3d_problem p = make_problem(1, 4, 4, 1, 3, 3, 3, 3, 2, 1, 0, 1, CONVT3D_LAYOUT_NCDHW);
    for (int ord = 0; ord < n && ord < 4; ord++) {
        convt3d_device dev = {CONVT3D_DEVICE_CUDA, ord};
        check_result res = check_backend(&p, dev, 77 + ord, HOST_POINTERS, TOL);
        assert_check(&res, &p, 77 + ord);
        int now = -1;
        CU_ASSERT(cudaGetDevice(&now) == cudaSuccess && now == last);
    }
    cudaSetDevice(0);
}

/* cuda:N for every GPU present, device pointers allocated on that GPU. */
static void test_several_gpus(void)
{
    if (skip_without_gpu())
        return;
    const int n = convt3d_cuda_device_count();
    if (n < 2) {
        printf("(one GPU: cuda:N beyond cuda:0 not exercised) ");
        return;
    }
    convt3d_problem p = make_problem(2, 8, 8, 2, 4, 5, 6, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
    for (int ord = 1; ord < n && ord < 8; ord++) {
        CU_ASSERT_FATAL(cudaSetDevice(ord) == cudaSuccess);
        problem_data d;
        CU_ASSERT_FATAL(data_make(&d, &p, 900 + ord, 1));
        float *dy = dev_copy(NULL, d.ny), *y = malloc((size_t)d.ny * sizeof(float));
        cudaSetDevice(0);
        convt3d_device dev = {CONVT3D_DEVICE_CUDA, ord};
        CU_ASSERT_EQUAL(convt3d_forward(&p, dev, d.dx, d.dw, d.db, dy), CONVT3D_SUCCESS);
        int now = -1;
        CU_ASSERT(cudaGetDevice(&now) == cudaSuccess && now == 0);
        CU_ASSERT(cudaMemcpy(y, dy, (size_t)d.ny * sizeof(float), cudaMemcpyDeviceToHost) ==
                  cudaSuccess);
        CU_ASSERT(compare(&d, y, 1, "cuda:N"));
        /* a plan on cuda:0 refuses pointers that live on cuda:ord */
        convt3d_device zero = {CONVT3D_DEVICE_CUDA, 0};
        CU_ASSERT_EQUAL(convt3d_forward(&p, zero, d.dx, d.w, d.b, dy),
                        CONVT3D_ERR_POINTER_LOCATION);
        cudaSetDevice(ord);
        cudaFree(dy);
        data_free(&d);
        free(y);
        cudaSetDevice(0);
    }
}

/* Several host threads, each with its own stream and output, execute one
 * plan at the same time. */
typedef struct worker {
    const convt3d_plan *plan;
    const float *dx;
    int64_t ny;
    float *y;
    int ok;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    cudaStream_t stream;
    float *dy = NULL;
    w->ok = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess &&
            (dy = dev_copy(NULL, w->ny)) != NULL;
    for (int i = 0; w->ok && i < 8; i++)
        w->ok = convt3d_execute_on_stream(w->plan, w->dx, dy, stream) == CONVT3D_SUCCESS;
    if (w->ok)
        w->ok = cudaStreamSynchronize(stream) == cudaSuccess &&
                cudaMemcpy(w->y, dy, (size_t)w->ny * sizeof(float), cudaMemcpyDeviceToHost) ==
                    cudaSuccess;
    cudaFree(dy);
    cudaStreamDestroy(stream);
    return NULL;
}

static void test_concurrent_execute(void)
{
    if (skip_without_gpu())
        return;
    convt3d_problem p = make_problem(2, 16, 16, 2, 6, 8, 10, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
    problem_data d;
    CU_ASSERT_FATAL(data_make(&d, &p, 55, 1));
    convt3d_plan *plan = NULL;
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    CU_ASSERT_FATAL(convt3d_plan_create(&plan, &p, gpu, d.w, d.b) == CONVT3D_SUCCESS);
    enum { NT = 4 };
    worker w[NT];
    pthread_t th[NT];
    for (int i = 0; i < NT; i++) {
        w[i] = (worker){plan, d.dx, d.ny, malloc((size_t)d.ny * sizeof(float)), 0};
        CU_ASSERT_FATAL(w[i].y && pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT(w[i].ok && compare(&d, w[i].y, 1, "concurrent execute"));
        free(w[i].y);
    }
    convt3d_plan_destroy(plan);
    data_free(&d);
}

/* Out of device memory comes back as CONVT3D_ERR_OUT_OF_MEMORY with CUDA's
 * words; y is untouched and the plan still destroys cleanly. */
static void test_out_of_memory(void)
{
    if (skip_without_gpu())
        return;
    size_t free_b = 0, total_b = 0;
    CU_ASSERT_FATAL(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
    /* y needs 8x the bytes of x and more than the whole card; x (host) is
     * never read because staging y fails first.  The problem itself is
     * valid and small to plan (1x1 channels, 1-tap kernel). */
    convt3d_problem p = make_problem(1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 1, 0, CONVT3D_LAYOUT_NCDHW);
    const int64_t need = (int64_t)(total_b / sizeof(float) / 8) + (1 << 20);
    p.in_size[0] = 64;
    p.in_size[1] = 1024;
    p.in_size[2] = need / (64 * 1024) + 1;
    convt3d_plan *plan = NULL;
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    float w = 1.0f, x[4] = {1, 2, 3, 4}, y[4];
    poison(y, 4);
    CU_ASSERT_FATAL(convt3d_plan_create(&plan, &p, gpu, &w, NULL) == CONVT3D_SUCCESS);
    const convt3d_status st = convt3d_execute(plan, x, y);
    CU_ASSERT_EQUAL(st, CONVT3D_ERR_OUT_OF_MEMORY);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "memory"));
    CU_ASSERT_EQUAL(count_poison(y, 4), 4);
    convt3d_plan_destroy(plan);
    /* the device is still usable */
    convt3d_problem q = make_problem(1, 2, 2, 1, 2, 2, 2, 2, 2, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    check_result res = check_backend(&q, gpu, 5, DEVICE_POINTERS, TOL);
    assert_check(&res, &q, 5);
}

/* Mixed pointer locations are refused before any work (nothing written). */
static void test_pointer_mix(void)
{
    if (skip_without_gpu())
        return;
    convt3d_problem p = make_problem(1, 2, 2, 1, 2, 2, 2, 2, 2, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    problem_data d;
    CU_ASSERT_FATAL(data_make(&d, &p, 9, 1));
    convt3d_plan *plan = NULL;
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    CU_ASSERT_FATAL(convt3d_plan_create(&plan, &p, gpu, d.dw, NULL) == CONVT3D_SUCCESS);
    float *y = malloc((size_t)d.ny * sizeof(float));
    poison(y, d.ny);
    CU_ASSERT_EQUAL(convt3d_execute(plan, d.dx, y), CONVT3D_ERR_POINTER_LOCATION);
    CU_ASSERT_EQUAL(count_poison(y, d.ny), d.ny);
    convt3d_plan_destroy(plan);
    free(y);
    data_free(&d);
}

/* Tensors past 2^31 elements (int64 offsets in every kernel): outputs
 * sampled against a direct sum on the host.  CONVT3D_TEST_BIG=1 only: it
 * moves ~25 GB. */
static float big_x(int64_t i) { return (float)((i * 2654435761u >> 7) % 9) - 4.0f; }

static void test_big_tensors(void)
{
    if (skip_without_gpu())
        return;
    const char *big = getenv("CONVT3D_TEST_BIG");
    if (!big || strcmp(big, "1") != 0) {
        printf("(set CONVT3D_TEST_BIG=1 to run) ");
        return;
    }
    /* x and y: 1 x 2 x 1 x 32768 x 32776 = 2.15e9 elements each (k 1, s 1,
     * 2 groups of one channel), through the library's choice and every CUDA
     * implementation that applies. */
    const char *names[MAX_IMPLS];
    const int nimpl = cuda_impls(names);
    convt3d_problem p = make_problem(1, 2, 2, 2, 1, 32768, 32776, 1, 1, 0, 0, 1,
                                     CONVT3D_LAYOUT_NCDHW);
    int64_t nx, nw, ny;
    CU_ASSERT_FATAL(convt3d_tensor_elems(&p, &nx, &nw, &ny) == CONVT3D_SUCCESS);
    CU_ASSERT_FATAL(nx > (1LL << 31));
    float *x = malloc((size_t)nx * sizeof(float)), *y = malloc((size_t)ny * sizeof(float));
    float wv[2] = {1.5f, -2.0f}, bv[2] = {0.25f, 3.0f};
    CU_ASSERT_FATAL(x && y);
    for (int64_t i = 0; i < nx; i++)
        x[i] = big_x(i);
    float *dx = dev_copy(x, nx), *dy = dev_copy(NULL, ny);
    CU_ASSERT_FATAL(dx && dy);
    for (int f = -1; f < nimpl; f++) {
        if (f >= 0 && !applies(names[f], &p))
            continue;
        convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
        convt3d_plan_options opts;
        convt3d_plan_options_init(&opts);
        opts.implementation = f >= 0 ? names[f] : NULL;
        convt3d_plan *plan = NULL;
        CU_ASSERT_FATAL(convt3d_plan_create_ex(&plan, &p, gpu, wv, bv, &opts) == CONVT3D_SUCCESS);
        CU_ASSERT(convt3d_execute(plan, dx, dy) == CONVT3D_SUCCESS);
        convt3d_plan_destroy(plan);
        CU_ASSERT_FATAL(cudaMemcpy(y, dy, (size_t)ny * sizeof(float), cudaMemcpyDeviceToHost) ==
                        cudaSuccess);
        rng r = rng_make(17);
        int bad = 0;
        for (int s = 0; s < 4000; s++) {
            /* groups 2 of 1 channel: y[c] = w[c] * x[c] + b[c]; the last samples
             * hit the very end of the tensor */
            const int64_t e = s < 3990 ? rng_int(&r, 0, ny - 1) : ny - 1 - (3999 - s);
            const int64_t c = e / (ny / 2);
            const float want = wv[c] * x[e] + bv[c];
            bad += y[e] != want;
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
    cudaFree(dx);
    cudaFree(dy);
    free(x);
    free(y);
}

/* ---- CUDA graphs ---------------------------------------------------------- */

/* Copies device y to host y after the stream's work. */
static int download(float *host, const float *dev, int64_t n, cudaStream_t stream)
{
    return cudaStreamSynchronize(stream) == cudaSuccess &&
           cudaMemcpy(host, dev, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
}

/* plan's execute_on_stream on (x, y) captured into a graph on stream, in
 * the strictest capture mode (cudaStreamCaptureModeGlobal, torch.cuda.graph's
 * default); the graph instantiated into *exec.  The capture is always ended,
 * so a failure leaves the stream usable. */
static int capture_execute(const convt3d_plan *plan, const float *x, float *y,
                           cudaStream_t stream, cudaGraphExec_t *exec, const convt3d_problem *p)
{
    cudaGraph_t graph = NULL;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess) {
        report(p, "cudaStreamBeginCapture", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    const convt3d_status st = convt3d_execute_on_stream(plan, x, y, stream);
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    int ok = st == CONVT3D_SUCCESS && end == cudaSuccess && graph;
    if (st != CONVT3D_SUCCESS)
        report(p, "execute_on_stream while capturing", convt3d_last_error());
    else if (!ok)
        report(p, "cudaStreamEndCapture", cudaGetErrorString(end));
    if (ok && cudaGraphInstantiate(exec, graph, 0) != cudaSuccess) {
        report(p, "cudaGraphInstantiate", cudaGetErrorString(cudaGetLastError()));
        ok = 0;
    }
    if (graph)
        cudaGraphDestroy(graph);
    return ok;
}

/* One plan (impl forced; NULL: the library's choice): a direct call and a
 * captured graph, launched twice, give the same bits, each into a poisoned
 * output; capturing runs nothing; the result is the reference's. */
static int graph_matches_direct(const problem_data *d, const char *impl, cudaStream_t stream)
{
    const convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    convt3d_plan_options opts;
    convt3d_plan_options_init(&opts);
    opts.implementation = impl;
    convt3d_plan *plan = NULL;
    cudaGraphExec_t exec = NULL;
    const size_t bytes = (size_t)d->ny * sizeof(float);
    float *dy = dev_copy(NULL, d->ny), *direct = malloc(bytes), *graphed = malloc(bytes);
    int ok = dy && direct && graphed;
    if (ok && convt3d_plan_create_ex(&plan, &d->p, gpu, d->dw, d->db, &opts) != CONVT3D_SUCCESS) {
        report(&d->p, impl ? impl : "plan_create", convt3d_last_error());
        ok = 0;
    }
    ok = ok && cudaMemsetAsync(dy, 0xff, bytes, stream) == cudaSuccess &&
         convt3d_execute_on_stream(plan, d->dx, dy, stream) == CONVT3D_SUCCESS &&
         download(direct, dy, d->ny, stream);
    ok = ok && cudaMemsetAsync(dy, 0xff, bytes, stream) == cudaSuccess &&
         cudaStreamSynchronize(stream) == cudaSuccess &&
         capture_execute(plan, d->dx, dy, stream, &exec, &d->p);
    /* capture records; it must not have written y */
    if (ok && download(graphed, dy, d->ny, stream) && !isnan(graphed[0])) {
        report(&d->p, impl ? impl : "auto", "capturing ran the kernel");
        ok = 0;
    }
    for (int replay = 0; replay < 2 && ok; replay++) {
        ok = cudaMemsetAsync(dy, 0xff, bytes, stream) == cudaSuccess &&
             cudaGraphLaunch(exec, stream) == cudaSuccess && download(graphed, dy, d->ny, stream);
        if (ok && memcmp(direct, graphed, bytes) != 0) {
            report(&d->p, impl ? impl : "auto", "graph replay differs from the direct call");
            ok = 0;
        }
    }
    ok = ok && compare(d, graphed, 0, "graph replay vs reference");
    if (!ok)
        printf("    (graph test, %s on %s)\n", impl ? impl : "the library's choice",
               plan ? convt3d_plan_kernel_name(plan) : "no plan");
    if (exec)
        cudaGraphExecDestroy(exec);
    convt3d_plan_destroy(plan);
    cudaFree(dy);
    free(direct);
    free(graphed);
    return ok;
}

/* execute_on_stream with device pointers and a non-NULL stream can be
 * captured into a CUDA graph: the bench shapes (scaled, with bias) and a
 * depthwise one, both layouts, the library's choice and every
 * implementation that applies, forced. */
static void test_graph_capture(void)
{
    if (skip_without_gpu())
        return;
    const char *names[MAX_IMPLS];
    const int n = cuda_impls(names);
    cudaStream_t stream;
    CU_ASSERT_FATAL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    int ran = 0, kernels_seen = 0;
    int seen[MAX_IMPLS] = {0};
    for (int i = 0; i < 7; i++)
        for (int layout = 0; layout < 2; layout++) {
            convt3d_problem p = i < 6 ? bench_like(i)
                                      : make_problem(2, 32, 32, 32, 6, 8, 16, 3, 1, 1, 0, 1,
                                                     CONVT3D_LAYOUT_NCDHW);
            p.layout = (convt3d_layout)layout;
            p.has_bias = 1;
            problem_data d;
            CU_ASSERT_FATAL(data_make(&d, &p, 4000 + 10 * i + layout, 0));
            CU_ASSERT(graph_matches_direct(&d, NULL, stream));
            for (int k = 0; k < n; k++)
                if (applies(names[k], &p)) {
                    CU_ASSERT(graph_matches_direct(&d, names[k], stream));
                    kernels_seen += !seen[k];
                    seen[k] = 1;
                    ran++;
                }
            data_free(&d);
        }
    CU_ASSERT(ran >= 14);
    CU_ASSERT(kernels_seen >= 3);
    cudaStreamDestroy(stream);
}

static const test_entry gpu_tests[] = {
    {"cuda: stream variant", test_stream_variant},
    {"cuda: execute_on_stream captured into a CUDA graph, replayed bitwise", test_graph_capture},
    {"cuda: host vs device pointers, bitwise; determinism", test_host_device_bitwise},
    {"cuda: bench shapes (scaled) x layouts x every implementation", test_bench_shapes_each_kernel},
    {"cuda: bench shapes (scaled) in f16 and bf16 x layouts x every implementation",
     test_bench_shapes_half},
    {"cuda: implementation_applies is exact; forcing never falls back", test_applies_is_exact},
    {"cuda: random problems, every implementation and tiling forced", test_random_forced},
    {"cuda: edge cases, every implementation", test_edge_cases},
    {"cuda: implicit-GEMM kernel, many channels, each block shape", test_igemm_channels},
    {"cuda: implicit-GEMM FMA row tile in clusters of up to 16, automatic, exact and bitwise "
     "repeatable",
     test_igemm_row_tile_auto},
    {"cuda: few-output-channel kernel, C_in/G 16-256, chunks, small grids, both layouts, f32/f16/bf16",
     test_fewout_channels},
    {"cuda: channels-last depthwise kernel, channel counts, registry harness",
     test_dwlast_channels},
    {"cuda: every implementation on misaligned device tensors", test_misaligned_pointers},
    {"cuda: tensor-core igemm input runs along W (NCDHW), aligned and misaligned",
     test_igemm_half_runs},
    {"cuda: tensor-core shuffle kernel (kernel = stride), every mode, aligned and misaligned",
     test_shuffle_kernel},
    {"cuda: tensor-core window kernel by 16-byte words (CONVT3D_CUDA_TCWIN=1), every mode, "
     "aligned and misaligned",
     test_tcwin_vec_staging},
    {"cuda: plans with different tiles coexist", test_plans_coexist},
    {"cuda: caller's current device kept", test_current_device_kept},
    {"cuda: several GPUs (cuda:N)", test_several_gpus},
    {"cuda: concurrent execute on one plan", test_concurrent_execute},
    {"cuda: out of device memory -> CONVT3D_ERR_OUT_OF_MEMORY", test_out_of_memory},
    {"cuda: mixed pointer locations refused", test_pointer_mix},
    {"cuda: tensors past 2^31 elements (CONVT3D_TEST_BIG=1)", test_big_tensors},
    {NULL, NULL}};

#endif /* CONVT3D_HAVE_CUDA */

int main(void)
{
    const char *why = gpu_skip_reason();
    if (why) {
        printf("test_gpu: skipped: %s\n", why);
        return 77; /* automake: SKIP */
    }
#if CONVT3D_HAVE_CUDA
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    add_suite("gpu", gpu_tests);
    register_backend_gpu_tests();
    register_reliability_gpu_tests();
    register_multi_gpu_tests();
    printf("convt3d %s CUDA test program, seed %llu (set CONVT3D_TEST_SEED to change)\n",
           convt3d_version(), (unsigned long long)test_seed());
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    const unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    print_skips();
    printf("\n%u tests run, %u failed\n", CU_get_number_of_tests_run(),
           CU_get_number_of_tests_failed());
    CU_cleanup_registry();
    return failed ? 1 : 0;
#else
    return 77;
#endif
}
