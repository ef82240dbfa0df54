/* The phase kernel's instantiations for W stride 2 (a thread: 4 q per W
 * phase x 2 W phases), in their own translation unit so they compile in
 * parallel.  The body is gpu_phase_kernel.h. */
#include "gpu_launch.h"
#include "gpu_phase_kernel.h"

namespace ct3d {

namespace {

/* At most 256 threads, at least 2 blocks a multiprocessor: <= 128 registers
 * (gpu_plan.cu keeps blocks at <= 256 threads). */
template <int SW, int QW, int OCT>
__global__ void __launch_bounds__(256, 2) phase_kernel(const phase_params p)
{
    extern __shared__ __align__(16) float smem[];
    for (long long vb = blockIdx.x; vb < p.nblocks; vb += gridDim.x) {
        phase_block<SW, QW, OCT>(p, smem, threadIdx.x, vb);
        __syncthreads(); /* the next block's staging overwrites shared memory */
    }
}

} // namespace

phase_fn phase_kernel_s2(int oct)
{
    return oct == 8 ? phase_kernel<2, 4, 8> : oct == 4 ? phase_kernel<2, 4, 4> : nullptr;
}

} // namespace ct3d
