/* flips.c — the same head in the parent and the child run (see flips.h). */
#include "views/flips.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/decide.h"
#include "views/fixed.h"
#include "views/keymap.h"
#include "views/metric.h"
#include "views/paint.h"
#include "views/pin.h"

#define DOT "\xc2\xb7"

/* The gates of cell at history index i in both runs: 1 when both decided
 * there (far keys in both), with *child and *parent the executed gates. */
static int both_gates(const ViewModel *m, int cell, int i, int *child, int *parent) {
    const StepTrace *c = view_trace(m, i), *pa = view_parent_trace(m, i);
    if (!c || !pa || !decide_has_choice(c) || !decide_has_choice(pa) || c->gate[cell] < 0 || pa->gate[cell] < 0 ||
        view_is_fixed(c, cell) || view_is_fixed(pa, cell)) /* a fixed-local head has no gate to flip */
        return 0;
    *child = c->gate[cell], *parent = pa->gate[cell];
    return 1;
}

double view_flip_share(const ViewModel *m, int cell, int p0, int p1, int *n_out) {
    int n = 0, flips = 0, c, pa;
    if (p0 < 0) p0 = 0;
    if (p1 > m->n_hist) p1 = m->n_hist;
    int common = view_parent_common(m); /* another text past it: nothing to compare */
    if (p1 > common) p1 = common;
    for (int i = p0; i < p1; i++)
        if (both_gates(m, cell, i, &c, &pa)) n++, flips += c != pa;
    if (n_out) *n_out = n;
    return n ? (double)flips / n : NAN;
}

void view_flips_toggle(ViewModel *m) {
    if (m->flips_open) {
        m->flips_open = 0;
        return;
    }
    if (m->parent.n <= 0) {
        view_set_status(m, "no parent run to compare with: change a setting (w, t, T, P) to re-evaluate this one");
        return;
    }
    m->flips_open = 1;
}

int view_flips_key(ViewModel *m, int ch) {
    if (!m->flips_open) return 0;
    int cmd = view_key_command(ch);
    int l = m->sel_layer, h = m->sel_head;
    switch (cmd) {
    case VIEW_OP_CLOSE: case VIEW_OP_FLIPS: m->flips_open = 0; return 1;
    case VIEW_OP_UP: l--; break;
    case VIEW_OP_DOWN: l++; break;
    case VIEW_OP_LEFT: h--; break;
    case VIEW_OP_RIGHT: h++; break;
    case VIEW_OP_INSPECT: {
        int n, cell = l * m->n_heads + h;
        double f = view_flip_share(m, cell, 0, m->n_hist, &n);
        m->flips_open = 0;
        if (isnan(f)) view_set_status(m, "L%d H%d selected (no position both runs decided)", l, h);
        else view_set_status(m, "L%d H%d selected: its gate changed at %.1f%% of %d positions", l, h, 100 * f, n);
        return 1;
    }
    default: return 0;
    }
    if (l >= 0 && l < m->n_layers) m->sel_layer = l;
    if (h >= 0 && h < m->n_heads) m->sel_head = h;
    return 1;
}

/* --- drawing --- */

/* Columns per head cell and lines per layer that fit a w×h window's inside
 * (a label column, a row of head numbers, a line for the legend). */
static void cell_size(const ViewModel *m, int w, int h, int *cw, int *rh) {
    int aw = w - 2 - 4, ah = h - 4;
    *cw = m->n_heads > 0 ? aw / m->n_heads : 1;
    *rh = m->n_layers > 0 ? ah / m->n_layers : 1;
    if (*cw > 6) *cw = 6;
    if (*rh > 3) *rh = 3;
    if (*cw < 1) *cw = 1;
    if (*rh < 1) *rh = 1;
}

/* The first of n items shown in vis places, keeping sel in view. */
static int first_shown(int sel, int n, int vis) {
    int f = sel - vis / 2;
    if (f > n - vis) f = n - vis;
    return f < 0 ? 0 : f;
}

void view_draw_flips(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    int cells = m->n_layers * m->n_heads, sel = m->sel_layer * m->n_heads + m->sel_head, n;
    double fs = view_flip_share(m, sel, 0, m->n_hist, &n);
    /* every head's share once a frame; shaded against the most any head
     * flipped, so a map of small shares still shows which */
    double *share_of = malloc((size_t)(cells > 0 ? cells : 1) * sizeof *share_of), top = 0;
    if (!share_of) return;
    for (int c = 0; c < cells; c++) {
        share_of[c] = view_flip_share(m, c, 0, m->n_hist, NULL);
        if (share_of[c] > top) top = share_of[c];
    }
    char title[260], share[48], name[64], prefix[64] = "";
    if (isnan(fs)) snprintf(share, sizeof share, "n/a");
    else snprintf(share, sizeof share, "%.1f%% of %d pos", 100 * fs, n);
    int common = view_parent_common(m), most = m->n_hist > m->parent.n ? m->n_hist : m->parent.n;
    if (common < most && common > 0) /* other text past the prefix both runs share: say what is compared */
        snprintf(prefix, sizeof prefix, " " DOT " common prefix pos 0-%d", common - 1);
    else if (common < most) snprintf(prefix, sizeof prefix, " " DOT " no token in common at pos 0");
    snprintf(title, sizeof title, "flips vs %s%s " DOT " L%d H%d %s " DOT " darkest %.1f%% " DOT
             " share of decided positions whose gate changed", view_parent_name(m, name, sizeof name), prefix,
             m->sel_layer, m->sel_head, share, 100 * top);
    view_frame_box(w, p, title, 1);
    int cw, rh;
    cell_size(m, wd, h, &cw, &rh);
    int vis_h = (wd - 2 - 4) / cw, vis_l = (h - 4) / rh;
    if (vis_h > m->n_heads) vis_h = m->n_heads;
    if (vis_l > m->n_layers) vis_l = m->n_layers;
    int h0 = first_shown(m->sel_head, m->n_heads, vis_h), l0 = first_shown(m->sel_layer, m->n_layers, vis_l);
    for (int j = 0; j < vis_h; j++) /* head numbers: every fifth, and the selected one */
        if ((h0 + j) % 5 == 0 || h0 + j == m->sel_head)
            view_printf(w, 1, 5 + j * cw, cw > 2 ? cw : 2, p->ascii, h0 + j == m->sel_head ? A_BOLD : A_DIM, 0, "%d",
                        h0 + j);
    for (int i = 0; i < vis_l; i++) {
        int l = l0 + i, y = 2 + i * rh;
        view_printf(w, y, 1, 4, p->ascii, l == m->sel_layer ? A_BOLD : A_DIM, 0, "L%d", l);
        for (int j = 0; j < vis_h; j++) {
            int hd = h0 + j, cell = l * m->n_heads + hd, is_sel = l == m->sel_layer && hd == m->sel_head;
            double f = share_of[cell];
            int sw = isnan(f) ? VIEW_SW_NONE : view_level(top > 0 ? (float)(f / top) : 0.f);
            wchar_t ch;
            attr_t a;
            short pair;
            view_cell_style(p, sw, sw, 0, &ch, &a, &pair);
            if (is_sel) a |= A_REVERSE;
            for (int k = 0; k < rh; k++) view_fill(w, y + k, 5 + j * cw, cw - (cw > 2), ch, a, pair);
        }
    }
    free(share_of);
    const char *keys = p->ascii ? " dark: changed most | arrows head | Enter select | X Esc close "
                                : " dark: changed most " DOT " \xe2\x86\x91\xe2\x86\x93\xe2\x86\x90"
                                  "\xe2\x86\x92 head " DOT " Enter select " DOT " X Esc close ";
    view_puts_fit(w, h - 1, 2, wd - 4, keys, p->ascii, A_DIM, 0);
}

void view_draw_parent_row(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewTimeGeom *g) {
    if (!g->y_par) return;
    int cell = m->sel_layer * m->n_heads + m->sel_head;
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    view_puts(w, g->y_par, 1, 7, m->parent.other ? "vs" : "par", 1, A_DIM, 0);
    int common = view_parent_common(m); /* past the prefix both texts share the row stays blank */
    for (int c = 0; c < g->n_tok_vis; c++) {
        int p0 = g->first_tok + c * g->bin, up = 0, down = 0, global = 0, n = 0, ch_, pa;
        for (int i = p0; i < p0 + g->bin && i < common; i++)
            if (both_gates(m, cell, i, &ch_, &pa)) n++, global += pa, up += ch_ && !pa, down += !ch_ && pa;
        const char *mark = up ? "+" : down ? "-" : NULL;
        if (mark) {
            view_puts(w, g->y_par, g->x0 + c, 1, mark, 1, fa | A_BOLD, fp);
            continue;
        }
        int sw = n ? view_level((float)global / n) : VIEW_SW_NONE;
        wchar_t chr;
        attr_t a;
        short pair;
        view_cell_style(p, sw, sw, 0, &chr, &a, &pair);
        view_put(w, g->y_par, g->x0 + c, chr, a, pair);
    }
}
