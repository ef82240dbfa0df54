/* The tensor-core shuffle family's host side (plan.cu): where it applies,
 * its parameters, and its registry entries' applicability, cost rule,
 * planning and description. */
#ifndef CONVT3D_CUDA_SHUFFLE_PLAN_H
#define CONVT3D_CUDA_SHUFFLE_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan. */
struct shuffle_plan {
    shf_params p; /* pointers left NULL */
    int math;     /* shf_math */
};
static_assert(sizeof(shuffle_plan) <= kPlanParamBytes, "shuffle_plan fits cuda_plan.params");

/* What an entry of the family computes (cuda_impl.variant). */
struct shuffle_variant {
    int math; /* shf_math */
};

/* Plans the kernel for s: fills *p (pointers NULL) and the dynamic shared
 * memory a block needs; false with a reason in why if it does not apply
 * (taps that overlap or are cropped: kernel != stride, padding or output
 * padding; NDHWC; more than kShfMaxTaps taps; sizes past int indexing;
 * shared memory above smem_optin). */
bool plan_shuffle(const convt3d_shape *s, int smem_optin, shf_params *p, size_t *smem, char *why,
                  size_t why_size);

bool shuffle_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, char *why, size_t why_size);
bool shuffle_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                               const device_limits &lim, const cuda_overrides &ov, char *why,
                               size_t why_size);
bool shuffle_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                        const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                        size_t why_size);
void shuffle_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
