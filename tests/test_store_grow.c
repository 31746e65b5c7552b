/* test_store_grow.c — a file's fields and predictors grow by appending, with no schema version.
 *
 * A file's fields and predictors are its own rows: a
 * build that knows more appends them without a schema version, one that
 * knows less reads what a newer build added, and the canary build's extra
 * field and predictor go through every table (store/SCHEMA.md, "`fields`
 * and `predictors`"). The same tests run in the plain build and in the
 * canary build (make test-canary), whose lists are longer. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/store.h"
#include "store_fixture.h"
#include "stories.h"
#include "test.h"

/* Copy the committed fixture tests/fixtures/store/NAME to path. */
static int copy_fixture(const char *name, const char *path) {
    char from[256];
    snprintf(from, sizeof from, "tests/fixtures/store/%s", name);
    long n = 0;
    char *data = test_read_file(from, &n);
    int rc = data && test_write_file(path, data, n) == 0 ? 0 : -1;
    free(data);
    CHECK_MSG(rc == 0, "cannot copy %s", from);
    return rc;
}

/* As a newer build would leave it: a field (with its column) and a
 * predictor this build does not know appended to the file's lists, and
 * the views made anew from them. */
static void add_future_lists(const char *path) {
    sqlite3 *db = NULL;
    CHECK(store_db_open(path, SQLITE_OPEN_READWRITE, &db) == SQLITE_OK);
    StoreCatalog file, more;
    char why[160] = "";
    CHECK(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_MSG(store_catalog_read(db, "main", &file, why, sizeof why) == 0, "%s", why);
    more = file;
    StoreCatField f = {"future_logit", STORE_FIELD_BITS};
    StoreCatPred p = {"future", "future_logit", PRED_THR_THETA, 0};
    more.field[more.n_fields++] = f;
    more.pred[more.n_preds++] = p;
    int changed = 0;
    CHECK(store_catalog_extend(db, &file, &more, &changed) == SQLITE_OK && changed);
    char *drop = NULL, *views = store_views_sql(&file, "", STORE_SCHEMA_VERSION);
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT group_concat(format('DROP VIEW \"%w\";', name), '') FROM sqlite_schema"
                                 " WHERE type = 'view'", -1, &st, NULL) == SQLITE_OK);
    if (st && sqlite3_step(st) == SQLITE_ROW) drop = sqlite3_mprintf("%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    CHECK(drop && sqlite3_exec(db, drop, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(views && sqlite3_exec(db, views, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_free(drop), sqlite3_free(views);
    sqlite3_close(db);
}

/* Write a short made-up run into path; returns its id or -1. */
static long write_run(const char *path, int L, int H) {
    Err e;
    Store *s = store_open(path, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return -1;
    StoreRunInfo r;
    test_run_info(&r, L, H);
    long id = store_run_begin(s, &r, &e) == 0 ? (long)r.run_id : -1;
    for (int p = 0; id > 0 && p < 8; p++) {
        StepTrace *t = trace_new(L, H);
        t->pos = p, t->token = p + 1, t->n_far = p > 4 ? p - 4 : 0, t->n_kv_heads = H;
        for (int i = 0; i < L * H; i++) t->gate[i] = (int8_t)((i + p) % 2), t->oracle_logit[i] = 0.5f - (i % 3);
        CHECK_MSG(store_write_step(s, r.run_id, t, NULL, &e) == 0, "%s", e.msg);
        trace_free(t);
    }
    CHECK(id > 0 && store_run_end(s, r.run_id, "done", &e) == 0);
    store_close(s, NULL);
    return id;
}

/* A file a newer build grew (a field and a predictor this build lacks)
 * opens read-only and for writing: its own views show them, this build
 * writes runs into it (the unknown field NULL), and nothing is dropped. */
TEST(store_grow_a_newer_builds_field_and_predictor_are_read_and_kept) {
    const char *path = test_tmp("grow_newer.db");
    test_db_record(path, 2, 3, 8);
    add_future_lists(path);
    Err e;
    Store *s = store_open(path, STORE_READ, 1000, &e);
    CHECK_MSG(s != NULL, "read-only: %s", e.msg);
    store_close(s, NULL);
    CHECK_INT((int)write_run(path, 2, 3), 2);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM pragma_table_info('decisions') WHERE name = 'future_logit'"),
              1);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM decisions WHERE future_logit IS NOT NULL"), 0);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(DISTINCT predictor) FROM predictions WHERE predictor = 'future'"),
              1);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM predictors WHERE name = 'future'"), 1);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM pragma_table_info('head_rates') WHERE name = 'future_rate'"),
              1);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM decisions WHERE run_id = 2"), 8 * 2 * 3);
}

/* A file of this version from a build with the base lists (the committed
 * v6.db) gains this build's fields and predictors the first time it is
 * opened for writing, in one transaction and without a schema version;
 * read-only it is not changed. Its runs answer as before. */
TEST(store_grow_this_builds_lists_are_appended_to_an_older_file) {
    const char *path = test_tmp("grow_v6.db");
    if (copy_fixture("v6.db", path)) return;
    long n0 = 0;
    char *before = test_read_file(path, &n0);
    Err e;
    Store *s = store_open(path, STORE_READ, 1000, &e);
    CHECK_MSG(s != NULL, "read-only: %s", e.msg);
    store_close(s, NULL);
    long n1 = 0;
    char *after = test_read_file(path, &n1);
    CHECK_MSG(before && after && n0 == n1 && !memcmp(before, after, (size_t)n0), "reading changed v6.db");
    free(before), free(after);
    StoreCatalog own;
    store_catalog_own(&own);
    double share = (double)test_db_scalar(path, "SELECT ROUND(global_share * 1e6) FROM run_summary WHERE run_id = 1");
    CHECK_INT((int)write_run(path, 5, 8), 3);
    CHECK_INT((int)test_db_scalar(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM fields"), own.n_fields);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM predictors"), own.n_preds);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM pragma_table_info('decisions')"), 4 + own.n_fields);
    CHECK_NEAR((double)test_db_scalar(path, "SELECT ROUND(global_share * 1e6) FROM run_summary WHERE run_id = 1"),
               share, 0);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(DISTINCT predictor) FROM head_totals WHERE run_id = 3"),
              DECIDE_COUNT);
}

#ifdef AHASCOPE_CANARY
/* The canary build's predictor thresholds its field, which holds QAdA's
 * estimate: recorded with --profile, its decisions, totals and confusion
 * are QAdA's, cell for cell, in a file made by the plain build. */
TEST(store_grow_canary_predictor_is_recorded_like_qada) {
    SKIP_UNLESS_SHARED();
    const char *path = test_tmp("grow_canary.db");
    if (copy_fixture("v6.db", path)) return;
    int st;
    char *out = test_runf(&st, "%s record --db %s --model %s --tokenizer %s --prompt Once --steps 40 --window 8"
                               " --profile --seed 3 2>&1", test_bin(), path, test_stories_model(),
                          test_stories_tokenizer());
    CHECK_MSG(st == 0, "%s", out ? out : "");
    free(out);
    CHECK(test_db_scalar(path, "SELECT COUNT(*) FROM decisions WHERE run_id = 3 AND canary_logit IS NOT NULL") > 0);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM decisions WHERE run_id = 3"
                                        " AND canary_logit IS NOT qada_logit"), 0);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM head_totals c JOIN head_totals q"
                                        " USING(run_id, layer, head) WHERE run_id = 3 AND c.predictor = 'canary'"
                                        " AND q.predictor = 'qada' AND (c.n, c.global, c.tp, c.fp, c.fn, c.tn)"
                                        " IS NOT (q.n, q.global, q.tp, q.fp, q.fn, q.tn)"), 0);
    CHECK(test_db_scalar(path, "SELECT SUM(n) FROM head_totals WHERE run_id = 3 AND predictor = 'canary'") > 0);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM (SELECT tp, fp, fn, tn FROM confusion WHERE run_id = 3"
                                        " AND predictor = 'canary' EXCEPT SELECT tp, fp, fn, tn FROM confusion"
                                        " WHERE run_id = 3 AND predictor = 'qada')"), 0);
    CHECK_INT((int)test_db_scalar(path, "SELECT COUNT(*) FROM (SELECT canary_rate FROM head_rates WHERE run_id = 3"
                                        " EXCEPT SELECT qada_rate FROM head_rates WHERE run_id = 3)"), 0);
}
#endif

/* When the check itself cannot be made (a file's lists that ahascope's own
 * statements cannot replay), the refusal gives SQLite's cause, not a
 * guess: the check once said "out of memory" for every such failure. */
TEST(store_grow_a_check_that_cannot_be_made_says_why) {
    const char *path = test_tmp("grow_dup.db");
    test_db_record(path, 2, 2, 6);
    test_db_exec(path, "INSERT INTO fields(ord, name, kind) VALUES(99, 'top0', 'bits')");
    Err e = {0};
    Store *s = store_open(path, STORE_READ, 1000, &e);
    CHECK_MSG(!s && strstr(e.msg, path) && strstr(e.msg, "cannot check the schema: duplicate column name: top0") &&
                  !strstr(e.msg, "out of memory"),
              "%s", e.msg);
    store_close(s, NULL);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s runs --db %s", test_bin(), path);
    CHECK_REFUSAL(cmd, 1, "ahascope runs: ", "duplicate column name: top0", 1);
}
