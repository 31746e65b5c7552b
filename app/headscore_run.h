/* headscore_run.h — what `ahascope calibrate --method NAME` runs: the model
 * (full attention, greedy) over the --data items or over random repeated
 * sequences, every query head scored by engine/headscore.h, and the head
 * table written to --out: a row per query head with its KV head's score
 * (the default), DuoAttention's table of KV-head scores (--format duo), or
 * the Retrieval-Head JSON of per-unit scores (--format json). duo-train
 * trains its gates instead of reading rows (app/duo_train.h). A line on
 * stdout says what was written. */
#ifndef AHASCOPE_HEADSCORE_RUN_H
#define AHASCOPE_HEADSCORE_RUN_H

#include "app/calibrate_run.h"

/* The method's name as --method spells it ("retrieval"), "?" out of range. */
const char *headscore_method_name(CalMethod m);

/* The method --method names: 0, or -1 with a usage error. */
int headscore_method_parse(const char *s, CalMethod *m, Err *e);

/* Score and write as c says (c->method is not CAL_ORACLE); 0, or -1 with e set. */
int headscore_run(CalOpts *c, Err *e);

#endif
