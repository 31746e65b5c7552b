/* fuzz_safetensors.c — libFuzzer harness: a safetensors file, from memory.
 *
 * The safetensors header validator over a buffer:
 * whatever st_open_buffer accepts must hand out tensors inside the buffer
 * whose byte counts match their shapes, findable by name. */
#include <stdlib.h>
#include <string.h>

#include "engine/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The promises of st_open_buffer, checked on an accepted file. */
static void check_tensors(const StFile *f, const uint8_t *data, size_t size) {
    for (int i = 0; i < st_count(f); i++) {
        const StTensor *t = st_tensor(f, i);
        const uint8_t *p = t->data;
        if (t->nbytes && (p < data || p > data + size || t->nbytes > (size_t)(data + size - p))) abort();
        if (st_find(f, t->name) != t) abort();
        Err e;
        st_expect(f, t->name, t->dtype, t->ndim, t->shape, &e);
    }
    for (int i = 0; i < st_meta_count(f); i++)
        if (!st_meta(f, st_meta_key(f, i))) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    StFile f;
    Err e;
    if (st_open_buffer(&f, data, size, "fuzz.safetensors", &e) == 0) check_tensors(&f, data, size);
    st_close(&f);
    return 0;
}
