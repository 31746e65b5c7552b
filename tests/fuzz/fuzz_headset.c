/* fuzz_headset.c — libFuzzer harness: a DuoAttention head table (`full_attention_heads.tsv`).
 *
 * DuoAttention head tables (engine/headset.c): the parser
 * over any bytes, and what it promises about a table it accepts: a shape
 * within the bounds, every value in [0, 1], and a budget cut of it that
 * takes exactly the heads the budget says. */
#include <stdlib.h>

#include "engine/headset.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    HeadTable t;
    Err e;
    if (headset_table_parse((const char *)data, size, &t, &e)) return 0;
    if (t.n_layers < 1 || t.n_layers > HEADSET_MAX_LAYERS || t.n_kv < 1 || t.n_kv > HEADSET_MAX_KV) abort();
    for (size_t i = 0; i < (size_t)t.n_layers * t.n_kv; i++)
        if (!(t.values[i] >= 0 && t.values[i] <= 1)) abort();
    HeadPick pick = {0, {size % 101, 1}, 0};
    uint8_t *m = NULL;
    int n_heads = 2 * t.n_kv, n = t.n_layers * n_heads, k = 0;
    if (headset_from_table(&t, n_heads, &pick, &m, &e)) abort();
    for (int c = 0; c < n; c++) k += m[c];
    if (k != headset_budget_count(&pick.budget, n)) abort();
    free(m);
    headset_table_free(&t);
    return 0;
}
