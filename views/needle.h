/* needle.h — the weight a head puts on marked positions: a task item's needle
 * or question, or the user's bookmarks when no item is open (a span marked
 * by hand with `b`).
 *
 * What the trace holds of a head's attention is its top-k far keys
 * (StepTrace.top_pos/top_w); the weight on a span is summed from them, and
 * from the exact row the app hands over (ViewModel.attn) when that row is
 * the head's at that position. From the top-k alone the sum is a lower
 * bound whenever a marked position may hold weight the list left out: one
 * inside the local set (its keys are never ranked), or a far one missing
 * from a full list. Every value says which it is (ViewSpanWeight.exact),
 * and the panes print a lower bound as "≥". Pure functions of the model. */
#ifndef AHASCOPE_VIEW_NEEDLE_H
#define AHASCOPE_VIEW_NEEDLE_H

#include "views/view.h"

typedef struct {
    double w;  /* summed weight on the marked positions before or at the query; NAN unknown */
    int exact; /* 1 the whole sum; 0 a lower bound (top-k only) */
    int n;     /* query positions averaged (a mean over a span); 1 for one position */
} ViewSpanWeight;

/* The exact row the app handed over for the inspector (ViewModel.attn)
 * when it is head cell's at t, else NULL: every weight, the window's too. */
const ViewAttn *view_exact_row(const ViewModel *m, const StepTrace *t, int cell);

/* The kind the "weight on the needle" metric sums: the needle when an item
 * is open, else the bookmarks, else VIEW_MARK_NONE. */
ViewMarkKind view_weight_kind(const ViewModel *m);

/* The weight head `cell` put at trace t on the positions marked `kind`. */
ViewSpanWeight view_span_weight(const ViewModel *m, const StepTrace *t, int cell, ViewMarkKind kind);

/* The mean of view_span_weight over the answer's positions (the generated
 * ones, not the prompt) at or before history index upto; w NAN with n 0
 * when none has a value. exact only when every position's sum is. */
ViewSpanWeight view_span_weight_answer(const ViewModel *m, int cell, ViewMarkKind kind, int upto);

/* The same mean over every position of [p0, p1), prompt or not. */
ViewSpanWeight view_span_weight_over(const ViewModel *m, int cell, ViewMarkKind kind, int p0, int p1);

/* A chosen span: with a task item open (the needle summed), the span the
 * rates count when one is set (views/span.h), else the positions from the
 * first bookmark to the last (two or more, `b`), into [*p0, *p1).
 * 0 when there is none: the answer's positions stand in. */
int view_weight_span(const ViewModel *m, int *p0, int *p1);

/* "0.93", "≥0.41" (">=0.41" under ascii) or "n/a", into buf. */
void view_span_weight_text(const ViewSpanWeight *sw, int ascii, char *buf, size_t n);

#endif
