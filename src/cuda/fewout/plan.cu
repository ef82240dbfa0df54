/* Planning of the few-output-channel kernel (params.h, plan.h): where it
 * applies, its reduction slices, weight chunk and phase tables.  Host code
 * only (no CUDA API), done once at plan creation. */
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "../igemm/plan.h"
#include "../simple/plan.h"

namespace ct3d {

/* the implicit-GEMM engine's FMA entry (igemm/launch.cu): this kernel takes
 * what that entry would take with few output channels */
extern const cuda_impl cuda_f32_igemm_8x8;

namespace {

constexpr long long kGridY = 65535;

/* Whether every x offset the body forms fits an int: a thread's offset of
 * tap 0 (inputs below 0 or past the end included, for taps that do not
 * reach them) and those minus a tap's shift; in H, a group's window runs
 * from kFewMaxTaps - 1 steps of dm before its first output's row, and the
 * last group's reaches up to 2 kFewR steps past the phase's last output
 * (params.h).  Int offsets keep a thread's
 * window addresses in few registers. */
bool x_offsets_fit_int(const convt3d_shape *s)
{
    const long long lim = 1LL << 31;
    long long most = (s->n - 1) * s->x_stride[0] + (s->cin - 1) * s->x_stride[1];
    for (int d = 0; d < 3; d++) {
        long long reach = 0;
        for (long long r = 0; r < s->s[d]; r++) {
            const convt3d_phase c = convt3d_phase_of(s, d, r);
            if (c.qcount == 0)
                continue;
            const long long back = d == 1 ? kFewMaxTaps - 1 : (c.taps > 0 ? c.taps - 1 : 0),
                            ahead = d == 1 ? 2LL * kFewR : 0;
            const long long lo = c.qlo - c.m0 - back * c.dm,
                            hi = c.qlo + c.qcount - 1 - c.m0 + ahead * c.dm;
            const long long m = (lo < 0 ? -lo : lo) > (hi < 0 ? -hi : hi) ? (lo < 0 ? -lo : lo)
                                                                           : (hi < 0 ? -hi : hi);
            reach = m > reach ? m : reach;
        }
        if (reach >= lim || (s->x_stride[2 + d] > 0 && reach * 2 >= lim / s->x_stride[2 + d]))
            return false;
        most += reach * s->x_stride[2 + d] * 2; /* the offset and a tap's shift */
    }
    return most < lim;
}

/* The problems the kernel takes before any tiling: channels, int sizes,
 * strides and taps within its tables, groups within the grid. */
bool fewout_shape_ok(const convt3d_shape *s, char *why, size_t why_size)
{
    if (s->cog > kFewMaxCog) {
        snprintf(why, why_size, "C_out/G=%lld above %d", (long long)s->cog, kFewMaxCog);
        return false;
    }
    if (!int_indexable(s, why, why_size))
        return false;
    if (s->groups > kGridY) {
        snprintf(why, why_size, "%lld groups, above the grid's %lld", (long long)s->groups,
                 kGridY);
        return false;
    }
    for (int d = 0; d < 3; d++)
        if (s->s[d] > kMaxPhaseStride) {
            snprintf(why, why_size, "stride[%d]=%lld above %d", d, (long long)s->s[d],
                     kMaxPhaseStride);
            return false;
        }
    if (s->s[0] * s->s[1] * s->s[2] > kFewMaxPhases) {
        snprintf(why, why_size, "more than %d stride phases", kFewMaxPhases);
        return false;
    }
    if (!x_offsets_fit_int(s)) {
        snprintf(why, why_size, "x offsets (%lld elements) too large for int",
                 (long long)s->x_elems);
        return false;
    }
    /* positions of a phase, and a tile past them, are int (position groups
     * are checked where they are counted) */
    if (s->n * s->out_spatial >= (1LL << 31) - kFewThreads * kFewR) {
        snprintf(why, why_size, "%lld output positions, too many for int indexing",
                 (long long)(s->n * s->out_spatial));
        return false;
    }
    return true;
}

/* Dim d's phase table; false if a phase has more taps than a mask holds. */
bool fill_dim(const convt3d_shape *s, int d, few_params *p, int *tmax)
{
    const convt3d_phase c0 = convt3d_phase_of(s, d, 0);
    p->dm[d] = (int)c0.dm;
    p->kstep[d] = (int)c0.tap_step;
    p->xstep[d] = (int)(c0.dm * s->x_stride[2 + d]);
    *tmax = 0;
    for (long long r = 0; r < s->s[d]; r++) {
        few_dim_phase &f = p->ph[d][r];
        f.e = phase_entry_of(s, d, r);
        if (f.e.taps > kFewMaxTaps)
            return false;
        f.dv_q = fdiv_make(f.e.qcount > 0 ? f.e.qcount : 1);
        *tmax = f.e.taps > *tmax ? f.e.taps : *tmax;
        if (d == 1) {
            const long long dm = c0.dm,
                            groups = dm * ceil_div(f.e.qcount, kFewR * dm);
            if (groups >= (1LL << 31))
                return false;
            p->gh_count[r] = (int)groups;
            p->dv_gh[r] = fdiv_make(groups > 0 ? (unsigned)groups : 1u);
        }
    }
    return true;
}

/* Staged weight channels a slice: a chunk of `bytes` holds bytes / (4 ocb)
 * (input channel, tap) pairs, ocb floats each; `taps` of them a channel. */
long long chunk_channels_a_slice(int taps, int ocb, int ks, int bytes)
{
    return bytes / (4 * ocb) / (taps > 0 ? taps : 1) / ks;
}

/* Blocks of a group: each phase's position groups in tiles of `slots`. */
long long phase_tiles(const long long *count, int nphases, int slots)
{
    long long tiles = 0;
    for (int ph = 0; ph < nphases; ph++)
        tiles += ceil_div(count[ph], slots);
    return tiles;
}

/* Small problems (a decoder's last layer on a small volume, C_in/G 64-256
 * to 1-3 channels with 27-125 taps: 4-30 blocks at 8 slices) leave most
 * multiprocessors idle while each thread runs a long serial sum.  Two ways
 * multiply the blocks, both halving a thread's sum:
 * - clusters: cs blocks share a tile, each summing cig / cs of the input
 *   channels (params.h).  The tile keeps its positions, so an x load and a
 *   staged weight feed as many outputs as before, and each block stages
 *   only its channels' weights.  Taken first, up to kFewMaxCluster, while a
 *   slice keeps 2 input channels or more.  (Round 14-15: with slices alone,
 *   random_358 ran 64 slices over tiles of 16 outputs, 96 KB of weights
 *   staged for each, L2 58% busy with x re-read by tile after tile.)
 * - more slices a block: the tile shrinks (ps = 256 / ks position slots);
 *   doubled while a slice keeps 2 input channels or more of its rank and one
 *   channel a slice of the phase's taps fits a weight chunk of
 *   kFewSmemSmallGrid bytes (twice the usual: with fewer blocks than the GPU
 *   holds, their shared memory limits nothing; 75-125 taps would stop at
 *   16-32 slices in 48 KB).
 * Both stop once the grid reaches kFewFullGrid blocks: 4 on each of 132
 * multiprocessors (the H200's), a constant rather than the device's count,
 * so that a problem sums in the same order, with the same bits, on every
 * GPU.  cs_max bounds the cluster (CONVT3D_CUDA_FEWOUT; 1: slices only). */
constexpr long long kFewFullGrid = 4 * 132;

struct few_split {
    int ks, cs;
};

few_split split_for_small_grids(const convt3d_shape *s, int tmax, int ocb, int ks, int cs_max,
                                const long long *count, int nphases)
{
    few_split r = {ks, 1};
    const long long tiles = phase_tiles(count, nphases, kFewThreads / ks) * s->groups;
    while (r.cs * 2 <= cs_max && (long long)r.ks * 2 * r.cs * 2 <= s->cig &&
           tiles * r.cs < kFewFullGrid)
        r.cs *= 2;
    while (r.ks * 2 <= kFewThreads && (long long)r.ks * 4 * r.cs <= s->cig &&
           chunk_channels_a_slice(tmax, ocb, r.ks * 2, kFewSmemSmallGrid) >= 1 &&
           phase_tiles(count, nphases, kFewThreads / r.ks) * s->groups * r.cs < kFewFullGrid)
        r.ks *= 2;
    return r;
}

} // namespace

bool plan_fewout(const convt3d_shape *s, int cs_max, few_params *out, size_t *smem,
                 unsigned grid[2], char *why, size_t why_size)
{
    if (!fewout_shape_ok(s, why, why_size))
        return false;
    few_params p;
    memset(&p, 0, sizeof p);
    p.n = (int)s->n;
    p.cig = (int)s->cig;
    p.cog = (int)s->cog;
    p.ocb = s->cog > 4 ? 8 : 4;
    for (int d = 0; d < 5; d++) {
        p.xs[d] = s->x_stride[d];
        p.ys[d] = s->y_stride[d];
    }
    int tmax = 1, th_most = 1;
    for (int d = 0; d < 3; d++) {
        p.in[d] = (int)s->in[d];
        p.k[d] = (int)s->k[d];
        p.s[d] = (int)s->s[d];
        p.p[d] = (int)s->p[d];
        int t;
        if (!fill_dim(s, d, &p, &t)) {
            snprintf(why, why_size, "more than %d taps in a phase of dim %d (or 2^31 position "
                     "groups)", kFewMaxTaps, d);
            return false;
        }
        tmax *= t;
        if (d == 1)
            th_most = t;
    }
    p.tmax = tmax;
    /* the H window of the body: the smallest compiled size that holds
     * every H phase's taps (fill_dim keeps those <= kFewMaxTaps, the
     * largest size) */
    p.th = kFewThSizes[kFewThCount - 1];
    for (int i = kFewThCount - 1; i >= 0; i--)
        if (kFewThSizes[i] >= th_most)
            p.th = kFewThSizes[i];

    /* Slices: NCDHW, 32 or more position slots so that a warp's lanes lie
     * along W (up to 8 slices); NDHWC, 8 to 32 slices, a warp's lanes along
     * the channels (32 bytes of a position or more).  At least 4 input
     * channels a slice where the channels allow: a thread's setup (its
     * positions' offsets and masks) and the sum of the slices cost about
     * what 2 channels' taps do. */
    p.chan_fast = s->layout == CONVT3D_LAYOUT_NDHWC;
    p.ks = pow2_at_least(ceil_div(s->cig, 4), p.chan_fast ? 32 : 8);
    if (p.chan_fast && p.ks < 8)
        p.ks = 8;
    /* The weight chunk: as many slices' channels as fit in shared memory
     * (fewer slices where not even one channel a slice does). */
    while (chunk_channels_a_slice(tmax, p.ocb, p.ks, kFewSmemMax) < 1 && p.ks > 1)
        p.ks /= 2;
    if (chunk_channels_a_slice(tmax, p.ocb, p.ks, kFewSmemMax) < 1) {
        snprintf(why, why_size, "a phase's %d taps x %d slices of weights exceed %d bytes of "
                 "shared memory", tmax, p.ks, kFewSmemMax);
        return false;
    }
    p.nphases = (int)(s->s[0] * s->s[1] * s->s[2]);
    /* each phase's position groups (params.h), int in the body */
    long long count[kFewMaxPhases];
    for (int ph = 0; ph < p.nphases; ph++) {
        const int rw = ph % p.s[2], rh = ph / p.s[2] % p.s[1], rd = ph / (p.s[2] * p.s[1]);
        count[ph] = s->n * (long long)p.ph[0][rd].e.qcount * p.gh_count[rh] *
                    p.ph[2][rw].e.qcount;
        if (count[ph] >= (1LL << 31) - kFewThreads) {
            snprintf(why, why_size, "%lld position groups in a phase, too many for int "
                     "indexing", count[ph]);
            return false;
        }
    }
    const int cs_most = cs_max >= 1 && cs_max <= kFewMaxCluster ? cs_max : kFewMaxCluster;
    const few_split split = split_for_small_grids(s, tmax, p.ocb, p.ks, cs_most, count, p.nphases);
    p.ks = split.ks;
    p.cs = split.cs;
    p.ps = kFewThreads / p.ks;
    p.lks = log2_of(p.ks);
    p.lps = log2_of(p.ps);
    p.lcs = log2_of(p.cs);
    /* the usual 48 KB chunk, unless the small-grid slices need more; a rank
     * sums ceil(cig / cs) input channels at most */
    const int budget = chunk_channels_a_slice(tmax, p.ocb, p.ks, kFewSmemMax) >= 1
                           ? kFewSmemMax
                           : kFewSmemSmallGrid;
    const long long per_slice = chunk_channels_a_slice(tmax, p.ocb, p.ks, budget),
                    need = ceil_div(ceil_div(s->cig, p.cs), p.ks);
    p.ck = (int)(p.ks * (per_slice < need ? per_slice : need));

    /* The grid: each phase's tiles, phases in table order, cs blocks a tile. */
    const long long tiles = phase_tiles(count, p.nphases, p.ps);
    if (tiles * p.cs >= (1LL << 31)) {
        snprintf(why, why_size, "more than 2^31 tiles");
        return false;
    }
    for (int ph = 0, t = 0; ph < p.nphases; ph++) {
        p.tile0[ph] = t;
        t += (int)ceil_div(count[ph], p.ps);
    }
    for (int ph = p.nphases; ph <= kFewMaxPhases; ph++)
        p.tile0[ph] = (int)tiles; /* the block's phase search stops at the end */
    const size_t wbytes = (size_t)tmax * p.ck * p.ocb * sizeof(float),
                 sbytes = (size_t)kFewThreads * kFewR * s->cog * sizeof(float);
    *out = p;
    *smem = wbytes > sbytes ? wbytes : sbytes;
    grid[0] = (unsigned)(tiles * p.cs);
    grid[1] = (unsigned)s->groups;
    return true;
}

/* ---- the registry entry's host side ------------------------------------- */

/* Whether the device lets a block have the plan's shared memory (above
 * 48 KB only for small grids, kFewSmemSmallGrid). */
bool smem_fits(size_t smem, const device_limits &lim, char *why, size_t why_size)
{
    if (smem <= (size_t)kFewSmemMax || smem <= (size_t)lim.smem_optin)
        return true;
    snprintf(why, why_size, "%zu B of shared memory a block, above the device's %d", smem,
             lim.smem_optin);
    return false;
}

bool fewout_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, char *why, size_t why_size)
{
    (void)e;
    few_params p;
    size_t smem;
    unsigned grid[2];
    return plan_fewout(s, 0, &p, &smem, grid, why, why_size) &&
           smem_fits(smem, lim, why, why_size);
}

/* Where the walk takes this kernel (it comes before the implicit-GEMM and
 * phase kernels).
 * - C_in/G >= 16 with a long phase sum, K = C_in/G x taps >= kFewOutLongK,
 *   any C_out/G <= 8, any number of positions or groups: the phase kernel
 *   sums an output's whole K in one thread.  Round 16 (clusters of blocks
 *   on small grids; `--all-kernels` on the problems of C_in/G >= 16 of
 *   `--random 400`, seeds 1 and 2): for C_out/G <= 4 this kernel was faster
 *   than the best phase variant on 25 of 27 (1.05-9x; up to 1.3 million
 *   positions, 1-4 groups), slower on one by 1.3x; for C_out/G 5-8 faster
 *   than the kernel the walk took, igemm or phase, on 21 of 25 (1.1-7.7x),
 *   slower on 4 by 1.1-1.4x.  With K < 256 and more than 250,000 positions
 *   or groups, the phase kernel was faster on 9 of 11 (1.1-2.8x: short sums
 *   leave this kernel's slices little to split), and for C_out/G 5-8 the
 *   phase kernel's 4-8 channels a thread won more often than not.
 * For C_out/G <= 4, also:
 * - What the implicit-GEMM FMA engine would take: on the H200 (bench/NOTES.md
 *   round 12, `--all-kernels`) this kernel was faster on 21 of the 23
 *   problems of C_out/G <= 4 that engine took (geomean 2.2x: the engine's
 *   output-channel block is then 7/8 empty) -- but for C_in/G <= 2, where
 *   the few-input kernel won all 7 such problems of round 21 (1.3-4.5x:
 *   fewin_preferred_over_engine).
 * - One group with C_in/G >= 16 on up to kFewOutPhasePositions positions
 *   (round 12: faster than the phase kernel on 8 of 8).
 * Few input channels a group stay with the phase kernel (it won most of
 * those; depthwise problems have their own kernels before). */
constexpr long long kFewOutPhasePositions = 250000;
constexpr long long kFewOutLongK = 256;
/* Small problems: at most this many output positions (N x output volume),
 * C_in/G >= kFewOutSmallCig and more than one product an output on average
 * (C_in/G x k_volume > the stride product; below that the few-input kernel
 * writes y faster).  The FMA kernels after this one give each output's
 * whole sum to one thread, so a small problem fills few multiprocessors;
 * this kernel splits the sum over a block's threads and a cluster's
 * blocks.  H100, bench/NOTES.md round 34, every kernel forced on the 800
 * problems of `--random 400`, seeds 1 and 2: of the 10 such problems the
 * walk gave to another kernel, 9 ran faster here, 1.7-4.4x, and one tied
 * (0.97x; geomean 2.1x); with C_in/G of 3-4 one of 4 was slower (0.65x).
 * f32 data only: the half builds were not measured there. */
constexpr long long kFewOutSmallPositions = 10000;
constexpr long long kFewOutSmallCig = 5;

/* The most taps a stride phase has (each dim's most, multiplied). */
static long long most_taps_a_phase(const convt3d_shape *s)
{
    long long taps = 1;
    for (int d = 0; d < 3; d++) {
        long long most = 0;
        for (long long r = 0; r < s->s[d] && r < kMaxPhaseStride; r++) {
            const convt3d_phase c = convt3d_phase_of(s, d, r);
            most = c.taps > most ? c.taps : most;
        }
        taps *= most;
    }
    return taps;
}

bool fewout_preferred(const convt3d_shape *s, const device_limits &lim, const cuda_overrides &ov)
{
    if (s->cig >= 16 && s->cig * most_taps_a_phase(s) >= kFewOutLongK)
        return true;
    if (s->x_type == CONVT3D_F32 && s->cig >= kFewOutSmallCig &&
        !at_most_one_product_an_output(s) && s->n * s->out_spatial <= kFewOutSmallPositions)
        return true;
    if (s->cog > 4 || fewin_preferred_over_engine(s, lim, ov))
        return false;
    char why[160];
    if (cuda_entry_applicable(cuda_f32_igemm_8x8, s, lim, why, sizeof why) &&
        !igemm_entry_passed_over(cuda_f32_igemm_8x8, s, lim, ov, why, sizeof why))
        return true;
    return s->cig >= 16 && s->groups == 1 && s->n * s->out_spatial <= kFewOutPhasePositions;
}

bool fewout_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, const cuda_overrides &ov, char *why,
                              size_t why_size)
{
    (void)e;
    if (fewout_preferred(s, lim, ov))
        return false;
    snprintf(why, why_size, "automatically for C_in/G >= 16 with C_in/G x taps >= %lld, or "
             "with C_out/G <= 4 where the implicit-GEMM engine would take the problem or for "
             "one group with C_in/G >= 16 on <= %lld positions, or C_in/G >= %lld with more "
             "than one product an output on <= %lld positions only", kFewOutLongK,
             kFewOutPhasePositions, kFewOutSmallCig, kFewOutSmallPositions);
    return true;
}

bool fewout_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                       const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                       size_t why_size)
{
    (void)e;
    (void)mode;
    fewout_plan *fp = family_params<fewout_plan>(*k);
    memset(fp, 0, sizeof *fp);
    int cs_max = 0;
    if (ov.fewout && !parse_fewout(ov.fewout, &cs_max))
        snprintf(k->note, sizeof k->note, "CONVT3D_CUDA_FEWOUT=%s is not 1, 2, 4 or 8, ignored",
                 ov.fewout);
    if (!plan_fewout(s, cs_max, &fp->p, &k->smem_bytes, fp->grid, why, why_size) ||
        !smem_fits(k->smem_bytes, lim, why, why_size))
        return false;
    /* a tap's C_out/G <= 8 weights are one or two float4s: one block */
    k->ocb = fp->p.ocb;
    k->nocb = 1;
    k->threads = kFewThreads;
    k->blocks = (long long)fp->grid[0] * fp->grid[1];
    return true;
}

void fewout_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    const few_params &p = family_params<fewout_plan>(k)->p;
    snprintf(buf, size, "%s: %s, %d slices x %d slots x %d positions along H (a window of "
             "%d H taps), clusters of %d, chunks of %d input channels, %d phases, %lld blocks, "
             "%zu B shared",
             k.impl->name, p.chan_fast ? "slices fastest (NDHWC)" : "positions fastest (NCDHW)",
             p.ks, p.ps, kFewR, p.th, p.cs, p.ck, p.nphases, k.blocks, k.smem_bytes);
}

} // namespace ct3d
