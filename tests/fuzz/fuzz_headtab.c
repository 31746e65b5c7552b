/* fuzz_headtab.c — libFuzzer harness: the published head tables (Retrieval-Head JSON, PruLong, MoA, windows).
 *
 * The first byte picks the reader of engine/headtab.c, the rest is the
 * file, read against a 3-layer model of 4 query heads over 2 KV heads. What
 * each promises about a table it accepts: every score finite, every span's
 * alpha within its bound and beta in [0, 1], a window at any position
 * between 1 and the keys there are, and a span table's scores finite. */
#include <math.h>
#include <stdlib.h>

#include "engine/headtab.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_spans(const HeadSpans *s) {
    int n = s->n_layers * s->n_heads;
    HeadTable t;
    Err e;
    for (int c = 0; c < n; c++) {
        const float *ab = s->ab + 2 * c;
        if (!(fabsf(ab[0]) <= HEADTAB_MAX_ALPHA * 1.0001f) || !(ab[1] >= 0 && ab[1] <= 1)) abort();
        for (int t0 = 0; t0 < 3000; t0 += 997) {
            int w = headtab_window_at(ab, t0);
            if (w < 1 || w > t0 + 1) abort();
        }
    }
    if (headtab_spans_scores(s, 4096, &t, &e)) return;
    for (int c = 0; c < n; c++)
        if (!isfinite(t.values[c])) abort();
    headset_table_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const HeadShape shape = {3, 4, 2, 4096};
    const char *path = fuzz_write("table", data + 1, size - 1);
    HeadTable t = {0};
    HeadSpans s = {0};
    Err e;
    switch (data[0] % 4) {
    case 0:
        if (headtab_read_retrieval(path, &shape, &t, &e) == 0)
            for (int c = 0; c < 12; c++)
                if (!isfinite(t.values[c])) abort();
        break;
    case 1:
        if (headtab_read_prulong(path, &shape, &t, &e) == 0 && t.n_kv != 2 && t.n_kv != 4) abort();
        break;
    case 2:
        if (headtab_read_moa(path, &shape, &s, &e) == 0) check_spans(&s);
        break;
    default:
        if (headtab_read_windows(path, &shape, &s, &e) == 0) check_spans(&s);
        break;
    }
    headset_table_free(&t);
    headtab_spans_free(&s);
    return 0;
}
