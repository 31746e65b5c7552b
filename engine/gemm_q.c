/* gemm_q.c — integer products of ggml's quantised rows with int8 activations: a portable C path and AVX2 tiles.
 *
 * Both paths compute, for each (row, token) and each weight block, the
 * same exact integer sums and then the same f32 operations in the same
 * order (a multiply, a multiply, an add; never a fused multiply-add), so
 * they agree bit for bit. Q8_0 keeps two partial sums a block (its bytes
 * 0–15 and 16–31, the two halves of an AVX2 register) and adds them last;
 * the K types reduce a block's sums to one integer first. */
#include "gemm_q.h"

#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_half.h"
#include "gemm_q_cell.h"
#include "gguf.h"
#include "half.h"
#include "matvec.h"
#include "quant.h"
#include "simd.h"

int gemm_q_block(int t) {
    if (t == GGML_Q8_0) return 32;
    if (t == GGML_Q4_K || t == GGML_Q5_K || t == GGML_Q6_K) return 256;
    return 0;
}

static int block_bytes(int t) {
    return t == GGML_Q8_0 ? 34 : t == GGML_Q4_K ? 144 : t == GGML_Q5_K ? 176 : t == GGML_Q6_K ? 210 : 0;
}

size_t gemm_q_x_bytes(int T, int d) {
    size_t n = (size_t)T * d;
    return 4 * n + n / 32 * sizeof(float) + 2 * (n / 16) * sizeof(int16_t) + 2 * (n / 32) * sizeof(int16_t) + 64;
}

void gemm_q_x_init(GqX *x, void *buf, int T, int d, int blk) {
    size_t n = (size_t)T * d;
    char *p = buf;
    x->T = T, x->d = d, x->blk = blk, x->tiles = 0;
    x->q = (int8_t *)p, p += n;
    p += (uintptr_t)-(uintptr_t)p & 15; /* the scales and sums aligned to their size */
    x->dx = (float *)(void *)p, p += n / 32 * sizeof(float);
    x->s16 = (int16_t *)(void *)p, p += n / 16 * sizeof(int16_t);
    x->s32 = (int16_t *)(void *)p, p += n / 32 * sizeof(int16_t);
    x->s32t = (int16_t *)(void *)p, p += n / 32 * sizeof(int16_t);
    x->s16t = (int16_t *)(void *)p, p += n / 16 * sizeof(int16_t);
    x->qp = (int8_t *)p, p += n;
    x->qp6 = (int8_t *)p, p += n;
    x->qa = (int8_t *)p;
}

/* Round to nearest even for |v| < 2^22, as the vector conversion rounds. */
static inline float round_even(float v) {
    const float big = 12582912.0f; /* 1.5·2^23: the sum's last bit is the units (never folded without -ffast-math) */
    return (v + big) - big;
}

void gemm_q_quantise(GqX *x, const float *in, int t0, int t1) {
    int d = x->d, blk = x->blk, nb = d / blk;
    for (int t = t0; t < t1; t++) {
        for (int k = 0; k < nb; k++) {
            const float *v = in + (size_t)t * d + (size_t)k * blk;
            int8_t *q = x->q + (size_t)t * d + (size_t)k * blk;
            float amax = 0;
            for (int j = 0; j < blk; j++) amax = v[j] > amax ? v[j] : -v[j] > amax ? -v[j] : amax;
            /* ggml's arithmetic (its AVX2 quantize_row_q8_0, quantize_row_q8_K up to
             * sign): the same int8 values and scales llama.cpp multiplies by */
            float id = amax > 0 ? 127 / amax : 0;
            float s = blk == 32 ? half_f16_to_f32(half_f32_to_f16(amax / 127)) : amax > 0 ? 1 / id : 0;
            for (int j = 0; j < blk; j++) {
                float r = round_even(v[j] * id);
                q[j] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
            }
            x->dx[(size_t)k * x->T + t] = s;
            if (blk != 256) continue;
            for (int g = 0; g < 16; g++) {
                int sum = 0;
                for (int j = 0; j < 16; j++) sum += q[16 * g + j];
                x->s16[(size_t)t * (d / 16) + 16 * k + g] = x->s16t[(size_t)(16 * k + g) * x->T + t] = (int16_t)sum;
            }
            for (int g = 0; g < 8; g++) {
                const int16_t *p = x->s16 + (size_t)t * (d / 16) + 16 * k + 2 * g;
                x->s32[(size_t)t * (d / 32) + 8 * k + g] = x->s32t[(size_t)(8 * k + g) * x->T + t] = (int16_t)(p[0] + p[1]);
            }
            gemm_q_permute_block(x->qp + (size_t)t * d + (size_t)k * blk, q);
            gemm_q_permute_block6(x->qp6 + (size_t)t * d + (size_t)k * blk, q);
        }
        if (x->tiles) gemm_q_amx_order(x->qa, x->q + (size_t)t * d, x->T, d, t);
    }
}

/* ---- the portable path ---- */

static float f16_at(const uint8_t *p) { return half_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }


void gemm_q_permute_block(int8_t *qp, const int8_t *q) {
    for (int i = 0; i < 8; i++)
        for (int s = 0; s < 8; s++) memcpy(qp + 32 * i + 4 * s, q + 32 * s + 4 * i, 4);
}

void gemm_q_permute_block6(int8_t *qp, const int8_t *q) {
    for (int i = 0; i < 8; i++)
        for (int s = 0; s < 16; s++) memcpy(qp + 32 * i + 2 * s, q + 16 * s + 2 * i, 2);
}

/* One K block as integers: unsigned weights u[256], a scale per 16
 * (sc16), the mins per 32 (Q4_K/Q5_K), the offset subtracted from every
 * weight (32 for Q6_K), and d, dmin. */
typedef struct {
    uint8_t u[256];
    int sc16[16], mn[8], off;
    float d, dmin;
} KBlock;

static void k_unpack(int t, const uint8_t *b, KBlock *k) {
    memset(k->mn, 0, sizeof k->mn);
    if (t == GGML_Q6_K) {
        const int8_t *sc = (const int8_t *)(b + 192);
        for (int h = 0; h < 2; h++)
            for (int q = 0; q < 4; q++)
                for (int l = 0; l < 32; l++) {
                    int lo = b[64 * h + 32 * (q & 1) + l], nib = q < 2 ? lo & 15 : lo >> 4;
                    k->u[128 * h + 32 * q + l] = (uint8_t)(nib | ((b[128 + 32 * h + l] >> (2 * q)) & 3) << 4);
                }
        for (int g = 0; g < 16; g++) k->sc16[g] = sc[g];
        k->off = 32, k->d = f16_at(b + 208), k->dmin = 0;
        return;
    }
    int five = t == GGML_Q5_K;
    const uint8_t *qh = b + 16, *qs = b + (five ? 48 : 16);
    uint8_t sm[16];
    quant_k_scales6(b + 4, sm);
    for (int j = 0; j < 8; j++) {
        for (int l = 0; l < 32; l++) {
            int v = (j & 1) ? qs[32 * (j / 2) + l] >> 4 : qs[32 * (j / 2) + l] & 15;
            if (five) v |= ((qh[l] >> j) & 1) << 4;
            k->u[32 * j + l] = (uint8_t)v;
        }
        k->sc16[2 * j] = k->sc16[2 * j + 1] = sm[j], k->mn[j] = sm[8 + j];
    }
    k->off = 0, k->d = f16_at(b), k->dmin = f16_at(b + 2);
}

/* acc += (d·dx)·isum, then −= (dmin·dx)·imin: the order every path keeps. */
static inline float k_step(float acc, float d, float dmin, float dx, int isum, int imin, int mins) {
    float a = d * dx;
    float v = a * (float)isum;
    acc = acc + v;
    if (!mins) return acc;
    float c = dmin * dx;
    float e = c * (float)imin;
    return acc - e;
}

float gemm_q_k_block(int ty, const uint8_t *b, const GqX *x, int t, int k, float acc) {
    KBlock kb;
    k_unpack(ty, b, &kb);
    const int8_t *q = x->q + (size_t)t * x->d + 256 * k;
    const int16_t *s16 = x->s16 + (size_t)t * (x->d / 16) + 16 * k, *s32 = x->s32 + (size_t)t * (x->d / 32) + 8 * k;
    int isum = 0, corr = 0, imin = 0;
    for (int j = 0; j < 256; j++) isum += kb.u[j] * q[j] * kb.sc16[j / 16];
    for (int g = 0; g < 16; g++) corr += kb.sc16[g] * s16[g];
    for (int s = 0; s < 8; s++) imin += kb.mn[s] * s32[s];
    return k_step(acc, kb.d, kb.dmin, x->dx[(size_t)k * x->T + t], isum - kb.off * corr, imin, ty != GGML_Q6_K);
}

static float k_cell(int ty, const uint8_t *row, const GqX *x, int t) {
    float acc = 0;
    for (int k = 0; k < x->d / 256; k++) acc = gemm_q_k_block(ty, row + (size_t)k * block_bytes(ty), x, t, k, acc);
    return acc;
}

static float q8_cell(const uint8_t *row, const GqX *x, int t) {
    float lo = 0, hi = 0;
    for (int k = 0; k < x->d / 32; k++) {
        const uint8_t *b = row + 34 * (size_t)k;
        const int8_t *q = x->q + (size_t)t * x->d + 32 * k;
        int s0 = 0, s1 = 0;
        for (int l = 0; l < 16; l++) s0 += (int8_t)b[2 + l] * q[l], s1 += (int8_t)b[18 + l] * q[16 + l];
        float sc = f16_at(b) * x->dx[(size_t)k * x->T + t];
        float v0 = sc * (float)s0, v1 = sc * (float)s1;
        lo = lo + v0, hi = hi + v1;
    }
    return lo + hi;
}

/* One (row, token) product, the reference every tile repeats. */
float gemm_q_cell(int ty, const uint8_t *row, const GqX *x, int t) {
    return ty == GGML_Q8_0 ? q8_cell(row, x, t) : k_cell(ty, row, x, t);
}

static void cells(float *C, int ldc, const GqX *x, int ty, const uint8_t *w, int j0, int j1, int t0, int t1) {
    size_t rb = (size_t)x->d / x->blk * block_bytes(ty);
    for (int j = j0; j < j1; j++)
        for (int t = t0; t < t1; t++) C[(size_t)t * ldc + j] = gemm_q_cell(ty, w + (size_t)j * rb, x, t);
}

/* ---- AVX2 ---- */

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE256 T256 static inline __attribute__((always_inline))

/* Four vectors of 8 int32 → lanes [Σ a, Σ b, Σ c, Σ e over lanes 0–3 | the same over lanes 4–7]. */
INLINE256 __m256i red4(__m256i a, __m256i b, __m256i c, __m256i e) {
    return _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, e));
}

/* The same, both halves added: [Σ a, Σ b, Σ c, Σ e] over all 8 lanes (exact). */
INLINE256 __m128i red4_all(__m256i a, __m256i b, __m256i c, __m256i e) {
    __m256i h = red4(a, b, c, e);
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* Four vectors of 4 int32 → [Σ a, Σ b, Σ c, Σ e]. */
INLINE256 __m128i red4_128(__m128i a, __m128i b, __m128i c, __m128i e) {
    return _mm_hadd_epi32(_mm_hadd_epi32(a, b), _mm_hadd_epi32(c, e));
}

INLINE256 float f16c(const uint8_t *p) { return _cvtsh_ss((unsigned short)(p[0] | p[1] << 8)); }

/* A K block's per-row prelude: the sixteen scales as int16 lanes (Q6_K:
 * its signed bytes; Q4_K/Q5_K: each 6-bit sub-scale twice), the mins as
 * int16, d and dmin. */
typedef struct {
    __m256i sc;  /* [16] int16, one a group of 16 */
    __m128i mn;  /* [8] int16 */
    float d, dmin;
} KHead;

INLINE256 KHead k_head(int ty, const uint8_t *b) {
    KHead h;
    if (ty == GGML_Q6_K) {
        h.sc = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + 192)));
        h.mn = _mm_setzero_si128(), h.d = f16c(b + 208), h.dmin = 0;
        return h;
    }
    uint8_t sm[16];
    quant_k_scales6(b + 4, sm);
    __m128i v = _mm_loadu_si128((const __m128i *)sm);
    h.sc = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v));
    h.mn = _mm_cvtepu8_epi16(_mm_srli_si128(v, 8));
    h.d = f16c(b), h.dmin = f16c(b + 2);
    return h;
}

/* Sub-block j's scales as madd lanes: group 2j in the low half, 2j+1 in
 * the high (a byte shuffle of the scales' 128-bit half j/4). */
INLINE256 __m256i k_scale(__m256i sc, int j) {
    __m128i half = j < 4 ? _mm256_castsi256_si128(sc) : _mm256_extracti128_si256(sc, 1);
    __m256i both = _mm256_broadcastsi128_si256(half);
    int m = (2 * j) % 8;
    __m256i ctl = _mm256_set_m128i(_mm_set1_epi16((short)((2 * m + 3) << 8 | (2 * m + 2))),
                                   _mm_set1_epi16((short)((2 * m + 1) << 8 | (2 * m))));
    return _mm256_shuffle_epi8(both, ctl);
}

/* NR rows × NT tokens of K blocks: each cell's block sums exact, then
 * k_step's arithmetic on four cells (rows-major) a vector. A row's four
 * token sums are reduced as soon as the row is done (NT 4), so only one
 * row's accumulators are live at a time. */
INLINE256 void k_tile(int ty, int NR, int NT, const uint8_t *w, size_t rb, const GqX *x, int t0, float *out) {
    int nb = x->d / 256, bb = block_bytes(ty), mins = ty != GGML_Q6_K;
    __m128 acc[2] = {_mm_setzero_ps(), _mm_setzero_ps()};
    for (int k = 0; k < nb; k++) {
        __m256i ai[4];
        __m128i im[4], is[2], mi[2];
        float dr[4], mr[4], dx[4];
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            const uint8_t *b = w + r * rb + (size_t)k * bb;
            mv_prefetch(b, (bb + 63) / 64);
            KHead h = k_head(ty, b);
            dr[r] = h.d, mr[r] = h.dmin;
            int c = NT == 4 ? 0 : r; /* the accumulator this row's first token uses */
#pragma GCC unroll 4
            for (int t = 0; t < NT; t++) ai[c + t] = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++) {
                __m256i u = gemm_q_k_sub(ty, b, j), s = k_scale(h.sc, j);
#pragma GCC unroll 4
                for (int t = 0; t < NT; t++) {
                    const int8_t *q = x->q + (size_t)(t0 + t) * x->d + 256 * k + 32 * j;
                    __m256i p = _mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *)q));
                    ai[c + t] = _mm256_add_epi32(ai[c + t], _mm256_madd_epi16(p, s));
                }
            }
#pragma GCC unroll 4
            for (int t = 0; t < NT; t++) {
                const int16_t *s16 = x->s16 + (size_t)(t0 + t) * (x->d / 16) + 16 * k;
                const int16_t *s32 = x->s32 + (size_t)(t0 + t) * (x->d / 32) + 8 * k;
                if (!mins) {
                    __m256i cr = _mm256_madd_epi16(h.sc, _mm256_loadu_si256((const __m256i *)s16));
                    ai[c + t] = _mm256_sub_epi32(ai[c + t], _mm256_slli_epi32(cr, 5));
                } else {
                    im[c + t] = _mm_madd_epi16(h.mn, _mm_loadu_si128((const __m128i *)s32));
                }
            }
            if (NT == 4) {
                is[r] = red4_all(ai[0], ai[1], ai[2], ai[3]);
                if (mins) mi[r] = red4_128(im[0], im[1], im[2], im[3]);
            }
        }
        if (NT == 1) {
            is[0] = red4_all(ai[0], ai[1], ai[2], ai[3]);
            if (mins) mi[0] = red4_128(im[0], im[1], im[2], im[3]);
        }
#pragma GCC unroll 4
        for (int t = 0; t < NT; t++) dx[t] = x->dx[(size_t)k * x->T + t0 + t];
#pragma GCC unroll 2
        for (int g = 0; g < NR * NT / 4; g++) {
            int c0 = 4 * g;
            __m128 dv = _mm_setr_ps(dr[c0 / NT], dr[(c0 + 1) / NT], dr[(c0 + 2) / NT], dr[(c0 + 3) / NT]);
            __m128 xv = _mm_setr_ps(dx[c0 % NT], dx[(c0 + 1) % NT], dx[(c0 + 2) % NT], dx[(c0 + 3) % NT]);
            acc[g] = _mm_add_ps(acc[g], _mm_mul_ps(_mm_mul_ps(dv, xv), _mm_cvtepi32_ps(is[g])));
            if (!mins) continue;
            __m128 mv = _mm_setr_ps(mr[c0 / NT], mr[(c0 + 1) / NT], mr[(c0 + 2) / NT], mr[(c0 + 3) / NT]);
            acc[g] = _mm_sub_ps(acc[g], _mm_mul_ps(_mm_mul_ps(mv, xv), _mm_cvtepi32_ps(mi[g])));
        }
    }
#pragma GCC unroll 2
    for (int g = 0; g < NR * NT / 4; g++) _mm_storeu_ps(out + 4 * g, acc[g]);
}

/* NR rows × NT tokens of Q8_0 blocks: |w| · (x signed as w), two halves a cell. */
INLINE256 void q8_tile(int NR, int NT, const uint8_t *w, size_t rb, const GqX *x, int t0, float *out) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int k = 0; k < x->d / 32; k++) {
        __m256i ai[8];
        float dr[4], dx[4];
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            const uint8_t *b = w + r * rb + 34 * (size_t)k;
            mv_prefetch(b, 1);
            __m256i v = _mm256_loadu_si256((const __m256i *)(b + 2)), a = _mm256_abs_epi8(v);
            dr[r] = f16c(b);
#pragma GCC unroll 8
            for (int t = 0; t < NT; t++) {
                __m256i q = _mm256_loadu_si256((const __m256i *)(x->q + (size_t)(t0 + t) * x->d + 32 * k));
                ai[r * NT + t] = _mm256_madd_epi16(_mm256_maddubs_epi16(a, _mm256_sign_epi8(q, v)), ones);
            }
        }
#pragma GCC unroll 8
        for (int t = 0; t < NT; t++) dx[t] = x->dx[(size_t)k * x->T + t0 + t];
#pragma GCC unroll 8
        for (int g = 0; g < NR * NT / 4; g++) {
            int c0 = 4 * g;
            __m256i is = red4(ai[c0], ai[c0 + 1], ai[c0 + 2], ai[c0 + 3]);
            __m128 dv = _mm_setr_ps(dr[c0 / NT], dr[(c0 + 1) / NT], dr[(c0 + 2) / NT], dr[(c0 + 3) / NT]);
            __m128 xv = _mm_setr_ps(dx[c0 % NT], dx[(c0 + 1) % NT], dx[(c0 + 2) % NT], dx[(c0 + 3) % NT]);
            __m128 sc = _mm_mul_ps(dv, xv);
            __m256 sc2 = _mm256_set_m128(sc, sc);
            acc[g] = _mm256_add_ps(acc[g], _mm256_mul_ps(sc2, _mm256_cvtepi32_ps(is)));
        }
    }
#pragma GCC unroll 8
    for (int g = 0; g < NR * NT / 4; g++)
        _mm_storeu_ps(out + 4 * g, _mm_add_ps(_mm256_castps256_ps128(acc[g]), _mm256_extractf128_ps(acc[g], 1)));
}

/* out[r·NT + t] for rows w, w + rb, … and tokens t0 … */
T256 static void tile_2x4(int ty, const uint8_t *w, size_t rb, const GqX *x, int t0, float *out) {
    if (ty == GGML_Q8_0) q8_tile(2, 4, w, rb, x, t0, out);
    else if (ty == GGML_Q4_K) k_tile(GGML_Q4_K, 2, 4, w, rb, x, t0, out);
    else if (ty == GGML_Q5_K) k_tile(GGML_Q5_K, 2, 4, w, rb, x, t0, out);
    else k_tile(GGML_Q6_K, 2, 4, w, rb, x, t0, out);
}

T256 static void tile_4x1(int ty, const uint8_t *w, size_t rb, const GqX *x, int t0, float *out) {
    if (ty == GGML_Q8_0) q8_tile(4, 1, w, rb, x, t0, out);
    else if (ty == GGML_Q4_K) k_tile(GGML_Q4_K, 4, 1, w, rb, x, t0, out);
    else if (ty == GGML_Q5_K) k_tile(GGML_Q5_K, 4, 1, w, rb, x, t0, out);
    else k_tile(GGML_Q6_K, 4, 1, w, rb, x, t0, out);
}

/* Rows in a block whose weights stay in L2 while every token quad reads them. */
#define GQ_ROWS 16

/* Rows [j0, j1) against every token: 4 × 1 tiles one token at a time for
 * decode and a prefill's last tokens, 2 × 4 tiles over the quads. */
static void avx2_rows(float *C, int ldc, const GqX *x, int ty, const uint8_t *w, int j0, int j1, int tlo) {
    size_t rb = (size_t)x->d / x->blk * block_bytes(ty);
    int T = x->T, tq = tlo + (T - tlo) / 4 * 4;
    float o[8];
    for (int t0 = tlo; t0 < tq; t0 += 4) {
        int j = j0;
        for (; j + 2 <= j1; j += 2) {
            tile_2x4(ty, w + (size_t)j * rb, rb, x, t0, o);
            for (int r = 0; r < 2; r++)
                for (int t = 0; t < 4; t++) C[(size_t)(t0 + t) * ldc + j + r] = o[4 * r + t];
        }
        cells(C, ldc, x, ty, w, j, j1, t0, t0 + 4);
    }
    for (int t = tq; t < T; t++) {
        int j = j0;
        for (; j + 4 <= j1; j += 4) {
            tile_4x1(ty, w + (size_t)j * rb, rb, x, t, o);
            for (int r = 0; r < 4; r++) C[(size_t)t * ldc + j + r] = o[r];
        }
        cells(C, ldc, x, ty, w, j, j1, t, t + 1);
    }
}

/* Rows [j0, n) against tokens from tlo, in the AVX2 tiles' row blocks. */
static void avx2_from(float *C, int ldc, const GqX *x, int ty, const uint8_t *w, int j0, int n, int tlo) {
    for (; j0 < n; j0 += GQ_ROWS) avx2_rows(C, ldc, x, ty, w, j0, j0 + GQ_ROWS < n ? j0 + GQ_ROWS : n, tlo);
}

void gemm_q(GqPath path, float *C, int ldc, const GqX *x, int ty, const void *w, int n) {
    if (path == GQ_PORTABLE) {
        cells(C, ldc, x, ty, w, 0, n, 0, x->T);
        return;
    }
    int n16 = n / 16 * 16, T16 = x->T / 16 * 16, vnni = path == GQ_VNNI;
    int amx = (path == GQ_AMX || vnni) && x->tiles && n16 && T16 && gemm_q_amx_takes(ty, x->d, vnni);
    if (!amx) {
        avx2_from(C, ldc, x, ty, w, 0, n, 0);
        return;
    }
    /* whole 16 × 16 tiles in AMX (or VNNI), the rows and tokens past them in AVX2 */
    gemm_q_amx(C, ldc, x, ty, w, n16, vnni);
    avx2_from(C, ldc, x, ty, w, n16, n, 0);
    if (T16 < x->T) avx2_from(C, ldc, x, ty, w, 0, n16, T16);
}

/* ---- which path ---- */

/* AMX-TILE and AMX-INT8 (CPUID 7.0 EDX bits 24, 25), the AVX-512 the
 * tiles' f32 steps use, and the kernel's permission for the tile state. */
static int cpu_amx_int8(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25))) return 0;
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && gemm_half_tiles_permitted();
}

/* The AVX-512 the VNNI tiles use, with its VNNI (CPUID 7.0 ECX bit 11). */
static int cpu_avx512_vnni(void) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vnni");
}

int gemm_q_available(GqPath path) {
    if (path != GQ_AVX2 && path != GQ_AMX && path != GQ_VNNI) return path == GQ_OFF || path == GQ_PORTABLE;
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && mv_cpu_f16c();
    if (path == GQ_VNNI) return avx2 && cpu_avx512_vnni();
    return avx2 && (path == GQ_AVX2 || cpu_amx_int8());
}

GqPath gemm_q_best(void) {
    return gemm_q_available(GQ_AMX)    ? GQ_AMX
           : gemm_q_available(GQ_VNNI) ? GQ_VNNI
           : gemm_q_available(GQ_AVX2) ? GQ_AVX2
                                       : GQ_PORTABLE;
}

const char *gemm_q_name(GqPath path) {
    return path == GQ_VNNI ? "avx512vnni" : path == GQ_AMX ? "amx" : path == GQ_AVX2 ? "avx2"
           : path == GQ_PORTABLE ? "portable" : "off";
}

int gemm_q_from_env(char *msg, size_t msg_size) {
    const char *v = getenv("AHASCOPE_GEMMQ");
    if (!v || !*v || !strcmp(v, "auto")) return gemm_q_best();
    for (int p = GQ_OFF; p <= GQ_VNNI; p++)
        if (!strcmp(v, gemm_q_name((GqPath)p))) {
            if (gemm_q_available((GqPath)p)) return p;
            snprintf(msg, msg_size, "AHASCOPE_GEMMQ=%s: this CPU lacks the instructions", v);
            return -1;
        }
    snprintf(msg, msg_size, "AHASCOPE_GEMMQ=%s: not a path (off, portable, avx2, amx, avx512vnni, auto)", v);
    return -1;
}
