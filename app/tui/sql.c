/* sql.c — `:` SQL as a pane job (see sql.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/tui/sql.h"
#include "engine/clock.h"
#include "store/store.h"

/* The job's arguments, and what the query thread says back through them. */
typedef struct {
    double time_limit;
    long max_rows;
    long rows;            /* out: rows printed */
    int capped, timed_out; /* out */
    char sql[];
} SqlArg;

/* Polled by SQLite's progress handler on the query thread: publish the
 * row count, and stop on a cancel (the time limit is the store's). */
static int should_stop(void *ctx, long rows) {
    TuiJobRun *r = ctx;
    tui_job_count(r, rows);
    return tui_job_cancelled(r);
}

/* What follows the rows in the pane: why the query stopped, its error, or
 * that the row cap left rows out. */
static void end_note(const SqlArg *a, FILE *f, TuiSqlEnd end, const StoreQueryLimits *lim, const Err *e, double secs) {
    switch (end) {
    case TUI_SQL_CANCELLED: fprintf(f, "cancelled after %.2f s (%ld rows so far)\n", secs, lim->rows); break;
    case TUI_SQL_TIMED_OUT:
        fprintf(f, "stopped by the %.3g s time limit after %ld rows (ahascope tui --sql-timeout SECONDS)\n",
                a->time_limit, lim->rows);
        break;
    case TUI_SQL_FAILED: fprintf(f, "error: %s\n", e->msg[0] ? e->msg : "out of memory"); break;
    case TUI_SQL_OK:
        if (lim->capped)
            fprintf(f, "\n(the first %ld rows only: the row cap; narrow the query or page with LIMIT/OFFSET)\n",
                    lim->rows);
        break;
    }
}

/* The work: run the query, note how it ended, say so through the arguments. */
static int sql_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    SqlArg *a = tui_job_arg(r);
    double t0 = clock_now();
    StoreQueryLimits lim = {.max_rows = a->max_rows, .timeout_s = a->time_limit, .interrupt = should_stop, .ctx = r};
    int rc = store_query_limited(st, a->sql, STORE_FMT_TABLE, out, &lim, e);
    TuiSqlEnd end = rc == 0 ? TUI_SQL_OK
                    : lim.timed_out ? TUI_SQL_TIMED_OUT
                    : tui_job_cancelled(r) ? TUI_SQL_CANCELLED : TUI_SQL_FAILED;
    end_note(a, out, end, &lim, e, clock_now() - t0);
    a->rows = lim.rows, a->capped = lim.capped, a->timed_out = lim.timed_out;
    return rc;
}

int tui_sql_job_start(TuiJob *j, int kind, const char *db, const char *sql, double time_limit, long max_rows,
                      Err *e) {
    size_t n = strlen(sql) + 1;
    SqlArg *a = calloc(1, sizeof *a + n);
    if (!a) return err_set(e, "out of memory");
    a->time_limit = time_limit > 0 ? time_limit : TUI_SQL_TIME_LIMIT;
    a->max_rows = max_rows > 0 ? max_rows : TUI_SQL_MAX_ROWS;
    memcpy(a->sql, sql, n);
    int rc = tui_job_start(j, db, kind, sql_work, a, sizeof *a + n, NULL, e);
    free(a);
    return rc;
}

void tui_sql_result(TuiJobResult *jr, TuiSqlResult *r) {
    const SqlArg *a = jr->arg;
    memset(r, 0, sizeof *r);
    r->sql = strdup(a ? a->sql : "");
    r->rows = a ? a->rows : 0, r->capped = a && a->capped, r->secs = jr->secs;
    r->end = jr->end == TUI_JOB_OK ? TUI_SQL_OK
             : a && a->timed_out ? TUI_SQL_TIMED_OUT
             : jr->end == TUI_JOB_CANCELLED ? TUI_SQL_CANCELLED : TUI_SQL_FAILED;
    if (jr->text && jr->text[0]) r->text = jr->text, jr->text = NULL;
    else if (asprintf(&r->text, "error: %s\n", jr->msg[0] ? jr->msg : "out of memory") < 0) r->text = NULL;
    tui_job_result_free(jr);
}

void tui_sql_result_free(TuiSqlResult *r) {
    free(r->sql);
    free(r->text);
    memset(r, 0, sizeof *r);
}

int tui_sql_start(TuiSql *q, const char *db, const char *sql, Err *e) {
    return tui_sql_job_start(&q->job, 0, db, sql, q->time_limit, q->max_rows, e);
}

int tui_sql_progress(const TuiSql *q, long *rows, double *secs) {
    int kind;
    return tui_job_progress(&q->job, &kind, rows, secs);
}

int tui_sql_cancel(TuiSql *q) { return tui_job_cancel(&q->job); }

int tui_sql_take(TuiSql *q, TuiSqlResult *r) {
    TuiJobResult jr;
    if (!tui_job_take(&q->job, &jr)) return 0;
    tui_sql_result(&jr, r);
    return 1;
}

void tui_sql_stop(TuiSql *q) { tui_job_stop(&q->job); }
