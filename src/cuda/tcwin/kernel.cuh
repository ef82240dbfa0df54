/* The tensor-core window kernel's per-block body (params.h says what it
 * computes).  Only the body lives here so that it compiles for the host too
 * and the emulator (CONVT3D_GPU_EMULATE) checks it there, MMA fragments
 * included.
 *
 * Shared memory: two stages, each [8 words][window] of inputs (channel
 * pitch cs = 8 mod 32 words; a word is an f32 channel, or a pair of
 * consecutive f16 / bf16 channels: the k16 MMA's A fragment holds such
 * pairs) then [taps][8 channels][kTcwBPitch] f32 weights or
 * [taps][16 channels][kTcwBPitch] 16-bit ones; then the phase's tap table
 * (tcw_tap_table).  NDHWC x takes the channels-last window instead:
 * [position][8 words], a position's chunk of channels as two 16-byte runs
 * of x (tcw_copy_positions).  Chunk c + 1 is copied (cp.async; the half
 * window through registers, paired) while chunk c is computed.  A thread's A
 * fragments sit at one offset from its rows' window origin for every
 * element of a tap, so a tap costs 8 shared loads of A and 8 of B (2
 * ldmatrix for half data) for 8 MMAs (24 for 3xTF32), and no index
 * arithmetic beyond one shift. */
#ifndef CONVT3D_CUDA_TCWIN_KERNEL_CUH
#define CONVT3D_CUDA_TCWIN_KERNEL_CUH

#include "../common/device.cuh"
#include "params.h"

namespace ct3d {

/* The box a block computes: image, group, channel block, phase, and per dim
 * the phase's table entry, the box's first q and the window's first input
 * index and extent. */
struct tcw_box {
    long long n;
    int g, ob;
    int r[3];
    phase_entry e[3];
    int q0[3], lo[3], ext[3];
    int taps; /* product over the dims (0: the phase gets bias only) */
    bool empty;
};

CT3D_DEV tcw_box tcw_box_of(const tcw_params &p, long long b)
{
    tcw_box x;
    int tile[3];
    for (int d = 2; d >= 0; d--) {
        x.r[d] = (int)(b % p.s[d]);
        b /= p.s[d];
    }
    for (int d = 2; d >= 0; d--) {
        tile[d] = (int)(b % p.ntile[d]);
        b /= p.ntile[d];
    }
    x.ob = (int)(b % p.nocb);
    b /= p.nocb;
    x.g = (int)(b % p.groups);
    x.n = b / p.groups;
    const int rows[3] = {p.td, p.th, kTcwW};
    x.taps = 1;
    x.empty = false;
    for (int d = 0; d < 3; d++) {
        const phase_entry &e = p.ph[d][x.r[d]];
        x.e[d] = e;
        x.q0[d] = e.qlo + tile[d] * rows[d];
        x.empty = x.empty || x.q0[d] >= e.qlo + e.qcount;
        x.taps *= e.taps;
        const int halo = e.taps > 0 ? (e.taps - 1) * p.dm[d] : 0;
        x.lo[d] = x.q0[d] - e.m0 - halo;
        x.ext[d] = rows[d] + halo;
    }
    return x;
}

/* Rows a lane loads before it stores any (half data): their latencies
 * overlap instead of adding up. */
constexpr int kTcwHalfBatch = 8;

/* One lane's walk down the rows of a window: the row (channel, z, y), its
 * input coordinates, its offset in x and in the window (words).  A row is
 * CSTEP channels: 1 for f32, a pair for half data.  Stepping to the
 * next row is additions and compares only: the walk's per-row index
 * arithmetic was most of the kernel's instructions when each row's offset
 * came from scratch (H200 round 17: 2.7 instructions a cycle, 5x the MMA
 * loop's). */
struct tcw_walk {
    int y, z, ic, id, ih;
    long long off;
    int dst;
};

template <int CSTEP>
CT3D_DEV tcw_walk tcw_walk_at(const tcw_params &p, const tcw_box &x, int ic0, int r0, int iw)
{
    const int ez = x.ext[0], ey = x.ext[1];
    tcw_walk w;
    const int c = r0 / (ez * ey), rem = r0 - c * ez * ey;
    w.z = rem / ey;
    w.y = rem - w.z * ey;
    w.ic = ic0 + CSTEP * c;
    w.id = x.lo[0] + w.z;
    w.ih = x.lo[1] + w.y;
    w.off = x.n * p.xs[0] + (long long)(x.g * p.cig + w.ic) * p.xs[1] +
            (long long)w.id * p.xs[2] + (long long)w.ih * p.xs[3] + (long long)iw * p.xs[4];
    w.dst = c * p.cs + (w.z * ey + w.y) * p.ewp;
    return w;
}

/* Whether the walk's row lies inside x (and below C_in/G), given the lane's
 * W column is. */
CT3D_DEV bool tcw_walk_in(const tcw_params &p, const tcw_walk &w)
{
    return w.ic < p.cig && (unsigned)w.id < (unsigned)p.in[0] &&
           (unsigned)w.ih < (unsigned)p.in[1];
}

template <int CSTEP>
CT3D_DEV void tcw_walk_next(const tcw_params &p, const tcw_box &x, tcw_walk &w)
{
    const int ez = x.ext[0], ey = x.ext[1];
    w.off += p.xs[3];
    w.ih++;
    w.dst += p.ewp;
    if (++w.y == ey) {
        w.y = 0;
        w.ih = x.lo[1];
        w.off += p.xs[2] - (long long)ey * p.xs[3];
        w.id++;
        if (++w.z == ez) {
            w.z = 0;
            w.id = x.lo[0];
            w.off += CSTEP * p.xs[1] - (long long)ez * p.xs[2];
            w.ic += CSTEP;
            w.dst += p.cs - ez * ey * p.ewp;
        }
    }
}

/* Copies channels [ic0, ic0 + ck) of the box's window into win ([c][z][y]
 * rows of p.ewp words, channel pitch p.cs), zeros outside x and past
 * C_in/G.  Each warp takes a contiguous range of rows, lanes along W:
 * coalesced in NCDHW.  f32 goes by cp.async; f16 / bf16 through registers,
 * two channels packed in a word (the low half the even one), kTcwHalfBatch
 * rows at a time. */
template <class T>
CT3D_DEV void tcw_stage_window(const tcw_params &p, const tcw_box &x, float *win, int ic0,
                               int warp, int lane)
{
    const int rows = kTcwCk * x.ext[0] * x.ext[1];
    const int per = (rows + kTcwThreads / 32 - 1) / (kTcwThreads / 32);
    const int r0 = warp * per, r1 = imin(r0 + per, rows);
    if (r0 >= r1)
        return;
    const T *xt = reinterpret_cast<const T *>(p.x);
    for (int xx = lane; xx < x.ext[2]; xx += 32) {
        const int iw = x.lo[2] + xx;
        const bool in_w = (unsigned)iw < (unsigned)p.in[2];
        if constexpr (sizeof(T) == sizeof(float)) {
            tcw_walk w = tcw_walk_at<1>(p, x, ic0, r0, iw);
            for (int r = r0; r < r1; r++) {
                const bool in = in_w && tcw_walk_in(p, w);
                copy4(win + w.dst + xx, reinterpret_cast<const float *>(xt + (in ? w.off : 0)),
                      in);
                tcw_walk_next<1>(p, x, w);
            }
        } else {
            tcw_walk w = tcw_walk_at<2>(p, x, ic0, r0, iw);
            unsigned *wwin = reinterpret_cast<unsigned *>(win);
            for (int r = r0; r < r1; r += kTcwHalfBatch) {
                unsigned v[kTcwHalfBatch];
                int at[kTcwHalfBatch];
                CT3D_UNROLL
                for (int j = 0; j < kTcwHalfBatch; j++) {
                    v[j] = 0u; /* +0 in both types */
                    at[j] = -1;
                    if (r + j < r1) {
                        if (in_w && tcw_walk_in(p, w)) {
                            v[j] = load_bits(xt + w.off);
                            if (w.ic + 1 < p.cig)
                                v[j] |= (unsigned)load_bits(xt + w.off + p.xs[1]) << 16;
                        }
                        at[j] = w.dst + xx;
                        tcw_walk_next<2>(p, x, w);
                    }
                }
                CT3D_UNROLL
                for (int j = 0; j < kTcwHalfBatch; j++)
                    if (at[j] >= 0)
                        wwin[at[j]] = v[j];
            }
        }
    }
}

/* ---- vector staging (p.vec) ------------------------------------------------
 * The element staging above spends ~10 instructions a row step and one
 * copy (f32) or two loads (half) an element, with lanes idle past the
 * row's end; on half data the loads go through registers, so the warps wait
 * on them before computing (H200 round 18: k3s1p1 f16 42% of the cycles on
 * L1TEX).  With the window's W origin rounded down to 16 bytes (NCDHW, W a
 * multiple of a word), a window row is whole 16-byte words of x, each
 * wholly inside or outside x: one cp.async a word.  A thread owns the same
 * words of every channel of every chunk of the box (tcw_vrows, set once a
 * box), so a copy is an add and a cp.async.  Half data lands in a raw
 * [channel][row][W] buffer and is paired (tcw_pair_rows) after it has
 * arrived, while the next chunk's copies are in flight. */

/* A thread's words of a channel's window: up to kTcwQSlots of them, and
 * the channels it copies (cg, cg + cgs, ..). */
struct tcw_vrows {
    long long src[kTcwQSlots]; /* x offset from the chunk's channel 0; -1 outside x */
    int dst[kTcwQSlots];       /* window position (element) of the word; -1 none */
    int cg, cgs;
};

/* Elements a 16-byte word of the data type. */
template <class T>
struct tcw_word {
    static constexpr int elems = 16 / (int)sizeof(T);
};

/* The window's first W input: lo rounded down to a word (VE elements, a
 * power of two; two's complement rounds negative lo down too). */
template <class T>
CT3D_DEV int tcw_vec_w0(const tcw_box &x) { return x.lo[2] & ~(tcw_word<T>::elems - 1); }

/* The thread's words: qn words a channel, kTcwThreads threads.  Few words
 * (qn <= half the threads): the threads split into cgs groups of qn, group
 * cg taking channels cg, cg + cgs, ..; else each thread takes words tid +
 * s kTcwThreads of every channel. */
template <class T>
CT3D_DEV tcw_vrows tcw_vrows_of(const tcw_params &p, const tcw_box &x, int tid)
{
    constexpr int VE = tcw_word<T>::elems;
    tcw_vrows v;
    const int groups = p.qn <= kTcwThreads / 2 ? kTcwThreads / p.qn : 1;
    v.cgs = groups;
    v.cg = groups > 1 ? tid / p.qn : 0;
    const int w0 = tcw_vec_w0<T>(x);
    CT3D_UNROLL
    for (int s = 0; s < kTcwQSlots; s++) {
        const int q = groups > 1 ? (s == 0 && v.cg < groups ? tid - v.cg * p.qn : -1)
                                 : tid + s * kTcwThreads;
        v.dst[s] = -1;
        v.src[s] = -1;
        if (q < 0 || q >= p.qn)
            continue;
        const int row = q / p.nw, j = q - row * p.nw;
        const int z = row / x.ext[1], yy = row - z * x.ext[1];
        const int id = x.lo[0] + z, ih = x.lo[1] + yy, iw = w0 + j * VE;
        v.dst[s] = row * p.ewp + j * VE;
        if ((unsigned)id < (unsigned)p.in[0] && (unsigned)ih < (unsigned)p.in[1] &&
            (unsigned)iw < (unsigned)p.in[2])
            v.src[s] = (long long)id * p.xs[2] + (long long)ih * p.xs[3] + iw;
    }
    return v;
}

/* Copies the chunk's channels [ic0, ic0 + p.ck) of the box's window, a
 * 16-byte word at a time, into win ([channel][row][ewp] elements, channel
 * pitch cs elements: the f32 window, or the half data's raw one); zeros
 * outside x and past C_in/G. */
template <class T>
CT3D_DEV void tcw_copy_rows(const tcw_params &p, const tcw_box &x, const tcw_vrows &v, T *win,
                            int ic0)
{
    const T *xt = reinterpret_cast<const T *>(p.x);
    const long long base = x.n * p.xs[0] + (long long)(x.g * p.cig + ic0) * p.xs[1];
    CT3D_UNROLL
    for (int s = 0; s < kTcwQSlots; s++) {
        if (v.dst[s] < 0)
            continue;
        for (int c = v.cg; c < tcw_chunk_channels(sizeof(T)); c += v.cgs) {
            const bool ok = v.src[s] >= 0 && ic0 + c < p.cig;
            copy16(reinterpret_cast<float *>(win + c * p.cs + v.dst[s]),
                   reinterpret_cast<const float *>(ok ? xt + base + c * p.xs[1] + v.src[s] : xt),
                   ok);
        }
    }
}

/* Half data: the raw window's channels 2k and 2k + 1 into the window words
 * of pair k (the low half the even channel, as the k16 A fragment holds
 * them), a word of 8 positions at a time. */
CT3D_DEV void tcw_pair_rows(const tcw_params &p, const tcw_vrows &v, const unsigned short *raw,
                            unsigned *win)
{
    const int rcs = p.cs; /* raw channel pitch (elements) = pair pitch (words) */
    CT3D_UNROLL
    for (int s = 0; s < kTcwQSlots; s++) {
        if (v.dst[s] < 0)
            continue;
        for (int k = v.cg; k < kTcwCk; k += v.cgs) {
            const uint4 a = *reinterpret_cast<const uint4 *>(raw + 2 * k * rcs + v.dst[s]);
            const uint4 b = *reinterpret_cast<const uint4 *>(raw + (2 * k + 1) * rcs + v.dst[s]);
            const unsigned av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
            unsigned o[8];
            CT3D_UNROLL
            for (int e = 0; e < 4; e++) {
                o[2 * e] = (av[e] & 0xffffu) | (bv[e] << 16);
                o[2 * e + 1] = (av[e] >> 16) | (bv[e] & 0xffff0000u);
            }
            uint4 *dst = reinterpret_cast<uint4 *>(win + k * p.cs + v.dst[s]);
            const uint4 lo = {o[0], o[1], o[2], o[3]}, hi = {o[4], o[5], o[6], o[7]};
            dst[0] = lo;
            dst[1] = hi;
        }
    }
}

/* ---- channels-last staging (p.cl) ------------------------------------------
 * NDHWC x holds a position's channels together: a chunk's kTcwCk words of
 * a position are two 16-byte runs of x, copied as they are into the
 * window's [position][kTcwCk] layout (half data arrives paired: the even
 * channel in the low half, as the k16 A fragment holds it).  Element
 * staging in the NCDHW layout read 8 or 16 channels C_in apart for every
 * position and scattered them over 8 channel rows. */

/* The window word of (position, 16-byte half of its words): half h is
 * stored in half h ^ bit 2 of the position, so the fragment loads' 8
 * consecutive positions x 4 words fall in distinct banks. */
CT3D_DEV int tcw_cl_word(int pos, int h) { return pos * kTcwCk + ((h * kTcwClHalf) ^ (pos & 4)); }

/* Copies the chunk's channels [ic0, ic0 + p.ck) of every position of the
 * box's window into win (tcw_cl_word), zeros outside x and past C_in/G:
 * 16-byte copies where p.vec is on (C_in/G a multiple of a word, x
 * aligned), else element by element. */
template <class T>
CT3D_DEV void tcw_copy_positions(const tcw_params &p, const tcw_box &x, float *win, int ic0,
                                 int tid)
{
    constexpr int VE = tcw_word<T>::elems;
    const int ew = x.ext[2], ey = x.ext[1];
    const int halves = 2 * x.ext[0] * ey * ew;
    const T *xt = reinterpret_cast<const T *>(p.x);
    const long long base = x.n * p.xs[0] + (long long)(x.g * p.cig + ic0) * p.xs[1];
    for (int e = tid; e < halves; e += kTcwThreads) {
        const int q = e >> 1, h = e & 1;
        const int row = q / ew, xx = q - row * ew;
        const int z = row / ey, yy = row - z * ey;
        const int id = x.lo[0] + z, ih = x.lo[1] + yy, iw = x.lo[2] + xx;
        const int c0 = ic0 + h * VE; /* the half's first channel */
        const bool in = (unsigned)id < (unsigned)p.in[0] && (unsigned)ih < (unsigned)p.in[1] &&
                        (unsigned)iw < (unsigned)p.in[2] && c0 < p.cig;
        const T *src = in ? xt + base + (long long)(h * VE) * p.xs[1] + (long long)id * p.xs[2] +
                                (long long)ih * p.xs[3] + (long long)iw * p.xs[4]
                          : xt;
        float *dst = win + tcw_cl_word(row * p.ewp + xx, h);
        if (p.vec)
            copy16(dst, reinterpret_cast<const float *>(src), in);
        else
            copy_elems16<T>(dst, src, in ? imin(p.cig - c0, VE) : 0, p.xs[1]);
    }
}

/* The thread's A fragment words of a tap: channel words t and t + 4 at
 * positions a and a + 8 (a: its fragment row's window position, the tap's
 * shift added), in the NCDHW window ([word][position], pitch p.cs) or the
 * channels-last one. */
template <bool CL, class W>
CT3D_DEV void tcw_a_words(const tcw_params &p, const W *win, int a, int t, W (&f)[4])
{
    if constexpr (CL) {
        const int s4 = a & 4, base = a * kTcwCk + t;
        const W *lo = win + base + s4, *hi = win + base + kTcwClHalf - s4;
        f[0] = lo[0];
        f[1] = lo[8 * kTcwCk];
        f[2] = hi[0];
        f[3] = hi[8 * kTcwCk];
    } else {
        const W *ap = win + a + t * p.cs;
        f[0] = ap[0];
        f[1] = ap[8];
        f[2] = ap[4 * p.cs];
        f[3] = ap[4 * p.cs + 8];
    }
}

/* The packed-weight tap index (kd kH + kh) kW + kw of each tap of the box's
 * phase, in tap order, into tapk (once per box: the weight copies of every
 * chunk read it instead of dividing), and each tap's window shift into
 * tapk[p.maxtaps + tap]: its distance from the phase's last tap (the window
 * starts at the last tap's first input), the same for every position, so
 * that the MMA loop reads it instead of recomputing it (round 31: ~12 of a
 * tap's 59 instructions). */
CT3D_DEV void tcw_tap_table(const tcw_params &p, const tcw_box &x, int *tapk, int tid)
{
    const int tpd = x.e[0].taps, tph = x.e[1].taps, tpw = x.e[2].taps;
    const int plane = x.ext[1] * p.ewp;
    for (int tap = tid; tap < x.taps; tap += kTcwThreads) {
        const int a = tap / (tph * tpw), rem = tap - a * tph * tpw;
        const int bb = rem / tpw, cc = rem - bb * tpw;
        const int kd = x.e[0].k0 + a * p.kstep[0], kh = x.e[1].k0 + bb * p.kstep[1],
                  kw = x.e[2].k0 + cc * p.kstep[2];
        tapk[tap] = (kd * p.k[1] + kh) * p.k[2] + kw;
        tapk[p.maxtaps + tap] = (tpd - 1 - a) * p.dm[0] * plane +
                                (tph - 1 - bb) * p.dm[1] * p.ewp + (tpw - 1 - cc) * p.dm[2];
    }
}

/* Copies the weights of channels [ic0, ic0 + ck) for every tap of the
 * box's phase into wsm as [tap][channel][kTcwBPitch] elements (16-byte
 * copies of 4 f32 or 8 16-bit output channels), zeros past C_in/G. */
template <class T>
CT3D_DEV void tcw_stage_weights(const tcw_params &p, const tcw_box &x, const int *tapk,
                                float *wsm, int ic0, int tid)
{
    constexpr int per16 = 16 / sizeof(T);                /* output channels a copy */
    constexpr int ck = tcw_chunk_channels(sizeof(T));
    constexpr int lanes = kTcwOcb / per16;                 /* copies a channel's row */
    const int copies = x.taps * ck * lanes;
    /* the same in every copy of the thread: ck * lanes = 64 copies a tap */
    const int k = (tid / lanes) % ck, c = tid % lanes;
    const int ic = ic0 + k;
    const bool valid = ic < p.cig;
    const T *src = reinterpret_cast<const T *>(p.w) +
                   (((long long)(x.g * p.nocb + x.ob) * p.cig + (valid ? ic : 0)) * p.kvol) *
                       kTcwOcb + c * per16;
    T *dst = reinterpret_cast<T *>(wsm) + k * kTcwBPitch + c * per16;
    for (int e = tid; e < copies; e += kTcwThreads) {
        const int tap = e / (ck * lanes);
        copy16(reinterpret_cast<float *>(dst + tap * ck * kTcwBPitch),
               reinterpret_cast<const float *>(src + (valid ? tapk[tap] * kTcwOcb : 0)), valid);
    }
}

/* Calls step(shift) for every tap of the box's phase in the weights'
 * [tap] order (D, H, W), shift from the tap table (tcw_tap_table).  Both
 * inner products walk the taps here; step advances its own weight pointer. */
template <class Step>
CT3D_DEV void tcw_for_each_tap(const tcw_box &x, const int *shifts, Step &&step)
{
    for (int tap = 0; tap < x.taps; tap++)
        step(shifts[tap]);
}

/* One chunk of f32 data: every tap of the phase as a k8 MMA step on the
 * staged window and weights.  arow[mt]: the window offset of the thread's
 * fragment row g of MMA tile mt before a tap's shift (tcw_for_each_tap).
 * ROUNDED: the window holds TF32 values already (tcw_round_window). */
template <int MATH, bool CL, bool ROUNDED = false>
CT3D_DEV void tcw_compute(const tcw_params &p, const tcw_box &x, const float *win,
                          const float *wsm, const int *shifts, const int (&arow)[2],
                          float (&acc)[2][4][4], int lane, int tid)
{
    constexpr bool kSplit = MATH == TCW_3XTF32, kRound = MATH == TCW_TF32 && !ROUNDED;
    const int g = lane >> 2, t = lane & 3;
    const float *wt = wsm + t * kTcwBPitch + g;
    tcw_for_each_tap(x, shifts, [&](int shift) {
        unsigned bbig[4][2], bsmall[4][2];
        CT3D_UNROLL
        for (int nt = 0; nt < 4; nt++) {
            tf32_operand_parts<kSplit, false>(wt[nt * 8], bbig[nt][0], bsmall[nt][0]);
            tf32_operand_parts<kSplit, false>(wt[4 * kTcwBPitch + nt * 8], bbig[nt][1],
                                              bsmall[nt][1]);
        }
        CT3D_UNROLL
        for (int mt = 0; mt < 2; mt++) {
            float af[4];
            tcw_a_words<CL>(p, win, arow[mt] + shift, t, af);
            unsigned abig[4], asmall[4];
            CT3D_UNROLL
            for (int j = 0; j < 4; j++)
                tf32_operand_parts<kSplit, kRound>(af[j], abig[j], asmall[j]);
            CT3D_UNROLL
            for (int nt = 0; nt < 4; nt++)
                mma_tf32_parts<kSplit>(acc[mt][nt], abig, asmall, bbig[nt], bsmall[nt], tid);
        }
        mma_flush(tid);
        wt += tcw_chunk_channels(sizeof(float)) * kTcwBPitch;
    });
}

/* One chunk of half data: every tap of the phase as a k16 MMA step.  A's
 * fragment words (channel pairs t and t + 4 at positions g and g + 8) are
 * read as tcw_compute reads its TF32 ones; B's come from the [channel][oc]
 * weight rows by ldmatrix .trans, two n8 tiles a call. */
template <class T, bool CL>
CT3D_DEV void tcw_compute_half(const tcw_params &p, const tcw_box &x, const float *win,
                               const float *wsm, const int *shifts, const int (&arow)[2],
                               float (&acc)[2][4][4], int lane, int tid)
{
    const int t = lane & 3;
    const unsigned *wwin = reinterpret_cast<const unsigned *>(win);
    const unsigned short *wt = reinterpret_cast<const unsigned short *>(wsm);
    tcw_for_each_tap(x, shifts, [&](int shift) {
        unsigned b[4][2];
        CT3D_UNROLL
        for (int np = 0; np < 2; np++) {
            unsigned m[4];
            ldsm_x4_trans<kLdsmB>(m, wt + 16 * np, kTcwBPitch, lane);
            b[2 * np][0] = m[0];
            b[2 * np][1] = m[1];
            b[2 * np + 1][0] = m[2];
            b[2 * np + 1][1] = m[3];
        }
        CT3D_UNROLL
        for (int mt = 0; mt < 2; mt++) {
            unsigned af[4];
            tcw_a_words<CL>(p, wwin, arow[mt] + shift, t, af);
            CT3D_UNROLL
            for (int nt = 0; nt < 4; nt++)
                mma_half<T>(acc[mt][nt], af, b[nt], tid);
        }
        mma_flush(tid);
        wt += tcw_chunk_channels(sizeof(T)) * kTcwBPitch;
    });
}

/* Adds the bias and stores the thread's accumulators: C[g][2t..2t+1] and
 * C[g+8][..] of each MMA tile, rows W positions, columns output channels.
 * The thread's 8 channels' offsets, bounds and biases are found once, not
 * at each of the 32 stores (round 31: the store took ~1000 instructions a
 * warp, 6-10% of the kernel; round 32, H100, k3s1p1: 765 with this). */
template <class T>
CT3D_DEV void tcw_store(const tcw_params &p, const tcw_box &x, const float (&acc)[2][4][4],
                        int warp, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    T *y = reinterpret_cast<T *>(p.y);
    const T *bias = reinterpret_cast<const T *>(p.bias);
    long long choff[4][2];
    float bv[4][2];
    bool live[4][2];
    CT3D_UNROLL
    for (int nt = 0; nt < 4; nt++)
        CT3D_UNROLL
        for (int j = 0; j < 2; j++) {
            const int oc = x.ob * kTcwOcb + nt * 8 + 2 * t + j;
            live[nt][j] = oc < p.cog;
            choff[nt][j] = (long long)oc * p.ys[1];
            bv[nt][j] = bias && live[nt][j] ? load_elem(bias + x.g * p.cog + oc) : 0.0f;
        }
    const long long ybase = x.n * p.ys[0] + (long long)x.g * p.cog * p.ys[1];
    CT3D_UNROLL
    for (int mt = 0; mt < 2; mt++) {
        const int rr = 2 * warp + mt, dd = rr / p.th, hh = rr - dd * p.th;
        const int qd = x.q0[0] + dd, qh = x.q0[1] + hh;
        if (qd >= x.e[0].qlo + x.e[0].qcount || qh >= x.e[1].qlo + x.e[1].qcount)
            continue;
        const long long od = (long long)qd * p.s[0] + x.r[0] - p.p[0];
        const long long oh = (long long)qh * p.s[1] + x.r[1] - p.p[1];
        CT3D_UNROLL
        for (int half = 0; half < 2; half++) {
            const int qw = x.q0[2] + g + 8 * half;
            if (qw >= x.e[2].qlo + x.e[2].qcount)
                continue;
            const long long ow = (long long)qw * p.s[2] + x.r[2] - p.p[2];
            T *yp = y + (ybase + od * p.ys[2] + oh * p.ys[3] + ow * p.ys[4]);
            CT3D_UNROLL
            for (int nt = 0; nt < 4; nt++)
                CT3D_UNROLL
                for (int j = 0; j < 2; j++) {
                    if (!live[nt][j])
                        continue;
                    float v = acc[mt][nt][2 * half + j];
                    if (bias) /* not + 0: that would turn a -0 sum into +0 */
                        v += bv[nt][j];
                    store_elem(yp + choff[nt][j], v);
                }
        }
    }
}

/* The stage's window [0, floats) rounded to TF32 in place, 16 bytes a
 * thread at a time (floats and win 16-byte multiples): the same bits the
 * MMA loop's rounding would give each element at each tap. */
CT3D_DEV void tcw_round_window(float *win, int floats, int tid)
{
    for (int i = 4 * tid; i < floats; i += 4 * kTcwThreads) {
        float4 v = *reinterpret_cast<float4 *>(win + i);
        v.x = tf32_value(to_tf32(v.x));
        v.y = tf32_value(to_tf32(v.y));
        v.z = tf32_value(to_tf32(v.z));
        v.w = tf32_value(to_tf32(v.w));
        *reinterpret_cast<float4 *>(win + i) = v;
    }
}

/* The chunks of the box into acc with element staging (any data), or
 * vector staging of f32 data: the window is filled in its stage either way
 * (by cp.async, or for half data through registers). */
template <int MATH, class T, bool CL>
CT3D_DEV void tcw_chunks(const tcw_params &p, const tcw_box &x, float *smem, const int *tapk,
                         const int (&arow)[2], float (&acc)[2][4][4], int tid)
{
    const int warp = tid >> 5, lane = tid & 31;
    const int wofs = p.wofs;
    const bool vec = sizeof(T) == sizeof(float) && p.vec && !CL;
    tcw_vrows v;
    if (vec)
        v = tcw_vrows_of<T>(p, x, tid);
    auto stage = [&](float *buf, int ic0) {
        if (CL)
            tcw_copy_positions<T>(p, x, buf, ic0, tid);
        else if (vec)
            tcw_copy_rows<float>(p, x, v, buf, ic0);
        else
            tcw_stage_window<T>(p, x, buf, ic0, warp, lane);
        tcw_stage_weights<T>(p, x, tapk, buf + wofs, ic0, tid);
        copy_commit();
    };
    const bool preround = MATH == TCW_TF32 && p.preround > 0 && x.taps >= p.preround;
    stage(smem, 0);
    for (int c = 0; c < p.nchunks; c++) {
        float *cur = smem + (c & 1) * p.stage_floats;
        if (c + 1 < p.nchunks) {
            stage(smem + ((c + 1) & 1) * p.stage_floats, (c + 1) * p.ck);
            copy_wait_groups<1>();
        } else {
            copy_wait_groups<0>();
        }
        CT3D_SYNC();
        const int *shifts = tapk + p.maxtaps;
        if constexpr (MATH == TCW_HALF) {
            tcw_compute_half<T, CL>(p, x, cur, cur + wofs, shifts, arow, acc, lane, tid);
        } else if (preround) {
            tcw_round_window(cur, wofs, tid);
            CT3D_SYNC();
            tcw_compute<MATH, CL, true>(p, x, cur, cur + wofs, shifts, arow, acc, lane, tid);
        } else {
            tcw_compute<MATH, CL>(p, x, cur, cur + wofs, shifts, arow, acc, lane, tid);
        }
        CT3D_SYNC(); /* the next chunk's copies overwrite this stage */
    }
}

/* The chunks of the box into acc with vector staging of half data: chunk
 * c + 1's raw window and weights are copied while chunk c is paired and
 * computed.  One raw buffer: chunk c is paired into its stage's window
 * before chunk c + 1's copies are issued (two barriers a chunk). */
template <class T>
CT3D_DEV void tcw_chunks_half_vec(const tcw_params &p, const tcw_box &x, float *smem,
                                  const int *tapk, const int (&arow)[2], float (&acc)[2][4][4],
                                  int tid)
{
    const int lane = tid & 31;
    const int wofs = p.wofs;
    unsigned short *raw = reinterpret_cast<unsigned short *>(smem + 2 * p.stage_floats);
    const tcw_vrows v = tcw_vrows_of<T>(p, x, tid);
    auto copy = [&](int c) {
        tcw_copy_rows<unsigned short>(p, x, v, raw, c * p.ck);
        tcw_stage_weights<T>(p, x, tapk, smem + (c & 1) * p.stage_floats + wofs, c * p.ck, tid);
        copy_commit();
    };
    copy(0);
    for (int c = 0; c < p.nchunks; c++) {
        float *cur = smem + (c & 1) * p.stage_floats;
        copy_wait_groups<0>();
        CT3D_SYNC(); /* chunk c has landed; chunk c - 1's compute is done */
        tcw_pair_rows(p, v, raw, reinterpret_cast<unsigned *>(cur));
        CT3D_SYNC(); /* chunk c is paired; the raw buffer is free */
        if (c + 1 < p.nchunks)
            copy(c + 1);
        tcw_compute_half<T, false>(p, x, cur, cur + wofs, tapk + p.maxtaps, arow, acc, lane,
                                   tid);
    }
}

/* The chunks of the box into acc, by the layout and staging the plan and
 * launch chose. */
template <int MATH, class T>
CT3D_DEV void tcw_run_chunks(const tcw_params &p, const tcw_box &x, float *smem, const int *tapk,
                             const int (&arow)[2], float (&acc)[2][4][4], int tid)
{
    if (p.cl)
        return tcw_chunks<MATH, T, true>(p, x, smem, tapk, arow, acc, tid);
    if constexpr (MATH == TCW_HALF)
        if (p.vec)
            return tcw_chunks_half_vec<T>(p, x, smem, tapk, arow, acc, tid);
    tcw_chunks<MATH, T, false>(p, x, smem, tapk, arow, acc, tid);
}

/* Block b of the grid (params.h for the order). */
template <int MATH, class T>
CT3D_DEV void tcw_block(const tcw_params &p, float *smem, int tid, long long b)
{
    const tcw_box x = tcw_box_of(p, b);
    if (x.empty)
        return;
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2;
    float acc[2][4][4];
    for (int mt = 0; mt < 2; mt++)
        for (int nt = 0; nt < 4; nt++)
            for (int e = 0; e < 4; e++)
                acc[mt][nt][e] = 0.0f;
    /* NCDHW vector staging puts input lo[2] at column lo[2] - w0 of the window */
    const int wshift = p.vec && !p.cl ? x.lo[2] - tcw_vec_w0<T>(x) : 0;
    int arow[2];
    for (int mt = 0; mt < 2; mt++) {
        const int rr = 2 * warp + mt, dd = rr / p.th, hh = rr - dd * p.th;
        arow[mt] = (dd * x.ext[1] + hh) * p.ewp + g + wshift;
    }
    if (x.taps > 0) {
        int *tapk = reinterpret_cast<int *>(smem + 2 * p.stage_floats + p.raw_floats);
        tcw_tap_table(p, x, tapk, tid);
        CT3D_SYNC();
        tcw_run_chunks<MATH, T>(p, x, smem, tapk, arow, acc, tid);
    }
    tcw_store<T>(p, x, acc, warp, lane);
}

} // namespace ct3d

#endif
