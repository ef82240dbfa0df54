/* The per-block body of the depthwise tile kernel (params.h says
 * what a block does).  Only the body lives here so that the host emulator
 * can compile it (CONVT3D_GPU_EMULATE).
 *
 * Two instantiation families:
 *   fast (FAST, T0, T1 the W taps of the two slots): every W slot's window
 *     starts at the same staged column, so one window of float4 loads serves
 *     all slots and every register index is compile-time;
 *   general (!FAST): slot by slot, the window at a runtime column, scalar
 *     loads, the slot's tap count dispatched once per phase pair. */
#ifndef CONVT3D_CUDA_DWTILE_KERNEL_CUH
#define CONVT3D_CUDA_DWTILE_KERNEL_CUH

#include "../common/device.cuh"
#include "params.h"


namespace ct3d {

/* The input rows of the tile, [ext[0]][ext[1]][pitch], zeros outside x.
 * Units (a float4 or a float) are spread over the whole block; the unit ->
 * (row, column) split is two multiply-high divisions. */
CT3D_DEV void dw_stage_input(const dw_params &p, float *tile, int tid, long long xoff, int lo_d,
                             int lo_h, int worg, const float *)
{
    const bool vec = p.vec_load;
    const fdiv du = vec ? p.dv_u4 : p.dv_u1;
    const int units = p.ext[0] * p.ext[1] * (int)du.d;
    for (int e = tid; e < units; e += p.nthreads) {
        const int r = (int)fdiv_q(du, (unsigned)e), u = e - r * (int)du.d;
        const int z = (int)fdiv_q(p.dv_exth, (unsigned)r), yy = r - z * p.ext[1];
        const int id = lo_d + z, ih = lo_h + yy;
        const bool row_in = (unsigned)id < (unsigned)p.in[0] && (unsigned)ih < (unsigned)p.in[1];
        const long long roff = xoff + (long long)id * p.xs[2] + (long long)ih * p.xs[3];
        if (vec) { /* columns 4u .. 4u+3: all inside x or all outside */
            const int iw = worg + 4 * u;
            const bool in = row_in && (unsigned)iw < (unsigned)p.in[2];
            copy16(tile + r * p.pitch + 4 * u, in ? p.x + roff + iw : p.x, in);
        } else {
            const int iw = worg + u;
            const bool in = row_in && (unsigned)iw < (unsigned)p.in[2];
            copy4(tile + r * p.pitch + u, in ? p.x + roff + (long long)iw * p.xs[4] : p.x, in);
        }
    }
}

/* Half x (f16_t, bf16_t): cp.async cannot widen, so each thread issues the
 * loads of kDwHalfBatch units before it widens and stores any of them (the
 * loads' latencies overlap).  One element a unit (vec_load is off). */
constexpr int kDwHalfBatch = 4;
template <class T>
CT3D_DEV void dw_stage_input(const dw_params &p, float *tile, int tid, long long xoff, int lo_d,
                             int lo_h, int worg, const T *x)
{
    const fdiv du = p.dv_u1;
    const int units = p.ext[0] * p.ext[1] * (int)du.d;
    for (int e0 = tid; e0 < units; e0 += kDwHalfBatch * p.nthreads) {
        unsigned short bits[kDwHalfBatch];
        int dst[kDwHalfBatch];
        CT3D_UNROLL
        for (int b = 0; b < kDwHalfBatch; b++) {
            const int e = e0 + b * p.nthreads;
            bits[b] = 0; /* +0 in f16 and bf16: the zero padding */
            dst[b] = -1;
            if (e < units) {
                const int r = (int)fdiv_q(du, (unsigned)e), u = e - r * (int)du.d;
                const int z = (int)fdiv_q(p.dv_exth, (unsigned)r), yy = r - z * p.ext[1];
                const int id = lo_d + z, ih = lo_h + yy, iw = worg + u;
                const bool in = (unsigned)id < (unsigned)p.in[0] &&
                                (unsigned)ih < (unsigned)p.in[1] && (unsigned)iw < (unsigned)p.in[2];
                dst[b] = r * p.pitch + u;
                if (in)
                    bits[b] = load_bits(x + xoff + (long long)id * p.xs[2] +
                                        (long long)ih * p.xs[3] + (long long)iw * p.xs[4]);
            }
        }
        CT3D_UNROLL
        for (int b = 0; b < kDwHalfBatch; b++)
            if (dst[b] >= 0)
                tile[dst[b]] = widen_bits(x, bits[b]);
    }
}

/* The channel's weights as rows [kd][kh] of wrow floats, the W taps in slot
 * order (wsrc), zeros in the padding. */
CT3D_DEV void dw_stage_weights(const dw_params &p, float *wsm, int tid, const float *wc)
{
    const int units = p.k[0] * p.k[1] * p.wrow;
    for (int e = tid; e < units; e += p.nthreads) {
        const int row = e >> p.lwrow, j = e & (p.wrow - 1);
        const int kw = p.wsrc[j];
        wsm[e] = kw >= 0 ? CT3D_LDG(wc + row * p.k[2] + kw) : 0.0f;
    }
}

/* Fast path: for every (D tap, H tap) of the phase pair, one window of LW
 * inputs (float4 loads) and the row's W weights (float4 loads), then
 * T0 + T1 FMAs per q of the run. */
template <int SW, int T0, int T1>
CT3D_DEV void dw_accumulate_fast(float (&acc)[SW][kDwRun / SW], const float *rowd,
                                 const float *wd, const dw_params &p, int dtaps, int htaps)
{
    constexpr int QW = kDwRun / SW;
    constexpr int TM = T0 > T1 ? T0 : T1;
    constexpr int LW = (QW + TM - 1 + 3) / 4 * 4;
    constexpr int NW = T0 + T1 > 4 ? 8 : 4;
    CT3D_NOUNROLL
    for (int td = 0; td < dtaps; td++) {
        const float *row = rowd;
        const float *wr = wd;
        CT3D_NOUNROLL
        for (int th = 0; th < htaps; th++) {
            float win[LW], wv[NW];
            load_floats<LW>(win, row);
            load_floats<NW>(wv, wr);
            CT3D_UNROLL
            for (int t = 0; t < T0; t++)
                CT3D_UNROLL
                for (int i = 0; i < QW; i++)
                    acc[0][i] = fmaf(win[i + T0 - 1 - t], wv[t], acc[0][i]);
            if constexpr (SW == 2) {
                CT3D_UNROLL
                for (int t = 0; t < T1; t++)
                    CT3D_UNROLL
                    for (int i = 0; i < QW; i++)
                        acc[1][i] = fmaf(win[i + T1 - 1 - t], wv[T0 + t], acc[1][i]);
            }
            row -= p.zstep[1];
            wr += p.wstep[1];
        }
        rowd -= p.zstep[0];
        wd += p.wstep[0];
    }
}

/* General path, one W slot with T taps: its window at a runtime column
 * (scalar loads), its weights at a runtime position. */
template <int QW, int T>
CT3D_DEV void dw_accumulate_slot(float (&acc)[QW], const float *rowd, const float *wd,
                                 const dw_params &p, int dtaps, int htaps)
{
    CT3D_NOUNROLL
    for (int td = 0; td < dtaps; td++) {
        const float *row = rowd;
        const float *wr = wd;
        CT3D_NOUNROLL
        for (int th = 0; th < htaps; th++) {
            float win[QW + T - 1];
            CT3D_UNROLL
            for (int j = 0; j < QW + T - 1; j++)
                win[j] = row[j];
            CT3D_UNROLL
            for (int t = 0; t < T; t++) {
                const float w = wr[t];
                CT3D_UNROLL
                for (int i = 0; i < QW; i++)
                    acc[i] = fmaf(win[i + T - 1 - t], w, acc[i]);
            }
            row -= p.zstep[1];
            wr += p.wstep[1];
        }
        rowd -= p.zstep[0];
        wd += p.wstep[0];
    }
}

template <int QW>
CT3D_DEV void dw_accumulate_any(float (&acc)[QW], const float *rowd, const float *wd,
                                const dw_params &p, int dtaps, int htaps, int f)
{
    rowd += p.wa[f];
    wd += p.wpos[f];
    switch (p.wt[f]) {
    case 1: dw_accumulate_slot<QW, 1>(acc, rowd, wd, p, dtaps, htaps); break;
    case 2: dw_accumulate_slot<QW, 2>(acc, rowd, wd, p, dtaps, htaps); break;
    case 3: dw_accumulate_slot<QW, 3>(acc, rowd, wd, p, dtaps, htaps); break;
    case 4: dw_accumulate_slot<QW, 4>(acc, rowd, wd, p, dtaps, htaps); break;
    default: break; /* no taps: bias only */
    }
}

/* The thread's 8 outputs of one output row: two 16-byte stores
 * when y allows, else one by one. */
template <int SW>
CT3D_DEV void dw_store(const dw_params &p, const float (&acc)[SW][kDwRun / SW], float *yrun,
                       int ow_a, bool vec)
{
    if (vec) {
        float4 *dst = reinterpret_cast<float4 *>(yrun);
        CT3D_UNROLL
        for (int j = 0; j < kDwRun / 4; j++) {
            float4 v;
            v.x = acc[(4 * j + 0) % SW][(4 * j + 0) / SW];
            v.y = acc[(4 * j + 1) % SW][(4 * j + 1) / SW];
            v.z = acc[(4 * j + 2) % SW][(4 * j + 2) / SW];
            v.w = acc[(4 * j + 3) % SW][(4 * j + 3) / SW];
            dst[j] = v;
        }
    } else {
        CT3D_UNROLL
        for (int e = 0; e < kDwRun; e++)
            if (ow_a + e < p.out[2])
                yrun[(long long)e * p.ys[4]] = acc[e % SW][e / SW];
    }
}

/* Half y: the 8 outputs rounded to T; where y allows (vec: 16-byte aligned
 * rows, W contiguous) two 8-byte stores of 4 packed elements. */
template <int SW, class T>
CT3D_DEV void dw_store(const dw_params &p, const float (&acc)[SW][kDwRun / SW], T *yrun,
                       int ow_a, bool vec)
{
    if (vec) {
        unsigned long long *dst = reinterpret_cast<unsigned long long *>(yrun);
        CT3D_UNROLL
        for (int j = 0; j < kDwRun / 4; j++) {
            unsigned long long v = 0;
            CT3D_UNROLL
            for (int i = 0; i < 4; i++) {
                T h;
                store_elem(&h, acc[(4 * j + i) % SW][(4 * j + i) / SW]);
                v |= (unsigned long long)h.bits << (16 * i);
            }
            dst[j] = v;
        }
    } else {
        CT3D_UNROLL
        for (int e = 0; e < kDwRun; e++)
            if (ow_a + e < p.out[2])
                store_elem(yrun + (long long)e * p.ys[4], acc[e % SW][e / SW]);
    }
}

/* One block: channel c of image n, spatial tile `tile` (W fastest, then H,
 * then D).  Shared memory: p.wsm_floats of weights, then the input tile.
 * Everything a phase pair needs beyond its table entries is computed here,
 * once: the pair loop is table loads, the tap loops and the stores.  T: the
 * element type of x, bias and y (weights are f32 in every case). */
template <int SW, int T0, int T1, bool FAST, class T = float>
CT3D_DEV void dw_block(const dw_params &p, float *smem, int tid, int c, int n, unsigned tile)
{
    constexpr int QW = kDwRun / SW;
    const unsigned rest = fdiv_q(p.dv_tw, tile);
    const int tw = (int)(tile - rest * p.dv_tw.d);
    const int tdi = (int)fdiv_q(p.dv_th, rest);
    const int thi = (int)(rest - (unsigned)tdi * p.dv_th.d);
    const int txi = tid & (p.tx - 1), tyi = (tid >> p.lx) & (p.ty - 1), tzi = tid >> (p.lx + p.ly);

    float *wsm = smem;
    float *tile_sm = smem + p.wsm_floats;
    const T *x = reinterpret_cast<const T *>(p.x);
    const long long xoff = (long long)n * p.xs[0] + (long long)c * p.xs[1];
    const float *wc = p.w + (long long)c * p.k[0] * p.k[1] * p.k[2];
    const int q0d = tdi * p.tz, q0h = thi * p.ty;
    dw_stage_weights(p, wsm, tid, wc);
    dw_stage_input(p, tile_sm, tid, xoff, q0d + p.lo[0], q0h + p.lo[1],
                   tw * p.tx * QW + p.worg, x);
    copy_wait();
    CT3D_SYNC();

    const float bias = p.bias ? load_elem(reinterpret_cast<const T *>(p.bias) + c) : 0.0f;
    const float *tthr = tile_sm + txi * QW + (tzi * p.ext[1] + tyi) * p.pitch;
    const int ow_a = (tw * p.tx + txi) * kDwRun;
    const bool vec = p.vec_store && ow_a + kDwRun <= p.out[2];
    const int jd = q0d + tzi, jh = q0h + tyi;
    T *ythr = reinterpret_cast<T *>(p.y) + (long long)n * p.ys[0] + (long long)c * p.ys[1] +
                  (long long)ow_a * p.ys[4] + (jd * p.ystep[0] + jh * p.ystep[1]);
    for (int rd = 0; rd < p.s[0]; rd++) {
        const dw_phase ed = p.ph[0][rd];
        if (q0d >= ed.qcount)
            continue; /* uniform: this phase has fewer q rows than the tiles cover */
        for (int rh = 0; rh < p.s[1]; rh++) {
            const dw_phase eh = p.ph[1][rh];
            if (q0h >= eh.qcount)
                continue;
            float acc[SW][QW];
            CT3D_UNROLL
            for (int f = 0; f < SW; f++)
                CT3D_UNROLL
                for (int i = 0; i < QW; i++)
                    acc[f][i] = bias; /* summation order is free: bias first */
            const float *rowd = tthr + ed.zoff + eh.zoff;
            const float *wd = wsm + ed.woff + eh.woff;
            if constexpr (FAST) {
                dw_accumulate_fast<SW, T0, T1>(acc, rowd, wd, p, ed.taps, eh.taps);
            } else {
                CT3D_UNROLL
                for (int f = 0; f < SW; f++)
                    dw_accumulate_any<QW>(acc[f], rowd, wd, p, ed.taps, eh.taps, f);
            }
            if (jd < ed.qcount && jh < eh.qcount)
                dw_store<SW>(p, acc, ythr + (ed.yoff + eh.yoff), ow_a, vec);
        }
    }
}

} // namespace ct3d

#endif
