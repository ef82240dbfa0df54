/* The NDHWC tile with the input channels in the vector lanes, for few
 * output channels a group (C_out/G <= ICL_MAXO).  Included by
 * cpu/phase_tile.h, over its vector vocabulary plus
 *
 *   v_hsum(v)                         the sum of v's lanes, in a fixed order
 *   ICL_MAXO, ICL_MAXP, ICL_POS_MAX, ICL_TILES(X)   tile shapes
 *
 * Why: the NDHWC tile of one group (row_ndhwc) puts the group's output
 * channels in the lanes, so with C_out/G = 1 it uses 1 lane of VL and pays
 * a broadcast for every FMA.  Here the reduction runs in the lanes instead:
 * x[position][ic .. ic + VL) is contiguous in NDHWC, and the weights are
 * packed [tap][oc < cog][ic < cigp] (cpu_plan.cigp) so that a tap's weights
 * of one output channel are contiguous over ic as well.  A tile is P
 * positions x O = C_out/G channels of one W phase, one accumulator vector
 * each; per VL input channels it loads P x vectors and O weight vectors for
 * P * O FMAs, and at the end each accumulator is summed across its lanes.
 *
 * Order of each output's sum: lane l sums input channels ic = l (mod VL)
 * over the (input row, W tap) pairs in order, then the lanes are added by
 * v_hsum's fixed tree, then the bias.  Which tile computes an output never
 * changes that, so the results do not depend on the thread count.
 * Positions outside the input row read the plan's zero row. */
#ifndef CONVT3D_CPU_ICLANES_H
#define CONVT3D_CPU_ICLANES_H

typedef struct icl_tile_args {
    const float *x;          /* x at (n, group's first channel) */
    const float *w;          /* packed weights of the group, [tap][oc < cog][ic < cigp] */
    const float *bias;       /* bias of the group, or NULL */
    const float *zeros;      /* at least cigp zeros */
    const cpu_row_tap *rt;
    int64_t nrt;
    const cpu_tap *kw;
    int64_t nkw;
    int64_t j0, in_w, xw;    /* first position; input width; x stride along w */
    int64_t cig, cigp;       /* cigp: packed weights between output channels */
    float *out;              /* y at the tile's first position, channel 0 of the group */
    int64_t out_stride;      /* between positions: s_w * C_out (NDHWC), s_w (NCDHW) */
    int64_t out_ch;          /* between output channels: 1 (NDHWC), a plane (NCDHW) */
    int64_t npos;            /* positions to write */
    vmask tail;              /* lanes of the last input-channel vector inside C_in/G */
} icl_tile_args;

typedef void (*icl_tile_fn)(const icl_tile_args *a);

/* acc[p][o] += x[p][ic .. ic + VL) * w[o][ic .. ic + VL), x loaded through
 * the tail mask when MASKED (the weights are zero there already). */
CPU_INLINE void icl_step(vf acc[ICL_MAXP][ICL_MAXO], const float *const xp[ICL_MAXP],
                         const float *wp, int64_t ic, int64_t cigp, vmask tail, int masked,
                         const int P, const int O)
{
    vf wv[ICL_MAXO];
    CPU_UNROLL for (int o = 0; o < O; o++)
        wv[o] = v_loadu(wp + o * cigp + ic);
    CPU_UNROLL for (int p = 0; p < P; p++) {
        const vf xv = masked ? v_loadu_mask(xp[p] + ic, tail) : v_loadu(xp[p] + ic);
        CPU_UNROLL for (int o = 0; o < O; o++)
            acc[p][o] = v_fma(xv, wv[o], acc[p][o]);
    }
}

CPU_INLINE void icl_tile_body(const icl_tile_args *a, const int P, const int O)
{
    vf acc[ICL_MAXP][ICL_MAXO];
    CPU_UNROLL for (int p = 0; p < P; p++)
        CPU_UNROLL for (int o = 0; o < O; o++)
            acc[p][o] = v_zero();
    const int64_t cig = a->cig, cigp = a->cigp, whole = cig / VL * VL, tap_w = O * cigp;
    for (int64_t r = 0; r < a->nrt; r++) {
        const float *xr = a->x + a->rt[r].x_off;
        const float *wr = a->w + a->rt[r].w_tap * tap_w;
        for (int64_t t = 0; t < a->nkw; t++) {
            const float *xp[ICL_MAXP];
            CPU_UNROLL for (int p = 0; p < P; p++) {
                const int64_t iw = a->j0 + p + a->kw[t].delta;
                xp[p] = iw >= 0 && iw < a->in_w ? xr + iw * a->xw : a->zeros;
            }
            const float *wp = wr + a->kw[t].k * tap_w;
            for (int64_t ic = 0; ic < whole; ic += VL)
                icl_step(acc, xp, wp, ic, cigp, a->tail, 0, P, O);
            if (whole < cig)
                icl_step(acc, xp, wp, whole, cigp, a->tail, 1, P, O);
        }
    }
    CPU_UNROLL for (int p = 0; p < P; p++) {
        if (p >= a->npos)
            break;
        CPU_UNROLL for (int o = 0; o < O; o++) {
            const float sum = v_hsum(acc[p][o]);
            a->out[p * a->out_stride + o * a->out_ch] = a->bias ? sum + a->bias[o] : sum;
        }
    }
}

#define DEF_ICL_TILE(P, O)                                                                     \
    static void icl_tile_##P##x##O(const icl_tile_args *a) { icl_tile_body(a, P, O); }
ICL_TILES(DEF_ICL_TILE)
#define REF_ICL_TILE(P, O) [O - 1][P - 1] = icl_tile_##P##x##O,
static const icl_tile_fn icl_tiles[ICL_MAXO][ICL_MAXP] = {ICL_TILES(REF_ICL_TILE)};

/* The tiles of the job's row: positions split as row_ndhwc does
 * (ndhwc_tile_next), each W phase on its own; a's fields but the
 * phase's taps, first position, output and count set by the caller.  y0 is
 * y at the row's position 0, ypos the distance between positions. */
static void icl_row_tiles(const cpu_plan *pl, const cpu_row_job *job, icl_tile_args *a,
                          float *y0, int64_t ypos)
{
    const convt3d_shape *s = &pl->s;
    const int64_t sw = s->s[2];
    cpu_tap *kw = job->scratch;
    ndhwc_tile_iter it = ndhwc_tile_iter_of(pl, job, pl->tile_a);
    ndhwc_tile_at t;
    while (ndhwc_tile_next(pl, job, &it, kw, &t)) {
        a->nkw = t.nkw;
        a->kw = kw;
        a->j0 = t.j0;
        a->out = y0 + (t.j0 * sw + t.c) * ypos;
        a->npos = t.npos;
        icl_tiles[s->cog - 1][t.npos - 1](a);
    }
}

/* The fields of a tile's arguments common to both layouts. */
static void icl_args_init(const cpu_plan *pl, const cpu_row_job *job, icl_tile_args *a)
{
    const convt3d_shape *s = &pl->s;
    a->w = job->w;
    a->bias = job->bias;
    a->zeros = pl->zeros;
    a->nrt = job->nrt;
    a->in_w = s->in[2];
    a->cig = s->cig;
    a->cigp = pl->cigp;
    a->tail = v_mask_range(0, (int)(s->cig % VL));
}

static void row_ndhwc_icl(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int64_t ys4 = s->y_stride[4];
    icl_tile_args a;
    icl_args_init(pl, job, &a);
    a.x = job->x;
    a.rt = job->rt;
    a.xw = s->x_stride[4];
    a.out_stride = s->s[2] < s->out[2] ? s->s[2] * ys4 : 0; /* one output a phase: no stride */
    a.out_ch = 1;
    icl_row_tiles(pl, job, &a, job->y, ys4);
}

/* ---- NCDHW: the same tiles over input rows transposed to [w][ic] --------- */

/* NCDHW x holds an input row's channels a plane apart; the tiles want
 * x[w][ic .. ic + VL) contiguous.  So each input row a job reads is copied
 * once, transposed to [w < in_w][ic < cigp], into a per-thread cache of
 * ICL_ROW_SLOTS(s) rows (the least recently used row the current output row
 * does not read makes room), which neighbouring output rows of a work item
 * share (those with kH > sH read the same input rows).  Each cache row is
 * tagged by where its source row lies in x, which identifies it within
 * one execute (the driver zeroes the scratch at the start of each). */
typedef struct icl_cache_tag {
    const float *src;
    int64_t stamp; /* output row that last used it */
} icl_cache_tag;

/* Twice the most rows one output row reads: room for the next row's. */
static int64_t icl_row_slots(const convt3d_shape *s) { return 2 * s->k[0] * s->k[1]; }

/* Scratch: the tap list, the row's (kd, kh) pairs pointing into the cache,
 * the cache's clock and tags, then its rows. */
static size_t icl_pairs_offset(const convt3d_shape *s)
{
    return ((size_t)s->k[2] * sizeof(cpu_tap) + 63) / 64 * 64;
}

static size_t icl_cache_offset(const convt3d_shape *s)
{
    const size_t pairs = (size_t)(s->k[0] * s->k[1]) * sizeof(cpu_row_tap);
    return icl_pairs_offset(s) + (pairs + 63) / 64 * 64;
}

static size_t icl_rows_offset(const convt3d_shape *s)
{
    const size_t header = sizeof(int64_t) + (size_t)icl_row_slots(s) * sizeof(icl_cache_tag);
    return icl_cache_offset(s) + (header + 63) / 64 * 64;
}

/* dst[w][ic] = src[ic * plane + w] for w < in_w, ic < cig: VL x VL blocks
 * through v_transpose, the edge blocks too (masked loads and stores).  A
 * scalar copy cost about a vector FMA an element, as much as the tiles
 * save; with in_w = 30 and VL = 16 the scalar W edge held 14 of 30 columns
 * and the copy took twice the tiles' time (perf, Zen 4, bench/NOTES.md
 * round 20).  Lanes of dst past cig are left as they are: the tiles read
 * them through the tail mask only. */
static void icl_transpose_row(const float *src, int64_t plane, int64_t in_w, int64_t cig,
                              int64_t cigp, float *dst)
{
    for (int64_t ic0 = 0; ic0 < cig; ic0 += VL) {
        const int nic = (int)cpu_min64(VL, cig - ic0);
        const vmask keep_ic = v_mask_range(0, nic);
        for (int64_t w0 = 0; w0 < in_w; w0 += VL) {
            const int nw = (int)cpu_min64(VL, in_w - w0);
            const vmask in_row = v_mask_range(0, nw);
            vf r[VL];
            CPU_UNROLL for (int i = 0; i < VL; i++)
                r[i] = i < nic ? v_loadu_mask(src + (ic0 + i) * plane + w0, in_row) : v_zero();
            v_transpose(r);
            CPU_UNROLL for (int q = 0; q < VL; q++)
                if (q < nw)
                    v_storeu_mask(dst + (w0 + q) * cigp + ic0, r[q], keep_ic);
        }
    }
}

/* The cache row holding the input row at src, transposed in if absent. */
static int64_t icl_cached_row(const cpu_plan *pl, const cpu_row_job *job, const float *src,
                              int64_t now)
{
    const convt3d_shape *s = &pl->s;
    const int64_t slots = icl_row_slots(s);
    icl_cache_tag *tag =
        (icl_cache_tag *)((char *)job->scratch + icl_cache_offset(s) + sizeof(int64_t));
    int64_t victim = -1;
    for (int64_t i = 0; i < slots; i++) {
        if (tag[i].src == src) {
            tag[i].stamp = now;
            return i;
        }
        if (tag[i].stamp < now && (victim < 0 || tag[i].stamp < tag[victim].stamp))
            victim = i;
    }
    /* victim >= 0: an output row reads at most half the slots */
    float *rows = (float *)((char *)job->scratch + icl_rows_offset(s));
    icl_transpose_row(src, job->x_plane, s->in[2], s->cig, pl->cigp,
                      rows + victim * s->in[2] * pl->cigp);
    tag[victim].src = src;
    tag[victim].stamp = now;
    return victim;
}

static void row_ncdhw_icl(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    int64_t *now = (int64_t *)((char *)job->scratch + icl_cache_offset(s));
    ++*now; /* from 1: the zeroed tags' stamp 0 is older */
    cpu_row_tap *rt = (cpu_row_tap *)((char *)job->scratch + icl_pairs_offset(s));
    icl_tile_args a;
    icl_args_init(pl, job, &a);
    const int64_t row_floats = s->in[2] * pl->cigp;
    for (int64_t r = 0; r < job->nrt; r++) {
        rt[r].x_off = icl_cached_row(pl, job, job->x + job->rt[r].x_off, *now) * row_floats;
        rt[r].w_tap = job->rt[r].w_tap;
    }
    a.x = (const float *)((char *)job->scratch + icl_rows_offset(s));
    a.rt = rt;
    a.xw = pl->cigp;
    a.out_stride = s->s[2] < s->out[2] ? s->s[2] : 0;
    a.out_ch = s->y_stride[1];
    icl_row_tiles(pl, job, &a, job->y, 1);
}

/* The tiling policy (cpu/tiling.c) over this ISA's maxima, then the tap
 * list's scratch; the weights padded to whole vectors of input channels. */
static void plan_ndhwc_icl(cpu_plan *pl)
{
    static const int pos_max[ICL_MAXO] = ICL_POS_MAX;
    cpu_plan_set_tiling(pl, cpu_tiling_ndhwc_icl(&pl->s, pos_max));
    pl->cigp = (pl->s.cig + VL - 1) / VL * VL;
    pl->scratch_bytes = (size_t)pl->s.k[2] * sizeof(cpu_tap);
}

/* As NDHWC, plus the transposed-row cache in the scratch (absurd sizes,
 * which the registry's rule keeps away from the walk, ask for more than any
 * allocation gives: the execute fails cleanly). */
static void plan_ncdhw_icl(cpu_plan *pl)
{
    plan_ndhwc_icl(pl);
    const convt3d_shape *s = &pl->s;
    int64_t floats;
    if (__builtin_mul_overflow(icl_row_slots(s) * s->in[2], pl->cigp, &floats) ||
        floats > ((int64_t)1 << 45))
        floats = (int64_t)1 << 45;
    pl->scratch_bytes = icl_rows_offset(s) + (size_t)floats * sizeof(float);
}

#endif /* CONVT3D_CPU_ICLANES_H */
