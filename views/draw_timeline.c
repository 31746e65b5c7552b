/* draw_timeline.c — rows (layer, head) × columns tokens (see draw.h). */
#include <stdio.h>
#include <string.h>

#include "views/draw.h"
#include "views/fixed.h"
#include "views/flips.h"
#include "views/geom.h"
#include "views/paint.h"
#include "views/pin.h"

static int half_ok(const ViewPalette *p) { return p->colour != VIEW_COLOUR_NONE && !p->ascii; }

/* The last position the columns shown hold. */
static int last_pos(const ViewModel *m, const ViewTimeGeom *g) {
    int end = g->first_tok + g->n_tok_vis * g->bin;
    return (end < m->n_hist ? end : m->n_hist) - 1;
}

static void time_title(const ViewModel *m, const ViewTimeGeom *g, char *buf, size_t n) {
    char pin[96] = ""; /* the pinned row's head, named early so a cut title keeps it */
    if (g->y_pin) snprintf(pin, sizeof pin, " \xc2\xb7 pin L%d H%d", m->pin_layer, m->pin_head);
    if (g->y_par) /* the parent's row names its run, as early ("vs run 3": one chosen in B) */
        snprintf(pin + strlen(pin), sizeof pin - strlen(pin), " \xc2\xb7 %s %s", m->parent.other ? "vs" : "par",
                 m->parent.label[0] ? m->parent.label : "run");
    char bin[80] = ""; /* what a binned column holds, and how its value is made */
    if (g->bin > 1)
        snprintf(bin, sizeof bin, " \xc2\xb7 1 col = %d pos (%s)", g->bin,
                 !m->timeline_layers && m->metric == VIEW_METRIC_AGREE ? "worst" : "mean");
    if (m->timeline_layers) {
        snprintf(buf, n, "timeline%s \xc2\xb7 per layer: share of heads global \xc2\xb7 pos %d-%d of %d%s \xc2\xb7 L for heads",
                 pin, g->first_tok, last_pos(m, g), m->n_hist, bin);
        return;
    }
    if (m->n_hist == 0) {
        snprintf(buf, n, "timeline%s \xc2\xb7 %s", pin, view_metric_short(m->metric));
        return;
    }
    snprintf(buf, n, "timeline%s \xc2\xb7 %s \xc2\xb7 pos %d-%d of %d%s \xc2\xb7 heads %d-%d of %d", pin,
             view_metric_short(m->metric), g->first_tok, last_pos(m, g), m->n_hist, bin, g->first_row,
             g->first_row + g->n_rows_vis - 1, m->n_layers * m->n_heads);
}

/* The line's first row as "L#H#" ("L#" per layer), bright where a layer
 * starts, and ▸ on the line that holds the selected head; a half-block
 * line holding the selected head in its lower half names that one (a
 * click on the line picks it), so odd heads are named too. */
static void row_label(WINDOW *w, const ViewModel *m, const ViewPalette *p, int y, int row, int n) {
    int H = m->timeline_layers ? 1 : m->n_heads; /* per-layer rows: every row starts a layer */
    int sel = m->timeline_layers ? m->sel_layer : m->sel_layer * H + m->sel_head;
    char lab[16];
    if (n == 2 && sel == row + 1) row++;
    if (m->timeline_layers) snprintf(lab, sizeof lab, "L%d", row);
    else snprintf(lab, sizeof lab, "L%dH%d", row / H, row % H);
    view_puts(w, y, 1, 6, lab, 1, row % H == 0 ? A_NORMAL : A_DIM, 0);
    if (sel >= row && sel < row + n) {
        attr_t fa;
        short fp;
        view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
        view_put(w, y, 7, p->ascii ? L'>' : L'\u25b8', fa, fp);
    }
}

/* The mark of column c's positions (view_mark_in). */
static ViewMarkKind col_mark(const ViewModel *m, const ViewTimeGeom *g, int c) {
    int p0 = g->first_tok + c * g->bin;
    return view_mark_in(m, p0, p0 + g->bin);
}

/* 1 if a column of [c, c + len) holds a mark, which a number must not hide. */
static int marks_under(const ViewModel *m, const ViewTimeGeom *g, int c, int len) {
    for (int k = c; k < c + len && k < g->n_tok_vis; k++)
        if (col_mark(m, g, k)) return 1;
    return 0;
}

/* Position numbers on the bottom border, every ten columns' first
 * positions where they fit, so a column can be read as a position; none
 * where the cursor's ▲ (column cur) or a mark would cut one short. */
static void position_axis(WINDOW *w, const ViewModel *m, const ViewTimeGeom *g, int h, int cur) {
    int last_end = -1;
    for (int c = 0; c < g->n_tok_vis; c++) {
        int pos = g->first_tok + c * g->bin;
        if (pos % (10 * g->bin) != 0 || g->x0 + c <= last_end) continue;
        char num[16];
        int len = snprintf(num, sizeof num, "%d", pos);
        if (c + len > g->n_cols) break;
        if ((cur >= c && cur < c + len) || marks_under(m, g, c, len)) continue;
        view_puts(w, h - 1, g->x0 + c, len, num, 1, A_DIM, 0);
        last_end = g->x0 + c + len;
    }
}

/* A layer's cell in per-layer mode: the share of its heads that ran global
 * over positions p0 .. p1-1 (decisions only; a bin's is the share over all
 * its decisions, the mean of equal-sized positions' shares), on the gradient;
 * a layer the architecture windows is fixed-local. */
static int layer_swatch(const ViewModel *m, int p0, int p1, int layer) {
    if (p0 < m->n_hist && view_layer_fixed(m->hist[p0], layer)) return VIEW_SW_FIXED; /* its heads decide nothing */
    int n = 0, g = 0;
    for (int i = p0; i < p1 && i < m->n_hist; i++)
        for (int c = layer * m->n_heads; c < (layer + 1) * m->n_heads; c++) {
            int d = view_decide(m->hist[i], c, DECIDE_EXECUTED, m->hdr.tau, m->hdr.theta_logit);
            if (d >= 0) n++, g += d;
        }
    return view_level(n ? (float)g / n : NAN);
}

/* One row's cell for column c: a position, or a bin of them. */
static int cell_swatch(const ViewModel *m, const ViewTimeGeom *g, int c, int row) {
    int p0 = g->first_tok + c * g->bin;
    return m->timeline_layers ? layer_swatch(m, p0, p0 + g->bin, row) : view_swatch_bin(m, row, p0, p0 + g->bin);
}

/* Each marked column's glyph on the bottom border, under its cells. */
static void mark_axis(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewTimeGeom *g, int h) {
    for (int c = 0; m->n_marks > 0 && c < g->n_tok_vis; c++) {
        ViewMarkKind k = col_mark(m, g, c);
        if (!k) continue;
        attr_t a;
        short pair;
        view_mark_style(p, k, &a, &pair);
        view_put(w, h - 1, g->x0 + c, view_mark_glyph(k, p->ascii), a, pair);
    }
}

/* ▲ on the bottom border under the cursor's column (the top border holds the title). */
static void cursor_marks(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewTimeGeom *g, int h) {
    if (m->cursor < g->first_tok) return;
    int c = (m->cursor - g->first_tok) / g->bin;
    if (c >= g->n_tok_vis) return;
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    view_put(w, h - 1, g->x0 + c, p->ascii ? L'^' : L'\u25b2', fa, fp);
}

void view_draw_timeline(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    ViewTimeGeom g;
    view_time_geom(m, wd, h, half_ok(p), &g);
    char title[320];
    time_title(m, &g, title, sizeof title);
    view_frame_box(w, p, title, m->focus == VIEW_PANE_TIMELINE);
    if (g.lines <= 0 || g.n_cols <= 0) return;
    int per_line = g.half ? 2 : 1;
    for (int line = 0; line < g.lines && line * per_line < g.n_rows_vis; line++) {
        int row = g.first_row + line * per_line;
        int has_bottom = g.half && row + 1 < g.first_row + g.n_rows_vis;
        row_label(w, m, p, g.y0 + line, row, has_bottom ? 2 : 1);
        wmove(w, g.y0 + line, g.x0);
        for (int c = 0; c < g.n_tok_vis; c++) {
            int st = cell_swatch(m, &g, c, row);
            int sb = has_bottom ? cell_swatch(m, &g, c, row + 1) : VIEW_SW_BLANK;
            wchar_t ch;
            attr_t a;
            short pair;
            view_cell_style(p, st, sb, g.half, &ch, &a, &pair);
            cchar_t cc;
            wchar_t s[2] = {ch, L'\0'};
            setcchar(&cc, s, a, pair, NULL);
            wadd_wch(w, &cc); /* cells of a line are adjacent: no per-cell move */
        }
    }
    view_draw_pin_row(w, m, p, &g);
    view_draw_parent_row(w, m, p, &g);
    position_axis(w, m, &g, h, m->cursor >= g.first_tok ? (m->cursor - g.first_tok) / g.bin : -1);
    mark_axis(w, m, p, &g, h);
    cursor_marks(w, m, p, &g, h); /* the cursor over a mark: the mark is in the token pane's strip */
}
