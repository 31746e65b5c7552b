/* job.h — a pane job: a read of the database run off the TUI's UI thread.
 *
 * Everything the TUI reads a whole run for (the `:` query, the summary and
 * the diff, the plots, the run list, the export) is a job: a work function
 * run on a thread of its own over a read-only connection of its own
 * (store_open STORE_READ), so a run of thousands of positions on hundreds
 * of heads never freezes the screen. This is the one place the UI thread
 * and a job's thread meet: the UI starts a job, polls it each frame
 * (tui_job_progress, tui_job_take) and may cancel it; the job's thread
 * runs the work, publishes a count, and polls the cancel flag through its
 * connection's interrupt (store_set_interrupt), so Esc stops even one long
 * SQL statement within milliseconds. A job that reads a run a chunk at a
 * time may hand each chunk over as it comes (tui_job_put, taken with
 * tui_job_take_part): the two threads share nothing else, and the lock that
 * guards that hand-over is held only to link or unlink one piece, never
 * across SQLite work, so the UI thread never waits on the job's reads.
 *
 * One job per TuiJob at a time: starting another cancels the one running
 * and drops its result. The UI never waits for it: a cancelled job winds
 * down on its own thread and is joined once it has (or at tui_job_stop).
 */
#ifndef AHASCOPE_TUI_JOB_H
#define AHASCOPE_TUI_JOB_H

#include <stddef.h>
#include <stdio.h>

#include "engine/err.h"
#include "store/store.h"

typedef struct TuiJobRun TuiJobRun;

/* The work, on the job's thread: read st (the job's own read-only
 * connection) and write what the pane shows to out; 0, or -1 with e set.
 * Its statements stop by themselves once cancelled; a loop of its own asks
 * tui_job_cancelled between chunks. */
typedef int (*TuiJobWork)(TuiJobRun *r, Store *st, FILE *out, Err *e);

/* Frees what a work left in its arguments (traces, strings), before the
 * arguments themselves go: a dropped job's result is never looked at. */
typedef void (*TuiJobRelease)(void *arg);

/* How a job ended. */
typedef enum { TUI_JOB_OK, TUI_JOB_FAILED, TUI_JOB_CANCELLED } TuiJobEnd;

/* A finished job, handed to the UI thread (tui_job_take). */
typedef struct {
    int kind;      /* the caller's tag, as given to tui_job_start */
    void *arg;     /* the work's arguments, as it left them (heap): a work may answer through them */
    TuiJobRelease release; /* frees what the work left in arg (tui_job_result_free calls it) */
    char *text;    /* what the work wrote (heap, may be NULL) */
    TuiJobEnd end;
    char msg[600]; /* the error, when it failed */
    long count;    /* the last count it published */
    double secs;
} TuiJobResult;

/* The UI thread's handle: zero it before first use. */
typedef struct {
    TuiJobRun *cur;     /* running, or finished and not yet taken; NULL none */
    TuiJobRun *dropped; /* cancelled ones still winding down (a list) */
} TuiJob;

/* Start work over the database at db, tagged kind, with a copy of the
 * arg_size bytes at arg (the work reads them through tui_job_arg; release,
 * if not NULL, frees what it leaves in them). A job still running is
 * cancelled and its result dropped. Fails only when out of memory or the
 * thread cannot start. */
int tui_job_start(TuiJob *j, const char *db, int kind, TuiJobWork work, const void *arg, size_t arg_size,
                  TuiJobRelease release, Err *e);

/* tui_job_start for a work that opens what it needs itself (`s` and `R` of
 * a run not recorded write a scratch database): it is handed st NULL. */
int tui_job_start_own(TuiJob *j, int kind, TuiJobWork work, const void *arg, size_t arg_size, TuiJobRelease release,
                      Err *e);

/* 1 while a job runs, with its kind, the count it last published and the
 * seconds since it started. */
int tui_job_progress(const TuiJob *j, int *kind, long *count, double *secs);

/* Ask the running job to stop; tui_job_take then hands over a
 * TUI_JOB_CANCELLED result (or its result, if it finished first).
 * Returns 1 if one was running. */
int tui_job_cancel(TuiJob *j);

/* If the job has finished and every piece it handed over has been taken,
 * move its result into *r (freed with tui_job_result_free) and return 1;
 * else 0. */
int tui_job_take(TuiJob *j, TuiJobResult *r);

/* The oldest piece the current job has handed over (tui_job_put) and the
 * UI has not taken, now the caller's; NULL when there is none. */
void *tui_job_take_part(TuiJob *j);

/* Free what a taken result holds. */
void tui_job_result_free(TuiJobResult *r);

/* Cancel every job of j and wait for their threads (at exit). */
void tui_job_stop(TuiJob *j);

/* --- for the work, on the job's thread --- */

/* The job's copy of its arguments. */
void *tui_job_arg(TuiJobRun *r);

/* 1 once the job has been cancelled: the work should return soon. */
int tui_job_cancelled(TuiJobRun *r);

/* Publish how far the work has come (rows, positions), for the progress line. */
void tui_job_count(TuiJobRun *r, long n);

/* Hand a piece of the result (heap) to the UI thread now, so a long read
 * shows as it comes; part_free frees it if the job is dropped before the UI
 * takes it. 0, or -1 when out of memory (the piece is then freed). */
int tui_job_put(TuiJobRun *r, void *part, TuiJobRelease part_free);

#endif
