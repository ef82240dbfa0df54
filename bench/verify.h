/* Verification against convt3d_reference(), the project's one oracle.
 * When the reference would take too long for the whole problem, a sample of
 * the outputs is checked instead: one batch image and the last channels of
 * every group (tails are where kernels go wrong), all spatial positions.
 * The plan says which, and the report prints it: "full", "sampled" or
 * "skipped" -- a skipped check is never reported as passed. */
#ifndef CONVT3D_BENCH_VERIFY_H
#define CONVT3D_BENCH_VERIFY_H

#include <stdint.h>

#include "convt3d.h"

typedef enum verify_mode { VERIFY_SKIPPED = 0, VERIFY_FULL, VERIFY_SAMPLED } verify_mode;

typedef struct verify_plan {
    verify_mode mode;
    /* The checked outputs: batch images [n_first, n_first + n_count) and, in
     * every group, output channels [oc_first, oc_first + oc_count). */
    int64_t n_first, n_count, oc_first, oc_count;
    double macs;        /* cost of the reference run */
    double ref_seconds; /* what it took */
    char why[200];      /* what was sampled, or why nothing was */
    convt3d_problem sub; /* the problem the reference solved */
    float *ref;          /* its output */
    int64_t ref_elems;
} verify_plan;

typedef struct verify_result {
    int checked;       /* 0: skipped (the plan says why) */
    int ok;            /* checked and within tolerance, nothing non-finite */
    double rel_l2;     /* ||y - ref|| / ||ref|| */
    double max_abs;    /* max |y - ref| */
    double max_rel;    /* max |y - ref| / max |ref| */
    int64_t nonfinite; /* NaN/inf outputs (e.g. never written) */
} verify_result;

/* How to verify p.  want: 0 never (--no-verify), 1 always in full (--verify),
 * -1 automatically: in full when p costs at most budget_macs multiply-adds,
 * else on a sample that does, else skipped. */
void verify_plan_choose(const convt3d_problem *p, int want, double budget_macs, verify_plan *vp);

/* Runs the reference for the plan's outputs.  Returns 0, or -1 with a message
 * in err (the plan is then switched to skipped). */
int verify_run_reference(verify_plan *vp, const convt3d_problem *p, const float *x,
                         const float *w, const float *bias, char *err, size_t err_size);

/* Compares a full output y (host, p's layout) with the reference.  With
 * add_bias (cuDNN, which has no bias), bias[co] is added to y first. */
verify_result verify_compare(const verify_plan *vp, const convt3d_problem *p, const float *y,
                             const float *add_bias, double tol);

void verify_plan_free(verify_plan *vp);

/* The problem's useful multiply-adds: N * C_in * (C_out/G) times, per dim,
 * the (input, tap) pairs whose output padding does not crop -- at most
 * D*H*W * kD*kH*kW (the contributions a direct algorithm cannot avoid). */
double problem_macs(const convt3d_problem *p);

#endif
