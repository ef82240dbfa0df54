/* The CUnit runner: registers every suite, runs them verbosely, and prints
 * how many GPU cases were skipped and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "test_util.h"

/* CONVT3D_TEST_SUITES=name[,name...]: only the suites whose names contain
 * one of the words run (e.g. "gpu" on a GPU machine); unset: all. */
static void select_suites(void)
{
    const char *want = getenv("CONVT3D_TEST_SUITES");
    if (!want || !*want)
        return;
    for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext) {
        int on = 0;
        for (const char *w = want; *w && !on;) {
            const size_t len = strcspn(w, ",");
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), w);
            on = word[0] && strstr(s->pName, word) != NULL;
            w += len + (w[len] == ',');
        }
        CU_set_suite_active(s, on ? CU_TRUE : CU_FALSE);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    register_shape_tests();
    register_validation_tests();
    register_reference_tests();
    register_api_tests();
    register_backend_tests();
    register_descriptor_tests();
    register_random_problem_tests();
    register_cuda_walk_tests();
    register_bench_mode_tests();
    register_bench_oracle_tests();
    register_reliability_tests();

    printf("convt3d %s test suite, seed %llu (set CONVT3D_TEST_SEED to change)\n",
           convt3d_version(), (unsigned long long)test_seed());
    select_suites();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    const unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    const unsigned run = CU_get_number_of_tests_run();
    const char *why = gpu_skip_reason();
    printf("\nGPU cases skipped: %d%s%s%s\n", gpu_cases_skipped, why ? " (" : "", why ? why : "",
           why ? ")" : "");
    const unsigned failed_tests = CU_get_number_of_tests_failed();
    const unsigned skipped = (unsigned)tests_skipped();
    print_skips();
    printf("%u tests run: %u passed, %u skipped (could not check; listed above), %u failed\n",
           run, run - failed_tests - (skipped < run - failed_tests ? skipped : 0), skipped,
           failed_tests);
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
