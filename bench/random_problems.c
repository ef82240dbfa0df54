/* The --random distribution (random_problems.h says what it is).  Integer
 * arithmetic and one double multiply per draw only, no libm: the same seed
 * gives the same problems with any compiler and C library. */
#include "random_problems.h"

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, every seed
 * usable, good enough for choosing shapes. */
typedef struct rp_rng {
    uint64_t state;
} rp_rng;

static uint64_t rp_next(rp_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A stream per (seed, index), so that problem i does not depend on how many
 * problems come before it. */
static rp_rng rp_stream(uint64_t seed, uint64_t index)
{
    rp_rng r = {seed};
    const uint64_t a = rp_next(&r);
    rp_rng s = {a ^ (index * 0xd1b54a32d192ed03ULL)};
    rp_next(&s);
    return s;
}

/* Uniform in [lo, hi] (53 random bits scaled: exact and portable). */
static int64_t rp_int(rp_rng *r, int64_t lo, int64_t hi)
{
    const double u = (double)(rp_next(r) >> 11) * (1.0 / 9007199254740992.0);
    const int64_t v = lo + (int64_t)(u * (double)(hi - lo + 1));
    return v > hi ? hi : v;
}

/* True with probability percent/100. */
static int rp_chance(rp_rng *r, int percent) { return rp_int(r, 0, 99) < percent; }

/* Log-uniform by octave in [1, max]: an octave 2^e <= max at random, then
 * its power of two (half the time: networks favour them) or any value of
 * the octave. */
static int64_t rp_channels(rp_rng *r, int64_t max)
{
    int emax = 0;
    while ((INT64_C(2) << emax) <= max)
        emax++;
    const int64_t lo = INT64_C(1) << rp_int(r, 0, emax);
    const int64_t hi = 2 * lo - 1 < max ? 2 * lo - 1 : max;
    return rp_chance(r, 50) ? lo : rp_int(r, lo, hi);
}

/* Three values: one for all dims (same_percent), else one each. */
static void rp_triple(rp_rng *r, int same_percent, int64_t lo, int64_t hi, int64_t v[3])
{
    if (rp_chance(r, same_percent)) {
        v[0] = v[1] = v[2] = rp_int(r, lo, hi);
        return;
    }
    for (int d = 0; d < 3; d++)
        v[d] = rp_int(r, lo, hi);
}

static int64_t rp_stride(rp_rng *r)
{
    const int64_t u = rp_int(r, 0, 99);
    return u < 35 ? 1 : u < 80 ? 2 : 3;
}

static void draw_channels(rp_rng *r, convt3d_problem *p)
{
    const int64_t u = rp_int(r, 0, 99);
    if (u < 65) { /* dense */
        p->groups = 1;
        p->in_channels = rp_channels(r, 256);
        p->out_channels = rp_channels(r, 256);
    } else if (u < 80) { /* depthwise, multiplier 1 or 2 */
        p->in_channels = rp_channels(r, 256);
        p->groups = p->in_channels;
        p->out_channels = p->in_channels * (rp_chance(r, 75) || p->in_channels > 128 ? 1 : 2);
    } else { /* grouped */
        p->groups = INT64_C(2) << rp_int(r, 0, 4);
        const int64_t per_group_max = 256 / p->groups;
        p->in_channels = p->groups * rp_channels(r, per_group_max);
        p->out_channels = p->groups * rp_channels(r, per_group_max);
    }
}

static void draw_geometry(rp_rng *r, convt3d_problem *p)
{
    rp_triple(r, 40, 4, 32, p->in_size);
    rp_triple(r, 50, 1, 5, p->kernel);
    if (rp_chance(r, 70))
        p->stride[0] = p->stride[1] = p->stride[2] = rp_stride(r);
    else
        for (int d = 0; d < 3; d++)
            p->stride[d] = rp_stride(r);
    for (int d = 0; d < 3; d++)
        p->dilation[d] = 1;
    if (rp_chance(r, 20)) {
        for (int d = 0; d < 3; d++)
            p->dilation[d] = rp_int(r, 1, 3);
        if (p->dilation[0] == 1 && p->dilation[1] == 1 && p->dilation[2] == 1)
            p->dilation[rp_int(r, 0, 2)] = rp_int(r, 2, 3);
    }
    const int with_op = rp_chance(r, 30);
    for (int d = 0; d < 3; d++) {
        const int64_t reach = p->dilation[d] * (p->kernel[d] - 1);
        p->padding[d] = rp_int(r, 0, (reach + 1) / 2);
        const int64_t op_max = (p->stride[d] > p->dilation[d] ? p->stride[d] : p->dilation[d]) - 1;
        p->output_padding[d] = with_op ? rp_int(r, 0, op_max) : 0;
    }
}

static void draw_once(rp_rng *r, convt3d_problem *p)
{
    convt3d_problem_init(p);
    p->batch = rp_chance(r, 85) ? rp_int(r, 1, 4) : rp_int(r, 5, 16);
    draw_channels(r, p);
    draw_geometry(r, p);
    p->layout = rp_chance(r, 50) ? CONVT3D_LAYOUT_NCDHW : CONVT3D_LAYOUT_NDHWC;
    p->has_bias = rp_chance(r, 50);
}

double random_problems_all_tap_macs(const convt3d_problem *p)
{
    double m = (double)p->batch * (double)p->in_channels *
               (double)(p->groups > 0 ? p->out_channels / p->groups : 0);
    for (int d = 0; d < 3; d++)
        m *= (double)p->in_size[d] * (double)p->kernel[d];
    return m;
}

int random_problems_in_bounds(const convt3d_problem *p)
{
    int64_t nx = 0, nw = 0, ny = 0;
    if (convt3d_validate(p) != CONVT3D_SUCCESS ||
        convt3d_tensor_elems(p, &nx, &nw, &ny) != CONVT3D_SUCCESS)
        return 0;
    return random_problems_all_tap_macs(p) <= RANDOM_MAX_MACS && nx <= RANDOM_MAX_ELEMS &&
           nw <= RANDOM_MAX_ELEMS && ny <= RANDOM_MAX_ELEMS;
}

int random_problems_draw(uint64_t seed, uint64_t index, convt3d_problem *p)
{
    rp_rng r = rp_stream(seed, index);
    for (int draws = 1; draws <= RANDOM_MAX_DRAWS; draws++) {
        draw_once(&r, p);
        if (random_problems_in_bounds(p))
            return draws;
    }
    /* a fixed problem within every bound, so that callers always get one */
    convt3d_problem_init(p);
    p->batch = 1;
    p->in_channels = p->out_channels = 8;
    for (int d = 0; d < 3; d++) {
        p->in_size[d] = 8;
        p->kernel[d] = 3;
        p->stride[d] = 2;
        p->padding[d] = 1;
    }
    return 0;
}
