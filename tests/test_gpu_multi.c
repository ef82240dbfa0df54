/* The several-GPU cases of the GPU program (tests/test_gpu, registered by
 * register_multi_gpu_tests()): plans on cuda:1 and on the last GPU, from
 * host and from device weights, run on a stream of that GPU and on the
 * default stream, against the reference and bit for bit against cuda:0;
 * pointers and streams of the wrong GPU refused with nothing written; the
 * caller's current device kept by every call (also on one GPU, for the
 * calls that exist there); two threads each driving its own GPU at once
 * giving the bits of the same work done one after the other; and
 * CONVT3D_DEVICE / AUTO naming a GPU.  A case that needs two GPUs says
 * "SKIPPED: 1 CUDA device(s) ..." on a machine with one and passes nothing
 * off as checked. */
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

/* 1 when at least `want` GPUs exist; otherwise the case is recorded as
 * skipped, with the count, and returns 0. */
static int need_gpus(int want)
{
    const int n = convt3d_cuda_device_count();
    if (n >= want)
        return 1;
    test_skip("%d CUDA device(s); this case needs %d", n, want);
    return 0;
}

static int current_device(void)
{
    int d = -1;
    return cudaGetDevice(&d) == cudaSuccess ? d : -1;
}

/* The test's own CUDA calls on GPU ord: they make ord current for the call
 * and put the caller's device back, so that the library is the only thing
 * under test when the current device is checked. */
static int enter(int ord)
{
    const int prev = current_device();
    return cudaSetDevice(ord) == cudaSuccess ? prev : -1;
}

static void leave(int prev)
{
    if (prev >= 0)
        cudaSetDevice(prev);
}

/* n floats on GPU ord, a copy of h unless h is NULL; NULL on failure. */
static float *alloc_on(int ord, const float *h, int64_t n)
{
    const int prev = enter(ord);
    void *d = NULL;
    const size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
    if (prev < 0 || cudaMalloc(&d, bytes) != cudaSuccess)
        d = NULL;
    else if (h && cudaMemcpy(d, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice) !=
                      cudaSuccess) {
        cudaFree(d);
        d = NULL;
    }
    leave(prev);
    return d;
}

static void free_on(int ord, void *d)
{
    if (!d)
        return;
    const int prev = enter(ord);
    cudaFree(d);
    leave(prev);
}

/* Copies between host and GPU ord, complete on return. */
static int copy_on(int ord, void *dst, const void *src, int64_t n, enum cudaMemcpyKind kind)
{
    const int prev = enter(ord);
    const int ok = prev >= 0 && cudaMemcpy(dst, src, (size_t)n * sizeof(float), kind) ==
                                    cudaSuccess &&
                   cudaDeviceSynchronize() == cudaSuccess;
    leave(prev);
    return ok;
}

/* Waits for everything queued on GPU ord (the legacy default stream
 * included). */
static int sync_on(int ord)
{
    const int prev = enter(ord);
    const int ok = prev >= 0 && cudaDeviceSynchronize() == cudaSuccess;
    leave(prev);
    return ok;
}

static cudaStream_t stream_on(int ord)
{
    const int prev = enter(ord);
    cudaStream_t s = NULL;
    if (prev < 0 || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        s = NULL;
    leave(prev);
    return s;
}

static void stream_free(int ord, cudaStream_t s)
{
    if (!s)
        return;
    const int prev = enter(ord);
    cudaStreamDestroy(s);
    leave(prev);
}

/* Whether two GPUs are the same model with the same SM count: only then do
 * their plans pick the same kernel and tiling, so only then are their bits
 * required to agree. */
static int same_model(int a, int b)
{
    struct cudaDeviceProp pa, pb;
    if (cudaGetDeviceProperties(&pa, a) != cudaSuccess ||
        cudaGetDeviceProperties(&pb, b) != cudaSuccess)
        return 0;
    return strcmp(pa.name, pb.name) == 0 && pa.multiProcessorCount == pb.multiProcessorCount &&
           pa.major == pb.major && pa.minor == pb.minor;
}

/* ---- one problem's data on the host and on a GPU ----------------------- */

typedef struct host_data {
    convt3d_problem p;
    int64_t nx, nw, ny;
    float *x, *w, *b, *ref;
    float *poisoned; /* ny poison values, uploaded into y before every run */
} host_data;

static void host_free(host_data *h)
{
    free(h->x);
    free(h->w);
    free(h->b);
    free(h->ref);
    free(h->poisoned);
    memset(h, 0, sizeof *h);
}

/* Uniform data from seed and its reference output. */
static int host_make(host_data *h, const convt3d_problem *p, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    h->p = *p;
    if (convt3d_tensor_elems(p, &h->nx, &h->nw, &h->ny) != CONVT3D_SUCCESS)
        return 0;
    h->x = malloc((size_t)h->nx * sizeof(float));
    h->w = malloc((size_t)h->nw * sizeof(float));
    h->b = malloc((size_t)p->out_channels * sizeof(float));
    h->ref = malloc((size_t)h->ny * sizeof(float));
    h->poisoned = malloc((size_t)h->ny * sizeof(float));
    if (!h->x || !h->w || !h->b || !h->ref || !h->poisoned)
        return 0;
    rng r = rng_make(seed);
    fill_uniform(&r, h->x, h->nx);
    fill_uniform(&r, h->w, h->nw);
    fill_uniform(&r, h->b, p->out_channels);
    poison(h->poisoned, h->ny);
    return convt3d_reference(p, h->x, h->w, h->b, h->ref) == CONVT3D_SUCCESS;
}

typedef struct dev_data {
    int ord;
    float *x, *w, *b, *y;
} dev_data;

static void dev_free(dev_data *d)
{
    free_on(d->ord, d->x);
    free_on(d->ord, d->w);
    free_on(d->ord, d->b);
    free_on(d->ord, d->y);
    memset(d, 0, sizeof *d);
}

/* Copies of h's x, weight and bias on GPU ord, and a y there. */
static int dev_make(dev_data *d, const host_data *h, int ord)
{
    memset(d, 0, sizeof *d);
    d->ord = ord;
    d->x = alloc_on(ord, h->x, h->nx);
    d->w = alloc_on(ord, h->w, h->nw);
    d->b = alloc_on(ord, h->b, h->p.out_channels);
    d->y = alloc_on(ord, NULL, h->ny);
    return d->x && d->w && d->b && d->y;
}

/* y on its GPU still holds the poison of every element: nothing written. */
static int dev_untouched(const host_data *h, int ord, const float *dy)
{
    float *back = malloc((size_t)h->ny * sizeof(float));
    const int ok = back && copy_on(ord, back, dy, h->ny, cudaMemcpyDeviceToHost) &&
                   count_poison(back, h->ny) == h->ny;
    free(back);
    return ok;
}

static void report(const convt3d_problem *p, const char *what, const char *detail)
{
    char desc[512];
    problem_describe(p, desc, sizeof desc);
    printf("\n  FAILED: %s: %s\n    problem: %s\n", what, detail, desc);
}

/* Poisons d->y, runs plan on d's x/y on stream (NULL: the default one, the
 * library synchronises), waits, and copies y into out. */
static convt3d_status run_device(const host_data *h, const convt3d_plan *plan, const dev_data *d,
                                 cudaStream_t stream, float *out)
{
    if (!copy_on(d->ord, d->y, h->poisoned, h->ny, cudaMemcpyHostToDevice))
        return CONVT3D_ERR_CUDA;
    const convt3d_status st = convt3d_execute_on_stream(plan, d->x, d->y, stream);
    if (st != CONVT3D_SUCCESS)
        return st;
    if ((stream && !sync_on(d->ord)) || !copy_on(d->ord, out, d->y, h->ny, cudaMemcpyDeviceToHost))
        return CONVT3D_ERR_CUDA;
    return CONVT3D_SUCCESS;
}

static int matches_reference(const host_data *h, const float *y, const char *what)
{
    const double err = rel_l2_error(y, h->ref, h->ny);
    if (err <= TOL)
        return 1;
    char msg[160];
    snprintf(msg, sizeof msg, "rel L2 error %g vs the reference (%lld unwritten)", err,
             (long long)count_poison(y, h->ny));
    report(&h->p, what, msg);
    return 0;
}

/* A plan on GPU ord from host weights (w_dev NULL) or from w_dev/b_dev;
 * impl forced when not NULL. */
static convt3d_status plan_on(convt3d_plan **plan, const host_data *h, int ord, const char *impl,
                              const float *w_dev, const float *b_dev)
{
    convt3d_plan_options opts;
    convt3d_plan_options_init(&opts);
    opts.implementation = impl;
    const convt3d_device dev = {CONVT3D_DEVICE_CUDA, ord};
    const float *w = w_dev ? w_dev : h->w, *b = w_dev ? b_dev : h->b;
    return convt3d_plan_create_ex(plan, &h->p, dev, w, h->p.has_bias ? b : NULL, &opts);
}

/* ---- plans on cuda:1 and on the last GPU -------------------------------- */

enum { MAX_IMPLS = 64, N_PROBLEMS = 4 };

/* A grouped stride-2 problem with bias, a channel-heavy stride-1 one, a
 * depthwise one and a k2s2 decoder layer: between them the generic, phase,
 * implicit-GEMM and depthwise families apply. */
static convt3d_problem multi_problem(int i, convt3d_layout layout)
{
    switch (i) {
    case 0: return make_problem(2, 8, 12, 2, 4, 5, 6, 3, 2, 1, 1, 1, layout);
    case 1: return make_problem(1, 32, 48, 1, 4, 4, 5, 3, 1, 1, 0, 1, layout);
    case 2: return make_problem(1, 16, 16, 16, 4, 6, 6, 3, 2, 1, 1, 0, layout);
    default: return make_problem(1, 16, 8, 1, 3, 4, 5, 2, 2, 0, 0, 1, layout);
    }
}

/* NULL (the library's choice), then every CUDA implementation that applies
 * to p on cuda:0 and on cuda:ord alike (printed when the two GPUs disagree,
 * which only different models may). */
static int impls_for(const convt3d_problem *p, int ord, const char *names[MAX_IMPLS])
{
    int n = 0;
    names[n++] = NULL;
    const convt3d_device zero = {CONVT3D_DEVICE_CUDA, 0}, other = {CONVT3D_DEVICE_CUDA, ord};
    for (int i = 0; i < convt3d_implementation_count() && n < MAX_IMPLS; i++) {
        if (convt3d_implementation_device(i) != CONVT3D_DEVICE_CUDA)
            continue;
        const char *name = convt3d_implementation_name(i);
        const int a = convt3d_implementation_applies(name, p, zero, NULL) == CONVT3D_SUCCESS;
        const int b = convt3d_implementation_applies(name, p, other, NULL) == CONVT3D_SUCCESS;
        if (a != b)
            printf("(%s applies on %s only) ", name, a ? "cuda:0" : "the other GPU");
        if (a && b)
            names[n++] = name;
    }
    return n;
}

/* impl on cuda:ord from host and from device weights, each on a stream of
 * ord and on the default stream: the reference's values, and y0's bits
 * (cuda:0's output) where the GPUs are alike. */
static int check_on_device(const host_data *h, const dev_data *d, cudaStream_t stream,
                           const char *impl, const char *kernel0, const float *y0, int alike,
                           float *y)
{
    int ok = 1;
    for (int from_dev = 0; from_dev <= 1; from_dev++) {
        char what[256];
        convt3d_plan *plan = NULL;
        const convt3d_status st =
            plan_on(&plan, h, d->ord, impl, from_dev ? d->w : NULL, from_dev ? d->b : NULL);
        snprintf(what, sizeof what, "cuda:%d, %s weights, %s", d->ord, from_dev ? "device" : "host",
                 impl ? impl : "the library's choice");
        if (st != CONVT3D_SUCCESS) {
            report(&h->p, what, convt3d_last_error());
            ok = 0;
            continue;
        }
        const convt3d_device got = convt3d_plan_device(plan);
        if (got.kind != CONVT3D_DEVICE_CUDA || got.ordinal != d->ord) {
            report(&h->p, what, "convt3d_plan_device() is not the device asked for");
            ok = 0;
        }
        if (alike && strcmp(convt3d_plan_kernel_name(plan), kernel0) != 0) {
            report(&h->p, what, "another kernel than on cuda:0, a GPU of the same model");
            ok = 0;
        }
        for (int on_stream = 1; on_stream >= 0; on_stream--) {
            char run[300];
            snprintf(run, sizeof run, "%s, %s", what, on_stream ? "its stream" : "NULL stream");
            const convt3d_status rs = run_device(h, plan, d, on_stream ? stream : NULL, y);
            if (rs != CONVT3D_SUCCESS) {
                report(&h->p, run, convt3d_last_error());
                ok = 0;
                continue;
            }
            ok &= matches_reference(h, y, run);
            if (alike && memcmp(y, y0, (size_t)h->ny * sizeof(float)) != 0) {
                report(&h->p, run, "not bitwise equal to the same plan on cuda:0");
                ok = 0;
            }
        }
        convt3d_plan_destroy(plan);
    }
    return ok;
}

/* cuda:0's output for impl (device weights, NULL stream) into y0 and its
 * kernel name into kernel0. */
static int run_on_zero(const host_data *h, const dev_data *d0, const char *impl,
                       const char **kernel0, float *y0)
{
    convt3d_plan *plan = NULL;
    if (plan_on(&plan, h, 0, impl, d0->w, d0->b) != CONVT3D_SUCCESS) {
        report(&h->p, impl ? impl : "cuda:0 plan", convt3d_last_error());
        return 0;
    }
    *kernel0 = convt3d_plan_kernel_name(plan);
    const int ok = run_device(h, plan, d0, NULL, y0) == CONVT3D_SUCCESS &&
                   matches_reference(h, y0, "cuda:0");
    convt3d_plan_destroy(plan);
    return ok;
}

/* Every problem and layout on one GPU ord, each implementation. */
static void check_device(int ord, const int alike)
{
    cudaStream_t stream = stream_on(ord);
    CU_ASSERT_FATAL(stream != NULL);
    for (int i = 0; i < N_PROBLEMS; i++)
        for (int layout = 0; layout < 2; layout++) {
            const convt3d_problem p = multi_problem(i, (convt3d_layout)layout);
            host_data h;
            dev_data d0, dn;
            CU_ASSERT_FATAL(host_make(&h, &p, 7000 + 10 * i + layout));
            CU_ASSERT_FATAL(dev_make(&d0, &h, 0) && dev_make(&dn, &h, ord));
            float *y0 = malloc((size_t)h.ny * sizeof(float)), *y = malloc((size_t)h.ny * sizeof(float));
            CU_ASSERT_FATAL(y0 && y);
            const char *names[MAX_IMPLS];
            const int n = impls_for(&p, ord, names);
            for (int k = 0; k < n; k++) {
                const char *kernel0 = "";
                const int ok = run_on_zero(&h, &d0, names[k], &kernel0, y0) &&
                               check_on_device(&h, &dn, stream, names[k], kernel0, y0, alike, y);
                CU_ASSERT(ok);
                if (!ok)
                    printf("    (cuda:%d, implementation %s)\n", ord,
                           names[k] ? names[k] : kernel0);
            }
            free(y0);
            free(y);
            dev_free(&d0);
            dev_free(&dn);
            host_free(&h);
        }
    stream_free(ord, stream);
}

static void test_plans_on_other_gpus(void)
{
    if (!need_gpus(2))
        return;
    const int last = convt3d_cuda_device_count() - 1;
    const int prev = current_device();
    for (int ord = 1; ord <= last; ord = ord < last ? last : last + 1) {
        const int alike = same_model(0, ord);
        if (!alike)
            printf("(cuda:%d is another model than cuda:0: compared with the reference only) ",
                   ord);
        check_device(ord, alike);
    }
    CU_ASSERT_EQUAL(current_device(), prev);
}

/* ---- pointers and streams of the wrong GPU ------------------------------ */

/* One execute that must be refused with CONVT3D_ERR_POINTER_LOCATION, y
 * (on GPU y_ord, or the host when y_ord < 0) left as it was. */
static void expect_refused(const host_data *h, const convt3d_plan *plan, const void *x, float *y,
                           int y_ord, void *stream, const char *what)
{
    if (y_ord >= 0) {
        CU_ASSERT_FATAL(copy_on(y_ord, y, h->poisoned, h->ny, cudaMemcpyHostToDevice));
    } else {
        poison(y, h->ny);
    }
    const convt3d_status st = convt3d_execute_on_stream(plan, x, y, stream);
    if (st != CONVT3D_ERR_POINTER_LOCATION)
        report(&h->p, what, st == CONVT3D_SUCCESS ? "accepted" : convt3d_last_error());
    CU_ASSERT_EQUAL(st, CONVT3D_ERR_POINTER_LOCATION);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "cuda:"));
    if (y_ord >= 0) {
        /* the call may have queued nothing: wait for the GPU anyway, so that
         * a write would be seen */
        CU_ASSERT(sync_on(y_ord));
        CU_ASSERT(dev_untouched(h, y_ord, y));
    } else {
        CU_ASSERT_EQUAL(count_poison(y, h->ny), h->ny);
    }
}

/* Plan creation that must be refused, *plan untouched. */
static void expect_create_refused(const host_data *h, int ord, const float *w, const float *b,
                                  const char *what)
{
    convt3d_plan *sentinel = (convt3d_plan *)&sentinel, *plan = sentinel;
    const convt3d_device dev = {CONVT3D_DEVICE_CUDA, ord};
    const convt3d_status st = convt3d_plan_create(&plan, &h->p, dev, w, b);
    if (st != CONVT3D_ERR_POINTER_LOCATION)
        report(&h->p, what, st == CONVT3D_SUCCESS ? "accepted" : convt3d_last_error());
    CU_ASSERT_EQUAL(st, CONVT3D_ERR_POINTER_LOCATION);
    CU_ASSERT(plan == sentinel);
    if (st == CONVT3D_SUCCESS && plan != sentinel)
        convt3d_plan_destroy(plan);
}

/* Every way of handing the cuda:1 plan (and a cuda:0 one) memory or a
 * stream of the other GPU: refused, nothing written. */
static void check_refusals(const host_data *h, const dev_data *d0, const dev_data *d1, float *hy)
{
    /* weights of another GPU at plan creation, for either device */
    expect_create_refused(h, 1, d0->w, d0->b, "cuda:1 plan, weight and bias on cuda:0");
    expect_create_refused(h, 1, d1->w, d0->b, "cuda:1 plan, bias on cuda:0");
    expect_create_refused(h, 1, d0->w, d1->b, "cuda:1 plan, weight on cuda:0");
    expect_create_refused(h, 1, h->w, d1->b, "cuda:1 plan, host weight, device bias");
    expect_create_refused(h, 0, d1->w, d1->b, "cuda:0 plan, weight and bias on cuda:1");

    convt3d_plan *plan = NULL, *plan0 = NULL;
    CU_ASSERT_FATAL(plan_on(&plan, h, 1, NULL, NULL, NULL) == CONVT3D_SUCCESS);
    CU_ASSERT_FATAL(plan_on(&plan0, h, 0, NULL, NULL, NULL) == CONVT3D_SUCCESS);
    expect_refused(h, plan, d0->x, d1->y, 1, NULL, "x on cuda:0, y on cuda:1");
    expect_refused(h, plan, d1->x, d0->y, 0, NULL, "x on cuda:1, y on cuda:0");
    expect_refused(h, plan, d0->x, d0->y, 0, NULL, "x and y on cuda:0");
    expect_refused(h, plan, h->x, d0->y, 0, NULL, "host x, y on cuda:0");
    expect_refused(h, plan0, d1->x, d1->y, 1, NULL, "cuda:0 plan, x and y on cuda:1");

    /* a stream of the other GPU, with device and with host pointers; CUDA
     * runtimes before 12.8 cannot ask a stream for its device and leave the
     * refusal to the launch (CONVT3D_ERR_CUDA) */
    cudaStream_t s0 = stream_on(0), s1 = stream_on(1);
    CU_ASSERT_FATAL(s0 && s1);
#if CUDART_VERSION >= 12080
    expect_refused(h, plan, d1->x, d1->y, 1, s0, "a stream of cuda:0, pointers of cuda:1");
    expect_refused(h, plan, h->x, hy, -1, s0, "a stream of cuda:0, host pointers");
    expect_refused(h, plan0, d0->x, d0->y, 0, s1, "cuda:0 plan, a stream of cuda:1");
#else
    CU_ASSERT_FATAL(copy_on(1, d1->y, h->poisoned, h->ny, cudaMemcpyHostToDevice));
    CU_ASSERT_NOT_EQUAL(convt3d_execute_on_stream(plan, d1->x, d1->y, s0), CONVT3D_SUCCESS);
    CU_ASSERT(sync_on(1) && dev_untouched(h, 1, d1->y));
    printf("(CUDA runtime %d: a stream of another GPU is refused by the launch) ", CUDART_VERSION);
#endif

    /* the plan still works, and the default-stream handles mean cuda:1's */
    void *const streams[] = {NULL, cudaStreamLegacy, cudaStreamPerThread};
    const char *const stream_names[] = {"NULL", "cudaStreamLegacy", "cudaStreamPerThread"};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_FATAL(copy_on(1, d1->y, h->poisoned, h->ny, cudaMemcpyHostToDevice));
        const convt3d_status st = convt3d_execute_on_stream(plan, d1->x, d1->y, streams[i]);
        if (st != CONVT3D_SUCCESS)
            report(&h->p, stream_names[i], convt3d_last_error());
        CU_ASSERT_EQUAL(st, CONVT3D_SUCCESS);
        CU_ASSERT(sync_on(1) && copy_on(1, hy, d1->y, h->ny, cudaMemcpyDeviceToHost) &&
                  matches_reference(h, hy, stream_names[i]));
    }
    CU_ASSERT(run_device(h, plan, d1, s1, hy) == CONVT3D_SUCCESS &&
              matches_reference(h, hy, "a stream of cuda:1"));
    CU_ASSERT(run_device(h, plan0, d0, s0, hy) == CONVT3D_SUCCESS &&
              matches_reference(h, hy, "the cuda:0 plan on a stream of cuda:0"));
    convt3d_plan_destroy(plan);
    convt3d_plan_destroy(plan0);
    stream_free(0, s0);
    stream_free(1, s1);
}

/* Lets each of GPUs 0 and 1 access the other's memory; 1 when both
 * directions are on (*enabled[i]: this call turned direction i on, so
 * peer_off() turns it off again). */
static int peer_on(int enabled[2])
{
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        int can = 0;
        enabled[i] = 0;
        if (cudaDeviceCanAccessPeer(&can, i, 1 - i) != cudaSuccess || !can) {
            ok = 0;
            continue;
        }
        const int prev = enter(i);
        const cudaError_t err = cudaDeviceEnablePeerAccess(1 - i, 0);
        if (err == cudaSuccess)
            enabled[i] = 1;
        else if (err != cudaErrorPeerAccessAlreadyEnabled)
            ok = 0;
        cudaGetLastError();
        leave(prev);
    }
    return ok;
}

static void peer_off(const int enabled[2])
{
    for (int i = 0; i < 2; i++)
        if (enabled[i]) {
            const int prev = enter(i);
            cudaDeviceDisablePeerAccess(1 - i);
            leave(prev);
        }
}

/* The refusals hold without peer access and, where the GPUs offer it, with
 * it on (the header's promise: another GPU's memory is never used, even
 * where a kernel could read it). */
static void test_wrong_gpu_refused(void)
{
    if (!need_gpus(2))
        return;
    const convt3d_problem p = make_problem(1, 4, 6, 2, 3, 4, 5, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
    host_data h;
    dev_data d0, d1;
    CU_ASSERT_FATAL(host_make(&h, &p, 4242));
    CU_ASSERT_FATAL(dev_make(&d0, &h, 0) && dev_make(&d1, &h, 1));
    float *hy = malloc((size_t)h.ny * sizeof(float));
    CU_ASSERT_FATAL(hy != NULL);
    check_refusals(&h, &d0, &d1, hy);
    int enabled[2];
    if (peer_on(enabled))
        check_refusals(&h, &d0, &d1, hy);
    else
        printf("(cuda:0 and cuda:1 offer no peer access: refusals checked without it only) ");
    peer_off(enabled);
    free(hy);
    dev_free(&d0);
    dev_free(&d1);
    host_free(&h);
}

/* ---- the caller's current device ---------------------------------------- */

/* CU_ASSERT that the current device is still `want` after `what`. */
static void still_current(int want, const char *what)
{
    const int now = current_device();
    if (now != want)
        printf("\n  FAILED: the current device is %d after %s, was %d\n", now, what, want);
    CU_ASSERT_EQUAL(now, want);
}

/* With `current` the caller's device, every kind of call on a plan of GPU
 * ord -- successes and refusals -- leaves it current. */
static void exercise_calls(int current, int ord)
{
    const convt3d_problem p = make_problem(1, 4, 4, 1, 3, 3, 4, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NDHWC);
    host_data h;
    dev_data d;
    CU_ASSERT_FATAL(host_make(&h, &p, 31 + 7 * current + ord));
    CU_ASSERT_FATAL(dev_make(&d, &h, ord));
    cudaStream_t stream = stream_on(ord);
    float *hy = malloc((size_t)h.ny * sizeof(float));
    CU_ASSERT_FATAL(stream && hy);
    CU_ASSERT_FATAL(cudaSetDevice(current) == cudaSuccess);
    const convt3d_device dev = {CONVT3D_DEVICE_CUDA, ord};
    const int count = convt3d_cuda_device_count();
    still_current(current, "convt3d_cuda_device_count");
    for (int i = 0; i < convt3d_implementation_count(); i++)
        if (convt3d_implementation_device(i) == CONVT3D_DEVICE_CUDA)
            convt3d_implementation_applies(convt3d_implementation_name(i), &p, dev, NULL);
    still_current(current, "convt3d_implementation_applies");
    const convt3d_device far = {CONVT3D_DEVICE_CUDA, count};
    convt3d_plan *plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &p, far, h.w, h.b), CONVT3D_ERR_NO_DEVICE);
    still_current(current, "plan_create on a GPU that does not exist");
    for (int from_dev = 0; from_dev <= 1; from_dev++) {
        CU_ASSERT_FATAL(plan_on(&plan, &h, ord, NULL, from_dev ? d.w : NULL, from_dev ? d.b : NULL) ==
                        CONVT3D_SUCCESS);
        still_current(current, from_dev ? "plan_create (device weights)" : "plan_create");
        CU_ASSERT(convt3d_execute(plan, h.x, hy) == CONVT3D_SUCCESS &&
                  matches_reference(&h, hy, "host pointers"));
        still_current(current, "execute (host pointers)");
        CU_ASSERT(convt3d_execute(plan, d.x, d.y) == CONVT3D_SUCCESS);
        still_current(current, "execute (device pointers)");
        CU_ASSERT(convt3d_execute_on_stream(plan, d.x, d.y, stream) == CONVT3D_SUCCESS);
        still_current(current, "execute_on_stream");
        CU_ASSERT(convt3d_execute_on_stream(plan, h.x, hy, stream) == CONVT3D_SUCCESS);
        still_current(current, "execute_on_stream (host pointers)");
        CU_ASSERT_EQUAL(convt3d_execute(plan, d.x, hy), CONVT3D_ERR_POINTER_LOCATION);
        still_current(current, "a refused execute");
        CU_ASSERT(sync_on(ord));
        convt3d_plan_destroy(plan);
        still_current(current, "plan_destroy");
    }
    CU_ASSERT(convt3d_forward(&p, dev, h.x, h.w, h.b, hy) == CONVT3D_SUCCESS);
    still_current(current, "convt3d_forward");
    stream_free(ord, stream);
    free(hy);
    dev_free(&d);
    host_free(&h);
}

/* One GPU: cuda:0 current, cuda:0 plans.  Meaningful with a single GPU too:
 * a guard that restored the wrong device, or set one without restoring,
 * would show up as soon as the caller's device is not the library's. */
static void test_current_device_one_gpu(void)
{
    const int prev = current_device();
    exercise_calls(0, 0);
    cudaSetDevice(prev >= 0 ? prev : 0);
}

static void test_current_device_two_gpus(void)
{
    if (!need_gpus(2))
        return;
    const int prev = current_device(), last = convt3d_cuda_device_count() - 1;
    exercise_calls(1, 0);
    exercise_calls(0, 1);
    if (last > 1) {
        exercise_calls(last, 0);
        exercise_calls(0, last);
        exercise_calls(1, last);
    }
    cudaSetDevice(prev >= 0 ? prev : 0);
}

/* ---- two threads, two GPUs ------------------------------------------------ */

enum { SETS = 3, ROUNDS = 40 };

/* One thread's work: ROUNDS rounds, each SETS executes on distinct inputs
 * (its own stream on odd rounds, the default stream on even ones) and one
 * host-pointer execute, with its current device set to the other GPU, so
 * that every call switches and must switch back. */
typedef struct gpu_worker {
    int ord, other;
    const convt3d_plan *plan;
    host_data h[SETS];
    dev_data d[SETS];
    float *expect[SETS]; /* round 0's output of the sequential run */
    float *got, *host_y;
    int record;          /* 1: fill expect from round 0; 0: compare every round */
    int mismatches, failures, moved;
} gpu_worker;

static void worker_round(gpu_worker *w, int round, cudaStream_t stream)
{
    for (int s = 0; s < SETS; s++) {
        if (!copy_on(w->ord, w->d[s].y, w->h[s].poisoned, w->h[s].ny, cudaMemcpyHostToDevice)) {
            w->failures++;
            return;
        }
        const convt3d_status st =
            convt3d_execute_on_stream(w->plan, w->d[s].x, w->d[s].y, round % 2 ? stream : NULL);
        w->failures += st != CONVT3D_SUCCESS;
        w->moved += current_device() != w->other;
    }
    poison(w->host_y, w->h[0].ny);
    w->failures += convt3d_execute(w->plan, w->h[0].x, w->host_y) != CONVT3D_SUCCESS;
    w->moved += current_device() != w->other;
    if (!sync_on(w->ord)) {
        w->failures++;
        return;
    }
    for (int s = 0; s < SETS; s++) {
        const size_t bytes = (size_t)w->h[s].ny * sizeof(float);
        if (!copy_on(w->ord, w->got, w->d[s].y, w->h[s].ny, cudaMemcpyDeviceToHost)) {
            w->failures++;
            continue;
        }
        if (w->record && round == 0)
            memcpy(w->expect[s], w->got, bytes);
        else
            w->mismatches += memcmp(w->got, w->expect[s], bytes) != 0;
    }
    w->mismatches += memcmp(w->host_y, w->expect[0], (size_t)w->h[0].ny * sizeof(float)) != 0;
}

static void *worker_main(void *arg)
{
    gpu_worker *w = arg;
    if (cudaSetDevice(w->other) != cudaSuccess) {
        w->failures++;
        return NULL;
    }
    cudaStream_t stream = stream_on(w->ord);
    if (!stream) {
        w->failures++;
        return NULL;
    }
    for (int r = 0; r < ROUNDS; r++)
        worker_round(w, r, stream);
    stream_free(w->ord, stream);
    return NULL;
}

/* GPU ord's worker: problem `which` (the two GPUs run different problems, so
 * that outputs crossing over would not match), plan from host weights. */
static int worker_make(gpu_worker *w, int ord, int other, int which, convt3d_plan **plan)
{
    memset(w, 0, sizeof *w);
    w->ord = ord;
    w->other = other;
    const convt3d_problem p = multi_problem(which, which % 2 ? CONVT3D_LAYOUT_NDHWC
                                                             : CONVT3D_LAYOUT_NCDHW);
    for (int s = 0; s < SETS; s++) {
        if (!host_make(&w->h[s], &p, 500 + 10 * (uint64_t)ord + s) ||
            !(w->expect[s] = malloc((size_t)w->h[s].ny * sizeof(float))))
            return 0;
        if (s > 0) {
            /* set 0's weights for every set: one plan, SETS inputs */
            memcpy(w->h[s].w, w->h[0].w, (size_t)w->h[0].nw * sizeof(float));
            memcpy(w->h[s].b, w->h[0].b, (size_t)p.out_channels * sizeof(float));
            if (convt3d_reference(&p, w->h[s].x, w->h[s].w, w->h[s].b, w->h[s].ref) !=
                CONVT3D_SUCCESS)
                return 0;
        }
        if (!dev_make(&w->d[s], &w->h[s], ord))
            return 0;
    }
    w->got = malloc((size_t)w->h[0].ny * sizeof(float));
    w->host_y = malloc((size_t)w->h[0].ny * sizeof(float));
    if (!w->got || !w->host_y || plan_on(plan, &w->h[0], ord, NULL, NULL, NULL) != CONVT3D_SUCCESS)
        return 0;
    w->plan = *plan;
    return 1;
}

static void worker_free(gpu_worker *w)
{
    for (int s = 0; s < SETS; s++) {
        dev_free(&w->d[s]);
        host_free(&w->h[s]);
        free(w->expect[s]);
    }
    free(w->got);
    free(w->host_y);
}

static void test_two_threads_two_gpus(void)
{
    if (!need_gpus(2))
        return;
    const int prev = current_device();
    gpu_worker w[2];
    convt3d_plan *plans[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        CU_ASSERT_FATAL(worker_make(&w[i], i, 1 - i, i, &plans[i]));
    /* one after the other: the expected bits, checked against the reference */
    for (int i = 0; i < 2; i++) {
        w[i].record = 1;
        worker_main(&w[i]);
        CU_ASSERT_EQUAL(w[i].failures, 0);
        CU_ASSERT_EQUAL(w[i].mismatches, 0);
        CU_ASSERT_EQUAL(w[i].moved, 0);
        for (int s = 0; s < SETS; s++)
            CU_ASSERT(matches_reference(&w[i].h[s], w[i].expect[s], "sequential run"));
    }
    /* at the same time */
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        w[i].record = 0;
        w[i].mismatches = w[i].failures = w[i].moved = 0;
        CU_ASSERT_FATAL(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        if (w[i].failures || w[i].mismatches || w[i].moved)
            printf("\n  FAILED: the thread on cuda:%d: %d failed calls, %d outputs unlike the "
                   "sequential run, %d calls that moved its current device\n",
                   i, w[i].failures, w[i].mismatches, w[i].moved);
        CU_ASSERT_EQUAL(w[i].failures, 0);
        CU_ASSERT_EQUAL(w[i].mismatches, 0);
        CU_ASSERT_EQUAL(w[i].moved, 0);
    }
    for (int i = 0; i < 2; i++) {
        convt3d_plan_destroy(plans[i]);
        worker_free(&w[i]);
    }
    cudaSetDevice(prev >= 0 ? prev : 0);
}

/* ---- CONVT3D_DEVICE and AUTO -------------------------------------------- */

/* The environment variable as it was, put back by env_restore(). */
typedef struct saved_env {
    char *value; /* NULL: it was unset */
} saved_env;

static saved_env env_save(void)
{
    const char *v = getenv("CONVT3D_DEVICE");
    saved_env s = {v ? strdup(v) : NULL};
    return s;
}

static void env_restore(saved_env *s)
{
    if (s->value)
        setenv("CONVT3D_DEVICE", s->value, 1);
    else
        unsetenv("CONVT3D_DEVICE");
    free(s->value);
    s->value = NULL;
}

/* The device a plan on `asked` lands on with CONVT3D_DEVICE=env (NULL:
 * unset); st the creation's status. */
static convt3d_device planned_device(const host_data *h, const char *env, convt3d_device asked,
                                     const char *impl, convt3d_status *st)
{
    if (env)
        setenv("CONVT3D_DEVICE", env, 1);
    else
        unsetenv("CONVT3D_DEVICE");
    convt3d_plan_options opts;
    convt3d_plan_options_init(&opts);
    opts.implementation = impl;
    convt3d_plan *plan = NULL;
    convt3d_device got = {CONVT3D_DEVICE_AUTO, -1};
    *st = convt3d_plan_create_ex(&plan, &h->p, asked, h->w, h->p.has_bias ? h->b : NULL, &opts);
    if (*st == CONVT3D_SUCCESS) {
        got = convt3d_plan_device(plan);
        float *y = malloc((size_t)h->ny * sizeof(float));
        if (y) {
            poison(y, h->ny);
            CU_ASSERT(convt3d_execute(plan, h->x, y) == CONVT3D_SUCCESS &&
                      matches_reference(h, y, env ? env : "CONVT3D_DEVICE unset"));
        }
        free(y);
        convt3d_plan_destroy(plan);
    }
    return got;
}

static int is_cuda(convt3d_device d, int ord)
{
    return d.kind == CONVT3D_DEVICE_CUDA && d.ordinal == ord;
}

/* What AUTO and CONVT3D_DEVICE do on any machine with a GPU: unset is
 * cuda:0, "cuda" is cuda:0, "cpu" the CPU, an ordinal past the last GPU
 * CONVT3D_ERR_NO_DEVICE; an explicit device ignores the variable. */
static void test_env_device_one_gpu(void)
{
    const convt3d_problem p = make_problem(1, 4, 6, 1, 3, 4, 4, 3, 2, 1, 0, 1, CONVT3D_LAYOUT_NCDHW);
    host_data h;
    CU_ASSERT_FATAL(host_make(&h, &p, 99));
    saved_env saved = env_save();
    const convt3d_device autod = CONVT3D_DEVICE_AUTO_INIT, zero = {CONVT3D_DEVICE_CUDA, 0};
    convt3d_status st;
    CU_ASSERT(is_cuda(planned_device(&h, NULL, autod, NULL, &st), 0));
    CU_ASSERT(is_cuda(planned_device(&h, "cuda", autod, NULL, &st), 0));
    CU_ASSERT(is_cuda(planned_device(&h, "cuda:0", autod, NULL, &st), 0));
    CU_ASSERT_EQUAL(planned_device(&h, "cpu", autod, NULL, &st).kind, CONVT3D_DEVICE_CPU);
    CU_ASSERT(is_cuda(planned_device(&h, "cpu", zero, NULL, &st), 0));
    char past[32];
    snprintf(past, sizeof past, "cuda:%d", convt3d_cuda_device_count());
    planned_device(&h, past, autod, NULL, &st);
    CU_ASSERT_EQUAL(st, CONVT3D_ERR_NO_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), past));
    env_restore(&saved);
    host_free(&h);
}

/* CONVT3D_DEVICE=cuda:1 (and the last GPU) moves AUTO plans there, a forced
 * CUDA implementation's too; cuda:0's pointers are then refused. */
static void test_env_device_two_gpus(void)
{
    if (!need_gpus(2))
        return;
    const int last = convt3d_cuda_device_count() - 1;
    const convt3d_problem p = make_problem(1, 4, 6, 1, 3, 4, 4, 3, 2, 1, 0, 1, CONVT3D_LAYOUT_NCDHW);
    host_data h;
    dev_data d0, d1;
    CU_ASSERT_FATAL(host_make(&h, &p, 98));
    CU_ASSERT_FATAL(dev_make(&d0, &h, 0) && dev_make(&d1, &h, 1));
    saved_env saved = env_save();
    const convt3d_device autod = CONVT3D_DEVICE_AUTO_INIT, zero = {CONVT3D_DEVICE_CUDA, 0};
    convt3d_status st;
    CU_ASSERT(is_cuda(planned_device(&h, "cuda:1", autod, NULL, &st), 1));
    char text[32];
    snprintf(text, sizeof text, "cuda:%d", last);
    CU_ASSERT(is_cuda(planned_device(&h, text, autod, NULL, &st), last));
    CU_ASSERT(is_cuda(planned_device(&h, "cuda:1", zero, NULL, &st), 0));
    const char *impl = NULL;
    for (int i = 0; i < convt3d_implementation_count() && !impl; i++)
        if (convt3d_implementation_device(i) == CONVT3D_DEVICE_CUDA &&
            convt3d_implementation_applies(convt3d_implementation_name(i), &p, zero, NULL) ==
                CONVT3D_SUCCESS)
            impl = convt3d_implementation_name(i);
    CU_ASSERT_FATAL(impl != NULL);
    CU_ASSERT(is_cuda(planned_device(&h, "cuda:1", autod, impl, &st), 1));
    setenv("CONVT3D_DEVICE", "cuda:1", 1);
    CU_ASSERT_EQUAL(convt3d_implementation_applies(impl, &p, autod, NULL), CONVT3D_SUCCESS);
    /* an AUTO plan that went to cuda:1 takes cuda:1's pointers only */
    convt3d_plan *plan = NULL;
    CU_ASSERT_FATAL(convt3d_plan_create(&plan, &p, autod, d1.w, d1.b) == CONVT3D_SUCCESS);
    CU_ASSERT(is_cuda(convt3d_plan_device(plan), 1));
    float *y = malloc((size_t)h.ny * sizeof(float));
    CU_ASSERT_FATAL(y != NULL);
    CU_ASSERT(run_device(&h, plan, &d1, NULL, y) == CONVT3D_SUCCESS &&
              matches_reference(&h, y, "AUTO with CONVT3D_DEVICE=cuda:1"));
    expect_refused(&h, plan, d0.x, d0.y, 0, NULL, "AUTO plan on cuda:1, pointers of cuda:0");
    convt3d_plan_destroy(plan);
    plan = NULL;
    expect_create_refused(&h, 1, d0.w, d0.b, "CONVT3D_DEVICE=cuda:1, weights of cuda:0");
    env_restore(&saved);
    free(y);
    dev_free(&d0);
    dev_free(&d1);
    host_free(&h);
}

static const test_entry multi_gpu_tests[] = {
    {"cuda multi: plans on cuda:1 and the last GPU, vs the reference and cuda:0's bits",
     test_plans_on_other_gpus},
    {"cuda multi: pointers and streams of another GPU refused, nothing written",
     test_wrong_gpu_refused},
    {"cuda multi: current device kept by every call (one GPU)", test_current_device_one_gpu},
    {"cuda multi: current device kept by every call (two GPUs)", test_current_device_two_gpus},
    {"cuda multi: two threads on two GPUs at once, the bits of one after the other",
     test_two_threads_two_gpus},
    {"cuda multi: CONVT3D_DEVICE and AUTO (one GPU)", test_env_device_one_gpu},
    {"cuda multi: CONVT3D_DEVICE=cuda:1 and the last GPU", test_env_device_two_gpus},
    {NULL, NULL}};

void register_multi_gpu_tests(void) { add_suite("gpu-multi", multi_gpu_tests); }

#else /* !CONVT3D_HAVE_CUDA */

void register_multi_gpu_tests(void) {}

#endif
