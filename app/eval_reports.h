/* eval_reports.h — the reports `eval --tasks` adds to its table: the
 * depth x context grid with the effective length (app/eval_grid.h), and
 * the score-against-budget curves (app/plot_budget.h) of --match-budget,
 * gathered over every --share budget and drawn once at the end (each
 * row's KV footprint is eval_row's, app/eval_table.h).
 *
 * The curves' panels are the task kinds the file holds, in the order of
 * engine/tasks/tasks.h, then "average": the mean of the kinds' accuracies
 * (each kind weighted alike, not each item). A row's point on a kind's
 * panel is the mean score of that kind's items.
 */
#ifndef AHASCOPE_EVAL_REPORTS_H
#define AHASCOPE_EVAL_REPORTS_H

#include "app/eval_grid.h"
#include "app/plot_budget.h"
#include "engine/tasks/tasks.h"

typedef struct {
    long grid;                /* --grid N: depth buckets, 0 none */
    const char *grid_svg;     /* --grid-svg FILE, or NULL */
    int n_panels;             /* kinds present, then the average */
    TaskKind kind[PLOT_BUDGET_MAX_PANELS - 1];
    const char *panel[PLOT_BUDGET_MAX_PANELS];
    BudgetPoint *pts;         /* every row of every budget, in order */
    int n_pts, cap_pts;
} EvalReport;

/* The panels of s's kinds; grid and grid_svg as the flags gave them. */
void eval_report_init(EvalReport *r, const TaskSet *s, long grid, const char *grid_svg);

void eval_report_free(EvalReport *r);

/* Add a row's point: arm at (share, keys) with scores[0..s->n) the items'. */
int eval_report_add_point(EvalReport *r, const TaskSet *s, const char *arm, double share, double keys,
                          const double *scores, Err *e);

/* The grid of scores[0..s->n) in r->grid buckets into g. */
int eval_report_grid(const EvalReport *r, const TaskSet *s, const double *scores, EvalGrid *g, Err *e);

/* JSON members of a grid: `, "effective_length": L|null, "grid": {"depths":
 * N, "lens": [...], "acc": [[...] per depth], "count": [[...]]}`. */
void eval_report_json_grid(const EvalGrid *g);

/* An SVG string (NULL: out of memory) written atomically to path. */
int eval_report_write_svg(const char *path, const char *svg, Err *e);

/* The curves of every point gathered: to svg (a path, or NULL) and, with
 * plot, as text on stdout (ASCII when plot_budget_ascii says so). */
int eval_report_curves(const EvalReport *r, const char *svg, int plot, Err *e);

#endif
