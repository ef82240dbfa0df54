/* --all-kernels: the "oracle" of the registry walk.  For each problem and
 * device, the automatic choice (impl[d][0]) against every implementation
 * that applies, each forced and timed alike (case_result.forced): how often
 * the walk picks the fastest, what its misses cost, and the speed-up against
 * the baseline if the fastest were chosen.
 *
 * Only the arithmetic of results.h's types and the library's public
 * descriptor printer: the unit tests link it without the rest of the bench. */
#ifndef CONVT3D_BENCH_ORACLE_H
#define CONVT3D_BENCH_ORACLE_H

#include <stdio.h>

#include "results.h"

/* The automatic choice counts as the fastest within this factor: repeated
 * timings of one kernel differ by a few percent. */
#define ORACLE_SAME 1.03

/* One problem on one device. */
typedef struct oracle_case {
    int valid;        /* the automatic row and at least one forced row usable */
    int auto_forced;  /* index in forced of the automatic kernel's own forced run, or -1 */
    int winner;       /* index in forced of the fastest usable other kernel, or -1 */
    double auto_ms;   /* the automatic row's median */
    double best_ms;   /* min(auto_ms, the winner's median) */
    double loss;      /* auto_ms / best_ms, >= 1 */
    double base_ms;   /* the fastest usable baseline's median, 0: none */
} oracle_case;

/* A row that ran and was not caught wrong. */
int oracle_usable(const impl_result *r);

/* The oracle of case cr on device d; 0 (out->valid says whether there is
 * one). */
void oracle_of(const case_result *cr, int d, oracle_case *out);

/* Over the problems of res on device d that have an oracle. */
typedef struct oracle_stats {
    int problems;        /* with an oracle */
    int auto_fastest;    /* loss <= ORACLE_SAME */
    double geo_loss;     /* geometric mean of auto/fastest */
    int compared;        /* of those, with a usable baseline */
    double geo_actual;   /* geomean of baseline/automatic */
    double geo_oracle;   /* geomean of baseline/fastest */
    int forced_bad;      /* forced rows failed or caught wrong (every problem) */
} oracle_stats;
void oracle_compute(const case_result *res, size_t n, int d, oracle_stats *out);

/* Whether any case has forced rows on device d. */
int oracle_wanted(const case_result *res, size_t n, int d);

/* The oracle block of device d's summary: the figures above, per automatic
 * kernel which other kernel beat it how often and by what geomean, and the
 * `count` largest losses as pasteable descriptors. */
void oracle_print(FILE *f, const case_result *res, size_t n, int d, int count);

#endif
