/* test_store_v4.c — schema version 4's layout: exact floats, summary views equal to a recount.
 *
 * Schema version 4's layout: the decisions view gives
 * back exactly the float32 written, and every summary view, read from the
 * totals kept at write time, equals a recomputation from the rows (SQL
 * over `decisions` written here, independent of the views). */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attn.h"
#include "store/internal.h"
#include "store/store.h"
#include "tests/store_fixture.h"
#include "test.h"

/* A deterministic uniform in [0, 1) from a 64-bit state. */
static double uni(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* A float of every kind a field may hold, picked by u: mostly ordinary
 * values around `scale`, then NaN, ±Inf, subnormals, ±0. */
static float any_float(uint64_t *s, float scale, int specials) {
    double u = uni(s), v = uni(s) * 2 - 1;
    if (!specials || u < 0.9) return (float)(v * scale);
    static const float odd[] = {NAN, INFINITY, -INFINITY, 1e-40f, -3e-42f, 1.4e-45f, -0.0f, 0.0f, 3.4e38f};
    return odd[(int)((u - 0.9) * 10 * (sizeof odd / sizeof odd[0])) % (int)(sizeof odd / sizeof odd[0])];
}

enum { WINDOW = 64, SINKS = 4 };

/* One made-up step: gates 0/1 (a few unknown), a router score in [0, 1],
 * estimates with every kind of float, the top-k of a few heads. Fields
 * averaged by the views (score, oracle_err) stay finite so the sums are
 * well defined; the log-odds take ±Inf, which decide as any value does. */
static void fill_step(StepTrace *t, int pos, uint64_t *s) {
    trace_clear(t);
    t->pos = pos, t->token = pos % 500, t->is_prompt = pos < 10;
    snprintf(t->piece, sizeof t->piece, "p%d", pos);
    t->logprob = pos ? -(float)uni(s) * 4 : NAN;
    t->entropy = (float)uni(s);
    t->n_far = attn_n_far(pos, WINDOW, SINKS);
    t->n_kv_heads = t->n_heads;
    int ns, lo;
    attn_local_set(pos, WINDOW, SINKS, &ns, &lo);
    for (int c = 0; c < trace_cells(t); c++) {
        t->gate[c] = (int8_t)(uni(s) < 0.002 ? -1 : uni(s) < 0.3);
        t->keys_read[c] = t->gate[c] < 0 ? -1 : t->gate[c] ? pos + 1 : ns + pos - lo + 1;
        t->score[c] = uni(s) < 0.05 ? NAN : (float)uni(s);
        t->oracle_logit[c] = uni(s) < 0.03 ? NAN : any_float(s, 6, 1);
        t->oracle_err[c] = uni(s) < 0.03 ? NAN : uni(s) < 0.01 ? 1e-40f : (float)uni(s);
        t->qada_logit[c] = any_float(s, 6, 1);
        t->qada_bulk_logit[c] = any_float(s, 30, 1);
        t->qada_rem_logit[c] = any_float(s, 6, 1);
        t->qada_rem_bulk_logit[c] = any_float(s, 6, 1);
        t->far_mean[c] = any_float(s, 3, 1);
        t->far_std[c] = any_float(s, 2, 1);
        for (int r = 0; r < t->top_k && t->n_far > r && c % 5 == 0; r++) {
            t->top_pos[c * t->top_k + r] = SINKS + r;
            t->top_w[c * t->top_k + r] = r == 1 ? 1e-41f : (float)uni(s) / (r + 1);
        }
    }
}

/* Begin a run of an L x H model in s; returns its id (-1 on failure). */
static int64_t begin_run(Store *s, int L, int H) {
    Err e;
    StoreRunInfo r;
    test_run_info(&r, L, H);
    r.n_kv_heads = H / 2, r.seq_len = 1 << 16, r.window = WINDOW, r.sinks = SINKS, r.tau = 0.4, r.theta_logit = -0.5;
    int rc = store_run_begin(s, &r, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    return rc ? -1 : r.run_id;
}

/* Write positions [0, n) of made-up steps into run `run` of s, a share
 * `unknown` of the gates more made unknown (fill_step's own are few). */
static void write_steps(Store *s, int64_t run, int L, int H, int n, int top_k, uint64_t seed, double unknown) {
    Err e;
    StepTrace *t = trace_new_top(L, H, top_k);
    uint64_t st = seed, g = seed ^ 0x5bd1e995;
    for (int p = 0; p < n && t; p++) {
        fill_step(t, p, &st);
        for (int c = 0; c < L * H; c++)
            if (uni(&g) < unknown) t->gate[c] = -1, t->keys_read[c] = -1;
        if (store_write_step(s, run, t, NULL, &e)) { CHECK_MSG(0, "write: %s", e.msg); break; }
    }
    trace_free(t);
}

/* Record one run of n made-up steps of an L x H model; returns its id. */
static int64_t record_run(const char *db, int L, int H, int n, int top_k, uint64_t seed) {
    Err e;
    Store *s = store_open(db, STORE_WRITE, 2000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return -1;
    int64_t run = begin_run(s, L, H);
    store_set_commit_every(s, 50);
    write_steps(s, run, L, H, n, top_k, seed, 0);
    CHECK(store_run_end(s, run, "done", &e) == 0);
    CHECK(store_close(s, &e) == 0);
    return run;
}

/* Two values of a result equal: NULL both, or the same integer, or reals
 * within 1e-12 relative (equal infinities included). */
static int same_cell(sqlite3_stmt *a, sqlite3_stmt *b, int i) {
    int ta = sqlite3_column_type(a, i), tb = sqlite3_column_type(b, i);
    if (ta == SQLITE_NULL || tb == SQLITE_NULL) return ta == tb;
    if (ta == SQLITE_TEXT || tb == SQLITE_TEXT)
        return !strcmp((const char *)sqlite3_column_text(a, i), (const char *)sqlite3_column_text(b, i));
    if (ta == SQLITE_INTEGER && tb == SQLITE_INTEGER) return sqlite3_column_int64(a, i) == sqlite3_column_int64(b, i);
    double x = sqlite3_column_double(a, i), y = sqlite3_column_double(b, i);
    return x == y || fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y));
}

/* Two queries on h give the same rows (same_cell), in their order; where
 * names what is compared. Returns the rows compared. */
static long same_rows(sqlite3 *h, const char *got, const char *want, const char *where) {
    sqlite3_stmt *a = NULL, *b = NULL;
    CHECK_MSG(sqlite3_prepare_v2(h, got, -1, &a, NULL) == SQLITE_OK, "%s: %s", where, sqlite3_errmsg(h));
    CHECK_MSG(sqlite3_prepare_v2(h, want, -1, &b, NULL) == SQLITE_OK, "%s: %s", where, sqlite3_errmsg(h));
    long rows = 0;
    int bad = 0;
    while (a && b && !bad) {
        int ra = sqlite3_step(a), rb = sqlite3_step(b);
        if (ra != rb) { CHECK_MSG(0, "%s: %ld rows in one, more in the other (%d, %d)", where, rows, ra, rb); break; }
        if (ra != SQLITE_ROW) { CHECK_MSG(ra == SQLITE_DONE, "%s: %s", where, sqlite3_errmsg(h)); break; }
        CHECK_INT(sqlite3_column_count(a), sqlite3_column_count(b));
        for (int i = 0; i < sqlite3_column_count(a) && !bad; i++)
            if (!same_cell(a, b, i)) {
                bad = 1;
                CHECK_MSG(0, "%s: row %ld column %s: %s vs %s", where, rows, sqlite3_column_name(a, i),
                          sqlite3_column_text(a, i), sqlite3_column_text(b, i));
            }
        rows++;
    }
    sqlite3_finalize(a), sqlite3_finalize(b);
    return rows;
}

/* The per-head recomputation from the rows: sums and counts (not means),
 * so layers and runs add them up without rounding twice. The predictors
 * by name: (name, its decision as SQL over d and r). */
static const char *const PREDS[][2] = {
    {"executed", "d.gate"},
    {"aha", "d.score > r.tau"},
    {"qada", "d.qada_logit > r.theta_logit"},
    {"qada_bulk", "d.qada_bulk_logit > r.theta_logit"},
    {"qada_rem", "d.qada_rem_logit > r.theta_logit"},
    {"qada_rem_bulk", "d.qada_rem_bulk_logit > r.theta_logit"},
    {"oracle", "d.oracle_logit > r.theta_logit"},
};
#define N_PREDS (sizeof PREDS / sizeof PREDS[0])

static void make_recomputation(sqlite3 *h, int64_t run) {
    /* the run's rows decoded once (every expression below reads each field several times) */
    char *sql = sqlite3_mprintf("DROP TABLE IF EXISTS temp.dx; CREATE TEMP TABLE dx AS SELECT d.*, t.n_far"
                                " FROM decisions d JOIN tokens t USING(run_id, pos) WHERE d.run_id = %lld;"
                                "DROP TABLE IF EXISTS temp.hx; CREATE TEMP TABLE hx AS SELECT d.run_id, d.layer,"
                                " d.head, COUNT(*) AS n, SUM(d.score) AS s_score, COUNT(d.score) AS c_score,"
                                " SUM(1.0 / (1.0 + EXP(-d.oracle_logit))) AS s_mass, COUNT(d.oracle_logit) AS c_mass,"
                                " SUM(d.oracle_err) AS s_err, COUNT(d.oracle_err) AS c_err, SUM(d.keys_read) AS keys", (long long)run);
    for (size_t p = 0; p < N_PREDS; p++) {
        const char *w = PREDS[p][0], *x = PREDS[p][1], *o = PREDS[N_PREDS - 1][1];
        sql = sqlite3_mprintf("%z, SUM(%s) AS g_%s, COUNT(%s) AS n_%s", sql, x, w, x, w);
        if (p + 1 < N_PREDS)
            sql = sqlite3_mprintf("%z, SUM((%s) = 1 AND (%s) = 1) AS tp_%s, SUM((%s) = 1 AND (%s) = 0) AS fp_%s,"
                                  " SUM((%s) = 0 AND (%s) = 1) AS fn_%s, SUM((%s) = 0 AND (%s) = 0) AS tn_%s",
                                  sql, x, o, w, x, o, w, x, o, w, x, o, w);
    }
    sql = sqlite3_mprintf("%z FROM temp.dx d JOIN runs r USING(run_id) WHERE d.n_far IS NOT 0"
                          " GROUP BY d.run_id, d.layer, d.head", sql);
    char *msg = NULL;
    CHECK_MSG(sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK, "recomputation: %s", msg);
    sqlite3_free(msg);
    sqlite3_free(sql);
}

/* The rates of every predictor but the executed gate as SQL columns, from
 * hx (per head: W is "", per layer or run: "SUM"). */
static char *rate_columns(const char *W) {
    char *s = sqlite3_mprintf("");
    for (size_t p = 1; p < N_PREDS; p++) {
        size_t q = p == 1 ? N_PREDS - 1 : p - 1; /* the views list the oracle first */
        s = sqlite3_mprintf("%z, %s(g_%s) * 1.0 / NULLIF(%s(n_%s), 0)", s, W, PREDS[q][0], W, PREDS[q][0]);
    }
    return s;
}

/* The regime split compare prints, kept in head_totals, against the rows:
 * per head and side of sigma = sqrt(2 ln n_far), the decisions with an
 * oracle value and the globals and true positives of qada and qada_bulk. */
static void check_regimes(sqlite3 *h, int64_t run) {
    static const char *const side[2] = {"calm", "frozen"}, *const test[2] = {"NOT f", "f"};
    for (int k = 0; k < 2; k++) {
        const char *x = side[k];
        char *got = sqlite3_mprintf("SELECT layer, head, SUM(CASE predictor WHEN 'oracle' THEN %s_n END),"
                                    " SUM(CASE predictor WHEN 'oracle' THEN %s_global END),"
                                    " SUM(CASE predictor WHEN 'qada' THEN %s_global END),"
                                    " SUM(CASE predictor WHEN 'qada' THEN %s_tp END),"
                                    " SUM(CASE predictor WHEN 'qada_bulk' THEN %s_global END),"
                                    " SUM(CASE predictor WHEN 'qada_bulk' THEN %s_tp END) FROM head_totals"
                                    " WHERE run_id = %lld GROUP BY layer, head"
                                    " HAVING SUM(CASE predictor WHEN 'oracle' THEN %s_n END) > 0"
                                    " ORDER BY layer, head", x, x, x, x, x, x, (long long)run, x);
        char *want = sqlite3_mprintf(
            "SELECT layer, head, COUNT(*), TOTAL(o), TOTAL(q), TOTAL(q AND o), TOTAL(b), TOTAL(b AND o) FROM"
            " (SELECT d.layer, d.head, d.far_std > SQRT(2 * LN(d.n_far)) AS f, d.oracle_logit > r.theta_logit AS o,"
            " COALESCE(d.qada_logit > r.theta_logit, 0) AS q, COALESCE(d.qada_bulk_logit > r.theta_logit, 0) AS b"
            " FROM temp.dx d JOIN runs r USING(run_id) WHERE d.n_far > 1 AND d.far_std IS NOT NULL"
            " AND d.oracle_logit IS NOT NULL) WHERE %s GROUP BY layer, head ORDER BY layer, head", test[k]);
        same_rows(h, got, want, side[k]);
        sqlite3_free(got), sqlite3_free(want);
    }
}

/* Every summary view of run `run` in h against the recomputation. */
static void check_summaries(sqlite3 *h, int64_t run) {
    make_recomputation(h, run);
    char *hr = rate_columns(""), *lr = rate_columns("SUM"), *got, *want;
    got = sqlite3_mprintf("SELECT layer, head, n, global_rate, oracle_rate, aha_rate, qada_rate, qada_bulk_rate,"
                          " qada_rem_rate, qada_rem_bulk_rate, mean_score, mean_oracle_mass, mean_oracle_err, keys_read"
                          " FROM head_rates WHERE run_id = %lld ORDER BY layer, head", (long long)run);
    want = sqlite3_mprintf("SELECT layer, head, n, g_executed * 1.0 / NULLIF(n_executed, 0)%s, s_score / c_score,"
                           " s_mass / c_mass, s_err / c_err, keys FROM hx ORDER BY layer, head", hr);
    CHECK(same_rows(h, got, want, "head_rates") > 0);
    sqlite3_free(got), sqlite3_free(want);
    got = sqlite3_mprintf("SELECT layer, n, global_rate, oracle_rate, aha_rate, qada_rate, qada_bulk_rate,"
                          " qada_rem_rate, qada_rem_bulk_rate, mean_oracle_mass, keys_read FROM layer_rates"
                          " WHERE run_id = %lld ORDER BY layer", (long long)run);
    want = sqlite3_mprintf("SELECT layer, SUM(n), SUM(g_executed) * 1.0 / NULLIF(SUM(n_executed), 0)%s,"
                           " SUM(s_mass) / SUM(c_mass), SUM(keys) FROM hx GROUP BY layer ORDER BY layer", lr);
    CHECK(same_rows(h, got, want, "layer_rates") > 0);
    sqlite3_free(got), sqlite3_free(want), sqlite3_free(hr), sqlite3_free(lr);
    for (size_t p = 0; p + 1 < N_PREDS; p++) {
        const char *w = PREDS[p][0];
        got = sqlite3_mprintf("SELECT layer, head, tp, fp, fn, tn, precision, recall, f1 FROM confusion_head"
                              " WHERE run_id = %lld AND predictor = '%s' ORDER BY layer, head", (long long)run, w);
        want = sqlite3_mprintf("SELECT layer, head, tp_%s, fp_%s, fn_%s, tn_%s, tp_%s * 1.0 / NULLIF(tp_%s + fp_%s, 0),"
                               " tp_%s * 1.0 / NULLIF(tp_%s + fn_%s, 0), 2.0 * tp_%s / NULLIF(2 * tp_%s + fp_%s + fn_%s, 0)"
                               " FROM hx WHERE tp_%s + fp_%s + fn_%s + tn_%s > 0 ORDER BY layer, head",
                               w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w);
        same_rows(h, got, want, w); /* none for a predictor the run lacks (a fixture's qada_rem) */
        sqlite3_free(got), sqlite3_free(want);
        got = sqlite3_mprintf("SELECT tp, fp, fn, tn FROM confusion WHERE run_id = %lld AND predictor = '%s'",
                              (long long)run, w);
        want = sqlite3_mprintf("SELECT SUM(tp_%s), SUM(fp_%s), SUM(fn_%s), SUM(tn_%s) FROM hx"
                               " HAVING SUM(tp_%s + fp_%s + fn_%s + tn_%s) > 0", w, w, w, w, w, w, w, w);
        same_rows(h, got, want, "confusion");
        sqlite3_free(got), sqlite3_free(want);
    }
    got = sqlite3_mprintf("SELECT pos, n_far, global_share, oracle_share, keys_read, keys_full, keys_read_frac, kv_read,"
                          " kv_full FROM token_share WHERE run_id = %lld ORDER BY pos", (long long)run);
    want = sqlite3_mprintf("SELECT t.pos, t.n_far, CASE WHEN t.n_far IS NOT 0 THEN AVG(d.gate) END,"
                           " CASE WHEN t.n_far IS NOT 0 THEN AVG(d.oracle_logit > r.theta_logit) END, SUM(d.keys_read),"
                           " COUNT(*) * (t.pos + 1), SUM(d.keys_read) * 1.0 / (COUNT(*) * (t.pos + 1)), t.kv_read,"
                           " COALESCE(r.n_kv_heads, r.n_heads) * r.n_layers * (t.pos + 1)"
                           " FROM temp.dx d CROSS JOIN tokens t USING(run_id, pos) JOIN runs r USING(run_id)"
                           " WHERE t.run_id = %lld GROUP BY t.pos ORDER BY t.pos", (long long)run);
    CHECK(same_rows(h, got, want, "token_share") > 0);
    sqlite3_free(got), sqlite3_free(want);
    got = sqlite3_mprintf("SELECT n_tokens, global_share, oracle_share, keys_read_frac, kv_read_frac, perplexity"
                          " FROM run_summary WHERE run_id = %lld", (long long)run);
    long long r = (long long)run;
    want = sqlite3_mprintf("SELECT (SELECT n_tokens FROM runs WHERE run_id = %lld),"
                           " SUM(g_executed) * 1.0 / SUM(n_executed), SUM(g_oracle) * 1.0 / SUM(n_oracle),"
                           " (SELECT SUM(d.keys_read) * 1.0 / SUM(d.pos + 1) FROM temp.dx d),"
                           " (SELECT SUM(t.kv_read) * 1.0 / SUM(COALESCE(u.n_kv_heads, u.n_heads) * u.n_layers * (t.pos + 1))"
                           " FROM tokens t JOIN runs u USING(run_id) WHERE t.run_id = %lld),"
                           " (SELECT EXP(-AVG(logprob)) FROM tokens WHERE run_id = %lld AND logprob IS NOT NULL)"
                           " FROM hx", r, r, r, r);
    CHECK(same_rows(h, got, want, "run_summary") == 1);
    sqlite3_free(got), sqlite3_free(want);
    check_regimes(h, run);
}

/* A run written the way record writes it (half a million decisions, NaN,
 * ±Inf, subnormals, -0 among them, the first positions without far keys):
 * the totals kept at each commit answer every summary view as the rows do. */
TEST(store_v4_summaries_equal_a_recomputation_from_the_rows) {
    const char *db = test_tmp("v4_large.db");
    test_db_fresh(db);
    int64_t run = record_run(db, 16, 32, 1000, 4, 42);
    CHECK_INT((int)run, 1);
    sqlite3 *h;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK); /* TEMP tables only */
    CHECK_INT((int)test_db_scalar(db, "SELECT COUNT(*) FROM decision_bits"), 1000 * 16 * 32);
    CHECK(test_db_scalar(db, "SELECT COUNT(*) FROM tokens WHERE n_far = 0") == WINDOW + SINKS);
    check_summaries(h, run);
    sqlite3_close(h);
    /* both sides of the regime split hold decisions (far_std takes every kind of float) */
    CHECK(test_db_scalar(db, "SELECT MIN(calm_n) FROM head_totals WHERE predictor = 'oracle'") > 100);
    CHECK(test_db_scalar(db, "SELECT MIN(frozen_n) FROM head_totals WHERE predictor = 'oracle'") > 5);
    test_db_fresh(db);
}

/* The diff of two runs (compare --run 1 --run 2, two key-ordered scans
 * merged in C) against a join of the decisions view's rows: the flips
 * each way and, per layer, the pairs, each run's global share and the
 * gates that differ, over the positions both runs have with far keys
 * (run 2 shorter, some gates unknown). */
TEST(store_v4_diff_equals_a_join_of_the_rows) {
    const char *db = test_tmp("v4_diff.db");
    test_db_fresh(db);
    CHECK_INT((int)record_run(db, 4, 8, 300, 2, 7), 1);
    CHECK_INT((int)record_run(db, 4, 8, 250, 2, 8), 2);
    int st;
    char *out = test_runf(&st, "%s compare --db %s --run 1 --run 2", test_bin(), db);
    CHECK_MSG(st == 0 && out, "%s", out ? out : "");
    sqlite3 *h;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK); /* TEMP tables only */
    CHECK(sqlite3_exec(h, "CREATE TEMP TABLE x AS SELECT pos, layer, head, gate FROM decisions d JOIN tokens t"
                          " USING(run_id, pos) WHERE run_id = 1 AND t.n_far <> 0;"
                          "CREATE TEMP TABLE y AS SELECT pos, layer, head, gate FROM decisions d JOIN tokens t"
                          " USING(run_id, pos) WHERE run_id = 2 AND t.n_far <> 0;"
                          "CREATE INDEX temp.yk ON y(pos, layer, head);", NULL, NULL, NULL) == SQLITE_OK);
    static const char pairs[] = " FROM x JOIN y USING(pos, layer, head)";
    sqlite3_stmt *q;
    char *sql = sqlite3_mprintf("SELECT SUM(x.gate = 1 AND y.gate = 0), SUM(x.gate = 0 AND y.gate = 1), COUNT(*)%s",
                                pairs);
    CHECK(sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK);
    sqlite3_free(sql);
    CHECK(sqlite3_step(q) == SQLITE_ROW);
    char want[200];
    snprintf(want, sizeof want, "run 1 -> run 2: %lld global->local (-), %lld local->global (+) of %lld decisions",
             sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2));
    CHECK(sqlite3_column_int64(q, 0) > 100 && sqlite3_column_int64(q, 2) == (250 - WINDOW - SINKS) * 32);
    CHECK_MSG(out && strstr(out, want), "want '%s' in:\n%s", want, out ? out : "");
    sqlite3_finalize(q);
    sql = sqlite3_mprintf("SELECT layer, COUNT(*), AVG(x.gate), AVG(y.gate), SUM(x.gate <> y.gate)%s"
                                " GROUP BY layer ORDER BY layer", pairs);
    CHECK(sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK);
    sqlite3_free(sql);
    const char *at = out ? strstr(out, "gates per layer") : NULL;
    at = at ? strstr(at, "-----\n") : NULL; /* the table's rule: its rows follow */
    int rows = 0;
    while (at && sqlite3_step(q) == SQLITE_ROW) {
        int layer;
        long n, differ;
        double ga, gb;
        at = strchr(at, '\n') + 1;
        CHECK_MSG(sscanf(at, "%d %ld %lf %lf %ld", &layer, &n, &ga, &gb, &differ) == 5, "row: %.80s", at);
        CHECK_INT(layer, sqlite3_column_int(q, 0));
        CHECK_INT((int)n, sqlite3_column_int(q, 1));
        CHECK(fabs(ga - sqlite3_column_double(q, 2)) <= 5e-5 && fabs(gb - sqlite3_column_double(q, 3)) <= 5e-5);
        CHECK_INT((int)differ, sqlite3_column_int(q, 4));
        rows++;
    }
    CHECK_INT(rows, 4);
    sqlite3_finalize(q);
    sqlite3_close(h);
    free(out);
    test_db_fresh(db);
}

/* tokens.gates of every position of a run against its decision_bits
 * gates, decoded here from the layout SCHEMA.md gives (two bits a head,
 * layer-major, bit 0 known, bit 1 global). Returns the unknown gates seen. */
static long check_bitmaps(const char *db, int64_t run, int cells) {
    sqlite3 *h;
    sqlite3_stmt *t = NULL, *d = NULL;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT pos, gates FROM tokens WHERE run_id = ?1 ORDER BY pos", -1, &t, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT k >> 28 & 1048575, (k >> 18 & 1023) * ?2 + (k & 262143), gate FROM decision_bits"
                                " WHERE k BETWEEN ?1 << 48 AND ((?1 + 1) << 48) - 1 ORDER BY k", -1, &d, NULL) == SQLITE_OK);
    long unknown = 0, bad = 0, rows = 0;
    int heads = (int)test_db_scalar(db, "SELECT n_heads FROM runs WHERE run_id = 1");
    if (t && d) {
        sqlite3_bind_int64(t, 1, run), sqlite3_bind_int64(d, 1, run), sqlite3_bind_int(d, 2, heads);
        while (sqlite3_step(t) == SQLITE_ROW) {
            int pos = sqlite3_column_int(t, 0);
            const unsigned char *g = sqlite3_column_blob(t, 1);
            if (!g || sqlite3_column_bytes(t, 1) != (cells + 3) / 4) { bad++; continue; }
            for (int c = 0; c < cells; c++, rows++) {
                int bits = g[c / 4] >> (2 * (c % 4)) & 3;
                if (sqlite3_step(d) != SQLITE_ROW) { bad++; break; }
                int null = sqlite3_column_type(d, 2) == SQLITE_NULL;
                bad += sqlite3_column_int(d, 0) != pos || sqlite3_column_int(d, 1) != c;
                bad += null ? bits != 0 : bits != (sqlite3_column_int(d, 2) ? 3 : 1);
                unknown += null;
            }
            for (int c = cells; c < (cells + 3) / 4 * 4; c++) bad += (g[c / 4] >> (2 * (c % 4)) & 3) != 0;
        }
        CHECK(sqlite3_step(d) == SQLITE_DONE); /* no decision row left over */
    }
    CHECK_MSG(bad == 0 && rows > 0, "run %lld: %ld of %ld gates differ from their rows", (long long)run, bad, rows);
    sqlite3_finalize(t), sqlite3_finalize(d);
    sqlite3_close(h);
    return unknown;
}

/* The three ways of summing a diff agree head by head on runs a and b of
 * the file at db: the tokens' bitmaps, the decision rows merged by key,
 * the decided view joined. Returns the gates that differ. */
/* The views' join has no index to use (a view's rows are computed), so it
 * is quadratic in the positions: a few seconds here, checked on the pairs
 * that differ in kind (with_views), the other pairs by the two fast paths. */
static long same_diff_three_ways(const char *db, int64_t a, int64_t b, int L, int H, int with_views) {
    Err e;
    Store *s = store_open(db, STORE_READ, 2000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return -1;
    static const StoreDiffPath paths[3] = {STORE_DIFF_GATES, STORE_DIFF_KEYS, STORE_DIFF_VIEWS};
    static const char *const names[3] = {"bitmaps", "keys", "views"};
    StoreDiffHead *dh[3];
    long differ = 0;
    int n_paths = with_views ? 3 : 2;
    for (int p = 0; p < n_paths; p++) {
        dh[p] = calloc((size_t)L * H, sizeof *dh[p]);
        for (int c = 0; dh[p] && c < L * H; c++) dh[p][c].fp = -1;
        CHECK_MSG(dh[p] && store_diff_sums(s, a, b, L, H, paths[p], dh[p], &e) == 0, "%s: %s", names[p], e.msg);
    }
    for (int c = 0; c < L * H; c++) {
        const StoreDiffHead *g = &dh[0][c];
        for (int p = 1; p < n_paths; p++) {
            const StoreDiffHead *o = &dh[p][c];
            CHECK_MSG(g->n == o->n && g->down == o->down && g->up == o->up && g->sx == o->sx && g->cx == o->cx &&
                          g->sy == o->sy && g->cy == o->cy && g->d == o->d && g->cd == o->cd && g->fp == o->fp,
                      "runs %lld, %lld head %d: bitmaps n %lld d %lld cx %lld fp %lld, %s n %lld d %lld cx %lld fp %lld",
                      (long long)a, (long long)b, c, (long long)g->n, (long long)g->d, (long long)g->cx,
                      (long long)g->fp, names[p], (long long)o->n, (long long)o->d, (long long)o->cx, (long long)o->fp);
        }
        differ += g->d;
    }
    for (int p = 0; p < n_paths; p++) free(dh[p]);
    store_close(s, NULL);
    return differ;
}

/* Version 5's gate bitmaps hold exactly the decision rows' gates (known
 * or not, a shape whose heads do not fill the last byte), and the diff
 * read from them equals the diff read from the rows and from the views:
 * runs of different lengths either way round, a run still being written
 * (its committed positions), and a run without bitmaps falls back to the
 * rows. merge copies the bitmaps. */
TEST(store_v5_gate_bitmaps_equal_the_rows) {
    const char *db = test_tmp("v5_gates.db");
    test_db_fresh(db);
    enum { L = 3, H = 6 }; /* 18 heads: the last byte half filled */
    Err e;
    Store *w = store_open(db, STORE_WRITE, 2000, &e);
    CHECK_MSG(w != NULL, "%s", e.msg);
    if (!w) return;
    store_set_commit_every(w, 7);
    int64_t r1 = begin_run(w, L, H);
    write_steps(w, r1, L, H, 300, 2, 11, 0.05);
    CHECK(store_run_end(w, r1, "done", &e) == 0);
    int64_t r2 = begin_run(w, L, H);
    write_steps(w, r2, L, H, 230, 2, 12, 0.05);
    CHECK(store_run_end(w, r2, "done", &e) == 0);
    int64_t r3 = begin_run(w, L, H); /* left running: 140 positions committed, 5 pending */
    write_steps(w, r3, L, H, 145, 0, 13, 0.1);
    CHECK_INT((int)test_db_scalar(db, "SELECT n_tokens FROM runs WHERE run_id = 3"), 140);
    CHECK(check_bitmaps(db, r1, L * H) > 100);
    CHECK(check_bitmaps(db, r3, L * H) > 100);
    check_bitmaps(db, r2, L * H);
    CHECK(same_diff_three_ways(db, r1, r2, L, H, 1) > 500);
    CHECK(same_diff_three_ways(db, r2, r1, L, H, 0) > 500);
    CHECK(same_diff_three_ways(db, r1, r3, L, H, 1) > 100);
    CHECK(same_diff_three_ways(db, r3, r2, L, H, 0) > 100);
    CHECK(store_run_end(w, r3, "done", &e) == 0);
    CHECK(store_close(w, &e) == 0);
    CHECK(same_diff_three_ways(db, r1, r3, L, H, 0) > 100);
    /* merge copies the bitmaps: the merged file's diff reads them */
    const char *out = test_tmp("v5_gates_merged.db");
    test_db_fresh(out);
    int st;
    char *m = test_runf(&st, "%s merge --out %s %s", test_bin(), out, db);
    CHECK_MSG(st == 0, "merge: %s", m ? m : "");
    free(m);
    CHECK_INT((int)test_db_scalar(out, "SELECT COUNT(*) FROM tokens WHERE gates IS NOT NULL"), 300 + 230 + 145);
    check_bitmaps(out, 2, L * H);
    char *a = test_runf(&st, "%s compare --db %s --run 1 --run 2", test_bin(), db);
    char *b = test_runf(&st, "%s compare --db %s --run 1 --run 2", test_bin(), out);
    CHECK_MSG(a && b && !strcmp(a, b) && strstr(a, "gate flips per head"), "before merge:\n%s\nafter:\n%s", a, b);
    /* a run without bitmaps (written before version 5): its diff reads the rows and says the same */
    test_db_exec(out, "UPDATE tokens SET gates = NULL WHERE run_id = 2");
    Store *s = store_open(out, STORE_READ, 2000, &e);
    StoreDiffHead *dh = calloc(L * H, sizeof *dh);
    CHECK(s && dh && store_diff_sums(s, 1, 2, L, H, STORE_DIFF_GATES, dh, &e) == 1);
    CHECK(dh && dh[0].n == 0 && dh[0].fp == -1); /* nothing summed */
    store_close(s, NULL);
    free(dh);
    char *c = test_runf(&st, "%s compare --db %s --run 1 --run 2", test_bin(), out);
    CHECK_MSG(st == 0 && a && c && !strcmp(a, c), "with bitmaps:\n%s\nwithout:\n%s", a, c);
    CHECK(same_diff_three_ways(out, 1, 3, L, H, 0) > 100);
    free(a), free(b), free(c);
    test_db_fresh(db), test_db_fresh(out);
}

/* Run `run`'s tokens from position `part` on made another text (each id
 * one higher), as a run whose sampling went another way would have. */
static void part_texts(const char *db, int64_t run, int part) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE tokens SET token_id = token_id + 1 WHERE run_id = %lld AND pos >= %d",
             (long long)run, part);
    test_db_exec(db, sql);
}

/* Per head, the pairs and the gates that differ between runs 1 and 2 of db
 * over positions with far keys in both below `upto`, counted by SQL over
 * the decided view into n[] and d[]. */
static void recount_flips(const char *db, int upto, int L, int H, long *n, long *d) {
    sqlite3 *h;
    sqlite3_stmt *q = NULL;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT x.layer, x.head, COUNT(*), SUM(x.gate <> y.gate) FROM decided x JOIN decided y"
                                " ON y.run_id = 2 AND y.pos = x.pos AND y.layer = x.layer AND y.head = x.head"
                                " WHERE x.run_id = 1 AND x.pos < ?1 GROUP BY 1, 2", -1, &q, NULL) == SQLITE_OK);
    memset(n, 0, (size_t)L * H * sizeof *n), memset(d, 0, (size_t)L * H * sizeof *d);
    sqlite3_bind_int(q, 1, upto);
    while (q && sqlite3_step(q) == SQLITE_ROW) {
        int c = sqlite3_column_int(q, 0) * H + sqlite3_column_int(q, 1);
        n[c] = sqlite3_column_int64(q, 2), d[c] = sqlite3_column_int64(q, 3);
    }
    sqlite3_finalize(q);
    sqlite3_close(h);
}

/* Two runs whose texts part at position P: store_texts_part says P, and
 * every way of summing the diff counts only positions 0 .. P-1 (past P the
 * positions hold other texts, their gates not comparable), as a recount by
 * SQL over those positions does; compare's text says which positions.
 * Runs with the same text: the shorter one's length. */
TEST(store_diff_counts_only_the_positions_before_the_texts_part) {
    const char *db = test_tmp("v5_part.db");
    test_db_fresh(db);
    enum { L = 2, H = 4, P = 120 };
    CHECK_INT((int)record_run(db, L, H, 200, 0, 31), 1);
    CHECK_INT((int)record_run(db, L, H, 180, 0, 32), 2);
    Err e;
    Store *s = store_open(db, STORE_READ, 2000, &e);
    int parted = -1;
    CHECK_INT(s ? store_texts_part(s, 1, 2, &parted, &e) : -2, 180); /* the same text: the shorter length */
    CHECK_INT(parted, 0);
    store_close(s, NULL);
    part_texts(db, 2, P);
    s = store_open(db, STORE_READ, 2000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return;
    CHECK_INT(store_texts_part(s, 1, 2, &parted, &e), P);
    CHECK_INT(store_texts_part(s, 2, 1, NULL, &e), P);
    CHECK_INT(parted, 1);
    long n[L * H], d[L * H], n_all[L * H], d_all[L * H];
    recount_flips(db, P, L, H, n, d);
    recount_flips(db, 1 << 20, L, H, n_all, d_all);
    long past = 0; /* the recount past P differs, or this test would not tell the bound from none */
    for (int c = 0; c < L * H; c++) past += d_all[c] - d[c];
    CHECK_MSG(past > 20 && n[0] == P - WINDOW - SINKS, "flips past P: %ld, pairs of head 0: %ld", past, n[0]);
    static const StoreDiffPath paths[3] = {STORE_DIFF_GATES, STORE_DIFF_KEYS, STORE_DIFF_VIEWS};
    for (int p = 0; p < 3; p++) {
        StoreDiffHead dh[L * H];
        for (int c = 0; c < L * H; c++) dh[c] = (StoreDiffHead){.fp = -1};
        CHECK_MSG(store_diff_sums(s, 1, 2, L, H, paths[p], dh, &e) == 0, "path %d: %s", p, e.msg);
        for (int c = 0; c < L * H; c++)
            CHECK_MSG(dh[c].n == n[c] && dh[c].d == d[c] && dh[c].fp < P, "path %d head %d: n %lld d %lld, SQL n %ld d %ld",
                      p, c, (long long)dh[c].n, (long long)dh[c].d, n[c], d[c]);
    }
    store_close(s, NULL);
    int st;
    char *out = test_runf(&st, "%s compare --db %s --run 1 --run 2", test_bin(), db);
    CHECK_MSG(st == 0 && out && strstr(out, "tokens: diverge at position 120") &&
                  strstr(out, "gates compared over positions 0-119, where the texts part"), "%s", out ? out : "");
    free(out);
    test_db_fresh(db);
}

/* Bit for bit: what the decisions and attn_top views return, cast back to
 * float, is the float32 written (NaN reads as NULL), and a reader's traces
 * are the traces written. */
TEST(store_v4_decisions_view_returns_the_float32_written) {
    const char *db = test_tmp("v4_bits.db");
    test_db_fresh(db);
    int L = 3, H = 8, n = 90, K = 3;
    int64_t run = record_run(db, L, H, n, K, 7);
    sqlite3 *h;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st = NULL, *tp = NULL;
    CHECK(sqlite3_prepare_v2(h, "SELECT pos, layer, head, gate, score, oracle_logit, oracle_err, qada_logit,"
                                " qada_bulk_logit, keys_read, qada_rem_logit, qada_rem_bulk_logit, far_mean, far_std"
                                " FROM decisions WHERE run_id = 1 ORDER BY pos, layer, head", -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT key_pos, weight FROM attn_top WHERE run_id = 1 AND pos = ?1 AND layer = ?2"
                                " AND head = ?3 ORDER BY rank", -1, &tp, NULL) == SQLITE_OK);
    StepTrace *t = trace_new_top(L, H, K), *back = trace_new_top(L, H, K);
    uint64_t s = 7;
    long rows = 0, bad = 0, specials = 0, negzero = 0, tops = 0;
    Err e;
    Store *rd = store_open(db, STORE_READ, 1000, &e);
    for (int p = 0; p < n && st && tp && rd; p++) {
        fill_step(t, p, &s);
        CHECK_INT(store_read_steps(rd, run, p, 1, &back, &e), 1);
        for (int c = 0; c < L * H; c++, rows++) {
            if (sqlite3_step(st) != SQLITE_ROW) { bad++; break; }
            bad += sqlite3_column_int(st, 0) != p || sqlite3_column_int(st, 1) * H + sqlite3_column_int(st, 2) != c;
            bad += t->gate[c] < 0 ? sqlite3_column_type(st, 3) != SQLITE_NULL : sqlite3_column_int(st, 3) != t->gate[c];
            bad += t->keys_read[c] < 0 ? sqlite3_column_type(st, 9) != SQLITE_NULL
                                       : sqlite3_column_int(st, 9) != t->keys_read[c];
            const float want[] = {t->score[c], t->oracle_logit[c], t->oracle_err[c], t->qada_logit[c],
                                  t->qada_bulk_logit[c], t->qada_rem_logit[c], t->qada_rem_bulk_logit[c],
                                  t->far_mean[c], t->far_std[c]};
            static const int col[] = {4, 5, 6, 7, 8, 10, 11, 12, 13};
            for (int f = 0; f < 9; f++) {
                if (isnan(want[f])) { bad += sqlite3_column_type(st, col[f]) != SQLITE_NULL; continue; }
                float got = (float)sqlite3_column_double(st, col[f]);
                bad += memcmp(&got, &want[f], sizeof got) != 0; /* -0.0 and the subnormals too */
                specials += isinf(want[f]) || (want[f] != 0 && fabsf(want[f]) < 1.2e-38f);
                negzero += want[f] == 0 && signbit(want[f]);
            }
            sqlite3_bind_int(tp, 1, p), sqlite3_bind_int(tp, 2, c / H), sqlite3_bind_int(tp, 3, c % H);
            for (int r = 0; r < K; r++) {
                int have = sqlite3_step(tp) == SQLITE_ROW, rec = t->top_pos[c * K + r] >= 0;
                bad += have != rec;
                if (!have || !rec) break;
                float w = (float)sqlite3_column_double(tp, 1);
                bad += sqlite3_column_int(tp, 0) != t->top_pos[c * K + r] || memcmp(&w, &t->top_w[c * K + r], 4);
                tops++;
            }
            sqlite3_reset(tp);
        }
        char why[160] = "";
        for (int c = 0; c < L * H; c++) {
#define V4_SAME(name, type, missing, sql, show, title, short_name, doc) \
    if (memcmp(&t->name[c], &back->name[c], sizeof t->name[c]) && !(t->name[c] != t->name[c] && back->name[c] != back->name[c])) \
        snprintf(why, sizeof why, "pos %d cell %d: " #name " read back differs", p, c);
            TRACE_HEAD_FIELDS(V4_SAME)
#undef V4_SAME
        }
        bad += memcmp(t->top_pos, back->top_pos, (size_t)L * H * K * sizeof *t->top_pos) != 0;
        CHECK_MSG(!why[0], "%s", why);
    }
    CHECK_MSG(bad == 0, "%ld of %ld rows differ from what was written", bad, rows);
    CHECK(specials > 100 && negzero > 10 && tops > 100); /* the odd values were there to be checked */
    CHECK_INT(store_run_attn_top(rd, run, &e), K);
    store_close(rd, NULL);
    trace_free(t), trace_free(back);
    sqlite3_finalize(st), sqlite3_finalize(tp);
    sqlite3_close(h);
}

/* Two CSV texts alike field by field: numbers within rel (relative), the
 * rest byte for byte. */
static int same_csv(const char *a, const char *b, double rel) {
    if (rel == 0) return !strcmp(a, b);
    while (*a && *b) {
        size_t la = strcspn(a, ",\r\n"), lb = strcspn(b, ",\r\n");
        char fa[64], fb[64], *ea, *eb;
        snprintf(fa, sizeof fa, "%.*s", (int)(la < 63 ? la : 63), a);
        snprintf(fb, sizeof fb, "%.*s", (int)(lb < 63 ? lb : 63), b);
        double x = strtod(fa, &ea), y = strtod(fb, &eb);
        int nums = la && lb && !*ea && !*eb;
        if (nums ? !(x == y || fabs(x - y) <= rel * fmax(fabs(x), fabs(y))) : la != lb || memcmp(a, b, la)) return 0;
        a += la, b += lb;
        if (*a != *b) return 0;
        if (*a) a++, b++;
    }
    return *a == *b;
}

/* The older fixtures: read-only, their summaries (from rows, or version
 * 4's totals) equal those of the copy a writer upgraded (from totals
 * computed on upgrade), and the upgraded totals equal a recomputation from
 * the rows. */
TEST(store_v4_upgraded_fixtures_answer_as_before) {
    /* the rates the older versions had (a build with more predictors adds columns of its own) */
#define V4_RATES "global_rate, oracle_rate, aha_rate, qada_rate, qada_bulk_rate, qada_rem_rate, qada_rem_bulk_rate"
    static const char *const views[] = {
        "SELECT run_id, layer, head, n, " V4_RATES ", mean_score, mean_oracle_mass, mean_oracle_err, keys_read"
        " FROM head_rates ORDER BY run_id, layer, head",
        "SELECT run_id, layer, n, " V4_RATES ", mean_oracle_mass, keys_read FROM layer_rates ORDER BY run_id, layer",
        "SELECT * FROM token_share ORDER BY run_id, pos", "SELECT * FROM run_summary ORDER BY run_id",
        "SELECT * FROM confusion_head ORDER BY run_id, predictor, layer, head",
        "SELECT * FROM confusion ORDER BY run_id, predictor",
        ("SELECT run_id, pos, layer, head, gate, score, oracle_logit, oracle_err, qada_logit, qada_bulk_logit, keys_read,"
         " qada_rem_logit, qada_rem_bulk_logit, far_mean, far_std FROM decisions ORDER BY run_id, pos, layer, head"),
        "SELECT * FROM attn_top ORDER BY run_id, pos, layer, head, rank"};
    for (int v = 1; v <= 4; v++) {
        char fx[64], ro[64], rw[64];
        snprintf(fx, sizeof fx, "tests/fixtures/store/v%d.db", v);
        snprintf(ro, sizeof ro, "v4_from_v%d_ro.db", v);
        snprintf(rw, sizeof rw, "v4_from_v%d_rw.db", v);
        char *a = NULL, *b = NULL;
        long n = 0;
        char *bytes = test_read_file(fx, &n);
        snprintf(ro, sizeof ro, "%s", test_tmp(ro));
        snprintf(rw, sizeof rw, "%s", test_tmp(rw));
        CHECK(bytes && test_write_file(ro, bytes, n) == 0 && test_write_file(rw, bytes, n) == 0);
        free(bytes);
        Err e;
        Store *s = store_open(rw, STORE_WRITE, 1000, &e); /* upgrades */
        CHECK_MSG(s != NULL, "v%d: %s", v, e.msg);
        store_close(s, NULL);
        CHECK_INT((int)test_db_scalar(rw, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
        for (size_t q = 0; q < sizeof views / sizeof views[0]; q++) {
            int st1, st2;
            a = test_runf(&st1, "%s query --db %s --csv '%s'", test_bin(), ro, views[q]);
            b = test_runf(&st2, "%s query --db %s --csv '%s'", test_bin(), rw, views[q]);
            /* version 1's log-odds were computed in double from its probabilities; version 4 keeps
             * float32s, so that file's answers agree to float precision, the others' exactly */
            CHECK_MSG(st1 == 0 && st2 == 0 && a && b && same_csv(a, b, v == 1 ? 1e-6 : 0),
                      "v%d, %s:\nread-only %.300s\nupgraded %.300s", v, views[q], a ? a : "", b ? b : "");
            free(a), free(b);
        }
        CHECK_INT((int)test_db_scalar(ro, "PRAGMA user_version"), v); /* left as it was */
        /* compare's regime split: over the rows in the old file, from the totals in the upgraded one */
        int st1, st2;
        a = test_runf(&st1, "%s compare --db %s --run 1", test_bin(), ro);
        b = test_runf(&st2, "%s compare --db %s --run 1", test_bin(), rw);
        CHECK_MSG(st1 == st2 && a && b && !strcmp(a, b), "v%d compare:\nread-only %s\nupgraded %s", v, a ? a : "",
                  b ? b : "");
        if (v == 3) CHECK_MSG(b && strstr(b, "by regime of the far scores"), "%s", b ? b : "");
        free(a), free(b);
        if (v == 1 || v == 4) { /* the diff: the old file's rows (or keys), the upgraded one's as it reads them */
            a = test_runf(&st1, "%s compare --db %s --run 1 --run 2", test_bin(), ro);
            b = test_runf(&st2, "%s compare --db %s --run 1 --run 2", test_bin(), rw);
            CHECK_MSG(st1 == 0 && st2 == 0 && a && b && !strcmp(a, b) && strstr(b, "gate flips per head"),
                      "diff:\nread-only %s\nupgraded %s", a ? a : "", b ? b : "");
            free(a), free(b);
        }
        sqlite3 *h;
        CHECK(sqlite3_open_v2(rw, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
        check_summaries(h, 1);
        sqlite3_close(h);
    }
}
