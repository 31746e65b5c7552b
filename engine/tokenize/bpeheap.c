/* bpeheap.c — a 4-ary min-heap of merge candidates (see bpeheap.h). */
#include "bpeheap.h"

#include <stdlib.h>

int bpeheap_push(BpeHeap *h, BpeCand x) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 256;
        BpeCand *v = realloc(h->v, cap * sizeof *v);
        if (!v) return -1;
        h->v = v, h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0 && x.key < h->v[(i - 1) / 4].key) h->v[i] = h->v[(i - 1) / 4], i = (i - 1) / 4;
    h->v[i] = x;
    return 0;
}

BpeCand bpeheap_pop(BpeHeap *h) {
    BpeCand top = h->v[0], x = h->v[--h->n];
    size_t i = 0, n = h->n;
    for (size_t k; (k = 4 * i + 1) < n; i = k) {
        size_t last = k + 3 < n - 1 ? k + 3 : n - 1;
        for (size_t j = k + 1; j <= last; j++)
            if (h->v[j].key < h->v[k].key) k = j;
        if (x.key <= h->v[k].key) break;
        h->v[i] = h->v[k];
    }
    if (n) h->v[i] = x;
    return top;
}

void bpeheap_free(BpeHeap *h) {
    free(h->v);
    h->v = NULL, h->n = h->cap = 0;
}
