/* test_hf.c — Hugging Face folders against an independent reference.
 *
 * tests/fixtures/hf/make_hf.py writes tiny random checkpoints (llama with
 * GQA, head_dim apart from hidden/heads, llama3 RoPE scaling and an untied
 * classifier; qwen2 with q/k/v biases and tied embeddings; olmo2; faolmo
 * with its fused router rows), in F32, BF16, F16 and sharded copies, and
 * the logits a float64 NumPy forward gives for 12 tokens. The reference
 * uses the stored (rounded) weights and exact keys and values, so every
 * dtype is held to 1e-4 on logits with an f32 KV cache; decode (one token a
 * step) and prefill (one batch) are both run, prefill on the exact path
 * (bf16 weights widened to f32). A half model's own cache (its default)
 * rounds keys and values as well: held to HALF_KV_TOL. bf16's fast prefill
 * rounds activations too: held to FAST_TOL.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/forward.h"
#include "tests/test.h"

#define FIX_TOL 1e-4
#define HALF_KV_TOL 0.05 /* logits of magnitude ~1-3; measured 0.015 (bf16), 0.0018 (f16) */
#define FAST_TOL 0.1     /* measured 0.023 (llama-bf16), 0.019 (faolmo-bf16), AMX and AVX-512 BF16 alike */

static const char *fixture_dir(void) {
    static char dir[600];
    static int made = -1;
    if (made >= 0) return made ? dir : NULL;
    made = 0;
    const char *py = test_python_numpy();
    if (!py) return NULL;
    snprintf(dir, sizeof dir, "%s", test_tmp("hf"));
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "'%s' tests/fixtures/hf/make_hf.py '%s' >/dev/null", py, dir);
    int st;
    char *out = test_run(cmd, &st);
    if (st != 0) test_fail(__FILE__, __LINE__, "make_hf.py failed: %s", out ? out : "");
    free(out);
    made = st == 0;
    return made ? dir : NULL;
}

#define NEED_FIXTURES(dir)                                                              \
    const char *dir = fixture_dir();                                                    \
    if (!dir) {                                                                         \
        if (!test_python_numpy()) test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); \
        return;                                                                         \
    }

static cJSON *load_json(const char *path) { return test_read_json(path); }

/* Logits of every position, by decode steps (prefill = 0) or one batch
 * whose bf16 products take path gemm. */
static int run_logits(const Model *m, const AttnConfig *a, const int *tok, int n, int prefill, GemmPath gemm,
                      float *out, StepTrace **tr) {
    RunState s;
    Err e;
    if (fwd_init(&s, &m->c, n, 2, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); return -1; }
    if (m->c.dtype == DT_BF16 && fwd_set_gemm(&s, gemm) != 0) {
        test_fail(__FILE__, __LINE__, "gemm path %s refused", gemm_half_name(gemm));
        fwd_free(&s);
        return -1;
    }
    if (prefill) {
        fwd_forward(m, &s, a, tok, n, 0, out, tr);
    } else {
        for (int t = 0; t < n; t++) {
            fwd_forward(m, &s, a, &tok[t], 1, t, NULL, tr ? &tr[t] : NULL);
            memcpy(out + (size_t)t * m->c.vocab_size, s.logits, m->c.vocab_size * sizeof(float));
        }
    }
    fwd_free(&s);
    return 0;
}

static double worst_vs(const float *got, const cJSON *rows, int n, int V) {
    double w = 0;
    for (int t = 0; t < n; t++)
        for (int v = 0; v < V; v++) {
            double d = fabs(got[(size_t)t * V + v] - cJSON_GetArrayItem(cJSON_GetArrayItem(rows, t), v)->valuedouble);
            if (!(d <= w)) w = d;
        }
    return w;
}

/* Load folder root/name and its expected.json: the model, the reference
 * and its tokens (at most 64). Returns the reference, or NULL (failed). */
static cJSON *open_case(const char *root, const char *name, Model *m, int *tok, int *n) {
    char dir[800], path[900];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *ex = load_json(path);
    Err e;
    if (!ex) return NULL;
    if (model_load(m, dir, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); cJSON_Delete(ex); return NULL; }
    m->c.kv_dtype = DT_F32; /* exact keys and values, as the reference keeps them */
    const cJSON *toks = cJSON_GetObjectItem(ex, "tokens");
    *n = cJSON_GetArraySize(toks);
    if (*n > 64) *n = 64;
    for (int i = 0; i < *n; i++) tok[i] = cJSON_GetArrayItem(toks, i)->valueint;
    return ex;
}

/* One folder: full-attention logits by decode and by prefill. */
static void check_folder(const char *root, const char *name) {
    Model m;
    int n, tok[64];
    cJSON *ex = open_case(root, name, &m, tok, &n);
    if (!ex) return;
    const cJSON *logits = cJSON_GetObjectItem(ex, "logits");
    int V = m.c.vocab_size;
    float *out = malloc((size_t)n * V * sizeof(float));
    AttnConfig a = aha_defaults(); /* full attention */
    for (int half_kv = 0; half_kv < (m.c.dtype != DT_F32 ? 2 : 1); half_kv++) {
        m.c.kv_dtype = half_kv ? m.c.dtype : DT_F32;
        for (int prefill = 0; prefill < 2; prefill++) {
            if (run_logits(&m, &a, tok, n, prefill, GEMM_EXACT, out, NULL) != 0) break;
            double w = worst_vs(out, logits, n, V), tol = half_kv ? HALF_KV_TOL : FIX_TOL;
            CHECK_MSG(w <= tol, "%s (%s, kv %s): logits differ from the reference by %g", name,
                      prefill ? "prefill" : "decode", model_dtype_name(m.c.kv_dtype), w);
        }
    }
    free(out);
    model_free(&m);
    cJSON_Delete(ex);
}

TEST(hf_llama_gqa_head_dim_llama3_rope_untied_matches_reference) {
    NEED_FIXTURES(dir);
    check_folder(dir, "llama");
}

TEST(hf_qwen2_biases_tied_matches_reference) {
    NEED_FIXTURES(dir);
    check_folder(dir, "qwen2");
}

TEST(hf_olmo2_postnorms_qknorm_matches_reference) {
    NEED_FIXTURES(dir);
    check_folder(dir, "olmo2");
}

TEST(hf_faolmo_full_attention_matches_reference) {
    NEED_FIXTURES(dir);
    check_folder(dir, "faolmo");
}

TEST(hf_bf16_f16_and_sharded_copies_match_reference) {
    NEED_FIXTURES(dir);
    const char *names[] = {"llama-bf16", "llama-f16", "faolmo-bf16", "llama-sharded", "faolmo-sharded"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) check_folder(dir, names[i]);
}

/* KL(p‖q) of the softmaxes of two logit rows. */
static double kl_rows(const double *p, const double *q, int V) {
    double mp = p[0], mq = q[0], zp = 0, zq = 0, kl = 0;
    for (int v = 1; v < V; v++) mp = fmax(mp, p[v]), mq = fmax(mq, q[v]);
    for (int v = 0; v < V; v++) zp += exp(p[v] - mp), zq += exp(q[v] - mq);
    for (int v = 0; v < V; v++) {
        double lp = p[v] - mp - log(zp), lq = q[v] - mq - log(zq);
        kl += exp(lp) * (lp - lq);
    }
    return kl;
}

/* Worst |Δ logit| and worst per-token KL(a‖b) over n rows of V. */
static void compare_rows(const double *a, const double *b, int n, int V, double *worst, double *kl) {
    *worst = *kl = 0;
    for (int t = 0; t < n; t++) {
        for (int v = 0; v < V; v++) *worst = fmax(*worst, fabs(a[(size_t)t * V + v] - b[(size_t)t * V + v]));
        *kl = fmax(*kl, kl_rows(a + (size_t)t * V, b + (size_t)t * V, V));
    }
}

/* A bf16 folder's prefill on each fast path against the float64 reference
 * and against the exact path (f32 activations): the rounding of
 * activations must stay within FAST_TOL and must be visible (the path ran). */
static void check_fast(const char *root, const char *name) {
    Model m;
    int n, tok[64];
    cJSON *ex = open_case(root, name, &m, tok, &n);
    if (!ex) return;
    int V = m.c.vocab_size;
    size_t N = (size_t)n * V;
    float *out = malloc(N * sizeof(float));
    double *ref = malloc(N * sizeof(double)), *exact = malloc(N * sizeof(double)), *fast = malloc(N * sizeof(double));
    const cJSON *rows = cJSON_GetObjectItem(ex, "logits");
    for (size_t i = 0; i < N; i++) ref[i] = cJSON_GetArrayItem(cJSON_GetArrayItem(rows, (int)(i / V)), (int)(i % V))->valuedouble;
    AttnConfig a = aha_defaults();
    if (run_logits(&m, &a, tok, n, 1, GEMM_EXACT, out, NULL) == 0)
        for (size_t i = 0; i < N; i++) exact[i] = out[i];
    for (GemmPath p = GEMM_AVX512BF16; p <= GEMM_AMX; p++) {
        if (!gemm_half_available(p) || run_logits(&m, &a, tok, n, 1, p, out, NULL) != 0) continue;
        for (size_t i = 0; i < N; i++) fast[i] = out[i];
        double w_ref, kl_ref, w_ex, kl_ex, w_exref, kl_exref;
        compare_rows(ref, fast, n, V, &w_ref, &kl_ref);
        compare_rows(exact, fast, n, V, &w_ex, &kl_ex);
        compare_rows(ref, exact, n, V, &w_exref, &kl_exref);
        CHECK_MSG(w_ref <= FAST_TOL, "%s (%s prefill): logits differ from the reference by %g", name, gemm_half_name(p), w_ref);
        CHECK_MSG(w_ex > 0, "%s: the %s prefill gave the exact path's logits to the bit", name, gemm_half_name(p));
        printf("      %s %s: max|dlogit| vs float64 %.3g (exact path %.3g), vs exact %.3g; "
               "KL(float64||fast) %.3g (exact %.3g), KL(exact||fast) %.3g per token at most\n",
               name, gemm_half_name(p), w_ref, w_exref, w_ex, kl_ref, kl_exref, kl_ex);
    }
    free(out), free(ref), free(exact), free(fast);
    model_free(&m);
    cJSON_Delete(ex);
}

TEST(hf_bf16_fast_prefill_within_activation_rounding_of_reference) {
    NEED_FIXTURES(dir);
    if (!gemm_half_available(GEMM_AVX512BF16) && !gemm_half_available(GEMM_AMX)) {
        test_skip("no AVX-512 BF16 or AMX on this CPU");
        return;
    }
    check_fast(dir, "llama-bf16");
    check_fast(dir, "faolmo-bf16");
}

/* Sharded and unsharded copies hold the same bytes: logits identical to the bit. */
TEST(hf_sharded_equals_unsharded_exactly) {
    NEED_FIXTURES(dir);
    const char *pairs[][2] = {{"llama", "llama-sharded"}, {"faolmo", "faolmo-sharded"}};
    for (int p = 0; p < 2; p++) {
        float *out[2] = {NULL, NULL};
        int n = 12, tok[12] = {1, 5, 9, 17, 33, 2, 64, 80, 3, 4, 90, 7}, V = 0;
        for (int k = 0; k < 2; k++) {
            char d[800];
            Model m;
            Err e;
            snprintf(d, sizeof d, "%s/%s", dir, pairs[p][k]);
            if (model_load(&m, d, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); continue; }
            V = m.c.vocab_size;
            out[k] = malloc((size_t)n * V * sizeof(float));
            AttnConfig a = aha_defaults();
            run_logits(&m, &a, tok, n, 1, GEMM_EXACT, out[k], NULL);
            model_free(&m);
        }
        CHECK(out[0] && out[1] && memcmp(out[0], out[1], (size_t)n * V * sizeof(float)) == 0);
        free(out[0]);
        free(out[1]);
    }
}

/* faolmo under its own routers at window 4: router scores, the gates they
 * give (a score within 1e-5 of tau may fall either way and is not judged)
 * and the logits of the hard-selected mix of full and windowed heads. */
static void check_faolmo_aha(const char *root, const char *name) {
    Model m;
    int n, tok[64];
    cJSON *ex = open_case(root, name, &m, tok, &n);
    if (!ex) return;
    CHECK_INT(m.builtin_routers, 1);
    CHECK_INT(m.default_window, 128);
    const cJSON *aha = cJSON_GetObjectItem(ex, "aha");
    int V = m.c.vocab_size, L = m.c.n_layers, H = m.c.n_heads;
    AttnConfig a = aha_defaults();
    a.policy = POLICY_AHA, a.model_routers = 1;
    a.window = cJSON_GetObjectItem(aha, "window")->valueint;
    a.tau = (float)cJSON_GetObjectItem(aha, "tau")->valuedouble;
    float *out = malloc((size_t)n * V * sizeof(float));
    StepTrace *tr[64];
    for (int t = 0; t < n; t++) tr[t] = trace_new(L, H);
    for (int prefill = 0; prefill < 2; prefill++) {
        run_logits(&m, &a, tok, n, prefill, GEMM_EXACT, out, tr);
        double w = worst_vs(out, cJSON_GetObjectItem(aha, "logits"), n, V), ws = 0;
        int wrong = 0, globals = 0;
        for (int t = 0; t < n; t++)
            for (int l = 0; l < L; l++)
                for (int h = 0; h < H; h++) {
                    double ref = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(aha, "scores"), t), l), h)->valuedouble;
                    int g = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(aha, "gates"), t), l), h)->valueint;
                    float got = tr[t]->score[l * H + h];
                    ws = fmax(ws, fabs(got - ref));
                    globals += g;
                    if (fabs(ref - a.tau) > 1e-5 && tr[t]->gate[l * H + h] != g) wrong++;
                }
        CHECK_MSG(ws <= 1e-5, "%s: router scores differ by %g", name, ws);
        CHECK_MSG(wrong == 0, "%s: %d gates differ from the reference", name, wrong);
        CHECK_MSG(w <= FIX_TOL, "%s (%s): AHA logits differ from the reference by %g", name, prefill ? "prefill" : "decode", w);
        CHECK_MSG(globals > 0 && globals < n * L * H, "%s: the fixture should mix global and local heads (%d global)", name, globals);
    }
    for (int t = 0; t < n; t++) trace_free(tr[t]);
    free(out);
    model_free(&m);
    cJSON_Delete(ex);
}

TEST(hf_faolmo_router_scores_gates_and_aha_logits_match_reference) {
    NEED_FIXTURES(dir);
    check_faolmo_aha(dir, "faolmo");
    check_faolmo_aha(dir, "faolmo-bf16");
}
