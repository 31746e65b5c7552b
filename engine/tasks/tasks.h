/* tasks.h — long-context tasks whose answers are known to need the far
 * context (or, for the local control, not to): the generator, and the
 * JSON-lines files that carry the items to `eval --tasks`.
 *
 * Every item is a prompt written with the model's own tokenizer so that it
 * encodes to exactly `context` ids (the BOS the tokenizer prepends counted),
 * an answer the model should continue it with, and the token positions of
 * the needle statements (every token overlapping their bytes) and of the
 * question (its first token). The kinds are TASK_KINDS below; the first
 * five are this project's own:
 *   passkey   a five-digit pass key stated once in filler, asked at the end;
 *   multikey  four key -> value statements in filler (or 2-8), one key asked
 *             (for training, optionally after keys drawn with replacement
 *             are asked again, their values written out);
 *   local     passkey with the statement right before the question, so any
 *             window past its distance sees it: routing must not matter;
 *   recall    training documents: a pass key and context / 128 keys (or
 *             as many as asked, up to TASK_RECALL_MAX_KEYS), each stated
 *             and later asked with its answer written out, then one of
 *             them asked at the end (many retrievals an item);
 *   vt_value  two chains of variable assignments (a value, then two hops
 *             of VAR x = VAR y), the last variable of one chain asked (what
 *             `vt` wrote before it became RULER's form).
 * The rest are RULER's synthetic tasks in this project's own wording
 * (engine/tasks/README.md says how each relates to RULER's): the needle in a
 * haystack family, variable tracking (vt), common-words (cwe) and
 * frequent-words (fwe) extraction. An item carries its references (every
 * string a right answer holds) and the metric that scores it.
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

/* How an item's generated text is scored, 0 to 1:
 *   exact  the text, leading blanks dropped, begins with the answer and
 *          the character after it, if any, is no letter or digit (1 or 0);
 *   all    RULER's string_match_all: the share of the references the text
 *          holds, each looked for as a substring, case ignored (ASCII);
 *   part   RULER's string_match_part: 1 when it holds any of them. */
#define TASK_METRICS(X) \
    X(EXACT, "exact")   \
    X(ALL, "all")       \
    X(PART, "part")

#define TASK_METRIC_ENUM(e, name) TASK_METRIC_##e,
typedef enum { TASK_METRICS(TASK_METRIC_ENUM) TASK_METRIC_COUNT } TaskMetric;
#undef TASK_METRIC_ENUM

/* Every kind, once: its enum, its --task name, its metric, 1 when it is
 * RULER's, and the line `tasks --list` prints. The order is the enum's,
 * which seeds each kind's stream: append, never reorder. */
#define TASK_KINDS(X)                                                                                              \
    X(PASSKEY, "passkey", EXACT, 0, "a five-digit pass key stated once in filler, asked at the end")                \
    X(MULTIKEY, "multikey", EXACT, 0, "four (--keys: 2-8) key -> value statements in filler, one key asked")         \
    X(VT, "vt", ALL, 1, "variable tracking: a chain of five variables through noise, all that hold its value asked") \
    X(LOCAL, "local", EXACT, 0, "passkey with the statement right before the question: routing must not matter")   \
    X(RECALL, "recall", EXACT, 0, "training documents: facts stated, each asked later with its answer written out") \
    X(VT_VALUE, "vt_value", EXACT, 0, "two chains of assignments, the value at one chain's end asked (vt before)")   \
    X(NIAH_SINGLE_1, "niah_single_1", ALL, 1, "one word key's seven-digit number in a noise haystack")              \
    X(NIAH_SINGLE_2, "niah_single_2", ALL, 1, "one word key's seven-digit number in an essay-like haystack")        \
    X(NIAH_SINGLE_3, "niah_single_3", ALL, 1, "one word key's UUID in an essay-like haystack")                      \
    X(NIAH_MULTIKEY_1, "niah_multikey_1", ALL, 1, "one key's number among three distractor needles in an essay")    \
    X(NIAH_MULTIKEY_2, "niah_multikey_2", ALL, 1, "one key's number in a haystack made only of distractor needles") \
    X(NIAH_MULTIKEY_3, "niah_multikey_3", ALL, 1, "one UUID key's UUID in a haystack of distractor UUID needles")   \
    X(NIAH_MULTIVALUE, "niah_multivalue", ALL, 1, "one key with four numbers in an essay, all four asked")          \
    X(NIAH_MULTIQUERY, "niah_multiquery", ALL, 1, "four keys' numbers in an essay, all four keys asked")            \
    X(CWE, "cwe", ALL, 1, "common words: a numbered word list, the 10 words repeated most asked")                  \
    X(FWE, "fwe", ALL, 1, "frequent words: coded words drawn with Zipf frequencies, the 3 most frequent asked")

#define TASK_KIND_ENUM(e, name, metric, ruler, about) TASK_##e,
typedef enum { TASK_KINDS(TASK_KIND_ENUM) TASK_COUNT } TaskKind;
#undef TASK_KIND_ENUM

/* The kinds as --task spells them, "passkey|multikey|…|fwe" (a pointer,
 * not a literal: the table's names each follow a bar, the first skipped). */
#define TASK_KIND_BAR(e, name, metric, ruler, about) "|" name
#define TASK_LIST (&TASK_KINDS(TASK_KIND_BAR)[1])

/* A kind's word ("passkey"), or "?" out of range. */
const char *task_name(TaskKind k);

/* The kind called s; 0, or -1 with a usage error naming flag and TASK_LIST. */
int task_parse(const char *flag, const char *s, TaskKind *k, Err *e);

/* The metric kind k is scored by (TASK_METRIC_EXACT out of range). */
TaskMetric task_metric(TaskKind k);

/* 1 when k is one of RULER's tasks (their own flags only: no --keys,
 * --key-letters or --reask). */
int task_is_ruler(TaskKind k);

/* The line `tasks --list` prints for k. */
const char *task_about(TaskKind k);

/* A metric's word ("all"), or "?" out of range. */
const char *task_metric_name(TaskMetric m);

/* The metric called s: 0, or -1 when none is. */
int task_metric_parse(const char *s, TaskMetric *m);

/* Most references an item holds (cwe: its ten words). */
#define TASK_MAX_REFS 10

/* The exact rule on gen[0..n) against answer: 1 or 0. */
int task_match_exact(const char *gen, size_t n, const char *answer);

/* gen[0..n) scored by m against refs[0..n_refs) (exact: refs[0]), 0 to
 * 1; 0 for no references. Case is ignored byte-wise (A-Z only), where
 * RULER's Python lowers Unicode: the same on ASCII references. */
double task_score(TaskMetric m, const char *gen, size_t n, char *const *refs, int n_refs);

/* Tokens eval generates for an item scored by m whose gold answer
 * encodes to answer_ids ids alone: exact one more (a tokenizer may spend a
 * token on the separating space); all and part 8 more (room for other
 * separators between the references than the gold answer's). */
int task_gen_budget(TaskMetric m, int answer_ids);

/* Most needle statements an item holds (vt_value: two chains of three). */
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
    char *answer;         /* what it must continue with, e.g. "48213" or "1234567, 7654321" */
    char *refs[TASK_MAX_REFS]; /* what a right answer holds (exact: the answer alone) */
    int n_refs;
    TaskMetric metric;    /* how the generated text is scored */
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
 * object per item: task, prompt, answer, answers (the references), metric,
 * n_tokens, needle_pos, needles, question_pos, needle_distance (the last
 * prompt position minus the first needle position, -1 without needles). */
int tasks_write_jsonl(const char *path, const TaskItem *items, int n, Err *e);

/* The bounds a task file is read within, so its cost is its longest line,
 * never its size: a prompt's bytes (as --prompt-file's), a line's (a
 * prompt escaped, with the rest), the items kept and their text. */
#define TASK_PROMPT_MAX (16 << 20)
#define TASK_LINE_MAX (2 * TASK_PROMPT_MAX + (1 << 20))
#define TASK_MAX_ITEMS (1 << 20)
#define TASK_KEPT_MAX ((size_t)1 << 30)

/* Read a file tasks_write_jsonl wrote (or one by hand with at least
 * prompt, answer, needle_pos and question_pos per line; blank lines
 * skipped), streamed line by line within the bounds above. Without answers
 * the references are the answer alone; without metric it is the named
 * kind's, else exact. A bad line is an error naming the file, the line and
 * the field; so are a byte-order mark, \u0000 in a string, text after the
 * object, a key given twice and a position past the prompt (n_tokens when
 * given, else the prompt's bytes plus BOS). */
int tasks_read_jsonl(const char *path, TaskSet *s, Err *e);

/* Item k (counted from 0, blank lines skipped) alone, checked as
 * tasks_read_jsonl checks it: the lines before it are only counted, the
 * lines after it never read. Errors as tasks_read_jsonl's, or "no item K:
 * the file holds N". Release it with task_item_free. */
int tasks_read_item(const char *path, long k, TaskItem *it, Err *e);

/* Release a set (safe on a zeroed one). */
void tasks_free(TaskSet *s);

#endif
