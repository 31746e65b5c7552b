/* explain.h — the inspector's verdicts in words: for one (position, head)
 * cell, what each predictor saw, the threshold it compared against, what it
 * decided, and whether that agrees with the oracle. Pure text from the view
 * model's header (τ, θ, policy) and one StepTrace, so it is tested without
 * curses; every decision comes from engine/decide.h, never recomputed here.
 *
 * ASCII mode (m->ascii) spells τ, θ, ≤ and → out as tau, theta, <= and ->.
 */
#ifndef AHASCOPE_VIEW_EXPLAIN_H
#define AHASCOPE_VIEW_EXPLAIN_H

#include "views/view.h"

/* One line per predictor, in the inspector's sparkline order, then the
 * executed gate. A position without far keys has one line only. */
enum {
    VIEW_EXPLAIN_ROUTER,
    VIEW_EXPLAIN_ORACLE,
    VIEW_EXPLAIN_QADA,
    VIEW_EXPLAIN_QADA_BULK,
    VIEW_EXPLAIN_GATE,
    VIEW_EXPLAIN_LINES
};

#define VIEW_EXPLAIN_CAP 128

typedef struct {
    int n;                                        /* lines filled */
    char line[VIEW_EXPLAIN_LINES][VIEW_EXPLAIN_CAP]; /* UTF-8 (ASCII in ascii mode) */
    int decision[VIEW_EXPLAIN_LINES];             /* 1 global, 0 local, -1 none */
} ViewExplain;

/* Fill out with the verdicts at one cell of t under m's τ and θ, e.g.
 * "router 0.51 > τ 0.50 → global · needed and taken". */
void view_explain(const ViewModel *m, const StepTrace *t, int cell, ViewExplain *out);

/* The agreement of a decision with the oracle's label: "needed and taken",
 * "missed", "needless", "not needed, not taken"; NULL if either is unknown. */
const char *view_explain_agreement(int decision, int label);

#endif
