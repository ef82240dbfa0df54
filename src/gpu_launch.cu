/* The CUDA backend's __global__ kernels, their template instantiations and
 * launch shapes.  The per-block/per-thread bodies live in gpu_*_kernel.h. */
#include <climits>

#include "gpu_launch.h"
#include "gpu_simple_kernels.h"

namespace ct3d {

namespace {

/* Blocks beyond this are covered by the grid-stride loops. */
constexpr long long kMaxGrid = INT_MAX;

unsigned grid_of(long long blocks) { return (unsigned)(blocks < kMaxGrid ? blocks : kMaxGrid); }

__global__ void __launch_bounds__(256) depthwise_kernel(const simple_params p, long long total)
{
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x)
        depthwise_thread(p, t);
}

template <int MT>
__global__ void __launch_bounds__(256) depthwise32_kernel(const simple_params p, unsigned total)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total)
        depthwise32_thread<MT>(p, t);
}

__global__ void __launch_bounds__(256) generic_kernel(const simple_params p)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < p.y_elems;
         e += (long long)gridDim.x * blockDim.x)
        generic_thread(p, e);
}

__global__ void __launch_bounds__(256) pack_kernel(const simple_params p, const float *src,
                                                    float *dst, long long total)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x)
        pack_thread(p, src, dst, e);
}

/* The instantiations the planner may pick (gpu_plan.cu: qw = 8/sw, oct 4
 * or 8), compiled in gpu_phase_s1.cu and gpu_phase_s2.cu. */
phase_fn phase_kernel_for(const kernel_plan &k)
{
    if (k.oct != 4 && k.oct != 8)
        return nullptr;
    if (k.sw == 2 && k.qw == 4 && k.occ3)
        return phase_kernel_s2_occ3(k.oct, phase_features(k.phase));
    if (k.sw == 2 && k.qw == 4)
        return phase_kernel_s2(k.oct, phase_features(k.phase));
    if (k.sw == 1 && k.qw == 8)
        return phase_kernel_s1(k.oct, phase_features(k.phase));
    return nullptr;
}

} // namespace

cudaError_t prepare_kernel(const kernel_plan &k, int smem_optin)
{
    if (k.kind == KERNEL_IGEMM)
        return prepare_igemm(k.ig, smem_optin);
    if (k.kind != KERNEL_PHASE)
        return cudaSuccess;
    const phase_fn fn = phase_kernel_for(k);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    return raise_smem_cap(reinterpret_cast<const void *>(fn), smem_optin);
}

cudaError_t raise_smem_cap(const void *fn, int smem_optin)
{
    cudaError_t err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           smem_optin);
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   cudaSharedmemCarveoutMaxShared);
    return err;
}

cudaError_t launch_phase(const kernel_plan &k, const phase_params &p, cudaStream_t stream)
{
    const phase_fn fn = phase_kernel_for(k);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    fn<<<grid_of(p.nblocks), p.nthreads, k.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

cudaError_t launch_depthwise(const kernel_plan &k, const simple_params &p, cudaStream_t stream)
{
    const long long total = p.layout_ndhwc
                                ? p.n * p.out[0] * p.out[1] * p.out[2] * ((p.cout + 3) / 4)
                                : p.n * p.cout * p.out[0] * p.out[1] * ((p.out[2] + 3) / 4);
    if (p.fast32) { /* the planner checked total < 2^31: one thread each */
        const unsigned blocks = (unsigned)((total + k.threads - 1) / k.threads);
        if (p.dw_mt == 1)
            depthwise32_kernel<1><<<blocks, k.threads, 0, stream>>>(p, (unsigned)total);
        else if (p.dw_mt == 2)
            depthwise32_kernel<2><<<blocks, k.threads, 0, stream>>>(p, (unsigned)total);
        else
            depthwise32_kernel<4><<<blocks, k.threads, 0, stream>>>(p, (unsigned)total);
    } else
        depthwise_kernel<<<grid_of(k.blocks), k.threads, 0, stream>>>(p, total);
    return cudaGetLastError();
}

cudaError_t launch_generic(const kernel_plan &k, const simple_params &p, cudaStream_t stream)
{
    generic_kernel<<<grid_of(k.blocks), k.threads, 0, stream>>>(p);
    return cudaGetLastError();
}

cudaError_t launch_pack(const simple_params &p, const float *src, float *dst, long long total,
                        cudaStream_t stream)
{
    const int threads = 256;
    pack_kernel<<<grid_of((total + threads - 1) / threads), threads, 0, stream>>>(p, src, dst,
                                                                               total);
    return cudaGetLastError();
}

} // namespace ct3d
