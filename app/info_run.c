/* info_run.c — `ahascope info`'s description of a model (app/info_run.h). */
#include "app/info_run.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/info_gguf.h"
#include "app/setup.h"
#include "engine/textout.h"
#include "engine/tokenize/tokenize.h"

/* Parameters the checkpoint stores: matrices, norms, biases, QK-norms, router rows. */
static size_t count_params(const Model *m) {
    const Config *c = &m->c;
    size_t n = model_n_params(c);
    const LayerWeights *lw = m->layers;
    size_t qk = c->qk_norm_head ? 2 * (size_t)c->head_size : (size_t)c->q_dim + c->kv_dim; /* per head: one gain each */
    size_t post = lw->attn_norm && lw->post_attn_norm ? 2 * (size_t)c->dim : 0;           /* Gemma's extra norms */
    size_t per = (lw->bq ? (size_t)c->q_dim + 2 * c->kv_dim : 0) + (lw->q_norm ? qk : 0) + post +
                 (m->builtin_routers ? (size_t)c->n_heads * c->dim : 0);
    return n + per * c->n_layers;
}

static const char *router_text(const AppLoaded *L, const RunOpts *o, char *buf, size_t cap) {
    if (o->routers) snprintf(buf, cap, "file %s (window %d)", o->routers, o->attn.window);
    else if (L->model.builtin_routers)
        snprintf(buf, cap, "built-in (fused into q_proj, window %d)", L->model.default_window);
    else snprintf(buf, cap, "none (train some with `ahascope train`, or pass --routers)");
    return buf;
}

static const char *tok_text(const AppLoaded *L, char *buf, size_t cap) {
    if (!L->have_tok) snprintf(buf, cap, "none found (pass --tokenizer PATH)");
    else if (L->tok.hf) snprintf(buf, cap, "%s (%s)", hftok_describe(L->tok.hf), L->tok_path);
    else snprintf(buf, cap, "llama2.c tokenizer.bin, %d ids (%s)", L->tok.vocab_size, L->tok_path);
    return buf;
}

/* Each distinct attention kind of the layers with its count
 * (model_layer_kinds_text): "22 local (window 512), 4 global". */
static const char *layer_kinds(const Model *m, char *buf, size_t cap) {
    int32_t win[MODEL_MAX_LAYERS];
    model_layer_windows(m, win);
    model_layer_kinds_text(win, m->c.n_layers, buf, cap);
    return buf;
}

static void print_text(const AppLoaded *L, const RunOpts *o) {
    const Model *m = &L->model;
    const Config *c = &m->c;
    char rb[1300], tb[1400], safe[4 * 1400 + 1]; /* paths and file fields: escaped for the terminal */
    printf("model         %s\n", textout_term(L->model_path, safe, sizeof safe));
    printf("format        %s\n", m->version == 2 ? "Hugging Face folder" : m->version == 1 ? "llama2.c v1 (ak42)" : "llama2.c v0");
    printf("architecture  %s\n", m->arch_name);
    printf("dims          dim %d, hidden %d, layers %d, heads %d, kv_heads %d, head_size %d, vocab %d\n", c->dim,
           c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->head_size, c->vocab_size);
    char kinds[400];
    printf("layers: %s\n", layer_kinds(m, kinds, sizeof kinds));
    printf("context       %d\n", c->seq_len);
    printf("dtype         %s\n", model_dtype_name(c->dtype));
    printf("kv cache      %s, %.1f MB at the full context\n", model_dtype_name(c->kv_dtype), model_kv_bytes(c, c->seq_len) / 1e6);
    printf("parameters    %zu (%.2f M)\n", count_params(m), count_params(m) / 1e6);
    printf("bytes         %zu on disk, %zu streamed per decode step\n", m->file_bytes, model_decode_bytes(c));
    printf("classifier    %s\n", c->shared_classifier ? "tied to the embedding" : "separate (lm_head)");
    printf("rope          %s pairs, theta %g%s%s\n", c->rope_half ? "rotate-half" : "adjacent", c->rope_theta,
           c->rope_factor > 0 ? ", llama3 scaling" : "",
           !c->rope_ext ? "" : c->rope_ext == c->rope_long ? ", longrope (long factors: the context passes the original)"
                                                         : ", longrope (short factors: the context is within the original)");
    printf("norm_eps      %g\n", c->norm_eps);
    printf("tokenizer     %s\n", textout_term(tok_text(L, tb, sizeof tb), safe, sizeof safe));
    printf("routers       %s\n", textout_term(router_text(L, o, rb, sizeof rb), safe, sizeof safe));
}

static void print_json(const AppLoaded *L, const RunOpts *o) {
    const Model *m = &L->model;
    const Config *c = &m->c;
    char rb[1300], tb[1400];
    /* every string printed here is ours or a path; paths may hold any bytes: engine/textout.h */
    printf("{\"architecture\": \"%s\", \"dim\": %d, \"hidden_dim\": %d, \"n_layers\": %d, \"n_heads\": %d, "
           "\"n_kv_heads\": %d, \"head_size\": %d, \"vocab_size\": %d, \"context\": %d, \"dtype\": \"%s\", "
           "\"kv_dtype\": \"%s\", \"kv_cache_bytes\": %zu, "
           "\"parameters\": %zu, \"file_bytes\": %zu, \"decode_bytes\": %zu, \"tied\": %s, \"builtin_routers\": %s, "
           "\"tokenizer\": ",
           m->arch_name, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->head_size, c->vocab_size,
           c->seq_len, model_dtype_name(c->dtype), model_dtype_name(c->kv_dtype), model_kv_bytes(c, c->seq_len), count_params(m), m->file_bytes, model_decode_bytes(c),
           c->shared_classifier ? "true" : "false", m->builtin_routers ? "true" : "false");
    textout_json_print(stdout, tok_text(L, tb, sizeof tb));
    char kinds[400];
    printf(", \"layer_kinds\": \"%s\"", layer_kinds(m, kinds, sizeof kinds));
    printf(", \"routers\": ");
    textout_json_print(stdout, router_text(L, o, rb, sizeof rb));
    printf("}\n");
}

int info_run(RunOpts *o, int json, Err *e) {
    char mp[1024];
    if (app_model_path(o->model, mp, sizeof mp, e) == 0 && info_is_gguf(mp)) /* described from its header */
        return info_gguf(mp, json, e);
    AppLoaded L;
    setenv("AHASCOPE_WEIGHTS", "map", 0); /* info reads no weights: copying them would only cost time */
    if (app_load(o, &L, 0, e) != 0) { app_unload(&L); return -1; }
    /* a tokenizer that is there must load; one that is missing is only reported */
    char p[1100];
    if (L.model.version == 2) snprintf(p, sizeof p, "%.1000s/tokenizer.json", L.model_path);
    int present = o->tokenizer || (L.model.version == 2 ? access(p, F_OK) == 0
                                  : app_find_tokenizer(L.model_path, L.model.c.vocab_size, p, sizeof p) == 0);
    if (present && !L.have_tok && app_load_tokenizer(o, &L, e) != 0) { app_unload(&L); return -1; }
    if (json) print_json(&L, o);
    else print_text(&L, o);
    app_unload(&L);
    return 0;
}
