/* eval_run.h — what `ahascope eval` runs once app/cmd_eval.c has read its
 * flags into an EvalOpts (app/eval_table.h), and the matching --tasks
 * shares (app/eval_sets.h). Each returns 0, or -1 with e
 * set; each prints its table (or --json rows) on stdout and its progress
 * on stderr. */
#ifndef AHASCOPE_EVAL_RUN_H
#define AHASCOPE_EVAL_RUN_H

#include "app/eval_table.h"

/* The policy of x->o on the held-out data (--self or --data), recorded
 * into --db if given; with --match-budget aha every predictor at the
 * routers' global share, with --share the routers' τ chosen for it. */
int eval_run_policy(EvalOpts *x, Err *e);

/* --share: x->o.attn.tau set to the τ whose routers' global share on d is
 * nearest x->share (within 0.05 points when one lands there; else a note on
 * stderr gives the nearest share and the step it could not split). */
int eval_match_tau(const AppLoaded *L, const EvalData *d, EvalOpts *x, Err *e);

/* Rows --match-budget aha fills at most: aha, the θ predictors, random,
 * static, the heads' own windows (moa:/windows: tables), local. */
#define EVAL_MATCHED_MAX (DECIDE_COUNT + 4)

/* The matched settings, chosen on the data c: rows[0] the AHA routers at
 * x's τ, whose global share on c is *share; each θ predictor's θ, random's
 * p and the static head count giving that share on c (the static heads
 * ranked on cal, or by x->static_rank; the map in *heads, the caller's to
 * free); then the heads' own windows when x's static heads give them, and
 * with with_local the window alone (the curves' streaming arm). Fills
 * names, knobs and settings, not statistics. Returns the number of rows,
 * or -1 with e set. */
int eval_matched_choose(const AppLoaded *L, const EvalData *c, const EvalData *cal, const EvalOpts *x, EvalRow *rows,
                        uint8_t **heads, double *share, int with_local, Err *e);

/* Evaluate rows[0..n) (their seqs set by the caller) teacher-forced on d,
 * rows after the first recorded as matched to share, then their intervals
 * over d's sequences: KL and, with answers (task items), the forced
 * answer's, else perplexity's. */
int eval_matched_rows(const AppLoaded *L, const EvalData *d, const EvalOpts *x, Store *st, StoreRunInfo *info,
                      EvalRow *rows, int n, double share, int answers, Err *e);

/* --from-db DB: the table of every evaluation recorded there, shards combined. */
int eval_run_recorded(EvalOpts *x, Err *e);

#endif
