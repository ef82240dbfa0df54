/* The implicit-GEMM family's host side (plan.cu): where it applies, its
 * parameters, the heaviest-first block order, the cluster size, and the
 * registry entry's applicability, cost rule, planning and description. */
#ifndef CONVT3D_CUDA_IGEMM_PLAN_H
#define CONVT3D_CUDA_IGEMM_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan. */
struct igemm_plan {
    igemm_params p; /* pointers left NULL */
    igemm_shape t;  /* the instantiation */
    int math;       /* igemm_math */
    convt3d_dtype type; /* of x, bias and y */
    /* The A tile K-contiguous (igemm_cfg KC): 16-byte copies along the
     * channels (igemm_kc_applies; the launch falls back when x is not
     * 16-byte aligned). */
    bool kc;
    /* The A tile fetched in 16-byte runs of positions along W
     * (igemm_kernel.cuh's igemm_fetch_runs; igemm_runs_apply). */
    bool runs;
};

/* What an entry of the family computes (cuda_impl.variant; NULL: the FMA
 * entry on f32 data). */
struct igemm_variant {
    int math; /* igemm_math */
};
static_assert(sizeof(igemm_plan) <= kPlanParamBytes, "igemm_plan fits cuda_plan.params");

/* Whether the implicit-GEMM kernel computes problem s (strides, index
 * ranges; any layout and dilation, every inner product); why says why not. */
bool igemm_applies(const convt3d_shape *s, char *why, size_t why_size);

/* The inner product of a registry entry of the family (its variant). */
int igemm_entry_math(const cuda_impl &e);

/* Fills *p for warps shape t, inner product math, kc (igemm_kc_applies:
 * the shared memory of the K-contiguous A tile too) and cluster size cs (1
 * to kIgemmMaxCluster) and the block's shared memory; false if it does not
 * fit. */
bool igemm_fill(const convt3d_shape *s, igemm_shape t, int math, bool kc, int cs,
                igemm_params *p, size_t *smem);

/* Shared memory (bytes) a block of shape t needs with inner product math,
 * kc: with the K-contiguous A tile too (igemm_plan.kc). */
size_t igemm_smem_bytes(igemm_shape t, int math, bool kc);

/* Whether s allows the K-contiguous A tile with inner product math: tensor
 * cores, NDHWC, C_in/G a multiple of a 16-byte chunk of the element type. */
bool igemm_kc_applies(const convt3d_shape *s, int math);

/* Whether the A tile of p (filled for s) may go in 16-byte runs of
 * positions along W (8 half or 4 float): the tensor cores, NCDHW, and every
 * W phase's positions a multiple of the run, so that no run crosses a W
 * row. */
bool igemm_runs_apply(const convt3d_shape *s, const igemm_params &p, int math);

/* The shapes compiled for the tensor-core inner products (a subset of
 * igemm_shape_compiled: the ones the planner picks). */
bool igemm_tc_shape_compiled(igemm_shape t);

/* Whether the implicit-GEMM kernel with FMA is the better choice for s (the
 * automatic walk's cost rule), phase_takes: whether the phase kernel, which
 * comes next in the walk, takes s; why says why not. */
bool igemm_preferred(const convt3d_shape *s, bool phase_takes, const device_limits &lim,
                     char *why, size_t why_size);

/* The kernel's block shape and cluster size (CONVT3D_CUDA_IGEMM override
 * tile, NULL: none) and parameters; false if it does not fit. */
bool plan_igemm(const convt3d_shape *s, const device_limits &lim, const char *tile, int math,
                igemm_plan *out, size_t *smem, char *note, size_t note_size);

bool igemm_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                            char *why, size_t why_size);
bool igemm_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size);
bool igemm_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size);
void igemm_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
