/* calibrate_run.h — what `ahascope calibrate` runs once app/cmd_calibrate.c
 * has read its flags: the oracle global rate of every head pooled over the
 * given runs of --db, and the --budget of highest rate written to --out as
 * a list --static-heads reads, or (--format duo) every KV head's rate as a
 * DuoAttention table; a line on stdout says what was written. */
#ifndef AHASCOPE_CALIBRATE_RUN_H
#define AHASCOPE_CALIBRATE_RUN_H

#include <stdint.h>

#include "engine/err.h"
#include "engine/headset.h"

#define CAL_MAX_RUNS 1024

typedef struct {
    const char *db, *out, *budget;
    HeadBudget b;      /* K heads, or P percent of them */
    int duo;           /* --format duo */
    int64_t runs[CAL_MAX_RUNS];
    int n_runs;
} CalOpts;

/* Read, choose and write as c says; 0, or -1 with e set. */
int calibrate_run(const CalOpts *c, Err *e);

#endif
