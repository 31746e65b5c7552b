/* sql.c — the base: the hardened connection, binds and NULL columns, `store_sql_err`, `store_path_shown`, `store_now`.
 *
 * The helpers every store file stands on: opening a hardened
 * connection, binding and reading columns with NULL for "not computed",
 * preparing, timestamps, and errors that say what went wrong. It calls
 * nothing else in store/. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/internal.h"

/* path with control characters shown as escapes, so a name holding a
 * newline cannot split the one-line message it appears in. */
void store_path_shown(const char *path, char *out, size_t cap) {
    size_t n = 0, len = strlen(path);
    /* A path too long to open would crowd the cause out of the message:
     * keep its start and its end. */
    const unsigned char *skip = len > 240 ? (const unsigned char *)path + 160 : NULL;
    for (const unsigned char *p = (const unsigned char *)path; *p && n + 5 < cap; p++) {
        if (p == skip) {
            n += (size_t)snprintf(out + n, cap - n, "...");
            p = (const unsigned char *)path + len - 60;
        }
        if (*p == '\n') n += (size_t)snprintf(out + n, cap - n, "\\n");
        else if (*p < 0x20 || *p == 0x7f) n += (size_t)snprintf(out + n, cap - n, "\\x%02x", *p);
        else out[n++] = (char)*p;
    }
    out[n] = 0;
}

/* A side file (PATH-wal, -shm, -journal) SQLite needs but cannot use: one
 * that is not a regular file, or that this process cannot read. Fills
 * why and returns 1 if one is found. */
static int side_file_unusable(const char *path, char *why, size_t cap) {
    static const char *const sfx[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        char side[1100], shown[1200];
        struct stat st;
        snprintf(side, sizeof side, "%s%s", path, sfx[i]);
        if (lstat(side, &st) != 0) continue;
        store_path_shown(side, shown, sizeof shown);
        if (!S_ISREG(st.st_mode)) return snprintf(why, cap, "cannot open %s: it is not a regular file", shown), 1;
        if (access(side, R_OK) != 0) return snprintf(why, cap, "cannot open %s: %s", shown, strerror(errno)), 1;
    }
    return 0;
}

/* How long the connection waits on a lock, read back from SQLite: the
 * message then says what was waited, whoever set it. */
static int busy_wait_ms(sqlite3 *db) {
    sqlite3_stmt *st;
    int ms = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA busy_timeout", -1, &st, NULL) != SQLITE_OK) return 0;
    if (sqlite3_step(st) == SQLITE_ROW) ms = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return ms;
}

/* The plain cause of SQLite's error: code is the extended result code,
 * sys the errno behind an I/O error, msg SQLite's own words. */
static void sql_cause(sqlite3 *db, const char *path, int code, int sys, const char *msg, char *why, size_t cap) {
    int base = code & 0xff;
    int io = base == SQLITE_IOERR || base == SQLITE_CANTOPEN; /* else sys may be left from an earlier call */
    if (base == SQLITE_FULL || (io && (sys == ENOSPC || sys == EDQUOT))) snprintf(why, cap, "disk full");
    else if (base == SQLITE_BUSY || base == SQLITE_LOCKED) {
        int ms = db ? busy_wait_ms(db) : 0;
        snprintf(why, cap, "the database is locked by another process (waited %g s)", ms / 1000.0);
    } else if (code == SQLITE_READONLY_ROLLBACK || code == SQLITE_READONLY_RECOVERY)
        snprintf(why, cap, "hot journal left by a crashed writer: open it once for writing to recover "
                           "(for example sqlite3 FILE 'PRAGMA quick_check'); removing the journal would "
                           "damage the file");
    else if ((base == SQLITE_CANTOPEN || base == SQLITE_IOERR || base == SQLITE_READONLY) &&
             side_file_unusable(path, why, cap))
        ;
    else if (base == SQLITE_NOTADB) snprintf(why, cap, "not an SQLite database");
    else if (base == SQLITE_CORRUPT) snprintf(why, cap, "the database is damaged (%s)", msg);
    else if (base == SQLITE_IOERR && sys) snprintf(why, cap, "%s (%s)", msg, strerror(sys));
    else snprintf(why, cap, "%s", msg);
}

int store_sql_err(sqlite3 *db, const char *path, const char *what, Err *e) {
    /* Captured first: anything run on db afterwards (a ROLLBACK, the
     * busy-timeout read) replaces SQLite's message with "not an error". */
    int code = db ? sqlite3_extended_errcode(db) : SQLITE_NOMEM;
    int sys = db ? sqlite3_system_errno(db) : 0;
    char msg[256], why[1400], shown[1100];
    snprintf(msg, sizeof msg, "%s", db ? sqlite3_errmsg(db) : "out of memory");
    if (code == SQLITE_OK) snprintf(msg, sizeof msg, "failed with no error from SQLite (a bug in ahascope)");
    sql_cause(db, path, code, sys, msg, why, sizeof why);
    store_path_shown(path, shown, sizeof shown);
    if ((code & 0xff) == SQLITE_NOTADB) return err_set(e, "%s: %s", shown, why);
    return err_set(e, "%s: %s: %s", shown, what, why);
}

void store_bind_REAL(sqlite3_stmt *st, int i, double v) {
    if (isnan(v) || isinf(v)) sqlite3_bind_null(st, i);
    else sqlite3_bind_double(st, i, v);
}

void store_bind_INTEGER(sqlite3_stmt *st, int i, long v) {
    if (v < 0) sqlite3_bind_null(st, i);
    else sqlite3_bind_int64(st, i, v);
}

void store_bind_TEXT(sqlite3_stmt *st, int i, const char *v) {
    if (v && *v) sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

void store_bind_LOGIT(sqlite3_stmt *st, int i, double v) {
    if (isnan(v)) sqlite3_bind_null(st, i);
    else sqlite3_bind_double(st, i, v);
}

double store_col_REAL(sqlite3_stmt *st, int i, double missing) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? missing : sqlite3_column_double(st, i);
}

long store_col_INTEGER(sqlite3_stmt *st, int i, long missing) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? missing : (long)sqlite3_column_int64(st, i);
}

void store_col_text(sqlite3_stmt *st, int i, char *out, size_t cap) {
    const unsigned char *v = sqlite3_column_text(st, i);
    snprintf(out, cap, "%s", v ? (const char *)v : "");
}

int store_prepare(Store *s, const char *sql, sqlite3_stmt **st, Err *e) {
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) == SQLITE_OK) return 0;
    return store_sql_err(s->db, s->path, "cannot prepare a statement", e);
}

void store_now(char out[32]) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int store_db_open(const char *path, int flags, sqlite3 **db) {
    /* URIs are on so merge can attach its inputs read-only; a plain path
     * that happens to start with "file:" stays a path. */
    char safe[1100];
    if (!strncmp(path, "file:", 5) && snprintf(safe, sizeof safe, "./%s", path) < (int)sizeof safe) path = safe;
    int rc = sqlite3_open_v2(path, db, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, NULL);
    if (rc != SQLITE_OK) return rc;
    /* What a file could otherwise make this process do: run its triggers,
     * call functions with side effects from its views, load code, hand
     * out a pointer (fts3_tokenizer), or rewrite sqlite_schema. */
    static const int off[] = {SQLITE_DBCONFIG_TRUSTED_SCHEMA, SQLITE_DBCONFIG_ENABLE_TRIGGER,
                              SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        int now = 1;
        if (sqlite3_db_config(*db, off[i], 0, &now) != SQLITE_OK || now != 0) return SQLITE_MISUSE;
    }
    int defensive = 0;
    if (sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, &defensive) != SQLITE_OK || !defensive)
        return SQLITE_MISUSE;
    return SQLITE_OK;
}
