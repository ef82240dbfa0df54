/* The bench's side of the GPU: checked CUDA runtime calls (from C), the
 * device buffer sets that timed runs rotate through so that the working set
 * exceeds the L2 cache, and event timing.  Everything returns 0 or -1 with a
 * message naming the failed call; in a build without CUDA every function
 * fails with "built without CUDA". */
#ifndef CONVT3D_BENCH_GPU_UTIL_H
#define CONVT3D_BENCH_GPU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPU_MAX_SETS 16

typedef struct gpu_bufs {
    int ordinal;
    int sets;                 /* input/output pairs rotated through */
    void *x[GPU_MAX_SETS];    /* each a copy of the host input */
    void *y[GPU_MAX_SETS];
    void *w, *b;              /* device copies of weight and bias (b NULL without bias) */
    int64_t x_elems, y_elems, w_elems, b_elems;
    size_t elem_size;         /* bytes an element takes: all four tensors share one type */
    size_t l2_bytes;
    void *stream;             /* cudaStream_t of every timed run */
} gpu_bufs;

/* Name and L2 size of a device. */
int gpu_device_info(int ordinal, char *name, size_t name_size, size_t *l2_bytes, char *err,
                    size_t err_size);

/* Allocates and fills enough sets that they exceed twice the L2 cache (at
 * most GPU_MAX_SETS, and only what fits in half the free memory). */
int gpu_bufs_create(gpu_bufs *g, int ordinal, const void *x, int64_t x_elems, const void *w,
                    int64_t w_elems, const void *b, int64_t b_elems, int64_t y_elems,
                    size_t elem_size, char *err, size_t err_size);
void gpu_bufs_destroy(gpu_bufs *g);

/* NaN into a device output of the buffers' type (on the buffers' stream). */
int gpu_poison(const gpu_bufs *g, void *d, int64_t elems, char *err, size_t err_size);
/* Waits for the buffers' stream. */
int gpu_sync(const gpu_bufs *g, char *err, size_t err_size);
/* Device -> host copy of elems elements of the buffers' type (synchronous). */
int gpu_download(const gpu_bufs *g, void *host, const void *dev, int64_t elems, char *err,
                 size_t err_size);

/* Enqueues one run on buffer set `set` on `stream`; returns 0 on success or
 * -1 with a message in err. */
typedef int (*gpu_enqueue_fn)(void *ctx, int set, void *stream, char *err, size_t err_size);

/* Warm-up, then timed runs with a CUDA event pair around each, rotating the
 * buffer sets; batches of runs are queued behind a spin kernel so that host
 * launch latency does not enter the events.  first_s: the duration of the
 * verification run (an estimate). */
int gpu_time(const timing_cfg *cfg, gpu_enqueue_fn fn, void *ctx, const gpu_bufs *g,
             double first_s, timing_stats *out, char *err, size_t err_size);

/* The host time of one enqueued run, in microseconds: the GPU held busy
 * by a spin kernel, `calls` runs of fn queued back to back on set 0 without
 * synchronising, the wall time divided by calls; the median of `rounds`
 * (at most 15) rounds.  With the GPU busy and far fewer runs queued than the
 * launch queue holds, no call waits for the device: the figure is what the
 * calls cost the host (argument checks, pointer queries, the launch). */
int gpu_host_cost(gpu_enqueue_fn fn, void *ctx, const gpu_bufs *g, int calls, int rounds,
                  double *us, char *err, size_t err_size);

/* gpu_kernels.cu: a one-thread kernel that spins for `microseconds`. */
int gpu_spin(void *stream, double microseconds);

#ifdef __cplusplus
}
#endif

#endif
