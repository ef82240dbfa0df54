/* CUDA backend (placeholder until the phase-split float4 kernels land): one
 * thread per output element, correct for the whole contract but not fast. */
#include <cuda_runtime.h>

#include <new>

#include "internal.h"

struct convt3d_backend_state {
    convt3d_shape shape;
    int ordinal;
    float *weight; /* device copy, PyTorch layout */
    float *bias;   /* device, NULL without bias */
};

/* Maps a CUDA error to a status with the call and CUDA's own words. */
static convt3d_status cuda_fail(cudaError_t err, const char *what)
{
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "%s: %s", what, cudaGetErrorString(err));
    return convt3d_fail(CONVT3D_ERR_CUDA, "%s: %s", what, cudaGetErrorString(err));
}

#define CUDA_TRY(call, what)                                                                     \
    do {                                                                                         \
        cudaError_t err_ = (call);                                                               \
        if (err_ != cudaSuccess) {                                                               \
            st = cuda_fail(err_, what);                                                          \
            goto out;                                                                            \
        }                                                                                        \
    } while (0)

/* Keeps the caller's current device as it was. */
struct device_guard {
    int previous;
    explicit device_guard(int ordinal) : previous(-1)
    {
        if (cudaGetDevice(&previous) != cudaSuccess)
            previous = -1;
        cudaSetDevice(ordinal);
    }
    ~device_guard()
    {
        if (previous >= 0)
            cudaSetDevice(previous);
    }
};

static convt3d_status gpu_create(const convt3d_shape *shape, int ordinal, const float *weight,
                                 const float *bias, int weights_on_device,
                                 convt3d_backend_state **state, const char **kernel_name)
{
    device_guard guard(ordinal);
    convt3d_status st = CONVT3D_SUCCESS;
    const cudaMemcpyKind kind = weights_on_device ? cudaMemcpyDeviceToDevice
                                                  : cudaMemcpyHostToDevice;
    convt3d_backend_state *s = new (std::nothrow) convt3d_backend_state();
    if (!s)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CUDA plan state");
    s->shape = *shape;
    s->ordinal = ordinal;
    CUDA_TRY(cudaMalloc(&s->weight, (size_t)shape->w_elems * sizeof(float)), "cudaMalloc(weight)");
    CUDA_TRY(cudaMemcpy(s->weight, weight, (size_t)shape->w_elems * sizeof(float), kind),
             "cudaMemcpy(weight)");
    if (shape->has_bias) {
        CUDA_TRY(cudaMalloc(&s->bias, (size_t)shape->cout * sizeof(float)), "cudaMalloc(bias)");
        CUDA_TRY(cudaMemcpy(s->bias, bias, (size_t)shape->cout * sizeof(float), kind),
                 "cudaMemcpy(bias)");
    }
    *state = s;
    *kernel_name = "cuda/f32_direct_gather_placeholder";
    return CONVT3D_SUCCESS;
out:
    cudaFree(s->weight);
    cudaFree(s->bias);
    delete s;
    return st;
}

__global__ void direct_gather_kernel(convt3d_shape s, const float *__restrict__ x,
                                     const float *__restrict__ w, const float *__restrict__ bias,
                                     float *__restrict__ y)
{
    const int64_t total = s.y_elems;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        /* Decompose e as a logical NCDHW index; strides place it in either layout. */
        int64_t r = e;
        const int64_t ow = r % s.out[2]; r /= s.out[2];
        const int64_t oh = r % s.out[1]; r /= s.out[1];
        const int64_t od = r % s.out[0]; r /= s.out[0];
        const int64_t co = r % s.cout;
        const int64_t n = r / s.cout;
        const int64_t g = co / s.cog, oc = co % s.cog;
        float acc = 0.0f;
        for (int64_t ic = 0; ic < s.cig; ic++) {
            const int64_t ci = g * s.cig + ic;
            for (int64_t kd = 0; kd < s.k[0]; kd++) {
                const int64_t nd = od + s.p[0] - kd * s.l[0];
                if (nd < 0 || nd % s.s[0] || nd / s.s[0] >= s.in[0]) continue;
                for (int64_t kh = 0; kh < s.k[1]; kh++) {
                    const int64_t nh = oh + s.p[1] - kh * s.l[1];
                    if (nh < 0 || nh % s.s[1] || nh / s.s[1] >= s.in[1]) continue;
                    for (int64_t kw = 0; kw < s.k[2]; kw++) {
                        const int64_t nw = ow + s.p[2] - kw * s.l[2];
                        if (nw < 0 || nw % s.s[2] || nw / s.s[2] >= s.in[2]) continue;
                        acc += x[n * s.x_stride[0] + ci * s.x_stride[1] +
                                 nd / s.s[0] * s.x_stride[2] + nh / s.s[1] * s.x_stride[3] +
                                 nw / s.s[2] * s.x_stride[4]] *
                               w[((ci * s.cog + oc) * s.k[0] + kd) * s.k[1] * s.k[2] +
                                 kh * s.k[2] + kw];
                    }
                }
            }
        }
        y[n * s.y_stride[0] + co * s.y_stride[1] + od * s.y_stride[2] + oh * s.y_stride[3] +
          ow * s.y_stride[4]] = (bias ? bias[co] : 0.0f) + acc;
    }
}

static convt3d_status launch(const convt3d_backend_state *s, const float *x, float *y,
                             cudaStream_t stream)
{
    const int threads = 256;
    int64_t blocks = (s->shape.y_elems + threads - 1) / threads;
    if (blocks > 65535LL * 32)
        blocks = 65535LL * 32;
    direct_gather_kernel<<<(unsigned)blocks, threads, 0, stream>>>(s->shape, x, s->weight,
                                                                    s->bias, y);
    cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? CONVT3D_SUCCESS : cuda_fail(err, "direct_gather_kernel launch");
}

static convt3d_status gpu_execute(const convt3d_backend_state *s, const float *x, float *y,
                                  void *stream_ptr, int on_device)
{
    device_guard guard(s->ordinal);
    cudaStream_t stream = (cudaStream_t)stream_ptr;
    if (on_device) {
        convt3d_status st = launch(s, x, y, stream);
        if (st == CONVT3D_SUCCESS && !stream_ptr) {
            cudaError_t err = cudaStreamSynchronize(stream);
            if (err != cudaSuccess)
                return cuda_fail(err, "cudaStreamSynchronize");
        }
        return st;
    }
    /* Host pointers: stage through device buffers, then copy back. */
    convt3d_status st = CONVT3D_SUCCESS;
    float *dx = NULL, *dy = NULL;
    const size_t xb = (size_t)s->shape.x_elems * sizeof(float);
    const size_t yb = (size_t)s->shape.y_elems * sizeof(float);
    CUDA_TRY(cudaMalloc(&dx, xb), "cudaMalloc(staged x)");
    CUDA_TRY(cudaMalloc(&dy, yb), "cudaMalloc(staged y)");
    CUDA_TRY(cudaMemcpyAsync(dx, x, xb, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync(x)");
    if ((st = launch(s, dx, dy, stream)) != CONVT3D_SUCCESS)
        goto out;
    CUDA_TRY(cudaStreamSynchronize(stream), "cudaStreamSynchronize(kernel)");
    CUDA_TRY(cudaMemcpyAsync(y, dy, yb, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(y)");
    CUDA_TRY(cudaStreamSynchronize(stream), "cudaStreamSynchronize(copy)");
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
    delete s;
}

extern "C" const convt3d_backend convt3d_backend_cuda = {"cuda", CONVT3D_DEVICE_CUDA, gpu_create,
                                                         gpu_execute, gpu_destroy};
