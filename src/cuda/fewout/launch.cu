/* The few-output-channel kernel's __global__ wrapper, its instantiations
 * (C_out/G 1 to 8 x the H window's kFewThSizes x f32 / f16 / bf16), its
 * launch and the family's registry entries (params.h; body in kernel.cuh;
 * host side in plan.cu). */
#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

/* 256 threads, 4 blocks a multiprocessor at least for C_out/G <= 4 (<= 64
 * registers; CUDA 13, sm_90: no spill at any TH), 3 above (<= 80: at 64
 * the 32 sums of C_out/G = 8 spilled): the body holds 4 x C_out/G sums and
 * a window of TH + 3 inputs, and each warp waits on L1 loads, so it wants
 * many warps. */
template <int COG, int TH, class T>
__global__ void __launch_bounds__(kFewThreads, COG > 4 ? 3 : 4) fewout_kernel(const few_params p)
{
    extern __shared__ __align__(16) float smem[];
    few_block<COG, TH, T>(p, smem, threadIdx.x, blockIdx.x, blockIdx.y);
}

typedef void (*few_fn)(const few_params);

template <int COG, class T>
few_fn few_kernel_th(int th)
{
    switch (th) {
    case kFewThSizes[0]: return fewout_kernel<COG, kFewThSizes[0], T>;
    case kFewThSizes[1]: return fewout_kernel<COG, kFewThSizes[1], T>;
    case kFewThSizes[2]: return fewout_kernel<COG, kFewThSizes[2], T>;
    case kFewThSizes[3]: return fewout_kernel<COG, kFewThSizes[3], T>;
    default: return nullptr;
    }
}
static_assert(kFewThCount == 4, "few_kernel_th names every window size");

template <class T>
few_fn few_kernel_typed(int cog, int th)
{
    switch (cog) {
    case 1: return few_kernel_th<1, T>(th);
    case 2: return few_kernel_th<2, T>(th);
    case 3: return few_kernel_th<3, T>(th);
    case 4: return few_kernel_th<4, T>(th);
    case 5: return few_kernel_th<5, T>(th);
    case 6: return few_kernel_th<6, T>(th);
    case 7: return few_kernel_th<7, T>(th);
    case 8: return few_kernel_th<8, T>(th);
    default: return nullptr;
    }
}

/* The instantiation for the plan: its entry's data type, C_out/G, window. */
few_fn few_kernel_for(const cuda_plan &k)
{
    const few_params &p = family_params<fewout_plan>(k)->p;
    switch (k.impl->dtypes) {
    case kDtypeF16: return few_kernel_typed<f16_t>(p.cog, p.th);
    case kDtypeBf16: return few_kernel_typed<bf16_t>(p.cog, p.th);
    default: return few_kernel_typed<float>(p.cog, p.th);
    }
}

cudaError_t fewout_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                          cudaStream_t stream)
{
    (void)s;
    const fewout_plan &fp = *family_params<fewout_plan>(k);
    few_params p = fp.p;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    const few_fn fn = few_kernel_for(k);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    /* grid[0] is a multiple of the cluster size */
    return launch_in_clusters(fn, dim3(fp.grid[0], fp.grid[1]), dim3(kFewThreads),
                              k.smem_bytes, stream, p.cs, p);
}

/* Small grids stage up to kFewSmemSmallGrid bytes of weights: the cap of
 * the plan's instantiation is raised to that constant (so a later plan
 * never lowers it under an earlier one's).  The carveout is left to the
 * driver: the body reads x through L1, which a shared-memory preference
 * would shrink. */
cudaError_t fewout_prepare(const cuda_plan &k, int smem_optin)
{
    (void)smem_optin;
    if (k.smem_bytes <= (size_t)kFewSmemMax)
        return cudaSuccess;
    const few_fn fn = few_kernel_for(k);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    return cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                kFewSmemSmallGrid);
}

} // namespace

extern const cuda_impl cuda_f32_fewout_ksplit = {
    "cuda/f32_fewout_ksplit", nullptr,        fewout_entry_applicable, fewout_entry_passed_over,
    fewout_entry_plan,        fewout_prepare, nullptr,                 fewout_launch,
    fewout_entry_describe};

/* f16 and bf16 x, bias and y: the same body, x widened on load, f32 weights
 * and sums, each output rounded once. */
extern const cuda_impl cuda_f16_fewout_ksplit = {
    "cuda/f16_fewout_ksplit", nullptr,        fewout_entry_applicable, fewout_entry_passed_over,
    fewout_entry_plan,        fewout_prepare, nullptr,                 fewout_launch,
    fewout_entry_describe,    kDtypeF16,      kMathAny};
extern const cuda_impl cuda_bf16_fewout_ksplit = {
    "cuda/bf16_fewout_ksplit", nullptr,        fewout_entry_applicable, fewout_entry_passed_over,
    fewout_entry_plan,         fewout_prepare, nullptr,                 fewout_launch,
    fewout_entry_describe,     kDtypeBf16,     kMathAny};

} // namespace ct3d
