/* Measured ceilings ("floors") of each device: the fp32 FMA rate and the
 * memory bandwidth -- on a GPU also the dense tensor-core rates of TF32, f16
 * and bf16 (mma.sync loops, fp32 accumulation) -- measured once and cached in
 * $XDG_CACHE_HOME/convt3d/calibration (else ~/.cache/convt3d/calibration).
 * A run's "% of floor" is max(flops / peak_flops, bytes / peak_bw) / time:
 * how close it comes to the bound the machine itself imposes.  peak_flops is
 * the ceiling of the row's precision (calib_compute_gflops). */
#ifndef CONVT3D_BENCH_CALIB_H
#define CONVT3D_BENCH_CALIB_H

#include <stddef.h>

#include "modes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floor_rates {
    int valid;
    double gflops;     /* fp32 FMA throughput, 2 flops per FMA */
    double gbps;       /* copy bandwidth, bytes read + written per second / 1e9 */
    int has_tc;        /* a GPU: the tensor-core rates below apply (0 on the CPU) */
    int tc_valid;      /* they were measured (an older cache line has none) */
    double tf32_gflops, f16_gflops, bf16_gflops; /* dense mma.sync, 2 flops per MAC */
    /* CPU: the ISA has dot products of the half type beyond the fp32 FMA rate
     * (bit 1: bf16, AVX512_BF16 or AMX-BF16; bit 2: f16, AVX512_FP16 or
     * AMX-FP16), which the FMA loop does not measure: no ceiling for that
     * type's rows rather than one that is too low */
    unsigned cpu_half_dot;
    char key[320];     /* what was measured: device, model, threads */
    char source[96];   /* "measured now", "cache (2025-01-01 12:00)" */
} floor_rates;

typedef enum calib_mode {
    CALIB_CACHE_ONLY, /* --no-calibrate: the cache or nothing */
    CALIB_AUTO,       /* the cache, else a quick measurement (about a second), cached */
    CALIB_FORCE       /* --calibrate: a longer measurement, replacing the cached one */
} calib_mode;

/* The floors of the CPU with `threads` OpenMP threads (or of CUDA device
 * `ordinal`).  Returns 0, or -1 with a message in err. */
int calib_cpu(int threads, calib_mode mode, floor_rates *out, char *err, size_t err_size);
int calib_cuda(int ordinal, calib_mode mode, floor_rates *out, char *err, size_t err_size);

/* The CPU's model name from /proc/cpuinfo. */
void calib_cpu_model(char *buf, size_t size);

/* The compute ceiling a row of `prec` is held to, GFLOP/s of useful flops;
 * 0 if unknown.  The CPU: its FMA rate (convt3d computes every precision in
 * fp32), but unknown for a half type the ISA has dot products of
 * (cpu_half_dot: a baseline may use them).  A GPU: fp32 the FMA rate, tf32/f16/bf16 their
 * tensor-core rates, and 3xtf32 a third of the TF32 rate -- each useful
 * product costs three TF32 products (big*big, big*small, small*big), so
 * 100% means the tensor cores are saturated by the split scheme. */
double calib_compute_gflops(const floor_rates *f, bench_prec prec);

/* The percentage of the floor a run of `seconds` reaches at precision prec;
 * < 0 if unknown. */
double calib_floor_pct(const floor_rates *f, bench_prec prec, double flops, double bytes,
                       double seconds);

/* The cache file's path (for messages). */
const char *calib_cache_path(void);

/* Measurements themselves (calib_cpu.c, gpu_kernels.cu).  quick: a fraction of
 * a second per rate; otherwise about a second. */
int calib_measure_cpu(int threads, int quick, double *gflops, double *gbps, char *isa,
                      size_t isa_size);
int calib_measure_cuda(int ordinal, int quick, double *gflops, double *gbps, char *name,
                       size_t name_size, char *err, size_t err_size);
/* The dense tensor-core rates (mma.sync m16n8k8 TF32, m16n8k16 f16 and bf16,
 * fp32 accumulation) in GFLOP/s; 0, or -1 with err (e.g. a GPU before sm_80). */
int calib_measure_cuda_tc(int ordinal, int quick, double *tf32, double *f16, double *bf16,
                          char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
