// The bench's own GPU kernels: the calibration kernels (an fp32
// FMA-throughput kernel, dense tensor-core loops for TF32, f16 and bf16, and
// a large device-to-device copy) and a spin kernel that keeps the
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

// ---- tensor-core ceilings ---------------------------------------------------
// Each warp runs MMA_CHAINS independent accumulator chains of mma.sync (the
// instruction convt3d's tensor-core kernels use) on fragments held in
// registers: no memory traffic, so the loop measures the MMA issue rate
// alone.  On Hopper, wgmma (which cuBLAS uses) reaches a higher rate than
// mma.sync; this ceiling is that of mma.sync, the bound on any kernel
// built on it (bench/NOTES.md, "modes").  The operands are small values;
// the accumulators may grow to infinity, which does not change the rate.
#define MMA_CHAINS 8

enum mma_kind { MMA_TF32 = 0, MMA_F16 = 1, MMA_BF16 = 2 };

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
template <int KIND> __device__ __forceinline__ void mma_step(float (&c)[4], const unsigned (&a)[4],
                                                             const unsigned (&b)[2])
{
    if (KIND == MMA_TF32)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else if (KIND == MMA_F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int KIND> __global__ void calib_mma_kernel(float *out, int iters)
{
    // bit patterns of small values in each type: tf32 1/1024-ish floats,
    // pairs of f16 / bf16 values around 1e-3
    const unsigned pat = KIND == MMA_TF32 ? 0x3a800000u + (threadIdx.x & 7) * 0x2000u
                         : KIND == MMA_F16 ? 0x14001400u + (threadIdx.x & 7)
                                           : 0x3a803a80u + (threadIdx.x & 7);
    const unsigned a[4] = {pat, pat ^ 1u, pat, pat ^ 2u}, b[2] = {pat, pat ^ 3u};
    float c[MMA_CHAINS][4];
#pragma unroll
    for (int j = 0; j < MMA_CHAINS; j++)
        c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.0f;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < MMA_CHAINS; j++)
            mma_step<KIND>(c[j], a, b);
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < MMA_CHAINS; j++)
        s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
    if (s == -12345.678f)
        out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#else
template <int KIND> __global__ void calib_mma_kernel(float *out, int iters)
{
    (void)out, (void)iters; // no mma.sync before sm_80: the host refuses first
}
#endif

// Flops one warp-wide MMA of the kind does: 2 * M * N * K.
static double mma_flops(int kind) { return 2.0 * 16 * 8 * (kind == MMA_TF32 ? 8 : 16); }

static void launch_mma(int kind, int blocks, int threads, float *out, int iters)
{
    if (kind == MMA_TF32)
        calib_mma_kernel<MMA_TF32><<<blocks, threads>>>(out, iters);
    else if (kind == MMA_F16)
        calib_mma_kernel<MMA_F16><<<blocks, threads>>>(out, iters);
    else
        calib_mma_kernel<MMA_BF16><<<blocks, threads>>>(out, iters);
}

// The best of `reps` event-timed launches: flops per second.
static int time_mma(int kind, int blocks, int threads, int iters, int reps, float *out,
                    cudaEvent_t e0, cudaEvent_t e1, double *rate, char *err, size_t err_size)
{
    float ms = 0;
    const double flops = mma_flops(kind) * MMA_CHAINS * (double)iters * blocks * (threads / 32);
    *rate = 0;
    for (int r = 0; r < reps; r++) {
        CHECK(cudaEventRecord(e0));
        launch_mma(kind, blocks, threads, out, iters);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms > 0 && flops / (ms * 1e-3) > *rate)
            *rate = flops / (ms * 1e-3);
    }
    return 0;
fail:
    return -1;
}

// One kind: grow the loop until a launch takes ~20 ms, then the best of a few.
static int measure_mma(int kind, int blocks, int threads, int quick, float *out, cudaEvent_t e0,
                       cudaEvent_t e1, double *gflops, char *err, size_t err_size)
{
    int iters = 1024;
    double rate = 0;
    const double per_iter = mma_flops(kind) * MMA_CHAINS * (double)blocks * (threads / 32);
    for (int grow = 0; grow < 14; grow++) {
        if (time_mma(kind, blocks, threads, iters, 1, out, e0, e1, &rate, err, err_size))
            return -1;
        if (rate > 0 && per_iter * iters / rate * 1e3 > 20)
            break;
        iters *= 2;
    }
    if (time_mma(kind, blocks, threads, iters, quick ? 3 : 10, out, e0, e1, &rate, err, err_size))
        return -1;
    *gflops = rate * 1e-9;
    return 0;
}

extern "C" int calib_measure_cuda_tc(int ordinal, int quick, double *tf32, double *f16,
                                     double *bf16, char *err, size_t err_size)
{
    cudaDeviceProp prop;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float *out = NULL;
    const int threads = 256; // 8 warps: two a sub-partition
    int blocks;
    double *rates[3] = {tf32, f16, bf16};
    CHECK(cudaSetDevice(ordinal));
    CHECK(cudaGetDeviceProperties(&prop, ordinal));
    if (prop.major < 8) {
        snprintf(err, err_size, "compute capability %d.%d has no TF32/bf16 mma.sync (sm_80+)",
                 prop.major, prop.minor);
        return -1;
    }
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    blocks = prop.multiProcessorCount * 4;
    CHECK(cudaMalloc((void **)&out, (size_t)blocks * threads * sizeof(float)));
    for (int kind = 0; kind < 3; kind++)
        if (measure_mma(kind, blocks, threads, quick, out, e0, e1, rates[kind], err, err_size))
            goto fail;
    cudaFree(out);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 0;
fail:
    if (out)
        cudaFree(out);
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
