/* hftok.h — Hugging Face `tokenizer.json` BPE tokenizers.
 *
 * Two families are read:
 *  - byte-level BPE (GPT-2, Llama-3, Qwen2, OLMo-2): text bytes are spelled
 *    with GPT-2's printable alphabet (`Ġ` for space) and split into
 *    pre-tokens by the model's regex, recognised by its exact string and run
 *    by a hand-written scanner (no regex library);
 *  - SentencePiece-style BPE (Llama-2, TinyLlama): spaces become `▁`, a `▁`
 *    is prepended, characters missing from the vocabulary fall back to
 *    `<0xNN>` byte tokens.
 * Anything else (another model type, normalizer or split regex) is refused
 * at load time with a one-line error, so a loaded tokenizer never silently
 * encodes differently from the reference.
 *
 * Ids are the file's own ids; the vocabulary size is the largest id + 1.
 * A loaded HfTok is read-only: encode and decode may run concurrently.
 *
 * Where this differs from the reference `tokenizers` library, on purpose:
 *  - added tokens are matched in the raw text, also those marked
 *    "normalized" (the reference matches those after normalisation);
 *  - special added tokens are matched only with HFTOK_SPECIAL, otherwise
 *    encoded as plain text; non-special added tokens are always matched;
 *  - a character with no token (and no byte fallback or unk_token) is an
 *    error rather than silently dropped; BPE dropout is ignored;
 *  - input may be any bytes: invalid UTF-8 is kept byte by byte.
 */
#ifndef AHASCOPE_HFTOK_H
#define AHASCOPE_HFTOK_H

#include <stddef.h>

#include "err.h"

typedef struct HfTok HfTok;

/* Flags for hftok_encode. */
#define HFTOK_BOS 1     /* prepend the BOS token (if the tokenizer has one) */
#define HFTOK_EOS 2     /* append the EOS token (if the tokenizer has one) */
#define HFTOK_SPECIAL 4 /* match special added tokens (e.g. "<|im_end|>") in the text */

/* Load a tokenizer.json into a new HfTok (*out). Returns 0, or -1 with a
 * one-line error naming the file and the problem (and *out = NULL). */
int hftok_load(HfTok **out, const char *path, Err *e);

/* Release a tokenizer (NULL is fine). */
void hftok_free(HfTok *t);

/* Read BOS/EOS settings from a tokenizer_config.json (bos_token, eos_token as
 * a string or {"content": ...}, add_bos_token, add_eos_token) or config.json
 * (bos_token_id, eos_token_id, the first one if a list); keys that are absent
 * leave the current setting, null clears it. Returns 0 or -1 with an error. */
int hftok_load_config(HfTok *t, const char *path, Err *e);

/* Set the BOS and EOS ids directly (-1 = none). Returns 0, or -1 with an
 * error if an id is outside the vocabulary. */
int hftok_set_bos_eos(HfTok *t, int bos, int eos, Err *e);

/* Encode len bytes of text (any bytes: invalid UTF-8 is encoded through byte
 * fallback or the byte-level alphabet) with HFTOK_* flags. Writes at most cap
 * ids and the count to *n; cap >= 4 * len + 8 always suffices. Returns 0, or
 * -1 with an error (output too small, or a character with no token). */
int hftok_encode(const HfTok *t, const char *text, size_t len, int flags, int *ids, int cap, int *n, Err *e);

/* The raw bytes token `id` contributes to the text when it follows `prev`
 * (prev < 0 at the start): byte-level spelling and `▁` undone, `<0xNN>` as
 * its byte, the dummy-prefix space dropped at the start or after BOS. May be
 * part of a UTF-8 character; *len gets the length. Never NULL ("" for ids out
 * of range); valid until hftok_free. */
const char *hftok_decode(const HfTok *t, int prev, int id, size_t *len);

/* Like hftok_decode but safe to print on its own: valid UTF-8 (invalid or
 * incomplete sequences become U+FFFD) without control characters other than
 * '\n' and '\t'. Writes a NUL-terminated string of at most cap-1 bytes into
 * buf and returns its length. */
size_t hftok_piece_printable(const HfTok *t, int prev, int id, char *buf, size_t cap);

/* Decode ids[0..n) into one malloc'd NUL-terminated string of valid UTF-8
 * (U+FFFD for invalid sequences), skipping special tokens if skip_special.
 * *len (optional) gets its length. NULL only when out of memory. */
char *hftok_decode_ids(const HfTok *t, const int *ids, int n, int skip_special, size_t *len);

/* For a streaming printer: the length of the prefix of buf[0..n) that does
 * not end inside a UTF-8 character still waiting for its next bytes. */
size_t hftok_utf8_ready(const char *buf, size_t n);

/* Number of ids (largest id + 1). */
int hftok_vocab_size(const HfTok *t);

/* Id of a token as spelled in tokenizer.json ("Ġthe", "▁the", "<s>",
 * "<|im_end|>"), or -1. */
int hftok_lookup(const HfTok *t, const char *piece);

/* The tokenizer.json spelling of id (NUL-terminated), or NULL if the id is
 * out of range or unused. */
const char *hftok_piece(const HfTok *t, int id);

/* 1 if id is an added token marked special (BOS, EOS, chat markers...). */
int hftok_is_special(const HfTok *t, int id);

/* BOS / EOS ids, -1 if unknown. */
int hftok_bos(const HfTok *t);
int hftok_eos(const HfTok *t);

/* 1 if the tokenizer's post-processor (or add_bos_token in the config)
 * prepends BOS, i.e. the model expects HFTOK_BOS; likewise for EOS. */
int hftok_wants_bos(const HfTok *t);
int hftok_wants_eos(const HfTok *t);

/* One line describing the kind, e.g. "byte-level BPE, Llama-3 split, 128256
 * ids", for info output and tests. */
const char *hftok_describe(const HfTok *t);

/* Smallest vocabulary hftok_bytelevel_json can fill: 256 bytes + its special. */
#define HFTOK_GEN_MIN_VOCAB 257

/* A generated GPT-2-style byte-level BPE tokenizer.json of exactly n_vocab
 * ids (for random-weight models, which have no tokenizer of their own):
 * ids 0-255 are the bytes, then merges that build letter runs ("Ġa",
 * "ab", "Ġab", ...), and id n_vocab - 1 is "<|endoftext|>", which a
 * post-processor prepends as BOS. Returns malloc'd JSON text, or NULL with
 * e set (n_vocab below HFTOK_GEN_MIN_VOCAB, or out of memory). */
char *hftok_bytelevel_json(int n_vocab, Err *e);

#endif
