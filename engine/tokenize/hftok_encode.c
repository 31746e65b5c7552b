/* hftok_encode.c — text to ids: added tokens, normalisation, pre-tokens, BPE.
 *
 * BPE follows the reference exactly: the symbols of a pre-token are merged
 * one pair at a time, always the pair with the lowest merge rank and, among
 * equal ranks, the leftmost. A heap of candidate pairs (bpeheap.h, shared
 * with tokenizer.c) over a linked list of symbols makes a pre-token of n symbols cost O(n log n); heap
 * entries made stale by a neighbouring merge are skipped when popped. A
 * per-call cache maps repeated pre-tokens to their ids, so long texts cost
 * little more than their distinct words. All scratch memory belongs to one
 * call, so a loaded HfTok stays read-only and shareable between threads.
 */
#include <stdlib.h>
#include <string.h>

#include "bpeheap.h"
#include "hftok_impl.h"
#include "unicode.h"

#define CACHE_MAX_WORD 256 /* longer pre-tokens are rare and not worth keeping */

typedef struct {
    int id, prev, next; /* id -1: absorbed by its left neighbour */
} Sym;

typedef struct {
    uint64_t hash;
    uint32_t word_off, word_len, ids_off, ids_n; /* word_len 0: empty slot */
} CacheEnt;

typedef struct {
    const HfTok *t;
    int *ids, cap, n;
    Err *e;
    Sym *sym;
    BpeHeap heap; /* key rank << 32 | position; payload the left and right ids */
    size_t sym_cap;
    char *buf; /* normalised segment / vocab spelling of a word */
    size_t buf_cap;
    CacheEnt *cache;
    size_t cache_cap, cache_n;
    char *cwords;
    size_t cwords_len, cwords_cap;
    int *cids;
    size_t cids_len, cids_cap;
} Enc;

/* Grow *p (elements of size sz, capacity *cap) to hold need elements. */
static int grow(void *p, size_t *cap, size_t need, size_t sz) {
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *q = realloc(*(void **)p, nc * sz);
    if (!q) return -1;
    *(void **)p = q;
    *cap = nc;
    return 0;
}

static int oom(Enc *c) { return err_set(c->e, "%s: out of memory while encoding", c->t->path); }

static int emit(Enc *c, int id) {
    if (c->n >= c->cap) return err_set(c->e, "%s: encoding needs more than %d ids", c->t->path, c->cap);
    c->ids[c->n++] = id;
    return 0;
}

/* ---- word cache --------------------------------------------------------- */

static uint64_t word_hash(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL ^ n;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static CacheEnt *cache_slot(Enc *c, uint64_t h, const char *w, size_t n) {
    size_t mask = c->cache_cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        CacheEnt *x = &c->cache[i];
        if (!x->word_len) return x;
        if (x->hash == h && x->word_len == n && memcmp(c->cwords + x->word_off, w, n) == 0) return x;
    }
}

static int cache_rehash(Enc *c) {
    size_t old_cap = c->cache_cap;
    CacheEnt *old = c->cache;
    c->cache_cap = old_cap ? old_cap * 2 : 1024;
    c->cache = calloc(c->cache_cap, sizeof *c->cache);
    if (!c->cache) {
        c->cache = old, c->cache_cap = old_cap;
        return -1;
    }
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].word_len) *cache_slot(c, old[i].hash, c->cwords + old[i].word_off, old[i].word_len) = old[i];
    free(old);
    return 0;
}

/* Remember that word w encoded to the ids emitted since `from`. */
static void cache_put(Enc *c, const char *w, size_t n, int from) {
    size_t k = (size_t)(c->n - from);
    if (n == 0 || n > CACHE_MAX_WORD) return;
    if ((c->cache_n + 1) * 2 > c->cache_cap && cache_rehash(c)) return; /* no memory: just no caching */
    if (grow(&c->cwords, &c->cwords_cap, c->cwords_len + n, 1) || grow(&c->cids, &c->cids_cap, c->cids_len + k, sizeof(int)))
        return;
    uint64_t h = word_hash(w, n);
    CacheEnt *x = cache_slot(c, h, w, n);
    if (x->word_len) return;
    memcpy(c->cwords + c->cwords_len, w, n);
    memcpy(c->cids + c->cids_len, c->ids + from, k * sizeof(int));
    *x = (CacheEnt){h, (uint32_t)c->cwords_len, (uint32_t)n, (uint32_t)c->cids_len, (uint32_t)k};
    c->cwords_len += n, c->cids_len += k, c->cache_n++;
}

/* Emit the cached ids of w; 1 if it was cached, 0 if not, -1 on error. */
static int cache_emit(Enc *c, const char *w, size_t n) {
    if (!c->cache_cap || n == 0 || n > CACHE_MAX_WORD) return 0;
    CacheEnt *x = cache_slot(c, word_hash(w, n), w, n);
    if (!x->word_len) return 0;
    for (uint32_t i = 0; i < x->ids_n; i++)
        if (emit(c, c->cids[x->ids_off + i])) return -1;
    return 1;
}

/* ---- BPE ------------------------------------------------------------------ */

static int heap_push(Enc *c, int pos) {
    int right = c->sym[pos].next;
    if (right < 0) return 0;
    const HfPairEnt *m = hf_pmap_get(c->t, c->sym[pos].id, c->sym[right].id);
    if (!m) return 0;
    return bpeheap_push(&c->heap, (BpeCand){(uint64_t)(uint32_t)m->rank << 32 | (uint32_t)pos, c->sym[pos].id, c->sym[right].id});
}

/* Merge the n symbols in c->sym and emit the result. */
static int merge_and_emit(Enc *c, int n) {
    c->heap.n = 0;
    for (int i = 0; i + 1 < n; i++)
        if (heap_push(c, i)) return oom(c);
    while (c->heap.n) {
        BpeCand k = bpeheap_pop(&c->heap);
        Sym *s = c->sym;
        int pos = (int)(uint32_t)k.key, right = s[pos].next;
        if (s[pos].id != k.a || right < 0 || s[right].id != k.b) continue; /* stale */
        s[pos].id = hf_pmap_get(c->t, k.a, k.b)->id;
        s[pos].next = s[right].next;
        if (s[right].next >= 0) s[s[right].next].prev = pos;
        s[right].id = -1;
        if ((s[pos].prev >= 0 && heap_push(c, s[pos].prev)) || heap_push(c, pos)) return oom(c);
    }
    for (int i = 0; i >= 0; i = c->sym[i].next)
        if (emit(c, c->sym[i].id)) return -1;
    return 0;
}

static int add_sym(Enc *c, int *n, int id) {
    if (grow(&c->sym, &c->sym_cap, (size_t)*n + 1, sizeof(Sym))) return oom(c);
    c->sym[*n] = (Sym){id, *n - 1, -1};
    if (*n > 0) c->sym[*n - 1].next = *n;
    (*n)++;
    return 0;
}

/* Initial symbols of a SentencePiece-style word: one per character, else its
 * <0xNN> bytes, else (consecutive runs fused if fuse_unk) the unk token. */
static int sp_symbols(Enc *c, const char *w, size_t len, int *n) {
    const HfTok *t = c->t;
    int last_unk = 0;
    for (size_t i = 0; i < len;) {
        size_t cl;
        uint32_t cp = uni_next((const unsigned char *)w + i, len - i, &cl);
        int id = cp == UNI_INVALID ? -1 : hf_smap_get(t, w + i, cl), all_bytes = t->byte_fallback;
        for (size_t k = 0; id < 0 && all_bytes && k < cl; k++) all_bytes = t->byte_id[(unsigned char)w[i + k]] >= 0;
        if (id >= 0 || all_bytes) {
            for (size_t k = 0; k < (id >= 0 ? 1 : cl); k++)
                if (add_sym(c, n, id >= 0 ? id : t->byte_id[(unsigned char)w[i + k]])) return -1;
            last_unk = 0;
        } else if (t->unk_id < 0) {
            return cp == UNI_INVALID ? err_set(c->e, "%s: byte 0x%02X has no token and there is no unk_token", t->path, (unsigned char)w[i])
                                     : err_set(c->e, "%s: character U+%04X has no token and there is no unk_token", t->path, cp);
        } else if (!(last_unk && t->fuse_unk)) {
            if (add_sym(c, n, t->unk_id)) return -1;
            last_unk = 1;
        }
        i += cl;
    }
    return 0;
}

static int bytelevel_symbols(Enc *c, const char *w, size_t len, int *n) {
    for (size_t i = 0; i < len; i++) {
        int id = c->t->byte_id[(unsigned char)w[i]];
        if (id < 0) id = c->t->unk_id;
        if (id < 0) return err_set(c->e, "%s: byte 0x%02X has no token in the byte-level vocabulary", c->t->path, (unsigned char)w[i]);
        if (add_sym(c, n, id)) return -1;
    }
    return 0;
}

/* The id of the whole word as one vocabulary entry, or -1 (ignore_merges). */
static int whole_word(Enc *c, const char *w, size_t len) {
    if (!c->t->byte_level) return hf_smap_get(c->t, w, len);
    if (len > HFTOK_MAX_PIECE || grow(&c->buf, &c->buf_cap, 2 * len, 1)) return -1;
    size_t k = 0;
    for (size_t i = 0; i < len; i++) k += uni_put(hf_byte_char((unsigned char)w[i]), c->buf + k);
    return hf_smap_get(c->t, c->buf, k);
}

static int bpe_word(Enc *c, const char *w, size_t len) {
    if (len == 0) return 0;
    int r = cache_emit(c, w, len), from = c->n, n = 0;
    if (r) return r < 0 ? -1 : 0;
    int whole = c->t->ignore_merges ? whole_word(c, w, len) : -1;
    if (whole >= 0) r = emit(c, whole);
    else if ((r = c->t->byte_level ? bytelevel_symbols(c, w, len, &n) : sp_symbols(c, w, len, &n)) == 0 && n > 0)
        r = merge_and_emit(c, n);
    if (r == 0) cache_put(c, w, len, from);
    return r;
}

/* ---- segments ----------------------------------------------------------- */

#define SP_SPACE "\xe2\x96\x81"

/* Metaspace / Prepend + Replace: spaces to '▁', the dummy prefix, into c->buf. */
static int sp_normalize(Enc *c, const char *s, size_t n, int first, size_t *out_n) {
    const HfTok *t = c->t;
    if (grow(&c->buf, &c->buf_cap, 3 * n + 3, 1)) return oom(c);
    int starts_sp = s[0] == ' ' || (n >= 3 && memcmp(s, SP_SPACE, 3) == 0);
    int prefix = t->sp_prefix == HF_PREFIX_ALWAYS || (t->sp_prefix == HF_PREFIX_FIRST && first);
    size_t k = 0;
    if (prefix && !(t->sp_prefix_if_missing && starts_sp)) memcpy(c->buf, SP_SPACE, 3), k = 3;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ' && t->sp_replace) memcpy(c->buf + k, SP_SPACE, 3), k += 3;
        else c->buf[k++] = s[i];
    }
    *out_n = k;
    return 0;
}

static int split_and_encode(Enc *c, const char *s, size_t n) {
    const HfTok *t = c->t;
    for (size_t i = 0, j; i < n; i = j) {
        if (t->byte_level) j = hf_pretok_next(t->pattern, (const unsigned char *)s, n, i);
        else if (!t->sp_split) j = n;
        else /* Metaspace split: each piece runs up to the next '▁' */
            for (j = i + 1; j < n && !(j + 3 <= n && memcmp(s + j, SP_SPACE, 3) == 0); j++) {}
        if (bpe_word(c, s + i, j - i)) return -1;
    }
    return 0;
}

/* Encode a stretch of text that holds no added token. `first`: it starts the
 * input (Metaspace's prepend_scheme "first"). */
static int encode_segment(Enc *c, const char *s, size_t n, int first) {
    const HfTok *t = c->t;
    if (n == 0) return 0;
    char *nfc = NULL;
    if (t->nfc) {
        if (uni_nfc(s, n, &nfc, &n)) return oom(c);
        s = nfc;
    }
    int r = 0;
    if (!t->byte_level && (t->sp_replace || t->sp_prefix)) {
        size_t m = 0;
        if ((r = sp_normalize(c, s, n, first, &m)) == 0) {
            /* c->buf is also whole_word's scratch: keep the segment apart */
            char *own = c->buf;
            c->buf = NULL, c->buf_cap = 0;
            r = split_and_encode(c, own, m);
            free(own);
        }
    } else if (t->byte_level && t->bl_prefix_space && s[0] != ' ') {
        char *tmp = malloc(n + 1);
        if (!tmp) r = oom(c);
        else {
            tmp[0] = ' ';
            memcpy(tmp + 1, s, n);
            r = split_and_encode(c, tmp, n + 1);
            free(tmp);
        }
    } else {
        r = split_and_encode(c, s, n);
    }
    free(nfc);
    return r;
}

/* ---- added tokens ----------------------------------------------------------- */

static int is_word_char(const unsigned char *s, size_t n, size_t i) {
    size_t l;
    uint32_t cp = uni_next(s + i, n - i, &l);
    return cp == '_' || (cp != UNI_INVALID && (uni_is_letter(cp) || uni_is_number(cp)));
}

/* Start of the character that ends just before i. */
static size_t char_before(const unsigned char *s, size_t i) {
    size_t k = i - 1;
    while (k > 0 && i - k < 4 && (s[k] & 0xC0) == 0x80) k--;
    return k;
}

static const HfAdded *match_added(const HfTok *t, const unsigned char *s, size_t n, size_t p, int special) {
    for (int k = t->added_at[s[p]]; k < t->added_at[s[p] + 1]; k++) {
        const HfAdded *a = &t->added[k];
        if ((a->special && !special) || a->len > n - p || memcmp(s + p, t->pool + a->off, a->len) != 0) continue;
        if (a->single_word && ((p > 0 && is_word_char(s, n, char_before(s, p))) || (p + a->len < n && is_word_char(s, n, p + a->len))))
            continue;
        return a;
    }
    return NULL;
}

static int is_space_at(const unsigned char *s, size_t n, size_t i, size_t *len) {
    uint32_t cp = uni_next(s + i, n - i, len);
    return cp != UNI_INVALID && uni_is_space(cp);
}

static int encode_text(Enc *c, const char *text, size_t len, int special) {
    const unsigned char *s = (const unsigned char *)text;
    size_t seg = 0;
    for (size_t p = 0; p < len && c->t->n_added;) {
        const HfAdded *a = match_added(c->t, s, len, p, special);
        if (!a) {
            p++;
            continue;
        }
        size_t start = p, end = p + a->len, l;
        /* lstrip / rstrip: the token swallows the whitespace next to it */
        while (a->lstrip && start > seg && is_space_at(s, len, char_before(s, start), &l) && char_before(s, start) + l == start)
            start = char_before(s, start);
        while (a->rstrip && end < len && is_space_at(s, len, end, &l)) end += l;
        if (encode_segment(c, text + seg, start - seg, seg == 0) || emit(c, a->id)) return -1;
        seg = p = end;
    }
    return encode_segment(c, text + seg, len - seg, seg == 0);
}

int hftok_encode(const HfTok *t, const char *text, size_t len, int flags, int *ids, int cap, int *n, Err *e) {
    Enc c = {.t = t, .ids = ids, .cap = cap < 0 ? 0 : cap, .e = e};
    int r = 0;
    if ((flags & HFTOK_BOS) && t->bos_id >= 0) r = emit(&c, t->bos_id);
    if (!r) r = encode_text(&c, text, len, flags & HFTOK_SPECIAL);
    if (!r && (flags & HFTOK_EOS) && t->eos_id >= 0) r = emit(&c, t->eos_id);
    free(c.sym);
    bpeheap_free(&c.heap);
    free(c.buf);
    free(c.cache);
    free(c.cwords);
    free(c.cids);
    *n = r ? 0 : c.n;
    return r;
}
