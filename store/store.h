/* store.h — every decision recorded in SQLite, and read back.
 *
 * A database holds runs; a run is one sequence fed through the model under
 * one attention setting. Its steps (one StepTrace per position) go into
 * `tokens` (one row per position) and `decisions` (one row per position,
 * layer and head). The schema, its views and worked queries are in
 * store/SCHEMA.md. Nothing outside store/ includes sqlite3.h.
 *
 * Writing: WAL journal, one transaction per step by default (or per N
 * steps), so a step is wholly in the database or not at all, and a reader in
 * another process never waits. A run is 'running' while its writer lives;
 * opening the database for writing marks runs whose writer process died as
 * 'interrupted' (readers see the same verdict through store_run_status).
 */
#ifndef AHASCOPE_STORE_H
#define AHASCOPE_STORE_H

#include <stdint.h>
#include <stdio.h>

#include "engine/decide.h"
#include "engine/err.h"
#include "engine/model.h"
#include "engine/trace.h"

#define STORE_SCHEMA_VERSION 8
#define STORE_APPLICATION_ID 0x41484153 /* "AHAS": marks a file as ours */

typedef struct Store Store;

typedef enum { STORE_READ, STORE_WRITE } StoreMode;

/* Everything needed to reproduce a run (the `runs` row). Strings are
 * borrowed when writing, owned by the struct after store_run_info. */
typedef struct {
    int64_t run_id;           /* assigned by store_run_begin */
    int64_t parent_run_id;    /* run this one re-evaluates (TUI setting change), 0 if none */
    char status[16];          /* running | done | interrupted | failed */
    char created_at[32];      /* ISO-8601 UTC */
    char version[16];         /* ahascope version that wrote it (read back) */
    const char *program_version; /* writing: the version of the program recording it (the store
                                  * cannot know it; app/version.h holds it) */
    char model[1024], model_sha256[65], arch[32];
    int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    char tokenizer[1024], tokenizer_sha256[65];
    char policy[16];
    int window, sinks, profile;
    double tau, theta_logit, p; /* θ as log-odds (engine/decide.h); the row also holds θ itself */
    char routers[1024], routers_sha256[65];
    char static_heads[1024];  /* "l.h,…" of the static policy's global heads, "" if none */
    char ablate[256];         /* the ablation it ran under ("L2H1=local@496", decide_force_parse's text), "" if none */
    char *prompt;             /* prompt text (heap, store_run_info_free) */
    int steps;
    double temperature, topp;
    uint64_t seed;
    char origin[1024];        /* "file.db#id" when merged in, "" otherwise */
    int64_t eval_id;          /* the evaluation this run belongs to, 0 if none */
    int n_tokens;             /* positions committed */
    /* Each layer's attention kind as the architecture makes it (the
     * run_layers rows; StepTrace.layer_window): 0 global, W > 0 local with
     * window W. Zeroed, all global, as recorded before version 7. */
    int32_t layer_window[MODEL_MAX_LAYERS];
    /* Each query head's own local window, alpha = [2 * cell], beta =
     * [2 * cell + 1] for cell = layer * n_heads + head (AttnConfig.head_span,
     * engine/headtab.h), NULL when the run had the one window: borrowed
     * when writing (the run_heads rows, each value finite), heap after
     * store_run_info (store_run_info_free), a head without a row NAN. */
    float *head_span;
} StoreRunInfo;

/* How long the commands wait for a database another process has locked
 * before refusing it: the same for readers and writers, as documented. */
#define STORE_BUSY_MS 2000

/* Open (STORE_WRITE: create if missing, make the schema, recover runs left
 * 'running' by dead writers) or open read-only. Refuses files that are not
 * SQLite, not ours, of a newer schema, damaged, tampered with (any object
 * not exactly as ahascope creates it, any trigger), or locked for longer
 * than busy_ms. Returns NULL with e set ("<path>: <problem>"). */
Store *store_open(const char *path, StoreMode mode, int busy_ms, Err *e);

/* Close, committing pending steps (safe on NULL). Returns 0, or -1 with e
 * set if the final commit failed. */
int store_close(Store *s, Err *e);

/* The file's schema version (older than STORE_SCHEMA_VERSION only when opened read-only). */
int store_version(const Store *s);

/* Path the store was opened with. */
const char *store_path(const Store *s);

/* Limit the file to about max_bytes (SQLite max_page_count); writes beyond
 * it fail as "disk full". 0 = no limit. */
int store_set_limit(Store *s, int64_t max_bytes, Err *e);

/* Make every statement on s poll stop(ctx) while it works (every thousand
 * or so virtual-machine steps); nonzero stops it, and the call running it
 * fails. This is how a reader working for another thread (the TUI's pane
 * jobs) is cancelled within milliseconds. stop NULL: never stopped. */
void store_set_interrupt(Store *s, int (*stop)(void *ctx), void *ctx);

/* Steps per transaction (default 1: every step committed on its own). */
void store_set_commit_every(Store *s, int n);

/* Insert the runs row (status 'running', this process as writer,
 * info->program_version as its ahascope_version, which must be set) and
 * commit it; sets info->run_id. */
int store_run_begin(Store *s, StoreRunInfo *info, Err *e);

/* Record one step of the run. Commits when commit_every steps are pending;
 * *committed (if non-NULL) is set to the number of steps made durable by
 * this call (0 while batching). On failure the pending steps are rolled
 * back and everything committed before stays intact. */
int store_write_step(Store *s, int64_t run_id, const StepTrace *t, int *committed, Err *e);

/* Commit pending steps now. */
int store_flush(Store *s, Err *e);

/* Commit pending steps and set the run's final status ("done",
 * "interrupted" or "failed"); if the steps cannot be committed the run is
 * marked "failed" all the same and -1 returned with the commit's error. */
int store_run_end(Store *s, int64_t run_id, const char *status, Err *e);

/* Most (layer, head) cells a run read back may have: far above any real
 * model (Llama-3 405B has 126 x 128), low enough that whatever a database
 * claims, a reader's traces of that shape (the TUI's replay holds 64) fit
 * in memory. */
#define STORE_MAX_CELLS (1 << 18)

/* Read a run's row. Its status is the effective one: a 'running' run whose
 * writer on this host has died reads as 'interrupted'. Refuses a run whose
 * shape is impossible (beyond the engine's limits, or not the grid its
 * first recorded step holds), so callers may size allocations from it. */
int store_run_info(Store *s, int64_t run_id, StoreRunInfo *info, Err *e);

/* Free what store_run_info allocated. */
void store_run_info_free(StoreRunInfo *info);

/* A position the user bookmarked in the TUI and the note typed for it ("" for none). */
#define STORE_NOTE_MAX 512 /* bytes a note keeps (longer ones are cut at a character's start) */
typedef struct {
    int pos;
    char note[STORE_NOTE_MAX];
} StoreBookmark;

/* Bookmark position pos of run_id (the bookmarks table, in its own
 * transaction), with note (NULL or "" for none), replacing any bookmark
 * there; refuses a run the file lacks or a position past its last. 0, or
 * -1 with e set. */
int store_bookmark_put(Store *s, int64_t run_id, int pos, const char *note, Err *e);

/* Drop run_id's bookmark at pos (none there is no error). 0, or -1. */
int store_bookmark_drop(Store *s, int64_t run_id, int pos, Err *e);

/* Run run_id's bookmarks in position order into *out (malloc'd, NULL for
 * none); their count, or -1 with e set. */
int store_bookmarks(Store *s, int64_t run_id, StoreBookmark **out, Err *e);

/* Read steps pos0 … pos0+n-1 of a run into caller traces (shape must match
 * the run's; traces made with trace_new_top also get the recorded far
 * positions, up to their top_k). Returns the number of positions found
 * (stops at the first missing one), or -1 with e set. */
int store_read_steps(Store *s, int64_t run_id, int pos0, int n, StepTrace **traces, Err *e);

/* How far the writing of a run has come. */
typedef struct {
    char status[16]; /* the effective status (a dead writer's 'running' reads 'interrupted') */
    int n_tokens;    /* positions committed */
    int target;      /* positions it will have: a re-evaluation's parent's (the runs row keeps no
                      * target, and a re-evaluation feeds exactly its parent's tokens); 0 unknown */
    int writing;     /* the run is 'running': its writer lives and may add positions */
} StoreRunProgress;

/* Read where the writing of run_id stands. */
int store_run_progress(Store *s, int64_t run_id, StoreRunProgress *p, Err *e);

/* "run 2 is being written: 1124 of 2020 positions" (or "… 530 positions
 * so far" without a target) into buf; 0 and "" when the run is not being
 * written. */
int store_run_writing_line(int64_t run_id, const StoreRunProgress *p, char *buf, size_t cap);

/* One store_run_writing_line per run still being written, in run order
 * (nothing when none is). */
int store_print_writing(Store *s, FILE *out, Err *e);

/* Most far positions a database keeps per head (`record --attn-top`, the
 * TUI): they live in the decision's own row, eight words at most. */
#define STORE_ATTN_TOP_MAX 8

/* Most runs a file holds: the run id is the top of a decision's packed
 * key (store/SCHEMA.md), below 2^15. */
#define STORE_MAX_RUNS 32767

/* Far positions recorded per head for a run (record --attn-top K): K, 0
 * when none were, or -1 with e set. */
int store_run_attn_top(Store *s, int64_t run_id, Err *e);

/* Ids of runs, ascending (heap, caller frees). Returns the count or -1. */
int store_run_ids(Store *s, int64_t **ids, Err *e);

/* ---- commands over a database (read-only unless stated) ---- */

/* The output formats. STORE_FMT_CSV_TERM is CSV bound for a terminal: each
 * value escaped by engine/textout.h's terminal rule first, so a recorded
 * prompt's escape sequences show as text; the caller picks it (isatty). */
typedef enum { STORE_FMT_TABLE, STORE_FMT_CSV, STORE_FMT_JSON, STORE_FMT_CSV_TERM } StoreFormat;

/* Run SQL (one or more statements) on a read-only connection that also
 * refuses writes, ATTACH, writable pragmas, extension loading and
 * fts3_tokenizer(); print each result set to out in fmt. */
int store_query(Store *s, const char *sql, StoreFormat fmt, FILE *out, Err *e);

/* What any one value user SQL builds may hold (SQLITE_LIMIT_LENGTH on
 * its connection), and what SQLite may allocate in the whole process
 * while it runs (sqlite3_hard_heap_limit64, which is process-wide: a
 * recording writer beside the TUI's `:` pane shares it, and needs a few MB). */
#define STORE_SQL_MAX_LENGTH (64 << 20)
#define STORE_SQL_MAX_HEAP ((int64_t)512 << 20)

/* Bounds for store_query_limited, and what happened under them. */
typedef struct {
    long max_rows; /* rows over all the statements; 0: no cap */
    double timeout_s; /* seconds the whole SQL may run; 0: no time limit */
    /* Polled while SQLite works (every thousand or so virtual-machine
     * steps, so also inside a long sort or an endless recursive CTE that
     * yields no rows) with the rows printed so far; nonzero stops the query,
     * which then fails with "interrupted". NULL: never stopped. Runs on the
     * querying thread. */
    int (*interrupt)(void *ctx, long rows);
    void *ctx;
    long rows;  /* out: rows printed */
    int capped; /* out: 1 if rows beyond max_rows were left out (the statements after it did not run) */
    int timed_out; /* out: 1 if timeout_s stopped it (the error then says "stopped after S s") */
} StoreQueryLimits;

/* store_query within lim (NULL: no row cap or time limit). Every user
 * query, bounded or not, runs under STORE_SQL_MAX_LENGTH and
 * STORE_SQL_MAX_HEAP: the one place the CLI's `query` and the TUI's `:`
 * pane get their limits. The caller tells a stop it asked for from a
 * failure by what its interrupt callback returned. */
int store_query_limited(Store *s, const char *sql, StoreFormat fmt, FILE *out, StoreQueryLimits *lim, Err *e);

/* One line per run (id, status, tokens, policy, window, created, model,
 * prompt), in fmt; the table then says which runs are still being
 * written and how far they are (store_print_writing). */
int store_list_runs(Store *s, StoreFormat fmt, FILE *out, Err *e);

/* Write a run with its tokens and decisions: JSON {run, tokens, decisions},
 * or CSV (one row per decision joined with its token). */
int store_export(Store *s, int64_t run_id, StoreFormat fmt, FILE *out, Err *e);

/* Print a predictor's confusion against the oracle per layer, per head and
 * overall; with run_b > 0, where two runs' tokens and gates diverge, over
 * the positions both have (and when one is still being written, which
 * those are: "diff over positions 0-1123: run 2 is still being written"). */
int store_compare(Store *s, int64_t run_a, int64_t run_b, const char *predictor, FILE *out, Err *e);

/* Where the texts of runs a and b part: the first position whose token
 * differs, or the shorter run's length when none does. Past it positions
 * no longer hold the same text, so gates there are not comparable: the
 * diffs (compare, the TUI's D) count only positions before it. *parted
 * (may be NULL) is 1 when a token differs. The position, or -1 with e set. */
int store_texts_part(Store *s, int64_t a, int64_t b, int *parted, Err *e);

/* Append every run of the databases at inputs[0..n) into s (opened for
 * writing), renumbering run ids after the ones already there; prints one
 * line per input copied to log. stop (NULL: never) is polled between
 * inputs and inside long statements: nonzero rolls the input being copied
 * back, removes its scratch copy and fails with "interrupted". Scratch
 * copies that merges killed outright left in $TMPDIR are removed first. */
int store_merge(Store *s, const char *const *inputs, int n, FILE *log, int (*stop)(void *ctx), void *ctx, Err *e);

/* What store_merge would refuse of inputs[0..n) before it writes: one that
 * is the output file `out`, is not a database of ours, or (at the current
 * schema version) holds a summary that cannot be true. Checked before the
 * output is opened, so a refused merge leaves it as it was (not even
 * created); the output's side files are checked first. 0, or -1 with e
 * naming the input or side file. An older input is checked
 * again once upgraded, by store_merge. */
int store_merge_inputs_check(const char *out, const char *const *inputs, int n, Err *e);

/* An evaluation: settings in, summary out (the `evals` row). */
typedef struct {
    char label[64], policy[16], data[1024];
    char model[1024], model_sha256[65], routers[1024], static_heads[1024];
    int window, sinks;
    double tau, theta_logit, p;
    int n_seqs;
    long n_tokens;
    double perplexity, perplexity_full, kl_mean, global_share;
    double keys_read_frac; /* keys read per query head / full attention */
    double kv_read_frac;   /* KV positions read per KV head / full attention: the memory traffic */
    char matched_to[64]; /* "aha 0.2310" when thresholds were matched to a budget */
} StoreEval;

/* Confusion of one predictor against the oracle (an `eval_scores` row). */
typedef struct {
    char predictor[16]; /* decide_name() of the predictor */
    DecideCounts n;
} StoreScore;

/* Whether an evaluation's summary can be true: a KL not below 0, a
 * perplexity not below 1, shares within [0, 1], counts not negative.
 * 1 with why set (the column and its value) when not; 0 when it can. */
int store_check_eval(const StoreEval *ev, char *why, size_t cap);

/* Insert the evals row (metrics NULL until store_eval_end); sets *id. */
int store_eval_begin(Store *s, const StoreEval *ev, int64_t *id, Err *e);

/* Fill in the summary and the per-predictor scores of evaluation id. */
int store_eval_end(Store *s, int64_t id, const StoreEval *ev, const StoreScore *scores, int n_scores, Err *e);

/* A finished evaluation read back: its evals row (settings and summary). */
typedef struct {
    int64_t eval_id;
    StoreEval ev;
} StoreEvalRow;

/* Every evaluation of the file whose summary was written (store_eval_end),
 * in eval_id order, at most 2^20 (more is refused); *out is heap (caller
 * frees). Returns the count or -1. */
int store_evals(Store *s, StoreEvalRow **out, Err *e);

/* The runs recorded for evaluation eval_id, in run order; *ids is heap
 * (caller frees). Returns the count or -1. */
int store_eval_run_ids(Store *s, int64_t eval_id, int64_t **ids, Err *e);

/* One head's oracle global rate over some runs. */
typedef struct {
    int layer, head;
    double oracle_rate; /* share of decisions with oracle_logit > the run's logit(θ) */
    long n;             /* decisions counted */
} StoreHeadRate;

/* Oracle global rate of every head over runs[0..n_runs) (same shape,
 * recorded with oracle values), highest first, ties by (layer, head).
 * *out is heap (caller frees); returns the number of heads or -1. */
int store_head_rates(Store *s, const int64_t *runs, int n_runs, StoreHeadRate **out, Err *e);

#endif
