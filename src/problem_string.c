/* convt3d_problem_to_string(): the problem as the benchdnn deconvolution
 * descriptor convt3d-bench reads (bench/descriptor.c is the one reader),
 * with every field explicit, in the order and spelling of the bench's
 * canonical form, so that any failure line pastes into convt3d-bench:
 *
 *   g1mb2_ic4id5ih5iw5_oc8od9oh9ow9_kd3kh3kw3_sd2sh2sw2_pd1ph1pw1_dd0dh0dw0_bias1_layoutncdhw
 *
 * benchdnn's terms: o is the output size, dd the dilation minus 1 (oneDNN's
 * dilation), and the right padding (not printed: the parser derives it from
 * o) is padding - output_padding.  bias0/bias1 and layoutncdhw/layoutndhwc
 * are convt3d's extensions (bench/descriptor.h).  The data types are not
 * printed: this version computes f32 only. */
#include <stdio.h>

#include "internal.h"

/* Wrapping int64 arithmetic: an invalid problem may overflow, and prints
 * whatever it gives without undefined behaviour. */
static int64_t wrap(uint64_t v) { return (int64_t)v; }

int convt3d_problem_to_string(const convt3d_problem *problem, char *buf, size_t size)
{
    if (!problem)
        return -1;
    const convt3d_problem *p = problem;
    long long out[3], dil[3];
    for (int d = 0; d < 3; d++) {
        const uint64_t s = (uint64_t)p->stride[d], l = (uint64_t)p->dilation[d];
        out[d] = wrap(((uint64_t)p->in_size[d] - 1) * s - 2 * (uint64_t)p->padding[d] +
                      l * ((uint64_t)p->kernel[d] - 1) + (uint64_t)p->output_padding[d] + 1);
        dil[d] = wrap((uint64_t)p->dilation[d] - 1);
    }
    const char *layout = p->layout == CONVT3D_LAYOUT_NCDHW   ? "ncdhw"
                         : p->layout == CONVT3D_LAYOUT_NDHWC ? "ndhwc"
                                                             : "?";
    return snprintf(buf, size,
                    "g%lldmb%lld_ic%lldid%lldih%lldiw%lld_oc%lldod%lldoh%lldow%lld"
                    "_kd%lldkh%lldkw%lld_sd%lldsh%lldsw%lld_pd%lldph%lldpw%lld"
                    "_dd%llddh%llddw%lld_bias%d_layout%s",
                    (long long)p->groups, (long long)p->batch, (long long)p->in_channels,
                    (long long)p->in_size[0], (long long)p->in_size[1], (long long)p->in_size[2],
                    (long long)p->out_channels, out[0], out[1], out[2], (long long)p->kernel[0],
                    (long long)p->kernel[1], (long long)p->kernel[2], (long long)p->stride[0],
                    (long long)p->stride[1], (long long)p->stride[2], (long long)p->padding[0],
                    (long long)p->padding[1], (long long)p->padding[2], dil[0], dil[1], dil[2],
                    p->has_bias ? 1 : 0, layout);
}
