/* eval.c — the evals and eval_scores rows of `ahascope eval`. */
#include <math.h>
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
