/* headsets.c — a head set as the command line names it, read into a 0/1 map, its scores and its windows. */
#include "app/headsets.h"

#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "engine/aha.h"
#include "engine/files.h"
#include "engine/sniff.h"
#include "store/store.h"

#define CALIB_MAX_RUNS 1024 /* runs a calib: set pools */

/* "l.h,..." itself, or a file of them: a file of any kind is read as one,
 * so a FIFO is refused by name rather than read as a list. */
static int load_list(const char *spec, const AppHeadShape *s, uint8_t **out, Err *e) {
    char *text = NULL;
    if (sniff_kind(spec) != FILE_MISSING) {
        size_t n;
        if (!(text = file_read_all(spec, "head set", "a head-set file", 1 << 20, &n, e))) return -1;
    }
    int r = aha_parse_heads(text ? text : spec, s->n_layers, s->n_heads, out, e);
    if (r != 0 && text) err_prefix(e, spec);
    free(text);
    return r;
}

/* A table's values per query head (a KV head's for its whole group). */
static float *table_scores(const HeadTable *t, int n_heads, Err *e) {
    int group = n_heads / t->n_kv, n = t->n_layers * n_heads;
    float *s = malloc((size_t)n * sizeof *s);
    if (!s) { err_set(e, "out of memory"); return NULL; }
    for (int c = 0; c < n; c++) s[c] = t->values[(size_t)(c / n_heads) * t->n_kv + (c % n_heads) / group];
    return s;
}

/* The table a scored form names, read against the shape. */
static int read_table(HeadsForm f, const char *path, const AppHeadShape *s, HeadTable *t, Err *e) {
    HeadSpans sp;
    int r;
    switch (f) {
    case HEADS_DUO: return headset_table_read(path, s->n_layers, s->n_kv_heads, t, e);
    case HEADS_RETRIEVAL: return headtab_read_retrieval(path, s, t, e);
    case HEADS_PRULONG: return headtab_read_prulong(path, s, t, e);
    default:
        r = f == HEADS_MOA ? headtab_read_moa(path, s, &sp, e) : headtab_read_windows(path, s, &sp, e);
        if (r) return -1;
        r = headtab_spans_scores(&sp, s->context > 0 ? s->context : 1, t, e);
        headtab_spans_free(&sp);
        return r;
    }
}

static int load_table(HeadsForm f, const char *path, const HeadPick *pick, const AppHeadShape *s, uint8_t **out,
                      float **scores, Err *e) {
    HeadTable t;
    if (read_table(f, path, s, &t, e)) return -1;
    int r = headset_from_table(&t, s->n_heads, pick, out, e);
    if (!r && scores && !(*scores = table_scores(&t, s->n_heads, e))) r = -1;
    headset_table_free(&t);
    return r ? err_prefix(e, path) : 0;
}

/* "DB#ID,ID,...": the database and its run ids. */
static int calib_runs(const char *spec, char *db, size_t cap, int64_t *runs, int *n, Err *e) {
    const char *hash = strrchr(spec, '#');
    if (!hash || hash == spec || (size_t)(hash - spec) >= cap)
        return err_usage(e, "'%s%s' is not calib:DB#RUN[,RUN...]", APP_CALIB_PREFIX, spec);
    snprintf(db, cap, "%.*s", (int)(hash - spec), spec);
    *n = 0;
    for (const char *p = hash + 1;; p++) {
        char *end;
        long long id = strtoll(p, &end, 10);
        if (end == p || id < 1 || (*end && *end != ',') || *n == CALIB_MAX_RUNS)
            return err_usage(e, "'%s%s': runs are ids from 1 separated by commas, at most %d", APP_CALIB_PREFIX, spec,
                             CALIB_MAX_RUNS);
        runs[(*n)++] = id;
        if (!*(p = end)) return 0;
    }
}

/* The heads calibrate would write for the runs: the budget's top oracle
 * global rates, highest first, ties by (layer, head) (store_head_rates). */
static int load_calib(const char *spec, const HeadPick *pick, const AppHeadShape *s, uint8_t **out, float **scores,
                      Err *e) {
    char db[1024];
    int64_t runs[CALIB_MAX_RUNS];
    int n_runs = 0;
    if (calib_runs(spec, db, sizeof db, runs, &n_runs, e)) return -1;
    Store *st = store_open(db, STORE_READ, STORE_BUSY_MS, e);
    if (!st) return -1;
    StoreHeadRate *r = NULL;
    int n = store_head_rates(st, runs, n_runs, &r, e), rc = -1;
    store_close(st, NULL);
    if (n < 0) return -1;
    int k = headset_budget_count(&pick->budget, n);
    if (n != s->n_layers * s->n_heads)
        err_set(e, "%s: the runs have %d heads, the model %d x %d", db, n, s->n_layers, s->n_heads);
    else if (!pick->budget.percent && pick->budget.value > n)
        err_set(e, "--budget %.0f exceeds the %d heads of the runs", pick->budget.value, n);
    else if (!(*out = calloc((size_t)n, 1)) || (scores && !(*scores = malloc((size_t)n * sizeof **scores))))
        err_set(e, "out of memory");
    else {
        for (int i = 0; i < k; i++) (*out)[r[i].layer * s->n_heads + r[i].head] = 1;
        for (int i = 0; scores && i < n; i++) (*scores)[r[i].layer * s->n_heads + r[i].head] = (float)r[i].oracle_rate;
        rc = 0;
    }
    free(r);
    return rc;
}

int app_headset_scored(const char *spec, const HeadPick *pick, const AppHeadShape *shape, uint8_t **out, float **scores,
                       Err *e) {
    const char *rest;
    HeadsForm f = args_heads_form(spec, &rest);
    *out = NULL;
    if (scores) *scores = NULL;
    if (f == HEADS_CALIB) return load_calib(rest, pick, shape, out, scores, e);
    if (f != HEADS_LIST) return load_table(f, rest, pick, shape, out, scores, e);
    return load_list(spec, shape, out, e);
}

int app_headset_load(const char *spec, const HeadPick *pick, const AppHeadShape *shape, uint8_t **out, Err *e) {
    return app_headset_scored(spec, pick, shape, out, NULL, e);
}

int app_headset_spans(const char *spec, const AppHeadShape *shape, float **ab, Err *e) {
    const char *rest;
    HeadsForm f = args_heads_form(spec, &rest);
    HeadSpans sp;
    *ab = NULL;
    if (f != HEADS_MOA && f != HEADS_WINDOWS) return 0;
    if ((f == HEADS_MOA ? headtab_read_moa : headtab_read_windows)(rest, shape, &sp, e)) return -1;
    *ab = sp.ab;
    return 0;
}

HeadPick app_headset_pick(const char *spec, const HeadPick *given, int have_budget, int have_threshold) {
    HeadPick p = *given;
    if (args_heads_form(spec, NULL) == HEADS_PRULONG && !have_budget && !have_threshold)
        p.by_threshold = 1, p.threshold = 0.5;
    return p;
}
