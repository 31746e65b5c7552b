/* sweep_run.h — what `ahascope sweep` runs once app/cmd_sweep.c has read
 * its flags: every combination of its lists evaluated as `eval` evaluates
 * one setting (app/eval_table.h), or the points a database recorded. Each
 * returns 0, or -1 with e set, the table and front on stdout. */
#ifndef AHASCOPE_SWEEP_RUN_H
#define AHASCOPE_SWEEP_RUN_H

#include "app/eval_table.h"

#define MAX_LIST 32 /* values a list may hold */

typedef struct {
    EvalOpts x;
    const char *policies, *windows, *thetas, *taus, *ps;
} SweepOpts;

/* Every policy × window × knob of w on the same data: each point's row,
 * the Pareto front, the window curves, --svg and --plot. */
int sweep_run(SweepOpts *w, Err *e);

/* --from-db: the sweep points recorded in w->x.from_db (label 'sweep'),
 * shards combined, with their front and window curves. */
int sweep_run_recorded(SweepOpts *w, Err *e);

#endif
