/* pattern.c — the attention-pattern view (`A`): rectangle, pooling, marks, data from far keys, keys, drawing.
 *
 * The attention-pattern view: layout, pooling, marks and
 * drawing (see pattern.h). */
#include "views/pattern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/decide.h"
#include "views/explain.h"
#include "views/fixed.h"
#include "views/metric.h"
#include "views/paint.h"

#define DOT "\xc2\xb7"

ViewRect view_pattern_rect(const Layout *lay) {
    ViewRect r = {0, 0, 0, 0};
    if (lay->too_small) return r;
    const ViewRect *tok = &lay->pane[VIEW_PANE_TOKENS], *leg = &lay->pane[VIEW_PANE_LEGEND];
    r.x = 0, r.w = lay->cols;
    r.y = tok->h > 0 ? tok->y + tok->h : 1;
    r.h = (leg->h > 0 ? leg->y : lay->rows - 1) - r.y;
    if (r.h < 5) r.w = r.h = 0;
    return r;
}

static int digits(int v) {
    int d = 1;
    while (v >= 10) v /= 10, d++;
    return d;
}

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Positions a screen cell pools on one axis: what fits, halved per zoom
 * step, a whole number of data cells. */
static int per_cell(const ViewPattern *p, int room) {
    int fit = ceil_div(p->n, room > 0 ? room : 1), z = p->zoom;
    while (z-- > 0 && fit > 1) fit = ceil_div(fit, 2);
    int bin = p->bin > 0 ? p->bin : 1;
    return ceil_div(fit, bin) * bin;
}

/* The first position shown on one axis: a whole cell, the last cells full. */
static int clamp_start(int start, int n, int per, int room) {
    int last = (ceil_div(n, per) - room) * per;
    if (start > last) start = last;
    if (start < 0) start = 0;
    return start / per * per;
}

void view_pattern_geom(const ViewPattern *p, int w, int h, ViewPatternGeom *g) {
    memset(g, 0, sizeof *g);
    int n = p->n > 0 ? p->n : 1;
    g->label_w = digits(n - 1) + 2;
    g->gx = 1 + g->label_w, g->gy = 1;
    g->gw = w - 2 - g->label_w, g->gh = h - 4;
    if (g->gw < 1) g->gw = 1;
    if (g->gh < 1) g->gh = 1;
    g->axis_y = g->gy + g->gh, g->info_y = g->axis_y + 1;
    if (p->n <= 0) { g->rq = g->rk = g->cw = 1; return; }
    g->rq = per_cell(p, g->gh), g->rk = per_cell(p, g->gw);
    g->cw = g->rk == 1 && p->n < g->gw ? g->gw / p->n : 1;
    if (g->cw > VIEW_PATTERN_MAX_CW) g->cw = VIEW_PATTERN_MAX_CW;
    int room = g->gw / g->cw;
    int q0 = p->centred ? p->focus_q - g->gh / 2 * g->rq : p->q0, k0 = p->centred ? p->focus_k - room / 2 * g->rk : p->k0;
    g->q0 = clamp_start(q0, p->n, g->rq, g->gh), g->k0 = clamp_start(k0, p->n, g->rk, room);
    g->rows = ceil_div(p->n - g->q0, g->rq), g->cols = ceil_div(p->n - g->k0, g->rk);
    if (g->rows > g->gh) g->rows = g->gh;
    if (g->cols > room) g->cols = room;
}

void view_pattern_title(const ViewPattern *p, const ViewPatternGeom *g, char *buf, size_t n) {
    int k = snprintf(buf, n, "pattern L%d H%d " DOT " 1 cell = %dx%d pos, max", p->layer, p->head, g->rq, g->rk);
    if (k > 0 && (size_t)k < n && p->zoom > 0) k += snprintf(buf + k, n - (size_t)k, " " DOT " zoom %dx", 1 << p->zoom);
    if (k > 0 && (size_t)k < n && p->recorded)
        snprintf(buf + k, n - (size_t)k, " " DOT " approximate: recorded top-k far keys only");
}

float view_pattern_cell(const ViewPattern *p, const ViewPatternGeom *g, int r, int c) {
    if (!p->w || r < 0 || c < 0 || r >= g->rows || c >= g->cols) return -1;
    int qa = g->q0 + r * g->rq, ka = g->k0 + c * g->rk;
    int qb = qa + g->rq < p->n ? qa + g->rq : p->n, kb = ka + g->rk < p->n ? ka + g->rk : p->n;
    float best = -1;
    for (int qi = qa / p->bin; qi < ceil_div(qb, p->bin); qi++)
        for (int ki = ka / p->bin; ki < ceil_div(kb, p->bin); ki++) {
            float v = p->w[(size_t)qi * p->nb + ki];
            if (v > best) best = v;
        }
    return best;
}

char view_pattern_row_mark(const ViewModel *m, int layer, int head, int qa, int qb) {
    int local = 0, none = 0, cell = layer * m->n_heads + head;
    for (int q = qa; q < qb; q++) {
        const StepTrace *t = view_trace(m, q);
        if (!t) continue;
        if (view_is_fixed(t, cell)) return 'f'; /* the layer's own window: nothing to mark */
        if (!decide_has_choice(t)) none++;
        else if (t->gate[cell] == 1) return 'g';
        else if (t->gate[cell] == 0) local++;
    }
    return local ? 'l' : none ? '-' : ' ';
}

int view_pattern_bin(int n) {
    int bin = ceil_div(n, VIEW_PATTERN_MAX_CELLS);
    return bin < 1 ? 1 : bin;
}

void view_pattern_set(ViewPattern *p, int layer, int head, int n, int bin, float *w, int window, int sinks) {
    free(p->w);
    p->layer = layer, p->head = head, p->n = n, p->bin = bin, p->nb = ceil_div(n, bin), p->w = w;
    p->window = window, p->sinks = sinks, p->recorded = 0, p->unranked = 0;
}

int view_pattern_from_recorded(ViewPattern *p, const ViewModel *m, int layer, int head, int window, int sinks,
                               Err *e) {
    int n = m->n_hist, bin = view_pattern_bin(n > 0 ? n : 1), nb = ceil_div(n > 0 ? n : 1, bin);
    float *w = malloc((size_t)nb * nb * sizeof *w);
    if (!w) return err_set(e, "pattern: out of memory for %d x %d cells", nb, nb);
    for (size_t i = 0; i < (size_t)nb * nb; i++) w[i] = -1;
    int cell = layer * m->n_heads + head, ranked = 0;
    for (int q = 0; q < n; q++) {
        const StepTrace *t = m->hist[q];
        ranked |= t->top_k > 0;
        for (int r = 0; r < t->top_k; r++) {
            int k = t->top_pos[cell * t->top_k + r];
            float v = t->top_w[cell * t->top_k + r];
            if (k < 0 || k > q || isnan(v)) continue;
            float *c = &w[(size_t)(q / bin) * nb + k / bin];
            if (v > *c) *c = v;
        }
    }
    view_pattern_set(p, layer, head, n, bin, w, window, sinks);
    p->recorded = 1, p->unranked = n > 0 && !ranked;
    return 0;
}

int view_pattern_key(ViewPattern *p, int ch, int w, int h) {
    ViewPatternGeom g;
    view_pattern_geom(p, w, h, &g);
    int dq = (g.rows > 4 ? g.rows / 4 : 1) * g.rq, dk = (g.cols > 4 ? g.cols / 4 : 1) * g.rk;
    p->q0 = g.q0, p->k0 = g.k0;
    if (ch != '+' && ch != '=' && ch != '-') p->centred = 0; /* a pan (or Home) leaves the focus */
    switch (ch) {
    case '+': case '=':
        if (g.rq > p->bin || g.rk > p->bin || p->n <= 0) p->zoom++; /* no data yet: the zoom waits for it */
        p->centred = 1;
        return 1;
    case '-':
        if (p->zoom > 0) p->zoom--;
        p->centred = 1;
        return 1;
    case KEY_HOME: p->zoom = 0, p->q0 = p->k0 = 0, p->centred = 0; return 1;
    case KEY_UP: case 'k': p->q0 -= dq; return 1;
    case KEY_DOWN: case 'j': p->q0 += dq; return 1;
    case KEY_LEFT: case 'h': p->k0 -= dk; return 1;
    case KEY_RIGHT: case 'l': p->k0 += dk; return 1;
    default: return 0;
    }
}

void view_pattern_free(ViewPattern *p) {
    free(p->w);
    memset(p, 0, sizeof *p);
}

/* --- drawing --- */

/* The cursor row's heaviest keys, heaviest first: the exact row the app
 * handed over (m->attn) when it is this head's at the cursor, else the far
 * keys the run recorded (*exact 0). Returns how many. */
static int top_keys(const ViewPattern *pt, const ViewModel *m, int *pos, float *wt, int *exact) {
    const StepTrace *t = view_trace(m, m->cursor);
    *exact = 0;
    if (!t) return 0;
    int n = 0, cell = pt->layer * m->n_heads + pt->head;
    const ViewAttn *a = &m->attn;
    if (a->pos == t->pos && a->layer == pt->layer && a->head == pt->head && a->n > 0) {
        *exact = 1;
        for (int k = 0; k < a->n; k++) {
            float v = a->w[k];
            if (n == VIEW_PATTERN_TOP && !(v > wt[n - 1])) continue;
            int i = n < VIEW_PATTERN_TOP ? n++ : n - 1;
            while (i > 0 && v > wt[i - 1]) pos[i] = pos[i - 1], wt[i] = wt[i - 1], i--;
            pos[i] = k, wt[i] = v;
        }
        return n;
    }
    for (int r = 0; r < t->top_k && n < VIEW_PATTERN_TOP; r++) {
        int k = t->top_pos[cell * t->top_k + r];
        if (k >= 0 && !isnan(t->top_w[cell * t->top_k + r])) pos[n] = k, wt[n++] = t->top_w[cell * t->top_k + r];
    }
    return n;
}

void view_pattern_focus(ViewPattern *p, const ViewModel *m) {
    int tp[VIEW_PATTERN_TOP], exact;
    float tw[VIEW_PATTERN_TOP];
    const StepTrace *t = view_trace(m, m->cursor);
    p->focus_q = t ? t->pos : 0;
    p->focus_k = top_keys(p, m, tp, tw, &exact) > 0 ? tp[0] : p->focus_q;
}

int view_pattern_in_band(const ViewPattern *p, const ViewPatternGeom *g, int r, int c) {
    int qa = g->q0 + r * g->rq, qb = qa + g->rq < p->n ? qa + g->rq : p->n;
    int ka = g->k0 + c * g->rk, kb = ka + g->rk;
    return p->window > 0 && ka < qb && kb - 1 > qa - p->window; /* some key k ≤ q with q - k < window */
}

/* The rank (1 …) of the cursor row's heaviest key in grid column c, 0 if none. */
static int rank_in(const ViewPatternGeom *g, int c, const int *tp, int nt) {
    for (int i = 0; i < nt; i++)
        if (tp[i] >= g->k0 && (tp[i] - g->k0) / g->rk == c) return i + 1;
    return 0;
}

static void draw_cells(WINDOW *w, const ViewPattern *pt, const ViewModel *m, const ViewPalette *p,
                       const ViewPatternGeom *g, const int *tp, int nt) {
    attr_t dim, fa;
    short dp, fp;
    view_text_style(p, VIEW_TX_DIM, &dim, &dp);
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    const StepTrace *cur = view_trace(m, m->cursor);
    for (int r = 0; r < g->rows; r++) {
        int qa = g->q0 + r * g->rq, qb = qa + g->rq < pt->n ? qa + g->rq : pt->n, y = g->gy + r;
        int here = cur && cur->pos >= qa && cur->pos < qb;
        char lab[24];
        snprintf(lab, sizeof lab, "%*d%c", g->label_w - 2, qa, view_pattern_row_mark(m, pt->layer, pt->head, qa, qb));
        view_puts(w, y, 1, g->label_w, lab, 1, here ? fa | A_REVERSE : dim, here ? fp : dp);
        /* the window's edge for the row's first query: keys before it are far */
        int edge = qa - pt->window + 1, ec = edge > pt->sinks && edge >= g->k0 ? (edge - g->k0) / g->rk : -1;
        for (int c = 0; c < g->cols; c++) {
            float v = view_pattern_cell(pt, g, r, c);
            int sw = v < 0 ? VIEW_SW_NONE : view_level(sqrtf(v)), x = g->gx + c * g->cw;
            int rank = here ? rank_in(g, c, tp, nt) : 0;
            if (rank) {
                view_fill(w, y, x, g->cw, L' ', fa | A_REVERSE, fp);
                view_put(w, y, x, (wchar_t)('0' + rank), fa | A_REVERSE, fp);
                continue;
            }
            if (sw <= VIEW_SW_LEVEL1 && (c == ec || view_pattern_in_band(pt, g, r, c))) {
                view_fill(w, y, x, g->cw, c == ec ? (p->ascii ? L':' : L'\u2506') : (p->ascii ? L'.' : L'\u2508'), dim, dp);
                continue;
            }
            if (sw == VIEW_SW_NONE) continue;
            wchar_t ch;
            attr_t at;
            short pair;
            view_cell_style(p, sw, sw, 0, &ch, &at, &pair);
            view_fill(w, y, x, g->cw, ch, at, pair);
        }
    }
}

int view_pattern_axis_label(const ViewModel *m, const ViewPatternGeom *g, int k, int ascii, char *buf, size_t n) {
    const StepTrace *t = g->rk == 1 ? view_trace(m, k) : NULL;
    int len = snprintf(buf, n, "%d", k);
    if (!t || len < 0 || (size_t)len + 2 >= n) return len;
    char label[TRACE_PIECE_MAX * 4];
    view_piece_label(t->piece, ascii, label, sizeof label);
    int room = VIEW_PATTERN_AXIS_TEXT;
    snprintf(buf + len, n - (size_t)len, "%s", ascii ? ":" : "\xc2\xb7");
    size_t at = strlen(buf);
    /* whole characters of the token up to room columns */
    const char *s = label;
    int cw, used = 0;
    while (*s && at + 8 < n) {
        const char *c0 = s;
        wchar_t ch = view_next_glyph(&s, ascii, &cw);
        (void)ch;
        if (used + cw > room) break;
        memcpy(buf + at, c0, (size_t)(s - c0)), at += (size_t)(s - c0), used += cw;
    }
    buf[at] = 0;
    return view_text_width(buf, ascii);
}

/* 1 if a needle or question mark falls in axis columns [x, x + len): its number gives way. */
static int marked_under(const ViewModel *m, const ViewPatternGeom *g, int x, int len) {
    int c0 = x / g->cw, c1 = (x + len + g->cw - 1) / g->cw;
    return view_pattern_axis_mark(m, g->k0 + c0 * g->rk, g->k0 + c1 * g->rk, 1) != L' ';
}

/* The key axis: position numbers where they fit and no mark is, s under the sinks, the marks. */
static void draw_axis(WINDOW *w, const ViewPattern *pt, const ViewModel *m, const ViewPalette *p,
                      const ViewPatternGeom *g) {
    attr_t dim, fa;
    short dp, fp;
    view_text_style(p, VIEW_TX_DIM, &dim, &dp);
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    view_puts(w, g->axis_y, 1, g->label_w, "key", 1, dim, dp);
    int span = g->cols * g->cw;
    for (int x = 0; x < span;) {
        char num[64];
        int len = view_pattern_axis_label(m, g, g->k0 + x / g->cw * g->rk, p->ascii, num, sizeof num);
        if (x + len > span) break;
        if (!marked_under(m, g, x, len)) view_puts(w, g->axis_y, g->gx + x, len, num, p->ascii, dim, dp);
        x += (len + 6 > 10 ? len + 6 : 10) / g->cw * g->cw + (g->cw > 1 ? g->cw : 0);
    }
    for (int k = 0; k < pt->sinks; k++)
        if (k >= g->k0 && (k - g->k0) / g->rk < g->cols)
            view_put(w, g->axis_y, g->gx + (k - g->k0) / g->rk * g->cw, L's', fa, fp);
    for (int c = 0; c < g->cols; c++) { /* the needle and the question over the numbers: what a user looks for */
        wchar_t ch = view_pattern_axis_mark(m, g->k0 + c * g->rk, g->k0 + (c + 1) * g->rk, p->ascii);
        if (ch == L' ') continue;
        attr_t a;
        short pair;
        view_mark_style(p, ch == L'?' || ch == L'Q' ? VIEW_MARK_QUESTION : VIEW_MARK_NEEDLE, &a, &pair);
        view_put(w, g->axis_y, g->gx + c * g->cw, ch, a | A_BOLD, pair);
    }
}

wchar_t view_pattern_axis_mark(const ViewModel *m, int k0, int k1, int ascii) {
    int needle = 0, question = 0;
    for (int i = 0; i < m->n_marks; i++) {
        if (m->marks[i].pos < k0 || m->marks[i].pos >= k1) continue;
        needle |= m->marks[i].kind == VIEW_MARK_NEEDLE, question |= m->marks[i].kind == VIEW_MARK_QUESTION;
    }
    if (question) return ascii ? L'Q' : L'?';
    return needle ? (ascii ? L'N' : L'\u25c6') : L' ';
}

/* The last line: the cursor token's row and its heaviest keys by text. */
static void draw_info(WINDOW *w, const ViewPattern *pt, const ViewModel *m, const ViewPalette *p,
                      const ViewPatternGeom *g, const int *tp, const float *tw, int nt, int exact, int width) {
    const StepTrace *cur = view_trace(m, m->cursor);
    if (!cur) return;
    char line[1024], label[TRACE_PIECE_MAX * 4];
    view_piece_label(cur->piece, p->ascii, label, sizeof label);
    int unranked = nt == 0 && pt->unranked; /* the reason alone: at 80 columns its remedy was cut off */
    int k = snprintf(line, sizeof line, "pos %d \xc2\xab%s\xc2\xbb %c " DOT " %s%s", cur->pos, label,
                     view_pattern_row_mark(m, pt->layer, pt->head, cur->pos, cur->pos + 1),
                     unranked ? VIEW_PATTERN_UNRANKED : exact ? "heaviest keys" : "heaviest recorded far keys",
                     unranked ? "" : ":");
    if (nt == 0 && !unranked) snprintf(line + k, sizeof line - (size_t)k, " none known");
    for (int i = 0; i < nt && k > 0 && (size_t)k < sizeof line; i++) {
        const StepTrace *kt = view_trace(m, tp[i]);
        char wt[16]; /* a light key at long context never reads 0.00 */
        view_piece_label(kt ? kt->piece : "?", p->ascii, label, sizeof label);
        view_weight_text(wt, sizeof wt, tw[i]);
        k += snprintf(line + k, sizeof line - (size_t)k, " %d:%d \"%.24s\" %s", i + 1, tp[i], label, wt);
    }
    view_puts_fit(w, g->info_y, 1, width, line, p->ascii, A_NORMAL, 0);
}

void view_draw_pattern(WINDOW *w, const ViewPattern *pt, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    ViewPatternGeom g;
    view_pattern_geom(pt, wd, h, &g);
    char title[256];
    view_pattern_title(pt, &g, title, sizeof title);
    werase(w);
    view_frame_box(w, p, title, 1);
    if (!pt->w) {
        view_puts(w, 1, 2, wd - 4, "computing the pattern\xe2\x80\xa6", p->ascii, A_NORMAL, 0);
        return;
    }
    int tp[VIEW_PATTERN_TOP];
    float tw[VIEW_PATTERN_TOP];
    int exact, nt = top_keys(pt, m, tp, tw, &exact);
    draw_cells(w, pt, m, p, &g, tp, nt);
    if (pt->unranked) /* an empty grid says why */
        view_puts_fit(w, g.gy + g.rows / 2, g.gx, g.gw, VIEW_PATTERN_UNRANKED, p->ascii, A_BOLD, 0);
    draw_axis(w, pt, m, p, &g);
    draw_info(w, pt, m, p, &g, tp, tw, nt, exact, wd - 2);
    attr_t dim;
    short dp;
    view_text_style(p, VIEW_TX_DIM, &dim, &dp);
    char legend[240];
    /* the edge marked is the one the head reads: AHA's window, or a fixed-local layer's own */
    int fixed = view_is_fixed(view_trace(m, m->cursor), pt->layer * m->n_heads + pt->head);
    snprintf(legend, sizeof legend,
             " g global %s l local %s - no choice %s %s%s %s %d %s s sink %s + - zoom, arrows pan, A closes ", DOT, DOT,
             DOT, fixed ? "f fixed-local \xc2\xb7 " : "", p->ascii ? ":" : "\xe2\x94\x86",
             fixed ? "layer window" : "window", pt->window, DOT, DOT);
    view_puts_fit(w, h - 1, 2, wd - 4, legend, p->ascii, dim, dp);
}
