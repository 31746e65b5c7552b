/* attn_kernels.c — attention's inner loops: scores, and softmax weights folded into the value sum. */
#include "attn_kernels.h"

#include <immintrin.h>
#include <math.h>
#include <stddef.h>

#include "half.h"
#include "matvec.h"
#include "model.h"
#include "simd.h"

#define AVX512 __attribute__((target("avx512f")))
#define INLINE static inline __attribute__((always_inline))

/* ---- portable paths (and head sizes the vector paths do not take) ---- */

static float kv_elem(const void *p, size_t i, int dt) {
    if (dt == DT_BF16) return half_bf16_to_f32(((const uint16_t *)p)[i]);
    if (dt == DT_F16) return half_f16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static float scores_portable(float *s, const float *q, const void *k, int dt, int stride, int hs, int n, float scale) {
    float m = -INFINITY;
    for (int i = 0; i < n; i++) {
        float acc = 0;
        for (int j = 0; j < hs; j++) acc += q[j] * kv_elem(k, (size_t)i * stride + j, dt);
        s[i] = acc * scale;
        if (s[i] > m) m = s[i];
    }
    return m;
}

static double softmax_wsum_portable(float *acc, const float *s, float m, const void *v, int dt, int stride, int hs,
                                    int n) {
    double z = 0;
    for (int i = 0; i < n; i++) {
        float e = expf(s[i] - m);
        z += e;
        for (int j = 0; j < hs; j++) acc[j] += e * kv_elem(v, (size_t)i * stride + j, dt);
    }
    return z;
}

/* ---- AVX-512 ---- */

/* exp of 16 floats: x = n·ln2 + r with |r| ≤ ln2/2 (ln2 split in two so
 * n·ln2_hi is exact), e^r by its Taylor series to r⁷ (truncation below
 * 1e-8 relative), then scaled by 2ⁿ. The clamps keep n finite; NaN passes
 * through both (max/min return their second operand when one is NaN). */
AVX512 INLINE __m512 exp16(__m512 x) {
    x = _mm512_min_ps(_mm512_set1_ps(88.8f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    static const float c[] = {1 / 5040.0f, 1 / 720.0f, 1 / 120.0f, 1 / 24.0f, 1 / 6.0f, 0.5f, 1.0f, 1.0f};
    __m512 p = _mm512_set1_ps(c[0]);
    for (int i = 1; i < 8; i++) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c[i]));
    return _mm512_scalef_ps(p, n);
}

/* Lane sums of 16 vectors at once: r[i] = Σ v[i]. Each round adds pairs of
 * vectors after interleaving them, halving the vector count and doubling
 * the keys each vector carries: 15 adds for 16 keys, not 64. */
AVX512 INLINE __m512 hsum16(const __m512 v[16]) {
    __m512 w[8], u[4];
    for (int k = 0; k < 8; k++) /* per 128-bit lane: x0+x2 y0+y2 x1+x3 y1+y3 */
        w[k] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * k], v[2 * k + 1]), _mm512_unpackhi_ps(v[2 * k], v[2 * k + 1]));
    for (int k = 0; k < 4; k++) /* per lane: one partial sum for each of 4 keys */
        u[k] = _mm512_add_ps(_mm512_shuffle_ps(w[2 * k], w[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(w[2 * k], w[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    __m512 c0 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_f32x4(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1)));
    __m512 c1 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_f32x4(u[2], u[3], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_add_ps(_mm512_shuffle_f32x4(c0, c1, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(c0, c1, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* 16 cached elements from element index i, widened; dt is a literal at
 * every call, so the branches fold away. */
AVX512 INLINE __m512 kv_load16(const void *p, size_t i, const int dt) {
    if (dt == DT_BF16) return ld16_bf16((const uint16_t *)p + i);
    if (dt == DT_F16) return ld16_f16((const uint16_t *)p + i);
    return _mm512_loadu_ps((const float *)p + i);
}

static __mmask16 first_lanes(int cnt) { return (__mmask16)(cnt >= 16 ? 0xFFFF : (1u << cnt) - 1); }

/* nq = head_size / 16 vectors per key and dt the cache's type: literals at
 * the call sites below, so the loops over nq unroll. */
AVX512 INLINE float scores_nq(float *s, const float *q, const void *k, int stride, int n, float scale, const int nq,
                              const int dt) {
    __m512 qv[16], mx = _mm512_set1_ps(-INFINITY), sc = _mm512_set1_ps(scale);
    const int esz = dt == DT_F32 ? 4 : 2, lines = nq * esz / 4 > 0 ? nq * esz / 4 : 1;
    size_t ahead = (size_t)MV_AHEAD_ROWS * stride * esz;
    for (int j = 0; j < nq; j++) qv[j] = _mm512_loadu_ps(q + 16 * j);
    for (int i = 0; i < n; i += 16) {
        int cnt = n - i < 16 ? n - i : 16;
        __m512 a[16];
#pragma GCC unroll 16
        for (int u = 0; u < 16; u++) {
            a[u] = _mm512_setzero_ps();
            if (u >= cnt) continue;
            size_t row = (size_t)(i + u) * stride;
            mv_prefetch_at((const char *)k + row * esz, ahead, lines);
            for (int j = 0; j < nq; j++) a[u] = _mm512_fmadd_ps(kv_load16(k, row + 16 * j, dt), qv[j], a[u]);
        }
        __mmask16 lanes = first_lanes(cnt);
        __m512 r = _mm512_mul_ps(hsum16(a), sc);
        _mm512_mask_storeu_ps(s + i, lanes, r);
        mx = _mm512_mask_max_ps(mx, lanes, mx, r);
    }
    return _mm512_reduce_max_ps(mx);
}

#define BY_NQ(F, DT, ...) \
    (nq == 4 ? F(__VA_ARGS__, 4, DT) : nq == 8 ? F(__VA_ARGS__, 8, DT) : F(__VA_ARGS__, nq, DT))

AVX512 static float scores_avx512(float *s, const float *q, const void *k, int dt, int stride, int hs, int n,
                                  float scale) {
    int nq = hs / 16;
    if (dt == DT_BF16) return BY_NQ(scores_nq, DT_BF16, s, q, k, stride, n, scale);
    if (dt == DT_F16) return BY_NQ(scores_nq, DT_F16, s, q, k, stride, n, scale);
    return BY_NQ(scores_nq, DT_F32, s, q, k, stride, n, scale);
}

AVX512 INLINE double softmax_wsum_nq(float *acc, const float *s, float m, const void *v, int stride, int n,
                                     const int nq, const int dt) {
    __m512 a[16], z = _mm512_setzero_ps(), mv = _mm512_set1_ps(m);
    float e[16] __attribute__((aligned(64)));
    const int esz = dt == DT_F32 ? 4 : 2, lines = nq * esz / 4 > 0 ? nq * esz / 4 : 1;
    size_t ahead = (size_t)MV_AHEAD_ROWS * stride * esz;
    for (int j = 0; j < nq; j++) a[j] = _mm512_loadu_ps(acc + 16 * j);
    for (int i = 0; i < n; i += 16) {
        int cnt = n - i < 16 ? n - i : 16;
        __mmask16 lanes = first_lanes(cnt);
        __m512 ev = _mm512_maskz_mov_ps(lanes, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, s + i), mv)));
        z = _mm512_add_ps(z, ev);
        _mm512_store_ps(e, ev);
        for (int u = 0; u < cnt; u++) {
            size_t row = (size_t)(i + u) * stride;
            mv_prefetch_at((const char *)v + row * esz, ahead, lines);
            __m512 w = _mm512_set1_ps(e[u]);
            for (int j = 0; j < nq; j++) a[j] = _mm512_fmadd_ps(w, kv_load16(v, row + 16 * j, dt), a[j]);
        }
    }
    for (int j = 0; j < nq; j++) _mm512_storeu_ps(acc + 16 * j, a[j]);
    return _mm512_reduce_add_ps(z);
}

AVX512 static double softmax_wsum_avx512(float *acc, const float *s, float m, const void *v, int dt, int stride, int hs,
                                         int n) {
    int nq = hs / 16;
    if (dt == DT_BF16) return BY_NQ(softmax_wsum_nq, DT_BF16, acc, s, m, v, stride, n);
    if (dt == DT_F16) return BY_NQ(softmax_wsum_nq, DT_F16, acc, s, m, v, stride, n);
    return BY_NQ(softmax_wsum_nq, DT_F32, acc, s, m, v, stride, n);
}

AVX512 static void exp_avx512(float *y, const float *x, int n) {
    for (int i = 0; i < n; i += 16) {
        __mmask16 lanes = first_lanes(n - i);
        _mm512_mask_storeu_ps(y + i, lanes, exp16(_mm512_maskz_loadu_ps(lanes, x + i)));
    }
}

/* ---- AVX2 (with FMA and F16C): eight lanes, the same shapes ---- */

#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* exp of 8 floats as exp16 computes it; 2ⁿ is built in the exponent bits,
 * so x is clamped to [-87.33, 88] (n stays a normal exponent) and below
 * -87.33 the result is 0 (exp16 gives subnormals there: below 1.2e-38,
 * nothing a softmax sum of at least 1 can tell apart). */
AVX2 INLINE __m256 exp8(__m256 x) {
    __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33f), _CMP_LT_OQ);
    x = _mm256_min_ps(_mm256_set1_ps(88.0f), _mm256_max_ps(_mm256_set1_ps(-87.33f), x));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    static const float c[] = {1 / 5040.0f, 1 / 720.0f, 1 / 120.0f, 1 / 24.0f, 1 / 6.0f, 0.5f, 1.0f, 1.0f};
    __m256 p = _mm256_set1_ps(c[0]);
    for (int i = 1; i < 8; i++) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c[i]));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

/* r[i] = Σ v[i] for 8 vectors, one fixed tree (a key's sum never depends
 * on its place in the block). */
AVX2 INLINE __m256 hsum8(const __m256 v[8]) {
    __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
    __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

AVX2 INLINE __m256 kv_load8(const void *p, size_t i, const int dt) {
    if (dt == DT_BF16)
        return _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i))), 16));
    if (dt == DT_F16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
    return _mm256_loadu_ps((const float *)p + i);
}

AVX2 INLINE float scores8_dt(float *s, const float *q, const void *k, int stride, int n, float scale, int hs,
                             const int dt) {
    const int esz = dt == DT_F32 ? 4 : 2, lines = hs * esz / 64 > 0 ? hs * esz / 64 : 1;
    size_t ahead = (size_t)MV_AHEAD_ROWS * stride * esz;
    float mx = -INFINITY, r[8];
    for (int i = 0; i < n; i += 8) {
        int cnt = n - i < 8 ? n - i : 8;
        __m256 a[8];
        for (int u = 0; u < 8; u++) {
            a[u] = _mm256_setzero_ps();
            if (u >= cnt) continue;
            size_t row = (size_t)(i + u) * stride;
            mv_prefetch_at((const char *)k + row * esz, ahead, lines);
            for (int j = 0; j < hs; j += 8) a[u] = _mm256_fmadd_ps(kv_load8(k, row + j, dt), _mm256_loadu_ps(q + j), a[u]);
        }
        _mm256_storeu_ps(r, _mm256_mul_ps(hsum8(a), _mm256_set1_ps(scale)));
        for (int u = 0; u < cnt; u++) s[i + u] = r[u], mx = r[u] > mx ? r[u] : mx;
    }
    return mx;
}

AVX2 static float scores_avx2(float *s, const float *q, const void *k, int dt, int stride, int hs, int n, float scale) {
    if (dt == DT_BF16) return scores8_dt(s, q, k, stride, n, scale, hs, DT_BF16);
    if (dt == DT_F16) return scores8_dt(s, q, k, stride, n, scale, hs, DT_F16);
    return scores8_dt(s, q, k, stride, n, scale, hs, DT_F32);
}

/* nv = head_size / 8 accumulators, a literal where it is 8 or 16. */
AVX2 INLINE double wsum8_nv(float *acc, const float *s, float m, const void *v, int stride, int n, const int nv,
                            const int dt) {
    __m256 a[32], z = _mm256_setzero_ps();
    float e[8] __attribute__((aligned(32)));
    const int esz = dt == DT_F32 ? 4 : 2, lines = nv * 8 * esz / 64 > 0 ? nv * 8 * esz / 64 : 1;
    size_t ahead = (size_t)MV_AHEAD_ROWS * stride * esz;
    for (int j = 0; j < nv; j++) a[j] = _mm256_loadu_ps(acc + 8 * j);
    for (int i = 0; i < n; i += 8) {
        int cnt = n - i < 8 ? n - i : 8;
        float in[8] = {0};
        for (int u = 0; u < cnt; u++) in[u] = s[i + u] - m;
        __m256 ev = exp8(_mm256_loadu_ps(in));
        if (cnt < 8) ev = _mm256_and_ps(ev, _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(cnt),
                                                                                    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))));
        z = _mm256_add_ps(z, ev);
        _mm256_store_ps(e, ev);
        for (int u = 0; u < cnt; u++) {
            size_t row = (size_t)(i + u) * stride;
            mv_prefetch_at((const char *)v + row * esz, ahead, lines);
            __m256 w = _mm256_set1_ps(e[u]);
            for (int j = 0; j < nv; j++) a[j] = _mm256_fmadd_ps(w, kv_load8(v, row + 8 * j, dt), a[j]);
        }
    }
    for (int j = 0; j < nv; j++) _mm256_storeu_ps(acc + 8 * j, a[j]);
    _mm256_store_ps(e, z);
    return (double)e[0] + e[1] + e[2] + e[3] + e[4] + e[5] + e[6] + e[7];
}

#define BY_NV(F, DT, ...) \
    (nv == 8 ? F(__VA_ARGS__, 8, DT) : nv == 16 ? F(__VA_ARGS__, 16, DT) : F(__VA_ARGS__, nv, DT))

AVX2 static double softmax_wsum_avx2(float *acc, const float *s, float m, const void *v, int dt, int stride, int hs,
                                     int n) {
    int nv = hs / 8;
    if (dt == DT_BF16) return BY_NV(wsum8_nv, DT_BF16, acc, s, m, v, stride, n);
    if (dt == DT_F16) return BY_NV(wsum8_nv, DT_F16, acc, s, m, v, stride, n);
    return BY_NV(wsum8_nv, DT_F32, acc, s, m, v, stride, n);
}

/* ---- dispatch ---- */

/* 2 AVX-512, 1 AVX2 with FMA and F16C, 0 portable (or a head size the vector paths do not take). */
static int vector_path(int hs) {
    if (hs <= 0 || hs > 256) return 0;
    if (hs % 16 == 0 && mv_cpu_avx512()) return 2;
    return hs % 8 == 0 && mv_isa() >= MV_AVX2 && mv_cpu_f16c();
}

const char *attn_kernels_name(int head_size) {
    static const char *const names[] = {"portable", "avx2", "avx512"};
    return names[vector_path(head_size)];
}

float attn_scores(float *s, const float *q, const void *k, int dt, int stride, int hs, int n, float scale) {
    if (n <= 0) return -INFINITY;
    int p = vector_path(hs);
    return p == 2 ? scores_avx512(s, q, k, dt, stride, hs, n, scale)
           : p    ? scores_avx2(s, q, k, dt, stride, hs, n, scale)
                  : scores_portable(s, q, k, dt, stride, hs, n, scale);
}

double attn_softmax_wsum(float *acc, const float *s, float m, const void *v, int dt, int stride, int hs, int n) {
    if (n <= 0) return 0;
    int p = vector_path(hs);
    return p == 2 ? softmax_wsum_avx512(acc, s, m, v, dt, stride, hs, n)
           : p    ? softmax_wsum_avx2(acc, s, m, v, dt, stride, hs, n)
                  : softmax_wsum_portable(acc, s, m, v, dt, stride, hs, n);
}

void attn_exp(float *y, const float *x, int n) {
    if (n <= 0) return;
    if (mv_cpu_avx512()) { exp_avx512(y, x, n); return; }
    for (int i = 0; i < n; i++) y[i] = expf(x[i]);
}
