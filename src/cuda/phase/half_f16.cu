/* The phase kernel's builds for f16 data (entry.cuh, phase_kernel_half_as),
 * in their own translation unit so they compile in parallel with the
 * others.  The body is kernel.cuh. */
#include "entry.cuh"

namespace ct3d {

phase_fn phase_kernel_f16(int sw, int features) { return phase_kernel_half_as<f16_t>(sw, features); }

} // namespace ct3d
