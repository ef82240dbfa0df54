/* The reference checked by things that need no reference: a hand-computed
 * case, exact linearity, and the adjoint identity <convT(x), y> = <x, conv(y)>
 * against an independently written direct convolution. */
#include <math.h>
#include <stdlib.h>

#include "direct_conv.h"
#include "test_util.h"

/* x = [a, b, c] along W, k = 3, s = 2, p = 1: out has 5 entries,
 * [a*w1, a*w2 + b*w0, b*w1, b*w2 + c*w0, c*w1] (+ bias).  In PyTorch terms,
 * x[i] feeds out[2i - 1 + k] with w[k]. */
static void test_hand_computed_1d(void)
{
    const float a = 3, b = 5, c = 7, w0 = 2, w1 = 11, w2 = 13, bias = 0.5f;
    convt3d_problem p = make_problem(1, 1, 1, 1, 1, 1, 3, 1, 1, 0, 0, 1, CONVT3D_LAYOUT_NCDHW);
    p.kernel[2] = 3;
    p.stride[2] = 2;
    p.padding[2] = 1;
    const float x[3] = {a, b, c}, w[3] = {w0, w1, w2};
    float y[6];
    poison(y, 6);
    CU_ASSERT_EQUAL_FATAL(convt3d_reference(&p, x, w, &bias, y), CONVT3D_SUCCESS);
    const float want[5] = {a * w1 + bias, a * w2 + b * w0 + bias, b * w1 + bias,
                           b * w2 + c * w0 + bias, c * w1 + bias};
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(y[i], want[i]);
    CU_ASSERT(is_poison(y[5])); /* nothing past the 5 outputs */
}

/* Stride larger than the kernel: some outputs receive no input and hold the bias. */
static void test_unreached_outputs_hold_bias(void)
{
    convt3d_problem p = make_problem(1, 1, 2, 1, 1, 1, 2, 1, 1, 0, 0, 1, CONVT3D_LAYOUT_NDHWC);
    p.kernel[2] = 2;
    p.stride[2] = 4; /* out W = 1*4 + 1 + 1 = 6: positions 2, 3 unreached */
    const float x[2] = {2, 3}, w[4] = {10, 100, 1000, 10000}, bias[2] = {-1, 1};
    float y[12];
    poison(y, 12);
    CU_ASSERT_EQUAL_FATAL(convt3d_reference(&p, x, w, bias, y), CONVT3D_SUCCESS);
    /* NDHWC: (w, c) pairs */
    const float want[12] = {19, 2001, 199, 20001, -1, 1, -1, 1, 29, 3001, 299, 30001};
    for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(y[i], want[i]);
}

/* ref(2x) == 2 ref(x) bit-exactly without bias (scaling by 2 is exact). */
static void test_linearity(void)
{
    rng r = rng_make(test_seed() + 11);
    for (int t = 0; t < 10; t++) {
        convt3d_problem p = random_problem(&r, 2e5, 20000);
        p.has_bias = 0;
        int64_t nx, nw, ny;
        convt3d_tensor_elems(&p, &nx, &nw, &ny);
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
        float *y1 = malloc(ny * sizeof *y1), *y2 = malloc(ny * sizeof *y2);
        fill_uniform(&r, x, nx);
        fill_uniform(&r, w, nw);
        convt3d_reference(&p, x, w, NULL, y1);
        for (int64_t i = 0; i < nx; i++)
            x[i] *= 2;
        convt3d_reference(&p, x, w, NULL, y2);
        int64_t bad = 0;
        for (int64_t i = 0; i < ny; i++)
            bad += y2[i] != 2 * y1[i];
        CU_ASSERT_EQUAL(bad, 0);
        free(x), free(w), free(y1), free(y2);
    }
}

/* <convT(x), y> == <x, conv(y)> on random problems with groups, dilation,
 * asymmetric kernels, strides, paddings and output paddings, both layouts. */
static void test_adjoint_identity(void)
{
    const uint64_t seed = test_seed() + 12;
    rng r = rng_make(seed);
    for (int t = 0; t < 40; t++) {
        convt3d_problem p = random_problem(&r, 3e5, 20000);
        p.has_bias = 0;
        int64_t nx, nw, ny;
        convt3d_tensor_elems(&p, &nx, &nw, &ny);
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
        float *ty = malloc(ny * sizeof *ty);
        double *y = malloc(ny * sizeof *y), *cy = malloc(nx * sizeof *cy);
        fill_uniform(&r, x, nx);
        fill_uniform(&r, w, nw);
        for (int64_t i = 0; i < ny; i++)
            y[i] = 2.0 * rng_uniform(&r) - 1.0;
        CU_ASSERT_EQUAL(convt3d_reference(&p, x, w, NULL, ty), CONVT3D_SUCCESS);
        direct_conv3d(&p, y, w, cy);
        double lhs = 0, rhs = 0, mag = 0;
        for (int64_t i = 0; i < ny; i++) {
            lhs += ty[i] * y[i];
            mag += fabs(ty[i] * y[i]);
        }
        for (int64_t i = 0; i < nx; i++)
            rhs += x[i] * cy[i];
        /* ty is rounded to float: allow that rounding, nothing structural. */
        const int ok = fabs(lhs - rhs) <= 1e-6 * (mag + 1e-30);
        if (!ok) {
            char desc[512];
            problem_describe(&p, desc, sizeof desc);
            printf("\n  adjoint mismatch %.9g vs %.9g on %s (seed %llu, case %d)\n", lhs, rhs, desc,
                   (unsigned long long)seed, t);
        }
        CU_ASSERT(ok);
        free(x), free(w), free(ty), free(y), free(cy);
    }
}

void register_reference_tests(void)
{
    static const test_entry tests[] = {
        {"hand-computed 1-D case (k3 s2 p1)", test_hand_computed_1d},
        {"unreached outputs hold the bias (stride > kernel, NDHWC)", test_unreached_outputs_hold_bias},
        {"exact linearity ref(2x) = 2 ref(x)", test_linearity},
        {"adjoint identity vs direct conv3d, 40 random problems", test_adjoint_identity},
        {NULL, NULL}};
    add_suite("reference", tests);
}
