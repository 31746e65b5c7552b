/* fuzz_tokenizer_json.c — libFuzzer harness: a Hugging Face `tokenizer.json`.
 *
 * A Hugging Face tokenizer.json
 * (engine/tokenize/hftok_load.c); a tokenizer that loads must encode and
 * decode a fixed text with ids inside its vocabulary. */
#include <stdlib.h>

#include "engine/tokenize/tokenize.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(const HfTok *t) {
    static const char text[] = "Hello  wörld<|endoftext|> 12345 \xff\t\n";
    int ids[4 * sizeof text + 8], n = 0;
    Err e;
    hftok_describe(t);
    if (hftok_encode(t, text, sizeof text - 1, HFTOK_BOS | HFTOK_EOS | HFTOK_SPECIAL, ids,
                     (int)(sizeof ids / sizeof *ids), &n, &e) != 0)
        return;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= hftok_vocab_size(t)) abort();
    free(hftok_decode_ids(t, ids, n, 0, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    HfTok *t;
    Err e;
    if (hftok_load(&t, fuzz_write("tokenizer.json", data, size), &e) == 0) {
        exercise(t);
        hftok_free(t);
    }
    return 0;
}
