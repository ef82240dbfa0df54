/* The forward convolution, looped over its own outputs (the transposed
 * problem's inputs), sharing no code with src/ so it can catch the reference. */
#include "direct_conv.h"

static int64_t extent(const convt3d_problem *p, int d)
{
    return (p->in_size[d] - 1) * p->stride[d] - 2 * p->padding[d] +
           p->dilation[d] * (p->kernel[d] - 1) + p->output_padding[d] + 1;
}

/* Offset of (n, c, a, b, e) in a tensor of C channels and spatial dims sz. */
static int64_t offset(convt3d_layout layout, int64_t C, const int64_t sz[3], int64_t n, int64_t c,
                      int64_t a, int64_t b, int64_t e)
{
    if (layout == CONVT3D_LAYOUT_NDHWC)
        return (((n * sz[0] + a) * sz[1] + b) * sz[2] + e) * C + c;
    return (((n * C + c) * sz[0] + a) * sz[1] + b) * sz[2] + e;
}

void direct_conv3d(const convt3d_problem *p, const double *y, const float *w, double *xg)
{
    const int64_t G = p->groups, cig = p->in_channels / G, cog = p->out_channels / G;
    const int64_t ysz[3] = {extent(p, 0), extent(p, 1), extent(p, 2)};
    const int64_t *xsz = p->in_size, *K = p->kernel;
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t ci = 0; ci < p->in_channels; ci++) {
            const int64_t g = ci / cig;
            for (int64_t a = 0; a < xsz[0]; a++)
                for (int64_t b = 0; b < xsz[1]; b++)
                    for (int64_t e = 0; e < xsz[2]; e++) {
                        double acc = 0.0;
                        for (int64_t oc = 0; oc < cog; oc++)
                            for (int64_t ka = 0; ka < K[0]; ka++)
                                for (int64_t kb = 0; kb < K[1]; kb++)
                                    for (int64_t ke = 0; ke < K[2]; ke++) {
                                        const int64_t oa = a * p->stride[0] - p->padding[0] +
                                                           ka * p->dilation[0];
                                        const int64_t ob = b * p->stride[1] - p->padding[1] +
                                                           kb * p->dilation[1];
                                        const int64_t oe = e * p->stride[2] - p->padding[2] +
                                                           ke * p->dilation[2];
                                        if (oa < 0 || oa >= ysz[0] || ob < 0 || ob >= ysz[1] ||
                                            oe < 0 || oe >= ysz[2])
                                            continue;
                                        const double wv =
                                            w[(((ci * cog + oc) * K[0] + ka) * K[1] + kb) * K[2] +
                                              ke];
                                        acc += wv * y[offset(p->layout, p->out_channels, ysz, n,
                                                             g * cog + oc, oa, ob, oe)];
                                    }
                        xg[offset(p->layout, p->in_channels, xsz, n, ci, a, b, e)] = acc;
                    }
        }
}
