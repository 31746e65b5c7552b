/* test_tui_pin.c — `f` `}` `{` `F`, the pin and the parent run end to end in tmux.
 *
 * One head through time and against another, end to end
 * in tmux: f } { F move the cursor to the selected head's globals, each
 * position checked afterwards against the recorded run read back with
 * SQL; x pins a head beside the selected one in the inspector and on a
 * timeline row; after a re-evaluation the inspector sets the head's gate
 * and score in the parent run beside this one's, live and in the replay
 * of the child, which reads its recorded parent; there also the parent's
 * row on the timeline and X's map of every head's flips (arrows, Enter
 * selects). On stories260K at 80×24,
 * and on a generated 16 × 32-head folder at 140×45. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

/* The position the status line names after `what` ("first global at pos
 * "), -1 when the screen does not show it within 3 s. */
static int pos_after(Tmux *t, const char *what) {
    char *scr = tmux_wait(t, what, 3);
    const char *at = scr ? strstr(scr, what) : NULL;
    int pos = -1;
    if (!at || sscanf(at + strlen(what), "%d", &pos) != 1) pos = -1;
    free(scr);
    return pos;
}

/* One integer from `ahascope query` on db (in dir), -1 for NULL or an error. */
static int query_int(const char *dir, const char *db, const char *sql) {
    int st, v = -1;
    char *out = test_runf(&st, "cd %s && %s query --db %s --csv \"%s\" 2>&1", dir, test_bin_abs(), db, sql);
    const char *nl = out ? strchr(out, '\n') : NULL; /* past the header */
    if (st || !nl || sscanf(nl + 1, "%d", &v) != 1) v = -1;
    free(out);
    return v;
}

/* The first global of (layer, head) in run 1 after position `after`, by SQL
 * (needed: the oracle above the run's θ as well). */
static int sql_global(const char *dir, const char *db, int layer, int head, int after, int needed) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT min(pos) FROM decided WHERE run_id = 1 AND layer = %d AND head = %d AND gate = 1 AND pos > %d%s",
             layer, head, after, needed ? " AND oracle_logit > theta_logit" : "");
    return query_int(dir, db, sql);
}

TEST(tui_pin_seek_and_parent_at_80x24) {
    TMUX_NEED_TUI();
    Tmux t;
    char cmd[8192];
    CHECK_INT(tmux_open_stories(&t, "pin80", 80, 24, NULL, "--db pin.db"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 36; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 40/512", 15);
    tmux_keys(&t, "Enter");
    tmux_keys(&t, "f");
    int first = pos_after(&t, "L0 H0 first global at pos ");
    tmux_keys(&t, "}");
    int next = pos_after(&t, "L0 H0 next global at pos ");
    tmux_keys(&t, "{");
    int back = pos_after(&t, "L0 H0 previous global at pos ");
    tmux_keys(&t, "F");
    int needed = pos_after(&t, "L0 H0 next needed global at pos ");
    CHECK_MSG(first >= 0 && next > first && back == first && needed > first, "f %d } %d { %d F %d", first, next,
              back, needed);
    TMUX_WAIT(&t, "inspector \xc2\xb7 L0 H0 @ pos", 3); /* the cursor moved there: the inspector says so */
    /* pin L0 H0, then look at L1 H2 beside it */
    tmux_keys(&t, "x");
    TMUX_WAIT(&t, "pinned L0 H0", 3);
    TMUX_WAIT(&t, "timeline \xc2\xb7 pin L0 H0", 3);
    tmux_keys(&t, "G");
    tmux_keys(&t, "-l \"L1 H2\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "inspector \xc2\xb7 L1 H2", 3);
    TMUX_WAIT(&t, "\xe2\x94\x82pin L0 H0 ", 3); /* its line in the inspector, at the pane's left edge */
    /* a re-evaluation at a higher τ: the parent's gate and score beside the child's */
    tmux_keys(&t, "T");
    TMUX_WAIT(&t, "run 2: aha", 20);
    TMUX_WAIT(&t, "\xe2\x94\x82parent", 5);
    tmux_keys(&t, "x"); /* L1 H2 pinned in L0 H0's place */
    TMUX_WAIT(&t, "timeline \xc2\xb7 pin L1 H2", 3);
    /* the parent graphically: its row on the timeline, the map of every head's flips */
    TMUX_WAIT(&t, "par run 1", 3);
    TMUX_WAIT(&t, "\xe2\x94\x82par ", 3);
    tmux_keys(&t, "X");
    TMUX_WAIT(&t, "flips vs parent run 1 \xc2\xb7 L1 H2 ", 3);
    tmux_keys(&t, "Down");
    TMUX_WAIT(&t, "flips vs parent run 1 \xc2\xb7 L2 H2 ", 3);
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "L2 H2 selected: its gate changed at ", 3);
    CHECK(tmux_gone(&t, "flips vs parent", 3));
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    /* what the keys found, against the recorded run read back with SQL */
    CHECK_INT(first, sql_global(t.dir, "pin.db", 0, 0, -1, 0));
    CHECK_INT(next, sql_global(t.dir, "pin.db", 0, 0, first, 0));
    CHECK_INT(needed, sql_global(t.dir, "pin.db", 0, 0, first, 1));
    CHECK_INT(query_int(t.dir, "pin.db", "SELECT parent_run_id FROM runs WHERE run_id = 2"), 1);
    /* the replay of run 1 seeks the same way */
    Tmux r;
    snprintf(cmd, sizeof cmd, "%s tui --replay --run 1 --db pin.db", test_bin_abs());
    CHECK_INT(tmux_open(&r, "pin80r", t.dir, 80, 24, NULL, cmd, 0), 0);
    TMUX_WAIT(&r, "replay of run 1", 10); /* loaded: its progress line no longer takes the status line */
    tmux_keys(&r, "f");
    CHECK_INT(pos_after(&r, "L0 H0 first global at pos "), first);
    tmux_keys(&r, "q");
    TMUX_WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
    /* the replay of run 2 reads its recorded parent, run 1, once the inspector shows it */
    snprintf(cmd, sizeof cmd, "%s tui --replay --db pin.db", test_bin_abs());
    CHECK_INT(tmux_open(&r, "pin80p", t.dir, 80, 24, NULL, cmd, 0), 0);
    TMUX_WAIT(&r, "replay of run 2", 10);
    tmux_keys(&r, "Enter");
    TMUX_WAIT(&r, "\xe2\x94\x82parent", 10);
    tmux_keys(&r, "X"); /* the recorded parent, once read, maps the flips too */
    TMUX_WAIT(&r, "flips vs parent run 1", 5);
    tmux_keys(&r, "Escape");
    CHECK(tmux_gone(&r, "flips vs parent", 3));
    tmux_keys(&r, "q");
    TMUX_WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
}

TEST(tui_pin_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_16x32(&t, "pin16x32", 140, 45, NULL, "--db pin.db")) return;
    TMUX_WAIT(&t, "policy", 15);
    for (int i = 0; i < 24; i++) tmux_keys(&t, "Space");
    CHECK(tmux_shows_pos(&t, 24, 20));
    tmux_keys(&t, "G");
    tmux_keys(&t, "-l \"L15 H31\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "L15 H31", 5);
    tmux_keys(&t, "Enter");
    tmux_keys(&t, "x");
    TMUX_WAIT(&t, "timeline \xc2\xb7 pin L15 H31", 3);
    tmux_keys(&t, "f"); /* a random model's head may never go global: either answer, checked below */
    int first = -1;
    if (tmux_shows(&t, "first global at pos", 3)) first = pos_after(&t, "L15 H31 first global at pos ");
    else TMUX_WAIT(&t, "no global for L15 H31", 1);
    tmux_keys(&t, "G");
    tmux_keys(&t, "-l \"0.0\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "inspector \xc2\xb7 L0 H0", 5);
    TMUX_WAIT(&t, "pin L15 H31 \xc2\xb7 ", 3); /* the full line: there is room above the far list */
    tmux_keys(&t, "w");                        /* a re-evaluation at a smaller window */
    TMUX_WAIT(&t, "run 2: ", 30);
    TMUX_WAIT(&t, "parent run 1: ", 5);
    TMUX_WAIT(&t, "this run: ", 1);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    CHECK_INT(first, sql_global(t.dir, "pin.db", 15, 31, -1, 0));
}
