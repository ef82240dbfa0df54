/* The phase kernel's compiled instantiations (s1.cu, s2.cu, s2f.cu,
 * s2o3.cu, half_f16.cu, half_bf16.cu, each its own translation unit so
 * they compile in parallel). */
#ifndef CONVT3D_CUDA_PHASE_INSTANCES_H
#define CONVT3D_CUDA_PHASE_INSTANCES_H

#include "params.h"

namespace ct3d {

/* The phase kernel for W stride 1 (qw 8) or 2 (qw 4), oct output channels
 * a thread (4 or 8) and the features it uses (phase_features()); nullptr
 * where none is compiled. */
typedef void (*phase_fn)(const phase_params);

phase_fn phase_kernel_s1(int oct, int features);
phase_fn phase_kernel_s2(int oct, int features);
phase_fn phase_kernel_s2_fused(int oct, int features); /* features & kFused */
/* W stride 2 at three blocks a multiprocessor (phase_plan.occ3; features 0). */
phase_fn phase_kernel_s2_occ3(int oct, int features);
/* f16 and bf16 x, bias and y (f32 weights and accumulation) for W stride
 * sw, 8 output channels a thread (phase_half_built; half_f16.cu,
 * half_bf16.cu). */
phase_fn phase_kernel_f16(int sw, int features);
phase_fn phase_kernel_bf16(int sw, int features);

} // namespace ct3d

#endif
