/* fuzz_routers.c — libFuzzer harness: a router file for 2 layers × 2 heads × width 4.
 *
 * Router files (engine/routers.c) for a model of 2 layers,
 * 2 heads and width 4, the shape the seeds are written in. */
#include "engine/routers.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Routers r;
    Err e;
    if (router_load(&r, fuzz_write("routers.safetensors", data, size), 2, 2, 4, &e) == 0) router_free(&r);
    return 0;
}
