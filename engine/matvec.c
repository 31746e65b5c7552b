/* matvec.c — the decode kernels for f32, bf16 and f16 weights (AVX-512, AVX2, portable C). */
#include "matvec.h"

#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <stdint.h>

#include "half.h"
#include "simd.h"

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

/* Σ of a vector's 8 lanes. */
__attribute__((target("avx2"))) static inline float hsum256(__m256 a) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
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
        float s = hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
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

static float bf16f(uint16_t h) { return half_bf16_to_f32(h); }

static void mv_half_portable(float *out, const uint16_t *w, const float *x, int n, int d, int bf16) {
    for (int i = 0; i < n; i++) {
        const uint16_t *r = w + (long)i * d;
        float acc[8] = {0}, s = 0;
        int j = 0;
        for (; j + 8 <= d; j += 8)
            for (int k = 0; k < 8; k++) acc[k] += (bf16 ? bf16f(r[j + k]) : half_f16_to_f32(r[j + k])) * x[j + k];
        for (; j < d; j++) s += (bf16 ? bf16f(r[j]) : half_f16_to_f32(r[j])) * x[j];
        for (int k = 0; k < 8; k++) s += acc[k];
        out[i] = s;
    }
}

/* Rows i and i + n/2 are read together, each with its own prefetches: two
 * streams a slice apart keep more lines in flight than one, and the load of
 * x serves both rows. In a 2-thread stream microbenchmark (bf16 rows of
 * 768, 240 MB) one row at a time read at 0.89-0.92 of the bandwidth probe,
 * two streams at 0.95-0.98; four streams, or four adjacent rows, less. */
#define MV_HALF_AVX512(NAME, LOAD)                                                                        \
    __attribute__((target("avx512f"))) static float NAME##_tail(const uint16_t *r, const float *x, int j, int d, \
                                                                 __m512 a) {                              \
        for (; j + 16 <= d; j += 16) a = _mm512_fmadd_ps(LOAD(r + j), _mm512_loadu_ps(x + j), a);         \
        float s = _mm512_reduce_add_ps(a);                                                                \
        for (; j < d; j++) s += LOAD##_one(r[j]) * x[j];                                                  \
        return s;                                                                                         \
    }                                                                                                     \
    __attribute__((target("avx512f"))) static void NAME(float *out, const uint16_t *w, const float *x, int n, int d, \
                                                        int l1_only) {                                    \
        int h = n / 2;                                                                                    \
        for (int i = 0; i < h; i++) {                                                                     \
            const uint16_t *r = w + (long)i * d, *q = w + (long)(i + h) * d;                              \
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;                                   \
            int j = 0;                                                                                    \
            for (; j + 32 <= d; j += 32) {                                                                \
                mv_prefetch_half(r + j, l1_only);                                                       \
                mv_prefetch_half(q + j, l1_only);                                                       \
                __m512 x0 = _mm512_loadu_ps(x + j), x1 = _mm512_loadu_ps(x + j + 16);                     \
                a0 = _mm512_fmadd_ps(LOAD(r + j), x0, a0);                                                \
                a1 = _mm512_fmadd_ps(LOAD(r + j + 16), x1, a1);                                           \
                b0 = _mm512_fmadd_ps(LOAD(q + j), x0, b0);                                                \
                b1 = _mm512_fmadd_ps(LOAD(q + j + 16), x1, b1);                                           \
            }                                                                                             \
            out[i] = NAME##_tail(r, x, j, d, _mm512_add_ps(a0, a1));                                      \
            out[i + h] = NAME##_tail(q, x, j, d, _mm512_add_ps(b0, b1));                                  \
        }                                                                                                 \
        if (n & 1) out[n - 1] = NAME##_tail(w + (long)(n - 1) * d, x, 0, d, _mm512_setzero_ps());         \
    }

static inline float ld16_bf16_one(uint16_t h) { return half_bf16_to_f32(h); }
static inline float ld16_f16_one(uint16_t h) { return half_f16_to_f32(h); }
MV_HALF_AVX512(mv_bf16_avx512, ld16_bf16)
MV_HALF_AVX512(mv_f16_avx512, ld16_f16)

__attribute__((target("avx2,fma"))) static inline __m256 ld8_bf16(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}

__attribute__((target("avx2,fma,f16c"))) static inline __m256 ld8_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

/* The AVX2 kernels pair rows the same way. In the microbenchmark above, run
 * with AVX2 on the same Xeon (40 rounds, 3 runs), one row at a time read at
 * 0.80-0.86 of the probe, with an L1 prefetch 1 KiB ahead 0.84-0.90, two
 * streams with it at 2 KiB 0.86-0.95. */
#define MV_HALF_AVX2(NAME, LOAD, TARGET)                                                                  \
    __attribute__((target(TARGET))) static float NAME##_tail(const uint16_t *r, const float *x, int j, int d, \
                                                             __m256 a) {                                  \
        for (; j + 8 <= d; j += 8) a = _mm256_fmadd_ps(LOAD(r + j), _mm256_loadu_ps(x + j), a);           \
        float s = hsum256(a);                                                                             \
        for (; j < d; j++) s += LOAD##_one(r[j]) * x[j];                                                  \
        return s;                                                                                         \
    }                                                                                                     \
    __attribute__((target(TARGET))) static void NAME(float *out, const uint16_t *w, const float *x, int n, int d, \
                                                     int l1_only) {                                       \
        int h = n / 2;                                                                                    \
        for (int i = 0; i < h; i++) {                                                                     \
            const uint16_t *r = w + (long)i * d, *q = w + (long)(i + h) * d;                              \
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;                                   \
            int j = 0;                                                                                    \
            for (; j + 32 <= d; j += 32) {                                                                \
                mv_prefetch_half(r + j, l1_only);                                                       \
                mv_prefetch_half(q + j, l1_only);                                                       \
                for (int k = 0; k < 32; k += 16) {                                                        \
                    __m256 x0 = _mm256_loadu_ps(x + j + k), x1 = _mm256_loadu_ps(x + j + k + 8);          \
                    a0 = _mm256_fmadd_ps(LOAD(r + j + k), x0, a0);                                        \
                    a1 = _mm256_fmadd_ps(LOAD(r + j + k + 8), x1, a1);                                    \
                    b0 = _mm256_fmadd_ps(LOAD(q + j + k), x0, b0);                                        \
                    b1 = _mm256_fmadd_ps(LOAD(q + j + k + 8), x1, b1);                                    \
                }                                                                                         \
            }                                                                                             \
            out[i] = NAME##_tail(r, x, j, d, _mm256_add_ps(a0, a1));                                      \
            out[i + h] = NAME##_tail(q, x, j, d, _mm256_add_ps(b0, b1));                                  \
        }                                                                                                 \
        if (n & 1) out[n - 1] = NAME##_tail(w + (long)(n - 1) * d, x, 0, d, _mm256_setzero_ps());         \
    }

static inline float ld8_bf16_one(uint16_t h) { return half_bf16_to_f32(h); }
static inline float ld8_f16_one(uint16_t h) { return half_f16_to_f32(h); }
MV_HALF_AVX2(mv_bf16_avx2, ld8_bf16, "avx2,fma")
MV_HALF_AVX2(mv_f16_avx2, ld8_f16, "avx2,fma,f16c")

MvIsa mv_isa(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return MV_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return MV_AVX2;
    return MV_PORTABLE;
}

int mv_cpu_avx512(void) { return mv_isa() == MV_AVX512; }

/* An isa this CPU lacks falls back to the widest it has. */
static MvIsa isa_clamp(MvIsa isa) {
    MvIsa have = mv_isa();
    return isa > have ? have : isa;
}

/* F16C through cpuid (clang's __builtin_cpu_supports does not know "f16c"),
 * read once: in a virtual machine every cpuid traps to the hypervisor, and
 * the attention kernels asked for every head of every token, 77% of a
 * stories260K eval's time. The answer is the machine's, the same for every
 * thread, so two threads racing on the first read store the same value. */
int mv_cpu_f16c(void) {
    static atomic_int known = -1;
    int v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v < 0) {
        unsigned a, b, c, d;
        v = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}

MvPrefetch mv_prefetch_kind(void) {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") ? MV_PF_L1 : MV_PF_L2_L1;
}

const char *mv_prefetch_name(MvPrefetch k) { return k == MV_PF_L1 ? "l1" : "l2+l1"; }

/* The half-precision kernel for an isa the CPU has. */
static void half_kernel(MvIsa isa, float *out, const uint16_t *w, const float *x, int n, int d, int bf16) {
    int l1 = mv_prefetch_kind() == MV_PF_L1;
    if (isa == MV_AVX512) bf16 ? mv_bf16_avx512(out, w, x, n, d, l1) : mv_f16_avx512(out, w, x, n, d, l1);
    else if (isa == MV_AVX2 && bf16) mv_bf16_avx2(out, w, x, n, d, l1);
    else if (isa == MV_AVX2 && mv_cpu_f16c()) mv_f16_avx2(out, w, x, n, d, l1);
    else mv_half_portable(out, w, x, n, d, bf16);
}

void mv_half_isa(MvIsa isa, float *out, const uint16_t *w, const float *x, int n, int d, int bf16) {
    half_kernel(isa_clamp(isa), out, w, x, n, d, bf16);
}

void mv_bf16(float *out, const uint16_t *w, const float *x, int n, int d) { half_kernel(mv_isa(), out, w, x, n, d, 1); }

void mv_f16(float *out, const uint16_t *w, const float *x, int n, int d) { half_kernel(mv_isa(), out, w, x, n, d, 0); }

__attribute__((target("avx512f"))) static void widen_avx512(float *out, const uint16_t *in, size_t n, int bf16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, bf16 ? ld16_bf16(in + i) : ld16_f16(in + i));
    for (; i < n; i++) out[i] = bf16 ? half_bf16_to_f32(in[i]) : half_f16_to_f32(in[i]);
}

void mv_widen(float *out, const uint16_t *in, size_t n, int bf16) {
    if (mv_cpu_avx512()) { widen_avx512(out, in, n, bf16); return; }
    for (size_t i = 0; i < n; i++) out[i] = bf16 ? half_bf16_to_f32(in[i]) : half_f16_to_f32(in[i]);
}

/* The f32 kernel for an isa the CPU has. */
static void f32_kernel(MvIsa isa, float *out, const float *w, const float *x, int n, int d) {
    if (isa == MV_AVX512) mv_avx512(out, w, x, n, d);
    else if (isa == MV_AVX2) mv_avx2(out, w, x, n, d);
    else mv_portable(out, w, x, n, d);
}

void mv_f32_isa(MvIsa isa, float *out, const float *w, const float *x, int n, int d) {
    f32_kernel(isa_clamp(isa), out, w, x, n, d);
}

void mv_f32(float *out, const float *w, const float *x, int n, int d) { f32_kernel(mv_isa(), out, w, x, n, d); }

const char *mv_variant(void) {
    static const char *const names[] = {"portable", "avx2", "avx512"};
    return names[mv_isa()];
}
