/* Shared helpers of the CUnit suite (see test_util.h). */
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if CONVT3D_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int gpu_cases_skipped = 0;

rng rng_make(uint64_t seed)
{
    rng r = {seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull};
    return r;
}

uint64_t rng_next(rng *r)
{
    /* splitmix64: tiny, and good enough for test data. */
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t rng_int(rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

uint64_t test_seed(void)
{
    const char *s = getenv("CONVT3D_TEST_SEED");
    return s && *s ? strtoull(s, NULL, 0) : 20261129u;
}

void fill_uniform(rng *r, float *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        a[i] = (float)(2.0 * rng_uniform(r) - 1.0);
}

void fill_small_ints(rng *r, float *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        a[i] = (float)rng_int(r, -4, 4);
}

static const uint32_t poison_bits = 0x7fbadbadu; /* a signalling-NaN payload */

void poison(float *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        memcpy(&a[i], &poison_bits, sizeof(float));
}

int is_poison(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b == poison_bits;
}

int64_t count_poison(const float *a, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += is_poison(a[i]);
    return c;
}

double rel_l2_error(const float *a, const float *ref, int64_t n)
{
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isinf(a[i]))
            return INFINITY;
        const double d = (double)a[i] - (double)ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num) / (den > 1e-300 ? sqrt(den) : 1.0);
}

double max_abs_error(const float *a, const float *ref, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - (double)ref[i]);
        if (!(d <= m)) /* NaN-safe: a NaN difference wins */
            m = isnan(d) ? INFINITY : d;
    }
    return m;
}

void problem_describe(const convt3d_problem *p, char *buf, size_t size)
{
    convt3d_problem_to_string(p, buf, size);
}

convt3d_problem make_problem(int64_t n, int64_t cin, int64_t cout, int64_t g, int64_t d,
                             int64_t h, int64_t w, int64_t k, int64_t s, int64_t p, int64_t op,
                             int has_bias, convt3d_layout layout)
{
    convt3d_problem pr = CONVT3D_PROBLEM_INIT;
    pr.batch = n;
    pr.in_channels = cin;
    pr.out_channels = cout;
    pr.groups = g;
    pr.in_size[0] = d;
    pr.in_size[1] = h;
    pr.in_size[2] = w;
    for (int i = 0; i < 3; i++) {
        pr.kernel[i] = k;
        pr.stride[i] = s;
        pr.padding[i] = p;
        pr.output_padding[i] = op;
    }
    pr.has_bias = has_bias;
    pr.layout = layout;
    return pr;
}

convt3d_problem random_problem(rng *r, double max_macs, int64_t max_elems)
{
    for (;;) {
        convt3d_problem p = CONVT3D_PROBLEM_INIT;
        /* Groups: mostly 1, often a few, sometimes depthwise. */
        const int64_t gsel = rng_int(r, 0, 9);
        p.groups = gsel < 4 ? 1 : gsel < 8 ? rng_int(r, 2, 4) : rng_int(r, 5, 12);
        const int64_t cig = gsel >= 8 ? rng_int(r, 1, 2) : rng_int(r, 1, 7);
        const int64_t cog = gsel >= 8 ? rng_int(r, 1, 2) : rng_int(r, 1, 13);
        p.in_channels = p.groups * cig;
        p.out_channels = p.groups * cog;
        p.batch = rng_int(r, 1, 3);
        for (int d = 0; d < 3; d++) {
            p.in_size[d] = rng_int(r, 1, 8);
            p.kernel[d] = rng_int(r, 1, 5);
            p.stride[d] = rng_int(r, 1, 3);
            p.dilation[d] = rng_int(r, 0, 3) == 0 ? rng_int(r, 2, 3) : 1;
            p.padding[d] = rng_int(r, 0, p.dilation[d] * (p.kernel[d] - 1) + 1);
            const int64_t opmax = (p.stride[d] > p.dilation[d] ? p.stride[d] : p.dilation[d]) - 1;
            p.output_padding[d] = rng_int(r, 0, opmax);
        }
        p.layout = rng_int(r, 0, 1) ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
        p.has_bias = (int)rng_int(r, 0, 1);
        convt3d_shape s;
        if (convt3d_shape_from_problem(&p, &s) != CONVT3D_SUCCESS)
            continue;
        if (s.macs > max_macs || s.x_elems > max_elems || s.y_elems > max_elems)
            continue;
        return p;
    }
}

const char *gpu_skip_reason(void)
{
    if (!convt3d_has_cuda_support())
        return "this convt3d was built without CUDA";
    if (convt3d_cuda_device_count() == 0)
        return "no CUDA device on this machine";
    return NULL;
}

/* Copies n bytes to the GPU at off bytes into a new allocation (the
 * DEVICE_POINTERS modes); the allocation, or NULL on failure. */
static void *to_device(const void *h, size_t n, size_t off)
{
#if CONVT3D_HAVE_CUDA
    void *d = NULL;
    if (cudaMalloc(&d, n + off ? n + off : 1) != cudaSuccess)
        return NULL;
    if (h && cudaMemcpy((char *)d + off, h, n, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(d);
        return NULL;
    }
    return d;
#else
    (void)h;
    (void)n;
    (void)off;
    return NULL;
#endif
}

static int from_device(void *h, const void *d, size_t n)
{
#if CONVT3D_HAVE_CUDA
    return cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost) == cudaSuccess;
#else
    (void)h;
    (void)d;
    (void)n;
    return 0;
#endif
}

static void device_free(void *d)
{
#if CONVT3D_HAVE_CUDA
    cudaFree(d);
#else
    (void)d;
#endif
}

/* plan_create_ex (forcing impl unless NULL, in math mode math) + execute +
 * destroy; a forced plan must report impl as its kernel. */
static convt3d_status run_plan(const convt3d_problem *p, convt3d_device dev, const char *impl,
                               convt3d_math_mode math, const void *x, const void *w,
                               const void *b, void *y, char *why, size_t why_size)
{
    convt3d_plan_options opt;
    convt3d_plan_options_init(&opt);
    opt.implementation = impl;
    opt.math_mode = math;
    convt3d_plan *plan = NULL;
    convt3d_status st = convt3d_plan_create_ex(&plan, p, dev, w, b, &opt);
    if (st != CONVT3D_SUCCESS) {
        snprintf(why, why_size, "plan_create_ex forcing %s: %s: %s", impl ? impl : "nothing",
                 convt3d_status_string(st), convt3d_last_error());
        return st;
    }
    const char *name = convt3d_plan_kernel_name(plan);
    if (impl && (!name || strcmp(name, impl) != 0)) {
        snprintf(why, why_size, "forced %s, but the plan runs %s", impl, name ? name : "(null)");
        convt3d_plan_destroy(plan);
        return CONVT3D_ERR_INTERNAL;
    }
    st = convt3d_execute(plan, x, y);
    if (st != CONVT3D_SUCCESS)
        snprintf(why, why_size, "execute on %s: %s: %s", name, convt3d_status_string(st),
                 convt3d_last_error());
    convt3d_plan_destroy(plan);
    return st;
}

/* One run on the backend, host or device pointers (the caller poisoned y);
 * impl forced when not NULL.  Tensors of the problem's type: nx, nw, ny
 * elements (bias: out_channels) of esize bytes. */
static convt3d_status run_backend(const convt3d_problem *p, convt3d_device dev, pointer_mode mode,
                                  const char *impl, convt3d_math_mode math, const void *x,
                                  const void *w, const void *b, void *y, int64_t nx, int64_t nw,
                                  int64_t ny, size_t esize, char *why, size_t why_size)
{
    if (mode == HOST_POINTERS) {
        if (impl || math != CONVT3D_MATH_F32)
            return run_plan(p, dev, impl, math, x, w, b, y, why, why_size);
        convt3d_status st = convt3d_forward(p, dev, x, w, b, y);
        if (st != CONVT3D_SUCCESS)
            snprintf(why, why_size, "%s: %s", convt3d_status_string(st), convt3d_last_error());
        return st;
    }
    const size_t off = mode == DEVICE_POINTERS_MISALIGNED ? esize : 0;
    void *dx = to_device(x, (size_t)nx * esize, off), *dw = to_device(w, (size_t)nw * esize, off);
    void *dy = to_device(y, (size_t)ny * esize, off);
    void *db = p->has_bias ? to_device(b, (size_t)p->out_channels * esize, off) : NULL;
    convt3d_status st = CONVT3D_ERR_CUDA;
    if (dx && dw && dy && (db || !p->has_bias)) {
        char *ax = (char *)dx + off, *aw = (char *)dw + off, *ay = (char *)dy + off;
        char *ab = db ? (char *)db + off : NULL;
        if (impl || math != CONVT3D_MATH_F32)
            st = run_plan(p, dev, impl, math, ax, aw, ab, ay, why, why_size);
        else if ((st = convt3d_forward(p, dev, ax, aw, ab, ay)) != CONVT3D_SUCCESS)
            snprintf(why, why_size, "%s: %s", convt3d_status_string(st), convt3d_last_error());
        if (st == CONVT3D_SUCCESS && !from_device(y, ay, (size_t)ny * esize)) {
            st = CONVT3D_ERR_CUDA;
            snprintf(why, why_size, "copying y back failed");
        }
    } else {
        snprintf(why, why_size, "test could not allocate device buffers");
    }
    device_free(dx);
    device_free(dw);
    device_free(dy);
    device_free(db);
    return st;
}

/* ||y - ref|| / ||reference(|x|, |w|, |b|)||, ref = reference(x, w, b);
 * x, w, b are overwritten. */
static double error_vs_magnitude(const convt3d_problem *p, float *x, float *w, float *b,
                                 const float *y, const float *ref, int64_t nx, int64_t nw,
                                 int64_t ny)
{
    float *mag = malloc((size_t)ny * sizeof *mag);
    double num = 0.0, den = 0.0;
    if (mag) {
        for (int64_t i = 0; i < nx; i++)
            x[i] = fabsf(x[i]);
        for (int64_t i = 0; i < nw; i++)
            w[i] = fabsf(w[i]);
        for (int64_t i = 0; i < p->out_channels; i++)
            b[i] = fabsf(b[i]);
        if (convt3d_reference(p, x, w, b, mag) == CONVT3D_SUCCESS)
            for (int64_t i = 0; i < ny; i++) {
                const double d = (double)y[i] - ref[i];
                num += d * d;
                den += (double)mag[i] * mag[i];
            }
    }
    free(mag);
    return den > 0.0 ? sqrt(num) / sqrt(den) : HUGE_VAL;
}

check_result check_backend(const convt3d_problem *p, convt3d_device dev, uint64_t seed,
                           pointer_mode mode, double tol)
{
    return check_implementation(p, dev, NULL, seed, mode, tol);
}

check_result check_implementation(const convt3d_problem *p, convt3d_device dev, const char *impl,
                                  uint64_t seed, pointer_mode mode, double tol)
{
    return check_implementation_math(p, dev, impl, CONVT3D_MATH_F32, seed, mode, tol);
}

double mode_tolerance(convt3d_dtype type, convt3d_math_mode math, double f32_tol)
{
    if (type == CONVT3D_F16)
        return 1e-3;
    if (type == CONVT3D_BF16)
        return 8e-3;
    if (math == CONVT3D_MATH_TF32)
        return 1e-3;
    return f32_tol > 1e-5 ? 1e-5 : f32_tol; /* f32 and 3xtf32: the fp32 contract */
}

/* The largest integer up to which every integer is exact in the type: the
 * small-integer pass is bit-exact while every output stays within it. */
static double exact_integers_up_to(convt3d_dtype type)
{
    return type == CONVT3D_F16 ? 2048.0 : type == CONVT3D_BF16 ? 256.0 : 16777216.0;
}

/* a rounded in place to the type's values (f32: unchanged). */
static void round_to_type(float *a, int64_t n, convt3d_dtype type)
{
    if (type == CONVT3D_F32)
        return;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        convt3d_convert(&a[i], CONVT3D_F32, &h, type, 1);
        convt3d_convert(&h, type, &a[i], CONVT3D_F32, 1);
    }
}

/* Tensors of the problem's type for the backend: f32 arrays are used as
 * they are, others converted into new buffers (NULL when out of memory). */
static void *typed_copy(const float *a, int64_t n, convt3d_dtype type)
{
    if (type == CONVT3D_F32)
        return (void *)a;
    void *t = malloc((size_t)(n ? n : 1) * convt3d_dtype_size(type));
    if (t)
        convt3d_convert(a, CONVT3D_F32, t, type, n);
    return t;
}

/* Frees a typed_copy() of a (nothing when it is a itself). */
static void free_typed(void *t, const float *a)
{
    if (t != (const void *)a)
        free(t);
}

/* y of the problem's type widened into f32 y; a NaN (unwritten: the
 * poison of a 16-bit output is all ones, a NaN in f16 and bf16) becomes the
 * f32 poison so that count_poison() sees it. */
static void widen_output(const void *ty, float *y, int64_t n, convt3d_dtype type)
{
    if (type == CONVT3D_F32)
        return;
    convt3d_convert(ty, type, y, CONVT3D_F32, n);
    for (int64_t i = 0; i < n; i++)
        if (isnan(y[i]))
            poison(&y[i], 1);
}

check_result check_implementation_math(const convt3d_problem *p, convt3d_device dev,
                                       const char *impl, convt3d_math_mode math, uint64_t seed,
                                       pointer_mode mode, double tol)
{
    check_result res = {0};
    if (dev.kind == CONVT3D_DEVICE_CUDA && gpu_skip_reason()) {
        res.skipped = 1;
        res.ok = 1;
        snprintf(res.message, sizeof res.message, "%s", gpu_skip_reason());
        return res;
    }
    int64_t nx, nw, ny;
    if (convt3d_tensor_elems(p, &nx, &nw, &ny) != CONVT3D_SUCCESS) {
        snprintf(res.message, sizeof res.message, "invalid problem: %s", convt3d_last_error());
        return res;
    }
    const convt3d_dtype type = p->y_type;
    const size_t esize = convt3d_dtype_size(type);
    /* the reference: the f32 problem on the same (type-rounded) values */
    convt3d_problem pf = *p;
    pf.x_type = pf.w_type = pf.bias_type = pf.y_type = CONVT3D_F32;
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
    float *b = malloc((size_t)p->out_channels * sizeof *b);
    float *y = malloc((size_t)ny * sizeof *y), *ref = malloc((size_t)ny * sizeof *ref);
    void *ty = type == CONVT3D_F32 ? (void *)y : malloc((size_t)ny * esize);
    void *tx = NULL, *tw = NULL, *tb = NULL;
    double exact_diff = 0.0;
    if (!x || !w || !b || !y || !ref || !ty) {
        snprintf(res.message, sizeof res.message, "test ran out of host memory");
        goto out;
    }
    rng r = rng_make(seed);
    for (int pass = 0; pass < 2; pass++) {
        void (*fill)(rng *, float *, int64_t) = pass == 0 ? fill_small_ints : fill_uniform;
        fill(&r, x, nx);
        fill(&r, w, nw);
        fill(&r, b, p->out_channels);
        round_to_type(x, nx, type);
        round_to_type(w, nw, type);
        round_to_type(b, p->out_channels, type);
        poison(ref, ny);
        if (convt3d_reference(&pf, x, w, b, ref) != CONVT3D_SUCCESS) {
            snprintf(res.message, sizeof res.message, "reference failed: %s",
                     convt3d_last_error());
            goto out;
        }
        if (type != CONVT3D_F32) {
            free_typed(tx, x);
            free_typed(tw, w);
            free_typed(tb, b);
            tx = typed_copy(x, nx, type);
            tw = typed_copy(w, nw, type);
            tb = typed_copy(b, p->out_channels, type);
            if (!tx || !tw || !tb) {
                snprintf(res.message, sizeof res.message, "test ran out of host memory");
                goto out;
            }
            memset(ty, 0xff, (size_t)ny * esize);
        } else {
            tx = x;
            tw = w;
            tb = b;
            poison(y, ny);
        }
        if (run_backend(p, dev, mode, impl, math, tx, tw, tb, ty, nx, nw, ny, esize,
                        res.message, sizeof res.message) != CONVT3D_SUCCESS)
            goto out;
        widen_output(ty, y, ny, type);
        res.unwritten += count_poison(y, ny);
        if (pass == 0) {
            /* bit-exact while every output is an integer the type holds */
            double biggest = 0.0;
            for (int64_t i = 0; i < ny; i++)
                biggest = fabs(ref[i]) > biggest ? fabs(ref[i]) : biggest;
            res.exact_diff = max_abs_error(y, ref, ny);
            exact_diff = biggest <= exact_integers_up_to(type) ? res.exact_diff : 0.0;
        } else {
            res.rel_l2 = rel_l2_error(y, ref, ny);
        }
    }
    /* A result that cancels to near zero has a relative error no fp32 sum
     * can meet; there the error is judged against the size of the summed
     * contributions (the reference on |x|, |w|, |bias|), as the fuzz target
     * does.  Data of the last pass: x, w, b, y, ref still hold it. */
    res.rel_l2_mag = res.rel_l2;
    if (res.rel_l2 > tol && res.unwritten == 0)
        res.rel_l2_mag = error_vs_magnitude(&pf, x, w, b, y, ref, nx, nw, ny);
    res.ok = res.unwritten == 0 && exact_diff == 0.0 && res.rel_l2_mag <= tol;
    if (!res.ok)
        snprintf(res.message, sizeof res.message,
                 "%s data, math %d: unwritten=%lld, small-int max diff=%g (must be 0), rel "
                 "L2=%.3g, vs the contributions' size %.3g (tol %.1g)",
                 convt3d_dtype_name(type), (int)math, (long long)res.unwritten, exact_diff,
                 res.rel_l2, res.rel_l2_mag, tol);
out:
    free_typed(tx, x);
    free_typed(tw, w);
    free_typed(tb, b);
    free_typed(ty, y);
    free(x);
    free(w);
    free(b);
    free(y);
    free(ref);
    return res;
}

void assert_check(const check_result *res, const convt3d_problem *p, uint64_t seed)
{
    if (res->skipped) {
        gpu_cases_skipped++;
        return;
    }
    if (!res->ok) {
        char desc[512];
        problem_describe(p, desc, sizeof desc);
        printf("\n  FAILED: %s\n    problem: %s\n    seed: %llu\n", res->message, desc,
               (unsigned long long)seed);
    }
    CU_ASSERT(res->ok);
}

/* ---- skips ------------------------------------------------------------ */

#define SKIP_MAX 64
static struct {
    char test[128], why[256];
} skips[SKIP_MAX];
static int nskips;

void test_skip(const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    printf("\n  SKIPPED: %s ", why);
    const CU_pTest t = CU_get_current_test();
    const char *name = t && t->pName ? t->pName : "?";
    if (nskips > 0 && strcmp(skips[nskips - 1].test, name) == 0)
        return; /* one entry per test */
    if (nskips < SKIP_MAX) {
        snprintf(skips[nskips].test, sizeof skips[nskips].test, "%s", name);
        snprintf(skips[nskips].why, sizeof skips[nskips].why, "%s", why);
    }
    nskips++;
}

int tests_skipped(void) { return nskips; }

void print_skips(void)
{
    for (int i = 0; i < nskips && i < SKIP_MAX; i++)
        printf("  skipped: %s -- %s\n", skips[i].test, skips[i].why);
}

/* ---- every implementation of the registry --------------------------- */

/* A device of the kind, ordinal 0. */
static convt3d_device device_of(convt3d_device_kind kind)
{
    convt3d_device d = {kind, 0};
    return d;
}

/* The numeric modes the registry harness tries on every implementation:
 * the default first, then each math mode on f32 data and each half type. */
static const struct {
    convt3d_dtype type;
    convt3d_math_mode math;
} kModes[] = {{CONVT3D_F32, CONVT3D_MATH_F32},  {CONVT3D_F32, CONVT3D_MATH_TF32},
              {CONVT3D_F32, CONVT3D_MATH_3XTF32}, {CONVT3D_F16, CONVT3D_MATH_F32},
              {CONVT3D_BF16, CONVT3D_MATH_F32}};
#define MODE_COUNT ((int)(sizeof kModes / sizeof kModes[0]))

impl_stats check_registry(convt3d_device_kind kind, const convt3d_problem *problems, int count,
                          uint64_t seed, pointer_mode mode, double tol)
{
    impl_stats st = {0};
    const convt3d_device dev = device_of(kind);
    const int n = convt3d_implementation_count();
    for (int i = 0; i < n; i++) {
        if (convt3d_implementation_device(i) != kind)
            continue;
        const char *name = convt3d_implementation_name(i);
        st.implementations++;
        int applied = 0, unavailable = 0;
        char unavailable_why[256] = "", last_why[256] = "";
        for (int j = 0; j < count; j++)
            for (int variant = 0; variant < 4 * MODE_COUNT; variant++) {
                const int m = variant / 4, v = variant % 4;
                /* the other modes: both layouts, one with bias (time) */
                if (m > 0 && v != 0 && v != 3)
                    continue;
                convt3d_problem p = problems[j];
                p.layout = v & 1 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
                p.has_bias = v >> 1;
                p.x_type = p.w_type = p.bias_type = p.y_type = kModes[m].type;
                convt3d_plan_options opt;
                convt3d_plan_options_init(&opt);
                opt.math_mode = kModes[m].math;
                const convt3d_status a = convt3d_implementation_applies(name, &p, dev, &opt);
                if (a == CONVT3D_ERR_NOT_APPLICABLE) {
                    snprintf(last_why, sizeof last_why, "%s", convt3d_last_error());
                    continue;
                }
                if (a == CONVT3D_ERR_NO_CUDA_SUPPORT || a == CONVT3D_ERR_NO_DEVICE) {
                    unavailable++;
                    snprintf(unavailable_why, sizeof unavailable_why, "%s",
                             convt3d_last_error());
                    continue;
                }
                if (a != CONVT3D_SUCCESS) {
                    char desc[512];
                    problem_describe(&p, desc, sizeof desc);
                    printf("\n  FAILED: implementation_applies(%s) on a valid problem: %s: %s\n"
                           "    problem: %s\n",
                           name, convt3d_status_string(a), convt3d_last_error(), desc);
                    CU_FAIL("implementation_applies failed on a valid problem");
                    st.failed++;
                    continue;
                }
                const uint64_t s = seed + (uint64_t)(1000003 * i + 4 * MODE_COUNT * j + variant);
                const check_result res = check_implementation_math(
                    &p, dev, name, kModes[m].math, s, mode,
                    mode_tolerance(kModes[m].type, kModes[m].math, tol));
                applied++;
                st.checks++;
                if (!res.ok) {
                    st.failed++;
                    printf("\n  [%s, %s data, math %d]", name, convt3d_dtype_name(kModes[m].type),
                           (int)kModes[m].math);
                }
                assert_check(&res, &p, s);
            }
        if (unavailable) {
            st.unavailable++;
            gpu_cases_skipped += kind == CONVT3D_DEVICE_CUDA;
            printf("\n  skipped %s: %s ", name, unavailable_why);
            continue;
        }
        if (applied == 0) {
            /* Not tested: this machine lacks its ISA, or the problem list
             * must grow with the registry.  Said, and not counted as run. */
            st.unavailable++;
            printf("\n  skipped %s: applies to none of the %d problems x 4 variants x %d "
                   "numeric modes (%s) ",
                   name, count, MODE_COUNT, last_why[0] ? last_why : "no reason given");
        }
    }
    if (st.checks == 0)
        test_skip("none of the %d %s implementations could run here", st.implementations,
                  kind == CONVT3D_DEVICE_CUDA ? "CUDA" : "CPU");
    return st;
}

/* CONVT3D_TEST_ONLY=word[,word...] keeps the tests whose names contain one
 * of the words: a slow tool (compute-sanitizer, valgrind) can then run a few
 * tests of a program instead of all of them. */
static int test_wanted(const char *name)
{
    const char *only = getenv("CONVT3D_TEST_ONLY");
    if (!only || !*only)
        return 1;
    char words[512];
    snprintf(words, sizeof words, "%s", only);
    char *save = NULL;
    for (char *w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save))
        if (*w && strstr(name, w))
            return 1;
    return 0;
}

void add_suite(const char *name, const test_entry *tests)
{
    CU_pSuite s = CU_add_suite(name, NULL, NULL);
    for (; s && tests->name; tests++)
        if (test_wanted(tests->name))
            CU_add_test(s, tests->name, tests->fn);
}

int problems_equal(const convt3d_problem *a, const convt3d_problem *b)
{
    if (a->batch != b->batch || a->in_channels != b->in_channels ||
        a->out_channels != b->out_channels || a->groups != b->groups ||
        a->layout != b->layout || a->has_bias != b->has_bias)
        return 0;
    for (int d = 0; d < 3; d++)
        if (a->in_size[d] != b->in_size[d] || a->kernel[d] != b->kernel[d] ||
            a->stride[d] != b->stride[d] || a->padding[d] != b->padding[d] ||
            a->output_padding[d] != b->output_padding[d] || a->dilation[d] != b->dilation[d])
            return 0;
    return 1;
}
