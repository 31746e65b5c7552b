/* fuzz_encode.c — libFuzzer harness: a prompt, its first byte picking the vocabulary and the flags.
 *
 * The prompt encoder on any text, with fixed small
 * vocabularies of both kinds: the llama2.c one of fuzz.h, and the byte-level
 * (gpt2) and SentencePiece (llama2) tokenizer.json fixtures of
 * tests/fixtures/hftok (FUZZ_FIXTURES names that folder at build time).
 *
 * The first byte picks the vocabulary and the flags, the rest is the text.
 * Every id must be inside the vocabulary, and the llama2.c encoding must
 * decode back to the text exactly (byte fallback loses nothing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tokenize/tokenize.h"
#include "fuzz.h"

#ifndef FUZZ_FIXTURES
#define FUZZ_FIXTURES "tests/fixtures/hftok"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { N_TOK = 3 };
static Tokenizer toks[N_TOK]; /* loaded once, read-only afterwards but for .special */

static void load_all(void) {
    size_t n;
    uint8_t *bin = fuzz_tokenizer_bin(&n);
    Err e;
    int bad = tok_load(&toks[0], fuzz_write("tokenizer.bin", bin, n), 0, &e);
    free(bin);
    if (!bad) bad = tok_load_hf(&toks[1], FUZZ_FIXTURES "/gpt2.json", NULL, 0, &e);
    if (!bad) bad = tok_load_hf(&toks[2], FUZZ_FIXTURES "/llama2.json", NULL, 0, &e);
    if (bad) { fprintf(stderr, "fuzz_encode: %s\n", e.msg); abort(); }
}

/* The llama2.c encoding with BOS decodes to the text itself. */
static void check_round_trip(const Tokenizer *t, const int *ids, int n, const char *text, size_t len) {
    char *out = malloc(len * 4 + 16);
    size_t at = 0;
    for (int i = 1; i < n; i++) {
        size_t piece;
        const char *p = tok_decode(t, ids[i - 1], ids[i], &piece);
        if (at + piece > len) abort();
        memcpy(out + at, p, piece);
        at += piece;
    }
    if (at != len || memcmp(out, text, len) != 0) abort();
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!toks[0].vocab_size) load_all();
    if (size < 1) return 0;
    Tokenizer *t = &toks[data[0] % N_TOK];
    int bos = (data[0] >> 2) & 1, eos = (data[0] >> 3) & 1;
    t->special = (data[0] >> 4) & 1;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int cap = (int)(4 * len + 8), n = 0;
    int *ids = malloc((size_t)cap * sizeof *ids);
    Err e;
    int rc = tok_encode(t, text, len, bos, eos, ids, cap, &n, &e);
    for (int i = 0; rc == 0 && i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->vocab_size) abort();
    if (rc == 0 && t == &toks[0] && bos && !eos) check_round_trip(t, ids, n, text, len);
    if (rc != 0 && t == &toks[0]) abort(); /* byte fallback encodes anything */
    free(ids);
    return 0;
}
