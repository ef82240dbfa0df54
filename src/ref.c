/* The reference: the contract's formula transcribed directly, accumulated in
 * double.  It is the oracle for every test and for convt3d-bench --verify, so
 * it favours being obviously right over being fast.  The only concession to
 * speed is that, per spatial dim, the (k, i) pairs that reach each output
 * coordinate are listed once up front, so the inner loops visit only real taps. */
#include <stdlib.h>

#include "internal.h"

/* For every output coordinate o of one dim, the pairs (k, i) with
 * o = i*s - p + k*l and 0 <= i < in.  Stored as a CSR-like table. */
typedef struct tap_list {
    int64_t *start; /* out + 1 entries */
    int64_t *k, *i; /* start[out] entries each */
} tap_list;

static void tap_list_free(tap_list *t)
{
    free(t->start);
    free(t->k);
    free(t->i);
}

static int tap_list_build(const convt3d_shape *s, int d, tap_list *t)
{
    const int64_t out = s->out[d], kk = s->k[d];
    int64_t count = 0;
    t->start = malloc((size_t)(out + 1) * sizeof *t->start);
    t->k = NULL;
    t->i = NULL;
    if (!t->start)
        return 0;
    for (int pass = 0; pass < 2; pass++) {
        count = 0;
        for (int64_t o = 0; o < out; o++) {
            t->start[o] = count;
            for (int64_t k = 0; k < kk; k++) {
                const int64_t num = o + s->p[d] - k * s->l[d];
                if (num < 0 || num % s->s[d])
                    continue;
                const int64_t i = num / s->s[d];
                if (i >= s->in[d])
                    continue;
                if (pass == 1) {
                    t->k[count] = k;
                    t->i[count] = i;
                }
                count++;
            }
        }
        t->start[out] = count;
        if (pass == 0) {
            t->k = malloc((size_t)(count ? count : 1) * sizeof *t->k);
            t->i = malloc((size_t)(count ? count : 1) * sizeof *t->i);
            if (!t->k || !t->i)
                return 0;
        }
    }
    return 1;
}

/* One output element: bias + sum over input channels of the group and over
 * the listed taps of each dim. */
static double ref_one_output(const convt3d_shape *s, const tap_list t[3], const float *x,
                             const float *w, int64_t n, int64_t g, int64_t oc, const int64_t o[3])
{
    const int64_t kvol = s->k_volume;
    double acc = 0.0;
    for (int64_t ic = 0; ic < s->cig; ic++) {
        const int64_t ci = g * s->cig + ic;
        const float *xc = x + n * s->x_stride[0] + ci * s->x_stride[1];
        const float *wc = w + (ci * s->cog + oc) * kvol;
        for (int64_t a = t[0].start[o[0]]; a < t[0].start[o[0] + 1]; a++)
            for (int64_t b = t[1].start[o[1]]; b < t[1].start[o[1] + 1]; b++)
                for (int64_t c = t[2].start[o[2]]; c < t[2].start[o[2] + 1]; c++) {
                    const double xv = xc[t[0].i[a] * s->x_stride[2] + t[1].i[b] * s->x_stride[3] +
                                         t[2].i[c] * s->x_stride[4]];
                    const double wv =
                        wc[(t[0].k[a] * s->k[1] + t[1].k[b]) * s->k[2] + t[2].k[c]];
                    acc += xv * wv;
                }
    }
    return acc;
}

/* f32 tensors (and the widened ones of ref_half). */
static void ref_f32(const convt3d_shape *sp, const tap_list t[3], const float *x,
                    const float *weight, const float *bias, float *y)
{
    const convt3d_shape s = *sp;
    for (int64_t n = 0; n < s.n; n++)
        for (int64_t g = 0; g < s.groups; g++)
            for (int64_t oc = 0; oc < s.cog; oc++) {
                const int64_t co = g * s.cog + oc;
                const double b = s.has_bias ? (double)bias[co] : 0.0;
                int64_t o[3];
                for (o[0] = 0; o[0] < s.out[0]; o[0]++)
                    for (o[1] = 0; o[1] < s.out[1]; o[1]++)
                        for (o[2] = 0; o[2] < s.out[2]; o[2]++) {
                            const double v = ref_one_output(&s, t, x, weight, n, g, oc, o);
                            y[n * s.y_stride[0] + co * s.y_stride[1] + o[0] * s.y_stride[2] +
                              o[1] * s.y_stride[3] + o[2] * s.y_stride[4]] = (float)(b + v);
                        }
            }
}

/* A tensor of the problem's type widened to a new f32 array (exact), or
 * NULL when out of memory. */
static float *widened(const void *src, convt3d_dtype type, int64_t count)
{
    float *out = malloc((size_t)(count ? count : 1) * sizeof *out);
    if (out)
        convt3d_convert(src, type, out, CONVT3D_F32, count);
    return out;
}

/* f16 and bf16 tensors: the f32 computation on the widened inputs (every
 * half value is exact in f32), each output rounded from its f32 sum (itself
 * rounded once from the double) to y's type. */
static convt3d_status ref_half(const convt3d_shape *s, const tap_list t[3], const void *x,
                               const void *weight, const void *bias, void *y)
{
    float *xf = widened(x, s->x_type, s->x_elems);
    float *wf = widened(weight, s->w_type, s->w_elems);
    float *bf = s->has_bias ? widened(bias, s->bias_type, s->cout) : NULL;
    float *yf = malloc((size_t)s->y_elems * sizeof *yf);
    const int ok = xf && wf && yf && (bf || !s->has_bias);
    if (ok) {
        ref_f32(s, t, xf, wf, bf, yf);
        for (int64_t i = 0; i < s->y_elems; i++)
            convt3d_store_f32(y, s->y_type, i, yf[i]);
    }
    free(xf);
    free(wf);
    free(bf);
    free(yf);
    return ok ? CONVT3D_SUCCESS
              : convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "reference: widened tensors");
}

convt3d_status convt3d_reference(const convt3d_problem *problem, const void *x,
                                 const void *weight, const void *bias, void *y)
{
    convt3d_shape s;
    convt3d_clear_error();
    convt3d_status st = convt3d_shape_from_problem(problem, &s);
    if (st != CONVT3D_SUCCESS)
        return st;
    if (!x || !weight || !y)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "%s is NULL",
                            !x ? "x" : !weight ? "weight" : "y");
    if (s.has_bias && !bias)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "bias is NULL but has_bias is set");

    tap_list t[3] = {{0}};
    int ok = 1;
    for (int d = 0; d < 3; d++)
        ok = ok && tap_list_build(&s, d, &t[d]);
    if (!ok) {
        for (int d = 0; d < 3; d++)
            tap_list_free(&t[d]);
        return convt3d_fail(CONVT3D_ERR_OUT_OF_MEMORY, "reference: tap tables");
    }
    if (s.y_type == CONVT3D_F32)
        ref_f32(&s, t, x, weight, bias, y);
    else
        st = ref_half(&s, t, x, weight, bias, y);
    for (int d = 0; d < 3; d++)
        tap_list_free(&t[d]);
    return st;
}
