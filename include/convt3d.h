/*
 * convt3d — the 3D transposed convolution (PyTorch's ConvTranspose3d) on the CPU
 * and on NVIDIA GPUs, behind one C API.
 *
 *   y[n, g*Cog + oc, o] = bias[g*Cog + oc]
 *       + sum_{ic < Cig} sum_{k} x[n, g*Cig + ic, i] * w[g*Cig + ic, oc, k]
 *     over every (i, k) with o = i*s - p + k*l in each spatial dim (d, h, w),
 *
 * where Cig = C_in / G, Cog = C_out / G, and
 *   out_size = (in_size - 1)*s - 2*p + l*(k - 1) + op + 1.
 *
 * Tensors are dense fp32.  x and y are NCDHW (PyTorch contiguous, the default)
 * or NDHWC (PyTorch channels_last_3d); the weight is always PyTorch's
 * C_in x (C_out/G) x kD x kH x kW; the bias has C_out entries.
 *
 * Conventions.  Every function that can fail returns a convt3d_status; results
 * come back through trailing out-pointers.  The library never aborts and never
 * prints.  On any error nothing is written to the output tensor, and
 * convt3d_last_error() (thread-local) says exactly what was wrong.
 *
 * Thread safety.  Plans are immutable once created: any number of threads may
 * call convt3d_execute() on the same plan at the same time, on distinct outputs.
 * convt3d_plan_destroy() must not race with an execute on the same plan.  All
 * other functions are safe to call from any thread.
 */
#ifndef CONVT3D_H
#define CONVT3D_H

#include <stddef.h>
#include <stdint.h>

#include "convt3d_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CONVT3D_BUILDING_DLL)
#define CONVT3D_API __declspec(dllexport)
#elif defined(__GNUC__)
#define CONVT3D_API __attribute__((visibility("default")))
#else
#define CONVT3D_API
#endif

/* ---- status ------------------------------------------------------------ */

typedef enum convt3d_status {
    CONVT3D_SUCCESS = 0,
    CONVT3D_ERR_NULL_POINTER,      /* a required pointer argument is NULL */
    CONVT3D_ERR_BAD_SIZE,          /* batch, channels or an input size < 1 */
    CONVT3D_ERR_BAD_GROUPS,        /* groups < 1, or channels not divisible */
    CONVT3D_ERR_BAD_KERNEL,        /* a kernel size < 1 */
    CONVT3D_ERR_BAD_STRIDE,        /* a stride < 1 */
    CONVT3D_ERR_BAD_PADDING,       /* a padding < 0 */
    CONVT3D_ERR_BAD_OUTPUT_PADDING,/* output_padding < 0 or >= max(stride, dilation) */
    CONVT3D_ERR_BAD_DILATION,      /* a dilation < 1 */
    CONVT3D_ERR_BAD_LAYOUT,        /* layout is not a convt3d_layout value */
    CONVT3D_ERR_BAD_OUTPUT_SIZE,   /* the formula gives an output size < 1 */
    CONVT3D_ERR_OVERFLOW,          /* a size or element count overflows int64 */
    CONVT3D_ERR_BAD_DEVICE_STRING, /* a device string that does not parse */
    CONVT3D_ERR_NO_CUDA_SUPPORT,   /* CUDA asked for, library built without it */
    CONVT3D_ERR_NO_DEVICE,         /* no usable GPU, or the ordinal is out of range */
    CONVT3D_ERR_POINTER_LOCATION,  /* a pointer lives where this plan cannot use it */
    CONVT3D_ERR_OUT_OF_MEMORY,     /* host or device allocation failed */
    CONVT3D_ERR_CUDA,              /* a CUDA runtime call failed (see last_error) */
    CONVT3D_ERR_INTERNAL           /* a bug: please report it */
} convt3d_status;

/* A short fixed name for the status, e.g. "CONVT3D_ERR_BAD_STRIDE". */
CONVT3D_API const char *convt3d_status_string(convt3d_status status);

/* A message about the last failure of a convt3d call on the calling thread,
 * naming the field and values ("output_padding[1]=2 must be smaller than
 * stride[1]=2 or dilation[1]=1").  "" when the thread's last call succeeded.
 * The string stays valid until the thread's next convt3d call. */
CONVT3D_API const char *convt3d_last_error(void);

/* ---- version ----------------------------------------------------------- */

/* The library's version string ("0.1.0"); compare with CONVT3D_VERSION_STRING
 * to detect a header/library mismatch.  convt3d_version_number() returns
 * major*10000 + minor*100 + patch. */
CONVT3D_API const char *convt3d_version(void);
CONVT3D_API int convt3d_version_number(void);

/* ---- the problem ------------------------------------------------------- */

typedef enum convt3d_layout {
    CONVT3D_LAYOUT_NCDHW = 0, /* PyTorch contiguous: W fastest, then H, D, C, N */
    CONVT3D_LAYOUT_NDHWC = 1  /* PyTorch channels_last_3d: C fastest */
} convt3d_layout;

/* Spatial triples are ordered (d, h, w).  All sizes are int64 so that huge
 * tensors and overflow checks need no casts. */
typedef struct convt3d_problem {
    int64_t batch;             /* N */
    int64_t in_channels;       /* C_in (total, all groups) */
    int64_t out_channels;      /* C_out (total, all groups) */
    int64_t groups;            /* G; default 1 */
    int64_t in_size[3];        /* D, H, W of x */
    int64_t kernel[3];         /* kD, kH, kW */
    int64_t stride[3];         /* default 1 */
    int64_t padding[3];        /* default 0 */
    int64_t output_padding[3]; /* default 0 */
    int64_t dilation[3];       /* default 1 */
    convt3d_layout layout;     /* of x and y; default NCDHW */
    int has_bias;              /* nonzero: add bias[C_out]; default 0 */
} convt3d_problem;

/* PyTorch's defaults for everything but the sizes, which are set to 0 so that
 * forgetting one fails validation.  Usage:
 *   convt3d_problem p = CONVT3D_PROBLEM_INIT;  p.batch = 8; ... */
#define CONVT3D_PROBLEM_INIT                                                   \
    {0, 0, 0, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0},        \
     {1, 1, 1}, CONVT3D_LAYOUT_NCDHW, 0}

/* The same defaults for a problem that already exists (e.g. on the heap). */
CONVT3D_API void convt3d_problem_init(convt3d_problem *problem);

/* Checks every rule of the contract (sizes >= 1, padding >= 0, channels
 * divisible by groups, output_padding < max(stride, dilation), output size >= 1,
 * no int64 overflow of any element count).  CONVT3D_SUCCESS or the first
 * failure, with a message in convt3d_last_error(). */
CONVT3D_API convt3d_status convt3d_validate(const convt3d_problem *problem);

/* The output's D, H, W into out_size[3]; validates first (out_size untouched
 * on failure). */
CONVT3D_API convt3d_status convt3d_output_dims(const convt3d_problem *problem,
                                               int64_t out_size[3]);

/* Element counts of x, weight, y (bias has out_channels); validates first. */
CONVT3D_API convt3d_status convt3d_tensor_elems(const convt3d_problem *problem,
                                                int64_t *x_elems, int64_t *w_elems,
                                                int64_t *y_elems);

/* ---- devices ----------------------------------------------------------- */

typedef enum convt3d_device_kind {
    CONVT3D_DEVICE_AUTO = 0, /* CONVT3D_DEVICE if set, else a GPU if present, else CPU */
    CONVT3D_DEVICE_CPU = 1,
    CONVT3D_DEVICE_CUDA = 2
} convt3d_device_kind;

typedef struct convt3d_device {
    convt3d_device_kind kind;
    int ordinal; /* CUDA device number for CONVT3D_DEVICE_CUDA, else ignored */
} convt3d_device;

#define CONVT3D_DEVICE_AUTO_INIT {CONVT3D_DEVICE_AUTO, 0}
#define CONVT3D_DEVICE_CPU_INIT {CONVT3D_DEVICE_CPU, 0}

/* Parses "auto", "cpu", "cuda" (= "cuda:0") or "cuda:N" (N a decimal
 * ordinal, 0..9999), case-sensitive, no surrounding spaces.  Syntax only: whether
 * the GPU exists is checked by convt3d_plan_create().  *device untouched on
 * failure (CONVT3D_ERR_BAD_DEVICE_STRING). */
CONVT3D_API convt3d_status convt3d_device_parse(const char *text,
                                                convt3d_device *device);

/* Number of usable CUDA devices: 0 in a build without CUDA, on a machine
 * without a driver or GPU. */
CONVT3D_API int convt3d_cuda_device_count(void);

/* Nonzero if the library was built with CUDA support. */
CONVT3D_API int convt3d_has_cuda_support(void);

/* ---- plans ------------------------------------------------------------- */

typedef struct convt3d_plan convt3d_plan;

/* Validates the problem, resolves the device (AUTO: the environment variable
 * CONVT3D_DEVICE if set, else the first GPU if one is present, else the CPU),
 * picks the backend and repacks weight (and copies bias) once into the plan —
 * on the GPU for a CUDA plan.  weight and bias may be host or device pointers
 * and may be freed after this call.  bias is ignored (may be NULL) unless
 * problem->has_bias.  *plan is set only on success.
 * CONVT3D_PLAN_BACKEND=cpu|cuda|<kernel name> forces a choice for benchmarking. */
CONVT3D_API convt3d_status convt3d_plan_create(convt3d_plan **plan,
                                               const convt3d_problem *problem,
                                               convt3d_device device,
                                               const float *weight,
                                               const float *bias);

/* y = convT(x).  For a CPU plan x and y are host pointers.  For a CUDA plan
 * they are either both device pointers (used in place, work on the default
 * stream, synchronised before return) or both host pointers (staged through
 * device memory: correct but slower — time it separately).  Safe to call
 * concurrently on one plan with distinct y. */
CONVT3D_API convt3d_status convt3d_execute(const convt3d_plan *plan,
                                           const float *x, float *y);

/* As convt3d_execute, with the work enqueued on the caller's cudaStream_t
 * (passed as void*; NULL = default stream).  With device pointers the call
 * returns without synchronising: y is ready when the stream reaches it.
 * With host pointers it synchronises the stream before return.  For a CPU
 * plan stream must be NULL. */
CONVT3D_API convt3d_status convt3d_execute_on_stream(const convt3d_plan *plan,
                                                     const float *x, float *y,
                                                     void *stream);

/* Releases the plan and its repacked weights (host or device).  NULL is a no-op. */
CONVT3D_API void convt3d_plan_destroy(convt3d_plan *plan);

/* Where the plan runs, and the name of the kernel it chose (e.g.
 * "cpu/f32_phase_gather_avx512"); valid while the plan lives. */
CONVT3D_API convt3d_device convt3d_plan_device(const convt3d_plan *plan);
CONVT3D_API const char *convt3d_plan_kernel_name(const convt3d_plan *plan);

/* The plan's problem (a copy made at creation). */
CONVT3D_API const convt3d_problem *convt3d_plan_problem(const convt3d_plan *plan);

/* ---- one-shot ---------------------------------------------------------- */

/* plan_create + execute + plan_destroy.  Convenient, but repacks the weights
 * on every call: keep a plan when the weights are reused. */
CONVT3D_API convt3d_status convt3d_forward(const convt3d_problem *problem,
                                           convt3d_device device,
                                           const float *x, const float *weight,
                                           const float *bias, float *y);

/* ---- the reference ----------------------------------------------------- */

/* The oracle: a direct transcription of the formula above with double
 * accumulation, single-threaded, host pointers only.  Slow by design; every
 * backend is tested against it and convt3d-bench --verify uses it. */
CONVT3D_API convt3d_status convt3d_reference(const convt3d_problem *problem,
                                             const float *x, const float *weight,
                                             const float *bias, float *y);

#ifdef __cplusplus
}
#endif

#endif /* CONVT3D_H */
