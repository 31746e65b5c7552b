/* test_tui_dist.c — `d` and the why block end to end in tmux.
 *
 * The distributions pane (`d`) and the why block end to
 * end in tmux: live on stories260K at 80×24 (the selected head, `a` pooled,
 * the router's terms above them, Esc closes) and at 250×70 in the
 * inspector; on a generated 16 × 32-head folder with random routers; its
 * AUC on a replay equal to the one `eval` reports for the same run; and a
 * long recorded run counted off the UI thread with its progress and Esc;
 * a why recomputed a chunk at a time, steps between its chunks, Esc stopping it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/store_fixture.h"
#include "tests/test.h"
#include "tests/tmux.h"

TEST(tui_dist_and_why_live_at_80x24) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "dist80", 80, 24, NULL, "--db dist.db"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 30; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 34/512", 10);
    tmux_go_to(&t, "L1 H2");
    TMUX_WAIT(&t, "L1 H2", 3);
    tmux_keys(&t, "d");
    TMUX_WAIT(&t, "distributions \xc2\xb7 L1 H2 \xc2\xb7 35 positions", 10);
    TMUX_WAIT(&t, "calibration: oracle global", 2);
    TMUX_WAIT(&t, "ROC \xc2\xb7 AUC 0.", 2); /* at 80 columns the short form, the AUC whole */
    TMUX_WAIT(&t, "x\xc2\xb7w by dim: d", 5);  /* what drove the router at the cursor, live */
    TMUX_WAIT(&t, "router logit ", 1);
    TMUX_WAIT(&t, "over 64 dims", 1);
    TMUX_WAIT(&t, "oracle_err ", 1);
    tmux_keys(&t, "a");
    TMUX_WAIT(&t, "all 40 heads pooled \xc2\xb7 35 positions", 10);
    TMUX_WAIT(&t, "AUC 0.", 2);
    tmux_keys(&t, "a");
    /* the title counts the positions once the count is done; Esc during it stops the count instead */
    TMUX_WAIT(&t, "distributions \xc2\xb7 L1 H2 \xc2\xb7 35 positions", 10);
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "distributions", 3), "Esc left the pane open");
    tmux_keys(&t, "d");                      /* d opens, d closes */
    TMUX_WAIT(&t, "distributions", 3);
    tmux_keys(&t, "d");
    CHECK_MSG(tmux_gone(&t, "distributions", 3), "d left the pane open");
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* The why block's router line on screen (malloc'd), or NULL. */
static char *router_line(Tmux *t) {
    char *scr = tmux_capture(t), *at = scr ? strstr(scr, "router logit ") : NULL, *line = NULL;
    if (at) {
        size_t n = strcspn(at, "\n");
        char *end = strstr(at, " dims");
        if (end && (size_t)(end - at) < n) n = (size_t)(end - at) + 5;
        if ((line = malloc(n + 1))) memcpy(line, at, n), line[n] = 0;
    }
    free(scr);
    return line;
}

/* With room, the inspector's band holds the block under the far positions;
 * a model too large to keep every router input (the knob pretends so) gets
 * the same line from a recount. */
TEST(tui_why_in_the_inspector_at_250x70) {
    TMUX_NEED_TUI();
    char *line[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        Tmux r;
        char flags[32];
        snprintf(flags, sizeof flags, "--db why%d.db", k);
        const char *env = k ? "AHASCOPE_TEST_WHY_KEEP_MB=0" : NULL;
        CHECK_INT(tmux_open_stories(&r, k ? "why250r" : "why250", 250, 70, env, flags), 0);
        TMUX_WAIT(&r, "pos 4/512", 10);
        for (int i = 0; i < 30; i++) tmux_keys(&r, "Space");
        TMUX_WAIT(&r, "pos 34/512", 10);
        tmux_keys(&r, "Enter");
        TMUX_WAIT(&r, "heaviest far positions:", 5);
        TMUX_WAIT(&r, "x\xc2\xb7w by dim: d", 5);
        TMUX_WAIT(&r, "oracle_err 0.", 2);
        line[k] = router_line(&r);
        if (k == 0) {
            tmux_keys(&r, "[");              /* another position: explained anew */
            TMUX_WAIT(&r, "@ pos 33 ", 3);
            TMUX_WAIT(&r, "x\xc2\xb7w by dim: d", 5);
            tmux_keys(&r, "]");
            TMUX_WAIT(&r, "@ pos 34 ", 3);
            tmux_keys(&r, "?");              /* the key is in the help, which shows whole here */
            TMUX_WAIT(&r, "distributions: score vs oracle (a: all heads)", 3);
            tmux_keys(&r, "x");
        }
        tmux_keys(&r, "q");
        TMUX_WAIT(&r, "EXITED 0", 5);
        tmux_stop(&r);
    }
    CHECK_MSG(line[0] && line[1] && !strcmp(line[0], line[1]), "kept: %s / recomputed: %s", line[0] ? line[0] : "-",
              line[1] ? line[1] : "-");
    free(line[0]), free(line[1]);
}

TEST(tui_dist_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_16x32(&t, "dist16x32", 80, 24, NULL, "--routers random")) return;
    TMUX_WAIT(&t, "aha", 15);
    for (int i = 0; i < 20; i++) tmux_keys(&t, "Space");
    tmux_go_to(&t, "L15 H31");
    TMUX_WAIT(&t, "L15 H31", 5);
    tmux_keys(&t, "d");
    TMUX_WAIT(&t, "distributions \xc2\xb7 L15 H31", 5);
    TMUX_WAIT(&t, "over 256 dims", 10);        /* the router's input is the model's width */
    tmux_keys(&t, "a");
    TMUX_WAIT(&t, "all 512 heads pooled", 10);
    TMUX_WAIT(&t, "calibration: oracle global", 5);
    tmux_keys(&t, "q q"); /* the first closes the pane, the second quits */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* The pane's AUC over every head of a recorded evaluation is eval's own. */
TEST(tui_dist_auc_equals_evals_for_the_same_run) {
    TMUX_NEED_TUI();
    const char *dir = test_tmp("distauc");
    int st;
    char routers[4096];
    if (!realpath("engine/routers/stories260K_w16.safetensors", routers)) {
        CHECK_MSG(0, "no shipped routers");
        return;
    }
    char *out = test_runf(&st,
                          "mkdir -p %s && cd %s && rm -f e.db && %s eval --model %s --routers %s --self 1 --seq-len 96 "
                          "--db e.db --json 2>/dev/null",
                          dir, dir, test_bin_abs(), test_stories_model(), routers);
    const char *auc = out ? strstr(out, "\"auc\": ") : NULL;
    double want = auc ? atof(auc + 7) : -1;
    CHECK_MSG(st == 0 && want > 0 && want < 1, "eval: %s", out ? out : "");
    free(out);
    if (!(want > 0)) return;
    Tmux t;
    char cmd[1200], text[64];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db e.db", test_bin_abs());
    tmux_open(&t, "distauc", dir, 120, 40, NULL, cmd, 0);
    TMUX_WAIT(&t, "replay", 10);
    tmux_keys(&t, "d");
    tmux_keys(&t, "a");
    TMUX_WAIT(&t, "96 positions \xc2\xb7 3200 cells, ", 10);
    snprintf(text, sizeof text, " global \xc2\xb7 AUC %.3f", want);
    TMUX_WAIT(&t, text, 2);
    TMUX_WAIT(&t, "live sessions only", 2);  /* a replay has no router input to split */
    tmux_keys(&t, "q q"); /* the first closes the pane, the second quits */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* A long run of 16 × 32 heads: the count shows its progress in the pane
 * while keys are answered, and Esc stops it (unless it ends first). */
TEST(tui_dist_counts_a_long_run_off_the_ui_thread) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    const char *dir = test_tmp("distlong");
    int st;
    free(test_runf(&st, "mkdir -p %s", dir));
    char db[1100], cmd[2400];
    snprintf(db, sizeof db, "%s/long.db", dir);
    test_db_record_every(db, 16, 32, 3000, 100); /* the pane reads rows, not how they were committed */
    Tmux t;
    snprintf(cmd, sizeof cmd, "%s tui --replay --db %s", test_bin_abs(), db);
    CHECK_INT(tmux_open(&t, "distlong", dir, 140, 45, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "replay of run 1 (done)", 60);
    tmux_keys(&t, "d");
    tmux_keys(&t, "a");
    char *scr = tmux_wait(&t, "counting: ", 5);
    int counting = scr && strstr(scr, "of 3000 positions (Esc stops)");
    free(scr);
    if (counting) {
        tmux_keys(&t, "?");                  /* keys answered meanwhile */
        TMUX_WAIT(&t, "this help", 2);
        tmux_keys(&t, "x");
        tmux_keys(&t, "Escape");
        char *s = tmux_wait(&t, "count stopped at", 5);
        /* or the count ended between the look and the key */
        CHECK_MSG(s != NULL || tmux_shows(&t, "3000 positions \xc2\xb7 0 cells", 1), "Esc did not stop the count");
        free(s);
        tmux_keys(&t, "a");                  /* counts again, to its end */
    } else fprintf(stderr, "    note: the count ended before it could be seen\n");
    TMUX_WAIT(&t, "3000 positions \xc2\xb7 ", 60); /* the title's count, not the status line's */
    TMUX_WAIT(&t, "no cell has both a router score and an oracle label", 2); /* the fixture records no oracle */
    tmux_keys(&t, "q q"); /* the first closes the pane, the second quits */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* The header's "pos N/" now, -1 if it shows none. */
static int header_pos_now(Tmux *t) {
    char *scr = tmux_capture(t);
    const char *at = scr ? strstr(scr, "pos ") : NULL;
    int pos = -1;
    while (at && sscanf(at, "pos %d/", &pos) != 1) at = strstr(at + 4, "pos ");
    if (!at) pos = -1;
    free(scr);
    return pos;
}

/* The position the why line's recompute feeds up to, once it shows
 * " of N positions fed" and the header agrees (pos N-1): a step under way
 * when p was pressed may land late and ask anew. -1 after secs. */
static int fed_pos(Tmux *t, double secs) {
    for (double waited = 0; waited < secs; waited += 0.2) {
        char *scr = tmux_capture(t);
        const char *at = scr ? strstr(scr, " positions fed (Esc stops)") : NULL;
        int n = -1;
        if (at) {
            const char *p = at;
            while (p > scr && p[-1] >= '0' && p[-1] <= '9') p--;
            if (p < at && p - scr >= 3 && !strncmp(p - 3, "of ", 3)) n = atoi(p);
        }
        free(scr);
        if (n > 0 && header_pos_now(t) == n - 1) return n - 1;
        usleep(200000);
    }
    return -1;
}

/* A model too large to keep every router input (the knob pretends so)
 * recomputes a why by feeding the tokens up to the position afresh: a chunk
 * at a time (the test knob makes each take 3 s more, so the waits below
 * tell "after the chunk under way" from "after the last" on a loaded
 * machine), its progress in the why line, the steps taking turns with its
 * chunks, and Esc stopping it. */
TEST(tui_why_recompute_takes_turns_with_steps_and_esc_stops_it) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "whyfeed", 80, 24, "AHASCOPE_TEST_WHY_KEEP_MB=0 AHASCOPE_TEST_PREFILL_DELAY_MS=3000",
                                "--steps 480 --no-record"),
              0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    /* play past two chunks of 128 positions, at 50 steps a second (two `+` from 10): 6 s, not 30,
     * and the 180 steps left before the end of --steps still 3.6 s of margin for the pause */
    tmux_keys(&t, "+ +");
    tmux_keys(&t, "p");
    CHECK(tmux_shows_pos(&t, 300, 60));
    tmux_keys(&t, "p");
    TMUX_WAIT(&t, "paused", 5);
    tmux_keys(&t, "d");
    TMUX_WAIT(&t, "distributions \xc2\xb7 L0 H0", 5);
    int pos = fed_pos(&t, 10);
    CHECK_MSG(pos >= 300, "the recompute fed up to %d", pos);
    if (pos < 300) { tmux_stop(&t); return; }
    /* three chunks of 3 s: the step comes after the one under way (< 3 s), not after the last (> 6 s) */
    tmux_keys(&t, "Space");
    CHECK_MSG(tmux_shows_pos(&t, pos + 1, 5.0), "the step waited for the recompute");
    char fed[64];
    snprintf(fed, sizeof fed, " of %d positions fed (Esc stops)", pos + 2); /* the cursor followed: asked anew */
    TMUX_WAIT(&t, fed, 10);
    tmux_keys(&t, "Escape");
    TMUX_WAIT(&t, "stopped at ", 8);
    TMUX_WAIT(&t, "its recompute was stopped", 8);
    TMUX_WAIT(&t, "distributions \xc2\xb7 L0 H0", 1); /* the first Esc stopped it; the pane stays */
    tmux_keys(&t, "[");                              /* another position asks again, and gets its answer */
    TMUX_WAIT(&t, "x\xc2\xb7w by dim: d", 40);
    tmux_keys(&t, "q q"); /* the first closes the pane, the second quits */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}
