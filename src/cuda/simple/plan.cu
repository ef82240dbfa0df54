/* The simple kernels' host side (plan.h): parameters, the phase table and
 * the registry entries' applicability, planning and description. */
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "../igemm/plan.h"

namespace ct3d {

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
        const convt3d_phase ph = convt3d_phase_of(s, d, 0);
        p.in[d] = s->in[d];
        p.out[d] = s->out[d];
        p.k[d] = s->k[d];
        p.s[d] = s->s[d];
        p.p[d] = s->p[d];
        p.dm[d] = ph.dm;
        p.kstep[d] = ph.tap_step;
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
    const long long lim = 1LL << 31; /* 32-bit indices, not CONVT3D_INT_INDEX_LIMIT */
    const bool ndhwc = s->layout == CONVT3D_LAYOUT_NDHWC;
    const long long vecs = ndhwc ? ceil_div(s->cout, 4) : ceil_div(s->out[2], 4);
    bool ok = four_output_threads(s) < lim && s->n < lim && s->cout + 4 < lim &&
              s->k_volume * 4 * 4 * s->cig < lim &&
              (s->in[2] + 4) * s->x_stride[4] + 4 * s->cig * s->x_stride[1] < lim;
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

long long four_output_threads(const convt3d_shape *s)
{
    return s->layout == CONVT3D_LAYOUT_NDHWC
               ? s->n * s->out[0] * s->out[1] * s->out[2] * ceil_div(s->cout, 4)
               : s->n * s->cout * s->out[0] * s->out[1] * ceil_div(s->out[2], 4);
}

namespace {

/* Entries of dim d's table: a stride larger than the output reaches at most
 * out[d] phases (a fuzz finding had a W stride near 2^62). */
bool table_by_o(const convt3d_shape *s, int d) { return s->s[d] > s->out[d]; }

} // namespace

long long phase_table_ints(const convt3d_shape *s)
{
    long long n = 0;
    for (int d = 0; d < 3; d++)
        n += 3 * (table_by_o(s, d) ? s->out[d] : s->s[d]);
    return n;
}

void phase_table_layout(const convt3d_shape *s, long long off[3], int by_o[3])
{
    long long at = 0;
    for (int d = 0; d < 3; d++) {
        off[d] = at;
        by_o[d] = table_by_o(s, d);
        at += 3 * (by_o[d] ? s->out[d] : s->s[d]);
    }
}

void phase_table_fill(const convt3d_shape *s, int *table)
{
    long long at = 0;
    for (int d = 0; d < 3; d++) {
        const bool by_o = table_by_o(s, d);
        const long long count = by_o ? s->out[d] : s->s[d];
        for (long long i = 0; i < count; i++) {
            const long long r = by_o ? (i + s->p[d]) % s->s[d] : i;
            const phase_entry e = phase_entry_of(s, d, r);
            table[at++] = e.taps;
            table[at++] = e.k0;
            table[at++] = e.m0;
        }
    }
}


/* ---- the registry entries' host side ------------------------------------ */

namespace {

/* The depthwise and few-input entries' plan: the four-output kernel with
 * ocb output channels a weight block, 256 threads a block. */
void plan_four_outputs(const convt3d_shape *s, int ocb, cuda_plan *k)
{
    simple_plan *sp = family_params<simple_plan>(*k);
    k->ocb = ocb;
    k->nocb = (int)ceil_div(s->cog, ocb);
    k->threads = 256;
    k->blocks = ceil_div(four_output_threads(s), k->threads);
    fill_simple(s, k->ocb, &sp->p);
    fill_depthwise32(s, &sp->p);
    phase_table_layout(s, sp->p.phase_off, sp->p.phase_by_o);
}

} // namespace

bool depthwise_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                                const device_limits &lim, char *why, size_t why_size)
{
    (void)e;
    (void)lim;
    if (s->cig != 1 || s->cog != 1) {
        snprintf(why, why_size, "not depthwise (C_in/G=%lld, C_out/G=%lld)", (long long)s->cig,
                 (long long)s->cog);
        return false;
    }
    return true;
}

bool depthwise_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                          const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                          size_t why_size)
{
    (void)e;
    (void)lim;
    (void)ov;
    (void)mode;
    (void)why;
    (void)why_size;
    plan_four_outputs(s, 4, k); /* cog = 1 padded to a block of 4 */
    return true;
}

/* The few-input kernel (depthwise32_thread<MT, true>): its own inner loop
 * runs over the C_in/G input channels, so it is meant for few; and it has
 * only the 32-bit path. */
bool fewin_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                            const device_limits &lim, char *why, size_t why_size)
{
    (void)e;
    (void)lim;
    if (s->cig > kFewInMaxCig) {
        snprintf(why, why_size, "C_in/G=%lld > %d: a thread would walk every input channel",
                 (long long)s->cig, kFewInMaxCig);
        return false;
    }
    simple_params p;
    fill_simple(s, 1, &p);
    fill_depthwise32(s, &p);
    if (!p.fast32) {
        snprintf(why, why_size,
                 "needs 32-bit indices, strides <= %d and <= 4 taps a W phase", kMaxPhaseStride);
        return false;
    }
    return true;
}

/* Fewer taps than phases: some outputs get no product and the rest one or
 * two, so y's writes are the work, and the four-output kernel writes whole
 * rows without staging a window (H200, bench/NOTES.md round 21: 7 of 7 such
 * random f32 problems 1.18-2.48x faster than the depthwise tile kernel,
 * which the phase kernel also trailed; at k_volume = the stride product the
 * tile kernel still won 2 of 3).  Half data keep their kernels: not
 * measured. */
bool depthwise_four_preferred(const convt3d_shape *s)
{
    return s->cig == 1 && s->cog == 1 && s->x_type == CONVT3D_F32 &&
           s->layout == CONVT3D_LAYOUT_NCDHW && s->k_volume < s->s[0] * s->s[1] * s->s[2];
}

extern const cuda_impl cuda_f32_fewin_phase_4, cuda_f32_igemm_8x8;

/* One or two input channels a group (not depthwise) where the
 * implicit-GEMM engine would take the problem (or the few-output kernel in
 * its stead, fewout_preferred): the engine's K of C_in/G x taps fills few
 * of its steps, and this kernel's per-thread walk over the taps is short
 * (H200, bench/NOTES.md round 21, every kernel forced on 400 random
 * problems: 14 of the 16 such problems faster, geomean 1.9x; the two
 * slower, 0.89x and 0.98x, had 164-256 output channels and 64-100 taps).
 * Likewise in NDHWC with at most kFewInEngineLastMaxProducts products an
 * output, whatever C_in/G the kernel takes: on the H100 (bench/NOTES.md
 * round 35, seeds 1-2 of --random 400 with every kernel forced) each of the
 * 9 NDHWC problems the engine took with 0.5-5.3 products an output (C_in/G
 * 4-16) ran faster here, 1.25-4.29x (geomean 2.2x); at 12-14 products
 * 1.06-1.18x, from 15 on slower (0.32-0.78x).  In NCDHW the engine won
 * 8 of 8 such problems, one at 1.5 products.  Out of sample (seeds 5-8,
 * H100, A/B): 18 problems changed, 16 faster (1.06-7.42x; 0.95x and 0.97x
 * on two of 8 us), geomean 1.77x, the few-output kernel's among them
 * (fewout_preferred defers to this rule).  Not in TF32 mode, where the
 * window kernel takes the engine's few-input problems (tcwin/plan.cu,
 * tcwin_takes_few_inputs) and was not timed against this kernel. */
static bool short_sums_last(const convt3d_shape *s)
{
    return s->layout == CONVT3D_LAYOUT_NDHWC && s->math != CONVT3D_MATH_TF32 &&
           at_most_products_an_output(s, kFewInEngineLastMaxProducts);
}

bool fewin_preferred_over_engine(const convt3d_shape *s, const device_limits &lim,
                                 const cuda_overrides &ov)
{
    char why[160];
    if ((s->cig > kFewInEngineMaxCig && !short_sums_last(s)) || (s->cig == 1 && s->cog == 1) ||
        !cuda_entry_applicable(cuda_f32_fewin_phase_4, s, lim, why, sizeof why))
        return false;
    return cuda_entry_applicable(cuda_f32_igemm_8x8, s, lim, why, sizeof why) &&
           !igemm_entry_passed_over(cuda_f32_igemm_8x8, s, lim, ov, why, sizeof why);
}

/* The walk's rule: NCDHW with at most one product an output on average
 * (C_in/G x k_volume <= sD sH sW), C_in/G <= kFewInWalkMaxCig, not
 * depthwise (C_in/G = C_out/G = 1: cuda/f32_depthwise_phase_4).  There y's
 * writes are the work, and this kernel's whole-row stores beat the phase
 * kernel and the implicit-GEMM engine (H200, bench/NOTES.md round 20: 14 of
 * 14 such random problems 1.5-3.0x faster; k2 s2 with 64-128 outputs 4-9%
 * slower).  With more products a thread's serial walk over taps and
 * channels loses (0.03-0.9x).  In NDHWC its four channels' weights are not
 * coalesced, and with many output channels a group it lost to the phase
 * kernel even there; with 2-8 (kFewInLastMaxCog) a position's channels are
 * one or two 16-byte words, and every such NDHWC problem of 800 random ones
 * (H100, bench/NOTES.md round 34: `--random 400 --all-kernels`, seeds 1 and
 * 2) ran faster here than on the kernel the walk gave it, 1.18-4.5x (14
 * problems, geomean 1.9x). */
bool fewin_entry_passed_over(const cuda_impl &e, const convt3d_shape *s,
                             const device_limits &lim, const cuda_overrides &ov, char *why,
                             size_t why_size)
{
    (void)e;
    const long long svol = s->s[0] * s->s[1] * s->s[2];
    if (fewin_preferred_over_engine(s, lim, ov))
        return false;
    if (s->cig == 1 && s->cog == 1) {
        snprintf(why, why_size, "depthwise: the depthwise build of the same body packs its "
                                "weights for it (0.94-1.00x its time, H200, round 20)");
        return true;
    }
    const bool layout_ok = s->layout == CONVT3D_LAYOUT_NCDHW ||
                           (s->cog >= 2 && s->cog <= kFewInLastMaxCog);
    if (!layout_ok || s->cig > kFewInWalkMaxCig || !at_most_one_product_an_output(s)) {
        snprintf(why, why_size,
                 "the walk takes it for C_in/G <= %d with C_in/G x k_volume <= the stride "
                 "product (here %lld x %lld vs %lld), in NDHWC only for C_out/G 2-%d, or for "
                 "C_in/G <= %d where the implicit-GEMM engine would take the problem",
                 kFewInWalkMaxCig, (long long)s->cig, (long long)s->k_volume, svol,
                 kFewInLastMaxCog, kFewInEngineMaxCig);
        return true;
    }
    return false;
}

bool fewin_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                      const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                      size_t why_size)
{
    (void)e;
    (void)lim;
    (void)ov;
    (void)mode;
    (void)why;
    (void)why_size;
    plan_four_outputs(s, 1, k);
    return true;
}

bool generic_entry_applicable(const cuda_impl &e, const convt3d_shape *s,
                              const device_limits &lim, char *why, size_t why_size)
{
    (void)e;
    (void)s;
    (void)lim;
    (void)why;
    (void)why_size;
    return true;
}

bool generic_entry_plan(const cuda_impl &e, const convt3d_shape *s, const device_limits &lim,
                        const cuda_overrides &ov, plan_mode mode, cuda_plan *k, char *why,
                        size_t why_size)
{
    (void)e;
    (void)lim;
    (void)ov;
    (void)mode;
    (void)why;
    (void)why_size;
    simple_plan *sp = family_params<simple_plan>(*k);
    k->ocb = (int)((s->cog + 3) / 4 * 4);
    k->nocb = 1;
    k->threads = 256;
    k->blocks = ceil_div(s->y_elems, k->threads);
    fill_simple(s, k->ocb, &sp->p);
    phase_table_layout(s, sp->p.phase_off, sp->p.phase_by_o);
    return true;
}

void simple_entry_describe(const cuda_plan &k, char *buf, size_t size)
{
    snprintf(buf, size, "%s: %d threads x %lld blocks%s%s%s", k.impl->name, k.threads, k.blocks,
             family_params<simple_plan>(k)->p.fast32 ? ", 32-bit indices" : "",
             k.note[0] ? "; " : "", k.note);
}

} // namespace ct3d
