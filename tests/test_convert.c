/* test_convert.c — `convert --to hf`: tensors, config, and the q/k rows reordered for rotate-half.
 *
 * `convert --to hf`: tensors, config, and the q/k row
 * reordering that turns llama2.c's interleaved RoPE into rotate-half. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/half.h"
#include "engine/model.h"
#include "engine/safetensors.h"
#include "test.h"

/* Score of head h at position p for input x: RoPE on pairs (2i, 2i+1)
 * (llama2.c) or on halves (i, i + hs/2) (HF), then q·k. */
static double rope_score(const float *wq, const float *wk, const float *x, int d, int hs, int h, int kvh, int p,
                         int halves) {
    double q[64], k[64], s = 0;
    for (int j = 0; j < hs; j++) {
        q[j] = k[j] = 0;
        for (int i = 0; i < d; i++) {
            q[j] += wq[((size_t)h * hs + j) * d + i] * x[i];
            k[j] += wk[((size_t)kvh * hs + j) * d + i] * x[i];
        }
    }
    for (int i = 0; i < hs / 2; i++) {
        double a = p * pow(10000.0, -2.0 * i / hs), c = cos(a), sn = sin(a);
        int u = halves ? i : 2 * i, v = halves ? i + hs / 2 : 2 * i + 1;
        double q0 = q[u], q1 = q[v], k0 = k[u], k1 = k[v];
        q[u] = q0 * c - q1 * sn, q[v] = q0 * sn + q1 * c;
        k[u] = k0 * c - k1 * sn, k[v] = k0 * sn + k1 * c;
    }
    for (int j = 0; j < hs; j++) s += q[j] * k[j];
    return s;
}

TEST(convert_hf_layout_and_rope_equivalence) {
    SKIP_UNLESS_SHARED();
    const char *src = test_stories_model();
    char out[1024], cmd[4096];
    snprintf(out, sizeof out, "%s", test_tmp("hf260"));
    snprintf(cmd, sizeof cmd, "%s convert --to hf --model %s --out %s", test_bin(), src, out);
    int st;
    free(test_run(cmd, &st));
    CHECK_INT(st, 0);
    Model m;
    Err e;
    CHECK(model_load(&m, src, &e) == 0);
    const Config *c = &m.c;
    StFile f;
    char path[1100];
    snprintf(path, sizeof path, "%s/model.safetensors", out);
    CHECK_MSG(st_open(&f, path, &e) == 0, "%s", e.msg);
    CHECK_INT(st_count(&f), 1 + 9 * c->n_layers + 1 + !c->shared_classifier);
    int64_t emb[2] = {c->vocab_size, c->dim}, q[2] = {c->dim, c->dim}, k[2] = {c->kv_dim, c->dim};
    const StTensor *te = st_expect(&f, "model.embed_tokens.weight", ST_F32, 2, emb, &e);
    CHECK(te && memcmp(te->data, m.w.token_embedding, te->nbytes) == 0);
    const StTensor *tq = st_expect(&f, "model.layers.2.self_attn.q_proj.weight", ST_F32, 2, q, &e);
    const StTensor *tk = st_expect(&f, "model.layers.2.self_attn.k_proj.weight", ST_F32, 2, k, &e);
    CHECK(tq && tk);
    if (tq && tk) {
        int d = c->dim, hs = c->head_size;
        const float *wq = m.w.wq + (size_t)2 * d * d, *wk = m.w.wk + (size_t)2 * c->kv_dim * d;
        float x[512];
        for (int i = 0; i < d; i++) x[i] = sinf(0.37f * i + 1.0f);
        double worst = 0;
        for (int h = 0; h < c->n_heads; h++)
            for (int p = 0; p < 300; p += 37) {
                int kvh = h / (c->n_heads / c->n_kv_heads);
                double a = rope_score(wq, wk, x, d, hs, h, kvh, p, 0);
                double b = rope_score(tq->data, tk->data, x, d, hs, h, kvh, p, 1);
                if (fabs(a - b) > worst) worst = fabs(a - b);
            }
        /* same products summed in a different order: only rounding differs */
        CHECK_MSG(worst < 1e-9, "scores differ by %g", worst);
    }
    st_close(&f);
    snprintf(path, sizeof path, "%s/config.json", out);
    char *js = test_read_file(path, NULL);
    cJSON *j = cJSON_Parse(js);
    CHECK(j && !strcmp(cJSON_GetObjectItem(j, "model_type")->valuestring, "llama"));
    CHECK(j && cJSON_GetObjectItem(j, "num_key_value_heads")->valueint == c->n_kv_heads);
    CHECK(j && cJSON_GetObjectItem(j, "head_dim")->valueint == c->head_size);
    CHECK(j && cJSON_IsBool(cJSON_GetObjectItem(j, "tie_word_embeddings")));
    cJSON_Delete(j);
    free(js);
    /* bf16: every value is the f32 one rounded to bf16 */
    snprintf(cmd, sizeof cmd, "%s convert --to hf --model %s --out %s_bf16 --dtype bf16", test_bin(), src, out);
    free(test_run(cmd, &st));
    CHECK_INT(st, 0);
    snprintf(path, sizeof path, "%s_bf16/model.safetensors", out);
    CHECK(st_open(&f, path, &e) == 0);
    const StTensor *tb = st_expect(&f, "model.norm.weight", ST_BF16, 1, (int64_t[]){c->dim}, &e);
    CHECK(tb != NULL);
    for (int i = 0; tb && i < c->dim; i++) {
        uint16_t h;
        memcpy(&h, (const char *)tb->data + 2 * i, 2);
        CHECK(h == half_f32_to_bf16(m.w.rms_final[i]));
    }
    st_close(&f);
    model_free(&m);
}

TEST(convert_rejects_bad_arguments) {
    /* usage errors exit 2, a file that cannot be read exits 1 */
    const struct { const char *args, *needle; int status; } bad[] = {
        {"convert --to onnx --model x.bin --out d", "--to must be hf or gguf", 2},
        {"convert --to hf --out d", "--model", 2},
        {"convert --to hf --model /nonexistent.bin --out d", "nonexistent.bin", 1},
        {"convert --to hf --model x --out d --dtype f8", "--dtype", 2},
        {"convert --bogus", "unknown flag", 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s %s", test_bin(), bad[i].args);
        int st;
        char *out = test_run(cmd, &st);
        CHECK_MSG(st == bad[i].status && strstr(out, bad[i].needle) && !strncmp(out, "ahascope convert: ", 18),
                  "%s -> %d %s", bad[i].args, st, out);
        free(out);
    }
}
