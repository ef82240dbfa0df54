/* Host-side planning of the implicit-GEMM kernel (plan.h): where it
 * applies, its parameters, and the heaviest-first block order. */
#include <stdio.h>
#include <string.h>

#include "../common/env.h"
#include "../phase/plan.h"
#include "plan.h"

namespace ct3d {

namespace {

struct phase_ref {
    int code;    /* igemm_phase_code */
    int taps;    /* product of the per-dim tap counts */
    long long m; /* output positions of the phase */
};

/* The phases that have outputs, heaviest (most taps) first; a stable
 * insertion sort, so equal phases keep their (rd, rh, rw) order. */
int list_phases(const igemm_params &p, long long nimg, phase_ref *out)
{
    int n = 0;
    for (int rw = 0; rw < p.s[2]; rw++)
        for (int rh = 0; rh < p.s[1]; rh++)
            for (int rd = 0; rd < p.s[0]; rd++) {
                const int r[3] = {rd, rh, rw};
                phase_ref f;
                f.code = igemm_phase_code(r);
                f.taps = igemm_phase_taps(p, f.code);
                f.m = nimg;
                for (int d = 0; d < 3; d++)
                    f.m *= p.ph[d][r[d]].qcount;
                if (f.m == 0)
                    continue; /* stride larger than the output: no such outputs */
                int j = n++;
                for (; j > 0 && out[j - 1].taps < f.taps; j--)
                    out[j] = out[j - 1];
                out[j] = f;
            }
    return n;
}

/* The shape's fields, phase tables and K steps a tap: what igemm_fill and
 * the cost rule (heaviest_k_steps) read. */
void fill_phase_fields(const convt3d_shape *s, igemm_params &p)
{
    fill_shape_fields(s, p);
    for (int d = 0; d < 3; d++)
        for (int r = 0; r < p.s[d]; r++)
            p.ph[d][r] = phase_entry_of(s, d, r);
    p.kchunks = (int)ceil_div(s->cig, kIgemmBK);
}

/* K steps of the heaviest tile: the most taps of a phase with outputs times
 * the K steps a tap.  The phases are the product of the per-dim ones, so
 * that is the product of each dim's most taps among its phases with
 * outputs: the taps of order[0] (the heaviest class's first phase) in
 * filled parameters, but the phase tables are enough. */
long long heaviest_k_steps(const igemm_params &p)
{
    long long taps = 1;
    for (int d = 0; d < 3; d++) {
        int most = 0;
        for (int r = 0; r < p.s[d]; r++)
            if (p.ph[d][r].qcount > 0 && p.ph[d][r].taps > most)
                most = p.ph[d][r].taps;
        taps *= most;
    }
    return taps * p.kchunks;
}

} // namespace

bool igemm_applies(const convt3d_shape *s, char *why, size_t why_size)
{
    /* Both layouts, every inner product: the body reads x and writes y
     * through the shape's strides only (NDHWC: the A tile element by element,
     * or by 16-byte chunks along the channels for the tensor cores, kc), and
     * takes any dilation through the phase tables (taps dm input rows apart). */
    for (int d = 0; d < 3; d++) {
        if (s->s[d] > kIgemmMaxStride) {
            snprintf(why, why_size, "stride[%d]=%lld > %d", d, (long long)s->s[d],
                     kIgemmMaxStride);
            return false;
        }
        if (s->in[d] >= CONVT3D_INT_INDEX_LIMIT || s->out[d] >= CONVT3D_INT_INDEX_LIMIT || s->k[d] >= CONVT3D_INT_INDEX_LIMIT ||
            s->p[d] >= CONVT3D_INT_INDEX_LIMIT || s->l[d] >= CONVT3D_INT_INDEX_LIMIT) {
            snprintf(why, why_size, "a size in dim %d is too large for int indexing", d);
            return false;
        }
    }
    if (s->cin >= CONVT3D_INT_INDEX_LIMIT || s->cout >= CONVT3D_INT_INDEX_LIMIT || s->k_volume >= CONVT3D_INT_INDEX_LIMIT ||
        s->k_volume * ceil_div(s->cig, kIgemmBK) >= (1LL << 31)) {
        snprintf(why, why_size, "channel or kernel counts too large for int indexing");
        return false;
    }
    return true;
}

bool igemm_kc_applies(const convt3d_shape *s, int math)
{
    const int chunk = math == IGEMM_HALF ? 8 : 4; /* igemm_cfg::BE */
    return math != IGEMM_FFMA && s->layout == CONVT3D_LAYOUT_NDHWC && s->cig % chunk == 0;
}

bool igemm_runs_apply(const convt3d_shape *s, const igemm_params &p, int math)
{
    if (math == IGEMM_FFMA || s->layout != CONVT3D_LAYOUT_NCDHW)
        return false;
    const int rl = math == IGEMM_HALF ? 8 : 4; /* igemm_cfg::RL: 16 bytes */
    for (int r = 0; r < p.s[2]; r++)
        if (p.ph[2][r].qcount % rl != 0)
            return false;
    return true;
}

size_t igemm_smem_bytes(igemm_shape t, int math, bool kc)
{
    const long long pad = math == IGEMM_FFMA ? 0 : 8;   /* igemm_cfg::PAD */
    const long long es = math == IGEMM_HALF ? 2 : 4;    /* igemm_cfg::ES */
    const long long bm = 64LL * t.wm, bn = 32LL * t.wn;
    long long pipe = 3LL * kIgemmBK * (bm + bn + 2 * pad) * es;
    if (kc) { /* or K-contiguous A (igemm_cfg::ASZ, AKP): the plan fits both */
        const long long akp = kIgemmBK + 16 / es;
        const long long kpipe = 3LL * (bm * akp + kIgemmBK * (bn + pad)) * es;
        pipe = kpipe > pipe ? kpipe : pipe;
    }
    const long long out = bn * (bm + 4) * (long long)sizeof(float);
    return (size_t)(pipe > out ? pipe : out);
}

bool igemm_tc_shape_compiled(igemm_shape t)
{
    return (t.wm == 2 && t.wn == 4) || (t.wm == 4 && t.wn == 2) || (t.wm == 4 && t.wn == 1);
}

bool igemm_fill(const convt3d_shape *s, igemm_shape t, int math, bool kc, int cs,
                igemm_params *pp, size_t *smem)
{
    if (cs < 1 || cs > kIgemmMaxCluster)
        return false;
    const int bm = 64 * t.wm, bn = 32 * t.wn;
    igemm_params p;
    memset(&p, 0, sizeof p);
    fill_phase_fields(s, p);
    p.ocb = bn;
    p.nocb = (int)ceil_div(s->cog, bn);
    p.cs = cs;
    p.nimg = s->n;

    phase_ref ph[kIgemmMaxStride * kIgemmMaxStride * kIgemmMaxStride];
    const int nph = list_phases(p, s->n, ph);
    long long tiles = 0;
    for (int i = 0; i < nph;) {
        if (p.nclass == kIgemmMaxClasses)
            return false;
        const int c = p.nclass++;
        p.cls_phase[c] = i;
        p.cls_tile[c] = tiles;
        long long mt = 0;
        int j = i;
        for (; j < nph && ph[j].taps == ph[i].taps; j++) {
            p.order[j] = (unsigned short)ph[j].code;
            const long long need = ceil_div(ph[j].m, bm);
            mt = need > mt ? need : mt;
        }
        tiles += mt * (j - i) * p.groups * p.nocb;
        i = j;
    }
    p.cls_phase[p.nclass] = nph;
    p.cls_tile[p.nclass] = tiles;
    p.ntiles = tiles;
    if (tiles < 1 || tiles > (1LL << 40))
        return false;
    *pp = p;
    *smem = igemm_smem_bytes(t, math, kc);
    return true;
}

namespace {

/* Blocks of shape t a multiprocessor holds (registers: 128 a thread;
 * shared memory: the block's plus the 1 KB the driver reserves). */
long long igemm_blocks_per_sm(igemm_shape t, int math, bool kc, const device_limits &lim)
{
    const long long by_regs = 65536 / (32LL * t.wm * t.wn * 128);
    const long long by_smem = lim.smem_sm / ((long long)igemm_smem_bytes(t, math, kc) + 1024);
    return by_regs < by_smem ? by_regs : by_smem;
}

/* Blocks of shape t the whole GPU holds at once. */
long long igemm_block_slots(igemm_shape t, int math, bool kc, const device_limits &lim)
{
    return igemm_blocks_per_sm(t, math, kc, lim) * lim.num_sms;
}

/* The cluster size: the smallest power of two up to 8 whose clusters fill
 * every multiprocessor's block slots, as long as each block keeps at least
 * 4 of the heaviest tile's K steps.  (FMA blocks kept 8 until round 10:
 * sw3_c48_k3x3x5, 24 steps, 0.043 ms at 2 blocks a tile, 0.031 at 4; the
 * 7x7x5 k2s2 corpus problem, 20 steps, 0.045 -> 0.039, H200.) */
int igemm_cluster_size(const igemm_params &p, igemm_shape t, int math, bool kc,
                       const device_limits &lim)
{
    const long long steps = heaviest_k_steps(p);
    const long long slots = igemm_block_slots(t, math, kc, lim);
    const long long least = 4;
    int cs = 1;
    while (cs < 8 && p.ntiles * cs < slots && steps / (2 * cs) >= least)
        cs *= 2;
    return cs;
}

/* The cluster size of the one-warp-row tile (1 x 4 warps, 64 positions x
 * 128 channels) that igemm_small_grid_tile takes where even an eight-block
 * split of the widest tile leaves block slots idle: the largest power of
 * two up to 16 (9-16: Hopper's non-portable cluster sizes, igemm_prepare)
 * that leaves each block at least 4 of the heaviest tile's K steps.  No
 * bound by the block slots is needed: the row tiles are at most twice the
 * widest tile's (the same 128 channels, half the positions), those are
 * fewer than an eighth of its block slots, and on Hopper a multiprocessor
 * holds twice as many row-tile blocks (4 against 2), so clusters of 16
 * stay under two rounds of slots.  Round 40's sweep of every tile against clusters of 2-16 (H100,
 * bench/NOTES.md): on the tiny-volume problems and unet_3d deconv7/8 that
 * take this branch, both layouts, 1 x 4 in clusters of 16 was the fastest
 * plan or within 4% of it wherever the K steps allow 16 (tiny_c512_4_k3s1
 * 0.287 -> 0.165 ms against 2 x 1 warps in clusters of 8), and
 * tiny_c384to256_6_k2s2 (24 K steps) ran fastest at 4 (6 steps a block:
 * 0.036 ms; 8: 0.038, 16: 0.047). */
int igemm_row_cluster_size(const igemm_params &p)
{
    const long long steps = heaviest_k_steps(p);
    const long long least = 4;
    int cs = 1;
    while (2 * cs <= kIgemmMaxCluster && steps / (2 * cs) >= least)
        cs *= 2;
    return cs;
}

} // namespace

/* Whether a plan's tiles, split eight ways, still leave block slots idle:
 * then the FMA engine takes narrower tiles (plan_igemm) and the walk
 * prefers it to the phase kernel (igemm_preferred). */
static bool igemm_grid_unfilled(const igemm_params &p, igemm_shape t, int math, bool kc,
                                const device_limits &lim)
{
    return p.ntiles * 8 < igemm_block_slots(t, math, kc, lim);
}

/* The FMA engine's tile where the planner's widest leaves the GPU part
 * idle (round 10 sweep, H200, bench/NOTES.md): nothing if t fills it.
 * - Even an eight-block split of t leaves block slots idle: tiles of
 *   one warp row (64 x 128, four warps a block) when C_out/G > 64 and the
 *   heaviest tile's K steps allow clusters of at least 4
 *   (igemm_row_cluster_size: up to 16), else 128 x 32 (2,1), each block a
 *   quarter of the warps.  Round 10 (H200) took the row tile only where
 *   the largest phase had at most 64 positions (tiny_c512to256_4_k4s2:
 *   0.114 -> 0.082 ms); round 40's sweep (H100) found it, in clusters of
 *   up to 16, the fastest or within 4% on the larger phases of this branch
 *   too (tiny_c256_8_k3s1, tiny_c512_4_k3s1, unet_3d deconv7/8, both
 *   layouts: 1.14-2.24x the 2 x 1 plans).  Round 41 (H100, 72 problems of
 *   fresh random seeds that the row tile changed, old vs new library):
 *   with clusters of 4-16 38 of 48 faster by more than 3%, 5 slower
 *   (0.93-0.96x), geomean 1.21x; with clusters of 1-2 (fewer than 16 K
 *   steps: no split to make up for half the blocks) 5 of 24 faster, 12
 *   slower (0.84x at worst), geomean 0.97x -- hence the bound of 4, chosen
 *   from that check.  Round 42 (H100, 60 of the 373 plans it changes on
 *   fresh seeds 4600-4999): clusters of 8-16 1.13-1.47x, but clusters of 4
 *   0.98x (8 of 14 slower by more than 3%): a bound of 8 is the next
 *   candidate, not taken yet (the class list's tiny_c384to256_6_k2s2
 *   NDHWC, 1 x 4 c4, was 1.43x faster in round 41).
 * - An eight-warp tile whose cluster split still leaves slots idle: four
 *   warps (2,2), twice the blocks a multiprocessor (sw3_c48_k3x3x5 0.031
 *   -> 0.028 ms at 4 blocks a tile, the 7x7x5 k2s2 corpus problem 0.039 ->
 *   0.034). */
static bool igemm_small_grid_tile(const convt3d_shape *s, const igemm_params &p, igemm_shape t,
                                  bool kc, const device_limits &lim, igemm_shape *out)
{
    if (igemm_grid_unfilled(p, t, IGEMM_FFMA, kc, lim)) {
        const bool row = s->cog > 64 && igemm_row_cluster_size(p) >= 4;
        *out = row ? igemm_shape{1, 4} : igemm_shape{2, 1};
        return true;
    }
    const int cs = igemm_cluster_size(p, t, IGEMM_FFMA, kc, lim);
    if (t.wm * t.wn == 8 && p.ntiles * cs < igemm_block_slots(t, IGEMM_FFMA, kc, lim)) {
        *out = igemm_shape{2, 2};
        return true;
    }
    return false;
}

/* The implicit-GEMM kernel (plan.h): 64 x 32 warp tiles, as many
 * warps along the output channels as Cog fills (BN = 32, 64 or 128), eight
 * warps a block (four for BN = 32); clusters of cs blocks share a tile when
 * the tiles alone would not fill every multiprocessor's block slots, as
 * long as each block keeps several K steps.  CONVT3D_CUDA_IGEMM=wm,wn[,cs]
 * overrides (benchmarking). */
bool plan_igemm(const convt3d_shape *s, const device_limits &lim, const char *tile, int math,
                igemm_plan *out, size_t *smem, char *note, size_t note_size)
{
    igemm_shape t = {s->cog > 64 ? 2 : 4, s->cog > 64 ? 4 : s->cog > 32 ? 2 : 1};
    int forced[3];
    int cs = 0;
    if (parse_igemm(tile, forced)) {
        const igemm_shape f = {forced[0], forced[1]};
        if (igemm_shape_compiled(f) && (math == IGEMM_FFMA || igemm_tc_shape_compiled(f)) &&
            forced[2] >= 0 && forced[2] <= kIgemmMaxCluster) {
            t = f;
            cs = forced[2];
        } else {
            snprintf(note, note_size, "CONVT3D_CUDA_IGEMM=%s does not fit, ignored", tile);
        }
    }
    const bool kc = igemm_kc_applies(s, math);
    if ((long long)igemm_smem_bytes(t, math, kc) > lim.smem_optin)
        return false;
    igemm_params p;
    if (!igemm_fill(s, t, math, kc, 1, &p, smem))
        return false;
    igemm_shape narrow;
    bool row_tile = false; /* the one-warp-row tile of an unfilled grid */
    if (cs == 0 && math == IGEMM_FFMA && igemm_small_grid_tile(s, p, t, kc, lim, &narrow)) {
        igemm_params q;
        size_t qsmem;
        if (igemm_fill(s, narrow, math, kc, 1, &q, &qsmem)) {
            t = narrow;
            p = q;
            *smem = qsmem;
            row_tile = t.wm == 1 && t.wn == 4;
        }
    }
    if (cs == 0)
        cs = row_tile ? igemm_row_cluster_size(p) : igemm_cluster_size(p, t, math, kc, lim);
    if (cs > 1 && !igemm_fill(s, t, math, kc, cs, &p, smem))
        return false;
    out->p = p;
    out->t = t;
    out->math = math;
    out->type = s->y_type;
    out->kc = kc;
    out->runs = igemm_runs_apply(s, p, math);
    return true;
}

/* Whether the implicit-GEMM kernel is the better choice, phase_takes:
 * whether the phase kernel takes s (it applies and its planner finds a
 * tiling).
 *
 * Where the phase kernel takes s, only in NCDHW, for many channels a group
 * on both sides (where the phase kernel spends its time staging), and at
 * most 2 taps in every W phase (with more, the phase kernel's sliding
 * window along W feeds each staged input to more FMAs).  On the H200
 * (bench/NOTES.md, round 4): unet 1.55 -> 1.39 ms, k3s2p1op1_wide 0.198 ->
 * 0.136, k4s2p1 0.598 -> 0.572; but k3s1p1 (3 W taps) 0.130 -> 0.131 at
 * best, 0.161-0.179 with other tilings.  In both layouts also where the
 * outputs are fewer than the threads the GPU holds (below).  Otherwise, in
 * NDHWC, the phase kernel keeps what it takes (not measured against this
 * kernel there).
 *
 * Where it does not (a W dilation that does not divide the W stride, W
 * stride 3 to 8, more than 8 taps a W phase; strides above 8 this kernel
 * does not take either), what would come next is the generic direct kernel (one output a thread, every
 * input and weight read from global memory: the dilated classes ran at
 * 0.12-0.17x cuDNN's speed there, bench/NOTES.md round 9), so this kernel,
 * in both layouts, as soon as either side has 4 channels a group: a K step
 * three quarters zeros or an output-channel block seven eighths empty still
 * leaves it far less waste than the generic kernel has (H200, round 9a:
 * the dilated class from 0.12-0.17x cuDNN to 0.76-2.05x). */
/* N x output volume up to which one to three output channels a group (with
 * C_in/G >= 16) go to this engine rather than the phase kernel. */
constexpr long long kIgemmFewOutPositions = 16384;

/* Fewer outputs than the GPU holds threads, each a sum of >= 256 products
 * a phase (C_in/G x taps a phase), with >= 5 output channels a group (fewer
 * go to the few-output kernel first): the phase kernel runs each sum in one
 * thread of few blocks, this engine splits K across a cluster.  On the H200
 * (`--random 200 --seed 3 --all-kernels`, bench/NOTES.md round 12): r169
 * (256 -> 11, 12^3) 2.6x faster, r170 3.2x, r82 2.7x, r155 1.6x, r49 even
 * with the phase kernel's 4-channel tile; r86 (125 -> 16, NDHWC, 200,000
 * outputs) 1.75x slower. */
constexpr long long kIgemmLongSum = 256;

static bool few_outputs_long_sums(const convt3d_shape *s, const device_limits &lim)
{
    const long long taps = s->k_volume / (s->s[0] * s->s[1] * s->s[2]);
    return s->cog >= 5 && s->cig * (taps > 1 ? taps : 1) >= kIgemmLongSum &&
           s->n * s->out_spatial * s->cout <= (long long)lim.num_sms * 2048;
}

bool igemm_preferred(const convt3d_shape *s, bool phase_takes, const device_limits &lim,
                     char *why, size_t why_size)
{
    if (!phase_takes) {
        if (s->cig < 4 && s->cog < 4) {
            snprintf(why, why_size, "automatically, where the phase kernel does not take the "
                     "problem, for C_in/G >= 4 or C_out/G >= 4 only (%lld, %lld)",
                     (long long)s->cig, (long long)s->cog);
            return false;
        }
        return true;
    }
    /* One to three output channels a group on a small volume: the phase
     * kernel gives each of few threads a whole K sum (r124, 128 -> 2
     * channels, 4^3 input: 0.350 ms) while this engine splits K across a
     * cluster (0.057; r14 0.423 -> 0.063, r166 0.266 -> 0.183; H200,
     * bench/NOTES.md round 11).  From 65536 positions on (last_c32to1_16)
     * the phase kernel was faster. */
    if (s->cog <= 3 && s->cig >= 16 && s->n * s->out_spatial <= kIgemmFewOutPositions)
        return true;
    if (few_outputs_long_sums(s, lim))
        return true;
    if (s->cig < 16 || s->cog < 32) {
        snprintf(why, why_size, "automatically for C_in/G >= 16 and C_out/G >= 32 only "
                 "(%lld, %lld)", (long long)s->cig, (long long)s->cog);
        return false;
    }
    /* Fewer outputs than the GPU holds threads: the phase kernel sums each
     * output's whole K in one thread, so its few blocks run long serial
     * sums while multiprocessors idle; this engine splits K across a
     * cluster (bench/NOTES.md round 9a), in either layout. */
    if (s->n * s->out_spatial * s->cout <= (long long)lim.num_sms * 2048)
        return true;
    if (s->layout != CONVT3D_LAYOUT_NCDHW) {
        snprintf(why, why_size, "automatically in NDHWC only where the phase kernel does not "
                 "take the problem, or for fewer outputs than the GPU holds threads");
        return false;
    }
    for (long long r = 0; r < s->s[2] && r < kIgemmMaxStride; r++)
        if (convt3d_phase_of(s, 2, r).taps > 2) {
            snprintf(why, why_size, "automatically for at most 2 taps a W phase only");
            return false;
        }
    return true;
}

/* ---- the registry entry's host side ------------------------------------- */

/* The entry's inner product (cuda_impl.variant). */
int igemm_entry_math(const cuda_impl &e)
{
    return e.variant ? static_cast<const igemm_variant *>(e.variant)->math : IGEMM_FFMA;
}

bool igemm_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                            char *why, size_t why_size)
{
    (void)lim;
    (void)e;
    return igemm_applies(s, why, why_size);
}

/* Whether the phase kernel on half data (phase/, its f16/bf16 entries)
 * beats the half MMA on s, as measured on the H200 (bench/NOTES.md rounds
 * 6, 8 and 19; the phase kernel in f32 there, which reads twice the bytes):
 *   - fewer than 16 input channels a group: a K step of 16 input channels
 *     is then mostly zeros; kernelbench (8 -> 8 a group): f16 MMA 1.38 ms,
 *     f32 phase 0.227 ms.  Few output channels alone do not make the MMA
 *     lose: each of the phase kernel's threads then runs a whole K sum
 *     (round 19, 94 problems of 16-256 -> 2-12 channels, k2s2 / k3s1 /
 *     k4s2, both layouts: the MMA 1.7-18x faster on every one);
 *   - NCDHW, stride 1 in every dim, 16-32 channels a group on both sides
 *     and at least 27 taps: k3s1p1 (32 -> 32, 3x3x3): f16 MMA 0.164
 *     ms, f32 phase 0.136 ms.  Not in NDHWC, where the MMA's K-contiguous
 *     input tiles won (round 8: 0.106 ms vs the f32 phase kernel's 0.144,
 *     round 10), nor past 32 channels or below 27 taps (not measured).
 * The MMA keeps the stride-2 problems with 32 or more channels a group
 * (unet_up_k2s2, k4s2p1, k3s2p1op1_wide: it wins there).  Only where the
 * phase kernel takes s (else the generic kernel would get it). */
namespace {

/* Many channels a group (C_in/G and C_out/G >= 128) on a tiny output
 * volume (at most 8192 positions an image) where the phase kernel's plan
 * has at most two blocks a multiprocessor: each of its threads runs a whole
 * K sum of hundreds of channels while multiprocessors idle, where this
 * engine splits K across a cluster, in either layout.  Round 38 (H100,
 * bench/NOTES.md): the rule was chosen, by a procedure fixed before any
 * data (round 37), from 39 problems in both layouts (NCDHW 5 changed,
 * geomean 2.19x; NDHWC 24, 1.67x and 1.56x); out of sample all 19 changed
 * generated problems ran faster (geomean 1.84x) and on the class list 4 of
 * 11 faster, 4 slower (NDHWC: s1_c128_k1x3x3 0.72x, unet_3d deconv7 0.81x,
 * the two k2s2 8^3 0.87x), geomean 1.20x. */
bool igemm_takes_tiny_volume(const convt3d_shape *s, const device_limits &lim,
                             const cuda_overrides &ov)
{
    if (s->cig < 128 || s->cog < 128 || s->out_spatial > 8192)
        return false;
    phase_plan pp;
    char note[160];
    return phase_kernel_applies(s, note, sizeof note) &&
           plan_phase(s, lim, -1, 0, ov.tile, &pp, note, sizeof note) &&
           pp.p.nblocks <= 2LL * lim.num_sms;
}

bool igemm_half_loses(const convt3d_shape *s, const device_limits &lim, const cuda_overrides &ov)
{
    const bool few_channels = s->cig < 16;
    const bool small_stride1 = s->layout == CONVT3D_LAYOUT_NCDHW && s->s[0] == 1 &&
                               s->s[1] == 1 && s->s[2] == 1 && s->cig <= 32 && s->cog >= 16 &&
                               s->cog <= 32 && s->k_volume >= 27;
    return (few_channels || small_stride1) && phase_takes(s, lim, ov);
}

} // namespace

/* Tensor cores on f32 data pay where both sides of the GEMM have many
 * channels (the FMA kernels keep depthwise and few-channel problems); on
 * f16 and bf16 data everywhere but depthwise problems and where the phase
 * kernel on half data wins (igemm_half_loses). */
bool igemm_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size)
{
    const int math = igemm_entry_math(e);
    if (math == IGEMM_FFMA)
        return !igemm_takes_tiny_volume(s, lim, ov) &&
               !igemm_preferred(s, phase_takes(s, lim, ov), lim, why, why_size);
    if (math == IGEMM_HALF) {
        /* depthwise: the half depthwise kernel (0.46 vs 1.9 ms on the suite's
         * depthwise shape); every other problem, even 8 channels a group,
         * runs faster here than in the generic kernel (kernelbench 1.74 vs
         * 6.3 ms), though a K step of 16 channels is then half zeros */
        if (s->cig == 1 && s->cog == 1) {
            snprintf(why, why_size, "not automatically for depthwise problems");
            return true;
        }
        if (igemm_half_loses(s, lim, ov)) {
            snprintf(why, why_size, "not automatically where the phase kernel on half data "
                     "wins (fewer than 16 input channels a group, or NCDHW at stride 1 with "
                     "16-32 channels and >= 27 taps)");
            return true;
        }
        return false;
    }
    /* 3xTF32 in NDHWC takes the TF32 rules below: the class list's NDHWC
     * problems they admit ran 1.48-2.13x faster here than on the kernels
     * the walk gave them (H200, bench/NOTES.md round 30).  In NCDHW the
     * exact FMA kernels stay (mixed: 0.71-2.2x). */
    if (math == IGEMM_3XTF32 && s->layout == CONVT3D_LAYOUT_NCDHW) {
        snprintf(why, why_size, "not automatically in NCDHW: on the H200 not reliably faster "
                 "than the exact FMA kernels (bench/NOTES.md), which 3xtf32 permits");
        return true;
    }
    if (s->layout != CONVT3D_LAYOUT_NCDHW && !igemm_kc_applies(s, math)) {
        snprintf(why, why_size, "automatically in NDHWC only with C_in/G a multiple of 4 "
                 "(16-byte input copies along the channels); one element at a time, the FMA "
                 "kernels are faster");
        return true;
    }
    /* NDHWC output stores go channel row by channel row, positions C_out
     * apart: where a tile has few K steps they set the pace (H200, round 8:
     * unet_up_k2s2, 8 steps, 2.43 ms vs 1.76 with FMA; k4s2p1, 32 steps,
     * 0.65 vs 0.66; k3s2p1op1_wide, 128 steps, 0.091 vs 0.20) */
    if (s->layout != CONVT3D_LAYOUT_NCDHW) {
        igemm_params p; /* the phase tables only */
        memset(&p, 0, sizeof p);
        fill_phase_fields(s, p);
        const long long steps = heaviest_k_steps(p);
        if (steps <= 32) {
            snprintf(why, why_size, "automatically in NDHWC only with more than 32 K steps a "
                     "tile (%lld): the strided output stores dominate shorter ones", steps);
            return true;
        }
    }
    /* One to three output channels a group on a small volume: the phase
     * kernel gives each of few threads a whole K sum (r124, 128 -> 2
     * channels, 4^3 input: 0.350 ms) while this engine splits K across a
     * cluster (0.057; r14 0.423 -> 0.063, r166 0.266 -> 0.183; H200,
     * bench/NOTES.md round 11).  From 65536 positions on (last_c32to1_16)
     * the phase kernel was faster. */
    if (s->cog <= 3 && s->cig >= 16 && s->n * s->out_spatial <= kIgemmFewOutPositions)
        return true;
    if (s->cig < 16 || s->cog < 32) {
        snprintf(why, why_size, "automatically for C_in/G >= 16 and C_out/G >= 32 only "
                 "(%lld, %lld): the FMA kernels keep fewer channels",
                 (long long)s->cig, (long long)s->cog);
        return true;
    }
    return false;
}

bool igemm_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size)
{
    (void)mode;
    igemm_plan *ip = family_params<igemm_plan>(*k);
    memset(ip, 0, sizeof *ip);
    if (!plan_igemm(s, lim, ov.igemm, igemm_entry_math(e), ip, &k->smem_bytes, k->note,
                    sizeof k->note)) {
        snprintf(why, why_size, "no block shape fits (%lld tiles at most 2^40, %d tap classes)",
                 (long long)1 << 40, kIgemmMaxClasses);
        return false;
    }
    k->ocb = ip->p.ocb;
    k->nocb = ip->p.nocb;
    k->threads = 32 * ip->t.wm * ip->t.wn;
    k->blocks = ip->p.ntiles * ip->p.cs;
    return true;
}

void igemm_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    const igemm_plan &ip = *family_params<igemm_plan>(k);
    const igemm_params &p = ip.p;
    snprintf(buf, size,
             "%s: warps %d x %d (tile %d x %d), clusters of %d, %lld tiles in %d tap "
             "classes, %d K steps a tap, %lld blocks, %zu B shared%s%s%s%s",
             k.impl->name, ip.t.wm, ip.t.wn, 64 * ip.t.wm, 32 * ip.t.wn, p.cs, p.ntiles, p.nclass,
             p.kchunks, k.blocks, k.smem_bytes,
             ip.kc ? ", 16-byte input copies along the channels" : "",
             ip.runs ? ", 16-byte input runs along W" : "", k.note[0] ? "; " : "", k.note);
}

} // namespace ct3d
