/* The one device header every CUDA kernel body includes (and nothing of
 * another kernel's body): the portability macros that let a body compile
 * for the GPU or, with CONVT3D_GPU_EMULATE, for the host emulator
 * (tests/gpu_emulate.cc), the cp.async copies and the float4 helpers. */
#ifndef CONVT3D_CUDA_COMMON_DEVICE_CUH
#define CONVT3D_CUDA_COMMON_DEVICE_CUH

#include <vector_types.h>

#include "types.h"

#ifdef CONVT3D_GPU_EMULATE
#include "halfconv.h"
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

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

/* Thread-block clusters (sm_90): a barrier over the cluster's blocks, and
 * a pointer into rank's shared memory at the offset of ptr in this block's
 * (kernels that split K across a cluster sum the partial tiles there). */
#ifdef CONVT3D_GPU_EMULATE
void ct3d_emulate_cluster_sync(void);
float *ct3d_emulate_cluster_smem(float *smem, int rank);
#define CT3D_CLUSTER_SYNC() ct3d_emulate_cluster_sync()
#define CT3D_CLUSTER_SMEM(ptr, rank) ct3d_emulate_cluster_smem(ptr, rank)
#else
#include <cooperative_groups.h>
#define CT3D_CLUSTER_SYNC() cooperative_groups::this_cluster().sync()
#define CT3D_CLUSTER_SMEM(ptr, rank) cooperative_groups::this_cluster().map_shared_rank(ptr, rank)
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
CT3D_DEV void copy8(float *dst, const float *src, bool valid)
{
    for (int j = 0; j < 2; j++)
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
CT3D_DEV void copy8(float *dst, const float *src, bool valid)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(src),
                 "r"(valid ? 8 : 0)
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

/* ---- elements of f32, f16 and bf16 tensors -------------------------------- */

/* Element i widened to f32 (exact), through the read-only cache. */
CT3D_DEV float load_elem(const float *p) { return CT3D_LDG(p); }
#ifdef CONVT3D_GPU_EMULATE
CT3D_DEV float load_elem(const f16_t *p) { return convt3d_f16_to_f32(p->bits); }
CT3D_DEV float load_elem(const bf16_t *p) { return convt3d_bf16_to_f32(p->bits); }
CT3D_DEV void store_elem(f16_t *p, float v) { p->bits = convt3d_f32_to_f16(v); }
CT3D_DEV void store_elem(bf16_t *p, float v) { p->bits = convt3d_f32_to_bf16(v); }
#else
CT3D_DEV float load_elem(const f16_t *p)
{
    return __half2float(__ushort_as_half(__ldg(reinterpret_cast<const unsigned short *>(p))));
}
CT3D_DEV float load_elem(const bf16_t *p)
{
    return __bfloat162float(
        __ushort_as_bfloat16(__ldg(reinterpret_cast<const unsigned short *>(p))));
}
CT3D_DEV void store_elem(f16_t *p, float v) { p->bits = __half_as_ushort(__float2half_rn(v)); }
CT3D_DEV void store_elem(bf16_t *p, float v)
{
    p->bits = __bfloat16_as_ushort(__float2bfloat16_rn(v));
}
#endif
/* A half element's bits now, its value later (widen_bits): a load whose
 * result is not used at once lets its latency pass under other work. */
template <class T>
CT3D_DEV unsigned short load_bits(const T *p)
{
    return CT3D_LDG(reinterpret_cast<const unsigned short *>(p));
}

/* The element copies of one 16-byte run: its first n (<= 0: none)
 * elements from src, step elements apart (f32 by 4-byte cp.async, 16-bit
 * data through registers), zeros for the rest: where x is not aligned for
 * copy16 or the run passes the end of its data. */
template <class T>
CT3D_DEV void copy_elems16(float *dst, const T *src, int n, long long step)
{
    constexpr int VE = 16 / (int)sizeof(T);
    if constexpr (sizeof(T) == sizeof(float)) {
        CT3D_UNROLL
        for (int i = 0; i < VE; i++)
            copy4(dst + i, reinterpret_cast<const float *>(i < n ? src + i * step : src), i < n);
    } else {
        unsigned short *d = reinterpret_cast<unsigned short *>(dst);
        CT3D_UNROLL
        for (int i = 0; i < VE; i++)
            d[i] = i < n ? load_bits(src + i * step) : (unsigned short)0;
    }
}
#ifdef CONVT3D_GPU_EMULATE
CT3D_DEV float widen_bits(const f16_t *, unsigned short b) { return convt3d_f16_to_f32(b); }
CT3D_DEV float widen_bits(const bf16_t *, unsigned short b) { return convt3d_bf16_to_f32(b); }
#else
CT3D_DEV float widen_bits(const f16_t *, unsigned short b)
{
    return __half2float(__ushort_as_half(b));
}
CT3D_DEV float widen_bits(const bf16_t *, unsigned short b)
{
    return __bfloat162float(__ushort_as_bfloat16(b));
}
#endif
/* v rounded to the element type (to nearest even). */
CT3D_DEV void store_elem(float *p, float v) { *p = v; }

/* ---- tensor cores: TF32 mma.sync m16n8k8 ----------------------------------- */

/* x rounded to TF32 (10 mantissa bits, to nearest, ties away from zero:
 * cvt.rna), as the 32-bit pattern the MMA takes. */
#ifdef CONVT3D_GPU_EMULATE
CT3D_DEV unsigned to_tf32(float x)
{
    unsigned u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u = (u + 0x1000u) & 0xffffe000u;
    return u;
}
CT3D_DEV float tf32_value(unsigned u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
CT3D_DEV unsigned f32_bits(float x)
{
    unsigned u;
    memcpy(&u, &x, sizeof u);
    return u;
}
/* The emulator (tests/gpu_emulate.cc) queues a thread's MMAs and carries
 * them out at mma_flush(), which every thread of the block calls in step:
 * there the warp's fragments are exchanged (one barrier pair for a whole
 * step instead of one per MMA). */
void ct3d_emulate_mma_tf32(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                           int tid);
void ct3d_emulate_mma_flush(int tid);
CT3D_DEV void mma_tf32(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], int tid)
{
    ct3d_emulate_mma_tf32(c, a, b, tid);
}
CT3D_DEV void mma_flush(int tid) { ct3d_emulate_mma_flush(tid); }
#else
CT3D_DEV unsigned to_tf32(float x)
{
    unsigned u;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u) : "f"(x));
    return u;
}
CT3D_DEV float tf32_value(unsigned u) { return __uint_as_float(u); }
CT3D_DEV unsigned f32_bits(float x) { return __float_as_uint(x); }
/* c += A (16 x 8, row) B (8 x 8, col), fp32 accumulation.  Lane l (group
 * g = l / 4, t = l % 4) holds a = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4];
 * b = B[t][g], B[t+4][g]; c = C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]. */
CT3D_DEV void mma_tf32(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], int tid)
{
    (void)tid;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/* Every MMA issued so far has its result in c (the emulator's sync point). */
CT3D_DEV void mma_flush(int tid) { (void)tid; }
#endif

/* v as the TF32 MMA takes it: SPLIT (3xTF32), a big TF32 part and the TF32
 * rounding of what it leaves; else rounded to TF32 (ROUND) or as it is
 * (weights rounded at planning), small = 0. */
template <bool SPLIT, bool ROUND>
CT3D_DEV void tf32_operand_parts(float v, unsigned &big, unsigned &small)
{
    if constexpr (SPLIT) {
        big = to_tf32(v);
        small = to_tf32(v - tf32_value(big));
    } else if constexpr (ROUND) {
        big = to_tf32(v);
        small = 0u;
    } else {
        big = f32_bits(v);
        small = 0u;
    }
}

/* c += A B from tf32_operand_parts: with SPLIT the three products of
 * 3xTF32, the small ones first so that they are not lost against the big
 * product; else the one. */
template <bool SPLIT>
CT3D_DEV void mma_tf32_parts(float (&c)[4], const unsigned (&abig)[4], const unsigned (&asmall)[4],
                             const unsigned (&bbig)[2], const unsigned (&bsmall)[2], int tid)
{
    if constexpr (SPLIT) {
        mma_tf32(c, asmall, bbig, tid);
        mma_tf32(c, abig, bsmall, tid);
    }
    mma_tf32(c, abig, bbig, tid);
}

/* ---- tensor cores: f16 / bf16 mma.sync m16n8k16 ------------------------- */

/* Four 8 x 8 matrices of 16-bit elements out of shared memory, each
 * transposed (ldmatrix .x4 .trans).  The tile at `base` (the same in every
 * lane of the warp) has rows `pitch` elements apart; matrix i starts at
 * row ro[i], column co[i] (multiples of 8, orders kLdsmA / kLdsmB).  Lane t
 * gets in dst[i] the elements (row 2 (t % 4), column t / 4) and (row
 * 2 (t % 4) + 1, the same column) of matrix i, the first in the low half:
 * for a tile stored [k][m] that is A's m16n8k16 fragment (matrices
 * (k, m), (k, m + 8), (k + 8, m), (k + 8, m + 8)), for one stored [k][n]
 * two B fragments (matrices (k, n), (k + 8, n), then n + 8).  ldsm_x4:
 * the same untransposed, lane t getting (row t / 4, columns 2 (t % 4) and
 * 2 (t % 4) + 1): for a tile stored [m][k], A's fragment in order kLdsmB. */
enum ldsm_order { kLdsmA = 0, kLdsmB = 1 };
template <class T>
struct is_bf16 {
    static constexpr bool value = false;
};
template <>
struct is_bf16<bf16_t> {
    static constexpr bool value = true;
};
template <int ORDER>
CT3D_DEV void ldsm_origin(int i, int &ro, int &co)
{
    ro = ORDER == kLdsmA ? (i >> 1) * 8 : (i & 1) * 8;
    co = ORDER == kLdsmA ? (i & 1) * 8 : (i >> 1) * 8;
}
#ifdef CONVT3D_GPU_EMULATE
template <int ORDER, bool TRANS>
CT3D_DEV void ldsm_x4_as(unsigned (&dst)[4], const unsigned short *base, int pitch, int lane)
{
    /* lane t's pair: (row 2 (t % 4) and the next, column t / 4) transposed,
     * (row t / 4, column 2 (t % 4) and the next) not */
    const int r = TRANS ? 2 * (lane & 3) : lane >> 2, c = TRANS ? lane >> 2 : 2 * (lane & 3);
    for (int i = 0; i < 4; i++) {
        int ro, co;
        ldsm_origin<ORDER>(i, ro, co);
        const unsigned short *e = base + (ro + r) * pitch + co + c;
        dst[i] = (unsigned)e[0] | (unsigned)e[TRANS ? pitch : 1] << 16;
    }
}
void ct3d_emulate_mma_half(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], int tid,
                           bool bf16);
template <class T>
CT3D_DEV void mma_half(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], int tid)
{
    ct3d_emulate_mma_half(c, a, b, tid, is_bf16<T>::value);
}
#else
template <int ORDER, bool TRANS>
CT3D_DEV void ldsm_x4_as(unsigned (&dst)[4], const unsigned short *base, int pitch, int lane)
{
    /* lane l names row l % 8 of matrix l / 8 */
    int ro, co;
    ldsm_origin<ORDER>(lane >> 3, ro, co);
    const unsigned a = (unsigned)__cvta_generic_to_shared(base + (ro + (lane & 7)) * pitch + co);
    if constexpr (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(dst[0]), "=r"(dst[1]), "=r"(dst[2]), "=r"(dst[3])
                     : "r"(a));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(dst[0]), "=r"(dst[1]), "=r"(dst[2]), "=r"(dst[3])
                     : "r"(a));
}
/* c += A (16 x 16, row) B (16 x 8, col), fp32 accumulation.  Lane l (g =
 * l / 4, t = l % 4) holds pairs a = A[g][2t..], A[g+8][2t..], A[g][2t+8..],
 * A[g+8][2t+8..]; b = B[2t..][g], B[2t+8..][g]; c as mma_tf32's. */
template <class T>
CT3D_DEV void mma_half(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], int tid)
{
    (void)tid;
    if constexpr (!is_bf16<T>::value)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

template <int ORDER>
CT3D_DEV void ldsm_x4_trans(unsigned (&dst)[4], const unsigned short *base, int pitch, int lane)
{
    ldsm_x4_as<ORDER, true>(dst, base, pitch, lane);
}
template <int ORDER>
CT3D_DEV void ldsm_x4(unsigned (&dst)[4], const unsigned short *base, int pitch, int lane)
{
    ldsm_x4_as<ORDER, false>(dst, base, pitch, lane);
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
