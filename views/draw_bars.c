/* draw_bars.c — per-layer global rates, AHA beside the oracle (see draw.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/draw.h"
#include "views/explain.h"
#include "views/fixed.h"
#include "views/geom.h"
#include "views/paint.h"

/* A horizontal bar of fraction f over bw cells, then (with label) its
 * percentage: a bar several lines thick says it once. */
static void bar(WINDOW *w, const ViewPalette *p, int y, int x, int bw, float f, ViewText role, int label) {
    attr_t a;
    short pair;
    view_text_style(p, role, &a, &pair);
    if (p->colour == VIEW_COLOUR_NONE && role == VIEW_TX_BAR_ORACLE) a |= A_DIM;
    if (isnan(f)) {
        if (label) view_puts(w, y, x, bw + 5, "n/a", 1, A_DIM, 0);
        return;
    }
    float cells = f * bw;
    for (int i = 0; i < bw; i++) {
        float fill = cells - i;
        view_put(w, y, x + i, view_glyph_bar(p, fill > 1 ? 1 : fill), a, pair);
    }
    if (!label) return;
    char pc[16];
    /* a rate of counts: exactly all or none prints so; just short of all reads ">99%", not "100%" */
    if (f <= 0 || f >= 1) snprintf(pc, sizeof pc, "%.0f%%", 100 * f);
    else view_share_text(pc, sizeof pc, f);
    view_printf(w, y, x + bw, 5, 1, A_NORMAL, 0, " %4s", pc);
}

/* The title, the longest of its forms that fits in avail columns, so the
 * two columns' names (the left one's predictor, the oracle's θ) always show. */
static void bars_title(char *title, size_t n, const ViewModel *m, const ViewPalette *p, int has_aha, int avail,
                       const ViewBarsGeom *g) {
    static const char *const form_executed[2] = {"executed (no routers)", "executed"};
    const char *dot = p->ascii ? "-" : "\xc2\xb7", *th = p->ascii ? "theta" : "\xce\xb8";
    /* without router scores the left column counts the executed gates (view_aha_decision): say so */
    const char *left = has_aha ? "AHA" : form_executed[0];
    int lo, hi, span = view_span_range(m, m->cursor < 0 ? 0 : m->cursor, &lo, &hi);
    char over[40]; /* the positions the bars count: up to the cursor, or the span */
    if (span) snprintf(over, sizeof over, "span %d-%d", m->span.lo, m->span.hi);
    else snprintf(over, sizeof over, "pos 0-%d", hi < 0 ? 0 : hi);
    char theta[16]; /* θ 0.001 reads 0.001, as the header says it, not 0.00 */
    view_unit_text(theta, sizeof theta, decide_prob(m->hdr.theta_logit), 2);
    char range[48] = ""; /* the layers shown when not all fit, as the heatmap beside names its own */
    if (g->n_layers_vis > 0 && g->n_layers_vis < m->n_layers)
        snprintf(range, sizeof range, " %s L%d-%d of %d", dot, g->first_layer, g->first_layer + g->n_layers_vis - 1,
                 m->n_layers);
    for (int form = 0; form < 3; form++) {
        if (!has_aha) left = form_executed[form > 0];
        if (form == 0)
            snprintf(title, n, "global rate by layer, %s %s %s | oracle (%s %s)%s", over, dot, left, th, theta,
                     range);
        else if (form == 1 && span)
            snprintf(title, n, "%s %s %s | oracle %s %s%s", over, dot, left, th, theta, range);
        else if (form == 1)
            snprintf(title, n, "global by layer %s %s | oracle %s %s%s", dot, left, th, theta, range);
        else
            snprintf(title, n, "%s | oracle %s %s%s", left, th, theta, range);
        if (view_text_width(title, p->ascii) <= avail) return;
    }
}

void view_draw_bars(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    float *rates = m->n_hist > 0 ? malloc(2 * (size_t)m->n_layers * sizeof *rates) : NULL;
    int lo, hi;
    view_span_range(m, m->cursor, &lo, &hi);
    if (rates) view_layer_rates_in(m, lo, hi, rates, rates + m->n_layers);
    const StepTrace *t = view_trace(m, m->cursor);
    int has_aha = !t; /* a run has router scores at every position or at none */
    for (int c = 0; t && c < trace_cells(t) && !has_aha; c++) has_aha = !isnan(t->score[c]);
    ViewBarsGeom g;
    view_bars_geom(m, wd, h, &g);
    char title[200];
    bars_title(title, sizeof title, m, p, has_aha, wd - 5, &g);
    view_frame_box(w, p, title, m->focus == VIEW_PANE_BARS);
    if (g.n_layers_vis <= 0 || !rates) {
        free(rates);
        return;
    }
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    for (int i = 0; i < g.n_layers_vis; i++) {
        int l = g.first_layer + i, y = g.y0 + i * g.rh, sel = l == m->sel_layer;
        view_printf(w, y, 1, g.label_w, 1, sel ? fa | A_REVERSE : A_DIM, sel ? fp : 0, "L%-2d", l);
        int x = 1 + g.label_w, W = view_fixed_window(t, l * m->n_heads);
        if (W > 0) { /* no rate to draw: its heads decide nothing */
            view_printf(w, y, x, wd - 1 - x, p->ascii, A_DIM, 0, "fixed-local (layer window %d)", W);
            continue;
        }
        for (int k = 0; k < g.rh; k++) { /* a thick bar; its percentage on its first line */
            bar(w, p, y + k, x, g.bar_w, rates[l], VIEW_TX_BAR_AHA, k == 0);
            bar(w, p, y + k, x + g.bar_w + 6, g.bar_w, rates[m->n_layers + l], VIEW_TX_BAR_ORACLE, k == 0);
        }
    }
    free(rates);
}
