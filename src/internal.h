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

/* Hidden from the shared library's symbol table where the compiler has
 * visibility attributes (configure: CONVT3D_HAVE_VISIBILITY). */
#if defined(CONVT3D_HAVE_VISIBILITY) && CONVT3D_HAVE_VISIBILITY
#define CONVT3D_INTERNAL __attribute__((visibility("hidden")))
#else
#define CONVT3D_INTERNAL
#endif

/* ---- errors (error.c) -------------------------------------------------- */

/* Records a printf-style message as the thread's last error and returns status. */
CONVT3D_INTERNAL convt3d_status convt3d_fail(convt3d_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears the thread's last error (called on entry to each public function). */
CONVT3D_INTERNAL void convt3d_clear_error(void);

/* ---- element access (convert.c) ----------------------------------------- */

/* Element i of a tensor of the given type, widened to f32 (exact). */
CONVT3D_INTERNAL float convt3d_load_f32(const void *base, convt3d_dtype type, int64_t i);
/* Stores v into element i, rounded to the type (to nearest even). */
CONVT3D_INTERNAL void convt3d_store_f32(void *base, convt3d_dtype type, int64_t i, float v);

/* ---- the derived shape (layout.c) -------------------------------------- */

/* Everything a backend needs, derived once from a validated problem.
 * Strides are in elements, indexed [n, c, d, h, w] whatever the layout. */
typedef struct convt3d_shape {
    int64_t n, cin, cout, groups, cig, cog;
    int64_t in[3], out[3], k[3], s[3], p[3], op[3], l[3];
    convt3d_layout layout;
    int has_bias;
    convt3d_dtype x_type, w_type, bias_type, y_type; /* one type (layout.c checks) */
    /* The plan's math mode: CONVT3D_MATH_F32 from convt3d_shape_from_problem(),
     * the plan options' from the dispatcher (implementations judge it with
     * the rest of the shape). */
    convt3d_math_mode math;
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

/* The one stride-phase table of the library: every backend and planner
 * derives its view from convt3d_phase_of().
 *
 * In dim d, output o has phase r = (o + p) mod s and writes o + p = q*s + r.
 * The taps that reach phase r are k = first_tap + t*tap_step (t < taps): all
 * k with k*l = r (mod s).  Tap t reads input i = q - m0 - t*dm, where
 * m0 = (first_tap*l - r)/s >= 0 and dm = l / gcd(s, l).  The outputs of the
 * phase are q in [qlo, qlo + qcount).  A backend that walks outputs as
 * o = j*s + c (c = o mod s) has q = j + (c + p) / s, so tap t reads
 * i = j + delta with delta = (c + p)/s - m0 - t*dm (convt3d_phase_delta()). */
typedef struct convt3d_phase {
    int64_t first_tap; /* smallest k reaching this phase, or -1 if none */
    int64_t tap_step;  /* distance between consecutive reaching taps: s / gcd(s, l) */
    int64_t taps;      /* how many taps reach this phase */
    int64_t m0;        /* input offset of the first tap (0 when taps == 0) */
    int64_t dm;        /* input step between consecutive taps: l / gcd(s, l) */
    int64_t qlo, qcount; /* the phase's outputs: q in [qlo, qlo + qcount) */
} convt3d_phase;
/* Phase r (0 <= r < s) of dim d. */
CONVT3D_INTERNAL convt3d_phase convt3d_phase_of(const convt3d_shape *shape, int dim, int64_t r);

/* The greatest common divisor of a >= 0 and b >= 0 (gcd(a, 0) = a); the
 * phase table, the CPU planners and the CUDA planners share it. */
CONVT3D_INTERNAL int64_t convt3d_gcd64(int64_t a, int64_t b);
/* For outputs o = j*s + c of dim d: tap t of their phase reads input j + delta. */
CONVT3D_INTERNAL int64_t convt3d_phase_delta(const convt3d_shape *shape, int dim, int64_t c,
                                             const convt3d_phase *phase, int64_t t);

/* Sizes that kernels index with int must stay below this (with room for
 * the tile offsets added to them): the one limit every planner checks. */
#define CONVT3D_INT_INDEX_LIMIT ((int64_t)1 << 28)

/* ---- the registry ------------------------------------------------------ */

/* What a plan asks for beyond the problem: the backend's implementations
 * are judged against it. */
typedef struct convt3d_request {
    convt3d_math_mode math;
    const char *force; /* an implementation of this backend by exact name, or NULL */
    int verbose;       /* print every candidate passed over, with its reason, to stderr */
} convt3d_request;

/* ---- backends ---------------------------------------------------------- */

/* One backend = one entry file + one entry in dispatch.c's table.  Each
 * backend keeps its own registry: an ordered table of implementations, each
 * with an exact name, a pure applicability predicate, its planning and its
 * execution (src/cpu/registry.c, src/cuda/registry.cu).  The dispatcher
 * sees a backend's registry through impl_count/impl_name/impl_applies and
 * leaves the walk (first applicable in order, or forced by name) to create. */
typedef struct convt3d_backend_state convt3d_backend_state;

typedef struct convt3d_backend {
    const char *name; /* "cpu", "cuda": the prefix of its implementations' names */
    convt3d_device_kind kind;
    int (*impl_count)(void);
    const char *(*impl_name)(int index);
    /* Whether implementation index runs shape on device ordinal under req
     * (req->force ignored): CONVT3D_SUCCESS, or CONVT3D_ERR_NOT_APPLICABLE
     * with the reason in why (and not in last_error); a device query failure
     * as its own status.  Pure: allocates nothing, changes nothing. */
    convt3d_status (*impl_applies)(int index, const convt3d_shape *shape, int ordinal,
                                   const convt3d_request *req, char *why, size_t why_size);
    /* Builds the backend's immutable state: the implementation (req->force,
     * or the first in order that applies and is not passed over by its cost
     * rule), repacked weights, bias.  weight/bias are host pointers for a CPU
     * backend; for CUDA they may be either (weights_on_device says which).
     * *impl_name is the chosen implementation's registry name (static). */
    convt3d_status (*create)(const convt3d_shape *shape, int ordinal, const convt3d_request *req,
                             const void *weight, const void *bias, int weights_on_device,
                             convt3d_backend_state **state, const char **impl_name);
    /* Computes y; x and y were checked to live where the backend can use them. */
    convt3d_status (*execute)(const convt3d_backend_state *state, const void *x, void *y,
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
