/* convt3d-bench's command line. */
#ifndef CONVT3D_BENCH_CLI_H
#define CONVT3D_BENCH_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "convt3d.h"

#define CLI_MAX_LIST 64

typedef struct bench_options {
    /* where problems come from (none of them: the whole suite) */
    const char *suites[CLI_MAX_LIST];
    int n_suites;
    const char *batches[CLI_MAX_LIST];
    int n_batches;
    const char *descs[CLI_MAX_LIST * 4];
    int n_descs;
    int random_n;            /* --random N: N problems of the random distribution */
    int have_shape;          /* any PyTorch-like shape flag was given */
    unsigned shape_given;    /* which of the required ones (bits: cin cout in kernel) */
    convt3d_problem shape;
    int bias;                /* -1: each problem's own; 0/1: forced by --no-bias/--bias */
    int layout;              /* -1: NCDHW unless forced; else a convt3d_layout */
    /* how to run */
    const char *device;      /* NULL: cpu and cuda:0 when present */
    int threads;             /* 0: OpenMP's default */
    int verify;              /* -1 automatic, 0 --no-verify, 1 --verify */
    double verify_gmac;      /* automatic: full verification up to this many GMAC */
    double tol;              /* --tol: < 0 not given; else tightens every row's tolerance */
    convt3d_dtype dtype;     /* --dtype: x, weight, bias and y of every problem */
    convt3d_math_mode math;  /* --math: the math mode of convt3d's plans */
    uint64_t seed;
    double budget_s;
    int reps, warmup;
    double max_gflop;        /* 0: no limit */
    int baselines;
    int calibrate;           /* --calibrate: measure the floors anew */
    int no_calibrate;
    const char *json;
    int verbose, staged, list;
    int host_cost;           /* --host-cost: host time per execute_on_stream call (GPU) */
    const char *impl;        /* --kernel=NAME / --impl=NAME: the forced implementation */
    int list_kernels;        /* --kernels */
    int all_kernels;         /* --all-kernels: also time every implementation that applies */
} bench_options;

/* 0: run; 1: done (help or version printed); -1: error (message printed). */
int cli_parse(int argc, char **argv, bench_options *o);
void cli_usage(FILE *f);

#endif
