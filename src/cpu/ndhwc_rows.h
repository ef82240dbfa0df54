/* The NDHWC kernels over whole output rows (cpu_kernel.all_groups): one row
 * job is an output row (n, od, oh) of every group, [W][C_out] contiguous in
 * y, so a vector can hold the channels of several groups and stay full when
 * C_out/G is below the vector width.  Included by cpu/phase_tile.h, over
 * its vector vocabulary plus
 *
 *   vi, v_iload(p) (VL ints), v_iadd(a, b), v_iset1(i), v_permute(x, idx)
 *   (lane l of the result is lane idx[l] of x)
 *   ROWS_MAXV, ROWS_MAXP            the largest tile of either kind
 *   DW_MAXV, DW_POS_MAX, DW_TILES(X), GL_MAXV, GL_POS_MAX, GL_TILES(X)
 *                                    each kind's tiles (as NDHWC_* above)
 *   optionally v_permute2(lo, idx, hi) (lane l of the result is lane
 *   idx[l] of the 2 VL lanes lo, hi) and GL2_MAXV, GL2_POS_MAX,
 *   GL2_TILES(X): grouped-lanes tiles whose span takes two vectors
 *
 * Two tiles, P positions along j x V vectors of output channels:
 *  - depthwise (C_in/G = C_out/G = 1): channel co reads only x channel co,
 *    which lies under the same lane, so x loads as vectors, no broadcast;
 *  - grouped lanes (C_out/G < VL, the groups of a vector reading at most
 *    VL input channels, cpu/registry.c): at each position and tap the
 *    vector's input span (those groups' channels) loads once, and each input
 *    channel ic reaches the lanes by one permute (lane co takes channel
 *    (co / cog) * cig + ic of the span).  Where the ISA has a permute of
 *    two vectors, a span may take two (up to 2 VL input channels: e.g. 16
 *    groups of 2 -> 1 channels under AVX-512), kept in twice the registers
 *    by tiles of half the positions.
 * Each output element is summed by one tile in a fixed order (input rows,
 * then W taps, then input channels), so results do not depend on the thread
 * count.  Positions outside the input row read a zero row chosen once per
 * tile and tap. */
#ifndef CONVT3D_CPU_NDHWC_ROWS_H
#define CONVT3D_CPU_NDHWC_ROWS_H

typedef struct ndhwc_rows_args {
    const float *x;          /* x at (n, channel 0) */
    const float *w;          /* packed weights + c0 (the tile's first channel) */
    const float *bias;       /* bias + c0, or NULL */
    const float *zeros;      /* C_in + VL zeros */
    const cpu_row_tap *rt;
    int64_t nrt;
    const cpu_tap *kw;
    int64_t nkw;
    int64_t j0, in_w, xw;    /* first position; input width; x stride along w */
    int64_t cig, tap_stride, cout_pad; /* tap_stride = cig * cout_pad */
    float *out;              /* y at the tile's first position, channel c0 */
    int64_t out_stride;      /* between positions: s_w * C_out */
    int64_t npos;            /* positions to write */
    vmask keep[ROWS_MAXV];   /* lanes of each vector inside C_out */
    int full;                /* every lane of the tile is inside C_out */
    /* grouped lanes only: where vector v's span starts in a position's
     * channels, its lanes' offsets in the span, and the span's lanes */
    int64_t span0[ROWS_MAXV];
    vi lane_ic[ROWS_MAXV];
    vmask span[ROWS_MAXV], span_hi[ROWS_MAXV]; /* span_hi: the lanes past VL */
} ndhwc_rows_args;

typedef void (*ndhwc_rows_fn)(const ndhwc_rows_args *a);

/* acc[p][v] = bias (or 0) for the tile's lanes. */
#define ROWS_INIT_ACC(A)                                                                       \
    CPU_UNROLL for (int v = 0; v < V; v++)                                                     \
    {                                                                                          \
        const vf b_ = (A)->bias ? v_loadu_mask((A)->bias + v * VL, (A)->keep[v]) : v_zero();   \
        CPU_UNROLL for (int p = 0; p < P; p++)                                                 \
            acc[p][v] = b_;                                                                    \
    }

/* The tile's output positions: xp[p] is x of position p's input at tap t of
 * row r, or the zero row where that lies outside the input row. */
#define ROWS_POSITIONS(A, XR, T)                                                               \
    const float *xp[ROWS_MAXP];                                                                \
    CPU_UNROLL for (int p = 0; p < P; p++)                                                     \
    {                                                                                          \
        const int64_t iw_ = (A)->j0 + p + (A)->kw[T].delta;                                    \
        xp[p] = iw_ >= 0 && iw_ < (A)->in_w ? (XR) + iw_ * (A)->xw : (A)->zeros;               \
    }

CPU_INLINE void ndhwc_rows_store(const ndhwc_rows_args *a, vf acc[ROWS_MAXP][ROWS_MAXV],
                                 const int P, const int V)
{
    CPU_UNROLL for (int p = 0; p < P; p++) {
        if (p >= a->npos)
            break;
        CPU_UNROLL for (int v = 0; v < V; v++)
            v_storeu_mask(a->out + p * a->out_stride + v * VL, acc[p][v], a->keep[v]);
    }
}

/* ---- depthwise ---------------------------------------------------------- */

CPU_INLINE void ndhwc_dw_body(const ndhwc_rows_args *a, const int P, const int V)
{
    vf acc[ROWS_MAXP][ROWS_MAXV];
    ROWS_INIT_ACC(a);
    const int full = a->full;
    for (int64_t r = 0; r < a->nrt; r++) {
        const float *xr = a->x + a->rt[r].x_off;
        const float *wr = a->w + a->rt[r].w_tap * a->tap_stride;
        for (int64_t t = 0; t < a->nkw; t++) {
            ROWS_POSITIONS(a, xr, t);
            const float *wp = wr + a->kw[t].k * a->tap_stride;
            vf wv[ROWS_MAXV];
            CPU_UNROLL for (int v = 0; v < V; v++)
                wv[v] = v_loadu(wp + v * VL); /* padded to whole vectors */
            CPU_UNROLL for (int p = 0; p < P; p++)
                CPU_UNROLL for (int v = 0; v < V; v++) {
                    /* span0[v] is the vector's first channel (cig = cog = 1) */
                    const vf xv = full ? v_loadu(xp[p] + a->span0[v])
                                       : v_loadu_mask(xp[p] + a->span0[v], a->keep[v]);
                    acc[p][v] = v_fma(xv, wv[v], acc[p][v]);
                }
        }
    }
    ndhwc_rows_store(a, acc, P, V);
}

/* ---- grouped lanes ------------------------------------------------------ */

/* The span's lanes idx of one vector (S 1) or two (S 2; only built where
 * the ISA has v_permute2). */
#ifdef GL2_TILES
#define GL_PERMUTE(S, LO, IDX, HI) ((S) == 2 ? v_permute2(LO, IDX, HI) : v_permute(LO, IDX))
#else
#define GL_PERMUTE(S, LO, IDX, HI) ((void)sizeof(HI), v_permute(LO, IDX))
#endif

CPU_INLINE void ndhwc_gl_body(const ndhwc_rows_args *a, const int P, const int V, const int S)
{
    vf acc[ROWS_MAXP][ROWS_MAXV];
    ROWS_INIT_ACC(a);
    const int64_t cig = a->cig, cout_pad = a->cout_pad;
    const vi one = v_iset1(1);
    for (int64_t r = 0; r < a->nrt; r++) {
        const float *xr = a->x + a->rt[r].x_off;
        const float *wr = a->w + a->rt[r].w_tap * a->tap_stride;
        for (int64_t t = 0; t < a->nkw; t++) {
            ROWS_POSITIONS(a, xr, t);
            vf xs[ROWS_MAXP][ROWS_MAXV], xh[ROWS_MAXP][ROWS_MAXV];
            CPU_UNROLL for (int p = 0; p < P; p++)
                CPU_UNROLL for (int v = 0; v < V; v++) {
                    xs[p][v] = v_loadu_mask(xp[p] + a->span0[v], a->span[v]);
                    if (S == 2)
                        xh[p][v] = v_loadu_mask(xp[p] + a->span0[v] + VL, a->span_hi[v]);
                }
            const float *wp = wr + a->kw[t].k * a->tap_stride;
            vi idx[ROWS_MAXV];
            CPU_UNROLL for (int v = 0; v < V; v++)
                idx[v] = a->lane_ic[v];
            for (int64_t ic = 0; ic < cig; ic++) {
                CPU_UNROLL for (int v = 0; v < V; v++) {
                    const vf wv = v_loadu(wp + v * VL);
                    CPU_UNROLL for (int p = 0; p < P; p++)
                        acc[p][v] = v_fma(GL_PERMUTE(S, xs[p][v], idx[v], xh[p][v]), wv,
                                          acc[p][v]);
                    idx[v] = v_iadd(idx[v], one);
                }
                wp += cout_pad;
            }
        }
    }
    ndhwc_rows_store(a, acc, P, V);
}

#define DEF_DW_TILE(P, V)                                                                      \
    static void ndhwc_dw_##P##x##V(const ndhwc_rows_args *a) { ndhwc_dw_body(a, P, V); }
#define REF_DW_TILE(P, V) [V - 1][P - 1] = ndhwc_dw_##P##x##V,
DW_TILES(DEF_DW_TILE)
static const ndhwc_rows_fn ndhwc_dw_tiles[ROWS_MAXV][ROWS_MAXP] = {DW_TILES(REF_DW_TILE)};

#define DEF_GL_TILE(P, V)                                                                      \
    static void ndhwc_gl_##P##x##V(const ndhwc_rows_args *a) { ndhwc_gl_body(a, P, V, 1); }
#define REF_GL_TILE(P, V) [V - 1][P - 1] = ndhwc_gl_##P##x##V,
GL_TILES(DEF_GL_TILE)
static const ndhwc_rows_fn ndhwc_gl_tiles[ROWS_MAXV][ROWS_MAXP] = {GL_TILES(REF_GL_TILE)};

#ifdef GL2_TILES
#define DEF_GL2_TILE(P, V)                                                                     \
    static void ndhwc_gl2_##P##x##V(const ndhwc_rows_args *a) { ndhwc_gl_body(a, P, V, 2); }
#define REF_GL2_TILE(P, V) [V - 1][P - 1] = ndhwc_gl2_##P##x##V,
GL2_TILES(DEF_GL2_TILE)
static const ndhwc_rows_fn ndhwc_gl2_tiles[ROWS_MAXV][ROWS_MAXP] = {GL2_TILES(REF_GL2_TILE)};
#define GL_SPAN_VECTORS 2
#else
#define GL_SPAN_VECTORS 1
#endif

/* ---- the row ------------------------------------------------------------ */

/* The per-vector fields of a tile whose first channel is c0: lane masks
 * inside C_out and, for grouped lanes, each vector's input span. */
static void ndhwc_rows_vectors(const cpu_plan *pl, int64_t c0, int nvec, ndhwc_rows_args *a)
{
    const convt3d_shape *s = &pl->s;
    a->full = c0 + (int64_t)nvec * VL <= s->cout;
    for (int v = 0; v < nvec; v++) {
        const int64_t first = c0 + (int64_t)v * VL;
        const int lanes = (int)cpu_min64(VL, s->cout - first);
        a->keep[v] = v_mask_range(0, lanes);
        const int64_t g0 = first / s->cog, g1 = (first + lanes - 1) / s->cog;
        const int64_t len = (g1 - g0 + 1) * s->cig; /* <= GL_SPAN_VECTORS * VL (registry) */
        a->span0[v] = g0 * s->cig;
        a->span[v] = v_mask_range(0, (int)cpu_min64(VL, len));
        a->span_hi[v] = v_mask_range(0, (int)cpu_max64(0, cpu_min64(VL, len - VL)));
        int off[VL];
        for (int l = 0; l < VL; l++)
            off[l] = l < lanes ? (int)(((first + l) / s->cog - g0) * s->cig) : 0;
        a->lane_ic[v] = v_iload(off);
    }
}

/* The job's row, tile by tile: channel blocks of tile_b vectors, positions
 * in tiles of tile_a, each W phase on its own (tiles, the tap filter and
 * the output stride as in row_ndhwc). */
static void ndhwc_rows_run(const cpu_plan *pl, const cpu_row_job *job,
                           const ndhwc_rows_fn tiles[ROWS_MAXV][ROWS_MAXP])
{
    const convt3d_shape *s = &pl->s;
    const int P = pl->tile_a, VB = pl->tile_b;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    ndhwc_rows_args a;
    a.x = job->x;
    a.zeros = pl->zeros;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.in_w = s->in[2];
    a.xw = s->x_stride[4];
    a.cig = s->cig;
    a.cout_pad = pl->cout_pad;
    a.tap_stride = s->cig * pl->cout_pad;
    a.out_stride = sw < outw ? sw * ys4 : 0; /* one output a phase: no stride */
    cpu_tap *kw = job->scratch;
    for (int64_t c0 = 0; c0 < s->cout; c0 += (int64_t)VB * VL) {
        const int nvec = (int)cpu_min64(VB, (s->cout - c0 + VL - 1) / VL);
        ndhwc_rows_vectors(pl, c0, nvec, &a);
        a.w = job->w + c0;
        a.bias = job->bias ? job->bias + c0 : NULL;
        ndhwc_tile_iter it = ndhwc_tile_iter_of(pl, job, P);
        ndhwc_tile_at t;
        while (ndhwc_tile_next(pl, job, &it, kw, &t)) {
            a.nkw = t.nkw;
            a.kw = kw;
            a.j0 = t.j0;
            a.out = job->y + (t.j0 * sw + t.c) * ys4 + c0;
            a.npos = t.npos;
            tiles[nvec - 1][t.npos - 1](&a);
        }
    }
}

static void row_ndhwc_dw(const cpu_plan *pl, const cpu_row_job *job)
{
    ndhwc_rows_run(pl, job, ndhwc_dw_tiles);
}

static void row_ndhwc_gl(const cpu_plan *pl, const cpu_row_job *job)
{
#ifdef GL2_TILES
    if (pl->gl_spans == 2) {
        ndhwc_rows_run(pl, job, ndhwc_gl2_tiles);
        return;
    }
#endif
    ndhwc_rows_run(pl, job, ndhwc_gl_tiles);
}

/* The tiling policy (cpu/tiling.c) over this ISA's maxima for each tile,
 * then the tap list's scratch. */
static void plan_ndhwc_rows(cpu_plan *pl, int maxv, const int *pos_max)
{
    cpu_plan_set_tiling(pl, cpu_tiling_ndhwc_rows(&pl->s, VL, maxv, pos_max));
    pl->cout_pad = (pl->s.cout + VL - 1) / VL * VL;
    pl->scratch_bytes = (size_t)pl->s.k[2] * sizeof(cpu_tap);
}

static void plan_ndhwc_dw(cpu_plan *pl)
{
    static const int pos_max[DW_MAXV] = DW_POS_MAX;
    plan_ndhwc_rows(pl, DW_MAXV, pos_max);
}

/* A span of two vectors (where built) halves the positions of a tile. */
static void plan_ndhwc_gl(cpu_plan *pl)
{
    static const int pos_max[GL_MAXV] = GL_POS_MAX;
    pl->gl_spans = cpu_ndhwc_gl_span(&pl->s, VL) > VL ? 2 : 1;
#ifdef GL2_TILES
    static const int pos_max2[GL2_MAXV] = GL2_POS_MAX;
    if (pl->gl_spans == 2) {
        plan_ndhwc_rows(pl, GL2_MAXV, pos_max2);
        return;
    }
#endif
    plan_ndhwc_rows(pl, GL_MAXV, pos_max);
}

#endif /* CONVT3D_CPU_NDHWC_ROWS_H */
