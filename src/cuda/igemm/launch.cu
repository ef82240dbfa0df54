/* The implicit-GEMM kernel's __global__ entry, its instantiations and its
 * launch (clusters of igemm_params.cs blocks).  The body is
 * kernel.cuh; host side: plan.cu. */
#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

/* 128 registers a thread: two 256-thread blocks (or four 128-thread ones) a
 * multiprocessor, 64 of them the accumulators. */
template <int WM, int WN, int MATH, class T, bool KC = false, bool RUNS = false>
__global__ void __launch_bounds__(32 * WM * WN, 16 / (WM * WN)) igemm_kernel(const igemm_params p)
{
    extern __shared__ __align__(16) float smem[];
    const long long nblocks = p.ntiles * p.cs;
    /* gridDim.x is a multiple of cs: a block keeps its rank in the cluster */
    for (long long vb = blockIdx.x; vb < nblocks; vb += gridDim.x) {
        igemm_block<WM, WN, MATH, T, KC, RUNS>(p, smem, threadIdx.x, vb);
        __syncthreads(); /* the next tile's copies overwrite shared memory */
    }
}

typedef void (*igemm_fn)(const igemm_params);

/* The FMA instantiations the planner may pick (igemm_shape_compiled). */
igemm_fn ffma_kernel_for(igemm_shape t)
{
    if (t.wm == 2 && t.wn == 4)
        return igemm_kernel<2, 4, IGEMM_FFMA, float>;
    if (t.wm == 4 && t.wn == 2)
        return igemm_kernel<4, 2, IGEMM_FFMA, float>;
    if (t.wm == 2 && t.wn == 2)
        return igemm_kernel<2, 2, IGEMM_FFMA, float>;
    if (t.wm == 4 && t.wn == 1)
        return igemm_kernel<4, 1, IGEMM_FFMA, float>;
    if (t.wm == 1 && t.wn == 4)
        return igemm_kernel<1, 4, IGEMM_FFMA, float>;
    if (t.wm == 2 && t.wn == 1)
        return igemm_kernel<2, 1, IGEMM_FFMA, float>;
    return nullptr;
}

/* The tensor-core instantiations of one inner product and data type
 * (igemm_tc_shape_compiled). */
template <int MATH, class T, bool KC = false, bool RUNS = false>
igemm_fn tc_kernel_for(igemm_shape t)
{
    if (t.wm == 2 && t.wn == 4)
        return igemm_kernel<2, 4, MATH, T, KC, RUNS>;
    if (t.wm == 4 && t.wn == 2)
        return igemm_kernel<4, 2, MATH, T, KC, RUNS>;
    if (t.wm == 4 && t.wn == 1)
        return igemm_kernel<4, 1, MATH, T, KC, RUNS>;
    return nullptr;
}

/* kc: the K-contiguous A copies (igemm_plan.kc, when x allows them); the
 * 16-byte runs along W (igemm_plan.runs) check their own bounds and need
 * no alignment of x. */
igemm_fn igemm_kernel_for(const igemm_plan &ip, bool kc)
{
    const igemm_shape t = ip.t;
    const convt3d_dtype type = ip.type;
    if (!igemm_shape_compiled(t))
        return nullptr;
    switch (ip.math) {
    case IGEMM_FFMA: return type == CONVT3D_F32 ? ffma_kernel_for(t) : nullptr;
    case IGEMM_TF32:
        if (type != CONVT3D_F32)
            return nullptr;
        return kc        ? tc_kernel_for<IGEMM_TF32, float, true>(t)
               : ip.runs ? tc_kernel_for<IGEMM_TF32, float, false, true>(t)
                         : tc_kernel_for<IGEMM_TF32, float>(t);
    case IGEMM_3XTF32:
        if (type != CONVT3D_F32)
            return nullptr;
        return kc        ? tc_kernel_for<IGEMM_3XTF32, float, true>(t)
               : ip.runs ? tc_kernel_for<IGEMM_3XTF32, float, false, true>(t)
                         : tc_kernel_for<IGEMM_3XTF32, float>(t);
    case IGEMM_HALF:
        if (kc)
            return type == CONVT3D_F16    ? tc_kernel_for<IGEMM_HALF, f16_t, true>(t)
                   : type == CONVT3D_BF16 ? tc_kernel_for<IGEMM_HALF, bf16_t, true>(t)
                                          : nullptr;
        if (ip.runs)
            return type == CONVT3D_F16    ? tc_kernel_for<IGEMM_HALF, f16_t, false, true>(t)
                   : type == CONVT3D_BF16 ? tc_kernel_for<IGEMM_HALF, bf16_t, false, true>(t)
                                          : nullptr;
        return type == CONVT3D_F16    ? tc_kernel_for<IGEMM_HALF, f16_t>(t)
               : type == CONVT3D_BF16 ? tc_kernel_for<IGEMM_HALF, bf16_t>(t)
                                      : nullptr;
    }
    return nullptr;
}

cudaError_t igemm_prepare(const cuda_plan &k, int smem_optin)
{
    const igemm_plan &ip = *family_params<igemm_plan>(k);
    for (int kc = 0; kc <= (ip.kc ? 1 : 0); kc++) { /* the launch may take either */
        const igemm_fn fn = igemm_kernel_for(ip, kc != 0);
        if (!fn)
            return cudaErrorInvalidDeviceFunction;
        cudaError_t err = raise_smem_cap(reinterpret_cast<const void *>(fn), smem_optin);
        if (err == cudaSuccess && ip.p.cs > kIgemmPortableCluster)
            err = cudaFuncSetAttribute(reinterpret_cast<const void *>(fn),
                                       cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

cudaError_t igemm_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                         cudaStream_t stream)
{
    const igemm_plan &ip = *family_params<igemm_plan>(k);
    const igemm_shape t = ip.t;
    (void)s;
    /* 16-byte copies of x need x 16-byte aligned (channel offsets are, by ip.kc) */
    const bool kc = ip.kc && ((unsigned long long)a.x & 15) == 0;
    const igemm_fn fn = igemm_kernel_for(ip, kc);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    igemm_params p = ip.p;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    /* whole clusters, within the grid limit */
    const long long cap = (0x7fffffffLL / p.cs) * p.cs;
    const long long blocks = p.ntiles * p.cs;
    return launch_in_clusters(fn, dim3((unsigned)(blocks < cap ? blocks : cap)),
                              dim3(32 * t.wm * t.wn), k.smem_bytes, stream, p.cs, p);
}

const igemm_variant kTf32 = {IGEMM_TF32}, k3xTf32 = {IGEMM_3XTF32}, kHalf = {IGEMM_HALF};

} // namespace

extern const cuda_impl cuda_f32_igemm_8x8 = {
    "cuda/f32_igemm_8x8", nullptr,      igemm_entry_applicable, igemm_entry_passed_over,
    igemm_entry_plan,     igemm_prepare, nullptr,               igemm_launch,
    igemm_entry_describe};
extern const cuda_impl cuda_tf32_igemm_mma = {
    "cuda/tf32_igemm_mma", &kTf32,       igemm_entry_applicable, igemm_entry_passed_over,
    igemm_entry_plan,      igemm_prepare, nullptr,               igemm_launch,
    igemm_entry_describe,  kDtypeF32,     kMathTf32,   1};
extern const cuda_impl cuda_3xtf32_igemm_mma = {
    "cuda/3xtf32_igemm_mma", &k3xTf32,     igemm_entry_applicable, igemm_entry_passed_over,
    igemm_entry_plan,        igemm_prepare, nullptr,               igemm_launch,
    igemm_entry_describe,    kDtypeF32,     kMath3xTf32};
extern const cuda_impl cuda_f16_igemm_mma = {
    "cuda/f16_igemm_mma", &kHalf,        igemm_entry_applicable, igemm_entry_passed_over,
    igemm_entry_plan,     igemm_prepare, nullptr,               igemm_launch,
    igemm_entry_describe, kDtypeF16,     kMathAny,              0,
    1};
extern const cuda_impl cuda_bf16_igemm_mma = {
    "cuda/bf16_igemm_mma", &kHalf,        igemm_entry_applicable, igemm_entry_passed_over,
    igemm_entry_plan,      igemm_prepare, nullptr,               igemm_launch,
    igemm_entry_describe,  kDtypeBf16,    kMathAny,              0,
    1};

} // namespace ct3d
