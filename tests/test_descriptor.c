/* The bench's benchdnn descriptor parser (bench/descriptor.c): every line of
 * oneDNN's 3D deconvolution shape list parses and round-trips, benchdnn's
 * defaults and inference rules, malformed descriptors point at the offending
 * character, and problems PyTorch cannot express are told apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/descriptor.h"
#include "../bench/suite.h"
#include "test_util.h"

#define SHAPES_FILE "bench/inputs/onednn_deconv3d_shapes.txt"

static int parse_ok(const char *text, bench_desc *d)
{
    desc_error err;
    const int rc = desc_parse(text, d, &err);
    if (rc) {
        char msg[1024];
        desc_error_format(text, &err, msg, sizeof msg);
        printf("\n  unexpected parse failure:\n%s", msg);
    }
    return rc == 0;
}


/* parse -> canonical -> parse gives the same descriptor, and the canonical
 * string is a fixed point. */
static int round_trips(const bench_desc *d)
{
    char canon[1024], again[1024];
    bench_desc back;
    desc_format(d, canon, sizeof canon);
    if (!parse_ok(canon, &back))
        return 0;
    desc_format(&back, again, sizeof again);
    if (!desc_equal(d, &back) || strcmp(canon, again) != 0) {
        printf("\n  round trip differs: %s -> %s\n", canon, again);
        return 0;
    }
    return 1;
}

static FILE *open_shapes(void)
{
    const char *srcdir = getenv("srcdir");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", srcdir && *srcdir ? srcdir : ".", SHAPES_FILE);
    FILE *f = fopen(path, "r");
    if (!f)
        printf("\n  cannot open %s\n", path);
    return f;
}

/* Every descriptor of the file parses and round-trips; the three gemm lines
 * are the only ones PyTorch cannot express, and say why. */
static void test_shapes_file(void)
{
    FILE *f = open_shapes();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[2048];
    int count = 0, inexpressible = 0, gemm = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#' || strncmp(line, "--", 2) == 0)
            continue;
        count++;
        bench_desc d;
        const int ok = parse_ok(line, &d);
        CU_ASSERT(ok);
        if (!ok)
            continue;
        CU_ASSERT(round_trips(&d));
        convt3d_problem p;
        char reason[512];
        const desc_verdict v = desc_to_problem(&d, &p, reason, sizeof reason);
        const int is_gemm = strstr(d.name, "_gemm\"") != NULL || strstr(d.name, ":gemm\"");
        gemm += is_gemm;
        if (v == DESC_NOT_EXPRESSIBLE) {
            inexpressible++;
            CU_ASSERT(is_gemm);
            CU_ASSERT_PTR_NOT_NULL(strstr(reason, "output_padding"));
            CU_ASSERT_PTR_NOT_NULL(strstr(reason, "smaller than stride"));
            CU_ASSERT_EQUAL(d.pad[0] - d.pad_r[0], 1);
            continue;
        }
        CU_ASSERT_EQUAL(v, DESC_EXPRESSIBLE);
        if (v != DESC_EXPRESSIBLE) {
            printf("\n  %s: %s\n", line, reason);
            continue;
        }
        /* The problem maps back to the same descriptor, and its output size
         * is the descriptor's. */
        bench_desc back;
        desc_from_problem(&p, d.name, &back);
        CU_ASSERT(desc_equal(&d, &back));
        int64_t out[3];
        CU_ASSERT_EQUAL(convt3d_output_dims(&p, out), CONVT3D_SUCCESS);
        for (int k = 0; k < 3; k++)
            CU_ASSERT_EQUAL(out[k], d.out[k]);
    }
    fclose(f);
    CU_ASSERT_EQUAL(count, 39);
    CU_ASSERT_EQUAL(inexpressible, 3);
    CU_ASSERT_EQUAL(gemm, 3);
}

/* benchdnn's defaults: g=1, mb=2, strides 1, dilation 0, padding 0 when the
 * output is inferred; d copied to h and w. */
static void test_defaults(void)
{
    bench_desc d;
    CU_ASSERT_FATAL(parse_ok("ic4oc8id5kd3", &d));
    CU_ASSERT_EQUAL(d.g, 1);
    CU_ASSERT_EQUAL(d.has_groups, 0);
    CU_ASSERT_EQUAL(d.mb, 2);
    CU_ASSERT_EQUAL(d.ic, 4);
    CU_ASSERT_EQUAL(d.oc, 8);
    for (int k = 0; k < 3; k++) {
        CU_ASSERT_EQUAL(d.in[k], 5);
        CU_ASSERT_EQUAL(d.k[k], 3);
        CU_ASSERT_EQUAL(d.s[k], 1);
        CU_ASSERT_EQUAL(d.pad[k], 0);
        CU_ASSERT_EQUAL(d.dil[k], 0);
        CU_ASSERT_EQUAL(d.out[k], 7);
        CU_ASSERT_EQUAL(d.pad_r[k], 0);
    }
    CU_ASSERT_STRING_EQUAL(d.name, "");
    convt3d_problem p;
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, NULL, 0), DESC_EXPRESSIBLE);
    CU_ASSERT_EQUAL(p.batch, 2);
    CU_ASSERT_EQUAL(p.groups, 1);
    CU_ASSERT_EQUAL(p.dilation[0], 1);
    CU_ASSERT_EQUAL(p.output_padding[2], 0);
    CU_ASSERT_EQUAL(p.layout, CONVT3D_LAYOUT_NCDHW);
}

/* A missing output size: o = (i-1)s + (k-1)(dil+1) - 2p + 1. */
static void test_infer_output(void)
{
    bench_desc d;
    CU_ASSERT_FATAL(parse_ok("ic2oc2id4kd3sd2pd1", &d));
    CU_ASSERT_EQUAL(d.out[0], 3 * 2 + 2 - 2 + 1);
    CU_ASSERT_EQUAL(d.out[2], 7);
    CU_ASSERT_EQUAL(d.pad_r[0], 1);
    CU_ASSERT_FATAL(parse_ok("ic2oc2id4kd3sd2pd1dd1", &d));
    CU_ASSERT_EQUAL(d.out[0], 3 * 2 + 2 * 2 - 2 + 1);
    convt3d_problem p;
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, NULL, 0), DESC_EXPRESSIBLE);
    CU_ASSERT_EQUAL(p.dilation[1], 2); /* oneDNN dilation 1 = PyTorch 2 */
    CU_ASSERT_EQUAL(p.output_padding[0], 0);
}

/* A missing padding: p = ((i-1)s - o + (k-1)(dil+1) + 1) / 2 (C division);
 * the right padding follows and gives output_padding = p - pad_r. */
static void test_infer_padding(void)
{
    bench_desc d;
    convt3d_problem p;
    char reason[512];
    CU_ASSERT_FATAL(parse_ok("ic2oc2id5od5kd3", &d));
    CU_ASSERT_EQUAL(d.pad[0], 1);
    CU_ASSERT_EQUAL(d.pad_r[0], 1);
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, NULL, 0), DESC_EXPRESSIBLE);

    /* k4 s2 i16 -> o32: p = (30 - 32 + 4)/2 = 1, pad_r = 1, op 0 */
    CU_ASSERT_FATAL(parse_ok("mb4ic64oc32id16od32kd4sd2", &d));
    CU_ASSERT_EQUAL(d.pad[1], 1);
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, NULL, 0), DESC_EXPRESSIBLE);
    CU_ASSERT_EQUAL(p.output_padding[0], 0);

    /* k3 s2 i8 -> o16: p = (14 - 16 + 3)/2 = 0 (truncated), pad_r = 1 -> op = -1 */
    CU_ASSERT_FATAL(parse_ok("ic2oc2id8od16kd3sd2", &d));
    CU_ASSERT_EQUAL(d.pad[0], 0);
    CU_ASSERT_EQUAL(d.pad_r[0], 1);
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, reason, sizeof reason), DESC_NOT_EXPRESSIBLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(reason, "exceeds left padding"));

    /* given padding and output: output_padding from the right padding */
    CU_ASSERT_FATAL(parse_ok("ic2oc2id8od16kd3sd2pd1", &d));
    CU_ASSERT_EQUAL(d.pad_r[0], 0);
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, NULL, 0), DESC_EXPRESSIBLE);
    CU_ASSERT_EQUAL(p.output_padding[0], 1);

    /* an inferred negative padding: not expressible, and still round-trips */
    CU_ASSERT_FATAL(parse_ok("ic2oc2id5od12kd3", &d));
    CU_ASSERT_EQUAL(d.pad[0], -2);
    CU_ASSERT(round_trips(&d));
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, reason, sizeof reason), DESC_NOT_EXPRESSIBLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(reason, "negative"));
}

/* d alone fills h and w; h without w fills w; a missing dim has size 1. */
static void test_copy_rules(void)
{
    bench_desc d;
    CU_ASSERT_FATAL(parse_ok("ic1oc1id4ih5iw6kd3kh2kw1", &d));
    CU_ASSERT_EQUAL(d.in[1], 5);
    CU_ASSERT_EQUAL(d.k[2], 1);
    CU_ASSERT_EQUAL(d.out[2], 6);
    CU_ASSERT_FATAL(parse_ok("ic1oc1ih5kh3sh2", &d)); /* 2D: D = 1, w from h */
    CU_ASSERT_EQUAL(d.in[0], 1);
    CU_ASSERT_EQUAL(d.k[0], 1);
    CU_ASSERT_EQUAL(d.out[0], 1);
    CU_ASSERT_EQUAL(d.in[2], 5);
    CU_ASSERT_EQUAL(d.s[2], 2);
    CU_ASSERT_EQUAL(d.out[2], 4 * 2 + 2 + 1);
    CU_ASSERT_FATAL(parse_ok("ic1oc1iw7kw2", &d)); /* 1D: D = H = 1 */
    CU_ASSERT_EQUAL(d.in[0], 1);
    CU_ASSERT_EQUAL(d.in[1], 1);
    CU_ASSERT_EQUAL(d.out[2], 8);
    /* fields in any order, '_' ignored, the last of a repeated field wins */
    bench_desc a, b;
    CU_ASSERT_FATAL(parse_ok("kd3id5oc4ic8ic4", &a));
    CU_ASSERT_FATAL(parse_ok("_ic4__oc4_id5_kd3_", &b));
    CU_ASSERT(desc_equal(&a, &b));
}

typedef struct bad_case {
    const char *text;
    int column;
    const char *says;
} bad_case;

static const bad_case bad_cases[] = {
    {"ic16x", 4, "unrecognized"},
    {"icoc16id5kd3", 2, "followed by a number"},
    {"ic-4oc4id5kd3", 2, "without a sign"},
    {"ic+4oc4id5kd3", 2, "without a sign"},
    {"", 0, "empty"},
    {"ic4oc4", 6, "no spatial dimension"},
    {"oc4id5kd3", 9, "`ic` is missing"},
    {"ic4oc4kd3", 6, "`id` is missing"},
    {"ic4oc4id5", 6, "`kd` is missing"},
    {"ic4oc4id5kd3sd0", 12, "`sd` must be at least 1"},
    {"g0ic4oc4id5kd3", 0, "`g` must be at least 1"},
    {"ic0oc4id5kd3", 0, "`ic` must be at least 1"},
    {"ic4oc4id3kd1pd5", 6, "inferred `od`"},
    {"ic4oc4id5kd3ih5kh3", 12, "both the h and the w"},
    {"ic4oc4id5kd3 x", 12, "unrecognized"},
    {"ic4oc4id5kd3sh2", 12, "`ih` is missing"},
    {"ic99999999999oc4id5kd3", 2, "larger than"},
    {"mb2_ic4_oc4_i_d5kd3", 12, "unrecognized"},
};

/* Each malformed descriptor names the offending character's column, and
 * the formatted message puts a caret under it. */
static void test_malformed(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *bc = &bad_cases[i];
        bench_desc d;
        desc_error err;
        const int rc = desc_parse(bc->text, &d, &err);
        CU_ASSERT_EQUAL(rc, -1);
        if (rc != -1) {
            printf("\n  \"%s\" parsed but should not\n", bc->text);
            continue;
        }
        if (err.column != bc->column || !strstr(err.message, bc->says))
            printf("\n  \"%s\": column %d \"%s\", want column %d \"%s\"\n", bc->text,
                   err.column, err.message, bc->column, bc->says);
        CU_ASSERT_EQUAL(err.column, bc->column);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, bc->says));
        char msg[1024];
        desc_error_format(bc->text, &err, msg, sizeof msg);
        /* third line: two spaces, then the caret under the column */
        const char *l2 = strchr(msg, '\n');
        CU_ASSERT_PTR_NOT_NULL_FATAL(l2);
        const char *l3 = strchr(l2 + 1, '\n');
        CU_ASSERT_PTR_NOT_NULL_FATAL(l3);
        CU_ASSERT_EQUAL(strchr(l3 + 1, '^') - (l3 + 1), 2 + bc->column);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, bc->text));
    }
}

/* Well-formed but not a valid problem. */
static void test_invalid(void)
{
    bench_desc d;
    convt3d_problem p;
    char reason[512];
    CU_ASSERT_FATAL(parse_ok("g3ic4oc6id5kd3", &d));
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, reason, sizeof reason), DESC_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(reason, "ic=4 is not divisible by g=3"));
    CU_ASSERT_FATAL(parse_ok("mb0ic4oc4id5kd3", &d));
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, reason, sizeof reason), DESC_INVALID);
}

/* The names: raw text after 'n' (quotes kept), shown without the quotes. */
static void test_names(void)
{
    bench_desc d;
    char shown[DESC_NAME_MAX];
    CU_ASSERT_FATAL(parse_ok("ic4oc4id5kd3_n\"unet_3d:deconv8\"", &d));
    CU_ASSERT_STRING_EQUAL(d.name, "\"unet_3d:deconv8\"");
    desc_display_name(&d, shown, sizeof shown);
    CU_ASSERT_STRING_EQUAL(shown, "unet_3d:deconv8");
    CU_ASSERT(round_trips(&d));
    CU_ASSERT_FATAL(parse_ok("ic4oc4id5kd3nplain", &d));
    CU_ASSERT_STRING_EQUAL(d.name, "plain");
    CU_ASSERT(round_trips(&d));
}

typedef struct torch_case {
    int64_t n, cin, cout, g, in[3], k[3], s[3], p[3], op[3], l[3];
    int bias;
    int64_t out[3];
} torch_case;

/* ../shared/data/README.md: PyTorch's own ConvTranspose3d sample inputs. */
static const torch_case torch_cases[] = {
    {1, 3, 3, 1, {4, 4, 4}, {3, 3, 3}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, 1, {6, 6, 6}},
    {2, 2, 4, 2, {4, 4, 4}, {4, 5, 6}, {3, 2, 1}, {1, 2, 3}, {2, 3, 1}, {4, 4, 4}, 1,
     {22, 22, 19}},
    {1, 1, 1, 1, {4, 5, 2}, {4, 3, 1}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {2, 3, 2}, 1, {12, 14, 2}},
    {1, 1, 2, 1, {4, 3, 4}, {3, 4, 5}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0, {8, 7, 10}},
    {1, 4, 8, 1, {5, 5, 5}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 0, {7, 7, 7}},
};

/* A problem -> descriptor -> string -> descriptor -> the same problem, with
 * the output sizes PyTorch gives; the bench suite likewise. */
static void test_problem_round_trip(void)
{
    const size_t nt = sizeof torch_cases / sizeof torch_cases[0];
    for (size_t i = 0; i < nt + suite_count(); i++) {
        convt3d_problem p = CONVT3D_PROBLEM_INIT;
        const int64_t *want_out = NULL;
        if (i < nt) {
            const torch_case *t = &torch_cases[i];
            p.batch = t->n;
            p.in_channels = t->cin;
            p.out_channels = t->cout;
            p.groups = t->g;
            p.has_bias = t->bias;
            for (int k = 0; k < 3; k++) {
                p.in_size[k] = t->in[k];
                p.kernel[k] = t->k[k];
                p.stride[k] = t->s[k];
                p.padding[k] = t->p[k];
                p.output_padding[k] = t->op[k];
                p.dilation[k] = t->l[k];
            }
            want_out = t->out;
        } else {
            p = suite_at(i - nt)->problem;
        }
        bench_desc d, back;
        desc_from_problem(&p, "\"x\"", &d);
        if (want_out)
            for (int k = 0; k < 3; k++)
                CU_ASSERT_EQUAL(d.out[k], want_out[k]);
        char text[1024];
        desc_format(&d, text, sizeof text);
        CU_ASSERT_FATAL(parse_ok(text, &back));
        CU_ASSERT(desc_equal(&d, &back));
        convt3d_problem q;
        char reason[512] = "";
        const desc_verdict v = desc_to_problem(&back, &q, reason, sizeof reason);
        CU_ASSERT_EQUAL(v, DESC_EXPRESSIBLE);
        if (v != DESC_EXPRESSIBLE)
            printf("\n  %s: %s\n", text, reason);
        CU_ASSERT(problems_equal(&p, &q));
    }
    CU_ASSERT_EQUAL(suite_count(), 6);
    CU_ASSERT_PTR_NOT_NULL(suite_find("kernelbench"));
    CU_ASSERT_PTR_NULL(suite_find("nope"));
}

/* The issue's own example descriptor is the kernelbench shape. */
static void test_issue_example(void)
{
    bench_desc d;
    convt3d_problem p;
    CU_ASSERT_FATAL(
        parse_ok("mb8g4ic32id12ih24iw48oc32od24oh48ow96kd3kh5kw7sd2sh2sw2pd1ph2pw3", &d));
    CU_ASSERT_EQUAL(desc_to_problem(&d, &p, NULL, 0), DESC_EXPRESSIBLE);
    convt3d_problem kb = suite_find("kernelbench")->problem;
    kb.has_bias = 1; /* a descriptor without bias0 has a bias (benchdnn's FWD_B) */
    CU_ASSERT(problems_equal(&p, &kb));
}

/* convt3d's extensions: bias0/bias1 and layoutncdhw/layoutndhwc, with
 * benchdnn's defaults (bias, NCDHW) when absent. */
static void test_bias_layout_fields(void)
{
    bench_desc d;
    convt3d_problem p;
    CU_ASSERT_FATAL(parse_ok("ic4oc8id5kd3", &d));
    CU_ASSERT_EQUAL(d.bias, 1);
    CU_ASSERT_EQUAL(d.layout, CONVT3D_LAYOUT_NCDHW);
    CU_ASSERT_FATAL(parse_ok("ic4oc8id5kd3_bias0_layoutndhwc", &d));
    CU_ASSERT_EQUAL(d.bias, 0);
    CU_ASSERT_EQUAL(d.layout, CONVT3D_LAYOUT_NDHWC);
    CU_ASSERT_EQUAL_FATAL(desc_to_problem(&d, &p, NULL, 0), DESC_EXPRESSIBLE);
    CU_ASSERT_EQUAL(p.has_bias, 0);
    CU_ASSERT_EQUAL(p.layout, CONVT3D_LAYOUT_NDHWC);
    CU_ASSERT_FATAL(parse_ok("layoutncdhwbias1ic4oc8id5kd3n\"x\"", &d));
    CU_ASSERT_EQUAL(d.bias, 1);
    CU_ASSERT_EQUAL(d.layout, CONVT3D_LAYOUT_NCDHW);
    CU_ASSERT_STRING_EQUAL(d.name, "\"x\"");
    static const bad_case bad[] = {
        {"ic4oc8id5kd3_bias2", 17, "`bias` must be followed by 0 or 1"},
        {"ic4oc8id5kd3_bias", 17, "`bias` must be followed by 0 or 1"},
        {"ic4oc8id5kd3_layoutnchw", 19, "`layout` must be followed by ncdhw or ndhwc"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        desc_error err;
        CU_ASSERT_EQUAL(desc_parse(bad[i].text, &d, &err), -1);
        CU_ASSERT_EQUAL(err.column, bad[i].column);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, bad[i].says));
    }
}

/* The library's convt3d_problem_to_string() is the bench's canonical
 * descriptor, byte for byte, and the bench's parser reads it back to the
 * same problem: random valid problems, both layouts, with and without bias. */
static void test_problem_to_string_round_trip(void)
{
    rng r = rng_make(test_seed() + 4242);
    int checked = 0, failures = 0;
    for (int i = 0; i < 1500; i++) {
        convt3d_problem p = random_problem(&r, 1e12, INT64_MAX);
        if (i % 10 == 0) /* large sizes and strides, too */
            for (int k = 0; k < 3; k++) {
                p.in_size[k] = rng_int(&r, 1, 5000);
                p.stride[k] = rng_int(&r, 1, 300);
                p.padding[k] = rng_int(&r, 0, p.kernel[k] - 1);
                p.output_padding[k] = rng_int(&r, 0, p.stride[k] - 1);
            }
        if (convt3d_validate(&p) != CONVT3D_SUCCESS)
            continue;
        for (int variant = 0; variant < 4; variant++) {
            p.layout = variant & 1 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
            p.has_bias = variant >> 1;
            char text[512], canon[512];
            const int len = convt3d_problem_to_string(&p, text, sizeof text);
            bench_desc d, want;
            desc_from_problem(&p, NULL, &want);
            desc_format(&want, canon, sizeof canon);
            desc_error err;
            convt3d_problem q;
            const int ok = len == (int)strlen(text) && strcmp(text, canon) == 0 &&
                           desc_parse(text, &d, &err) == 0 && desc_equal(&d, &want) &&
                           desc_to_problem(&d, &q, NULL, 0) == DESC_EXPRESSIBLE &&
                           problems_equal(&p, &q);
            if (!ok && failures++ < 5)
                printf("\n  to_string: %s\n  bench's canonical: %s\n", text, canon);
            CU_ASSERT(ok);
            checked++;
        }
    }
    CU_ASSERT(checked >= 4000);
    /* snprintf's contract: the length needed, truncation, NULL. */
    convt3d_problem p = make_problem(2, 4, 8, 1, 5, 5, 5, 3, 2, 1, 1, 1, CONVT3D_LAYOUT_NDHWC);
    char full[512], small[16];
    const int n = convt3d_problem_to_string(&p, full, sizeof full);
    CU_ASSERT_STRING_EQUAL(full, "g1mb2_ic4id5ih5iw5_oc8od10oh10ow10_kd3kh3kw3_sd2sh2sw2_pd1ph1pw1_"
                                 "dd0dh0dw0_bias1_layoutndhwc");
    CU_ASSERT_EQUAL(n, (int)strlen(full));
    CU_ASSERT_EQUAL(convt3d_problem_to_string(&p, small, sizeof small), n);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
    CU_ASSERT_EQUAL(strncmp(small, full, sizeof small - 1), 0);
    CU_ASSERT_EQUAL(convt3d_problem_to_string(&p, NULL, 0), n);
    CU_ASSERT_EQUAL(convt3d_problem_to_string(NULL, full, sizeof full), -1);
}

void register_descriptor_tests(void)
{
    static const test_entry tests[] = {
        {"oneDNN 3D deconv shape list parses and round-trips", test_shapes_file},
        {"benchdnn defaults", test_defaults},
        {"missing output size is inferred", test_infer_output},
        {"missing padding is inferred; right padding -> output_padding", test_infer_padding},
        {"d copied to h and w, h to w; order and '_' free", test_copy_rules},
        {"malformed descriptors point at the offending character", test_malformed},
        {"invalid problems are told apart", test_invalid},
        {"names", test_names},
        {"PyTorch samples and suite round-trip through descriptors", test_problem_round_trip},
        {"the issue's example is kernelbench", test_issue_example},
        {"bias and layout fields (convt3d's extensions)", test_bias_layout_fields},
        {"convt3d_problem_to_string is the canonical descriptor and round-trips",
         test_problem_to_string_round_trip},
        {NULL, NULL}};
    add_suite("bench descriptors", tests);
}
