/* `ahascope record`: a headless run straight into the database. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/progress.h"
#include "app/record_prefill.h"
#include "app/run_info.h"
#include "engine/session.h"
#include "store/store.h"

static volatile sig_atomic_t g_stop; /* set by SIGINT/SIGTERM; the loop ends the run cleanly */

static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

typedef struct {
    const char *db;
    long commit_every, threads;
    long attn_top; /* far positions ranked per head (0: none) */
    double max_mb;
    int progress;
    const char *prompts; /* --prompts FILE: one run per line */
    ArgsShard shard;     /* --shard I/N: the lines (k-1) mod N = I only */
} RecordOpts;

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

static int record_session(Session *s, Store *st, int64_t run, const RecordOpts *ro, Err *e) {
    const Config *c = &s->model->c;
    int rc = -1, fed, pending = -1;
    StepTrace *t = trace_new_top(c->n_layers, c->n_heads, (int)ro->attn_top);
    if (!t) { err_set(e, "out of memory"); goto out; }
    /* stops early on Ctrl-C */
    if (record_prefill(s, st, run, (int)ro->attn_top, ro->progress, &g_stop, &fed, &pending, e)) goto out;
    while (!g_stop && session_step(s, t)) {
        if (record_steps(st, run, &t, 1, ro->progress, &pending, e)) goto out;
        trace_clear(t);
    }
    if (store_flush(st, e)) goto out;
    if (ro->progress && pending >= 0) fprintf(stderr, "committed pos %d\n", pending);
    if (app_session_error(s, e)) goto out; /* the run ends failed, not done */
    rc = 0;
out:
    trace_free(t);
    return rc;
}

/* One prompt recorded as one run: the run `record --prompt TEXT` makes. */
static int record_prompt(RunOpts *o, AppLoaded *L, Store *st, const char *prompt, const RecordOpts *ro, Err *e) {
    Session s;
    StoreRunInfo info;
    int given = o->steps; /* each prompt of --prompts from the steps asked for; the run records what ran */
    o->steps = app_cli_steps(o, L, prompt);
    if (session_init(&s, &L->model, &L->tok, &o->attn, o->steps, o->temperature, o->topp, o->seed, (int)ro->threads, e)) {
        o->steps = given;
        return -1;
    }
    int rc = -1;
    o->prompt = prompt;
    if (session_start_text(&s, prompt, strlen(prompt), e) != 0) goto out;
    if (app_run_info(o, L, &info, e) || store_run_begin(st, &info, e)) goto out;
    printf("%lld\n", (long long)info.run_id);
    fflush(stdout);
    int failed = record_session(&s, st, info.run_id, ro, e);
    Err e2;
    /* After a write failure (disk full) the status update may fail too; the
     * next open for writing marks the run interrupted from its dead pid. */
    store_run_end(st, info.run_id, failed ? "failed" : g_stop ? "interrupted" : "done", &e2);
    rc = failed ? -1 : g_stop ? (err_set(e, "interrupted; run %lld kept what was committed",
                                         (long long)info.run_id), -1) : 0;
out:
    session_free(&s);
    o->steps = given;
    return rc;
}

static int run_record(RunOpts *o, const RecordOpts *ro, Err *e) {
    AppLoaded L;
    AppPrompts pr = {0};
    int rc = -1;
    if (ro->prompts && app_prompts_read(ro->prompts, &pr, e)) return -1;
    Store *st = store_open(ro->db, STORE_WRITE, STORE_BUSY_MS, e);
    if (!st) return app_prompts_free(&pr), -1;
    store_set_commit_every(st, (int)ro->commit_every);
    if (store_set_limit(st, (int64_t)(ro->max_mb * 1024 * 1024), e)) goto out_store;
    if (app_load(o, &L, 1, e) != 0) goto out_unload;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (!ro->prompts) rc = record_prompt(o, &L, st, o->prompt ? o->prompt : "", ro, e);
    else {
        rc = 0;
        for (int i = 0; rc == 0 && !g_stop && i < pr.n; i++)
            if (args_shard_owns(&ro->shard, pr.line[i] - 1)) rc = record_prompt(o, &L, st, pr.text[i], ro, e);
    }
out_unload:
    app_unload(&L);
out_store:
    if (store_close(st, rc ? NULL : e) != 0) rc = -1;
    app_prompts_free(&pr);
    return rc;
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
    return run_record(&o, &ro, &e) == 0 ? 0 : (g_stop ? (args_fail(&e), 130) : args_fail(&e));
}
