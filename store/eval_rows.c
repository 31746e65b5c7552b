/* eval_rows.c — the `evals` and `eval_scores` rows of `eval` and `sweep`, written and read back.
 *
 * The evals and eval_scores rows of `ahascope eval` and
 * `sweep`: written around an evaluation, read back by --from-db. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

int store_eval_begin(Store *s, const StoreEval *ev, int64_t *id, Err *e) {
    if (store_flush(s, e)) return -1;
    char now[32];
    store_now(now);
    sqlite3_stmt *st;
    if (store_prepare(s, "INSERT INTO evals(created_at, label, model, model_sha256, policy, window, sinks, tau, theta, p,"
                         " routers, static_heads, data, n_seqs, matched_to, theta_logit) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,"
                         "?9,?10,?11,?12,?13,?14,?15,?16)", &st, e))
        return -1;
    sqlite3_bind_text(st, 1, now, -1, SQLITE_TRANSIENT);
    store_bind_TEXT(st, 2, ev->label);
    store_bind_TEXT(st, 3, ev->model);
    store_bind_TEXT(st, 4, ev->model_sha256);
    sqlite3_bind_text(st, 5, ev->policy, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 6, ev->window);
    sqlite3_bind_int(st, 7, ev->sinks);
    store_bind_REAL(st, 8, ev->tau);
    store_bind_REAL(st, 9, decide_prob(ev->theta_logit)); /* θ for people; theta_logit is exact */
    store_bind_REAL(st, 10, ev->p);
    store_bind_TEXT(st, 11, ev->routers);
    store_bind_TEXT(st, 12, ev->static_heads);
    store_bind_TEXT(st, 13, ev->data);
    sqlite3_bind_int(st, 14, ev->n_seqs);
    store_bind_TEXT(st, 15, ev->matched_to);
    store_bind_LOGIT(st, 16, ev->theta_logit);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot start an evaluation", e);
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

static int insert_score(Store *s, sqlite3_stmt *st, int64_t id, const StoreScore *sc) {
    const DecideCounts *c = &sc->n;
    DecideRates r = decide_rates(c);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, sc->predictor, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, c->tp);
    sqlite3_bind_int64(st, 4, c->fp);
    sqlite3_bind_int64(st, 5, c->fn);
    sqlite3_bind_int64(st, 6, c->tn);
    store_bind_REAL(st, 7, r.precision);
    store_bind_REAL(st, 8, r.recall);
    store_bind_REAL(st, 9, r.f1);
    store_bind_REAL(st, 10, r.predicted_rate);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    (void)s;
    return rc == SQLITE_DONE ? 0 : -1;
}

int store_eval_end(Store *s, int64_t id, const StoreEval *ev, const StoreScore *scores, int n_scores, Err *e) {
    if (store_flush(s, e)) return -1;
    sqlite3_stmt *st, *sc;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return store_sql_err(s->db, s->path, "cannot finish the evaluation", e);
    if (store_prepare(s, "UPDATE evals SET n_seqs=?2, n_tokens=?3, perplexity=?4, perplexity_full=?5, kl_mean=?6,"
                         " global_share=?7, keys_read_frac=?8, matched_to=?9, kv_read_frac=?10 WHERE eval_id=?1", &st, e))
        goto fail;
    if (store_prepare(s, "INSERT OR REPLACE INTO eval_scores VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)", &sc, e)) {
        sqlite3_finalize(st);
        goto fail;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, ev->n_seqs);
    sqlite3_bind_int64(st, 3, ev->n_tokens);
    double v[] = {ev->perplexity, ev->perplexity_full, ev->kl_mean, ev->global_share, ev->keys_read_frac};
    for (int i = 0; i < 5; i++) store_bind_REAL(st, 4 + i, v[i]);
    store_bind_TEXT(st, 9, ev->matched_to);
    store_bind_REAL(st, 10, ev->kv_read_frac);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    for (int i = 0; ok && i < n_scores; i++) ok = insert_score(s, sc, id, &scores[i]) == 0;
    sqlite3_finalize(st);
    sqlite3_finalize(sc);
    if (ok && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return 0;
    store_sql_err(s->db, s->path, "cannot finish the evaluation", e);
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* Fill r from a row of the SELECT in store_evals (its column order). */
static void eval_row_read(sqlite3_stmt *st, StoreEvalRow *r) {
    StoreEval *ev = &r->ev;
    memset(r, 0, sizeof *r);
    r->eval_id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, ev->label, sizeof ev->label);
    store_col_text(st, 2, ev->model, sizeof ev->model);
    store_col_text(st, 3, ev->model_sha256, sizeof ev->model_sha256);
    store_col_text(st, 4, ev->policy, sizeof ev->policy);
    ev->window = (int)store_col_INTEGER(st, 5, 0), ev->sinks = (int)store_col_INTEGER(st, 6, 0);
    ev->tau = store_col_REAL(st, 7, NAN), ev->theta_logit = store_col_REAL(st, 8, NAN), ev->p = store_col_REAL(st, 9, NAN);
    store_col_text(st, 10, ev->routers, sizeof ev->routers);
    store_col_text(st, 11, ev->static_heads, sizeof ev->static_heads);
    store_col_text(st, 12, ev->data, sizeof ev->data);
    ev->n_seqs = (int)store_col_INTEGER(st, 13, 0), ev->n_tokens = store_col_INTEGER(st, 14, 0);
    ev->perplexity = store_col_REAL(st, 15, NAN), ev->perplexity_full = store_col_REAL(st, 16, NAN);
    ev->kl_mean = store_col_REAL(st, 17, NAN);
    store_col_text(st, 18, ev->matched_to, sizeof ev->matched_to);
    ev->global_share = store_col_REAL(st, 19, NAN), ev->keys_read_frac = store_col_REAL(st, 20, NAN);
    ev->kv_read_frac = store_col_REAL(st, 21, NAN);
}

int store_evals(Store *s, StoreEvalRow **out, Err *e) {
    sqlite3_stmt *st;
    *out = NULL;
    if (store_prepare(s, "SELECT eval_id, label, model, model_sha256, policy, window, sinks, tau, theta_logit, p,"
                         " routers, static_heads, data, n_seqs, n_tokens, perplexity, perplexity_full, kl_mean,"
                         " matched_to, global_share, keys_read_frac, kv_read_frac FROM evals"
                         " WHERE n_tokens IS NOT NULL ORDER BY eval_id", &st, e))
        return -1;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            StoreEvalRow *g = cap <= (1 << 20) ? realloc(*out, (size_t)cap * sizeof **out) : NULL;
            if (!g) { rc = cap > (1 << 20) ? SQLITE_TOOBIG : SQLITE_NOMEM; break; }
            *out = g;
        }
        eval_row_read(st, &(*out)[n++]);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return n;
    free(*out);
    *out = NULL;
    if (rc == SQLITE_TOOBIG) return err_set(e, "%s: more than %d evaluations", s->path, 1 << 20);
    return store_sql_err(s->db, s->path, "cannot read the evaluations", e);
}
