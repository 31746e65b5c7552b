/* draw_heatmap.c — layer × head heatmap at the cursor token (see draw.h). */
#include <stdio.h>

#include "views/draw.h"
#include "views/geom.h"
#include "views/paint.h"

static int half_ok(const ViewPalette *p) { return p->colour != VIEW_COLOUR_NONE && !p->ascii; }

static void heat_title(const ViewModel *m, const StepTrace *t, int ascii, char *buf, size_t n) {
    if (!t) {
        snprintf(buf, n, "heads \xc2\xb7 L%d H%d", m->sel_layer, m->sel_head);
        return;
    }
    char label[TRACE_PIECE_MAX * 4];
    view_piece_label(t->piece, ascii, label, sizeof label);
    snprintf(buf, n, "heads @ pos %d \xc2\xab%.24s\xc2\xbb \xc2\xb7 L%d H%d", t->pos, label, m->sel_layer, m->sel_head);
}

/* Head numbers above the columns; the selected one highlighted. */
static void head_labels(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewHeatGeom *g) {
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    for (int k = 0; k < g->n_heads_vis; k++) {
        int head = g->first_head + k, x = g->x0 + k * (g->cw + g->gap);
        int sel = head == m->sel_head;
        char num[16];
        if (g->cw >= 2) snprintf(num, sizeof num, "%*d", g->cw > 3 ? 3 : g->cw, head % 100);
        else snprintf(num, sizeof num, "%d", head % 10);
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
    } else if (p->colour == VIEW_COLOUR_NONE) {
        cchar_t cc;
        mvwin_wch(w, y, x, &cc);
        wchar_t wc[CCHARW_MAX + 1];
        attr_t a;
        short pr;
        getcchar(&cc, wc, &a, &pr, NULL);
        view_put(w, y, x, wc[0], a | A_REVERSE, pr);
    }
}

void view_draw_heatmap(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    const StepTrace *t = view_trace(m, m->cursor);
    char title[160];
    heat_title(m, t, p->ascii, title, sizeof title);
    view_frame_box(w, p, title, m->focus == VIEW_PANE_HEATMAP);
    ViewHeatGeom g;
    view_heat_geom(m, wd, h, half_ok(p), &g);
    if (h < 4 || wd < g.x0 + 2) return;
    head_labels(w, m, p, &g);
    int per_line = g.half ? 2 : 1;
    for (int line = 0; line * per_line < g.n_layers_vis && (line + 1) * g.rh <= g.lines; line++) {
        int top = g.first_layer + line * per_line;
        int has_bottom = g.half && top + 1 < g.first_layer + g.n_layers_vis;
        layer_label(w, m, p, g.y0 + line * g.rh, top, has_bottom ? 2 : 1);
        for (int k = 0; k < g.n_heads_vis; k++) {
            int head = g.first_head + k;
            int st = t ? view_swatch(m, t, top * m->n_heads + head) : VIEW_SW_NONE;
            int sb = VIEW_SW_BLANK;
            if (has_bottom) sb = t ? view_swatch(m, t, (top + 1) * m->n_heads + head) : VIEW_SW_NONE;
            wchar_t ch;
            attr_t a;
            short pair;
            view_cell_style(p, st, sb, g.half, &ch, &a, &pair);
            for (int r = 0; r < g.rh; r++) view_fill(w, g.y0 + line * g.rh + r, g.x0 + k * (g.cw + g.gap), g.cw, ch, a, pair);
        }
    }
    outline(w, m, p, &g);
}
