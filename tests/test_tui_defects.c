/* test_tui_defects.c — issue 52's defects, walked again on the organism and a 16 × 32-head folder.
 *
 * Each defect has its first test on stories260K (tests/README.md, "Issue
 * 52's coverage"). This file repeats them on the organism's passkey item
 * and on a random 16 × 32-head folder, at 80×24 and at 140×45: in one
 * recorded session each and its replay, θ 0.001 in the header and the
 * bars' title (which still said 0.00), `/` Enter repeating the last
 * search, `d`'s class sizes, one Esc back from a run `B` opened, `D` naming the
 * run it has no parent for (live: change a setting; replay: a replay only
 * re-scores), the re-scored replay's header in whole fields, a
 * bookmark and note set in the replay kept in its file,
 * `y` over `H` copying its table, its header kept by PgDn, the status
 * line's hint naming all its sort columns (it said 1-5 over 8), the
 * heatmap's cells as wide with the inspector open at 140x45, no -0.00 in
 * the inspector, the key bar, an odd head named on the timeline, its bins' means, the pattern footer's
 * light weights in their tail forms; in sessions of their own, setting
 * changes (w, and T under the organism's routers) pressed faster than a
 * re-evaluation's first chunk (no stopped
 * run without positions is ever a parent, `D`'s reads over the positions
 * both runs have while the child is written, θ 0.001 in the status line,
 * which said theta=0.00, X in the child's replay before its parent was
 * read) and `--no-record` at θ 0 (`o` at its limit, `s`, `R` and a setting change
 * without a "run 0"); and `d` under the organism's routers (σ's tail
 * form, the histogram's and the ROC's axes, the AUC whole at 80 columns).
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

/* The line of the pane's text holding `text`, or NULL (malloc'd). */
static char *line_with(Tmux *t, const char *text) {
    char *scr = tmux_capture(t), *line = NULL;
    const char *at = scr ? strstr(scr, text) : NULL;
    if (at) {
        const char *a = at, *b = strchr(at, '\n');
        while (a > scr && a[-1] != '\n') a--;
        size_t n = b ? (size_t)(b - a) : strlen(a);
        line = malloc(n + 1);
        if (line) memcpy(line, a, n), line[n] = 0;
    }
    free(scr);
    return line;
}

/* The selected heatmap cell's width in blocks on L0's line (between its
 * ▕ ▏ marks), or -1 when that line is not on screen. */
static int selected_cell_width(Tmux *t) {
    char *l = line_with(t, "L0  \xe2\x96\x95");
    const char *a = l ? strstr(l, "L0  \xe2\x96\x95") : NULL;
    int n = -1;
    if (a) {
        a += strlen("L0  \xe2\x96\x95");
        for (n = 0; !strncmp(a, "\xe2\x96\x88", 3); a += 3) n++;
        if (strncmp(a, "\xe2\x96\x8f", 3)) n = -1;
    }
    free(l);
    return n;
}

/* `H` over n_heads heads: `y` copies its table whole, not the inspector
 * (the file AHASCOPE_YANK names, yank.txt in the pane's directory), and
 * PgDn keeps its header row on screen. */
static int heads_table(Tmux *t, int cols, int n_heads, int n_sorts) {
    tmux_keys(t, "H");
    TMUX_WAIT_RET(t, "heads by global_rate", 10);
    /* the status line's hint names every sortable column, as the pane's own line does (it said 1-5 over 8) */
    char sort[48];
    snprintf(sort, sizeof sort, "1-%d \xe2\x86\x90\xe2\x86\x92 sort", n_sorts);
    char *scr = tmux_capture(t);
    size_t len = scr ? strlen(scr) : 0;
    while (len && (scr[len - 1] == '\n' || scr[len - 1] == ' ')) scr[--len] = 0;
    const char *last = scr ? strrchr(scr, '\n') : NULL;
    CHECK_MSG(last && strstr(last, sort), "the status line under H at %d columns: %s", cols, last ? last : "");
    free(scr);
    char want[64];
    snprintf(want, sizeof want, "yanked the heads table (%d lines)", n_heads + 2); /* run line, names, heads */
    tmux_keys(t, "y");
    TMUX_WAIT_RET(t, want, 10);
    int st;
    char *txt = test_runf(&st, "head -c 100000 '%s/yank.txt'", t->dir);
    CHECK_MSG(txt && !strncmp(txt, "# ahascope run 1 seed 1 model ", 30) && strstr(txt, "\nrank  head ") &&
                  !strstr(txt, "verdict"),
              "y over H at %d columns: %.300s", cols, txt ? txt : "(none)");
    free(txt);
    tmux_keys(t, "NPage");
    CHECK_MSG(tmux_shows(t, "#  head ", 5), "H lost its header row after PgDn at %d columns", cols);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "heads by global_rate", 5));
    return 0;
}

/* L0 H1, an odd head: the timeline's half-block line names it, with the
 * cursor mark (its rows named only the even heads); then the pattern of
 * a head whose light keys once read 0.00 in the footer. On the organism
 * that is L2 H1, the copying head: 1.00 on the needle's next digit and
 * 0.0013 on the one after. */
static int odd_head_and_footer(Tmux *t, int cols, int organism) {
    tmux_keys(t, "Right");
    TMUX_WAIT_RET(t, "L0H1", 10);
    char *l = line_with(t, "L0H1");
    CHECK_MSG(l && strstr(l, "\xe2\x96\xb8"), "the timeline's line of L0H1 has no cursor mark at %d columns: %s", cols,
              l ? l : "");
    free(l);
    if (!organism) { /* played past the timeline's columns: its bins are means, not maxima, and it says so */
        tmux_keys(t, "p");
        if (!tmux_shows_pos(t, 200, 60)) {
            test_fail(__FILE__, __LINE__, "the folder never reached pos 200 at %d columns", cols);
            return -1;
        }
        tmux_keys(t, "p");
        TMUX_WAIT_RET(t, "paused", 10);
        l = line_with(t, "timeline");
        CHECK_MSG(l && strstr(l, " pos (mean)"), "the timeline's title at %d columns: %s", cols, l ? l : "");
        free(l);
    }
    if (organism) { /* 506 positions in fewer columns: each a bin's mean, not its maximum, and said so */
        l = line_with(t, "timeline");
        CHECK_MSG(l && strstr(l, " pos (mean)"), "the timeline's title at %d columns: %s", cols, l ? l : "");
        free(l);
        tmux_keys(t, "Down Down");
    }
    tmux_keys(t, "A");
    TMUX_WAIT_RET(t, "heaviest keys: 1:", 20);
    l = line_with(t, "heaviest keys: 1:");
    CHECK_MSG(l && !strstr(l, " 0.00 ") && !strstr(l, " 0.00\xe2\x80\xa6"), "a weight reads 0.00 at %d columns: %s",
              cols, l ? l : "");
    if (organism)
        CHECK_MSG(l && strstr(l, "1:145 \"8\" 1.00 2:146 \"7\" 0.0013"), "L2 H1's footer at %d columns: %s", cols,
                  l ? l : "");
    free(l);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "heaviest keys:", 5));
    return 0;
}

/* The live half: the defects a recorded live run shows. */
static int live_defects(Tmux *t, int cols, int organism) {
    TMUX_WAIT_RET(t, cols >= 140 ? "\xce\xb8 0.001" : "0.001", 15); /* not rounded to 0.00 */
    /* the key bar: the panes in the words the help uses (none at 80x24 on 512 heads, whose timeline
     * is at its minimum there, test_views_keybar.c) */
    char *bar = line_with(t, "? help  H heads");
    CHECK_MSG((!organism && cols < 140) || (bar && strstr(bar, "? help  H heads  E every head  A pattern  d dist  v plots  R summary  D diff") &&
                  (cols < 140 || strstr(bar, "D diff  B runs  : SQL"))),
              "the key bar at %d columns: %s", cols, bar ? bar : "(none)");
    free(bar);
    char *scr = tmux_capture(t); /* nor in the bars' title, in either of its forms */
    CHECK_MSG(scr && (strstr(scr, "oracle \xce\xb8 0.001") || strstr(scr, "oracle (\xce\xb8 0.001)")),
              "the bars' title does not say theta 0.001 at %d columns", cols);
    free(scr);
    if (!organism && cols < 140) { /* beside the compact heatmap of 16 layers, the bars say which they show */
        char *b = line_with(t, "oracle \xce\xb8 0.001");
        CHECK_MSG(b && strstr(b, " L0-"), "the bars' title names no layer range at %d columns: %s", cols, b ? b : "");
        free(b);
    }
    CHECK_MSG(tmux_gone(t, "\xce\xb8 0.00 ", 3), "a pane rounds theta 0.001 to 0.00 at %d columns", cols);
    tmux_keys(t, "/ -l the Enter");
    tmux_keys(t, "/ Enter"); /* an empty line repeats the search */
    CHECK_MSG(tmux_gone(t, "no search yet", 3), "/ Enter after a search said there was none at %d columns", cols);
    tmux_keys(t, "d");
    TMUX_WAIT_RET(t, " cells, ", 20); /* the class sizes beside the AUC */
    TMUX_WAIT_RET(t, " global", 5);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "distributions", 5));
    tmux_keys(t, "B"); /* a run opened from B: one Esc back to the live run, not three */
    TMUX_WAIT_RET(t, "open run:", 10);
    TMUX_WAIT_RET(t, "tokens", 5); /* the list's header */
    tmux_keys(t, "1 Enter");
    TMUX_WAIT_RET(t, "replay of run 1", 30);
    TMUX_WAIT_RET(t, "Esc back to the live run", 5);
    CHECK_MSG(tmux_gone(t, "runs: an id", 3), "Enter left B's list open at %d columns", cols);
    tmux_keys(t, "Escape");
    TMUX_WAIT_RET(t, "back to the live run", 10);
    CHECK_MSG(tmux_gone(t, "replay run", 3), "one Esc did not leave the replay at %d columns", cols);
    tmux_keys(t, "D");
    TMUX_WAIT_RET(t, "run 1 has no parent run (change a setting to make one)", 20);
    if (heads_table(t, cols, organism ? 16 : 512, organism ? 8 : 5)) return -1; /* the item's marks add 3 */
    int before = selected_cell_width(t); /* the inspector takes rows, not the cells' width (6 became 3 at 140x45) */
    tmux_keys(t, "Enter"); /* the inspector: no negative zero (−log p read -0.00) */
    TMUX_WAIT_RET(t, "inspector \xc2\xb7", 10);
    int after = selected_cell_width(t);
    CHECK_MSG(cols < 140 || (before > 0 && after == before), "the selected cell %d blocks wide, %d with the inspector",
              before, after);
    CHECK_MSG(tmux_gone(t, "-0.00", 1) && tmux_gone(t, "\xe2\x88\x92" "0.00", 1), "a -0.00 on screen at %d columns",
              cols);
    tmux_keys(t, "Escape");
    return odd_head_and_footer(t, cols, organism);
}

/* The replay half, from dir's ahascope.db. */
static void replay_defects(const char *name, const char *dir, int cols, int rows) {
    Tmux t;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db ahascope.db", test_bin_abs());
    char rname[48];
    snprintf(rname, sizeof rname, "%s_r", name);
    CHECK_INT(tmux_open(&t, rname, dir, cols, rows, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "replay of run 1 (done)", 30); /* every position read: the cursor stays where b finds it */
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "it was not re-evaluated from one", 20);
    tmux_keys(&t, "T"); /* re-scored: the header keeps whole fields (it was cut mid-number at 80 columns) */
    TMUX_WAIT(&t, "replay re-scored at tau 0.55", 20);
    char *hdr = tmux_capture(&t);
    char *nl = hdr ? strchr(hdr, '\n') : NULL;
    if (nl) *nl = 0;
    size_t n = hdr ? strlen(hdr) : 0;
    while (n && hdr[n - 1] == ' ') hdr[--n] = 0;
    CHECK_MSG(hdr && strstr(hdr, "\xcf\x84 0.55") &&
                  ((n >= 5 && !strcmp(hdr + n - 5, "/1024")) || (n && hdr[n - 1] == '%')),
              "the re-scored replay's header at %d columns: %s", cols, hdr ? hdr : "");
    free(hdr);
    tmux_keys(&t, "b"); /* a bookmark and its note set in the replay, kept in its file */
    char *scr = tmux_wait(&t, "bookmark at pos ", 5);
    int pos = -1;
    const char *at = scr ? strstr(scr, "bookmark at pos ") : NULL;
    if (at) sscanf(at, "bookmark at pos %d", &pos);
    free(scr);
    tmux_keys(&t, "C");
    TMUX_WAIT(&t, " note: ", 5);
    tmux_keys(&t, "-l \"seen in the replay\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "note kept for the bookmark at pos ", 5);
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
    int st;
    char *r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT run_id || ':' || pos || ':' || COALESCE(note, '-')"
                             " FROM bookmarks\"", test_bin_abs(), dir);
    char want[64];
    snprintf(want, sizeof want, "\n1:%d:seen in the replay", pos);
    CHECK_MSG(pos >= 0 && st == 0 && r && strstr(r, want), "the replay's bookmark at %d columns: %s", cols, r ? r : "");
    free(r);
}

static void folder_defects(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "def16x32_%d", cols);
    if (tmux_open_16x32(&t, name, cols, rows, "AHASCOPE_YANK=yank.txt", "--theta 0.001")) return;
    TMUX_WAIT(&t, "12 prompt", 15);
    if (live_defects(&t, cols, 0)) return;
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
    if (tmux_open_passkey_recorded(&t, name, cols, rows, "AHASCOPE_YANK=yank.txt", "--theta 0.001")) return;
    if (live_defects(&t, cols, 1)) return;
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
    replay_defects(name, t.dir, cols, rows);
}

TEST(tui_defects_on_the_organism_passkey_item_at_80x24) { organism_defects(80, 24); }

TEST(tui_defects_on_the_organism_passkey_item_at_140x45) { organism_defects(140, 45); }

/* The organism under its shipped routers: `extra --policy aha --routers
 * PATH --window 8` into flags, or -1 after a skip (no routers file). */
static int organism_routers(char *flags, size_t n, const char *extra) {
    char routers[1100];
    if (!realpath("engine/organism/routers_w8.safetensors", routers)) {
        test_skip("no engine/organism/routers_w8.safetensors in this checkout");
        return -1;
    }
    snprintf(flags, n, "%s --policy aha --routers '%s' --window 8", extra, routers);
    return 0;
}

/* Each chunk of a re-evaluation slowed, so keys land before its first. */
#define SLOW_REEVAL "AHASCOPE_TEST_REEVAL_DELAY_MS=1500"

/* "run,parent,status,positions" a line for every run of dir's database. */
static char *runs_table(const char *dir) {
    int st;
    return test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT r.run_id, r.parent_run_id, r.status, "
                          "(SELECT COUNT(*) FROM tokens k WHERE k.run_id = r.run_id) FROM runs r ORDER BY r.run_id\"",
                     test_bin_abs(), dir);
}

/* The replay of run 4, X its first key: the parent, which a replay reads
 * only for the inspector, is read for X too, and its map opens once it
 * has come (X said "no parent run to compare with" until the inspector
 * had been opened). */
static void flips_before_the_parent_is_read(const char *dir, int cols, int parent) {
    Tmux r;
    char cmd[1200], want[48];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db ahascope.db --run 4", test_bin_abs());
    CHECK_INT(tmux_open(&r, "defx", dir, cols, cols < 140 ? 24 : 45, NULL, cmd, 0), 0);
    TMUX_WAIT(&r, "replay of run 4 (done)", 30);
    tmux_keys(&r, "X");
    snprintf(want, sizeof want, "flips vs parent run %d", parent);
    TMUX_WAIT(&r, want, 20);
    CHECK_MSG(tmux_gone(&r, "no parent run to compare with", 1), "X said run 4 had no parent at %d columns", cols);
    TMUX_QUIT(&r, 10);
    tmux_stop(&r);
}

/* `w w w` faster than a chunk: run 2 stops before its first and keeps no
 * position, so it is no one's parent; run 3 likewise unless a chunk beat
 * the key. Run 4's parent is the last run before it that has positions, and
 * D names that run and diffs over the positions both have while run 4 is
 * written, as the database says after. The status line gives θ 0.001 as
 * the header does. */
static void quick_setting_changes(Tmux *t, int cols, const char *key, const char *done) {
    tmux_keys(t, key); /* the progress line's count is past 80 columns: its run's number is not */
    TMUX_WAIT(t, "as run 2", 10);
    tmux_keys(t, key);
    TMUX_WAIT(t, "as run 3", 10);
    tmux_keys(t, key);
    TMUX_WAIT(t, "as run 4", 10);
    TMUX_WAIT(t, "theta=0.001", 5); /* not theta=0.00 */
    tmux_keys(t, "D");
    char *s = tmux_wait(t, "run 4 vs its parent ", 20);
    int parent = -1, lo = -1, hi = -1, n = -1;
    const char *at = s ? strstr(s, "run 4 vs its parent ") : NULL;
    if (at) sscanf(at, "run 4 vs its parent %d", &parent);
    const char *over = s ? strstr(s, "diff over positions ") : NULL;
    if (over) sscanf(over, "diff over positions %d-%d: run 4 is still being written (%d of", &lo, &hi, &n);
    CHECK_MSG(!over || (lo == 0 && hi + 1 == n), "D's range while run 4 is written: %d-%d with %d positions in", lo,
              hi, n);
    free(s);
    TMUX_WAIT(t, done, 90); /* the re-evaluation done */
    tmux_keys(t, "Escape");
    TMUX_QUIT(t, 10);
    char *r = runs_table(t->dir);
    int n2 = -1, n3 = -1, p3 = -1, p4 = -1, n1 = -1, n4 = -1;
    const char *a = r ? strstr(r, "\n1,,done,") : NULL, *b = r ? strstr(r, "\n2,1,interrupted,") : NULL;
    const char *c = r ? strstr(r, "\n3,") : NULL, *d = r ? strstr(r, "\n4,") : NULL;
    CHECK_MSG(a && b && c && d && sscanf(a, "\n1,,done,%d", &n1) == 1 && sscanf(b, "\n2,1,interrupted,%d", &n2) == 1 &&
                  sscanf(c, "\n3,%d,interrupted,%d", &p3, &n3) == 2 && sscanf(d, "\n4,%d,done,%d", &p4, &n4) == 2,
              "runs:\n%s", r ? r : "");
    free(r);
    /* each parent the last run before it that kept positions (a chunk may beat a key on a busy host) */
    int want3 = n2 > 0 ? 2 : 1, want4 = n3 > 0 ? 3 : want3;
    CHECK_MSG(p3 == want3 && p4 == want4, "parents: run 3's %d, run 4's %d; positions kept: run 2 %d, run 3 %d", p3,
              p4, n2, n3);
    CHECK_MSG(parent == p4, "D diffed run 4 against run %d, its parent is %d", parent, p4);
    CHECK_MSG(n4 == n1, "run 4 has %d positions, run 1 %d", n4, n1);
    if (p4 > 0) flips_before_the_parent_is_read(t->dir, cols, p4);
}

static void quick_changes_folder(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "defw16x32_%d", cols);
    if (tmux_open_16x32(&t, name, cols, rows, SLOW_REEVAL, "--theta 0.001")) return;
    TMUX_WAIT(&t, "12 prompt", 15);
    quick_setting_changes(&t, cols, "w", "run 4: full, w=");
    tmux_stop(&t);
}

TEST(tui_defects_quick_setting_changes_on_a_16x32_head_folder_at_80x24) { quick_changes_folder(80, 24); }

TEST(tui_defects_quick_setting_changes_on_a_16x32_head_folder_at_140x45) { quick_changes_folder(140, 45); }

static void quick_changes_organism(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "defworg_%d", cols);
    if (tmux_open_passkey_recorded(&t, name, cols, rows, SLOW_REEVAL, "--theta 0.001")) return;
    quick_setting_changes(&t, cols, "w", "run 4: full, w=");
    tmux_stop(&t);
}

/* The issue's own keys: `T T T` under the organism's routers, each τ step
 * a new execution of the AHA policy. */
static void quick_tau_organism(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32], flags[1200];
    snprintf(name, sizeof name, "deftorg_%d", cols);
    if (organism_routers(flags, sizeof flags, "--theta 0.001")) return;
    if (tmux_open_passkey_recorded(&t, name, cols, rows, SLOW_REEVAL, flags)) return;
    quick_setting_changes(&t, cols, "T", "run 4: aha, w=8");
    tmux_stop(&t);
}

TEST(tui_defects_quick_tau_steps_under_the_organism_routers_at_80x24) { quick_tau_organism(80, 24); }

TEST(tui_defects_quick_tau_steps_under_the_organism_routers_at_140x45) { quick_tau_organism(140, 45); }

TEST(tui_defects_quick_setting_changes_on_the_organism_passkey_item_at_80x24) { quick_changes_organism(80, 24); }

TEST(tui_defects_quick_setting_changes_on_the_organism_passkey_item_at_140x45) { quick_changes_organism(140, 45); }

/* --no-record at θ 0: `o` says θ is at its limit; `s` exports the run on screen (n positions) and `R`
 * summarises it, a setting change says what it ran, and nothing names a
 * "run 0" or refuses for want of a database. */
static void unrecorded(Tmux *t, int n) {
    tmux_keys(t, "o"); /* θ is 0 already: nothing to lower, and it says so (it said re-scored) */
    char *lim = tmux_wait(t, "unchanged: ", 10);
    CHECK_MSG(lim && !strstr(lim, "re-scored"), "o at theta 0:\n%s", lim ? lim : "(no unchanged)");
    free(lim);
    char want[96];
    snprintf(want, sizeof want, "exported the run on screen (not recorded: %d positions)", n);
    tmux_keys(t, "s");
    char *scr = tmux_wait(t, want, 20);
    CHECK_MSG(scr && !strstr(scr, "run 0") && !strstr(scr, "not recording"), "after s:\n%s", scr ? scr : "");
    free(scr);
    char path[1200];
    snprintf(path, sizeof path, "%s/ahascope-unrecorded.json", t->dir);
    int st;
    char *ids = test_runf(&st, "grep -o '\"token_id\":' '%s' | wc -l", path);
    CHECK_MSG(ids && atoi(ids) == n, "%s holds %s token ids, not %d", path, ids ? ids : "no", n);
    free(ids);
    tmux_keys(t, "R");
    scr = tmux_wait(t, "summary (not recorded)", 20);
    CHECK_MSG(scr && !strstr(scr, "run 0"), "after R:\n%s", scr ? scr : "");
    free(scr);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "summary (not recorded)", 5));
    tmux_keys(t, "w");
    scr = tmux_wait(t, "not recorded: full, w=", 30);
    CHECK_MSG(scr && !strstr(scr, "run 0"), "after w:\n%s", scr ? scr : "");
    free(scr);
    TMUX_QUIT(t, 10);
}

static void unrecorded_folder(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "defn16x32_%d", cols);
    free(test_runf(NULL, "rm -f '%s'/ahascope-unrecorded.*", test_tmp(name)));
    if (tmux_open_16x32(&t, name, cols, rows, NULL, "--no-record --theta 0")) return;
    TMUX_WAIT(&t, "12 prompt", 15);
    unrecorded(&t, 12);
    tmux_stop(&t);
}

TEST(tui_defects_norecord_on_a_16x32_head_folder_at_80x24) { unrecorded_folder(80, 24); }

TEST(tui_defects_norecord_on_a_16x32_head_folder_at_140x45) { unrecorded_folder(140, 45); }

static void unrecorded_organism(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "defnorg_%d", cols);
    free(test_runf(NULL, "rm -f '%s'/ahascope-unrecorded.*", test_tmp(name)));
    if (tmux_open_passkey(&t, name, cols, rows, NULL, "--theta 0")) return;
    unrecorded(&t, 506);
    tmux_stop(&t);
}

TEST(tui_defects_norecord_on_the_organism_passkey_item_at_80x24) { unrecorded_organism(80, 24); }

TEST(tui_defects_norecord_on_the_organism_passkey_item_at_140x45) { unrecorded_organism(140, 45); }

/* `d` on the organism under its routers (policy aha, w 8) at the passkey
 * answer: the router's σ in its tail form (logit −5.93 read σ 0.00), the
 * histogram's score axis at full scale (0, .5, 1), the ROC's axis across
 * its plot to 1, and its AUC whole where the pane is narrow (0.997 read
 * 0.99 against the border at 80 columns). */
static void dist_under_routers(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32], flags[1200];
    snprintf(name, sizeof name, "defdorg_%d", cols);
    if (organism_routers(flags, sizeof flags, "")) return;
    if (tmux_open_passkey(&t, name, cols, rows, NULL, flags)) return;
    tmux_keys(&t, "d");
    TMUX_WAIT(&t, " cells, ", 20);
    TMUX_WAIT(&t, "\xcf\x83 0.003 ", 10);
    char *l = line_with(&t, "0        .5        1");
    CHECK_MSG(l != NULL, "no full-scale score axis under d at %d columns", cols);
    free(l);
    l = line_with(&t, " rate");
    size_t n = l ? strlen(l) : 0;
    while (n && l[n - 1] == ' ') l[--n] = 0;
    CHECK_MSG(l && n > 4 && !strcmp(l + n - 4, "1\xe2\x94\x82"), "the ROC's axis at %d columns: %s", cols, l ? l : "");
    free(l);
    CHECK_MSG(tmux_gone(&t, "AUC 0.99\xe2\x94\x82", 1), "the ROC's AUC cut at the border at %d columns", cols);
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
}

TEST(tui_defects_dist_under_the_organism_routers_at_80x24) { dist_under_routers(80, 24); }

TEST(tui_defects_dist_under_the_organism_routers_at_140x45) { dist_under_routers(140, 45); }
