/* The output-shape formula, on hand-checked cases, PyTorch's own
 * ConvTranspose3d sample inputs and the bench shapes. */
#include "test_util.h"

typedef struct shape_case {
    const char *name;
    int64_t in[3], k[3], s[3], p[3], op[3], l[3];
    int64_t out[3];
} shape_case;

/* out = (in - 1)*s - 2p + l*(k - 1) + op + 1 */
static const shape_case cases[] = {
    /* PyTorch sample_inputs_conv_transpose3d, cases 1..5 */
    {"torch 1: s2 p2 op1", {4, 4, 4}, {3, 3, 3}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {6, 6, 6}},
    {"torch 2: op < dilation", {4, 4, 4}, {4, 5, 6}, {3, 2, 1}, {1, 2, 3}, {2, 3, 1}, {4, 4, 4},
     {22, 22, 19}},
    {"torch 3: dilation 2,3,2", {4, 5, 2}, {4, 3, 1}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {2, 3, 2},
     {12, 14, 2}},
    {"torch 4: k3,4,5", {4, 3, 4}, {3, 4, 5}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {8, 7, 10}},
    {"torch 5: defaults", {5, 5, 5}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {7, 7, 7}},
    /* bench suite */
    {"kernelbench", {12, 24, 48}, {3, 5, 7}, {2, 2, 2}, {1, 2, 3}, {1, 1, 1}, {1, 1, 1}, {24, 48, 96}},
    {"unet_up_k2s2", {32, 64, 64}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {64, 128, 128}},
    {"k4s2p1", {16, 32, 32}, {4, 4, 4}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {32, 64, 64}},
    {"k3s2p1op1_wide", {8, 16, 16}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {16, 32, 32}},
    {"depthwise", {16, 32, 32}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {32, 64, 64}},
    {"k3s1p1", {32, 32, 32}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {32, 32, 32}},
    /* hand-checked corners */
    {"1x1x1 everything", {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}},
    {"kernel 1 stride 3", {4, 4, 4}, {1, 1, 1}, {3, 3, 3}, {0, 0, 0}, {2, 2, 2}, {1, 1, 1}, {12, 12, 12}},
    {"stride > kernel", {5, 1, 2}, {2, 2, 2}, {4, 4, 4}, {0, 0, 0}, {0, 1, 3}, {1, 1, 1}, {18, 3, 9}},
    {"padding shrinks to 1", {3, 3, 3}, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}},
    {"padding >= kernel", {6, 6, 6}, {2, 2, 2}, {2, 2, 2}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {7, 7, 7}},
    {"dilation 3 stride 2", {3, 4, 5}, {3, 3, 3}, {2, 2, 2}, {1, 2, 0}, {2, 0, 1}, {3, 3, 3},
     {11, 9, 16}},
    {"W = 1", {5, 7, 1}, {3, 3, 1}, {2, 2, 1}, {1, 1, 0}, {1, 1, 0}, {1, 1, 1}, {10, 14, 1}},
    {"asymmetric all", {2, 3, 4}, {2, 3, 4}, {1, 2, 3}, {0, 1, 2}, {0, 1, 2}, {1, 2, 3}, {3, 8, 17}},
    {"large extent", {1000, 1, 1}, {7, 1, 1}, {5, 1, 1}, {3, 0, 0}, {4, 0, 0}, {1, 1, 1},
     {5000, 1, 1}},
    {"op reaches stride below dilation", {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1},
     {2, 2, 2}, {5, 5, 5}},
    {"unet_3d deconv8", {8, 9, 9}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1},
     {10, 11, 11}},
};

static void test_output_shape_cases(void)
{
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const shape_case *sc = &cases[c];
        convt3d_problem p = make_problem(1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, CONVT3D_LAYOUT_NCDHW);
        for (int d = 0; d < 3; d++) {
            p.in_size[d] = sc->in[d];
            p.kernel[d] = sc->k[d];
            p.stride[d] = sc->s[d];
            p.padding[d] = sc->p[d];
            p.output_padding[d] = sc->op[d];
            p.dilation[d] = sc->l[d];
        }
        int64_t out[3] = {-1, -1, -1};
        convt3d_status st = convt3d_output_dims(&p, out);
        if (st != CONVT3D_SUCCESS || out[0] != sc->out[0] || out[1] != sc->out[1] ||
            out[2] != sc->out[2])
            printf("\n  shape case \"%s\": status %s (%s), got %lldx%lldx%lld, want "
                   "%lldx%lldx%lld\n",
                   sc->name, convt3d_status_string(st), convt3d_last_error(), (long long)out[0],
                   (long long)out[1], (long long)out[2], (long long)sc->out[0],
                   (long long)sc->out[1], (long long)sc->out[2]);
        CU_ASSERT_EQUAL(st, CONVT3D_SUCCESS);
        CU_ASSERT_EQUAL(out[0], sc->out[0]);
        CU_ASSERT_EQUAL(out[1], sc->out[1]);
        CU_ASSERT_EQUAL(out[2], sc->out[2]);
    }
    CU_ASSERT(sizeof cases / sizeof cases[0] >= 20);
}

/* The element counts follow from the dims, with groups and both layouts. */
static void test_tensor_elems(void)
{
    /* torch case 2: x (2,2,4,4,4), w (2,2,4,5,6), y (2,4,22,22,19) */
    convt3d_problem p = make_problem(2, 2, 4, 2, 4, 4, 4, 1, 1, 0, 0, 1, CONVT3D_LAYOUT_NDHWC);
    const int64_t k[3] = {4, 5, 6}, s[3] = {3, 2, 1}, pad[3] = {1, 2, 3}, op[3] = {2, 3, 1};
    for (int d = 0; d < 3; d++) {
        p.kernel[d] = k[d];
        p.stride[d] = s[d];
        p.padding[d] = pad[d];
        p.output_padding[d] = op[d];
        p.dilation[d] = 4;
    }
    int64_t nx = 0, nw = 0, ny = 0;
    CU_ASSERT_EQUAL(convt3d_tensor_elems(&p, &nx, &nw, &ny), CONVT3D_SUCCESS);
    CU_ASSERT_EQUAL(nx, 2 * 2 * 4 * 4 * 4);
    CU_ASSERT_EQUAL(nw, 2 * 2 * 4 * 5 * 6);
    CU_ASSERT_EQUAL(ny, 2 * 4 * 22 * 22 * 19);
}

void register_shape_tests(void)
{
    static const test_entry tests[] = {
        {"output dims on 22 cases (PyTorch samples, bench shapes, corners)", test_output_shape_cases},
        {"tensor element counts", test_tensor_elems},
        {NULL, NULL}};
    add_suite("shape", tests);
}
