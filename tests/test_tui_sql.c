/* test_tui_sql.c — the `:` query thread without a terminal: cancel, time limit, row cap.
 *
 * The TUI's query thread (app/tui/sql.h) without a
 * terminal: cancel latency, the time limit, the row cap, a refusal. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/tui/sql.h"
#include "store/store.h"
#include "test.h"

#define ENDLESS "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "

/* An empty database of ours (the schema only). */
static const char *empty_db(const char *name) {
    const char *db = test_tmp(name);
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    store_close(s, NULL);
    return db;
}

/* Poll like the UI does (every 5 ms) until the result is there, or secs pass. */
static int wait_result(TuiSql *q, TuiSqlResult *r, double secs) {
    for (double end = clock_now() + secs; clock_now() < end; usleep(5000))
        if (tui_sql_take(q, r)) return 1;
    return 0;
}

TEST(tui_sql_cancel_answers_within_100ms) {
    const char *db = empty_db("cancel.db");
    TuiSql q;
    memset(&q, 0, sizeof q);
    Err e;
    CHECK_INT(tui_sql_start(&q, db, ENDLESS "SELECT count(*) FROM c", &e), 0);
    usleep(300000);
    long rows;
    double secs;
    CHECK_INT(tui_sql_progress(&q, &rows, &secs), 1);
    CHECK(secs >= 0.25);
    double t0 = clock_now();
    CHECK_INT(tui_sql_cancel(&q), 1);
    TuiSqlResult r;
    CHECK_INT(wait_result(&q, &r, 2), 1);
    double dt = clock_now() - t0;
    CHECK_MSG(dt < 0.1, "cancel took %.0f ms", dt * 1e3);
    CHECK_INT(r.end, TUI_SQL_CANCELLED);
    CHECK_MSG(r.text && strstr(r.text, "cancelled after"), "%s", r.text);
    tui_sql_result_free(&r);
    tui_sql_stop(&q);
}

TEST(tui_sql_time_limit_row_cap_and_refusal) {
    const char *db = empty_db("limits.db");
    TuiSql q;
    memset(&q, 0, sizeof q);
    q.time_limit = 0.2, q.max_rows = 100;
    Err e;
    TuiSqlResult r;
    CHECK_INT(tui_sql_start(&q, db, ENDLESS "SELECT count(*) FROM c", &e), 0);
    CHECK_INT(wait_result(&q, &r, 3), 1);
    CHECK_INT(r.end, TUI_SQL_TIMED_OUT);
    CHECK_MSG(r.secs < 0.5 && r.text && strstr(r.text, "time limit"), "%.2f s: %s", r.secs, r.text);
    tui_sql_result_free(&r);
    CHECK_INT(tui_sql_start(&q, db, ENDLESS "SELECT x FROM c", &e), 0);
    CHECK_INT(wait_result(&q, &r, 3), 1);
    CHECK_INT(r.end, TUI_SQL_OK);
    CHECK_INT(r.rows, 100);
    CHECK_INT(r.capped, 1);
    CHECK_MSG(r.text && strstr(r.text, "\n100\n") && !strstr(r.text, "\n101\n") && strstr(r.text, "row cap"), "%s",
              r.text);
    tui_sql_result_free(&r);
    CHECK_INT(tui_sql_start(&q, db, "DROP TABLE runs", &e), 0);
    CHECK_INT(wait_result(&q, &r, 3), 1);
    CHECK_INT(r.end, TUI_SQL_FAILED);
    CHECK_MSG(r.text && strstr(r.text, "DROP TABLE is not allowed"), "%s", r.text);
    tui_sql_result_free(&r);
    /* a new query while one runs replaces it */
    CHECK_INT(tui_sql_start(&q, db, ENDLESS "SELECT count(*) FROM c", &e), 0);
    CHECK_INT(tui_sql_start(&q, db, "SELECT 7 AS seven", &e), 0);
    CHECK_INT(wait_result(&q, &r, 3), 1);
    CHECK_MSG(r.end == TUI_SQL_OK && r.text && strstr(r.text, "seven"), "%s", r.text);
    tui_sql_result_free(&r);
    tui_sql_stop(&q);
}
