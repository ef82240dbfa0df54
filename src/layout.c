/* Problem validation, the output-shape formula and PyTorch's output_size
 * rule, tensor strides for NCDHW and NDHWC, and the one stride-phase table.
 * Everything here is plain C with no knowledge of any backend (each backend
 * repacks the weights into its own layout). */
#include <string.h>

#include "internal.h"

static const char *const dim_name = "dhw";

/* Checked int64 helpers: the problem's numbers come straight from callers and
 * fuzzers, so every product and sum of them is checked. */
static int mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static int add_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

void convt3d_problem_init(convt3d_problem *problem)
{
    if (!problem)
        return;
    const convt3d_problem defaults = CONVT3D_PROBLEM_INIT;
    *problem = defaults;
}

static convt3d_status check_counts(const convt3d_problem *p)
{
    if (p->batch < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_SIZE, "batch=%lld must be >= 1", (long long)p->batch);
    if (p->in_channels < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_SIZE, "in_channels=%lld must be >= 1",
                            (long long)p->in_channels);
    if (p->out_channels < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_SIZE, "out_channels=%lld must be >= 1",
                            (long long)p->out_channels);
    if (p->groups < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_GROUPS, "groups=%lld must be >= 1",
                            (long long)p->groups);
    if (p->in_channels % p->groups)
        return convt3d_fail(CONVT3D_ERR_BAD_GROUPS, "in_channels=%lld is not divisible by groups=%lld",
                            (long long)p->in_channels, (long long)p->groups);
    if (p->out_channels % p->groups)
        return convt3d_fail(CONVT3D_ERR_BAD_GROUPS,
                            "out_channels=%lld is not divisible by groups=%lld",
                            (long long)p->out_channels, (long long)p->groups);
    return CONVT3D_SUCCESS;
}

static convt3d_status check_dim(const convt3d_problem *p, int d)
{
    const char c = dim_name[d];
    if (p->in_size[d] < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_SIZE, "in_size[%d] (%c)=%lld must be >= 1", d, c,
                            (long long)p->in_size[d]);
    if (p->kernel[d] < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_KERNEL, "kernel[%d] (%c)=%lld must be >= 1", d, c,
                            (long long)p->kernel[d]);
    if (p->stride[d] < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_STRIDE, "stride[%d] (%c)=%lld must be >= 1", d, c,
                            (long long)p->stride[d]);
    if (p->dilation[d] < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_DILATION, "dilation[%d] (%c)=%lld must be >= 1", d, c,
                            (long long)p->dilation[d]);
    if (p->padding[d] < 0)
        return convt3d_fail(CONVT3D_ERR_BAD_PADDING, "padding[%d] (%c)=%lld must be >= 0", d, c,
                            (long long)p->padding[d]);
    if (p->output_padding[d] < 0)
        return convt3d_fail(CONVT3D_ERR_BAD_OUTPUT_PADDING,
                            "output_padding[%d] (%c)=%lld must be >= 0", d, c,
                            (long long)p->output_padding[d]);
    /* PyTorch's rule: op < stride OR op < dilation. */
    if (p->output_padding[d] >= p->stride[d] && p->output_padding[d] >= p->dilation[d])
        return convt3d_fail(CONVT3D_ERR_BAD_OUTPUT_PADDING,
                            "output_padding[%d]=%lld must be smaller than stride[%d]=%lld or "
                            "dilation[%d]=%lld",
                            d, (long long)p->output_padding[d], d, (long long)p->stride[d], d,
                            (long long)p->dilation[d]);
    return CONVT3D_SUCCESS;
}

static const char *dtype_name(convt3d_dtype t) { return convt3d_dtype_name(t); }

/* x, weight, bias and y share one type (as PyTorch requires of a module's
 * input, weight and bias): f32, f16 or bf16.  A value that is not a
 * convt3d_dtype, or a mix, is refused with its own status so that callers
 * can tell it from a malformed problem. */
static convt3d_status check_dtypes(const convt3d_problem *p)
{
    const convt3d_dtype t[4] = {p->x_type, p->w_type, p->bias_type, p->y_type};
    static const char *const what[4] = {"x_type", "w_type", "bias_type", "y_type"};
    for (int i = 0; i < 4; i++)
        if (t[i] != CONVT3D_F32 && t[i] != CONVT3D_F16 && t[i] != CONVT3D_BF16)
            return convt3d_fail(CONVT3D_ERR_UNSUPPORTED_DATA_TYPE,
                                "%s=%d is not a convt3d_dtype (f32 0, f16 1, bf16 2)", what[i],
                                (int)t[i]);
    for (int i = 1; i < 4; i++)
        if (t[i] != t[0])
            return convt3d_fail(CONVT3D_ERR_UNSUPPORTED_DATA_TYPE,
                                "x_type=%s but %s=%s: x, weight, bias and y must have one type",
                                dtype_name(t[0]), what[i], dtype_name(t[i]));
    return CONVT3D_SUCCESS;
}

/* out = (in - 1)*s - 2p + l*(k - 1) + op + 1, every step checked. */
static convt3d_status output_extent(const convt3d_problem *p, int d, int64_t *out)
{
    int64_t a, b, twop, r;
    if (!mul_ok(p->in_size[d] - 1, p->stride[d], &a) ||
        !mul_ok(p->dilation[d], p->kernel[d] - 1, &b) || !mul_ok(2, p->padding[d], &twop) ||
        !add_ok(a, b, &r) || !add_ok(r, p->output_padding[d] + 1, &r))
        return convt3d_fail(CONVT3D_ERR_OVERFLOW, "output size in dim %d (%c) overflows int64", d,
                            dim_name[d]);
    r -= twop; /* both terms are >= 0 here, so this cannot overflow */
    if (r < 1)
        return convt3d_fail(CONVT3D_ERR_BAD_OUTPUT_SIZE,
                            "output size in dim %d (%c) is %lld: (in=%lld-1)*stride=%lld - "
                            "2*padding=%lld + dilation=%lld*(kernel=%lld-1) + output_padding=%lld "
                            "+ 1 must be >= 1",
                            d, dim_name[d], (long long)r, (long long)p->in_size[d],
                            (long long)p->stride[d], (long long)p->padding[d],
                            (long long)p->dilation[d], (long long)p->kernel[d],
                            (long long)p->output_padding[d]);
    *out = r;
    return CONVT3D_SUCCESS;
}

/* n * c * d * h * w with overflow reported under the tensor's name. */
static convt3d_status elems_of(const char *what, int64_t n, int64_t c, const int64_t dims[3],
                               int64_t *out)
{
    int64_t r;
    if (!mul_ok(n, c, &r) || !mul_ok(r, dims[0], &r) || !mul_ok(r, dims[1], &r) ||
        !mul_ok(r, dims[2], &r))
        return convt3d_fail(CONVT3D_ERR_OVERFLOW, "the element count of %s overflows int64", what);
    /* Byte offsets must fit too: backends compute them with int64. */
    if (r > INT64_MAX / (int64_t)sizeof(float))
        return convt3d_fail(CONVT3D_ERR_OVERFLOW, "the byte size of %s overflows int64", what);
    *out = r;
    return CONVT3D_SUCCESS;
}

void convt3d_tensor_strides(convt3d_layout layout, int64_t c, const int64_t dims[3],
                            int64_t stride[5])
{
    const int64_t hw = dims[1] * dims[2], dhw = dims[0] * hw;
    if (layout == CONVT3D_LAYOUT_NDHWC) {
        stride[1] = 1;
        stride[4] = c;
        stride[3] = c * dims[2];
        stride[2] = c * hw;
        stride[0] = c * dhw;
    } else {
        stride[4] = 1;
        stride[3] = dims[2];
        stride[2] = hw;
        stride[1] = dhw;
        stride[0] = c * dhw;
    }
}

/* Every per-dimension value the backends compute with (sizes, kernel, stride,
 * padding, dilation, output_padding, output size) stays within
 * CONVT3D_MAX_DIM_VALUE, so that their tiling and phase arithmetic (products
 * such as stride * kernel, sums of a few such terms) cannot leave int64.  The
 * element counts, checked above, may still go far beyond it. */
static convt3d_status check_dim_range(const convt3d_problem *p, const int64_t out[3])
{
    for (int d = 0; d < 3; d++) {
        const struct {
            const char *name;
            int64_t v;
        } f[7] = {{"in_size", p->in_size[d]}, {"kernel", p->kernel[d]},
                  {"stride", p->stride[d]},   {"padding", p->padding[d]},
                  {"dilation", p->dilation[d]}, {"output_padding", p->output_padding[d]},
                  {"output size", out[d]}};
        for (int i = 0; i < 7; i++)
            if (f[i].v > CONVT3D_MAX_DIM_VALUE)
                return convt3d_fail(CONVT3D_ERR_OVERFLOW,
                                    "%s[%d] (%c)=%lld exceeds %lld, the largest per-dimension "
                                    "value convt3d supports",
                                    f[i].name, d, dim_name[d], (long long)f[i].v,
                                    (long long)CONVT3D_MAX_DIM_VALUE);
    }
    return CONVT3D_SUCCESS;
}

convt3d_status convt3d_shape_from_problem(const convt3d_problem *p, convt3d_shape *shape)
{
    if (!p)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "problem is NULL");
    convt3d_status st = check_counts(p);
    for (int d = 0; d < 3 && st == CONVT3D_SUCCESS; d++)
        st = check_dim(p, d);
    if (st != CONVT3D_SUCCESS)
        return st;
    if (p->layout != CONVT3D_LAYOUT_NCDHW && p->layout != CONVT3D_LAYOUT_NDHWC)
        return convt3d_fail(CONVT3D_ERR_BAD_LAYOUT, "layout=%d is neither NCDHW (0) nor NDHWC (1)",
                            (int)p->layout);
    if ((st = check_dtypes(p)) != CONVT3D_SUCCESS)
        return st;

    convt3d_shape s;
    memset(&s, 0, sizeof s);
    for (int d = 0; d < 3; d++)
        if ((st = output_extent(p, d, &s.out[d])) != CONVT3D_SUCCESS)
            return st;
    int64_t one = 1, wk;
    if ((st = elems_of("x", p->batch, p->in_channels, p->in_size, &s.x_elems)) ||
        (st = elems_of("y", p->batch, p->out_channels, s.out, &s.y_elems)) ||
        (st = elems_of("weight", p->in_channels, p->out_channels / p->groups, p->kernel,
                       &s.w_elems)))
        return st;
    /* Kernel volume times channels also bounds the repacked weights (padded oc). */
    if (!mul_ok(p->kernel[0] * p->kernel[1], p->kernel[2], &wk) ||
        !mul_ok(wk, p->in_channels, &one) || !mul_ok(one, p->out_channels / p->groups + 8, &one))
        return convt3d_fail(CONVT3D_ERR_OVERFLOW, "the repacked weight size overflows int64");
    if ((st = check_dim_range(p, s.out)) != CONVT3D_SUCCESS)
        return st;

    s.n = p->batch;
    s.cin = p->in_channels;
    s.cout = p->out_channels;
    s.groups = p->groups;
    s.cig = p->in_channels / p->groups;
    s.cog = p->out_channels / p->groups;
    for (int d = 0; d < 3; d++) {
        s.in[d] = p->in_size[d];
        s.k[d] = p->kernel[d];
        s.s[d] = p->stride[d];
        s.p[d] = p->padding[d];
        s.op[d] = p->output_padding[d];
        s.l[d] = p->dilation[d];
    }
    s.layout = p->layout;
    s.has_bias = p->has_bias != 0;
    s.x_type = p->x_type;
    s.w_type = p->w_type;
    s.bias_type = p->bias_type;
    s.y_type = p->y_type;
    s.math = CONVT3D_MATH_F32;
    convt3d_tensor_strides(s.layout, s.cin, s.in, s.x_stride);
    convt3d_tensor_strides(s.layout, s.cout, s.out, s.y_stride);
    s.in_spatial = s.in[0] * s.in[1] * s.in[2];
    s.out_spatial = s.out[0] * s.out[1] * s.out[2];
    s.k_volume = wk;
    s.macs = (double)s.n * (double)s.cin * (double)s.in_spatial * (double)s.cog * (double)wk;
    *shape = s;
    return CONVT3D_SUCCESS;
}

convt3d_status convt3d_validate(const convt3d_problem *problem)
{
    convt3d_shape s;
    convt3d_clear_error();
    return convt3d_shape_from_problem(problem, &s);
}

convt3d_status convt3d_output_dims(const convt3d_problem *problem, int64_t out_size[3])
{
    convt3d_shape s;
    convt3d_clear_error();
    if (!out_size)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "out_size is NULL");
    convt3d_status st = convt3d_shape_from_problem(problem, &s);
    if (st == CONVT3D_SUCCESS)
        memcpy(out_size, s.out, sizeof s.out);
    return st;
}

convt3d_status convt3d_tensor_elems(const convt3d_problem *problem, int64_t *x_elems,
                                    int64_t *w_elems, int64_t *y_elems)
{
    convt3d_shape s;
    convt3d_clear_error();
    convt3d_status st = convt3d_shape_from_problem(problem, &s);
    if (st != CONVT3D_SUCCESS)
        return st;
    if (x_elems)
        *x_elems = s.x_elems;
    if (w_elems)
        *w_elems = s.w_elems;
    if (y_elems)
        *y_elems = s.y_elems;
    return CONVT3D_SUCCESS;
}

int64_t convt3d_gcd64(int64_t a, int64_t b)
{
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* floor(a / b) for b > 0 */
static int64_t floor_div64(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

convt3d_phase convt3d_phase_of(const convt3d_shape *shape, int dim, int64_t r)
{
    /* k reaches phase r when k*l == r (mod s).  The reaching taps repeat every
     * s / gcd(s, l) taps, so scan one period for the first. */
    const int64_t s = shape->s[dim], l = shape->l[dim], k = shape->k[dim], p = shape->p[dim];
    const int64_t g = convt3d_gcd64(s, l % s ? l % s : s);
    convt3d_phase ph = {-1, s / g, 0, 0, l / g, 0, 0};
    for (int64_t t = 0; t < k && t < ph.tap_step; t++)
        if ((t * l) % s == r % s) {
            ph.first_tap = t;
            ph.taps = (k - 1 - t) / ph.tap_step + 1;
            ph.m0 = (t * l - r) / s; /* exact: t*l = r (mod s), and t*l >= r */
            break;
        }
    /* q with 0 <= q*s + r - p <= out - 1 */
    ph.qlo = p >= r ? (p - r + s - 1) / s : 0;
    const int64_t qhi = floor_div64(shape->out[dim] - 1 + p - r, s);
    ph.qcount = qhi >= ph.qlo ? qhi - ph.qlo + 1 : 0;
    return ph;
}

int64_t convt3d_phase_delta(const convt3d_shape *shape, int dim, int64_t c,
                            const convt3d_phase *phase, int64_t t)
{
    return (c + shape->p[dim]) / shape->s[dim] - phase->m0 - t * phase->dm;
}

convt3d_status convt3d_set_output_size(convt3d_problem *problem, const int64_t out_size[3])
{
    convt3d_clear_error();
    if (!problem || !out_size)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "%s is NULL",
                            !problem ? "problem" : "out_size");
    convt3d_problem q = *problem;
    for (int d = 0; d < 3; d++)
        q.output_padding[d] = 0;
    convt3d_shape s;
    convt3d_status st = convt3d_shape_from_problem(&q, &s);
    if (st != CONVT3D_SUCCESS)
        return st;
    /* PyTorch's _output_padding: each size in [min, min + stride - 1]. */
    for (int d = 0; d < 3; d++) {
        const int64_t lo = s.out[d];
        int64_t hi;
        if (!add_ok(lo, q.stride[d] - 1, &hi))
            hi = INT64_MAX;
        if (out_size[d] < lo || out_size[d] > hi)
            return convt3d_fail(CONVT3D_ERR_BAD_OUTPUT_SIZE,
                                "out_size[%d] (%c)=%lld is outside [%lld, %lld], the sizes "
                                "stride[%d]=%lld and output_padding 0..%lld give",
                                d, dim_name[d], (long long)out_size[d], (long long)lo,
                                (long long)hi, d, (long long)q.stride[d],
                                (long long)(q.stride[d] - 1));
        q.output_padding[d] = out_size[d] - lo;
    }
    if ((st = convt3d_shape_from_problem(&q, &s)) != CONVT3D_SUCCESS)
        return st;
    *problem = q;
    return CONVT3D_SUCCESS;
}
