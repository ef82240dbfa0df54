/* The one device header every CUDA kernel body includes (and nothing of
 * another kernel's body): the portability macros that let a body compile
 * for the GPU or, with CONVT3D_GPU_EMULATE, for the host emulator
 * (tests/gpu_emulate.cc), the cp.async copies and the float4 helpers. */
#ifndef CONVT3D_CUDA_COMMON_DEVICE_CUH
#define CONVT3D_CUDA_COMMON_DEVICE_CUH

#include <vector_types.h>

#include "types.h"

#ifdef CONVT3D_GPU_EMULATE
#include <math.h>
#define CT3D_DEV inline
#define CT3D_SYNC() ct3d_emulate_sync()
#define CT3D_LDG(p) (*(p))
#define CT3D_UNROLL
#define CT3D_UNROLL2
void ct3d_emulate_sync(void);
#else
#define CT3D_DEV __device__ __forceinline__
#define CT3D_SYNC() __syncthreads()
#define CT3D_LDG(p) __ldg(p)
#define CT3D_UNROLL _Pragma("unroll")
#define CT3D_UNROLL2 _Pragma("unroll 2")
#endif

/* The D and H tap loops run once or twice a phase on the common shapes:
 * unrolling them only costs registers (occupancy). */
#ifdef CONVT3D_GPU_EMULATE
#define CT3D_NOUNROLL
#else
#define CT3D_NOUNROLL _Pragma("unroll 1")
#endif

namespace ct3d {

CT3D_DEV int imin(int a, int b) { return a < b ? a : b; }

/* Global -> shared copies without a register round trip (cp.async, sm_80
 * and later): staging issues every copy of a tile before waiting for any,
 * so it is not bound by load latency, and a copy whose source lies outside
 * the tensor writes zeros (source size 0) instead of branching.  copy_wait()
 * must precede the barrier that publishes the tile. */
#ifdef CONVT3D_GPU_EMULATE
CT3D_DEV void copy4(float *dst, const float *src, bool valid) { *dst = valid ? *src : 0.0f; }
CT3D_DEV void copy16(float *dst, const float *src, bool valid)
{
    for (int j = 0; j < 4; j++)
        dst[j] = valid ? src[j] : 0.0f;
}
CT3D_DEV void copy_wait() {}
#else
CT3D_DEV void copy4(float *dst, const float *src, bool valid)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src),
                 "r"(valid ? 4 : 0)
                 : "memory");
}
CT3D_DEV void copy16(float *dst, const float *src, bool valid)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src),
                 "r"(valid ? 16 : 0)
                 : "memory");
}
CT3D_DEV void copy_wait() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
#endif

/* Wait until at most n committed groups of copies are still in flight. */
#ifdef CONVT3D_GPU_EMULATE
CT3D_DEV void copy_commit() {}
template <int N>
CT3D_DEV void copy_wait_groups() {}
#else
CT3D_DEV void copy_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
CT3D_DEV void copy_wait_groups()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
#endif

/* N consecutive floats of shared memory (16-byte aligned, N a multiple of
 * 4) as N/4 float4 loads: a tap's OCT weights (broadcast across the warp),
 * or a window. */
template <int N>
CT3D_DEV void load_floats(float (&v)[N], const float *src)
{
    CT3D_UNROLL
    for (int c4 = 0; c4 < N / 4; c4++) {
        const float4 t = *reinterpret_cast<const float4 *>(src + 4 * c4);
        v[4 * c4 + 0] = t.x;
        v[4 * c4 + 1] = t.y;
        v[4 * c4 + 2] = t.z;
        v[4 * c4 + 3] = t.w;
    }
}

/* n / f.d for n < 2^31 (fdiv in gpu_kernels.h). */
CT3D_DEV unsigned fdiv_q(const fdiv &f, unsigned n)
{
#ifdef CONVT3D_GPU_EMULATE
    const unsigned hi = (unsigned)(((unsigned long long)n * f.m) >> 32);
#else
    const unsigned hi = __umulhi(n, f.m);
#endif
    return (hi + n) >> f.s;
}

/* n / f.d and n mod f.d. */
CT3D_DEV unsigned fdiv_qr(const fdiv &f, unsigned n, int &rem)
{
    const unsigned q = fdiv_q(f, n);
    rem = (int)(n - q * f.d);
    return q;
}

} // namespace ct3d

#endif
