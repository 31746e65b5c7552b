/* tui_worker.h — the engine thread behind the TUI.
 *
 * The worker owns the session (model state, KV cache) and the database
 * writer. The UI thread never touches either: it posts requests (step,
 * play, restart under new settings, attention weights) and takes finished
 * traces, one copy per position, under the worker's mutex. So a slow step
 * of a big model never blocks a key press.
 */
#ifndef AHASCOPE_TUI_WORKER_H
#define AHASCOPE_TUI_WORKER_H

#include <pthread.h>

#include "engine/session.h"
#include "store/store.h"

typedef struct {
    /* set before tui_worker_start, then read-only */
    const Model *model;
    const Tokenizer *tok;
    Store *store;             /* writer, or NULL: not recording (owned by the worker once started) */
    StoreRunInfo info;        /* template of every run's row */
    int steps, threads;
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
    int64_t next_parent;
    int attn_req, attn_pos, attn_layer, attn_head;

    /* results, under mu */
    StepTrace **out;          /* finished traces the UI has not taken yet */
    int n_out, cap_out;
    int cleared;              /* a new run started: the UI drops its history first */
    int64_t run_id;           /* current run in the database (0: not recording) */
    AttnConfig attn;          /* settings of the current run */
    int finished;             /* the sequence cannot grow (context, steps or BOS) */
    double tok_s;
    float *attn_w;            /* [seq_len] weights answered for attn_* below */
    int attn_ready, attn_n, attn_rpos, attn_rlayer, attn_rhead;
    char message[600];        /* error or notice for the status line ("" none) */
    int *ids, n_ids, n_prompt; /* tokens fed so far (a copy), for restarts */

    /* the worker's own */
    Session ses;
    int have_ses;
} TuiWorker;

/* Start the thread with a first run on prompt under attn. Returns 0, or -1
 * with e set (nothing started). */
int tui_worker_start(TuiWorker *w, const AttnConfig *attn, const char *prompt, Err *e);

/* Ask for the end, wait for the thread, end the run as done, free. */
void tui_worker_stop(TuiWorker *w);

/* Start a new run: on new text (prompt != NULL), or teacher-forcing the
 * current tokens under attn with the current run as parent. Takes the
 * mutex itself. */
void tui_worker_restart(TuiWorker *w, const AttnConfig *attn, const char *prompt);

#endif
