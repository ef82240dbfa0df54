/* The tensor-core window kernel's __global__ wrapper, its four
 * instantiations (TF32 and 3xTF32 on f32 data, k16 MMAs on f16 and bf16
 * data), its launch and the family's registry entries (params.h;
 * body in kernel.cuh; host side in plan.cu). */
#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

/* 256 threads, 2 blocks a multiprocessor: a block's two stages take
 * 60-110 KB of shared memory on the suite's shapes, and the 32
 * accumulators, 16 fragment registers and the window offsets fit 128
 * registers. */
template <int MATH, class T>
__global__ void __launch_bounds__(kTcwThreads, 2) tcwin_kernel(const tcw_params p)
{
    extern __shared__ __align__(16) float smem[];
    for (long long b = blockIdx.x; b < p.nblocks; b += gridDim.x) {
        tcw_block<MATH, T>(p, smem, threadIdx.x, b);
        __syncthreads(); /* the next box reuses the stages */
    }
}

typedef void (*tcw_fn)(const tcw_params);

tcw_fn tcw_kernel_for(int math, convt3d_dtype type)
{
    if (math == TCW_TF32)
        return tcwin_kernel<TCW_TF32, float>;
    if (math == TCW_3XTF32)
        return tcwin_kernel<TCW_3XTF32, float>;
    if (type == CONVT3D_F16)
        return tcwin_kernel<TCW_HALF, f16_t>;
    if (type == CONVT3D_BF16)
        return tcwin_kernel<TCW_HALF, bf16_t>;
    return nullptr;
}

cudaError_t tcwin_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                         cudaStream_t stream)
{
    const tcwin_plan &tp = *family_params<tcwin_plan>(k);
    tcw_params p = tp.p;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    /* vector staging copies 16-byte words of x: the element staging fills
     * the same layout where x itself is not 16-byte aligned */
    if (!aligned16(a.x))
        p.vec = 0;
    const tcw_fn fn = tcw_kernel_for(tp.math, s->y_type);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    fn<<<grid_of(p.nblocks), kTcwThreads, k.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

cudaError_t tcwin_prepare(const cuda_plan &k, int smem_optin)
{
    const tcwin_plan &tp = *family_params<tcwin_plan>(k);
    convt3d_dtype type = CONVT3D_F32;
    if (tp.math == TCW_HALF)
        type = k.impl->dtypes == kDtypeF16 ? CONVT3D_F16 : CONVT3D_BF16;
    const tcw_fn fn = tcw_kernel_for(tp.math, type);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    return raise_smem_cap(reinterpret_cast<const void *>(fn), smem_optin);
}

const tcwin_variant kTf32 = {TCW_TF32}, k3xTf32 = {TCW_3XTF32}, kHalf = {TCW_HALF};

} // namespace

extern const cuda_impl cuda_tf32_tcwin_mma = {
    "cuda/tf32_tcwin_mma", &kTf32,         tcwin_entry_applicable, tcwin_entry_passed_over,
    tcwin_entry_plan,      tcwin_prepare,  nullptr,                tcwin_launch,
    tcwin_entry_describe,  kDtypeF32,      kMathTf32,              1};
extern const cuda_impl cuda_3xtf32_tcwin_mma = {
    "cuda/3xtf32_tcwin_mma", &k3xTf32,       tcwin_entry_applicable, tcwin_entry_passed_over,
    tcwin_entry_plan,        tcwin_prepare,  nullptr,                tcwin_launch,
    tcwin_entry_describe,    kDtypeF32,      kMath3xTf32};
extern const cuda_impl cuda_f16_tcwin_mma = {
    "cuda/f16_tcwin_mma", &kHalf,        tcwin_entry_applicable, tcwin_entry_passed_over,
    tcwin_entry_plan,     tcwin_prepare,  nullptr,                tcwin_launch,
    tcwin_entry_describe, kDtypeF16,      kMathAny,               0,
    1};
extern const cuda_impl cuda_bf16_tcwin_mma = {
    "cuda/bf16_tcwin_mma", &kHalf,        tcwin_entry_applicable, tcwin_entry_passed_over,
    tcwin_entry_plan,      tcwin_prepare,  nullptr,                tcwin_launch,
    tcwin_entry_describe,  kDtypeBf16,     kMathAny,               0,
    1};

} // namespace ct3d
