/* Host-side planning for the CUDA backend (see gpu_plan.h): kernel choice,
 * the phase kernel's tiling by rules measured on the H200, and its
 * parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_plan.h"

namespace ct3d {

phase_entry phase_entry_of(const convt3d_shape *s, int d, long long r)
{
    const convt3d_phase ph = convt3d_phase_of(s, d, r);
    phase_entry e;
    e.taps = (int)ph.taps;
    e.k0 = ph.first_tap >= 0 ? (int)ph.first_tap : 0;
    e.m0 = ph.first_tap >= 0 ? (int)((ph.first_tap * s->l[d] - r) / s->s[d]) : 0;
    const long long lo = s->p[d] >= r ? ceil_div(s->p[d] - r, s->s[d]) : 0;
    const long long hi = floor_div(s->out[d] - 1 + s->p[d] - r, s->s[d]);
    e.qlo = (int)lo;
    e.qcount = hi >= lo ? (int)(hi - lo + 1) : 0;
    return e;
}

namespace {

/* The phase kernel indexes dims, channels and tile offsets with int. */
constexpr long long kIntLimit = 1LL << 28;
/* Shared memory a block should stay under: three blocks a multiprocessor.
 * Every best tiling measured on the H200 sat at 70-76 KB (bench/NOTES.md). */
constexpr long long kSmemTarget = 76 * 1024;
/* Must match __launch_bounds__ of the phase kernel (gpu_launch.cu). */
constexpr int kMaxPhaseThreads = 256;

bool phase_kernel_applies(const convt3d_shape *s, char *why, size_t why_size)
{
    for (int d = 0; d < 3; d++)
        if (s->in[d] >= kIntLimit || s->out[d] >= kIntLimit || s->k[d] >= kIntLimit ||
            s->s[d] >= kIntLimit || s->p[d] >= kIntLimit || s->l[d] >= kIntLimit) {
            snprintf(why, why_size, "a size in dim %d is too large for int indexing", d);
            return false;
        }
    if (s->cin >= kIntLimit || s->cout >= kIntLimit) {
        snprintf(why, why_size, "channel counts too large for int indexing");
        return false;
    }
    if (s->s[2] > 2) {
        snprintf(why, why_size, "stride[2]=%lld > 2", (long long)s->s[2]);
        return false;
    }
    if (s->s[0] > kMaxPhaseStride || s->s[1] > kMaxPhaseStride) {
        snprintf(why, why_size, "stride in D/H > %d", kMaxPhaseStride);
        return false;
    }
    if (s->l[2] / gcd64(s->s[2], s->l[2]) != 1) {
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

    /* D and H: phase tables, the union over phases, and the largest
     * per-phase extents (tiled mode). */
    int ext_one[2] = {0, 0}, taps_one[2] = {0, 0}, qcount_one[2] = {0, 0};
    p.align_all = t.all && !t.noalign;
    for (int d = 0; d < 2; d++) {
        const int threads = d == 0 ? t.tz : t.ty;
        int qlo = 1 << 30, qhi = -(1 << 30);
        for (int r = 0; r < p.s[d]; r++) {
            const phase_entry e = phase_entry_of(s, d, r);
            p.ph[d][r] = e;
            if (e.qcount > 0) {
                qlo = e.qlo < qlo ? e.qlo : qlo;
                qhi = e.qlo + e.qcount - 1 > qhi ? e.qlo + e.qcount - 1 : qhi;
            }
            if (e.taps > 0) {
                const int ext = (e.taps - 1) * p.dm[d];
                ext_one[d] = ext > ext_one[d] ? ext : ext_one[d];
                taps_one[d] = e.taps > taps_one[d] ? e.taps : taps_one[d];
            }
            qcount_one[d] = e.qcount > qcount_one[d] ? e.qcount : qcount_one[d];
        }
        if (qhi < qlo)
            return false; /* cannot happen for a valid problem */
        const union_rows u = union_rows_of(p, d, p.align_all);
        p.qlo_all[d] = u.qlo;
        p.hal_all[d] = u.hal;
        p.ext_all[d] = u.hal + u.after;
        p.ntile[d] = (int)ceil_div(t.all ? u.span : qcount_one[d], threads);
    }

    /* W: the slots of a thread's run, the tile origin and extent. */
    int wlo0 = 1 << 30, wpos = 0;
    int start[2] = {0, 0};
    for (int f = 0; f < sw; f++) {
        wslot &w = p.ws[f];
        w.r = (f + p.p[2]) % sw;
        const convt3d_phase ph = convt3d_phase_of(s, 2, w.r);
        w.taps = (int)ph.taps;
        w.k0 = ph.first_tap >= 0 ? (int)ph.first_tap : 0;
        const int m0 = ph.first_tap >= 0 ? (int)((ph.first_tap * s->l[2] - w.r) / sw) : 0;
        const int qf0 = (f + p.p[2] - w.r) / sw;
        w.wpos = wpos;
        for (int tt = 0; tt < w.taps; tt++)
            p.kwpos[w.k0 + tt * p.kstep[2]] = wpos + tt;
        wpos += w.taps;
        if (w.taps > 0) {
            start[f] = qf0 - m0 - (w.taps - 1);
            wlo0 = start[f] < wlo0 ? start[f] : wlo0;
        }
    }
    if (wpos != p.k[2])
        return false; /* every kw belongs to exactly one W phase */
    int wend = 0;
    for (int f = 0; f < sw; f++) {
        wslot &w = p.ws[f];
        w.woff = w.taps > 0 ? start[f] - wlo0 : 0;
        if (w.taps > 0 && w.woff + w.taps - 1 > wend)
            wend = w.woff + w.taps - 1;
    }
    p.wlo0 = wlo0;
    if (sw == 2 && !t.nofuse && p.ws[0].taps >= 1 && p.ws[1].taps >= 1) {
        const int shift = p.ws[1].woff - p.ws[0].woff; /* = a1 - a0 */
        for (int i = 0; i < kFusePairCount && !p.fuse_w; i++) {
            const fuse_pair &f = kFusePairs[i];
            if (f.t0 == p.ws[0].taps && f.t1 == p.ws[1].taps && f.a1 - f.a0 == shift &&
                (f.a0 == 0 || f.a1 == 0))
                p.fuse_w = i + 1;
        }
    }
    p.ew = t.tx * t.qw + wend;
    p.pitch = p.ew | 1;
    p.ntile[2] = (int)ceil_div(s->out[2], (long long)t.tx * sw * t.qw);
    p.wrow4 = p.k[2] * t.oct / 4;
    if (t.toc > 1 && p.wrow4 % 2 == 0)
        p.wrow4++;

    const long long wd = t.all ? p.k[0] : taps_one[0], wh = t.all ? p.k[1] : taps_one[1];
    const long long ed = t.tz + (t.all ? p.ext_all[0] : ext_one[0]);
    const long long eh = t.ty + (t.all ? p.ext_all[1] : ext_one[1]);
    const long long wsm = (long long)t.cic * wd * wh * t.toc * p.wrow4 * 4;
    const long long tilef = (long long)t.cic * ed * eh * p.pitch;
    const long long red = (long long)(t.ks - 1) * p.nbase * sw * t.qw * t.oct;
    const long long floats = t.all ? wsm + tilef + red : (wsm + tilef > red ? wsm + tilef : red);
    const long long bytes = floats * (long long)sizeof(float);
    if (bytes > lim.smem_optin || wsm > kIntLimit)
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

const char *phase_name(int all, int sw, int qw, int oct)
{
    if (all) {
        if (sw == 2)
            return oct == 8 ? "cuda/f32_phase_grouped_2x4x8" : "cuda/f32_phase_grouped_2x4x4";
        return oct == 8 ? "cuda/f32_phase_grouped_1x8x8" : "cuda/f32_phase_grouped_1x8x4";
    }
    if (sw == 2)
        return oct == 8 ? "cuda/f32_phase_tiled_2x4x8" : "cuda/f32_phase_tiled_2x4x4";
    return oct == 8 ? "cuda/f32_phase_tiled_1x8x8" : "cuda/f32_phase_tiled_1x8x4";
}

/* Parses "tx,ty,tz,toc,cic[,ks[,fuse[,occ[,align]]]]" (ks, fuse, occ and
 * align 1 when left out); false if malformed. */
bool parse_tile(const char *text, int v[9])
{
    if (!text || !*text)
        return false;
    v[5] = 1;
    v[6] = 1;
    v[7] = 1;
    v[8] = 1;
    const int n = sscanf(text, "%d,%d,%d,%d,%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4],
                         &v[5], &v[6], &v[7], &v[8]);
    return n >= 5 && v[0] > 0 && v[1] > 0 && v[2] > 0 && v[3] > 0 && v[4] > 0 && v[5] > 0 &&
           v[6] >= 0 && v[7] >= 0 && v[8] >= 0;
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

/* The phase kernel's tiling in mode want_all (-1: either).  Rules, each
 * taken from measurements on the H200 (bench/NOTES.md):
 *   - grouped mode (one staging for every phase pair) whenever it fits;
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
bool plan_phase(const convt3d_shape *s, const device_limits &lim, int want_all, const char *tile,
                kernel_plan *k)
{
    const int sw = (int)s->s[2];
    const int qw = sw == 2 ? 4 : 8;
    const int oct = s->cog <= 4 ? 4 : 8;
    const long long toc_need = ceil_div(s->cog, oct);
    const int toc = toc_need < 8 ? (int)toc_need : 8;
    const long long runs = ceil_div(s->out[2], (long long)sw * qw);
    const int npp = (int)(s->s[0] * s->s[1]);

    bool found = false;
    tiling bt = {};
    phase_params bp;
    size_t bsmem = 0;
    auto take = [&](const tiling &t, long long smem_cap) {
        phase_params p;
        size_t smem;
        if (!fill_phase(s, t, lim, &p, &smem) || (long long)smem > smem_cap)
            return false;
        found = true;
        bt = t;
        bp = p;
        bsmem = smem;
        return true;
    };
    int forced[9];
    const bool is_forced = parse_tile(tile, forced);
    if (is_forced) {
        for (int all = 1; all >= 0 && !found; all--)
            if ((want_all < 0 && (all == 0 || npp > 1)) || all == want_all) {
                const int cic = all || forced[4] > s->cig ? (int)s->cig : forced[4];
                take({qw, oct, forced[3], forced[0], forced[1], forced[2], cic, all, forced[5],
                      forced[6] == 0, forced[8] == 0},
                     lim.smem_optin);
            }
        if (!found)
            snprintf(k->why, sizeof k->why, "CONVT3D_CUDA_TILE=%s does not fit, ignored", tile);
    }
    /* Rows (ty x tz, a power of two) for a block of tc x txv threads per
     * row: the most that keep it within `target` threads, else the fewest
     * that make whole warps; 0 if none within 256 threads does. */
    const int target = s->cig * s->cog < 16 ? 64 : 256;
    auto rows_for = [&](int tc, int txv, int ks) {
        int most = 0, fewest = 0;
        for (int r = 1; r <= 128; r *= 2) {
            const int nt = tc * txv * r * ks;
            if (nt % 32 != 0 || nt > 256)
                continue;
            fewest = fewest ? fewest : r;
            most = nt <= target ? r : most;
        }
        return most ? most : fewest;
    };
    static const int cics[] = {64, 32, 16, 8, 4, 2, 1};
    /* One attempt at channel sub-blocks tc and ks slices under a
     * shared-memory cap. */
    auto search = [&](int tc, long long cap, int ks) {
        int tx = (int)(runs < 16 ? runs : 16);
        int rows = rows_for(tc, tx, ks);
        if (rows == 0) { /* e.g. 13 runs: a power-of-two row width instead */
            while (tx & (tx - 1))
                tx &= tx - 1;
            rows = rows_for(tc, tx, ks);
        }
        for (int all = 1; all >= 0 && !found; all--) {
            if (want_all >= 0 && all != want_all)
                continue;
            if (all && npp == 1 && want_all < 0)
                continue; /* one phase pair: tiled mode is the same thing, with chunking */
            for (int r = rows; r >= 1 && !found; r /= 2) {
                if ((tc * tx * r) % 32 != 0)
                    break;
                /* the ty x tz split with the least waste (the phase tables come
                 * from a probe at one input channel) */
                int best_ty = 0;
                double best_w = 0.0;
                for (int ty = r; ty >= 1; ty /= 2) {
                    const int tz = r / ty;
                    phase_params probe;
                    size_t probe_smem;
                    if (ty > 16 || tz > 8 ||
                        !fill_phase(s, {qw, oct, tc, tx, ty, tz, 1, 0, 1, 0, 0}, lim, &probe,
                                    &probe_smem))
                        continue;
                    const double w = tile_waste(probe, all, ty, tz);
                    if (best_ty == 0 || w < best_w - 1e-9) {
                        best_ty = ty;
                        best_w = w;
                    }
                }
                if (best_ty == 0)
                    continue;
                const int ty = best_ty, tz = r / ty;
                if (all) {
                    take({qw, oct, tc, tx, ty, tz, (int)s->cig, 1, ks, 0, 0}, cap);
                } else {
                    for (int ci = -1; ci < 7 && !found; ci++) {
                        const int cic = ci < 0 ? (int)s->cig : cics[ci];
                        if (ci >= 0 && cic >= s->cig)
                            continue;
                        take({qw, oct, tc, tx, ty, tz, cic, 0, ks, 0, 0}, cap);
                    }
                }
            }
        }
    };
    /* Relax in order: fewer channel sub-blocks, then the shared-memory target. */
    const long long caps[2] = {kSmemTarget, lim.smem_optin};
    int cap_used = 0;
    for (int c = 0; c < 2 && !found; c++)
        for (int tc = toc; tc >= 1 && !found; tc = tc > 1 ? (tc + 1) / 2 : 0) {
            search(tc, caps[c], 1);
            cap_used = c;
        }
    if (!found)
        return false;
    /* Few output tiles (under one wave of two full blocks a multiprocessor):
     * the same block size from half the rows and two input-channel slices,
     * twice the blocks, while that still fits one wave. */
    for (int ks = 2; !is_forced && ks <= 4 && s->cig >= 4 * ks &&
                     bp.nblocks * 2 <= 2LL * lim.num_sms;
         ks *= 2) {
        const tiling pt = bt;
        const phase_params pp = bp;
        const size_t psmem = bsmem;
        found = false;
        search(pt.toc, caps[cap_used], ks);
        if (!found || bp.nblocks <= pp.nblocks) {
            bt = pt;
            bp = pp;
            bsmem = psmem;
            found = true;
            break;
        }
    }
    k->kind = KERNEL_PHASE;
    k->sw = sw;
    k->qw = bt.qw;
    k->oct = bt.oct;
    k->phase = bp;
    k->ocb = bp.ocb;
    k->nocb = bp.nocb;
    k->smem_bytes = bsmem;
    k->threads = bp.nthreads;
    k->blocks = bp.nblocks;
    k->name = phase_name(bt.all, sw, bt.qw, bt.oct);
    /* The <= 96-register build for small blocks only: on the H200 it made the
     * 64-thread grouped depthwise tile 9% faster (0.127 -> 0.116 ms) but the
     * 192- and 96-thread kernelbench tiles 6% and 13% slower (0.280 -> 0.298,
     * 0.284 -> 0.320 ms; more warps, but more shared-memory stalls).  The
     * driver reserves 1 KB of shared memory a block; 4 channels a thread only
     * (with 8, ptxas spills 1 KB at 96 registers); an 8th tile field of 0
     * keeps the 128-register build, for measuring. */
    k->occ3 = sw == 2 && bt.qw == 4 && bt.oct == 4 && phase_features(bp) == 0 &&
              bp.nthreads <= 64 && 3 * ((long long)bsmem + 1024) <= lim.smem_sm &&
              !(is_forced && forced[7] == 0);
    return true;
}

void fill_simple(const convt3d_shape *s, long long ocb, simple_params *sp)
{
    simple_params p;
    memset(&p, 0, sizeof p);
    p.n = s->n;
    p.cin = s->cin;
    p.cout = s->cout;
    p.groups = s->groups;
    p.cig = s->cig;
    p.cog = s->cog;
    for (int d = 0; d < 3; d++) {
        const long long g = gcd64(s->s[d], s->l[d]);
        p.in[d] = s->in[d];
        p.out[d] = s->out[d];
        p.k[d] = s->k[d];
        p.s[d] = s->s[d];
        p.p[d] = s->p[d];
        p.dm[d] = s->l[d] / g;
        p.kstep[d] = s->s[d] / g;
    }
    for (int d = 0; d < 5; d++) {
        p.xs[d] = s->x_stride[d];
        p.ys[d] = s->y_stride[d];
    }
    p.kvol = s->k_volume;
    p.ocb = ocb;
    p.nocb = ceil_div(s->cog, ocb);
    p.y_elems = s->y_elems;
    p.layout_ndhwc = s->layout == CONVT3D_LAYOUT_NDHWC;
    *sp = p;
}

/* The depthwise kernel's 32-bit path, where every index (and the thread
 * count) fits: p->fast32 and its divisors. */
void fill_depthwise32(const convt3d_shape *s, simple_params *p)
{
    const long long lim = 1LL << 31;
    const bool ndhwc = s->layout == CONVT3D_LAYOUT_NDHWC;
    const long long vecs = ndhwc ? ceil_div(s->cout, 4) : ceil_div(s->out[2], 4);
    const long long total = s->n * s->out[0] * s->out[1] * (ndhwc ? s->out[2] : s->cout) * vecs;
    bool ok = total < lim && s->n < lim && s->cout + 4 < lim && s->k_volume * 4 * 4 < lim &&
              (s->in[2] + 4) * s->x_stride[4] + 4 * s->x_stride[1] < lim;
    int wtaps = 0;
    for (int d = 0; d < 3; d++) {
        ok = ok && s->p[d] >= 0 && s->s[d] <= kMaxPhaseStride &&
             s->out[d] + s->p[d] + s->s[d] < lim && s->in[d] + s->k[d] * s->l[d] < lim;
        for (long long r = 0; ok && r < s->s[d]; r++) {
            const phase_entry e = phase_entry_of(s, d, r);
            p->ptab[d][r][0] = e.taps;
            p->ptab[d][r][1] = e.k0;
            p->ptab[d][r][2] = e.m0;
            if (d == 2 && e.taps > wtaps)
                wtaps = e.taps;
        }
    }
    ok = ok && wtaps <= 4;
    p->fast32 = ok;
    if (!ok)
        return;
    p->dw_mt = wtaps <= 1 ? 1 : wtaps <= 2 ? 2 : 4;
    const long long div[4] = {vecs, ndhwc ? s->out[2] : s->out[1], ndhwc ? s->out[1] : s->out[0],
                              ndhwc ? s->out[0] : s->cout};
    for (int i = 0; i < 4; i++)
        p->dv[i] = fdiv_make(div[i]);
    for (int d = 0; d < 3; d++)
        p->dvs[d] = fdiv_make(s->s[d]);
}

void plan_depthwise(const convt3d_shape *s, kernel_plan *k)
{
    k->kind = KERNEL_DEPTHWISE;
    k->ocb = 4;
    k->nocb = 1;
    k->threads = 256;
    const long long vecs = s->layout == CONVT3D_LAYOUT_NDHWC
                               ? s->n * s->out[0] * s->out[1] * s->out[2] * ceil_div(s->cout, 4)
                               : s->n * s->cout * s->out[0] * s->out[1] * ceil_div(s->out[2], 4);
    k->blocks = ceil_div(vecs, k->threads);
    k->name = "cuda/f32_depthwise_phase_4";
}

/* The depthwise tile kernel (gpu_depthwise_plan.cu); weights packed with
 * one channel a block (ocb 1): [c][kd][kh][kw]. */
bool plan_dwtile_kind(const convt3d_shape *s, kernel_plan *k, char *why, size_t why_size)
{
    if (!plan_dwtile(s, &k->dw, &k->smem_bytes, &k->threads, k->dw_grid, why, why_size))
        return false;
    k->kind = KERNEL_DWTILE;
    k->ocb = 1;
    k->nocb = 1;
    k->blocks = (long long)k->dw_grid[0] * k->dw_grid[1] * k->dw_grid[2];
    k->name = k->dw.fast ? "cuda/f32_dwtile_run8" : "cuda/f32_dwtile_run8_slotwise";
    return true;
}

/* Parses "wm,wn[,cs]" (CONVT3D_CUDA_IGEMM); false if malformed. */
bool parse_igemm(const char *text, int v[3])
{
    if (!text || !*text)
        return false;
    v[2] = 0;
    const int n = sscanf(text, "%d,%d,%d", &v[0], &v[1], &v[2]);
    return n >= 2 && v[0] > 0 && v[1] > 0 && v[2] >= 0;
}

/* Blocks of shape t a multiprocessor holds (registers: 128 a thread;
 * shared memory: the block's plus the 1 KB the driver reserves). */
long long igemm_blocks_per_sm(igemm_shape t, const device_limits &lim)
{
    const long long by_regs = 65536 / (32LL * t.wm * t.wn * 128);
    const long long by_smem = lim.smem_sm / ((long long)igemm_smem_bytes(t) + 1024);
    return by_regs < by_smem ? by_regs : by_smem;
}

/* The implicit-GEMM kernel (gpu_igemm.h): 64 x 32 warp tiles, as many
 * warps along the output channels as Cog fills (BN = 32, 64 or 128), eight
 * warps a block (four for BN = 32); clusters of cs blocks share a tile when
 * the tiles alone would not fill every multiprocessor's block slots, as
 * long as each block keeps several K steps.  CONVT3D_CUDA_IGEMM=wm,wn[,cs]
 * overrides (benchmarking). */
bool plan_igemm(const convt3d_shape *s, const device_limits &lim, const char *tile,
                kernel_plan *k)
{
    igemm_shape t = {s->cog > 64 ? 2 : 4, s->cog > 64 ? 4 : s->cog > 32 ? 2 : 1};
    int forced[3];
    int cs = 0;
    if (parse_igemm(tile, forced)) {
        const igemm_shape f = {forced[0], forced[1]};
        if (igemm_shape_compiled(f) && (forced[2] == 0 || forced[2] == 1 || forced[2] == 2 ||
                                        forced[2] == 4 || forced[2] == 8)) {
            t = f;
            cs = forced[2];
        } else {
            snprintf(k->why, sizeof k->why, "CONVT3D_CUDA_IGEMM=%s does not fit, ignored", tile);
        }
    }
    if ((long long)igemm_smem_bytes(t) > lim.smem_optin)
        return false;
    igemm_params p;
    size_t smem;
    if (!igemm_fill(s, t, 1, &p, &smem))
        return false;
    if (cs == 0) {
        /* the heaviest tile's K steps: its class comes first */
        const long long steps = (long long)igemm_phase_taps(p, p.order[0]) * p.kchunks;
        const long long slots = igemm_blocks_per_sm(t, lim) * lim.num_sms;
        cs = 1;
        while (cs < 8 && p.ntiles * cs < slots && steps / (2 * cs) >= 8)
            cs *= 2;
    }
    if (cs > 1 && !igemm_fill(s, t, cs, &p, &smem))
        return false;
    k->kind = KERNEL_IGEMM;
    k->igemm = p;
    k->ig = t;
    k->ocb = p.ocb;
    k->nocb = p.nocb;
    k->smem_bytes = smem;
    k->threads = 32 * t.wm * t.wn;
    k->blocks = p.ntiles * p.cs;
    k->name = "cuda/f32_igemm_8x8";
    return true;
}

/* Whether the implicit-GEMM kernel is the better choice: many channels a
 * group on both sides (where the phase kernel spends its time staging), and
 * at most 2 taps in every W phase (with more, the phase kernel's sliding
 * window along W feeds each staged input to more FMAs).  On the H200
 * (bench/NOTES.md, round 4): unet 1.55 -> 1.39 ms, k3s2p1op1_wide 0.198 ->
 * 0.136, k4s2p1 0.598 -> 0.572; but k3s1p1 (3 W taps) 0.130 -> 0.131 at
 * best, 0.161-0.179 with other tilings. */
bool igemm_preferred(const convt3d_shape *s)
{
    if (s->cig < 16 || s->cog < 32)
        return false;
    for (long long r = 0; r < s->s[2] && r < kIgemmMaxStride; r++)
        if (convt3d_phase_of(s, 2, r).taps > 2)
            return false;
    return true;
}

void plan_generic(const convt3d_shape *s, kernel_plan *k)
{
    k->kind = KERNEL_GENERIC;
    k->ocb = (int)((s->cog + 3) / 4 * 4);
    k->nocb = 1;
    k->threads = 256;
    k->blocks = ceil_div(s->y_elems, k->threads);
    k->name = "cuda/f32_direct_generic";
}

} // namespace

convt3d_status plan_kernel(const convt3d_shape *s, const device_limits &lim, const char *force,
                           const char *tile, kernel_plan *out)
{
    kernel_plan k;
    memset(&k, 0, sizeof k);
    char why[128] = "";
    const bool depthwise_ok = s->cig == 1 && s->cog == 1;
    const bool phase_ok = phase_kernel_applies(s, why, sizeof why);
    bool done = false;
    if (force && *force) {
        if (strstr(force, "dwtile")) {
            done = plan_dwtile_kind(s, &k, why, sizeof why);
        } else if (strstr(force, "generic")) {
            plan_generic(s, &k);
            done = true;
        } else if (strstr(force, "depthwise") && depthwise_ok) {
            plan_depthwise(s, &k);
            done = true;
        } else if (strstr(force, "igemm")) {
            done = igemm_applies(s, why, sizeof why) &&
                   plan_igemm(s, lim, getenv("CONVT3D_CUDA_IGEMM"), &k);
        } else if ((strstr(force, "grouped") || strstr(force, "tiled")) && phase_ok) {
            done = plan_phase(s, lim, strstr(force, "grouped") ? 1 : 0, tile, &k);
        }
        if (!done)
            snprintf(k.why, sizeof k.why, "CONVT3D_CUDA_KERNEL=%s does not apply%s%s", force,
                     why[0] ? ": " : "", why);
    }
    /* Depthwise NCDHW: the depthwise tile kernel where it applies (the
     * phase kernel wastes 3 of its 4 channel lanes there; NDHWC stays on it:
     * the tile kernel's staging reads x along W). */
    if (!done && depthwise_ok && s->layout == CONVT3D_LAYOUT_NCDHW) {
        char dw_why[128];
        done = plan_dwtile_kind(s, &k, dw_why, sizeof dw_why);
    }
    if (!done && igemm_preferred(s)) {
        char ig_why[128];
        done = igemm_applies(s, ig_why, sizeof ig_why) &&
               plan_igemm(s, lim, getenv("CONVT3D_CUDA_IGEMM"), &k);
    }
    if (!done) {
        /* The phase kernel first, for depthwise problems too: on the bench's
         * depthwise shape it measured 5% faster than the depthwise kernel's
         * 32-bit path in the same H200 run (0.141 vs 0.149 ms, bench/NOTES.md
         * v2b), 3x faster than its 64-bit path. */
        if (phase_ok && plan_phase(s, lim, -1, tile, &k)) {
        } else if (depthwise_ok) {
            plan_depthwise(s, &k);
        } else {
            plan_generic(s, &k);
            if (!k.why[0] && why[0])
                snprintf(k.why, sizeof k.why, "phase kernel: %s", why);
        }
    }
    fill_simple(s, k.ocb, &k.simple);
    if (k.kind == KERNEL_DEPTHWISE)
        fill_depthwise32(s, &k.simple);
    if (k.blocks < 1)
        return convt3d_fail(CONVT3D_ERR_INTERNAL, "CUDA plan for %s has no blocks", k.name);
    *out = k;
    return CONVT3D_SUCCESS;
}

/* Entries of dim d's table: a stride larger than the output reaches at most
 * out[d] phases (a fuzz finding had a W stride near 2^62). */
static bool table_by_o(const convt3d_shape *s, int d) { return s->s[d] > s->out[d]; }

long long phase_table_ints(const convt3d_shape *s)
{
    long long n = 0;
    for (int d = 0; d < 3; d++)
        n += 3 * (table_by_o(s, d) ? s->out[d] : s->s[d]);
    return n;
}

void phase_table_fill(const convt3d_shape *s, int *table, long long off[3], int by_o[3])
{
    long long at = 0;
    for (int d = 0; d < 3; d++) {
        off[d] = at;
        by_o[d] = table_by_o(s, d);
        const long long count = by_o[d] ? s->out[d] : s->s[d];
        for (long long i = 0; i < count; i++) {
            const long long r = by_o[d] ? (i + s->p[d]) % s->s[d] : i;
            const phase_entry e = phase_entry_of(s, d, r);
            table[at++] = e.taps;
            table[at++] = e.k0;
            table[at++] = e.m0;
        }
    }
}

void plan_describe(const kernel_plan &k, char *buf, size_t size)
{
    if (k.kind == KERNEL_PHASE) {
        const phase_params &p = k.phase;
        snprintf(buf, size,
                 "%s: threads toc%d x tx%d x ty%d x tz%d x ks%d = %d, cic %d (%d chunks), "
                 "ocb %d x %d, fuse_w %d, tiles %dx%dx%d, %lld blocks, %zu B shared, "
                 "%d blocks/SM build%s%s",
                 k.name, p.toc, p.tx, p.ty, p.tz, p.ks, p.nthreads, p.cic, p.nchunks, p.ocb, p.nocb,
                 p.fuse_w,
                 p.ntile[0], p.ntile[1], p.ntile[2], p.nblocks, k.smem_bytes, k.occ3 ? 3 : 2,
                 k.why[0] ? "; " : "",
                 k.why);
    } else if (k.kind == KERNEL_IGEMM) {
        const igemm_params &p = k.igemm;
        snprintf(buf, size,
                 "%s: warps %d x %d (tile %d x %d), clusters of %d, %lld tiles in %d tap "
                 "classes, %d K steps a tap, %lld blocks, %zu B shared%s%s",
                 k.name, k.ig.wm, k.ig.wn, 64 * k.ig.wm, 32 * k.ig.wn, p.cs, p.ntiles, p.nclass,
                 p.kchunks, k.blocks, k.smem_bytes, k.why[0] ? "; " : "", k.why);
    } else {
        snprintf(buf, size, "%s: %d threads x %lld blocks%s%s", k.name, k.threads, k.blocks,
                 k.why[0] ? "; " : "", k.why);
    }
}

} // namespace ct3d
