/* `ahascope calibrate`: the static baseline's head set, chosen from
 * recorded oracle rates to a budget, written as a file --static-heads reads;
 * or (--format duo) every KV head's rate as a DuoAttention table. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/commands.h"
#include "engine/files.h"
#include "engine/headset.h"
#include "engine/textout.h"
#include "store/store.h"

#define CAL_MAX_RUNS 1024

typedef struct {
    const char *db, *out, *budget;
    HeadBudget b;      /* K heads, or P percent of them */
    int duo;           /* --format duo */
    int64_t runs[CAL_MAX_RUNS];
    int n_runs;
} CalOpts;

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

/* K of the n heads the runs have. */
static int budget_heads(const CalOpts *c, int n, int *k, Err *e) {
    *k = headset_budget_count(&c->b, n);
    return c->b.percent || c->b.value <= n ? 0 : err_set(e, "--budget %.0f exceeds the %d heads of the runs", c->b.value, n);
}

static int write_heads(const CalOpts *c, const StoreHeadRate *r, int n, int k, Err *e) {
    FileAtomic a;
    FILE *f = file_atomic_open(&a, c->out, e);
    if (!f) return -1;
    fprintf(f, "# static heads: the %d of %d heads with the highest oracle global rate\n# from %s runs", k, n, c->db);
    for (int i = 0; i < c->n_runs; i++) fprintf(f, " %lld", (long long)c->runs[i]);
    fprintf(f, "\n");
    for (int i = 0; i < k; i++) fprintf(f, "%d.%d  # oracle rate %.4f over %ld\n", r[i].layer, r[i].head, r[i].oracle_rate, r[i].n);
    return file_atomic_commit(&a, e);
}

/* --format duo: per KV head, the highest oracle rate of its query heads.
 * The max, not the mean: a KV head's cache must stay whole as soon as one
 * of its query heads reads far, so one retrieval head among local ones
 * must not be averaged away. */
static int write_duo(const CalOpts *c, Store *st, const StoreHeadRate *r, int n, Err *e) {
    StoreRunInfo info;
    if (store_run_info(st, c->runs[0], &info, e)) return -1;
    int L = info.n_layers, H = info.n_heads, kv = info.n_kv_heads > 0 ? info.n_kv_heads : H;
    store_run_info_free(&info);
    if (L * H != n || H % kv) return err_set(e, "%s: run %lld: %d heads do not make %d layers of %d KV heads", c->db,
                                             (long long)c->runs[0], n, L, kv);
    HeadTable t = {L, kv, calloc((size_t)L * kv, sizeof(float))};
    if (!t.values) return err_set(e, "out of memory");
    for (int i = 0; i < n; i++) {
        float *v = &t.values[(size_t)r[i].layer * kv + r[i].head / (H / kv)];
        if (r[i].oracle_rate > *v) *v = (float)r[i].oracle_rate;
    }
    char note[1200];
    int o = snprintf(note, sizeof note, "oracle global rate, max over each KV head's query heads, from %.900s runs", c->db);
    for (int i = 0; i < c->n_runs && o < (int)sizeof note - 24; i++) o += snprintf(note + o, sizeof note - o, " %lld", (long long)c->runs[i]);
    int rc = headset_table_write(c->out, &t, note, e);
    headset_table_free(&t);
    if (rc == 0) {
        char safe[4 * 1024 + 1]; /* the path as typed: escaped for the terminal */
        printf("%d layers x %d KV heads -> %s (each the highest oracle rate of its %d query heads)\n", L, kv,
               textout_term(c->out, safe, sizeof safe), H / kv);
    }
    return rc;
}

int cmd_calibrate(int argc, char **argv) {
    static CalOpts c; /* static: its runs are 8 KiB */
    Err e;
    int rc = 1, parsed = parse(argc, argv, &c, &e);
    if (parsed == ARGS_HELP) { calibrate_help(); return 0; }
    if (parsed) return args_fail(&e);
    Store *st = store_open(c.db, STORE_READ, STORE_BUSY_MS, &e);
    StoreHeadRate *r = NULL;
    int n = st ? store_head_rates(st, c.runs, c.n_runs, &r, &e) : -1, k = 0;
    if (n > 0 && c.duo) {
        rc = write_duo(&c, st, r, n, &e) ? 1 : 0;
    } else if (n > 0 && budget_heads(&c, n, &k, &e) == 0 && write_heads(&c, r, n, k, &e) == 0) {
        double covered = 0, total = 0;
        for (int i = 0; i < n; i++) total += r[i].oracle_rate * r[i].n, covered += i < k ? r[i].oracle_rate * r[i].n : 0;
        char safe[4 * 1024 + 1]; /* the path as typed: escaped for the terminal */
        printf("%d of %d heads -> %s (they hold %.1f%% of the oracle's global decisions)\n", k, n,
               textout_term(c.out, safe, sizeof safe), total > 0 ? 100 * covered / total : 0.0);
        rc = 0;
    }
    store_close(st, NULL);
    free(r);
    return rc ? args_fail(&e) : 0;
}
