/* quantize.c — f32 rows into Q8_0 and Q4_0 blocks, byte for byte as ggml's reference quantizers. */
#include "engine/quantize.h"

#include <math.h>
#include <string.h>

#include "engine/half.h"

static void put_scale(uint8_t *b, float d) {
    uint16_t h = half_f32_to_f16(d);
    b[0] = (uint8_t)(h & 0xff), b[1] = (uint8_t)(h >> 8);
}

/* The reciprocal is taken once and multiplied, not divided per value: that
 * is what makes the rounding of a borderline value match ggml's. */
static float inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

/* round(v) half away from zero, v within ±127 for finite rows (a NaN gives 0). */
static uint8_t q8_level(float v) {
    float r = roundf(v);
    return (uint8_t)(int8_t)(r >= 127.0f ? 127 : r <= -127.0f ? -127 : r == r ? (int)r : 0);
}

static void q8_block(const float *x, uint8_t *b) {
    float amax = 0.0f;
    for (int j = 0; j < QUANTIZE_BLOCK; j++) amax = fmaxf(amax, fabsf(x[j]));
    float d = amax / 127.0f, id = inverse(d);
    put_scale(b, d);
    for (int j = 0; j < QUANTIZE_BLOCK; j++) b[2 + j] = q8_level(x[j] * id);
}

/* The signed value of largest magnitude; the first wins a tie, so +m and -m
 * in one block give the sign of whichever comes first. */
static float signed_max(const float *x) {
    float amax = 0.0f, m = 0.0f;
    for (int j = 0; j < QUANTIZE_BLOCK; j++)
        if (amax < fabsf(x[j])) amax = fabsf(x[j]), m = x[j];
    return m;
}

/* x / d + 8.5 truncated toward zero and capped at 15: the largest value maps
 * to 0 (it is -8 d), the opposite extreme would map to 16 and is capped. */
static uint8_t q4_level(float v) {
    float t = v + 8.5f; /* in [0.5, 16.5] for finite rows; the guards keep a NaN from an undefined cast */
    return (uint8_t)(t >= 15.0f ? 15 : t > 0.0f ? (int)t : 0);
}

static void q4_block(const float *x, uint8_t *b) {
    float d = signed_max(x) / -8.0f, id = inverse(d);
    put_scale(b, d);
    for (int j = 0; j < QUANTIZE_BLOCK / 2; j++)
        b[2 + j] = (uint8_t)(q4_level(x[j] * id) | q4_level(x[j + QUANTIZE_BLOCK / 2] * id) << 4);
}

int quantize_q8_0(const float *x, uint8_t *out, int64_t n) {
    if (n < 0 || n % QUANTIZE_BLOCK) return -1;
    for (int64_t i = 0; i < n / QUANTIZE_BLOCK; i++) q8_block(x + i * QUANTIZE_BLOCK, out + i * QUANTIZE_Q8_0_BYTES);
    return 0;
}

int quantize_q4_0(const float *x, uint8_t *out, int64_t n) {
    if (n < 0 || n % QUANTIZE_BLOCK) return -1;
    for (int64_t i = 0; i < n / QUANTIZE_BLOCK; i++) q4_block(x + i * QUANTIZE_BLOCK, out + i * QUANTIZE_Q4_0_BYTES);
    return 0;
}
