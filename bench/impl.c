/* Bookkeeping shared by the implementations' runners. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

void impl_init(impl_result *r, const char *name, int baseline)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->baseline = baseline;
    r->state = IMPL_SKIPPED;
    r->prec = PREC_FP32;
    r->tol = prec_tolerance(PREC_FP32);
}

void impl_set_prec(impl_result *r, bench_prec prec, const bench_settings *s)
{
    r->prec = prec;
    r->tol = prec_row_tolerance(prec, s->user_tol);
}

void impl_set(impl_result *r, impl_state state, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->state = state;
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
}

int impl_verify(impl_result *r, const bench_problem *bp, const float *add_bias)
{
    if (bp->vp.mode == VERIFY_SKIPPED || !bp->vp.ref) {
        memset(&r->verify, 0, sizeof r->verify);
        return 0;
    }
    /* the output as the implementation wrote it, widened exactly to f32 */
    if ((void *)bp->y != bp->yt &&
        convt3d_convert(bp->yt, bp->dtype, bp->y, CONVT3D_F32, bp->y_elems) != CONVT3D_SUCCESS) {
        impl_set(r, IMPL_FAILED, "widening the output to f32: %s", convt3d_last_error());
        return -1;
    }
    r->verify = verify_compare(&bp->vp, &bp->p, bp->y, add_bias, r->tol);
    return 0;
}
