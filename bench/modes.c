/* Data types, math modes and the per-row rules derived from them (modes.h). */
#include <string.h>

#include "modes.h"

int mode_parse_dtype(const char *text, convt3d_dtype *out)
{
    static const struct {
        const char *name;
        convt3d_dtype t;
    } names[] = {{"f32", CONVT3D_F32}, {"f16", CONVT3D_F16}, {"bf16", CONVT3D_BF16}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i].name) == 0) {
            *out = names[i].t;
            return 0;
        }
    return -1;
}

int mode_parse_math(const char *text, convt3d_math_mode *out)
{
    /* "f32" too: the enum says CONVT3D_MATH_F32 and the Python binding "f32" */
    static const struct {
        const char *name;
        convt3d_math_mode m;
    } names[] = {{"fp32", CONVT3D_MATH_F32},
                 {"f32", CONVT3D_MATH_F32},
                 {"tf32", CONVT3D_MATH_TF32},
                 {"3xtf32", CONVT3D_MATH_3XTF32}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i].name) == 0) {
            *out = names[i].m;
            return 0;
        }
    return -1;
}

const char *mode_math_name(convt3d_math_mode math)
{
    switch (math) {
    case CONVT3D_MATH_F32: return "fp32";
    case CONVT3D_MATH_TF32: return "tf32";
    case CONVT3D_MATH_3XTF32: return "3xtf32";
    default: return "unknown";
    }
}

bench_prec mode_prec(convt3d_dtype dtype, convt3d_math_mode math)
{
    if (dtype == CONVT3D_F16)
        return PREC_F16;
    if (dtype == CONVT3D_BF16)
        return PREC_BF16;
    if (math == CONVT3D_MATH_TF32)
        return PREC_TF32;
    if (math == CONVT3D_MATH_3XTF32)
        return PREC_3XTF32;
    return PREC_FP32;
}

const char *prec_name(bench_prec prec)
{
    static const char *const names[PREC_COUNT] = {"fp32", "tf32", "3xtf32", "f16", "bf16"};
    return prec >= 0 && prec < PREC_COUNT ? names[prec] : "unknown";
}

double prec_tolerance(bench_prec prec)
{
    switch (prec) {
    case PREC_TF32:
    case PREC_F16: return 1e-3;
    case PREC_BF16: return 8e-3;
    default: return 1e-5; /* fp32, 3xtf32, and anything unknown: the strictest */
    }
}

double prec_row_tolerance(bench_prec prec, double user_tol)
{
    const double t = prec_tolerance(prec);
    return user_tol >= 0 && user_tol < t ? user_tol : t;
}

void mode_apply_dtype(convt3d_problem *p, convt3d_dtype t)
{
    p->x_type = p->w_type = p->bias_type = p->y_type = t;
}
