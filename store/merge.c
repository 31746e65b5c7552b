/* merge.c — runs of other files appended, ids renumbered.
 *
 * Many databases recorded in parallel become one: each input's
 * runs are appended with run ids shifted past the ones already present, so
 * runs from different processes or machines can be analysed together.
 *
 * An input of an older schema is upgraded in a scratch copy in $TMPDIR
 * named ahascope-merge-PID-START-XXXXXX (this process's pid and start
 * time), so that a later merge can tell the copies of processes that died
 * (kill -9) from those of live ones, and remove them. The caller's stop
 * callback is polled between inputs, between backup steps and by SQLite's
 * progress handler inside every long statement: a stop rolls the input
 * back and removes its scratch copy. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "engine/textout.h"
#include "store/internal.h"

#define SCRATCH_PREFIX "ahascope-merge-"

typedef struct {
    Store *s;
    int (*stop)(void *ctx);
    void *ctx;
} Merge;

/* Nonzero once the caller wants the merge to stop; SQLite's progress
 * handler too, where nonzero interrupts the statement running. */
static int stopped(void *arg) {
    Merge *m = arg;
    return m->stop && m->stop(m->ctx);
}

static const char *scratch_dir(void) {
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/* A scratch copy and what SQLite keeps beside it. */
static void scratch_remove(const char *path) {
    static const char *const side[] = {"", "-wal", "-shm", "-journal"};
    char p[1200];
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, side[i]);
        unlink(p);
    }
}

/* Scratch files (copies and their -wal, -shm, -journal) of merges whose
 * process is gone: killed outright, they could not remove their own. Only
 * this user's regular files, and never a live process's. */
static void scratch_remove_stale(void) {
    const char *dir = scratch_dir();
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        long long pid, start;
        int used = 0;
        if (sscanf(de->d_name, SCRATCH_PREFIX "%lld-%lld-%n", &pid, &start, &used) != 2 || !used) continue;
        if (store_writer_alive(pid, start)) continue;
        char path[1400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid()) unlink(path);
    }
    closedir(d);
}

static const char RUN_COLUMNS[] =
    "status, created_at, finished_at, ahascope_version, writer_host, writer_pid, writer_start, model, model_sha256,"
    " arch, dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len, tokenizer, tokenizer_sha256,"
    " policy, window, sinks, tau, theta, p, profile, routers, routers_sha256, static_heads, prompt, steps,"
    " temperature, topp, seed, origin, n_tokens, theta_logit, top_k, ablate";

static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int exec_bound(Store *s, const char *sql, int64_t off, const char *origin, int *changes) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return SQLITE_ERROR;
    sqlite3_bind_int64(st, 1, off);
    if (origin) sqlite3_bind_text(st, 2, origin, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (changes) *changes = sqlite3_changes(s->db);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The rows of src's totals table `table`, their run ids moved by off
 * (the columns past run_id named from the table itself). */
static int copy_table(Store *s, const char *table, int64_t off) {
    sqlite3_stmt *st;
    char *q = sqlite3_mprintf("SELECT group_concat(name, ', ') FROM (SELECT name FROM pragma_table_info('%q', 'main')"
                              " WHERE cid > 0 ORDER BY cid)", table);
    int rc = q ? sqlite3_prepare_v2(s->db, q, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(q);
    char *sql = NULL;
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        const char *cols = (const char *)sqlite3_column_text(st, 0);
        sql = sqlite3_mprintf("INSERT INTO main.%s(run_id, %s) SELECT run_id + ?1, %s FROM src.%s", table, cols, cols,
                              table);
    }
    if (rc == SQLITE_OK) sqlite3_finalize(st);
    if (rc == SQLITE_OK) rc = sql ? exec_bound(s, sql, off, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

/* The totals of every head of src's runs: each table of one row per head
 * and name (store/internal.h); and each run's layer kinds, heads' own
 * windows and bookmarks. */
static int copy_totals(Store *s, int64_t off) {
    static const char *const tables[] = {"head_totals", "head_stats", "run_layers", "run_heads", "bookmarks"};
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof tables / sizeof tables[0]; i++) rc = copy_table(s, tables[i], off);
    return rc;
}

/* Copy every run of the attached database `src`, inside the caller's transaction. */
static int copy_runs(Store *s, const char *input, int *n_runs, int64_t *off) {
    char sql[2048];
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "SELECT (SELECT COALESCE(MAX(run_id), 0) FROM main.runs),"
                                   " (SELECT COALESCE(MAX(eval_id), 0) FROM main.evals)", -1, &st, NULL);
    long long eoff = 0;
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) *off = sqlite3_column_int64(st, 0), eoff = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    /* evaluations first: the runs that belong to them point at them */
#define MERGE_EVAL_COLUMNS                                                                                   \
    "created_at, label, model, model_sha256, policy, window, sinks, tau, theta, p, routers, static_heads, data," \
    " n_seqs, n_tokens, perplexity, perplexity_full, kl_mean, global_share, keys_read_frac, matched_to,"        \
    " theta_logit, kv_read_frac"
#define MERGE_SCORE_COLUMNS "predictor, tp, fp, fn, tn, precision, recall, f1, predicted_rate"
    snprintf(sql, sizeof sql, "INSERT INTO main.evals(eval_id, " MERGE_EVAL_COLUMNS ") SELECT eval_id + %lld, "
             MERGE_EVAL_COLUMNS " FROM src.evals", eoff);
    if (rc == SQLITE_OK) rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    snprintf(sql, sizeof sql, "INSERT INTO main.eval_scores(eval_id, " MERGE_SCORE_COLUMNS ") SELECT eval_id + %lld, "
             MERGE_SCORE_COLUMNS " FROM src.eval_scores", eoff);
    if (rc == SQLITE_OK) rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    /* The origin names where a run came from, kept through repeated merges. */
    snprintf(sql, sizeof sql,
             "INSERT INTO main.runs(run_id, parent_run_id, eval_id, %s) SELECT run_id + ?1, parent_run_id + ?1,"
             " eval_id + %lld, ahascope_status(status, writer_host, writer_pid, writer_start)%.*s,"
             " COALESCE(origin, ?2 || '#' || run_id), n_tokens, theta_logit, top_k, ablate FROM src.runs ORDER BY run_id",
             RUN_COLUMNS, eoff, (int)(strstr(RUN_COLUMNS, ", origin") - RUN_COLUMNS - 6), RUN_COLUMNS + 6);
    if (rc == SQLITE_OK) rc = exec_bound(s, sql, *off, input, n_runs);
    if (rc == SQLITE_OK)
        rc = exec_bound(s, "INSERT INTO main.tokens(run_id, pos, token_id, piece, is_prompt, logprob, entropy,"
                           " step_us, n_far, kv_read, n_gate, n_global, n_oracle, n_oracle_global, keys_read_sum,"
                           " gates) SELECT run_id + ?1, pos, token_id, piece, is_prompt, logprob, entropy, step_us,"
                           " n_far, kv_read, n_gate, n_global, n_oracle, n_oracle_global, keys_read_sum, gates"
                           " FROM src.tokens",
                        *off, NULL, NULL);
    /* the run is the top of the packed key: adding the offset there renumbers it */
    snprintf(sql, sizeof sql, "INSERT INTO main.decision_bits(%s) SELECT k + (?1 << 48)%s FROM src.decision_bits"
             " ORDER BY k", STORE_BITS_COLUMNS, &STORE_BITS_COLUMNS[1]); /* the columns past "k" */
    if (rc == SQLITE_OK) rc = exec_bound(s, sql, *off, NULL, NULL);
    if (rc == SQLITE_OK) rc = copy_totals(s, *off);
    if (rc != SQLITE_OK) rc = sqlite3_errcode(s->db);
    return rc;
}

/* Bring the scratch copy to the current schema on a connection of our
 * own, so the progress handler can stop a long upgrade (version 1's
 * rewrites every decision); then store_open finds it current and, as for
 * any file it opens to write, marks the runs of dead writers interrupted. */
static int upgrade_scratch(Merge *m, const char *scratch, Err *e) {
    sqlite3 *db = NULL;
    int rc = store_db_open(scratch, SQLITE_OPEN_READWRITE, &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    sqlite3_progress_handler(db, 1000, stopped, m);
    int bad = rc != SQLITE_OK ? store_sql_err(db, scratch, "cannot open", e) : store_schema_check(db, scratch, 1, e);
    sqlite3_close(db);
    Store *up = bad ? NULL : store_open(scratch, STORE_WRITE, 2000, e);
    return up ? store_close(up, e) : -1;
}

/* Copy the input into the scratch file a few pages at a time, polling
 * stop between steps. */
static int backup_to(Merge *m, Store *in, const char *scratch) {
    sqlite3 *to = NULL;
    int rc = store_db_open(scratch, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &to);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(to, "main", in->db, "main") : NULL;
    if (b) {
        do rc = sqlite3_backup_step(b, 256);
        while (rc == SQLITE_OK && !stopped(m));
        sqlite3_backup_finish(b);
    }
    rc = b ? sqlite3_errcode(to) : SQLITE_ERROR;
    sqlite3_close(to);
    return rc == SQLITE_OK && !stopped(m) ? 0 : -1;
}

/* An input of an older schema is copied to a scratch file and upgraded
 * there, so the copy's columns line up and the input itself is untouched.
 * Sets scratch to the copy's path ("" when the input is current). */
static int upgraded_copy(Merge *m, Store *in, const char *input, char *scratch, size_t cap, Err *e) {
    scratch[0] = 0;
    int ver = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(in->db, "PRAGMA main.user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        ver = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (ver == STORE_SCHEMA_VERSION) return 0;
    char host[256];
    int64_t pid, start;
    store_writer_self(host, sizeof host, &pid, &start);
    const char *dir = scratch_dir();
    snprintf(scratch, cap, "%s/" SCRATCH_PREFIX "%lld-%lld-XXXXXX", dir, (long long)pid, (long long)start);
    int fd = mkstemp(scratch);
    if (fd < 0) return scratch[0] = 0, err_set(e, "%s: cannot make a scratch copy to upgrade it in %s", input, dir);
    close(fd);
    if (backup_to(m, in, scratch) == 0 && upgrade_scratch(m, scratch, e) == 0) return 0;
    if (!stopped(m) && !e->msg[0]) err_set(e, "%s: cannot copy it to upgrade its schema version %d", input, ver);
    scratch_remove(scratch);
    scratch[0] = 0;
    return -1;
}

static int attach_and_copy(Merge *m, const char *input, const char *path, FILE *log, Err *e);

/* The first run of the attached or opened file whose key names a row the
 * file lacks: a parent or an evaluation. Copied, it would fail the
 * output's foreign key, and SQLite's words would name the output. */
static const char DANGLING[] =
    "SELECT run_id, CASE WHEN parent_run_id IS NOT NULL AND parent_run_id NOT IN (SELECT run_id FROM runs)"
    " THEN 'parent_run_id ' || parent_run_id || ' names no run' ELSE 'eval_id ' || eval_id || ' names no evaluation' END"
    " FROM runs WHERE (parent_run_id IS NOT NULL AND parent_run_id NOT IN (SELECT run_id FROM runs)) OR"
    " (eval_id IS NOT NULL AND eval_id NOT IN (SELECT eval_id FROM evals)) LIMIT 1";

static int check_keys(Store *in, const char *input, Err *e) {
    sqlite3_stmt *st;
    char safe[1024];
    if (store_prepare(in, DANGLING, &st, e)) return -1;
    int rc = sqlite3_step(st), bad = 0;
    if (rc == SQLITE_ROW)
        bad = err_set(e, "%s: run %lld's %s in it: not merged", textout_term(input, safe, sizeof safe),
                      (long long)sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1));
    else if (rc != SQLITE_DONE) bad = store_sql_err(in->db, input, "cannot check it", e);
    sqlite3_finalize(st);
    return bad;
}

/* Every run's summaries and every evaluation's row of the input checked
 * as compare and eval --from-db check them: once merged, a row that cannot
 * be true would be read back from the output under a new run id, its
 * origin lost in the crowd. 0, or -1 naming the input, run and table. */
static int check_input(Store *in, const char *input, Err *e) {
    int64_t *ids = NULL;
    StoreEvalRow *ev = NULL;
    char why[400], safe[1024];
    if (check_keys(in, input, e)) return -1;
    int n = store_run_ids(in, &ids, e), bad = n < 0 ? -1 : 0;
    for (int i = 0; !bad && i < n; i++) {
        bad = store_check_gates(in, ids[i], why, sizeof why, e);
        if (!bad) bad = store_check_totals(in, ids[i], why, sizeof why, e);
        if (bad > 0) err_set(e, "%s: run %lld's %s: cannot be true, not merged", textout_term(input, safe, sizeof safe),
                             (long long)ids[i], why);
    }
    int ne = bad ? 0 : store_evals(in, &ev, e);
    if (ne < 0) bad = -1;
    for (int i = 0; !bad && i < ne; i++)
        if (store_check_eval(&ev[i].ev, why, sizeof why))
            bad = err_set(e, "%s: evaluation %lld's evals row: %s: not merged", textout_term(input, safe, sizeof safe),
                          (long long)ev[i].eval_id, why);
    free(ids), free(ev);
    return bad ? -1 : 0;
}

static int merge_one(Merge *m, const char *input, FILE *log, Err *e) {
    if (same_file(input, m->s->path)) return err_set(e, "%s: is the output database itself", input);
    Store *in = store_open(input, STORE_READ, 2000, e); /* validates: SQLite, ours, a schema we read */
    if (!in) return -1;
    char scratch[1100];
    e->msg[0] = 0;
    int up = upgraded_copy(m, in, input, scratch, sizeof scratch, e);
    if (!up && scratch[0]) { /* checked in the current layout, as the copy will read it */
        store_close(in, NULL);
        in = store_open(scratch, STORE_READ, 2000, e);
        up = in ? 0 : -1;
    }
    if (!up) up = check_input(in, input, e);
    store_close(in, NULL);
    if (up && scratch[0]) scratch_remove(scratch);
    if (up) return -1;
    int rc = attach_and_copy(m, input, scratch[0] ? scratch : input, log, e);
    if (scratch[0]) scratch_remove(scratch);
    return rc;
}

/* path as a read-only URI: an input attached read-write would have its
 * -wal checkpointed into it and deleted when the merge detaches it. */
static char *readonly_uri(const char *path) {
    static const char keep[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-~";
    size_t n = strlen(path), len = 0;
    char *uri = malloc(3 * n + 32);
    if (!uri) return NULL;
    len += (size_t)sprintf(uri, "%s", path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        len += (size_t)(*c && strchr(keep, *c) ? sprintf(uri + len, "%c", *c) : sprintf(uri + len, "%%%02X", *c));
    sprintf(uri + len, "?mode=ro");
    return uri;
}

/* ATTACH path read-only as src and copy its runs; input names it in
 * messages. A stop interrupts the statement running and rolls the input back. */
static int attach_and_copy(Merge *m, const char *input, const char *path, FILE *log, Err *e) {
    Store *s = m->s;
    sqlite3_stmt *st;
    char *uri = readonly_uri(path);
    if (!uri) return err_set(e, "%s: out of memory", input);
    if (store_prepare(s, "ATTACH DATABASE ?1 AS src", &st, e)) { free(uri); return -1; }
    sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    free(uri);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, input, "cannot attach", e);
    int n_runs = 0, ver = 0;
    int64_t off = 0;
    rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) store_sql_err(s->db, s->path, "merge failed", e);
    /* checked again as attached, in the snapshot copied from: the file may
     * have changed since store_open looked at it */
    else if (store_schema_verify(s->db, "src", input, &ver, e) ||
             (ver != STORE_SCHEMA_VERSION && err_set(e, "%s: changed while being merged", input)))
        rc = SQLITE_ERROR;
    else {
        sqlite3_progress_handler(s->db, 1000, stopped, m);
        rc = copy_runs(s, input, &n_runs, &off);
        sqlite3_progress_handler(s->db, 0, NULL, NULL);
        int full = rc == SQLITE_OK && off + n_runs > STORE_MAX_RUNS; /* the run id must fit the packed key */
        if (full) rc = SQLITE_FULL;
        if (rc == SQLITE_OK && stopped(m)) rc = SQLITE_INTERRUPT; /* asked for after the last statement: not committed */
        if (rc == SQLITE_OK) rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        if (full) err_set(e, "%s: merging it would make %lld runs, and a database keeps at most %d", input,
                          (long long)off + n_runs, STORE_MAX_RUNS);
        else if (rc != SQLITE_OK) store_sql_err(s->db, s->path, "merge failed", e);
    }
    if (rc != SQLITE_OK && !sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_exec(s->db, "DETACH DATABASE src", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return -1;
    char safe[4 * 1024]; /* the path as typed, escaped for the terminal */
    if (log) fprintf(log, "%s: %d run%s as %lld..%lld\n", textout_term(input, safe, sizeof safe), n_runs,
                     n_runs == 1 ? "" : "s", (long long)off + 1, (long long)off + n_runs);
    return 0;
}

int store_merge_inputs_check(const char *out, const char *const *inputs, int n, Err *e) {
    /* the output's side files first: a foreign journal beside it is the graver fault, and reading them changes nothing */
    if (store_sidefiles_check(out, "write", e)) return -1;
    for (int i = 0; i < n; i++) {
        if (same_file(inputs[i], out)) return err_set(e, "%s: is the output database itself", inputs[i]);
        Store *in = store_open(inputs[i], STORE_READ, 2000, e);
        int rc = !in ? -1 : in->version == STORE_SCHEMA_VERSION ? check_input(in, inputs[i], e) : 0;
        store_close(in, NULL);
        if (rc) return -1;
    }
    return 0;
}

int store_merge(Store *s, const char *const *inputs, int n, FILE *log, int (*stop)(void *ctx), void *ctx, Err *e) {
    if (s->mode != STORE_WRITE) return err_set(e, "%s: opened read-only", s->path);
    if (store_flush(s, e)) return -1;
    Merge m = {s, stop, ctx};
    scratch_remove_stale();
    for (int i = 0; i < n; i++)
        if (stopped(&m) || merge_one(&m, inputs[i], log, e)) {
            if (stopped(&m))
                err_set(e, "interrupted while merging %s: %s holds what it held before that input", inputs[i], s->path);
            return -1;
        }
    return 0;
}
