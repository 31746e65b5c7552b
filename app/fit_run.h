/* fit_run.h — what `ahascope fit` runs once app/cmd_fit.c has read its
 * flags: the fit of routers to the oracle's labels (or one shard's data
 * pass of it, or the fit on every shard's examples), written to --out.
 * Each returns 0, or -1 with e set; progress goes to stderr. */
#ifndef AHASCOPE_FIT_RUN_H
#define AHASCOPE_FIT_RUN_H

#include "app/args.h"

typedef struct {
    RunOpts o;
    const char *out, *data, *weight;
    ArgsShard shard;         /* --shard I/N: the data pass of these sequences only, to --out */
    const char *from_shards; /* --from-shards A,B,...: fit on the shards' examples */
    long seq_len, self_n, iters, threads;
    double l2, share, balance;
    int have_share, have_self;
} FitOpts;

/* Load the model and the data, then fit and write the routers (with
 * --shard I/N: write this shard's labelled examples instead). */
int fit_run(FitOpts *t, Err *e);

/* --from-shards: fit on every shard's examples, without running the model. */
int fit_run_from_shards(FitOpts *t, Err *e);

#endif
