/* eval_from_db.h — `eval --from-db` and `sweep --from-db`: the table of the
 * evaluations a database holds, re-summarised from what was recorded, with
 * the shards of one evaluation (`--shard I/N` runs, then `merge`) combined
 * into the row the unsharded evaluation prints.
 *
 * Contract: the file is only read. Shares, reads, every predictor's
 * confusion and AUC are recomputed from the runs' tokens and decisions
 * (eval_score_step, the function the live evaluation uses); KL and the two
 * perplexities, which no run records per token, from each shard's evals
 * row as the sums they are the means of (n_tokens × mean). Each sequence's
 * mean NLL, which the perplexity's interval resamples, is recounted from
 * its run's log-probabilities as the live evaluation counted them, in the
 * unsharded order, so an eval's interval comes back to the bit (a sweep's
 * table has none). Every shard of an evaluation must be present exactly
 * once.
 *
 * The rows come back with their sequences' values and without intervals:
 * the table (eval_opts_rows_from_db, eval_table.h) calls this reader and
 * draws them, and this file calls nothing of the table's. */
#ifndef AHASCOPE_EVAL_FROM_DB_H
#define AHASCOPE_EVAL_FROM_DB_H

#include "app/eval_table.h"

/* The rows of every finished evaluation in path (label NULL: all, else
 * only those with that label), in the order of their first evals row; L
 * is the model the byte columns are costed on, whose SHA-256 model_sha256
 * every evaluation must have been run on. *rows is heap (caller frees),
 * the rows' per-sequence values (EvalRow.seqs, NULL for a sweep's) in the
 * same block; no row's `ci` is set.
 * Returns the number of rows, or -1 with e naming the file and problem.
 * Matched evaluations (--match-budget) are left out with a note on stderr:
 * their oracle labels used the AHA row's θ, which the file does not keep. */
int eval_from_db_rows(const char *path, const char *label, const AppLoaded *L, const char *model_sha256, EvalRow **rows,
                      Err *e);

#endif
