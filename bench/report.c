/* The readable table: one row per implementation and device, a problem's
 * rows together, footnotes for the marks used, and the summary lines. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oracle.h"
#include "results.h"

#define ROW "%-28s %-7s %-20s %-6s %11s %9s %7s %9s %9s %7s  %s\n"

int impl_mismatch(const impl_result *r)
{
    return r->state == IMPL_OK && r->verify.checked && !r->verify.ok;
}

static int usable(const impl_result *r) { return r->state == IMPL_OK && !impl_mismatch(r); }

int ours_index(const impl_result *impls, int n)
{
    for (int i = 0; i < n; i++)
        if (!impls[i].baseline)
            return i;
    return -1;
}

int best_baseline(const impl_result *impls, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (impls[i].baseline && usable(&impls[i]) &&
            (best < 0 || impls[i].time.median_ms < impls[best].time.median_ms))
            best = i;
    return best;
}

double speedup_vs(const impl_result *impls, int n, int b)
{
    const int o = ours_index(impls, n);
    if (o < 0 || b < 0 || b >= n || !usable(&impls[o]) || !usable(&impls[b]) ||
        impls[o].time.median_ms <= 0)
        return 0;
    return impls[b].time.median_ms / impls[o].time.median_ms;
}

double speedup_of(const impl_result *impls, int n)
{
    return speedup_vs(impls, n, best_baseline(impls, n));
}

/* Footnote marks used so far in the table. */
static int used_few_reps, used_no_bias, used_sampled, used_vs, used_cpu_fp32, used_3xtf32;
static int used_no_half_floor;

/* The ceilings of a device, as the header prints them. */
static void floor_text(const device_run *d, char *buf, size_t size)
{
    const floor_rates *f = &d->floor;
    if (!f->valid) {
        snprintf(buf, size, "floor unknown (%s)", d->floor_err);
        return;
    }
    size_t len = (size_t)snprintf(buf, size, "floor %.1f GFLOP/s fp32 FMA", f->gflops);
    if (f->has_tc && len < size) {
        if (f->tc_valid)
            len += (size_t)snprintf(buf + len, size - len,
                                    ", tensor cores (mma.sync) %.0f TF32 / %.0f f16 / %.0f bf16 "
                                    "GFLOP/s",
                                    f->tf32_gflops, f->f16_gflops, f->bf16_gflops);
        else
            len += (size_t)snprintf(buf + len, size - len,
                                    ", tensor-core ceilings not measured (--calibrate)");
    }
    if (len < size)
        snprintf(buf + len, size - len, ", %.1f GB/s copy (%s)", f->gbps, f->source);
}

void report_header(FILE *f, const device_run *devs, int n_dev, const bench_options *o,
                   const char *extra)
{
    fprintf(f, "convt3d-bench %s: ConvTranspose3d, %s data, math %s (mode %s), median of timed runs "
               "after warm-up\n",
            convt3d_version(), convt3d_dtype_name(o->dtype), mode_math_name(o->math),
            prec_name(mode_prec(o->dtype, o->math)));
    for (int i = 0; i < n_dev; i++) {
        const device_run *d = &devs[i];
        char floor[512];
        if (!d->available) {
            fprintf(f, "  %-7s skipped: %s\n", d->name, d->why);
            continue;
        }
        floor_text(d, floor, sizeof floor);
        if (d->is_cuda)
            fprintf(f, "  %-7s %s; %s\n", d->name, d->model, floor);
        else
            fprintf(f, "  %-7s %s, %d OpenMP thread%s; %s\n", d->name, d->model, d->threads,
                    d->threads == 1 ? "" : "s", floor);
    }
    if (extra && *extra)
        fprintf(f, "  %s\n", extra);
    fprintf(f, "  verification: convt3d_reference (f32 problem on the rounded data, float64 "
               "sums) on fresh uniform [-1,1) data (seed %llu); pass: relative L2 error <= the "
               "row's tolerance (fp32, 3xtf32 1e-5; tf32, f16 1e-3; bf16 8e-3)",
            (unsigned long long)o->seed);
    if (o->tol >= 0)
        fprintf(f, ", at most --tol=%.0e", o->tol);
    fprintf(f, "\n");
    if (o->reps)
        fprintf(f, "  timing: %d timed runs per measurement after warm-up (--reps)\n\n", o->reps);
    else
        fprintf(f, "  timing: warm-up, then timed runs for --budget=%g s per measurement (at "
                   "least 3, or 1 if a run takes longer)\n\n",
                o->budget_s);
    used_few_reps = used_no_bias = used_sampled = used_vs = used_cpu_fp32 = used_3xtf32 = 0;
    used_no_half_floor = 0;
}

void report_table_head(FILE *f)
{
    fprintf(f, ROW, "shape", "device", "impl", "mode", "median ms", "GFLOP/s", "%floor",
            "speed-up", "rel L2", "tol", "check");
    fprintf(f, ROW, "----------------------------", "-------", "--------------------", "------",
            "-----------", "---------", "-------", "---------", "---------", "-------", "-------");
}

static void shorten(const char *label, char *buf, size_t width)
{
    if (strlen(label) <= width)
        snprintf(buf, width + 1, "%s", label);
    else
        snprintf(buf, width + 1, "%.*s...", (int)(width - 3), label);
}

static const char *state_word(impl_state s)
{
    switch (s) {
    case IMPL_SKIPPED: return "skipped";
    case IMPL_UNSUPPORTED: return "unsupported";
    case IMPL_FAILED: return "FAILED";
    default: return "";
    }
}

/* The speed-up cell: convt3d's against the best baseline in its own row;
 * in a baseline's row "best", or convt3d's speed-up against that one in
 * parentheses. */
static void speedup_cell(const impl_result *impls, int n, int i, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!impls[i].baseline) {
        const double s = speedup_of(impls, n);
        snprintf(buf, size, s > 0 ? "%.2fx" : "-", s);
    } else if (best_baseline(impls, n) == i) {
        snprintf(buf, size, "best");
    } else {
        const double s = speedup_vs(impls, n, i);
        if (s > 0) {
            snprintf(buf, size, "(%.2fx)", s);
            used_vs = 1;
        }
    }
}

static void impl_row(FILE *f, const char *shape, const char *dev, const case_result *cr,
                     const device_run *d, const impl_result *impls, int n, int i, int verbose)
{
    const impl_result *r = &impls[i];
    char name[48], med[32], gf[32], pct[32], sp[32], err[32], tol[16], check[32];
    snprintf(name, sizeof name, "%s%s", r->name, r->without_bias ? " (no bias)" : "");
    if (r->without_bias)
        used_no_bias = 1;
    if (!d->is_cuda && !r->baseline && r->prec == PREC_FP32 && cr->math != CONVT3D_MATH_F32)
        used_cpu_fp32 = 1;
    if (r->state != IMPL_OK) {
        fprintf(f, "%-28s %-7s %-20s %-6s %s: %s\n", shape, dev, name, prec_name(r->prec),
                state_word(r->state), r->note);
        return;
    }
    const double ms = r->time.median_ms;
    snprintf(med, sizeof med, "%.3f%s", ms, r->time.reps < 3 ? "*" : "");
    if (r->time.reps < 3)
        used_few_reps = 1;
    const double gflops = cr->flops / (ms * 1e-3) * 1e-9;
    snprintf(gf, sizeof gf, gflops < 10 ? "%.2f" : "%.1f", gflops);
    const double p = calib_floor_pct(&d->floor, r->prec, cr->flops, cr->bytes, ms * 1e-3);
    if (p >= 0)
        snprintf(pct, sizeof pct, "%.1f%%", p);
    else
        snprintf(pct, sizeof pct, "-");
    if (p >= 0 && d->is_cuda && r->prec == PREC_3XTF32)
        used_3xtf32 = 1;
    if (p < 0 && !d->is_cuda && d->floor.valid)
        used_no_half_floor = 1;
    speedup_cell(impls, n, i, sp, sizeof sp);
    snprintf(tol, sizeof tol, "%.0e", r->tol);
    if (!r->verify.checked) {
        snprintf(err, sizeof err, "skipped");
        snprintf(check, sizeof check, "skipped");
    } else {
        snprintf(err, sizeof err, "%.1e", r->verify.rel_l2);
        snprintf(check, sizeof check, "%s%s", r->verify.ok ? "" : "FAIL ",
                 cr->vmode == VERIFY_SAMPLED ? "sampled" : "full");
        if (cr->vmode == VERIFY_SAMPLED)
            used_sampled = 1;
    }
    fprintf(f, ROW, shape, dev, name, prec_name(r->prec), med, gf, pct, sp, err, tol, check);
    if (!r->verify.ok && r->verify.checked)
        fprintf(f, "%37s MISMATCH: relative L2 error %.3e > tolerance %.0e (%s), max abs %.3e, "
                   "%lld non-finite outputs\n",
                "", r->verify.rel_l2, r->tol, prec_name(r->prec), r->verify.max_abs,
                (long long)r->verify.nonfinite);
    if (r->host_us > 0)
        fprintf(f, "%37s host cost %.2f us per execute_on_stream call (median of 5 rounds of %d "
                   "calls queued without synchronising)\n",
                "", r->host_us, r->host_calls);
    if (verbose) {
        fprintf(f, "%37s min %.3f  max %.3f ms, %d timed + %d warm-up runs; %s\n", "",
                r->time.min_ms, r->time.max_ms, r->time.reps, r->time.warmups,
                r->detail[0] ? r->detail : "-");
        if (r->verify.checked)
            fprintf(f, "%37s relative L2 error %.2e, max abs error %.2e, max |y - ref| / max "
                       "|ref| %.2e\n",
                    "", r->verify.rel_l2, r->verify.max_abs, r->verify.max_rel);
        if (r->staged.valid)
            fprintf(f, "%37s staged (host pointers, copies included): median %.3f ms, min %.3f, "
                       "max %.3f\n",
                    "", r->staged.median_ms, r->staged.min_ms, r->staged.max_ms);
    }
}

/* The check cell of a row: "full", "sampled", "skipped", "FAIL ..." */
static void check_text(const case_result *cr, const impl_result *r, char *buf, size_t size)
{
    if (!r->verify.checked)
        snprintf(buf, size, "skipped");
    else
        snprintf(buf, size, "%s%s", r->verify.ok ? "" : "FAIL ",
                 cr->vmode == VERIFY_SAMPLED ? "sampled" : "full");
}

void report_forced(FILE *f, const case_result *cr, int d)
{
    if (!cr->forced[d])
        return;
    oracle_case oc;
    oracle_of(cr, d, &oc);
    fprintf(f, "%37s every kernel that applies, forced (x auto: its median / the automatic "
               "row's):\n",
            "");
    if (!cr->n_forced[d])
        fprintf(f, "%37s   none applies\n", "");
    for (int i = 0; i < cr->n_forced[d]; i++) {
        const impl_result *r = &cr->forced[d][i];
        if (r->state != IMPL_OK) {
            fprintf(f, "%37s   %-42s %s: %s\n", "", r->detail, state_word(r->state), r->note);
            continue;
        }
        char med[32], rel[16] = "-", check[32];
        const char *mark = "";
        snprintf(med, sizeof med, "%.3f%s", r->time.median_ms, r->time.reps < 3 ? "*" : "");
        if (r->time.reps < 3)
            used_few_reps = 1;
        if (oc.auto_ms > 0)
            snprintf(rel, sizeof rel, "%.2fx", r->time.median_ms / oc.auto_ms);
        check_text(cr, r, check, sizeof check);
        if (i == oc.auto_forced)
            mark = oc.valid && oc.best_ms == oc.auto_ms ? "<- automatic, fastest" : "<- automatic";
        else if (i == oc.winner && oc.valid && oc.best_ms < oc.auto_ms)
            mark = "<- fastest";
        fprintf(f, "%37s   %-42s %11s %7s %-12s%s%s\n", "", r->detail, med, rel, check,
                *mark ? " " : "", mark);
        if (!r->verify.ok && r->verify.checked)
            fprintf(f, "%37s   MISMATCH: relative L2 error %.3e > tolerance %.0e (%s)\n", "",
                    r->verify.rel_l2, r->tol, prec_name(r->prec));
    }
}

void report_case(FILE *f, const case_result *cr, const device_run *devs, int n_dev, int verbose)
{
    const bench_case *bc = cr->bc;
    char shape[40];
    shorten(bc->label, shape, 28);
    if (verbose) {
        fprintf(f, "%s  (%s)\n", bc->label, bc->origin);
        if (bc->text[0])
            fprintf(f, "  given:      %s\n", bc->text);
        if (bc->canonical[0])
            fprintf(f, "  canonical:  %s\n", bc->canonical);
        if (bc->kind == CASE_RUN)
            fprintf(f, "  PyTorch:    %s\n  work:       %.3f GFLOP, %.1f MB moved at least\n",
                    bc->pytorch, cr->flops * 1e-9, cr->bytes * 1e-6);
        if (cr->ran) {
            fprintf(f, "  verified:   %s (%s)",
                    cr->vmode == VERIFY_FULL      ? "in full"
                    : cr->vmode == VERIFY_SAMPLED ? "on a sample"
                                                  : "no",
                    cr->vwhy);
            if (cr->vmode != VERIFY_SKIPPED)
                fprintf(f, ", the reference took %.2f s", cr->ref_seconds);
            fprintf(f, "\n");
        }
    }
    if (bc->kind != CASE_RUN) {
        fprintf(f, "%-28s %s\n", shape, bc->reason);
        return;
    }
    if (!cr->ran) {
        fprintf(f, "%-28s %s%s\n", shape, cr->error ? "ERROR: " : "skipped: ", cr->skip);
        return;
    }
    int first = 1;
    for (int d = 0; d < n_dev; d++) {
        if (!devs[d].available)
            continue;
        for (int i = 0; i < cr->n_impl[d]; i++) {
            impl_row(f, first ? shape : "", i == 0 ? devs[d].name : "", cr, &devs[d],
                     cr->impl[d], cr->n_impl[d], i, verbose);
            first = 0;
        }
        report_forced(f, cr, d);
    }
    fflush(f);
}

void compare_device(const case_result *res, size_t n, int d, comparison *out)
{
    memset(out, 0, sizeof *out);
    double log_sum = 0;
    for (size_t c = 0; c < n; c++) {
        if (!res[c].ran)
            continue;
        out->shapes++;
        const double s = speedup_of(res[c].impl[d], res[c].n_impl[d]);
        if (s <= 0)
            continue; /* no usable baseline, or convt3d failed or was wrong */
        out->compared++;
        out->faster += s > 1;
        log_sum += log(s);
    }
    out->geomean = out->compared ? exp(log_sum / out->compared) : 0;
}

static void compare_line(FILE *f, const device_run *dv, const case_result *res, size_t n, int d)
{
    const char *dev = dv->name, *what = dv->is_cuda ? "cuDNN" : "oneDNN";
    comparison cmp;
    compare_device(res, n, d, &cmp);
    if (!cmp.compared && cmp.shapes) {
        /* say why from the first baseline's note */
        const char *why = "";
        for (size_t c = 0; c < n && !*why; c++)
            for (int i = 0; i < res[c].n_impl[d] && !*why; i++)
                if (res[c].impl[d][i].baseline && res[c].impl[d][i].state != IMPL_OK)
                    why = res[c].impl[d][i].note;
        if (!*why)
            why = "convt3d failed or was wrong where the baseline ran";
        fprintf(f, "%s: 0/%d shapes faster than %s: no comparison possible%s%s\n", dev,
                cmp.shapes, what, *why ? " -- " : "", why);
        return;
    }
    fprintf(f, "%s: %d/%d shapes faster than %s", dev, cmp.faster, cmp.shapes, what);
    if (cmp.compared < cmp.shapes)
        fprintf(f, " (%d without a usable result of one side)", cmp.shapes - cmp.compared);
    if (cmp.compared)
        fprintf(f, "; geometric-mean speed-up %.2fx%s", cmp.geomean,
                dv->is_cuda ? "" : " (vs the better of its two layouts)");
    fprintf(f, "\n");
}

void report_summary(FILE *f, const case_result *res, size_t n, const device_run *devs, int n_dev,
                    const bench_options *o)
{
    fprintf(f, "\n");
    if (used_few_reps)
        fprintf(f, "  * fewer than 3 timed runs: one run takes longer than --budget=%g s\n",
                o->budget_s);
    if (used_no_bias)
        fprintf(f, "  (no bias) cuDNN's backward-data has no bias: timed without it, checked "
                   "against the reference minus the bias\n");
    if (used_sampled)
        fprintf(f, "  sampled: the reference was run on one image and the last output "
                   "channels of each group (-v shows which; --verify checks all)\n");
    if (used_vs)
        fprintf(f, "  (N.NNx) in a baseline's row: convt3d's speed-up against that baseline (the "
                   "speed-up column and the summaries use the best one)\n");
    if (used_cpu_fp32)
        fprintf(f, "  mode fp32 on the cpu: the CPU computes every math mode in full fp32, so its "
                   "f32 rows are held to fp32's tolerance and FMA floor\n");
    if (used_no_half_floor)
        fprintf(f, "  %%floor - on the cpu: the CPU has dot products of the half type (AVX512_BF16 "
                   "or AVX512_FP16), whose ceiling the bench does not measure; the fp32 FMA "
                   "rate would be no bound\n");
    if (used_3xtf32)
        fprintf(f, "  3xtf32 %%floor: useful flops against a third of the TF32 ceiling (three TF32 "
                   "products a useful product)\n");
    fprintf(f, "  mode = the precision a row computes in (its tolerance, and on a GPU its "
               "ceiling); rel L2 = ||y - ref|| / ||ref||; tol = the row's bound; speed-up = the "
               "best baseline's median / convt3d's, on the same device\n\n");

    int have_cuda = 0;
    for (int d = 0; d < n_dev; d++) {
        if (devs[d].is_cuda)
            have_cuda = 1;
        if (!devs[d].available) {
            fprintf(f, "%s: not run, no comparison with %s (%s)\n", devs[d].name,
                    devs[d].is_cuda ? "cuDNN" : "oneDNN", devs[d].why);
            continue;
        }
        if (!o->baselines) {
            fprintf(f, "%s: baselines not run (--no-baselines)\n", devs[d].name);
            continue;
        }
        compare_line(f, &devs[d], res, n, d);
    }
    if (!have_cuda)
        fprintf(f, "cuda: not asked for (--device), no comparison with cuDNN\n");

    int full = 0, sampled = 0, skipped = 0, bad = 0, errors = 0, inexpressible = 0;
    int base_failed = 0;
    for (size_t c = 0; c < n; c++) {
        if (res[c].bc->kind == CASE_NOT_EXPRESSIBLE)
            inexpressible++;
        else if (res[c].bc->kind != CASE_RUN || res[c].error)
            errors++;
        if (!res[c].ran)
            continue;
        full += res[c].vmode == VERIFY_FULL;
        sampled += res[c].vmode == VERIFY_SAMPLED;
        skipped += res[c].vmode == VERIFY_SKIPPED;
        for (int d = 0; d < n_dev; d++)
            for (int i = 0; i < res[c].n_impl[d]; i++) {
                const impl_result *r = &res[c].impl[d][i];
                bad += impl_mismatch(r);
                if (r->state == IMPL_FAILED) {
                    errors += !r->baseline;
                    base_failed += r->baseline;
                }
            }
        for (int d = 0; d < n_dev; d++)
            for (int i = 0; i < res[c].n_forced[d]; i++) {
                bad += impl_mismatch(&res[c].forced[d][i]);
                errors += res[c].forced[d][i].state == IMPL_FAILED;
            }
    }
    fprintf(f, "verification: %d problem%s in full, %d sampled, %d not verified; %s\n", full,
            full == 1 ? "" : "s", sampled, skipped,
            bad ? "MISMATCHES found (exit status 1)" : "no mismatch");
    if (inexpressible)
        fprintf(f, "%d descriptor%s not expressible in PyTorch's terms (reported, not "
                   "errors)\n",
                inexpressible, inexpressible == 1 ? "" : "s");
    if (base_failed)
        fprintf(f, "%d baseline run%s failed (no comparison there; see the table)\n",
                base_failed, base_failed == 1 ? "" : "s");
    if (errors)
        fprintf(f, "%d error%s (malformed/invalid problems or failed convt3d runs; exit status "
                   "2)\n",
                errors, errors == 1 ? "" : "s");
}
