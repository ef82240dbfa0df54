/* The depthwise tile kernel ("dwtile"): C_in/G = C_out/G = 1, NCDHW, memory
 * bound.  Its parameters; no CUDA API, so the host planning
 * code and the emulator include it without a GPU.
 *
 * A block owns one (n, c) and a tile of q rows in D and H (the same q rows
 * of every D/H stride phase) and a run of tx * 8 W outputs.  It stages the
 * channel's weights and the input rows the tile reads into shared memory,
 * zero-padded (the hot loop has no bounds checks; cp.async, 16-byte copies
 * where x's rows allow), then each thread loops over the (D, H) phase pairs
 * and writes 8 consecutive W outputs of one output row per pair: the W
 * phases of the run interleaved, two 16-byte stores.  Per (D tap, H tap) a
 * thread loads one window of inputs and its W weights and does one FMA per
 * (output, W tap): every load is shared memory, every index 32-bit except
 * the per-row global offsets (int64).  Body: kernel.cuh; launch:
 * launch.cu; planning: plan.cu. */
#ifndef CONVT3D_CUDA_DWTILE_PARAMS_H
#define CONVT3D_CUDA_DWTILE_PARAMS_H

#include "../common/types.h"

namespace ct3d {

constexpr int kDwRun = 8;      /* W outputs a thread writes per output row */
constexpr int kDwMaxWTaps = 4; /* taps of a W phase */
constexpr int kDwMaxKW = 8;    /* W stride <= 2 x kDwMaxWTaps */
constexpr int kDwSmemMax = 48 * 1024; /* no opt-in needed */

/* One stride phase of D or H: its q rows are numbered j = 0 .. qcount - 1
 * (output o0 + j*s); row j's taps k = k0 + t*kstep read staged row
 * j - tile * threads + zrow - t*dm.  Precomputed offsets (floats): zoff of
 * staged row zrow in the tile, woff of tap k0's staged weight row, yoff of
 * output row o0 in y's (n, c) slab. */
struct dw_phase {
    int taps, qcount;
    int zoff, woff, yoff;
};

struct dw_params {
    const float *x;
    const float *w; /* packed [c][kd][kh][kw] (ocb 1) */
    const float *bias;
    float *y;
    long long xs[5], ys[5];
    int in[3], out[3], k[3], s[3];
    int dm[2], kstep[2]; /* D, H */
    /* threads: tx (W runs) fastest, then ty (H q rows), tz (D q rows); all
     * powers of two, lx = log2 tx, ly = log2 ty */
    int tx, ty, tz, lx, ly, nthreads;
    int ntile[3]; /* tiles along D, H (q rows of a phase) and W (runs of tx) */
    int zstep[2], wstep[2]; /* staged input / weight floats between taps, D and H */
    int ystep[2];           /* y floats between q rows (s * ys), D and H */
    fdiv dv_tw, dv_th; /* ntile[2], ntile[1] */
    dw_phase ph[2][kMaxPhaseStride];
    int lo[2], ext[2]; /* staged rows of a tile: first (past tile * threads), count */
    /* W: slot f of a run (outputs o_a + f + sw*i, i < 8/sw) has taps wt[f],
     * its window starts wa[f] past the thread's column in the staged row, its
     * weights at wpos[f] in a staged weight row; wsrc[j]: the kw staged at
     * position j (-1: padding) */
    int sw, wt[2], wa[2], wpos[2];
    int wsrc[kDwMaxKW];
    int worg;       /* staged column 0 is input column tile_w * tx * 8/sw + worg */
    int ew, pitch;  /* staged columns, row pitch (floats) */
    int wrow, lwrow; /* staged weight row pitch (4 or 8 floats) and its log2 */
    int wsm_floats; /* staged weights; the input tile follows */
    int fast;       /* every W slot's window starts at the same column (wa 0):
                       one shared window, float4 shared-memory loads */
    int vec_ok;     /* 16-byte staging possible when x is 16-byte aligned */
    fdiv dv_u1, dv_u4, dv_exth; /* staging units a row (ew; pitch/4), ext[1] */
    /* set per execute (launch.cu) */
    int vec_load, vec_store;
};

} // namespace ct3d

#endif
