/* convt3d-bench's modes: --dtype and --math parsing (bench/cli.c) and the
 * tolerance rule of bench/modes.h -- a row never passes with a looser bound
 * than its precision's, whatever --tol says. */
#include <stdio.h>
#include <string.h>

#include "../bench/cli.h"
#include "../bench/modes.h"
#include "test_util.h"

/* cli_parse on a NULL-terminated list of arguments (after the program name). */
static int parse(bench_options *o, const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"convt3d-bench";
    for (int i = 0; args[i] && argc < 31; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    return cli_parse(argc, argv, o);
}

static void test_defaults(void)
{
    bench_options o;
    const char *const none[] = {NULL};
    CU_ASSERT_EQUAL_FATAL(parse(&o, none), 0);
    CU_ASSERT_EQUAL(o.dtype, CONVT3D_F32);
    CU_ASSERT_EQUAL(o.math, CONVT3D_MATH_F32);
    CU_ASSERT(o.tol < 0); /* not given: each row's mode decides */
}

static void test_parse_dtype_math(void)
{
    static const struct {
        const char *dtype, *math;
        convt3d_dtype want_t;
        convt3d_math_mode want_m;
    } ok[] = {
        {"--dtype=f32", "--math=fp32", CONVT3D_F32, CONVT3D_MATH_F32},
        {"--dtype=f32", "--math=f32", CONVT3D_F32, CONVT3D_MATH_F32}, /* the synonym */
        {"--dtype=f32", "--math=tf32", CONVT3D_F32, CONVT3D_MATH_TF32},
        {"--dtype=f32", "--math=3xtf32", CONVT3D_F32, CONVT3D_MATH_3XTF32},
        {"--dtype=f16", "--math=fp32", CONVT3D_F16, CONVT3D_MATH_F32},
        {"--dtype=bf16", "--math=tf32", CONVT3D_BF16, CONVT3D_MATH_TF32},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        bench_options o;
        const char *const args[] = {ok[i].dtype, ok[i].math, NULL};
        CU_ASSERT_EQUAL(parse(&o, args), 0);
        CU_ASSERT_EQUAL(o.dtype, ok[i].want_t);
        CU_ASSERT_EQUAL(o.math, ok[i].want_m);
    }
    /* the separate-argument form */
    bench_options o;
    const char *const sep[] = {"--dtype", "bf16", "--math", "3xtf32", NULL};
    CU_ASSERT_EQUAL(parse(&o, sep), 0);
    CU_ASSERT(o.dtype == CONVT3D_BF16 && o.math == CONVT3D_MATH_3XTF32);
}

static void test_parse_rejects(void)
{
    static const char *const bad[] = {"--dtype=f64", "--dtype=F16", "--dtype=", "--math=tf16",
                                      "--math=TF32", "--math=3xTF32", "--math=", "--math=bf16"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bench_options o;
        const char *const args[] = {bad[i], NULL};
        CU_ASSERT_EQUAL(parse(&o, args), -1);
    }
    bench_options o;
    const char *const missing[] = {"--dtype", NULL};
    CU_ASSERT_EQUAL(parse(&o, missing), -1);
}

static void test_prec_of_mode(void)
{
    CU_ASSERT_EQUAL(mode_prec(CONVT3D_F32, CONVT3D_MATH_F32), PREC_FP32);
    CU_ASSERT_EQUAL(mode_prec(CONVT3D_F32, CONVT3D_MATH_TF32), PREC_TF32);
    CU_ASSERT_EQUAL(mode_prec(CONVT3D_F32, CONVT3D_MATH_3XTF32), PREC_3XTF32);
    /* half data: the math mode changes nothing (convt3d.h) */
    for (int m = CONVT3D_MATH_F32; m <= CONVT3D_MATH_3XTF32; m++) {
        CU_ASSERT_EQUAL(mode_prec(CONVT3D_F16, (convt3d_math_mode)m), PREC_F16);
        CU_ASSERT_EQUAL(mode_prec(CONVT3D_BF16, (convt3d_math_mode)m), PREC_BF16);
    }
    CU_ASSERT_STRING_EQUAL(prec_name(PREC_3XTF32), "3xtf32");
    CU_ASSERT_STRING_EQUAL(mode_math_name(CONVT3D_MATH_F32), "fp32");
}

/* The bounds, relative L2 against the float64 reference. */
static void test_tolerances(void)
{
    CU_ASSERT_EQUAL(prec_tolerance(PREC_FP32), 1e-5);
    CU_ASSERT_EQUAL(prec_tolerance(PREC_3XTF32), 1e-5);
    CU_ASSERT_EQUAL(prec_tolerance(PREC_TF32), 1e-3);
    CU_ASSERT_EQUAL(prec_tolerance(PREC_F16), 1e-3);
    CU_ASSERT_EQUAL(prec_tolerance(PREC_BF16), 8e-3);
    CU_ASSERT_EQUAL(prec_tolerance(PREC_COUNT), 1e-5); /* unknown: the strictest */
}

/* --tol only tightens: never above the precision's bound, the user's when
 * smaller, the precision's when not given. */
static void test_tol_only_tightens(void)
{
    static const double users[] = {-1, 0, 1e-7, 1e-5, 5e-5, 1e-3, 2e-3, 8e-3, 0.1, 1e9};
    for (int p = 0; p < PREC_COUNT; p++)
        for (size_t i = 0; i < sizeof users / sizeof users[0]; i++) {
            const double mode = prec_tolerance((bench_prec)p);
            const double row = prec_row_tolerance((bench_prec)p, users[i]);
            CU_ASSERT(row <= mode);
            if (users[i] < 0)
                CU_ASSERT_EQUAL(row, mode);
            if (users[i] >= 0 && users[i] <= mode)
                CU_ASSERT_EQUAL(row, users[i]);
        }
    /* through the command line: a looser --tol is accepted (with a warning)
     * but changes no row */
    bench_options o;
    const char *const args[] = {"--math=tf32", "--tol=0.5", NULL};
    CU_ASSERT_EQUAL_FATAL(parse(&o, args), 0);
    CU_ASSERT_EQUAL(prec_row_tolerance(mode_prec(o.dtype, o.math), o.tol), 1e-3);
    const char *const strict[] = {"--dtype=bf16", "--tol=1e-4", NULL};
    CU_ASSERT_EQUAL_FATAL(parse(&o, strict), 0);
    CU_ASSERT_EQUAL(prec_row_tolerance(mode_prec(o.dtype, o.math), o.tol), 1e-4);
}

static void test_apply_dtype(void)
{
    convt3d_problem p;
    convt3d_problem_init(&p);
    mode_apply_dtype(&p, CONVT3D_BF16);
    CU_ASSERT(p.x_type == CONVT3D_BF16 && p.w_type == CONVT3D_BF16 &&
              p.bias_type == CONVT3D_BF16 && p.y_type == CONVT3D_BF16);
}

void register_bench_mode_tests(void)
{
    static const test_entry tests[] = {
        {"bench modes: defaults f32 data, fp32 math, no --tol", test_defaults},
        {"bench modes: --dtype and --math parse (f32 a synonym of fp32)", test_parse_dtype_math},
        {"bench modes: bad --dtype/--math values are usage errors", test_parse_rejects},
        {"bench modes: the precision of each (dtype, math)", test_prec_of_mode},
        {"bench modes: tolerance per precision", test_tolerances},
        {"bench modes: --tol tightens, never loosens", test_tol_only_tightens},
        {"bench modes: the dtype applies to all four tensors", test_apply_dtype},
        {NULL, NULL}};
    add_suite("bench modes", tests);
}
