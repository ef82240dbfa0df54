/* The channels-last depthwise family's host side (plan.cu): where it
 * applies, its block shape and tables, and its registry entries'
 * applicability, cost rule, planning and description. */
#ifndef CONVT3D_CUDA_DWLAST_PLAN_H
#define CONVT3D_CUDA_DWLAST_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan: the vector build (V = 4, where
 * the channels allow it: has4) and the scalar one, which the launch takes
 * when a pointer is not aligned for the vectors. */
struct dwlast_plan {
    dl_params p4, p1;     /* pointers left NULL */
    unsigned grid4[2], grid1[2]; /* x: position blocks, y: channel chunks */
    size_t smem4, smem1;
    int has4;
};
static_assert(sizeof(dwlast_plan) <= kPlanParamBytes, "dwlast_plan fits cuda_plan.params");

/* Plans the kernel for s with V channels a thread (4 or 1): fills *p
 * (pointers NULL), the dynamic shared memory and the grid (x: blocks of
 * positions, y: channel chunks).  false with a reason in why if it does not
 * apply with that V. */
bool plan_dwlast(const convt3d_shape *s, int v, dl_params *p, size_t *smem, unsigned grid[2],
                 char *why, size_t why_size);

bool dwlast_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, char *why, size_t why_size);
bool dwlast_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, const cuda_overrides &ov, char *why,
                              size_t why_size);
bool dwlast_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                       size_t why_size);
void dwlast_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
