/* The summary of a run over many problems (--random, --batch files with
 * classes): per device, convt3d against its best baseline over all
 * problems, per class and per kernel convt3d chose -- how many problems are
 * faster, the geometric mean and 10th percentile of the speed-up, the
 * slowest problems as pasteable descriptors, verification failures -- and,
 * where measured, the host cost of a GPU call. */
#ifndef CONVT3D_BENCH_SUMMARY_H
#define CONVT3D_BENCH_SUMMARY_H

#include <stdio.h>

#include "results.h"

/* One group of problems on one device. */
typedef struct group_stats {
    int listed;      /* runnable problems in the group (run or skipped, e.g. --max-gflop) */
    int problems;    /* run on the device */
    int compared;    /* with a speed-up (both sides usable) */
    int faster;      /* speed-up > 1 */
    double geomean;  /* of the speed-ups compared (0: none) */
    double p10;      /* 10th percentile (nearest rank) of them */
    long worst;      /* the case with the lowest speed-up, or -1 */
    double worst_speedup;
    int mismatch;      /* convt3d's output failed verification */
    int base_mismatch; /* a baseline's did */
    int failed;        /* convt3d did not run (plan or execute error) */
} group_stats;

/* Whether case cr belongs to a group on device d (ctx: the group's key). */
typedef int (*group_pred)(const case_result *cr, int device, const void *ctx);

/* Statistics over the cases of res (n of them) on device d that pred keeps
 * (NULL: all that ran). */
void group_compute(const case_result *res, size_t n, int d, group_pred pred, const void *ctx,
                   group_stats *out);

/* The 10th percentile by nearest rank of v (sorted in place); 0 for n = 0. */
double percentile10(double *v, int n);

/* The whole summary; slowest: how many of the slowest problems to list per
 * device (with their descriptors). */
void summary_print(FILE *f, const case_result *res, size_t n, const device_run *devs, int n_dev,
                   int slowest);

/* Whether the run calls for summary_print: a case with a class (--random,
 * "# class:" lines). */
int summary_wanted(const case_result *res, size_t n);

#endif
