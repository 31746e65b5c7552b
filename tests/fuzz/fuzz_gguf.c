/* fuzz_gguf.c — libFuzzer harness: a GGUF file, from memory.
 *
 * The GGUF reader over a buffer: whatever gguf_open_buffer accepts must
 * hand out tensors and array strings inside the buffer, tensors findable by
 * name, and a first row of each widenable type that widens. */
#include <stdlib.h>
#include <string.h>

#include "engine/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const uint8_t *p, uint64_t n, const uint8_t *data, size_t size) {
    return p >= data && p <= data + size && n <= (uint64_t)(data + size - p);
}

/* The promises of gguf_open_buffer, checked on an accepted file. */
static void check_file(const GgufFile *f, const uint8_t *data, size_t size) {
    static float row[4096];
    for (int i = 0; i < f->n_tensors; i++) {
        const GgufTensor *t = &f->tensors[i];
        if (!inside(t->data, t->nbytes, data, size) || gguf_find_tensor(f, t->name) != t) abort();
        uint64_t be, bb;
        if (gguf_type_block(t->type, &be, &bb) || t->ne[0] % (int64_t)be) abort();
        Err e;
        if (t->ne[0] <= 4096 && (t->type == GGML_F32 || t->type == GGML_F16 || t->type == GGML_BF16 ||
                                 t->type == GGML_Q8_0 || t->type == GGML_Q4_0))
            if (gguf_dequant(t->type, t->data, row, t->ne[0], &e)) abort();
    }
    for (int i = 0; i < f->n_kv; i++) {
        const GgufKv *kv = &f->kv[i];
        if (gguf_find_kv(f, kv->key) != kv) abort();
        if (kv->type != GGUF_ARRAY || kv->elem != GGUF_STRING) continue;
        for (uint64_t j = 0; j < kv->count; j++) {
            uint64_t len;
            const char *s = gguf_arr_str(kv, j, &len);
            if (!s || !inside((const uint8_t *)s, len, data, size)) abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    GgufFile f;
    Err e;
    if (gguf_open_buffer(&f, data, size, "fuzz.gguf", &e) == 0) check_file(&f, data, size);
    gguf_close(&f);
    return 0;
}
