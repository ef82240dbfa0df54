/* Portable stride-phase kernels: no instruction-set flags, so they run on any
 * host; the compiler vectorises the inner loops (`omp simd` when the build
 * has OpenMP).  Used where no AVX2/AVX-512 variant is built or supported, and
 * as an independent second implementation for the tests.
 *
 * Same phase decomposition as cpu/phase_tile.h, but accumulating into a
 * per-thread buffer of one chunk instead of registers: for each tap the range
 * of j whose input lies inside the row is clamped once, outside the loops. */
#include "kernels.h"
#include "ndhwc_rows_generic.h"

#define GEN_CHUNK 64 /* NCDHW: j positions per chunk */
#define GEN_OCB 8    /* NCDHW: output channels per block */
#define GEN_POS 8    /* NDHWC: positions per chunk */
#define GEN_OCV 64   /* NDHWC: output channels per block */

/* acc[o][j - j0] for the chunk's j in [j0, jend) of phase c. */
static void ncdhw_phase_chunk(const cpu_plan *pl, const cpu_row_job *job, int64_t oc0, int nb,
                              int64_t c, int64_t j0, int64_t jend, float *acc)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pw = &pl->ph[2];
    const int64_t w_lo = job->w_lo, w_hi = job->w_hi, plane = job->x_plane, cogp = pl->cogp;
    const int64_t tap_stride = s->cig * cogp;
    for (int o = 0; o < nb; o++) {
        const float b = job->bias ? job->bias[oc0 + o] : 0.0f;
        for (int64_t j = 0; j < jend - j0; j++)
            acc[o * GEN_CHUNK + j] = b;
    }
    for (int64_t r = 0; r < job->nrt; r++)
        for (int64_t t = pw->start[c]; t < pw->start[c + 1]; t++) {
            const int64_t delta = pw->taps[t].delta;
            const int64_t lo = cpu_max64(j0, w_lo - delta), hi = cpu_min64(jend, w_hi - delta);
            if (lo >= hi)
                continue;
            const float *wr = job->w + (job->rt[r].w_tap + pw->taps[t].k) * tap_stride + oc0;
            for (int64_t ic = 0; ic < s->cig; ic++) {
                /* x index j + delta is in [w_lo, w_hi) for j in [lo, hi) */
                const float *xi = job->x + job->rt[r].x_off + ic * plane + (lo + delta);
                for (int o = 0; o < nb; o++) {
                    const float wv = wr[ic * cogp + o];
                    float *ao = acc + o * GEN_CHUNK + (lo - j0);
#if defined(_OPENMP)
#pragma omp simd
#endif
                    for (int64_t j = 0; j < hi - lo; j++)
                        ao[j] += wv * xi[j];
                }
            }
        }
}

static void row_ncdhw(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int64_t sw = s->s[2], outw = s->out[2], ys1 = s->y_stride[1];
    float *acc = job->scratch;
    for (int64_t oc0 = 0; oc0 < s->cog; oc0 += GEN_OCB) {
        const int nb = (int)cpu_min64(GEN_OCB, s->cog - oc0);
        for (int64_t j0 = job->j0; j0 < job->j1; j0 += GEN_CHUNK)
            for (int64_t c = 0; c < pl->ph[2].nphase; c++) {
                const int64_t jend =
                    cpu_min64(cpu_min64(j0 + GEN_CHUNK, cpu_phase_len(outw, sw, c)), job->j1);
                if (jend <= j0)
                    continue;
                ncdhw_phase_chunk(pl, job, oc0, nb, c, j0, jend, acc);
                for (int o = 0; o < nb; o++) {
                    float *yc = job->y + (oc0 + o) * ys1 + j0 * sw + c;
                    for (int64_t j = 0; j < jend - j0; j++)
                        yc[j * sw] = acc[o * GEN_CHUNK + j];
                }
            }
    }
}

/* acc[p][o] for positions j0 + p < jend of phase c, channels oc0 .. oc0+nb. */
static void ndhwc_phase_chunk(const cpu_plan *pl, const cpu_row_job *job, int64_t oc0, int nb,
                              int64_t c, int64_t j0, int64_t jend, float *acc)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pw = &pl->ph[2];
    const int64_t inw = s->in[2], xw = s->x_stride[4], cogp = pl->cogp;
    const int64_t tap_stride = s->cig * cogp;
    for (int64_t p = 0; p < jend - j0; p++)
        for (int o = 0; o < nb; o++)
            acc[p * GEN_OCV + o] = job->bias ? job->bias[oc0 + o] : 0.0f;
    for (int64_t r = 0; r < job->nrt; r++)
        for (int64_t t = pw->start[c]; t < pw->start[c + 1]; t++) {
            const int64_t delta = pw->taps[t].delta;
            const int64_t lo = cpu_max64(j0, -delta), hi = cpu_min64(jend, inw - delta);
            const float *wr = job->w + (job->rt[r].w_tap + pw->taps[t].k) * tap_stride + oc0;
            for (int64_t j = lo; j < hi; j++) {
                const float *xp = job->x + job->rt[r].x_off + (j + delta) * xw;
                float *ap = acc + (j - j0) * GEN_OCV;
                for (int64_t ic = 0; ic < s->cig; ic++) {
                    const float xv = xp[ic];
                    const float *wi = wr + ic * cogp;
#if defined(_OPENMP)
#pragma omp simd
#endif
                    for (int o = 0; o < nb; o++)
                        ap[o] += xv * wi[o];
                }
            }
        }
}

static void row_ndhwc(const cpu_plan *pl, const cpu_row_job *job)
{
    const convt3d_shape *s = &pl->s;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    float *acc = job->scratch;
    for (int64_t oc0 = 0; oc0 < s->cog; oc0 += GEN_OCV) {
        const int nb = (int)cpu_min64(GEN_OCV, s->cog - oc0);
        for (int64_t j0 = job->j0; j0 < job->j1; j0 += GEN_POS)
            for (int64_t c = 0; c < pl->ph[2].nphase; c++) {
                const int64_t jend =
                    cpu_min64(cpu_min64(j0 + GEN_POS, cpu_phase_len(outw, sw, c)), job->j1);
                if (jend <= j0)
                    continue;
                ndhwc_phase_chunk(pl, job, oc0, nb, c, j0, jend, acc);
                for (int64_t p = 0; p < jend - j0; p++) {
                    float *yp = job->y + ((j0 + p) * sw + c) * ys4 + oc0;
                    for (int o = 0; o < nb; o++)
                        yp[o] = acc[p * GEN_OCV + o];
                }
            }
    }
}

/* ---- NDHWC, input channels side by side (cpu/iclanes.h's tile) ---------- */

/* Partial sums a position keeps, one for each input channel mod GEN_ICL: the
 * same order of summation as the vector tiles of that many lanes, and loops
 * the compiler can vectorise. */
#define GEN_ICL 8

/* Output channel oc at output position j of W phase c: bias + the lanes of
 * part summed pairwise (0-3 + 4-7, 0-1 + 2-3, 0 + 1, as v_hsum). */
static float icl_output(const cpu_plan *pl, const cpu_row_job *job, int64_t c, int64_t j,
                        int64_t oc)
{
    /* NDHWC: a position's channels are contiguous; NCDHW: a plane apart */
    const int64_t xw = pl->s.layout == CONVT3D_LAYOUT_NDHWC ? pl->s.x_stride[4] : 1;
    const int64_t xc = pl->s.layout == CONVT3D_LAYOUT_NDHWC ? 1 : job->x_plane;
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pw = &pl->ph[2];
    const int64_t cig = s->cig, cigp = pl->cigp, tap_w = s->cog * cigp;
    float part[GEN_ICL] = {0};
    for (int64_t r = 0; r < job->nrt; r++)
        for (int64_t t = pw->start[c]; t < pw->start[c + 1]; t++) {
            const int64_t iw = j + pw->taps[t].delta;
            if (iw < 0 || iw >= s->in[2])
                continue;
            const float *xp = job->x + job->rt[r].x_off + iw * xw;
            const float *wp =
                job->w + (job->rt[r].w_tap + pw->taps[t].k) * tap_w + oc * cigp;
            int64_t ic = 0;
            for (; ic + GEN_ICL <= cig; ic += GEN_ICL)
                for (int l = 0; l < GEN_ICL; l++)
                    part[l] += xp[(ic + l) * xc] * wp[ic + l];
            for (int l = 0; ic + l < cig; l++)
                part[l] += xp[(ic + l) * xc] * wp[ic + l];
        }
    float half[GEN_ICL / 2];
    for (int l = 0; l < GEN_ICL / 2; l++)
        half[l] = part[l] + part[l + GEN_ICL / 2];
    const float sum = (half[0] + half[2]) + (half[1] + half[3]);
    return job->bias ? sum + job->bias[oc] : sum;
}

/* Both layouts: y's positions ypos apart, its channels ych apart. */
static void row_icl(const cpu_plan *pl, const cpu_row_job *job, int64_t ypos, int64_t ych)
{
    const convt3d_shape *s = &pl->s;
    const int64_t sw = s->s[2], outw = s->out[2];
    for (int64_t c = 0; c < pl->ph[2].nphase; c++) {
        const int64_t jend = cpu_min64(cpu_phase_len(outw, sw, c), job->j1);
        for (int64_t j = job->j0; j < jend; j++)
            for (int64_t oc = 0; oc < s->cog; oc++)
                job->y[(j * sw + c) * ypos + oc * ych] = icl_output(pl, job, c, j, oc);
    }
}

static void row_ndhwc_icl(const cpu_plan *pl, const cpu_row_job *job)
{
    row_icl(pl, job, pl->s.y_stride[4], 1);
}

static void row_ncdhw_icl(const cpu_plan *pl, const cpu_row_job *job)
{
    row_icl(pl, job, 1, pl->s.y_stride[1]);
}

static void plan_ncdhw(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, (cpu_tiling){GEN_CHUNK, GEN_OCB, GEN_CHUNK, 0});
    pl->scratch_bytes = GEN_OCB * GEN_CHUNK * sizeof(float);
}

static void plan_ndhwc(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, (cpu_tiling){GEN_POS, GEN_OCV, GEN_POS, 0});
    pl->scratch_bytes = GEN_POS * GEN_OCV * sizeof(float);
}

static void plan_ndhwc_icl(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, (cpu_tiling){GEN_POS, (int)pl->s.cog, GEN_POS, 0});
    pl->cigp = (pl->s.cig + GEN_ICL - 1) / GEN_ICL * GEN_ICL;
    pl->scratch_bytes = 0;
}

/* The pointwise kernels (cpu/pointwise.h) over one-lane stand-ins for the
 * vector vocabulary: a "vector" is one float, a mask one flag. */
#define VL 1
typedef float vf;
typedef int vmask;
static inline vf v_zero(void) { return 0.0f; }
static inline vf v_set1(float f) { return f; }
static inline vf v_loadu(const float *p) { return *p; }
static inline vf v_loadu_mask(const float *p, vmask m) { return m ? *p : 0.0f; }
static inline void v_storeu_mask(float *p, vf v, vmask m)
{
    if (m)
        *p = v;
}
static inline vf v_fma(vf a, vf b, vf c) { return a * b + c; }
static inline vf v_bcast(const float *p) { return *p; }
static inline vmask v_mask_range(int lo, int hi) { return lo <= 0 && 0 < hi; }
static inline void v_interleave2(vf a, vf b, float *p)
{
    p[0] = a;
    p[1] = b;
}
static inline void v_interleave2_stream(vf a, vf b, float *p) { v_interleave2(a, b, p); }
#define PW_MAXV 4
#define PW_SHAPES(X) X(1, 4) X(2, 4) X(3, 4) X(4, 4)
#define COLG_ROWS(X, V) X(1, V) X(2, V) X(3, V) X(4, V)
#define COLG_TILES(X) COLG_ROWS(X, 1) COLG_ROWS(X, 2) COLG_ROWS(X, 3) COLG_ROWS(X, 4)
#define PW_TILES COLG_TILES
#include "pointwise.h"
#include "colgemm.h"

const cpu_isa convt3d_cpu_isa_generic = {
    .name = "generic",
    .vector_lanes = 1,
    .ncdhw = {.row = row_ncdhw, .plan = plan_ncdhw},
    .ndhwc = {.row = row_ndhwc, .plan = plan_ndhwc},
    .ndhwc_dw = {.row = cpu_row_ndhwc_dw_generic,
                 .plan = cpu_plan_ndhwc_rows_generic,
                 .all_groups = 1},
    .ndhwc_gl = {.row = cpu_row_ndhwc_gl_generic,
                 .plan = cpu_plan_ndhwc_rows_generic,
                 .all_groups = 1},
    .group_lanes = CPU_GENERIC_GROUP_LANES,
    .gl_span_vectors = 1,
    .ndhwc_icl = {.row = row_ndhwc_icl, .plan = plan_ndhwc_icl},
    .ncdhw_icl = {.row = row_ncdhw_icl, .plan = plan_ndhwc_icl},
    .ic_lanes = GEN_ICL,
    .ncdhw_pw = {.row = row_ncdhw_pw, .plan = plan_pw, .block = block_ncdhw_pw},
    .ndhwc_pw = {.row = row_ndhwc_pw, .plan = plan_pw, .block = block_ndhwc_pw},
    .ncdhw_colg = {.plan = plan_ncdhw_colg, .block = block_ncdhw_colg},
};
