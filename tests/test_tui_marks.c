/* test_tui_marks.c — a replay's bookmarks reach the file through a locked database, and an old file is left alone.
 *
 * A bookmark set while another process holds the write lock (python's
 * BEGIN IMMEDIATE) waits in the TUI's queue and lands once the lock goes,
 * saying so; one still waiting at quit is named on stderr, not lost
 * silently; and a schema-7 file, which keeps no bookmarks, is byte for
 * byte what it was after `b` and `C` in its replay (writing would upgrade it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/stories.h"
#include "tests/test.h"
#include "tests/tmux.h"

/* Record eight positions of stories260K into dir/m.db: 0, or -1. */
static int record_small(const char *dir) {
    int st;
    char *out = test_runf(&st, "%s record --db %s/m.db --model %s --prompt 'Once upon' --steps 6 --seed 1 "
                               "--temperature 0 --threads 1 2>&1", test_bin_abs(), dir, test_stories_model());
    free(out);
    return st == 0 ? 0 : -1;
}

/* Start python holding dir/m.db's write lock until dir/release appears (60 s at most); it
 * touches dir/held once it holds it. 0 once held, -1 if it never was. */
static int hold_lock(const char *dir) {
    int st;
    free(test_runf(&st, "python3 -c \"import sqlite3, time, os\nc = sqlite3.connect('%s/m.db', isolation_level=None)\n"
                        "c.execute('BEGIN IMMEDIATE')\nopen('%s/held', 'w').close()\nt = time.time()\n"
                        "while not os.path.exists('%s/release') and time.time() - t < 60: time.sleep(0.05)\n"
                        "c.execute('ROLLBACK')\nopen('%s/released', 'w').close()\" >/dev/null 2>&1 &",
                   dir, dir, dir, dir));
    char held[1200];
    snprintf(held, sizeof held, "%s/held", dir);
    for (int i = 0; i < 400 && access(held, F_OK) != 0; i++) usleep(50000);
    return access(held, F_OK) == 0 ? 0 : -1;
}

/* The bookmarks of dir/m.db as "run:pos:note ...", position order (malloc'd). */
static char *bookmarks(const char *dir) {
    int st;
    return test_runf(&st, "%s query --db %s/m.db --csv \"SELECT group_concat(b, ' ') FROM (SELECT run_id || ':' || "
                          "pos || ':' || COALESCE(note, '-') AS b FROM bookmarks ORDER BY run_id, pos)\"",
                     test_bin_abs(), dir);
}

static void touch(const char *dir, const char *name) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
}

TEST(tui_marks_replay_bookmark_waits_for_a_locked_database_and_lands) {
    TMUX_NEED_TUI();
    const char *dir = test_tmp("marks_busy");
    int st;
    free(test_runf(&st, "mkdir -p %s", dir));
    CHECK_INT(record_small(dir), 0);
    Tmux v;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db m.db", test_bin_abs());
    CHECK_INT(tmux_open(&v, "marks_busy", dir, 120, 40, NULL, cmd, 0), 0);
    TMUX_WAIT(&v, "replay of run 1", 20);
    CHECK_INT(hold_lock(dir), 0);
    tmux_keys(&v, "Home ] ]");
    TMUX_WAIT(&v, "pos 2/", 5);
    tmux_keys(&v, "b");
    TMUX_WAIT(&v, "the database is locked: kept once it is free", 10);
    char *r = bookmarks(dir);
    CHECK_MSG(r && !strstr(r, "1:2:"), "written through the lock? %s", r ? r : "");
    free(r);
    touch(dir, "release");
    TMUX_WAIT(&v, "1 bookmark write kept, the database free again", 20);
    r = bookmarks(dir);
    CHECK_MSG(r && strstr(r, "1:2:-"), "after the lock: %s", r ? r : "");
    free(r);

    /* held again to the end: the write still waiting at quit is named on stderr */
    char p[1200];
    snprintf(p, sizeof p, "rm -f %s/held %s/release %s/released", dir, dir, dir);
    free(test_runf(&st, "%s", p));
    CHECK_INT(hold_lock(dir), 0);
    tmux_keys(&v, "]");
    TMUX_WAIT(&v, "pos 3/", 5);
    tmux_keys(&v, "b");
    TMUX_WAIT(&v, "the database is locked", 10);
    TMUX_QUIT(&v, 20);
    TMUX_WAIT(&v, "the bookmark at run 1 pos 3 was not kept: ", 5);
    touch(dir, "release");
    tmux_stop(&v);
    r = bookmarks(dir);
    CHECK_MSG(r && strstr(r, "1:2:-") && !strstr(r, "1:3:"), "at the end: %s", r ? r : "");
    free(r);
}

TEST(tui_marks_a_version_7_file_is_left_as_it_was) {
    TMUX_NEED_TUI();
    const char *dir = test_tmp("marks_v7");
    int st;
    free(test_runf(&st, "mkdir -p %s && cp tests/fixtures/store/v7.db %s/v7.db", dir, dir));
    CHECK_INT(st, 0);
    Tmux v;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db v7.db", test_bin_abs());
    CHECK_INT(tmux_open(&v, "marks_v7", dir, 120, 40, NULL, cmd, 0), 0);
    TMUX_WAIT(&v, "replay of run 3 (done)", 20); /* the fixture's last run */
    tmux_keys(&v, "Home ]");
    tmux_keys(&v, "b");
    TMUX_WAIT(&v, "(on screen only: schema 7 keeps no bookmarks", 10);
    tmux_keys(&v, "C");
    TMUX_WAIT(&v, " note: ", 5);
    tmux_keys(&v, "-l \"only here\"");
    tmux_keys(&v, "Enter");
    TMUX_WAIT(&v, "note kept for the bookmark at pos 1: only here (on screen only: ", 5);
    tmux_keys(&v, "Enter");
    TMUX_WAIT(&v, "\xe2\x98\x85 bookmark: only here", 5); /* shown all the same */
    TMUX_QUIT(&v, 10);
    tmux_stop(&v);
    char *c = test_runf(&st, "cmp tests/fixtures/store/v7.db %s/v7.db && ls %s", dir, dir);
    CHECK_MSG(st == 0 && c && !strstr(c, "-wal") && !strstr(c, "-journal"), "the v7 file changed: %s", c ? c : "");
    free(c);
}
