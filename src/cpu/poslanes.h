/* The position-lane NDHWC tile, included by cpu/phase_tile.h over its
 * vector vocabulary plus vi, v_iload, v_iadd, v_iset1 and v_permute (as
 * cpu/ndhwc_rows.h), and
 *
 *   PLN_MAXQ, PLN_TILES(X)   the tiles built: X(Q, 0) for Q vectors
 *
 * Why: the gather tile of one group (cpu/phase_tile.h) puts a group's
 * output channels in its lanes, so with C_out/G of 2-8 it uses an eighth to
 * a half of a 16-lane vector, and broadcasts x once a position.  Here a
 * vector holds VL / cw positions of cw lanes each (cw: the smallest power of
 * two holding C_out/G, cpu_ndhwc_pl_width), so one multiply-add serves that
 * many positions.  Consecutive positions of a W phase read consecutive
 * inputs, so a vector's positions read one short span of x at each tap
 * (with one group, their C_in/G channels side by side); it loads once a tap
 * and each input channel reaches the lanes by one permute (lane l takes
 * channel ic of its position l / cw), as the grouped-lanes tile does across
 * groups.  The weights of a tap and channel are the group's row of C_out/G
 * (zero-padded to whole vectors in the packing), repeated over the
 * positions by one permute.
 *
 * Each output element is summed by one tile in a fixed order (input rows,
 * then W taps, then input channels): results do not depend on the thread
 * count.  Positions outside the input row read zeros through the span's
 * lane mask. */
#ifndef CONVT3D_CPU_POSLANES_H
#define CONVT3D_CPU_POSLANES_H

typedef struct pln_tile_args {
    const float *x;          /* x at (n, group's first channel) */
    const float *w;          /* packed weights of the group ([tap][ic][cogp]) */
    const float *bias;       /* padded bias of the group, or NULL */
    const cpu_row_tap *rt;
    int64_t nrt;
    const cpu_tap *kw;
    int64_t nkw;
    int64_t j0, in_w, xw;    /* first position; input width; x stride along w */
    int64_t cig, tap_stride, cogp;
    int64_t ppv, cw, cog;    /* positions a vector, lanes a position, channels */
    float *out;              /* y at the tile's first position, the group's channel 0 */
    int64_t out_stride;      /* between positions: s_w * C_out */
    int64_t npos;            /* positions to write */
    int contiguous;          /* out_stride == cw == cog: a vector's positions are one run */
    vi lane_x;               /* lane l: (l / cw) * xw, its position's place in the span */
    vi lane_w;               /* lane l: l % cw, its channel */
    vmask span;              /* the lanes of a whole span: (ppv - 1) * xw + cig */
} pln_tile_args;

typedef void (*pln_tile_fn)(const pln_tile_args *a);

/* p + n floats as an address, n possibly negative: the masked loads and
 * stores below address a span or a vector from before its first lane in
 * use, and touch only the lanes they keep (no fault, no access). */
CPU_INLINE const float *pln_at(const float *p, int64_t n)
{
    return (const float *)((uintptr_t)p + (uintptr_t)(n * (int64_t)sizeof(float)));
}

/* The span of the vector whose first position reads input b of row xr:
 * only the positions inside the row [0, in_w) load, the others are zero. */
CPU_INLINE vf pln_border_span(const pln_tile_args *a, const float *xr, int64_t b)
{
    const int64_t lo = cpu_max64(0, -b), hi = cpu_min64(a->ppv, a->in_w - b);
    if (hi <= lo)
        return v_zero();
    return v_loadu_mask(pln_at(xr, b * a->xw),
                        v_mask_range((int)(lo * a->xw), (int)((hi - 1) * a->xw + a->cig)));
}

CPU_INLINE void pln_store(const pln_tile_args *a, vf acc[PLN_MAXQ], const int Q)
{
    const int64_t ppv = a->ppv, cw = a->cw;
    CPU_UNROLL for (int q = 0; q < Q; q++) {
        const int64_t p0 = q * ppv;
        if (p0 >= a->npos)
            break;
        const int n = (int)cpu_min64(ppv, a->npos - p0);
        if (a->contiguous) {
            v_storeu_mask(a->out + p0 * cw, acc[q], v_mask_range(0, (int)(n * cw)));
            continue;
        }
        for (int p = 0; p < n; p++)
            v_storeu_mask((float *)pln_at(a->out, (p0 + p) * a->out_stride - p * cw), acc[q],
                          v_mask_range((int)(p * cw), (int)(p * cw + a->cog)));
    }
}

CPU_INLINE void pln_tile_body(const pln_tile_args *a, const int Q)
{
    vf acc[PLN_MAXQ];
    const vf b0 = a->bias ? v_permute(v_loadu(a->bias), a->lane_w) : v_zero();
    CPU_UNROLL for (int q = 0; q < Q; q++)
        acc[q] = b0;
    const int64_t cig = a->cig, cogp = a->cogp, tap_stride = a->tap_stride, ppv = a->ppv,
                  xw = a->xw;
    const vi one = v_iset1(1);
    for (int64_t r = 0; r < a->nrt; r++) {
        const float *xr = a->x + a->rt[r].x_off;
        const float *wr = a->w + a->rt[r].w_tap * tap_stride;
        for (int64_t t = 0; t < a->nkw; t++) {
            const int64_t b = a->j0 + a->kw[t].delta;
            vf xs[PLN_MAXQ];
            /* a vector wholly inside the row loads its span as is */
            CPU_UNROLL for (int q = 0; q < Q; q++) {
                const int64_t bq = b + q * ppv;
                xs[q] = bq >= 0 && bq + ppv <= a->in_w ? v_loadu_mask(xr + bq * xw, a->span)
                                                       : pln_border_span(a, xr, bq);
            }
            const float *wp = wr + a->kw[t].k * tap_stride;
            vi idx = a->lane_x;
            for (int64_t ic = 0; ic < cig; ic++) {
                const vf wv = v_permute(v_loadu(wp), a->lane_w);
                CPU_UNROLL for (int q = 0; q < Q; q++)
                    acc[q] = v_fma(v_permute(xs[q], idx), wv, acc[q]);
                idx = v_iadd(idx, one);
                wp += cogp;
            }
        }
    }
    pln_store(a, acc, Q);
}

#define DEF_PLN_TILE(Q, U)                                                                     \
    static void pln_tile_##Q(const pln_tile_args *a) { pln_tile_body(a, Q); }
#define REF_PLN_TILE(Q, U) [Q - 1] = pln_tile_##Q,
PLN_TILES(DEF_PLN_TILE)
static const pln_tile_fn pln_tiles[PLN_MAXQ] = {PLN_TILES(REF_PLN_TILE)};

/* The lane tables of a plan's shape (cw a power of two: no division, the
 * row calls this once and may do little else). */
static void pln_lanes(const convt3d_shape *s, int64_t cw, pln_tile_args *a)
{
    const int shift = __builtin_ctzll((unsigned long long)cw), xw = (int)s->x_stride[4];
    int lx[VL], lw[VL];
    for (int l = 0; l < VL; l++) {
        lx[l] = (l >> shift) * xw;
        lw[l] = l & (int)(cw - 1);
    }
    a->lane_x = v_iload(lx);
    a->lane_w = v_iload(lw);
}

/* The job's row: positions in tiles of up to tile_a (tile_b vectors), each
 * W phase on its own (the split, the tap filter and the output stride as in
 * row_ndhwc). */
static void row_ndhwc_pl(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    pln_tile_args a;
    a.cw = cpu_ndhwc_pl_width(s, VL);
    a.ppv = VL / a.cw;
    const int pshift = __builtin_ctzll((unsigned long long)a.ppv); /* no division a tile */
    a.cog = s->cog;
    pln_lanes(s, a.cw, &a);
    a.x = job->x;
    a.w = job->w;
    a.bias = job->bias;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.in_w = s->in[2];
    a.xw = s->x_stride[4];
    a.cig = s->cig;
    a.cogp = pl->cogp;
    a.tap_stride = s->cig * pl->cogp;
    a.span = v_mask_range(0, (int)((a.ppv - 1) * a.xw + a.cig));
    a.out_stride = sw < outw ? sw * ys4 : 0; /* one output a phase: no stride */
    a.contiguous = a.out_stride == a.cw && a.cog == a.cw;
    cpu_tap *kw = job->scratch;
    ndhwc_tile_iter it = ndhwc_tile_iter_of(pl, job, pl->tile_a);
    ndhwc_tile_at t;
    while (ndhwc_tile_next(pl, job, &it, kw, &t)) {
        a.nkw = t.nkw;
        a.kw = kw;
        a.j0 = t.j0;
        a.out = job->y + (t.j0 * sw + t.c) * ys4;
        a.npos = t.npos;
        pln_tiles[((t.npos + a.ppv - 1) >> pshift) - 1](&a);
    }
}

static void plan_ndhwc_pl(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, cpu_tiling_ndhwc_pl(&pl->s, VL, PLN_MAXQ));
    pl->scratch_bytes = (size_t)pl->s.k[2] * sizeof(cpu_tap);
}

#endif /* CONVT3D_CPU_POSLANES_H */
