/* The per-block body of the few-output-channel kernel (params.h says what a
 * block does).  Only the body lives here so that the host emulator can
 * compile it (CONVT3D_GPU_EMULATE).  COG: C_out/G, 1 to 4, so that a tap
 * costs exactly COG FMAs a position. */
#ifndef CONVT3D_CUDA_FEWOUT_KERNEL_CUH
#define CONVT3D_CUDA_FEWOUT_KERNEL_CUH

#include "../common/device.cuh"
#include "params.h"

namespace ct3d {

/* Position `flat` of a phase (n slowest, then the D, H and W q rows) split
 * into the image and the q offsets j past each dim's qlo. */
struct few_pos {
    int n, j[3];
};
CT3D_DEV few_pos few_split(const few_dim_phase *const dp[3], int flat)
{
    few_pos r;
    int rest = (int)fdiv_qr(dp[2]->dv_q, (unsigned)flat, r.j[2]);
    rest = (int)fdiv_qr(dp[1]->dv_q, (unsigned)rest, r.j[1]);
    r.n = (int)fdiv_qr(dp[0]->dv_q, (unsigned)rest, r.j[0]);
    return r;
}

/* The weights of input channels [c0, c0 + cn) of group g for the phase's
 * taps, as smem[(t * ck + c) * 4 + oc]: a tap's channels side by side, so
 * that lanes on consecutive channels (NDHWC) load consecutive float4s. */
CT3D_DEV void few_stage_weights(const few_params &p, float *smem, int tid, int g, int c0, int cn,
                                const few_dim_phase *const dp[3], int tw, int th, int taps)
{
    const int units = cn * taps;
    for (int u = tid; u < units; u += kFewThreads) {
        const int t = u / cn, c = u - t * cn;
        const int ttw = t % tw, tth = (t / tw) % th, ttd = t / (tw * th);
        const int kd = dp[0]->e.k0 + ttd * p.kstep[0], kh = dp[1]->e.k0 + tth * p.kstep[1],
                  kw = dp[2]->e.k0 + ttw * p.kstep[2];
        const long long src =
            (((long long)g * p.cig + c0 + c) * p.k[0] * p.k[1] * p.k[2] +
             ((long long)kd * p.k[1] + kh) * p.k[2] + kw) * 4;
        copy16(smem + (t * p.ck + c) * 4, p.w + src, true);
    }
}

template <int COG>
CT3D_DEV void few_block(const few_params &p, float *smem, int tid, int bx, int g)
{
    /* the phase of this block (uniform: at most kFewMaxPhases steps) */
    int phase = 0;
    while (p.tile0[phase + 1] <= bx)
        phase++;
    const int rw = phase % p.s[2], rh = (phase / p.s[2]) % p.s[1], rd = phase / (p.s[2] * p.s[1]);
    const few_dim_phase *const dp[3] = {&p.ph[0][rd], &p.ph[1][rh], &p.ph[2][rw]};
    const int td_n = dp[0]->e.taps, th_n = dp[1]->e.taps, tw_n = dp[2]->e.taps;
    const int taps = td_n * th_n * tw_n;
    const int count = p.n * dp[0]->e.qcount * dp[1]->e.qcount * dp[2]->e.qcount;
    const int tile_pos = p.ps * kFewR;
    const int first = (bx - p.tile0[phase]) * tile_pos;
    const int slice = p.chan_fast ? tid & (p.ks - 1) : tid >> p.lps;
    const int slot = p.chan_fast ? tid >> p.lks : tid & (p.ps - 1);

    /* Each position's input for tap 0 (offset without the channel; int: the
     * planner checks that every offset formed here fits, x_offsets_fit_int)
     * and the bit masks of the taps whose input lies inside x: D taps in
     * bits 0-7, H 8-15, W 16-23. */
    int xo[kFewR];
    unsigned mask[kFewR];
    CT3D_UNROLL
    for (int j = 0; j < kFewR; j++) {
        const int flat = first + j * p.ps + slot;
        xo[j] = 0;
        mask[j] = 0;
        if (flat >= count)
            continue;
        const few_pos q = few_split(dp, flat);
        xo[j] = q.n * (int)p.xs[0] + g * p.cig * (int)p.xs[1];
        CT3D_UNROLL
        for (int d = 0; d < 3; d++) {
            const int i0 = q.j[d] + dp[d]->e.qlo - dp[d]->e.m0; /* input of tap 0 */
            xo[j] += i0 * (int)p.xs[2 + d];
            for (int t = 0; t < dp[d]->e.taps; t++)
                if ((unsigned)(i0 - t * p.dm[d]) < (unsigned)p.in[d])
                    mask[j] |= 1u << (t + 8 * d);
        }
    }

    float acc[kFewR][COG];
    CT3D_UNROLL
    for (int j = 0; j < kFewR; j++)
        CT3D_UNROLL
        for (int c = 0; c < COG; c++)
            acc[j][c] = 0.0f;

    const int wpitch = p.ck * 4; /* floats between taps of the staged weights */
    for (int c0 = 0; c0 < p.cig; c0 += p.ck) {
        const int cn = imin(p.ck, p.cig - c0);
        CT3D_SYNC(); /* the previous chunk's weights are read */
        few_stage_weights(p, smem, tid, g, c0, cn, dp, tw_n, th_n, taps);
        copy_wait();
        CT3D_SYNC();
        for (int c = slice; c < cn; c += p.ks) {
            const float *xc = p.x + (long long)(c0 + c) * p.xs[1];
            const float *wt = smem + c * 4;
            CT3D_NOUNROLL
            for (int td = 0; td < td_n; td++)
                CT3D_NOUNROLL
                for (int th = 0; th < th_n; th++) {
                    const int off_dh = td * p.xstep[0] + th * p.xstep[1];
                    unsigned row = 0; /* bit j: the position's D and H taps are inside */
                    CT3D_UNROLL
                    for (int j = 0; j < kFewR; j++)
                        row |= ((mask[j] >> td) & (mask[j] >> (8 + th)) & 1u) << j;
                    for (int tw = 0; tw < tw_n; tw++, wt += wpitch) {
                        const float4 w4 = *reinterpret_cast<const float4 *>(wt);
                        const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
                        const int off = off_dh + tw * p.xstep[2];
                        CT3D_UNROLL
                        for (int j = 0; j < kFewR; j++)
                            if ((row >> j) & (mask[j] >> (16 + tw)) & 1u) {
                                const float v = CT3D_LDG(xc + (xo[j] - off));
                                CT3D_UNROLL
                                for (int o = 0; o < COG; o++)
                                    acc[j][o] = fmaf(v, wv[o], acc[j][o]);
                            }
                    }
                }
        }
    }

    /* The slices' partial sums, [slice][position][oc], added in slice
     * order by one thread an output. */
    CT3D_SYNC(); /* the weights are read: their space takes the sums */
    CT3D_UNROLL
    for (int j = 0; j < kFewR; j++)
        CT3D_UNROLL
        for (int c = 0; c < COG; c++)
            smem[(slice * tile_pos + j * p.ps + slot) * COG + c] = acc[j][c];
    CT3D_SYNC();
    for (int e = tid; e < tile_pos * COG; e += kFewThreads) {
        /* NDHWC: an output's channels side by side in y; NCDHW: positions */
        const int pos = p.chan_fast ? e / COG : e % tile_pos;
        const int oc = p.chan_fast ? e - pos * COG : e / tile_pos;
        const int flat = first + pos;
        if (flat >= count)
            continue;
        float sum = smem[pos * COG + oc];
        for (int k = 1; k < p.ks; k++)
            sum += smem[(k * tile_pos + pos) * COG + oc];
        if (p.bias)
            sum += CT3D_LDG(p.bias + (long long)g * p.cog + oc);
        const few_pos q = few_split(dp, flat);
        long long yo = (long long)q.n * p.ys[0] + ((long long)g * p.cog + oc) * p.ys[1];
        const int r[3] = {rd, rh, rw};
        CT3D_UNROLL
        for (int d = 0; d < 3; d++)
            yo += (long long)((q.j[d] + dp[d]->e.qlo) * p.s[d] + r[d] - p.p[d]) * p.ys[2 + d];
        p.y[yo] = sum;
    }
}

} // namespace ct3d

#endif
