/* The few-output-channel kernel ("fewout"): C_out/G <= 8, any C_in/G, both
 * layouts, f32.  Its parameters; no CUDA API, so the host planning code and
 * the emulator include it without a GPU.
 *
 * Why a kernel of its own: with one to three output channels a group the
 * GEMM of a stride phase (positions x C_out/G over C_in/G x taps) has almost
 * no N, so the kernels that put output channels in a thread's registers or
 * a tile's columns (the phase kernel's 4 or 8 a thread, igemm's 32 a warp)
 * leave most of them empty, and each output's long K sum runs in one thread
 * while the GPU idles (a decoder's last layer: 262k outputs of 1024 MACs).
 * Here the threads go over positions and the K sum is split instead.
 *
 * A block owns one group and one tile of ps position groups of one stride
 * phase (rd, rh, rw).  A position group is kFewR outputs of the phase that
 * differ only in H, dm apart (q_h = q0, q0 + dm, ...; dm the phase's input
 * step between H taps): output j's H tap th reads input row i0 + (j - th) *
 * dm, so the kFewR outputs' th_n H taps read only kFewR + th_n - 1 rows.  A
 * thread loads that window of x into registers once for each (channel, D
 * tap, W tap) and feeds every H tap of every output from it: up to kFewR *
 * th_n * C_out/G FMAs for kFewR + th_n - 1 loads (round 14 measured the one
 * load a FMA of the previous body at ~30 issued instructions a warp's FMA).
 * Its kFewThreads threads are ks reduction slices x ps slots; slice k sums
 * input channels k, k + ks, ... over every tap of the phase, into kFewR x
 * C_out/G registers.  Where the tiles alone are too few to fill the GPU, a
 * cluster of cs blocks shares one tile, block rank r summing the input
 * channels [cig r / cs, cig (r + 1) / cs) (Hopper thread-block clusters):
 * the tile keeps its positions, so each x load and staged weight still
 * feeds as many outputs, where more slices a block would shrink it.  The
 * slices' partial sums meet in shared memory; a thread adds an output's
 * slices, slice 0 first, then one thread adds the cluster's blocks' sums
 * through distributed shared memory, rank 0 first, and the bias last: a
 * fixed order, so the output is bitwise deterministic, with no atomics and
 * no workspace.
 * Every output of the phase tile is written exactly once, bias (or 0) where
 * no tap reaches it.  Rows outside x enter the window as 0: a tap that
 * reaches no input adds 0 x w (so an Inf or NaN weight makes NaN there too,
 * where the reference skips the tap; finite weights give the same values).
 *
 * Thread mapping: NCDHW, slots fastest, W fastest among a slot's groups
 * (consecutive lanes read x at consecutive W inputs of one row; the
 * weights, the same for the warp, are one or two broadcast 16-byte loads a
 * tap; where small grids take more than 8 slices, a warp spans 32 / ps
 * slices, whose weights are that many neighbouring float4s, no bank
 * conflict); NDHWC, slices fastest (consecutive lanes read consecutive
 * channels of one input position).  The weights of a chunk of input
 * channels for the phase's taps are staged in shared memory
 * [tap][channel][ocb] (packed at planning with ocb 4 for C_out/G <= 4, 8
 * above: a tap's output channels are one or two float4s).  x is read through
 * the read-only cache (each input is read by the phase's taps of
 * neighbouring outputs, which L1 serves).
 * Body: kernel.cuh; launch: launch.cu; planning: plan.cu. */
#ifndef CONVT3D_CUDA_FEWOUT_PARAMS_H
#define CONVT3D_CUDA_FEWOUT_PARAMS_H

#include "../common/types.h"

namespace ct3d {

constexpr int kFewThreads = 256;
constexpr int kFewR = 4;           /* positions a thread: a group along H */
constexpr int kFewMaxCog = 8;      /* output channels a group (two float4s of weights) */
constexpr int kFewMaxPhases = 64;  /* sd * sh * sw: the tile table below */
constexpr int kFewMaxTaps = 8;     /* taps of one dim's phase: 8 bits of a mask */
/* The body is compiled for TH H taps a phase at most, TH one of these
 * (params.h's window: rows (u - (TH - 1)) * dm from a group's first output's
 * tap-0 row, u < TH + kFewR - 1; output j's tap th is u = j - th + TH - 1).
 * A window sized for the problem, not for kFewMaxTaps, issues no loads for
 * rows no tap reads (round 14: at 8 taps' window, 11 predicated loads for
 * a 3-tap phase's 6). */
constexpr int kFewThSizes[] = {2, 3, 5, 8};
constexpr int kFewThCount = sizeof kFewThSizes / sizeof kFewThSizes[0];
constexpr int kFewSmemMax = 48 * 1024; /* no opt-in needed */
constexpr int kFewMaxCluster = 8;      /* blocks sharing a tile: the portable cluster size */
/* Small grids only (plan.cu, slices_for_small_grids): more slices stage more
 * weights at once; the entry's prepare raises the kernels' cap to this, and
 * every sm_90 device allows it (227 KB). */
constexpr int kFewSmemSmallGrid = 96 * 1024;

/* One dim's phase r: its taps (k0 + t * kstep, reading input q - m0 - t * dm)
 * and outputs (q in [qlo, qlo + qcount)), with the divisor of qcount. */
struct few_dim_phase {
    phase_entry e;
    fdiv dv_q;
};

struct few_params {
    const float *x;    /* of the data type (f16 / bf16 reinterpret) */
    const float *w; /* packed [g][ic][kd][kh][kw][ocb] (nocb 1) */
    const float *bias; /* of the data type */
    float *y;          /* of the data type */
    long long xs[5], ys[5];
    int xstep[3]; /* x elements between consecutive taps of a phase: dm * xs, per dim */
    int n, cig, cog;
    int ocb; /* floats of a tap's weights: 4 (C_out/G <= 4) or 8, one or two float4s */
    int in[3], k[3], s[3], p[3], dm[3], kstep[3];
    few_dim_phase ph[3][kMaxPhaseStride];
    /* phase (rd, rh, rw) = index (rd * s[1] + rh) * s[2] + rw has the blocks
     * [tile0[index], tile0[index + 1]) of the grid's x */
    int nphases;
    int tile0[kFewMaxPhases + 1];
    int ks, lks, ps, lps; /* reduction slices, position slots (powers of two), their log2 */
    int cs, lcs;          /* blocks a cluster sharing a tile (a power of two), its log2;
                           * the grid's x is tiles x cs, block x = tile * cs + rank */
    int chan_fast;    /* NDHWC: slices are the fastest thread index */
    int ck;           /* input channels a staged weight chunk (a multiple of ks) */
    int tmax;         /* the most taps of a phase: the staged chunk's pitch is ck */
    int th;           /* the body's TH: the smallest of kFewThSizes >= every H phase's taps */
    /* H phase r: gh_count[r] position groups (dm * ceil(qcount / (kFewR *
     * dm)), 0 without outputs), dv_gh[r] dividing by it */
    int gh_count[kMaxPhaseStride];
    fdiv dv_gh[kMaxPhaseStride];
};

} // namespace ct3d

#endif
