/* The phase-split direct kernel: the workhorse of the CUDA backend.
 *
 * Each output dim splits by stride phase r = (o + p) mod s into a dense
 * stride-1 correlation with a fixed sub-kernel: o = q*s + r - p reads inputs
 * i = q - m0 - t*dm through taps k = k0 + t*kstep.  One launch covers every
 * phase; no per-tap divisibility tests, no divergence.
 *
 * A block owns (n, group, output-channel block, a tile of q rows in D and H,
 * a run of W outputs).  It stages into shared memory the input tile its
 * phases read (zero-padded: the hot loop has no bounds checks) and the
 * weights of its taps, then each thread accumulates a register tile of
 * SW*QW consecutive W outputs (QW per W phase, the W phases interleaved so
 * stores are contiguous) x OCT output channels.  Along W the thread keeps a
 * sliding window of QW+T-1 inputs in registers, so each loaded input feeds
 * up to T*OCT FMAs and each float4 weight load (broadcast across the warp)
 * feeds QW*4.
 *
 * Two ways to use it (phase_params.all_phases):
 *   grouped (1): the block stages all of C_in/G once and loops over every
 *     (D, H) phase pair: small channel counts, the input tile reused s^2 times.
 *   tiled (0): the block handles one (D, H) phase pair and loops over input-
 *     channel chunks, staging only that phase's taps: large channel counts,
 *     implicit-GEMM style (positions x Cog tile, K = C_in x taps).
 *
 * This header holds only the per-block body so that it can be compiled for
 * the host and checked there by an emulator (CONVT3D_GPU_EMULATE). */
#ifndef CONVT3D_GPU_PHASE_KERNEL_H
#define CONVT3D_GPU_PHASE_KERNEL_H

#include "../common/device.cuh"
#include "params.h"


namespace ct3d {

/* Where this thread sits in its block. */
struct block_ctx {
    long long n;
    int g, ob;
    int tile[3];
    int tid, lane, warp, nwarps;
    int slice, stid; /* input-channel slice, thread index within it */
    int toc, txi, tyi, tzi;
};

/* One of D, H for the block: which q rows, which input rows are staged,
 * which weight taps are staged, and how a phase's taps index them. */
struct dh_geom {
    int q0;     /* first q row of the tile (of the phase being computed) */
    int qbase;  /* grouped mode: the union's first q row of the tile */
    int lo;     /* first staged input index */
    int ext;    /* staged input rows */
    int kfirst; /* staged weight tap j is kernel tap kfirst + j*kstep_stage */
    int kstep_stage;
    int wn; /* staged weight taps */
    /* the phase being computed */
    int taps;
    int zbase; /* staged row of tap 0 for thread row 0 */
    int dm;    /* rows between consecutive taps (input dilation of the phase) */
    int w0, wstep; /* staged weight index of tap 0, step per tap */
};


/* Grouped mode: the union over all phases of dim d for tile index tile. */
CT3D_DEV dh_geom geom_all(const phase_params &p, int d, int tile, int threads)
{
    dh_geom g;
    g.q0 = p.qlo_all[d] + tile * threads;
    g.qbase = g.q0;
    g.lo = g.q0 - p.hal_all[d];
    g.ext = threads + p.ext_all[d];
    g.kfirst = 0;
    g.kstep_stage = 1;
    g.wn = p.k[d];
    g.taps = 0;
    g.zbase = 0;
    g.dm = p.dm[d];
    g.w0 = 0;
    g.wstep = 1;
    return g;
}

/* Grouped mode: phase r within the union tile (shifted to the phase's own
 * first q row with align_all). */
CT3D_DEV void geom_all_phase(const phase_params &p, int d, int r, dh_geom &g)
{
    const phase_entry &e = p.ph[d][r];
    const int shift = p.align_all ? e.qlo - p.qlo_all[d] : 0;
    g.q0 = g.qbase + shift;
    g.taps = e.taps;
    g.zbase = p.hal_all[d] - e.m0 + shift;
    g.w0 = e.k0;
    g.wstep = p.kstep[d];
}

/* Tiled mode: phase r only. */
CT3D_DEV dh_geom geom_one(const phase_params &p, int d, int r, int tile, int threads)
{
    const phase_entry &e = p.ph[d][r];
    dh_geom g;
    const int hal = e.taps > 0 ? e.m0 + (e.taps - 1) * p.dm[d] : 0;
    g.q0 = e.qlo + tile * threads;
    g.qbase = g.q0;
    g.lo = g.q0 - hal;
    g.ext = e.taps > 0 ? threads + (e.taps - 1) * p.dm[d] : 0;
    g.kfirst = e.k0;
    g.kstep_stage = p.kstep[d];
    g.wn = e.taps;
    g.taps = e.taps;
    g.zbase = e.taps > 0 ? (e.taps - 1) * p.dm[d] : 0;
    g.dm = p.dm[d];
    g.w0 = 0;
    g.wstep = 1;
    return g;
}

/* Whether any of the tile's q rows [q0, q0 + threads) is an output row of
 * phase r of dim d (uniform across the block: skips whole-tile waste at the
 * edges, where the union of the phases' q ranges is wider than each). */
CT3D_DEV bool tile_has_rows(const phase_params &p, int d, int r, int q0, int threads)
{
    const phase_entry &e = p.ph[d][r];
    return q0 < e.qlo + e.qcount && q0 + threads > e.qlo;
}


/* The rows [r0, r1) of a [c][z][y] block that warp w of nw copies: a
 * contiguous range, so the next row is one addition away (staging was a
 * third of the instructions of the chunked shapes when every row was found
 * by division). */
struct row_range {
    int r0, r1, c, z, y;
};

CT3D_DEV row_range rows_of_warp(int rows, int ny, int nz, int w, int nw)
{
    row_range r;
    const int per = (rows + nw - 1) / nw;
    r.r0 = w * per;
    r.r1 = imin(r.r0 + per, rows);
    const int plane = ny * nz;
    r.c = r.r0 / plane;
    const int rem = r.r0 - r.c * plane;
    r.z = rem / ny;
    r.y = rem - r.z * ny;
    return r;
}

/* Copies the input tile [cnt channels][gd.ext][gh.ext][p.ew] into shared
 * memory, zeros outside the tensor.  Each warp takes a contiguous range of
 * rows, lanes along W (coalesced reads in NCDHW); a lane's W column and
 * whether it lies inside the tensor are the same in every row, so the loop
 * over rows is innermost and does only additions and compares. */
CT3D_DEV void stage_input(const phase_params &p, float *tile, const block_ctx &b, int ic0, int cnt,
                          const dh_geom &gd, const dh_geom &gh, int iw_lo)
{
    const row_range rr = rows_of_warp(cnt * gd.ext * gh.ext, gh.ext, gd.ext, b.warp, b.nwarps);
    if (rr.r0 >= rr.r1)
        return;
    /* source offset of row (c, z, y), stepped along y, then z, then c */
    const long long step_z = p.xs[2] - (long long)gh.ext * p.xs[3];
    const long long step_c = p.xs[1] - (long long)gd.ext * p.xs[2];
    const long long first = b.n * p.xs[0] + (long long)(b.g * p.cig + ic0 + rr.c) * p.xs[1] +
                            (long long)(gd.lo + rr.z) * p.xs[2] +
                            (long long)(gh.lo + rr.y) * p.xs[3];
    for (int xx = b.lane; xx < p.ew; xx += 32) {
        const int iw = iw_lo + xx;
        const bool in_w = (unsigned)iw < (unsigned)p.in[2];
        long long off = first + (long long)iw * p.xs[4];
        int id = gd.lo + rr.z, ih = gh.lo + rr.y;
        const int ih_first = gh.lo, ih_end = gh.lo + gh.ext, id_first = gd.lo,
                  id_end = gd.lo + gd.ext;
        float *dst = tile + (long long)rr.r0 * p.pitch + xx;
        for (int r = rr.r0; r < rr.r1; r++) {
            const bool in = in_w && (unsigned)id < (unsigned)p.in[0] &&
                            (unsigned)ih < (unsigned)p.in[1];
            copy4(dst, p.x + (in ? off : 0), in);
            dst += p.pitch;
            off += p.xs[3];
            if (++ih == ih_end) {
                ih = ih_first;
                off += step_z;
                if (++id == id_end) {
                    id = id_first;
                    off += step_c;
                }
            }
        }
    }
}

/* stage_input for half x (f16_t, bf16_t): cp.async cannot widen, so each
 * lane issues the loads of kHalfStageBatch rows before it widens and stores
 * any of them (their latencies overlap, as in the half dwtile staging); the
 * tile it leaves is the f32 one stage_input leaves, so the hot loops are the
 * f32 ones. */
constexpr int kHalfStageBatch = 4;
template <class T>
CT3D_DEV void stage_input_half(const phase_params &p, float *tile, const block_ctx &b, int ic0,
                               int cnt, const dh_geom &gd, const dh_geom &gh, int iw_lo)
{
    const row_range rr = rows_of_warp(cnt * gd.ext * gh.ext, gh.ext, gd.ext, b.warp, b.nwarps);
    if (rr.r0 >= rr.r1)
        return;
    const T *x = reinterpret_cast<const T *>(p.x);
    const long long step_z = p.xs[2] - (long long)gh.ext * p.xs[3];
    const long long step_c = p.xs[1] - (long long)gd.ext * p.xs[2];
    const long long first = b.n * p.xs[0] + (long long)(b.g * p.cig + ic0 + rr.c) * p.xs[1] +
                            (long long)(gd.lo + rr.z) * p.xs[2] +
                            (long long)(gh.lo + rr.y) * p.xs[3];
    for (int xx = b.lane; xx < p.ew; xx += 32) {
        const int iw = iw_lo + xx;
        const bool in_w = (unsigned)iw < (unsigned)p.in[2];
        long long off = first + (long long)iw * p.xs[4];
        int id = gd.lo + rr.z, ih = gh.lo + rr.y;
        const int ih_first = gh.lo, ih_end = gh.lo + gh.ext, id_first = gd.lo,
                  id_end = gd.lo + gd.ext;
        float *dst = tile + (long long)rr.r0 * p.pitch + xx;
        for (int r = rr.r0; r < rr.r1; r += kHalfStageBatch) {
            unsigned short bits[kHalfStageBatch];
            CT3D_UNROLL
            for (int j = 0; j < kHalfStageBatch; j++) {
                bits[j] = 0; /* +0 in f16 and bf16: the zero padding */
                if (r + j >= rr.r1)
                    break;
                if (in_w && (unsigned)id < (unsigned)p.in[0] && (unsigned)ih < (unsigned)p.in[1])
                    bits[j] = load_bits(x + off);
                off += p.xs[3];
                if (++ih == ih_end) {
                    ih = ih_first;
                    off += step_z;
                    if (++id == id_end) {
                        id = id_first;
                        off += step_c;
                    }
                }
            }
            CT3D_UNROLL
            for (int j = 0; j < kHalfStageBatch; j++)
                if (r + j < rr.r1)
                    dst[(long long)j * p.pitch] = widen_bits(x, bits[j]);
            dst += (long long)kHalfStageBatch * p.pitch;
        }
    }
}

/* The input tile of x's element type T, widened to f32 in shared memory. */
template <class T>
CT3D_DEV void stage_input_as(const phase_params &p, float *tile, const block_ctx &b, int ic0,
                             int cnt, const dh_geom &gd, const dh_geom &gh, int iw_lo)
{
    if constexpr (sizeof(T) == sizeof(float))
        stage_input(p, tile, b, ic0, cnt, gd, gh, iw_lo);
    else
        stage_input_half<T>(p, tile, b, ic0, cnt, gd, gh, iw_lo);
}

/* Copies the weights of the staged taps into shared memory as rows
 * [icl][wd][wh], each row toc blocks of wrow4 float4s; block toc holds the
 * thread's OCT channels for every kw, W phase by W phase (kwpos), so a
 * thread's taps sit at compile-time offsets and lanes of different toc hit
 * different banks (wrow4 odd).  A lane's place in a row is the same in every
 * row, so it is found once per lane, not per row. */
template <int OCT>
CT3D_DEV void stage_weights(const phase_params &p, float *wsm, const block_ctx &b, int ic0, int cnt,
                            const dh_geom &gd, const dh_geom &gh)
{
    const row_range rr = rows_of_warp(cnt * gd.wn * gh.wn, gh.wn, gd.wn, b.warp, b.nwarps);
    if (rr.r0 >= rr.r1)
        return;
    const int ocb4 = p.ocb / 4, run4 = p.k[2] * ocb4;
    const int row4 = p.toc * p.wrow4;
    /* source row (in float4s) of (c, z, y): tap kd = kfirst + z * kstep */
    const long long tap4 = (long long)p.k[2] * ocb4;
    const long long step_y = (long long)gh.kstep_stage * tap4;
    const long long step_z = (long long)gd.kstep_stage * p.k[1] * tap4 - gh.wn * step_y;
    const long long step_c = (long long)p.k[0] * p.k[1] * tap4 -
                             gd.wn * (long long)gd.kstep_stage * p.k[1] * tap4;
    const long long first =
        ((((long long)(b.g * p.nocb + b.ob) * p.cig + ic0 + rr.c) * p.k[0] + gd.kfirst +
          (long long)rr.z * gd.kstep_stage) * p.k[1] + gh.kfirst + (long long)rr.y * gh.kstep_stage) *
        tap4;
    const float4 *src4 = reinterpret_cast<const float4 *>(p.w);
    float4 *dst4 = reinterpret_cast<float4 *>(wsm);
    for (int e = b.lane; e < run4; e += 32) {
        const int kw = e / ocb4, o4 = e - kw * ocb4;
        const int toc = o4 / (OCT / 4), c4 = o4 - toc * (OCT / 4);
        const int at = toc * p.wrow4 + p.kwpos[kw] * (OCT / 4) + c4;
        long long off = first + e;
        int z = rr.z, y = rr.y;
        float4 *dst = dst4 + (long long)rr.r0 * row4 + at;
        for (int r = rr.r0; r < rr.r1; r++) {
            copy16(reinterpret_cast<float *>(dst), reinterpret_cast<const float *>(src4 + off),
                   true);
            dst += row4;
            off += step_y;
            if (++y == gh.wn) {
                y = 0;
                off += step_z;
                if (++z == gd.wn) {
                    z = 0;
                    off += step_c;
                }
            }
        }
    }
}


/* The hot loop for one W slot with TW taps: for every (D tap, H tap, input
 * channel) load a window of QW+TW-1 inputs and TW x OCT weights, do
 * TW*QW*OCT FMAs.  Offsets inside the loop body are compile-time. */
template <int QW, int OCT, int TW, int F>
CT3D_DEV void accumulate_slot(float (&acc)[QW][OCT], const float *tile, const float *wsm,
                              const phase_params &p, const block_ctx &b, const dh_geom &gd,
                              const dh_geom &gh, const wslot &ws, int cnt)
{
    const int ics = gd.ext * gh.ext * p.pitch;
    const int wrowf = p.toc * p.wrow4 * 4;
    const int wics = gd.wn * gh.wn * wrowf;
    const int ks = (F & kSliced) ? p.ks : 1, slice = (F & kSliced) ? b.slice : 0;
    const float *tbase = tile + b.txi * QW + ws.woff + slice * ics;
    const float *wbase = wsm + b.toc * p.wrow4 * 4 + ws.wpos * OCT + slice * wics;
    const int mine = (F & kSliced) ? (cnt - slice + ks - 1) / ks : cnt; /* slice, slice + ks, .. */
    const int ics_step = ics * ks, wics_step = wics * ks;
    for (int td = 0; td < gd.taps; td++) {
        const int zd = b.tzi + gd.zbase - td * gd.dm;
        const int wd = gd.w0 + td * gd.wstep;
        for (int th = 0; th < gh.taps; th++) {
            const int yh = b.tyi + gh.zbase - th * gh.dm;
            const int wh = gh.w0 + th * gh.wstep;
            const float *row = tbase + (zd * gh.ext + yh) * p.pitch;
            const float *wr = wbase + (wd * gh.wn + wh) * wrowf;
            float win[QW + TW - 1], w0[OCT];
            CT3D_UNROLL
            for (int j = 0; j < QW + TW - 1; j++)
                win[j] = row[j];
            load_floats<OCT>(w0, wr);
            CT3D_UNROLL2
            for (int ic = 0; ic < mine; ic++) {
                /* the next channel's window and first tap are loaded before
                 * this one's FMAs, which hide their latency (the last channel
                 * reloads its own) */
                const bool more = ic + 1 < mine;
                const float *next = more ? row + ics_step : row;
                float nwin[QW + TW - 1], nw0[OCT];
                CT3D_UNROLL
                for (int j = 0; j < QW + TW - 1; j++)
                    nwin[j] = next[j];
                load_floats<OCT>(nw0, more ? wr + wics_step : wr);
                CT3D_UNROLL
                for (int t = 0; t < TW; t++) {
                    float wv[OCT];
                    if (t == 0) {
                        CT3D_UNROLL
                        for (int o = 0; o < OCT; o++)
                            wv[o] = w0[o];
                    } else {
                        load_floats<OCT>(wv, wr + t * OCT);
                    }
                    CT3D_UNROLL
                    for (int i = 0; i < QW; i++) {
                        CT3D_UNROLL
                        for (int o = 0; o < OCT; o++)
                            acc[i][o] = fmaf(win[i + TW - 1 - t], wv[o], acc[i][o]);
                    }
                }
                CT3D_UNROLL
                for (int j = 0; j < QW + TW - 1; j++)
                    win[j] = nwin[j];
                CT3D_UNROLL
                for (int o = 0; o < OCT; o++)
                    w0[o] = nw0[o];
                row += ics_step;
                wr += wics_step;
            }
        }
    }
}

/* Picks the instantiation for the slot's tap count (uniform across the block). */
template <int QW, int OCT, int F>
CT3D_DEV void accumulate_dispatch(float (&acc)[QW][OCT], const float *tile, const float *wsm,
                                  const phase_params &p, const block_ctx &b, const dh_geom &gd,
                                  const dh_geom &gh, const wslot &ws, int cnt)
{
    switch (ws.taps) {
    case 1: accumulate_slot<QW, OCT, 1, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    case 2: accumulate_slot<QW, OCT, 2, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    case 3: accumulate_slot<QW, OCT, 3, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    case 4: accumulate_slot<QW, OCT, 4, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    case 5: accumulate_slot<QW, OCT, 5, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    case 6: accumulate_slot<QW, OCT, 6, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    case 7: accumulate_slot<QW, OCT, 7, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    case 8: accumulate_slot<QW, OCT, 8, F>(acc, tile, wsm, p, b, gd, gh, ws, cnt); break;
    default: break; /* no taps: the phase's outputs are bias only */
    }
}

/* Both W slots of a stride-2 run at once (phase_params.fuse_w): T0 and T1
 * taps, slot f's window starting A_f inputs into one shared window of
 * QW + max(T_f - 1 + A_f) inputs, loaded once for the two slots (k2s2: the
 * two W phases read the same inputs; kernelbench's k7: 3 and 4 taps from the
 * same first input). */
template <int QW, int OCT, int T0, int T1, int A0, int A1, int F>
CT3D_DEV void accumulate_pair(float (&acc)[2][QW][OCT], const float *tile, const float *wsm,
                              const phase_params &p, const block_ctx &b, const dh_geom &gd,
                              const dh_geom &gh, int cnt)
{
    constexpr int L = QW + (T0 - 1 + A0 > T1 - 1 + A1 ? T0 - 1 + A0 : T1 - 1 + A1);
    const int ics = gd.ext * gh.ext * p.pitch;
    const int wrowf = p.toc * p.wrow4 * 4;
    const int wics = gd.wn * gh.wn * wrowf;
    const int wmin = p.ws[0].woff - A0;
    const int ks = (F & kSliced) ? p.ks : 1, slice = (F & kSliced) ? b.slice : 0;
    const float *tbase = tile + b.txi * QW + wmin + slice * ics;
    const float *wbase = wsm + b.toc * p.wrow4 * 4 + slice * wics;
    const int wp0 = p.ws[0].wpos * OCT, wp1 = p.ws[1].wpos * OCT;
    const int mine = (F & kSliced) ? (cnt - slice + ks - 1) / ks : cnt;
    const int ics_step = ics * ks, wics_step = wics * ks;
    for (int td = 0; td < gd.taps; td++) {
        const int zd = b.tzi + gd.zbase - td * gd.dm;
        const int wd = gd.w0 + td * gd.wstep;
        for (int th = 0; th < gh.taps; th++) {
            const int yh = b.tyi + gh.zbase - th * gh.dm;
            const int wh = gh.w0 + th * gh.wstep;
            const float *row = tbase + (zd * gh.ext + yh) * p.pitch;
            const float *wr0 = wbase + (wd * gh.wn + wh) * wrowf + wp0;
            const float *wr1 = wbase + (wd * gh.wn + wh) * wrowf + wp1;
            /* the window one channel ahead (as accumulate_slot), and slot
             * 0's first tap too where there are two taps a slot: on the H200
             * that took k4s2p1 (T 2) from 0.625 to 0.596 ms but unet (T 1)
             * from 1.54 to 1.67 ms */
            constexpr bool ahead = T0 > 1;
            float win[L], w00[OCT];
            CT3D_UNROLL
            for (int j = 0; j < L; j++)
                win[j] = row[j];
            if constexpr (ahead)
                load_floats<OCT>(w00, wr0);
            CT3D_UNROLL2
            for (int ic = 0; ic < mine; ic++) {
                const bool more = ic + 1 < mine;
                const float *next = more ? row + ics_step : row;
                float nwin[L], nw00[OCT];
                CT3D_UNROLL
                for (int j = 0; j < L; j++)
                    nwin[j] = next[j];
                if constexpr (ahead)
                    load_floats<OCT>(nw00, more ? wr0 + wics_step : wr0);
                CT3D_UNROLL
                for (int f = 0; f < 2; f++) {
                    const int a = f ? A1 : A0, T = f ? T1 : T0;
                    const float *wr = f ? wr1 : wr0;
                    CT3D_UNROLL
                    for (int t = 0; t < T; t++) {
                        float wv[OCT];
                        if (ahead && f == 0 && t == 0) {
                            CT3D_UNROLL
                            for (int o = 0; o < OCT; o++)
                                wv[o] = w00[o];
                        } else {
                            load_floats<OCT>(wv, wr + t * OCT);
                        }
                        CT3D_UNROLL
                        for (int i = 0; i < QW; i++) {
                            CT3D_UNROLL
                            for (int o = 0; o < OCT; o++)
                                acc[f][i][o] = fmaf(win[a + i + T - 1 - t], wv[o], acc[f][i][o]);
                        }
                    }
                }
                CT3D_UNROLL
                for (int j = 0; j < L; j++)
                    win[j] = nwin[j];
                if constexpr (ahead) {
                    CT3D_UNROLL
                    for (int o = 0; o < OCT; o++)
                        w00[o] = nw00[o];
                }
                row += ics_step;
                wr0 += wics_step;
                wr1 += wics_step;
            }
        }
    }
}

/* fuse_w's instantiations (params.h, kFusePairs); false if none applies. */
template <int SW, int QW, int OCT, int F>
CT3D_DEV bool accumulate_fused(float (&acc)[SW][QW][OCT], const float *tile, const float *wsm,
                               const phase_params &p, const block_ctx &b, const dh_geom &gd,
                               const dh_geom &gh, int cnt)
{
    if constexpr (SW == 2 && (F & kFused) != 0) {
#define CT3D_FUSE_CASE(i)                                                                          \
    case i + 1:                                                                                    \
        accumulate_pair<QW, OCT, kFusePairs[i].t0, kFusePairs[i].t1, kFusePairs[i].a0,             \
                        kFusePairs[i].a1, F>(acc, tile, wsm, p, b, gd, gh, cnt);                   \
        return true;
        static_assert(kFusePairCount == 8, "one case per entry of kFusePairs");
        switch (p.fuse_w) {
            CT3D_FUSE_CASE(0)
            CT3D_FUSE_CASE(1)
            CT3D_FUSE_CASE(2)
            CT3D_FUSE_CASE(3)
            CT3D_FUSE_CASE(4)
            CT3D_FUSE_CASE(5)
            CT3D_FUSE_CASE(6)
            CT3D_FUSE_CASE(7)
        default: break;
        }
#undef CT3D_FUSE_CASE
    }
    return false;
}

template <int SW, int QW, int OCT, int F>
CT3D_DEV void accumulate_all_slots(float (&acc)[SW][QW][OCT], const float *tile, const float *wsm,
                                   const phase_params &p, const block_ctx &b, const dh_geom &gd,
                                   const dh_geom &gh, int cnt)
{
    if (gd.taps == 0 || gh.taps == 0)
        return;
    if (accumulate_fused<SW, QW, OCT, F>(acc, tile, wsm, p, b, gd, gh, cnt))
        return;
    CT3D_UNROLL
    for (int f = 0; f < SW; f++)
        accumulate_dispatch<QW, OCT, F>(acc[f], tile, wsm, p, b, gd, gh, p.ws[f], cnt);
}

/* Four outputs rounded to the half type T, packed for one 8-byte store. */
template <class T>
CT3D_DEV unsigned long long pack4_half(float a, float b, float c, float d)
{
    T h[4];
    store_elem(&h[0], a);
    store_elem(&h[1], b);
    store_elem(&h[2], c);
    store_elem(&h[3], d);
    return (unsigned long long)h[0].bits | (unsigned long long)h[1].bits << 16 |
           (unsigned long long)h[2].bits << 32 | (unsigned long long)h[3].bits << 48;
}

/* Writes the thread's SW*QW x OCT outputs of phase pair (rd, rh) plus bias:
 * 16-byte stores along W (NCDHW) or along channels (NDHWC) when aligned.
 * T: the element type of bias and y; half outputs are rounded once here
 * (f32 accumulation) and go out as 8-byte stores of 4 elements under the
 * same alignment rule (vec_store: 4-element runs start 8-byte aligned). */
template <int SW, int QW, int OCT, class T = float>
CT3D_DEV void store_outputs(const phase_params &p, const block_ctx &b,
                            const float (&acc)[SW][QW][OCT], int rd, int rh, int qd, int qh,
                            int ow_a)
{
    constexpr int RUN = SW * QW;
    constexpr bool kF32 = sizeof(T) == sizeof(float);
    const int od = qd * p.s[0] + rd - p.p[0], oh = qh * p.s[1] + rh - p.p[1];
    if (od < 0 || od >= p.out[0] || oh < 0 || oh >= p.out[1])
        return;
    const int oc0 = b.ob * p.ocb + b.toc * OCT; /* within the group */
    if (oc0 >= p.cog)
        return;
    const T *bias = reinterpret_cast<const T *>(p.bias);
    float bv[OCT];
    CT3D_UNROLL
    for (int o = 0; o < OCT; o++)
        bv[o] = (bias && oc0 + o < p.cog) ? load_elem(bias + b.g * p.cog + oc0 + o) : 0.0f;
    T *base = reinterpret_cast<T *>(p.y) + b.n * p.ys[0] +
              (long long)(b.g * p.cog + oc0) * p.ys[1] + (long long)od * p.ys[2] +
              (long long)oh * p.ys[3];
    if (p.ys[4] == 1) { /* NCDHW: W contiguous */
        const bool vec = p.vec_store && ow_a + RUN <= p.out[2];
        CT3D_UNROLL
        for (int o = 0; o < OCT; o++) {
            if (oc0 + o >= p.cog)
                break;
            T *dst = base + (long long)o * p.ys[1] + ow_a;
            if (vec) {
                CT3D_UNROLL
                for (int j = 0; j < RUN / 4; j++) {
                    const float v0 = acc[(4 * j + 0) % SW][(4 * j + 0) / SW][o] + bv[o];
                    const float v1 = acc[(4 * j + 1) % SW][(4 * j + 1) / SW][o] + bv[o];
                    const float v2 = acc[(4 * j + 2) % SW][(4 * j + 2) / SW][o] + bv[o];
                    const float v3 = acc[(4 * j + 3) % SW][(4 * j + 3) / SW][o] + bv[o];
                    if constexpr (kF32) {
                        float4 v;
                        v.x = v0;
                        v.y = v1;
                        v.z = v2;
                        v.w = v3;
                        reinterpret_cast<float4 *>(dst)[j] = v;
                    } else {
                        reinterpret_cast<unsigned long long *>(dst)[j] =
                            pack4_half<T>(v0, v1, v2, v3);
                    }
                }
            } else {
                CT3D_UNROLL
                for (int e = 0; e < RUN; e++)
                    if (ow_a + e < p.out[2])
                        store_elem(dst + e, acc[e % SW][e / SW][o] + bv[o]);
            }
        }
    } else { /* NDHWC: channels contiguous */
        const bool vec = p.vec_store && oc0 + OCT <= p.cog;
        CT3D_UNROLL
        for (int e = 0; e < RUN; e++) {
            if (ow_a + e >= p.out[2])
                break;
            T *dst = base + (long long)(ow_a + e) * p.ys[4];
            if (vec) {
                CT3D_UNROLL
                for (int c4 = 0; c4 < OCT / 4; c4++) {
                    const float v0 = acc[e % SW][e / SW][4 * c4 + 0] + bv[4 * c4 + 0];
                    const float v1 = acc[e % SW][e / SW][4 * c4 + 1] + bv[4 * c4 + 1];
                    const float v2 = acc[e % SW][e / SW][4 * c4 + 2] + bv[4 * c4 + 2];
                    const float v3 = acc[e % SW][e / SW][4 * c4 + 3] + bv[4 * c4 + 3];
                    if constexpr (kF32) {
                        float4 v;
                        v.x = v0;
                        v.y = v1;
                        v.z = v2;
                        v.w = v3;
                        reinterpret_cast<float4 *>(dst)[c4] = v;
                    } else {
                        reinterpret_cast<unsigned long long *>(dst)[c4] =
                            pack4_half<T>(v0, v1, v2, v3);
                    }
                }
            } else {
                CT3D_UNROLL
                for (int o = 0; o < OCT; o++)
                    if (oc0 + o < p.cog)
                        store_elem(dst + o, acc[e % SW][e / SW][o] + bv[o]);
            }
        }
    }
}

template <int SW, int QW, int OCT>
CT3D_DEV void zero_acc(float (&acc)[SW][QW][OCT])
{
    CT3D_UNROLL
    for (int f = 0; f < SW; f++)
        CT3D_UNROLL
        for (int i = 0; i < QW; i++)
            CT3D_UNROLL
            for (int o = 0; o < OCT; o++)
                acc[f][i][o] = 0.0f;
}

/* Slice 0's accumulators += the other slices', in slice order (fixed:
 * deterministic).  Called by every thread of the block (it synchronises);
 * red is free shared memory of (ks - 1) * nbase * SW*QW*OCT floats, laid out
 * [slice - 1][element][thread] so a warp's accesses are consecutive. */
template <int SW, int QW, int OCT>
CT3D_DEV void reduce_slices(float (&acc)[SW][QW][OCT], float *red, const phase_params &p,
                            const block_ctx &b)
{
    constexpr int E = SW * QW * OCT;
    CT3D_SYNC(); /* the previous reads of red (or of the staged tile under it) are done */
    if (b.slice > 0) {
        float *dst = red + (long long)(b.slice - 1) * E * p.nbase + b.stid;
        CT3D_UNROLL
        for (int f = 0; f < SW; f++)
            CT3D_UNROLL
            for (int i = 0; i < QW; i++)
                CT3D_UNROLL
                for (int o = 0; o < OCT; o++)
                    dst[((f * QW + i) * OCT + o) * p.nbase] = acc[f][i][o];
    }
    CT3D_SYNC();
    if (b.slice == 0)
        for (int j = 1; j < p.ks; j++) {
            const float *src = red + (long long)(j - 1) * E * p.nbase + b.stid;
            CT3D_UNROLL
            for (int f = 0; f < SW; f++)
                CT3D_UNROLL
                for (int i = 0; i < QW; i++)
                    CT3D_UNROLL
                    for (int o = 0; o < OCT; o++)
                        acc[f][i][o] += src[((f * QW + i) * OCT + o) * p.nbase];
        }
}

/* One block.  T: the element type of x, bias and y (float, f16_t,
 * bf16_t; the weights are f32 in every case, the accumulation f32).
 * Shared memory: the staged weights (p.wsm_floats) first, then the input
 * tile (f32 whatever T); the slices' reduction area at p.red_off (after the tile in grouped
 * mode, which restages nothing between phase pairs; over it in tiled mode). */
template <int SW, int QW, int OCT, int F, class T = float>
CT3D_DEV void phase_block(const phase_params &p, float *smem, int tid, long long vb)
{
    block_ctx b;
    long long r = vb;
    int ppi = 0;
    if (!p.all_phases) {
        const long long per = p.nblocks / p.npp;
        const long long j = p.snake > 0 && vb >= p.snake ? p.nblocks - 1 - (vb - p.snake) : vb;
        ppi = p.pp_order[j / per];
        r = j - (j / per) * per;
    }
    b.ob = (int)(r % p.nocb);
    r /= p.nocb;
    b.tile[2] = (int)(r % p.ntile[2]);
    r /= p.ntile[2];
    b.tile[1] = (int)(r % p.ntile[1]);
    r /= p.ntile[1];
    b.tile[0] = (int)(r % p.ntile[0]);
    r /= p.ntile[0];
    b.g = (int)(r % p.groups);
    b.n = r / p.groups;
    b.tid = tid;
    b.lane = tid & 31;
    b.warp = tid >> 5;
    b.nwarps = (p.nthreads + 31) >> 5;
    b.slice = (F & kSliced) ? tid / p.nbase : 0;
    b.stid = tid - b.slice * p.nbase;
    int t = b.stid;
    b.toc = t % p.toc;
    t /= p.toc;
    b.txi = t % p.tx;
    t /= p.tx;
    b.tyi = t % p.ty;
    b.tzi = t / p.ty;

    float *wsm = smem;
    float *tile = smem + p.wsm_floats;
    const int ow_a = (b.tile[2] * p.tx + b.txi) * SW * QW;
    const int iw_lo = b.tile[2] * p.tx * QW + p.wlo0;
    float acc[SW][QW][OCT];

    if (p.all_phases) {
        dh_geom gd = geom_all(p, 0, b.tile[0], p.tz);
        dh_geom gh = geom_all(p, 1, b.tile[1], p.ty);
        stage_input_as<T>(p, tile, b, 0, p.cig, gd, gh, iw_lo);
        stage_weights<OCT>(p, wsm, b, 0, p.cig, gd, gh);
        copy_wait();
        CT3D_SYNC();
        for (int pp = 0; pp < p.npp; pp++) {
            const int rd = pp / p.s[1], rh = pp - rd * p.s[1];
            geom_all_phase(p, 0, rd, gd);
            geom_all_phase(p, 1, rh, gh);
            if (!tile_has_rows(p, 0, rd, gd.q0, p.tz) || !tile_has_rows(p, 1, rh, gh.q0, p.ty))
                continue;
            zero_acc<SW, QW, OCT>(acc);
            accumulate_all_slots<SW, QW, OCT, F>(acc, tile, wsm, p, b, gd, gh, p.cig);
            if ((F & kSliced) && p.ks > 1)
                reduce_slices<SW, QW, OCT>(acc, smem + p.red_off, p, b);
            if (b.slice == 0)
                store_outputs<SW, QW, OCT, T>(p, b, acc, rd, rh, gd.q0 + b.tzi, gh.q0 + b.tyi,
                                           ow_a);
        }
    } else {
        const int rd = ppi / p.s[1], rh = ppi - rd * p.s[1];
        const dh_geom gd = geom_one(p, 0, rd, b.tile[0], p.tz);
        const dh_geom gh = geom_one(p, 1, rh, b.tile[1], p.ty);
        if (!tile_has_rows(p, 0, rd, gd.q0, p.tz) || !tile_has_rows(p, 1, rh, gh.q0, p.ty))
            return; /* this phase has fewer q rows than the grid covers */
        zero_acc<SW, QW, OCT>(acc);
        if (gd.taps > 0 && gh.taps > 0) {
            for (int c = 0; c < p.nchunks; c++) {
                const int ic0 = c * p.cic, cnt = imin(p.cic, p.cig - ic0);
                if (c > 0)
                    CT3D_SYNC();
                stage_input_as<T>(p, tile, b, ic0, cnt, gd, gh, iw_lo);
                stage_weights<OCT>(p, wsm, b, ic0, cnt, gd, gh);
                copy_wait();
                CT3D_SYNC();
                accumulate_all_slots<SW, QW, OCT, F>(acc, tile, wsm, p, b, gd, gh, cnt);
            }
            if ((F & kSliced) && p.ks > 1)
                reduce_slices<SW, QW, OCT>(acc, smem + p.red_off, p, b);
        }
        if (b.slice == 0)
            store_outputs<SW, QW, OCT, T>(p, b, acc, rd, rh, gd.q0 + b.tzi, gh.q0 + b.tyi, ow_a);
    }
}

} // namespace ct3d

#endif
