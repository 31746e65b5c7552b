/* bpeheap.h — internal to engine/tokenize/: the priority queue both BPE
 * encoders (tokenizer.c's score merges, hftok_encode.c's rank merges) keep
 * their candidate pairs in.
 *
 * A min-heap on one 64-bit key, which each encoder packs as (priority << 32
 * | position) so that one integer compare gives "best priority, then
 * leftmost". 4-ary: half the depth of a binary heap, so popping from a heap
 * of millions of entries (a 1 MB text with no pre-token split) waits on
 * fewer cache misses. Entries are never removed early; an encoder that
 * finds a popped entry out of date skips it (lazy invalidation).
 */
#ifndef AHASCOPE_BPEHEAP_H
#define AHASCOPE_BPEHEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t key; /* smallest first */
    int32_t a, b; /* the encoder's payload */
} BpeCand;

typedef struct {
    BpeCand *v;
    size_t n, cap;
} BpeHeap;

/* Add x; 0, or -1 when out of memory (the heap is unchanged). */
int bpeheap_push(BpeHeap *h, BpeCand x);

/* Remove and return the entry with the smallest key (h->n must be > 0). */
BpeCand bpeheap_pop(BpeHeap *h);

/* Release the heap's memory (safe on a zeroed heap). */
void bpeheap_free(BpeHeap *h);

#endif
