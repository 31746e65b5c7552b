/* `ahascope calibrate`: the static baseline's head set, chosen from
 * recorded oracle rates to a budget, written as a file --static-heads reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/commands.h"
#include "engine/files.h"
#include "engine/textout.h"
#include "store/store.h"

static void calibrate_help(void) {
    puts("usage: ahascope calibrate --db FILE --run ID [--run ID ...] --budget K|P% --out heads.txt\n\n"
         "Pick the static policy's global heads (DuoAttention / RazorAttention style): the K heads\n"
         "with the highest oracle global rate (out-of-window mass > theta) pooled over the given runs, which\n"
         "must be recorded with --profile. --budget 25% takes a quarter of all heads. The output lists\n"
         "one layer.head per line with its rate as a comment; use it with --policy static\n"
         "--static-heads heads.txt.");
}

typedef struct {
    const char *db, *out, *budget;
    double budget_v;   /* K heads, or P percent of them */
    int budget_pct;
    int64_t *runs;
    int n_runs;
} CalOpts;

/* --budget "K" or "P%": the form is checked with the other flags; whether K
 * fits is known only once the runs' heads are counted. */
static int budget_parse(CalOpts *c, Err *e) {
    const char *s = c->budget;
    size_t len = strlen(s);
    c->budget_pct = len > 1 && s[len - 1] == '%';
    if (!c->budget_pct) {
        long k;
        if (args_int("--budget", s, 0, 1 << 20, &k, e)) return -1;
        c->budget_v = (double)k;
        return 0;
    }
    char num[32];
    if (len > sizeof num) return err_usage(e, "--budget: '%s' is not a number of heads or a percentage", s);
    snprintf(num, sizeof num, "%.*s", (int)(len - 1), s);
    return args_float("--budget", num, 0, 100, &c->budget_v, e);
}

static int parse(int argc, char **argv, CalOpts *c, int *help, Err *e) {
    Args a = {argc, argv, 1};
    memset(c, 0, sizeof *c);
    *help = 0;
    if (!(c->runs = calloc(argc, sizeof *c->runs))) return err_set(e, "out of memory");
    while (a.i < argc) {
        const char *f = argv[a.i++];
        if (args_is_help(f)) { *help = 1; return 0; }
        const char **target = !strcmp(f, "--db") ? &c->db : !strcmp(f, "--out") ? &c->out
                            : !strcmp(f, "--budget") ? &c->budget : NULL;
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
    if (!c->db || !c->out || !c->budget || c->n_runs == 0)
        return err_usage(e, "--db, --run, --budget and --out are all required");
    return budget_parse(c, e);
}

/* K of the n heads the runs have. */
static int budget_heads(const CalOpts *c, int n, int *k, Err *e) {
    *k = c->budget_pct ? (int)(c->budget_v / 100 * n + 0.5) : (int)c->budget_v;
    return *k <= n ? 0 : err_set(e, "--budget %d exceeds the %d heads of the runs", *k, n);
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

int cmd_calibrate(int argc, char **argv) {
    CalOpts c;
    Err e;
    int help, rc = 1;
    if (parse(argc, argv, &c, &help, &e)) { free(c.runs); return args_fail(&e); }
    if (help) { calibrate_help(); free(c.runs); return 0; }
    Store *st = store_open(c.db, STORE_READ, STORE_BUSY_MS, &e);
    StoreHeadRate *r = NULL;
    int n = st ? store_head_rates(st, c.runs, c.n_runs, &r, &e) : -1, k = 0;
    if (n > 0 && budget_heads(&c, n, &k, &e) == 0 && write_heads(&c, r, n, k, &e) == 0) {
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
