/* headsets.c — a head set as the command line names it, read into a 0/1 map. */
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

static int load_duo(const char *path, const HeadPick *pick, const AppHeadShape *s, uint8_t **out, Err *e) {
    HeadTable t;
    if (headset_table_read(path, s->n_layers, s->n_kv_heads, &t, e)) return -1;
    int r = headset_from_table(&t, s->n_heads, pick, out, e);
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
static int load_calib(const char *spec, const HeadPick *pick, const AppHeadShape *s, uint8_t **out, Err *e) {
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
    else if (!(*out = calloc((size_t)n, 1)))
        err_set(e, "out of memory");
    else {
        for (int i = 0; i < k; i++) (*out)[r[i].layer * s->n_heads + r[i].head] = 1;
        rc = 0;
    }
    free(r);
    return rc;
}

int app_headset_load(const char *spec, const HeadPick *pick, const AppHeadShape *shape, uint8_t **out, Err *e) {
    size_t duo = strlen(APP_DUO_PREFIX), calib = strlen(APP_CALIB_PREFIX);
    *out = NULL;
    if (!strncmp(spec, APP_DUO_PREFIX, duo)) return load_duo(spec + duo, pick, shape, out, e);
    if (!strncmp(spec, APP_CALIB_PREFIX, calib)) return load_calib(spec + calib, pick, shape, out, e);
    return load_list(spec, shape, out, e);
}
