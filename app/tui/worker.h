/* worker.h — the engine thread behind the TUI.
 *
 * The worker owns the session (model state, KV cache) and the database
 * writer. The UI thread never touches either, nor the worker's mutex: it
 * asks through the functions below (step, play, re-evaluate, new prompt,
 * attention weights) and takes what is finished with tui_worker_take,
 * which hands over the traces themselves (made once, by the step, then
 * owned by the UI). So a slow step of a big model never blocks a key press.
 *
 * A prompt longer than one chunk (PROGRESS_PREFILL_CHUNK) is prefilled
 * chunk by chunk, publishing how far it has come after each, so the UI
 * can show a long prefill's progress; a quit, or a new prompt, stops it
 * at the next layer (session.h) rather than after the whole prompt.
 *
 * A re-evaluation always reports its progress the same way, and stops
 * between chunks for Esc (tui_worker_stop_reeval) or for a newer request:
 * the child run keeps the positions fed so far and ends as 'interrupted',
 * the parent's tokens stay the ones a next request re-evaluates. After
 * Esc the next child's parent is the run on screen again; a newer request
 * that stopped it takes the stopped run as parent, keeping one chain,
 * unless the stopped run kept no position: then its own parent is the next's.
 *
 * Lineage: requests coalesce (a re-evaluation asked for before the worker
 * started the previous one replaces it), and each re-evaluation's parent is
 * the last run the worker started (unless Esc stopped it), so rapid keys
 * make one chain of runs.
 */
#ifndef AHASCOPE_TUI_WORKER_H
#define AHASCOPE_TUI_WORKER_H

#include <pthread.h>

#include "app/ablate_diff.h"
#include "engine/router_why.h"
#include "engine/session.h"
#include "store/store.h"

typedef struct {
    /* set before tui_worker_start, then read-only */
    const Model *model;
    const Tokenizer *tok;
    Store *store;             /* writer, or NULL: not recording (owned by the worker once started) */
    StoreRunInfo info;        /* template of every run's row */
    int steps, threads;       /* steps: as asked (or the default); the run's own is ses.steps */
    int steps_given;          /* --steps was given: a longer prompt is cut to it (app_steps_for) */
    int attn_top;             /* far positions ranked per head and recorded (attn_top table); 0 none */
    float temperature, topp;
    uint64_t seed;

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;

    /* requests, under mu */
    int quit, want_steps, playing;
    double speed;             /* play: steps per second (0 = as fast as possible) */
    int restart;              /* start over with the fields below */
    AttnConfig next_attn;
    char *next_prompt;        /* heap; NULL with next_ids */
    int *next_ids, n_next_ids, next_n_prompt; /* teacher-forced tokens (heap) */
    int next_reeval;          /* the restart re-evaluates the current tokens (its parent: last_run) */
    int next_diff_k;          /* > 0: once re-evaluated, compare it with its parent (ablate_diff.h), k tokens on */
    int attn_req, attn_pos, attn_layer, attn_head;
    int stop_reeval;          /* Esc: stop the running re-evaluation at the next chunk */
    int pat_req, pat_layer, pat_head, pat_n, pat_bin; /* a head's attention pattern over positions 0 … pat_n-1 */
    int rows_req, rows_n;     /* every head's full rows over positions 0 … rows_n-1 (the paths' rollout) */
    int why_req, why_pos, why_layer, why_head; /* what drove a head's router at a position (router_why.h) */

    /* results, under mu */
    StepTrace **out;          /* finished traces the UI has not taken yet */
    int n_out, cap_out;
    int cleared;              /* a new run started: the UI drops its history first */
    int64_t run_id;           /* current run in the database (0: not recording, or ended) */
    int64_t last_run;         /* the last run begun, kept after it ends: the parent of a re-evaluation */
    int64_t shown_run;        /* the run whose positions the UI was last given (a stopped child never is) */
    AttnConfig attn;          /* settings of the current run */
    int finished;             /* the sequence cannot grow (context, steps or BOS) */
    int busy;                 /* a step, prefill or restart is under way */
    double tok_s;
    int prefilling;           /* a long prefill is under way (the three below say how far) */
    int prefill_done, prefill_total;
    double prefill_t0, prefill_s; /* its start; seconds it has run (or took) */
    float *attn_w;            /* [seq_len] weights answered for attn_* below */
    int attn_ready, attn_n, attn_rpos, attn_rlayer, attn_rhead;
    float *pat_w;             /* the pattern answered (owned until taken), for the pat_r* below */
    int pat_rn, pat_rbin, pat_rlayer, pat_rhead;
    float *rows_w;            /* the rows answered (owned until taken): [cell][q][k] over rows_rn positions */
    int rows_ready, rows_rn, rows_rc; /* rows_rc: 0, -1 none kept, -2 too large, -3 out of memory */
    int why_ready, why_rc, why_rpos, why_rlayer, why_rhead; /* the why answered: its return (tui_worker_take_why) */
    RouterWhy why;
    int why_kept;             /* the session keeps every position's router input (else a why is recomputed) */
    int why_feeding;          /* a recompute is under way, a chunk between other work (why_feed) */
    int why_fed, why_to_feed; /* its progress: positions fed of those it needs */
    int why_cancel;           /* Esc: stop it at the next chunk */
    char message[600];        /* error or notice for the status line ("" none) */
    int reeval;               /* the restart under way re-evaluates (progress: prefill_done of prefill_total) */
    int64_t reeval_parent;    /* the run it re-evaluates */
    AttnConfig reeval_from;   /* the parent's settings, the worker's again if it stops */
    int reeval_stopped;       /* one stopped since the last take: 1 by Esc, 2 replaced by a newer request */
    int reeval_done, reeval_total; /* positions the stopped one kept, of those it had to compute */
    int64_t reeval_run;       /* the stopped child run (0: not recorded) */
    int *ids, n_ids, n_prompt; /* tokens fed so far (a copy), for restarts */
    int diffing;              /* a re-evaluated child is being compared with its parent */
    AblateDiff *diff;         /* the comparison done and not taken (owned until taken), or NULL */
    int diff_stopped;         /* the last one was stopped (Esc, a newer request, the end) and not reported */
    int64_t diff_run, diff_parent; /* the child run and its parent it compared (0: not recorded) */

    /* the worker's own */
    Session ses;
    int have_ses;
    StepTrace **pre;          /* the prefill under way's traces: written to the store a chunk at a time */
    int pre_written;          /* positions of pre already in the store */
    RouterWhyFeed why_feed;   /* the recompute under way */
    int why_turn;             /* the last turn was a chunk of the recompute: a step wanted goes next */
    long chunk_delay_ms;      /* test knob AHASCOPE_TEST_PREFILL_DELAY_MS: each chunk of a prefill or re-evaluation takes this longer */
    long reeval_delay_ms;     /* test knob AHASCOPE_TEST_REEVAL_DELAY_MS: a re-evaluation's chunks only (-1: chunk_delay_ms) */
} TuiWorker;

/* Start the thread with a first run on prompt under attn. Returns 0, or -1
 * with e set (nothing started). */
int tui_worker_start(TuiWorker *w, const AttnConfig *attn, const char *prompt, Err *e);

/* Ask for the end, wait for the thread, end the run as done, free. */
void tui_worker_stop(TuiWorker *w);

/* Start a new run: on new text (prompt != NULL), or teacher-forcing the
 * current tokens under attn with the last run begun as parent. */
void tui_worker_restart(TuiWorker *w, const AttnConfig *attn, const char *prompt);

/* What the UI takes each frame. */
typedef struct {
    StepTrace **traces;   /* finished traces, in order; the caller owns them and the array */
    int n;
    int new_run;          /* a new run began: these traces (if any) are its first */
    int64_t run_id;       /* the run they belong to (0: not recording) */
    AttnConfig attn;      /* its settings */
    int finished;         /* the sequence cannot grow */
    int busy;             /* positions are being computed, or a step or restart waits for the worker */
    double tok_s;
    int prefilling;       /* a long prompt is being prefilled: done of total positions, secs so far */
    int prefill_done, prefill_total; /* the last long prefill's (kept once it ends; total 0: none yet) */
    double prefill_s;
    char message[600];    /* a notice or error for the status line, "" none */
    int reevaluating;     /* a re-evaluation of reeval_parent runs (prefill_* say how far) */
    int64_t reeval_parent;
    int reeval_stopped;   /* one stopped: 1 by Esc, 2 replaced; it kept reeval_done of reeval_total as reeval_run */
    int reeval_done, reeval_total;
    int64_t reeval_run;
    int64_t shown_run;    /* the recorded run whose positions the UI holds (0: none, or not recording) */
    int attn_ready, attn_n, attn_pos, attn_layer, attn_head; /* weights copied into the caller's buffer */
} TuiTake;

/* Take everything finished since the last call; attention weights, when
 * an answer is ready, are copied into attn_buf (seq_len floats). */
void tui_worker_take(TuiWorker *w, TuiTake *out, float *attn_buf);

/* tui_worker_restart re-evaluating under attn, then, once the child's
 * positions are all computed and handed over, comparing it with the run it
 * re-evaluates (ablate_diff.h: the parent's settings are the ones in force
 * now) and generating k greedy tokens from the end under each; the result
 * comes through tui_worker_take_diff. Esc (tui_worker_stop_reeval) or a
 * newer request stops the comparison. */
void tui_worker_restart_compare(TuiWorker *w, const AttnConfig *attn, int k);

/* The comparison finished since the last call (the caller owns it: free
 * with ablate_diff_free, then free), with the child run and its parent;
 * NULL when none is ready. *stopped is 1 when one was stopped since. */
AblateDiff *tui_worker_take_diff(TuiWorker *w, int *stopped, int64_t *run, int64_t *parent);

/* 1 while a comparison is being computed. */
int tui_worker_diffing(TuiWorker *w);

/* Ask for one more step; returns 0 (asking nothing) if the sequence is finished. */
int tui_worker_step(TuiWorker *w);

/* Play (steps per second, 0 as fast as it goes) or pause; returns whether
 * it now plays (never after the end). A new speed applies at once. */
int tui_worker_play(TuiWorker *w, int playing, double speed);

/* Ask for the attention weights of (pos, layer, head) of the current run. */
void tui_worker_request_attention(TuiWorker *w, int pos, int layer, int head);

/* Ask for the attention pattern of (layer, head) over the first n
 * positions of the current run, pooled bin positions a cell
 * (engine/attn_pattern.h); a newer request replaces one not begun. */
void tui_worker_request_pattern(TuiWorker *w, int layer, int head, int n, int bin);

/* The pattern answered since the last call, if any: its grid (the caller
 * owns it from now on) and what it covers; NULL when none is ready. */
float *tui_worker_take_pattern(TuiWorker *w, int *layer, int *head, int *n, int *bin);

/* Floats every head's full rows may take at most (64 MiB): longer runs or
 * wider models get no rollout, and the paths view says so. */
#define TUI_ROWS_MAX_FLOATS (1 << 24)

/* Ask for every head's full attention rows over the first n positions of
 * the current run (attn_pattern at one position a cell, each head as if
 * it went global); a newer request replaces one not begun. */
void tui_worker_request_rows(TuiWorker *w, int n);

/* The rows answered since the last call: 1 with *rows (owned by the caller
 * from now on; NULL unless *rc is 0), *n and *rc (0; -1 the session keeps
 * no queries; -2 over TUI_ROWS_MAX_FLOATS; -3 out of memory), else 0. */
int tui_worker_take_rows(TuiWorker *w, float **rows, int *n, int *rc);

/* Ask what drove the router of (layer, head) at pos of the current run:
 * its logit's largest input terms (engine/router_why.h). */
void tui_worker_request_why(TuiWorker *w, int pos, int layer, int head);

/* The why answered since the last call: 1 with *out, what it covers and
 * rc (0; -1 the run has no router; -2 the position is not fed in this
 * session yet; -3 the inputs could not be recomputed; -4 the recompute was
 * stopped), else 0. A model whose router inputs would take over
 * TUI_WHY_KEEP_MB is not charged them: its why is recomputed by feeding
 * the tokens up to the position afresh, on the worker's thread a chunk at
 * a time, steps, patterns and attention rows answered between chunks. */
int tui_worker_take_why(TuiWorker *w, RouterWhy *out, int *rc, int *pos, int *layer, int *head);

/* 1 while a why is being recomputed, with the positions fed of those it
 * needs and what it explains. */
int tui_worker_why_progress(TuiWorker *w, int *fed, int *to_feed, int *pos, int *layer, int *head);

/* Stop the why being recomputed at its next chunk (it is then answered
 * with rc -4). Returns 1 if one was under way. */
int tui_worker_cancel_why(TuiWorker *w);

/* Megabytes of router inputs (layers × context × width) a session keeps
 * at most so that the inspector can explain any position's router at
 * once; past it each why is recomputed (test knob: the environment's
 * AHASCOPE_TEST_WHY_KEEP_MB replaces it). */
#define TUI_WHY_KEEP_MB 256

/* Esc on a re-evaluation: stop the running one at the next chunk (1; its
 * end comes through tui_worker_take), or drop one asked for and not begun
 * (2), or stop a comparison under way (3; tui_worker_take_diff says so);
 * 0 if there is none. */
int tui_worker_stop_reeval(TuiWorker *w);

/* The run being recorded (0: none). */
int64_t tui_worker_run_id(TuiWorker *w);

#endif
