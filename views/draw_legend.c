/* draw_legend.c — the one-line legend of the current metric (see draw.h). */
#include <stdio.h>
#include <string.h>

#include "engine/predictors.h"
#include "views/metric.h"
#include "views/needle.h"
#include "views/draw.h"
#include "views/fixed.h"
#include "views/paint.h"
#include "views/rates.h"

/* One sample cell of a swatch, as the heatmaps draw it. */
static int sample(WINDOW *w, const ViewPalette *p, int x, int sw) {
    wchar_t ch;
    attr_t a;
    short pair;
    view_cell_style(p, sw, sw, 0, &ch, &a, &pair); /* exactly the cells' glyph, blank included */
    view_put(w, 0, x, ch, a, pair);
    return 1;
}

/* Threshold note of a metric: what value counts as "global". */
/* Whether metric k is the field of a scored θ predictor (an estimate of
 * the oracle's mass: the QAdA family, and any added to the list). */
static int estimate_metric(ViewMetric k) {
    for (int i = 0; i < PRED_COUNT; i++)
        if (PRED_INFO[i].thr == PRED_THR_THETA && PRED_INFO[i].scored && view_metric_of_field(PRED_INFO[i].field) == k)
            return 1;
    return 0;
}

static void note(const ViewModel *m, int ascii, char *buf, size_t n) {
    const char *tau = ascii ? "tau" : "\xcf\x84", *theta = ascii ? "theta" : "\xce\xb8";
    char span[32];
    if (m->metric == view_metric_counterfactual()) {
        snprintf(buf, n, "counterfactual: mass beyond the layer's window if it saw every key (never executed)");
        return;
    }
    switch (m->metric) {
    case VIEW_METRIC_score: snprintf(buf, n, "global if > %s %.2f", tau, m->hdr.tau); break;
    case VIEW_METRIC_oracle_logit: snprintf(buf, n, "oracle global if > %s %.2f", theta, decide_prob(m->hdr.theta_logit)); break;
    case VIEW_METRIC_oracle_err: snprintf(buf, n, "||o_full - o_local|| / ||o_full||, clamped at 1"); break;
    case VIEW_METRIC_keys_read: snprintf(buf, n, "keys this query head read, of the pos+1 there are"); break;
    case VIEW_METRIC_NEEDLE: {
        ViewMarkKind k = view_weight_kind(m);
        if (k == VIEW_MARK_NONE) snprintf(buf, n, "no needle: open a task item (--tasks) or mark a span with b");
        else snprintf(buf, n, "attention on the %s (%s top-k far keys: a lower bound)", view_mark_name(k), ascii ? ">=" : "\xe2\x89\xa5");
        break;
    }
    case VIEW_METRIC_far_std:
        snprintf(buf, n, "%s of the far scores; above 1 (mid) is the frozen regime",
                 ascii ? "sigma/sqrt(2 ln n_far)" : "\xcf\x83/\xe2\x88\x9a(2 ln n_far)");
        break;
    default:
        if (estimate_metric(m->metric))
            snprintf(buf, n, "predicted out_mass; global if > %s %.2f", theta, decide_prob(m->hdr.theta_logit));
        else if (!view_metric_is_rate(m->metric)) buf[0] = '\0';
        else if (m->metric == VIEW_METRIC_RATE_AGREE)
            snprintf(buf, n, "%s, %s vs oracle: %s", view_rate_span(m, span, sizeof span),
                     view_pred_name(m->agree_pred), view_rate_doc(m->metric));
        else snprintf(buf, n, "%s: %s", view_rate_span(m, span, sizeof span), view_rate_doc(m->metric));
        break;
    }
}

/* The four classes with their samples; short labels when the long ones
 * would not fit the line. */
static int agree_scale(WINDOW *w, const ViewModel *m, const ViewPalette *p, int x, int wd) {
    static const int sw[4] = {VIEW_SW_BOTH_GLOBAL, VIEW_SW_BOTH_LOCAL, VIEW_SW_MISSED_GLOBAL,
                              VIEW_SW_NEEDLESS_GLOBAL};
    static const char *const name[2][4] = {
        {"both global", "both local", "missed global", "needless global"},
        {"both G", "both L", "missed G", "needless G"},
    };
    char head[64];
    snprintf(head, sizeof head, "%s vs oracle: ", view_pred_name(m->agree_pred));
    int need = view_text_width(head, p->ascii);
    for (int i = 0; i < 4; i++) need += 4 + view_text_width(name[0][i], p->ascii);
    const char *const *labels = x + need <= wd ? name[0] : name[1];
    x += view_puts(w, 0, x, wd - x, head, p->ascii, A_NORMAL, 0);
    for (int i = 0; i < 4 && x + 2 < wd; i++) {
        x += sample(w, p, x, sw[i]);
        x += view_printf(w, 0, x, wd - x, p->ascii, A_NORMAL, 0, " %s  ", labels[i]);
    }
    return x;
}

/* "╌ fixed-local (layer window 512)" after the scale, where the trace at
 * the cursor has layers the architecture windows (their cells are drawn
 * so); the shorter form, then none, where it does not fit. */
static int fixed_legend(WINDOW *w, const ViewModel *m, const ViewPalette *p, int x, int wd) {
    ViewLayerKinds k = view_trace_kinds(view_trace(m, m->cursor));
    if (!k.n_local) return x;
    char text[2][64], ws[32];
    if (k.w_min == k.w_max) snprintf(ws, sizeof ws, "window %d", k.w_min);
    else snprintf(ws, sizeof ws, "windows %d-%d", k.w_min, k.w_max);
    snprintf(text[0], sizeof text[0], " fixed-local (layer %s)", ws);
    snprintf(text[1], sizeof text[1], " fixed-local");
    for (int f = 0; f < 2; f++) {
        if (x + 3 + view_text_width(text[f], p->ascii) > wd - 1) continue;
        x += view_puts(w, 0, x, wd - x, "  ", 1, A_NORMAL, 0);
        x += sample(w, p, x, VIEW_SW_FIXED);
        return x + view_puts(w, 0, x, wd - x, text[f], p->ascii, A_NORMAL, 0);
    }
    return x;
}

static int gradient_scale(WINDOW *w, const ViewModel *m, const ViewPalette *p, int x, int wd) {
    if (m->metric == VIEW_METRIC_gate) {
        x += sample(w, p, x, VIEW_SW_LEVEL1);
        x += view_puts(w, 0, x, wd - x, " local  ", p->ascii, A_NORMAL, 0);
        x += sample(w, p, x, VIEW_SW_LEVEL1 + VIEW_LEVELS - 1);
        x += view_puts(w, 0, x, wd - x, " global", p->ascii, A_NORMAL, 0);
        return fixed_legend(w, m, p, x, wd);
    }
    x += view_puts(w, 0, x, wd - x, "0 ", 1, A_NORMAL, 0);
    for (int l = 0; l < VIEW_LEVELS && x < wd; l++) x += sample(w, p, x, VIEW_SW_LEVEL1 + l);
    const char *top = m->metric == VIEW_METRIC_far_std ? " 2"
                      : m->metric != VIEW_METRIC_oracle_err ? " 1" : p->ascii ? " >=1" : " \xe2\x89\xa5" "1";
    x += view_puts(w, 0, x, wd - x, top, p->ascii, A_NORMAL, 0);
    x = fixed_legend(w, m, p, x, wd);
    char buf[160];
    note(m, p->ascii, buf, sizeof buf);
    if (buf[0] && x + 3 < wd) x += 3 + view_puts_fit(w, 0, x + 3, wd - x - 3, buf, p->ascii, A_DIM, 0);
    return x;
}

/* How the token stream shows its tint, where that differs from the scale
 * on the left: the share of heads global (its own gradient), or, without
 * colour, bold and underline standing in for the colours. Drawn at the
 * right end when it fits; returns 0 when it did not. */
static int token_legend(WINDOW *w, const ViewModel *m, const ViewPalette *p, int x, int wd) {
    int mono = p->colour == VIEW_COLOUR_NONE;
    int agree = m->metric == VIEW_METRIC_AGREE && !m->tint_share;
    if (!mono && !m->tint_share) return 0;
    typedef struct { const char *text; attr_t a; } Word;
    static const Word AGREE[] = {
        {"missed", A_BOLD | A_UNDERLINE}, {" ", 0}, {"needless", A_UNDERLINE}, {" ", 0}, {"both global", A_BOLD}},
                      HIGH[] = {{"bold", A_BOLD}, {" = upper half", 0}};
    int need = 10 + (m->tint_share ? 18 + (mono ? 20 : VIEW_LEVELS) : 0) + (mono ? (agree ? 32 : 18) : 0);
    int at = wd - need - 1;
    if (at < x + 2) return 0;
    at += view_puts(w, 0, at, wd - at, "tokens: ", 1, A_DIM, 0);
    if (m->tint_share) {
        at += view_puts(w, 0, at, wd - at, "share global ", 1, A_NORMAL, 0);
        if (!mono)
            for (int l = 0; l < VIEW_LEVELS && at < wd; l++) at += sample(w, p, at, VIEW_SW_LEVEL1 + l);
        at += view_puts(w, 0, at, wd - at, " ", 1, A_NORMAL, 0);
    }
    if (!mono) return 1;
    const Word *words = agree ? AGREE : HIGH;
    int n = agree ? (int)(sizeof AGREE / sizeof AGREE[0]) : (int)(sizeof HIGH / sizeof HIGH[0]);
    for (int i = 0; i < n; i++) at += view_puts(w, 0, at, wd - at, words[i].text, p->ascii, words[i].a, 0);
    return 1;
}

/* The glyphs and words of the kinds of mark the run holds at the right
 * end ("◆ needle ? question ★ bookmark"); returns the columns left of them. */
static int mark_legend(WINDOW *w, const ViewModel *m, const ViewPalette *p, int x, int wd) {
    int need = 0;
    for (ViewMarkKind k = VIEW_MARK_NEEDLE; k < VIEW_MARK_KINDS; k++)
        if (view_has_mark(m, k)) need += 3 + (int)strlen(view_mark_name(k)); /* glyph, word, a space each side */
    if (need == 0 || wd - x < need + 2) return wd;
    int at = wd - need - 1;
    for (ViewMarkKind k = VIEW_MARK_NEEDLE; k < VIEW_MARK_KINDS; k++) {
        if (!view_has_mark(m, k)) continue;
        attr_t a;
        short pair;
        view_mark_style(p, k, &a, &pair);
        view_put(w, 0, at++, view_mark_glyph(k, p->ascii), a, pair);
        at += view_printf(w, 0, at, wd - at, 1, A_NORMAL, 0, " %s ", view_mark_name(k));
    }
    return wd - need - 2;
}

void view_draw_legend(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    (void)h;
    view_fill(w, 0, 0, wd, L' ', A_NORMAL, 0);
    int x = 1 + view_printf(w, 0, 1, wd - 1, p->ascii, A_BOLD, 0, "%s: ", view_metric_name(m->metric));
    if (m->metric == VIEW_METRIC_AGREE) x = fixed_legend(w, m, p, agree_scale(w, m, p, x, wd), wd);
    else x = gradient_scale(w, m, p, x, wd);
    wd = mark_legend(w, m, p, x, wd);
    if (!token_legend(w, m, p, x, wd) && x + 17 < wd) view_puts(w, 0, wd - 16, 16, "m: next metric", 1, A_DIM, 0);
}
