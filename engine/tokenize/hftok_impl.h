/* hftok_impl.h — internal to engine/tokenize/: what the hftok_*.c files share
 * (no other room includes it; tests/test_hftok.c tests the split regexes).
 *
 * All token strings live in one pool addressed by offsets, so the pool can
 * grow while loading; nothing points into it until loading is done.
 */
#ifndef AHASCOPE_HFTOK_IMPL_H
#define AHASCOPE_HFTOK_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "tokenize.h"

#define HFTOK_MAX_FILE (1L << 30)   /* real tokenizer.json files are < 50 MB */
#define HFTOK_MAX_VOCAB (1 << 24)   /* ids above this are treated as corrupt */
#define HFTOK_MAX_PIECE (1 << 16)   /* bytes in one token string */

enum { HF_PAT_NONE, HF_PAT_GPT2, HF_PAT_CL100K, HF_PAT_QWEN2 };
enum { HF_PREFIX_NONE, HF_PREFIX_ALWAYS, HF_PREFIX_FIRST };

#define HF_TOK_USED 1
#define HF_TOK_ADDED 2
#define HF_TOK_SPECIAL 4
#define HF_TOK_BYTE 8 /* a <0xNN> byte-fallback token */

/* How decoding drops SentencePiece's dummy prefix at the start of a text:
 * the Strip decoder removes one space from the joined text; the Metaspace
 * decoder turns no '▁' of the first token into a space. */
enum { HF_STRIP_NONE, HF_STRIP_ONE, HF_STRIP_FIRST_TOKEN };

typedef struct {
    uint64_t key; /* left id << 32 | right id; UINT64_MAX = empty slot */
    int32_t rank, id;
} HfPairEnt;

typedef struct {
    uint32_t off, len;
    int32_t id; /* -1 = empty slot */
} HfStrEnt;

typedef struct {
    uint32_t off, len; /* content, in the pool */
    int id;
    unsigned char special, lstrip, rstrip, single_word;
    unsigned char first; /* its first byte, the sort key */
    int seq;             /* its place in added_tokens: a repeated entry keeps its order */
} HfAdded;

struct HfTok {
    char path[512];
    char desc[160];
    int n_vocab;
    char *pool;
    size_t pool_len, pool_cap;
    uint32_t *form_off, *form_len; /* spelling in tokenizer.json */
    uint32_t *text_off, *text_len; /* raw bytes it decodes to */
    unsigned char *flags;          /* HF_TOK_* */
    HfStrEnt *smap;                /* spelling -> id */
    size_t smap_cap;
    HfPairEnt *pmap;               /* (left, right) -> (rank, merged id) */
    size_t pmap_cap, n_merges;
    int byte_id[256];              /* token of each lone byte, -1 if none */
    HfAdded *added;                /* sorted by first byte, longest first */
    int n_added;
    int added_at[257];             /* added[added_at[b] .. added_at[b+1]) start with byte b */
    /* pipeline settings, from normalizer / pre_tokenizer / model / decoder */
    int byte_level, pattern, bl_prefix_space, nfc;
    int sp_replace, sp_prefix, sp_prefix_if_missing, sp_split;
    int byte_fallback, fuse_unk, ignore_merges, unk_id;
    int bos_id, eos_id, add_bos, add_eos, strip_lead; /* HF_STRIP_* */
};

/* Append n bytes (+ NUL) to the pool; *off receives their offset. */
int hf_pool_add(HfTok *t, const char *s, size_t n, uint32_t *off);
/* Insert spelling pool[off..off+len) -> id. Returns -1 if added, else the id
 * already mapped to that spelling (nothing changes); -2 when out of memory. */
int hf_smap_put(HfTok *t, uint32_t off, uint32_t len, int id);
/* Id of spelling s[0..n), or -1. */
int hf_smap_get(const HfTok *t, const char *s, size_t n);
/* Set (left, right) -> (rank, id); a repeated pair takes the later rank, as
 * the reference implementation does. Returns 0, or -1 when out of memory. */
int hf_pmap_put(HfTok *t, int left, int right, int rank, int id);
/* The merge of (left, right), or NULL. */
const HfPairEnt *hf_pmap_get(const HfTok *t, int left, int right);
/* Allocate both hash tables for about n_strings spellings and n_pairs merges. */
int hf_maps_init(HfTok *t, size_t n_strings, size_t n_pairs);

/* A byte-level BPE vocabulary given as arrays rather than tokenizer.json
 * (a GGUF file's tokenizer.ggml.*): ids are array indices. */
enum { HF_ARR_NORMAL, HF_ARR_SPECIAL, HF_ARR_ADDED }; /* a token's kind */

typedef struct {
    const char *name;                  /* for messages (the file it came from) */
    int n;                             /* tokens: id i is tokens[i] */
    const char *const *tokens;         /* NUL-terminated byte-level spellings */
    const unsigned char *kind;         /* HF_ARR_* per token; NULL: all normal */
    int n_merges;
    const char *const *merges;         /* "left right", highest priority first */
    int pattern, nfc, ignore_merges;   /* the split (HF_PAT_*), NFC normaliser, ignore_merges */
    int bos, eos, add_bos, add_eos;    /* ids (-1: none) and whether encoding adds them */
} HfArrays;

/* The tokenizer the arrays describe, built by the very steps that load
 * tokenizer.json's vocab, added_tokens and merges (so both share one BPE).
 * Returns 0, or -1 with a one-line error naming a->name (and *out = NULL). */
int hftok_load_arrays(HfTok **out, const HfArrays *a, Err *e);

/* GPT-2's byte <-> printable code point alphabet. */
uint32_t hf_byte_char(unsigned char b);
/* The byte spelled by cp in that alphabet, or -1. */
int hf_char_byte(uint32_t cp);

/* The HF_PAT_* of a Split regex string, or -1 if it is not a known one. */
int hf_pattern_of(const char *regex);
/* Name of a pattern for messages ("GPT-2", ...). */
const char *hf_pattern_name(int pattern);
/* End of the pre-token that starts at s[i] (i < n) under pattern. */
size_t hf_pretok_next(int pattern, const unsigned char *s, size_t n, size_t i);


#endif
