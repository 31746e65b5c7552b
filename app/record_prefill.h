/* record_prefill.h — a prompt's prefill written into a run as it is fed.
 *
 * Each 64-position chunk is written to the store as soon as it is fed and
 * its traces freed, so only one chunk's traces are held at a time (a
 * 32 768-token prompt of 256 heads would otherwise hold ~680 MB of them)
 * and the file is at most a chunk behind the engine. `record` and
 * `eval --tasks --db` both record prompts this way.
 */
#ifndef AHASCOPE_RECORD_PREFILL_H
#define AHASCOPE_RECORD_PREFILL_H

#include <signal.h>
#include <stdint.h>

#include "engine/session.h"
#include "store/store.h"

/* Write steps t[0..n) into run and say which are durable: *pending is the
 * last position written but not committed (-1: none), and with progress
 * each commit prints "committed pos P" on stderr. 0, or -1 with e set. */
int record_steps(Store *st, int64_t run, StepTrace **t, int n, int progress, int *pending, Err *e);

/* Prefill s's pending prompt into run, top_k far positions a head, drawing
 * the prefill line (progress: --progress) and stopping at the next layer
 * once *stop is set. *fed is the positions fed (fewer than pending after a
 * stop); 0, or -1 with e set when a write or an allocation failed. */
int record_prefill(Session *s, Store *st, int64_t run, int top_k, int progress, const volatile sig_atomic_t *stop,
                   int *fed, int *pending, Err *e);

#endif
