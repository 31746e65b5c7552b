/* test_views_allheads.c — every head at the cursor (`E`): its layout at many sizes, each strip, its keys.
 *
 * The layout must keep every drawn head inside the window and the
 * selected head on screen at 80×24 up to 250×70, on 4 × 4 up to 32 × 32
 * heads; a strip puts a ranked key's weight in the column of its position
 * and the window band over the unranked local set, the exact row instead
 * where the app handed one over; arrows move the selection and Enter
 * selects, naming the head's heaviest key. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/allheads.h"

/* n positions on L × H heads, each head ranking key (cell * 7) % (pos - 8) at weight 0.5. */
static void fill(ViewModel *m, int L, int H, int n) {
    view_init(m, L, H, NULL);
    m->hdr.window = 8, m->hdr.sinks = 0;
    for (int p = 0; p < n; p++) {
        StepTrace *t = trace_new_top(L, H, 2);
        if (!t) return;
        t->pos = p;
        snprintf(t->piece, sizeof t->piece, " w%d", p);
        for (int c = 0; p > 8 && c < L * H; c++) t->top_pos[c * 2] = (c * 7) % (p - 8), t->top_w[c * 2] = 0.5f;
        view_push(m, t, NULL);
        trace_free(t);
    }
}

TEST(views_allheads_layout_fits_and_keeps_the_selection_in_view) {
    static const int sizes[][2] = {{80, 24}, {100, 30}, {140, 45}, {250, 70}};
    static const int shapes[][2] = {{4, 4}, {16, 32}, {32, 32}, {26, 4}};
    for (size_t s = 0; s < 4; s++)
        for (size_t k = 0; k < 4; k++) {
            ViewModel m;
            fill(&m, shapes[k][0], shapes[k][1], 3);
            m.sel_layer = shapes[k][0] - 1, m.sel_head = shapes[k][1] - 1; /* the far corner */
            int w = sizes[s][0], h = sizes[s][1] - 10; /* the overlay's share of the screen */
            ViewAllHeadsGeom g;
            view_allheads_geom(&m, w, h, &g);
            CHECK_MSG(g.sw >= 1 && g.cw == g.sw + 1 && 1 + g.label_w + g.nh * g.cw <= w - 1, "%dx%d on %dx%d: %d heads of %d",
                      w, h, shapes[k][0], shapes[k][1], g.nh, g.cw);
            CHECK(g.gy + g.nl * g.lines <= h - 1 && g.nl >= 1);
            CHECK(m.sel_layer >= g.l0 && m.sel_layer < g.l0 + g.nl && m.sel_head >= g.h0 && m.sel_head < g.h0 + g.nh);
            if (shapes[k][1] * 2 <= w - 2 - g.label_w) CHECK_INT(g.nh, shapes[k][1]); /* every head when they fit */
            view_free(&m);
        }
}

TEST(views_allheads_strip_places_weights_band_and_exact_row) {
    ViewModel m;
    fill(&m, 2, 2, 40); /* at pos 39: cell c ranks key (7c) % 31 */
    const StepTrace *t = m.hist[39];
    float v[40];
    CHECK_INT(view_allheads_strip(&m, t, 3, 40, v), 0);
    int ranked = (3 * 7) % 31, n_band = 0;
    for (int i = 0; i < 40; i++) {
        if (i == ranked) CHECK_NEAR(v[i], 0.5, 1e-6);
        else if (i >= 32) CHECK_MSG(v[i] == VIEW_ALLHEADS_BAND, "key %d in the window: %g", i, v[i]);
        else CHECK_MSG(v[i] == VIEW_ALLHEADS_NONE, "key %d: %g", i, v[i]);
        n_band += v[i] == VIEW_ALLHEADS_BAND;
    }
    CHECK_INT(n_band, 8);
    CHECK_INT(view_allheads_strip(&m, t, 3, 10, v), 0); /* 4 keys a column */
    CHECK_NEAR(v[ranked / 4], 0.5, 1e-6);
    CHECK(v[9] == VIEW_ALLHEADS_BAND && v[7] == VIEW_ALLHEADS_NONE);
    float row[40] = {0};
    row[36] = 0.75f;
    m.attn = (ViewAttn){39, 1, 1, 40, row, 40, 8, 0};
    CHECK_INT(view_allheads_strip(&m, t, 3, 40, v), 1); /* the exact row: the window's keys too */
    CHECK_NEAR(v[36], 0.75, 1e-6);
    CHECK_NEAR(v[0], 0, 1e-6);
    m.attn.w = NULL;
    view_free(&m);
}

TEST(views_allheads_keys_move_and_enter_selects) {
    ViewModel m;
    fill(&m, 4, 4, 40);
    CHECK_INT(view_key(&m, 'E'), VIEW_ACT_NONE);
    CHECK_INT(m.allheads_open, 1);
    view_key(&m, KEY_DOWN), view_key(&m, KEY_DOWN), view_key(&m, KEY_RIGHT);
    CHECK(m.sel_layer == 2 && m.sel_head == 1 && m.allheads_open);
    view_key(&m, '['); /* the cursor still moves under the overlay */
    CHECK_INT(m.cursor, 38);
    view_key(&m, '\n');
    CHECK_INT(m.allheads_open, 0);
    char want[96];
    snprintf(want, sizeof want, "L2 H1 selected: its heaviest key at pos 38 is %d \" w%d\" 0.50", (9 * 7) % 30,
             (9 * 7) % 30);
    CHECK_MSG(!strcmp(m.status, want), "status: %s", m.status);
    view_key(&m, 'E'), view_key(&m, 27);
    CHECK_INT(m.allheads_open, 0);
    view_free(&m);
}

TEST(views_allheads_drawn_marks_the_copying_head) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    fill(&m, 2, 2, 40);
    m.hist[39]->top_w[2 * 2] = 1.0f; /* head L1 H0 copies key (14 % 31) with all its weight */
    ViewMark mk = {14, VIEW_MARK_NEEDLE};
    view_set_marks(&m, &mk, 1, NULL);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(12, 100, 0, 0);
    view_draw_allheads(w, &m, &pal);
    CHECK(fx_contains(w, "every head at the cursor"));
    CHECK_MSG(fx_contains(w, "14 \" w14\" 1.00"), "L1: %s / %s", fx_line(w, 4), fx_line(w, 5));
    CHECK_MSG(fx_contains(w, "\xe2\x97\x86"), "the needle's column: %s", fx_line(w, 1)); /* ◆ */
    CHECK_MSG(fx_contains(w, "\xe2\x96\x88"), "the copying head's full block: %s", fx_line(w, 4));
    delwin(w);
    fx_term_close(&term);
    view_free(&m);
}
