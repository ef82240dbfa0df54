/* The phase kernel's builds for bf16 data (entry.cuh, phase_kernel_half_as),
 * in their own translation unit so they compile in parallel with the
 * others.  The body is kernel.cuh. */
#include "entry.cuh"

namespace ct3d {

phase_fn phase_kernel_bf16(int sw, int features)
{
    return phase_kernel_half_as<bf16_t>(sw, features);
}

} // namespace ct3d
