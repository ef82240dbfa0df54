/* The few-output-channel kernel's __global__ wrapper, its instantiations
 * (C_out/G 1 to 4), its launch and the family's registry entry (params.h;
 * body in kernel.cuh; host side in plan.cu). */
#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

/* 256 threads, 4 blocks a multiprocessor at least (<= 64 registers; CUDA 13,
 * sm_90: 74-87 unbounded, 4 bytes spilled for C_out/G 2 and 3 at 64): the
 * body holds 4 x C_out/G sums, 4 offsets and 4 masks, and each warp waits on
 * L1 loads, so it wants many warps. */
template <int COG>
__global__ void __launch_bounds__(kFewThreads, 4) fewout_kernel(const few_params p)
{
    extern __shared__ __align__(16) float smem[];
    few_block<COG>(p, smem, threadIdx.x, blockIdx.x, blockIdx.y);
}

typedef void (*few_fn)(const few_params);

few_fn few_kernel_for(int cog)
{
    switch (cog) {
    case 1: return fewout_kernel<1>;
    case 2: return fewout_kernel<2>;
    case 3: return fewout_kernel<3>;
    case 4: return fewout_kernel<4>;
    default: return nullptr;
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
    const few_fn fn = few_kernel_for(p.cog);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    const dim3 grid(fp.grid[0], fp.grid[1]);
    fn<<<grid, kFewThreads, k.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

/* Small grids stage up to kFewSmemSmallGrid bytes of weights: the cap of
 * every instantiation is raised to that constant (a later plan never lowers
 * it under an earlier one's).  The carveout is left to the driver: the body
 * reads x through L1, which a shared-memory preference would shrink. */
cudaError_t fewout_prepare(const cuda_plan &k, int smem_optin)
{
    (void)smem_optin;
    if (k.smem_bytes <= (size_t)kFewSmemMax)
        return cudaSuccess;
    for (int cog = 1; cog <= kFewMaxCog; cog++) {
        const cudaError_t err =
            cudaFuncSetAttribute(few_kernel_for(cog), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 kFewSmemSmallGrid);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

} // namespace

extern const cuda_impl cuda_f32_fewout_ksplit = {
    "cuda/f32_fewout_ksplit", nullptr,        fewout_entry_applicable, fewout_entry_passed_over,
    fewout_entry_plan,        fewout_prepare, nullptr,                 fewout_launch,
    fewout_entry_describe};

} // namespace ct3d
