/* The tensor-core window family's host side (plan.cu): where it applies,
 * its box shape and parameters, and its registry entries' applicability,
 * cost rule, planning and description. */
#ifndef CONVT3D_CUDA_TCWIN_PLAN_H
#define CONVT3D_CUDA_TCWIN_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan. */
struct tcwin_plan {
    tcw_params p; /* pointers left NULL */
    int math;     /* tcw_math */
};
static_assert(sizeof(tcwin_plan) <= kPlanParamBytes, "tcwin_plan fits cuda_plan.params");

/* What an entry of the family computes (cuda_impl.variant). */
struct tcwin_variant {
    int math; /* tcw_math */
};

/* Plans the kernel for s: fills *p (pointers NULL) and the dynamic shared
 * memory a block needs; false with a reason in why if it does not apply
 * (strides above kTcwMaxStride, more than kTcwMaxTaps taps a phase, sizes
 * past int indexing, a window that does not fit smem_optin bytes).  vec:
 * -1 automatic (plan.cu's kTcwVecByDefault, on since round 27: vector
 * staging where it applies and two blocks still fit a multiprocessor), 1
 * vector staging wherever it applies and fits, 0 element staging. */
bool plan_tcwin(const convt3d_shape *s, int smem_optin, int vec, tcw_params *p, size_t *smem,
                char *why, size_t why_size);

bool tcwin_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                            char *why, size_t why_size);
bool tcwin_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size);
bool tcwin_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size);
void tcwin_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
