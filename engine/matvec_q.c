/* matvec_q.c — the decode kernels over ggml's quantised blocks read in place (AVX-512, AVX2, portable C).
 *
 * Every weight is made in f32 exactly as quant_dequant makes it (sc·q is
 * exact, so a fused sc·q − mn rounds as the separate subtraction does), so
 * each kernel computes the widened row's products and differs from another
 * only in the order it sums them. */
#include "matvec.h"

#include <cpuid.h>
#include <immintrin.h>
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

/* ---- dispatch ---- */

static void q_kernel(MvIsa isa, float *out, GgmlType t, const uint8_t *w, const float *x, int n, int d) {
    if (isa == MV_AVX512 && t == GGML_Q8_0) q8_0_avx512(out, w, x, n, d);
    else if (isa == MV_AVX512 && t == GGML_Q4_0) q4_0_avx512(out, w, x, n, d);
    else if (isa == MV_AVX512) qk_avx512(out, t, w, x, n, d);
    else if (isa == MV_AVX2 && t == GGML_Q8_0) q8_0_avx2(out, w, x, n, d);
    else if (isa == MV_AVX2 && t == GGML_Q4_0) q4_0_avx2(out, w, x, n, d);
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

void mv_q(float *out, int t, const void *w, const float *x, int n, int d) { mv_q_isa(MV_AVX512, out, t, w, x, n, d); }
