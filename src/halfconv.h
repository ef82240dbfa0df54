/* Conversions between f32 and the two 16-bit types, in portable C (and
 * C++): the CPU backend, the reference, convt3d_convert() and the GPU
 * emulator all use these, and the CUDA kernels the hardware's own
 * instructions, which round the same way (to nearest, ties to even).
 * Every f16 and bf16 value is exact in f32, so widening never rounds. */
#ifndef CONVT3D_HALFCONV_H
#define CONVT3D_HALFCONV_H

#include <stdint.h>
#include <string.h>

static inline uint32_t convt3d_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float convt3d_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float convt3d_bf16_to_f32(uint16_t h) { return convt3d_bits_f32((uint32_t)h << 16); }

/* Round to nearest even; NaN stays a (quiet) NaN of the same sign. */
static inline uint16_t convt3d_f32_to_bf16(float f)
{
    const uint32_t u = convt3d_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float convt3d_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) /* Inf, NaN */
        return convt3d_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp != 0)
        return convt3d_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    /* zero or subnormal: man * 2^-24, exact in f32 */
    const float v = (float)man * (1.0f / 16777216.0f);
    return sign ? -v : v;
}

/* Round to nearest even, overflow to Inf, NaN stays a quiet NaN. */
static inline uint16_t convt3d_f32_to_f16(float f)
{
    const uint32_t u = convt3d_f32_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* rounds to 65536 or more: Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) { /* normal in f16 (>= 2^-14) */
        const uint32_t r = a - 0x38000000u; /* rebias the exponent by 112 */
        return (uint16_t)(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    if (a < 0x33000000u) /* below half the smallest subnormal (2^-25): zero */
        return sign;
    /* subnormal: the integer nearest to |f| * 2^24, ties to even */
    const uint32_t e = a >> 23, man = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e; /* |f| * 2^24 = man >> (126 - e) */
    const uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    const uint32_t r = q + (rem > half || (rem == half && (q & 1u)));
    return (uint16_t)(sign | r);
}

#endif /* CONVT3D_HALFCONV_H */
