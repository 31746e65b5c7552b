/* draw_bars.c — per-layer global rates, AHA beside the oracle (see draw.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/draw.h"
#include "views/geom.h"
#include "views/paint.h"

/* A horizontal bar of fraction f over bw cells, then its percentage. */
static void bar(WINDOW *w, const ViewPalette *p, int y, int x, int bw, float f, ViewText role) {
    attr_t a;
    short pair;
    view_text_style(p, role, &a, &pair);
    if (p->colour == VIEW_COLOUR_NONE && role == VIEW_TX_BAR_ORACLE) a |= A_DIM;
    if (isnan(f)) {
        view_puts(w, y, x, bw + 5, "n/a", 1, A_DIM, 0);
        return;
    }
    float cells = f * bw;
    for (int i = 0; i < bw; i++) {
        float fill = cells - i;
        view_put(w, y, x + i, view_glyph_bar(p, fill > 1 ? 1 : fill), a, pair);
    }
    view_printf(w, y, x + bw, 5, 1, A_NORMAL, 0, " %3.0f%%", 100 * f);
}

void view_draw_bars(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    char title[120];
    snprintf(title, sizeof title, "global rate by layer, pos 0-%d %s AHA | oracle (%s %.2f)",
             m->cursor < 0 ? 0 : m->cursor, p->ascii ? "-" : "\xc2\xb7", p->ascii ? "theta" : "\xce\xb8", decide_prob(m->hdr.theta_logit));
    view_frame_box(w, p, title, m->focus == VIEW_PANE_BARS);
    ViewBarsGeom g;
    view_bars_geom(m, wd, h, &g);
    if (g.n_layers_vis <= 0 || m->n_hist == 0) return;
    float *rates = malloc(2 * (size_t)m->n_layers * sizeof *rates);
    if (!rates) return;
    view_layer_rates(m, m->cursor, rates, rates + m->n_layers);
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    for (int i = 0; i < g.n_layers_vis; i++) {
        int l = g.first_layer + i, y = g.y0 + i, sel = l == m->sel_layer;
        view_printf(w, y, 1, g.label_w, 1, sel ? fa | A_REVERSE : A_DIM, sel ? fp : 0, "L%-2d", l);
        int x = 1 + g.label_w;
        bar(w, p, y, x, g.bar_w, rates[l], VIEW_TX_BAR_AHA);
        bar(w, p, y, x + g.bar_w + 6, g.bar_w, rates[m->n_layers + l], VIEW_TX_BAR_ORACLE);
    }
    free(rates);
}
