/* The registry of CUDA implementations (registry.cu): an ordered table of
 * entries, one per implementation, each with its exact name, a pure
 * applicability predicate, an optional cost rule of the automatic walk, its
 * planning into a generic plan, its shared-memory preparation, its launch
 * and a description for CONVT3D_VERBOSE.  gpu.cu walks the table:
 * automatically the first entry that applies and is not passed over, or the
 * forced entry if it applies, never another.
 *
 * The order (bench/NOTES.md has the H200 measurements behind it):
 *   0'. the few-output kernel's f16/bf16 entries (1b. below, by its f32
 *      rule), then the tensor-core shuffle kernel (shuffle/, mma.sync), in
 *      the modes that ask for tensor cores, for problems whose taps do not
 *      overlap (kernel = stride, no padding, NCDHW): one GEMM over every
 *      tap, the outputs shuffled into place through shared memory
 *      (shuffle/plan.cu, shuffle_entry_passed_over, says where);
 *   0a. the tensor-core window kernel (tcwin/, mma.sync), only in the
 *      numeric modes that ask for tensor cores: TF32 and 3xTF32 math on f32
 *      data (m16n8k8) and f16/bf16 data (m16n8k16 on 16-bit channel pairs),
 *      per stride phase, an input window staged once per chunk of channels
 *      for every tap of the phase (tcwin/plan.cu, tcwin_entry_passed_over,
 *      says where automatically);
 *   0. the implicit-GEMM engine with tensor cores (igemm/, mma.sync), only
 *      in the numeric modes that ask for them: TF32 math on f32 data in
 *      NCDHW with C_in/G >= 16 and C_out/G >= 32 (automatically; forced:
 *      any), 3xTF32 forced only (not yet faster than the FMA kernels, which
 *      that mode permits), f16/bf16 data unless depthwise or where the
 *      phase kernel on half data (3b.) beats it (igemm_half_loses: few
 *      channels a group, small stride-1 problems in NCDHW); every other
 *      f32 problem in every math mode goes on to the exact FMA entries
 *      below;
 *   1. the depthwise tile kernel (dwtile/), for C_in/G = C_out/G = 1 in
 *      NCDHW (automatically; forced also in NDHWC): run8 where every W
 *      slot's window starts at one staged column, slotwise otherwise;
 *   1a. the channels-last depthwise kernel (dwlast/), for C_in/G = C_out/G
 *      = 1 in NDHWC (automatically; forced also in NCDHW), strides up to 8,
 *      any kernel, padding and dilation, f32, f16 and bf16 data: channels in
 *      the lanes (4 a thread where C % 4 == 0 and the pointers allow),
 *      runs of 4 W outputs of one stride phase a thread;
 *   1b. the few-output-channel kernel (fewout/) for C_out/G <= 8, any C_in/G
 *      (fewout/plan.cu, fewout_preferred: C_in/G >= 16 with C_in/G x taps
 *      >= 256; with C_out/G <= 4 also what the FMA implicit-GEMM engine
 *      would take, and one group on at most 250,000 positions; f32 data
 *      with C_in/G >= 5 on at most 10,000 positions): positions
 *      in the threads, the K sum split over a block's threads (and a
 *      cluster's blocks on small grids) and added in a fixed order;
 *   1c. the four-output kernel (simple/, cuda/f32_fewin_phase_4) for
 *      C_in/G <= 8 with at most one product an output (NCDHW; NDHWC with
 *      C_out/G 2-8), and where the FMA engine (2.) would take the problem
 *      for C_in/G <= 2, in NDHWC (not TF32 mode) also for C_in/G <= 16
 *      with at most 8 products an output (simple/plan.cu,
 *      fewin_entry_passed_over, fewin_preferred_over_engine);
 *   2. the implicit-GEMM kernel (igemm/) for NCDHW problems with
 *      C_in/G >= 16, Cog >= 32 and at most 2 taps in every W phase or fewer
 *      outputs than the GPU holds threads (either layout), for C_out/G <= 3
 *      with C_in/G >= 16 on at most 16384 positions (N x output volume,
 *      either layout), and in
 *      both layouts for the problems the phase kernel (3.) does not take
 *      with C_in/G >= 4 or C_out/G >= 4 (it computes every layout,
 *      dilation and stride up to 8: forced, it applies to them all);
 *   3. the phase kernel (phase/) where it applies (W stride 1 or 2 with
 *      every W tap at unit input step, <= 8 taps a W phase, D/H strides
 *      <= 8), depthwise problems included: its eight variants (grouped or
 *      tiled, W stride 2 or 1, 8 or 4 output channels a thread) ask the phase
 *      planner which one it picks; the others are passed over;
 *   3b. the phase kernel on f16/bf16 data (x, bias and y widened on staging,
 *      f32 weights and accumulation, rounded once on store), 8 channels a
 *      thread: what the half MMA (0.) passes over but depthwise problems;
 *   4. the depthwise phase kernel (simple/) for C_in/G = C_out/G = 1;
 *   5. the generic direct kernel (simple/), which runs anything: what the
 *      phase kernel does not take with fewer than 4 channels a group on
 *      both sides, strides above 8, sizes past int indexing;
 *   6. f16/bf16 data the tensor cores leave: the depthwise tile kernel
 *      (NCDHW) and the channels-last one (NDHWC) above, then the depthwise
 *      phase kernel and the generic direct kernel, widening on load and
 *      rounding on store.
 *
 * A new kernel family needs: its folder (params.h, kernel.cuh, plan.cu,
 * launch.cu defining its cuda_impl entries), its files in Makefile.am, and
 * one line in registry.cu's table. */
#ifndef CONVT3D_CUDA_REGISTRY_H
#define CONVT3D_CUDA_REGISTRY_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "common/env.h"
#include "common/plan_util.h"
#include "internal.h"

namespace ct3d {

struct cuda_impl;

/* Bytes of family parameters a plan holds (the largest today, igemm_plan,
 * is 2.5 KB; phase_plan 0.9 KB); each family static_asserts its own. */
constexpr size_t kPlanParamBytes = 4096;

/* A plan: the entry, the weight packing every family shares (output
 * channels per block ocb, nocb blocks of them: common/pack.h), the launch
 * shape, and the family's own parameters in opaque storage. */
struct cuda_plan {
    const cuda_impl *impl;
    int ocb, nocb;
    size_t smem_bytes;
    int threads;
    long long blocks;
    char note[160]; /* an override that was ignored, for CONVT3D_VERBOSE */
    alignas(16) unsigned char params[kPlanParamBytes];
};

/* The family parameters of a plan, as the family's own type. */
template <class T>
T *family_params(cuda_plan &k)
{
    static_assert(sizeof(T) <= kPlanParamBytes, "family parameters fit cuda_plan.params");
    static_assert(alignof(T) <= 16, "family parameters aligned by cuda_plan.params");
    return reinterpret_cast<T *>(k.params);
}
template <class T>
const T *family_params(const cuda_plan &k)
{
    static_assert(sizeof(T) <= kPlanParamBytes, "family parameters fit cuda_plan.params");
    return reinterpret_cast<const T *>(k.params);
}

/* The pointers of one execute, device side; extra is the plan's device
 * extras (cuda_impl.extras) or NULL.  x, bias and y hold the problem's type
 * (as float pointers: entries of f16 or bf16 data reinterpret them); w is
 * the packed weights, f32 whatever the type. */
struct cuda_args {
    const float *x, *w, *bias;
    float *y;
    const void *extra;
};

/* How an entry is asked to plan: automatically (the walk's choice; a
 * variant of a family plans the way the family planner picks) or forced. */
enum plan_mode { PLAN_AUTOMATIC, PLAN_FORCED };

struct cuda_impl {
    const char *name; /* exact, "cuda/..." */
    const void *variant; /* the family's own data for this entry, or NULL */
    /* Hard: whether the entry computes shape s correctly on a device with
     * these limits; why says why not.  Pure. */
    bool (*applicable)(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       char *why, size_t why_size);
    /* Soft, automatic walk only (NULL: never): whether the entry is passed
     * over for s, why says for what.  Pure. */
    bool (*passed_over)(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                        const cuda_overrides &ov, char *why, size_t why_size);
    /* Fills *k (impl, packing, launch shape, family parameters, pointers
     * left NULL); false (why) if no tiling fits.  Pure. */
    bool (*plan)(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                 const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                 size_t why_size);
    /* Raises the kernel's shared-memory cap (current device); NULL: nothing. */
    cudaError_t (*prepare)(const cuda_plan &k, int smem_optin);
    /* Device-side extras the plan keeps (e.g. a phase table), allocated on
     * the current device into *extra (freed with cudaFree); NULL: none. */
    cudaError_t (*extras)(const cuda_plan &k, const convt3d_shape *s, void **extra);
    /* Enqueues the kernel. */
    cudaError_t (*launch)(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                          cudaStream_t stream);
    /* One line on the plan's tiling. */
    void (*describe)(const cuda_plan &k, char *buf, size_t size);
    /* The data types (bits 1 << convt3d_dtype) the entry computes; 0: f32. */
    unsigned dtypes;
    /* The math modes (bits 1 << convt3d_math_mode) the entry serves; 0: all
     * of them (an exact FMA kernel is allowed in every mode). */
    unsigned maths;
    /* Nonzero: the packed weights are rounded to TF32 once at planning, so
     * that the kernel feeds them to the tensor cores without rounding them
     * on every use. */
    int tf32_weights;
    /* Nonzero: the packed weights are narrowed back to the data's 16-bit
     * type (exact: they were widened from it), which the kernel stages as
     * they are. */
    int half_weights;
};

constexpr unsigned kDtypeF32 = 1u << CONVT3D_F32, kDtypeF16 = 1u << CONVT3D_F16,
                   kDtypeBf16 = 1u << CONVT3D_BF16;
constexpr unsigned kMathAny = 0, kMathTf32 = 1u << CONVT3D_MATH_TF32,
                   kMath3xTf32 = 1u << CONVT3D_MATH_3XTF32;

/* Whether entry e computes s's data type and serves its math mode, then
 * e.applicable: the hard predicate every walk and forced plan asks. */
bool cuda_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                           char *why, size_t why_size);

/* The table, in walk order. */
int cuda_impl_count(void);
const cuda_impl *cuda_impl_at(int index);

/* The entry the automatic walk would take for s among those after e in the
 * table (NULL: none), for a rule that defers to what would come next
 * (tcwin/plan.cu).  Pure. */
const cuda_impl *cuda_walk_after(const cuda_impl &e, const convt3d_shape *s,
                                 const device_limits &lim, const cuda_overrides &ov);

/* Whether entry e runs s when forced: applicable and plannable (into *k).
 * Exactly what forcing e does, short of device memory. */
bool cuda_impl_plans(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                     const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                     size_t why_size);

/* The registry walk: the forced entry (force, NULL: automatic), or the first
 * that applies and is not passed over; fills *k.  CONVT3D_ERR_NOT_APPLICABLE
 * for a forced entry that does not apply, CONVT3D_ERR_UNKNOWN_IMPLEMENTATION
 * for a name no entry has (ov.kernel: a word no name contains).  With
 * verbose, every candidate not taken goes to stderr with its reason.  Pure
 * but for that output and convt3d_fail(). */
convt3d_status cuda_choose(const convt3d_shape *s, const device_limits &lim,
                           const cuda_overrides &ov, const char *force, int verbose,
                           cuda_plan *k);

/* Helpers for entries: the common plan fields. */
void plan_init(cuda_plan *k, const cuda_impl &e);

} // namespace ct3d

#endif
