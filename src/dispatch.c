/* Device parsing and selection, plan lifetime, and routing each call to one
 * backend.  Backends live in a table: adding one is one new file plus one
 * entry below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct convt3d_plan {
    convt3d_problem problem;
    convt3d_shape shape;
    convt3d_device device;
    const convt3d_backend *backend;
    convt3d_backend_state *state;
    const char *kernel_name;
};

/* In order of preference for AUTO. */
static const convt3d_backend *const backends[] = {
#if CONVT3D_HAVE_CUDA
    &convt3d_backend_cuda,
#endif
    &convt3d_backend_cpu,
};

static int verbose(void)
{
    const char *v = getenv("CONVT3D_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

int convt3d_has_cuda_support(void) { return CONVT3D_HAVE_CUDA; }

int convt3d_cuda_device_count(void) { return convt3d_gpu_device_count(); }

convt3d_status convt3d_device_parse(const char *text, convt3d_device *device)
{
    convt3d_clear_error();
    if (!text || !device)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "%s is NULL", !text ? "text" : "device");
    convt3d_device d = {CONVT3D_DEVICE_AUTO, 0};
    if (strcmp(text, "auto") == 0) {
        d.kind = CONVT3D_DEVICE_AUTO;
    } else if (strcmp(text, "cpu") == 0) {
        d.kind = CONVT3D_DEVICE_CPU;
    } else if (strcmp(text, "cuda") == 0) {
        d.kind = CONVT3D_DEVICE_CUDA;
    } else if (strncmp(text, "cuda:", 5) == 0) {
        const char *num = text + 5;
        size_t len = strspn(num, "0123456789");
        if (len == 0 || len > 4 || num[len] != '\0')
            return convt3d_fail(CONVT3D_ERR_BAD_DEVICE_STRING,
                                "device \"%s\": the ordinal after \"cuda:\" must be a decimal "
                                "number 0..9999",
                                text);
        d.kind = CONVT3D_DEVICE_CUDA;
        d.ordinal = atoi(num);
    } else {
        return convt3d_fail(CONVT3D_ERR_BAD_DEVICE_STRING,
                            "device \"%s\" is not one of auto, cpu, cuda, cuda:N", text);
    }
    *device = d;
    return CONVT3D_SUCCESS;
}

/* AUTO -> CONVT3D_DEVICE if set, else the first GPU, else the CPU.  A
 * concrete device is checked against what this build and machine have. */
static convt3d_status resolve_device(convt3d_device asked, convt3d_device *out)
{
    convt3d_device d = asked;
    if (d.kind == CONVT3D_DEVICE_AUTO) {
        const char *env = getenv("CONVT3D_DEVICE");
        if (env && *env) {
            convt3d_status st = convt3d_device_parse(env, &d);
            if (st != CONVT3D_SUCCESS)
                return convt3d_fail(st, "CONVT3D_DEVICE=\"%s\" is not one of auto, cpu, cuda, "
                                        "cuda:N",
                                    env);
        }
    }
    if (d.kind == CONVT3D_DEVICE_AUTO) {
        d.kind = convt3d_gpu_device_count() > 0 ? CONVT3D_DEVICE_CUDA : CONVT3D_DEVICE_CPU;
        d.ordinal = 0;
    }
    if (d.kind == CONVT3D_DEVICE_CPU) {
        d.ordinal = 0;
    } else if (d.kind == CONVT3D_DEVICE_CUDA) {
        if (!CONVT3D_HAVE_CUDA)
            return convt3d_fail(CONVT3D_ERR_NO_CUDA_SUPPORT,
                                "device cuda:%d asked for, but this convt3d was built without "
                                "CUDA support",
                                d.ordinal);
        const int count = convt3d_gpu_device_count();
        if (d.ordinal < 0 || d.ordinal >= count)
            return convt3d_fail(CONVT3D_ERR_NO_DEVICE,
                                "device cuda:%d asked for, but this machine has %d usable CUDA "
                                "device(s)",
                                d.ordinal, count);
    } else {
        return convt3d_fail(CONVT3D_ERR_BAD_DEVICE_STRING, "device kind %d is not a "
                                                           "convt3d_device_kind",
                            (int)d.kind);
    }
    *out = d;
    return CONVT3D_SUCCESS;
}

static const convt3d_backend *backend_for(convt3d_device_kind kind)
{
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (backends[i]->kind == kind)
            return backends[i];
    return NULL;
}

/* -1: host memory; >= 0: the CUDA device that owns p. */
static int pointer_home(const void *p)
{
    return CONVT3D_HAVE_CUDA ? convt3d_gpu_pointer_device(p) : -1;
}

convt3d_status convt3d_plan_create(convt3d_plan **plan, const convt3d_problem *problem,
                                   convt3d_device device, const float *weight, const float *bias)
{
    convt3d_clear_error();
    if (!plan)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "plan (the out-pointer) is NULL");
    convt3d_shape shape;
    convt3d_status st = convt3d_shape_from_problem(problem, &shape);
    if (st != CONVT3D_SUCCESS)
        return st;
    if (!weight)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "weight is NULL");
    if (shape.has_bias && !bias)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "bias is NULL but has_bias is set");
    convt3d_device dev;
    if ((st = resolve_device(device, &dev)) != CONVT3D_SUCCESS)
        return st;
    const convt3d_backend *be = backend_for(dev.kind);
    if (!be)
        return convt3d_fail(CONVT3D_ERR_INTERNAL, "no backend for device kind %d", (int)dev.kind);

    const int w_home = pointer_home(weight);
    const int b_home = shape.has_bias ? pointer_home(bias) : w_home;
    if (w_home != b_home)
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                            "weight and bias must both be host or both be device pointers");
    if (w_home >= 0 && (dev.kind != CONVT3D_DEVICE_CUDA || w_home != dev.ordinal))
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                            "weight lives on cuda:%d but the plan runs on %s%s", w_home,
                            dev.kind == CONVT3D_DEVICE_CPU ? "cpu" : "another device",
                            dev.kind == CONVT3D_DEVICE_CPU ? "" : " (cross-device)");

    convt3d_plan *p = calloc(1, sizeof *p);
    if (!p)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "plan allocation failed");
    p->problem = *problem;
    p->shape = shape;
    p->device = dev;
    p->backend = be;
    st = be->create(&shape, dev.ordinal, weight, shape.has_bias ? bias : NULL, w_home >= 0,
                    &p->state, &p->kernel_name);
    if (st != CONVT3D_SUCCESS) {
        free(p);
        return st;
    }
    if (verbose())
        fprintf(stderr, "convt3d: plan on %s:%d, kernel %s\n", be->name, dev.ordinal,
                p->kernel_name);
    *plan = p;
    return CONVT3D_SUCCESS;
}

convt3d_status convt3d_execute_on_stream(const convt3d_plan *plan, const float *x, float *y,
                                         void *stream)
{
    convt3d_clear_error();
    if (!plan || !x || !y)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "%s is NULL",
                            !plan ? "plan" : !x ? "x" : "y");
    const int x_home = pointer_home(x), y_home = pointer_home(y);
    int on_device = 0;
    if (plan->device.kind == CONVT3D_DEVICE_CPU) {
        if (x_home >= 0 || y_home >= 0)
            return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                                "%s is a CUDA device pointer but the plan runs on the CPU",
                                x_home >= 0 ? "x" : "y");
        if (stream)
            return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                                "a CUDA stream was given to a CPU plan");
    } else {
        if ((x_home >= 0) != (y_home >= 0))
            return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                                "x is a %s pointer but y is a %s pointer: both must live on "
                                "the same side",
                                x_home >= 0 ? "device" : "host", y_home >= 0 ? "device" : "host");
        if (x_home >= 0 && (x_home != plan->device.ordinal || y_home != plan->device.ordinal))
            return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                                "x is on cuda:%d and y on cuda:%d but the plan runs on cuda:%d",
                                x_home, y_home, plan->device.ordinal);
        on_device = x_home >= 0;
    }
    return plan->backend->execute(plan->state, x, y, stream, on_device);
}

convt3d_status convt3d_execute(const convt3d_plan *plan, const float *x, float *y)
{
    return convt3d_execute_on_stream(plan, x, y, NULL);
}

void convt3d_plan_destroy(convt3d_plan *plan)
{
    if (!plan)
        return;
    plan->backend->destroy(plan->state);
    free(plan);
}

convt3d_device convt3d_plan_device(const convt3d_plan *plan)
{
    convt3d_device none = {CONVT3D_DEVICE_AUTO, 0};
    return plan ? plan->device : none;
}

const char *convt3d_plan_kernel_name(const convt3d_plan *plan)
{
    return plan ? plan->kernel_name : "";
}

const convt3d_problem *convt3d_plan_problem(const convt3d_plan *plan)
{
    return plan ? &plan->problem : NULL;
}

convt3d_status convt3d_forward(const convt3d_problem *problem, convt3d_device device,
                               const float *x, const float *weight, const float *bias, float *y)
{
    convt3d_plan *plan = NULL;
    convt3d_clear_error();
    if (!x || !y)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "%s is NULL", !x ? "x" : "y");
    convt3d_status st = convt3d_plan_create(&plan, problem, device, weight, bias);
    if (st != CONVT3D_SUCCESS)
        return st;
    st = convt3d_execute(plan, x, y);
    convt3d_plan_destroy(plan);
    return st;
}
