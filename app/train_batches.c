/* train_batches.c — the items of a `train --by-length` step (see train_batches.h). */
#include "app/train_batches.h"

#include <stdlib.h>

/* A 64-bit mix (splitmix64's finaliser): the tie-breaks and the draws. */
static uint64_t mix(uint64_t x) {
    x ^= x >> 30, x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27, x *= 0x94D049BB133111EBull;
    return x ^ x >> 31;
}

typedef struct {
    int len, item;
    uint64_t tie;
} Keyed;

static int by_length(const void *a, const void *b) {
    const Keyed *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    if (x->tie != y->tie) return x->tie < y->tie ? -1 : 1;
    return (x->item > y->item) - (x->item < y->item);
}

int length_order_init(LengthOrder *o, const int *len, int n, int batch, uint64_t seed, Err *e) {
    o->order = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    Keyed *k = malloc((size_t)(n > 0 ? n : 1) * sizeof(Keyed));
    if (!o->order || !k) {
        free(k), free(o->order), o->order = NULL;
        return err_set(e, "out of memory ordering %d training items by length", n);
    }
    for (int i = 0; i < n; i++) k[i] = (Keyed){len[i], i, mix(seed * 0x9E3779B97F4A7C15ull + (uint64_t)i)};
    qsort(k, (size_t)n, sizeof *k, by_length);
    for (int i = 0; i < n; i++) o->order[i] = k[i].item;
    free(k);
    o->n = n;
    long run = 16L * (batch > 0 ? batch : 1);
    o->run = run < n ? (int)run : n;
    return 0;
}

void length_order_pick(const LengthOrder *o, uint64_t seed, long step, int B, int *items) {
    uint64_t h = mix((seed + 1) * 0xD6E8FEB86659FD93ull ^ (uint64_t)step);
    long start = (long)(h % (uint64_t)o->n);
    for (int b = 0; b < B; b++) {
        uint64_t hb = mix(h + (uint64_t)(b + 1) * 0x9E3779B97F4A7C15ull);
        long at = (start + (long)(hb % (uint64_t)o->run)) % o->n; /* past the longest, on to the shortest */
        items[b] = o->order[at];
    }
}

void length_order_free(LengthOrder *o) {
    free(o->order);
    o->order = NULL, o->n = o->run = 0;
}
