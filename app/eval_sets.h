/* eval_sets.h — `eval --tasks A[,B,...]`: task items scored on one or
 * several independently drawn sets, the matched thresholds chosen once on
 * calibration items apart from every scored one (--calibrate-items FILE),
 * each set's table, and with several sets the items pooled.
 *
 * Without --calibrate-items a single set's thresholds (--share's τ, the
 * matched θ, p and head count) are chosen on its own prompts, as before,
 * and the text says so; several sets with --share or --match-budget need
 * --calibrate-items, so every set is scored at one setting. A calibration
 * item whose prompt is also a scored item's is an error. The pooled
 * accuracy is the mean over every item of every set, its 95% bootstrap
 * interval over those items and McNemar against full attention on them.
 * --choice-resamples N adds an interval that covers the thresholds' choice
 * too: the calibration items resampled N times, every threshold chosen
 * again on each resample, the scored items answered at each choice and
 * resampled under it (app/COMMANDS.md gives the draws). */
#ifndef AHASCOPE_EVAL_SETS_H
#define AHASCOPE_EVAL_SETS_H

#include "app/eval_table.h"

/* Sets --tasks may list at most. */
#define EVAL_SETS_MAX 16

/* --tasks FILE[,FILE...]: each set's items answered greedily under full
 * attention and the policy (or, matched, every predictor), scored, printed
 * set by set (JSON: one array for one set; {"sets": [{"file", "rows"}...],
 * "pooled": [...]} for several), then pooled. 0, or -1 with e set. */
int eval_run_tasks(EvalOpts *x, Err *e);

#endif
