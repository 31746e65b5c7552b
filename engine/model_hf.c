/* model_hf.c — Hugging Face model folders: config.json plus safetensors weights.
 *
 * Hugging Face model folders: config.json plus safetensors
 * (one file, or shards listed in model.safetensors.index.json) for the
 * llama, qwen2, olmo2, faolmo, qwen3, mistral, gemma2, gemma3_text and phi3 architectures.
 *
 * Matrices stay in the memory-mapped files in their stored dtype (F32, F16
 * or BF16) and the forward pass reads them there; only the small vectors
 * (norms, biases) are converted to f32 copies. Everything a file says is
 * checked before it is used: config values for type and range, every
 * tensor for presence, dtype, exact shape and alignment, so a bad folder is
 * one error line naming the file (and the tensor), never a crash.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "half.h"
#include "model.h"
#include "safetensors.h"

#define HF_MAX_JSON (64u << 20) /* config and index files: far larger than any real one */
#define HF_MAX_SHARDS 1024

typedef struct {
    char dir[1024];
    char config[1100];   /* dir/config.json */
    StFile *shards;
    int n_shards;
    cJSON *weight_map;   /* index.json's name → shard file, or NULL (one file) */
    cJSON *index;        /* the parsed index (owns weight_map) */
    float *vecs;         /* f32 copies of the norm and bias vectors */
    float plus_one;      /* added to every vector read: Gemma's norms multiply by (1 + w) */
    float *rope_ext;     /* phi3 longrope: short then long factors, [2][head_size/2] */
    int rope_orig;       /* phi3: original_max_position_embeddings (0: no longrope) */
    size_t n_vecs, cap_vecs;
} HfModel;

int model_is_hf_dir(const char *path) {
    struct stat st;
    char p[1100];
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    snprintf(p, sizeof p, "%s/config.json", path);
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode); /* a FIFO is refused when read, by name */
}

void model_hf_free(Model *m) {
    HfModel *hf = m->hf;
    if (!hf) return;
    for (int i = 0; i < hf->n_shards; i++) st_close(&hf->shards[i]);
    free(hf->shards);
    cJSON_Delete(hf->index);
    free(hf->vecs);
    free(hf->rope_ext);
    free(hf);
    m->hf = NULL;
}

/* ---- JSON files ---------------------------------------------------------- */

static cJSON *read_json(const char *path, Err *e) {
    size_t n = 0;
    char *buf = file_read_all(path, "JSON file", "a JSON file", HF_MAX_JSON, &n, e);
    if (!buf) return NULL;
    cJSON *j = cJSON_ParseWithLength(buf, n);
    free(buf);
    if (!j) err_set(e, "%s: not valid JSON", path);
    else if (!cJSON_IsObject(j)) { cJSON_Delete(j); j = NULL; err_set(e, "%s: expected a JSON object", path); }
    return j;
}

static const char *json_kind(const cJSON *v) {
    return cJSON_IsString(v) ? "a string" : cJSON_IsBool(v) ? "a boolean" : cJSON_IsNull(v) ? "null"
         : cJSON_IsArray(v) ? "an array" : cJSON_IsObject(v) ? "an object" : "a number";
}

/* An integer field in [lo, hi]; absent (or null) gives dflt, or an error
 * when dflt < 0 means "required". */
static int cfg_int(const cJSON *j, const char *key, long dflt, long lo, long hi, int *out, const char *path, Err *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!v || cJSON_IsNull(v)) {
        if (dflt < 0) return err_set(e, "%s: %s is missing", path, key);
        *out = (int)dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v)) return err_set(e, "%s: %s must be a whole number (got %s)", path, key, json_kind(v));
    double d = v->valuedouble;
    if (d != floor(d)) return err_set(e, "%s: %s must be a whole number (got %g)", path, key, d);
    if (d < lo) return err_set(e, "%s: %s = %.0f is out of range (min %ld)", path, key, d, lo);
    if (d > hi) return err_set(e, "%s: %s = %.0f is absurdly large (max %ld)", path, key, d, hi);
    *out = (int)d;
    return 0;
}

/* A positive finite float field; absent gives dflt. */
static int cfg_float(const cJSON *j, const char *key, double dflt, float *out, const char *path, Err *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!v || cJSON_IsNull(v)) { *out = (float)dflt; return 0; }
    if (!cJSON_IsNumber(v)) return err_set(e, "%s: %s must be a number (got %s)", path, key, json_kind(v));
    if (!(v->valuedouble > 0 && v->valuedouble < 1e30)) return err_set(e, "%s: %s = %g is out of range", path, key, v->valuedouble);
    *out = (float)v->valuedouble;
    return 0;
}

static int cfg_bool(const cJSON *j, const char *key, int dflt, int *out, const char *path, Err *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!v || cJSON_IsNull(v)) { *out = dflt; return 0; }
    if (!cJSON_IsBool(v)) return err_set(e, "%s: %s must be true or false (got %s)", path, key, json_kind(v));
    *out = cJSON_IsTrue(v);
    return 0;
}

static int parse_arch(const cJSON *j, Config *c, char *name, size_t cap, const char *path, Err *e) {
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "model_type");
    if (!cJSON_IsString(mt)) return err_set(e, "%s: model_type is missing or not a string", path);
    static const struct { const char *name; Arch arch; } known[] = {
        {"llama", ARCH_LLAMA}, {"qwen2", ARCH_QWEN2}, {"olmo2", ARCH_OLMO2}, {"faolmo", ARCH_FAOLMO},
        {"qwen3", ARCH_QWEN3}, {"mistral", ARCH_MISTRAL}, {"gemma2", ARCH_GEMMA2},
        {"gemma3_text", ARCH_GEMMA3}, {"phi3", ARCH_PHI3}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(mt->valuestring, known[i].name)) {
            c->arch = known[i].arch;
            snprintf(name, cap, "%s", known[i].name);
            return 0;
        }
    return err_set(e, "%s: model_type '%.40s' is not supported (llama, qwen2, olmo2, faolmo, qwen3, mistral, gemma2, gemma3_text, phi3)", path,
                   mt->valuestring);
}

/* llama3-style rope_scaling, the only kind these architectures ship with. */
static int parse_rope_scaling(const cJSON *j, Config *c, const char *path, Err *e) {
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(j, "rope_scaling");
    if (!rs || cJSON_IsNull(rs)) return 0;
    if (!cJSON_IsObject(rs)) return err_set(e, "%s: rope_scaling must be an object or null", path);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(rs, "rope_type");
    if (!t) t = cJSON_GetObjectItemCaseSensitive(rs, "type");
    if (!cJSON_IsString(t)) return err_set(e, "%s: rope_scaling has no rope_type", path);
    if (!strcmp(t->valuestring, "default")) return 0;
    if (!strcmp(t->valuestring, "linear") && c->arch == ARCH_GEMMA3) /* Gemma 3's global layers */
        return cfg_float(rs, "factor", -1, &c->rope_linear, path, e);
    if ((!strcmp(t->valuestring, "longrope") || !strcmp(t->valuestring, "su")) && c->arch == ARCH_PHI3) return 1; /* parse_longrope */
    if (strcmp(t->valuestring, "llama3"))
        return err_set(e, "%s: rope_scaling type '%.40s' is not supported (llama3; linear for gemma3; longrope for phi3)", path,
                       t->valuestring);
    if (cfg_float(rs, "factor", -1, &c->rope_factor, path, e) || cfg_float(rs, "low_freq_factor", -1, &c->rope_low, path, e) ||
        cfg_float(rs, "high_freq_factor", -1, &c->rope_high, path, e) ||
        cfg_int(rs, "original_max_position_embeddings", -1, 1, MODEL_MAX_SEQ, &c->rope_orig_ctx, path, e))
        return -1;
    if (!(c->rope_factor > 0 && c->rope_low > 0 && c->rope_high > c->rope_low))
        return err_set(e, "%s: rope_scaling needs factor > 0 and high_freq_factor > low_freq_factor > 0", path);
    return 0;
}

/* A soft-capping value: absent or null is none (0), else a positive number. */
static int cfg_cap(const cJSON *j, const char *key, float *out, const char *path, Err *e) {
    return cfg_float(j, key, 0, out, path, e);
}

/* Gemma 2's extras: GELU-tanh FFN, sqrt(dim) embedding scale, query scale,
 * soft-capping, and which layers are windowed (layer_types when present,
 * else HF's Gemma2Config rule: layer i slides when (i + 1) % 2 != 0). The
 * pattern is kept for the layers (model_hf.c reads layer_types itself). */
static int parse_gemma2(const cJSON *j, Config *c, const char *path, Err *e) {
    int g3 = c->arch == ARCH_GEMMA3;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(j, "hidden_activation");
    if (!act || cJSON_IsNull(act)) act = cJSON_GetObjectItemCaseSensitive(j, "hidden_act");
    if (act && !(cJSON_IsString(act) && !strcmp(act->valuestring, "gelu_pytorch_tanh")))
        return err_set(e, "%s: hidden_activation must be \"gelu_pytorch_tanh\" for %s", path, g3 ? "gemma3" : "gemma2");
    float qpas = 0;
    if (cfg_float(j, "query_pre_attn_scalar", 256, &qpas, path, e) || cfg_cap(j, "attn_logit_softcapping", &c->attn_softcap, path, e) ||
        cfg_cap(j, "final_logit_softcapping", &c->final_softcap, path, e) ||
        cfg_int(j, "sliding_window", g3 ? 4096 : 0, 1, MODEL_MAX_SEQ, &c->sliding_window, path, e) ||
        cfg_int(j, "sliding_window_pattern", g3 ? 6 : 2, 1, MODEL_MAX_LAYERS, &c->window_pattern, path, e) ||
        (g3 && cfg_float(j, "rope_local_base_freq", 10000, &c->rope_local_theta, path, e)))
        return -1;
    c->act_gelu = 1;
    c->query_scale = (float)(1.0 / sqrt((double)qpas));
    c->embed_scale = (float)sqrt((double)c->dim); /* HF: hidden_size**0.5 as a tensor of the activations' dtype */
    c->qk_norm_head = g3; /* Gemma3RMSNorm(head_dim) on q and k, (1 + w) like the others */
    return 0;
}

/* Layer l's window: layer_types[l] ("sliding_attention" / "full_attention")
 * when the config lists them, else the pattern's rule. */
static int layer_window(const cJSON *j, const Config *c, int l, int *w, const char *path, Err *e) {
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(j, "layer_types");
    *w = 0;
    if (!c->sliding_window) return 0;
    if (!types || cJSON_IsNull(types)) {
        *w = !c->window_pattern || (l + 1) % c->window_pattern ? c->sliding_window : 0;
        return 0;
    }
    if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != c->n_layers)
        return err_set(e, "%s: layer_types must be an array of num_hidden_layers (%d) strings", path, c->n_layers);
    const cJSON *t = cJSON_GetArrayItem(types, l);
    if (cJSON_IsString(t) && !strcmp(t->valuestring, "sliding_attention")) *w = c->sliding_window;
    else if (!cJSON_IsString(t) || strcmp(t->valuestring, "full_attention"))
        return err_set(e, "%s: layer_types[%d] must be \"sliding_attention\" or \"full_attention\"", path, l);
    return 0;
}

/* The architecture's sliding window: mistral's `sliding_window` (null or
 * absent: none); qwen2/qwen3 ship one that is off unless
 * use_sliding_window, which is refused rather than run wrongly (its
 * max_window_layers split is not modelled). */
static int parse_window(const cJSON *j, Config *c, const char *path, Err *e) {
    if (c->arch == ARCH_GEMMA2 || c->arch == ARCH_GEMMA3) return parse_gemma2(j, c, path, e);
    if (c->arch == ARCH_MISTRAL || c->arch == ARCH_PHI3)
        return cfg_int(j, "sliding_window", 0, 1, MODEL_MAX_SEQ, &c->sliding_window, path, e);
    int use = 0;
    if (cfg_bool(j, "use_sliding_window", 0, &use, path, e)) return -1;
    if (use) return err_set(e, "%s: use_sliding_window true is not supported (max_window_layers is not modelled)", path);
    return 0;
}

/* n positive numbers of the array key of rs into out. */
static int float_array(const cJSON *rs, const char *key, int n, float *out, const char *path, Err *e) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(rs, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return err_set(e, "%s: rope_scaling.%s must be an array of head_dim / 2 = %d numbers", path, key, n);
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble < 1e9))
            return err_set(e, "%s: rope_scaling.%s[%d] must be a positive number", path, key, i);
        out[i] = (float)v->valuedouble;
    }
    return 0;
}

/* Phi-3's longrope ("su"): short_factor and long_factor divide each pair's
 * frequency, and cos/sin are multiplied by attention_factor, else
 * sqrt(1 + ln(s) / ln(orig)) for s = max_position_embeddings / orig > 1
 * (HF's _compute_longrope_parameters). HF picks long_factor once a sequence
 * passes orig; ahascope's RoPE tables are fixed per run, so it picks by the
 * run's context: short when the context is at most orig (as HF for every
 * sequence that fits), long otherwise (HF: short below orig). */
static int parse_longrope(const cJSON *j, Model *m, int max_pos, const char *path, Err *e) {
    Config *c = &m->c;
    HfModel *hf = m->hf;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(j, "rope_scaling");
    int half = c->head_size / 2;
    float att = 0, pf = 1;
    if (cfg_int(j, "original_max_position_embeddings", -1, 1, 1 << 24, &hf->rope_orig, path, e) ||
        cfg_float(j, "partial_rotary_factor", 1, &pf, path, e) || cfg_float(rs, "attention_factor", 0, &att, path, e))
        return -1;
    if (pf != 1) return err_set(e, "%s: partial_rotary_factor %g is not supported (1 only)", path, pf);
    if (!(hf->rope_ext = malloc(2 * (size_t)half * sizeof(float)))) return err_set(e, "%s: out of memory", path);
    if (float_array(rs, "short_factor", half, hf->rope_ext, path, e) || float_array(rs, "long_factor", half, hf->rope_ext + half, path, e))
        return -1;
    double s = (double)max_pos / hf->rope_orig;
    c->rope_mscale = att > 0 ? att : s > 1 ? (float)sqrt(1 + log(s) / log((double)hf->rope_orig)) : 1.0f;
    c->rope_short = hf->rope_ext, c->rope_long = hf->rope_ext + half, c->rope_orig_ctx = hf->rope_orig;
    c->rope_ext = c->seq_len > hf->rope_orig ? c->rope_long : c->rope_short;
    return 0;
}

static int parse_config(const cJSON *j, Model *m, int max_ctx, int *tied, const char *path, Err *e) {
    Config *c = &m->c;
    memset(c, 0, sizeof *c);
    if (parse_arch(j, c, m->arch_name, sizeof m->arch_name, path, e)) return -1;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(j, "hidden_act");
    int gemma = c->arch == ARCH_GEMMA2 || c->arch == ARCH_GEMMA3;
    if (!gemma && act && !(cJSON_IsString(act) && !strcmp(act->valuestring, "silu")))
        return err_set(e, "%s: hidden_act must be \"silu\" (SwiGLU)", path);
    int max_pos = 0, bias = 0, longrope = 0;
    if (cfg_int(j, "hidden_size", -1, 1, MODEL_MAX_DIM, &c->dim, path, e) ||
        cfg_int(j, "intermediate_size", -1, 1, 4 * MODEL_MAX_DIM, &c->hidden_dim, path, e) ||
        cfg_int(j, "num_hidden_layers", -1, 1, MODEL_MAX_LAYERS, &c->n_layers, path, e) ||
        cfg_int(j, "num_attention_heads", -1, 1, MODEL_MAX_DIM, &c->n_heads, path, e) ||
        cfg_int(j, "num_key_value_heads", c->n_heads, 1, MODEL_MAX_DIM, &c->n_kv_heads, path, e) ||
        cfg_int(j, "head_dim", gemma ? 256 : 0, 2, 4096, &c->head_size, path, e) ||
        cfg_int(j, "vocab_size", -1, 1, MODEL_MAX_VOCAB, &c->vocab_size, path, e) ||
        cfg_int(j, "max_position_embeddings", -1, 1, 1 << 24, &max_pos, path, e) ||
        cfg_float(j, "rms_norm_eps", 1e-6, &c->norm_eps, path, e) ||
        cfg_float(j, "rope_theta", c->arch == ARCH_GEMMA3 ? 1e6 : 10000, &c->rope_theta, path, e) ||
        cfg_bool(j, "tie_word_embeddings", -1, tied, path, e) ||
        cfg_bool(j, "attention_bias", 0, &bias, path, e) || (longrope = parse_rope_scaling(j, c, path, e)) < 0 ||
        parse_window(j, c, path, e))
        return -1;
    c->qk_norm_head |= c->arch == ARCH_QWEN3;
    if (c->n_layers > 0 && !(m->layers = calloc((size_t)c->n_layers, sizeof *m->layers)))
        return err_set(e, "%s: out of memory", path);
    for (int l = 0; l < c->n_layers; l++)
        if (layer_window(j, c, l, &m->layers[l].window, path, e)) return -1;
    if (bias && c->arch != ARCH_QWEN2) return err_set(e, "%s: attention_bias is not supported for %s", path, m->arch_name);
    int cap = max_ctx > 0 ? max_ctx : MODEL_HF_DEFAULT_CTX;
    c->seq_len = max_pos < cap ? max_pos : cap;
    c->rope_half = 1;
    if (longrope && (model_config_check(c, path, e) || parse_longrope(j, m, max_pos, path, e))) return -1;
    if (m->c.arch == ARCH_FAOLMO) {
        int w = 0; /* the released config stores no window: the method's code uses 128 */
        if (cfg_int(j, "aha_window", 128, 1, MODEL_MAX_SEQ, &w, path, e)) return -1;
        m->builtin_routers = 1, m->default_window = w;
    }
    return model_config_check(c, path, e);
}

/* ---- shards -------------------------------------------------------------- */

static int safe_shard_name(const char *s) {
    size_t n = strlen(s);
    return n > 12 && n < 200 && !strchr(s, '/') && strcmp(s + n - 12, ".safetensors") == 0 && s[0] != '.';
}

static int open_shard(HfModel *hf, const char *file, Err *e) {
    for (int i = 0; i < hf->n_shards; i++) {
        const char *p = strrchr(hf->shards[i].path, '/');
        if (p && !strcmp(p + 1, file)) return 0;
    }
    if (hf->n_shards >= HF_MAX_SHARDS) return err_set(e, "%s: more than %d shards", hf->dir, HF_MAX_SHARDS);
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", hf->dir, file);
    StFile *more = realloc(hf->shards, (size_t)(hf->n_shards + 1) * sizeof *more);
    if (!more) return err_set(e, "%s: out of memory", path);
    hf->shards = more;
    if (st_open(&hf->shards[hf->n_shards], path, e) != 0) return -1;
    hf->n_shards++;
    return 0;
}

static int open_shards(HfModel *hf, Err *e) {
    char path[1300];
    struct stat st;
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", hf->dir);
    if (stat(path, &st) != 0) {
        snprintf(path, sizeof path, "%s/model.safetensors", hf->dir);
        if (stat(path, &st) != 0) return err_set(e, "%s: no model.safetensors or model.safetensors.index.json", hf->dir);
        return open_shard(hf, "model.safetensors", e);
    }
    if (!(hf->index = read_json(path, e))) return -1;
    hf->weight_map = cJSON_GetObjectItemCaseSensitive(hf->index, "weight_map");
    if (!cJSON_IsObject(hf->weight_map)) return err_set(e, "%s: weight_map is missing or not an object", path);
    for (const cJSON *it = hf->weight_map->child; it; it = it->next) {
        if (!cJSON_IsString(it) || !safe_shard_name(it->valuestring))
            return err_set(e, "%s: weight_map entry '%.60s' does not name a .safetensors file in the folder", path,
                           it->string ? it->string : "?");
        if (open_shard(hf, it->valuestring, e) != 0) return -1;
    }
    return 0;
}

/* The tensor called name, from the shard the index assigns it to. */
static const StTensor *find_tensor(const HfModel *hf, const char *name, const StFile **file, Err *e) {
    const StFile *f = &hf->shards[0];
    if (hf->weight_map) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf->weight_map, name);
        if (!cJSON_IsString(v)) { err_set(e, "%s: tensor %s is missing from the index", hf->dir, name); return NULL; }
        for (int i = 0; i < hf->n_shards; i++) {
            const char *p = strrchr(hf->shards[i].path, '/');
            if (p && !strcmp(p + 1, v->valuestring)) f = &hf->shards[i];
        }
    }
    *file = f;
    const StTensor *t = st_find(f, name);
    if (!t) err_set(e, "%s: tensor %s is missing", f->path, name);
    return t;
}

static int to_dtype(StDtype st, int *dt) {
    if (st == ST_F32) *dt = DT_F32;
    else if (st == ST_F16) *dt = DT_F16;
    else if (st == ST_BF16) *dt = DT_BF16;
    else return -1;
    return 0;
}

/* A [rows][cols] (cols = 0: a vector of rows) tensor in a float dtype, aligned for it. */
static const StTensor *get_tensor(const HfModel *hf, const char *name, long rows, long cols, int *dt, Err *e) {
    const StFile *f;
    const StTensor *t = find_tensor(hf, name, &f, e);
    if (!t) return NULL;
    int ndim = cols ? 2 : 1;
    int64_t want[2] = {rows, cols};
    char got[128], exp[128];
    if (t->ndim != ndim || t->shape[0] != rows || (cols && t->shape[1] != cols)) {
        err_set(e, "%s: tensor %s has shape %s, expected %s", f->path, name, st_shape_str(got, sizeof got, t->ndim, t->shape),
                st_shape_str(exp, sizeof exp, ndim, want));
        return NULL;
    }
    if (to_dtype(t->dtype, dt) != 0) {
        err_set(e, "%s: tensor %s is %s (F32, F16 or BF16 expected)", f->path, name, st_dtype_name(t->dtype));
        return NULL;
    }
    if ((uintptr_t)t->data % model_dtype_size(*dt)) {
        err_set(e, "%s: tensor %s is not aligned to its element size in the file", f->path, name);
        return NULL;
    }
    return t;
}

static int get_mat(const HfModel *hf, const char *name, long rows, long cols, Mat *out, int *any_half, Err *e) {
    int dt;
    const StTensor *t = get_tensor(hf, name, rows, cols, &dt, e);
    if (!t) return -1;
    *out = (Mat){t->data, dt};
    if (dt != DT_F32) *any_half = dt;
    return 0;
}

/* A vector of n floats, converted to f32 into the model's own buffer. */
static int get_vec(HfModel *hf, const char *name, long n, const float **out, Err *e) {
    int dt;
    const StTensor *t = get_tensor(hf, name, n, 0, &dt, e);
    if (!t) return -1;
    if (hf->n_vecs + (size_t)n > hf->cap_vecs) return err_set(e, "%s: internal: vector buffer too small", name);
    float *v = hf->vecs + hf->n_vecs;
    hf->n_vecs += (size_t)n;
    const uint16_t *h = t->data;
    for (long i = 0; i < n; i++)
        v[i] = hf->plus_one +
               (dt == DT_F32 ? ((const float *)t->data)[i] : dt == DT_BF16 ? half_bf16_to_f32(h[i]) : half_f16_to_f32(h[i]));
    *out = v;
    return 0;
}

/* ---- wiring -------------------------------------------------------------- */

/* Rows [row0, ...) of a fused matrix whose rows are cols wide, as its own Mat. */
static Mat mat_rows(Mat m, long row0, long cols) {
    return (Mat){(const char *)m.p + (size_t)row0 * cols * model_dtype_size(m.dt), m.dt};
}

/* Phi-3's block: llama's, with q, k, v fused in qkv_proj (rows in that
 * order) and gate, up fused in gate_up_proj (gate first, as HF's chunk). */
static int wire_phi3(Model *m, HfModel *hf, int l, int *any_half, Err *e) {
    const Config *c = &m->c;
    LayerWeights *lw = &m->layers[l];
    long d = c->dim, q = c->q_dim, kv = c->kv_dim, h = c->hidden_dim;
    Mat qkv, gu;
    char n[ST_MAX_NAME];
#define NAME(fmt) (snprintf(n, sizeof n, "model.layers.%d." fmt, l), n)
    if (get_mat(hf, NAME("self_attn.qkv_proj.weight"), q + 2 * kv, d, &qkv, any_half, e) ||
        get_mat(hf, NAME("self_attn.o_proj.weight"), d, q, &lw->wo, any_half, e) ||
        get_mat(hf, NAME("mlp.gate_up_proj.weight"), 2 * h, d, &gu, any_half, e) ||
        get_mat(hf, NAME("mlp.down_proj.weight"), d, h, &lw->w2, any_half, e) ||
        get_vec(hf, NAME("input_layernorm.weight"), d, &lw->attn_norm, e) ||
        get_vec(hf, NAME("post_attention_layernorm.weight"), d, &lw->ffn_norm, e))
        return -1;
#undef NAME
    lw->wq = qkv, lw->wk = mat_rows(qkv, q, d), lw->wv = mat_rows(qkv, q + kv, d);
    lw->w1 = gu, lw->w3 = mat_rows(gu, h, d);
    return 0;
}

static int wire_layer(Model *m, HfModel *hf, int l, int *any_half, Err *e) {
    const Config *c = &m->c;
    LayerWeights *lw = &m->layers[l];
    long d = c->dim, q = c->q_dim, kv = c->kv_dim, h = c->hidden_dim, H = c->n_heads;
    int olmo = c->arch == ARCH_OLMO2 || c->arch == ARCH_FAOLMO;
    char n[ST_MAX_NAME];
#define NAME(fmt) (snprintf(n, sizeof n, "model.layers.%d." fmt, l), n)
    if (c->arch == ARCH_PHI3) return wire_phi3(m, hf, l, any_half, e);
    if (get_mat(hf, NAME("self_attn.q_proj.weight"), q + (m->builtin_routers ? H : 0), d, &lw->wq, any_half, e) ||
        get_mat(hf, NAME("self_attn.k_proj.weight"), kv, d, &lw->wk, any_half, e) ||
        get_mat(hf, NAME("self_attn.v_proj.weight"), kv, d, &lw->wv, any_half, e) ||
        get_mat(hf, NAME("self_attn.o_proj.weight"), d, q, &lw->wo, any_half, e) ||
        get_mat(hf, NAME("mlp.gate_proj.weight"), h, d, &lw->w1, any_half, e) ||
        get_mat(hf, NAME("mlp.down_proj.weight"), d, h, &lw->w2, any_half, e) ||
        get_mat(hf, NAME("mlp.up_proj.weight"), h, d, &lw->w3, any_half, e))
        return -1;
    if (olmo) {
        if (get_vec(hf, NAME("post_attention_layernorm.weight"), d, &lw->post_attn_norm, e) ||
            get_vec(hf, NAME("post_feedforward_layernorm.weight"), d, &lw->post_ffn_norm, e) ||
            get_vec(hf, NAME("self_attn.q_norm.weight"), q, &lw->q_norm, e) ||
            get_vec(hf, NAME("self_attn.k_norm.weight"), kv, &lw->k_norm, e))
            return -1;
    } else if (c->arch == ARCH_GEMMA2 || c->arch == ARCH_GEMMA3) {
        if (get_vec(hf, NAME("input_layernorm.weight"), d, &lw->attn_norm, e) ||
            get_vec(hf, NAME("post_attention_layernorm.weight"), d, &lw->post_attn_norm, e) ||
            get_vec(hf, NAME("pre_feedforward_layernorm.weight"), d, &lw->ffn_norm, e) ||
            get_vec(hf, NAME("post_feedforward_layernorm.weight"), d, &lw->post_ffn_norm, e))
            return -1;
    } else if (get_vec(hf, NAME("input_layernorm.weight"), d, &lw->attn_norm, e) ||
               get_vec(hf, NAME("post_attention_layernorm.weight"), d, &lw->ffn_norm, e)) {
        return -1; /* llama's "post_attention_layernorm" is the pre-FFN norm */
    }
    if (c->qk_norm_head && (get_vec(hf, NAME("self_attn.q_norm.weight"), c->head_size, &lw->q_norm, e) ||
                            get_vec(hf, NAME("self_attn.k_norm.weight"), c->head_size, &lw->k_norm, e)))
        return -1;
    if (c->arch == ARCH_QWEN2 &&
        (get_vec(hf, NAME("self_attn.q_proj.bias"), q, &lw->bq, e) || get_vec(hf, NAME("self_attn.k_proj.bias"), kv, &lw->bk, e) ||
         get_vec(hf, NAME("self_attn.v_proj.bias"), kv, &lw->bv, e)))
        return -1;
#undef NAME
    return 0;
}

/* The weights a config describes must fit in its files (no dtype is under 2
 * bytes; the classifier counted as tied): checked before anything is sized
 * from the config, so a config.json of absurd shape beside small files is
 * refused at once instead of allocating gigabytes first. */
static int check_weight_bytes(const Model *m, const HfModel *hf, Err *e) {
    Config lo = m->c;
    lo.shared_classifier = 1;
    uint64_t need = (uint64_t)model_n_params(&lo) * 2, have = 0;
    for (int i = 0; i < hf->n_shards; i++) have += hf->shards[i].size;
    if (need <= have) return 0;
    return err_set(e, "%s: describes at least %llu bytes of weights but the safetensors files hold %llu", hf->config,
                   (unsigned long long)need, (unsigned long long)have);
}

/* A layer's tensor past the config's num_hidden_layers: loading on would
 * run a smaller model than the folder holds, so the config and weights
 * disagree. Names the first such tensor found. */
static int check_no_extra_layers(const Model *m, const HfModel *hf, Err *e) {
    for (int s = 0; s < hf->n_shards; s++)
        for (int i = 0; i < hf->shards[s].n_tensors; i++) {
            const char *name = st_tensor(&hf->shards[s], i)->name;
            char *end;
            if (strncmp(name, "model.layers.", 13) != 0) continue;
            long l = strtol(name + 13, &end, 10);
            if (end != name + 13 && *end == '.' && l >= m->c.n_layers)
                return err_set(e, "%s: tensor %s is unused: %s declares num_hidden_layers %d", hf->shards[s].path, name,
                               hf->config, m->c.n_layers);
        }
    return 0;
}

static int wire_model(Model *m, HfModel *hf, int tied, Err *e) {
    Config *c = &m->c;
    size_t per_layer = 4 * (size_t)c->dim + (size_t)c->q_dim * 2 + (size_t)c->kv_dim * 3;
    hf->cap_vecs = per_layer * c->n_layers + c->dim;
    hf->vecs = malloc(hf->cap_vecs * sizeof(float));
    if (!m->layers) m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!hf->vecs || !m->layers) return err_set(e, "%s: out of memory", hf->dir);
    int any_half = 0;
    hf->plus_one = c->arch == ARCH_GEMMA2 || c->arch == ARCH_GEMMA3; /* only norms; kept as the gains multiplied */
    for (int l = 0; l < c->n_layers; l++)
        if (wire_layer(m, hf, l, &any_half, e) != 0) return -1;
    if (get_mat(hf, "model.embed_tokens.weight", c->vocab_size, c->dim, &m->embed, &any_half, e) ||
        get_vec(hf, "model.norm.weight", c->dim, &m->final_norm, e))
        return -1;
    const StFile *f;
    Err probe = {0};
    int has_head = hf->weight_map ? cJSON_GetObjectItemCaseSensitive(hf->weight_map, "lm_head.weight") != NULL
                                  : find_tensor(hf, "lm_head.weight", &f, &probe) != NULL;
    if (tied < 0) tied = !has_head; /* no config word: a checkpoint without lm_head shares the embedding */
    c->shared_classifier = tied;
    if (tied) m->cls = m->embed;
    else if (get_mat(hf, "lm_head.weight", c->vocab_size, c->dim, &m->cls, &any_half, e)) return -1;
    c->dtype = c->kv_dtype = any_half ? any_half : DT_F32;
    return 0;
}

int model_load_hf(Model *m, const char *dir, int max_ctx, Err *e) {
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", dir);
    m->version = 2;
    HfModel *hf = calloc(1, sizeof *hf);
    if (!hf) return err_set(e, "%s: out of memory", dir);
    m->hf = hf;
    snprintf(hf->dir, sizeof hf->dir, "%s", dir);
    snprintf(hf->config, sizeof hf->config, "%.1000s/config.json", dir);
    const char *path = hf->config;
    cJSON *cfg = read_json(path, e);
    int tied = -1, rc = -1;
    if (cfg && parse_config(cfg, m, max_ctx, &tied, path, e) == 0 && open_shards(hf, e) == 0 &&
        check_weight_bytes(m, hf, e) == 0 && check_no_extra_layers(m, hf, e) == 0 && wire_model(m, hf, tied, e) == 0)
        rc = 0;
    cJSON_Delete(cfg);
    if (rc != 0) { /* what model_free would release of an HF model, without calling up into model.c */
        model_hf_free(m);
        free(m->layers);
        memset(m, 0, sizeof *m);
        return -1;
    }
    for (int i = 0; i < hf->n_shards; i++) m->file_bytes += hf->shards[i].size;
    return 0;
}

int model_files(const Model *m, const char **paths, int cap) {
    const HfModel *hf = m->hf;
    if (!hf) {
        if (!m->path[0] || cap < 1) return 0;
        paths[0] = m->path;
        return 1;
    }
    int n = 0;
    if (n < cap) paths[n++] = hf->config;
    for (int i = 0; i < hf->n_shards && n < cap; i++) paths[n++] = hf->shards[i].path;
    return n;
}
