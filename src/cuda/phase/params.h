/* The phase kernel's parameters (body: kernel.cuh, planner: plan.cu).
 * Plain structs, no CUDA API, so the host planner and the emulator include
 * them without a GPU. */
#ifndef CONVT3D_CUDA_PHASE_PARAMS_H
#define CONVT3D_CUDA_PHASE_PARAMS_H

#include "../common/types.h"

namespace ct3d {

/* The phase kernel handles strides up to kMaxPhaseStride in D and H
 * (tables in the kernel parameters), 1 or 2 in W, and at most this many
 * taps per W phase. */
constexpr int kMaxWTaps = 8;
constexpr int kMaxKW = 16;
/* The fused W slot pairs compiled in (phase_params.fuse_w): slot 0's and
 * slot 1's taps, and where each slot's window starts in the shared one. */
struct fuse_pair {
    int t0, t1, a0, a1;
};
constexpr fuse_pair kFusePairs[] = {{1, 1, 1, 0}, {1, 1, 0, 0}, {1, 1, 0, 1}, {2, 2, 1, 0},
                                    {2, 2, 0, 0}, {2, 2, 0, 1}, {3, 4, 0, 0}, {4, 3, 0, 0}};
constexpr int kFusePairCount = sizeof kFusePairs / sizeof kFusePairs[0];


/* One W slot f of a thread's output run: the run starts at a multiple of
 * sw*qw, so output o_a + f + sw*i has phase r = (f + p) mod sw and reads the
 * window starting woff past the thread's base in the staged tile row; its taps
 * sit at kwpos[k0 ..] in the compacted staged weight row. */
struct wslot {
    int r, taps, k0, woff, wpos;
};

/* Parameters of the phase-split kernel (kernel.cuh). */
struct phase_params {
    const float *x;
    const float *w;
    const float *bias; /* NULL without bias */
    float *y;
    long long xs[5], ys[5]; /* element strides [n, c, d, h, w] */
    int groups, cig, cog;
    int in[3], out[3], k[3], s[3], p[3], dm[3], kstep[3];
    /* Threads: toc fastest (output-channel sub-blocks), then tx (W runs),
     * ty (H rows), tz (D rows). */
    int tx, ty, tz, toc, nthreads;
    /* Input-channel slices: nthreads = ks * nbase; slice j (threads
     * [j*nbase, (j+1)*nbase)) accumulates the staged channels ic = j mod ks
     * of the same output tile; slice 0 adds the others' partial sums in slice
     * order through shared memory (at red_off floats) and stores.  More warps
     * for the same tile where the output has few tiles; deterministic. */
    int nbase, ks, red_off;
    /* W stride 2 where the two W slots' tap counts and window offsets are
     * an entry i of kFusePairs: one window load serves both slots
     * (fuse_w = i + 1); 0: slot by slot. */
    int fuse_w;
    int cic, nchunks; /* input channels staged per chunk, number of chunks */
    int ocb, nocb;    /* output channels per block (toc * OCT) and blocks of them */
    int all_phases;   /* 1: each block computes every (D, H) phase pair from one
                         staged tile (requires nchunks == 1); 0: one pair per block */
    int npp;          /* number of (D, H) phase pairs, s[0] * s[1] */
    /* Tiled mode: which phase pair the blocks of rank j (j * nblocks / npp
     * onwards) compute, heaviest (most taps) first; and from block `snake`
     * on, blocks are taken in reverse order, so the multiprocessors that got
     * the heaviest blocks in the first round get the lightest in the second
     * (block b and b + num_sms land on one multiprocessor).  The phase pairs
     * of an odd kernel at stride 2 differ up to 4x in taps: interleaved, one
     * multiprocessor in four got only the heaviest. */
    unsigned char pp_order[kMaxPhaseStride * kMaxPhaseStride];
    long long snake;
    int ntile[3];     /* tiles along D and H (in q) and W (in runs) */
    long long nblocks;
    phase_entry ph[2][kMaxPhaseStride]; /* D and H */
    /* Union over the phases (all_phases): first q, halo (rows before q0 the
     * tile must hold) and halo + extra rows after.  With align_all, tile j
     * of phase r holds its q rows qlo_r + j * threads onwards (not the
     * union's qlo_all + j * threads): every tile row is an output row of
     * the phase, at the price of max(qlo_r - qlo_all) more staged rows
     * (kernelbench's D phases start one q row apart: without it one row in
     * seven of the heavier phase was computed and thrown away). */
    int qlo_all[2], hal_all[2], ext_all[2];
    int align_all;
    wslot ws[2];
    int kwpos[kMaxKW]; /* position of tap kw in a staged (compacted) weight row */
    int wlo0;          /* W tile origin relative to tile_w * tx * qw */
    int ew, pitch;     /* staged W extent and row pitch (floats) */
    int wrow4;         /* float4s per toc in a staged weight row (odd: no bank conflicts) */
    int wsm_floats;    /* shared memory floats for the staged weights (the tile follows) */
    int vec_store;     /* 16-byte stores allowed (set per execute from y's alignment) */
};

/* Features compiled into an instantiation of the phase kernel (template
 * parameter F), so that a plan that uses neither pays for neither in
 * registers: input-channel slices (phase_params.ks > 1) and the fused W slot
 * pair (phase_params.fuse_w). */
constexpr int kSliced = 1;
constexpr int kFused = 2;

inline int phase_features(const phase_params &p)
{
    return (p.ks > 1 ? kSliced : 0) | (p.fuse_w ? kFused : 0);
}

/* The builds for f16 and bf16 data (half.cu), 8 output channels a thread
 * only: W stride 1 with or without slices (the suite's k3s1p1 plan has two),
 * W stride 2 with or without the fused W slot pair (kernelbench's has it)
 * but no slices (they serve W stride 2 problems with few output tiles, as
 * k3s2p1op1_wide, which the half MMA keeps).  Each build is a compiled copy
 * of the whole body: the four of each type add 8 to the 14 of f32 data.
 * plan_phase keeps half plans to them. */
constexpr int kHalfPhaseOct = 8;
inline bool phase_half_built(int sw, int features)
{
    return sw == 1 ? (features & kFused) == 0 : sw == 2 && (features & kSliced) == 0;
}




} // namespace ct3d

#endif
