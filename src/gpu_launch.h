/* Launchers of the CUDA backend's kernels (gpu_launch.cu): the only place
 * that knows the kernels' template instantiations and launch shapes. */
#ifndef CONVT3D_GPU_LAUNCH_H
#define CONVT3D_GPU_LAUNCH_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_plan.h"

namespace ct3d {

/* The phase kernel for W stride 1 (qw 8) or 2 (qw 4), oct output channels
 * a thread (4 or 8; gpu_launch.cu checks) and the features it uses
 * (phase_features()); nullptr where none is compiled. */
typedef void (*phase_fn)(const phase_params);

/* Whether ptr allows the kernels' 16-byte loads and stores. */
inline bool aligned16(const void *ptr) { return ((uintptr_t)ptr & 15u) == 0; }
phase_fn phase_kernel_s1(int oct, int features);
phase_fn phase_kernel_s2(int oct, int features);
phase_fn phase_kernel_s2_fused(int oct, int features); /* features & kFused */
/* W stride 2 at three blocks a multiprocessor (kernel_plan.occ3; features 0). */
phase_fn phase_kernel_s2_occ3(int oct, int features);

/* Raises the chosen phase kernel's dynamic shared-memory cap to the
 * device's opt-in limit smem_optin (the same value for every plan, so a plan
 * created later never lowers the cap under an earlier plan's tile; the cap
 * does not change occupancy, the launch's own size does) and prefers shared
 * memory over L1.  Current device. */
cudaError_t prepare_kernel(const kernel_plan &k, int smem_optin);
/* The same for one kernel function. */
cudaError_t raise_smem_cap(const void *fn, int smem_optin);

/* Enqueues the plan's kernel; the pointers in p are set by the caller. */
cudaError_t launch_phase(const kernel_plan &k, const phase_params &p, cudaStream_t stream);
cudaError_t launch_depthwise(const kernel_plan &k, const simple_params &p, cudaStream_t stream);
cudaError_t launch_generic(const kernel_plan &k, const simple_params &p, cudaStream_t stream);
/* The depthwise tile kernel (gpu_depthwise.cu), with its 16-byte paths
 * chosen from the pointers' alignment. */
cudaError_t launch_dwtile(const kernel_plan &k, const dw_params &plan, const float *x,
                          const float *w, const float *bias, float *y, cudaStream_t stream);

/* The implicit-GEMM kernel (gpu_igemm.cu): its shared-memory cap (as
 * prepare_kernel), its launch in clusters of p.cs. */
cudaError_t prepare_igemm(igemm_shape t, int smem_optin);
cudaError_t launch_igemm(igemm_shape t, const igemm_params &p, size_t smem, cudaStream_t stream);

/* dst (groups * nocb * cig * kvol * ocb floats) = repacked src (PyTorch layout). */
cudaError_t launch_pack(const simple_params &p, const float *src, float *dst, long long total,
                        cudaStream_t stream);

} // namespace ct3d

#endif
