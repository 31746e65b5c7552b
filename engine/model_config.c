/* model_config.c — a model's shape without its weights: `Config` checks, sizes, dtype names, the llama2.c header.
 *
 * A model's shape, apart from its weights: the checks of a
 * Config, its sizes in parameters and bytes, the dtype names, and the
 * llama2.c header that states one, and the layer kinds said in words (info,
 * the --window note). Both loaders (model.c, model_hf.c) and
 * the file sniffer (sniff.c) stand on it; it calls nothing but libc and the
 * error helper. */
#include "model.h"
#include "quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int model_config_check(Config *c, const char *what, Err *e) {
    const struct { const char *name; int v, max; } f[] = {
        {"dim", c->dim, MODEL_MAX_DIM},         {"hidden_dim", c->hidden_dim, 4 * MODEL_MAX_DIM},
        {"n_layers", c->n_layers, MODEL_MAX_LAYERS}, {"n_heads", c->n_heads, MODEL_MAX_DIM},
        {"n_kv_heads", c->n_kv_heads, MODEL_MAX_DIM}, {"vocab_size", c->vocab_size, MODEL_MAX_VOCAB},
        {"seq_len", c->seq_len, MODEL_MAX_SEQ},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].v <= 0) return err_set(e, "%s: %s must be positive (got %d)", what, f[i].name, f[i].v);
        if (f[i].v > f[i].max) return err_set(e, "%s: %s = %d is absurdly large (max %d)", what, f[i].name, f[i].v, f[i].max);
    }
    if (c->head_size <= 0) { /* not given apart: the llama2.c rule */
        if (c->dim % c->n_heads) return err_set(e, "%s: n_heads (%d) does not divide dim (%d)", what, c->n_heads, c->dim);
        c->head_size = c->dim / c->n_heads;
    }
    if (c->head_size > 4096) return err_set(e, "%s: head size %d is absurdly large (max 4096)", what, c->head_size);
    if ((long)c->head_size * c->n_heads > MODEL_MAX_DIM)
        return err_set(e, "%s: n_heads x head_size = %ld is absurdly large (max %d)", what,
                       (long)c->head_size * c->n_heads, MODEL_MAX_DIM);
    if (c->n_heads % c->n_kv_heads)
        return err_set(e, "%s: n_kv_heads (%d) does not divide n_heads (%d)", what, c->n_kv_heads, c->n_heads);
    if (c->head_size % 2) return err_set(e, "%s: head size %d is odd (RoPE rotates pairs)", what, c->head_size);
    c->q_dim = c->n_heads * c->head_size;
    c->kv_dim = c->n_kv_heads * c->head_size;
    if (c->rope_theta <= 0) c->rope_theta = 10000.0f;
    if (c->norm_eps <= 0) c->norm_eps = 1e-5f;
    return 0;
}

/* Each DType's ggml number and name. */
static const struct { int ggml; const char *name; } dtypes[DT_NTYPES] = {
    [DT_F32] = {GGML_F32, "f32"},    [DT_F16] = {GGML_F16, "f16"},    [DT_BF16] = {GGML_BF16, "bf16"},
    [DT_Q4_0] = {GGML_Q4_0, "q4_0"}, [DT_Q4_1] = {GGML_Q4_1, "q4_1"}, [DT_Q5_0] = {GGML_Q5_0, "q5_0"},
    [DT_Q5_1] = {GGML_Q5_1, "q5_1"}, [DT_Q8_0] = {GGML_Q8_0, "q8_0"}, [DT_Q2_K] = {GGML_Q2_K, "q2_k"},
    [DT_Q3_K] = {GGML_Q3_K, "q3_k"}, [DT_Q4_K] = {GGML_Q4_K, "q4_k"}, [DT_Q5_K] = {GGML_Q5_K, "q5_k"},
    [DT_Q6_K] = {GGML_Q6_K, "q6_k"},
};

size_t model_dtype_size(int dt) { return dt == DT_F32 ? 4 : dt == DT_F16 || dt == DT_BF16 ? 2 : 0; }

int model_dtype_is_block(int dt) { return dt >= DT_Q4_0 && dt < DT_NTYPES; }

int model_dtype_ggml(int dt) { return dt >= 0 && dt < DT_NTYPES ? dtypes[dt].ggml : -1; }

int model_dtype_from_ggml(int ggml_type) {
    for (int dt = 0; dt < DT_NTYPES; dt++)
        if (dtypes[dt].ggml == ggml_type) return dt;
    return -1;
}

size_t model_row_bytes(int dt, size_t cols) {
    if (!model_dtype_is_block(dt)) return cols * model_dtype_size(dt);
    return quant_row_bytes((GgmlType)dtypes[dt].ggml, (int64_t)cols);
}

const char *model_dtype_name(int dt) { return dt >= 0 && dt < DT_NTYPES ? dtypes[dt].name : "?"; }

int model_dtype_parse(const char *name) {
    return !strcmp(name, "f32") ? DT_F32 : !strcmp(name, "bf16") ? DT_BF16 : !strcmp(name, "f16") ? DT_F16 : -1;
}

/* Element count of the matrices (embedding and classifier included) and of
 * the norm vectors. In llama2.c's files these are every tensor, in legacy
 * (v0) order; the v1 order is a permutation of the same tensors. */
static uint64_t matrix_elems(const Config *c) {
    uint64_t d = c->dim, h = c->hidden_dim, L = c->n_layers, kv = c->kv_dim, V = c->vocab_size, q = c->q_dim;
    uint64_t n = V * d + L * d * q * 2 + L * d * kv * 2 + L * d * h * 3;
    if (!c->shared_classifier) n += V * d;
    return n;
}

static uint64_t norm_elems(const Config *c) { return (uint64_t)c->n_layers * c->dim * 2 + c->dim; }

static uint64_t weight_floats(const Config *c) { return matrix_elems(c) + norm_elems(c); }

size_t model_n_params(const Config *c) { return (size_t)weight_floats(c); }

size_t model_decode_bytes(const Config *c) {
    if (c->weight_bytes) return (size_t)c->weight_bytes;
    uint64_t V = c->vocab_size, d = c->dim, ws = model_dtype_size(c->dtype);
    /* the embedding is read one row a step; a shared classifier reads it whole anyway */
    uint64_t mats = matrix_elems(c) - (c->shared_classifier ? 0 : V * d) + (c->shared_classifier ? 0 : d);
    return (size_t)(mats * ws + norm_elems(c) * sizeof(float));
}

size_t model_kv_bytes(const Config *c, size_t positions) {
    return (size_t)2 * c->n_layers * c->kv_dim * model_dtype_size(c->kv_dtype) * positions;
}

int model_header_read(const unsigned char *b, size_t size, Config *c, int *version, size_t *hdr, Err *e) {
    int32_t h[9];
    memset(c, 0, sizeof *c);
    if (size < MODEL_V0_HEADER) return err_set(e, "%zu bytes, too short for a llama2.c header", size);
    uint32_t magic;
    memcpy(&magic, b, 4);
    if (magic == MODEL_V1_MAGIC) {
        if (size < MODEL_V1_HEADER) return err_set(e, "truncated v1 header (%zu of 256 bytes)", size);
        memcpy(h, b, 36);
        if (h[1] != 1) return err_set(e, "unsupported ak42 checkpoint version %d (only 1)", h[1]);
        *version = 1;
        *hdr = MODEL_V1_HEADER;
        c->dim = h[2]; c->hidden_dim = h[3]; c->n_layers = h[4]; c->n_heads = h[5];
        c->n_kv_heads = h[6]; c->vocab_size = h[7]; c->seq_len = h[8];
        if (b[36] > 1) return err_set(e, "shared_classifier flag is %d (expected 0 or 1)", b[36]);
        c->shared_classifier = b[36];
    } else {
        memcpy(h, b, 28);
        *version = 0;
        *hdr = MODEL_V0_HEADER;
        c->dim = h[0]; c->hidden_dim = h[1]; c->n_layers = h[2]; c->n_heads = h[3];
        c->n_kv_heads = h[4]; c->seq_len = h[6];
        c->shared_classifier = h[5] > 0;
        c->vocab_size = h[5] == INT32_MIN ? 0 : abs(h[5]);
    }
    c->rope_theta = 10000.0f;
    return model_config_check(c, "header", e);
}

uint64_t model_checkpoint_bytes(const Config *c, int version, size_t hdr) {
    uint64_t expect = hdr + weight_floats(c) * 4;
    return version == 1 ? expect : expect + (uint64_t)c->seq_len * c->head_size * 4;
}

int model_sniff(const unsigned char *b, size_t n, uint64_t size) {
    Config c;
    int version = 0;
    size_t hdr = 0;
    if (model_header_read(b, n, &c, &version, &hdr, NULL) != 0) return 0;
    return model_checkpoint_bytes(&c, version, hdr) == size;
}


void model_layer_kinds_text(const int32_t *win, int n, char *buf, size_t cap) {
    int32_t kind[16];
    int cnt[16], k_n = 0;
    for (int l = 0; l < n; l++) {
        int32_t w = win[l] > 0 ? win[l] : 0;
        int k = 0;
        while (k < k_n && kind[k] != w) k++;
        if (k == k_n && k_n < 16) kind[k_n] = w, cnt[k_n++] = 0;
        if (k < k_n) cnt[k]++;
    }
    size_t at = 0;
    if (cap) buf[0] = 0;
    for (int k = 0; k < k_n && at < cap; k++) {
        const char *sep = k ? ", " : "";
        if (kind[k]) at += (size_t)snprintf(buf + at, cap - at, "%s%d local (window %d)", sep, cnt[k], (int)kind[k]);
        else at += (size_t)snprintf(buf + at, cap - at, "%s%d global", sep, cnt[k]);
    }
}

int model_window_note(const int32_t *win, int n, int w, char *buf, size_t cap) {
    int local = 0, global = 0, longer = 0;
    int32_t lo = 0, hi = 0;
    for (int l = 0; l < n; l++) {
        if (win[l] <= 0) { global++; continue; }
        lo = local++ ? (win[l] < lo ? win[l] : lo) : win[l];
        hi = win[l] > hi ? win[l] : hi;
        longer |= win[l] > w;
    }
    if (cap) buf[0] = 0;
    if (!longer) return 0;
    char size[48];
    if (lo == hi) snprintf(size, sizeof size, "a window of %d keys", (int)hi);
    else snprintf(size, sizeof size, "windows of %d to %d keys", (int)lo, (int)hi);
    snprintf(buf, cap, "the architecture's %d local layer%s slide%s %s, longer than AHA's w=%d; --window applies to the %d "
             "global layer%s only", local, local == 1 ? "" : "s", local == 1 ? "s" : "", size, w, global, global == 1 ? "" : "s");
    return 1;
}

void model_layer_windows(const Model *m, int32_t *win) {
    for (int l = 0; l < m->c.n_layers; l++) win[l] = m->layers ? m->layers[l].window : 0;
}
