/* ruler.h — RULER's synthetic tasks in this project's own wording: the
 * needle-in-a-haystack family, variable tracking, common-words and
 * frequent-words extraction (engine/tasks/README.md says how each relates
 * to RULER's and what differs).
 *
 * Internal to engine/tasks/: task_make (tasks.h) calls these for the kinds
 * task_is_ruler names. Each draws only from the stream it is handed, so an
 * item is a function of its kind, context, seed and index and the
 * tokenizer alone. */
#ifndef AHASCOPE_TASKS_RULER_H
#define AHASCOPE_TASKS_RULER_H

#include "engine/stats.h"
#include "engine/tasks/tasks_plan.h"

/* The plan of a needle or variable-tracking item of kind k: statements,
 * question, references and its haystack (noise, essay-like or distractor
 * needles, as many words as context ids could need, then cycled). */
int ruler_plan(StatsRng *r, TaskKind k, int context, TaskPlan *p, Err *e);

/* A cwe or fwe item of exactly context ids: the word list sized until the
 * prompt's count is exact. Errors: a context too short for the list (the
 * message names the least that fits) or too long for its vocabulary. */
int ruler_make_list(const Tokenizer *tok, TaskKind k, StatsRng *r, int context, TaskItem *out, Err *e);

/* A prompt at size m (haystack words, list words) with j words of
 * padding before the question (the last swapped when w >= 0); *q_at the
 * question's first byte. malloc'd, NULL out of memory. */
typedef char *(*RulerText)(const void *ctx, const TaskWords *pad, int m, int j, int w, size_t *q_at);

/* The padding's words (a neutral sentence, the text before a question). */
int ruler_pad_words(TaskWords *w, Err *e);

/* Append the padding's first j words to b, each after a space, the last
 * swapped for a word of another length when w >= 0. */
void ruler_put_pad(TaskBuf *b, const TaskWords *pad, int j, int w);

/* The size m in [lo, hi] and padding (j, w) into fit[0..3) whose prompt
 * text gives encodes to exactly context ids under tok. Errors: even m = lo
 * is too long (naming the least that fits), or no size and padding lands
 * (a context past what the text's words can fill). */
int ruler_fit(const Tokenizer *tok, TaskKind k, RulerText text, const void *ctx, const TaskWords *pad, int lo, int hi,
              int context, int fit[3], int **ids, int *cap, Err *e);

#endif
