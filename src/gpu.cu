/* CUDA backend: the registry walk (which implementation of
 * src/cuda/registry.cu runs a problem), the device limits it plans for,
 * plan state, weight repacking on the device, streams, host pointer
 * staging, and CUDA error mapping.  The kernel families live in
 * src/cuda/<family>/, each with its planner and launch.
 *
 * Every CUDA call is checked; a failure comes back as a convt3d_status with
 * CUDA's own words in convt3d_last_error(), nothing is written to y, the plan
 * stays destroyable and the caller's current device is restored.  The state
 * is immutable after create(): execute() may run concurrently on one plan. */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <new>

#include "cuda/common/env.h"
#include "cuda/common/pack.h"
#include "cuda/registry.h"
#include "cuda_walk.h"
#include "internal.h"

struct convt3d_backend_state {
    convt3d_shape shape;
    int ordinal;
    ct3d::cuda_plan plan;
    float *weight; /* device, repacked: [g][ob][ic][tap][oc] (cuda/common/types.h); f32, or
                      16-bit for cuda_impl.half_weights entries */
    float *bias;   /* device, in the problem's type (f32 kernels read floats), NULL without bias */
    void *extra;   /* device, the implementation's extras (cuda_impl.extras) or NULL */
};

/* Maps a CUDA error to a status with the call and CUDA's own words, and
 * clears it if it is not sticky. */
static convt3d_status cuda_fail(cudaError_t err, const char *what)
{
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "%s: %s (%s)", what,
                            cudaGetErrorString(err), cudaGetErrorName(err));
    return convt3d_fail(CONVT3D_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(err),
                        cudaGetErrorName(err));
}

#define CUDA_TRY(call, what)                                                                     \
    do {                                                                                         \
        cudaError_t err_ = (call);                                                               \
        if (err_ != cudaSuccess) {                                                               \
            st = cuda_fail(err_, what);                                                          \
            goto out;                                                                            \
        }                                                                                        \
    } while (0)

/* Makes ordinal current for the scope and restores the caller's device. */
struct device_guard {
    int previous;
    cudaError_t err;
    explicit device_guard(int ordinal) : previous(-1), err(cudaSuccess)
    {
        if (cudaGetDevice(&previous) != cudaSuccess) {
            cudaGetLastError();
            previous = -1;
        }
        if (previous != ordinal)
            err = cudaSetDevice(ordinal);
    }
    ~device_guard()
    {
        int now = -1;
        if (previous >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous)
            cudaSetDevice(previous);
    }
    device_guard(const device_guard &) = delete;
    device_guard &operator=(const device_guard &) = delete;
};

/* ---- device limits, queried once per ordinal ------------------------------ */

static convt3d_status query_limits(int ordinal, ct3d::device_limits *lim)
{
    convt3d_status st = CONVT3D_SUCCESS;
    CUDA_TRY(cudaDeviceGetAttribute(&lim->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                    ordinal),
             "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
    CUDA_TRY(cudaDeviceGetAttribute(&lim->smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                    ordinal),
             "cudaDeviceGetAttribute(MaxSharedMemoryPerMultiprocessor)");
    CUDA_TRY(cudaDeviceGetAttribute(&lim->num_sms, cudaDevAttrMultiProcessorCount, ordinal),
             "cudaDeviceGetAttribute(MultiProcessorCount)");
out:
    return st;
}

/* Ordinals past this are queried every time. */
enum { kCachedOrdinals = 64 };
static ct3d::device_limits limits_cache[kCachedOrdinals];
static int limits_ready[kCachedOrdinals]; /* 1 once limits_cache[i] holds the values */
static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER;

/* The limits of device ordinal (thread-safe; no context, no allocation). */
static convt3d_status device_limits_of(int ordinal, ct3d::device_limits *lim)
{
    if (ordinal < 0 || ordinal >= kCachedOrdinals)
        return query_limits(ordinal, lim);
    if (!__atomic_load_n(&limits_ready[ordinal], __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&limits_lock);
        convt3d_status st = CONVT3D_SUCCESS;
        if (!limits_ready[ordinal] &&
            (st = query_limits(ordinal, &limits_cache[ordinal])) == CONVT3D_SUCCESS)
            __atomic_store_n(&limits_ready[ordinal], 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&limits_lock);
        if (st != CONVT3D_SUCCESS)
            return st;
    }
    *lim = limits_cache[ordinal];
    return CONVT3D_SUCCESS;
}

/* ---- the registry walk ------------------------------------------------- */

namespace ct3d {

static const cuda_impl *impl_named(const char *name)
{
    for (int i = 0; i < cuda_impl_count(); i++)
        if (strcmp(cuda_impl_at(i)->name, name) == 0)
            return cuda_impl_at(i);
    return nullptr;
}

static convt3d_status plan_has_blocks(const cuda_plan *k)
{
    if (k->blocks < 1)
        return convt3d_fail(CONVT3D_ERR_INTERNAL, "CUDA plan for %s has no blocks",
                            k->impl->name);
    return CONVT3D_SUCCESS;
}

/* Entry e, forced: what `what` (the name, or the variable that named it)
 * asked for. */
static convt3d_status choose_forced(const cuda_impl &e, const convt3d_shape *s,
                                    const device_limits &lim, const cuda_overrides &ov,
                                    const char *what, cuda_plan *k)
{
    char why[256] = "";
    if (!cuda_impl_plans(e, s, lim, ov, PLAN_FORCED, k, why, sizeof why))
        return convt3d_fail(CONVT3D_ERR_NOT_APPLICABLE, "%s does not apply: %s", what, why);
    return plan_has_blocks(k);
}

/* Whether entry e is taken in the walk (automatic: not passed over either);
 * prints why not with verbose. */
static bool walk_takes(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       const cuda_overrides &ov, bool automatic, int verbose, cuda_plan *k)
{
    char why[256] = "";
    if (!cuda_entry_applicable(e, s, lim, why, sizeof why)) {
        if (verbose)
            fprintf(stderr, "convt3d: cuda: %s does not apply: %s\n", e.name, why);
        return false;
    }
    if (automatic && e.passed_over && e.passed_over(e, s, lim, ov, why, sizeof why)) {
        if (verbose)
            fprintf(stderr, "convt3d: cuda: %s passed over: %s\n", e.name, why);
        return false;
    }
    plan_init(k, e);
    if (!e.plan(e, s, lim, ov, automatic ? PLAN_AUTOMATIC : PLAN_FORCED, k, why, sizeof why)) {
        if (verbose)
            fprintf(stderr, "convt3d: cuda: %s does not apply: %s\n", e.name, why);
        return false;
    }
    return true;
}

/* The automatic walk from table index first on: the entry it takes (its
 * plan in *k), or NULL. */
static const cuda_impl *walk_from(int first, const convt3d_shape *s, const device_limits &lim,
                                  const cuda_overrides &ov, int verbose, cuda_plan *k)
{
    for (int i = first; i < cuda_impl_count(); i++)
        if (walk_takes(*cuda_impl_at(i), s, lim, ov, true, verbose, k))
            return cuda_impl_at(i);
    return nullptr;
}

const cuda_impl *cuda_walk_after(const cuda_impl &e, const convt3d_shape *s,
                                 const device_limits &lim, const cuda_overrides &ov)
{
    int at = 0;
    while (at < cuda_impl_count() && cuda_impl_at(at) != &e)
        at++;
    cuda_plan *k = new (std::nothrow) cuda_plan; /* 4 KB of parameters */
    if (!k)
        return nullptr;
    const cuda_impl *taken = walk_from(at + 1, s, lim, ov, 0, k);
    delete k;
    return taken;
}

/* CONVT3D_CUDA_KERNEL=WORD (env.h): the first entry whose name contains
 * WORD that applies and is not passed over, else the first that applies. */
static convt3d_status choose_by_word(const convt3d_shape *s, const device_limits &lim,
                                     const cuda_overrides &ov, int verbose, cuda_plan *k)
{
    int matches = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < cuda_impl_count(); i++) {
            const cuda_impl &e = *cuda_impl_at(i);
            if (!strstr(e.name, ov.kernel))
                continue;
            matches++;
            if (pass == 0) {
                char why[256] = "";
                if (!cuda_entry_applicable(e, s, lim, why, sizeof why) ||
                    (e.passed_over && e.passed_over(e, s, lim, ov, why, sizeof why)))
                    continue;
                plan_init(k, e);
                if (e.plan(e, s, lim, ov, PLAN_FORCED, k, why, sizeof why))
                    return plan_has_blocks(k);
            } else if (walk_takes(e, s, lim, ov, false, verbose, k)) {
                return plan_has_blocks(k);
            }
        }
    if (!matches)
        return convt3d_fail(CONVT3D_ERR_UNKNOWN_IMPLEMENTATION,
                            "CONVT3D_CUDA_KERNEL=%s: no CUDA implementation's name contains it",
                            ov.kernel);
    return convt3d_fail(CONVT3D_ERR_NOT_APPLICABLE,
                        "CONVT3D_CUDA_KERNEL=%s does not apply: no CUDA implementation whose "
                        "name contains it applies (CONVT3D_VERBOSE=1 says why)",
                        ov.kernel);
}

convt3d_status cuda_choose(const convt3d_shape *s, const device_limits &lim,
                           const cuda_overrides &ov, const char *force, int verbose,
                           cuda_plan *k)
{
    if (force) {
        const cuda_impl *e = impl_named(force);
        if (!e)
            return convt3d_fail(CONVT3D_ERR_UNKNOWN_IMPLEMENTATION,
                                "no CUDA implementation is named %s", force);
        return choose_forced(*e, s, lim, ov, force, k);
    }
    if (ov.kernel) {
        const cuda_impl *e = impl_named(ov.kernel);
        if (!e)
            return choose_by_word(s, lim, ov, verbose, k);
        char what[160];
        snprintf(what, sizeof what, "CONVT3D_CUDA_KERNEL=%s", ov.kernel);
        return choose_forced(*e, s, lim, ov, what, k);
    }
    if (walk_from(0, s, lim, ov, verbose, k))
        return plan_has_blocks(k);
    return convt3d_fail(CONVT3D_ERR_INTERNAL, "no CUDA implementation applies");
}

} // namespace ct3d

const char *convt3d_cuda_walk_choice(const convt3d_shape *shape, int smem_optin, int smem_sm,
                                     int num_sms)
{
    const ct3d::device_limits lim = {smem_optin, smem_sm, num_sms};
    const ct3d::cuda_overrides none = {nullptr, nullptr, nullptr, nullptr, nullptr};
    ct3d::cuda_plan *k = new (std::nothrow) ct3d::cuda_plan; /* 4 KB of parameters */
    if (!k)
        return nullptr;
    const char *name = ct3d::cuda_choose(shape, lim, none, nullptr, 0, k) == CONVT3D_SUCCESS
                           ? k->impl->name
                           : nullptr;
    delete k;
    return name;
}

const char *convt3d_cuda_walk_describe(const convt3d_shape *shape, int smem_optin, int smem_sm,
                                       int num_sms, char *buf, size_t size)
{
    const ct3d::device_limits lim = {smem_optin, smem_sm, num_sms};
    const ct3d::cuda_overrides none = {nullptr, nullptr, nullptr, nullptr, nullptr};
    if (size > 0)
        buf[0] = '\0';
    ct3d::cuda_plan *k = new (std::nothrow) ct3d::cuda_plan;
    if (!k)
        return nullptr;
    const char *name = nullptr;
    if (ct3d::cuda_choose(shape, lim, none, nullptr, 0, k) == CONVT3D_SUCCESS) {
        name = k->impl->name;
        k->impl->describe(*k, buf, size);
    }
    delete k;
    return name;
}

/* f16 or bf16 weights (host or device pointer) widened into a new host f32
 * array (*out, freed by the caller): the kernels read packed f32 weights
 * whatever the data type, and every half value is exact in f32. */
static convt3d_status widen_weights(const convt3d_shape *sh, const void *weight, int on_device,
                                    float **out)
{
    convt3d_status st = CONVT3D_SUCCESS;
    const size_t n = (size_t)sh->w_elems, bytes = n * convt3d_dtype_size(sh->w_type);
    void *host = NULL;
    const void *src = weight;
    float *wide = (float *)malloc(n * sizeof(float));
    if (!wide)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "host copy of the weights in f32");
    if (on_device) {
        if (!(host = malloc(bytes))) {
            free(wide);
            return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "host copy of the weights");
        }
        CUDA_TRY(cudaMemcpy(host, weight, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(weights)");
        src = host;
    }
    convt3d_convert(src, sh->w_type, wide, CONVT3D_F32, (int64_t)n);
out:
    free(host);
    if (st == CONVT3D_SUCCESS)
        *out = wide;
    else
        free(wide);
    return st;
}

/* Repacks the weights (host or device pointer, f32) into s->weight, on the device. */
static convt3d_status pack_f32_weights(convt3d_backend_state *s, const float *weight,
                                       int on_device)
{
    convt3d_status st = CONVT3D_SUCCESS;
    const ct3d::cuda_plan &k = s->plan;
    float *raw = NULL;
    unsigned short *narrow = NULL;
    const float *src = weight;
    int64_t total;
    if (__builtin_mul_overflow(s->shape.groups * s->shape.cig * s->shape.k_volume,
                               (int64_t)k.nocb * k.ocb, &total) ||
        total > INT64_MAX / (int64_t)sizeof(float))
        return convt3d_fail(CONVT3D_ERR_OVERFLOW, "the repacked weight size overflows int64");
    CUDA_TRY(cudaMalloc(&s->weight, (size_t)total * sizeof(float)), "cudaMalloc(packed weights)");
    if (!on_device) {
        const size_t bytes = (size_t)s->shape.w_elems * sizeof(float);
        CUDA_TRY(cudaMalloc(&raw, bytes), "cudaMalloc(weights staging)");
        CUDA_TRY(cudaMemcpy(raw, weight, bytes, cudaMemcpyHostToDevice), "cudaMemcpy(weights)");
        src = raw;
    }
    CUDA_TRY(ct3d::launch_pack(&s->shape, k.ocb, k.nocb, src, s->weight, total, 0),
             "launching the weight repack");
    if (k.impl->tf32_weights)
        CUDA_TRY(ct3d::launch_round_tf32(s->weight, total, 0), "launching the TF32 rounding");
    if (k.impl->half_weights) {
        CUDA_TRY(cudaMalloc(&narrow, (size_t)total * sizeof(unsigned short)),
                 "cudaMalloc(16-bit packed weights)");
        CUDA_TRY(ct3d::launch_narrow(s->weight, narrow, total, s->shape.w_type, 0),
                 "launching the weight narrowing");
    }
    CUDA_TRY(cudaStreamSynchronize(0), "cudaStreamSynchronize(weight repack)");
    if (narrow) { /* the kernel reads 16-bit weights: the f32 ones go */
        cudaFree(s->weight);
        s->weight = (float *)narrow;
        narrow = NULL;
    }
out:
    cudaFree(narrow);
    cudaFree(raw);
    return st;
}

static convt3d_status pack_weights(convt3d_backend_state *s, const void *weight, int on_device)
{
    if (s->shape.w_type == CONVT3D_F32)
        return pack_f32_weights(s, (const float *)weight, on_device);
    float *wide = NULL;
    convt3d_status st = widen_weights(&s->shape, weight, on_device, &wide);
    if (st == CONVT3D_SUCCESS)
        st = pack_f32_weights(s, wide, 0);
    free(wide);
    return st;
}

static convt3d_status gpu_create(const convt3d_shape *shape, int ordinal,
                                 const convt3d_request *req, const void *weight_v,
                                 const void *bias_v, int weights_on_device,
                                 convt3d_backend_state **state, const char **kernel_name)
{
    device_guard guard(ordinal);
    if (guard.err != cudaSuccess)
        return cuda_fail(guard.err, "cudaSetDevice");
    convt3d_status st = CONVT3D_SUCCESS;
    ct3d::device_limits lim;
    const ct3d::cuda_impl *impl;
    convt3d_backend_state *s = new (std::nothrow) convt3d_backend_state();
    if (!s)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CUDA plan state");
    s->shape = *shape;
    s->ordinal = ordinal;
    if ((st = device_limits_of(ordinal, &lim)) != CONVT3D_SUCCESS)
        goto out;
    if ((st = ct3d::cuda_choose(shape, lim, ct3d::overrides_from_env(), req->force, req->verbose,
                                &s->plan)) != CONVT3D_SUCCESS)
        goto out;
    impl = s->plan.impl;
    if ((st = pack_weights(s, weight_v, weights_on_device)) != CONVT3D_SUCCESS)
        goto out;
    if (shape->has_bias) { /* in its own type: the kernels widen it on load */
        const cudaMemcpyKind kind =
            weights_on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
        const size_t bytes = (size_t)shape->cout * convt3d_dtype_size(shape->bias_type);
        CUDA_TRY(cudaMalloc(&s->bias, bytes), "cudaMalloc(bias)");
        CUDA_TRY(cudaMemcpy(s->bias, bias_v, bytes, kind), "cudaMemcpy(bias)");
    }
    if (impl->extras)
        CUDA_TRY(impl->extras(s->plan, shape, &s->extra), "the implementation's device extras");
    if (impl->prepare)
        CUDA_TRY(impl->prepare(s->plan, lim.smem_optin), "cudaFuncSetAttribute(shared memory)");
    if (req->verbose) {
        char desc[512];
        impl->describe(s->plan, desc, sizeof desc);
        fprintf(stderr, "convt3d: cuda:%d %s\n", ordinal, desc);
    }
    *state = s;
    *kernel_name = impl->name;
    return CONVT3D_SUCCESS;
out:
    cudaFree(s->weight);
    cudaFree(s->bias);
    cudaFree(s->extra);
    delete s;
    return st;
}

/* Enqueues the plan's kernel on stream (x, y device pointers). */
static convt3d_status launch(const convt3d_backend_state *s, const float *x, float *y,
                             cudaStream_t stream)
{
    const ct3d::cuda_plan &k = s->plan;
    cudaGetLastError(); /* a stale, non-sticky error is not this launch's */
    const ct3d::cuda_args args = {x, s->weight, s->bias, y, s->extra};
    const cudaError_t err = k.impl->launch(k, &s->shape, args, stream);
    if (err != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "launching %s", k.impl->name);
        return cuda_fail(err, what);
    }
    return CONVT3D_SUCCESS;
}

/* The handles that name a default stream rather than a stream object: they
 * mean the current device's, and the plan's device is current during the
 * call, so they always belong to the plan. */
static bool names_default_stream(cudaStream_t stream)
{
    return stream == 0 || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

/* A stream created on another device would fail the kernel launch after the
 * staging copies were already queued on it; refuse it up front, with the
 * two ordinals, as a pointer on the wrong device is refused.  One driver
 * query per call (cudaStreamGetDevice, CUDA 12.8+; skipped while the
 * stream captures a graph); a stream cannot be
 * cached because a handle may be destroyed and its value reused.  Older
 * runtimes lack the query: there the launch reports the mismatch
 * (CONVT3D_ERR_CUDA, invalid resource handle), still before y is written. */
static convt3d_status check_stream_device(cudaStream_t stream, int ordinal)
{
#if CUDART_VERSION >= 12080
    if (names_default_stream(stream))
        return CONVT3D_SUCCESS;
    /* cudaStreamGetDevice is not allowed on a capturing stream, and in the
     * global capture mode the refused call would invalidate the capture:
     * there the launch itself reports a stream of another device. */
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) == cudaSuccess &&
        capture != cudaStreamCaptureStatusNone)
        return CONVT3D_SUCCESS;
    cudaGetLastError();
    int home = -1;
    const cudaError_t err = cudaStreamGetDevice(stream, &home);
    if (err == cudaErrorNotSupported || err == cudaErrorCallRequiresNewerDriver) {
        cudaGetLastError(); /* a driver without the query: the launch decides */
        return CONVT3D_SUCCESS;
    }
    if (err != cudaSuccess)
        return cuda_fail(err, "cudaStreamGetDevice(the caller's stream)");
    if (home != ordinal)
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                            "the stream belongs to cuda:%d but the plan runs on cuda:%d: pass a "
                            "stream created on cuda:%d (or NULL, cudaStreamLegacy, "
                            "cudaStreamPerThread)",
                            home, ordinal, ordinal);
#else
    (void)stream;
    (void)ordinal;
#endif
    return CONVT3D_SUCCESS;
}

static convt3d_status gpu_execute(const convt3d_backend_state *s, const void *x_v, void *y_v,
                                  void *stream_ptr, int on_device)
{
    const float *x = (const float *)x_v;
    float *y = (float *)y_v;
    cudaStream_t stream = (cudaStream_t)stream_ptr;
    convt3d_status st = check_stream_device(stream, s->ordinal);
    if (st != CONVT3D_SUCCESS)
        return st;
    device_guard guard(s->ordinal);
    if (guard.err != cudaSuccess)
        return cuda_fail(guard.err, "cudaSetDevice");
    if (on_device) {
        /* In place on the caller's stream; synchronise only on the default one. */
        if ((st = launch(s, x, y, stream)) != CONVT3D_SUCCESS)
            return st;
        if (!stream_ptr) {
            const cudaError_t err = cudaStreamSynchronize(stream);
            if (err != cudaSuccess)
                return cuda_fail(err, "cudaStreamSynchronize(after the kernel)");
        }
        return CONVT3D_SUCCESS;
    }
    /* Host pointers: stage through device buffers of this call only (so
     * concurrent calls share nothing); y is written only after success. */
    float *dx = NULL, *dy = NULL;
    const size_t xb = (size_t)s->shape.x_elems * convt3d_dtype_size(s->shape.x_type);
    const size_t yb = (size_t)s->shape.y_elems * convt3d_dtype_size(s->shape.y_type);
    CUDA_TRY(cudaMalloc(&dx, xb), "cudaMalloc(staged x)");
    CUDA_TRY(cudaMalloc(&dy, yb), "cudaMalloc(staged y)");
    CUDA_TRY(cudaMemcpyAsync(dx, x, xb, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync(x)");
    if ((st = launch(s, dx, dy, stream)) != CONVT3D_SUCCESS)
        goto out;
    CUDA_TRY(cudaStreamSynchronize(stream), "cudaStreamSynchronize(after the kernel)");
    CUDA_TRY(cudaMemcpyAsync(y, dy, yb, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(y)");
    CUDA_TRY(cudaStreamSynchronize(stream), "cudaStreamSynchronize(after copying y)");
out:
    cudaFree(dx);
    cudaFree(dy);
    return st;
}

static void gpu_destroy(convt3d_backend_state *s)
{
    if (!s)
        return;
    device_guard guard(s->ordinal);
    cudaFree(s->weight);
    cudaFree(s->bias);
    cudaFree(s->extra);
    delete s;
}

/* ---- the registry, as the dispatcher sees it --------------------------- */

static int gpu_impl_count(void) { return ct3d::cuda_impl_count(); }

static const char *gpu_impl_name(int index)
{
    const ct3d::cuda_impl *e = ct3d::cuda_impl_at(index);
    return e ? e->name : NULL;
}

/* Exactly what forcing the entry does in create, short of device memory:
 * the same limits, overrides and planning. */
static convt3d_status gpu_impl_applies(int index, const convt3d_shape *shape, int ordinal,
                                       const convt3d_request *req, char *why, size_t why_size)
{
    (void)req;
    const ct3d::cuda_impl *e = ct3d::cuda_impl_at(index);
    if (!e)
        return convt3d_fail(CONVT3D_ERR_INTERNAL, "no CUDA implementation %d", index);
    ct3d::device_limits lim;
    const convt3d_status st = device_limits_of(ordinal, &lim);
    if (st != CONVT3D_SUCCESS)
        return st;
    ct3d::cuda_plan *k = new (std::nothrow) ct3d::cuda_plan;
    if (!k)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CUDA plan");
    const bool plans = ct3d::cuda_impl_plans(*e, shape, lim, ct3d::overrides_from_env(),
                                             ct3d::PLAN_FORCED, k, why, why_size);
    const bool blocks = plans && k->blocks >= 1;
    delete k;
    if (!plans)
        return CONVT3D_ERR_NOT_APPLICABLE;
    if (!blocks) {
        snprintf(why, why_size, "the plan has no blocks");
        return CONVT3D_ERR_NOT_APPLICABLE;
    }
    return CONVT3D_SUCCESS;
}

extern "C" const convt3d_backend convt3d_backend_cuda = {
    "cuda",     CONVT3D_DEVICE_CUDA, gpu_impl_count, gpu_impl_name, gpu_impl_applies,
    gpu_create, gpu_execute,         gpu_destroy};
