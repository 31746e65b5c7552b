/* model_gguf.c — a GGUF model (llama, qwen2, olmo2, qwen3, gemma2, gemma3, phi3) read in place: its matrices are the file's mapped tensors.
 *
 * ggml's llama rotates adjacent RoPE pairs, and its converter reorders a
 * Hugging Face model's W_Q/W_K rows (rotate-half) into that order; so a
 * GGUF llama runs with rope_half 0 and no row is permuted back. qwen2,
 * olmo2, qwen3, the gemmas and phi3 rotate halves in ggml (NEOX RoPE) and
 * their rows are left as the Hugging Face model had them: rope_half 1.
 * phi3's fused attn_qkv and ffn_up (gate rows, then up) are read as row
 * ranges of one tensor, as the folder's are. Matrices are ggml [ne1 rows]
 * [ne0 columns], the same row-major [out][in] as Model's, and stay in the
 * mapped file in their stored type (F32, F16, BF16 or a block type of
 * engine/quant.h): the GgufFile stays open for the model's life. Vectors
 * (norms, biases) are widened into one owned f32 block. Where gemm_q's AVX2
 * path will multiply them, Q4_K and Q6_K matrices are packed once at load
 * (gemm_q_pack) into one owned buffer and their pages of the file given
 * back, so the weights stay resident once, not twice. */
#include "model.h"
#include "gguf.h"
#include "gguf_names.h"
#include "mem.h"

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "gemm_q.h"
#include <sys/mman.h>

/* What a GGUF model keeps: the open file its matrices point into, and the
 * widened vectors. */
typedef struct {
    GgufFile f;
    float *vecs;
    void *packed;      /* the packed matrices (mem_big_alloc), or NULL */
} GgufModel;

/* One architecture's tensors per block beyond the seven matrices. */
typedef struct {
    const char *name;
    int arch, rope_half, biases, olmo;
    int qk_head;       /* attn_q_norm/attn_k_norm of [head_dim], applied per head (qwen3) */
    int gemma;         /* Gemma 2: four norms a block (stored as 1 + w), GeGLU, scaled embeddings,
                          soft-caps, a window on even layers */
    int fused;         /* phi3: attn_qkv (q, k, v rows) and ffn_up (gate, up rows) in place of five matrices */
} GgufArch;

static const GgufArch ARCHES[] = {
    {"llama", ARCH_LLAMA, 0, 0, 0, 0, 0, 0},
    {"qwen2", ARCH_QWEN2, 1, 1, 0, 0, 0, 0},
    {"olmo2", ARCH_OLMO2, 1, 0, 1, 0, 0, 0},
    {"qwen3", ARCH_QWEN3, 1, 0, 0, 1, 0, 0},
    {"gemma2", ARCH_GEMMA2, 1, 0, 0, 0, 1, 0},
    {"gemma3", ARCH_GEMMA3, 1, 0, 0, 1, 1, 0},
    {"phi3", ARCH_PHI3, 1, 0, 0, 0, 0, 1},
};

/* phi3's longrope factor tables: global tensors of [head_size / 2], both or neither. */
static const char *const ROPE_FACTORS[2] = {"rope_factors_short.weight", "rope_factors_long.weight"};

int model_is_gguf(const char *path) {
    FileKind k;
    if (!file_stat_kind(path, &k, NULL)) return 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    char b[4];
    ssize_t n = fd >= 0 ? read(fd, b, 4) : -1;
    if (fd >= 0) close(fd);
    return n == 4 && gguf_sniff(b, 4);
}

/* {arch}.{suffix} as a positive int; def when absent and not required. */
static int cfg_int(const GgufFile *f, const char *arch, const char *suffix, int required, int def, int *out, Err *e) {
    char key[96];
    int64_t v;
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    if (gguf_get_int(f, key, &v)) {
        if (required || gguf_find_kv(f, key)) return err_set(e, "%s: %s is missing or not an integer", f->path, key);
        *out = def;
        return 0;
    }
    if (v <= 0 || v > (1 << 30)) return err_set(e, "%s: %s = %lld is out of range", f->path, key, (long long)v);
    *out = (int)v;
    return 0;
}

static const GgufArch *find_arch(const GgufFile *f, Err *e) {
    const char *arch = gguf_get_str(f, "general.architecture");
    for (size_t i = 0; arch && i < sizeof ARCHES / sizeof ARCHES[0]; i++)
        if (!strcmp(arch, ARCHES[i].name)) return &ARCHES[i];
    err_set(e, "%s: GGUF architecture '%.32s' cannot run yet (llama, qwen2, olmo2, qwen3, gemma2, gemma3 and phi3 can)", f->path,
            arch ? arch : "(none)");
    return NULL;
}

static const GgufTensor *shaped(const GgufFile *f, const char *name, int64_t cols, int64_t rows, Err *e);

/* llama3's frequency divisor of pair i under c's rope_factor/low/high/orig_ctx
 * (forward.c's rope_freq, as a divisor). */
static double llama3_divisor(const Config *c, int i) {
    double f = 1.0 / pow(c->rope_theta, 2.0 * i / c->head_size), wl = 2 * 3.14159265358979323846 / f;
    if (wl < c->rope_orig_ctx / c->rope_high) return 1;
    if (wl > c->rope_orig_ctx / c->rope_low) return c->rope_factor;
    double smooth = (c->rope_orig_ctx / wl - c->rope_low) / (c->rope_high - c->rope_low);
    return 1 / ((1 - smooth) / c->rope_factor + smooth);
}

/* rope_freqs.weight, the divisor of each pair's frequency that llama.cpp's
 * converter writes for llama3 scaling, mapped back to Config's
 * rope_factor/low/high/orig_ctx: the factor is the largest divisor, and the
 * divisors between 1 and it lie on a line in 1/wavelength whose slope and
 * intercept give low and high for the original context
 * ({arch}.rope.scaling.original_context_length, else 8192: only the ratios
 * matter). A table the recovered values do not reproduce to 1e-4 is
 * refused, not approximated. */
static int rope_freqs(const GgufFile *f, const GgufArch *a, Config *c, Err *e) {
    if (!gguf_find_tensor(f, "rope_freqs.weight")) return 0;
    int half = c->head_size / 2, n_mid = 0, first = -1, last = -1;
    const GgufTensor *t = shaped(f, "rope_freqs.weight", half, 1, e);
    float ff[MODEL_MAX_DIM / 2];
    if (!t || gguf_dequant(t->type, t->data, ff, half, e)) return -1;
    double F = 1;
    for (int i = 0; i < half; i++) {
        if (!(ff[i] >= 1 && ff[i] < 1e6)) return err_set(e, "%s: rope_freqs.weight[%d] = %g is not a divisor >= 1", f->path, i, ff[i]);
        if (ff[i] > F) F = ff[i];
    }
    if (F == 1) return 0; /* no pair rescaled */
    for (int i = 0; i < half; i++)
        if (ff[i] > 1 + 1e-6 && ff[i] < F * (1 - 1e-6)) n_mid++, last = i, first = first < 0 ? i : first;
    if (n_mid < 2)
        return err_set(e, "%s: rope_freqs.weight rescales %d pair(s) part-way: too few to recover llama3's scaling", f->path, n_mid);
    double u[2], sm[2];
    for (int k = 0; k < 2; k++) {
        int i = k ? last : first;
        u[k] = 1.0 / pow(c->rope_theta, 2.0 * i / c->head_size) / (2 * 3.14159265358979323846);
        sm[k] = (1.0 / ff[i] - 1 / F) / (1 - 1 / F);
    }
    double A = (sm[1] - sm[0]) / (u[1] - u[0]), B = sm[0] - A * u[0];
    int64_t orig = 8192;
    char key[96];
    snprintf(key, sizeof key, "%s.rope.scaling.original_context_length", a->name);
    gguf_get_int(f, key, &orig);
    if (!(A > 0) || orig <= 0 || orig > MODEL_MAX_SEQ)
        return err_set(e, "%s: rope_freqs.weight is not llama3's scaling (its divisors do not grow with the wavelength)", f->path);
    c->rope_factor = (float)F, c->rope_orig_ctx = (int)orig;
    c->rope_low = (float)(-B * orig / A), c->rope_high = (float)(-B * orig / A + orig / A);
    for (int i = 0; i < half; i++)
        if (!(c->rope_low > 0) || fabs(llama3_divisor(c, i) - ff[i]) > 1e-4 * ff[i])
            return err_set(e, "%s: rope_freqs.weight is not llama3's scaling (pair %d: %g, llama3's fit gives %g)", f->path,
                           i, ff[i], llama3_divisor(c, i));
    return 0;
}

/* A non-negative float key {arch}.suffix into *out (absent: 0). */
static int cfg_cap(const GgufFile *f, const char *arch, const char *suffix, float *out, Err *e) {
    char key[96];
    double v = 0;
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    if (gguf_get_float(f, key, &v) == 0 && !(v >= 0 && v < 1e30)) return err_set(e, "%s: %s = %g is out of range", f->path, key, v);
    *out = (float)v;
    return 0;
}

/* Gemma 2 as llama.cpp runs it: embeddings × √dim, GeGLU, soft-caps, the
 * window on even layers, and the query scale its gemma2 applies (the file
 * stores no query_pre_attn_scalar): 1/√(dim/heads) for the 46-layer 27B,
 * 1/√head_dim for every other size. */
static int gemma2_config(const GgufFile *f, const GgufArch *a, Config *c, Err *e) {
    int w = 0, g3 = a->arch == ARCH_GEMMA3;
    if (cfg_cap(f, a->name, "attn_logit_softcapping", &c->attn_softcap, e) ||
        cfg_cap(f, a->name, "final_logit_softcapping", &c->final_softcap, e) ||
        cfg_int(f, a->name, "attention.sliding_window", 0, 0, &w, e))
        return -1;
    if (w > MODEL_MAX_SEQ) return err_set(e, "%s: %s.attention.sliding_window %d is absurdly large", f->path, a->name, w);
    /* llama.cpp's gemma3: every 6th layer global, local layers on base 1e4 unscaled */
    c->sliding_window = w, c->window_pattern = g3 ? 6 : 2;
    if (g3) c->rope_local_theta = 1e4f;
    c->embed_scale = sqrtf((float)c->dim), c->act_gelu = 1;
    c->query_scale = 1.0f / sqrtf(c->n_layers == 46 ? (float)c->dim / c->n_heads : (float)c->head_size);
    return 0;
}

/* The window every layer of a llama or phi3 keeps ({arch}.attention.sliding_window; absent or 0: none).
 * llama.cpp reads neither (its llama has no window, its phi3 turns it off):
 * ahascope runs what the file states, as the folder it came from did. A
 * windowed llama is a Mistral (ARCH_MISTRAL, so a conversion keeps it). */
static int window_all(const GgufFile *f, const GgufArch *a, Config *c, Err *e) {
    char key[96];
    int64_t w = 0;
    snprintf(key, sizeof key, "%s.attention.sliding_window", a->name);
    if (gguf_find_kv(f, key) && (gguf_get_int(f, key, &w) || w < 0 || w > MODEL_MAX_SEQ))
        return err_set(e, "%s: %s must be a whole number from 0 to %d", f->path, key, MODEL_MAX_SEQ);
    c->sliding_window = (int)w;
    if (w > 0 && a->arch == ARCH_LLAMA) c->arch = ARCH_MISTRAL;
    return 0;
}

/* phi3's attention factor ({arch}.rope.scaling.attn_factor, cos and sin
 * multiplied by it: llama.cpp's rope_attn_factor) and original context
 * ({arch}.rope.scaling.original_context_length, else the context length),
 * the one past which a run takes the long factors (take_rope_factors). */
static int phi3_config(const GgufFile *f, const GgufArch *a, int ctx, Config *c, Err *e) {
    char key[96];
    double af = 1;
    snprintf(key, sizeof key, "%s.rope.scaling.attn_factor", a->name);
    if (gguf_find_kv(f, key) && (gguf_get_float(f, key, &af) || !(af > 0 && af < 1e3)))
        return err_set(e, "%s: %s must be a number above 0", f->path, key);
    c->rope_mscale = af == 1 ? 0 : (float)af;
    if (c->q_dim != c->dim)
        return err_set(e, "%s: a phi3 whose heads are not dim / heads wide (%d x %d) is not llama.cpp's phi3", f->path,
                       c->n_heads, c->head_size);
    return cfg_int(f, a->name, "rope.scaling.original_context_length", 0, ctx, &c->rope_orig_ctx, e); /* llama.cpp's default too */
}

static int gguf_config(const GgufFile *f, const GgufArch *a, int max_ctx, Config *c, Err *e) {
    const char *p = a->name;
    memset(c, 0, sizeof *c);
    int ctx = 0, rope_dims = 0, key_len = 0, value_len = 0;
    if (cfg_int(f, p, "embedding_length", 1, 0, &c->dim, e) || cfg_int(f, p, "feed_forward_length", 1, 0, &c->hidden_dim, e) ||
        cfg_int(f, p, "block_count", 1, 0, &c->n_layers, e) || cfg_int(f, p, "attention.head_count", 1, 0, &c->n_heads, e) ||
        cfg_int(f, p, "attention.head_count_kv", 0, c->n_heads, &c->n_kv_heads, e) ||
        cfg_int(f, p, "context_length", 0, 2048, &ctx, e) || cfg_int(f, p, "rope.dimension_count", 0, 0, &rope_dims, e) ||
        cfg_int(f, p, "attention.key_length", 0, 0, &key_len, e) || cfg_int(f, p, "attention.value_length", 0, key_len, &value_len, e))
        return -1;
    if (value_len != key_len)
        return err_set(e, "%s: %s.attention.value_length %d differs from key_length %d", f->path, p, value_len, key_len);
    c->head_size = key_len; /* 0: dim / heads */
    const GgufTensor *emb = gguf_find_tensor(f, "token_embd.weight");
    if (!emb || emb->n_dims != 2 || emb->ne[0] != c->dim || emb->ne[1] > MODEL_MAX_VOCAB)
        return err_set(e, "%s: tensor 'token_embd.weight' is missing or not [%d, vocab]", f->path, c->dim);
    double theta = 10000, eps = 1e-5;
    char key[96];
    snprintf(key, sizeof key, "%s.rope.freq_base", p);
    gguf_get_float(f, key, &theta);
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", p);
    gguf_get_float(f, key, &eps);
    snprintf(key, sizeof key, "%s.rope.scaling.type", p);
    const char *scaling = gguf_get_str(f, key);
    if (scaling && !strcmp(scaling, "linear") && a->arch == ARCH_GEMMA3) { /* the global layers' positions / factor */
        double factor = 0;
        snprintf(key, sizeof key, "%s.rope.scaling.factor", p);
        if (gguf_get_float(f, key, &factor) || !(factor > 0 && factor < 1e6))
            return err_set(e, "%s: linear RoPE scaling needs %s > 0", f->path, key);
        c->rope_linear = (float)factor;
        scaling = NULL;
    }
    if (scaling && strcmp(scaling, "none"))
        return err_set(e, "%s: RoPE scaling '%.32s' cannot run yet from a GGUF file (llama3's rope_freqs can)", f->path,
                       scaling);
    if (!(theta > 0 && theta < 1e12) || !(eps > 0 && eps < 1))
        return err_set(e, "%s: rope.freq_base %g or layer_norm_rms_epsilon %g out of range", f->path, theta, eps);
    c->vocab_size = (int)emb->ne[1];
    int cap = max_ctx > 0 ? max_ctx : MODEL_HF_DEFAULT_CTX;
    c->seq_len = ctx < cap ? ctx : cap;
    c->rope_theta = (float)theta, c->norm_eps = (float)eps;
    c->qk_norm_head = a->qk_head;
    c->shared_classifier = gguf_find_tensor(f, "output.weight") == NULL;
    c->arch = a->arch, c->rope_half = a->rope_half;
    if (model_config_check(c, f->path, e)) return -1;
    if (rope_dims && rope_dims != c->head_size)
        return err_set(e, "%s: partial RoPE (%d of %d dims) cannot run yet", f->path, rope_dims, c->head_size);
    if (a->gemma && gemma2_config(f, a, c, e)) return -1;
    if ((a->arch == ARCH_LLAMA || a->fused) && window_all(f, a, c, e)) return -1;
    if (a->fused && phi3_config(f, a, ctx, c, e)) return -1;
    return rope_freqs(f, a, c, e);
}

/* Tensor name, checked to be [cols, rows] (rows 1: a vector). */
static const GgufTensor *shaped(const GgufFile *f, const char *name, int64_t cols, int64_t rows, Err *e) {
    const GgufTensor *t = gguf_find_tensor(f, name);
    if (!t) {
        err_set(e, "%s: tensor '%s' not found", f->path, name);
        return NULL;
    }
    if (t->ne[0] != cols || t->ne[1] != rows || t->ne[2] != 1 || t->ne[3] != 1) {
        err_set(e, "%s: tensor '%s': expected [%lld, %lld], found [%lld, %lld, %lld, %lld]", f->path, name,
                (long long)cols, (long long)rows, (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                (long long)t->ne[3]);
        return NULL;
    }
    return t;
}

/* A matrix in place: its mapped bytes and DType. */
static int take_mat(const GgufFile *f, const char *name, int64_t cols, int64_t rows, Mat *out, Err *e) {
    const GgufTensor *t = shaped(f, name, cols, rows, e);
    if (!t) return -1;
    int dt = model_dtype_from_ggml(t->type);
    if (dt < 0)
        return err_set(e, "%s: tensor '%s': %s weights cannot be read (F32, F16, BF16, Q4_0 … Q8_0, Q2_K … Q6_K can)",
                       f->path, name, gguf_type_name(t->type));
    size_t align = model_dtype_is_block(dt) ? 1 : model_dtype_size(dt); /* blocks are read as bytes */
    if ((uintptr_t)t->data % align)
        return err_set(e, "%s: tensor '%s': %s data at a misaligned address (general.alignment too small to use in place)",
                       f->path, name, gguf_type_name(t->type));
    *out = (Mat){t->data, dt};
    return 0;
}

/* A vector widened into *at (which then moves past it). */
static int take_vec(const GgufFile *f, const char *name, int64_t n, float **at, const float **out, Err *e) {
    const GgufTensor *t = shaped(f, name, n, 1, e);
    if (!t) return -1;
    if (gguf_dequant(t->type, t->data, *at, n, e)) {
        char why[sizeof e->msg];
        snprintf(why, sizeof why, "%s", e->msg);
        return err_set(e, "%s: tensor '%s': %s", f->path, name, why);
    }
    *out = *at;
    *at += n;
    return 0;
}

/* Tensors a block of architecture a holds. */
static int per_layer(const GgufArch *a) {
    return a->fused ? 6 : (a->olmo || a->gemma ? 11 : 9 + 3 * a->biases) + 2 * a->qk_head;
}

/* Floats of the widened vectors of one block. */
static int64_t layer_vec_floats(const GgufArch *a, const Config *c) {
    int64_t d = c->dim, q = c->q_dim, kv = c->kv_dim;
    if (a->fused) return 2 * d;
    if (a->gemma) return 4 * d + (a->qk_head ? 2 * (int64_t)c->head_size : 0);
    return a->olmo ? 2 * d + q + kv : 2 * d + (a->biases ? q + 2 * kv : 0) + (a->qk_head ? 2 * (int64_t)c->head_size : 0);
}

/* Rows [row0, ...) of a fused matrix of cols columns, as its own Mat. */
static Mat mat_rows(Mat m, int64_t row0, int64_t cols) {
    return (Mat){(const char *)m.p + (size_t)row0 * model_row_bytes(m.dt, (size_t)cols), m.dt};
}

/* phi3's block: llama's with attn_qkv [dim, q + 2 kv] and ffn_up [dim, 2 hidden] fused. */
static int take_fused_layer(const GgufFile *f, const Config *c, int l, LayerWeights *lw, float **v, Err *e) {
    int64_t d = c->dim, h = c->hidden_dim, kv = c->kv_dim, q = c->q_dim;
    char n[6][64];
    const char *parts[6] = {"attn_qkv", "attn_output", "ffn_up", "ffn_down", "attn_norm", "ffn_norm"};
    for (int i = 0; i < 6; i++) snprintf(n[i], sizeof n[i], "blk.%d.%s.weight", l, parts[i]);
    Mat qkv, gu;
    if (take_mat(f, n[0], d, q + 2 * kv, &qkv, e) || take_mat(f, n[1], q, d, &lw->wo, e) || take_mat(f, n[2], d, 2 * h, &gu, e) ||
        take_mat(f, n[3], h, d, &lw->w2, e) || take_vec(f, n[4], d, v, &lw->attn_norm, e) || take_vec(f, n[5], d, v, &lw->ffn_norm, e))
        return -1;
    lw->wq = qkv, lw->wk = mat_rows(qkv, q, d), lw->wv = mat_rows(qkv, q + kv, d);
    lw->w1 = gu, lw->w3 = mat_rows(gu, h, d);
    lw->window = c->sliding_window;
    return 0;
}

/* llama.cpp's gemma windows: layer l slides when l % P < P - 1 (gemma2: the even layers). */
static int gemma_window(const Config *c, int l) {
    int P = c->window_pattern;
    return P > 0 && l % P < P - 1 ? c->sliding_window : 0;
}

static int take_layer(const GgufFile *f, const GgufArch *a, const Config *c, int l, LayerWeights *lw, float **v, Err *e) {
    int64_t d = c->dim, h = c->hidden_dim, kv = c->kv_dim, q = c->q_dim;
    if (a->fused) return take_fused_layer(f, c, l, lw, v, e);
    char n[12][64];
    const char *parts[12] = {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
                             "ffn_gate.weight", "ffn_down.weight", "ffn_up.weight",
                             a->olmo ? "post_attention_norm.weight" : "attn_norm.weight",
                             a->olmo ? "post_ffw_norm.weight" : "ffn_norm.weight",
                             a->olmo || a->qk_head ? "attn_q_norm.weight" : "attn_q.bias",
                             a->olmo || a->qk_head ? "attn_k_norm.weight" : "attn_k.bias", "attn_v.bias"};
    for (int i = 0; i < 12; i++) snprintf(n[i], sizeof n[i], "blk.%d.%s", l, parts[i]);
    if (take_mat(f, n[0], d, q, &lw->wq, e) || take_mat(f, n[1], d, kv, &lw->wk, e) ||
        take_mat(f, n[2], d, kv, &lw->wv, e) || take_mat(f, n[3], q, d, &lw->wo, e) ||
        take_mat(f, n[4], d, h, &lw->w1, e) || take_mat(f, n[5], h, d, &lw->w2, e) || take_mat(f, n[6], d, h, &lw->w3, e))
        return -1;
    if (a->olmo)
        return take_vec(f, n[7], d, v, &lw->post_attn_norm, e) || take_vec(f, n[8], d, v, &lw->post_ffn_norm, e) ||
                       take_vec(f, n[9], q, v, &lw->q_norm, e) || take_vec(f, n[10], kv, v, &lw->k_norm, e)
                   ? -1 : 0;
    if (take_vec(f, n[7], d, v, &lw->attn_norm, e) || take_vec(f, n[8], d, v, &lw->ffn_norm, e)) return -1;
    if (a->qk_head && (take_vec(f, n[9], c->head_size, v, &lw->q_norm, e) || take_vec(f, n[10], c->head_size, v, &lw->k_norm, e)))
        return -1;
    if (a->gemma) { /* llama.cpp's converter stored 1 + w: the gains as multiplied */
        char pa[64], pf[64];
        snprintf(pa, sizeof pa, "blk.%d.post_attention_norm.weight", l);
        snprintf(pf, sizeof pf, "blk.%d.post_ffw_norm.weight", l);
        lw->window = gemma_window(c, l);
        return take_vec(f, pa, d, v, &lw->post_attn_norm, e) || take_vec(f, pf, d, v, &lw->post_ffn_norm, e) ? -1 : 0;
    }
    if (a->biases && (take_vec(f, n[9], q, v, &lw->bq, e) || take_vec(f, n[10], kv, v, &lw->bk, e) ||
                      take_vec(f, n[11], kv, v, &lw->bv, e)))
        return -1;
    lw->window = c->sliding_window; /* a llama's (Mistral's) window, every layer; 0 elsewhere */
    return 0;
}

/* How many of phi3's two factor tables the file holds (0 or 2 are right). */
static int n_rope_factors(const GgufFile *f) {
    return (gguf_find_tensor(f, ROPE_FACTORS[0]) != NULL) + (gguf_find_tensor(f, ROPE_FACTORS[1]) != NULL);
}

/* phi3's short and long factors widened into *v, and the one the context
 * picks as rope_ext: long once the context passes the original, as
 * llama.cpp picks them by its context's size (and model_hf.c by the run's). */
static int take_rope_factors(const GgufFile *f, Config *c, float **v, Err *e) {
    int half = c->head_size / 2;
    if (n_rope_factors(f) == 0) return 0; /* take_all refused one alone */
    if (take_vec(f, ROPE_FACTORS[0], half, v, &c->rope_short, e) || take_vec(f, ROPE_FACTORS[1], half, v, &c->rope_long, e))
        return -1;
    for (int i = 0; i < 2 * half; i++) {
        float x = i < half ? c->rope_short[i] : c->rope_long[i - half];
        if (!(x > 0 && x < 1e9))
            return err_set(e, "%s: %s[%d] = %g is not a positive factor", f->path, ROPE_FACTORS[i >= half], i % half, x);
    }
    c->rope_ext = c->seq_len > c->rope_orig_ctx ? c->rope_long : c->rope_short;
    return 0;
}

/* Bytes of mat's rows × cols in its type. */
static uint64_t mat_bytes(Mat m, int64_t rows, int64_t cols) { return (uint64_t)rows * model_row_bytes(m.dt, (size_t)cols); }

/* What a decode step reads (every matrix, one embedding row unless the
 * embedding is also the classifier, the f32 vectors), and the type that
 * holds the most of those bytes. */
static void count_bytes(Model *m, int64_t vec_floats) {
    Config *c = &m->c;
    int64_t d = c->dim, h = c->hidden_dim, kv = c->kv_dim, q = c->q_dim, V = c->vocab_size;
    uint64_t by_type[DT_NTYPES] = {0}, total = (uint64_t)vec_floats * sizeof(float);
    for (int l = 0; l < c->n_layers; l++) {
        const LayerWeights *lw = &m->layers[l];
        struct { Mat m; int64_t rows, cols; } mats[7] = {{lw->wq, q, d}, {lw->wk, kv, d}, {lw->wv, kv, d}, {lw->wo, d, q},
                                                        {lw->w1, h, d}, {lw->w2, d, h}, {lw->w3, h, d}};
        for (int i = 0; i < 7; i++) by_type[mats[i].m.dt] += mat_bytes(mats[i].m, mats[i].rows, mats[i].cols);
    }
    by_type[m->cls.dt] += mat_bytes(m->cls, V, d);
    if (!c->shared_classifier) by_type[m->embed.dt] += mat_bytes(m->embed, 1, d);
    int top = DT_F32;
    for (int t = 0; t < DT_NTYPES; t++) {
        total += by_type[t];
        if (by_type[t] > by_type[top]) top = t;
    }
    c->weight_bytes = total;
    c->dtype = top;
    /* a half-precision model keeps its KV cache in its type (as HF folders do);
     * a quantised one in f16, as ggml does */
    c->kv_dtype = top == DT_F32 || top == DT_BF16 ? top : DT_F16;
}

/* Every tensor of the architecture, the count exact so that none goes unused. */
static int take_all(Model *m, GgufModel *g, const GgufArch *a, Err *e) {
    const GgufFile *f = &g->f;
    const Config *c = &m->c;
    int L = c->n_layers, want = 2 + !c->shared_classifier + per_layer(a) * L + (gguf_find_tensor(f, "rope_freqs.weight") != NULL);
    if (a->fused && n_rope_factors(f) == 1)
        return err_set(e, "%s: holds one of %s and %s without the other", f->path, ROPE_FACTORS[0], ROPE_FACTORS[1]);
    if (a->fused) want += n_rope_factors(f);
    if (f->n_tensors != want)
        return err_set(e, "%s: holds %d tensors, but a %s of %d layers has %d", f->path, f->n_tensors, a->name, L, want);
    int64_t per = layer_vec_floats(a, c), n = per * L + c->dim + (a->fused ? c->head_size : 0);
    float *v = g->vecs = malloc((size_t)n * sizeof(float));
    m->layers = calloc((size_t)L, sizeof *m->layers);
    if (!g->vecs || !m->layers) return err_set(e, "%s: out of memory for %d layers", f->path, L);
    if (take_mat(f, "token_embd.weight", c->dim, c->vocab_size, &m->embed, e) ||
        take_vec(f, "output_norm.weight", c->dim, &v, &m->final_norm, e))
        return -1;
    m->cls = m->embed;
    if (!c->shared_classifier && take_mat(f, "output.weight", c->dim, c->vocab_size, &m->cls, e)) return -1;
    for (int l = 0; l < L; l++)
        if (take_layer(f, a, c, l, &m->layers[l], &v, e)) return -1;
    if (a->fused && take_rope_factors(f, &m->c, &v, e)) return -1;
    count_bytes(m, n);
    return 0;
}

/* A packable matrix of a model: where it is and its shape (rows × cols). */
typedef struct {
    Mat *m;
    int rows, cols;
} PackJob;

/* Whether gemm_q_pack takes m, of rows × cols, at load. */
static int packable(Mat m, int rows, int cols) {
    int ty = model_dtype_ggml(m.dt);
    return (m.dt == DT_Q4_K || m.dt == DT_Q6_K) && gemm_q_pack_wanted(ty) && gemm_q_pack_bytes(ty, rows, cols);
}

/* The model's Q4_K and Q6_K matrices gemm_q_pack takes: every layer's seven
 * (phi3's fused ones are row ranges of one tensor and stay as stored) and an
 * untied classifier (a tied one is also the embedding, read a row at a time). */
static int pack_jobs(Model *m, int fused, PackJob *jobs) {
    Config *c = &m->c;
    int n = 0;
    for (int l = 0; l < c->n_layers && !fused; l++) {
        LayerWeights *lw = &m->layers[l];
        PackJob j[7] = {{&lw->wq, c->q_dim, c->dim}, {&lw->wk, c->kv_dim, c->dim}, {&lw->wv, c->kv_dim, c->dim},
                        {&lw->wo, c->dim, c->q_dim}, {&lw->w1, c->hidden_dim, c->dim}, {&lw->w2, c->dim, c->hidden_dim},
                        {&lw->w3, c->hidden_dim, c->dim}};
        for (int i = 0; i < 7; i++)
            if (packable(*j[i].m, j[i].rows, j[i].cols)) jobs[n++] = j[i];
    }
    if (!c->shared_classifier && packable(m->cls, c->vocab_size, c->dim)) jobs[n++] = (PackJob){&m->cls, c->vocab_size, c->dim};
    return n;
}

/* The whole pages inside [p, p + n) given back to the kernel: the file's
 * pages (or the copy's) that only the stored form of a packed matrix used. */
static void release_pages(const void *p, size_t n) {
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), lo = ((uintptr_t)p + pg - 1) / pg * pg, hi = ((uintptr_t)p + n) / pg * pg;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Pack what pack_jobs lists into one buffer, each matrix's stored pages
 * released as soon as it is packed (so the peak is one matrix over the
 * file). Out of memory leaves the model as stored. */
static void pack_model(Model *m, GgufModel *g, int fused) {
    if (!g->f.view.base) return;
    PackJob *jobs = malloc((7 * (size_t)m->c.n_layers + 1) * sizeof *jobs);
    int n = jobs ? pack_jobs(m, fused, jobs) : 0;
    size_t total = 0, at = 0;
    for (int i = 0; i < n; i++)
        total += (gemm_q_pack_bytes(model_dtype_ggml(jobs[i].m->dt), jobs[i].rows, jobs[i].cols) + 63) / 64 * 64;
    char *buf = n ? mem_big_alloc(total) : NULL;
    for (int i = 0; buf && i < n; i++) {
        PackJob *j = &jobs[i];
        int ty = model_dtype_ggml(j->m->dt);
        gemm_q_pack(ty, buf + at, j->m->p, j->rows, j->cols);
        release_pages(j->m->p, (size_t)j->rows * model_row_bytes(j->m->dt, (size_t)j->cols));
        j->m->p = buf + at; /* (weight_bytes stays the stored bytes: packed Q4_K is 148/144 of them) */
        at += (gemm_q_pack_bytes(ty, j->rows, j->cols) + 63) / 64 * 64;
    }
    g->packed = buf;
    m->packed = buf, m->packed_bytes = buf ? total : 0;
    free(jobs);
}

void model_gguf_free(Model *m) {
    GgufModel *g = m->gguf;
    if (!g) return;
    gguf_close(&g->f);
    mem_big_free(g->packed);
    free(g->vecs);
    free(g);
    m->gguf = NULL;
}

int model_load_gguf(Model *m, const char *path, Err *e) { return model_load_gguf_ctx(m, path, 0, e); }

int model_load_gguf_ctx(Model *m, const char *path, int max_ctx, Err *e) {
    memset(m, 0, sizeof *m);
    GgufModel *g = calloc(1, sizeof *g);
    if (!g) return err_set(e, "%s: out of memory", path);
    m->gguf = g;
    const GgufArch *a = NULL;
    int rc = gguf_open(&g->f, path, e);
    if (!rc) rc = (a = find_arch(&g->f, e)) ? 0 : -1;
    if (!rc) rc = gguf_config(&g->f, a, max_ctx, &m->c, e);
    if (!rc) rc = take_all(m, g, a, e);
    if (!rc) pack_model(m, g, a->fused);
    if (rc) {
        model_gguf_free(m);
        free(m->layers);
        memset(m, 0, sizeof *m);
        return -1;
    }
    m->file_bytes = g->f.size;
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->arch_name, sizeof m->arch_name, "%s", a->name);
    m->version = MODEL_VERSION_GGUF;
    return 0;
}

int model_gguf_layer_windows(const char *path, int32_t *win, int cap, Err *e) {
    GgufFile f;
    Config c;
    memset(&c, 0, sizeof c);
    if (gguf_open(&f, path, e)) return -1;
    const GgufArch *a = find_arch(&f, e);
    int n = a && !gguf_config(&f, a, 0, &c, e) ? c.n_layers : -1;
    if (n > cap) n = err_set(e, "%s: %d layers, more than %d", path, n, cap);
    /* the loader's own rule: gemma's pattern, else every layer's window (mistral, phi3; 0: none) */
    for (int l = 0; l < n; l++) win[l] = a->gemma ? gemma_window(&c, l) : c.sliding_window;
    gguf_close(&f);
    return n;
}

int model_gguf_type_mix(const Model *m, char *buf, size_t n) {
    const GgufModel *g = m->gguf;
    if (!g || !n) return -1;
    gguf_mix_name(&g->f, buf, n); /* the one table of llama.cpp's file-type names */
    return 0;
}
