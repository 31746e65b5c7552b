/* calibrate.c — per-head oracle rates pooled over runs (static head sets).
 *
 * Per-head oracle rates pooled over runs: what a static head
 * set (DuoAttention / RazorAttention style) is chosen from. */
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

/* Runs must agree on shape and hold oracle values, or the pooled rate
 * would mix heads that are not the same head. */
static int check_runs(Store *s, const int64_t *runs, int n_runs, int *L, int *H, Err *e) {
    for (int i = 0; i < n_runs; i++) {
        for (int j = 0; j < i; j++) /* pooled twice, a run would weigh double without a word */
            if (runs[j] == runs[i]) return err_set(e, "%s: run %lld is given twice", s->path, (long long)runs[i]);
        StoreRunInfo r;
        if (store_run_info(s, runs[i], &r, e)) return -1;
        int l = r.n_layers, h = r.n_heads;
        store_run_info_free(&r);
        if (i == 0) *L = l, *H = h;
        else if (l != *L || h != *H)
            return err_set(e, "%s: run %lld has %dx%d heads, run %lld %dx%d", s->path, (long long)runs[i], l, h,
                           (long long)runs[0], *L, *H);
    }
    return 0;
}

static int by_rate(const void *a, const void *b) {
    const StoreHeadRate *x = a, *y = b;
    if (x->oracle_rate != y->oracle_rate) return x->oracle_rate < y->oracle_rate ? 1 : -1;
    return x->layer != y->layer ? x->layer - y->layer : x->head - y->head;
}

/* Whether every run's totals can be believed (store_check_totals): 1 when
 * one cannot, and the rates are counted from the decision rows, with a line
 * on stderr saying why (the rates go to a head set, not to a table). */
static int rows_instead(Store *s, const int64_t *runs, int n_runs, Err *e) {
    for (int i = 0; i < n_runs; i++) {
        int bad = store_summary_note(s, runs[i], 0, stderr, "the oracle rates are counted from the decision rows", e);
        if (bad) return bad;
    }
    return s->version < 4;
}

int store_head_rates(Store *s, const int64_t *runs, int n_runs, StoreHeadRate **out, Err *e) {
    int L = 0, H = 0;
    *out = NULL;
    if (n_runs < 1) return err_set(e, "no runs given");
    if (check_runs(s, runs, n_runs, &L, &H, e)) return -1;
    int rows = rows_instead(s, runs, n_runs, e);
    if (rows < 0) return -1;
    StoreHeadRate *r = calloc((size_t)L * H, sizeof *r);
    long *glob = calloc((size_t)L * H, sizeof *glob);
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (!r || !glob) { err_set(e, "out of memory"); goto out; }
    /* the oracle's label in SQL: mirrors decide_label (engine/decide.h) */
    /* version 4 keeps the counts (oracle values exist only where there are far keys) */
    if (store_prepare(s, !rows ? "SELECT s.layer, s.head, s.oracle_mass_n, t.global FROM head_stats s"
                                           " JOIN head_totals t USING(run_id, layer, head) WHERE s.run_id=?1"
                                           " AND t.predictor = 'oracle' AND s.oracle_mass_n > 0"
                                         : "SELECT layer, head, COUNT(*), SUM(oracle_logit > theta_logit) FROM decided"
                                           " WHERE run_id=?1 AND oracle_logit IS NOT NULL GROUP BY layer, head", &st, e))
        goto out;
    for (int i = 0; i < n_runs; i++) {
        sqlite3_bind_int64(st, 1, runs[i]);
        int step, seen = 0;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            int l = sqlite3_column_int(st, 0), h = sqlite3_column_int(st, 1);
            if (l < 0 || l >= L || h < 0 || h >= H) continue;
            r[l * H + h].n += sqlite3_column_int64(st, 2);
            glob[l * H + h] += sqlite3_column_int64(st, 3);
            seen = 1;
        }
        sqlite3_reset(st);
        if (step != SQLITE_DONE) { store_sql_err(s->db, s->path, "calibrate failed", e); goto out; }
        if (!seen) {
            err_set(e, "%s: run %lld has no oracle values past its window (record it with --profile, more steps than --window)", s->path, (long long)runs[i]);
            goto out;
        }
    }
    for (int i = 0; i < L * H; i++) {
        r[i].layer = i / H, r[i].head = i % H;
        r[i].oracle_rate = r[i].n ? (double)glob[i] / r[i].n : 0;
    }
    qsort(r, (size_t)L * H, sizeof *r, by_rate);
    *out = r, r = NULL;
    rc = L * H;
out:
    sqlite3_finalize(st);
    free(r);
    free(glob);
    return rc;
}
