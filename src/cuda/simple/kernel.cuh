/* Per-thread bodies of the CUDA backend's simple kernels (params.h):
 *   depthwise_thread  C_in/G = C_out/G = 1: memory-bound, 4 outputs a thread
 *                     along the fastest axis, 16-byte stores (64-bit indices;
 *                     depthwise32_thread is the same in 32 bits, used when
 *                     every index fits);
 *   generic_thread    any problem, one output a thread (the fallback);
 * Both take each dim's stride phase from a device table (any stride),
 * so the tap loops visit only the taps that reach the output: no
 * divisibility tests.  Emulatable on the host like phase/kernel.cuh. */
#ifndef CONVT3D_CUDA_SIMPLE_KERNEL_CUH
#define CONVT3D_CUDA_SIMPLE_KERNEL_CUH

#include "../common/device.cuh"
#include "params.h"

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
    const int *e = p.phase + p.phase_off[d] + 3 * (p.phase_by_o[d] ? o : r);
    out_phase ph;
    ph.q = (op - r) / p.s[d];
    ph.taps = CT3D_LDG(e);
    ph.k0 = CT3D_LDG(e + 1);
    ph.m0 = CT3D_LDG(e + 2);
    return ph;
}

/* A depthwise thread's 4 outputs at y0, step apart: one 16-byte store when
 * vec and all 4 exist, else the ones that exist. */
CT3D_DEV void store4(float *y0, const float (&acc)[4], const bool (&valid)[4], bool vec,
                     long long step)
{
    if (vec && valid[3]) {
        float4 v;
        v.x = acc[0];
        v.y = acc[1];
        v.z = acc[2];
        v.w = acc[3];
        *reinterpret_cast<float4 *>(y0) = v;
    } else {
        CT3D_UNROLL
        for (int e = 0; e < 4; e++)
            if (valid[e])
                y0[e * step] = acc[e];
    }
}

/* store4 for 16-bit outputs: element by element, rounded. */
template <class T>
CT3D_DEV void store4(T *y0, const float (&acc)[4], const bool (&valid)[4], bool vec,
                     long long step)
{
    (void)vec;
    CT3D_UNROLL
    for (int e = 0; e < 4; e++)
        if (valid[e])
            store_elem(y0 + e * step, acc[e]);
}

/* Four outputs of a depthwise problem (channel c is its own group): along W
 * in NCDHW, along C in NDHWC.  T: the type of x, bias and y (as in
 * generic_thread). */
template <class T = float>
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
                const T *xr = reinterpret_cast<const T *>(p.x) + n * p.xs[0] + c[e] * p.xs[1] +
                              id * p.xs[2] + ih * p.xs[3];
                const float *wr = p.w + (c[e] * p.kvol + (kd * p.k[1] + kh) * p.k[2]) * p.ocb;
                for (int tw = 0; tw < pw[e].taps; tw++) {
                    const long long iw = pw[e].q - pw[e].m0 - (long long)tw * p.dm[2];
                    if (iw < 0)
                        break;
                    if (iw >= p.in[2])
                        continue;
                    const long long kw = pw[e].k0 + (long long)tw * p.kstep[2];
                    acc[e] = fmaf(load_elem(xr + iw * p.xs[4]), CT3D_LDG(wr + kw * p.ocb), acc[e]);
                }
            }
        }
    }
    CT3D_UNROLL
    for (int e = 0; e < 4; e++)
        if (valid[e] && p.bias)
            acc[e] += load_elem(reinterpret_cast<const T *>(p.bias) + c[e]);
    T *y0 = reinterpret_cast<T *>(p.y) + n * p.ys[0] + c[0] * p.ys[1] + od * p.ys[2] +
            oh * p.ys[3] + ow[0] * p.ys[4];
    store4(y0, acc, valid, p.vec_store, p.layout_ndhwc ? p.ys[1] : p.ys[4]);
}


/* phase_at in 32-bit arithmetic from the kernel parameters' own phase table
 * (the fast32 path: o + p < 2^31, p >= 0, strides <= kMaxPhaseStride). */
struct phase32 {
    int q, r, taps, k0, m0;
};

CT3D_DEV void phase32_load(const simple_params &p, int d, phase32 &ph)
{
    ph.taps = p.ptab[d][ph.r][0];
    ph.k0 = p.ptab[d][ph.r][1];
    ph.m0 = p.ptab[d][ph.r][2];
}

CT3D_DEV phase32 phase32_at(const simple_params &p, int d, int o)
{
    phase32 ph;
    ph.q = (int)fdiv_qr(p.dvs[d], (unsigned)(o + (int)p.p[d]), ph.r);
    phase32_load(p, d, ph);
    return ph;
}

/* The next output's phase along a dim: r + 1, wrapping into the next q. */
CT3D_DEV phase32 phase32_next(const simple_params &p, int d, phase32 ph)
{
    if (++ph.r == (int)p.dvs[d].d) {
        ph.r = 0;
        ++ph.q;
    }
    phase32_load(p, d, ph);
    return ph;
}

/* Four outputs of a depthwise problem, every index in 32 bits and each
 * division a multiply-high (the thread count and every size < 2^31): along
 * W in NCDHW (the W phases stepped, not divided, from the first), along C in
 * NDHWC (one phase shared by the four channels).  The W taps (at most MT a
 * phase) are unrolled and predicated, so each (D tap, H tap) issues all its
 * 4 x MT input and weight loads at once instead of one dependent load pair
 * after another: the kernel is bound by load latency otherwise.
 *
 * FEWIN: the same four outputs of any problem with few input channels a
 * group (the fewin entry, plan.cu: C_in/G <= kFewInMaxCig): the taps are
 * walked once per input channel of the output's group.  For problems whose
 * outputs average at most one product (strides above the kernel), which
 * are the writes of y and little else: in NCDHW each warp stores 32
 * consecutive outputs of one row, zero-tap outputs included, with no
 * second pass.  Weights packed with one output channel a block (ocb 1):
 * output channel co, input channel ic of its group at (co * C_in/G + ic) *
 * kvol. */
template <int MT, bool FEWIN = false>
CT3D_DEV void depthwise32_thread(const simple_params &p, unsigned t)
{
    const int ndhwc = p.layout_ndhwc;
    int n, c, od, oh, ow, v;
    unsigned r = fdiv_qr(p.dv[0], t, v);
    if (!ndhwc) {
        r = fdiv_qr(p.dv[1], r, oh);
        r = fdiv_qr(p.dv[2], r, od);
        n = (int)fdiv_qr(p.dv[3], r, c);
        ow = 4 * v;
    } else {
        r = fdiv_qr(p.dv[1], r, ow);
        r = fdiv_qr(p.dv[2], r, oh);
        n = (int)fdiv_qr(p.dv[3], r, od);
        c = 4 * v;
    }
    const int in0 = (int)p.in[0], in1 = (int)p.in[1], in2 = (int)p.in[2];
    const int ocb = (int)p.ocb, kvol = (int)p.kvol;
    const int cig = FEWIN ? (int)p.cig : 1, cog = FEWIN ? (int)p.cog : 1;
    const phase32 pd = phase32_at(p, 0, od), ph = phase32_at(p, 1, oh);
    bool valid[4];
    float acc[4];
    /* per output e and W tap j: input offset in the row, weight offset in
     * the tap row, and whether the tap reaches an input */
    int xo[4][MT], wo[4][MT];
    bool ok[4][MT];
    const int xc0 = FEWIN ? c / cog * cig : c; /* output 0's first input channel */
    phase32 pw = phase32_at(p, 2, ow);
    CT3D_UNROLL
    for (int e = 0; e < 4; e++) {
        valid[e] = ndhwc ? c + e < (int)p.cout : ow + e < (int)p.out[2];
        if (e > 0 && !ndhwc)
            pw = phase32_next(p, 2, pw);
        acc[e] = 0.0f;
        /* output e's input and weight offsets from output 0's: NDHWC only
         * (the four outputs of an NCDHW thread share their channel) */
        const int xe = ndhwc ? (FEWIN ? (c + e) / cog * cig - xc0 : e) * (int)p.xs[1] : 0;
        const int we = ndhwc ? e * cig * kvol * ocb : 0;
        CT3D_UNROLL
        for (int j = 0; j < MT; j++) {
            const int iw = pw.q - pw.m0 - j * (int)p.dm[2];
            ok[e][j] = valid[e] && j < pw.taps && iw >= 0 && iw < in2;
            xo[e][j] = iw * (int)p.xs[4] + xe;
            wo[e][j] = we + (pw.k0 + j * (int)p.kstep[2]) * ocb;
        }
    }
    for (int ic = 0; ic < cig; ic++) {
        const float *xc = p.x + n * p.xs[0] + (xc0 + ic) * p.xs[1];
        const float *wc0 = p.w + ((long long)c * cig + ic) * kvol * ocb;
        for (int td = 0; td < pd.taps; td++) {
            const int id = pd.q - pd.m0 - td * (int)p.dm[0];
            if (id < 0)
                break; /* later taps read further back */
            if (id >= in0)
                continue;
            const int kd = pd.k0 + td * (int)p.kstep[0];
            for (int th = 0; th < ph.taps; th++) {
                const int ih = ph.q - ph.m0 - th * (int)p.dm[1];
                if (ih < 0)
                    break;
                if (ih >= in1)
                    continue;
                const int kh = ph.k0 + th * (int)p.kstep[1];
                const float *xr = xc + id * p.xs[2] + ih * p.xs[3];
                const float *wr = wc0 + (kd * (int)p.k[1] + kh) * (int)p.k[2] * ocb;
                float xv[4][MT], wv[4][MT];
                CT3D_UNROLL
                for (int e = 0; e < 4; e++)
                    CT3D_UNROLL
                    for (int j = 0; j < MT; j++) {
                        xv[e][j] = ok[e][j] ? CT3D_LDG(xr + xo[e][j]) : 0.0f;
                        wv[e][j] = ok[e][j] ? CT3D_LDG(wr + wo[e][j]) : 0.0f;
                    }
                CT3D_UNROLL
                for (int e = 0; e < 4; e++)
                    CT3D_UNROLL
                    for (int j = 0; j < MT; j++)
                        if (ok[e][j])
                            acc[e] = fmaf(xv[e][j], wv[e][j], acc[e]);
            }
        }
    }
    if (p.bias) {
        CT3D_UNROLL
        for (int e = 0; e < 4; e++)
            if (valid[e])
                acc[e] += CT3D_LDG(p.bias + (ndhwc ? c + e : c));
    }
    float *y0 = p.y + n * p.ys[0] + c * p.ys[1] + od * p.ys[2] + oh * p.ys[3] + ow * p.ys[4];
    store4(y0, acc, valid, p.vec_store, ndhwc ? p.ys[1] : p.ys[4]);
}

/* One output element; e is its offset in y (layout order).  T: the type of
 * x, bias and y (f32, f16_t or bf16_t: simple_params holds them as float
 * pointers, the f32 case); the packed weights are f32. */
template <class T = float>
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
        const T *xb = reinterpret_cast<const T *>(p.x) + n * p.xs[0] + (g * p.cig + ic) * p.xs[1];
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
                    acc = fmaf(load_elem(xb + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4]),
                               CT3D_LDG(wb + ((kd * p.k[1] + kh) * p.k[2] + kw) * p.ocb), acc);
                }
            }
        }
    }
    if (p.bias)
        acc += load_elem(reinterpret_cast<const T *>(p.bias) + co);
    store_elem(reinterpret_cast<T *>(p.y) + e, acc);
}


} // namespace ct3d

#endif
