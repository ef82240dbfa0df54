/* The tensor-core shuffle family's host side (plan.h). */
#include <stdio.h>
#include <string.h>

#include "plan.h"

namespace ct3d {

namespace {

/* Why the taps of s do not each own their outputs (NULL: they do): every
 * dim needs kernel = stride (with dilation 1 where the kernel is longer
 * than 1), no padding and no output padding, so that output o of a dim is
 * input o / s through tap o mod s and nothing else. */
const char *taps_overlap(const convt3d_shape *s)
{
    for (int d = 0; d < 3; d++) {
        if (s->k[d] != s->s[d])
            return "a kernel size differs from its stride (taps overlap or leave gaps)";
        if (s->k[d] > 1 && s->l[d] != 1)
            return "dilation above 1";
        if (s->p[d] != 0 || s->op[d] != 0)
            return "padding or output padding (cropped or bias-only outputs)";
    }
    return nullptr;
}

/* Output channels a block: a multiple of 8 (16-byte weight rows of 16-bit
 * data), every tap of them within kShfBN columns, as even across the blocks
 * as that allows. */
int block_channels(const convt3d_shape *s, int taps)
{
    const long long most = (long long)kShfBN / taps / 8 * 8;
    const long long nocb = ceil_div(s->cog, most);
    const long long ocb = ceil_div(ceil_div(s->cog, nocb), 8) * 8;
    return (int)ocb;
}

} // namespace

bool plan_shuffle(const convt3d_shape *s, int smem_optin, shf_params *p, size_t *smem, char *why,
                  size_t why_size)
{
    memset(p, 0, sizeof *p);
    if (!int_indexable(s, why, why_size))
        return false;
    if (const char *no = taps_overlap(s)) {
        snprintf(why, why_size, "%s", no);
        return false;
    }
    if (s->k_volume > kShfMaxTaps) {
        snprintf(why, why_size, "%lld taps, above %d (a block's columns hold every tap of 8 "
                 "output channels)", (long long)s->k_volume, kShfMaxTaps);
        return false;
    }
    const int bytes = shf_smem_bytes((int)convt3d_dtype_size(s->x_type));
    if (bytes > smem_optin) {
        snprintf(why, why_size, "%d B of shared memory a block, above %d", bytes, smem_optin);
        return false;
    }
    p->groups = (int)s->groups;
    p->cig = (int)s->cig;
    p->cog = (int)s->cog;
    p->taps = (int)s->k_volume;
    for (int d = 0; d < 3; d++) {
        p->k[d] = (int)s->k[d];
        p->in[d] = (int)s->in[d];
    }
    for (int d = 0; d < 2; d++)
        p->xs[d] = s->x_stride[d];
    for (int d = 0; d < 4; d++)
        p->ys[d] = s->y_stride[d];
    p->xm = s->x_stride[4];
    p->yw = s->y_stride[4];
    p->cl = s->layout == CONVT3D_LAYOUT_NDHWC;
    p->ocb = block_channels(s, p->taps);
    p->nocb = (int)ceil_div(s->cog, p->ocb);
    p->ncols = p->taps * p->ocb;
    p->nk = (int)ceil_div(s->cig, kShfBK);
    p->npos = s->in_spatial;
    p->ntm = ceil_div(p->npos, kShfBM);
    const long long blocks = s->n * s->groups * p->ntm * p->nocb;
    if (blocks >= (1LL << 40)) {
        snprintf(why, why_size, "%lld blocks, at most 2^40", blocks);
        return false;
    }
    p->nblocks = blocks;
    *smem = (size_t)bytes;
    return true;
}

/* ---- the registry entries' host side ------------------------------------ */

static int shuffle_entry_math(const cuda_impl &e)
{
    return static_cast<const shuffle_variant *>(e.variant)->math;
}

bool shuffle_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, char *why, size_t why_size)
{
    (void)e;
    shf_params p;
    size_t smem;
    return plan_shuffle(s, lim.smem_optin, &p, &smem, why, why_size);
}

/* Where the walk takes this kernel (first of the tensor-core entries but
 * the few-output kernel's half entries): C_in/G >= kShfMinCig, so that a K
 * step of kShfBK channels is mostly full, at least kShfMinCols (tap, oc)
 * columns, so that the N tile is, and at least kShfMinTaps taps.  H200,
 * bench/NOTES.md round 22 (`--all-kernels`, the kernel_eq_stride class of
 * bench/inputs/classes.txt and unet_up_k2s2, NCDHW): the fastest kernel on
 * all 10 problems with k2 s2 or k(1,2,2) in TF32, 3xTF32 and f16 (unet
 * 0.526 ms TF32 against the implicit-GEMM engine's 0.749 and cuDNN TF32's
 * 0.789; f16 0.404 against 0.837 and cuDNN f16's 0.514); on the pointwise
 * k1 s1 (64 -> 64) the implicit-GEMM engine's tensor-core entries are
 * 1.2-1.4x faster (a tile's 64 columns leave half the warps idle).  Not
 * so in NDHWC, where one tap is taken too: H100, round 29, the same
 * pointwise problem in NDHWC (`--all-kernels`), this kernel 0.029 ms TF32
 * against the walk's phase kernel at 0.054, f16 0.023 against the half
 * MMA's 0.096 (one problem measured); the 10 kernel = stride problems of
 * the class, NDHWC, all fastest here in TF32 and f16. */
constexpr long long kShfMinCig = 16;
constexpr long long kShfMinCols = 64;
constexpr long long kShfMinTaps = 2;

bool shuffle_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                               const device_limits &lim, const cuda_overrides &ov, char *why,
                               size_t why_size)
{
    (void)e;
    (void)ov;
    shf_params p;
    size_t smem;
    if (!plan_shuffle(s, lim.smem_optin, &p, &smem, why, why_size))
        return true;
    if (s->cig < kShfMinCig || s->cog * s->k_volume < kShfMinCols ||
        (s->k_volume < kShfMinTaps && s->layout == CONVT3D_LAYOUT_NCDHW)) {
        snprintf(why, why_size, "automatically with C_in/G >= %lld, C_out/G x taps >= %lld "
                 "and (in NCDHW) >= %lld taps only", kShfMinCig, kShfMinCols, kShfMinTaps);
        return true;
    }
    return false;
}

bool shuffle_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                        const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                        size_t why_size)
{
    (void)ov;
    (void)mode;
    shuffle_plan *sp = family_params<shuffle_plan>(*k);
    memset(sp, 0, sizeof *sp);
    if (!plan_shuffle(s, lim.smem_optin, &sp->p, &k->smem_bytes, why, why_size))
        return false;
    sp->math = shuffle_entry_math(e);
    k->ocb = sp->p.ocb;
    k->nocb = sp->p.nocb;
    k->threads = kShfThreads;
    k->blocks = sp->p.nblocks;
    return true;
}

void shuffle_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    const shf_params &p = family_params<shuffle_plan>(k)->p;
    snprintf(buf, size, "%s: tiles of %d input positions x %d taps x %d output channels, %d K "
             "steps of %d input channels%s, %lld blocks, %zu B shared",
             k.impl->name, kShfBM, p.taps, p.ocb, p.nk, kShfBK,
             p.cl ? " (channels last)" : "", k.blocks, k.smem_bytes);
}

} // namespace ct3d
