/* test_mem.c — the huge-page buffers, and the weights a model owns living in them.
 *
 * The huge-page buffers: 2 MiB-aligned, zeroed, every byte
 * usable, released without a size, impossible sizes refused; and the
 * weights a model owns (random models, half-precision copies) live in them. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/aha.h"
#include "engine/forward.h"
#include "engine/half.h"
#include "engine/mem.h"
#include "engine/model.h"
#include "tests/test.h"
#include "tests/stories.h"

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
    CHECK_NEAR(half_bf16_to_f32(m.owned_half[0]), first, 0.01f);
    CHECK_INT(model_to_half(&m, DT_F16, &e), 0); /* replaces the bf16 block, freeing it */
    CHECK((uintptr_t)m.owned_half % TWO_MIB == 0);
    model_free(&m);
}

/* A file's bytes through each placement: the same bytes, a copy on a 2 MiB
 * boundary, and a file shorter than asked refused (no bytes invented). */
TEST(mem_view_file_holds_the_same_bytes_mapped_or_copied) {
    const char *path = test_tmp("view.bin");
    size_t n = (3 << 20) + 123;
    unsigned char *want = malloc(n);
    for (size_t i = 0; i < n; i++) want[i] = (unsigned char)(i * 131 + (i >> 12));
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(want, 1, n, f) == n);
    if (f) fclose(f);
    MemViewMode modes[] = {MEM_VIEW_MAP, MEM_VIEW_COPY, MEM_VIEW_AUTO};
    for (int k = 0; k < 3; k++) {
        int fd = open(path, O_RDONLY);
        MemView v;
        CHECK_INT(mem_view_file(&v, fd, n, modes[k]), 0);
        close(fd);
        CHECK_MSG(v.base && memcmp(v.base, want, n) == 0, "mode %d: the view's bytes differ from the file's", k);
        CHECK_INT(v.copied, modes[k] == MEM_VIEW_COPY); /* auto maps a file under 64 MiB */
        if (v.copied) CHECK((uintptr_t)v.base % TWO_MIB == 0);
        mem_view_close(&v);
        CHECK(v.base == NULL);
    }
    int fd = open(path, O_RDONLY);
    MemView v;
    CHECK_INT(mem_view_file(&v, fd, n + 4096, MEM_VIEW_COPY), -1);
    close(fd);
    mem_view_close(&v);
    free(want);
}

static float *logits_of(const char *weights_mode, int *ok) {
    setenv("AHASCOPE_WEIGHTS", weights_mode, 1);
    Model m;
    Err e = {0};
    int rc = test_load_stories(&m, NULL, &e);
    unsetenv("AHASCOPE_WEIGHTS");
    CHECK_MSG(rc == 0, "%s", e.msg);
    *ok = rc == 0;
    if (rc) return NULL;
    CHECK_INT(m.file.copied, !strcmp(weights_mode, "copy"));
    RunState s;
    float *out = NULL;
    if (fwd_init(&s, &m.c, 64, 2, &e) == 0) {
        AttnConfig a = aha_defaults();
        int toks[5] = {1, 403, 407, 261, 378};
        out = malloc(5 * 512 * sizeof(float));
        fwd_forward(&m, &s, &a, toks, 5, 0, out, NULL);
        fwd_free(&s);
    }
    model_free(&m);
    return out;
}

/* $AHASCOPE_WEIGHTS=copy reads the checkpoint into huge pages; the logits
 * are the mapped file's, bit for bit. */
TEST(mem_view_copied_weights_give_the_mapped_logits) {
    SKIP_UNLESS_SHARED();
    int ok1 = 0, ok2 = 0;
    float *a = logits_of("map", &ok1), *b = logits_of("copy", &ok2);
    if (ok1 && ok2) CHECK_MSG(a && b && memcmp(a, b, 5 * 512 * sizeof(float)) == 0, "copied weights changed the logits");
    free(a);
    free(b);
}
