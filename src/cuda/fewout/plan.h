/* The few-output-channel family's host side (plan.cu): where it applies,
 * its slices and tables, and its registry entry's applicability, cost rule,
 * planning and description. */
#ifndef CONVT3D_CUDA_FEWOUT_PLAN_H
#define CONVT3D_CUDA_FEWOUT_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan. */
struct fewout_plan {
    few_params p;     /* pointers left NULL */
    unsigned grid[2]; /* x: phase tiles x cluster size, y: groups */
};
static_assert(sizeof(fewout_plan) <= kPlanParamBytes, "fewout_plan fits cuda_plan.params");

/* Plans the kernel for s: fills *p (pointers NULL), the dynamic shared
 * memory and the grid (x: phase tiles x cluster size).  cs_max bounds the
 * cluster size (1, 2, 4 or 8; 0: kFewMaxCluster).  false with a reason in
 * why if it does not apply. */
bool plan_fewout(const convt3d_shape *s, int cs_max, few_params *p, size_t *smem,
                 unsigned grid[2], char *why, size_t why_size);

bool fewout_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, char *why, size_t why_size);
bool fewout_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, const cuda_overrides &ov, char *why,
                              size_t why_size);
bool fewout_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                       size_t why_size);
void fewout_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
