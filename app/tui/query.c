/* query.c — the `:` query's start and its result.
 *
 * The UI side of the TUI's `:` SQL: started here as a job on
 * the TUI's job slot (sql.h, job.h), its result taken into the SQL pane
 * (see README.md). */
#include "app/tui/state.h"

void tui_run_sql(Tui *t, const char *sql) {
    Err e;
    if (!t->db) { view_set_status(&t->m, "not recording: no database to query"); return; }
    if (tui_sql_job_start(&t->job, TUI_PANE_SQL, t->db, sql, t->sql_timeout, 0, &e))
        view_set_status(&t->m, "sql: %s", e.msg);
    else view_set_progress(&t->m, "sql running\xe2\x80\xa6 (Esc cancels)");
    t->job_shown = 0;
}

/* The status line's word on a finished query. */
static void sql_status(Tui *t, const TuiSqlResult *r) {
    switch (r->end) {
    case TUI_SQL_OK:
        if (r->capped) view_set_status(&t->m, "sql: first %ld rows only (the row cap), %.2f s", r->rows, r->secs);
        else view_set_status(&t->m, "sql: %ld rows, %.2f s", r->rows, r->secs);
        break;
    case TUI_SQL_CANCELLED: view_set_status(&t->m, "sql cancelled after %.2f s", r->secs); break;
    case TUI_SQL_TIMED_OUT: {
        double limit = t->sql_timeout > 0 ? t->sql_timeout : TUI_SQL_TIME_LIMIT;
        view_set_status(&t->m, "sql stopped by the %.3g s time limit", limit);
        break;
    }
    case TUI_SQL_FAILED: view_set_status(&t->m, "sql failed (see the pane)"); break;
    }
}

void tui_sql_done(Tui *t, TuiJobResult *jr) {
    TuiSqlResult r;
    Err e;
    tui_sql_result(jr, &r);
    view_clear_progress(&t->m);
    view_set_sql(&t->m, r.sql ? r.sql : "", r.text ? r.text : "", &e);
    sql_status(t, &r);
    tui_sql_result_free(&r);
}
