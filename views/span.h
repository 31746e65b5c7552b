/* span.h — a span of positions the run's rates count.
 *
 * `(` and `)` set the span's start and end at the cursor, `*` takes the
 * next of the positions a task item marks (the needle's, the question's),
 * the generated ones, or those between the first and the last bookmark,
 * and `|` clears it. While a span is set (m->span, view.h) the header says
 * `span 120-180`, and the header's shares, the bars, the heatmap's run
 * rates, `H` (views/heads.h) and, through the app, `c` and `d` count only
 * the positions in it; view_span_range (view.h) gives them the range.
 *
 * These are the keys' actions on the model; the counting is rates.c's
 * (view_span_count), kept current by view_stats_sync.
 */
#ifndef AHASCOPE_VIEW_SPAN_H
#define AHASCOPE_VIEW_SPAN_H

#include "views/view.h"

/* Set the span to history indices lo … hi (clipped to the history, lo ≤
 * hi), recount the rates over it, and say so on the status line naming
 * what (e.g. "the needle's positions"; NULL: nothing). -1 when the
 * history holds none of it (the span is left as it was). */
int view_span_set(ViewModel *m, int lo, int hi, const char *what);

/* `(` (end 0) and `)` (end 1): the span's start or end at the cursor. A
 * start with no span, or past its end, runs the span to the last position;
 * an end with none, or before its start, runs it from position 0. */
void view_span_at_cursor(ViewModel *m, int end);

/* `*`: the next of the spans the marks and the prompt give (needle,
 * question, generated, bookmarks: those present), after the one set. */
void view_span_next_preset(ViewModel *m);

/* `|`: every position counts again. */
void view_span_clear(ViewModel *m);

#endif
