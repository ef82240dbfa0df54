/* The CPU's measured ceilings: an FMA loop on every thread (AVX-512 or
 * AVX2+FMA chosen at run time through target attributes, so the rest of the
 * bench needs no special flags; plain C otherwise) and a parallel copy of
 * buffers far larger than the last-level cache. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CALIB_X86 1
#endif

#include "calib.h"
#include "data.h"
#include "timing.h"

/* Each kernel runs `iters` iterations of independent FMA chains (enough of
 * them to cover the FMA latency on every pipe), returns a value that depends
 * on all of them so nothing is optimised away, and reports its flops.  The
 * chains are spelled out as named variables: an array would be kept in
 * memory and measure store forwarding instead of the FMA units. */
#define CHAINS_12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define CHAINS_16(X) CHAINS_12(X) X(12) X(13) X(14) X(15)

#ifdef CALIB_X86
__attribute__((target("avx512f"))) static float fma_loop_avx512(int64_t iters, double *flops)
{
    const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
#define DECL(j) __m512 a##j = _mm512_set1_ps((float)(j) * 0.01f);
#define STEP(j) a##j = _mm512_fmadd_ps(a##j, m, c);
#define SUM(j) s = _mm512_add_ps(s, a##j);
    CHAINS_16(DECL)
    for (int64_t i = 0; i < iters; i++) {
        CHAINS_16(STEP)
    }
    __m512 s = _mm512_setzero_ps();
    CHAINS_16(SUM)
#undef DECL
#undef STEP
#undef SUM
    *flops = 2.0 * 16 * 16 * (double)iters;
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float fma_loop_avx2(int64_t iters, double *flops)
{
    const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
#define DECL(j) __m256 a##j = _mm256_set1_ps((float)(j) * 0.01f);
#define STEP(j) a##j = _mm256_fmadd_ps(a##j, m, c);
#define SUM(j) s = _mm256_add_ps(s, a##j);
    CHAINS_12(DECL)
    for (int64_t i = 0; i < iters; i++) {
        CHAINS_12(STEP)
    }
    __m256 s = _mm256_setzero_ps();
    CHAINS_12(SUM)
#undef DECL
#undef STEP
#undef SUM
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    *flops = 2.0 * 8 * 12 * (double)iters;
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}
#endif

/* Without a known ISA: scalar chains (the compiler may vectorise them). */
static float fma_loop_portable(int64_t iters, double *flops)
{
#define DECL(j) float a##j = (float)(j) * 0.01f;
#define STEP(j) a##j = a##j * 0.9999999f + 1e-7f;
#define SUM(j) s += a##j;
    CHAINS_16(DECL)
    for (int64_t i = 0; i < iters; i++) {
        CHAINS_16(STEP)
    }
    float s = 0;
    CHAINS_16(SUM)
#undef DECL
#undef STEP
#undef SUM
    *flops = 2.0 * 16 * (double)iters;
    return s;
}

typedef float (*fma_kernel)(int64_t, double *);

static fma_kernel pick_kernel(char *isa, size_t isa_size)
{
#ifdef CALIB_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        strncpy(isa, "avx512", isa_size);
        return fma_loop_avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        strncpy(isa, "avx2+fma", isa_size);
        return fma_loop_avx2;
    }
#endif
    strncpy(isa, "portable C", isa_size);
    return fma_loop_portable;
}

static volatile float calib_sink;

/* One parallel run of the kernel on `threads` threads: the flops per second. */
static double fma_rate(fma_kernel k, int threads, int64_t iters, double *seconds)
{
    double total = 0;
    float sink = 0;
    const double t0 = bench_now();
#pragma omp parallel num_threads(threads) reduction(+ : total, sink)
    {
        double f = 0;
        sink += k(iters, &f);
        total += f;
    }
    *seconds = bench_now() - t0;
    calib_sink = sink;
    return total / *seconds;
}

static double measure_fma(fma_kernel k, int threads, double target_s)
{
    double t = 0, best = 0;
    int64_t iters = 20000;
    /* grow the loop until one run takes a measurable time */
    while (fma_rate(k, threads, iters, &t) > 0 && t < 0.02 && iters < ((int64_t)1 << 40))
        iters *= 4;
    iters = (int64_t)((double)iters * (target_s / 3) / (t > 0 ? t : 1e-3)) + 1;
    for (int r = 0; r < 3; r++) {
        const double rate = fma_rate(k, threads, iters, &t);
        if (rate > best)
            best = rate;
    }
    return best;
}

/* Copy bandwidth: the best of a few parallel copies of `bytes`, counting the
 * bytes read plus the bytes written (as the floor counts x + w + y). */
static double measure_copy(int threads, size_t bytes, double target_s)
{
    const int64_t n = (int64_t)(bytes / sizeof(float));
    float *a = data_alloc(n), *b = data_alloc(n);
    double best = 0;
    if (!a || !b) {
        data_free(a);
        data_free(b);
        return 0;
    }
    const int64_t chunk = 1 << 16;
    const int64_t chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t c = 0; c < chunks; c++) { /* first touch, in parallel like the copies */
        const int64_t len = (c + 1) * chunk < n ? chunk : n - c * chunk;
        memset(a + c * chunk, 1, (size_t)len * sizeof(float));
        memset(b + c * chunk, 0, (size_t)len * sizeof(float));
    }
    const double start = bench_now();
    for (int r = 0; r < 20 && (r < 3 || bench_now() - start < target_s); r++) {
        const double t0 = bench_now();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t len = (c + 1) * chunk < n ? chunk : n - c * chunk;
            memcpy(b + c * chunk, a + c * chunk, (size_t)len * sizeof(float));
        }
        const double rate = 2.0 * (double)n * sizeof(float) / (bench_now() - t0);
        if (rate > best)
            best = rate;
    }
    calib_sink = b[n / 2];
    data_free(a);
    data_free(b);
    return best;
}

int calib_measure_cpu(int threads, int quick, double *gflops, double *gbps, char *isa,
                      size_t isa_size)
{
    if (threads < 1)
        threads = 1;
#ifndef _OPENMP
    threads = 1; /* without OpenMP the loops run on the calling thread only */
#endif
    const fma_kernel k = pick_kernel(isa, isa_size);
    *gflops = 1e-9 * measure_fma(k, threads, quick ? 0.3 : 1.0);
    *gbps = 1e-9 * measure_copy(threads, (size_t)(quick ? 128 : 512) << 20, quick ? 0.3 : 1.0);
    return *gflops > 0 && *gbps > 0 ? 0 : -1;
}
