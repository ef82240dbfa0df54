/* The W-lane NCDHW tile on NDHWC data, included by cpu/phase_tile.h after
 * the tile (ncdhw_row_into) and v_transpose.  Not installed.
 *
 * Why: with few output channels a group, NDHWC tiles with the channels in
 * their lanes leave lanes idle or, across groups, cannot broadcast x, while
 * the W-lane tile fills its lanes along W (registry.c has the rule).  So a
 * row's input rows are transposed, one group's C_in/G channels by W, into
 * channel-major rows of a per-thread cache (the NCDHW row packing's slots,
 * kept here because the kernel, not the driver, must transpose), the tile
 * runs on them unchanged, and each chunk of its output goes through a
 * per-thread buffer of NCDHW rows that is transposed into y, a batch of
 * groups at a time (tr_batch) so that whole lines of y can be streamed.  Every output
 * element is still summed by one tile in the tile's fixed order: the
 * result is bitwise the NCDHW kernel's, for any thread count.
 *
 * The kernel takes whole rows across every group (cpu_kernel.all_groups,
 * with group_blocks: the weights stay in the W-lane tile's blocks, a group
 * w_group apart) and runs the groups of a chunk one after the other: a
 * group's few channels are a fraction of each 64-byte line of NDHWC y, and
 * rows of one group at a time (items far apart in time) would bring every
 * line in from memory once per group.
 *
 * The cache is keyed by the input row's address in x, unique within an
 * execute; the driver zeroes the scratch at the start of each execute, so
 * no key survives into another (and the margins around each slot's data
 * stay zero: only the data is ever written). */

typedef struct tr_tag {
    const float *src; /* the x row the slot holds; NULL: none */
    int64_t stamp;    /* output row that last used it */
} tr_tag;

/* Groups whose output channels are transposed into y together: the fewest
 * whose channels fill whole vectors (lcm(C_out/G, VL) channels, at most all
 * the groups), so each position's part of y is whole VL-float vectors, whole
 * 64-byte lines where y is aligned, and can be streamed (tr_rows_out): the
 * masked stores of a single group's few channels made every line of y be
 * read for ownership first (round 12c: the output transpose was 24% of the
 * time).  Fewer than all groups keep the output buffer small (below VL * VL
 * channel rows) for any number of groups. */
static int64_t tr_batch(const convt3d_shape *s)
{
    return cpu_ndhwc_tr_batch(s, VL);
}

/* The kernel's scratch: the W-lane tile's own (prepared chunks and tile
 * buffer, first: ncdhw_row_into reads it at job->scratch), the row counter,
 * the tags and the slots (tr_slots of each group, group by group), the
 * row's taps into the slots, the output buffer (a batch's channel rows). */
typedef struct tr_layout {
    size_t tile, now, tags, rows, rt, out, total;
} tr_layout;

static size_t tr_round64(size_t n) { return (n + 63) / 64 * 64; }

static tr_layout tr_layout_of(const cpu_plan *pl)
{
    const convt3d_shape *s = &pl->s;
    tr_layout l;
    const size_t tile_buf = (size_t)(2 * pl->tile_b * pl->chunk) * sizeof(float);
    l.tile = tr_round64(ncdhw_prep_bytes(pl) + tile_buf);
    l.now = l.tile;
    l.tags = l.now + 64;
    const size_t slots = (size_t)(pl->tr_slots * s->groups);
    l.rows = l.tags + tr_round64(slots * sizeof(tr_tag));
    l.rt = l.rows + tr_round64(slots * (size_t)(s->cig * pl->tr_row) * sizeof(float));
    l.out = l.rt + tr_round64((size_t)(s->k[0] * s->k[1]) * sizeof(cpu_row_tap));
    const size_t out_rows = (size_t)(tr_batch(s) * s->cog);
    l.total = l.out + tr_round64(out_rows * (size_t)pl->tr_out_row * sizeof(float));
    return l;
}

/* The transposes fold F = VL / cw blocks of VL positions into one VL x VL
 * transpose, cw lanes of channels each (cw: the smallest power of two
 * holding the channels, at most VL): with 8 channels a group and 16 lanes,
 * two blocks a transpose instead of one with half its rows empty.  Lane
 * b * cw + c of a position vector is channel c of block b, reached by
 * masked loads and stores addressed b * cw floats back (never before the
 * array: position b * VL + p lies at least b * VL elements in). */
static int tr_fold_width(int64_t nc)
{
    int cw = 1;
    while (cw < nc && cw < VL)
        cw *= 2;
    return cw;
}

/* dst[c * row + w] = src[w * xs + c] for c < nc, w < nw (the masked loads
 * read nothing past the data; v_or merges the blocks' lanes exactly). */
static void tr_rows_in(float *dst, int64_t row, const float *src, int64_t xs, int64_t nc,
                       int64_t nw)
{
    const int cw = tr_fold_width(nc), F = VL / cw;
    for (int64_t c0 = 0; c0 < nc; c0 += cw) {
        const int cn = (int)cpu_min64(cw, nc - c0);
        for (int64_t w0 = 0; w0 < nw; w0 += (int64_t)F * VL) {
            vf t[VL];
            CPU_UNROLL for (int p = 0; p < VL; p++)
                t[p] = v_zero();
            for (int b = 0; b < F && w0 + b * VL < nw; b++) {
                const int64_t wb = w0 + b * VL;
                const int wn = (int)cpu_min64(VL, nw - wb);
                const vmask m = v_mask_range(b * cw, b * cw + cn);
                const float *sb = src + wb * xs + c0 - b * cw;
                CPU_UNROLL for (int p = 0; p < VL; p++)
                    if (p < wn)
                        t[p] = v_or(t[p], v_loadu_mask(sb + p * xs, m));
            }
            v_transpose(t); /* t[b * cw + c]: channel c0 + c at positions wb .. */
            for (int b = 0; b < F && w0 + b * VL < nw; b++) {
                const int64_t wb = w0 + b * VL;
                const vmask wm = v_mask_range(0, (int)cpu_min64(VL, nw - wb));
                CPU_UNROLL for (int q = 0; q < VL; q++)
                    if (q >= b * cw && q < b * cw + cn)
                        v_storeu_mask(dst + (c0 + q - b * cw) * row + wb, t[q], wm);
            }
        }
    }
}

/* One position's channels into y: streamed when the batch can be
 * (tr_can_stream: then cw = cn = VL, b = 0 and cm is every lane), else
 * through the lane mask.  stream is the same for the whole call, so the
 * branch is unswitched out of the loops. */
static inline void tr_store(float *y, vf v, vmask cm, int stream)
{
    if (stream)
        v_stream(y, v);
    else
        v_storeu_mask(y, v, cm);
}

/* y[p * ys + c] = buf[c * row + p] for c < nc, p < np: the inverse.  With
 * stream (tr_can_stream: nc and ys multiples of VL, y VL-aligned) every
 * store is a whole aligned vector and goes out non-temporal. */
static void tr_rows_out(float *y, int64_t ys, const float *buf, int64_t row, int64_t nc,
                        int64_t np, int stream)
{
    const int cw = tr_fold_width(nc), F = VL / cw;
    int shift = 0;
    while ((1 << shift) < cw)
        shift++;
    for (int64_t c0 = 0; c0 < nc; c0 += cw) {
        const int cn = (int)cpu_min64(cw, nc - c0);
        for (int64_t p0 = 0; p0 < np; p0 += (int64_t)F * VL) {
            vmask pm[VL];
            for (int b = 0; b < F; b++)
                pm[b] = v_mask_range(0, (int)cpu_min64(VL, cpu_max64(np - p0 - b * VL, 0)));
            vf t[VL];
            CPU_UNROLL for (int q = 0; q < VL; q++) {
                const int b = q >> shift, c = q & (cw - 1);
                t[q] = b < F && c < cn && p0 + b * VL < np
                           ? v_loadu_mask(buf + (c0 + c) * row + p0 + b * VL, pm[b])
                           : v_zero();
            }
            v_transpose(t); /* t[p]: lanes b * cw + c, channel c0 + c at p0 + b * VL + p */
            for (int b = 0; b < F && p0 + b * VL < np; b++) {
                const int64_t pb = p0 + b * VL;
                const int pn = (int)cpu_min64(VL, np - pb);
                const vmask cm = v_mask_range(b * cw, b * cw + cn);
                float *yb = y + pb * ys + c0 - b * cw;
                CPU_UNROLL for (int p = 0; p < VL; p++) {
                    if (p < pn)
                        tr_store(yb + p * ys, t[p], cm, stream);
                }
            }
        }
    }
}

/* Whether a batch's nc channels at y (positions ys apart) can be streamed:
 * the plan streams (a y far larger than the caches) and every position's
 * channels are whole aligned vectors, so no line is written partly by a
 * plain store next to streamed ones (phase_tile.h: that costs more than
 * streaming saves). */
static int tr_can_stream(const cpu_plan *pl, const float *y, int64_t ys, int64_t nc)
{
    return pl->stream && nc % VL == 0 && ys % VL == 0 &&
           (uintptr_t)y % (VL * sizeof(float)) == 0;
}

/* The slot holding x row src, transposed in when it is not there yet into
 * the least recently used slot the current output row does not use (one
 * exists: a row needs at most tr_slots, cpu_ndhwc_tr_rows). */
static int64_t tr_slot(const cpu_plan *pl, tr_tag *tag, float *rows, int64_t now,
                       const float *src)
{
    const convt3d_shape *s = &pl->s;
    int64_t victim = -1;
    for (int64_t i = 0; i < pl->tr_slots; i++) {
        if (tag[i].src == src) {
            tag[i].stamp = now;
            return i;
        }
        if (tag[i].stamp < now && (victim < 0 || tag[i].stamp < tag[victim].stamp))
            victim = i;
    }
    tr_rows_in(rows + victim * s->cig * pl->tr_row + pl->tr_left, pl->tr_row, src,
               s->x_stride[4], s->cig, s->in[2]);
    tag[victim].src = src;
    tag[victim].stamp = now;
    return victim;
}

static void row_ndhwc_tr(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const tr_layout l = tr_layout_of(pl);
    char *base = job->scratch;
    int64_t *now = (int64_t *)(base + l.now);
    tr_tag *tags = (tr_tag *)(base + l.tags);
    float *rows = (float *)(base + l.rows), *out = (float *)(base + l.out);
    cpu_row_tap *rt = (cpu_row_tap *)(base + l.rt);
    const int64_t slot_floats = s->cig * pl->tr_row, sw = s->s[2], outw = s->out[2];
    const int64_t ys4 = s->y_stride[4], batch = tr_batch(s);
    ++*now;
    cpu_row_job j = *job;
    j.x_plane = pl->tr_row;
    j.w_lo = -pl->tr_left;
    j.w_hi = pl->tr_row - pl->tr_left;
    j.rt = rt;
    for (int64_t j0 = job->j0; j0 < job->j1; j0 += pl->chunk) {
        j.j0 = j0;
        j.j1 = cpu_min64(job->j1, j0 + pl->chunk);
        /* the chunk's outputs: every phase's positions from j0 * sw */
        const int64_t o0 = j0 * sw, n = cpu_min64(j.j1 * sw, outw) - o0;
        for (int64_t g0 = 0; g0 < s->groups; g0 += batch) {
            const int64_t gn = cpu_min64(batch, s->groups - g0);
            for (int64_t g = g0; g < g0 + gn; g++) {
                tr_tag *tag = tags + g * pl->tr_slots;
                float *grows = rows + g * pl->tr_slots * slot_floats;
                for (int64_t r = 0; r < job->nrt; r++) {
                    const float *src = job->x + g * s->cig * s->x_stride[1] + job->rt[r].x_off;
                    rt[r].w_tap = job->rt[r].w_tap;
                    rt[r].x_off = tr_slot(pl, tag, grows, *now, src) * slot_floats;
                }
                j.x = grows + pl->tr_left; /* input w = 0 of the group's slot 0, channel 0 */
                j.w = job->w + g * pl->w_group;
                j.bias = job->bias ? job->bias + g * pl->cogp : NULL;
                /* the group's channel rows follow the batch's earlier groups' */
                j.y = out + (g - g0) * s->cog * pl->tr_out_row;
                ncdhw_row_into(pl, &j, pl->tr_out_row, j0, 0);
            }
            float *yb = job->y + o0 * ys4 + g0 * s->cog * s->y_stride[1];
            const int64_t nc = gn * s->cog;
            tr_rows_out(yb, ys4, out, pl->tr_out_row, nc, n, tr_can_stream(pl, yb, ys4, nc));
        }
    }
}

/* The W-lane tile's tiling, then the row cache and output buffer for it. */
static void plan_ndhwc_tr(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, cpu_tiling_ncdhw(&pl->s, &CPU_ISA_SYMBOL.limits));
    cpu_tr_rows r = {1, 0, 16};
    if (!cpu_ndhwc_tr_rows(&pl->s, pl->chunk, &r))
        r.slots = 0; /* not applicable (registry.c): never planned */
    pl->tr_slots = r.slots;
    pl->tr_left = r.left;
    pl->tr_row = r.row;
    /* a chunk's outputs: every phase's positions, at most the row (a stride
     * past the row: one output a phase, and chunk * stride may overflow) */
    const int64_t sw = pl->s.s[2], outw = pl->s.out[2];
    pl->tr_out_row = ((sw >= outw ? outw : cpu_min64(pl->chunk * sw, outw)) + 15) / 16 * 16;
    pl->scratch_bytes = tr_layout_of(pl).total;
}
