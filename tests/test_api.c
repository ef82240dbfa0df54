/* The API around the computation: device strings and selection, status
 * names, the thread-local last error, version, plan accessors. */
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

/* ---- the API of 0.2: options, math modes, data types, output size,
 *      the implementation list, forcing ---------------------------------- */

static const convt3d_device cpu_dev = CONVT3D_DEVICE_CPU_INIT;

/* A small valid problem with its tensors; y poisoned. */
typedef struct small_case {
    convt3d_problem p;
    int64_t nx, nw, ny;
    float *x, *w, *b, *y;
} small_case;

static small_case small_make(convt3d_layout layout, int bias)
{
    small_case c;
    c.p = make_problem(1, 4, 6, 2, 3, 4, 5, 3, 2, 1, 1, bias, layout);
    CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(&c.p, &c.nx, &c.nw, &c.ny), CONVT3D_SUCCESS);
    c.x = calloc((size_t)c.nx, sizeof *c.x);
    c.w = calloc((size_t)c.nw, sizeof *c.w);
    c.b = calloc(6, sizeof *c.b);
    c.y = malloc((size_t)c.ny * sizeof *c.y);
    CU_ASSERT_FATAL(c.x && c.w && c.b && c.y);
    poison(c.y, c.ny);
    return c;
}

static void small_free(small_case *c) { free(c->x), free(c->w), free(c->b), free(c->y); }

/* plan_create_ex fails with want, a message naming `says`, the plan pointer
 * untouched; y stays poisoned through a forward with the same problem. */
static void expect_create_fails(small_case *c, const convt3d_problem *p,
                                const convt3d_plan_options *opt, convt3d_status want,
                                const char *says)
{
    convt3d_plan *plan = (convt3d_plan *)(uintptr_t)0x1234;
    const convt3d_status st = convt3d_plan_create_ex(&plan, p, cpu_dev, c->w, c->b, opt);
    CU_ASSERT_EQUAL(st, want);
    CU_ASSERT_PTR_EQUAL(plan, (convt3d_plan *)(uintptr_t)0x1234);
    if (st != want || (says && !strstr(convt3d_last_error(), says)))
        printf("\n  plan_create_ex: got %s \"%s\", want %s naming \"%s\"\n",
               convt3d_status_string(st), convt3d_last_error(), convt3d_status_string(want),
               says ? says : "");
    if (says)
        CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), says));
    CU_ASSERT_EQUAL(count_poison(c->y, c->ny), c->ny);
}

static void test_options_init(void)
{
    convt3d_plan_options o;
    memset(&o, 0xa5, sizeof o);
    convt3d_plan_options_init(&o);
    CU_ASSERT_EQUAL(o.struct_size, sizeof o);
    CU_ASSERT_EQUAL(o.math_mode, CONVT3D_MATH_F32);
    CU_ASSERT_PTR_NULL(o.implementation);
    convt3d_plan_options_init(NULL); /* no crash */
}

/* struct_size: an older, smaller struct is read only as far as it goes; a
 * newer, larger one is accepted only with its extra bytes zero; zero or
 * garbage sizes are refused. */
static void test_options_struct_size(void)
{
    small_case c = small_make(CONVT3D_LAYOUT_NCDHW, 1);
    /* Older: a header without the implementation field.  The garbage name
     * past struct_size must not be read. */
    convt3d_plan_options o;
    convt3d_plan_options_init(&o);
    o.struct_size = offsetof(convt3d_plan_options, implementation);
    o.implementation = "no/such_implementation";
    convt3d_plan *plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create_ex(&plan, &c.p, cpu_dev, c.w, c.b, &o), CONVT3D_SUCCESS);
    convt3d_plan_destroy(plan);
    /* Newer: extra bytes, all zero -> fine; one set -> BAD_OPTIONS. */
    unsigned char big[sizeof(convt3d_plan_options) + 32];
    memset(big, 0, sizeof big);
    convt3d_plan_options_init((convt3d_plan_options *)(void *)big);
    ((convt3d_plan_options *)(void *)big)->struct_size = sizeof big;
    plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create_ex(&plan, &c.p, cpu_dev, c.w, c.b,
                                           (convt3d_plan_options *)(void *)big),
                    CONVT3D_SUCCESS);
    convt3d_plan_destroy(plan);
    big[sizeof(convt3d_plan_options) + 5] = 1;
    expect_create_fails(&c, &c.p, (convt3d_plan_options *)(void *)big, CONVT3D_ERR_BAD_OPTIONS,
                        "struct_size");
    CU_ASSERT_EQUAL(convt3d_implementation_applies(convt3d_implementation_name(0), &c.p,
                                                   cpu_dev,
                                                   (convt3d_plan_options *)(void *)big),
                    CONVT3D_ERR_BAD_OPTIONS);
    /* Zero and garbage sizes. */
    const size_t sizes[] = {0, 1, offsetof(convt3d_plan_options, math_mode), (size_t)-1,
                            (size_t)1 << 40};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        convt3d_plan_options_init(&o);
        o.struct_size = sizes[i];
        expect_create_fails(&c, &c.p, &o, CONVT3D_ERR_BAD_OPTIONS, "struct_size");
    }
    small_free(&c);
}

/* TF32 and 3XTF32 are taken (and reported by the plan); values that are no
 * convt3d_math_mode are refused by plan creation and applies alike. */
static void test_math_modes(void)
{
    small_case c = small_make(CONVT3D_LAYOUT_NDHWC, 0);
    const int bad[] = {3, -1, 1000};
    const char *says[] = {"math_mode=3", "math_mode=-1", "math_mode=1000"};
    for (int i = 0; i < 3; i++) {
        convt3d_plan_options o;
        convt3d_plan_options_init(&o);
        o.math_mode = (convt3d_math_mode)bad[i];
        expect_create_fails(&c, &c.p, &o, CONVT3D_ERR_UNSUPPORTED_MATH_MODE, says[i]);
        CU_ASSERT_EQUAL(convt3d_implementation_applies(convt3d_implementation_name(0), &c.p,
                                                       cpu_dev, &o),
                        CONVT3D_ERR_UNSUPPORTED_MATH_MODE);
    }
    const convt3d_math_mode good[] = {CONVT3D_MATH_F32, CONVT3D_MATH_TF32, CONVT3D_MATH_3XTF32};
    for (int i = 0; i < 3; i++) {
        convt3d_plan_options o;
        convt3d_plan_options_init(&o);
        o.math_mode = good[i];
        convt3d_plan *plan = NULL;
        CU_ASSERT_EQUAL_FATAL(convt3d_plan_create_ex(&plan, &c.p, cpu_dev, c.w, c.b, &o),
                              CONVT3D_SUCCESS);
        CU_ASSERT_EQUAL(convt3d_plan_math_mode(plan), good[i]);
        CU_ASSERT_EQUAL(convt3d_execute(plan, c.x, c.y), CONVT3D_SUCCESS);
        CU_ASSERT_EQUAL(count_poison(c.y, c.ny), 0);
        poison(c.y, c.ny);
        convt3d_plan_destroy(plan);
    }
    small_free(&c);
}

/* The public type helpers: names, sizes, and conversions that round to
 * nearest even, overflow to infinity and keep NaN, refusing bad input. */
static void test_convert(void)
{
    CU_ASSERT_STRING_EQUAL(convt3d_dtype_name(CONVT3D_F16), "f16");
    CU_ASSERT_STRING_EQUAL(convt3d_dtype_name(CONVT3D_BF16), "bf16");
    CU_ASSERT_STRING_EQUAL(convt3d_dtype_name((convt3d_dtype)9), "unknown");
    CU_ASSERT_EQUAL(convt3d_dtype_size(CONVT3D_F32), 4);
    CU_ASSERT_EQUAL(convt3d_dtype_size(CONVT3D_BF16), 2);
    CU_ASSERT_EQUAL(convt3d_dtype_size((convt3d_dtype)9), 0);
    /* 1 + 2^-11 is halfway between two f16 values: even (1.0) wins;
     * 1 + 3 * 2^-11 rounds up to 1 + 2^-9 */
    const float in[6] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65520.0f, -0.0f, NAN, 0x1p-24f};
    uint16_t h[6];
    float back[6];
    CU_ASSERT_EQUAL(convt3d_convert(in, CONVT3D_F32, h, CONVT3D_F16, 6), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(convt3d_convert(h, CONVT3D_F16, back, CONVT3D_F32, 6), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(back[0], 1.0f);
    CU_ASSERT_EQUAL(back[1], 1.0f + 0x1p-9f);
    CU_ASSERT(isinf(back[2]));
    CU_ASSERT_EQUAL(h[3], 0x8000);
    CU_ASSERT(isnan(back[4]));
    CU_ASSERT_EQUAL(back[5], 0x1p-24f); /* the smallest subnormal */
    /* bf16: 1 + 2^-8 halfway -> 1.0; 1 + 3 * 2^-8 -> 1 + 2^-6 */
    const float bin[2] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f};
    CU_ASSERT_EQUAL(convt3d_convert(bin, CONVT3D_F32, h, CONVT3D_BF16, 2), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(convt3d_convert(h, CONVT3D_BF16, back, CONVT3D_F32, 2), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(back[0], 1.0f);
    CU_ASSERT_EQUAL(back[1], 1.0f + 0x1p-6f);
    CU_ASSERT_EQUAL(convt3d_convert(NULL, CONVT3D_F32, h, CONVT3D_F16, 1),
                    CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(convt3d_convert(in, CONVT3D_F32, h, CONVT3D_F16, -1), CONVT3D_ERR_BAD_SIZE);
    CU_ASSERT_EQUAL(convt3d_convert(in, (convt3d_dtype)5, h, CONVT3D_F16, 1),
                    CONVT3D_ERR_UNSUPPORTED_DATA_TYPE);
}

/* f16, bf16 (a mix with the other f32 tensors) and garbage in each of x,
 * w, bias, y: refused by validate, plan_create, forward and reference
 * alike, y unwritten. */
static void test_data_types(void)
{
    small_case c = small_make(CONVT3D_LAYOUT_NCDHW, 1);
    const int types[] = {CONVT3D_F16, CONVT3D_BF16, 3, -1, 77};
    for (int field = 0; field < 4; field++)
        for (int t = 0; t < 5; t++) {
            convt3d_problem p = c.p;
            convt3d_dtype *f = field == 0   ? &p.x_type
                               : field == 1 ? &p.w_type
                               : field == 2 ? &p.bias_type
                                            : &p.y_type;
            *f = (convt3d_dtype)types[t];
            const char *name[] = {"x_type", "w_type", "bias_type", "y_type"};
            const convt3d_status st = convt3d_validate(&p);
            CU_ASSERT_EQUAL(st, CONVT3D_ERR_UNSUPPORTED_DATA_TYPE);
            if (st != CONVT3D_ERR_UNSUPPORTED_DATA_TYPE || !strstr(convt3d_last_error(), name[field]))
                printf("\n  %s=%d: got %s \"%s\"\n", name[field], types[t],
                       convt3d_status_string(st), convt3d_last_error());
            CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), name[field]));
            expect_create_fails(&c, &p, NULL, CONVT3D_ERR_UNSUPPORTED_DATA_TYPE, name[field]);
            CU_ASSERT_EQUAL(convt3d_forward(&p, cpu_dev, c.x, c.w, c.b, c.y),
                            CONVT3D_ERR_UNSUPPORTED_DATA_TYPE);
            CU_ASSERT_EQUAL(convt3d_reference(&p, c.x, c.w, c.b, c.y),
                            CONVT3D_ERR_UNSUPPORTED_DATA_TYPE);
            CU_ASSERT_EQUAL(count_poison(c.y, c.ny), c.ny);
        }
    small_free(&c);
}

/* PyTorch's _output_padding: for each dim, min = (i-1)*s - 2p + l*(k-1) + 1
 * and every size in [min, min + s - 1] is reachable with output_padding =
 * size - min.  (PyTorch checks output_padding < stride only through the
 * range; the library also requires output_padding < max(stride, dilation),
 * which the range implies.) */
static void test_set_output_size(void)
{
    rng r = rng_make(test_seed() + 31);
    int checked = 0;
    for (int i = 0; i < 400; i++) {
        convt3d_problem p = random_problem(&r, 1e7, 1000000);
        for (int d = 0; d < 3; d++)
            p.output_padding[d] = 0;
        int64_t mins[3], want[3];
        for (int d = 0; d < 3; d++)
            mins[d] = (p.in_size[d] - 1) * p.stride[d] - 2 * p.padding[d] +
                      p.dilation[d] * (p.kernel[d] - 1) + 1;
        /* a size in range in every dim */
        for (int d = 0; d < 3; d++)
            want[d] = mins[d] + rng_int(&r, 0, p.stride[d] - 1);
        convt3d_problem q = p;
        q.output_padding[0] = 99; /* overwritten */
        const convt3d_status st = convt3d_set_output_size(&q, want);
        int ok = 1;
        for (int d = 0; d < 3; d++)
            ok &= mins[d] >= 1;
        if (!ok) { /* the problem itself is invalid */
            CU_ASSERT_NOT_EQUAL(st, CONVT3D_SUCCESS);
            continue;
        }
        CU_ASSERT_EQUAL(st, CONVT3D_SUCCESS);
        int64_t out[3];
        CU_ASSERT_EQUAL(convt3d_output_dims(&q, out), CONVT3D_SUCCESS);
        for (int d = 0; d < 3; d++) {
            CU_ASSERT_EQUAL(q.output_padding[d], want[d] - mins[d]);
            CU_ASSERT_EQUAL(out[d], want[d]);
        }
        /* one dim out of range, below or above: refused, problem untouched */
        const int d = (int)rng_int(&r, 0, 2);
        int64_t bad[3] = {want[0], want[1], want[2]};
        bad[d] = rng_int(&r, 0, 1) ? mins[d] + p.stride[d] : mins[d] - 1;
        convt3d_problem before = p;
        before.output_padding[1] = 1 % p.stride[1]; /* any valid value */
        convt3d_problem after = before;
        CU_ASSERT_EQUAL(convt3d_set_output_size(&after, bad), CONVT3D_ERR_BAD_OUTPUT_SIZE);
        CU_ASSERT_EQUAL(memcmp(&before, &after, sizeof before), 0);
        char dim[8];
        snprintf(dim, sizeof dim, "%c", "dhw"[d]);
        CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "output"));
        checked++;
    }
    CU_ASSERT(checked > 300);
    /* NULL arguments; an invalid problem keeps its own error */
    convt3d_problem p = make_problem(1, 2, 2, 1, 3, 3, 3, 3, 2, 1, 0, 0, CONVT3D_LAYOUT_NCDHW);
    const int64_t five[3] = {5, 5, 5};
    CU_ASSERT_EQUAL(convt3d_set_output_size(NULL, five), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(convt3d_set_output_size(&p, NULL), CONVT3D_ERR_NULL_POINTER);
    p.stride[0] = 0;
    convt3d_problem keep = p;
    CU_ASSERT_EQUAL(convt3d_set_output_size(&p, five), CONVT3D_ERR_BAD_STRIDE);
    CU_ASSERT_EQUAL(memcmp(&keep, &p, sizeof p), 0);
}

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_implementation_list(void)
{
    const int n = convt3d_implementation_count();
    CU_ASSERT_FATAL(n > 0);
    int cpu = 0;
    for (int i = 0; i < n; i++) {
        const char *name = convt3d_implementation_name(i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(name);
        const convt3d_device_kind k = convt3d_implementation_device(i);
        CU_ASSERT(k == CONVT3D_DEVICE_CPU || k == CONVT3D_DEVICE_CUDA);
        CU_ASSERT(has_prefix(name, k == CONVT3D_DEVICE_CPU ? "cpu/" : "cuda/"));
        CU_ASSERT(strlen(name) > strlen("cuda/"));
        cpu += k == CONVT3D_DEVICE_CPU;
        for (int j = 0; j < i; j++)
            CU_ASSERT(strcmp(name, convt3d_implementation_name(j)) != 0);
    }
    CU_ASSERT(cpu > 0);
    CU_ASSERT_PTR_NULL(convt3d_implementation_name(-1));
    CU_ASSERT_PTR_NULL(convt3d_implementation_name(n));
    CU_ASSERT_PTR_NULL(convt3d_implementation_name(n + 1000));
    CU_ASSERT_EQUAL(convt3d_implementation_device(-1), CONVT3D_DEVICE_AUTO);
    CU_ASSERT_EQUAL(convt3d_implementation_device(n), CONVT3D_DEVICE_AUTO);
    /* a build without CUDA lists no CUDA implementation */
    if (!convt3d_has_cuda_support())
        CU_ASSERT_EQUAL(cpu, n);
}

/* Forcing errors: unknown names, another device's name, NULL name to
 * applies; the plan pointer untouched and y unwritten every time. */
static void test_forcing_errors(void)
{
    small_case c = small_make(CONVT3D_LAYOUT_NCDHW, 1);
    convt3d_plan_options o;
    convt3d_plan_options_init(&o);
    const char *unknown[] = {"no/such", "cpu/", "cpu", "CPU/f32_phase_gather_ncdhw__generic",
                             "cpu/f32_phase_gather_ncdhw__generic ", "cuda/nope"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        o.implementation = unknown[i];
        expect_create_fails(&c, &c.p, &o, CONVT3D_ERR_UNKNOWN_IMPLEMENTATION, unknown[i]);
        CU_ASSERT_EQUAL(convt3d_implementation_applies(unknown[i], &c.p, cpu_dev, NULL),
                        CONVT3D_ERR_UNKNOWN_IMPLEMENTATION);
    }
    CU_ASSERT_EQUAL(convt3d_implementation_applies(NULL, &c.p, cpu_dev, NULL),
                    CONVT3D_ERR_NULL_POINTER);
    /* a CUDA implementation on device cpu, where the build has one */
    for (int i = 0; i < convt3d_implementation_count(); i++) {
        if (convt3d_implementation_device(i) != CONVT3D_DEVICE_CUDA)
            continue;
        o.implementation = convt3d_implementation_name(i);
        expect_create_fails(&c, &c.p, &o, CONVT3D_ERR_NOT_APPLICABLE, "cpu");
        CU_ASSERT_EQUAL(convt3d_implementation_applies(o.implementation, &c.p, cpu_dev, NULL),
                        CONVT3D_ERR_NOT_APPLICABLE);
    }
    /* a CPU implementation of the other layout: NOT_APPLICABLE, no fallback */
    for (int i = 0; i < convt3d_implementation_count(); i++) {
        const char *name = convt3d_implementation_name(i);
        if (convt3d_implementation_device(i) != CONVT3D_DEVICE_CPU || !strstr(name, "_ndhwc"))
            continue;
        o.implementation = name;
        expect_create_fails(&c, &c.p, &o, CONVT3D_ERR_NOT_APPLICABLE, name);
    }
    /* an invalid problem keeps its own error, forced or not */
    convt3d_problem bad = c.p;
    bad.groups = 5;
    o.implementation = convt3d_implementation_name(0);
    expect_create_fails(&c, &bad, &o, CONVT3D_ERR_BAD_GROUPS, NULL);
    CU_ASSERT_EQUAL(convt3d_implementation_applies(o.implementation, &bad, cpu_dev, NULL),
                    CONVT3D_ERR_BAD_GROUPS);
    small_free(&c);
}

/* convt3d_implementation_applies agrees with plan_create_ex for every
 * implementation on random problems: SUCCESS <-> a plan that runs it (and
 * computes what the reference does); any other status <-> the same status
 * from plan_create_ex.  CUDA implementations without a GPU must say
 * NO_CUDA_SUPPORT or NO_DEVICE. */
static void test_applies_matches_create(void)
{
    rng r = rng_make(test_seed() + 77);
    const int n = convt3d_implementation_count();
    int created = 0;
    for (int t = 0; t < 40; t++) {
        const convt3d_problem p = random_problem(&r, 2e5, 20000);
        int64_t nx, nw, ny;
        CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(&p, &nx, &nw, &ny), CONVT3D_SUCCESS);
        float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
        float *b = malloc((size_t)p.out_channels * sizeof *b);
        float *y = malloc((size_t)ny * sizeof *y), *ref = malloc((size_t)ny * sizeof *ref);
        CU_ASSERT_FATAL(x && w && b && y && ref);
        fill_small_ints(&r, x, nx);
        fill_small_ints(&r, w, nw);
        fill_small_ints(&r, b, p.out_channels);
        CU_ASSERT_EQUAL_FATAL(convt3d_reference(&p, x, w, b, ref), CONVT3D_SUCCESS);
        for (int i = 0; i < n; i++) {
            const char *name = convt3d_implementation_name(i);
            const convt3d_device_kind kind = convt3d_implementation_device(i);
            const convt3d_device dev = {kind, 0};
            const convt3d_status a = convt3d_implementation_applies(name, &p, dev, NULL);
            if (kind == CONVT3D_DEVICE_CUDA && gpu_skip_reason())
                CU_ASSERT(a == CONVT3D_ERR_NO_CUDA_SUPPORT || a == CONVT3D_ERR_NO_DEVICE);
            if (a == CONVT3D_ERR_NOT_APPLICABLE)
                CU_ASSERT(strlen(convt3d_last_error()) > 0);
            convt3d_plan_options o;
            convt3d_plan_options_init(&o);
            o.implementation = name;
            convt3d_plan *plan = (convt3d_plan *)(uintptr_t)0x99;
            const convt3d_status c = convt3d_plan_create_ex(&plan, &p, dev, w, b, &o);
            CU_ASSERT_EQUAL(c, a);
            if (c != a) {
                char desc[512];
                problem_describe(&p, desc, sizeof desc);
                printf("\n  %s: applies %s, plan_create_ex %s (%s) on %s\n", name,
                       convt3d_status_string(a), convt3d_status_string(c), convt3d_last_error(),
                       desc);
            }
            if (c != CONVT3D_SUCCESS) {
                CU_ASSERT_PTR_EQUAL(plan, (convt3d_plan *)(uintptr_t)0x99);
                continue;
            }
            created++;
            CU_ASSERT_STRING_EQUAL(convt3d_plan_kernel_name(plan), name);
            CU_ASSERT_EQUAL(convt3d_plan_device(plan).kind, kind);
            if (kind == CONVT3D_DEVICE_CPU) {
                poison(y, ny);
                CU_ASSERT_EQUAL(convt3d_execute(plan, x, y), CONVT3D_SUCCESS);
                CU_ASSERT_EQUAL(memcmp(y, ref, (size_t)ny * sizeof *y), 0);
            }
            convt3d_plan_destroy(plan);
        }
        free(x), free(w), free(b), free(y), free(ref);
    }
    CU_ASSERT(created > 0);
}

/* CONVT3D_IMPLEMENTATION forces an implementation when the options do not;
 * options win over it; an unknown name in it fails like one in options. */
static void test_implementation_env(void)
{
    small_case c = small_make(CONVT3D_LAYOUT_NDHWC, 1);
    /* the library's own choice for the problem, and an NCDHW implementation */
    convt3d_plan *plan = NULL;
    CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &c.p, cpu_dev, c.w, c.b), CONVT3D_SUCCESS);
    const char *chosen = convt3d_plan_kernel_name(plan);
    convt3d_plan_destroy(plan);
    const char *ncdhw = NULL;
    for (int i = 0; i < convt3d_implementation_count(); i++)
        if (convt3d_implementation_device(i) == CONVT3D_DEVICE_CPU &&
            strstr(convt3d_implementation_name(i), "_ncdhw"))
            ncdhw = convt3d_implementation_name(i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ncdhw);
    setenv("CONVT3D_IMPLEMENTATION", chosen, 1);
    plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &c.p, (convt3d_device)CONVT3D_DEVICE_AUTO_INIT, c.w, c.b),
                    CONVT3D_SUCCESS);
    if (plan) {
        CU_ASSERT_STRING_EQUAL(convt3d_plan_kernel_name(plan), chosen);
        CU_ASSERT_EQUAL(convt3d_plan_device(plan).kind, CONVT3D_DEVICE_CPU); /* AUTO -> its device */
    }
    convt3d_plan_destroy(plan);
    /* options win over the variable */
    convt3d_plan_options o;
    convt3d_plan_options_init(&o);
    o.implementation = ncdhw;
    expect_create_fails(&c, &c.p, &o, CONVT3D_ERR_NOT_APPLICABLE, ncdhw);
    /* the variable's implementation must apply too: no fallback */
    setenv("CONVT3D_IMPLEMENTATION", ncdhw, 1);
    expect_create_fails(&c, &c.p, NULL, CONVT3D_ERR_NOT_APPLICABLE, ncdhw);
    CU_ASSERT_EQUAL(convt3d_forward(&c.p, cpu_dev, c.x, c.w, c.b, c.y), CONVT3D_ERR_NOT_APPLICABLE);
    CU_ASSERT_EQUAL(count_poison(c.y, c.ny), c.ny);
    setenv("CONVT3D_IMPLEMENTATION", "no/such", 1);
    expect_create_fails(&c, &c.p, NULL, CONVT3D_ERR_UNKNOWN_IMPLEMENTATION, "no/such");
    unsetenv("CONVT3D_IMPLEMENTATION");
    plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &c.p, cpu_dev, c.w, c.b), CONVT3D_SUCCESS);
    convt3d_plan_destroy(plan);
    small_free(&c);
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
        {"plan options: init defaults", test_options_init},
        {"plan options: struct_size (older, newer, garbage)", test_options_struct_size},
        {"math modes: tf32, 3xtf32 taken, garbage refused", test_math_modes},
        {"data types: mixed or garbage refused, in each tensor", test_data_types},
        {"data types: names, sizes, conversions", test_convert},
        {"set_output_size: PyTorch's range, untouched on error", test_set_output_size},
        {"implementation list: names, devices, bounds", test_implementation_list},
        {"forcing: unknown names, other device, no fallback", test_forcing_errors},
        {"implementation_applies agrees with plan_create_ex", test_applies_matches_create},
        {"CONVT3D_IMPLEMENTATION override", test_implementation_env},
        {NULL, NULL}};
    add_suite("api", tests);
}
