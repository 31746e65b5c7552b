/* test_tui_bookmarks.c — `b` and `C` keep bookmarks and their notes in the database beside the run.
 *
 * On stories260K: two bookmarks set in a live run, one given a note with
 * `C`, the session quit; the bookmarks table holds both, `ahascope runs`
 * lists them, and `tui --replay` shows them again (the legend's glyph, and
 * `'` jumping between them), where a new one stays on screen only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

TEST(tui_bookmarks_are_kept_at_exit_and_shown_on_replay) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "bookmarks", 120, 40, NULL, "--policy full"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "Space Space Space");
    TMUX_WAIT(&t, "pos 7/512", 5);
    tmux_keys(&t, "b");
    TMUX_WAIT(&t, "bookmark at pos 7", 5);
    tmux_keys(&t, "[ [");
    TMUX_WAIT(&t, "pos 5/512", 5);
    tmux_keys(&t, "C");
    TMUX_WAIT(&t, " note: ", 5); /* the line editor, labelled */
    tmux_keys(&t, "-l \"the dragon\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "note kept for the bookmark at pos 5: the dragon", 5);
    TMUX_QUIT(&t, 10); /* q closes the pane on top first */
    int st;
    char *r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT group_concat(run_id || ':' || pos || ':' ||"
                             " COALESCE(note, '-'), ' ') FROM bookmarks\"", test_bin_abs(), t.dir);
    CHECK_MSG(st == 0 && r && strstr(r, "1:5:the dragon 1:7:-"), "bookmarks: %s", r ? r : "");
    free(r);
    r = test_runf(&st, "%s runs --db %s/ahascope.db", test_bin_abs(), t.dir);
    CHECK_MSG(st == 0 && r && strstr(r, "5 'the dragon', 7"), "runs: %s", r ? r : "");
    free(r);
    tmux_stop(&t);

    Tmux v;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db ahascope.db", test_bin_abs());
    CHECK_INT(tmux_open(&v, "bookmarks_replay", t.dir, 120, 40, NULL, cmd, 0), 0);
    TMUX_WAIT(&v, "replay of run 1", 20);
    TMUX_WAIT(&v, "\xe2\x98\x85 bookmark", 5); /* the legend names the glyph of a mark on screen */
    tmux_keys(&v, "Home");
    tmux_keys(&v, "\"'\""); /* the key ' */
    TMUX_WAIT(&v, "bookmark 1 of 2: pos 5", 5);
    tmux_keys(&v, "\"'\"");
    TMUX_WAIT(&v, "bookmark 2 of 2: pos 7", 5);
    tmux_keys(&v, "]");
    tmux_keys(&v, "b");
    TMUX_WAIT(&v, "(on screen only: a replay writes nothing)", 5);
    TMUX_QUIT(&v, 10); /* q closes the pane on top first */
    tmux_stop(&v);
}
