/* Two stride-2 phase rows interleaved into one output row, written once
 * over the vector vocabulary (VL, vf, v_loadu, v_interleave2,
 * v_interleave2_stream) for the W-lane tile (cpu/phase_tile.h) and the
 * column GEMM (cpu/colgemm.h) of every instruction set.  Not installed. */
#ifndef CONVT3D_CPU_INTERLEAVE_H
#define CONVT3D_CPU_INTERLEAVE_H

#include <stdint.h>

/* y[2j] = b0[j], y[2j+1] = b1[j] for j < n1, then y[2 n1] = b0[n1] if n0 > n1;
 * with stream (y then VL-aligned) the whole vectors go out non-temporal. */
static void ncdhw_interleave2(float *y, const float *b0, const float *b1, int64_t n0, int64_t n1,
                              int stream)
{
    int64_t j = 0;
    if (stream)
        for (; j + VL <= n1; j += VL)
            v_interleave2_stream(v_loadu(b0 + j), v_loadu(b1 + j), y + 2 * j);
    for (; j + VL <= n1; j += VL)
        v_interleave2(v_loadu(b0 + j), v_loadu(b1 + j), y + 2 * j);
    for (; j < n1; j++) {
        y[2 * j] = b0[j];
        y[2 * j + 1] = b1[j];
    }
    if (n0 > n1)
        y[2 * n1] = b0[n1];
}

#endif /* CONVT3D_CPU_INTERLEAVE_H */
