/* The simple kernels' host side (plan.cu): their parameters, the device
 * phase table they read, and the registry entries of the depthwise phase
 * kernel and the generic direct kernel. */
#ifndef CONVT3D_CUDA_SIMPLE_PLAN_H
#define CONVT3D_CUDA_SIMPLE_PLAN_H

#include <stddef.h>

#include "../common/plan_util.h"
#include "../registry.h"
#include "params.h"

namespace ct3d {

/* The family's parameters in a cuda_plan (pointers, the phase table
 * included, left NULL; phase_off and phase_by_o set). */
struct simple_plan {
    simple_params p;
};
static_assert(sizeof(simple_plan) <= kPlanParamBytes, "simple_plan fits cuda_plan.params");

/* The device phase table the simple kernels read: 3 ints {taps, k0, m0}
 * per (dim, phase index); off[d] is dim d's first entry and by_o[d] says
 * whether dim d is indexed by output coordinate rather than phase
 * (simple_params.phase). */
long long phase_table_ints(const convt3d_shape *s);
void phase_table_layout(const convt3d_shape *s, long long off[3], int by_o[3]);
void phase_table_fill(const convt3d_shape *s, int *table);

/* The parameters for ocb output channels a block (weight packing). */
void fill_simple(const convt3d_shape *s, long long ocb, simple_params *sp);
/* The depthwise kernel's 32-bit path where every index fits (p->fast32). */
void fill_depthwise32(const convt3d_shape *s, simple_params *p);
/* Threads of the four-output kernels (depthwise_thread, depthwise32_thread):
 * one per 4 outputs along W (NCDHW) or along C (NDHWC). */
long long four_output_threads(const convt3d_shape *s);

/* f32 depthwise NCDHW with fewer taps than stride phases (k_volume <
 * sD sH sW): the walk leaves it to cuda/f32_depthwise_phase_4, passing over
 * the depthwise tile kernel and the phase kernel (plan.cu). */
bool depthwise_four_preferred(const convt3d_shape *s);
bool depthwise_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                                const device_limits &lim, char *why, size_t why_size);
bool depthwise_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                          const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                          size_t why_size);
/* The few-input kernel: any C_in/G up to kFewInMaxCig when forced; the walk
 * takes it in NCDHW for C_in/G <= kFewInWalkMaxCig with C_in/G x k_volume
 * <= sD sH sW (fewin_entry_passed_over), and where the implicit-GEMM engine
 * would take the problem in either layout for C_in/G <= kFewInEngineMaxCig,
 * in NDHWC also for short sums (kFewInEngineLastMaxProducts)
 * (fewin_preferred_over_engine; the few-output kernel defers to it). */
constexpr int kFewInMaxCig = 16;
constexpr int kFewInWalkMaxCig = 8;
constexpr int kFewInEngineMaxCig = 2;
/* In NDHWC also any C_in/G it applies to (kFewInMaxCig) where the engine
 * would take the problem with at most this many products an output on
 * average (C_in/G x k_volume <= this x sD sH sW). */
constexpr int kFewInEngineLastMaxProducts = 8;
/* In NDHWC the walk takes the four-output kernel only for C_out/G from 2 to
 * this (simple/plan.cu, fewin_entry_passed_over). */
constexpr int kFewInLastMaxCog = 8;
/* At most n products an output on average: C_in/G x k_volume <= n x sD
 * sH sW. */
inline bool at_most_products_an_output(const convt3d_shape *s, long long n)
{
    return s->cig * s->k_volume <= n * s->s[0] * s->s[1] * s->s[2];
}
/* At most one: y's writes are the work.  The four-output kernel's walk
 * rule takes such problems, and the few-output kernel's small-problem rule
 * (fewout_preferred) leaves them to it. */
inline bool at_most_one_product_an_output(const convt3d_shape *s)
{
    return at_most_products_an_output(s, 1);
}
bool fewin_preferred_over_engine(const convt3d_shape *s, const device_limits &lim,
                                 const cuda_overrides &ov);
bool fewin_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                            const device_limits &lim, char *why, size_t why_size);
bool fewin_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size);
bool fewin_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size);
bool generic_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, char *why, size_t why_size);
bool generic_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                        const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                        size_t why_size);
void simple_entry_describe(const cuda_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
