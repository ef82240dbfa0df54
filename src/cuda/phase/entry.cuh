/* The phase kernel's __global__ entry, shared by the translation units that
 * instantiate it (s1.cu, s2.cu, s2f.cu, s2o3.cu).  MAXT threads a block at most and MINB blocks a
 * multiprocessor at least bound the registers: (256, 2) gives 128 a thread;
 * (192, 3) gives 96, for tiles of <= 192 threads whose shared memory lets
 * three blocks share a multiprocessor (18 warps instead of 12: the grouped
 * kernelbench tile is bound by latency, not by issue or shared memory). */
#ifndef CONVT3D_CUDA_PHASE_ENTRY_CUH
#define CONVT3D_CUDA_PHASE_ENTRY_CUH

#include "instances.h"
#include "kernel.cuh"

namespace ct3d {

namespace {

template <int SW, int QW, int OCT, int F, int MAXT, int MINB>
__global__ void __launch_bounds__(MAXT, MINB) phase_kernel(const phase_params p)
{
    extern __shared__ __align__(16) float smem[];
    for (long long vb = blockIdx.x; vb < p.nblocks; vb += gridDim.x) {
        phase_block<SW, QW, OCT, F>(p, smem, threadIdx.x, vb);
        __syncthreads(); /* the next block's staging overwrites shared memory */
    }
}

} // namespace

} // namespace ct3d

#endif
