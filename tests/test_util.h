/* Shared helpers of the CUnit suite: a seeded RNG, poisoned buffers, error
 * norms, one-line problem descriptors, random problems, and the harness that
 * checks any backend against the reference. */
#ifndef CONVT3D_TEST_UTIL_H
#define CONVT3D_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <CUnit/CUnit.h>

#include "convt3d.h"

typedef struct rng {
    uint64_t state;
} rng;

rng rng_make(uint64_t seed);
uint64_t rng_next(rng *r);
/* Uniform in [lo, hi] (inclusive). */
int64_t rng_int(rng *r, int64_t lo, int64_t hi);
double rng_uniform(rng *r); /* [0, 1) */

/* The suite's base seed: CONVT3D_TEST_SEED if set, else a fixed default. */
uint64_t test_seed(void);

void fill_uniform(rng *r, float *a, int64_t n);    /* [-1, 1) */
void fill_small_ints(rng *r, float *a, int64_t n); /* integers in [-4, 4] */

/* A NaN bit pattern no computation produces; poison outputs with it so an
 * unwritten element is caught. */
void poison(float *a, int64_t n);
int64_t count_poison(const float *a, int64_t n);
int is_poison(float v);

/* Relative L2 error ||a - ref|| / max(||ref||, tiny); NaN anywhere -> +inf. */
double rel_l2_error(const float *a, const float *ref, int64_t n);
double max_abs_error(const float *a, const float *ref, int64_t n);

/* convt3d_problem_to_string(): the descriptor convt3d-bench reads, e.g.
 * "g2mb2_ic8id5ih6iw7_oc4od10oh12ow14_kd3kh3kw3_sd2sh2sw2_pd1ph1pw1_dd0dh0dw0_bias1_layoutncdhw".
 * Every failure message prints the problem this way. */
void problem_describe(const convt3d_problem *p, char *buf, size_t size);

/* Whether two problems have the same sizes, strides, paddings, dilations,
 * groups, layout and bias flag (the fields a descriptor carries). */
int problems_equal(const convt3d_problem *a, const convt3d_problem *b);

/* A valid random problem with at most about max_macs multiply-adds and
 * max_elems elements in x and y each. */
convt3d_problem random_problem(rng *r, double max_macs, int64_t max_elems);

/* Convenience constructor: cubic kernel/stride/padding/op, dilation 1. */
convt3d_problem make_problem(int64_t n, int64_t cin, int64_t cout, int64_t g, int64_t d,
                             int64_t h, int64_t w, int64_t k, int64_t s, int64_t p, int64_t op,
                             int has_bias, convt3d_layout layout);

/* ---- the backend-vs-reference harness ---------------------------------- */

/* DEVICE_POINTERS_MISALIGNED: device tensors one element past an
 * allocation's start (kernels with 16-byte copies must fall back). */
typedef enum pointer_mode { HOST_POINTERS, DEVICE_POINTERS, DEVICE_POINTERS_MISALIGNED } pointer_mode;

typedef struct check_result {
    int ok;            /* 1 when everything matched */
    int skipped;       /* 1 when the device is not available */
    double rel_l2;     /* real-valued pass vs reference */
    double rel_l2_mag; /* the same error against the contributions' size (judged) */
    double exact_diff; /* small-integer pass: max |a - ref| (must be 0) */
    int64_t unwritten; /* poisoned elements left in the output */
    char message[512];
} check_result;

/* Runs the problem on `device` with fresh random data from `seed`:
 * (1) small-integer data, compared bit-exactly with the reference;
 * (2) uniform data, relative L2 error <= tol (where the result cancels to
 *     near zero: the error relative to the reference on |x|, |w|, |bias|).
 * Outputs are poisoned first.
 * With DEVICE_POINTERS, x/y/weight/bias are copied to the GPU first. */
check_result check_backend(const convt3d_problem *p, convt3d_device device, uint64_t seed,
                           pointer_mode mode, double tol);

/* check_backend() with the implementation forced by exact name through
 * convt3d_plan_options.implementation (NULL: the library's choice); the plan
 * must report that name as convt3d_plan_kernel_name(). */
check_result check_implementation(const convt3d_problem *p, convt3d_device device,
                                  const char *impl, uint64_t seed, pointer_mode mode, double tol);

/* check_implementation() for problem p's data type (its x, w, bias and y
 * types, all one) in math mode math: the data are rounded to the type, the
 * reference is the f32 one on the same values, the small-integer pass is
 * bit-exact while every output is an integer the type holds exactly, and
 * the uniform pass is judged with tol (mode_tolerance() gives the mode's). */
check_result check_implementation_math(const convt3d_problem *p, convt3d_device device,
                                       const char *impl, convt3d_math_mode math, uint64_t seed,
                                       pointer_mode mode, double tol);
/* The contract's tolerance of a mode (relative L2 against float64): f32 and
 * 3xtf32 min(f32_tol, 1e-5), tf32 1e-3, f16 1e-3, bf16 8e-3. */
double mode_tolerance(convt3d_dtype type, convt3d_math_mode math, double f32_tol);

/* What check_registry() did. */
typedef struct impl_stats {
    int implementations; /* of the device kind in this build */
    int checks;          /* (implementation, problem variant) pairs run and compared */
    int unavailable;     /* implementations skipped: no such device here (printed) */
    int failed;          /* failed checks */
} impl_stats;

/* The registry harness: for every implementation of device kind `kind`
 * (convt3d_implementation_count/_device), for each of the problems in both
 * layouts with and without bias (and, in both layouts, in every other
 * numeric mode: tf32 and 3xtf32 math on f32 data, f16 and bf16 data) where
 * convt3d_implementation_applies() says SUCCESS, runs
 * check_implementation_math() with the mode's tolerance on device {kind, 0} and
 * CU_ASSERTs it (assert_check).  NO_CUDA_SUPPORT / NO_DEVICE skip the
 * implementation with the reason printed; an implementation that applies to
 * no problem at all fails, so that a new kernel cannot go untested. */
impl_stats check_registry(convt3d_device_kind kind, const convt3d_problem *problems, int count,
                          uint64_t seed, pointer_mode mode, double tol);

/* CU_ASSERT the result; print the problem and seed on failure, the skip reason on skip. */
void assert_check(const check_result *res, const convt3d_problem *p, uint64_t seed);

/* Number of GPU cases skipped (printed by the runner's summary). */
extern int gpu_cases_skipped;
/* Non-NULL when GPU cases must skip: why. */
const char *gpu_skip_reason(void);

/* A test that cannot check what it is about says so: prints
 * "SKIPPED: <why>" and records the current test, which the runner then
 * counts as skipped, not passed, and lists with the reason. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tests_skipped(void); /* tests that called test_skip() */
void print_skips(void);

/* Suite registration, one per file. */
void register_shape_tests(void);
void register_validation_tests(void);
void register_reference_tests(void);
void register_api_tests(void);
void register_backend_tests(void);
void register_backend_gpu_tests(void);     /* in the GPU program */
void register_descriptor_tests(void);
void register_random_problem_tests(void);
void register_bench_oracle_tests(void);    /* --all-kernels parsing, the oracle's arithmetic */
void register_cuda_walk_tests(void);        /* the CUDA walk on the host */
void register_bench_mode_tests(void);      /* convt3d-bench --dtype/--math, tolerances */
void register_reliability_tests(void);
void register_reliability_gpu_tests(void); /* in the GPU program */
void register_multi_gpu_tests(void);       /* in the GPU program: several GPUs */

/* Adds a suite and its tests; NULL-terminated list of {name, fn}. */
typedef struct test_entry {
    const char *name;
    CU_TestFunc fn;
} test_entry;
void add_suite(const char *name, const test_entry *tests);

#endif
