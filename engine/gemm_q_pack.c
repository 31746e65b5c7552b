/* gemm_q_pack.c — Q4_K rows packed in groups of four at load, and their products (portable and AVX2).
 *
 * The layout (engine/PERFORMANCE.md, "Packed Q4_K rows"): rows go in groups
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
 */
#include "gemm_q.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_q_cell.h"
#include "gguf.h"
#include "matvec.h"
#include "simd.h"

#define PK_G 4        /* rows a group */
#define PK_BLOCK 148  /* packed bytes a row-block: 144 stored, +4 for unpacked scales */
#define SB_BYTES 144  /* a stored Q4_K block */

size_t gemm_q_pack_bytes(int ty, int rows, int cols) {
    if (ty != GGML_Q4_K || rows < 1 || cols < 256 || cols % 256 || cols > GQ_PACK_MAX_COLS) return 0;
    return (size_t)(rows + PK_G - 1) / PK_G * PK_G * (size_t)(cols / 256) * PK_BLOCK;
}

/* Group g's first byte. */
static const uint8_t *pk_group(const uint8_t *p, int nb, int g) { return p + (size_t)g * PK_G * nb * PK_BLOCK; }

/* Stored block b → row i of the group-block at o. */
static void pack_block(uint8_t *o, int i, const uint8_t *b) {
    uint8_t sm[16], u[256];
    memcpy(o + 2 * i, b, 2), memcpy(o + 2 * PK_G + 2 * i, b + 2, 2);
    gemm_q_scales6(b + 4, sm);
    memcpy(o + 4 * PK_G + 8 * i, sm, 8), memcpy(o + 12 * PK_G + 8 * i, sm + 8, 8);
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < 32; l++) u[32 * j + l] = (uint8_t)((j & 1) ? b[16 + 32 * (j / 2) + l] >> 4 : b[16 + 32 * (j / 2) + l] & 15);
    uint8_t *qs = o + 20 * PK_G + 128 * i;
    for (int p = 0; p < 4; p++)
        for (int s = 0; s < 8; s++)
            for (int l = 0; l < 4; l++)
                qs[32 * p + 4 * s + l] = (uint8_t)(u[32 * s + 8 * p + l] | u[32 * s + 8 * p + 4 + l] << 4);
}

/* Row i of the group-block at o → its stored block b. */
static void unpack_block(uint8_t *b, int i, const uint8_t *o) {
    const uint8_t *sc = o + 4 * PK_G + 8 * i, *mn = o + 12 * PK_G + 8 * i, *qs = o + 20 * PK_G + 128 * i;
    uint8_t u[256];
    memcpy(b, o + 2 * i, 2), memcpy(b + 2, o + 2 * PK_G + 2 * i, 2);
    for (int j = 0; j < 4; j++) { /* gemm_q_scales6 backwards */
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

void gemm_q_pack(int ty, void *dst, const void *src, int rows, int cols) {
    (void)ty;
    int nb = cols / 256;
    size_t full = (size_t)rows / PK_G * PK_G * nb * PK_BLOCK; /* the last group's padding rows are zeros */
    memset((uint8_t *)dst + full, 0, gemm_q_pack_bytes(GGML_Q4_K, rows, cols) - full);
    for (int r = 0; r < rows; r++) {
        uint8_t *o = (uint8_t *)pk_group(dst, nb, r / PK_G);
        const uint8_t *row = (const uint8_t *)src + (size_t)r * nb * SB_BYTES;
        for (int k = 0; k < nb; k++) pack_block(o + (size_t)k * PK_G * PK_BLOCK, r % PK_G, row + (size_t)k * SB_BYTES);
    }
}

void gemm_q_unpack_row(int ty, void *dst, const void *packed, int cols, int row) {
    (void)ty;
    int nb = cols / 256;
    const uint8_t *o = pk_group(packed, nb, row / PK_G);
    for (int k = 0; k < nb; k++) unpack_block((uint8_t *)dst + (size_t)k * SB_BYTES, row % PK_G, o + (size_t)k * PK_G * PK_BLOCK);
}

/* ---- the portable path: each block given back as stored, then gemm_q_k_block ---- */

static void pk_cells(float *C, int ldc, const GqX *x, const uint8_t *p, int j0, int j1) {
    int nb = x->d / 256;
    uint8_t b[SB_BYTES];
    for (int j = j0; j < j1; j++) {
        const uint8_t *o = pk_group(p, nb, j / PK_G);
        for (int t = 0; t < x->T; t++) {
            float acc = 0;
            for (int k = 0; k < nb; k++) {
                unpack_block(b, j % PK_G, o + (size_t)k * PK_G * PK_BLOCK);
                acc = gemm_q_k_block(GGML_Q4_K, b, x, t, k, acc);
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

/* Rows in a block whose weights stay in L2 while every token quad reads them. */
#define PK_ROWS 16

/* Rows [j0, j1) against every token, one group of four at a time (a group
 * the range cuts is computed whole and only its rows in range stored). */
static void avx2_rows(float *C, int ldc, const GqX *x, const uint8_t *p, int j0, int j1) {
    int T = x->T, tq = T / 4 * 4, nb = x->d / 256, g0 = j0 / PK_G, g1 = (j1 + PK_G - 1) / PK_G;
    float o[16];
    for (int gb = g0; gb < g1; gb += PK_ROWS / PK_G) {
        int ge = gb + PK_ROWS / PK_G < g1 ? gb + PK_ROWS / PK_G : g1;
        for (int t0 = 0; t0 < T; t0 += t0 < tq ? 4 : 1)
            for (int g = gb; g < ge; g++) {
                int nt = t0 < tq ? 4 : 1;
                if (nt == 4) pk_tile_4x4(pk_group(p, nb, g), x, t0, o);
                else pk_tile_4x1(pk_group(p, nb, g), x, t0, o);
                for (int r = 0; r < PK_G; r++) {
                    int j = PK_G * g + r;
                    if (j < j0 || j >= j1) continue;
                    for (int t = 0; t < nt; t++) C[(size_t)(t0 + t) * ldc + (j - j0)] = o[nt == 4 ? 4 * r + t : r];
                }
            }
    }
}

void gemm_q_packed(GqPath path, float *C, int ldc, const GqX *x, int ty, const void *packed, int j0, int j1) {
    (void)ty;
    if (path == GQ_AVX2) avx2_rows(C, ldc, x, packed, j0, j1);
    else pk_cells(C, ldc, x, packed, j0, j1);
}

int gemm_q_pack_wanted(int ty) {
    const char *v = getenv("AHASCOPE_REPACK");
    if (ty != GGML_Q4_K || (v && !strcmp(v, "0"))) return 0;
    char msg[200];
    return gemm_q_from_env(msg, sizeof msg) == GQ_AVX2 && mv_q_int8() && !mv_q_int8_available(ty);
}
