/* eval_tasks.h — `eval --tasks`: every item of a task file answered
 * greedily under a policy and under full attention, scored by its metric
 * (exact match, or RULER's string_match_all / string_match_part), and
 * summarised with a bootstrap interval and a paired McNemar test against
 * full attention (engine/stats.h).
 *
 * Precisely: after the prompt (encoded with BOS, as the generator counted
 * it) the model generates greedily task_gen_budget tokens (engine/tasks/
 * tasks.h: A + 1 for exact match, where A is the number of ids the answer
 * encodes to on its own, the one more letting a tokenizer spend a token
 * on the separating space; A + 8 for RULER's metrics), stopping at its stop
 * token. Exact match: the item is right (1) when that text, leading spaces
 * dropped, begins with the answer and the character after it, if any was
 * generated, is not a letter or digit ("48213." is right, "482130" not).
 * all: the share of the item's references the text holds (substring, case
 * ignored); part: 1 when it holds any.
 */
#ifndef AHASCOPE_EVAL_TASKS_H
#define AHASCOPE_EVAL_TASKS_H

#include <stddef.h>

#include "app/eval_reports.h"
#include "app/eval_table.h"
#include "app/setup.h"
#include "engine/tasks/tasks.h"
#include "store/store.h"

/* 1 when the generated text gen[0..n) answers `answer` by the rule above. */
int eval_tasks_match(const char *gen, size_t n, const char *answer);

/* Per item its score under a (0 to 1, by the item's metric: task_score),
 * into score[0..s->n); threads
 * for the forward pass, progress a bar on stderr labelled with name.
 * Errors: an item whose prompt and answer do not fit the model's context. */
int eval_tasks_answer(const AppLoaded *L, const AttnConfig *a, const TaskSet *s, int threads, int progress,
                      const char *name, double *score, Err *e);

/* One row of the task table: a policy's accuracy (mean score) over the items, its 95%
 * bootstrap interval, and the discordant counts and exact p of McNemar
 * against full attention (b: only full right, c: only the policy right). */
typedef struct {
    double accuracy, ci_low, ci_high;
    long mcnemar_b, mcnemar_c;
    double mcnemar_p;
    int n_items;
} EvalTaskScore;

/* The row of scores right[] against full[] (both n items): accuracy their
 * mean, McNemar on the items wholly right (score 1). */
EvalTaskScore eval_tasks_score(const double *right, const double *full, int n);

/* The items as the sequences eval's teacher-forced pass and budget
 * matching run on: each prompt encoded as the generator counted it, then
 * its gold answer forced after it, the ids "PROMPT ANSWER" encodes to past
 * the prompt's (answer_from, answer_apart: the prompt's statistics stay
 * the prompt's own). The desc is "tasks:FILE". An item whose text with its
 * answer does not begin with the prompt's ids is an error naming it; so is
 * one past ctx ids (the model's context), refused item by item as it is
 * reached, and before encoding it when its n_tokens or its bytes already
 * say so (more bytes than ctx of the vocabulary's longest pieces hold). */
int eval_tasks_data(const Tokenizer *tok, const TaskSet *s, const char *file, int ctx, EvalData *d, Err *e);

/* Answer the items under full attention (the reference) and under each of
 * rows[0..n) (already evaluated teacher-forced on eval_tasks_data, which
 * gives their global share, KV reads and KL over the prompts), then print
 * the table, or with json the array: full attention's row first, then one
 * per row named as its predictor, each with accuracy, ci_low, ci_high,
 * mcnemar_b, mcnemar_c, mcnemar_p; a row with KL intervals
 * (eval_rows_intervals over the items) adds kl_items, kl_ci_low,
 * kl_ci_high, kl_diff_ci_low, kl_diff_ci_high (its difference from
 * rows[0], paired by item) and kl_per_item; one with the answer's
 * (EVAL_CI_ANSWER) kl_answer and nll_answer, each with _ci_low, _ci_high,
 * _diff_ci_low, _diff_ci_high and _per_item, and full attention's row then
 * kl_answer 0 and its own nll_answer, _ci_low, _ci_high, _per_item. A row
 * with a threshold gives it at full precision (tau, theta_logit or p) and
 * the text a `rerun` line per such row. Every row adds kv_footprint,
 * kv_prefill_peak and their _frac of full attention's (EvalRow's kv_held:
 * engine/cost.h's rule), the table their KV life and KV peak columns. rep
 * (NULL: none) asks for the grids (printed after the table, JSON members
 * effective_length and grid) and gathers the rows' budget points, full
 * attention's at (1, 1). keep, when not NULL, receives (n + 1) x s->n item
 * scores: full attention's, then each row's. */
int eval_tasks_rows(const AppLoaded *L, const TaskSet *s, const EvalRow *rows, int n, int threads, int json,
                    double *keep, EvalReport *rep, Err *e);

/* Far positions each head ranks in a recorded item: the most the store
 * keeps, so a needle of up to eight positions can be found whole. */
#define EVAL_TASKS_ATTN_TOP STORE_ATTN_TOP_MAX

/* `eval --tasks FILE --db D`: record each item once under full attention,
 * profiled, with every head's EVAL_TASKS_ATTN_TOP heaviest far positions,
 * teacher-forced over its prompt alone (steps = the prompt's length, no
 * generation), as one run per item whose origin is "FILE#K" (K from 0, the
 * item's place in the file), so "which heads retrieved the needle" is a
 * query on the question's position. o gives the model and the seed. */
int eval_tasks_record(const AppLoaded *L, const RunOpts *o, const TaskSet *s, const char *file, Store *st,
                      int threads, Err *e);

#endif
