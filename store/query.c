/* query.c — user SQL over a database that it must not be able to change.
 *
 * Three walls: the file is opened SQLITE_OPEN_READONLY with query_only on
 * (store_open), extension loading is off, and an authorizer allows only
 * reading: SELECT, reads, functions other than load_extension, recursive
 * CTEs and the pragmas that merely report. ATTACH is refused too, so SQL
 * cannot reach (or create) another file.
 */
#include <string.h>

#include "store/internal.h"
#include "store/print.h"

typedef struct {
    char denied[96]; /* what the authorizer refused last, for the message */
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

static int authorize(void *ctx, int action, const char *a1, const char *a2, const char *db, const char *trigger) {
    (void)db, (void)trigger;
    Guard *g = ctx;
    const char *what = NULL;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE: return SQLITE_OK;
    case SQLITE_FUNCTION:
        if (a2 && !strcmp(a2, "load_extension")) { what = "load_extension()"; break; }
        return SQLITE_OK;
    case SQLITE_PRAGMA:
        if (a1 && pragma_allowed(a1, a2)) return SQLITE_OK;
        snprintf(g->denied, sizeof g->denied, "PRAGMA %s%s", a1 ? a1 : "?", a2 ? " with a value" : "");
        return SQLITE_DENY;
    case SQLITE_INSERT: what = "INSERT"; break;
    case SQLITE_UPDATE: what = "UPDATE"; break;
    case SQLITE_DELETE: what = "DELETE"; break;
    case SQLITE_ATTACH: what = "ATTACH"; break;
    case SQLITE_DETACH: what = "DETACH"; break;
    case SQLITE_TRANSACTION: what = "transactions"; break;
    case SQLITE_ALTER_TABLE: what = "ALTER"; break;
    default:
        if (action >= SQLITE_CREATE_INDEX && action <= SQLITE_DROP_VIEW) what = "CREATE/DROP";
        else what = "this statement";
    }
    snprintf(g->denied, sizeof g->denied, "%s", what);
    return SQLITE_DENY;
}

/* Run each statement of sql in turn; the first failure stops the rest. */
static int run_statements(Store *s, Guard *g, const char *sql, StoreFormat fmt, FILE *out, Err *e) {
    const char *tail = sql;
    int n = 0;
    while (tail && *tail) {
        sqlite3_stmt *st = NULL;
        g->denied[0] = 0;
        int rc = sqlite3_prepare_v2(s->db, tail, -1, &st, &tail);
        if (rc != SQLITE_OK) {
            if (g->denied[0]) return err_set(e, "read-only: %s is not allowed", g->denied);
            return err_set(e, "%s", sqlite3_errmsg(s->db));
        }
        if (!st) continue; /* whitespace or a comment */
        if (!sqlite3_stmt_readonly(st)) {
            sqlite3_finalize(st);
            return err_set(e, "read-only: only statements that read are allowed");
        }
        if (n++ > 0 && fmt == STORE_FMT_TABLE) fputc('\n', out);
        rc = print_result(st, fmt, out);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "query failed", e);
    }
    if (n == 0) return err_set(e, "no SQL statement given");
    return 0;
}

int store_query(Store *s, const char *sql, StoreFormat fmt, FILE *out, Err *e) {
    if (s->mode != STORE_READ) return err_set(e, "%s: queries need a read-only connection", s->path);
    Guard g = {{0}};
    sqlite3_limit(s->db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_set_authorizer(s->db, authorize, &g);
    int rc = run_statements(s, &g, sql, fmt, out, e);
    sqlite3_set_authorizer(s->db, NULL, NULL);
    return rc;
}

int store_list_runs(Store *s, StoreFormat fmt, FILE *out, Err *e) {
    static const char sql[] =
        "SELECT run_id, ahascope_status(status, writer_host, writer_pid, writer_start) AS status,"
        " n_tokens AS tokens, policy, window, created_at, model, prompt FROM runs ORDER BY run_id";
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, e)) return -1;
    int rc = print_result(st, fmt, out);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot list runs", e);
    return 0;
}
