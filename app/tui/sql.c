/* sql.c — `:` SQL on a thread of its own (see sql.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/tui/sql.h"
#include "engine/clock.h"
#include "store/store.h"

/* Polled by SQLite's progress handler on the query thread: publish the
 * row count, and stop on a cancel (the time limit is the store's). */
static int should_stop(void *ctx, long rows) {
    TuiSql *q = ctx;
    atomic_store(&q->rows, rows);
    return atomic_load(&q->cancel);
}

/* What follows the rows in the pane: why the query stopped, its error, or
 * that the row cap left rows out. */
static void end_note(const TuiSql *q, FILE *f, TuiSqlEnd end, const StoreQueryLimits *lim, const Err *e,
                     double secs) {
    switch (end) {
    case TUI_SQL_CANCELLED: fprintf(f, "cancelled after %.2f s (%ld rows so far)\n", secs, lim->rows); break;
    case TUI_SQL_TIMED_OUT:
        fprintf(f, "stopped by the %.3g s time limit after %ld rows (ahascope tui --sql-timeout SECONDS)\n",
                q->time_limit, lim->rows);
        break;
    case TUI_SQL_FAILED: fprintf(f, "error: %s\n", e->msg[0] ? e->msg : "out of memory"); break;
    case TUI_SQL_OK:
        if (lim->capped)
            fprintf(f, "\n(the first %ld rows only: the row cap; narrow the query or page with LIMIT/OFFSET)\n",
                    lim->rows);
        break;
    }
}

/* The query thread: open, run, note how it ended, then raise `done`. */
static void *query_main(void *arg) {
    TuiSql *q = arg;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    Err e;
    e.msg[0] = 0;
    StoreQueryLimits lim = {.max_rows = q->max_rows, .timeout_s = q->time_limit, .interrupt = should_stop, .ctx = q};
    Store *st = store_open(q->db, STORE_READ, 500, &e);
    int rc = st && f ? store_query_limited(st, q->res.sql, STORE_FMT_TABLE, f, &lim, &e) : -1;
    store_close(st, NULL);
    double secs = clock_now() - q->t0;
    TuiSqlEnd end = rc == 0 ? TUI_SQL_OK
                    : lim.timed_out ? TUI_SQL_TIMED_OUT
                    : atomic_load(&q->cancel) ? TUI_SQL_CANCELLED : TUI_SQL_FAILED;
    if (f) {
        end_note(q, f, end, &lim, &e, secs);
        fclose(f);
    }
    q->res.text = text;
    q->res.end = end, q->res.rows = lim.rows, q->res.capped = lim.capped, q->res.secs = secs;
    atomic_store(&q->done, 1);
    return NULL;
}

/* Join a finished (or cancelled) thread; its result stays in q->res. */
static void join(TuiSql *q) {
    if (!q->joinable) return;
    pthread_join(q->thread, NULL);
    q->joinable = 0;
}

int tui_sql_start(TuiSql *q, const char *db, const char *sql, Err *e) {
    tui_sql_stop(q);
    if (q->time_limit <= 0) q->time_limit = TUI_SQL_TIME_LIMIT;
    if (q->max_rows <= 0) q->max_rows = TUI_SQL_MAX_ROWS;
    snprintf(q->db, sizeof q->db, "%s", db);
    memset(&q->res, 0, sizeof q->res);
    if (!(q->res.sql = strdup(sql))) return err_set(e, "out of memory");
    atomic_store(&q->cancel, 0);
    atomic_store(&q->done, 0);
    atomic_store(&q->rows, 0);
    q->t0 = clock_now();
    if (pthread_create(&q->thread, NULL, query_main, q) != 0) {
        tui_sql_result_free(&q->res);
        return err_set(e, "cannot start the query thread");
    }
    q->joinable = 1;
    return 0;
}

int tui_sql_progress(const TuiSql *q, long *rows, double *secs) {
    if (!q->joinable || atomic_load(&q->done)) return 0;
    *rows = atomic_load(&q->rows);
    *secs = clock_now() - q->t0;
    return 1;
}

int tui_sql_cancel(TuiSql *q) {
    if (!q->joinable || atomic_load(&q->done)) return 0;
    atomic_store(&q->cancel, 1);
    return 1;
}

int tui_sql_take(TuiSql *q, TuiSqlResult *r) {
    if (!q->joinable || !atomic_load(&q->done)) return 0;
    join(q);
    *r = q->res;
    memset(&q->res, 0, sizeof q->res);
    return 1;
}

void tui_sql_result_free(TuiSqlResult *r) {
    free(r->sql);
    free(r->text);
    memset(r, 0, sizeof *r);
}

void tui_sql_stop(TuiSql *q) {
    if (q->joinable) atomic_store(&q->cancel, 1);
    join(q);
    tui_sql_result_free(&q->res);
}
