/* Planning of the channels-last depthwise kernel (params.h, plan.h): where
 * it applies, its thread block shape and the tables its body reads.  Host
 * code only (no CUDA API), done once at plan creation. */
#include <stdio.h>
#include <string.h>

#include "plan.h"

namespace ct3d {

namespace {

constexpr long long kGridY = 65535;

/* Rounds of pb positions a block: up to 4 while the grid keeps at least
 * 2048 blocks (5 waves of 3 blocks on 132 SMs), so that the weight staging
 * (and its wait) is paid once for more outputs. */
int rounds_a_block(long long rounds)
{
    const long long r = rounds / 2048;
    return r < 1 ? 1 : r > 4 ? 4 : (int)r;
}

/* The problems the kernel takes before any tiling. */
bool dwlast_shape_ok(const convt3d_shape *s, char *why, size_t why_size)
{
    if (s->cig != 1 || s->cog != 1) {
        snprintf(why, why_size, "not depthwise (C_in/G=%lld, C_out/G=%lld)", (long long)s->cig,
                 (long long)s->cog);
        return false;
    }
    if (!int_indexable(s, why, why_size))
        return false;
    for (int d = 0; d < 3; d++)
        if (s->s[d] > kMaxPhaseStride) {
            snprintf(why, why_size, "stride[%d]=%lld above %d", d, (long long)s->s[d],
                     kMaxPhaseStride);
            return false;
        }
    return true;
}

/* The phase tables, the W runs of a row and the sizes. */
void fill_tables(const convt3d_shape *s, dl_params *p)
{
    p->c = (int)s->cout;
    for (int d = 0; d < 3; d++) {
        const convt3d_phase c0 = convt3d_phase_of(s, d, 0);
        p->in[d] = (int)s->in[d];
        p->out[d] = (int)s->out[d];
        p->k[d] = (int)s->k[d];
        p->s[d] = (int)s->s[d];
        p->p[d] = (int)s->p[d];
        p->dm[d] = (int)c0.dm;
        p->kstep[d] = (int)c0.tap_step;
        for (int r = 0; r < p->s[d]; r++)
            p->ph[d][r] = phase_entry_of(s, d, r);
    }
    for (int d = 0; d < 5; d++) {
        p->xs[d] = s->x_stride[d];
        p->ys[d] = s->y_stride[d];
    }
    p->wrun0[0] = 0;
    for (int r = 0; r < p->s[2]; r++)
        p->wrun0[r + 1] = p->wrun0[r] + (int)ceil_div(p->ph[2][r].qcount, kDlRun);
    p->kvol = (int)s->k_volume;
}

} // namespace

bool plan_dwlast(const convt3d_shape *s, int v, dl_params *out, size_t *smem, unsigned grid[2],
                 char *why, size_t why_size)
{
    if (!dwlast_shape_ok(s, why, why_size))
        return false;
    if (v == 4 && (s->cout % 4 != 0 || s->x_stride[1] != 1 || s->y_stride[1] != 1)) {
        snprintf(why, why_size, "channels not contiguous in groups of 4 (vector build)");
        return false;
    }
    dl_params p;
    memset(&p, 0, sizeof p);
    fill_tables(s, &p);
    p.v = v;
    /* a warp's loads: 16 threads x 16 bytes of f32 (V 4) or 32 channels (V 1)
     * of each of two or one positions; fewer where C is small */
    int cv = v == 4 ? pow2_at_least(ceil_div(s->cout, 4), 16) : pow2_at_least(s->cout, 32);
    for (;; cv /= 2) {
        const int cb = cv * v, pitch = v == 4 ? cb + 4 : cb + 1;
        if ((long long)p.kvol * pitch * 4 <= kDlSmemMax || cv == 1) {
            p.cv = cv;
            p.cb = cb;
            p.wpitch = pitch;
            break;
        }
    }
    if ((long long)p.kvol * p.wpitch * 4 > kDlSmemMax) {
        snprintf(why, why_size, "%d taps' weights exceed %d bytes of shared memory", p.kvol,
                 kDlSmemMax);
        return false;
    }
    p.lcv = log2_of(p.cv);
    p.pb = kDlThreads / p.cv;
    p.nthreads = kDlThreads;
    const long long nwr = p.wrun0[p.s[2]];
    p.npos = s->n * s->out[0] * s->out[1] * nwr;
    if (p.npos >= (1LL << 31)) {
        snprintf(why, why_size, "%lld output positions (runs) above 2^31", p.npos);
        return false;
    }
    const long long chunks = ceil_div(s->cout, p.cb);
    if (chunks > kGridY) {
        snprintf(why, why_size, "%lld channel chunks above %lld", chunks, kGridY);
        return false;
    }
    const long long rounds = ceil_div(p.npos, p.pb);
    p.iters = rounds_a_block(rounds);
    p.dv_nwr = fdiv_make(nwr);
    p.dv_oh = fdiv_make(s->out[1]);
    p.dv_od = fdiv_make(s->out[0]);
    p.dv_kvol = fdiv_make(p.kvol);
    *out = p;
    *smem = (size_t)p.kvol * p.wpitch * sizeof(float);
    grid[0] = (unsigned)ceil_div(rounds, p.iters);
    grid[1] = (unsigned)chunks;
    return true;
}

/* ---- the registry entries' host side ------------------------------------ */

bool dwlast_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, char *why, size_t why_size)
{
    (void)e;
    (void)lim;
    dl_params p;
    size_t smem;
    unsigned grid[2];
    /* the scalar build takes whatever the vector one does */
    return plan_dwlast(s, 1, &p, &smem, grid, why, why_size);
}

bool dwlast_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, const cuda_overrides &ov, char *why,
                              size_t why_size)
{
    (void)e;
    (void)lim;
    (void)ov;
    /* NCDHW: the channel lanes would read x with the spatial volume between
     * them; the depthwise tile kernel stages rows along W instead. */
    if (s->layout != CONVT3D_LAYOUT_NDHWC) {
        snprintf(why, why_size, "automatically for NDHWC only");
        return true;
    }
    return false;
}

bool dwlast_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                       size_t why_size)
{
    (void)e;
    (void)lim;
    (void)ov;
    (void)mode;
    dwlast_plan *dp = family_params<dwlast_plan>(*k);
    memset(dp, 0, sizeof *dp);
    if (!plan_dwlast(s, 1, &dp->p1, &dp->smem1, dp->grid1, why, why_size))
        return false;
    char why4[160];
    dp->has4 = plan_dwlast(s, 4, &dp->p4, &dp->smem4, dp->grid4, why4, sizeof why4);
    /* weights packed with one channel a block (ocb 1): [c][kd][kh][kw] */
    k->ocb = 1;
    k->nocb = 1;
    k->threads = kDlThreads;
    k->smem_bytes = dp->has4 && dp->smem4 > dp->smem1 ? dp->smem4 : dp->smem1;
    const unsigned *g = dp->has4 ? dp->grid4 : dp->grid1;
    k->blocks = (long long)g[0] * g[1];
    return true;
}

void dwlast_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    const dwlast_plan &dp = *family_params<dwlast_plan>(k);
    const dl_params &p = dp.has4 ? dp.p4 : dp.p1;
    snprintf(buf, size, "%s: %d channels a thread%s, cv%d x pb%d threads, %d rounds a block, "
             "%lld positions of %d W outputs, %lld blocks, %zu B shared", k.impl->name, p.v,
             dp.has4 ? " (1 if a pointer is misaligned)" : "", p.cv, p.pb, p.iters, p.npos,
             kDlRun, k.blocks, dp.has4 ? dp.smem4 : dp.smem1);
}

} // namespace ct3d
