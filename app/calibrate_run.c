/* calibrate_run.c — `ahascope calibrate`'s run (app/calibrate_run.h): the
 * runs' oracle rates read from the database, the heads chosen and written. */
#include "app/calibrate_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/files.h"
#include "engine/headset.h"
#include "engine/textout.h"
#include "store/store.h"

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

int calibrate_run(const CalOpts *c, Err *e) {
    int rc = -1;
    Store *st = store_open(c->db, STORE_READ, STORE_BUSY_MS, e);
    StoreHeadRate *r = NULL;
    int n = st ? store_head_rates(st, c->runs, c->n_runs, &r, e) : -1, k = 0;
    if (n > 0 && c->duo) {
        rc = write_duo(c, st, r, n, e);
    } else if (n > 0 && budget_heads(c, n, &k, e) == 0 && write_heads(c, r, n, k, e) == 0) {
        double covered = 0, total = 0;
        for (int i = 0; i < n; i++) total += r[i].oracle_rate * r[i].n, covered += i < k ? r[i].oracle_rate * r[i].n : 0;
        char safe[4 * 1024 + 1]; /* the path as typed: escaped for the terminal */
        printf("%d of %d heads -> %s (they hold %.1f%% of the oracle's global decisions)\n", k, n,
               textout_term(c->out, safe, sizeof safe), total > 0 ? 100 * covered / total : 0.0);
        rc = 0;
    }
    store_close(st, NULL);
    free(r);
    return rc ? -1 : 0;
}
