/* The CUnit runner: registers every suite, runs them verbosely, and prints
 * how many GPU cases were skipped and why. */
#include <stdio.h>

#include <CUnit/Basic.h>

#include "test_util.h"

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    register_shape_tests();
    register_validation_tests();
    register_reference_tests();
    register_api_tests();
    register_backend_tests();
    register_gpu_tests();
    register_descriptor_tests();
    register_reliability_tests();

    printf("convt3d %s test suite, seed %llu (set CONVT3D_TEST_SEED to change)\n",
           convt3d_version(), (unsigned long long)test_seed());
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    const unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    const unsigned run = CU_get_number_of_tests_run();
    const char *why = gpu_skip_reason();
    printf("\nGPU cases skipped: %d%s%s%s\n", gpu_cases_skipped, why ? " (" : "", why ? why : "",
           why ? ")" : "");
    printf("%u tests run, %u failed\n", run, CU_get_number_of_tests_failed());
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
