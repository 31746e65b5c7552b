/* fuzz_config.c — a Hugging Face folder's config.json (engine/model_hf.c):
 * the bytes become DIR/config.json of a folder with no weights, so every
 * input ends at the config checks or at the missing model.safetensors. */
#include <sys/stat.h>

#include "engine/model.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mkdir(fuzz_path("hf"), 0700);
    fuzz_write("hf/config.json", data, size);
    Model m;
    Err e;
    if (model_load_hf(&m, fuzz_path("hf"), 0, &e) == 0) model_free(&m);
    return 0;
}
