/* `ahascope runs | query | export | compare | merge`: the database side.
 * Every one opens the file read-only except merge's output. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/compare_heads.h"
#include "engine/files.h"
#include "store/store.h"

#define QUERY_TIMEOUT 10.0 /* seconds `query` runs SQL by default (--timeout) */

/* Ctrl-C during `query`, or SIGINT/SIGTERM during `merge`: SQLite's
 * progress handler sees it and stops the statement running. */
static volatile sig_atomic_t g_cancel;

typedef struct {
    const char *db, *out, *sql, *predictor;
    int64_t run[2];
    int n_runs;
    StoreFormat fmt;
    int have_fmt;
    double timeout; /* --timeout S (query only); 0: not given */
    const char **inputs;
    int n_inputs;
} DbOpts;

/* --table, --csv, --json: the output format, the flag's own name telling which. */
static int read_format(void *opts, const char *flag, const char *v, Err *e) {
    (void)v, (void)e;
    DbOpts *d = opts;
    d->fmt = flag[2] == 'c' ? STORE_FMT_CSV : flag[2] == 'j' ? STORE_FMT_JSON : STORE_FMT_TABLE;
    d->have_fmt = 1;
    return 0;
}

/* --run, once or (compare) twice. */
static int read_run(void *opts, const char *flag, const char *v, Err *e) {
    DbOpts *d = opts;
    long id = 0;
    if (args_int(flag, v, 1, 1L << 62, &id, e)) return -1;
    if (d->n_runs == 2) return err_usage(e, "at most two --run");
    d->run[d->n_runs++] = id;
    return 0;
}

#define D(field) offsetof(DbOpts, field)
#define ROW_DB {"--db", ARG_STRING, D(db), .metavar = "FILE", .help = "the recorded database (required)"}
#define ROW_FORMAT(name, what) {name, ARG_CUSTOM, .fn = read_format, .help = what}
#define ROW_RUN(what) {"--run", ARG_CUSTOM, .metavar = "ID", .fn = read_run, .help = what}

static const ArgSpec RUNS_ROWS[] = {
    ROW_DB,
    ROW_FORMAT("--table", "an aligned table (the default)"),
    ROW_FORMAT("--csv", "CSV (RFC 4180)"),
    ROW_FORMAT("--json", "a JSON array"),
};
static const ArgsTable RUNS_FLAGS = ARGS_TABLE(NULL, DbOpts, RUNS_ROWS);
const ArgsTable *const RUNS_TABLES[] = {&RUNS_FLAGS, NULL};

static const ArgSpec QUERY_ROWS[] = {
    ROW_DB,
    ROW_FORMAT("--table", "an aligned table (the default)"),
    ROW_FORMAT("--csv", "CSV (RFC 4180), written as the rows come"),
    ROW_FORMAT("--json", "an array of objects per statement, written as the rows come"),
    {"--timeout", ARG_DOUBLE, D(timeout), 0.01, 86400, "S",
     .help = "stop the SQL after S seconds (default 10); Ctrl-C stops it sooner"},
};
static const ArgsTable QUERY_FLAGS = ARGS_TABLE(NULL, DbOpts, QUERY_ROWS);
const ArgsTable *const QUERY_TABLES[] = {&QUERY_FLAGS, NULL};

static const ArgSpec EXPORT_ROWS[] = {
    ROW_DB,
    ROW_RUN("the run written"),
    ROW_FORMAT("--json", "JSON {\"run\": {...}, \"tokens\": [...], \"decisions\": [...]}"),
    ROW_FORMAT("--csv", "CSV, one row per (position, layer, head)"),
    {"--out", ARG_STRING, D(out), .metavar = "PATH", .help = "the file written (default stdout)"},
};
static const ArgsTable EXPORT_FLAGS = ARGS_TABLE(NULL, DbOpts, EXPORT_ROWS);
const ArgsTable *const EXPORT_TABLES[] = {&EXPORT_FLAGS, NULL};

/* --predictor's words are the SQL views' predictors (engine/decide.h's first DECIDE_N_SQL). */
static const ArgSpec COMPARE_ROWS[] = {
    ROW_DB,
    ROW_RUN("the run compared; a second --run ID2: where the two diverge"),
    {"--predictor", ARG_STRING, D(predictor), .metavar = "P",
     .help = "the predictor of the per-layer and per-head tables: {sql} (default aha for aha runs, else qada)"},
};
static const ArgsTable COMPARE_FLAGS = ARGS_TABLE(NULL, DbOpts, COMPARE_ROWS);
const ArgsTable *const COMPARE_TABLES[] = {&COMPARE_FLAGS, NULL};

static const ArgSpec MERGE_ROWS[] = {
    {"--out", ARG_STRING, D(out), .metavar = "FILE", .help = "the database appended to (required; created if missing)"},
};
static const ArgsTable MERGE_FLAGS = ARGS_TABLE(NULL, DbOpts, MERGE_ROWS);
const ArgsTable *const MERGE_TABLES[] = {&MERGE_FLAGS, NULL};

/* Parse argv by tables: flags, and the positional arguments (SQL, input files). */
static int db_parse(DbOpts *d, Args *a, const ArgsTable *const *tables, void (*help)(void), int *done, Err *e) {
    memset(d, 0, sizeof *d);
    d->inputs = calloc(a->argc, sizeof *d->inputs);
    if (!d->inputs) return err_set(e, "out of memory");
    *done = 0;
    void *const opts[] = {d};
    int r;
    while ((r = args_parse_table(a, tables, opts, e)) == ARGS_POSITIONAL) d->inputs[d->n_inputs++] = a->argv[a->i++];
    if (r == ARGS_HELP) help(), *done = 1;
    return r < 0 ? -1 : 0;
}

/* Usage checks after parsing: no stray arguments (beyond the `args` the
 * command takes), the database named, a known predictor. */
static int db_check(const DbOpts *d, int args, Err *e) {
    if (d->n_inputs > args) return args_unknown(d->inputs[args], e);
    if (!d->db) return err_usage(e, "--db FILE is required");
    DecidePred p;
    char names[128];
    decide_list(names, sizeof names, DECIDE_N_SQL, ", "); /* what the SQL views carry */
    if (!d->predictor || (decide_parse(d->predictor, &p) == 0 && p < DECIDE_N_SQL)) return 0;
    return err_usage(e, "--predictor: unknown predictor '%s' (%s)", d->predictor, names);
}

/* The format to print on stdout: CSV bound for a terminal is escaped there
 * (engine/textout.h's terminal rule); to a file or a pipe it keeps its bytes. */
static StoreFormat stdout_format(StoreFormat fmt) {
    return fmt == STORE_FMT_CSV && isatty(STDOUT_FILENO) ? STORE_FMT_CSV_TERM : fmt;
}

static int finish(Store *st, int rc, Err *e) {
    Err e2;
    store_close(st, &e2);
    return rc == 0 ? 0 : args_fail(e);
}

static void runs_help(void) {
    puts("usage: ahascope runs --db FILE [--table|--csv|--json]\n\n"
         "One line per recorded run: id, status (running, done, interrupted, failed), positions\n"
         "recorded, policy, window, when it was created, model and prompt; an aligned table by default.");
    args_help_tables(RUNS_TABLES);
}

int cmd_runs(int argc, char **argv) {
    Args a = {argc, argv, 1};
    DbOpts d;
    Err e;
    int done;
    int bad = db_parse(&d, &a, RUNS_TABLES, runs_help, &done, &e) || (!done && db_check(&d, 0, &e));
    free(d.inputs);
    if (bad) return args_fail(&e);
    if (done) return 0;
    Store *st = store_open(d.db, STORE_READ, STORE_BUSY_MS, &e);
    if (!st) return args_fail(&e);
    return finish(st, store_list_runs(st, stdout_format(d.fmt), stdout, &e), &e);
}

static void query_help(void) {
    puts("usage: ahascope query --db FILE \"SQL\" [--table|--csv|--json] [--timeout S]\n\n"
         "Run SQL over a recorded database and print the result: an aligned table by default,\n"
         "CSV (RFC 4180) or JSON (an array of objects per statement). CSV and JSON are written as the\n"
         "rows come; the table holds at most 100000 rows (64 MiB) to align its columns, then prints\n"
         "them and stops with an error (exit 1). The file is opened read-only;\n"
         "INSERT, UPDATE, DELETE, CREATE, DROP, ATTACH, writable pragmas, load_extension() and\n"
         "fts3_tokenizer() are refused. A value may hold at most 64 MiB and SQLite at most 512 MiB.\n"
         "CSV and JSON are valid UTF-8: invalid bytes in a text value become U+FFFD, and\n"
         "JSON adds \"<column>_hex\" with its raw bytes.\n"
         "Tables, views and examples: store/SCHEMA.md, e.g.\n"
         "  ahascope query --db ahascope.db \"SELECT * FROM head_rates ORDER BY global_rate DESC LIMIT 10\"");
    args_help_tables(QUERY_TABLES);
}

static void on_stop_signal(int sig) { (void)sig, g_cancel = 1; }

static int query_cancelled(void *ctx, long rows) {
    (void)ctx, (void)rows;
    return g_cancel;
}

static int merge_stopped(void *ctx) {
    (void)ctx;
    return g_cancel;
}

/* The SQL under the time limit, with Ctrl-C stopping it: "cancelled"
 * exits 130 as an interrupted command does, the time limit 1. */
static int run_query(Store *st, const char *sql, const DbOpts *d, Err *e) {
    StoreQueryLimits lim = {.timeout_s = d->timeout > 0 ? d->timeout : QUERY_TIMEOUT, .interrupt = query_cancelled};
    signal(SIGINT, on_stop_signal);
    int rc = store_query_limited(st, sql, stdout_format(d->fmt), stdout, &lim, e);
    signal(SIGINT, SIG_DFL);
    if (rc && lim.timed_out) err_set(e, "stopped after %g s (--timeout)", lim.timeout_s);
    else if (rc && g_cancel) err_set(e, "cancelled");
    rc = finish(st, rc, e);
    return rc && g_cancel && !lim.timed_out ? 130 : rc;
}

int cmd_query(int argc, char **argv) {
    Args a = {argc, argv, 1};
    DbOpts d;
    Err e;
    int done;
    int bad = db_parse(&d, &a, QUERY_TABLES, query_help, &done, &e);
    if (!bad && !done && d.n_inputs != 1)
        bad = err_usage(&e, d.n_inputs ? "give the SQL as one argument (quote it)" : "no SQL given (see --help)");
    if (!bad && !done) bad = db_check(&d, 1, &e);
    const char *sql = d.n_inputs == 1 ? d.inputs[0] : NULL;
    free(d.inputs);
    if (bad) return args_fail(&e);
    if (done) return 0;
    Store *st = store_open(d.db, STORE_READ, STORE_BUSY_MS, &e);
    if (!st) return args_fail(&e);
    return run_query(st, sql, &d, &e);
}

static void export_help(void) {
    puts("usage: ahascope export --db FILE --run ID --json|--csv [--out PATH]\n\n"
         "Write one run: JSON {\"run\": {...}, \"tokens\": [...], \"decisions\": [...]}, or CSV with one row per\n"
         "(position, layer, head) joined with that position's token columns. --out writes the file\n"
         "atomically (a temporary file renamed into place); default stdout. Both are valid UTF-8: a\n"
         "piece that is not (a byte-fallback token) is written with U+FFFD, in JSON also as piece_hex.");
    args_help_tables(EXPORT_TABLES);
}

/* Write through a temporary renamed into place, so a failed export never
 * leaves half a file. */
static int export_to(Store *st, const DbOpts *d, Err *e) {
    if (!d->out) {
        if (store_export(st, d->run[0], stdout_format(d->fmt), stdout, e)) return -1;
        return fflush(stdout) == 0 ? 0 : err_set(e, "cannot write to stdout");
    }
    FileAtomic a;
    if (!file_atomic_open(&a, d->out, e)) return -1;
    if (store_export(st, d->run[0], d->fmt, a.f, e) == 0) return file_atomic_commit(&a, e);
    file_atomic_abort(&a);
    return -1;
}

int cmd_export(int argc, char **argv) {
    Args a = {argc, argv, 1};
    DbOpts d;
    Err e;
    int done;
    int bad = db_parse(&d, &a, EXPORT_TABLES, export_help, &done, &e) || (!done && db_check(&d, 0, &e));
    free(d.inputs);
    if (bad) return args_fail(&e);
    if (done) return 0;
    if (d.n_runs != 1) { err_usage(&e, "give one --run ID"); return args_fail(&e); }
    if (!d.have_fmt || d.fmt == STORE_FMT_TABLE) { err_usage(&e, "choose --json or --csv"); return args_fail(&e); }
    Store *st = store_open(d.db, STORE_READ, STORE_BUSY_MS, &e);
    if (!st) return args_fail(&e);
    return finish(st, export_to(st, &d, &e), &e);
}

static void compare_help(void) {
    char words[128];
    decide_list(words, sizeof words, DECIDE_N_SQL, "|"); /* what the SQL views carry */
    printf("usage: ahascope compare --db FILE --run ID [--run ID2] [--predictor %s]\n", words);
    app_compare_heads_usage();
    puts("");
    puts("One run: every predictor's confusion against the oracle (global iff out_mass > theta):\n"
         "tp, fp, fn, tn, precision, recall, F1, then per layer and per head for --predictor\n"
         "(default aha for aha runs, else qada). The run needs oracle values (--profile).\n"
         "Two runs: where their tokens diverge and how their gates differ per layer and head.");
    args_help_tables(COMPARE_TABLES);
    app_compare_heads_help();
}

int cmd_compare(int argc, char **argv) {
    if (app_compare_wants_heads(argc, argv)) return app_compare_heads(argc, argv);
    Args a = {argc, argv, 1};
    DbOpts d;
    Err e;
    int done;
    int bad = db_parse(&d, &a, COMPARE_TABLES, compare_help, &done, &e) || (!done && db_check(&d, 0, &e));
    free(d.inputs);
    if (bad) return args_fail(&e);
    if (done) return 0;
    if (d.n_runs == 0) { err_usage(&e, "give --run ID"); return args_fail(&e); }
    Store *st = store_open(d.db, STORE_READ, STORE_BUSY_MS, &e);
    if (!st) return args_fail(&e);
    return finish(st, store_compare(st, d.run[0], d.n_runs > 1 ? d.run[1] : 0, d.predictor, stdout, &e), &e);
}

static void merge_help(void) {
    puts("usage: ahascope merge --out FILE IN.db...\n\n"
         "Append every run of the input databases to FILE (created if missing), renumbering run ids\n"
         "after those already in FILE. runs.origin keeps where each came from (\"IN.db#id\").\n"
         "Each input is copied in one transaction: a failure leaves FILE as it was before that input.\n"
         "Ctrl-C or SIGTERM rolls back the input being copied and exits 130. An input of an older schema\n"
         "is upgraded in a scratch copy in $TMPDIR, removed on any exit but kill -9; the next merge removes\n"
         "those of processes that are gone.");
    args_help_tables(MERGE_TABLES);
}

int cmd_merge(int argc, char **argv) {
    Args a = {argc, argv, 1};
    DbOpts d;
    Err e;
    int done;
    if (db_parse(&d, &a, MERGE_TABLES, merge_help, &done, &e)) return free(d.inputs), args_fail(&e);
    if (done) return free(d.inputs), 0;
    int rc = -1;
    Store *st = NULL;
    if (!d.out) err_usage(&e, "--out FILE is required");
    else if (d.n_inputs == 0) err_usage(&e, "no input databases given");
    else if (store_merge_inputs_check(d.out, d.inputs, d.n_inputs, &e) == 0 && /* before the output is touched */
             (st = store_open(d.out, STORE_WRITE, STORE_BUSY_MS, &e))) {
        signal(SIGINT, on_stop_signal);
        signal(SIGTERM, on_stop_signal);
        rc = store_merge(st, d.inputs, d.n_inputs, stdout, merge_stopped, NULL, &e);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
    }
    free(d.inputs);
    if (!st) return args_fail(&e);
    rc = finish(st, rc, &e);
    return rc && g_cancel ? 130 : rc;
}
