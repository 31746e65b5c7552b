/* plot_budget.h — score against budget: `eval --tasks --match-budget aha`'s
 * curves, as an SVG string and as a text chart. Pure: points in, a string
 * out; the caller writes it where it belongs.
 *
 * A point is one arm (a predictor, random, local, full) at one budget: its
 * global share, the KV positions it read against full attention (keys
 * read), and its accuracy on each panel (a task kind, the last panel the
 * average). The charts have two rows of panels, the first with x the
 * global share, the second with x the keys read, a panel per task plus
 * the average in each; every arm is one curve, its points joined in
 * order of x.
 */
#ifndef AHASCOPE_PLOT_BUDGET_H
#define AHASCOPE_PLOT_BUDGET_H

#include <stdio.h>

#define PLOT_BUDGET_MAX_PANELS 17 /* every task kind and the average */

typedef struct {
    char arm[16];
    double share, keys;                 /* x of the two rows, 0 to 1 */
    double acc[PLOT_BUDGET_MAX_PANELS]; /* y on each panel, 0 to 1 (NAN: not drawn) */
} BudgetPoint;

/* The SVG: per panel and row, per arm a <polyline> and one <circle
 * class="pt"> per point carrying data-arm, data-panel (its index),
 * data-row (0 share, 1 keys), data-x and data-y (the point's numbers, all
 * digits). n_panels 1 .. PLOT_BUDGET_MAX_PANELS. malloc'd; NULL out of
 * memory or bad counts. */
char *plot_budget_svg(const char *title, const char *const *panels, int n_panels, const BudgetPoint *p, int n);

/* The same as text, each panel a chart of cols x rows characters (axes
 * included, at least 24 x 8) under its name, both rows of panels one
 * after the other: each arm's points marked with its own letter, the
 * segments between them dotted, and a key of the marks. ascii: only ASCII
 * (axes - | +, dots .), else UTF-8 box drawing and middle dots. malloc'd;
 * NULL out of memory or bad sizes. */
char *plot_budget_text(const char *title, const char *const *panels, int n_panels, const BudgetPoint *p, int n,
                       int cols, int rows, int ascii);

/* s as XML text to f: & < > " escaped, control bytes dropped (the
 * reports' SVG writers share it). */
void plot_xml_text(FILE *f, const char *s);

/* 1 when a chart on this terminal should be ASCII only: AHASCOPE_ASCII set
 * and not "0", or the locale's character set (LC_CTYPE from the
 * environment) not UTF-8. */
int plot_budget_ascii(void);

#endif
