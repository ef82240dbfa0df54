// The bench's own GPU kernels: the calibration pair (an fp32 FMA-throughput
// kernel and a large device-to-device copy) and a spin kernel that keeps the
// GPU busy while the host enqueues a batch of timed runs, so that CUDA events
// measure device time rather than host launch latency.
#include <cuda_runtime.h>
#include <stdio.h>

#include "calib.h"
#include "gpu_util.h"

#define CHAINS 8

// CHAINS independent FMA chains per thread; the store is never taken but the
// compiler cannot know, so every FMA stays.
__global__ void calib_fma_kernel(float *out, int iters, float m, float c)
{
    float a[CHAINS];
#pragma unroll
    for (int j = 0; j < CHAINS; j++)
        a[j] = threadIdx.x * 1e-3f + j;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < CHAINS; j++)
            a[j] = fmaf(a[j], m, c);
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < CHAINS; j++)
        s += a[j];
    if (s == -12345.678f)
        out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(err, err_size, "%s failed: %s", #call, cudaGetErrorString(e_));           \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

// Best of `reps` event-timed runs of the FMA kernel: flops per second.
static int time_fma(int blocks, int threads, int iters, int reps, float *out, cudaEvent_t e0,
                    cudaEvent_t e1, double *rate, char *err, size_t err_size)
{
    float ms = 0;
    *rate = 0;
    for (int r = 0; r < reps; r++) {
        CHECK(cudaEventRecord(e0));
        calib_fma_kernel<<<blocks, threads>>>(out, iters, 0.9999999f, 1e-7f);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        const double flops = 2.0 * CHAINS * (double)iters * blocks * threads;
        if (ms > 0 && flops / (ms * 1e-3) > *rate)
            *rate = flops / (ms * 1e-3);
    }
    return 0;
fail:
    return -1;
}

extern "C" int calib_measure_cuda(int ordinal, int quick, double *gflops, double *gbps,
                                  char *name, size_t name_size, char *err, size_t err_size)
{
    cudaDeviceProp prop;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float *out = NULL, *a = NULL, *b = NULL;
    const size_t bytes = (size_t)(quick ? 512 : 1024) << 20;
    const int threads = 256;
    int blocks, iters = 4096;
    double rate = 0;
    float ms = 0, best_ms = 0;
    CHECK(cudaSetDevice(ordinal));
    CHECK(cudaGetDeviceProperties(&prop, ordinal));
    snprintf(name, name_size, "%s", prop.name);
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));

    blocks = prop.multiProcessorCount * 8;
    CHECK(cudaMalloc((void **)&out, (size_t)blocks * threads * sizeof(float)));
    // Grow the loop until one launch takes ~20 ms, then take the best of a few.
    for (int grow = 0; grow < 12; grow++) {
        if (time_fma(blocks, threads, iters, 1, out, e0, e1, &rate, err, err_size))
            goto fail;
        const double ms_now = 2.0 * CHAINS * (double)iters * blocks * threads / rate * 1e3;
        if (ms_now > 20)
            break;
        iters *= 2;
    }
    if (time_fma(blocks, threads, iters, quick ? 3 : 10, out, e0, e1, &rate, err, err_size))
        goto fail;
    *gflops = rate * 1e-9;

    CHECK(cudaMalloc((void **)&a, bytes));
    CHECK(cudaMalloc((void **)&b, bytes));
    CHECK(cudaMemset(a, 1, bytes));
    CHECK(cudaMemset(b, 0, bytes));
    for (int r = 0; r < (quick ? 4 : 10); r++) {
        CHECK(cudaEventRecord(e0));
        CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0 && (best_ms == 0 || ms < best_ms)) // the first copy warms up
            best_ms = ms;
    }
    *gbps = 2.0 * (double)bytes / (best_ms * 1e-3) * 1e-9;
    cudaFree(out);
    cudaFree(a);
    cudaFree(b);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 0;
fail:
    if (out)
        cudaFree(out);
    if (a)
        cudaFree(a);
    if (b)
        cudaFree(b);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return -1;
}

extern "C" int gpu_spin(void *stream, double microseconds)
{
    spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>((unsigned long long)(microseconds * 1e3));
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
