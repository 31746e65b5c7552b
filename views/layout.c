/* layout.c — the pure pane layout (see layout.h). */
#include "views/layout.h"

#include <string.h>

/* Heights include the pane's border (two lines). */
enum {
    TOKENS_MIN_H = 4,
    TOKENS_MAX_H = 10,
    TIMELINE_MIN_H = 6,
    INSPECTOR_H = 8,       /* sparklines, the attention strip and its axis */
    INSPECTOR_MAX_H = 20,  /* and one line per ranked far position (VIEW_ATTN_TOP), then why.h's block */
    MID_MIN_H = 5,
    BARS_MIN_W = 24,
    HEAT_MIN_W = 24,
    HEAT_SMALL_CW = 3, /* the widest cells that may squeeze the bars to their minimum */
    HEAT_HALF_RH = 3,  /* the tallest cells while the heatmap keeps to about half the band */
};

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static ViewRect rect(int x, int y, int w, int h) {
    ViewRect r = {x, y, w, h};
    if (w <= 0 || h <= 0) r = (ViewRect){0, 0, 0, 0};
    return r;
}

/* Width of the heatmap pane for cells cw wide (with the one-column gap that
 * holds the selection outline). */
static int heat_need(int n_heads, int cw) { return 2 + VIEW_HEAT_LABEL_W + n_heads * (cw + 1) + 1; }

/* Width of the heatmap pane: the widest cells up to 3 columns that leave
 * the bars their minimum width, or, with grow, wider ones (up to
 * VIEW_HEAT_MAX_CW) that fit in half the screen, so the heatmap grows with
 * the terminal. An open inspector keeps the room instead: its sentences
 * need it more. */
static int heat_width(int cols, int n_heads, int grow) {
    int limit = cols - BARS_MIN_W;
    for (int cw = VIEW_HEAT_MAX_CW; grow && cw > HEAT_SMALL_CW; cw--)
        if (heat_need(n_heads, cw) <= cols / 2 && heat_need(n_heads, cw) <= limit) return heat_need(n_heads, cw);
    for (int cw = HEAT_SMALL_CW; cw >= 1; cw--) {
        int need = heat_need(n_heads, cw);
        if (need <= limit) return need < HEAT_MIN_W ? HEAT_MIN_W : need;
    }
    int dense = 2 + VIEW_HEAT_LABEL_W + n_heads;
    return clampi(dense, HEAT_MIN_W, limit);
}

/* Height of the middle band: every layer on 1 … max_rh lines
 * when that takes less than about half the space (so the cells grow with
 * the terminal), else two layers per line (half-blocks), else what fits. */
static int mid_height(int avail, int n_layers, int half_ok, int max_rh) {
    int cap = avail - TIMELINE_MIN_H;
    int half = (n_layers + 1) / 2 + 3;
    int h = 0;
    for (int rh = max_rh; rh >= 1 && !h; rh--) {
        int full = n_layers * rh + 3; /* border + head-number row */
        if (full <= cap && (full * 2 <= avail + 4 || (!half_ok && rh == 1))) h = full;
    }
    if (!h && half_ok && half <= cap) h = half;
    if (!h) h = cap;
    return clampi(h, MID_MIN_H, cap > MID_MIN_H ? cap : MID_MIN_H);
}

/* Lines the timeline can use in a band of avail lines: a row per head and
 * a line for a pinned head, inside its border, or with half-blocks two
 * rows a line when one a line does not fit; never below its minimum. */
static int timeline_need(int avail, int rows, int half_ok) {
    int full = rows + 3, half = (rows + 1) / 2 + 3;
    int need = full <= avail || !half_ok ? full : half;
    return need > TIMELINE_MIN_H ? need : TIMELINE_MIN_H;
}

/* Lines to add to a middle band mid_h high, out of spare, so that every
 * layer's cells grow by whole lines, up to VIEW_HEAT_MAX_RH; 0 while the
 * band does not show every layer on lines of its own. */
static int taller_cells(int mid_h, int spare, int n_layers, int half_ok) {
    int lines = mid_h - 3, rh = lines / n_layers;
    if (spare <= 0 || rh < 1 || (half_ok && n_layers > lines)) return 0;
    int grown = (lines + spare) / n_layers;
    if (grown > VIEW_HEAT_MAX_RH) grown = VIEW_HEAT_MAX_RH;
    return grown > rh ? grown * n_layers - lines : 0;
}

void view_layout(int cols, int rows, const LayoutOpts *o, Layout *out) {
    memset(out, 0, sizeof *out);
    out->cols = cols;
    out->rows = rows;
    if (cols < VIEW_MIN_COLS || rows < VIEW_MIN_ROWS) {
        out->too_small = 1;
        return;
    }
    int n_layers = o->n_layers > 0 ? o->n_layers : 1;
    int n_heads = o->n_heads > 0 ? o->n_heads : 1;
    int body = rows - 3; /* minus header, legend, status */

    out->pane[VIEW_PANE_HEADER] = rect(0, 0, cols, 1);
    out->pane[VIEW_PANE_STATUS] = rect(0, rows - 1, cols, 1);

    int tok_h = clampi(body / 5, TOKENS_MIN_H, TOKENS_MAX_H);
    out->pane[VIEW_PANE_TOKENS] = rect(0, 1, cols, tok_h);

    int y = 1 + tok_h;
    int rest = body - tok_h;
    /* The heatmap grows with the screen; an open inspector keeps it short,
     * unless the screen holds both the grown heatmap and the inspector as a
     * band of its own under it (a large screen: the room goes to the cells).
     * In a band the inspector takes no width, so the cells keep theirs. */
    int mid_h = mid_height(rest, n_layers, o->half_blocks, HEAT_HALF_RH);
    int grow = !o->inspector || rest - mid_h >= INSPECTOR_MAX_H + TIMELINE_MIN_H;
    if (!grow) mid_h = mid_height(rest, n_layers, o->half_blocks, 1);
    int insp_band = o->inspector && rest - mid_h >= INSPECTOR_H + TIMELINE_MIN_H;
    int heat_w = heat_width(cols, n_heads, grow || insp_band);
    out->pane[VIEW_PANE_HEATMAP] = rect(0, y, heat_w, mid_h);
    ViewPane right = (o->inspector && !insp_band) ? VIEW_PANE_INSPECTOR : VIEW_PANE_BARS;
    out->pane[right] = rect(heat_w, y, cols - heat_w, mid_h);
    y += mid_h;
    rest -= mid_h;

    int ih = insp_band ? clampi(rest / 2, INSPECTOR_H, INSPECTOR_MAX_H) : 0;
    if (grow) { /* lines the timeline has no rows for go to taller cells */
        int add = taller_cells(mid_h, rest - ih - timeline_need(rest - ih, n_layers * n_heads, o->half_blocks),
                               n_layers, o->half_blocks);
        out->pane[VIEW_PANE_HEATMAP].h += add;
        out->pane[right].h += add;
        y += add;
        rest -= add;
    }
    if (insp_band) { /* it grows, up to a line per ranked far position, into half of what is left */
        out->pane[VIEW_PANE_INSPECTOR] = rect(0, y, cols, ih);
        y += ih;
        rest -= ih;
    }
    /* The key bar is the first line a short screen gives up: it takes the
     * timeline's last line (the one band that scrolls), and only while the
     * timeline keeps its minimum height; every other pane stays as it was. */
    int bar = o->keybar && rest > TIMELINE_MIN_H;
    rest -= bar;
    out->pane[o->sql ? VIEW_PANE_SQL : VIEW_PANE_TIMELINE] = rect(0, y, cols, rest);
    out->pane[VIEW_PANE_LEGEND] = rect(0, rows - 2 - bar, cols, 1);
    out->pane[VIEW_PANE_KEYBAR] = rect(0, rows - 2, cols, bar);

    /* The help is as tall as its lines, inside its border, where the screen
     * allows; what a shorter screen cannot hold scrolls (geom.h). */
    int need = (o->help_lines > 0 ? o->help_lines : 0) + 2;
    int hw = cols - 4 < VIEW_HELP_W ? cols - 4 : VIEW_HELP_W;
    int hh = rows - 2 < need ? rows - 2 : need;
    out->help = rect((cols - hw) / 2, (rows - hh) / 2, hw, hh);
}

int view_rect_has(const ViewRect *r, int x, int y) {
    return r->w > 0 && r->h > 0 && x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

const char *view_pane_name(ViewPane p) {
    static const char *const names[VIEW_PANE_COUNT] = {
        "header", "tokens", "heatmap", "bars", "inspector", "timeline", "sql", "legend", "status", "keybar",
    };
    return (p >= 0 && p < VIEW_PANE_COUNT) ? names[p] : "none";
}
