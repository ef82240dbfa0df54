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

/* What a tile needs of one vector of output channels (the table of every
 * vector of C_out is built once an execute, ndhwc_lane_table): its lanes
 * inside C_out and, for grouped lanes, its input span. */
typedef struct ndhwc_lane_vec {
    vi lane_ic;              /* grouped lanes: each lane's channel offset in the span */
    int64_t span0;           /* where the span starts in a position's channels */
    vmask keep;              /* lanes inside C_out */
    vmask span, span_hi;     /* the span's lanes (span_hi: the lanes past VL) */
} ndhwc_lane_vec;

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
    const ndhwc_lane_vec *vec; /* the tile's first vector in the table */
    int full;                /* every lane of the tile is inside C_out */
    int stream;              /* full, VL-aligned: streaming stores */
} ndhwc_rows_args;

typedef void (*ndhwc_rows_fn)(const ndhwc_rows_args *a);

/* acc[p][v] = bias (or 0) for the tile's lanes. */
#define ROWS_INIT_ACC(A)                                                                       \
    CPU_UNROLL for (int v = 0; v < V; v++)                                                     \
    {                                                                                          \
        const vf b_ = (A)->bias ? v_loadu_mask((A)->bias + v * VL, (A)->vec[v].keep) : v_zero(); \
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
        float *o = a->out + p * a->out_stride;
        if (a->stream) {
            CPU_UNROLL for (int v = 0; v < V; v++)
                v_stream(o + v * VL, acc[p][v]);
        } else {
            CPU_UNROLL for (int v = 0; v < V; v++)
                v_storeu_mask(o + v * VL, acc[p][v], a->vec[v].keep);
        }
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
                    /* span0 is the vector's first channel (cig = cog = 1) */
                    const vf xv = full ? v_loadu(xp[p] + a->vec[v].span0)
                                       : v_loadu_mask(xp[p] + a->vec[v].span0, a->vec[v].keep);
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
                    xs[p][v] = v_loadu_mask(xp[p] + a->vec[v].span0, a->vec[v].span);
                    if (S == 2)
                        xh[p][v] = v_loadu_mask(xp[p] + a->vec[v].span0 + VL, a->vec[v].span_hi);
                }
            const float *wp = wr + a->kw[t].k * a->tap_stride;
            vi idx[ROWS_MAXV];
            CPU_UNROLL for (int v = 0; v < V; v++)
                idx[v] = a->vec[v].lane_ic;
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

/* Vector `first / VL` of C_out: its lanes inside C_out and, for grouped
 * lanes, its input span. */
static ndhwc_lane_vec ndhwc_lane_vec_of(const convt3d_shape *s, int64_t first)
{
    ndhwc_lane_vec t;
    const int lanes = (int)cpu_min64(VL, s->cout - first);
    t.keep = v_mask_range(0, lanes);
    const int64_t g0 = first / s->cog, g1 = (first + lanes - 1) / s->cog;
    const int64_t len = (g1 - g0 + 1) * s->cig; /* <= GL_SPAN_VECTORS * VL (registry) */
    t.span0 = g0 * s->cig;
    t.span = v_mask_range(0, (int)cpu_min64(VL, len));
    t.span_hi = v_mask_range(0, (int)cpu_max64(0, cpu_min64(VL, len - VL)));
    int off[VL];
    for (int l = 0; l < VL; l++)
        off[l] = l < lanes ? (int)(((first + l) / s->cog - g0) * s->cig) : 0;
    t.lane_ic = v_iload(off);
    return t;
}

/* The kernel scratch: the W tap list, then a flag and the table of every
 * vector of C_out (the same for every row: built by the thread's first row
 * of each execute, which finds the scratch zeroed, instead of its 16
 * divisions a vector at every row). */
#define ROWS_TABLE_AT(pl) (((size_t)(pl)->s.k[2] * sizeof(cpu_tap) + 63) / 64 * 64)

static const ndhwc_lane_vec *ndhwc_lane_table(const cpu_plan *pl, const cpu_row_job *job)
{
    char *base = (char *)job->scratch + ROWS_TABLE_AT(pl);
    ndhwc_lane_vec *table = (ndhwc_lane_vec *)(base + 64);
    if (!*(int *)base) {
        for (int64_t v = 0; v < pl->cout_pad / VL; v++)
            table[v] = ndhwc_lane_vec_of(&pl->s, v * VL);
        *(int *)base = 1;
    }
    return table;
}

/* Pointwise rows (one tap) take every channel block at a position before
 * the next positions: x is then read a tile of positions at a time.  Block
 * by block (the order for several taps, which keeps one block's weights in
 * L1 across the row) read 1 KB positions a line pair at a time in eight
 * passes over the row, at about half the bandwidth of a sequential read
 * (round 39, Zen 4: seed 41's random_28, 32 groups of 8 -> 8 at k1, 7.0 ->
 * 1.6 ms with the streaming stores below). */
static int ndhwc_rows_blocks_inner(const convt3d_shape *s)
{
    return s->k[0] * s->k[1] * s->k[2] == 1;
}

/* Streaming stores, for a large y: whole aligned vectors only, and every
 * line of a position written by one tile (blocks inner, blocks of whole
 * lines), so no line is left half written. */
static int ndhwc_rows_stream(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    return pl->stream && ndhwc_rows_blocks_inner(s) && s->cout % VL == 0 &&
           (size_t)pl->tile_b * VL * sizeof(float) % 64 == 0 &&
           s->y_stride[4] % VL == 0 && (uintptr_t)job->y % (VL * sizeof(float)) == 0;
}

/* Block i of the row's channel blocks (tile_b vectors each): a's fields
 * for it. */
static int ndhwc_rows_block(const cpu_plan *pl, const cpu_row_job *job,
                            const ndhwc_lane_vec *table, int64_t c0, ndhwc_rows_args *a)
{
    const convt3d_shape *s = &pl->s;
    const int nvec = (int)cpu_min64(pl->tile_b, (s->cout - c0 + VL - 1) / VL);
    a->vec = table + c0 / VL;
    a->full = c0 + (int64_t)nvec * VL <= s->cout;
    a->w = job->w + c0;
    a->bias = job->bias ? job->bias + c0 : NULL;
    return nvec;
}

/* The job's row, tile by tile: channel blocks of tile_b vectors, positions
 * in tiles of tile_a, each W phase on its own (tiles, the tap filter and
 * the output stride as in row_ndhwc); blocks outer, or inner for
 * pointwise rows (ndhwc_rows_blocks_inner). */
static void ndhwc_rows_run(const cpu_plan *pl, const cpu_row_job *job,
                           const ndhwc_rows_fn tiles[ROWS_MAXV][ROWS_MAXP])
{
    const convt3d_shape *s = &pl->s;
    const int P = pl->tile_a;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    const int64_t block = (int64_t)pl->tile_b * VL;
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
    a.stream = ndhwc_rows_stream(pl, job);
    const ndhwc_lane_vec *table = ndhwc_lane_table(pl, job);
    cpu_tap *kw = job->scratch;
    a.kw = kw;
    ndhwc_tile_at t;
    if (ndhwc_rows_blocks_inner(s)) {
        ndhwc_tile_iter it = ndhwc_tile_iter_of(pl, job, P);
        while (ndhwc_tile_next(pl, job, &it, kw, &t)) {
            a.nkw = t.nkw;
            a.j0 = t.j0;
            a.npos = t.npos;
            for (int64_t c0 = 0; c0 < s->cout; c0 += block) {
                const int nvec = ndhwc_rows_block(pl, job, table, c0, &a);
                a.out = job->y + (t.j0 * sw + t.c) * ys4 + c0;
                tiles[nvec - 1][t.npos - 1](&a);
            }
        }
        return;
    }
    for (int64_t c0 = 0; c0 < s->cout; c0 += block) {
        const int nvec = ndhwc_rows_block(pl, job, table, c0, &a);
        ndhwc_tile_iter it = ndhwc_tile_iter_of(pl, job, P);
        while (ndhwc_tile_next(pl, job, &it, kw, &t)) {
            a.nkw = t.nkw;
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
    pl->scratch_bytes = ROWS_TABLE_AT(pl) + 64 + (size_t)(pl->cout_pad / VL) * sizeof(ndhwc_lane_vec);
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
