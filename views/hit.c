/* hit.c — what lies under a screen cell: the pure mouse hit-test (view.h). */
#include "views/geom.h"
#include "views/pin.h"

static void hit_heatmap(const ViewModel *m, int w, int h, int lx, int ly, ViewHit *out) {
    ViewHeatGeom g;
    view_heat_geom(m, w, h, view_layout_opts(m).half_blocks, &g);
    if (ly < g.y0 || ly >= g.y0 + g.lines || lx < g.x0) return;
    int k = (lx - g.x0) / (g.cw + g.gap);
    int layer = g.first_layer + (ly - g.y0) / g.rh * (g.half ? 2 : 1);
    if (k >= g.n_heads_vis || (lx - g.x0) % (g.cw + g.gap) >= g.cw) return;
    if (layer >= g.first_layer + g.n_layers_vis) return;
    out->layer = layer;
    out->head = g.first_head + k;
}

static void hit_timeline(const ViewModel *m, int w, int h, int lx, int ly, ViewHit *out) {
    ViewTimeGeom g;
    view_time_geom(m, w, h, view_layout_opts(m).half_blocks, &g);
    int col = lx - g.x0, line = ly - g.y0;
    int row = g.first_row + line * (g.half ? 2 : 1);
    if (g.y_pin && ly == g.y_pin) { /* the pinned head's row, above the others */
        out->layer = m->pin_layer;
        out->head = m->pin_head;
    } else if (g.y_par && ly == g.y_par) { /* the selected head's row in the parent run */
        out->layer = m->sel_layer;
        out->head = m->sel_head;
    } else if (line < 0 || line >= g.lines) {
        return;
    } else if (row < g.first_row + g.n_rows_vis && m->timeline_layers) {
        out->layer = row;
        out->head = m->sel_head;
    } else if (row < g.first_row + g.n_rows_vis) {
        out->layer = row / m->n_heads;
        out->head = row % m->n_heads;
    }
    if (col >= 0 && col < g.n_tok_vis) /* a bin's first position */
        out->pos = g.first_tok + col * g.bin < m->n_hist ? g.first_tok + col * g.bin : m->n_hist - 1;
}

static void hit_tokens(const ViewModel *m, int w, int h, int lx, int ly, ViewHit *out) {
    ViewTokGeom g;
    view_tok_geom(m, w, h, &g);
    int iw = g.iw, ih = g.ih, first = g.first_line;
    int x = 0, y = 0, sx, sy, wd;
    if (g.y_strip && ly == g.y_strip) { /* the surprise strip: its column's position */
        int col = lx - g.x0;
        if (col >= 0 && col < g.n_tok_vis) out->pos = g.first_tok + col;
        return;
    }
    int tx = lx - 1, ty = ly - 1 + first;
    if (lx < 1 || lx > iw || ly < 1 || ly > ih) return;
    for (int i = g.first_pos; i < m->n_hist; i++) {
        view_tok_place(m, i, iw, &x, &y, &sx, &sy, &wd);
        if (sy > ty) return;
        if (sy == ty && tx >= sx && tx < sx + wd) {
            out->pos = i;
            return;
        }
    }
}

ViewHit view_hit(const ViewModel *m, const Layout *lay, int x, int y) {
    ViewHit out = {VIEW_PANE_NONE, -1, -1, -1};
    if (lay->too_small) return out;
    for (int p = 0; p < VIEW_PANE_COUNT; p++)
        if (view_rect_has(&lay->pane[p], x, y)) out.pane = (ViewPane)p;
    if (out.pane == VIEW_PANE_NONE) return out;
    const ViewRect *r = &lay->pane[out.pane];
    int lx = x - r->x, ly = y - r->y;
    switch (out.pane) {
    case VIEW_PANE_HEATMAP: hit_heatmap(m, r->w, r->h, lx, ly, &out); break;
    case VIEW_PANE_TIMELINE: hit_timeline(m, r->w, r->h, lx, ly, &out); break;
    case VIEW_PANE_TOKENS: hit_tokens(m, r->w, r->h, lx, ly, &out); break;
    case VIEW_PANE_BARS: {
        ViewBarsGeom g;
        view_bars_geom(m, r->w, r->h, &g);
        if (ly >= g.y0 && ly < g.y0 + g.n_layers_vis * g.rh) out.layer = g.first_layer + (ly - g.y0) / g.rh;
        break;
    }
    case VIEW_PANE_INSPECTOR: {
        ViewInspGeom g;
        view_insp_geom(m, r->w, r->h, &g);
        int col = lx - g.x0;
        if (ly >= g.y_spark && ly < g.y_spark + 4 && col >= 0 && col < g.n_tok_vis)
            out.pos = view_bin_lo(col + 1, g.n_pos, g.n_tok_vis) - 1; /* the bin's last position */
        break;
    }
    default: break;
    }
    return out;
}
