/* sql.c — the helpers every store file stands on: opening a hardened
 * connection, binding and reading columns with NULL for "not computed",
 * preparing, timestamps, and errors that say what went wrong. It calls
 * nothing else in store/. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store/internal.h"

int store_sql_err(sqlite3 *db, const char *path, const char *what, Err *e) {
    int code = db ? sqlite3_extended_errcode(db) & 0xff : SQLITE_ERROR;
    const char *msg = db ? sqlite3_errmsg(db) : "out of memory";
    if (code == SQLITE_FULL) return err_set(e, "%s: %s: disk full (%s)", path, what, msg);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
        return err_set(e, "%s: %s: the database is locked by another process", path, what);
    if (code == SQLITE_NOTADB) return err_set(e, "%s: not an SQLite database", path);
    if (code == SQLITE_CORRUPT) return err_set(e, "%s: %s: the database is damaged (%s)", path, what, msg);
    return err_set(e, "%s: %s: %s", path, what, msg);
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
