/* test_decide.c — the predictors' rules, and the SQL views that mirror them, cell for cell.
 *
 * The predictors' rules (engine/decide.h), and the SQL
 * views that mirror them checked against the C module cell for cell. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/aha.h"
#include "engine/attn.h"
#include "engine/decide.h"
#include "engine/sha256.h"
#include "store/internal.h"
#include "store/store.h"
#include "test.h"

TEST(decide_names_one_list) {
    DecidePred p;
    for (int k = 0; k < DECIDE_COUNT; k++) {
        CHECK_INT(decide_parse(decide_name((DecidePred)k), &p), 0);
        CHECK_INT(p, k);
    }
    CHECK(!strcmp(decide_name(DECIDE_EXECUTED), "executed") && !strcmp(decide_name(DECIDE_ORACLE), "oracle"));
    CHECK_INT(decide_parse("static", &p), -1);
    char buf[96];
    decide_list(buf, sizeof buf, DECIDE_N_SQL, ", "); /* the scored ones: the canary build adds one after these */
    const char *want = "executed, aha, qada, qada_bulk, qada_rem, qada_rem_bulk";
    CHECK_MSG(!strncmp(buf, want, strlen(want)) && (!buf[strlen(want)] || buf[strlen(want)] == ','), "%s", buf);
}

/* engine/predictors.h's one list: the policies in their order, the scored
 * predictors then the label, a threshold shared by the policy and the
 * predictor of one name, a gate rule for every θ policy. */
TEST(predictors_one_list_generates_every_enum) {
    char buf[160];
    aha_policy_list(buf, sizeof buf, "|");
    CHECK_MSG(!strcmp(buf, "aha|full|local|oracle|qada|qada_bulk|qada_rem|qada_rem_bulk|static|random"), "%s", buf);
    int theta_policies = 0;
    for (int k = 0; k < POLICY_COUNT; k++) {
        Policy p;
        Err e;
        CHECK_INT(aha_policy_parse(aha_policy_name((Policy)k), &p, &e), 0);
        CHECK_INT(p, k);
        theta_policies += aha_policy_threshold((Policy)k) == PRED_THR_THETA;
    }
    CHECK_INT(theta_policies, GATE_QADA_REM_BULK); /* GATE_FIXED, then one rule per θ policy */
    CHECK_INT(GATE_ORACLE, 1);
    CHECK_INT(aha_policy_threshold(POLICY_AHA), PRED_THR_TAU);
    CHECK_INT(aha_policy_threshold(POLICY_RANDOM), PRED_THR_P);
    CHECK_INT(aha_policy_threshold(POLICY_STATIC), PRED_THR_NONE);
    CHECK_INT(aha_policy_threshold(POLICY_FULL), PRED_THR_NONE);
    CHECK_INT(DECIDE_N_SQL, DECIDE_ORACLE);
    CHECK_INT(DECIDE_ORACLE, DECIDE_COUNT - 1);
    for (int k = 0; k < DECIDE_COUNT; k++) {
        Policy p;
        Err e;
        if (aha_policy_parse(decide_name((DecidePred)k), &p, &e) == 0)
            CHECK_MSG(aha_policy_threshold(p) == decide_threshold((DecidePred)k), "%s", decide_name((DecidePred)k));
        else /* every predictor but the gate is a policy, or a θ estimate scored only (the canary build's) */
            CHECK_MSG(k == DECIDE_EXECUTED || decide_threshold((DecidePred)k) == PRED_THR_THETA, "%s",
                      decide_name((DecidePred)k));
    }
    CHECK_INT(decide_threshold(DECIDE_EXECUTED), PRED_THR_GATE);
    CHECK(!strcmp(decide_title(DECIDE_EXECUTED), "gate") && !strcmp(decide_title(DECIDE_QADA), "QAdA"));
    CHECK(!strcmp(decide_title(DECIDE_QADA_REM_BULK), "qada_rem_bulk"));
}

/* The SHA-256 of the views db holds, every view's stored CREATE statement
 * by name, joined by newlines, into hex. */
static void views_digest(sqlite3 *db, char hex[65]) {
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT group_concat(sql, char(10)) FROM (SELECT sql FROM sqlite_master"
                                 " WHERE type = 'view' ORDER BY name)", -1, &st, NULL) == SQLITE_OK);
    const char *text = st && sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    CHECK(text != NULL);
    const char *out = test_tmp("views.sql");
    FILE *f = fopen(out, "wb");
    if (f && text) fputs(text, f);
    if (f) fclose(f);
    Err e;
    hex[0] = 0;
    CHECK(sha256_file(out, hex, &e) == 0);
    sqlite3_finalize(st);
}

/* The views' text is data a file keeps: version 5's, frozen in
 * schema_old.c, must be what version 5 wrote (the digest of its views as
 * version 4 and 5 generated them from the list; version 3's, written by
 * hand, was 2bcd19e3…), and version 6's for its base lists must not change
 * with this build's lists (the canary build adds a field and a predictor):
 * a file's stored views are compared with the text made from its lists. */
TEST(predictors_keep_the_views_text) {
    sqlite3 *db = NULL;
    char hex[65];
    CHECK(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(db, store_schema_old(5), NULL, NULL, NULL) == SQLITE_OK);
    views_digest(db, hex);
    CHECK_MSG(!strcmp(hex, "8398ea3657f361092536c4888c51a67b31e3439524eb27b13f9b697ef0f05af8"), "version 5: %s", hex);
    sqlite3_close(db);
    StoreCatalog base;
    store_catalog_base(&base);
    for (int v = 6; v <= 7; v++) {
        char *views = store_views_sql(&base, "", v);
        const char *out = test_tmp("views6.sql");
        FILE *f = fopen(out, "wb");
        if (f && views) fputs(views, f);
        if (f) fclose(f);
        Err e;
        CHECK(views && sha256_file(out, hex, &e) == 0);
        const char *want = v == 6 ? "84a0b1190d51285e430cd341ed79358e021f445dd1fd2cb81ecab850be04999a"
                                  : "50f079e1d554a5048529f0f8785e55e3515b4bdbb93437edc63d033ad3100665";
        CHECK_MSG(!strcmp(hex, want), "version %d, base lists: %s", v, hex);
        sqlite3_free(views);
    }
    /* version 6's frozen text holds the views tests/fixtures/store/v6.db (a version-6 build's file) holds */
    CHECK(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(db, store_schema_old(6), NULL, NULL, NULL) == SQLITE_OK);
    views_digest(db, hex);
    sqlite3_close(db);
    CHECK_MSG(!strcmp(hex, "7c8e333b6360dc29689dc79b7c5a5d9e3f5483630a9bb8df14ce00ae32edb6e4"), "version 6 as frozen: %s", hex);
}

TEST(decide_rules_strict_and_unknown) {
    StepTrace *t = trace_new(1, 2);
    t->score[0] = 0.5f, t->qada_logit[0] = -2.0f, t->oracle_logit[0] = -1.999f, t->gate[0] = 1;
    CHECK_INT(decide_cell(t, 0, DECIDE_AHA, 0.5f, -2.0), 0); /* equal is local */
    CHECK_INT(decide_cell(t, 0, DECIDE_QADA, 0.5f, -2.0), 0);
    CHECK_INT(decide_cell(t, 0, DECIDE_ORACLE, 0.5f, -2.0), 1);
    CHECK_INT(decide_label(t, 0, -2.0), 1);
    CHECK_INT(decide_cell(t, 0, DECIDE_EXECUTED, 0.5f, -2.0), 1);
    for (int k = 0; k < DECIDE_COUNT; k++) CHECK_INT(decide_cell(t, 1, (DecidePred)k, 0.5f, -2.0), -1);
    CHECK_INT(decide_label(t, 1, -2.0), -1);
    /* log space: estimates far past what a float probability holds stay ordered */
    t->qada_logit[0] = 40.0f;
    CHECK_INT(decide_cell(t, 0, DECIDE_QADA, 0.5f, 39.5), 1);
    CHECK_INT(decide_cell(t, 0, DECIDE_QADA, 0.5f, 40.5), 0);
    CHECK_INT(decide_cell(t, 0, DECIDE_QADA, 0.5f, decide_theta_logit(1.0)), 0); /* θ = 1: never global */
    CHECK_INT(decide_cell(t, 0, DECIDE_QADA, 0.5f, decide_theta_logit(0.0)), 1); /* θ = 0: any far mass */
    CHECK_NEAR(decide_prob(decide_theta_logit(0.1)), 0.1, 1e-15);
    /* no far keys at this position: nothing was decided, by anyone */
    t->n_far = 0;
    for (int k = 0; k < DECIDE_COUNT; k++) CHECK_INT(decide_cell(t, 0, (DecidePred)k, 0.5f, -2.0), -1);
    CHECK_INT(decide_label(t, 0, -2.0), -1);
    t->n_far = 3;
    CHECK_INT(decide_cell(t, 0, DECIDE_EXECUTED, 0.5f, -2.0), 1);
    uint8_t heads[2] = {0, 1};
    CHECK_INT(decide_static(heads, 1), 1);
    CHECK_INT(decide_static(NULL, 1), 0);
    trace_free(t);
}

TEST(decide_counts_and_undefined_rates) {
    DecideCounts c = {0};
    decide_tally(&c, 1, 1), decide_tally(&c, 1, 0), decide_tally(&c, 0, 1), decide_tally(&c, 0, 0);
    decide_tally(&c, -1, 1), decide_tally(&c, 1, -1);
    CHECK(c.tp == 1 && c.fp == 1 && c.fn == 1 && c.tn == 1);
    DecideRates r = decide_rates(&c);
    CHECK_NEAR(r.precision, 0.5, 1e-12);
    CHECK_NEAR(r.f1, 0.5, 1e-12);
    CHECK_NEAR(r.predicted_rate, 0.5, 1e-12);
    DecideCounts never = {0, 0, 3, 5}, none = {0};
    r = decide_rates(&never);
    CHECK(isnan(r.precision) && r.recall == 0 && r.f1 == 0);
    r = decide_rates(&none);
    CHECK(isnan(r.precision) && isnan(r.recall) && isnan(r.f1) && isnan(r.predicted_rate));
}

/* ---- the SQL mirror against the C module ---- */

enum { XL = 16, XH = 16, XP = 64 }; /* room for stories260K's 5 layers x 8 heads, 40 positions */

typedef struct {
    sqlite3 *db;
    float tau;
    double theta_logit;
    StepTrace *t;                        /* 1x1: the stored values of one cell */
    DecideCounts all[DECIDE_N_SQL];      /* from the C module */
    DecideCounts head[DECIDE_N_SQL][XL * XH];
    long known[DECIDE_COUNT][XL * XH], global[DECIDE_COUNT][XL * XH]; /* per-head rates */
    long gate_n[XL * XH], gate_sum[XL * XH];
    long pos_known[XP], pos_global[XP], pos_gate_n[XP], pos_gate_sum[XP]; /* oracle and executed per position */
    int mismatches, rows;
} Cross;

static int col_d(sqlite3_stmt *st, int i) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int(st, i);
}

/* A decision the C module should give for one row of `predictions`. */
static void cross_row(Cross *x, sqlite3_stmt *st) {
    int layer = sqlite3_column_int(st, 1), head = sqlite3_column_int(st, 2), cell = layer * XH + head;
    DecidePred p;
    CHECK_INT(decide_parse((const char *)sqlite3_column_text(st, 3), &p), 0);
    StepTrace *t = x->t;
    t->n_far = col_d(st, 6);
    int k = 7; /* every field of the list, in its order (CROSS_COLUMNS) */
#define CROSS_FILL(name, type, missing, sql, show, title, short_name, doc) \
    t->name[0] = sqlite3_column_type(st, k) == SQLITE_NULL ? (type)(missing) : (type)sqlite3_column_double(st, k), k++;
    TRACE_HEAD_FIELDS(CROSS_FILL)
#undef CROSS_FILL
    int c = decide_cell(t, 0, p, x->tau, x->theta_logit), o = decide_label(t, 0, x->theta_logit);
    int sp = col_d(st, 4), so = col_d(st, 5);
    if (c != sp || o != so) {
        if (x->mismatches++ < 5)
            test_fail(__FILE__, __LINE__, "pos %d L%d H%d %s: SQL predicted %d oracle %d, C %d and %d",
                      sqlite3_column_int(st, 0), layer, head, decide_name(p), sp, so, c, o);
    }
    decide_tally(&x->all[p], c, o);
    decide_tally(&x->head[p][cell], c, o);
    x->rows++;
    if (p != DECIDE_EXECUTED) return; /* count each cell's rates once */
    for (int k = 0; k < DECIDE_COUNT; k++) {
        int d = decide_cell(t, 0, (DecidePred)k, x->tau, x->theta_logit);
        if (d >= 0) x->known[k][cell]++, x->global[k][cell] += d;
    }
    int g = decide_cell(t, 0, DECIDE_EXECUTED, x->tau, x->theta_logit);
    if (g >= 0) x->gate_n[cell]++, x->gate_sum[cell] += g;
    int pos = sqlite3_column_int(st, 0);
    if (pos < 0 || pos >= XP) return;
    if (o >= 0) x->pos_known[pos]++, x->pos_global[pos] += o;
    if (g >= 0) x->pos_gate_n[pos]++, x->pos_gate_sum[pos] += g;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st = NULL;
    CHECK_MSG(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    return st;
}

static int same_rate(sqlite3_stmt *st, int col, double want) {
    if (sqlite3_column_type(st, col) == SQLITE_NULL) return isnan(want);
    return !isnan(want) && fabs(sqlite3_column_double(st, col) - want) < 1e-9;
}

static int same_counts(sqlite3_stmt *st, int col, const DecideCounts *c) {
    return sqlite3_column_int64(st, col) == c->tp && sqlite3_column_int64(st, col + 1) == c->fp &&
           sqlite3_column_int64(st, col + 2) == c->fn && sqlite3_column_int64(st, col + 3) == c->tn;
}

/* `confusion` and `confusion_head` against the module's counts and rates. */
static void cross_confusion(Cross *x) {
    sqlite3_stmt *st =
        prep(x->db, "SELECT predictor, tp, fp, fn, tn, precision, recall, f1 FROM confusion WHERE run_id=1");
    int seen = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        DecidePred p;
        if (decide_parse((const char *)sqlite3_column_text(st, 0), &p) || p >= DECIDE_N_SQL) { CHECK(0); continue; }
        DecideRates r = decide_rates(&x->all[p]);
        CHECK_MSG(same_counts(st, 1, &x->all[p]), "confusion %s: SQL %lld %lld %lld %lld, C %ld %ld %ld %ld",
                  decide_name(p), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                  sqlite3_column_int64(st, 4), x->all[p].tp, x->all[p].fp, x->all[p].fn, x->all[p].tn);
        CHECK_MSG(same_rate(st, 5, r.precision) && same_rate(st, 6, r.recall) && same_rate(st, 7, r.f1),
                  "confusion %s: rates differ", decide_name(p));
        seen |= 1 << p;
    }
    sqlite3_finalize(st);
    for (int p = 0; p < DECIDE_N_SQL; p++) {
        const DecideCounts *c = &x->all[p];
        CHECK_MSG(!!(seen & 1 << p) == (c->tp + c->fp + c->fn + c->tn > 0), "confusion row of %s", decide_name(p));
    }
    st = prep(x->db, "SELECT predictor, layer, head, tp, fp, fn, tn, f1 FROM confusion_head WHERE run_id=1");
    int bad = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        DecidePred p;
        int cell = sqlite3_column_int(st, 1) * XH + sqlite3_column_int(st, 2);
        if (decide_parse((const char *)sqlite3_column_text(st, 0), &p) || p >= DECIDE_N_SQL) { bad++; continue; }
        bad += !same_counts(st, 3, &x->head[p][cell]) || !same_rate(st, 7, decide_rates(&x->head[p][cell]).f1);
    }
    sqlite3_finalize(st);
    CHECK_MSG(bad == 0, "%d confusion_head rows differ", bad);
}

static double mean(long sum, long n) { return n ? (double)sum / n : NAN; }

/* `head_rates` and the calibrate query (store_head_rates) against the module. */
static void cross_rates(Cross *x, const char *path) {
    sqlite3_stmt *st = prep(x->db, "SELECT layer, head, global_rate, oracle_rate, aha_rate, qada_rate, qada_bulk_rate"
                                   " FROM head_rates WHERE run_id=1");
    int bad = 0, n = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int c = sqlite3_column_int(st, 0) * XH + sqlite3_column_int(st, 1);
        static const DecidePred cols[] = {DECIDE_ORACLE, DECIDE_AHA, DECIDE_QADA, DECIDE_QADA_BULK};
        bad += !same_rate(st, 2, mean(x->gate_sum[c], x->gate_n[c]));
        for (int k = 0; k < 4; k++) bad += !same_rate(st, 3 + k, mean(x->global[cols[k]][c], x->known[cols[k]][c]));
        n++;
    }
    sqlite3_finalize(st);
    CHECK_MSG(bad == 0 && n > 0, "%d head_rates values differ over %d heads", bad, n);
    Err e;
    Store *s = store_open(path, STORE_READ, 1000, &e);
    CHECK_MSG(s, "%s", e.msg);
    StoreHeadRate *hr = NULL;
    int64_t run = 1;
    int m = s ? store_head_rates(s, &run, 1, &hr, &e) : -1;
    CHECK_MSG(m == n, "calibrate: %d heads (%s)", m, m < 0 ? e.msg : "");
    for (int i = 0; i < m; i++) {
        int c = hr[i].layer * XH + hr[i].head;
        CHECK_MSG(hr[i].n == x->known[DECIDE_ORACLE][c] &&
                      fabs(hr[i].oracle_rate - mean(x->global[DECIDE_ORACLE][c], x->known[DECIDE_ORACLE][c])) < 1e-12,
                  "calibrate L%d H%d: %g", hr[i].layer, hr[i].head, hr[i].oracle_rate);
    }
    free(hr);
    if (s) store_close(s, &e);
}

static long sum_layer(const long *per_cell, int layer) {
    long s = 0;
    for (int h = 0; h < XH; h++) s += per_cell[layer * XH + h];
    return s;
}

/* `layer_rates`, `token_share` and `run_summary` against the module. */
static void cross_shares(Cross *x) {
    static const DecidePred cols[] = {DECIDE_ORACLE, DECIDE_AHA, DECIDE_QADA, DECIDE_QADA_BULK};
    sqlite3_stmt *st = prep(x->db, "SELECT layer, global_rate, oracle_rate, aha_rate, qada_rate, qada_bulk_rate"
                                   " FROM layer_rates WHERE run_id=1");
    int bad = 0, n = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int l = sqlite3_column_int(st, 0);
        bad += !same_rate(st, 1, mean(sum_layer(x->gate_sum, l), sum_layer(x->gate_n, l)));
        for (int k = 0; k < 4; k++)
            bad += !same_rate(st, 2 + k, mean(sum_layer(x->global[cols[k]], l), sum_layer(x->known[cols[k]], l)));
        n++;
    }
    sqlite3_finalize(st);
    CHECK_MSG(bad == 0 && n > 0, "%d layer_rates values differ over %d layers", bad, n);
    st = prep(x->db, "SELECT pos, global_share, oracle_share FROM token_share WHERE run_id=1");
    long known = 0, global = 0;
    bad = n = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int p = sqlite3_column_int(st, 0);
        if (p < 0 || p >= XP) { bad++; continue; }
        bad += !same_rate(st, 1, mean(x->pos_gate_sum[p], x->pos_gate_n[p]));
        bad += !same_rate(st, 2, mean(x->pos_global[p], x->pos_known[p]));
        known += x->pos_known[p], global += x->pos_global[p], n++;
    }
    sqlite3_finalize(st);
    CHECK_MSG(bad == 0 && n > 0, "%d token_share values differ over %d positions", bad, n);
    st = prep(x->db, "SELECT oracle_share FROM run_summary WHERE run_id=1");
    CHECK(st && sqlite3_step(st) == SQLITE_ROW && same_rate(st, 0, mean(global, known)));
    sqlite3_finalize(st);
}

/* One round at thresholds (tau, theta as log-odds), written into the run
 * so both sides read the same ones. */
/* totals: the run's thresholds are the recorded ones, so the summary views
 * (totals kept at write time under those thresholds) are checked too; with
 * the runs row edited to other thresholds only the row-level predictions
 * follow them. */
static void cross_round(const char *path, double tau, double theta, int totals) {
    Cross *x = calloc(1, sizeof *x);
    CHECK(sqlite3_open(path, &x->db) == SQLITE_OK);
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE runs SET tau=%.17g, theta_logit=%.17g WHERE run_id=1", tau, theta);
    CHECK(sqlite3_exec(x->db, sql, NULL, NULL, NULL) == SQLITE_OK);
    x->tau = (float)tau, x->theta_logit = theta, x->t = trace_new(1, 1);
#define CROSS_COLUMN(name, type, missing, sql, show, title, short_name, doc) ", d." #name
    sqlite3_stmt *st = prep(x->db, "SELECT p.pos, p.layer, p.head, p.predictor, p.predicted, p.oracle, t.n_far"
                                   TRACE_HEAD_FIELDS(CROSS_COLUMN) " FROM predictions p"
                                   " JOIN decisions d USING(run_id, pos, layer, head) JOIN tokens t USING(run_id, pos)"
                                   " WHERE p.run_id=1");
#undef CROSS_COLUMN
    while (st && sqlite3_step(st) == SQLITE_ROW) cross_row(x, st);
    sqlite3_finalize(st);
    CHECK_MSG(x->mismatches == 0, "tau %g theta %g: %d of %d predictions rows differ", tau, theta, x->mismatches,
              x->rows);
    /* every decision at a position with far keys, and none of the others (window 8: positions 0-7 have none) */
    sqlite3_stmt *n = prep(x->db, "SELECT COUNT(*), SUM(n_far = 0) FROM decisions JOIN tokens USING(run_id, pos)"
                                  " WHERE run_id=1 AND n_far > 0");
    CHECK(n && sqlite3_step(n) == SQLITE_ROW && x->rows == sqlite3_column_int(n, 0) * DECIDE_N_SQL && x->rows > 0);
    sqlite3_finalize(n);
    n = prep(x->db, "SELECT COUNT(*) FROM tokens WHERE run_id=1 AND n_far = 0");
    CHECK(n && sqlite3_step(n) == SQLITE_ROW && sqlite3_column_int(n, 0) == 8);
    sqlite3_finalize(n);
    if (totals) {
        cross_confusion(x);
        cross_rates(x, path);
        cross_shares(x);
    }
    trace_free(x->t);
    sqlite3_close(x->db);
    free(x);
}

static double scalar(const char *path, const char *sql) {
    sqlite3 *db;
    double v = NAN;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *st = prep(db, sql);
    if (st && sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    CHECK_MSG(!isnan(v), "no value: %s", sql);
    return v;
}

/* A stored value of one column, halfway up its sorted values: a threshold
 * that some cell meets exactly, so `>` against `>=` shows. */
static double median_of(const char *path, const char *col) {
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT %s FROM decisions WHERE run_id=1 AND %s IS NOT NULL ORDER BY %s LIMIT 1 OFFSET "
                              "(SELECT COUNT(%s) / 2 FROM decisions WHERE run_id=1)", col, col, col, col);
    return scalar(path, sql);
}

TEST(decide_sql_views_mirror_the_module) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("decide.db"), *bin = getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope";
    remove(db);
    int st;
    char *out = test_runf(&st, "%s record --db %s --model %s --prompt 'Once upon a time' --steps 40 --profile --seed 1"
                               " --policy aha --routers engine/routers/stories260K_w8.safetensors --window 8",
                          bin, db, test_stories_model());
    CHECK_MSG(st == 0 && !strcmp(out, "1\n"), "record printed: %s", out);
    free(out);
    if (st != 0) return;
    cross_round(db, scalar(db, "SELECT tau FROM runs"), scalar(db, "SELECT theta_logit FROM runs"), 1); /* as recorded */
    double score = median_of(db, "score"), oracle = median_of(db, "oracle_logit");
    double qada = median_of(db, "qada_logit"), bulk = median_of(db, "qada_bulk_logit");
    cross_round(db, score, oracle, 0); /* ties on the router and the oracle */
    cross_round(db, score, qada, 0);
    cross_round(db, score, bulk, 0);
}
