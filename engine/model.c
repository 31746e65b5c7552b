/* model.c — llama2.c checkpoints and random weights into the one Model the forward pass reads. */
#include "model.h"

#include "files.h"
#include "half.h"
#include "mem.h"
#include "sniff.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Point every Weights field into a contiguous float array laid out in the
 * given file version's order. */
static void wire_weights(Model *m, const float *p, int version) {
    const Config *c = &m->c;
    uint64_t d = c->dim, h = c->hidden_dim, L = c->n_layers, kv = c->kv_dim, V = c->vocab_size, q = c->q_dim;
    Weights *w = &m->w;
    if (version == 1) {
        w->rms_att = p;         p += L * d;
        w->rms_ffn = p;         p += L * d;
        w->rms_final = p;       p += d;
        w->token_embedding = p; p += V * d;
    } else {
        w->token_embedding = p; p += V * d;
        w->rms_att = p;         p += L * d;
    }
    w->wq = p; p += L * d * q;
    w->wk = p; p += L * d * kv;
    w->wv = p; p += L * d * kv;
    w->wo = p; p += L * d * q;
    if (version != 1) { w->rms_ffn = p; p += L * d; }
    w->w1 = p; p += L * d * h;
    w->w2 = p; p += L * d * h;
    w->w3 = p; p += L * d * h;
    if (version != 1) {
        w->rms_final = p; p += d;
        p += (uint64_t)c->seq_len * c->head_size; /* legacy freq_cis_real + imag: unused */
    }
    w->wcls = c->shared_classifier ? w->token_embedding : p;
}

int model_wire_layers(Model *m, Err *e) {
    const Config *c = &m->c;
    const Weights *w = &m->w;
    free(m->layers);
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->layers) return err_set(e, "out of memory for %d layers", c->n_layers);
    size_t d = c->dim, h = c->hidden_dim, kv = c->kv_dim, q = c->q_dim;
    for (size_t l = 0; l < (size_t)c->n_layers; l++) {
        LayerWeights *lw = &m->layers[l];
        lw->wq = (Mat){w->wq + l * q * d, DT_F32};
        lw->wk = (Mat){w->wk + l * kv * d, DT_F32};
        lw->wv = (Mat){w->wv + l * kv * d, DT_F32};
        lw->wo = (Mat){w->wo + l * d * q, DT_F32};
        lw->w1 = (Mat){w->w1 + l * h * d, DT_F32};
        lw->w2 = (Mat){w->w2 + l * d * h, DT_F32};
        lw->w3 = (Mat){w->w3 + l * h * d, DT_F32};
        lw->attn_norm = w->rms_att + l * d;
        lw->ffn_norm = w->rms_ffn + l * d;
    }
    m->embed = (Mat){w->token_embedding, DT_F32};
    m->cls = (Mat){w->wcls, DT_F32};
    m->final_norm = w->rms_final;
    m->c.arch = ARCH_LLAMA2C;
    m->c.dtype = DT_F32;
    snprintf(m->arch_name, sizeof m->arch_name, "llama2.c");
    return 0;
}

/* What keeps m's blocks out of a llama2.c checkpoint, or NULL. */
static const char *llama2c_misfit(const Model *m) {
    const Config *c = &m->c;
    if (c->rope_half || c->rope_factor > 0) return "its RoPE is not llama2.c's (rotate-half or scaled)";
    if (c->q_dim != c->dim || m->builtin_routers) return "its W_Q is not dim x dim";
    if (m->embed.dt != DT_F32 || m->cls.dt != DT_F32) return "its matrices are not all f32";
    for (int l = 0; l < c->n_layers; l++) {
        const LayerWeights *w = &m->layers[l];
        if (!w->attn_norm || !w->ffn_norm || w->post_attn_norm || w->post_ffn_norm || w->q_norm || w->k_norm || w->bq ||
            w->bk || w->bv)
            return "its blocks are not llama's (norms or biases)";
        if (w->window) return "its layers have a built-in sliding window";
        const Mat *mat[7] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->w1, &w->w2, &w->w3};
        for (int k = 0; k < 7; k++)
            if (mat[k]->dt != DT_F32) return "its matrices are not all f32";
    }
    return NULL;
}

int model_to_llama2c(Model *m, Err *e) {
    const Config *c = &m->c;
    if (c->arch == ARCH_LLAMA2C) return 0;
    const char *why = llama2c_misfit(m);
    if (why) return err_set(e, "%s: cannot be held as a llama2.c checkpoint: %s", m->path, why);
    size_t d = c->dim, h = c->hidden_dim, L = c->n_layers, kv = c->kv_dim, V = c->vocab_size;
    size_t n = V * d * (2 - !!c->shared_classifier) + L * (2 * d + 2 * d * d + 2 * kv * d + 3 * h * d) + d;
    float *p = mem_big_alloc(n * sizeof *p), *at = p;
    if (!p) return err_set(e, "%s: cannot allocate %zu MB for f32 weights", m->path, n * 4 >> 20);
    Weights w;
    /* each part of every layer, in llama2.c's order: all layers' rms_att, then all wq, ... */
#define TAKE(dst, rows, src_of)                                                      \
    do {                                                                             \
        w.dst = at;                                                                  \
        for (size_t l = 0; l < L; l++, at += (rows)) memcpy(at, src_of, (rows) * 4); \
    } while (0)
    w.token_embedding = at, memcpy(at, m->embed.p, V * d * 4), at += V * d;
    TAKE(rms_att, d, m->layers[l].attn_norm);
    TAKE(wq, d * d, m->layers[l].wq.p);
    TAKE(wk, kv * d, m->layers[l].wk.p);
    TAKE(wv, kv * d, m->layers[l].wv.p);
    TAKE(wo, d * d, m->layers[l].wo.p);
    TAKE(rms_ffn, d, m->layers[l].ffn_norm);
    TAKE(w1, h * d, m->layers[l].w1.p);
    TAKE(w2, d * h, m->layers[l].w2.p);
    TAKE(w3, h * d, m->layers[l].w3.p);
#undef TAKE
    w.rms_final = at, memcpy(at, m->final_norm, d * 4), at += d;
    w.wcls = c->shared_classifier ? w.token_embedding : at;
    if (!c->shared_classifier) memcpy(at, m->cls.p, V * d * 4);
    char arch[sizeof m->arch_name];
    snprintf(arch, sizeof arch, "%s", m->arch_name);
    model_gguf_free(m);
    model_hf_free(m);
    mem_view_close(&m->file);
    mem_big_free(m->owned);
    m->owned = p, m->w = w;
    m->c.weight_bytes = 0; /* all f32 now: the dtype says the bytes */
    if (model_wire_layers(m, e)) return -1;
    snprintf(m->arch_name, sizeof m->arch_name, "%s", arch); /* runs.arch still names the source */
    return 0;
}

#define NOT_CHECKPOINT "a llama2.c checkpoint or Hugging Face folder"

/* A header that does not parse: say first that the file is no checkpoint,
 * and what it looks like (a text file, a router file, ...). */
static int not_checkpoint(const unsigned char *b, size_t size, const char *path, Err *e) {
    char detail[sizeof e->msg];
    snprintf(detail, sizeof detail, "%s", e ? e->msg : "");
    FileKind k = sniff_kind_bytes(b, size < 4096 ? size : 4096, size);
    return file_not(e, path, NOT_CHECKPOINT, k, detail);
}

int model_load(Model *m, const char *path, Err *e) {
    if (model_is_hf_dir(path)) return model_load_hf(m, path, 0, e);
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", path);
    int fd = file_open_regular(path, "model", NOT_CHECKPOINT, e);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return err_set(e, "%s: cannot open model: %s", path, strerror(errno));
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) {
        close(fd);
        return file_not(e, path, NOT_CHECKPOINT, FILE_EMPTY, NULL);
    }
    int rc = mem_view_file(&m->file, fd, size, mem_view_mode());
    int view_errno = errno;
    close(fd);
    if (rc) return err_set(e, "%s: cannot read model (%s)", path, strerror(view_errno));
    const void *map = m->file.base;
    size_t hdr = 0;
    if (model_header_read(map, size, &m->c, &m->version, &hdr, e) != 0) {
        not_checkpoint(map, size, path, e);
        mem_view_close(&m->file);
        return -1;
    }
    uint64_t expect = model_checkpoint_bytes(&m->c, m->version, hdr);
    if (size != expect) {
        mem_view_close(&m->file);
        return err_set(e, "%s: file is %zu bytes but its header (dim %d, %d layers, vocab %d, %s classifier) needs %llu",
                       path, size, m->c.dim, m->c.n_layers, m->c.vocab_size,
                       m->c.shared_classifier ? "shared" : "separate", (unsigned long long)expect);
    }
    m->file_bytes = size;
    wire_weights(m, (const float *)((const char *)map + hdr), m->version);
    if (model_wire_layers(m, e) != 0) { model_free(m); return -1; }
    return 0;
}

/* splitmix64: a fast deterministic stream for random weights */
static uint64_t mix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void model_fill_uniform(float *p, uint64_t n, float scale, uint64_t *s) {
    for (uint64_t i = 0; i < n; i++)
        p[i] = scale * ((float)(mix64(s) >> 40) * (2.0f / 16777216.0f) - 1.0f);
}

int model_random(Model *m, const Config *cfg, uint64_t seed, Err *e) {
    memset(m, 0, sizeof *m);
    m->c = *cfg;
    if (model_config_check(&m->c, "random model", e) != 0) return -1;
    uint64_t n = (uint64_t)model_n_params(&m->c) + (uint64_t)m->c.seq_len * m->c.head_size;
    if (n > (uint64_t)(SIZE_MAX / 8))
        return err_set(e, "random model: %llu weights do not fit in memory", (unsigned long long)n);
    m->owned = mem_big_alloc(n * sizeof(float));
    if (!m->owned) return err_set(e, "random model: cannot allocate %llu MB", (unsigned long long)(n * 4 >> 20));
    m->version = -1;
    wire_weights(m, m->owned, 0);
    const Config *c = &m->c;
    uint64_t d = c->dim, h = c->hidden_dim, L = c->n_layers, kv = c->kv_dim, V = c->vocab_size;
    uint64_t s = seed;
    float *w = m->owned;
    model_fill_uniform(w, V * d, 1.0f, &s);                       w += V * d;
    for (uint64_t i = 0; i < L * d; i++) *w++ = 1.0f;      /* rms_att */
    model_fill_uniform(w, L * d * (2 * c->q_dim + 2 * kv), 1.0f / sqrtf((float)d), &s); w += L * d * (2 * c->q_dim + 2 * kv);
    for (uint64_t i = 0; i < L * d; i++) *w++ = 1.0f;      /* rms_ffn */
    model_fill_uniform(w, L * d * h, 1.0f / sqrtf((float)d), &s); w += L * d * h;
    model_fill_uniform(w, L * d * h, 1.0f / sqrtf((float)h), &s); w += L * d * h;
    model_fill_uniform(w, L * d * h, 1.0f / sqrtf((float)d), &s); w += L * d * h;
    for (uint64_t i = 0; i < d; i++) *w++ = 1.0f;          /* rms_final */
    memset(w, 0, (uint64_t)c->seq_len * c->head_size * sizeof(float)); w += (uint64_t)c->seq_len * c->head_size;
    if (!c->shared_classifier) model_fill_uniform(w, V * d, 1.0f / sqrtf((float)d), &s);
    return model_wire_layers(m, e);
}

int model_to_half(Model *m, DType dt, Err *e) {
    Config *c = &m->c;
    if (dt == DT_F32 || !m->layers || !m->w.wq || (m->builtin_routers && m->layers[0].wq.dt != DT_F32))
        return dt == DT_F32 ? 0 : err_set(e, "model_to_half: no f32 weights");
    size_t d = c->dim, h = c->hidden_dim, kv = c->kv_dim, L = c->n_layers, V = c->vocab_size;
    size_t q = c->q_dim, q_rows = q + (m->builtin_routers ? (size_t)c->n_heads : 0); /* faolmo: router rows after W_Q */
    size_t per_layer = (q_rows + q) * d + 2 * kv * d + 3 * h * d;
    size_t n = L * per_layer + V * d * (c->shared_classifier ? 1 : 2);
    uint16_t *buf = mem_big_alloc(n * sizeof(uint16_t)), *p = buf;
    if (!buf) return err_set(e, "out of memory for %zu MB of %s weights", n * 2 >> 20, model_dtype_name(dt));
    const Weights *w = &m->w;
    for (size_t l = 0; l < L; l++) {
        LayerWeights *lw = &m->layers[l];
        /* a layer's own f32 matrix (an --arch model rewires some), else the
         * llama2.c array it came from (the model was converted before) */
        struct { Mat *m; const float *src; size_t n; } parts[] = {
            {&lw->wq, w->wq + l * q * d, q_rows * d}, {&lw->wk, w->wk + l * kv * d, kv * d},
            {&lw->wv, w->wv + l * kv * d, kv * d}, {&lw->wo, w->wo + l * d * q, d * q},
            {&lw->w1, w->w1 + l * h * d, h * d}, {&lw->w2, w->w2 + l * d * h, d * h}, {&lw->w3, w->w3 + l * h * d, h * d}};
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
            const float *src = parts[k].m->dt == DT_F32 ? parts[k].m->p : parts[k].src;
            half_from_f32_n(p, src, parts[k].n, dt == DT_BF16);
            *parts[k].m = (Mat){p, dt};
            p += parts[k].n;
        }
    }
    half_from_f32_n(p, w->token_embedding, V * d, dt == DT_BF16);
    m->embed = (Mat){p, dt};
    p += V * d;
    if (c->shared_classifier) m->cls = m->embed;
    else { half_from_f32_n(p, w->wcls, V * d, dt == DT_BF16); m->cls = (Mat){p, dt}; }
    mem_big_free(m->owned_half);
    m->owned_half = buf;
    c->dtype = c->kv_dtype = dt;
    /* the f32 matrices are no longer what runs: only keep them for a random model's norms */
    return 0;
}

static int write_all(FILE *f, const void *p, uint64_t bytes) { return fwrite(p, 1, bytes, f) == bytes ? 0 : -1; }

static int write_tensors(FILE *f, const Model *m, int version) {
    const Config *c = &m->c;
    const Weights *w = &m->w;
    uint64_t d = c->dim, h = c->hidden_dim, L = c->n_layers, kv = c->kv_dim, V = c->vocab_size;
    int r = 0;
    if (version == 1) {
        r |= write_all(f, w->rms_att, L * d * 4) | write_all(f, w->rms_ffn, L * d * 4);
        r |= write_all(f, w->rms_final, d * 4) | write_all(f, w->token_embedding, V * d * 4);
    } else {
        r |= write_all(f, w->token_embedding, V * d * 4) | write_all(f, w->rms_att, L * d * 4);
    }
    r |= write_all(f, w->wq, L * d * c->q_dim * 4) | write_all(f, w->wk, L * d * kv * 4);
    r |= write_all(f, w->wv, L * d * kv * 4) | write_all(f, w->wo, L * d * c->q_dim * 4);
    if (version != 1) r |= write_all(f, w->rms_ffn, L * d * 4);
    r |= write_all(f, w->w1, L * d * h * 4) | write_all(f, w->w2, L * d * h * 4) | write_all(f, w->w3, L * d * h * 4);
    if (version != 1) {
        r |= write_all(f, w->rms_final, d * 4);
        /* freq_cis tables, as the legacy exporter wrote them (cos then sin) */
        for (int part = 0; part < 2 && !r; part++)
            for (int t = 0; t < c->seq_len && !r; t++)
                for (int i = 0; i < c->head_size / 2 && !r; i++) {
                    float fr = powf(c->rope_theta, -2.0f * i / (float)c->head_size) * t;
                    float v = part ? sinf(fr) : cosf(fr);
                    r |= write_all(f, &v, 4);
                }
    }
    if (!c->shared_classifier) r |= write_all(f, w->wcls, V * d * 4);
    return r;
}

int model_save(const Model *m, const char *path, int version, Err *e) {
    const Config *c = &m->c;
    /* a random llama (model_random_arch) is the llama2.c block with another name */
    if (!m->w.wq || c->q_dim != c->dim || (c->arch != ARCH_LLAMA2C && c->arch != ARCH_LLAMA))
        return err_set(e, "%s: only a llama2.c-shaped f32 model can be written as a llama2.c checkpoint", path);
    FileAtomic a;
    FILE *f = file_atomic_open(&a, path, e);
    if (!f) return -1;
    int r;
    if (version == 1) {
        unsigned char hdr[MODEL_V1_HEADER] = {0};
        int32_t h[9] = {(int32_t)MODEL_V1_MAGIC, 1, c->dim, c->hidden_dim, c->n_layers, c->n_heads,
                        c->n_kv_heads, c->vocab_size, c->seq_len};
        memcpy(hdr, h, sizeof h);
        hdr[36] = (unsigned char)c->shared_classifier;
        r = write_all(f, hdr, sizeof hdr);
    } else {
        int32_t h[7] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
                        c->shared_classifier ? c->vocab_size : -c->vocab_size, c->seq_len};
        r = write_all(f, h, sizeof h);
    }
    r |= write_tensors(f, m, version);
    if (r == 0) return file_atomic_commit(&a, e);
    int err = errno ? errno : EIO;
    file_atomic_abort(&a);
    return err_set(e, "%s: write failed: %s", path, strerror(err));
}

void model_free(Model *m) {
    mem_view_close(&m->file);
    model_hf_free(m);
    model_gguf_free(m);
    free(m->layers);
    mem_big_free(m->owned_half);
    mem_big_free(m->owned);
    free(m->owned_arch);
    memset(m, 0, sizeof *m);
}
