/* fuzz_tokenizer_bin.c — libFuzzer harness: a llama2.c `tokenizer.bin`.
 *
 * The llama2.c tokenizer.bin reader: the sniffer on
 * the bytes, then tok_load on them as a file; a vocabulary that loads must
 * encode and decode a fixed text without going out of its ids. */
#include <stdlib.h>
#include <string.h>

#include "engine/sniff.h"
#include "engine/tokenize/tokenize.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encode a text that needs merges and byte fallback, and decode every id. */
static void exercise(const Tokenizer *t) {
    static const char text[] = "the thé \xff\xfe abab\n";
    int ids[sizeof text + 3], n = 0;
    Err e;
    if (tok_encode(t, text, sizeof text - 1, 1, 1, ids, (int)(sizeof ids / sizeof *ids), &n, &e) != 0) return;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->vocab_size) abort();
        size_t len;
        char buf[64];
        tok_decode(t, i ? ids[i - 1] : -1, ids[i], &len);
        tok_piece_printable(t, i ? ids[i - 1] : -1, ids[i], buf, sizeof buf);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sniff_tokenizer_bin(data, size, size);
    Tokenizer t;
    Err e;
    if (tok_load(&t, fuzz_write("tokenizer.bin", data, size), 0, &e) == 0) {
        exercise(&t);
        tok_free(&t);
    }
    return 0;
}
