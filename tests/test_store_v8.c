/* test_store_v8.c — schema version 8: runs.ablate, run_heads (each head's own window), bookmarks.
 *
 * The ablation text a run is recorded with, read back by store_run_info,
 * listed by `runs` and named by `compare`, kept by `merge`; the tamper
 * check of version 8's objects; and a version-7 file, which lacks them,
 * read and upgraded (its fixture test is in test_store.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine/decide.h"
#include "store/store.h"
#include "store_fixture.h"
#include "stories.h"
#include "test.h"

/* One run of n made-up steps (test_db_record's) under header r into s. */
static void write_run(Store *s, StoreRunInfo *r, int n) {
    Err e;
    CHECK_MSG(store_run_begin(s, r, &e) == 0, "begin: %s", e.msg);
    for (int p = 0; p < n; p++) {
        StepTrace *t = trace_new(r->n_layers, r->n_heads);
        t->pos = p, t->token = p + 1, t->n_far = p > 4 ? p - 4 : 0, t->n_kv_heads = r->n_heads;
        for (int i = 0; i < r->n_layers * r->n_heads; i++) t->gate[i] = (int8_t)((i + p) % 2), t->score[i] = 0.25f;
        for (int i = 0; p > 4 && i < r->n_layers * r->n_heads; i++) t->oracle_logit[i] = i % 2 ? 1.0f : -1.0f;
        CHECK_MSG(store_write_step(s, r->run_id, t, NULL, &e) == 0, "write: %s", e.msg);
        trace_free(t);
    }
    CHECK(store_run_end(s, r->run_id, "done", &e) == 0);
}

/* A file of two 2 x 2 runs of 8 steps: run 1 plain, run 2 its ablation
 * child under `ablate`. */
static void record_pair(const char *db, const char *ablate) {
    test_db_fresh(db);
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", s ? "" : e.msg);
    if (!s) return;
    StoreRunInfo r;
    test_run_info(&r, 2, 2);
    write_run(s, &r, 8);
    int64_t parent = r.run_id;
    test_run_info(&r, 2, 2);
    r.parent_run_id = parent;
    snprintf(r.ablate, sizeof r.ablate, "%s", ablate);
    write_run(s, &r, 8);
    CHECK(store_close(s, &e) == 0);
}

/* The ablation a child run ran under is its runs row's ablate (NULL for
 * the parent), read back by store_run_info, a column of `runs`, named on
 * `compare`'s lines, and kept by `merge` under the run's new id. */
TEST(store_v8_ablate_is_recorded_listed_compared_and_merged) {
    const char *db = test_tmp("v8_ablate.db"), *out = test_tmp("v8_ablate_merged.db");
    record_pair(db, "L1H0=local@3");
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM runs WHERE run_id = 1 AND ablate IS NULL"), 1);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM runs WHERE run_id = 2 AND ablate = 'L1H0=local@3'"), 1);
    Err e;
    Store *s = store_open(db, STORE_READ, 1000, &e);
    StoreRunInfo ri;
    if (s && store_run_info(s, 2, &ri, &e) == 0) {
        CHECK_MSG(!strcmp(ri.ablate, "L1H0=local@3"), "read back '%s'", ri.ablate);
        store_run_info_free(&ri);
    }
    if (s && store_run_info(s, 1, &ri, &e) == 0) {
        CHECK_MSG(ri.ablate[0] == 0, "the parent reads back '%s'", ri.ablate);
        store_run_info_free(&ri);
    }
    store_close(s, NULL);
    int st;
    char *txt = test_runf(&st, "%s runs --db %s --csv", test_bin(), db);
    CHECK_MSG(st == 0 && txt && strstr(txt, ",ablate,") && strstr(txt, ",L1H0=local@3,"), "%s", txt ? txt : "");
    free(txt);
    txt = test_runf(&st, "%s compare --db %s --run 2", test_bin(), db);
    CHECK_MSG(st == 0 && txt && strstr(txt, "theta 0.5, ablate L1H0=local@3, 8 positions"), "%s", txt ? txt : "");
    free(txt);
    txt = test_runf(&st, "%s compare --db %s --run 1 --run 2", test_bin(), db);
    CHECK_MSG(st == 0 && txt && strstr(txt, "window 4, 8 positions | run 2: policy aha, window 4, ablate L1H0=local@3,"),
              "%s", txt ? txt : "");
    free(txt);
    test_db_fresh(out);
    free(test_runf(&st, "%s merge --out %s %s %s 2>&1", test_bin(), out, db, db));
    CHECK_INT(st, 0);
    CHECK_INT(test_db_scalar(out, "SELECT COUNT(*) FROM runs"), 4);
    CHECK_INT(test_db_scalar(out, "SELECT COUNT(*) FROM runs WHERE ablate = 'L1H0=local@3' AND run_id IN (2, 4)"
                                  " AND parent_run_id = run_id - 1"), 2);
}

/* The tamper check covers version 8's objects: an index of one's own, a
 * table made with other text, a missing one; and a version-7 file that
 * holds a version-8 table is refused. */
TEST(store_v8_tamper_check_covers_its_tables) {
    static const char *const edits[] = {
        "CREATE INDEX mine ON bookmarks(note)",
        "DROP TABLE run_heads; CREATE TABLE run_heads(run_id INTEGER, layer INTEGER, head INTEGER, alpha REAL, beta REAL)",
        "DROP TABLE bookmarks",
    };
    static const char *const says[] = {"unexpected index 'mine'", "table 'run_heads' is not the one ahascope creates",
                                       "table 'bookmarks' is missing"};
    test_db_tamper_refused("v8_tamper.db", edits, says, (int)(sizeof edits / sizeof edits[0]));
    const char *v7 = test_tmp("v8_tamper7.db");
    test_db_fresh(v7);
    long n = 0;
    char *data = test_read_file("tests/fixtures/store/v7.db", &n);
    CHECK(data && test_write_file(v7, data, n) == 0);
    free(data);
    test_db_exec(v7, "CREATE TABLE bookmarks(\n  run_id INTEGER NOT NULL, pos INTEGER NOT NULL, note TEXT, created_at"
                     " TEXT NOT NULL,\n  PRIMARY KEY(run_id, pos)\n) WITHOUT ROWID");
    Err e;
    Store *s = store_open(v7, STORE_WRITE, 1000, &e);
    CHECK_MSG(!s && strstr(e.msg, "unexpected table 'bookmarks'"), "%s", s ? "accepted" : e.msg);
    store_close(s, NULL);
}

/* stories260K's shape, which the windows table below follows: a row per
 * layer, a window per KV head (query heads 2k and 2k + 1 share KV head k). */
#define V8_L 5
#define V8_H 8
static const int V8_WIN[V8_L][V8_H / 2] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {2, 2, 2, 2}, {9, 1, 1, 9}, {3, 4, 5, 6}};

/* The windows table above as a file; its path. */
static const char *v8_windows_file(void) {
    const char *path = test_tmp("v8_windows.tsv");
    char text[256];
    size_t o = 0;
    for (int l = 0; l < V8_L; l++)
        for (int k = 0; k < V8_H / 2; k++) o += (size_t)snprintf(text + o, sizeof text - o, "%d%c", V8_WIN[l][k], k < 3 ? '\t' : '\n');
    CHECK(test_write_file(path, text, (long)o) == 0);
    return path;
}

/* Keys a local head of window w reads at t with s sinks (engine/attn.c's
 * local set, written out again): the sinks, then the window's keys past them. */
static long recount_local(int t, int w, int s) {
    long ns = s < t + 1 ? s : t + 1, lo = t - w + 1 > ns ? t - w + 1 : ns;
    return ns + (t + 1 - lo);
}

/* Per-head windows recorded: `eval --db` under --policy local with a
 * windows table keeps run_heads (each query head its KV head's window,
 * beta 0), and the keys read that SQL derives (the decisions view, the
 * tokens' sums, head_stats) equal eval's own count, which the engine's
 * kernels made, and a recount from the table; `record` takes them too,
 * its traces read back with the same keys, and merge keeps the rows. */
TEST(store_v8_per_head_windows_keys_read_equal_the_engine_and_a_recount) {
    SKIP_UNLESS_SHARED();
    const char *win = v8_windows_file(), *db = test_tmp("v8_spans.db"), *merged = test_tmp("v8_spans_merged.db");
    test_db_fresh(db);
    int st;
    char *out = test_runf(&st, "%s eval --model %s --self 2 --seq-len 32 --window 4 --policy local --static-heads windows:%s"
                               " --json --db %s 2>/dev/null", test_bin(), test_stories_model(), win, db);
    cJSON *j = st == 0 && out ? cJSON_Parse(out) : NULL;
    double engine = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "keys_read_frac"));
    CHECK_MSG(j && engine > 0, "eval: %s", out ? out : "");
    cJSON_Delete(j);
    free(out);
    int sinks = (int)test_db_scalar(db, "SELECT MIN(sinks) FROM runs");
    CHECK_INT(test_db_scalar(db, "SELECT MAX(sinks) FROM runs"), sinks);
    long num = 0, den = 0, weighted = 0;
    for (int t = 0; t < 32; t++)
        for (int c = 0; c < V8_L * V8_H; c++) {
            long k = recount_local(t, V8_WIN[c / V8_H][(c % V8_H) / 2], sinks);
            num += k, den += t + 1, weighted += k * (c + 1) * (t + 1);
        }
    long runs = test_db_scalar(db, "SELECT COUNT(*) FROM runs WHERE eval_id IS NOT NULL");
    CHECK_INT(runs, 2);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM run_heads"), runs * V8_L * V8_H);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM run_heads h WHERE beta = 0 AND alpha = CASE layer * 10 + head / 2"
                                 " WHEN 0 THEN 1 WHEN 1 THEN 2 WHEN 2 THEN 3 WHEN 3 THEN 4 WHEN 10 THEN 5 WHEN 11 THEN 6"
                                 " WHEN 12 THEN 7 WHEN 13 THEN 8 WHEN 30 THEN 9 WHEN 31 THEN 1 WHEN 32 THEN 1 WHEN 33"
                                 " THEN 9 WHEN 40 THEN 3 WHEN 41 THEN 4 WHEN 42 THEN 5 WHEN 43 THEN 6 ELSE 2 END"),
              runs * V8_L * V8_H);
    CHECK_INT(test_db_scalar(db, "SELECT SUM(keys_read) FROM decisions"), runs * num);
    CHECK_INT(test_db_scalar(db, "SELECT SUM(keys_read * (layer * 8 + head + 1) * (pos + 1)) FROM decisions"),
              runs * weighted);
    CHECK_NEAR((double)num / den, engine, 1e-12);
    CHECK_INT(test_db_scalar(db, "SELECT SUM(keys_read_sum) FROM tokens"), runs * num);
    CHECK_INT(test_db_scalar(db, "SELECT SUM(keys_read) FROM head_stats"),
              test_db_scalar(db, "SELECT SUM(d.keys_read) FROM decisions d JOIN tokens t USING (run_id, pos)"
                                 " WHERE t.n_far > 0"));
    /* MoA spans, alpha + beta * (t + 1) rounded half up (exact ties among them): SQL's count, eval's and a recount */
    const char *moa = test_tmp("v8_moa.json"), *db2 = test_tmp("v8_moa.db");
    char text[2048];
    size_t o = (size_t)snprintf(text, sizeof text, "{\"alphas\": [");
    for (int l = 0; l < V8_L; l++) {
        o += (size_t)snprintf(text + o, sizeof text - o, "%s[", l ? ", " : "");
        for (int h = 0; h < V8_H; h++) o += (size_t)snprintf(text + o, sizeof text - o, "%s%g", h ? ", " : "", 0.25 * h - l);
        o += (size_t)snprintf(text + o, sizeof text - o, "]");
    }
    o += (size_t)snprintf(text + o, sizeof text - o, "], \"betas\": [");
    for (int l = 0; l < V8_L; l++) {
        o += (size_t)snprintf(text + o, sizeof text - o, "%s[", l ? ", " : "");
        for (int h = 0; h < V8_H; h++) o += (size_t)snprintf(text + o, sizeof text - o, "%s%g", h ? ", " : "", 0.125 * ((h + l) % 5));
        o += (size_t)snprintf(text + o, sizeof text - o, "]");
    }
    o += (size_t)snprintf(text + o, sizeof text - o, "]}");
    CHECK(test_write_file(moa, text, (long)o) == 0);
    test_db_fresh(db2);
    out = test_runf(&st, "%s eval --model %s --self 1 --seq-len 48 --window 4 --policy local --static-heads moa:%s"
                         " --json --db %s 2>/dev/null", test_bin(), test_stories_model(), moa, db2);
    j = st == 0 && out ? cJSON_Parse(out) : NULL;
    double moa_engine = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "keys_read_frac"));
    CHECK_MSG(j && moa_engine > 0, "eval: %s", out ? out : "");
    cJSON_Delete(j);
    free(out);
    int s2 = (int)test_db_scalar(db2, "SELECT MIN(sinks) FROM runs");
    long mnum = 0, mden = 0;
    for (int t = 0; t < 48; t++)
        for (int c = 0; c < V8_L * V8_H; c++) {
            double a = 0.25 * (c % V8_H) - c / V8_H, b = 0.125 * ((c % V8_H + c / V8_H) % 5), x = floor(a + b * (t + 1) + 0.5);
            int w = x < 1 ? 1 : x > t + 1 ? t + 1 : (int)x;
            mnum += recount_local(t, w, s2), mden += t + 1;
        }
    CHECK_INT(test_db_scalar(db2, "SELECT SUM(keys_read) FROM decisions"), mnum);
    CHECK_INT(test_db_scalar(db2, "SELECT SUM(keys_read_sum) FROM tokens"), mnum);
    CHECK_NEAR((double)mnum / mden, moa_engine, 1e-12);
    /* record: accepted now, its run read back through the store with the same keys */
    out = test_runf(&st, "%s record --db %s --model %s --prompt 'Once upon a time' --steps 24 --temperature 0 --window 4"
                         " --policy local --static-heads windows:%s 2>&1", test_bin(), db, test_stories_model(), win);
    CHECK_MSG(st == 0, "record: %s", out ? out : "");
    free(out);
    long rec = test_db_scalar(db, "SELECT MAX(run_id) FROM runs");
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM run_heads WHERE run_id = %ld", rec);
    CHECK_INT(test_db_scalar(db, sql), V8_L * V8_H);
    Err e;
    Store *s = store_open(db, STORE_READ, 1000, &e);
    StoreRunInfo ri;
    long read_back = 0, recount = 0;
    if (s && store_run_info(s, rec, &ri, &e) == 0) {
        CHECK(ri.head_span && ri.head_span[2 * 13] == 7 && ri.head_span[2 * 13 + 1] == 0); /* L1 H5: KV head 2 */
        StepTrace *tr[24] = {0};
        for (int i = 0; i < 24; i++) tr[i] = trace_new(ri.n_layers, ri.n_heads);
        int n = store_read_steps(s, rec, 0, 24, tr, &e);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < V8_L * V8_H; c++)
                read_back += tr[i]->keys_read[c], recount += recount_local(i, V8_WIN[c / V8_H][(c % V8_H) / 2], ri.sinks);
        CHECK_MSG(n > 4 && read_back == recount, "%d steps: read back %ld keys, recount %ld", n, read_back, recount);
        for (int i = 0; i < 24; i++) trace_free(tr[i]);
        store_run_info_free(&ri);
    }
    store_close(s, NULL);
    snprintf(sql, sizeof sql, "SELECT SUM(keys_read) FROM decisions WHERE run_id = %ld", rec);
    CHECK_INT(test_db_scalar(db, sql), recount);
    test_db_fresh(merged);
    free(test_runf(&st, "%s merge --out %s %s 2>&1", test_bin(), merged, db));
    CHECK_INT(st, 0);
    CHECK_INT(test_db_scalar(merged, "SELECT COUNT(*) FROM run_heads"), (runs + 1) * V8_L * V8_H);
    CHECK_INT(test_db_scalar(merged, "SELECT SUM(keys_read) FROM decisions"), runs * num + recount);
}

/* Bookmarks kept beside a run: set with a note or none, replaced, dropped,
 * read back in position order; refused for a run or position the file
 * lacks and on a read-only connection; a long note cut at a character;
 * listed by `runs`, copied by `merge` under the runs' new ids. */
TEST(store_v8_bookmarks_are_kept_listed_and_merged) {
    const char *db = test_tmp("v8_marks.db"), *out = test_tmp("v8_marks_merged.db");
    record_pair(db, "L0=global");
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", s ? "" : e.msg);
    if (!s) return;
    CHECK_INT(store_bookmark_put(s, 1, 3, "the dragon", &e), 0);
    CHECK_INT(store_bookmark_put(s, 1, 5, NULL, &e), 0);
    CHECK_INT(store_bookmark_put(s, 1, 6, "", &e), 0);
    CHECK_INT(store_bookmark_put(s, 2, 1, "x", &e), 0);
    CHECK_INT(store_bookmark_put(s, 1, 3, "it flies", &e), 0); /* replaces */
    CHECK_INT(store_bookmark_drop(s, 1, 6, &e), 0);
    CHECK_INT(store_bookmark_drop(s, 1, 7, &e), 0); /* none there */
    CHECK(store_bookmark_put(s, 9, 1, "n", &e) == -1 && strstr(e.msg, "no run 9"));
    CHECK_MSG(store_bookmark_put(s, 1, 8, "n", &e) == -1 && strstr(e.msg, "run 1 has no position 8 (8 recorded)"), "%s",
              e.msg);
    CHECK(store_bookmark_put(s, 1, -1, "n", &e) == -1);
    char longer[700];
    for (int i = 0; i + 1 < (int)sizeof longer; i += 2) longer[i] = (char)0xc3, longer[i + 1] = (char)0xa9; /* é */
    longer[sizeof longer - 1] = 0;
    CHECK_INT(store_bookmark_put(s, 2, 4, longer, &e), 0);
    StoreBookmark *b = NULL;
    int n = store_bookmarks(s, 1, &b, &e);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK(b[0].pos == 3 && !strcmp(b[0].note, "it flies"));
        CHECK(b[1].pos == 5 && b[1].note[0] == 0);
    }
    free(b);
    CHECK(store_close(s, &e) == 0);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM bookmarks WHERE run_id = 1 AND pos = 5 AND note IS NULL"), 1);
    CHECK_INT(test_db_scalar(db, "SELECT length(CAST(note AS BLOB)) FROM bookmarks WHERE run_id = 2 AND pos = 4"),
              STORE_NOTE_MAX - 2); /* 511 bytes cut back to the last whole character */
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM bookmarks WHERE created_at LIKE '20%T%Z'"), 4);
    s = store_open(db, STORE_READ, 1000, &e);
    CHECK(s && store_bookmark_put(s, 1, 2, "n", &e) == -1 && strstr(e.msg, "read-only"));
    store_close(s, NULL);
    int st;
    char *txt = test_runf(&st, "%s runs --db %s --csv", test_bin(), db);
    CHECK_MSG(st == 0 && txt && strstr(txt, ",bookmarks,") && strstr(txt, ",\"3 'it flies', 5\","), "%s", txt ? txt : "");
    free(txt);
    test_db_fresh(out);
    free(test_runf(&st, "%s merge --out %s %s %s 2>&1", test_bin(), out, db, db));
    CHECK_INT(st, 0);
    CHECK_INT(test_db_scalar(out, "SELECT COUNT(*) FROM bookmarks"), 8);
    CHECK_INT(test_db_scalar(out, "SELECT COUNT(*) FROM bookmarks WHERE run_id = 3 AND pos = 3 AND note = 'it flies'"), 1);
    CHECK_INT(test_db_scalar(out, "SELECT COUNT(*) FROM bookmarks WHERE run_id = 4 AND pos = 1 AND note = 'x'"), 1);
}
