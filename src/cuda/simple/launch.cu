/* The simple kernels' __global__ entries, their launches, the device phase
 * table they read (the family's device extras) and their registry entries
 * (host side in plan.cu). */
#include <stdlib.h>

#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

template <class T>
__global__ void __launch_bounds__(256) depthwise_kernel(const simple_params p, long long total)
{
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x)
        depthwise_thread<T>(p, t);
}

template <int MT, bool FEWIN>
__global__ void __launch_bounds__(256) depthwise32_kernel(const simple_params p, unsigned total)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total)
        depthwise32_thread<MT, FEWIN>(p, t);
}

template <class T>
__global__ void __launch_bounds__(256) generic_kernel(const simple_params p)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < p.y_elems;
         e += (long long)gridDim.x * blockDim.x)
        generic_thread<T>(p, e);
}

/* The phase table on the current device (plan.h). */
cudaError_t simple_extras(const cuda_plan &k, const convt3d_shape *s, void **extra)
{
    (void)k;
    const long long n = phase_table_ints(s);
    int *table = (int *)malloc((size_t)n * sizeof(int));
    if (!table)
        return cudaErrorMemoryAllocation;
    phase_table_fill(s, table);
    void *dev = nullptr;
    cudaError_t err = cudaMalloc(&dev, (size_t)n * sizeof(int));
    if (err == cudaSuccess)
        err = cudaMemcpy(dev, table, (size_t)n * sizeof(int), cudaMemcpyHostToDevice);
    free(table);
    if (err != cudaSuccess) {
        cudaFree(dev);
        return err;
    }
    *extra = dev;
    return cudaSuccess;
}

/* The parameters of one execute. */
simple_params simple_args(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a)
{
    simple_params p = family_params<simple_plan>(k)->p;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    p.phase = static_cast<const int *>(a.extra);
    const bool ndhwc = s->layout == CONVT3D_LAYOUT_NDHWC;
    p.vec_store = aligned16(a.y) && (ndhwc ? s->cout % 4 == 0 : s->out[2] % 4 == 0);
    return p;
}

/* The 32-bit kernel with MT = p.dw_mt unrolled W taps, `total` threads
 * (< 2^31: fill_depthwise32). */
template <bool FEWIN>
void launch_four32(const cuda_plan &k, const simple_params &p, long long total,
                   cudaStream_t stream)
{
    const unsigned blocks = (unsigned)((total + k.threads - 1) / k.threads);
    with_w_taps(p.dw_mt, [&](auto mt) {
        depthwise32_kernel<decltype(mt)::value, FEWIN>
            <<<blocks, k.threads, 0, stream>>>(p, (unsigned)total);
    });
}

cudaError_t depthwise_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                             cudaStream_t stream)
{
    const simple_params p = simple_args(k, s, a);
    const long long total = four_output_threads(s);
    if (s->y_type == CONVT3D_F16) /* 16-bit data: the 64-bit path only */
        depthwise_kernel<f16_t><<<grid_of(k.blocks), k.threads, 0, stream>>>(p, total);
    else if (s->y_type == CONVT3D_BF16)
        depthwise_kernel<bf16_t><<<grid_of(k.blocks), k.threads, 0, stream>>>(p, total);
    else if (p.fast32) /* the planner checked total < 2^31: one thread each */
        launch_four32<false>(k, p, total, stream);
    else
        depthwise_kernel<float><<<grid_of(k.blocks), k.threads, 0, stream>>>(p, total);
    return cudaGetLastError();
}

/* f32 only, 32-bit path only (fewin_entry_applicable). */
cudaError_t fewin_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                         cudaStream_t stream)
{
    launch_four32<true>(k, simple_args(k, s, a), four_output_threads(s), stream);
    return cudaGetLastError();
}

cudaError_t generic_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                           cudaStream_t stream)
{
    const simple_params p = simple_args(k, s, a);
    if (s->y_type == CONVT3D_F16)
        generic_kernel<f16_t><<<grid_of(k.blocks), k.threads, 0, stream>>>(p);
    else if (s->y_type == CONVT3D_BF16)
        generic_kernel<bf16_t><<<grid_of(k.blocks), k.threads, 0, stream>>>(p);
    else
        generic_kernel<float><<<grid_of(k.blocks), k.threads, 0, stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern const cuda_impl cuda_f32_depthwise_phase_4 = {
    "cuda/f32_depthwise_phase_4", nullptr,  depthwise_entry_applicable, nullptr,
    depthwise_entry_plan,         nullptr,  simple_extras,              depthwise_launch,
    simple_entry_describe};
extern const cuda_impl cuda_f32_fewin_phase_4 = {
    "cuda/f32_fewin_phase_4", nullptr, fewin_entry_applicable, fewin_entry_passed_over,
    fewin_entry_plan,         nullptr, simple_extras,          fewin_launch,
    simple_entry_describe};
extern const cuda_impl cuda_f32_direct_generic = {
    "cuda/f32_direct_generic", nullptr, generic_entry_applicable, nullptr,
    generic_entry_plan,        nullptr, simple_extras,            generic_launch,
    simple_entry_describe};
/* f16 and bf16 data: the same kernels, widening on load and rounding on store. */
extern const cuda_impl cuda_f16_depthwise_phase_4 = {
    "cuda/f16_depthwise_phase_4", nullptr,   depthwise_entry_applicable, nullptr,
    depthwise_entry_plan,         nullptr,   simple_extras,              depthwise_launch,
    simple_entry_describe,        kDtypeF16, kMathAny};
extern const cuda_impl cuda_bf16_depthwise_phase_4 = {
    "cuda/bf16_depthwise_phase_4", nullptr,    depthwise_entry_applicable, nullptr,
    depthwise_entry_plan,          nullptr,    simple_extras,              depthwise_launch,
    simple_entry_describe,         kDtypeBf16, kMathAny};
extern const cuda_impl cuda_f16_direct_generic = {
    "cuda/f16_direct_generic", nullptr,   generic_entry_applicable, nullptr,
    generic_entry_plan,        nullptr,   simple_extras,            generic_launch,
    simple_entry_describe,     kDtypeF16, kMathAny};
extern const cuda_impl cuda_bf16_direct_generic = {
    "cuda/bf16_direct_generic", nullptr,    generic_entry_applicable, nullptr,
    generic_entry_plan,         nullptr,    simple_extras,            generic_launch,
    simple_entry_describe,      kDtypeBf16, kMathAny};

} // namespace ct3d
