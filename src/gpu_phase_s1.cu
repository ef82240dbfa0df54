/* The phase kernel's instantiations for W stride 1 (a thread: 8 q per W
 * phase x 1 W phase), in their own translation unit so they compile in
 * parallel.  The body is gpu_phase_kernel.h. */
#include "gpu_launch.h"
#include "gpu_phase_kernel.h"

namespace ct3d {

namespace {

/* At most 256 threads, at least 2 blocks a multiprocessor: <= 128 registers
 * (gpu_plan.cu keeps blocks at <= 256 threads). */
template <int SW, int QW, int OCT, int F>
__global__ void __launch_bounds__(256, 2) phase_kernel(const phase_params p)
{
    extern __shared__ __align__(16) float smem[];
    for (long long vb = blockIdx.x; vb < p.nblocks; vb += gridDim.x) {
        phase_block<SW, QW, OCT, F>(p, smem, threadIdx.x, vb);
        __syncthreads(); /* the next block's staging overwrites shared memory */
    }
}

} // namespace

phase_fn phase_kernel_s1(int oct, int features)
{
    if (features & kFused)
        return nullptr; /* W stride 1 has one W slot */
    if (features & kSliced)
        return oct == 8 ? phase_kernel<1, 8, 8, kSliced> : phase_kernel<1, 8, 4, kSliced>;
    return oct == 8 ? phase_kernel<1, 8, 8, 0> : phase_kernel<1, 8, 4, 0>;
}

} // namespace ct3d
