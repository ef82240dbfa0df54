/* Parameters of the simple kernels (kernel.cuh): the depthwise phase kernel
 * and the generic direct kernel.  Plain structs, no CUDA API. */
#ifndef CONVT3D_CUDA_SIMPLE_PARAMS_H
#define CONVT3D_CUDA_SIMPLE_PARAMS_H

#include <type_traits>

#include "../common/types.h"

namespace ct3d {

/* Parameters of the simple kernels: depthwise, generic direct, weight packing. */
struct simple_params {
    const float *x;
    const float *w;
    const float *bias;
    float *y;
    /* device: per dim d, {taps, k0, m0} of each stride phase at phase_off[d] +
     * 3 * index, where index is the phase r < s[d], or the output coordinate
     * o < out[d] where the stride exceeds the output (phase_by_o[d]): the
     * table stays within min(stride, output) entries a dim however large the
     * stride. */
    const int *phase;
    long long phase_off[3];
    int phase_by_o[3];
    long long xs[5], ys[5];
    long long n, cin, cout, groups, cig, cog;
    long long in[3], out[3], k[3], s[3], p[3], dm[3], kstep[3];
    long long kvol, ocb, nocb;
    long long y_elems;
    int layout_ndhwc;
    int vec_store;
    /* The depthwise kernel's 32-bit path (every index and the thread count
     * < 2^31, strides <= kMaxPhaseStride, <= 4 taps a W phase): divisors of
     * the thread index decomposition, fastest first (NCDHW: W/4 vectors,
     * out H, out D, C; NDHWC: C/4 vectors, out W, out H, out D), and the
     * strides. */
    int fast32;
    fdiv dv[4];
    fdiv dvs[3];
    int dw_mt; /* W taps a phase unrolled: 1, 2 or 4 (>= the most taps) */
    int ptab[3][kMaxPhaseStride][3]; /* {taps, k0, m0} per dim and phase */
};

/* f(std::integral_constant<int, MT>()) for the W-tap unroll MT = dw_mt (1,
 * 2 or 4) of depthwise32_thread: the one switch from the planner's count to
 * a template argument, for the launches and the host emulator alike. */
template <class F>
void with_w_taps(int dw_mt, F f)
{
    if (dw_mt == 1)
        f(std::integral_constant<int, 1>());
    else if (dw_mt == 2)
        f(std::integral_constant<int, 2>());
    else
        f(std::integral_constant<int, 4>());
}

} // namespace ct3d

#endif
