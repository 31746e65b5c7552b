/* test_mem.c — the huge-page buffers: 2 MiB-aligned, zeroed, every byte
 * usable, released without a size, impossible sizes refused; and the
 * weights a model owns (random models, half-precision copies) live in them. */
#include <stdint.h>
#include <string.h>

#include "engine/mem.h"
#include "engine/model.h"
#include "engine/safetensors.h"
#include "tests/test.h"

#define TWO_MIB ((uintptr_t)2 << 20)

static int all_zero(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

TEST(mem_big_alloc_is_aligned_zeroed_and_writable) {
    size_t sizes[] = {0, 1, 4095, 4096, (2 << 20) - 1, 2 << 20, (3 << 20) + 5};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        unsigned char *p = mem_big_alloc(n);
        CHECK_MSG(p != NULL, "mem_big_alloc(%zu) failed", n);
        if (!p) continue;
        CHECK_MSG((uintptr_t)p % TWO_MIB == 0, "mem_big_alloc(%zu) = %p is not 2 MiB aligned", n, (void *)p);
        CHECK_MSG(all_zero(p, n), "mem_big_alloc(%zu) is not zeroed", n);
        for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31 + 7);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += p[i] != (unsigned char)(i * 31 + 7);
        CHECK_MSG(bad == 0, "%zu bytes of %zu did not keep what was written", bad, n);
        mem_big_free(p);
    }
    /* a second block after frees: the header below the block is intact */
    void *a = mem_big_alloc(100), *b = mem_big_alloc(5 << 20);
    CHECK(a && b && a != b);
    mem_big_free(b);
    mem_big_free(a);
    mem_big_free(NULL);
}

TEST(mem_big_alloc_refuses_impossible_sizes) {
    CHECK(mem_big_alloc(SIZE_MAX) == NULL);
    CHECK(mem_big_alloc(SIZE_MAX - 4096) == NULL);
    CHECK(mem_big_alloc(SIZE_MAX / 2) == NULL); /* rounds up past any address space */
}

TEST(model_owned_weights_sit_on_huge_page_boundaries) {
    Config c = {.dim = 64, .hidden_dim = 128, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 96,
                .seq_len = 32, .shared_classifier = 1};
    Model m;
    Err e = {0};
    int rc = model_random(&m, &c, 7, &e);
    CHECK_MSG(rc == 0, "model_random: %s", e.msg);
    if (rc != 0) return;
    CHECK((uintptr_t)m.owned % TWO_MIB == 0);
    float first = m.w.wq[0];
    CHECK_INT(model_to_half(&m, DT_BF16, &e), 0);
    CHECK((uintptr_t)m.owned_half % TWO_MIB == 0);
    CHECK(m.layers[0].wq.p == (const void *)m.owned_half); /* the first matrix starts the block */
    CHECK_NEAR(st_bf16_to_f32(m.owned_half[0]), first, 0.01f);
    CHECK_INT(model_to_half(&m, DT_F16, &e), 0); /* replaces the bf16 block, freeing it */
    CHECK((uintptr_t)m.owned_half % TWO_MIB == 0);
    model_free(&m);
}
