/* The phase kernel family's host side (plan.cu): the planner and the
 * registry entries' applicability, cost rule, planning and description.
 * Launch and instantiations: launch.cu, s1.cu, s2.cu, s2f.cu, s2o3.cu. */
#ifndef CONVT3D_CUDA_PHASE_PLAN_H
#define CONVT3D_CUDA_PHASE_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan: the kernel's, and which
 * instantiation runs them. */
struct phase_plan {
    phase_params p; /* pointers left NULL */
    size_t smem;
    int all;       /* grouped (1) or tiled (0) */
    int sw, qw, oct;
    int occ3;      /* 1: the three-blocks-a-multiprocessor build (entry.cuh) */
    convt3d_dtype type; /* of x, bias and y: the build's element type */
};
static_assert(sizeof(phase_plan) <= kPlanParamBytes, "phase_plan fits cuda_plan.params");

/* A registry entry's variant (cuda_impl.variant). */
struct phase_variant {
    int all, sw, oct;
};

/* Whether the phase kernel computes s at all (any variant); why not. */
bool phase_kernel_applies(const convt3d_shape *s, char *why, size_t why_size);

/* Whether the phase kernel takes s in the automatic walk: it applies and
 * its planner finds a tiling (what its entries ask); the kernels before it
 * in the walk compare themselves with it (igemm, fewout). */
bool phase_takes(const convt3d_shape *s, const device_limits &lim, const cuda_overrides &ov);

/* Output channels a thread when the planner chooses for f32 data: 4 for
 * C_out/G <= 16, else 8 (half data: 8, kHalfPhaseOct).  On the H200
 * (`--random 200 --seed 3 --all-kernels`, bench/NOTES.md round 12), with
 * 5-16 output channels a group the best 4-channel variant beat the best
 * 8-channel one on 25 of 27 problems (1.06-2.4x; twice as many threads, and
 * a block of 8 half empty below 8 channels), kernelbench NDHWC included
 * (0.237 vs 0.280 ms); from 17 channels on the two split (unet and k4s2p1:
 * 8 channels 10-12% faster); above 16, 4 where the 8-channel plan would
 * have at most one block a multiprocessor (plan.cu,
 * eight_channel_blocks_few). */
constexpr long long kPhaseOct4MaxCog = 16;
inline int phase_auto_oct(const convt3d_shape *s) { return s->cog <= kPhaseOct4MaxCog ? 4 : 8; }

/* The tiling in mode want_all (1 grouped, 0 tiled, -1 the planner's
 * choice) with oct channels a thread (0: phase_auto_oct) and the
 * CONVT3D_CUDA_TILE override tile (NULL: none); false if none fits.  note
 * says when tile was ignored.  Half data (s->y_type f16/bf16): 8 channels a
 * thread whatever oct, and only tilings phase_half_built() has a build for
 * (a forced tile with slices at W stride 2 is ignored). */
bool plan_phase(const convt3d_shape *s, const device_limits &lim, int want_all, int oct,
                const char *tile, phase_plan *out, char *note, size_t note_size);

/* The registry name of a variant for data of the given type. */
const char *phase_name(int all, int sw, int oct, convt3d_dtype type = CONVT3D_F32);

/* The entries' host side. */
bool phase_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                            char *why, size_t why_size);
bool phase_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size);
bool phase_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size);
void phase_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
