/* Per-thread bodies of the CUDA backend's simple kernels:
 *   depthwise_thread  C_in/G = C_out/G = 1: memory-bound, 4 outputs a thread
 *                     along the fastest axis, 16-byte stores;
 *   generic_thread    any problem, one output a thread (the fallback);
 *   pack_thread       PyTorch weights -> w[g][ob][ic][tap][oc] (gpu_kernels.h).
 * All three take each dim's stride phase from a device table (any stride),
 * so the tap loops visit only the taps that reach the output: no
 * divisibility tests.  Emulatable on the host like gpu_phase_kernel.h. */
#ifndef CONVT3D_GPU_SIMPLE_KERNELS_H
#define CONVT3D_GPU_SIMPLE_KERNELS_H

#include "gpu_phase_kernel.h" /* CT3D_DEV, CT3D_LDG, CT3D_UNROLL, float4 */

namespace ct3d {

/* The phase of output coordinate o in dim d: q, and the taps reaching it. */
struct out_phase {
    long long q;
    int taps, k0, m0;
};

CT3D_DEV out_phase phase_at(const simple_params &p, int d, long long o)
{
    const long long op = o + p.p[d];
    const long long r = op % p.s[d];
    const int *e = p.phase + p.phase_off[d] + 3 * r;
    out_phase ph;
    ph.q = (op - r) / p.s[d];
    ph.taps = CT3D_LDG(e);
    ph.k0 = CT3D_LDG(e + 1);
    ph.m0 = CT3D_LDG(e + 2);
    return ph;
}

/* Four outputs of a depthwise problem (channel c is its own group): along W
 * in NCDHW, along C in NDHWC. */
CT3D_DEV void depthwise_thread(const simple_params &p, long long t)
{
    long long n, od, oh, c[4], ow[4];
    bool valid[4];
    if (!p.layout_ndhwc) {
        const long long nw4 = (p.out[2] + 3) / 4;
        const long long ow4 = t % nw4;
        long long r = t / nw4;
        oh = r % p.out[1];
        r /= p.out[1];
        od = r % p.out[0];
        r /= p.out[0];
        const long long cc = r % p.cout;
        n = r / p.cout;
        CT3D_UNROLL
        for (int e = 0; e < 4; e++) {
            c[e] = cc;
            ow[e] = ow4 * 4 + e;
            valid[e] = ow[e] < p.out[2];
        }
    } else {
        const long long nc4 = (p.cout + 3) / 4;
        const long long c4 = t % nc4;
        long long r = t / nc4;
        const long long w = r % p.out[2];
        r /= p.out[2];
        oh = r % p.out[1];
        r /= p.out[1];
        od = r % p.out[0];
        n = r / p.out[0];
        CT3D_UNROLL
        for (int e = 0; e < 4; e++) {
            c[e] = c4 * 4 + e;
            ow[e] = w;
            valid[e] = c[e] < p.cout;
        }
    }
    const out_phase pd = phase_at(p, 0, od), ph = phase_at(p, 1, oh);
    out_phase pw[4];
    float acc[4];
    CT3D_UNROLL
    for (int e = 0; e < 4; e++) {
        pw[e] = phase_at(p, 2, valid[e] ? ow[e] : 0);
        acc[e] = 0.0f;
    }
    for (int td = 0; td < pd.taps; td++) {
        const long long id = pd.q - pd.m0 - (long long)td * p.dm[0];
        if (id < 0)
            break; /* later taps read further back */
        if (id >= p.in[0])
            continue;
        const long long kd = pd.k0 + (long long)td * p.kstep[0];
        for (int th = 0; th < ph.taps; th++) {
            const long long ih = ph.q - ph.m0 - (long long)th * p.dm[1];
            if (ih < 0)
                break;
            if (ih >= p.in[1])
                continue;
            const long long kh = ph.k0 + (long long)th * p.kstep[1];
            CT3D_UNROLL
            for (int e = 0; e < 4; e++) {
                if (!valid[e])
                    continue;
                const float *xr = p.x + n * p.xs[0] + c[e] * p.xs[1] + id * p.xs[2] + ih * p.xs[3];
                const float *wr = p.w + (c[e] * p.kvol + (kd * p.k[1] + kh) * p.k[2]) * p.ocb;
                for (int tw = 0; tw < pw[e].taps; tw++) {
                    const long long iw = pw[e].q - pw[e].m0 - (long long)tw * p.dm[2];
                    if (iw < 0)
                        break;
                    if (iw >= p.in[2])
                        continue;
                    const long long kw = pw[e].k0 + (long long)tw * p.kstep[2];
                    acc[e] = fmaf(CT3D_LDG(xr + iw * p.xs[4]), CT3D_LDG(wr + kw * p.ocb), acc[e]);
                }
            }
        }
    }
    CT3D_UNROLL
    for (int e = 0; e < 4; e++)
        if (valid[e] && p.bias)
            acc[e] += CT3D_LDG(p.bias + c[e]);
    float *y0 = p.y + n * p.ys[0] + c[0] * p.ys[1] + od * p.ys[2] + oh * p.ys[3] + ow[0] * p.ys[4];
    if (p.vec_store && valid[3]) {
        float4 v;
        v.x = acc[0];
        v.y = acc[1];
        v.z = acc[2];
        v.w = acc[3];
        *reinterpret_cast<float4 *>(y0) = v;
    } else {
        const long long step = p.layout_ndhwc ? 1 : p.ys[4];
        CT3D_UNROLL
        for (int e = 0; e < 4; e++)
            if (valid[e])
                y0[e * step] = acc[e];
    }
}

/* One output element; e is its offset in y (layout order). */
CT3D_DEV void generic_thread(const simple_params &p, long long e)
{
    long long n, co, od, oh, ow, r = e;
    if (!p.layout_ndhwc) {
        ow = r % p.out[2];
        r /= p.out[2];
        oh = r % p.out[1];
        r /= p.out[1];
        od = r % p.out[0];
        r /= p.out[0];
        co = r % p.cout;
        n = r / p.cout;
    } else {
        co = r % p.cout;
        r /= p.cout;
        ow = r % p.out[2];
        r /= p.out[2];
        oh = r % p.out[1];
        r /= p.out[1];
        od = r % p.out[0];
        n = r / p.out[0];
    }
    const long long g = co / p.cog, oc = co - g * p.cog;
    const long long ob = oc / p.ocb, oi = oc - ob * p.ocb;
    const out_phase pd = phase_at(p, 0, od), ph = phase_at(p, 1, oh), pw = phase_at(p, 2, ow);
    float acc = 0.0f;
    for (long long ic = 0; ic < p.cig; ic++) {
        const float *xb = p.x + n * p.xs[0] + (g * p.cig + ic) * p.xs[1];
        const float *wb = p.w + (((g * p.nocb + ob) * p.cig + ic) * p.kvol) * p.ocb + oi;
        for (int td = 0; td < pd.taps; td++) {
            const long long id = pd.q - pd.m0 - (long long)td * p.dm[0];
            if (id < 0)
                break;
            if (id >= p.in[0])
                continue;
            const long long kd = pd.k0 + (long long)td * p.kstep[0];
            for (int th = 0; th < ph.taps; th++) {
                const long long ih = ph.q - ph.m0 - (long long)th * p.dm[1];
                if (ih < 0)
                    break;
                if (ih >= p.in[1])
                    continue;
                const long long kh = ph.k0 + (long long)th * p.kstep[1];
                for (int tw = 0; tw < pw.taps; tw++) {
                    const long long iw = pw.q - pw.m0 - (long long)tw * p.dm[2];
                    if (iw < 0)
                        break;
                    if (iw >= p.in[2])
                        continue;
                    const long long kw = pw.k0 + (long long)tw * p.kstep[2];
                    acc = fmaf(CT3D_LDG(xb + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4]),
                               CT3D_LDG(wb + ((kd * p.k[1] + kh) * p.k[2] + kw) * p.ocb), acc);
                }
            }
        }
    }
    if (p.bias)
        acc += CT3D_LDG(p.bias + co);
    p.y[e] = acc;
}

/* dst[e] of the packed weights, e < groups * nocb * cig * kvol * ocb. */
CT3D_DEV void pack_thread(const simple_params &p, const float *src, float *dst, long long e)
{
    long long r = e;
    const long long oi = r % p.ocb;
    r /= p.ocb;
    const long long tap = r % p.kvol;
    r /= p.kvol;
    const long long ic = r % p.cig;
    r /= p.cig;
    const long long ob = r % p.nocb;
    const long long g = r / p.nocb;
    const long long oc = ob * p.ocb + oi;
    dst[e] = oc < p.cog ? src[((g * p.cig + ic) * p.cog + oc) * p.kvol + tap] : 0.0f;
}

} // namespace ct3d

#endif
