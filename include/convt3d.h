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
 * Tensors are dense.  Each of x, weight, bias and y has a data type in the
 * problem (convt3d_dtype: f32, f16 or bf16, one type for all four; a mix
 * is CONVT3D_ERR_UNSUPPORTED_DATA_TYPE).  x and y are NCDHW
 * (PyTorch contiguous, the default) or NDHWC (PyTorch channels_last_3d); the
 * weight is always PyTorch's C_in x (C_out/G) x kD x kH x kW; the bias has
 * C_out entries.  Tensor pointers are void* so that one signature serves
 * every data type; a float* converts to them implicitly in C and C++.
 *
 * Conventions.  Every function that can fail returns a convt3d_status; results
 * come back through out-pointers, which are the last arguments -- except the
 * created plan, which is convt3d_plan_create()'s first argument (as in
 * cudnnCreate or pthread_create).  Out-pointers are written only on success.
 * The library never aborts and prints only when CONVT3D_VERBOSE is set (to
 * stderr).  On any error nothing is written to the output tensor, and
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
    CONVT3D_ERR_OVERFLOW,          /* an element count overflows int64, or a
                                    * per-dimension value exceeds CONVT3D_MAX_DIM_VALUE */
    CONVT3D_ERR_BAD_DEVICE_STRING, /* a device string that does not parse */
    CONVT3D_ERR_NO_CUDA_SUPPORT,   /* CUDA asked for, library built without it */
    CONVT3D_ERR_NO_DEVICE,         /* no usable GPU, or the ordinal is out of range */
    CONVT3D_ERR_POINTER_LOCATION,  /* a pointer lives where this plan cannot use it */
    CONVT3D_ERR_OUT_OF_MEMORY,     /* host or device allocation failed */
    CONVT3D_ERR_CUDA,              /* a CUDA runtime call failed (see last_error) */
    CONVT3D_ERR_INTERNAL,          /* a bug: please report it */
    CONVT3D_ERR_UNSUPPORTED_DATA_TYPE, /* a convt3d_dtype this version does not compute */
    CONVT3D_ERR_UNSUPPORTED_MATH_MODE, /* a convt3d_math_mode this version does not offer */
    CONVT3D_ERR_BAD_OPTIONS,       /* a convt3d_plan_options not set up by its init function */
    CONVT3D_ERR_UNKNOWN_IMPLEMENTATION, /* no implementation has the forced name */
    CONVT3D_ERR_NOT_APPLICABLE     /* the forced implementation does not apply (reason in
                                      last_error); no other one is tried in its place */
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

/* Element types of x, weight, bias and y, which share one type.  0 is f32,
 * so zeroed or CONVT3D_PROBLEM_INIT problems are f32.  With f16 and bf16
 * data every product and sum is computed in fp32 (the inputs are exact in
 * fp32) and y is rounded once to its type, to nearest even. */
typedef enum convt3d_dtype {
    CONVT3D_F32 = 0,
    CONVT3D_F16 = 1, /* IEEE binary16 */
    CONVT3D_BF16 = 2 /* bfloat16 */
} convt3d_dtype;

/* "f32", "f16", "bf16", or "unknown". */
CONVT3D_API const char *convt3d_dtype_name(convt3d_dtype type);
/* Bytes an element takes (4 or 2); 0 for a value that is not a convt3d_dtype. */
CONVT3D_API size_t convt3d_dtype_size(convt3d_dtype type);
/* Converts count elements of host memory from src_type to dst_type (to
 * f16 or bf16: round to nearest even, overflow to infinity; NaN stays NaN;
 * between equal types: a copy).  src and dst must not overlap.
 * CONVT3D_ERR_NULL_POINTER, CONVT3D_ERR_BAD_SIZE (count < 0) or
 * CONVT3D_ERR_UNSUPPORTED_DATA_TYPE. */
CONVT3D_API convt3d_status convt3d_convert(const void *src, convt3d_dtype src_type, void *dst,
                                           convt3d_dtype dst_type, int64_t count);

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
    convt3d_dtype x_type, w_type, bias_type, y_type; /* default CONVT3D_F32 */
} convt3d_problem;

/* PyTorch's defaults for everything but the sizes, which are set to 0 so that
 * forgetting one fails validation.  Usage:
 *   convt3d_problem p = CONVT3D_PROBLEM_INIT;  p.batch = 8; ... */
#define CONVT3D_PROBLEM_INIT                                                   \
    {0, 0, 0, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0},        \
     {1, 1, 1}, CONVT3D_LAYOUT_NCDHW, 0, CONVT3D_F32, CONVT3D_F32, CONVT3D_F32,  \
     CONVT3D_F32}

/* The same defaults for a problem that already exists (e.g. on the heap). */
CONVT3D_API void convt3d_problem_init(convt3d_problem *problem);

/* The largest in_size, kernel, stride, padding, dilation, output_padding and
 * output size, per dimension, that a problem may have (larger values are
 * refused with CONVT3D_ERR_OVERFLOW).  Element counts may go far beyond it. */
#define CONVT3D_MAX_DIM_VALUE ((int64_t)2147483647)

/* Checks every rule of the contract (sizes >= 1, padding >= 0, channels
 * divisible by groups, output_padding < max(stride, dilation), output size >= 1,
 * no int64 overflow of any element count, no per-dimension value above
 * CONVT3D_MAX_DIM_VALUE).  CONVT3D_SUCCESS or the first
 * failure, with a message in convt3d_last_error(). */
CONVT3D_API convt3d_status convt3d_validate(const convt3d_problem *problem);

/* PyTorch's output_size form (ConvTranspose3d.forward(x, output_size=...)):
 * sets problem->output_padding so that the output is out_size[3] (D, H, W).
 * Each size must lie in PyTorch's range [m, m + stride - 1], where m is the
 * output size with output_padding 0; the rest of the problem must be valid.
 * On failure (CONVT3D_ERR_BAD_OUTPUT_SIZE naming the dim and the range, or
 * the problem's own error) *problem is untouched. */
CONVT3D_API convt3d_status convt3d_set_output_size(convt3d_problem *problem,
                                                   const int64_t out_size[3]);

/* The problem as a benchdnn deconvolution descriptor in the dialect
 * convt3d-bench reads ("mb2ic32id8ih8iw8oc16od16oh16ow16kd3kh3kw3sd2sh2sw2pd1ph1pw1"
 * plus the fields the bench adds: layout, bias, output padding), so that any
 * failure message can be pasted into convt3d-bench.  Writes at most size
 * bytes including the terminating NUL; returns the length the whole string
 * needs (as snprintf), or -1 for a NULL problem.  Does not validate: an
 * invalid problem prints as it is. */
CONVT3D_API int convt3d_problem_to_string(const convt3d_problem *problem, char *buf,
                                          size_t size);

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

/* Several GPUs.  Each plan runs on the one GPU chosen when it is created
 * (cuda:N, or AUTO resolved then: CONVT3D_DEVICE, else cuda:0); ordinals are
 * the CUDA runtime's, so CUDA_VISIBLE_DEVICES renumbers them.  Plans on
 * different GPUs are independent and may be driven from different threads
 * at the same time.
 *   Where pointers may live: for a plan on cuda:N, weight/bias and x/y are
 *   each either host memory (staged through cuda:N's memory by the library;
 *   managed memory counts as host) or memory of cuda:N itself.  Memory of
 *   another GPU is refused with CONVT3D_ERR_POINTER_LOCATION -- also when
 *   peer access between the two is enabled: a plan never reads or writes
 *   across the interconnect behind the caller's back.  Copy the tensor to
 *   cuda:N (cudaMemcpyPeer) or make the plan on the tensor's GPU.
 *   Streams: a stream passed to convt3d_execute_on_stream() must belong to
 *   the plan's GPU, else CONVT3D_ERR_POINTER_LOCATION (detected with
 *   cudaStreamGetDevice where the CUDA runtime has it, 12.8 and later;
 *   with an older runtime the kernel launch fails with CONVT3D_ERR_CUDA).
 *   NULL, cudaStreamLegacy and cudaStreamPerThread mean the default stream
 *   of the plan's GPU.  On any of these errors nothing is queued and
 *   nothing is written to y.
 *   The current device: no convt3d call changes the calling thread's
 *   current CUDA device (cudaGetDevice) as it finds it; a call on a plan of
 *   another GPU switches to it for the call's duration only.  The caller
 *   need not make the plan's GPU current.  (CUDA 12's cudaSetDevice creates
 *   the device's primary context: a thread that never made any GPU
 *   current has cuda:0 current, so restoring it gives cuda:0 a context;
 *   a program that uses only cuda:N avoids that by cudaSetDevice(N) first.) */

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

/* ---- math modes and plan options --------------------------------------- */

/* How products of f32 data are computed.  A mode permits reduced precision;
 * it never requires it: a plan may keep an exact FMA kernel where tensor
 * cores do not pay (depthwise, few channels a group), and
 * convt3d_plan_kernel_name() says which it chose.  The CPU computes every
 * mode in full fp32.  For f16 and bf16 data the mode changes nothing: their
 * products are exact in every mode and accumulate in fp32. */
typedef enum convt3d_math_mode {
    CONVT3D_MATH_F32 = 0,   /* exact fp32 FMA, bitwise deterministic (the default) */
    CONVT3D_MATH_TF32 = 1,  /* tensor cores, inputs rounded to TF32 (to nearest), fp32
                               accumulation: relative L2 error about 1e-4..1e-3 */
    CONVT3D_MATH_3XTF32 = 2 /* split TF32: each operand a TF32 big and small part, three
                               tensor-core products, fp32 accumulation: fp32 accuracy
                               (relative L2 <= 1e-5) */
} convt3d_math_mode;

/* Options of a plan beyond the problem.  Always set one up with
 * convt3d_plan_options_init(), then change fields: the init function
 * records sizeof(convt3d_plan_options) as this header knows it in
 * struct_size, so that a later library with more fields reads only the
 * fields a program was built with and defaults the rest. */
typedef struct convt3d_plan_options {
    size_t struct_size;          /* set by convt3d_plan_options_init(); do not change */
    convt3d_math_mode math_mode; /* default CONVT3D_MATH_F32 */
    /* The exact name of the implementation to use (see
     * convt3d_implementation_name()), or NULL to let the library choose.
     * If it does not apply to the problem on the plan's device, plan
     * creation fails with CONVT3D_ERR_NOT_APPLICABLE and the reason: no other
     * implementation is taken in its place.  The string is read during
     * convt3d_plan_create_ex() only. */
    const char *implementation;
} convt3d_plan_options;

/* The defaults (exact fp32, the library's choice of implementation). */
CONVT3D_API void convt3d_plan_options_init(convt3d_plan_options *options);

/* ---- plans ------------------------------------------------------------- */

typedef struct convt3d_plan convt3d_plan;

/* Validates the problem, resolves the device (AUTO: the environment variable
 * CONVT3D_DEVICE if set, else the first GPU if one is present, else the CPU;
 * with a forced implementation, AUTO is that implementation's device), picks
 * the implementation (options: NULL for the defaults) and repacks weight
 * (and copies bias) once into the plan -- on the GPU for a CUDA plan.
 * weight and bias may be host pointers or device pointers of the plan's GPU
 * (both the same kind) and may be freed after this call.  bias is ignored (may be NULL) unless problem->has_bias.  *plan is
 * set only on success.
 * Environment overrides, for benchmarking: CONVT3D_IMPLEMENTATION=<name>
 * forces an implementation when options do not; CONVT3D_VERBOSE=1 prints
 * the chosen implementation and every candidate passed over, with its
 * reason, to stderr. */
CONVT3D_API convt3d_status convt3d_plan_create_ex(convt3d_plan **plan,
                                                  const convt3d_problem *problem,
                                                  convt3d_device device, const void *weight,
                                                  const void *bias,
                                                  const convt3d_plan_options *options);

/* convt3d_plan_create_ex() with the default options. */
CONVT3D_API convt3d_status convt3d_plan_create(convt3d_plan **plan,
                                               const convt3d_problem *problem,
                                               convt3d_device device, const void *weight,
                                               const void *bias);

/* y = convT(x).  For a CPU plan x and y are host pointers.  For a CUDA plan
 * they are either both device pointers of the plan's GPU (used in place,
 * work on that GPU's default stream, synchronised before return) or both
 * host pointers (staged through device memory: correct but slower -- time
 * it separately); pointers of another GPU are refused (see "Several GPUs"
 * above).  Safe to call concurrently on one plan with distinct y. */
CONVT3D_API convt3d_status convt3d_execute(const convt3d_plan *plan, const void *x, void *y);

/* As convt3d_execute, with the work enqueued on the caller's cudaStream_t
 * (passed as void*), a stream of the plan's GPU.  With device pointers and a non-NULL stream the call
 * returns without synchronising: y is ready when the stream reaches it.
 * NULL means the default stream synchronised before return, as in
 * convt3d_execute; for the legacy default stream without that
 * synchronisation pass cudaStreamLegacy (or cudaStreamPerThread).  With host
 * pointers the stream is synchronised before return.  For a CPU plan stream
 * must be NULL.  A plan may be destroyed while its work is still queued:
 * convt3d_plan_destroy() releases device memory with cudaFree, which waits
 * for the device.
 * CUDA graphs: a call with device pointers and a non-NULL stream only
 * enqueues kernels (no allocation, copy or synchronisation), so it can be
 * captured into a CUDA graph (cudaStreamBeginCapture, any capture mode, e.g.
 * torch.cuda.graph); the graph then reads x and writes y at the captured
 * addresses and uses the plan's weights, so the plan must outlive every
 * launch of the graph.  Host pointers or a NULL stream cannot be captured. */
CONVT3D_API convt3d_status convt3d_execute_on_stream(const convt3d_plan *plan, const void *x,
                                                     void *y, void *stream);

/* Releases the plan and its repacked weights (host or device).  NULL is a no-op. */
CONVT3D_API void convt3d_plan_destroy(convt3d_plan *plan);

/* Where the plan runs, and the exact name of the implementation it chose
 * (e.g. "cpu/f32_phase_gather_ncdhw__avx512", "cuda/f32_igemm_8x8"): the
 * name convt3d_plan_options.implementation accepts.  Static storage. */
CONVT3D_API convt3d_device convt3d_plan_device(const convt3d_plan *plan);
CONVT3D_API const char *convt3d_plan_kernel_name(const convt3d_plan *plan);
/* The plan's math mode (as asked for). */
CONVT3D_API convt3d_math_mode convt3d_plan_math_mode(const convt3d_plan *plan);

/* ---- implementations --------------------------------------------------- */

/* Every implementation compiled into this library, all backends, in each
 * backend's order of preference: index 0 .. count-1.  The names are static
 * strings "<backend>/<dtype>_<algorithm>_<layout/tile>__<isa>". */
CONVT3D_API int convt3d_implementation_count(void);
/* NULL when index is out of range. */
CONVT3D_API const char *convt3d_implementation_name(int index);
/* The device kind the implementation runs on (AUTO when index is out of range). */
CONVT3D_API convt3d_device_kind convt3d_implementation_device(int index);

/* Whether the named implementation would run problem on device with
 * options (options->implementation is ignored; NULL: the defaults):
 * CONVT3D_SUCCESS, CONVT3D_ERR_NOT_APPLICABLE with the reason in
 * convt3d_last_error(), CONVT3D_ERR_UNKNOWN_IMPLEMENTATION, or the problem's
 * or the device's own error.  A CUDA device is queried, nothing allocated. */
CONVT3D_API convt3d_status convt3d_implementation_applies(const char *name,
                                                          const convt3d_problem *problem,
                                                          convt3d_device device,
                                                          const convt3d_plan_options *options);

/* The plan's problem (a copy made at creation). */
CONVT3D_API const convt3d_problem *convt3d_plan_problem(const convt3d_plan *plan);

/* ---- one-shot ---------------------------------------------------------- */

/* plan_create + execute + plan_destroy.  Convenient, but repacks the weights
 * on every call: keep a plan when the weights are reused. */
CONVT3D_API convt3d_status convt3d_forward(const convt3d_problem *problem,
                                           convt3d_device device, const void *x,
                                           const void *weight, const void *bias, void *y);

/* ---- the reference ----------------------------------------------------- */

/* The oracle: a direct transcription of the formula above with double
 * accumulation, single-threaded, host pointers only.  Slow by design; every
 * backend is tested against it and convt3d-bench --verify uses it.  f16 and
 * bf16 problems are computed on their values widened to f32 (exact), each
 * output rounded to f32 from its double sum and then to its type; the tests
 * compare half outputs with the f32 reference on the same values instead,
 * so that the reference's own last rounding is not counted twice. */
CONVT3D_API convt3d_status convt3d_reference(const convt3d_problem *problem, const void *x,
                                             const void *weight, const void *bias, void *y);

#ifdef __cplusplus
}
#endif

#endif /* CONVT3D_H */
