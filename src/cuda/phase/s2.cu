/* The phase kernel's instantiations for W stride 2 (a thread: 4 q per W
 * phase x 2 W phases) without the fused W slot pair (s2f.cu has
 * those), in their own translation unit so they compile in parallel.  The
 * body is kernel.cuh. */
#include "entry.cuh"

namespace ct3d {

phase_fn phase_kernel_s2(int oct, int features)
{
    if (features & kFused)
        return phase_kernel_s2_fused(oct, features);
    if (features & kSliced)
        return oct == 8 ? phase_kernel<2, 4, 8, kSliced, 256, 2> : phase_kernel<2, 4, 4, kSliced, 256, 2>;
    return oct == 8 ? phase_kernel<2, 4, 8, 0, 256, 2> : phase_kernel<2, 4, 4, 0, 256, 2>;
}

} // namespace ct3d
