/* Launch helpers every kernel family's launch.cu uses (CUDA runtime). */
#ifndef CONVT3D_CUDA_COMMON_LAUNCH_UTIL_H
#define CONVT3D_CUDA_COMMON_LAUNCH_UTIL_H

#include <climits>

#include <cuda_runtime.h>
#include <stdint.h>

namespace ct3d {

/* Whether ptr allows the kernels' 16-byte loads and stores. */
inline bool aligned16(const void *ptr) { return ((uintptr_t)ptr & 15u) == 0; }

/* A 1-D grid of `blocks` blocks; those beyond INT_MAX are covered by the
 * kernels' grid-stride loops. */
inline unsigned grid_of(long long blocks)
{
    return (unsigned)(blocks < (long long)INT_MAX ? blocks : (long long)INT_MAX);
}

/* Raises fn's dynamic shared-memory cap to the device's opt-in limit
 * smem_optin (the same value for every plan, so a plan created later never
 * lowers the cap under an earlier plan's tile; the cap does not change
 * occupancy, the launch's own size does) and prefers shared memory over L1.
 * Current device. */
inline cudaError_t raise_smem_cap(const void *fn, int smem_optin)
{
    cudaError_t err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           smem_optin);
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   cudaSharedmemCarveoutMaxShared);
    return err;
}

} // namespace ct3d

#endif
