/* compare_heads.c — `compare --heads A --heads B`: two head sets' sizes, overlap and Jaccard. */
#include "app/compare_heads.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/headsets.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "engine/headset.h"
#include "engine/textout.h"

/* One --heads and the --budget or --duo-threshold that follows it. */
typedef struct {
    const char *spec;
    HeadPick pick;
    int have_budget, have_threshold;
    uint8_t *map;
} Side;

/* The flags of the heads form: the two sides and the model they are read against. */
typedef struct {
    Side s[2];
    int n;
    const char *model;
} HeadsOpts;

static int read_heads(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag;
    HeadsOpts *h = opts;
    if (h->n == 2) return err_usage(e, "give exactly two --heads");
    h->s[h->n++].spec = v;
    return 0;
}

/* A budget or threshold belongs to the --heads before it. */
static int read_pick(void *opts, const char *f, const char *v, Err *e) {
    HeadsOpts *h = opts;
    if (h->n == 0) return err_usage(e, "%s comes after the --heads it applies to", f);
    Side *x = &h->s[h->n - 1];
    if (!strcmp(f, "--budget")) {
        if (x->have_budget) return err_usage(e, "--heads %s: --budget given twice", x->spec);
        x->have_budget = 1, x->pick.by_threshold = 0;
        return args_budget(f, v, &x->pick.budget, e);
    }
    if (x->have_threshold) return err_usage(e, "--heads %s: --duo-threshold given twice", x->spec);
    x->have_threshold = 1, x->pick.by_threshold = 1;
    return args_float(f, v, 0, 1, &x->pick.threshold, e);
}

static const ArgSpec HEADS_ROWS[] = {
    {"--heads", ARG_CUSTOM, .metavar = "SPEC", .fn = read_heads, .help = "a head set, as --static-heads takes it (twice)"},
    {"--budget", ARG_CUSTOM, .metavar = "K|P%", .fn = read_pick, .help = "cuts the duo: or calib: set of the --heads before it"},
    {"--duo-threshold", ARG_CUSTOM, .metavar = "X", .fn = read_pick, .help = "cuts the duo: set of the --heads before it"},
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
    puts("       ahascope compare --heads A [--budget K|P% | --duo-threshold X] --heads B [...] [--model M]");
}

void app_compare_heads_help(void) {
    puts("Two head sets: their sizes, |A and B|, |A or B|, the Jaccard overlap |A and B| / |A or B|, and\n"
         "the heads in one only. Each is named as --static-heads takes it: l.h,... or a file of them,\n"
         "duo:FILE (with --budget or --duo-threshold, written after that --heads) or calib:DB#RUN[,RUN...]\n"
         "(the set calibrate picks from those runs, with --budget), read against --model's layers and\n"
         "heads (default stories260K).");
    args_help_tables(COMPARE_HEADS_TABLES);
}

static int parse(int argc, char **argv, HeadsOpts *h, Err *e) {
    void *const opts[] = {h};
    int r = args_parse_argv(argc, argv, COMPARE_HEADS_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
    if (h->n != 2) return err_usage(e, "give exactly two --heads");
    for (int i = 0; i < 2; i++)
        if (args_heads_pick(h->s[i].spec, h->s[i].have_budget, h->s[i].have_threshold, "--heads", e)) return -1;
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
        puts("usage: ahascope compare --heads A [--budget K|P% | --duo-threshold X] --heads B [...] [--model M]\n");
        app_compare_heads_help();
        return 0;
    }
    if (r) return args_fail(&e);
    Side *s = h.s;
    o.model = h.model;
    if (app_load(&o, &L, 0, &e)) { app_unload(&L); return args_fail(&e); }
    const Config *c = &L.model.c;
    AppHeadShape shape = {c->n_layers, c->n_heads, c->n_kv_heads};
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) rc = app_headset_load(s[k].spec, &s[k].pick, &shape, &s[k].map, &e);
    if (!rc) report(s, c->n_layers, c->n_heads);
    app_unload(&L);
    free(s[0].map), free(s[1].map);
    return rc ? args_fail(&e) : 0;
}
