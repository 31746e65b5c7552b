/* sql.h — the TUI's `:` SQL, run off the UI thread as a pane job (job.h).
 *
 * The query runs on a job's thread over its own read-only connection
 * (store_query_limited), so a slow or endless query never freezes the
 * screen. SQLite's progress handler publishes the rows so far and polls
 * the job's cancel flag and the time limit, so Esc / Ctrl-C stop it within
 * milliseconds; a row cap bounds what an endless result can fill memory
 * with, and the store's length and heap ceilings (the same as `ahascope
 * query`'s) what one value can. The TUI runs it on its one job slot
 * (tui_sql_job_start, tui_sql_result); TuiSql is the same on a slot of its
 * own, for callers that run queries alone.
 */
#ifndef AHASCOPE_TUI_SQL_H
#define AHASCOPE_TUI_SQL_H

#include "app/tui/job.h"
#include "engine/err.h"

#define TUI_SQL_TIME_LIMIT 10.0 /* seconds a query may run by default (--sql-timeout) */
#define TUI_SQL_MAX_ROWS 10000  /* rows kept of a result; the rest is left out, and the result says so */

/* How a query ended. */
typedef enum { TUI_SQL_OK, TUI_SQL_FAILED, TUI_SQL_CANCELLED, TUI_SQL_TIMED_OUT } TuiSqlEnd;

/* A finished query, handed to the UI thread. */
typedef struct {
    char *sql;  /* the query (heap) */
    char *text; /* result table, error or note, ready for the SQL pane (heap) */
    TuiSqlEnd end;
    long rows;
    int capped; /* the row cap was hit */
    double secs;
} TuiSqlResult;

/* Start query sql over the database at db on job slot j, tagged kind
 * (what j runs is cancelled first), within time_limit seconds and max_rows
 * rows (0: TUI_SQL_TIME_LIMIT, TUI_SQL_MAX_ROWS). */
int tui_sql_job_start(TuiJob *j, int kind, const char *db, const char *sql, double time_limit, long max_rows,
                      Err *e);

/* Read a taken job started by tui_sql_job_start as a query's result: move
 * what jr holds into *r (freed with tui_sql_result_free). */
void tui_sql_result(TuiJobResult *jr, TuiSqlResult *r);

/* Free what a query's result holds. */
void tui_sql_result_free(TuiSqlResult *r);

/* A query runner with a job slot of its own. */
typedef struct {
    double time_limit; /* seconds; set before the first tui_sql_start (0: TUI_SQL_TIME_LIMIT) */
    long max_rows;     /* 0: TUI_SQL_MAX_ROWS */
    TuiJob job;
} TuiSql;

/* Start running sql over the database at db. A query still running is
 * cancelled (its result dropped). Fails only if the thread cannot start. */
int tui_sql_start(TuiSql *q, const char *db, const char *sql, Err *e);

/* 1 while a query runs, with the rows so far and seconds since it started. */
int tui_sql_progress(const TuiSql *q, long *rows, double *secs);

/* Ask the running query to stop (no-op when none runs); tui_sql_take then
 * hands over a TUI_SQL_CANCELLED result. Returns 1 if one was running. */
int tui_sql_cancel(TuiSql *q);

/* If a query has finished, move its result into *r (the caller frees it
 * with tui_sql_result_free) and return 1; else 0. */
int tui_sql_take(TuiSql *q, TuiSqlResult *r);

/* Cancel any running query and wait for its thread (at exit). */
void tui_sql_stop(TuiSql *q);

#endif
