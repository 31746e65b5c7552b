/* tokenizer.c — llama2.c tokenizer.bin vocabularies; tokenizer.json calls handed to hftok_*. */
#include "tokenize.h"

#include "bpeheap.h"
#include "engine/files.h"
#include "engine/sniff.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOK_MAX_LEN_LIMIT SNIFF_TOK_MAX_LEN
#define TOK_MAX_VOCAB (1 << 22)

static int cmp_index(const void *a, const void *b) {
    return strcmp(((const TokIndex *)a)->str, ((const TokIndex *)b)->str);
}

static size_t str_hash(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return (size_t)(h ^ (h >> 31));
}

/* Id of s[0..n), or -1: one probe run in the hash table. */
static int lookup_n(const Tokenizer *t, const char *s, size_t n) {
    for (size_t i = str_hash(s, n) & t->hash_mask;; i = (i + 1) & t->hash_mask) {
        int id = t->hash[i];
        if (id < 0) return -1;
        if ((size_t)t->vocab_len[id] == n && memcmp(t->vocab[id], s, n) == 0) return id;
    }
}

/* Fill the hash table. A vocabulary may spell one string twice; the table
 * keeps the id a binary search of the sorted vocabulary finds, which is
 * what lookups returned before there was a table. */
static int hash_build(Tokenizer *t) {
    size_t cap = 1024;
    while (cap < 2 * (size_t)t->vocab_size) cap *= 2;
    if (!(t->hash = malloc(cap * sizeof *t->hash))) return -1;
    memset(t->hash, 0xff, cap * sizeof *t->hash);
    t->hash_mask = cap - 1;
    for (int k = 0; k < t->vocab_size; k++) {
        const TokIndex *x = &t->sorted[k];
        if (k > 0 && strcmp(t->sorted[k - 1].str, x->str) == 0) continue;
        const TokIndex *hit = bsearch(x, t->sorted, t->vocab_size, sizeof(TokIndex), cmp_index);
        size_t n = (size_t)t->vocab_len[hit->id], i = str_hash(x->str, n) & t->hash_mask;
        while (t->hash[i] >= 0) i = (i + 1) & t->hash_mask;
        t->hash[i] = hit->id;
    }
    return 0;
}

void tok_free(Tokenizer *t) {
    hftok_free(t->hf);
    if (t->vocab)
        for (int i = 0; i < t->vocab_size; i++) free(t->vocab[i]);
    free(t->vocab);
    free(t->vocab_len);
    free(t->scores);
    free(t->sorted);
    free(t->hash);
    free(t->unmerged);
    memset(t, 0, sizeof *t);
}

/* Grow the per-token arrays to hold at least n entries. */
static int tok_reserve(Tokenizer *t, int *cap, int n) {
    if (n <= *cap) return 0;
    int nc = *cap ? *cap * 2 : 1024;
    while (nc < n) nc *= 2;
    char **v = realloc(t->vocab, (size_t)nc * sizeof *v);
    if (v) t->vocab = v;
    int *l = realloc(t->vocab_len, (size_t)nc * sizeof *l);
    if (l) t->vocab_len = l;
    float *s = realloc(t->scores, (size_t)nc * sizeof *s);
    if (s) t->scores = s;
    if (!v || !l || !s) return -1;
    *cap = nc;
    return 0;
}

/* Read one token record (score, len, bytes); 1 = read, 0 = clean EOF, -1 = error. */
static int read_token(Tokenizer *t, FILE *f, int i, Err *e) {
    float score;
    int32_t len;
    size_t got = fread(&score, 1, 4, f);
    if (got == 0 && feof(f)) return 0;
    if (got != 4 || fread(&len, 4, 1, f) != 1)
        return err_set(e, "%s: truncated at token %d (header of the token cut short)", t->path, i);
    if (!isfinite(score)) return err_set(e, "%s: token %d has a non-finite score", t->path, i);
    if (len < 0 || len > t->max_token_length)
        return err_set(e, "%s: token %d has length %d (max_token_length is %d)", t->path, i, len, t->max_token_length);
    char *s = malloc((size_t)len + 1);
    if (!s) return err_set(e, "%s: out of memory", t->path);
    if (len && fread(s, 1, (size_t)len, f) != (size_t)len) {
        free(s);
        return err_set(e, "%s: truncated inside token %d (%d bytes expected)", t->path, i, len);
    }
    s[len] = 0;
    if (strlen(s) != (size_t)len) {
        free(s);
        return err_set(e, "%s: token %d contains a NUL byte", t->path, i);
    }
    t->vocab[i] = s;
    t->vocab_len[i] = len;
    t->scores[i] = score;
    return 1;
}

#define NOT_TOKENIZER "a llama2.c tokenizer.bin or tokenizer.json"

static int tok_index(Tokenizer *t, Err *e);
static int byte_piece(const char *p, size_t n);

/* The id of each byte's <0xNN> piece (-1: none), wherever the vocabulary
 * puts them: llama2.c's files at 3..258, but a GGUF may order them otherwise. */
static void index_bytes(Tokenizer *t) {
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    for (int i = t->vocab_size - 1; i >= 0; i--) {
        int b = byte_piece(t->vocab[i], (size_t)t->vocab_len[i]);
        if (b >= 0) t->byte_id[b] = i;
    }
}

/* A file that failed to load as a tokenizer: if it does not look like one
 * at all, say so and what it looks like instead of the first bad field. */
static int not_tokenizer(const char *path, Err *e) {
    FileKind k = sniff_kind(path);
    if (k == FILE_TOKENIZER) return -1;
    char detail[sizeof e->msg];
    snprintf(detail, sizeof detail, "%s", e ? e->msg : "");
    return file_not(e, path, NOT_TOKENIZER, k, detail);
}

int tok_load(Tokenizer *t, const char *path, int vocab_size, Err *e) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    if (vocab_size > TOK_MAX_VOCAB) return err_set(e, "%s: vocabulary size %d is absurd", path, vocab_size);
    FILE *f = file_fopen_regular(path, "tokenizer", NOT_TOKENIZER, e);
    if (!f) return -1;
    int32_t maxlen;
    int cap = 0, n = 0, r = 0;
    if (fread(&maxlen, 4, 1, f) != 1) r = err_set(e, "%s: too short for a tokenizer header", path);
    else if (maxlen <= 0 || maxlen > TOK_MAX_LEN_LIMIT) r = err_set(e, "%s: max_token_length %d is invalid", path, maxlen);
    t->max_token_length = maxlen;
    while (r == 0 && (vocab_size <= 0 || n < vocab_size)) {
        if (n >= TOK_MAX_VOCAB) { r = err_set(e, "%s: more than %d tokens", path, TOK_MAX_VOCAB); break; }
        if (tok_reserve(t, &cap, n + 1) != 0) { r = err_set(e, "%s: out of memory", path); break; }
        int got = read_token(t, f, n, e);
        if (got < 0) r = -1;
        else if (got == 0) break;
        else t->vocab_size = ++n;
    }
    fclose(f);
    if (r == 0 && vocab_size > 0 && n < vocab_size)
        r = err_set(e, "%s: has %d tokens but the model's vocabulary is %d", path, n, vocab_size);
    if (r == 0 && n == 0) r = err_set(e, "%s: contains no tokens", path);
    if (r == 0 && n <= 258) r = err_set(e, "%s: %d tokens is too few for byte fallback (needs > 258)", path, n);
    if (r != 0) {
        tok_free(t);
        return not_tokenizer(path, e);
    }
    return tok_index(t, e);
}

/* The lookup tables over a filled vocabulary (the sorted list, the hash,
 * the byte pieces' text); frees t on failure. */
static int tok_index(Tokenizer *t, Err *e) {
    int n = t->vocab_size;
    if ((t->sorted = malloc((size_t)n * sizeof(TokIndex)))) {
        for (int i = 0; i < n; i++) t->sorted[i] = (TokIndex){t->vocab[i], i};
        qsort(t->sorted, n, sizeof(TokIndex), cmp_index);
    }
    if (!t->sorted || hash_build(t) != 0) {
        tok_free(t);
        return err_set(e, "%s: out of memory", t->path);
    }
    for (int b = 0; b < 256; b++) { t->byte_text[b][0] = (char)b; t->byte_text[b][1] = 0; }
    t->bos_id = TOK_BOS, t->eos_id = TOK_EOS, t->add_bos = 1, t->unk_id = 0;
    index_bytes(t);
    return 0;
}

int tok_load_pieces(Tokenizer *t, const char *name, int n, const char *const *pieces, const float *scores, Err *e) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", name);
    if (n <= 258 || n > TOK_MAX_VOCAB)
        return err_set(e, "%s: %d tokens (a vocabulary with byte fallback needs 259 to %d)", name, n, TOK_MAX_VOCAB);
    t->vocab = calloc((size_t)n, sizeof *t->vocab);
    t->vocab_len = malloc((size_t)n * sizeof *t->vocab_len);
    t->scores = malloc((size_t)n * sizeof *t->scores);
    if (!t->vocab || !t->vocab_len || !t->scores) {
        tok_free(t);
        return err_set(e, "%s: out of memory", name);
    }
    t->vocab_size = n;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(pieces[i]);
        if (!isfinite(scores[i]) || len > TOK_MAX_LEN_LIMIT || !(t->vocab[i] = strdup(pieces[i]))) {
            tok_free(t);
            return err_set(e, "%s: token %d: %s", name, i, isfinite(scores[i]) ? "too long, or out of memory" : "a non-finite score");
        }
        t->vocab_len[i] = (int)len;
        t->scores[i] = scores[i];
        if ((int)len > t->max_token_length) t->max_token_length = (int)len;
    }
    return tok_index(t, e);
}

int tok_lookup(const Tokenizer *t, const char *str) {
    if (t->hf) return hftok_lookup(t->hf, str);
    return lookup_n(t, str, strlen(str));
}

/* Length of the UTF-8 sequence starting at s (1 for an invalid byte, which
 * then goes through byte fallback alone). */
static size_t utf8_len(const unsigned char *s, size_t left) {
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 1;
    if (n > left) return 1;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 1;
    return n;
}

/* Code points (or bytes) to initial tokens: a code point with no piece is
 * spelled as its bytes' <0xNN> pieces, or the unknown token without them. */
static int split_symbols(const Tokenizer *t, const unsigned char *s, size_t len, int *ids, int n, char *buf) {
    for (size_t i = 0; i < len;) {
        size_t k = utf8_len(s + i, len - i);
        memcpy(buf, s + i, k);
        buf[k] = 0;
        int id = tok_lookup(t, buf);
        if (id >= 0) ids[n++] = id;
        else
            for (size_t j = 0; j < k; j++) ids[n++] = t->byte_id[s[i + j]] >= 0 ? t->byte_id[s[i + j]] : t->unk_id;
        i += k;
    }
    return n;
}

/* ---- merges ------------------------------------------------------------------
 * llama2.c merges, repeatedly, the adjacent pair whose merged string has the
 * highest score, the leftmost among equal scores. Rescanning every pair per
 * merge is quadratic; instead a heap (engine/tokenize/bpeheap.h) holds every
 * candidate pair, keyed by (score descending, position ascending), over a
 * linked list of symbols. A symbol's version stamps the pair that starts at
 * it: a merge changes only the pair at its left symbol and the one before,
 * so it bumps those two and pushes their new pairs; heap entries with an old
 * stamp are dropped when popped. Positions are the symbols' original
 * indices, whose order the list keeps, so the tie rule is the scan's. */

typedef struct {
    int id, prev, next; /* id -1: absorbed into its left neighbour */
    unsigned ver;       /* bumped whenever the pair starting here changes */
} MergeSym;

typedef struct {
    const Tokenizer *t;
    MergeSym *sym;
    BpeHeap heap; /* payload: a = merged id, b = the left symbol's version */
    char *buf;    /* room for two pieces */
} Merger;

/* Key of a score at a position: higher scores and then lower positions sort
 * first as unsigned integers. -0 is +0, as the float comparison has it. */
static uint64_t merge_key(float score, int pos) {
    uint32_t u;
    if (score == 0) score = 0;
    memcpy(&u, &score, 4);
    u = u & 0x80000000u ? ~u : u | 0x80000000u; /* ascending with the float */
    return (uint64_t)~u << 32 | (uint32_t)pos;
}

/* Push the pair starting at symbol pos, if its merged string is a token.
 * Scores at or below -1e30 never win, as in llama2.c's scan. */
static int merge_push(Merger *m, int pos) {
    const Tokenizer *t = m->t;
    int right = m->sym[pos].next;
    if (right < 0) return 0;
    int a = m->sym[pos].id, b = m->sym[right].id, la = t->vocab_len[a], lb = t->vocab_len[b];
    if (la + lb > t->max_token_length) return 0;
    memcpy(m->buf, t->vocab[a], (size_t)la);
    memcpy(m->buf + la, t->vocab[b], (size_t)lb);
    int id = lookup_n(t, m->buf, (size_t)(la + lb));
    if (id < 0 || !(t->scores[id] > -1e30f) || (t->unmerged && t->unmerged[id])) return 0;
    return bpeheap_push(&m->heap, (BpeCand){merge_key(t->scores[id], pos), id, (int32_t)m->sym[pos].ver});
}

/* Merge the best pair until none is left. */
static int merge_run(Merger *m) {
    while (m->heap.n) {
        BpeCand c = bpeheap_pop(&m->heap);
        int pos = (int)(uint32_t)c.key;
        MergeSym *s = m->sym, *l = &s[pos];
        if (l->id < 0 || l->ver != (unsigned)c.b) continue; /* stale */
        MergeSym *r = &s[l->next];
        l->id = c.a, l->ver++, l->next = r->next;
        if (r->next >= 0) s[r->next].prev = pos;
        r->id = -1;
        if (l->prev >= 0) s[l->prev].ver++;
        if ((l->prev >= 0 && merge_push(m, l->prev)) || merge_push(m, pos)) return -1;
    }
    return 0;
}

/* Merge ids[0..n) in place; returns the new count, or -1 when out of memory. */
static int merge_pairs(const Tokenizer *t, int *ids, int n, char *buf) {
    if (n < 2) return n;
    Merger m = {t, malloc((size_t)n * sizeof(MergeSym)), {0}, buf};
    int r = m.sym ? 0 : -1;
    for (int i = 0; r == 0 && i < n; i++) m.sym[i] = (MergeSym){ids[i], i - 1, i + 1 < n ? i + 1 : -1, 0};
    for (int i = 0; r == 0 && i + 1 < n; i++) r = merge_push(&m, i);
    if (r == 0) r = merge_run(&m);
    int k = 0;
    for (int i = 0; r == 0 && i >= 0; i = m.sym[i].next) ids[k++] = m.sym[i].id;
    free(m.sym);
    bpeheap_free(&m.heap);
    return r == 0 ? k : -1;
}

/* tokenizer.json: BOS/EOS only where the model's own tokenizer adds them;
 * the HF encoder wants room for its worst case, so encode into its own
 * buffer and copy what fits. */
static int encode_hf(const Tokenizer *t, const char *text, size_t len, int bos, int eos, int *ids, int max_ids,
                     int *n_ids, Err *e) {
    int flags = (bos && !t->text_has_bos && hftok_wants_bos(t->hf) ? HFTOK_BOS : 0) | (eos && hftok_wants_eos(t->hf) ? HFTOK_EOS : 0) |
                (t->special ? HFTOK_SPECIAL : 0);
    if (len > (size_t)1 << 26) return err_set(e, "tokenizer: text of %zu bytes is too long", len);
    int cap = (int)(4 * len + 8), n = 0;
    int *tmp = malloc((size_t)cap * sizeof(int));
    if (!tmp) return err_set(e, "tokenizer: out of memory");
    int r = hftok_encode(t->hf, text, len, flags, tmp, cap, &n, e);
    if (r == 0 && n > max_ids) r = err_set(e, "tokenizer: output buffer too small");
    if (r == 0) memcpy(ids, tmp, (size_t)n * sizeof(int)), *n_ids = n;
    if (r != 0 && t->path[0]) err_prefix(e, t->path);
    free(tmp);
    return r;
}

int tok_encode(const Tokenizer *t, const char *text, size_t len, int bos, int eos, int *ids, int max_ids,
               int *n_ids, Err *e) {
    if (max_ids < 0 || (size_t)max_ids < len + 3) return err_set(e, "tokenizer: output buffer too small");
    if (t->hf) return encode_hf(t, text, len, bos, eos, ids, max_ids, n_ids, e);
    char *buf = malloc((size_t)t->max_token_length * 2 + 8);
    if (!buf) return err_set(e, "tokenizer: out of memory");
    int n = 0;
    if (bos && t->add_bos && t->bos_id >= 0) ids[n++] = t->bos_id;
    int start = n;
    if (len > 0) {
        int sp = tok_lookup(t, " "); /* SentencePiece's dummy prefix */
        if (sp >= 0) ids[n++] = sp;
    }
    n = split_symbols(t, (const unsigned char *)text, len, ids, n, buf);
    int merged = merge_pairs(t, ids + start, n - start, buf);
    free(buf);
    if (merged < 0) return err_set(e, "tokenizer: out of memory");
    n = start + merged;
    if (eos && t->eos_id >= 0) ids[n++] = t->eos_id;
    *n_ids = n;
    return 0;
}

/* Byte value of a "<0xXX>" piece, or -1. */
static int byte_piece(const char *p, size_t n) {
    unsigned v;
    char tail;
    if (n != 6 || sscanf(p, "<0x%2X%c", &v, &tail) != 2 || tail != '>') return -1;
    return (int)v;
}

const char *tok_decode(const Tokenizer *t, int prev, int token, size_t *out_len) {
    if (t->hf) return hftok_decode(t->hf, prev, token, out_len);
    if (token < 0 || token >= t->vocab_size || (t->unmerged && t->unmerged[token])) { *out_len = 0; return ""; } /* GGUF control: no text */
    const char *p = t->vocab[token];
    size_t n = (size_t)t->vocab_len[token];
    int b = byte_piece(p, n);
    if (b >= 0) {
        *out_len = 1;
        return (const char *)&t->byte_text[b][0];
    }
    if (prev == t->bos_id && p[0] == ' ') { p++; n--; }
    *out_len = n;
    return p;
}

size_t tok_piece_printable(const Tokenizer *t, int prev, int token, char *buf, size_t cap) {
    if (t->hf) return hftok_piece_printable(t->hf, prev, token, buf, cap);
    size_t n, k = 0;
    const char *p = tok_decode(t, prev, token, &n);
    if (cap == 0) return 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) continue;
        buf[k++] = (char)c;
    }
    /* never end inside a UTF-8 sequence that was cut by cap */
    if (k + 1 >= cap && k > 0) {
        size_t j = k;
        while (j > 0 && ((unsigned char)buf[j - 1] & 0xC0) == 0x80) j--;
        if (j > 0 && (unsigned char)buf[j - 1] >= 0xC0 && k - (j - 1) < utf8_len((unsigned char *)buf + j - 1, 4)) k = j - 1;
    }
    buf[k] = 0;
    return k;
}

int tok_load_hf(Tokenizer *t, const char *path, const char *model_dir, int vocab_size, Err *e) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    FileKind k = sniff_kind(path);
    if (k == FILE_DIR || k == FILE_FIFO || k == FILE_DEVICE || k == FILE_SOCKET) /* never block reading a FIFO */
        return file_not(e, path, "a tokenizer.json", k, NULL);
    if (hftok_load(&t->hf, path, e) != 0)
        return k == FILE_JSON || k == FILE_TEXT ? -1 : file_not(e, path, "a tokenizer.json", k, e ? e->msg : NULL);
    t->vocab_size = hftok_vocab_size(t->hf);
    if (vocab_size > 0 && t->vocab_size > vocab_size) {
        err_set(e, "%s: %d token ids but the model has %d embeddings", path, t->vocab_size, vocab_size);
        tok_free(t);
        return -1;
    }
    /* BOS/EOS: the tokenizer's own config first, then what generation uses */
    const char *files[] = {"tokenizer_config.json", "generation_config.json"};
    for (int i = 0; model_dir && i < 2; i++) {
        char p[1100];
        snprintf(p, sizeof p, "%s/%s", model_dir, files[i]);
        if (sniff_kind(p) == FILE_MISSING) continue; /* optional; a FIFO is refused by the loader */
        if (hftok_load_config(t->hf, p, e) != 0) { tok_free(t); return -1; }
    }
    return 0;
}

int tok_stop_id(const Tokenizer *t) { return t->has_stop ? t->stop : t->hf ? hftok_eos(t->hf) : t->bos_id; }
