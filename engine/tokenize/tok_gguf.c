/* tok_gguf.c — the tokenizer in a GGUF file's tokenizer.ggml.* metadata: SentencePiece "llama" or byte-level "gpt2". */
#include "tokenize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gguf.h"
#include "hftok_impl.h"

/* Token types as llama.cpp's converters number them. */
enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER = 4, TT_UNUSED = 5, TT_BYTE = 6 };

#define GGUF_TOK_MAX (1 << 22) /* tokens (and merges) a vocabulary may have */

/* A piece with each U+2581 (SentencePiece's space mark) made a space, as
 * llama2.c's tokenizer.bin spells it; NULL if it holds a NUL or memory ran out. */
static char *piece_text(const char *s, uint64_t n, int spaces) {
    if (memchr(s, 0, (size_t)n)) return NULL;
    char *out = malloc((size_t)n + 1);
    size_t k = 0;
    for (uint64_t i = 0; out && i < n; i++) {
        if (spaces && i + 2 < n && !memcmp(s + i, "\xe2\x96\x81", 3)) out[k++] = ' ', i += 2;
        else out[k++] = s[i];
    }
    if (out) out[k] = '\0';
    return out;
}

/* Everything read from the metadata, owned until vocab_free. */
typedef struct {
    int n, n_merges;
    char **pieces, **merges;
    float *scores;
    int *types; /* TT_* per token (TT_NORMAL when the file has none) */
    int bos, eos, unk, add_bos, add_eos;
} Vocab;

static void vocab_free(Vocab *v) {
    for (int i = 0; v->pieces && i < v->n; i++) free(v->pieces[i]);
    for (int i = 0; v->merges && i < v->n_merges; i++) free(v->merges[i]);
    free(v->pieces), free(v->merges), free(v->scores), free(v->types);
}

/* n strings of a string array into *out (U+2581 made spaces if spaces). */
static int read_strings(const GgufFile *f, const GgufKv *kv, int n, int spaces, char ***out, Err *e) {
    if (!(*out = calloc((size_t)n + 1, sizeof **out))) return err_set(e, "%s: out of memory", f->path);
    for (int i = 0; i < n; i++) {
        uint64_t len;
        const char *s = gguf_arr_str(kv, (uint64_t)i, &len);
        if (!((*out)[i] = piece_text(s, len, spaces)))
            return err_set(e, "%s: %s[%d] holds a NUL byte (or out of memory)", f->path, kv->key, i);
    }
    return 0;
}

/* An integer element i of an array of any 32-bit integer type. */
static int64_t arr_int(const GgufKv *kv, int i) {
    int32_t v;
    memcpy(&v, kv->arr + 4 * (size_t)i, 4);
    return kv->elem == GGUF_U32 ? (int64_t)(uint32_t)v : v;
}

/* tokenizer.ggml.token_type, optional: one known type per token. */
static int read_types(const GgufFile *f, Vocab *v, Err *e) {
    const GgufKv *tt = gguf_find_kv(f, "tokenizer.ggml.token_type");
    if (!(v->types = malloc((size_t)v->n * sizeof *v->types))) return err_set(e, "%s: out of memory", f->path);
    for (int i = 0; i < v->n; i++) v->types[i] = TT_NORMAL;
    if (!tt) return 0;
    if (tt->type != GGUF_ARRAY || (tt->elem != GGUF_I32 && tt->elem != GGUF_U32) || tt->count != (uint64_t)v->n)
        return err_set(e, "%s: tokenizer.ggml.token_type is not one 32-bit integer per token", f->path);
    for (int i = 0; i < v->n; i++) {
        int64_t x = arr_int(tt, i);
        if (x < TT_NORMAL || x > TT_BYTE) return err_set(e, "%s: token %d has type %lld (known: 1 to 6)", f->path, i, (long long)x);
        v->types[i] = (int)x;
    }
    return 0;
}

/* A special token id: absent leaves *id; -1 or UINT32_MAX mean none;
 * anything else must be a token. */
static int read_id(const GgufFile *f, const char *key, int n, int *id, Err *e) {
    int64_t x;
    if (gguf_get_int(f, key, &x) != 0) return 0;
    if (x == -1 || x == 0xffffffffLL) return *id = -1, 0;
    if (x < 0 || x >= n) return err_set(e, "%s: %s is %lld, not one of the %d tokens", f->path, key, (long long)x, n);
    *id = (int)x;
    return 0;
}

static int read_flag(const GgufFile *f, const char *key, int dflt) {
    int64_t x;
    return gguf_get_int(f, key, &x) == 0 ? x != 0 : dflt;
}

/* The tokens (and, for llama, scores) of f's vocabulary, checked. */
static int read_common(const GgufFile *f, int vocab_size, int llama, Vocab *v, Err *e) {
    const GgufKv *tok = gguf_find_kv(f, "tokenizer.ggml.tokens"), *sc = gguf_find_kv(f, "tokenizer.ggml.scores");
    if (!tok || tok->type != GGUF_ARRAY || tok->elem != GGUF_STRING)
        return err_set(e, "%s: tokenizer.ggml.tokens is missing or not an array of strings", f->path);
    if (tok->count == 0 || tok->count > GGUF_TOK_MAX || (vocab_size > 0 && tok->count != (uint64_t)vocab_size))
        return err_set(e, "%s: %llu tokens but the model's vocabulary is %d", f->path, (unsigned long long)tok->count, vocab_size);
    v->n = (int)tok->count;
    if (llama && (!sc || sc->type != GGUF_ARRAY || sc->elem != GGUF_F32 || sc->count != tok->count))
        return err_set(e, "%s: tokenizer.ggml.scores is missing, not f32 or not one per token", f->path);
    if (read_strings(f, tok, v->n, llama, &v->pieces, e) || read_types(f, v, e)) return -1;
    if (llama && !(v->scores = malloc((size_t)v->n * sizeof *v->scores))) return err_set(e, "%s: out of memory", f->path);
    for (int i = 0; llama && i < v->n; i++) memcpy(&v->scores[i], sc->arr + 4 * (size_t)i, 4);
    return read_id(f, "tokenizer.ggml.bos_token_id", v->n, &v->bos, e) || read_id(f, "tokenizer.ggml.eos_token_id", v->n, &v->eos, e) ||
           read_id(f, "tokenizer.ggml.unknown_token_id", v->n, &v->unk, e);
}

/* SentencePiece: llama2.c's merges by score. Control and unused pieces are
 * never the product of a merge (SentencePiece never emits them for text). */
static int load_llama(Tokenizer *t, const GgufFile *f, int vocab_size, Vocab *v, Err *e) {
    v->bos = 1, v->eos = 2, v->unk = 0; /* llama.cpp's defaults for a file that names none */
    if (read_common(f, vocab_size, 1, v, e)) return -1;
    v->add_bos = read_flag(f, "tokenizer.ggml.add_bos_token", 1);
    if (tok_load_pieces(t, f->path, v->n, (const char *const *)v->pieces, v->scores, e)) return -1;
    if (!(t->unmerged = calloc((size_t)v->n, 1))) return err_set(e, "%s: out of memory", f->path);
    for (int i = 0; i < v->n; i++) t->unmerged[i] = v->types[i] == TT_CONTROL || v->types[i] == TT_UNUSED;
    t->bos_id = v->bos, t->eos_id = v->eos, t->unk_id = v->unk < 0 ? 0 : v->unk, t->add_bos = v->add_bos;
    return 0;
}

typedef struct {
    const char *name;
    int pattern, nfc, ignore_merges, add_bos;
} PreName;

/* llama.cpp's names of the split regexes (src/llama-vocab.cpp) that are the
 * regexes hftok_pretok.c runs; the Qwen2 ones add tokenizer.json's NFC, the
 * Llama-3 ones its ignore_merges and BOS. llama.cpp's "default" (a missing
 * name) is a chain of four regexes of its own: refused with the rest. */
static const PreName PRE_NAMES[] = {
    {"gpt-2", HF_PAT_GPT2, 0, 0, 0},      {"phi-2", HF_PAT_GPT2, 0, 0, 0},     {"roberta-bpe", HF_PAT_GPT2, 0, 0, 0},
    {"mpt", HF_PAT_GPT2, 0, 0, 0},        {"olmo", HF_PAT_GPT2, 0, 0, 0},      {"jais", HF_PAT_GPT2, 0, 0, 0},
    {"llama3", HF_PAT_CL100K, 0, 1, 1},   {"llama-v3", HF_PAT_CL100K, 0, 1, 1}, {"llama-bpe", HF_PAT_CL100K, 0, 1, 1},
    {"falcon3", HF_PAT_CL100K, 0, 1, 1},  {"dbrx", HF_PAT_CL100K, 0, 0, 0},    {"smaug-bpe", HF_PAT_CL100K, 0, 0, 0},
    {"qwen2", HF_PAT_QWEN2, 1, 0, 0},     {"deepseek-r1-qwen", HF_PAT_QWEN2, 1, 0, 0}, {"megrez", HF_PAT_QWEN2, 1, 0, 0},
    {"stablelm2", HF_PAT_QWEN2, 0, 0, 0},
};

static const PreName *pre_name(const char *name) {
    for (size_t i = 0; name && i < sizeof PRE_NAMES / sizeof PRE_NAMES[0]; i++)
        if (!strcmp(PRE_NAMES[i].name, name)) return &PRE_NAMES[i];
    return NULL;
}

/* tokenizer.ggml.merges: "left right" strings, at most GGUF_TOK_MAX. */
static int read_merges(const GgufFile *f, Vocab *v, Err *e) {
    const GgufKv *m = gguf_find_kv(f, "tokenizer.ggml.merges");
    if (!m || m->type != GGUF_ARRAY || m->elem != GGUF_STRING || m->count > GGUF_TOK_MAX)
        return err_set(e, "%s: tokenizer.ggml.merges is missing, not an array of strings or too long", f->path);
    v->n_merges = (int)m->count;
    return read_strings(f, m, v->n_merges, 0, &v->merges, e);
}

/* Byte-level BPE: the vocabulary and merges handed to hftok_load_arrays;
 * control tokens are its special added tokens, user-defined ones its other
 * added tokens. */
static int load_gpt2(Tokenizer *t, const GgufFile *f, int vocab_size, Vocab *v, Err *e) {
    const char *pre = gguf_get_str(f, "tokenizer.ggml.pre");
    const PreName *p = pre_name(pre);
    if (!p)
        return err_set(e, "%s: tokenizer.ggml.pre '%.40s' is not a supported pre-tokenizer (gpt-2, llama-bpe, qwen2 and their "
                          "aliases are); pass --tokenizer PATH", f->path, pre ? pre : "(missing: llama.cpp's default)");
    v->bos = v->eos = v->unk = -1;
    if (read_common(f, vocab_size, 0, v, e) || read_merges(f, v, e)) return -1;
    unsigned char *kind = malloc((size_t)v->n);
    if (!kind) return err_set(e, "%s: out of memory", f->path);
    for (int i = 0; i < v->n; i++)
        kind[i] = v->types[i] == TT_CONTROL ? HF_ARR_SPECIAL : v->types[i] == TT_USER ? HF_ARR_ADDED : HF_ARR_NORMAL;
    HfArrays a = {f->path, v->n, (const char *const *)v->pieces, kind, v->n_merges, (const char *const *)v->merges,
                  p->pattern, p->nfc, p->ignore_merges, v->bos, v->eos,
                  read_flag(f, "tokenizer.ggml.add_bos_token", p->add_bos), read_flag(f, "tokenizer.ggml.add_eos_token", 0)};
    int r = hftok_load_arrays(&t->hf, &a, e);
    free(kind);
    if (r) return -1;
    t->vocab_size = hftok_vocab_size(t->hf);
    return 0;
}

int tok_load_gguf(Tokenizer *t, const char *path, int vocab_size, Err *e) {
    memset(t, 0, sizeof *t);
    GgufFile f;
    if (gguf_open(&f, path, e)) return -1;
    snprintf(t->path, sizeof t->path, "%s", path);
    const char *model = gguf_get_str(&f, "tokenizer.ggml.model");
    Vocab v;
    memset(&v, 0, sizeof v);
    int rc;
    if (!model) rc = err_set(e, "%s: no tokenizer in the metadata (tokenizer.ggml.model); pass --tokenizer PATH", path);
    else if (!strcmp(model, "llama")) rc = load_llama(t, &f, vocab_size, &v, e);
    else if (!strcmp(model, "gpt2")) rc = load_gpt2(t, &f, vocab_size, &v, e);
    else rc = err_set(e, "%s: tokenizer.ggml.model '%.32s' is not supported (llama and gpt2 are); pass --tokenizer PATH", path, model);
    if (rc) tok_free(t);
    vocab_free(&v);
    gguf_close(&f);
    return rc ? -1 : 0;
}

char *tok_gguf_chat_template(const char *path) {
    GgufFile f;
    if (gguf_open(&f, path, NULL)) return NULL;
    const char *s = gguf_get_str(&f, "tokenizer.chat_template");
    char *out = s ? strdup(s) : NULL;
    gguf_close(&f);
    return out;
}
