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
    int64_t out_stride;      /* between positions: s_w * C_out */
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
            a->out[p * a->out_stride + o] = a->bias ? sum + a->bias[o] : sum;
        }
    }
}

#define DEF_ICL_TILE(P, O)                                                                     \
    static void icl_tile_##P##x##O(const icl_tile_args *a) { icl_tile_body(a, P, O); }
ICL_TILES(DEF_ICL_TILE)
#define REF_ICL_TILE(P, O) [O - 1][P - 1] = icl_tile_##P##x##O,
static const icl_tile_fn icl_tiles[ICL_MAXO][ICL_MAXP] = {ICL_TILES(REF_ICL_TILE)};

/* The job's row: positions split into tiles as row_ndhwc does
 * (ndhwc_row_split_of), each W phase on its own. */
static void row_ndhwc_icl(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int P = pl->tile_a, O = (int)s->cog;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    const cpu_dim_phases *pw = &pl->ph[2];
    icl_tile_args a;
    a.x = job->x;
    a.w = job->w;
    a.bias = job->bias;
    a.zeros = pl->zeros;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.in_w = s->in[2];
    a.xw = s->x_stride[4];
    a.cig = s->cig;
    a.cigp = pl->cigp;
    a.out_stride = sw < outw ? sw * ys4 : 0; /* one output a phase: no stride */
    a.tail = v_mask_range(0, (int)(s->cig % VL));
    cpu_tap *kw = job->scratch;
    const ndhwc_row_split rs = ndhwc_row_split_of(pl, job, P);
    for (int64_t i = 0; i < rs.ntile; i++)
        for (int64_t c = 0; c < pw->nphase; c++) {
            const ndhwc_row_tile rtile = ndhwc_row_tile_of(pl, job, &rs, i, c);
            if (rtile.npos <= 0)
                continue;
            a.nkw = select_row_taps(pw, c, rtile.j0, rtile.npos, a.in_w, kw);
            a.kw = kw;
            a.j0 = rtile.j0;
            a.out = job->y + (rtile.j0 * sw + c) * ys4;
            a.npos = rtile.npos;
            icl_tiles[O - 1][rtile.npos - 1](&a);
        }
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

#endif /* CONVT3D_CPU_ICLANES_H */
