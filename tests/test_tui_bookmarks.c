/* test_tui_bookmarks.c — `b` and `C` keep bookmarks and their notes in the database beside the run.
 *
 * On stories260K: two bookmarks set in a live run, one given a note with
 * `C`, the session quit; the bookmarks table holds both, `ahascope runs`
 * lists them, and `tui --replay` shows them again (the legend's glyph, `'`
 * jumping between them and naming the note, the note in the inspector's
 * title), where a new one is kept in the file as well.
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
    TMUX_WAIT(&v, "bookmark 1 of 2: pos 5: the dragon", 5);
    tmux_keys(&v, "Enter"); /* the inspector, whose title names the cursor's note */
    TMUX_WAIT(&v, "\xe2\x98\x85 bookmark: the dragon", 5);
    tmux_keys(&v, "\"'\"");
    TMUX_WAIT(&v, "bookmark 2 of 2: pos 7", 5);
    CHECK(tmux_gone(&v, "bookmark: the dragon", 5)); /* pos 7 has no note */
    tmux_keys(&v, "[ [ [");
    TMUX_WAIT(&v, "@ pos 4 ", 5);
    tmux_keys(&v, "C");
    TMUX_WAIT(&v, " note: ", 5);
    tmux_keys(&v, "-l \"seen in the replay\"");
    tmux_keys(&v, "Enter");
    TMUX_WAIT(&v, "note kept for the bookmark at pos 4: seen in the replay", 5);
    CHECK(tmux_gone(&v, "on screen only", 2));
    TMUX_QUIT(&v, 10); /* q closes the pane on top first */
    tmux_stop(&v);
    r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT group_concat(b, ' ') FROM (SELECT run_id || ':' ||"
                       " pos || ':' || COALESCE(note, '-') AS b FROM bookmarks ORDER BY run_id, pos)\"", test_bin_abs(), t.dir);
    CHECK_MSG(st == 0 && r && strstr(r, "1:4:seen in the replay 1:5:the dragon 1:7:-"), "after the replay: %s",
              r ? r : "");
    free(r);
}
