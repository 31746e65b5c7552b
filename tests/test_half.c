/* test_half.c — bf16 and f16 conversions: every bit pattern round trips, known values, ties to even. */
#include "tests/test.h"
#include "engine/half.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

static float from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static int f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }
static int bf16_is_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu); }

TEST(half_f16_all_patterns_round_trip) {
    int bad = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float x = half_f16_to_f32(h);
        uint16_t back = half_f32_to_f16(x);
        if (f16_is_nan(h)) {
            if (!isnan(x) || !f16_is_nan(back) || (back & 0x8000) != (h & 0x8000)) bad++;
        } else if (back != h) {
            if (bad++ < 5) test_fail(__FILE__, __LINE__, "f16 0x%04x -> %g -> 0x%04x", h, x, back);
        }
    }
    CHECK_INT(bad, 0);
}

TEST(half_bf16_all_patterns_round_trip) {
    int bad = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float x = half_bf16_to_f32(h);
        uint16_t back = half_f32_to_bf16(x);
        if (bf16_is_nan(h)) {
            if (!isnan(x) || !bf16_is_nan(back) || (back & 0x8000) != (h & 0x8000)) bad++;
        } else if (back != h) {
            if (bad++ < 5) test_fail(__FILE__, __LINE__, "bf16 0x%04x -> %g -> 0x%04x", h, x, back);
        }
    }
    CHECK_INT(bad, 0);
}

TEST(half_known_values) {
    CHECK_INT(half_f32_to_f16(1.0f), 0x3c00);
    CHECK_INT(half_f32_to_f16(-2.5f), 0xc100);
    CHECK_INT(half_f32_to_f16(65504.0f), 0x7bff);
    CHECK_INT(half_f32_to_f16(65519.0f), 0x7bff);       /* below the midpoint to inf */
    CHECK_INT(half_f32_to_f16(65520.0f), 0x7c00);       /* the midpoint ties to inf (even) */
    CHECK_INT(half_f32_to_f16(1e6f), 0x7c00);
    CHECK_INT(half_f32_to_f16(-INFINITY), 0xfc00);
    CHECK_INT(half_f32_to_f16(INFINITY), 0x7c00);
    CHECK_INT(half_f32_to_f16(ldexpf(1, -24)), 0x0001); /* smallest subnormal */
    CHECK_INT(half_f32_to_f16(ldexpf(3, -24)), 0x0003);
    CHECK_INT(half_f32_to_f16(ldexpf(1, -14)), 0x0400); /* smallest normal */
    CHECK_INT(half_f32_to_f16(ldexpf(1023, -24)), 0x03ff);
    CHECK_INT(half_f32_to_f16(ldexpf(2047, -25)), 0x0400); /* rounds up into the normals */
    CHECK_INT(half_f32_to_f16(ldexpf(1, -25)), 0x0000);    /* tie between 0 and 1 -> 0 */
    CHECK_INT(half_f32_to_f16(ldexpf(3, -25)), 0x0002);    /* tie between 1 and 2 -> 2 */
    CHECK_INT(half_f32_to_f16(ldexpf(1.0001f, -25)), 0x0001);
    CHECK_INT(half_f32_to_f16(-ldexpf(1, -30)), 0x8000);
    CHECK_INT(half_f32_to_f16(FLT_MIN / 4), 0x0000);       /* f32 subnormal */
    CHECK_INT(half_f32_to_f16(-0.0f), 0x8000);
    CHECK_INT(half_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);     /* tie -> even 0x3c00 */
    CHECK_INT(half_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02); /* tie -> even 0x3c02 */
    CHECK(f16_is_nan(half_f32_to_f16(NAN)));
    CHECK(f16_is_nan(half_f32_to_f16(from_bits(0x7f800001u)))); /* payload only in low bits */
    CHECK_NEAR(half_f16_to_f32(0x3c00), 1.0, 0);
    CHECK_NEAR(half_f16_to_f32(0xc100), -2.5, 0);
    CHECK_NEAR(half_f16_to_f32(0x7bff), 65504.0, 0);
    CHECK_NEAR(half_f16_to_f32(0x0001), ldexp(1, -24), 0);
    CHECK_NEAR(half_f16_to_f32(0x03ff), ldexp(1023, -24), 0);
    CHECK(isinf(half_f16_to_f32(0xfc00)) && half_f16_to_f32(0xfc00) < 0);
    CHECK(isnan(half_f16_to_f32(0x7e00)));

    CHECK_INT(half_f32_to_bf16(1.0f), 0x3f80);
    CHECK_INT(half_f32_to_bf16(-2.5f), 0xc020);
    CHECK_INT(half_f32_to_bf16(INFINITY), 0x7f80);
    CHECK_INT(half_f32_to_bf16(FLT_MAX), 0x7f80);                   /* rounds up to inf */
    CHECK_INT(half_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);      /* tie -> even */
    CHECK_INT(half_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);  /* tie -> even */
    CHECK_INT(half_f32_to_bf16(1.0f + ldexpf(1.5f, -8)), 0x3f81);   /* above the tie */
    CHECK_INT(half_f32_to_bf16(from_bits(0x00010000u)), 0x0001);    /* subnormal kept */
    CHECK(bf16_is_nan(half_f32_to_bf16(NAN)));
    CHECK(bf16_is_nan(half_f32_to_bf16(from_bits(0x7f800001u))));  /* truncation would give inf */
    CHECK_NEAR(half_bf16_to_f32(0x4049), 3.140625, 0);
}

/* For every pair of adjacent finite halves, the exact midpoint (representable
 * in f32) must round to the even one and its f32 neighbours to the nearer. */
static void check_midpoints(int bf, uint16_t last) {
    int bad = 0;
    for (uint32_t h = 0; h < last; h++) {
        float a = bf ? half_bf16_to_f32((uint16_t)h) : half_f16_to_f32((uint16_t)h);
        float b = bf ? half_bf16_to_f32((uint16_t)(h + 1)) : half_f16_to_f32((uint16_t)(h + 1));
        float mid = a + (b - a) / 2;
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        uint16_t (*conv)(float) = bf ? half_f32_to_bf16 : half_f32_to_f16;
        if (conv(mid) != even || conv(nextafterf(mid, 0)) != h || conv(nextafterf(mid, INFINITY)) != h + 1)
            if (bad++ < 3) test_fail(__FILE__, __LINE__, "%s midpoint after 0x%04x wrong", bf ? "bf16" : "f16", h);
        if (conv(-mid) != (uint16_t)(even | 0x8000)) bad++;
    }
    CHECK_INT(bad, 0);
}

TEST(half_round_to_nearest_even_at_every_midpoint) {
    check_midpoints(0, 0x7bfe);
    check_midpoints(1, 0x7f7e);
}
