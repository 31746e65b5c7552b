/* progress.h — the one progress line of long jobs on stderr, and the
 * prefill of a prompt that draws it.
 *
 * A line is redrawn in place (\r) when stderr is a terminal, at most ten
 * times a second; written as whole lines, one per tenth of the job, when
 * it is not (a log file). Nothing goes to stdout, so what a command prints
 * there is the same with or without a bar.
 */
#ifndef AHASCOPE_PROGRESS_H
#define AHASCOPE_PROGRESS_H

#include <signal.h>

#include "engine/session.h"

/* Positions a prefill with progress feeds per forward call: a report every
 * 64 tokens. Chunks of 32 to 256 prefilled 1024 tokens of the 110M shape
 * within the noise of the shared host (engine/PERFORMANCE.md, "Long
 * prompts"); much smaller ones would widen a half-precision model's
 * weights once per few tokens. */
#define PROGRESS_PREFILL_CHUNK 64

typedef struct {
    const char *label;   /* "prefill" */
    int forced;          /* --progress: draw from the start, even without a terminal */
    int tty;             /* stderr is a terminal: redraw in place */
    double t0, last;     /* start; last draw */
    int drawn;           /* something is on the line (a final newline is owed) */
    int tenth;           /* the last tenth written as a line (no terminal) */
} Progress;

/* Start a line labelled `label`. On a terminal it shows only once the job
 * has run half a second (a short one leaves stderr alone) unless forced;
 * without a terminal only when forced. */
void progress_start(Progress *p, const char *label, int forced);

/* Show done of total units ("tok") with the rate and time left; the call
 * with done == total ends the line. */
void progress_update(Progress *p, long done, long total, const char *unit);

/* The counted line of a job of `total` steps started at t0 (clock_now):
 * "LABEL [  3/8]  12.3 s, ETA   45 s", redrawn in place on a terminal
 * (tty) and written once, at the end, when not. */
void progress_count(const char *label, int done, int total, double t0, int tty);

/* A 20-cell bar for a fraction in [0, 1], '#' filled and '-' not, into out
 * (at least 21 bytes): the same bar everywhere one is drawn. */
void progress_bar(char *out, double frac);

/* Prefill s's pending prompt as session_prefill does (traces likewise),
 * drawing a "prefill" line on stderr (forced: --progress) and stopping
 * at the next layer once *stop is set (a signal handler's flag; NULL: never).
 * Returns the positions fed. */
int progress_prefill(Session *s, StepTrace **traces, int forced, const volatile sig_atomic_t *stop);

/* Takes the traces of positions [from, to) as soon as their chunk is fed
 * (a recorder writes them then, so the store keeps pace with the engine,
 * and may free them and make room for the next chunk: traces[to] …
 * traces[to + PROGRESS_PREFILL_CHUNK - 1] are read once it returns).
 * Nonzero stops the prefill at once (a write failed). */
typedef int (*PrefillSink)(void *user, StepTrace **traces, int from, int to);

/* progress_prefill handing each chunk's traces to sink as the chunk ends;
 * the last chunk is handed over before it returns. */
int progress_prefill_into(Session *s, StepTrace **traces, int forced, const volatile sig_atomic_t *stop,
                          PrefillSink sink, void *user);

#endif
