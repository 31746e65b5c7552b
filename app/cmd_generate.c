/* `ahascope generate`: text (or ids) from a prompt, llama2.c-style. This
 * file reads the flags by their table; app/generate_run.h generates. */
#include <stddef.h>
#include <stdio.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/generate_run.h"
#include "engine/pool.h"

typedef struct {
    int ids, progress;
    long threads;
} GenerateOpts;

static const ArgSpec GENERATE_ROWS[] = {
    {"--progress", ARG_FLAG, offsetof(GenerateOpts, progress),
     .help = "a prefill bar on stderr (tokens, tok/s, time left) even when stderr is not a terminal; on a terminal "
             "it shows by itself once the prefill runs over 0.5 s"},
    {"--ids", ARG_FLAG, offsetof(GenerateOpts, ids), .help = "print one line of token ids instead of the text"},
    {"--threads", ARG_LONG, offsetof(GenerateOpts, threads), 1, 64, "N", .help = "worker threads (default: all cores)"},
};
static const ArgsTable GENERATE_FLAGS = ARGS_TABLE(NULL, GenerateOpts, GENERATE_ROWS);

const ArgsTable *const GENERATE_TABLES[] = {&ARGS_PROMPT, &GENERATE_FLAGS, &ARGS_SAMPLING, &ARGS_MODEL,
                                            &ARGS_POLICY, &ARGS_HEADS, NULL};

static void generate_help(void) {
    puts("usage: ahascope generate [--prompt TEXT | --prompt-file FILE] [--ids] [--progress] [--threads N]\n"
         "                         [sampling flags] [model flags] [policy flags]\n"
         "\n"
         "Generate text from a prompt, llama2.c-style.");
    args_help_tables(GENERATE_TABLES);
}

int cmd_generate(int argc, char **argv) {
    RunOpts o;
    GenerateOpts g = {.threads = pool_default_threads()};
    Err e;
    runopts_defaults(&o);
    void *const opts[] = {&o, &g, &o, &o, &o, &o};
    int r = args_parse_argv(argc, argv, GENERATE_TABLES, opts, &e);
    if (r == ARGS_HELP) { generate_help(); return 0; }
    if (r != ARGS_DONE || runopts_check(&o, &e) || generate_run(&o, g.ids, g.progress, (int)g.threads, &e) != 0)
        return args_fail(&e);
    return 0;
}
