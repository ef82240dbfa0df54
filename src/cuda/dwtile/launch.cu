/* The depthwise tile kernel's __global__ wrapper, its instantiations, its
 * launch and the family's two registry entries (params.h; body in
 * kernel.cuh; host side in plan.cu). */
#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

/* 256 threads, 8 blocks a multiprocessor (a full one: memory-bound work
 * wants every warp it can get), i.e. <= 32 registers; 6 (40 registers)
 * where ptxas spilled at 32 (CUDA 13, sm_90): W stride 1 with 3-4 taps, W
 * stride 2 with one slot empty (dilation 2). */
template <int SW, int T0, int T1>
constexpr int dw_min_blocks()
{
    return (SW == 1 && T0 > 2) || (SW == 2 && (T0 == 0 || T1 == 0)) ? 6 : 8;
}

template <int SW, int T0, int T1, bool FAST, class T>
__global__ void __launch_bounds__(256, (dw_min_blocks<SW, T0, T1>())) dwtile_kernel(const dw_params p)
{
    extern __shared__ __align__(16) float smem[];
    dw_block<SW, T0, T1, FAST, T>(p, smem, threadIdx.x, blockIdx.y, blockIdx.z, blockIdx.x);
}

typedef void (*dw_fn)(const dw_params);

/* The fast instantiation for W stride SW and slot taps (t0, t1), t <= 4. */
template <int SW, int T0, class T>
dw_fn dw_fast_t1(int t1)
{
    switch (t1) {
    case 0: return dwtile_kernel<SW, T0, 0, true, T>;
    case 1: return dwtile_kernel<SW, T0, 1, true, T>;
    case 2: return dwtile_kernel<SW, T0, 2, true, T>;
    case 3: return dwtile_kernel<SW, T0, 3, true, T>;
    case 4: return dwtile_kernel<SW, T0, 4, true, T>;
    default: return nullptr;
    }
}

template <class T>
dw_fn dw_kernel_for(const dw_params &p)
{
    if (!p.fast)
        return p.sw == 1 ? dwtile_kernel<1, 0, 0, false, T> : dwtile_kernel<2, 0, 0, false, T>;
    if (p.sw == 1) {
        switch (p.wt[0]) {
        case 1: return dwtile_kernel<1, 1, 0, true, T>;
        case 2: return dwtile_kernel<1, 2, 0, true, T>;
        case 3: return dwtile_kernel<1, 3, 0, true, T>;
        case 4: return dwtile_kernel<1, 4, 0, true, T>;
        default: return nullptr;
        }
    }
    switch (p.wt[0]) {
    case 0: return p.wt[1] > 0 ? dw_fast_t1<2, 0, T>(p.wt[1]) : nullptr;
    case 1: return dw_fast_t1<2, 1, T>(p.wt[1]);
    case 2: return dw_fast_t1<2, 2, T>(p.wt[1]);
    case 3: return dw_fast_t1<2, 3, T>(p.wt[1]);
    case 4: return dw_fast_t1<2, 4, T>(p.wt[1]);
    default: return nullptr;
    }
}

cudaError_t dwtile_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                          cudaStream_t stream)
{
    const dwtile_plan &dp = *family_params<dwtile_plan>(k);
    dw_params p = dp.p;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    const bool half = s->y_type != CONVT3D_F32;
    p.vec_load = !half && p.vec_ok && aligned16(a.x); /* half x: scalar loads, widened */
    p.vec_store = aligned16(a.y) && p.ys[4] == 1 && p.out[2] % 4 == 0;
    const dw_fn fn = s->y_type == CONVT3D_F16    ? dw_kernel_for<f16_t>(p)
                     : s->y_type == CONVT3D_BF16 ? dw_kernel_for<bf16_t>(p)
                                                 : dw_kernel_for<float>(p);
    if (!fn)
        return cudaErrorInvalidDeviceFunction;
    const dim3 grid(dp.grid[0], dp.grid[1], dp.grid[2]);
    fn<<<grid, p.nthreads, k.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

const dwtile_variant kRun8 = {1}, kSlotwise = {0};

} // namespace

/* 48 KB at most: no shared-memory opt-in to prepare. */
extern const cuda_impl cuda_f32_dwtile_run8 = {
    "cuda/f32_dwtile_run8", &kRun8,  dwtile_entry_applicable, dwtile_entry_passed_over,
    dwtile_entry_plan,      nullptr, nullptr,                 dwtile_launch,
    dwtile_entry_describe};
extern const cuda_impl cuda_f32_dwtile_run8_slotwise = {
    "cuda/f32_dwtile_run8_slotwise", &kSlotwise, dwtile_entry_applicable,
    dwtile_entry_passed_over,        dwtile_entry_plan, nullptr,
    nullptr,                         dwtile_launch,     dwtile_entry_describe};
/* f16 and bf16 x, bias and y (f32 weights and accumulation): the same
 * bodies, staging by widening register loads, rounding on store. */
extern const cuda_impl cuda_f16_dwtile_run8 = {
    "cuda/f16_dwtile_run8", &kRun8,  dwtile_entry_applicable, dwtile_entry_passed_over,
    dwtile_entry_plan,      nullptr, nullptr,                 dwtile_launch,
    dwtile_entry_describe,  kDtypeF16, kMathAny};
extern const cuda_impl cuda_f16_dwtile_run8_slotwise = {
    "cuda/f16_dwtile_run8_slotwise", &kSlotwise, dwtile_entry_applicable,
    dwtile_entry_passed_over,        dwtile_entry_plan, nullptr,
    nullptr,                         dwtile_launch,     dwtile_entry_describe,
    kDtypeF16,                       kMathAny};
extern const cuda_impl cuda_bf16_dwtile_run8 = {
    "cuda/bf16_dwtile_run8", &kRun8,  dwtile_entry_applicable, dwtile_entry_passed_over,
    dwtile_entry_plan,       nullptr, nullptr,                 dwtile_launch,
    dwtile_entry_describe,   kDtypeBf16, kMathAny};
extern const cuda_impl cuda_bf16_dwtile_run8_slotwise = {
    "cuda/bf16_dwtile_run8_slotwise", &kSlotwise, dwtile_entry_applicable,
    dwtile_entry_passed_over,         dwtile_entry_plan, nullptr,
    nullptr,                          dwtile_launch,     dwtile_entry_describe,
    kDtypeBf16,                       kMathAny};

} // namespace ct3d
