/* The JSON report: every figure of the run, for scripts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oracle.h"
#include "results.h"

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* A number, or null when it is not finite. */
static void jnum(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

static void jtriple(FILE *f, const int64_t v[3])
{
    fprintf(f, "[%lld, %lld, %lld]", (long long)v[0], (long long)v[1], (long long)v[2]);
}

static void problem_json(FILE *f, const convt3d_problem *p)
{
    fprintf(f, "{\"batch\": %lld, \"in_channels\": %lld, \"out_channels\": %lld, \"groups\": %lld",
            (long long)p->batch, (long long)p->in_channels, (long long)p->out_channels,
            (long long)p->groups);
    fputs(", \"in_size\": ", f);
    jtriple(f, p->in_size);
    fputs(", \"kernel\": ", f);
    jtriple(f, p->kernel);
    fputs(", \"stride\": ", f);
    jtriple(f, p->stride);
    fputs(", \"padding\": ", f);
    jtriple(f, p->padding);
    fputs(", \"output_padding\": ", f);
    jtriple(f, p->output_padding);
    fputs(", \"dilation\": ", f);
    jtriple(f, p->dilation);
    fprintf(f, ", \"layout\": \"%s\", \"bias\": %s}",
            p->layout == CONVT3D_LAYOUT_NDHWC ? "ndhwc" : "ncdhw", p->has_bias ? "true" : "false");
}

static void stats_json(FILE *f, const timing_stats *t)
{
    fputs("{\"median_ms\": ", f);
    jnum(f, t->median_ms);
    fputs(", \"min_ms\": ", f);
    jnum(f, t->min_ms);
    fputs(", \"max_ms\": ", f);
    jnum(f, t->max_ms);
    fprintf(f, ", \"reps\": %d, \"warmups\": %d}", t->reps, t->warmups);
}

static const char *state_name(impl_state s)
{
    switch (s) {
    case IMPL_OK: return "ok";
    case IMPL_SKIPPED: return "skipped";
    case IMPL_UNSUPPORTED: return "unsupported";
    default: return "failed";
    }
}

static void impl_json(FILE *f, const case_result *cr, const device_run *d, const impl_result *r,
                      const impl_result *all, int n)
{
    fputs("{\"name\": ", f);
    jstr(f, r->name);
    fprintf(f, ", \"baseline\": %s, \"state\": \"%s\", \"note\": ", r->baseline ? "true" : "false",
            state_name(r->state));
    jstr(f, r->note);
    fputs(", \"detail\": ", f);
    jstr(f, r->detail);
    fprintf(f, ", \"without_bias\": %s, \"mode\": \"%s\", \"tol\": ",
            r->without_bias ? "true" : "false", prec_name(r->prec));
    jnum(f, r->tol);
    if (r->state == IMPL_OK) {
        const double s = r->time.median_ms * 1e-3;
        fputs(", \"time\": ", f);
        stats_json(f, &r->time);
        fputs(", \"gflops\": ", f);
        jnum(f, cr->flops / s * 1e-9);
        fputs(", \"floor_pct\": ", f);
        const double p = calib_floor_pct(&d->floor, r->prec, cr->flops, cr->bytes, s);
        if (p >= 0)
            jnum(f, p);
        else
            fputs("null", f);
        if (r->host_us > 0) {
            fputs(", \"host_us_per_call\": ", f);
            jnum(f, r->host_us);
        }
        if (r->staged.valid) {
            fputs(", \"staged_time\": ", f);
            stats_json(f, &r->staged);
        }
        if (!r->baseline) {
            const double sp = speedup_of(all, n);
            const int b = best_baseline(all, n);
            fputs(", \"speedup\": ", f);
            if (sp > 0)
                jnum(f, sp);
            else
                fputs("null", f);
            fputs(", \"speedup_vs\": ", f);
            if (b >= 0)
                jstr(f, all[b].name);
            else
                fputs("null", f);
        } else {
            /* convt3d's speed-up against this baseline (e.g. each cuDNN row of 3xtf32) */
            const double sp = speedup_vs(all, n, (int)(r - all));
            fputs(", \"convt3d_speedup\": ", f);
            if (sp > 0)
                jnum(f, sp);
            else
                fputs("null", f);
        }
        fprintf(f, ", \"verification\": {\"checked\": %s", r->verify.checked ? "true" : "false");
        if (r->verify.checked) {
            fprintf(f, ", \"ok\": %s, \"rel_l2\": ", r->verify.ok ? "true" : "false");
            jnum(f, r->verify.rel_l2);
            fputs(", \"max_abs\": ", f);
            jnum(f, r->verify.max_abs);
            fputs(", \"max_rel\": ", f);
            jnum(f, r->verify.max_rel);
            fprintf(f, ", \"nonfinite\": %lld", (long long)r->verify.nonfinite);
        }
        fputs("}", f);
    }
    fputs("}", f);
}

/* --all-kernels: every forced row of device d and what a rule needs: the
 * output size, the automatic kernel, the fastest other one and the loss. */
static void oracle_json(FILE *f, const case_result *cr, const device_run *dv, int d)
{
    oracle_case oc;
    oracle_of(cr, d, &oc);
    int64_t out[3] = {0, 0, 0};
    convt3d_output_dims(&cr->bc->problem, out);
    fputs(", \"oracle\": {\"automatic\": ", f);
    jstr(f, cr->n_impl[d] ? cr->impl[d][0].detail : "");
    fputs(", \"plan\": ", f);
    jstr(f, cr->plan_desc[d]);
    fputs(", \"out_size\": ", f);
    jtriple(f, out);
    fprintf(f, ", \"valid\": %s, \"fastest_other\": ", oc.valid ? "true" : "false");
    if (oc.winner >= 0)
        jstr(f, cr->forced[d][oc.winner].detail);
    else
        fputs("null", f);
    fputs(", \"auto_over_fastest\": ", f);
    if (oc.valid)
        jnum(f, oc.loss);
    else
        fputs("null", f);
    fputs(", \"baseline_ms\": ", f);
    if (oc.base_ms > 0)
        jnum(f, oc.base_ms);
    else
        fputs("null", f);
    fputs(", \"forced\": [", f);
    for (int i = 0; i < cr->n_forced[d]; i++) {
        fputs(i ? ",\n          " : "\n          ", f);
        /* alone: its speed-up fields stay null, the oracle's figures say it */
        impl_json(f, cr, dv, &cr->forced[d][i], &cr->forced[d][i], 1);
    }
    fputs("]}", f);
}

static const char *kind_name(case_kind k)
{
    switch (k) {
    case CASE_RUN: return "run";
    case CASE_NOT_EXPRESSIBLE: return "not_expressible";
    case CASE_INVALID: return "invalid";
    default: return "malformed";
    }
}

static void case_json(FILE *f, const case_result *cr, const device_run *devs, int n_dev)
{
    const bench_case *bc = cr->bc;
    fputs("    {\"label\": ", f);
    jstr(f, bc->label);
    fprintf(f, ", \"dtype\": \"%s\", \"math\": \"%s\"", convt3d_dtype_name(cr->dtype),
            mode_math_name(cr->math));
    fputs(", \"origin\": ", f);
    jstr(f, bc->origin);
    fputs(", \"given\": ", f);
    jstr(f, bc->text);
    fputs(", \"descriptor\": ", f);
    jstr(f, bc->canonical);
    fputs(", \"class\": ", f);
    jstr(f, bc->klass);
    fprintf(f, ", \"kind\": \"%s\", \"reason\": ", kind_name(bc->kind));
    jstr(f, bc->reason);
    if (bc->kind == CASE_RUN) {
        fputs(", \"pytorch\": ", f);
        jstr(f, bc->pytorch);
        fputs(", \"problem\": ", f);
        problem_json(f, &bc->problem);
        fputs(", \"gflop\": ", f);
        jnum(f, cr->flops * 1e-9);
        fputs(", \"bytes\": ", f);
        jnum(f, cr->bytes);
    }
    fprintf(f, ", \"ran\": %s, \"skip\": ", cr->ran ? "true" : "false");
    jstr(f, cr->skip);
    if (cr->ran) {
        fprintf(f, ", \"verification\": {\"mode\": \"%s\", \"what\": ",
                cr->vmode == VERIFY_FULL      ? "full"
                : cr->vmode == VERIFY_SAMPLED ? "sampled"
                                              : "skipped");
        jstr(f, cr->vwhy);
        fputs(", \"reference_s\": ", f);
        jnum(f, cr->ref_seconds);
        fputs("}, \"devices\": [", f);
        int first = 1;
        for (int d = 0; d < n_dev; d++) {
            if (!devs[d].available)
                continue;
            fprintf(f, "%s\n      {\"device\": \"%s\", \"impls\": [", first ? "" : ",",
                    devs[d].name);
            first = 0;
            for (int i = 0; i < cr->n_impl[d]; i++) {
                fputs(i ? ",\n        " : "\n        ", f);
                impl_json(f, cr, &devs[d], &cr->impl[d][i], cr->impl[d], cr->n_impl[d]);
            }
            fputs("]", f);
            if (cr->forced[d])
                oracle_json(f, cr, &devs[d], d);
            fputs("}", f);
        }
        fputs("]", f);
    }
    fputs("}", f);
}

int json_write(const char *path, const case_result *res, size_t n, const device_run *devs,
               int n_dev, const bench_options *o)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fputs("{\n  \"convt3d_version\": ", f);
    jstr(f, convt3d_version());
    /* the mode first: tables of different modes must not be mixed up */
    fprintf(f, ",\n  \"mode\": {\"dtype\": \"%s\", \"math\": \"%s\", \"precision\": \"%s\", "
               "\"tolerance\": ",
            convt3d_dtype_name(o->dtype), mode_math_name(o->math),
            prec_name(mode_prec(o->dtype, o->math)));
    jnum(f, prec_row_tolerance(mode_prec(o->dtype, o->math), o->tol));
    fprintf(f, "},\n  \"settings\": {\"seed\": %llu, \"tol\": ", (unsigned long long)o->seed);
    if (o->tol >= 0)
        jnum(f, o->tol);
    else
        fputs("null", f);
    fputs(", \"budget_s\": ", f);
    jnum(f, o->budget_s);
    fprintf(f, ", \"reps\": %d, \"verify\": %d, \"verify_gmac\": ", o->reps, o->verify);
    jnum(f, o->verify_gmac);
    fputs("},\n  \"devices\": [", f);
    for (int d = 0; d < n_dev; d++) {
        const device_run *dv = &devs[d];
        fprintf(f, "%s\n    {\"device\": \"%s\", \"available\": %s, \"why\": ", d ? "," : "",
                dv->name, dv->available ? "true" : "false");
        jstr(f, dv->why);
        fputs(", \"model\": ", f);
        jstr(f, dv->model);
        fprintf(f, ", \"threads\": %d, \"floor\": ", dv->threads);
        if (dv->floor.valid) {
            fputs("{\"gflops\": ", f);
            jnum(f, dv->floor.gflops);
            fputs(", \"gbps\": ", f);
            jnum(f, dv->floor.gbps);
            if (dv->floor.has_tc && dv->floor.tc_valid) {
                fputs(", \"tf32_gflops\": ", f);
                jnum(f, dv->floor.tf32_gflops);
                fputs(", \"f16_gflops\": ", f);
                jnum(f, dv->floor.f16_gflops);
                fputs(", \"bf16_gflops\": ", f);
                jnum(f, dv->floor.bf16_gflops);
            }
            fputs(", \"source\": ", f);
            jstr(f, dv->floor.source);
            fputs("}", f);
        } else {
            fputs("null", f);
        }
        fputs("}", f);
    }
    fputs("\n  ],\n  \"cases\": [\n", f);
    for (size_t c = 0; c < n; c++) {
        case_json(f, &res[c], devs, n_dev);
        fputs(c + 1 < n ? ",\n" : "\n", f);
    }
    fputs("  ],\n  \"summary\": [", f);
    int first = 1;
    for (int d = 0; d < n_dev; d++) {
        if (!devs[d].available)
            continue;
        comparison cmp;
        compare_device(res, n, d, &cmp);
        fprintf(f,
                "%s\n    {\"device\": \"%s\", \"dtype\": \"%s\", \"math\": \"%s\", "
                "\"baseline\": \"%s\", \"shapes\": %d, \"compared\": %d, \"faster\": %d, "
                "\"geomean_speedup\": ",
                first ? "" : ",", devs[d].name, convt3d_dtype_name(o->dtype),
                mode_math_name(o->math), devs[d].is_cuda ? "cuDNN" : "oneDNN", cmp.shapes,
                cmp.compared, cmp.faster);
        if (cmp.compared)
            jnum(f, cmp.geomean);
        else
            fputs("null", f);
        if (oracle_wanted(res, n, d)) {
            oracle_stats st;
            oracle_compute(res, n, d, &st);
            fprintf(f, ", \"oracle\": {\"problems\": %d, \"auto_fastest\": %d, "
                       "\"forced_bad\": %d, \"geomean_auto_over_fastest\": ",
                    st.problems, st.auto_fastest, st.forced_bad);
            jnum(f, st.problems ? st.geo_loss : NAN);
            fprintf(f, ", \"compared\": %d, \"geomean_speedup_actual\": ", st.compared);
            jnum(f, st.compared ? st.geo_actual : NAN);
            fputs(", \"geomean_speedup_oracle\": ", f);
            jnum(f, st.compared ? st.geo_oracle : NAN);
            fputs("}", f);
        }
        fputs("}", f);
        first = 0;
    }
    fputs("\n  ]\n}\n", f);
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}
