/* test_gemm_q.c — the integer products of quantised rows: AVX2 against portable bit for bit, both against float64.
 *
 * engine/gemm_q.h promises that every path returns the same bits, so the
 * AVX2 tiles are compared with the portable path by memcmp over shapes
 * that leave every kind of remainder (rows past the last pair or four,
 * tokens past the last quad, T = 1 for decode, more than one 16-row block)
 * and a C wider than n whose other columns must stay untouched. Both are
 * then held to a float64 reference built from quant_dequant's weights
 * (test_quant.c holds that to ggml's definitions) in two ways:
 *   - against the rounded activations (q·dx in double): only f32
 *     accumulation separates them, bounded by (blocks + 4) · 2^-23 ·
 *     Σ|w·xq| (each block adds at most three roundings of its term);
 *   - against the activations themselves: rounding moves x_k to xq_k, so
 *     the product by at most Σ |w_k| · |xq_k − x_k|, plus the first bound.
 * A misplaced nibble, scale or offset moves results by far more than either.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gemm_q.h"
#include "engine/gguf.h"
#include "engine/quant.h"
#include "tests/quant_fixture.h"
#include "tests/test.h"

typedef struct { int T, n, d; } Shape;

/* The last three reach AMX's 16 × 16 tiles (Q4_K, Q6_K): whole ones, and rows and tokens past them. */
static const Shape K_SHAPES[] = {{1, 1, 256},   {1, 7, 512},   {2, 3, 256},   {4, 2, 256},  {5, 5, 768},
                                 {9, 17, 512},  {3, 33, 256},  {17, 34, 256}, {32, 16, 512}, {16, 49, 768}};
/* The last four reach AMX's 16 × 16 tiles: whole ones, and rows and tokens past them. */
static const Shape Q8_SHAPES[] = {{1, 1, 32},   {1, 9, 96},   {3, 5, 64},    {4, 4, 256},  {7, 17, 160},
                                  {13, 35, 64}, {16, 16, 32}, {33, 35, 96}, {17, 48, 64}, {48, 21, 160}};

typedef struct {
    double worst_q, worst_x; /* error over each bound */
    int outside, differ;     /* a column past n written; AVX2 or AMX ≠ portable */
} Result;

/* One type and shape: portable and (where the CPU has it) AVX2 on the same
 * rounded activations, checked as the header comment says. */
static void run_shape(GgmlType ty, const Shape *s, unsigned *seed, Result *res) {
    int T = s->T, n = s->n, d = s->d, ldc = n + 3, blk = gemm_q_block(ty);
    size_t bytes, rb = quant_row_bytes(ty, d);
    uint8_t *w = qfx_random_blocks(ty, (size_t)n * d, 0.05f, seed, &bytes);
    float *x = malloc((size_t)T * d * sizeof(float)), *wf = malloc((size_t)n * d * sizeof(float));
    float *C[4];
    for (int p = 0; p < 4; p++) C[p] = malloc((size_t)T * ldc * sizeof(float));
    void *buf = malloc(gemm_q_x_bytes(T, d));
    for (size_t i = 0; i < (size_t)T * d; i++) x[i] = qfx_frand(seed) * (i % 7 == 0 ? 3.0f : 1.0f);
    for (int j = 0; j < n; j++) quant_dequant(ty, w + (size_t)j * rb, wf + (size_t)j * d, d);
    GqX gx;
    gemm_q_x_init(&gx, buf, T, d, blk);
    gx.tiles = 1;
    gemm_q_quantise(&gx, x, 0, T);
    const GqPath path[4] = {GQ_PORTABLE, GQ_AVX2, GQ_AMX, GQ_VNNI};
    for (int p = 0; p < 4; p++) {
        if (!gemm_q_available(path[p])) continue;
        for (size_t i = 0; i < (size_t)T * ldc; i++) C[p][i] = -12345.0f;
        gemm_q(path[p], C[p], ldc, &gx, ty, w, n);
        if (p && memcmp(C[0], C[p], (size_t)T * ldc * sizeof(float))) res->differ++;
    }
    for (int t = 0; t < T; t++) {
        for (int j = n; j < ldc; j++) res->outside += C[0][(size_t)t * ldc + j] != -12345.0f;
        for (int j = 0; j < n; j++) {
            double rq = 0, rx = 0, mag = 0, shift = 0;
            for (int k = 0; k < d; k++) {
                double wk = wf[(size_t)j * d + k], dx = gx.dx[(size_t)(k / blk) * T + t];
                double xq = gx.q[(size_t)t * d + k] * dx;
                rq += wk * xq, rx += wk * x[(size_t)t * d + k], mag += fabs(wk * xq);
                shift += fabs(wk) * fabs(xq - x[(size_t)t * d + k]);
            }
            double acc = (d / blk + 4) * ldexp(mag, -23) + 1e-30, c = C[0][(size_t)t * ldc + j];
            double eq = fabs(c - rq) / acc, ex = fabs(c - rx) / (acc + shift);
            if (eq > res->worst_q) res->worst_q = eq;
            if (ex > res->worst_x) res->worst_x = ex;
        }
    }
    free(w), free(x), free(wf), free(C[0]), free(C[1]), free(C[2]), free(C[3]), free(buf);
}

static void check_type(GgmlType ty, const Shape *shapes, size_t n_shapes, const char *name) {
    unsigned seed = 11 + (unsigned)ty;
    Result r = {0, 0, 0, 0};
    for (size_t i = 0; i < n_shapes; i++) run_shape(ty, &shapes[i], &seed, &r);
    CHECK_MSG(r.outside == 0, "%s: %d values written past column n", name, r.outside);
    CHECK_MSG(r.differ == 0, "%s: AVX2, AMX or VNNI differs from portable in %d of %zu shapes", name, r.differ, n_shapes);
    CHECK_MSG(r.worst_q <= 1, "%s: %.3g of the f32 accumulation bound from the rounded product", name, r.worst_q);
    CHECK_MSG(r.worst_x <= 1, "%s: %.3g of the activation-rounding bound from the product", name, r.worst_x);
    const char *paths = gemm_q_available(GQ_AMX) ? "avx2 = amx = avx512vnni (their tiles) = portable bit for bit"
                        : gemm_q_available(GQ_VNNI) ? "avx2 = avx512vnni (its tiles) = portable bit for bit (no AMX int8 here)"
                        : gemm_q_available(GQ_AVX2) ? "avx2 = portable bit for bit (no AMX int8 nor AVX-512 VNNI here)"
                                                    : "portable only (no AVX2 here)";
    printf("      %s: %s; worst %.3f of the accumulation bound, %.3f of the rounding bound\n", name, paths, r.worst_q,
           r.worst_x);
}

TEST(gemm_q_q8_0_avx2_and_amx_equal_portable_and_float64) { check_type(GGML_Q8_0, Q8_SHAPES, 10, "Q8_0"); }

TEST(gemm_q_q4_k_avx2_and_amx_equal_portable_and_float64) { check_type(GGML_Q4_K, K_SHAPES, 10, "Q4_K"); }

TEST(gemm_q_q5_k_avx2_and_amx_equal_portable_and_float64) { check_type(GGML_Q5_K, K_SHAPES, 10, "Q5_K"); }

TEST(gemm_q_q6_k_avx2_and_amx_equal_portable_and_float64) { check_type(GGML_Q6_K, K_SHAPES, 10, "Q6_K"); }

/* Activations rounded without the tile order (x->tiles 0, as forward.c
 * leaves them for the AVX2 paths) must never reach the AMX or VNNI tiles:
 * they then run AVX2's, so a poisoned qa changes nothing. */
static int amx_without_tiles_differs(GqPath path, GgmlType ty, int T, int n, int d) {
    unsigned seed = 5;
    size_t bytes, cells = (size_t)T * n;
    uint8_t *w = qfx_random_blocks(ty, (size_t)n * d, 0.05f, &seed, &bytes);
    float *x = malloc((size_t)T * d * sizeof(float)), *c0 = malloc(cells * sizeof(float)),
          *c1 = malloc(cells * sizeof(float));
    void *buf = malloc(gemm_q_x_bytes(T, d));
    for (size_t i = 0; i < (size_t)T * d; i++) x[i] = qfx_frand(&seed);
    GqX gx;
    gemm_q_x_init(&gx, buf, T, d, gemm_q_block(ty));
    gemm_q_quantise(&gx, x, 0, T);
    memset(gx.qa, 0x5a, (size_t)T * d);
    gemm_q(GQ_PORTABLE, c0, n, &gx, ty, w, n);
    gemm_q(path, c1, n, &gx, ty, w, n);
    int differ = memcmp(c0, c1, cells * sizeof(float)) != 0;
    free(w), free(x), free(c0), free(c1), free(buf);
    return differ;
}

TEST(gemm_q_amx_reads_no_tile_order_it_was_not_given) {
    int ran = 0;
    for (GqPath p = GQ_AMX; p <= GQ_VNNI; p++) {
        if (!gemm_q_available(p)) continue;
        ran++;
        const char *name = gemm_q_name(p);
        CHECK_MSG(!amx_without_tiles_differs(p, GGML_Q8_0, 32, 32, 64), "Q8_0: %s read an unwritten tile order", name);
        CHECK_MSG(!amx_without_tiles_differs(p, GGML_Q4_K, 32, 32, 512), "Q4_K: %s read an unwritten tile order", name);
        CHECK_MSG(!amx_without_tiles_differs(p, GGML_Q6_K, 16, 16, 256), "Q6_K: %s read an unwritten tile order", name);
    }
    if (!ran) test_skip("no AMX int8 nor AVX-512 VNNI here (or the kernel does not permit the tiles)");
}

/* Rounding is ggml's: q = x·(127/amax) to nearest even, in [-127, 127],
 * the scale 1/(127/amax) for a K block (amax/127 in f16 for Q8_0's
 * blocks of 32), and the per-16 and per-32 sums of the K blocks' q. */
TEST(gemm_q_activations_round_per_block_with_sums) {
    int d = 512, T = 2;
    float x[1024];
    unsigned seed = 3;
    for (int i = 0; i < T * d; i++) x[i] = qfx_frand(&seed) * (float)(1 + i % 5);
    void *buf = malloc(gemm_q_x_bytes(T, d));
    GqX gx;
    gemm_q_x_init(&gx, buf, T, d, 256);
    gemm_q_quantise(&gx, x, 0, T);
    int bad = 0;
    for (int t = 0; t < T; t++)
        for (int k = 0; k < d / 256; k++) {
            float amax = 0, dx = gx.dx[(size_t)k * T + t];
            for (int j = 0; j < 256; j++) amax = fmaxf(amax, fabsf(x[t * d + 256 * k + j]));
            bad += dx != 1 / (127 / amax);
            for (int g = 0; g < 16; g++) {
                int sum = 0;
                for (int j = 0; j < 16; j++) {
                    int q = gx.q[t * d + 256 * k + 16 * g + j];
                    sum += q;
                    bad += q != (int)rint(x[t * d + 256 * k + 16 * g + j] * (127 / amax)) || q < -127 || q > 127;
                }
                bad += gx.s16[t * (d / 16) + 16 * k + g] != sum;
                if (g % 2) bad += gx.s32[t * (d / 32) + 8 * k + g / 2] != sum + gx.s16[t * (d / 16) + 16 * k + g - 1];
            }
        }
    CHECK_INT(bad, 0);
    free(buf);
}

/* The env knob names a path; an unknown name is an error, not a fallback. */
TEST(gemm_q_env_names_a_path) {
    char msg[200] = "";
    setenv("AHASCOPE_GEMMQ", "portable", 1);
    CHECK_INT(gemm_q_from_env(msg, sizeof msg), GQ_PORTABLE);
    setenv("AHASCOPE_GEMMQ", "off", 1);
    CHECK_INT(gemm_q_from_env(msg, sizeof msg), GQ_OFF);
    setenv("AHASCOPE_GEMMQ", "amx", 1);
    CHECK_INT(gemm_q_from_env(msg, sizeof msg), gemm_q_available(GQ_AMX) ? GQ_AMX : -1);
    setenv("AHASCOPE_GEMMQ", "avx512vnni", 1);
    CHECK_INT(gemm_q_from_env(msg, sizeof msg), gemm_q_available(GQ_VNNI) ? GQ_VNNI : -1);
    setenv("AHASCOPE_GEMMQ", "avx3", 1);
    CHECK_INT(gemm_q_from_env(msg, sizeof msg), -1);
    CHECK(strstr(msg, "avx3") != NULL);
    unsetenv("AHASCOPE_GEMMQ");
    CHECK_INT(gemm_q_from_env(msg, sizeof msg), gemm_q_best());
}
