/* store_fixture.c — databases for the store tests (store_fixture.h). */
#include "tests/store_fixture.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "test.h"

void test_db_fresh(const char *path) {
    char p[1100];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path), unlink(p);
    snprintf(p, sizeof p, "%s-shm", path), unlink(p);
    snprintf(p, sizeof p, "%s-journal", path), unlink(p);
}

void test_run_info(StoreRunInfo *r, int L, int H) {
    memset(r, 0, sizeof *r);
    snprintf(r->model, sizeof r->model, "m.bin");
    snprintf(r->policy, sizeof r->policy, "aha");
    r->n_layers = L, r->n_heads = H, r->n_kv_heads = H, r->dim = 8 * H, r->vocab_size = 512, r->seq_len = 4096;
    r->window = 4, r->sinks = 1, r->tau = 0.5, r->theta_logit = 0, r->prompt = "x";
    r->program_version = "test";
}

void test_db_record(const char *path, int L, int H, int n) { test_db_record_every(path, L, H, n, 1); }

void test_db_tamper_refused(const char *name, const char *const *edits, const char *const *says, int n) {
    for (int i = 0; i < n; i++) {
        const char *db = test_tmp(name);
        test_db_record(db, 2, 2, 3);
        test_db_exec(db, edits[i]);
        Err e;
        Store *s = store_open(db, STORE_READ, 1000, &e);
        CHECK_MSG(!s && strstr(e.msg, says[i]), "%s: %s", edits[i], s ? "accepted" : e.msg);
        store_close(s, NULL);
    }
}

void test_db_record_every(const char *path, int L, int H, int n, int every) {
    test_db_fresh(path);
    Err e;
    Store *s = store_open(path, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "open: %s", e.msg);
    if (!s) return;
    store_set_commit_every(s, every);
    StoreRunInfo r;
    test_run_info(&r, L, H);
    CHECK(store_run_begin(s, &r, &e) == 0);
    for (int p = 0; p < n; p++) {
        StepTrace *t = trace_new(L, H);
        t->pos = p, t->token = p + 1, t->n_far = p > 4 ? p - 4 : 0, t->n_kv_heads = H;
        for (int i = 0; i < L * H; i++) t->gate[i] = (int8_t)((i + p) % 2), t->score[i] = 0.25f * (i % 4);
        CHECK_MSG(store_write_step(s, r.run_id, t, NULL, &e) == 0, "write: %s", e.msg);
        trace_free(t);
    }
    CHECK(store_run_end(s, r.run_id, "done", &e) == 0);
    CHECK(store_close(s, &e) == 0);
}

void test_db_exec(const char *db, const char *sql) {
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    char *msg = NULL;
    CHECK_MSG(sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql, msg);
    sqlite3_free(msg);
    sqlite3_close(h);
}

int test_db_rows(const char *db, const char *sql, double *v, int max_rows, int n_cols) {
    sqlite3 *h;
    sqlite3_stmt *st;
    int n = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        for (n = 0; n < max_rows && sqlite3_step(st) == SQLITE_ROW; n++)
            for (int c = 0; c < n_cols; c++)
                v[(size_t)n * n_cols + c] = sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

long long test_db_scalar(const char *db, const char *sql) {
    sqlite3 *h;
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return v;
}
