/* Host timing on CLOCK_MONOTONIC with a budget-driven repetition count. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

/* CONVT3D_BENCH_CLOCK=cpu times CPU rows on the process's CPU time instead:
 * on a machine shared with other work it leaves out the time others held
 * the cores.  Meaningful with --threads 1 only (idle OpenMP threads spin
 * and would be counted). */
static clockid_t host_clock(void)
{
    const char *c = getenv("CONVT3D_BENCH_CLOCK");
    return c && strcmp(c, "cpu") == 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
}

double bench_now(void)
{
    static int have;
    static clockid_t id;
    if (!have) {
        id = host_clock();
        have = 1;
    }
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int timing_reps_for(const timing_cfg *cfg, double est_s)
{
    if (cfg->reps > 0)
        return cfg->reps;
    const int cap = cfg->max_reps > 0 ? cfg->max_reps : 1000;
    if (est_s <= 0)
        return cap;
    const double n = cfg->budget_s / est_s;
    return n < 1 ? 1 : n > cap ? cap : (int)n;
}

int timing_warmups_for(const timing_cfg *cfg, double first_s)
{
    if (cfg->warmup >= 0)
        return cfg->warmup;
    /* Automatic: the first run paid for page faults, cold caches and lazy
     * initialisation (JIT, handles), so one more run unless a run costs more
     * than the whole budget; more while they fit in a tenth of it. */
    if (first_s > cfg->budget_s)
        return 0;
    const double n = first_s > 0 ? 0.1 * cfg->budget_s / first_s : 20;
    return n < 1 ? 1 : n > 20 ? 20 : (int)n;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void timing_summarize(double *samples_ms, int n, timing_stats *out)
{
    out->valid = n > 0;
    out->reps = n;
    if (n <= 0)
        return;
    qsort(samples_ms, (size_t)n, sizeof *samples_ms, cmp_double);
    out->min_ms = samples_ms[0];
    out->max_ms = samples_ms[n - 1];
    out->median_ms = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
}

int time_host(const timing_cfg *cfg, bench_fn fn, void *ctx, double first_s, timing_stats *out)
{
    out->valid = 0;
    out->warmups = 1;
    double est = first_s;
    const int warm = timing_warmups_for(cfg, first_s);
    for (int i = 0; i < warm; i++) {
        const double t0 = bench_now();
        const int rc = fn(ctx);
        if (rc)
            return rc;
        const double t = bench_now() - t0;
        if (t < est)
            est = t;
        out->warmups++;
    }
    /* Timed runs until the budget is spent: at least 3 when a run fits in
     * the budget, a single one when it does not (a slow backend then costs
     * one run, not a fixed count); --reps fixes the count instead. */
    const int cap = cfg->reps > 0 ? cfg->reps : cfg->max_reps > 0 ? cfg->max_reps : 1000;
    const int min_reps = cfg->reps > 0 ? cfg->reps : est <= cfg->budget_s ? 3 : 1;
    double *samples = malloc((size_t)cap * sizeof *samples);
    if (!samples)
        return -1;
    int n = 0;
    const double start = bench_now();
    while (n < cap && (n < min_reps || (cfg->reps <= 0 && bench_now() - start < cfg->budget_s))) {
        const double t0 = bench_now();
        const int rc = fn(ctx);
        if (rc) {
            free(samples);
            return rc;
        }
        samples[n++] = 1e3 * (bench_now() - t0);
    }
    timing_summarize(samples, n, out);
    free(samples);
    return 0;
}
