/* The depthwise tile family's host side (plan.cu): where it applies, its
 * block shape and tables, and its two registry entries' applicability,
 * cost rule, planning and description. */
#ifndef CONVT3D_CUDA_DWTILE_PLAN_H
#define CONVT3D_CUDA_DWTILE_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan. */
struct dwtile_plan {
    dw_params p;      /* pointers left NULL */
    unsigned grid[3]; /* x: spatial tiles, y: C, z: N */
};
static_assert(sizeof(dwtile_plan) <= kPlanParamBytes, "dwtile_plan fits cuda_plan.params");

/* Plans the dwtile kernel for s: fills *p (pointers NULL), the dynamic
 * shared memory, threads a block and the grid (x: spatial tiles, y: C,
 * z: N).  false with a reason in why if it does not apply. */
bool plan_dwtile(const convt3d_shape *s, dw_params *p, size_t *smem, int *threads,
                 unsigned grid[3], char *why, size_t why_size);

/* The entries' variant (cuda_impl.variant): the run8 (fast) build or the
 * slot-by-slot one. */
struct dwtile_variant {
    int fast;
};

bool dwtile_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, char *why, size_t why_size);
bool dwtile_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, const cuda_overrides &ov, char *why,
                              size_t why_size);
bool dwtile_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                       size_t why_size);
void dwtile_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
