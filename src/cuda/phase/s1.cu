/* The phase kernel's instantiations for W stride 1 (a thread: 8 q per W
 * phase x 1 W phase), in their own translation unit so they compile in
 * parallel.  The body is kernel.cuh. */
#include "entry.cuh"

namespace ct3d {

phase_fn phase_kernel_s1(int oct, int features)
{
    if (features & kFused)
        return nullptr; /* W stride 1 has one W slot */
    if (features & kSliced)
        return oct == 8 ? phase_kernel<1, 8, 8, kSliced, 256, 2> : phase_kernel<1, 8, 4, kSliced, 256, 2>;
    return oct == 8 ? phase_kernel<1, 8, 8, 0, 256, 2> : phase_kernel<1, 8, 4, 0, 256, 2>;
}

} // namespace ct3d
