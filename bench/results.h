/* What a run produced, per device and per problem: the material of the
 * table (report.c) and of the JSON file (json.c). */
#ifndef CONVT3D_BENCH_RESULTS_H
#define CONVT3D_BENCH_RESULTS_H

#include <stddef.h>

#include "bench.h"
#include "calib.h"
#include "cases.h"

#define MAX_DEVICES 9
#define MAX_IMPLS 3

typedef struct device_run {
    char name[24];      /* "cpu", "cuda:0" */
    int is_cuda, ordinal;
    int available;      /* 0: listed but skipped, why says why */
    char why[256];
    char model[256];    /* CPU model or GPU name */
    int threads;        /* CPU: OpenMP threads */
    floor_rates floor;  /* floor.valid == 0: unknown (floor_err says why) */
    char floor_err[256];
} device_run;

typedef struct case_result {
    const bench_case *bc;
    int ran;            /* 0: not run (see skip, or the case's kind) */
    int error;          /* the skip is an error (e.g. out of memory) */
    char skip[256];
    double macs, flops, bytes;
    convt3d_dtype dtype;     /* the run's mode, carried by every case */
    convt3d_math_mode math;
    verify_mode vmode;
    char vwhy[200];
    double ref_seconds;
    impl_result impl[MAX_DEVICES][MAX_IMPLS];
    int n_impl[MAX_DEVICES];
    /* --all-kernels: every implementation of the device that applies, each
     * forced in a plan of its own (detail: its name); malloc'ed, NULL without
     * the option.  impl[d][0] stays the automatic choice. */
    impl_result *forced[MAX_DEVICES];
    int n_forced[MAX_DEVICES];
    char plan_desc[MAX_DEVICES][400]; /* --all-kernels: the automatic plan as CONVT3D_VERBOSE
                                        * describes it ("" where none was caught) */
} case_result;

/* The fastest baseline that ran and was not caught wrong, or -1. */
int best_baseline(const impl_result *impls, int n);
/* convt3d's index in the list (always 0 when it is present), or -1. */
int ours_index(const impl_result *impls, int n);
/* ours OK and not caught wrong, a usable baseline: baseline/ours, else 0. */
double speedup_of(const impl_result *impls, int n);
/* The same against baseline b (any usable one), else 0. */
double speedup_vs(const impl_result *impls, int n, int b);
/* The implementation's verification failed. */
int impl_mismatch(const impl_result *r);

/* convt3d against the best baseline on device d, over the problems that ran. */
typedef struct comparison {
    int shapes;     /* problems run */
    int compared;   /* with a usable result on both sides */
    int faster;     /* convt3d faster */
    double geomean; /* geometric mean of the speed-ups compared */
} comparison;
void compare_device(const case_result *res, size_t n, int d, comparison *out);

/* report.c: the readable table; report_forced: the --all-kernels lines of
 * device d (nothing without the option). */
void report_forced(FILE *f, const case_result *cr, int d);
void report_header(FILE *f, const device_run *devs, int n_dev, const bench_options *o,
                   const char *extra);
void report_table_head(FILE *f);
void report_case(FILE *f, const case_result *cr, const device_run *devs, int n_dev, int verbose);
void report_summary(FILE *f, const case_result *res, size_t n, const device_run *devs, int n_dev,
                    const bench_options *o);

/* json.c: every figure. */
int json_write(const char *path, const case_result *res, size_t n, const device_run *devs,
               int n_dev, const bench_options *o);

#endif
