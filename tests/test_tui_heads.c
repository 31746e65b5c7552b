/* test_tui_heads.c — the run rates and `H`'s sorted heads end to end in tmux.
 *
 * The run's head map end to end in tmux: the run rates
 * in the `m` cycle and `H`'s sorted heads, live on stories260K at 80×24
 * (the top rows the same as `query … FROM head_rates` over the recorded
 * run, and the same again in its replay), on a generated 16 × 32-head
 * folder (the last of 512 rows reached and selected), and on a 16 × 32
 * run of 2000 positions being loaded (the pane answers at once, then
 * agrees with the store). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/clock.h"
#include "engine/decide.h"
#include "store/store.h"
#include "tests/store_fixture.h"
#include "tests/test.h"
#include "tests/tmux.h"

enum { ROWS = 5 };

/* One row of the pane: its head and its rate in the sorted column. */
typedef struct {
    int layer, head;
    double rate;
} Row;

/* Press m until the legend names `metric`; 1 when it did. */
static int metric_to(Tmux *t, const char *metric) {
    for (int i = 0; i < 24; i++) {
        for (int k = 0; k < 5; k++) { /* the last m's frame may take a moment */
            char *scr = tmux_capture(t);
            int there = scr && strstr(scr, metric);
            free(scr);
            if (there) return 1;
            struct timespec ts = {0, 60000000L};
            nanosleep(&ts, NULL);
        }
        tmux_keys(t, "m");
    }
    return 0;
}

/* The pane's first n rows, from rank 1 (the first rate column: column 0
 * is the global rate, 1 the oracle's, …). Returns how many were read. */
static int read_rows(Tmux *t, Row *rows, int n, int col) {
    char *scr = tmux_capture(t);
    int got = 0;
    for (int k = 0; scr && k < n; k++) {
        char rank[16];
        snprintf(rank, sizeof rank, "%4d  L", k + 1); /* the selected head's row starts with a mark */
        const char *at = strstr(scr, rank);
        double v[5];
        if (!at || sscanf(at + 6, "L%d H%d %lf%% %lf%% %lf%% %lf%% %lf%%", &rows[k].layer, &rows[k].head, &v[0],
                          &v[1], &v[2], &v[3], &v[4]) < 3 + col)
            break;
        rows[k].rate = v[col];
        got++;
    }
    if (got < n) fprintf(stderr, "%s\n", scr ? scr : "(no screen)");
    free(scr);
    return got;
}

/* The first n heads by head_rates' global_rate over run 1 of db, ties in
 * (layer, head) order, from `ahascope query`. */
static int query_rows(const char *db, Row *rows, int n) {
    int st, got = 0;
    char *out = test_runf(&st,
                          "%s query --db %s --csv \"SELECT layer, head, 100 * global_rate FROM head_rates"
                          " WHERE run_id = 1 ORDER BY global_rate DESC, layer, head LIMIT %d\" 2>&1",
                          test_bin_abs(), db, n);
    const char *line = out ? strchr(out, '\n') : NULL; /* past the header */
    while (st == 0 && line && got < n && sscanf(line + 1, "%d,%d,%lf", &rows[got].layer, &rows[got].head,
                                                &rows[got].rate) == 3) {
        got++;
        line = strchr(line + 1, '\n');
    }
    if (got < n) fprintf(stderr, "query: %s\n", out ? out : "(nothing)");
    free(out);
    return got;
}

/* The screen's rows are the store's, the rate to the 0.1% shown. */
static void same_rows(const Row *screen, const Row *store, int n, const char *what) {
    for (int k = 0; k < n; k++)
        CHECK_MSG(screen[k].layer == store[k].layer && screen[k].head == store[k].head &&
                      screen[k].rate > store[k].rate - 0.051 && screen[k].rate < store[k].rate + 0.051,
                  "%s row %d: L%d H%d %.1f%%, head_rates L%d H%d %.3f%%", what, k + 1, screen[k].layer,
                  screen[k].head, screen[k].rate, store[k].layer, store[k].head, store[k].rate);
}

TEST(tui_heads_at_80x24_match_head_rates) {
    TMUX_NEED_TUI();
    char db[1200], cmd[1200];
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "heads80", 80, 24, NULL, "--db heads.db"), 0);
    snprintf(db, sizeof db, "%s/heads.db", t.dir);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 40; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 44/512", 20);
    /* the rates in the m cycle: the legend says what and over which positions */
    CHECK(metric_to(&t, "run: global rate: 0"));
    TMUX_WAIT(&t, "pos 0-44: share of each head", 2);
    TMUX_WAIT(&t, "heads over pos 0-44 \xc2\xb7 L0 H0", 2); /* the heatmap: rates over the run, not at the cursor */
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by global_rate, highest first \xc2\xb7 pos 0-44", 3);
    TMUX_WAIT(&t, "1:\xe2\x96\xbcglobal", 1); /* the sorted column marked */
    Row live[ROWS], stored[ROWS], replay[ROWS];
    CHECK_INT(read_rows(&t, live, ROWS, 0), ROWS);
    for (int k = 1; k < ROWS; k++) CHECK(live[k].rate <= live[k - 1].rate);
    /* 3 sorts by precision, r reverses; Enter selects the top row's head and closes the pane */
    tmux_keys(&t, "3");
    TMUX_WAIT(&t, "heads by precision, highest first", 2);
    tmux_keys(&t, "r");
    TMUX_WAIT(&t, "heads by precision, lowest first", 2);
    Row low;
    CHECK_INT(read_rows(&t, &low, 1, 2), 1);
    tmux_keys(&t, "Enter");
    char want[64];
    snprintf(want, sizeof want, "L%d H%d selected (precision %.1f%%)", low.layer, low.head, low.rate);
    TMUX_WAIT(&t, want, 3);
    CHECK(tmux_gone(&t, "heads by precision", 2));
    snprintf(want, sizeof want, "\xc2\xb7 L%d H%d ", low.layer, low.head); /* the heatmap's title names it */
    TMUX_WAIT(&t, want, 2);
    /* H opens it again, as it was sorted; Esc closes it and the selection stays */
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by precision, lowest first", 2);
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "heads by precision", 2));
    TMUX_WAIT(&t, want, 2);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
    /* the recorded run's head_rates, ordered the same way */
    CHECK_INT(query_rows(db, stored, ROWS), ROWS);
    same_rows(live, stored, ROWS, "live");
    /* its replay shows the same */
    Tmux r;
    snprintf(cmd, sizeof cmd, "%s tui --replay --db heads.db", test_bin_abs());
    CHECK_INT(tmux_open(&r, "heads80r", t.dir, 80, 24, NULL, cmd, 0), 0);
    TMUX_WAIT(&r, "replay", 10);
    tmux_keys(&r, "H");
    TMUX_WAIT(&r, "heads by global_rate, highest first \xc2\xb7 pos 0-44", 5);
    CHECK_INT(read_rows(&r, replay, ROWS, 0), ROWS);
    same_rows(replay, stored, ROWS, "replay");
    tmux_keys(&r, "q q"); /* H open: the first closes it, the second quits */
    TMUX_WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
}

TEST(tui_heads_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_16x32(&t, "heads16x32", 140, 45, NULL, NULL)) return;
    TMUX_WAIT(&t, "policy", 15);
    for (int i = 0; i < 24; i++) tmux_keys(&t, "Space");
    CHECK_MSG(tmux_shows_pos(&t, 24, 20), "the 24 steps never came");
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by global_rate, highest first", 3);
    TMUX_WAIT(&t, "   1  L", 2);
    /* the last of the 512 rows in one key, and selected with Enter */
    tmux_keys(&t, "End");
    TMUX_WAIT(&t, " 512  L", 2);
    char *scr = tmux_capture(&t);
    const char *last = scr ? strstr(scr, " 512  L") : NULL;
    int l = -1, h = -1;
    CHECK_MSG(last && sscanf(last + 6, "L%d H%d", &l, &h) == 2 && l >= 0 && l < 16 && h >= 0 && h < 32, "%s",
              scr ? scr : "");
    free(scr);
    tmux_keys(&t, "Enter");
    char want[64];
    snprintf(want, sizeof want, "L%d H%d selected (global_rate", l, h);
    TMUX_WAIT(&t, want, 3);
    snprintf(want, sizeof want, "\xc2\xb7 L%d H%d ", l, h);
    TMUX_WAIT(&t, want, 2);
    /* the heatmap under a run rate: the legend says so */
    CHECK(metric_to(&t, "run: gate recall: 0"));
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

enum { LL = 16, HH = 32, LONG_N = 2000 };

/* A 16 × 32-head run of LONG_N made-up positions into db (no model). */
static int long_db(const char *db) {
    Err e;
    test_db_fresh(db);
    Store *s = store_open(db, STORE_WRITE, 2000, &e);
    if (!s) { test_fail(__FILE__, __LINE__, "%s", e.msg); return -1; }
    store_set_commit_every(s, 200);
    StoreRunInfo r;
    test_run_info(&r, LL, HH);
    r.window = 16, r.sinks = 0, r.theta_logit = decide_theta_logit(0.1);
    int rc = store_run_begin(s, &r, &e);
    StepTrace *t = trace_new(LL, HH);
    unsigned seed = 1;
    for (int p = 0; rc == 0 && p < LONG_N; p++) {
        t->pos = p, t->token = p % 50 + 1, t->n_far = p < 16 ? 0 : p - 15, t->n_kv_heads = HH;
        snprintf(t->piece, sizeof t->piece, " w%d", p % 50);
        for (int c = 0; c < LL * HH; c++) {
            seed = seed * 1103515245u + 12345u;
            double u = ((seed >> 8) & 0xffff) / 65536.0;
            t->score[c] = (float)(u * (c % 7 + 1) / 7.0);
            t->gate[c] = t->score[c] > 0.5f;
            t->oracle_logit[c] = (float)(4 * u - 3 + (c % 5) * 0.5);
            t->keys_read[c] = t->gate[c] ? p + 1 : (p < 16 ? p + 1 : 16);
        }
        rc = store_write_step(s, r.run_id, t, NULL, &e);
    }
    trace_free(t);
    if (rc == 0) rc = store_run_end(s, r.run_id, "done", &e);
    if (store_close(s, rc ? NULL : &e) || rc) { test_fail(__FILE__, __LINE__, "%s", e.msg); return -1; }
    return 0;
}

TEST(tui_heads_answer_at_once_while_a_long_run_loads) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    const char *dir = test_tmp("heads_long");
    int st;
    free(test_runf(&st, "mkdir -p %s", dir));
    char db[1100], cmd[2400];
    snprintf(db, sizeof db, "%s/long.db", dir);
    if (long_db(db)) return;
    Tmux t;
    snprintf(cmd, sizeof cmd, "%s tui --replay --db %s --run 1", test_bin_abs(), db);
    CHECK_INT(tmux_open(&t, "heads_long", dir, 140, 45, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "replay", 20);
    /* H while the run may still be coming: the pane shows at once, over what came so far */
    double t0 = clock_now();
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by global_rate, highest first", 5);
    double dt = clock_now() - t0;
    fprintf(stderr, "    H answered in %.0f ms\n", dt * 1e3);
    CHECK_MSG(dt < 2.0 * tmux_patience(), "H took %.1f s", dt);
    TMUX_WAIT(&t, "pos 0-1999", 60);
    Row screen[ROWS], stored[ROWS];
    CHECK_INT(read_rows(&t, screen, ROWS, 0), ROWS);
    CHECK_INT(query_rows(db, stored, ROWS), ROWS);
    same_rows(screen, stored, ROWS, "2000 x 512");
    tmux_keys(&t, "q q"); /* H open: the first closes it, the second quits */
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}
