/* test_tui_pattern.c — `G` and `A` end to end in tmux.
 *
 * The microscope keys end to end in tmux: `G` goes to
 * a head, a position or a token's text and refuses what it cannot, `A`
 * opens the selected head's attention pattern (zoom, Esc), live on
 * stories260K at 80×24 and on a generated 16 × 32-head folder, and in a
 * replay from the recorded far keys; a terminal curses cannot drive is
 * refused with one line and status 1; `bench --tui-view pattern`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test.h"
#include "tests/tmux.h"

/* The TUI on stories260K (greedy), recording into pat.db in its directory. */
static int start(Tmux *t, const char *name, int cols, int rows, const char *env) {
    return tmux_open_stories(t, name, cols, rows, env, "--db pat.db");
}

TEST(tui_goto_and_pattern_at_80x24) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(start(&t, "goto80", 80, 24, NULL), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 12; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 16/512", 10);
    tmux_go_to(&t, "L4 H7");
    TMUX_WAIT(&t, "L4 H7", 3);                 /* the heatmap's title names the head so */
    tmux_go_to(&t, "9.9");                          /* refused: nothing moves */
    TMUX_WAIT(&t, "no head L9 H9", 3);
    char *scr = tmux_capture(&t);
    CHECK_MSG(scr && strstr(scr, "L4 H7"), "selection moved:\n%s", scr ? scr : "");
    free(scr);
    tmux_go_to(&t, "pos 3");
    TMUX_WAIT(&t, "@ pos 3 ", 3);
    tmux_go_to(&t, "LITTLE GIRL");                  /* text across tokens, any case */
    TMUX_WAIT(&t, "\"LITTLE GIRL\" at pos", 3);
    tmux_go_to(&t, "pos x");
    TMUX_WAIT(&t, "is not a position", 3);
    /* Enter on a row of the `:` pane selects the head and position it names */
    tmux_keys(&t, ":");
    tmux_keys(&t, "-l \"SELECT 3 AS layer, 5 AS head, 7 AS pos\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "layer  head  pos", 5);
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "L3 H5 @ pos 7", 3);
    tmux_keys(&t, "Escape");
    tmux_go_to(&t, "L1 H2");
    TMUX_WAIT(&t, "L1 H2", 3);
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, "pattern L1 H2", 5);
    TMUX_WAIT(&t, "1 cell = ", 1);
    TMUX_WAIT(&t, "heaviest keys: 1:", 5);      /* the cursor row, exact, its keys named */
    tmux_keys(&t, "+");
    TMUX_WAIT(&t, "zoom 2x", 3);
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "pattern L1 H2", 3), "Esc left the pattern open");
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    /* the replay: the pattern from the recorded far keys, said to be approximate */
    Tmux r;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db pat.db", test_bin_abs());
    tmux_open(&r, "goto80r", t.dir, 100, 30, NULL, cmd, 0);
    TMUX_WAIT(&r, "replay", 10);
    tmux_go_to(&r, "0.0");
    tmux_keys(&r, "A");
    TMUX_WAIT(&r, "pattern L0 H0", 5);
    TMUX_WAIT(&r, "approximate", 2);
    tmux_keys(&r, "q q"); /* the pattern open: the first closes it, the second quits */
    TMUX_WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
}

TEST(tui_goto_and_pattern_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_16x32(&t, "pat16x32", 140, 45, NULL, NULL)) return;
    TMUX_WAIT(&t, "policy", 15);
    for (int i = 0; i < 20; i++) tmux_keys(&t, "Space");
    tmux_go_to(&t, "L15 H31");                     /* the far corner, 46 arrow presses away */
    TMUX_WAIT(&t, "L15 H31", 5);
    tmux_go_to(&t, "16.0");
    TMUX_WAIT(&t, "no head L16 H0 (the model has L0-L15, H0-H31)", 3);
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, "pattern L15 H31", 5);
    TMUX_WAIT(&t, "heaviest keys: 1:", 10);
    tmux_keys(&t, "A");                       /* A again closes it */
    CHECK_MSG(tmux_gone(&t, "pattern L15 H31", 3), "A left the pattern open");
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

TEST(tui_refuses_a_terminal_curses_cannot_drive) {
    TMUX_NEED_TUI();
    static const char *terms[][2] = {
        {"TERM=dumb", "TERM=dumb cannot move the cursor"},
        {"TERM=no-such-terminal", "TERM=no-such-terminal is a terminal curses does not know"},
    };
    for (int i = 0; i < 2; i++) {
        Tmux t;
        CHECK_INT(start(&t, i ? "unknownterm" : "dumbterm", 250, 24, terms[i][0]), 0); /* wide: the line unwrapped */
        char *scr = tmux_wait(&t, "EXITED", 10);
        const char *line = scr ? strstr(scr, "ahascope tui: ") : NULL;
        CHECK_MSG(line && strstr(line, terms[i][1]) && strstr(line, "EXITED 1"), "%s", scr ? scr : "(no screen)");
        /* one line: the message, then the exit status on the next */
        const char *nl = line ? strchr(line, '\n') : NULL;
        CHECK_MSG(nl && !strncmp(nl + 1, "EXITED 1", 8), "%s", scr ? scr : "");
        free(scr);
        tmux_stop(&t);
    }
}

TEST(bench_tui_view_pattern_reports_the_frame) {
    int st;
    char *out = test_runf(&st, "%s bench --tui-heads 8x8 --tui-size 120x40 --tui-view pattern --runs 1 --json 2>&1",
                          test_bin_abs());
    CHECK_MSG(st == 0 && out && strstr(out, "\"view\": \"pattern\"") && strstr(out, "\"frame_ms\": "), "%s",
              out ? out : "");
    free(out);
    out = test_runf(&st, "%s bench --tui-view heatmap 2>&1", test_bin_abs());
    CHECK_MSG(st == 2 && out && strstr(out, "--tui-view: expected main, pattern or allheads (got 'heatmap')"), "%s",
              out ? out : "");
    free(out);
}
