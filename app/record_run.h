/* record_run.h — what `ahascope record` runs once app/cmd_record.c has read
 * its flags: one run per prompt (--prompt, or each line of --prompts this
 * shard owns), every position and every head's decision recorded into
 * --db as the run goes, the run id printed on stdout. Ctrl-C or SIGTERM
 * ends the run under way as interrupted, what was committed kept. */
#ifndef AHASCOPE_RECORD_RUN_H
#define AHASCOPE_RECORD_RUN_H

#include "app/args.h"

typedef struct {
    const char *db;
    long commit_every, threads;
    long attn_top; /* far positions ranked per head (0: none) */
    double max_mb;
    int progress;
    const char *prompts; /* --prompts FILE: one run per line */
    ArgsShard shard;     /* --shard I/N: the lines (k-1) mod N = I only */
} RecordOpts;

/* Record o's prompt (or ro->prompts' lines) under o's settings; 0, or -1
 * with e set. *stopped: a signal ended it (the command exits 130). */
int record_run(RunOpts *o, const RecordOpts *ro, int *stopped, Err *e);

#endif
