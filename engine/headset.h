/* headset.h — head sets: the (layer, head) cells a static policy runs
 * globally, as 0/1 maps of n_layers × n_heads query heads.
 *
 * DuoAttention publishes, per model, a table of one value in [0, 1] per
 * layer and KV head (full_attention_heads.tsv: a row per layer, values
 * separated by tabs); a high value marks a head that needs the full context.
 * This module reads and writes that table, turns it into a head set by a
 * budget or a threshold, and measures how much two head sets overlap. A KV
 * head's value applies to every query head of its group: query head h of a
 * model with G = n_heads / n_kv_heads query heads per KV head reads KV head
 * h / G, as the forward pass does. Every count read from a file is bounded
 * (HEADSET_MAX_*) before anything is allocated for it. Nothing here keeps
 * state; only libc, files.h and err.h are used.
 */
#ifndef AHASCOPE_HEADSET_H
#define AHASCOPE_HEADSET_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define HEADSET_MAX_LAYERS 4096        /* rows a table may have */
#define HEADSET_MAX_KV 4096            /* values a row may have */
#define HEADSET_MAX_BYTES ((size_t)16 << 20) /* largest table file read */

/* A DuoAttention table: values[l * n_kv + k] for layer l, KV head k. */
typedef struct {
    int n_layers, n_kv;
    float *values; /* heap, headset_table_free */
} HeadTable;

/* How many heads a budget takes: a count, or a percentage of the heads. */
typedef struct {
    double value;  /* K heads, or P percent */
    int percent;   /* 1: value is a percentage */
} HeadBudget;

/* How a table becomes a head set: the budget's top query heads, or every
 * query head whose value is strictly greater than a threshold (the rule
 * DuoAttention's own code applies after its quantile). */
typedef struct {
    int by_threshold;  /* 0: budget, 1: threshold */
    HeadBudget budget;
    double threshold;  /* in [0, 1] */
} HeadPick;

/* The heads a budget takes out of n: K itself (capped at n), or P% of n
 * rounded half up. One rule for calibrate and for duo tables. */
int headset_budget_count(const HeadBudget *b, int n);

/* Parse a table's text (len bytes; '#' lines and blank lines are skipped,
 * as numpy's loadtxt does). Rows must have equal lengths and values be
 * finite numbers in [0, 1]. Errors name the line, not the file. */
int headset_table_parse(const char *text, size_t len, HeadTable *t, Err *e);

/* The values a table may hold: finite numbers in [lo, hi]. */
typedef struct {
    double lo, hi;
} HeadRange;

/* The same parse for values in the range r (PruLong's masks, tables of
 * windows); errors name the range. */
int headset_table_parse_range(const char *text, size_t len, const HeadRange *r, HeadTable *t, Err *e);

/* Read the table at path (a regular file of at most HEADSET_MAX_BYTES) and
 * check it against the model: n_layers rows of n_kv values. Errors read
 * "PATH: problem". */
int headset_table_read(const char *path, int n_layers, int n_kv, HeadTable *t, Err *e);

/* Write t to path atomically as DuoAttention's TSV (six decimals, a tab
 * between values, a row per layer), after one '#' line holding comment
 * when it is not NULL, control characters blanked (numpy's loadtxt skips
 * it). */
int headset_table_write(const char *path, const HeadTable *t, const char *comment, Err *e);

/* Release a table (safe on a zeroed one). */
void headset_table_free(HeadTable *t);

/* The head set pick chooses from t for a model of n_heads query heads per
 * layer (a multiple of t->n_kv): a calloc'd [n_layers * n_heads] 0/1 map in
 * *out. Under a budget, query heads rank by their KV head's value, highest
 * first, ties by (layer, head) ascending, so a tie never depends on the
 * sort and a budget that splits a group takes its lower-numbered heads. */
int headset_from_table(const HeadTable *t, int n_heads, const HeadPick *pick, uint8_t **out, Err *e);

/* The overlap of two head sets of n cells: |A ∩ B| / |A ∪ B| (1 when both
 * are empty, as two empty sets are equal); the sizes in *inter and *uni
 * when not NULL. */
double headset_jaccard(const uint8_t *a, const uint8_t *b, int n, int *inter, int *uni);

#endif
