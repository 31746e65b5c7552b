/* attn_pattern.h — a head's attention pattern over a run: the softmax row
 * of every query position over the keys before it, from the queries and
 * keys a RunState kept, max-pooled into square bins of positions.
 *
 * This is what the head would attend to if it went global (as
 * fwd_attention_weights gives one row); the TUI's pattern view draws it.
 * A run of n positions costs n²/2 dot products; pooling keeps the result
 * at nb² floats however long the run, so the caller bounds the memory by
 * its choice of bin.
 */
#ifndef AHASCOPE_ATTN_PATTERN_H
#define AHASCOPE_ATTN_PATTERN_H

#include "forward.h"

/* Cells on each side of n positions pooled bin at a time: ceil(n / bin). */
int attn_pattern_cells(int n, int bin);

/* Fill out[nb * nb] (nb = attn_pattern_cells(n, bin)), row-major by query
 * bin: out[qi * nb + ki] is the largest softmax weight a query in bin qi
 * gave a key in bin ki, over positions 0 … n-1 of query head `head` in
 * `layer`; -1 where no key of the bin precedes any query of it (above the
 * diagonal). Returns 0, or -1 without kept queries (fwd_keep_queries), out
 * of range, or out of memory. */
int attn_pattern(const RunState *s, int layer, int head, int n, int bin, float *out);

#endif
