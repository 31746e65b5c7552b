/* test_store.c — the store through its C API: round trips, views, disk full, locks, export, merge.
 *
 * The SQLite store through its C API: round trips, views,
 * batching, disk full, bad files, locks, interrupted runs, read-only SQL,
 * export and merge. */
#include <cjson/cJSON.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/attn.h"
#include "engine/sha256.h"
#include "engine/session.h"
#include "store/internal.h"
#include "store/store.h"
#include "test.h"
#include "stories.h"

/* A trace with every kind of value: numbers, NaN (not computed), -1. */
static StepTrace *synthetic_trace(int L, int H, int pos, unsigned seed) {
    StepTrace *t = trace_new(L, H);
    srand(seed + (unsigned)pos * 7919u);
    t->pos = pos;
    t->token = rand() % 512;
    t->is_prompt = pos < 3;
    snprintf(t->piece, sizeof t->piece, pos % 5 == 0 ? "\n" : pos % 5 == 1 ? "é,\"x\"" : " w%d", pos);
    t->logprob = pos == 0 ? NAN : -(float)rand() / (float)RAND_MAX * 5;
    t->entropy = pos == 0 ? NAN : (float)rand() / (float)RAND_MAX * 3;
    t->step_us = 10 + rand() % 1000 + 0.25;
    t->n_far = pos;          /* position 0 has no choice */
    t->n_kv_heads = H;
    t->kv_read[0] = 3 * pos; /* the step's total: what a database keeps */
    for (int i = 0; i < L * H; i++) {
        t->score[i] = (i + pos) % 7 == 0 ? NAN : (float)rand() / (float)RAND_MAX;
        t->gate[i] = (int8_t)((i + pos) % 11 == 0 ? -1 : rand() % 2);
        t->oracle_logit[i] = (i + pos) % 13 == 0 ? NAN : (float)rand() / (float)RAND_MAX * 8 - 4;
        t->oracle_err[i] = (float)rand() / (float)RAND_MAX;
        t->qada_logit[i] = (float)rand() / (float)RAND_MAX * 8 - 4;
        t->qada_bulk_logit[i] = (i % 3) ? (float)rand() / (float)RAND_MAX * 80 - 20 : NAN; /* far past float probabilities */
        int ns, lo; /* what the engine reads: all keys going global, sinks and window (8, 1) going local */
        attn_local_set(pos, 8, 1, &ns, &lo);
        t->keys_read[i] = t->gate[i] < 0 ? -1 : t->gate[i] ? pos + 1 : ns + pos - lo + 1;
    }
    return t;
}

static void run_info(StoreRunInfo *r, int L, int H) {
    memset(r, 0, sizeof *r);
    snprintf(r->model, sizeof r->model, "test.bin");
    snprintf(r->arch, sizeof r->arch, "llama2c-v0");
    r->program_version = "9.8.7-test";
    r->dim = 64, r->hidden_dim = 128, r->n_layers = L, r->n_heads = H, r->n_kv_heads = H;
    r->vocab_size = 512, r->seq_len = 256;
    snprintf(r->policy, sizeof r->policy, "aha");
    r->window = 8, r->sinks = 1, r->tau = 0.5, r->theta_logit = decide_theta_logit(0.1), r->p = 0.1, r->profile = 1;
    r->prompt = "héllo \"world\"\n";
    r->steps = 32, r->temperature = 0.8, r->topp = 0.9;
    r->seed = 18446744073709551615ULL; /* the largest seed must survive */
}

static int same_float(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }
static int same_value(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* Every field of two traces equal (NaN equals NaN). */
static int traces_equal(const StepTrace *a, const StepTrace *b, char *why, size_t cap) {
    if (a->pos != b->pos || a->token != b->token || a->is_prompt != b->is_prompt || strcmp(a->piece, b->piece) ||
        !same_float(a->logprob, b->logprob) || !same_float(a->entropy, b->entropy) || a->step_us != b->step_us ||
        a->n_far != b->n_far || trace_kv_read_total(a) != trace_kv_read_total(b) || a->n_kv_heads != b->n_kv_heads)
        return snprintf(why, cap, "token fields differ at pos %d", a->pos), 0;
    for (int i = 0; i < trace_cells(a); i++) {
#define SAME_FIELD(name, type, missing, sql, show, title, short_name, doc) \
        if (!same_value(a->name[i], b->name[i])) return snprintf(why, cap, #name " of cell %d differs at pos %d", i, a->pos), 0;
        TRACE_HEAD_FIELDS(SAME_FIELD)
#undef SAME_FIELD
    }
    return 1;
}

static void fresh(const char *path) {
    char p[1100];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path), unlink(p);
    snprintf(p, sizeof p, "%s-shm", path), unlink(p);
}

/* Record n synthetic steps as one run; returns the run id. */
static int64_t record_synthetic(const char *path, int L, int H, int n, unsigned seed) {
    Err e;
    Store *s = store_open(path, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "open: %s", e.msg);
    if (!s) return 0;
    StoreRunInfo r;
    run_info(&r, L, H);
    CHECK_MSG(store_run_begin(s, &r, &e) == 0, "begin: %s", e.msg);
    for (int p = 0; p < n; p++) {
        StepTrace *t = synthetic_trace(L, H, p, seed);
        CHECK_MSG(store_write_step(s, r.run_id, t, NULL, &e) == 0, "write: %s", e.msg);
        trace_free(t);
    }
    CHECK(store_run_end(s, r.run_id, "done", &e) == 0);
    CHECK(store_close(s, &e) == 0);
    return r.run_id;
}

TEST(store_round_trip_synthetic) {
    const char *db = test_tmp("rt.db");
    fresh(db);
    int L = 3, H = 4, n = 20;
    int64_t id = record_synthetic(db, L, H, n, 5);
    CHECK_INT(id, 1);
    Err e;
    Store *s = store_open(db, STORE_READ, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return;
    StoreRunInfo r, want;
    run_info(&want, L, H);
    CHECK(store_run_info(s, id, &r, &e) == 0);
    CHECK(strcmp(r.prompt, want.prompt) == 0);
    CHECK(r.seed == want.seed);
    CHECK(strcmp(r.status, "done") == 0);
    CHECK_INT(r.n_tokens, n);
    CHECK_INT(r.window, 8);
    CHECK_INT(r.sinks, 1);
    CHECK(r.tau == 0.5 && r.theta_logit == decide_theta_logit(0.1) && r.temperature == 0.8);
    CHECK(strcmp(r.policy, "aha") == 0 && strcmp(r.version, "9.8.7-test") == 0); /* the caller's version, as given */
    store_run_info_free(&r);
    StepTrace *got[20];
    for (int i = 0; i < n; i++) got[i] = trace_new(L, H);
    CHECK_INT(store_read_steps(s, id, 0, n, got, &e), n);
    char why[128] = "";
    for (int i = 0; i < n; i++) {
        StepTrace *w = synthetic_trace(L, H, i, 5);
        CHECK_MSG(traces_equal(got[i], w, why, sizeof why), "%s", why);
        trace_free(w);
    }
    CHECK_INT(store_read_steps(s, id, 15, 20, got, &e), 5); /* stops at the end */
    for (int i = 0; i < n; i++) trace_free(got[i]);
    store_close(s, NULL);
}

/* The real thing: traces from the engine recorded and read back unchanged. */
TEST(store_round_trip_engine) {
    SKIP_UNLESS_SHARED();
    Model m;
    Tokenizer tok;
    Err e;
    CHECK_MSG(test_load_stories(&m, &tok, &e) == 0, "%s", e.msg);
    AttnConfig a = aha_defaults();
    a.policy = POLICY_QADA, a.window = 4, a.sinks = 1, a.profile = 1;
    Session ses;
    CHECK(session_init(&ses, &m, &tok, &a, 40, 0.9f, 0.9f, 7, 1, &e) == 0);
    CHECK(session_start_text(&ses, "Lily saw a cat", 14, &e) == 0);
    StepTrace *t[48];
    for (int i = 0; i < 48; i++) t[i] = trace_new(m.c.n_layers, m.c.n_heads);
    int n = session_prefill(&ses, t);
    while (n < 48 && session_step(&ses, t[n])) n++;
    const char *db = test_tmp("engine.db");
    fresh(db);
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    StoreRunInfo r;
    run_info(&r, m.c.n_layers, m.c.n_heads);
    r.n_kv_heads = m.c.n_kv_heads;
    r.window = a.window, r.sinks = a.sinks; /* keys_read is derived from them: it must read back as computed */
    store_set_commit_every(s, 3);
    CHECK(store_run_begin(s, &r, &e) == 0);
    for (int i = 0; i < n; i++) CHECK(store_write_step(s, r.run_id, t[i], NULL, &e) == 0);
    CHECK(store_run_end(s, r.run_id, "done", &e) == 0);
    store_close(s, NULL);
    s = store_open(db, STORE_READ, 1000, &e);
    StepTrace *g[48];
    for (int i = 0; i < n; i++) g[i] = trace_new(m.c.n_layers, m.c.n_heads);
    CHECK_INT(store_read_steps(s, r.run_id, 0, n, g, &e), n);
    char why[128] = "";
    int same = 1;
    for (int i = 0; i < n && same; i++) same = traces_equal(g[i], t[i], why, sizeof why);
    CHECK_MSG(same, "%s", why);
    CHECK(n > 30);
    for (int i = 0; i < n; i++) trace_free(g[i]);
    for (int i = 0; i < 48; i++) trace_free(t[i]);
    store_close(s, NULL);
    session_free(&ses);
    tok_free(&tok);
    model_free(&m);
}

/* Whether the file at PATH still holds the N bytes BEFORE (reading a database
 * must not change it). */
static int file_unchanged(const char *path, const char *before, long n) {
    long n1 = 0;
    char *after = test_read_file(path, &n1);
    int same = before && after && n1 == n && memcmp(before, after, n) == 0;
    free(after);
    return same;
}

/* Run one query and return its single value as a double (NAN if NULL). */
static double scalar(const char *db, const char *sql) {
    sqlite3 *h;
    double v = NAN;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return v;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    else if (sqlite3_errcode(h) != SQLITE_OK && sqlite3_errcode(h) != SQLITE_ROW)
        fprintf(stderr, "scalar(%s): %s\n", sql, sqlite3_errmsg(h));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

TEST(store_views_match_hand_counts) {
    const char *db = test_tmp("views.db");
    fresh(db);
    int L = 2, H = 3, n = 30;
    record_synthetic(db, L, H, n, 11);
    /* Recount confusion of qada (θ = 0.1) for head (1,2) from the traces. */
    long tp = 0, fp = 0, fn = 0, tn = 0, gsum = 0, gn = 0;
    for (int p = 0; p < n; p++) {
        StepTrace *t = synthetic_trace(L, H, p, 11);
        int i = 1 * H + 2;
        if (p == 0) { trace_free(t); continue; } /* no far keys at position 0: not a decision */
        if (t->gate[i] >= 0) gsum += t->gate[i], gn++;
        if (!isnan(t->oracle_logit[i]) && !isnan(t->qada_logit[i])) {
            double th = decide_theta_logit(0.1);
            int o = t->oracle_logit[i] > th, q = t->qada_logit[i] > th;
            tp += q && o, fp += q && !o, fn += !q && o, tn += !q && !o;
        }
        trace_free(t);
    }
    const char *w = "WHERE run_id=1 AND predictor='qada' AND layer=1 AND head=2";
    char sql[256];
    const char *cols[] = {"tp", "fp", "fn", "tn"};
    long want[] = {tp, fp, fn, tn};
    for (int k = 0; k < 4; k++) {
        snprintf(sql, sizeof sql, "SELECT %s FROM confusion_head %s", cols[k], w);
        CHECK_NEAR(scalar(db, sql), want[k], 0);
    }
    snprintf(sql, sizeof sql, "SELECT f1 FROM confusion_head %s", w);
    CHECK_NEAR(scalar(db, sql), 2.0 * tp / (2 * tp + fp + fn), 1e-12);
    CHECK_NEAR(scalar(db, "SELECT global_rate FROM head_rates WHERE run_id=1 AND layer=1 AND head=2"),
               (double)gsum / gn, 1e-12);
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM token_share WHERE run_id=1"), n, 0);
    CHECK_NEAR(scalar(db, "SELECT SUM(tp+fp+fn+tn) FROM confusion WHERE predictor='qada'"),
               scalar(db, "SELECT COUNT(*) FROM decisions JOIN tokens USING(run_id, pos) WHERE n_far != 0"
                          " AND oracle_logit IS NOT NULL AND qada_logit IS NOT NULL"), 0);
    CHECK_NEAR(scalar(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION, 0);
    CHECK(scalar(db, "SELECT perplexity FROM run_summary") > 1);
}

TEST(store_commit_every_batches_and_flushes) {
    const char *db = test_tmp("batch.db");
    fresh(db);
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    store_set_commit_every(s, 4);
    StoreRunInfo r;
    run_info(&r, 1, 2);
    store_run_begin(s, &r, &e);
    int total = 0;
    for (int p = 0; p < 6; p++) {
        StepTrace *t = synthetic_trace(1, 2, p, 1);
        int c = 0;
        CHECK(store_write_step(s, r.run_id, t, &c, &e) == 0);
        total += c;
        trace_free(t);
    }
    CHECK_INT(total, 4);
    /* Another connection sees exactly the committed batch, never half of one. */
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM tokens"), 4, 0);
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM decisions"), 8, 0);
    CHECK_NEAR(scalar(db, "SELECT n_tokens FROM runs"), 4, 0);
    CHECK(store_close(s, &e) == 0);
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM tokens"), 6, 0);
}

/* The store cannot know which program records (it may not include app/):
 * the caller says, and a run without it is refused before any row is made. */
TEST(store_run_begin_needs_program_version) {
    const char *db = test_tmp("version.db");
    fresh(db);
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return;
    StoreRunInfo r;
    run_info(&r, 1, 2);
    r.program_version = NULL;
    CHECK(store_run_begin(s, &r, &e) != 0 && strstr(e.msg, "no program version"));
    r.program_version = "";
    CHECK(store_run_begin(s, &r, &e) != 0);
    r.program_version = "1.2.3";
    CHECK(store_run_begin(s, &r, &e) == 0);
    CHECK(store_close(s, &e) == 0);
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM runs"), 1, 0);
    CHECK_NEAR(scalar(db, "SELECT ahascope_version = '1.2.3' FROM runs"), 1, 0);
}

TEST(store_disk_full_keeps_committed_steps) {
    const char *db = test_tmp("full.db");
    fresh(db);
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    CHECK(store_set_limit(s, 112 * 1024, &e) == 0); /* version 8 made the empty file two tables larger */
    StoreRunInfo r;
    run_info(&r, 4, 8);
    CHECK(store_run_begin(s, &r, &e) == 0);
    int p = 0, rc = 0;
    for (; p < 10000 && rc == 0; p++) {
        StepTrace *t = synthetic_trace(4, 8, p, 3);
        rc = store_write_step(s, r.run_id, t, NULL, &e);
        trace_free(t);
    }
    CHECK(rc != 0);
    CHECK_MSG(strstr(e.msg, "disk full") && strstr(e.msg, "full.db"), "message: %s", e.msg);
    int committed = p - 1;
    store_close(s, NULL);
    CHECK_MSG(committed > 5, "%d steps committed", committed);
    s = store_open(db, STORE_READ, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM tokens"), committed, 0);
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM decisions"), committed * 32, 0);
    sqlite3 *h;
    sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    StepTrace *t[1] = {trace_new(4, 8)};
    CHECK_INT(store_read_steps(s, 1, committed - 1, 1, t, &e), 1);
    trace_free(t[0]);
    store_close(s, NULL);
}

static void exec_sql(const char *db, const char *sql) {
    sqlite3 *h;
    sqlite3_open(db, &h);
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) fprintf(stderr, "exec_sql: %s\n", msg);
    sqlite3_free(msg);
    sqlite3_close(h);
}

/* Open must fail with a message naming the file and containing `want`. */
static void expect_open_error(const char *db, StoreMode mode, const char *want) {
    Err e = {0};
    Store *s = store_open(db, mode, 200, &e);
    CHECK_MSG(s == NULL, "%s opened", db);
    store_close(s, NULL);
    CHECK_MSG(strstr(e.msg, want) != NULL && strstr(e.msg, db) != NULL, "for %s got '%s', want '%s'", db, e.msg, want);
}

TEST(store_rejects_bad_files) {
    const char *txt = test_tmp("notdb.db");
    const char *text = "hello, I am text and not a database at all, sorry\n";
    test_write_file(txt, text, (long)strlen(text));
    expect_open_error(txt, STORE_READ, "not an SQLite database");
    expect_open_error(txt, STORE_WRITE, "not an SQLite database");
    expect_open_error(test_tmp("missing.db"), STORE_READ, "No such file");
    expect_open_error(test_tmpdir(), STORE_READ, "directory");
    const char *empty = test_tmp("empty.db");
    test_write_file(empty, "", 0);
    expect_open_error(empty, STORE_READ, "empty database");

    const char *foreign = test_tmp("foreign.db");
    fresh(foreign);
    exec_sql(foreign, "CREATE TABLE customers(id, name); INSERT INTO customers VALUES(1,'x');");
    expect_open_error(foreign, STORE_READ, "not an ahascope database");
    expect_open_error(foreign, STORE_WRITE, "not an ahascope database");

    const char *newer = test_tmp("newer.db");
    fresh(newer);
    record_synthetic(newer, 1, 1, 2, 1);
    exec_sql(newer, "PRAGMA user_version=99");
    expect_open_error(newer, STORE_READ, "newer");
    expect_open_error(newer, STORE_WRITE, "newer");

    const char *damaged = test_tmp("damaged.db");
    fresh(damaged);
    record_synthetic(damaged, 1, 1, 2, 1);
    exec_sql(damaged, "DROP VIEW head_rates");
    expect_open_error(damaged, STORE_READ, "head_rates");

    /* Cut a database in half: the header promises more pages than exist. */
    const char *cut = test_tmp("cut.db");
    fresh(cut);
    record_synthetic(cut, 4, 8, 40, 1);
    exec_sql(cut, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
    long len = 0;
    char *bytes = test_read_file(cut, &len);
    CHECK(bytes && len > 8192);
    if (bytes) test_write_file(cut, bytes, len / 2);
    free(bytes);
    expect_open_error(cut, STORE_READ, "truncated");
    /* And a garbage-filled page 1 after a valid magic: never a crash. */
    const char *junk = test_tmp("junk.db");
    char j[4096];
    memset(j, 0xA5, sizeof j);
    memcpy(j, "SQLite format 3", 16);
    test_write_file(junk, j, sizeof j);
    Err e;
    Store *s = store_open(junk, STORE_READ, 100, &e);
    CHECK(s == NULL);
    store_close(s, NULL);
}

TEST(store_reports_locked_database) {
    const char *db = test_tmp("locked.db");
    fresh(db);
    record_synthetic(db, 1, 2, 3, 1);
    sqlite3 *h;
    sqlite3_open(db, &h);
    /* An exclusive-mode writer shuts every other connection out. */
    char *msg = NULL;
    int rc = sqlite3_exec(h, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE runs SET n_tokens=n_tokens;",
                          NULL, NULL, &msg);
    CHECK_MSG(rc == SQLITE_OK, "%s", msg ? msg : "");
    sqlite3_free(msg);
    expect_open_error(db, STORE_READ, "locked");
    expect_open_error(db, STORE_WRITE, "locked");
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    CHECK_MSG(s != NULL, "after unlock: %s", e.msg);
    store_close(s, NULL);
}

TEST(store_marks_dead_writers_interrupted) {
    const char *db = test_tmp("dead.db");
    fresh(db);
    record_synthetic(db, 1, 2, 3, 1);
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
    char host[256], sql[512];
    gethostname(host, sizeof host);
    snprintf(sql, sizeof sql, "UPDATE runs SET status='running', writer_host='%s', writer_pid=%d", host, (int)child);
    exec_sql(db, sql);
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    StoreRunInfo r;
    CHECK(store_run_info(s, 1, &r, &e) == 0);
    CHECK_MSG(strcmp(r.status, "interrupted") == 0, "reader sees %s", r.status);
    store_run_info_free(&r);
    store_close(s, NULL);
    /* Our own pid is alive: a reader must not call that run interrupted. */
    snprintf(sql, sizeof sql, "UPDATE runs SET writer_pid=%d, writer_start=NULL", (int)getpid());
    exec_sql(db, sql);
    s = store_open(db, STORE_READ, 200, &e);
    CHECK(store_run_info(s, 1, &r, &e) == 0);
    CHECK(strcmp(r.status, "running") == 0);
    store_run_info_free(&r);
    store_close(s, NULL);
    snprintf(sql, sizeof sql, "UPDATE runs SET writer_pid=%d", (int)child);
    exec_sql(db, sql);
    s = store_open(db, STORE_WRITE, 200, &e); /* a writer fixes the row itself */
    store_close(s, NULL);
    sqlite3 *h;
    sqlite3_open(db, &h);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, "SELECT status FROM runs", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "interrupted"));
    sqlite3_finalize(st);
    sqlite3_close(h);
}

static char *query_text(Store *s, const char *sql, StoreFormat fmt, int *rc) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    Err e;
    *rc = store_query(s, sql, fmt, f, &e);
    fclose(f);
    if (*rc) {
        free(buf);
        return strdup(e.msg);
    }
    return buf;
}

TEST(store_query_refuses_every_write) {
    const char *db = test_tmp("ro.db");
    fresh(db);
    record_synthetic(db, 2, 2, 5, 1);
    exec_sql(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    long n0 = 0;
    char *before = test_read_file(db, &n0);
    const char *bad[] = {
        "INSERT INTO runs(status, created_at, ahascope_version, model, n_layers, n_heads, policy) VALUES('done','x','x','x',1,1,'x')",
        "UPDATE runs SET prompt='x'",
        "DELETE FROM decisions",
        "DROP TABLE tokens",
        "DROP VIEW head_rates",
        "CREATE TABLE t(x)",
        "CREATE TEMP TABLE t(x)",
        "CREATE INDEX i ON tokens(piece)",
        "ATTACH DATABASE 'other.db' AS o",
        "PRAGMA writable_schema=ON",
        "PRAGMA writable_schema",
        "PRAGMA query_only=0",
        "PRAGMA user_version=5",
        "SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')",
        "VACUUM",
        "SELECT 1; DELETE FROM tokens",
        "BEGIN; DELETE FROM tokens; COMMIT",
        "REINDEX",
        "ANALYZE",
    };
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc;
        char *out = query_text(s, bad[i], STORE_FMT_TABLE, &rc);
        CHECK_MSG(rc != 0, "allowed: %s -> %s", bad[i], out);
        free(out);
    }
    int rc;
    char *ok = query_text(s, "SELECT COUNT(*) AS n FROM decisions; PRAGMA table_info(runs)", STORE_FMT_CSV, &rc);
    CHECK_MSG(rc == 0 && strstr(ok, "n\r\n20\r\n") && strstr(ok, "prompt"), "got: %s", ok);
    free(ok);
    store_close(s, NULL);
    CHECK(file_unchanged(db, before, n0));
    free(before);
    CHECK(access(test_tmp("other.db"), F_OK) != 0);
}

/* A refusal names the statement refused, not the schema write SQLite asks
 * about first (DROP TABLE used to read "DELETE is not allowed"). */
TEST(store_query_names_what_it_refuses) {
    const char *db = test_tmp("names.db");
    fresh(db);
    record_synthetic(db, 2, 2, 3, 1);
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    const char *cases[][2] = {
        {"DROP TABLE tokens", "DROP TABLE is not allowed"},
        {"DROP VIEW head_rates", "DROP VIEW is not allowed"},
        {"CREATE TABLE t(x)", "CREATE TABLE is not allowed"},
        {"CREATE TEMP TABLE t(x)", "CREATE TEMP TABLE is not allowed"},
        {"CREATE INDEX i ON tokens(piece)", "CREATE INDEX is not allowed"},
        {"DELETE FROM decision_bits", "DELETE is not allowed"},
        {"DELETE FROM sqlite_master", "sqlite_master"}, /* SQLite refuses these itself */
        {"INSERT INTO sqlite_master VALUES('table','x','x',0,'')", "sqlite_master"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        char *out = query_text(s, cases[i][0], STORE_FMT_TABLE, &rc);
        CHECK_MSG(rc != 0 && out && strstr(out, cases[i][1]), "%s -> %s", cases[i][0], out);
        free(out);
    }
    store_close(s, NULL);
}

static int stop_after(void *ctx, long rows) {
    (void)rows;
    return --*(int *)ctx < 0;
}

/* The row cap ends a result early and says so; the interrupt callback
 * stops a query that yields no rows at all. */
TEST(store_query_limited_caps_and_interrupts) {
    const char *db = test_tmp("lim.db");
    fresh(db);
    record_synthetic(db, 2, 2, 3, 1);
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    StoreQueryLimits lim = {.max_rows = 5};
    int rc = store_query_limited(s, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c; "
                                    "SELECT 'never' AS y", STORE_FMT_CSV, f, &lim, &e);
    fclose(f);
    CHECK_INT(rc, 0);
    CHECK_INT(lim.rows, 5);
    CHECK_INT(lim.capped, 1);
    CHECK_MSG(buf && strstr(buf, "\r\n5\r\n") && !strstr(buf, "\r\n6\r\n") && !strstr(buf, "never"), "%s", buf);
    free(buf);
    int polls = 50;
    StoreQueryLimits stop = {.interrupt = stop_after, .ctx = &polls};
    f = open_memstream(&buf, &len);
    rc = store_query_limited(s, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
                             STORE_FMT_TABLE, f, &stop, &e);
    fclose(f);
    free(buf);
    CHECK_INT(rc, -1);
    CHECK_MSG(strstr(e.msg, "interrupted"), "%s", e.msg);
    CHECK_INT(stop.capped, 0);
    store_close(s, NULL);
}

TEST(store_query_formats) {
    const char *db = test_tmp("fmt.db");
    fresh(db);
    record_synthetic(db, 1, 2, 6, 2);
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    int rc;
    char *j = query_text(s, "SELECT pos, piece, logprob FROM tokens ORDER BY pos", STORE_FMT_JSON, &rc);
    cJSON *arr = cJSON_Parse(j);
    CHECK_MSG(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 6, "json: %s", j);
    cJSON *row0 = cJSON_GetArrayItem(arr, 0), *row1 = cJSON_GetArrayItem(arr, 1);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(row0, "logprob")));
    CHECK(!strcmp(cJSON_GetObjectItem(row0, "piece")->valuestring, "\n"));
    CHECK(!strcmp(cJSON_GetObjectItem(row1, "piece")->valuestring, "é,\"x\""));
    cJSON_Delete(arr);
    free(j);
    char *c = query_text(s, "SELECT pos, piece FROM tokens WHERE pos IN (0,1) ORDER BY pos", STORE_FMT_CSV, &rc);
    CHECK_MSG(!strcmp(c, "pos,piece\r\n0,\"\n\"\r\n1,\"é,\"\"x\"\"\"\r\n"), "csv: %s", c);
    free(c);
    char *t = query_text(s, "SELECT pos, piece FROM tokens WHERE pos IN (0,1) ORDER BY pos", STORE_FMT_TABLE, &rc);
    CHECK_MSG(strstr(t, "\\n") && !strstr(t, "\n\n"), "table: %s", t);
    free(t);
    store_close(s, NULL);
}

static int count_runs(const char *db) { return (int)scalar(db, "SELECT COUNT(*) FROM runs"); }

TEST(store_merge_renumbers_runs) {
    const char *a = test_tmp("ma.db"), *b = test_tmp("mb.db"), *out = test_tmp("mout.db");
    fresh(a), fresh(b), fresh(out);
    record_synthetic(a, 2, 2, 4, 1);
    record_synthetic(a, 2, 2, 5, 2);
    record_synthetic(b, 2, 2, 7, 3);
    Err e;
    Store *s = store_open(out, STORE_WRITE, 200, &e);
    const char *in[] = {a, b};
    CHECK_MSG(store_merge(s, in, 2, NULL, NULL, NULL, &e) == 0, "%s", e.msg);
    const char *again[] = {b};
    CHECK(store_merge(s, again, 1, NULL, NULL, NULL, &e) == 0);
    const char *self[] = {out};
    CHECK(store_merge(s, self, 1, NULL, NULL, NULL, &e) != 0 && strstr(e.msg, "output"));
    const char *foreign = test_tmp("mforeign.db");
    fresh(foreign);
    exec_sql(foreign, "CREATE TABLE x(y)");
    const char *bad[] = {foreign};
    CHECK(store_merge(s, bad, 1, NULL, NULL, NULL, &e) != 0 && strstr(e.msg, "not an ahascope database"));
    store_close(s, NULL);
    CHECK_INT(count_runs(out), 4);
    CHECK_NEAR(scalar(out, "SELECT n_tokens FROM runs WHERE run_id=3"), 7, 0);
    CHECK_NEAR(scalar(out, "SELECT COUNT(*) FROM tokens WHERE run_id=4"), 7, 0);
    CHECK_NEAR(scalar(out, "SELECT COUNT(*) FROM decisions"), (4 + 5 + 7 + 7) * 4, 0);
    CHECK_NEAR(scalar(out, "SELECT COUNT(*) FROM runs WHERE origin LIKE '%mb.db#1'"), 2, 0);
    /* The merged copy holds the same values, not just the same counts. */
    CHECK_NEAR(scalar(out, "SELECT SUM(score) FROM decisions WHERE run_id=3"),
               scalar(b, "SELECT SUM(score) FROM decisions WHERE run_id=1"), 0);
}

TEST(store_export_json_and_csv) {
    const char *db = test_tmp("exp.db");
    fresh(db);
    record_synthetic(db, 2, 3, 4, 9);
    Err e;
    Store *s = store_open(db, STORE_READ, 200, &e);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(store_export(s, 1, STORE_FMT_JSON, f, &e) == 0);
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    CHECK_MSG(j != NULL, "export is not JSON: %.200s", buf);
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "tokens")), 4);
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "decisions")), 24);
    cJSON *run = cJSON_GetObjectItem(j, "run");
    CHECK(run && !strcmp(cJSON_GetObjectItem(run, "seed")->valuestring, "18446744073709551615"));
    cJSON_Delete(j);
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK(store_export(s, 1, STORE_FMT_CSV, f, &e) == 0);
    fclose(f);
    int lines = 0;
    for (char *p = buf; (p = strstr(p, "\r\n")); p += 2) lines++;
    CHECK_INT(lines, 1 + 24);
    free(buf);
    f = fopen("/dev/null", "w");
    CHECK(store_export(s, 99, STORE_FMT_JSON, f, &e) != 0 && strstr(e.msg, "no run 99"));
    fclose(f);
    store_close(s, NULL);
}

TEST(store_sha256_known_vectors) {
    const char *p = test_tmp("sha.txt");
    char hex[65];
    Err e;
    test_write_file(p, "abc", 3);
    CHECK(sha256_file(p, hex, &e) == 0);
    CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    test_write_file(p, "", 0);
    sha256_file(p, hex, &e);
    CHECK(!strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    const char *s56 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    test_write_file(p, s56, (long)strlen(s56));
    sha256_file(p, hex, &e);
    CHECK(!strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    CHECK(sha256_file(test_tmp("nope"), hex, &e) != 0);
}

/* Copy the committed fixture tests/fixtures/store/NAME to a scratch path to
 * read (RO) and one to upgrade (RW); returns the fixture's bytes (*n of them),
 * which RO must still hold after it is read, or NULL when it cannot. */
static char *fixture_copies(const char *name, const char *ro, const char *rw, long *n) {
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/store/%s", name);
    char *data = test_read_file(path, n);
    if (data && (test_write_file(ro, data, *n) != 0 || test_write_file(rw, data, *n) != 0))
        free(data), data = NULL;
    return data;
}

/* Both ways of reading a version-1 database (the compatibility views of a
 * reader, the migration of a writer) give the same version-2 answers, the
 * reader leaves the file untouched, and the saturated probabilities of
 * version 1 still count as global at every θ below 1. */
TEST(store_reads_and_upgrades_a_version_1_database) {
    const char *ro = test_tmp("v1-read.db"), *rw = test_tmp("v1-write.db");
    long n0 = 0;
    char *before = fixture_copies("v1.db", ro, rw, &n0);
    CHECK(before != NULL);
    const char *q = "SELECT (SELECT group_concat(predictor || ':' || tp || '/' || fp || '/' || fn || '/' || tn, ' ')"
                    " FROM confusion WHERE run_id = 1), (SELECT COUNT(*) FROM tokens WHERE run_id = 1 AND n_far = 0),"
                    " (SELECT COUNT(*) FROM decisions WHERE qada_bulk_logit > 1e308),"
                    " (SELECT ROUND(theta_logit, 6) FROM runs WHERE run_id = 1),"
                    " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 1),"
                    " (SELECT ROUND(oracle_mass, 6) FROM masses WHERE run_id = 1 AND pos = 30 AND layer = 2 AND head = 3)";
    int st;
    char *compat = test_runf(&st, "%s query --db %s --csv \"%s\"", getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope", ro, q);
    CHECK_MSG(st == 0, "query of a version-1 file: %s", compat);
    CHECK_MSG(file_unchanged(ro, before, n0), "reading changed the version-1 file");
    free(before);
    /* a writer upgrades the file in place */
    Err e;
    Store *s = store_open(rw, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (s) store_close(s, NULL);
    CHECK_NEAR(scalar(rw, "PRAGMA user_version"), STORE_SCHEMA_VERSION, 0);
    char *migrated = test_runf(&st, "%s query --db %s --csv \"%s\"", getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope", rw, q);
    CHECK_MSG(st == 0 && compat && migrated && !strcmp(compat, migrated), "compat:\n%s\nmigrated:\n%s", compat, migrated);
    /* window 16: positions 0-15 decide nothing; saturated values became +Inf */
    CHECK_MSG(migrated && strstr(migrated, ",16,"), "%s", migrated);
    CHECK(scalar(rw, "SELECT COUNT(*) FROM decisions WHERE qada_bulk_logit > 1e308") > 0);
    CHECK_NEAR(scalar(rw, "SELECT COUNT(*) FROM decisions d JOIN tokens t USING(run_id, pos) WHERE t.n_far = 0"
                          " AND (d.oracle_logit IS NOT NULL OR d.qada_logit IS NOT NULL)"), 0, 0);
    CHECK_NEAR(scalar(rw, "SELECT theta_logit FROM runs WHERE run_id = 1"), decide_theta_logit(0.1), 1e-6);
    CHECK_NEAR(scalar(rw, "SELECT COUNT(*) FROM evals WHERE theta_logit IS NOT NULL"), 1, 0);
    /* the upgraded file takes new runs, and reads its old ones as traces */
    s = store_open(rw, STORE_WRITE, 1000, &e);
    StoreRunInfo r;
    run_info(&r, 5, 8);
    CHECK(s && store_run_begin(s, &r, &e) == 0);
    StepTrace *t = synthetic_trace(5, 8, 0, 3);
    CHECK(s && store_write_step(s, r.run_id, t, NULL, &e) == 0 && store_run_end(s, r.run_id, "done", &e) == 0);
    CHECK_INT((int)r.run_id, 3);
    StepTrace *old = trace_new(5, 8);
    CHECK(s && store_read_steps(s, 1, 30, 1, &old, &e) == 1);
    CHECK_INT(old->n_far, 30 + 1 - 16);
    CHECK(isfinite(old->oracle_logit[0]) && old->kv_read[0] == -1); /* version 1 did not count KV reads */
    trace_free(old), trace_free(t);
    if (s) store_close(s, NULL);
    /* merge reads a version-1 input through an upgraded scratch copy, leaving it as it was */
    const char *merged = test_tmp("v1-merged.db");
    remove(merged);
    char *m = test_runf(&st, "%s merge --out %s %s", getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope",
                        merged, ro);
    CHECK_MSG(st == 0, "merge of a version-1 file: %s", m);
    free(m);
    CHECK_NEAR(scalar(merged, "SELECT COUNT(*) FROM decisions WHERE qada_bulk_logit > 1e308"),
               scalar(rw, "SELECT COUNT(*) FROM decisions WHERE qada_bulk_logit > 1e308"), 0);
    CHECK_NEAR(scalar(ro, "PRAGMA user_version"), 1, 0);
    free(compat), free(migrated);
}

/* A version-2 file (tests/fixtures/store/v2.db, written by the version-2
 * binary): read-only it shows an empty attn_top, answers as before and stays
 * byte-identical; a writer upgrades it, and the new run's recorded far
 * positions read back. */
TEST(store_reads_and_upgrades_a_version_2_database) {
    const char *ro = test_tmp("v2-read.db"), *rw = test_tmp("v2-write.db");
    long n0 = 0;
    char *before = fixture_copies("v2.db", ro, rw, &n0);
    CHECK(before != NULL);
    int st;
    const char *bin = getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope";
    const char *q = "SELECT (SELECT COUNT(*) FROM attn_top), (SELECT COUNT(*) FROM decided WHERE run_id = 1),"
                    " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 1)";
    char *compat = test_runf(&st, "%s query --db %s --csv \"%s\"", bin, ro, q);
    CHECK_MSG(st == 0 && compat && strstr(compat, "\r\n0,320,"), "query of a version-2 file: %s", compat);
    char *q3 = test_runf(&st, "%s query --db %s --csv 'SELECT COUNT(*) AS n FROM masses JOIN decisions"
                              " USING(run_id, pos, layer, head) WHERE regime IS NULL AND far_mean IS NULL AND"
                              " qada_rem_bulk_logit IS NULL' 2>&1", bin, ro); /* version 3's columns read as NULL */
    CHECK_MSG(st == 0 && q3 && strstr(q3, "n\r\n960"), "version-3 columns of a version-2 file: %s", q3);
    free(q3);
    CHECK_MSG(file_unchanged(ro, before, n0), "reading changed the version-2 file");
    free(before);
    Err e;
    Store *s = store_open(rw, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    CHECK_NEAR(scalar(rw, "PRAGMA user_version"), STORE_SCHEMA_VERSION, 0);
    char *migrated = test_runf(&st, "%s query --db %s --csv \"%s\"", bin, rw, q);
    CHECK_MSG(st == 0 && compat && migrated && !strcmp(compat, migrated), "compat:\n%s\nmigrated:\n%s", compat, migrated);
    free(compat), free(migrated);
    CHECK_NEAR(scalar(rw, "SELECT COUNT(*) FROM pragma_table_info('decisions') WHERE name IN ('qada_rem_logit',"
                          " 'qada_rem_bulk_logit', 'far_mean', 'far_std')"), 4, 0);
    CHECK(scalar(rw, "SELECT COUNT(*) FROM masses WHERE regime IS NULL") > 0); /* the views came back, new ones too */
    StoreRunInfo r;
    run_info(&r, 2, 2);
    CHECK(s && store_run_begin(s, &r, &e) == 0);
    StepTrace *t = trace_new_top(2, 2, 3), *back = trace_new_top(2, 2, 3);
    CHECK(t && back);
    if (s && t && back) {
        t->pos = 9, t->token = 5, t->n_far = 6;
        t->top_pos[0] = 4, t->top_w[0] = 0.5f, t->top_pos[1] = 1, t->top_w[1] = 0.25f; /* cell 0: two ranked */
        t->top_pos[3 * 3] = 2, t->top_w[3 * 3] = 0.125f;                            /* cell 3: one */
        CHECK(store_write_step(s, r.run_id, t, NULL, &e) == 0 && store_run_end(s, r.run_id, "done", &e) == 0);
        CHECK_INT(store_run_attn_top(s, r.run_id, &e), 2);
        CHECK_INT(store_run_attn_top(s, 1, &e), 0);
        CHECK(store_read_steps(s, r.run_id, 9, 1, &back, &e) == 1);
        CHECK_INT(back->top_pos[0], 4);
        CHECK_NEAR(back->top_w[1], 0.25, 0);
        CHECK_INT(back->top_pos[2], -1);
        CHECK_INT(back->top_pos[3 * 3], 2);
        CHECK_INT(back->top_pos[1 * 3], -1); /* cells with nothing recorded stay empty */
    }
    trace_free(t), trace_free(back);
    if (s) store_close(s, NULL);
}

/* A version-3 file (tests/fixtures/store/v3.db, written by the version-3
 * binary with --attn-top 4): read-only it answers and stays byte-identical;
 * a writer opens it at the current version and its recorded far positions
 * read back. The fixture exists before the layout changes, so the next
 * layout is held to upgrading it. */
TEST(store_reads_and_opens_a_version_3_database) {
    const char *ro = test_tmp("v3-read.db"), *rw = test_tmp("v3-write.db");
    long n0 = 0;
    char *before = fixture_copies("v3.db", ro, rw, &n0);
    CHECK(before != NULL);
    int st;
    const char *q = "SELECT (SELECT COUNT(*) FROM attn_top), (SELECT COUNT(*) FROM decisions WHERE run_id = 1),"
                    " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 1)";
    char *compat = test_runf(&st, "%s query --db %s --csv \"%s\"", test_bin(), ro, q);
    CHECK_MSG(st == 0 && compat && strstr(compat, "\r\n1040,960,0.190625\r\n"), "query of a version-3 file: %s", compat);
    CHECK_MSG(file_unchanged(ro, before, n0), "reading changed the version-3 file");
    free(before);
    Err e;
    Store *s = store_open(rw, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    CHECK_NEAR(scalar(rw, "PRAGMA user_version"), STORE_SCHEMA_VERSION, 0);
    char *opened = test_runf(&st, "%s query --db %s --csv \"%s\"", test_bin(), rw, q);
    CHECK_MSG(st == 0 && compat && opened && !strcmp(compat, opened), "read-only:\n%s\nopened:\n%s", compat, opened);
    free(compat), free(opened);
    if (s) {
        CHECK_INT(store_run_attn_top(s, 1, &e), 4);
        StepTrace *back = trace_new_top(5, 8, 4);
        CHECK(back && store_read_steps(s, 1, 23, 1, &back, &e) == 1);
        if (back) {
            CHECK_INT(back->pos, 23);
            CHECK(back->top_pos[0] >= 0 && back->top_pos[0] < 23 - 16 + 1); /* a far position, outside the window of 16 */
            CHECK(back->top_w[0] > 0 && back->top_w[0] <= 1);
        }
        trace_free(back);
        store_close(s, NULL);
    }
}

/* An upgraded fixture opened for writing (s, at rw) keeps its recorded far
 * positions and takes a new 5 x 8 run of four positions as run `id`. */
static void takes_a_new_run(Store *s, const char *rw, int id) {
    Err e;
    if (s) {
        CHECK_INT(store_run_attn_top(s, 1, &e), 4);
        StoreRunInfo r;
        run_info(&r, 5, 8);
        CHECK(store_run_begin(s, &r, &e) == 0);
        CHECK_INT((int)r.run_id, id);
        for (int p = 0; p < 4; p++) {
            StepTrace *t = synthetic_trace(5, 8, p, 5);
            CHECK(store_write_step(s, r.run_id, t, NULL, &e) == 0);
            trace_free(t);
        }
        CHECK(store_run_end(s, r.run_id, "done", &e) == 0);
        store_close(s, NULL);
    }
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM decisions WHERE run_id = %d", id);
    CHECK_NEAR(scalar(rw, sql), 4 * 5 * 8, 0);
}

/* Fixture `name` of schema version `ver`, read-only and upgraded: query q
 * holds `want` read-only and answers the same upgraded; the diff of runs 1
 * and 2 (`diff_want` in it) and `compare --run 1` too; the read-only copy
 * stays byte-identical, and the upgraded one takes a new run as run
 * `new_id`. */
static void fixture_answers_as_before(const char *name, int ver, const char *q, const char *want,
                                      const char *diff_want, int new_id) {
    char ro[1024], rw[1024], tag[32];
    snprintf(tag, sizeof tag, "%s-read.db", name);
    snprintf(ro, sizeof ro, "%s", test_tmp(tag));
    snprintf(tag, sizeof tag, "%s-write.db", name);
    snprintf(rw, sizeof rw, "%s", test_tmp(tag));
    long n0 = 0;
    char *before = fixture_copies(name, ro, rw, &n0);
    CHECK(before != NULL);
    CHECK_NEAR(scalar(ro, "PRAGMA user_version"), ver, 0);
    int st;
    char *out[2][3] = {{NULL}};
    const char *dbs[2] = {ro, rw};
    Err e;
    Store *s = NULL;
    for (int k = 0; k < 2; k++) {
        if (k == 1) {
            CHECK_MSG(file_unchanged(ro, before, n0), "reading changed %s", name);
            s = store_open(rw, STORE_WRITE, 1000, &e);
            CHECK_MSG(s != NULL, "%s", e.msg);
            CHECK_NEAR(scalar(rw, "PRAGMA user_version"), STORE_SCHEMA_VERSION, 0);
        }
        out[k][0] = test_runf(&st, "%s query --db %s --csv \"%s\"", test_bin(), dbs[k], q);
        CHECK_MSG(st == 0 && out[k][0] && strstr(out[k][0], want), "%s, %s: %s", name, k ? "upgraded" : "read-only",
                  out[k][0] ? out[k][0] : "");
        out[k][1] = test_runf(&st, "%s compare --db %s --run 1 --run 2", test_bin(), dbs[k]);
        CHECK_MSG(st == 0 && out[k][1] && strstr(out[k][1], diff_want), "%s, the diff: %s", name,
                  out[k][1] ? out[k][1] : "");
        out[k][2] = test_runf(&st, "%s compare --db %s --run 1", test_bin(), dbs[k]);
        CHECK_MSG(st == 0 && out[k][2], "%s, compare: %s", name, out[k][2] ? out[k][2] : "");
    }
    for (int i = 0; i < 3; i++) {
        CHECK_MSG(out[0][i] && out[1][i] && !strcmp(out[0][i], out[1][i]), "%s read-only:\n%s\nupgraded:\n%s", name,
                  out[0][i] ? out[0][i] : "", out[1][i] ? out[1][i] : "");
        free(out[0][i]), free(out[1][i]);
    }
    free(before);
    takes_a_new_run(s, rw, new_id);
}

/* A version-4 file (tests/fixtures/store/v4.db, written by the version-4
 * binary: run 1 under aha, run 2 under the oracle, both --profile
 * --attn-top 4): read-only it answers and stays byte-identical; a writer
 * opens it at the current version, its summaries, diff and far positions
 * answer as before, and it takes a new run. The fixture exists before the
 * layout changes, so every later layout is held to upgrading it. */
TEST(store_reads_and_upgrades_a_version_4_database) {
    fixture_answers_as_before("v4.db", 4,
                              "SELECT (SELECT COUNT(*) FROM attn_top WHERE run_id = 1), (SELECT COUNT(*) FROM decisions),"
                              " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 1),"
                              " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 2)",
                              ",1920,0.190625,0.271875\r\n",
                              "4 global->local (-), 28 local->global (+) of 200 decisions", 3);
}

/* A version-5 file (tests/fixtures/store/v5.db, written by the version-5
 * binary: run 1 under aha, run 2 under the oracle, both --profile
 * --attn-top 4, run 3 an eval's): read-only it answers and stays
 * byte-identical; a writer opens it at the current version, its summaries,
 * confusion tables and diff (from the tokens' bitmaps) answer as before,
 * and it takes a new run. Made before head_totals went long, so every
 * later layout is held to upgrading it. */
TEST(store_reads_and_upgrades_a_version_5_database) {
    fixture_answers_as_before("v5.db", 5,
                              "SELECT (SELECT COUNT(*) FROM attn_top WHERE run_id = 1), (SELECT COUNT(*) FROM decisions),"
                              " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 1),"
                              " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 2),"
                              " (SELECT group_concat(predictor || ':' || tp || '/' || fp || '/' || fn || '/' || tn, ' ')"
                              "  FROM (SELECT * FROM confusion WHERE run_id = 1 ORDER BY predictor)),"
                              " (SELECT ROUND(SUM(oracle_rate), 6) || ',' || ROUND(SUM(qada_rate), 6) FROM head_rates)",
                              "1040,2880,0.190625,0.271875,aha:48/13/37/222 executed:48/13/37/222"
                              " qada:78/217/7/18 qada_bulk:85/26/0/209",
                              "4 global->local (-), 28 local->global (+) of 200 decisions", 4);
}

/* A version-7 file (tests/fixtures/store/v7.db, written by the version-7
 * binary: the v5 fixture's two runs and an eval, run_layers all global):
 * read-only it shows version 8's tables empty and runs.ablate NULL (TEMP
 * objects, the file byte-identical), and a writer upgrades it to answer
 * the same, keys read by every decision included, and take a new run. */
TEST(store_reads_and_upgrades_a_version_7_database) {
    fixture_answers_as_before("v7.db", 7,
                              "SELECT (SELECT COUNT(*) FROM attn_top WHERE run_id = 1), (SELECT COUNT(*) FROM decisions),"
                              " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 1),"
                              " (SELECT ROUND(global_share, 6) FROM run_summary WHERE run_id = 2),"
                              " (SELECT SUM(keys_read) FROM decisions), (SELECT COUNT(*) FROM run_layers),"
                              " (SELECT COUNT(*) FROM run_heads), (SELECT COUNT(*) FROM bookmarks),"
                              " (SELECT COUNT(*) FROM runs WHERE ablate IS NULL)",
                              "1040,2880,0.190625,0.271875,32648,15,0,0,3\r\n",
                              "4 global->local (-), 28 local->global (+) of 200 decisions", 4);
}

/* A file at `path` holding exactly the frozen statements `sql` of schema
 * version `ver` (no rows), opened once for writing: upgraded to the
 * current version. Returns its objects' stored text, one per line, by
 * name; NULL on failure. */
static char *upgraded_schema_text(const char *path, const char *sql, int ver) {
    unlink(path);
    sqlite3 *db = NULL;
    char pragmas[96];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id=%d; PRAGMA user_version=%d;", STORE_APPLICATION_ID, ver);
    int ok = sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK &&
             sqlite3_exec(db, pragmas, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(db);
    Err e;
    Store *s = ok ? store_open(path, STORE_WRITE, 1000, &e) : NULL;
    CHECK_MSG(s != NULL, "version %d: %s", ver, ok ? e.msg : "cannot make the file");
    if (!s) return NULL;
    store_close(s, NULL);
    sqlite3_stmt *st = NULL;
    char *text = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT group_concat(type || ' ' || name || ' ' || tbl_name || ' ' || COALESCE(sql, ''),"
                               " char(10)) FROM (SELECT * FROM sqlite_schema ORDER BY name)", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        text = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return text;
}

/* A file made at version c and upgraded by an older build to any later
 * version v (the text that build left, frozen in schema_old.c) stores,
 * once this build upgrades it, exactly the text the same file upgraded
 * from c in one go stores: every step reads only its own layout. */
TEST(store_upgrade_steps_and_one_go_store_the_same_schema) {
    const char *path = test_tmp("steps.db");
    int pairs = 0;
    for (int c = 1; c < STORE_SCHEMA_VERSION; c++) {
        char *one_go = upgraded_schema_text(path, store_schema_old(c), c);
        for (int v = c + 1; one_go && v < STORE_SCHEMA_VERSION; v++) {
            const char *left = store_schema_old_upgraded(c, v);
            if (!left) continue;
            char *steps = upgraded_schema_text(path, left, v);
            CHECK_MSG(steps && !strcmp(one_go, steps), "made at %d, upgraded to %d by its build, then to %d: %s", c, v,
                      STORE_SCHEMA_VERSION, steps ? "other text" : "refused");
            pairs++;
            free(steps);
        }
        CHECK_MSG(one_go != NULL, "made at %d, upgraded in one go", c);
        free(one_go);
    }
    CHECK_INT(pairs, 21); /* 1->2 … 1->7, 2->3 … 2->7, 3->4 … 3->7, 4->5 … 4->7, 5->6, 5->7, 6->7 */
}

/* One field list: the decisions table's columns, the export's header and
 * the views' metrics all come from TRACE_HEAD_FIELDS, in its order. */
TEST(store_columns_follow_the_trace_field_list) {
    const char *db = test_tmp("fields.db");
    fresh(db);
    record_synthetic(db, 2, 3, 4, 5);
    static const char *const names[] = {
#define FIELD_NAME(name, type, missing, sql, show, title, short_name, doc) #name,
        TRACE_HEAD_FIELDS(FIELD_NAME)
#undef FIELD_NAME
    };
    int n = (int)(sizeof names / sizeof names[0]);
    char want[512] = "run_id,pos,layer,head", sql[128];
    for (int i = 0; i < n; i++) {
        strcat(want, ","), strcat(want, names[i]);
        snprintf(sql, sizeof sql, "SELECT cid FROM pragma_table_info('decisions') WHERE name = '%s'", names[i]);
        CHECK_NEAR(scalar(db, sql), 4 + i, 0);
    }
    CHECK_NEAR(scalar(db, "SELECT COUNT(*) FROM pragma_table_info('decisions')"), 4 + n, 0);
    int st;
    char *csv = test_runf(&st, "%s export --db %s --run 1 --csv", getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope", db);
    CHECK_MSG(st == 0 && csv && strstr(csv, ",layer,head,") && strstr(csv, want + strlen("run_id,pos,layer,head")),
              "CSV header does not follow the list: %.300s", csv);
    free(csv);
    StepTrace *t = trace_new(1, 1);
    t->gate[0] = 1, t->keys_read[0] = 3, t->score[0] = 0.5f;
    trace_clear(t);
    CHECK(t->gate[0] == -1 && t->keys_read[0] == -1 && isnan(t->score[0]) && isnan(t->qada_bulk_logit[0]));
    trace_free(t);
}
