/* Every validation rule of the contract, one test each: the status, a message
 * naming the field, and an output buffer left byte-for-byte untouched. */
#include <stdio.h>
#include <string.h>

#include "test_util.h"

#define BUF 4096
static float xbuf[BUF], wbuf[BUF], bbuf[BUF], ybuf[BUF], ysaved[BUF];

static convt3d_problem good(void)
{
    return make_problem(1, 4, 6, 2, 3, 4, 5, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NCDHW);
}

/* Every entry point must reject p with `want`, mention `field`, and leave y alone. */
static void expect_rejected(const convt3d_problem *p, convt3d_status want, const char *field)
{
    rng r = rng_make(7);
    fill_uniform(&r, ybuf, BUF);
    memcpy(ysaved, ybuf, sizeof ybuf);
    int64_t out[3] = {-7, -7, -7};

    convt3d_status st = convt3d_validate(p);
    if (st != want || !strstr(convt3d_last_error(), field))
        printf("\n  validate: got %s \"%s\", want %s mentioning \"%s\"\n",
               convt3d_status_string(st), convt3d_last_error(), convt3d_status_string(want),
               field);
    CU_ASSERT_EQUAL(st, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), field));

    CU_ASSERT_EQUAL(convt3d_output_dims(p, out), want);
    CU_ASSERT(out[0] == -7 && out[1] == -7 && out[2] == -7);

    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    CU_ASSERT_EQUAL(convt3d_forward(p, cpu, xbuf, wbuf, bbuf, ybuf), want);
    CU_ASSERT_EQUAL(convt3d_reference(p, xbuf, wbuf, bbuf, ybuf), want);
    convt3d_plan *plan = (convt3d_plan *)&out; /* must stay as it is */
    CU_ASSERT_EQUAL(convt3d_plan_create(&plan, p, cpu, wbuf, bbuf), want);
    CU_ASSERT_PTR_EQUAL(plan, (convt3d_plan *)&out);
    CU_ASSERT_EQUAL(memcmp(ybuf, ysaved, sizeof ybuf), 0);
}

static void test_good_problem_validates(void)
{
    convt3d_problem p = good();
    CU_ASSERT_EQUAL(convt3d_validate(&p), CONVT3D_SUCCESS);
    CU_ASSERT_STRING_EQUAL(convt3d_last_error(), "");
}

static void test_null_problem(void)
{
    int64_t out[3] = {-7, -7, -7};
    CU_ASSERT_EQUAL(convt3d_validate(NULL), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "problem"));
    CU_ASSERT_EQUAL(convt3d_output_dims(NULL, out), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(out[0], -7);
    convt3d_problem p = good();
    CU_ASSERT_EQUAL(convt3d_output_dims(&p, NULL), CONVT3D_ERR_NULL_POINTER);
}

/* NULL tensors: the status names which one, and y is untouched. */
static void test_null_tensors(void)
{
    convt3d_problem p = good();
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    rng r = rng_make(8);
    fill_uniform(&r, ybuf, BUF);
    memcpy(ysaved, ybuf, sizeof ybuf);
    CU_ASSERT_EQUAL(convt3d_forward(&p, cpu, NULL, wbuf, bbuf, ybuf), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "x"));
    CU_ASSERT_EQUAL(convt3d_forward(&p, cpu, xbuf, NULL, bbuf, ybuf), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "weight"));
    CU_ASSERT_EQUAL(convt3d_forward(&p, cpu, xbuf, wbuf, NULL, ybuf), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_PTR_NOT_NULL(strstr(convt3d_last_error(), "bias"));
    CU_ASSERT_EQUAL(convt3d_forward(&p, cpu, xbuf, wbuf, bbuf, NULL), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(convt3d_reference(&p, xbuf, wbuf, NULL, ybuf), CONVT3D_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(memcmp(ybuf, ysaved, sizeof ybuf), 0);
    /* Without has_bias a NULL bias is fine. */
    p.has_bias = 0;
    CU_ASSERT_EQUAL(convt3d_forward(&p, cpu, xbuf, wbuf, NULL, ybuf), CONVT3D_SUCCESS);
}

static void test_bad_batch(void)
{
    convt3d_problem p = good();
    p.batch = 0;
    expect_rejected(&p, CONVT3D_ERR_BAD_SIZE, "batch=0");
    p.batch = -3;
    expect_rejected(&p, CONVT3D_ERR_BAD_SIZE, "batch=-3");
}

static void test_bad_channels(void)
{
    convt3d_problem p = good();
    p.in_channels = 0;
    expect_rejected(&p, CONVT3D_ERR_BAD_SIZE, "in_channels=0");
    p = good();
    p.out_channels = -1;
    expect_rejected(&p, CONVT3D_ERR_BAD_SIZE, "out_channels=-1");
}

static void test_bad_in_size(void)
{
    convt3d_problem p = good();
    p.in_size[2] = 0;
    expect_rejected(&p, CONVT3D_ERR_BAD_SIZE, "in_size[2]");
}

static void test_bad_groups(void)
{
    convt3d_problem p = good();
    p.groups = 0;
    expect_rejected(&p, CONVT3D_ERR_BAD_GROUPS, "groups=0");
    p.groups = 3; /* 4 in-channels */
    expect_rejected(&p, CONVT3D_ERR_BAD_GROUPS, "in_channels=4 is not divisible by groups=3");
    p = good();
    p.in_channels = 8;
    p.out_channels = 6;
    p.groups = 4; /* 6 out-channels */
    expect_rejected(&p, CONVT3D_ERR_BAD_GROUPS, "out_channels=6");
}

static void test_bad_kernel(void)
{
    convt3d_problem p = good();
    p.kernel[1] = 0;
    expect_rejected(&p, CONVT3D_ERR_BAD_KERNEL, "kernel[1]");
}

static void test_bad_stride(void)
{
    convt3d_problem p = good();
    p.stride[0] = 0;
    p.output_padding[0] = 0;
    expect_rejected(&p, CONVT3D_ERR_BAD_STRIDE, "stride[0]");
}

static void test_bad_padding(void)
{
    convt3d_problem p = good();
    p.padding[2] = -1;
    expect_rejected(&p, CONVT3D_ERR_BAD_PADDING, "padding[2]");
}

static void test_bad_dilation(void)
{
    convt3d_problem p = good();
    p.dilation[1] = 0;
    expect_rejected(&p, CONVT3D_ERR_BAD_DILATION, "dilation[1]");
}

static void test_bad_output_padding(void)
{
    convt3d_problem p = good();
    p.output_padding[1] = 2; /* stride 2, dilation 1 */
    expect_rejected(&p, CONVT3D_ERR_BAD_OUTPUT_PADDING,
                    "output_padding[1]=2 must be smaller than stride[1]=2 or dilation[1]=1");
    p = good();
    p.output_padding[0] = -1;
    expect_rejected(&p, CONVT3D_ERR_BAD_OUTPUT_PADDING, "output_padding[0]");
    /* op = stride is legal when op < dilation (PyTorch sample case 2) */
    p = good();
    p.output_padding[0] = 2;
    p.dilation[0] = 3;
    CU_ASSERT_EQUAL(convt3d_validate(&p), CONVT3D_SUCCESS);
    p.dilation[0] = 2;
    expect_rejected(&p, CONVT3D_ERR_BAD_OUTPUT_PADDING, "output_padding[0]=2");
}

static void test_bad_layout(void)
{
    convt3d_problem p = good();
    p.layout = (convt3d_layout)7;
    expect_rejected(&p, CONVT3D_ERR_BAD_LAYOUT, "layout=7");
}

static void test_empty_output(void)
{
    convt3d_problem p = good();
    p.padding[1] = 5; /* (4-1)*2 - 10 + 2 + 1 + 1 = 0 */
    expect_rejected(&p, CONVT3D_ERR_BAD_OUTPUT_SIZE, "output size in dim 1 (h) is 0");
    p.padding[1] = 50;
    expect_rejected(&p, CONVT3D_ERR_BAD_OUTPUT_SIZE, "dim 1");
}

static void test_overflow(void)
{
    convt3d_problem p = good();
    p.in_size[0] = INT64_MAX / 2;
    p.stride[0] = 4;
    expect_rejected(&p, CONVT3D_ERR_OVERFLOW, "dim 0");
    p = good();
    p.batch = INT64_MAX / 3;
    expect_rejected(&p, CONVT3D_ERR_OVERFLOW, "element count of x");
    p = good();
    for (int d = 0; d < 3; d++) { /* x: 4e9 elements; y: 6 * (1e7)^3 */
        p.in_size[d] = 1000;
        p.stride[d] = 10000;
    }
    expect_rejected(&p, CONVT3D_ERR_OVERFLOW, "element count of y");
    p = good();
    p.in_channels = 1LL << 40; /* weight: 2^40 * (2^8)^3 */
    p.out_channels = p.groups = 1;
    p.kernel[0] = p.kernel[1] = p.kernel[2] = 1LL << 8;
    expect_rejected(&p, CONVT3D_ERR_OVERFLOW, "element count of weight");
}

void register_validation_tests(void)
{
    static const test_entry tests[] = {
        {"a good problem validates", test_good_problem_validates},
        {"NULL problem / out-pointer", test_null_problem},
        {"NULL x, weight, bias (has_bias), y", test_null_tensors},
        {"batch < 1", test_bad_batch},
        {"channels < 1", test_bad_channels},
        {"input size < 1", test_bad_in_size},
        {"groups < 1 or not dividing channels", test_bad_groups},
        {"kernel < 1", test_bad_kernel},
        {"stride < 1", test_bad_stride},
        {"padding < 0", test_bad_padding},
        {"dilation < 1", test_bad_dilation},
        {"output_padding >= max(stride, dilation) or < 0", test_bad_output_padding},
        {"unknown layout", test_bad_layout},
        {"output size < 1", test_empty_output},
        {"int64 overflow", test_overflow},
        {NULL, NULL}};
    add_suite("validation", tests);
}
