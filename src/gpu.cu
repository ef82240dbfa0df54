/* CUDA backend: plan state, weight repacking on the device, streams, host
 * pointer staging, and CUDA error mapping.  Which kernel runs is decided in
 * gpu_plan.cu; the kernels are in gpu_*_kernel.h, launched by gpu_launch.cu.
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

#include <new>

#include "gpu_launch.h"
#include "gpu_plan.h"
#include "internal.h"

struct convt3d_backend_state {
    convt3d_shape shape;
    int ordinal;
    ct3d::kernel_plan plan;
    float *weight;    /* device, repacked: [g][ob][ic][tap][oc] (gpu_kernels.h) */
    float *bias;      /* device, NULL without bias */
    int *phase_table; /* device, for the depthwise and generic kernels */
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

static int verbose(void)
{
    const char *v = getenv("CONVT3D_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

static convt3d_status device_limits_of(int ordinal, ct3d::device_limits *lim)
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

/* Repacks the weights (host or device pointer) into s->weight, on the device. */
static convt3d_status pack_weights(convt3d_backend_state *s, const float *weight, int on_device)
{
    convt3d_status st = CONVT3D_SUCCESS;
    const ct3d::kernel_plan &k = s->plan;
    float *raw = NULL;
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
    CUDA_TRY(ct3d::launch_pack(k.simple, src, s->weight, total, 0), "launching the weight repack");
    CUDA_TRY(cudaStreamSynchronize(0), "cudaStreamSynchronize(weight repack)");
out:
    cudaFree(raw);
    return st;
}

static convt3d_status gpu_create(const convt3d_shape *shape, int ordinal,
                                 const convt3d_request *req, const void *weight_v,
                                 const void *bias_v, int weights_on_device,
                                 convt3d_backend_state **state, const char **kernel_name)
{
    const float *weight = (const float *)weight_v;
    const float *bias = (const float *)bias_v;
    const char *force = req->force ? req->force : getenv("CONVT3D_CUDA_KERNEL");
    device_guard guard(ordinal);
    if (guard.err != cudaSuccess)
        return cuda_fail(guard.err, "cudaSetDevice");
    convt3d_status st = CONVT3D_SUCCESS;
    ct3d::device_limits lim;
    int *table = NULL;
    convt3d_backend_state *s = new (std::nothrow) convt3d_backend_state();
    if (!s)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CUDA plan state");
    s->shape = *shape;
    s->ordinal = ordinal;
    if ((st = device_limits_of(ordinal, &lim)) != CONVT3D_SUCCESS)
        goto out;
    if ((st = ct3d::plan_kernel(shape, lim, force, getenv("CONVT3D_CUDA_TILE"), &s->plan)) !=
        CONVT3D_SUCCESS)
        goto out;
    if (req->force && strcmp(req->force, s->plan.name) != 0) {
        st = convt3d_fail(CONVT3D_ERR_NOT_APPLICABLE, "%s does not apply: %s", req->force,
                          s->plan.why[0] ? s->plan.why : "the CUDA planner chose another kernel");
        goto out;
    }
    if ((st = pack_weights(s, weight, weights_on_device)) != CONVT3D_SUCCESS)
        goto out;
    if (shape->has_bias) {
        const cudaMemcpyKind kind =
            weights_on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
        CUDA_TRY(cudaMalloc(&s->bias, (size_t)shape->cout * sizeof(float)), "cudaMalloc(bias)");
        CUDA_TRY(cudaMemcpy(s->bias, bias, (size_t)shape->cout * sizeof(float), kind),
                 "cudaMemcpy(bias)");
    }
    {
        const long long n = ct3d::phase_table_ints(shape);
        table = (int *)malloc((size_t)n * sizeof(int));
        if (!table) {
            st = convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "phase table (%lld ints)", n);
            goto out;
        }
        ct3d::phase_table_fill(shape, table, s->plan.simple.phase_off, s->plan.simple.phase_by_o);
        CUDA_TRY(cudaMalloc(&s->phase_table, (size_t)n * sizeof(int)), "cudaMalloc(phase table)");
        CUDA_TRY(cudaMemcpy(s->phase_table, table, (size_t)n * sizeof(int),
                            cudaMemcpyHostToDevice),
                 "cudaMemcpy(phase table)");
    }
    CUDA_TRY(ct3d::prepare_kernel(s->plan, lim.smem_optin), "cudaFuncSetAttribute(phase kernel)");
    if (verbose()) {
        char desc[512];
        ct3d::plan_describe(s->plan, desc, sizeof desc);
        fprintf(stderr, "convt3d: cuda:%d %s\n", ordinal, desc);
    }
    free(table);
    *state = s;
    *kernel_name = s->plan.name;
    return CONVT3D_SUCCESS;
out:
    free(table);
    cudaFree(s->weight);
    cudaFree(s->bias);
    cudaFree(s->phase_table);
    delete s;
    return st;
}


/* Enqueues the plan's kernel on stream (x, y device pointers). */
static convt3d_status launch(const convt3d_backend_state *s, const float *x, float *y,
                             cudaStream_t stream)
{
    const ct3d::kernel_plan &k = s->plan;
    const convt3d_shape &sh = s->shape;
    const int ndhwc = sh.layout == CONVT3D_LAYOUT_NDHWC;
    cudaGetLastError(); /* a stale, non-sticky error is not this launch's */
    cudaError_t err;
    if (k.kind == ct3d::KERNEL_PHASE) {
        ct3d::phase_params p = k.phase;
        p.x = x;
        p.w = s->weight;
        p.bias = s->bias;
        p.y = y;
        p.vec_store = ct3d::aligned16(y) && (ndhwc ? sh.cout % 4 == 0 && sh.cog % 4 == 0
                                             : sh.out[2] % 4 == 0);
        err = ct3d::launch_phase(k, p, stream);
    } else if (k.kind == ct3d::KERNEL_IGEMM) {
        ct3d::igemm_params p = k.igemm;
        p.x = x;
        p.w = s->weight;
        p.bias = s->bias;
        p.y = y;
        err = ct3d::launch_igemm(k.ig, p, k.smem_bytes, stream);
    } else if (k.kind == ct3d::KERNEL_DWTILE) {
        err = ct3d::launch_dwtile(k, k.dw, x, s->weight, s->bias, y, stream);
    } else {
        ct3d::simple_params p = k.simple;
        p.x = x;
        p.w = s->weight;
        p.bias = s->bias;
        p.y = y;
        p.phase = s->phase_table;
        p.vec_store = ct3d::aligned16(y) && (ndhwc ? sh.cout % 4 == 0 : sh.out[2] % 4 == 0);
        err = k.kind == ct3d::KERNEL_DEPTHWISE ? ct3d::launch_depthwise(k, p, stream)
                                               : ct3d::launch_generic(k, p, stream);
    }
    if (err != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "launching %s", k.name);
        return cuda_fail(err, what);
    }
    return CONVT3D_SUCCESS;
}

static convt3d_status gpu_execute(const convt3d_backend_state *s, const void *x_v, void *y_v,
                                  void *stream_ptr, int on_device)
{
    const float *x = (const float *)x_v;
    float *y = (float *)y_v;
    device_guard guard(s->ordinal);
    if (guard.err != cudaSuccess)
        return cuda_fail(guard.err, "cudaSetDevice");
    cudaStream_t stream = (cudaStream_t)stream_ptr;
    convt3d_status st = CONVT3D_SUCCESS;
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
    const size_t xb = (size_t)s->shape.x_elems * sizeof(float);
    const size_t yb = (size_t)s->shape.y_elems * sizeof(float);
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
    cudaFree(s->phase_table);
    delete s;
}

/* ---- registry (transitional) ------------------------------------------- */

static const char *const impl_names[] = {
    "cuda/f32_dwtile_run8",         "cuda/f32_dwtile_run8_slotwise", "cuda/f32_igemm_8x8",
    "cuda/f32_phase_grouped_2x4x8", "cuda/f32_phase_grouped_2x4x4",  "cuda/f32_phase_grouped_1x8x8",
    "cuda/f32_phase_grouped_1x8x4", "cuda/f32_phase_tiled_2x4x8",    "cuda/f32_phase_tiled_2x4x4",
    "cuda/f32_phase_tiled_1x8x8",   "cuda/f32_phase_tiled_1x8x4",    "cuda/f32_depthwise_phase_4",
    "cuda/f32_direct_generic",
};
static const int n_impls = (int)(sizeof impl_names / sizeof impl_names[0]);

static int gpu_impl_count(void) { return n_impls; }

static const char *gpu_impl_name(int index)
{
    return index >= 0 && index < n_impls ? impl_names[index] : NULL;
}

static convt3d_status gpu_impl_applies(int index, const convt3d_shape *shape, int ordinal,
                                       const convt3d_request *req, char *why, size_t why_size)
{
    (void)index;
    (void)shape;
    (void)ordinal;
    (void)req;
    (void)why;
    (void)why_size;
    return CONVT3D_SUCCESS;
}

extern "C" const convt3d_backend convt3d_backend_cuda = {
    "cuda",     CONVT3D_DEVICE_CUDA, gpu_impl_count, gpu_impl_name, gpu_impl_applies,
    gpu_create, gpu_execute,         gpu_destroy};
