/* CPU backend: output-stationary stride-phase gather, parallel with OpenMP.
 *
 * Plan creation picks the instruction set once (CPU features, or the
 * CONVT3D_CPU_ISA override), builds each dim's phase tables (which taps reach
 * outputs o = j*s + c, and the input offset of each), and repacks the weights
 * once so a group's output channels are contiguous per (tap, input channel).
 *
 * Execution splits the output into rows (n, g, od, oh), blocks of rows along
 * oh and, when there are few rows, segments along W.  Each row's (kd, kh)
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

#include "cpu/kernels.h"

struct convt3d_backend_state {
    cpu_plan plan;
};

/* Outputs at least this large are written with streaming stores where the
 * kernel can: they are far larger than the caches, so the lines would only
 * be read for ownership and evicted again. */
#define CPU_STREAM_MIN_BYTES ((int64_t)32 << 20)

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static void *alloc64(size_t bytes) { return aligned_alloc(64, round64(bytes ? bytes : 1)); }

/* ---- instruction set ---------------------------------------------------- */

static const cpu_isa *best_isa(void)
{
    const cpu_isa *best = &convt3d_cpu_isa_generic;
#if CONVT3D_HAVE_CPU_AVX2 || CONVT3D_HAVE_CPU_AVX512
    __builtin_cpu_init();
#endif
#if CONVT3D_HAVE_CPU_AVX2
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        best = &convt3d_cpu_isa_avx2;
#endif
#if CONVT3D_HAVE_CPU_AVX512
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        best = &convt3d_cpu_isa_avx512;
#endif
    return best;
}

/* The best supported variant, or with CONVT3D_CPU_ISA=generic|avx2|avx512 the
 * best one not above that (unknown names are ignored).  For benchmarking and
 * for the tests, which run every variant the machine supports. */
static const cpu_isa *pick_isa(void)
{
    const cpu_isa *best = best_isa();
    const char *want = getenv("CONVT3D_CPU_ISA");
    if (!want || !*want)
        return best;
    if (strcmp(want, "generic") == 0)
        return &convt3d_cpu_isa_generic;
#if CONVT3D_HAVE_CPU_AVX2
    if (strcmp(want, "avx2") == 0 && best != &convt3d_cpu_isa_generic)
        return &convt3d_cpu_isa_avx2;
#endif
    return best;
}

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

/* CONVT3D_CPU_LANES=w|oc: the NCDHW tile with its vectors along W, or
 * along the output channels where that tile applies (dilation 1 along W,
 * W stride 1 or 2); otherwise the plan chooses (cpu_plan.lanes_force). */
static int lanes_force(void)
{
    const char *force = getenv("CONVT3D_CPU_LANES");
    if (force && strcmp(force, "w") == 0)
        return 0;
    if (force && strcmp(force, "oc") == 0)
        return 1;
    return -1;
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
    for (int d = 0; d < 3; d++) {
        free(pl->ph[d].start);
        free(pl->ph[d].taps);
    }
}

/* Above this much per thread, packing is off and tiles read x in place. */
#define CPU_PACK_MAX_BYTES ((int64_t)1 << 20)

static void tap_delta_range(const cpu_dim_phases *ph, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = 0;
    for (int64_t t = 0; t < ph->start[ph->nphase]; t++) {
        *lo = t == 0 || ph->taps[t].delta < *lo ? ph->taps[t].delta : *lo;
        *hi = t == 0 || ph->taps[t].delta > *hi ? ph->taps[t].delta : *hi;
    }
}

/* Why pack: the input channels of NCDHW x are a plane apart, often a
 * multiple of 4 KiB, so the tile's loads of one row from every channel fall
 * in the same L1 sets and on a new page each; the packed copy is contiguous.
 * The zero margins also make every tile load whole.  A slot holds one input
 * row (all channels of a group); enough slots for the rows of consecutive
 * output rows: (most D taps of a phase) x (H tap offsets spanned + 1).
 * CONVT3D_CPU_PACK=0|1 turns it off or on where it fits (for the tests). */
static void plan_packing(cpu_plan *pl)
{
    const convt3d_shape *s = &pl->s;
    const char *force = getenv("CONVT3D_CPU_PACK");
    pl->pack_slots = 0;
    if (s->layout != CONVT3D_LAYOUT_NCDHW || pl->isa == &convt3d_cpu_isa_generic ||
        (force && strcmp(force, "0") == 0))
        return;
    int64_t wlo, whi, hlo, hhi, nd = 0, nh = 0;
    tap_delta_range(&pl->ph[2], &wlo, &whi);
    tap_delta_range(&pl->ph[1], &hlo, &hhi);
    for (int64_t c = 0; c < pl->ph[0].nphase; c++)
        nd = cpu_max64(nd, pl->ph[0].start[c + 1] - pl->ph[0].start[c]);
    for (int64_t c = 0; c < pl->ph[1].nphase; c++)
        nh = cpu_max64(nh, pl->ph[1].start[c + 1] - pl->ph[1].start[c]);
    /* Measured: the copy and its bookkeeping pay off only when they are
     * cheap, one input row per output row (kernel <= stride in D and H), and
     * the channel sweep is long (unet_up_k2s2: 8%); elsewhere they cost
     * 2-6%.  CONVT3D_CPU_PACK=1 packs whenever the rows fit the budget. */
    if (!(force && strcmp(force, "1") == 0) && (nd * nh > 1 || s->cig < 32))
        return;
    const int64_t jlen = cpu_phase_len(s->out[2], s->s[2], 0);
    const int64_t jlast = (jlen + pl->chunk - 1) / pl->chunk * pl->chunk - 1;
    /* Margins as wide as the taps reach past the row; huge ones (huge
     * dilations) would not fit the budget anyway, and must not overflow. */
    const int64_t big = (int64_t)1 << 40;
    if (-wlo > big || whi > big || jlast > big || s->in[2] > big)
        return;
    const int64_t left = cpu_max64(0, -wlo);
    const int64_t right = cpu_max64(0, jlast + whi - (s->in[2] - 1));
    const int64_t row = (left + s->in[2] + right + 15) / 16 * 16;
    const int64_t slots = cpu_max64(1, nd * (hhi - hlo + 2));
    if ((double)slots * (double)s->cig * (double)row * sizeof(float) > (double)CPU_PACK_MAX_BYTES)
        return;
    pl->pack_slots = (int)slots;
    pl->pack_left = left;
    pl->pack_row = row;
}

/* Where (tap, ic) row r = ((kd * kH + kh) * kW + kw) * cig + ic of a
 * group's packed weights goes in a block: the same place, or for the
 * output-channel tile ((kd * kH + kh) * cig + ic) * kW + kw. */
static int64_t kw_inner_row(const cpu_plan *pl, int64_t r)
{
    if (!pl->ncdhw_oc)
        return r;
    const int64_t cig = pl->s.cig, kw = pl->s.k[2];
    const int64_t ic = r % cig, tap = r / cig;
    return (tap / kw * cig + ic) * kw + tap % kw;
}

/* Regroups the packed weights by blocks of w_block output channels (see
 * cpu_plan); 0 when out of memory. */
static int block_weights(cpu_plan *pl)
{
    const convt3d_shape *s = &pl->s;
    const int64_t ob = pl->w_block, blocks = (s->cog + ob - 1) / ob;
    const int64_t rows = s->k_volume * s->cig; /* (tap, ic) rows of a group */
    /* blocks * ob < 2 cog: within the headroom cpu_create's size check left */
    const int64_t per_group = blocks * rows * ob;
    if (blocks == 1 && ob == pl->cogp && !pl->ncdhw_oc)
        return 1; /* already this layout */
    float *bw = alloc64((size_t)(s->groups * per_group) * sizeof(float));
    if (!bw)
        return 0;
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t b = 0; b < blocks; b++) {
            const int64_t nb = cpu_min64(ob, s->cog - b * ob);
            const float *src = pl->w + g * pl->w_group + b * ob;
            float *dst = bw + g * per_group + b * rows * ob;
            for (int64_t r = 0; r < rows; r++) {
                float *to = dst + kw_inner_row(pl, r) * ob;
                memcpy(to, src + r * pl->cogp, (size_t)nb * sizeof(float));
                memset(to + nb, 0, (size_t)(ob - nb) * sizeof(float));
            }
        }
    free(pl->w);
    pl->w = bw;
    pl->w_group = per_group;
    return 1;
}

static convt3d_status cpu_create_f32(const convt3d_shape *shape, const float *weight,
                                     const float *bias, int weights_on_device,
                                     convt3d_backend_state **state, const char **kernel_name)
{
    if (weights_on_device)
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION, "CPU plan given device weights");
    const cpu_isa *isa = pick_isa();
    const int64_t lanes = shape->layout == CONVT3D_LAYOUT_NDHWC ? isa->vector_lanes : 1;
    const int64_t cogp = (shape->cog + lanes - 1) / lanes * lanes;
    int64_t packed;
    if (__builtin_mul_overflow(shape->groups * shape->k_volume, shape->cig, &packed) ||
        __builtin_mul_overflow(packed, cogp, &packed) ||
        packed > (int64_t)(SIZE_MAX / sizeof(float) / 2))
        return convt3d_fail(CONVT3D_ERR_OVERFLOW, "the CPU plan's packed weight size overflows");

    convt3d_backend_state *st = calloc(1, sizeof *st);
    if (!st)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan state");
    cpu_plan *pl = &st->plan;
    pl->s = *shape;
    pl->isa = isa;
    pl->cogp = cogp;
    pl->w = alloc64((size_t)packed * sizeof(float));
    pl->zeros = calloc((size_t)shape->cig, sizeof(float));
    if (shape->has_bias)
        pl->bias = calloc((size_t)(shape->groups * cogp), sizeof(float));
    int ok = pl->w && pl->zeros && (!shape->has_bias || pl->bias);
    for (int d = 0; d < 3 && ok; d++)
        ok = build_phases(shape, d, &pl->ph[d]);
    if (!ok) {
        free_plan(pl);
        free(st);
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY,
                            "CPU plan: %lld packed weights and phase tables",
                            (long long)packed);
    }
    convt3d_pack_weights_cio_to_gkio(shape, weight, cogp, pl->w);
    if (pl->bias)
        for (int64_t g = 0; g < shape->groups; g++)
            memcpy(pl->bias + g * cogp, bias + g * shape->cog, (size_t)shape->cog * sizeof(float));
    pl->stream = want_streaming(shape);
    pl->w_group = shape->k_volume * shape->cig * cogp;
    pl->lanes_force = lanes_force();
    isa->plan(pl);
    if (pl->w_block && !block_weights(pl)) {
        free_plan(pl);
        free(st);
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan: %lld blocked weights",
                            (long long)packed);
    }
    plan_packing(pl);
    const int ncdhw = shape->layout == CONVT3D_LAYOUT_NCDHW;
    pl->row = !ncdhw ? isa->row_ndhwc : pl->ncdhw_oc ? isa->row_ncdhw_oc : isa->row_ncdhw;
    *state = st;
    *kernel_name = !ncdhw         ? isa->kernel_ndhwc
                   : pl->ncdhw_oc ? isa->kernel_ncdhw_oc
                                  : isa->kernel_ncdhw;
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

/* ---- input-row packing (NCDHW) ------------------------------------------ */

typedef struct cpu_pack_tag {
    int64_t ng, id, ih; /* which input row the slot holds */
    int64_t stamp;      /* output row that last used it */
} cpu_pack_tag;

/* A thread's packed rows: slots of cig x pack_row floats, zero outside the data. */
typedef struct cpu_pack_cache {
    cpu_pack_tag *tag;
    float *rows;
    int64_t now;
} cpu_pack_cache;

/* The slot holding input row (id, ih) of x at (n, g) = ng, or -1. */
static int pack_find(const cpu_plan *pl, const cpu_pack_cache *pc, int64_t ng, int64_t id,
                     int64_t ih)
{
    for (int i = 0; i < pl->pack_slots; i++)
        if (pc->tag[i].ng == ng && pc->tag[i].id == id && pc->tag[i].ih == ih)
            return i;
    return -1;
}

/* The slot holding input row (id, ih) of x at (n, g) = ng; copies it in,
 * replacing the least recently used slot the current output row does not
 * use, when it is not there yet. */
static int64_t pack_slot(const cpu_plan *pl, cpu_pack_cache *pc, const float *xg, int64_t ng,
                         int64_t id, int64_t ih)
{
    const convt3d_shape *s = &pl->s;
    int victim = -1;
    for (int i = 0; i < pl->pack_slots; i++) {
        cpu_pack_tag *t = &pc->tag[i];
        if (t->ng == ng && t->id == id && t->ih == ih) {
            t->stamp = pc->now;
            return i;
        }
        if (t->stamp < pc->now && (victim < 0 || t->stamp < pc->tag[victim].stamp))
            victim = i;
    }
    /* victim >= 0: a row needs fewer slots than plan_packing provides. */
    float *dst = pc->rows + (int64_t)victim * s->cig * pl->pack_row + pl->pack_left;
    const float *from = xg + id * s->x_stride[2] + ih * s->x_stride[3];
    for (int64_t ic = 0; ic < s->cig; ic++)
        memcpy(dst + ic * pl->pack_row, from + ic * s->x_stride[1],
               (size_t)s->in[2] * sizeof(float));
    pc->tag[victim] = (cpu_pack_tag){ng, id, ih, pc->now};
    return victim;
}

/* ---- work split --------------------------------------------------------- */

/* How the output is cut into work items (n, g, od, block of oh rows, W segment). */
typedef struct cpu_split {
    int64_t rows_per_item, row_blocks; /* along oh */
    int64_t seg_len, segs;             /* along j, in positions (multiples of chunk) */
    int64_t jlen, items;
} cpu_split;

/* Aims at >= 16 items per thread so dynamic scheduling evens out the border
 * rows' lighter work, while keeping neighbouring rows (which share input
 * rows) together in one item. */
static cpu_split split_work(const cpu_plan *pl, int threads)
{
    const convt3d_shape *s = &pl->s;
    cpu_split sp;
    const int64_t planes = s->n * s->groups * s->out[0], outh = s->out[1];
    const int64_t rows = planes * outh, want = threads > 1 ? 16 * (int64_t)threads : 1;
    sp.jlen = cpu_phase_len(s->out[2], s->s[2], 0);
    const int64_t chunks = (sp.jlen + pl->chunk - 1) / pl->chunk;
    int64_t segs = 1;
    if (rows < want)
        segs = cpu_min64(chunks, (want + rows - 1) / rows);
    const int64_t chunks_per_seg = (chunks + segs - 1) / segs;
    sp.seg_len = chunks_per_seg * pl->chunk;
    sp.segs = (chunks + chunks_per_seg - 1) / chunks_per_seg;
    sp.rows_per_item = cpu_max64(1, cpu_min64(outh, rows * sp.segs / want));
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
    void *kernel;
} cpu_thread_scratch;

typedef struct cpu_scratch_layout {
    size_t rt, src, tags, rows, kernel, total;
} cpu_scratch_layout;

static cpu_scratch_layout scratch_layout(const cpu_plan *pl)
{
    const size_t taps = (size_t)(pl->s.k[0] * pl->s.k[1]);
    cpu_scratch_layout l;
    l.rt = round64(taps * sizeof(cpu_row_tap));
    l.src = round64(taps * 2 * sizeof(int64_t));
    l.tags = round64((size_t)pl->pack_slots * sizeof(cpu_pack_tag));
    l.rows = round64((size_t)pl->pack_slots * (size_t)(pl->s.cig * pl->pack_row) * sizeof(float));
    l.kernel = round64(pl->scratch_bytes);
    l.total = 2 * (l.rt + l.src) + l.tags + l.rows + l.kernel;
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
    t.pack.tag = (cpu_pack_tag *)(base + l->rt + l->src);
    t.pack.rows = (float *)(base + l->rt + l->src + l->tags);
    t.pack.now = 0;
    t.kernel = base + l->rt + l->src + l->tags + l->rows;
    for (int i = 0; i < pl->pack_slots; i++)
        t.pack.tag[i] = (cpu_pack_tag){-1, -1, -1, -1};
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
        int known = pl->pack_slots && pack_find(pl, &ts->pack, ng, id, ih) >= 0;
        for (int64_t q = 0; q < nrt && !known; q++)
            known = ts->src[q][0] == id && ts->src[q][1] == ih;
        if (known)
            continue;
        const float *from = xg + id * s->x_stride[2] + ih * s->x_stride[3];
        if (s->layout == CONVT3D_LAYOUT_NDHWC) {
            /* one span: every position's channels of the group */
            const int64_t span = (s->in[2] - 1) * s->x_stride[4] + s->cig;
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

static void run_item(const cpu_plan *pl, const cpu_split *sp, int64_t item, const float *x,
                     float *y, cpu_thread_scratch *ts)
{
    const convt3d_shape *s = &pl->s;
    const int64_t seg = item % sp->segs, rest = item / sp->segs;
    const int64_t hb = rest % sp->row_blocks, plane = rest / sp->row_blocks;
    const int64_t od = plane % s->out[0], ng = plane / s->out[0];
    const int64_t g = ng % s->groups, n = ng / s->groups;
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
    int64_t nrt = row_taps(pl, od, oh, ts->rt, ts->src);
    for (; oh < oh_end; oh++) {
        /* this row's lists are in rt/src; the next row's go to next_rt/next_src
         * (for the prefetch), and the two swap after the row */
        job.rt = ts->rt;
        job.nrt = nrt;
        ts->pack.now++;
        for (int64_t r = 0; r < job.nrt; r++)
            ts->rt[r].x_off =
                pl->pack_slots
                    ? pack_slot(pl, &ts->pack, xg, ng, ts->src[r][0], ts->src[r][1]) * s->cig *
                              pl->pack_row
                    : ts->src[r][0] * s->x_stride[2] + ts->src[r][1] * s->x_stride[3];
        if (oh + 1 < oh_end) {
            nrt = row_taps(pl, od, oh + 1, ts->next_rt, ts->next_src);
            prefetch_row_inputs(pl, ts, xg, ng, nrt, job.nrt);
        }
        job.y = yp + oh * s->y_stride[3];
        pl->row(pl, &job);
        cpu_row_tap *rt = ts->rt;
        int64_t(*src)[2] = ts->src;
        ts->rt = ts->next_rt;
        ts->src = ts->next_src;
        ts->next_rt = rt;
        ts->next_src = src;
    }
}

static convt3d_status cpu_execute(const convt3d_backend_state *st, const void *xv, void *yv,
                                  void *stream, int on_device)
{
    (void)stream;
    (void)on_device;
    const float *x = xv;
    float *y = yv;
    const cpu_plan *pl = &st->plan;
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    /* All scratch up front: a failure must leave y untouched. */
    const cpu_scratch_layout layout = scratch_layout(pl);
    char *scratch = alloc64(layout.total * (size_t)threads);
    if (!scratch)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU execute: %d x %zu bytes of scratch",
                            threads, layout.total);
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
    free(scratch);
    return CONVT3D_SUCCESS;
}

static void cpu_destroy(convt3d_backend_state *st)
{
    if (!st)
        return;
    free_plan(&st->plan);
    free(st);
}

/* ---- registry (transitional) ------------------------------------------- */

static const cpu_isa *const all_isas[] = {
#if CONVT3D_HAVE_CPU_AVX512
    &convt3d_cpu_isa_avx512,
#endif
#if CONVT3D_HAVE_CPU_AVX2
    &convt3d_cpu_isa_avx2,
#endif
    &convt3d_cpu_isa_generic,
};
#define N_ISAS ((int)(sizeof all_isas / sizeof all_isas[0]))

static const char *impl_name_of(int index, int *layout_kind, const cpu_isa **isa)
{
    if (index < 0 || index >= 3 * N_ISAS)
        return NULL;
    *isa = all_isas[index / 3];
    *layout_kind = index % 3;
    return *layout_kind == 0 ? (*isa)->kernel_ncdhw_oc
           : *layout_kind == 1 ? (*isa)->kernel_ncdhw
                               : (*isa)->kernel_ndhwc;
}

static int cpu_impl_count(void)
{
    int n = 0;
    for (int i = 0; i < 3 * N_ISAS; i++) {
        int kind;
        const cpu_isa *isa;
        n += impl_name_of(i, &kind, &isa) != NULL;
    }
    return n;
}

static const char *cpu_impl_name(int index)
{
    for (int i = 0; i < 3 * N_ISAS; i++) {
        int kind;
        const cpu_isa *isa;
        const char *name = impl_name_of(i, &kind, &isa);
        if (name && index-- == 0)
            return name;
    }
    return NULL;
}

static convt3d_status cpu_impl_applies(int index, const convt3d_shape *shape, int ordinal,
                                       const convt3d_request *req, char *why, size_t why_size)
{
    (void)ordinal;
    (void)req;
    const char *name = cpu_impl_name(index);
    const int ndhwc = name && strstr(name, "_ndhwc_") != NULL;
    if (!name || ndhwc != (shape->layout == CONVT3D_LAYOUT_NDHWC)) {
        snprintf(why, why_size, "it is for the other layout");
        return CONVT3D_ERR_NOT_APPLICABLE;
    }
    return CONVT3D_SUCCESS;
}

static convt3d_status cpu_create(const convt3d_shape *shape, int ordinal,
                                 const convt3d_request *req, const void *weight, const void *bias,
                                 int weights_on_device, convt3d_backend_state **state,
                                 const char **kernel_name)
{
    (void)ordinal;
    convt3d_backend_state *st = NULL;
    const char *name = NULL;
    convt3d_status status =
        cpu_create_f32(shape, weight, bias, weights_on_device, &st, &name);
    if (status != CONVT3D_SUCCESS)
        return status;
    if (req->force && strcmp(req->force, name) != 0) {
        cpu_destroy(st);
        return convt3d_fail(CONVT3D_ERR_NOT_APPLICABLE,
                            "%s does not apply: the CPU plan chose %s", req->force, name);
    }
    *state = st;
    *kernel_name = name;
    return CONVT3D_SUCCESS;
}

const convt3d_backend convt3d_backend_cpu = {"cpu",         CONVT3D_DEVICE_CPU, cpu_impl_count,
                                             cpu_impl_name, cpu_impl_applies,   cpu_create,
                                             cpu_execute,   cpu_destroy};
