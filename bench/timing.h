/* Timing: a monotonic clock, the statistics of a set of runs, and the
 * adaptive loop for host-timed work (our CPU backend, oneDNN, staged GPU
 * calls).  The number of timed runs follows a time budget, so a slow backend
 * costs about the budget per measurement rather than a fixed repetition count. */
#ifndef CONVT3D_BENCH_TIMING_H
#define CONVT3D_BENCH_TIMING_H

typedef struct timing_cfg {
    double budget_s; /* wall time to spend on the timed runs of one measurement */
    int reps;        /* > 0: exactly this many timed runs (overrides the budget) */
    int warmup;      /* >= 0: this many extra warm-up runs; < 0: automatic */
    int max_reps;    /* cap of the automatic count */
} timing_cfg;

typedef struct timing_stats {
    int valid;
    int reps;    /* timed runs */
    int warmups; /* untimed runs before them (the verification run included) */
    double median_ms, min_ms, max_ms;
} timing_stats;

/* Seconds on CLOCK_MONOTONIC. */
double bench_now(void);

/* The number of timed runs for a run that takes est_s seconds (the GPU loop,
 * which queues its runs in batches): budget / est_s, at least 1 (a run
 * slower than the budget is timed once), at most max_reps; or cfg->reps. */
int timing_reps_for(const timing_cfg *cfg, double est_s);

/* The number of extra warm-up runs after a first run of first_s seconds. */
int timing_warmups_for(const timing_cfg *cfg, double first_s);

/* Sorts samples_ms and fills median, min, max and reps. */
void timing_summarize(double *samples_ms, int n, timing_stats *out);

/* One run of the measured work; returns 0 on success. */
typedef int (*bench_fn)(void *ctx);

/* Warm-up and timed runs of fn on the host clock, timed runs until the budget
 * is spent (at least 3 when a run fits in it, else 1).  first_s is the
 * duration of a run already made (the verification run): it counts as the
 * first warm-up.  Returns 0, or fn's non-zero result on the first failure. */
int time_host(const timing_cfg *cfg, bench_fn fn, void *ctx, double first_s, timing_stats *out);

#endif
