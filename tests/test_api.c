/* The API around the computation: device strings and selection, status
 * names, the thread-local last error, version, plan accessors. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static void test_device_parse_good(void)
{
    convt3d_device d = {CONVT3D_DEVICE_CPU, 5};
    CU_ASSERT_EQUAL(convt3d_device_parse("auto", &d), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(d.kind, CONVT3D_DEVICE_AUTO);
    CU_ASSERT_EQUAL(convt3d_device_parse("cpu", &d), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(d.kind, CONVT3D_DEVICE_CPU);
    CU_ASSERT_EQUAL(convt3d_device_parse("cuda", &d), CONVT3D_SUCCESS);
    CU_ASSERT(d.kind == CONVT3D_DEVICE_CUDA && d.ordinal == 0);
    CU_ASSERT_EQUAL(convt3d_device_parse("cuda:3", &d), CONVT3D_SUCCESS);
    CU_ASSERT(d.kind == CONVT3D_DEVICE_CUDA && d.ordinal == 3);
    CU_ASSERT_EQUAL(convt3d_device_parse("cuda:99", &d), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(d.ordinal, 99);
}

static void test_device_parse_bad(void)
{
    static const char *const bad[] = {"", "gpu", "cuda:", "cuda:-1", "cuda:1x", "CPU", " cpu",
                                      "cuda:99999", "cuda:+1", "cuda 0", "cpu:0", "autox"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        convt3d_device d = {CONVT3D_DEVICE_CPU, 42};
        CU_ASSERT_EQUAL(convt3d_device_parse(bad[i], &d), CONVT3D_ERR_BAD_DEVICE_STRING);
        CU_ASSERT(d.kind == CONVT3D_DEVICE_CPU && d.ordinal == 42); /* untouched */
        CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), bad[i]));
    }
    convt3d_device d;
    CU_ASSERT_EQUAL(convt3d_device_parse(NULL, &d), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(convt3d_device_parse("cpu", NULL), CONVT3D_ERR_NULL_POINTER);
}

/* Asking for a GPU that is not there: a clear status, nothing written. */
static void test_cuda_unavailable(void)
{
    convt3d_problem p = make_problem(1, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    float x[8] = {0}, w[32] = {0}, y[54], saved[54];
    poison(y, 54);
    memcpy(saved, y, sizeof y);
    convt3d_device far = {CONVT3D_DEVICE_CUDA, 99};
    const convt3d_status st = convt3d_forward(&p, far, x, w, NULL, y);
    CU_ASSERT_EQUAL(st, convt3d_has_cuda_support() ? CONVT3D_ERR_NO_DEVICE
                                                   : CONVT3D_ERR_NO_CUDA_SUPPORT);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "cuda:99"));
    CU_ASSERT_EQUAL(memcmp(y, saved, sizeof y), 0);
    if (convt3d_cuda_device_count() == 0) {
        convt3d_device first = {CONVT3D_DEVICE_CUDA, 0};
        CU_ASSERT_NOT_EQUAL(convt3d_forward(&p, first, x, w, NULL, y), CONVT3D_SUCCESS);
        CU_ASSERT_EQUAL(memcmp(y, saved, sizeof y), 0);
    }
}

/* AUTO honours CONVT3D_DEVICE; a malformed value is an error, not a guess. */
static void test_auto_and_env_override(void)
{
    convt3d_problem p = make_problem(1, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    float w[32] = {0};
    convt3d_device autod = CONVT3D_DEVICE_AUTO_INIT;
    convt3d_plan *plan = NULL;
    const char *old = getenv("CONVT3D_DEVICE");
    char *saved = old ? strdup(old) : NULL;

    setenv("CONVT3D_DEVICE", "cpu", 1);
    CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &p, autod, w, NULL), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(convt3d_plan_device(plan).kind, CONVT3D_DEVICE_CPU);
    convt3d_plan_destroy(plan);

    setenv("CONVT3D_DEVICE", "gpu", 1);
    plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &p, autod, w, NULL), CONVT3D_ERR_BAD_DEVICE_STRING);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "CONVT3D_DEVICE"));
    CU_ASSERT_PTR_NULL(plan);

    unsetenv("CONVT3D_DEVICE");
    CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &p, autod, w, NULL), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(convt3d_plan_device(plan).kind, convt3d_cuda_device_count() > 0
                                                        ? CONVT3D_DEVICE_CUDA
                                                        : CONVT3D_DEVICE_CPU);
    CU_ASSERT(strlen(convt3d_plan_kernel_name(plan)) > 0);
    CU_ASSERT_EQUAL(convt3d_plan_problem(plan)->in_channels, 2);
    convt3d_plan_destroy(plan);
    if (saved) {
        setenv("CONVT3D_DEVICE", saved, 1);
        free(saved);
    }
}

static void test_status_strings_distinct(void)
{
    for (int a = CONVT3D_SUCCESS; a <= CONVT3D_ERR_INTERNAL; a++) {
        const char *sa = convt3d_status_string((convt3d_status)a);
        CU_ASSERT(strncmp(sa, "CONVT3D_", 8) == 0);
        for (int b = a + 1; b <= CONVT3D_ERR_INTERNAL; b++)
            CU_ASSERT(strcmp(sa, convt3d_status_string((convt3d_status)b)) != 0);
    }
    CU_ASSERT_STRING_EQUAL(convt3d_status_string((convt3d_status)999), "CONVT3D_ERR_UNKNOWN_STATUS");
}

static void test_last_error_cleared_and_thread_local_contract(void)
{
    convt3d_problem p = make_problem(0, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    CU_ASSERT_NOT_EQUAL(convt3d_validate(&p), CONVT3D_SUCCESS);
    CU_ASSERT(strlen(convt3d_last_error()) > 0);
    p.batch = 1;
    CU_ASSERT_EQUAL(convt3d_validate(&p), CONVT3D_SUCCESS);
    CU_ASSERT_STRING_EQUAL(convt3d_last_error(), "");
}

static void test_version(void)
{
    CU_ASSERT_STRING_EQUAL(convt3d_version(), CONVT3D_VERSION_STRING);
    CU_ASSERT_EQUAL(convt3d_version_number(), CONVT3D_VERSION_MAJOR * 10000 +
                                                  CONVT3D_VERSION_MINOR * 100 +
                                                  CONVT3D_VERSION_PATCH);
}

static void test_problem_init_defaults(void)
{
    convt3d_problem a, b = CONVT3D_PROBLEM_INIT;
    memset(&a, 0x5a, sizeof a);
    convt3d_problem_init(&a);
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
    CU_ASSERT(a.groups == 1 && a.stride[2] == 1 && a.dilation[0] == 1 && a.padding[1] == 0);
    CU_ASSERT(a.layout == CONVT3D_LAYOUT_NCDHW && a.has_bias == 0);
    CU_ASSERT_EQUAL(convt3d_validate(&a), CONVT3D_ERR_BAD_SIZE); /* sizes left to the caller */
}

static void test_plan_null_arguments(void)
{
    convt3d_problem p = make_problem(1, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    float w[32] = {0}, x[8] = {0}, y[54];
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    convt3d_plan *plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create(NULL, &p, cpu, w, NULL), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &p, cpu, NULL, NULL), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_PTR_NULL(plan);
    CU_ASSERT_EQUAL(convt3d_execute(NULL, x, y), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &p, cpu, w, NULL), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(convt3d_execute(plan, NULL, y), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(convt3d_execute(plan, x, NULL), CONVT3D_ERR_NULL_POINTER);
    /* A CPU plan takes no stream. */
    CU_ASSERT_EQUAL(convt3d_execute_on_stream(plan, x, y, (void *)&p), CONVT3D_ERR_POINTER_LOCATION);
    convt3d_plan_destroy(plan);
    convt3d_plan_destroy(NULL);
}

/* The plan copies the weights: changing or freeing them afterwards has no effect. */
static void test_plan_owns_weights(void)
{
    convt3d_problem p = make_problem(1, 2, 3, 1, 3, 3, 3, 2, 2, 0, 1, 1, CONVT3D_LAYOUT_NCDHW);
    int64_t nx, nw, ny;
    convt3d_tensor_elems(&p, &nx, &nw, &ny);
    rng r = rng_make(5);
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), b[3] = {1, 2, 3};
    float *y1 = malloc(ny * sizeof *y1), *y2 = malloc(ny * sizeof *y2);
    fill_uniform(&r, x, nx);
    fill_uniform(&r, w, nw);
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    convt3d_plan *plan;
    CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &p, cpu, w, b), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(convt3d_execute(plan, x, y1), CONVT3D_SUCCESS);
    fill_uniform(&r, w, nw);
    b[0] = 100;
    free(w);
    CU_ASSERT_EQUAL(convt3d_execute(plan, x, y2), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(y1, y2, ny * sizeof *y1), 0);
    convt3d_plan_destroy(plan);
    free(x), free(y1), free(y2);
}

void register_api_tests(void)
{
    static const test_entry tests[] = {
        {"device strings that parse", test_device_parse_good},
        {"device strings that do not parse", test_device_parse_bad},
        {"cuda asked for without CUDA/device", test_cuda_unavailable},
        {"auto and CONVT3D_DEVICE", test_auto_and_env_override},
        {"status strings distinct", test_status_strings_distinct},
        {"last error cleared on success", test_last_error_cleared_and_thread_local_contract},
        {"version", test_version},
        {"problem defaults", test_problem_init_defaults},
        {"plan NULL arguments", test_plan_null_arguments},
        {"plan owns its weights", test_plan_owns_weights},
        {NULL, NULL}};
    add_suite("api", tests);
}
