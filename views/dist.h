/* dist.h — the distributions pane (`d`): how the router's score relates
 * to the oracle, for the selected head or pooled over every head, over
 * the run so far, drawn over the middle of the screen.
 *
 * Three panels side by side, over the cells that have both a router score
 * and an oracle label (positions with far keys, the oracle profiled):
 * a 2-D histogram of router score (across) against the oracle's far mass
 * (up), each cell shaded by its count; a calibration table (per score bin,
 * the share of cells where the oracle said global at θ); and the ROC of
 * the score against the oracle's labels with its AUC, the one `eval`
 * reports. Above them, what drove the selected head at the cursor
 * (why.h). The app counts (app/tui/dist_ctl.h, off the UI thread for a
 * recorded run) and hands the counts over; the view only draws them.
 */
#ifndef AHASCOPE_VIEW_DIST_H
#define AHASCOPE_VIEW_DIST_H

#include "views/layout.h"
#include "views/palette.h"
#include "views/view.h"

#define VIEW_DIST_BINS 10 /* router score bins, and far-mass bins, 0.1 wide */
#define VIEW_DIST_ROC 101 /* the ROC's true-positive rate at false-positive rates 0, 0.01, … 1 */

typedef struct ViewDist {
    int open;
    int pooled;           /* every head together; else (layer, head) */
    int layer, head;
    int ready;            /* the counts below are for what pooled/layer/head say */
    int done, total;      /* while counting: positions counted of those to count (total 0: not counting) */
    int stopped;          /* Esc stopped a count: none starts by itself until `a` or `d` reopens the pane */
    int n_pos;            /* positions the counts cover: 0 … n_pos-1 */
    int span_lo, span_hi; /* a span set (views/span.h): only its positions were counted; span_lo -1 none */
    double theta_logit;   /* the oracle's labels at θ (log-odds) */
    long n, n_global;     /* cells counted; the oracle said global at n_global of them */
    long hist[VIEW_DIST_BINS][VIEW_DIST_BINS]; /* [far-mass bin][score bin] */
    long cal_n[VIEW_DIST_BINS], cal_g[VIEW_DIST_BINS]; /* per score bin: cells, oracle global */
    float roc[VIEW_DIST_ROC]; /* true-positive rate at each false-positive rate (best threshold) */
    double auc;           /* NAN without both labels */
} ViewDist;

/* The bin of a value on [0, 1] (score or mass): 0.1 wide, 1 in the last. */
int view_dist_bin(double v);

/* Where the pane goes: the pattern view's rectangle (the middle of the screen). */
ViewRect view_dist_rect(const Layout *lay);

/* The pane's title: "distributions · L3 H5 · 95 positions · 81 cells, 20 global · AUC 0.812". */
void view_dist_title(const ViewDist *d, const ViewModel *m, char *buf, size_t n);

/* Draw the pane into w (the rectangle above). */
void view_draw_dist(WINDOW *w, const ViewDist *d, const ViewModel *m, const ViewPalette *p);

#endif
