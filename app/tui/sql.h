/* sql.h — the TUI's `:` SQL, run off the UI thread.
 *
 * One query at a time runs on a thread of its own, over its own read-only
 * connection (store_open STORE_READ, store_query_limited), so a slow or
 * endless query never freezes the screen. SQLite's progress handler polls
 * a cancel flag and the time limit, so Esc / Ctrl-C stop it within
 * milliseconds; a row cap bounds what an endless result can fill memory
 * with, and the store's length and heap ceilings (the same as `ahascope
 * query`'s) what one value can. The UI thread polls each frame (tui_sql_progress, tui_sql_take);
 * the query thread touches nothing of the UI.
 */
#ifndef AHASCOPE_TUI_SQL_H
#define AHASCOPE_TUI_SQL_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/err.h"

#define TUI_SQL_TIME_LIMIT 10.0 /* seconds a query may run by default (--sql-timeout) */
#define TUI_SQL_MAX_ROWS 10000  /* rows kept of a result; the rest is left out, and the result says so */

/* How a query ended. */
typedef enum { TUI_SQL_OK, TUI_SQL_FAILED, TUI_SQL_CANCELLED, TUI_SQL_TIMED_OUT } TuiSqlEnd;

/* A finished query, handed to the UI thread (tui_sql_take). */
typedef struct {
    char *sql;  /* the query (heap) */
    char *text; /* result table, error or note, ready for the SQL pane (heap) */
    TuiSqlEnd end;
    long rows;
    int capped; /* the row cap was hit */
    double secs;
} TuiSqlResult;

typedef struct {
    double time_limit; /* seconds; set before the first tui_sql_start (0: TUI_SQL_TIME_LIMIT) */
    long max_rows;     /* 0: TUI_SQL_MAX_ROWS */

    pthread_t thread;
    int joinable;           /* a thread was started and not yet joined (UI thread only) */
    atomic_int cancel;      /* UI → query thread: stop */
    atomic_int done;        /* query thread → UI: res is complete */
    atomic_long rows;       /* rows so far, for the progress line */
    double t0;              /* monotonic seconds at the start */
    char db[1024];
    TuiSqlResult res;       /* written by the query thread until done */
} TuiSql;

/* Start running sql over the database at db. A query still running is
 * cancelled and joined first (its result dropped). Fails only if the thread
 * cannot start. */
int tui_sql_start(TuiSql *q, const char *db, const char *sql, Err *e);

/* 1 while a query runs, with the rows so far and seconds since it started. */
int tui_sql_progress(const TuiSql *q, long *rows, double *secs);

/* Ask the running query to stop (no-op when none runs); tui_sql_take then
 * hands over a TUI_SQL_CANCELLED result. Returns 1 if one was running. */
int tui_sql_cancel(TuiSql *q);

/* If a query has finished, join its thread, move its result into *r (the
 * caller frees it with tui_sql_result_free) and return 1; else 0. */
int tui_sql_take(TuiSql *q, TuiSqlResult *r);

/* Free what a taken result holds. */
void tui_sql_result_free(TuiSqlResult *r);

/* Cancel and join any running query and free its result (at exit). */
void tui_sql_stop(TuiSql *q);

#endif
