/* The registry of CUDA implementations (registry.h): the table, in the
 * order the automatic walk tries them.  Adding a kernel is its folder and
 * one line here. */
#include <string.h>

#include "registry.h"

namespace ct3d {

/* Defined in each family's launch.cu. */
extern const cuda_impl cuda_f32_dwtile_run8, cuda_f32_dwtile_run8_slotwise, cuda_f32_igemm_8x8,
    cuda_f32_phase_grouped_2x4x8, cuda_f32_phase_grouped_2x4x4, cuda_f32_phase_grouped_1x8x8,
    cuda_f32_phase_grouped_1x8x4, cuda_f32_phase_tiled_2x4x8, cuda_f32_phase_tiled_2x4x4,
    cuda_f32_phase_tiled_1x8x8, cuda_f32_phase_tiled_1x8x4, cuda_f32_depthwise_phase_4,
    cuda_f32_direct_generic;

namespace {

const cuda_impl *const kTable[] = {
    &cuda_f32_dwtile_run8,         /* dwtile/: depthwise NCDHW, one window for every W slot */
    &cuda_f32_dwtile_run8_slotwise, /* dwtile/: the same, slot by slot */
    &cuda_f32_igemm_8x8,           /* igemm/: many channels a group, <= 2 taps a W phase */
    &cuda_f32_phase_grouped_2x4x8, /* phase/: the variant the phase planner picks */
    &cuda_f32_phase_grouped_2x4x4,
    &cuda_f32_phase_grouped_1x8x8,
    &cuda_f32_phase_grouped_1x8x4,
    &cuda_f32_phase_tiled_2x4x8,
    &cuda_f32_phase_tiled_2x4x4,
    &cuda_f32_phase_tiled_1x8x8,
    &cuda_f32_phase_tiled_1x8x4,
    &cuda_f32_depthwise_phase_4, /* simple/: depthwise, any stride */
    &cuda_f32_direct_generic,    /* simple/: anything, last */
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

bool cuda_impl_plans(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                     const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                     size_t why_size)
{
    if (!e.applicable(e, s, lim, why, why_size))
        return false;
    plan_init(k, e);
    return e.plan(e, s, lim, ov, mode, k, why, why_size);
}

} // namespace ct3d
