/* CPU backend (placeholder until the OpenMP phase-gather kernel lands): a
 * plain output-stationary loop, correct for the whole contract but not fast. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct convt3d_backend_state {
    convt3d_shape shape;
    float *weight; /* PyTorch layout copy */
    float *bias;   /* NULL without bias */
};

static convt3d_status cpu_create(const convt3d_shape *shape, int ordinal, const float *weight,
                                 const float *bias, int weights_on_device,
                                 convt3d_backend_state **state, const char **kernel_name)
{
    (void)ordinal;
    if (weights_on_device)
        return convt3d_fail(CONVT3D_ERR_POINTER_LOCATION, "CPU plan given device weights");
    convt3d_backend_state *st = calloc(1, sizeof *st);
    if (!st)
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan state");
    st->shape = *shape;
    st->weight = malloc((size_t)shape->w_elems * sizeof(float));
    st->bias = shape->has_bias ? malloc((size_t)shape->cout * sizeof(float)) : NULL;
    if (!st->weight || (shape->has_bias && !st->bias)) {
        free(st->weight);
        free(st->bias);
        free(st);
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "CPU plan weights");
    }
    memcpy(st->weight, weight, (size_t)shape->w_elems * sizeof(float));
    if (st->bias)
        memcpy(st->bias, bias, (size_t)shape->cout * sizeof(float));
    *state = st;
    *kernel_name = "cpu/f32_direct_gather_placeholder";
    return CONVT3D_SUCCESS;
}

static float cpu_one_output(const convt3d_shape *s, const float *x, const float *w, int64_t n,
                            int64_t g, int64_t oc, const int64_t o[3])
{
    float acc = 0.0f;
    for (int64_t ic = 0; ic < s->cig; ic++) {
        const int64_t ci = g * s->cig + ic;
        for (int64_t kd = 0; kd < s->k[0]; kd++) {
            int64_t nd = o[0] + s->p[0] - kd * s->l[0];
            if (nd < 0 || nd % s->s[0] || nd / s->s[0] >= s->in[0])
                continue;
            for (int64_t kh = 0; kh < s->k[1]; kh++) {
                int64_t nh = o[1] + s->p[1] - kh * s->l[1];
                if (nh < 0 || nh % s->s[1] || nh / s->s[1] >= s->in[1])
                    continue;
                for (int64_t kw = 0; kw < s->k[2]; kw++) {
                    int64_t nw = o[2] + s->p[2] - kw * s->l[2];
                    if (nw < 0 || nw % s->s[2] || nw / s->s[2] >= s->in[2])
                        continue;
                    acc += x[n * s->x_stride[0] + ci * s->x_stride[1] +
                             nd / s->s[0] * s->x_stride[2] + nh / s->s[1] * s->x_stride[3] +
                             nw / s->s[2] * s->x_stride[4]] *
                           w[((ci * s->cog + oc) * s->k[0] + kd) * s->k[1] * s->k[2] +
                             kh * s->k[2] + kw];
                }
            }
        }
    }
    return acc;
}

static convt3d_status cpu_execute(const convt3d_backend_state *st, const float *x, float *y,
                                  void *stream, int on_device)
{
    (void)stream;
    (void)on_device;
    const convt3d_shape *s = &st->shape;
    const int64_t rows = s->n * s->cout;
#pragma omp parallel for schedule(dynamic)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t n = r / s->cout, co = r % s->cout, g = co / s->cog, oc = co % s->cog;
        const float b = st->bias ? st->bias[co] : 0.0f;
        int64_t o[3];
        for (o[0] = 0; o[0] < s->out[0]; o[0]++)
            for (o[1] = 0; o[1] < s->out[1]; o[1]++)
                for (o[2] = 0; o[2] < s->out[2]; o[2]++)
                    y[n * s->y_stride[0] + co * s->y_stride[1] + o[0] * s->y_stride[2] +
                      o[1] * s->y_stride[3] + o[2] * s->y_stride[4]] =
                        b + cpu_one_output(s, x, st->weight, n, g, oc, o);
    }
    return CONVT3D_SUCCESS;
}

static void cpu_destroy(convt3d_backend_state *st)
{
    if (!st)
        return;
    free(st->weight);
    free(st->bias);
    free(st);
}

const convt3d_backend convt3d_backend_cpu = {"cpu", CONVT3D_DEVICE_CPU, cpu_create, cpu_execute,
                                             cpu_destroy};
