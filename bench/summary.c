/* The summary over many problems (summary.h): groups of cases, their
 * speed-up statistics, and the lines that print them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "summary.h"

#define KEY_MAX 96

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double percentile10(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int rank = (n + 9) / 10; /* ceil(0.1 n), 1-based */
    return v[rank - 1];
}

static int ran_on(const case_result *cr, int d) { return cr->ran && cr->n_impl[d] > 0; }

void group_compute(const case_result *res, size_t n, int d, group_pred pred, const void *ctx,
                   group_stats *out)
{
    memset(out, 0, sizeof *out);
    out->worst = -1;
    double *v = malloc((n ? n : 1) * sizeof *v);
    double log_sum = 0;
    for (size_t c = 0; c < n; c++) {
        const case_result *cr = &res[c];
        if (pred && !pred(cr, d, ctx))
            continue;
        out->listed += cr->bc->kind == CASE_RUN;
        if (!ran_on(cr, d))
            continue;
        out->problems++;
        const impl_result *im = cr->impl[d];
        const int o = ours_index(im, cr->n_impl[d]);
        out->failed += o >= 0 && im[o].state == IMPL_FAILED;
        out->mismatch += o >= 0 && impl_mismatch(&im[o]);
        for (int i = 0; i < cr->n_impl[d]; i++)
            out->base_mismatch += im[i].baseline && impl_mismatch(&im[i]);
        const double s = speedup_of(im, cr->n_impl[d]);
        if (s <= 0)
            continue;
        if (v)
            v[out->compared] = s;
        out->compared++;
        out->faster += s > 1;
        log_sum += log(s);
        if (out->worst < 0 || s < out->worst_speedup) {
            out->worst = (long)c;
            out->worst_speedup = s;
        }
    }
    if (out->compared) {
        out->geomean = exp(log_sum / out->compared);
        out->p10 = v ? percentile10(v, out->compared) : 0;
    }
    free(v);
}

int summary_wanted(const case_result *res, size_t n)
{
    for (size_t c = 0; c < n; c++)
        if (res[c].bc->klass[0])
            return 1;
    return 0;
}

/* ---- grouping keys -------------------------------------------------------- */

static const char *class_key(const case_result *cr, int d)
{
    (void)d;
    return cr->bc->klass[0] ? cr->bc->klass : "(no class)";
}

/* The kernel convt3d chose on device d (the plan's name), or why none. */
static const char *kernel_key(const case_result *cr, int d)
{
    const int o = ours_index(cr->impl[d], cr->n_impl[d]);
    if (o < 0)
        return "(not run)";
    const impl_result *r = &cr->impl[d][o];
    return r->detail[0] ? r->detail : r->state == IMPL_FAILED ? "(failed)" : "(none)";
}

typedef const char *(*key_fn)(const case_result *cr, int d);

typedef struct key_match {
    key_fn key;
    const char *want;
} key_match;

static int key_is(const case_result *cr, int d, const void *ctx)
{
    const key_match *m = ctx;
    return strcmp(m->key(cr, d), m->want) == 0;
}

/* The distinct keys of the cases run on d (all_cases: of every runnable
 * case), in order of first appearance; returns how many (at most max). */
static int distinct_keys(const case_result *res, size_t n, int d, key_fn key, int all_cases,
                         const char **keys, int max)
{
    int k = 0;
    for (size_t c = 0; c < n && k < max; c++) {
        if (all_cases ? res[c].bc->kind != CASE_RUN : !ran_on(&res[c], d))
            continue;
        const char *s = key(&res[c], d);
        int seen = 0;
        for (int j = 0; j < k && !seen; j++)
            seen = strcmp(keys[j], s) == 0;
        if (!seen)
            keys[k++] = s;
    }
    return k;
}

/* ---- printing ------------------------------------------------------------- */

static void descriptor_of(const case_result *cr, char *buf, size_t size)
{
    convt3d_problem_to_string(&cr->bc->problem, buf, size);
}

static void failures_text(const group_stats *g, char *buf, size_t size)
{
    if (!g->mismatch && !g->base_mismatch && !g->failed) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, size, "; VERIFICATION: %d convt3d mismatch%s, %d baseline mismatch%s, %d "
                        "convt3d failure%s",
             g->mismatch, g->mismatch == 1 ? "" : "es", g->base_mismatch,
             g->base_mismatch == 1 ? "" : "es", g->failed, g->failed == 1 ? "" : "s");
}

static void overall_line(FILE *f, const group_stats *g)
{
    char fail[200];
    failures_text(g, fail, sizeof fail);
    fprintf(f, "  all: %d of %d problems run, %d compared: %d faster (%.1f%%)", g->problems,
            g->listed, g->compared, g->faster,
            g->compared ? 100.0 * g->faster / g->compared : 0.0);
    if (g->compared)
        fprintf(f, ", geometric-mean speed-up %.2fx, 10th percentile %.2fx", g->geomean, g->p10);
    fprintf(f, "%s\n", fail);
}

/* One row of a per-class or per-kernel table: the group's figures and its
 * slowest problem. */
static void group_row(FILE *f, const char *key, const group_stats *g, const case_result *res)
{
    char run[24], faster[32], gm[16] = "-", p10[16] = "-", fail[24] = "";
    snprintf(run, sizeof run, "%d/%d", g->problems, g->listed);
    snprintf(faster, sizeof faster, "%d/%d %3.0f%%", g->faster, g->compared,
             g->compared ? 100.0 * g->faster / g->compared : 0.0);
    if (g->compared) {
        snprintf(gm, sizeof gm, "%.2fx", g->geomean);
        snprintf(p10, sizeof p10, "%.2fx", g->p10);
    }
    if (g->mismatch || g->failed)
        snprintf(fail, sizeof fail, "%d BAD", g->mismatch + g->failed);
    fprintf(f, "    %-38s %7s %-13s %8s %8s %6s", key, run, faster, gm, p10, fail);
    if (g->worst >= 0) {
        char desc[512];
        descriptor_of(&res[g->worst], desc, sizeof desc);
        fprintf(f, "  %.2fx %s %s", g->worst_speedup, res[g->worst].bc->label, desc);
    }
    fprintf(f, "\n");
}

static void group_table(FILE *f, const char *title, const char *what, key_fn key,
                        int all_cases, const case_result *res, size_t n, int d)
{
    enum { MAX_KEYS = 256 };
    const char *keys[MAX_KEYS];
    const int k = distinct_keys(res, n, d, key, all_cases, keys, MAX_KEYS);
    fprintf(f, "  %s (run: problems run / listed; faster: of those compared; bad: convt3d "
               "mismatches and failures):\n",
            title);
    fprintf(f, "    %-38s %7s %-13s %8s %8s %6s  %s\n", what, "run", "faster", "geomean", "p10",
            "bad", "slowest (speed-up, name, descriptor)");
    for (int j = 0; j < k; j++) {
        const key_match m = {key, keys[j]};
        group_stats g;
        group_compute(res, n, d, key_is, &m, &g);
        group_row(f, keys[j], &g, res);
    }
}

typedef struct ranked {
    size_t c;
    double s;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

/* The `count` lowest speed-ups on d, with pasteable descriptors. */
static void slowest_list(FILE *f, const case_result *res, size_t n, int d, int count)
{
    ranked *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return;
    size_t m = 0;
    for (size_t c = 0; c < n; c++) {
        const double s = ran_on(&res[c], d) ? speedup_of(res[c].impl[d], res[c].n_impl[d]) : 0;
        if (s > 0)
            v[m++] = (ranked){c, s};
    }
    qsort(v, m, sizeof *v, cmp_ranked);
    if (m)
        fprintf(f, "  slowest %d (lowest speed-up first; paste the descriptor into "
                   "convt3d-bench):\n",
                (int)(m < (size_t)count ? m : (size_t)count));
    for (size_t j = 0; j < m && j < (size_t)count; j++) {
        char desc[512];
        descriptor_of(&res[v[j].c], desc, sizeof desc);
        fprintf(f, "    %6.2fx  %-24s %-38s %s\n", v[j].s, res[v[j].c].bc->label,
                kernel_key(&res[v[j].c], d), desc);
    }
    free(v);
}

/* Every problem convt3d got wrong or could not run on d, with its descriptor. */
static void failure_list(FILE *f, const case_result *res, size_t n, int d)
{
    for (size_t c = 0; c < n; c++) {
        if (!ran_on(&res[c], d))
            continue;
        const impl_result *im = res[c].impl[d];
        const int o = ours_index(im, res[c].n_impl[d]);
        if (o < 0 || (!impl_mismatch(&im[o]) && im[o].state != IMPL_FAILED))
            continue;
        char desc[512];
        descriptor_of(&res[c], desc, sizeof desc);
        fprintf(f, "  %s: %s %s\n", impl_mismatch(&im[o]) ? "MISMATCH" : "FAILED",
                res[c].bc->label, desc);
    }
}

/* The host time per execute_on_stream call on d, over the problems where
 * --host-cost measured it. */
static void host_cost_line(FILE *f, const case_result *res, size_t n, int d)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return;
    int m = 0;
    for (size_t c = 0; c < n; c++) {
        if (!ran_on(&res[c], d))
            continue;
        const int o = ours_index(res[c].impl[d], res[c].n_impl[d]);
        if (o >= 0 && res[c].impl[d][o].host_us > 0)
            v[m++] = res[c].impl[d][o].host_us;
    }
    if (m) {
        qsort(v, (size_t)m, sizeof *v, cmp_double);
        fprintf(f, "  host cost per convt3d_execute_on_stream call (device pointers): median "
                   "%.2f us, max %.2f us over %d problems (target <= 10 us)%s\n",
                v[m / 2], v[m - 1], m, v[m - 1] > 10 ? ": ABOVE TARGET" : "");
    }
    free(v);
}

static void device_summary(FILE *f, const case_result *res, size_t n, const device_run *dv,
                           int d, int slowest)
{
    /* the mode in the title: summaries of different modes must not be mixed up */
    const char *dtype = n ? convt3d_dtype_name(res[0].dtype) : "f32";
    const char *math = n ? mode_math_name(res[0].math) : "fp32";
    fprintf(f, "\nsummary on %s, %s data, math %s: convt3d vs %s\n", dv->name, dtype, math,
            dv->is_cuda ? (n && res[0].dtype == CONVT3D_F32 && res[0].math == CONVT3D_MATH_3XTF32
                               ? "cuDNN (the faster of fp32 and tf32)"
                               : "cuDNN")
                        : "oneDNN (the better of its two layouts)");
    group_stats all;
    group_compute(res, n, d, NULL, NULL, &all);
    overall_line(f, &all);
    if (!all.problems)
        return;
    failure_list(f, res, n, d);
    host_cost_line(f, res, n, d);
    slowest_list(f, res, n, d, slowest);
    const char *keys[2];
    if (distinct_keys(res, n, d, class_key, 1, keys, 2) > 1)
        group_table(f, "per class", "class", class_key, 1, res, n, d);
    group_table(f, "per kernel convt3d chose", "kernel", kernel_key, 0, res, n, d);
    if (oracle_wanted(res, n, d))
        oracle_print(f, res, n, d, slowest);
}

void summary_print(FILE *f, const case_result *res, size_t n, const device_run *devs, int n_dev,
                   int slowest)
{
    for (int d = 0; d < n_dev; d++)
        if (devs[d].available)
            device_summary(f, res, n, &devs[d], d, slowest);
}
