/* `ahascope calibrate`: the static baseline's head set, chosen from
 * recorded oracle rates to a budget, written as a file --static-heads reads;
 * or (--format duo) every KV head's rate as a DuoAttention table. */
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
}

typedef struct {
    const char *db, *out, *budget, *format;
    HeadBudget b;      /* K heads, or P percent of them */
    int duo;           /* --format duo */
    int64_t *runs;
    int n_runs;
} CalOpts;

static int parse(int argc, char **argv, CalOpts *c, int *help, Err *e) {
    Args a = {argc, argv, 1};
    memset(c, 0, sizeof *c);
    *help = 0;
    if (!(c->runs = calloc(argc, sizeof *c->runs))) return err_set(e, "out of memory");
    while (a.i < argc) {
        const char *f = argv[a.i++];
        if (args_is_help(f)) { *help = 1; return 0; }
        const char **target = !strcmp(f, "--db") ? &c->db : !strcmp(f, "--out") ? &c->out
                            : !strcmp(f, "--budget") ? &c->budget : !strcmp(f, "--format") ? &c->format : NULL;
        if (target) {
            if (!(*target = args_value(&a, e))) return -1;
        } else if (!strcmp(f, "--run")) {
            const char *v = args_value(&a, e);
            long id;
            if (!v || args_int(f, v, 1, 1L << 62, &id, e)) return -1;
            c->runs[c->n_runs++] = id;
        } else {
            return args_unknown(f, e);
        }
    }
    if (c->format && strcmp(c->format, "heads") && strcmp(c->format, "duo"))
        return err_usage(e, "--format must be heads or duo, not '%s'", c->format);
    c->duo = c->format && !strcmp(c->format, "duo");
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
    CalOpts c;
    Err e;
    int help, rc = 1;
    if (parse(argc, argv, &c, &help, &e)) { free(c.runs); return args_fail(&e); }
    if (help) { calibrate_help(); free(c.runs); return 0; }
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
    free(c.runs);
    return rc ? args_fail(&e) : 0;
}
