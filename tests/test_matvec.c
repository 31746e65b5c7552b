/* test_matvec.c — the decode kernels against a double reference, for every instruction set the CPU runs.
 *
 * The decode kernels against a double reference over the
 * widened weights, for every instruction set this CPU runs (AVX-512, AVX2,
 * portable), at lengths that exercise the vector body and every tail
 * (d mod 64, 32, 16, 8). The products are exact in float, so only
 * summation order separates kernel and reference: 1e-5 relative to the sum
 * of |w·x|. Row counts 1, 2, 5 and 6 cover the kernels pairing row i with
 * row i + n/2 and the odd row left over. The quantised kernels (every
 * ggml block type) are checked the same way against their widened rows. */
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>

#include "engine/half.h"
#include "engine/matvec.h"
#include "engine/quant.h"
#include "tests/quant_fixture.h"
#include "tests/test.h"

#define frand qfx_frand

static const char *const isa_name[] = {"portable", "avx2", "avx512"};

/* Check out[0..n) against W·x for the f32 weights wide[n][d] (the first
 * mismatch only). */
static void rows_match(const float *out, const float *wide, const float *x, int n, int d, const char *what, MvIsa isa) {
    for (int i = 0; i < n; i++) {
        double ref = 0, mag = 0;
        for (int j = 0; j < d; j++) ref += (double)wide[i * d + j] * x[j], mag += fabs((double)wide[i * d + j] * x[j]);
        int ok = fabs(out[i] - ref) <= 1e-5 * mag + 1e-7;
        CHECK_MSG(ok, "%s %s n=%d d=%d row %d: %.9g vs %.9g", isa_name[isa], what, n, d, i, out[i], ref);
        if (!ok) return;
    }
}

/* Every kernel of one isa on an n × d matrix of random weights. */
static void check_isa(MvIsa isa, int n, int d, unsigned *seed) {
    uint16_t *wb = malloc((size_t)n * d * 2), *wh = malloc((size_t)n * d * 2);
    float *x = malloc((size_t)d * 4), *wf = malloc((size_t)n * d * 4), *wide = malloc((size_t)n * d * 4), out[6];
    for (int i = 0; i < n * d; i++) {
        float v = frand(seed) * 3;
        wf[i] = v, wb[i] = half_f32_to_bf16(v), wh[i] = half_f32_to_f16(v);
    }
    for (int j = 0; j < d; j++) x[j] = frand(seed);
    mv_f32_isa(isa, out, wf, x, n, d);
    rows_match(out, wf, x, n, d, "f32", isa);
    for (int bf16 = 0; bf16 < 2; bf16++) {
        const uint16_t *w = bf16 ? wb : wh;
        mv_widen(wide, w, (size_t)n * d, bf16);
        for (int i = 0; i < n * d; i++) {
            float ref = bf16 ? half_bf16_to_f32(w[i]) : half_f16_to_f32(w[i]);
            CHECK_MSG(wide[i] == ref, "widen d=%d i=%d: %g vs %g", d, i, wide[i], ref);
            if (wide[i] != ref) break;
        }
        mv_half_isa(isa, out, w, x, n, d, bf16);
        rows_match(out, wide, x, n, d, bf16 ? "bf16" : "f16", isa);
    }
    free(wb), free(wh), free(x), free(wf), free(wide);
}

TEST(matvec_kernels_match_reference_at_every_tail_and_isa) {
    const int dims[] = {1, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 100, 172, 257};
    const int rows[] = {1, 2, 5, 6};
    unsigned seed = 7;
    for (int isa = MV_PORTABLE; isa <= (int)mv_isa(); isa++)
        for (size_t k = 0; k < sizeof dims / sizeof dims[0] * 4; k++) check_isa((MvIsa)isa, rows[k % 4], dims[k / 4], &seed);
    if (mv_isa() < MV_AVX512) printf("    (this CPU lacks AVX-512: its kernels were not run)\n");
}

TEST(matvec_dispatch_is_the_widest_isa) {
    float w[3 * 40], x[40], a[3], b[3];
    unsigned seed = 3;
    for (int i = 0; i < 3 * 40; i++) w[i] = frand(&seed);
    for (int j = 0; j < 40; j++) x[j] = frand(&seed);
    mv_f32(a, w, x, 3, 40);
    mv_f32_isa(mv_isa(), b, w, x, 3, 40);
    for (int i = 0; i < 3; i++) CHECK(a[i] == b[i]); /* same kernel, same summation order: bitwise */
    CHECK(!strcmp(mv_variant(), isa_name[mv_isa()]));
}

/* ---- quantised blocks: every type, every isa, against a double dot of
 * the widened rows (quant_dequant, itself checked in test_quant.c). The
 * kernels make each weight exactly as the widening does, so only the sum's
 * order differs: 1e-5 of Σ|w·x| again. */


TEST(matvec_quantised_kernels_match_the_widened_rows_for_every_type_and_isa) {
    const GgmlType types[] = {GGML_Q4_0, GGML_Q4_1, GGML_Q5_0, GGML_Q5_1, GGML_Q8_0,
                              GGML_Q2_K, GGML_Q3_K, GGML_Q4_K, GGML_Q5_K, GGML_Q6_K};
    const int rows[] = {1, 2, 5, 17};
    unsigned seed = 9;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        int be, bb;
        quant_block(types[k], &be, &bb);
        CHECK(mv_q_supported(types[k]));
        for (int nd = 1; nd <= 3; nd++)
            for (int r = 0; r < 4; r++) {
                int n = rows[r], d = nd * be * (be == 32 ? 3 : 1); /* 32-blocks: 96, 192, 288 */
                uint8_t *w = qfx_random_blocks(types[k], (size_t)n * d, 2, &seed, NULL);
                float *wide = malloc((size_t)n * d * 4), *wide2 = malloc((size_t)n * d * 4), *x = malloc((size_t)d * 4);
                float out[17];
                CHECK(quant_dequant(types[k], w, wide, (int64_t)n * d) == 0);
                mv_q_widen(wide2, types[k], w, (size_t)n * d);
                CHECK(!memcmp(wide, wide2, (size_t)n * d * 4));
                for (int j = 0; j < d; j++) x[j] = frand(&seed);
                for (int isa = MV_PORTABLE; isa <= (int)mv_isa(); isa++) {
                    memset(out, 0, sizeof out);
                    mv_q_isa((MvIsa)isa, out, types[k], w, x, n, d);
                    rows_match(out, wide, x, n, d, gguf_type_name(types[k]), (MvIsa)isa);
                }
                mv_q_set_int8(0); /* the exact path; the integer one has its own test */
                mv_q(out, types[k], w, x, n, d);
                mv_q_set_int8(1);
                rows_match(out, wide, x, n, d, gguf_type_name(types[k]), mv_isa());
                free(w), free(wide), free(wide2), free(x);
            }
    }
    CHECK(!mv_q_supported(GGML_F32) && !mv_q_supported(GGML_Q8_K));
}

/* The integer path rounds x to 8 bits per 32 values: each value moves by
 * at most half a step, max|x of its block|/254, so a row's dot moves by at
 * most Σ_j |w_j|·step_j/2 (plus summation order, 1e-5 of Σ|w·x|). Every
 * type it has, with rows odd and even (it reads two at once), one row,
 * and for Q8_0 rows not a multiple of its eight-block step; x centred on
 * 0 and on 2, where the K types' mins (dotted with Σx) weigh: a Q4_K min
 * read wrong passed with x centred alone. */
TEST(matvec_int8_path_stays_within_the_rounding_of_x) {
    const GgmlType types[] = {GGML_Q8_0, GGML_Q4_K, GGML_Q5_K, GGML_Q6_K};
    const int rows[] = {1, 2, 7}, ds[] = {256, 512, 288, 2080};
    unsigned seed = 21;
    int ran = 0;
    for (int k = 0; k < 4; k++) {
        if (!mv_q_int8_available(types[k])) continue;
        ran = 1;
        for (int r = 0; r < 6; r++)
            for (int di = 0; di < (types[k] == GGML_Q8_0 ? 4 : 2); di++) {
                int n = rows[r % 3], d = ds[di];
                uint8_t *w = qfx_random_blocks(types[k], (size_t)n * d, 2, &seed, NULL);
                float *wide = malloc((size_t)n * d * 4), *x = malloc((size_t)d * 4), out[7];
                quant_dequant(types[k], w, wide, (int64_t)n * d);
                for (int j = 0; j < d; j++) x[j] = frand(&seed) * (j % 3 ? 1 : 5) + (r >= 3 ? 2 : 0);
                mv_q_set_int8(1);
                mv_q(out, types[k], w, x, n, d);
                for (int i = 0; i < n; i++) {
                    double ref = 0, mag = 0, bound = 0;
                    for (int b = 0; b < d / 32; b++) {
                        double amax = 0;
                        for (int j = 0; j < 32; j++) amax = fmax(amax, fabs(x[32 * b + j]));
                        for (int j = 32 * b; j < 32 * b + 32; j++) {
                            double p = (double)wide[(size_t)i * d + j] * x[j];
                            ref += p, mag += fabs(p), bound += fabs(wide[(size_t)i * d + j]) * amax / 254;
                        }
                    }
                    CHECK_MSG(fabs(out[i] - ref) <= bound * 1.001 + 1e-5 * mag, "%s n=%d d=%d row %d: %g vs %g (bound %g)",
                              gguf_type_name(types[k]), n, d, i, out[i], ref, bound);
                    CHECK_MSG(fabs(out[i] - ref) > 1e-9 * mag, "%s row %d: exact, so the integer path did not run",
                              gguf_type_name(types[k]), i);
                }
                free(w), free(wide), free(x);
            }
    }
    if (!ran) test_skip("this CPU lacks AVX-512 VNNI: the integer path does not exist here");
}

/* x rounded once (mv_q_x_round, as a decode step shares it between its
 * row slices) gives mv_q's bits for every integer type, every row count
 * and length; a length it was not rounded for, exact mode, or a type
 * without the integer path is refused (0), so the caller falls back. */
TEST(matvec_int8_rounded_once_gives_mv_qs_bits) {
    const GgmlType types[] = {GGML_Q8_0, GGML_Q4_K, GGML_Q5_K, GGML_Q6_K};
    const int rows[] = {1, 2, 7}, ds[] = {256, 512, 2304};
    unsigned seed = 5;
    MvqX *xq = mv_q_x_new();
    CHECK(xq != NULL);
    if (!xq || !mv_q_int8_available(GGML_Q8_0)) {
        mv_q_x_free(xq);
        test_skip("this CPU lacks AVX-512 VNNI: the integer path does not exist here");
        return;
    }
    mv_q_set_int8(1);
    for (int k = 0; k < 4; k++)
        for (int r = 0; r < 3; r++)
            for (int di = 0; di < 3; di++) {
                int n = rows[r], d = ds[di];
                uint8_t *w = qfx_random_blocks(types[k], (size_t)n * d, 2, &seed, NULL);
                float *x = malloc((size_t)d * 4), a[7], b[7];
                for (int j = 0; j < d; j++) x[j] = frand(&seed) * (j % 3 ? 1 : 5);
                mv_q(a, types[k], w, x, n, d);
                CHECK_INT(mv_q_x_round(xq, x, d), 1);
                CHECK_INT(mv_q_rounded(b, types[k], w, xq, n, d), 1);
                CHECK_MSG(!memcmp(a, b, sizeof(float) * (size_t)n), "%s n=%d d=%d: %.9g vs %.9g",
                          gguf_type_name(types[k]), n, d, a[0], b[0]);
                CHECK_INT(mv_q_rounded(b, types[k], w, xq, n, d - 32), 0); /* not the length rounded */
                free(w), free(x);
            }
    CHECK_INT(mv_q_x_round(xq, (const float[32]){0}, 32), 1);
    CHECK_INT(mv_q_rounded((float[1]){0}, GGML_Q4_0, (const uint8_t[18]){0}, xq, 1, 32), 0); /* no integer Q4_0 */
    mv_q_set_int8(0);
    CHECK_INT(mv_q_x_round(xq, (const float[32]){0}, 32), 0);
    CHECK_INT(mv_q_rounded((float[1]){0}, GGML_Q8_0, (const uint8_t[34]){0}, xq, 1, 32), 0);
    mv_q_set_int8(1);
    mv_q_x_free(xq);
}

/* The integer path's quantiser against a scalar reference written here:
 * per 32 values dx = max|x|/127 and q = rint(x·(1/dx)), so every integer
 * and every sum must be equal and dx bit-equal; a block of zeros gives 0s. */
TEST(matvec_int8_activation_quantiser_matches_a_scalar_reference) {
    enum { D = 4128 };
    static float x[D], dx[D / 32];
    static int8_t q[D];
    static int32_t sum[D / 32];
    unsigned seed = 5;
    for (int j = 0; j < D; j++) x[j] = frand(&seed) * (float)(1 + j % 7) * (j / 32 % 5 == 3 ? 1e-3f : 1);
    for (int j = 64; j < 96; j++) x[j] = 0;
    x[200] = 1e30f, x[300] = -3.5f;
    mv_q_quantise_x(q, dx, sum, x, D);
    for (int b = 0; b < D / 32; b++) {
        float amax = 0;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[32 * b + j]));
        float s = amax / 127, id = s > 0 ? 1 / s : 0;
        int32_t t = 0;
        CHECK_MSG(dx[b] == s, "block %d: dx %g vs %g", b, dx[b], s);
        for (int j = 32 * b; j < 32 * b + 32; j++) {
            int v = (int)rintf(x[j] * id);
            t += v;
            CHECK_MSG(q[j] == v, "x[%d] = %g: q %d vs %d", j, x[j], q[j], v);
        }
        CHECK_MSG(sum[b] == t, "block %d: sum %d vs %d", b, sum[b], t);
    }
    CHECK(dx[2] == 0 && q[70] == 0 && sum[2] == 0);
}

/* The cached F16C answer is the CPU's own, on the first call and after it
 * (the kernels' choice of the half-float path rests on it; its speed, a
 * cpuid per attention head before, is bench's: engine/PERFORMANCE.md). */
TEST(matvec_f16c_answer_is_the_cpus_on_every_call) {
    unsigned a, b, c, d;
    int want = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    for (int i = 0; i < 3; i++) CHECK_MSG(mv_cpu_f16c() == want, "call %d: %d, cpuid says %d", i, mv_cpu_f16c(), want);
}
