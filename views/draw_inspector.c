/* draw_inspector.c — the inspector: the selected head over time, its verdicts, its attention at the cursor.
 *
 * The selected head over time, its verdicts and its
 * attention at the cursor token (see draw.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/predictors.h"
#include "views/draw.h"
#include "views/explain.h"
#include "views/fixed.h"
#include "views/geom.h"
#include "views/paint.h"
#include "views/pin.h"
#include "views/why.h"

/* Sparkline of one metric of the selected head over positions 0 … cursor,
 * on the attention strip's columns (a bin's mean where positions outnumber
 * them: its maximum saturated every column of a long run), each glyph
 * coloured by its level; the cursor's column, the last, reversed (its value
 * is stated by the verdict beside it). */
static void sparkline(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewInspGeom *g, int y,
                      const char *label, ViewMetric k) {
    int cell = m->sel_layer * m->n_heads + m->sel_head;
    view_puts(w, y, 1, g->x0 - 1, label, p->ascii, A_DIM, 0);
    for (int c = 0; c < g->n_tok_vis; c++) {
        double sum = 0;
        int n = 0, hi = view_bin_lo(c + 1, g->n_pos, g->n_tok_vis);
        for (int i = view_bin_lo(c, g->n_pos, g->n_tok_vis); i < hi && i < m->n_hist; i++) {
            float x = view_metric_value(m, m->hist[i], cell, k);
            if (!isnan(x)) sum += x, n++;
        }
        float v = n ? (float)(sum / n) : NAN;
        attr_t a = hi - 1 == m->cursor ? A_REVERSE : A_NORMAL;
        view_put(w, y, g->x0 + c, view_glyph_spark(p, v), a, view_pair_cells(p, view_level(v), VIEW_SW_BLANK));
    }
}

/* Draw one verdict; its agreement, when it is there in full, tinted like
 * the agreement metric's cells. */
static void verdict_line(WINDOW *w, const ViewPalette *p, int y, int x, int maxw, const char *s, int agree_at,
                         int sw, attr_t a) {
    int used = view_puts_fit(w, y, x, maxw, s, p->ascii, a, 0);
    if (agree_at <= 0 || used < view_text_width(s, p->ascii)) return;
    char head[VIEW_EXPLAIN_CAP];
    snprintf(head, sizeof head, "%.*s", agree_at, s);
    int ax = x + view_text_width(head, p->ascii);
    view_puts(w, y, ax, maxw - (ax - x), s + agree_at, p->ascii, a, view_pair_token(p, sw));
}

/* The verdicts at the cursor token (one line per predictor, then the
 * executed gate), in full where they fit, else briefly: global ones bold,
 * missing ones dim. */
static void verdicts(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewInspGeom *g, int h, int wd) {
    const StepTrace *t = view_trace(m, m->cursor);
    if (!t || g->text_w <= 0) return;
    ViewExplain x;
    int cell = m->sel_layer * m->n_heads + m->sel_head;
    view_explain(m, t, cell, &x);
    /* a fixed-local head has no sparkline rows: its lines take the whole width */
    int fixed = view_is_fixed(t, cell), x0 = fixed ? 1 : g->x_text, tw = fixed ? wd - 2 : g->text_w;
    for (int i = 0; i < x.n && i < g->n_text && g->y_spark + i < h - 1; i++) {
        if (view_insp_aside_row(g, g->y_spark + i)) continue; /* the pinned head's or the parent's line */
        attr_t a = x.decision[i] > 0 ? A_BOLD : x.decision[i] < 0 ? A_DIM : A_NORMAL;
        int full = view_text_width(x.line[i], p->ascii) <= tw;
        verdict_line(w, p, g->y_spark + i, x0, tw, full ? x.line[i] : x.brief[i],
                     full ? x.agree_at[i] : x.brief_agree_at[i], x.agree_sw[i], a);
    }
}

static int bin_lo(int c, int n, int n_cols) { return view_bin_lo(c, n, n_cols); }

/* Mass of the strip's column c. */
static float bin_mass(const ViewAttn *at, int c, int n_cols) {
    float s = 0;
    for (int i = bin_lo(c, at->n, n_cols); i < bin_lo(c + 1, at->n, n_cols) && i < at->n; i++) s += at->w[i];
    return s;
}

/* The strip column whose bin holds pos, so markers sit on their bin. */
static int column_of(int pos, int n, int n_cols) {
    int c = n <= n_cols ? pos : (int)((long long)pos * n_cols / n);
    while (c + 1 < n_cols && bin_lo(c + 1, n, n_cols) <= pos) c++;
    while (c > 0 && bin_lo(c, n, n_cols) > pos) c--;
    return c;
}

/* The window boundary under the strip with a note beside it (the window's
 * first position, the mass outside the local set): the stacked inspector's
 * form, without a text column for the far positions. */
static void boundary_note(WINDOW *w, const ViewPalette *p, const ViewInspGeom *g, const ViewAttn *at,
                          const ViewAttnSplit *sp, int cols, int wd) {
    int y = g->y_strip + 1;
    for (int s = 0; s < at->sinks && s < at->n; s++)
        view_put(w, y, g->x0 + column_of(s, at->n, cols), L's', A_DIM, 0);
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    int bx = g->x0 + column_of(sp->window_start, at->n, cols);
    view_put(w, y, bx, p->ascii ? L'^' : L'\u2191', fa, fp);
    /* the long note when it fits beside the marker, else the short one */
    char msg[2][120], far[16];
    view_share_text(far, sizeof far, sp->far); /* as the oracle's line prints the same mass */
    snprintf(msg[0], sizeof msg[0], "window from %d \xc2\xb7 far %s", sp->window_start, far);
    snprintf(msg[1], sizeof msg[1], "far %s", far);
    int k = 0, mw = 0, mx = g->x0;
    for (k = 0; k < 2; k++) {
        mw = view_text_width(msg[k], p->ascii);
        if (bx + 2 + mw <= wd - 1) { mx = bx + 2; break; }
        if (bx - 1 - mw >= g->x0) { mx = bx - 1 - mw; break; }
    }
    if (k == 2) k = 1;
    view_puts(w, y, mx, wd - 1 - mx, msg[k], p->ascii, A_BOLD, 0);
}

/* Glyph of axis column c (positions lo … hi-1): s sinks, ↑ the window's
 * first position, ═ window, ─ far. */
static wchar_t axis_glyph(const ViewAttn *at, int start, int lo, int hi, int ascii) {
    if (lo < at->sinks) return L's';
    if (start > 0 && start >= lo && start < hi) return ascii ? L'^' : L'\u2191';
    if (lo >= start) return ascii ? L'=' : L'\u2550';
    return ascii ? L'-' : L'\u2500';
}

/* The axis under the strip, labelled with the window's first position left
 * of its marker and the last position at the end, where they fit. */
static void axis(WINDOW *w, const ViewPalette *p, const ViewInspGeom *g, const ViewAttn *at, int start, int cols) {
    int y = g->y_strip + 1, n = at->n, sink_end = 0;
    view_puts(w, y, 1, g->x0 - 1, "pos", 1, A_DIM, 0);
    for (int c = 0; c < cols; c++) {
        int lo = bin_lo(c, n, cols), hi = bin_lo(c + 1, n, cols);
        if (lo < at->sinks) sink_end = c + 1;
        view_put(w, y, g->x0 + c, axis_glyph(at, start, lo, hi, p->ascii), A_DIM, 0);
    }
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    int bx = column_of(start, n, cols), right = cols;
    char num[16];
    if (start > 0 && start >= at->sinks) {
        view_put(w, y, g->x0 + bx, p->ascii ? L'^' : L'\u2191', fa, fp);
        int len = snprintf(num, sizeof num, "%d", start);
        if (bx - len >= sink_end) view_puts(w, y, g->x0 + bx - len, len, num, 1, fa, fp);
    } else {
        bx = -1;
    }
    int len = snprintf(num, sizeof num, "%d", n - 1);
    if (right - len > bx + 1) view_puts(w, y, g->x0 + right - len, len, num, 1, A_DIM, 0);
}

/* The ranked far positions, one per line under the strip when the pane is
 * tall enough: rank, position, its text, its weight, and a bar scaled to
 * the heaviest. */
static int far_list(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewInspGeom *g, int wd,
                    const int *pos, const float *wt, int n, const char *what) {
    if (!g->y_list) return 0;
    view_puts(w, g->y_list, 1, wd - 2, what, p->ascii, A_DIM, 0);
    int k = 0;
    for (; k < n && k + 1 < g->n_list && pos[k] >= 0; k++) {
        const StepTrace *t = view_trace(m, pos[k]);
        char label[TRACE_PIECE_MAX * 4] = "", line[160];
        if (t) view_piece_label(t->piece, m->ascii, label, sizeof label);
        int x = 1 + view_printf(w, g->y_list + 1 + k, 1, wd - 2, p->ascii, A_NORMAL, 0, "%2d  pos %-5d \"%.16s\"", k + 1,
                                pos[k], label);
        x = x < 34 ? 34 : x + 1;
        view_weight_text(line, sizeof line - 1, wt[k]);
        strcat(line, " ");
        x += view_puts(w, g->y_list + 1 + k, x, wd - 1 - x, line, 1, A_BOLD, 0);
        int bar = wt[0] > 0 ? (int)(wt[k] / wt[0] * 24 + 0.5f) : 0;
        for (int b = 0; b < bar && x + b < wd - 1; b++)
            view_put(w, g->y_list + 1 + k, x + b, p->ascii ? L'#' : L'\u2588', A_NORMAL,
                     view_pair_cells(p, view_level(wt[k] / wt[0]), VIEW_SW_BLANK));
    }
    return 1 + k;
}

/* The same from the far positions the run recorded for the cursor token. */
static int recorded_list(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewInspGeom *g, int wd,
                         const StepTrace *t) {
    int cell = m->sel_layer * m->n_heads + m->sel_head, n = 0, pos[VIEW_ATTN_TOP];
    float wt[VIEW_ATTN_TOP];
    for (; t && n < t->top_k && n < VIEW_ATTN_TOP; n++)
        pos[n] = t->top_pos[(size_t)cell * t->top_k + n], wt[n] = t->top_w[(size_t)cell * t->top_k + n];
    return n > 0 ? far_list(w, m, p, g, wd, pos, wt, n, "heaviest far positions (recorded):") : 0;
}

/* The attention strip over positions 0 … pos; under it the window boundary
 * and, beside the verdicts, where the head looked (explain.h). Returns the
 * lines the ranked far positions took under it. */
static int strip(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewInspGeom *g, int wd) {
    const StepTrace *t = view_trace(m, m->cursor);
    ViewAttn fixed = m->attn; /* a fixed-local head's local set is its layer's window, not AHA's */
    int W = view_fixed_window(t, m->sel_layer * m->n_heads + m->sel_head);
    if (W > 0) fixed.window = W, fixed.sinks = 0;
    const ViewAttn *at = &fixed;
    int y = g->y_strip, width = g->stacked ? wd - 1 - g->x0 : g->n_cols;
    view_puts(w, y, 1, g->x0 - 1, "attn", 1, A_DIM, 0);
    if (!t || at->pos != t->pos || at->layer != m->sel_layer || at->head != m->sel_head || at->n <= 0) {
        char rec[4 * VIEW_EXPLAIN_CAP];
        if (view_explain_recorded(m, t, m->sel_layer * m->n_heads + m->sel_head, width, rec, sizeof rec)) {
            view_puts_fit(w, y, g->x0, width, rec, p->ascii, A_NORMAL, 0); /* a replay: what the run recorded */
            return recorded_list(w, m, p, g, wd, t);
        }
        const char *why = "attention weights not available for this token";
        if (view_text_width(why, p->ascii) > width) why = "weights not available"; /* beside the verdicts */
        view_puts_fit(w, y, g->x0, width, why, p->ascii, A_DIM, 0);
        return 0;
    }
    int cols = at->n < width ? at->n : width;
    float max = 0;
    for (int c = 0; c < cols; c++)
        if (bin_mass(at, c, cols) > max) max = bin_mass(at, c, cols);
    for (int c = 0; c < cols; c++) {
        float v = max > 0 ? bin_mass(at, c, cols) / max : 0;
        view_put(w, y, g->x0 + c, view_glyph_spark(p, v), A_NORMAL, view_pair_cells(p, view_level(v), VIEW_SW_BLANK));
    }
    ViewAttnSplit sp;
    view_attn_split(at, &sp);
    int used = far_list(w, m, p, g, wd, sp.top_pos, sp.top_w, sp.n_top, "heaviest far positions:");
    if (g->stacked) {
        boundary_note(w, p, g, at, &sp, cols, wd);
        return used;
    }
    axis(w, p, g, at, sp.window_start, cols);
    char where[4 * VIEW_EXPLAIN_CAP];
    view_explain_attn(m, at, &sp, g->text_w, where, sizeof where);
    view_puts_fit(w, y + 1, g->x_text, g->text_w, where, p->ascii, A_NORMAL, 0);
    return used;
}

/* Under the far positions, where the band has the lines: what drove the
 * router and what going local would change (why.h), so that the reasons
 * read as one block with where the far mass sat. */
static void why_block(WINDOW *w, const ViewModel *m, const ViewPalette *p, int y, int h, int wd) {
    char lines[VIEW_WHY_LINES][VIEW_WHY_CAP];
    int n = view_why_lines(m, wd - 2, lines);
    for (int i = 0; i < n && y + i < h - 1; i++) view_puts_fit(w, y + i, 1, wd - 2, lines[i], p->ascii, A_NORMAL, 0);
}

/* "inspector · L0 H3 @ pos 28 «w»": the verdicts and the strip are about
 * the cursor token, so the title names it. */
static void insp_title(const ViewModel *m, int ascii, char *buf, size_t n) {
    const StepTrace *t = view_trace(m, m->cursor);
    int k = snprintf(buf, n, "inspector \xc2\xb7 L%d H%d", m->sel_layer, m->sel_head);
    if (!t || k < 0 || (size_t)k >= n) return;
    char label[TRACE_PIECE_MAX * 4];
    view_piece_label(t->piece, ascii, label, sizeof label);
    int k2 = snprintf(buf + k, n - (size_t)k, " @ pos %d \xc2\xab%.24s\xc2\xbb", t->pos, label);
    const char *note = view_bookmark_note(m, m->cursor);
    if (note[0] && k2 > 0 && (size_t)(k + k2) < n) { /* what the user wrote about this token, in their words */
        const char *star = ascii ? "!" : "\xe2\x98\x85"; /* view_mark_glyph's bookmark, ★ */
        snprintf(buf + k + k2, n - (size_t)(k + k2), " %s bookmark: %s", star, note);
    }
}

void view_draw_inspector(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    char title[200 + VIEW_NOTE_MAX];
    insp_title(m, p->ascii, title, sizeof title);
    view_frame_box(w, p, title, m->focus == VIEW_PANE_INSPECTOR);
    ViewInspGeom g;
    view_insp_geom(m, wd, h, &g);
    /* a sparkline per row of the predictor list that names one (its spark column), of its field; none for
     * a fixed-local head, which no predictor decides (its verdict lines say so) */
    int fixed = view_is_fixed(view_trace(m, m->cursor), m->sel_layer * m->n_heads + m->sel_head);
    for (int i = 0, y = g.y_spark; i < PRED_COUNT && !g.stacked && !fixed && y < h - 1; i++) {
        if (!PRED_INFO[i].spark[0]) continue;
        if (!view_insp_aside_row(&g, y)) sparkline(w, m, p, &g, y, PRED_INFO[i].spark,
                                                   view_metric_of_field(PRED_INFO[i].field));
        y++;
    }
    int listed = g.y_strip + 1 < h - 1 ? strip(w, m, p, &g, wd) : 0;
    if (g.y_list) why_block(w, m, p, g.y_list + listed, h, wd);
    verdicts(w, m, p, &g, h, wd);
    view_draw_aside(w, m, p, &g, wd);
}
