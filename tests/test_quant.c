/* test_quant.c — ggml's block formats widened: hand-built blocks, a reference from each format's definition, refusals.
 *
 * The reference below is written from ggml's block definitions in the
 * shape ggml walks them (pointers stepping through the half-blocks), not
 * from engine/quant.c's unpacking: the two share only half_f16_to_f32.
 * Random blocks must widen bit for bit equal to it (tolerance 0: the
 * format's formula is exact but for one rounding both sides make the same
 * way); a few hand-made blocks check known values, so a reference and
 * engine wrong together still fail. */
#include <stdlib.h>
#include <string.h>

#include "engine/gguf.h"
#include "engine/half.h"
#include "engine/quant.h"
#include "tests/test.h"

static float h2f(const uint8_t *p) { return half_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }
static void put_h(uint8_t *p, float v) {
    uint16_t h = half_f32_to_f16(v);
    p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8);
}

/* ---- the reference: one block of each type, from its definition ---- */

static void ref_q4_0(const uint8_t *b, float *y) {
    float d = h2f(b);
    for (int j = 0; j < 16; j++) y[j] = (float)((b[2 + j] & 0x0F) - 8) * d, y[j + 16] = (float)((b[2 + j] >> 4) - 8) * d;
}
static void ref_q4_1(const uint8_t *b, float *y) {
    float d = h2f(b), m = h2f(b + 2);
    for (int j = 0; j < 16; j++) y[j] = (float)(b[4 + j] & 0x0F) * d + m, y[j + 16] = (float)(b[4 + j] >> 4) * d + m;
}
static void ref_q5(const uint8_t *b, float *y, int one) {
    float d = h2f(b), m = one ? h2f(b + 2) : 0;
    const uint8_t *h = b + (one ? 4 : 2), *qs = h + 4;
    uint32_t qh = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
    for (int j = 0; j < 16; j++) {
        int x0 = (int)((qs[j] & 0x0F) | (((qh >> j) << 4) & 0x10)), x1 = (int)((qs[j] >> 4) | ((qh >> (j + 12)) & 0x10));
        if (one) y[j] = (float)x0 * d + m, y[j + 16] = (float)x1 * d + m;
        else y[j] = (float)(x0 - 16) * d, y[j + 16] = (float)(x1 - 16) * d;
    }
}
static void ref_q8_0(const uint8_t *b, float *y) {
    float d = h2f(b);
    for (int j = 0; j < 32; j++) y[j] = (float)(int8_t)b[2 + j] * d;
}
static void ref_q2_k(const uint8_t *b, float *y) {
    const uint8_t *sc = b, *q = b + 16;
    float d = h2f(b + 80), min = h2f(b + 82);
    int is = 0;
    for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
            for (int half = 0; half < 2; half++, is++) {
                float dl = d * (float)(sc[is] & 0xF), ml = min * (float)(sc[is] >> 4);
                for (int l = 0; l < 16; l++) *y++ = dl * (float)((q[l + 16 * half] >> shift) & 3) - ml;
            }
}
static void ref_q3_k(const uint8_t *b, float *y) {
    const uint8_t *hm = b, *q = b + 32, *s = b + 96;
    float d = h2f(b + 108);
    int8_t scales[16];
    for (int i = 0; i < 4; i++) { /* the 12 bytes' 16 six-bit values, as ggml's kmask shuffle lays them */
        scales[i] = (int8_t)((s[i] & 0xF) | ((s[8 + i] & 3) << 4));
        scales[4 + i] = (int8_t)((s[4 + i] & 0xF) | (((s[8 + i] >> 2) & 3) << 4));
        scales[8 + i] = (int8_t)((s[i] >> 4) | (((s[8 + i] >> 4) & 3) << 4));
        scales[12 + i] = (int8_t)((s[4 + i] >> 4) | (((s[8 + i] >> 6) & 3) << 4));
    }
    int is = 0;
    uint8_t m = 1;
    for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2, m = (uint8_t)(m << 1))
            for (int half = 0; half < 2; half++) {
                float dl = d * (float)(scales[is++] - 32);
                for (int l = 16 * half; l < 16 * half + 16; l++)
                    *y++ = dl * (float)(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
            }
}
static void ref_scale_min(int j, const uint8_t *q, int *d, int *m) {
    if (j < 4) *d = q[j] & 63, *m = q[j + 4] & 63;
    else *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
}
static void ref_q45_k(const uint8_t *b, float *y, int five) {
    float d = h2f(b), min = h2f(b + 2);
    const uint8_t *scales = b + 4, *qh = b + 16, *ql = b + (five ? 48 : 16);
    int is = 0;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < 256; j += 64, ql += 32, is += 2, u1 = (uint8_t)(u1 << 2), u2 = (uint8_t)(u2 << 2)) {
        int sc, m;
        ref_scale_min(is, scales, &sc, &m);
        float d1 = d * (float)sc, m1 = min * (float)m;
        ref_scale_min(is + 1, scales, &sc, &m);
        float d2 = d * (float)sc, m2 = min * (float)m;
        for (int l = 0; l < 32; l++) *y++ = d1 * (float)((ql[l] & 0xF) + (five && (qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; l++) *y++ = d2 * (float)((ql[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - m2;
    }
}
static void ref_q6_k(const uint8_t *b, float *y) {
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    float d = h2f(b + 208);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; l++) {
            int is = l / 16;
            int q1 = (int)((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32, q2 = (int)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            int q3 = (int)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32, q4 = (int)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * (float)sc[is] * (float)q1, y[l + 32] = d * (float)sc[is + 2] * (float)q2;
            y[l + 64] = d * (float)sc[is + 4] * (float)q3, y[l + 96] = d * (float)sc[is + 6] * (float)q4;
        }
}

static void ref_block(GgmlType t, const uint8_t *b, float *y) {
    switch (t) {
    case GGML_Q4_0: ref_q4_0(b, y); break;
    case GGML_Q4_1: ref_q4_1(b, y); break;
    case GGML_Q5_0: ref_q5(b, y, 0); break;
    case GGML_Q5_1: ref_q5(b, y, 1); break;
    case GGML_Q8_0: ref_q8_0(b, y); break;
    case GGML_Q2_K: ref_q2_k(b, y); break;
    case GGML_Q3_K: ref_q3_k(b, y); break;
    case GGML_Q4_K: ref_q45_k(b, y, 0); break;
    case GGML_Q5_K: ref_q45_k(b, y, 1); break;
    case GGML_Q6_K: ref_q6_k(b, y); break;
    default: break;
    }
}

static const GgmlType BLOCK_TYPES[] = {GGML_Q4_0, GGML_Q4_1, GGML_Q5_0, GGML_Q5_1, GGML_Q8_0,
                                       GGML_Q2_K, GGML_Q3_K, GGML_Q4_K, GGML_Q5_K, GGML_Q6_K};
#define N_BLOCK_TYPES (int)(sizeof BLOCK_TYPES / sizeof BLOCK_TYPES[0])

/* Random bytes, with every f16 scale a finite value in about [-2, 2] so
 * the products stay comparable (a random f16 could be inf or NaN). */
static void random_blocks(GgmlType t, uint8_t *b, int blocks, unsigned *s) {
    int be, bb;
    quant_block(t, &be, &bb);
    for (int i = 0; i < blocks * bb; i++) *s = *s * 1103515245u + 12345u, b[i] = (uint8_t)(*s >> 16);
    int at[2], n_at = 0;
    if (be == 32) at[n_at++] = 0;
    if (t == GGML_Q4_1 || t == GGML_Q5_1) at[n_at++] = 2;
    if (t == GGML_Q2_K) at[n_at++] = 80, at[n_at++] = 82;
    if (t == GGML_Q3_K) at[n_at++] = 108;
    if (t == GGML_Q4_K || t == GGML_Q5_K) at[n_at++] = 0, at[n_at++] = 2;
    if (t == GGML_Q6_K) at[n_at++] = 208;
    for (int k = 0; k < blocks; k++)
        for (int i = 0; i < n_at; i++) *s = *s * 1103515245u + 12345u, put_h(b + k * bb + at[i], (float)((int)(*s >> 16) % 4001 - 2000) / 1000.0f);
}

TEST(quant_every_type_matches_its_definition_bit_for_bit) {
    enum { BLOCKS = 6 };
    unsigned s = 11;
    for (int k = 0; k < N_BLOCK_TYPES; k++) {
        GgmlType t = BLOCK_TYPES[k];
        int be, bb;
        CHECK(quant_block(t, &be, &bb) == 0);
        uint8_t *b = malloc((size_t)BLOCKS * bb);
        float got[BLOCKS * 256], want[BLOCKS * 256];
        random_blocks(t, b, BLOCKS, &s);
        for (int i = 0; i < BLOCKS; i++) ref_block(t, b + i * bb, want + i * be);
        Err e = {0};
        CHECK_MSG(gguf_dequant(t, b, got, (int64_t)BLOCKS * be, &e) == 0, "%s: %s", gguf_type_name(t), e.msg);
        int bad = -1;
        for (int i = 0; i < BLOCKS * be && bad < 0; i++)
            if (memcmp(&got[i], &want[i], 4)) bad = i;
        CHECK_MSG(bad < 0, "%s weight %d: %.9g vs definition %.9g", gguf_type_name(t), bad, bad >= 0 ? got[bad] : 0,
                  bad >= 0 ? want[bad] : 0);
        free(b);
    }
}

/* Known values: scale 0.5 / offsets chosen so each formula's every part shows. */
TEST(quant_hand_built_blocks_give_known_values) {
    float y[256];
    Err e = {0};
    uint8_t q41[20] = {0}; /* d 0.5, m -1: nibble 3 low, 12 high -> 0.5, 5 */
    put_h(q41, 0.5f), put_h(q41 + 2, -1.0f);
    for (int j = 0; j < 16; j++) q41[4 + j] = 3 | 12 << 4;
    CHECK(gguf_dequant(GGML_Q4_1, q41, y, 32, &e) == 0 && y[0] == 0.5f && y[16] == 5.0f);
    uint8_t q50[22] = {0}; /* d 2: weight 0 has its fifth bit (16 - 16 = 0 + nibble 1 -> 2), weight 17 not (nibble 0 -> -32) */
    put_h(q50, 2.0f);
    q50[2] = 1, q50[6] = 1;
    CHECK(gguf_dequant(GGML_Q5_0, q50, y, 32, &e) == 0 && y[0] == 2.0f && y[1] == -32.0f && y[17] == -32.0f);
    uint8_t q51[24] = {0}; /* d 1, m 0.25, bit 16 set: weight 16 = 16 + 0.25 */
    put_h(q51, 1.0f), put_h(q51 + 2, 0.25f);
    q51[6] = 1;
    CHECK(gguf_dequant(GGML_Q5_1, q51, y, 32, &e) == 0 && y[16] == 16.25f && y[0] == 0.25f);
    uint8_t q2[84] = {0}; /* sub-block 1: scale 3, min 2; d 1, dmin 0.5; weights 16.. = 3·q - 1 */
    q2[1] = 3 | 2 << 4, q2[16 + 16] = 2; /* weight 16: q 2 -> 5 */
    put_h(q2 + 80, 1.0f), put_h(q2 + 82, 0.5f);
    CHECK(gguf_dequant(GGML_Q2_K, q2, y, 256, &e) == 0 && y[16] == 5.0f && y[17] == -1.0f && y[0] == 0.0f);
    uint8_t q3[110] = {0}; /* all sub-scales 0 - 32 = -32, d 0.25: clear high bits give q - 4 -> -4 · -8 = 32 */
    put_h(q3 + 108, 0.25f);
    q3[0] = 1; /* weight 0's high bit set: q 0 -> 0 */
    CHECK(gguf_dequant(GGML_Q3_K, q3, y, 256, &e) == 0 && y[0] == 0.0f && y[1] == 32.0f && y[255] == 32.0f);
    uint8_t q4[144] = {0}; /* d 1, dmin 0.5; sub-block 5: scale 2 + 16·1, min 3 -> weight 160 (low nibble 7) */
    put_h(q4, 1.0f), put_h(q4 + 2, 0.5f);
    q4[4 + 9] = 2 | 3 << 4, q4[4 + 1] = 1 << 6; /* s 5: scale (2 | 1<<4) = 18, min 3 | (byte 5 >> 6) = 3 */
    q4[16 + 64 + 0] = 7 << 4;                  /* chunk 2's high nibbles are sub-block 5 */
    CHECK(gguf_dequant(GGML_Q4_K, q4, y, 256, &e) == 0 && y[160] == 18.0f * 7 - 1.5f && y[161] == -1.5f);
    uint8_t q6[210] = {0}; /* d 0.5, sub-scale 4 for group 0; weight 0 = 63 - 32 = 31 -> 62 */
    put_h(q6 + 208, 0.5f);
    q6[192] = 4, q6[0] = 15, q6[128] = 3;
    CHECK(gguf_dequant(GGML_Q6_K, q6, y, 256, &e) == 0 && y[0] == 62.0f && y[1] == -64.0f);
}

TEST(quant_refuses_partial_blocks_and_unknown_types) {
    uint8_t b[2 * 210] = {0};
    float y[512];
    Err e = {0};
    for (int k = 0; k < N_BLOCK_TYPES; k++) {
        int be, bb;
        quant_block(BLOCK_TYPES[k], &be, &bb);
        CHECK_MSG(gguf_dequant(BLOCK_TYPES[k], b, y, be + 16, &e) != 0 && strstr(e.msg, "whole number"), "%s",
                  gguf_type_name(BLOCK_TYPES[k]));
        CHECK(quant_row_bytes(BLOCK_TYPES[k], be - 1) == 0 && quant_row_bytes(BLOCK_TYPES[k], 2 * be) == (size_t)2 * bb);
        uint64_t ge, gb;
        CHECK(gguf_type_block(BLOCK_TYPES[k], &ge, &gb) == 0 && ge == (uint64_t)be && gb == (uint64_t)bb);
    }
    CHECK(gguf_dequant(GGML_Q8_K, b, y, 256, &e) != 0 && strstr(e.msg, "Q8_K"));
    CHECK(gguf_dequant(GGML_Q4_0, b, y, -32, &e) != 0);
    CHECK(quant_row_bytes(GGML_F16, 3) == 6 && quant_row_bytes(GGML_BF16, 3) == 6 && quant_row_bytes(GGML_F32, 3) == 12);
}
