/* The GPU baseline: cuDNN's convolution backward-data, which is exactly
 * ConvTranspose (legacy cudnn_cnn API of cuDNN 9).  The forward convolution
 * it differentiates maps y (C_out channels, size out) to x (C_in channels,
 * size in) with PyTorch's weight read as the forward filter: K = C_in, C =
 * C_out/G, kD, kH, kW in the NCHW filter format -- PyTorch's memory as is.
 * Cross-correlation, groups through cudnnSetConvolutionGroupCount, the
 * algorithm found by cudnnFindConvolutionBackwardDataAlgorithmEx and its
 * workspace allocated before the timing.  Backward-data has no bias: cuDNN
 * is timed without it and its output checked against the reference minus
 * the bias.
 *
 * The run's mode decides cuDNN's configuration (dnn_config), so that each
 * mode is compared with cuDNN in the same precision:
 *   fp32    float data, CUDNN_FMA_MATH, and only algorithms that ran in FMA
 *           math are taken: no TF32 (main() also sets NVIDIA_TF32_OVERRIDE=0)
 *   tf32    float data, CUDNN_TENSOR_OP_MATH (TF32 allowed; the fastest
 *           algorithm in any math but ALLOW_CONVERSION, which would permit
 *           fp16 down-conversion)
 *   3xtf32  both of those, two rows: fp32 is the equal-accuracy baseline,
 *           TF32 the fastest cuDNN at all
 *   f16     CUDNN_DATA_HALF tensors and filter, fp32 compute type
 *           (PSEUDO_HALF_CONFIG), tensor-op math
 *   bf16    CUDNN_DATA_BFLOAT16 likewise
 * A configuration cuDNN refuses is reported as unsupported, with cuDNN's
 * words. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "gpu_util.h"

#ifdef CONVT3D_HAVE_CUDNN
#include <cuda_runtime_api.h>
#include <cudnn.h>

const char *cudnn_version(void)
{
    static char buf[64];
    const size_t v = cudnnGetVersion();
    snprintf(buf, sizeof buf, "cuDNN %zu.%zu.%zu", v / 10000, (v / 100) % 100, v % 100);
    return buf;
}

/* One handle per device, created on first use (creation is slow) with its
 * device current: a cuDNN handle is bound to the device current at
 * cudnnCreate, so each GPU of --device=all gets its own. */
enum { CUDNN_MAX_DEVICES = 64 };
static cudnnHandle_t handles[CUDNN_MAX_DEVICES];

void cudnn_release(void)
{
    for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++)
        if (handles[i]) {
            cudaSetDevice((int)i);
            cudnnDestroy(handles[i]);
            handles[i] = NULL;
        }
}

/* One cuDNN configuration: a row of the table. */
typedef struct dnn_config {
    const char *name;       /* the row's name */
    cudnnDataType_t data;   /* of x, y and the filter */
    cudnnMathType_t math;   /* asked on the convolution descriptor */
    int fma_only;           /* take only algorithms that ran in FMA math (no TF32) */
    bench_prec prec;
} dnn_config;

/* The configurations of a mode (at most two); returns how many. */
static int configs_for(convt3d_dtype dtype, convt3d_math_mode math, dnn_config out[2])
{
    if (dtype == CONVT3D_F16) {
        out[0] = (dnn_config){"cuDNN", CUDNN_DATA_HALF, CUDNN_TENSOR_OP_MATH, 0, PREC_F16};
        return 1;
    }
    if (dtype == CONVT3D_BF16) {
        out[0] = (dnn_config){"cuDNN", CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_OP_MATH, 0, PREC_BF16};
        return 1;
    }
    const dnn_config fp32 = {"cuDNN", CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, 1, PREC_FP32};
    const dnn_config tf32 = {"cuDNN", CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, 0, PREC_TF32};
    if (math == CONVT3D_MATH_TF32) {
        out[0] = tf32;
        return 1;
    }
    if (math == CONVT3D_MATH_3XTF32) {
        out[0] = fp32;
        out[0].name = "cuDNN fp32";
        out[1] = tf32;
        out[1].name = "cuDNN tf32";
        return 2;
    }
    out[0] = fp32;
    return 1;
}

static const char *math_name(cudnnMathType_t m, cudnnDataType_t data)
{
    switch (m) {
    case CUDNN_FMA_MATH: return "FMA";
    case CUDNN_TENSOR_OP_MATH: return "tensor-op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor-op with conversion";
    default: return data == CUDNN_DATA_FLOAT ? "default (TF32 allowed)" : "default";
    }
}

typedef struct dnn_state {
    cudnnHandle_t h;
    const dnn_config *cfg;
    cudnnTensorDescriptor_t dy, dx; /* dy: our x (C_in), dx: our y (C_out) */
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionBwdDataAlgo_t algo;
    void *ws;
    size_t ws_bytes;
    gpu_bufs *g;
} dnn_state;

/* cuDNN 9's "not supported" family (3000..3999): a limit of the library,
 * not an error of the bench. */
static int not_supported(cudnnStatus_t s) { return s >= 3000 && s < 4000; }

#define CUDNN_CHECK(call)                                                                      \
    do {                                                                                       \
        cudnnStatus_t s_ = (call);                                                             \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                      \
            char detail_[256] = "";                                                            \
            cudnnGetLastErrorString(detail_, sizeof detail_);                                  \
            impl_set(r,                                                                        \
                     not_supported(s_) ? IMPL_UNSUPPORTED : IMPL_FAILED,                      \
                     "%s failed: %s%s%s", #call, cudnnGetErrorString(s_),                      \
                     detail_[0] ? ": " : "", detail_);                                         \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

#define CUDA_CHECK(call)                                                                       \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            impl_set(r, IMPL_FAILED, "%s failed: %s", #call, cudaGetErrorString(e_));          \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

static void state_release(dnn_state *st)
{
    if (st->ws)
        cudaFree(st->ws);
    if (st->dy)
        cudnnDestroyTensorDescriptor(st->dy);
    if (st->dx)
        cudnnDestroyTensorDescriptor(st->dx);
    if (st->wd)
        cudnnDestroyFilterDescriptor(st->wd);
    if (st->cd)
        cudnnDestroyConvolutionDescriptor(st->cd);
    memset(st, 0, sizeof *st);
}

/* Why cuDNN cannot state this problem, or NULL.  cuDNN describes tensors with
 * int dims and strides, and derives x's size from y's through the forward
 * formula, which loses an output_padding of stride or more (legal in PyTorch
 * when smaller than the dilation). */
static const char *inexpressible(const bench_problem *bp, char *buf, size_t size)
{
    const convt3d_problem *p = &bp->p;
    if (bp->x_elems > INT_MAX || bp->y_elems > INT_MAX || bp->w_elems > INT_MAX) {
        snprintf(buf, size, "a tensor has more than 2^31-1 elements (cuDNN uses int strides)");
        return buf;
    }
    for (int d = 0; d < 3; d++) {
        const int64_t fwd = (bp->out[d] + 2 * p->padding[d] -
                             p->dilation[d] * (p->kernel[d] - 1) - 1) / p->stride[d] + 1;
        if (fwd != p->in_size[d]) {
            snprintf(buf, size,
                     "output_padding[%d]=%lld >= stride[%d]=%lld: the forward convolution of "
                     "the %lld-long output has %lld positions, not %lld",
                     d, (long long)p->output_padding[d], d, (long long)p->stride[d],
                     (long long)bp->out[d], (long long)fwd, (long long)p->in_size[d]);
            return buf;
        }
    }
    return NULL;
}

static void tensor_dims(const convt3d_problem *p, int64_t c, const int64_t sp[3], int dims[5],
                        int strides[5])
{
    const int64_t n = p->batch;
    dims[0] = (int)n;
    dims[1] = (int)c;
    for (int d = 0; d < 3; d++)
        dims[2 + d] = (int)sp[d];
    const int64_t hw = sp[1] * sp[2], dhw = sp[0] * hw;
    if (p->layout == CONVT3D_LAYOUT_NDHWC) {
        strides[0] = (int)(c * dhw);
        strides[1] = 1;
        strides[2] = (int)(c * hw);
        strides[3] = (int)(c * sp[2]);
        strides[4] = (int)c;
    } else {
        strides[0] = (int)(c * dhw);
        strides[1] = (int)dhw;
        strides[2] = (int)hw;
        strides[3] = (int)sp[2];
        strides[4] = 1;
    }
}

static const char *algo_name(cudnnConvolutionBwdDataAlgo_t a)
{
    switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
    }
}

static int describe(dnn_state *st, const bench_problem *bp, impl_result *r)
{
    const convt3d_problem *p = &bp->p;
    int dims[5], strides[5];
    int pad[3], str[3], dil[3];
    const int wdims[5] = {(int)p->in_channels, (int)(p->out_channels / p->groups),
                          (int)p->kernel[0], (int)p->kernel[1], (int)p->kernel[2]};
    for (int d = 0; d < 3; d++) {
        pad[d] = (int)p->padding[d];
        str[d] = (int)p->stride[d];
        dil[d] = (int)p->dilation[d];
    }
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&st->dy));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&st->dx));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&st->wd));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&st->cd));
    const cudnnDataType_t dt = st->cfg->data;
    tensor_dims(p, p->in_channels, p->in_size, dims, strides);
    CUDNN_CHECK(cudnnSetTensorNdDescriptor(st->dy, dt, 5, dims, strides));
    tensor_dims(p, p->out_channels, bp->out, dims, strides);
    CUDNN_CHECK(cudnnSetTensorNdDescriptor(st->dx, dt, 5, dims, strides));
    CUDNN_CHECK(cudnnSetFilterNdDescriptor(st->wd, dt, CUDNN_TENSOR_NCHW, 5, wdims));
    /* fp32 compute type for every data type: fp32 accumulation, as convt3d */
    CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(st->cd, 3, pad, str, dil,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(st->cd, (int)p->groups));
    CUDNN_CHECK(cudnnSetConvolutionMathType(st->cd, st->cfg->math));
    return 0;
}

/* The result to take from cuDNN's search (fastest first), or -1: in fp32
 * only one that ran in FMA math (else one in no tensor-op math), so that
 * fp32 stays fp32; otherwise the fastest that ran, but for
 * ALLOW_CONVERSION (fp16 down-conversion, less accurate than the mode). */
static int pick_result(const dnn_config *cfg, const cudnnConvolutionBwdDataAlgoPerf_t *perf,
                       int returned)
{
    for (int i = 0; i < returned; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS &&
            (cfg->fma_only ? perf[i].mathType == CUDNN_FMA_MATH
                           : perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
            return i;
    if (!cfg->fma_only)
        return -1;
    for (int i = 0; i < returned; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType != CUDNN_TENSOR_OP_MATH &&
            perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
            return i;
    return -1;
}

/* cuDNN's own search, on our buffers, with a workspace as large as the
 * hungriest algorithm wants (within half the free memory); then a workspace
 * of exactly the winner's size. */
static int find_algo(dnn_state *st, impl_result *r)
{
    gpu_bufs *g = st->g;
    size_t want = 0, free_b = 0, total_b = 0;
    for (int a = 0; a < CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT; a++) {
        size_t b = 0;
        if (cudnnGetConvolutionBackwardDataWorkspaceSize(st->h, st->wd, st->dy, st->cd, st->dx,
                                                         (cudnnConvolutionBwdDataAlgo_t)a,
                                                         &b) == CUDNN_STATUS_SUCCESS &&
            b > want)
            want = b;
    }
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (want > free_b / 2)
        want = free_b / 2;
    void *search_ws = NULL;
    if (want)
        CUDA_CHECK(cudaMalloc(&search_ws, want));
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT * 2];
    int returned = 0;
    cudnnStatus_t s = cudnnFindConvolutionBackwardDataAlgorithmEx(
        st->h, st->wd, g->w, st->dy, g->x[0], st->cd, st->dx, g->y[0],
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT * 2, &returned, perf, search_ws, want);
    if (search_ws)
        cudaFree(search_ws);
    CUDNN_CHECK(s);
    const int pick = pick_result(st->cfg, perf, returned);
    if (pick < 0) {
        impl_set(r, IMPL_UNSUPPORTED,
                 "no backward-data algorithm runs this problem in %s%s (%d tried%s%s)",
                 prec_name(st->cfg->prec), st->cfg->fma_only ? " FMA math" : "", returned,
                 returned ? "; the first: " : "",
                 returned ? cudnnGetErrorString(perf[0].status) : "");
        return -1;
    }
    st->algo = perf[pick].algo;
    st->ws_bytes = perf[pick].memory;
    CUDNN_CHECK(cudnnSetConvolutionMathType(st->cd, perf[pick].mathType));
    if (st->ws_bytes)
        CUDA_CHECK(cudaMalloc(&st->ws, st->ws_bytes));
    snprintf(r->detail, sizeof r->detail, "%s, %s math, workspace %.1f MB, found in %.3f ms",
             algo_name(st->algo), math_name(perf[pick].mathType, st->cfg->data),
             (double)st->ws_bytes * 1e-6, (double)perf[pick].time);
    return 0;
}

static int enqueue(void *ctx, int set, void *stream, char *err, size_t err_size)
{
    dnn_state *st = ctx;
    const float one = 1.0f, zero = 0.0f;
    (void)stream; /* the handle is bound to the buffers' stream */
    cudnnStatus_t s = cudnnConvolutionBackwardData(st->h, &one, st->wd, st->g->w, st->dy,
                                                   st->g->x[set], st->cd, st->algo, st->ws,
                                                   st->ws_bytes, &zero, st->dx, st->g->y[set]);
    if (s != CUDNN_STATUS_SUCCESS) {
        snprintf(err, err_size, "cudnnConvolutionBackwardData failed: %s", cudnnGetErrorString(s));
        return -1;
    }
    return 0;
}

static int setup(dnn_state *st, const bench_problem *bp, gpu_bufs *g, impl_result *r)
{
    CUDA_CHECK(cudaSetDevice(g->ordinal));
    if (g->ordinal < 0 || (size_t)g->ordinal >= sizeof handles / sizeof handles[0]) {
        impl_set(r, IMPL_SKIPPED, "device ordinal %d is beyond the bench's handle table",
                 g->ordinal);
        return -1;
    }
    if (!handles[g->ordinal])
        CUDNN_CHECK(cudnnCreate(&handles[g->ordinal]));
    st->h = handles[g->ordinal];
    st->g = g;
    CUDNN_CHECK(cudnnSetStream(st->h, (cudaStream_t)g->stream));
    if (describe(st, bp, r) || find_algo(st, r))
        return -1;
    return 0;
}

/* One configuration: set up, a first run into a poisoned output (checked),
 * then the timing. */
static void run_config(const bench_problem *bp, gpu_bufs *g, const bench_settings *s,
                       const dnn_config *cfg, impl_result *r)
{
    char why[256], err[512];
    dnn_state st;
    memset(&st, 0, sizeof st);
    st.cfg = cfg;
    impl_init(r, cfg->name, 1);
    impl_set_prec(r, cfg->prec, s);
    r->without_bias = bp->p.has_bias;
    if (inexpressible(bp, why, sizeof why)) {
        impl_set(r, IMPL_UNSUPPORTED, "%s", why);
        return;
    }
    if (setup(&st, bp, g, r)) {
        state_release(&st);
        return;
    }
    double first = 0;
    if (gpu_poison(g, g->y[0], g->y_elems, err, sizeof err) || gpu_sync(g, err, sizeof err)) {
        impl_set(r, IMPL_FAILED, "%s", err);
        state_release(&st);
        return;
    }
    const double t0 = bench_now();
    if (enqueue(&st, 0, g->stream, err, sizeof err) || gpu_sync(g, err, sizeof err) ||
        (first = bench_now() - t0,
         gpu_download(g, bp->yt, g->y[0], bp->y_elems, err, sizeof err))) {
        impl_set(r, IMPL_FAILED, "%s", err);
        state_release(&st);
        return;
    }
    if (impl_verify(r, bp, bp->p.has_bias ? bp->b : NULL)) {
        state_release(&st);
        return;
    }
    if (gpu_time(&s->timing, enqueue, &st, g, first, &r->time, err, sizeof err))
        impl_set(r, IMPL_FAILED, "while timing: %s", err);
    else
        r->state = IMPL_OK;
    state_release(&st);
}

int run_cudnn(const bench_problem *bp, gpu_bufs *g, const bench_settings *s, impl_result *r)
{
    dnn_config cfg[2];
    const int n = configs_for(bp->dtype, s->math, cfg);
    for (int i = 0; i < n; i++)
        run_config(bp, g, s, &cfg[i], &r[i]);
    return n;
}

#else /* !CONVT3D_HAVE_CUDNN */

const char *cudnn_version(void) { return "cuDNN: not built (configure did not find cudnn.h)"; }
void cudnn_release(void) {}

int run_cudnn(const bench_problem *bp, gpu_bufs *g, const bench_settings *s, impl_result *r)
{
    (void)g, (void)s;
    impl_init(r, "cuDNN", 1);
    r->without_bias = bp->p.has_bias;
    impl_set(r, IMPL_SKIPPED, "not built: configure did not find cuDNN next to CUDA");
    return 1;
}

#endif
