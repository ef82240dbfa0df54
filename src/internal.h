/* Internal interfaces shared by the dispatcher, layout helpers, reference and
 * backends.  Not installed. */
#ifndef CONVT3D_INTERNAL_H
#define CONVT3D_INTERNAL_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>

#include "convt3d.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CONVT3D_INTERNAL __attribute__((visibility("hidden")))

/* ---- errors (error.c) -------------------------------------------------- */

/* Records a printf-style message as the thread's last error and returns status. */
CONVT3D_INTERNAL convt3d_status convt3d_fail(convt3d_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears the thread's last error (called on entry to each public function). */
CONVT3D_INTERNAL void convt3d_clear_error(void);

/* ---- the derived shape (layout.c) -------------------------------------- */

/* Everything a backend needs, derived once from a validated problem.
 * Strides are in elements, indexed [n, c, d, h, w] whatever the layout. */
typedef struct convt3d_shape {
    int64_t n, cin, cout, groups, cig, cog;
    int64_t in[3], out[3], k[3], s[3], p[3], op[3], l[3];
    convt3d_layout layout;
    int has_bias;
    int64_t x_elems, y_elems, w_elems;
    int64_t x_stride[5], y_stride[5];
    int64_t in_spatial, out_spatial, k_volume;
    double macs; /* useful multiply-adds: N * C_in * in_spatial * Cog * kvol */
} convt3d_shape;

/* Validates and fills *shape (untouched on failure). */
CONVT3D_INTERNAL convt3d_status convt3d_shape_from_problem(const convt3d_problem *problem,
                                                           convt3d_shape *shape);

/* NCDHW or NDHWC element strides for a tensor of n x c x dims[3]. */
CONVT3D_INTERNAL void convt3d_tensor_strides(convt3d_layout layout, int64_t c,
                                             const int64_t dims[3], int64_t stride[5]);

/* Repacks PyTorch's weight [C_in][Cog][kD][kH][kW] into
 * dst[g][kd][kh][kw][ic][oc_padded] (ic < Cig, oc_padded >= Cog, padding
 * lanes zero): for each (group, tap, input channel) the group's output-channel
 * weights are contiguous.  dst holds G * kvol * Cig * oc_padded floats. */
CONVT3D_INTERNAL void convt3d_pack_weights_cio_to_gkio(const convt3d_shape *shape,
                                                       const float *src, int64_t oc_padded,
                                                       float *dst);

/* Per-dim stride-phase decomposition.  For output coordinate o in phase
 * r = (o + p) mod s, the taps that can reach it are k = k0, k0 + step, ...
 * (all k with (r - k*l) divisible by s); each gives input i = (o + p - k*l)/s.
 * Fills the first tap and tap count for phase r of dim d. */
typedef struct convt3d_phase {
    int64_t first_tap; /* smallest k reaching this phase, or -1 if none */
    int64_t tap_step;  /* distance between consecutive reaching taps */
    int64_t taps;      /* how many taps reach this phase */
} convt3d_phase;
CONVT3D_INTERNAL convt3d_phase convt3d_phase_of(const convt3d_shape *shape, int dim, int64_t r);

/* ---- backends ---------------------------------------------------------- */

/* One backend = one file + one entry in dispatch.c's table. */
typedef struct convt3d_backend_state convt3d_backend_state;

typedef struct convt3d_backend {
    const char *name;
    convt3d_device_kind kind;
    /* Builds the backend's immutable state: repacked weights, bias, kernel choice.
     * weight/bias are host pointers for a CPU backend; for CUDA they may be either
     * (weights_on_device says which).  kernel_name points into static storage. */
    convt3d_status (*create)(const convt3d_shape *shape, int ordinal, const float *weight,
                             const float *bias, int weights_on_device,
                             convt3d_backend_state **state, const char **kernel_name);
    /* Computes y; x and y were checked to live where the backend can use them. */
    convt3d_status (*execute)(const convt3d_backend_state *state, const float *x, float *y,
                              void *stream, int on_device);
    void (*destroy)(convt3d_backend_state *state);
} convt3d_backend;

/* cpu_omp.c */
CONVT3D_INTERNAL extern const convt3d_backend convt3d_backend_cpu;

/* gpu.cu (only in a CUDA build) */
CONVT3D_INTERNAL extern const convt3d_backend convt3d_backend_cuda;

/* ---- CUDA runtime glue (gpu_runtime.cu in a CUDA build, stubs otherwise) -- */

/* Number of usable devices; 0 without driver or GPU.  Cached, thread-safe. */
CONVT3D_INTERNAL int convt3d_gpu_device_count(void);
/* Where p lives: the CUDA ordinal of the device that owns it (>= 0), or -1
 * for host memory (pageable, pinned or unknown to CUDA).  Managed memory
 * counts as host: it is reachable from both sides. */
CONVT3D_INTERNAL int convt3d_gpu_pointer_device(const void *p);

#ifdef __cplusplus
}
#endif

#endif /* CONVT3D_INTERNAL_H */
