/* half.c — portable bf16/f16 <-> f32 conversions (half.h). */
#include "engine/half.h"

#include <string.h>

static uint32_t f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_f32(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

float half_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t half_f32_to_bf16(float x) {
    uint32_t u = f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        /* Truncation alone could clear every remaining mantissa bit and turn
         * a NaN into inf; setting the quiet bit keeps it a NaN. */
        return (uint16_t)((u >> 16) | 0x0040u);
    /* Adding 0x7fff plus the lowest kept bit rounds half to even; a carry
     * out of the mantissa correctly bumps the exponent (up to inf). */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float half_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp != 0) return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0) return bits_f32(sign);
    /* Subnormal: shift the leading 1 up to the implicit-bit position; every
     * shift lowers the exponent by one from that of 2^-14. */
    uint32_t e32 = 113;
    while (!(mant & 0x400u)) {
        mant <<= 1;
        e32--;
    }
    return bits_f32(sign | (e32 << 23) | ((mant & 0x3ffu) << 13));
}

/* Round m >> shift to nearest, ties to even (shift >= 1). */
static uint32_t shift_rne(uint32_t m, unsigned shift) {
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return q;
}

uint16_t half_f32_to_f16(float x) {
    uint32_t u = f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xffu, mant = u & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x0200u | (mant >> 13) : 0u));
    int e = (int)exp - 127;
    if (e > 15) return (uint16_t)(sign | 0x7c00u);
    if (e >= -14) {
        /* Normal range; a rounding carry may reach the exponent, and from
         * 0x7bff it lands exactly on inf (0x7c00), as it should. */
        uint32_t h = ((uint32_t)(e + 15) << 10) | (mant >> 13);
        return (uint16_t)(sign | (h + (shift_rne(mant, 13) - (mant >> 13))));
    }
    if (e < -25) return sign; /* below half the smallest subnormal: zero */
    /* Subnormal half: units of 2^-24; value = (mant|2^23) * 2^(e-23). A
     * result of 0x400 is the smallest normal, again the right bit pattern. */
    return (uint16_t)(sign | shift_rne(mant | 0x800000u, (unsigned)(-(e + 1))));
}

void half_from_f32_n(uint16_t *out, const float *in, size_t n, int bf16) {
    if (bf16) for (size_t i = 0; i < n; i++) out[i] = half_f32_to_bf16(in[i]);
    else for (size_t i = 0; i < n; i++) out[i] = half_f32_to_f16(in[i]);
}
