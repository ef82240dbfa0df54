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

} // namespace ct3d

#endif
