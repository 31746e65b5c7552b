/* test_store_v7.c — schema version 7: each run's layer kinds (run_layers), fixed-local heads kept and summarised.
 *
 * A random gemma3 folder (6 layers: 0-4 slide a window of 8 keys, 5 is
 * global) recorded with --profile under the random policy at AHA's window
 * 4: the run's run_layers rows, the traces read back, the decisions view's
 * keys_read, every summary counting the global layer's heads only, merge,
 * the upgrade of a version-6 file and the tamper check of the new table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_fixture.h"
#include "test.h"

#define V7_W 8     /* the folder's window */
#define V7_STEPS 24
#define V7_LOCAL 5 /* layers 0-4 local */

/* A gemma3 run recorded into db (fresh); 0, or -1 with a failure recorded. */
static int v7_record(const char *db) {
    static char dir[700];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s", test_tmp("v7-gemma3"));
        int st = -1;
        free(test_runf(&st, "%s bench --arch gemma3 --dims 64,96,6,4,1,300,64 --head-dim 24 --window-layers 8,6 "
                            "--save-hf %s 2>&1", test_bin(), dir));
        if (st != 0) { test_fail(__FILE__, __LINE__, "bench --save-hf: exit %d", st); dir[0] = 0; return -1; }
    }
    test_db_fresh(db);
    int st = -1;
    char *out = test_runf(&st, "%s record --db %s --model %s --prompt 'the cat sat on the mat' --steps %d --temperature 0"
                               " --policy random --p 0.5 --window 4 --profile 2>&1", test_bin(), db, dir, V7_STEPS);
    if (st != 0) test_fail(__FILE__, __LINE__, "record: exit %d: %s", st, out ? out : "");
    free(out);
    return st == 0 ? 0 : -1;
}

/* The run's layer kinds round-trip: run_layers holds one row a layer,
 * store_run_info and every trace read back the windows, a fixed-local
 * head reads back gate -1, no predictor value, its window's keys and its
 * counterfactual; the decisions view's keys_read is min(8, pos + 1) there. */
TEST(store_v7_round_trip_keeps_layer_windows) {
    const char *db = test_tmp("v7_rt.db");
    if (v7_record(db)) return;
    CHECK_INT(test_db_scalar(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM run_layers WHERE run_id = 1"), 6);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM run_layers WHERE run_id = 1 AND layer < 5 AND kind = 'local'"
                                 " AND window = 8"), 5);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM run_layers WHERE run_id = 1 AND layer = 5 AND kind = 'global'"
                                 " AND window = 0"), 1);
    Err e;
    Store *s = store_open(db, STORE_READ, 1000, &e);
    CHECK_MSG(s != NULL, "%s", s ? "" : e.msg);
    if (!s) return;
    StoreRunInfo ri;
    CHECK(store_run_info(s, 1, &ri, &e) == 0);
    for (int l = 0; l < 6; l++) CHECK_INT(ri.layer_window[l], l < V7_LOCAL ? V7_W : 0);
    store_run_info_free(&ri);
    StepTrace *tr[V7_STEPS];
    for (int i = 0; i < V7_STEPS; i++) tr[i] = trace_new(6, 4);
    CHECK_INT(store_read_steps(s, 1, 0, V7_STEPS, tr, &e), V7_STEPS);
    int beyond = 0;
    for (int t = 0; t < V7_STEPS; t++)
        for (int c = 0; c < 24; c++) {
            CHECK_INT(tr[t]->layer_window[c / 4], c / 4 < V7_LOCAL ? V7_W : 0);
            if (c / 4 >= V7_LOCAL) { CHECK(tr[t]->gate[c] == 0 || tr[t]->gate[c] == 1); continue; }
            CHECK_INT(tr[t]->gate[c], -1);
            CHECK(isnan(tr[t]->oracle_logit[c]) && isnan(tr[t]->qada_logit[c]) && isnan(tr[t]->score[c]));
            CHECK_INT(tr[t]->keys_read[c], t + 1 < V7_W ? t + 1 : V7_W);
            CHECK_INT(isnan(tr[t]->beyond_logit[c]), t < V7_W);
            beyond += !isnan(tr[t]->beyond_logit[c]);
        }
    CHECK_INT(beyond, (V7_STEPS - V7_W) * V7_LOCAL * 4);
    for (int i = 0; i < V7_STEPS; i++) trace_free(tr[i]);
    store_close(s, NULL);
    /* the view derives what the window read, and NULL gates only there */
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM decisions WHERE run_id = 1 AND layer < 5 AND gate IS NULL"
                                 " AND keys_read = MIN(8, pos + 1)"), V7_STEPS * V7_LOCAL * 4);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM decisions WHERE run_id = 1 AND layer = 5 AND gate IS NOT NULL"
                                 " AND keys_read = CASE gate WHEN 1 THEN pos + 1 ELSE MIN(4, pos + 1) END"), V7_STEPS * 4);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM decisions WHERE run_id = 1 AND layer < 5 AND beyond_logit IS NOT"
                                 " NULL AND pos >= 8"), (V7_STEPS - V7_W) * V7_LOCAL * 4);
    /* merge renumbers the run and keeps its layers */
    const char *m = test_tmp("v7_merged.db");
    test_db_fresh(m);
    int st = -1;
    free(test_runf(&st, "%s merge --out %s %s %s 2>&1", test_bin(), m, db, db));
    CHECK_INT(st, 0);
    CHECK_INT(test_db_scalar(m, "SELECT COUNT(*) FROM run_layers WHERE run_id = 2 AND kind = 'local' AND window = 8"), 5);
    CHECK_INT(test_db_scalar(m, "SELECT SUM(keys_read) FROM decisions WHERE run_id = 2"),
              test_db_scalar(db, "SELECT SUM(keys_read) FROM decisions WHERE run_id = 1"));
}

/* Every summary counts the global layer's 4 heads only: were the 20
 * fixed-local heads counted (as local decisions), the shares below would
 * be about a sixth of what the global layer's own rows give, and
 * head_rates would list them. keys_read still counts what every head read. */
TEST(store_v7_summaries_exclude_fixed_local_heads) {
    const char *db = test_tmp("v7_sum.db");
    if (v7_record(db)) return;
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM head_rates WHERE run_id = 1 AND layer < 5"), 0);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM head_rates WHERE run_id = 1 AND layer = 5"), 4);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM layer_rates WHERE run_id = 1"), 1);
    long long decided = test_db_scalar(db, "SELECT COUNT(*) FROM tokens WHERE run_id = 1 AND n_far > 0");
    CHECK(decided > 10);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM tokens WHERE run_id = 1 AND n_gate = 4"), V7_STEPS);
    CHECK_INT(test_db_scalar(db, "SELECT SUM(tp + fp + fn + tn) FROM confusion WHERE run_id = 1 AND predictor = 'executed'"),
              decided * 4);
    /* the shares, in millionths, against the global layer's rows */
    const char *own = "SELECT CAST(ROUND(AVG(d.gate) * 1e6) AS INTEGER) FROM decisions d JOIN tokens t USING(run_id, pos)"
                      " WHERE d.run_id = 1 AND t.n_far > 0 AND d.layer = 5";
    long long want = test_db_scalar(db, own);
    CHECK(want > 100000);
    CHECK_INT(test_db_scalar(db, "SELECT CAST(ROUND(global_share * 1e6) AS INTEGER) FROM run_summary WHERE run_id = 1"), want);
    CHECK_INT(test_db_scalar(db, "SELECT CAST(ROUND(SUM(n_global) * 1e6 / SUM(n_gate)) AS INTEGER) FROM tokens"
                                 " WHERE run_id = 1 AND n_far > 0"), want);
    CHECK_INT(test_db_scalar(db, "SELECT CAST(ROUND(AVG(global_rate) * 1e6) AS INTEGER) FROM head_rates WHERE run_id = 1"),
              want);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM token_share s WHERE run_id = 1 AND keys_read ="
                                 " (SELECT SUM(keys_read) FROM decisions d WHERE d.run_id = 1 AND d.pos = s.pos)"), V7_STEPS);
    /* the oracle labels only the global layer too */
    CHECK_INT(test_db_scalar(db, "SELECT SUM(n_oracle) FROM tokens WHERE run_id = 1 AND n_far > 0"), decided * 4);
}

/* A fresh copy of the committed version-6 file as test_tmp(name). */
static const char *v6_copy(const char *name) {
    const char *path = test_tmp(name);
    test_db_fresh(path);
    long n = 0;
    char *data = test_read_file("tests/fixtures/store/v6.db", &n);
    CHECK(data && test_write_file(path, data, n) == 0);
    free(data);
    return path;
}

/* A version-6 file (tests/fixtures/store/v6.db) opened read-only stays
 * version 6 and shows an empty run_layers; opened for writing it becomes
 * version 7 with the table (empty: its runs were all global) and the
 * counterfactual's column, and its runs answer as before. */
TEST(store_v7_upgrades_a_version_6_file) {
    const char *path = v6_copy("v7_from6.db");
    const char *keys = "SELECT SUM(keys_read) FROM decisions";
    long long before = test_db_scalar(path, keys);
    Err e;
    Store *s = store_open(path, STORE_READ, 1000, &e);
    CHECK_MSG(s != NULL, "%s", s ? "" : e.msg);
    StoreRunInfo ri;
    if (s && store_run_info(s, 1, &ri, &e) == 0) {
        for (int l = 0; l < ri.n_layers; l++) CHECK_INT(ri.layer_window[l], 0);
        store_run_info_free(&ri);
    }
    store_close(s, NULL);
    CHECK_INT(test_db_scalar(path, "PRAGMA user_version"), 6);
    s = store_open(path, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", s ? "" : e.msg);
    store_close(s, NULL);
    CHECK_INT(test_db_scalar(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    CHECK_INT(test_db_scalar(path, "SELECT COUNT(*) FROM run_layers"), 0);
    CHECK_INT(test_db_scalar(path, "SELECT COUNT(*) FROM pragma_table_info('decision_bits') WHERE name = 'beyond_logit'"), 1);
    CHECK_INT(test_db_scalar(path, "SELECT COUNT(*) FROM fields WHERE name = 'beyond_logit'"), 1);
    CHECK_INT(test_db_scalar(path, keys), before);
    CHECK_INT(test_db_scalar(path, "SELECT COUNT(*) FROM decisions WHERE beyond_logit IS NOT NULL"), 0);
    CHECK(before > 0);
}

/* The tamper check covers run_layers: an index of one's own on it, or the
 * table made with other text, is refused; a version-6 file that holds one
 * is refused too. */
TEST(store_v7_tamper_check_covers_run_layers) {
    static const char *const edits[] = {
        "CREATE INDEX mine ON run_layers(window)",
        "DROP TABLE run_layers; CREATE TABLE run_layers(run_id INTEGER, layer INTEGER, kind TEXT, window INTEGER)",
        "DROP TABLE run_layers",
    };
    static const char *const says[] = {"unexpected index 'mine'", "table 'run_layers' is not the one ahascope creates",
                                       "table 'run_layers' is missing"};
    test_db_tamper_refused("v7_tamper.db", edits, says, (int)(sizeof edits / sizeof edits[0]));
    const char *v6 = v6_copy("v7_tamper6.db");
    test_db_exec(v6, "CREATE TABLE run_layers(run_id INTEGER NOT NULL, layer INTEGER NOT NULL,\n  kind TEXT NOT NULL"
                     " CHECK(kind IN ('global','local')), window INTEGER NOT NULL,\n  PRIMARY KEY(run_id, layer)\n)"
                     " WITHOUT ROWID");
    Err e;
    Store *s = store_open(v6, STORE_WRITE, 1000, &e);
    CHECK_MSG(!s && strstr(e.msg, "unexpected table 'run_layers'"), "%s", s ? "accepted" : e.msg);
    store_close(s, NULL);
}
