/* Checked CUDA runtime calls, buffer sets and event timing for the bench. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

#if CONVT3D_HAVE_CUDA
#include <cuda_runtime_api.h>

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(err, err_size, "%s failed: %s (%s)", #call, cudaGetErrorString(e_),       \
                     cudaGetErrorName(e_));                                                    \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

int gpu_device_info(int ordinal, char *name, size_t name_size, size_t *l2_bytes, char *err,
                    size_t err_size)
{
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, ordinal));
    snprintf(name, name_size, "%s", prop.name);
    *l2_bytes = (size_t)prop.l2CacheSize;
    return 0;
}

static int upload(void **dst, const void *src, size_t bytes, char *err, size_t err_size)
{
    CHECK(cudaMalloc(dst, bytes));
    CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return 0;
}

int gpu_bufs_create(gpu_bufs *g, int ordinal, const void *x, int64_t x_elems, const void *w,
                    int64_t w_elems, const void *b, int64_t b_elems, int64_t y_elems,
                    size_t elem_size, char *err, size_t err_size)
{
    const size_t es = elem_size;
    char name[256];
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    g->x_elems = x_elems;
    g->y_elems = y_elems;
    g->w_elems = w_elems;
    g->b_elems = b ? b_elems : 0;
    g->elem_size = es;
    CHECK(cudaSetDevice(ordinal));
    if (gpu_device_info(ordinal, name, sizeof name, &g->l2_bytes, err, err_size))
        return -1;
    size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double set_bytes = (double)(x_elems + y_elems) * (double)es;
    const double need = (double)(w_elems + b_elems) * (double)es + set_bytes;
    if (need > 0.9 * (double)free_b) {
        snprintf(err, err_size, "the problem needs %.0f MB of device memory, %.0f MB are free",
                 need * 1e-6, (double)free_b * 1e-6);
        return -1;
    }
    /* Enough sets that one pass over them overflows the L2 twice, within half
     * the free memory (the baselines' workspaces need the rest). */
    int sets = (int)(2.0 * (double)g->l2_bytes / set_bytes) + 1;
    const int fit = (int)(0.5 * (double)free_b / set_bytes);
    if (sets > fit)
        sets = fit;
    if (sets > GPU_MAX_SETS)
        sets = GPU_MAX_SETS;
    if (sets < 1)
        sets = 1;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    g->stream = s;
    if (upload(&g->w, w, (size_t)w_elems * es, err, err_size) ||
        (b && upload(&g->b, b, (size_t)b_elems * es, err, err_size)))
        goto fail;
    for (int i = 0; i < sets; i++) {
        if (upload(&g->x[i], x, (size_t)x_elems * es, err, err_size))
            goto fail;
        g->sets = i + 1; /* x[i] allocated: destroy frees it */
        cudaError_t e = cudaMalloc(&g->y[i], (size_t)y_elems * es);
        if (e != cudaSuccess) {
            snprintf(err, err_size, "cudaMalloc of output set %d (%.0f MB) failed: %s", i,
                     (double)y_elems * (double)es * 1e-6, cudaGetErrorString(e));
            goto fail;
        }
    }
    return 0;
fail:
    gpu_bufs_destroy(g);
    return -1;
}

void gpu_bufs_destroy(gpu_bufs *g)
{
    if (g->ordinal >= 0)
        cudaSetDevice(g->ordinal);
    for (int i = 0; i < GPU_MAX_SETS; i++) {
        if (g->x[i])
            cudaFree(g->x[i]);
        if (g->y[i])
            cudaFree(g->y[i]);
        g->x[i] = g->y[i] = NULL;
    }
    if (g->w)
        cudaFree(g->w);
    if (g->b)
        cudaFree(g->b);
    if (g->stream)
        cudaStreamDestroy((cudaStream_t)g->stream);
    g->w = g->b = NULL;
    g->stream = NULL;
    g->sets = 0;
}

int gpu_poison(const gpu_bufs *g, void *d, int64_t elems, char *err, size_t err_size)
{
    /* all-ones bytes: a NaN in f32, f16 and bf16 */
    CHECK(cudaMemsetAsync(d, 0xff, (size_t)elems * g->elem_size, (cudaStream_t)g->stream));
    return 0;
}

int gpu_sync(const gpu_bufs *g, char *err, size_t err_size)
{
    CHECK(cudaStreamSynchronize((cudaStream_t)g->stream));
    return 0;
}

int gpu_download(const gpu_bufs *g, void *host, const void *dev, int64_t elems, char *err,
                 size_t err_size)
{
    CHECK(cudaMemcpy(host, dev, (size_t)elems * g->elem_size, cudaMemcpyDeviceToHost));
    return 0;
}

#define BATCH 64

/* Runs [first, first + count) of a timing loop: a spin kernel long enough
 * to cover the host's enqueueing, then each run between its own events. */
static int timed_batch(gpu_enqueue_fn fn, void *ctx, const gpu_bufs *g, int first, int count,
                       cudaEvent_t *e0, cudaEvent_t *e1, double *samples, char *err,
                       size_t err_size)
{
    cudaStream_t s = (cudaStream_t)g->stream;
    /* ~20 us of host work per enqueued run is generous; cap the spin. */
    double spin_us = 200.0 + 30.0 * count;
    if (spin_us > 20000)
        spin_us = 20000;
    if (gpu_spin(s, spin_us)) {
        snprintf(err, err_size, "launching the spin kernel failed: %s",
                 cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    for (int i = 0; i < count; i++) {
        CHECK(cudaEventRecord(e0[i], s));
        if (fn(ctx, (first + i) % g->sets, s, err, err_size))
            return -1;
        CHECK(cudaEventRecord(e1[i], s));
    }
    CHECK(cudaEventSynchronize(e1[count - 1]));
    for (int i = 0; i < count; i++) {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0[i], e1[i]));
        samples[first + i] = ms;
    }
    return 0;
}

int gpu_time(const timing_cfg *cfg, gpu_enqueue_fn fn, void *ctx, const gpu_bufs *g,
             double first_s, timing_stats *out, char *err, size_t err_size)
{
    cudaEvent_t e0[BATCH] = {0}, e1[BATCH] = {0};
    double *samples = NULL;
    int rc = -1;
    out->valid = 0;
    out->warmups = 1;
    CHECK(cudaSetDevice(g->ordinal));
    for (int i = 0; i < BATCH; i++) {
        if (cudaEventCreate(&e0[i]) != cudaSuccess || cudaEventCreate(&e1[i]) != cudaSuccess) {
            snprintf(err, err_size, "cudaEventCreate failed: %s",
                     cudaGetErrorString(cudaGetLastError()));
            goto done;
        }
    }
    /* Warm-up: at least one more run per buffer set (first touch of each),
     * which also gives the estimate the repetition count is based on. */
    double est_ms = first_s * 1e3;
    {
        const int warm = timing_warmups_for(cfg, first_s);
        const int n = warm > g->sets ? warm : g->sets;
        double w[BATCH];
        for (int done_n = 0; done_n < n;) {
            const int count = n - done_n > BATCH ? BATCH : n - done_n;
            if (timed_batch(fn, ctx, g, 0, count, e0, e1, w, err, err_size))
                goto done;
            for (int i = 0; i < count; i++)
                if (w[i] < est_ms)
                    est_ms = w[i];
            done_n += count;
            out->warmups += count;
        }
    }
    {
        const int reps = timing_reps_for(cfg, est_ms * 1e-3);
        samples = malloc((size_t)reps * sizeof *samples);
        if (!samples) {
            snprintf(err, err_size, "out of host memory for %d samples", reps);
            goto done;
        }
        for (int first = 0; first < reps; first += BATCH) {
            const int count = reps - first > BATCH ? BATCH : reps - first;
            if (timed_batch(fn, ctx, g, first, count, e0, e1, samples, err, err_size))
                goto done;
        }
        timing_summarize(samples, reps, out);
    }
    rc = 0;
done:
    for (int i = 0; i < BATCH; i++) {
        if (e0[i])
            cudaEventDestroy(e0[i]);
        if (e1[i])
            cudaEventDestroy(e1[i]);
    }
    free(samples);
    return rc;
}

int gpu_host_cost(gpu_enqueue_fn fn, void *ctx, const gpu_bufs *g, int calls, int rounds,
                  double *us, char *err, size_t err_size)
{
    enum { MAX_ROUNDS = 15 };
    double per_call[MAX_ROUNDS];
    cudaStream_t s = (cudaStream_t)g->stream;
    if (rounds > MAX_ROUNDS)
        rounds = MAX_ROUNDS;
    CHECK(cudaSetDevice(g->ordinal));
    for (int r = 0; r < rounds; r++) {
        /* 50 us a call covers a host far slower than the target */
        double spin_us = 200.0 + 50.0 * calls;
        if (spin_us > 20000)
            spin_us = 20000;
        if (gpu_spin(s, spin_us)) {
            snprintf(err, err_size, "launching the spin kernel failed: %s",
                     cudaGetErrorString(cudaGetLastError()));
            return -1;
        }
        const double t0 = bench_now();
        for (int i = 0; i < calls; i++)
            if (fn(ctx, 0, s, err, err_size))
                return -1;
        per_call[r] = (bench_now() - t0) / calls * 1e6;
        CHECK(cudaStreamSynchronize(s));
    }
    timing_stats st;
    timing_summarize(per_call, rounds, &st);
    *us = st.median_ms; /* the samples were microseconds */
    return 0;
}

#else /* !CONVT3D_HAVE_CUDA */

static int no_cuda(char *err, size_t err_size)
{
    snprintf(err, err_size, "this convt3d-bench was built without CUDA");
    return -1;
}

int gpu_device_info(int ordinal, char *name, size_t name_size, size_t *l2_bytes, char *err,
                    size_t err_size)
{
    (void)ordinal;
    (void)l2_bytes;
    snprintf(name, name_size, "none");
    return no_cuda(err, err_size);
}

int gpu_bufs_create(gpu_bufs *g, int ordinal, const void *x, int64_t x_elems, const void *w,
                    int64_t w_elems, const void *b, int64_t b_elems, int64_t y_elems,
                    size_t elem_size, char *err, size_t err_size)
{
    (void)ordinal, (void)x, (void)x_elems, (void)w, (void)w_elems, (void)b, (void)b_elems,
        (void)y_elems, (void)elem_size;
    memset(g, 0, sizeof *g);
    return no_cuda(err, err_size);
}

void gpu_bufs_destroy(gpu_bufs *g) { (void)g; }

int gpu_poison(const gpu_bufs *g, void *d, int64_t elems, char *err, size_t err_size)
{
    (void)g, (void)d, (void)elems;
    return no_cuda(err, err_size);
}

int gpu_sync(const gpu_bufs *g, char *err, size_t err_size)
{
    (void)g;
    return no_cuda(err, err_size);
}

int gpu_download(const gpu_bufs *g, void *host, const void *dev, int64_t elems, char *err,
                 size_t err_size)
{
    (void)g, (void)host, (void)dev, (void)elems;
    return no_cuda(err, err_size);
}

int gpu_time(const timing_cfg *cfg, gpu_enqueue_fn fn, void *ctx, const gpu_bufs *g,
             double first_s, timing_stats *out, char *err, size_t err_size)
{
    (void)cfg, (void)fn, (void)ctx, (void)g, (void)first_s;
    out->valid = 0;
    return no_cuda(err, err_size);
}

int gpu_host_cost(gpu_enqueue_fn fn, void *ctx, const gpu_bufs *g, int calls, int rounds,
                  double *us, char *err, size_t err_size)
{
    (void)fn, (void)ctx, (void)g, (void)calls, (void)rounds;
    *us = 0;
    return no_cuda(err, err_size);
}

#endif
