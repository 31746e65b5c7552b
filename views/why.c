/* why.c — one decision's reasons in words (see why.h). */
#include "views/why.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/decide.h"
#include "views/explain.h"
#include "views/fixed.h"
#include "views/paint.h"

int view_why_current(const ViewModel *m) {
    const StepTrace *t = view_trace(m, m->cursor);
    return t && m->why.pos == t->pos && m->why.layer == m->sel_layer && m->why.head == m->sel_head;
}

const char *view_why_err_words(double err) {
    return err < 0.01 ? "hardly" : err < 0.05 ? "slightly" : err < 0.2 ? "noticeably" : err < 0.5 ? "substantially"
                                                                                                  : "mostly";
}

/* A signed number with its sign always written (− in UTF-8 mode). */
static void signed_num(char *buf, size_t n, double v, int ascii) {
    snprintf(buf, n, "%s%.2f", v < 0 ? (ascii ? "-" : "\xe2\x88\x92") : "+", fabs(v));
}

/* The router's line when the terms are known: logit, σ, the input's norm. */
static void router_line(const ViewWhy *w, int ascii, char *out) {
    char lg[24], b[40] = "";
    const char *dot = ascii ? " | " : " \xc2\xb7 ";
    signed_num(lg, sizeof lg, w->logit, ascii);
    if (w->bias != 0) {
        char v[24];
        signed_num(v, sizeof v, w->bias, ascii);
        snprintf(b, sizeof b, "%sbias %s", dot, v);
    }
    char sig[16]; /* in its tail form: logit −5.93 is σ 0.003, not 0.00 */
    view_unit_text(sig, sizeof sig, 1 / (1 + exp(-w->logit)), 2);
    snprintf(out, VIEW_WHY_CAP, "router logit %s %s %s %s%s%s %.3g over %d dims%s", lg, ascii ? "->" : "\xe2\x86\x92",
             ascii ? "sigma" : "\xcf\x83", sig, dot, ascii ? "||x||" : "\xe2\x80\x96x\xe2\x80\x96", w->norm,
             w->dim, b);
}

/* "x·w by dim: d12 +0.41 · d3 −0.22 · … · rest −0.13": the largest terms
 * that fit in max_w, the others counted in the rest. */
static void terms_line(const ViewWhy *w, int ascii, int max_w, char *out) {
    const char *sep = ascii ? " | " : " \xc2\xb7 ";
    int shown = w->n_top;
    for (; shown >= 0; shown--) {
        double rest = w->rest;
        for (int j = shown; j < w->n_top; j++) rest += w->top_xw[j];
        int k = snprintf(out, VIEW_WHY_CAP, "  %s by dim:", ascii ? "x.w" : "x\xc2\xb7w");
        for (int j = 0; j < shown && k < VIEW_WHY_CAP; j++) {
            char v[24];
            signed_num(v, sizeof v, w->top_xw[j], ascii);
            k += snprintf(out + k, VIEW_WHY_CAP - k, "%sd%d %s", j ? sep : " ", w->top_dim[j], v);
        }
        char v[24];
        signed_num(v, sizeof v, rest, ascii);
        if (k < VIEW_WHY_CAP)
            snprintf(out + k, VIEW_WHY_CAP - k, "%srest %s (%d dims)", shown ? sep : " ", v, w->dim - shown);
        if (view_text_width(out, ascii) <= max_w) return;
    }
}

/* The router's line in a state without terms, into buf when it has numbers. */
static const char *router_state(const ViewModel *m, char *buf, size_t n) {
    if (!view_why_current(m) || m->why.state == VIEW_WHY_NONE) return "router: what drove it is not known yet";
    if (m->why.state == VIEW_WHY_PENDING && m->why.to_feed > 0) {
        snprintf(buf, n, "router: computing what drove it\xe2\x80\xa6 %d of %d positions fed (Esc stops)", m->why.fed,
                 m->why.to_feed);
        return buf;
    }
    if (m->why.state == VIEW_WHY_PENDING) return "router: computing what drove it\xe2\x80\xa6";
    switch (m->why.state) {
    case VIEW_WHY_STOPPED: return "router: its recompute was stopped (Esc); another position or head asks again";
    case VIEW_WHY_NO_ROUTER: return "router: none in this run, so no logit to split";
    case VIEW_WHY_NOT_KEPT: return "router: its input could not be recomputed (out of memory)";
    case VIEW_WHY_REPLAY: return "router input terms: live sessions only (a replay does not record the input)";
    default: return "";
    }
}

/* oracle_err at the cell, with what it means. */
static void err_line(const StepTrace *t, int cell, char *out) {
    double err = t->oracle_err[cell];
    if (!decide_has_choice(t)) snprintf(out, VIEW_WHY_CAP, "oracle_err: no far keys, so going local changes nothing");
    else if (isnan(err)) snprintf(out, VIEW_WHY_CAP, "oracle_err: not profiled (what going local would change)");
    else if (err <= 1)
        snprintf(out, VIEW_WHY_CAP, "oracle_err %.3f: going local changes this head's output %s (%.1f%%)", err,
                 view_why_err_words(err), 100 * err);
    else /* the local output can be farther from the full one than the full one is from 0 */
        snprintf(out, VIEW_WHY_CAP, "oracle_err %.3f, over 1 (the maps clamp it at 1): going local changes this "
                 "head's output by more than its own size", err);
}

int view_why_lines(const ViewModel *m, int max_w, char out[VIEW_WHY_LINES][VIEW_WHY_CAP]) {
    const StepTrace *t = view_trace(m, m->cursor);
    if (!t) return 0;
    int cell = m->sel_layer * m->n_heads + m->sel_head, n = 0, W = view_fixed_window(t, cell);
    if (W > 0) { /* nothing drove it: the architecture windows the layer */
        snprintf(out[n++], VIEW_WHY_CAP, "fixed-local: no router, policy or oracle decides this head (layer window %d)", W);
        return n;
    }
    if (view_why_current(m) && m->why.state == VIEW_WHY_OK) {
        router_line(&m->why, m->ascii, out[n++]);
        terms_line(&m->why, m->ascii, max_w, out[n++]);
    } else {
        char buf[VIEW_WHY_CAP];
        snprintf(out[n++], VIEW_WHY_CAP, "%s", router_state(m, buf, sizeof buf));
    }
    err_line(t, cell, out[n++]);
    return n;
}
