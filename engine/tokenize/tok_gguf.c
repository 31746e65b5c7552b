/* tok_gguf.c — a llama2.c-style vocabulary read from a GGUF file's tokenizer.ggml.* metadata. */
#include "tokenize.h"

#include <stdlib.h>
#include <string.h>

#include "engine/gguf.h"

/* A piece with each U+2581 (SentencePiece's space mark) made a space, as
 * llama2.c's tokenizer.bin spells it; NULL if it holds a NUL or memory ran out. */
static char *piece_text(const char *s, uint64_t n) {
    if (memchr(s, 0, (size_t)n)) return NULL;
    char *out = malloc((size_t)n + 1);
    size_t k = 0;
    for (uint64_t i = 0; out && i < n; i++) {
        if (i + 2 < n && !memcmp(s + i, "\xe2\x96\x81", 3)) out[k++] = ' ', i += 2;
        else out[k++] = s[i];
    }
    if (out) out[k] = '\0';
    return out;
}

/* The pieces and scores of f's vocabulary, checked to be a llama one. */
static int read_vocab(const GgufFile *f, int vocab_size, char ***pieces, float **scores, int *n, Err *e) {
    const char *model = gguf_get_str(f, "tokenizer.ggml.model");
    const GgufKv *tok = gguf_find_kv(f, "tokenizer.ggml.tokens"), *sc = gguf_find_kv(f, "tokenizer.ggml.scores");
    if (!model) return err_set(e, "%s: no tokenizer in the metadata (tokenizer.ggml.model); pass --tokenizer PATH", f->path);
    if (strcmp(model, "llama"))
        return err_set(e, "%s: tokenizer.ggml.model '%.32s' is not supported (only llama); pass --tokenizer PATH", f->path, model);
    if (!tok || tok->type != GGUF_ARRAY || tok->elem != GGUF_STRING)
        return err_set(e, "%s: tokenizer.ggml.tokens is missing or not an array of strings", f->path);
    if (!sc || sc->type != GGUF_ARRAY || sc->elem != GGUF_F32 || sc->count != tok->count)
        return err_set(e, "%s: tokenizer.ggml.scores is missing, not f32 or not one per token", f->path);
    if (tok->count > (1u << 22) || (vocab_size > 0 && tok->count != (uint64_t)vocab_size))
        return err_set(e, "%s: %llu tokens but the model's vocabulary is %d", f->path, (unsigned long long)tok->count, vocab_size);
    *n = (int)tok->count;
    *pieces = calloc((size_t)*n + 1, sizeof **pieces);
    *scores = malloc(((size_t)*n + 1) * sizeof **scores);
    if (!*pieces || !*scores) return err_set(e, "%s: out of memory", f->path);
    for (int i = 0; i < *n; i++) {
        uint64_t len;
        const char *s = gguf_arr_str(tok, (uint64_t)i, &len);
        if (!((*pieces)[i] = piece_text(s, len)))
            return err_set(e, "%s: token %d holds a NUL byte (or out of memory)", f->path, i);
        memcpy(&(*scores)[i], sc->arr + 4 * (size_t)i, 4);
    }
    return 0;
}

int tok_load_gguf(Tokenizer *t, const char *path, int vocab_size, Err *e) {
    memset(t, 0, sizeof *t);
    GgufFile f;
    if (gguf_open(&f, path, e)) return -1;
    char **pieces = NULL;
    float *scores = NULL;
    int n = 0;
    int rc = read_vocab(&f, vocab_size, &pieces, &scores, &n, e);
    if (!rc) rc = tok_load_pieces(t, path, n, (const char *const *)pieces, scores, e);
    for (int i = 0; pieces && i < n; i++) free(pieces[i]);
    free(pieces);
    free(scores);
    gguf_close(&f);
    return rc;
}
