/* gguf_write_model.c — a loaded model as a GGUF llama, qwen3, gemma2, gemma3 or phi3: ggml's tensor names, {arch}.* keys, a vocabulary.
 *
 * Every matrix is widened to f32 rows first (a Hugging Face folder keeps
 * f16/bf16), permuted when the source rotates halves (ggml's llama and
 * model_gguf.c rotate adjacent pairs: row 2i + k of a head is rotate-half
 * row k * head_size/2 + i; ggml's qwen3, gemmas and phi3 rotate halves, so
 * their rows stay as a folder has them), then narrowed to the chosen type;
 * an f32 matrix that needs no permuting is written straight from the model.
 * A mistral folder is written as llama with its window kept in
 * llama.attention.sliding_window, a key llama.cpp names but its llama never
 * reads, and phi3's window goes where llama.cpp's converter puts it, in a
 * key its phi3 reads and turns off: gguf_write_llamacpp_note says so, for
 * convert to print.
 */
#include "engine/gguf_write.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gemm_q.h"
#include "engine/half.h"
#include "engine/quant.h"
#include "engine/quantize.h"

int gguf_write_file_type(GgmlType t) {
    switch (t) {
    case GGML_F32: return 0;
    case GGML_F16: return 1;
    case GGML_Q4_0: return 2;
    case GGML_Q8_0: return 7;
    case GGML_BF16: return 32;
    default: return -1;
    }
}

int gguf_write_type_parse(const char *name) {
    static const struct { const char *name; GgmlType t; } types[] = {
        {"f32", GGML_F32}, {"f16", GGML_F16}, {"bf16", GGML_BF16}, {"q8_0", GGML_Q8_0}, {"q4_0", GGML_Q4_0}};
    for (size_t i = 0; name && i < sizeof types / sizeof types[0]; i++)
        if (!strcasecmp(name, types[i].name)) return (int)types[i].t;
    return -1;
}

typedef struct {
    GgufWriter w;
    const Model *m;
    GgmlType type;
    const char *path;
    const char *arch;  /* general.architecture: "llama", "qwen3", "gemma2", "gemma3" or "phi3" */
} Out;

/* rows x cols of a Mat of m as f32 (malloc'd), or NULL when out of memory
 * or unreadable. A quantised matrix is widened a row at a time as ggml's
 * to_float does (before, its blocks were read as if they were bf16); one
 * gemm_q_pack packed at load gives each row's stored blocks back first. */
static float *widen(const Model *m, Mat a, size_t rows, size_t cols) {
    size_t n = rows * cols;
    float *f = malloc(n * sizeof *f);
    if (!f) return NULL;
    if (model_dtype_is_block(a.dt)) {
        int ty = model_dtype_ggml(a.dt);
        size_t rb = model_row_bytes(a.dt, cols);
        int packed = m->packed && (const char *)a.p >= m->packed && (const char *)a.p < m->packed + m->packed_bytes;
        uint8_t *row = packed ? malloc(rb) : NULL;
        int bad = packed && !row;
        for (size_t r = 0; !bad && r < rows; r++) {
            const void *src = (const char *)a.p + r * rb;
            if (packed) gemm_q_unpack_row(ty, row, a.p, (int)cols, (int)r), src = row;
            bad = quant_dequant((GgmlType)ty, src, f + r * cols, (int64_t)cols) != 0;
        }
        free(row);
        if (bad) free(f), f = NULL;
        return f;
    }
    const uint16_t *h = a.p;
    for (size_t i = 0; i < n; i++)
        f[i] = a.dt == DT_F32 ? ((const float *)a.p)[i] : a.dt == DT_F16 ? half_f16_to_f32(h[i]) : half_bf16_to_f32(h[i]);
    return f;
}

/* The first heads x head_size rows of f from rotate-half into adjacent pairs, in place. */
static int unrotate(float *f, int heads, int hs, size_t cols) {
    float *tmp = malloc((size_t)hs * cols * sizeof *tmp);
    if (!tmp) return -1;
    for (int h = 0; h < heads; h++) {
        float *head = f + (size_t)h * hs * cols;
        memcpy(tmp, head, (size_t)hs * cols * sizeof *tmp);
        for (int r = 0; r < hs; r++) memcpy(head + r * cols, tmp + ((size_t)(r % 2) * (hs / 2) + r / 2) * cols, cols * sizeof *tmp);
    }
    free(tmp);
    return 0;
}

/* n f32 values narrowed to the output type (f consumed); NULL when out of memory. */
static void *narrow(GgmlType t, float *f, size_t n, size_t *nbytes) {
    if (t == GGML_F32) return *nbytes = n * 4, f;
    uint8_t *b = NULL;
    if (t == GGML_F16 || t == GGML_BF16) {
        if ((b = malloc(n * 2))) half_from_f32_n((uint16_t *)b, f, n, t == GGML_BF16);
        *nbytes = n * 2;
    } else {
        size_t per = t == GGML_Q8_0 ? QUANTIZE_Q8_0_BYTES : QUANTIZE_Q4_0_BYTES;
        *nbytes = n / QUANTIZE_BLOCK * per;
        if ((b = malloc(*nbytes))) (t == GGML_Q8_0 ? quantize_q8_0 : quantize_q4_0)(f, b, (int64_t)n);
    }
    free(f);
    return b;
}

/* Matrices of cols columns stacked into one tensor (phi3's attn_qkv, its
 * gate and up as ffn_up): parts[i] gives rows[i] rows; no RoPE reordering
 * (phi3 rotates halves, as the folder). */
static int add_fused(Out *o, const char *name, const Mat *parts, const size_t *rows, int n, size_t cols, Err *e) {
    size_t total = 0;
    for (int i = 0; i < n; i++) total += rows[i];
    float *f = malloc(total * cols * sizeof *f);
    for (size_t i = 0, at = 0; f && i < (size_t)n; at += rows[i++]) {
        float *part = widen(o->m, parts[i], rows[i], cols);
        if (part) memcpy(f + at * cols, part, rows[i] * cols * sizeof *f);
        else free(f), f = NULL;
        free(part);
    }
    int64_t ne[2] = {(int64_t)cols, (int64_t)total};
    size_t nbytes = 0;
    void *data = f ? narrow(o->type, f, total * cols, &nbytes) : NULL;
    if (!data) return err_set(e, "%s: out of memory converting tensor '%s'", o->path, name);
    return gguf_write_tensor(&o->w, name, o->type, 2, ne, data, nbytes, 1, e);
}

/* A matrix [rows][cols]; heads > 0 marks W_Q/W_K, whose rows a rotate-half source has reordered. */
static int add_mat(Out *o, const char *name, Mat a, size_t rows, size_t cols, int heads, Err *e) {
    int64_t ne[2] = {(int64_t)cols, (int64_t)rows};
    int permute = heads > 0 && o->m->c.rope_half && !strcmp(o->arch, "llama");
    if (o->type == GGML_F32 && a.dt == DT_F32 && !permute)
        return gguf_write_tensor(&o->w, name, GGML_F32, 2, ne, a.p, rows * cols * 4, 0, e);
    float *f = widen(o->m, a, rows, cols);
    if (f && permute && unrotate(f, heads, o->m->c.head_size, cols)) free(f), f = NULL;
    size_t nbytes = 0;
    void *data = f ? narrow(o->type, f, rows * cols, &nbytes) : NULL;
    if (!data) return err_set(e, "%s: out of memory converting tensor '%s'", o->path, name);
    return gguf_write_tensor(&o->w, name, o->type, 2, ne, data, nbytes, 1, e);
}

static int add_norm(Out *o, const char *name, const float *v, size_t n, Err *e) {
    int64_t ne[1] = {(int64_t)n};
    return gguf_write_tensor(&o->w, name, GGML_F32, 1, ne, v, n * 4, 0, e);
}

/* qwen3's per-head q/k norm gains, [head_dim] each. */
static int add_qk_norms(Out *o, int l, Err *e) {
    const LayerWeights *lw = &o->m->layers[l];
    if (!o->m->c.qk_norm_head) return 0;
    char q[64], k[64];
    snprintf(q, sizeof q, "blk.%d.attn_q_norm.weight", l);
    snprintf(k, sizeof k, "blk.%d.attn_k_norm.weight", l);
    size_t hs = (size_t)o->m->c.head_size;
    return add_norm(o, q, lw->q_norm, hs, e) || add_norm(o, k, lw->k_norm, hs, e) ? -1 : 0;
}

/* Gemma 2's norms after attention and after the FFN, as the gains the model
 * multiplies by (llama.cpp's converter stores Gemma's 1 + w, which is what
 * the model keeps). */
static int add_post_norms(Out *o, int l, Err *e) {
    const LayerWeights *lw = &o->m->layers[l];
    if (o->m->c.arch != ARCH_GEMMA2 && o->m->c.arch != ARCH_GEMMA3) return 0;
    char a[64], f[64];
    snprintf(a, sizeof a, "blk.%d.post_attention_norm.weight", l);
    snprintf(f, sizeof f, "blk.%d.post_ffw_norm.weight", l);
    size_t d = (size_t)o->m->c.dim;
    return add_norm(o, a, lw->post_attn_norm, d, e) || add_norm(o, f, lw->post_ffn_norm, d, e) ? -1 : 0;
}

/* phi3's block as llama.cpp's phi3 reads it: attn_qkv [dim, q + 2 kv], ffn_up [dim, 2 hidden] (gate rows first). */
static int add_phi3_layer(Out *o, int l, Err *e) {
    const Config *c = &o->m->c;
    const LayerWeights *lw = &o->m->layers[l];
    size_t d = c->dim, h = c->hidden_dim;
    char n[6][64];
    const char *parts[6] = {"attn_norm", "attn_qkv", "attn_output", "ffn_norm", "ffn_up", "ffn_down"};
    for (int i = 0; i < 6; i++) snprintf(n[i], sizeof n[i], "blk.%d.%s.weight", l, parts[i]);
    const Mat qkv[3] = {lw->wq, lw->wk, lw->wv}, gu[2] = {lw->w1, lw->w3};
    const size_t qkv_rows[3] = {(size_t)c->q_dim, (size_t)c->kv_dim, (size_t)c->kv_dim}, gu_rows[2] = {h, h};
    return add_norm(o, n[0], lw->attn_norm, d, e) || add_fused(o, n[1], qkv, qkv_rows, 3, d, e) ||
           add_mat(o, n[2], lw->wo, d, (size_t)c->q_dim, 0, e) || add_norm(o, n[3], lw->ffn_norm, d, e) ||
           add_fused(o, n[4], gu, gu_rows, 2, d, e) || add_mat(o, n[5], lw->w2, d, h, 0, e)
               ? -1 : 0;
}

static int add_layer(Out *o, int l, Err *e) {
    const Config *c = &o->m->c;
    const LayerWeights *lw = &o->m->layers[l];
    size_t d = c->dim, q = c->q_dim, kv = c->kv_dim, h = c->hidden_dim;
    if (c->arch == ARCH_PHI3) return add_phi3_layer(o, l, e);
    char n[9][64];
    const char *parts[9] = {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_down", "ffn_up"};
    for (int i = 0; i < 9; i++) snprintf(n[i], sizeof n[i], "blk.%d.%s.weight", l, parts[i]);
    return add_norm(o, n[0], lw->attn_norm, d, e) || add_mat(o, n[1], lw->wq, q, d, c->n_heads, e) ||
           add_mat(o, n[2], lw->wk, kv, d, c->n_kv_heads, e) || add_mat(o, n[3], lw->wv, kv, d, 0, e) ||
           add_mat(o, n[4], lw->wo, d, q, 0, e) || add_norm(o, n[5], lw->ffn_norm, d, e) ||
           add_mat(o, n[6], lw->w1, h, d, 0, e) || add_mat(o, n[7], lw->w2, d, h, 0, e) ||
           add_mat(o, n[8], lw->w3, h, d, 0, e) || add_qk_norms(o, l, e) || add_post_norms(o, l, e)
               ? -1 : 0;
}

/* What llama.cpp's gemma2 cannot express: a query scale other than the one
 * it applies (1/√head_dim for a model of no known size; the file has no
 * key for query_pre_attn_scalar), windows off its even-layer pattern. */
static int check_gemma2(const Model *m, const char *path, Err *e) {
    const Config *c = &m->c;
    double want = 1.0 / sqrt((double)c->head_size), got = c->query_scale > 0 ? c->query_scale : want;
    if (fabs(got - want) > 1e-6 * want)
        return err_set(e, "%s: query_pre_attn_scalar %.6g is not head_dim %d, and GGUF's gemma2 has no key for it", path,
                       1.0 / (got * got), c->head_size);
    int pattern = c->arch == ARCH_GEMMA3 ? 6 : 2; /* llama.cpp's: layer l slides when l % pattern < pattern - 1 */
    for (int l = 0; l < c->n_layers; l++)
        if (m->layers[l].window != (l % pattern < pattern - 1 ? c->sliding_window : 0))
            return err_set(e, "%s: layer %d's window %d is off llama.cpp's %s pattern (window %d, every %dth layer global)",
                           path, l, m->layers[l].window, m->arch_name, c->sliding_window, pattern);
    if (c->arch == ARCH_GEMMA3 && c->rope_local_theta != 1e4f)
        return err_set(e, "%s: rope_local_base_freq %g is not 10000, the one llama.cpp's gemma3 uses (no key for it)", path,
                       c->rope_local_theta);
    return 0;
}

/* What llama.cpp's phi3 cannot express: heads set apart from dim / heads
 * (its attn_qkv and attn_output are dim rows of queries), a window on some
 * layers only, longrope with one factor table. */
static int check_phi3(const Model *m, const char *path, Err *e) {
    const Config *c = &m->c;
    if (c->q_dim != c->dim)
        return err_set(e, "%s: phi3 heads of %d are not dim / heads (%d / %d), which llama.cpp's phi3 needs", path,
                       c->head_size, c->dim, c->n_heads);
    for (int l = 0; l < c->n_layers; l++)
        if (m->layers[l].window != c->sliding_window)
            return err_set(e, "%s: layer %d's window %d is not the model's %d (phi3 windows every layer)", path, l,
                           m->layers[l].window, c->sliding_window);
    if (c->rope_ext && (!c->rope_short || !c->rope_long))
        return err_set(e, "%s: phi3's longrope needs both factor tables (short and long)", path);
    return 0;
}

/* What the blocks of model_gguf.c cannot express is refused before
 * anything is converted: other blocks, llama3-scaled RoPE, built-in
 * routers, a qwen3, gemma or phi3 rotating adjacent pairs, a window on some
 * layers of a llama only, rows that are not whole blocks. */
static int check_model(const Model *m, GgmlType t, const char *path, Err *e) {
    const Config *c = &m->c;
    if (gguf_write_file_type(t) < 0) return err_set(e, "%s: cannot write tensors of type %s", path, gguf_type_name(t));
    int llama = c->arch == ARCH_LLAMA2C || c->arch == ARCH_LLAMA || c->arch == ARCH_MISTRAL;
    int gemma = c->arch == ARCH_GEMMA2 || c->arch == ARCH_GEMMA3, phi3 = c->arch == ARCH_PHI3;
    if ((!llama && c->arch != ARCH_QWEN3 && !gemma && !phi3) || m->builtin_routers || !m->layers)
        return err_set(e, "%s: only llama, mistral, qwen3, gemma2, gemma3 and phi3 models can be written as GGUF (this one is %s)",
                       path, m->arch_name);
    if (gemma && check_gemma2(m, path, e)) return -1;
    if (phi3 && check_phi3(m, path, e)) return -1;
    for (int l = 0; llama && l < c->n_layers; l++)
        if (m->layers[l].window != c->sliding_window)
            return err_set(e, "%s: layer %d's window %d is not the model's %d (one window for every layer)", path, l,
                           m->layers[l].window, c->sliding_window);
    if (c->rope_factor != 0) return err_set(e, "%s: a model with llama3 RoPE scaling cannot be written as GGUF yet", path);
    if ((c->arch == ARCH_QWEN3 || gemma || phi3) && !c->rope_half)
        return err_set(e, "%s: a %s rotating adjacent pairs cannot be written as GGUF (write it as a folder first)", path, m->arch_name);
    for (int l = 0; l < c->n_layers; l++)
        if (!m->layers[l].attn_norm || !m->layers[l].ffn_norm || m->layers[l].bq || (llama && m->layers[l].q_norm))
            return err_set(e, "%s: layer %d is not a %s block", path, l, m->arch_name);
    if (t != GGML_Q8_0 && t != GGML_Q4_0) return 0;
    const char *why = c->dim % QUANTIZE_BLOCK ? "dim" : c->hidden_dim % QUANTIZE_BLOCK ? "hidden_dim" : NULL;
    if (why)
        return err_set(e, "%s: %s rows must be whole blocks of %d values, but %s is %d (use f16, bf16 or f32)", path,
                       gguf_type_name(t), QUANTIZE_BLOCK, why, c->dim % QUANTIZE_BLOCK ? c->dim : c->hidden_dim);
    return 0;
}

/* {arch}.suffix as a u32 or f32 key. */
static void put_u32(Out *o, const char *suffix, uint32_t v) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", o->arch, suffix);
    gguf_write_u32(&o->w, key, v);
}

static void put_f32(Out *o, const char *suffix, float v) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", o->arch, suffix);
    gguf_write_f32(&o->w, key, v);
}

static void add_config(Out *o, const GgufSaveOpts *s) {
    const Config *c = &o->m->c;
    GgufWriter *w = &o->w;
    gguf_write_str(w, "general.architecture", o->arch);
    gguf_write_str(w, "general.name", s->name && *s->name ? s->name : o->arch);
    gguf_write_u32(w, "general.alignment", GGUF_WRITE_ALIGN);
    gguf_write_u32(w, "general.file_type", (uint32_t)gguf_write_file_type(o->type));
    put_u32(o, "context_length", (uint32_t)c->seq_len);
    put_u32(o, "embedding_length", (uint32_t)c->dim);
    put_u32(o, "block_count", (uint32_t)c->n_layers);
    put_u32(o, "feed_forward_length", (uint32_t)c->hidden_dim);
    put_u32(o, "attention.head_count", (uint32_t)c->n_heads);
    put_u32(o, "attention.head_count_kv", (uint32_t)c->n_kv_heads);
    put_f32(o, "rope.freq_base", c->rope_theta > 0 ? c->rope_theta : 10000.0f);
    put_f32(o, "attention.layer_norm_rms_epsilon", c->norm_eps > 0 ? c->norm_eps : 1e-5f);
    put_u32(o, "rope.dimension_count", (uint32_t)c->head_size);
    if (c->q_dim != c->dim || c->arch == ARCH_GEMMA2 || c->arch == ARCH_GEMMA3) { /* head_dim set apart from dim / heads (gemma2: always written) */
        put_u32(o, "attention.key_length", (uint32_t)c->head_size);
        put_u32(o, "attention.value_length", (uint32_t)c->head_size);
    }
    put_u32(o, "vocab_size", (uint32_t)c->vocab_size);
    if (c->rope_linear > 0) {
        char key[96];
        snprintf(key, sizeof key, "%s.rope.scaling.type", o->arch);
        gguf_write_str(&o->w, key, "linear");
        put_f32(o, "rope.scaling.factor", c->rope_linear);
    }
    if (c->arch == ARCH_GEMMA2 || c->arch == ARCH_GEMMA3) {
        if (c->attn_softcap > 0) put_f32(o, "attn_logit_softcapping", c->attn_softcap);
        if (c->final_softcap > 0) put_f32(o, "final_logit_softcapping", c->final_softcap);
        if (c->sliding_window > 0) put_u32(o, "attention.sliding_window", (uint32_t)c->sliding_window);
    }
    if (c->arch == ARCH_MISTRAL && c->sliding_window > 0) put_u32(o, "attention.sliding_window", (uint32_t)c->sliding_window);
    if (c->arch == ARCH_PHI3) { /* as llama.cpp's converter: the window 0 when none */
        put_u32(o, "attention.sliding_window", (uint32_t)c->sliding_window);
        if (c->rope_orig_ctx > 0) put_u32(o, "rope.scaling.original_context_length", (uint32_t)c->rope_orig_ctx);
        if (c->rope_mscale > 0) put_f32(o, "rope.scaling.attn_factor", c->rope_mscale);
    }
}

/* phi3's longrope tables as the global F32 tensors llama.cpp reads. */
static int add_rope_factors(Out *o, Err *e) {
    const Config *c = &o->m->c;
    if (c->arch != ARCH_PHI3 || !c->rope_short) return 0;
    size_t half = (size_t)c->head_size / 2;
    return add_norm(o, "rope_factors_short.weight", c->rope_short, half, e) ||
                   add_norm(o, "rope_factors_long.weight", c->rope_long, half, e)
               ? -1 : 0;
}

int gguf_write_llamacpp_note(const Model *m, char *buf, size_t cap) {
    const Config *c = &m->c;
    if (cap) buf[0] = '\0';
    if (c->sliding_window <= 0) return 0;
    if (c->arch == ARCH_MISTRAL)
        snprintf(buf, cap, "note: the window of %d is kept in llama.attention.sliding_window, which llama.cpp's llama does "
                 "not read: llama.cpp will run this file with full attention (ahascope runs the window)", c->sliding_window);
    else if (c->arch == ARCH_PHI3)
        snprintf(buf, cap, "note: llama.cpp's phi3 turns phi3.attention.sliding_window (%d) off: llama.cpp will run this "
                 "file with full attention (ahascope runs the window)", c->sliding_window);
    return cap && buf[0] ? 1 : 0;
}

/* A llama2.c piece as SentencePiece spells it: spaces back to U+2581, and
 * the newlines llama2.c's export wraps around "<s>" and "</s>" dropped. */
static char *spm_piece(const char *s, size_t n, size_t *len) {
    if (n >= 4 && s[0] == '\n' && s[n - 1] == '\n' && s[1] == '<' && s[n - 2] == '>') s++, n -= 2;
    char *out = malloc(3 * n + 1);
    size_t k = 0;
    for (size_t i = 0; out && i < n; i++) {
        if (s[i] == ' ') memcpy(out + k, "\xe2\x96\x81", 3), k += 3;
        else out[k++] = s[i];
    }
    *len = k;
    return out;
}

/* llama.cpp's token types: 1 normal, 2 unknown, 3 control, 6 byte. */
static int32_t piece_type(const char *p, size_t n, int id, const GgufSaveOpts *s) {
    if (n == 5 && !memcmp(p, "<unk>", 5)) return 2;
    if (id == s->bos_id || id == s->eos_id) return 3;
    if (n == 6 && !memcmp(p, "<0x", 3) && isxdigit((unsigned char)p[3]) && isxdigit((unsigned char)p[4]) && p[5] == '>')
        return 6;
    return 1;
}

static int add_llama_vocab(Out *o, const Tokenizer *t, const GgufSaveOpts *s, Err *e) {
    int n = t->vocab_size, unk = -1, rc = 0;
    char **p = calloc((size_t)n, sizeof *p);
    size_t *len = calloc((size_t)n, sizeof *len);
    int32_t *type = calloc((size_t)n, sizeof *type);
    for (int i = 0; p && len && type && i < n; i++) {
        if (!(p[i] = spm_piece(t->vocab[i], (size_t)t->vocab_len[i], &len[i]))) break;
        type[i] = piece_type(p[i], len[i], i, s);
        if (type[i] == 2 && unk < 0) unk = i;
    }
    if (!p || !len || !type || (n && !p[n - 1])) rc = err_set(e, "%s: out of memory for the vocabulary", o->path);
    if (!rc) {
        GgufWriter *w = &o->w;
        gguf_write_str(w, "tokenizer.ggml.model", "llama");
        gguf_write_arr_str(w, "tokenizer.ggml.tokens", (uint64_t)n, (const char *const *)p, len);
        gguf_write_arr_f32(w, "tokenizer.ggml.scores", (uint64_t)n, t->scores);
        gguf_write_arr_i32(w, "tokenizer.ggml.token_type", (uint64_t)n, type);
        if (unk >= 0) gguf_write_u32(w, "tokenizer.ggml.unknown_token_id", (uint32_t)unk);
    }
    for (int i = 0; p && i < n; i++) free(p[i]);
    free(p), free(len), free(type);
    return rc;
}

/* Every tokenizer.* pair of another GGUF file, as it is. */
static int copy_vocab(Out *o, const GgufFile *f, Err *e) {
    const GgufKv *tok = gguf_find_kv(f, "tokenizer.ggml.tokens");
    if (!tok || tok->type != GGUF_ARRAY || tok->count != (uint64_t)o->m->c.vocab_size)
        return err_set(e, "%s: its tokenizer.ggml.tokens is missing or not one per id of the model's %d", f->path,
                       o->m->c.vocab_size);
    for (int i = 0; i < f->n_kv; i++)
        if (!strncmp(f->kv[i].key, "tokenizer.", 10)) gguf_write_copy(&o->w, &f->kv[i]);
    return 0;
}

static int add_vocab(Out *o, const GgufSaveOpts *s, Err *e) {
    GgufWriter *w = &o->w;
    int rc;
    if (s->from) return copy_vocab(o, s->from, e);
    if (s->hf_tokenizer) rc = gguf_write_hf_vocab(w, s->hf_tokenizer, o->m->c.vocab_size, e);
    else if (!s->tok) return err_set(e, "%s: no tokenizer to write", o->path);
    else if (s->tok->vocab_size != o->m->c.vocab_size)
        return err_set(e, "%s: the tokenizer has %d pieces but the model's vocabulary is %d", s->tok->path,
                       s->tok->vocab_size, o->m->c.vocab_size);
    else rc = add_llama_vocab(o, s->tok, s, e);
    if (rc) return -1;
    if (s->bos_id >= 0) gguf_write_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)s->bos_id);
    if (s->eos_id >= 0) gguf_write_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)s->eos_id);
    gguf_write_bool(w, "tokenizer.ggml.add_bos_token", s->add_bos);
    gguf_write_bool(w, "tokenizer.ggml.add_eos_token", 0);
    if (s->chat_template) gguf_write_str(w, "tokenizer.chat_template", s->chat_template);
    return 0;
}

int gguf_write_model(const Model *m, const char *path, const GgufSaveOpts *s, Err *e) {
    if (check_model(m, s->type, path, e)) return -1;
    const Config *c = &m->c;
    Out o = {.m = m, .type = s->type, .path = path,
             .arch = c->arch == ARCH_QWEN3   ? "qwen3"
                     : c->arch == ARCH_GEMMA2 ? "gemma2"
                     : c->arch == ARCH_GEMMA3 ? "gemma3"
                     : c->arch == ARCH_PHI3   ? "phi3"
                                              : "llama"};
    gguf_write_init(&o.w);
    add_config(&o, s);
    int rc = add_vocab(&o, s, e);
    if (!rc) rc = add_mat(&o, "token_embd.weight", m->embed, (size_t)c->vocab_size, (size_t)c->dim, 0, e);
    if (!rc) rc = add_norm(&o, "output_norm.weight", m->final_norm, (size_t)c->dim, e);
    if (!rc && !c->shared_classifier) rc = add_mat(&o, "output.weight", m->cls, (size_t)c->vocab_size, (size_t)c->dim, 0, e);
    if (!rc) rc = add_rope_factors(&o, e);
    for (int l = 0; !rc && l < c->n_layers; l++) rc = add_layer(&o, l, e);
    if (!rc) rc = gguf_write_file(&o.w, path, e);
    gguf_write_free(&o.w);
    return rc;
}
