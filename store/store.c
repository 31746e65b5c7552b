/* store.c — opening a file (is it SQLite, ours, whole; runs left by dead writers) and closing it.
 *
 * Opening a database: is it SQLite, is it ours, is it whole, and
 * which runs did a dead writer leave behind; and closing it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/files.h"
#include "engine/sniff.h"
#include "store/internal.h"

/* A file SQLite would open but whose pages are cut off fails only at the
 * first query that reaches them; the header says how big it should be. */
static int check_header(const char *path, Err *e) {
    struct stat st;
    char shown[1100];
    store_path_shown(path, shown, sizeof shown);
    if (stat(path, &st) != 0) return 0;
    if (st.st_size == 0) return 0;
    unsigned char h[100];
    FILE *f = file_fopen_regular(path, "the database", "an SQLite database", e);
    if (!f) return -1;
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n < sizeof h || memcmp(h, "SQLite format 3", 16) != 0) return err_set(e, "%s: not an SQLite database", shown);
    long page = (h[16] << 8) | h[17];
    if (page == 1) page = 65536;
    if (page < 512 || (page & (page - 1)) != 0) /* SQLite would only say "not an error" after a rollback */
        return err_set(e, "%s: not an SQLite database: invalid page size %ld in its header", shown, page);
    unsigned long pages = ((unsigned long)h[28] << 24) | (h[29] << 16) | (h[30] << 8) | h[31];
    int size_valid = memcmp(h + 24, h + 92, 4) == 0;
    char wal[1100];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat ws;
    int has_wal = stat(wal, &ws) == 0 && ws.st_size > 0;
    if (size_valid && !has_wal && (unsigned long long)pages * page > (unsigned long long)st.st_size)
        return err_set(e, "%s: truncated: %lld of %llu bytes present", shown, (long long)st.st_size,
                       (unsigned long long)pages * page);
    return 0;
}

static int exists(const char *path, const char *suffix) {
    char p[1100];
    struct stat st;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return stat(p, &st) == 0;
}

/* Whether opening path must create files beside it: a reader of a WAL
 * database needs PATH-shm, a writer needs -wal and -shm (or a rollback
 * journal when the database is not in WAL mode). */
static int needs_side_files(const char *path, StoreMode mode) {
    unsigned char h[20] = {0};
    FILE *f = file_fopen_regular(path, "the database", "an SQLite database", NULL);
    if (f) {
        if (fread(h, 1, sizeof h, f) != sizeof h) memset(h, 0, sizeof h);
        fclose(f);
    }
    int wal = h[18] == 2; /* the header's read/write versions are 2 in WAL mode */
    if (mode == STORE_READ) return wal && !exists(path, "-shm");
    return !wal || !exists(path, "-wal") || !exists(path, "-shm");
}

/* Why SQLite could not open or read a database, when the file system says
 * so: a missing directory, or a permission, with what was tried (read,
 * write, create). Returns -1 with e set if it found the cause, else 0 (as
 * root, access() grants everything and SQLite's own message stands). */
static int explain_access(const char *path, StoreMode mode, Err *e) {
    struct stat st;
    int exists = stat(path, &st) == 0, err = errno;
    const char *what = mode == STORE_READ ? "cannot read the database"
                     : exists ? "cannot write the database" : "cannot create the database";
    char dir[1024], shown[1100], dir_shown[1100];
    file_parent(path, dir, sizeof dir);
    store_path_shown(path, shown, sizeof shown);
    store_path_shown(dir, dir_shown, sizeof dir_shown);
    if (!exists) {
        /* A missing file to create is no error; any other stat failure
         * (ELOOP, ENAMETOOLONG, EACCES on a parent) is the cause itself. */
        if (err == ENOENT && (mode == STORE_WRITE || sniff_kind(dir) != FILE_DIR)) return file_check_output(path, what, e);
        return err_set(e, "%s: %s: %s", shown, what, strerror(err));
    }
    if (access(path, R_OK) != 0) return err_set(e, "%s: %s: permission denied (the file is not readable)", shown, what);
    if (mode == STORE_WRITE && access(path, W_OK) != 0)
        return err_set(e, "%s: %s: permission denied (the file is read-only)", shown, what);
    if (needs_side_files(path, mode) && access(dir, W_OK | X_OK) != 0)
        return err_set(e, "%s: %s: permission denied (SQLite must create %s-%s beside it, and %s is not writable)",
                       shown, what, shown, mode == STORE_READ ? "shm" : "wal and -shm", dir_shown);
    return 0;
}

/* Runs still 'running' whose writer on this host has died become
 * 'interrupted': their committed steps stay, and say where they stopped. */
static int recover_runs(Store *s, Err *e) {
    char host[256], now[32];
    int64_t me, my_start;
    store_writer_self(host, sizeof host, &me, &my_start);
    sqlite3_stmt *sel, *upd;
    if (store_prepare(s, "SELECT run_id, writer_pid, writer_start FROM runs WHERE status='running' AND writer_host=?1",
                      &sel, e))
        return -1;
    if (store_prepare(s, "UPDATE runs SET status='interrupted', finished_at=?2 WHERE run_id=?1", &upd, e)) {
        sqlite3_finalize(sel);
        return -1;
    }
    store_now(now);
    sqlite3_bind_text(sel, 1, host, -1, SQLITE_TRANSIENT);
    int rc;
    while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t pid = sqlite3_column_int64(sel, 1), start = sqlite3_column_int64(sel, 2);
        if (pid == me || store_writer_alive(pid, start)) continue;
        sqlite3_bind_int64(upd, 1, sqlite3_column_int64(sel, 0));
        sqlite3_bind_text(upd, 2, now, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(upd);
        sqlite3_reset(upd);
        if (rc != SQLITE_DONE) break;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot mark interrupted runs", e);
    return 0;
}

/* ahascope_status(status, host, pid, start): the status a reader should
 * believe — 'running' rows whose writer on this host died read 'interrupted'. */
static void sql_status(sqlite3_context *ctx, int argc, sqlite3_value **v) {
    (void)argc;
    const unsigned char *status = sqlite3_value_text(v[0]), *host = sqlite3_value_text(v[1]);
    char me[256];
    int64_t pid, start;
    store_writer_self(me, sizeof me, &pid, &start);
    if (status && host && !strcmp((const char *)status, "running") && !strcmp((const char *)host, me) &&
        !store_writer_alive(sqlite3_value_int64(v[2]), sqlite3_value_int64(v[3])))
        status = (const unsigned char *)"interrupted";
    if (status) sqlite3_result_text(ctx, (const char *)status, -1, SQLITE_TRANSIENT);
    else sqlite3_result_null(ctx);
}

static void configure(Store *s, int busy_ms) {
    sqlite3_create_function(s->db, "ahascope_status", 4, SQLITE_UTF8, NULL, sql_status, NULL, NULL);
    sqlite3_create_function(s->db, "ahascope_f32", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, store_sql_f32, NULL,
                            NULL);
    sqlite3_busy_timeout(s->db, busy_ms);
    sqlite3_extended_result_codes(s->db, 1);
}

/* The writes a writer's connection makes to any file it opens, so they
 * come only once the file is accepted: a foreign or newer file refused
 * afterwards would be left in WAL mode for good. */
static int begin_writing(Store *s, Err *e) {
    /* WAL: readers never wait for the writer; NORMAL sync: a commit survives
     * the process being killed (not a power cut) without an fsync per step. */
    const char *setup = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;";
    if (sqlite3_exec(s->db, setup, NULL, NULL, NULL) != SQLITE_OK)
        return store_sql_err(s->db, s->path, "cannot open for writing", e);
    return 0;
}

/* Every way store_open fails, but the message: the caller's Err is
 * cleared first so a path that forgot to fill it is caught below. */
static Store *open_checked(const char *path, StoreMode mode, int busy_ms, Err *e) {
    if (!path || !*path) { err_set(e, "no database file given (--db FILE)"); return NULL; }
    char shown[1100];
    store_path_shown(path, shown, sizeof shown);
    /* SQLite would take these as an in-memory database that keeps nothing
     * (exit 0, no rows), or a URI whose parameters could change how the
     * file is opened. */
    if (!strcmp(path, ":memory:") || !strncmp(path, "file:", 5)) {
        err_usage(e, "%s: not a database file name (give a path; ./%s for a file so named)", shown, shown);
        return NULL;
    }
    struct stat st;
    if (mode == STORE_READ && stat(path, &st) != 0) {
        int err = errno;
        /* explain_access looks again, and a writer may have made the file
         * in between: then the first look's cause stands */
        if (explain_access(path, mode, e) == 0) err_set(e, "%s: cannot read the database: %s", shown, strerror(err));
        return NULL;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { err_set(e, "%s: is a directory", shown); return NULL; }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* SQLite would block on a FIFO */
        err_set(e, "%s: not a database (it is %s)", shown, file_kind_name(sniff_kind(path)));
        return NULL;
    }
    if (explain_access(path, mode, e) != 0) return NULL; /* before SQLite tries, so the message says why */
    if (check_header(path, e) != 0) { explain_access(path, mode, e); return NULL; }
    /* before SQLite replays them; readers too, whose advice on a hot journal is to replay it */
    if (store_sidefiles_check(path, mode == STORE_WRITE ? "write" : "read", e) != 0) return NULL;
    Store *s = calloc(1, sizeof *s);
    if (!s) { err_set(e, "%s: out of memory", shown); return NULL; }
    snprintf(s->path, sizeof s->path, "%s", path);
    s->mode = mode;
    s->commit_every = 1;
    int flags = mode == STORE_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = store_db_open(path, flags, &s->db);
    if (rc == SQLITE_MISUSE) {
        err_set(e, "%s: cannot open: this SQLite (%s) lacks the defensive settings ahascope needs", shown,
                sqlite3_libversion());
        goto fail;
    }
    if (rc != SQLITE_OK) {
        store_sql_err(s->db, path, "cannot open", e);
        goto fail;
    }
    configure(s, busy_ms); /* query_only comes after the schema check, which may add TEMP views */
    if (mode == STORE_WRITE && (store_schema_accept(s->db, path, 1, e) != 0 || begin_writing(s, e) != 0)) goto fail;
    if (store_schema_check(s->db, path, mode == STORE_WRITE, e) != 0) goto fail;
    sqlite3_stmt *ver = NULL;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &ver, NULL) == SQLITE_OK && sqlite3_step(ver) == SQLITE_ROW)
        s->version = sqlite3_column_int(ver, 0);
    sqlite3_finalize(ver);
    if (mode == STORE_READ && sqlite3_exec(s->db, "PRAGMA query_only=1", NULL, NULL, NULL) != SQLITE_OK) {
        store_sql_err(s->db, s->path, "cannot open", e);
        goto fail;
    }
    if (mode == STORE_WRITE && recover_runs(s, e) != 0) goto fail;
    return s;
fail:
    explain_access(path, mode, e);
    sqlite3_close(s->db);
    free(s);
    return NULL;
}

/* SQLite's progress handler for store_set_interrupt. */
static int poll_stop(void *ctx) {
    Store *s = ctx;
    return s->stop(s->stop_ctx);
}

void store_interrupt_restore(Store *s) {
    if (s->stop) sqlite3_progress_handler(s->db, 1000, poll_stop, s);
    else sqlite3_progress_handler(s->db, 0, NULL, NULL);
}

void store_set_interrupt(Store *s, int (*stop)(void *ctx), void *ctx) {
    s->stop = stop, s->stop_ctx = ctx;
    store_interrupt_restore(s);
}

Store *store_open(const char *path, StoreMode mode, int busy_ms, Err *e) {
    Err mine;
    Err *out = e ? e : &mine;
    memset(out, 0, sizeof *out);
    Store *s = open_checked(path, mode, busy_ms, out);
    if (!s && !out->msg[0]) {
        char shown[1100];
        store_path_shown(path ? path : "", shown, sizeof shown);
        err_set(out, "%s: cannot open the database (no cause was found; a bug in ahascope)", shown);
    }
    return s;
}

int store_close(Store *s, Err *e) {
    if (!s) return 0;
    int rc = store_writer_release(s, e);
    sqlite3_close(s->db);
    free(s);
    return rc;
}

const char *store_path(const Store *s) { return s->path; }

int store_version(const Store *s) { return s->version; }

int store_set_limit(Store *s, int64_t max_bytes, Err *e) {
    if (max_bytes <= 0) return 0;
    int page = 4096;
    sqlite3_stmt *st;
    if (store_prepare(s, "PRAGMA page_size", &st, e)) return -1;
    if (sqlite3_step(st) == SQLITE_ROW) page = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count=%lld", (long long)(max_bytes / (page > 0 ? page : 4096)));
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) return store_sql_err(s->db, s->path, "cannot set limit", e);
    return 0;
}
