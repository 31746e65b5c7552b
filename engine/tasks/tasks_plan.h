/* tasks_plan.h — what the generators share (tasks.c, ruler.c): an item's
 * plan before its haystack is sized, the haystack's words, and the steps
 * that turn a plan into an item of exactly the context's ids.
 *
 * Internal to engine/tasks/: nothing outside it includes this. A plan is
 * an intro, statements at depths in a haystack of words (cycled when the
 * context needs more than it holds), and a question; the references are
 * what a right answer holds. Every function here is deterministic: it draws
 * only from the StatsRng it is handed. */
#ifndef AHASCOPE_TASKS_PLAN_H
#define AHASCOPE_TASKS_PLAN_H

#include <stddef.h>

#include "engine/stats.h"
#include "engine/tasks/tasks.h"

/* Bytes a statement, a question, an answer and a reference may hold. */
#define TASK_STMT_MAX 160
#define TASK_QUESTION_MAX 768
#define TASK_ANSWER_MAX 512
#define TASK_REF_MAX 48

/* Words the last word of a haystack or padding may be swapped for, of many
 * lengths, so that some choice lands the count exactly on the context. */
#define TASKS_N_PAD 20
extern const char *const tasks_pad_words[TASKS_N_PAD];

/* A haystack: words pointing into buf, read in turn and cycled. */
typedef struct {
    char *buf;
    const char **w;
    int n;
} TaskWords;

/* One item's pieces before the haystack is sized. */
typedef struct {
    const char *intro;
    char intro_buf[256]; /* an intro written for the item (intro points here) */
    char question[TASK_QUESTION_MAX], answer[TASK_ANSWER_MAX];
    char stmt[TASK_MAX_STMTS][TASK_STMT_MAX];
    int n_stmt;
    int needle[TASK_MAX_STMTS];   /* statement i is a needle (the rest are distractors) */
    double depth[TASK_MAX_STMTS]; /* where statement i goes, as a fraction of the haystack; > 1: at the end */
    char refs[TASK_MAX_REFS][TASK_REF_MAX]; /* what a right answer holds; none: the answer alone */
    int n_refs;
    TaskWords hay; /* the haystack; none (n 0): the project's plain filler */
} TaskPlan;

/* A growing string; oom set once a write failed (then nothing more is kept). */
typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} TaskBuf;

/* Append printf-formatted text to b. */
void tasks_plan_put(TaskBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Split text at spaces into w's words (w's own copy). 0, or -1 out of memory. */
int tasks_plan_words(TaskWords *w, const char *text, Err *e);

/* Release what words hold (safe on zeroed ones). */
void tasks_plan_words_free(TaskWords *w);

/* n depths drawn uniformly in [0.05, 0.95], ascending. */
void tasks_plan_depths(StatsRng *r, double *d, int n);

/* a[0..n) in an order drawn from r (Fisher–Yates from the end). */
void tasks_plan_shuffle(StatsRng *r, int *a, int n);

/* Ids text encodes to (BOS as the model is fed) into *ids (grown as
 * needed), or -1 on error. */
int tasks_plan_count(const Tokenizer *tok, const char *text, int **ids, int *cap, Err *e);

/* Fill it's needle_pos and question_pos from ids[0..n), the encoding of
 * it->prompt: the tokens overlapping the byte spans span[s] of the
 * statements s with needle[s] set, and the first token past byte q_at.
 * Errors: a tokenizer that does not decode the ids back to the prompt. */
int tasks_plan_locate(const Tokenizer *tok, TaskItem *it, const int *ids, int n, size_t span[][2], int n_stmt,
                      const int *needle, size_t q_at, Err *e);

/* The item of plan p at exactly context ids under tok: the haystack sized,
 * the prompt assembled, positions located, the needles, references and the
 * kind's metric set. Takes the haystack (freed here, whatever happens). */
int tasks_plan_finish(const Tokenizer *tok, TaskKind k, TaskPlan *p, int context, TaskItem *out, Err *e);

/* Set it's references to refs[0..n) (none: the answer alone) and its
 * metric to kind k's. 0, or -1 out of memory. */
int tasks_plan_refs(TaskItem *it, TaskKind k, char refs[][TASK_REF_MAX], int n, Err *e);

#endif
