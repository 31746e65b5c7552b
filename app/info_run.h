/* info_run.h — what `ahascope info` runs once app/cmd_info.c has read its
 * flags: the model of o loaded without its weights' bytes copied, its
 * tokenizer if there is one, and a description on stdout (architecture,
 * dimensions, dtypes, the KV cache at the full context, parameters,
 * bytes, RoPE, tokenizer, routers), as text or one JSON object. */
#ifndef AHASCOPE_INFO_RUN_H
#define AHASCOPE_INFO_RUN_H

#include "app/args.h"

/* Describe o's model (and o->routers, checked against it); 0, or -1 with
 * e set naming the file that is bad. */
int info_run(RunOpts *o, int json, Err *e);

#endif
