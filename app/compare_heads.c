/* compare_heads.c — `compare --heads A B`: two head sets' sizes, overlap, Jaccard and rank correlation. */
#include "app/compare_heads.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/headsets.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "engine/headset.h"
#include "engine/stats.h"
#include "engine/textout.h"

/* One --heads and the --budget or --duo-threshold that follows it. */
typedef struct {
    const char *spec;
    HeadPick pick;
    int have_budget, have_threshold;
    uint8_t *map;
    float *scores; /* per query head, NULL for a plain list */
} Side;

/* The flags of the heads form: the two sides and the model they are read
 * against. B given as the word after A (--heads A B) shares the cut that
 * follows it with A (shared). */
typedef struct {
    Side s[2];
    int n, b_positional;
    Side shared;
    const char *model;
} HeadsOpts;

static int read_heads(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag;
    HeadsOpts *h = opts;
    if (h->n == 2) return err_usage(e, "give exactly two --heads");
    h->s[h->n++].spec = v;
    return 0;
}

/* A budget or threshold belongs to the --heads before it, or to both sets
 * after --heads A B. */
static int read_pick(void *opts, const char *f, const char *v, Err *e) {
    HeadsOpts *h = opts;
    if (h->n == 0) return err_usage(e, "%s comes after the --heads it applies to", f);
    Side *x = h->b_positional ? &h->shared : &h->s[h->n - 1];
    const char *who = h->b_positional ? "the two sets" : x->spec;
    if (!strcmp(f, "--budget")) {
        if (x->have_budget) return err_usage(e, "--heads %s: --budget given twice", who);
        x->have_budget = 1, x->pick.by_threshold = 0;
        return args_budget(f, v, &x->pick.budget, e);
    }
    if (x->have_threshold) return err_usage(e, "--heads %s: --duo-threshold given twice", who);
    x->have_threshold = 1, x->pick.by_threshold = 1;
    return args_float(f, v, 0, 1, &x->pick.threshold, e);
}

static const ArgSpec HEADS_ROWS[] = {
    {"--heads", ARG_CUSTOM, .metavar = "SPEC", .fn = read_heads, .help = "a head set, as --static-heads takes it (twice, or --heads A B)"},
    {"--budget", ARG_CUSTOM, .metavar = "K|P%", .fn = read_pick, .help = "cuts the table or calib: set of the --heads before it (after --heads A B: both)"},
    {"--duo-threshold", ARG_CUSTOM, .metavar = "X", .fn = read_pick, .help = "cuts the duo:, retrieval-json: or prulong: set of the --heads before it (both, as --budget)"},
    {"--model", ARG_STRING, offsetof(HeadsOpts, model), .metavar = "M",
     .help = "the model whose layers and heads the sets are read against (default stories260K)"},
};
static const ArgsTable HEADS_FLAGS = ARGS_TABLE(NULL, HeadsOpts, HEADS_ROWS);

const ArgsTable *const COMPARE_HEADS_TABLES[] = {&HEADS_FLAGS, NULL};

int app_compare_wants_heads(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--heads")) return 1;
    return 0;
}

void app_compare_heads_usage(void) {
    puts("       ahascope compare --heads A [--budget K|P% | --duo-threshold X] --heads B [...] [--model M]\n"
         "       ahascope compare --heads A B [--budget K|P% | --duo-threshold X] [--model M]");
}

void app_compare_heads_help(void) {
    puts("Two head sets: their sizes, |A and B|, |A or B|, the Jaccard overlap |A and B| / |A or B|, the\n"
         "Spearman rank correlation of the scores that ranked them (over every head, and over the heads of\n"
         "A or B; a plain list ranks by its 0/1 membership) and the heads in one only. Each is named as\n"
         "--static-heads takes it: l.h,... or a file of them, duo:FILE, retrieval-json:FILE,\n"
         "prulong:FILE, moa:FILE or windows:FILE (ranked by span at the model's context length), with\n"
         "--budget or --duo-threshold written after that --heads, or calib:DB#RUN[,RUN...] (with\n"
         "--budget). With --heads A B a cut after B applies to both. Read against --model's layers and\n"
         "heads (default stories260K).");
    args_help_tables(COMPARE_HEADS_TABLES);
}

/* A shared cut goes to each set that takes one and has none of its own. */
static int share_pick(HeadsOpts *h, Err *e) {
    Side *x = &h->shared;
    int used = 0;
    for (int i = 0; i < 2 && (x->have_budget || x->have_threshold); i++) {
        Side *y = &h->s[i];
        if (args_heads_form(y->spec, NULL) == HEADS_LIST || y->have_budget || y->have_threshold) continue;
        y->pick = x->pick, y->have_budget = x->have_budget, y->have_threshold = x->have_threshold, used = 1;
    }
    if ((x->have_budget || x->have_threshold) && !used)
        return err_usage(e, "%s after --heads A B cuts neither set", x->have_budget ? "--budget" : "--duo-threshold");
    return 0;
}

static int parse(int argc, char **argv, HeadsOpts *h, Err *e) {
    void *const opts[] = {h};
    Args a = {argc, argv, 1};
    int r;
    while ((r = args_parse_table(&a, COMPARE_HEADS_TABLES, opts, e)) == ARGS_POSITIONAL) {
        if (h->n != 1) return args_unknown(argv[a.i], e); /* only B, straight after --heads A */
        h->s[h->n++].spec = argv[a.i++], h->b_positional = 1;
    }
    if (r != ARGS_DONE) return r;
    if (h->n != 2) return err_usage(e, "give exactly two --heads");
    if (share_pick(h, e)) return -1;
    for (int i = 0; i < 2; i++) {
        Side *x = &h->s[i];
        if (args_heads_pick(x->spec, x->have_budget, x->have_threshold, 1, "--heads", e)) return -1;
        x->pick = app_headset_pick(x->spec, &x->pick, x->have_budget, x->have_threshold);
    }
    return 0;
}

/* The spec and what cut it, as typed, escaped for the terminal. */
static void side_name(const Side *s, char *out, size_t cap) {
    char raw[1200], how[64] = "";
    if (s->have_budget) snprintf(how, sizeof how, " --budget %g%s", s->pick.budget.value, s->pick.budget.percent ? "%" : "");
    if (s->have_threshold) snprintf(how, sizeof how, " --duo-threshold %g", s->pick.threshold);
    snprintf(raw, sizeof raw, "%.1100s%s", s->spec, how);
    textout_term(raw, out, cap);
}

/* Spearman's rho of the two sides' scores over the cells mask holds (all
 * when NULL), a plain list scoring its 0/1 membership. */
static double rank_corr(const Side *s, int n, const uint8_t *mask, int *used) {
    double *x = malloc((size_t)n * 2 * sizeof *x), rho = NAN;
    int m = 0;
    for (int c = 0; x && c < n; c++) {
        if (mask && !mask[c]) continue;
        x[m] = s[0].scores ? s[0].scores[c] : s[0].map[c];
        x[n + m++] = s[1].scores ? s[1].scores[c] : s[1].map[c];
    }
    if (x) rho = stats_spearman(x, x + n, m);
    free(x);
    *used = m;
    return rho;
}

/* The rank correlations, over every head and over A or B, saying what a
 * plain list's side is. */
static void report_ranks(const Side *s, int n) {
    const char *how = !s[0].scores && !s[1].scores ? ", A and B as 0/1 membership: the phi coefficient"
                      : !s[0].scores                ? ", A as 0/1 membership"
                      : !s[1].scores                ? ", B as 0/1 membership"
                                                    : "";
    uint8_t *any = malloc((size_t)n);
    for (int pass = 0; pass < 2 && any; pass++) {
        for (int c = 0; c < n; c++) any[c] = s[0].map[c] || s[1].map[c];
        int used;
        double rho = rank_corr(s, n, pass ? any : NULL, &used);
        char v[32];
        snprintf(v, sizeof v, isnan(rho) ? "n/a (a constant side)" : "%.4f", rho);
        printf("spearman (%s %d heads%s%s): %s\n", pass ? "the" : "all", used, pass ? " of A or B" : "", how, v);
    }
    free(any);
}

static void report(const Side *s, int L, int H) {
    int n = L * H, inter, uni, size[2] = {0, 0};
    double j = headset_jaccard(s[0].map, s[1].map, n, &inter, &uni);
    uint8_t *only = malloc((size_t)n);
    char *text = malloc(16 * (size_t)n + 16), name[4 * 1200 + 1];
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < n; i++) size[k] += s[k].map[i];
        side_name(&s[k], name, sizeof name);
        printf("%c: %d heads  %s\n", 'A' + k, size[k], name);
    }
    printf("A and B: %d  A or B: %d  of %d heads (%d layers x %d)\n", inter, uni, n, L, H);
    printf("jaccard: %.4f\n", j);
    report_ranks(s, n);
    for (int k = 0; only && text && k < 2; k++) {
        for (int i = 0; i < n; i++) only[i] = s[k].map[i] && !s[1 - k].map[i];
        app_heads_text(only, L, H, text, 16 * (size_t)n + 16);
        printf("%c only: %s\n", 'A' + k, text[0] ? text : "-");
    }
    free(only);
    free(text);
}

int app_compare_heads(int argc, char **argv) {
    static HeadsOpts h;
    RunOpts o;
    AppLoaded L;
    Err e;
    memset(&h, 0, sizeof h);
    runopts_defaults(&o);
    int r = parse(argc, argv, &h, &e);
    if (r == ARGS_HELP) {
        puts("usage: ahascope compare --heads A [--budget K|P% | --duo-threshold X] --heads B [...] [--model M]\n"
             "       ahascope compare --heads A B [--budget K|P% | --duo-threshold X] [--model M]\n");
        app_compare_heads_help();
        return 0;
    }
    if (r) return args_fail(&e);
    Side *s = h.s;
    o.model = h.model;
    if (app_load(&o, &L, 0, &e)) { app_unload(&L); return args_fail(&e); }
    const Config *c = &L.model.c;
    AppHeadShape shape = {c->n_layers, c->n_heads, c->n_kv_heads, c->seq_len};
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++)
        rc = app_headset_scored(s[k].spec, &s[k].pick, &shape, &s[k].map, &s[k].scores, &e);
    if (!rc) report(s, c->n_layers, c->n_heads);
    app_unload(&L);
    for (int k = 0; k < 2; k++) free(s[k].map), free(s[k].scores);
    return rc ? args_fail(&e) : 0;
}
