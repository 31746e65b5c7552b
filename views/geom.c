/* geom.c — in-pane geometry shared by drawing and hit-testing (see geom.h). */
#include <string.h>

#include "views/geom.h"

#include "views/explain.h"
#include "views/keymap.h"
#include "views/paint.h"
#include "views/pin.h"

/* 1 for a row of engine/predictors.h's list that draws a sparkline. */
#define GEOM_SPARK(ID, word, field, title, brief, spark, thr, policy, dec, ours) +(sizeof(spark) > 1)
enum {
    TIME_LABEL_W = 8, /* "L15H31▸ " */
    INSP_LABEL_W = 8, /* "oracle  " */
    INSP_SPARK_MIN = 12, /* sparkline columns kept beside the verdicts */
    INSP_TEXT_MIN = 24,  /* narrower than this beside the sparklines, the verdicts stack */
    INSP_TEXT_W = 66,    /* the longest verdict line of a usual model */
    INSP_SPARKS = 0 PREDICTORS(GEOM_SPARK), /* the predictor rows with a sparkline label */
    HELP_KEY_W = 15,     /* the help's keys column: "[ ] Home End" and a margin */
};

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Start of a window of n_vis items out of n_total keeping item sel in view
 * (centred); align 2 keeps the start even so half-block pairs stay put,
 * rounding up (the window may then end one item early) so sel stays inside. */
static int window_start(int sel, int n_total, int n_vis, int align) {
    if (n_vis >= n_total) return 0;
    int s = clampi(sel - n_vis / 2, 0, n_total - n_vis);
    if (align == 2 && (s & 1)) s++;
    return s;
}

void view_heat_geom(const ViewModel *m, int w, int h, int half_ok, ViewHeatGeom *g) {
    int avail_w = w - 2 - VIEW_HEAT_LABEL_W;
    int lines = h - 3; /* border top/bottom + head-number row */
    if (avail_w < 1) avail_w = 1;
    if (lines < 1) lines = 1;
    g->gap = 0;
    g->cw = 1;
    for (int cw = VIEW_HEAT_MAX_CW; cw >= 1; cw--)
        if (m->n_heads * (cw + 1) + 1 <= avail_w) {
            g->cw = cw;
            g->gap = 1;
            break;
        }
    g->x0 = 1 + VIEW_HEAT_LABEL_W + g->gap;
    g->y0 = 2;
    g->lines = lines;
    g->half = half_ok && m->n_layers > lines;
    /* lines per layer: as many as the pane gives every layer, up to the cap */
    g->rh = g->half ? 1 : lines / (m->n_layers > 0 ? m->n_layers : 1);
    if (g->rh < 1) g->rh = 1;
    if (g->rh > VIEW_HEAT_MAX_RH) g->rh = VIEW_HEAT_MAX_RH;
    int cap_layers = g->half ? lines * 2 : lines / g->rh;
    g->n_layers_vis = m->n_layers < cap_layers ? m->n_layers : cap_layers;
    g->first_layer = window_start(m->sel_layer, m->n_layers, g->n_layers_vis, g->half ? 2 : 1);
    if (g->first_layer + g->n_layers_vis > m->n_layers) g->n_layers_vis = m->n_layers - g->first_layer;
    int cap_heads = (avail_w - g->gap) / (g->cw + g->gap);
    g->n_heads_vis = m->n_heads < cap_heads ? m->n_heads : cap_heads;
    g->first_head = window_start(m->sel_head, m->n_heads, g->n_heads_vis, 1);
}

int view_first_col(int cursor, int n_total, int n_cols) {
    if (n_cols <= 0 || n_total <= n_cols) return 0;
    if (cursor >= n_total - 1) return n_total - n_cols;
    return window_start(cursor, n_total, n_cols, 1);
}

/* 1 if a start a click pinned (start0 >= 0) still shows item sel out of
 * n_total in n_vis places, and wastes none of them at the end. */
static int pinned(int start0, int sel, int n_total, int n_vis) {
    return start0 >= 0 && sel >= start0 && sel < start0 + n_vis && (start0 + n_vis <= n_total || start0 == 0);
}

void view_time_geom(const ViewModel *m, int w, int h, int half_ok, ViewTimeGeom *g) {
    int rows = m->timeline_layers ? m->n_layers : m->n_layers * m->n_heads;
    g->x0 = 1 + TIME_LABEL_W;
    g->y0 = 1;
    g->n_cols = w - 2 - TIME_LABEL_W;
    g->lines = h - 2;
    g->y_pin = 0;
    if (view_pin_cell(m) >= 0 && g->lines >= 3) g->y_pin = 1, g->y0 = 2, g->lines--;
    g->y_par = 0;
    if (m->parent.n > 0 && g->lines >= 3) g->y_par = g->y0, g->y0++, g->lines--;
    if (g->n_cols < 0) g->n_cols = 0;
    if (g->lines < 0) g->lines = 0;
    g->bin = view_time_bin(m->n_hist, g->n_cols);
    if (g->bin > 1) { /* the whole run, binned */
        g->first_tok = 0;
        g->n_tok_vis = (m->n_hist + g->bin - 1) / g->bin;
    } else {
        g->first_tok = pinned(m->time_tok0, m->cursor, m->n_hist, g->n_cols)
                           ? m->time_tok0
                           : view_first_col(m->cursor, m->n_hist, g->n_cols);
        g->n_tok_vis = m->n_hist - g->first_tok < g->n_cols ? m->n_hist - g->first_tok : g->n_cols;
    }
    g->half = half_ok && rows > g->lines;
    int cap = g->lines * (g->half ? 2 : 1);
    g->n_rows_vis = rows < cap ? rows : cap;
    int sel = m->timeline_layers ? m->sel_layer : m->sel_layer * m->n_heads + m->sel_head;
    g->first_row = pinned(m->time_row0, sel, rows, g->n_rows_vis) ? m->time_row0
                                                                   : window_start(sel, rows, g->n_rows_vis, g->half ? 2 : 1);
    if (g->first_row + g->n_rows_vis > rows) g->n_rows_vis = rows - g->first_row;
}

void view_time_fit(ViewModel *m, const Layout *lay) {
    ViewTimeGeom g;
    const ViewRect *r = &lay->pane[VIEW_PANE_TIMELINE];
    view_time_geom(m, r->w, r->h, view_layout_opts(m).half_blocks, &g);
    m->time_bin = g.bin;
}

int view_time_bin(int n_pos, int n_cols) {
    int b = 1;
    while (n_cols > 0 && (long)b * n_cols < n_pos) b *= 2;
    return b;
}

void view_bars_geom(const ViewModel *m, int w, int h, ViewBarsGeom *g) {
    int lines = h - 2;
    if (lines < 0) lines = 0;
    g->y0 = 1;
    g->label_w = 4;
    /* each bar is followed by " 100%" and a separating space */
    g->bar_w = (w - 2 - g->label_w - 2 * 6) / 2;
    if (g->bar_w < 1) g->bar_w = 1;
    g->n_layers_vis = m->n_layers < lines ? m->n_layers : lines;
    g->first_layer = window_start(m->sel_layer, m->n_layers, g->n_layers_vis, 1);
    /* as tall as the heatmap's cells beside them, where every layer has the lines */
    g->rh = m->n_layers > 0 && lines >= 2 * m->n_layers ? lines / m->n_layers : 1;
    if (g->rh > VIEW_HEAT_MAX_RH) g->rh = VIEW_HEAT_MAX_RH;
}

/* Lines for the pinned head and the parent run: the first of the far
 * list's when it keeps its heading and a position, else those of the last
 * predictors above the strip (one row at least stays). */
static void aside_geom(const ViewModel *m, ViewInspGeom *g) {
    int want = view_aside_count(m), above = g->y_strip - g->y_spark - 1;
    g->y_aside = g->n_aside = 0;
    if (want <= 0) return;
    if (g->y_list && g->n_list >= want + 2) {
        g->y_aside = g->y_list, g->n_aside = want;
        g->y_list += want, g->n_list -= want;
    } else if (above > 0) {
        g->n_aside = want < above ? want : above;
        g->y_aside = g->y_strip - g->n_aside;
    }
}

void view_insp_geom(const ViewModel *m, int w, int h, ViewInspGeom *g) {
    int inner = w - 2 - INSP_LABEL_W; /* right of the labels */
    g->x0 = 1 + INSP_LABEL_W;
    g->y_spark = 1;
    g->text_w = clampi(inner - 1 - INSP_SPARK_MIN, 0, INSP_TEXT_W);
    g->stacked = g->text_w < INSP_TEXT_MIN;
    if (g->stacked) {
        /* the verdicts are what the inspector is for: they keep their lines,
         * the strip and its boundary the two below */
        g->n_cols = 0;
        g->x_text = 1;
        g->text_w = w - 2 > 0 ? w - 2 : 0;
        g->n_text = clampi(h - 4, 0, VIEW_EXPLAIN_INSPECTOR);
    } else {
        g->n_cols = inner - 1 - g->text_w;
        g->x_text = g->x0 + g->n_cols + 1;
        g->n_text = VIEW_EXPLAIN_INSPECTOR;
    }
    g->y_strip = g->y_spark + (g->stacked ? g->n_text : INSP_SPARKS);
    g->y_list = g->y_strip + 2;
    g->n_list = clampi(h - 1 - g->y_list, 0, VIEW_ATTN_TOP);
    if (g->n_list == 0) g->y_list = 0;
    aside_geom(m, g);
    /* positions 0 … cursor, binned like the attention strip below, so every
     * row of the inspector reads on one x-axis ending at the cursor */
    g->first_tok = 0;
    g->n_pos = m->cursor + 1 > 0 ? m->cursor + 1 : 0;
    g->n_tok_vis = g->n_pos < g->n_cols ? g->n_pos : g->n_cols;
}

int view_bin_lo(int c, int n, int n_cols) { return n <= n_cols ? c : (int)((long long)c * n / n_cols); }

void view_tok_place(const ViewModel *m, int i, int iw, int *x, int *y, int *sx, int *sy, int *width) {
    wchar_t buf[TRACE_PIECE_MAX];
    int nl;
    view_token_glyphs(m->hist[i]->piece, m->ascii, buf, TRACE_PIECE_MAX, width, &nl);
    if (*width > iw) *width = iw;
    if (*x > 0 && *x + *width > iw) {
        *x = 0;
        (*y)++;
    }
    *sx = *x;
    *sy = *y;
    *x += *width;
    if (nl) {
        *x = 0;
        (*y)++;
    }
}

int view_tok_first_pos(const ViewModel *m, int iw, int ih) {
    long block = iw > 0 && ih > 0 ? (long)iw * ih : 0; /* a token is a column at least: no more fit */
    if (block == 0 || m->n_hist <= 2 * block) return 0;
    long cur = m->cursor >= 0 && m->cursor < m->n_hist ? m->cursor : m->n_hist - 1;
    long b = cur / block;
    return b > 0 ? (int)((b - 1) * block) : 0;
}

int view_tok_first_line(const ViewModel *m, int from, int iw, int ih) {
    int x = 0, y = 0, sx, sy, wd, cur_line = 0;
    if (iw <= 0 || ih <= 0) return 0;
    /* past the cursor, only the lines that fill the pane below it matter */
    for (int i = from; i < m->n_hist && (i <= m->cursor || y <= cur_line + ih); i++) {
        view_tok_place(m, i, iw, &x, &y, &sx, &sy, &wd);
        if (i == m->cursor) cur_line = sy;
    }
    int total = x > 0 ? y + 1 : y;
    return window_start(cur_line, total, ih < total ? ih : total, 1);
}

void view_tok_geom(const ViewModel *m, int w, int h, ViewTokGeom *g) {
    enum { LABEL = 7, TEXT = 30 }; /* "-log p " and "pos 1234 -log p 12.34 H 12.34" */
    memset(g, 0, sizeof *g);
    g->iw = w - 2, g->ih = h - 2;
    if (g->iw <= 0 || g->ih <= 0) return;
    if (g->ih >= 3 && g->iw > LABEL + TEXT + 8) {
        g->ih--;
        g->y_strip = h - 2;
        g->x0 = 1 + LABEL;
        g->n_cols = g->iw - LABEL - TEXT - 1;
        g->first_tok = view_first_col(m->cursor, m->n_hist, g->n_cols);
        g->n_tok_vis = m->n_hist - g->first_tok < g->n_cols ? m->n_hist - g->first_tok : g->n_cols;
        g->x_text = g->x0 + g->n_cols + 1;
        g->text_w = TEXT;
    }
    g->first_pos = view_tok_first_pos(m, g->iw, g->ih);
    g->first_line = view_tok_first_line(m, g->first_pos, g->iw, g->ih);
}

/* Columns of the input line's character at byte at, as drawn. */
static int glyph_w(const char *t, size_t at, int ascii) {
    const char *s = t + at;
    int cw;
    view_next_glyph(&s, ascii, &cw);
    return cw;
}

/* From byte at, over the characters that fit in budget columns (*used
 * counts up); returns where it stopped. The step cap bounds a run of
 * zero-width marks. */
static size_t walk_fwd(const char *t, size_t len, size_t at, int budget, int ascii, int *used) {
    for (int steps = 0; at < len && steps < 4 * budget + 16; steps++) {
        int cw = glyph_w(t, at, ascii);
        if (*used + cw > budget) break;
        *used += cw;
        at = view_utf8_next(t, len, at);
    }
    return at;
}

/* walk_fwd backwards: from byte at, over the characters before it. */
static size_t walk_back(const char *t, size_t at, int budget, int ascii, int *used) {
    for (int steps = 0; at > 0 && steps < 4 * budget + 16; steps++) {
        size_t prev = view_utf8_prev(t, at);
        int cw = glyph_w(t, prev, ascii);
        if (*used + cw > budget) break;
        *used += cw;
        at = prev;
    }
    return at;
}

void view_input_geom(const ViewModel *m, int width, int ascii, ViewInputGeom *g) {
    const char *t = m->input.text ? m->input.text : "";
    size_t len = m->input.text ? m->input.len : 0, cur = m->input.cur < len ? m->input.cur : len;
    int cols = width - 1; /* the last column: the cursor past the end, or the right mark */
    int before = 0, after = 0;
    memset(g, 0, sizeof *g);
    g->from = g->to = cur;
    if (width < 8) return;
    if (walk_fwd(t, len, 0, cols, ascii, &before) == len) { /* it all fits */
        g->from = 0, g->to = len;
        walk_fwd(t, cur, 0, cols, ascii, &g->cursor_x);
        return;
    }
    before = 0;
    size_t to = cur < len ? view_utf8_next(t, len, cur) : len; /* the cursor's own character, always */
    if (cur < len) after = glyph_w(t, cur, ascii);
    to = walk_fwd(t, len, to, cols / 3, ascii, &after);
    size_t from = walk_back(t, cur, cols - after - 1, ascii, &before); /* 1: the left mark */
    g->more_left = g->text_x = from > 0;
    to = walk_fwd(t, len, to, cols - g->more_left - before, ascii, &after); /* what the left left over */
    g->from = from, g->to = to;
    g->more_right = to < len;
    g->cursor_x = g->text_x + before;
}

void view_help_geom(const ViewModel *m, int w, int h, ViewHelpGeom *g) {
    g->y0 = 1;
    g->n_rows = h > 2 ? h - 2 : 0;
    g->n_lines = view_help_count();
    int last = g->n_lines > g->n_rows ? g->n_lines - g->n_rows : 0;
    g->first = clampi(m->help_scroll, 0, last);
    g->head_x = 2;
    g->head_w = w - 4 > 0 ? w - 4 : 0;
    g->key_x = 3;
    g->key_w = clampi(w - 4, 0, HELP_KEY_W);
    g->text_x = g->key_x + HELP_KEY_W + 1;
    g->text_w = w - 1 - g->text_x > 0 ? w - 1 - g->text_x : 0; /* up to the border */
}

int view_help_scrolls(const ViewModel *m) { return m->help_page <= 0 || m->help_page < view_help_count(); }
