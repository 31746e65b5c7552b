/* test_views_dist.c — the distributions pane (`d`) drawn off-screen: its axes and its classes.
 *
 * The pane's counts are set by hand (the app counts them, tests/test_tui_dist.c
 * checks that end to end), so what is checked here is the drawing alone:
 * that each axis label sits under the column it names and that the title
 * says how many cells each class holds beside the AUC. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/dist.h"

/* Counts of a lopsided head: 1 968 cells, 4 of them global. */
static void lopsided(ViewDist *d) {
    memset(d, 0, sizeof *d);
    d->open = d->ready = 1, d->layer = 0, d->head = 1, d->n_pos = 5;
    d->theta_logit = log(0.1 / 0.9);
    d->n = 1968, d->n_global = 4;
    d->hist[0][2] = 1964, d->hist[9][9] = 4;
    d->cal_n[2] = 1964, d->cal_n[9] = 4, d->cal_g[9] = 4;
    for (int i = 0; i < VIEW_DIST_ROC; i++) d->roc[i] = 1.0f;
    d->auc = 1.0;
}

/* The row of w whose text holds needle (-1: none). */
static int row_with(WINDOW *w, const char *needle) {
    for (int y = 0; y < getmaxy(w); y++)
        if (strstr(fx_line(w, y), needle)) return y;
    return -1;
}

static wchar_t char_at(WINDOW *w, int y, int x) {
    wchar_t ch;
    short pair;
    attr_t attr;
    fx_cell(w, y, x, &ch, &pair, &attr);
    return ch;
}

/* The histogram's score axis puts .5 under the sixth of ten bins (two
 * columns each, from column 5) and 1 under the last column; the ROC's
 * axis spans its plot, 1 under the plot's last column (the frame's inner
 * edge); the title names the classes' sizes. */
TEST(views_dist_axes_span_their_plots_and_the_title_sizes_the_classes) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 5);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    ViewDist d;
    lopsided(&d);
    WINDOW *w = newwin(24, 100, 0, 0);
    view_draw_dist(w, &d, &m, &pal);
    CHECK_MSG(strstr(fx_line(w, 0), "1968 cells, 4 global \xc2\xb7 AUC 1.000"), "title: %s", fx_line(w, 0));
    int y = row_with(w, "false-positive rate"); /* the full name at 100 columns */
    CHECK_MSG(y > 0, "no ROC axis");
    if (y > 0) {
        int x0 = 1 + 4; /* the first score bin's column */
        CHECK_MSG(char_at(w, y, x0) == L'0', "0 not under the first bin: %s", fx_line(w, y));
        CHECK_MSG(char_at(w, y, x0 + 2 * 5) == L'5', ".5 not under the sixth bin: %s", fx_line(w, y));
        CHECK_MSG(char_at(w, y, x0 + 2 * VIEW_DIST_BINS - 1) == L'1', "1 not under the last column: %s",
                  fx_line(w, y));
        CHECK_MSG(char_at(w, y, 100 - 2) == L'1', "the ROC's 1 is not under its last column: %s", fx_line(w, y));
    }
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}
