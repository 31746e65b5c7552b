/* test_families.c — qwen3 and mistral folders against the float64 NumPy reference, and their features' knock-outs.
 *
 * Each family's random folder is written by `ahascope bench --arch A
 * --save-hf` (so the flags are exercised), loaded back, and run by decode
 * (one token a step) and by one prefill over SEQ tokens with an f32 KV
 * cache; `make_hf.py --forward` computes the logits of the same folder in
 * float64 from the Hugging Face definitions. Held to FIX_TOL (1e-4, as
 * test_hf.c). A feature that matters must show: the reference with the
 * feature deliberately wrong (its variant) differs from the right one by
 * more than KNOCK_MIN, so a forward pass that left it out would fail.
 * Mistral's window is 8 over SEQ = 40 positions (5x the window).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/forward.h"
#include "tests/test.h"

#define FIX_TOL 1e-4
#define KNOCK_MIN 1e-2 /* a knocked-out feature moves some logit by more than this (measured >= 0.3) */
#define SEQ 40
#define VOCAB 300      /* >= 257: bench writes a byte-level tokenizer.json beside the folder */

/* The ids fed: a fixed scramble of the vocabulary, written to path. */
static void fam_tokens(int *tok, const char *path) {
    FILE *f = fopen(path, "w");
    for (int i = 0; i < SEQ; i++) {
        tok[i] = (i * 37 + 11) % VOCAB;
        if (f) fprintf(f, "%d\n", tok[i]);
    }
    if (f) fclose(f);
}

/* A random folder of arch written by bench with extra flags; its path, or NULL (failed). */
static const char *fam_folder(const char *name, const char *flags) {
    static char dir[700];
    snprintf(dir, sizeof dir, "%s", test_tmp(name));
    int st = -1;
    char *out = test_runf(&st, "%s bench %s --save-hf %s 2>&1", test_bin(), flags, dir);
    if (st != 0) test_fail(__FILE__, __LINE__, "bench %s: exit %d: %s", flags, st, out ? out : "");
    free(out);
    return st == 0 ? dir : NULL;
}

/* The reference logits [SEQ][VOCAB] of dir (variant NULL: the right model), or NULL. */
static double *fam_reference(const char *dir, const char *toks, const char *variant) {
    char out[800];
    snprintf(out, sizeof out, "%s.ref.json", toks);
    int st = -1;
    char *text = test_runf(&st, "'%s' tests/fixtures/hf/make_hf.py --forward '%s' '%s' '%s' %s 2>&1", test_python_numpy(), dir,
                           toks, out, variant ? variant : "");
    if (st != 0) test_fail(__FILE__, __LINE__, "make_hf.py --forward %s: %s", dir, text ? text : "");
    free(text);
    cJSON *j = st == 0 ? test_read_json(out) : NULL;
    const cJSON *rows = cJSON_GetObjectItem(j, "logits");
    double *ref = NULL;
    if (cJSON_GetArraySize(rows) == SEQ && (ref = malloc(sizeof(double) * SEQ * VOCAB)))
        for (int t = 0; t < SEQ; t++)
            for (int v = 0; v < VOCAB; v++) ref[t * VOCAB + v] = cJSON_GetArrayItem(cJSON_GetArrayItem(rows, t), v)->valuedouble;
    if (!ref) test_fail(__FILE__, __LINE__, "%s: no %d rows of logits", out, SEQ);
    cJSON_Delete(j);
    return ref;
}

/* ahascope's logits [SEQ][VOCAB] of m by decode steps or one prefill. */
static void fam_logits(const Model *m, const int *tok, int prefill, float *out) {
    RunState s;
    Err e = {0};
    if (fwd_init(&s, &m->c, SEQ, 2, &e) != 0) { test_fail(__FILE__, __LINE__, "fwd_init: %s", e.msg); return; }
    AttnConfig a = aha_defaults(); /* full attention where the architecture lets every key be read */
    if (prefill) fwd_forward(m, &s, &a, tok, SEQ, 0, out, NULL);
    for (int t = 0; !prefill && t < SEQ; t++) {
        fwd_forward(m, &s, &a, &tok[t], 1, t, NULL, NULL);
        memcpy(out + (size_t)t * VOCAB, s.logits, VOCAB * sizeof(float));
    }
    fwd_free(&s);
}

static double worst_f(const float *a, const double *b) {
    double w = 0;
    for (int i = 0; i < SEQ * VOCAB; i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= w)) w = d; /* NaN sticks */
    }
    return w;
}

static double worst_d(const double *a, const double *b) {
    double w = 0;
    for (int i = 0; i < SEQ * VOCAB; i++) w = fmax(w, fabs(a[i] - b[i]));
    return w;
}

/* The folder against its reference by decode and prefill, and each
 * variant's reference at least KNOCK_MIN away from the right one. */
static void fam_check(const char *name, const char *flags, const char *const *variants) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    const char *dir = fam_folder(name, flags);
    if (!dir) return;
    char toks[800];
    snprintf(toks, sizeof toks, "%s.ids", dir);
    int tok[SEQ];
    fam_tokens(tok, toks);
    double *ref = fam_reference(dir, toks, NULL);
    Model m;
    Err e = {0};
    if (!ref || model_load(&m, dir, &e) != 0) {
        if (ref) test_fail(__FILE__, __LINE__, "%s", e.msg);
        free(ref);
        return;
    }
    m.c.kv_dtype = DT_F32;
    float *got = malloc(sizeof(float) * SEQ * VOCAB);
    for (int prefill = 0; prefill < 2; prefill++) {
        fam_logits(&m, tok, prefill, got);
        double w = worst_f(got, ref);
        printf("  measured: %s %s vs float64 reference: max |dlogit| %.3g\n", name, prefill ? "prefill" : "decode", w);
        CHECK_MSG(w <= FIX_TOL, "%s (%s): logits differ from the reference by %g", name, prefill ? "prefill" : "decode", w);
    }
    for (int k = 0; variants && variants[k]; k++) {
        double *bad = fam_reference(dir, toks, variants[k]);
        double d = bad ? worst_d(bad, ref) : 0;
        printf("  measured: %s with %s: reference moves by %.3g\n", name, variants[k], d);
        CHECK_MSG(d > KNOCK_MIN, "%s: the %s variant moves the reference by only %g: the feature is not tested", name,
                  variants[k], d);
        free(bad);
    }
    free(got), free(ref);
    model_free(&m);
}

/* qwen3: per-head q/k RMSNorm with one [head_dim] gain (not one over the
 * whole projection), head_dim 24 apart from 64 / 4, GQA 4:2. */
TEST(fam_qwen3_matches_numpy_reference) {
    static const char *const variants[] = {"qk_norm_whole", NULL};
    fam_check("qwen3", "--arch qwen3 --dims 64,96,2,4,2,300,256 --head-dim 24", variants);
}

/* mistral: a window of 8 keys in every layer over 40 positions; the
 * reference without the window, or with it one key longer, is another model. */
TEST(fam_mistral_window_matches_numpy_reference) {
    static const char *const variants[] = {"no_window", "window_plus_one", NULL};
    fam_check("mistral", "--arch mistral --dims 64,96,2,4,2,300,256 --window-layers 8", variants);
}

/* The window is executed for every head whatever the policy: neither full
 * attention nor AHA's local policy with its own window 4 changes a layer
 * the architecture windows, so on mistral (every layer windowed) both give
 * the same logits bit for bit. */
TEST(fam_mistral_window_is_not_a_policy_choice) {
    const char *dir = fam_folder("mistral-pol", "--arch mistral --dims 64,96,2,4,2,300,256 --window-layers 8");
    if (!dir) return;
    Model m;
    Err e = {0};
    if (model_load(&m, dir, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    m.c.kv_dtype = DT_F32;
    int tok[SEQ];
    fam_tokens(tok, test_tmp("mistral-pol.ids"));
    float *a = malloc(sizeof(float) * SEQ * VOCAB), *b = malloc(sizeof(float) * SEQ * VOCAB);
    RunState s;
    AttnConfig full = aha_defaults(), local = aha_defaults();
    local.policy = POLICY_LOCAL, local.window = 4;
    CHECK(fwd_init(&s, &m.c, SEQ, 1, &e) == 0);
    fwd_forward(&m, &s, &full, tok, SEQ, 0, a, NULL);
    fwd_forward(&m, &s, &local, tok, SEQ, 0, b, NULL);
    fwd_free(&s);
    CHECK_MSG(!memcmp(a, b, sizeof(float) * SEQ * VOCAB), "the policy changed a layer the architecture windows");
    free(a), free(b);
    model_free(&m);
}

/* Config values ahascope does not model are one line naming the field. */
TEST(fam_config_refusals_name_the_field) {
    const char *dir = fam_folder("qwen3-bad", "--arch qwen3 --dims 64,96,1,4,2,300,64");
    if (!dir) return;
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "sed -i 's/\"use_sliding_window\":\tfalse/\"use_sliding_window\": true/' %s/config.json && %s info --model %s",
             dir, test_bin(), dir);
    CHECK_REFUSAL(cmd, 1, NULL, "use_sliding_window", 1);
    const char *md = fam_folder("mistral-bad", "--arch mistral --dims 64,96,1,4,2,300,64 --window-layers 8");
    if (!md) return;
    snprintf(cmd, sizeof cmd, "sed -i 's/\"sliding_window\":\t8/\"sliding_window\": \"8\"/' %s/config.json && %s info --model %s",
             md, test_bin(), md);
    CHECK_REFUSAL(cmd, 1, NULL, "sliding_window must be a whole number", 1);
    snprintf(cmd, sizeof cmd, "%s bench --arch qwen3 --dims 64,96,1,4,2,300,64 --window-layers 8 --save-hf %s", test_bin(),
             test_tmp("never"));
    CHECK_REFUSAL(cmd, -1, NULL, "--window-layers needs --arch mistral", 1);
}

/* `info` states each layer's attention kind, one line per distinct kind. */
TEST(fam_info_prints_layer_kinds) {
    const char *dir = fam_folder("mistral-info", "--arch mistral --dims 64,96,3,4,2,300,64 --window-layers 8");
    if (!dir) return;
    char *out = test_runf(NULL, "%s info --model %s", test_bin(), dir);
    CHECK_MSG(out && strstr(out, "\nlayers        3 local (window 8)\n"), "info: %s", out ? out : "");
    free(out);
    dir = fam_folder("qwen3-info", "--arch qwen3 --dims 64,96,2,4,2,300,64");
    out = dir ? test_runf(NULL, "%s info --model %s", test_bin(), dir) : NULL;
    CHECK_MSG(out && strstr(out, "\nlayers        2 global\n"), "info: %s", out ? out : "");
    free(out);
}
