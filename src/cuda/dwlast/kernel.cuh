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
 * transpose paid in shared-memory stores. */
CT3D_DEV void dl_stage_weights(const dl_params &p, float *wsm, int tid, int c0)
{
    const int units = p.kvol * p.cb;
    for (int e = tid; e < units; e += p.nthreads) {
        int tap;
        const int j = (int)fdiv_qr(p.dv_kvol, (unsigned)e, tap);
        const int c = c0 + j;
        wsm[tap * p.wpitch + j] = c < p.c ? CT3D_LDG(p.w + (long long)c * p.kvol + tap) : 0.0f;
    }
}

/* One position (params.h) for channels c .. c + V - 1: its D, H and W
 * phases, then per (D tap, H tap) of the phases whose input row exists,
 * per W tap one weight load and kDlRun input loads (columns outside x
 * skipped), and kDlRun stores.  The summation order is fixed: bias, then
 * taps in (D, H, W) order. */
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
            const T *xrow = x + (long long)id * p.xs[2] + (long long)ih * p.xs[3];
            const float *wrow = wsm + (kd * p.k[1] + kh) * p.k[2] * p.wpitch + cl;
            CT3D_NOUNROLL
            for (int tw = 0; tw < ew.taps; tw++) {
                float wv[V];
                if constexpr (V == 4)
                    load_floats<4>(wv, wrow + (ew.k0 + tw * p.kstep[2]) * p.wpitch);
                else
                    wv[0] = wrow[(ew.k0 + tw * p.kstep[2]) * p.wpitch];
                const int iw0 = qa - ew.m0 - tw * p.dm[2];
                CT3D_UNROLL
                for (int i = 0; i < kDlRun; i++) {
                    const int iw = iw0 + i;
                    if ((unsigned)iw < (unsigned)p.in[2]) {
                        float xv[V];
                        dl_load<V>(xv, xrow + (long long)iw * p.xs[4]);
                        CT3D_UNROLL
                        for (int v = 0; v < V; v++)
                            acc[i][v] = fmaf(xv[v], wv[v], acc[i][v]);
                    }
                }
            }
        }
    }
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
