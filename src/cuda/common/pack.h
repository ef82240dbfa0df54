/* The weight repack every kernel family shares (pack.cu): PyTorch's
 * [C_in][Cog][kD][kH][kW] into w[g][ob][ic][kd][kh][kw][oc < ocb]
 * (common/types.h), on the device. */
#ifndef CONVT3D_CUDA_COMMON_PACK_H
#define CONVT3D_CUDA_COMMON_PACK_H

#include <cuda_runtime_api.h>

#include "internal.h"

namespace ct3d {

/* dst (groups * nocb * cig * kvol * ocb floats, total) = repacked src
 * (device pointers), enqueued on stream. */
cudaError_t launch_pack(const convt3d_shape *s, int ocb, int nocb, const float *src, float *dst,
                        long long total, cudaStream_t stream);

/* w[0..total) rounded in place to TF32 (to nearest, ties away: what the
 * TF32 kernels do to their other operand), for entries whose weights go to
 * the tensor cores as they are (cuda_impl.tf32_weights). */
cudaError_t launch_round_tf32(float *w, long long total, cudaStream_t stream);

/* dst[0..total) = src narrowed to f16 or bf16 (type), for entries that
 * stage 16-bit weights (cuda_impl.half_weights); exact for weights that
 * were widened from that type. */
cudaError_t launch_narrow(const float *src, unsigned short *dst, long long total,
                          convt3d_dtype type, cudaStream_t stream);

} // namespace ct3d

#endif
