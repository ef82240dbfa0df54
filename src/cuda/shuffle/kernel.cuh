/* The tensor-core shuffle kernel's per-block body (params.h says what it
 * computes).  Only the body lives here so that it compiles for the host too
 * and the emulator (CONVT3D_GPU_EMULATE) checks it there, MMA fragments
 * included.
 *
 * Shared memory: kShfStages stages of [kShfBK][kShfPitch] inputs (A, input
 * positions contiguous, as x holds them in NCDHW; in NDHWC [kShfBM][k],
 * channels contiguous, shf_stage_a_cl) then [kShfBK][kShfPitch]
 * weights (B, the packed (tap, oc) columns contiguous, as the packing holds
 * them); after the K loop the same bytes hold the output tile as
 * [kShfBN][kShfCPitch] floats; behind them the output offsets of the tile's
 * positions and the bias of its output channels.  Both operands are copied
 * as they lie in global memory (16-byte cp.async where x allows it), so a K
 * step costs a handful of copies a thread and no index arithmetic. */
#ifndef CONVT3D_CUDA_SHUFFLE_KERNEL_CUH
#define CONVT3D_CUDA_SHUFFLE_KERNEL_CUH

#include "../common/device.cuh"
#include "params.h"

namespace ct3d {

/* The tile a block computes: image, group, output-channel block, first
 * input position. */
struct shf_tile {
    long long n, m0;
    int g, ob;
};

CT3D_DEV shf_tile shf_tile_of(const shf_params &p, long long b)
{
    shf_tile t;
    t.ob = (int)(b % p.nocb);
    b /= p.nocb;
    t.m0 = (b % p.ntm) * kShfBM;
    b /= p.ntm;
    t.g = (int)(b % p.groups);
    t.n = b / p.groups;
    return t;
}

/* Copies K step ks of the tile's inputs into as ([k][m], zeros past C_in/G
 * and past the image's positions).  VEC: 16-byte copies (x 16-byte aligned
 * and the positions of an image a multiple of the elements a copy holds,
 * so a copy is all inside or all outside); else element by element (f32
 * by 4-byte cp.async, 16-bit data through registers). */
template <class T, bool VEC>
CT3D_DEV void shf_stage_a(const shf_params &p, const shf_tile &t, T *as, int ks, int tid)
{
    const T *x = reinterpret_cast<const T *>(p.x) + t.n * p.xs[0] +
                 (long long)t.g * p.cig * p.xs[1];
    const int ic0 = ks * kShfBK;
    if constexpr (VEC) {
        constexpr int per = 16 / sizeof(T);       /* elements a copy */
        constexpr int row_copies = kShfBM / per;
        for (int e = tid; e < kShfBK * row_copies; e += kShfThreads) {
            const int k = e / row_copies, c = e - k * row_copies;
            const long long m = t.m0 + c * per;
            const bool valid = ic0 + k < p.cig && m < p.npos;
            const T *src = valid ? x + (long long)(ic0 + k) * p.xs[1] + m : x;
            copy16(reinterpret_cast<float *>(as + k * kShfPitch + c * per),
                   reinterpret_cast<const float *>(src), valid);
        }
    } else {
        for (int e = tid; e < kShfBK * kShfBM; e += kShfThreads) {
            const int k = e / kShfBM, c = e - k * kShfBM;
            const long long m = t.m0 + c;
            const bool valid = ic0 + k < p.cig && m < p.npos;
            const T *src = valid ? x + (long long)(ic0 + k) * p.xs[1] + m : x;
            if constexpr (sizeof(T) == sizeof(float))
                copy4(reinterpret_cast<float *>(as + k * kShfPitch + c),
                      reinterpret_cast<const float *>(src), valid);
            else
                reinterpret_cast<unsigned short *>(as)[k * kShfPitch + c] =
                    valid ? load_bits(src) : (unsigned short)0;
        }
    }
}

/* The channels-last A stage (p.cl): K step ks of the tile's inputs into
 * as ([m][k], rows shf_cl_pitch elements apart), a position's channels as
 * x holds them in NDHWC; zeros past C_in/G and the image's positions.
 * VEC: 16-byte copies (x aligned, C_in/G a multiple of the elements a copy
 * holds); else element by element. */
template <class T, bool VEC>
CT3D_DEV void shf_stage_a_cl(const shf_params &p, const shf_tile &t, T *as, int ks, int tid)
{
    constexpr int per = 16 / sizeof(T), row_copies = kShfBK / per;
    constexpr int pitch = shf_cl_pitch(sizeof(T));
    const T *x = reinterpret_cast<const T *>(p.x) + t.n * p.xs[0] +
                 (long long)t.g * p.cig * p.xs[1];
    const int ic0 = ks * kShfBK;
    for (int e = tid; e < kShfBM * row_copies; e += kShfThreads) {
        const int i = e / row_copies, c = e - i * row_copies;
        const long long m = t.m0 + i;
        const int k = ic0 + c * per;
        const int n = m < p.npos ? imin(p.cig - k, per) : 0;
        const T *src = n > 0 ? x + m * p.xm + (long long)k * p.xs[1] : x;
        float *dst = reinterpret_cast<float *>(as + i * pitch + c * per);
        if constexpr (VEC)
            copy16(dst, reinterpret_cast<const float *>(src), n > 0);
        else
            copy_elems16<T>(dst, src, n, p.xs[1]);
    }
}

/* Copies K step ks of the block's weights into bs ([k][column]): a row is
 * the ncols packed (tap, oc) weights of one input channel, contiguous and
 * 16-byte aligned (ocb a multiple of 8); zeros past ncols and C_in/G. */
template <class T>
CT3D_DEV void shf_stage_b(const shf_params &p, const shf_tile &t, T *bs, int ks, int tid)
{
    constexpr int per = 16 / sizeof(T);
    constexpr int row_copies = kShfBN / per;
    const int ic0 = ks * kShfBK;
    const long long row = (long long)p.taps * p.ocb;
    const T *w = reinterpret_cast<const T *>(p.w) +
                 (long long)(t.g * p.nocb + t.ob) * p.cig * row;
    for (int e = tid; e < kShfBK * row_copies; e += kShfThreads) {
        const int k = e / row_copies, c = e - k * row_copies;
        const bool valid = ic0 + k < p.cig && c * per < p.ncols;
        const T *src = valid ? w + (long long)(ic0 + k) * row + c * per : w;
        copy16(reinterpret_cast<float *>(bs + k * kShfPitch + c * per),
               reinterpret_cast<const float *>(src), valid);
    }
}

template <class T, bool VEC, bool CL>
CT3D_DEV void shf_stage(const shf_params &p, const shf_tile &t, float *stage, int ks, int tid)
{
    T *as = reinterpret_cast<T *>(stage);
    if constexpr (CL)
        shf_stage_a_cl<T, VEC>(p, t, as, ks, tid);
    else
        shf_stage_a<T, VEC>(p, t, as, ks, tid);
    shf_stage_b<T>(p, t, as + shf_a_elems(sizeof(T)), ks, tid);
}

/* One K step of f32 data: kShfBK / 8 k8 MMA rounds of the warp's 64 x 32
 * tile (wm, wn: the warp's place in the 2 x 4 grid). */
template <int MATH, bool CL>
CT3D_DEV void shf_compute(const float *stage, float (&acc)[4][4][4], int wm, int wn, bool active,
                          int lane, int tid)
{
    constexpr bool kSplit = MATH == SHF_3XTF32, kRound = MATH == SHF_TF32;
    /* A's steps: along m (rows g, g + 8 of a tile) and along k (t, t + 4) */
    constexpr int kMs = CL ? shf_cl_pitch(4) : 1, kKs = CL ? 1 : kShfPitch;
    const int g = lane >> 2, t = lane & 3;
    const float *as = stage + (wm * 64 + g) * kMs;
    const float *bs = stage + shf_a_elems(4) + wn * 32 + g;
    CT3D_UNROLL
    for (int kk = 0; kk < kShfBK; kk += 8) {
        if (!active) { /* the warp's columns hold no weights */
            mma_flush(tid);
            continue;
        }
        unsigned bbig[4][2], bsmall[4][2];
        const float *b0 = bs + (kk + t) * kShfPitch;
        CT3D_UNROLL
        for (int nt = 0; nt < 4; nt++) {
            tf32_operand_parts<kSplit, false>(b0[nt * 8], bbig[nt][0], bsmall[nt][0]);
            tf32_operand_parts<kSplit, false>(b0[4 * kShfPitch + nt * 8], bbig[nt][1],
                                              bsmall[nt][1]);
        }
        const float *a0 = as + (kk + t) * kKs;
        CT3D_UNROLL
        for (int mt = 0; mt < 4; mt++) {
            const float *ap = a0 + mt * 16 * kMs;
            unsigned abig[4], asmall[4];
            tf32_operand_parts<kSplit, kRound>(ap[0], abig[0], asmall[0]);
            tf32_operand_parts<kSplit, kRound>(ap[8 * kMs], abig[1], asmall[1]);
            tf32_operand_parts<kSplit, kRound>(ap[4 * kKs], abig[2], asmall[2]);
            tf32_operand_parts<kSplit, kRound>(ap[4 * kKs + 8 * kMs], abig[3], asmall[3]);
            CT3D_UNROLL
            for (int nt = 0; nt < 4; nt++)
                mma_tf32_parts<kSplit>(acc[mt][nt], abig, asmall, bbig[nt], bsmall[nt], tid);
        }
        mma_flush(tid);
    }
}

/* One K step of 16-bit data: kShfBK / 16 k16 rounds; A's fragments from
 * the [k][m] stage by ldmatrix .trans (the [m][k] one of CL untransposed),
 * B's from the [k][n] one by ldmatrix .trans. */
template <class T, bool CL>
CT3D_DEV void shf_compute_half(const float *stage, float (&acc)[4][4][4], int wm, int wn,
                               bool active, int lane, int tid)
{
    constexpr int kClPitch = shf_cl_pitch(2);
    const unsigned short *as =
        reinterpret_cast<const unsigned short *>(stage) + wm * 64 * (CL ? kClPitch : 1);
    const unsigned short *bs =
        reinterpret_cast<const unsigned short *>(stage) + shf_a_elems(2) + wn * 32;
    CT3D_UNROLL
    for (int kk = 0; kk < kShfBK; kk += 16) {
        if (!active) { /* the warp's columns hold no weights */
            mma_flush(tid);
            continue;
        }
        unsigned b[4][2];
        CT3D_UNROLL
        for (int np = 0; np < 2; np++) {
            unsigned m[4];
            ldsm_x4_trans<kLdsmB>(m, bs + kk * kShfPitch + 16 * np, kShfPitch, lane);
            b[2 * np][0] = m[0];
            b[2 * np][1] = m[1];
            b[2 * np + 1][0] = m[2];
            b[2 * np + 1][1] = m[3];
        }
        CT3D_UNROLL
        for (int mt = 0; mt < 4; mt++) {
            unsigned a[4];
            if constexpr (CL)
                ldsm_x4<kLdsmB>(a, as + mt * 16 * kClPitch + kk, kClPitch, lane);
            else
                ldsm_x4_trans<kLdsmA>(a, as + kk * kShfPitch + mt * 16, kShfPitch, lane);
            CT3D_UNROLL
            for (int nt = 0; nt < 4; nt++)
                mma_half<T>(acc[mt][nt], a, b[nt], tid);
        }
        mma_flush(tid);
    }
}

/* The output offset (within an image and channel) of the first tap's output
 * of each position of the tile, -1 past the image's positions; and the bias
 * of the block's output channels (0 without bias or past C_out/G).  Read
 * before the K loop, so that their latency passes under it and the stores
 * at the end wait on nothing in global memory. */
template <class T>
CT3D_DEV void shf_tile_tables(const shf_params &p, const shf_tile &t, long long *obase,
                              float *bias, int tid)
{
    for (int i = tid; i < kShfBM; i += kShfThreads) {
        const long long m = t.m0 + i;
        long long o = -1;
        if (m < p.npos) {
            /* 64-bit: D x H alone may pass 2^31 (once a block, 128 threads) */
            const long long r = m / p.in[2], w = m - r * p.in[2];
            const long long d = r / p.in[1], h = r - d * p.in[1];
            o = d * p.k[0] * p.ys[2] + h * p.k[1] * p.ys[3] + w * p.k[2] * p.yw;
        }
        obase[i] = o;
    }
    for (int oc = tid; oc < p.ocb; oc += kShfThreads) {
        const int ocg = t.ob * p.ocb + oc;
        bias[oc] = p.bias && ocg < p.cog ? load_elem(reinterpret_cast<const T *>(p.bias) +
                                                    t.g * p.cog + ocg)
                                         : 0.0f;
    }
}

/* NDHWC y (p.cl): each column's offset from its position's first output,
 * a ys[2] + b ys[3] + c yw + its output channel (tap (a, b, c)), and its
 * channel in the block (-1 past C_out/G), for the stores' loop. */
CT3D_DEV void shf_column_table(const shf_params &p, const shf_tile &t, long long *coloff,
                               int *colch, int tid)
{
    for (int col = tid; col < p.ncols; col += kShfThreads) {
        const int tap = col / p.ocb, oc = col - tap * p.ocb;
        const int ab = tap / p.k[2], c = tap - ab * p.k[2];
        const int a = ab / p.k[1], b = ab - a * p.k[1];
        const int ocg = t.ob * p.ocb + oc;
        coloff[col] = a * p.ys[2] + b * p.ys[3] + c * p.yw + (long long)ocg * p.ys[1];
        colch[col] = ocg < p.cog ? oc : -1;
    }
}

/* Two consecutive outputs in one store (dst aligned to two elements): the
 * k_w = 2 taps of the up-convolution fill a 32-bit word (16-bit data) or a
 * float2, so a warp's store covers its row segment in one instruction. */
CT3D_DEV void shf_store_pair(float *dst, float a, float b)
{
    float2 v;
    v.x = a;
    v.y = b;
    *reinterpret_cast<float2 *>(dst) = v;
}
template <class T>
CT3D_DEV void shf_store_pair(T *dst, float a, float b)
{
    T lo, hi;
    store_elem(&lo, a);
    store_elem(&hi, b);
    *reinterpret_cast<unsigned *>(dst) = (unsigned)lo.bits | (unsigned)hi.bits << 16;
}

/* The k_w outputs of one output row from the tile's columns (stride floats
 * apart), plus the bias: in pairs where k_w is even and dst allows. */
template <class T>
CT3D_DEV void shf_store_run(T *dst, const float *src, int stride, int kw, float bv)
{
    if (kw % 2 == 0 && ((unsigned long long)(size_t)dst & (2 * sizeof(T) - 1)) == 0) {
        for (int c = 0; c < kw; c += 2)
            shf_store_pair(dst + c, src[c * stride] + bv, src[(c + 1) * stride] + bv);
        return;
    }
    for (int c = 0; c < kw; c++)
        store_elem(dst + c, src[c * stride] + bv);
}

/* The warp's accumulators into the shared output tile ct: [column][position]
 * (NCDHW stores) or, POS_MAJOR, [position][column] (NDHWC ones). */
template <bool POS_MAJOR>
CT3D_DEV void shf_spill_tile(float *ct, const float (&acc)[4][4][4], int wm, int wn, int lane)
{
    const int g = lane >> 2, q = lane & 3;
    CT3D_UNROLL
    for (int mt = 0; mt < 4; mt++)
        CT3D_UNROLL
        for (int nt = 0; nt < 4; nt++)
            CT3D_UNROLL
            for (int e = 0; e < 4; e++) {
                const int col = wn * 32 + nt * 8 + 2 * q + (e & 1);
                const int m = wm * 64 + mt * 16 + g + 8 * (e >> 1);
                ct[POS_MAJOR ? m * kShfCPitch + col : col * kShfCPitch + m] = acc[mt][nt][e];
            }
}

/* Stores the block's tile: the accumulators go to shared memory as
 * [column][position]; then a thread keeps one position i of the tile and
 * walks half the (oc, a, b) output rows, writing at each its k_w outputs
 * (taps c = 0 .. k_w - 1, consecutive in y): a warp covers 32 k_w
 * consecutive outputs of a row.  No division and no global load in the
 * loop: its stores stream. */
template <class T>
CT3D_DEV void shf_store(const shf_params &p, const shf_tile &t, float *ct, const long long *obase,
                        const float *bias, const float (&acc)[4][4][4], int wm, int wn, int lane,
                        int tid)
{
    shf_spill_tile<false>(ct, acc, wm, wn, lane);
    CT3D_SYNC();
    const int i = tid % kShfBM;
    constexpr int kHalves = kShfThreads / kShfBM; /* threads a position */
    const long long o = obase[i];
    if (o < 0)
        return;
    const int kd = p.k[0], kh = p.k[1], kw = p.k[2];
    const int tap_cols = p.ocb * kShfCPitch; /* from one tap's column to the next's */
    for (int oc = tid / kShfBM; oc < p.ocb; oc += kHalves) {
        const int ocg = t.ob * p.ocb + oc;
        if (ocg >= p.cog)
            break;
        const float bv = bias[oc];
        T *yc = reinterpret_cast<T *>(p.y) + t.n * p.ys[0] +
                (long long)(t.g * p.cog + ocg) * p.ys[1] + o;
        const float *src = ct + oc * kShfCPitch + i;
        for (int a = 0; a < kd; a++)
            for (int b = 0; b < kh; b++) {
                shf_store_run(yc + a * p.ys[2] + b * p.ys[3], src, tap_cols, kw, bv);
                src += kw * tap_cols;
            }
    }
}

/* Stores the block's tile into NDHWC y: the accumulators go to shared
 * memory as [position][column]; then consecutive threads take consecutive
 * columns of a position, so that a warp writes runs of a tap's output
 * channels, which lie together in y. */
template <class T>
CT3D_DEV void shf_store_cl(const shf_params &p, const shf_tile &t, float *ct,
                           const long long *obase, const float *bias, const long long *coloff,
                           const int *colch, const float (&acc)[4][4][4], int wm, int wn,
                           int lane, int tid)
{
    shf_spill_tile<true>(ct, acc, wm, wn, lane);
    CT3D_SYNC();
    T *y = reinterpret_cast<T *>(p.y) + t.n * p.ys[0] + (long long)t.g * p.cog * p.ys[1];
    const int cols = p.ncols; /* <= kShfBN <= kShfThreads */
    const int step_i = kShfThreads / cols, step_c = kShfThreads - step_i * cols;
    int i = tid / cols, col = tid - i * cols;
    while (i < kShfBM) {
        const long long o = obase[i];
        const int oc = colch[col];
        if (o >= 0 && oc >= 0)
            store_elem(y + o + coloff[col], ct[i * kShfCPitch + col] + bias[oc]);
        i += step_i;
        col += step_c;
        if (col >= cols) {
            col -= cols;
            i++;
        }
    }
}

/* Block b of the grid (params.h for the order), x and y NCDHW or (CL)
 * NDHWC. */
template <int MATH, class T, bool VEC, bool CL>
CT3D_DEV void shf_block_as(const shf_params &p, float *smem, int tid, long long b)
{
    const shf_tile t = shf_tile_of(p, b);
    const int warp = tid >> 5, lane = tid & 31, wm = warp >> 2, wn = warp & 3;
    const bool active = wn * 32 < p.ncols; /* warp-uniform */
    constexpr int sf = shf_stage_floats(sizeof(T));
    long long *obase = reinterpret_cast<long long *>(smem + shf_region_floats(sizeof(T)));
    float *bias = smem + shf_region_floats(sizeof(T)) + 2 * kShfBM;
    long long *coloff = reinterpret_cast<long long *>(bias + kShfBN);
    int *colch = reinterpret_cast<int *>(coloff + kShfBN);
    shf_tile_tables<T>(p, t, obase, bias, tid);
    if constexpr (CL)
        shf_column_table(p, t, coloff, colch, tid);
    float acc[4][4][4];
    for (int mt = 0; mt < 4; mt++)
        for (int nt = 0; nt < 4; nt++)
            for (int e = 0; e < 4; e++)
                acc[mt][nt][e] = 0.0f;
    /* the pipeline: steps ks + 1 and ks + 2 in flight while ks is computed
     * (one commit group a step, empty ones past the end keep the count) */
    for (int s = 0; s < kShfStages - 1; s++) {
        if (s < p.nk)
            shf_stage<T, VEC, CL>(p, t, smem + s * sf, s, tid);
        copy_commit();
    }
    for (int ks = 0; ks < p.nk; ks++) {
        copy_wait_groups<kShfStages - 2>();
        CT3D_SYNC(); /* step ks is in; step ks - 1's stage is free */
        const int next = ks + kShfStages - 1;
        if (next < p.nk)
            shf_stage<T, VEC, CL>(p, t, smem + (next % kShfStages) * sf, next, tid);
        copy_commit();
        const float *cur = smem + (ks % kShfStages) * sf;
        if constexpr (MATH == SHF_HALF)
            shf_compute_half<T, CL>(cur, acc, wm, wn, active, lane, tid);
        else
            shf_compute<MATH, CL>(cur, acc, wm, wn, active, lane, tid);
    }
    copy_wait_groups<0>();
    CT3D_SYNC(); /* every warp is done with the stages: the tile reuses them */
    if constexpr (CL)
        shf_store_cl<T>(p, t, smem, obase, bias, coloff, colch, acc, wm, wn, lane, tid);
    else
        shf_store<T>(p, t, smem, obase, bias, acc, wm, wn, lane, tid);
}

template <int MATH, class T, bool VEC>
CT3D_DEV void shf_block(const shf_params &p, float *smem, int tid, long long b)
{
    if (p.cl)
        shf_block_as<MATH, T, VEC, true>(p, smem, tid, b);
    else
        shf_block_as<MATH, T, VEC, false>(p, smem, tid, b);
}

} // namespace ct3d

#endif
