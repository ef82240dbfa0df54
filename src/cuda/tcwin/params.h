/* The tensor-core window kernel's parameters (body: kernel.cuh, planner:
 * plan.cu).  Plain structs, no CUDA API, so that the host planner and the
 * emulator include them without a GPU.
 *
 * What it computes: one stride phase (rd, rh, rw) of the output is a dense
 * stride-1 correlation of x with the phase's sub-kernel, i.e. a GEMM of
 * positions x C_out/G over (taps of the phase) x C_in/G.  A block owns a box
 * of TD x TH x 16 positions of one phase (16 (D, H) rows of 16 W positions),
 * 32 output channels of one group and one image.  Per chunk of input
 * channels (8; 16 of f16 / bf16 data) it stages the input WINDOW every tap
 * of the box reads (the box plus the taps' halo, zeros outside x) and the
 * chunk's weights of every tap of the phase; each tap is then an MMA step
 * (k8 TF32, k16 half) whose A fragments are read from the window at a shift
 * that is the same for all positions.  So an
 * input element is loaded from global memory once per chunk, not once per
 * tap as in the implicit-GEMM engine (igemm/), whose A tile is rebuilt for
 * every tap: with 27 taps (k3s1p1) that is 27x fewer loads and barriers.
 *
 * Warps: 8, warp w owns (D, H) rows 2w and 2w + 1 of the box (two m16 MMA
 * tiles along W) and all 32 channels (four n8 tiles).
 *
 * Block order, fastest first: the phase (W, H, D), the box (W, H, D), the
 * channel block, the group, the image.  The phases of one box run side by
 * side: their windows are nearly the same input rows (L2 hits), and at
 * stride 2 their stores fill each other's 32-byte sectors in L2. */
#ifndef CONVT3D_CUDA_TCWIN_PARAMS_H
#define CONVT3D_CUDA_TCWIN_PARAMS_H

#include "../common/types.h"

namespace ct3d {

constexpr int kTcwThreads = 256;
constexpr int kTcwRows = 16;  /* (D, H) rows of a box: 2 per warp */
constexpr int kTcwW = 16;     /* W positions of a row: one m16 MMA tile */
constexpr int kTcwCk = 8;     /* 32-bit words a position of a chunk holds: 8 f32 input
                                 channels (one k8 TF32 step) or 8 pairs of f16 / bf16 ones
                                 (one k16 step) */
/* Input channels a chunk of elem_bytes-byte data: a position's kTcwCk
 * words hold 8 f32 channels or 8 pairs of 16-bit ones.  The one source of
 * the chunk size: the planner's p.ck and the kernel's weight rows. */
constexpr CT3D_HD int tcw_chunk_channels(int elem_bytes) { return kTcwCk * 4 / elem_bytes; }
constexpr int kTcwOcb = 32;   /* output channels a block: four n8 tiles */
constexpr int kTcwBPitch = kTcwOcb + 8; /* elements a weight row: fragments conflict-free
                                           (f32 loads; 16-bit ldmatrix rows 80 bytes apart) */
constexpr int kTcwMaxTaps = 64;  /* taps of a phase (product over the dims) */
constexpr int kTcwMaxStride = 8; /* phase tables per dim */
/* Vector staging: 16-byte words of a channel's window a thread copies (the
 * planner keeps qn within kTcwQSlots * kTcwThreads, else stages by element). */
constexpr int kTcwQSlots = 2;
/* Channels-last windows (NDHWC x, p.cl): a position's kTcwCk words lie
 * together, [z][y][ewp][kTcwCk], the word's 16-byte half XORed with bit 2
 * of the position (tcw_cl_word), so that the 8 positions x 4 words of a
 * fragment load hit the 32 banks once each without padding. */
constexpr int kTcwClHalf = 4; /* words a 16-byte half of a channels-last position */
/* Taps a box from which the TF32 window is rounded once a chunk (p.preround).
 * The pass and its barrier cost more than the in-loop rounding saves on 8-tap
 * phases (round 32, H100: k4s2p1 and the wide shape 4-12% slower with 4), and
 * less on 27 (k3s1p1 2-3% faster). */
constexpr int kTcwPreroundTaps = 16;

/* The inner products (template parameter MATH). */
enum tcw_math {
    TCW_TF32 = 0,   /* f32 data, x rounded to TF32 on use, weights at planning */
    TCW_3XTF32 = 1, /* f32 data, both operands split in a big and a small TF32 part */
    TCW_HALF = 2    /* f16 / bf16 data as it is: m16n8k16 steps on channel pairs */
};

struct tcw_params {
    const float *x; /* of the data type (f16 / bf16 reinterpret) */
    const float *w; /* packed, ocb 32 (common/types.h): f32, or 16-bit for TCW_HALF */
    const float *bias;
    float *y;
    long long xs[5], ys[5];
    int groups, cig, cog, nocb, nchunks;
    int ck;              /* input channels a chunk: tcw_chunk_channels of the data type */
    int in[3], k[3], s[3], p[3], dm[3], kstep[3];
    int kvol;
    phase_entry ph[3][kTcwMaxStride];
    int td, th;          /* box rows in D and H (td * th = kTcwRows) */
    int ntile[3];        /* boxes along D, H, W (for the longest phase of each dim) */
    int ed, eh, ew;      /* window extents (the heaviest phase's) */
    int ewp;             /* floats a window row (>= ew) */
    int cs;              /* floats a window channel (= 8 mod 32: fragments conflict-free) */
    int maxtaps;         /* taps of the heaviest phase */
    int stage_floats;    /* one stage: window (8 cs) + weights (maxtaps 8 kTcwBPitch words:
                            ck channels of 4 or 2 bytes) */
    /* Vector staging (tcw_vrows, kernel.cuh): the window's W origin rounded down to 16
     * bytes, so that each window row is whole 16-byte words of x, copied by cp.async.
     * vec: on (the planner's choice; the launch clears it where x is not 16-byte
     * aligned, and the element staging then fills the same layout). */
    int vec;
    /* TF32: the staged window rounded to TF32 once a chunk (tcw_round_window,
     * kernel.cuh) in boxes of at least this many taps (0: never), instead of
     * each A element at each tap in the MMA loop; the planner sets
     * kTcwPreroundTaps, the emulator varies it. */
    int preround;
    /* Channels-last staging (NDHWC x; tcw_copy_positions, kernel.cuh): the window
     * [position][kTcwCk words], filled by 16-byte copies of a position's channels where
     * vec is on (C_in/G a multiple of a word and x aligned), else element by element. */
    int cl;
    int wofs;            /* floats of a stage's window: its weights start there */
    int nw;              /* 16-byte words a window row (ewp = nw * 16 / element bytes) */
    int qn;              /* words of one channel of a window: ed * eh * nw */
    int raw_floats;      /* half data: the raw window, [16 channels][ed eh ewp] 16-bit
                            elements, between the two stages and the tap table (0: none) */
    long long nblocks;
};

} // namespace ct3d

#endif
