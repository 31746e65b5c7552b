/* `ahascope sweep`: many settings on the same held-out data — policies ×
 * windows × thresholds — every point recorded, then the Pareto front of
 * global share against KL, and with several windows the curve of how much
 * global attention each window still needs. This file reads the flags by
 * their table; app/sweep_run.h runs. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app/commands.h"
#include "app/sweep_run.h"
#include "engine/pool.h"

#define W(field) offsetof(SweepOpts, field)

static const ArgSpec SWEEP_ROWS[] = {
    {"--model", ARG_STRING, W(x.o.model), .metavar = "PATH", .help = "as the model flags of `ahascope eval`"},
    {"--tokenizer", ARG_STRING, W(x.o.tokenizer), .metavar = "PATH", .help = "as the model flags of `ahascope eval`"},
    {"--policy", ARG_STRING, W(policies), .metavar = "P[,P...]", .help = "the policies: {policies}"},
    {"--window", ARG_STRING, W(windows), .metavar = "W[,W...]",
     .help = "local keys per head; 8,16,32,64,128,256 with --policy oracle,aha gives the curve of global need "
             "against window"},
    {"--theta", ARG_STRING, W(thetas), .metavar = "X[,X...]", .help = "the thresholds of {theta} (default 0.1)"},
    {"--tau", ARG_STRING, W(taus), .metavar = "T[,T...]", .help = "aha's (default the router file's, else 0.5)"},
    {"--p", ARG_STRING, W(ps), .metavar = "P[,P...]", .help = "random's (default 0.1)"},
    {"--routers", ARG_STRING, W(x.o.routers), .metavar = "FILE|TEMPLATE",
     .help = "may contain {w}, replaced by each window (routers trained per window), e.g. "
             "engine/routers/stories260K_w{w}.safetensors"},
};
static const ArgsTable SWEEP_FLAGS = ARGS_TABLE(NULL, SweepOpts, SWEEP_ROWS);

const ArgsTable *const SWEEP_TABLES[] = {&SWEEP_FLAGS, &EVAL_DATA_FLAGS, &ARGS_HEADS, NULL};

static void sweep_help(void) {
    puts("usage: ahascope sweep [--model PATH] --policy P[,P...] --window W[,W...] [--theta X[,X...]] [--tau T[,T...]]\n"
         "                      [--p P[,P...]] [--routers FILE|TEMPLATE] [--data FILE | --self N] [--seq-len T]\n"
         "                      [--max-seqs N] [--tokenizer PATH] [--db FILE] [--plot] [--svg FILE] [--json]\n"
         "                      [--threads N] [--shard I/N]\n"
         "       ahascope sweep --from-db DB [--model PATH] [--json] [--plot] [--svg FILE]\n"
         "\n"
         "Evaluate every combination on the same held-out sequences (as `ahascope eval`), print each point\n"
         "and the Pareto front of global share against KL(full || policy). Lists are comma-separated.");
    args_help_text("--theta applies to {theta}; --tau to aha; --p to random.\n"
                   "--static-heads is the head set of policy static, in any form `eval` takes (l.h,..., FILE,\n"
                   "duo:FILE with --budget or --duo-threshold, calib:DB#RUN with --budget).\n"
                   "--svg FILE writes the Pareto scatter; with several windows also FILE without .svg + -windows.svg.\n"
                   "Every point is recorded with --db (an `evals` row each, label 'sweep'), each shard into its own\n"
                   "--db. --from-db DB: the table, front and window curves of the sweep points recorded in DB, the\n"
                   "shards of each point combined as one unsharded run (the setting column names every point's knob).\n"
                   "Defaults as `ahascope eval`: theta 0.1, tau the router file's (else 0.5), p 0.1, --self 8, --seq-len 256,\n"
                   "--max-seqs 1000. Routers used at a window other than their file's `window` are a warning on stderr.");
    args_help_tables(SWEEP_TABLES);
}

static int parse(int argc, char **argv, SweepOpts *w, Err *e) {
    EvalOpts *x = &w->x;
    runopts_defaults(&x->o);
    x->o.seed = 1234, x->self_n = 8, x->seq_len = 256, x->max_seqs = 1000, x->threads = pool_default_threads();
    void *const opts[] = {w, x, &x->o};
    int r = args_parse_argv(argc, argv, SWEEP_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
    x->label = "sweep";
    if (eval_opts_shard_check(x, e)) return -1;
    if (args_heads_pick(x->o.static_heads, x->o.have_budget, x->o.have_duo_threshold, 0, "--static-heads", e)) return -1;
    if (x->from_db && (w->policies || w->windows || w->thetas || w->taus || w->ps || x->o.routers))
        return err_usage(e, "--from-db re-summarises the recorded points: --policy, --window, --theta, --tau, --p and "
                            "--routers do not apply");
    if (!x->from_db && (!w->policies || !w->windows)) return err_usage(e, "--policy and --window are required");
    return 0;
}

int cmd_sweep(int argc, char **argv) {
    static SweepOpts w;
    Err e;
    memset(&w, 0, sizeof w);
    int r = parse(argc, argv, &w, &e);
    if (r == 1) { sweep_help(); return 0; }
    if (r < 0 || (w.x.from_db ? sweep_run_recorded(&w, &e) : sweep_run(&w, &e))) return args_fail(&e);
    return 0;
}
