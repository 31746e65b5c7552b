/* test_attn_kernels.c — attention's inner loops against double references, for every cache dtype.
 *
 * Attention's inner loops against double references:
 * the kernel exponential against exp(), scores and the softmax-weighted
 * value sum for every cache dtype, head sizes on both the vector path
 * (multiples of 16) and the portable one, and key counts around the
 * 16-key blocks. Cached elements are widened exactly, so only summation
 * order and the exponential separate kernel and reference: 2e-6 relative
 * to the sum of magnitudes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attn_kernels.h"
#include "engine/forward.h"
#include "engine/half.h"
#include "engine/model.h"
#include "tests/test.h"

static float frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

TEST(attn_exp_within_one_ulp_of_exp) {
    enum { N = 20001 };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) x[i] = -87.0f + 97.0f * i / (N - 1); /* [-87, 10]: normal results */
    attn_exp(y, x, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double ref = exp((double)x[i]), ulp = ldexp(1.0, ilogb(ref) - 23);
        double err = fabs(y[i] - ref) / ulp;
        if (err > worst) worst = err;
    }
    CHECK_MSG(worst <= 1.0, "attn_exp is %g ulp from exp", worst); /* measured 0.87 */
    float edge[5] = {NAN, -200.0f, 100.0f, 0.0f, -104.0f}, out[5];
    attn_exp(out, edge, 5);
    CHECK(isnan(out[0]));
    CHECK(out[1] == 0.0f);
    CHECK(isinf(out[2]) && out[2] > 0);
    CHECK(out[3] == 1.0f);
    CHECK(out[4] >= 0.0f && out[4] < 1e-44f);
    free(x);
    free(y);
}

/* Keys/values of n positions (stride elements apart) in dtype dt, and
 * their exact f32 values. */
static void *make_cache(int dt, int n, int stride, unsigned *seed, float *wide) {
    size_t count = (size_t)n * stride;
    void *p = malloc(count * model_dtype_size(dt));
    for (size_t i = 0; i < count; i++) {
        float v = 2 * frand(seed);
        if (dt == DT_F32) ((float *)p)[i] = wide[i] = v;
        else if (dt == DT_BF16) wide[i] = half_bf16_to_f32(((uint16_t *)p)[i] = half_f32_to_bf16(v));
        else wide[i] = half_f16_to_f32(((uint16_t *)p)[i] = half_f32_to_f16(v));
    }
    return p;
}

/* One (dtype, head size, count, stride) case: scores and their max, then
 * the weighted sum and normaliser, each against a double reference. */
static void check_case(int dt, int hs, int n, int stride, unsigned *seed) {
    float *kw = malloc((size_t)n * stride * 4), *vw = malloc((size_t)n * stride * 4);
    void *k = make_cache(dt, n, stride, seed, kw), *v = make_cache(dt, n, stride, seed, vw);
    float q[256], *s = malloc((size_t)n * 4), acc[256];
    for (int j = 0; j < hs; j++) q[j] = frand(seed), acc[j] = 0.25f;
    float scale = 0.125f, m = attn_scores(s, q, k, dt, stride, hs, n, scale);
    double ref_m = -INFINITY;
    for (int i = 0; i < n; i++) {
        double dot = 0, mag = 0;
        for (int j = 0; j < hs; j++) dot += (double)q[j] * kw[(size_t)i * stride + j], mag += fabs(q[j] * kw[(size_t)i * stride + j]);
        CHECK_MSG(fabs(s[i] - dot * scale) <= 2e-6 * mag * scale + 1e-12, "dt %d hs %d n %d: score %d is %g, want %g", dt,
                  hs, n, i, s[i], dot * scale);
        if (s[i] > ref_m) ref_m = s[i];
    }
    CHECK_MSG(m == (float)ref_m, "dt %d hs %d n %d: max %g, want %g", dt, hs, n, m, ref_m);
    double z = attn_softmax_wsum(acc, s, m, v, dt, stride, hs, n), ref_z = 0;
    double ref[256] = {0}, mag[256] = {0};
    for (int i = 0; i < n; i++) {
        double e = exp((double)s[i] - m);
        ref_z += e;
        for (int j = 0; j < hs; j++) ref[j] += e * vw[(size_t)i * stride + j], mag[j] += e * fabs(vw[(size_t)i * stride + j]);
    }
    CHECK_MSG(fabs(z - ref_z) <= 2e-6 * ref_z, "dt %d hs %d n %d: z %g, want %g", dt, hs, n, z, ref_z);
    for (int j = 0; j < hs; j++)
        CHECK_MSG(fabs(acc[j] - 0.25 - ref[j]) <= 2e-6 * (mag[j] + 0.25), "dt %d hs %d n %d: acc[%d] %g, want %g", dt, hs,
                  n, j, acc[j] - 0.25, ref[j]);
    free(kw), free(vw), free(k), free(v), free(s);
}

TEST(attn_kernels_match_reference_for_every_dtype_and_tail) {
    const int dts[] = {DT_F32, DT_BF16, DT_F16}, hss[] = {16, 24, 64, 128, 256}, ns[] = {1, 15, 16, 17, 40, 100};
    unsigned seed = 11;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 6; c++) {
                check_case(dts[a], hss[b], ns[c], hss[b], &seed);
                check_case(dts[a], hss[b], ns[c], hss[b] + 16, &seed); /* keys apart, as in a strided cache */
            }
    CHECK(attn_scores(NULL, NULL, NULL, DT_F32, 16, 16, 0, 1.0f) == -INFINITY);
    CHECK(attn_softmax_wsum(NULL, NULL, 0, NULL, DT_F32, 16, 16, 0) == 0);
}

/* A key's score must not depend on the range it was computed in: the
 * global head path scores [0, t] in one call, the profiled path in three
 * pieces, and both must give bit-identical outputs. */
TEST(attn_scores_do_not_depend_on_the_range) {
    unsigned seed = 5;
    int hs = 64, n = 53;
    float *kw = malloc((size_t)n * hs * 4), q[64], whole[53], parts[53];
    void *k = make_cache(DT_BF16, n, hs, &seed, kw);
    for (int j = 0; j < hs; j++) q[j] = frand(&seed);
    attn_scores(whole, q, k, DT_BF16, hs, hs, n, 0.125f);
    const int cut[] = {0, 3, 21, 53};
    for (int p = 0; p < 3; p++)
        attn_scores(parts + cut[p], q, (const uint16_t *)k + (size_t)cut[p] * hs, DT_BF16, hs, hs, cut[p + 1] - cut[p],
                    0.125f);
    CHECK(memcmp(whole, parts, sizeof whole) == 0);
    free(kw), free(k);
}

/* The cache stores rows in its own dtype: a round trip rounds like the
 * safetensors converters do and keeps NaN a NaN. */
TEST(kv_cache_rows_round_trip_in_each_dtype) {
    Config c = {.dim = 32, .hidden_dim = 64, .n_layers = 2, .n_heads = 2, .n_kv_heads = 1, .vocab_size = 16,
                .seq_len = 8, .head_size = 16, .kv_dim = 16, .q_dim = 32, .rope_theta = 10000, .norm_eps = 1e-5f};
    const int dts[] = {DT_F32, DT_BF16, DT_F16};
    for (int d = 0; d < 3; d++) {
        c.kv_dtype = dts[d];
        RunState s;
        Err e;
        CHECK(fwd_init(&s, &c, 1, 1, &e) == 0);
        float in[16], out[16];
        unsigned seed = 3;
        for (int j = 0; j < 16; j++) in[j] = 3 * frand(&seed);
        in[5] = NAN;
        fwd_kv_set(&s, 1, 1, 0, 7, in);
        fwd_kv_get(&s, 1, 1, 0, 7, out);
        for (int j = 0; j < 16; j++) {
            if (j == 5) { CHECK(isnan(out[j])); continue; }
            float want = dts[d] == DT_F32 ? in[j] : dts[d] == DT_BF16 ? half_bf16_to_f32(half_f32_to_bf16(in[j]))
                                                                      : half_f16_to_f32(half_f32_to_f16(in[j]));
            CHECK_MSG(out[j] == want, "dtype %d element %d: %g, want %g", dts[d], j, out[j], want);
        }
        fwd_free(&s);
    }
    c.kv_dtype = 7;
    RunState s;
    Err e;
    CHECK(fwd_init(&s, &c, 1, 1, &e) != 0);
    CHECK(strstr(e.msg, "KV cache dtype") != NULL);
}
