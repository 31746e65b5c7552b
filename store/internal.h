/* internal.h — what the store's files share and nobody else sees.
 *
 * Grouped by the file that defines each part. Calls go one way, down a
 * ladder (store/README.md): sql.c, liveness.c and sidefile.c call nothing else here;
 * schema.c stands on sql.c; writer.c on those; store.c (open, close) on
 * all of them; the readers and commands on whichever they need. */
#ifndef AHASCOPE_STORE_INTERNAL_H
#define AHASCOPE_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store/store.h"

struct Store {
    sqlite3 *db;
    char path[1024];
    StoreMode mode;
    int commit_every;    /* steps per transaction */
    int pending;         /* steps written in the open transaction */
    int64_t pending_run; /* run those steps belong to */
    int pending_n_tokens; /* n_tokens to record at the next commit */
    sqlite3_stmt *ins_token, *ins_decision, *upd_tokens;
    sqlite3_stmt *ins_top; /* attn_top rows, prepared on the first step that has them */
    int rows_per_insert; /* heads per decisions INSERT (the shape it was prepared for) */
    int (*stop)(void *ctx); /* store_set_interrupt's poll, NULL none */
    void *stop_ctx;
};

/* Put back the progress handler store_set_interrupt installed (or none):
 * a statement that set its own handler calls this when it is done. */
void store_interrupt_restore(Store *s);

/* ", score, gate, …": the per-head columns of `decisions`, in order, from
 * engine/trace.h's field list. */
#define STORE_HEAD_NAME(name, type, missing, sql, show, title, short_name, doc) ", " #name
#define STORE_HEAD_COLUMNS TRACE_HEAD_FIELDS(STORE_HEAD_NAME)

/* ---- sql.c: the base every other store file stands on ---- */

/* Open a connection (sqlite3_open_v2 flags) and harden it: defensive mode,
 * the file's schema untrusted, triggers, extension loading and
 * fts3_tokenizer off. Every connection the store makes goes through here.
 * Returns SQLITE_OK, SQLite's code, or SQLITE_MISUSE when a setting did not
 * take (*db is then open, for the caller to close). */
int store_db_open(const char *path, int flags, sqlite3 **db);

/* Set e to "<path>: <what>: <cause>" and return -1. The cause is SQLite's
 * last error put plainly where a user can act on it (disk full, locked and
 * for how long, a hot journal, an unusable -wal/-shm file); call it before
 * anything else runs on db, a ROLLBACK above all, or the error is lost. */
int store_sql_err(sqlite3 *db, const char *path, const char *what, Err *e);

/* path into out (cap bytes) with newlines and other control characters
 * escaped, for naming a file inside a one-line message. */
void store_path_shown(const char *path, char *out, size_t cap);

/* Prepare sql or set e. */
int store_prepare(Store *s, const char *sql, sqlite3_stmt **st, Err *e);

/* Bind a value to a REAL or INTEGER column: NULL for "not computed" (NaN
 * or ±Inf reals, negative integers), so SQL aggregates skip it. */
void store_bind_REAL(sqlite3_stmt *st, int i, double v);
void store_bind_INTEGER(sqlite3_stmt *st, int i, long v);

/* Bind text, NULL for a missing or empty string. */
void store_bind_TEXT(sqlite3_stmt *st, int i, const char *v);

/* Bind a threshold held as log-odds: NULL for NaN, but ±Inf (θ = 0 or 1)
 * is a real threshold and is kept. */
void store_bind_LOGIT(sqlite3_stmt *st, int i, double v);

/* Read a REAL or INTEGER column; NULL gives missing. */
double store_col_REAL(sqlite3_stmt *st, int i, double missing);
long store_col_INTEGER(sqlite3_stmt *st, int i, long missing);

/* A TEXT column into out (truncated to cap), "" for NULL. */
void store_col_text(sqlite3_stmt *st, int i, char *out, size_t cap);

/* Current UTC time as ISO-8601 into out[32]. */
void store_now(char out[32]);

/* ---- liveness.c: is a run's writer still alive ---- */

/* 1 if the process (pid, start time from /proc) is still alive on this host. */
int store_writer_alive(int64_t pid, int64_t start);

/* This host's name, this process's pid and start time. */
void store_writer_self(char *host, size_t cap, int64_t *pid, int64_t *start);

/* ---- sidefile.c: calls nothing else in store/ ---- */

/* Before a database is opened for writing: 0 when PATH-wal and PATH-journal
 * are absent, empty, not ones SQLite would replay, or consistent with the
 * database's header (store/SCHEMA.md says which rules); -1 with e naming
 * the side file when it was written for another database. */
int store_sidefiles_check(const char *path, Err *e);

/* ---- schema.c and schema_old.c: on sql.c ---- */

/* Read-only: whether the file may be written, as store_schema_check would
 * judge it (ours at a version this build reads or upgrades, schema intact,
 * or with create an empty file), writing nothing. 0, or -1 with e set. */
int store_schema_accept(sqlite3 *db, const char *path, int create, Err *e);

/* Check (and with create, make) the schema; -1 with e set if unusable. */
int store_schema_check(sqlite3 *db, const char *path, int create, Err *e);

/* Check that database `schema` of db ("main", or an attached name) holds
 * exactly the tables, indexes and views this version of ahascope creates
 * for its user_version, and nothing else (no trigger, no extra object):
 * every one compared by type, name, table and stored SQL. Sets *ver.
 * Returns 0, or -1 with e "<path>: tampered schema: …". Reads in one
 * snapshot (its own transaction unless one is open). */
int store_schema_verify(sqlite3 *db, const char *schema, const char *path, int *ver, Err *e);

/* The statements that made a new file at an older schema version, as
 * that version wrote them (schema_old.c); NULL for the current version
 * (schema.c makes it) or one never released. */
const char *store_schema_old(int version);

/* What an older build left of a file created at version `created` when it
 * upgraded it to version `ver`, frozen (schema_old.c); for ver the current
 * version, store_schema_old(created), which the caller upgrades itself. NULL
 * for a pair no build made. */
const char *store_schema_old_upgraded(int created, int ver);

/* ---- writer.c: on sql.c and liveness.c ---- */

/* Commit the steps still pending and drop the writer's prepared
 * statements: what store_close needs of the writer. Returns 0, or -1 with
 * e set if the commit failed (the statements are dropped either way). */
int store_writer_release(Store *s, Err *e);

#endif
