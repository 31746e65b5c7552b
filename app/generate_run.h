/* generate_run.h — what `ahascope generate` runs once app/cmd_generate.c
 * has read its flags: text (or ids) continuing o's prompt, llama2.c-style,
 * streamed on stdout as each token is sampled. */
#ifndef AHASCOPE_GENERATE_RUN_H
#define AHASCOPE_GENERATE_RUN_H

#include "app/args.h"

/* Generate under o's settings on threads threads: the text, or with
 * print_ids one line of token ids; progress: a prefill bar on stderr even
 * off a terminal. 0, or -1 with e set. */
int generate_run(RunOpts *o, int print_ids, int progress, int threads, Err *e);

#endif
