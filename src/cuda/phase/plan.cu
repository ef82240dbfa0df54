/* The phase kernel's planner (plan.h): where it applies, its tiling by
 * rules measured on the H200, its parameters, and its registry entries'
 * host side (applicability, the variant the planner picks, planning,
 * description).  Pure host code, no CUDA API. */
#include <stdio.h>
#include <string.h>

#include "../common/env.h"
#include "plan.h"
#include "../simple/plan.h"

namespace ct3d {

bool phase_kernel_applies(const convt3d_shape *s, char *why, size_t why_size)
{
    if (!int_indexable(s, why, why_size))
        return false;
    if (s->s[2] > 2) {
        snprintf(why, why_size, "stride[2]=%lld > 2", (long long)s->s[2]);
        return false;
    }
    if (s->s[0] > kMaxPhaseStride || s->s[1] > kMaxPhaseStride) {
        snprintf(why, why_size, "stride in D/H > %d", kMaxPhaseStride);
        return false;
    }
    if (convt3d_phase_of(s, 2, 0).dm != 1) {
        snprintf(why, why_size, "dilation[2]=%lld does not divide stride[2]=%lld",
                 (long long)s->l[2], (long long)s->s[2]);
        return false;
    }
    if (s->k[2] > kMaxKW) {
        snprintf(why, why_size, "kernel[2]=%lld > %d", (long long)s->k[2], kMaxKW);
        return false;
    }
    for (long long r = 0; r < s->s[2]; r++)
        if (convt3d_phase_of(s, 2, r).taps > kMaxWTaps) {
            snprintf(why, why_size, "more than %d taps in a W phase", kMaxWTaps);
            return false;
        }
    return true;
}

const char *phase_name(int all, int sw, int oct, convt3d_dtype type)
{
    if (type == CONVT3D_F16) { /* 8 channels a thread only (kHalfPhaseOct) */
        if (all)
            return sw == 2 ? "cuda/f16_phase_grouped_2x4x8" : "cuda/f16_phase_grouped_1x8x8";
        return sw == 2 ? "cuda/f16_phase_tiled_2x4x8" : "cuda/f16_phase_tiled_1x8x8";
    }
    if (type == CONVT3D_BF16) {
        if (all)
            return sw == 2 ? "cuda/bf16_phase_grouped_2x4x8" : "cuda/bf16_phase_grouped_1x8x8";
        return sw == 2 ? "cuda/bf16_phase_tiled_2x4x8" : "cuda/bf16_phase_tiled_1x8x8";
    }
    if (all) {
        if (sw == 2)
            return oct == 8 ? "cuda/f32_phase_grouped_2x4x8" : "cuda/f32_phase_grouped_2x4x4";
        return oct == 8 ? "cuda/f32_phase_grouped_1x8x8" : "cuda/f32_phase_grouped_1x8x4";
    }
    if (sw == 2)
        return oct == 8 ? "cuda/f32_phase_tiled_2x4x8" : "cuda/f32_phase_tiled_2x4x4";
    return oct == 8 ? "cuda/f32_phase_tiled_1x8x8" : "cuda/f32_phase_tiled_1x8x4";
}

namespace {

/* Shared memory a block should stay under: three blocks a multiprocessor.
 * Every best tiling measured on the H200 sat at 70-76 KB (bench/NOTES.md). */
constexpr long long kSmemTarget = 76 * 1024;
/* Must match __launch_bounds__ of the phase kernel (launch.cu, entry.cuh). */
constexpr int kMaxPhaseThreads = 256;

/* A candidate tiling of the phase kernel. */
struct tiling {
    int qw, oct, toc, tx, ty, tz, cic, all;
    int ks; /* input-channel slices (phase_params.ks) */
    int nofuse; /* 1: no fused W slot pair (phase_params.fuse_w), for measuring */
    int noalign; /* 1: grouped tiles on the union's q grid (phase_params.align_all off) */
};

/* Tiled mode's block order (phase_params.pp_order, snake): phase pairs by
 * taps, most first (a stable sort: ties keep their order). */
void order_phase_pairs(phase_params *p, int num_sms)
{
    int work[kMaxPhaseStride * kMaxPhaseStride];
    for (int i = 0; i < p->npp; i++) {
        const int rd = i / p->s[1], rh = i % p->s[1];
        work[i] = p->ph[0][rd].taps * p->ph[1][rh].taps;
        p->pp_order[i] = (unsigned char)i;
    }
    for (int i = 1; i < p->npp; i++)
        for (int j = i; j > 0 && work[p->pp_order[j]] > work[p->pp_order[j - 1]]; j--) {
            const unsigned char t = p->pp_order[j];
            p->pp_order[j] = p->pp_order[j - 1];
            p->pp_order[j - 1] = t;
        }
    p->snake = p->nblocks > num_sms ? num_sms : 0;
}

/* Grouped mode's tile in dim d, from the phase tables p.ph[d]: the first q
 * row, the input rows it stages before its first q row (hal) and past its
 * last (after), and the q rows its tiles must cover (span).  Tile rows are
 * on the union's grid, or with align on each phase's own (align_all). */
struct union_rows {
    int qlo, hal, after, span;
};

union_rows union_rows_of(const phase_params &p, int d, bool align)
{
    union_rows u = {1 << 30, -(1 << 30), -(1 << 30), 0};
    int qhi = -(1 << 30), most = 0;
    for (int r = 0; r < p.s[d]; r++) {
        const phase_entry &e = p.ph[d][r];
        if (e.qcount == 0)
            continue;
        u.qlo = e.qlo < u.qlo ? e.qlo : u.qlo;
        qhi = e.qlo + e.qcount - 1 > qhi ? e.qlo + e.qcount - 1 : qhi;
        most = e.qcount > most ? e.qcount : most;
    }
    for (int r = 0; r < p.s[d]; r++) {
        const phase_entry &e = p.ph[d][r];
        if (e.taps == 0 || e.qcount == 0)
            continue;
        const int shift = align ? e.qlo - u.qlo : 0;
        const int h = e.m0 + (e.taps - 1) * p.dm[d] - shift;
        u.hal = h > u.hal ? h : u.hal;
        u.after = shift - e.m0 > u.after ? shift - e.m0 : u.after;
    }
    if (u.hal == -(1 << 30))
        u.hal = u.after = 0; /* no taps: bias only */
    u.span = align ? most : qhi - u.qlo + 1;
    return u;
}

/* Tiled mode's extents of one dim over its phases: the most staged rows
 * past a tile's threads, the most taps, the most q rows. */
struct dh_extent {
    int ext, taps, qcount;
};

/* D or H (d < 2): the phase table p->ph[d], the union over the phases
 * (grouped mode) and the tile count p->ntile[d]; false for a dim without
 * outputs. */
bool fill_phase_dh(const convt3d_shape *s, const tiling &t, int d, phase_params *p,
                   dh_extent *one)
{
    const int threads = d == 0 ? t.tz : t.ty;
    int qlo = 1 << 30, qhi = -(1 << 30);
    dh_extent x = {0, 0, 0};
    for (int r = 0; r < p->s[d]; r++) {
        const phase_entry e = phase_entry_of(s, d, r);
        p->ph[d][r] = e;
        if (e.qcount > 0) {
            qlo = e.qlo < qlo ? e.qlo : qlo;
            qhi = e.qlo + e.qcount - 1 > qhi ? e.qlo + e.qcount - 1 : qhi;
        }
        if (e.taps > 0) {
            const int ext = (e.taps - 1) * p->dm[d];
            x.ext = ext > x.ext ? ext : x.ext;
            x.taps = e.taps > x.taps ? e.taps : x.taps;
        }
        x.qcount = e.qcount > x.qcount ? e.qcount : x.qcount;
    }
    if (qhi < qlo)
        return false;
    const union_rows u = union_rows_of(*p, d, p->align_all);
    p->qlo_all[d] = u.qlo;
    p->hal_all[d] = u.hal;
    p->ext_all[d] = u.hal + u.after;
    p->ntile[d] = (int)ceil_div(t.all ? u.span : x.qcount, threads);
    *one = x;
    return true;
}

/* W: the slots of a thread's run (p->ws, p->kwpos), the tile origin
 * p->wlo0 and the fused slot pair; returns how far the slots' windows reach
 * past the thread's base column, or -1 when the W phases do not cover every
 * kw. */
int fill_phase_w(const convt3d_shape *s, const tiling &t, phase_params *p)
{
    const int sw = (int)s->s[2];
    int wlo0 = 1 << 30, wpos = 0;
    int start[2] = {0, 0};
    for (int f = 0; f < sw; f++) {
        wslot &w = p->ws[f];
        w.r = (f + p->p[2]) % sw;
        const convt3d_phase ph = convt3d_phase_of(s, 2, w.r);
        w.taps = (int)ph.taps;
        w.k0 = ph.first_tap >= 0 ? (int)ph.first_tap : 0;
        const int qf0 = (f + p->p[2] - w.r) / sw;
        w.wpos = wpos;
        for (int tt = 0; tt < w.taps; tt++)
            p->kwpos[w.k0 + tt * p->kstep[2]] = wpos + tt;
        wpos += w.taps;
        if (w.taps > 0) {
            start[f] = qf0 - (int)ph.m0 - (w.taps - 1);
            wlo0 = start[f] < wlo0 ? start[f] : wlo0;
        }
    }
    if (wpos != p->k[2])
        return -1;
    int wend = 0;
    for (int f = 0; f < sw; f++) {
        wslot &w = p->ws[f];
        w.woff = w.taps > 0 ? start[f] - wlo0 : 0;
        if (w.taps > 0 && w.woff + w.taps - 1 > wend)
            wend = w.woff + w.taps - 1;
    }
    p->wlo0 = wlo0;
    if (sw == 2 && !t.nofuse && p->ws[0].taps >= 1 && p->ws[1].taps >= 1) {
        const int shift = p->ws[1].woff - p->ws[0].woff; /* = a1 - a0 */
        for (int i = 0; i < kFusePairCount && !p->fuse_w; i++) {
            const fuse_pair &f = kFusePairs[i];
            if (f.t0 == p->ws[0].taps && f.t1 == p->ws[1].taps && f.a1 - f.a0 == shift &&
                (f.a0 == 0 || f.a1 == 0))
                p->fuse_w = i + 1;
        }
    }
    return wend;
}

/* Fills the phase kernel's parameters for tiling t; false if it does not
 * fit (threads, shared memory). */
bool fill_phase(const convt3d_shape *s, const tiling &t, const device_limits &lim,
                phase_params *pp, size_t *smem)
{
    phase_params p;
    memset(&p, 0, sizeof p);
    const int sw = (int)s->s[2];
    fill_shape_fields(s, p);
    for (int d = 0; d < 3; d++)
        p.out[d] = (int)s->out[d];
    p.tx = t.tx;
    p.ty = t.ty;
    p.tz = t.tz;
    p.toc = t.toc;
    p.nbase = t.toc * t.tx * t.ty * t.tz;
    p.ks = t.ks;
    p.nthreads = p.nbase * t.ks;
    if (p.nthreads % 32 != 0 || p.nthreads > kMaxPhaseThreads || t.ks < 1 ||
        (t.ks > 1 && p.nbase % 32 != 0) || t.ks > t.cic)
        return false;
    p.cic = t.cic;
    p.nchunks = (int)ceil_div(s->cig, t.cic);
    p.all_phases = t.all;
    if (t.all && p.nchunks != 1)
        return false;
    p.ocb = t.toc * t.oct;
    p.nocb = (int)ceil_div(s->cog, p.ocb);
    p.npp = p.s[0] * p.s[1];

    p.align_all = t.all && !t.noalign;
    dh_extent one[2];
    for (int d = 0; d < 2; d++)
        if (!fill_phase_dh(s, t, d, &p, &one[d]))
            return false; /* cannot happen for a valid problem */
    const int wend = fill_phase_w(s, t, &p);
    if (wend < 0)
        return false; /* every kw belongs to exactly one W phase */
    p.ew = t.tx * t.qw + wend;
    p.pitch = p.ew | 1;
    p.ntile[2] = (int)ceil_div(s->out[2], (long long)t.tx * sw * t.qw);
    p.wrow4 = p.k[2] * t.oct / 4;
    if (t.toc > 1 && p.wrow4 % 2 == 0)
        p.wrow4++;

    const long long wd = t.all ? p.k[0] : one[0].taps, wh = t.all ? p.k[1] : one[1].taps;
    const long long ed = t.tz + (t.all ? p.ext_all[0] : one[0].ext);
    const long long eh = t.ty + (t.all ? p.ext_all[1] : one[1].ext);
    const long long wsm = (long long)t.cic * wd * wh * t.toc * p.wrow4 * 4;
    const long long tilef = (long long)t.cic * ed * eh * p.pitch;
    const long long red = (long long)(t.ks - 1) * p.nbase * sw * t.qw * t.oct;
    const long long floats = t.all ? wsm + tilef + red : (wsm + tilef > red ? wsm + tilef : red);
    const long long bytes = floats * (long long)sizeof(float);
    if (bytes > lim.smem_optin || wsm > CONVT3D_INT_INDEX_LIMIT)
        return false;
    p.red_off = t.all ? (int)(wsm + tilef) : 0;
    p.wsm_floats = (int)wsm;
    p.nblocks = s->n * s->groups * p.nocb * (long long)p.ntile[0] * p.ntile[1] * p.ntile[2] *
                (t.all ? 1 : p.npp);
    order_phase_pairs(&p, lim.num_sms);
    *pp = p;
    *smem = (size_t)bytes;
    return true;
}

/* Staged input rows per output row in D and H for a ty x tz tile, times the
 * rows the tiles cover past the q range: the staging and edge waste a
 * tiling costs.  Lower is better. */
double tile_waste(const phase_params &p, int all, int ty, int tz)
{
    double w = 1.0;
    for (int d = 0; d < 2; d++) {
        const int threads = d == 0 ? tz : ty;
        int ext = 0, qext = 0;
        if (all) { /* the planner's grouped tiles are phase-aligned */
            const union_rows u = union_rows_of(p, d, true);
            ext = u.hal + u.after;
            qext = u.span;
        } else {
            for (int r = 0; r < p.s[d]; r++) {
                const phase_entry &e = p.ph[d][r];
                const int x = e.taps > 0 ? (e.taps - 1) * p.dm[d] : 0;
                ext = x > ext ? x : ext;
                qext = e.qcount > qext ? e.qcount : qext;
            }
        }
        if (qext < 1)
            qext = 1;
        w *= (double)(threads + ext) / threads * (double)ceil_div(qext, threads) * threads / qext;
    }
    return w;
}

/* One search of the phase planner: the problem, the device, the mode
 * (want_all: 1 grouped, 0 tiled, -1 either) and what follows from them. */
struct phase_search {
    const convt3d_shape *s;
    const device_limits *lim;
    int want_all, qw, oct, npp;
    bool half;      /* f16/bf16 data: only the builds phase_half_built() names */
    int target;     /* threads a block aims for */
    long long runs; /* W runs of sw * qw outputs */
};

/* A tiling that fits, with its parameters and shared memory. */
struct phase_pick {
    tiling t;
    phase_params p;
    size_t smem;
};

/* Tiling t under a shared-memory cap: *out and true if it fits. */
bool take(const phase_search &c, const tiling &t, long long cap, phase_pick *out)
{
    phase_params p;
    size_t smem;
    if (!fill_phase(c.s, t, *c.lim, &p, &smem) || (long long)smem > cap)
        return false;
    if (c.half && !phase_half_built((int)c.s->s[2], phase_features(p)))
        return false;
    out->t = t;
    out->p = p;
    out->smem = smem;
    return true;
}

/* The CONVT3D_CUDA_TILE tiling (forced[], parse_tile()) in the mode(s) the
 * search allows, grouped first. */
bool take_forced(const phase_search &c, const int forced[9], phase_pick *out)
{
    for (int all = 1; all >= 0; all--)
        if ((c.want_all < 0 && (all == 0 || c.npp > 1)) || all == c.want_all) {
            const int cic = all || forced[4] > c.s->cig ? (int)c.s->cig : forced[4];
            if (take(c,
                     {c.qw, c.oct, forced[3], forced[0], forced[1], forced[2], cic, all, forced[5],
                      forced[6] == 0, forced[8] == 0},
                     c.lim->smem_optin, out))
                return true;
        }
    return false;
}

/* Rows (ty x tz, a power of two) for a block of tc x txv threads per row
 * and ks slices: the most that keep it within target threads, else the
 * fewest that make whole warps; 0 if none within 256 threads does. */
int rows_for(int target, int tc, int txv, int ks)
{
    int most = 0, fewest = 0;
    for (int r = 1; r <= 128; r *= 2) {
        const int nt = tc * txv * r * ks;
        if (nt % 32 != 0 || nt > 256)
            continue;
        fewest = fewest ? fewest : r;
        most = nt <= target ? r : most;
    }
    return most ? most : fewest;
}

/* The row width tx (W runs a block) and the rows for it. */
int row_width(const phase_search &c, int tc, int ks, int *rows)
{
    int tx = (int)(c.runs < 16 ? c.runs : 16);
    *rows = rows_for(c.target, tc, tx, ks);
    if (*rows == 0) { /* e.g. 13 runs: a power-of-two row width instead */
        while (tx & (tx - 1))
            tx &= tx - 1;
        *rows = rows_for(c.target, tc, tx, ks);
    }
    return tx;
}

/* The ty x tz split of r rows with the least tile_waste (ties: more H
 * rows); the phase tables come from a probe at one input channel.  0 if
 * no split fits. */
int best_split(const phase_search &c, int tc, int tx, int r, int all)
{
    int best_ty = 0;
    double best_w = 0.0;
    for (int ty = r; ty >= 1; ty /= 2) {
        const int tz = r / ty;
        phase_params probe;
        size_t probe_smem;
        if (ty > 16 || tz > 8 ||
            !fill_phase(c.s, {c.qw, c.oct, tc, tx, ty, tz, 1, 0, 1, 0, 0}, *c.lim, &probe,
                        &probe_smem))
            continue;
        const double w = tile_waste(probe, all, ty, tz);
        if (best_ty == 0 || w < best_w - 1e-9) {
            best_ty = ty;
            best_w = w;
        }
    }
    return best_ty;
}

/* The candidates of one attempt at tc channel sub-blocks and ks slices
 * under a shared-memory cap, in order: grouped before tiled, the most rows
 * first, and in tiled mode the largest input-channel chunk first; the first
 * that fits is taken. */
bool search(const phase_search &c, int tc, long long cap, int ks, phase_pick *out)
{
    static const int cics[] = {64, 32, 16, 8, 4, 2, 1};
    int rows;
    const int tx = row_width(c, tc, ks, &rows);
    for (int all = 1; all >= 0; all--) {
        if (c.want_all >= 0 && all != c.want_all)
            continue;
        if (all && c.npp == 1 && c.want_all < 0)
            continue; /* one phase pair: tiled mode is the same thing, with chunking */
        for (int r = rows; r >= 1; r /= 2) {
            if ((tc * tx * r) % 32 != 0)
                break;
            const int ty = best_split(c, tc, tx, r, all);
            if (ty == 0)
                continue;
            const int tz = r / ty;
            if (all) {
                if (take(c, {c.qw, c.oct, tc, tx, ty, tz, (int)c.s->cig, 1, ks, 0, 0}, cap, out))
                    return true;
                continue;
            }
            for (int ci = -1; ci < 7; ci++) {
                const int cic = ci < 0 ? (int)c.s->cig : cics[ci];
                if (ci >= 0 && cic >= c.s->cig)
                    continue;
                if (take(c, {c.qw, c.oct, tc, tx, ty, tz, cic, 0, ks, 0, 0}, cap, out))
                    return true;
            }
        }
    }
    return false;
}

/* Few output tiles (under one wave of two full blocks a multiprocessor):
 * the same block size from half the rows and two (then four) input-channel
 * slices, twice the blocks, while that still fits one wave. */
phase_pick with_slices(const phase_search &c, phase_pick best, long long cap)
{
    for (int ks = 2; ks <= 4 && c.s->cig >= 4 * ks && best.p.nblocks * 2 <= 2LL * c.lim->num_sms;
         ks *= 2) {
        phase_pick sliced;
        if (!search(c, best.t.toc, cap, ks, &sliced) || sliced.p.nblocks <= best.p.nblocks)
            break;
        best = sliced;
    }
    return best;
}

/* At most 4 input channels a group and stride >= 2 in every dim: tiled
 * mode, not grouped.  Grouped mode stages a group's few input channels once
 * for all s^3 phase pairs, but then a block walks every phase pair in turn;
 * tiled blocks take one pair each and fill the GPU.  H200, f32
 * (bench/NOTES.md round 11, bench/sweeps/round11.txt): r47 (1 -> 47
 * channels) 0.056 -> 0.043 ms, r210 (4 -> 118) 0.039 -> 0.018, rgb16_k5_ndhwc
 * (3 -> 8) 0.039 -> 0.023, r236 0.116 -> 0.112, rgb8_odd 0.085 -> 0.083; one
 * loss, rgb16_s2 (3 -> 32, k3) 0.174 -> 0.184.  f16/bf16 not measured: kept. */
bool few_inputs_strided(const convt3d_shape *s)
{
    return s->cig <= 4 && s->s[0] >= 2 && s->s[1] >= 2 && s->s[2] >= 2;
}

/* The first tiling that fits in the search's mode: the most channel
 * sub-blocks first, under kSmemTarget and then under the device's opt-in
 * shared memory; with slices, then input-channel slices for few blocks. */
bool pick_in_mode(const phase_search &c, int toc, bool slices, phase_pick *out)
{
    const long long caps[2] = {kSmemTarget, c.lim->smem_optin};
    for (int ci = 0; ci < 2; ci++)
        for (int tc = toc; tc >= 1; tc = tc > 1 ? (tc + 1) / 2 : 0)
            if (search(c, tc, caps[ci], 1, out)) {
                if (slices)
                    *out = with_slices(c, *out, caps[ci]);
                return true;
            }
    return false;
}

/* f32 grouped tiles that give at most one block to every second
 * multiprocessor: tiled mode instead, whose blocks take one phase pair each
 * (s_D * s_H times the blocks).  A grouped block walks every phase pair in
 * turn, so on a small problem most of the GPU waits for a few blocks.
 * Measured on an H100 (bench/NOTES.md round 35; seeds 1-2 of --random 400,
 * every kernel forced): of the 31 problems whose grouped plan had at most 66
 * blocks (132 multiprocessors), tiled mode was faster on 29 (1.03-2.50x),
 * 0.98x on one and 0.57x on one (81 -> 4 channels a group, kernel 1x1x1):
 * geomean 1.34x over the 31.  Between 67 and 131 blocks it was a wash (14
 * problems, 0.80-1.16x, geomean 1.02x), so the rule stops at half.  Out of
 * sample (seeds 5-6, A/B in one H100 call): 36 problems changed, 35 faster,
 * 0.97x on the other, geomean 1.49x. */
bool grouped_leaves_sms_idle(const phase_pick &grouped, const device_limits &lim)
{
    return 2LL * grouped.p.nblocks <= (long long)lim.num_sms;
}

} // namespace

/* The phase kernel's tiling in mode want_all (-1: either).  Rules, each
 * taken from measurements on the H200 (bench/NOTES.md):
 *   - grouped mode (one staging for every phase pair) whenever it fits,
 *     but for <= 4 input channels a group at stride >= 2 in every dim
 *     (few_inputs_strided): tiled there where it fits;
 *   - f32 grouped tiles of at most one block for every second
 *     multiprocessor: tiled mode, which has more blocks
 *     (grouped_leaves_sms_idle);
 *   - f32 C_out/G > 16 with at most one block a multiprocessor: 4 output
 *     channels a thread, not 8, in the mode chosen (eight_channel_blocks_few);
 *     with more blocks, where few_inputs_strided chose tiled mode: grouped
 *     mode with 4 channels a thread (few_inputs_grouped_four);
 *   - toc: as many channel sub-blocks as Cog needs (up to 8), so the staged
 *     input serves the most output channels;
 *   - tx: the whole output row (up to 16 runs of sw*qw outputs);
 *   - 256 threads a block (64 when a problem has few MACs per output and is
 *     bound by memory latency), the rest split into ty x tz rows minimising
 *     tile_waste (ties: more H rows);
 *   - tiled mode: the largest input-channel chunk that keeps the block under
 *     kSmemTarget of shared memory.
 *   - few output tiles (fewer blocks than two a multiprocessor): ks = 2
 *     (then 4) input-channel slices a block over half the rows, while the
 *     blocks still fit one such wave (more warps for latency hiding);
 *   - W stride 2 whose two W slots match an entry of kFusePairs: the fused
 *     slot pair (fuse_w);
 *   - grouped tiles start at each phase's own first q row (align_all);
 * CONVT3D_CUDA_TILE=tx,ty,tz,toc,cic[,ks[,fuse[,occ[,align]]]] overrides all of
 * it where it fits (fuse 0: slot by slot; align 0: grouped tiles on the
 * union's q grid). */
static bool plan_phase_at(const convt3d_shape *s, const device_limits &lim, int want_all,
                          int oct, const char *tile, phase_plan *out, char *note,
                          size_t note_size)
{
    phase_search c;
    c.s = s;
    c.lim = &lim;
    c.want_all = want_all;
    c.qw = s->s[2] == 2 ? 4 : 8;
    c.half = s->y_type != CONVT3D_F32;
    c.oct = c.half ? kHalfPhaseOct : oct ? oct : phase_auto_oct(s);
    c.npp = (int)(s->s[0] * s->s[1]);
    c.target = s->cig * s->cog < 16 ? 64 : 256;
    c.runs = ceil_div(s->out[2], s->s[2] * c.qw);
    const long long toc_need = ceil_div(s->cog, c.oct);
    const int toc = toc_need < 8 ? (int)toc_need : 8;

    phase_pick best;
    bool found = false;
    int forced[9];
    const bool is_forced = parse_tile(tile, forced);
    if (is_forced && !(found = take_forced(c, forced, &best)))
        snprintf(note, note_size, "CONVT3D_CUDA_TILE=%s does not fit, ignored", tile);
    if (!found) {
        const bool automatic = !is_forced;
        if (automatic && want_all < 0 && !c.half && few_inputs_strided(s))
            c.want_all = 0;
        found = pick_in_mode(c, toc, automatic, &best);
        if (!found && c.want_all != want_all) {
            c.want_all = want_all; /* the rule above narrowed the mode: relax it */
            found = pick_in_mode(c, toc, automatic, &best);
        }
        if (found && automatic && want_all < 0 && !c.half && best.t.all &&
            grouped_leaves_sms_idle(best, lim)) {
            phase_pick tiled;
            c.want_all = 0;
            if (pick_in_mode(c, toc, true, &tiled) && tiled.p.nblocks > best.p.nblocks)
                best = tiled;
        }
    }
    if (!found)
        return false;
    out->p = best.p;
    out->smem = best.smem;
    out->sw = (int)s->s[2];
    out->qw = best.t.qw;
    out->oct = best.t.oct;
    out->all = best.t.all;
    /* The <= 96-register build for small blocks only: on the H200 it made the
     * 64-thread grouped depthwise tile 9% faster (0.127 -> 0.116 ms) but the
     * 192- and 96-thread kernelbench tiles 6% and 13% slower (0.280 -> 0.298,
     * 0.284 -> 0.320 ms; more warps, but more shared-memory stalls).  The
     * driver reserves 1 KB of shared memory a block; 4 channels a thread only
     * (with 8, ptxas spills 1 KB at 96 registers); an 8th tile field of 0
     * keeps the 128-register build, for measuring. */
    out->type = s->y_type;
    out->occ3 = !c.half && out->sw == 2 && out->qw == 4 && out->oct == 4 &&
                phase_features(best.p) == 0 && best.p.nthreads <= 64 &&
                3 * ((long long)best.smem + 1024) <= lim.smem_sm && !(is_forced && forced[7] == 0);
    return true;
}

/* f32 data, 8 channels a thread chosen by C_out/G (phase_auto_oct), and a
 * plan of at most one block a multiprocessor: 4 channels a thread in the
 * same mode instead, twice the threads for the same outputs (re-planned in
 * either mode, one such problem went from tiled to grouped and ran 0.51x).
 * Measured on an H100 (bench/NOTES.md round 35; seeds 1-2 of --random 400,
 * every kernel forced, C_out/G 17-256): where the 8-channel plan had at most 132 blocks
 * the 4-channel variant of the same mode was faster on 37 of 39 problems
 * (1.05-1.77x, geomean 1.31x; 0.91x and 0.94x on the other two); above 132
 * blocks the two split (93 problems: 43 faster by more than 3%, 27 slower,
 * 0.62-1.70x, geomean 1.04x).  Out of sample (seeds 5-6, A/B in one H100
 * call, over the tiled-mode rule): 46 problems changed, 39 faster, 5 slower
 * by more than 3% (0.89-0.96x), geomean 1.19x. */
static bool eight_channel_blocks_few(const convt3d_shape *s, const device_limits &lim,
                                     const phase_plan &eight)
{
    return s->y_type == CONVT3D_F32 && eight.oct == 8 &&
           eight.p.nblocks <= (long long)lim.num_sms;
}

/* f32 data the few-inputs rule (few_inputs_strided) sent to tiled mode
 * with 8 channels a thread, on more blocks than multiprocessors
 * (eight_channel_blocks_few did not apply): grouped mode with 4 channels a
 * thread.  A tiled block of 8 channels re-stages its phase pair's few
 * input channels for few outputs; a grouped block stages them once for
 * every pair, and 4 channels a thread give it twice the threads.  Measured
 * on an H100 (bench/NOTES.md round 35; seeds 1-2 of --random 400, every
 * kernel forced; C_in/G 1-4, C_out/G 24-256, stride 2): grouped with 4
 * channels faster than tiled with 8 on 24 of 26 (1.05-1.70x, geomean
 * 1.25x; 1.00x and 0.95x on the other two), tiled with 4 1.09x, grouped
 * with 8 0.95x.  Out of sample (seeds 5-8, A/B in one H100 call): 42
 * problems changed, 36 faster, 5 slower by more than 3% (0.85-0.91x, four
 * of them NCDHW with 32 output channels), geomean 1.16x.  With 4 channels
 * chosen anyway (C_out/G <= 16, or few blocks) tiled mode stays: grouped
 * was 0.84x there (48 problems). */
static bool few_inputs_grouped_four(const convt3d_shape *s, const phase_plan &p)
{
    return s->y_type == CONVT3D_F32 && few_inputs_strided(s) && !p.all && p.oct == 8;
}

bool plan_phase(const convt3d_shape *s, const device_limits &lim, int want_all, int oct,
                const char *tile, phase_plan *out, char *note, size_t note_size)
{
    if (!plan_phase_at(s, lim, want_all, oct, tile, out, note, note_size))
        return false;
    int forced[9];
    if (oct != 0 || parse_tile(tile, forced))
        return true;
    phase_plan four;
    char four_note[8];
    if (eight_channel_blocks_few(s, lim, *out)) {
        if (plan_phase_at(s, lim, out->all, 4, tile, &four, four_note, sizeof four_note))
            *out = four;
    } else if (want_all < 0 && few_inputs_grouped_four(s, *out)) {
        if (plan_phase_at(s, lim, 1, 4, tile, &four, four_note, sizeof four_note))
            *out = four;
    }
    return true;
}

bool phase_takes(const convt3d_shape *s, const device_limits &lim, const cuda_overrides &ov)
{
    char why[160];
    phase_plan pick;
    return phase_kernel_applies(s, why, sizeof why) &&
           plan_phase(s, lim, -1, 0, ov.tile, &pick, why, sizeof why);
}

/* ---- the registry entries' host side ------------------------------------ */

bool phase_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                            char *why, size_t why_size)
{
    (void)lim;
    const phase_variant &v = *static_cast<const phase_variant *>(e.variant);
    if (!phase_kernel_applies(s, why, why_size))
        return false;
    if (s->s[2] != v.sw) {
        snprintf(why, why_size, "W stride %lld, this instantiation is for W stride %d",
                 (long long)s->s[2], v.sw);
        return false;
    }
    return true;
}

bool phase_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size)
{
    phase_plan pick;
    char note[8];
    /* Half depthwise data keep the depthwise kernels (dwtile, simple/): the
     * half builds have 8 channels a thread, 7 of 8 FMAs wasted on one
     * channel a group (f32 depthwise runs 4 a thread); not measured. */
    if (s->y_type != CONVT3D_F32 && s->cig == 1 && s->cog == 1) {
        snprintf(why, why_size, "not automatically for depthwise half data (8 channels a "
                 "thread: the depthwise kernels)");
        return true;
    }
    if (depthwise_four_preferred(s)) {
        snprintf(why, why_size, "not automatically for f32 depthwise NCDHW with k_volume < the "
                                "stride product (cuda/f32_depthwise_phase_4)");
        return true;
    }
    if (!plan_phase(s, lim, -1, 0, ov.tile, &pick, note, sizeof note)) {
        snprintf(why, why_size, "the phase planner finds no tiling of its own choice");
        return true;
    }
    const char *name = phase_name(pick.all, pick.sw, pick.oct, s->y_type);
    if (strcmp(name, e.name) != 0) {
        snprintf(why, why_size, "the phase planner picks %s", name);
        return true;
    }
    return false;
}

bool phase_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size)
{
    const phase_variant &v = *static_cast<const phase_variant *>(e.variant);
    phase_plan *pp = family_params<phase_plan>(*k);
    memset(pp, 0, sizeof *pp);
    const bool automatic = mode == PLAN_AUTOMATIC;
    if (!plan_phase(s, lim, automatic ? -1 : v.all, automatic ? 0 : v.oct, ov.tile, pp, k->note,
                    sizeof k->note)) {
        snprintf(why, why_size, "no %s tiling with %d channels a thread fits %d bytes of shared "
                 "memory", v.all ? "grouped" : "tiled", v.oct, lim.smem_optin);
        return false;
    }
    const char *picked = phase_name(pp->all, pp->sw, pp->oct, s->y_type);
    if (strcmp(picked, e.name) != 0) {
        snprintf(why, why_size, "the phase planner picks %s", picked);
        return false;
    }
    k->ocb = pp->p.ocb;
    k->nocb = pp->p.nocb;
    k->smem_bytes = pp->smem;
    k->threads = pp->p.nthreads;
    k->blocks = pp->p.nblocks;
    return true;
}

void phase_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    const phase_plan &pp = *family_params<phase_plan>(k);
    const phase_params &p = pp.p;
    snprintf(buf, size,
             "%s: threads toc%d x tx%d x ty%d x tz%d x ks%d = %d, cic %d (%d chunks), "
             "ocb %d x %d, fuse_w %d, tiles %dx%dx%d, %lld blocks, %zu B shared, "
             "%d blocks/SM build%s%s",
             k.impl->name, p.toc, p.tx, p.ty, p.tz, p.ks, p.nthreads, p.cic, p.nchunks, p.ocb,
             p.nocb, p.fuse_w, p.ntile[0], p.ntile[1], p.ntile[2], p.nblocks, k.smem_bytes,
             pp.occ3 ? 3 : 2, k.note[0] ? "; " : "", k.note);
}

} // namespace ct3d
