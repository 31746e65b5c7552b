/* span.c — a span of positions the run's rates count (see span.h). */
#include "views/span.h"

#include <stdio.h>

#include "views/metric.h"

int view_span_set(ViewModel *m, int lo, int hi, const char *what) {
    if (lo < 0) lo = 0;
    if (hi >= m->n_hist) hi = m->n_hist - 1;
    if (lo > hi) return -1;
    m->span.lo = lo, m->span.hi = hi;
    Err e;
    if (view_stats_sync(m, &e)) { /* the rates are then recounted as they are read: slower, still right */
        view_set_status(m, "span %d-%d: %s", lo, hi, e.msg);
        return 0;
    }
    view_set_status(m, "span %d-%d (%d position%s%s%s): header, bars, rates, H, c and d count only it; | clears", lo,
                    hi, hi - lo + 1, hi > lo ? "s" : "", what ? ", " : "", what ? what : "");
    return 0;
}

void view_span_at_cursor(ViewModel *m, int end) {
    int c = m->cursor, set = m->span.lo >= 0;
    if (c < 0) {
        view_set_status(m, "span: no positions yet");
        return;
    }
    if (end) view_span_set(m, set && m->span.lo <= c ? m->span.lo : 0, c, NULL);
    else view_span_set(m, c, set && m->span.hi >= c ? m->span.hi : m->n_hist - 1, NULL);
}

void view_span_clear(ViewModel *m) {
    if (m->span.lo < 0) {
        view_set_status(m, "no span set: ( and ) set its start and end at the cursor, * a task's");
        return;
    }
    m->span.lo = m->span.hi = -1;
    view_set_status(m, "span cleared: every position counts");
}

enum { PRESET_NEEDLE, PRESET_QUESTION, PRESET_GENERATED, PRESET_BOOKMARKS, PRESETS };

/* The positions preset k gives, first to last; 0 when it gives none. */
static int preset_range(const ViewModel *m, int k, int *lo, int *hi) {
    static const ViewMarkKind KIND[PRESETS] = {VIEW_MARK_NEEDLE, VIEW_MARK_QUESTION, VIEW_MARK_NONE,
                                               VIEW_MARK_BOOKMARK};
    *lo = *hi = -1;
    if (k == PRESET_GENERATED) {
        for (int i = 0; i < m->n_hist; i++)
            if (!m->hist[i]->is_prompt) {
                *lo = i, *hi = m->n_hist - 1;
                break;
            }
    } else {
        for (int i = 0; i < m->n_marks; i++)
            if (m->marks[i].kind == KIND[k] && m->marks[i].pos < m->n_hist) {
                if (*lo < 0 || m->marks[i].pos < *lo) *lo = m->marks[i].pos;
                if (m->marks[i].pos > *hi) *hi = m->marks[i].pos;
            }
    }
    return *lo >= 0;
}

void view_span_next_preset(ViewModel *m) {
    static const char *const WHAT[PRESETS] = {"the needle's positions", "the question's positions",
                                              "the generated positions", "first to last bookmark"};
    int cur = -1, lo, hi;
    for (int k = 0; k < PRESETS && m->span.lo >= 0; k++)
        if (preset_range(m, k, &lo, &hi) && lo == m->span.lo && hi == m->span.hi) cur = k;
    for (int step = 1; step <= PRESETS; step++) {
        int k = (cur + step + PRESETS) % PRESETS;
        if (preset_range(m, k, &lo, &hi)) { /* the one set comes back last, when it is the only one */
            view_span_set(m, lo, hi, WHAT[k]);
            return;
        }
    }
    view_set_status(m, "no span to take: no task item's marks, generated positions or bookmarks");
}
