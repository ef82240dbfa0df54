/* The phase kernel's instantiations for W stride 2 with the fused W slot
 * pair (phase_params.fuse_w), apart from s2.cu so the two compile
 * in parallel.  The body is kernel.cuh. */
#include "entry.cuh"

namespace ct3d {

phase_fn phase_kernel_s2_fused(int oct, int features)
{
    if (features & kSliced)
        return oct == 8 ? phase_kernel<2, 4, 8, kSliced | kFused, 256, 2>
                        : phase_kernel<2, 4, 4, kSliced | kFused, 256, 2>;
    return oct == 8 ? phase_kernel<2, 4, 8, kFused, 256, 2> : phase_kernel<2, 4, 4, kFused, 256, 2>;
}

} // namespace ct3d
