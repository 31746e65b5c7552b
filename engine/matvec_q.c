/* matvec_q.c — the decode kernels over ggml's quantised blocks read in place (AVX-512, AVX2, portable C).
 *
 * Every weight is made in f32 exactly as quant_dequant makes it (sc·q is
 * exact, so a fused sc·q − mn rounds as the separate subtraction does), so
 * each kernel computes the widened row's products and differs from another
 * only in the order it sums them. */
#include "matvec.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"
#include "simd.h"

int mv_q_supported(int t) { return quant_is_block((GgmlType)t); }

void mv_q_widen(float *out, int t, const void *w, size_t n) { quant_dequant((GgmlType)t, w, out, (int64_t)n); }

/* A block widened whole, then dotted with eight accumulators. */
static void q_portable(float *out, GgmlType t, const uint8_t *w, const float *x, int n, int d) {
    int be, bb;
    quant_block(t, &be, &bb);
    size_t rb = quant_row_bytes(t, d);
    float y[QUANT_MAX_BLOCK];
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        float acc[8] = {0}, s = 0;
        for (int k = 0; k < d / be; k++) {
            quant_dequant(t, r + (size_t)k * bb, y, be);
            const float *xs = x + (size_t)k * be;
            for (int j = 0; j < be; j += 8)
                for (int l = 0; l < 8; l++) acc[l] += y[j + l] * xs[j + l];
        }
        for (int l = 0; l < 8; l++) s += acc[l];
        out[i] = s;
    }
}

/* A Q4_K/Q5_K block's eight sub-block scales and offsets from d and dmin
 * (quant_k_scales' arithmetic, inlined: called once a block, its call and
 * software f16 conversion cost as much as the block's vector work). */
static inline void k_scales(const uint8_t *p, float d, float dmin, float *sc, float *mn) {
    for (int s = 0; s < 4; s++) {
        sc[s] = d * (float)(p[s] & 63), mn[s] = dmin * (float)(p[s + 4] & 63);
        sc[s + 4] = d * (float)((p[s + 8] & 15) | (p[s] >> 6) << 4);
        mn[s + 4] = dmin * (float)((p[s + 8] >> 4) | (p[s + 4] >> 6) << 4);
    }
}

/* ---- AVX-512 ---- */

#define T512 __attribute__((target("avx512f,avx512bw,f16c,fma")))

/* 16 unpacked weights of one group as f32: sc·q − mn. */
T512 static inline __m512 grp16(const int8_t *q, float sc, float mn) {
    __m512 v = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)q)));
    return _mm512_fmsub_ps(_mm512_set1_ps(sc), v, _mm512_set1_ps(mn));
}

/* Any block type: unpack a block (quant_unpack's AVX-512 clone), then its groups. */
T512 static void qk_avx512(float *out, GgmlType t, const uint8_t *w, const float *x, int n, int d) {
    int be, bb;
    quant_block(t, &be, &bb);
    size_t rb = quant_row_bytes(t, d);
    int lines = (bb + 63) / 64;
    int8_t q[QUANT_MAX_BLOCK];
    float sc[QUANT_MAX_BLOCK / QUANT_GROUP], mn[QUANT_MAX_BLOCK / QUANT_GROUP];
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / be; k++) {
            const uint8_t *blk = r + (size_t)k * bb;
            mv_prefetch(blk, lines);
            quant_unpack(t, blk, q, sc, mn);
            const float *xs = x + (size_t)k * be;
            for (int g = 0; g < be / QUANT_GROUP; g += 2) {
                a0 = _mm512_fmadd_ps(grp16(q + 16 * g, sc[g], mn[g]), _mm512_loadu_ps(xs + 16 * g), a0);
                a1 = _mm512_fmadd_ps(grp16(q + 16 * g + 16, sc[g + 1], mn[g + 1]), _mm512_loadu_ps(xs + 16 * g + 16), a1);
            }
        }
        out[i] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    }
}

T512 static inline float f16c_at(const uint8_t *p) { return _cvtsh_ss((unsigned short)(p[0] | p[1] << 8)); }

/* Q8_0 straight from its bytes: d·q for 32 signed bytes. */
T512 static void q8_0_avx512(float *out, const uint8_t *w, const float *x, int n, int d) {
    size_t rb = (size_t)d / 32 * 34;
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 32; k++) {
            const uint8_t *b = r + (size_t)k * 34;
            mv_prefetch(b, 1);
            __m512 dv = _mm512_set1_ps(f16c_at(b));
            __m256i qb = _mm256_loadu_si256((const __m256i *)(b + 2));
            __m512 v0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(qb)));
            __m512 v1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(qb, 1)));
            a0 = _mm512_fmadd_ps(_mm512_mul_ps(dv, v0), _mm512_loadu_ps(x + 32 * k), a0);
            a1 = _mm512_fmadd_ps(_mm512_mul_ps(dv, v1), _mm512_loadu_ps(x + 32 * k + 16), a1);
        }
        out[i] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    }
}

/* Q4_0 straight from its bytes: d·nibble − 8d, low nibbles the first 16. */
T512 static void q4_0_avx512(float *out, const uint8_t *w, const float *x, int n, int d) {
    size_t rb = (size_t)d / 32 * 18;
    const __m128i m4 = _mm_set1_epi8(15);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 32; k++) {
            const uint8_t *b = r + (size_t)k * 18;
            mv_prefetch(b, 1);
            float dd = f16c_at(b);
            __m512 dv = _mm512_set1_ps(dd), off = _mm512_set1_ps(8 * dd);
            __m128i qs = _mm_loadu_si128((const __m128i *)(b + 2));
            __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(qs, m4)));
            __m512 hi = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(qs, 4), m4)));
            a0 = _mm512_fmadd_ps(_mm512_fmsub_ps(dv, lo, off), _mm512_loadu_ps(x + 32 * k), a0);
            a1 = _mm512_fmadd_ps(_mm512_fmsub_ps(dv, hi, off), _mm512_loadu_ps(x + 32 * k + 16), a1);
        }
        out[i] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    }
}

/* 32 weights of 4 or 5 bits (bytes u) of one sub-block: sc·u − mn, dotted
 * with x into a. */
T512 static inline __m512 sub32(__m256i u, float sc, float mn, const float *x, __m512 a) {
    __m512 s = _mm512_set1_ps(sc), m = _mm512_set1_ps(mn);
    __m512 v0 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(u)));
    __m512 v1 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(u, 1)));
    a = _mm512_fmadd_ps(_mm512_fmsub_ps(s, v0, m), _mm512_loadu_ps(x), a);
    return _mm512_fmadd_ps(_mm512_fmsub_ps(s, v1, m), _mm512_loadu_ps(x + 16), a);
}

/* Q4_K and Q5_K unpacked in registers: each 64-weight chunk is 32 bytes
 * of nibbles (low, then high) and, for Q5_K, two bits of every qh byte. */
T512 static void q45_k_avx512(float *out, const uint8_t *w, const float *x, int n, int d, int five) {
    int bb = five ? 176 : 144;
    size_t rb = (size_t)d / 256 * bb;
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 256; k++) {
            const uint8_t *b = r + (size_t)k * bb, *qs = b + (five ? 48 : 16);
            mv_prefetch(b, 3);
            float sc[8], mn[8];
            k_scales(b + 4, _cvtsh_ss((unsigned short)(b[0] | b[1] << 8)), _cvtsh_ss((unsigned short)(b[2] | b[3] << 8)), sc, mn);
            __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(b + 16)) : _mm256_setzero_si256();
            const float *xs = x + (size_t)k * 256;
            for (int c = 0; c < 4; c++) {
                __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));
                __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                if (five) {
                    __m256i b0 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c)), one);
                    __m256i b1 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c + 1)), one);
                    lo = _mm256_or_si256(lo, _mm256_slli_epi16(b0, 4)), hi = _mm256_or_si256(hi, _mm256_slli_epi16(b1, 4));
                }
                a0 = sub32(lo, sc[2 * c], mn[2 * c], xs + 64 * c, a0);
                a1 = sub32(hi, sc[2 * c + 1], mn[2 * c + 1], xs + 64 * c + 32, a1);
            }
        }
        out[i] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    }
}

/* 16 six-bit weights (bytes u, offset 32) of one group: sc·u − 32·sc. */
T512 static inline __m512 q6_16(__m128i u, float sc, const float *x, __m512 a) {
    __m512 s = _mm512_set1_ps(sc), v = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(u));
    return _mm512_fmadd_ps(_mm512_fmsub_ps(s, v, _mm512_set1_ps(32 * sc)), _mm512_loadu_ps(x), a);
}

/* Q6_K unpacked in registers: each 128-weight half is 64 bytes of nibbles
 * and 32 bytes of 2-bit highs, four 32-weight quarters of two groups. */
T512 static void q6_k_avx512(float *out, const uint8_t *w, const float *x, int n, int d) {
    size_t rb = (size_t)d / 256 * 210;
    const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(3);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 256; k++) {
            const uint8_t *b = r + (size_t)k * 210;
            const int8_t *scales = (const int8_t *)(b + 192);
            mv_prefetch(b, 4);
            float dd = f16c_at(b + 208);
            for (int h = 0; h < 2; h++) {
                const uint8_t *ql = b + 64 * h, *qhp = b + 128 + 32 * h;
                __m256i l0 = _mm256_loadu_si256((const __m256i *)ql), l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
                __m256i qh = _mm256_loadu_si256((const __m256i *)qhp);
                __m256i nib[4] = {_mm256_and_si256(l0, m4), _mm256_and_si256(l1, m4),
                                  _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4)};
                const float *xs = x + (size_t)k * 256 + 128 * h;
                for (int q = 0; q < 4; q++) {
                    __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * q)), m2);
                    __m256i u = _mm256_or_si256(nib[q], _mm256_slli_epi16(hb, 4));
                    int g = 8 * h + 2 * q;
                    a0 = q6_16(_mm256_castsi256_si128(u), dd * (float)scales[g], xs + 32 * q, a0);
                    a1 = q6_16(_mm256_extracti128_si256(u, 1), dd * (float)scales[g + 1], xs + 32 * q + 16, a1);
                }
            }
        }
        out[i] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    }
}

/* ---- AVX2 ---- */

#define T256 __attribute__((target("avx2,f16c,fma")))

T256 static inline float hsum8(__m256 a) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

T256 static inline __m256 grp8(const int8_t *q, float sc, float mn) {
    __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)q)));
    return _mm256_fmsub_ps(_mm256_set1_ps(sc), v, _mm256_set1_ps(mn));
}

T256 static void qk_avx2(float *out, GgmlType t, const uint8_t *w, const float *x, int n, int d) {
    int be, bb;
    quant_block(t, &be, &bb);
    size_t rb = quant_row_bytes(t, d);
    int lines = (bb + 63) / 64;
    int8_t q[QUANT_MAX_BLOCK];
    float sc[QUANT_MAX_BLOCK / QUANT_GROUP], mn[QUANT_MAX_BLOCK / QUANT_GROUP];
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / be; k++) {
            const uint8_t *blk = r + (size_t)k * bb;
            mv_prefetch(blk, lines);
            quant_unpack(t, blk, q, sc, mn);
            const float *xs = x + (size_t)k * be;
            for (int g = 0; g < be / QUANT_GROUP; g++) {
                a0 = _mm256_fmadd_ps(grp8(q + 16 * g, sc[g], mn[g]), _mm256_loadu_ps(xs + 16 * g), a0);
                a1 = _mm256_fmadd_ps(grp8(q + 16 * g + 8, sc[g], mn[g]), _mm256_loadu_ps(xs + 16 * g + 8), a1);
            }
        }
        out[i] = hsum8(_mm256_add_ps(a0, a1));
    }
}

T256 static void q8_0_avx2(float *out, const uint8_t *w, const float *x, int n, int d) {
    size_t rb = (size_t)d / 32 * 34;
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 32; k++) {
            const uint8_t *b = r + (size_t)k * 34;
            mv_prefetch(b, 1);
            __m256 dv = _mm256_set1_ps(_cvtsh_ss((unsigned short)(b[0] | b[1] << 8)));
            for (int h = 0; h < 32; h += 16) {
                __m256 v0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b + 2 + h))));
                __m256 v1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b + 10 + h))));
                a0 = _mm256_fmadd_ps(_mm256_mul_ps(dv, v0), _mm256_loadu_ps(x + 32 * k + h), a0);
                a1 = _mm256_fmadd_ps(_mm256_mul_ps(dv, v1), _mm256_loadu_ps(x + 32 * k + h + 8), a1);
            }
        }
        out[i] = hsum8(_mm256_add_ps(a0, a1));
    }
}

T256 static void q4_0_avx2(float *out, const uint8_t *w, const float *x, int n, int d) {
    size_t rb = (size_t)d / 32 * 18;
    const __m128i m4 = _mm_set1_epi8(15);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 32; k++) {
            const uint8_t *b = r + (size_t)k * 18;
            mv_prefetch(b, 1);
            float dd = _cvtsh_ss((unsigned short)(b[0] | b[1] << 8));
            __m256 dv = _mm256_set1_ps(dd), off = _mm256_set1_ps(8 * dd);
            __m128i qs = _mm_loadu_si128((const __m128i *)(b + 2));
            __m128i nib[2] = {_mm_and_si128(qs, m4), _mm_and_si128(_mm_srli_epi16(qs, 4), m4)};
            for (int h = 0; h < 2; h++) {
                __m256 v0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(nib[h]));
                __m256 v1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(nib[h], 8)));
                a0 = _mm256_fmadd_ps(_mm256_fmsub_ps(dv, v0, off), _mm256_loadu_ps(x + 32 * k + 16 * h), a0);
                a1 = _mm256_fmadd_ps(_mm256_fmsub_ps(dv, v1, off), _mm256_loadu_ps(x + 32 * k + 16 * h + 8), a1);
            }
        }
        out[i] = hsum8(_mm256_add_ps(a0, a1));
    }
}

/* 16 unsigned bytes (the low or high half of u) as two 8-lane groups:
 * sc·u − mn dotted with x into a. */
T256 static inline __m256 half16(__m128i u, __m256 s, __m256 m, const float *x, __m256 a) {
    __m256 v0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(u)), v1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(u, 8)));
    a = _mm256_fmadd_ps(_mm256_fmsub_ps(s, v0, m), _mm256_loadu_ps(x), a);
    return _mm256_fmadd_ps(_mm256_fmsub_ps(s, v1, m), _mm256_loadu_ps(x + 8), a);
}

/* 32 unsigned bytes of one scale and offset. */
T256 static inline __m256 sub32_avx2(__m256i u, float sc, float mn, const float *x, __m256 a) {
    __m256 s = _mm256_set1_ps(sc), m = _mm256_set1_ps(mn);
    a = half16(_mm256_castsi256_si128(u), s, m, x, a);
    return half16(_mm256_extracti128_si256(u, 1), s, m, x + 16, a);
}

/* Q4_K and Q5_K in AVX2 registers, as q45_k_avx512 lays them out. */
T256 static void q45_k_avx2(float *out, const uint8_t *w, const float *x, int n, int d, int five) {
    int bb = five ? 176 : 144;
    size_t rb = (size_t)d / 256 * bb;
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 256; k++) {
            const uint8_t *b = r + (size_t)k * bb, *qs = b + (five ? 48 : 16);
            mv_prefetch(b, 3);
            float sc[8], mn[8];
            k_scales(b + 4, _cvtsh_ss((unsigned short)(b[0] | b[1] << 8)), _cvtsh_ss((unsigned short)(b[2] | b[3] << 8)), sc, mn);
            __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(b + 16)) : _mm256_setzero_si256();
            const float *xs = x + (size_t)k * 256;
            for (int c = 0; c < 4; c++) {
                __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));
                __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                if (five) {
                    __m256i b0 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c)), one);
                    __m256i b1 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c + 1)), one);
                    lo = _mm256_or_si256(lo, _mm256_slli_epi16(b0, 4)), hi = _mm256_or_si256(hi, _mm256_slli_epi16(b1, 4));
                }
                a0 = sub32_avx2(lo, sc[2 * c], mn[2 * c], xs + 64 * c, a0);
                a1 = sub32_avx2(hi, sc[2 * c + 1], mn[2 * c + 1], xs + 64 * c + 32, a1);
            }
        }
        out[i] = hsum8(_mm256_add_ps(a0, a1));
    }
}

/* Q6_K in AVX2 registers, as q6_k_avx512 lays it out. */
T256 static void q6_k_avx2(float *out, const uint8_t *w, const float *x, int n, int d) {
    size_t rb = (size_t)d / 256 * 210;
    const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(3);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (int k = 0; k < d / 256; k++) {
            const uint8_t *b = r + (size_t)k * 210;
            const int8_t *scales = (const int8_t *)(b + 192);
            mv_prefetch(b, 4);
            float dd = _cvtsh_ss((unsigned short)(b[208] | b[209] << 8));
            for (int h = 0; h < 2; h++) {
                const uint8_t *ql = b + 64 * h;
                __m256i l0 = _mm256_loadu_si256((const __m256i *)ql), l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
                __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 128 + 32 * h));
                __m256i nib[4] = {_mm256_and_si256(l0, m4), _mm256_and_si256(l1, m4),
                                  _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4)};
                const float *xs = x + (size_t)k * 256 + 128 * h;
                for (int q = 0; q < 4; q++) {
                    __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * q)), m2);
                    __m256i u = _mm256_or_si256(nib[q], _mm256_slli_epi16(hb, 4));
                    float s0 = dd * (float)scales[8 * h + 2 * q], s1 = dd * (float)scales[8 * h + 2 * q + 1];
                    a0 = half16(_mm256_castsi256_si128(u), _mm256_set1_ps(s0), _mm256_set1_ps(32 * s0), xs + 32 * q, a0);
                    a1 = half16(_mm256_extracti128_si256(u, 1), _mm256_set1_ps(s1), _mm256_set1_ps(32 * s1), xs + 32 * q + 16, a1);
                }
            }
        }
        out[i] = hsum8(_mm256_add_ps(a0, a1));
    }
}

/* ---- the integer path (AVX-512 VNNI) ----
 * x is rounded once per call to 8 bits per 32 values (dx = max|x|/127,
 * as ggml rounds activations to Q8), so a weight byte times an x byte is
 * an exact integer product and dpbusd sums four of them a lane: 64 weights
 * an instruction, against 16 FMAs in f32. Each 16-lane sum covers two
 * sub-blocks (or four Q6_K groups), so it is scaled in f32 by a lane
 * vector of sub-scale·dx made once a block; the offsets (Q4_K/Q5_K mins,
 * Q6_K's 32, Q8_0's 128 from storing signed bytes as w ^ 0x80) come out
 * through precomputed dx·Σqx per block, one FMA a block. Two rows share
 * each x load. */

#define MVQ_MAX_D 65536
#define MVQ_INT8_DEFAULT 1 /* the measured faster path (matvec.h) */

typedef struct {
    int8_t q[MVQ_MAX_D];
    float dx[MVQ_MAX_D / 32];
    float sx[MVQ_MAX_D / 32];  /* dx · Σ q over the 32 */
    float s16[MVQ_MAX_D / 16]; /* dx · Σ q over each 16 */
    int32_t sum[MVQ_MAX_D / 32];
} Xq;

/* The scalar rounding, for CPUs without the integer path. */
static void xq_scalar(int8_t *q, float *dx, int32_t *sum, const float *x, int d) {
    for (int b = 0; b < d / 32; b++) {
        float amax = 0;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[32 * b + j]));
        float s = amax / 127, id = s > 0 ? 1 / s : 0;
        int32_t t = 0;
        for (int j = 0; j < 32; j++) t += q[32 * b + j] = (int8_t)lrintf(x[32 * b + j] * id);
        dx[b] = s, sum[b] = t;
    }
}

#define TVNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,f16c,fma")))

/* mv_q_quantise_x in registers (the same rounding: x·(1/dx) to nearest
 * even), with the per-16 sums Q6_K wants. */
TVNNI static void xq_fill(Xq *xq, const float *x, int d) {
    for (int b = 0; b < d / 32; b++) {
        __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
        float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        float s = amax / 127, id = s > 0 ? 1 / s : 0;
        __m512 idv = _mm512_set1_ps(id);
        __m512i i0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, idv)), i1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, idv));
        _mm_storeu_si128((__m128i *)(xq->q + 32 * b), _mm512_cvtsepi32_epi8(i0));
        _mm_storeu_si128((__m128i *)(xq->q + 32 * b + 16), _mm512_cvtsepi32_epi8(i1));
        int t0 = _mm512_reduce_add_epi32(i0), t1 = _mm512_reduce_add_epi32(i1);
        xq->dx[b] = s, xq->sx[b] = s * (float)(t0 + t1), xq->sum[b] = t0 + t1;
        xq->s16[2 * b] = s * (float)t0, xq->s16[2 * b + 1] = s * (float)t1;
    }
}

/* Lane l of the result is v[l / 8] (two sub-blocks of 8 lanes each), from
 * sub-block pair c. */
TVNNI static inline __m512 pair_lanes(__m256 v, int c) {
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(_mm512_add_epi32(idx, _mm512_set1_epi32(2 * c)), _mm512_castps256_ps512(v));
}

/* 64 bytes of u dotted with 64 x bytes, scaled per lane by s, into a. */
TVNNI static inline __m512 dot64(__m512i u, const int8_t *qx, __m512 s, __m512 a) {
    __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, _mm512_loadu_si512(qx));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), s, a);
}

/* Eight consecutive Q8_0 blocks' scales (f16 at stride 34) as f32. */
TVNNI static inline __m256 q8_scales8(const uint8_t *b) {
    __m128i h = _mm_cvtsi32_si128(b[0] | b[1] << 8); /* inserts: a store and wider load would stall forwarding */
    h = _mm_insert_epi16(h, b[34] | b[35] << 8, 1), h = _mm_insert_epi16(h, b[68] | b[69] << 8, 2);
    h = _mm_insert_epi16(h, b[102] | b[103] << 8, 3), h = _mm_insert_epi16(h, b[136] | b[137] << 8, 4);
    h = _mm_insert_epi16(h, b[170] | b[171] << 8, 5), h = _mm_insert_epi16(h, b[204] | b[205] << 8, 6);
    h = _mm_insert_epi16(h, b[238] | b[239] << 8, 7);
    return _mm256_cvtph_ps(h);
}

/* Q8_0, eight blocks (256 weights) of one row: the dot and its offset. */
TVNNI static inline void q8_0_oct(const uint8_t *b, const Xq *xq, int k8, __m512 *a, __m256 *off) {
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m256 dw = q8_scales8(b), s = _mm256_mul_ps(dw, _mm256_loadu_ps(xq->dx + 8 * k8));
    *off = _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(128)), _mm256_loadu_ps(xq->sx + 8 * k8), *off);
    for (int c = 0; c < 4; c++) {
        const uint8_t *p = b + 68 * c;
        __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(p + 2))),
                                       _mm256_loadu_si256((const __m256i *)(p + 36)), 1);
        *a = dot64(_mm512_xor_si512(u, flip), xq->q + 256 * k8 + 64 * c, pair_lanes(s, c), *a);
    }
}

TVNNI static inline float hsum_vnni(__m512 a, __m256 off) {
    __m256 o = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    o = _mm256_sub_ps(o, off);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(o), _mm256_extractf128_ps(o, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

/* One Q8_0 block (a row's tail past its last eight), into the low lanes. */
TVNNI static inline void q8_0_one(const uint8_t *b, const Xq *xq, int k, __m512 *a, __m256 *off) {
    float dd = _cvtsh_ss((unsigned short)(b[0] | b[1] << 8));
    __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(b + 2)), _mm256_set1_epi8((char)0x80));
    __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, _mm256_loadu_si256((const __m256i *)(xq->q + 32 * k)));
    __m256 lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dd * xq->dx[k]), _mm512_castps512_ps256(*a));
    *a = _mm512_insertf32x8(*a, lo, 0);
    *off = _mm256_add_ps(*off, _mm256_setr_ps(128 * dd * xq->sx[k], 0, 0, 0, 0, 0, 0, 0));
}

/* How far ahead the integer kernels ask for their rows: MV_PREFETCH (4
 * KiB, into L2), but 16 KiB on AMD. On a Zen 4 (2 vCPUs, decode of the 1B
 * Q4_K_M file, 48 steps, 2 threads, builds alternated) 4 KiB decoded
 * 38.7-40.5 tok/s, 8 KiB 43.8-46.4, 12 and 16 KiB 43.9-47.7, 2 KiB
 * 28.7-32.0 and no prefetch 19.3-20.1; a line fewer per block 26.4-27.8.
 * In a later pair of passes 16 KiB beat 8 on both files (Q8_0 36.2, 36.7
 * against 34.5, 35.0; Q4_K_M 47.9, 47.4 against 46.2, 46.3), 32 KiB no
 * better. The Xeon's figures (engine/PERFORMANCE.md) were taken at 4 KiB,
 * which it keeps. */
static size_t q_ahead(void) { return mv_prefetch_kind() == MV_PF_L1 ? 16384 : MV_PREFETCH; }

TVNNI static void q8_0_vnni(float *out, const uint8_t *w, const Xq *xq, int n, int d) {
    size_t rb = (size_t)d / 32 * 34, ahead = q_ahead();
    int nb = d / 32, n8 = nb / 8;
    for (int i = 0; i < n; i += 2) {
        int two = i + 1 < n;
        const uint8_t *r0 = w + (size_t)i * rb, *r1 = two ? r0 + rb : r0;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        __m256 o0 = _mm256_setzero_ps(), o1 = o0;
        for (int k = 0; k < n8; k++) {
            mv_prefetch_at(r0 + 272 * k, ahead, 5), mv_prefetch_at(r1 + 272 * k, ahead, 5);
            q8_0_oct(r0 + 272 * k, xq, k, &a0, &o0);
            q8_0_oct(r1 + 272 * k, xq, k, &a1, &o1);
        }
        for (int k = 8 * n8; k < nb; k++) q8_0_one(r0 + 34 * k, xq, k, &a0, &o0), q8_0_one(r1 + 34 * k, xq, k, &a1, &o1);
        out[i] = hsum_vnni(a0, o0);
        if (two) out[i + 1] = hsum_vnni(a1, o1);
    }
}

/* A Q4_K/Q5_K block (256 weights) of one row: its sub-scales times d·dx as
 * lanes, the nibbles (and Q5_K's fifth bits) dotted two sub-blocks at a
 * time, the mins through dx·Σqx. */
/* quant_k_scales6 in a register: the eight 6-bit scales then the eight
 * mins as bytes, from the block's 12 bytes at p (read 16 at a time: the
 * nibbles follow). Its words lo, mid, hi give (lo, hi>>0, mid, hi>>4) and
 * the top two bits of lo and mid; unpacking through memory stalled a store
 * forward in every block. */
TVNNI static inline __m128i k_scales6(const uint8_t *p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);                 /* lo, mid, hi, - */
    __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));         /* lo, hi, mid, hi */
    __m128i b = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));         /* lo, lo, mid, mid */
    __m128i six = _mm_and_si128(a, _mm_set1_epi8(0x3f));
    __m128i low = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)), _mm_set1_epi8(0x0f));
    __m128i top = _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(b, 6), _mm_set1_epi8(3)), 4);
    return _mm_blend_epi32(six, _mm_or_si128(low, top), 0xA);
}

TVNNI static inline void q45_k_blk(const uint8_t *b, const Xq *xq, int k, int five, __m512 *a, __m256 *off) {
    __m256 d = _mm256_set1_ps(_cvtsh_ss((unsigned short)(b[0] | b[1] << 8)));
    __m256 dm = _mm256_set1_ps(_cvtsh_ss((unsigned short)(b[2] | b[3] << 8)));
    __m128i smv = k_scales6(b + 4);
    __m256 sc = _mm256_mul_ps(_mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(smv))), _mm256_loadu_ps(xq->dx + 8 * k));
    __m256 mn = _mm256_mul_ps(dm, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(smv, 8))));
    *off = _mm256_fmadd_ps(mn, _mm256_loadu_ps(xq->sx + 8 * k), *off);
    const uint8_t *qs = b + (five ? 48 : 16);
    const __m512i m4 = _mm512_set1_epi8(15), one = _mm512_set1_epi8(1);
    const __m512i sh = _mm512_set_epi64(4, 4, 4, 4, 0, 0, 0, 0); /* low nibbles, then high */
    __m512i qh = five ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 16))) : _mm512_setzero_si512();
    for (int c = 0; c < 4; c++) {
        __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(qs + 32 * c)));
        __m512i u = _mm512_and_si512(_mm512_srlv_epi64(q, sh), m4);
        if (five) {
            __m512i hs = _mm512_add_epi64(_mm512_set_epi64(1, 1, 1, 1, 0, 0, 0, 0), _mm512_set1_epi64(2 * c));
            u = _mm512_or_si512(u, _mm512_slli_epi64(_mm512_and_si512(_mm512_srlv_epi64(qh, hs), one), 4));
        }
        *a = dot64(u, xq->q + 256 * k + 64 * c, pair_lanes(sc, c), *a);
    }
}

TVNNI static void q45_k_vnni(float *out, const uint8_t *w, const Xq *xq, int n, int d, int five) {
    int bb = five ? 176 : 144;
    size_t rb = (size_t)d / 256 * bb, ahead = q_ahead();
    for (int i = 0; i < n; i += 2) {
        int two = i + 1 < n;
        const uint8_t *r0 = w + (size_t)i * rb, *r1 = two ? r0 + rb : r0;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        __m256 o0 = _mm256_setzero_ps(), o1 = o0;
        for (int k = 0; k < d / 256; k++) {
            mv_prefetch_at(r0 + (size_t)bb * k, ahead, 3), mv_prefetch_at(r1 + (size_t)bb * k, ahead, 3);
            q45_k_blk(r0 + (size_t)bb * k, xq, k, five, &a0, &o0);
            q45_k_blk(r1 + (size_t)bb * k, xq, k, five, &a1, &o1);
        }
        out[i] = hsum_vnni(a0, o0);
        if (two) out[i + 1] = hsum_vnni(a1, o1);
    }
}

/* A Q6_K block of one row: 16 groups of 16, each group's int8 scale times
 * d and its x block's dx as a lane vector; a 64-byte dot covers four
 * groups (lanes 4g..4g+3 group g), the −32 offset through dx·Σqx per 16. */
TVNNI static inline void q6_k_blk(const uint8_t *b, const Xq *xq, int k, __m512 *a, __m512 *off) {
    const __m512i dup = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    __m512 dx16 = _mm512_permutexvar_ps(dup, _mm512_castps256_ps512(_mm256_loadu_ps(xq->dx + 8 * k)));
    __m512 ds = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss((unsigned short)(b[208] | b[209] << 8))),
                              _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 192)))));
    *off = _mm512_fmadd_ps(_mm512_mul_ps(ds, _mm512_set1_ps(32)), _mm512_loadu_ps(xq->s16 + 16 * k), *off);
    __m512 gs = _mm512_mul_ps(ds, dx16);
    const __m512i m4 = _mm512_set1_epi8(15), m2 = _mm512_set1_epi8(3);
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = b + 64 * h;
        __m512i l = _mm512_loadu_si512(ql); /* quarters 0 and 1 low nibbles; >>4 quarters 2 and 3 */
        __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 128 + 32 * h)));
        for (int p = 0; p < 2; p++) { /* quarters 2p and 2p+1 */
            __m512i lo = _mm512_and_si512(p ? _mm512_srli_epi64(l, 4) : l, m4);
            __m512i hs = _mm512_add_epi64(_mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0), _mm512_set1_epi64(4 * p));
            __m512i u = _mm512_or_si512(lo, _mm512_slli_epi64(_mm512_and_si512(_mm512_srlv_epi64(qh, hs), m2), 4));
            int g0 = 8 * h + 4 * p;
            __m512i idx = _mm512_add_epi32(_mm512_srli_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 2),
                                           _mm512_set1_epi32(g0));
            *a = dot64(u, xq->q + 256 * k + 128 * h + 64 * p, _mm512_permutexvar_ps(idx, gs), *a);
        }
    }
}

TVNNI static void q6_k_vnni(float *out, const uint8_t *w, const Xq *xq, int n, int d) {
    size_t rb = (size_t)d / 256 * 210, ahead = q_ahead();
    for (int i = 0; i < n; i += 2) {
        int two = i + 1 < n;
        const uint8_t *r0 = w + (size_t)i * rb, *r1 = two ? r0 + rb : r0;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, o0 = a0, o1 = a0;
        for (int k = 0; k < d / 256; k++) {
            mv_prefetch_at(r0 + 210 * (size_t)k, ahead, 4), mv_prefetch_at(r1 + 210 * (size_t)k, ahead, 4);
            q6_k_blk(r0 + 210 * (size_t)k, xq, k, &a0, &o0);
            q6_k_blk(r1 + 210 * (size_t)k, xq, k, &a1, &o1);
        }
        out[i] = _mm512_reduce_add_ps(_mm512_sub_ps(a0, o0));
        if (two) out[i + 1] = _mm512_reduce_add_ps(_mm512_sub_ps(a1, o1));
    }
}

static int int8_mode = -1; /* mv_q_set_int8; -1 until AHASCOPE_QDOT or a call sets it */

void mv_q_set_int8(int on) { __atomic_store_n(&int8_mode, on != 0, __ATOMIC_RELAXED); }

int mv_q_int8_available(int t) {
    __builtin_cpu_init();
    return (t == GGML_Q8_0 || t == GGML_Q4_K || t == GGML_Q5_K || t == GGML_Q6_K) &&
           __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") && mv_cpu_f16c();
}

/* The mode in force: AHASCOPE_QDOT=exact or int8 until mv_q_set_int8 says. */
int mv_q_int8(void) {
    int m = __atomic_load_n(&int8_mode, __ATOMIC_RELAXED);
    if (m >= 0) return m;
    const char *v = getenv("AHASCOPE_QDOT");
    m = v && !strcmp(v, "exact") ? 0 : v && !strcmp(v, "int8") ? 1 : MVQ_INT8_DEFAULT;
    __atomic_store_n(&int8_mode, m, __ATOMIC_RELAXED);
    return m;
}

static void q_vnni(float *out, GgmlType t, const uint8_t *w, const Xq *xq, int n, int d) {
    if (t == GGML_Q8_0) q8_0_vnni(out, w, xq, n, d);
    else if (t == GGML_Q6_K) q6_k_vnni(out, w, xq, n, d);
    else q45_k_vnni(out, w, xq, n, d, t == GGML_Q5_K);
}

/* Whether the integer path is in force for rows of d weights of type t. */
static int q_int8_takes(GgmlType t, int d) { return mv_q_int8() && d <= MVQ_MAX_D && d % 32 == 0 && mv_q_int8_available(t); }

/* The integer kernel when asked for and present; 0 if it did not run. */
static int q_int8(float *out, GgmlType t, const uint8_t *w, const float *x, int n, int d) {
    if (!q_int8_takes(t, d)) return 0;
    Xq *xq = malloc(sizeof *xq); /* per call: each pool worker rounds x itself (a _Thread_local buffer read back zeros under gcc 12 -O2 here; not investigated) */
    if (!xq) return 0;
    xq_fill(xq, x, d);
    q_vnni(out, t, w, xq, n, d);
    free(xq);
    return 1;
}

struct MvqX {
    Xq xq;
    int d; /* the values rounded, 0: none */
};

MvqX *mv_q_x_new(void) { return calloc(1, sizeof(MvqX)); }

void mv_q_x_free(MvqX *xq) { free(xq); }

int mv_q_x_round(MvqX *xq, const float *x, int d) {
    xq->d = 0;
    if (!q_int8_takes(GGML_Q8_0, d)) return 0; /* every integer type has the same CPU and length tests */
    xq_fill(&xq->xq, x, d);
    xq->d = d;
    return 1;
}

int mv_q_rounded(float *out, int t, const void *w, const MvqX *xq, int n, int d) {
    if (!xq || xq->d != d || !q_int8_takes((GgmlType)t, d)) return 0;
    q_vnni(out, (GgmlType)t, w, &xq->xq, n, d);
    return 1;
}

void mv_q_quantise_x(int8_t *q, float *dx, int32_t *sum, const float *x, int d) {
    if (d > MVQ_MAX_D || !mv_q_int8_available(GGML_Q8_0)) {
        xq_scalar(q, dx, sum, x, d);
        return;
    }
    Xq *xq = malloc(sizeof *xq);
    if (!xq) {
        xq_scalar(q, dx, sum, x, d);
        return;
    }
    xq_fill(xq, x, d);
    memcpy(q, xq->q, (size_t)d / 32 * 32), memcpy(dx, xq->dx, (size_t)d / 32 * sizeof *dx);
    memcpy(sum, xq->sum, (size_t)d / 32 * sizeof *sum);
    free(xq);
}

/* ---- dispatch ---- */

static void q_kernel(MvIsa isa, float *out, GgmlType t, const uint8_t *w, const float *x, int n, int d) {
    if (isa == MV_AVX512 && t == GGML_Q8_0) q8_0_avx512(out, w, x, n, d);
    else if (isa == MV_AVX512 && t == GGML_Q4_0) q4_0_avx512(out, w, x, n, d);
    else if (isa == MV_AVX512 && (t == GGML_Q4_K || t == GGML_Q5_K)) q45_k_avx512(out, w, x, n, d, t == GGML_Q5_K);
    else if (isa == MV_AVX512 && t == GGML_Q6_K) q6_k_avx512(out, w, x, n, d);
    else if (isa == MV_AVX512) qk_avx512(out, t, w, x, n, d);
    else if (isa == MV_AVX2 && t == GGML_Q8_0) q8_0_avx2(out, w, x, n, d);
    else if (isa == MV_AVX2 && t == GGML_Q4_0) q4_0_avx2(out, w, x, n, d);
    else if (isa == MV_AVX2 && (t == GGML_Q4_K || t == GGML_Q5_K)) q45_k_avx2(out, w, x, n, d, t == GGML_Q5_K);
    else if (isa == MV_AVX2 && t == GGML_Q6_K) q6_k_avx2(out, w, x, n, d);
    else if (isa == MV_AVX2) qk_avx2(out, t, w, x, n, d);
    else q_portable(out, t, w, x, n, d);
}

/* AVX-512 here also wants BW (byte widening on 512 bits), both F16C. */
static MvIsa q_isa(MvIsa want) {
    MvIsa have = mv_isa(); /* (initialises the CPU model) */
    int bw = __builtin_cpu_supports("avx512bw"), f16c = mv_cpu_f16c();
    if (want > have) want = have;
    if (want == MV_AVX512 && !bw) want = MV_AVX2;
    if (want == MV_AVX2 && !f16c) want = MV_PORTABLE;
    return want;
}

void mv_q_isa(MvIsa isa, float *out, int t, const void *w, const float *x, int n, int d) {
    if (!mv_q_supported(t)) return;
    q_kernel(q_isa(isa), out, (GgmlType)t, w, x, n, d);
}

void mv_q(float *out, int t, const void *w, const float *x, int n, int d) {
    if (mv_q_supported(t) && q_int8(out, (GgmlType)t, w, x, n, d)) return;
    mv_q_isa(MV_AVX512, out, t, w, x, n, d);
}
