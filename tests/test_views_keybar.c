/* test_views_keybar.c — the key bar: built from the key table, fitted to the width, in its row.
 *
 * Headless (an off-screen terminal): the bar drawn in a whole frame at 80x24,
 * 140x45 and 250x70, in UTF-8 and under --ascii, against the list written out
 * here by hand; its entries come from the key table's places and name the
 * keys that open the panes; a tiny layout drops it before any pane shrinks. */
#include <stdio.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/keymap.h"
#include "views/layout.h"

/* The whole bar, as a user reads it at a width it fits in. */
static const char *const FULL[] = {"? help",  "H heads", "E every head", "A pattern", "d dist",  "v plots", "R summary",
                                   "D diff",  "B runs",  ": SQL",        "X flips",   "c types", "q quit"};
#define N_FULL (int)(sizeof FULL / sizeof FULL[0])

/* The line the bar must be at width cols: whole entries from the left, two
 * spaces apart after one of margin, while they end before the last column. */
static void expected_bar(int cols, char *out, size_t n, int *count) {
    size_t k = (size_t)snprintf(out, n, " ");
    *count = 0;
    for (int i = 0; i < N_FULL; i++) {
        if ((int)(k + (i ? 2 : 0) + strlen(FULL[i])) > cols - 1) break;
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? "  " : "", FULL[i]);
        ++*count;
    }
}

/* Trailing spaces off a copy of a screen line. */
static void rstrip(char *s) {
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ') s[--n] = 0;
}

/* A frame at cols x rows (ASCII or not): the bar's row must read the
 * expected entries and nothing else, the status line still under it. */
static void check_frame(int cols, int rows, int ascii, int want_entries) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", cols, rows), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 30);
    m.colour = VIEW_COLOUR_256;
    m.ascii = ascii;
    ViewScreen s;
    Err e;
    CHECK_INT(view_screen_init(&s, &m, &e), 0);
    CHECK_INT(view_frame(&s, &m, &e), 0);
    const ViewRect *kb = &s.lay.pane[VIEW_PANE_KEYBAR];
    CHECK_MSG(kb->w == cols && kb->h == 1 && kb->y == rows - 2, "%dx%d: key bar at %d,%d %dx%d", cols, rows, kb->x,
              kb->y, kb->w, kb->h);
    CHECK_INT(s.lay.pane[VIEW_PANE_LEGEND].y, rows - 3);
    char got[512], want[512];
    int count;
    snprintf(got, sizeof got, "%s", fx_line(curscr, rows - 2));
    rstrip(got);
    expected_bar(cols, want, sizeof want, &count);
    CHECK_MSG(!strcmp(got, want), "%dx%d%s: key bar\n  got  '%s'\n  want '%s'", cols, rows, ascii ? " ascii" : "", got,
              want);
    CHECK_MSG(count == want_entries, "%dx%d: %d entries fit, expected %d", cols, rows, count, want_entries);
    CHECK_MSG((int)strlen(got) <= cols - 1, "%dx%d: the bar reaches the last column", cols, rows);
    for (const char *c = got; *c; c++) CHECK_MSG((unsigned char)*c < 128, "%dx%d: a byte past ASCII", cols, rows);
    /* never wrapped: the status line below holds the status line's words, not the bar's */
    CHECK(strstr(fx_line(curscr, rows - 1), "every head") == NULL);
    CHECK(strstr(fx_line(curscr, rows - 1), "paused") != NULL);
    /* the rows drawn by the view functions hold the bar once */
    int seen = 0;
    for (int y = 0; y < rows; y++) seen += strstr(fx_line(curscr, y), "? help  H heads") != NULL;
    CHECK_INT(seen, 1);
    view_screen_free(&s);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_keybar_at_80x24_140x45_250x70_and_ascii) {
    check_frame(80, 24, 0, 8);    /* up to "D diff": the rest drops from the right */
    check_frame(140, 45, 0, 13);  /* everything, q quit last */
    check_frame(250, 70, 0, 13);
    check_frame(80, 24, 1, 8);    /* --ascii: the same text, every byte ASCII */
    check_frame(140, 45, 1, 13);
    check_frame(100, 30, 0, 10);  /* up to ": SQL" */
}

TEST(views_keybar_comes_from_the_key_table) {
    ViewBarEntry e[VIEW_KEYBAR_MAX];
    int n = view_keybar_fit(1000, e);
    CHECK_INT(n, N_FULL);
    /* each entry is a key the table binds, its word the one written above, the places in order */
    static const int OPENS[] = {VIEW_OP_HELP,      VIEW_ACT_HEADS, VIEW_OP_ALLHEADS,  VIEW_ACT_PATTERN, VIEW_ACT_DIST,
                                VIEW_ACT_PLOTS,    VIEW_ACT_SUMMARY, VIEW_ACT_DIFF,   VIEW_ACT_RUNS,    VIEW_ACT_SQL_PROMPT,
                                VIEW_OP_FLIPS,     VIEW_ACT_TOKEN_STATS, VIEW_ACT_QUIT};
    char name[8], text[64];
    for (int i = 0; i < n && i < N_FULL; i++) {
        snprintf(text, sizeof text, "%s %s", view_key_name(e[i].key, name), e[i].word);
        CHECK_MSG(!strcmp(text, FULL[i]), "entry %d: '%s', expected '%s'", i, text, FULL[i]);
        CHECK_MSG(view_key_command(e[i].key) == OPENS[i], "entry %d: key %s runs command %d", i, name,
                  view_key_command(e[i].key));
        if (i) CHECK(e[i].x > e[i - 1].x);
    }
    /* every place a key row gives is on the bar once: no gap, no duplicate */
    int rows, places = 0;
    const ViewBinding *b = view_bindings(&rows);
    for (int r = 0; r < rows; r++)
        for (int s = 0; s < VIEW_KEYS_PER_ROW; s++) places += b[r].bar[s].at > 0;
    CHECK_INT(places, N_FULL);
    /* a narrow bar keeps whole entries: a width one short of an entry's end drops it */
    int end = e[2].x + (int)strlen(FULL[2]);
    CHECK_INT(view_keybar_fit(end + 1, e), 3);
    CHECK_INT(view_keybar_fit(end, e), 2);
    CHECK_INT(view_keybar_fit(3, e), 0);
}

TEST(views_keybar_tiny_layouts_drop_it_first) {
    /* 16 layers at 80x24 with the inspector open: the timeline is at its minimum, so no bar, and
     * every other pane is exactly where it is without one */
    LayoutOpts with = {16, 16, 1, 0, 1, view_help_count(), 1}, without = with;
    without.keybar = 0;
    Layout a, b;
    view_layout(80, 24, &with, &a);
    view_layout(80, 24, &without, &b);
    CHECK_INT(a.pane[VIEW_PANE_KEYBAR].h, 0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    /* stories260K's shape at 80x24: the bar takes the timeline's last line, nothing else moves */
    LayoutOpts s = {5, 8, 0, 0, 1, view_help_count(), 1}, s0 = s;
    s0.keybar = 0;
    view_layout(80, 24, &s, &a);
    view_layout(80, 24, &s0, &b);
    CHECK_INT(a.pane[VIEW_PANE_KEYBAR].h, 1);
    CHECK_INT(a.pane[VIEW_PANE_TIMELINE].h, b.pane[VIEW_PANE_TIMELINE].h - 1);
    for (int p = 0; p < VIEW_PANE_COUNT; p++) {
        if (p == VIEW_PANE_TIMELINE || p == VIEW_PANE_LEGEND || p == VIEW_PANE_KEYBAR) continue;
        CHECK_MSG(!memcmp(&a.pane[p], &b.pane[p], sizeof a.pane[p]), "the bar moved pane %s", view_pane_name(p));
    }
    CHECK_INT(a.pane[VIEW_PANE_LEGEND].y, b.pane[VIEW_PANE_LEGEND].y - 1);
}
