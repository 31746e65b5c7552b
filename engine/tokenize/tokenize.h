/* tokenize.h — the tokenize room's one public header: text to token ids
 * and back, for the rest of the tree.
 *
 * Four parts, each introduced by its own contract below:
 *  - Tokenizer and tok_*: the calls the engine and the app make, over a
 *    llama2.c tokenizer.bin or a Hugging Face tokenizer.json alike;
 *  - HfTok and hftok_*: tokenizer.json itself (inspection, decoding whole
 *    sequences, generating one for random-weight models);
 *  - Chat and chat_*: wrapping a prompt in a model family's chat format;
 *  - uni_next and uni_sanitize: the UTF-8 stepping that printing a piece
 *    needs outside the room.
 * Everything else the room's files share lives in its internal headers
 * (hftok_impl.h, unicode.h, bpeheap.h), which no other room includes; only
 * the white-box tests of tests/test_hftok.c reach into them.
 */
#ifndef AHASCOPE_TOKENIZE_H
#define AHASCOPE_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/err.h"

/* Tokenizer — llama2.c `tokenizer.bin` vocabularies (SentencePiece-style).
 *
 * File format (little-endian): int32 max_token_length, then per token:
 * float32 score, int32 len, len bytes (not NUL-terminated).
 * Encoding is llama2.c's: optional BOS (id 1, or a GGUF's own), a dummy-prefix
 * space when the text is non-empty, UTF-8 code points looked up whole, unknown
 * code points spelled as <0xXX> byte tokens (the unknown token where a byte
 * has none), then greedy merges of the
 * adjacent pair whose merged string has the highest score (the leftmost
 * among equal scores; scores at or below -1e30 never merge). The merges run
 * over a heap of candidate pairs: O(n log n) in the text's length.
 */

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
    int bos_id, eos_id;  /* llama2.c vocabularies: TOK_BOS/TOK_EOS, or a GGUF's own (-1: none) */
    int add_bos;         /* whether tok_encode's bos adds BOS (a GGUF's add_bos_token; else 1) */
    int unk_id;          /* what a byte with no <0xNN> piece becomes */
    int byte_id[256];    /* id of each byte's <0xNN> piece, -1 if none */
    unsigned char *unmerged; /* GGUF: 1 for control and unused pieces, which no merge makes (NULL: none) */
} Tokenizer;

/* Load a tokenizer.bin. vocab_size > 0 reads exactly that many tokens (the
 * model's vocabulary size, as llama2.c does); vocab_size <= 0 reads tokens
 * until end of file. Every length is checked against the file; errors name
 * the file. Returns 0 on success. */
int tok_load(Tokenizer *t, const char *path, int vocab_size, Err *e);

/* A llama2.c-style vocabulary from n NUL-terminated pieces and their merge
 * scores (copied), as a container other than tokenizer.bin holds them
 * (GGUF, tok_load_gguf); name is used in messages. Returns 0 on success. */
int tok_load_pieces(Tokenizer *t, const char *name, int n, const char *const *pieces, const float *scores, Err *e);

/* The tokenizer in a GGUF file's metadata. tokenizer.ggml.model "llama":
 * tokens and scores as a llama2.c vocabulary (U+2581 read as a space), BOS,
 * EOS, unknown ids and add_bos_token from the file, control and unused
 * pieces never produced by a merge. "gpt2": tokens, merges and token types
 * as a byte-level HfTok (control = special added token, user-defined =
 * added token), split by the regex tokenizer.ggml.pre names (llama.cpp's
 * names; unknown ones refused). vocab_size > 0 must equal the token count.
 * Errors are one line naming the file. Returns 0 on success. */
int tok_load_gguf(Tokenizer *t, const char *path, int vocab_size, Err *e);

/* A GGUF file's tokenizer.chat_template, malloc'd; NULL if it has none or
 * is no readable GGUF. */
char *tok_gguf_chat_template(const char *path);

/* Release everything tok_load allocated (safe on a zeroed struct). */
void tok_free(Tokenizer *t);

/* Encode len bytes of text (any bytes: invalid UTF-8 goes through byte
 * fallback). bos/eos add those tokens. Writes at most max_ids ids to ids and
 * the count to *n_ids; needs max_ids >= len + 3. Returns 0 on success. */
int tok_encode(const Tokenizer *t, const char *text, size_t len, int bos, int eos,
               int *ids, int max_ids, int *n_ids, Err *e);

/* The raw bytes of token `token` as it appears in text after `prev`: the
 * leading space is stripped right after BOS, <0xXX> pieces become the one
 * raw byte, and a GGUF's control and unused pieces (<s>, </s>) are no text. *out_len receives the length (may be 1 byte that is not valid
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

/* HfTok — Hugging Face `tokenizer.json` BPE tokenizers.
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

/* Chat — wrapping a prompt in a model family's chat format.
 *
 * Instruction-tuned models expect the user's text inside their chat
 * template, with the assistant's turn opened so that generation continues as
 * the assistant. This renders what the model's Jinja chat_template renders
 * for one user message with add_generation_prompt, for three families:
 *
 *   Tulu (OLMo-2 instruct, AHA-OLMO2):
 *     <|endoftext|><|user|>\n{prompt}\n<|assistant|>\n
 *   Llama-3 (Llama-3.1/3.2 add a system turn with knowledge and fixed date):
 *     <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{prompt}
 *     <|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n
 *   ChatML (Qwen2/2.5/3; Qwen2 and 2.5 add a default system turn):
 *     <|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n
 *   Gemma (Gemma 2 and 3; the prompt trimmed):
 *     <bos><start_of_turn>user\n{prompt}<end_of_turn>\n<start_of_turn>model\n
 *   Mistral, tight (Mistral v3 / Nemo, Tekken):  <s>[INST]{prompt}[/INST]
 *   [INST], spaced (Mistral v0.1/v0.2, Llama-2): <s>[INST] {prompt} [/INST]
 *   Phi-3:
 *     <|user|>\n{prompt}<|end|>\n<|assistant|>\n
 *
 * The result is text with the special tokens spelled out: encode it with
 * HFTOK_SPECIAL, and without HFTOK_BOS when chat_has_bos() says the text
 * already starts with the BOS token.
 */

typedef enum { CHAT_NONE, CHAT_TULU, CHAT_LLAMA3, CHAT_CHATML, CHAT_GEMMA, CHAT_MISTRAL, CHAT_INST, CHAT_PHI3 } ChatFormat;

#define CHAT_SYSTEM_MAX 512

typedef struct {
    ChatFormat format;
    /* Content of the system turn the template writes when the conversation
     * has none ("" = no system turn), e.g. Qwen2's "You are a helpful
     * assistant." or Llama-3.1's "Cutting Knowledge Date: ...". */
    char system[CHAT_SYSTEM_MAX];
} Chat;

/* The chat format of a model, from its chat_template (tokenizer_config.json
 * or a GGUF's tokenizer.chat_template; NULL if none) and its model type
 * (config.json model_type or general.architecture; NULL if unknown).
 * Markers in the template win: "<|start_header_id|>" Llama-3, "<|im_start|>"
 * ChatML, "<start_of_turn>" Gemma, "[INST]" Mistral (spaced when the literal
 * is '[INST] ' as in v0.1 and Llama-2, tight otherwise), "<|end|>" with
 * "<|user|>" Phi-3, Tulu's user turn '<|user|>\n' + message['content'] + '\n'
 * (not Zephyr's, which ends in eos_token); else olmo2/faolmo/olmo are Tulu,
 * qwen2 is ChatML, anything else CHAT_NONE (a base model has no template). */
ChatFormat chat_format_for(const char *model_type, const char *chat_template);

/* chat_format_for plus the default system turn the template inserts: a
 * ChatML template's literal "<|im_start|>system\n...<|im_end|>" text, or
 * Llama-3.1's knowledge/date header (with the template's fallback date
 * "26 Jul 2024", so prompts do not change from day to day). No template
 * means no system turn. */
Chat chat_for(const char *model_type, const char *chat_template);

/* A Chat of format f without a system turn (for a format chosen by name). */
Chat chat_of(ChatFormat f);

/* The prompt wrapped in c's format as a malloc'd NUL-terminated string
 * (CHAT_NONE: a copy of prompt); NULL only when out of memory. Llama-3
 * trims whitespace around the prompt, as its template does. */
char *chat_wrap(const Chat *c, const char *prompt);

/* Short name of a format: "none", "tulu", "llama3", "chatml", "gemma",
 * "mistral", "inst", "phi3". */
const char *chat_format_name(ChatFormat f);

/* The format called name (as chat_format_name spells it, any case); 0, or
 * -1 if the name is unknown. */
int chat_format_parse(const char *name, ChatFormat *f);

/* 1 if chat_wrap's text starts with the model's BOS token spelled out
 * (Tulu's "<|endoftext|>", Llama-3's "<|begin_of_text|>", Gemma's "<bos>",
 * Mistral's "<s>"), so the encoder must not prepend another (no
 * HFTOK_BOS); 0 otherwise. */
int chat_has_bos(ChatFormat f);

/* The special token that ends the assistant's turn ("<|endoftext|>",
 * "<|eot_id|>", "<|im_end|>", "<end_of_turn>", Mistral's EOS "</s>",
 * "<|end|>"), a natural stop for generation; NULL for CHAT_NONE. */
const char *chat_end_of_turn(ChatFormat f);

/* UTF-8 stepping (implemented in unicode.c, whose header keeps the
 * character classes and NFC the tokenizers need inside the room). */

/* Returned by uni_next for a byte that does not start a valid UTF-8
 * sequence (stray continuation, overlong form, surrogate, > U+10FFFF or a
 * sequence cut short); the caller treats it as one opaque byte. */
#define UNI_INVALID 0xFFFFFFFFu

/* Decode the code point at s[0..n) (n >= 1) and store its byte length in
 * *len (1 for an invalid byte). Returns the code point or UNI_INVALID. */
uint32_t uni_next(const unsigned char *s, size_t n, size_t *len);

/* Copy s[0..n) to out as valid UTF-8: every invalid or incomplete sequence
 * becomes U+FFFD; with printable set, control characters other than '\n' and
 * '\t' are dropped too. Writes at most cap-1 bytes plus a NUL (cap >= 1) and
 * returns the length written. */
size_t uni_sanitize(const char *s, size_t n, int printable, char *out, size_t cap);

#endif
