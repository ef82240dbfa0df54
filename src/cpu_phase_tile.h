/* The register-tiled stride-phase kernels, written once over a small vector
 * vocabulary and included by each instruction-set file (cpu_phase_avx512.c,
 * cpu_phase_avx2.c), which first defines:
 *
 *   VL, vf, vmask                    lanes, vector and lane-mask types
 *   v_zero, v_set1, v_loadu, v_loadu_mask (masked lanes read as 0 and are
 *   never touched), v_storeu_mask, v_fma(a, b, c) = a*b + c, v_bcast(p),
 *   v_mask_range(lo, hi) (lanes lo <= i < hi), v_interleave2(a, b, p)
 *   (stores a0 b0 a1 b1 ... to p[0 .. 2*VL)), v_stream(p, v) (non-temporal
 *   store to a VL-aligned p), v_fence() (orders those stores)
 *   NCDHW_MAXV, NCDHW_MAXO, NCDHW_OCB_MAX, NCDHW_TILES(X)   tile shapes
 *   NCDHW_SPLIT_FULL  1 where masked loads cost registers or time (AVX2):
 *                     taps whose lanes are all inside the row load unmasked
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

#include "cpu_kernels.h"

#define CPU_UNROLL _Pragma("GCC unroll 32")
#define CPU_INLINE static inline __attribute__((always_inline))

/* Instantiation lists: X(n, v) for n = 1 .. N at vector count v. */
#define UPTO4(X, v) X(1, v) X(2, v) X(3, v) X(4, v)
#define UPTO6(X, v) UPTO4(X, v) X(5, v) X(6, v)
#define UPTO8(X, v) UPTO6(X, v) X(7, v) X(8, v)
#define UPTO12(X, v) UPTO8(X, v) X(9, v) X(10, v) X(11, v) X(12, v)
#define UPTO16(X, v) UPTO12(X, v) X(13, v) X(14, v) X(15, v) X(16, v)

/* ---- NCDHW: O channels x V vectors along j ------------------------------ */

typedef struct ncdhw_tile_args {
    const float *x;          /* x at (n, group's first channel) + j0 */
    const float *w;          /* packed weights of the group + oc0 */
    const float *bias;       /* bias of the group + oc0, or NULL */
    const cpu_row_tap *rt;   /* input rows reaching the output row */
    int64_t nrt;
    const cpu_tap *kw;       /* W taps of this phase */
    int64_t nkw;
    const vmask *mask;       /* [nkw][NCDHW_MAXV]: lanes whose input is in the row */
    const unsigned char *full; /* [nkw]: 1 when every lane of the tap is in the row */
    const vmask *store;      /* [NCDHW_MAXV]: lanes to write */
    int64_t cig, plane, tap_stride, cogp; /* plane: x channel stride */
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

CPU_INLINE void ncdhw_tile_body(const ncdhw_tile_args *a, const int O, const int V)
{
    vf acc[NCDHW_MAXO][NCDHW_MAXV];
    CPU_UNROLL for (int o = 0; o < O; o++) {
        const vf b = a->bias ? v_set1(a->bias[o]) : v_zero();
        CPU_UNROLL for (int v = 0; v < V; v++)
            acc[o][v] = b;
    }
    const int64_t cig = a->cig, plane = a->plane, cogp = a->cogp, tap_stride = a->tap_stride;
    for (int64_t r = 0; r < a->nrt; r++) {
        const float *xr = a->x + a->rt[r].x_off;
        const float *wr = a->w + a->rt[r].w_tap * tap_stride;
        for (int64_t t = 0; t < a->nkw; t++) {
            vmask m[NCDHW_MAXV];
            CPU_UNROLL for (int v = 0; v < V; v++)
                m[v] = a->mask[t * NCDHW_MAXV + v];
            /* Loop-invariant: the compiler unswitches the ic loop on it. */
            const int full = NCDHW_SPLIT_FULL && a->full[t];
            const float *xp = xr + a->kw[t].delta;
            const float *wp = wr + a->kw[t].k * tap_stride;
            /* Unrolled by 4 so that short channel loops (cig = 4, 8) run a
             * fixed trip count the branch predictor gets right; the order of
             * the sum over ic is unchanged. */
            int64_t ic = 0;
            for (; ic + 4 <= cig; ic += 4)
                for (int u = 0; u < 4; u++) {
                    NCDHW_STEP(xp, wp);
                    xp += plane;
                    wp += cogp;
                }
            for (; ic < cig; ic++) {
                NCDHW_STEP(xp, wp);
                xp += plane;
                wp += cogp;
            }
        }
    }
    CPU_UNROLL for (int o = 0; o < O; o++)
        CPU_UNROLL for (int v = 0; v < V; v++)
            v_storeu_mask(a->out + o * a->out_stride + v * VL, acc[o][v], a->store[v]);
}

#define DEF_NCDHW_TILE(O, V)                                                                   \
    static void ncdhw_tile_##O##x##V(const ncdhw_tile_args *a) { ncdhw_tile_body(a, O, V); }
NCDHW_TILES(DEF_NCDHW_TILE)
#define REF_NCDHW_TILE(O, V) [V - 1][O - 1] = ncdhw_tile_##O##x##V,
static const ncdhw_tile_fn ncdhw_tiles[NCDHW_MAXV][NCDHW_MAXO] = {NCDHW_TILES(REF_NCDHW_TILE)};
static const int ncdhw_ocb_max[NCDHW_MAXV] = NCDHW_OCB_MAX;

/* Scratch layout of the NCDHW row kernel: lane masks [kW][NCDHW_MAXV], their
 * all-lanes flags [kW], then the tile buffer [phase < 2][channel][L] and one
 * interleaved row piece [2L]. */
static size_t ncdhw_mask_bytes(const cpu_plan *pl)
{
    const size_t n = (size_t)pl->s.k[2] * (NCDHW_MAXV * sizeof(vmask) + 1);
    return (n + 63) / 64 * 64;
}

/* How a chunk's phases reach y: stride 1 tiles store straight into y (or,
 * for a large y, through the buffer and streaming stores); with stride 2 both
 * phases are buffered and interleaved with vector shuffles; larger strides
 * buffer one phase at a time and store it strided. */
enum ncdhw_out_mode { NCDHW_DIRECT, NCDHW_BUFFERED, NCDHW_PAIR, NCDHW_STRIDED };

/* dst[0 .. n) = src[0 .. n), whole aligned vectors with non-temporal stores:
 * rows of an output much larger than the caches are not read again soon, and
 * streaming spares the read-for-ownership of every line they fill. */
static void stream_copy(float *dst, const float *src, int64_t n)
{
    const uintptr_t misalign = ((uintptr_t)dst / sizeof(float)) % VL;
    int64_t head = (uintptr_t)dst % sizeof(float) ? n : misalign ? VL - (int64_t)misalign : 0;
    head = cpu_min64(head, n);
    memcpy(dst, src, (size_t)head * sizeof(float));
    int64_t i = head;
    for (; i + VL <= n; i += VL)
        v_stream(dst + i, v_loadu(src + i));
    memcpy(dst + i, src + i, (size_t)(n - i) * sizeof(float));
}

/* y[2j] = b0[j], y[2j+1] = b1[j] for j < n1, then y[2 n1] = b0[n1] if n0 > n1. */
static void ncdhw_interleave2(float *y, const float *b0, const float *b1, int64_t n0, int64_t n1)
{
    int64_t j = 0;
    for (; j + VL <= n1; j += VL)
        v_interleave2(v_loadu(b0 + j), v_loadu(b1 + j), y + 2 * j);
    for (; j < n1; j++) {
        y[2 * j] = b0[j];
        y[2 * j + 1] = b1[j];
    }
    if (n0 > n1)
        y[2 * n1] = b0[n1];
}

static void row_ncdhw(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int V = pl->tile_a, OB = pl->tile_b;
    const int64_t L = (int64_t)V * VL;
    const int64_t sw = s->s[2], outw = s->out[2], ys1 = s->y_stride[1];
    const int64_t w_lo = job->w_lo, w_hi = job->w_hi;
    const cpu_dim_phases *pw = &pl->ph[2];
    const enum ncdhw_out_mode mode = sw == 1 ? (pl->stream ? NCDHW_BUFFERED : NCDHW_DIRECT)
                                     : sw == 2 && pw->nphase == 2 ? NCDHW_PAIR
                                                                  : NCDHW_STRIDED;
    vmask *mask = (vmask *)job->scratch;
    unsigned char *full = (unsigned char *)(mask + s->k[2] * NCDHW_MAXV);
    float *buf = (float *)((char *)job->scratch + ncdhw_mask_bytes(pl));
    float *zrow = buf + 2 * OB * L;
    vmask store[NCDHW_MAXV];
    int64_t len[2] = {0, 0};
    ncdhw_tile_args a;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.mask = mask;
    a.full = full;
    a.store = store;
    a.cig = s->cig;
    a.plane = job->x_plane;
    a.cogp = pl->cogp;
    a.tap_stride = s->cig * pl->cogp;
    a.out_stride = mode == NCDHW_DIRECT ? ys1 : L;

    for (int64_t oc0 = 0; oc0 < s->cog; oc0 += OB) {
        const int nb = (int)cpu_min64(OB, s->cog - oc0);
        const ncdhw_tile_fn tile = ncdhw_tiles[V - 1][nb - 1];
        float *yb = job->y + oc0 * ys1;
        a.w = job->w + oc0;
        a.bias = job->bias ? job->bias + oc0 : NULL;
        for (int64_t j0 = job->j0; j0 < job->j1; j0 += L) {
            a.x = job->x + j0;
            for (int64_t c = 0; c < pw->nphase; c++) {
                const int64_t jend =
                    cpu_min64(cpu_min64(j0 + L, cpu_phase_len(outw, sw, c)), job->j1);
                if (c < 2)
                    len[c] = cpu_max64(jend - j0, 0);
                if (jend <= j0)
                    continue;
                a.kw = pw->taps + pw->start[c];
                a.nkw = pw->start[c + 1] - pw->start[c];
                for (int64_t t = 0; t < a.nkw; t++) {
                    full[t] = 1;
                    for (int v = 0; v < V; v++) {
                        const int64_t base = j0 + v * VL + a.kw[t].delta;
                        const int lo = (int)cpu_min64(cpu_max64(w_lo - base, 0), VL);
                        const int hi = (int)cpu_min64(cpu_max64(w_hi - base, 0), VL);
                        mask[t * NCDHW_MAXV + v] = v_mask_range(lo, hi);
                        full[t] &= lo == 0 && hi == VL;
                    }
                }
                for (int v = 0; v < V; v++)
                    store[v] = v_mask_range(
                        0, (int)cpu_min64(cpu_max64(jend - j0 - v * VL, 0), VL));
                a.out = mode == NCDHW_DIRECT ? yb + j0 : buf + (mode == NCDHW_PAIR) * c * OB * L;
                tile(&a);
                if (mode == NCDHW_BUFFERED)
                    for (int o = 0; o < nb; o++)
                        stream_copy(yb + o * ys1 + j0, buf + o * L, jend - j0);
                if (mode == NCDHW_STRIDED)
                    for (int o = 0; o < nb; o++) {
                        float *yc = yb + o * ys1 + j0 * sw + c;
                        for (int64_t j = 0; j < jend - j0; j++)
                            yc[j * sw] = buf[o * L + j];
                    }
            }
            if (mode == NCDHW_PAIR)
                for (int o = 0; o < nb; o++) {
                    float *y2 = yb + o * ys1 + j0 * 2;
                    if (!pl->stream) {
                        ncdhw_interleave2(y2, buf + o * L, buf + (OB + o) * L, len[0], len[1]);
                    } else {
                        ncdhw_interleave2(zrow, buf + o * L, buf + (OB + o) * L, len[0], len[1]);
                        stream_copy(y2, zrow, len[0] + len[1]);
                    }
                }
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
    int64_t cig, tap_stride, cogp;
    float *out;              /* y at the tile's first position, channel oc0 */
    int64_t out_stride;      /* between positions: s_w * C_out */
    int64_t npos;            /* positions to write */
    vmask last;              /* lanes of the last vector to write */
} ndhwc_tile_args;

typedef void (*ndhwc_tile_fn)(const ndhwc_tile_args *a);

CPU_INLINE void ndhwc_tile_body(const ndhwc_tile_args *a, const int P, const int V)
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
            const float *xp[NDHWC_MAXP];
            CPU_UNROLL for (int p = 0; p < P; p++) {
                const int64_t iw = a->j0 + p + a->kw[t].delta;
                xp[p] = iw >= 0 && iw < a->in_w ? xr + iw * a->xw : a->zeros;
            }
            const float *wp = wr + a->kw[t].k * tap_stride;
            for (int64_t ic = 0; ic < cig; ic++) {
                vf wv[NDHWC_MAXV];
                CPU_UNROLL for (int v = 0; v < V; v++)
                    wv[v] = v_loadu(wp + v * VL);
                CPU_UNROLL for (int p = 0; p < P; p++) {
                    const vf xb = v_bcast(xp[p] + ic);
                    CPU_UNROLL for (int v = 0; v < V; v++)
                        acc[p][v] = v_fma(xb, wv[v], acc[p][v]);
                }
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
    static void ndhwc_tile_##P##x##V(const ndhwc_tile_args *a) { ndhwc_tile_body(a, P, V); }
NDHWC_TILES(DEF_NDHWC_TILE)
#define REF_NDHWC_TILE(P, V) [V - 1][P - 1] = ndhwc_tile_##P##x##V,
static const ndhwc_tile_fn ndhwc_tiles[NDHWC_MAXV][NDHWC_MAXP] = {NDHWC_TILES(REF_NDHWC_TILE)};
static const int ndhwc_pos_max[NDHWC_MAXV] = NDHWC_POS_MAX;

static void row_ndhwc(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int P = pl->tile_a, VB = pl->tile_b;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    const cpu_dim_phases *pw = &pl->ph[2];
    ndhwc_tile_args a;
    a.x = job->x;
    a.zeros = pl->zeros;
    a.rt = job->rt;
    a.nrt = job->nrt;
    a.in_w = s->in[2];
    a.xw = s->x_stride[4];
    a.cig = s->cig;
    a.cogp = pl->cogp;
    a.tap_stride = s->cig * pl->cogp;
    a.out_stride = sw * ys4;

    for (int64_t oc0 = 0; oc0 < s->cog; oc0 += (int64_t)VB * VL) {
        const int64_t left = s->cog - oc0;
        const int nvec = (int)cpu_min64(VB, (left + VL - 1) / VL);
        const ndhwc_tile_fn tile = ndhwc_tiles[nvec - 1][P - 1];
        a.w = job->w + oc0;
        a.bias = job->bias ? job->bias + oc0 : NULL;
        a.last = v_mask_range(0, (int)cpu_min64(left - (int64_t)(nvec - 1) * VL, VL));
        for (int64_t j0 = job->j0; j0 < job->j1; j0 += P)
            for (int64_t c = 0; c < pw->nphase; c++) {
                const int64_t jend =
                    cpu_min64(cpu_min64(j0 + P, cpu_phase_len(outw, sw, c)), job->j1);
                if (jend <= j0)
                    continue;
                a.kw = pw->taps + pw->start[c];
                a.nkw = pw->start[c + 1] - pw->start[c];
                a.j0 = j0;
                a.out = job->y + (j0 * sw + c) * ys4 + oc0;
                a.npos = jend - j0;
                tile(&a);
            }
    }
}

/* ---- tiling ------------------------------------------------------------- */

/* Splits n into the fewest blocks of at most max, as even as possible. */
static int64_t even_block(int64_t n, int64_t max)
{
    const int64_t blocks = (n + max - 1) / max;
    return (n + blocks - 1) / blocks;
}

static void plan_tiles(cpu_plan *pl)
{
    const convt3d_shape *s = &pl->s;
    const int64_t jmax = cpu_phase_len(s->out[2], s->s[2], 0);
    if (s->layout == CONVT3D_LAYOUT_NCDHW) {
        /* As many j vectors as the row needs (up to NCDHW_MAXV), then as many
         * channels as the registers allow, split evenly. */
        const int64_t nvec = (jmax + VL - 1) / VL;
        const int64_t v = even_block(nvec, NCDHW_MAXV);
        pl->tile_a = (int)v;
        pl->tile_b = (int)even_block(s->cog, ncdhw_ocb_max[v - 1]);
        pl->chunk = v * VL;
        pl->scratch_bytes = ncdhw_mask_bytes(pl) +
                            (size_t)((2 * pl->tile_b + 2) * pl->chunk) * sizeof(float);
    } else {
        const int64_t nvec = (s->cog + VL - 1) / VL;
        const int64_t v = even_block(nvec, NDHWC_MAXV);
        pl->tile_b = (int)v;
        pl->tile_a = (int)cpu_min64(ndhwc_pos_max[v - 1], jmax);
        pl->chunk = pl->tile_a;
        pl->scratch_bytes = 64;
    }
}

const cpu_isa CPU_ISA_SYMBOL = {CPU_ISA_NAME,
                                VL,
                                plan_tiles,
                                row_ncdhw,
                                row_ndhwc,
                                "cpu/f32_phase_gather_ncdhw__" CPU_ISA_NAME,
                                "cpu/f32_phase_gather_ndhwc__" CPU_ISA_NAME,
                                v_fence};

#endif /* CONVT3D_CPU_PHASE_TILE_H */
