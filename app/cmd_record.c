/* `ahascope record`: a headless run straight into the database. This file
 * reads the flags by their table and checks them; app/record_run.h runs. */
#include <stddef.h>
#include <stdio.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/record_run.h"
#include "engine/pool.h"
#include "store/store.h"

static int read_shard(void *opts, const char *flag, const char *v, Err *e) {
    return args_shard(flag, v, &((RecordOpts *)opts)->shard, e);
}

#define R(field) offsetof(RecordOpts, field)

static const ArgSpec RECORD_ROWS[] = {
    {"--db", ARG_STRING, R(db), .metavar = "FILE", .help = "the database (required; created if missing)"},
    {"--commit-every", ARG_LONG, R(commit_every), 1, 1L << 30, "N",
     .help = "steps per transaction (default 1: each step durable on its own)"},
    {"--max-db-mb", ARG_DOUBLE, R(max_mb), 0.01, 1e9, "MB",
     .help = "stop with a 'disk full' error if the file would grow past MB (default: no limit)"},
    {"--progress", ARG_FLAG, R(progress),
     .help = "a prefill bar on stderr (even when it is not a terminal; on one it shows by itself once the prefill "
             "runs over 0.5 s), then 'committed pos P' after each commit"},
    {"--prompts", ARG_STRING, R(prompts), .metavar = "FILE",
     .help = "record one run per line of FILE (empty lines skipped; at most 100000 lines of 64 KiB), each as "
             "`--prompt LINE` with the same flags would, printing each run id"},
    {"--shard", ARG_CUSTOM, .metavar = "I/N", .fn = read_shard,
     .help = "with --prompts: only the lines L with (L-1) mod N = I (I from 0 to N-1), so N processes with their "
             "own --db record disjoint runs; `merge` joins them (needs --seed S unless --temperature 0)"},
    {"--threads", ARG_LONG, R(threads), 1, 64, "N", .help = "worker threads (default: all cores)"},
    {"--attn-top", ARG_LONG, R(attn_top), 0, STORE_ATTN_TOP_MAX, "K",
     .help = "also record, per position and head, the K heaviest far positions of its full attention (view "
             "attn_top; 0 = none, the default; at most 8, kept in the decision's own row) so a replay shows where "
             "each head looked without the model"},
};
static const ArgsTable RECORD_FLAGS = ARGS_TABLE(NULL, RecordOpts, RECORD_ROWS);

const ArgsTable *const RECORD_TABLES[] = {&ARGS_PROMPT, &RECORD_FLAGS, &ARGS_SAMPLING, &ARGS_MODEL,
                                          &ARGS_POLICY, &ARGS_HEADS, NULL};

static void record_help(void) {
    puts("usage: ahascope record --db FILE [--prompt TEXT | --prompt-file FILE | --prompts FILE [--shard I/N]]\n"
         "                       [--commit-every N]\n"
         "                       [--max-db-mb MB] [--progress] [--threads N] [sampling flags] [model flags]\n"
         "                       [policy flags]\n"
         "\n"
         "Run the model and record every position (prompt and generated) into the SQLite database FILE\n"
         "(created if missing): one row per token, one per (token, layer, head). Prints the run id.\n"
         "Ctrl-C stops the run (a long prefill at the next layer, dropping the 64-token chunk under way) and\n"
         "marks it interrupted; what was committed stays.\n"
         "Schema and example queries: store/SCHEMA.md.");
    args_help_tables(RECORD_TABLES);
}

/* --prompts and --shard: what they need and exclude. */
static int record_check_batch(const RunOpts *o, const RecordOpts *ro, Err *e) {
    if (ro->shard.n > 1 && !ro->prompts) return err_usage(e, "--shard I/N splits the lines of --prompts FILE: give it");
    if (ro->prompts && (o->have_prompt || o->prompt_file))
        return err_usage(e, "--prompts and --prompt/--prompt-file all give the prompt: pick one");
    if (ro->prompts && o->chat) return err_usage(e, "--chat wraps one --prompt; it does not apply to --prompts");
    if (ro->shard.n > 1 && !o->have_seed && o->temperature != 0)
        return err_usage(e, "--shard needs --seed S (or --temperature 0): the clock's seed differs between shards");
    return 0;
}

int cmd_record(int argc, char **argv) {
    RunOpts o;
    runopts_defaults(&o);
    RecordOpts ro = {NULL, 1, pool_default_threads(), 0, 0, 0, NULL, {0, 1}};
    Err e;
    void *const opts[] = {&o, &ro, &o, &o, &o, &o};
    int r = args_parse_argv(argc, argv, RECORD_TABLES, opts, &e);
    if (r == ARGS_HELP) { record_help(); return 0; }
    if (r != ARGS_DONE) return args_fail(&e);
    if (!ro.db) { err_usage(&e, "--db FILE is required"); return args_fail(&e); }
    if (runopts_check(&o, &e)) return args_fail(&e);
    if (record_check_batch(&o, &ro, &e)) return args_fail(&e);
    int stopped;
    return record_run(&o, &ro, &stopped, &e) == 0 ? 0 : (stopped ? (args_fail(&e), 130) : args_fail(&e));
}
