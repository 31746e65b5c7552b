/* pin.c — one head through time and against another (see pin.h). */
#include "views/pin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/explain.h"
#include "views/keymap.h"
#include "views/metric.h"
#include "views/paint.h"

static int sel_cell(const ViewModel *m) { return m->sel_layer * m->n_heads + m->sel_head; }

int view_seek_global(const ViewModel *m, int cell, int from, int dir, int needed) {
    if (dir >= 0) dir = 1, from = from < -1 ? -1 : from;
    else dir = -1, from = from > m->n_hist ? m->n_hist : from;
    for (int i = from + dir; i >= 0 && i < m->n_hist; i += dir) {
        const StepTrace *t = m->hist[i];
        if (view_pred_decision(m, t, cell, VIEW_PRED_GATE) != 1) continue;
        if (!needed || view_oracle_decision(m, t, cell) == 1) return i;
    }
    return -1;
}

int view_seek_needed(const ViewModel *m, int cell) {
    for (int i = 0; i < m->n_hist; i++)
        if (view_oracle_decision(m, m->hist[i], cell) == 1) return i;
    return -1;
}

/* ^: the question is when the head needed its far keys, so the gate is
 * reported beside the position rather than required, unlike f and F. */
static void seek_first_needed(ViewModel *m) {
    int cell = sel_cell(m), i = view_seek_needed(m, cell);
    if (i < 0) {
        view_set_status(m, "L%d H%d never needed the far context%s", m->sel_layer, m->sel_head,
                        m->n_hist ? " (oracle at or under θ at every decided position)" : " (no positions yet)");
        return;
    }
    m->cursor = i;
    m->follow = i == m->n_hist - 1;
    char mass[16];
    view_share_text(mass, sizeof mass, decide_prob(m->hist[i]->oracle_logit[cell]));
    int gate = view_pred_decision(m, m->hist[i], cell, VIEW_PRED_GATE);
    view_set_status(m, "L%d H%d first needed the far context at pos %d, oracle %s, gate %s", m->sel_layer,
                    m->sel_head, m->hist[i]->pos, mass, gate == 1 ? "global" : gate == 0 ? "local (missed)" : "n/a");
}

void view_seek_op(ViewModel *m, int op) {
    if (op == VIEW_OP_FIRST_NEEDED) {
        seek_first_needed(m);
        return;
    }
    int dir = op == VIEW_OP_PREV_GLOBAL ? -1 : 1, needed = op == VIEW_OP_NEXT_NEEDED;
    int from = op == VIEW_OP_FIRST_GLOBAL ? -1 : m->cursor;
    const char *what = op == VIEW_OP_FIRST_GLOBAL  ? "first global"
                       : op == VIEW_OP_PREV_GLOBAL ? "previous global"
                       : needed                    ? "next needed global"
                                                   : "next global";
    int i = view_seek_global(m, sel_cell(m), from, dir, needed);
    if (i < 0) {
        const char *none = op == VIEW_OP_FIRST_GLOBAL  ? "no global"
                           : op == VIEW_OP_PREV_GLOBAL ? "no earlier global"
                           : needed                    ? "no later needed global"
                                                       : "no later global";
        view_set_status(m, "%s for L%d H%d%s", none, m->sel_layer, m->sel_head,
                        m->n_hist ? "" : " (no positions yet)");
        return;
    }
    m->cursor = i;
    m->follow = i == m->n_hist - 1;
    char mass[16] = "";
    if (needed) view_share_text(mass, sizeof mass, decide_prob(m->hist[i]->oracle_logit[sel_cell(m)]));
    view_set_status(m, "L%d H%d %s at pos %d%s%s", m->sel_layer, m->sel_head, what, m->hist[i]->pos,
                    needed ? ", oracle " : "", mass);
}

int view_pin_cell(const ViewModel *m) {
    if (m->pin_layer < 0 || m->pin_head < 0 || m->pin_layer >= m->n_layers || m->pin_head >= m->n_heads) return -1;
    return m->pin_layer * m->n_heads + m->pin_head;
}

void view_pin_toggle(ViewModel *m) {
    if (view_pin_cell(m) == sel_cell(m)) {
        view_set_status(m, "unpinned L%d H%d", m->pin_layer, m->pin_head);
        m->pin_layer = m->pin_head = -1;
        return;
    }
    m->pin_layer = m->sel_layer, m->pin_head = m->sel_head;
    view_set_status(m, "pinned L%d H%d (x on it unpins)", m->pin_layer, m->pin_head);
}

int view_parent_common(const ViewModel *m) {
    int n = m->n_hist < m->parent.n ? m->n_hist : m->parent.n;
    for (int i = 0; i < n; i++)
        if (m->hist[i]->token != m->parent.hist[i]->token) return i;
    return n;
}

const char *view_parent_name(const ViewModel *m, char *buf, size_t n) {
    const char *run = m->parent.label[0] ? m->parent.label : "run";
    if (m->parent.other) snprintf(buf, n, "%s", run);
    else snprintf(buf, n, "parent %s", run);
    return buf;
}

void view_keep_parent(ViewModel *m, const char *label) {
    view_drop_parent(m);
    /* the traces change hands: nothing is copied, the new run starts empty */
    m->parent.hist = m->hist, m->parent.n = m->n_hist, m->parent.cap = m->cap_hist;
    snprintf(m->parent.label, sizeof m->parent.label, "%s", label ? label : "");
    m->hist = NULL, m->n_hist = m->cap_hist = 0;
    view_clear_history(m);
}

void view_parent_begin(ViewModel *m, const char *label) {
    view_drop_parent(m);
    snprintf(m->parent.label, sizeof m->parent.label, "%s", label ? label : "");
}

int view_push_parent(ViewModel *m, StepTrace *t, Err *e) {
    if (t->n_layers != m->n_layers || t->n_heads != m->n_heads) {
        err_set(e, "view: the parent run's shape %dx%d is not the model's %dx%d", t->n_layers, t->n_heads,
                m->n_layers, m->n_heads);
        trace_free(t);
        return -1;
    }
    if (m->parent.n == m->parent.cap) {
        int cap = m->parent.cap ? m->parent.cap * 2 : 256;
        StepTrace **h = realloc(m->parent.hist, (size_t)cap * sizeof *h);
        if (!h) {
            trace_free(t);
            return err_set(e, "view: out of memory for the parent run's %d positions", cap);
        }
        m->parent.hist = h, m->parent.cap = cap;
    }
    m->parent.hist[m->parent.n++] = t;
    return 0;
}

const StepTrace *view_parent_trace(const ViewModel *m, int i) {
    return i >= 0 && i < m->parent.n ? m->parent.hist[i] : NULL;
}

/* How the inspector's line names the run held beside this one: "parent
 * run 1", or "vs run 3" for one chosen in B. */
#define PARENT_WORD(m) ((m)->parent.other ? "vs" : "parent")
/* Its briefest form: "parent", or the chosen run's "run 3". */
#define PARENT_BRIEF(m) ((m)->parent.other && (m)->parent.label[0] ? (m)->parent.label : "parent")

/* A router score with the decimals that tell it from τ (0.501 beside τ
 * 0.50), as the inspector's verdicts print it. */
static void score_text(char *buf, size_t n, float score, float tau) {
    int d = 2;
    while (d < 4 && score != tau) {
        char a[16], b[16];
        snprintf(a, sizeof a, "%.*f", d, score);
        snprintf(b, sizeof b, "%.*f", d, tau);
        if (strcmp(a, b)) break;
        d++;
    }
    snprintf(buf, n, "%.*f", d, score);
}

void view_head_text(const ViewModel *m, const StepTrace *t, int cell, int form, char *buf, size_t n) {
    const char *dot = m->ascii ? " - " : " \xc2\xb7 ";
    int W = view_fixed_window(t, cell);
    if (W > 0) { /* no gate, router or oracle to set beside another head's */
        snprintf(buf, n, form & VIEW_HEAD_WORDS ? "fixed-local (layer window %d)" : "fixed w%d", W);
        return;
    }
    int gate = view_pred_decision(m, t, cell, VIEW_PRED_GATE), o = view_oracle_decision(m, t, cell);
    float score = t->score[cell], ol = t->oracle_logit[cell];
    const char *word = !decide_has_choice(t) ? "no choice" : gate == 1 ? "global" : gate == 0 ? "local" : "gate ?";
    int k = snprintf(buf, n, "%s", word);
    if (k < 0 || (size_t)k >= n || !decide_has_choice(t)) return;
    char v[16];
    if (!isnan(score)) {
        score_text(v, sizeof v, score, m->hdr.tau);
        k += snprintf(buf + k, n - (size_t)k, "%s%s", form & VIEW_HEAD_WORDS ? dot : " ",
                      form & VIEW_HEAD_WORDS ? "router " : "");
        if ((size_t)k < n) k += snprintf(buf + k, n - (size_t)k, "%s", v);
    }
    if (!(form & VIEW_HEAD_ORACLE) || (size_t)k >= n || isnan(ol)) return;
    view_share_text(v, sizeof v, decide_prob(ol));
    snprintf(buf + k, n - (size_t)k, "%soracle %s%s", dot, v, o == 1 && form & VIEW_HEAD_WORDS ? " needed" : "");
}

/* The first of n_forms lines that fits in max_w columns, else the last. */
static int pick(char forms[][256], int n_forms, int max_w, int ascii, char *buf, size_t n) {
    int i = 0;
    while (i + 1 < n_forms && view_text_width(forms[i], ascii) > max_w) i++;
    snprintf(buf, n, "%s", forms[i]);
    return 1;
}

int view_pin_line(const ViewModel *m, int max_w, char *buf, size_t n) {
    int cell = view_pin_cell(m);
    if (cell < 0) return 0;
    const StepTrace *t = view_trace(m, m->cursor);
    if (!t) return snprintf(buf, n, "pin L%d H%d: no position yet", m->pin_layer, m->pin_head), 1;
    char forms[2][256], v[160];
    view_head_text(m, t, cell, VIEW_HEAD_WORDS | VIEW_HEAD_ORACLE, v, sizeof v);
    snprintf(forms[0], sizeof forms[0], "pin L%d H%d %s %.160s", m->pin_layer, m->pin_head,
             m->ascii ? "-" : "\xc2\xb7", v);
    view_head_text(m, t, cell, VIEW_HEAD_ORACLE, v, sizeof v);
    snprintf(forms[1], sizeof forms[1], "pin L%d H%d %.160s", m->pin_layer, m->pin_head, v);
    return pick(forms, 2, max_w, m->ascii, buf, n);
}

/* 1 if the oracle's far mass at cell reads differently in the parent p and
 * the child t: the same tokens, but a head's input is the residual stream,
 * which the gates of the layers below changed. */
static int oracle_moved(const StepTrace *p, const StepTrace *t, int cell) {
    float a = p->oracle_logit[cell], b = t->oracle_logit[cell];
    if (isnan(a) || isnan(b)) return 0;
    char x[16], y[16];
    view_share_text(x, sizeof x, decide_prob(a));
    view_share_text(y, sizeof y, decide_prob(b));
    return strcmp(x, y) != 0;
}

/* Why the oracle's mass at cell moved between the parent p and the child
 * t, into why (empty when neither cause holds). The mass is over the keys
 * outside the local set, so another window or sinks moves it at any layer
 * (w, and the arrow between the two far-key counts); with the same local
 * set only a changed input can, which the gates of the layers below make. */
static void oracle_why(const ViewModel *m, const StepTrace *p, const StepTrace *t, int c, char *why, size_t n) {
    const char *arrow = m->ascii ? "->" : "\xe2\x86\x92";
    int pw = p->local_window ? p->local_window[c] : -1, tw = t->local_window ? t->local_window[c] : -1;
    if (pw >= 0 && tw >= 0 && pw != tw)
        snprintf(why, n, "%s: w %d %s %d", VIEW_PARENT_ORACLE_WHY_LOCAL, pw, arrow, tw);
    else if (p->n_far != t->n_far)
        snprintf(why, n, "%s: %d %s %d far keys", VIEW_PARENT_ORACLE_WHY_LOCAL, p->n_far, arrow, t->n_far);
    else snprintf(why, n, "%s", c >= m->n_heads ? VIEW_PARENT_ORACLE_WHY : "");
}

/* The parent line when the oracle moved too: both masses, and why they differ. */
static int moved_line(const ViewModel *m, const StepTrace *p, const StepTrace *t, int c, int max_w, char *buf,
                      size_t n) {
    const char *arrow = m->ascii ? "->" : "\xe2\x86\x92", *sp = m->parent.label[0] ? " " : "", *W = PARENT_WORD(m);
    char forms[5][256], pv[160], tv[160], why[64];
    view_head_text(m, p, c, VIEW_HEAD_WORDS | VIEW_HEAD_ORACLE, pv, sizeof pv);
    view_head_text(m, t, c, VIEW_HEAD_WORDS | VIEW_HEAD_ORACLE, tv, sizeof tv);
    oracle_why(m, p, t, c, why, sizeof why);
    snprintf(forms[0], sizeof forms[0], "%s%s%.32s: %.72s %s this run: %.72s%s%.44s%s", W, sp, m->parent.label, pv,
             arrow, tv, why[0] ? " (" : "", why, why[0] ? ")" : "");
    snprintf(forms[1], sizeof forms[1], "%s%s%.47s: %.90s %s this run: %.90s", W, sp, m->parent.label, pv, arrow, tv);
    view_head_text(m, p, c, VIEW_HEAD_ORACLE, pv, sizeof pv);
    view_head_text(m, t, c, VIEW_HEAD_ORACLE, tv, sizeof tv);
    snprintf(forms[2], sizeof forms[2], "%s%s%.47s: %.90s %s %.90s", W, sp, m->parent.label, pv, arrow, tv);
    snprintf(forms[3], sizeof forms[3], "%s: %.90s %s now %.90s", PARENT_BRIEF(m), pv, arrow, tv);
    /* the masses alone where nothing else fits: they are what moved */
    view_share_text(pv, sizeof pv, decide_prob(p->oracle_logit[c]));
    view_share_text(tv, sizeof tv, decide_prob(t->oracle_logit[c]));
    snprintf(forms[4], sizeof forms[4], "%s: oracle %.20s %s now %.20s", PARENT_BRIEF(m), pv, arrow, tv);
    return pick(forms, 5, max_w, m->ascii, buf, n);
}

int view_parent_line(const ViewModel *m, int max_w, char *buf, size_t n) {
    if (m->parent.n <= 0) return 0;
    const StepTrace *t = view_trace(m, m->cursor), *p = t ? view_parent_trace(m, m->cursor) : NULL;
    const char *arrow = m->ascii ? "->" : "\xe2\x86\x92";
    const char *sp = m->parent.label[0] ? " " : "", *W = PARENT_WORD(m);
    if (!t) return snprintf(buf, n, "%s%s%s: no position yet", W, sp, m->parent.label), 1;
    if (!p || p->token != t->token)
        return snprintf(buf, n, "%s%s%s: %s at pos %d", W, sp, m->parent.label, p ? "another token" : "no position",
                        t->pos), 1;
    char forms[3][256], pv[96], tv[96];
    int c = sel_cell(m);
    if (oracle_moved(p, t, c)) return moved_line(m, p, t, c, max_w, buf, n);
    view_head_text(m, p, c, VIEW_HEAD_WORDS, pv, sizeof pv);
    view_head_text(m, t, c, VIEW_HEAD_WORDS, tv, sizeof tv);
    snprintf(forms[0], sizeof forms[0], "%s%s%.47s: %.80s %s this run: %.80s", W, sp, m->parent.label, pv, arrow, tv);
    view_head_text(m, p, c, 0, pv, sizeof pv);
    view_head_text(m, t, c, 0, tv, sizeof tv);
    snprintf(forms[1], sizeof forms[1], "%s%s%.47s: %.80s %s %.80s", W, sp, m->parent.label, pv, arrow, tv);
    snprintf(forms[2], sizeof forms[2], "%s: %.80s %s now %.80s", PARENT_BRIEF(m), pv, arrow, tv);
    return pick(forms, 3, max_w, m->ascii, buf, n);
}

int view_aside_count(const ViewModel *m) { return (view_pin_cell(m) >= 0) + (m->parent.n > 0); }

void view_draw_aside(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewInspGeom *g, int wd) {
    char line[256];
    int y = g->y_aside, maxw = wd - 2;
    if (y && y < g->y_aside + g->n_aside && view_pin_line(m, maxw, line, sizeof line))
        view_puts_fit(w, y++, 1, maxw, line, p->ascii, A_BOLD, 0);
    if (y && y < g->y_aside + g->n_aside && view_parent_line(m, maxw, line, sizeof line))
        view_puts_fit(w, y, 1, maxw, line, p->ascii, A_NORMAL, 0);
}

void view_draw_pin_row(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewTimeGeom *g) {
    int cell = view_pin_cell(m);
    if (!g->y_pin || cell < 0) return;
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    view_puts(w, g->y_pin, 1, 7, "pin", 1, fa, fp);
    wmove(w, g->y_pin, g->x0);
    for (int c = 0; c < g->n_tok_vis; c++) {
        int p0 = g->first_tok + c * g->bin;
        wchar_t ch;
        attr_t a;
        short pair;
        view_cell_style(p, view_swatch_bin(m, cell, p0, p0 + g->bin), VIEW_SW_BLANK, 0, &ch, &a, &pair);
        cchar_t cc;
        wchar_t s[2] = {ch, L'\0'};
        setcchar(&cc, s, a, pair, NULL);
        wadd_wch(w, &cc);
    }
}
