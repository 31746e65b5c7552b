/* matvec_q.c — the decode kernels over ggml's quantised blocks read in place (AVX-512, AVX2, portable C).
 *
 * Every weight is made in f32 exactly as quant_dequant makes it (sc·q is
 * exact, so a fused sc·q − mn rounds as the separate subtraction does), so
 * each kernel computes the widened row's products and differs from another
 * only in the order it sums them. */
#include "matvec.h"

#include <cpuid.h>
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

/* ---- the integer path (AVX-512 VNNI), asked for by mv_q_set_int8 ----
 * x is rounded to 8 bits per 32 values (dx = max|x|/127, ggml's Q8_0
 * rounding of activations), so each 32-weight sub-block's dot is one
 * dpbusd of unsigned weight bytes against signed x bytes: Σ (sc·q − mn)·x
 * ≈ sc·dx·Σ q·qx − mn·dx·Σ qx. Q8_0's signed weights go in as w + 128
 * (w ^ 0x80), taking 128·Σ qx back out. */

#define MVQ_MAX_D 65536

typedef struct {
    int8_t q[MVQ_MAX_D];
    float dx[MVQ_MAX_D / 32];
    int32_t sum[MVQ_MAX_D / 32];
} Xq;

static void x_quantise(Xq *xq, const float *x, int d) {
    for (int b = 0; b < d / 32; b++) {
        float amax = 0;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[32 * b + j]));
        float dx = amax / 127, id = dx > 0 ? 1 / dx : 0;
        int32_t s = 0;
        for (int j = 0; j < 32; j++) s += xq->q[32 * b + j] = (int8_t)lrintf(x[32 * b + j] * id);
        xq->dx[b] = dx, xq->sum[b] = s;
    }
}

#define TVNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")))

/* 8 lanes of Σ u·qx over 32 bytes, as floats. */
TVNNI static inline __m256 dot32(__m256i u, const int8_t *qx) {
    return _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, _mm256_loadu_si256((const __m256i *)qx)));
}

TVNNI static void q8_0_vnni(float *out, const uint8_t *w, const Xq *xq, int n, int d) {
    size_t rb = (size_t)d / 32 * 34;
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m256 a = _mm256_setzero_ps();
        float off = 0;
        for (int k = 0; k < d / 32; k++) {
            const uint8_t *b = r + (size_t)k * 34;
            mv_prefetch(b, 1);
            float s = _cvtsh_ss((unsigned short)(b[0] | b[1] << 8)) * xq->dx[k];
            __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(b + 2)), flip);
            a = _mm256_fmadd_ps(dot32(u, xq->q + 32 * k), _mm256_set1_ps(s), a);
            off += s * (float)(128 * xq->sum[k]);
        }
        out[i] = hsum8(a) - off;
    }
}

TVNNI static void q4_k_vnni(float *out, const uint8_t *w, const Xq *xq, int n, int d) {
    size_t rb = (size_t)d / 256 * 144;
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int i = 0; i < n; i++) {
        const uint8_t *r = w + (size_t)i * rb;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        float off = 0;
        for (int k = 0; k < d / 256; k++) {
            const uint8_t *b = r + (size_t)k * 144;
            mv_prefetch(b, 3);
            float sc[8], mn[8];
            k_scales(b + 4, _cvtsh_ss((unsigned short)(b[0] | b[1] << 8)), _cvtsh_ss((unsigned short)(b[2] | b[3] << 8)), sc, mn);
            for (int c = 0; c < 4; c++) {
                __m256i q = _mm256_loadu_si256((const __m256i *)(b + 16 + 32 * c));
                int s0 = 8 * k + 2 * c, s1 = s0 + 1; /* x's 32-blocks are the sub-blocks */
                a0 = _mm256_fmadd_ps(dot32(_mm256_and_si256(q, m4), xq->q + 32 * s0), _mm256_set1_ps(sc[2 * c] * xq->dx[s0]), a0);
                a1 = _mm256_fmadd_ps(dot32(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), xq->q + 32 * s1),
                                     _mm256_set1_ps(sc[2 * c + 1] * xq->dx[s1]), a1);
                off += mn[2 * c] * xq->dx[s0] * (float)xq->sum[s0] + mn[2 * c + 1] * xq->dx[s1] * (float)xq->sum[s1];
            }
        }
        out[i] = hsum8(_mm256_add_ps(a0, a1)) - off;
    }
}

static int int8_mode; /* mv_q_set_int8 */

void mv_q_set_int8(int on) { __atomic_store_n(&int8_mode, on != 0, __ATOMIC_RELAXED); }

int mv_q_int8_available(int t) {
    __builtin_cpu_init();
    return (t == GGML_Q8_0 || t == GGML_Q4_K) && __builtin_cpu_supports("avx512vnni") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
}

/* The integer kernel when asked for and present; 0 if it did not run. */
static int q_int8(float *out, GgmlType t, const uint8_t *w, const float *x, int n, int d) {
    if (!__atomic_load_n(&int8_mode, __ATOMIC_RELAXED) || d > MVQ_MAX_D || !mv_q_int8_available(t)) return 0;
    Xq *xq = malloc(sizeof *xq);
    if (!xq) return 0;
    x_quantise(xq, x, d);
    if (t == GGML_Q8_0) q8_0_vnni(out, w, xq, n, d);
    else q4_k_vnni(out, w, xq, n, d);
    free(xq);
    return 1;
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

/* F16C through cpuid (clang's __builtin_cpu_supports does not know it). */
static int cpu_f16c(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}

/* AVX-512 here also wants BW (byte widening on 512 bits), both F16C. */
static MvIsa q_isa(MvIsa want) {
    MvIsa have = mv_isa(); /* (initialises the CPU model) */
    int bw = __builtin_cpu_supports("avx512bw"), f16c = cpu_f16c();
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
