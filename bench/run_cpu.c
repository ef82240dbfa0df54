/* convt3d on the CPU: one plan, then the timed convt3d_execute calls. */
#include <stdio.h>

#include "bench.h"
#include "data.h"

typedef struct cpu_run {
    const convt3d_plan *plan;
    const void *x;
    void *y;
} cpu_run;

static int cpu_once(void *ctx)
{
    const cpu_run *c = ctx;
    return convt3d_execute(c->plan, c->x, c->y) != CONVT3D_SUCCESS;
}

void run_convt3d_cpu(const bench_problem *bp, const bench_settings *s, impl_result *r)
{
    impl_init(r, "convt3d", 0);
    /* the CPU computes every math mode in fp32: f32 rows are held to fp32 */
    impl_set_prec(r, mode_prec(bp->dtype, CONVT3D_MATH_F32), s);
    convt3d_plan *plan = NULL;
    const convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    convt3d_status st = bench_plan_create(&plan, bp, cpu, s);
    if (st != CONVT3D_SUCCESS) {
        impl_set(r, IMPL_FAILED, "convt3d_plan_create: %s: %s", convt3d_status_string(st),
                 convt3d_last_error());
        return;
    }
    snprintf(r->detail, sizeof r->detail, "%s", convt3d_plan_kernel_name(plan));
    cpu_run c = {plan, bp->xt, bp->yt};
    data_poison_elems(bp->yt, bp->y_elems, bp->esize);
    const double t0 = bench_now();
    st = convt3d_execute(plan, bp->xt, bp->yt);
    const double first = bench_now() - t0;
    if (st != CONVT3D_SUCCESS) {
        impl_set(r, IMPL_FAILED, "convt3d_execute: %s: %s", convt3d_status_string(st),
                 convt3d_last_error());
        convt3d_plan_destroy(plan);
        return;
    }
    if (impl_verify(r, bp, NULL)) {
        convt3d_plan_destroy(plan);
        return;
    }
    if (time_host(&s->timing, cpu_once, &c, first, &r->time))
        impl_set(r, IMPL_FAILED, "convt3d_execute failed while timing: %s", convt3d_last_error());
    else
        r->state = IMPL_OK;
    convt3d_plan_destroy(plan);
}
