/* `ahascope calibrate`: the static baseline's head set, chosen from
 * recorded oracle rates to a budget, written as a file --static-heads reads;
 * or (--format duo) every KV head's rate as a DuoAttention table; or
 * (--method NAME) a literature head score the model is run for. This file
 * reads the flags by their table and checks them; app/calibrate_run.h and
 * app/headscore_run.h run. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app/args.h"
#include "app/calibrate_run.h"
#include "app/commands.h"
#include "app/headscore_run.h"


static int read_format(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag;
    if (strcmp(v, "heads") && strcmp(v, "duo") && strcmp(v, "json"))
        return err_usage(e, "--format must be heads or duo (or json with --method), not '%s'", v);
    ((CalOpts *)opts)->duo = !strcmp(v, "duo");
    ((CalOpts *)opts)->json = !strcmp(v, "json");
    return 0;
}

static int read_method(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag;
    return headscore_method_parse(v, &((CalOpts *)opts)->method, e);
}

/* --run again adds a run: their rates are pooled. */
static int read_run(void *opts, const char *flag, const char *v, Err *e) {
    CalOpts *c = opts;
    long id = 0;
    if (args_int(flag, v, 1, 1L << 62, &id, e)) return -1;
    if (c->n_runs == CAL_MAX_RUNS) return err_usage(e, "--run: at most %d runs", CAL_MAX_RUNS);
    c->runs[c->n_runs++] = id;
    return 0;
}

static const ArgSpec CALIBRATE_ROWS[] = {
    {"--db", ARG_STRING, offsetof(CalOpts, db), .metavar = "FILE", .help = "the database the runs are in"},
    {"--run", ARG_CUSTOM, .metavar = "ID", .fn = read_run,
     .help = "a run recorded with --profile; again for more (their rates pooled)"},
    {"--budget", ARG_STRING, offsetof(CalOpts, budget), .metavar = "K|P%",
     .help = "the K heads (or P% of all) of highest oracle global rate"},
    {"--out", ARG_STRING, offsetof(CalOpts, out), .metavar = "FILE", .help = "the file written"},
    {"--format", ARG_CUSTOM, .metavar = "heads|duo|json", .fn = read_format,
     .help = "heads: a layer.head list, or with --method a row per query head (the default); duo: a DuoAttention "
             "table; json (--method): Retrieval-Head's {\"L-H\": [a score per unit]}"},
    {"--method", ARG_CUSTOM, .metavar = "NAME", .fn = read_method,
     .help = "score heads by running the model: retrieval|induction|duo-fast|duo-train|needle-weight (app/COMMANDS.md "
             "defines each)"},
    {"--data", ARG_STRING, offsetof(CalOpts, data), .metavar = "ITEMS",
     .help = "--method: task items (JSON lines from `ahascope tasks`; not for induction)"},
    {"--gen", ARG_INT, offsetof(CalOpts, gen), 1, 4096, .metavar = "N",
     .help = "retrieval: tokens generated greedily after each prompt (default 16)"},
    {"--sequences", ARG_INT, offsetof(CalOpts, sequences), 1, 10000, .metavar = "N",
     .help = "induction: random sequences (default 20)"},
    {"--period", ARG_INT, offsetof(CalOpts, period), 2, 1 << 20, .metavar = "P",
     .help = "induction: random ids in the block each sequence repeats (default 64)"},
    {"--seed", ARG_LONG, offsetof(CalOpts, seed), 0, 9.3e18, .metavar = "S",
     .help = "induction: the ids' seed; duo-train: the batches' (default 1)", .also = ARG_ALSO(CalOpts, have_seed)},
    {"--steps", ARG_INT, offsetof(CalOpts, steps), 1, 1000000, .metavar = "N",
     .help = "duo-train: AdamW steps on the gates (default 100)"},
    {"--batch", ARG_INT, offsetof(CalOpts, batch), 1, 1024, .metavar = "B",
     .help = "duo-train: items a step, neighbours in length (default 4)"},
    {"--lr", ARG_DOUBLE, offsetof(CalOpts, lr), 1e-9, 10, .metavar = "X",
     .help = "duo-train: AdamW's learning rate, constant (default 0.02)"},
    {"--lambda", ARG_DOUBLE, offsetof(CalOpts, lambda), 0, 1e6, .metavar = "X",
     .help = "duo-train: weight of the L1 penalty on the gates, lambda * sum alpha (default 0.05)",
     .also = ARG_ALSO(CalOpts, have_lambda)},
    {"--duo-len", ARG_INT, offsetof(CalOpts, duo_len), 2, 1 << 20, .metavar = "N",
     .help = "duo-fast: positions the mean query and key are repeated over (default 500, capped at the context)"},
    {"--sink", ARG_INT, offsetof(CalOpts, sink), 0, 1 << 20, .metavar = "N",
     .help = "duo-fast, duo-train: a streaming head's sink tokens, written with the table (default 128)",
     .also = ARG_ALSO(CalOpts, have_sink)},
    {"--recent", ARG_INT, offsetof(CalOpts, recent), 0, 1 << 20, .metavar = "N",
     .help = "duo-fast, duo-train: a streaming head's recent tokens, written with the table (default 256)",
     .also = ARG_ALSO(CalOpts, have_recent)},
};
static const ArgsTable CALIBRATE_FLAGS = ARGS_TABLE(NULL, CalOpts, CALIBRATE_ROWS);

const ArgsTable *const CALIBRATE_TABLES[] = {&CALIBRATE_FLAGS, &ARGS_MODEL, NULL};

static void calibrate_help(void) {
    puts("usage: ahascope calibrate --db FILE --run ID [--run ID ...] --budget K|P% --out heads.txt\n"
         "       ahascope calibrate --format duo --db FILE --run ID [--run ID ...] --out table.tsv\n\n"
         "Pick the static policy's global heads (DuoAttention / RazorAttention style): the K heads\n"
         "with the highest oracle global rate (out-of-window mass > theta) pooled over the given runs, which\n"
         "must be recorded with --profile. --budget 25% takes a quarter of all heads. The output lists\n"
         "one layer.head per line with its rate as a comment; use it with --policy static\n"
         "--static-heads heads.txt.\n\n"
         "--format duo writes DuoAttention's full_attention_heads.tsv instead: a row per layer, a value\n"
         "per KV head, the highest oracle global rate among the KV head's query heads (no --budget); use\n"
         "it with --static-heads duo:table.tsv --budget P% or --duo-threshold X.\n\n"
         "       ahascope calibrate --method retrieval|induction|duo-fast|duo-train|needle-weight [--model M] [--data ITEMS]\n"
         "                          --out heads.tsv [--format duo|json]\n"
         "--method runs the model (full attention) and scores every query head as the literature does:\n"
         "retrieval (Wu et al.), induction (RazorAttention's echo and induction), duo-fast (kvpress's\n"
         "training-free DuoAttention score), needle-weight (the weight on the needle at the question). The\n"
         "table has a row per query head with its KV head's score (max over the group; duo-fast: the mean);\n"
         "--format duo writes the KV-head scores as a DuoAttention table, --format json the Retrieval-Head\n"
         "form. duo-train trains DuoAttention's gate per KV head (alpha, mixing full and streaming\n"
         "attention: --sink keys and the last --recent) by distillation on the items' answers with an L1\n"
         "penalty; the score is alpha.");
    args_help_tables(CALIBRATE_TABLES);
}

/* --method's flags: the oracle's are refused, the unit settings defaulted. */
static int check_method(CalOpts *c, Err *e) {
    if (c->db || c->n_runs || c->budget) return err_usage(e, "--method scores the model itself: no --db, --run or --budget");
    if (!c->out) return err_usage(e, "--out is required");
    if (c->method != CAL_INDUCTION && !c->data) return err_usage(e, "--method %s needs --data ITEMS", headscore_method_name(c->method));
    if (c->method == CAL_INDUCTION && c->data) return err_usage(e, "--method induction draws its own sequences: no --data");
    if (!c->gen) c->gen = 16;
    if (!c->sequences) c->sequences = 20;
    if (!c->period) c->period = 64;
    if (!c->have_seed) c->seed = 1;
    if (!c->have_sink) c->sink = 128;
    if (!c->have_recent) c->recent = 256;
    if (!c->steps) c->steps = 100;
    if (!c->batch) c->batch = 4;
    if (!c->lr) c->lr = 0.02;
    if (!c->have_lambda) c->lambda = 0.05;
    if (c->method != CAL_DUO_TRAIN && (c->steps != 100 || c->batch != 4 || c->lr != 0.02 || c->have_lambda))
        return err_usage(e, "--steps, --batch, --lr and --lambda are duo-train's");
    return runopts_check(&c->run, e);
}

static int parse(int argc, char **argv, CalOpts *c, Err *e) {
    memset(c, 0, sizeof *c);
    runopts_defaults(&c->run);
    void *const opts[] = {c, &c->run};
    int r = args_parse_argv(argc, argv, CALIBRATE_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
    if (c->method != CAL_ORACLE) return check_method(c, e);
    if (c->json) return err_usage(e, "--format json is for --method's scores");
    if (c->data || c->gen || c->sequences || c->period || c->have_seed || c->duo_len || c->have_sink || c->have_recent ||
        c->steps || c->batch || c->lr || c->have_lambda || c->run.model || c->run.tokenizer)
        return err_usage(e, "--data, --model and the scores' settings are for --method");
    if (c->duo && c->budget) return err_usage(e, "--format duo writes every head's rate: it takes no --budget");
    if (!c->db || !c->out || c->n_runs == 0)
        return err_usage(e, c->duo ? "--db, --run and --out are all required"
                                   : "--db, --run, --budget and --out are all required");
    if (!c->budget && !c->duo) return err_usage(e, "--budget K|P%% is required (or --format duo for every head's rate)");
    /* the form is checked here; whether K fits is known once the runs' heads are counted */
    return c->duo ? 0 : args_budget("--budget", c->budget, &c->b, e);
}

int cmd_calibrate(int argc, char **argv) {
    static CalOpts c; /* static: its runs are 8 KiB */
    Err e;
    int parsed = parse(argc, argv, &c, &e);
    if (parsed == ARGS_HELP) { calibrate_help(); return 0; }
    if (parsed) return args_fail(&e);
    if (c.method != CAL_ORACLE) return headscore_run(&c, &e) ? args_fail(&e) : 0;
    return calibrate_run(&c, &e) ? args_fail(&e) : 0;
}
