/* CPU backend: output-stationary stride-phase gather, parallel with OpenMP.
 *
 * Plan creation walks the registry (cpu/registry.c) for the implementation
 * (or takes the forced one), builds each dim's phase tables (which taps
 * reach outputs o = j*s + c, and the input offset of each), lets the
 * implementation's kernel choose its tiling, and packs the weights once,
 * straight into the kernel's blocks.
 *
 * Execution splits the output into rows (n, g, od, oh) (or (n, od, oh) of
 * every group, for the NDHWC kernels whose lanes run across groups), blocks
 * of rows along oh and, when there are few rows, segments along W.  Each row's (kd, kh)
 * pairs are listed once, skipping input rows outside x (the D and H borders),
 * then one row kernel (cpu/phase_*.c) writes every element of the row once.
 * No atomics; each element's sum has a fixed order, and the W segments fall on
 * the kernel's fixed chunk grid, so the output is bitwise the same for any
 * thread count.  Extra memory: the packed weights, the phase tables and a
 * small per-thread scratch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu/registry.h"
#include "cpu/rowpack.h"
#include "cpu/weights.h"

/* f16 and bf16 data are computed by the f32 kernels one image at a time:
 * the image's x widened into f32, the f32 plan (of batch 1) run on it, and
 * its y rounded back (staged, outer: the caller's shape).  The weights and
 * bias are widened once at planning.  CPU half-precision speed is not a
 * goal yet; this keeps every kernel and its tests as they are, at the cost
 * of one image of x and y in f32 as scratch. */
struct convt3d_backend_state {
    cpu_plan plan;
    int staged;
    convt3d_shape outer;
};

/* Outputs at least this large are written with streaming stores where the
 * kernel can: they are far larger than the caches, so the lines would only
 * be read for ownership and evicted again. */
#define CPU_STREAM_MIN_BYTES ((int64_t)32 << 20)

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static void *alloc64(size_t bytes) { return aligned_alloc(64, round64(bytes ? bytes : 1)); }

/* ---- plan --------------------------------------------------------------- */

/* Large outputs stream; CONVT3D_CPU_STREAM=0|1 forces it off or on (tests use
 * it to reach the streaming path with small problems). */
static int want_streaming(const convt3d_shape *s)
{
    const char *force = getenv("CONVT3D_CPU_STREAM");
    if (force && (strcmp(force, "0") == 0 || strcmp(force, "1") == 0))
        return force[0] == '1';
    return s->y_elems >= CPU_STREAM_MIN_BYTES / (int64_t)sizeof(float);
}

/* Phase tables of dim d for c < min(s, out), from the library's one phase
 * table (convt3d_phase_of). */
static int build_phases(const convt3d_shape *s, int d, cpu_dim_phases *ph)
{
    const int64_t n = cpu_min64(s->s[d], s->out[d]);
    ph->nphase = n;
    ph->start = malloc((size_t)(n + 1) * sizeof *ph->start);
    ph->taps = malloc((size_t)s->k[d] * sizeof *ph->taps);
    if (!ph->start || !ph->taps)
        return 0;
    int64_t used = 0;
    for (int64_t c = 0; c < n; c++) {
        const convt3d_phase phase = convt3d_phase_of(s, d, (c + s->p[d]) % s->s[d]);
        ph->start[c] = used;
        for (int64_t t = 0; t < phase.taps; t++) {
            ph->taps[used].k = phase.first_tap + t * phase.tap_step;
            ph->taps[used].delta = convt3d_phase_delta(s, d, c, &phase, t);
            used++;
        }
    }
    ph->start[n] = used;
    return 1;
}

static void free_plan(cpu_plan *pl)
{
    free(pl->w);
    free(pl->bias);
    free(pl->zeros);
    free(pl->pw_off);
    for (int d = 0; d < 3; d++) {
        free(pl->ph[d].start);
        free(pl->ph[d].taps);
    }
}

static void say_not_taken(const convt3d_request *req, const cpu_impl *im, const char *verdict,
                          const char *why)
{
    if (req->verbose)
        fprintf(stderr, "convt3d: cpu: %s %s: %s\n", im->name, verdict, why);
}

/* The forced entry if it applies, else the first in order that applies and
 * is not passed over; the generic NCDHW and NDHWC entries always apply, so
 * the walk always ends on one. */
static convt3d_status choose_impl(const convt3d_shape *s, const convt3d_request *req,
                                  const cpu_impl **chosen)
{
    char why[256];
    if (req->force) {
        const cpu_impl *im = cpu_impl_named(req->force);
        if (!im)
            return convt3d_fail(CONVT3D_ERR_UNKNOWN_IMPLEMENTATION,
                                "no CPU implementation is named \"%s\"", req->force);
        if (!cpu_impl_applicable(im, s, why, sizeof why))
            return convt3d_fail(CONVT3D_ERR_NOT_APPLICABLE, "%s does not apply: %s", im->name,
                                why);
        *chosen = im;
        return CONVT3D_SUCCESS;
    }
    for (int i = 0; i < cpu_impl_count(); i++) {
        const cpu_impl *im = cpu_impl_at(i);
        if (!cpu_impl_applicable(im, s, why, sizeof why)) {
            say_not_taken(req, im, "does not apply", why);
            continue;
        }
        if (cpu_impl_passed_over(im, s, why, sizeof why)) {
            say_not_taken(req, im, "passed over", why);
            continue;
        }
        *chosen = im;
        return CONVT3D_SUCCESS;
    }
    return convt3d_fail(CONVT3D_ERR_INTERNAL, "no CPU implementation applies");
}

/* The weights in the kernel's layout (cpu_plan.w_block, ncdhw_oc), packed
 * from PyTorch's in one pass; 0 when out of memory. */
static int pack_plan_weights(cpu_plan *pl, const float *weight)
{
    if (pl->kernel->all_groups && !pl->kernel->group_blocks) {
        const int64_t n = cpu_lanes_weight_floats(&pl->s, pl->cout_pad);
        pl->w = n < 0 ? NULL : alloc64((size_t)n * sizeof(float));
        if (!pl->w)
            return 0;
        cpu_pack_weights_cio_to_lanes(&pl->s, weight, pl->cout_pad, pl->w);
        pl->w_group = 0; /* one row of weights serves every group */
        return 1;
    }
    if (pl->colg_m) {
        const int64_t n = cpu_cols_weight_floats(&pl->s);
        pl->w = n < 0 ? NULL : alloc64((size_t)n * sizeof(float));
        if (!pl->w)
            return 0;
        cpu_pack_weights_cio_to_cols(&pl->s, weight, pl->w);
        pl->w_group = n / pl->s.groups;
        return 1;
    }
    if (pl->cigp) {
        const int64_t n = cpu_ic_rows_weight_floats(&pl->s, pl->cigp);
        pl->w = n < 0 ? NULL : alloc64((size_t)n * sizeof(float));
        if (!pl->w)
            return 0;
        cpu_pack_weights_cio_to_ic_rows(&pl->s, weight, pl->cigp, pl->w);
        pl->w_group = n / pl->s.groups;
        return 1;
    }
    cpu_weight_layout l;
    if (!cpu_weight_layout_make(&pl->s, pl->w_block ? pl->w_block : pl->cogp, pl->ncdhw_oc, &l))
        return 0;
    pl->w = alloc64((size_t)(pl->s.groups * l.w_group) * sizeof(float));
    if (!pl->w)
        return 0;
    cpu_pack_weights_cio_to_blocks(&pl->s, weight, &l, pl->w);
    pl->w_group = l.w_group;
    return 1;
}

/* Output channels a group holds in the packed weights and bias: NDHWC
 * kernels of one group at a time pad each group's to whole vectors; the
 * kernels over whole rows pad only the end of C_out (cpu_plan.cout_pad). */
static int64_t stored_cog(const convt3d_shape *s, const cpu_impl *im)
{
    const int64_t lanes = s->layout == CONVT3D_LAYOUT_NDHWC && !cpu_impl_kernel(im)->all_groups
                              ? im->isa->vector_lanes
                              : 1;
    return (s->cog + lanes - 1) / lanes * lanes;
}

/* Groups a work item covers one at a time: all at once for the kernels over
 * whole rows. */
static int64_t item_groups(const cpu_plan *pl)
{
    return pl->kernel->all_groups ? 1 : pl->s.groups;
}

/* Everything but the tiling and the weights: phase tables, padded bias, the
 * zero row; 0 when out of memory. */
static int plan_common(cpu_plan *pl, const convt3d_shape *shape, const cpu_impl *im,
                       const float *bias)
{
    pl->s = *shape;
    pl->impl = im;
    pl->isa = im->isa;
    pl->kernel = cpu_impl_kernel(im);
    pl->row = pl->kernel->row;
    pl->cogp = stored_cog(shape, im);
    pl->stream = want_streaming(shape);
    pl->cache = cpu_cache_budget_here();
    /* Kernels over whole rows read a position's channels of every group, up
     * to a vector past the last one (through lane masks, but the zeros stand
     * for a whole position); the input-channel-lane tiles read whole vectors
     * of a group's channels, up to cigp. */
    pl->zeros = calloc((size_t)(pl->kernel->all_groups ? shape->cin : shape->cig) + 64,
                       sizeof(float));
    if (shape->has_bias)
        pl->bias = calloc((size_t)(shape->groups * pl->cogp), sizeof(float));
    int ok = pl->zeros && (!shape->has_bias || pl->bias);
    for (int d = 0; d < 3 && ok; d++)
        ok = build_phases(shape, d, &pl->ph[d]);
    if (ok && pl->bias)
        for (int64_t g = 0; g < shape->groups; g++)
            memcpy(pl->bias + g * pl->cogp, bias + g * shape->cog,
                   (size_t)shape->cog * sizeof(float));
    return ok;
}

/* One input and one output channel: NDHWC lays x and y out as NCDHW does
 * (the channel stride is never used), and the NCDHW kernels vectorise along
 * W where the NDHWC ones would fill one lane of C (random_159 of seed 1, 1 ->
 * 1 channel, k4x1x3 s2: 0.30x oneDNN in NDHWC).  The automatic walk plans
 * such a problem as NCDHW; a forced entry keeps the layout it was given. */
static convt3d_shape walk_shape(const convt3d_shape *s, const convt3d_request *req)
{
    convt3d_shape w = *s;
    if (!req->force && s->layout == CONVT3D_LAYOUT_NDHWC && s->cin == 1 && s->cout == 1) {
        w.layout = CONVT3D_LAYOUT_NCDHW;
        convt3d_tensor_strides(w.layout, w.cin, w.in, w.x_stride);
        convt3d_tensor_strides(w.layout, w.cout, w.out, w.y_stride);
    }
    return w;
}

static convt3d_status f32_create(const convt3d_shape *given, const convt3d_request *req,
                                 const float *weight, const float *bias,
                                 convt3d_backend_state **state, const char **impl_name)
{
    const convt3d_shape walked = walk_shape(given, req);
    const convt3d_shape *shape = &walked;
    const cpu_impl *im = NULL;
    convt3d_status st = choose_impl(shape, req, &im);
    if (st != CONVT3D_SUCCESS)
        return st;
    const int64_t cogp = stored_cog(shape, im);
    int64_t packed;
    if (__builtin_mul_overflow(shape->groups * shape->k_volume, shape->cig, &packed) ||
        __builtin_mul_overflow(packed, cogp, &packed) ||
        packed > (int64_t)(SIZE_MAX / sizeof(float) / 2))
        return convt3d_fail(CONVT3D_ERR_OVERFLOW, "the CPU plan's packed weight size overflows");

    convt3d_backend_state *bs = calloc(1, sizeof *bs);
    if (!bs)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan state");
    cpu_plan *pl = &bs->plan;
    if (!plan_common(pl, shape, im, bias)) {
        free_plan(pl);
        free(bs);
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan: bias and phase tables");
    }
    pl->kernel->plan(pl);
    if (!pack_plan_weights(pl, weight)) {
        free_plan(pl);
        free(bs);
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan: %lld packed weights",
                            (long long)packed);
    }
    cpu_plan_row_packing(pl);
    if (req->verbose) {
        char line[256];
        cpu_impl_describe(pl, line, sizeof line);
        fprintf(stderr, "convt3d: cpu: %s: %s\n", im->name, line);
    }
    *state = bs;
    *impl_name = im->name;
    return CONVT3D_SUCCESS;
}

/* ---- execution ---------------------------------------------------------- */

/* The (kd, kh) pairs reaching output row (od, oh) whose input row exists:
 * their weight taps into rt[], their input rows (id, ih) into src[]. */
static int64_t row_taps(const cpu_plan *pl, int64_t od, int64_t oh, cpu_row_tap *rt,
                        int64_t (*src)[2])
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pd = &pl->ph[0], *ph = &pl->ph[1];
    const int64_t cd = od % s->s[0], jd = od / s->s[0];
    const int64_t ch = oh % s->s[1], jh = oh / s->s[1];
    int64_t n = 0;
    for (int64_t a = pd->start[cd]; a < pd->start[cd + 1]; a++) {
        const int64_t id = jd + pd->taps[a].delta;
        if (id < 0 || id >= s->in[0])
            continue;
        for (int64_t b = ph->start[ch]; b < ph->start[ch + 1]; b++) {
            const int64_t ih = jh + ph->taps[b].delta;
            if (ih < 0 || ih >= s->in[1])
                continue;
            rt[n].w_tap = (pd->taps[a].k * s->k[1] + ph->taps[b].k) * s->k[2];
            src[n][0] = id;
            src[n][1] = ih;
            n++;
        }
    }
    return n;
}

/* ---- work split --------------------------------------------------------- */

/* Whether the kernel takes blocks of whole rows (cpu_kernel.block). */
static int uses_blocks(const cpu_plan *pl) { return pl->kernel->block && pl->blocks; }

/* How the output is cut into work items (n, g, od, block of oh rows, W segment). */
typedef struct cpu_split {
    int64_t rows_per_item, row_blocks; /* along oh */
    int64_t seg_len, segs;             /* along j, in positions (multiples of chunk) */
    int64_t jlen, items;
} cpu_split;

/* Rows an item of blocks takes for the kernel's block_positions (output
 * rows whose input rows hold that many positions), where the driver's
 * choice `rows_per_item` holds fewer, as long as each thread keeps four
 * items of the `rows` output rows; then evened out over the plane's oh
 * rows, so that no block is a short rest.  Blocks that already hold enough
 * stay as they are (evening out 16 + 3 rows into 10 + 9 was no faster:
 * random_179 of seed 7, within this VM's noise). */
static int64_t rows_for_positions(const cpu_plan *pl, int64_t rows_per_item, int64_t rows,
                                  int threads)
{
    const convt3d_shape *s = &pl->s;
    const int64_t outh = s->out[1], in_w = cpu_max64(1, s->in[2]);
    const int64_t in_rows = (pl->block_positions + in_w - 1) / in_w;
    /* s_h may be near INT64_MAX (the fuzz corpus): no product past outh */
    const int64_t want = s->s[1] >= outh || in_rows > outh / s->s[1] ? outh : in_rows * s->s[1];
    if (rows_per_item >= want)
        return rows_per_item;
    const int64_t most = cpu_max64(1, rows / (4 * (int64_t)threads));
    const int64_t r = cpu_max64(rows_per_item, cpu_min64(want, most)); /* want <= outh */
    const int64_t blocks = (outh + r - 1) / r;
    return (outh + blocks - 1) / blocks;
}

/* Aims at >= 16 items per thread so dynamic scheduling evens out the border
 * rows' lighter work, while keeping neighbouring rows (which share input
 * rows) together in one item. */
static cpu_split split_work(const cpu_plan *pl, int threads)
{
    const convt3d_shape *s = &pl->s;
    cpu_split sp;
    const int64_t planes = s->n * item_groups(pl) * s->out[0], outh = s->out[1];
    const int64_t rows = planes * outh, want = threads > 1 ? 16 * (int64_t)threads : 1;
    sp.jlen = cpu_phase_len(s->out[2], s->s[2], 0);
    /* blocks hold whole rows: one W segment */
    const int64_t chunks = uses_blocks(pl) ? 1 : (sp.jlen + pl->chunk - 1) / pl->chunk;
    int64_t segs = 1;
    if (rows < want)
        segs = cpu_min64(chunks, (want + rows - 1) / rows);
    const int64_t chunks_per_seg = (chunks + segs - 1) / segs;
    sp.seg_len = chunks_per_seg * pl->chunk;
    sp.segs = (chunks + chunks_per_seg - 1) / chunks_per_seg;
    sp.rows_per_item = cpu_max64(1, cpu_min64(outh, rows * sp.segs / want));
    /* The column GEMM computes the input rows a block reads (cpu/colgemm.h):
     * blocks of a plane each compute the rows they share, so it takes
     * whole planes, split only where there are fewer than two a thread. */
    if (pl->colg_m)
        sp.rows_per_item =
            planes >= 2 * threads ? outh : (outh + (2 * threads + planes - 1) / planes - 1) /
                                               ((2 * threads + planes - 1) / planes);
    if (uses_blocks(pl) && pl->block_positions)
        sp.rows_per_item = rows_for_positions(pl, sp.rows_per_item, rows, threads);
    sp.row_blocks = (outh + sp.rows_per_item - 1) / sp.rows_per_item;
    sp.items = planes * sp.row_blocks * sp.segs;
    return sp;
}

/* A thread's scratch: row taps and their input rows, the packed-row cache,
 * then the row kernel's own scratch. */
typedef struct cpu_thread_scratch {
    cpu_row_tap *rt, *next_rt;
    int64_t (*src)[2], (*next_src)[2];
    cpu_pack_cache pack;
    int32_t *pack_miss, *pack_stale; /* pack_row_slots' scratch */
    void *kernel;
} cpu_thread_scratch;

typedef struct cpu_scratch_layout {
    size_t rt, src, tags, hash, rows, kernel, total;
    size_t heads, slot_ints; /* parts of hash: the chain heads; an int a slot */
} cpu_scratch_layout;

static cpu_scratch_layout scratch_layout(const cpu_plan *pl)
{
    const size_t taps = (size_t)(pl->s.k[0] * pl->s.k[1]);
    cpu_scratch_layout l;
    l.rt = round64(taps * sizeof(cpu_row_tap));
    l.src = round64(taps * 2 * sizeof(int64_t));
    l.tags = round64((size_t)pl->pack_slots * sizeof(cpu_pack_tag));
    /* the hash table's heads and chains, the stale slots, a row's misses */
    l.heads = pl->pack_slots ? round64(sizeof(int32_t) << pack_hash_bits(pl->pack_slots)) : 0;
    l.slot_ints = round64((size_t)pl->pack_slots * sizeof(int32_t));
    l.hash = pl->pack_slots ? l.heads + 2 * l.slot_ints + round64(taps * sizeof(int32_t)) : 0;
    l.rows = round64((size_t)pl->pack_slots * (size_t)(pl->s.cig * pl->pack_row) * sizeof(float));
    l.kernel = round64(pl->scratch_bytes);
    l.total = 2 * (l.rt + l.src) + l.tags + l.hash + l.rows + l.kernel;
    return l;
}

static cpu_thread_scratch thread_scratch(const cpu_plan *pl, const cpu_scratch_layout *l,
                                         char *base)
{
    cpu_thread_scratch t;
    t.rt = (cpu_row_tap *)base;
    t.src = (int64_t(*)[2])(base + l->rt);
    base += l->rt + l->src;
    t.next_rt = (cpu_row_tap *)base;
    t.next_src = (int64_t(*)[2])(base + l->rt);
    char *tags = base + l->rt + l->src;
    t.pack.tag = (cpu_pack_tag *)tags;
    t.pack.rows = (float *)(tags + l->tags + l->hash);
    t.pack.now = 0;
    t.kernel = tags + l->tags + l->hash + l->rows;
    t.pack.head = t.pack.next = t.pack_miss = t.pack_stale = NULL;
    t.pack.hash_bits = 0;
    if (pl->pack_slots) {
        const int slots = pl->pack_slots;
        t.pack.hash_bits = pack_hash_bits(slots);
        t.pack.head = (int32_t *)(tags + l->tags);
        t.pack.next = (int32_t *)((char *)t.pack.head + l->heads);
        t.pack_stale = (int32_t *)((char *)t.pack.next + l->slot_ints);
        t.pack_miss = (int32_t *)((char *)t.pack_stale + l->slot_ints);
        for (size_t i = 0; i < ((size_t)1 << t.pack.hash_bits); i++)
            t.pack.head[i] = -1;
        for (int i = 0; i < slots; i++) {
            t.pack.tag[i] = (cpu_pack_tag){-1, -1};
            t.pack.next[i] = -1;
        }
    }
    memset(t.pack.rows, 0, l->rows); /* the margins stay zero from here on */
    memset(t.kernel, 0, l->kernel);   /* row kernels may keep state across rows */
    return t;
}

/* Prefetches the input rows of the next output row (its n rows in
 * ts->next_src) that the current row (its nrt rows in ts->src) does not
 * read: without this, the first touch of each new row is a chain of cache
 * misses in the middle of the tiles (the rows of all input channels are too
 * many streams for the hardware prefetcher). */
static void prefetch_row_inputs(const cpu_plan *pl, cpu_thread_scratch *ts, const float *xg,
                                int64_t ng, int64_t n, int64_t nrt)
{
    const convt3d_shape *s = &pl->s;
    for (int64_t r = 0; r < n; r++) {
        const int64_t id = ts->next_src[r][0], ih = ts->next_src[r][1];
        /* with packing the current row's rows are all in the cache */
        int known = 0;
        if (pl->pack_slots)
            known = pack_find(&ts->pack, pack_key(s, ng, id, ih)) >= 0;
        else
            for (int64_t q = 0; q < nrt && !known; q++)
                known = ts->src[q][0] == id && ts->src[q][1] == ih;
        if (known)
            continue;
        const float *from = xg + id * s->x_stride[2] + ih * s->x_stride[3];
        if (s->layout == CONVT3D_LAYOUT_NDHWC) {
            /* one span: every position's channels of the group */
            const int64_t span =
                (s->in[2] - 1) * s->x_stride[4] + (pl->kernel->all_groups ? s->cin : s->cig);
            for (int64_t e = 0; e < span; e += 16)
                __builtin_prefetch(from + e);
            __builtin_prefetch(from + span - 1);
            continue;
        }
        for (int64_t ic = 0; ic < s->cig; ic++) {
            const float *row = from + ic * s->x_stride[1];
            for (int64_t w = 0; w < s->in[2]; w += 16)
                __builtin_prefetch(row + w);
            __builtin_prefetch(row + s->in[2] - 1);
        }
    }
}

/* Rows no input reaches hold the bias alone (or 0).  In NDHWC they are
 * filled here by memset and copies, not by the kernel: its tiles walk such
 * a row tile by tile and store it a vector at a time, 1.5-2x slower where
 * most rows are empty (random_22 of seed 1, k(1,1,2) s2, three rows in
 * four: 1.6 -> 0.7 ms on Zen 4).  Group 0's item fills every group's
 * channels and the other groups pass over the row: a group's own fill
 * would write C_out/G floats a position, C_out apart (random_22 of seed 3,
 * 16 groups of 2 -> 1).  In NCDHW only for the W-lane tile with at most 4
 * output channels a group, where the tile's cost a row is spread over few
 * channels: round 36 (Zen 4, the 150 NCDHW problems of seeds 5-8 with empty
 * rows) found those 17 problems 0.99-1.46x faster, while the output-channel
 * tile (31 problems) lost, geomean 0.89x, and the W-lane tile with more
 * channels varied both ways (0.71-1.13x). */
static int fills_empty_rows(const cpu_plan *pl)
{
    if (pl->s.layout == CONVT3D_LAYOUT_NCDHW)
        return pl->kernel == &pl->isa->ncdhw && pl->s.cog <= 4;
    return pl->s.y_stride[4] == pl->s.cout;
}

static size_t size_min(size_t a, size_t b) { return a < b ? a : b; }

/* first[filled, total) = copies of first[0, filled), a pattern that repeats
 * every filled bytes (or one value throughout): copies that double the
 * filled part up to block bytes, then block by block.  A call a short copy costs more than the copy, and copies much
 * longer than 1 KiB were slower (Zen 4, C_out 64: ndhwc_bias_row). */
static void repeat_prefix(char *first, size_t filled, size_t total, size_t block)
{
    size_t at = filled;
    for (; at < block && at < total; at *= 2)
        memcpy(first + at, first, size_min(size_min(at, block - at), total - at));
    for (at = block; at < total; at += block)
        memcpy(first + at, first, size_min(block, total - at));
}

/* Outputs [ow0, ow1) of an NDHWC row (y at the row's first position, ow0 <
 * ow1) get every group's bias, or 0: the first position by groups, the
 * others copies of it, one copy a position where a position is 256 bytes
 * or more, else blocks of about 1 KiB. */
static void ndhwc_bias_row(const cpu_plan *pl, float *y, int64_t ow0, int64_t ow1)
{
    const convt3d_shape *s = &pl->s;
    char *first = (char *)(y + ow0 * s->cout);
    const size_t position = (size_t)s->cout * sizeof(float);
    const size_t total = (size_t)(ow1 - ow0) * position;
    if (!pl->bias) {
        memset(first, 0, total);
        return;
    }
    for (int64_t g = 0; g < s->groups; g++)
        memcpy(first + (size_t)(g * s->cog) * sizeof(float), pl->bias + g * pl->cogp,
               (size_t)s->cog * sizeof(float));
    repeat_prefix(first, position, total, position >= 256 ? position : 1024 / position * position);
}

/* p[0, n) = v: 16 floats, then doubling copies (the plain loop was left
 * scalar by the compiler, one store a float). */
static void fill_floats(float *p, float v, int64_t n)
{
    const int64_t head = n < 16 ? n : 16;
    for (int64_t i = 0; i < head; i++)
        p[i] = v;
    const size_t total = (size_t)n * sizeof(float);
    repeat_prefix((char *)p, (size_t)head * sizeof(float), total, total);
}

/* Outputs [ow0, ow1) of group g's NCDHW channel rows (y at the group's first
 * channel, the row's first position) get the channel's bias, or 0. */
static void ncdhw_bias_rows(const cpu_plan *pl, float *y, int64_t g, int64_t ow0, int64_t ow1)
{
    const convt3d_shape *s = &pl->s;
    for (int64_t c = 0; c < s->cog; c++) {
        float *row = y + c * s->y_stride[1] + ow0;
        if (!pl->bias)
            memset(row, 0, (size_t)(ow1 - ow0) * sizeof(float));
        else
            fill_floats(row, pl->bias[g * pl->cogp + c], ow1 - ow0);
    }
}

/* Fills an empty row (see fills_empty_rows) of the item's group g (in
 * NCDHW only the W-lane tile, which runs a group at a time, has its rows
 * filled here). */
static void fill_empty_row(const cpu_plan *pl, const cpu_row_job *job, int64_t g)
{
    const convt3d_shape *s = &pl->s;
    const int64_t ow0 = job->j0 * s->s[2], ow1 = cpu_min64(s->out[2], job->j1 * s->s[2]);
    if (ow0 >= ow1)
        return;
    if (s->layout == CONVT3D_LAYOUT_NCDHW)
        ncdhw_bias_rows(pl, job->y, g, ow0, ow1);
    else if (g == 0)
        ndhwc_bias_row(pl, job->y, ow0, ow1);
}

static void run_item(const cpu_plan *pl, const cpu_split *sp, int64_t item, const float *x,
                     float *y, cpu_thread_scratch *ts)
{
    const convt3d_shape *s = &pl->s;
    const int64_t seg = item % sp->segs, rest = item / sp->segs;
    const int64_t hb = rest % sp->row_blocks, plane = rest / sp->row_blocks;
    const int64_t od = plane % s->out[0], ng = plane / s->out[0];
    const int64_t g = ng % item_groups(pl), n = ng / item_groups(pl);
    const float *xg = x + n * s->x_stride[0] + g * s->cig * s->x_stride[1];
    cpu_row_job job;
    if (pl->pack_slots) {
        job.x = ts->pack.rows + pl->pack_left; /* x index 0 of each packed row */
        job.x_plane = pl->pack_row;
        job.w_lo = -pl->pack_left;
        job.w_hi = pl->pack_row - pl->pack_left;
    } else {
        job.x = xg;
        job.x_plane = s->x_stride[1];
        job.w_lo = 0;
        job.w_hi = s->in[2];
    }
    job.w = pl->w + g * pl->w_group;
    job.bias = pl->bias ? pl->bias + g * pl->cogp : NULL;
    job.j0 = seg * sp->seg_len;
    job.j1 = cpu_min64(sp->jlen, job.j0 + sp->seg_len);
    job.scratch = ts->kernel;
    float *yp = y + n * s->y_stride[0] + g * s->cog * s->y_stride[1] + od * s->y_stride[2];
    const int64_t oh_end = cpu_min64(s->out[1], (hb + 1) * sp->rows_per_item);
    int64_t oh = hb * sp->rows_per_item;
    if (uses_blocks(pl)) {
        job.x = xg;
        job.y = yp;
        pl->kernel->block(pl, &job, od, oh, oh_end);
        return;
    }
    int64_t nrt = row_taps(pl, od, oh, ts->rt, ts->src);
    for (; oh < oh_end; oh++) {
        /* this row's lists are in rt/src; the next row's go to next_rt/next_src
         * (for the prefetch), and the two swap after the row */
        job.rt = ts->rt;
        job.nrt = nrt;
        ts->pack.now++;
        if (pl->pack_slots)
            pack_row_slots(pl, &ts->pack, xg, ng, (const int64_t(*)[2])ts->src, job.nrt, ts->rt,
                           ts->pack_miss, ts->pack_stale);
        else
            for (int64_t r = 0; r < job.nrt; r++)
                ts->rt[r].x_off = ts->src[r][0] * s->x_stride[2] + ts->src[r][1] * s->x_stride[3];
        if (oh + 1 < oh_end) {
            nrt = row_taps(pl, od, oh + 1, ts->next_rt, ts->next_src);
            prefetch_row_inputs(pl, ts, xg, ng, nrt, job.nrt);
        }
        job.y = yp + oh * s->y_stride[3];
        if (job.nrt == 0 && fills_empty_rows(pl)) {
            fill_empty_row(pl, &job, g);
        } else {
            pl->row(pl, &job);
        }
        cpu_row_tap *rt = ts->rt;
        int64_t(*src)[2] = ts->src;
        ts->rt = ts->next_rt;
        ts->src = ts->next_src;
        ts->next_rt = rt;
        ts->next_src = src;
    }
}

/* The kernels' per-thread scratch for an execute of pl on `threads` threads. */
static char *f32_scratch(const cpu_plan *pl, int threads)
{
    return alloc64(scratch_layout(pl).total * (size_t)threads);
}

static int execute_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* y = convT(x) with scratch from f32_scratch(pl, threads): cannot fail. */
static void f32_run(const cpu_plan *pl, const float *x, float *y, char *scratch, int threads)
{
    const cpu_scratch_layout layout = scratch_layout(pl);
    const cpu_split sp = split_work(pl, threads);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
#ifdef _OPENMP
        const int me = omp_get_thread_num();
#else
        const int me = 0;
#endif
        cpu_thread_scratch ts = thread_scratch(pl, &layout, scratch + layout.total * (size_t)me);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1) nowait
#endif
        for (int64_t item = 0; item < sp.items; item++)
            run_item(pl, &sp, item, x, y, &ts);
        if (pl->isa->finish)
            pl->isa->finish();
    }
}

static convt3d_status f32_execute(const convt3d_backend_state *st, const float *x, float *y)
{
    const cpu_plan *pl = &st->plan;
    const int threads = execute_threads();
    /* All scratch up front: a failure must leave y untouched. */
    char *scratch = f32_scratch(pl, threads);
    if (!scratch)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU execute: %d x %zu bytes of scratch",
                            threads, scratch_layout(pl).total);
    f32_run(pl, x, y, scratch, threads);
    free(scratch);
    return CONVT3D_SUCCESS;
}

/* ---- f16 and bf16 data: staged through the f32 kernels ------------------ */

/* A new f32 array of count elements of src (exact), or NULL. */
static float *widen_new(const void *src, convt3d_dtype type, int64_t count)
{
    float *out = alloc64((size_t)count * sizeof(float));
    if (out)
        convt3d_convert(src, type, out, CONVT3D_F32, count);
    return out;
}

/* The f32 shape of one image of *s. */
static convt3d_shape image_shape(const convt3d_shape *s)
{
    convt3d_shape one = *s;
    one.n = 1;
    one.x_type = one.w_type = one.bias_type = one.y_type = CONVT3D_F32;
    one.x_elems = s->x_stride[0];
    one.y_elems = s->y_stride[0];
    one.macs = s->macs / (double)s->n;
    return one;
}

static convt3d_status staged_create(const convt3d_shape *shape, const convt3d_request *req,
                                    const void *weight, const void *bias,
                                    convt3d_backend_state **state, const char **impl_name)
{
    const convt3d_shape one = image_shape(shape);
    float *wf = widen_new(weight, shape->w_type, shape->w_elems);
    float *bf = shape->has_bias ? widen_new(bias, shape->bias_type, shape->cout) : NULL;
    convt3d_status st = CONVT3D_SUCCESS;
    if (!wf || (shape->has_bias && !bf))
        st = convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan: widened weights");
    else
        st = f32_create(&one, req, wf, bf, state, impl_name);
    free(wf);
    free(bf);
    if (st == CONVT3D_SUCCESS) {
        (*state)->staged = 1;
        (*state)->outer = *shape;
    }
    return st;
}

static convt3d_status staged_execute(const convt3d_backend_state *st, const void *x, void *y)
{
    const convt3d_shape *s = &st->outer;
    const int64_t xn = s->x_stride[0], yn = s->y_stride[0];
    const int threads = execute_threads();
    /* All scratch up front: a failure must leave y untouched. */
    float *xf = alloc64((size_t)xn * sizeof(float)), *yf = alloc64((size_t)yn * sizeof(float));
    char *scratch = f32_scratch(&st->plan, threads);
    const int ok = xf && yf && scratch;
    for (int64_t n = 0; ok && n < s->n; n++) {
        const int64_t x0 = n * xn, y0 = n * yn;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
        for (int64_t i = 0; i < xn; i++)
            xf[i] = convt3d_load_f32(x, s->x_type, x0 + i);
        f32_run(&st->plan, xf, yf, scratch, threads);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
        for (int64_t i = 0; i < yn; i++)
            convt3d_store_f32(y, s->y_type, y0 + i, yf[i]);
    }
    free(xf);
    free(yf);
    free(scratch);
    return ok ? CONVT3D_SUCCESS
              : convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU execute: one image in f32 and "
                                                        "the kernels' scratch");
}

/* ---- the backend's entry points ------------------------------------------ */

static convt3d_status cpu_create(const convt3d_shape *shape, int ordinal,
                                 const convt3d_request *req, const void *weight, const void *bias,
                                 int weights_on_device, convt3d_backend_state **state,
                                 const char **impl_name)
{
    (void)ordinal;
    if (weights_on_device)
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION, "CPU plan given device weights");
    if (shape->y_type != CONVT3D_F32)
        return staged_create(shape, req, weight, bias, state, impl_name);
    return f32_create(shape, req, weight, bias, state, impl_name);
}

static convt3d_status cpu_execute(const convt3d_backend_state *st, const void *x, void *y,
                                  void *stream, int on_device)
{
    (void)stream;
    (void)on_device;
    return st->staged ? staged_execute(st, x, y) : f32_execute(st, x, y);
}

static void cpu_destroy(convt3d_backend_state *st)
{
    if (!st)
        return;
    free_plan(&st->plan);
    free(st);
}

/* ---- registry hooks ------------------------------------------------------ */

static int cpu_impl_count_hook(void) { return cpu_impl_count(); }

static const char *cpu_impl_name_hook(int index)
{
    const cpu_impl *im = cpu_impl_at(index);
    return im ? im->name : NULL;
}

/* The hard predicate only: exactly what forcing the entry checks. */
static convt3d_status cpu_impl_applies_hook(int index, const convt3d_shape *shape, int ordinal,
                                            const convt3d_request *req, char *why,
                                            size_t why_size)
{
    (void)ordinal;
    (void)req;
    const cpu_impl *im = cpu_impl_at(index);
    if (!im) {
        snprintf(why, why_size, "no CPU implementation has index %d", index);
        return CONVT3D_ERR_NOT_APPLICABLE;
    }
    return cpu_impl_applicable(im, shape, why, why_size) ? CONVT3D_SUCCESS
                                                         : CONVT3D_ERR_NOT_APPLICABLE;
}

const convt3d_backend convt3d_backend_cpu = {
    "cpu",      CONVT3D_DEVICE_CPU, cpu_impl_count_hook, cpu_impl_name_hook, cpu_impl_applies_hook,
    cpu_create, cpu_execute,        cpu_destroy};
