/* test_job.c — the pane jobs' thread runs below the UI thread's priority.
 *
 * The pane jobs' thread (app/tui/job.c) without a terminal:
 * it runs below the UI thread's priority, so on busy cores a key is not
 * answered after a slice of a job's work. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "app/tui/job.h"
#include "store/store.h"
#include "tests/test.h"

/* This thread's nice value, or -100 when it cannot be read. */
static int thread_nice(void) {
    errno = 0;
    int n = getpriority(PRIO_PROCESS, (id_t)gettid());
    return errno ? -100 : n;
}

/* The work: report the job thread's nice value. */
static int report_nice(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    (void)r, (void)st, (void)e;
    fprintf(out, "%d", thread_nice());
    return 0;
}

TEST(job_thread_runs_below_the_ui_threads_priority) {
    const char *db = test_tmp("job_nice.db");
    Err e;
    Store *s = store_open(db, STORE_WRITE, 2000, &e);
    if (!s) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    CHECK_INT(store_close(s, &e), 0);
    int ui = thread_nice();
    CHECK(ui != -100);
    TuiJob job = {0};
    CHECK_INT(tui_job_start(&job, db, 7, report_nice, NULL, 0, NULL, &e), 0);
    TuiJobResult r;
    int taken = 0;
    for (int i = 0; i < 2000 && !(taken = tui_job_take(&job, &r)); i++) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(taken);
    if (taken) {
        CHECK_INT(r.end, TUI_JOB_OK);
        int got = r.text ? atoi(r.text) : -100, want = ui + 5 > 19 ? 19 : ui + 5;
        CHECK_MSG(got == want, "the job's thread at nice %d, the UI's at %d (want %d)", got, ui, want);
        CHECK_INT(thread_nice(), ui); /* the UI thread's own stays */
        tui_job_result_free(&r);
    }
    tui_job_stop(&job);
}
