/* trace_run.h — what `ahascope trace` runs once app/cmd_trace.c has read
 * its flags: the model run on o's prompt and settings, one JSON object a
 * position fed (prompt and generated) on stdout, each holding every
 * head's fields (engine/trace.h's TRACE_HEAD_FIELDS), valid UTF-8. */
#ifndef AHASCOPE_TRACE_RUN_H
#define AHASCOPE_TRACE_RUN_H

#include "app/args.h"

/* Run and print; progress: a prefill bar on stderr even off a terminal.
 * 0, or -1 with e set. */
int trace_run(RunOpts *o, int progress, Err *e);

#endif
