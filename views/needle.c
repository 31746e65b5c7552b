/* needle.c — the weight a head puts on the needle, the question or the bookmarks (see needle.h).
 *
 * Summed from the recorded far keys, so a span the local set covers is a
 * lower bound: the window's keys were never ranked. The exact row the app
 * computed for the inspector wins where it applies. */
#include "views/needle.h"

#include <math.h>
#include <stdio.h>

/* The marks are read here, not through marks.c: marks.c sets the status
 * line (model.c), and the metrics that call this file sit under the model. */
static int has_kind(const ViewModel *m, ViewMarkKind k) {
    for (int i = 0; i < m->n_marks; i++)
        if (m->marks[i].kind == k) return 1;
    return 0;
}

/* The kind of the mark on pos (marks are sorted by position, one a position). */
static ViewMarkKind kind_at(const ViewModel *m, int pos) {
    int lo = 0, hi = m->n_marks;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->marks[mid].pos < pos) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n_marks && m->marks[lo].pos == pos ? m->marks[lo].kind : VIEW_MARK_NONE;
}

ViewMarkKind view_weight_kind(const ViewModel *m) {
    if (has_kind(m, VIEW_MARK_NEEDLE)) return VIEW_MARK_NEEDLE;
    return has_kind(m, VIEW_MARK_BOOKMARK) ? VIEW_MARK_BOOKMARK : VIEW_MARK_NONE;
}

/* Marked positions a recorded list can miss: a local key is never ranked. */
static int in_local_set(const ViewModel *m, int key, int pos) {
    return key < m->hdr.sinks || key > pos - m->hdr.window;
}

const ViewAttn *view_exact_row(const ViewModel *m, const StepTrace *t, int cell) {
    const ViewAttn *a = &m->attn;
    int ok = a->pos == t->pos && a->layer * m->n_heads + a->head == cell && a->n > t->pos && a->w;
    return ok ? a : NULL;
}

ViewSpanWeight view_span_weight(const ViewModel *m, const StepTrace *t, int cell, ViewMarkKind kind) {
    ViewSpanWeight r = {NAN, 0, 0};
    if (!t || kind == VIEW_MARK_NONE || cell < 0 || cell >= m->n_layers * m->n_heads) return r;
    const ViewAttn *a = view_exact_row(m, t, cell);
    if (a) {
        double s = 0;
        for (int k = 0; k <= t->pos; k++)
            if (kind_at(m, k) == kind) s += a->w[k];
        return (ViewSpanWeight){s, 1, 1};
    }
    if (t->top_k <= 0) return r;
    const int32_t *tp = t->top_pos + (size_t)cell * t->top_k;
    const float *tw = t->top_w + (size_t)cell * t->top_k;
    int full = tp[t->top_k - 1] >= 0, marked = 0, found = 0, missed_local = 0;
    double s = 0;
    for (int i = 0; i < t->top_k; i++)
        if (tp[i] >= 0 && tp[i] <= t->pos && !isnan(tw[i]) && kind_at(m, tp[i]) == kind) s += tw[i], found++;
    for (int i = 0; i < m->n_marks && m->marks[i].pos <= t->pos; i++) {
        if (m->marks[i].kind != kind) continue;
        marked++;
        missed_local += in_local_set(m, m->marks[i].pos, t->pos);
    }
    r.w = s, r.n = 1;
    r.exact = !missed_local && (!full || found == marked);
    return r;
}

int view_weight_span(const ViewModel *m, int *p0, int *p1) {
    int first = -1, last = -1;
    for (int i = 0; i < m->n_marks; i++)
        if (m->marks[i].kind == VIEW_MARK_BOOKMARK) last = m->marks[i].pos, first = first < 0 ? last : first;
    if (view_weight_kind(m) != VIEW_MARK_NEEDLE) return 0;
    if (m->span.lo >= 0) first = m->span.lo, last = m->span.hi; /* the span the rates count comes first */
    else if (first == last) return 0;
    *p0 = first, *p1 = last + 1;
    return 1;
}

/* The mean over history positions [p0, p1), the prompt's left out when answer_only. */
static ViewSpanWeight mean_over(const ViewModel *m, int cell, ViewMarkKind kind, int p0, int p1, int answer_only) {
    ViewSpanWeight r = {NAN, 1, 0};
    double s = 0;
    if (p1 > m->n_hist) p1 = m->n_hist;
    for (int i = p0 < 0 ? 0 : p0; i < p1; i++) {
        if (answer_only && m->hist[i]->is_prompt) continue;
        ViewSpanWeight one = view_span_weight(m, m->hist[i], cell, kind);
        if (isnan(one.w)) continue;
        s += one.w, r.n++;
        r.exact &= one.exact;
    }
    if (r.n) r.w = s / r.n;
    else r.exact = 0;
    return r;
}

ViewSpanWeight view_span_weight_answer(const ViewModel *m, int cell, ViewMarkKind kind, int upto) {
    return mean_over(m, cell, kind, 0, upto + 1, 1);
}

ViewSpanWeight view_span_weight_over(const ViewModel *m, int cell, ViewMarkKind kind, int p0, int p1) {
    return mean_over(m, cell, kind, p0, p1, 0);
}

void view_span_weight_text(const ViewSpanWeight *sw, int ascii, char *buf, size_t n) {
    if (isnan(sw->w)) snprintf(buf, n, "n/a");
    else snprintf(buf, n, "%s%.2f", sw->exact ? "" : ascii ? ">=" : "\xe2\x89\xa5", sw->w);
}
