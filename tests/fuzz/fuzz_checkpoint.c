/* fuzz_checkpoint.c — libFuzzer harness: a llama2.c checkpoint (v0 or v1 "ak42").
 *
 * The llama2.c checkpoint header (v0 and v1 "ak42"):
 * the in-memory sniffer that tells files apart, and model_load on the same
 * bytes as a file (header checks, the size rule, mapping and wiring). */
#include <stdint.h>

#include "engine/files.h"
#include "engine/model.h"
#include "engine/sniff.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    model_sniff(data, size, size);
    sniff_kind_bytes(data, size < 4096 ? size : 4096, size);
    Model m;
    Err e;
    if (model_load(&m, fuzz_write("model.bin", data, size), &e) == 0) model_free(&m);
    return 0;
}
