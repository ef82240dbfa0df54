/* Verification: choosing what to check, running the reference on it, and
 * comparing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "timing.h"
#include "verify.h"

/* floor(a / b) for b > 0 and any sign of a. */
static int64_t floor_div64(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Pairs (input i, tap k) of dim d whose output o = i*s - p + k*l lands in
 * [0, out): the contributions padding does not crop. */
static double dim_pairs(const convt3d_problem *p, int d, int64_t out)
{
    const int64_t in = p->in_size[d], s = p->stride[d], pad = p->padding[d];
    const int64_t l = p->dilation[d];
    double pairs = 0.0;
    for (int64_t k = 0; k < p->kernel[d]; k++) {
        const int64_t base = k * l - pad; /* o = i*s + base */
        const int64_t lo = base >= 0 ? 0 : (-base) / s + ((-base) % s != 0);
        int64_t hi = floor_div64(out - 1 - base, s);
        if (hi > in - 1)
            hi = in - 1;
        if (hi >= lo)
            pairs += (double)(hi - lo + 1);
    }
    return pairs;
}

double problem_macs(const convt3d_problem *p)
{
    int64_t out[3];
    if (convt3d_output_dims(p, out) != CONVT3D_SUCCESS)
        return 0.0;
    return (double)p->batch * (double)p->in_channels * (double)(p->out_channels / p->groups) *
           dim_pairs(p, 0, out[0]) * dim_pairs(p, 1, out[1]) * dim_pairs(p, 2, out[2]);
}

void verify_plan_choose(const convt3d_problem *p, int want, double budget_macs, verify_plan *vp)
{
    memset(vp, 0, sizeof *vp);
    const int64_t n = p->batch, cog = p->out_channels / p->groups;
    const double macs = problem_macs(p);
    vp->n_first = 0;
    vp->n_count = n;
    vp->oc_first = 0;
    vp->oc_count = cog;
    vp->macs = macs;
    if (want == 0) {
        vp->mode = VERIFY_SKIPPED;
        snprintf(vp->why, sizeof vp->why, "--no-verify");
        return;
    }
    if (want == 1 || macs <= budget_macs) {
        vp->mode = VERIFY_FULL;
        snprintf(vp->why, sizeof vp->why, "all outputs");
        return;
    }
    /* One image (the last: a wrong batch offset shows), then as many of the
     * last channels per group as the budget allows. */
    const double per_channel = macs / (double)n / (double)cog;
    int64_t oc = (int64_t)(budget_macs / per_channel);
    if (oc < 1) {
        vp->mode = VERIFY_SKIPPED;
        snprintf(vp->why, sizeof vp->why,
                 "even one output channel of one image needs %.1f GMAC of reference work "
                 "(budget %.1f GMAC: --verify-gmac, or --verify for all)",
                 per_channel * 1e-9, budget_macs * 1e-9);
        return;
    }
    if (oc > cog)
        oc = cog;
    vp->mode = VERIFY_SAMPLED;
    vp->n_first = n - 1;
    vp->n_count = 1;
    vp->oc_first = cog - oc;
    vp->oc_count = oc;
    vp->macs = per_channel * (double)oc;
    if (oc == cog)
        snprintf(vp->why, sizeof vp->why, "image n=%lld of %lld, all channels",
                 (long long)(n - 1), (long long)n);
    else
        snprintf(vp->why, sizeof vp->why,
                 "image n=%lld of %lld, output channels %lld..%lld of each group's %lld",
                 (long long)(n - 1), (long long)n, (long long)(cog - oc), (long long)(cog - 1),
                 (long long)cog);
}

/* Element offset of (n, c, spatial index sp) in a tensor of c_total channels
 * and sp_total positions per channel. */
static int64_t offset_of(convt3d_layout layout, int64_t c_total, int64_t sp_total, int64_t n,
                         int64_t c, int64_t sp)
{
    if (layout == CONVT3D_LAYOUT_NDHWC)
        return (n * sp_total + sp) * c_total + c;
    return (n * c_total + c) * sp_total + sp;
}

static void skip_plan(verify_plan *vp, const char *why)
{
    vp->mode = VERIFY_SKIPPED;
    snprintf(vp->why, sizeof vp->why, "%s", why);
}

int verify_run_reference(verify_plan *vp, const convt3d_problem *p, const float *x,
                         const float *w, const float *bias, char *err, size_t err_size)
{
    if (vp->mode == VERIFY_SKIPPED)
        return 0;
    const int64_t g_count = p->groups;
    const int64_t cog = p->out_channels / g_count;
    const int64_t kvol = p->kernel[0] * p->kernel[1] * p->kernel[2];
    const int64_t in_sp = p->in_size[0] * p->in_size[1] * p->in_size[2];
    convt3d_problem sub = *p;
    sub.batch = vp->n_count;
    sub.out_channels = g_count * vp->oc_count;
    int64_t x_elems, w_elems, y_elems;
    if (convt3d_tensor_elems(&sub, &x_elems, &w_elems, &y_elems) != CONVT3D_SUCCESS) {
        snprintf(err, err_size, "reference sub-problem: %s", convt3d_last_error());
        skip_plan(vp, "the reference sub-problem is invalid");
        return -1;
    }
    const int sliced = vp->oc_count != cog;
    float *ws = sliced ? data_alloc(w_elems) : NULL;
    float *bs = sliced && p->has_bias ? data_alloc(sub.out_channels) : NULL;
    float *y = data_alloc(y_elems);
    if (!y || (sliced && !ws) || (sliced && p->has_bias && !bs)) {
        data_free(ws);
        data_free(bs);
        data_free(y);
        snprintf(err, err_size, "out of host memory for the reference output (%lld floats)",
                 (long long)y_elems);
        skip_plan(vp, "out of host memory for the reference");
        return -1;
    }
    if (sliced) {
        /* weight [C_in][Cog][kvol] -> [C_in][oc_count][kvol]; bias likewise */
        for (int64_t ci = 0; ci < p->in_channels; ci++)
            memcpy(ws + ci * vp->oc_count * kvol, w + (ci * cog + vp->oc_first) * kvol,
                   (size_t)(vp->oc_count * kvol) * sizeof(float));
        if (bs)
            for (int64_t g = 0; g < g_count; g++)
                memcpy(bs + g * vp->oc_count, bias + g * cog + vp->oc_first,
                       (size_t)vp->oc_count * sizeof(float));
    }
    const float *xs = x + vp->n_first * p->in_channels * in_sp; /* images are contiguous */
    const double t0 = bench_now();
    const convt3d_status st =
        convt3d_reference(&sub, xs, sliced ? ws : w, sliced ? bs : bias, y);
    vp->ref_seconds = bench_now() - t0;
    data_free(ws);
    data_free(bs);
    if (st != CONVT3D_SUCCESS) {
        data_free(y);
        snprintf(err, err_size, "convt3d_reference failed: %s: %s", convt3d_status_string(st),
                 convt3d_last_error());
        skip_plan(vp, "the reference failed");
        return -1;
    }
    vp->sub = sub;
    vp->ref = y;
    vp->ref_elems = y_elems;
    return 0;
}

verify_result verify_compare(const verify_plan *vp, const convt3d_problem *p, const float *y,
                             const float *add_bias, double tol)
{
    verify_result r;
    memset(&r, 0, sizeof r);
    if (vp->mode == VERIFY_SKIPPED || !vp->ref)
        return r;
    int64_t out[3];
    convt3d_output_dims(p, out);
    const int64_t sp_total = out[0] * out[1] * out[2];
    const int64_t g_count = p->groups, cog = p->out_channels / g_count;
    const int64_t sub_c = g_count * vp->oc_count;
    double diff2 = 0, ref2 = 0, max_abs = 0, max_ref = 0;
    int64_t nonfinite = 0;
    for (int64_t n = 0; n < vp->n_count; n++)
        for (int64_t g = 0; g < g_count; g++)
            for (int64_t j = 0; j < vp->oc_count; j++) {
                const int64_t co = g * cog + vp->oc_first + j, cs = g * vp->oc_count + j;
                const double b = add_bias ? (double)add_bias[co] : 0.0;
                for (int64_t sp = 0; sp < sp_total; sp++) {
                    const double ref =
                        vp->ref[offset_of(p->layout, sub_c, sp_total, n, cs, sp)];
                    const double got = (double)y[offset_of(p->layout, p->out_channels, sp_total,
                                                           vp->n_first + n, co, sp)] + b;
                    if (!isfinite(got)) {
                        nonfinite++;
                        continue;
                    }
                    const double d = fabs(got - ref);
                    diff2 += d * d;
                    ref2 += ref * ref;
                    if (d > max_abs)
                        max_abs = d;
                    if (fabs(ref) > max_ref)
                        max_ref = fabs(ref);
                }
            }
    r.checked = 1;
    r.nonfinite = nonfinite;
    r.max_abs = max_abs;
    r.rel_l2 = sqrt(diff2) / (ref2 > 0 ? sqrt(ref2) : 1.0);
    r.max_rel = max_abs / (max_ref > 0 ? max_ref : 1.0);
    if (nonfinite)
        r.rel_l2 = r.max_rel = INFINITY;
    r.ok = nonfinite == 0 && r.rel_l2 <= tol;
    return r;
}

void verify_plan_free(verify_plan *vp)
{
    data_free(vp->ref);
    vp->ref = NULL;
}
