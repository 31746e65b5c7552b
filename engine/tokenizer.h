/* tokenizer.h — llama2.c `tokenizer.bin` vocabularies (SentencePiece-style).
 *
 * File format (little-endian): int32 max_token_length, then per token:
 * float32 score, int32 len, len bytes (not NUL-terminated).
 * Encoding is llama2.c's: optional BOS (id 1), a dummy-prefix space when the
 * text is non-empty, UTF-8 code points looked up whole, unknown code points
 * spelled as <0xXX> byte tokens (id = byte + 3), then greedy merges of the
 * adjacent pair whose merged string has the highest score (the leftmost
 * among equal scores; scores at or below -1e30 never merge). The merges run
 * over a heap of candidate pairs: O(n log n) in the text's length.
 */
#ifndef AHASCOPE_TOKENIZER_H
#define AHASCOPE_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TOK_BOS 1
#define TOK_EOS 2

typedef struct {
    char *str;   /* NUL-terminated token text */
    int id;
} TokIndex;

typedef struct {
    int vocab_size;
    int max_token_length;
    char **vocab;        /* vocab_size NUL-terminated strings */
    int *vocab_len;      /* byte length of each (pieces may contain no NUL) */
    float *scores;       /* merge scores */
    TokIndex *sorted;    /* vocab sorted by string */
    int *hash;           /* open-addressed string -> id table over vocab (-1: empty), for lookup */
    size_t hash_mask;    /* its size minus 1 (a power of 2) */
    char byte_text[256][2]; /* decoded text of the <0xXX> pieces */
    char path[512];      /* file it came from, for messages */
    struct HfTok *hf;    /* a tokenizer.json (tok_load_hf): every call goes to it */
    int special;         /* HF: match special tokens spelled in the text (--chat) */
    int text_has_bos;    /* HF: the text spells BOS itself (a chat format): never prepend it */
    int has_stop, stop;  /* a stop id set apart from the default (a chat format's end of turn) */
} Tokenizer;

/* Load a tokenizer.bin. vocab_size > 0 reads exactly that many tokens (the
 * model's vocabulary size, as llama2.c does); vocab_size <= 0 reads tokens
 * until end of file. Every length is checked against the file; errors name
 * the file. Returns 0 on success. */
int tok_load(Tokenizer *t, const char *path, int vocab_size, Err *e);

/* Release everything tok_load allocated (safe on a zeroed struct). */
void tok_free(Tokenizer *t);

/* Encode len bytes of text (any bytes: invalid UTF-8 goes through byte
 * fallback). bos/eos add those tokens. Writes at most max_ids ids to ids and
 * the count to *n_ids; needs max_ids >= len + 3. Returns 0 on success. */
int tok_encode(const Tokenizer *t, const char *text, size_t len, int bos, int eos,
               int *ids, int max_ids, int *n_ids, Err *e);

/* The raw bytes of token `token` as it appears in text after `prev`: the
 * leading space is stripped right after BOS, and <0xXX> pieces become the one
 * raw byte. *out_len receives the length (may be 1 byte that is not valid
 * UTF-8 by itself). Returns a pointer valid until tok_free; never NULL
 * (empty string for ids out of range). */
const char *tok_decode(const Tokenizer *t, int prev, int token, size_t *out_len);

/* Like tok_decode but safe to print to a terminal: control bytes other than
 * '\n' and '\t' are dropped. Writes a NUL-terminated string of at most cap-1
 * bytes into buf and returns its length. */
size_t tok_piece_printable(const Tokenizer *t, int prev, int token, char *buf, size_t cap);

/* Id of an exact token string, or -1. */
int tok_lookup(const Tokenizer *t, const char *str);

/* Load a Hugging Face tokenizer.json behind the same calls, with BOS/EOS
 * from model_dir's tokenizer_config.json and generation_config.json when
 * present. Refused if it has more ids than the model's vocab_size. */
int tok_load_hf(Tokenizer *t, const char *path, const char *model_dir, int vocab_size, Err *e);

/* The id that ends generation: BOS for llama2.c vocabularies (llama2.c's
 * rule), the model's EOS for tokenizer.json ones (-1: none). */
int tok_stop_id(const Tokenizer *t);

#endif
