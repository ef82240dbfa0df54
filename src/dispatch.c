/* The public API's entry: device parsing and selection, plan options, the
 * list of every backend's implementations, plan lifetime, and routing each
 * call to one backend.  Backends live in a table: adding one is one entry
 * file plus one entry below; each backend walks its own registry of
 * implementations (internal.h). */
#include <stddef.h>
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
    convt3d_math_mode math;
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

/* ---- options ------------------------------------------------------------ */

void convt3d_plan_options_init(convt3d_plan_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->math_mode = CONVT3D_MATH_F32;
    options->implementation = NULL;
}

/* The caller's options over the defaults.  A program built against an
 * older header passes a smaller struct_size: only its fields are read.  A
 * newer one passes a larger size: accepted only where every byte past the
 * fields this library knows is zero (each new field's default is zero), so
 * that a request this library cannot honour is never silently dropped. */
static convt3d_status read_options(const convt3d_plan_options *in, convt3d_plan_options *out)
{
    convt3d_plan_options_init(out);
    if (!in)
        return CONVT3D_SUCCESS;
    const size_t known = sizeof *out, first = offsetof(convt3d_plan_options, math_mode);
    if (in->struct_size <= first || in->struct_size > ((size_t)1 << 16))
        return convt3d_fail(CONVT3D_ERR_BAD_OPTIONS,
                            "options->struct_size=%zu: set the options up with "
                            "convt3d_plan_options_init()",
                            in->struct_size);
    memcpy(out, in, in->struct_size < known ? in->struct_size : known);
    for (size_t b = known; b < in->struct_size; b++)
        if (((const unsigned char *)in)[b] != 0)
            return convt3d_fail(CONVT3D_ERR_BAD_OPTIONS,
                                "options->struct_size=%zu: byte %zu is set, but this convt3d "
                                "%s knows options of %zu bytes only",
                                in->struct_size, b, convt3d_version(), known);
    out->struct_size = known;
    if (out->math_mode != CONVT3D_MATH_F32 && out->math_mode != CONVT3D_MATH_TF32 &&
        out->math_mode != CONVT3D_MATH_3XTF32)
        return convt3d_fail(CONVT3D_ERR_UNSUPPORTED_MATH_MODE,
                            "math_mode=%d is not a convt3d_math_mode (CONVT3D_MATH_F32 0, "
                            "CONVT3D_MATH_TF32 1, CONVT3D_MATH_3XTF32 2)",
                            (int)out->math_mode);
    return CONVT3D_SUCCESS;
}

/* ---- the implementations of every backend ------------------------------- */

/* Global index i -> (backend, index within its registry); NULL when out of range. */
static const convt3d_backend *impl_at(int i, int *local)
{
    if (i < 0)
        return NULL;
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        const int n = backends[b]->impl_count();
        if (i < n) {
            *local = i;
            return backends[b];
        }
        i -= n;
    }
    return NULL;
}

int convt3d_implementation_count(void)
{
    int n = 0;
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++)
        n += backends[b]->impl_count();
    return n;
}

const char *convt3d_implementation_name(int index)
{
    int local;
    const convt3d_backend *be = impl_at(index, &local);
    return be ? be->impl_name(local) : NULL;
}

convt3d_device_kind convt3d_implementation_device(int index)
{
    int local;
    const convt3d_backend *be = impl_at(index, &local);
    return be ? be->kind : CONVT3D_DEVICE_AUTO;
}

/* The backend and local index of the implementation named exactly name. */
static const convt3d_backend *impl_named(const char *name, int *local)
{
    for (int i = 0; name; i++) {
        const convt3d_backend *be = impl_at(i, local);
        if (!be)
            break;
        if (strcmp(be->impl_name(*local), name) == 0)
            return be;
    }
    return NULL;
}

static convt3d_status unknown_impl(const char *name)
{
    return convt3d_fail(CONVT3D_ERR_UNKNOWN_IMPLEMENTATION,
                        "no implementation is named \"%s\" in this build (convt3d-bench "
                        "--kernels lists them)",
                        name);
}

/* The implementation to force: options first, then CONVT3D_IMPLEMENTATION. */
static const char *forced_name(const convt3d_plan_options *opt)
{
    if (opt->implementation && *opt->implementation)
        return opt->implementation;
    const char *env = getenv("CONVT3D_IMPLEMENTATION");
    return env && *env ? env : NULL;
}

/* A forced implementation decides what AUTO means and must match a
 * concrete device. */
static convt3d_status device_for_impl(const convt3d_backend *owner, const char *name,
                                      convt3d_device asked, convt3d_device *out)
{
    convt3d_device d = asked;
    if (d.kind == CONVT3D_DEVICE_AUTO) {
        convt3d_device env = {CONVT3D_DEVICE_AUTO, 0};
        const char *text = getenv("CONVT3D_DEVICE");
        if (text && *text && convt3d_device_parse(text, &env) == CONVT3D_SUCCESS &&
            env.kind == owner->kind)
            d = env;
        else
            d = (convt3d_device){owner->kind, 0};
    }
    if (d.kind != owner->kind && d.kind != CONVT3D_DEVICE_AUTO &&
        (d.kind == CONVT3D_DEVICE_CPU || d.kind == CONVT3D_DEVICE_CUDA))
        return convt3d_fail(CONVT3D_ERR_NOT_APPLICABLE,
                            "implementation %s runs on %s, but the plan's device is %s", name,
                            owner->name, d.kind == CONVT3D_DEVICE_CPU ? "cpu" : "cuda");
    return resolve_device(d, out);
}

convt3d_status convt3d_implementation_applies(const char *name, const convt3d_problem *problem,
                                              convt3d_device device,
                                              const convt3d_plan_options *options)
{
    convt3d_clear_error();
    if (!name)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "name is NULL");
    convt3d_shape shape;
    convt3d_plan_options opt;
    convt3d_status st = convt3d_shape_from_problem(problem, &shape);
    if (st != CONVT3D_SUCCESS || (st = read_options(options, &opt)) != CONVT3D_SUCCESS)
        return st;
    int local;
    const convt3d_backend *be = impl_named(name, &local);
    if (!be)
        return unknown_impl(name);
    convt3d_device dev;
    if ((st = device_for_impl(be, name, device, &dev)) != CONVT3D_SUCCESS)
        return st;
    shape.math = opt.math_mode;
    const convt3d_request req = {opt.math_mode, NULL, 0};
    char why[256] = "";
    st = be->impl_applies(local, &shape, dev.ordinal, &req, why, sizeof why);
    if (st == CONVT3D_ERR_NOT_APPLICABLE)
        return convt3d_fail(st, "%s does not apply: %s", name, why);
    return st;
}

/* ---- plans -------------------------------------------------------------- */

/* Where the weights may live: both on the host, or both on the plan's own
 * GPU.  Memory of another GPU is refused even where peer access would let a
 * kernel read it: a plan's pointers are on its device or on the host, never
 * silently across the interconnect (as PyTorch refuses tensors on two
 * devices).  Homes as pointer_home() gives them. */
static convt3d_status check_weight_homes(int w_home, int b_home, convt3d_device dev)
{
    if ((w_home >= 0) != (b_home >= 0))
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                            "weight is a %s pointer but bias is a %s pointer: both must be host "
                            "or both device pointers",
                            w_home >= 0 ? "device" : "host", b_home >= 0 ? "device" : "host");
    if (w_home < 0)
        return CONVT3D_SUCCESS;
    if (dev.kind != CONVT3D_DEVICE_CUDA)
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                            "weight lives on cuda:%d but the plan runs on the CPU", w_home);
    if (w_home != dev.ordinal || b_home != dev.ordinal)
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                            "weight lives on cuda:%d and bias on cuda:%d but the plan runs on "
                            "cuda:%d: pass host pointers or memory of cuda:%d",
                            w_home, b_home, dev.ordinal, dev.ordinal);
    return CONVT3D_SUCCESS;
}

convt3d_status convt3d_plan_create_ex(convt3d_plan **plan, const convt3d_problem *problem,
                                      convt3d_device device, const void *weight,
                                      const void *bias, const convt3d_plan_options *options)
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
    convt3d_plan_options opt;
    if ((st = read_options(options, &opt)) != CONVT3D_SUCCESS)
        return st;
    const char *force = forced_name(&opt);
    convt3d_device dev;
    const convt3d_backend *be;
    if (force) {
        int local;
        if (!(be = impl_named(force, &local)))
            return unknown_impl(force);
        if ((st = device_for_impl(be, force, device, &dev)) != CONVT3D_SUCCESS)
            return st;
    } else {
        if ((st = resolve_device(device, &dev)) != CONVT3D_SUCCESS)
            return st;
        if (!(be = backend_for(dev.kind)))
            return convt3d_fail(CONVT3D_ERR_INTERNAL, "no backend for device kind %d",
                                (int)dev.kind);
    }

    const int w_home = pointer_home(weight);
    const int b_home = shape.has_bias ? pointer_home(bias) : w_home;
    if ((st = check_weight_homes(w_home, b_home, dev)) != CONVT3D_SUCCESS)
        return st;

    convt3d_plan *p = calloc(1, sizeof *p);
    if (!p)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "plan allocation failed");
    shape.math = opt.math_mode;
    p->problem = *problem;
    p->shape = shape;
    p->device = dev;
    p->backend = be;
    p->math = opt.math_mode;
    const convt3d_request req = {opt.math_mode, force, verbose()};
    st = be->create(&shape, dev.ordinal, &req, weight, shape.has_bias ? bias : NULL, w_home >= 0,
                    &p->state, &p->kernel_name);
    if (st != CONVT3D_SUCCESS) {
        free(p);
        return st;
    }
    if (req.verbose)
        fprintf(stderr, "convt3d: plan on %s:%d, implementation %s%s\n", be->name, dev.ordinal,
                p->kernel_name, force ? " (forced)" : "");
    *plan = p;
    return CONVT3D_SUCCESS;
}

convt3d_status convt3d_plan_create(convt3d_plan **plan, const convt3d_problem *problem,
                                   convt3d_device device, const void *weight, const void *bias)
{
    return convt3d_plan_create_ex(plan, problem, device, weight, bias, NULL);
}

convt3d_status convt3d_execute_on_stream(const convt3d_plan *plan, const void *x, void *y,
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
                                "x is a %s pointer but y is a %s pointer: both must be host "
                                "pointers or both memory of cuda:%d, the plan's device",
                                x_home >= 0 ? "device" : "host", y_home >= 0 ? "device" : "host",
                                plan->device.ordinal);
        /* Another GPU's memory is refused even with peer access (see
         * check_weight_homes). */
        if (x_home >= 0 && (x_home != plan->device.ordinal || y_home != plan->device.ordinal))
            return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION,
                                "x is on cuda:%d and y on cuda:%d but the plan runs on cuda:%d",
                                x_home, y_home, plan->device.ordinal);
        on_device = x_home >= 0;
    }
    return plan->backend->execute(plan->state, x, y, stream, on_device);
}

convt3d_status convt3d_execute(const convt3d_plan *plan, const void *x, void *y)
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

convt3d_math_mode convt3d_plan_math_mode(const convt3d_plan *plan)
{
    return plan ? plan->math : CONVT3D_MATH_F32;
}

const convt3d_problem *convt3d_plan_problem(const convt3d_plan *plan)
{
    return plan ? &plan->problem : NULL;
}

convt3d_status convt3d_forward(const convt3d_problem *problem, convt3d_device device,
                               const void *x, const void *weight, const void *bias, void *y)
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
