/* test_views_spark.c — the inspector's sparklines over a run longer than their columns.
 *
 * Where positions outnumber the columns each column pools a bin of them;
 * a head whose score alternates 0 and 1 must read as half, not as full:
 * the bin's maximum saturated every column of a long run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/decide.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/draw.h"
#include "views/geom.h"

enum { N_POS = 400 };

TEST(views_inspector_sparkline_bins_show_the_mean) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 1, 1, NULL);
    StepTrace *t = trace_new(1, 1);
    for (int p = 0; p < N_POS; p++) {
        trace_clear(t);
        t->pos = p, t->n_far = 10;
        t->score[0] = (float)(p % 2), t->gate[0] = p % 2;
        t->oracle_logit[0] = (float)decide_theta_logit(0.5);
        view_push(&m, t, NULL);
    }
    trace_free(t);
    m.inspector_open = 1;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(14, 100, 0, 0);
    view_draw_inspector(w, &m, &pal);
    ViewInspGeom g;
    view_insp_geom(&m, 100, 14, &g);
    CHECK_MSG(g.n_tok_vis > 0 && g.n_tok_vis < N_POS, "%d columns for %d positions", g.n_tok_vis, N_POS);
    int y = -1;
    for (int r = g.y_spark; r < g.y_strip && y < 0; r++)
        if (strstr(fx_line(w, r), "router")) y = r;
    CHECK_MSG(y >= 0, "no router sparkline");
    if (y >= 0 && g.n_tok_vis > 1) {
        wchar_t ch, half = view_glyph_spark(&pal, 0.5f);
        short pair;
        attr_t a;
        fx_cell(w, y, g.x0 + g.n_tok_vis / 2, &ch, &pair, &a);
        CHECK_MSG(ch == half, "a bin of 0s and 1s drew %lc, not the half glyph %lc: %s", (wint_t)ch, (wint_t)half,
                  fx_line(w, y));
    }
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}
