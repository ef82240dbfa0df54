/* The stride-phase kernels for AVX-512 (F, VL, BW, DQ): 16 lanes, 32 vector
 * registers, lane masks in k registers, so W borders cost little in the hot
 * loop; taps whose lanes all lie inside the row still load unmasked
 * (NCDHW_SPLIT_FULL: measured on Zen 4, 0.5-3% faster).  Built with its own -m flags (Makefile.am) and only picked when the
 * CPU reports AVX-512 (cpu_omp.c). */
#include <immintrin.h>

#include "kernels.h"

#define VL 16
#define VREGS 32
typedef __m512 vf;
typedef __mmask16 vmask;

static inline vf v_zero(void) { return _mm512_setzero_ps(); }
static inline vf v_or(vf a, vf b) { return _mm512_or_ps(a, b); } /* exact: bits */
static inline vf v_set1(float f) { return _mm512_set1_ps(f); }
static inline vf v_loadu(const float *p) { return _mm512_loadu_ps(p); }
static inline vf v_loadu_mask(const float *p, vmask m) { return _mm512_maskz_loadu_ps(m, p); }
static inline void v_storeu_mask(float *p, vf v, vmask m) { _mm512_mask_storeu_ps(p, m, v); }
static inline void v_stream(float *p, vf v) { _mm512_stream_ps(p, v); }
static void v_fence(void) { _mm_sfence(); }
static inline vf v_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf v_bcast(const float *p) { return _mm512_set1_ps(*p); }
static inline vmask v_mask_range(int lo, int hi)
{
    return (vmask)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}
/* a0 b0 a1 b1 ... a7 b7 and a8 b8 ... a15 b15 */
static inline vf v_zip_lo(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), b);
}
static inline vf v_zip_hi(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), b);
}
static inline void v_interleave2(vf a, vf b, float *p)
{
    _mm512_storeu_ps(p, v_zip_lo(a, b));
    _mm512_storeu_ps(p + VL, v_zip_hi(a, b));
}
static inline void v_interleave2_stream(vf a, vf b, float *p)
{
    _mm512_stream_ps(p, v_zip_lo(a, b));
    _mm512_stream_ps(p + VL, v_zip_hi(a, b));
}

static inline vf v_unpacklo(vf a, vf b) { return _mm512_unpacklo_ps(a, b); }
static inline vf v_unpackhi(vf a, vf b) { return _mm512_unpackhi_ps(a, b); }
static inline vf v_shuffle_0101(vf a, vf b) { return _mm512_shuffle_ps(a, b, 0x44); }
static inline vf v_shuffle_2323(vf a, vf b) { return _mm512_shuffle_ps(a, b, 0xee); }
/* The last step of v_transpose (cpu/phase_tile.h): r[4i + j] holds, in
 * 128-bit lane L, rows 4i .. 4i+3 of column 4L + j; for each j, transposes
 * the 4 x 4 matrix of those lanes across r[j], r[4 + j], r[8 + j], r[12 + j]. */
static inline __attribute__((always_inline)) void v_transpose_lanes(vf r[16])
{
    vf t[16];
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        const vf a02 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
        const vf a13 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
        const vf b02 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        const vf b13 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
        t[j] = _mm512_shuffle_f32x4(a02, b02, 0x88);
        t[8 + j] = _mm512_shuffle_f32x4(a02, b02, 0xdd);
        t[4 + j] = _mm512_shuffle_f32x4(a13, b13, 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(a13, b13, 0xdd);
    }
    _Pragma("GCC unroll 16") for (int c = 0; c < 16; c++)
        r[c] = t[c];
}

/* Tiles keep O*V (or P*V) <= 24 accumulators in the 32 registers, leaving
 * room for the loaded vectors and a broadcast. */
#define NCDHW_MAXV 4
#define NCDHW_MAXO 16
#define NCDHW_OCB_MAX {16, 12, 8, 6}
#define NCDHW_TILES(X) UPTO16(X, 1) UPTO12(X, 2) UPTO8(X, 3) UPTO6(X, 4)
#define NCDHW_SPLIT_FULL 1
/* Output-channel tiles: one vector x 16 positions, or (short rows, see
 * cpu_tiling_ncdhw_oc) 2 vectors x 11 positions = 22 accumulators, 2 weight vectors
 * for each of at most 4 taps and a broadcast. */
#define OCL_MAXV 2
#define OCL_MAXP 16
#define OCL_POS_MAX {16, 11}
#define OCL_TILES(X, ...) UPTO16(X, 1, __VA_ARGS__) UPTO11(X, 2, __VA_ARGS__)
#define NDHWC_MAXV 4
#define NDHWC_MAXP 16
#define NDHWC_POS_MAX {16, 12, 8, 6}
#define NDHWC_TILES(X) UPTO16(X, 1) UPTO12(X, 2) UPTO8(X, 3) UPTO6(X, 4)

/* NDHWC over whole rows: depthwise tiles as the NDHWC ones (accumulators,
 * a weight vector each, one x vector in flight); grouped-lanes tiles also
 * keep each position's input span, so half the accumulators. */
#define ROWS_MAXV 4
#define ROWS_MAXP 16
#define DW_MAXV 4
#define DW_POS_MAX {16, 12, 8, 6}
#define DW_TILES(X) UPTO16(X, 1) UPTO12(X, 2) UPTO8(X, 3) UPTO6(X, 4)
#define GL_MAXV 2
#define GL_POS_MAX {12, 6}
#define GL_TILES(X) UPTO12(X, 1) UPTO6(X, 2)

/* For the NDHWC tiles over whole rows (cpu/ndhwc_rows.h). */
typedef __m512i vi;
static inline vi v_iload(const int *p) { return _mm512_loadu_si512(p); }
static inline vi v_iadd(vi a, vi b) { return _mm512_add_epi32(a, b); }
static inline vi v_iset1(int i) { return _mm512_set1_epi32(i); }
static inline vf v_permute(vf x, vi idx) { return _mm512_permutexvar_ps(idx, x); }
static inline vf v_permute2(vf lo, vi idx, vf hi) { return _mm512_permutex2var_ps(lo, idx, hi); }
/* Grouped-lanes tiles whose span takes two vectors (one vpermt2ps an FMA):
 * the spans are twice the registers, so at most 8 accumulators. */
#define GL2_MAXV 2
#define GL2_POS_MAX {8, 4}
#define GL2_TILES(X) UPTO8(X, 1) UPTO4(X, 2)

/* Position-lane tiles (cpu/poslanes.h): Q accumulators and Q spans, a
 * weight vector and a permuted span in flight. */
#define PLN_MAXQ 12
#define PLN_TILES(X) UPTO12(X, 0)

/* Input-channel-lane tiles (cpu/iclanes.h): at most 24 accumulators. */
#define ICL_MAXO 4
#define ICL_MAXP 16
#define ICL_POS_MAX {16, 12, 8, 6}
#define ICL_TILES(X) UPTO16(X, 1) UPTO12(X, 2) UPTO8(X, 3) UPTO6(X, 4)
/* Lanes 0-7 + 8-15, then as the AVX2 set: 0-3 + 4-7, 0-1 + 2-3, 0 + 1. */
static inline float v_hsum(vf v)
{
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Pointwise tiles (cpu/pointwise.h): as the NDHWC tiles, <= 24 accumulators. */
#define PW_MAXV 4
#define PW_SHAPES(X) X(1, 16) X(2, 12) X(3, 8) X(4, 6)

#define CPU_ISA_SYMBOL convt3d_cpu_isa_avx512
#define CPU_ISA_NAME "avx512"
#include "phase_tile.h"
