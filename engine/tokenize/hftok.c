/* hftok.c — Hugging Face tokenizer.json: the loaded tables (string pool, hash maps) and decoding.
 *
 * The loaded tokenizer's tables (string pool, hash maps) and
 * everything on the decoding side. Loading is in hftok_load.c, encoding in
 * hftok_encode.c, the split regexes in hftok_pretok.c. */
#include "tokenize.h"

#include <stdlib.h>
#include <string.h>

#include "hftok_impl.h"
#include "unicode.h"

/* ---- pool and hash maps --------------------------------------------------- */

int hf_pool_add(HfTok *t, const char *s, size_t n, uint32_t *off) {
    if (t->pool_len + n + 1 > UINT32_MAX) return -1;
    if (t->pool_len + n + 1 > t->pool_cap) {
        size_t nc = t->pool_cap ? t->pool_cap * 2 : 1 << 16;
        while (nc < t->pool_len + n + 1) nc *= 2;
        char *p = realloc(t->pool, nc);
        if (!p) return -1;
        t->pool = p, t->pool_cap = nc;
    }
    memcpy(t->pool + t->pool_len, s, n);
    t->pool[t->pool_len + n] = 0;
    *off = (uint32_t)t->pool_len;
    t->pool_len += n + 1;
    return 0;
}

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27, x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return mix64(h ^ n);
}

static size_t pow2_at_least(size_t n) {
    size_t c = 64;
    while (c < n) c *= 2;
    return c;
}

int hf_maps_init(HfTok *t, size_t n_strings, size_t n_pairs) {
    t->smap_cap = pow2_at_least(n_strings * 2);
    t->pmap_cap = pow2_at_least(n_pairs * 2);
    t->smap = malloc(t->smap_cap * sizeof *t->smap);
    t->pmap = malloc(t->pmap_cap * sizeof *t->pmap);
    if (!t->smap || !t->pmap) return -1;
    for (size_t i = 0; i < t->smap_cap; i++) t->smap[i].id = -1;
    for (size_t i = 0; i < t->pmap_cap; i++) t->pmap[i].key = UINT64_MAX;
    return 0;
}

int hf_smap_put(HfTok *t, uint32_t off, uint32_t len, int id) {
    size_t mask = t->smap_cap - 1, i = hash_bytes(t->pool + off, len) & mask;
    for (;; i = (i + 1) & mask) {
        HfStrEnt *s = &t->smap[i];
        if (s->id < 0) {
            *s = (HfStrEnt){off, len, id};
            return -1;
        }
        if (s->len == len && memcmp(t->pool + s->off, t->pool + off, len) == 0) return s->id;
    }
}

int hf_smap_get(const HfTok *t, const char *str, size_t n) {
    if (!t->smap_cap) return -1;
    size_t mask = t->smap_cap - 1, i = hash_bytes(str, n) & mask;
    for (;; i = (i + 1) & mask) {
        const HfStrEnt *s = &t->smap[i];
        if (s->id < 0) return -1;
        if (s->len == n && memcmp(t->pool + s->off, str, n) == 0) return s->id;
    }
}

int hf_pmap_put(HfTok *t, int left, int right, int rank, int id) {
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    size_t mask = t->pmap_cap - 1, i = mix64(key) & mask;
    while (t->pmap[i].key != UINT64_MAX && t->pmap[i].key != key) i = (i + 1) & mask;
    if (t->pmap[i].key == UINT64_MAX) t->n_merges++;
    t->pmap[i] = (HfPairEnt){key, rank, id};
    return 0;
}

const HfPairEnt *hf_pmap_get(const HfTok *t, int left, int right) {
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    size_t mask = t->pmap_cap - 1, i = mix64(key) & mask;
    for (;; i = (i + 1) & mask) {
        const HfPairEnt *p = &t->pmap[i];
        if (p->key == key) return p;
        if (p->key == UINT64_MAX) return NULL;
    }
}

/* ---- small accessors ------------------------------------------------------ */

void hftok_free(HfTok *t) {
    if (!t) return;
    free(t->pool);
    free(t->form_off);
    free(t->form_len);
    free(t->text_off);
    free(t->text_len);
    free(t->flags);
    free(t->smap);
    free(t->pmap);
    free(t->added);
    free(t);
}

static int id_used(const HfTok *t, int id) { return id >= 0 && id < t->n_vocab && (t->flags[id] & HF_TOK_USED); }

int hftok_vocab_size(const HfTok *t) { return t->n_vocab; }
int hftok_lookup(const HfTok *t, const char *piece) { return hf_smap_get(t, piece, strlen(piece)); }
const char *hftok_piece(const HfTok *t, int id) { return id_used(t, id) ? t->pool + t->form_off[id] : NULL; }
int hftok_is_special(const HfTok *t, int id) { return id_used(t, id) && (t->flags[id] & HF_TOK_SPECIAL); }
int hftok_bos(const HfTok *t) { return t->bos_id; }
int hftok_eos(const HfTok *t) { return t->eos_id; }
int hftok_wants_bos(const HfTok *t) { return t->add_bos && t->bos_id >= 0; }
int hftok_wants_eos(const HfTok *t) { return t->add_eos && t->eos_id >= 0; }
const char *hftok_describe(const HfTok *t) { return t->desc; }

int hftok_set_bos_eos(HfTok *t, int bos, int eos, Err *e) {
    if (bos < -1 || bos >= t->n_vocab || eos < -1 || eos >= t->n_vocab)
        return err_set(e, "%s: BOS/EOS id (%d, %d) outside the vocabulary of %d", t->path, bos, eos, t->n_vocab);
    t->bos_id = bos;
    t->eos_id = eos;
    return 0;
}

/* ---- decoding ------------------------------------------------------------- */

/* Bytes of id's text that the decoder drops when id starts the text. Only
 * leading ones: no real vocabulary has '▁' inside a token. */
static size_t lead_cut(const HfTok *t, int id) {
    const char *s = t->pool + t->text_off[id];
    size_t n = t->text_len[id], k = 0;
    if (t->strip_lead == HF_STRIP_NONE || (t->flags[id] & (HF_TOK_BYTE | HF_TOK_ADDED))) return 0;
    if (t->strip_lead == HF_STRIP_ONE) return n > 0 && s[0] == ' ';
    while (k < n && s[k] == ' ') k++;
    return k;
}

const char *hftok_decode(const HfTok *t, int prev, int id, size_t *len) {
    if (!id_used(t, id)) {
        *len = 0;
        return "";
    }
    /* SentencePiece's dummy prefix is not part of the text */
    size_t cut = prev < 0 || prev == t->bos_id ? lead_cut(t, id) : 0;
    *len = t->text_len[id] - cut;
    return t->pool + t->text_off[id] + cut;
}

size_t hftok_piece_printable(const HfTok *t, int prev, int id, char *buf, size_t cap) {
    size_t n;
    const char *s = hftok_decode(t, prev, id, &n);
    return cap ? uni_sanitize(s, n, 1, buf, cap) : 0;
}

char *hftok_decode_ids(const HfTok *t, const int *ids, int n, int skip_special, size_t *len) {
    size_t total = 0;
    for (int i = 0; i < n; i++)
        if (id_used(t, ids[i])) total += t->text_len[ids[i]];
    char *raw = malloc(total + 1), *out = malloc(total * 3 + 1);
    if (!raw || !out) {
        free(raw);
        free(out);
        return NULL;
    }
    size_t k = 0;
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (!id_used(t, ids[i]) || (skip_special && (t->flags[ids[i]] & HF_TOK_SPECIAL))) continue;
        /* unlike hftok_decode, only the first token of the whole text loses
         * its prefix (a BOS that is kept is the first token) */
        size_t cut = first ? lead_cut(t, ids[i]) : 0;
        const char *s = t->pool + t->text_off[ids[i]] + cut;
        size_t m = t->text_len[ids[i]] - cut;
        memcpy(raw + k, s, m);
        k += m;
        first = 0;
    }
    /* every invalid byte becomes the 3-byte U+FFFD at worst */
    size_t o = uni_sanitize(raw, k, 0, out, total * 3 + 1);
    free(raw);
    if (len) *len = o;
    return out;
}

size_t hftok_utf8_ready(const char *buf, size_t n) { return uni_complete_prefix(buf, n); }
