/* The phase kernel for W stride 2 at three blocks a multiprocessor (<= 192
 * threads, <= 96 registers: entry.cuh), without slices or the fused
 * W pair; the planner takes it where the tile's shared memory fits three
 * times (phase_params-independent: phase_plan.occ3). */
#include "entry.cuh"

namespace ct3d {

phase_fn phase_kernel_s2_occ3(int oct, int features)
{
    if (features != 0)
        return nullptr;
    return oct == 8 ? phase_kernel<2, 4, 8, 0, 192, 3> : phase_kernel<2, 4, 4, 0, 192, 3>;
}

} // namespace ct3d
