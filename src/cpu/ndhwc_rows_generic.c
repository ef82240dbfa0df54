/* Portable NDHWC kernels over whole output rows (ndhwc_rows_generic.h):
 * the loops of cpu/ndhwc_rows.h without vector types, accumulating a chunk
 * of positions x a block of channels in the thread's scratch.  Channel co
 * belongs to group co / cog and reads that group's input channels; in the
 * depthwise row that is x channel co itself, so the channel loop runs over
 * contiguous x and vectorises. */
#include "ndhwc_rows_generic.h"

#define ROWS_POS 8 /* positions per chunk */
#define ROWS_CH 64 /* channels per block */

/* A chunk of one W phase and channel block: its positions [j0, jend), its
 * channels [c0, c0 + nc). */
typedef struct rows_chunk {
    int64_t c, j0, jend, c0;
    int nc;
} rows_chunk;

static void init_acc(const cpu_row_job *job, const rows_chunk *k, float *acc)
{
    for (int64_t p = 0; p < k->jend - k->j0; p++)
        for (int o = 0; o < k->nc; o++)
            acc[p * ROWS_CH + o] = job->bias ? job->bias[k->c0 + o] : 0.0f;
}

/* One input position's contribution through one tap: xp is x at that
 * position, wr the tap's packed weights; ap the output position's
 * accumulators. */
static void add_position_dw(const float *xp, const float *wr, const rows_chunk *k, float *ap)
{
    const float *xc = xp + k->c0, *wc = wr + k->c0;
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int o = 0; o < k->nc; o++)
        ap[o] += xc[o] * wc[o];
}

static void add_position_gl(const convt3d_shape *s, int64_t cout_pad, const float *xp,
                            const float *wr, const rows_chunk *k, float *ap)
{
    for (int64_t ic = 0; ic < s->cig; ic++)
        for (int o = 0; o < k->nc; o++) {
            const int64_t co = k->c0 + o;
            ap[o] += xp[co / s->cog * s->cig + ic] * wr[ic * cout_pad + co];
        }
}

static void run_chunk(const cpu_plan *pl, const cpu_row_job *job, const rows_chunk *k,
                      int depthwise, float *acc)
{
    const convt3d_shape *s = &pl->s;
    const cpu_dim_phases *pw = &pl->ph[2];
    const int64_t inw = s->in[2], xw = s->x_stride[4], tap_stride = s->cig * pl->cout_pad;
    init_acc(job, k, acc);
    for (int64_t r = 0; r < job->nrt; r++)
        for (int64_t t = pw->start[k->c]; t < pw->start[k->c + 1]; t++) {
            const int64_t delta = pw->taps[t].delta;
            const int64_t lo = cpu_max64(k->j0, -delta), hi = cpu_min64(k->jend, inw - delta);
            const float *wr = job->w + (job->rt[r].w_tap + pw->taps[t].k) * tap_stride;
            for (int64_t j = lo; j < hi; j++) {
                const float *xp = job->x + job->rt[r].x_off + (j + delta) * xw;
                float *ap = acc + (j - k->j0) * ROWS_CH;
                if (depthwise)
                    add_position_dw(xp, wr, k, ap);
                else
                    add_position_gl(s, pl->cout_pad, xp, wr, k, ap);
            }
        }
}

static void run_row(const cpu_plan *pl, const cpu_row_job *job, int depthwise)
{
    const convt3d_shape *s = &pl->s;
    const int64_t sw = s->s[2], outw = s->out[2], ys4 = s->y_stride[4];
    float *acc = job->scratch;
    rows_chunk k;
    for (k.c0 = 0; k.c0 < s->cout; k.c0 += ROWS_CH) {
        k.nc = (int)cpu_min64(ROWS_CH, s->cout - k.c0);
        for (k.j0 = job->j0; k.j0 < job->j1; k.j0 += ROWS_POS)
            for (k.c = 0; k.c < pl->ph[2].nphase; k.c++) {
                k.jend = cpu_min64(cpu_min64(k.j0 + ROWS_POS, cpu_phase_len(outw, sw, k.c)),
                                   job->j1);
                if (k.jend <= k.j0)
                    continue;
                run_chunk(pl, job, &k, depthwise, acc);
                for (int64_t p = 0; p < k.jend - k.j0; p++) {
                    float *yp = job->y + ((k.j0 + p) * sw + k.c) * ys4 + k.c0;
                    for (int o = 0; o < k.nc; o++)
                        yp[o] = acc[p * ROWS_CH + o];
                }
            }
    }
}

void cpu_row_ndhwc_dw_generic(const cpu_plan *pl, const cpu_row_job *job)
{
    run_row(pl, job, 1);
}

void cpu_row_ndhwc_gl_generic(const cpu_plan *pl, const cpu_row_job *job)
{
    run_row(pl, job, 0);
}

void cpu_plan_ndhwc_rows_generic(cpu_plan *pl)
{
    cpu_plan_set_tiling(pl, (cpu_tiling){ROWS_POS, ROWS_CH, ROWS_POS, 0});
    pl->cout_pad = pl->s.cout;
    pl->scratch_bytes = ROWS_POS * ROWS_CH * sizeof(float);
}
