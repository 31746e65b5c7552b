/* query.c — user SQL over a database that it must not be able to change.
 *
 * Three walls: the file is opened SQLITE_OPEN_READONLY with query_only on
 * (store_open), extension loading is off, and an authorizer allows only
 * reading: SELECT, reads, functions other than load_extension, recursive
 * CTEs and the pragmas that merely report. ATTACH is refused too, so SQL
 * cannot reach (or create) another file. A refusal names the statement
 * refused ("DROP TABLE is not allowed").
 *
 * Two ceilings hold for every query: no value longer than
 * STORE_SQL_MAX_LENGTH, no more than STORE_SQL_MAX_HEAP of SQLite memory;
 * past either the query fails cleanly ("string or blob too big", "out of
 * memory") instead of taking the machine's memory.
 *
 * store_query_limited adds what an interactive caller needs: a row cap, a
 * time limit, and a progress handler through which the caller can stop a
 * query that is no longer wanted.
 *
 * Output never grows with the result: CSV and JSON go out row by row (a
 * JSON row at most PRINT_JSON_ROW_MAX_BYTES), and an aligned table stops
 * at print.h's PRINT_TABLE_MAX_ROWS rows (or PRINT_TABLE_MAX_BYTES) with
 * an error that says how to get the rest.
 */
#include <string.h>

#include "engine/clock.h"
#include "store/internal.h"
#include "store/print.h"

typedef struct {
    Store *s;
    char denied[96]; /* what the authorizer refused first, for the message */
    int schema_write; /* a change to sqlite_schema was asked for (see authorize) */
    StoreQueryLimits *lim;
    PrintLimit rows;
    double deadline; /* monotonic seconds; 0: none */
    int timed_out;
} Guard;

static const char *const READ_PRAGMAS[] = {
    "table_info",   "table_xinfo", "index_list",     "index_info", "index_xinfo",    "foreign_key_list",
    "user_version", "application_id", "schema_version", "page_count", "page_size", "freelist_count",
    "integrity_check", "quick_check", "compile_options", "data_version", "collation_list", "function_list",
    "table_list",
};

/* Pragmas that take a table/index name read; the rest must have no value
 * (a value would be an assignment). */
static int pragma_allowed(const char *name, const char *arg) {
    for (size_t i = 0; i < sizeof READ_PRAGMAS / sizeof READ_PRAGMAS[0]; i++)
        if (!strcmp(name, READ_PRAGMAS[i]))
            return i < 6 || !strcmp(name, "integrity_check") || !strcmp(name, "quick_check") || !arg;
    return 0;
}

/* The statement an authorizer action code stands for, as users write it. */
static const char *action_name(int action) {
    switch (action) {
    case SQLITE_INSERT: return "INSERT";
    case SQLITE_UPDATE: return "UPDATE";
    case SQLITE_DELETE: return "DELETE";
    case SQLITE_ATTACH: return "ATTACH";
    case SQLITE_DETACH: return "DETACH";
    case SQLITE_TRANSACTION: return "BEGIN/COMMIT";
    case SQLITE_SAVEPOINT: return "SAVEPOINT";
    case SQLITE_ALTER_TABLE: return "ALTER TABLE";
    case SQLITE_REINDEX: return "REINDEX";
    case SQLITE_ANALYZE: return "ANALYZE";
    case SQLITE_CREATE_INDEX: return "CREATE INDEX";
    case SQLITE_CREATE_TABLE: return "CREATE TABLE";
    case SQLITE_CREATE_TEMP_INDEX: return "CREATE TEMP INDEX";
    case SQLITE_CREATE_TEMP_TABLE: return "CREATE TEMP TABLE";
    case SQLITE_CREATE_TEMP_TRIGGER: return "CREATE TEMP TRIGGER";
    case SQLITE_CREATE_TEMP_VIEW: return "CREATE TEMP VIEW";
    case SQLITE_CREATE_TRIGGER: return "CREATE TRIGGER";
    case SQLITE_CREATE_VIEW: return "CREATE VIEW";
    case SQLITE_CREATE_VTABLE: return "CREATE VIRTUAL TABLE";
    case SQLITE_DROP_INDEX: return "DROP INDEX";
    case SQLITE_DROP_TABLE: return "DROP TABLE";
    case SQLITE_DROP_TEMP_INDEX: return "DROP TEMP INDEX";
    case SQLITE_DROP_TEMP_TABLE: return "DROP TEMP TABLE";
    case SQLITE_DROP_TEMP_TRIGGER: return "DROP TEMP TRIGGER";
    case SQLITE_DROP_TEMP_VIEW: return "DROP TEMP VIEW";
    case SQLITE_DROP_TRIGGER: return "DROP TRIGGER";
    case SQLITE_DROP_VIEW: return "DROP VIEW";
    case SQLITE_DROP_VTABLE: return "DROP VIRTUAL TABLE";
    default: return "this statement";
    }
}

static int is_schema_table(const char *t) {
    return t && (!strcmp(t, "sqlite_master") || !strcmp(t, "sqlite_schema") || !strcmp(t, "sqlite_temp_master") ||
                 !strcmp(t, "sqlite_temp_schema"));
}

/* CREATE and DROP first ask to INSERT into or DELETE from sqlite_schema,
 * then ask for themselves. Refusing that first request would name the
 * wrong statement ("DELETE" for DROP TABLE), so it is let through here and
 * remembered: the CREATE/DROP request that follows is refused by its own
 * name, and a statement that still prepares is refused before it runs
 * (run_statements). */
static int authorize(void *ctx, int action, const char *a1, const char *a2, const char *db, const char *trigger) {
    (void)db, (void)trigger;
    Guard *g = ctx;
    const char *what = NULL;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE: return SQLITE_OK;
    case SQLITE_FUNCTION:
        /* load_extension runs code; fts3_tokenizer hands out a pointer into the library */
        if (a2 && !strcmp(a2, "load_extension")) { what = "load_extension()"; break; }
        if (a2 && !strcmp(a2, "fts3_tokenizer")) { what = "fts3_tokenizer()"; break; }
        return SQLITE_OK;
    case SQLITE_PRAGMA:
        if (a1 && pragma_allowed(a1, a2)) return SQLITE_OK;
        if (!g->denied[0])
            snprintf(g->denied, sizeof g->denied, "PRAGMA %s%s", a1 ? a1 : "?", a2 ? " with a value" : "");
        return SQLITE_DENY;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
        if (is_schema_table(a1)) { g->schema_write = 1; return SQLITE_OK; }
        what = action_name(action);
        break;
    default: what = action_name(action);
    }
    if (!g->denied[0]) snprintf(g->denied, sizeof g->denied, "%s", what);
    return SQLITE_DENY;
}

/* SQLite's progress handler: past the deadline, stop; else ask the caller
 * whether to go on. */
static int progress(void *ctx) {
    Guard *g = ctx;
    if (g->deadline > 0 && clock_now() > g->deadline) return g->timed_out = 1;
    if (g->s->stop && g->s->stop(g->s->stop_ctx)) return 1; /* the store's own interrupt still holds */
    return g->lim && g->lim->interrupt && g->lim->interrupt(g->lim->ctx, g->rows.rows);
}

/* The ceilings every user query runs under. The heap limit is SQLite's,
 * process-wide, and only ever lowered to ours. */
static void limit_user_sql(sqlite3 *db) {
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, STORE_SQL_MAX_LENGTH);
    int64_t heap = sqlite3_hard_heap_limit64(-1);
    if (heap <= 0 || heap > STORE_SQL_MAX_HEAP) sqlite3_hard_heap_limit64(STORE_SQL_MAX_HEAP);
}

/* Prepare the next statement of *tail under the guard. Returns 0 with *st
 * (NULL for whitespace or a comment), or -1 with e naming what was refused. */
static int prepare_guarded(Store *s, Guard *g, const char **tail, sqlite3_stmt **st, Err *e) {
    g->denied[0] = 0, g->schema_write = 0;
    int rc = sqlite3_prepare_v2(s->db, *tail, -1, st, tail);
    if (rc != SQLITE_OK) {
        if (g->denied[0]) return err_set(e, "read-only: %s is not allowed", g->denied);
        return err_set(e, "%s", sqlite3_errmsg(s->db));
    }
    if (*st && (g->schema_write || !sqlite3_stmt_readonly(*st))) {
        sqlite3_finalize(*st);
        *st = NULL;
        return err_set(e, "read-only: only statements that read are allowed");
    }
    return 0;
}

/* The error of a table cut at print.h's bound: what was printed, and how
 * to get every row. */
static int table_full_err(long rows, Err *e) {
    return err_set(e, "table output stops after %ld rows (an aligned table holds at most %d rows or %zu MiB; use --csv or"
                      " --json to stream them all, or LIMIT)", rows, PRINT_TABLE_MAX_ROWS, PRINT_TABLE_MAX_BYTES >> 20);
}

/* Run each statement of sql in turn; the first failure (or the row cap)
 * stops the rest. */
static int run_statements(Store *s, Guard *g, const char *sql, StoreFormat fmt, FILE *out, Err *e) {
    const char *tail = sql;
    int n = 0;
    while (tail && *tail && !g->rows.capped) {
        sqlite3_stmt *st = NULL;
        if (prepare_guarded(s, g, &tail, &st, e)) return -1;
        if (!st) continue;
        if (n++ > 0 && fmt == STORE_FMT_TABLE) fputc('\n', out);
        long before = g->rows.rows;
        int rc = print_result_limited(st, fmt, out, &g->rows);
        sqlite3_finalize(st);
        if (rc == SQLITE_TOOBIG && g->rows.table_full) return table_full_err(g->rows.rows - before, e);
        if (rc == SQLITE_TOOBIG && g->rows.row_big)
            return err_set(e, "row %ld holds more than %zu MiB: a JSON row is built whole (use --csv, which streams "
                           "each value, or select less)", g->rows.rows - before + 1, PRINT_JSON_ROW_MAX_BYTES >> 20);
        if (rc == SQLITE_INTERRUPT && g->timed_out)
            return err_set(e, "stopped after %g s (the time limit)", g->lim->timeout_s);
        if (rc == SQLITE_INTERRUPT) return err_set(e, "interrupted");
        if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "query failed", e);
    }
    if (n == 0) return err_set(e, "no SQL statement given");
    return 0;
}

int store_query(Store *s, const char *sql, StoreFormat fmt, FILE *out, Err *e) {
    return store_query_limited(s, sql, fmt, out, NULL, e);
}

int store_query_limited(Store *s, const char *sql, StoreFormat fmt, FILE *out, StoreQueryLimits *lim, Err *e) {
    if (s->mode != STORE_READ) return err_set(e, "%s: queries need a read-only connection", s->path);
    Guard g = {.s = s, .lim = lim, .rows = {.max_rows = lim ? lim->max_rows : 0}};
    if (lim && lim->timeout_s > 0) g.deadline = clock_now() + lim->timeout_s;
    limit_user_sql(s->db);
    sqlite3_set_authorizer(s->db, authorize, &g);
    if ((lim && (lim->interrupt || g.deadline > 0)) || s->stop) sqlite3_progress_handler(s->db, 1000, progress, &g);
    int rc = run_statements(s, &g, sql, fmt, out, e);
    store_interrupt_restore(s);
    sqlite3_set_authorizer(s->db, NULL, NULL);
    if (lim) lim->rows = g.rows.rows, lim->capped = g.rows.capped, lim->timed_out = g.timed_out;
    return rc;
}

int store_list_runs(Store *s, StoreFormat fmt, FILE *out, Err *e) {
    static const char sql[] =
        "SELECT run_id, ahascope_status(status, writer_host, writer_pid, writer_start) AS status,"
        " n_tokens AS tokens, policy, window, ablate,"
        " (SELECT group_concat(b.pos || CASE WHEN b.note IS NULL THEN '' ELSE ' ' || quote(substr(b.note, 1, 40)) END, ', ') FROM bookmarks b"
        " WHERE b.run_id = runs.run_id) AS bookmarks, created_at, model, prompt FROM runs ORDER BY run_id";
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, e)) return -1;
    PrintLimit lim = {0};
    int rc = print_result_limited(st, fmt, out, &lim);
    sqlite3_finalize(st);
    if (rc == SQLITE_TOOBIG && lim.table_full) return table_full_err(lim.rows, e);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot list runs", e);
    return fmt == STORE_FMT_TABLE ? store_print_writing(s, out, e) : 0;
}
