/* train_batches.h — which training items a `train --by-length` step takes.
 *
 * The training items are sorted by length once (ties broken by a hash of
 * the seed and the item, so items of one length are not in file order);
 * a step takes its B items from a run of neighbours in that order, the run
 * starting at a point drawn from (seed, step) and wrapping past the end,
 * so every item is as likely as any other and a step's items are about as
 * long as each other. The step then runs at its longest item's length:
 * the positions the other items would pad cost nothing. The same seed,
 * data and step give the same items, so --resume continues exactly. */
#ifndef AHASCOPE_TRAIN_BATCHES_H
#define AHASCOPE_TRAIN_BATCHES_H

#include <stdint.h>

#include "engine/err.h"

typedef struct {
    int *order;  /* [n] item indices, shortest first */
    int n;       /* items */
    int run;     /* neighbours a step draws from */
} LengthOrder;

/* Sort items 0..n-1 of lengths len[] for steps of `batch` items, each drawn
 * from a run of 16 batches' worth of neighbours (all n if fewer). Returns 0,
 * or -1 (out of memory). */
int length_order_init(LengthOrder *o, const int *len, int n, int batch, uint64_t seed, Err *e);

/* The B item indices of step `step` into items[]. */
void length_order_pick(const LengthOrder *o, uint64_t seed, long step, int B, int *items);

/* Free what length_order_init allocated (safe on a zeroed struct). */
void length_order_free(LengthOrder *o);

#endif
