/* convt3d-bench: times convt3d against oneDNN (CPU) and cuDNN (GPU) in the
 * same run, on the bench suite, benchdnn descriptors or a shape from flags,
 * verifies every implementation against the reference and prints a table.
 *
 * Flow: options -> problems -> devices -> floors -> for each problem: data,
 * reference, then each device's implementations -> table rows as they come
 * -> summary -> JSON.  Exit status: 0 fine, 1 a verification mismatch, 2 an
 * error. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench.h"
#include "calib.h"
#include "cases.h"
#include "cli.h"
#include "data.h"
#include "gpu_util.h"
#include "oracle.h"
#include "results.h"
#include "summary.h"

/* --threads for convt3d and oneDNN alike: both run on the same OpenMP
 * runtime, which reads the calling thread's setting. */
static int setup_threads(const bench_options *o)
{
#ifdef _OPENMP
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    return omp_get_max_threads();
#else
    if (o->threads > 1)
        fprintf(stderr, "convt3d-bench: built without OpenMP: --threads=%d ignored\n",
                o->threads);
    return 1;
#endif
}

/* NVIDIA_TF32_OVERRIDE=0 makes cuDNN (and cuBLAS) never use TF32, whatever
 * they are asked.  An fp32 run sets it, so that fp32 means fp32 even where
 * the environment would allow TF32 (cuDNN is asked for FMA math as well).  A
 * run with a TF32 baseline (tf32, 3xtf32) must not have it: its cuDNN TF32
 * row would silently be fp32 and flatter convt3d.  Set before cuDNN loads. */
static void tf32_environment(const bench_options *o)
{
    const int tf32_baseline = o->dtype == CONVT3D_F32 && o->math != CONVT3D_MATH_F32;
    if (!tf32_baseline) {
        setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
        return;
    }
    const char *v = getenv("NVIDIA_TF32_OVERRIDE");
    if (v && strcmp(v, "0") == 0)
        fprintf(stderr, "convt3d-bench: --math=%s: unsetting NVIDIA_TF32_OVERRIDE=0, which would "
                        "keep cuDNN's TF32 baseline from using TF32\n",
                mode_math_name(o->math));
    unsetenv("NVIDIA_TF32_OVERRIDE");
}

static const char *no_cuda_reason(void)
{
    if (!convt3d_has_cuda_support())
        return "convt3d was built without CUDA";
    return "no CUDA device: convt3d_cuda_device_count() = 0";
}

static void add_cuda(device_run *d, int ordinal, int available)
{
    memset(d, 0, sizeof *d);
    d->is_cuda = 1;
    d->ordinal = ordinal;
    d->available = available;
    if (available)
        snprintf(d->name, sizeof d->name, "cuda:%d", ordinal);
    else {
        snprintf(d->name, sizeof d->name, "cuda");
        snprintf(d->why, sizeof d->why, "%s", no_cuda_reason());
    }
}

/* --device: cpu | cuda | cuda:N | all; default cpu plus cuda:0 when present. */
static int resolve_devices(const bench_options *o, int threads, device_run *devs, int *n_dev)
{
    const char *spec = o->device ? o->device : "default";
    const int count = convt3d_cuda_device_count();
    const int all = strcmp(spec, "all") == 0, dflt = strcmp(spec, "default") == 0;
    int n = 0, want_cpu = all || dflt || strcmp(spec, "cpu") == 0;
    if (want_cpu) {
        memset(&devs[n], 0, sizeof devs[n]);
        snprintf(devs[n].name, sizeof devs[n].name, "cpu");
        devs[n].available = 1;
        devs[n].threads = threads;
        calib_cpu_model(devs[n].model, sizeof devs[n].model);
        n++;
    }
    if (all || dflt) {
        if (count == 0)
            add_cuda(&devs[n++], 0, 0);
        for (int i = 0; i < count && n < MAX_DEVICES && (all || i == 0); i++)
            add_cuda(&devs[n++], i, 1);
        /* a GPU left out must be said, not silently missing from the table */
        if (all && count > n - want_cpu)
            fprintf(stderr, "convt3d-bench: --device=all: %d CUDA devices, the table holds %d; "
                            "cuda:%d and beyond left out (name them with --device=cuda:N)\n",
                    count, n - want_cpu, n - want_cpu);
    } else if (!want_cpu) {
        convt3d_device d;
        if (convt3d_device_parse(spec, &d) != CONVT3D_SUCCESS || d.kind != CONVT3D_DEVICE_CUDA) {
            fprintf(stderr, "convt3d-bench: --device=%s: expected cpu, cuda, cuda:N or all\n",
                    spec);
            return -1;
        }
        if (d.ordinal >= count) {
            fprintf(stderr, "convt3d-bench: --device=%s: %s\n", spec,
                    count ? "no such device" : no_cuda_reason());
            if (count)
                fprintf(stderr, "  this machine has %d CUDA device(s)\n", count);
            return -1;
        }
        add_cuda(&devs[n++], d.ordinal, 1);
    }
    for (int i = 0; i < n; i++) {
        if (!devs[i].is_cuda || !devs[i].available)
            continue;
        size_t l2 = 0;
        char err[256];
        if (gpu_device_info(devs[i].ordinal, devs[i].model, sizeof devs[i].model, &l2, err,
                            sizeof err)) {
            devs[i].available = 0;
            snprintf(devs[i].why, sizeof devs[i].why, "%s", err);
        } else {
            const size_t len = strlen(devs[i].model);
            snprintf(devs[i].model + len, sizeof devs[i].model - len, ", L2 %.0f MB",
                     (double)l2 / (1 << 20));
        }
    }
    *n_dev = n;
    return 0;
}

/* --kernel=NAME: a name of this build's registry, and (without --device) the
 * devices of its kind only.  0, or -1 with the message printed. */
static int check_impl(bench_options *o)
{
    for (int i = 0; i < convt3d_implementation_count(); i++)
        if (strcmp(convt3d_implementation_name(i), o->impl) == 0) {
            if (!o->device)
                o->device = convt3d_implementation_device(i) == CONVT3D_DEVICE_CPU ? "cpu"
                                                                                  : "cuda";
            return 0;
        }
    fprintf(stderr, "convt3d-bench: --kernel=%s: no implementation of that name in this build; "
                    "they are:\n", o->impl);
    for (int i = 0; i < convt3d_implementation_count(); i++)
        fprintf(stderr, "  %s\n", convt3d_implementation_name(i));
    return -1;
}

static void calibrate_devices(const bench_options *o, device_run *devs, int n_dev)
{
    const calib_mode mode = o->calibrate      ? CALIB_FORCE
                            : o->no_calibrate ? CALIB_CACHE_ONLY
                                              : CALIB_AUTO;
    for (int i = 0; i < n_dev; i++) {
        device_run *d = &devs[i];
        if (!d->available)
            continue;
        const int rc = d->is_cuda ? calib_cuda(d->ordinal, mode, &d->floor, d->floor_err,
                                               sizeof d->floor_err)
                                  : calib_cpu(d->threads, mode, &d->floor, d->floor_err,
                                              sizeof d->floor_err);
        if (rc)
            d->floor.valid = 0;
    }
}

static void list_cases(const case_list *cl)
{
    for (size_t i = 0; i < cl->n; i++) {
        const bench_case *c = &cl->v[i];
        printf("%s  (%s)\n", c->label, c->origin);
        if (c->text[0])
            printf("  given:      %s\n", c->text);
        if (c->canonical[0])
            printf("  canonical:  %s\n", c->canonical);
        if (c->kind == CASE_RUN)
            printf("  PyTorch:    %s\n  work:       %.3f GFLOP\n", c->pytorch,
                   2e-9 * problem_macs(&c->problem));
        else
            printf("  %s\n", c->reason);
    }
}

/* Host tensors of the run's type for one problem: for f32 the f32 arrays
 * themselves; else typed copies.  0, or -1 when out of memory. */
static int alloc_typed(bench_problem *bp)
{
    if (bp->dtype == CONVT3D_F32) {
        bp->xt = bp->x;
        bp->wt = bp->w;
        bp->bt = bp->b;
        bp->yt = bp->y;
        return 0;
    }
    bp->xt = data_alloc_elems(bp->x_elems, bp->esize);
    bp->wt = data_alloc_elems(bp->w_elems, bp->esize);
    bp->yt = data_alloc_elems(bp->y_elems, bp->esize);
    bp->bt = bp->b_elems ? data_alloc_elems(bp->b_elems, bp->esize) : NULL;
    return bp->xt && bp->wt && bp->yt && (!bp->b_elems || bp->bt) ? 0 : -1;
}

/* f32 data -> the run's type (to nearest even) -> back into the f32 array,
 * so that the reference's inputs are exactly the implementations'. */
static int round_to_type(const bench_problem *bp, float *f32, void *typed, int64_t n)
{
    if ((void *)f32 == typed || n == 0)
        return 0;
    if (convt3d_convert(f32, CONVT3D_F32, typed, bp->dtype, n) != CONVT3D_SUCCESS ||
        convt3d_convert(typed, bp->dtype, f32, CONVT3D_F32, n) != CONVT3D_SUCCESS)
        return -1;
    return 0;
}

/* Inputs, reference and host output of one problem.  0, or -1 with why. */
static int problem_setup(bench_problem *bp, const bench_case *bc, const bench_options *o,
                         size_t index, char *why, size_t why_size)
{
    memset(bp, 0, sizeof *bp);
    bp->p32 = bc->problem;
    mode_apply_dtype(&bp->p32, CONVT3D_F32);
    bp->p = bp->p32;
    mode_apply_dtype(&bp->p, o->dtype);
    bp->dtype = o->dtype;
    bp->esize = convt3d_dtype_size(o->dtype);
    convt3d_output_dims(&bp->p, bp->out);
    convt3d_tensor_elems(&bp->p, &bp->x_elems, &bp->w_elems, &bp->y_elems);
    bp->b_elems = bp->p.has_bias ? bp->p.out_channels : 0;
    bp->macs = problem_macs(&bp->p);
    bp->flops = 2 * bp->macs;
    bp->bytes = (double)bp->esize * (double)(bp->x_elems + bp->w_elems + bp->b_elems + bp->y_elems);
    bp->x = data_alloc(bp->x_elems);
    bp->w = data_alloc(bp->w_elems);
    bp->y = data_alloc(bp->y_elems);
    bp->b = bp->b_elems ? data_alloc(bp->b_elems) : NULL;
    if (!bp->x || !bp->w || !bp->y || (bp->b_elems && !bp->b) || alloc_typed(bp)) {
        const double f32_bytes = 4.0 * (double)(bp->x_elems + bp->w_elems + bp->y_elems);
        snprintf(why, why_size, "out of host memory (x, w and y need %.2f GB%s)",
                 (f32_bytes + (bp->dtype == CONVT3D_F32 ? 0 : bp->bytes)) * 1e-9,
                 bp->dtype == CONVT3D_F32 ? "" : " in f32 and in the run's type");
        return -1;
    }
    /* Fresh data per problem, reproducible from --seed. */
    const uint64_t base = o->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)index * 4;
    data_fill_uniform(bp->x, bp->x_elems, base);
    data_fill_uniform(bp->w, bp->w_elems, base + 1);
    if (bp->b)
        data_fill_uniform(bp->b, bp->b_elems, base + 2);
    if (round_to_type(bp, bp->x, bp->xt, bp->x_elems) ||
        round_to_type(bp, bp->w, bp->wt, bp->w_elems) ||
        round_to_type(bp, bp->b, bp->bt, bp->b_elems)) {
        snprintf(why, why_size, "convt3d_convert to %s: %s", convt3d_dtype_name(bp->dtype),
                 convt3d_last_error());
        return -1;
    }
    return 0;
}

static void problem_release(bench_problem *bp)
{
    if (bp->xt != bp->x)
        data_free(bp->xt);
    if (bp->wt != bp->w)
        data_free(bp->wt);
    if (bp->bt != bp->b)
        data_free(bp->bt);
    if (bp->yt != bp->y)
        data_free(bp->yt);
    data_free(bp->x);
    data_free(bp->w);
    data_free(bp->y);
    data_free(bp->b);
    verify_plan_free(&bp->vp);
    memset(bp, 0, sizeof *bp);
}

/* --all-kernels: every implementation of the device that applies, forced
 * one after the other on the problem's data, checked against its reference
 * and timed like the automatic row.  g: the device buffers on a GPU, NULL on
 * the CPU. */
static void run_forced(const bench_problem *bp, const bench_settings *s, case_result *cr, int d,
                       convt3d_device dev, gpu_bufs *g)
{
    enum { MAX_FORCED = 64 };
    const char *names[MAX_FORCED];
    const int n = applicable_implementations(bp, dev, s, names, MAX_FORCED);
    cr->forced[d] = calloc(n ? (size_t)n : 1, sizeof *cr->forced[d]);
    if (!cr->forced[d]) {
        fprintf(stderr, "convt3d-bench: out of memory for --all-kernels\n");
        return;
    }
    bench_settings fs = *s;
    fs.staged = 0; /* side figures: the automatic row has them */
    fs.host_cost = 0;
    for (int i = 0; i < n; i++) {
        impl_result *r = &cr->forced[d][i];
        fs.impl = names[i];
        if (s->verbose)
            fprintf(stderr, "convt3d-bench: %s forced...\n", names[i]);
        if (g)
            run_convt3d_cuda(bp, g, &fs, r);
        else
            run_convt3d_cpu(bp, &fs, r);
        if (!r->detail[0]) /* no plan: the row still names its kernel */
            snprintf(r->detail, sizeof r->detail, "%s", names[i]);
    }
    cr->n_forced[d] = n;
    automatic_plan_description(bp, dev, s, cr->plan_desc[d], sizeof cr->plan_desc[d]);
}

static void run_on_cpu(const bench_problem *bp, const bench_options *o, const bench_settings *s,
                       case_result *cr, int d)
{
    run_convt3d_cpu(bp, s, &cr->impl[d][0]);
    cr->n_impl[d] = 1;
    if (o->baselines) {
        run_onednn(bp, s, &cr->impl[d][1], &cr->impl[d][2]);
        cr->n_impl[d] = 3;
    }
    if (o->all_kernels) {
        const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
        run_forced(bp, s, cr, d, cpu, NULL);
    }
}

static void run_on_cuda(const bench_problem *bp, const bench_options *o, const bench_settings *s,
                        case_result *cr, int d, int ordinal)
{
    char err[512];
    gpu_bufs g;
    cr->n_impl[d] = o->baselines ? 2 : 1;
    if (gpu_bufs_create(&g, ordinal, bp->xt, bp->x_elems, bp->wt, bp->w_elems, bp->bt,
                        bp->b_elems, bp->y_elems, bp->esize, err, sizeof err)) {
        for (int i = 0; i < cr->n_impl[d]; i++) {
            impl_init(&cr->impl[d][i], i ? "cuDNN" : "convt3d", i);
            impl_set(&cr->impl[d][i], IMPL_FAILED, "device buffers: %s", err);
        }
        return;
    }
    run_convt3d_cuda(bp, &g, s, &cr->impl[d][0]);
    if (o->baselines)
        cr->n_impl[d] = 1 + run_cudnn(bp, &g, s, &cr->impl[d][1]);
    if (o->all_kernels) {
        const convt3d_device dev = {CONVT3D_DEVICE_CUDA, ordinal};
        run_forced(bp, s, cr, d, dev, &g);
    }
    gpu_bufs_destroy(&g);
}

static void run_case(size_t index, const bench_case *bc, const bench_options *o,
                     const bench_settings *s, const device_run *devs, int n_dev, case_result *cr)
{
    memset(cr, 0, sizeof *cr);
    cr->bc = bc;
    cr->dtype = o->dtype;
    cr->math = o->math;
    if (bc->kind != CASE_RUN)
        return;
    cr->macs = problem_macs(&bc->problem);
    cr->flops = 2 * cr->macs;
    if (o->max_gflop > 0 && cr->flops * 1e-9 > o->max_gflop) {
        snprintf(cr->skip, sizeof cr->skip, "%.1f GFLOP > --max-gflop=%g", cr->flops * 1e-9,
                 o->max_gflop);
        return;
    }
    bench_problem bp;
    if (problem_setup(&bp, bc, o, index, cr->skip, sizeof cr->skip)) {
        cr->error = 1;
        problem_release(&bp);
        return;
    }
    cr->bytes = bp.bytes;
    verify_plan_choose(&bp.p, o->verify, o->verify_gmac * 1e9, &bp.vp);
    if (o->verbose && bp.vp.mode != VERIFY_SKIPPED)
        fprintf(stderr, "convt3d-bench: %s: reference (%.2f GMAC)...\n", bc->label,
                bp.vp.macs * 1e-9);
    char err[512];
    /* the f32 problem on the rounded values, float64 accumulation */
    if (verify_run_reference(&bp.vp, &bp.p32, bp.x, bp.w, bp.b, err, sizeof err))
        fprintf(stderr, "convt3d-bench: %s: %s: verification skipped\n", bc->label, err);
    cr->vmode = bp.vp.mode;
    snprintf(cr->vwhy, sizeof cr->vwhy, "%s", bp.vp.why);
    cr->ref_seconds = bp.vp.ref_seconds;
    cr->ran = 1;
    for (int d = 0; d < n_dev; d++) {
        if (!devs[d].available)
            continue;
        if (o->verbose)
            fprintf(stderr, "convt3d-bench: %s on %s...\n", bc->label, devs[d].name);
        if (devs[d].is_cuda)
            run_on_cuda(&bp, o, s, cr, d, devs[d].ordinal);
        else
            run_on_cpu(&bp, o, s, cr, d);
    }
    problem_release(&bp);
}

/* The oracle blocks alone, for --all-kernels runs without a summary
 * (problems without a class). */
static void oracle_summary(FILE *f, const case_result *res, size_t n, const device_run *devs,
                           int n_dev)
{
    for (int d = 0; d < n_dev; d++)
        if (devs[d].available && oracle_wanted(res, n, d)) {
            fprintf(f, "\nsummary on %s:\n", devs[d].name);
            oracle_print(f, res, n, d, 10);
        }
}

static int exit_status(const case_result *res, size_t n, int n_dev)
{
    int mismatch = 0, error = 0;
    for (size_t c = 0; c < n; c++) {
        const bench_case *bc = res[c].bc;
        if (bc->kind == CASE_INVALID || bc->kind == CASE_MALFORMED || res[c].error)
            error = 1;
        for (int d = 0; d < n_dev; d++)
            for (int i = 0; i < res[c].n_impl[d]; i++) {
                const impl_result *r = &res[c].impl[d][i];
                mismatch |= impl_mismatch(r);
                /* a baseline that fails to run only loses its comparison */
                error |= r->state == IMPL_FAILED && !r->baseline;
            }
        /* a forced kernel is convt3d too: wrong is a mismatch, failing an error */
        for (int d = 0; d < n_dev; d++)
            for (int i = 0; i < res[c].n_forced[d]; i++) {
                mismatch |= impl_mismatch(&res[c].forced[d][i]);
                error |= res[c].forced[d][i].state == IMPL_FAILED;
            }
    }
    return mismatch ? 1 : error ? 2 : 0;
}

int main(int argc, char **argv)
{
    bench_options o;
    const int parsed = cli_parse(argc, argv, &o);
    if (parsed)
        return parsed > 0 ? 0 : 2;
    tf32_environment(&o);
    const int threads = setup_threads(&o);
    const int only_calibrate =
        o.calibrate && !o.n_suites && !o.n_batches && !o.n_descs && !o.have_shape && !o.random_n;

    case_list cl = {0};
    if (!only_calibrate && cases_build(&o, &cl)) {
        cases_free(&cl);
        return 2;
    }
    if (o.list) {
        list_cases(&cl);
        cases_free(&cl);
        return 0;
    }
    device_run devs[MAX_DEVICES];
    int n_dev = 0;
    if ((o.impl && check_impl(&o)) || resolve_devices(&o, threads, devs, &n_dev)) {
        cases_free(&cl);
        return 2;
    }
    if (o.list_kernels) {
        list_implementations(&cl, devs, n_dev, o.dtype, o.math);
        cases_free(&cl);
        return 0;
    }
    calibrate_devices(&o, devs, n_dev);
    char extra[256];
    snprintf(extra, sizeof extra, "baselines: %s", o.baselines ? onednn_version() : "off");
    if (o.baselines && convt3d_has_cuda_support()) {
        const size_t len = strlen(extra);
        snprintf(extra + len, sizeof extra - len, " (cpu), %s (cuda)", cudnn_version());
    }
    report_header(stdout, devs, n_dev, &o, extra);
    if (only_calibrate)
        return 0;

    bench_settings s;
    memset(&s, 0, sizeof s);
    s.timing.budget_s = o.budget_s;
    s.timing.reps = o.reps;
    s.timing.warmup = o.warmup;
    s.timing.max_reps = 1000;
    s.user_tol = o.tol;
    s.dtype = o.dtype;
    s.math = o.math;
    s.verbose = o.verbose;
    s.staged = o.staged || o.verbose;
    s.host_cost = o.host_cost;
    s.impl = o.impl;

    case_result *res = calloc(cl.n ? cl.n : 1, sizeof *res);
    if (!res) {
        fprintf(stderr, "convt3d-bench: out of memory\n");
        return 2;
    }
    report_table_head(stdout);
    for (size_t c = 0; c < cl.n; c++) {
        run_case(c, &cl.v[c], &o, &s, devs, n_dev, &res[c]);
        report_case(stdout, &res[c], devs, n_dev, o.verbose);
    }
    report_summary(stdout, res, cl.n, devs, n_dev, &o);
    if (summary_wanted(res, cl.n))
        summary_print(stdout, res, cl.n, devs, n_dev, 10);
    else if (o.all_kernels)
        oracle_summary(stdout, res, cl.n, devs, n_dev);
    int status = exit_status(res, cl.n, n_dev);
    if (o.json && json_write(o.json, res, cl.n, devs, n_dev, &o)) {
        fprintf(stderr, "convt3d-bench: could not write --json=%s\n", o.json);
        status = status ? status : 2;
    }
    cudnn_release();
    for (size_t c = 0; c < cl.n; c++)
        for (int d = 0; d < MAX_DEVICES; d++)
            free(res[c].forced[d]);
    free(res);
    cases_free(&cl);
    return status;
}
