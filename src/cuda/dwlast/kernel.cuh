/* The per-block body of the channels-last depthwise kernel (params.h says
 * what a block and a thread do).  Only the body lives here so that the host
 * emulator can compile it (CONVT3D_GPU_EMULATE).
 *
 * Template parameters: V, the channels a thread (4: one vector load or
 * store a tap and output, which needs C % 4 == 0 and aligned pointers; 1:
 * any C, any layout), and T, the element type of x, bias and y (weights and
 * accumulation are f32 in every case). */
#ifndef CONVT3D_CUDA_DWLAST_KERNEL_CUH
#define CONVT3D_CUDA_DWLAST_KERNEL_CUH

#include "../common/device.cuh"
#include "params.h"

namespace ct3d {

/* V consecutive elements of x, bias or y as f32: one 16-byte load of f32,
 * one 8-byte load of four half elements, widened. */
template <int V>
CT3D_DEV void dl_load(float (&v)[V], const float *src)
{
    if constexpr (V == 4) {
        const float4 t = CT3D_LDG(reinterpret_cast<const float4 *>(src));
        v[0] = t.x;
        v[1] = t.y;
        v[2] = t.z;
        v[3] = t.w;
    } else {
        v[0] = CT3D_LDG(src);
    }
}
template <int V, class T>
CT3D_DEV void dl_load(float (&v)[V], const T *src)
{
    if constexpr (V == 4) {
        const uint2 t = CT3D_LDG(reinterpret_cast<const uint2 *>(src));
        v[0] = widen_bits(src, (unsigned short)(t.x & 0xffffu));
        v[1] = widen_bits(src, (unsigned short)(t.x >> 16));
        v[2] = widen_bits(src, (unsigned short)(t.y & 0xffffu));
        v[3] = widen_bits(src, (unsigned short)(t.y >> 16));
    } else {
        v[0] = load_elem(src);
    }
}

/* V outputs rounded to the element type, one store. */
template <int V>
CT3D_DEV void dl_store(float *dst, const float (&v)[V])
{
    if constexpr (V == 4) {
        float4 t;
        t.x = v[0];
        t.y = v[1];
        t.z = v[2];
        t.w = v[3];
        *reinterpret_cast<float4 *>(dst) = t;
    } else {
        *dst = v[0];
    }
}
template <int V, class T>
CT3D_DEV void dl_store(T *dst, const float (&v)[V])
{
    if constexpr (V == 4) {
        T h[4];
        for (int j = 0; j < 4; j++)
            store_elem(&h[j], v[j]);
        uint2 t;
        t.x = (unsigned)h[0].bits | (unsigned)h[1].bits << 16;
        t.y = (unsigned)h[2].bits | (unsigned)h[3].bits << 16;
        *reinterpret_cast<uint2 *>(dst) = t;
    } else {
        store_elem(dst, v[0]);
    }
}

/* The block's cb channels' weights as [tap][channel] rows of wpitch floats
 * (zeros past C).  Consecutive threads read consecutive taps of one
 * channel (the packed weights are [c][tap]): coalesced global reads, the
 * transpose paid in shared-memory stores.  Each thread issues
 * kDlStageBatch loads before it stores any, so that their latencies
 * overlap (the block waits for its weights before any output). */
constexpr int kDlStageBatch = 8;
CT3D_DEV void dl_stage_weights(const dl_params &p, float *wsm, int tid, int c0)
{
    const int units = p.kvol * p.cb;
    for (int e0 = tid; e0 < units; e0 += kDlStageBatch * p.nthreads) {
        float v[kDlStageBatch];
        int dst[kDlStageBatch];
        CT3D_UNROLL
        for (int b = 0; b < kDlStageBatch; b++) {
            const int e = e0 + b * p.nthreads;
            v[b] = 0.0f;
            dst[b] = -1;
            if (e < units) {
                int tap;
                const int j = (int)fdiv_qr(p.dv_kvol, (unsigned)e, tap);
                dst[b] = tap * p.wpitch + j;
                if (c0 + j < p.c)
                    v[b] = CT3D_LDG(p.w + (long long)(c0 + j) * p.kvol + tap);
            }
        }
        CT3D_UNROLL
        for (int b = 0; b < kDlStageBatch; b++)
            if (dst[b] >= 0)
                wsm[dst[b]] = v[b];
    }
}

/* One input row's W taps into the run's accumulators.  TW > 0: the W
 * phase has TW taps one input apart (W dilation divides the W stride), so
 * one window of kDlRun + TW - 1 inputs (zeros outside x) serves every tap;
 * TW = 0: any phase, per tap kDlRun loads, columns outside x skipped. */
template <int V, class T, int TW>
CT3D_DEV void dl_row(float (&acc)[kDlRun][V], const T *xrow, const float *wrow, int iw0,
                     const phase_entry &ew, const dl_params &p)
{
    if constexpr (TW > 0) {
        float win[kDlRun + TW - 1][V];
        const int iwl = iw0 - (TW - 1); /* the window's first column */
        const T *xp = xrow + (long long)iwl * p.xs[4];
        CT3D_UNROLL
        for (int j = 0; j < kDlRun + TW - 1; j++, xp += p.xs[4]) {
            if ((unsigned)(iwl + j) < (unsigned)p.in[2])
                dl_load<V>(win[j], xp);
            else
                CT3D_UNROLL
                for (int v = 0; v < V; v++)
                    win[j][v] = 0.0f;
        }
        CT3D_UNROLL
        for (int t = 0; t < TW; t++) {
            float wv[V];
            const float *wt = wrow + (ew.k0 + t * p.kstep[2]) * p.wpitch;
            if constexpr (V == 4)
                load_floats<4>(wv, wt);
            else
                wv[0] = *wt;
            CT3D_UNROLL
            for (int i = 0; i < kDlRun; i++)
                CT3D_UNROLL
                for (int v = 0; v < V; v++)
                    acc[i][v] = fmaf(win[i + TW - 1 - t][v], wv[v], acc[i][v]);
        }
    } else {
        CT3D_NOUNROLL
        for (int tw = 0; tw < ew.taps; tw++) {
            float wv[V];
            const float *wt = wrow + (ew.k0 + tw * p.kstep[2]) * p.wpitch;
            if constexpr (V == 4)
                load_floats<4>(wv, wt);
            else
                wv[0] = *wt;
            const int iwt = iw0 - tw * p.dm[2];
            const T *xp = xrow + (long long)iwt * p.xs[4];
            CT3D_UNROLL
            for (int i = 0; i < kDlRun; i++, xp += p.xs[4]) {
                if ((unsigned)(iwt + i) < (unsigned)p.in[2]) {
                    float xv[V];
                    dl_load<V>(xv, xp);
                    CT3D_UNROLL
                    for (int v = 0; v < V; v++)
                        acc[i][v] = fmaf(xv[v], wv[v], acc[i][v]);
                }
            }
        }
    }
}

/* The (D tap, H tap) pairs of the position's phases whose input row
 * exists, each row's W taps by dl_row.  x: channel c of image n. */
template <int V, class T, int TW>
CT3D_DEV void dl_accumulate(float (&acc)[kDlRun][V], const T *x, const float *wc,
                            const dl_params &p, const phase_entry &ed, const phase_entry &eh,
                            const phase_entry &ew, int qd, int qh, int iw0)
{
    CT3D_NOUNROLL
    for (int td = 0; td < ed.taps; td++) {
        const int id = qd - ed.m0 - td * p.dm[0];
        if ((unsigned)id >= (unsigned)p.in[0])
            continue;
        const int kd = ed.k0 + td * p.kstep[0];
        CT3D_NOUNROLL
        for (int th = 0; th < eh.taps; th++) {
            const int ih = qh - eh.m0 - th * p.dm[1];
            if ((unsigned)ih >= (unsigned)p.in[1])
                continue;
            const int kh = eh.k0 + th * p.kstep[1];
            dl_row<V, T, TW>(acc, x + (long long)id * p.xs[2] + (long long)ih * p.xs[3],
                             wc + (kd * p.k[1] + kh) * p.k[2] * p.wpitch, iw0, ew, p);
        }
    }
}

/* One position (params.h) for channels c .. c + V - 1 (cl past the
 * block's first): its D, H and W phases, the taps (dl_accumulate; a W
 * phase of 1-3 taps one input apart by the window path), kDlRun stores.
 * The summation order is fixed: bias, then taps in (D, H, W) order. */
template <int V, class T>
CT3D_DEV void dl_position(const dl_params &p, const float *wsm, unsigned pos, int c, int cl,
                          const float (&bias)[V])
{
    int jr, oh, od;
    const unsigned row = fdiv_qr(p.dv_nwr, pos, jr);
    const unsigned rest = fdiv_qr(p.dv_oh, row, oh);
    const int n = (int)fdiv_qr(p.dv_od, rest, od);
    int r = 0;
    while (jr >= p.wrun0[r + 1])
        r++;
    const phase_entry ew = p.ph[2][r];
    const int qa = ew.qlo + (jr - p.wrun0[r]) * kDlRun;
    const int nq = imin(kDlRun, ew.qlo + ew.qcount - qa);
    const int odp = od + p.p[0], ohp = oh + p.p[1];
    const int qd = odp / p.s[0], qh = ohp / p.s[1];
    const phase_entry ed = p.ph[0][odp - qd * p.s[0]], eh = p.ph[1][ohp - qh * p.s[1]];

    float acc[kDlRun][V];
    CT3D_UNROLL
    for (int i = 0; i < kDlRun; i++)
        CT3D_UNROLL
        for (int v = 0; v < V; v++)
            acc[i][v] = bias[v];
    const T *x = reinterpret_cast<const T *>(p.x) + (long long)n * p.xs[0] + (long long)c * p.xs[1];
    const float *wc = wsm + cl;
    const int iw0 = qa - ew.m0; /* tap 0's input for the run's first output */
    /* the window path for W phases of up to 3 taps (the most registers
     * launch.cu's bounds leave room for), the per-tap path otherwise */
    const int tw = p.dm[2] == 1 && ew.taps <= 3 ? ew.taps : 0;
    if (tw == 1)
        dl_accumulate<V, T, 1>(acc, x, wc, p, ed, eh, ew, qd, qh, iw0);
    else if (tw == 2)
        dl_accumulate<V, T, 2>(acc, x, wc, p, ed, eh, ew, qd, qh, iw0);
    else if (tw == 3)
        dl_accumulate<V, T, 3>(acc, x, wc, p, ed, eh, ew, qd, qh, iw0);
    else
        dl_accumulate<V, T, 0>(acc, x, wc, p, ed, eh, ew, qd, qh, iw0);
    T *y = reinterpret_cast<T *>(p.y) + (long long)n * p.ys[0] + (long long)c * p.ys[1] +
           (long long)od * p.ys[2] + (long long)oh * p.ys[3];
    CT3D_UNROLL
    for (int i = 0; i < kDlRun; i++)
        if (i < nq)
            dl_store<V>(y + (long long)((qa + i) * p.s[2] + r - p.p[2]) * p.ys[4], acc[i]);
}

/* One block: channel chunk `chunk` (cb channels), rounds it .. iters - 1 of
 * pb positions each starting at (bx * iters + it) * pb.  Shared memory: the
 * staged weights. */
template <int V, class T = float>
CT3D_DEV void dl_block(const dl_params &p, float *wsm, int tid, unsigned bx, int chunk)
{
    const int c0 = chunk * p.cb;
    dl_stage_weights(p, wsm, tid, c0);
    CT3D_SYNC();
    const int cl = (tid & (p.cv - 1)) * V, c = c0 + cl;
    const int pp = tid >> p.lcv;
    if (c >= p.c)
        return; /* past the last channel: nothing to compute (no barrier follows) */
    float bias[V];
    if (p.bias)
        dl_load<V>(bias, reinterpret_cast<const T *>(p.bias) + c);
    else
        CT3D_UNROLL
        for (int v = 0; v < V; v++)
            bias[v] = 0.0f;
    for (int it = 0; it < p.iters; it++) {
        const long long pos = ((long long)bx * p.iters + it) * p.pb + pp;
        if (pos < p.npos)
            dl_position<V, T>(p, wsm, (unsigned)pos, c, cl, bias);
    }
}

} // namespace ct3d

#endif
