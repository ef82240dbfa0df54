/* A direct (forward) 3D convolution, written independently of the library:
 * the adjoint of the transposed convolution, used to test the reference. */
#ifndef CONVT3D_DIRECT_CONV_H
#define CONVT3D_DIRECT_CONV_H

#include "convt3d.h"

/* xg[n, ci, i] = sum_{oc < Cog, k} y[n, g*Cog + oc, i*s - p + k*l] * w[ci, oc, k]
 * (positions outside y skipped), with y of the transposed problem's output
 * shape and xg of its input shape, both in p->layout.  Double precision. */
void direct_conv3d(const convt3d_problem *p, const double *y, const float *w, double *xg);

#endif
