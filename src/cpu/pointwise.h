/* The pointwise kernels (kernel 1x1x1), both layouts, written once over the
 * vector vocabulary of cpu/phase_tile.h and included by each instruction-set
 * file (cpu/phase_avx512.c, cpu/phase_avx2.c, and cpu/phase_generic.c with
 * one-lane stand-ins), which first defines VL, vf, vmask, v_zero, v_set1,
 * v_loadu, v_loadu_mask, v_storeu_mask, v_fma, v_bcast, v_mask_range, and
 *
 *   PW_MAXV             vectors a tile spans at most
 *   PW_SHAPES(X)        X(V, M) for V = 1 .. PW_MAXV: the tile of V vectors
 *                       and M rows (NCDHW: M output channels, NDHWC: M
 *                       positions), V*M accumulators within the registers
 *   PW_TILES(X)         (optional; default NCDHW_TILES) X(R, V) for every
 *                       height R = 1 .. M of each V
 *
 * Why a kernel of its own: with one tap, each input position reaches exactly
 * one output (o = i*s - p in each dim), so the transposed convolution is a
 * GEMM over the input positions, and the outputs of the other stride phases
 * (and those past the input, from padding and output_padding) get only the
 * bias.  The gather tiles pay their per-tap, per-phase setup on every output
 * position; here the bias-only outputs are a fill and the others a
 * register-blocked GEMM with no borders in its loop.
 *
 * It runs as a row kernel of the common driver (cpu_omp.c: OpenMP over n,
 * groups, output rows and W segments), so an output row (od, oh) has at most
 * one input row (nrt 0 or 1), and in W one phase c holds the one tap.  Each
 * output is summed over the group's input channels in order by one tile:
 * results do not depend on the thread count.  Weights are the common
 * [g][ic][oc < cogp] packing (NDHWC: cogp whole vectors, zero-padded). */
#ifndef CONVT3D_CPU_POINTWISE_H
#define CONVT3D_CPU_POINTWISE_H

#include <stdlib.h>
#include <string.h>

#include "kernels.h"

#ifndef CPU_UNROLL
#define CPU_UNROLL _Pragma("GCC unroll 32")
#endif
#ifndef CPU_INLINE
#define CPU_INLINE static inline __attribute__((always_inline))
#endif

/* The arrays of a tile are sized by these; the unrolled loops with constant
 * bounds touch only the V x M corner, which stays in registers. */
#define PW_MAXM 16

/* j positions a W segment of the driver holds: a multiple of every tile's
 * positions in both layouts (16, 12, 8, 6, 4, 3). */
#define PW_CHUNK 48

/* One tile's operands. */
typedef struct pw_args {
    const float *x;  /* NCDHW: channel 0 at the tile's first position; NDHWC: the first
                        position's channel 0 */
    int64_t x_step;  /* NCDHW: between input channels; NDHWC: between positions */
    int64_t cig;
    const float *w;  /* packed weights [ic][oc < cogp] at the tile's first output channel */
    int64_t cogp;
    const float *bias; /* at the tile's first output channel, or NULL */
    float *y;        /* the tile's first output */
    int64_t y_step;  /* NCDHW: between output channels; NDHWC: between positions */
    int64_t y_pos;   /* NCDHW: between positions in y (the W stride) */
    int n;           /* lanes that are real: NCDHW positions, NDHWC output channels */
    /* NCDHW blocks: the output offset of each of the n positions from y (the
     * plan's pw_off), -1 for none; NULL: positions y_pos apart; and the runs
     * of consecutive outputs from each (the plan's pw_run; NULL: none) */
    const int64_t *off, *run;
} pw_args;

typedef void (*pw_fn)(const pw_args *a);

/* Masks of the first n lanes over V vectors. */
#define PW_MASKS(V, n, m)                                                                      \
    CPU_UNROLL for (int v = 0; v < (V); v++)                                                   \
    {                                                                                          \
        const int left_ = (n) - v * VL;                                                        \
        m[v] = v_mask_range(0, left_ < 0 ? 0 : left_ > VL ? VL : left_);                       \
    }

/* NCDHW: O output channels x V vectors of positions; x vectors along the
 * positions, weights broadcast.  The unmasked loop serves whole tiles. */
#define PW_NCDHW_LOOP(LOAD)                                                                    \
    for (int64_t ic = 0; ic < cig; ic++, xp += a->x_step, wp += a->cogp) {                     \
        vf xv[PW_MAXV];                                                                              \
        CPU_UNROLL for (int v = 0; v < V; v++) xv[v] = LOAD;                                   \
        CPU_UNROLL for (int o = 0; o < O; o++)                                                 \
        {                                                                                      \
            const vf wb = v_bcast(wp + o);                                                     \
            CPU_UNROLL for (int v = 0; v < V; v++) acc[o][v] = v_fma(xv[v], wb, acc[o][v]);    \
        }                                                                                      \
    }

/* tmp[0 .. n) to yo + off[i], each run of consecutive outputs by vectors:
 * with few input channels a tile's FMAs are as few as its outputs, so an
 * element-wise scatter cost as much as the GEMM (random_76 of seed 3,
 * 16 -> 32 channels, every position one run). */
static inline void pw_scatter_runs(float *yo, const float *tmp, const int64_t *off,
                                   const int64_t *run, int n)
{
    for (int i = 0; i < n;) {
        if (run[i] == 0) {
            i++;
            continue;
        }
        const int len = run[i] < n - i ? (int)run[i] : n - i;
        float *dst = yo + off[i];
        int k = 0;
        for (; k + VL <= len; k += VL)
            v_storeu_mask(dst + k, v_loadu(tmp + i + k), v_mask_range(0, VL));
        if (k < len) {
            const vmask m = v_mask_range(0, len - k);
            v_storeu_mask(dst + k, v_loadu_mask(tmp + i + k, m), m);
        }
        i += len;
    }
}

CPU_INLINE void pw_ncdhw_body(const pw_args *a, const int V, const int O)
{
    vf acc[PW_MAXM][PW_MAXV];
    vmask m[PW_MAXV];
    PW_MASKS(V, a->n, m);
    CPU_UNROLL for (int o = 0; o < O; o++)
    {
        const vf b = a->bias ? v_set1(a->bias[o]) : v_zero();
        CPU_UNROLL for (int v = 0; v < V; v++) acc[o][v] = b;
    }
    const int64_t cig = a->cig;
    const float *xp = a->x, *wp = a->w;
    if (a->n == V * VL) {
        PW_NCDHW_LOOP(v_loadu(xp + v * VL))
    } else {
        PW_NCDHW_LOOP(v_loadu_mask(xp + v * VL, m[v]))
    }
    if (a->off && a->run && a->run[0] >= a->n) {
        /* a block's positions, all on consecutive outputs */
        CPU_UNROLL for (int o = 0; o < O; o++)
            CPU_UNROLL for (int v = 0; v < V; v++)
                v_storeu_mask(a->y + a->off[0] + o * a->y_step + v * VL, acc[o][v], m[v]);
        return;
    }
    if (a->off) {
        /* a block's positions, scattered to their outputs a run at a time */
        float tmp[PW_MAXV * VL];
        const vmask all = v_mask_range(0, VL);
        CPU_UNROLL for (int o = 0; o < O; o++)
        {
            CPU_UNROLL for (int v = 0; v < V; v++) v_storeu_mask(tmp + v * VL, acc[o][v], all);
            float *yo = a->y + o * a->y_step;
            if (a->run) {
                pw_scatter_runs(yo, tmp, a->off, a->run, a->n);
                continue;
            }
            for (int i = 0; i < a->n; i++)
                if (a->off[i] >= 0)
                    yo[a->off[i]] = tmp[i];
        }
        return;
    }
    if (a->y_pos == 1) {
        CPU_UNROLL for (int o = 0; o < O; o++)
            CPU_UNROLL for (int v = 0; v < V; v++)
                v_storeu_mask(a->y + o * a->y_step + v * VL, acc[o][v], m[v]);
        return;
    }
    /* W stride > 1: this phase's outputs are y_pos apart */
    float tmp[PW_MAXV * VL];
    const vmask all = v_mask_range(0, VL);
    CPU_UNROLL for (int o = 0; o < O; o++)
    {
        CPU_UNROLL for (int v = 0; v < V; v++) v_storeu_mask(tmp + v * VL, acc[o][v], all);
        float *yo = a->y + o * a->y_step;
        for (int i = 0; i < a->n; i++)
            yo[i * a->y_pos] = tmp[i];
    }
}

/* NCDHW: `count` whole tiles of O channels x V vectors one after another,
 * on consecutive positions of x and consecutive outputs of y (a->y: the
 * first).  With few channels a tile is a few dozen instructions, and
 * calling it a tile at a time (finding its channels and span anew each
 * time) cost as much as the tile: 2 -> 2 channels a group, 32 groups, k1 on
 * 30 x 21 x 20 (random_197 of seed 14), half the time outside the tiles.
 * Each output is summed as in pw_ncdhw_body: the bias, then the input
 * channels in order. */
CPU_INLINE void pw_ncdhw_run_body(const pw_args *a, int64_t count, const int V, const int O)
{
    const int64_t cig = a->cig;
    const vmask all = v_mask_range(0, VL);
    for (int64_t r = 0; r < count; r++) {
        vf acc[PW_MAXM][PW_MAXV];
        CPU_UNROLL for (int o = 0; o < O; o++)
        {
            const vf b = a->bias ? v_set1(a->bias[o]) : v_zero();
            CPU_UNROLL for (int v = 0; v < V; v++) acc[o][v] = b;
        }
        const float *xp = a->x + r * V * VL, *wp = a->w;
        PW_NCDHW_LOOP(v_loadu(xp + v * VL))
        float *y = a->y + r * V * VL;
        CPU_UNROLL for (int o = 0; o < O; o++)
            CPU_UNROLL for (int v = 0; v < V; v++)
                v_storeu_mask(y + o * a->y_step + v * VL, acc[o][v], all);
    }
}

/* NDHWC: P positions x V vectors of output channels; weight vectors along
 * the channels, x broadcast.  Reads whole vectors of weights and bias (cogp
 * is whole vectors); writes the first n channels. */
CPU_INLINE void pw_ndhwc_body(const pw_args *a, const int V, const int P)
{
    vf acc[PW_MAXM][PW_MAXV];
    vmask m[PW_MAXV];
    PW_MASKS(V, a->n, m);
    CPU_UNROLL for (int v = 0; v < V; v++)
    {
        const vf b = a->bias ? v_loadu(a->bias + v * VL) : v_zero();
        CPU_UNROLL for (int p = 0; p < P; p++) acc[p][v] = b;
    }
    const float *xp = a->x, *wp = a->w;
    for (int64_t ic = 0; ic < a->cig; ic++, xp++, wp += a->cogp) {
        vf wv[PW_MAXV];
        CPU_UNROLL for (int v = 0; v < V; v++) wv[v] = v_loadu(wp + v * VL);
        CPU_UNROLL for (int p = 0; p < P; p++)
        {
            const vf xb = v_bcast(xp + p * a->x_step);
            CPU_UNROLL for (int v = 0; v < V; v++) acc[p][v] = v_fma(wv[v], xb, acc[p][v]);
        }
    }
    CPU_UNROLL for (int p = 0; p < P; p++)
        CPU_UNROLL for (int v = 0; v < V; v++)
            v_storeu_mask(a->y + p * a->y_step + v * VL, acc[p][v], m[v]);
}

/* The instantiations: every tile height up to the register budget for each
 * V (PW_TILES(X): X(rows, V), the NCDHW tile list of the instruction set
 * unless the file names its own; the NCDHW and NDHWC budgets are the same),
 * so a run of M rows splits into even tiles.  A row of 13 NDHWC positions at
 * 16 a tile was 13 one-position tiles, each one FMA chain waiting on its
 * latency (random_147 of seed 3, Zen 4: 0.90 ms, against 0.31 ms for the
 * AVX2 kernel, whose 12-position tile took all but one). */
#ifndef PW_TILES
#define PW_TILES NCDHW_TILES
#endif
#define PW_DEFINE(R, V)                                                                        \
    static void pw_ncdhw_##R##x##V(const pw_args *a) { pw_ncdhw_body(a, V, R); }               \
    static void pw_ndhwc_##R##x##V(const pw_args *a) { pw_ndhwc_body(a, V, R); }
PW_TILES(PW_DEFINE)
/* the runs of whole tiles (pw_ncdhw_run_body), for every tile shape of the
 * list (pw_ncdhw_run takes those of PW_MAXV vectors) */
typedef void (*pw_run_fn)(const pw_args *a, int64_t count);
#define PW_RUN_DEFINE(R, V)                                                                    \
    static void pw_ncdhw_run_##R##x##V(const pw_args *a, int64_t count)                        \
    {                                                                                          \
        pw_ncdhw_run_body(a, count, V, R);                                                     \
    }
PW_TILES(PW_RUN_DEFINE)
#define PW_RUN_REF(R, V) [V - 1][R - 1] = pw_ncdhw_run_##R##x##V,
static const pw_run_fn pw_ncdhw_runs[PW_MAXV][PW_MAXM] = {PW_TILES(PW_RUN_REF)};
#define PW_NCDHW_REF(R, V) [V - 1][R - 1] = pw_ncdhw_##R##x##V,
#define PW_NDHWC_REF(R, V) [V - 1][R - 1] = pw_ndhwc_##R##x##V,
#define PW_ROWS(V, M) [V - 1] = M,
static const pw_fn pw_ncdhw_tiles[PW_MAXV][PW_MAXM] = {PW_TILES(PW_NCDHW_REF)};
static const pw_fn pw_ndhwc_tiles[PW_MAXV][PW_MAXM] = {PW_TILES(PW_NDHWC_REF)};
static const int pw_rows[PW_MAXV] = {PW_SHAPES(PW_ROWS)};

/* The reached part of a row: the W phase c holding the one tap, its input
 * offset delta, and the j range [*jlo, *jhi) of the row's [j0, j1) whose
 * input lies in x (empty when no input row or tap reaches the row). */
static void pw_reached(const cpu_plan *pl, const cpu_row_job *job, int64_t *c, int64_t *delta,
                       int64_t *jlo, int64_t *jhi)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pw = &pl->ph[2];
    *c = *delta = *jlo = *jhi = 0;
    if (job->nrt == 0)
        return;
    for (int64_t ph = 0; ph < pw->nphase; ph++)
        if (pw->start[ph + 1] > pw->start[ph]) {
            *c = ph;
            *delta = pw->taps[pw->start[ph]].delta;
            *jlo = cpu_max64(job->j0, -*delta);
            *jhi = cpu_min64(cpu_min64(job->j1, s->in[2] - *delta),
                             cpu_phase_len(s->out[2], s->s[2], ph));
            return;
        }
}

/* dst[0 .. n) = value, a vector at a time (rows are short: a scalar loop's
 * setup cost more than the stores); the column GEMM's rows start so too. */
static void pw_fill(float *dst, float value, int64_t n)
{
    const vf b = v_set1(value);
    const vmask all = v_mask_range(0, VL);
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        v_storeu_mask(dst + i, b, all);
    if (i < n)
        v_storeu_mask(dst + i, b, v_mask_range(0, (int)(n - i)));
}

/* pw_fill over a long span of y: to a whole vector's alignment first, since
 * a vector across two cache lines costs two stores (the bias-only outputs of
 * strided problems are most of y: random_145 of seed 3, 6 -> 3 channels at
 * stride 2, 2.5x faster with the whole-row spans below). */
static void pw_fill_aligned(float *dst, float value, int64_t n)
{
    const int64_t mis = (int64_t)((uintptr_t)dst / sizeof(float) % VL);
    if (mis && n > VL) {
        v_storeu_mask(dst, v_set1(value), v_mask_range(0, (int)(VL - mis)));
        dst += VL - mis;
        n -= VL - mis;
    }
    pw_fill(dst, value, n);
}

/* NCDHW: outputs [ow0, ow1) of every channel of the row get the bias (or 0). */
static void pw_fill_ncdhw(const cpu_plan *pl, const cpu_row_job *job, int64_t ow0, int64_t ow1)
{
    const convt3d_shape *s = &pl->s;
    for (int64_t oc = 0; ow0 < ow1 && oc < s->cog; oc++)
        pw_fill_aligned(job->y + oc * s->y_stride[1] + ow0, job->bias ? job->bias[oc] : 0.0f,
                        ow1 - ow0);
}

/* The row's bias-only outputs.  NCDHW: at W stride 1 the two ends outside
 * the reached range; at larger strides every output first (a contiguous
 * fill; the reached ones, one phase in s, are written again by the tiles).
 * NDHWC: a position's channels are one copy of the bias, and only the
 * positions no input reaches get it. */
static void pw_fill_row(const cpu_plan *pl, const cpu_row_job *job, int64_t c, int64_t jlo,
                        int64_t jhi)
{
    const convt3d_shape *s = &pl->s;
    const int64_t sw = s->s[2];
    const int64_t ow0 = job->j0 * sw, ow1 = cpu_min64(s->out[2], job->j1 * sw);
    if (s->layout == CONVT3D_LAYOUT_NDHWC) {
        if (jlo >= jhi && !job->bias && s->y_stride[4] == s->cog) {
            /* no input reaches the row, one group: one span of zeros */
            pw_fill_aligned(job->y + ow0 * s->cog, 0.0f, (ow1 - ow0) * s->cog);
            return;
        }
        const size_t bytes = (size_t)s->cog * sizeof(float);
        for (int64_t ow = ow0; ow < ow1; ow++) {
            const int64_t j = ow / sw;
            if (ow - j * sw == c && j >= jlo && j < jhi)
                continue;
            float *yo = job->y + ow * s->y_stride[4];
            if (job->bias)
                memcpy(yo, job->bias, bytes);
            else
                memset(yo, 0, bytes);
        }
        return;
    }
    if (jlo < jhi && sw == 1) {
        pw_fill_ncdhw(pl, job, ow0, jlo);
        pw_fill_ncdhw(pl, job, jhi, ow1);
    } else {
        pw_fill_ncdhw(pl, job, ow0, ow1);
    }
}

/* What both row kernels do first: find the reached span, give every other
 * output of the row its bias; nonzero when the span holds any position. */
static int pw_row_prologue(const cpu_plan *pl, const cpu_row_job *job, int64_t *c, int64_t *delta,
                           int64_t *jlo, int64_t *jhi)
{
    pw_reached(pl, job, c, delta, jlo, jhi);
    pw_fill_row(pl, job, *c, *jlo, *jhi);
    return *jlo < *jhi;
}

/* The first row of tile i when m rows split evenly into `tiles` tiles (the
 * heights differ by at most one). */
static int64_t pw_split_first(int64_t m, int64_t tiles, int64_t i) { return m * i / tiles; }

/* n positions in NCDHW tiles of whole vectors: tiles of PW_MAXV vectors,
 * the last two sharing what is left evenly.  A last tile of PW_MAXV vectors
 * for any rest computed a 17-position rest as 64 lanes: 81-position planes
 * (256 -> 256 channels on 9^3, random_153 of seed 13) used 63% of the
 * lanes, 84% as 3 + 3 vectors.  Only the last two differ: spreading every
 * tile evenly (3s and 4s mixed) made the tile function alternate, and a
 * one-channel row (depthwise 1x1 on 31^3, random_21 of seed 6) 10% slower. */
typedef struct pw_spans {
    int64_t n, vectors, tiles;
} pw_spans;

CPU_INLINE pw_spans pw_spans_of(int64_t n)
{
    const int64_t vectors = (n + VL - 1) / VL;
    return (pw_spans){n, vectors, (vectors + PW_MAXV - 1) / PW_MAXV};
}

/* Tile i of sp: its first position (returned), its vectors *V and its
 * positions *len. */
CPU_INLINE int64_t pw_span(pw_spans sp, int64_t i, int *V, int *len)
{
    const int64_t rest = sp.vectors % PW_MAXV;
    int64_t v0 = i * PW_MAXV, v1 = v0 + PW_MAXV;
    if (sp.tiles == 1) {
        v1 = sp.vectors;
    } else if (rest && i >= sp.tiles - 2) {
        const int64_t first = (sp.tiles - 2) * PW_MAXV, half = (PW_MAXV + rest + 1) / 2;
        v0 = i == sp.tiles - 2 ? first : first + half;
        v1 = i == sp.tiles - 2 ? first + half : sp.vectors;
    }
    *V = (int)(v1 - v0);
    *len = (int)(cpu_min64(sp.n, v1 * VL) - v0 * VL);
    return v0 * VL;
}

/* Every output channel of a's positions (V vectors) into y (the first
 * channel's outputs), in even tiles of channels. */
static void pw_ncdhw_channels(const cpu_plan *pl, const cpu_row_job *job, pw_args *a, int V,
                              float *y)
{
    const convt3d_shape *s = &pl->s;
    const int64_t cog = s->cog, tiles = (cog + pw_rows[V - 1] - 1) / pw_rows[V - 1];
    for (int64_t i = 0; i < tiles; i++) {
        const int64_t oc = pw_split_first(cog, tiles, i);
        const int64_t rows = pw_split_first(cog, tiles, i + 1) - oc;
        a->w = job->w + oc;
        a->bias = job->bias ? job->bias + oc : NULL;
        a->y = y + oc * s->y_stride[1];
        pw_ncdhw_tiles[V - 1][rows - 1](a);
    }
}

/* The leading tiles of sp that are PW_MAXV whole vectors (pw_span's last
 * two share a rest; a last vector may be partial). */
static int64_t pw_whole_tiles(pw_spans sp)
{
    const int64_t split = sp.tiles > 1 && sp.vectors % PW_MAXV ? 2 : 0;
    return cpu_min64(sp.tiles - split, sp.n / (PW_MAXV * VL));
}

/* Every output channel (one tile of them: C_out/G <= pw_rows[PW_MAXV - 1])
 * of `count` whole tiles of PW_MAXV vectors from a->x, their outputs
 * consecutive from y. */
static void pw_ncdhw_run(const cpu_plan *pl, const cpu_row_job *job, pw_args *a, int64_t count,
                         float *y)
{
    a->w = job->w;
    a->bias = job->bias;
    a->y = y;
    pw_ncdhw_runs[PW_MAXV - 1][pl->s.cog - 1](a, count);
}

static void row_ncdhw_pw(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    int64_t c, delta, jlo, jhi;
    if (!pw_row_prologue(pl, job, &c, &delta, &jlo, &jhi))
        return;
    const int64_t len = jhi - jlo, sw = s->s[2];
    pw_args a = {.x_step = job->x_plane, .cig = s->cig, .cogp = pl->cogp,
                 .y_step = s->y_stride[1], .y_pos = sw};
    const float *x0 = job->x + job->rt[0].x_off + jlo + delta;
    float *y0 = job->y + jlo * sw + c;
    const pw_spans sp = pw_spans_of(len);
    for (int64_t i = 0; i < sp.tiles; i++) {
        int V;
        const int64_t j = pw_span(sp, i, &V, &a.n);
        a.x = x0 + j;
        pw_ncdhw_channels(pl, job, &a, V, y0 + j * sw);
    }
}

/* NDHWC: len positions from x0 and y0 (a->x_step and a->y_step apart; the
 * rest of a set), every output channel, in even tiles of positions. */
static void pw_ndhwc_positions(const cpu_plan *pl, const cpu_row_job *job, pw_args *a,
                               const float *x0, float *y0, int64_t len)
{
    const convt3d_shape *s = &pl->s;
    for (int64_t oc = 0; oc < s->cog; oc += PW_MAXV * VL) {
        const int64_t left = s->cog - oc;
        const int V = (int)cpu_min64(PW_MAXV, (left + VL - 1) / VL), P = pw_rows[V - 1];
        a->n = (int)cpu_min64(V * VL, left);
        a->w = job->w + oc;
        a->bias = job->bias ? job->bias + oc : NULL;
        const int64_t tiles = (len + P - 1) / P;
        for (int64_t i = 0; i < tiles; i++) {
            const int64_t j = pw_split_first(len, tiles, i);
            a->x = x0 + j * a->x_step;
            a->y = y0 + j * a->y_step + oc;
            pw_ndhwc_tiles[V - 1][pw_split_first(len, tiles, i + 1) - j - 1](a);
        }
    }
}

static void row_ndhwc_pw(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    int64_t c, delta, jlo, jhi;
    if (!pw_row_prologue(pl, job, &c, &delta, &jlo, &jhi))
        return;
    const int64_t len = jhi - jlo, sw = s->s[2], xs = s->x_stride[4], ys = s->y_stride[4];
    /* one position a row: sw may be near INT64_MAX and sw * ys overflow
     * (fuzz corpus cpu-phase-len-overflow); with two or more, sw * ys < the
     * row's length in y */
    pw_args a = {.x_step = xs, .cig = s->cig, .cogp = pl->cogp, .y_step = len > 1 ? sw * ys : 0,
                 .y_pos = 1};
    pw_ndhwc_positions(pl, job, &a, job->x + job->rt[0].x_off + (jlo + delta) * xs,
                       job->y + (jlo * sw + c) * ys, len);
}

/* NDHWC with every stride 1 and no padding: y's positions are x's, so the
 * rows of a block are one run of positions in both and one GEMM, with no
 * row's setup and no short row's tiles (random_65 of seed 3, 1 -> 32
 * channels, rows of 25). */
static int pw_ndhwc_dense(const convt3d_shape *s)
{
    for (int d = 0; d < 3; d++)
        if (s->s[d] != 1 || s->p[d] != 0 || s->out[d] != s->in[d])
            return 0;
    return s->layout == CONVT3D_LAYOUT_NDHWC && s->x_stride[3] == s->in[2] * s->x_stride[4] &&
           s->y_stride[3] == s->out[2] * s->y_stride[4];
}

static void block_ndhwc_pw(const cpu_plan *pl, const cpu_row_job *job, int64_t od, int64_t oh0,
                           int64_t oh1)
{
    const convt3d_shape *s = &pl->s;
    pw_args a = {.x_step = s->x_stride[4], .cig = s->cig, .cogp = pl->cogp,
                 .y_step = s->y_stride[4], .y_pos = 1};
    pw_ndhwc_positions(pl, job, &a, job->x + od * s->x_stride[2] + oh0 * s->x_stride[3],
                       job->y + oh0 * s->y_stride[3], (oh1 - oh0) * s->out[2]);
}

/* Whether every output of a row is reached (W stride 1, the input covers
 * the row): then the reached rows need no fill. */
static int pw_rows_covered(const convt3d_shape *s)
{
    return s->s[2] == 1 && s->p[2] + s->out[2] <= s->in[2];
}

/* NCDHW, rows oh0 <= oh < oh1 of plane od: the rows first get the bias
 * (unless every output is reached), then the input rows reaching them, one
 * contiguous run of in_w-long rows in x, are one stream of positions for
 * the tiles, each lane scattered to its output through pw_off.  Short rows
 * (a few W positions) would otherwise pay a row's setup for a few lanes. */
static void block_ncdhw_pw(const cpu_plan *pl, const cpu_row_job *job, int64_t od, int64_t oh0,
                           int64_t oh1)
{
    const convt3d_shape *s = &pl->s;
    const int64_t td = od + s->p[0], sh = s->s[1], ph = s->p[1];
    const int d_hit = td % s->s[0] == 0 && td / s->s[0] < s->in[0];
    const int covered = pw_rows_covered(s);
    cpu_row_job row = *job;
    /* Rows to fill, a run of consecutive ones at a time: y's rows are
     * contiguous (its strides come from convt3d_tensor_strides), so a run is
     * one span of each channel. */
    int64_t r0 = oh0;
    for (int64_t oh = oh0; oh <= oh1; oh++) {
        const int64_t th = oh + ph;
        const int fill = oh < oh1 && (!(d_hit && th % sh == 0 && th / sh < s->in[1]) || !covered);
        if (fill)
            continue;
        if (r0 < oh) {
            row.y = job->y + r0 * s->y_stride[3];
            pw_fill_ncdhw(pl, &row, 0, (oh - r0) * s->out[2]);
        }
        r0 = oh + 1;
    }
    if (!d_hit)
        return;
    const int64_t ih_lo = (oh0 + ph + sh - 1) / sh;
    const int64_t ih_hi = cpu_min64(s->in[1], (oh1 - 1 + ph) / sh + 1);
    if (ih_lo >= ih_hi)
        return;
    const int64_t npos = (ih_hi - ih_lo) * s->in[2];
    const float *x0 = job->x + (td / s->s[0]) * s->x_stride[2] + ih_lo * s->x_stride[3];
    const int64_t *off = pl->pw_off + ih_lo * s->in[2];
    pw_args a = {.x_step = s->x_stride[1], .cig = s->cig, .cogp = pl->cogp,
                 .y_step = s->y_stride[1]};
    const pw_spans sp = pw_spans_of(npos);
    /* a block whose outputs are all consecutive, of channels that one
     * tile holds: its whole tiles in runs (more channels would read the
     * block's inputs once a channel tile, instead of once a span) */
    const int64_t *run = pl->pw_run ? pl->pw_run + ih_lo * s->in[2] : NULL;
    const int64_t whole =
        run && run[0] >= npos && s->cog <= pw_rows[PW_MAXV - 1] ? pw_whole_tiles(sp) : 0;
    if (whole > 0) {
        a.x = x0;
        pw_ncdhw_run(pl, job, &a, whole, job->y + off[0]);
    }
    for (int64_t i = whole; i < sp.tiles; i++) {
        int V;
        const int64_t q = pw_span(sp, i, &V, &a.n);
        a.x = x0 + q;
        a.off = off + q;
        a.run = run ? run + q : NULL;
        pw_ncdhw_channels(pl, job, &a, V, job->y);
    }
}

/* Input planes of at most this many positions get the offset and run
 * tables of the blocks (16 bytes a position); larger ones run row by row. */
#define PW_OFF_MAX ((int64_t)1 << 22)

/* The table of block_ncdhw_pw, or NULL (rows instead): needs x's rows
 * contiguous within a plane (x_stride[3] = in_w: one run of positions). */
static int64_t *pw_offsets(const convt3d_shape *s)
{
    const int64_t in_h = s->in[1], in_w = s->in[2];
    if (s->layout != CONVT3D_LAYOUT_NCDHW || s->x_stride[3] != in_w || in_h > PW_OFF_MAX ||
        in_w > PW_OFF_MAX / in_h)
        return NULL;
    const int64_t npos = in_h * in_w;
    int64_t *off = malloc((size_t)(2 * npos) * sizeof *off);
    if (!off)
        return NULL;
    for (int64_t ih = 0; ih < in_h; ih++)
        for (int64_t iw = 0; iw < in_w; iw++) {
            /* kernel 1: output o = i * s - p in each dim */
            const int64_t oh = ih * s->s[1] - s->p[1], ow = iw * s->s[2] - s->p[2];
            const int in = oh >= 0 && oh < s->out[1] && ow >= 0 && ow < s->out[2];
            off[ih * in_w + iw] = in ? oh * s->y_stride[3] + ow * s->y_stride[4] : -1;
        }
    int64_t *run = off + npos;
    for (int64_t i = npos - 1; i >= 0; i--)
        run[i] = off[i] < 0                                ? 0
                 : i + 1 < npos && off[i + 1] == off[i] + 1 ? run[i + 1] + 1
                                                            : 1;
    return off;
}

static void plan_pw(cpu_plan *pl)
{
    const int lanes = (int)VL;
    cpu_plan_set_tiling(pl, (cpu_tiling){.tile_a = pw_rows[0], .tile_b = lanes,
                                          .chunk = PW_CHUNK, .w_block = 0});
    pl->scratch_bytes = 0;
    pl->pw_off = pw_offsets(&pl->s);
    /* at W stride > 1 every run is one output: element by element then */
    pl->pw_run = pl->pw_off && pl->s.s[2] == 1 ? pl->pw_off + pl->s.in[1] * pl->s.in[2] : NULL;
    pl->blocks = pl->pw_off != NULL || pw_ndhwc_dense(&pl->s);
    /* NCDHW blocks are the tiles' lanes: the driver's 16 items a thread cut
     * 9^3 planes into 2-row blocks of 18 positions, tiles of 2 vectors at
     * 56% of their lanes (random_153 of seed 13, 256 -> 256, 2 threads) */
    pl->block_positions = pl->pw_off ? (int64_t)PW_MAXV * VL : 0;
}

#endif /* CONVT3D_CPU_POINTWISE_H */
