/* Types and constants shared by several CUDA kernel families and their
 * planners, host and device alike: plain structs, no CUDA API.
 *
 * Weights live on the device once per plan, repacked from PyTorch's
 * [C_in][Cog][kD][kH][kW] into
 *
 *     w[g][ob][ic][kd][kh][kw][oc]      oc < ocb, ob < nocb
 *
 * i.e. for each (group, output-channel block, input channel, tap) the block's
 * ocb output-channel weights are contiguous and 16-byte aligned (ocb is a
 * multiple of 4; channels past Cog are zero).  Each kernel picks its ocb
 * (cuda_plan.ocb, registry.h); gpu.cu repacks (common/pack.cu). */
#ifndef CONVT3D_CUDA_COMMON_TYPES_H
#define CONVT3D_CUDA_COMMON_TYPES_H

/* Helpers that serve the host planners and the kernels alike. */
#if defined(__CUDACC__) && !defined(CONVT3D_GPU_EMULATE)
#define CT3D_HD __host__ __device__ inline
#else
#define CT3D_HD inline
#endif

namespace ct3d {

/* Strides up to this in D and H have their phase tables in the kernel
 * parameters (phase, dwtile and the depthwise 32-bit path). */
constexpr int kMaxPhaseStride = 8;

/* One stride phase r of one dim: outputs o = q*s + r - p for q in
 * [qlo, qlo + qcount), each fed by taps k = k0 + t*kstep (t < taps) from
 * inputs i = q - m0 - t*dm. */
struct phase_entry {
    int taps, k0, m0, qlo, qcount;
};

/* Division by a runtime divisor d >= 1 of a numerator n < 2^31 with a
 * multiply-high and a shift (Granlund-Montgomery): the depthwise kernel's
 * index arithmetic, which 64-bit division made instruction-bound. */
struct fdiv {
    unsigned d, m, s;
};

/* 16-bit storage types of f16 and bf16 tensors (the bits; kernels widen
 * them to f32 on load and round on store: common/device.cuh). */
struct f16_t {
    unsigned short bits;
};
struct bf16_t {
    unsigned short bits;
};

} // namespace ct3d

#endif
