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
}

void impl_set(impl_result *r, impl_state state, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->state = state;
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
}

void impl_verify(impl_result *r, const bench_problem *bp, const float *y, const float *add_bias,
                 const bench_settings *s)
{
    r->verify = verify_compare(&bp->vp, &bp->p, y, add_bias, s->tol);
}
