/* plot.h — the research plots: scatter (Pareto: global share vs KL), line
 * (global share vs window) and bars (per-head rates), drawn two ways from
 * the same data: as SVG files (papers, notebooks) and as text on a
 * terminal (--plot). No curses, no engine: plain numbers in. */
#ifndef AHASCOPE_VIEW_PLOT_H
#define AHASCOPE_VIEW_PLOT_H

#include <stdio.h>

#include "engine/err.h"

typedef struct {
    double x, y;
    char label[48]; /* shown beside the mark / in its tooltip */
} PlotPoint;

typedef struct {
    char name[32];
    const PlotPoint *pts;
    int n;
    int lines; /* join the points in order (a curve), else marks only */
} PlotSeries;

typedef struct {
    char title[128], xlabel[64], ylabel[64];
    int log_x; /* log-scale x axis (windows 8 … 256) */
} PlotSpec;

/* Write an SVG scatter/line chart: one <circle class="mark"> per point,
 * axes with ticks, a legend; written atomically through FileAtomic. */
int plot_svg(const char *path, const PlotSpec *spec, const PlotSeries *s, int n_series, Err *e);

/* Write an SVG bar chart: one <rect class="mark"> per value (two bars per
 * label when b is non-NULL: a and b side by side, named by legend_a/b). */
int plot_svg_bars(const char *path, const PlotSpec *spec, const char *const *labels, const double *a,
                  const double *b, int n, const char *legend_a, const char *legend_b, Err *e);

/* The same scatter as text, cols × rows characters (series marked with
 * their first letter, '*' where several meet), axes labelled, to out. */
void plot_text(FILE *out, const PlotSpec *spec, const PlotSeries *s, int n_series, int cols, int rows);

#endif
