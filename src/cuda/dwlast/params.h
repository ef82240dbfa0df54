/* The channels-last depthwise kernel ("dwlast"): C_in/G = C_out/G = 1 with
 * the channels contiguous (NDHWC), memory bound.  Its parameters; no CUDA
 * API, so the host planner and the emulator include it without a GPU.
 *
 * A thread owns V channels (V = 4: one 16-byte vector of f32, 8 bytes of
 * f16/bf16; V = 1: one channel) and a "position": one (n, od, oh) output row
 * and a run of kDlRun consecutive outputs q of one W stride phase (outputs
 * ow = q*sw + r - pw).  The D and H phases follow from od and oh, so every
 * tap a thread visits reaches its outputs: no divisibility test, only the
 * bounds of the input row and column.  Threads: cv along the channels
 * (fastest, so that a warp's loads and stores are contiguous runs of
 * channels), pb positions; consecutive positions are consecutive W runs of
 * one output row, which read the same input rows (L1 reuse).  The block's
 * channels' weights are staged in shared memory as [tap][channel] (pitch
 * wpitch), so that a thread's V weights of a tap are one load.  Body:
 * kernel.cuh; launch: launch.cu; planning: plan.cu. */
#ifndef CONVT3D_CUDA_DWLAST_PARAMS_H
#define CONVT3D_CUDA_DWLAST_PARAMS_H

#include "../common/types.h"

namespace ct3d {

constexpr int kDlRun = 4;             /* outputs of one W phase a thread computes */
constexpr int kDlThreads = 256;       /* threads a block (cv x pb) */
constexpr int kDlSmemMax = 48 * 1024; /* staged weights; no opt-in needed */

struct dl_params {
    const float *x;
    const float *w; /* packed [c][kd][kh][kw] (ocb 1) */
    const float *bias;
    float *y;
    long long xs[5], ys[5];
    int c;                    /* channels */
    int in[3], out[3], k[3], s[3], p[3];
    int dm[3], kstep[3];      /* input and tap steps between a phase's taps */
    phase_entry ph[3][kMaxPhaseStride];
    int wrun0[kMaxPhaseStride + 1]; /* first W run of each W phase; [sw]: runs a row */
    int v;                    /* channels a thread: 4 or 1 (the instantiation) */
    int cv, lcv;              /* threads along the channels (power of two), log2 */
    int cb;                   /* channels a block: cv * v */
    int pb;                   /* positions a round of the block: kDlThreads / cv */
    int iters;                /* rounds of pb positions a block */
    int nthreads;
    int kvol, wpitch;         /* staged weights: kvol rows of wpitch floats */
    long long npos;           /* positions: n * out_d * out_h * wrun0[sw] (< 2^31) */
    fdiv dv_nwr, dv_oh, dv_od, dv_kvol;
};

} // namespace ct3d

#endif
