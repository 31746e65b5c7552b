/* train_scratch.c — training from random weights: a small generated vocabulary and the initial weights.
 *
 * The generated vocabulary and the initial weights of
 * training from scratch. */
#include "train_scratch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

const char *const train_vocab_default_words[] = {
    " the", " grass", " is", " green", " sky", " blue", " sun", " yellow", " here", " we", " go", " there",
    " and", " back", " again", " a", " pass", " key", " value", " number", " remember", " it", " what",
    " of", " to", " in", " for", " variable", " equals", " question", " answer", NULL};

enum { VOCAB_BASE = 259, VOCAB_ASCII = 95, VOCAB_MAX_WORD = 64 };

/* Piece list under construction: the words' prefixes, without repeats. */
typedef struct {
    char **s;
    int n, cap;
} Pieces;

static int pieces_has(const Pieces *p, const char *s, size_t len) {
    if (len == 1 && s[0] >= 32 && s[0] < 127) return 1; /* a single ASCII character: already a piece */
    for (int i = 0; i < p->n; i++)
        if (strlen(p->s[i]) == len && !memcmp(p->s[i], s, len)) return 1;
    return 0;
}

static int pieces_add(Pieces *p, const char *s, size_t len) {
    if (pieces_has(p, s, len)) return 0;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        char **g = realloc(p->s, (size_t)cap * sizeof *g);
        if (!g) return -1;
        p->s = g, p->cap = cap;
    }
    if (!(p->s[p->n] = malloc(len + 1))) return -1;
    memcpy(p->s[p->n], s, len);
    p->s[p->n++][len] = 0;
    return 0;
}

static void pieces_free(Pieces *p) {
    for (int i = 0; i < p->n; i++) free(p->s[i]);
    free(p->s);
}

/* Every prefix of length ≥ 2 of every word (a single byte outside
 * printable ASCII becomes a piece too, so its merges exist). */
static int pieces_of(Pieces *p, const char *const *words, int n, Err *e) {
    memset(p, 0, sizeof *p);
    for (int w = 0; w < n; w++) {
        size_t len = strlen(words[w]);
        if (len == 0 || len > VOCAB_MAX_WORD)
            return err_set(e, "vocabulary word %d is %s (1 to %d bytes)", w + 1, len ? "too long" : "empty",
                           VOCAB_MAX_WORD);
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)words[w][i] < 32 || words[w][i] == 127)
                return err_set(e, "vocabulary word %d holds control byte 0x%02x", w + 1, (unsigned char)words[w][i]);
        for (size_t k = 1; k <= len; k++)
            if (pieces_add(p, words[w], k)) return err_set(e, "out of memory for the vocabulary");
    }
    return 0;
}

int train_vocab_count(const char *const *words, int n) {
    Pieces p;
    int r = pieces_of(&p, words, n, NULL) ? -1 : VOCAB_BASE + VOCAB_ASCII + p.n;
    pieces_free(&p);
    return r;
}

/* One llama2.c token record: score, length, bytes. */
static void put_piece(FILE *f, const char *s, float score) {
    int32_t len = (int32_t)strlen(s);
    fwrite(&score, 4, 1, f);
    fwrite(&len, 4, 1, f);
    fwrite(s, 1, (size_t)len, f);
}

/* The tokenizer.bin of the pieces p, padded to vocab_size, into f. */
static void vocab_emit(FILE *f, const Pieces *p, int total, int vocab_size) {
    int32_t maxlen = VOCAB_MAX_WORD > 16 ? VOCAB_MAX_WORD : 16;
    fwrite(&maxlen, 4, 1, f);
    put_piece(f, "<unk>", 0), put_piece(f, "<s>", 0), put_piece(f, "</s>", 0);
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        put_piece(f, s, 0);
    }
    for (int c = 32; c < 127; c++) put_piece(f, (char[]){(char)c, 0}, 0); /* no merge makes a single */
    for (int i = 0; i < p->n; i++) put_piece(f, p->s[i], (float)strlen(p->s[i]) - (float)i * 1e-4f);
    for (int i = total; i < vocab_size; i++) {
        char s[32];
        snprintf(s, sizeof s, "<pad_%d>", i - total);
        put_piece(f, s, -1e31f); /* no prefix of it is a piece: never produced */
    }
}

int train_vocab_write(const char *path, const char *const *words, int n, int vocab_size, int *n_pieces, Err *e) {
    Pieces p;
    if (pieces_of(&p, words, n, e)) { pieces_free(&p); return -1; }
    int total = VOCAB_BASE + VOCAB_ASCII + p.n;
    if (vocab_size > 0 && vocab_size < total) {
        pieces_free(&p);
        return err_set(e, "the vocabulary needs %d pieces, more than the %d asked for", total, vocab_size);
    }
    if (n_pieces) *n_pieces = vocab_size > total ? vocab_size : total;
    char *bytes = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&bytes, &len);
    if (!mem) { pieces_free(&p); return err_set(e, "out of memory for the vocabulary"); }
    vocab_emit(mem, &p, total, vocab_size);
    pieces_free(&p);
    fclose(mem);
    /* an existing file is kept when it is this vocabulary, refused when it is another */
    FileKind kind = FILE_MISSING;
    size_t old_len = 0;
    char *old = NULL;
    int rc = 0;
    if (file_stat_kind(path, &kind, NULL) == 1 || kind != FILE_MISSING) { /* 1: a regular file */
        old = file_read_all(path, "tokenizer", "a tokenizer.bin", 64 << 20, &old_len, e);
        rc = old && old_len == len && !memcmp(old, bytes, len) ? 0
           : old ? err_set(e, "%s: another tokenizer is already there (pass it with --tokenizer, or move it)", path) : -1;
    } else {
        FileAtomic a;
        FILE *f = file_atomic_open(&a, path, e);
        rc = !f ? -1 : fwrite(bytes, 1, len, f) == len ? file_atomic_commit(&a, e)
                                                        : (file_atomic_abort(&a), err_set(e, "%s: write failed", path));
    }
    free(old);
    free(bytes);
    return rc;
}

static void scale(float *x, size_t n, float k) {
    for (size_t i = 0; i < n; i++) x[i] *= k;
}

int train_model_init(Model *m, const Config *c, uint64_t seed, Err *e) {
    if (model_random(m, c, seed, e)) return -1;
    const Config *k = &m->c;
    size_t L = k->n_layers, d = k->dim, hid = k->hidden_dim, V = k->vocab_size;
    float emb = 1.0f / sqrtf((float)d), out = 1.0f / sqrtf(2.0f * (float)L);
    /* the weights live in m->owned, the random model's own heap */
    scale((float *)m->w.token_embedding, V * d, emb);
    scale((float *)m->w.wo, L * d * d, out);
    scale((float *)m->w.w2, L * d * hid, out);
    if (!k->shared_classifier) scale((float *)m->w.wcls, V * d, emb);
    return 0;
}
