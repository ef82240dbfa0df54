/* The tensor-core window family's host side (plan.h). */
#include <stdio.h>
#include <string.h>

#include "plan.h"

namespace ct3d {

namespace {

/* The box shapes (D rows x H rows, kTcwRows in all) a plan may take. */
constexpr int kBoxD[] = {1, 2, 4, 8, 16};
constexpr int kBoxCount = (int)(sizeof kBoxD / sizeof kBoxD[0]);

/* Each dim's most taps and most positions over its phases. */
struct dim_most {
    int taps, qcount;
};

dim_most most_of(const tcw_params &p, int d)
{
    dim_most m = {0, 0};
    for (int r = 0; r < p.s[d]; r++) {
        m.taps = p.ph[d][r].taps > m.taps ? p.ph[d][r].taps : m.taps;
        m.qcount = p.ph[d][r].qcount > m.qcount ? p.ph[d][r].qcount : m.qcount;
    }
    return m;
}

/* Rows (or W positions) of input a window holds beyond its box: the
 * heaviest phase's taps span that many more, dm apart. */
int halo_of(const dim_most &m, int dm) { return m.taps > 0 ? (m.taps - 1) * dm : 0; }

/* The smallest cs >= v with cs = 8 (mod 32): lanes t = 0..3 of a fragment
 * load read channels t cs apart, at 8 consecutive positions, so they hit
 * the 32 banks once each. */
int channel_pitch(long long v)
{
    long long cs = v;
    while (cs % 32 != 8)
        cs++;
    return (int)cs;
}

/* The box rows in D (of kTcwRows) that cost least: MMA work on the rows
 * computed (boxes past the phase's end waste theirs) plus the window rows
 * loaded, two per tap-less row's worth (a window row is 16-20 elements of
 * one cp.async each, a row of a box 2 x 8 MMAs a tap for 8 channels). */
int best_box_d(const dim_most &md, const dim_most &mh, int dmd, int dmh, int taps)
{
    int best = kBoxD[0];
    double best_cost = 1e300;
    for (int i = 0; i < kBoxCount; i++) {
        const int td = kBoxD[i], th = kTcwRows / td;
        const long long nd = ceil_div(md.qcount, td), nh = ceil_div(mh.qcount, th);
        const int ed = td + halo_of(md, dmd), eh = th + halo_of(mh, dmh);
        const double cost = (double)nd * nh * ((double)td * th * (taps > 0 ? taps : 1) + 2.0 * ed * eh);
        if (cost < best_cost) {
            best_cost = cost;
            best = td;
        }
    }
    return best;
}

/* Vector staging (kernel.cuh, tcw_vrows) is taken wherever it suits
 * (CONVT3D_CUDA_TCWIN=0 turns it off).  H100, round 27, the window kernel
 * forced, element -> vector staging: f16 k4s2p1 0.36 -> 0.150 ms,
 * k3s2p1op1_wide 0.161 -> 0.058, k3s1p1 0.052 -> 0.037, unet_up_k2s2 4.24 ->
 * 1.07; TF32 0.365 -> 0.242, 0.168 -> 0.105, 0.049 -> 0.053 (the one
 * slower), 2.71 -> 1.43. */
constexpr bool kTcwVecByDefault = true;

/* Whether vector staging can take the problem: NCDHW (a window row is a
 * run of x) with W a multiple of a 16-byte word, so that every row of x
 * starts on a word boundary (given x does: the launch checks). */
bool vec_layout_suits(const convt3d_shape *s, int elem)
{
    return s->layout == CONVT3D_LAYOUT_NCDHW && s->in[2] % (16 / elem) == 0;
}

/* The window's row pitch, channel pitch, stage and raw buffer for element
 * (vec false) or vector staging, and the bytes a block needs in all.  A
 * vector window row holds the words that cover the box's inputs from any
 * W origin: ceil((ew + VE - 1) / VE) of them. */
void size_layout(tcw_params &p, int elem, bool vec, long long *bytes)
{
    const int ve = 16 / elem;
    /* a window past 2^26 elements a channel fits no shared memory; below
     * that the int fields cannot overflow */
    if ((long long)p.ed * p.eh * (p.ew + 2 * ve) > (1LL << 26)) {
        p.vec = 0;
        *bytes = 1LL << 40;
        return;
    }
    p.vec = vec;
    p.nw = vec ? (p.ew + 2 * ve - 2) / ve : 0;
    p.ewp = vec ? p.nw * ve : p.ew;
    p.qn = p.ed * p.eh * p.nw;
    if (p.qn > kTcwQSlots * kTcwThreads) { /* more words than the threads' slots */
        p.vec = 0;
        p.nw = p.qn = 0;
        p.ewp = p.ew;
    }
    p.cl = 0;
    p.cs = channel_pitch((long long)p.ed * p.eh * p.ewp);
    p.wofs = kTcwCk * p.cs;
    p.stage_floats = p.wofs + p.maxtaps * kTcwCk * kTcwBPitch;
    /* half data: 16 channels of 16-bit elements, channel pitch cs elements */
    p.raw_floats = p.vec && elem == 2 ? kTcwCk * p.cs : 0;
    /* two stages, the raw window, then the tap table and the taps' shifts (ints,
     * 16-byte rounded each) */
    *bytes = (2LL * p.stage_floats + p.raw_floats) * (long long)sizeof(float) +
             2 * ((p.maxtaps + 3) / 4 * 16);
}

/* The channels-last window (NDHWC x; kernel.cuh, tcw_copy_positions):
 * kTcwCk words a position, rows of ew positions, no padding (the XOR of
 * tcw_cl_word keeps the fragment loads conflict-free).  16-byte copies
 * where C_in/G is a multiple of a 16-byte word: each half of a position's
 * chunk then lies wholly inside or past C_in/G, on a word boundary given
 * x is (the launch checks); else element copies. */
void size_layout_cl(tcw_params &p, const convt3d_shape *s, int elem, long long *bytes)
{
    if ((long long)p.ed * p.eh * p.ew > (1LL << 22)) { /* fits no shared memory */
        p.cl = 0;
        *bytes = 1LL << 40;
        return;
    }
    p.cl = 1;
    p.vec = s->cig * elem % 16 == 0;
    p.nw = p.qn = 0;
    p.ewp = p.ew;
    p.cs = 0;
    p.wofs = p.ed * p.eh * p.ewp * kTcwCk;
    p.stage_floats = p.wofs + p.maxtaps * kTcwCk * kTcwBPitch;
    p.raw_floats = 0;
    *bytes = 2LL * p.stage_floats * (long long)sizeof(float) + 2 * ((p.maxtaps + 3) / 4 * 16);
}

/* The block budget of automatic staging: two blocks a multiprocessor for
 * f32 data, one will do for half data (vector staging: f16 k3s1p1 ran
 * 0.037 ms with one block against 0.052 with element staging and two;
 * TF32 k3s1p1 0.053 against 0.049; H100, rounds 27-28). */
bool fits_automatically(long long bytes, int elem, int smem_optin)
{
    return bytes <= (elem == 2 ? smem_optin : smem_optin / 2);
}

} // namespace

bool plan_tcwin(const convt3d_shape *s, int smem_optin, int vec, tcw_params *p, size_t *smem,
                char *why, size_t why_size)
{
    memset(p, 0, sizeof *p);
    p->preround = kTcwPreroundTaps;
    if (!int_indexable(s, why, why_size))
        return false;
    for (int d = 0; d < 3; d++)
        if (s->s[d] > kTcwMaxStride) {
            snprintf(why, why_size, "stride %lld above %d", (long long)s->s[d], kTcwMaxStride);
            return false;
        }
    fill_shape_fields(s, *p);
    p->kvol = (int)s->k_volume;
    p->nocb = (int)ceil_div(s->cog, kTcwOcb);
    p->ck = tcw_chunk_channels((int)convt3d_dtype_size(s->x_type));
    p->nchunks = (int)ceil_div(s->cig, p->ck);
    for (int d = 0; d < 3; d++)
        for (int r = 0; r < p->s[d]; r++)
            p->ph[d][r] = phase_entry_of(s, d, r);
    dim_most m[3];
    int taps = 1;
    for (int d = 0; d < 3; d++) {
        m[d] = most_of(*p, d);
        taps *= m[d].taps;
    }
    if (taps > kTcwMaxTaps) {
        snprintf(why, why_size, "%d taps in a phase, above %d (the weights of a chunk)", taps,
                 kTcwMaxTaps);
        return false;
    }
    p->maxtaps = taps;
    p->td = best_box_d(m[0], m[1], p->dm[0], p->dm[1], taps);
    p->th = kTcwRows / p->td;
    const int rows[3] = {p->td, p->th, kTcwW};
    long long blocks = s->n * s->groups * p->nocb;
    for (int d = 0; d < 3; d++) {
        p->ntile[d] = (int)ceil_div(m[d].qcount > 0 ? m[d].qcount : 1, rows[d]);
        blocks *= (long long)p->ntile[d] * p->s[d];
    }
    p->ed = rows[0] + halo_of(m[0], p->dm[0]);
    p->eh = rows[1] + halo_of(m[1], p->dm[1]);
    p->ew = rows[2] + halo_of(m[2], p->dm[2]);
    const int elem = (int)convt3d_dtype_size(s->x_type);
    long long bytes = 0;
    const bool staged = vec > 0 || (vec < 0 && kTcwVecByDefault);
    if (staged && s->layout == CONVT3D_LAYOUT_NDHWC) {
        size_layout_cl(*p, s, elem, &bytes);
        if (bytes > smem_optin || (vec < 0 && !fits_automatically(bytes, elem, smem_optin)))
            p->cl = p->vec = 0;
    } else if (staged && vec_layout_suits(s, elem)) {
        size_layout(*p, elem, true, &bytes);
        if (bytes > smem_optin || (vec < 0 && !fits_automatically(bytes, elem, smem_optin)))
            p->vec = 0;
    }
    if (!p->cl && !p->vec)
        size_layout(*p, elem, false, &bytes);
    if (bytes > smem_optin) {
        snprintf(why, why_size, "a window of %d x %d x %d and %d taps' weights need %lld B of "
                 "shared memory a block, above %d", p->ed, p->eh, p->ew, taps, bytes, smem_optin);
        return false;
    }
    if (blocks >= (1LL << 40)) {
        snprintf(why, why_size, "%lld blocks, at most 2^40", blocks);
        return false;
    }
    p->nblocks = blocks;
    *smem = (size_t)bytes;
    return true;
}

/* ---- the registry entries' host side ------------------------------------ */

static int tcwin_entry_math(const cuda_impl &e)
{
    return static_cast<const tcwin_variant *>(e.variant)->math;
}

bool tcwin_entry_applicable(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                            char *why, size_t why_size)
{
    (void)e;
    tcw_params p;
    size_t smem;
    return plan_tcwin(s, lim.smem_optin, 0, &p, &smem, why, why_size);
}

/* The share of the positions a plan's boxes compute that are outputs of
 * the problem (per dim, the longest phase's positions over its boxes'). */
static double box_efficiency(const tcw_params &p)
{
    const int rows[3] = {p.td, p.th, kTcwW};
    double eff = 1.0;
    for (int d = 0; d < 3; d++)
        eff *= (double)most_of(p, d).qcount / ((double)p.ntile[d] * rows[d]);
    return eff;
}

/* Where the walk takes this kernel (it comes before the implicit-GEMM
 * engine's tensor-core entries), in every mode that permits tensor cores:
 * NCDHW (lanes along W read the window rows coalesced), C_in/G >= 16 and
 * C_out/G >= 16 (a chunk of channels and a block of 32 mostly full),
 * boxes at least kTcwMinBoxShare full of outputs, and at least kTcwMinTaps
 * taps a phase on average (k_volume / phases; kTcwMinTapsHalf on f16/bf16
 * data, whose window goes through registers): a staged window then serves
 * that many MMA steps.  H200, round 17, TF32 (`--all-kernels`): k3s1p1 (27
 * taps) 0.051 ms against the implicit-GEMM engine's 0.145 (cuDNN 0.067),
 * k4s2p1 (8) 0.372 against 0.441; with fewer taps the per-chunk staging
 * sets the pace (k3s2p1op1_wide, 3.4 on average: 0.172 against 0.078;
 * unet_up_k2s2, 1 tap: 2.76 ms against 0.75).  Random problems (seed 7,
 * C_in/G and C_out/G >= 16, NCDHW, >= 8 taps): slower where W phases of
 * 17-21 positions left boxes half empty (random_32, _33, _144: 0.45-0.87x
 * the implicit-GEMM engine's speed) or the volume was tiny (random_133,
 * 7 x 8 x 14: 0.51x); even with 27 taps and a full W box (random_21, boxes
 * 61% full) a tie.  f16 / bf16 (round 18, m16n8k16 on 16-bit stages):
 * k3s1p1 0.052 against the implicit-GEMM engine's 0.145 (cuDNN 0.039),
 * k4s2p1 0.389, a tie with it; the half window goes through registers, so
 * with few taps its staging costs more than the f32 one's (k3s2p1op1_wide
 * 0.167 against 0.068, unet_up_k2s2 4.39 ms against 0.84).  3xTF32:
 * k3s1p1 0.094 against the FMA kernels' 0.132, k4s2p1 0.561 against
 * 0.569.  On half data C_out/G below 16 is taken too while C_in/G is at
 * most kTcwFewOutMaxCig (round 19, k3s1p1-like, 2-12 output channels: 0.67x
 * the implicit-GEMM engine's time at 16 input channels, 0.77x at 64, a tie
 * at 128, 1.03x at 256): the staged window still serves 27 taps while the
 * chunks are few, though the block's 32 output channels are mostly zeros.
 * Not measured on f32 data in TF32. */
constexpr long long kTcwMinTaps = 6;
constexpr long long kTcwMinTapsHalf = 16;
/* With vector staging (kTcwVecByDefault) the half window no longer goes
 * through registers: H100, round 27, f16, the window kernel against the
 * implicit-GEMM engine the walk took: k4s2p1 (8 taps a phase) 0.151 ms
 * against 0.385, k3s2p1op1_wide (3.4) 0.058 against 0.068; with 1 tap
 * (unet_up_k2s2) still slower, 1.07 against 0.82 (and the shuffle MMA's
 * 0.40).  Random half problems were not measured. */
constexpr long long kTcwMinTapsHalfVec = 3;
constexpr double kTcwMinBoxShare = 0.7;
constexpr long long kTcwFewOutMaxCig = 128;

/* Whether the walk's channel condition holds: C_in/G >= 16, and C_out/G
 * >= 16 but on half data with at most kTcwFewOutMaxCig input channels. */
static bool tcwin_channels_suit(const convt3d_shape *s, bool half)
{
    if (s->cig < 16)
        return false;
    return s->cog >= 16 || (half && s->cig <= kTcwFewOutMaxCig);
}

/* Few input channels a group: the window kernel also takes a problem with
 * C_in/G <= kTcwFewInMaxCig that the rest of the walk would give to the
 * implicit-GEMM engine -- its FMA entry in TF32 mode, its half MMA on
 * NDHWC f16 / bf16 data with C_out/G >= 16.  The engine's K steps of 16
 * input channels a tap are then mostly padding and each rebuilds its A
 * tile, while a staged window serves every tap.  H200, round 24
 * (`--random 250 --seed 1 --all-kernels`): TF32, 17 such problems (13
 * NDHWC), the window kernel faster on 16, geometric mean 0.54x the
 * engine's time (random_64: 0.096 ms against 0.413), slower only on
 * random_162 (9 -> 6 channels, 1.26x); f16 NDHWC, 16 problems, faster on
 * 14, at most 1.04x on the other two, 0.63x the half MMA's time.  In NCDHW
 * on half data it was not faster (3 problems: 0.93-1.89x), and 3xTF32 was
 * not measured. */
constexpr long long kTcwFewInMaxCig = 16;

static bool tcwin_takes_few_inputs(const cuda_impl &e, const convt3d_shape *s,
                                   const device_limits &lim, const cuda_overrides &ov)
{
    const int math = tcwin_entry_math(e);
    if (s->cig > kTcwFewInMaxCig || math == TCW_3XTF32)
        return false;
    if (math == TCW_HALF && (s->layout != CONVT3D_LAYOUT_NDHWC || s->cog < 16))
        return false;
    const cuda_impl *next = cuda_walk_after(e, s, lim, ov);
    if (!next)
        return false;
    return math == TCW_HALF ? strstr(next->name, "_igemm_mma") != NULL
                            : strcmp(next->name, "cuda/f32_igemm_8x8") == 0;
}

bool tcwin_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size)
{
    tcw_params p;
    size_t smem;
    int vec = -1, round = 1; /* the staging the plan will take (a bad value is reported there) */
    if (ov.tcwin)
        parse_tcwin(ov.tcwin, &vec, &round);
    if (!plan_tcwin(s, lim.smem_optin, vec, &p, &smem, why, why_size))
        return true;
    const long long phases = s->s[0] * s->s[1] * s->s[2];
    const bool half = tcwin_entry_math(e) == TCW_HALF;
    const long long min_taps = !half ? kTcwMinTaps : p.vec ? kTcwMinTapsHalfVec : kTcwMinTapsHalf;
    if ((s->layout != CONVT3D_LAYOUT_NCDHW && !p.cl) || !tcwin_channels_suit(s, half) ||
        s->k_volume < min_taps * phases || box_efficiency(p) < kTcwMinBoxShare) {
        if (tcwin_takes_few_inputs(e, s, lim, ov))
            return false;
        snprintf(why, why_size, "automatically in NCDHW or with channels-last staging (NDHWC), "
                 "with C_in/G >= 16, C_out/G >= 16 (on half data any with C_in/G <= %lld), >= %lld taps a phase on average "
                 "and boxes >= %.0f%% full only, or with C_in/G <= %lld where the "
                 "implicit-GEMM engine would take the problem (TF32; NDHWC half data with "
                 "C_out/G >= 16)", kTcwFewOutMaxCig, min_taps, 100 * kTcwMinBoxShare,
                 kTcwFewInMaxCig);
        return true;
    }
    return false;
}

bool tcwin_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size)
{
    (void)mode;
    tcwin_plan *tp = family_params<tcwin_plan>(*k);
    memset(tp, 0, sizeof *tp);
    int vec = -1, round = 1;
    if (ov.tcwin && !parse_tcwin(ov.tcwin, &vec, &round))
        fprintf(stderr, "convt3d: CONVT3D_CUDA_TCWIN=%s ignored (0 or 1, or V,R: V -1, 0 or 1, R "
                "0 or 1)\n", ov.tcwin);
    if (!plan_tcwin(s, lim.smem_optin, vec, &tp->p, &k->smem_bytes, why, why_size))
        return false;
    if (!round) /* plan_tcwin set the threshold */
        tp->p.preround = 0;
    tp->math = tcwin_entry_math(e);
    k->ocb = kTcwOcb;
    k->nocb = tp->p.nocb;
    k->threads = kTcwThreads;
    k->blocks = tp->p.nblocks;
    return true;
}

void tcwin_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    const tcw_params &p = family_params<tcwin_plan>(k)->p;
    snprintf(buf, size, "%s: boxes of %d x %d x %d positions x %d channels, windows of %d x %d "
             "x %d (%s%s staging), up to %d taps a phase, %d chunks of %d input channels, %lld "
             "blocks, %zu B shared",
             k.impl->name, p.td, p.th, kTcwW, kTcwOcb, p.ed, p.eh, p.ew,
             p.cl ? "channels-last, " : "", p.vec ? "16-byte" : "element", p.maxtaps, p.nchunks,
             p.ck, k.blocks, k.smem_bytes);
}

} // namespace ct3d
