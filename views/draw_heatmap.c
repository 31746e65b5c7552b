/* draw_heatmap.c — layer × head heatmap at the cursor token (see draw.h). */
#include <stdio.h>

#include "views/draw.h"
#include "views/geom.h"
#include "views/paint.h"
#include "views/metric.h"
#include "views/rates.h"

static int half_ok(const ViewPalette *p) { return p->colour != VIEW_COLOUR_NONE && !p->ascii; }

/* The title, the longest form that fits avail columns; where layers or
 * heads are off-screen it says which show ("L8-19 of 24"), and the
 * cursor's token goes first when room is short. Under a run rate it names
 * the positions the rates cover instead of the cursor's ("heads over pos
 * 0-44"). */
static void heat_title(const ViewModel *m, const StepTrace *t, const ViewHeatGeom *g, int ascii, int avail, char *buf,
                       size_t n) {
    const char *dot = ascii ? "|" : "\xc2\xb7";
    char off[2][48] = {"", ""}, label[TRACE_PIECE_MAX * 4] = "";
    if (g->n_layers_vis < m->n_layers)
        snprintf(off[0], sizeof off[0], " %s L%d-%d of %d", dot, g->first_layer, g->first_layer + g->n_layers_vis - 1,
                 m->n_layers);
    if (g->n_heads_vis < m->n_heads)
        snprintf(off[1], sizeof off[1], " %s H%d-%d of %d", dot, g->first_head, g->first_head + g->n_heads_vis - 1,
                 m->n_heads);
    if (t) view_piece_label(t->piece, ascii, label, sizeof label);
    for (int form = 0; form < 3; form++) {
        if (!t) snprintf(buf, n, "heads %s L%d H%d%s%s", dot, m->sel_layer, m->sel_head, off[0], off[1]);
        else if (view_metric_is_rate(m->metric)) /* the cells are rates over the run, not the cursor's values */
            snprintf(buf, n, "%s pos 0-%d %s L%d H%d%s%s", form < 2 ? "heads over" : "over", m->n_hist - 1, dot,
                     m->sel_layer, m->sel_head, off[0], off[1]);
        else if (form == 0)
            snprintf(buf, n, "heads @ pos %d \xc2\xab%.24s\xc2\xbb %s L%d H%d%s%s", t->pos, label, dot, m->sel_layer,
                     m->sel_head, off[0], off[1]);
        else if (form == 1)
            snprintf(buf, n, "heads @ pos %d %s L%d H%d%s%s", t->pos, dot, m->sel_layer, m->sel_head, off[0], off[1]);
        else
            snprintf(buf, n, "pos %d %s L%d H%d%s%s", t->pos, dot, m->sel_layer, m->sel_head, off[0], off[1]);
        if (!t || view_text_width(buf, ascii) <= avail) return;
    }
}

/* Head numbers above the columns; the selected one highlighted. */
static void head_labels(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewHeatGeom *g) {
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    if (g->cw < 2) { /* one column per head: whole numbers every five heads, never a bare last digit */
        int end = -1;
        for (int k = 0; k < g->n_heads_vis; k++) {
            int head = g->first_head + k, x = g->x0 + k;
            if (head % 5 || x <= end) continue;
            end = x + view_printf(w, 1, x, g->x0 + g->n_heads_vis - x, 1, A_DIM, 0, "%d", head);
        }
        /* the selected head's number, whole, over the others, ending on its column when at the right */
        char num[16];
        int len = snprintf(num, sizeof num, "%d", m->sel_head), k = m->sel_head - g->first_head;
        int x = g->x0 + k + len <= g->x0 + g->n_heads_vis ? g->x0 + k : g->x0 + k + 1 - len;
        if (k >= 0 && k < g->n_heads_vis) view_puts(w, 1, x, len, num, 1, fa | A_REVERSE, fp);
        return;
    }
    for (int k = 0; k < g->n_heads_vis; k++) {
        int head = g->first_head + k, x = g->x0 + k * (g->cw + g->gap);
        int sel = head == m->sel_head;
        char num[16];
        snprintf(num, sizeof num, "%*d", g->cw > 3 ? 3 : g->cw, g->cw >= 3 ? head % 1000 : head % 100);
        view_puts(w, 1, x, g->cw, num, 1, sel ? fa | A_REVERSE : A_DIM, sel ? fp : 0);
    }
}

/* Layer label at the start of a line ("L12"); the selected layer's line highlighted. */
static void layer_label(WINDOW *w, const ViewModel *m, const ViewPalette *p, int y, int top, int n) {
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    int sel = m->sel_layer >= top && m->sel_layer < top + n;
    char lab[8];
    snprintf(lab, sizeof lab, top < 100 ? "L%d" : "%d", top);
    view_fill(w, y, 1, 3, L' ', sel ? fa | A_REVERSE : A_DIM, sel ? fp : 0);
    view_puts(w, y, 1, 3, lab, 1, sel ? fa | A_REVERSE : A_DIM, sel ? fp : 0);
}

/* Outline of the selected cell: eighth-blocks (or brackets) in the gap
 * columns either side of it; without gaps the cell itself is reversed. */
static void outline(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewHeatGeom *g) {
    int k = m->sel_head - g->first_head;
    int line = (m->sel_layer - g->first_layer) / (g->half ? 2 : 1);
    if (k < 0 || k >= g->n_heads_vis || line < 0 || m->sel_layer >= g->first_layer + g->n_layers_vis) return;
    int x = g->x0 + k * (g->cw + g->gap), y = g->y0 + line * g->rh;
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    if (g->gap) {
        for (int r = 0; r < g->rh; r++) {
            view_put(w, y + r, x - 1, p->ascii ? L'[' : L'\u2595', fa, fp);
            view_put(w, y + r, x + g->cw, p->ascii ? L']' : L'\u258f', fa, fp);
        }
    } else {
        /* no gap for brackets: reversed without colour; in colour underlined,
         * since reversing a half-block would swap the two layers' colours */
        cchar_t cc;
        mvwin_wch(w, y, x, &cc);
        wchar_t wc[CCHARW_MAX + 1];
        attr_t a;
        short pr;
        getcchar(&cc, wc, &a, &pr, NULL);
        view_put(w, y, x, wc[0], a | (p->colour == VIEW_COLOUR_NONE ? A_REVERSE : A_UNDERLINE | A_BOLD), pr);
    }
}

void view_draw_heatmap(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    const StepTrace *t = view_trace(m, m->cursor);
    ViewHeatGeom g;
    view_heat_geom(m, wd, h, half_ok(p), &g);
    char title[200];
    heat_title(m, t, &g, p->ascii, wd - 5, title, sizeof title);
    view_frame_box(w, p, title, m->focus == VIEW_PANE_HEATMAP);
    if (h < 4 || wd < g.x0 + 2) return;
    head_labels(w, m, p, &g);
    int per_line = g.half ? 2 : 1;
    for (int line = 0; line * per_line < g.n_layers_vis && (line + 1) * g.rh <= g.lines; line++) {
        int top = g.first_layer + line * per_line;
        int has_bottom = g.half && top + 1 < g.first_layer + g.n_layers_vis;
        layer_label(w, m, p, g.y0 + line * g.rh, top, has_bottom ? 2 : 1);
        for (int k = 0; k < g.n_heads_vis; k++) {
            int head = g.first_head + k;
            int st = view_heat_swatch(m, t, top * m->n_heads + head); /* a run rate: the head's, not the cursor's */
            int sb = VIEW_SW_BLANK;
            if (has_bottom) sb = view_heat_swatch(m, t, (top + 1) * m->n_heads + head);
            wchar_t ch;
            attr_t a;
            short pair;
            view_cell_style(p, st, sb, g.half, &ch, &a, &pair);
            for (int r = 0; r < g.rh; r++) view_fill(w, g.y0 + line * g.rh + r, g.x0 + k * (g.cw + g.gap), g.cw, ch, a, pair);
        }
    }
    outline(w, m, p, &g);
}
