/* model_gguf.c — a GGUF llama model, its tensors widened into llama2.c-ordered f32 weights.
 *
 * ggml's llama rotates adjacent RoPE pairs, and its converter reorders a
 * Hugging Face model's W_Q/W_K rows (rotate-half) into that order; llama2.c
 * checkpoints rotate adjacent pairs too. So a GGUF llama's rows are already
 * in the order the llama2.c block (ARCH_LLAMA2C, rope_half 0) expects and
 * none is permuted back. Matrices are ggml [ne1 rows][ne0 columns], the
 * same row-major [out][in] as Model's. Every tensor is widened once at load
 * (F32, F16, BF16, Q8_0, Q4_0), so the forward pass runs unchanged. */
#include "model.h"
#include "gguf.h"
#include "mem.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"

int model_is_gguf(const char *path) {
    FileKind k;
    if (!file_stat_kind(path, &k, NULL)) return 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    char b[4];
    ssize_t n = fd >= 0 ? read(fd, b, 4) : -1;
    if (fd >= 0) close(fd);
    return n == 4 && gguf_sniff(b, 4);
}

/* llama.{suffix} as a positive int; def when absent and not required. */
static int cfg_int(const GgufFile *f, const char *suffix, int required, int def, int *out, Err *e) {
    char key[96];
    int64_t v;
    snprintf(key, sizeof key, "llama.%s", suffix);
    if (gguf_get_int(f, key, &v)) {
        if (required || gguf_find_kv(f, key)) return err_set(e, "%s: %s is missing or not an integer", f->path, key);
        *out = def;
        return 0;
    }
    if (v <= 0 || v > (1 << 30)) return err_set(e, "%s: %s = %lld is out of range", f->path, key, (long long)v);
    *out = (int)v;
    return 0;
}

static int gguf_config(const GgufFile *f, Config *c, Err *e) {
    const char *arch = gguf_get_str(f, "general.architecture");
    if (!arch || strcmp(arch, "llama"))
        return err_set(e, "%s: GGUF architecture '%.32s' cannot run yet (only llama)", f->path, arch ? arch : "(none)");
    memset(c, 0, sizeof *c);
    int ctx = 0, rope_dims = 0;
    if (cfg_int(f, "embedding_length", 1, 0, &c->dim, e) || cfg_int(f, "feed_forward_length", 1, 0, &c->hidden_dim, e) ||
        cfg_int(f, "block_count", 1, 0, &c->n_layers, e) || cfg_int(f, "attention.head_count", 1, 0, &c->n_heads, e) ||
        cfg_int(f, "attention.head_count_kv", 0, c->n_heads, &c->n_kv_heads, e) ||
        cfg_int(f, "context_length", 0, 2048, &ctx, e) || cfg_int(f, "rope.dimension_count", 0, 0, &rope_dims, e))
        return -1;
    const GgufTensor *emb = gguf_find_tensor(f, "token_embd.weight");
    if (!emb || emb->n_dims != 2 || emb->ne[0] != c->dim || emb->ne[1] > MODEL_MAX_VOCAB)
        return err_set(e, "%s: tensor 'token_embd.weight' is missing or not [%d, vocab]", f->path, c->dim);
    double theta = 10000, eps = 1e-5;
    gguf_get_float(f, "llama.rope.freq_base", &theta);
    gguf_get_float(f, "llama.attention.layer_norm_rms_epsilon", &eps);
    const char *scaling = gguf_get_str(f, "llama.rope.scaling.type");
    if ((scaling && strcmp(scaling, "none")) || gguf_find_tensor(f, "rope_freqs.weight"))
        return err_set(e, "%s: RoPE scaling cannot run yet from a GGUF file", f->path);
    if (!(theta > 0 && theta < 1e12) || !(eps > 0 && eps < 1))
        return err_set(e, "%s: rope.freq_base %g or layer_norm_rms_epsilon %g out of range", f->path, theta, eps);
    c->vocab_size = (int)emb->ne[1];
    c->seq_len = ctx < MODEL_HF_DEFAULT_CTX ? ctx : MODEL_HF_DEFAULT_CTX;
    c->rope_theta = (float)theta, c->norm_eps = (float)eps;
    c->shared_classifier = gguf_find_tensor(f, "output.weight") == NULL;
    if (model_config_check(c, f->path, e)) return -1;
    if (rope_dims && rope_dims != c->head_size)
        return err_set(e, "%s: partial RoPE (%d of %d dims) cannot run yet", f->path, rope_dims, c->head_size);
    return 0;
}

/* Tensor name, checked to be [cols, rows] (rows 1: a vector), widened into dst. */
static int take(const GgufFile *f, const char *name, int64_t cols, int64_t rows, float *dst, Err *e) {
    const GgufTensor *t = gguf_find_tensor(f, name);
    if (!t) return err_set(e, "%s: tensor '%s' not found", f->path, name);
    if (t->ne[0] != cols || t->ne[1] != rows || t->ne[2] != 1 || t->ne[3] != 1)
        return err_set(e, "%s: tensor '%s': expected [%lld, %lld], found [%lld, %lld, %lld, %lld]", f->path, name,
                       (long long)cols, (long long)rows, (long long)t->ne[0], (long long)t->ne[1],
                       (long long)t->ne[2], (long long)t->ne[3]);
    if (gguf_dequant(t->type, t->data, dst, cols * rows, e) == 0) return 0;
    char why[sizeof e->msg];
    snprintf(why, sizeof why, "%s", e->msg);
    return err_set(e, "%s: tensor '%s': %s", f->path, name, why);
}

/* Every tensor of the llama block, into the llama2.c order of Weights in
 * one owned block; the count must match, so no tensor goes unused. */
static int take_all(Model *m, const GgufFile *f, Err *e) {
    const Config *c = &m->c;
    int64_t d = c->dim, h = c->hidden_dim, L = c->n_layers, kv = c->kv_dim, V = c->vocab_size, q = c->q_dim;
    int want = 2 + !c->shared_classifier + 9 * (int)L;
    if (f->n_tensors != want)
        return err_set(e, "%s: holds %d tensors, but a llama of %lld layers has %d", f->path, f->n_tensors, (long long)L, want);
    uint64_t n = (uint64_t)(V * d * (2 - c->shared_classifier) + L * (2 * d + 2 * q * d + 2 * kv * d + 3 * h * d) + d);
    float *p = m->owned = mem_big_alloc(n * sizeof(float));
    if (!p) return err_set(e, "%s: cannot allocate %llu MB for the weights", f->path, (unsigned long long)(n * 4 >> 20));
    Weights *w = &m->w;
    w->token_embedding = p, p += V * d;
    w->rms_att = p, p += L * d;
    w->wq = p, p += L * q * d;
    w->wk = p, p += L * kv * d;
    w->wv = p, p += L * kv * d;
    w->wo = p, p += L * d * q;
    w->rms_ffn = p, p += L * d;
    w->w1 = p, p += L * h * d;
    w->w2 = p, p += L * d * h;
    w->w3 = p, p += L * h * d;
    w->rms_final = p, p += d;
    w->wcls = c->shared_classifier ? w->token_embedding : p;
    if (take(f, "token_embd.weight", d, V, (float *)w->token_embedding, e) ||
        take(f, "output_norm.weight", d, 1, (float *)w->rms_final, e) ||
        (!c->shared_classifier && take(f, "output.weight", d, V, (float *)w->wcls, e)))
        return -1;
    for (int64_t l = 0; l < L; l++) {
        char nm[9][64];
        const char *parts[9] = {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_down", "ffn_up"};
        for (int i = 0; i < 9; i++) snprintf(nm[i], sizeof nm[i], "blk.%lld.%s.weight", (long long)l, parts[i]);
        if (take(f, nm[0], d, 1, (float *)w->rms_att + l * d, e) || take(f, nm[1], d, q, (float *)w->wq + l * q * d, e) ||
            take(f, nm[2], d, kv, (float *)w->wk + l * kv * d, e) || take(f, nm[3], d, kv, (float *)w->wv + l * kv * d, e) ||
            take(f, nm[4], q, d, (float *)w->wo + l * d * q, e) || take(f, nm[5], d, 1, (float *)w->rms_ffn + l * d, e) ||
            take(f, nm[6], d, h, (float *)w->w1 + l * h * d, e) || take(f, nm[7], h, d, (float *)w->w2 + l * d * h, e) ||
            take(f, nm[8], d, h, (float *)w->w3 + l * h * d, e))
            return -1;
    }
    return 0;
}

int model_load_gguf(Model *m, const char *path, Err *e) {
    memset(m, 0, sizeof *m);
    GgufFile f;
    if (gguf_open(&f, path, e)) return -1;
    int rc = gguf_config(&f, &m->c, e);
    if (!rc) rc = take_all(m, &f, e);
    m->file_bytes = f.size;
    gguf_close(&f);
    if (!rc) rc = model_wire_layers(m, e);
    if (rc) {
        model_free(m);
        return -1;
    }
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->arch_name, sizeof m->arch_name, "llama");
    m->version = MODEL_VERSION_GGUF;
    return 0;
}
