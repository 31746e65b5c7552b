/* gemm_q_pack.c — Q4_K and Q6_K rows packed in groups of four at load, and their products (portable and AVX2).
 *
 * The layout (engine/PERFORMANCE.md, "Packed rows"): rows go in groups
 * of four (the last one padded with zero rows); group g starts at
 * g · 4 · (cols/256) · 148 bytes, and holds its rows' block k side by side
 * at k · 4 · 148:
 *
 *   [0, 8)        each row's d, f16 as stored
 *   [8, 16)       each row's dmin
 *   [16, 48)      each row's eight 6-bit sub-scales, one byte each
 *   [48, 80)      each row's eight mins, one byte each
 *   [80, 592)     each row's 128 bytes of nibbles: byte 32p + 4s + l holds
 *                 weight 32s + 8p + l (low nibble) and 32s + 8p + 4 + l (high)
 *
 * A 32-byte load of nibbles thus holds, per sub-block s, four weights in
 * lanes 4s … 4s + 3, and the activations' permuted copy (GqX.qp) holds
 * the matching four: the eight VPMADDUBSW products of a block add in int16
 * (each lane is at most 8 · 2 · 15 · 127 = 30480, no overflow) and one
 * VPMADDWD by the sub-scales, duplicated into 16-bit lanes, finishes the
 * block. The stored block costs a 6-bit unpack, two f16 conversions and a
 * scale shuffle per sub-block; here those are gone or done for four rows
 * in one instruction. Every step after the exact integer sums is
 * gemm_q_k_block's, in its order, so the bits are the portable path's.
 *
 * Q6_K rows pack the same way in the stored size (210 bytes a row-block):
 *
 *   [0, 8)        each row's d, f16
 *   [8, 72)       each row's sixteen int8 scales, as stored
 *   [72, 584)     each row's 128 bytes of low nibbles: byte 32p + b holds
 *                 weight w(2p, b) (low) and w(2p + 1, b) (high)
 *   [584, 840)    each row's 64 bytes of high bit pairs: byte 32c + b holds
 *                 those of w(4c + m, b) at bits 2m, 2m + 1 (m < 4)
 *
 * with w(i, b) = 16 · (b / 2) + 2i + b % 2: product i's lanes 2s, 2s + 1
 * are sub-block s's (of 16), met by GqX.qp6. Two products add in int16
 * (2 · 2 · 63 · 127 = 32004) before each VPMADDWD by the scales.
 */
#include "gemm_q.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_q_cell.h"
#include "gguf.h"
#include "quant.h"
#include "matvec.h"
#include "simd.h"

#define PK_G 4        /* rows a group */
#define PK_BLOCK 148  /* packed Q4_K bytes a row-block: 144 stored, +4 for unpacked scales */
#define PK6_BLOCK 210 /* packed Q6_K bytes a row-block, as stored */
#define SB_BYTES 144  /* a stored Q4_K block */

static int pk_block(int ty) { return ty == GGML_Q4_K ? PK_BLOCK : ty == GGML_Q6_K ? PK6_BLOCK : 0; }

size_t gemm_q_pack_bytes(int ty, int rows, int cols) {
    if (!pk_block(ty) || rows < 1 || cols < 256 || cols % 256 || cols > GQ_PACK_MAX_COLS) return 0;
    return (size_t)(rows + PK_G - 1) / PK_G * PK_G * (size_t)(cols / 256) * pk_block(ty);
}

/* Group g's first byte (pb bytes a row-block). */
static const uint8_t *pk_group(const uint8_t *p, int nb, int g, int pb) { return p + (size_t)g * PK_G * nb * pb; }

/* Stored Q4_K block b → row i of the group-block at o. Weights 32s + 8p + l
 * (l < 4) are the nibbles (s odd: the high ones) of stored bytes
 * 32 (s / 2) + 8p + l, so four output bytes are one 32-bit word's work. */
static void pack_block(uint8_t *o, int i, const uint8_t *b) {
    uint8_t sm[16];
    memcpy(o + 2 * i, b, 2), memcpy(o + 2 * PK_G + 2 * i, b + 2, 2);
    quant_k_scales6(b + 4, sm);
    memcpy(o + 4 * PK_G + 8 * i, sm, 8), memcpy(o + 12 * PK_G + 8 * i, sm + 8, 8);
    uint8_t *qs = o + 20 * PK_G + 128 * i;
    for (int s = 0; s < 8; s++)
        for (int p = 0; p < 4; p++) {
            uint32_t lo, hi, sh = 4 * (uint32_t)(s & 1), m = 0x0f0f0f0fu;
            memcpy(&lo, b + 16 + 32 * (s / 2) + 8 * p, 4), memcpy(&hi, b + 16 + 32 * (s / 2) + 8 * p + 4, 4);
            uint32_t v = ((lo >> sh) & m) | ((hi >> sh) & m) << 4;
            memcpy(qs + 32 * p + 4 * s, &v, 4);
        }
}

/* Row i of the Q4_K group-block at o → its stored block b. */
static void unpack_block(uint8_t *b, int i, const uint8_t *o) {
    const uint8_t *sc = o + 4 * PK_G + 8 * i, *mn = o + 12 * PK_G + 8 * i, *qs = o + 20 * PK_G + 128 * i;
    uint8_t u[256];
    memcpy(b, o + 2 * i, 2), memcpy(b + 2, o + 2 * PK_G + 2 * i, 2);
    for (int j = 0; j < 4; j++) { /* quant_k_scales6 backwards */
        b[4 + j] = (uint8_t)(sc[j] | (sc[4 + j] >> 4) << 6);
        b[8 + j] = (uint8_t)(mn[j] | (mn[4 + j] >> 4) << 6);
        b[12 + j] = (uint8_t)((sc[4 + j] & 15) | (mn[4 + j] & 15) << 4);
    }
    for (int p = 0; p < 4; p++)
        for (int s = 0; s < 8; s++)
            for (int l = 0; l < 4; l++) {
                int v = qs[32 * p + 4 * s + l];
                u[32 * s + 8 * p + l] = (uint8_t)(v & 15), u[32 * s + 8 * p + 4 + l] = (uint8_t)(v >> 4);
            }
    for (int j = 0; j < 8; j += 2)
        for (int l = 0; l < 32; l++) b[16 + 16 * j + l] = (uint8_t)(u[32 * j + l] | u[32 * (j + 1) + l] << 4);
}

/* Q6_K: product i's lane b holds weight w6(i, b) of the block. */
static int w6(int i, int b) { return 16 * (b / 2) + 2 * i + b % 2; }

/* Stored Q6_K block b → row i of the group-block at o. Product i's lanes
 * 2s, 2s + 1 are the adjacent weights 16s + 2i, 16s + 2i + 1, so two output
 * bytes are one 16-bit word's work. */
static void pack_block6(uint8_t *o, int i, const uint8_t *b) {
    uint8_t u[256];
    for (int h = 0; h < 2; h++) /* the stored order (gemm_q.c's k_unpack) */
        for (int q = 0; q < 4; q++)
            for (int l = 0; l < 32; l++) {
                int lo = b[64 * h + 32 * (q & 1) + l], nib = q < 2 ? lo & 15 : lo >> 4;
                u[128 * h + 32 * q + l] = (uint8_t)(nib | ((b[128 + 32 * h + l] >> (2 * q)) & 3) << 4);
            }
    memcpy(o + 2 * i, b + 208, 2), memcpy(o + 2 * PK_G + 16 * i, b + 192, 16);
    uint8_t *ql = o + 18 * PK_G + 128 * i, *qh = o + 146 * PK_G + 64 * i;
    for (int s = 0; s < 16; s++) {
        uint16_t w[8], v;
        for (int r = 0; r < 8; r++) memcpy(&w[r], u + 16 * s + 2 * r, 2); /* product r's lanes 2s, 2s + 1 */
        for (int p = 0; p < 4; p++) {
            v = (uint16_t)((w[2 * p] & 0x0f0f) | (w[2 * p + 1] & 0x0f0f) << 4);
            memcpy(ql + 32 * p + 2 * s, &v, 2);
        }
        for (int c = 0; c < 2; c++) {
            v = 0;
            for (int m = 0; m < 4; m++) v = (uint16_t)(v | ((w[4 * c + m] >> 4) & 0x0303) << 2 * m);
            memcpy(qh + 32 * c + 2 * s, &v, 2);
        }
    }
}

static void unpack_block6(uint8_t *b, int i, const uint8_t *o) {
    const uint8_t *ql = o + 18 * PK_G + 128 * i, *qh = o + 146 * PK_G + 64 * i;
    uint8_t u[256];
    for (int p = 0; p < 4; p++)
        for (int x = 0; x < 32; x++) u[w6(2 * p, x)] = ql[32 * p + x] & 15, u[w6(2 * p + 1, x)] = ql[32 * p + x] >> 4;
    for (int c = 0; c < 2; c++)
        for (int x = 0; x < 32; x++)
            for (int m = 0; m < 4; m++) u[w6(4 * c + m, x)] |= (uint8_t)((qh[32 * c + x] >> 2 * m & 3) << 4);
    memset(b, 0, 192);
    for (int h = 0; h < 2; h++)
        for (int q = 0; q < 4; q++)
            for (int l = 0; l < 32; l++) {
                int v = u[128 * h + 32 * q + l];
                b[64 * h + 32 * (q & 1) + l] |= (uint8_t)(q < 2 ? v & 15 : (v & 15) << 4);
                b[128 + 32 * h + l] |= (uint8_t)((v >> 4) << (2 * q));
            }
    memcpy(b + 192, o + 2 * PK_G + 16 * i, 16), memcpy(b + 208, o + 2 * i, 2);
}

void gemm_q_pack(int ty, void *dst, const void *src, int rows, int cols) {
    int nb = cols / 256, pb = pk_block(ty), sb = ty == GGML_Q4_K ? SB_BYTES : PK6_BLOCK;
    size_t full = (size_t)rows / PK_G * PK_G * nb * pb; /* the last group's padding rows are zeros */
    memset((uint8_t *)dst + full, 0, gemm_q_pack_bytes(ty, rows, cols) - full);
    for (int r = 0; r < rows; r++) {
        uint8_t *o = (uint8_t *)pk_group(dst, nb, r / PK_G, pb);
        const uint8_t *row = (const uint8_t *)src + (size_t)r * nb * sb;
        for (int k = 0; k < nb; k++) {
            if (ty == GGML_Q4_K) pack_block(o + (size_t)k * PK_G * pb, r % PK_G, row + (size_t)k * sb);
            else pack_block6(o + (size_t)k * PK_G * pb, r % PK_G, row + (size_t)k * sb);
        }
    }
}

/* Row i's block k of group o, as stored, into b. */
static void unpack_any(int ty, uint8_t *b, int i, const uint8_t *o, int k) {
    if (ty == GGML_Q4_K) unpack_block(b, i, o + (size_t)k * PK_G * PK_BLOCK);
    else unpack_block6(b, i, o + (size_t)k * PK_G * PK6_BLOCK);
}

void gemm_q_unpack_row(int ty, void *dst, const void *packed, int cols, int row) {
    int nb = cols / 256, sb = ty == GGML_Q4_K ? SB_BYTES : PK6_BLOCK;
    const uint8_t *o = pk_group(packed, nb, row / PK_G, pk_block(ty));
    for (int k = 0; k < nb; k++) unpack_any(ty, (uint8_t *)dst + (size_t)k * sb, row % PK_G, o, k);
}

/* ---- the portable path: each block given back as stored, then gemm_q_k_block ---- */

static void pk_cells(int ty, float *C, int ldc, const GqX *x, const uint8_t *p, int j0, int j1) {
    int nb = x->d / 256;
    uint8_t b[PK6_BLOCK];
    for (int j = j0; j < j1; j++) {
        const uint8_t *o = pk_group(p, nb, j / PK_G, pk_block(ty));
        for (int t = 0; t < x->T; t++) {
            float acc = 0;
            for (int k = 0; k < nb; k++) {
                unpack_any(ty, b, j % PK_G, o, k);
                acc = gemm_q_k_block(ty, b, x, t, k, acc);
            }
            C[(size_t)t * ldc + (j - j0)] = acc;
        }
    }
}

/* ---- AVX2 ---- */

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE256 T256 static inline __attribute__((always_inline))

/* [Σ a, Σ b, Σ c, Σ e] over all eight lanes of each (exact). */
INLINE256 __m128i pk_red4(__m256i a, __m256i b, __m256i c, __m256i e) {
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, e));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* A row-block's sub-scales as VPMADDWD lanes: 16-bit lane m holds sc[m / 2]. */
INLINE256 __m256i pk_scales(const uint8_t *sc) {
    __m128i v = _mm_loadl_epi64((const __m128i *)sc);
    return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v));
}

/* Row-block r of group-block o against NT permuted activation blocks
 * (q, q + d, …): out[t] holds eight int32, one a sub-block, each its
 * sub-scale times the exact sum. */
INLINE256 void pk_row(int NT, const uint8_t *o, int r, const int8_t *q, int d, __m256i *out) {
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256i a[4];
    const uint8_t *qs = o + 20 * PK_G + 128 * r;
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(qs + 32 * p));
        __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
#pragma GCC unroll 4
        for (int t = 0; t < NT; t++) {
            const int8_t *x = q + (size_t)t * d + 64 * p;
            __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)x)),
                                         _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(x + 32))));
            a[t] = p ? _mm256_add_epi16(a[t], s) : s;
        }
    }
    __m256i sc = pk_scales(o + 4 * PK_G + 8 * r);
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) out[t] = _mm256_madd_epi16(a[t], sc);
}

/* Group gp's four rows against token t: C[t][r], r < 4. Four cells a
 * vector, rows in lanes: acc + (d·dx)·isum − (dmin·dx)·imin per block. */
T256 static void pk_tile_4x1(const uint8_t *gp, const GqX *x, int t, float *C) {
    int nb = x->d / 256;
    __m128 acc = _mm_setzero_ps();
    for (int k = 0; k < nb; k++) {
        const uint8_t *o = gp + (size_t)k * PK_G * PK_BLOCK;
        mv_prefetch(o, PK_G * PK_BLOCK / 64 + 1);
        const int8_t *q = x->qp + (size_t)t * x->d + 256 * k;
        __m256i I[4];
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) pk_row(1, o, r, q, x->d, &I[r]);
        __m128i isum = pk_red4(I[0], I[1], I[2], I[3]);
        __m256i s32 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(x->s32 + (size_t)t * (x->d / 32) + 8 * k)));
        __m256i m01 = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(o + 12 * PK_G))), s32);
        __m256i m23 = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(o + 12 * PK_G + 16))), s32);
        __m256i h = _mm256_hadd_epi32(m01, m23); /* [r0 r0 r2 r2 | r1 r1 r3 r3] halves */
        h = _mm256_hadd_epi32(h, h);             /* [r0 r2 r0 r2 | r1 r3 r1 r3] */
        __m128i imin = _mm_unpacklo_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)o)); /* [d0..d3 | dmin0..dmin3] */
        __m256 pr = _mm256_mul_ps(dm, _mm256_set1_ps(x->dx[(size_t)k * x->T + t]));
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm256_castps256_ps128(pr), _mm_cvtepi32_ps(isum)));
        acc = _mm_sub_ps(acc, _mm_mul_ps(_mm256_extractf128_ps(pr, 1), _mm_cvtepi32_ps(imin)));
    }
    _mm_storeu_ps(C, acc);
}

/* Group gp's four rows against tokens t0 … t0 + 3: out[4r + t]. Tokens in
 * lanes, one row at a time, so each row's sums are reduced as it ends. */
T256 static void pk_tile_4x4(const uint8_t *gp, const GqX *x, int t0, float *out) {
    int nb = x->d / 256, d = x->d;
    __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    for (int k = 0; k < nb; k++) {
        const uint8_t *o = gp + (size_t)k * PK_G * PK_BLOCK;
        const int8_t *q = x->qp + (size_t)t0 * d + 256 * k;
        __m128 dxv = _mm_loadu_ps(x->dx + (size_t)k * x->T + t0);
        float dm[8];
        _mm256_storeu_ps(dm, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)o)));
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            __m256i I[4];
            __m128i M[4];
            pk_row(4, o, r, q, d, I);
            __m128i mn = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(o + 12 * PK_G + 8 * r)));
#pragma GCC unroll 4
            for (int t = 0; t < 4; t++)
                M[t] = _mm_madd_epi16(mn, _mm_loadu_si128((const __m128i *)(x->s32 + (size_t)(t0 + t) * (d / 32) + 8 * k)));
            __m128i isum = pk_red4(I[0], I[1], I[2], I[3]);
            __m128i imin = _mm_hadd_epi32(_mm_hadd_epi32(M[0], M[1]), _mm_hadd_epi32(M[2], M[3]));
            acc[r] = _mm_add_ps(acc[r], _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(dm[r]), dxv), _mm_cvtepi32_ps(isum)));
            acc[r] = _mm_sub_ps(acc[r], _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(dm[4 + r]), dxv), _mm_cvtepi32_ps(imin)));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) _mm_storeu_ps(out + 4 * r, acc[r]);
}

/* Q6_K product 2pp + h's high bit pairs (pair m = 2pp + h of H) at bits 4–5 of each byte. */
INLINE256 __m256i pk6_high(__m256i H, int m) {
    const __m256i m30 = _mm256_set1_epi8(0x30);
    __m256i v = m == 0 ? _mm256_slli_epi16(H, 4) : m == 1 ? _mm256_slli_epi16(H, 2) : m == 2 ? H : _mm256_srli_epi16(H, 2);
    return _mm256_and_si256(v, m30);
}

/* Q6_K row-block r of group-block o against NT permuted activation blocks
 * (q, q + d, …) and their per-16 sums (s16, s16 + d/16, …): out[t] holds
 * eight int32 that sum to the block's isum − 32 · corr. */
INLINE256 void pk6_row(int NT, const uint8_t *o, int r, const int8_t *q, const int16_t *s16, int d, __m256i *out) {
    const __m256i m4 = _mm256_set1_epi8(15);
    const uint8_t *ql = o + 18 * PK_G + 128 * r, *qh = o + 146 * PK_G + 64 * r;
    __m256i sc = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(o + 2 * PK_G + 16 * r)));
    __m256i a[4];
#pragma GCC unroll 2
    for (int c = 0; c < 2; c++) {
        __m256i H = _mm256_loadu_si256((const __m256i *)(qh + 32 * c));
#pragma GCC unroll 2
        for (int pp = 0; pp < 2; pp++) {
            int p = 2 * c + pp;
            __m256i v = _mm256_loadu_si256((const __m256i *)(ql + 32 * p));
            __m256i w0 = _mm256_or_si256(_mm256_and_si256(v, m4), pk6_high(H, 2 * pp));
            __m256i w1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4), pk6_high(H, 2 * pp + 1));
#pragma GCC unroll 4
            for (int t = 0; t < NT; t++) {
                const int8_t *x = q + (size_t)t * d + 64 * p;
                __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(w0, _mm256_loadu_si256((const __m256i *)x)),
                                             _mm256_maddubs_epi16(w1, _mm256_loadu_si256((const __m256i *)(x + 32))));
                s = _mm256_madd_epi16(s, sc);
                a[t] = p ? _mm256_add_epi32(a[t], s) : s;
            }
        }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) {
        __m256i cr = _mm256_madd_epi16(sc, _mm256_loadu_si256((const __m256i *)(s16 + (size_t)t * (d / 16))));
        out[t] = _mm256_sub_epi32(a[t], _mm256_slli_epi32(cr, 5));
    }
}

/* Q6_K group gp's four rows against token t: acc + (d·dx)·isum per block. */
T256 static void pk6_tile_4x1(const uint8_t *gp, const GqX *x, int t, float *C) {
    int nb = x->d / 256;
    __m128 acc = _mm_setzero_ps();
    for (int k = 0; k < nb; k++) {
        const uint8_t *o = gp + (size_t)k * PK_G * PK6_BLOCK;
        mv_prefetch(o, PK_G * PK6_BLOCK / 64 + 1);
        const int8_t *q = x->qp6 + (size_t)t * x->d + 256 * k;
        const int16_t *s16 = x->s16 + (size_t)t * (x->d / 16) + 16 * k;
        __m256i I[4];
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) pk6_row(1, o, r, q, s16, x->d, &I[r]);
        __m128 dv = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)o));
        __m128 a = _mm_mul_ps(dv, _mm_set1_ps(x->dx[(size_t)k * x->T + t]));
        acc = _mm_add_ps(acc, _mm_mul_ps(a, _mm_cvtepi32_ps(pk_red4(I[0], I[1], I[2], I[3]))));
    }
    _mm_storeu_ps(C, acc);
}

/* Q6_K group gp's four rows against tokens t0 … t0 + 3: out[4r + t]. */
T256 static void pk6_tile_4x4(const uint8_t *gp, const GqX *x, int t0, float *out) {
    int nb = x->d / 256, d = x->d;
    __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    for (int k = 0; k < nb; k++) {
        const uint8_t *o = gp + (size_t)k * PK_G * PK6_BLOCK;
        const int8_t *q = x->qp6 + (size_t)t0 * d + 256 * k;
        const int16_t *s16 = x->s16 + (size_t)t0 * (d / 16) + 16 * k;
        __m128 dxv = _mm_loadu_ps(x->dx + (size_t)k * x->T + t0);
        float dm[4];
        _mm_storeu_ps(dm, _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)o)));
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            __m256i I[4];
            pk6_row(4, o, r, q, s16, d, I);
            __m128i isum = pk_red4(I[0], I[1], I[2], I[3]);
            acc[r] = _mm_add_ps(acc[r], _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(dm[r]), dxv), _mm_cvtepi32_ps(isum)));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) _mm_storeu_ps(out + 4 * r, acc[r]);
}

/* Rows in a block whose weights stay in L2 while every token quad reads them. */
#define PK_ROWS 16

/* Rows [j0, j1) against every token, one group of four at a time (a group
 * the range cuts is computed whole and only its rows in range stored). */
static void avx2_rows(int ty, float *C, int ldc, const GqX *x, const uint8_t *p, int j0, int j1) {
    int T = x->T, tq = T / 4 * 4, nb = x->d / 256, g0 = j0 / PK_G, g1 = (j1 + PK_G - 1) / PK_G, pb = pk_block(ty);
    float o[16];
    for (int gb = g0; gb < g1; gb += PK_ROWS / PK_G) {
        int ge = gb + PK_ROWS / PK_G < g1 ? gb + PK_ROWS / PK_G : g1;
        for (int t0 = 0; t0 < T; t0 += t0 < tq ? 4 : 1)
            for (int g = gb; g < ge; g++) {
                int nt = t0 < tq ? 4 : 1;
                const uint8_t *gp = pk_group(p, nb, g, pb);
                if (ty == GGML_Q4_K) nt == 4 ? pk_tile_4x4(gp, x, t0, o) : pk_tile_4x1(gp, x, t0, o);
                else nt == 4 ? pk6_tile_4x4(gp, x, t0, o) : pk6_tile_4x1(gp, x, t0, o);
                for (int r = 0; r < PK_G; r++) {
                    int j = PK_G * g + r;
                    if (j < j0 || j >= j1) continue;
                    for (int t = 0; t < nt; t++) C[(size_t)(t0 + t) * ldc + (j - j0)] = o[nt == 4 ? 4 * r + t : r];
                }
            }
    }
}

void gemm_q_packed(GqPath path, float *C, int ldc, const GqX *x, int ty, const void *packed, int j0, int j1) {
    if (path >= GQ_AVX2) avx2_rows(ty, C, ldc, x, packed, j0, j1); /* (AMX takes only Q8_0: packed K rows run AVX2) */
    else pk_cells(ty, C, ldc, x, packed, j0, j1);
}

int gemm_q_pack_wanted(int ty) {
    const char *v = getenv("AHASCOPE_REPACK");
    if (!pk_block(ty) || (v && !strcmp(v, "0"))) return 0;
    char msg[200];
    return gemm_q_from_env(msg, sizeof msg) >= GQ_AVX2 && mv_q_int8() && !mv_q_int8_available(ty);
}
