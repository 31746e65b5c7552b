/* test_tui_defects.c — issue 52's defects, walked again on the organism and a 16 × 32-head folder.
 *
 * Each defect has its first test on stories260K (tests/README.md, "Issue
 * 52's coverage"). This file repeats the ones a model's shape could break
 * on the organism's passkey item and on a random 16 × 32-head folder, at
 * 80×24 and at 140×45, in one recorded session each and its replay: θ
 * 0.001 in the header and the bars' title (which still said 0.00), `/` Enter repeating the last search, `d`'s class
 * sizes, `B`'s list closed by one Esc, `D` naming the run it has no parent
 * for (live: change a setting; replay: a replay only re-scores), `o` at
 * θ's limit saying nothing changed, and the replay's header whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

/* TMUX_WAIT for a helper that returns int: -1 after the failure. */
#define TMUX_WAIT_RET(t, text, secs)                                         \
    do {                                                                     \
        if (!tmux_shows(t, text, secs)) {                                    \
            test_fail(__FILE__, __LINE__, "screen never showed '%s'", text); \
            tmux_stop(t);                                                    \
            return -1;                                                       \
        }                                                                    \
    } while (0)

/* The live half: the defects a recorded live run shows. */
static int live_defects(Tmux *t, int cols) {
    TMUX_WAIT_RET(t, cols >= 140 ? "\xce\xb8 0.001" : "0.001", 15); /* not rounded to 0.00 */
    char *scr = tmux_capture(t); /* nor in the bars' title, in either of its forms */
    CHECK_MSG(scr && (strstr(scr, "oracle \xce\xb8 0.001") || strstr(scr, "oracle (\xce\xb8 0.001)")),
              "the bars' title does not say theta 0.001 at %d columns", cols);
    free(scr);
    CHECK_MSG(tmux_gone(t, "\xce\xb8 0.00 ", 3), "a pane rounds theta 0.001 to 0.00 at %d columns", cols);
    tmux_keys(t, "/ -l the Enter");
    tmux_keys(t, "/ Enter"); /* an empty line repeats the search */
    CHECK_MSG(tmux_gone(t, "no search yet", 3), "/ Enter after a search said there was none at %d columns", cols);
    tmux_keys(t, "d");
    TMUX_WAIT_RET(t, " cells, ", 20); /* the class sizes beside the AUC */
    TMUX_WAIT_RET(t, " global", 5);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "distributions", 5));
    tmux_keys(t, "B");
    TMUX_WAIT_RET(t, "open run:", 10);
    tmux_keys(t, "Escape"); /* one Esc back, not three */
    CHECK_MSG(tmux_gone(t, "open run:", 5), "B's list needed more than one Esc at %d columns", cols);
    tmux_keys(t, "D");
    TMUX_WAIT_RET(t, "run 1 has no parent run (change a setting to make one)", 20);
    return 0;
}

/* The replay half, from dir's ahascope.db. */
static void replay_defects(const char *name, const char *dir, int cols, int rows) {
    Tmux t;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db ahascope.db", test_bin_abs());
    char rname[48];
    snprintf(rname, sizeof rname, "%s_r", name);
    CHECK_INT(tmux_open(&t, rname, dir, cols, rows, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "replay", 20);
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "it was not re-evaluated from one", 20);
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
}

static void folder_defects(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "def16x32_%d", cols);
    if (tmux_open_16x32(&t, name, cols, rows, NULL, "--theta 0.001")) return;
    TMUX_WAIT(&t, "12 prompt", 15);
    if (live_defects(&t, cols)) return;
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
    replay_defects(name, t.dir, cols, rows);
}

TEST(tui_defects_on_a_16x32_head_folder_at_80x24) { folder_defects(80, 24); }

TEST(tui_defects_on_a_16x32_head_folder_at_140x45) { folder_defects(140, 45); }

static void organism_defects(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "deforg_%d", cols);
    if (tmux_open_passkey_recorded(&t, name, cols, rows, "--theta 0.001")) return;
    if (live_defects(&t, cols)) return;
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
    replay_defects(name, t.dir, cols, rows);
}

TEST(tui_defects_on_the_organism_passkey_item_at_80x24) { organism_defects(80, 24); }

TEST(tui_defects_on_the_organism_passkey_item_at_140x45) { organism_defects(140, 45); }
