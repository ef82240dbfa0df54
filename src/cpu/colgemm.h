/* The column-GEMM kernel for NCDHW (cpu/registry.c has its rule), written
 * once over the vector vocabulary of cpu/phase_tile.h and included by each
 * instruction-set file after cpu/pointwise.h, whose tile shapes (PW_SHAPES,
 * PW_MAXV, PW_MAXM: the same register budget) and lane masks it uses.
 *
 * Why: with many input channels and few output channels a group, the W-lane
 * tile has few output channels to share each x vector it loads (one load an
 * FMA at C_out/G = 1), and its taps read the same x row shifted, once per
 * tap.  Turned around, every (output channel, kh, kw) of a group multiplies
 * the same input position: for one output plane od, the kd taps that reach
 * it and an input row ih,
 *
 *   z[m][ih][iw] = sum over (kd tap, ic) of w[ic][o][kd][kh][kw] * x[ic][id][ih][iw],
 *   m = (o * kH + kh) * kW + kw,
 *
 * is a GEMM of M = C_out/G * kH * kW rows over the input positions (a plane's
 * rows are contiguous in NCDHW, so a run of rows is one stream of positions),
 * reduced over K = kd taps * C_in/G, in which each x vector serves M_r rows
 * of the register tile and nothing is spent on taps that reach no output.
 * Each output row then sums its (kh, kw) terms of z, phase by phase along W:
 *
 *   y[o][oh][ow] = bias[o] + sum over the (kh, kw) reaching (oh, ow) of z[m][ih][iw].
 *
 * The z rows live in a per-thread buffer of a block of input rows (the
 * cache budget's share), so this is not a col2im workspace: each output
 * plane's block is computed and consumed by one thread.  Every z element
 * is summed over (kd tap, ic) in order by one FMA chain, and every output
 * over its (kh, kw) terms in tap order, whatever the tiling, the blocking
 * or the thread count: the output is the same bit for bit on any of them.
 * The sums run in a different order from the gather kernels' (within the
 * fp32 tolerance, not bitwise equal to them).
 *
 * The driver (cpu_omp.c) hands blocks of whole output rows of one plane
 * (cpu_kernel.block); weights are packed [g][kd][ic][m] (cpu/weights.c,
 * cpu_pack_weights_cio_to_cols), so a K step's M weights are one run. */
#ifndef CONVT3D_CPU_COLGEMM_H
#define CONVT3D_CPU_COLGEMM_H

#include "interleave.h"
#include "kernels.h"

/* One register tile of z: M_r rows x V vectors of positions. */
typedef struct colg_args {
    const float *x;       /* x at the group's channel 0, at the tile's first position of
                             plane 0 (each kd tap adds its plane's offset) */
    const int64_t *xoff;  /* per kd tap: its input plane's offset */
    const int64_t *woff;  /* per kd tap: its weights' offset from w */
    int64_t nkd, cig, x_step, mp;
    const float *w;       /* packed weights at the tile's first row */
    float *z;             /* z at the tile's first row and position */
    int64_t z_step;       /* floats between rows of z */
    int n;                /* positions that are real (<= V * VL) */
    int prefetch;         /* prefetch the next tile's positions (the first tile of a run) */
} colg_args;

typedef void (*colg_fn)(const colg_args *a);

#define COLG_LOOP(LOAD)                                                                        \
    for (int64_t ic = 0; ic < cig; ic++, xp += a->x_step, wp += a->mp) {                       \
        vf xv[PW_MAXV];                                                                        \
        CPU_UNROLL for (int v = 0; v < V; v++) xv[v] = LOAD;                                   \
        if (a->prefetch) {                                                                     \
            CPU_UNROLL for (int v = 0; v < V; v++) __builtin_prefetch(xp + (V + v) * VL);      \
        }                                                                                      \
        CPU_UNROLL for (int m = 0; m < M; m++)                                                 \
        {                                                                                      \
            const vf wb = v_bcast(wp + m);                                                     \
            CPU_UNROLL for (int v = 0; v < V; v++) acc[m][v] = v_fma(xv[v], wb, acc[m][v]);    \
        }                                                                                      \
    }

CPU_INLINE void colg_body(const colg_args *a, const int V, const int M)
{
    vf acc[PW_MAXM][PW_MAXV];
    vmask mk[PW_MAXV];
    PW_MASKS(V, a->n, mk);
    CPU_UNROLL for (int m = 0; m < M; m++)
        CPU_UNROLL for (int v = 0; v < V; v++) acc[m][v] = v_zero();
    const int64_t cig = a->cig;
    for (int64_t t = 0; t < a->nkd; t++) {
        const float *xp = a->x + a->xoff[t], *wp = a->w + a->woff[t];
        if (a->n == V * VL) {
            COLG_LOOP(v_loadu(xp + v * VL))
        } else {
            COLG_LOOP(v_loadu_mask(xp + v * VL, mk[v]))
        }
    }
    CPU_UNROLL for (int m = 0; m < M; m++)
        CPU_UNROLL for (int v = 0; v < V; v++)
            v_storeu_mask(a->z + m * a->z_step + v * VL, acc[m][v], mk[v]);
}

/* Every tile height up to the register budget for each V (COLG_TILES(X):
 * X(rows, V), the NCDHW tile list of the instruction set unless the file
 * names its own), so M splits into even tiles: M = 27 at 6 rows a tile is
 * 6 6 5 5 5, not 6 6 6 6 2 1, whose thin tiles load an x vector for every
 * one or two FMAs (measured: 14% of random_166's time in 3 of its 27 rows). */
#ifndef COLG_TILES
#define COLG_TILES NCDHW_TILES
#endif
#define COLG_DEFINE(R, V)                                                                      \
    static void colg_##R##x##V(const colg_args *a) { colg_body(a, V, R); }
COLG_TILES(COLG_DEFINE)
#define COLG_REF(R, V) [V - 1][R - 1] = colg_##R##x##V,
static const colg_fn colg_tiles[PW_MAXV][PW_MAXM] = {COLG_TILES(COLG_REF)};

/* Rows of z for the input rows [ih0, ih1) of plane block (xoff, woff): the
 * positions as one run in even spans of whole vectors (pw_spans_of), M in
 * even row tiles of each. */
static void colg_gemm(const cpu_plan *pl, const cpu_row_job *job, colg_args *a, int64_t ih0,
                      int64_t ih1, float *z)
{
    const convt3d_shape *s = &pl->s;
    const int64_t npos = (ih1 - ih0) * s->in[2], M = pl->colg_m;
    const float *x0 = job->x + ih0 * s->x_stride[3];
    const pw_spans sp = pw_spans_of(npos);
    for (int64_t k = 0; k < sp.tiles; k++) {
        int V;
        const int64_t q = pw_span(sp, k, &V, &a->n);
        const int R = pw_rows[V - 1];
        const int64_t tiles = (M + R - 1) / R;
        a->x = x0 + q;
        for (int64_t i = 0; i < tiles; i++) {
            const int64_t m = pw_split_first(M, tiles, i);
            const int64_t rows = pw_split_first(M, tiles, i + 1) - m;
            a->w = job->w + m;
            a->z = z + m * pl->colg_zrow + q;
            a->prefetch = i == 0;
            colg_tiles[V - 1][rows - 1](a);
        }
    }
}

/* dst[j] += src[j] for j < n (an FMA by one: exactly the sum). */
static void colg_add(float *dst, const float *src, int64_t n)
{
    const vf one = v_set1(1.0f);
    const vmask all = v_mask_range(0, VL);
    int64_t j = 0;
    for (; j + VL <= n; j += VL)
        v_storeu_mask(dst + j, v_fma(v_loadu(src + j), one, v_loadu(dst + j)), all);
    if (j < n) {
        const vmask m = v_mask_range(0, (int)(n - j));
        v_storeu_mask(dst + j, v_fma(v_loadu_mask(src + j, m), one, v_loadu_mask(dst + j, m)), m);
    }
}

/* Phase rows pb[c * pstride + j] of one output row into y (outw long). */
static void colg_store_phases(float *y, const float *pb, int64_t pstride, int64_t sw,
                              int64_t outw)
{
    if (sw == 2 && outw >= 2) {
        ncdhw_interleave2(y, pb, pb + pstride, cpu_phase_len(outw, 2, 0),
                          cpu_phase_len(outw, 2, 1), 0);
        return;
    }
    const int64_t nph = cpu_min64(sw, outw);
    for (int64_t c = 0; c < nph; c++) {
        const float *b = pb + c * pstride;
        const int64_t len = cpu_phase_len(outw, sw, c);
        for (int64_t j = 0; j < len; j++)
            y[j * sw + c] = b[j];
    }
}

/* Output row oh of channel o from the z rows of input rows ih0 ..: the
 * bias, then each (kh, kw) term in tap order, phase by phase along W (at W
 * stride 1 straight into y). */
static void colg_row(const cpu_plan *pl, const cpu_row_job *job, const float *z, int64_t ih0,
                     int64_t nrows, int64_t o, int64_t oh, float *pb)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *ph = &pl->ph[1], *pw = &pl->ph[2];
    const int64_t sw = s->s[2], outw = s->out[2], in_w = s->in[2];
    const int64_t ch = oh % s->s[1], jh = oh / s->s[1];
    float *yrow = job->y + o * s->y_stride[1] + oh * s->y_stride[3];
    const float b = job->bias ? job->bias[o] : 0.0f;
    const int64_t pstride = pl->colg_pstride;
    for (int64_t c = 0; c < pw->nphase; c++) {
        float *acc = sw == 1 ? yrow : pb + c * pstride;
        const int64_t len = cpu_phase_len(outw, sw, c);
        pw_fill(acc, b, len);
        for (int64_t bt = ph->start[ch]; bt < ph->start[ch + 1]; bt++) {
            const int64_t r = jh + ph->taps[bt].delta - ih0;
            if (r < 0 || r >= nrows)
                continue; /* outside x: the block holds every input row that exists */
            const int64_t mrow = (o * s->k[1] + ph->taps[bt].k) * s->k[2];
            for (int64_t t = pw->start[c]; t < pw->start[c + 1]; t++) {
                const int64_t delta = pw->taps[t].delta;
                const int64_t lo = cpu_max64(0, -delta), hi = cpu_min64(len, in_w - delta);
                if (lo >= hi)
                    continue;
                const float *src = z + (mrow + pw->taps[t].k) * pl->colg_zrow + r * in_w;
                colg_add(acc + lo, src + lo + delta, hi - lo);
            }
        }
    }
    if (sw > 1)
        colg_store_phases(yrow, pb, pstride, sw, outw);
}

/* The input rows [*lo, *hi) that output row oh reads, clamped to x (empty
 * when none). */
static void colg_row_inputs(const cpu_plan *pl, int64_t oh, int64_t *lo, int64_t *hi)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *ph = &pl->ph[1];
    const int64_t ch = oh % s->s[1], jh = oh / s->s[1];
    *lo = s->in[1];
    *hi = 0;
    for (int64_t t = ph->start[ch]; t < ph->start[ch + 1]; t++) {
        const int64_t ih = jh + ph->taps[t].delta;
        if (ih < 0 || ih >= s->in[1])
            continue;
        *lo = cpu_min64(*lo, ih);
        *hi = cpu_max64(*hi, ih + 1);
    }
}

/* Scratch: the kd taps' x and weight offsets, the z rows, the phase rows. */
static size_t colg_round64(size_t n) { return (n + 63) / 64 * 64; }

typedef struct colg_layout {
    size_t xoff, woff, z, pb, total;
} colg_layout;

static colg_layout colg_layout_of(const cpu_plan *pl)
{
    colg_layout l;
    const size_t taps = (size_t)pl->s.k[0] * sizeof(int64_t);
    l.xoff = 0;
    l.woff = colg_round64(taps);
    l.z = l.woff + colg_round64(taps);
    l.pb = l.z + colg_round64((size_t)(pl->colg_m * pl->colg_zrow) * sizeof(float));
    l.total = l.pb + colg_round64((size_t)(pl->ph[2].nphase * pl->colg_pstride) * sizeof(float));
    return l;
}

static void block_ncdhw_colg(const cpu_plan *pl, const cpu_row_job *job, int64_t od, int64_t oh0,
                             int64_t oh1)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pd = &pl->ph[0];
    const colg_layout l = colg_layout_of(pl);
    char *base = job->scratch;
    int64_t *xoff = (int64_t *)(base + l.xoff), *woff = (int64_t *)(base + l.woff);
    float *z = (float *)(base + l.z), *pb = (float *)(base + l.pb);
    const int64_t cd = od % s->s[0], jd = od / s->s[0];
    int64_t nkd = 0;
    for (int64_t t = pd->start[cd]; t < pd->start[cd + 1]; t++) {
        const int64_t id = jd + pd->taps[t].delta;
        if (id < 0 || id >= s->in[0])
            continue;
        xoff[nkd] = id * s->x_stride[2];
        woff[nkd] = pd->taps[t].k * s->cig * pl->colg_m;
        nkd++;
    }
    colg_args a = {.xoff = xoff, .woff = woff, .nkd = nkd, .cig = s->cig,
                   .x_step = s->x_stride[1], .mp = pl->colg_m, .z_step = pl->colg_zrow};
    for (int64_t oh = oh0; oh < oh1;) {
        /* the rows from oh whose input rows fit the buffer together */
        int64_t lo, hi, end;
        colg_row_inputs(pl, oh, &lo, &hi);
        for (end = oh + 1; end < oh1; end++) {
            int64_t l2, h2;
            colg_row_inputs(pl, end, &l2, &h2);
            if (l2 >= h2)
                continue;
            const int64_t nl = lo < hi ? cpu_min64(lo, l2) : l2, nh = cpu_max64(hi, h2);
            if (nh - nl > pl->colg_rows)
                break;
            lo = nl;
            hi = nh;
        }
        const int64_t nrows = nkd && lo < hi ? hi - lo : 0;
        if (nrows)
            colg_gemm(pl, job, &a, lo, hi, z);
        for (int64_t o = 0; o < s->cog; o++)
            for (int64_t r = oh; r < end; r++)
                colg_row(pl, job, z, lo, nrows, o, r, pb);
        oh = end;
    }
}

/* Input rows one output row reads at most (the widest span of a phase's
 * taps along H). */
static int64_t colg_min_rows(const convt3d_shape *s, const cpu_dim_phases *ph)
{
    int64_t rows = 1;
    for (int64_t c = 0; c < ph->nphase; c++)
        if (ph->start[c + 1] > ph->start[c]) {
            const int64_t d0 = ph->taps[ph->start[c]].delta;
            const int64_t d1 = ph->taps[ph->start[c + 1] - 1].delta;
            rows = cpu_max64(rows, (d0 > d1 ? d0 - d1 : d1 - d0) + 1);
        }
    return cpu_min64(rows, s->in[1]);
}

/* The z buffer holds as many input rows as the cache budget allows (at
 * least what one output row reads, at most the plane). */
static void plan_ncdhw_colg(cpu_plan *pl)
{
    const convt3d_shape *s = &pl->s;
    cpu_plan_set_tiling(pl, (cpu_tiling){.tile_a = pw_rows[0], .tile_b = (int)VL,
                                          .chunk = PW_CHUNK, .w_block = 0});
    pl->colg_m = s->cog * s->k[1] * s->k[2];
    const int64_t row_bytes = pl->colg_m * s->in[2] * (int64_t)sizeof(float);
    const int64_t fit = pl->cache.colg_bytes / row_bytes;
    pl->colg_rows = cpu_min64(s->in[1], cpu_max64(colg_min_rows(s, &pl->ph[1]), fit));
    pl->colg_zrow = (pl->colg_rows * s->in[2] + VL - 1) / VL * VL;
    pl->colg_pstride = (cpu_phase_len(s->out[2], s->s[2], 0) + VL - 1) / VL * VL;
    pl->blocks = 1;
    pl->scratch_bytes = colg_layout_of(pl).total;
}

#endif /* CONVT3D_CPU_COLGEMM_H */
