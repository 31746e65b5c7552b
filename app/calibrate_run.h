/* calibrate_run.h — what `ahascope calibrate` runs once app/cmd_calibrate.c
 * has read its flags: the oracle global rate of every head pooled over the
 * given runs of --db, and the --budget of highest rate written to --out as
 * a list --static-heads reads, or (--format duo) every KV head's rate as a
 * DuoAttention table; a line on stdout says what was written. */
#ifndef AHASCOPE_CALIBRATE_RUN_H
#define AHASCOPE_CALIBRATE_RUN_H

#include <stdint.h>

#include "app/args.h"
#include "engine/err.h"
#include "engine/headset.h"

#define CAL_MAX_RUNS 1024

/* --method: the oracle rates of recorded runs (none given), or a score
 * the model is run for (app/headscore_run.h). */
typedef enum { CAL_ORACLE, CAL_RETRIEVAL, CAL_INDUCTION, CAL_DUO_FAST, CAL_DUO_TRAIN, CAL_NEEDLE_WEIGHT } CalMethod;

typedef struct {
    const char *db, *out, *budget;
    HeadBudget b;      /* K heads, or P percent of them */
    int duo;           /* --format duo */
    int json;          /* --format json: the Retrieval-Head form {"L-H": [per-unit scores]} */
    int64_t runs[CAL_MAX_RUNS];
    int n_runs;
    CalMethod method;
    const char *data;  /* --data ITEMS: task items (JSON lines) */
    RunOpts run;       /* --model, --tokenizer, --context, --kv-dtype */
    int gen;           /* retrieval: tokens generated after each prompt */
    int sequences, period; /* induction: random sequences, tokens in each repeated block */
    int duo_len, sink, recent; /* duo-fast: positions the mean query and key repeat over; the streaming sizes */
    long seed;         /* induction: the sequences' stream; duo-train: the batches' */
    int steps, batch;  /* duo-train: optimiser steps, items a step */
    double lr, lambda; /* duo-train: AdamW's rate, the weight of the gates' L1 penalty */
    int have_lambda;
    int have_seed, have_sink, have_recent; /* given: 0 is a value of theirs */
} CalOpts;

/* Read, choose and write as c says; 0, or -1 with e set. */
int calibrate_run(const CalOpts *c, Err *e);

#endif
