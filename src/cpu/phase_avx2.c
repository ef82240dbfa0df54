/* The stride-phase kernels for AVX2 + FMA: 8 lanes, 16 vector registers.
 * Masks live in vector registers here, so taps whose lanes all lie inside the
 * input row load without them (NCDHW_SPLIT_FULL).  Built with its own -m
 * flags (Makefile.am) and only picked when the CPU reports AVX2 and FMA. */
#include <immintrin.h>

#include "kernels.h"

#define VL 8
#define VREGS 16
typedef __m256 vf;
typedef __m256i vmask;

static inline vf v_zero(void) { return _mm256_setzero_ps(); }
static inline vf v_or(vf a, vf b) { return _mm256_or_ps(a, b); } /* exact: bits */
static inline vf v_set1(float f) { return _mm256_set1_ps(f); }
static inline vf v_loadu(const float *p) { return _mm256_loadu_ps(p); }
static inline vf v_loadu_mask(const float *p, vmask m) { return _mm256_maskload_ps(p, m); }
static inline void v_storeu_mask(float *p, vf v, vmask m)
{
    /* A masked store is slow on several cores: only the partial ones use it. */
    if (_mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xff)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, m, v);
}
static inline void v_stream(float *p, vf v) { _mm256_stream_ps(p, v); }
static void v_fence(void) { _mm_sfence(); }
static inline vf v_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf v_bcast(const float *p) { return _mm256_broadcast_ss(p); }
static inline vmask v_mask_range(int lo, int hi)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(lo), lane),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
}
/* a0 b0 a1 b1 a2 b2 a3 b3 and a4 b4 ... a7 b7 */
static inline vf v_zip_lo(vf a, vf b)
{
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x20);
}
static inline vf v_zip_hi(vf a, vf b)
{
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x31);
}
static inline void v_interleave2(vf a, vf b, float *p)
{
    _mm256_storeu_ps(p, v_zip_lo(a, b));
    _mm256_storeu_ps(p + VL, v_zip_hi(a, b));
}
static inline void v_interleave2_stream(vf a, vf b, float *p)
{
    _mm256_stream_ps(p, v_zip_lo(a, b));
    _mm256_stream_ps(p + VL, v_zip_hi(a, b));
}

static inline vf v_unpacklo(vf a, vf b) { return _mm256_unpacklo_ps(a, b); }
static inline vf v_unpackhi(vf a, vf b) { return _mm256_unpackhi_ps(a, b); }
static inline vf v_shuffle_0101(vf a, vf b) { return _mm256_shuffle_ps(a, b, 0x44); }
static inline vf v_shuffle_2323(vf a, vf b) { return _mm256_shuffle_ps(a, b, 0xee); }
/* The last step of v_transpose (cpu/phase_tile.h): r[4i + j] holds, in
 * 128-bit lane L, rows 4i .. 4i+3 of column 4L + j; swaps the high lane of
 * r[j] with the low lane of r[4 + j]. */
static inline __attribute__((always_inline)) void v_transpose_lanes(vf r[8])
{
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        const vf lo = _mm256_permute2f128_ps(r[j], r[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(r[j], r[4 + j], 0x31);
        r[j] = lo;
    }
}

/* At most 12 accumulators of the 16 registers. */
#define NCDHW_MAXV 3
#define NCDHW_MAXO 12
#define NCDHW_OCB_MAX {12, 6, 4}
#define NCDHW_TILES(X) UPTO12(X, 1) UPTO6(X, 2) UPTO4(X, 3)
#define NCDHW_SPLIT_FULL 1
/* Output-channel tiles: one vector x up to 12 positions (stored a vector
 * of positions at a time), a weight vector for each of at most 4 taps and
 * a broadcast: 8 positions would leave only 8 accumulators, just the FMA
 * latency times the FMA pipes of current cores. */
#define OCL_MAXV 1
#define OCL_MAXP 12
#define OCL_POS_MAX {12}
#define OCL_TILES(X, ...) UPTO12(X, 1, __VA_ARGS__)
/* NDHWC tiles prefetch the weights 4 input channels ahead (bench/NOTES.md
 * round 9: measured on Zen 3 only). */
#define NDHWC_PREFETCH_W 4
/* Up to 4 channel vectors by 3 positions: 12 accumulators, the 3
 * broadcasts and one weight vector at a time (the 4 x 3 order of
 * phase_tile.h); where C_out/G is 4 or 7+ vectors, one x read and fewer
 * ragged blocks than blocks of 2-3 (bench/NOTES.md round 41, Zen 3). */
#define NDHWC_MAXV 4
#define NDHWC_MAXP 12
#define NDHWC_POS_MAX {12, 6, 4, 3}
#define NDHWC_TILES(X) UPTO12(X, 1) UPTO6(X, 2) UPTO4(X, 3) X(1, 4) X(2, 4) X(3, 4)

/* NDHWC over whole rows: depthwise tiles as the NDHWC ones; grouped-lanes
 * tiles keep each position's input span too, so half the accumulators. */
#define ROWS_MAXV 3
#define ROWS_MAXP 12
#define DW_MAXV 3
#define DW_POS_MAX {12, 6, 4}
#define DW_TILES(X) UPTO12(X, 1) UPTO6(X, 2) UPTO4(X, 3)
#define GL_MAXV 2
#define GL_POS_MAX {6, 3}
#define GL_TILES(X) UPTO6(X, 1) X(1, 2) X(2, 2) X(3, 2)

/* For the NDHWC tiles over whole rows (cpu/ndhwc_rows.h). */
typedef __m256i vi;
static inline vi v_iload(const int *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline vi v_iadd(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi v_iset1(int i) { return _mm256_set1_epi32(i); }
static inline vf v_permute(vf x, vi idx) { return _mm256_permutevar8x32_ps(x, idx); }

/* Position-lane tiles (cpu/poslanes.h): Q accumulators and Q spans, a
 * weight vector, a permuted span and the lane tables in the 16 registers. */
#define PLN_MAXQ 6
#define PLN_TILES(X) UPTO6(X, 0)

/* Input-channel-lane tiles (cpu/iclanes.h): P x O accumulators, O weight
 * vectors and an x vector in flight within the 16 registers. */
#define ICL_MAXO 4
#define ICL_MAXP 12
#define ICL_POS_MAX {12, 6, 3, 2}
#define ICL_TILES(X) UPTO12(X, 1) UPTO6(X, 2) X(1, 3) X(2, 3) X(3, 3) X(1, 4) X(2, 4)
/* Lanes 0-3 + 4-7, then 0-1 + 2-3, then 0 + 1. */
static inline float v_hsum(vf v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Pointwise tiles (cpu/pointwise.h): as the NDHWC tiles, <= 12 accumulators. */
#define PW_MAXV 3
#define PW_SHAPES(X) X(1, 12) X(2, 6) X(3, 4)

#define CPU_ISA_SYMBOL convt3d_cpu_isa_avx2
#define CPU_ISA_NAME "avx2"
#include "phase_tile.h"
