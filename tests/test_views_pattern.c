/* test_views_pattern.c — the pattern view (`A`) of a replay drawn off-screen: its weights and its empty grid.
 *
 * A replay's pattern is built from the far keys each position recorded
 * (`record --attn-top K`). The cursor's line prints their weights with two
 * significant digits however light (at long context a far key's weight is
 * far under 0.01), and a run recorded without ranks says so instead of
 * drawing an empty grid. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/pattern.h"

enum { N_POS = 40 };

/* n positions on 2 x 2 heads with k far keys ranked a position (k 0: none),
 * head L0 H0's two ranked at keys 3 and 5 with weights 0.0031 and 0.25. */
static void fill_ranked(ViewModel *m, int n, int k) {
    for (int p = 0; p < n; p++) {
        StepTrace *t = k ? trace_new_top(2, 2, k) : trace_new(2, 2);
        if (!t) return;
        t->pos = p, t->token = p;
        snprintf(t->piece, sizeof t->piece, " w%d", p);
        for (int c = 0; c < 4; c++) t->gate[c] = 0, t->oracle_logit[c] = -5.0f;
        if (k && p > 5) t->top_pos[0] = 5, t->top_w[0] = 0.25f, t->top_pos[1] = 3, t->top_w[1] = 0.0031f;
        view_push(m, t, NULL);
        trace_free(t);
    }
}

/* The pattern of L0 H0 from the recorded ranks, drawn into a 100 x 20 window. */
static WINDOW *draw_recorded(ViewModel *m, ViewPattern *pt) {
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    memset(pt, 0, sizeof *pt);
    pt->open = 1;
    if (view_pattern_from_recorded(pt, m, 0, 0, 4, 1, NULL)) return NULL;
    WINDOW *w = newwin(20, 100, 0, 0);
    view_draw_pattern(w, pt, m, &pal);
    return w;
}

TEST(views_pattern_prints_light_weights_and_says_why_a_grid_is_empty) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    ViewPattern pt;
    view_init(&m, 2, 2, NULL);
    fill_ranked(&m, N_POS, 2);
    WINDOW *w = draw_recorded(&m, &pt);
    CHECK(w != NULL);
    if (w) {
        CHECK_MSG(fx_contains(w, "1:5 \" w5\" 0.25") && fx_contains(w, "2:3 \" w3\" 0.0031"),
                  "the cursor's line: %s", fx_line(w, getmaxy(w) - 2));
        CHECK(!fx_contains(w, "record --attn-top"));
        delwin(w);
    }
    view_pattern_free(&pt);
    view_free(&m);
    view_init(&m, 2, 2, NULL);
    fill_ranked(&m, N_POS, 0); /* recorded without --attn-top */
    w = draw_recorded(&m, &pt);
    CHECK(w != NULL);
    if (w) {
        int lines = 0;
        for (int y = 0; y < getmaxy(w); y++) lines += strstr(fx_line(w, y), VIEW_PATTERN_UNRANKED) != NULL;
        CHECK_MSG(lines == 2, "the grid and the cursor's line should both say why (%d lines do)", lines);
        delwin(w);
    }
    view_pattern_free(&pt);
    view_free(&m);
    fx_term_close(&term);
}
