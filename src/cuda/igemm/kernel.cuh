/* The implicit-GEMM kernel's per-block body (see params.h for what it
 * computes and how blocks are ordered and clustered).  Only the body lives
 * here so that it compiles for the host too and can be checked there by an
 * emulator (CONVT3D_GPU_EMULATE), like phase/kernel.cuh.
 *
 * A block of WM x WN warps owns a BM x BN tile (BM = 64 WM positions of one
 * phase, BN = 32 WN output channels).  Shared memory holds STAGES K steps,
 * each As[BK][BM] (inputs: BK channels of one tap at the tile's positions)
 * and Bs[BK][BN] (their weights), filled by cp.async: a thread copies the
 * same positions in every step, so their input offsets and bounds are
 * worked out once per tap, not per element.  A thread accumulates 8
 * positions x 8 channels: per channel of a step two 16-byte loads of A (8
 * lanes of a warp read 32 consecutive positions, the others the same:
 * broadcast) and two of B feed 64 FMAs. */
#ifndef CONVT3D_CUDA_IGEMM_KERNEL_CUH
#define CONVT3D_CUDA_IGEMM_KERNEL_CUH

#include <type_traits>

#include "../common/device.cuh"
#include "params.h"

namespace ct3d {

template <int WM, int WN, int MATH = IGEMM_FFMA, bool KC = false, bool RUNS = false>
struct igemm_cfg {
    static constexpr int BM = 64 * WM, BN = 32 * WN, NT = 32 * WM * WN;
    static constexpr int BK = kIgemmBK, STAGES = 3;
    /* Bytes of a staged element: f16 / bf16 stay 16-bit for IGEMM_HALF. */
    static constexpr int ES = MATH == IGEMM_HALF ? 2 : 4;
    /* Row pitches of As and Bs, in elements.  The FMA step reads rows with
     * float4 loads (no padding); the TF32 fragments read rows k..k+3 at 8
     * consecutive columns, which a pitch of 8 (mod 32) spreads over all 32
     * banks; ldmatrix reads 8 rows of 16 bytes, which a pitch of an odd
     * multiple of 16 bytes spreads over all banks (BM, BN: multiples of 32). */
    static constexpr int PAD = MATH == IGEMM_FFMA ? 0 : 8;
    static constexpr int AP = BM + PAD, BP = BN + PAD;
    /* KC (K-contiguous A, igemm_plan.kc): As is [BM][AKP] instead, filled
     * by 16-byte copies along the channels.  AKP: rows 16-byte aligned, and
     * an odd multiple of 16 bytes, which keeps ldmatrix conflict-free (8
     * rows of 16 bytes) and spreads the TF32 fragments' 8 rows x 4 columns
     * over all 32 banks. */
    static constexpr int AKP = BK + 16 / ES;
    static constexpr int ASZ = KC ? BM * AKP : BK * AP; /* elements of As */
    static constexpr int STAGE = (ASZ + BK * BP) * ES / 4; /* floats of one K step */
    static constexpr int CPITCH = BM + 4;        /* the output tile, [BN][CPITCH] */
    static constexpr int SMEM = STAGES * STAGE > BN * CPITCH ? STAGES * STAGE : BN * CPITCH;
    /* A thread's positions (MS of them, NT apart) and rows: rows tid / BM +
     * j * RS.  The same split serves the A copies and the output stores. */
    static constexpr int MS = BM > NT ? BM / NT : 1;
    static constexpr int RS = NT >= BM ? NT / BM : 1;
    static constexpr int BE = 16 / ES;         /* elements of B a 16-byte copy */
    static constexpr int B4 = BK * BN / BE;    /* 16-byte copies of B a step */
    /* KC: a thread copies chunk tid % CPP of positions tid / CPP + s NT / CPP */
    static constexpr int CPP = BK / BE;
    /* RUNS (igemm_plan.runs, NCDHW): a thread fetches RL positions of one
     * channel that lie in one W row of x as 16 bytes (run tid % RPR of the
     * tile, channels tid / RPR + j RRS, j < RJ). */
    static constexpr int RL = 16 / ES;       /* positions a run */
    static constexpr int RPR = BM / RL;      /* runs a channel row of As */
    static constexpr int RRS = NT / RPR;     /* channel rows apart */
    static constexpr int RJ = BK / RRS;      /* channels a thread */
    /* positions whose A a thread copies (RUNS: a run's first) */
    static constexpr int MSA = KC ? BM * CPP / NT : RUNS ? 1 : MS;
    static_assert(BM % NT == 0 || NT % BM == 0, "positions split evenly");
    static_assert(BK % RS == 0 && BN % RS == 0, "rows split evenly");
};


/* Which tile a cluster computes. */
struct igemm_tile {
    int g, ob;
    int r[3];             /* the phase */
    long long m0, mcount; /* first position of the tile, positions of the phase */
    int taps[3];
    bool empty;           /* the tile lies past its phase's positions */
};

/* Tile t of the block order (gpu_igemm.h), for tiles of bm positions. */
CT3D_DEV igemm_tile igemm_tile_of(const igemm_params &p, long long t, int bm)
{
    int c = 0;
    while (c + 1 < p.nclass && t >= p.cls_tile[c + 1])
        c++;
    long long loc = t - p.cls_tile[c];
    igemm_tile tl;
    tl.ob = (int)(loc % p.nocb);
    loc /= p.nocb;
    tl.g = (int)(loc % p.groups);
    loc /= p.groups;
    const int nph = p.cls_phase[c + 1] - p.cls_phase[c];
    const int code = p.order[p.cls_phase[c] + (int)(loc % nph)];
    const long long mt = loc / nph;
    tl.mcount = p.nimg;
    for (int d = 0; d < 3; d++) {
        tl.r[d] = igemm_phase_dim(code, d);
        tl.taps[d] = p.ph[d][tl.r[d]].taps;
        tl.mcount *= p.ph[d][tl.r[d]].qcount;
    }
    tl.m0 = mt * bm;
    tl.empty = tl.m0 >= tl.mcount;
    return tl;
}

/* One position of the tile, as the A copies and the stores need it. */
struct igemm_pos {
    long long xoff; /* x at (n, g's first channel, q - m0) per dim, or 0 */
    long long yoff; /* y at (n, g's first channel, the output position) */
    int i[3];       /* input coordinates of tap 0 */
    bool valid;     /* inside the phase's positions */
};

CT3D_DEV igemm_pos igemm_pos_of(const igemm_params &p, const igemm_tile &tl, long long m)
{
    igemm_pos ps;
    ps.valid = m < tl.mcount;
    if (!ps.valid)
        m = 0;
    long long q[3];
    for (int d = 2; d >= 0; d--) {
        const phase_entry &e = p.ph[d][tl.r[d]];
        const long long c = m % e.qcount;
        m /= e.qcount;
        q[d] = e.qlo + c;
        ps.i[d] = (int)(q[d] - e.m0);
    }
    const long long n = m;
    ps.xoff = n * p.xs[0] + (long long)tl.g * p.cig * p.xs[1];
    ps.yoff = n * p.ys[0] + (long long)tl.g * p.cog * p.ys[1];
    for (int d = 0; d < 3; d++) {
        ps.xoff += (long long)ps.i[d] * p.xs[2 + d];
        ps.yoff += (q[d] * p.s[d] + tl.r[d] - p.p[d]) * p.ys[2 + d];
    }
    return ps;
}

/* Where the next K step to copy reads from: K steps go tap by tap, BK input
 * channels at a time, and the cursor advances by additions (the tap
 * decomposition and the bounds of the thread's positions are redone once
 * per tap only). */
template <int MS>
struct igemm_cursor {
    int ic0;              /* first input channel of the step */
    int t[3];             /* the tap, per dim */
    long long woff;       /* packed weights of (ic0, tap) */
    long long aoff[MS];   /* x at (ic0 + the thread's first row, tap, position s) */
    bool ain[MS];         /* position s at this tap lies inside x */
};

/* Sets the tap-dependent parts of c for tap c.t and channel c.ic0. */
template <int MS>
CT3D_DEV void igemm_cursor_tap(const igemm_params &p, const igemm_tile &tl,
                               const igemm_pos (&pos)[MS], int row0, igemm_cursor<MS> &c)
{
    long long shift = (long long)(c.ic0 + row0) * p.xs[1];
    int kl = 0;
    for (int d = 0; d < 3; d++) {
        shift -= (long long)c.t[d] * p.dm[d] * p.xs[2 + d];
        kl = kl * p.k[d] + p.ph[d][tl.r[d]].k0 + c.t[d] * p.kstep[d];
    }
    c.woff = (((long long)tl.g * p.nocb + tl.ob) * p.cig + c.ic0) * igemm_wrow(p) +
             (long long)kl * p.ocb;
    CT3D_UNROLL
    for (int s = 0; s < MS; s++) {
        bool in = pos[s].valid;
        for (int d = 0; d < 3; d++) {
            const int i = pos[s].i[d] - c.t[d] * p.dm[d];
            in = in && (unsigned)i < (unsigned)p.in[d];
        }
        c.ain[s] = in;
        c.aoff[s] = pos[s].xoff + shift;
    }
}

/* The cursor at K step `step` (one division, at the start of the block's range). */
template <int MS>
CT3D_DEV igemm_cursor<MS> igemm_cursor_at(const igemm_params &p, const igemm_tile &tl,
                                          const igemm_pos (&pos)[MS], int row0, int step)
{
    igemm_cursor<MS> c;
    const int tap = step / p.kchunks;
    c.ic0 = (step - tap * p.kchunks) * kIgemmBK;
    c.t[2] = tap % tl.taps[2];
    c.t[1] = (tap / tl.taps[2]) % tl.taps[1];
    c.t[0] = tap / (tl.taps[2] * tl.taps[1]);
    igemm_cursor_tap(p, tl, pos, row0, c);
    return c;
}

/* The next K step: the next BK channels, or the next tap's first. */
template <int MS>
CT3D_DEV void igemm_cursor_next(const igemm_params &p, const igemm_tile &tl,
                                const igemm_pos (&pos)[MS], int row0, igemm_cursor<MS> &c)
{
    c.ic0 += kIgemmBK;
    if (c.ic0 < p.cig) {
        c.woff += kIgemmBK * igemm_wrow(p);
        CT3D_UNROLL
        for (int s = 0; s < MS; s++)
            c.aoff[s] += (long long)kIgemmBK * p.xs[1];
        return;
    }
    c.ic0 = 0;
    for (int d = 2; d >= 0; d--) {
        if (++c.t[d] < tl.taps[d])
            break;
        c.t[d] = 0;
    }
    igemm_cursor_tap(p, tl, pos, row0, c);
}

/* The K step at cursor c goes into stage buffer buf: As[BK][AP] (the
 * thread's positions, rows row0 + j RS) and Bs[BK][BP].  f32 inputs go by
 * cp.async.  f16 and bf16 ones must be widened on the way, which cp.async
 * cannot do: their bits are fetched into registers (igemm_fetch_a) a
 * pipeline distance ahead and widened into shared memory (igemm_put_a)
 * after the step in between has been computed, so the loads' latency
 * passes under the MMAs as cp.async's does. */
template <int WM, int WN, int MATH>
struct igemm_astage {
    using C = igemm_cfg<WM, WN, MATH>;
    unsigned short bits[C::MS][C::BK / C::RS];
};

struct igemm_no_astage {};

template <int WM, int WN, int MATH, class T>
CT3D_DEV void igemm_fetch_a(const igemm_params &p, const igemm_cursor<igemm_cfg<WM, WN>::MS> &c,
                            igemm_astage<WM, WN, MATH> &st, int tid)
{
    using C = igemm_cfg<WM, WN, MATH>;
    const T *x = static_cast<const T *>(p.x);
    const int row0 = tid / C::BM;
    CT3D_UNROLL
    for (int s = 0; s < C::MS; s++) {
        const T *src = x + c.aoff[s];
        CT3D_UNROLL
        for (int j = 0; j < C::BK / C::RS; j++) {
            const bool ok = c.ain[s] && c.ic0 + row0 + j * C::RS < p.cig;
            st.bits[s][j] = ok ? load_bits(src) : (unsigned short)0; /* +0 in both types */
            src += (long long)C::RS * p.xs[1];
        }
    }
}

template <int WM, int WN, int MATH, class T>
CT3D_DEV void igemm_put_a(const igemm_astage<WM, WN, MATH> &st, float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, MATH>;
    const int row0 = tid / C::BM, col = tid - row0 * C::BM;
    CT3D_UNROLL
    for (int s = 0; s < C::MS; s++)
        CT3D_UNROLL
        for (int j = 0; j < C::BK / C::RS; j++) {
            const int at = (row0 + j * C::RS) * C::AP + col + s * C::NT;
            if constexpr (MATH == IGEMM_HALF)
                reinterpret_cast<unsigned short *>(buf)[at] = st.bits[s][j];
            else
                buf[at] = widen_bits(static_cast<const T *>(nullptr), st.bits[s][j]);
        }
}

/* RUNS (igemm_plan.runs: NCDHW half data, every W phase's positions a
 * multiple of RL): the RL = 8 positions of a run lie in one W row of x, so
 * at a tap they are RL consecutive elements -- at any 2-byte alignment,
 * since the tap shifts them.  Where they lie inside x the thread fetches
 * the one or two aligned 16-byte words that cover them (2 loads instead of
 * 8) and realigns them in registers after the step in between has been
 * computed; at image edges and padding it falls back to element loads. */
template <int WM, int WN, int MATH>
struct igemm_rstage {
    using C = igemm_cfg<WM, WN, MATH, false, true>;
    /* per channel j: the covering words (o[j] >= 0: the byte offset of the
     * run in them) or the RL elements one a word (o[j] < 0) */
    unsigned w[C::RJ][8];
    int o[C::RJ];
};

template <int WM, int WN, int MATH>
CT3D_DEV void igemm_fetch_runs(const igemm_params &p, const igemm_cursor<1> &c,
                               const igemm_pos &rp, igemm_rstage<WM, WN, MATH> &st, int tid)
{
    using C = igemm_cfg<WM, WN, MATH, false, true>;
    static_assert(C::ES == 2 && C::RL == 8 && C::BK % C::RRS == 0, "runs of 8 half elements");
    const unsigned short *x = static_cast<const unsigned short *>(p.x);
    const unsigned short *xend = x + p.nimg * p.xs[0]; /* NCDHW: the whole tensor */
    const int row0 = tid / C::RPR;
    /* the run at this tap: D and H inside x, and where along W it starts */
    bool dh = rp.valid;
    for (int d = 0; d < 2; d++)
        dh = dh && (unsigned)(rp.i[d] - c.t[d] * p.dm[d]) < (unsigned)p.in[d];
    const int iw = rp.i[2] - c.t[2] * p.dm[2];
    const bool inrow = dh && iw >= 0 && iw + C::RL <= p.in[2];
    const unsigned short *src = x + c.aoff[0];
    CT3D_UNROLL
    for (int j = 0; j < C::RJ; j++) {
        const bool okc = c.ic0 + row0 + j * C::RRS < p.cig;
        const int o = (int)(reinterpret_cast<unsigned long long>(src) & 15);
        const unsigned short *lo = src - o / 2;
        /* the covering words must lie inside x too (x may start or end
         * inside a 16-byte word) */
        if (okc && inrow && lo >= x && lo + (o ? 16 : 8) <= xend) {
            const uint4 a = CT3D_LDG(reinterpret_cast<const uint4 *>(lo));
            uint4 b = {0u, 0u, 0u, 0u};
            if (o)
                b = CT3D_LDG(reinterpret_cast<const uint4 *>(lo + 8));
            st.w[j][0] = a.x, st.w[j][1] = a.y, st.w[j][2] = a.z, st.w[j][3] = a.w;
            st.w[j][4] = b.x, st.w[j][5] = b.y, st.w[j][6] = b.z, st.w[j][7] = b.w;
            st.o[j] = o;
        } else {
            CT3D_UNROLL
            for (int e = 0; e < C::RL; e++) {
                const bool ok = okc && dh && (unsigned)(iw + e) < (unsigned)p.in[2];
                st.w[j][e] = ok ? load_bits(src + e) : 0u; /* +0 in both types */
            }
            st.o[j] = -1;
        }
        src += (long long)C::RRS * p.xs[1];
    }
}

/* RUNS on f32 data (TF32, 3xTF32): runs of RL = 4 positions, copied by
 * cp.async as one 16-byte copy where the tap leaves them 16-byte aligned,
 * two 8-byte ones where 8-byte aligned, else (and at edges, padding and
 * channels past C_in/G) element by element. */
template <int WM, int WN, int MATH>
CT3D_DEV void igemm_copy_runs(const igemm_params &p, const igemm_cursor<1> &c,
                              const igemm_pos &rp, float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, MATH, false, true>;
    static_assert(C::ES == 4 && C::RL == 4 && C::BK % C::RRS == 0, "runs of 4 floats");
    const float *x = static_cast<const float *>(p.x);
    const int row0 = tid / C::RPR, col = (tid - row0 * C::RPR) * C::RL;
    bool dh = rp.valid;
    for (int d = 0; d < 2; d++)
        dh = dh && (unsigned)(rp.i[d] - c.t[d] * p.dm[d]) < (unsigned)p.in[d];
    const int iw = rp.i[2] - c.t[2] * p.dm[2];
    const bool inrow = dh && iw >= 0 && iw + C::RL <= p.in[2];
    const float *src = x + c.aoff[0];
    CT3D_UNROLL
    for (int j = 0; j < C::RJ; j++) {
        const bool okc = c.ic0 + row0 + j * C::RRS < p.cig;
        float *dst = buf + (row0 + j * C::RRS) * C::AP + col;
        const unsigned a = (unsigned)(reinterpret_cast<unsigned long long>(src) & 15);
        if (okc && inrow && a == 0) {
            copy16(dst, src, true);
        } else if (okc && inrow && a == 8) {
            copy8(dst, src, true);
            copy8(dst + 2, src + 2, true);
        } else {
            CT3D_UNROLL
            for (int e = 0; e < C::RL; e++) {
                const bool ok = okc && dh && (unsigned)(iw + e) < (unsigned)p.in[2];
                copy4(dst + e, ok ? src + e : x, ok);
            }
        }
        src += (long long)C::RRS * p.xs[1];
    }
}

/* Bytes o .. o + 15 of the 32 in w[0..7] (o even): two word shifts by
 * selection, then a 16-bit funnel shift. */
CT3D_DEV void igemm_realign(const unsigned (&w)[8], int o, unsigned (&v)[4])
{
    unsigned u[8];
    CT3D_UNROLL
    for (int k = 0; k < 8; k++)
        u[k] = w[k];
    CT3D_UNROLL
    for (int k = 0; k < 6; k++)
        u[k] = (o & 8) ? u[k + 2] : u[k];
    CT3D_UNROLL
    for (int k = 0; k < 5; k++)
        u[k] = (o & 4) ? u[k + 1] : u[k];
    const int sh = (o & 2) * 8;
    CT3D_UNROLL
    for (int k = 0; k < 4; k++)
        v[k] = (unsigned)((((unsigned long long)u[k + 1] << 32) | u[k]) >> sh);
}

/* The fetched runs into As[BK][AP]: one 16-byte store a run and channel. */
template <int WM, int WN, int MATH>
CT3D_DEV void igemm_put_runs(const igemm_rstage<WM, WN, MATH> &st, float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, MATH, false, true>;
    const int row0 = tid / C::RPR, col = (tid - row0 * C::RPR) * C::RL;
    unsigned short *as = reinterpret_cast<unsigned short *>(buf);
    CT3D_UNROLL
    for (int j = 0; j < C::RJ; j++) {
        unsigned v[4];
        if (st.o[j] >= 0) {
            igemm_realign(st.w[j], st.o[j], v);
        } else {
            CT3D_UNROLL
            for (int k = 0; k < 4; k++)
                v[k] = (st.w[j][2 * k] & 0xffffu) | (st.w[j][2 * k + 1] << 16);
        }
        const uint4 r = {v[0], v[1], v[2], v[3]};
        *reinterpret_cast<uint4 *>(as + (row0 + j * C::RRS) * C::AP + col) = r;
    }
}

template <int WM, int WN, int MATH>
CT3D_DEV void igemm_copy_a(const igemm_params &p, const igemm_cursor<igemm_cfg<WM, WN>::MS> &c,
                           float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, MATH>;
    const float *x = static_cast<const float *>(p.x);
    const int row0 = tid / C::BM, col = tid - row0 * C::BM;
    CT3D_UNROLL
    for (int s = 0; s < C::MS; s++) {
        const float *src = x + c.aoff[s];
        CT3D_UNROLL
        for (int j = 0; j < C::BK / C::RS; j++) {
            const int kk = row0 + j * C::RS;
            const bool ok = c.ain[s] && c.ic0 + kk < p.cig;
            copy4(buf + kk * C::AP + col + s * C::NT, ok ? src : x, ok);
            src += (long long)C::RS * p.xs[1];
        }
    }
}

/* KC: the thread's 16-byte chunk of each of its positions (channels
 * ic0 + row0 .. + BE: C_in/G is a multiple of BE, so a chunk lies wholly
 * inside or outside the group's channels), by cp.async. */
template <int WM, int WN, int MATH>
CT3D_DEV void igemm_copy_a_kc(const igemm_params &p,
                              const igemm_cursor<igemm_cfg<WM, WN, MATH, true>::MSA> &c,
                              float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, MATH, true>;
    using E = typename std::conditional<C::ES == 2, unsigned short, float>::type;
    const E *x = static_cast<const E *>(p.x);
    const int chunk = tid % C::CPP;
    const bool ok_k = c.ic0 + chunk * C::BE < p.cig;
    CT3D_UNROLL
    for (int s = 0; s < C::MSA; s++) {
        const int m = tid / C::CPP + s * (C::NT / C::CPP);
        const bool ok = ok_k && c.ain[s];
        copy16(reinterpret_cast<float *>(reinterpret_cast<E *>(buf) + m * C::AKP + chunk * C::BE),
               reinterpret_cast<const float *>(ok ? x + c.aoff[s] : x), ok);
    }
}

template <int WM, int WN, int MATH, bool KC, int MSA>
CT3D_DEV void igemm_copy_b(const igemm_params &p, const igemm_cursor<MSA> &c, float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, MATH, KC>;
    /* in elements of ES bytes: the weights are packed in the staged type */
    using E = typename std::conditional<C::ES == 2, unsigned short, float>::type;
    E *bs = reinterpret_cast<E *>(buf) + C::ASZ;
    const long long wrow = igemm_wrow(p);
    const E *w = reinterpret_cast<const E *>(p.w), *wsrc = w + c.woff;
    CT3D_UNROLL
    for (int i = 0; i < (C::B4 + C::NT - 1) / C::NT; i++) {
        const int e = tid + i * C::NT;
        if (C::B4 % C::NT != 0 && e >= C::B4)
            break;
        const int kk = e / (C::BN / C::BE), cb = e - kk * (C::BN / C::BE);
        const bool ok = c.ic0 + kk < p.cig;
        copy16(reinterpret_cast<float *>(bs + kk * C::BP + C::BE * cb),
               reinterpret_cast<const float *>(ok ? wsrc + kk * wrow + C::BE * cb : w), ok);
    }
}

/* Where a thread's fragment sits (warp wm = warp % WM, wn = warp / WM; lane
 * lm = lane % 8, ln = lane / 8): its positions start at am (am + 32 too),
 * its channels at bn (bn + 16 too); the same in the FMAs and the tile spill. */
struct igemm_frag {
    int am, bn;
};

template <int WM>
CT3D_DEV igemm_frag igemm_frag_of(int tid)
{
    const int warp = tid >> 5, lane = tid & 31;
    return {(warp % WM) * 64 + (lane & 7) * 4, (warp / WM) * 32 + (lane >> 3) * 4};
}

/* v[0..3] = src[0..3], v[4..7] = src[gap..gap + 3]: two 16-byte loads. */
CT3D_DEV void load_pair4(float (&v)[8], const float *src, int gap)
{
    const float4 lo = *reinterpret_cast<const float4 *>(src);
    const float4 hi = *reinterpret_cast<const float4 *>(src + gap);
    v[0] = lo.x;
    v[1] = lo.y;
    v[2] = lo.z;
    v[3] = lo.w;
    v[4] = hi.x;
    v[5] = hi.y;
    v[6] = hi.z;
    v[7] = hi.w;
}

/* acc += the step in buf: the thread's fragment (igemm_frag) holds
 * positions am + h*32 + i and channels bn + h*16 + j, h = 0, 1 and i, j < 4. */
template <int WM, int WN>
CT3D_DEV void igemm_mma_step(float (&acc)[8][8], const float *buf, int am, int bn)
{
    using C = igemm_cfg<WM, WN>;
    const float *as = buf + am, *bs = buf + C::BK * C::BM + bn;
    CT3D_UNROLL
    for (int kk = 0; kk < C::BK; kk++) {
        float a[8], b[8];
        load_pair4(a, as + kk * C::BM, 32);
        load_pair4(b, bs + kk * C::BN, 16);
        CT3D_UNROLL
        for (int i = 0; i < 8; i++)
            CT3D_UNROLL
            for (int j = 0; j < 8; j++)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

/* The TF32 step: a warp's 64 x 32 tile is 4 x 4 MMA tiles of 16 x 8;
 * acc[mt][nt] holds MMA tile (mt, nt) in mma_tf32's C layout.  Fragments
 * come from shared memory as TF32 patterns: rounded (TF32), split into a
 * big and a small part, the small ones multiplied first so that their
 * products are not lost against the big one's (3XTF32), or taken as they
 * are (the TF32 weights, rounded at planning). */
template <int MATH, bool ROUNDED = false>
CT3D_DEV void tc_operand(float v, unsigned &big, unsigned &small)
{
    tf32_operand_parts<!ROUNDED && MATH == IGEMM_3XTF32, !ROUNDED>(v, big, small);
}

template <int WM, int WN, int MATH, bool KC>
CT3D_DEV void igemm_tc_step(float (&acc)[4][4][4], const float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, MATH, KC>;
    /* TF32: the packed weights were rounded at planning (tf32_weights) */
    constexpr bool BROUNDED = MATH == IGEMM_TF32;
    const int warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    /* A[m][k] of the warp's rows m: As[k][m], or As[m][k] (KC) */
    const float *as = KC ? buf + ((warp % WM) * 64 + gid) * C::AKP + tig
                         : buf + (warp % WM) * 64 + gid + tig * C::AP;
    constexpr int MSTEP = KC ? C::AKP : 1, KSTEP = KC ? 1 : C::AP;
    const float *bs = buf + C::ASZ + (warp / WM) * 32 + gid;
    CT3D_UNROLL
    for (int k8 = 0; k8 < C::BK; k8 += 8) {
        const float *ar = as + k8 * KSTEP, *br = bs + (k8 + tig) * C::BP;
        unsigned bb[4][2], bsm[4][2];
        CT3D_UNROLL
        for (int nt = 0; nt < 4; nt++) {
            tc_operand<MATH, BROUNDED>(br[nt * 8], bb[nt][0], bsm[nt][0]);
            tc_operand<MATH, BROUNDED>(br[4 * C::BP + nt * 8], bb[nt][1], bsm[nt][1]);
        }
        CT3D_UNROLL
        for (int mt = 0; mt < 4; mt++) {
            unsigned ab[4], asm_[4];
            const float *am = ar + mt * 16 * MSTEP;
            tc_operand<MATH>(am[0], ab[0], asm_[0]);
            tc_operand<MATH>(am[8 * MSTEP], ab[1], asm_[1]);
            tc_operand<MATH>(am[4 * KSTEP], ab[2], asm_[2]);
            tc_operand<MATH>(am[4 * KSTEP + 8 * MSTEP], ab[3], asm_[3]);
            CT3D_UNROLL
            for (int nt = 0; nt < 4; nt++)
                mma_tf32_parts<MATH == IGEMM_3XTF32>(acc[mt][nt], ab, asm_, bb[nt], bsm[nt], tid);
        }
    }
    mma_flush(tid);
}

/* The f16 / bf16 step: the same 4 x 4 MMA tiles of 16 x 8 and C layout,
 * k16 MMAs on 16-bit stages; per 16 channels a warp's fragments are four
 * ldmatrix of A (one an M tile) and two of B (two N tiles each). */
template <int WM, int WN, bool KC, class T>
CT3D_DEV void igemm_half_step(float (&acc)[4][4][4], const float *buf, int tid)
{
    using C = igemm_cfg<WM, WN, IGEMM_HALF, KC>;
    static_assert(C::BK % 16 == 0, "k16 MMAs");
    const int warp = tid >> 5, lane = tid & 31;
    const unsigned short *as = reinterpret_cast<const unsigned short *>(buf) +
                               (warp % WM) * 64 * (KC ? C::AKP : 1);
    const unsigned short *bs =
        reinterpret_cast<const unsigned short *>(buf) + C::ASZ + (warp / WM) * 32;
    CT3D_UNROLL
    for (int k16 = 0; k16 < C::BK; k16 += 16) {
        unsigned a[4][4], b[4][2];
        CT3D_UNROLL
        for (int mt = 0; mt < 4; mt++) {
            if constexpr (KC) /* stored [m][k]: A's fragment as it is */
                ldsm_x4<kLdsmB>(a[mt], as + mt * 16 * C::AKP + k16, C::AKP, lane);
            else
                ldsm_x4_trans<kLdsmA>(a[mt], as + k16 * C::AP + mt * 16, C::AP, lane);
        }
        CT3D_UNROLL
        for (int np = 0; np < 2; np++) {
            unsigned r[4];
            ldsm_x4_trans<kLdsmB>(r, bs + k16 * C::BP + np * 16, C::BP, lane);
            b[2 * np][0] = r[0];
            b[2 * np][1] = r[1];
            b[2 * np + 1][0] = r[2];
            b[2 * np + 1][1] = r[3];
        }
        CT3D_UNROLL
        for (int mt = 0; mt < 4; mt++)
            CT3D_UNROLL
            for (int nt = 0; nt < 4; nt++)
                mma_half<T>(acc[mt][nt], a[mt], b[nt], tid);
    }
    mma_flush(tid);
}

/* One K step into the accumulators: FMA or tensor cores (by their shape). */
template <int WM, int WN, int MATH, bool KC, class T>
CT3D_DEV void igemm_step(float (&acc)[8][8], const float *buf, int tid)
{
    const igemm_frag fr = igemm_frag_of<WM>(tid);
    igemm_mma_step<WM, WN>(acc, buf, fr.am, fr.bn);
}
template <int WM, int WN, int MATH, bool KC, class T>
CT3D_DEV void igemm_step(float (&acc)[4][4][4], const float *buf, int tid)
{
    if constexpr (MATH == IGEMM_HALF)
        igemm_half_step<WM, WN, KC, T>(acc, buf, tid);
    else
        igemm_tc_step<WM, WN, MATH, KC>(acc, buf, tid);
}

/* The accumulators of a thread: 8 x 8 for the FMA step, 4 x 4 MMA tiles of 4. */
template <int MATH>
struct igemm_acc {
    typedef float type[4][4][4];
};
template <>
struct igemm_acc<IGEMM_FFMA> {
    typedef float type[8][8];
};

template <class A>
CT3D_DEV void igemm_zero(A &acc)
{
    float *a = reinterpret_cast<float *>(&acc);
    CT3D_UNROLL
    for (int i = 0; i < (int)(sizeof acc / sizeof(float)); i++)
        a[i] = 0.0f;
}

/* The tile's K steps [s0, s1) through the pipeline (every thread of the
 * block calls it; it synchronises). */
template <int WM, int WN, int MATH, bool KC, class T, class A, bool RUNS = false>
CT3D_DEV void igemm_accumulate(const igemm_params &p, const igemm_tile &tl,
                               const igemm_pos (&pos)[igemm_cfg<WM, WN, MATH, KC, RUNS>::MSA],
                               float *smem, int tid, int s0, int s1, A &acc)
{
    using C = igemm_cfg<WM, WN, MATH, KC, RUNS>;
    /* the thread's first channel of a step */
    const int row0 = KC ? (tid % C::CPP) * C::BE : RUNS ? tid / C::RPR : tid / C::BM;
    const int n = s1 - s0;
    if (n <= 0)
        return; /* a phase without taps, or more cluster ranks than K steps */
    igemm_cursor<C::MSA> cur = igemm_cursor_at(p, tl, pos, row0, s0);
    constexpr bool staged = !KC && !RUNS && sizeof(T) != sizeof(float);
    constexpr bool hruns = RUNS && sizeof(T) != sizeof(float); /* runs through registers */
    /* the register stage of the widened half inputs, or of the half runs;
     * nothing where cp.async copies A (f32 x, or KC) */
    typename std::conditional<
        hruns, igemm_rstage<WM, WN, MATH>,
        typename std::conditional<staged, igemm_astage<WM, WN, MATH>, igemm_no_astage>::type>::type
        st;
    (void)st;
    CT3D_UNROLL
    for (int s = 0; s < C::STAGES - 1; s++) {
        if (s < n) {
            float *buf = smem + s * C::STAGE;
            if constexpr (KC) {
                igemm_copy_a_kc<WM, WN, MATH>(p, cur, buf, tid);
            } else if constexpr (hruns) {
                igemm_fetch_runs<WM, WN, MATH>(p, cur, pos[0], st, tid);
                igemm_put_runs<WM, WN, MATH>(st, buf, tid);
            } else if constexpr (RUNS) {
                igemm_copy_runs<WM, WN, MATH>(p, cur, pos[0], buf, tid);
            } else if constexpr (staged) {
                igemm_fetch_a<WM, WN, MATH, T>(p, cur, st, tid);
                igemm_put_a<WM, WN, MATH, T>(st, buf, tid);
            } else {
                igemm_copy_a<WM, WN, MATH>(p, cur, buf, tid);
            }
            igemm_copy_b<WM, WN, MATH, KC>(p, cur, buf, tid);
            igemm_cursor_next(p, tl, pos, row0, cur);
        }
        copy_commit();
    }
    for (int it = 0; it < n; it++) {
        copy_wait_groups<C::STAGES - 2>();
        CT3D_SYNC(); /* step it has landed for every thread; step it - 1's buffer is free */
        const int next = it + C::STAGES - 1;
        float *nbuf = smem + (next % C::STAGES) * C::STAGE;
        if (next < n) {
            if constexpr (KC)
                igemm_copy_a_kc<WM, WN, MATH>(p, cur, nbuf, tid);
            else if constexpr (hruns)
                igemm_fetch_runs<WM, WN, MATH>(p, cur, pos[0], st, tid);
            else if constexpr (RUNS)
                igemm_copy_runs<WM, WN, MATH>(p, cur, pos[0], nbuf, tid);
            else if constexpr (staged)
                igemm_fetch_a<WM, WN, MATH, T>(p, cur, st, tid);
            else
                igemm_copy_a<WM, WN, MATH>(p, cur, nbuf, tid);
            igemm_copy_b<WM, WN, MATH, KC>(p, cur, nbuf, tid);
            igemm_cursor_next(p, tl, pos, row0, cur);
        }
        copy_commit();
        igemm_step<WM, WN, MATH, KC, T>(acc, smem + (it % C::STAGES) * C::STAGE, tid);
        if constexpr (staged)
            if (next < n)
                igemm_put_a<WM, WN, MATH, T>(st, nbuf, tid); /* read after the next syncs */
        if constexpr (hruns)
            if (next < n)
                igemm_put_runs<WM, WN, MATH>(st, nbuf, tid);
    }
    copy_wait_groups<0>();
}

/* Writes the thread's accumulators into the block's output tile
 * cs[channel][position] (over the pipeline buffers: the caller has
 * synchronised). */
template <int WM, int WN>
CT3D_DEV void igemm_spill_tile(const float (&acc)[8][8], float *cs, int tid)
{
    using C = igemm_cfg<WM, WN>;
    const igemm_frag fr = igemm_frag_of<WM>(tid);
    CT3D_UNROLL
    for (int j = 0; j < 8; j++) {
        const int ch = fr.bn + (j >> 2) * 16 + (j & 3);
        CT3D_UNROLL
        for (int h = 0; h < 2; h++) {
            float4 v;
            v.x = acc[4 * h + 0][j];
            v.y = acc[4 * h + 1][j];
            v.z = acc[4 * h + 2][j];
            v.w = acc[4 * h + 3][j];
            *reinterpret_cast<float4 *>(cs + ch * C::CPITCH + fr.am + 32 * h) = v;
        }
    }
}

/* The same for the tensor-core accumulators (mma_tf32's C layout): lanes
 * of a group write channels 2t, 2t + 1 of 8 positions, which a pitch of
 * BM + 4 puts in distinct banks. */
template <int WM, int WN>
CT3D_DEV void igemm_spill_tile(const float (&acc)[4][4][4], float *cs, int tid)
{
    using C = igemm_cfg<WM, WN>;
    const int warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int m0 = (warp % WM) * 64 + gid, n0 = (warp / WM) * 32 + 2 * tig;
    CT3D_UNROLL
    for (int mt = 0; mt < 4; mt++)
        CT3D_UNROLL
        for (int nt = 0; nt < 4; nt++)
            CT3D_UNROLL
            for (int c = 0; c < 4; c++)
                cs[(n0 + nt * 8 + (c & 1)) * C::CPITCH + m0 + mt * 16 + (c >> 1) * 8] =
                    acc[mt][nt][c];
}

/* The block's part of the output: rows (channels) j*RS + tid/BM for j = rank,
 * rank + cs, ..; each element the cluster's partial tiles summed in rank
 * order, plus bias.  A warp's stores cover consecutive positions. */
template <int WM, int WN, class T>
CT3D_DEV void igemm_store(const igemm_params &p, const igemm_tile &tl,
                          const igemm_pos (&pos)[igemm_cfg<WM, WN>::MS], float *cs, int tid,
                          int rank)
{
    using C = igemm_cfg<WM, WN>;
    const int row0 = tid / C::BM, col = tid - row0 * C::BM;
    for (int j = rank; j < C::BN / C::RS; j += p.cs) {
        const int ch = row0 + j * C::RS;
        const int oc = tl.ob * C::BN + ch;
        if (oc >= p.cog)
            break;
        const float bv =
            p.bias ? load_elem(static_cast<const T *>(p.bias) + (long long)tl.g * p.cog + oc)
                   : 0.0f;
        CT3D_UNROLL
        for (int s = 0; s < C::MS; s++) {
            if (!pos[s].valid)
                continue;
            const int at = ch * C::CPITCH + col + s * C::NT;
            float v = cs[at];
            if (p.cs > 1) {
                v = CT3D_CLUSTER_SMEM(cs, 0)[at];
                for (int q = 1; q < p.cs; q++)
                    v += CT3D_CLUSTER_SMEM(cs, q)[at];
            }
            store_elem(static_cast<T *>(p.y) + pos[s].yoff + (long long)oc * p.ys[1], v + bv);
        }
    }
}

template <int WM, int WN, int MATH = IGEMM_FFMA, class T = float, bool KC = false,
          bool RUNS = false>
CT3D_DEV void igemm_block(const igemm_params &p, float *smem, int tid, long long vb)
{
    using C = igemm_cfg<WM, WN, MATH>;
    const long long t = vb / p.cs;
    const int rank = (int)(vb - t * p.cs);
    const igemm_tile tl = igemm_tile_of(p, t, C::BM);
    typename igemm_acc<MATH>::type acc;
    igemm_zero(acc);
    /* the positions a thread stores (and, but for KC, copies) */
    igemm_pos pos[C::MS];
    const int col = tid % C::BM;
    if constexpr (!KC && !RUNS)
        CT3D_UNROLL
        for (int s = 0; s < C::MS; s++)
            pos[s] = igemm_pos_of(p, tl, tl.m0 + col + s * C::NT);
    if (!tl.empty) {
        const int steps = tl.taps[0] * tl.taps[1] * tl.taps[2] * p.kchunks;
        const int s0 = (int)((long long)steps * rank / p.cs);
        const int s1 = (int)((long long)steps * (rank + 1) / p.cs);
        if constexpr (KC) {
            using K = igemm_cfg<WM, WN, MATH, true>;
            igemm_pos apos[K::MSA];
            CT3D_UNROLL
            for (int s = 0; s < K::MSA; s++)
                apos[s] = igemm_pos_of(p, tl, tl.m0 + tid / K::CPP + s * (K::NT / K::CPP));
            igemm_accumulate<WM, WN, MATH, true, T>(p, tl, apos, smem, tid, s0, s1, acc);
        } else if constexpr (RUNS) {
            using R = igemm_cfg<WM, WN, MATH, false, true>;
            igemm_pos rpos[1] = {igemm_pos_of(p, tl, tl.m0 + (tid % R::RPR) * R::RL)};
            igemm_accumulate<WM, WN, MATH, false, T, decltype(acc), true>(p, tl, rpos, smem, tid,
                                                                          s0, s1, acc);
        } else {
            igemm_accumulate<WM, WN, MATH, false, T>(p, tl, pos, smem, tid, s0, s1, acc);
        }
    }
    if constexpr (KC || RUNS) /* worked out now: they need no registers during the K loop */
        CT3D_UNROLL
        for (int s = 0; s < C::MS; s++)
            pos[s] = igemm_pos_of(p, tl, tl.m0 + col + s * C::NT);
    CT3D_SYNC(); /* every thread is done with the pipeline buffers */
    igemm_spill_tile<WM, WN>(acc, smem, tid);
    if (p.cs > 1)
        CT3D_CLUSTER_SYNC(); /* every partial tile of the cluster is in place */
    else
        CT3D_SYNC();
    if (!tl.empty)
        igemm_store<WM, WN, T>(p, tl, pos, smem, tid, rank);
    if (p.cs > 1)
        CT3D_CLUSTER_SYNC(); /* no block leaves while another reads its tile */
}

} // namespace ct3d

#endif
