/* allheads.c — every head at the cursor (`E`): geometry, each head's strip, keys, drawing (see allheads.h).
 *
 * The strips are pooled afresh each frame from the cursor's trace: a
 * frame reads heads × top-k weights, never the run, so 32 × 32 heads on a
 * long run cost what a short one does. */
#include "views/allheads.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views/keymap.h"
#include "views/metric.h"
#include "views/needle.h"
#include "views/paint.h"

#define DOT "\xc2\xb7"
#define STRIP_MAX 256 /* strip columns drawn at most: wider screens pad */

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The first of n items shown, room at a time, keeping sel in view near the middle. */
static int span_start(int sel, int n, int room) { return clampi(sel - room / 2, 0, n > room ? n - room : 0); }

void view_allheads_geom(const ViewModel *m, int w, int h, ViewAllHeadsGeom *g) {
    memset(g, 0, sizeof *g);
    g->label_w = m->n_layers > 10 ? 4 : 3;
    int avail = w - 2 - g->label_w, rows = h - 3;
    if (avail < 2 || rows < 1 || m->n_heads < 1 || m->n_layers < 1) return;
    g->cw = avail / m->n_heads;
    if (g->cw < 2) g->cw = 2;
    if (g->cw > STRIP_MAX + 1) g->cw = STRIP_MAX + 1;
    g->sw = g->cw - 1;
    g->nh = avail / g->cw < m->n_heads ? avail / g->cw : m->n_heads;
    g->h0 = span_start(m->sel_head, m->n_heads, g->nh);
    g->lines = rows >= 2 * m->n_layers ? 2 : 1;
    g->nl = rows / g->lines < m->n_layers ? rows / g->lines : m->n_layers;
    g->l0 = span_start(m->sel_layer, m->n_layers, g->nl);
    g->gy = 2;
}

int view_allheads_strip(const ViewModel *m, const StepTrace *t, int cell, int sw, float *out) {
    for (int i = 0; i < sw; i++) out[i] = VIEW_ALLHEADS_NONE;
    if (!t || sw < 1 || t->pos < 0) return 0;
    int n = t->pos + 1, cols = n < sw ? n : sw;
    const ViewAttn *a = view_exact_row(m, t, cell);
    if (a) {
        for (int k = 0; k < n; k++) {
            float *c = &out[(long)k * cols / n];
            if (a->w[k] > *c) *c = a->w[k];
        }
        return 1;
    }
    for (int r = 0; r < t->top_k; r++) {
        int k = t->top_pos[cell * t->top_k + r];
        float v = t->top_w[cell * t->top_k + r];
        if (k < 0 || k >= n || isnan(v)) continue;
        float *c = &out[(long)k * cols / n];
        if (v > *c) *c = v;
    }
    int local_from = n - m->hdr.window; /* keys from here on, and the sinks, are the local set */
    for (int i = 0; i < cols; i++) {
        int k0 = (int)(((long)i * n + cols - 1) / cols), k1 = (int)(((long)(i + 1) * n + cols - 1) / cols);
        int all_local = k0 >= local_from || k1 <= m->hdr.sinks;
        if (all_local && out[i] == VIEW_ALLHEADS_NONE) out[i] = VIEW_ALLHEADS_BAND;
    }
    return 0;
}

void view_allheads_toggle(ViewModel *m) { m->allheads_open = !m->allheads_open; }

/* The heaviest key of head cell at the cursor and its weight (-1 none). */
static int heaviest(const ViewModel *m, const StepTrace *t, int cell, float *w) {
    const ViewAttn *a = t ? view_exact_row(m, t, cell) : NULL;
    int best = -1;
    *w = -1;
    if (a) {
        for (int k = 0; k <= t->pos; k++)
            if (a->w[k] > *w) *w = a->w[k], best = k;
        return best;
    }
    if (t && t->top_k > 0 && t->top_pos[cell * t->top_k] >= 0) best = t->top_pos[cell * t->top_k], *w = t->top_w[cell * t->top_k];
    return best;
}

static void select_and_close(ViewModel *m) {
    int cell = m->sel_layer * m->n_heads + m->sel_head;
    const StepTrace *t = view_trace(m, m->cursor);
    float w;
    int k = heaviest(m, t, cell, &w);
    const StepTrace *kt = k >= 0 ? view_trace(m, k) : NULL;
    m->allheads_open = 0;
    if (!kt) {
        view_set_status(m, "L%d H%d selected (no far key known at the cursor)", m->sel_layer, m->sel_head);
        return;
    }
    char label[TRACE_PIECE_MAX * 4];
    view_piece_label(kt->piece, m->ascii, label, sizeof label);
    view_set_status(m, "L%d H%d selected: its heaviest key at pos %d is %d \"%.24s\" %.2f", m->sel_layer, m->sel_head,
                    t->pos, k, label, (double)w);
}

int view_allheads_key(ViewModel *m, int ch) {
    if (!m->allheads_open || ch == KEY_MOUSE || ch == KEY_RESIZE) return 0;
    switch (view_key_command(ch)) {
    case VIEW_OP_CLOSE: case VIEW_OP_ALLHEADS: m->allheads_open = 0; return 1;
    case VIEW_OP_UP: m->sel_layer = clampi(m->sel_layer - 1, 0, m->n_layers - 1); return 1;
    case VIEW_OP_DOWN: m->sel_layer = clampi(m->sel_layer + 1, 0, m->n_layers - 1); return 1;
    case VIEW_OP_LEFT: m->sel_head = clampi(m->sel_head - 1, 0, m->n_heads - 1); return 1;
    case VIEW_OP_RIGHT: m->sel_head = clampi(m->sel_head + 1, 0, m->n_heads - 1); return 1;
    case VIEW_OP_INSPECT: select_and_close(m); return 1;
    default: return 0;
    }
}

/* --- drawing --- */

static void title(const ViewModel *m, const ViewAllHeadsGeom *g, const StepTrace *t, int exact_sel, char *buf,
                  size_t n) {
    char label[TRACE_PIECE_MAX * 4] = "";
    if (t) view_piece_label(t->piece, m->ascii, label, sizeof label);
    int k = snprintf(buf, n, "every head at the cursor " DOT " pos %d \xc2\xab%.16s\xc2\xbb " DOT " keys 0-%d, max %s",
                     t ? t->pos : 0, label, t ? t->pos : 0,
                     exact_sel ? "(selected: exact; others top-k far keys)" : "of the recorded top-k far keys");
    if (k > 0 && (size_t)k < n && (g->nl < m->n_layers || g->nh < m->n_heads))
        snprintf(buf + k, n - (size_t)k, " " DOT " L%d-%d H%d-%d", g->l0, g->l0 + g->nl - 1, g->h0, g->h0 + g->nh - 1);
}

/* A level's glyph, the same in every colour mode, so that a capture's
 * text (and a monochrome terminal) still shows which head stands out. */
static wchar_t shade(int level, int ascii) {
    static const wchar_t uni[VIEW_LEVELS] = {L'\u00b7', L'\u00b7', L'\u2591', L'\u2591', L'\u2592', L'\u2592', L'\u2593', L'\u2588'};
    static const wchar_t asc[VIEW_LEVELS] = {'.', '.', ':', ':', '+', '+', '#', '@'};
    int i = clampi(level - VIEW_SW_LEVEL1, 0, VIEW_LEVELS - 1);
    return ascii ? asc[i] : uni[i];
}

/* Under a strip, where a line is to spare: its heaviest key and weight. */
static void draw_heaviest(WINDOW *w, const ViewModel *m, const StepTrace *t, int cell, int y, int x, int sw,
                          attr_t a, short pair) {
    float wt;
    int k = heaviest(m, t, cell, &wt);
    if (k < 0) return;
    char buf[96], label[TRACE_PIECE_MAX * 4];
    const StepTrace *kt = view_trace(m, k);
    view_piece_label(kt ? kt->piece : "?", m->ascii, label, sizeof label);
    snprintf(buf, sizeof buf, "%d \"%.8s\" %.2f", k, label, (double)wt);
    if (view_text_width(buf, m->ascii) > sw) snprintf(buf, sizeof buf, "%d %.2f", k, (double)wt);
    if (view_text_width(buf, m->ascii) > sw) snprintf(buf, sizeof buf, "%.2f", (double)wt);
    if (view_text_width(buf, m->ascii) <= sw) view_puts(w, y, x, sw, buf, m->ascii, a, pair);
}

/* The needle's and the question's columns of a strip (the same in every
 * head's), on the head-number line where no number is. */
static void draw_marks(WINDOW *w, const ViewModel *m, const StepTrace *t, int y, int x, int sw, int skip) {
    if (!t) return;
    int n = t->pos + 1, cols = n < sw ? n : sw;
    for (int i = 0; i < m->n_marks; i++) {
        const ViewMark *mk = &m->marks[i];
        if (mk->pos >= n || (mk->kind != VIEW_MARK_NEEDLE && mk->kind != VIEW_MARK_QUESTION)) continue;
        int c = (int)((long)mk->pos * cols / n);
        if (c < skip) continue;
        wchar_t ch = mk->kind == VIEW_MARK_QUESTION ? (m->ascii ? L'Q' : L'?') : (m->ascii ? L'N' : L'\u25c6');
        view_put(w, y, x + c, ch, A_BOLD, 0);
    }
}

/* One head's strip at (y, x). */
static void draw_strip(WINDOW *w, const ViewModel *m, const ViewPalette *p, const StepTrace *t, int cell, int y,
                       int x, int sw) {
    float v[STRIP_MAX];
    view_allheads_strip(m, t, cell, sw, v);
    attr_t dim;
    short dp;
    view_text_style(p, VIEW_TX_DIM, &dim, &dp);
    for (int i = 0; i < sw; i++) {
        if (v[i] == VIEW_ALLHEADS_BAND) { view_put(w, y, x + i, p->ascii ? L':' : L'\u2506', dim, dp); continue; }
        if (v[i] < 0) continue;
        int s = view_level(sqrtf(v[i]));
        wchar_t ch;
        attr_t at;
        short pair;
        view_cell_style(p, s, s, 0, &ch, &at, &pair);
        view_put(w, y, x + i, shade(s, p->ascii), at, pair);
    }
}

void view_draw_allheads(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    ViewAllHeadsGeom g;
    view_allheads_geom(m, wd, h, &g);
    const StepTrace *t = view_trace(m, m->cursor);
    int sel = m->sel_layer * m->n_heads + m->sel_head;
    char buf[256];
    title(m, &g, t, t && view_exact_row(m, t, sel), buf, sizeof buf);
    view_frame_box(w, p, buf, 1);
    attr_t dim, fa;
    short dp, fp;
    view_text_style(p, VIEW_TX_DIM, &dim, &dp);
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    for (int j = 0; j < g.nh; j++) { /* head numbers where they fit, the marks beside them */
        int hd = g.h0 + j, x = 1 + g.label_w + j * g.cw + 1, len = snprintf(buf, sizeof buf, "%d", hd);
        if (len <= g.sw || hd % 4 == 0) view_puts(w, 1, x, wd - 1 - x, buf, 1, dim, dp);
        draw_marks(w, m, t, 1, x, g.sw, len + 1);
    }
    for (int i = 0; i < g.nl; i++) {
        int l = g.l0 + i, y = g.gy + i * g.lines;
        for (int j = 0; g.lines > 1 && j < g.nh; j++)
            draw_heaviest(w, m, t, l * m->n_heads + g.h0 + j, y + 1, 1 + g.label_w + j * g.cw + 1, g.sw, dim, dp);
        snprintf(buf, sizeof buf, "L%d", l);
        view_puts(w, y, 1, g.label_w, buf, 1, l == m->sel_layer ? fa | A_BOLD : dim, l == m->sel_layer ? fp : dp);
        for (int j = 0; j < g.nh; j++) {
            int hd = g.h0 + j, x = 1 + g.label_w + j * g.cw, cell = l * m->n_heads + hd;
            if (cell == sel) view_put(w, y, x, p->ascii ? L'>' : L'\u25b8', fa | A_BOLD, fp);
            draw_strip(w, m, p, t, cell, y, x + 1, g.sw);
        }
    }
    const char *keys = p->ascii ? " arrows head | [ ] token | Enter select | E Esc close | : window (not ranked) "
                                : " arrows head " DOT " [ ] token " DOT " Enter select " DOT " E Esc close " DOT
                                  " \xe2\x94\x86 window (not ranked) ";
    view_puts_fit(w, h - 1, 2, wd - 4, keys, p->ascii, dim, dp);
}
