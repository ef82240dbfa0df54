/* Types shared by the parts of convt3d-bench: one problem's host data, the
 * run settings, and what each implementation's measurement produced. */
#ifndef CONVT3D_BENCH_H
#define CONVT3D_BENCH_H

#include <stdint.h>

#include "convt3d.h"
#include "modes.h"
#include "timing.h"
#include "verify.h"

/* One problem, ready to run: inputs with fresh random data, a host output
 * buffer, and the reference output (or a sample of it).  The data is drawn
 * in f32 and rounded to the run's type; x, w, b keep those rounded values in
 * f32 for the reference, so that it solves exactly the problem the
 * implementations were given. */
typedef struct bench_problem {
    convt3d_problem p;   /* in the run's data type: what every implementation gets */
    convt3d_problem p32; /* the same problem in f32: the reference's */
    convt3d_dtype dtype;
    size_t esize;        /* bytes an element of the run's type takes */
    int64_t out[3];
    int64_t x_elems, w_elems, y_elems, b_elems;
    float *x, *w, *b;    /* f32 values of the inputs (b NULL without bias) */
    void *xt, *wt, *bt;  /* the inputs in the run's type (x, w, b themselves for f32) */
    void *yt;            /* scratch output in the run's type, host */
    float *y;            /* it widened to f32 for the check (yt itself for f32) */
    double macs, flops, bytes; /* flops = 2 * useful MACs; bytes = x + w + bias + y once */
    verify_plan vp;
} bench_problem;

typedef struct bench_settings {
    timing_cfg timing;
    double user_tol; /* --tol (< 0: not given): tightens each row's tolerance */
    convt3d_dtype dtype;      /* --dtype */
    convt3d_math_mode math;   /* --math: convt3d's plans, cuDNN's configuration */
    int verbose;
    int staged;      /* also time CUDA with host pointers */
    int host_cost;   /* also measure the host time per execute_on_stream call (CUDA) */
    const char *impl; /* the implementation forced on convt3d, or NULL */
} bench_settings;

typedef enum impl_state {
    IMPL_OK = 0,      /* ran (the verification says whether it was right) */
    IMPL_SKIPPED,     /* not run: not built, no device, not asked for */
    IMPL_UNSUPPORTED, /* the library cannot express or run this problem */
    IMPL_FAILED       /* an error while running */
} impl_state;

typedef struct impl_result {
    char name[32];    /* "convt3d", "oneDNN 2.6 ncdhw", "oneDNN 3.2 any", "cuDNN" */
    char detail[160]; /* kernel / implementation / algorithm chosen */
    impl_state state;
    char note[400];   /* why not run, or the error */
    int baseline;     /* 1 for the comparison libraries */
    bench_prec prec;  /* what the row computes in: its tolerance and its ceiling */
    double tol;       /* the relative L2 bound its check applied */
    int without_bias; /* timed without the bias (cuDNN backward-data has none) */
    timing_stats time;
    timing_stats staged; /* CUDA with host pointers, when measured */
    double host_us;      /* host time per execute_on_stream call (--host-cost), 0: not measured */
    int host_calls;      /* the calls that figure is the median per-call cost of, per round */
    verify_result verify;
} impl_result;

/* Fills r's identity and clears the rest (precision fp32 until set). */
void impl_init(impl_result *r, const char *name, int baseline);
/* The row's precision and the tolerance that follows (with --tol). */
void impl_set_prec(impl_result *r, bench_prec prec, const bench_settings *s);
/* Sets state and a printf-style note. */
void impl_set(impl_result *r, impl_state state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Compares the output in bp->yt (the run's type) with the reference into
 * r->verify, at r->tol: widened to f32 first.  add_bias: see verify_compare.
 * 0, or -1 (r set FAILED) when the output could not be widened. */
int impl_verify(impl_result *r, const bench_problem *bp, const float *add_bias);

/* convt3d_plan_create_ex() with s->impl forced (when set). */
convt3d_status bench_plan_create(convt3d_plan **plan, const bench_problem *bp,
                                 convt3d_device device, const bench_settings *s);

/* --kernels: for each problem and device, every implementation with
 * "applies" (and the automatic choice) or the reason it does not, for the
 * run's data type and math mode. */
struct case_list;
struct device_run;
void list_implementations(const struct case_list *cl, const struct device_run *devs, int n_dev,
                          convt3d_dtype dtype, convt3d_math_mode math);

/* --all-kernels: the names of the implementations of dev's kind that apply
 * to bp in s's math mode (static storage), at most max; returns how many. */
int applicable_implementations(const bench_problem *bp, convt3d_device dev,
                               const bench_settings *s, const char **names, int max);

/* The automatic plan's description, the line CONVT3D_VERBOSE=1 prints for
 * it (tiling, mode), caught from stderr: the public API names the kernel
 * only.  buf "" when none was caught. */
void automatic_plan_description(const bench_problem *bp, convt3d_device dev,
                                const bench_settings *s, char *buf, size_t size);

/* The implementations (one file each). */
void run_convt3d_cpu(const bench_problem *bp, const bench_settings *s, impl_result *r);
/* oneDNN twice: plain layouts and its preferred ones (reorders excluded). */
void run_onednn(const bench_problem *bp, const bench_settings *s, impl_result *plain,
                impl_result *any);
const char *onednn_version(void);

struct gpu_bufs;
void run_convt3d_cuda(const bench_problem *bp, struct gpu_bufs *g, const bench_settings *s,
                      impl_result *r);
/* cuDNN in the run's mode: one row, or two (fp32 FMA and TF32) for 3xtf32;
 * returns the number of rows written into r (room for two). */
int run_cudnn(const bench_problem *bp, struct gpu_bufs *g, const bench_settings *s,
              impl_result *r);
const char *cudnn_version(void);
void cudnn_release(void);

#endif
