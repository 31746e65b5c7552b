/* `ahascope convert --to hf`: a llama2.c checkpoint as a Hugging Face llama
 * folder (config.json, generation_config.json, model.safetensors), so the
 * converted model can be checked against the original.
 *
 * llama2.c rotates adjacent pairs (q[2i], q[2i+1]); HF llama rotates halves
 * (q[i], q[i + d/2]). Reordering each head's rows of W_q and W_k from
 * "pairs" to "halves" makes the two give the same attention scores.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/setup.h"
#include "engine/files.h"
#include "engine/model.h"
#include "engine/safetensors.h"

static void convert_help(void) {
    puts("usage: ahascope convert --to hf --model FILE.bin --out DIR [--dtype f32|bf16|f16]\n\n"
         "Write a llama2.c checkpoint as a Hugging Face llama folder: config.json, generation_config.json\n"
         "and model.safetensors (default f32). The q/k rows of every head are reordered from llama2.c's\n"
         "interleaved RoPE pairs to HF's rotate-half layout. The tokenizer is not converted: pass\n"
         "--tokenizer tok512.bin (or the model's tokenizer.bin) when running the folder.");
}

/* Rows of one [n_heads*hs][dim] matrix per layer, pairs → halves per head. */
static void permute_rope_rows(float *dst, const float *src, int n_heads, int hs, int dim) {
    for (int h = 0; h < n_heads; h++)
        for (int j = 0; j < hs; j++) {
            int from = j < hs / 2 ? 2 * j : 2 * (j - hs / 2) + 1;
            memcpy(dst + ((size_t)h * hs + j) * dim, src + ((size_t)h * hs + from) * dim, (size_t)dim * sizeof(float));
        }
}

typedef struct {
    StWriter w;
    StDtype dt;
    void **owned; /* converted copies, freed after writing */
    int n_owned, cap_owned;
} Out;

static void *keep(Out *o, void *p) {
    if (!p) return NULL;
    if (o->n_owned == o->cap_owned) {
        int cap = o->cap_owned ? 2 * o->cap_owned : 64;
        void **grown = realloc(o->owned, cap * sizeof *grown);
        if (!grown) { free(p); return NULL; }
        o->owned = grown, o->cap_owned = cap;
    }
    return o->owned[o->n_owned++] = p;
}

/* Queue n floats as a tensor in the output dtype (a converted copy if not f32). */
static int add(Out *o, const char *name, const float *v, int ndim, int64_t d0, int64_t d1, Err *e) {
    int64_t shape[2] = {d0, d1};
    size_t n = (size_t)d0 * (ndim == 2 ? (size_t)d1 : 1);
    const void *data = v;
    if (o->dt != ST_F32) {
        uint16_t *h = keep(o, malloc(n * sizeof *h));
        if (!h) return err_set(e, "out of memory");
        st_f32_to_half_n(h, v, n, o->dt == ST_BF16);
        data = h;
    }
    return st_writer_add(&o->w, name, o->dt, ndim, shape, data, e);
}

static int add_layer(Out *o, const Model *m, int l, Err *e) {
    const Config *c = &m->c;
    const Weights *w = &m->w;
    int d = c->dim, hs = c->head_size, kv = c->kv_dim, hid = c->hidden_dim;
    char name[128];
    float *q = keep(o, malloc((size_t)d * d * sizeof(float))), *k = keep(o, malloc((size_t)kv * d * sizeof(float)));
    if (!q || !k) return err_set(e, "out of memory");
    permute_rope_rows(q, w->wq + (size_t)l * d * d, c->n_heads, hs, d);
    permute_rope_rows(k, w->wk + (size_t)l * kv * d, c->n_kv_heads, hs, d);
#define ADD(suffix, ptr, n0, n1)                                                       \
    do {                                                                               \
        snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix);                  \
        if (add(o, name, ptr, (n1) ? 2 : 1, n0, n1, e)) return -1;                     \
    } while (0)
    ADD("input_layernorm.weight", w->rms_att + (size_t)l * d, d, 0);
    ADD("self_attn.q_proj.weight", q, d, d);
    ADD("self_attn.k_proj.weight", k, kv, d);
    ADD("self_attn.v_proj.weight", w->wv + (size_t)l * kv * d, kv, d);
    ADD("self_attn.o_proj.weight", w->wo + (size_t)l * d * d, d, d);
    ADD("post_attention_layernorm.weight", w->rms_ffn + (size_t)l * d, d, 0);
    ADD("mlp.gate_proj.weight", w->w1 + (size_t)l * hid * d, hid, d);
    ADD("mlp.down_proj.weight", w->w2 + (size_t)l * d * hid, d, hid);
    ADD("mlp.up_proj.weight", w->w3 + (size_t)l * hid * d, hid, d);
#undef ADD
    return 0;
}

static int write_json(const char *dir, const char *file, cJSON *j, Err *e) {
    char path[1100], *s = cJSON_Print(j);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FileAtomic a;
    int rc = -1;
    if (!s) err_set(e, "%s: out of memory", path);
    else if (file_atomic_open(&a, path, e)) {
        if (fputs(s, a.f) >= 0 && fputc('\n', a.f) != EOF) rc = file_atomic_commit(&a, e);
        else rc = err_set(e, "%s: cannot write", path);
        file_atomic_abort(&a); /* nothing after a commit; else removes the temporary */
    }
    free(s);
    return rc;
}

static int write_configs(const Model *m, const char *dir, StDtype dt, Err *e) {
    const Config *c = &m->c;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "architectures", cJSON_CreateStringArray((const char *[]){"LlamaForCausalLM"}, 1));
    cJSON_AddStringToObject(j, "model_type", "llama");
    const char *keys[] = {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                          "num_key_value_heads", "vocab_size", "max_position_embeddings", "head_dim"};
    int vals[] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len, c->head_size};
    for (int i = 0; i < 8; i++) cJSON_AddNumberToObject(j, keys[i], vals[i]);
    cJSON_AddNumberToObject(j, "rms_norm_eps", 1e-5);
    cJSON_AddNumberToObject(j, "rope_theta", c->rope_theta);
    cJSON_AddBoolToObject(j, "tie_word_embeddings", c->shared_classifier);
    cJSON_AddStringToObject(j, "hidden_act", "silu");
    cJSON_AddStringToObject(j, "torch_dtype", dt == ST_F32 ? "float32" : dt == ST_BF16 ? "bfloat16" : "float16");
    cJSON_AddNumberToObject(j, "bos_token_id", 1);
    cJSON_AddNumberToObject(j, "eos_token_id", 2);
    if (write_json(dir, "config.json", j, e)) return -1;
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "bos_token_id", 1);
    cJSON_AddNumberToObject(g, "eos_token_id", 2);
    return write_json(dir, "generation_config.json", g, e);
}

static int convert(const char *model_arg, const char *dir, StDtype dt, Err *e) {
    Model m;
    char model_path[1024]; /* a bare name (stories260K) is looked up as the default model is */
    if (app_model_path(model_arg, model_path, sizeof model_path, e) || model_load(&m, model_path, e)) return -1;
    if (m.c.arch != ARCH_LLAMA2C) {
        model_free(&m);
        return err_set(e, "%s: convert --to hf reads llama2.c checkpoints (this is a Hugging Face folder already)",
                       model_path);
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        model_free(&m);
        return err_set(e, "%s: cannot create: %s", dir, strerror(errno));
    }
    const Config *c = &m.c;
    Out o = {.dt = dt};
    st_writer_init(&o.w);
    int rc = add(&o, "model.embed_tokens.weight", m.w.token_embedding, 2, c->vocab_size, c->dim, e);
    for (int l = 0; rc == 0 && l < c->n_layers; l++) rc = add_layer(&o, &m, l, e);
    if (rc == 0) rc = add(&o, "model.norm.weight", m.w.rms_final, 1, c->dim, 0, e);
    if (rc == 0 && !c->shared_classifier) rc = add(&o, "lm_head.weight", m.w.wcls, 2, c->vocab_size, c->dim, e);
    if (rc == 0) rc = st_writer_meta(&o.w, "format", "pt", e);
    char path[1100];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (rc == 0) rc = st_write(&o.w, path, e);
    if (rc == 0) rc = write_configs(&m, dir, dt, e);
    st_writer_free(&o.w);
    for (int i = 0; i < o.n_owned; i++) free(o.owned[i]);
    free(o.owned);
    model_free(&m);
    return rc;
}

int cmd_convert(int argc, char **argv) {
    Args a = {argc, argv, 1};
    Err e;
    const char *to = NULL, *model = NULL, *out = NULL, *dtype = "f32";
    while (a.i < argc) {
        const char *f = argv[a.i];
        if (args_is_help(f)) { convert_help(); return 0; }
        a.i++;
        const char **target = !strcmp(f, "--to") ? &to : !strcmp(f, "--model") ? &model : !strcmp(f, "--out") ? &out
                            : !strcmp(f, "--dtype") ? &dtype : NULL;
        if (!target) { args_unknown(f, &e); return args_fail(&e); }
        if (!(*target = args_value(&a, &e))) return args_fail(&e);
    }
    if (!to || strcmp(to, "hf") != 0) { err_usage(&e, "--to hf is the one conversion there is"); return args_fail(&e); }
    if (!model || !out) { err_usage(&e, "--model FILE.bin and --out DIR are required"); return args_fail(&e); }
    StDtype dt = !strcmp(dtype, "f32") ? ST_F32 : !strcmp(dtype, "bf16") ? ST_BF16 : !strcmp(dtype, "f16") ? ST_F16 : ST_ANY;
    if (dt == ST_ANY) { err_usage(&e, "--dtype must be f32, bf16 or f16, not '%s'", dtype); return args_fail(&e); }
    if (convert(model, out, dt, &e)) return args_fail(&e);
    printf("wrote %s/config.json, generation_config.json, model.safetensors (%s)\n", out, dtype);
    return 0;
}
