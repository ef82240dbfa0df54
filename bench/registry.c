/* The library's registry as the bench sees it, through the public API only:
 * forcing an implementation on convt3d's plans (--kernel=NAME) and listing,
 * for each problem and device, which implementations apply (--kernels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cases.h"
#include "results.h"

convt3d_status bench_plan_create(convt3d_plan **plan, const bench_problem *bp,
                                 convt3d_device device, const bench_settings *s)
{
    convt3d_plan_options opts;
    convt3d_plan_options_init(&opts);
    opts.implementation = s->impl;
    opts.math_mode = s->math;
    return convt3d_plan_create_ex(plan, &bp->p, device, bp->wt, bp->bt, &opts);
}

int applicable_implementations(const bench_problem *bp, convt3d_device dev,
                               const bench_settings *s, const char **names, int max)
{
    convt3d_plan_options opts;
    convt3d_plan_options_init(&opts);
    opts.math_mode = s->math;
    int n = 0;
    for (int i = 0; i < convt3d_implementation_count() && n < max; i++) {
        const char *name = convt3d_implementation_name(i);
        if (convt3d_implementation_device(i) == dev.kind &&
            convt3d_implementation_applies(name, &bp->p, dev, &opts) == CONVT3D_SUCCESS)
            names[n++] = name;
    }
    return n;
}

static convt3d_device device_of(const device_run *d)
{
    convt3d_device dev = CONVT3D_DEVICE_CPU_INIT;
    if (d->is_cuda) {
        dev.kind = CONVT3D_DEVICE_CUDA;
        dev.ordinal = d->ordinal;
    }
    return dev;
}

/* The implementation the library picks on its own, planned with zero
 * weights (host memory: the plan copies them to the device itself); NULL
 * with the reason in why when no plan can be made. */
static const char *automatic_choice(const convt3d_problem *p, convt3d_device dev,
                                    const convt3d_plan_options *opts, char *why, size_t why_size)
{
    int64_t x_elems, w_elems, y_elems;
    if (convt3d_tensor_elems(p, &x_elems, &w_elems, &y_elems) != CONVT3D_SUCCESS) {
        snprintf(why, why_size, "%s", convt3d_last_error());
        return NULL;
    }
    /* zero bytes are zero in every type; sized for the widest */
    float *w = calloc((size_t)w_elems, sizeof *w);
    float *b = calloc((size_t)p->out_channels, sizeof *b);
    const char *name = NULL;
    convt3d_plan *plan = NULL;
    if (!w || !b) {
        snprintf(why, why_size, "out of host memory for the weights");
    } else if (convt3d_plan_create_ex(&plan, p, dev, w, b, opts) != CONVT3D_SUCCESS) {
        snprintf(why, why_size, "%s", convt3d_last_error());
    } else {
        name = convt3d_plan_kernel_name(plan); /* static storage: outlives the plan */
        convt3d_plan_destroy(plan);
    }
    free(w);
    free(b);
    return name;
}

/* convt3d_last_error() without its leading "<name> " */
static const char *reason_after_name(const char *name, convt3d_status st)
{
    const char *e = convt3d_last_error();
    const size_t n = strlen(name);
    if (st == CONVT3D_ERR_NOT_APPLICABLE && strncmp(e, name, n) == 0 && e[n] == ' ')
        return e + n + 1;
    return *e ? e : convt3d_status_string(st);
}

static void list_one(const convt3d_problem *p, const convt3d_plan_options *opts,
                     const device_run *d)
{
    const convt3d_device dev = device_of(d);
    const convt3d_device_kind kind = d->is_cuda ? CONVT3D_DEVICE_CUDA : CONVT3D_DEVICE_CPU;
    char why[512] = "";
    const char *chosen = d->available ? automatic_choice(p, dev, opts, why, sizeof why) : NULL;
    printf("  %s%s%s\n", d->name, chosen || !d->available ? "" : ": no plan: ",
           chosen || !d->available ? "" : why);
    for (int i = 0; i < convt3d_implementation_count(); i++) {
        if (convt3d_implementation_device(i) != kind)
            continue;
        const char *name = convt3d_implementation_name(i);
        if (!d->available) {
            printf("    %-40s not checked: %s\n", name, d->why);
            continue;
        }
        const convt3d_status st = convt3d_implementation_applies(name, p, dev, opts);
        if (st == CONVT3D_SUCCESS)
            printf("    %-40s applies%s\n", name,
                   chosen && strcmp(chosen, name) == 0 ? "  <- automatic choice" : "");
        else
            printf("    %-40s %s\n", name, reason_after_name(name, st));
    }
}

void list_implementations(const case_list *cl, const device_run *devs, int n_dev,
                          convt3d_dtype dtype, convt3d_math_mode math)
{
    convt3d_plan_options opts;
    convt3d_plan_options_init(&opts);
    opts.math_mode = math;
    printf("data type %s, math %s\n", convt3d_dtype_name(dtype), mode_math_name(math));
    for (size_t c = 0; c < cl->n; c++) {
        const bench_case *bc = &cl->v[c];
        printf("%s  (%s)\n", bc->label, bc->origin);
        if (bc->canonical[0])
            printf("  %s\n", bc->canonical);
        if (bc->kind != CASE_RUN) {
            printf("  %s\n", bc->reason);
            continue;
        }
        convt3d_problem p = bc->problem;
        mode_apply_dtype(&p, dtype);
        for (int d = 0; d < n_dev; d++)
            list_one(&p, &opts, &devs[d]);
    }
}
