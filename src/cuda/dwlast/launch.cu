/* The channels-last depthwise kernel's __global__ wrapper, its
 * instantiations, its launch and the family's registry entries (params.h;
 * body in kernel.cuh; host side in plan.cu). */
#include "../common/launch_util.h"
#include "../registry.h"
#include "kernel.cuh"
#include "plan.h"

namespace ct3d {

namespace {

/* 256 threads; 4 blocks a multiprocessor (<= 64 registers) with one
 * channel a thread, 3 (<= 80) with four: their window of 3 W taps' inputs
 * (kernel.cuh) spilled at 64 (CUDA 13, sm_90).  Memory-bound work wants
 * many warps in flight; each has a window's loads in flight at once. */
template <int V>
constexpr int dl_min_blocks()
{
    return V == 4 ? 3 : 4;
}

template <int V, class T>
__global__ void __launch_bounds__(kDlThreads, (dl_min_blocks<V>())) dwlast_kernel(const dl_params p)
{
    extern __shared__ __align__(16) float smem[];
    dl_block<V, T>(p, smem, threadIdx.x, blockIdx.x, blockIdx.y);
}

typedef void (*dl_fn)(const dl_params);

template <class T>
dl_fn dl_kernel_for(int v)
{
    return v == 4 ? dwlast_kernel<4, T> : dwlast_kernel<1, T>;
}

/* Whether the vector build may run: x, y (and the bias) aligned for V
 * elements of the data's type. */
bool vectors_aligned(const convt3d_shape *s, const cuda_args &a)
{
    const uintptr_t mask = s->y_type == CONVT3D_F32 ? 15u : 7u;
    return ((uintptr_t)a.x & mask) == 0 && ((uintptr_t)a.y & mask) == 0 &&
           (!a.bias || ((uintptr_t)a.bias & mask) == 0);
}

cudaError_t dwlast_launch(const cuda_plan &k, const convt3d_shape *s, const cuda_args &a,
                          cudaStream_t stream)
{
    const dwlast_plan &dp = *family_params<dwlast_plan>(k);
    const bool vec = dp.has4 && vectors_aligned(s, a);
    dl_params p = vec ? dp.p4 : dp.p1;
    const unsigned *g = vec ? dp.grid4 : dp.grid1;
    p.x = a.x;
    p.w = a.w;
    p.bias = a.bias;
    p.y = a.y;
    const dl_fn fn = s->y_type == CONVT3D_F16    ? dl_kernel_for<f16_t>(p.v)
                     : s->y_type == CONVT3D_BF16 ? dl_kernel_for<bf16_t>(p.v)
                                                 : dl_kernel_for<float>(p.v);
    const dim3 grid(g[0], g[1]);
    fn<<<grid, p.nthreads, vec ? dp.smem4 : dp.smem1, stream>>>(p);
    return cudaGetLastError();
}

} // namespace

/* 48 KB at most: no shared-memory opt-in to prepare. */
extern const cuda_impl cuda_f32_dwlast = {
    "cuda/f32_dwlast", nullptr, dwlast_entry_applicable, dwlast_entry_passed_over,
    dwlast_entry_plan, nullptr, nullptr,                 dwlast_launch,
    dwlast_entry_describe};
/* f16 and bf16 x, bias and y (f32 weights and accumulation): the same
 * body, widening on load and rounding on store. */
extern const cuda_impl cuda_f16_dwlast = {
    "cuda/f16_dwlast",     nullptr,   dwlast_entry_applicable, dwlast_entry_passed_over,
    dwlast_entry_plan,     nullptr,   nullptr,                 dwlast_launch,
    dwlast_entry_describe, kDtypeF16, kMathAny};
extern const cuda_impl cuda_bf16_dwlast = {
    "cuda/bf16_dwlast",    nullptr,    dwlast_entry_applicable, dwlast_entry_passed_over,
    dwlast_entry_plan,     nullptr,    nullptr,                 dwlast_launch,
    dwlast_entry_describe, kDtypeBf16, kMathAny};

} // namespace ct3d
