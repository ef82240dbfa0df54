/* Planning of the depthwise tile kernel (params.h, plan.h): where it applies,
 * its thread block shape and the tables its body reads.  Host code only
 * (no CUDA API), done once at plan creation. */
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "../simple/plan.h"

namespace ct3d {

namespace {

constexpr int kDwThreads = 256;
constexpr long long kGridYZ = 65535;

/* D or H: the phase table and the staged-row span of a tile, relative to
 * tile * threads: rows lo .. lo + threads + span - 1.  qmax: the most q rows
 * of a phase. */
struct dh_span {
    int lo, span, qmax;
};

dh_span fill_dh(const convt3d_shape *s, int d, dw_params *p)
{
    const long long sd = s->s[d];
    const convt3d_phase c0 = convt3d_phase_of(s, d, 0);
    p->dm[d] = (int)c0.dm;
    p->kstep[d] = (int)c0.tap_step;
    long long lo = 0, hi = 0, qmax = 0;
    bool any = false;
    dw_phase *ph = p->ph[d];
    for (long long r = 0; r < sd; r++) {
        const convt3d_phase c = convt3d_phase_of(s, d, r);
        const long long k0 = c.first_tap >= 0 ? c.first_tap : 0;
        const long long m0 = c.m0, qlo = c.qlo, qc = c.qcount;
        ph[r].taps = (int)c.taps;
        ph[r].qcount = (int)qc;
        /* scaled to floats by finish_dh() */
        ph[r].woff = (int)k0;
        ph[r].yoff = (int)(qlo * sd + r - s->p[d]);
        ph[r].zoff = (int)(qlo - m0); /* made relative to lo below */
        qmax = qc > qmax ? qc : qmax;
        if (c.taps > 0 && qc > 0) {
            const long long base = qlo - m0, low = base - (c.taps - 1) * p->dm[d];
            lo = any && lo < low ? lo : low;
            hi = any && hi > base ? hi : base;
            any = true;
        }
    }
    for (long long r = 0; r < sd; r++)
        ph[r].zoff -= (int)lo;
    dh_span sp;
    sp.lo = (int)lo;
    sp.span = any ? (int)(hi - lo) : -1; /* -1: nothing to stage */
    sp.qmax = (int)qmax;
    return sp;
}

/* The W slots; false if a W phase has more taps than the kernel unrolls. */
bool fill_w(const convt3d_shape *s, dw_params *p)
{
    const int sw = (int)s->s[2], l = (int)s->l[2], pw = (int)s->p[2];
    const int kstep = sw / (int)convt3d_gcd64(sw, l);
    int start[2] = {0, 0}, pos = 0, smin = 0;
    bool any = false;
    p->sw = sw;
    for (int j = 0; j < kDwMaxKW; j++)
        p->wsrc[j] = -1;
    for (int f = 0; f < sw; f++) {
        const int r = (f + pw) % sw;
        const convt3d_phase c = convt3d_phase_of(s, 2, r);
        if (c.taps > kDwMaxWTaps)
            return false;
        const int k0 = c.first_tap >= 0 ? (int)c.first_tap : 0;
        const int m0 = (int)c.m0;
        p->wt[f] = (int)c.taps;
        p->wpos[f] = pos;
        for (int t = 0; t < c.taps; t++)
            p->wsrc[pos + t] = k0 + t * kstep;
        pos += (int)c.taps;
        if (c.taps > 0) {
            /* output o_a + f + sw*i (o_a a multiple of sw * 8/sw) has
             * q = o_a/sw + (f + pw - r)/sw + i and reads inputs q - m0 - t */
            start[f] = (f + pw - r) / sw - m0 - ((int)c.taps - 1);
            smin = any && smin < start[f] ? smin : start[f];
            any = true;
        }
    }
    if (!any || pos != s->k[2])
        return false;
    p->fast = 1;
    int reach = 0; /* columns a thread's windows reach past its QW * tx */
    for (int f = 0; f < sw; f++) {
        p->wa[f] = p->wt[f] > 0 ? start[f] - smin : 0;
        if (p->wa[f] != 0)
            p->fast = 0;
        if (p->wt[f] > 0 && p->wa[f] + p->wt[f] - 1 > reach)
            reach = p->wa[f] + p->wt[f] - 1;
    }
    p->worg = smin;
    p->wrow = pos <= 4 ? 4 : 8;
    p->lwrow = p->wrow == 4 ? 2 : 3;
    p->ew = reach; /* completed with tx by the caller */
    return true;
}

/* Scales dim d's phase offsets and steps to floats once the block shape
 * (ext, pitch) is known: zoff/zstep in the staged tile, woff/wstep in the
 * staged weights, yoff/ystep in y. */
void finish_dh(int d, dw_params *p)
{
    const int zrow = d == 0 ? p->ext[1] * p->pitch : p->pitch;
    const int wrow = d == 0 ? p->k[1] * p->wrow : p->wrow;
    const long long yrow = p->ys[2 + d];
    for (int r = 0; r < p->s[d]; r++) {
        dw_phase &e = p->ph[d][r];
        e.zoff *= zrow;
        e.woff *= wrow;
        e.yoff = (int)(e.yoff * yrow);
    }
    p->zstep[d] = p->dm[d] * zrow;
    p->wstep[d] = p->kstep[d] * wrow;
    p->ystep[d] = (int)(p->s[d] * yrow);
}

/* The problems the kernel takes before any tiling: depthwise, N and C
 * within the grid, int sizes, strides, W dilation dividing the W stride. */
bool dwtile_shape_ok(const convt3d_shape *s, char *why, size_t why_size)
{
    if (s->cig != 1 || s->cog != 1) {
        snprintf(why, why_size, "not depthwise (C_in/G=%lld, C_out/G=%lld)", (long long)s->cig,
                 (long long)s->cog);
        return false;
    }
    if (s->n > kGridYZ || s->cout > kGridYZ) {
        snprintf(why, why_size, "N or C above %lld", kGridYZ);
        return false;
    }
    const long long lim = CONVT3D_INT_INDEX_LIMIT;
    for (int d = 0; d < 3; d++)
        if (s->in[d] >= lim || s->out[d] >= lim || s->k[d] >= lim || s->s[d] >= lim ||
            s->p[d] >= lim || s->l[d] >= lim || s->p[d] < 0) {
            snprintf(why, why_size, "a size in dim %d is out of int range", d);
            return false;
        }
    if (s->s[0] > kMaxPhaseStride || s->s[1] > kMaxPhaseStride || s->s[2] > 2) {
        snprintf(why, why_size, "stride above %d in D/H or 2 in W", kMaxPhaseStride);
        return false;
    }
    if (s->s[2] % s->l[2] != 0) {
        snprintf(why, why_size, "dilation[2]=%lld does not divide stride[2]=%lld",
                 (long long)s->l[2], (long long)s->s[2]);
        return false;
    }
    return true;
}

/* Staging and edge waste per computed row of a tz x ty block of `rows`
 * rows (lower is better). */
double rows_waste(const dh_span &sd, const dh_span &sh, int rows, int tz, int ty)
{
    return (double)(tz + (sd.span > 0 ? sd.span : 0)) / tz *
           (double)(ty + (sh.span > 0 ? sh.span : 0)) / ty *
           (double)ceil_div(sd.qmax, tz) * tz / (sd.qmax ? sd.qmax : 1) *
           (double)ceil_div(sh.qmax, ty) * ty / (sh.qmax ? sh.qmax : 1) * ((double)rows / (tz * ty));
}

/* The candidates tz = 1, 2, 4, ... (ty the rest of the rows, at most what
 * an H phase needs) whose tile fits kDwSmemMax with wsm weight floats and
 * row pitch `pitch`, scored by rows_waste (ties: fewer D rows); the best
 * tz, or 0 if none fits. */
int choose_rows(const dh_span &sd, const dh_span &sh, int rows, long long wsm, int pitch)
{
    const int capz = pow2_at_least(sd.qmax, rows), caph = pow2_at_least(sh.qmax, rows);
    double best = 0.0;
    int bz = 0;
    for (int tz = 1; tz <= rows && tz <= capz; tz *= 2) {
        const int ty = rows / tz < caph ? rows / tz : caph;
        const long long ed = sd.span < 0 ? 0 : tz + sd.span, eh = sh.span < 0 ? 0 : ty + sh.span;
        if ((wsm + ed * eh * pitch) * 4 > kDwSmemMax)
            continue;
        const double waste = rows_waste(sd, sh, rows, tz, ty);
        if (bz == 0 || waste < best - 1e-9) {
            best = waste;
            bz = tz;
        }
    }
    return bz;
}

/* The sizes and strides, the W run of a block (tx runs of kDwRun outputs)
 * and the staged row's extent and pitch. */
void fill_sizes_and_w_run(const convt3d_shape *s, dw_params *pp)
{
    dw_params &p = *pp;
    for (int d = 0; d < 3; d++) {
        p.in[d] = (int)s->in[d];
        p.out[d] = (int)s->out[d];
        p.k[d] = (int)s->k[d];
        p.s[d] = (int)s->s[d];
    }
    for (int d = 0; d < 5; d++) {
        p.xs[d] = s->x_stride[d];
        p.ys[d] = s->y_stride[d];
    }
    const int qw = kDwRun / p.sw;
    const long long runs = ceil_div(s->out[2], kDwRun);
    p.tx = pow2_at_least(runs, 32);
    p.lx = log2_of(p.tx);
    p.ntile[2] = (int)ceil_div(runs, p.tx);
    if (p.fast) {
        const int tm = p.wt[0] > p.wt[1] ? p.wt[0] : p.wt[1];
        const int lw = (qw + tm - 1 + 3) / 4 * 4;
        p.ew = (p.tx - 1) * qw + lw;
        p.pitch = p.ew; /* a multiple of 4: float4 loads */
    } else {
        p.ew += p.tx * qw;
        p.pitch = p.ew | 1; /* odd: scalar loads of rows in one warp hit distinct banks */
    }
    p.vec_ok = p.fast && ((p.worg % 4) + 4) % 4 == 0 && s->in[2] % 4 == 0 &&
               s->layout == CONVT3D_LAYOUT_NCDHW;
}

} // namespace

bool plan_dwtile(const convt3d_shape *s, dw_params *out, size_t *smem, int *threads,
                 unsigned grid[3], char *why, size_t why_size)
{
    if (!dwtile_shape_ok(s, why, why_size))
        return false;
    dw_params p;
    memset(&p, 0, sizeof p);
    if (!fill_w(s, &p)) {
        snprintf(why, why_size, "more than %d taps in a W phase", kDwMaxWTaps);
        return false;
    }
    const dh_span sd = fill_dh(s, 0, &p), sh = fill_dh(s, 1, &p);
    fill_sizes_and_w_run(s, &p);
    const long long wsm = s->k[0] * s->k[1] * p.wrow;
    if (wsm * 4 > kDwSmemMax) {
        snprintf(why, why_size, "the channel's weights exceed %d bytes of shared memory",
                 kDwSmemMax);
        return false;
    }
    p.wsm_floats = (int)wsm;

    /* Rows of the block: ty x tz (powers of two, at most what a phase
     * needs) with the least staging and edge waste per computed row. */
    const int rows = kDwThreads / p.tx;
    const int caph = pow2_at_least(sh.qmax, rows);
    const int bz = choose_rows(sd, sh, rows, wsm, p.pitch);
    if (bz == 0) {
        snprintf(why, why_size, "the input tile exceeds %d bytes of shared memory", kDwSmemMax);
        return false;
    }
    p.tz = bz;
    p.ty = rows / bz < caph ? rows / bz : caph;
    p.ly = log2_of(p.ty);
    p.nthreads = p.tx * p.ty * p.tz;
    p.lo[0] = sd.lo;
    p.lo[1] = sh.lo;
    p.ext[0] = sd.span < 0 ? 0 : p.tz + sd.span;
    p.ext[1] = sh.span < 0 ? 0 : p.ty + sh.span;
    p.ntile[0] = (int)ceil_div(sd.qmax, p.tz);
    p.ntile[1] = (int)ceil_div(sh.qmax, p.ty);
    const long long tiles = (long long)p.ntile[0] * p.ntile[1] * p.ntile[2];
    if (tiles >= (1LL << 31) || tiles < 1) {
        snprintf(why, why_size, "%lld spatial tiles", tiles);
        return false;
    }
    /* y offsets inside an (n, c) slab are ints */
    const long long yslab = (s->out[0] - 1) * s->y_stride[2] + (s->out[1] - 1) * s->y_stride[3] +
                            (s->out[2] + kDwRun) * s->y_stride[4] +
                            (long long)p.tz * s->s[0] * s->y_stride[2] +
                            (long long)p.ty * s->s[1] * s->y_stride[3];
    if (yslab >= (1LL << 31)) {
        snprintf(why, why_size, "an output slab too large for int offsets");
        return false;
    }
    finish_dh(0, &p);
    finish_dh(1, &p);
    p.dv_tw = fdiv_make(p.ntile[2]);
    p.dv_th = fdiv_make(p.ntile[1]);
    p.dv_u1 = fdiv_make(p.ew);
    p.dv_u4 = fdiv_make(p.pitch / 4 > 0 ? p.pitch / 4 : 1);
    p.dv_exth = fdiv_make(p.ext[1] > 0 ? p.ext[1] : 1);
    *out = p;
    *smem = (size_t)(wsm + (long long)p.ext[0] * p.ext[1] * p.pitch) * sizeof(float);
    *threads = p.nthreads;
    grid[0] = (unsigned)tiles;
    grid[1] = (unsigned)s->cout;
    grid[2] = (unsigned)s->n;
    return true;
}

/* ---- the registry entries' host side ------------------------------------ */

bool dwtile_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, char *why, size_t why_size)
{
    (void)lim;
    dw_params p;
    size_t smem;
    int threads;
    unsigned grid[3];
    if (!plan_dwtile(s, &p, &smem, &threads, grid, why, why_size))
        return false;
    const int fast = static_cast<const dwtile_variant *>(e.variant)->fast;
    if (p.fast != fast) {
        snprintf(why, why_size,
                 fast ? "the W slots' windows start at different staged columns"
                      : "the W slots' windows start at one staged column: the run8 build "
                        "takes it");
        return false;
    }
    return true;
}

bool dwtile_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, const cuda_overrides &ov, char *why,
                              size_t why_size)
{
    (void)e;
    (void)lim;
    (void)ov;
    /* NDHWC goes to dwlast (channels in the lanes): this kernel's staging
     * reads x along W. */
    if (s->layout != CONVT3D_LAYOUT_NCDHW) {
        snprintf(why, why_size, "automatically for NCDHW only");
        return true;
    }
    if (depthwise_four_preferred(s)) {
        snprintf(why, why_size, "automatically for k_volume >= the stride product (f32: "
                                "cuda/f32_depthwise_phase_4 below)");
        return true;
    }
    return false;
}

bool dwtile_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                       size_t why_size)
{
    (void)e;
    (void)lim;
    (void)ov;
    (void)mode;
    dwtile_plan *dp = family_params<dwtile_plan>(*k);
    memset(dp, 0, sizeof *dp);
    if (!plan_dwtile(s, &dp->p, &k->smem_bytes, &k->threads, dp->grid, why, why_size))
        return false;
    /* weights packed with one channel a block (ocb 1): [c][kd][kh][kw] */
    k->ocb = 1;
    k->nocb = 1;
    k->blocks = (long long)dp->grid[0] * dp->grid[1] * dp->grid[2];
    return true;
}

void dwtile_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    const dw_params &p = family_params<dwtile_plan>(k)->p;
    snprintf(buf, size, "%s: threads tx%d x ty%d x tz%d = %d, tiles %dx%dx%d, %lld blocks, "
             "%zu B shared", k.impl->name, p.tx, p.ty, p.tz, k.threads, p.ntile[0], p.ntile[1],
             p.ntile[2], k.blocks, k.smem_bytes);
}

} // namespace ct3d
