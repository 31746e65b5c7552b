/* test_tui_tour.c — issue 52's features where the other TUI tests left a model or a size out.
 *
 * The other files cover each feature on stories260K and on one or both of
 * the organism and a 16 × 32-head folder (tests/README.md, "Issue 52's
 * coverage"). These fill the gaps, at 80×24 and at 140×45: on a recorded
 * 16 × 32-head folder, a bookmark and its note kept in the database (F8),
 * the paths ending on that bookmark (F5: no needle, so the bookmark stands
 * in), and an ablation's child run (F4) with its numbers; on the organism's
 * passkey item, recorded, a bookmark at the answer with a note, kept beside
 * the run and named by `'` and the inspector. On both, the ablation's child
 * is then compared in `D` with a run chosen in `B` (F6), and on the folder a
 * span is set and cleared (F7).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

/* The bookmarks of dir/ahascope.db as "run:pos:note ...", position order (malloc'd). */
static char *bookmarks_in(const char *dir) {
    int st;
    return test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT group_concat(b, ' ') FROM (SELECT run_id || ':' "
                          "|| pos || ':' || COALESCE(note, '-') AS b FROM bookmarks ORDER BY run_id, pos)\"",
                     test_bin_abs(), dir);
}

/* Type `note` into the line editor `C` opens for the cursor's bookmark, and wait until it is kept at pos. */
static void note_at(Tmux *t, int pos, const char *note) {
    tmux_keys(t, "C");
    TMUX_WAIT(t, " note: ", 5);
    char keys[256], want[256];
    snprintf(keys, sizeof keys, "-l \"%s\"", note);
    tmux_keys(t, keys);
    tmux_keys(t, "Enter");
    snprintf(want, sizeof want, "note kept for the bookmark at pos %d: %s", pos, note);
    TMUX_WAIT(t, want, 10);
}

/* B, the run id typed, Tab: the run D, X and `par` compare with from now on. */
static void compare_with(Tmux *t, const char *id) {
    tmux_keys(t, "B");
    TMUX_WAIT(t, "open run:", 10);
    char keys[64];
    snprintf(keys, sizeof keys, "-l \"%s\"", id);
    tmux_keys(t, keys);
    tmux_keys(t, "Tab");
}

static void folder_tour(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_model(&t, 0, "tour", cols, rows, "AHASCOPE_YANK=yank.txt", NULL)) return;
    tmux_keys(&t, "b"); /* F8: kept in the live run's file at once */
    char *scr = tmux_wait(&t, "bookmark at pos ", 5);
    int mark = -1;
    if (scr) sscanf(strstr(scr, "bookmark at pos ") + 16, "%d", &mark);
    free(scr);
    CHECK_MSG(mark >= 0, "no bookmark position at %dx%d", cols, rows);
    if (mark < 0) { tmux_stop(&t); return; }
    note_at(&t, mark, "far key");
    for (int i = 0; i < 9; i++) tmux_keys(&t, "Space");
    CHECK_MSG(tmux_shows_pos(&t, mark + 9, 20), "pos %d never came", mark + 9);
    tmux_keys(&t, "End \"&\""); /* F5: no needle here, so the paths end on the bookmark */
    TMUX_WAIT(&t, "paths from pos ", 60);
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "paths to the needle", 5)); /* before `[`: Esc [ together would read as one escape sequence */
    tmux_keys(&t, "[ [ [ [ [ [");
    char at[64];
    snprintf(at, sizeof at, "pos %d/", mark + 3);
    TMUX_WAIT(&t, at, 5);
    tmux_keys(&t, "'('"); /* F7: a span from here to two positions on */
    tmux_keys(&t, "] ]");
    tmux_keys(&t, "')'");
    snprintf(at, sizeof at, "span %d-%d (3 positions", mark + 3, mark + 5);
    TMUX_WAIT(&t, at, 5);
    tmux_keys(&t, "'|'");
    TMUX_WAIT(&t, "span cleared: every position counts", 5);
    snprintf(at, sizeof at, "pos %d/", mark + 5);
    TMUX_WAIT(&t, at, 5);
    tmux_keys(&t, "!"); /* F4: L0 H0 forced local from the cursor on, a child run beside it */
    snprintf(at, sizeof at, "run 2: ablate L0H0=local@%d ", mark + 5);
    TMUX_WAIT(&t, at, 60);
    snprintf(at, sizeof at, "start pos %d -> ", mark + 5); /* the comparison's first line, in the text pane */
    TMUX_WAIT(&t, at, 30);
    if (rows >= 40) TMUX_WAIT(&t, "largest KL ", 5); /* 80x24 shows the first lines only */
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "against its parent, from pos", 5));
    compare_with(&t, "1"); /* F6: the child against a run chosen in B (its parent here, by number) */
    TMUX_WAIT(&t, "comparing with the parent, run 1", 20);
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 2 vs its parent 1", 20);
    tmux_keys(&t, "y"); /* F8: the pane on top copied whole, as text */
    TMUX_WAIT(&t, "yanked the ", 10);
    TMUX_QUIT(&t, 10); /* q closes the pane on top first */
    tmux_stop(&t);
    char *r = bookmarks_in(t.dir);
    char want[64];
    snprintf(want, sizeof want, "1:%d:far key", mark);
    CHECK_MSG(r && strstr(r, want), "bookmarks at %dx%d: %s (want %s)", cols, rows, r ? r : "", want);
    free(r);
    int st;
    r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT run_id, parent_run_id, ablate FROM runs "
                       "ORDER BY run_id\"", test_bin_abs(), t.dir);
    CHECK_MSG(st == 0 && r && strstr(r, "2,1,L0H0=local@"), "runs at %dx%d: %s", cols, rows, r ? r : "");
    free(r);
}

TEST(tui_tour_16x32_bookmark_paths_span_ablation_and_d_at_80x24) { folder_tour(80, 24); }

TEST(tui_tour_16x32_bookmark_paths_span_ablation_and_d_at_140x45) { folder_tour(140, 45); }

static void organism_tour(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_model(&t, 1, "tour", cols, rows, NULL, NULL)) return;
    tmux_keys(&t, "b");
    TMUX_WAIT(&t, "bookmark at pos 505", 5);
    note_at(&t, 505, "second digit");
    tmux_keys(&t, "Home");
    tmux_keys(&t, "\"'\"");
    TMUX_WAIT(&t, "bookmark 1 of 1: pos 505: second digit", 5);
    tmux_keys(&t, "Enter"); /* the inspector's title names the note (cut to the pane at 80 columns) */
    TMUX_WAIT(&t, cols >= 140 ? "\xe2\x98\x85 bookmark: second digit" : "\xe2\x98\x85 bookmark", 5);
    tmux_keys(&t, "!"); /* F4 recorded, so that F6 has a second run: L0 H0 local from the answer on */
    TMUX_WAIT(&t, "run 2: ablate L0H0=local@505 ", 60);
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "against its parent, from pos", 5));
    compare_with(&t, "1");
    TMUX_WAIT(&t, "comparing with the parent, run 1", 20);
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 2 vs its parent 1", 20);
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
    char *r = bookmarks_in(t.dir);
    CHECK_MSG(r && strstr(r, "1:505:second digit"), "bookmarks at %dx%d: %s", cols, rows, r ? r : "");
    free(r);
}

TEST(tui_tour_organism_bookmark_ablation_and_d_at_80x24) { organism_tour(80, 24); }

TEST(tui_tour_organism_bookmark_ablation_and_d_at_140x45) { organism_tour(140, 45); }
