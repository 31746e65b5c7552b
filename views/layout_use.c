/* layout_use.c — what a laid-out screen's panes leave empty (`view_unused_cells`).
 *
 * How much of a laid-out screen its panes leave empty (see
 * geom.h): the measure the layout's growth on large screens is held to. */
#include "views/geom.h"

/* Interior cells of a pane (inside its border). */
static long interior(const ViewRect *r) { return r->w > 2 && r->h > 2 ? (long)(r->w - 2) * (r->h - 2) : 0; }

/* Interior cells of the heatmap outside its head numbers, labels and cells. */
static long heat_unused(const ViewModel *m, const ViewRect *r, int half_ok) {
    ViewHeatGeom g;
    view_heat_geom(m, r->w, r->h, half_ok, &g);
    long used_w = g.x0 - 1 + (long)g.n_heads_vis * (g.cw + g.gap);
    long used_h = g.y0 - 1 + (g.half ? (g.n_layers_vis + 1) / 2 : (long)g.n_layers_vis * g.rh);
    long used = used_w * used_h, all = interior(r);
    return used < all ? all - used : 0;
}

/* Interior lines of the bars no layer's bar is drawn on, across its width. */
static long bars_unused(const ViewModel *m, const ViewRect *r) {
    ViewBarsGeom g;
    view_bars_geom(m, r->w, r->h, &g);
    long lines = r->h - 2 - (long)g.n_layers_vis * g.rh;
    return lines > 0 && r->w > 2 ? lines * (r->w - 2) : 0;
}

/* Interior lines of the timeline no head's row is drawn on, across its
 * width (the columns fill as the run grows, so they count as used). */
static long time_unused(const ViewModel *m, const ViewRect *r, int half_ok) {
    ViewTimeGeom g;
    view_time_geom(m, r->w, r->h, half_ok, &g);
    long lines = r->h - 2 - (g.y0 - 1) - (g.half ? (g.n_rows_vis + 1) / 2 : g.n_rows_vis);
    return lines > 0 && r->w > 2 ? lines * (r->w - 2) : 0;
}

long view_unused_cells(const ViewModel *m, const Layout *lay, int half_ok) {
    if (lay->too_small) return 0;
    return heat_unused(m, &lay->pane[VIEW_PANE_HEATMAP], half_ok) + bars_unused(m, &lay->pane[VIEW_PANE_BARS]) +
           time_unused(m, &lay->pane[VIEW_PANE_TIMELINE], half_ok);
}
