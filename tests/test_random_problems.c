/* The bench's problem sources beyond single descriptors: the --random
 * distribution (bench/random_problems.c) is reproducible for a seed, stays
 * within its bounds, covers what it says, and every problem pastes back
 * through its descriptor; the class list bench/inputs/classes.txt reads
 * through the bench's own --batch reader (bench/cases.c) into runnable
 * problems, at least three a class. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/cases.h"
#include "test_classes.h"
#include "../bench/descriptor.h"
#include "../bench/random_problems.h"
#include "test_util.h"

#define DRAWS 1000


static void print_problem(const char *what, const convt3d_problem *p)
{
    char text[512];
    convt3d_problem_to_string(p, text, sizeof text);
    printf("\n  %s: %s\n", what, text);
}

/* Same seed: the same problems, in any order of drawing; another seed:
 * other problems. */
static void test_reproducible(void)
{
    enum { N = 200 };
    convt3d_problem a[N], b, c;
    for (int i = 0; i < N; i++)
        CU_ASSERT(random_problems_draw(7, (uint64_t)i, &a[i]) > 0);
    int same = 0, differ = 0;
    for (int i = N - 1; i >= 0; i--) {
        random_problems_draw(7, (uint64_t)i, &b);
        same += problems_equal(&a[i], &b);
        random_problems_draw(8, (uint64_t)i, &c);
        differ += !problems_equal(&a[i], &c);
    }
    CU_ASSERT_EQUAL(same, N);
    CU_ASSERT(differ >= N - 2);
    /* problems of one seed differ from each other, too */
    int repeats = 0;
    for (int i = 1; i < N; i++)
        repeats += problems_equal(&a[i], &a[i - 1]);
    CU_ASSERT(repeats <= 1);
}

/* What DRAWS problems must show between them: the distribution's claims. */
typedef struct coverage {
    int ncdhw, ndhwc, bias, no_bias, dense, depthwise, grouped, dilated, stride3, out_pad;
    int big_batch, non_cubic, asymmetric_kernel, few_out, max_channels;
} coverage;

static void count(coverage *cv, const convt3d_problem *p)
{
    cv->ncdhw += p->layout == CONVT3D_LAYOUT_NCDHW;
    cv->ndhwc += p->layout == CONVT3D_LAYOUT_NDHWC;
    cv->bias += p->has_bias;
    cv->no_bias += !p->has_bias;
    cv->dense += p->groups == 1;
    cv->depthwise += p->groups > 1 && p->groups == p->in_channels;
    cv->grouped += p->groups > 1 && p->groups < p->in_channels;
    cv->big_batch += p->batch > 4;
    cv->few_out += p->out_channels <= 3;
    cv->max_channels += p->in_channels == 256 || p->out_channels == 256;
    int dil = 0, s3 = 0, op = 0;
    for (int d = 0; d < 3; d++) {
        dil |= p->dilation[d] > 1;
        s3 |= p->stride[d] == 3;
        op |= p->output_padding[d] > 0;
    }
    cv->dilated += dil;
    cv->stride3 += s3;
    cv->out_pad += op;
    cv->non_cubic += p->in_size[0] != p->in_size[1] || p->in_size[1] != p->in_size[2];
    cv->asymmetric_kernel += p->kernel[0] != p->kernel[1] || p->kernel[1] != p->kernel[2];
}

/* The documented ranges of one problem. */
static int in_ranges(const convt3d_problem *p)
{
    int ok = p->batch >= 1 && p->batch <= 16 && p->in_channels >= 1 &&
             p->in_channels <= 256 && p->out_channels >= 1 && p->out_channels <= 512;
    for (int d = 0; d < 3; d++)
        ok = ok && p->in_size[d] >= 4 && p->in_size[d] <= 32 && p->kernel[d] >= 1 &&
             p->kernel[d] <= 5 && p->stride[d] >= 1 && p->stride[d] <= 3 &&
             p->dilation[d] >= 1 && p->dilation[d] <= 3 && p->padding[d] >= 0;
    return ok;
}

/* Every draw is valid, within the work and size bounds and the documented
 * ranges, never the fallback; between them the draws cover every feature. */
static void test_bounds_and_coverage(void)
{
    coverage cv = {0};
    int bad = 0;
    double max_macs = 0;
    for (int i = 0; i < DRAWS; i++) {
        convt3d_problem p;
        const int draws = random_problems_draw(test_seed(), (uint64_t)i, &p);
        int64_t nx = 0, nw = 0, ny = 0;
        const double macs = random_problems_all_tap_macs(&p);
        const int ok = draws > 0 && convt3d_validate(&p) == CONVT3D_SUCCESS &&
                       convt3d_tensor_elems(&p, &nx, &nw, &ny) == CONVT3D_SUCCESS &&
                       macs <= RANDOM_MAX_MACS && nx <= RANDOM_MAX_ELEMS &&
                       nw <= RANDOM_MAX_ELEMS && ny <= RANDOM_MAX_ELEMS && in_ranges(&p);
        if (!ok && bad++ < 5)
            print_problem("out of bounds or invalid", &p);
        if (macs > max_macs)
            max_macs = macs;
        count(&cv, &p);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* each feature in a good share of DRAWS (expected shares: 8% and up) */
    const int floor = DRAWS / 50;
    const int *v = &cv.ncdhw;
    static const char *const names[] = {"NCDHW", "NDHWC", "bias", "no bias", "dense",
                                        "depthwise", "grouped", "dilation > 1", "stride 3",
                                        "output padding", "batch > 4", "non-cubic volume",
                                        "asymmetric kernel", "<= 3 output channels",
                                        "256 channels"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (v[k] < floor)
            printf("\n  only %d of %d draws with %s\n", v[k], DRAWS, names[k]);
        CU_ASSERT(v[k] >= floor);
    }
    /* the bound is used, not just respected: large problems are drawn too */
    CU_ASSERT(max_macs > 0.3 * RANDOM_MAX_MACS);
}

/* convt3d_problem_to_string -> the bench's parser -> the same problem. */
static void test_descriptors_paste_back(void)
{
    int failures = 0;
    for (int i = 0; i < DRAWS; i++) {
        convt3d_problem p, q;
        random_problems_draw(test_seed() + 1, (uint64_t)i, &p);
        char text[512];
        convt3d_problem_to_string(&p, text, sizeof text);
        bench_desc d;
        desc_error err;
        char why[256] = "";
        const int ok = desc_parse(text, &d, &err) == 0 &&
                       desc_to_problem(&d, &q, why, sizeof why) == DESC_EXPRESSIBLE &&
                       problems_equal(&p, &q);
        if (!ok && failures++ < 5)
            printf("\n  does not paste back: %s %s\n", text, why);
        CU_ASSERT(ok);
    }
}

/* ---- bench/inputs/classes.txt ------------------------------------------- */

static const char *const required_classes[] = {
    "dilated_s1", "out_c1_3",        "ndhwc_wide", "ndhwc_depthwise", "s1_wide_w",
    "tiny_volume", "rgb_large_batch", "w_stride3", "grouped_c16",     "suite",
    "onednn",     "kernel_eq_stride"};
enum { N_REQUIRED = sizeof required_classes / sizeof required_classes[0] };

int read_classes(case_list *cl)
{
    const char *srcdir = getenv("srcdir");
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", srcdir && *srcdir ? srcdir : ".", CLASSES_FILE);
    bench_options o;
    memset(&o, 0, sizeof o);
    o.bias = -1;
    o.layout = -1;
    o.seed = 1;
    o.batches[0] = path;
    o.n_batches = 1;
    return cases_build(&o, cl);
}

/* The problems of the realistic classes stay in the ranges. */
static int realistic(const convt3d_problem *p)
{
    int64_t out[3];
    if (convt3d_output_dims(p, out) != CONVT3D_SUCCESS)
        return 0;
    int ok = p->batch >= 1 && p->batch <= 16 && p->in_channels <= 512 &&
             p->out_channels <= 512;
    for (int d = 0; d < 3; d++)
        ok = ok && p->in_size[d] >= 4 && p->in_size[d] <= 64 && out[d] <= 64;
    return ok;
}

/* Read by the bench's own reader: every problem runnable (the oneDNN
 * corpus's three not-expressible lines aside), in a class, each required
 * class with at least three problems, both layouts present. */
static void test_classes_file(void)
{
    case_list cl;
    CU_ASSERT_FATAL(read_classes(&cl) == 0);
    int per_class[N_REQUIRED] = {0}, unclassed = 0, bad = 0, layouts[2] = {0};
    for (size_t i = 0; i < cl.n; i++) {
        const bench_case *c = &cl.v[i];
        int k = 0;
        while (k < N_REQUIRED && strcmp(c->klass, required_classes[k]) != 0)
            k++;
        if (k == N_REQUIRED) {
            unclassed++;
            printf("\n  %s: class \"%s\" is not one of the required ones\n", c->origin,
                   c->klass);
            continue;
        }
        const int onednn = strcmp(c->klass, "onednn") == 0;
        const int runs = c->kind == CASE_RUN || (onednn && c->kind == CASE_NOT_EXPRESSIBLE);
        const int sized = onednn || strcmp(c->klass, "suite") == 0 || c->kind != CASE_RUN ||
                          realistic(&c->problem);
        if (!runs || !sized) {
            bad++;
            printf("\n  %s: %s: %s\n", c->origin, c->label, runs ? "outside the ranges" : c->reason);
        }
        per_class[k] += c->kind == CASE_RUN;
        if (c->kind == CASE_RUN && !onednn)
            layouts[c->problem.layout == CONVT3D_LAYOUT_NDHWC]++;
    }
    CU_ASSERT_EQUAL(unclassed, 0);
    CU_ASSERT_EQUAL(bad, 0);
    for (int k = 0; k < N_REQUIRED; k++) {
        if (per_class[k] < 3)
            printf("\n  class %s has %d problems\n", required_classes[k], per_class[k]);
        CU_ASSERT(per_class[k] >= 3);
    }
    CU_ASSERT_EQUAL(per_class[9], 6); /* the six suite shapes */
    CU_ASSERT(per_class[10] >= 30);   /* the oneDNN corpus (36 problems), included */
    CU_ASSERT(layouts[0] >= 10 && layouts[1] >= 10);
    cases_free(&cl);
}

/* --random through the same reader: N problems in class "random", those of
 * the generator, named by index. */
static void test_random_cases(void)
{
    bench_options o;
    memset(&o, 0, sizeof o);
    o.bias = -1;
    o.layout = -1;
    o.seed = 3;
    o.random_n = 25;
    case_list cl;
    CU_ASSERT_FATAL(cases_build(&o, &cl) == 0);
    CU_ASSERT_EQUAL(cl.n, 25);
    for (size_t i = 0; i < cl.n; i++) {
        convt3d_problem p;
        random_problems_draw(3, i, &p);
        char label[32];
        snprintf(label, sizeof label, "random_%zu", i);
        CU_ASSERT(cl.v[i].kind == CASE_RUN && strcmp(cl.v[i].klass, "random") == 0 &&
                  strcmp(cl.v[i].label, label) == 0 && problems_equal(&cl.v[i].problem, &p));
    }
    cases_free(&cl);
}

void register_random_problem_tests(void)
{
    static const test_entry tests[] = {
        {"--random: the same seed gives the same problems, another seed others",
         test_reproducible},
        {"--random: valid, within the bounds and ranges; covers every feature",
         test_bounds_and_coverage},
        {"--random: every problem pastes back through its descriptor",
         test_descriptors_paste_back},
        {"--random: the bench's cases are the generator's", test_random_cases},
        {"classes.txt: runnable, at least three problems a class, both layouts",
         test_classes_file},
        {NULL, NULL}};
    add_suite("bench random problems and classes", tests);
}
