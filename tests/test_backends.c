/* Every backend against the reference through check_backend(): bit-exact on
 * small-integer data, <= 1e-5 relative L2 on real data, poisoned outputs.
 *
 * What runs, on every target:
 *  - random problems from a fixed seed (CONVT3D_TEST_PROBLEMS overrides the
 *    count), both layouts, bias on and off, groups up to depthwise;
 *  - a table of named edge cases and the six bench shapes at reduced size,
 *    each in both layouts with and without bias.
 * Targets: the CPU with its default kernel, each other CPU kernel variant the
 * machine supports (forced through CONVT3D_CPU_ISA), the CPU with streaming
 * stores forced on (CONVT3D_CPU_STREAM=1; default and AVX2 kernels), with
 * input-row packing forced on (CONVT3D_CPU_PACK=1; with the AVX2 kernel too,
 * with streaming stores), with the NCDHW
 * output-channel tiles wherever they apply (CONVT3D_CPU_LANES=oc; default and
 * AVX2 kernels), and CUDA with device pointers and with host pointers.  A
 * target that is not available here prints why and skips.  Then the full kernelbench shape once per device, and the CPU
 * output's independence of the thread count; last, every CPU implementation
 * forced by name on random problems where it applies, refused where not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu/cachesize.h"
#include "cpu/kernels.h"
#include "cpu/tiling.h"
#include "test_util.h"

#define TOL 1e-5

static int env_count(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

/* ---- problems ----------------------------------------------------------- */

/* Parses problem_describe()'s format without layout and bias:
 * "mb2 ic8 oc4 g2 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op1x1x1 l1x1x1". */
static convt3d_problem parse_problem(const char *text)
{
    convt3d_problem p = CONVT3D_PROBLEM_INIT;
    long long v[19];
    const int got = sscanf(text,
                           "mb%lld ic%lld oc%lld g%lld in%lldx%lldx%lld k%lldx%lldx%lld "
                           "s%lldx%lldx%lld p%lldx%lldx%lld op%lldx%lldx%lld",
                           &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
                           &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16], &v[17], &v[18]);
    const char *l = strstr(text, " l");
    long long dil[3] = {1, 1, 1};
    if (l)
        sscanf(l, " l%lldx%lldx%lld", &dil[0], &dil[1], &dil[2]);
    CU_ASSERT_EQUAL_FATAL(got, 19);
    p.batch = v[0];
    p.in_channels = v[1];
    p.out_channels = v[2];
    p.groups = v[3];
    for (int d = 0; d < 3; d++) {
        p.in_size[d] = v[4 + d];
        p.kernel[d] = v[7 + d];
        p.stride[d] = v[10 + d];
        p.padding[d] = v[13 + d];
        p.output_padding[d] = v[16 + d];
        p.dilation[d] = dil[d];
    }
    return p;
}

typedef struct named_problem {
    const char *name;
    const char *desc;
} named_problem;

static const named_problem edge_cases[] = {
    {"kernel 1, strides 1..3", "mb2 ic5 oc7 g1 in4x5x6 k1x1x1 s1x2x3 p0x0x0 op0x1x2"},
    {"kernel 1, stride 1", "mb1 ic3 oc4 g1 in3x4x5 k1x1x1 s1x1x1 p0x0x0 op0x0x0"},
    {"stride > kernel: outputs with no input", "mb2 ic3 oc5 g1 in3x4x5 k2x1x2 s3x4x5 p0x0x1 op2x3x4"},
    {"padding >= kernel", "mb1 ic4 oc3 g1 in7x8x9 k2x3x2 s2x2x3 p2x4x3 op1x0x2"},
    {"padding crops all but one output", "mb1 ic2 oc3 g1 in3x3x3 k3x3x3 s1x1x1 p2x2x2 op0x0x0"},
    {"output_padding = stride - 1", "mb2 ic4 oc6 g2 in5x6x7 k3x3x3 s2x3x4 p1x1x1 op1x2x3"},
    {"dilation > 1 with stride > 1", "mb1 ic6 oc4 g2 in5x6x7 k3x3x3 s2x2x3 p1x2x3 op1x0x2 l2x3x2"},
    {"dilation > stride, output_padding from dilation",
     "mb1 ic3 oc3 g1 in4x5x6 k2x3x2 s1x2x1 p0x1x1 op2x1x1 l3x2x2"},
    {"dilation = stride (one phase gets every tap)",
     "mb1 ic3 oc4 g1 in4x5x9 k3x3x4 s2x2x2 p1x2x3 op1x1x1 l2x2x2"},
    {"depthwise G = C_in = C_out", "mb2 ic8 oc8 g8 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"depthwise, channel multiplier 2", "mb1 ic6 oc12 g6 in4x5x9 k3x3x3 s2x2x2 p1x1x1 op0x0x0"},
    {"C_out/G = 3", "mb1 ic4 oc6 g2 in4x5x17 k3x2x3 s2x1x2 p1x0x1 op0x0x1"},
    {"C_out/G = 5", "mb2 ic3 oc5 g1 in3x4x20 k2x3x4 s1x2x2 p0x1x1 op0x1x0"},
    {"C_out/G = 7", "mb1 ic8 oc14 g2 in3x5x33 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"C_out/G = 9", "mb1 ic2 oc9 g1 in4x4x16 k3x3x5 s1x1x3 p1x1x2 op0x0x2"},
    {"C_out/G = 13", "mb1 ic6 oc26 g2 in3x4x15 k3x3x3 s2x2x2 p1x1x1 op0x1x1"},
    {"C_out/G = 17, C_in/G = 19", "mb1 ic19 oc17 g1 in3x3x24 k2x2x3 s2x2x2 p0x0x1 op1x1x1"},
    {"C_out/G = 40 (several channel blocks)", "mb1 ic12 oc80 g2 in3x3x20 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"W = 1", "mb2 ic4 oc5 g1 in4x5x1 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"H = 1", "mb1 ic4 oc5 g1 in4x1x7 k3x2x3 s2x1x2 p1x0x1 op1x0x1"},
    {"D = 1", "mb1 ic4 oc5 g1 in1x6x7 k2x3x3 s2x2x1 p0x1x1 op1x1x0"},
    {"1x1x1 input", "mb3 ic2 oc3 g1 in1x1x1 k3x2x4 s2x3x2 p0x0x1 op1x2x0"},
    {"large channel counts", "mb1 ic96 oc80 g1 in3x4x5 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"large channel counts, k2 s2", "mb1 ic128 oc96 g1 in2x3x12 k2x2x2 s2x2x2 p0x0x0 op0x0x0"},
    {"long W rows (many chunks and segments)", "mb1 ic2 oc3 g1 in2x2x300 k3x1x5 s1x1x2 p1x0x2 op0x0x1"},
    {"W stride 1, long rows", "mb1 ic3 oc5 g1 in2x3x150 k3x3x3 s1x1x1 p1x1x1 op0x0x0"},
    {"W stride 3", "mb2 ic4 oc6 g1 in3x4x21 k5x4x7 s3x3x3 p2x1x3 op2x1x0"},
    {"W stride 4, kernel 9", "mb1 ic3 oc4 g1 in3x3x13 k2x2x9 s2x2x4 p0x0x4 op1x0x3"},
    {"stride far above kernel and output", "mb1 ic2 oc2 g1 in2x3x3 k2x2x2 s70x5x66 p0x0x0 op1x2x3"},
    {"W stride at CONVT3D_MAX_DIM_VALUE (a fuzz finding at 2^62)",
     "mb1 ic4 oc36 g2 in2x3x1 k1x1x3 s2x2x2147483647 p1x1x1 op1x1x1 l1x1x2"},
    {"wide kernel with dilation", "mb1 ic3 oc3 g1 in3x4x20 k2x3x9 s1x2x2 p1x2x9 op0x1x1 l1x1x3"},
    {"W stride 1, C_out/G = 40 (output-channel tiles, two blocks)",
     "mb1 ic5 oc40 g1 in3x4x29 k3x3x3 s1x1x1 p1x1x1 op0x0x0"},
    {"W stride 1, C_out/G = 18, groups 2", "mb2 ic8 oc36 g2 in3x3x20 k3x2x3 s1x2x1 p1x0x1 op0x1x0"},
    {"W stride 1, padding 0 (both row ends clipped by 2)",
     "mb1 ic4 oc17 g1 in3x3x13 k3x3x3 s1x1x1 p0x0x0 op0x0x0"},
    {"W stride 1, kernel 2", "mb2 ic3 oc20 g1 in4x3x17 k3x2x2 s2x1x1 p1x0x0 op1x0x0"},
    {"W stride 1, W = 1, C_out/G = 24", "mb1 ic3 oc24 g1 in3x3x1 k3x3x3 s1x1x1 p1x1x1 op0x0x0"},
    {"W stride 2, kernel 4, long rows in segments, tile grid one output early",
     "mb1 ic3 oc32 g1 in1x2x150 k1x3x4 s1x2x2 p0x1x2 op0x1x1"},
    {"W stride 2, kernel 3, padding 0, output padding 1",
     "mb2 ic4 oc24 g1 in3x3x9 k3x3x3 s2x2x2 p0x0x0 op1x1x1"},
    {"W stride 2, kernel 2, W = 1", "mb1 ic3 oc17 g1 in2x2x1 k2x2x2 s2x2x2 p0x0x0 op0x0x0"},
    {"groups 3, uneven everything", "mb3 ic9 oc15 g3 in5x3x11 k4x2x5 s3x2x2 p2x1x3 op1x1x1 l1x2x1"},
    /* the NDHWC tiles whose lanes run across groups */
    {"depthwise, 20 channels (a partial vector)", "mb2 ic20 oc20 g20 in3x4x13 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"depthwise, 40 channels, dilation and output padding",
     "mb1 ic40 oc40 g40 in3x4x11 k3x2x3 s2x1x2 p1x0x2 op1x0x1 l1x2x2"},
    {"depthwise, stride 1, W = 2", "mb1 ic5 oc5 g5 in3x3x2 k3x3x3 s1x1x1 p1x1x1 op0x0x0"},
    {"C_out/G = C_in/G = 2, 12 groups", "mb1 ic24 oc24 g12 in3x3x19 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"C_out/G = C_in/G = 4, 5 groups (a partial vector)",
     "mb2 ic20 oc20 g5 in2x3x9 k2x3x3 s1x2x2 p0x1x1 op0x1x1"},
    {"C_out/G = 3, C_in/G = 2 (groups straddle vectors)",
     "mb1 ic14 oc21 g7 in3x3x10 k3x3x2 s2x2x3 p1x1x0 op1x0x2"},
    {"C_out/G = 1, C_in/G = 3", "mb1 ic15 oc5 g5 in3x3x7 k3x3x3 s1x1x1 p1x1x1 op0x0x0"},
    {"C_out/G = 2, W dilation 2, stride 1", "mb1 ic8 oc8 g4 in3x4x15 k3x3x3 s1x1x1 p2x2x2 op0x0x0 l2x2x2"},
    {"C_out/G = 8, C_in/G = 8, W stride 3", "mb1 ic32 oc32 g4 in2x3x11 k3x3x5 s2x2x3 p1x1x2 op1x1x2"},
    /* NDHWC: the input channels in the lanes (few output channels a group) */
    {"C_out/G = 1, C_in/G = 37 (a partial input-channel vector)",
     "mb2 ic37 oc1 g1 in3x4x13 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"C_out/G = 3, C_in/G = 16, groups 2, W stride 3",
     "mb1 ic32 oc6 g2 in3x3x11 k2x3x4 s1x2x3 p0x1x1 op0x1x2"},
    {"C_out/G = 4, C_in/G = 24, dilation 2", "mb1 ic24 oc4 g1 in3x4x9 k3x2x3 s1x2x1 p2x1x2 op0x1x0 l2x1x2"},
    {"C_out/G = 2, C_in/G = 8, W = 1", "mb1 ic8 oc2 g1 in2x3x1 k2x2x3 s2x1x2 p0x0x1 op1x0x1"},
    /* one W tap at W stride 2 (the output-channel tiles' c = 0 and 1) */
    {"kW 1, W stride 2, c = 0", "mb1 ic5 oc20 g1 in3x4x9 k2x3x1 s2x2x2 p0x1x0 op1x0x1"},
    {"kW 1, W stride 2, c = 1, groups 2", "mb2 ic6 oc34 g2 in2x3x10 k3x2x1 s1x2x2 p1x0x1 op0x1x1"},
    {"kW 4, W stride 1 (output-channel tiles)", "mb1 ic3 oc40 g1 in2x3x19 k2x2x4 s1x1x1 p0x1x2 op0x0x0"},
    {"kW 1, W stride 3, c = 1", "mb1 ic5 oc20 g1 in2x3x9 k2x2x1 s1x2x3 p0x1x1 op0x1x2"},
    {"kW 2, W stride 3, c = 2", "mb2 ic4 oc36 g2 in2x3x8 k1x3x2 s2x1x3 p0x1x0 op1x0x1"},
    {"kW 3, W stride 3, c = 0", "mb1 ic3 oc17 g1 in3x2x10 k2x2x3 s1x1x3 p1x0x2 op0x0x0"},
    /* kernel 1x1x1: the pointwise GEMM (cpu/pointwise.h) */
    {"pointwise, stride 2, C_out 31 (partial vectors, channel tails)",
     "mb1 ic16 oc31 g1 in3x4x37 k1x1x1 s2x2x2 p0x0x0 op0x1x1"},
    {"pointwise, groups 4, strides 3x1x2, padding crops",
     "mb2 ic8 oc12 g4 in4x5x13 k1x1x1 s3x1x2 p1x0x1 op2x0x1"},
    {"pointwise, depthwise 17, stride 2", "mb2 ic17 oc17 g17 in3x4x5 k1x1x1 s2x2x2 p0x0x0 op1x0x1"},
    {"pointwise, C_in/G 64, C_out/G 1, stride 1", "mb1 ic128 oc2 g2 in3x3x19 k1x1x1 s1x1x1 p0x0x0 op0x0x0"},
    {"pointwise, stride 3, padding 2, dilation ignored",
     "mb1 ic5 oc40 g1 in3x3x23 k1x1x1 s3x3x3 p2x1x2 op2x2x1 l2x3x2"},
    {"pointwise, stride 1, output padding (from dilation) past the input",
     "mb1 ic7 oc9 g1 in2x3x70 k1x1x1 s1x1x1 p0x0x0 op1x1x1 l2x2x2"},
    /* (enough rows that a block of the driver holds several, at 1-4 threads) */
    {"pointwise, stride 1, padding 1x1x2 (NCDHW runs cut at each row's cropped ends)",
     "mb1 ic5 oc9 g1 in8x24x23 k1x1x1 s1x1x1 p1x1x2 op0x0x0"},
    {"pointwise, stride 1, output padding (NCDHW runs of one row, nothing cropped)",
     "mb1 ic5 oc9 g1 in8x24x13 k1x1x1 s1x1x1 p0x0x0 op1x1x1 l2x2x2"},
    {"pointwise, stride 1, a plane one run, 19 channels (even channel tiles)",
     "mb2 ic16 oc19 g1 in3x4x22 k1x1x1 s1x1x1 p0x0x0 op0x0x0"},
    {"pointwise, 13 positions a row (even NDHWC position tiles), C_out/G 4",
     "mb1 ic40 oc4 g1 in2x3x13 k1x1x1 s1x2x2 p0x0x0 op0x1x1"},
};

/* DESIGN.md section 5, batch 1 and fewer rows so the reference stays quick;
 * channels, kernel, stride, padding and W kept. */
static const named_problem bench_cases[] = {
    {"kernelbench (reduced)", "mb1 ic32 oc32 g4 in3x4x48 k3x5x7 s2x2x2 p1x2x3 op1x1x1"},
    {"unet_up_k2s2 (reduced)", "mb1 ic128 oc64 g1 in2x2x64 k2x2x2 s2x2x2 p0x0x0 op0x0x0"},
    {"k4s2p1 (reduced)", "mb1 ic64 oc32 g1 in2x3x32 k4x4x4 s2x2x2 p1x1x1 op0x0x0"},
    {"k3s2p1op1_wide (reduced)", "mb1 ic256 oc128 g1 in1x2x16 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"depthwise (reduced)", "mb1 ic64 oc64 g64 in4x8x32 k3x3x3 s2x2x2 p1x1x1 op1x1x1"},
    {"k3s1p1 (reduced)", "mb1 ic32 oc32 g1 in3x6x32 k3x3x3 s1x1x1 p1x1x1 op0x0x0"},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- targets ------------------------------------------------------------ */

/* An environment variable a target sets while it runs. */
typedef struct target_env {
    const char *name, *value;
} target_env;

typedef struct target {
    const char *label;
    convt3d_device device;
    pointer_mode mode;
    target_env env[3]; /* CONVT3D_CPU_* overrides; unused ones have name NULL */
} target;

enum {
    T_CPU,
    T_CPU_AVX2,
    T_CPU_GENERIC,
    T_CPU_STREAM,
    T_CPU_AVX2_STREAM,
    T_CPU_PACK,
    T_CPU_OC_LANES,
    T_CPU_AVX2_OC_LANES,
    T_CPU_COLG,
    T_CUDA_DEVICE,
    T_CUDA_HOST,
    T_COUNT
};

#define ISA(v) {"CONVT3D_CPU_ISA", v}
#define STREAM {"CONVT3D_CPU_STREAM", "1"}
#define PACK {"CONVT3D_CPU_PACK", "1"}
#define OC_LANES {"CONVT3D_CPU_LANES", "oc"}
#define COLG {"CONVT3D_CPU_COLG", "1"}
static const target targets[T_COUNT] = {
    {"cpu", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS, {{0}}},
    {"cpu avx2", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS, {ISA("avx2")}},
    {"cpu generic", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS, {ISA("generic")}},
    {"cpu streaming stores", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS, {STREAM}},
    /* with the input rows packed too: the AVX2 build's packed NDHWC tiles */
    {"cpu avx2 kernel, streaming stores, packed rows", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS,
     {ISA("avx2"), STREAM, PACK}},
    {"cpu input-row packing", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS, {PACK}},
    {"cpu output-channel tiles", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS, {OC_LANES}},
    {"cpu avx2 kernel, output-channel tiles", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS,
     {ISA("avx2"), OC_LANES}},
    /* a 16 KiB L2: the column GEMM's z rows hold a few input rows, so its
     * blocks go through several row sub-blocks that share input rows */
    {"cpu column GEMM, 16 KiB L2", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS,
     {COLG, {"CONVT3D_CPU_L2", "16384"}}},
    {"cuda, device pointers", {CONVT3D_DEVICE_CUDA, 0}, DEVICE_POINTERS, {{0}}},
    {"cuda, host pointers", {CONVT3D_DEVICE_CUDA, 0}, HOST_POINTERS, {{0}}},
};

static void target_enter(const target *t)
{
    for (int i = 0; i < COUNT(t->env); i++)
        if (t->env[i].name)
            setenv(t->env[i].name, t->env[i].value, 1);
}

static void target_leave(const target *t)
{
    for (int i = 0; i < COUNT(t->env); i++)
        if (t->env[i].name)
            unsetenv(t->env[i].name);
}

/* The CPU kernel variant the target forces, or NULL. */
static const char *target_isa(const target *t)
{
    for (int i = 0; i < COUNT(t->env); i++)
        if (t->env[i].name && strcmp(t->env[i].name, "CONVT3D_CPU_ISA") == 0)
            return t->env[i].value;
    return NULL;
}

/* The kernel name of t's plan for desc in layout (zero weights) into name;
 * 0 when plan creation fails (name then says why).  plan_kernel_on: NCDHW. */
static int plan_kernel_in(const target *t, const char *desc, convt3d_layout layout, char *name,
                          size_t size)
{
    convt3d_problem p = parse_problem(desc);
    p.layout = layout;
    int64_t nx, nw, ny;
    CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(&p, &nx, &nw, &ny), CONVT3D_SUCCESS);
    float *w = calloc((size_t)nw, sizeof *w);
    CU_ASSERT_FATAL(w != NULL);
    convt3d_plan *plan = NULL;
    target_enter(t);
    const convt3d_status st = convt3d_plan_create(&plan, &p, t->device, w, NULL);
    target_leave(t);
    free(w);
    if (st != CONVT3D_SUCCESS) {
        snprintf(name, size, "plan creation failed: %s", convt3d_last_error());
        return 0;
    }
    snprintf(name, size, "%s", convt3d_plan_kernel_name(plan));
    convt3d_plan_destroy(plan);
    return 1;
}

static int plan_kernel_on(const target *t, const char *desc, char *name, size_t size)
{
    return plan_kernel_in(t, desc, CONVT3D_LAYOUT_NCDHW, name, size);
}

/* NULL when the target can run here, else why not (printed by the caller). */
static const char *target_unavailable(const target *t)
{
    static char why[256];
    if (t->device.kind == CONVT3D_DEVICE_CUDA)
        return gpu_skip_reason();
    const char *isa = target_isa(t);
    if (!isa)
        return NULL;
    /* A variant the CPU or build lacks silently falls back: detect that from
     * the kernel name the plan reports. */
    char name[160];
    if (!plan_kernel_on(t, "mb1 ic1 oc1 g1 in1x1x1 k1x1x1 s1x1x1 p0x0x0 op0x0x0", name,
                        sizeof name)) {
        snprintf(why, sizeof why, "%s", name);
        return why;
    }
    const char *tail = strstr(name, "__");
    const int ok = tail && strcmp(tail + 2, isa) == 0;
    snprintf(why, sizeof why, "the %s kernel is not supported here (the plan chose %s)", isa,
             name);
    return ok ? NULL : why;
}

static int skip_target(const target *t)
{
    const char *why = target_unavailable(t);
    if (why) {
        test_skip("[%s]: %s", t->label, why);
        if (t->device.kind == CONVT3D_DEVICE_CUDA)
            gpu_cases_skipped++;
    }
    return why != NULL;
}

static void check_on(const target *t, const convt3d_problem *p, uint64_t seed, const char *name)
{
    target_enter(t);
    check_result res = check_backend(p, t->device, seed, t->mode, TOL);
    target_leave(t);
    if (!res.ok && !res.skipped)
        printf("\n  [%s] %s", t->label, name);
    assert_check(&res, p, seed);
}

/* ---- the runs ----------------------------------------------------------- */

static void run_random(const target *t, int count, uint64_t salt)
{
    if (skip_target(t))
        return;
    const uint64_t base = test_seed() * 1000003u + salt;
    rng r = rng_make(base);
    for (int i = 0; i < count; i++) {
        const convt3d_problem p = random_problem(&r, 4e5, 40000);
        check_on(t, &p, base + (uint64_t)i, "random problem");
    }
}

/* Each problem of the table in both layouts, with and without bias. */
static void run_table(const target *t, const named_problem *table, int n, uint64_t salt)
{
    if (skip_target(t))
        return;
    for (int i = 0; i < n; i++) {
        convt3d_problem p = parse_problem(table[i].desc);
        for (int variant = 0; variant < 4; variant++) {
            p.layout = variant & 1 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
            p.has_bias = variant >> 1;
            check_on(t, &p, test_seed() + salt * 1000 + (uint64_t)(4 * i + variant), table[i].name);
        }
    }
}

static int random_count(int id)
{
    const int n = env_count("CONVT3D_TEST_PROBLEMS", 200);
    return id == T_CUDA_HOST ? n / 4 : n; /* staged copies are slow, the kernel is the same */
}

/* One CUnit function per (target, run); CUnit tests take no arguments. */
#define TARGET_TESTS(id)                                                                       \
    static void random_##id(void) { run_random(&targets[id], random_count(id), 1 + id); }     \
    static void edges_##id(void)                                                               \
    {                                                                                          \
        run_table(&targets[id], edge_cases, COUNT(edge_cases), 10 + id);                       \
    }                                                                                          \
    static void bench_##id(void) { run_table(&targets[id], bench_cases, COUNT(bench_cases), 20 + id); }
TARGET_TESTS(T_CPU)
TARGET_TESTS(T_CPU_AVX2)
TARGET_TESTS(T_CPU_GENERIC)
TARGET_TESTS(T_CPU_STREAM)
TARGET_TESTS(T_CPU_AVX2_STREAM)
TARGET_TESTS(T_CPU_PACK)
TARGET_TESTS(T_CPU_OC_LANES)
TARGET_TESTS(T_CPU_AVX2_OC_LANES)
TARGET_TESTS(T_CPU_COLG)
TARGET_TESTS(T_CUDA_DEVICE)
TARGET_TESTS(T_CUDA_HOST)

/* ---- every CPU implementation of the registry --------------------------- */

/* check_registry() over the CPU implementations: each forced by name on the
 * random problems (CONVT3D_TEST_REGISTRY_PROBLEMS, default 60), the edge
 * cases and the reduced bench shapes, in both layouts with and without bias,
 * wherever convt3d_implementation_applies() says it runs.  A kernel added to
 * the registry is tested here with no edit. */
static void cpu_registry(void)
{
    const int nrandom = env_count("CONVT3D_TEST_REGISTRY_PROBLEMS", 60);
    const int n = nrandom + COUNT(edge_cases) + COUNT(bench_cases);
    convt3d_problem *problems = malloc((size_t)n * sizeof *problems);
    CU_ASSERT_FATAL(problems != NULL);
    rng r = rng_make(test_seed() * 1000003u + 99);
    int k = 0;
    for (int i = 0; i < nrandom; i++)
        problems[k++] = random_problem(&r, 4e5, 40000);
    for (int i = 0; i < COUNT(edge_cases); i++)
        problems[k++] = parse_problem(edge_cases[i].desc);
    for (int i = 0; i < COUNT(bench_cases); i++)
        problems[k++] = parse_problem(bench_cases[i].desc);
    const impl_stats st =
        check_registry(CONVT3D_DEVICE_CPU, problems, n, test_seed() + 7000, HOST_POINTERS, TOL);
    printf("\n  %d CPU implementations, %d checks, %d failed ", st.implementations, st.checks,
           st.failed);
    CU_ASSERT(st.implementations > 0);
    CU_ASSERT(st.checks > 0);
    free(problems);
}

/* ---- streaming stores on aligned and misaligned outputs ---------------- */

/* check_backend()'s two passes with tensors from aligned_alloc(64) and y
 * starting y_offset floats in: the CPU kernel streams only into 64-byte
 * aligned rows and must give the same result either way. */
static check_result check_cpu_placed(const convt3d_problem *p, uint64_t seed, int64_t y_offset)
{
    check_result res = {0};
    int64_t nx, nw, ny;
    CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(p, &nx, &nw, &ny), CONVT3D_SUCCESS);
    const size_t pad = 64;
    float *x = aligned_alloc(64, ((size_t)nx * 4 + pad) / pad * pad);
    float *w = aligned_alloc(64, ((size_t)nw * 4 + pad) / pad * pad);
    float *b = aligned_alloc(64, ((size_t)p->out_channels * 4 + pad) / pad * pad);
    float *ybase = aligned_alloc(64, ((size_t)(ny + y_offset) * 4 + pad) / pad * pad);
    float *ref = malloc((size_t)ny * sizeof *ref);
    CU_ASSERT_FATAL(x && w && b && ybase && ref);
    float *y = ybase + y_offset;
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    rng r = rng_make(seed);
    res.ok = 1;
    for (int pass = 0; pass < 2; pass++) {
        void (*fill)(rng *, float *, int64_t) = pass == 0 ? fill_small_ints : fill_uniform;
        fill(&r, x, nx);
        fill(&r, w, nw);
        fill(&r, b, p->out_channels);
        CU_ASSERT_EQUAL_FATAL(convt3d_reference(p, x, w, b, ref), CONVT3D_SUCCESS);
        poison(y, ny);
        if (convt3d_forward(p, cpu, x, w, b, y) != CONVT3D_SUCCESS) {
            snprintf(res.message, sizeof res.message, "forward failed: %s", convt3d_last_error());
            res.ok = 0;
            break;
        }
        res.unwritten += count_poison(y, ny);
        if (pass == 0)
            res.exact_diff = max_abs_error(y, ref, ny);
        else
            res.rel_l2 = rel_l2_error(y, ref, ny);
    }
    if (res.ok) {
        res.ok = res.unwritten == 0 && res.exact_diff == 0.0 && res.rel_l2 <= TOL;
        snprintf(res.message, sizeof res.message,
                 "y offset %lld floats: unwritten=%lld, small-int max diff=%g, rel L2=%.3g",
                 (long long)y_offset, (long long)res.unwritten, res.exact_diff, res.rel_l2);
    }
    free(x);
    free(w);
    free(b);
    free(ybase);
    free(ref);
    return res;
}

static void cpu_streaming_placement(void)
{
    setenv("CONVT3D_CPU_STREAM", "1", 1);
    const named_problem *tables[2] = {bench_cases, edge_cases};
    const int sizes[2] = {COUNT(bench_cases), COUNT(edge_cases)};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < sizes[k]; i++)
            for (int64_t off = 0; off <= 4; off += 3) { /* aligned, then 12 bytes in */
                convt3d_problem p = parse_problem(tables[k][i].desc);
                p.has_bias = i & 1;
                const uint64_t seed = test_seed() + 500 + (uint64_t)(10 * i + off);
                check_result res = check_cpu_placed(&p, seed, off);
                if (!res.ok)
                    printf("\n  [cpu streaming, placed y] %s: %s", tables[k][i].name, res.message);
                assert_check(&res, &p, seed);
            }
    unsetenv("CONVT3D_CPU_STREAM");
}

/* The bench's headline shape at full size, as the bench runs it (NCDHW, no
 * bias); the reference takes a few seconds per pass. */
static void run_kernelbench(const target *t)
{
    if (skip_target(t))
        return;
    const convt3d_problem p =
        parse_problem("mb8 ic32 oc32 g4 in12x24x48 k3x5x7 s2x2x2 p1x2x3 op1x1x1");
    check_on(t, &p, test_seed() + 77, "kernelbench (full size)");
}
static void kernelbench_cpu(void) { run_kernelbench(&targets[T_CPU]); }
static void kernelbench_cuda(void) { run_kernelbench(&targets[T_CUDA_DEVICE]); }

/* ---- which NCDHW tile runs ----------------------------------------------- */

/* Whether t's plan for desc runs the NCDHW output-channel tiles. */
static int runs_oc_lanes(const target *t, const char *desc)
{
    char name[160];
    CU_ASSERT_FATAL(plan_kernel_on(t, desc, name, sizeof name));
    return strstr(name, "_ncdhw_oc__") != NULL;
}

/* The plan picks the output-channel tiles for the stride-1 bench shape and
 * the W-lane tiles where channel lanes would mostly idle (4 channels);
 * CONVT3D_CPU_LANES forces either where the tiles apply (W stride 3 with
 * 1-5 W taps among them), and 6 W taps or W dilation 2 never gets them;
 * forced, the tiles of 4 and 5 W taps (round 27) match the reference at
 * strides 1-3 in each phase c, with and without bias.  With few output channels and many input
 * channels the input-channel-lane tile comes first where its rule says. */
static void cpu_lanes_choice(void)
{
    const target *cpu = &targets[T_CPU], *oc = &targets[T_CPU_OC_LANES];
    const target w = {"cpu W lanes", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS,
                      {{"CONVT3D_CPU_LANES", "w"}}};
    const char *k3s1p1 = bench_cases[COUNT(bench_cases) - 1].desc;
    const char *few = "mb1 ic3 oc4 g1 in3x4x20 k3x3x3 s1x1x1 p1x1x1 op0x0x0";
    const char *stride3 = "mb1 ic3 oc32 g1 in3x4x20 k3x3x3 s1x1x3 p1x1x1 op0x0x1";
    const char *stride3k4 = "mb1 ic3 oc32 g1 in3x4x20 k3x3x4 s1x1x3 p1x1x1 op0x0x1";
    const char *k6 = "mb1 ic3 oc32 g1 in3x4x20 k3x3x6 s1x1x2 p1x1x2 op0x0x1";
    const char *dilated = "mb1 ic3 oc32 g1 in3x4x20 k3x3x3 s1x1x1 p1x1x2 op0x0x0 l1x1x2";
    char name[160];
    CU_ASSERT_FATAL(plan_kernel_on(cpu, few, name, sizeof name));
    if (strstr(name, "__generic")) {
        test_skip("only the generic kernel runs here");
        return;
    }
    CU_ASSERT(strstr(k3s1p1, "s1x1x1") != NULL);
    CU_ASSERT(runs_oc_lanes(cpu, k3s1p1));
    CU_ASSERT(!runs_oc_lanes(&w, k3s1p1));
    CU_ASSERT(!runs_oc_lanes(cpu, few));
    CU_ASSERT(runs_oc_lanes(oc, few));
    CU_ASSERT(runs_oc_lanes(oc, stride3));
    CU_ASSERT(runs_oc_lanes(oc, stride3k4));
    CU_ASSERT(!runs_oc_lanes(oc, k6));
    CU_ASSERT(!runs_oc_lanes(oc, dilated));
    /* W phases of at most 7/16 of a vector, or 9/16 from C_in/G <= 3: the
     * output-channel tile whatever its lanes waste (round 39: seed 41's
     * random_66, 2 -> 2 k5 s3 on W 4; depthwise on W 4); AVX2's 8 lanes
     * are not checked */
    if (strstr(name, "__avx512")) {
        CU_ASSERT(runs_oc_lanes(cpu, "mb2 ic2 oc2 g1 in6x6x4 k5x5x5 s3x3x3 p0x0x0 op0x0x0"));
        CU_ASSERT(runs_oc_lanes(cpu, "mb1 ic8 oc8 g8 in5x5x4 k3x3x3 s2x2x2 p0x1x1 op0x0x0"));
        CU_ASSERT(runs_oc_lanes(cpu, "mb1 ic3 oc2 g1 in4x4x9 k3x3x3 s2x2x2 p1x1x1 op0x0x0"));
        CU_ASSERT(!runs_oc_lanes(cpu, "mb1 ic4 oc2 g1 in4x4x9 k3x3x3 s2x2x2 p1x1x1 op0x0x0"));
    }
    for (int kw = 4; kw <= 5; kw++)
        for (int sw = 1; sw <= 3; sw++)
            for (int pw = 0; pw < sw && pw < kw; pw++) {
                char desc[96];
                snprintf(desc, sizeof desc,
                         "mb1 ic3 oc%d g1 in2x3x%d k2x2x%d s1x2x%d p0x1x%d op0x1x%d",
                         sw == 2 ? 32 : 19, 9 + kw + sw, kw, sw, pw, sw - 1);
                CU_ASSERT(runs_oc_lanes(oc, desc));
                convt3d_problem p = parse_problem(desc);
                for (int b = 0; b < 2; b++) {
                    p.has_bias = b;
                    check_on(oc, &p, 300 + (uint64_t)(kw * 20 + sw * 4 + pw * 2 + b), desc);
                }
            }
    /* two output channels, 64 input channels, W phases of 8: the input
     * channels go in the lanes; a 1x1x1 kernel (too little work for each
     * transposed input) stays on the W-lane tile */
    const char *fewout = "mb1 ic64 oc2 g1 in3x4x8 k3x3x5 s1x3x2 p1x0x2 op0x0x0";
    const char *pointwise = "mb1 ic64 oc2 g1 in3x4x8 k1x1x1 s1x1x1 p0x0x0 op0x0x0";
    const target no_colg = {"cpu without the column GEMM", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS,
                            {{"CONVT3D_CPU_COLG", "0"}}};
    CU_ASSERT_FATAL(plan_kernel_on(&no_colg, fewout, name, sizeof name));
    CU_ASSERT(strstr(name, "_iclanes_ncdhw__") != NULL);
    CU_ASSERT_FATAL(plan_kernel_on(cpu, pointwise, name, sizeof name));
    CU_ASSERT(strstr(name, "_pointwise_ncdhw__") != NULL);
    /* few taps a phase and few input-channel vectors: too few FMAs end in
     * each lane sum, the W-lane tile takes it (random_71, random_140) */
    const char *thin = "mb1 ic54 oc8 g2 in5x5x17 k3x1x2 s2x2x2 p1x0x1 op0x0x0";
    CU_ASSERT_FATAL(plan_kernel_on(cpu, thin, name, sizeof name));
    CU_ASSERT(strstr(name, "_iclanes_ncdhw__") == NULL);
}

/* NCDHW with 1-8 output channels a group and a long enough sum over input
 * channels (C_in/G >= 4 for one, >= 8 C_out/G for 2-8), or depthwise (one
 * channel each side), runs on the column GEMM (cpu_colg_worthwhile), kernel
 * 1x1x1 stays on the pointwise GEMM, and CONVT3D_CPU_COLG=0 turns it off.
 * Each case the walk gives the column GEMM runs against the reference,
 * output poisoned, with and without bias. */
static void cpu_colg_choice(void)
{
    const target *cpu = &targets[T_CPU];
    static const struct {
        const char *desc;
        int colg;
    } cases[] = {
        {"mb1 ic256 oc2 g2 in5x6x30 k5x2x3 s3x2x2 p1x0x1 op1x0x0", 1}, /* random_153 */
        {"mb1 ic16 oc1 g1 in5x6x7 k3x3x3 s1x2x3 p0x0x1 op0x0x0", 1},     /* random_6 */
        {"mb1 ic4 oc1 g1 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op0x0x0", 1},
        {"mb1 ic3 oc1 g1 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op0x0x0", 0},
        {"mb1 ic2 oc1 g1 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op0x0x0", 0},
        {"mb1 ic64 oc4 g1 in5x6x7 k3x3x3 s3x3x3 p0x0x0 op0x0x0", 1},
        {"mb1 ic24 oc4 g1 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op0x0x0", 0},
        /* 5-8 output channels a group with C_in/G >= 8 C_out/G (round 25) */
        {"mb1 ic512 oc5 g1 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op0x0x0", 1},
        {"mb2 ic124 oc7 g1 in4x9x13 k2x2x2 s3x1x2 p1x0x1 op0x0x0", 1}, /* random_96 */
        {"mb1 ic64 oc8 g1 in5x6x7 k1x2x3 s2x2x2 p0x0x0 op1x0x1", 1},
        {"mb1 ic63 oc8 g1 in5x6x7 k1x2x3 s2x2x2 p0x0x0 op1x0x1", 0},
        {"mb1 ic512 oc9 g1 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op0x0x0", 0},
        /* depthwise (round 25): random_77 of seed 1, 64 groups, k2 s3, and
         * dilated 2 at stride 3; not at W stride 2 with 3+ W taps (the
         * suite's depthwise shape, random_44 of seed 1) */
        {"mb2 ic64 oc64 g64 in4x7x15 k2x2x2 s3x3x3 p0x0x0 op0x0x1", 1},
        {"mb1 ic11 oc11 g11 in6x8x11 k3x3x3 s3x3x3 p0x0x0 op0x0x1 l2x2x2", 1},
        {"mb1 ic11 oc11 g11 in6x8x11 k3x3x3 s2x2x2 p0x0x0 op0x0x1 l2x2x2", 0},
        {"mb2 ic64 oc64 g64 in4x8x8 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 0},
        {"mb1 ic8 oc8 g8 in4x8x8 k3x3x2 s2x2x2 p1x1x0 op1x1x0", 1},
        {"mb1 ic8 oc16 g8 in5x6x7 k3x3x3 s2x2x2 p1x1x1 op0x0x0", 0},
        {"mb1 ic128 oc2 g1 in5x6x7 k1x1x1 s2x2x2 p0x0x0 op0x0x0", 0},
    };
    char name[160];
    CU_ASSERT_FATAL(plan_kernel_on(cpu, cases[0].desc, name, sizeof name));
    if (strstr(name, "__generic")) {
        test_skip("only the generic kernels run here");
        return;
    }
    for (int i = 0; i < COUNT(cases); i++) {
        CU_ASSERT_FATAL(plan_kernel_in(cpu, cases[i].desc, CONVT3D_LAYOUT_NCDHW, name,
                                       sizeof name));
        if ((strstr(name, "_colgemm_ncdhw__") != NULL) != cases[i].colg) {
            printf("\n  %s: %s", cases[i].desc, name);
            CU_FAIL("the column GEMM rule");
        }
        CU_ASSERT_FATAL(plan_kernel_in(cpu, cases[i].desc, CONVT3D_LAYOUT_NDHWC, name,
                                       sizeof name));
        CU_ASSERT(strstr(name, "_colgemm_") == NULL);
        convt3d_problem p = parse_problem(cases[i].desc);
        for (int b = 0; cases[i].colg && b < 2; b++) {
            p.has_bias = b;
            check_on(cpu, &p, 91 + (uint64_t)(2 * i + b), cases[i].desc);
        }
    }
    const target off = {"cpu without the column GEMM", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS,
                        {{"CONVT3D_CPU_COLG", "0"}}};
    CU_ASSERT_FATAL(plan_kernel_on(&off, cases[0].desc, name, sizeof name));
    CU_ASSERT(strstr(name, "_colgemm_") == NULL);
}

/* NDHWC problems whose groups leave vectors idle run on the kernels that
 * lay the lanes across groups (where there are several groups; the cases
 * of one group that now run on the gather tile are checked against the
 * reference, with and without bias), or, with few output channels and a
 * vector of input channels or more a group (8 or more, half an AVX-512
 * vector, where the other tiles do not take them), on the tile with the
 * input channels in its lanes (checked too), or, with fewer output
 * channels than a vector and enough work, on the W-lane tile over
 * transposed rows; the rest stay on the tile of one group at a time. */
static void cpu_ndhwc_choice(void)
{
    const target *cpu = &targets[T_CPU];
    static const struct {
        const char *desc, *kind;
    } cases[] = {
        {"mb1 ic64 oc64 g64 in4x8x32 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_depthwise_ndhwc__"},
        {"mb1 ic24 oc24 g12 in3x3x19 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_grouplanes_ndhwc__"},
        {"mb1 ic32 oc64 g1 in3x4x20 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_gather_ndhwc__"},
        /* 5 output channels a group: W lanes (20 positions a phase) fill more */
        {"mb1 ic128 oc10 g2 in3x4x20 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_transposed_ndhwc__"},
        {"mb1 ic128 oc4 g2 in3x4x20 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_iclanes_ndhwc__"},
        {"mb1 ic256 oc1 g1 in3x4x20 k4x4x4 s2x2x2 p1x1x1 op0x0x0", "_iclanes_ndhwc__"},
        /* 8-15 input channels a group, half an AVX-512 vector or more
         * (round 38): the input-channel lanes against the gather tile
         * (seed 40's random_31, 15 -> 1, k2x2x4 s2), but not where the
         * grouped lanes take it (32 groups of 8 -> 4, k2x4x2 s2), nor the
         * W lanes (32 groups of 8 -> 1, k4 s2), nor 3-4 output channels
         * with fewer than 4 taps an output (9 -> 4, k2 s2); AVX2 takes all
         * of them with the input-channel lanes, a whole vector there */
        {"mb1 ic15 oc1 g1 in5x6x7 k2x2x4 s2x2x2 p0x0x0 op0x0x0", "_iclanes_ndhwc__"},
        {"mb1 ic8 oc2 g1 in4x5x11 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_iclanes_ndhwc__"},
        {"mb1 ic256 oc128 g32 in3x3x5 k2x4x2 s2x2x2 p0x0x0 op0x0x0", "@_grouplanes_ndhwc__"},
        {"mb1 ic256 oc32 g32 in3x4x6 k4x4x4 s2x2x2 p1x1x1 op0x0x0", "@_transposed_ndhwc__"},
        {"mb1 ic9 oc4 g1 in5x6x7 k2x2x2 s2x2x2 p0x0x0 op0x0x0", "@_gather_ndhwc__"},
        /* AVX2's half vector (round 40): 4-7 input channels, where they
         * fill twice the lanes that the gather tile's output channels
         * would (seed 21's s21_196, 5 -> 1, 2.6x; 16 groups of 6 -> 1),
         * not with 4 output channels (0.45-0.72x) */
        {"mb1 ic5 oc1 g1 in4x5x9 k3x3x3 s3x3x3 p0x0x1 op0x0x0", "%_iclanes_ndhwc__"},
        {"mb1 ic96 oc16 g16 in4x5x7 k3x3x3 s3x2x3 p1x1x0 op0x0x0", "%_iclanes_ndhwc__"},
        {"mb1 ic4 oc2 g1 in4x5x8 k2x2x2 s2x2x2 p0x0x0 op0x0x0", "%_iclanes_ndhwc__"},
        {"mb1 ic4 oc4 g1 in4x5x8 k2x2x2 s2x2x2 p0x0x0 op0x0x0", "!_iclanes_ndhwc__"},
        /* one input channel a group: the groups across the lanes, not the
         * W lanes of one group (round 26: seed 3's 8 groups of 1 -> 2) */
        {"mb1 ic8 oc16 g8 in6x6x7 k5x5x5 s1x1x1 p0x0x1 op0x0x0", "_grouplanes_ndhwc__"},
        /* four or more groups of at most a quarter vector of output
         * channels: the grouped lanes, not the W lanes (round 33), also
         * where a span takes two vectors (AVX-512; AVX2 then does not
         * take them, and the case is not checked there) */
        {"mb1 ic8 oc8 g4 in6x6x7 k3x3x3 s1x1x1 p1x1x1 op0x0x0", "_grouplanes_ndhwc__"},
        {"mb1 ic32 oc12 g4 in5x5x5 k1x5x3 s1x2x1 p0x1x0 op0x1x0", "@_grouplanes_ndhwc__"},
        {"mb1 ic32 oc16 g16 in8x8x24 k1x1x1 s2x2x2 p0x0x0 op1x1x1", "@_grouplanes_ndhwc__"},
        /* pointwise, 8 output channels a group (half an AVX-512 vector;
         * a whole AVX2 one, the pointwise GEMM's there): the grouped lanes
         * (round 39: seed 41's random_28, 32 groups of 8 -> 8, 7.0 -> 1.6 ms) */
        {"mb1 ic256 oc256 g32 in4x4x6 k1x1x1 s2x1x1 p0x0x0 op0x0x0", "@_grouplanes_ndhwc__"},
        /* 8 -> 7 channels a group: spans of two vectors do not pay */
        {"mb1 ic128 oc112 g16 in3x7x13 k4x1x5 s3x3x3 p1x0x1 op0x0x0", "!_grouplanes_ndhwc__"},
        /* one group of few output channels: no groups to lay across the
         * lanes, the gather tile's broadcasts beat the grouped lanes'
         * permutes (round 25: random_100, 4 -> 11; random_132, 8 -> 4) */
        {"mb2 ic4 oc11 g1 in5x6x8 k4x4x4 s2x3x1 p0x2x0 op1x0x0", "_gather_ndhwc__"},
        /* one group of 2-8 output channels: several positions a vector
         * (round 27) at W stride 1 from 6 positions a phase, else from 16
         * and with 4 positions a vector (AVX-512 8 and AVX2 4 here); short
         * rows and 2 positions a vector at stride 2 stay on the gather tile */
        {"mb2 ic2 oc4 g1 in3x4x26 k2x3x5 s1x2x1 p0x0x0 op0x0x0", "_poslanes_ndhwc__"},
        {"mb1 ic1 oc2 g1 in3x4x20 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_poslanes_ndhwc__"},
        {"mb1 ic1 oc3 g1 in4x5x9 k2x5x2 s2x2x2 p0x1x0 op0x0x1", "_gather_ndhwc__"},
        /* and before the W-lane tile on transposed rows where a W phase
         * holds fewer than 24 positions (round 38: seed 38's random_116,
         * 2 -> 4, k3 s1, 17 positions), not on longer rows (seed 19's
         * random_61, 6 -> 2, k5 s2, 29 a phase) */
        {"mb2 ic2 oc4 g1 in5x6x15 k3x3x3 s1x1x1 p0x0x0 op0x0x0", "@_poslanes_ndhwc__"},
        {"mb1 ic6 oc2 g1 in4x5x27 k5x5x5 s2x2x2 p0x0x0 op0x0x0", "@_transposed_ndhwc__"},
        /* with AVX2 also longer phases from 1-2 input channels (round 40:
         * 7 of 7, 1.18-3.47x; 26 positions here) */
        {"mb1 ic1 oc2 g1 in3x4x24 k3x3x3 s1x1x1 p0x0x0 op0x0x0", "%_poslanes_ndhwc__"},
        {"mb1 ic8 oc8 g1 in3x4x20 k3x3x3 s2x2x2 p1x1x1 op1x1x1", "_gather_ndhwc__"},
        /* kernel 1x1x1: the pointwise GEMM, unless groups of few output
         * channels leave its lanes idle (then the lanes across groups), or
         * a few output channels come from many inputs (then the input
         * channels in the lanes: at most 2, or 4 at stride 1 or from 8
         * vectors; the 3-4 cases at stride 2 hold on AVX-512 and AVX2
         * alike: 32 channels are 2 or 4 vectors, 128 are 8 or 16) */
        {"mb1 ic16 oc31 g1 in4x4x16 k1x1x1 s2x2x2 p0x0x0 op0x0x0", "_pointwise_ndhwc__"},
        {"mb1 ic64 oc2 g1 in4x4x16 k1x1x1 s1x1x1 p0x0x0 op0x0x0", "_iclanes_ndhwc__"},
        {"mb1 ic64 oc2 g1 in4x4x16 k1x1x1 s2x2x2 p0x0x0 op0x0x0", "_iclanes_ndhwc__"},
        {"mb1 ic64 oc4 g1 in4x4x16 k1x1x1 s1x1x1 p0x0x0 op0x0x0", "_iclanes_ndhwc__"},
        {"mb1 ic32 oc4 g1 in4x4x16 k1x1x1 s2x2x2 p0x0x0 op0x0x0", "_pointwise_ndhwc__"},
        {"mb1 ic128 oc4 g1 in4x4x16 k1x1x1 s2x2x2 p0x0x0 op0x0x0", "_iclanes_ndhwc__"},
        {"mb1 ic256 oc4 g1 in3x4x13 k1x1x1 s1x2x2 p0x0x0 op0x0x0", "_iclanes_ndhwc__"},
        {"mb1 ic4 oc2 g1 in4x4x16 k1x1x1 s1x1x1 p0x0x0 op0x0x0", "_pointwise_ndhwc__"},
        {"mb1 ic64 oc64 g64 in4x8x32 k1x1x1 s2x2x2 p0x0x0 op1x1x1", "_depthwise_ndhwc__"},
        /* one channel each side: x and y lie as in NCDHW, planned as NCDHW */
        {"mb2 ic1 oc1 g1 in6x7x9 k4x1x3 s2x2x2 p0x0x1 op0x0x0", "_ncdhw"},
        {"mb3 ic1 oc1 g1 in5x5x5 k1x1x1 s1x1x1 p0x0x0 op0x0x0", "_ncdhw__"},
    };
    for (int i = 0; i < COUNT(cases); i++) {
        convt3d_problem p = parse_problem(cases[i].desc);
        p.layout = CONVT3D_LAYOUT_NDHWC;
        int64_t nx, nw, ny;
        CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(&p, &nx, &nw, &ny), CONVT3D_SUCCESS);
        float *w = calloc((size_t)nw, sizeof *w);
        CU_ASSERT_FATAL(w != NULL);
        convt3d_plan *plan = NULL;
        CU_ASSERT_EQUAL_FATAL(convt3d_plan_create(&plan, &p, cpu->device, w, NULL),
                              CONVT3D_SUCCESS);
        const char *name = convt3d_plan_kernel_name(plan);
        /* the portable kernel has no transposed or position-lane variant: its
         * gather tile instead */
        const int any_isa = cases[i].kind[0] != '@' && cases[i].kind[0] != '%';
        const char *kind = strstr(name, "__generic") && any_isa &&
                                   (strstr(cases[i].kind, "_transposed_") ||
                                    strstr(cases[i].kind, "_poslanes_"))
                               ? "_gather_ndhwc__"
                               : cases[i].kind;
        /* "!k": any kernel but k; "@k": k where the kernel is AVX-512's
         * (two-vector spans), any kernel elsewhere; "%k": k where the
         * kernel is AVX2's, any elsewhere */
        const int ok = kind[0] == '!'   ? strstr(name, kind + 1) == NULL
                       : kind[0] == '@' ? !strstr(name, "__avx512") || strstr(name, kind + 1)
                       : kind[0] == '%' ? !strstr(name, "__avx2") || strstr(name, kind + 1)
                                        : strstr(name, kind) != NULL;
        if (!ok)
            printf("\n  FAILED: %s (NDHWC) ran %s, expected %s kernel", cases[i].desc, name,
                   kind);
        CU_ASSERT(ok);
        convt3d_plan_destroy(plan);
        free(w);
        if ((p.in_channels == 1 && p.out_channels == 1) || strstr(cases[i].kind, "_iclanes_") ||
            (p.groups == 1 && (strstr(cases[i].kind, "_gather_ndhwc__") ||
                               strstr(cases[i].kind, "_poslanes_ndhwc__"))))
            for (int b = 0; b < 2; b++) { /* one channel: computed as NCDHW; checked as given */
                p.has_bias = b;
                check_on(cpu, &p, 77 + (uint64_t)i, cases[i].desc);
            }
    }
}

/* With AVX2, groups of 2-4 output channels from 8-16 input channels whose
 * batches of groups fill whole vectors of y, on W phases of 16 or more
 * positions: the W-lane tile on transposed rows, not the input-channel lanes
 * (round 42, Zen 3: seed 61's random_73, 32 groups of 8 -> 4, k2 s2, 4.0x;
 * fresh seeds 61-100, 22 of 29 faster, geometric mean 1.48x), checked
 * against the reference; three input-channel vectors a group, a phase of
 * 13, or batches of 3 channels (2 groups of 3) keep the input-channel lanes. */
static void avx2_groups_fill_lines(const target *avx2)
{
    static const struct {
        const char *desc;
        int w_lanes;
    } cases[] = {
        {"mb1 ic256 oc128 g32 in3x4x17 k2x2x2 s2x2x2 p0x1x1 op0x0x0", 1},
        {"mb1 ic32 oc8 g2 in3x5x17 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 1},
        {"mb1 ic768 oc64 g32 in3x4x17 k2x2x2 s2x2x2 p0x1x1 op0x0x0", 0},
        {"mb1 ic256 oc128 g32 in3x4x14 k2x2x2 s2x2x2 p0x1x1 op0x0x0", 0},
        {"mb1 ic32 oc6 g2 in3x5x17 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 0},
    };
    char name[160];
    for (int i = 0; i < COUNT(cases); i++) {
        CU_ASSERT_FATAL(
            plan_kernel_in(avx2, cases[i].desc, CONVT3D_LAYOUT_NDHWC, name, sizeof name));
        const char *want =
            cases[i].w_lanes ? "_transposed_ndhwc__avx2" : "_iclanes_ndhwc__avx2";
        if (!strstr(name, want))
            printf("\n  FAILED: %s (NDHWC, AVX2) ran %s, expected %s", cases[i].desc, name,
                   want);
        CU_ASSERT(strstr(name, want) != NULL);
        convt3d_problem p = parse_problem(cases[i].desc);
        p.layout = CONVT3D_LAYOUT_NDHWC;
        for (int b = 0; b < 2; b++) {
            p.has_bias = b;
            check_on(avx2, &p, 301 + (uint64_t)(2 * i + b), cases[i].desc);
        }
    }
}

/* The W-lane tile on transposed rows takes NDHWC problems whose groups have
 * fewer output channels than a vector and enough multiply-adds for each
 * element it transposes: the reduced kernelbench (8 channels a group) with
 * AVX-512's 16 lanes but not AVX2's 8 (one group fills a vector there), 4
 * channels a group with both (210 multiply-adds a transposed element:
 * more than the grouped lanes' rule leaves to them); not a 1x1x1 kernel (too
 * little work a moved element), and never in the portable kernel (none is
 * built).  One output channel from a few input channels a group (32 groups
 * of 2 -> 1, k3 s1: random_375 of seed 3, 4.4x faster than the
 * channel-lane tile on Zen 4, bench/NOTES.md round 21) takes it with AVX2;
 * with AVX-512 the grouped lanes' two-vector spans take it (round 33: 0.53
 * against 1.7-1.9 ms on Zen 4). */
static void cpu_ndhwc_transposed_choice(void)
{
    const target *cpu = &targets[T_CPU], *avx2 = &targets[T_CPU_AVX2];
    const target *generic = &targets[T_CPU_GENERIC];
    const char *kb = bench_cases[0].desc;
    const char *four = "mb1 ic16 oc16 g4 in3x4x48 k3x5x7 s2x2x2 p1x2x3 op1x1x1";
    const char *pointwise = "mb1 ic16 oc16 g4 in3x4x48 k1x1x1 s1x1x1 p0x0x0 op0x0x0";
    const char *one_out = "mb2 ic64 oc32 g32 in5x23x32 k3x3x3 s1x1x1 p0x0x1 op0x0x0";
    const convt3d_layout nd = CONVT3D_LAYOUT_NDHWC;
    char name[160];
    CU_ASSERT_FATAL(plan_kernel_in(cpu, kb, nd, name, sizeof name));
    if (strstr(name, "__generic")) {
        test_skip("only the generic kernel runs here");
        return;
    }
    if (strstr(name, "__avx512"))
        CU_ASSERT(strstr(name, "_transposed_ndhwc__") != NULL);
    CU_ASSERT_FATAL(plan_kernel_in(cpu, four, nd, name, sizeof name));
    CU_ASSERT(strstr(name, "_transposed_ndhwc__") != NULL);
    CU_ASSERT_FATAL(plan_kernel_in(cpu, pointwise, nd, name, sizeof name));
    CU_ASSERT(strstr(name, "_transposed_ndhwc__") == NULL);
    CU_ASSERT_FATAL(plan_kernel_in(cpu, one_out, nd, name, sizeof name));
    CU_ASSERT(strstr(name, strstr(name, "__avx512") ? "_grouplanes_ndhwc__"
                                                    : "_transposed_ndhwc__") != NULL);
    CU_ASSERT_FATAL(plan_kernel_in(generic, four, nd, name, sizeof name));
    CU_ASSERT(strstr(name, "_transposed_ndhwc__") == NULL);
    if (!skip_target(avx2)) {
        CU_ASSERT_FATAL(plan_kernel_in(avx2, kb, nd, name, sizeof name));
        CU_ASSERT(strstr(name, "_gather_ndhwc__avx2") != NULL);
        CU_ASSERT_FATAL(plan_kernel_in(avx2, four, nd, name, sizeof name));
        CU_ASSERT(strstr(name, "_transposed_ndhwc__avx2") != NULL);
        CU_ASSERT_FATAL(plan_kernel_in(avx2, one_out, nd, name, sizeof name));
        CU_ASSERT(strstr(name, "_transposed_ndhwc__avx2") != NULL);
        avx2_groups_fill_lines(avx2);
    }
}

/* ---- determinism across thread counts ----------------------------------- */

/* Reached through a weak reference so this file needs no OpenMP flags; the
 * library links the OpenMP runtime when it has one. */
extern void omp_set_num_threads(int n) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));

/* The CPU output must be bitwise the same for any thread count: every element
 * is summed by one thread in a fixed order, and the W split falls on the
 * kernel's fixed chunk grid. */
static void cpu_thread_count_invariance(void)
{
    if (!omp_set_num_threads || !omp_get_max_threads) {
        test_skip("the library was built without OpenMP");
        return;
    }
    static const char *const descs[] = {
        "mb1 ic32 oc32 g4 in3x4x48 k3x5x7 s2x2x2 p1x2x3 op1x1x1",
        "mb1 ic3 oc5 g1 in1x1x700 k3x3x5 s1x1x2 p1x1x2 op0x0x1", /* W segments */
        "mb2 ic8 oc13 g1 in3x4x21 k3x3x3 s3x2x1 p1x1x1 op2x1x0",
        "mb1 ic8 oc32 g1 in3x4x40 k3x3x3 s1x1x1 p1x1x1 op0x0x0", /* output-channel tiles */
        "mb1 ic3 oc32 g1 in1x2x150 k1x3x4 s1x2x2 p0x1x2 op0x1x1", /* the same, W stride 2 */
        "mb1 ic20 oc20 g20 in3x4x37 k3x3x3 s2x2x2 p1x1x1 op1x1x1", /* NDHWC depthwise */
        "mb1 ic24 oc24 g12 in3x3x41 k3x3x3 s2x2x2 p1x1x1 op1x1x1", /* NDHWC grouped lanes */
        "mb1 ic5 oc5 g5 in1x1x600 k3x3x3 s1x1x1 p1x1x1 op0x0x0",   /* the same, W segments */
        "mb1 ic40 oc2 g1 in2x3x45 k3x3x3 s2x2x2 p1x1x1 op1x1x1",   /* NDHWC input-channel lanes */
        "mb1 ic19 oc1 g1 in1x1x500 k3x3x3 s1x1x1 p1x1x1 op0x0x0",  /* the same, W segments */
        "mb2 ic12 oc40 g2 in3x4x41 k1x1x1 s2x1x2 p0x0x1 op1x0x1",  /* pointwise */
        "mb1 ic6 oc20 g1 in1x1x700 k1x1x1 s1x1x2 p0x0x0 op0x0x1",  /* the same, W segments */
        /* NDHWC, the W-lane tile on transposed rows: W segments, then W stride 3 */
        "mb1 ic8 oc8 g2 in1x2x400 k3x3x5 s1x1x2 p1x1x2 op0x0x1",
        "mb2 ic16 oc16 g2 in3x5x50 k3x3x3 s2x1x3 p1x1x1 op1x0x2",
        /* NCDHW column GEMM: whole planes, then one plane split into row
         * blocks that each compute the input rows they share */
        "mb1 ic64 oc2 g2 in3x5x20 k3x3x3 s2x2x2 p1x1x1 op1x1x1",
        "mb1 ic32 oc2 g1 in1x9x13 k1x5x3 s1x2x1 p0x2x1 op0x1x0",
    };
    const int saved = omp_get_max_threads();
    const int counts[] = {1, 2, 3, 5, 8, 17, 64};
    for (int i = 0; i < COUNT(descs); i++)
        for (int layout = 0; layout < 2; layout++) {
            convt3d_problem p = parse_problem(descs[i]);
            p.layout = layout ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
            p.has_bias = 1;
            int64_t nx, nw, ny;
            CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(&p, &nx, &nw, &ny), CONVT3D_SUCCESS);
            float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
            float *b = malloc((size_t)p.out_channels * sizeof *b);
            float *first = malloc((size_t)ny * sizeof *first), *y = malloc((size_t)ny * sizeof *y);
            CU_ASSERT_FATAL(x && w && b && first && y);
            rng r = rng_make(test_seed() + (uint64_t)i);
            fill_uniform(&r, x, nx);
            fill_uniform(&r, w, nw);
            fill_uniform(&r, b, p.out_channels);
            const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
            for (int c = 0; c < COUNT(counts); c++)
                for (int again = 0; again < 2; again++) {
                    omp_set_num_threads(counts[c]);
                    float *out = c == 0 && again == 0 ? first : y;
                    poison(out, ny);
                    CU_ASSERT_EQUAL(convt3d_forward(&p, cpu, x, w, b, out), CONVT3D_SUCCESS);
                    if (out != first && memcmp(out, first, (size_t)ny * sizeof *y) != 0) {
                        char desc[512];
                        problem_describe(&p, desc, sizeof desc);
                        printf("\n  FAILED: %d threads differ from 1 thread: %s", counts[c],
                               desc);
                        CU_FAIL("output depends on the thread count");
                    }
                }
            free(x);
            free(w);
            free(b);
            free(first);
            free(y);
        }
    omp_set_num_threads(saved);
}

/* ---- every CPU implementation, forced by name ---------------------------- */

/* Forcing c_name on p: the plan reports c_name, and its result matches the
 * reference (check_backend(), with CONVT3D_IMPLEMENTATION naming it). */
static void check_forced_cpu(const char *name, const convt3d_problem *p, uint64_t seed)
{
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    int64_t nx, nw, ny;
    CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(p, &nx, &nw, &ny), CONVT3D_SUCCESS);
    float *w = calloc((size_t)nw, sizeof *w), *b = calloc((size_t)p->out_channels, sizeof *b);
    CU_ASSERT_FATAL(w && b);
    convt3d_plan_options opt;
    convt3d_plan_options_init(&opt);
    opt.implementation = name;
    convt3d_plan *plan = NULL;
    const convt3d_status st = convt3d_plan_create_ex(&plan, p, cpu, w, b, &opt);
    CU_ASSERT_EQUAL(st, CONVT3D_SUCCESS);
    if (st == CONVT3D_SUCCESS) {
        CU_ASSERT_STRING_EQUAL(convt3d_plan_kernel_name(plan), name);
        convt3d_plan_destroy(plan);
    } else {
        printf("\n  %s applies but forcing it failed: %s", name, convt3d_last_error());
    }
    free(w);
    free(b);
    setenv("CONVT3D_IMPLEMENTATION", name, 1);
    check_result res = check_backend(p, cpu, seed, HOST_POINTERS, TOL);
    unsetenv("CONVT3D_IMPLEMENTATION");
    if (!res.ok)
        printf("\n  [forced %s]", name);
    assert_check(&res, p, seed);
}

/* Forcing name on p, where it does not apply: CONVT3D_ERR_NOT_APPLICABLE
 * and the plan pointer as it was. */
static void check_refused_cpu(const char *name, const convt3d_problem *p)
{
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    int64_t nx, nw, ny;
    CU_ASSERT_EQUAL_FATAL(convt3d_tensor_elems(p, &nx, &nw, &ny), CONVT3D_SUCCESS);
    float *w = calloc((size_t)nw, sizeof *w), *b = calloc((size_t)p->out_channels, sizeof *b);
    CU_ASSERT_FATAL(w && b);
    convt3d_plan_options opt;
    convt3d_plan_options_init(&opt);
    opt.implementation = name;
    static int marker;
    convt3d_plan *const untouched = (convt3d_plan *)(void *)&marker;
    convt3d_plan *plan = untouched;
    const convt3d_status st = convt3d_plan_create_ex(&plan, p, cpu, w, b, &opt);
    CU_ASSERT_EQUAL(st, CONVT3D_ERR_NOT_APPLICABLE);
    CU_ASSERT_PTR_EQUAL(plan, untouched);
    if (st == CONVT3D_SUCCESS && plan != untouched) {
        char desc[256];
        problem_describe(p, desc, sizeof desc);
        printf("\n  %s does not apply but forcing it built a plan: %s", name, desc);
        convt3d_plan_destroy(plan);
    }
    free(w);
    free(b);
}

/* Whether name does not apply here because the CPU lacks its instruction
 * set (its reason says so on a problem every other condition accepts). */
static int cpu_lacks_isa(const char *name)
{
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    for (int layout = 0; layout < 2; layout++) {
        convt3d_problem p = parse_problem("mb1 ic1 oc1 g1 in1x1x4 k1x1x3 s1x1x1 p0x0x1 op0x0x0");
        p.layout = layout ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
        if (convt3d_implementation_applies(name, &p, cpu, NULL) == CONVT3D_ERR_NOT_APPLICABLE &&
            strstr(convt3d_last_error(), "this CPU lacks"))
            return 1;
    }
    return 0;
}

/* For random problems, every CPU implementation of this build: where
 * convt3d_implementation_applies says yes it can be forced and computes the
 * right result, where it says no forcing fails and builds nothing.  Every
 * implementation the machine supports must apply to some problem, so none
 * passes by never running. */
static void cpu_every_implementation_forced(void)
{
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    const int n = convt3d_implementation_count();
    int applied[128] = {0};
    CU_ASSERT_FATAL(n <= COUNT(applied));
    const uint64_t base = test_seed() * 1000003u + 900;
    rng r = rng_make(base);
    const int problems = env_count("CONVT3D_TEST_PROBLEMS", 200) / 4 + 20;
    for (int i = 0; i < problems; i++) {
        convt3d_problem p = random_problem(&r, 1e5, 20000);
        /* the output-channel tile's W conditions, often enough to matter */
        if (i % 2 == 0) {
            p.dilation[2] = 1;
            p.stride[2] = 1 + i % 4 / 2;
            p.kernel[2] = p.stride[2] + i % 3;
            p.padding[2] = p.kernel[2] / 2;
            p.output_padding[2] = p.stride[2] - 1;
            if (convt3d_tensor_elems(&p, &(int64_t){0}, &(int64_t){0}, &(int64_t){0}) !=
                CONVT3D_SUCCESS)
                continue;
        }
        /* kernel 1x1x1, which the pointwise kernels need */
        if (i % 4 == 3) {
            convt3d_problem q = p;
            for (int d = 0; d < 3; d++) {
                q.kernel[d] = 1;
                q.padding[d] = q.padding[d] % 2;
                q.output_padding[d] = q.stride[d] - 1;
            }
            if (convt3d_tensor_elems(&q, &(int64_t){0}, &(int64_t){0}, &(int64_t){0}) ==
                CONVT3D_SUCCESS)
                p = q;
        }
        /* depthwise, which the NDHWC depthwise tile needs, now and then */
        if (i % 4 == 1) {
            p.out_channels = p.in_channels;
            p.groups = p.in_channels;
        }
        for (int k = 0; k < n; k++) {
            if (convt3d_implementation_device(k) != CONVT3D_DEVICE_CPU)
                continue;
            const char *name = convt3d_implementation_name(k);
            if (convt3d_implementation_applies(name, &p, cpu, NULL) == CONVT3D_SUCCESS) {
                applied[k]++;
                check_forced_cpu(name, &p, base + (uint64_t)(i * 64 + k));
            } else {
                check_refused_cpu(name, &p);
            }
        }
    }
    for (int k = 0; k < n; k++) {
        const char *name = convt3d_implementation_name(k);
        if (convt3d_implementation_device(k) != CONVT3D_DEVICE_CPU || applied[k])
            continue;
        /* An ISA this CPU lacks applies nowhere; anything else must have run. */
        if (cpu_lacks_isa(name))
            printf("\n  skipped %s: %s ", name, convt3d_last_error());
        else {
            printf("\n  FAILED: %s applied to none of %d random problems", name, problems);
            CU_FAIL("an implementation never ran");
        }
    }
}

/* The whole-row NDHWC tiles (grouped lanes, depthwise) on pointwise rows,
 * which take every channel block at a position before the next positions
 * (cpu/ndhwc_rows.h) and stream y where its rows are whole aligned
 * vectors: forced in each build, streaming forced on and off, y aligned and
 * 12 bytes in, against the reference with and without bias.  C_out/G 8
 * (half an AVX-512 vector), 4 and 1, C_out whole vectors or not, W strides
 * 1-3 (outputs no input reaches), D padding that crops rows, and several
 * channel blocks a position. */
static void cpu_ndhwc_rows_pointwise(void)
{
    static const char *const cases[] = {
        "mb2 ic256 oc256 g32 in3x4x13 k1x1x1 s1x1x1 p0x0x0 op0x0x0",
        "mb1 ic64 oc128 g16 in2x3x9 k1x1x1 s2x2x2 p0x0x0 op1x1x1",
        "mb1 ic48 oc24 g8 in2x3x11 k1x1x1 s1x2x3 p0x1x1 op0x1x2",
        "mb1 ic64 oc64 g64 in2x3x21 k1x1x1 s1x1x2 p0x0x1 op0x0x1",
        "mb1 ic16 oc32 g16 in3x2x5 k1x1x1 s2x1x1 p1x0x0 op1x0x0",
        "mb1 ic40 oc40 g40 in2x2x1 k1x1x1 s1x2x3 p0x0x0 op0x1x2",
    };
    static const char *const names[] = {
        "cpu/f32_phase_grouplanes_ndhwc__avx512", "cpu/f32_phase_grouplanes_ndhwc__avx2",
        "cpu/f32_phase_depthwise_ndhwc__avx512", "cpu/f32_phase_depthwise_ndhwc__avx2"};
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    int ran = 0;
    for (int k = 0; k < COUNT(names); k++) {
        if (cpu_lacks_isa(names[k]))
            continue;
        setenv("CONVT3D_IMPLEMENTATION", names[k], 1);
        for (int i = 0; i < COUNT(cases); i++) {
            convt3d_problem p = parse_problem(cases[i]);
            p.layout = CONVT3D_LAYOUT_NDHWC;
            if (convt3d_implementation_applies(names[k], &p, cpu, NULL) != CONVT3D_SUCCESS)
                continue; /* depthwise: only the cases of one channel a group */
            for (int v = 0; v < 4; v++) {
                setenv("CONVT3D_CPU_STREAM", v & 1 ? "1" : "0", 1);
                p.has_bias = v >> 1;
                const int64_t off = v == 1 ? 3 : 0; /* streaming with y 12 bytes in too */
                const uint64_t seed = test_seed() + 900 + (uint64_t)(40 * k + 4 * i + v);
                check_result res = check_cpu_placed(&p, seed, off);
                if (!res.ok)
                    printf("\n  [%s, stream %d] %s: %s", names[k], v & 1, cases[i], res.message);
                assert_check(&res, &p, seed);
                ran++;
            }
            /* streaming into an aligned y without bias (v = 3 above streams
             * into one with bias, v = 1 into a misaligned one) */
            setenv("CONVT3D_CPU_STREAM", "1", 1);
            p.has_bias = 0;
            check_result res = check_cpu_placed(&p, test_seed() + 990 + (uint64_t)i, 0);
            if (!res.ok)
                printf("\n  [%s, stream, aligned] %s: %s", names[k], cases[i], res.message);
            assert_check(&res, &p, test_seed() + 990 + (uint64_t)i);
        }
        unsetenv("CONVT3D_IMPLEMENTATION");
        unsetenv("CONVT3D_CPU_STREAM");
    }
    if (!ran)
        test_skip("no whole-row NDHWC kernel is built for this CPU");
}

/* The position-lane NDHWC tile (cpu/poslanes.h), forced in each build that
 * has it, against the reference with and without bias: each lane width
 * (2, 4 and 8 lanes a position), one run a vector (W stride 1, C_out = the
 * width) and a store a position (C_out/G below the width, W strides 2-3),
 * W dilation, rows shorter than a vector (a span cut on both sides), a
 * row longer than the largest tile, several groups whose span holds the
 * other group's channels, and one output a W phase (no output stride);
 * AVX2 (8 lanes) takes the cases of at most 4 output channels a group. */
static void cpu_ndhwc_poslanes_forced(void)
{
    static const char *const cases[] = {
        "mb2 ic2 oc4 g1 in3x4x26 k2x3x5 s1x2x1 p0x1x2 op0x1x0",
        "mb1 ic2 oc3 g1 in3x3x27 k2x2x2 s2x2x2 p1x1x1 op1x1x1",
        "mb1 ic1 oc2 g1 in2x3x17 k3x3x5 s2x1x2 p1x1x2 op1x0x1 l1x1x2",
        "mb1 ic8 oc8 g1 in2x3x11 k1x2x3 s1x1x3 p0x0x1 op0x0x2",
        "mb1 ic3 oc1 g1 in3x3x5 k3x3x4 s1x1x1 p0x0x0 op0x0x0",
        "mb1 ic1 oc8 g1 in1x2x100 k1x2x3 s1x1x1 p0x0x1 op0x0x0",
        "mb1 ic4 oc4 g2 in2x3x19 k2x2x3 s1x1x2 p0x0x1 op0x0x1",
        "mb1 ic2 oc4 g1 in2x2x1 k2x2x2 s2x2x3 p0x0x0 op0x0x0",
        "mb3 ic1 oc5 g1 in2x2x3 k2x1x5 s1x1x1 p0x0x3 op0x0x0",
    };
    static const char *const names[] = {"cpu/f32_phase_poslanes_ndhwc__avx512",
                                        "cpu/f32_phase_poslanes_ndhwc__avx2"};
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    int ran = 0;
    for (int k = 0; k < COUNT(names); k++) {
        if (cpu_lacks_isa(names[k]))
            continue;
        for (int i = 0; i < COUNT(cases); i++) {
            convt3d_problem p = parse_problem(cases[i]);
            p.layout = CONVT3D_LAYOUT_NDHWC;
            if (convt3d_implementation_applies(names[k], &p, cpu, NULL) != CONVT3D_SUCCESS) {
                if (k == 1 && p.out_channels / p.groups > 4)
                    continue; /* AVX2's 8 lanes hold at most 2 positions of 4 */
                printf("\n  %s does not apply to %s: %s", names[k], cases[i],
                       convt3d_last_error());
                CU_FAIL("a position-lane case it should take");
                continue;
            }
            for (int b = 0; b < 2; b++) {
                p.has_bias = b;
                check_forced_cpu(names[k], &p, 501 + (uint64_t)(4 * i + 2 * k + b));
                ran++;
            }
        }
    }
    if (!ran)
        test_skip("no position-lane kernel is built for this CPU");
}

/* The grouped-lanes tile whose input spans take two vectors (AVX-512's
 * two-vector permute), forced, against the reference with and without
 * bias: 16 groups of 2 -> 1 channels (a full span of 32), 4 groups of 8 -> 3
 * (vectors that start inside a group), C_out not a whole number of
 * vectors (a masked last vector whose span ends in its low half), W
 * borders, W stride 3 and dilation, and one output a W phase; the AVX2
 * and portable builds refuse it (spans of one vector only). */
static void cpu_ndhwc_grouplanes_two_vector_spans(void)
{
    static const char *const cases[] = {
        "mb2 ic32 oc16 g16 in3x3x21 k1x1x1 s2x2x2 p0x0x0 op1x1x1",
        "mb1 ic32 oc16 g16 in3x4x19 k2x3x3 s1x2x1 p0x1x1 op0x1x0",
        "mb1 ic32 oc12 g4 in2x5x13 k1x5x3 s1x2x1 p0x1x0 op0x1x0",
        "mb1 ic40 oc20 g10 in2x3x17 k2x2x4 s2x1x3 p1x0x2 op1x0x2 l1x1x2",
        "mb1 ic64 oc32 g16 in2x2x9 k3x3x3 s2x2x2 p1x1x1 op1x1x1",
        "mb1 ic28 oc16 g4 in2x3x1 k2x2x3 s1x1x2 p0x0x1 op0x0x0",
    };
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    const char *avx512 = "cpu/f32_phase_grouplanes_ndhwc__avx512";
    for (int i = 0; i < COUNT(cases); i++) {
        convt3d_problem p = parse_problem(cases[i]);
        p.layout = CONVT3D_LAYOUT_NDHWC;
        CU_ASSERT(convt3d_implementation_applies("cpu/f32_phase_grouplanes_ndhwc__generic", &p,
                                                 cpu, NULL) != CONVT3D_SUCCESS);
    }
    if (cpu_lacks_isa(avx512)) {
        test_skip("no AVX-512 grouped-lanes kernel runs on this CPU");
        return;
    }
    for (int i = 0; i < COUNT(cases); i++) {
        convt3d_problem p = parse_problem(cases[i]);
        p.layout = CONVT3D_LAYOUT_NDHWC;
        if (convt3d_implementation_applies(avx512, &p, cpu, NULL) != CONVT3D_SUCCESS) {
            printf("\n  %s does not apply to %s: %s", avx512, cases[i], convt3d_last_error());
            CU_FAIL("a two-vector span case it should take");
            continue;
        }
        for (int b = 0; b < 2; b++) {
            p.has_bias = b;
            check_forced_cpu(avx512, &p, 701 + (uint64_t)(2 * i + b));
        }
    }
}

/* Every CPU implementation that applies to p, forced, against the
 * reference (implementation k on seed + k); returns how many ran. */
static int check_every_forced_cpu(const convt3d_problem *p, uint64_t seed)
{
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    const int n = convt3d_implementation_count();
    int ran = 0;
    for (int k = 0; k < n; k++) {
        const char *name = convt3d_implementation_name(k);
        if (convt3d_implementation_device(k) != CONVT3D_DEVICE_CPU ||
            convt3d_implementation_applies(name, p, cpu, NULL) != CONVT3D_SUCCESS)
            continue;
        check_forced_cpu(name, p, seed + (uint64_t)k);
        ran++;
    }
    return ran;
}

/* Rows no input reaches (a kernel shorter than its stride in D or H, or
 * dilated past it) are filled by the driver with the bias or 0, not by the
 * kernels (cpu_omp.c, fill_empty_row; in NCDHW for the W-lane tile with
 * C_out/G <= 4): every CPU implementation that applies, forced, both
 * layouts, with and without bias; one group and several (NCDHW: each item
 * its group's rows; NDHWC: group 0's item every group's channels),
 * depthwise, a long W that the work split cuts into segments, and output
 * padding whose last rows are empty. */
static void cpu_empty_rows_filled(void)
{
    static const char *const cases[] = {
        "mb2 ic2 oc20 g1 in3x4x9 k1x1x2 s2x2x2 p0x0x0 op1x1x0",
        "mb1 ic6 oc9 g3 in3x3x7 k1x2x3 s3x3x2 p0x0x1 op2x1x1",
        "mb1 ic8 oc8 g8 in2x3x5 k1x1x3 s2x3x1 p0x0x1 op1x2x0",
        "mb1 ic4 oc40 g2 in2x2x300 k1x1x1 s2x2x1 p0x0x0 op1x1x0",
        "mb1 ic16 oc16 g1 in2x2x6 k2x1x3 s3x2x2 p0x0x1 op0x1x1 l2x1x1",
        "mb1 ic3 oc70 g1 in4x3x11 k1x2x1 s2x3x2 p0x0x0 op1x0x1",
        "mb2 ic5 oc3 g1 in3x4x10 k1x2x3 s2x3x2 p0x1x1 op1x0x1",
    };
    int ran = 0;
    for (int i = 0; i < COUNT(cases); i++)
        for (int layout = 0; layout < 2; layout++)
            for (int b = 0; b < 2; b++) {
                convt3d_problem p = parse_problem(cases[i]);
                p.layout = layout ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
                p.has_bias = b;
                ran += check_every_forced_cpu(&p, 1301 + (uint64_t)(((i * 2 + layout) * 2 + b) * 64));
            }
    /* the portable build applies to every case in both layouts at least */
    CU_ASSERT(ran >= COUNT(cases) * 4);
}

/* The GEMM kernels' spans of positions (cpu/pointwise.h pw_spans_of: tiles
 * of 4 vectors, the last two sharing the rest) and the driver's larger
 * blocks for them (cpu_plan's block_positions): planes of 17, 65, 81,
 * 100, 120, 129, 153, 200 and 660 positions, every CPU implementation that
 * applies forced, at 1, 2 and 3 threads (the block rows differ). */
static void cpu_gemm_spans(void)
{
    static const char *const cases[] = {
        "mb1 ic24 oc20 g1 in3x1x17 k1x1x1 s1x1x1 p0x0x0 op0x0x0",
        "mb2 ic16 oc9 g1 in2x5x13 k1x1x1 s1x1x1 p0x0x0 op0x0x0",
        "mb1 ic40 oc24 g1 in4x9x9 k1x1x1 s1x1x1 p0x0x0 op0x0x0",
        "mb1 ic8 oc13 g1 in3x10x10 k1x1x1 s1x2x1 p0x0x0 op0x1x0",
        "mb1 ic12 oc7 g1 in2x3x43 k1x1x1 s2x1x2 p0x0x0 op1x0x1",
        "mb1 ic20 oc30 g2 in2x8x25 k1x1x1 s1x1x1 p0x1x0 op0x0x0",
        "mb1 ic48 oc2 g1 in3x9x9 k2x3x2 s2x2x2 p0x1x0 op1x0x1",
        "mb1 ic32 oc3 g1 in2x5x13 k1x2x2 s1x2x2 p0x0x1 op0x1x0",
        /* blocks on consecutive outputs (k1 s1 p0) with few channels: their
         * whole tiles in one run (pw_ncdhw_run), then the rest */
        "mb2 ic6 oc4 g2 in3x9x17 k1x1x1 s1x1x1 p0x0x0 op0x0x0",
        "mb1 ic5 oc3 g1 in2x8x15 k1x1x1 s1x1x1 p0x0x0 op0x0x0",
        "mb1 ic2 oc1 g1 in2x20x33 k1x1x1 s1x1x1 p0x0x0 op0x0x0",
    };
    const int counts[] = {1, 2, 3};
    const int have_omp = omp_set_num_threads && omp_get_max_threads;
    const int saved = have_omp ? omp_get_max_threads() : 1;
    int ran = 0;
    for (int t = 0; t < (have_omp ? COUNT(counts) : 1); t++) {
        if (have_omp)
            omp_set_num_threads(counts[t]);
        for (int i = 0; i < COUNT(cases); i++)
            for (int b = 0; b < 2; b++) {
                convt3d_problem p = parse_problem(cases[i]);
                p.has_bias = b;
                ran += check_every_forced_cpu(&p, 1701 + (uint64_t)(((t * 16 + i) * 2 + b) * 64));
            }
    }
    if (have_omp)
        omp_set_num_threads(saved);
    /* the portable build applies to every case at least */
    CU_ASSERT(ran >= COUNT(cases) * 2);
}

/* ---- cache sizes and the blocking derived from them ---------------------- */

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* One fake sysfs cache entry root/index<i> {level, type, size}. */
static void fake_cache_index(const char *root, int i, const char *level, const char *type,
                             const char *size)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/index%d", root, i);
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
    write_text(dir, "level", level);
    write_text(dir, "type", type);
    if (size)
        write_text(dir, "size", size);
}

static void remove_fake_cache(const char *root, int n)
{
    static const char *names[] = {"level", "type", "size"};
    for (int i = 0; i < n; i++) {
        char path[600];
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "%s/index%d/%s", root, i, names[k]);
            unlink(path);
        }
        snprintf(path, sizeof path, "%s/index%d", root, i);
        rmdir(path);
    }
    rmdir(root);
}

/* The sysfs parser picks the data caches of each level (not the L1
 * instruction cache listed first), units K and M; a tree without the
 * answer (or none at all) gives the documented fallback. */
static void cpu_cache_size_detection(void)
{
    CU_ASSERT_EQUAL(cpu_cache_parse_size("48K\n"), 48 << 10);
    CU_ASSERT_EQUAL(cpu_cache_parse_size("1024K"), 1 << 20);
    CU_ASSERT_EQUAL(cpu_cache_parse_size("2M"), 2 << 20);
    CU_ASSERT_EQUAL(cpu_cache_parse_size("65536"), 65536);
    CU_ASSERT_EQUAL(cpu_cache_parse_size(""), -1);
    CU_ASSERT_EQUAL(cpu_cache_parse_size("0"), -1);
    CU_ASSERT_EQUAL(cpu_cache_parse_size("-4K"), -1);
    CU_ASSERT_EQUAL(cpu_cache_parse_size("12Q"), -1);
    CU_ASSERT_EQUAL(cpu_cache_parse_size(NULL), -1);

    char root[] = "/tmp/convt3d-cacheXXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
    fake_cache_index(root, 0, "1\n", "Instruction\n", "32K\n");
    fake_cache_index(root, 1, "1\n", "Data\n", "80K\n");
    fake_cache_index(root, 2, "2\n", "Unified\n", "3M\n");
    fake_cache_index(root, 3, "3\n", "Unified\n", "32768K\n");
    cpu_cache_sizes c = cpu_cache_sizes_detect(root, 0);
    CU_ASSERT_EQUAL(c.l1d, 80 << 10);
    CU_ASSERT_EQUAL(c.l2, 3 << 20);
    remove_fake_cache(root, 4);

    char bare[] = "/tmp/convt3d-cacheXXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(bare));
    fake_cache_index(bare, 0, "1\n", "Instruction\n", "32K\n");
    fake_cache_index(bare, 1, "2\n", "Unified\n", NULL); /* no size file */
    c = cpu_cache_sizes_detect(bare, 0);
    CU_ASSERT_EQUAL(c.l1d, CPU_CACHE_L1D_FALLBACK);
    CU_ASSERT_EQUAL(c.l2, CPU_CACHE_L2_FALLBACK);
    remove_fake_cache(bare, 2);
    c = cpu_cache_sizes_detect("/nonexistent/convt3d", 0);
    CU_ASSERT(c.l1d == CPU_CACHE_L1D_FALLBACK && c.l2 == CPU_CACHE_L2_FALLBACK);

    /* this machine: something sane, whatever the source */
    c = cpu_cache_sizes_detect("/sys/devices/system/cpu/cpu0/cache", 1);
    CU_ASSERT(c.l1d >= 4096 && c.l1d <= (64 << 20) && c.l2 >= c.l1d);
    printf("\n  this machine: L1d %lld KiB, L2 %lld KiB", (long long)(c.l1d >> 10),
           (long long)(c.l2 >> 10));
}

/* The budgets follow the sizes (the rule of tiling.h), the override
 * reaches them, and the plan's choice responds: the NCDHW input-channel
 * tile of a problem whose transposed rows take 36 KiB is taken with this
 * machine's L2 and passed over with a 16 KiB one. */
static void cpu_cache_budget_rule(void)
{
    const cpu_cache_budget zen3 = cpu_cache_budget_of(32 << 10, 512 << 10);
    const cpu_cache_budget zen5 = cpu_cache_budget_of(48 << 10, 1 << 20);
    CU_ASSERT_EQUAL(zen5.pack_bytes, 1 << 20);
    CU_ASSERT_EQUAL(zen5.icl_rows_bytes, 2 << 20);
    CU_ASSERT_EQUAL(zen5.prep_bytes, 256 << 10);
    CU_ASSERT_EQUAL(zen5.colg_bytes, 512 << 10);
    CU_ASSERT(zen3.pack_bytes < zen5.pack_bytes && zen3.icl_rows_bytes < zen5.icl_rows_bytes &&
              zen3.prep_bytes < zen5.prep_bytes && zen3.colg_bytes < zen5.colg_bytes);

    const char *old_l1 = getenv("CONVT3D_CPU_L1D"), *old_l2 = getenv("CONVT3D_CPU_L2");
    char *keep_l1 = old_l1 ? strdup(old_l1) : NULL, *keep_l2 = old_l2 ? strdup(old_l2) : NULL;
    setenv("CONVT3D_CPU_L1D", "65536", 1);
    setenv("CONVT3D_CPU_L2", "262144", 1);
    const cpu_cache_budget b = cpu_cache_budget_here();
    CU_ASSERT_EQUAL(b.prep_bytes, 64 << 10);
    CU_ASSERT_EQUAL(b.pack_bytes, 256 << 10);
    setenv("CONVT3D_CPU_L2", "junk", 1); /* ignored: the machine's size stays */
    const cpu_cache_sizes mine = cpu_cache_sizes_get();
    CU_ASSERT(mine.l1d == 65536 && mine.l2 != 0);

    /* the input-channel-lane tile, which the column GEMM would take first */
    const target no_colg = {"cpu without the column GEMM", {CONVT3D_DEVICE_CPU, 0}, HOST_POINTERS,
                            {{"CONVT3D_CPU_COLG", "0"}}};
    const target *cpu = &no_colg;
    const char *fewout = "mb1 ic64 oc2 g1 in3x4x8 k3x3x5 s1x3x2 p1x0x2 op0x0x0";
    char name[160];
    unsetenv("CONVT3D_CPU_L1D");
    unsetenv("CONVT3D_CPU_L2");
    CU_ASSERT_FATAL(plan_kernel_on(cpu, fewout, name, sizeof name));
    if (strstr(name, "__generic")) {
        test_skip("only the generic kernel runs here");
    } else {
        CU_ASSERT(strstr(name, "_iclanes_ncdhw__") != NULL);
        setenv("CONVT3D_CPU_L2", "16384", 1);
        CU_ASSERT_FATAL(plan_kernel_on(cpu, fewout, name, sizeof name));
        /* a gather tile: the W-lane one, or with AVX2 the output-channel
         * one (8 positions a W phase: ocl_rows_short) */
        CU_ASSERT(strstr(name, "_gather_ncdhw") != NULL);
    }
    unsetenv("CONVT3D_CPU_L2");
    if (keep_l1)
        setenv("CONVT3D_CPU_L1D", keep_l1, 1);
    if (keep_l2)
        setenv("CONVT3D_CPU_L2", keep_l2, 1);
    free(keep_l1);
    free(keep_l2);
}

/* ---- the CPU tiling policy, without the kernels ------------------------- */

/* The policy over a 16-lane description (the AVX-512 tile maxima) gives the
 * bench shapes (NCDHW) the tilings the kernels were tuned with: these are
 * the plans of the build before the policy left the kernel files. */
static void cpu_tiling_policy(void)
{
    const cpu_tile_limits lim = {16, 4, {16, 12, 8, 6}, 2, {16, 11}, 4, {16, 12, 8, 6}, 32};
    CU_ASSERT_EQUAL(cpu_even_block(10, 4), 4);
    CU_ASSERT_EQUAL(cpu_even_block(8, 3), 3);
    CU_ASSERT_EQUAL(cpu_ocl_positions(32, 16, 2), 16);
    CU_ASSERT_EQUAL(cpu_ocl_positions(10, 11, 2), 10);
    struct {
        const char *desc;
        int ocl; /* expected verdict of the output-channel tile's cost rule */
        cpu_tiling w_lane, oc;
    } cases[] = {
        /* kernelbench: kW = 7 has no output-channel tile */
        {"mb8 ic32 oc32 g4 in12x24x48 k3x5x7 s2x2x2 p1x2x3 op1x1x1", -1, {3, 8, 48, 8}, {0}},
        /* unet_up_k2s2: kW = stride against a W-lane tile of 4 vectors */
        {"mb2 ic128 oc64 g1 in32x64x64 k2x2x2 s2x2x2 p0x0x0 op0x0x0", 0, {4, 6, 64, 6},
         {16, 1, 8, 16}},
        {"mb4 ic64 oc32 g1 in16x32x32 k4x4x4 s2x2x2 p1x1x1 op0x0x0", 1, {2, 11, 32, 11},
         {16, 1, 8, 16}},
        {"mb1 ic256 oc128 g1 in8x16x16 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 1, {1, 16, 16, 16},
         {16, 1, 8, 16}},
        /* depthwise: one channel a group would leave 15 of 16 lanes idle */
        {"mb2 ic64 oc64 g64 in16x32x32 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 0, {2, 1, 32, 1},
         {16, 1, 8, 16}},
        {"mb2 ic32 oc32 g1 in32x32x32 k3x3x3 s1x1x1 p1x1x1 op0x0x0", 1, {2, 11, 32, 11},
         {16, 1, 16, 16}},
    };
    for (int i = 0; i < COUNT(cases); i++) {
        convt3d_shape s;
        const convt3d_problem p = parse_problem(cases[i].desc);
        CU_ASSERT_EQUAL_FATAL(convt3d_shape_from_problem(&p, &s), CONVT3D_SUCCESS);
        const cpu_tiling w = cpu_tiling_ncdhw(&s, &lim);
        CU_ASSERT(w.tile_a == cases[i].w_lane.tile_a && w.tile_b == cases[i].w_lane.tile_b &&
                  w.chunk == cases[i].w_lane.chunk && w.w_block == cases[i].w_lane.w_block);
        if (cases[i].ocl < 0)
            continue;
        char why[256] = "";
        CU_ASSERT_EQUAL(cpu_ocl_worthwhile(&s, &lim, why, sizeof why), cases[i].ocl);
        CU_ASSERT(cases[i].ocl || why[0]);
        const cpu_tiling o = cpu_tiling_ncdhw_oc(&s, &lim);
        CU_ASSERT(o.tile_a == cases[i].oc.tile_a && o.tile_b == cases[i].oc.tile_b &&
                  o.chunk == cases[i].oc.chunk && o.w_block == cases[i].oc.w_block);
        if (!(o.tile_a == cases[i].oc.tile_a && o.tile_b == cases[i].oc.tile_b &&
              w.tile_a == cases[i].w_lane.tile_a && w.tile_b == cases[i].w_lane.tile_b))
            printf("\n  %s: W-lane %d x %d chunk %lld, oc %d x %d chunk %lld", cases[i].desc,
                   w.tile_a, w.tile_b, (long long)w.chunk, o.tile_a, o.tile_b,
                   (long long)o.chunk);
    }
    /* The transposed NDHWC rule on the same shapes: kernelbench only (8
     * channels a group under 16 lanes), and not with 8 lanes; the others
     * fill channel vectors, or (depthwise) carry too little work a moved
     * element. */
    cpu_tile_limits lim8 = lim;
    lim8.lanes = 8;
    for (int i = 0; i < COUNT(cases); i++) {
        convt3d_shape s;
        const convt3d_problem p = parse_problem(cases[i].desc);
        CU_ASSERT_EQUAL_FATAL(convt3d_shape_from_problem(&p, &s), CONVT3D_SUCCESS);
        char why[256] = "";
        CU_ASSERT_EQUAL(cpu_ndhwc_tr_worthwhile(&s, &lim, why, sizeof why), i == 0);
        CU_ASSERT(i == 0 || why[0]);
        CU_ASSERT_EQUAL(cpu_ndhwc_tr_worthwhile(&s, &lim8, why, sizeof why), 0);
        cpu_tr_rows r;
        CU_ASSERT(cpu_ndhwc_tr_rows(&s, cpu_tiling_ncdhw(&s, &lim).chunk, &r));
        CU_ASSERT(r.slots >= 1 && r.row >= s.in[2] + r.left && r.row % 16 == 0);
    }
    /* Short W phases go to the output-channel tile whatever its lanes
     * waste: up to 12 positions with 8 lanes (round 40, Zen 3), up to 7/16
     * of a vector with 16 (9/16 from at most 3 input channels); one
     * channel a group otherwise wastes 15 of 16 or 7 of 8 of its lanes. */
    const struct {
        const char *desc;
        int ocl16, ocl8;
    } rows[] = {
        {"mb1 ic1 oc1 g1 in4x4x12 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 0, 1}, /* 12 a phase */
        {"mb1 ic1 oc1 g1 in4x4x13 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 0, 0}, /* 13 */
        {"mb1 ic1 oc1 g1 in4x4x4 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 1, 1},  /* 4 */
    };
    for (int i = 0; i < COUNT(rows); i++) {
        convt3d_shape s;
        const convt3d_problem p = parse_problem(rows[i].desc);
        CU_ASSERT_EQUAL_FATAL(convt3d_shape_from_problem(&p, &s), CONVT3D_SUCCESS);
        char why[256] = "";
        CU_ASSERT_EQUAL(cpu_ocl_worthwhile(&s, &lim, why, sizeof why), rows[i].ocl16);
        CU_ASSERT_EQUAL(cpu_ocl_worthwhile(&s, &lim8, why, sizeof why), rows[i].ocl8);
    }
    /* The NDHWC gather tile under the AVX2 description (8 lanes, 16
     * registers): channel blocks of up to 4 vectors, split evenly, then the
     * positions the registers leave (3 x 4: 12 accumulators, 3 broadcasts
     * and a weight vector).  Round 41 (Zen 3): 4 vectors as one block of 4
     * instead of two of 2, 8 as 4 + 4 instead of 3 + 3 + 2. */
    const cpu_tile_limits avx2 = {8, 3, {12, 6, 4, 0}, 1, {12, 0}, 4, {12, 6, 4, 3}, 16};
    const struct {
        const char *desc;
        int pos, vecs;
    } gather[] = {
        {"mb2 ic32 oc32 g1 in32x32x32 k3x3x3 s1x1x1 p1x1x1 op0x0x0", 3, 4},   /* k3s1p1 */
        {"mb1 ic256 oc128 g1 in8x16x16 k3x3x3 s2x2x2 p1x1x1 op1x1x1", 3, 4}, /* wide: 4 x 4 */
        {"mb1 ic8 oc64 g1 in8x8x8 k3x3x3 s1x1x1 p1x1x1 op0x0x0", 3, 4},      /* 8: 4 + 4 */
        {"mb1 ic8 oc40 g1 in8x8x8 k3x3x3 s1x1x1 p1x1x1 op0x0x0", 4, 3},      /* 5: 3 + 2 */
        {"mb1 ic8 oc24 g1 in8x8x8 k3x3x3 s1x1x1 p1x1x1 op0x0x0", 4, 3},
        {"mb1 ic8 oc16 g1 in8x8x8 k3x3x3 s1x1x1 p1x1x1 op0x0x0", 6, 2},
        {"mb1 ic8 oc8 g1 in8x8x3 k3x3x3 s1x1x1 p1x1x1 op0x0x0", 3, 1},       /* 3 a row */
    };
    for (int i = 0; i < COUNT(gather); i++) {
        convt3d_shape s;
        const convt3d_problem p = parse_problem(gather[i].desc);
        CU_ASSERT_EQUAL_FATAL(convt3d_shape_from_problem(&p, &s), CONVT3D_SUCCESS);
        const cpu_tiling t = cpu_tiling_ndhwc(&s, &avx2);
        CU_ASSERT(t.tile_a == gather[i].pos && t.tile_b == gather[i].vecs);
        if (t.tile_a != gather[i].pos || t.tile_b != gather[i].vecs)
            printf("\n  %s: NDHWC gather %d x %d", gather[i].desc, t.tile_a, t.tile_b);
        /* the tile fits the registers, one way or the other (phase_tile.h) */
        CU_ASSERT(t.tile_a * t.tile_b + (t.tile_a < t.tile_b ? t.tile_a : t.tile_b) + 1 <=
                  avx2.vector_regs);
    }
#if CONVT3D_HAVE_CPU_AVX2
    /* the description above is the AVX2 build's (cpu/phase_avx2.c) */
    const cpu_tile_limits *built = &convt3d_cpu_isa_avx2.limits;
    CU_ASSERT(built->lanes == avx2.lanes && built->ndhwc_maxv == avx2.ndhwc_maxv &&
              built->vector_regs == avx2.vector_regs);
    for (int v = 0; v < avx2.ndhwc_maxv; v++)
        CU_ASSERT_EQUAL(built->ndhwc_pos_max[v], avx2.ndhwc_pos_max[v]);
#endif
}

void register_backend_tests(void)
{
    static const test_entry tests[] = {
        {"cpu: every registry implementation forced, vs reference", cpu_registry},
        {"cpu: random problems vs reference", random_T_CPU},
        {"cpu: edge cases", edges_T_CPU},
        {"cpu: bench shapes (reduced)", bench_T_CPU},
        {"cpu avx2 kernel: random problems", random_T_CPU_AVX2},
        {"cpu avx2 kernel: edge cases", edges_T_CPU_AVX2},
        {"cpu avx2 kernel: bench shapes (reduced)", bench_T_CPU_AVX2},
        {"cpu generic kernel: random problems", random_T_CPU_GENERIC},
        {"cpu generic kernel: edge cases", edges_T_CPU_GENERIC},
        {"cpu generic kernel: bench shapes (reduced)", bench_T_CPU_GENERIC},
        {"cpu streaming stores: random problems", random_T_CPU_STREAM},
        {"cpu streaming stores: edge cases", edges_T_CPU_STREAM},
        {"cpu streaming stores: bench shapes (reduced)", bench_T_CPU_STREAM},
        {"cpu avx2 kernel, streaming stores, packed rows: random problems", random_T_CPU_AVX2_STREAM},
        {"cpu avx2 kernel, streaming stores, packed rows: edge cases", edges_T_CPU_AVX2_STREAM},
        {"cpu avx2 kernel, streaming stores, packed rows: bench shapes (reduced)",
         bench_T_CPU_AVX2_STREAM},
        {"cpu, input rows packed: random problems", random_T_CPU_PACK},
        {"cpu, input rows packed: edge cases", edges_T_CPU_PACK},
        {"cpu, input rows packed: bench shapes (reduced)", bench_T_CPU_PACK},
        {"cpu, output-channel tiles: random problems", random_T_CPU_OC_LANES},
        {"cpu, output-channel tiles: edge cases", edges_T_CPU_OC_LANES},
        {"cpu, output-channel tiles: bench shapes (reduced)", bench_T_CPU_OC_LANES},
        {"cpu avx2 kernel, output-channel tiles: random problems", random_T_CPU_AVX2_OC_LANES},
        {"cpu avx2 kernel, output-channel tiles: edge cases", edges_T_CPU_AVX2_OC_LANES},
        {"cpu avx2 kernel, output-channel tiles: bench shapes (reduced)",
         bench_T_CPU_AVX2_OC_LANES},
        {"cpu, column GEMM wherever it applies, 16 KiB L2: random problems", random_T_CPU_COLG},
        {"cpu, column GEMM wherever it applies, 16 KiB L2: edge cases", edges_T_CPU_COLG},
        {"cpu, column GEMM wherever it applies, 16 KiB L2: bench shapes (reduced)", bench_T_CPU_COLG},
        {"cpu streaming stores: 64-byte-aligned and offset outputs", cpu_streaming_placement},
        {"cpu: kernelbench at full size", kernelbench_cpu},
        {"cpu: the NCDHW tile chosen, and forced", cpu_lanes_choice},
        {"cpu: the column GEMM chosen for few output and many input channels", cpu_colg_choice},
        {"cpu: output independent of the thread count", cpu_thread_count_invariance},
        {"cpu: the NDHWC kernel chosen for grouped and depthwise problems", cpu_ndhwc_choice},
        {"cpu: the W-lane tile on transposed NDHWC rows chosen", cpu_ndhwc_transposed_choice},
        {"cpu: the position-lane NDHWC tile forced, vs reference", cpu_ndhwc_poslanes_forced},
        {"cpu: the grouped-lanes tile with two-vector spans forced, vs reference",
         cpu_ndhwc_grouplanes_two_vector_spans},
        {"cpu: every implementation forced where it applies, refused elsewhere",
         cpu_every_implementation_forced},
        {"cpu: rows no input reaches, every implementation forced", cpu_empty_rows_filled},
        {"cpu: grouped-lane and depthwise NDHWC tiles on pointwise rows, streamed and not",
         cpu_ndhwc_rows_pointwise},
        {"cpu: GEMM spans and blocks of every length, every implementation forced",
         cpu_gemm_spans},
        {"cpu: the tiling policy on the bench shapes", cpu_tiling_policy},
        {"cpu: cache sizes from sysfs, sysconf or the fallback", cpu_cache_size_detection},
        {"cpu: the cache budgets follow the sizes and the override", cpu_cache_budget_rule},
        {NULL, NULL}};
    add_suite("backends", tests);
}

/* The same harness on the CUDA backend: registered by the GPU program
 * (tests/test_gpu.c), which SKIPs as a whole without a device. */
void register_backend_gpu_tests(void)
{
    static const test_entry tests[] = {
        {"cuda: random problems, device pointers", random_T_CUDA_DEVICE},
        {"cuda: edge cases, device pointers", edges_T_CUDA_DEVICE},
        {"cuda: bench shapes (reduced), device pointers", bench_T_CUDA_DEVICE},
        {"cuda: random problems, host pointers (staged)", random_T_CUDA_HOST},
        {"cuda: edge cases, host pointers (staged)", edges_T_CUDA_HOST},
        {"cuda: bench shapes (reduced), host pointers (staged)", bench_T_CUDA_HOST},
        {"cuda: kernelbench at full size", kernelbench_cuda},
        {NULL, NULL}};
    add_suite("backends (cuda)", tests);
}
