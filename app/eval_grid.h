/* eval_grid.h — `eval --tasks --grid N`: a predictor's task accuracy by
 * needle depth and context length, and its effective length. Pure: item
 * numbers in, a grid (and its text or SVG) out; no model, no files.
 *
 * An item's context is its n_tokens (the prompt's ids, BOS counted); its
 * depth is where its first needle token sits, needle_pos[0] / n_tokens, in
 * [0, 1); an item without a needle has no depth and is left out. Depth
 * bucket k of N holds depths in [k / N, (k + 1) / N); the columns are the
 * distinct contexts, ascending (at most EVAL_GRID_MAX_LENS of them). A
 * cell's accuracy is the mean score of its items (NAN when it has none).
 *
 * Effective length (EVAL_GRID_KEEP, defined here once): walking the
 * contexts up from the shortest, the last one before the first whose
 * accuracy (over every depth) falls below EVAL_GRID_KEEP times the
 * shortest context's; undefined (-1) when the shortest context's accuracy
 * is 0 (every context would keep 0) or there are no items.
 */
#ifndef AHASCOPE_EVAL_GRID_H
#define AHASCOPE_EVAL_GRID_H

#include <stddef.h>

#include "engine/err.h"

#define EVAL_GRID_MAX_DEPTHS 20
#define EVAL_GRID_MAX_LENS 32
#define EVAL_GRID_KEEP 0.85

/* One predictor's grid. acc[d][c] and count[d][c]: depth bucket d, context
 * column c; len_acc[c] the column's accuracy over every depth. */
typedef struct {
    int n_depths, n_lens;
    int len[EVAL_GRID_MAX_LENS];
    double acc[EVAL_GRID_MAX_DEPTHS][EVAL_GRID_MAX_LENS];
    int count[EVAL_GRID_MAX_DEPTHS][EVAL_GRID_MAX_LENS];
    double len_acc[EVAL_GRID_MAX_LENS];
    int effective_len; /* eval_grid_effective_length's, -1 undefined */
    int n_left_out;    /* items without a needle */
} EvalGrid;

/* An item's depth, needle_pos0 / n_tokens, or -1 without a needle
 * (needle_pos0 < 0) or a context of no tokens. */
double eval_grid_depth(int needle_pos0, int n_tokens);

/* The grid of n items (n_tokens[i], depth[i] from eval_grid_depth,
 * score[i] 0 to 1) in n_depths buckets. Errors: n_depths out of 1 ..
 * EVAL_GRID_MAX_DEPTHS, more distinct contexts than EVAL_GRID_MAX_LENS. */
int eval_grid_make(const int *n_tokens, const double *depth, const double *score, int n, int n_depths, EvalGrid *g,
                   Err *e);

/* The effective length of columns len[0..n) ascending with accuracies
 * acc[0..n), by the rule above; -1 undefined. */
int eval_grid_effective_length(const int *len, const double *acc, int n);

/* The grid as a text table under the predictor's name: one line per
 * depth bucket, a column per context, then the all-depths line and the
 * effective length; malloc'd, NULL out of memory. */
char *eval_grid_text(const char *name, const EvalGrid *g);

/* Every predictor's grid as one SVG of heatmaps, a panel per grid named
 * names[i]: one <rect class="cell"> per cell with data-depth (its bucket),
 * data-len and data-acc (empty cells data-acc="nan"), shaded by accuracy;
 * malloc'd, NULL out of memory. */
char *eval_grid_svg(const char *const *names, const EvalGrid *grids, int n);

#endif
