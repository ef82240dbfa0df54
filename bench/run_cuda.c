/* convt3d on a CUDA device: one plan, then convt3d_execute_on_stream with
 * device pointers, timed with CUDA events over rotating buffer sets.  With
 * --staged (or --verbose) also the host-pointer call, which stages x and y
 * through device memory: reported separately, never as the GPU time.  With
 * --host-cost also the host time per call. */
#include <stdio.h>

#include "bench.h"
#include "gpu_util.h"

typedef struct cuda_run {
    const convt3d_plan *plan;
    gpu_bufs *g;
    const void *hx;
    void *hy;
} cuda_run;

static int enqueue(void *ctx, int set, void *stream, char *err, size_t err_size)
{
    const cuda_run *c = ctx;
    const convt3d_status st =
        convt3d_execute_on_stream(c->plan, c->g->x[set], c->g->y[set], stream);
    if (st != CONVT3D_SUCCESS) {
        snprintf(err, err_size, "convt3d_execute_on_stream: %s: %s", convt3d_status_string(st),
                 convt3d_last_error());
        return -1;
    }
    return 0;
}

static int staged_once(void *ctx)
{
    const cuda_run *c = ctx;
    return convt3d_execute(c->plan, c->hx, c->hy) != CONVT3D_SUCCESS;
}

/* --host-cost: enough calls a round that timer resolution does not matter,
 * few enough that the queued kernels run in about 50 ms. */
static void measure_host_cost(cuda_run *c, impl_result *r)
{
    const double kernel_ms = r->time.median_ms > 0 ? r->time.median_ms : 1;
    int calls = (int)(50.0 / kernel_ms);
    calls = calls < 10 ? 10 : calls > 100 ? 100 : calls;
    char err[512];
    if (gpu_host_cost(enqueue, c, c->g, calls, 5, &r->host_us, err, sizeof err)) {
        fprintf(stderr, "convt3d-bench: --host-cost: %s\n", err);
        r->host_us = 0;
        return;
    }
    r->host_calls = calls;
}

void run_convt3d_cuda(const bench_problem *bp, gpu_bufs *g, const bench_settings *s,
                      impl_result *r)
{
    char err[512];
    impl_init(r, "convt3d", 0);
    impl_set_prec(r, mode_prec(bp->dtype, s->math), s);
    convt3d_plan *plan = NULL;
    const convt3d_device dev = {CONVT3D_DEVICE_CUDA, g->ordinal};
    convt3d_status st = bench_plan_create(&plan, bp, dev, s);
    if (st != CONVT3D_SUCCESS) {
        impl_set(r, IMPL_FAILED, "convt3d_plan_create(cuda:%d): %s: %s", g->ordinal,
                 convt3d_status_string(st), convt3d_last_error());
        return;
    }
    snprintf(r->detail, sizeof r->detail, "%s", convt3d_plan_kernel_name(plan));
    cuda_run c = {plan, g, bp->xt, bp->yt};
    double first = 0;
    if (gpu_poison(g, g->y[0], g->y_elems, err, sizeof err) || gpu_sync(g, err, sizeof err)) {
        impl_set(r, IMPL_FAILED, "%s", err);
        convt3d_plan_destroy(plan);
        return;
    }
    const double t0 = bench_now();
    if (enqueue(&c, 0, g->stream, err, sizeof err) || gpu_sync(g, err, sizeof err) ||
        (first = bench_now() - t0, gpu_download(g, bp->yt, g->y[0], bp->y_elems, err, sizeof err))) {
        impl_set(r, IMPL_FAILED, "%s", err);
        convt3d_plan_destroy(plan);
        return;
    }
    if (impl_verify(r, bp, NULL)) {
        convt3d_plan_destroy(plan);
        return;
    }
    if (gpu_time(&s->timing, enqueue, &c, g, first, &r->time, err, sizeof err)) {
        impl_set(r, IMPL_FAILED, "while timing: %s", err);
        convt3d_plan_destroy(plan);
        return;
    }
    r->state = IMPL_OK;
    if (s->host_cost)
        measure_host_cost(&c, r);
    if (s->staged) {
        /* A shorter budget: this figure is a side note. */
        timing_cfg tc = s->timing;
        tc.budget_s *= 0.25;
        const double t1 = bench_now();
        if (staged_once(&c) == 0) {
            const double staged_first = bench_now() - t1;
            if (time_host(&tc, staged_once, &c, staged_first, &r->staged))
                r->staged.valid = 0;
        }
    }
    convt3d_plan_destroy(plan);
}
