/* test_tui_conventions.c — the TUI's key conventions end to end in tmux.
 *
 * On stories260K: `n` / `N` step through the matches of a `/` search (and
 * `>` is the next missed global, not the next match); Esc closes the top
 * pane one a press, in the order they are drawn (help over every head over
 * the distributions over the sorted heads over the pattern); `q` over a pane
 * closes it, in a line editor it is text, and on the main screen (the
 * inspector open or not) it quits, as it does at once from the "enlarge" screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test.h"
#include "tests/tmux.h"

/* The position the last search message names ("\"Tim\" at pos 7 (n next,
 * N previous)") on the screen now, or -1. */
static int search_pos(Tmux *t, const char *needle) {
    char *scr = tmux_capture(t), key[64];
    snprintf(key, sizeof key, "\"%s\" at pos ", needle);
    const char *at = scr ? strstr(scr, key) : NULL;
    int pos = at ? atoi(at + strlen(key)) : -1;
    free(scr);
    return pos;
}

/* Wait until the search message names a position other than `not`. */
static int next_search_pos(Tmux *t, const char *needle, int not, double secs) {
    double n = secs * 20 * tmux_patience();
    for (int i = 0; i < n; i++) {
        int pos = search_pos(t, needle);
        if (pos >= 0 && pos != not) return pos;
        usleep(50000);
    }
    return -1;
}

/* The TUI on stories260K at 100x30, stepped to pos 28 ("… a little boy named Tim. Tim loved …"). */
static int open_stepped(Tmux *t, const char *name) {
    if (tmux_open_stories(t, name, 100, 30, NULL, "--db conv.db") != 0) return -1;
    if (!tmux_shows(t, "pos 4/512", 10)) return -1;
    for (int i = 0; i < 24; i++) tmux_keys(t, "Space");
    return tmux_shows(t, "pos 28/512", 20) ? 0 : -1;
}

TEST(tui_n_and_N_step_through_search_matches) {
    TMUX_NEED_TUI();
    Tmux t;
    if (open_stepped(&t, "conv_search")) {
        test_fail(__FILE__, __LINE__, "the TUI never reached pos 28");
        tmux_stop(&t);
        return;
    }
    TMUX_WAIT(&t, "? help  H heads", 2); /* the key bar */
    tmux_keys(&t, "/");
    tmux_keys(&t, "-l \"her\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "(n next, N previous)", 5);
    int first = search_pos(&t, "her");
    CHECK_MSG(first > 0, "no position in the search message");
    tmux_keys(&t, "n");
    int second = next_search_pos(&t, "her", first, 5);
    CHECK_MSG(second > 0 && second != first, "n did not move to the next match: %d then %d", first, second);
    tmux_keys(&t, "N");
    int back = next_search_pos(&t, "her", second, 5);
    CHECK_MSG(back == first, "N did not go back to the previous match: %d, %d, then %d", first, second, back);
    /* > is the compared predictor's next missed global, not a match */
    tmux_keys(&t, "\\>");
    TMUX_WAIT(&t, "missed global", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

TEST(tui_esc_closes_one_pane_a_press_top_first) {
    TMUX_NEED_TUI();
    Tmux t;
    if (open_stepped(&t, "conv_esc")) {
        test_fail(__FILE__, __LINE__, "the TUI never reached pos 28");
        tmux_stop(&t);
        return;
    }
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, "pattern L0 H0", 5);
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by", 5);
    tmux_keys(&t, "d");
    TMUX_WAIT(&t, "distributions", 5);
    TMUX_WAIT(&t, " cells, ", 20); /* counted: an Esc now closes it rather than stopping the count */
    tmux_keys(&t, "E");
    TMUX_WAIT(&t, "every head at the cursor", 5);
    tmux_keys(&t, "?");
    TMUX_WAIT(&t, "move focus between panes", 5);
    /* each Esc uncovers the pane drawn under the one it closed */
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "move focus between panes", 5), "Esc left the help open");
    TMUX_WAIT(&t, "every head at the cursor", 5);
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "every head at the cursor", 5), "Esc left every head open");
    TMUX_WAIT(&t, "distributions", 5);
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "distributions", 5), "Esc closed another pane than the distributions on top");
    TMUX_WAIT(&t, "heads by", 5);
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "heads by", 5), "Esc left the sorted heads open");
    TMUX_WAIT(&t, "pattern L0 H0", 5);
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "pattern L0 H0", 5), "Esc left the pattern open");
    TMUX_WAIT(&t, "timeline", 5);
    /* the inspector is the last thing Esc closes; Esc with nothing open does nothing */
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "inspector", 5);
    tmux_keys(&t, "Escape");
    CHECK_MSG(tmux_gone(&t, "inspector ", 5), "Esc left the inspector open");
    tmux_keys(&t, "Escape m");
    TMUX_WAIT(&t, "router score", 5); /* still running: m changed the metric */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

TEST(tui_q_closes_a_pane_and_quits_only_the_main_screen) {
    TMUX_NEED_TUI();
    Tmux t;
    if (open_stepped(&t, "conv_q")) {
        test_fail(__FILE__, __LINE__, "the TUI never reached pos 28");
        tmux_stop(&t);
        return;
    }
    /* the help: q closes it */
    tmux_keys(&t, "?");
    TMUX_WAIT(&t, "move focus between panes", 5);
    tmux_keys(&t, "q");
    CHECK_MSG(tmux_gone(&t, "move focus between panes", 5), "q left the help open");
    /* the pattern: the status line says q closes it, and it does */
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, "pattern L0 H0", 5);
    TMUX_WAIT(&t, "q close", 5);
    tmux_keys(&t, "q");
    CHECK_MSG(tmux_gone(&t, "pattern L0 H0", 5), "q left the pattern open");
    /* the text pane of a query */
    tmux_keys(&t, ":");
    tmux_keys(&t, "-l \"SELECT 'zz' || 'yy' AS joined\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "zzyy", 10); /* the result, which the editor's line never shows */
    tmux_keys(&t, "q");
    CHECK_MSG(tmux_gone(&t, "zzyy", 5), "q left the text pane open");
    /* a line editor takes q as a character */
    tmux_keys(&t, "/");
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "search: q", 5);
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "search: q", 5));
    /* still running after all those q: m answers */
    tmux_keys(&t, "m");
    TMUX_WAIT(&t, "router score", 5);
    char *scr = tmux_capture(&t);
    CHECK_MSG(scr && !strstr(scr, "EXITED"), "a q over a pane quit");
    free(scr);
    /* the inspector is part of the main screen: q quits with it open */
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "q quit", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

TEST(tui_q_quits_at_once_from_the_enlarge_screen) {
    TMUX_NEED_TUI();
    Tmux t;
    if (open_stepped(&t, "conv_small")) {
        test_fail(__FILE__, __LINE__, "the TUI never reached pos 28");
        tmux_stop(&t);
        return;
    }
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, "pattern L0 H0", 5);
    int st;
    free(test_runf(&st, "tmux -L %s resize-window -x 60 -y 20", t.sock));
    TMUX_WAIT(&t, "enlarge to 80", 10);
    /* no pane is in sight there: q quits, though the pattern is open behind the message */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}
