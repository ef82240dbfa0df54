/* The register-tiled stride-phase kernels, written once over a small vector
 * vocabulary and included by each instruction-set file (cpu/phase_avx512.c,
 * cpu/phase_avx2.c), which first defines:
 *
 *   VL, vf, vmask                    lanes, vector and lane-mask types
 *   VREGS                            vector registers (the tiling's budget)
 *   v_zero, v_or (bitwise: merges lanes exactly), v_set1, v_loadu,
 *   v_loadu_mask (masked lanes read as 0 and are never touched), v_storeu_mask, v_fma(a, b, c) = a*b + c, v_bcast(p),
 *   v_mask_range(lo, hi) (lanes lo <= i < hi), v_interleave2(a, b, p)
 *   (stores a0 b0 a1 b1 ... to p[0 .. 2*VL)) and v_interleave2_stream (the
 *   same with non-temporal stores, p VL-aligned), v_stream(p, v)
 *   (non-temporal store to a VL-aligned p), v_fence() (orders those stores)
 *   NCDHW_MAXV, NCDHW_MAXO, NCDHW_OCB_MAX, NCDHW_TILES(X)   tile shapes
 *   NCDHW_SPLIT_FULL  1 where masked loads cost registers or time (AVX2,
 *                     and a little on Zen 4): taps whose lanes are all inside
 *                     the row load unmasked
 *   NDHWC_MAXV, NDHWC_MAXP, NDHWC_POS_MAX, NDHWC_TILES(X)
 *   CPU_ISA_SYMBOL, CPU_ISA_NAME
 *
 * Two kernels, one per layout, because the contiguous axis differs:
 *  - NCDHW: vectors run along j (the W positions of one phase, contiguous in
 *    x), a tile is O output channels x V vectors, weights are broadcast.  The
 *    phase's outputs are s apart in y, so for s > 1 the tiles of all phases
 *    go to a per-thread buffer and are interleaved on the way out.
 *  - NDHWC: vectors run along the output channels (contiguous in y and in
 *    the packed weights), a tile is P positions x V vectors, x is broadcast.
 * In both, each output element is summed by one tile in a fixed order (input
 * rows, then W taps, then input channels), so results do not depend on the
 * thread count.  W borders never reach the hot loop: NCDHW tiles load x
 * through lane masks made once per tile and tap, NDHWC tiles read positions
 * outside the row from a zero vector chosen once per tile and tap. */
#ifndef CONVT3D_CPU_PHASE_TILE_H
#define CONVT3D_CPU_PHASE_TILE_H

#include <string.h>

#include "kernels.h"

#define CPU_UNROLL _Pragma("GCC unroll 32")
#define CPU_INLINE static inline __attribute__((always_inline))
/* Vectors in one 64-byte cache line (at least one). */
#define LINE_VECS (VL * 4 >= 64 ? 1 : 64 / (VL * 4))
/* Hides a pointer's value from the optimiser, so that stepping it costs one
 * add per step where GCC would otherwise keep a register or a stack slot for
 * each unrolled step's address (see NCDHW_ACCUMULATE). */
#define CPU_OPAQUE(p) __asm__("" : "+r"(p))

/* Instantiation lists: X(n, args) for n = 1 .. N (args: the vector count,
 * and for the output-channel tiles the W taps and stride too). */
#define UPTO4(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__)
#define UPTO6(X, ...) UPTO4(X, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
#define UPTO8(X, ...) UPTO6(X, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__)
#define UPTO11(X, ...) UPTO8(X, __VA_ARGS__) X(9, __VA_ARGS__) X(10, __VA_ARGS__) X(11, __VA_ARGS__)
#define UPTO12(X, ...) UPTO11(X, __VA_ARGS__) X(12, __VA_ARGS__)
#define UPTO16(X, ...)                                                                         \
    UPTO12(X, __VA_ARGS__) X(13, __VA_ARGS__) X(14, __VA_ARGS__) X(15, __VA_ARGS__) X(16, __VA_ARGS__)

/* ---- NCDHW: O channels x V vectors along j ------------------------------ */

/* A tile sums over every (input row, W tap) pair: the row's (kd, kh) from
 * the row's list, the W tap from the chunk's prepared phase (which also
 * holds the tap's lane masks).  The pointers are formed as the tile goes:
 * listing the pairs per output row first cost more than the loop does. */
typedef struct ncdhw_tile_args {
    const float *x;          /* x (or the packed rows) + j0: row offsets add to it */
    const cpu_row_tap *rt;   /* the (kd, kh) rows reaching the output row */
    int64_t nrt;
    const cpu_tap *kw;       /* the W taps of the phase that read inside the row */
    const vmask *mask;       /* [tap][NCDHW_MAXV] lanes whose input is in the row */
    const unsigned char *full; /* [tap] 1 when every lane is (loads need no mask) */
    int64_t nkw;
    int64_t tap_stride;      /* packed weights between taps: cig * cogp (cogp as below) */
    const float *w;          /* packed weights of the group + oc0 */
    const float *bias;       /* bias of the group + oc0, or NULL */
    const vmask *store;      /* [NCDHW_MAXV]: lanes to write */
    int64_t cig, plane, cogp; /* plane: x channel stride; cogp: weights between ic */
    float *out;
    int64_t out_stride;      /* between output channels */
} ncdhw_tile_args;

typedef void (*ncdhw_tile_fn)(const ncdhw_tile_args *a);

/* One input channel's contribution: acc[o][v] += x[v] * w[o] (uses O, V, m,
 * full and acc of the enclosing tile). */
#define NCDHW_STEP(XP, WP)                                                                     \
    do {                                                                                       \
        vf xv_[NCDHW_MAXV];                                                                    \
        CPU_UNROLL for (int v = 0; v < V; v++)                                                 \
            xv_[v] = full ? v_loadu((XP) + v * VL) : v_loadu_mask((XP) + v * VL, m[v]);        \
        CPU_UNROLL for (int o = 0; o < O; o++) {                                               \
            const vf wb_ = v_bcast((WP) + o);                                                  \
            CPU_UNROLL for (int v = 0; v < V; v++)                                             \
                acc[o][v] = v_fma(xv_[v], wb_, acc[o][v]);                                     \
        }                                                                                      \
    } while (0)

/* acc[o][v] = bias (or 0) + the sum over A's (input row, W tap) pairs and
 * input channels (uses O, V and acc of the enclosing tile).  A macro, not a
 * function, so that acc stays in registers.  OPAQUE (a constant) steps the x
 * and weight pointers with one add each per channel instead of GCC's
 * per-step addresses, which spill to the stack: measured, that is 1-2% faster
 * in the stride-2 pair tiles (kernelbench) and 2% slower in the stride-1
 * tiles (k3s1p1), so only the pair tiles use it. */
#define NCDHW_ACCUMULATE(A, OPAQUE)                                                            \
    do {                                                                                       \
        const ncdhw_tile_args *a_ = (A);                                                       \
        CPU_UNROLL for (int o = 0; o < O; o++) {                                               \
            const vf b_ = a_->bias ? v_set1(a_->bias[o]) : v_zero();                           \
            CPU_UNROLL for (int v = 0; v < V; v++)                                             \
                acc[o][v] = b_;                                                                \
        }                                                                                      \
        const int64_t cig = a_->cig, plane = a_->plane, cogp = a_->cogp, ts = a_->tap_stride; \
        for (const cpu_row_tap *rt = a_->rt, *rend = a_->rt + a_->nrt; rt < rend; rt++)        \
            for (int64_t t = 0; t < a_->nkw; t++) {                                            \
                vmask m[NCDHW_MAXV];                                                           \
                CPU_UNROLL for (int v = 0; v < V; v++)                                         \
                    m[v] = a_->mask[t * NCDHW_MAXV + v];                                       \
                /* Loop-invariant: the compiler unswitches the ic loop on it. */               \
                const int full = NCDHW_SPLIT_FULL && a_->full[t];                              \
                const float *xp = a_->x + rt->x_off + a_->kw[t].delta;                         \
                const float *wp = a_->w + (rt->w_tap + a_->kw[t].k) * ts;                      \
                /* Unrolled by 8 so that short channel loops (cig = 4, 8) run                  \
                 * straight-line code and longer ones a short fixed trip count the             \
                 * branch predictor gets right; the order of the sum is unchanged. */          \
                int64_t ic = 0;                                                                \
                for (; ic + 8 <= cig; ic += 8)                                                 \
                    CPU_UNROLL for (int u = 0; u < 8; u++) {                                   \
                        NCDHW_STEP(xp, wp);                                                    \
                        xp += plane;                                                           \
                        wp += cogp;                                                            \
                        if (OPAQUE) {                                                          \
                            CPU_OPAQUE(xp);                                                    \
                            CPU_OPAQUE(wp);                                                    \
                        }                                                                      \
                    }                                                                          \
                for (; ic < cig; ic++) {                                                       \
                    NCDHW_STEP(xp, wp);                                                        \
                    xp += plane;                                                               \
                    wp += cogp;                                                                \
                }                                                                              \
            }                                                                                  \
    } while (0)

CPU_INLINE void ncdhw_tile_body(const ncdhw_tile_args *a, const int O, const int V)
{
    vf acc[NCDHW_MAXO][NCDHW_MAXV];
    NCDHW_ACCUMULATE(a, 0);
    CPU_UNROLL for (int o = 0; o < O; o++)
        CPU_UNROLL for (int v = 0; v < V; v++)
            v_storeu_mask(a->out + o * a->out_stride + v * VL, acc[o][v], a->store[v]);
}

/* Both phases of a stride-2 block in one call: phase 0 (a0) goes to its
 * buffer as usual, then phase 1 (a1) is interleaved with it straight from the
 * accumulators into y at a1->out (channels a1->out_stride apart), nout
 * outputs per channel: streamed where every vector of a cache line is
 * written whole (nt: y rows line-aligned), stored through a mask elsewhere.
 * Saves the second buffer pass and a separate interleave loop per block. */
CPU_INLINE void ncdhw_pair_body(const ncdhw_tile_args *a0, const ncdhw_tile_args *a1,
                                int64_t nout, int nt, const int O, const int V)
{
    vf acc[NCDHW_MAXO][NCDHW_MAXV];
    NCDHW_ACCUMULATE(a0, 1);
    CPU_UNROLL for (int o = 0; o < O; o++)
        CPU_UNROLL for (int v = 0; v < V; v++)
            v_storeu_mask(a0->out + o * a0->out_stride + v * VL, acc[o][v], a0->store[v]);
    NCDHW_ACCUMULATE(a1, 1);
    vmask keep[2 * NCDHW_MAXV];
    int whole[2 * NCDHW_MAXV];
    CPU_UNROLL for (int h = 0; h < 2 * V; h++) {
        const int64_t n = cpu_min64(cpu_max64(nout - h * VL, 0), VL);
        keep[h] = v_mask_range(0, (int)n);
        whole[h] = nt && nout >= (h / LINE_VECS + 1) * LINE_VECS * VL;
    }
    CPU_UNROLL for (int o = 0; o < O; o++)
        CPU_UNROLL for (int v = 0; v < V; v++) {
            const vf p0 = v_loadu(a0->out + o * a0->out_stride + v * VL);
            float *yo = a1->out + o * a1->out_stride + 2 * v * VL;
            const vf lo = v_zip_lo(p0, acc[o][v]), hi = v_zip_hi(p0, acc[o][v]);
            if (whole[2 * v])
                v_stream(yo, lo);
            else
                v_storeu_mask(yo, lo, keep[2 * v]);
            if (whole[2 * v + 1])
                v_stream(yo + VL, hi);
            else
                v_storeu_mask(yo + VL, hi, keep[2 * v + 1]);
        }
}

#define DEF_NCDHW_TILE(O, V)                                                                   \
    static void ncdhw_tile_##O##x##V(const ncdhw_tile_args *a) { ncdhw_tile_body(a, O, V); }
NCDHW_TILES(DEF_NCDHW_TILE)
#define REF_NCDHW_TILE(O, V) [V - 1][O - 1] = ncdhw_tile_##O##x##V,
static const ncdhw_tile_fn ncdhw_tiles[NCDHW_MAXV][NCDHW_MAXO] = {NCDHW_TILES(REF_NCDHW_TILE)};

typedef void (*ncdhw_pair_fn)(const ncdhw_tile_args *a0, const ncdhw_tile_args *a1, int64_t nout,
                              int nt);
#define DEF_NCDHW_PAIR(O, V)                                                                   \
    static void ncdhw_pair_##O##x##V(const ncdhw_tile_args *a0, const ncdhw_tile_args *a1,     \
                                     int64_t nout, int nt)                                     \
    {                                                                                          \
        ncdhw_pair_body(a0, a1, nout, nt, O, V);                                               \
    }
NCDHW_TILES(DEF_NCDHW_PAIR)
#define REF_NCDHW_PAIR(O, V) [V - 1][O - 1] = ncdhw_pair_##O##x##V,
static const ncdhw_pair_fn ncdhw_pairs[NCDHW_MAXV][NCDHW_MAXO] = {NCDHW_TILES(REF_NCDHW_PAIR)};

/* Scratch layout of the NCDHW row kernel: a few prepared-chunk slots (see
 * ncdhw_prep_slot; as many as pl->cache.prep_bytes holds, a quarter of L2:
 * tiling.h), then the tile buffer [2][channel][L]. */
#define NCDHW_PREP_SLOTS_MAX 8

static size_t ncdhw_slot_bytes(const cpu_plan *pl);
static int ncdhw_prep_slots(const cpu_plan *pl)
{
    const size_t n = (size_t)pl->cache.prep_bytes / ncdhw_slot_bytes(pl);
    return n < 1 ? 1 : n > NCDHW_PREP_SLOTS_MAX ? NCDHW_PREP_SLOTS_MAX : (int)n;
}
static size_t ncdhw_prep_bytes(const cpu_plan *pl)
{
    const size_t n = (size_t)ncdhw_prep_slots(pl) * ncdhw_slot_bytes(pl);
    return (n + 63) / 64 * 64;
}

/* How a chunk's phases reach y: stride 1 tiles store straight into y (or,
 * for a large y, through the buffer and streaming stores); with stride 2 both
 * phases are buffered and interleaved with vector shuffles; larger strides
 * buffer one phase at a time and store it strided. */
enum ncdhw_out_mode { NCDHW_DIRECT, NCDHW_BUFFERED, NCDHW_PAIR, NCDHW_STRIDED };

/* Streaming (non-temporal) stores, for outputs far larger than the caches:
 * their lines are not read again soon, and streaming spares the
 * read-for-ownership of each.  Only where every channel row of the block
 * starts `align` floats aligned: partial lines written with plain stores next
 * to streamed ones cost more than streaming saves (measured: kernelbench with
 * a 16-byte-aligned y, 20% slower than without streaming). */
static int ncdhw_can_stream(const cpu_plan *pl, const float *y0, int64_t align)
{
    return pl->stream && (uintptr_t)y0 % ((size_t)align * sizeof(float)) == 0 &&
           pl->s.y_stride[1] % align == 0;
}

/* Where one call writes a row's stretch and the rest of its lines come much
 * later (another row or block), a line must be streamed whole in that call:
 * a line left half written by streaming stores costs the core a partial
 * write.  With 8-lane vectors (AVX2) a row of 24 outputs streamed its third
 * half line that way, and random_120 of seed 45 (Zen 3) ran 2.8x slower than
 * without streaming.  Rows so streamed start on a line. */
static int ncdhw_can_stream_lines(const cpu_plan *pl, const float *y0)
{
    return ncdhw_can_stream(pl, y0, LINE_VECS * VL);
}

/* dst[0 .. n) = src[0 .. n); dst line-aligned, whole lines streamed. */
static void stream_copy(float *dst, const float *src, int64_t n)
{
    const int64_t lines = n / (LINE_VECS * VL) * (LINE_VECS * VL);
    int64_t i = 0;
    for (; i < lines; i += VL)
        v_stream(dst + i, v_loadu(src + i));
    memcpy(dst + i, src + i, (size_t)(n - i) * sizeof(float));
}

#include "interleave.h"

/* One phase of one chunk, ready for its tiles: the W taps that read inside
 * the row for some lane (the others are dropped, so border tiles do less
 * work), their lane masks, and the lanes to store. */
typedef struct ncdhw_prep {
    cpu_tap *kw;
    vmask *mask;
    unsigned char *full;
    int64_t nkw;
    int64_t len; /* j positions of the phase in the chunk; 0: none */
    vmask store[NCDHW_MAXV];
} ncdhw_prep;

/* The preparation of (at most) two phases c0, c0 + 1 for the chunk at j0 of
 * a segment ending at j1.  It depends on nothing else, and a thread's rows
 * mostly repeat the same few chunks, so a few slots (direct-mapped on the
 * chunk index) keep it; the driver zeroes the scratch, so a slot starts
 * invalid.  The slot's arrays follow the header: taps [2][kW], masks
 * [2][kW][NCDHW_MAXV], all-lanes flags [2][kW]. */
typedef struct ncdhw_prep_slot {
    int64_t valid, c0, j0, j1;
    ncdhw_prep p[2];
} ncdhw_prep_slot;

static size_t ncdhw_slot_bytes(const cpu_plan *pl)
{
    const size_t kW = (size_t)pl->s.k[2];
    const size_t n = (sizeof(ncdhw_prep_slot) + 63) / 64 * 64 +
                     2 * kW * (sizeof(cpu_tap) + NCDHW_MAXV * sizeof(vmask) + 1);
    return (n + 63) / 64 * 64;
}

static void ncdhw_prep_phase(const cpu_plan *pl, const cpu_row_job *job, int64_t c, int64_t j0,
                             int V, ncdhw_prep *pp)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pw = &pl->ph[2];
    const int64_t L = (int64_t)V * VL;
    const int64_t jend = cpu_min64(cpu_min64(j0 + L, cpu_phase_len(s->out[2], s->s[2], c)), job->j1);
    pp->len = cpu_max64(jend - j0, 0);
    pp->nkw = 0;
    if (!pp->len)
        return;
    for (int64_t t = pw->start[c]; t < pw->start[c + 1]; t++) {
        const int64_t delta = pw->taps[t].delta;
        /* lanes whose input index j + delta lies in [w_lo, w_hi) */
        const int64_t first = cpu_max64(job->w_lo - delta - j0, 0);
        const int64_t last = cpu_min64(job->w_hi - delta - j0, L); /* exclusive */
        if (first >= last)
            continue;
        const int64_t n = pp->nkw++;
        pp->kw[n] = pw->taps[t];
        pp->full[n] = first == 0 && last == L;
        for (int v = 0; v < V; v++)
            pp->mask[n * NCDHW_MAXV + v] =
                v_mask_range((int)cpu_min64(cpu_max64(first - v * VL, 0), VL),
                             (int)cpu_min64(cpu_max64(last - v * VL, 0), VL));
    }
    for (int v = 0; v < V; v++)
        pp->store[v] = v_mask_range(0, (int)cpu_min64(cpu_max64(pp->len - v * VL, 0), VL));
}

/* The prepared phases c0 .. c0 + group - 1 of the chunk at j0. */
static const ncdhw_prep_slot *ncdhw_prepared(const cpu_plan *pl, const cpu_row_job *job,
                                             int64_t c0, int64_t group, int64_t j0, int V)
{
    const int64_t L = (int64_t)V * VL, kW = pl->s.k[2];
    const size_t bytes = ncdhw_slot_bytes(pl);
    char *base = (char *)job->scratch + (size_t)((j0 / L) % ncdhw_prep_slots(pl)) * bytes;
    ncdhw_prep_slot *slot = (ncdhw_prep_slot *)base;
    if (slot->valid && slot->c0 == c0 && slot->j0 == j0 && slot->j1 == job->j1)
        return slot;
    char *arrays = base + (sizeof(ncdhw_prep_slot) + 63) / 64 * 64;
    for (int64_t i = 0; i < 2; i++) {
        ncdhw_prep *pp = &slot->p[i];
        pp->kw = (cpu_tap *)arrays + i * kW;
        pp->mask = (vmask *)(arrays + 2 * kW * sizeof(cpu_tap)) + i * kW * NCDHW_MAXV;
        pp->full =
            (unsigned char *)(arrays + 2 * kW * (sizeof(cpu_tap) + NCDHW_MAXV * sizeof(vmask))) +
            i * kW;
        if (i < group)
            ncdhw_prep_phase(pl, job, c0 + i, j0, V, pp);
        else
            pp->len = pp->nkw = 0;
    }
    slot->valid = 1;
    slot->c0 = c0;
    slot->j0 = j0;
    slot->j1 = job->j1;
    return slot;
}

/* A tile's W taps, masks and output from a prepared phase. */
static void ncdhw_prep_into(ncdhw_tile_args *a, const ncdhw_prep *pp, float *out)
{
    a->kw = pp->kw;
    a->mask = pp->mask;
    a->full = pp->full;
    a->nkw = pp->nkw;
    a->store = pp->store;
    a->out = out;
}

/* The job's row into y laid out as NCDHW rows: output channel o at
 * job->y + o * ys1, output w at (w - jy * sw) from there (jy: the phase
 * position of y's first output; the transposed NDHWC kernel points y at a
 * buffer holding one chunk).  Streaming stores only where may_stream. */
static void ncdhw_row_into(const cpu_plan *pl, const cpu_row_job *job, int64_t ys1, int64_t jy,
                           int may_stream)
{
    const convt3d_shape *s = &pl->s;
    const int V = pl->tile_a, OB = pl->tile_b;
    const int64_t L = (int64_t)V * VL;
    const int64_t sw = s->s[2];
    const cpu_dim_phases *pw = &pl->ph[2];
    const int stream = may_stream && pl->stream;
    const enum ncdhw_out_mode mode = sw == 1 ? (stream ? NCDHW_BUFFERED : NCDHW_DIRECT)
                                     : sw == 2 && pw->nphase == 2 ? NCDHW_PAIR
                                                                  : NCDHW_STRIDED;
    const int64_t group = mode == NCDHW_PAIR ? 2 : 1; /* phases prepared together */
    float *buf = (float *)((char *)job->scratch + ncdhw_prep_bytes(pl));
    ncdhw_tile_args a;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.tap_stride = s->cig * OB; /* weights in blocks of OB channels (plan_ncdhw) */
    a.cig = s->cig;
    a.plane = job->x_plane;
    a.cogp = OB;

    for (int64_t j0 = job->j0; j0 < job->j1; j0 += L) {
        for (int64_t c0 = 0; c0 < pw->nphase; c0 += group) {
            const ncdhw_prep *prep = ncdhw_prepared(pl, job, c0, group, j0, V)->p;
            if (!prep[0].len)
                continue; /* with a pair, phase 1 is never longer than phase 0 */
            a.x = job->x + j0;
            for (int64_t oc0 = 0; oc0 < s->cog; oc0 += OB) {
                const int nb = (int)cpu_min64(OB, s->cog - oc0);
                float *yb = job->y + oc0 * ys1;
                const int64_t jr = j0 - jy; /* j0 relative to y */
                const int nt =
                    stream && ncdhw_can_stream_lines(pl, yb + jr * (mode == NCDHW_PAIR ? 2 : 1));
                /* without streaming, stride-1 tiles store straight into y */
                const int direct = mode == NCDHW_DIRECT || (mode == NCDHW_BUFFERED && !nt);
                a.out_stride = direct ? ys1 : L;
                a.w = job->w + oc0 * s->k_volume * s->cig;
                a.bias = job->bias ? job->bias + oc0 : NULL;
                if (mode == NCDHW_PAIR && prep[1].len) {
                    /* both phases in one call, interleaved from the registers */
                    ncdhw_tile_args a1 = a;
                    ncdhw_prep_into(&a, &prep[0], buf);
                    ncdhw_prep_into(&a1, &prep[1], yb + jr * 2);
                    a1.out_stride = ys1;
                    ncdhw_pairs[V - 1][nb - 1](&a, &a1, prep[0].len + prep[1].len, nt);
                    continue;
                }
                for (int64_t i = 0; i < group; i++) {
                    const ncdhw_prep *pp = &prep[i];
                    if (!pp->len)
                        continue;
                    ncdhw_prep_into(&a, pp, direct ? yb + jr : buf + i * OB * L);
                    ncdhw_tiles[V - 1][nb - 1](&a);
                    if (mode == NCDHW_BUFFERED && !direct)
                        for (int o = 0; o < nb; o++)
                            stream_copy(yb + o * ys1 + jr, buf + o * L, pp->len);
                    if (mode == NCDHW_STRIDED)
                        for (int o = 0; o < nb; o++) {
                            /* j0 > 0 only when the phase has several outputs: no overflow */
                            float *yc = yb + o * ys1 + jr * sw + c0;
                            for (int64_t j = 0; j < pp->len; j++)
                                yc[j * sw] = buf[o * L + j];
                        }
                }
                if (mode == NCDHW_PAIR)
                    for (int o = 0; o < nb; o++) {
                        float *y2 = yb + o * ys1 + jr * 2;
                        const float *b0 = buf + o * L, *b1 = buf + (OB + o) * L;
                        ncdhw_interleave2(y2, b0, b1, prep[0].len, prep[1].len, nt);
                    }
            }
        }
    }
}

static void row_ncdhw(const cpu_plan *pl, const cpu_row_job *job)
{
    ncdhw_row_into(pl, job, pl->s.y_stride[1], 0, 1);
}

/* ---- NCDHW, W stride 1 or 2: P outputs x V vectors of output channels --- */

/* Why a second NCDHW tile: with dilation 1 along W, input x[i] feeds the kW
 * consecutive outputs o = i*s - p + k, so a tile of P consecutive outputs
 * with the output channels in its lanes broadcasts each input element once
 * for all its taps and, for s = 2, for both W phases: per input channel about
 * (P + kW) / s broadcasts and kW * V weight vectors feed P * kW / s * V FMAs
 * (the W-lane tile above loads V + O values for its O * V FMAs, a load an FMA
 * with one vector).  The window elements outside the input row are skipped,
 * not computed under masks, so the W borders cost nothing, and the outputs
 * come out consecutive, interleaving the phases for free.  The lanes hold
 * channels, so the tile is transposed in registers on its way to y.
 *
 * Its weights are blocked like the W-lane tile's but with the W taps inside
 * the input channels, [kd][kh][ic][kw][oc < ob] (cpu_plan.ncdhw_oc), so a
 * channel step reads one contiguous kW * ob run. */

/* r[q] = row q of a VL x VL block -> r[c] = its column c: each quad of rows
 * is transposed within the 128-bit lanes (pairs, then quads), then the
 * lanes themselves (v_transpose_lanes). */
CPU_INLINE void v_transpose(vf r[VL])
{
    CPU_UNROLL for (int i = 0; i < VL / 4; i++) {
        vf *q = r + 4 * i;
        const vf t0 = v_unpacklo(q[0], q[1]), t1 = v_unpackhi(q[0], q[1]);
        const vf t2 = v_unpacklo(q[2], q[3]), t3 = v_unpackhi(q[2], q[3]);
        q[0] = v_shuffle_0101(t0, t2);
        q[1] = v_shuffle_2323(t0, t2);
        q[2] = v_shuffle_0101(t1, t3);
        q[3] = v_shuffle_2323(t1, t3);
    }
    v_transpose_lanes(r);
}

/* A tile's outputs o0 .. o0 + P - 1 start at a multiple of s (P is one), so
 * c = (o0 + p - (kW - 1)) mod s is the same for every tile of a plan and
 * window element e, input i0 + e with i0 = (o0 + p - (kW - 1) - c) / s,
 * feeds output o0 + e*s + k - (kW - 1) - c through tap k. */
typedef struct ocl_tile_args {
    const float *x;         /* x (or the packed rows) at window element 0, input i0 */
    const cpu_row_tap *rt;  /* the (kd, kh) rows reaching the output row */
    int64_t nrt;
    const float *w;         /* this channel block's weights */
    const float *bias;      /* bias of the block's channels, or NULL */
    int64_t cig, plane, ob; /* plane: x channel stride; ob: weights between W taps */
    unsigned skip;          /* bit e: window element e lies outside the input row */
    float *out;             /* y at (first channel of the block, o0) */
    int64_t out_stride;     /* between output channels */
    int nout;               /* channels to write, <= V * VL */
    int stream;             /* each channel's P = VL outputs are one aligned vector: stream it */
} ocl_tile_args;

typedef void (*ocl_tile_fn)(const ocl_tile_args *a);
#define OCL_MAXK 5 /* W taps and stride of the tiles built (OCL_ALL) */
#define OCL_MAXS 3
/* Input channels ahead that a tile prefetches.  Measured here (Zen 5): 1 to
 * 8 are 2-7% faster than none on k3s1p1, k3s2p1op1_wide and k4s2p1 (run to
 * run), unet_up_k2s2 within noise; 2 is the best by a little. */
#define OCL_PREFETCH 2

/* acc[p] sums window element e through tap k where p = e*S + k - (K - 1) - C
 * (C: c above).  Only the first and the last ceil((K - 1) / S) elements can
 * lie outside the input row (the padding and output padding bound it), so
 * only they test the skip bits. */
CPU_INLINE void ocl_tile_body(const ocl_tile_args *a, const int P, const int V, const int K,
                              const int S, const int C)
{
    const int E = (P + K - 2 + C) / S + 1, edge = (K + S - 2) / S;
    vf acc[OCL_MAXP][OCL_MAXV];
    CPU_UNROLL for (int v = 0; v < V; v++) {
        const vmask m = v_mask_range(0, (int)cpu_min64(cpu_max64(a->nout - v * VL, 0), VL));
        const vf b = a->bias ? v_loadu_mask(a->bias + v * VL, m) : v_zero();
        CPU_UNROLL for (int p = 0; p < P; p++)
            acc[p][v] = b;
    }
    const int64_t cig = a->cig, plane = a->plane, ob = a->ob, step = K * a->ob;
    const unsigned skip = a->skip;
    for (const cpu_row_tap *rt = a->rt, *rend = a->rt + a->nrt; rt < rend; rt++) {
        const float *xp = a->x + rt->x_off;
        const float *wp = a->w + rt->w_tap * cig * ob; /* w_tap = (kd * kH + kh) * K */
        for (int64_t ic = 0; ic < cig; ic++) {
            /* The window of the channel OCL_PREFETCH steps ahead: its first
             * and last element, all its lines when it spans two (past the
             * last channel this reaches other data or none: prefetches do
             * not fault).  The channels of a row are planes apart, a
             * multiple of 4 KiB in the bench shapes, so they share cache
             * sets and evict each other: without this the window often
             * comes from L3. */
            __builtin_prefetch(xp + OCL_PREFETCH * plane);
            __builtin_prefetch(xp + OCL_PREFETCH * plane + E - 1);
            vf wv[OCL_MAXK][OCL_MAXV];
            CPU_UNROLL for (int k = 0; k < K; k++)
                CPU_UNROLL for (int v = 0; v < V; v++)
                    wv[k][v] = v_loadu(wp + k * ob + v * VL);
            CPU_UNROLL for (int e = 0; e < E; e++) {
                if ((e < edge || e >= E - edge) && (skip >> e & 1u))
                    continue;
                const vf b = v_bcast(xp + e);
                CPU_UNROLL for (int k = 0; k < K; k++) {
                    const int p = e * S + k - (K - 1) - C;
                    if (p < 0 || p >= P)
                        continue;
                    CPU_UNROLL for (int v = 0; v < V; v++)
                        acc[p][v] = v_fma(b, wv[k][v], acc[p][v]);
                }
            }
            xp += plane;
            wp += step;
        }
    }
    /* Outputs p0 .. p0 + VL - 1 at a time: P exceeds VL where the vectors
     * are short (AVX2), so that a tile still keeps enough accumulators. */
    CPU_UNROLL for (int p0 = 0; p0 < P; p0 += VL) {
        const vmask keep = v_mask_range(0, P - p0 < VL ? P - p0 : VL);
        CPU_UNROLL for (int v = 0; v < V; v++) {
            vf t[VL];
            CPU_UNROLL for (int q = 0; q < VL; q++)
                t[q] = p0 + q < P ? acc[p0 + q][v] : v_zero();
            v_transpose(t); /* t[o]: channel v * VL + o at outputs p0 .. */
            CPU_UNROLL for (int o = 0; o < VL; o++) {
                float *yo = a->out + (v * VL + o) * a->out_stride + p0;
                if (v * VL + o >= a->nout)
                    break;
                if (P == VL && a->stream)
                    v_stream(yo, t[o]);
                else
                    v_storeu_mask(yo, t[o], keep);
            }
        }
    }
}

#define DEF_OCL_TILE(P, V, K, S, C)                                                            \
    static void ocl_tile_##P##x##V##k##K##s##S##c##C(const ocl_tile_args *a)                   \
    {                                                                                          \
        ocl_tile_body(a, P, V, K, S, C);                                                       \
    }
#define REF_OCL_TILE(P, V, K, S, C)                                                            \
    [S - 1][K - 1][C][V - 1][P - 1] = ocl_tile_##P##x##V##k##K##s##S##c##C,
/* The (W taps, W stride, c) built: 1-5 taps at strides 1-3. */
#define OCL_ALL(X)                                                                             \
    OCL_TILES(X, 1, 1, 0)                                                                      \
    OCL_TILES(X, 2, 1, 0) OCL_TILES(X, 3, 1, 0) OCL_TILES(X, 2, 2, 0) OCL_TILES(X, 2, 2, 1)    \
        OCL_TILES(X, 3, 2, 0) OCL_TILES(X, 3, 2, 1) OCL_TILES(X, 4, 2, 0) OCL_TILES(X, 4, 2, 1) \
            OCL_TILES(X, 1, 2, 0) OCL_TILES(X, 1, 2, 1) OCL_TILES(X, 4, 1, 0)                  \
                OCL_TILES(X, 1, 3, 0) OCL_TILES(X, 1, 3, 1) OCL_TILES(X, 1, 3, 2)              \
                    OCL_TILES(X, 2, 3, 0) OCL_TILES(X, 2, 3, 1) OCL_TILES(X, 2, 3, 2)          \
                        OCL_TILES(X, 3, 3, 0) OCL_TILES(X, 3, 3, 1) OCL_TILES(X, 3, 3, 2)      \
                            OCL_TILES(X, 4, 3, 0) OCL_TILES(X, 4, 3, 1) OCL_TILES(X, 4, 3, 2)  \
                                OCL_TILES(X, 5, 1, 0) OCL_TILES(X, 5, 2, 0)                    \
                                    OCL_TILES(X, 5, 2, 1) OCL_TILES(X, 5, 3, 0)                \
                                        OCL_TILES(X, 5, 3, 1) OCL_TILES(X, 5, 3, 2)
OCL_ALL(DEF_OCL_TILE)
static const ocl_tile_fn ocl_tiles[OCL_MAXS][OCL_MAXK][OCL_MAXS][OCL_MAXV][OCL_MAXP] = {
    OCL_ALL(REF_OCL_TILE)};

/* c of ocl_tile_args for the shape. */
static int64_t ocl_phase(const convt3d_shape *s)
{
    const int64_t S = s->s[2];
    return ((s->p[2] - (s->k[2] - 1)) % S + S) % S;
}

/* The tile for a shape's W taps and stride, or NULL where none is built. */
static ocl_tile_fn ocl_tile(const convt3d_shape *s, int nvec, int np)
{
    const int64_t K = s->k[2], S = s->s[2];
    return S <= OCL_MAXS && K <= OCL_MAXK
               ? ocl_tiles[S - 1][K - 1][ocl_phase(s)][nvec - 1][np - 1]
               : NULL;
}

/* The job's outputs [j0 * s, j1 * s) of the row, tile by tile. */
static void row_ncdhw_oc(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int P = pl->tile_a;
    const int64_t K = s->k[2], S = s->s[2], pad = s->p[2], inw = s->in[2], ob = pl->w_block;
    const int64_t c = ocl_phase(s), oend = cpu_min64(job->j1 * S, s->out[2]);
    ocl_tile_args a;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.cig = s->cig;
    a.plane = job->x_plane;
    a.ob = ob;
    a.out_stride = s->y_stride[1];
    for (int64_t oc0 = 0; oc0 < s->cog; oc0 += ob) {
        a.nout = (int)cpu_min64(ob, s->cog - oc0);
        const int nvec = (a.nout + VL - 1) / VL;
        a.w = job->w + oc0 * s->k_volume * s->cig; /* blocks of ob channels (plan_ncdhw_oc) */
        a.bias = job->bias ? job->bias + oc0 : NULL;
        for (int64_t o0 = job->j0 * S; o0 < oend; o0 += P) {
            const int np = (int)cpu_min64(P, oend - o0);
            const int64_t i0 = (o0 + pad - (K - 1) - c) / S; /* exact */
            a.skip = 0;
            for (int e = 0; e < (np + K - 2 + (int)c) / S + 1; e++)
                if (i0 + e < 0 || i0 + e >= inw)
                    a.skip |= 1u << e;
            a.x = job->x + i0;
            a.out = job->y + oc0 * s->y_stride[1] + o0;
            /* a line's vectors come from consecutive tiles here, close
             * enough in time to stream them one at a time (random_156 of
             * seed 45, Zen 3: 24 ms streamed, 32 not) */
            a.stream = np == VL && ncdhw_can_stream(pl, a.out, VL);
            ocl_tile(s, nvec, np)(&a);
        }
    }
}

/* ---- NDHWC: P positions along j x V vectors of output channels ---------- */

typedef struct ndhwc_tile_args {
    const float *x;          /* x at (n, group's first channel) */
    const float *w;          /* packed weights of the group + oc0 */
    const float *bias;       /* padded bias of the group + oc0, or NULL */
    const float *zeros;      /* cig zeros, read for positions outside the row */
    const cpu_row_tap *rt;
    int64_t nrt;
    const cpu_tap *kw;
    int64_t nkw;
    int64_t j0, in_w, xw;    /* first position; input width; x stride along w */
    int64_t x_plane;         /* packed rows (cpu/rowpack.h): floats between channels */
    int64_t cig, tap_stride, cogp;
    float *out;              /* y at the tile's first position, channel oc0 */
    int64_t out_stride;      /* between positions: s_w * C_out */
    int64_t npos;            /* positions to write */
    vmask last;              /* lanes of the last vector to write */
} ndhwc_tile_args;

typedef void (*ndhwc_tile_fn)(const ndhwc_tile_args *a);

/* Input channels ahead whose weights the NDHWC tile prefetches (0: none,
 * the AVX-512 build as measured before).  A tile streams one weight row a
 * channel, C_out apart, from L2. */
#ifndef NDHWC_PREFETCH_W
#define NDHWC_PREFETCH_W 0
#endif

/* One input channel's products into the P x V tile: the weights at wp,
 * position p's input at X(p).  Weights first where P x V accumulators, V
 * weight vectors and a broadcast fit the registers; else (3 x 4 on AVX2)
 * the P broadcasts kept and the weights loaded one at a time. */
#define NDHWC_CHANNEL_FMA(X)                                                                   \
    do {                                                                                       \
        if (P * V + V + 1 <= VREGS) {                                                          \
            vf wv_[NDHWC_MAXV];                                                                \
            CPU_UNROLL for (int v = 0; v < V; v++) wv_[v] = v_loadu(wp + v * VL);              \
            CPU_UNROLL for (int p = 0; p < P; p++)                                             \
            {                                                                                  \
                const vf xv_ = v_bcast(X(p));                                                  \
                CPU_UNROLL for (int v = 0; v < V; v++) acc[p][v] = v_fma(xv_, wv_[v], acc[p][v]); \
            }                                                                                  \
        } else {                                                                               \
            vf xv_[NDHWC_MAXP];                                                                \
            CPU_UNROLL for (int p = 0; p < P; p++) xv_[p] = v_bcast(X(p));                     \
            CPU_UNROLL for (int v = 0; v < V; v++)                                             \
            {                                                                                  \
                const vf wv_ = v_loadu(wp + v * VL);                                           \
                CPU_UNROLL for (int p = 0; p < P; p++) acc[p][v] = v_fma(xv_[p], wv_, acc[p][v]); \
            }                                                                                  \
        }                                                                                      \
    } while (0)
#define NDHWC_PACKED_X(p) (xb + (p))
#define NDHWC_ROW_X(p) (xp[p] + ic)

/* One tap's products on packed rows (PACKED tiles): x channel-major with
 * zero margins, so every position reads xb + p of its channel row, one base
 * and constant offsets, with no border test. */
#define NDHWC_PACKED_TAP()                                                                     \
    do {                                                                                       \
        const float *xb = xr + a->j0 + a->kw[t].delta;                                         \
        for (int64_t ic = 0; ic < cig; ic++, xb += a->x_plane, wp += cogp)                     \
            NDHWC_CHANNEL_FMA(NDHWC_PACKED_X);                                                 \
    } while (0)

CPU_INLINE void ndhwc_tile_body(const ndhwc_tile_args *a, const int P, const int V,
                                const int PACKED)
{
    vf acc[NDHWC_MAXP][NDHWC_MAXV];
    CPU_UNROLL for (int v = 0; v < V; v++) {
        const vf b = a->bias ? v_loadu(a->bias + v * VL) : v_zero();
        CPU_UNROLL for (int p = 0; p < P; p++)
            acc[p][v] = b;
    }
    const int64_t cig = a->cig, cogp = a->cogp, tap_stride = a->tap_stride;
    for (int64_t r = 0; r < a->nrt; r++) {
        const float *xr = a->x + a->rt[r].x_off;
        const float *wr = a->w + a->rt[r].w_tap * tap_stride;
        for (int64_t t = 0; t < a->nkw; t++) {
            const int64_t iw0 = a->j0 + a->kw[t].delta;
            const float *wp = wr + a->kw[t].k * tap_stride;
            if (PACKED) {
                NDHWC_PACKED_TAP();
                continue;
            }
            const float *xp[NDHWC_MAXP];
            if (iw0 >= 0 && iw0 + P <= a->in_w) {
                /* every position inside the row: xw apart from one base, no
                 * per-position test (with one or two input channels the
                 * tests and their spilled pointers cost more than the FMAs:
                 * perf, 1 -> 16 channels, k5 s1) */
                const float *xb = xr + iw0 * a->xw;
                CPU_UNROLL for (int p = 0; p < P; p++)
                    xp[p] = xb + p * a->xw;
            } else {
                CPU_UNROLL for (int p = 0; p < P; p++) {
                    const int64_t iw = iw0 + p;
                    xp[p] = iw >= 0 && iw < a->in_w ? xr + iw * a->xw : a->zeros;
                }
            }
            for (int64_t ic = 0; ic < cig; ic++) {
                if (NDHWC_PREFETCH_W) {
                    __builtin_prefetch(wp + NDHWC_PREFETCH_W * cogp);
                    __builtin_prefetch(wp + NDHWC_PREFETCH_W * cogp + V * VL - 1);
                }
                NDHWC_CHANNEL_FMA(NDHWC_ROW_X);
                wp += cogp;
            }
        }
    }
    const vmask full = v_mask_range(0, VL);
    CPU_UNROLL for (int p = 0; p < P; p++) {
        if (p >= a->npos)
            break;
        CPU_UNROLL for (int v = 0; v < V; v++)
            v_storeu_mask(a->out + p * a->out_stride + v * VL, acc[p][v],
                          v == V - 1 ? a->last : full);
    }
}

#define DEF_NDHWC_TILE(P, V)                                                                   \
    static void ndhwc_tile_##P##x##V(const ndhwc_tile_args *a) { ndhwc_tile_body(a, P, V, 0); } \
    static void ndhwc_packed_##P##x##V(const ndhwc_tile_args *a) { ndhwc_tile_body(a, P, V, 1); }
NDHWC_TILES(DEF_NDHWC_TILE)
#define REF_NDHWC_TILE(P, V) [V - 1][P - 1] = ndhwc_tile_##P##x##V,
#define REF_NDHWC_PACKED(P, V) [V - 1][P - 1] = ndhwc_packed_##P##x##V,
static const ndhwc_tile_fn ndhwc_tiles[NDHWC_MAXV][NDHWC_MAXP] = {NDHWC_TILES(REF_NDHWC_TILE)};
static const ndhwc_tile_fn ndhwc_packed_tiles[NDHWC_MAXV][NDHWC_MAXP] = {
    NDHWC_TILES(REF_NDHWC_PACKED)};

/* The NDHWC tiles of a job's row (here and in cpu/ndhwc_rows.h): the job's
 * positions of the longest W phase split into the fewest tiles of at most
 * P, as even as possible, and each tile computes only its own positions
 * (the tile built for that count): a fixed P would compute a short last
 * tile's missing positions in full.  Which tile sums an output does not
 * change its sum's order. */
typedef struct ndhwc_row_split {
    int64_t j0, n, ntile; /* first position, positions of phase 0, tiles */
} ndhwc_row_split;

typedef struct ndhwc_row_tile {
    int64_t j0, npos; /* npos <= 0: phase c has no position in the tile */
} ndhwc_row_tile;

static ndhwc_row_split ndhwc_row_split_of(const cpu_plan *pl, const cpu_row_job *job, int P)
{
    const int64_t jend = cpu_min64(job->j1, cpu_phase_len(pl->s.out[2], pl->s.s[2], 0));
    ndhwc_row_split rs;
    rs.j0 = job->j0;
    rs.n = cpu_max64(0, jend - job->j0);
    rs.ntile = (rs.n + P - 1) / P;
    return rs;
}

/* Tile i of the split in W phase c (phases after 0 may be a position shorter). */
static ndhwc_row_tile ndhwc_row_tile_of(const cpu_plan *pl, const cpu_row_job *job,
                                       const ndhwc_row_split *rs, int64_t i, int64_t c)
{
    const int64_t lo = rs->j0 + i * rs->n / rs->ntile, hi = rs->j0 + (i + 1) * rs->n / rs->ntile;
    const int64_t len = cpu_phase_len(pl->s.out[2], pl->s.s[2], c);
    const int64_t end = cpu_min64(cpu_min64(hi, len), job->j1);
    ndhwc_row_tile t = {lo, end - lo};
    return t;
}

/* The taps of W phase c that read inside the row (in_w inputs) at some
 * position of the tile [j0, j0 + npos), into kw; their count.  Border tiles
 * skip the others entirely (the tiles read zeros for the positions of a
 * kept tap that fall outside). */
static int64_t select_row_taps(const cpu_dim_phases *pw, int64_t c, int64_t j0, int64_t npos,
                               int64_t in_w, cpu_tap *kw)
{
    int64_t n = 0;
    for (int64_t t = pw->start[c]; t < pw->start[c + 1]; t++)
        if (j0 + npos + pw->taps[t].delta > 0 && j0 + pw->taps[t].delta < in_w)
            kw[n++] = pw->taps[t];
    return n;
}

/* The tiles of a job's row in turn: each tile of the split (P positions
 * at most), each W phase that has positions in it, with that phase's taps
 * that read inside the row (into the caller's kw).  Every NDHWC row kernel
 * walks its row this way. */
typedef struct ndhwc_tile_iter {
    ndhwc_row_split rs;
    int64_t i, c;
} ndhwc_tile_iter;

typedef struct ndhwc_tile_at {
    int64_t j0, npos, c, nkw; /* first position, positions, W phase, taps in kw */
} ndhwc_tile_at;

CPU_INLINE ndhwc_tile_iter ndhwc_tile_iter_of(const cpu_plan *pl, const cpu_row_job *job, int P)
{
    ndhwc_tile_iter it = {ndhwc_row_split_of(pl, job, P), 0, 0};
    return it;
}

CPU_INLINE int ndhwc_tile_next(const cpu_plan *pl, const cpu_row_job *job, ndhwc_tile_iter *it,
                               cpu_tap *kw, ndhwc_tile_at *t)
{
    const cpu_dim_phases *pw = &pl->ph[2];
    for (; it->i < it->rs.ntile; it->i++, it->c = 0)
        while (it->c < pw->nphase) {
            const int64_t c = it->c++;
            const ndhwc_row_tile rtile = ndhwc_row_tile_of(pl, job, &it->rs, it->i, c);
            if (rtile.npos <= 0)
                continue;
            t->j0 = rtile.j0;
            t->npos = rtile.npos;
            t->c = c;
            t->nkw = select_row_taps(pw, c, rtile.j0, rtile.npos, pl->s.in[2], kw);
            return 1;
        }
    return 0;
}

static void row_ndhwc(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int P = pl->tile_a, VB = pl->tile_b;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    ndhwc_tile_args a;
    a.x = job->x;
    a.zeros = pl->zeros;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.in_w = s->in[2];
    a.xw = s->x_stride[4];
    a.x_plane = job->x_plane;
    a.cig = s->cig;
    a.cogp = pl->cogp;
    a.tap_stride = s->cig * pl->cogp;
    const ndhwc_tile_fn(*tiles)[NDHWC_MAXP] = pl->pack_slots ? ndhwc_packed_tiles : ndhwc_tiles;
    /* With sw >= out_w each phase has one output: no stride (and no overflow). */
    a.out_stride = sw < outw ? sw * ys4 : 0;
    cpu_tap *kw = job->scratch;

    for (int64_t oc0 = 0; oc0 < s->cog; oc0 += (int64_t)VB * VL) {
        const int64_t left = s->cog - oc0;
        const int nvec = (int)cpu_min64(VB, (left + VL - 1) / VL);
        a.w = job->w + oc0;
        a.bias = job->bias ? job->bias + oc0 : NULL;
        a.last = v_mask_range(0, (int)cpu_min64(left - (int64_t)(nvec - 1) * VL, VL));
        ndhwc_tile_iter it = ndhwc_tile_iter_of(pl, job, P);
        ndhwc_tile_at t;
        while (ndhwc_tile_next(pl, job, &it, kw, &t)) {
            a.nkw = t.nkw;
            a.kw = kw;
            a.j0 = t.j0;
            a.out = job->y + (t.j0 * sw + t.c) * ys4 + oc0;
            a.npos = t.npos;
            tiles[nvec - 1][t.npos - 1](&a);
        }
    }
}

#include "ndhwc_rows.h"
#include "iclanes.h"
#include "ndhwc_transposed.h"
#include "poslanes.h"

/* ---- planning ----------------------------------------------------------- */

/* The tiling policy (cpu/tiling.c) over this ISA's tile maxima
 * (CPU_ISA_SYMBOL.limits, below), then the kernel's scratch. */
static void plan_ncdhw(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, cpu_tiling_ncdhw(&pl->s, &CPU_ISA_SYMBOL.limits));
    pl->scratch_bytes = ncdhw_prep_bytes(pl) + (size_t)(2 * pl->tile_b * pl->chunk) * sizeof(float);
}

static void plan_ncdhw_oc(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, cpu_tiling_ncdhw_oc(&pl->s, &CPU_ISA_SYMBOL.limits));
    pl->ncdhw_oc = 1;
    pl->scratch_bytes = 0;
}

static void plan_ndhwc(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, cpu_tiling_ndhwc(&pl->s, &CPU_ISA_SYMBOL.limits));
    pl->scratch_bytes = (size_t)pl->s.k[2] * sizeof(cpu_tap);
}

static int ncdhw_oc_built(const convt3d_shape *s) { return ocl_tile(s, 1, 1) != NULL; }

#include "pointwise.h"
#include "colgemm.h"

const cpu_isa CPU_ISA_SYMBOL = {
    .name = CPU_ISA_NAME,
    .vector_lanes = VL,
    .limits = {.lanes = VL, .ncdhw_maxv = NCDHW_MAXV, .ncdhw_ocb_max = NCDHW_OCB_MAX,
               .ocl_maxv = OCL_MAXV, .ocl_pos_max = OCL_POS_MAX, .ndhwc_maxv = NDHWC_MAXV,
               .ndhwc_pos_max = NDHWC_POS_MAX, .vector_regs = VREGS},
    .ncdhw = {.row = row_ncdhw, .plan = plan_ncdhw, .reads_packed_rows = 1},
    .ncdhw_oc = {.row = row_ncdhw_oc, .plan = plan_ncdhw_oc, .reads_packed_rows = 1},
    .ndhwc = {.row = row_ndhwc, .plan = plan_ndhwc, .reads_packed_rows = 1},
    .ndhwc_dw = {.row = row_ndhwc_dw, .plan = plan_ndhwc_dw, .all_groups = 1},
    .ndhwc_gl = {.row = row_ndhwc_gl, .plan = plan_ndhwc_gl, .all_groups = 1},
    .group_lanes = VL,
    .gl_span_vectors = GL_SPAN_VECTORS,
    .ndhwc_icl = {.row = row_ndhwc_icl, .plan = plan_ndhwc_icl},
    .ncdhw_icl = {.row = row_ncdhw_icl, .plan = plan_ncdhw_icl},
    .ic_lanes = VL,
    .ncdhw_pw = {.row = row_ncdhw_pw, .plan = plan_pw, .block = block_ncdhw_pw},
    .ndhwc_pw = {.row = row_ndhwc_pw, .plan = plan_pw, .block = block_ndhwc_pw},
    .ncdhw_colg = {.plan = plan_ncdhw_colg, .block = block_ncdhw_colg},
    .ndhwc_tr = {.row = row_ndhwc_tr, .plan = plan_ndhwc_tr, .all_groups = 1, .group_blocks = 1},
    .ndhwc_pl = {.row = row_ndhwc_pl, .plan = plan_ndhwc_pl},
    .ncdhw_oc_built = ncdhw_oc_built,
    .finish = v_fence,
};

#endif /* CONVT3D_CPU_PHASE_TILE_H */
