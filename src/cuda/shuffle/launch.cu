/* The tensor-core shuffle kernel's __global__ wrapper, its instantiations
 * (TF32 and 3xTF32 on f32 data, k16 MMAs on f16 and bf16 data, each with
 * 16-byte or element copies of x), its launch and the family's registry
 * entries (params.h; body in kernel.cuh; host side in plan.cu). */
#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

/* 256 threads, 2 blocks a multiprocessor: three stages of 35 KB (f32; 17
 * KB on 16-bit data) and 64 accumulators a thread. */
template <int MATH, class T, bool VEC>
__global__ void __launch_bounds__(kShfThreads, 2) shuffle_kernel(const shf_params p)
{
    extern __shared__ __align__(16) float smem[];
    for (long long b = blockIdx.x; b < p.nblocks; b += gridDim.x) {
        shf_block<MATH, T, VEC>(p, smem, threadIdx.x, b);
        __syncthreads(); /* the next tile reuses the stages */
    }
}

typedef void (*shf_fn)(const shf_params);

template <int MATH, class T>
shf_fn shf_pick(bool vec)
{
    return vec ? shuffle_kernel<MATH, T, true> : shuffle_kernel<MATH, T, false>;
}

shf_fn shf_kernel_for(int math, convt3d_dtype type, bool vec)
{
    if (math == SHF_TF32)
        return shf_pick<SHF_TF32, float>(vec);
    if (math == SHF_3XTF32)
        return shf_pick<SHF_3XTF32, float>(vec);
    if (type == CONVT3D_F16)
        return shf_pick<SHF_HALF, f16_t>(vec);
    if (type == CONVT3D_BF16)
        return shf_pick<SHF_HALF, bf16_t>(vec);
    return nullptr;
}

/* Whether x allows the 16-byte copies: aligned, and an image's positions
 * (NCDHW: every channel row) or C_in/G (NDHWC: every position's channels
 * of a group) a multiple of the elements a copy holds. */
bool shf_vector_x(const shf_params &p, const void *x, convt3d_dtype type)
{
    const long long per = 16 / (long long)convt3d_dtype_size(type);
    return aligned16(x) && (p.cl ? p.cig % per == 0 : p.npos % per == 0);
}

cudaError_t shuffle_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                           cudaStream_t stream)
{
    const shuffle_plan &sp = *family_params<shuffle_plan>(k);
    shf_params p = sp.p;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    const shf_fn fn = shf_kernel_for(sp.math, s->y_type, shf_vector_x(p, a.x, s->x_type));
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    fn<<<grid_of(p.nblocks), kShfThreads, k.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

cudaError_t shuffle_prepare(const cuda_plan &k, int smem_optin)
{
    const shuffle_plan &sp = *family_params<shuffle_plan>(k);
    convt3d_dtype type = CONVT3D_F32;
    if (sp.math == SHF_HALF)
        type = k.impl->dtypes == kDtypeF16 ? CONVT3D_F16 : CONVT3D_BF16;
    for (int vec = 0; vec < 2; vec++) {
        const shf_fn fn = shf_kernel_for(sp.math, type, vec != 0);
        if (!fn)
            return cudaErrorInvalidDeviceFunction;
        const cudaError_t err = raise_smem_cap(reinterpret_cast<const void *>(fn), smem_optin);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

const shuffle_variant kTf32 = {SHF_TF32}, k3xTf32 = {SHF_3XTF32}, kHalf = {SHF_HALF};

} // namespace

extern const cuda_impl cuda_tf32_shuffle_mma = {
    "cuda/tf32_shuffle_mma", &kTf32,          shuffle_entry_applicable, shuffle_entry_passed_over,
    shuffle_entry_plan,      shuffle_prepare, nullptr,                  shuffle_launch,
    shuffle_entry_describe,  kDtypeF32,       kMathTf32,                1};
extern const cuda_impl cuda_3xtf32_shuffle_mma = {
    "cuda/3xtf32_shuffle_mma", &k3xTf32,        shuffle_entry_applicable,
    shuffle_entry_passed_over, shuffle_entry_plan, shuffle_prepare,
    nullptr,                   shuffle_launch,  shuffle_entry_describe,
    kDtypeF32,                 kMath3xTf32};
extern const cuda_impl cuda_f16_shuffle_mma = {
    "cuda/f16_shuffle_mma", &kHalf,          shuffle_entry_applicable, shuffle_entry_passed_over,
    shuffle_entry_plan,     shuffle_prepare, nullptr,                  shuffle_launch,
    shuffle_entry_describe, kDtypeF16,       kMathAny,                 0,
    1};
extern const cuda_impl cuda_bf16_shuffle_mma = {
    "cuda/bf16_shuffle_mma", &kHalf,          shuffle_entry_applicable, shuffle_entry_passed_over,
    shuffle_entry_plan,      shuffle_prepare, nullptr,                  shuffle_launch,
    shuffle_entry_describe,  kDtypeBf16,      kMathAny,                 0,
    1};

} // namespace ct3d
