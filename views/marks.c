/* marks.c — positions the app marks, a task item's needle and question
 * (see view.h): kept sorted so a frame finds a position's mark by bisection. */
#include <stdlib.h>
#include <string.h>

#include "views/view.h"

static int by_pos(const void *a, const void *b) {
    const ViewMark *x = a, *y = b;
    return x->pos != y->pos ? (x->pos > y->pos) - (x->pos < y->pos) : (int)x->kind - (int)y->kind;
}

int view_set_marks(ViewModel *m, const ViewMark *marks, int n, Err *e) {
    ViewMark *c = NULL;
    if (n > 0 && !(c = malloc((size_t)n * sizeof *c))) return err_set(e, "out of memory for %d marks", n);
    if (n > 0) memcpy(c, marks, (size_t)n * sizeof *c), qsort(c, (size_t)n, sizeof *c, by_pos);
    int k = 0; /* one mark per position: the last of a run, the strongest after the sort */
    for (int i = 0; i < n; i++) {
        if (k > 0 && c[k - 1].pos == c[i].pos) k--;
        c[k++] = c[i];
    }
    free(m->marks);
    m->marks = c, m->n_marks = k;
    return 0;
}

/* The first mark at or after pos (n_marks if none). */
static int first_from(const ViewModel *m, int pos) {
    int lo = 0, hi = m->n_marks;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->marks[mid].pos < pos) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

ViewMarkKind view_mark_at(const ViewModel *m, int pos) { return view_mark_in(m, pos, pos + 1); }

ViewMarkKind view_mark_in(const ViewModel *m, int p0, int p1) {
    ViewMarkKind k = VIEW_MARK_NONE;
    for (int i = first_from(m, p0); i < m->n_marks && m->marks[i].pos < p1; i++)
        if (m->marks[i].kind > k) k = m->marks[i].kind;
    return k;
}

wchar_t view_mark_glyph(ViewMarkKind k, int ascii) {
    if (k == VIEW_MARK_NEEDLE) return ascii ? L'*' : L'\u25c6';
    return k == VIEW_MARK_QUESTION ? L'?' : L' ';
}

const char *view_mark_name(ViewMarkKind k) {
    return k == VIEW_MARK_NEEDLE ? "needle" : k == VIEW_MARK_QUESTION ? "question" : "";
}
