/* Command-line parsing: long options (--flag value or --flag=value),
 * PyTorch-like shape flags, and positional benchdnn descriptors. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "modes.h"

enum {
    OPT_N = 256, OPT_CIN, OPT_COUT, OPT_IN, OPT_KERNEL, OPT_STRIDE, OPT_PADDING, OPT_OUTPUT_PADDING,
    OPT_GROUPS, OPT_DILATION, OPT_BIAS, OPT_NO_BIAS, OPT_LAYOUT, OPT_SUITE, OPT_BATCH, OPT_DEVICE,
    OPT_THREADS, OPT_VERIFY, OPT_NO_VERIFY, OPT_VERIFY_GMAC, OPT_TOL, OPT_SEED, OPT_BUDGET,
    OPT_REPS, OPT_WARMUP, OPT_MAX_GFLOP, OPT_NO_BASELINES, OPT_CALIBRATE, OPT_NO_CALIBRATE,
    OPT_JSON, OPT_STAGED, OPT_LIST, OPT_VERSION, OPT_IMPL, OPT_KERNELS, OPT_RANDOM, OPT_HOST_COST,
    OPT_DTYPE, OPT_MATH, OPT_ALL_KERNELS
};

static const struct option long_opts[] = {
    {"n", required_argument, 0, OPT_N},
    {"cin", required_argument, 0, OPT_CIN},
    {"cout", required_argument, 0, OPT_COUT},
    {"in", required_argument, 0, OPT_IN},
    {"kernel", required_argument, 0, OPT_KERNEL},
    {"stride", required_argument, 0, OPT_STRIDE},
    {"padding", required_argument, 0, OPT_PADDING},
    {"output-padding", required_argument, 0, OPT_OUTPUT_PADDING},
    {"groups", required_argument, 0, OPT_GROUPS},
    {"dilation", required_argument, 0, OPT_DILATION},
    {"bias", no_argument, 0, OPT_BIAS},
    {"no-bias", no_argument, 0, OPT_NO_BIAS},
    {"layout", required_argument, 0, OPT_LAYOUT},
    {"suite", required_argument, 0, OPT_SUITE},
    {"batch", required_argument, 0, OPT_BATCH},
    {"random", required_argument, 0, OPT_RANDOM},
    {"host-cost", no_argument, 0, OPT_HOST_COST},
    {"device", required_argument, 0, OPT_DEVICE},
    {"threads", required_argument, 0, OPT_THREADS},
    {"verify", no_argument, 0, OPT_VERIFY},
    {"no-verify", no_argument, 0, OPT_NO_VERIFY},
    {"verify-gmac", required_argument, 0, OPT_VERIFY_GMAC},
    {"tol", required_argument, 0, OPT_TOL},
    {"dtype", required_argument, 0, OPT_DTYPE},
    {"math", required_argument, 0, OPT_MATH},
    {"seed", required_argument, 0, OPT_SEED},
    {"budget", required_argument, 0, OPT_BUDGET},
    {"reps", required_argument, 0, OPT_REPS},
    {"warmup", required_argument, 0, OPT_WARMUP},
    {"max-gflop", required_argument, 0, OPT_MAX_GFLOP},
    {"no-baselines", no_argument, 0, OPT_NO_BASELINES},
    {"calibrate", no_argument, 0, OPT_CALIBRATE},
    {"no-calibrate", no_argument, 0, OPT_NO_CALIBRATE},
    {"json", required_argument, 0, OPT_JSON},
    {"verbose", no_argument, 0, 'v'},
    {"staged", no_argument, 0, OPT_STAGED},
    {"list", no_argument, 0, OPT_LIST},
    {"impl", required_argument, 0, OPT_IMPL},
    {"kernels", no_argument, 0, OPT_KERNELS},
    {"all-kernels", no_argument, 0, OPT_ALL_KERNELS},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0}};

void cli_usage(FILE *f)
{
    fputs(
        "usage: convt3d-bench [options] [DESCRIPTOR...]\n"
        "\n"
        "Times convt3d's ConvTranspose3d (fp32, or the mode of --dtype/--math) against\n"
        "oneDNN (CPU) and cuDNN (GPU) in the same run, verifies every implementation\n"
        "against convt3d_reference(), and prints a table.  Without problems it runs the\n"
        "bench suite (DESIGN.md section 5) on the CPU and, when present, the first CUDA\n"
        "device.\n"
        "\n"
        "Problems (any mix; each given problem runs once per device):\n"
        "  DESCRIPTOR            oneDNN benchdnn deconvolution descriptor, e.g.\n"
        "                        mb8g4ic32id12ih24iw48oc32od24oh48ow96kd3kh5kw7sd2pd1ph2pw3\n"
        "  --batch=FILE          descriptors from FILE, one or more per line; lines starting\n"
        "                        with # or -- are ignored, but for two directives:\n"
        "                        \"# class: NAME\" puts the descriptors after it in class\n"
        "                        NAME, \"# include: FILE2\" reads FILE2 (relative to FILE)\n"
        "                        there; with classes the run ends with a summary per class\n"
        "                        (e.g. --batch=bench/inputs/classes.txt)\n"
        "  --random=N            N random problems (bench/random_problems.h: batch 1-16,\n"
        "                        1-256 channels, dense/grouped/depthwise, 4-32 a side,\n"
        "                        kernels 1-5, strides 1-3, dilation, output padding, both\n"
        "                        layouts, bias on/off; <= 1.5 GMAC each), drawn from\n"
        "                        --seed; ends with a summary: share faster, geometric\n"
        "                        mean and 10th percentile of the speed-up, the slowest\n"
        "                        ten as descriptors, overall and per kernel chosen\n"
        "  --suite=NAME          a bench suite shape (kernelbench, unet_up_k2s2, k4s2p1,\n"
        "                        k3s2p1op1_wide, depthwise, k3s1p1) or \"all\"\n"
        "  PyTorch-like shape:   --n N --cin C --cout C --in D,H,W --kernel K [--stride S]\n"
        "                        [--padding P] [--output-padding P] [--groups G]\n"
        "                        [--dilation L] [--bias]; one number means all three dims\n"
        "  --layout=ncdhw|ndhwc  layout of x and y for every problem (default ncdhw)\n"
        "  --bias / --no-bias    force a bias on or off (descriptors default to bias on,\n"
        "                        benchdnn's --dir=FWD_B; cuDNN is always timed without)\n"
        "\n"
        "Running:\n"
        "  --device=cpu|cuda|cuda:N|all   default: cpu, plus cuda:0 when a GPU is present\n"
        "  --threads=N           OpenMP threads for convt3d and oneDNN alike\n"
        "  --budget=SECONDS      time per measurement (default 1); the repetition count\n"
        "                        adapts: a run slower than the budget is timed once\n"
        "  --reps=N --warmup=N   fixed timed / extra warm-up runs instead\n"
        "  --max-gflop=X         skip problems of more than X GFLOP (useful MACs x 2)\n"
        "  --no-baselines        time convt3d only\n"
        "  --host-cost           GPU: also the host time per convt3d_execute_on_stream call\n"
        "                        (device pointers, calls queued without synchronising)\n"
        "\n"
        "Modes (one per run; the table, the JSON and the summaries name it):\n"
        "  --dtype=f32|f16|bf16  type of x, weight, bias and y (default f32); data is drawn\n"
        "                        in f32 and rounded to it, the reference runs in f32 on\n"
        "                        the rounded values with float64 accumulation\n"
        "  --math=fp32|tf32|3xtf32   convt3d's plan math mode (default fp32; f32 is a\n"
        "                        synonym); cuDNN runs in the same mode (3xtf32: twice, fp32\n"
        "                        FMA and TF32); the CPU computes every mode in fp32\n"
        "\n"
        "Verification (fresh uniform [-1,1) data; pass: relative L2 error <= the row's\n"
        "tolerance: fp32 and 3xtf32 1e-5, tf32 and f16 1e-3, bf16 8e-3):\n"
        "  default               in full when the reference costs <= --verify-gmac (4)\n"
        "                        GMAC, else on one image and the last channels of each\n"
        "                        group (\"sampled\"), else skipped -- printed as such\n"
        "  --verify              always in full      --no-verify   never\n"
        "  --tol=X               tighten: pass at <= min(X, the row's tolerance); a looser X\n"
        "                        never loosens a row\n"
        "  --seed=N (1; also the seed of --random)  --verify-gmac=X\n"
        "\n"
        "Floors (\"% of floor\" = max(flops/peak_flops, bytes/peak_bw) / time, peak_flops\n"
        "the ceiling of the row's mode):\n"
        "  --calibrate           measure each device anew: the fp32 FMA rate and copy\n"
        "                        bandwidth, on a GPU also the TF32, f16 and bf16 tensor-core\n"
        "                        rates (mma.sync loops; 3xtf32 rows: a third of TF32's);\n"
        "                        cached in $XDG_CACHE_HOME/convt3d/calibration; alone on\n"
        "                        the command line it only calibrates\n"
        "  --no-calibrate        use the cache only (no %floor without it)\n"
        "\n"
        "Output:\n"
        "  --json=FILE           every figure, machine-readable\n"
        "  -v, --verbose         min/max, repetitions, kernels and algorithms chosen,\n"
        "                        descriptors, and the staged (host-pointer) GPU time\n"
        "  --staged              measure the staged GPU time without --verbose\n"
        "  --list                print the problems (canonical descriptors) and exit\n"
        "\n"
        "Implementations (the library's registry; names as convt3d_plan_kernel_name()):\n"
        "  --kernels             for each problem and device, every implementation: applies\n"
        "                        (and which one the library picks), or why it does not\n"
        "  --kernel=NAME, --impl=NAME   time that implementation alone in convt3d's row\n"
        "                        (forced, on its own device; baselines as usual); a problem it\n"
        "                        does not apply to is reported with the reason, exit status 2\n"
        "                        (--kernel=K with a number is the kernel size, as above)\n"
        "  --all-kernels         after convt3d's automatic row (and the baselines), time\n"
        "                        every implementation of the device that applies, forced,\n"
        "                        on the same data with the same budget and check (a wrong\n"
        "                        one is a mismatch: exit status 1); one line each, marking\n"
        "                        the automatic choice and the fastest; the JSON holds them\n"
        "                        and the summary an \"oracle\" block: how often the choice\n"
        "                        is the fastest, the geomean automatic/fastest, the speed-up\n"
        "                        if the fastest were chosen, per kernel who beat it, and\n"
        "                        the largest losses (bench/oracle_rules.py reads the JSON)\n"
        "  -h, --help   --version\n"
        "\n"
        "Exit status: 0 all well (not-expressible descriptors included), 1 a verification\n"
        "mismatch, 2 a usage, descriptor or run-time error.\n",
        f);
}

static int bad(const char *opt, const char *value, const char *why)
{
    fprintf(stderr, "convt3d-bench: --%s=%s: %s\n", opt, value, why);
    return -1;
}

static int parse_i64(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    const long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno)
        return bad(opt, text, "not an integer");
    if (v < lo || v > hi) {
        char why[96];
        snprintf(why, sizeof why, "must be between %lld and %lld", (long long)lo, (long long)hi);
        return bad(opt, text, why);
    }
    *out = v;
    return 0;
}

static int parse_double(const char *opt, const char *text, double lo, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (end == text || *end || errno || !(v >= lo))
        return bad(opt, text, lo > 0 ? "must be a positive number" : "must be a number >= 0");
    *out = v;
    return 0;
}

/* "3" (all three dims) or "3,5,7" (d, h, w). */
static int parse_triple(const char *opt, const char *text, int64_t lo, int64_t out[3])
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *parts[4] = {0};
    int n = 0;
    for (char *tok = buf, *save = NULL; n < 4; tok = NULL) {
        char *t = strtok_r(tok, ",", &save);
        if (!t)
            break;
        parts[n++] = t;
    }
    if (n != 1 && n != 3)
        return bad(opt, text, "give one number (all dims) or three: D,H,W");
    for (int i = 0; i < n; i++)
        if (parse_i64(opt, parts[i], lo, 1000000000, &out[i]))
            return -1;
    if (n == 1)
        out[1] = out[2] = out[0];
    return 0;
}

static void defaults(bench_options *o)
{
    memset(o, 0, sizeof *o);
    convt3d_problem_init(&o->shape);
    o->shape.batch = 1;
    o->bias = -1;
    o->layout = -1;
    o->verify = -1;
    o->verify_gmac = 4.0;
    o->tol = -1; /* each row's mode decides (modes.h) */
    o->dtype = CONVT3D_F32;
    o->math = CONVT3D_MATH_F32;
    o->seed = 1;
    o->budget_s = 1.0;
    o->warmup = -1;
    o->baselines = 1;
}

/* One option; 0, 1 (stop: help/version) or -1. */
static int apply(bench_options *o, int c, const char *name, const char *arg)
{
    convt3d_problem *s = &o->shape;
    int64_t v = 0;
    switch (c) {
    case OPT_N: o->have_shape = 1; return parse_i64(name, arg, 1, 1000000000, &s->batch);
    case OPT_CIN:
        o->have_shape = 1;
        o->shape_given |= 1;
        return parse_i64(name, arg, 1, 1000000000, &s->in_channels);
    case OPT_COUT:
        o->have_shape = 1;
        o->shape_given |= 2;
        return parse_i64(name, arg, 1, 1000000000, &s->out_channels);
    case OPT_IN:
        o->have_shape = 1;
        o->shape_given |= 4;
        return parse_triple(name, arg, 1, s->in_size);
    case OPT_KERNEL:
        /* implementation names always hold a '/': --kernel=cpu/... forces one,
         * --kernel=3 or 3,5,7 stays the kernel size of the shape flags */
        if (strchr(arg, '/'))
            return apply(o, OPT_IMPL, "impl", arg);
        o->have_shape = 1;
        o->shape_given |= 8;
        return parse_triple(name, arg, 1, s->kernel);
    case OPT_STRIDE: o->have_shape = 1; return parse_triple(name, arg, 1, s->stride);
    case OPT_PADDING: o->have_shape = 1; return parse_triple(name, arg, 0, s->padding);
    case OPT_OUTPUT_PADDING: o->have_shape = 1; return parse_triple(name, arg, 0, s->output_padding);
    case OPT_DILATION: o->have_shape = 1; return parse_triple(name, arg, 1, s->dilation);
    case OPT_GROUPS: o->have_shape = 1; return parse_i64(name, arg, 1, 1000000000, &s->groups);
    case OPT_BIAS: o->bias = 1; return 0;
    case OPT_NO_BIAS: o->bias = 0; return 0;
    case OPT_LAYOUT:
        if (strcmp(arg, "ncdhw") == 0 || strcmp(arg, "NCDHW") == 0)
            o->layout = CONVT3D_LAYOUT_NCDHW;
        else if (strcmp(arg, "ndhwc") == 0 || strcmp(arg, "NDHWC") == 0)
            o->layout = CONVT3D_LAYOUT_NDHWC;
        else
            return bad(name, arg, "must be ncdhw or ndhwc");
        return 0;
    case OPT_SUITE:
        if (o->n_suites == CLI_MAX_LIST)
            return bad(name, arg, "too many --suite options");
        o->suites[o->n_suites++] = arg;
        return 0;
    case OPT_BATCH:
        if (o->n_batches == CLI_MAX_LIST)
            return bad(name, arg, "too many --batch options");
        o->batches[o->n_batches++] = arg;
        return 0;
    case OPT_RANDOM:
        if (parse_i64(name, arg, 1, 1000000, &v))
            return -1;
        o->random_n = (int)v;
        return 0;
    case OPT_HOST_COST: o->host_cost = 1; return 0;
    case OPT_DEVICE: o->device = arg; return 0;
    case OPT_THREADS:
        if (parse_i64(name, arg, 1, 4096, &v))
            return -1;
        o->threads = (int)v;
        return 0;
    case OPT_VERIFY: o->verify = 1; return 0;
    case OPT_NO_VERIFY: o->verify = 0; return 0;
    case OPT_VERIFY_GMAC: return parse_double(name, arg, 0, &o->verify_gmac);
    case OPT_TOL: return parse_double(name, arg, 0, &o->tol);
    case OPT_DTYPE:
        if (mode_parse_dtype(arg, &o->dtype))
            return bad(name, arg, "must be f32, f16 or bf16");
        return 0;
    case OPT_MATH:
        if (mode_parse_math(arg, &o->math))
            return bad(name, arg, "must be fp32 (or f32), tf32 or 3xtf32");
        return 0;
    case OPT_SEED:
        if (parse_i64(name, arg, 0, INT64_MAX, &v))
            return -1;
        o->seed = (uint64_t)v;
        return 0;
    case OPT_BUDGET: return parse_double(name, arg, 1e-6, &o->budget_s);
    case OPT_REPS:
        if (parse_i64(name, arg, 1, 1000000, &v))
            return -1;
        o->reps = (int)v;
        return 0;
    case OPT_WARMUP:
        if (parse_i64(name, arg, 0, 1000000, &v))
            return -1;
        o->warmup = (int)v;
        return 0;
    case OPT_MAX_GFLOP: return parse_double(name, arg, 0, &o->max_gflop);
    case OPT_NO_BASELINES: o->baselines = 0; return 0;
    case OPT_CALIBRATE: o->calibrate = 1; return 0;
    case OPT_NO_CALIBRATE: o->no_calibrate = 1; return 0;
    case OPT_JSON: o->json = arg; return 0;
    case 'v': o->verbose = 1; return 0;
    case OPT_STAGED: o->staged = 1; return 0;
    case OPT_LIST: o->list = 1; return 0;
    case OPT_IMPL: o->impl = arg; return 0;
    case OPT_KERNELS: o->list_kernels = 1; return 0;
    case OPT_ALL_KERNELS: o->all_kernels = 1; return 0;
    case 'h': cli_usage(stdout); return 1;
    case OPT_VERSION: printf("convt3d-bench %s\n", convt3d_version()); return 1;
    default: cli_usage(stderr); return -1;
    }
}

int cli_parse(int argc, char **argv, bench_options *o)
{
    defaults(o);
    opterr = 1;
    optind = 1;
    int c, idx = -1;
    while ((c = getopt_long(argc, argv, "vh", long_opts, &idx)) != -1) {
        const char *name = idx >= 0 ? long_opts[idx].name : (c == 'v' ? "verbose" : "help");
        if (c == '?') {
            fprintf(stderr, "convt3d-bench: see --help\n");
            return -1;
        }
        const int rc = apply(o, c, name, optarg);
        if (rc)
            return rc;
        idx = -1;
    }
    for (int i = optind; i < argc; i++) {
        if (o->n_descs == (int)(sizeof o->descs / sizeof o->descs[0])) {
            fprintf(stderr, "convt3d-bench: too many descriptors on the command line; use "
                            "--batch=FILE\n");
            return -1;
        }
        o->descs[o->n_descs++] = argv[i];
    }
    /* --tol only tightens (modes.h): say so when it would have loosened */
    const double mode_tol = prec_tolerance(mode_prec(o->dtype, o->math));
    if (o->tol > mode_tol)
        fprintf(stderr, "convt3d-bench: --tol=%g is looser than the %s tolerance %g: --tol can "
                        "only tighten a row's check, so each row keeps its mode's\n",
                o->tol, prec_name(mode_prec(o->dtype, o->math)), mode_tol);
    if (o->impl && o->all_kernels) {
        fprintf(stderr, "convt3d-bench: --all-kernels times every implementation, --kernel=%s "
                        "forces one: give one of them\n", o->impl);
        return -1;
    }
    if (o->have_shape && o->shape_given != 15) {
        fprintf(stderr, "convt3d-bench: a shape from flags needs --cin, --cout, --in and "
                        "--kernel (missing:%s%s%s%s)\n",
                o->shape_given & 1 ? "" : " --cin", o->shape_given & 2 ? "" : " --cout",
                o->shape_given & 4 ? "" : " --in", o->shape_given & 8 ? "" : " --kernel");
        return -1;
    }
    return 0;
}
