/* The phase kernel family's device side: which instantiation runs a plan,
 * its shared-memory cap, its launch, and the family's registry entries
 * (host side in plan.cu). */
#include "../common/launch_util.h"
#include "../registry.h"
#include "instances.h"
#include "plan.h"

namespace ct3d {

namespace {

/* The instantiation of a plan (qw = 8/sw, oct 4 or 8); nullptr if none. */
phase_fn phase_kernel_for(const phase_plan &k)
{
    if (k.type != CONVT3D_F32) {
        if (k.oct != kHalfPhaseOct || k.qw * k.sw != 8 || k.occ3)
            return nullptr;
        return k.type == CONVT3D_F16    ? phase_kernel_f16(k.sw, phase_features(k.p))
               : k.type == CONVT3D_BF16 ? phase_kernel_bf16(k.sw, phase_features(k.p))
                                        : nullptr;
    }
    if (k.oct != 4 && k.oct != 8)
        return nullptr;
    if (k.sw == 2 && k.qw == 4 && k.occ3)
        return phase_kernel_s2_occ3(k.oct, phase_features(k.p));
    if (k.sw == 2 && k.qw == 4)
        return phase_kernel_s2(k.oct, phase_features(k.p));
    if (k.sw == 1 && k.qw == 8)
        return phase_kernel_s1(k.oct, phase_features(k.p));
    return nullptr;
}

cudaError_t phase_prepare(const cuda_plan &k, int smem_optin)
{
    const phase_fn fn = phase_kernel_for(*family_params<phase_plan>(k));
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    return raise_smem_cap(reinterpret_cast<const void *>(fn), smem_optin);
}

cudaError_t phase_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                         cudaStream_t stream)
{
    const phase_plan &pp = *family_params<phase_plan>(k);
    const phase_fn fn = phase_kernel_for(pp);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    phase_params p = pp.p;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    const bool ndhwc = s->layout == CONVT3D_LAYOUT_NDHWC;
    /* f32: 16-byte stores of 4 elements; half: 8-byte stores of 4, whose
     * alignment the same rule gives */
    p.vec_store = aligned16(a.y) && (ndhwc ? s->cout % 4 == 0 && s->cog % 4 == 0
                                           : s->out[2] % 4 == 0);
    fn<<<grid_of(p.nblocks), p.nthreads, k.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

const phase_variant kGrouped2x4x8 = {1, 2, 8}, kGrouped2x4x4 = {1, 2, 4},
                    kGrouped1x8x8 = {1, 1, 8}, kGrouped1x8x4 = {1, 1, 4},
                    kTiled2x4x8 = {0, 2, 8}, kTiled2x4x4 = {0, 2, 4}, kTiled1x8x8 = {0, 1, 8},
                    kTiled1x8x4 = {0, 1, 4};

} // namespace

#define CT3D_PHASE_ENTRY(var, name, variant)                                                     \
    extern const cuda_impl var = {name,                                                          \
                                  &variant,                                                      \
                                  phase_entry_applicable,                                        \
                                  phase_entry_passed_over,                                       \
                                  phase_entry_plan,                                              \
                                  phase_prepare,                                                 \
                                  nullptr,                                                       \
                                  phase_launch,                                                  \
                                  phase_entry_describe}
CT3D_PHASE_ENTRY(cuda_f32_phase_grouped_2x4x8, "cuda/f32_phase_grouped_2x4x8", kGrouped2x4x8);
CT3D_PHASE_ENTRY(cuda_f32_phase_grouped_2x4x4, "cuda/f32_phase_grouped_2x4x4", kGrouped2x4x4);
CT3D_PHASE_ENTRY(cuda_f32_phase_grouped_1x8x8, "cuda/f32_phase_grouped_1x8x8", kGrouped1x8x8);
CT3D_PHASE_ENTRY(cuda_f32_phase_grouped_1x8x4, "cuda/f32_phase_grouped_1x8x4", kGrouped1x8x4);
CT3D_PHASE_ENTRY(cuda_f32_phase_tiled_2x4x8, "cuda/f32_phase_tiled_2x4x8", kTiled2x4x8);
CT3D_PHASE_ENTRY(cuda_f32_phase_tiled_2x4x4, "cuda/f32_phase_tiled_2x4x4", kTiled2x4x4);
CT3D_PHASE_ENTRY(cuda_f32_phase_tiled_1x8x8, "cuda/f32_phase_tiled_1x8x8", kTiled1x8x8);
CT3D_PHASE_ENTRY(cuda_f32_phase_tiled_1x8x4, "cuda/f32_phase_tiled_1x8x4", kTiled1x8x4);
#undef CT3D_PHASE_ENTRY

/* f16 and bf16 x, bias and y (f32 weights and accumulation): the same body,
 * staging by widening register loads, rounding once on store; 8 channels a
 * thread only (params.h, phase_half_built). */
#define CT3D_PHASE_HALF_ENTRY(var, name, variant, dtype)                                          \
    extern const cuda_impl var = {name,                                                          \
                                  &variant,                                                      \
                                  phase_entry_applicable,                                        \
                                  phase_entry_passed_over,                                       \
                                  phase_entry_plan,                                              \
                                  phase_prepare,                                                 \
                                  nullptr,                                                       \
                                  phase_launch,                                                  \
                                  phase_entry_describe,                                          \
                                  dtype,                                                         \
                                  kMathAny}
CT3D_PHASE_HALF_ENTRY(cuda_f16_phase_grouped_2x4x8, "cuda/f16_phase_grouped_2x4x8", kGrouped2x4x8,
                      kDtypeF16);
CT3D_PHASE_HALF_ENTRY(cuda_f16_phase_grouped_1x8x8, "cuda/f16_phase_grouped_1x8x8", kGrouped1x8x8,
                      kDtypeF16);
CT3D_PHASE_HALF_ENTRY(cuda_f16_phase_tiled_2x4x8, "cuda/f16_phase_tiled_2x4x8", kTiled2x4x8,
                      kDtypeF16);
CT3D_PHASE_HALF_ENTRY(cuda_f16_phase_tiled_1x8x8, "cuda/f16_phase_tiled_1x8x8", kTiled1x8x8,
                      kDtypeF16);
CT3D_PHASE_HALF_ENTRY(cuda_bf16_phase_grouped_2x4x8, "cuda/bf16_phase_grouped_2x4x8",
                      kGrouped2x4x8, kDtypeBf16);
CT3D_PHASE_HALF_ENTRY(cuda_bf16_phase_grouped_1x8x8, "cuda/bf16_phase_grouped_1x8x8",
                      kGrouped1x8x8, kDtypeBf16);
CT3D_PHASE_HALF_ENTRY(cuda_bf16_phase_tiled_2x4x8, "cuda/bf16_phase_tiled_2x4x8", kTiled2x4x8,
                      kDtypeBf16);
CT3D_PHASE_HALF_ENTRY(cuda_bf16_phase_tiled_1x8x8, "cuda/bf16_phase_tiled_1x8x8", kTiled1x8x8,
                      kDtypeBf16);
#undef CT3D_PHASE_HALF_ENTRY

} // namespace ct3d
