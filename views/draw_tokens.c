/* draw_tokens.c — the wrapped, tinted token stream (see draw.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/draw.h"
#include "views/geom.h"
#include "views/paint.h"

/* Without colour a token's tint becomes emphasis: bold for high values or
 * both-global, underline for the agreement errors. */
static attr_t mono_emphasis(int sw) {
    if (sw == VIEW_SW_MISSED_GLOBAL) return A_BOLD | A_UNDERLINE;
    if (sw == VIEW_SW_NEEDLESS_GLOBAL) return A_UNDERLINE;
    if (sw == VIEW_SW_BOTH_GLOBAL) return A_BOLD;
    if (sw >= VIEW_SW_LEVEL1 + VIEW_LEVELS / 2 && sw < VIEW_SW_LEVEL1 + VIEW_LEVELS) return A_BOLD;
    return A_NORMAL;
}

/* The title; a long run's says which positions the pane shows (first to
 * last drawn, -1: all of them). */
static void token_title(const ViewModel *m, int first, int last, char *buf, size_t n) {
    int prompt = 0;
    while (prompt < m->n_hist && m->hist[prompt]->is_prompt) prompt++;
    char tint[96], range[64] = "";
    if (last >= 0 && (first > 0 || last < m->n_hist - 1))
        snprintf(range, sizeof range, " \xc2\xb7 pos %d-%d of %d", first, last, m->n_hist);
    if (m->tint_share) snprintf(tint, sizeof tint, "share of heads global");
    else if (m->metric == VIEW_METRIC_AGREE)
        snprintf(tint, sizeof tint, "L%d H%d %s vs oracle", m->sel_layer, m->sel_head, view_pred_name(m->agree_pred));
    else snprintf(tint, sizeof tint, "L%d H%d %s", m->sel_layer, m->sel_head, view_metric_name(m->metric));
    snprintf(buf, n, "tokens: %d prompt + %d generated%s \xc2\xb7 tint: %s", prompt, m->n_hist - prompt, range, tint);
}

static void draw_token(WINDOW *w, const ViewModel *m, const ViewPalette *p, int i, int y, int x, int maxw) {
    const StepTrace *t = m->hist[i];
    wchar_t buf[TRACE_PIECE_MAX];
    int width, nl;
    int n = view_token_glyphs(t->piece, p->ascii, buf, TRACE_PIECE_MAX, &width, &nl);
    int sw = view_token_swatch(m, t);
    short pair = view_pair_token(p, sw);
    attr_t a = p->colour == VIEW_COLOUR_NONE ? mono_emphasis(sw) : A_NORMAL;
    if (i == m->cursor) a |= A_REVERSE | A_BOLD;
    if (view_mark_at(m, i)) a |= A_UNDERLINE; /* which mark: the glyph on the line's left border */
    int used = 0;
    for (int k = 0; k < n; k++) {
        int cw = wcwidth(buf[k]);
        if (cw < 1) cw = 1;
        if (used + cw > maxw) break;
        view_put(w, y, x + used, buf[k], a, pair);
        used += cw;
    }
}

/* v, or +0 where it is negative or -0. */
static double non_negative(double v) { return v > 0 ? v : 0.0; }

/* Surprise of each position, -log p in nats, as a sparkline (full height at
 * SURPRISE_TOP nats and above), and the cursor's -log p and entropy: where
 * the model was unsure, and what each token cost it. */
#define SURPRISE_TOP 10.0f
static void surprise_strip(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewTokGeom *g) {
    const char *minus = p->ascii ? "-" : "\xe2\x88\x92";
    view_printf(w, g->y_strip, 1, g->x0 - 1, p->ascii, A_DIM, 0, "%slog p", minus);
    for (int c = 0; c < g->n_tok_vis; c++) {
        const StepTrace *t = m->hist[g->first_tok + c];
        float v = isnan(t->logprob) ? NAN : fminf(-t->logprob / SURPRISE_TOP, 1.0f);
        attr_t a = g->first_tok + c == m->cursor ? A_REVERSE : A_NORMAL;
        wchar_t ch = isnan(v) ? (p->ascii ? L'.' : L'\u00b7') : view_glyph_spark(p, v);
        view_put(w, g->y_strip, g->x0 + c, ch, a, isnan(v) ? 0 : view_pair_cells(p, view_level(v), VIEW_SW_BLANK));
    }
    if (m->cursor < 0 || m->cursor >= m->n_hist) return;
    const StepTrace *t = m->hist[m->cursor];
    ViewMarkKind mk = view_mark_at(m, m->cursor);
    char mark[24] = ""; /* the cursor on a marked position says which mark it is */
    if (mk) snprintf(mark, sizeof mark, " %lc %s", (wint_t)view_mark_glyph(mk, p->ascii), view_mark_name(mk));
    if (isnan(t->logprob))
        view_printf(w, g->y_strip, g->x_text, g->text_w, p->ascii, A_DIM, 0, "pos %d%s: no prediction", t->pos, mark);
    else /* both are at least 0: a rounding's -0.0 prints as 0 */
        view_printf(w, g->y_strip, g->x_text, g->text_w, p->ascii, A_NORMAL, 0, "pos %d%s %slog p %.2f H %.2f", t->pos,
                    mark, minus, non_negative(-t->logprob), non_negative(t->entropy));
}

/* The forms of a long prefill's progress, longest first: the rate and
 * what is left only once a rate is known. */
#define PREFILL_FORMS 5
static void prefill_forms(const ViewModel *m, char f[PREFILL_FORMS][128]) {
    const char *dot = "\xc2\xb7";
    int done = m->prefill_done, total = m->prefill_total, pct = (int)(100.0 * done / total);
    double rate = m->prefill_tok_s, left = rate > 0 ? (total - done) / rate : 0;
    char eta[48] = "";
    if (rate > 0 && done > 0)
        snprintf(eta, sizeof eta, " %s %.0f tok/s %s about %.0f %s left", dot, rate, dot,
                 left < 90 ? left : left / 60, left < 90 ? "s" : "min");
    snprintf(f[0], 128, "prefilling the prompt: %d of %d tokens (%d%%)%s %s q quits", done, total, pct, eta, dot);
    snprintf(f[1], 128, "prefilling the prompt: %d of %d tokens (%d%%) %s q quits", done, total, pct, dot);
    snprintf(f[2], 128, "prefilling: %d/%d (%d%%) %s q quits", done, total, pct, dot);
    snprintf(f[3], 128, "prefilling %d/%d", done, total);
    snprintf(f[4], 128, "prefilling");
}

/* A long prefill in the empty pane: the longest form that fits on the
 * first line, and a bar of the share done under it. */
static void prefill_note(WINDOW *w, const ViewModel *m, const ViewPalette *p, int iw, int ih) {
    char f[PREFILL_FORMS][128];
    prefill_forms(m, f);
    int k = 0;
    while (k + 1 < PREFILL_FORMS && view_text_width(f[k], p->ascii) > iw) k++;
    view_puts(w, 1, 1, iw, f[k], p->ascii, A_BOLD, 0);
    if (ih < 2) return;
    int full = (int)((double)iw * m->prefill_done / m->prefill_total);
    full = full < 0 ? 0 : full > iw ? iw : full;
    view_fill(w, 2, 1, full, p->ascii ? L'#' : L'\u2588', A_NORMAL, 0);
    view_fill(w, 2, 1 + full, iw - full, p->ascii ? L'.' : L'\u2591', A_DIM, 0);
}

/* What an empty pane says: a long prefill's progress, that the engine is
 * computing the first positions, or, only when nothing runs, how to begin. */
static void empty_note(WINDOW *w, const ViewModel *m, const ViewPalette *p, int iw, int ih) {
    if (m->prefill_total > 0) prefill_note(w, m, p, iw, ih);
    else if (m->busy) view_puts(w, 1, 1, iw, "(prefilling the prompt\xe2\x80\xa6)", p->ascii, A_DIM, 0);
    else view_puts(w, 1, 1, iw, "(no tokens yet: press space to step)", p->ascii, A_DIM, 0);
}

static ViewMarkKind gutter_of(const ViewMarkKind *gutter, int line) {
    return gutter ? gutter[line] : VIEW_MARK_NONE;
}

void view_draw_tokens(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    char title[200];
    int iw = wd - 2, ih = h - 2;
    if (iw <= 0 || ih <= 0 || m->n_hist == 0) {
        token_title(m, 0, -1, title, sizeof title);
        view_frame_box(w, p, title, m->focus == VIEW_PANE_TOKENS);
        if (iw > 0 && ih > 0) empty_note(w, m, p, iw, ih);
        return;
    }
    ViewTokGeom g;
    view_tok_geom(m, wd, h, &g);
    int first = g.first_line, shown = -1, last = -1;
    ih = g.ih;
    int x = 0, y = 0, sx, sy, tw;
    ViewMarkKind *gutter = m->n_marks > 0 ? calloc((size_t)ih, sizeof *gutter) : NULL; /* each line's mark */
    for (int i = g.first_pos; i < m->n_hist; i++) {
        view_tok_place(m, i, iw, &x, &y, &sx, &sy, &tw);
        if (sy < first) continue;
        if (sy >= first + ih) break;
        draw_token(w, m, p, i, 1 + sy - first, 1 + sx, iw - sx);
        ViewMarkKind k = gutter ? view_mark_at(m, i) : VIEW_MARK_NONE;
        if (k > gutter_of(gutter, sy - first)) gutter[sy - first] = k;
        if (shown < 0) shown = i;
        last = i;
    }
    token_title(m, shown, last, title, sizeof title); /* the box after the text: its title names what was drawn */
    view_frame_box(w, p, title, m->focus == VIEW_PANE_TOKENS);
    for (int l = 0; gutter && l < ih; l++) /* on the border, so the text keeps its place */
        if (gutter[l]) {
            attr_t a;
            short pair;
            view_mark_style(p, gutter[l], &a, &pair);
            view_put(w, 1 + l, 0, view_mark_glyph(gutter[l], p->ascii), a, pair);
        }
    free(gutter);
    if (g.y_strip) surprise_strip(w, m, p, &g);
}
