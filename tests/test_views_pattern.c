/* test_views_pattern.c — the pattern view (`A`) of a replay drawn off-screen: its weights and its empty grid.
 *
 * A replay's pattern is built from the far keys each position recorded
 * (`record --attn-top K`). The cursor's line prints their weights with two
 * significant digits however light (at long context a far key's weight is
 * far under 0.01), and a run recorded without ranks says so instead of
 * drawing an empty grid. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/pattern.h"
#include "views/paint.h"

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

/* n positions, every head ranking key pos / 4 at weight 0.9 (the "copied" key). */
static void fill_copy(ViewModel *m, int n) {
    for (int p = 0; p < n; p++) {
        StepTrace *t = trace_new_top(2, 2, 2);
        if (!t) return;
        t->pos = p, t->token = p;
        snprintf(t->piece, sizeof t->piece, " w%d", p);
        for (int c = 0; c < 4; c++) t->gate[c] = 1, t->top_pos[c * 2] = p / 4, t->top_w[c * 2] = 0.9f;
        view_push(m, t, NULL);
        trace_free(t);
    }
}

TEST(views_pattern_zooms_about_the_cursor_row_and_its_heaviest_key) {
    static const int sizes[][2] = {{80, 14}, {140, 35}, {250, 60}};
    for (size_t s = 0; s < 3; s++) {
        ViewModel m;
        view_init(&m, 2, 2, NULL);
        fill_copy(&m, 600);
        m.cursor = 505; /* its heaviest key: 126 */
        ViewPattern pt;
        memset(&pt, 0, sizeof pt);
        pt.open = 1;
        CHECK_INT(view_pattern_from_recorded(&pt, &m, 0, 0, 32, 0, NULL), 0);
        view_pattern_focus(&pt, &m);
        CHECK(pt.focus_q == 505 && pt.focus_k == 126);
        int w = sizes[s][0], h = sizes[s][1], presses = 0;
        ViewPatternGeom g;
        do view_pattern_key(&pt, '+', w, h), view_pattern_geom(&pt, w, h, &g);
        while (++presses < 12 && (g.rq > 1 || g.rk > 1));
        CHECK_MSG(g.rq == 1 && g.rk == 1, "%dx%d: %d presses leave %dx%d a cell", w, h, presses, g.rq, g.rk);
        /* after every press the cursor's row and its key are on screen, near the middle */
        CHECK_MSG(505 >= g.q0 && 505 < g.q0 + g.rows * g.rq, "%dx%d: rows %d+%d", w, h, g.q0, g.rows);
        CHECK_MSG(126 >= g.k0 && 126 < g.k0 + g.cols * g.rk, "%dx%d: keys %d+%d", w, h, g.k0, g.cols);
        CHECK(abs((505 - g.q0) - g.rows / 2) <= 1 && abs((126 - g.k0) - g.cols / 2) <= 1);
        /* zooming out keeps them too */
        view_pattern_key(&pt, '-', w, h), view_pattern_geom(&pt, w, h, &g);
        CHECK(505 >= g.q0 && 505 < g.q0 + g.rows * g.rq && 126 >= g.k0 && 126 < g.k0 + g.cols * g.rk);
        view_pattern_free(&pt);
        view_free(&m);
    }
}

/* + pressed before the pattern's data arrived (a slow build, a long run)
 * still zooms about the cursor once it comes: before, the pan was taken at
 * the press, with nothing to centre on, and the zoomed grid sat at 0,0. An
 * arrow then pans away from the focus, and the cursor no longer pulls it. */
TEST(views_pattern_zoom_pressed_before_the_data_lands_on_the_cursor) {
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fill_copy(&m, 600);
    m.cursor = 505;
    ViewPattern pt;
    memset(&pt, 0, sizeof pt);
    pt.open = 1;
    int w = 80, h = 14;
    view_pattern_focus(&pt, &m); /* the row's keys unknown yet: the focus is the row itself */
    for (int i = 0; i < 3; i++) view_pattern_key(&pt, '+', w, h);
    CHECK_INT(pt.zoom, 3);
    CHECK_INT(view_pattern_from_recorded(&pt, &m, 0, 0, 32, 0, NULL), 0);
    view_pattern_focus(&pt, &m); /* what the controller does at each poll while zoomed */
    ViewPatternGeom g;
    view_pattern_geom(&pt, w, h, &g);
    CHECK_MSG(505 >= g.q0 && 505 < g.q0 + g.rows * g.rq, "rows %d+%d x%d", g.q0, g.rows, g.rq);
    CHECK_MSG(126 >= g.k0 && 126 < g.k0 + g.cols * g.rk, "keys %d+%d x%d", g.k0, g.cols, g.rk);
    int q0 = g.q0;
    view_pattern_key(&pt, KEY_UP, w, h), view_pattern_geom(&pt, w, h, &g);
    CHECK_MSG(g.q0 < q0, "up pans from %d to %d", q0, g.q0);
    m.cursor = 100, view_pattern_focus(&pt, &m), view_pattern_geom(&pt, w, h, &g);
    CHECK_MSG(g.q0 < q0 && g.q0 > 100, "after a pan the cursor does not move the grid: %d", g.q0);
    view_pattern_free(&pt);
    view_free(&m);
}

TEST(views_pattern_window_band_and_token_text_on_the_key_axis) {
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fill_copy(&m, 60);
    ViewPattern pt;
    memset(&pt, 0, sizeof pt);
    CHECK_INT(view_pattern_from_recorded(&pt, &m, 0, 0, 8, 0, NULL), 0);
    ViewPatternGeom g;
    view_pattern_geom(&pt, 200, 70, &g); /* one position a cell */
    CHECK(g.rq == 1 && g.rk == 1);
    int row = 40 - g.q0; /* query 40: keys 33 … 40 are its window */
    for (int c = 0; c < g.cols; c++) {
        int k = g.k0 + c;
        CHECK_MSG(view_pattern_in_band(&pt, &g, row, c) == (k >= 33 && k <= 40), "key %d", k);
    }
    char buf[64];
    int len = view_pattern_axis_label(&m, &g, 12, 0, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "12\xc2\xb7 w12") || !strcmp(buf, "12\xc2\xb7\xc2\xb7w12"), "label '%s'", buf);
    CHECK_INT(len, view_text_width(buf, 0));
    view_pattern_geom(&pt, 40, 20, &g); /* pooled: numbers only */
    view_pattern_axis_label(&m, &g, 12, 0, buf, sizeof buf);
    CHECK_MSG(g.rk > 1 && !strcmp(buf, "12"), "pooled label '%s'", buf);
    view_pattern_free(&pt);
    view_free(&m);
}
