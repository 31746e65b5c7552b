/* headscore.h — the head scores the head-identification literature ranks
 * heads by, computed from one head's attention rows at a time.
 *
 * Every score is a mean over units (a task item, or a random sequence) of
 * a per-unit value per query head; HeadScores keeps every unit's values so
 * the Retrieval-Head JSON form (a list per head) can be written, and turns
 * them into KV-head scores by the max over each group (a KV head's cache
 * must stay whole as soon as one of its query heads reads far). The
 * per-row pieces below are pure functions of a softmax row (weights of one
 * query over keys 0 … n-1) and the unit's token ids; duo-fast's pieces
 * work on vectors and the RoPE tables a RunState holds. Nothing here runs
 * the model, reads a file or keeps state: the caller drives the passes
 * (app/headscore_run.c) and tests/headscore_ref.py recounts every score.
 */
#ifndef AHASCOPE_HEADSCORE_H
#define AHASCOPE_HEADSCORE_H

#include <stdint.h>

#include "err.h"

#define HEADSCORE_MAX_UNITS 100000 /* units a score averages over */

/* One score's per-unit values: v[u * n_layers * n_heads + l * n_heads + h]. */
typedef struct {
    int n_layers, n_heads, n_kv;
    int n_units, cap;
    int kv_mean; /* 1: a KV head scores its group's mean (kvpress's duo-fast), 0: the max */
    double *v;   /* heap, headscore_free */
} HeadScores;

/* An empty set of scores for n_layers × n_heads query heads in groups
 * over n_kv KV heads (n_heads a multiple of n_kv). 0, or -1 with e set. */
int headscore_init(HeadScores *s, int n_layers, int n_heads, int n_kv, Err *e);

/* Release what s holds (safe on a zeroed one). */
void headscore_free(HeadScores *s);

/* A new unit's row of n_layers * n_heads values, zeroed, for the caller to
 * fill; NULL out of memory or past HEADSCORE_MAX_UNITS (e set). */
double *headscore_unit(HeadScores *s, Err *e);

/* Query head (l, h)'s score: the mean of its units' values (0 without units). */
double headscore_mean(const HeadScores *s, int l, int h);

/* KV head (l, k)'s score: the largest mean among its group's query heads
 * (kv_mean: their average). */
double headscore_kv(const HeadScores *s, int l, int k);

/* The most-attended key of a row of n weights: the first largest, as
 * NumPy's argmax picks. */
int headscore_top_key(const float *w, int n);

/* Retrieval (Wu et al.): what one decoding step adds to a head's score on
 * an item whose needle is the n_needle positions marked in needle[0..n):
 * 1 / n_needle when the head's most-attended key is a needle position whose
 * token ids[key] is the token just generated, else 0. */
double headscore_retrieval_step(const float *w, int n, const int *ids, const uint8_t *needle, int n_needle,
                                int generated);

/* The weight a row of n puts on the positions marked in mask. */
double headscore_mass_on(const float *w, int n, const uint8_t *mask);

/* Echo and induction (RazorAttention) at query t of a sequence that
 * repeats a block of `period` tokens: the weight on t - period (the same
 * token's earlier occurrence) and on t - period + 1 (the token that
 * followed it). t >= period. */
void headscore_echo_induction(const float *w, int t, int period, double *echo, double *induction);

/* duo-fast's area: the mean over keys of the cumulative sum of a row of n
 * weights. A head whose weight sits on the first keys scores near 1, one
 * that reads only the last keys near 1/n. */
double headscore_cum_area(const float *w, int n);

/* Undo (inverse 0: apply) the rotation a RoPE table row (cs, sn: head_size/2
 * each, scaled by any attention factor) gives one head's vector v of hs
 * floats, in pairs (j, j + hs/2) when half, else (2j, 2j+1). */
void headscore_rope(float *v, int hs, int half, const float *cs, const float *sn, int inverse);

/* The softmax over keys 0 … n-1 of one query: w[i] ∝ exp(q·k_i / sqrt(hs))
 * (keys[i * hs …]); the sum in double. */
void headscore_softmax(const float *q, const float *keys, int n, int hs, float *w);

#endif
