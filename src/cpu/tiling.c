/* The CPU tiling policy (tiling.h), moved out of the tile kernels. */
#include <stdio.h>

#include "cachesize.h"
#include "kernels.h"
#include "tiling.h"

cpu_cache_budget cpu_cache_budget_of(int64_t l1d, int64_t l2)
{
    (void)l1d; /* nothing L1d-bound yet: tiling.h */
    cpu_cache_budget b;
    b.prep_bytes = l2 / 4;
    b.pack_bytes = l2;
    b.icl_rows_bytes = 2 * l2;
    b.colg_bytes = l2 / 2;
    return b;
}

cpu_cache_budget cpu_cache_budget_here(void)
{
    const cpu_cache_sizes c = cpu_cache_sizes_get();
    return cpu_cache_budget_of(c.l1d, c.l2);
}

int64_t cpu_even_block(int64_t n, int64_t max)
{
    const int64_t blocks = (n + max - 1) / max;
    return (n + blocks - 1) / blocks;
}

int cpu_ocl_positions(int64_t ow, int64_t max, int64_t S)
{
    const int64_t cap = max / S * S;
    return (int)((cpu_even_block(ow, cap) + S - 1) / S * S);
}

/* (output, tap) pairs of a W row whose input exists: the work either tile
 * must do. */
static int64_t w_row_pairs(const convt3d_shape *s)
{
    const int64_t ow = s->out[2], K = s->k[2], S = s->s[2], W = s->in[2];
    int64_t pairs = 0;
    for (int64_t k = 0; k < K; k++) {
        /* inputs i with o = i*S - p + k in [0, ow), numerators kept >= 0 */
        const int64_t lo = cpu_max64(0, (s->p[2] - k + S - 1 + S * K) / S - K);
        const int64_t hi = cpu_min64(W, (ow - 1 + s->p[2] - k + S * K) / S - K + 1);
        pairs += cpu_max64(0, hi - lo);
    }
    return pairs;
}

/* Lanes the W-lane tiles compute for a row: every tap of each W phase over
 * the phase's positions rounded up to whole vectors. */
static int64_t w_lane_lanes(const convt3d_shape *s, int64_t VL)
{
    const int64_t ow = s->out[2], S = s->s[2];
    int64_t lanes = 0;
    for (int64_t c = 0; c < cpu_min64(S, ow); c++) {
        const convt3d_phase ph = convt3d_phase_of(s, 2, (c + s->p[2]) % S);
        lanes += ph.taps * VL * ((cpu_phase_len(ow, S, c) + VL - 1) / VL);
    }
    return lanes;
}

/* W phases so short that the W-lane tile pays its per-row and per-tap
 * costs for a few lanes: the output-channel tile, whatever its lanes
 * waste, from phases of at most 7/16 of a vector, or 9/16 with C_in/G <= 3.
 * Round 39 (Zen 4, 2 threads, AVX-512 tiles forced, seeds 1-20 of --random
 * with phases of at most 12): faster on 40 of the 50 problems this takes,
 * slower on 6, geomean 1.24x (seed 41's random_66, 2 -> 2, k5 s3 on W 4:
 * 0.67 -> 0.25 ms; depthwise 194 groups on W 4: 35 -> 26 ms).  With
 * 8-lane vectors (AVX2) from phases of at most 12: round 40 (Zen 3, 1
 * thread, both tiles forced on the 165 problems of seeds 1-20 with phases
 * of at most 16 that the walk gave the W-lane tile) the output-channel
 * tile was faster on 83 of 101 with 4-12 positions (geomean 1.27x, any
 * C_in/G), slower on 19 of 25 with 13-16 at W stride 2. */
static int ocl_rows_short(const convt3d_shape *s, int64_t VL)
{
    const int64_t jl = cpu_phase_len(s->out[2], s->s[2], 0);
    if (VL <= 8)
        return jl <= 12;
    return 16 * jl <= 7 * VL || (16 * jl <= 9 * VL && s->cig <= 3);
}

/* The output-channel tile is chosen when its lanes waste no more than the
 * W-lane tile's (channel lanes past C_out/G against W lanes past each
 * phase's row and under tap masks), except against a W-lane tile at its
 * best (below).  Measured here (Zen 5) where both waste little: 6-40%
 * faster with W stride 2 (k4s2p1 9%, k3s2p1op1_wide 28%), 10-60% with
 * stride 1. */
int cpu_ocl_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim, char *why,
                       size_t why_size)
{
    const int64_t VL = lim->lanes, K = s->k[2], S = s->s[2];
    if (ocl_rows_short(s, VL))
        return 1;
    const double oc_use = (double)s->cog / (double)(VL * ((s->cog + VL - 1) / VL));
    if (oc_use * (double)w_lane_lanes(s, VL) < (double)w_row_pairs(s)) {
        snprintf(why, why_size,
                 "its channel lanes would waste more than the W-lane tile's (C_out/G=%lld)",
                 (long long)s->cog);
        return 0;
    }
    /* With at most one W tap an output (kW <= s) the tile shares each
     * broadcast between s outputs only, while a W-lane tile of 4 vectors a
     * phase loads 10 values for 24 FMAs.  Measured here: unet_up_k2s2 and
     * a half-size copy (64 W-lane positions a phase) 3% slower than that
     * tile; 32 or 48 positions a phase (2 and 3 vectors) 28-33% faster. */
    const int64_t w_vectors =
        cpu_even_block((cpu_phase_len(s->out[2], S, 0) + VL - 1) / VL, lim->ncdhw_maxv);
    if (K <= S && w_vectors >= 4) {
        snprintf(why, why_size,
                 "kW=%lld <= stride %lld and the W-lane tile runs %lld vectors a phase",
                 (long long)K, (long long)S, (long long)w_vectors);
        return 0;
    }
    return 1;
}

/* As many j vectors as the row needs (up to ncdhw_maxv), then as many
 * channels as the registers allow, split evenly; the weights are blocked
 * by the tile's channels. */
cpu_tiling cpu_tiling_ncdhw(const convt3d_shape *s, const cpu_tile_limits *lim)
{
    const int64_t VL = lim->lanes, jmax = cpu_phase_len(s->out[2], s->s[2], 0);
    const int64_t v = cpu_even_block((jmax + VL - 1) / VL, lim->ncdhw_maxv);
    cpu_tiling t;
    t.tile_a = (int)v;
    t.tile_b = (int)cpu_even_block(s->cog, lim->ncdhw_ocb_max[v - 1]);
    t.chunk = v * VL;
    t.w_block = t.tile_b;
    return t;
}

/* The most outputs an output-channel tile of v vectors can take for kW
 * taps: its accumulators (v a position), v weight vectors a tap and a
 * broadcast must fit in the registers, or the compiler spills in the hot
 * loop.  With 32 registers it never binds below the tile maxima built. */
static int64_t ocl_position_cap(const cpu_tile_limits *lim, int64_t v, int64_t kw)
{
    const int64_t cap = (lim->vector_regs - 1 - kw * v) / v;
    return cpu_max64(1, cpu_min64(lim->ocl_pos_max[v - 1], cap));
}

/* One channel vector when the row gives tiles of at least 3/4 VL
 * positions, else up to ocl_maxv so that short rows still keep enough
 * accumulators; then the positions split evenly.  Measured here (Zen 5;
 * stride-1 rows of 24 to 64): one vector of 16 positions is 0-8% faster
 * than two of 11-12 (k3s1p1: 6%), as a tile's weights are half as many and
 * a row's tiles stream them fewer times; rows of 4-8 are 20-35% faster with
 * two. */
cpu_tiling cpu_tiling_ncdhw_oc(const convt3d_shape *s, const cpu_tile_limits *lim)
{
    const int64_t VL = lim->lanes, span = s->out[2], S = s->s[2], K = s->k[2];
    int64_t v = cpu_min64(lim->ocl_maxv, (s->cog + VL - 1) / VL);
    if (4 * cpu_ocl_positions(span, ocl_position_cap(lim, 1, K), S) >= 3 * VL)
        v = 1;
    cpu_tiling t;
    t.tile_b = (int)v;
    t.tile_a = cpu_ocl_positions(span, ocl_position_cap(lim, v, K), S);
    t.chunk = t.tile_a / S; /* in phase positions j, as the driver splits W */
    t.w_block = v * VL;
    return t;
}

cpu_tiling cpu_tiling_ndhwc(const convt3d_shape *s, const cpu_tile_limits *lim)
{
    const int64_t VL = lim->lanes, jmax = cpu_phase_len(s->out[2], s->s[2], 0);
    const int64_t v = cpu_even_block((s->cog + VL - 1) / VL, lim->ndhwc_maxv);
    cpu_tiling t;
    t.tile_b = (int)v;
    t.tile_a = (int)cpu_min64(lim->ndhwc_pos_max[v - 1], jmax);
    t.chunk = t.tile_a;
    t.w_block = 0;
    return t;
}

cpu_tiling cpu_tiling_ndhwc_rows(const convt3d_shape *s, int64_t lanes, int maxv,
                                 const int *pos_max)
{
    const int64_t jmax = cpu_phase_len(s->out[2], s->s[2], 0);
    const int64_t v = cpu_even_block((s->cout + lanes - 1) / lanes, maxv);
    cpu_tiling t;
    t.tile_b = (int)v;
    t.tile_a = (int)cpu_min64(pos_max[v - 1], jmax);
    t.chunk = t.tile_a;
    t.w_block = 0;
    return t;
}

cpu_tiling cpu_tiling_ndhwc_icl(const convt3d_shape *s, const int *pos_max)
{
    const int64_t jmax = cpu_phase_len(s->out[2], s->s[2], 0);
    cpu_tiling t;
    t.tile_b = (int)s->cog;
    t.tile_a = (int)cpu_min64(pos_max[s->cog - 1], jmax);
    t.chunk = t.tile_a;
    t.w_block = 0;
    return t;
}

int64_t cpu_ndhwc_tr_batch(const convt3d_shape *s, int64_t lanes)
{
    return cpu_min64(s->groups, lanes / convt3d_gcd64(s->cog, lanes));
}

double cpu_transposed_macs(const convt3d_shape *s)
{
    const int64_t copies = (s->k[0] + s->s[0] - 1) / s->s[0];
    return (double)s->cog * (double)s->k_volume / (double)copies;
}

/* The NCDHW input-channel-lane tile transposes each input row it reads once
 * per work item (an item is one output plane od, its rows share the copies),
 * so an input element is copied about ceil(kD / sD) times and feeds
 * C_out/G * kD * kH * kW multiply-adds.  Taken where the W-lane tile would
 * keep at most 4 accumulators (C_out/G x its vectors along W: half of the 8
 * that hide the FMA latency on two pipes) and each copied element feeds at
 * least 8 multiply-adds (a vector's worth).  Measured (Zen 3, 1 thread,
 * bench/NOTES.md round 10b): 2.4-2.8x faster with 2 accumulators and 30
 * multiply-adds a copy, 1.2-1.4x with 1 and 9; no gain (within a noisy
 * spread, more often slower) with 6 and 18, and 1.4x slower with 12 and 4
 * (a 1x1x1 kernel). */
int cpu_icl_ncdhw_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim, char *why,
                             size_t why_size)
{
    const cpu_tiling wl = cpu_tiling_ncdhw(s, lim);
    const int64_t acc = s->cog * wl.tile_a;
    if (acc > 4) {
        snprintf(why, why_size, "the W-lane tile keeps %lld accumulators (C_out/G=%lld)",
                 (long long)acc, (long long)s->cog);
        return 0;
    }
    const double macs = cpu_transposed_macs(s);
    if (macs < 8.0) {
        snprintf(why, why_size,
                 "a transposed input element feeds %.1f multiply-adds (at least 8 pay)", macs);
        return 0;
    }
    return 1;
}

/* A vector's span depends on where it starts in its group, first mod cog,
 * which repeats after at most cog vectors; a shorter last vector reads no
 * more than the whole one starting where it does. */
int64_t cpu_ndhwc_gl_span(const convt3d_shape *s, int64_t lanes)
{
    const int64_t nvec = cpu_min64((s->cout + lanes - 1) / lanes, s->cog);
    int64_t most = 0;
    for (int64_t first = 0; first < nvec * lanes; first += lanes) {
        const int64_t last = cpu_min64(first + lanes, s->cout) - 1;
        most = cpu_max64(most, (last / s->cog - first / s->cog + 1) * s->cig);
    }
    return most;
}

int64_t cpu_ndhwc_pl_width(const convt3d_shape *s, int64_t lanes)
{
    for (int64_t cw = 1; 2 * cw <= lanes; cw *= 2)
        if (cw >= s->cog && (lanes / cw - 1) * s->x_stride[4] + s->cig <= lanes)
            return cw;
    return 0;
}

cpu_tiling cpu_tiling_ndhwc_pl(const convt3d_shape *s, int64_t lanes, int qmax)
{
    const int64_t ppv = lanes / cpu_ndhwc_pl_width(s, lanes);
    const int64_t jmax = cpu_phase_len(s->out[2], s->s[2], 0);
    cpu_tiling t;
    t.tile_b = (int)cpu_max64(1, cpu_min64(qmax, (jmax + ppv - 1) / ppv));
    t.tile_a = (int)(t.tile_b * ppv);
    t.chunk = t.tile_a;
    t.w_block = 0;
    return t;
}

/* Over the phases of dim d: the smallest and largest input offset of a
 * tap, and the most taps a phase has. */
static void dim_tap_reach(const convt3d_shape *s, int d, int64_t *lo, int64_t *hi, int64_t *most)
{
    *lo = *hi = *most = 0;
    int first = 1;
    for (int64_t c = 0; c < cpu_min64(s->s[d], s->out[d]); c++) {
        const convt3d_phase ph = convt3d_phase_of(s, d, (c + s->p[d]) % s->s[d]);
        *most = cpu_max64(*most, ph.taps);
        for (int64_t t = 0; t < ph.taps; t++) {
            const int64_t delta = convt3d_phase_delta(s, d, c, &ph, t);
            *lo = first || delta < *lo ? delta : *lo;
            *hi = first || delta > *hi ? delta : *hi;
            first = 0;
        }
    }
}

int cpu_ndhwc_tr_rows(const convt3d_shape *s, int64_t chunk, cpu_tr_rows *r)
{
    int64_t dlo, dhi, nd, hlo, hhi, nh, wlo, whi, nw;
    dim_tap_reach(s, 0, &dlo, &dhi, &nd);
    dim_tap_reach(s, 1, &hlo, &hhi, &nh);
    dim_tap_reach(s, 2, &wlo, &whi, &nw);
    const int64_t jlen = cpu_phase_len(s->out[2], s->s[2], 0);
    const int64_t jlast = (jlen + chunk - 1) / chunk * chunk - 1;
    const int64_t big = (int64_t)1 << 40;
    if (-wlo > big || whi > big || jlast > big || s->in[2] > big || hhi - hlo > big)
        return 0;
    r->left = cpu_max64(0, -wlo);
    const int64_t right = cpu_max64(0, jlast + whi - (s->in[2] - 1));
    /* zero margins far wider than the row (a dilated W reach) would make
     * every cached row mostly zeros, gigabytes of them at the extreme */
    if (r->left + right > cpu_max64(4096, 4 * s->in[2]))
        return 0;
    r->row = (r->left + s->in[2] + right + 15) / 16 * 16;
    /* a row needs nd * nh slots; the rest keep rows the next rows share
     * (no more than the input has: a dilated reach can span billions) */
    const int64_t shared = cpu_min64(hhi - hlo + 2, s->in[1]);
    r->slots = cpu_max64(1, cpu_max64(nd, 1) * cpu_max64(nh, shared));
    return 1;
}

/* NDHWC keeps a position's channels contiguous, so its tiles put output
 * channels in the lanes; with fewer than a vector of them a group, the
 * tile of one group leaves lanes idle and the grouped-lanes tile cannot
 * broadcast x (each lane's group reads other inputs).  The W-lane NCDHW
 * tile fills its lanes along W instead and broadcasts weights; run on
 * NDHWC data it pays a transposition of each input row it caches and of
 * each output, a few vector instructions per vector of elements.  Taken
 * where (1) C_out/G leaves channel vectors idle, (2) the W-lane tile uses
 * at least as large a share of its lanes as the channel lanes would (as
 * cpu_ocl_worthwhile compares them), and (3) each moved element -- an
 * input element per copy (about ceil(kD / sD) copies, one per output plane
 * that reads it) and an output element -- carries at least 2 vectors of
 * FMAs (2 * lanes multiply-adds), so the transposes stay a small part; with
 * one output channel a group (and several input channels) the output
 * element's count alone, the other tiles wasting all lanes but one. */
int cpu_ndhwc_tr_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim, char *why,
                            size_t why_size)
{
    const int64_t VL = lim->lanes;
    if (s->cog >= VL) {
        snprintf(why, why_size, "C_out/G=%lld fills %lld-lane channel vectors", (long long)s->cog,
                 (long long)VL);
        return 0;
    }
    const double oc_use = (double)s->cog / (double)VL;
    const double w_use = (double)w_row_pairs(s) / (double)w_lane_lanes(s, VL);
    if (w_use < oc_use) {
        snprintf(why, why_size, "the W-lane tile would use %.0f%% of its lanes, channels %.0f%%",
                 100 * w_use, 100 * oc_use);
        return 0;
    }
    const double in_macs = cpu_transposed_macs(s);
    const double strides = (double)s->s[0] * (double)s->s[1] * (double)s->s[2];
    const double out_macs = (double)s->cig * (double)s->k_volume / strides;
    /* One output channel from several input channels a group: the channel
     * tiles run one lane in VL, so transposing pays even where an input
     * element carries few products (Zen 4, bench/NOTES.md round 21: the 4
     * such random problems it moved 1.5-5.6x faster). */
    const int one_output = s->cog == 1 && s->cig >= 2;
    if ((!one_output && in_macs < 2.0 * (double)VL) || out_macs < 2.0 * (double)VL) {
        snprintf(why, why_size,
                 "a transposed element carries %.0f (input) and %.0f (output) multiply-adds "
                 "(at least %lld pay)",
                 in_macs, out_macs, (long long)(2 * VL));
        return 0;
    }
    return 1;
}

/* The column GEMM against the gather tiles (bench/NOTES.md rounds 23 and
 * 25): those share each x vector among their C_out/G output channels, so
 * their loads per FMA fall as C_out/G grows, while each z element of the
 * column GEMM costs a store and an add on top of its C_in/G x kd-taps FMAs.
 * With one output channel a group the gather tiles run an x load an FMA and
 * the column GEMM won every problem with C_in/G >= 4 (seeds 1 and 2 of
 * --random, Zen 4: 18 of 18, 1.24-4.3x); with 2-8 it needs the longer sum
 * C_in/G >= 8 C_out/G (2-4, round 23: seed 1 11 of 11, seed 2 5 of 5; 5-8,
 * round 25, once the row tiles split M evenly: 12 of 12 on seeds 1, 2, 4,
 * 5, 1.0-2.1x); at C_out/G = 4 and C_in/G 16-27 it lost 3 of 3 (0.75-0.79x).
 * Depthwise (one channel each side) it shares each x vector among the kH x
 * kW taps where the gather tile loads it once a tap: round 25, 44 of 51
 * faster, geometric mean 1.39x (but not at W stride 2 with 3+ W taps:
 * depthwise_colg_worthwhile); with 2-3 input channels and one output
 * channel it lost 3 of 3 (0.76-0.92x), so those stay on the gather tile.
 * From 9 output channels the gather tiles won about half: never taken. */
/* Depthwise, except at W stride 2 with 3 or more W taps: there the gather
 * tile's phases of two W vectors held their ground (round 25, 13 such
 * problems of seeds 1-3 of --random, 1 thread: the column GEMM 0.81-0.95x
 * on 9, 1.32-1.63x on 4, geometric mean 1.02x; the suite's depthwise shape,
 * k3 s2, 2 threads: 0.80x, 12.0 -> 9.8 GFLOP/s, Zen 4). */
static int depthwise_colg_worthwhile(const convt3d_shape *s, char *why, size_t why_size)
{
    if (s->s[2] == 2 && s->k[2] >= 3) {
        snprintf(why, why_size, "depthwise at W stride 2 with %lld W taps (the gather tile's)",
                 (long long)s->k[2]);
        return 0;
    }
    return 1;
}

int cpu_colg_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim, char *why,
                        size_t why_size)
{
    (void)lim;
    if (s->cog > 8) {
        snprintf(why, why_size, "C_out/G=%lld (taken for 1-8)", (long long)s->cog);
        return 0;
    }
    if (s->cog == 1 && s->cig == 1)
        return depthwise_colg_worthwhile(s, why, why_size);
    const int64_t need = s->cog == 1 ? 4 : 8 * s->cog;
    if (s->cig < need) {
        snprintf(why, why_size, "C_in/G=%lld for C_out/G=%lld (it needs >= %lld%s)",
                 (long long)s->cig, (long long)s->cog, (long long)need,
                 s->cog == 1 ? ", or 1" : "");
        return 0;
    }
    return 1;
}
