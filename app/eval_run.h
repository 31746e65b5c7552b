/* eval_run.h — what `ahascope eval` runs once app/cmd_eval.c has read its
 * flags into an EvalOpts (app/eval_table.h). Each returns 0, or -1 with e
 * set; each prints its table (or --json rows) on stdout and its progress
 * on stderr. */
#ifndef AHASCOPE_EVAL_RUN_H
#define AHASCOPE_EVAL_RUN_H

#include "app/eval_table.h"

/* The policy of x->o on the held-out data (--self or --data), recorded
 * into --db if given; with --match-budget aha every predictor at the
 * routers' global share, with --share the routers' τ chosen for it. */
int eval_run_policy(EvalOpts *x, Err *e);

/* --tasks FILE: its items answered greedily under full attention and the
 * policy (or, matched, every predictor), scored by exact match. */
int eval_run_tasks(EvalOpts *x, Err *e);

/* --from-db DB: the table of every evaluation recorded there, shards combined. */
int eval_run_recorded(EvalOpts *x, Err *e);

#endif
