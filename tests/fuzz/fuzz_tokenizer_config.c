/* fuzz_tokenizer_config.c — libFuzzer harness: tokenizer_config.json and generation_config.json.
 *
 * Tokenizer_config.json and generation_config.json
 * (hftok_load_config) read over the fixed gpt2 tokenizer.json fixture
 * (FUZZ_FIXTURES); whatever BOS and EOS they set must be ids of it. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/tokenize/tokenize.h"
#include "fuzz.h"

#ifndef FUZZ_FIXTURES
#define FUZZ_FIXTURES "tests/fixtures/hftok"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static HfTok *tok; /* loaded once; BOS and EOS are reset before each input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Err e;
    if (!tok && hftok_load(&tok, FUZZ_FIXTURES "/gpt2.json", &e) != 0) {
        fprintf(stderr, "fuzz_tokenizer_config: %s\n", e.msg);
        abort();
    }
    if (hftok_set_bos_eos(tok, -1, -1, &e) != 0) abort();
    if (hftok_load_config(tok, fuzz_write("tokenizer_config.json", data, size), &e) == 0) {
        int n = hftok_vocab_size(tok), bos = hftok_bos(tok), eos = hftok_eos(tok);
        if (bos < -1 || bos >= n || eos < -1 || eos >= n) abort();
    }
    return 0;
}
