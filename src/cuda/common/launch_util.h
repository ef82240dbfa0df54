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

/* Launches fn(p) on grid x block with smem bytes of dynamic shared memory,
 * in clusters of cs blocks along x when cs > 1 (grid.x a multiple of cs),
 * and returns the launch's error. */
template <class P>
inline cudaError_t launch_in_clusters(void (*fn)(P), dim3 grid, dim3 block, size_t smem,
                                      cudaStream_t stream, int cs, const P &p)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)cs;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = cs > 1 ? 1 : 0;
    cudaError_t err = cudaLaunchKernelEx(&cfg, fn, p);
    if (err == cudaSuccess)
        err = cudaGetLastError();
    return err;
}

} // namespace ct3d

#endif
