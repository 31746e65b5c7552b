/* query.c — the UI side of the TUI's `:` SQL: started here, run by t->sql
 * on a thread and read-only connection of its own (sql.h), taken each
 * frame into the SQL pane (see tui.h). */
#include "app/tui/state.h"

void tui_run_sql(Tui *t, const char *sql) {
    Err e;
    if (!t->db) { view_set_status(&t->m, "not recording: no database to query"); return; }
    if (tui_sql_start(&t->sql, t->db, sql, &e)) view_set_status(&t->m, "sql: %s", e.msg);
    else view_set_status(&t->m, "sql running\xe2\x80\xa6 (Esc cancels)");
    t->sql_shown = 0;
}

/* The status line's word on a finished query. */
static void sql_status(Tui *t, const TuiSqlResult *r) {
    switch (r->end) {
    case TUI_SQL_OK:
        if (r->capped) view_set_status(&t->m, "sql: first %ld rows only (the row cap), %.2f s", r->rows, r->secs);
        else view_set_status(&t->m, "sql: %ld rows, %.2f s", r->rows, r->secs);
        break;
    case TUI_SQL_CANCELLED: view_set_status(&t->m, "sql cancelled after %.2f s", r->secs); break;
    case TUI_SQL_TIMED_OUT: view_set_status(&t->m, "sql stopped by the %.3g s time limit", t->sql.time_limit); break;
    case TUI_SQL_FAILED: view_set_status(&t->m, "sql failed (see the pane)"); break;
    }
}

/* The progress line is redrawn ten times a second. */
void tui_poll_sql(Tui *t) {
    long rows;
    double secs;
    TuiSqlResult r;
    if (tui_sql_progress(&t->sql, &rows, &secs)) {
        if (secs - t->sql_shown < 0.1) return;
        t->sql_shown = secs;
        view_set_status(&t->m, "sql running\xe2\x80\xa6 %ld rows, %.1f s (Esc cancels)", rows, secs);
        t->dirty = 1;
    } else if (tui_sql_take(&t->sql, &r)) {
        Err e;
        view_set_sql(&t->m, r.sql, r.text ? r.text : "", &e);
        sql_status(t, &r);
        tui_sql_result_free(&r);
        t->dirty = 1;
    }
}
