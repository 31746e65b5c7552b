/* tasks.h — long-context tasks whose answers are known to need the far
 * context (or, for the local control, not to): the generator, and the
 * JSON-lines files that carry the items to `eval --tasks`.
 *
 * Every item is a prompt written with the model's own tokenizer so that it
 * encodes to exactly `context` ids (the BOS the tokenizer prepends counted),
 * an answer the model should continue it with, and the token positions of
 * the needle statements (every token overlapping their bytes) and of the
 * question (its first token). Four kinds:
 *   passkey   a five-digit pass key stated once in filler, asked at the end;
 *   multikey  four key -> value statements in filler (or 2-8), one key asked
 *             (for training, optionally after keys drawn with replacement
 *             are asked again, their values written out);
 *   vt        two chains of variable assignments (a value, then two hops
 *             of VAR x = VAR y), the last variable of one chain asked;
 *   local     passkey with the statement right before the question, so any
 *             window past its distance sees it: routing must not matter;
 *   recall    training documents: a pass key and context / 128 keys (or
 *             as many as asked, up to TASK_RECALL_MAX_KEYS), each stated
 *             and later asked with its answer written out, then one of
 *             them asked at the end (many retrievals an item).
 * Items are a function of (kind, context, keys, key letters, reask, seed, index)
 * and the tokenizer alone, drawn from the splitmix64 stream of
 * engine/stats.h: the same seed gives the same bytes. No libc rand(), no
 * clock, no global state.
 */
#ifndef AHASCOPE_TASKS_H
#define AHASCOPE_TASKS_H

#include <stdint.h>

#include "engine/err.h"
#include "engine/tokenize/tokenize.h"

typedef enum { TASK_PASSKEY, TASK_MULTIKEY, TASK_VT, TASK_LOCAL, TASK_RECALL, TASK_COUNT } TaskKind;

/* The kinds as --task spells them, "passkey|multikey|vt|local". */
#define TASK_LIST "passkey|multikey|vt|local|recall"

/* A kind's word ("passkey"), or "?" out of range. */
const char *task_name(TaskKind k);

/* The kind called s; 0, or -1 with a usage error naming flag and TASK_LIST. */
int task_parse(const char *flag, const char *s, TaskKind *k, Err *e);

/* Most needle statements an item holds (vt: two chains of three). */
#define TASK_MAX_NEEDLES 8

/* Most statements an item's prompt holds, needles and the rest (recall:
 * its facts and the questions that repeat them). */
#define TASK_MAX_STMTS 48

/* Most keys a recall item holds besides its pass key: every fact is a
 * statement and a question, and the prompt holds TASK_MAX_STMTS. */
#define TASK_RECALL_MAX_KEYS ((TASK_MAX_STMTS - 1) / 2 - 1)

typedef struct {
    TaskKind kind;        /* TASK_COUNT for a line read from a file that did not name it */
    char *prompt;         /* the text the model reads (BOS not spelled) */
    char *answer;         /* what it must continue with, e.g. "48213" */
    int n_tokens;         /* ids the prompt encodes to, BOS included: the context */
    int *needle_pos;      /* every token overlapping a needle statement, ascending */
    int n_needle_pos;
    char *needles[TASK_MAX_NEEDLES]; /* the needle statements' text, in prompt order */
    int n_needles;
    int question_pos;     /* the question's first token */
} TaskItem;

/* Key -> value statements a multikey item holds: TASK_KEYS unless asked
 * otherwise, from 2 to TASK_MAX_NEEDLES. */
#define TASK_KEYS 4

/* The key counts kind k takes in [*lo, *hi]: a multikey item's statements
 * (2 to TASK_MAX_NEEDLES) or a recall item's keys besides its pass key (1
 * to TASK_RECALL_MAX_KEYS). 0 for a kind that takes none. */
int task_keys_range(TaskKind k, int *lo, int *hi);

/* Letters a key or variable name has unless asked otherwise ("gzf"). */
#define TASK_KEY_LETTERS 3

/* What task_make writes: the kind; the context in ids; the key count, in
 * task_keys_range or 0 for the kind's default (multikey TASK_KEYS, recall
 * context / 128); the letters of every key and variable name, 1 to
 * TASK_KEY_LETTERS or 0 for TASK_KEY_LETTERS (one letter makes matching
 * the asked key a single-token look-up for a tokenizer that keeps letters
 * whole); and the seed. reask (multikey only, 0 for none, at most
 * TASK_MAX_REASKS) asks that many keys again after the statements, each
 * drawn from all of them, its value written out: a training item with many
 * retrievals. */
typedef struct {
    TaskKind kind;
    int context, keys, key_letters;
    uint64_t seed;
    int reask;
} TaskSpec;

/* Most questions a multikey item asks again before its last. */
#define TASK_MAX_REASKS 16

/* Item `index` of spec under tok. Errors: a key count or letter count out
 * of range, a context too short to hold the task (the message names the
 * least that fits), or a tokenizer that does not decode the prompt back to
 * its bytes (then positions could not be trusted). */
int task_make(const Tokenizer *tok, const TaskSpec *spec, int index, TaskItem *out, Err *e);

/* Release what an item holds (safe on a zeroed item). */
void task_item_free(TaskItem *it);

/* A whole file's items. */
typedef struct {
    TaskItem *item;
    int n;
} TaskSet;

/* Write items as JSON lines to path (atomically: all or nothing), one
 * object per item: task, prompt, answer, n_tokens, needle_pos, needles,
 * question_pos, needle_distance (the last prompt position minus the first
 * needle position). */
int tasks_write_jsonl(const char *path, const TaskItem *items, int n, Err *e);

/* Read a file tasks_write_jsonl wrote (or one by hand with at least
 * prompt, answer, needle_pos and question_pos per line; blank lines
 * skipped). A bad line is an error naming the file, the line and the
 * field. */
int tasks_read_jsonl(const char *path, TaskSet *s, Err *e);

/* Release a set (safe on a zeroed one). */
void tasks_free(TaskSet *s);

#endif
