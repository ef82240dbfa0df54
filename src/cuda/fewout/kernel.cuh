/* The per-block body of the few-output-channel kernel (params.h says what a
 * block does).  Only the body lives here so that the host emulator can
 * compile it (CONVT3D_GPU_EMULATE).  COG: C_out/G, 1 to 8, so that a tap
 * costs exactly COG FMAs a position (its weights: OCB = 4 or 8 floats);
 * TH: the H taps of a phase at most (kFewThSizes), the H window's rows less
 * kFewR - 1; T: the element type of x, bias and y (float, f16_t, bf16_t:
 * half elements widened on load, each output rounded once on store; the
 * weights and the sums are f32 in every type). */
#ifndef CONVT3D_CUDA_FEWOUT_KERNEL_CUH
#define CONVT3D_CUDA_FEWOUT_KERNEL_CUH

#include "../common/device.cuh"
#include "params.h"

namespace ct3d {

/* Position group `flat` of a phase (n slowest, then D, the H groups, W)
 * as the image and each dim's q offset past its qlo; q[1] is the group's
 * first H output (params.h: its kFewR outputs are dm apart). */
struct few_group {
    int n, q[3];
};
CT3D_DEV few_group few_group_of(const few_params &p, const few_dim_phase *const dp[3], int rh,
                                int flat)
{
    few_group r;
    int gh;
    int rest = (int)fdiv_qr(dp[2]->dv_q, (unsigned)flat, r.q[2]);
    rest = (int)fdiv_qr(p.dv_gh[rh], (unsigned)rest, gh);
    r.n = (int)fdiv_qr(dp[0]->dv_q, (unsigned)rest, r.q[0]);
    const int dm = p.dm[1], lane = gh % dm;
    r.q[1] = (gh - lane) * kFewR + lane;
    return r;
}

/* Weight offset (floats past input channel 0 of a staged chunk's source) of
 * tap t of the phase: t = (td * th_n + th) * tw_n + tw. */
CT3D_DEV int few_tap_offset(const few_params &p, const few_dim_phase *const dp[3], int tw_n,
                            int th_n, int t)
{
    const int ttw = t % tw_n, tth = (t / tw_n) % th_n, ttd = t / (tw_n * th_n);
    const int kd = dp[0]->e.k0 + ttd * p.kstep[0], kh = dp[1]->e.k0 + tth * p.kstep[1],
              kw = dp[2]->e.k0 + ttw * p.kstep[2];
    return ((kd * p.k[1] + kh) * p.k[2] + kw) * p.ocb;
}

/* The weights of input channels [c0, c0 + cn) of group g for the phase's
 * taps, as smem[(t * ck + c) * ocb + oc]: a tap's channels side by side, so
 * that lanes on consecutive channels (NDHWC) load consecutive float4s.  A
 * thread walks units (t, c, quarter q of ocb / 4) kFewThreads apart,
 * decoding a tap only when its t changes. */
CT3D_DEV void few_stage_weights(const few_params &p, float *smem, int tid, int g, int c0, int cn,
                                const few_dim_phase *const dp[3], int tw, int th, int taps)
{
    const long long kvolb = (long long)p.k[0] * p.k[1] * p.k[2] * p.ocb;
    const float *src = p.w + ((long long)g * p.cig + c0) * kvolb;
    const int nq = p.ocb >> 2, cq = cn * nq; /* float4s of a tap */
    const int dt = kFewThreads / cq, dc = kFewThreads - dt * cq;
    int t = tid / cq, u = tid - t * cq, tlast = -1, toff = 0;
    while (t < taps) {
        if (t != tlast) {
            toff = few_tap_offset(p, dp, tw, th, t);
            tlast = t;
        }
        const int c = nq == 1 ? u : u >> 1, q = u - c * nq;
        copy16(smem + (t * p.ck + c) * p.ocb + q * 4, src + c * kvolb + toff + q * 4, true);
        t += dt;
        u += dc;
        if (u >= cq) {
            u -= cq;
            t++;
        }
    }
}

/* The tile's outputs: each block's slices' partial sums, [slice][j][slot]
 * [oc] in shared memory, added in slice order into slice 0's place; then,
 * across the cluster, those of ranks 0, 1, .. in rank order, and the bias,
 * each rank storing every cs-th output.  g: the group; r: the tile's phase. */
template <int COG, class T>
CT3D_DEV void few_sum_and_store(const few_params &p, float *smem, int tid,
                                const float (&acc)[kFewR][COG], int slice, int slot, int first,
                                int count, int g, int rank, const few_dim_phase *const dp[3],
                                const int (&r)[3])
{
    const int tile_pos = p.ps * kFewR;
    CT3D_SYNC(); /* the weights are read: their space takes the sums */
    CT3D_UNROLL
    for (int j = 0; j < kFewR; j++)
        CT3D_UNROLL
        for (int c = 0; c < COG; c++)
            smem[(slice * tile_pos + j * p.ps + slot) * COG + c] = acc[j][c];
    CT3D_SYNC();
    for (int e = tid; e < tile_pos * COG; e += kFewThreads) {
        float sum = smem[e];
        for (int k = 1; k < p.ks; k++)
            sum += smem[k * tile_pos * COG + e];
        smem[e] = sum;
    }
    if (p.cs > 1)
        CT3D_CLUSTER_SYNC(); /* every rank's sums are in place */
    else
        CT3D_SYNC();
    for (int e = tid + rank * kFewThreads; e < tile_pos * COG; e += kFewThreads * p.cs) {
        /* NDHWC: an output's channels side by side in y; NCDHW: positions */
        const int pos = p.chan_fast ? e / COG : e % tile_pos;
        const int oc = p.chan_fast ? e - pos * COG : e / tile_pos;
        const int j = pos >> p.lps, f = first + (pos & (p.ps - 1));
        if (f >= count)
            continue;
        few_group q = few_group_of(p, dp, r[1], f);
        q.q[1] += j * p.dm[1];
        if (q.q[1] >= dp[1]->e.qcount)
            continue;
        const int at = pos * COG + oc;
        float sum = p.cs > 1 ? CT3D_CLUSTER_SMEM(smem, 0)[at] : smem[at];
        for (int k = 1; k < p.cs; k++)
            sum += CT3D_CLUSTER_SMEM(smem, k)[at];
        if (p.bias)
            sum += load_elem(reinterpret_cast<const T *>(p.bias) + (long long)g * p.cog + oc);
        long long yo = (long long)q.n * p.ys[0] + ((long long)g * p.cog + oc) * p.ys[1];
        CT3D_UNROLL
        for (int d = 0; d < 3; d++)
            yo += (long long)((q.q[d] + dp[d]->e.qlo) * p.s[d] + r[d] - p.p[d]) * p.ys[2 + d];
        store_elem(reinterpret_cast<T *>(p.y) + yo, sum);
    }
    if (p.cs > 1)
        CT3D_CLUSTER_SYNC(); /* no block leaves while another reads its sums */
}

template <int COG, int TH, class T>
CT3D_DEV void few_block(const few_params &p, float *smem, int tid, int bx, int g)
{
    constexpr int OCB = COG > 4 ? 8 : 4;
    /* the tile, this block's rank in its cluster, and the tile's phase
     * (uniform: at most kFewMaxPhases steps) */
    const int rank = bx & (p.cs - 1);
    bx >>= p.lcs;
    int phase = 0;
    while (p.tile0[phase + 1] <= bx)
        phase++;
    const int rw = phase % p.s[2], rh = (phase / p.s[2]) % p.s[1], rd = phase / (p.s[2] * p.s[1]);
    const few_dim_phase *const dp[3] = {&p.ph[0][rd], &p.ph[1][rh], &p.ph[2][rw]};
    const int td_n = dp[0]->e.taps, th_n = dp[1]->e.taps, tw_n = dp[2]->e.taps;
    const int taps = td_n * th_n * tw_n;
    const int count = p.n * dp[0]->e.qcount * p.gh_count[rh] * dp[2]->e.qcount;
    const int first = (bx - p.tile0[phase]) * p.ps;
    const int slice = p.chan_fast ? tid & (p.ks - 1) : tid >> p.lps;
    const int slot = p.chan_fast ? tid >> p.lks : tid & (p.ps - 1);
    const int flat = first + slot;

    /* The group's x offset of its first output's tap 0 (without the channel;
     * int: the planner checks every offset formed here, x_offsets_fit_int),
     * the D and W taps whose input lies inside x (bit t), and the window rows
     * inside x (bit u).  A slot past the phase's groups has no taps. */
    int xo = 0;
    unsigned dmask = 0, wmask = 0, vm = 0;
    if (flat < count) {
        const few_group q = few_group_of(p, dp, rh, flat);
        int i0[3];
        CT3D_UNROLL
        for (int d = 0; d < 3; d++)
            i0[d] = q.q[d] + dp[d]->e.qlo - dp[d]->e.m0;
        xo = q.n * (int)p.xs[0] + g * p.cig * (int)p.xs[1] + i0[0] * (int)p.xs[2] +
             i0[1] * (int)p.xs[3] + i0[2] * (int)p.xs[4];
        for (int t = 0; t < td_n; t++)
            if ((unsigned)(i0[0] - t * p.dm[0]) < (unsigned)p.in[0])
                dmask |= 1u << t;
        for (int t = 0; t < tw_n; t++)
            if ((unsigned)(i0[2] - t * p.dm[2]) < (unsigned)p.in[2])
                wmask |= 1u << t;
        for (int u = TH - th_n; u < TH + kFewR - 1; u++)
            if ((unsigned)(i0[1] + (u - (TH - 1)) * p.dm[1]) < (unsigned)p.in[1])
                vm |= 1u << u;
    }

    float acc[kFewR][COG];
    CT3D_UNROLL
    for (int j = 0; j < kFewR; j++)
        CT3D_UNROLL
        for (int c = 0; c < COG; c++)
            acc[j][c] = 0.0f;

    /* floats between staged taps: W, H and D neighbours */
    const int wtw = p.ck * OCB, wth = tw_n * wtw, wtd = th_n * wth;
    /* x offsets in unsigned 32-bit arithmetic from one base pointer: every
     * offset a valid load forms fits an int (x_offsets_fit_int), and with
     * unsigned wrap-around the compiler must add in 32 bits, so a window
     * load costs an add, one widening multiply-add and the load.  (With int
     * offsets it widened them into 64-bit indexes into p.x and, at the
     * 64-register cap, rebuilt each load's address from the constant bank:
     * about eight instructions a load, most of the loop.)  Predicated-off
     * rows may wrap: they are never loaded. */
    const T *const xbase = reinterpret_cast<const T *>(p.x);
    unsigned roff[TH + kFewR - 1];
    CT3D_UNROLL
    for (int u = 0; u < TH + kFewR - 1; u++)
        roff[u] = (unsigned)((u - (TH - 1)) * p.xstep[1]);
    /* the rank's input channels (all of them without a cluster) */
    const int cbeg = (int)((long long)p.cig * rank >> p.lcs),
              cend = (int)((long long)p.cig * (rank + 1) >> p.lcs);
    for (int c0 = cbeg; c0 < cend; c0 += p.ck) {
        const int cn = imin(p.ck, cend - c0);
        CT3D_SYNC(); /* the previous chunk's weights are read */
        few_stage_weights(p, smem, tid, g, c0, cn, dp, tw_n, th_n, taps);
        copy_wait();
        CT3D_SYNC();
        for (int c = slice; c < cn; c += p.ks) {
            const unsigned xc = (unsigned)xo + (unsigned)(c0 + c) * (unsigned)p.xs[1];
            const float *wc = smem + c * OCB;
            CT3D_NOUNROLL
            for (int td = 0; td < td_n; td++) {
                if (!((dmask >> td) & 1u))
                    continue;
                CT3D_NOUNROLL
                for (int tw = 0; tw < tw_n; tw++) {
                    if (!((wmask >> tw) & 1u))
                        continue;
                    const unsigned xr = xc - (unsigned)(td * p.xstep[0] + tw * p.xstep[2]);
                    float win[TH + kFewR - 1];
                    CT3D_UNROLL
                    for (int u = 0; u < TH + kFewR - 1; u++)
                        win[u] = (vm >> u) & 1u ? load_elem(xbase + (xr + roff[u])) : 0.0f;
                    const float *wt = wc + td * wtd + tw * wtw;
                    CT3D_UNROLL
                    for (int th = 0; th < TH; th++) {
                        if (th >= th_n)
                            break;
                        float wv[OCB];
                        CT3D_UNROLL
                        for (int q = 0; q < OCB; q += 4) {
                            const float4 w4 =
                                *reinterpret_cast<const float4 *>(wt + th * wth + q);
                            wv[q] = w4.x;
                            wv[q + 1] = w4.y;
                            wv[q + 2] = w4.z;
                            wv[q + 3] = w4.w;
                        }
                        CT3D_UNROLL
                        for (int j = 0; j < kFewR; j++)
                            CT3D_UNROLL
                            for (int o = 0; o < COG; o++)
                                acc[j][o] = fmaf(win[j - th + TH - 1], wv[o], acc[j][o]);
                    }
                }
            }
        }
    }

    const int r[3] = {rd, rh, rw};
    few_sum_and_store<COG, T>(p, smem, tid, acc, slice, slot, first, count, g, rank, dp, r);
}

} // namespace ct3d

#endif
