/* convt3d-bench --all-kernels: its parsing (bench/cli.c) and the oracle's
 * arithmetic (bench/oracle.c) on a hand-made result set whose figures are
 * worked out below. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/cli.h"
#include "../bench/oracle.h"
#include "test_util.h"

static int parse(bench_options *o, const char *const *args)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"convt3d-bench";
    for (int i = 0; args[i] && argc < 15; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    return cli_parse(argc, argv, o);
}

static void test_parse_all_kernels(void)
{
    bench_options o;
    const char *const none[] = {NULL};
    CU_ASSERT_EQUAL_FATAL(parse(&o, none), 0);
    CU_ASSERT_EQUAL(o.all_kernels, 0);
    const char *const on[] = {"--all-kernels", "--random=3", NULL};
    CU_ASSERT_EQUAL_FATAL(parse(&o, on), 0);
    CU_ASSERT_EQUAL(o.all_kernels, 1);
    CU_ASSERT_EQUAL(o.random_n, 3);
    /* one implementation forced and all of them timed contradict each other */
    const char *const both[] = {"--all-kernels", "--kernel=cpu/f32_phase_gather_ncdhw__generic",
                                NULL};
    CU_ASSERT_EQUAL(parse(&o, both), -1);
    /* --kernel=3 stays the kernel size: no conflict */
    const char *const size[] = {"--all-kernels", "--cin=2", "--cout=2", "--in=4", "--kernel=3",
                                NULL};
    CU_ASSERT_EQUAL(parse(&o, size), 0);
    CU_ASSERT(o.all_kernels && !o.impl && o.shape.kernel[0] == 3);
}

/* ---- a hand-made run: device 0, kernels k1, k2, k3 ------------------------ */

enum { N_CASES = 5, MAX_F = 3 };

static void row(impl_result *r, const char *kernel, int baseline, double ms)
{
    memset(r, 0, sizeof *r); /* not impl_init: the tests do not link bench/impl.c */
    snprintf(r->name, sizeof r->name, "%s", baseline ? "base" : "convt3d");
    r->baseline = baseline;
    snprintf(r->detail, sizeof r->detail, "%s", kernel);
    r->state = IMPL_OK;
    r->time.valid = 1;
    r->time.reps = 10;
    r->time.median_ms = r->time.min_ms = r->time.max_ms = ms;
    r->verify.checked = 1;
    r->verify.ok = 1;
}

/* case c: automatic kernel `a` at auto_ms, baseline at base_ms (0: it
 * failed), forced rows kernels[i] at ms[i]. */
static void make_case(case_result *cr, bench_case *bc, const char *label, const char *a,
                      double auto_ms, double base_ms, int nf, const char *const *kernels,
                      const double *ms)
{
    memset(cr, 0, sizeof *cr);
    memset(bc, 0, sizeof *bc);
    snprintf(bc->label, sizeof bc->label, "%s", label);
    convt3d_problem_init(&bc->problem);
    bc->kind = CASE_RUN;
    cr->bc = bc;
    cr->ran = 1;
    row(&cr->impl[0][0], a, 0, auto_ms);
    row(&cr->impl[0][1], "", 1, base_ms);
    if (base_ms <= 0)
        cr->impl[0][1].state = IMPL_FAILED;
    cr->n_impl[0] = 2;
    cr->forced[0] = calloc(MAX_F, sizeof *cr->forced[0]);
    for (int i = 0; i < nf; i++)
        row(&cr->forced[0][i], kernels[i], 0, ms[i]);
    cr->n_forced[0] = nf;
}

static case_result res[N_CASES];
static bench_case cases[N_CASES];

static void build_run(void)
{
    static const char *const k12[] = {"k1", "k2"}, *const k21[] = {"k2", "k1"},
                             *const k132[] = {"k1", "k3", "k2"};
    /* A: k2 twice as fast as the automatic k1; baseline 2 ms */
    make_case(&res[0], &cases[0], "A", "k1", 1.0, 2.0, 2, k12, (const double[]){1.02, 0.5});
    /* B: the automatic k1 is the fastest (its own rerun at 0.98 is noise) */
    make_case(&res[1], &cases[1], "B", "k1", 1.0, 1.0, 2, k12, (const double[]){0.98, 1.01});
    /* C: k1 2% faster than the automatic k2: within 3%, and no baseline */
    make_case(&res[2], &cases[2], "C", "k2", 1.0, 0, 2, k21, (const double[]){1.0, 0.98});
    /* D: k3 fastest but wrong (no candidate), k2 at 1.6 beats the automatic 2.0 */
    make_case(&res[3], &cases[3], "D", "k1", 2.0, 1.0, 3, k132,
              (const double[]){2.0, 1.0, 1.6});
    res[3].forced[0][1].verify.ok = 0;
    /* E: the automatic row failed: no oracle */
    make_case(&res[4], &cases[4], "E", "k1", 1.0, 1.0, 2, k12, (const double[]){1.0, 0.1});
    res[4].impl[0][0].state = IMPL_FAILED;
}

static void free_run(void)
{
    for (int c = 0; c < N_CASES; c++)
        free(res[c].forced[0]);
}

static void test_oracle_case(void)
{
    build_run();
    oracle_case oc;
    oracle_of(&res[0], 0, &oc);
    CU_ASSERT(oc.valid && oc.auto_forced == 0 && oc.winner == 1);
    CU_ASSERT_DOUBLE_EQUAL(oc.loss, 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(oc.base_ms, 2.0, 1e-12);
    oracle_of(&res[1], 0, &oc);
    CU_ASSERT(oc.valid && oc.winner == 1);
    CU_ASSERT_DOUBLE_EQUAL(oc.loss, 1.0, 1e-12); /* the rerun's 0.98 does not count */
    oracle_of(&res[3], 0, &oc);
    CU_ASSERT(oc.valid && oc.winner == 2); /* k3 was wrong */
    CU_ASSERT_DOUBLE_EQUAL(oc.loss, 1.25, 1e-12);
    oracle_of(&res[4], 0, &oc);
    CU_ASSERT(!oc.valid);
    free_run();
}

static void test_oracle_stats(void)
{
    build_run();
    oracle_stats st;
    oracle_compute(res, N_CASES, 0, &st);
    CU_ASSERT_EQUAL(st.problems, 4);
    CU_ASSERT_EQUAL(st.auto_fastest, 2); /* B, and C within 3% */
    CU_ASSERT_EQUAL(st.forced_bad, 1);   /* D's k3 */
    CU_ASSERT_DOUBLE_EQUAL(st.geo_loss, pow(2.0 * 1.0 * (1.0 / 0.98) * 1.25, 0.25), 1e-12);
    CU_ASSERT_EQUAL(st.compared, 3); /* C has no baseline */
    CU_ASSERT_DOUBLE_EQUAL(st.geo_actual, pow(2.0 * 1.0 * 0.5, 1.0 / 3), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(st.geo_oracle, pow(4.0 * 1.0 * (1.0 / 1.6), 1.0 / 3), 1e-12);
    free_run();
}

static void test_oracle_print(void)
{
    build_run();
    char buf[8192] = "";
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    oracle_print(f, res, N_CASES, 0, 10);
    rewind(f);
    const size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = '\0';
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "the fastest (within 3%): 2 (50.0%)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "1 failed or mismatched"));
    /* k1: A, B, D; beaten twice by k2, geomean sqrt(2 x 1.25) */
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "3 problems, fastest in 1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "   2 x, geomean 1.58x"));
    /* the largest loss first, with both kernels */
    const char *a = strstr(buf, "2.00x  A"), *d = strstr(buf, "1.25x  D");
    CU_ASSERT(a && d && a < d);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "k1 -> k2"));
    CU_ASSERT_PTR_NULL(strstr(buf, "  C  ")); /* within 3%: no loss */
    free_run();
}

void register_bench_oracle_tests(void)
{
    static const test_entry tests[] = {
        {"bench oracle: --all-kernels parses, and not with a forced --kernel",
         test_parse_all_kernels},
        {"bench oracle: per problem, the automatic rerun is no competitor, a wrong kernel none",
         test_oracle_case},
        {"bench oracle: share fastest, geomean loss, speed-ups as chosen and oracle",
         test_oracle_stats},
        {"bench oracle: the block names who beat whom and the largest losses", test_oracle_print},
        {NULL, NULL}};
    add_suite("bench oracle", tests);
}
