/* Weight packing for the CPU plans (weights.h): straight from PyTorch's
 * layout into the kernel's, so a plan holds one packed copy at its peak. */
#include <string.h>

#include "weights.h"

int cpu_weight_layout_make(const convt3d_shape *s, int64_t ob, int kw_inner,
                           cpu_weight_layout *out)
{
    cpu_weight_layout l = {ob, (s->cog + ob - 1) / ob, kw_inner, 0};
    int64_t total;
    if (__builtin_mul_overflow(l.blocks * ob, s->k_volume, &l.w_group) ||
        __builtin_mul_overflow(l.w_group, s->cig, &l.w_group) ||
        __builtin_mul_overflow(l.w_group, s->groups, &total) ||
        total > (int64_t)(SIZE_MAX / sizeof(float)))
        return 0;
    *out = l;
    return 1;
}

/* The row of (tap, ic) within a block: tap = (kd * kH + kh) * kW + kw. */
static int64_t block_row(const convt3d_shape *s, const cpu_weight_layout *l, int64_t tap,
                         int64_t ic)
{
    if (!l->kw_inner)
        return tap * s->cig + ic;
    const int64_t kw = s->k[2];
    return (tap / kw * s->cig + ic) * kw + tap % kw;
}

void cpu_pack_weights_cio_to_blocks(const convt3d_shape *s, const float *src,
                                    const cpu_weight_layout *l, float *dst)
{
    const int64_t kvol = s->k_volume, cig = s->cig, cog = s->cog, ob = l->ob;
    const int64_t block = kvol * cig * ob;
    memset(dst, 0, (size_t)(s->groups * l->w_group) * sizeof(float)); /* the padding lanes */
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t ic = 0; ic < cig; ic++)
            for (int64_t oc = 0; oc < cog; oc++) {
                const float *from = src + ((g * cig + ic) * cog + oc) * kvol;
                float *to = dst + g * l->w_group + oc / ob * block + oc % ob;
                for (int64_t t = 0; t < kvol; t++)
                    to[block_row(s, l, t, ic) * ob] = from[t];
            }
}

/* a * b * c floats, or -1 when the product or its bytes overflow. */
static int64_t checked_floats(int64_t a, int64_t b, int64_t c)
{
    int64_t n;
    if (__builtin_mul_overflow(a, b, &n) || __builtin_mul_overflow(n, c, &n) ||
        n > (int64_t)(SIZE_MAX / sizeof(float)))
        return -1;
    return n;
}

int64_t cpu_lanes_weight_floats(const convt3d_shape *s, int64_t cout_pad)
{
    return checked_floats(s->k_volume, s->cig, cout_pad);
}

void cpu_pack_weights_cio_to_lanes(const convt3d_shape *s, const float *src, int64_t cout_pad,
                                   float *dst)
{
    const int64_t kvol = s->k_volume, cig = s->cig, cog = s->cog;
    memset(dst, 0, (size_t)(kvol * cig * cout_pad) * sizeof(float));
    for (int64_t co = 0; co < s->cout; co++) {
        const int64_t g = co / cog, oc = co % cog;
        for (int64_t ic = 0; ic < cig; ic++) {
            const float *from = src + ((g * cig + ic) * cog + oc) * kvol;
            for (int64_t t = 0; t < kvol; t++)
                dst[(t * cig + ic) * cout_pad + co] = from[t];
        }
    }
}

int64_t cpu_ic_rows_weight_floats(const convt3d_shape *s, int64_t cigp)
{
    return checked_floats(s->groups * s->k_volume, s->cog, cigp);
}

void cpu_pack_weights_cio_to_ic_rows(const convt3d_shape *s, const float *src, int64_t cigp,
                                     float *dst)
{
    const int64_t kvol = s->k_volume, cig = s->cig, cog = s->cog;
    memset(dst, 0, (size_t)(s->groups * kvol * cog * cigp) * sizeof(float));
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t ic = 0; ic < cig; ic++)
            for (int64_t oc = 0; oc < cog; oc++) {
                const float *from = src + ((g * cig + ic) * cog + oc) * kvol;
                float *to = dst + g * kvol * cog * cigp + oc * cigp + ic;
                for (int64_t t = 0; t < kvol; t++)
                    to[t * cog * cigp] = from[t];
            }
}

int64_t cpu_cols_weight_floats(const convt3d_shape *s)
{
    return checked_floats(s->groups * s->k_volume, s->cig, s->cog);
}

void cpu_pack_weights_cio_to_cols(const convt3d_shape *s, const float *src, float *dst)
{
    const int64_t kvol = s->k_volume, cig = s->cig, cog = s->cog, kd_n = s->k[0];
    const int64_t plane = s->k[1] * s->k[2], M = cog * plane;
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t ic = 0; ic < cig; ic++)
            for (int64_t oc = 0; oc < cog; oc++) {
                const float *from = src + ((g * cig + ic) * cog + oc) * kvol;
                for (int64_t kd = 0; kd < kd_n; kd++) {
                    float *to = dst + ((g * kd_n + kd) * cig + ic) * M + oc * plane;
                    memcpy(to, from + kd * plane, (size_t)plane * sizeof(float));
                }
            }
}
