/* Reliability: bad input named one kind per test (beyond test_validation.c
 * and test_api.c: every entry point, every dim, the int64 edges, each bad
 * device string end to end, y byte-for-byte untouched every time), leaks
 * across plan create/destroy cycles, tensors with more than 2^31 elements,
 * one plan used from several threads (CPU) and streams (GPU), and device
 * out-of-memory.  Cases that need a GPU or much memory skip with the reason. */
#define _GNU_SOURCE /* mincore, MAP_NORESERVE, mallinfo2 */
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "test_util.h"

#if CONVT3D_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* ---- bad input: the helpers ------------------------------------------- */

#define BUF 4096
static float xbuf[BUF], wbuf[BUF], bbuf[BUF], ybuf[BUF], ysaved[BUF];

static convt3d_problem good(void)
{
    return make_problem(1, 4, 6, 2, 3, 4, 5, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
}

/* y gets a fresh random pattern; y_untouched() compares every byte. */
static void arm_y(void)
{
    rng r = rng_make(11);
    fill_uniform(&r, ybuf, BUF);
    memcpy(ysaved, ybuf, sizeof ybuf);
}

static int y_untouched(void) { return memcmp(ybuf, ysaved, sizeof ybuf) == 0; }

/* Prints what went wrong before the CU_ASSERT that counts it. */
static void expect_status(const char *what, convt3d_status got, convt3d_status want,
                          const char *field)
{
    const int named = field == NULL || strstr(convt3d_last_error(), field) != NULL;
    if (got != want || !named)
        printf("\n  %s: got %s \"%s\", want %s naming \"%s\"\n", what, convt3d_status_string(got),
               convt3d_last_error(), convt3d_status_string(want), field ? field : "");
    CU_ASSERT_EQUAL(got, want);
    CU_ASSERT(named);
}

/* Every entry point that takes a problem rejects p with `want`, names
 * `field`, and writes nothing: not y, not out_size, not *plan. */
static void rejected_everywhere(const convt3d_problem *p, convt3d_status want, const char *field)
{
    arm_y();
    expect_status("validate", convt3d_validate(p), want, field);
    int64_t out[3] = {-7, -7, -7}, nx = -7, nw = -7, ny = -7;
    expect_status("output_dims", convt3d_output_dims(p, out), want, field);
    CU_ASSERT(out[0] == -7 && out[1] == -7 && out[2] == -7);
    expect_status("tensor_elems", convt3d_tensor_elems(p, &nx, &nw, &ny), want, field);
    CU_ASSERT(nx == -7 && nw == -7 && ny == -7);

    const convt3d_device devices[2] = {CONVT3D_DEVICE_CPU_INIT, CONVT3D_DEVICE_AUTO_INIT};
    for (int i = 0; i < 2; i++) {
        expect_status("forward", convt3d_forward(p, devices[i], xbuf, wbuf, bbuf, ybuf), want,
                      field);
        convt3d_plan *plan = (convt3d_plan *)&out; /* must stay as it is */
        expect_status("plan_create", convt3d_plan_create(&plan, p, devices[i], wbuf, bbuf), want,
                      field);
        CU_ASSERT_PTR_EQUAL(plan, (convt3d_plan *)&out);
    }
    expect_status("reference", convt3d_reference(p, xbuf, wbuf, bbuf, ybuf), want, field);
    CU_ASSERT(y_untouched());
}

/* ---- bad input: pointers ----------------------------------------------- */

static void test_null_x_w_y_everywhere(void)
{
    convt3d_problem p = good();
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    arm_y();
    expect_status("forward x", convt3d_forward(&p, cpu, NULL, wbuf, bbuf, ybuf),
                  CONVT3D_ERR_NULL_POINTER, "x is NULL");
    expect_status("forward weight", convt3d_forward(&p, cpu, xbuf, NULL, bbuf, ybuf),
                  CONVT3D_ERR_NULL_POINTER, "weight is NULL");
    expect_status("forward y", convt3d_forward(&p, cpu, xbuf, wbuf, bbuf, NULL),
                  CONVT3D_ERR_NULL_POINTER, "y is NULL");
    expect_status("reference x", convt3d_reference(&p, NULL, wbuf, bbuf, ybuf),
                  CONVT3D_ERR_NULL_POINTER, "x is NULL");
    expect_status("reference weight", convt3d_reference(&p, xbuf, NULL, bbuf, ybuf),
                  CONVT3D_ERR_NULL_POINTER, "weight is NULL");
    expect_status("reference y", convt3d_reference(&p, xbuf, wbuf, bbuf, NULL),
                  CONVT3D_ERR_NULL_POINTER, "y is NULL");
    convt3d_plan *plan = NULL;
    expect_status("plan_create weight", convt3d_plan_create(&plan, &p, cpu, NULL, bbuf),
                  CONVT3D_ERR_NULL_POINTER, "weight is NULL");
    CU_ASSERT_PTR_NULL(plan);
    CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &p, cpu, wbuf, bbuf), CONVT3D_SUCCESS);
    expect_status("execute x", convt3d_execute(plan, NULL, ybuf), CONVT3D_ERR_NULL_POINTER,
                  "x is NULL");
    expect_status("execute y", convt3d_execute(plan, xbuf, NULL), CONVT3D_ERR_NULL_POINTER,
                  "y is NULL");
    expect_status("execute plan", convt3d_execute(NULL, xbuf, ybuf), CONVT3D_ERR_NULL_POINTER,
                  "plan is NULL");
    CU_ASSERT(y_untouched());
    /* The plan survives the rejected calls. */
    CU_ASSERT_EQUAL(convt3d_execute(plan, xbuf, ybuf), CONVT3D_SUCCESS);
    convt3d_plan_destroy(plan);
}

static void test_null_bias_with_has_bias(void)
{
    convt3d_problem p = good();
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    arm_y();
    convt3d_plan *plan = (convt3d_plan *)&p;
    expect_status("plan_create", convt3d_plan_create(&plan, &p, cpu, wbuf, NULL),
                  CONVT3D_ERR_NULL_POINTER, "bias");
    CU_ASSERT_PTR_EQUAL(plan, (convt3d_plan *)&p);
    expect_status("forward", convt3d_forward(&p, cpu, xbuf, wbuf, NULL, ybuf),
                  CONVT3D_ERR_NULL_POINTER, "bias");
    expect_status("reference", convt3d_reference(&p, xbuf, wbuf, NULL, ybuf),
                  CONVT3D_ERR_NULL_POINTER, "bias");
    CU_ASSERT(y_untouched());
}

/* ---- bad input: sizes and hyper-parameters ----------------------------- */

static const int64_t non_positive[] = {0, -1, -1000, INT64_MIN};
#define N_NONPOS (sizeof non_positive / sizeof non_positive[0])

static void test_zero_negative_sizes(void)
{
    char field[64];
    for (size_t i = 0; i < N_NONPOS; i++) {
        const int64_t v = non_positive[i];
        convt3d_problem p = good();
        p.batch = v;
        snprintf(field, sizeof field, "batch=%lld", (long long)v);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_SIZE, field);
        p = good();
        p.in_channels = v;
        snprintf(field, sizeof field, "in_channels=%lld", (long long)v);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_SIZE, field);
        p = good();
        p.out_channels = v;
        snprintf(field, sizeof field, "out_channels=%lld", (long long)v);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_SIZE, field);
        for (int d = 0; d < 3; d++) {
            p = good();
            p.in_size[d] = v;
            snprintf(field, sizeof field, "in_size[%d]", d);
            rejected_everywhere(&p, CONVT3D_ERR_BAD_SIZE, field);
        }
    }
}

static void test_zero_negative_kernel_stride_dilation(void)
{
    char field[64];
    for (size_t i = 0; i < N_NONPOS; i++)
        for (int d = 0; d < 3; d++) {
            convt3d_problem p = good();
            p.kernel[d] = non_positive[i];
            snprintf(field, sizeof field, "kernel[%d]", d);
            rejected_everywhere(&p, CONVT3D_ERR_BAD_KERNEL, field);
            p = good();
            p.stride[d] = non_positive[i];
            p.output_padding[d] = 0;
            snprintf(field, sizeof field, "stride[%d]", d);
            rejected_everywhere(&p, CONVT3D_ERR_BAD_STRIDE, field);
            p = good();
            p.dilation[d] = non_positive[i];
            snprintf(field, sizeof field, "dilation[%d]", d);
            rejected_everywhere(&p, CONVT3D_ERR_BAD_DILATION, field);
        }
}

static void test_groups_not_dividing(void)
{
    convt3d_problem p = good(); /* 4 in, 6 out */
    p.groups = 8;               /* more groups than channels */
    rejected_everywhere(&p, CONVT3D_ERR_BAD_GROUPS, "in_channels=4 is not divisible by groups=8");
    p.groups = -2;
    rejected_everywhere(&p, CONVT3D_ERR_BAD_GROUPS, "groups=-2");
    p.groups = INT64_MIN;
    rejected_everywhere(&p, CONVT3D_ERR_BAD_GROUPS, "groups=");
    p = good();
    p.in_channels = 12, p.out_channels = 6, p.groups = 4; /* in divides, out not */
    rejected_everywhere(&p, CONVT3D_ERR_BAD_GROUPS, "out_channels=6 is not divisible by groups=4");
    p.groups = 5; /* neither */
    rejected_everywhere(&p, CONVT3D_ERR_BAD_GROUPS, "groups=5");
}

static void test_output_padding_every_dim(void)
{
    char field[96];
    for (int d = 0; d < 3; d++) {
        convt3d_problem p = good(); /* stride 2, dilation 1 */
        p.output_padding[d] = 2;    /* == stride */
        snprintf(field, sizeof field, "output_padding[%d]=2 must be smaller than stride[%d]=2", d,
                 d);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_OUTPUT_PADDING, field);
        p.dilation[d] = 3; /* op < dilation: legal (PyTorch's rule) */
        CU_ASSERT_EQUAL(convt3d_validate(&p), CONVT3D_SUCCESS);
        p.output_padding[d] = 3; /* == max(stride, dilation) */
        snprintf(field, sizeof field, "output_padding[%d]=3", d);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_OUTPUT_PADDING, field);
        p.output_padding[d] = INT64_MAX;
        snprintf(field, sizeof field, "output_padding[%d]=%lld", d, (long long)INT64_MAX);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_OUTPUT_PADDING, field);
        p.output_padding[d] = INT64_MIN;
        snprintf(field, sizeof field, "output_padding[%d]", d);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_OUTPUT_PADDING, field);
    }
}

static void test_negative_padding_every_dim(void)
{
    char field[64];
    for (int d = 0; d < 3; d++)
        for (int i = 1; i < (int)N_NONPOS; i++) {
            convt3d_problem p = good();
            p.padding[d] = non_positive[i];
            snprintf(field, sizeof field, "padding[%d] (%c)=%lld", d, "dhw"[d],
                     (long long)non_positive[i]);
            rejected_everywhere(&p, CONVT3D_ERR_BAD_PADDING, field);
        }
}

static void test_output_size_not_positive_every_dim(void)
{
    char field[64];
    for (int d = 0; d < 3; d++) {
        /* in 2, kernel 2, stride 1: out = 3 - 2p.  p = 1 gives exactly 1 (legal),
         * p = 2 gives -1, and a huge p a hugely negative size. */
        convt3d_problem p = make_problem(1, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0,
                                         CONVT3D_LAYOUT_NDHWC);
        p.padding[d] = 1;
        int64_t out[3];
        CU_ASSERT_EQUAL(convt3d_output_dims(&p, out), CONVT3D_SUCCESS);
        CU_ASSERT_EQUAL(out[d], 1);
        p.padding[d] = 2;
        snprintf(field, sizeof field, "output size in dim %d (%c) is -1", d, "dhw"[d]);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_OUTPUT_SIZE, field);
        p.padding[d] = INT64_MAX / 4;
        snprintf(field, sizeof field, "output size in dim %d", d);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_OUTPUT_SIZE, field);
    }
}

/* Each product or sum of the formula and of the element counts that can
 * leave int64, pushed just past the edge. */
static void test_int64_overflow_products(void)
{
    convt3d_problem p = good();
    p.dilation[1] = INT64_MAX / 2, p.kernel[1] = 4; /* l*(k-1) */
    rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, "dim 1");

    p = good(); /* (in-1)*s and l*(k-1) each fit, their sum does not */
    p.in_size[2] = 2, p.stride[2] = INT64_MAX / 2 + 1;
    p.kernel[2] = 2, p.dilation[2] = INT64_MAX / 2 + 1;
    p.output_padding[2] = 0;
    rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, "dim 2");

    p = good(); /* 2 * padding */
    p.padding[0] = INT64_MAX;
    rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, "dim 0");

    p = make_problem(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    p.in_size[0] = p.in_size[1] = p.in_size[2] = (int64_t)1 << 21; /* x: 2^63 elements */
    rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, "element count of x");

    p.in_size[2] = (int64_t)1 << 20; /* 2^62 elements fit, 2^64 bytes do not */
    rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, "byte size of x");

    p = make_problem(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
    p.in_size[0] = 2, p.stride[0] = (int64_t)1 << 40; /* y only: 2^40 * 2^21 * 2^2 */
    p.in_size[1] = 1, p.kernel[1] = (int64_t)1 << 21;
    p.out_channels = 4;
    rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, "of y");

    p = good(); /* batch * channels alone */
    p.batch = INT64_MAX / 2;
    rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, "of x");
}

/* Per-dimension values one past CONVT3D_MAX_DIM_VALUE, each named, while the
 * element counts stay small (stride, dilation, padding) or merely large. */
static void test_dim_values_above_limit(void)
{
    const int64_t L = CONVT3D_MAX_DIM_VALUE;
    char field[64];
    for (int d = 0; d < 3; d++) {
        convt3d_problem p = make_problem(1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0,
                                         CONVT3D_LAYOUT_NCDHW);
        p.stride[d] = L + 1; /* in 1: out = 2 whatever the stride */
        snprintf(field, sizeof field, "stride[%d] (%c)=%lld exceeds", d, "dhw"[d],
                 (long long)(L + 1));
        rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, field);

        p = make_problem(1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
        p.dilation[d] = L + 1, p.padding[d] = L / 2; /* out = L + 2 - 2 (L / 2) = 3 */
        snprintf(field, sizeof field, "dilation[%d]", d);
        rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, field);

        p = make_problem(1, 1, 1, 1, 1, 1, 1, 4, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
        p.dilation[d] = L, p.padding[d] = L + 1; /* out = 3 L + 1 - 2 (L + 1) = L - 1 */
        snprintf(field, sizeof field, "padding[%d]", d);
        rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, field);

        p = make_problem(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
        p.in_size[d] = L + 1;
        snprintf(field, sizeof field, "in_size[%d]", d);
        rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, field);

        p.in_size[d] = 1, p.kernel[d] = L + 1;
        snprintf(field, sizeof field, "kernel[%d]", d);
        rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, field);

        p.in_size[d] = L, p.kernel[d] = 2; /* every input in range, out = L + 1 */
        snprintf(field, sizeof field, "output size[%d]", d);
        rejected_everywhere(&p, CONVT3D_ERR_OVERFLOW, field);
    }
}

/* Small problems whose stride, dilation or padding sit exactly at
 * CONVT3D_MAX_DIM_VALUE: every implementation that takes one computes it
 * like the reference (under UBSan: without signed overflow in its tiling or
 * phase arithmetic).  GPU implementations skip without a GPU. */
static void test_dim_values_at_limit(void)
{
    const int64_t L = CONVT3D_MAX_DIM_VALUE;
    convt3d_problem probs[9];
    int n = 0;
    for (int d = 0; d < 3; d++) {
        convt3d_problem p = make_problem(2, 4, 6, 2, 2, 3, 2, 2, 2, 0, 1, 1,
                                         CONVT3D_LAYOUT_NCDHW);
        p.in_size[d] = 1, p.stride[d] = L, p.output_padding[d] = 0;
        probs[n++] = p; /* out 2 in dim d */
        p.stride[d] = 1, p.kernel[d] = 2, p.dilation[d] = L, p.padding[d] = (L - 1) / 2;
        probs[n++] = p; /* out L + 1 - (L - 1) = 2 */
        p.kernel[d] = 3, p.padding[d] = L;
        probs[n++] = p; /* out 2 L + 1 - 2 L = 1 */
    }
    int checked = 0;
    for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL_FATAL(convt3d_validate(&probs[i]), CONVT3D_SUCCESS);
        for (int v = 0; v < 4; v++) {
            convt3d_problem p = probs[i];
            p.layout = v & 1 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
            p.has_bias = v >> 1;
            for (int k = 0; k < convt3d_implementation_count(); k++) {
                const convt3d_device dev = {convt3d_implementation_device(k), 0};
                const char *name = convt3d_implementation_name(k);
                if (convt3d_implementation_applies(name, &p, dev, NULL) != CONVT3D_SUCCESS)
                    continue;
                const uint64_t seed = test_seed() + (uint64_t)(100 * i + 10 * v + k);
                const check_result res =
                    check_implementation(&p, dev, name, seed, HOST_POINTERS, 1e-5);
                if (!res.skipped)
                    checked++;
                assert_check(&res, &p, seed);
            }
        }
    }
    CU_ASSERT(checked >= 4 * n); /* at least the CPU's choice for each */
}

static void test_unknown_layout_values(void)
{
    static const int values[] = {-1, 2, 3, 255, INT_MAX, INT_MIN};
    char field[64];
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        convt3d_problem p = good();
        p.layout = (convt3d_layout)values[i];
        snprintf(field, sizeof field, "layout=%d", values[i]);
        rejected_everywhere(&p, CONVT3D_ERR_BAD_LAYOUT, field);
    }
}

/* ---- bad input: devices ------------------------------------------------ */

/* Sets CONVT3D_DEVICE for one call (NULL: unset), restoring the caller's. */
typedef struct env_saved {
    char *value;
} env_saved;

static env_saved env_set(const char *value)
{
    const char *old = getenv("CONVT3D_DEVICE");
    env_saved s = {old ? strdup(old) : NULL};
    if (value)
        setenv("CONVT3D_DEVICE", value, 1);
    else
        unsetenv("CONVT3D_DEVICE");
    return s;
}

static void env_restore(env_saved s)
{
    if (s.value)
        setenv("CONVT3D_DEVICE", s.value, 1);
    else
        unsetenv("CONVT3D_DEVICE");
    free(s.value);
}

/* A device string that must not parse: rejected by the parser (device
 * untouched) and, through CONVT3D_DEVICE, by AUTO plan creation (y untouched). */
static void bad_device_string(const char *text)
{
    convt3d_device d = {CONVT3D_DEVICE_CPU, 42};
    expect_status(text, convt3d_device_parse(text, &d), CONVT3D_ERR_BAD_DEVICE_STRING, text);
    CU_ASSERT(d.kind == CONVT3D_DEVICE_CPU && d.ordinal == 42);

    convt3d_problem p = good();
    convt3d_device autod = CONVT3D_DEVICE_AUTO_INIT;
    arm_y();
    env_saved saved = env_set(text);
    if (text[0]) {
        expect_status("CONVT3D_DEVICE", convt3d_forward(&p, autod, xbuf, wbuf, bbuf, ybuf),
                      CONVT3D_ERR_BAD_DEVICE_STRING, "CONVT3D_DEVICE");
    } else {
        /* An empty CONVT3D_DEVICE means "not set": AUTO picks as usual. */
        CU_ASSERT_EQUAL(convt3d_validate(&p), CONVT3D_SUCCESS);
    }
    env_restore(saved);
    CU_ASSERT(y_untouched());
}

static void test_device_string_cuda_minus_1(void) { bad_device_string("cuda:-1"); }
static void test_device_string_gpu(void) { bad_device_string("gpu"); }
static void test_device_string_empty(void) { bad_device_string(""); }

/* What asking for GPU `ordinal` must give on this build and machine. */
static convt3d_status expected_cuda_status(int ordinal)
{
    if (!convt3d_has_cuda_support())
        return CONVT3D_ERR_NO_CUDA_SUPPORT;
    return ordinal >= 0 && ordinal < convt3d_cuda_device_count() ? CONVT3D_SUCCESS
                                                                  : CONVT3D_ERR_NO_DEVICE;
}

/* "cuda:99" parses (syntax only) and fails at plan creation: directly, and
 * through CONVT3D_DEVICE; y and *plan untouched. */
static void test_device_string_cuda_99(void)
{
    convt3d_device d;
    CU_ASSERT_EQUAL_FATAL(convt3d_device_parse("cuda:99", &d), CONVT3D_SUCCESS);
    const convt3d_status want = expected_cuda_status(99);
    convt3d_problem p = good();
    arm_y();
    convt3d_plan *plan = (convt3d_plan *)&d;
    expect_status("plan_create", convt3d_plan_create(&plan, &p, d, wbuf, bbuf), want, "cuda:99");
    CU_ASSERT_PTR_EQUAL(plan, (convt3d_plan *)&d);
    expect_status("forward", convt3d_forward(&p, d, xbuf, wbuf, bbuf, ybuf), want, "cuda:99");
    convt3d_device autod = CONVT3D_DEVICE_AUTO_INIT;
    env_saved saved = env_set("cuda:99");
    expect_status("CONVT3D_DEVICE=cuda:99", convt3d_forward(&p, autod, xbuf, wbuf, bbuf, ybuf),
                  want, "cuda:99");
    env_restore(saved);
    CU_ASSERT(y_untouched());
}

/* Device structs no string can produce: a negative ordinal, an unknown kind. */
static void test_device_struct_out_of_range(void)
{
    convt3d_problem p = good();
    arm_y();
    convt3d_device neg = {CONVT3D_DEVICE_CUDA, -1};
    expect_status("cuda:-1 struct", convt3d_forward(&p, neg, xbuf, wbuf, bbuf, ybuf),
                  convt3d_has_cuda_support() ? CONVT3D_ERR_NO_DEVICE : CONVT3D_ERR_NO_CUDA_SUPPORT,
                  "cuda:-1");
    convt3d_device alien = {(convt3d_device_kind)7, 0};
    expect_status("kind 7", convt3d_forward(&p, alien, xbuf, wbuf, bbuf, ybuf),
                  CONVT3D_ERR_BAD_DEVICE_STRING, "kind 7");
    CU_ASSERT(y_untouched());
}

/* `cuda` asked for in a CPU-only build or on a machine without a GPU: the
 * status says which, nothing is written, and AUTO still falls back to the CPU. */
static void test_cuda_without_gpu(void)
{
    if (convt3d_has_cuda_support() && convt3d_cuda_device_count() > 0) {
        test_skip("this machine has a GPU, so `cuda` is available");
        return;
    }
    const convt3d_status want = expected_cuda_status(0);
    const char *why = convt3d_has_cuda_support() ? "usable CUDA device" : "without CUDA support";
    convt3d_device d;
    CU_ASSERT_EQUAL_FATAL(convt3d_device_parse("cuda", &d), CONVT3D_SUCCESS);
    convt3d_problem p = good();
    arm_y();
    convt3d_plan *plan = (convt3d_plan *)&d;
    expect_status("plan_create cuda", convt3d_plan_create(&plan, &p, d, wbuf, bbuf), want, why);
    CU_ASSERT_PTR_EQUAL(plan, (convt3d_plan *)&d);
    expect_status("forward cuda", convt3d_forward(&p, d, xbuf, wbuf, bbuf, ybuf), want, why);
    convt3d_device autod = CONVT3D_DEVICE_AUTO_INIT;
    env_saved saved = env_set("cuda");
    expect_status("CONVT3D_DEVICE=cuda", convt3d_forward(&p, autod, xbuf, wbuf, bbuf, ybuf),
                  want, why);
    CU_ASSERT(y_untouched());
    unsetenv("CONVT3D_DEVICE");
    plan = NULL;
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, &p, autod, wbuf, bbuf), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(convt3d_plan_device(plan).kind, CONVT3D_DEVICE_CPU);
    convt3d_plan_destroy(plan);
    env_restore(saved);
}

/* One representative of each kind of bad input: every kind has its own status. */
static void test_statuses_distinct_per_kind(void)
{
    convt3d_problem kinds[11];
    for (int i = 0; i < 11; i++)
        kinds[i] = good();
    kinds[0].batch = 0;                 /* size */
    kinds[1].groups = 3;                /* groups */
    kinds[2].kernel[0] = 0;             /* kernel */
    kinds[3].stride[0] = 0;             /* stride */
    kinds[3].output_padding[0] = 0;
    kinds[4].padding[0] = -1;           /* padding */
    kinds[5].output_padding[0] = 2;     /* output padding */
    kinds[6].dilation[0] = 0;           /* dilation */
    kinds[7].layout = (convt3d_layout)2; /* layout */
    kinds[8].padding[0] = 50;           /* output size */
    kinds[9].batch = INT64_MAX / 2;     /* overflow */
    convt3d_status seen[16];
    int n = 0;
    for (int i = 0; i < 10; i++)
        seen[n++] = convt3d_validate(&kinds[i]);
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT, cuda = {CONVT3D_DEVICE_CUDA, 9999};
    seen[n++] = convt3d_forward(&kinds[10], cpu, NULL, wbuf, bbuf, ybuf);  /* pointer */
    seen[n++] = convt3d_device_parse("gpu", &cpu);                          /* device string */
    seen[n++] = convt3d_forward(&kinds[10], cuda, xbuf, wbuf, bbuf, ybuf); /* device */
    for (int a = 0; a < n; a++) {
        CU_ASSERT_NOT_EQUAL(seen[a], CONVT3D_SUCCESS);
        for (int b = a + 1; b < n; b++)
            if (seen[a] == seen[b]) {
                printf("\n  kinds %d and %d share %s\n", a, b, convt3d_status_string(seen[a]));
                CU_FAIL("two kinds of bad input share a status");
            }
    }
}

/* ---- leaks -------------------------------------------------------------- */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(UNDER_ASAN)
#define UNDER_ASAN 1
#endif

/* Heap bytes in use (glibc's mallinfo2); 0 where that cannot be measured:
 * no mallinfo2, or under ASan (its allocator does not feed mallinfo2;
 * LeakSanitizer checks the same cycles at exit instead). */
static size_t heap_in_use(void)
{
#if defined(UNDER_ASAN)
    return 0;
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return mallinfo2().uordblks;
#else
    return 0;
#endif
}

static void create_destroy_cycle(int i)
{
    convt3d_problem p = make_problem(1 + i % 2, 4, 6, 2, 3, 3, 3, 3, 2, 1, 1, i % 3 != 0,
                                     i % 2 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW);
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT, far = {CONVT3D_DEVICE_CUDA, 99};
    convt3d_plan *plan = NULL;
    if (convt3d_plan_create(&plan, &p, cpu, wbuf, bbuf) == CONVT3D_SUCCESS) {
        convt3d_execute(plan, xbuf, ybuf);
        convt3d_plan_destroy(plan);
    } else {
        CU_FAIL("plan_create failed in a leak cycle");
    }
    convt3d_forward(&p, cpu, xbuf, wbuf, bbuf, ybuf);
    /* Failing creations allocate nothing that outlives them either. */
    convt3d_plan_create(&plan, &p, far, wbuf, bbuf);
    p.has_bias = 1;
    convt3d_plan_create(&plan, &p, cpu, wbuf, NULL);
    p.groups = 5;
    convt3d_plan_create(&plan, &p, cpu, wbuf, bbuf);
    convt3d_reference(&p, xbuf, wbuf, bbuf, ybuf);
}

enum { CYCLES = 600 };

static void test_create_destroy_cycles_no_leak(void)
{
    for (int i = 0; i < 50; i++) /* warm-up: thread pools, TLS, caches */
        create_destroy_cycle(i);
    const size_t before = heap_in_use();
    for (int i = 0; i < CYCLES; i++) /* under ASan too: LeakSanitizer checks them at exit */
        create_destroy_cycle(i);
    const size_t after = heap_in_use();
    if (before == 0) {
#if defined(UNDER_ASAN)
        test_skip("heap use cannot be measured under ASan (LeakSanitizer checks the cycles at "
                  "exit instead)");
#else
        test_skip("heap use cannot be measured here (no glibc mallinfo2)");
#endif
        return;
    }
    if (after > before + 4096)
        printf("\n  heap grew by %zu bytes over %d cycles\n", after - before, CYCLES);
    CU_ASSERT(after <= before + 4096);
}

/* ---- huge tensors -------------------------------------------------------- */

/* Small integers from an element's index, so any output can be predicted
 * from the formula alone, and an index that wrapped at 2^31 or 2^32 reads
 * a different value. */
static float value_at(uint64_t i) { return (float)(int)((i * 0x9E3779B97F4A7C15ull) >> 61) - 4.0f; }

static int64_t mem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : (int64_t)kb * 1024;
}

/* Several test runs may share a machine (parallel builds, CI jobs): one
 * huge case at a time, machine-wide, so that each one's look at MemAvailable
 * stays true while it runs.  Returns the lock's descriptor (-1: no lock). */
static int huge_lock(void)
{
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/convt3d-huge-test.lock", dir && *dir ? dir : "/tmp");
    const int fd = open(path, O_RDWR | O_CREAT, 0666);
    if (fd >= 0)
        flock(fd, LOCK_EX);
    return fd;
}

static void huge_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

/* Whether `bytes` of host memory can be used with room to spare (and the
 * huge cases are not switched off by CONVT3D_TEST_HUGE=0); prints why not. */
static int host_memory_allows(const char *what, int64_t bytes)
{
    const char *env = getenv("CONVT3D_TEST_HUGE");
    if (env && strcmp(env, "0") == 0) {
        test_skip("%s: CONVT3D_TEST_HUGE=0", what);
        return 0;
    }
    const int64_t avail = mem_available_bytes(), need = bytes + bytes / 4 + ((int64_t)2 << 30);
    if (avail >= need)
        return 1;
    test_skip("%s: needs %.1f GiB of free memory, MemAvailable is %.1f GiB", what,
           need / 1073741824.0, avail / 1073741824.0);
    return 0;
}

/* Output positions to check: both ends, both sides of 2^31 and 2^32, and
 * random ones in between. */
static int64_t sample_position(rng *r, int64_t i, int64_t total)
{
    static const int64_t anchors[] = {0, (int64_t)1 << 31, (int64_t)1 << 32};
    const int64_t a = i / 64, off = i % 64 - 32;
    if (a < 3) {
        const int64_t e = anchors[a] + off;
        if (e >= 0 && e < total)
            return e;
    } else if (a == 3) {
        return total - 1 - (i % 64);
    }
    return rng_int(r, 0, total - 1);
}

#define SAMPLES 20000
static const uint32_t untouched_bits = 0xffffffffu; /* a NaN no computation makes */

static int64_t count_untouched(const float *y, int64_t n)
{
    int64_t c = 0;
    const uint32_t *u = (const uint32_t *)(const void *)y;
    for (int64_t i = 0; i < n; i++)
        c += u[i] == untouched_bits;
    return c;
}

/* y[1 x 1 x 1292^3] from x[1 x 1 x 646^3], kernel 1, stride 2, output
 * padding 1: 2.16e9 outputs.  Even coordinates get 3*x + 0.5, odd ones the
 * bias alone. */
typedef struct huge_out {
    convt3d_problem p;
    int64_t nx, ny, out[3], in[3];
} huge_out;

static huge_out huge_output_problem(void)
{
    huge_out h;
    h.p = make_problem(1, 1, 1, 1, 646, 646, 646, 1, 2, 0, 1, 1, CONVT3D_LAYOUT_NCDHW);
    int64_t nw;
    convt3d_tensor_elems(&h.p, &h.nx, &nw, &h.ny);
    convt3d_output_dims(&h.p, h.out);
    for (int d = 0; d < 3; d++)
        h.in[d] = h.p.in_size[d];
    return h;
}

static float huge_output_expected(const huge_out *h, int64_t e)
{
    const int64_t ow = e % h->out[2], oh = e / h->out[2] % h->out[1],
                  od = e / (h->out[2] * h->out[1]);
    if (od % 2 || oh % 2 || ow % 2)
        return 0.5f;
    const int64_t i = ((od / 2) * h->in[1] + oh / 2) * h->in[2] + ow / 2;
    return 3.0f * value_at((uint64_t)i) + 0.5f;
}

/* Checks sampled outputs of a huge run; returns the number of mismatches. */
static int64_t check_samples(const huge_out *h, float (*get)(void *, int64_t), void *ctx)
{
    rng r = rng_make(test_seed() ^ 0x4855474555ull);
    int64_t bad = 0;
    for (int64_t i = 0; i < SAMPLES; i++) {
        const int64_t e = sample_position(&r, i, h->ny);
        const float want = huge_output_expected(h, e), got = get(ctx, e);
        if (!(got == want) && bad++ < 5)
            printf("\n  y[%lld] = %g, want %g", (long long)e, got, want);
    }
    return bad;
}

static float host_get(void *ctx, int64_t e) { return ((const float *)ctx)[e]; }

/* impl: the implementation forced through CONVT3D_IMPLEMENTATION, or NULL
 * for the library's choice. */
static void huge_output_cpu(const char *impl)
{
    const huge_out h = huge_output_problem();
    CU_ASSERT(h.ny > ((int64_t)1 << 31));
    if (!host_memory_allows("the > 2^31-output CPU case", (h.nx + h.ny) * 4))
        return;
    float *x = malloc((size_t)h.nx * sizeof *x), *y = malloc((size_t)h.ny * sizeof *y);
    if (!x || !y) {
        test_skip("malloc of %.1f GiB failed", (h.nx + h.ny) * 4 / 1073741824.0);
        free(x), free(y);
        return;
    }
    for (int64_t i = 0; i < h.nx; i++)
        x[i] = value_at((uint64_t)i);
    memset(y, 0xff, (size_t)h.ny * sizeof *y);
    const float w = 3.0f, b = 0.5f;
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    if (impl)
        setenv("CONVT3D_IMPLEMENTATION", impl, 1);
    CU_ASSERT_EQUAL(convt3d_forward(&h.p, cpu, x, &w, &b, y), CONVT3D_SUCCESS);
    if (impl)
        unsetenv("CONVT3D_IMPLEMENTATION");
    const int64_t unwritten = count_untouched(y, h.ny);
    if (unwritten)
        printf("\n  %lld of %lld outputs unwritten", (long long)unwritten, (long long)h.ny);
    CU_ASSERT_EQUAL(unwritten, 0);
    CU_ASSERT_EQUAL(check_samples(&h, host_get, y), 0);
    free(x);
    free(y);
}

/* y[1 x 1 x 520x512x512] from x[1 x 16 x 520x512x512] (2.18e9 inputs),
 * NDHWC, kernel 1, stride 1: each output sums 16 channels. */
static void huge_input_cpu(void)
{
    convt3d_problem p = make_problem(1, 16, 1, 1, 520, 512, 512, 1, 1, 0, 0, 0,
                                     CONVT3D_LAYOUT_NDHWC);
    int64_t nx, nw, ny;
    CU_ASSERT_EQUAL(convt3d_tensor_elems(&p, &nx, &nw, &ny), CONVT3D_SUCCESS);
    CU_ASSERT(nx > ((int64_t)1 << 31));
    if (!host_memory_allows("the > 2^31-input CPU case", (nx + ny) * 4))
        return;
    float *x = malloc((size_t)nx * sizeof *x), *y = malloc((size_t)ny * sizeof *y), w[16];
    if (!x || !y) {
        test_skip("malloc of %.1f GiB failed", (nx + ny) * 4 / 1073741824.0);
        free(x), free(y);
        return;
    }
    for (int64_t i = 0; i < nx; i++)
        x[i] = value_at((uint64_t)i);
    for (int c = 0; c < 16; c++)
        w[c] = (float)(c % 5 - 2);
    memset(y, 0xff, (size_t)ny * sizeof *y);
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    CU_ASSERT_EQUAL(convt3d_forward(&p, cpu, x, w, NULL, y), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(count_untouched(y, ny), 0);
    rng r = rng_make(test_seed() ^ 0x494e505554ull);
    int64_t bad = 0;
    for (int64_t i = 0; i < SAMPLES; i++) {
        const int64_t s = i < 64 ? ny - 1 - i : rng_int(&r, 0, ny - 1); /* spatial index */
        float want = 0.0f;
        for (int c = 0; c < 16; c++)
            want += value_at((uint64_t)(s * 16 + c)) * w[c];
        if (!(y[s] == want) && bad++ < 5)
            printf("\n  y[%lld] = %g, want %g", (long long)s, y[s], want);
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(y);
}

static void test_huge_output_cpu(void)
{
    const int fd = huge_lock();
    huge_output_cpu(NULL);
    huge_unlock(fd);
}

/* The same through the NCDHW column GEMM (its z rows and output rows past
 * 2^31 elements into y), the first build of it this CPU runs. */
static void test_huge_output_cpu_colgemm(void)
{
    const huge_out h = huge_output_problem();
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    const char *impl = NULL;
    for (int i = 0; i < convt3d_implementation_count() && !impl; i++) {
        const char *name = convt3d_implementation_name(i);
        if (strstr(name, "_colgemm_ncdhw__") &&
            convt3d_implementation_applies(name, &h.p, cpu, NULL) == CONVT3D_SUCCESS)
            impl = name;
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(impl);
    const int fd = huge_lock();
    huge_output_cpu(impl);
    huge_unlock(fd);
}

static void test_huge_input_cpu(void)
{
    const int fd = huge_lock();
    huge_input_cpu();
    huge_unlock(fd);
}

/* GPU: did the test skip (printed, counted)? */
static int gpu_skips(void)
{
    const char *why = gpu_skip_reason();
    if (!why)
        return 0;
    gpu_cases_skipped++;
    test_skip("%s", why);
    return 1;
}

#if CONVT3D_HAVE_CUDA
static float device_get(void *ctx, int64_t e)
{
    float v = 0.0f;
    cudaMemcpy(&v, (const float *)ctx + e, sizeof v, cudaMemcpyDeviceToHost);
    return v;
}

/* Counts untouched outputs of a device array in host-sized chunks. */
static int64_t count_untouched_device(const float *dy, int64_t n)
{
    const int64_t chunk = (int64_t)1 << 26;
    float *h = malloc((size_t)chunk * sizeof *h);
    int64_t c = 0;
    for (int64_t at = 0; h && at < n; at += chunk) {
        const int64_t len = n - at < chunk ? n - at : chunk;
        if (cudaMemcpy(h, dy + at, (size_t)len * sizeof *h, cudaMemcpyDeviceToHost) != cudaSuccess)
            return -1;
        c += count_untouched(h, len);
    }
    free(h);
    return h ? c : -1;
}
#endif

/* The same > 2^31-output problem on the GPU, with device pointers. */
static void test_huge_output_gpu(void)
{
    if (gpu_skips())
        return;
#if CONVT3D_HAVE_CUDA
    const huge_out h = huge_output_problem();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    const int64_t need = (h.nx + h.ny) * 4 + ((int64_t)1 << 30);
    if ((int64_t)free_b < need) {
        gpu_cases_skipped++;
        test_skip("needs %.1f GiB of GPU memory, %.1f GiB free", need / 1073741824.0,
               free_b / 1073741824.0);
        return;
    }
    float *x = malloc((size_t)h.nx * sizeof *x), *dx = NULL, *dy = NULL;
    CU_ASSERT_FATAL(x != NULL);
    for (int64_t i = 0; i < h.nx; i++)
        x[i] = value_at((uint64_t)i);
    CU_ASSERT_FATAL(cudaMalloc((void **)&dx, (size_t)h.nx * 4) == cudaSuccess);
    CU_ASSERT_FATAL(cudaMalloc((void **)&dy, (size_t)h.ny * 4) == cudaSuccess);
    cudaMemcpy(dx, x, (size_t)h.nx * 4, cudaMemcpyHostToDevice);
    cudaMemset(dy, 0xff, (size_t)h.ny * 4);
    free(x);
    const float w = 3.0f, b = 0.5f;
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    const convt3d_status st = convt3d_forward(&h.p, gpu, dx, &w, &b, dy);
    if (st != CONVT3D_SUCCESS)
        printf("\n  %s: %s", convt3d_status_string(st), convt3d_last_error());
    CU_ASSERT_EQUAL(st, CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(count_untouched_device(dy, h.ny), 0);
    CU_ASSERT_EQUAL(check_samples(&h, device_get, dy), 0);
    cudaFree(dx);
    cudaFree(dy);
#endif
}

/* ---- concurrency --------------------------------------------------------- */

enum { THREADS = 4, ROUNDS = 3 };

typedef struct worker {
    const convt3d_plan *plan;
    const float *x;
    float *y;
    const float *serial; /* the expected output */
    int64_t ny;
    int id;
    int mismatches, failures, wrong_error;
    void *stream; /* GPU: this worker's stream; x, y device pointers */
} worker;

/* Executes the plan ROUNDS times, checking each result, and in between
 * provokes its own validation error to see the last-error message stay
 * thread-local. */
static void *cpu_worker(void *arg)
{
    worker *wk = arg;
    for (int r = 0; r < ROUNDS; r++) {
        poison(wk->y, wk->ny);
        if (convt3d_execute(wk->plan, wk->x, wk->y) != CONVT3D_SUCCESS)
            wk->failures++;
        else if (memcmp(wk->y, wk->serial, (size_t)wk->ny * sizeof(float)) != 0)
            wk->mismatches++;
        convt3d_problem bad = good();
        bad.batch = -100 - wk->id;
        char want[64];
        snprintf(want, sizeof want, "batch=%d ", -100 - wk->id);
        convt3d_validate(&bad);
        if (!strstr(convt3d_last_error(), want))
            wk->wrong_error++;
    }
    return NULL;
}

typedef struct shared_case {
    convt3d_problem p;
    int64_t nx, nw, ny;
    float *w, *b, *x[THREADS], *y[THREADS], *serial[THREADS];
} shared_case;

/* Distinct inputs per thread, except threads 2k and 2k+1 share x (reading
 * one input from two threads is allowed too). */
static int shared_case_make(shared_case *c, convt3d_layout layout)
{
    memset(c, 0, sizeof *c);
    c->p = make_problem(2, 8, 12, 2, 6, 7, 9, 3, 2, 1, 1, 1, layout);
    convt3d_tensor_elems(&c->p, &c->nx, &c->nw, &c->ny);
    rng r = rng_make(test_seed() + 77 + (uint64_t)layout);
    c->w = malloc((size_t)c->nw * sizeof(float));
    c->b = malloc(12 * sizeof(float));
    int ok = c->w && c->b;
    for (int t = 0; t < THREADS; t++) {
        c->x[t] = t % 2 ? c->x[t - 1] : malloc((size_t)c->nx * sizeof(float));
        c->y[t] = malloc((size_t)c->ny * sizeof(float));
        c->serial[t] = malloc((size_t)c->ny * sizeof(float));
        ok = ok && c->x[t] && c->y[t] && c->serial[t];
        if (ok && t % 2 == 0)
            fill_uniform(&r, c->x[t], c->nx);
    }
    if (ok) {
        fill_uniform(&r, c->w, c->nw);
        fill_uniform(&r, c->b, 12);
    }
    return ok;
}

static void shared_case_free(shared_case *c)
{
    for (int t = 0; t < THREADS; t++) {
        if (t % 2 == 0)
            free(c->x[t]);
        free(c->y[t]);
        free(c->serial[t]);
    }
    free(c->w);
    free(c->b);
}

static void test_one_plan_many_threads_cpu(void)
{
    for (int layout = 0; layout < 2; layout++) {
        shared_case c;
        CU_ASSERT_FATAL(shared_case_make(&c, (convt3d_layout)layout));
        convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
        convt3d_plan *plan = NULL;
        CU_ASSERT_FATAL(convt3d_plan_create(&plan, &c.p, cpu, c.w, c.b) == CONVT3D_SUCCESS);
        for (int t = 0; t < THREADS; t++) /* serial runs: the expected outputs */
            CU_ASSERT(convt3d_execute(plan, c.x[t], c.serial[t]) == CONVT3D_SUCCESS);
        worker wk[THREADS];
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++) {
            wk[t] = (worker){plan, c.x[t], c.y[t], c.serial[t], c.ny, t, 0, 0, 0, NULL};
            CU_ASSERT_FATAL(pthread_create(&th[t], NULL, cpu_worker, &wk[t]) == 0);
        }
        for (int t = 0; t < THREADS; t++) {
            pthread_join(th[t], NULL);
            if (wk[t].failures || wk[t].mismatches || wk[t].wrong_error)
                printf("\n  layout %d thread %d: %d failures, %d mismatches, %d foreign errors",
                       layout, t, wk[t].failures, wk[t].mismatches, wk[t].wrong_error);
            CU_ASSERT_EQUAL(wk[t].failures, 0);
            CU_ASSERT_EQUAL(wk[t].mismatches, 0);
            CU_ASSERT_EQUAL(wk[t].wrong_error, 0);
        }
        convt3d_plan_destroy(plan);
        shared_case_free(&c);
    }
}

#if CONVT3D_HAVE_CUDA
/* Each thread owns a stream and device buffers; executes are asynchronous,
 * the thread synchronises its own stream before copying y back. */
static void *gpu_worker(void *arg)
{
    worker *wk = arg;
    const size_t yb = (size_t)wk->ny * sizeof(float);
    float *host = malloc(yb);
    for (int r = 0; r < ROUNDS && host; r++) {
        cudaMemsetAsync(wk->y, 0xff, yb, (cudaStream_t)wk->stream);
        if (convt3d_execute_on_stream(wk->plan, wk->x, wk->y, wk->stream) != CONVT3D_SUCCESS ||
            cudaStreamSynchronize((cudaStream_t)wk->stream) != cudaSuccess ||
            cudaMemcpy(host, wk->y, yb, cudaMemcpyDeviceToHost) != cudaSuccess)
            wk->failures++;
        else if (memcmp(host, wk->serial, yb) != 0)
            wk->mismatches++;
    }
    free(host);
    return NULL;
}
#endif

static void test_one_plan_many_streams_gpu(void)
{
    if (gpu_skips())
        return;
#if CONVT3D_HAVE_CUDA
    shared_case c;
    CU_ASSERT_FATAL(shared_case_make(&c, CONVT3D_LAYOUT_NCDHW));
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    convt3d_plan *plan = NULL;
    CU_ASSERT_FATAL(convt3d_plan_create(&plan, &c.p, gpu, c.w, c.b) == CONVT3D_SUCCESS);
    float *dx[THREADS], *dy[THREADS];
    cudaStream_t streams[THREADS];
    for (int t = 0; t < THREADS; t++) {
        /* Serial, with host pointers (staged): the expected outputs. */
        CU_ASSERT(convt3d_execute(plan, c.x[t], c.serial[t]) == CONVT3D_SUCCESS);
        CU_ASSERT_FATAL(cudaMalloc((void **)&dx[t], (size_t)c.nx * 4) == cudaSuccess);
        CU_ASSERT_FATAL(cudaMalloc((void **)&dy[t], (size_t)c.ny * 4) == cudaSuccess);
        cudaMemcpy(dx[t], c.x[t], (size_t)c.nx * 4, cudaMemcpyHostToDevice);
        CU_ASSERT_FATAL(cudaStreamCreateWithFlags(&streams[t], cudaStreamNonBlocking) ==
                        cudaSuccess);
    }
    /* One thread, several streams in flight at once. */
    for (int t = 0; t < THREADS; t++)
        CU_ASSERT(convt3d_execute_on_stream(plan, dx[t], dy[t], streams[t]) == CONVT3D_SUCCESS);
    float *host = malloc((size_t)c.ny * 4);
    for (int t = 0; t < THREADS && host; t++) {
        CU_ASSERT(cudaStreamSynchronize(streams[t]) == cudaSuccess);
        cudaMemcpy(host, dy[t], (size_t)c.ny * 4, cudaMemcpyDeviceToHost);
        CU_ASSERT(memcmp(host, c.serial[t], (size_t)c.ny * 4) == 0);
    }
    free(host);
    /* Several threads, each with its own stream. */
    worker wk[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        wk[t] = (worker){plan, dx[t], dy[t], c.serial[t], c.ny, t, 0, 0, 0, streams[t]};
        CU_ASSERT_FATAL(pthread_create(&th[t], NULL, gpu_worker, &wk[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        CU_ASSERT_EQUAL(wk[t].failures, 0);
        CU_ASSERT_EQUAL(wk[t].mismatches, 0);
    }
    for (int t = 0; t < THREADS; t++) {
        cudaStreamDestroy(streams[t]);
        cudaFree(dx[t]);
        cudaFree(dy[t]);
    }
    convt3d_plan_destroy(plan);
    shared_case_free(&c);
#endif
}

/* ---- GPU faults --------------------------------------------------------- */

/* Host pointers make the plan stage x and y through device memory; with y
 * larger than the whole GPU that allocation must fail.  y is a reserved,
 * never-touched mapping: mincore() proves no page of it was written. */
static void test_gpu_out_of_memory(void)
{
    if (gpu_skips())
        return;
#if CONVT3D_HAVE_CUDA
    size_t free_b = 0, total_b = 0;
    cudaSetDevice(0);
    CU_ASSERT_FATAL(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
    /* in 16^3, kernel 1, stride s: out = 15s + 1 per dim; pick s so that y is
     * 1.5x the GPU's memory. */
    int64_t s = 1;
    while (1) {
        const double out = 15.0 * (double)s + 1.0;
        if (out * out * out * 4.0 > 1.5 * (double)total_b)
            break;
        s++;
    }
    convt3d_problem p = make_problem(1, 1, 1, 1, 16, 16, 16, 1, s, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    int64_t nx, nw, ny;
    CU_ASSERT_FATAL(convt3d_tensor_elems(&p, &nx, &nw, &ny) == CONVT3D_SUCCESS);
    const size_t yb = (size_t)ny * sizeof(float), page = (size_t)sysconf(_SC_PAGESIZE);
    float *y = mmap(NULL, yb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
    if (y == MAP_FAILED) {
        test_skip("cannot reserve %.0f GiB of address space", yb / 1073741824.0);
        return;
    }
    float *x = calloc((size_t)nx, sizeof *x), w = 1.0f, b = 2.0f;
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    convt3d_plan *plan = NULL;
    CU_ASSERT_FATAL(convt3d_plan_create(&plan, &p, gpu, &w, &b) == CONVT3D_SUCCESS);
    for (int attempt = 0; attempt < 2; attempt++) { /* the plan stays usable */
        const convt3d_status st = convt3d_execute(plan, x, y);
        if (st != CONVT3D_ERR_OUT_OF_MEMORY)
            printf("\n  %.0f GiB y on a %.0f GiB GPU: %s \"%s\"", yb / 1073741824.0,
                   total_b / 1073741824.0, convt3d_status_string(st), convt3d_last_error());
        CU_ASSERT_EQUAL(st, CONVT3D_ERR_OUT_OF_MEMORY);
        CU_ASSERT(strlen(convt3d_last_error()) > 0);
    }
    const size_t pages = (yb + page - 1) / page;
    unsigned char *resident = malloc(pages);
    size_t touched = 0;
    if (resident && mincore(y, yb, resident) == 0)
        for (size_t i = 0; i < pages; i++)
            touched += resident[i] & 1;
    CU_ASSERT_EQUAL(touched, 0);
    free(resident);
    convt3d_plan_destroy(plan);
    munmap(y, yb);
    free(x);
    /* The device is not left in an error state: a small problem still works. */
    convt3d_problem small = make_problem(1, 2, 3, 1, 3, 3, 3, 2, 2, 0, 1, 1, CONVT3D_LAYOUT_NCDHW);
    check_result res = check_backend(&small, gpu, test_seed(), HOST_POINTERS, 1e-5);
    assert_check(&res, &small, test_seed());
#endif
}

void register_reliability_tests(void)
{
    static const test_entry tests[] = {
        {"bad input: NULL x / weight / y / plan, every entry point", test_null_x_w_y_everywhere},
        {"bad input: NULL bias with has_bias", test_null_bias_with_has_bias},
        {"bad input: zero and negative sizes, every field", test_zero_negative_sizes},
        {"bad input: zero and negative kernel / stride / dilation", test_zero_negative_kernel_stride_dilation},
        {"bad input: groups not dividing the channels", test_groups_not_dividing},
        {"bad input: output_padding >= max(stride, dilation), every dim", test_output_padding_every_dim},
        {"bad input: negative padding, every dim", test_negative_padding_every_dim},
        {"bad input: output size <= 0, every dim", test_output_size_not_positive_every_dim},
        {"bad input: int64-overflowing products", test_int64_overflow_products},
        {"bad input: per-dimension values above CONVT3D_MAX_DIM_VALUE", test_dim_values_above_limit},
        {"edge: stride, dilation, padding at CONVT3D_MAX_DIM_VALUE, every implementation", test_dim_values_at_limit},
        {"bad input: unknown layout values", test_unknown_layout_values},
        {"bad device string \"cuda:-1\"", test_device_string_cuda_minus_1},
        {"bad device string \"gpu\"", test_device_string_gpu},
        {"bad device string \"\"", test_device_string_empty},
        {"device \"cuda:99\": parses, then no such device", test_device_string_cuda_99},
        {"device structs: negative ordinal, unknown kind", test_device_struct_out_of_range},
        {"cuda in a CPU-only build / without a GPU", test_cuda_without_gpu},
        {"every kind of bad input has its own status", test_statuses_distinct_per_kind},
        {"no leak over 600 plan create/destroy cycles", test_create_destroy_cycles_no_leak},
        {"huge: > 2^31 outputs on the CPU", test_huge_output_cpu},
        {"huge: > 2^31 outputs on the CPU, column GEMM", test_huge_output_cpu_colgemm},
        {"huge: > 2^31 inputs on the CPU (NDHWC)", test_huge_input_cpu},
        {"concurrency: one CPU plan, 4 threads == serial", test_one_plan_many_threads_cpu},
        {NULL, NULL}};
    add_suite("reliability", tests);
}

/* The GPU cases, registered by the GPU program (tests/test_gpu.c). */
void register_reliability_gpu_tests(void)
{
    static const test_entry tests[] = {
        {"huge: > 2^31 outputs on the GPU", test_huge_output_gpu},
        {"concurrency: one GPU plan, 4 streams == serial", test_one_plan_many_streams_gpu},
        {"GPU out of memory: status, nothing written, plan usable", test_gpu_out_of_memory},
        {NULL, NULL}};
    add_suite("reliability (cuda)", tests);
}
