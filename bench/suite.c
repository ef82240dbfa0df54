/* DESIGN.md section 5, transcribed:
 *   name            N  Cin Cout  D  H  W   k      s  p      op  G   bias
 *   kernelbench     8  32  32   12 24 48   3,5,7  2  1,2,3  1   4   no
 *   unet_up_k2s2    2  128 64   32 64 64   2      2  0      0   1   yes
 *   k4s2p1          4  64  32   16 32 32   4      2  1      0   1   yes
 *   k3s2p1op1_wide  1  256 128   8 16 16   3      2  1      1   1   yes
 *   depthwise       2  64  64   16 32 32   3      2  1      1   64  no
 *   k3s1p1          2  32  32   32 32 32   3      1  1      0   1   no */
#include <string.h>

#include "suite.h"

/* Sizes, then the spatial triples (d, h, w). */
#define T(a, b, c) {a, b, c}
#define SHAPE(nm, n, cin, cout, g, in, k, s, p, op, bias)                                      \
    {nm,                                                                                       \
     {.batch = n, .in_channels = cin, .out_channels = cout, .groups = g, .in_size = in,        \
      .kernel = k, .stride = s, .padding = p, .output_padding = op, .dilation = T(1, 1, 1),    \
      .layout = CONVT3D_LAYOUT_NCDHW, .has_bias = bias}}

static const suite_shape shapes[] = {
    SHAPE("kernelbench", 8, 32, 32, 4, T(12, 24, 48), T(3, 5, 7), T(2, 2, 2), T(1, 2, 3),
          T(1, 1, 1), 0),
    SHAPE("unet_up_k2s2", 2, 128, 64, 1, T(32, 64, 64), T(2, 2, 2), T(2, 2, 2), T(0, 0, 0),
          T(0, 0, 0), 1),
    SHAPE("k4s2p1", 4, 64, 32, 1, T(16, 32, 32), T(4, 4, 4), T(2, 2, 2), T(1, 1, 1), T(0, 0, 0),
          1),
    SHAPE("k3s2p1op1_wide", 1, 256, 128, 1, T(8, 16, 16), T(3, 3, 3), T(2, 2, 2), T(1, 1, 1),
          T(1, 1, 1), 1),
    SHAPE("depthwise", 2, 64, 64, 64, T(16, 32, 32), T(3, 3, 3), T(2, 2, 2), T(1, 1, 1),
          T(1, 1, 1), 0),
    SHAPE("k3s1p1", 2, 32, 32, 1, T(32, 32, 32), T(3, 3, 3), T(1, 1, 1), T(1, 1, 1), T(0, 0, 0),
          0),
};

size_t suite_count(void) { return sizeof shapes / sizeof shapes[0]; }

const suite_shape *suite_at(size_t index)
{
    return index < suite_count() ? &shapes[index] : NULL;
}

const suite_shape *suite_find(const char *name)
{
    for (size_t i = 0; i < suite_count(); i++)
        if (strcmp(shapes[i].name, name) == 0)
            return &shapes[i];
    return NULL;
}
