/* Types shared by the parts of convt3d-bench: one problem's host data, the
 * run settings, and what each implementation's measurement produced. */
#ifndef CONVT3D_BENCH_H
#define CONVT3D_BENCH_H

#include <stdint.h>

#include "convt3d.h"
#include "timing.h"
#include "verify.h"

/* One problem, ready to run: inputs with fresh random data, a host output
 * buffer, and the reference output (or a sample of it). */
typedef struct bench_problem {
    convt3d_problem p;
    int64_t out[3];
    int64_t x_elems, w_elems, y_elems, b_elems;
    float *x, *w, *b; /* b NULL without bias */
    float *y;         /* scratch output, host */
    double macs, flops, bytes; /* flops = 2 * useful MACs; bytes = x + w + bias + y once */
    verify_plan vp;
} bench_problem;

typedef struct bench_settings {
    timing_cfg timing;
    double tol;      /* verification tolerance, relative L2 */
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
    char name[32];    /* "convt3d", "oneDNN ncdhw", "oneDNN any", "cuDNN" */
    char detail[160]; /* kernel / implementation / algorithm chosen */
    impl_state state;
    char note[400];   /* why not run, or the error */
    int baseline;     /* 1 for the comparison libraries */
    int without_bias; /* timed without the bias (cuDNN backward-data has none) */
    timing_stats time;
    timing_stats staged; /* CUDA with host pointers, when measured */
    double host_us;      /* host time per execute_on_stream call (--host-cost), 0: not measured */
    int host_calls;      /* the calls that figure is the median per-call cost of, per round */
    verify_result verify;
} impl_result;

/* Fills r's identity and clears the rest. */
void impl_init(impl_result *r, const char *name, int baseline);
/* Sets state and a printf-style note. */
void impl_set(impl_result *r, impl_state state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Compares bp->y (or another host output) with the reference into r->verify. */
void impl_verify(impl_result *r, const bench_problem *bp, const float *y, const float *add_bias,
                 const bench_settings *s);

/* convt3d_plan_create_ex() with s->impl forced (when set). */
convt3d_status bench_plan_create(convt3d_plan **plan, const bench_problem *bp,
                                 convt3d_device device, const bench_settings *s);

/* --kernels: for each problem and device, every implementation with
 * "applies" (and the automatic choice) or the reason it does not. */
struct case_list;
struct device_run;
void list_implementations(const struct case_list *cl, const struct device_run *devs, int n_dev);

/* The implementations (one file each). */
void run_convt3d_cpu(const bench_problem *bp, const bench_settings *s, impl_result *r);
/* oneDNN twice: plain layouts and its preferred ones (reorders excluded). */
void run_onednn(const bench_problem *bp, const bench_settings *s, impl_result *plain,
                impl_result *any);
const char *onednn_version(void);

struct gpu_bufs;
void run_convt3d_cuda(const bench_problem *bp, struct gpu_bufs *g, const bench_settings *s,
                      impl_result *r);
void run_cudnn(const bench_problem *bp, struct gpu_bufs *g, const bench_settings *s,
               impl_result *r);
const char *cudnn_version(void);
void cudnn_release(void);

#endif
