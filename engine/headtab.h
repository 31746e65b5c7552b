/* headtab.h — the published head tables besides DuoAttention's, read as
 * their authors write them: Wu et al.'s Retrieval-Head JSON, PruLong's
 * masks, MoA's per-head spans (JSON or long CSV) and a plain table of
 * per-head windows.
 *
 * Two kinds of result. A score table (HeadTable, engine/headset.h) ranks
 * heads for a budget or a threshold: Retrieval-Head JSON gives one mean
 * score per query head, PruLong one mask value per KV head. A span table
 * (HeadSpans) gives every query head its own local window, alpha + beta·N
 * keys at context length N (MoA's rule; a fixed window is beta = 0); it
 * also becomes a score table, the span at a stated N, so it can be ranked.
 * A table may give a value per query head or per KV head; a KV head's
 * value applies to its whole group (query head h reads KV head h / G).
 *
 * Every count read from a file is bounded (HEADSET_MAX_*) before anything
 * is allocated for it; errors name the file and the problem in one line.
 * Nothing here keeps state; libc, cJSON, files.h, headset.h and err.h.
 */
#ifndef AHASCOPE_HEADTAB_H
#define AHASCOPE_HEADTAB_H

#include <stddef.h>

#include "err.h"
#include "headset.h"

#define HEADTAB_MAX_SCORES (1 << 20) /* numbers all of a Retrieval-Head file's lists may hold */
#define HEADTAB_MAX_SCORE 1e30       /* |score| a Retrieval-Head list may hold (its mean stays a float) */
#define HEADTAB_MAX_ALPHA 1e9        /* |alpha| a span may have, in keys */
#define HEADTAB_MAX_WINDOW (1 << 24) /* the longest fixed window a windows table may give */

/* The model shape a table is checked against; context is the N at which a
 * span table is ranked (the model's context length). */
typedef struct {
    int n_layers, n_heads, n_kv_heads, context;
} HeadShape;

/* Per-head windows: ab[2 * cell] = alpha, ab[2 * cell + 1] = beta for
 * cell = layer * n_heads + head (query heads), as AttnConfig.head_span
 * takes them. */
typedef struct {
    int n_layers, n_heads;
    float *ab; /* heap, headtab_spans_free */
} HeadSpans;

/* Wu et al.'s Retrieval-Head JSON at path: {"L-H": [s1, s2, ...], ...},
 * a key per query head of the model (layer L, head H, decimal), each list
 * non-empty, of numbers within +-HEADTAB_MAX_SCORE; the head's score is
 * the list's mean. Into a score
 * table of n_layers rows of n_heads values. */
int headtab_read_retrieval(const char *path, const HeadShape *s, HeadTable *t, Err *e);

/* PruLong's masks TSV at path: a row per layer, a value per KV head (or per
 * query head), any finite number (0/1, or a soft mask); '#' lines and blank
 * lines skipped as in a DuoAttention table. */
int headtab_read_prulong(const char *path, const HeadShape *s, HeadTable *t, Err *e);

/* MoA's spans at path: JSON {"alphas": [[...], ...], "betas": [[...], ...]}
 * (a list per layer, a value per query or KV head), or, when the file does
 * not open with '{', the long CSV: a header naming at least the columns
 * layer (or layer_id), head (head_id), alpha (alpha_value) and beta
 * (beta_value), others ignored, then one row per head. alpha finite with
 * |alpha| <= HEADTAB_MAX_ALPHA, beta in [0, 1]. */
int headtab_read_moa(const char *path, const HeadShape *s, HeadSpans *out, Err *e);

/* A table of fixed windows at path: a row per layer, a whole number of keys
 * from 1 to HEADTAB_MAX_WINDOW per query or KV head; spans with beta 0. */
int headtab_read_windows(const char *path, const HeadShape *s, HeadSpans *out, Err *e);

/* The span table as scores: each head's window at context length n,
 * alpha + beta * n, into a score table of n_heads values a row. */
int headtab_spans_scores(const HeadSpans *sp, double n, HeadTable *t, Err *e);

/* The window a span gives at position t (t + 1 keys): alpha + beta·(t + 1)
 * rounded half up, at least 1 (the current key is always read) and at most
 * t + 1. */
int headtab_window_at(const float *ab, int t);

/* Release a span table (safe on a zeroed one). */
void headtab_spans_free(HeadSpans *sp);

#endif
