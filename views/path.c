/* path.c — the paths from the answer to the needle through one position (see path.h). */
#include "views/path.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/needle.h"
#include "views/paint.h"

/* The trace of position pos (the history is in position order). */
static const StepTrace *trace_at(const ViewModel *m, int pos) {
    int lo = 0, hi = m->n_hist;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->hist[mid]->pos < pos) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n_hist && m->hist[lo]->pos == pos ? m->hist[lo] : NULL;
}

/* Heavier first; ties by hop 1's head, j, hop 2's head. */
static int heavier(const ViewPath *a, const ViewPath *b) {
    if (a->w != b->w) return a->w > b->w;
    if (a->l1 != b->l1 || a->h1 != b->h1) return a->l1 * 1000 + a->h1 < b->l1 * 1000 + b->h1;
    if (a->j != b->j) return a->j < b->j;
    return a->l2 * 1000 + a->h2 < b->l2 * 1000 + b->h2;
}

/* Keep path p among the heaviest VIEW_PATH_TOP (insertion into a sorted list). */
static void keep(ViewPaths *out, const ViewPath *p) {
    out->total++;
    int i = out->n < VIEW_PATH_TOP ? out->n++ : VIEW_PATH_TOP;
    if (i == VIEW_PATH_TOP && !heavier(p, &out->top[VIEW_PATH_TOP - 1])) return;
    if (i == VIEW_PATH_TOP) i--;
    while (i > 0 && heavier(p, &out->top[i - 1])) out->top[i] = out->top[i - 1], i--;
    out->top[i] = *p;
}

/* The routes on through key j (weight w1) of hop 1's head (l1, h1). */
static void through(const ViewModel *m, ViewPaths *out, int l1, int h1, int j, double w1) {
    if (!(w1 > 0)) return;
    if (view_mark_at(m, j) == out->kind) { /* the value read where it lies: one hop */
        keep(out, &(ViewPath){l1, h1, j, -1, -1, w1, 1.0, w1});
        return;
    }
    const StepTrace *tj = trace_at(m, j);
    for (int l2 = 0; tj && l2 < l1; l2++)
        for (int h2 = 0; h2 < m->n_heads; h2++) {
            ViewSpanWeight sw = view_span_weight(m, tj, l2 * m->n_heads + h2, out->kind);
            if (sw.w > 0) keep(out, &(ViewPath){l1, h1, j, l2, h2, w1, sw.w, w1 * sw.w});
        }
}

void view_paths(const ViewModel *m, ViewPaths *out) {
    memset(out, 0, sizeof *out);
    const StepTrace *t = view_trace(m, m->cursor);
    out->pos = t ? t->pos : -1;
    out->kind = view_weight_kind(m);
    if (!t || out->kind == VIEW_MARK_NONE) return;
    for (int l1 = 0; l1 < m->n_layers; l1++)
        for (int h1 = 0; h1 < m->n_heads; h1++) {
            int cell = l1 * m->n_heads + h1;
            const ViewAttn *a = view_exact_row(m, t, cell);
            if (a) { /* every key of this head's row: the inspector's exact weights */
                for (int j = 0; j < t->pos; j++) through(m, out, l1, h1, j, a->w[j]);
                continue;
            }
            for (int r = 0; r < t->top_k; r++) {
                int j = t->top_pos[cell * t->top_k + r];
                float w = t->top_w[cell * t->top_k + r];
                if (j >= 0 && j < t->pos && !isnan(w)) through(m, out, l1, h1, j, w);
            }
        }
}

/* Head cell's weight from query q on key k in rows (0 where it gave none). */
static double row_w(const ViewRows *r, int cell, int q, int k) {
    float v = r->w[((size_t)cell * r->n + q) * r->n + k];
    return v > 0 ? v : 0;
}

/* The exact paths: every key of every head's row at the answer, and at j
 * the weight on the marks summed over the full row (need[cell * n + j]). */
static void exact_paths(const ViewModel *m, const ViewRows *r, int a, const double *need, ViewPaths *out) {
    int cells = m->n_layers * m->n_heads;
    for (int c1 = 0; c1 < cells; c1++)
        for (int j = 0; j < a; j++) {
            double w1 = row_w(r, c1, a, j);
            if (!(w1 > 0)) continue;
            int l1 = c1 / m->n_heads, h1 = c1 % m->n_heads;
            if (view_mark_at(m, j) == out->kind) {
                keep(out, &(ViewPath){l1, h1, j, -1, -1, w1, 1.0, w1});
                continue;
            }
            for (int c2 = 0; c2 < l1 * m->n_heads; c2++)
                if (need[(size_t)c2 * r->n + j] > 0)
                    keep(out, &(ViewPath){l1, h1, j, c2 / m->n_heads, c2 % m->n_heads, w1, need[(size_t)c2 * r->n + j],
                                          w1 * need[(size_t)c2 * r->n + j]});
        }
}

/* The rollout down the layers: u holds, for each position, the share of
 * its rollout at the current layer's input on the marks; each layer mixes
 * its heads' mean row half and half with the identity (the residual). */
static void rollout_layers(const ViewModel *m, const ViewRows *r, int a, double *u, double *next, ViewRollout *out) {
    for (int l = 0; l < m->n_layers; l++) {
        for (int h = 0; h < m->n_heads; h++) {
            double s = 0;
            for (int k = 0; k <= a; k++) s += row_w(r, l * m->n_heads + h, a, k) * u[k];
            out->via[l * m->n_heads + h] = s;
        }
        for (int q = 0; q <= a; q++) {
            double mix = 0;
            for (int h = 0; h < m->n_heads; h++)
                for (int k = 0; k <= q; k++) mix += row_w(r, l * m->n_heads + h, q, k) * u[k];
            next[q] = 0.5 * u[q] + 0.5 * mix / m->n_heads;
        }
        memcpy(u, next, (size_t)(a + 1) * sizeof *u);
    }
    out->total = u[a];
}

int view_rollout(const ViewModel *m, const ViewRows *rows, ViewRollout *out) {
    memset(out, 0, sizeof *out);
    const StepTrace *t = view_trace(m, m->cursor);
    ViewMarkKind kind = view_weight_kind(m);
    if (!t || kind == VIEW_MARK_NONE || !rows->w || rows->n <= t->pos) return -1;
    int a = t->pos, n = rows->n, cells = m->n_layers * m->n_heads;
    double *need = calloc((size_t)cells * n, sizeof *need), *u = calloc((size_t)n, sizeof *u),
           *next = calloc((size_t)n, sizeof *next);
    out->via = calloc((size_t)cells, sizeof *out->via);
    if (!need || !u || !next || !out->via) {
        free(need), free(u), free(next), view_rollout_free(out);
        return -1;
    }
    for (int k = 0; k < n; k++) u[k] = view_mark_at(m, k) == kind;
    for (int c = 0; c < cells; c++)
        for (int j = 0; j <= a; j++)
            for (int k = 0; k <= j; k++) need[(size_t)c * n + j] += u[k] * row_w(rows, c, j, k);
    out->exact.pos = a, out->exact.kind = kind;
    exact_paths(m, rows, a, need, &out->exact);
    rollout_layers(m, rows, a, u, next, out);
    free(need), free(u), free(next);
    return 0;
}

void view_rollout_free(ViewRollout *r) {
    free(r->via);
    r->via = NULL;
}

/* The marked span as "139-152 (14 positions)", or its count when scattered. */
static void marked_span(const ViewModel *m, ViewMarkKind kind, char *buf, size_t n) {
    int first = -1, last = -1, count = 0;
    for (int i = 0; i < m->n_marks; i++)
        if (m->marks[i].kind == kind) last = m->marks[i].pos, first = first < 0 ? last : first, count++;
    if (count == last - first + 1) snprintf(buf, n, "pos %d-%d (%d positions)", first, last, count);
    else snprintf(buf, n, "%d positions from %d to %d", count, first, last);
}

/* The table of paths p under its column names. */
static void path_table(FILE *f, const ViewModel *m, const ViewPaths *p) {
    char label[TRACE_PIECE_MAX * 4];
    fprintf(f, "rank  hop 1   j      token       w1     hop 2   w2      path\n");
    fprintf(f, "----  ------  -----  ----------  -----  ------  ------  ------\n");
    for (int i = 0; i < p->n; i++) {
        const ViewPath *q = &p->top[i];
        const StepTrace *tj = trace_at(m, q->j);
        char h1[16], h2[16];
        view_piece_label(tj ? tj->piece : "", 1, label, sizeof label);
        for (char *c = label; *c; c++)
            if (*c == ' ') *c = '_'; /* one column: a piece's spaces would split it */
        snprintf(h1, sizeof h1, "L%d H%d", q->l1, q->h1);
        if (q->l2 >= 0) snprintf(h2, sizeof h2, "L%d H%d", q->l2, q->h2);
        else snprintf(h2, sizeof h2, "direct");
        fprintf(f, "%4d  %-6s  %5d  %-10s  %5.3f  %-6s  %6.3f  %6.4f\n", i + 1, h1, q->j, *label ? label : "-", q->w1,
                h2, q->w2, q->w);
    }
    if (p->n == 0) fprintf(f, "(no path: no key of the cursor's rows leads to the %s)\n", view_mark_name(p->kind));
}

/* (b)'s lines: the rollout's share, each head's, and the exact paths. */
static void rollout_text(FILE *f, const ViewModel *m, const ViewRollout *r) {
    fprintf(f, "\n(b) from full rows (each head as if global, computed from the cached queries and keys)\n");
    fprintf(f, "attention rollout (heads averaged, half identity for the residual): %.4f of the answer's rollout "
            "is on the %s\n", r->total, view_mark_name(r->exact.kind));
    fprintf(f, "rollout through each head at the answer (its row times the rollout of the layers below):\n");
    fprintf(f, "head    via\n");
    fprintf(f, "------  ------\n");
    for (int c = 0; c < m->n_layers * m->n_heads; c++) {
        char h[32];
        snprintf(h, sizeof h, "L%d H%d", c / m->n_heads, c % m->n_heads);
        fprintf(f, "%-6s  %6.4f\n", h, r->via[c]);
    }
    fprintf(f, "exact paths from the full rows: %d with weight above 0\n", r->exact.total);
    path_table(f, m, &r->exact);
}

char *view_paths_text(const ViewModel *m, const ViewPaths *p, const ViewRollout *r, const char *rollout_note) {
    char *text = NULL, span[96], label[TRACE_PIECE_MAX * 4];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    if (p->pos < 0 || p->kind == VIEW_MARK_NONE) {
        fprintf(f, "%s\n", p->pos < 0 ? "paths to the needle: no token under the cursor yet"
                                      : "paths to the needle: no needle marked (tui --tasks F --item K) and no "
                                        "bookmarks (b)");
        return fclose(f) ? (free(text), NULL) : text;
    }
    const StepTrace *t = view_trace(m, m->cursor);
    view_piece_label(t->piece, 1, label, sizeof label);
    marked_span(m, p->kind, span, sizeof span);
    fprintf(f, "from pos %d \"%s\" (the cursor: the answer) to the %s, %s\n", p->pos, label, view_mark_name(p->kind),
            span);
    fprintf(f, "hop 2 is a head of a lower layer at j; \"direct\": j is on the %s\n", view_mark_name(p->kind));
    if (!r) fprintf(f, "(b) attention rollout: %s\n", rollout_note ? rollout_note : "not computed");
    fprintf(f, "\n(a) product of the recorded top-k weights (attn_top, record --attn-top %d): a lower bound, the "
            "local window's keys are never ranked; %d paths with weight above 0\n", t->top_k, p->total);
    path_table(f, m, p);
    if (r) rollout_text(f, m, r);
    return fclose(f) ? (free(text), NULL) : text;
}
