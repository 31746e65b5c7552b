/* `ahascope calibrate`: the static baseline's head set, chosen from
 * recorded oracle rates to a budget, written as a file --static-heads reads;
 * or (--format duo) every KV head's rate as a DuoAttention table. This file
 * reads the flags by their table and checks them; app/calibrate_run.h runs. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app/args.h"
#include "app/calibrate_run.h"
#include "app/commands.h"


static int read_format(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag;
    if (strcmp(v, "heads") && strcmp(v, "duo")) return err_usage(e, "--format must be heads or duo, not '%s'", v);
    ((CalOpts *)opts)->duo = !strcmp(v, "duo");
    return 0;
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
    {"--format", ARG_CUSTOM, .metavar = "heads|duo", .fn = read_format,
     .help = "heads: a layer.head list (the default); duo: a DuoAttention table"},
};
static const ArgsTable CALIBRATE_FLAGS = ARGS_TABLE(NULL, CalOpts, CALIBRATE_ROWS);

const ArgsTable *const CALIBRATE_TABLES[] = {&CALIBRATE_FLAGS, NULL};

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
         "it with --static-heads duo:table.tsv --budget P% or --duo-threshold X.");
    args_help_tables(CALIBRATE_TABLES);
}

static int parse(int argc, char **argv, CalOpts *c, Err *e) {
    memset(c, 0, sizeof *c);
    void *const opts[] = {c};
    int r = args_parse_argv(argc, argv, CALIBRATE_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
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
    return calibrate_run(&c, &e) ? args_fail(&e) : 0;
}
