/* model_hf_write.c — random models written in the Hugging Face architectures' block layouts.
 *
 * Random models in the block layouts of the Hugging Face
 * architectures, and any f32 model written as a Hugging Face folder.
 *
 * A random model of an architecture is model_random's llama2.c layout with
 * the parts that architecture adds held in Model.owned_arch, so the forward
 * pass runs it in memory exactly as it runs the folder written from it; the
 * only change on the way to the file is the order of W_Q/W_K rows (adjacent
 * RoPE pairs in memory, halves in the file), which leaves every logit as it
 * was. That equality is what the tests check.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "half.h"
#include "model.h"
#include "safetensors.h"
#include "tokenize/tokenize.h"

static const struct { const char *type, *class_name; int arch; } ARCHS[] = {
    {"llama", "LlamaForCausalLM", ARCH_LLAMA}, {"qwen2", "Qwen2ForCausalLM", ARCH_QWEN2},
    {"olmo2", "Olmo2ForCausalLM", ARCH_OLMO2}, {"faolmo", "FAOlmoForCausalLM", ARCH_FAOLMO},
    {"qwen3", "Qwen3ForCausalLM", ARCH_QWEN3}, {"mistral", "MistralForCausalLM", ARCH_MISTRAL},
    {"gemma2", "Gemma2ForCausalLM", ARCH_GEMMA2}, {"gemma3_text", "Gemma3ForCausalLM", ARCH_GEMMA3},
    {"phi3", "Phi3ForCausalLM", ARCH_PHI3}};
#define N_ARCHS (int)(sizeof ARCHS / sizeof ARCHS[0])

static int arch_index(int arch) {
    for (int i = 0; i < N_ARCHS; i++)
        if (ARCHS[i].arch == arch) return i;
    return 0; /* ARCH_LLAMA2C is a llama block */
}

const char *model_arch_type(int arch) { return ARCHS[arch_index(arch)].type; }

int model_arch_parse(const char *name) {
    for (int i = 0; i < N_ARCHS; i++)
        if (!strcmp(name, ARCHS[i].type)) return ARCHS[i].arch;
    return -1;
}

static int is_olmo(int arch) { return arch == ARCH_OLMO2 || arch == ARCH_FAOLMO; }

static int is_gemma(int arch) { return arch == ARCH_GEMMA2 || arch == ARCH_GEMMA3; }

/* ---- random models of an architecture ------------------------------------- */

/* Floats of owned_arch per layer: faolmo's widened W_Q, QK-norms, biases. */
static size_t arch_floats(const Config *c, int arch) {
    size_t d = c->dim, q = c->q_dim, kv = c->kv_dim, H = c->n_heads;
    return (arch == ARCH_FAOLMO ? (q + H) * d : 0) + (is_olmo(arch) ? q + kv : 0) + (arch == ARCH_QWEN2 ? q + 2 * kv : 0) +
           (arch == ARCH_QWEN3 || arch == ARCH_GEMMA3 ? 2 * (size_t)c->head_size : 0) + (is_gemma(arch) ? 2 * d : 0) +
           (arch == ARCH_PHI3 ? (size_t)c->head_size : 0); /* longrope's two tables, once (counted per layer: room) */
}

/* n values 1 + u, u uniform in ±0.25: norm weights that are not all alike. */
static float *take_norm(float **p, size_t n, uint64_t *s) {
    float *v = *p;
    model_fill_uniform(v, n, 0.25f, s);
    for (size_t i = 0; i < n; i++) v[i] += 1.0f;
    *p += n;
    return v;
}

static float *take_uniform(float **p, size_t n, float scale, uint64_t *s) {
    float *v = *p;
    model_fill_uniform(v, n, scale, s);
    *p += n;
    return v;
}

/* Rewire layer l of a random llama2.c-layout model into arch's block. */
static void arch_layer(Model *m, int l, int arch, float **p, uint64_t *s) {
    const Config *c = &m->c;
    LayerWeights *lw = &m->layers[l];
    size_t d = c->dim, q = c->q_dim, kv = c->kv_dim, H = c->n_heads;
    if (arch == ARCH_FAOLMO) { /* q_proj = W_Q then one router row per head, as AHA-OLMO2 stores it */
        float *wq = *p;
        memcpy(wq, lw->wq.p, q * d * sizeof(float));
        model_fill_uniform(wq + q * d, H * d, 1.0f / sqrtf((float)d), s);
        *p += (q + H) * d;
        lw->wq = (Mat){wq, DT_F32};
    }
    if (is_olmo(arch)) {
        lw->post_attn_norm = lw->attn_norm, lw->post_ffn_norm = lw->ffn_norm;
        lw->attn_norm = lw->ffn_norm = NULL;
        lw->q_norm = take_norm(p, q, s), lw->k_norm = take_norm(p, kv, s);
    }
    if (arch == ARCH_QWEN3 || arch == ARCH_GEMMA3) /* one gain per head dimension, shared by every head */
        lw->q_norm = take_norm(p, c->head_size, s), lw->k_norm = take_norm(p, c->head_size, s);
    if (is_gemma(arch)) /* norms after attention and after the FFN as well as before */
        lw->post_attn_norm = take_norm(p, d, s), lw->post_ffn_norm = take_norm(p, d, s);
    int local = !c->window_pattern || (l + 1) % c->window_pattern; /* HF's Gemma2Config rule */
    lw->window = (arch == ARCH_MISTRAL || arch == ARCH_PHI3 || is_gemma(arch)) && local ? c->sliding_window : 0;
    if (arch == ARCH_QWEN2)
        lw->bq = take_uniform(p, q, 0.25f, s), lw->bk = take_uniform(p, kv, 0.25f, s), lw->bv = take_uniform(p, kv, 0.25f, s);
}

/* Gemma 2's scalars for a random model: sqrt(dim) embeddings, GeGLU, the
 * query scale of query_pre_attn_scalar = head_size (the one llama.cpp's
 * gemma2 applies to models of no known size), and soft-caps small enough
 * that random scores and logits reach them (real models: 50 and 30). */
static void gemma2_extras(Config *c) {
    c->embed_scale = sqrtf((float)c->dim);
    c->act_gelu = 1;
    c->query_scale = 1.0f / sqrtf((float)c->head_size);
    c->attn_softcap = 2.0f, c->final_softcap = 10.0f;
}

/* Phi-3's longrope for a random model: short factors 1 … 3 dividing each
 * pair's frequency (the ones a run of context <= the original uses), long
 * ones 1.5 short + 0.5 (others, so a reader that takes the wrong table is
 * seen), and the attention factor of a model whose max_position_embeddings
 * is 4x the original (model_save_hf writes it so; the context is the original). */
static void phi3_longrope(Model *m, float *p, uint64_t *s) {
    int half = m->c.head_size / 2;
    model_fill_uniform(p, (uint64_t)half, 1.0f, s);
    for (int i = 0; i < half; i++) p[i] += 2.0f, p[half + i] = p[i] * 1.5f + 0.5f;
    m->c.rope_ext = m->c.rope_short = p, m->c.rope_long = p + half, m->c.rope_orig_ctx = m->c.seq_len;
    m->c.rope_mscale = (float)sqrt(1 + log(4.0) / log((double)m->c.seq_len));
}

int model_random_arch(Model *m, const Config *cfg, int arch, uint64_t seed, Err *e) {
    Config c = *cfg;
    if (is_olmo(arch)) c.shared_classifier = 0; /* OLMo-2 keeps lm_head apart from the embedding */
    if (model_random(m, &c, seed, e) != 0) return -1;
    if (arch == ARCH_LLAMA2C) return 0;
    size_t n = arch_floats(&m->c, arch) * (size_t)m->c.n_layers;
    if (n && !(m->owned_arch = malloc(n * sizeof(float)))) {
        model_free(m);
        return err_set(e, "random model: out of memory for the %s parts", model_arch_type(arch));
    }
    m->c.arch = arch;
    m->c.qk_norm_head = arch == ARCH_QWEN3 || arch == ARCH_GEMMA3;
    m->c.sliding_window = arch == ARCH_MISTRAL || arch == ARCH_PHI3 || is_gemma(arch) ? cfg->sliding_window : 0;
    m->c.window_pattern = is_gemma(arch) ? (cfg->window_pattern ? cfg->window_pattern : arch == ARCH_GEMMA3 ? 6 : 2) : 0;
    if (is_gemma(arch)) gemma2_extras(&m->c);
    if (arch == ARCH_GEMMA3) /* no caps; Gemma 3's bases: 1e6 global (scaled linearly, 8 as the 4B+), 1e4 local */
        m->c.attn_softcap = m->c.final_softcap = 0, m->c.rope_theta = 1e6f, m->c.rope_local_theta = 1e4f,
        m->c.rope_linear = 8.0f;
    snprintf(m->arch_name, sizeof m->arch_name, "%s", model_arch_type(arch));
    uint64_t s = seed ^ 0x5eed0a7c4ull;
    float *p = m->owned_arch;
    for (int l = 0; l < m->c.n_layers; l++) arch_layer(m, l, arch, &p, &s);
    if (arch == ARCH_FAOLMO) m->builtin_routers = 1, m->default_window = 128;
    if (arch == ARCH_PHI3) phi3_longrope(m, p, &s);
    return 0;
}

/* ---- the folder ------------------------------------------------------------ */

typedef struct {
    StWriter w;
    int dt;            /* DType written */
    int permute;       /* 1: the model rotates adjacent pairs; the file rotates halves */
    const Config *c;
    void **owned;      /* converted copies, freed after writing */
    int n_owned, cap_owned;
} Out;

/* Hold p until the file is written; NULL (p freed) when it cannot be held. */
static void *keep(Out *o, void *p) {
    if (!p) return NULL;
    if (o->n_owned == o->cap_owned) {
        int cap = o->cap_owned ? 2 * o->cap_owned : 64;
        void **grown = realloc(o->owned, (size_t)cap * sizeof *grown);
        if (!grown) { free(p); return NULL; }
        o->owned = grown, o->cap_owned = cap;
    }
    return o->owned[o->n_owned++] = p;
}

static const StDtype ST_OF[] = {[DT_F32] = ST_F32, [DT_F16] = ST_F16, [DT_BF16] = ST_BF16};

/* Queue rows × cols floats (cols 0: a vector) as a tensor in the output dtype. */
static int add(Out *o, const char *name, const float *v, int64_t rows, int64_t cols, Err *e) {
    int64_t shape[2] = {rows, cols};
    size_t n = (size_t)rows * (cols ? (size_t)cols : 1);
    const void *data = v;
    if (o->dt != DT_F32) {
        uint16_t *h = keep(o, malloc(n * sizeof *h));
        if (!h) return err_set(e, "%s: out of memory", name);
        half_from_f32_n(h, v, n, o->dt == DT_BF16);
        data = h;
    }
    return st_writer_add(&o->w, name, ST_OF[o->dt], cols ? 2 : 1, shape, data, e);
}

/* The first `heads` × head_size rows of src (each `cols` wide) with every
 * head's adjacent RoPE pairs (2i, 2i+1) moved to halves (i, i + hs/2), and
 * any rows after them (faolmo's router rows) unchanged; src itself when the
 * model already rotates halves. */
static const float *rope_rows(Out *o, const float *src, int heads, size_t rows, size_t cols) {
    if (!o->permute) return src;
    float *dst = keep(o, malloc(rows * cols * sizeof(float)));
    if (!dst) return NULL;
    size_t hs = (size_t)o->c->head_size, half = hs / 2, rope = (size_t)heads * hs;
    for (size_t r = 0; r < rows; r++) {
        size_t j = r % hs, from = r;
        if (r < rope) from = r - j + (j < half ? 2 * j : 2 * (j - half) + 1); /* file row j holds pair row from */
        memcpy(dst + r * cols, src + from * cols, cols * sizeof(float));
    }
    return dst;
}

/* A matrix of the model as f32 (the writer converts from f32 only). */
static const float *f32(const Mat *m) { return m->dt == DT_F32 ? m->p : NULL; }

/* n gains as Gemma stores them: w where the model multiplies by 1 + w. */
static const float *minus_one(Out *o, const float *v, size_t n) {
    float *w = keep(o, malloc(n * sizeof *w));
    for (size_t i = 0; w && i < n; i++) w[i] = v[i] - 1.0f;
    return w;
}

static int add_gemma2_norms(Out *o, const LayerWeights *lw, int l, Err *e) {
    size_t d = (size_t)o->c->dim;
    const float *v[4] = {lw->attn_norm, lw->post_attn_norm, lw->ffn_norm, lw->post_ffn_norm};
    const char *names[4] = {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                            "post_feedforward_layernorm"};
    char n[ST_MAX_NAME];
    for (int i = 0; i < 4; i++) {
        const float *w = v[i] ? minus_one(o, v[i], d) : NULL;
        if (!w) return err_set(e, "layer %d: no %s (or out of memory)", l, names[i]);
        snprintf(n, sizeof n, "model.layers.%d.%s.weight", l, names[i]);
        if (add(o, n, w, (int64_t)d, 0, e)) return -1;
    }
    return 0;
}

/* A q/k norm's gains as the file stores them (Gemma: w of 1 + w). */
static const float *qk_gain(Out *o, const float *v, size_t n) {
    return v && is_gemma(o->c->arch) ? minus_one(o, v, n) : v;
}

/* rows_a × cols of a then rows_b × cols of b as one matrix (held until written). */
static const float *stack(Out *o, const float *a, size_t rows_a, const float *b, size_t rows_b, size_t cols) {
    if (!a || !b) return NULL;
    float *f = keep(o, malloc((rows_a + rows_b) * cols * sizeof *f));
    if (!f) return NULL;
    memcpy(f, a, rows_a * cols * sizeof *f);
    memcpy(f + rows_a * cols, b, rows_b * cols * sizeof *f);
    return f;
}

/* Phi-3's fused matrices: qkv_proj (q, k, v rows) and gate_up_proj (gate, up). */
static int add_phi3(Out *o, const LayerWeights *lw, const float *wq, const float *wk, int l, Err *e) {
    const Config *c = o->c;
    size_t d = c->dim, q = c->q_dim, kv = c->kv_dim, h = c->hidden_dim;
    const float *qkv = stack(o, stack(o, wq, q, wk, kv, d), q + kv, f32(&lw->wv), kv, d);
    const float *gu = stack(o, f32(&lw->w1), h, f32(&lw->w3), h, d);
    char n[ST_MAX_NAME];
    if (!qkv || !gu) return err_set(e, "out of memory");
    snprintf(n, sizeof n, "model.layers.%d.self_attn.qkv_proj.weight", l);
    if (add(o, n, qkv, (int64_t)(q + 2 * kv), (int64_t)d, e)) return -1;
    snprintf(n, sizeof n, "model.layers.%d.mlp.gate_up_proj.weight", l);
    return add(o, n, gu, (int64_t)(2 * h), (int64_t)d, e);
}

static int add_layer(Out *o, const Model *m, int l, Err *e) {
    const Config *c = o->c;
    const LayerWeights *lw = &m->layers[l];
    size_t d = c->dim, q = c->q_dim, kv = c->kv_dim, h = c->hidden_dim, H = c->n_heads, qr = q + (m->builtin_routers ? H : 0);
    const float *wq = rope_rows(o, f32(&lw->wq), H, qr, d), *wk = rope_rows(o, f32(&lw->wk), c->n_kv_heads, kv, d);
    /* per-head norms are one head's gains: reordered like one head's rows */
    int qn_heads = c->qk_norm_head ? 1 : (int)H, kn_heads = c->qk_norm_head ? 1 : c->n_kv_heads;
    size_t qn = c->qk_norm_head ? (size_t)c->head_size : q, kn = c->qk_norm_head ? (size_t)c->head_size : kv;
    if (!wq || !wk) return err_set(e, "out of memory");
    char n[ST_MAX_NAME];
#define ADD(suffix, v, rows, cols) \
    (snprintf(n, sizeof n, "model.layers.%d." suffix, l), (v) && add(o, n, v, (int64_t)(rows), (int64_t)(cols), e))
    int phi3 = c->arch == ARCH_PHI3;
    if (phi3 ? add_phi3(o, lw, wq, wk, l, e)
             : ADD("self_attn.q_proj.weight", wq, qr, d) || ADD("self_attn.k_proj.weight", wk, kv, d) ||
                   ADD("self_attn.v_proj.weight", f32(&lw->wv), kv, d) || ADD("mlp.gate_proj.weight", f32(&lw->w1), h, d) ||
                   ADD("mlp.up_proj.weight", f32(&lw->w3), h, d))
        return -1;
    if (ADD("self_attn.o_proj.weight", f32(&lw->wo), d, q) || ADD("mlp.down_proj.weight", f32(&lw->w2), d, h)) return -1;
    if (is_gemma(c->arch) && add_gemma2_norms(o, lw, l, e)) return -1;
    if (!is_gemma(c->arch) && (ADD("input_layernorm.weight", lw->attn_norm, d, 0) ||
        ADD("post_attention_layernorm.weight", lw->attn_norm ? lw->ffn_norm : lw->post_attn_norm, d, 0) ||
        ADD("post_feedforward_layernorm.weight", lw->post_ffn_norm, d, 0)))
        return -1;
    if (ADD("self_attn.q_norm.weight", lw->q_norm ? qk_gain(o, rope_rows(o, lw->q_norm, qn_heads, qn, 1), qn) : NULL, qn, 0) ||
        ADD("self_attn.k_norm.weight", lw->k_norm ? qk_gain(o, rope_rows(o, lw->k_norm, kn_heads, kn, 1), kn) : NULL, kn, 0) ||
        ADD("self_attn.q_proj.bias", lw->bq ? rope_rows(o, lw->bq, H, q, 1) : NULL, q, 0) ||
        ADD("self_attn.k_proj.bias", lw->bk ? rope_rows(o, lw->bk, c->n_kv_heads, kv, 1) : NULL, kv, 0) ||
        ADD("self_attn.v_proj.bias", lw->bv, kv, 0))
        return -1;
#undef ADD
    return 0;
}

static int write_weights(const Model *m, const char *dir, const HfSaveOpts *opt, Err *e) {
    const Config *c = &m->c;
    Out o = {.dt = opt->dtype, .permute = !c->rope_half, .c = c};
    st_writer_init(&o.w);
    int rc = 0;
    if (c->dtype != DT_F32 || !m->layers) /* every matrix shares the model's dtype */
        rc = err_set(e, "%s: only f32 models can be written as a folder", dir);
    if (rc == 0) rc = add(&o, "model.embed_tokens.weight", f32(&m->embed), c->vocab_size, c->dim, e);
    for (int l = 0; rc == 0 && l < c->n_layers; l++) rc = add_layer(&o, m, l, e);
    const float *fn = is_gemma(c->arch) ? minus_one(&o, m->final_norm, (size_t)c->dim) : m->final_norm;
    if (rc == 0) rc = fn ? add(&o, "model.norm.weight", fn, c->dim, 0, e) : err_set(e, "%s: out of memory", dir);
    if (rc == 0 && !c->shared_classifier) rc = add(&o, "lm_head.weight", f32(&m->cls), c->vocab_size, c->dim, e);
    if (rc == 0) rc = st_writer_meta(&o.w, "format", "pt", e);
    char path[1100];
    snprintf(path, sizeof path, "%.1000s/model.safetensors", dir);
    if (rc == 0) rc = st_write(&o.w, path, e);
    st_writer_free(&o.w);
    for (int i = 0; i < o.n_owned; i++) free(o.owned[i]);
    free(o.owned);
    return rc;
}

/* dir/file holding text, through a temporary renamed into place. */
static int write_text(const char *dir, const char *file, const char *text, Err *e) {
    char path[1100];
    snprintf(path, sizeof path, "%.1000s/%s", dir, file);
    if (!text) return err_set(e, "%s: out of memory", path);
    FileAtomic a;
    FILE *f = file_atomic_open(&a, path, e);
    if (!f) return -1;
    if (fputs(text, f) >= 0 && fputc('\n', f) != EOF) return file_atomic_commit(&a, e);
    file_atomic_abort(&a);
    return err_set(e, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
}

static int write_json(const char *dir, const char *file, cJSON *j, Err *e) {
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    int rc = write_text(dir, file, s, e);
    free(s);
    return rc;
}

/* Gemma 2's keys: the activation, query scale, soft-caps, window and each layer's kind. */
static void gemma2_json(cJSON *j, const Model *m) {
    const Config *c = &m->c;
    cJSON_AddStringToObject(j, "hidden_activation", "gelu_pytorch_tanh");
    double qs = c->query_scale > 0 ? c->query_scale : 1.0 / sqrt((double)c->head_size);
    cJSON_AddNumberToObject(j, "query_pre_attn_scalar", round(1.0 / (qs * qs)));
    if (c->attn_softcap > 0) cJSON_AddNumberToObject(j, "attn_logit_softcapping", c->attn_softcap);
    else cJSON_AddNullToObject(j, "attn_logit_softcapping");
    if (c->final_softcap > 0) cJSON_AddNumberToObject(j, "final_logit_softcapping", c->final_softcap);
    else cJSON_AddNullToObject(j, "final_logit_softcapping");
    if (c->sliding_window) cJSON_AddNumberToObject(j, "sliding_window", c->sliding_window);
    if (c->arch == ARCH_GEMMA3) {
        cJSON_AddNumberToObject(j, "sliding_window_pattern", c->window_pattern);
        cJSON_AddNumberToObject(j, "rope_local_base_freq", c->rope_local_theta);
        if (c->rope_linear > 0) {
            cJSON *rs = cJSON_AddObjectToObject(j, "rope_scaling");
            cJSON_AddStringToObject(rs, "rope_type", "linear");
            cJSON_AddNumberToObject(rs, "factor", c->rope_linear);
        }
    }
    cJSON *types = cJSON_AddArrayToObject(j, "layer_types");
    for (int l = 0; l < c->n_layers; l++)
        cJSON_AddItemToArray(types, cJSON_CreateString(m->layers[l].window ? "sliding_attention" : "full_attention"));
}

/* Phi-3's keys: its window (null: none) and, with longrope, both factor
 * tables, the original context, and 4x it as the maximum (the attention
 * factor model_random_arch chose for that ratio). */
static void phi3_json(cJSON *j, const Config *c) {
    if (c->sliding_window > 0) cJSON_AddNumberToObject(j, "sliding_window", c->sliding_window);
    else cJSON_AddNullToObject(j, "sliding_window");
    if (!c->rope_short || !c->rope_long) return;
    int half = c->head_size / 2;
    cJSON *rs = cJSON_AddObjectToObject(j, "rope_scaling"), *sh = cJSON_AddArrayToObject(rs, "short_factor"),
          *lg = cJSON_AddArrayToObject(rs, "long_factor");
    cJSON_AddStringToObject(rs, "type", "longrope");
    for (int i = 0; i < half; i++) {
        cJSON_AddItemToArray(sh, cJSON_CreateNumber(c->rope_short[i]));
        cJSON_AddItemToArray(lg, cJSON_CreateNumber(c->rope_long[i]));
    }
    cJSON_AddNumberToObject(j, "original_max_position_embeddings", c->rope_orig_ctx);
    cJSON_ReplaceItemInObject(j, "max_position_embeddings", cJSON_CreateNumber(4.0 * c->rope_orig_ctx));
}

static cJSON *config_json(const Model *m, const HfSaveOpts *o) {
    const Config *c = &m->c;
    int a = arch_index(c->arch);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "architectures", cJSON_CreateStringArray(&ARCHS[a].class_name, 1));
    cJSON_AddStringToObject(j, "model_type", ARCHS[a].type);
    const char *keys[] = {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                          "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings",
                          "bos_token_id", "eos_token_id"};
    int vals[] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->head_size, c->vocab_size,
                  c->seq_len, o->bos_id, o->eos_id};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) cJSON_AddNumberToObject(j, keys[i], vals[i]);
    cJSON_AddNumberToObject(j, "rms_norm_eps", c->norm_eps > 0 ? c->norm_eps : 1e-5);
    cJSON_AddNumberToObject(j, "rope_theta", c->rope_theta);
    cJSON_AddBoolToObject(j, "tie_word_embeddings", c->shared_classifier);
    cJSON_AddBoolToObject(j, "attention_bias", c->arch == ARCH_QWEN2);
    cJSON_AddStringToObject(j, "hidden_act", c->act_gelu ? "gelu_pytorch_tanh" : "silu");
    if (is_gemma(c->arch)) gemma2_json(j, m);
    cJSON_AddStringToObject(j, "torch_dtype", o->dtype == DT_F32 ? "float32" : o->dtype == DT_BF16 ? "bfloat16" : "float16");
    if (m->builtin_routers) cJSON_AddNumberToObject(j, "aha_window", m->default_window);
    if (c->arch == ARCH_MISTRAL && c->sliding_window > 0) cJSON_AddNumberToObject(j, "sliding_window", c->sliding_window);
    else if (c->arch == ARCH_MISTRAL) cJSON_AddNullToObject(j, "sliding_window");
    if (c->arch == ARCH_QWEN3) cJSON_AddBoolToObject(j, "use_sliding_window", 0);
    if (c->arch == ARCH_PHI3) phi3_json(j, c);
    return j;
}

int model_save_hf(const Model *m, const char *dir, const HfSaveOpts *o, Err *e) {
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return err_set(e, "%s: cannot create: %s", dir, strerror(errno));
    if (o->dtype != DT_F32 && o->dtype != DT_F16 && o->dtype != DT_BF16) return err_set(e, "%s: unknown dtype", dir);
    char *tok = NULL; /* made first: a vocabulary it cannot fill stops the writer before any file */
    if (o->tokenizer && !(tok = hftok_bytelevel_json(m->c.vocab_size, e))) return err_prefix(e, dir);
    int rc = write_weights(m, dir, o, e);
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "bos_token_id", o->bos_id);
    cJSON_AddNumberToObject(g, "eos_token_id", o->eos_id);
    if (rc == 0) rc = write_json(dir, "generation_config.json", g, e);
    else cJSON_Delete(g);
    if (rc == 0 && tok) rc = write_text(dir, "tokenizer.json", tok, e);
    free(tok);
    return rc == 0 ? write_json(dir, "config.json", config_json(m, o), e) : -1;
}
