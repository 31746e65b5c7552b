/* test_tui_norecord.c — a TUI run without a database (--no-record) never names a "run 0".
 *
 * Runs that are not recorded have no ids: a setting change (`T`, a new
 * τ under the router) re-evaluates and says what it ran, not "run 0". */
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

TEST(tui_norecord_setting_change_names_no_run_0) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "norecord", 100, 30, NULL, "--no-record"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "T");
    char *s = tmux_wait(&t, "not recorded: aha", 20);
    CHECK_MSG(s != NULL, "no \"not recorded: aha\" after T");
    CHECK_MSG(!s || !strstr(s, "run 0"), "the screen names run 0:\n%s", s ? s : "");
    free(s);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}
