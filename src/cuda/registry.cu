/* The registry of CUDA implementations (registry.h): the table, in the
 * order the automatic walk tries them.  Adding a kernel is its folder and
 * one line here. */
#include <stdio.h>
#include <string.h>

#include "registry.h"

namespace ct3d {

/* Defined in each family's launch.cu. */
extern const cuda_impl cuda_tf32_shuffle_mma, cuda_3xtf32_shuffle_mma, cuda_f16_shuffle_mma,
    cuda_bf16_shuffle_mma;
extern const cuda_impl cuda_tf32_tcwin_mma, cuda_3xtf32_tcwin_mma, cuda_f16_tcwin_mma,
    cuda_bf16_tcwin_mma, cuda_tf32_igemm_mma, cuda_3xtf32_igemm_mma, cuda_f16_igemm_mma,
    cuda_bf16_igemm_mma, cuda_f16_depthwise_phase_4, cuda_bf16_depthwise_phase_4,
    cuda_f16_direct_generic, cuda_bf16_direct_generic, cuda_f16_dwtile_run8,
    cuda_f32_dwlast, cuda_f16_dwlast, cuda_bf16_dwlast,
    cuda_f16_dwtile_run8_slotwise, cuda_bf16_dwtile_run8, cuda_bf16_dwtile_run8_slotwise,
    cuda_f16_fewout_ksplit, cuda_bf16_fewout_ksplit;
extern const cuda_impl cuda_f32_dwtile_run8, cuda_f32_dwtile_run8_slotwise, cuda_f32_fewout_ksplit,
    cuda_f32_igemm_8x8,
    cuda_f32_phase_grouped_2x4x8, cuda_f32_phase_grouped_2x4x4, cuda_f32_phase_grouped_1x8x8,
    cuda_f32_phase_grouped_1x8x4, cuda_f32_phase_tiled_2x4x8, cuda_f32_phase_tiled_2x4x4,
    cuda_f32_phase_tiled_1x8x8, cuda_f32_phase_tiled_1x8x4, cuda_f32_depthwise_phase_4,
    cuda_f32_direct_generic, cuda_f32_fewin_phase_4;
extern const cuda_impl cuda_f16_phase_grouped_2x4x8, cuda_f16_phase_grouped_1x8x8,
    cuda_f16_phase_tiled_2x4x8, cuda_f16_phase_tiled_1x8x8, cuda_bf16_phase_grouped_2x4x8,
    cuda_bf16_phase_grouped_1x8x8, cuda_bf16_phase_tiled_2x4x8, cuda_bf16_phase_tiled_1x8x8;

namespace {

const cuda_impl *const kTable[] = {
    /* fewout/ on half data: C_out/G <= 8 by its f32 rule, before the half
       MMAs, whose output-channel tiles are then mostly zeros (round 19) */
    &cuda_f16_fewout_ksplit,
    &cuda_bf16_fewout_ksplit,
    /* tensor cores: only in the modes and types that ask for them */
    &cuda_tf32_shuffle_mma, /* shuffle/: taps that do not overlap (kernel = stride, no
                               padding): one GEMM over every tap, outputs shuffled */
    &cuda_3xtf32_shuffle_mma,
    &cuda_f16_shuffle_mma,
    &cuda_bf16_shuffle_mma,
    &cuda_tf32_tcwin_mma,   /* tcwin/: a window staged once for every tap of a phase */
    &cuda_3xtf32_tcwin_mma,
    &cuda_f16_tcwin_mma,    /* tcwin/: f16 data, m16n8k16 on channel pairs */
    &cuda_bf16_tcwin_mma,
    &cuda_tf32_igemm_mma,   /* igemm/ with mma.sync, inputs rounded to TF32 */
    &cuda_3xtf32_igemm_mma, /* igemm/ with mma.sync, inputs split in two TF32 parts */
    &cuda_f16_igemm_mma,    /* igemm/ with mma.sync on f16 data (exact in TF32) */
    &cuda_bf16_igemm_mma,   /* the same on bf16 data */
    &cuda_f32_dwtile_run8,         /* dwtile/: depthwise NCDHW, one window for every W slot */
    &cuda_f32_dwtile_run8_slotwise, /* dwtile/: the same, slot by slot */
    &cuda_f16_dwtile_run8,           /* dwtile/: f16 data (the half MMA declines depthwise) */
    &cuda_f16_dwtile_run8_slotwise,
    &cuda_bf16_dwtile_run8,          /* dwtile/: bf16 data */
    &cuda_bf16_dwtile_run8_slotwise,
    &cuda_f32_dwlast,              /* dwlast/: depthwise NDHWC, channels in the lanes */
    &cuda_f16_dwlast,
    &cuda_bf16_dwlast,
    &cuda_f32_fewout_ksplit,       /* fewout/: C_out/G <= 3, C_in/G >= 16: K split over
                                      the threads of a block, positions in the lanes */
    &cuda_f32_fewin_phase_4,       /* simple/: NCDHW, <= 1 product an output: bound
                                      by the writes of y; four outputs a thread */
    &cuda_f32_igemm_8x8,           /* igemm/: many channels a group, <= 2 taps a W phase;
                                      what the phase kernel does not take */
    &cuda_f32_phase_grouped_2x4x8, /* phase/: the variant the phase planner picks */
    &cuda_f32_phase_grouped_2x4x4,
    &cuda_f32_phase_grouped_1x8x8,
    &cuda_f32_phase_grouped_1x8x4,
    &cuda_f32_phase_tiled_2x4x8,
    &cuda_f32_phase_tiled_2x4x4,
    &cuda_f32_phase_tiled_1x8x8,
    &cuda_f32_phase_tiled_1x8x4,
    &cuda_f16_phase_grouped_2x4x8, /* phase/: f16 data where the half MMA is passed over */
    &cuda_f16_phase_grouped_1x8x8,
    &cuda_f16_phase_tiled_2x4x8,
    &cuda_f16_phase_tiled_1x8x8,
    &cuda_bf16_phase_grouped_2x4x8, /* phase/: the same on bf16 data */
    &cuda_bf16_phase_grouped_1x8x8,
    &cuda_bf16_phase_tiled_2x4x8,
    &cuda_bf16_phase_tiled_1x8x8,
    &cuda_f32_depthwise_phase_4, /* simple/: depthwise, any stride */
    &cuda_f32_direct_generic,    /* simple/: anything, last */
    &cuda_f16_depthwise_phase_4,  /* simple/: f16 data, depthwise */
    &cuda_bf16_depthwise_phase_4, /* simple/: bf16 data, depthwise */
    &cuda_f16_direct_generic,    /* simple/: f16 data, anything */
    &cuda_bf16_direct_generic,   /* simple/: bf16 data, anything */
};
constexpr int kCount = (int)(sizeof kTable / sizeof kTable[0]);

} // namespace

int cuda_impl_count(void) { return kCount; }

const cuda_impl *cuda_impl_at(int index)
{
    return index >= 0 && index < kCount ? kTable[index] : nullptr;
}

void plan_init(cuda_plan *k, const cuda_impl &e)
{
    memset(k, 0, sizeof *k);
    k->impl = &e;
}

bool cuda_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                           char *why, size_t why_size)
{
    const unsigned types = e.dtypes ? e.dtypes : kDtypeF32;
    if (!(types & (1u << s->y_type))) {
        snprintf(why, why_size, "does not compute %s data", convt3d_dtype_name(s->y_type));
        return false;
    }
    if (e.maths && !(e.maths & (1u << s->math))) {
        snprintf(why, why_size, "serves the math mode%s %s only, not %s",
                 (e.maths & (e.maths - 1)) ? "s" : "",
                 (e.maths & kMathTf32) ? "tf32" : "3xtf32",
                 s->math == CONVT3D_MATH_F32 ? "f32" : s->math == CONVT3D_MATH_TF32 ? "tf32" : "3xtf32");
        return false;
    }
    return e.applicable(e, s, lim, why, why_size);
}

bool cuda_impl_plans(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                     const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                     size_t why_size)
{
    if (!cuda_entry_applicable(e, s, lim, why, why_size))
        return false;
    plan_init(k, e);
    return e.plan(e, s, lim, ov, mode, k, why, why_size);
}

} // namespace ct3d
