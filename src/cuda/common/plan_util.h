/* The pieces the CUDA planners share: the device limits they plan for,
 * integer helpers, the shape fields several families' parameters carry and
 * the phase table entry of a dim.  Host code, no CUDA API. */
#ifndef CONVT3D_CUDA_COMMON_PLAN_UTIL_H
#define CONVT3D_CUDA_COMMON_PLAN_UTIL_H

#include <stddef.h>

#include "internal.h"
#include "types.h"

namespace ct3d {

/* What the planners need to know of a device (queried once per ordinal,
 * gpu.cu). */
struct device_limits {
    int smem_optin; /* bytes one block may use */
    int smem_sm;    /* bytes per multiprocessor */
    int num_sms;
};

/* Integer helpers of the planners (the gcd is convt3d_gcd64, internal.h). */
inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

/* The smallest power of two >= v, at most cap (a power of two). */
inline int pow2_at_least(long long v, int cap)
{
    int p = 1;
    while (p < v && p < cap)
        p *= 2;
    return p;
}

/* log2 of a power of two v (the shift that replaces a division by it). */
inline int log2_of(int v)
{
    int l = 0;
    while ((1 << l) < v)
        l++;
    return l;
}

/* floor(a / b) for b > 0 and any sign of a. */
inline long long floor_div(long long a, long long b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The multiply-high divisor of d (1 <= d < 2^31). */
inline fdiv fdiv_make(long long d)
{
    fdiv f;
    unsigned sh = 0;
    while ((1ULL << sh) < (unsigned long long)d)
        sh++;
    f.d = (unsigned)d;
    f.s = sh;
    f.m = (unsigned)(((1ULL << 32) * ((1ULL << sh) - (unsigned long long)d)) /
                         (unsigned long long)d + 1);
    return f;
}

/* Whether every size in shape s that a kernel indexes with int (dims,
 * kernel, stride, padding, dilation, channels) stays below
 * CONVT3D_INT_INDEX_LIMIT; why says which does not. */
bool int_indexable(const convt3d_shape *s, char *why, size_t why_size);

/* Phase r of dim d as the kernels' tables hold it (convt3d_phase_of()). */
phase_entry phase_entry_of(const convt3d_shape *s, int d, long long r);

/* The fields the phase and implicit-GEMM kernels' parameters share, from the
 * shape (int: the planners checked the ranges): channels, per-dim sizes,
 * the input step dm and tap step kstep of a phase's taps, strides. */
template <class P>
void fill_shape_fields(const convt3d_shape *s, P &p)
{
    p.groups = (int)s->groups;
    p.cig = (int)s->cig;
    p.cog = (int)s->cog;
    for (int d = 0; d < 3; d++) {
        const convt3d_phase ph = convt3d_phase_of(s, d, 0);
        p.in[d] = (int)s->in[d];
        p.k[d] = (int)s->k[d];
        p.s[d] = (int)s->s[d];
        p.p[d] = (int)s->p[d];
        p.dm[d] = (int)ph.dm;
        p.kstep[d] = (int)ph.tap_step;
    }
    for (int d = 0; d < 5; d++) {
        p.xs[d] = s->x_stride[d];
        p.ys[d] = s->y_stride[d];
    }
}

} // namespace ct3d

#endif
