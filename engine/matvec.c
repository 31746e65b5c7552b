#include "matvec.h"

#include <immintrin.h>
#include <stdint.h>

#include "safetensors.h"

/* Software prefetch for the weight stream. Out of cache, the hardware
 * prefetchers alone let a core pull bf16 rows at only ~70% of the rate it
 * pulls f32 rows: twice the instructions per cache line leave fewer lines
 * in flight. Asking for the line 4 KiB ahead, into L2 (T1: it spends L2's
 * miss slots, not L1's fill buffers), closes the gap: an out-of-cache
 * matvec on 2 threads went from 8.5 to 11 G bf16 weights/s, f32 gained ~5%,
 * and 2 KiB ahead or T0 did worse. In-cache speed is unchanged. The address
 * is formed as an integer: it may lie past the matrix, which a prefetch
 * never faults on, but pointer arithmetic may not. */
#define MV_PREFETCH 4096

static inline void mv_prefetch_at(const void *p, size_t ahead, int lines) {
    for (int l = 0; l < lines; l++) _mm_prefetch((const char *)((uintptr_t)p + ahead + 64 * l), _MM_HINT_T1);
}

static inline void mv_prefetch(const void *p, int lines) { mv_prefetch_at(p, MV_PREFETCH, lines); }

/* Attention asks for the key or value this many positions ahead: ~5 cycles
 * a key means 8 ahead would arrive too late for a DRAM miss. */
#define MV_AHEAD_ROWS 32

/* Σ x[0..n): the bandwidth probe a decode step's roofline divides by. It
 * prefetches as the kernels do, so it measures the best the machine gives a
 * read stream (without, f32 decode streamed faster than it measured). */
__attribute__((target_clones("avx512f", "avx2", "default"))) float mv_stream_sum(const float *x, size_t n) {
    float acc[32] = {0};
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        mv_prefetch(x + i, 2);
        for (int j = 0; j < 32; j++) acc[j] += x[i + j];
    }
    float s = 0;
    for (; i < n; i++) s += x[i];
    for (int j = 0; j < 32; j++) s += acc[j];
    return s;
}

static void mv_portable(float *out, const float *w, const float *x, int n, int d) {
    for (int i = 0; i < n; i++) {
        const float *r = w + (long)i * d;
        float acc[8] = {0};
        int j = 0;
        for (; j + 8 <= d; j += 8)
            for (int k = 0; k < 8; k++) acc[k] += r[j + k] * x[j + k];
        float s = 0;
        for (; j < d; j++) s += r[j] * x[j];
        for (int k = 0; k < 8; k++) s += acc[k];
        out[i] = s;
    }
}

__attribute__((target("avx2,fma"))) static void mv_avx2(float *out, const float *w, const float *x, int n, int d) {
    for (int i = 0; i < n; i++) {
        const float *r = w + (long)i * d;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        int j = 0;
        for (; j + 32 <= d; j += 32) {
            mv_prefetch(r + j, 2);
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(x + j), a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 8), _mm256_loadu_ps(x + j + 8), a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 16), _mm256_loadu_ps(x + j + 16), a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 24), _mm256_loadu_ps(x + j + 24), a3);
        }
        __m256 a = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
        __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        h = _mm_add_ps(h, _mm_movehl_ps(h, h));
        h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
        float s = _mm_cvtss_f32(h);
        for (; j < d; j++) s += r[j] * x[j];
        out[i] = s;
    }
}

__attribute__((target("avx512f"))) static void mv_avx512(float *out, const float *w, const float *x, int n, int d) {
    for (int i = 0; i < n; i++) {
        const float *r = w + (long)i * d;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        int j = 0;
        for (; j + 64 <= d; j += 64) {
            mv_prefetch(r + j, 4);
            a0 = _mm512_fmadd_ps(_mm512_loadu_ps(r + j), _mm512_loadu_ps(x + j), a0);
            a1 = _mm512_fmadd_ps(_mm512_loadu_ps(r + j + 16), _mm512_loadu_ps(x + j + 16), a1);
            a2 = _mm512_fmadd_ps(_mm512_loadu_ps(r + j + 32), _mm512_loadu_ps(x + j + 32), a2);
            a3 = _mm512_fmadd_ps(_mm512_loadu_ps(r + j + 48), _mm512_loadu_ps(x + j + 48), a3);
        }
        for (; j + 16 <= d; j += 16) a0 = _mm512_fmadd_ps(_mm512_loadu_ps(r + j), _mm512_loadu_ps(x + j), a0);
        float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
        for (; j < d; j++) s += r[j] * x[j];
        out[i] = s;
    }
}

/* ---- half-precision weights: each row is widened to f32 in registers, so
 * activations stay f32 and the products are exact; a decode step is bound
 * by the bytes it streams, and these read half as many as mv_f32. (AVX-512
 * BF16's dot instruction would round x to bf16 too: faster on paper, but
 * the loads, not the arithmetic, are the limit here.) */

static float bf16f(uint16_t h) { return st_bf16_to_f32(h); }

static void mv_half_portable(float *out, const uint16_t *w, const float *x, int n, int d, int bf16) {
    for (int i = 0; i < n; i++) {
        const uint16_t *r = w + (long)i * d;
        float acc[8] = {0}, s = 0;
        int j = 0;
        for (; j + 8 <= d; j += 8)
            for (int k = 0; k < 8; k++) acc[k] += (bf16 ? bf16f(r[j + k]) : st_f16_to_f32(r[j + k])) * x[j + k];
        for (; j < d; j++) s += (bf16 ? bf16f(r[j]) : st_f16_to_f32(r[j])) * x[j];
        for (int k = 0; k < 8; k++) s += acc[k];
        out[i] = s;
    }
}

__attribute__((target("avx512f"))) static inline __m512 ld16_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}

__attribute__((target("avx512f"))) static inline __m512 ld16_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

#define MV_HALF_AVX512(NAME, LOAD)                                                                        \
    __attribute__((target("avx512f"))) static void NAME(float *out, const uint16_t *w, const float *x, int n, int d) { \
        for (int i = 0; i < n; i++) {                                                                     \
            const uint16_t *r = w + (long)i * d;                                                          \
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                   \
            int j = 0;                                                                                    \
            for (; j + 64 <= d; j += 64) {                                                                \
                mv_prefetch(r + j, 2);                                                                    \
                a0 = _mm512_fmadd_ps(LOAD(r + j), _mm512_loadu_ps(x + j), a0);                            \
                a1 = _mm512_fmadd_ps(LOAD(r + j + 16), _mm512_loadu_ps(x + j + 16), a1);                  \
                a2 = _mm512_fmadd_ps(LOAD(r + j + 32), _mm512_loadu_ps(x + j + 32), a2);                  \
                a3 = _mm512_fmadd_ps(LOAD(r + j + 48), _mm512_loadu_ps(x + j + 48), a3);                  \
            }                                                                                             \
            for (; j + 16 <= d; j += 16) a0 = _mm512_fmadd_ps(LOAD(r + j), _mm512_loadu_ps(x + j), a0);   \
            float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));  \
            for (; j < d; j++) s += LOAD##_one(r[j]) * x[j];                                              \
            out[i] = s;                                                                                   \
        }                                                                                                 \
    }

static inline float ld16_bf16_one(uint16_t h) { return st_bf16_to_f32(h); }
static inline float ld16_f16_one(uint16_t h) { return st_f16_to_f32(h); }
MV_HALF_AVX512(mv_bf16_avx512, ld16_bf16)
MV_HALF_AVX512(mv_f16_avx512, ld16_f16)

__attribute__((target("avx2,fma"))) static inline __m256 ld8_bf16(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}

__attribute__((target("avx2,fma,f16c"))) static inline __m256 ld8_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

#define MV_HALF_AVX2(NAME, LOAD, TARGET)                                                                  \
    __attribute__((target(TARGET))) static void NAME(float *out, const uint16_t *w, const float *x, int n, int d) { \
        for (int i = 0; i < n; i++) {                                                                     \
            const uint16_t *r = w + (long)i * d;                                                          \
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                   \
            int j = 0;                                                                                    \
            for (; j + 32 <= d; j += 32) {                                                                \
                mv_prefetch(r + j, 1);                                                                    \
                a0 = _mm256_fmadd_ps(LOAD(r + j), _mm256_loadu_ps(x + j), a0);                            \
                a1 = _mm256_fmadd_ps(LOAD(r + j + 8), _mm256_loadu_ps(x + j + 8), a1);                    \
                a2 = _mm256_fmadd_ps(LOAD(r + j + 16), _mm256_loadu_ps(x + j + 16), a2);                  \
                a3 = _mm256_fmadd_ps(LOAD(r + j + 24), _mm256_loadu_ps(x + j + 24), a3);                  \
            }                                                                                             \
            __m256 a = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));                       \
            __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));                \
            h = _mm_add_ps(h, _mm_movehl_ps(h, h));                                                       \
            h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));                                                   \
            float s = _mm_cvtss_f32(h);                                                                   \
            for (; j < d; j++) s += LOAD##_one(r[j]) * x[j];                                              \
            out[i] = s;                                                                                   \
        }                                                                                                 \
    }

static inline float ld8_bf16_one(uint16_t h) { return st_bf16_to_f32(h); }
static inline float ld8_f16_one(uint16_t h) { return st_f16_to_f32(h); }
MV_HALF_AVX2(mv_bf16_avx2, ld8_bf16, "avx2,fma")
MV_HALF_AVX2(mv_f16_avx2, ld8_f16, "avx2,fma,f16c")

static int cpu_has(int what) {
    __builtin_cpu_init();
    switch (what) {
    case 0: return __builtin_cpu_supports("avx512f");
    case 1: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    }
}

void mv_bf16(float *out, const uint16_t *w, const float *x, int n, int d) {
    if (cpu_has(0)) mv_bf16_avx512(out, w, x, n, d);
    else if (cpu_has(1)) mv_bf16_avx2(out, w, x, n, d);
    else mv_half_portable(out, w, x, n, d, 1);
}

void mv_f16(float *out, const uint16_t *w, const float *x, int n, int d) {
    if (cpu_has(0)) mv_f16_avx512(out, w, x, n, d);
    else if (cpu_has(2)) mv_f16_avx2(out, w, x, n, d);
    else mv_half_portable(out, w, x, n, d, 0);
}

__attribute__((target("avx512f"))) static void widen_avx512(float *out, const uint16_t *in, size_t n, int bf16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, bf16 ? ld16_bf16(in + i) : ld16_f16(in + i));
    for (; i < n; i++) out[i] = bf16 ? st_bf16_to_f32(in[i]) : st_f16_to_f32(in[i]);
}

void mv_widen(float *out, const uint16_t *in, size_t n, int bf16) {
    if (cpu_has(0)) { widen_avx512(out, in, n, bf16); return; }
    for (size_t i = 0; i < n; i++) out[i] = bf16 ? st_bf16_to_f32(in[i]) : st_f16_to_f32(in[i]);
}

static void scores_portable(float *s, const float *q, const float *k, int stride, int hs, int n, float scale) {
    for (int i = 0; i < n; i++) {
        const float *ki = k + (long)i * stride;
        float acc = 0;
        for (int j = 0; j < hs; j++) acc += q[j] * ki[j];
        s[i] = acc * scale;
    }
}

static void wsum_portable(float *acc, const float *w, const float *v, int stride, int hs, int n) {
    for (int i = 0; i < n; i++) {
        const float *vi = v + (long)i * stride;
        for (int j = 0; j < hs; j++) acc[j] += w[i] * vi[j];
    }
}

/* AVX-512 paths for head sizes that are a multiple of 16 (up to 256). */
__attribute__((target("avx512f"))) static void scores_avx512(float *s, const float *q, const float *k, int stride, int hs,
                                                             int n, float scale) {
    for (int i = 0; i < n; i++) {
        const float *ki = k + (long)i * stride;
        /* keys are a strided walk (one head's slice of each cached row),
         * which the hardware prefetchers follow poorly */
        mv_prefetch_at(ki, (size_t)MV_AHEAD_ROWS * stride * sizeof(float), hs / 16);
        __m512 a = _mm512_mul_ps(_mm512_loadu_ps(ki), _mm512_loadu_ps(q));
        for (int j = 16; j < hs; j += 16) a = _mm512_fmadd_ps(_mm512_loadu_ps(ki + j), _mm512_loadu_ps(q + j), a);
        s[i] = _mm512_reduce_add_ps(a) * scale;
    }
}

__attribute__((target("avx512f"))) static void wsum_avx512(float *acc, const float *w, const float *v, int stride, int hs,
                                                           int n) {
    for (int j = 0; j < hs; j += 64) {
        int lanes = hs - j < 64 ? (hs - j) / 16 : 4;
        __m512 a[4];
        for (int u = 0; u < lanes; u++) a[u] = _mm512_loadu_ps(acc + j + u * 16);
        for (int i = 0; i < n; i++) {
            const float *vi = v + (long)i * stride + j;
            mv_prefetch_at(vi, (size_t)MV_AHEAD_ROWS * stride * sizeof(float), lanes);
            __m512 wi = _mm512_set1_ps(w[i]);
            for (int u = 0; u < lanes; u++) a[u] = _mm512_fmadd_ps(wi, _mm512_loadu_ps(vi + u * 16), a[u]);
        }
        for (int u = 0; u < lanes; u++) _mm512_storeu_ps(acc + j + u * 16, a[u]);
    }
}

void mv_scores(float *s, const float *q, const float *k, int stride, int hs, int n, float scale) {
    if (hs % 16 == 0 && hs <= 256 && cpu_has(0)) scores_avx512(s, q, k, stride, hs, n, scale);
    else scores_portable(s, q, k, stride, hs, n, scale);
}

void mv_wsum(float *acc, const float *w, const float *v, int stride, int hs, int n) {
    if (hs % 16 == 0 && hs <= 256 && cpu_has(0)) wsum_avx512(acc, w, v, stride, hs, n);
    else wsum_portable(acc, w, v, stride, hs, n);
}

typedef void (*mv_fn)(float *, const float *, const float *, int, int);

/* Resolved on every call from a cheap cached CPU check; no mutable globals. */
static mv_fn mv_pick(const char **name) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) { *name = "avx512"; return mv_avx512; }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) { *name = "avx2"; return mv_avx2; }
    *name = "portable";
    return mv_portable;
}

void mv_f32(float *out, const float *w, const float *x, int n, int d) {
    const char *name;
    mv_pick(&name)(out, w, x, n, d);
}

const char *mv_variant(void) {
    const char *name;
    mv_pick(&name);
    return name;
}
