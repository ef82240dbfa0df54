/* The phase kernel's __global__ entry, shared by the translation units that
 * instantiate it (s1.cu, s2.cu, s2f.cu, s2o3.cu; half.cu for f16/bf16 data,
 * T the element type of x, bias and y).  MAXT threads a block at most and MINB blocks a
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

template <int SW, int QW, int OCT, int F, int MAXT, int MINB, class T = float>
__global__ void __launch_bounds__(MAXT, MINB) phase_kernel(const phase_params p)
{
    extern __shared__ __align__(16) float smem[];
    for (long long vb = blockIdx.x; vb < p.nblocks; vb += gridDim.x) {
        phase_block<SW, QW, OCT, F, T>(p, smem, threadIdx.x, vb);
        __syncthreads(); /* the next block's staging overwrites shared memory */
    }
}

/* The half-data builds (params.h, phase_half_built): T f16_t or bf16_t, 8
 * output channels a thread, W stride 1 with or without slices, W stride 2
 * with or without the fused slot pair; nullptr for anything else. */
template <class T>
phase_fn phase_kernel_half_as(int sw, int features)
{
    if (!phase_half_built(sw, features))
        return nullptr;
    if (sw == 1)
        return features & kSliced ? phase_kernel<1, 8, 8, kSliced, 256, 2, T>
                                  : phase_kernel<1, 8, 8, 0, 256, 2, T>;
    return features & kFused ? phase_kernel<2, 4, 8, kFused, 256, 2, T>
                             : phase_kernel<2, 4, 8, 0, 256, 2, T>;
}

} // namespace

} // namespace ct3d

#endif
