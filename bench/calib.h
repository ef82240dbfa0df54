/* Measured ceilings ("floors") of each device: the fp32 FMA rate and the
 * memory bandwidth, measured once and cached in
 * $XDG_CACHE_HOME/convt3d/calibration (else ~/.cache/convt3d/calibration).
 * A run's "% of floor" is max(flops / peak_flops, bytes / peak_bw) / time:
 * how close it comes to the bound the machine itself imposes. */
#ifndef CONVT3D_BENCH_CALIB_H
#define CONVT3D_BENCH_CALIB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floor_rates {
    int valid;
    double gflops;     /* fp32 FMA throughput, 2 flops per FMA */
    double gbps;       /* copy bandwidth, bytes read + written per second / 1e9 */
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

/* The percentage of the floor a run of `seconds` reaches; < 0 if unknown. */
double calib_floor_pct(const floor_rates *f, double flops, double bytes, double seconds);

/* The cache file's path (for messages). */
const char *calib_cache_path(void);

/* Measurements themselves (calib_cpu.c, gpu_kernels.cu).  quick: a fraction of
 * a second per rate; otherwise about a second. */
int calib_measure_cpu(int threads, int quick, double *gflops, double *gbps, char *isa,
                      size_t isa_size);
int calib_measure_cuda(int ordinal, int quick, double *gflops, double *gbps, char *name,
                       size_t name_size, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
