/* quant.c — ggml's quantised blocks unpacked to integers and scales, and rows widened to f32. */
#include "engine/quant.h"

#include <string.h>

#include "engine/half.h"

static float f16_at(const uint8_t *p) { return half_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* Both groups of a 32-weight block share one scale and offset. */
static void two_groups(float *sc, float *mn, float d, float m) { sc[0] = sc[1] = d, mn[0] = mn[1] = m; }

/* Q4_0 (d, 16 bytes of nibbles, offset 8) and Q4_1 (d, m, nibbles): the
 * low nibbles are weights 0-15, the high ones 16-31. */
static int unpack_q4(const uint8_t *b, int8_t *q, float *sc, float *mn, int with_min) {
    const uint8_t *qs = b + (with_min ? 4 : 2);
    int off = with_min ? 0 : 8;
    for (int j = 0; j < 16; j++) q[j] = (int8_t)((qs[j] & 15) - off), q[j + 16] = (int8_t)((qs[j] >> 4) - off);
    two_groups(sc, mn, f16_at(b), with_min ? -f16_at(b + 2) : 0.0f);
    return 32;
}

/* Q5_0 (d, 32 high bits, nibbles, offset 16) and Q5_1 (d, m, high bits,
 * nibbles): bit j of the high word is weight j's fifth bit. */
static int unpack_q5(const uint8_t *b, int8_t *q, float *sc, float *mn, int with_min) {
    uint32_t qh = le32(b + (with_min ? 4 : 2));
    const uint8_t *qs = b + (with_min ? 8 : 6);
    int off = with_min ? 0 : 16;
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)(((qs[j] & 15) | ((qh >> j) & 1) << 4) - off);
        q[j + 16] = (int8_t)(((qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4) - off);
    }
    two_groups(sc, mn, f16_at(b), with_min ? -f16_at(b + 2) : 0.0f);
    return 32;
}

static int unpack_q8_0(const uint8_t *b, int8_t *q, float *sc, float *mn) {
    for (int j = 0; j < 32; j++) q[j] = (int8_t)b[2 + j];
    two_groups(sc, mn, f16_at(b), 0.0f);
    return 32;
}

/* Q2_K: 16 bytes of 4-bit scale and min per 16 weights, 64 bytes of 2-bit
 * weights, d, dmin. Each 128-weight half reads 32 bytes four times, two
 * bits further each time. */
static int unpack_q2_k(const uint8_t *b, int8_t *q, float *sc, float *mn) {
    const uint8_t *scales = b, *qs = b + 16;
    float d = f16_at(b + 80), dmin = f16_at(b + 82);
    for (int e = 0; e < 256; e++) {
        int n = e / 128, j = (e / 32) % 4, l = e % 32;
        q[e] = (int8_t)((qs[32 * n + l] >> (2 * j)) & 3);
    }
    for (int g = 0; g < 16; g++) sc[g] = d * (float)(scales[g] & 15), mn[g] = dmin * (float)(scales[g] >> 4);
    return 256;
}

/* Q3_K's sub-scale g: 6 bits, the low four in a nibble of the first eight
 * bytes, the high two in the last four bytes, offset by 32. */
static int q3_scale(const uint8_t *s, int g) {
    int lo = g < 8 ? s[g] & 15 : s[g - 8] >> 4, hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
    return (lo | hi << 4) - 32;
}

/* Q3_K: 32 bytes of high-bit masks, 64 bytes of 2-bit weights, 12 bytes
 * of sub-scales, d. A clear high bit subtracts 4. */
static int unpack_q3_k(const uint8_t *b, int8_t *q, float *sc, float *mn) {
    const uint8_t *hm = b, *qs = b + 32, *scales = b + 96;
    float d = f16_at(b + 108);
    for (int e = 0; e < 256; e++) {
        int n = e / 128, j = (e / 32) % 4, l = e % 32;
        int low = (qs[32 * n + l] >> (2 * j)) & 3;
        q[e] = (int8_t)(low - ((hm[l] >> (4 * n + j)) & 1 ? 0 : 4));
    }
    for (int g = 0; g < 16; g++) sc[g] = d * (float)q3_scale(scales, g), mn[g] = 0.0f;
    return 256;
}

/* Q4_K/Q5_K's 6-bit scale and min of 32-weight sub-block s (of 8), packed
 * into 12 bytes: s < 4 in the low six bits of bytes s and s+4; above, a
 * nibble of byte s+4 and the top two bits of bytes s-4 and s. */
static void k4_scale_min(const uint8_t *p, int s, int *scale, int *min) {
    if (s < 4) {
        *scale = p[s] & 63, *min = p[s + 4] & 63;
    } else {
        *scale = (p[s + 4] & 15) | (p[s - 4] >> 6) << 4;
        *min = (p[s + 4] >> 4) | (p[s] >> 6) << 4;
    }
}

static void k4_scales(const uint8_t *b, float *sc, float *mn) {
    float d = f16_at(b), dmin = f16_at(b + 2);
    for (int s = 0; s < 8; s++) {
        int scale, min;
        k4_scale_min(b + 4, s, &scale, &min);
        sc[2 * s] = sc[2 * s + 1] = d * (float)scale;
        mn[2 * s] = mn[2 * s + 1] = dmin * (float)min;
    }
}

/* Q4_K: d, dmin, 12 bytes of scales, 128 bytes of nibbles; each 64-weight
 * chunk is 32 bytes, low nibbles first. Q5_K adds 32 bytes of fifth bits
 * before the nibbles, two bits per chunk. */
static int unpack_q45_k(const uint8_t *b, int8_t *q, float *sc, float *mn, int five) {
    const uint8_t *qh = b + 16, *qs = b + (five ? 48 : 16);
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            int lo = qs[32 * c + l] & 15, hi = qs[32 * c + l] >> 4;
            if (five) lo += ((qh[l] >> (2 * c)) & 1) << 4, hi += ((qh[l] >> (2 * c + 1)) & 1) << 4;
            q[64 * c + l] = (int8_t)lo, q[64 * c + 32 + l] = (int8_t)hi;
        }
    k4_scales(b, sc, mn);
    return 256;
}

/* Q6_K: 128 bytes of low nibbles, 64 bytes of 2-bit highs, 16 signed
 * sub-scales, d; offset 32. Each 128-weight half takes 64 low bytes (two
 * runs of 32, low then high nibbles) and 32 high bytes (four 2-bit fields). */
static int unpack_q6_k(const uint8_t *b, int8_t *q, float *sc, float *mn) {
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *scales = (const int8_t *)(b + 192);
    float d = f16_at(b + 208);
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 32; l++) {
                int lo = ql[64 * n + 32 * (k & 1) + l], nib = k < 2 ? lo & 15 : lo >> 4;
                int hi = (qh[32 * n + l] >> (2 * k)) & 3;
                q[128 * n + 32 * k + l] = (int8_t)((nib | hi << 4) - 32);
            }
    for (int g = 0; g < 16; g++) sc[g] = d * (float)scales[g], mn[g] = 0.0f;
    return 256;
}

/* Cloned per instruction set so the byte loops above vectorise as wide as
 * the CPU goes (the decode kernels call it once a block). Static, with
 * quant_unpack below as the one external name: clang resolves a cloned
 * function's callers only inside its own translation unit. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static int unpack_cloned(GgmlType t, const uint8_t *b,
                                                                                       int8_t *q, float *sc, float *mn) {
    switch (t) {
    case GGML_Q4_0: return unpack_q4(b, q, sc, mn, 0);
    case GGML_Q4_1: return unpack_q4(b, q, sc, mn, 1);
    case GGML_Q5_0: return unpack_q5(b, q, sc, mn, 0);
    case GGML_Q5_1: return unpack_q5(b, q, sc, mn, 1);
    case GGML_Q8_0: return unpack_q8_0(b, q, sc, mn);
    case GGML_Q2_K: return unpack_q2_k(b, q, sc, mn);
    case GGML_Q3_K: return unpack_q3_k(b, q, sc, mn);
    case GGML_Q4_K: return unpack_q45_k(b, q, sc, mn, 0);
    case GGML_Q5_K: return unpack_q45_k(b, q, sc, mn, 1);
    case GGML_Q6_K: return unpack_q6_k(b, q, sc, mn);
    default: return 0;
    }
}

int quant_unpack(GgmlType t, const uint8_t *b, int8_t *q, float *sc, float *mn) { return unpack_cloned(t, b, q, sc, mn); }

int quant_is_block(GgmlType t) {
    switch (t) {
    case GGML_Q4_0: case GGML_Q4_1: case GGML_Q5_0: case GGML_Q5_1: case GGML_Q8_0:
    case GGML_Q2_K: case GGML_Q3_K: case GGML_Q4_K: case GGML_Q5_K: case GGML_Q6_K: return 1;
    default: return 0;
    }
}

/* Weights and bytes per block of the types read here (gguf.c sizes more:
 * it must step over tensors it cannot read). */
static const struct { int elems, bytes; } blocks[GGML_NTYPES] = {
    [GGML_F32] = {1, 4},       [GGML_F16] = {1, 2},       [GGML_BF16] = {1, 2},      [GGML_Q4_0] = {32, 18},
    [GGML_Q4_1] = {32, 20},    [GGML_Q5_0] = {32, 22},    [GGML_Q5_1] = {32, 24},    [GGML_Q8_0] = {32, 34},
    [GGML_Q2_K] = {256, 84},   [GGML_Q3_K] = {256, 110},  [GGML_Q4_K] = {256, 144},  [GGML_Q5_K] = {256, 176},
    [GGML_Q6_K] = {256, 210},
};

int quant_block(GgmlType t, int *elems, int *bytes) {
    int ok = (unsigned)t < GGML_NTYPES && blocks[t].bytes;
    *elems = ok ? blocks[t].elems : 0, *bytes = ok ? blocks[t].bytes : 0;
    return ok ? 0 : -1;
}

size_t quant_row_bytes(GgmlType t, int64_t n) {
    int be, bb;
    if (quant_block(t, &be, &bb) || n < 0 || n % be) return 0;
    return (size_t)(n / be) * (size_t)bb;
}

int quant_dequant(GgmlType t, const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    int be, bb;
    if (quant_block(t, &be, &bb)) return -1;
    if (n < 0 || n % be) return -2;
    if (t == GGML_F32) memcpy(dst, src, (size_t)n * 4);
    else if (t == GGML_F16 || t == GGML_BF16)
        for (int64_t i = 0; i < n; i++) {
            uint16_t h = (uint16_t)(b[2 * i] | b[2 * i + 1] << 8);
            dst[i] = t == GGML_F16 ? half_f16_to_f32(h) : half_bf16_to_f32(h);
        }
    else
        for (int64_t k = 0; k < n / be; k++, b += bb, dst += be) {
            int8_t q[QUANT_MAX_BLOCK];
            float sc[QUANT_MAX_BLOCK / QUANT_GROUP], mn[QUANT_MAX_BLOCK / QUANT_GROUP];
            quant_unpack(t, b, q, sc, mn);
            for (int j = 0; j < be; j++) dst[j] = sc[j / QUANT_GROUP] * (float)q[j] - mn[j / QUANT_GROUP];
        }
    return 0;
}
