/* test_gemm_half.c — the bf16 prefill products against a double-precision matmul, on every fast path.
 *
 * The bf16 prefill products (engine/gemm_half.h) against
 * a double-precision matmul, for every fast path this CPU runs.
 *
 * Weights are bf16 and used exactly; the fast paths round each activation
 * to bf16 (relative error at most 2^-9), so the sum over k may move by
 * 2^-9 · Σ|x||w|, plus f32 accumulation far below that: the bound is
 * 2^-8 · Σ|x||w|. Small integers are exact in bf16 and their sums exact in
 * f32, so with such inputs the result must equal the reference exactly: any
 * misplaced pair or row shows. Shapes cover T = 1, T, n and d off every
 * block multiple (16, 32), odd d, more than one packed panel (n > 256, d
 * > 512), and a C wider than n (ldc) whose other
 * columns must stay untouched.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/gemm_half.h"
#include "engine/half.h"
#include "tests/test.h"

static float frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

typedef struct { int T, n, d; } Shape;

static const Shape SHAPES[] = {{1, 1, 1},   {1, 17, 33},  {3, 7, 3},    {5, 16, 32},  {16, 32, 64},  {17, 33, 31},
                               {31, 40, 65}, {33, 64, 96}, {40, 100, 257}, {64, 48, 512}, {70, 31, 1001},
                               {35, 300, 600}, {9, 520, 1100}};

/* Fill x[T][d] and w[n][d]: small integers (exact) or uniform reals. */
static void fill(float *x, uint16_t *w, const Shape *s, int integers, unsigned *seed) {
    for (size_t i = 0; i < (size_t)s->T * s->d; i++) x[i] = integers ? (float)((int)(frand(seed) * 8)) : frand(seed) * 4;
    for (size_t i = 0; i < (size_t)s->n * s->d; i++)
        w[i] = half_f32_to_bf16(integers ? (float)((int)(frand(seed) * 4)) : frand(seed) * 0.5f);
}

/* Run one path on one shape; returns the worst error over the bound (≤ 1
 * passes), or -1 when a column outside [0, n) of C was written. */
static double run_shape(GemmPath path, const Shape *s, int integers, unsigned *seed) {
    int T = s->T, n = s->n, d = s->d, ldc = n + 3;
    float *x = malloc((size_t)T * d * sizeof(float)), *C = malloc((size_t)T * ldc * sizeof(float));
    uint16_t *w = malloc((size_t)n * d * sizeof(uint16_t)), *xb = malloc(gemm_half_x_elems(T, d) * sizeof(uint16_t));
    void *scratch = malloc(gemm_half_scratch_bytes(T, d));
    fill(x, w, s, integers, seed);
    for (size_t i = 0; i < (size_t)T * ldc; i++) C[i] = -12345.0f;
    gemm_half_round_x(xb, x, T, d);
    gemm_half_bf16(path, C, ldc, xb, T, d, w, n, scratch);
    double worst = 0;
    for (int t = 0; t < T; t++) {
        for (int j = n; j < ldc; j++)
            if (C[(size_t)t * ldc + j] != -12345.0f) worst = -1;
        for (int j = 0; j < n && worst >= 0; j++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < d; k++) {
                double p = (double)x[(size_t)t * d + k] * half_bf16_to_f32(w[(size_t)j * d + k]);
                ref += p, mag += fabs(p);
            }
            double err = fabs(C[(size_t)t * ldc + j] - ref), bound = integers ? 0 : ldexp(mag, -8) + 1e-30;
            double r = integers ? (err == 0 ? 0 : 2) : err / bound;
            if (r > worst) worst = r;
        }
    }
    free(x), free(C), free(w), free(xb), free(scratch);
    return worst;
}

static void check_path(GemmPath path) {
    if (!gemm_half_available(path)) {
        printf("      %s: not on this machine\n", gemm_half_name(path));
        return;
    }
    unsigned seed = 7;
    double worst_real = 0;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const Shape *s = &SHAPES[i];
        for (int integers = 1; integers >= 0; integers--) {
            double r = run_shape(path, s, integers, &seed);
            CHECK_MSG(r >= 0, "%s T=%d n=%d d=%d: wrote outside its n columns", gemm_half_name(path), s->T, s->n, s->d);
            CHECK_MSG(r <= 1, "%s T=%d n=%d d=%d (%s): error %.3g of the bound", gemm_half_name(path), s->T, s->n,
                      s->d, integers ? "integers, exact" : "reals, 2^-8 sum|xw|", r);
            if (!integers && r > worst_real) worst_real = r;
        }
    }
    printf("      %s: worst error %.3f of 2^-8 sum|xw|\n", gemm_half_name(path), worst_real);
}

TEST(gemm_half_amx_matches_double_reference) { check_path(GEMM_AMX); }

TEST(gemm_half_avx512bf16_matches_double_reference) { check_path(GEMM_AVX512BF16); }

/* The env var picks a path by name; a wrong name or a path the machine
 * lacks is an error with a message, never a silent fallback. */
/* The default is the fastest path the machine runs: AMX, then AVX-512 BF16
 * (3.5x sgemm on a Zen 5), then the exact widen-and-sgemm product. */
TEST(gemm_half_best_prefers_amx_then_avx512bf16_then_exact) {
    GemmPath want = gemm_half_available(GEMM_AMX)          ? GEMM_AMX
                    : gemm_half_available(GEMM_AVX512BF16) ? GEMM_AVX512BF16
                                                           : GEMM_EXACT;
    CHECK_INT(gemm_half_best(), want);
    CHECK(gemm_half_available(gemm_half_best()));
    printf("      default prefill path here: %s\n", gemm_half_name(gemm_half_best()));
}

TEST(gemm_half_env_names_a_path) {
    char msg[200] = "";
    const char *old = getenv("AHASCOPE_GEMM");
    char *saved = old ? strdup(old) : NULL;
    setenv("AHASCOPE_GEMM", "exact", 1);
    CHECK_INT(gemm_half_from_env(msg, sizeof msg), GEMM_EXACT);
    setenv("AHASCOPE_GEMM", "fastest", 1);
    CHECK_INT(gemm_half_from_env(msg, sizeof msg), -1);
    CHECK(strstr(msg, "AHASCOPE_GEMM") && strstr(msg, "fastest"));
    setenv("AHASCOPE_GEMM", "auto", 1);
    CHECK_INT(gemm_half_from_env(msg, sizeof msg), gemm_half_best());
    setenv("AHASCOPE_GEMM", "amx", 1);
    CHECK_INT(gemm_half_from_env(msg, sizeof msg), gemm_half_available(GEMM_AMX) ? GEMM_AMX : -1);
    if (saved) setenv("AHASCOPE_GEMM", saved, 1);
    else unsetenv("AHASCOPE_GEMM");
    free(saved);
}
