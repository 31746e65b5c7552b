/* dist.c — the distributions pane (see dist.h). */
#include "views/dist.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/decide.h"
#include "views/metric.h"
#include "views/paint.h"
#include "views/pattern.h"
#include "views/why.h"

#define HIST_W (4 + 2 * VIEW_DIST_BINS) /* "90% " then two columns a score bin */
#define CAL_W 27                        /* "0.5-0.6  63% of 41 ██████" */

int view_dist_bin(double v) {
    int b = (int)floor(v * VIEW_DIST_BINS);
    return b < 0 ? 0 : b >= VIEW_DIST_BINS ? VIEW_DIST_BINS - 1 : b;
}

ViewRect view_dist_rect(const Layout *lay) { return view_pattern_rect(lay); }

void view_dist_title(const ViewDist *d, const ViewModel *m, char *buf, size_t n) {
    const char *dot = m->ascii ? " | " : " \xc2\xb7 ";
    int k = d->pooled ? snprintf(buf, n, "distributions%sall %d heads pooled", dot, m->n_layers * m->n_heads)
                      : snprintf(buf, n, "distributions%sL%d H%d", dot, d->layer, d->head);
    if (k < 0 || (size_t)k >= n || !d->ready) return;
    /* the classes' sizes beside the AUC: over 4 cells of one class it says little */
    if (d->span_lo >= 0) /* a span: which positions, and how many of them */
        k += snprintf(buf + k, n - k, "%sspan %d-%d (%d positions)%s%ld cells, %ld global", dot, d->span_lo,
                      d->span_hi, d->span_hi - d->span_lo + 1, dot, d->n, d->n_global);
    else k += snprintf(buf + k, n - k, "%s%d positions%s%ld cells, %ld global", dot, d->n_pos, dot, d->n, d->n_global);
    if ((size_t)k < n && !isnan(d->auc)) snprintf(buf + k, n - k, "%sAUC %.3f", dot, d->auc);
}

/* A count's shade on the histogram: its square root against the largest,
 * so a few cells still show beside thousands. */
static wchar_t shade(long c, long max, int ascii) {
    static const wchar_t U[] = L" \u00b7\u2591\u2592\u2593\u2588", A[] = L" .:-=#";
    if (c <= 0 || max <= 0) return L' ';
    int k = 1 + (int)(sqrt((double)c / max) * 4.999);
    return (ascii ? A : U)[k > 5 ? 5 : k];
}

/* Rows of the panels over the mass bins: each row pools bins from the top. */
static int row_bin_lo(int r, int rows) { return VIEW_DIST_BINS - (int)((long)(r + 1) * VIEW_DIST_BINS / rows); }
static int row_bin_hi(int r, int rows) { return VIEW_DIST_BINS - (int)((long)r * VIEW_DIST_BINS / rows); }

/* The histogram: far mass up (its bins' lower edge left of each row), score across. */
static void hist_panel(WINDOW *w, const ViewDist *d, const ViewPalette *p, int y, int x, int rows) {
    long max = 0;
    for (int i = 0; i < VIEW_DIST_BINS; i++)
        for (int j = 0; j < VIEW_DIST_BINS; j++) max = d->hist[i][j] > max ? d->hist[i][j] : max;
    view_puts(w, y, x, HIST_W, "far mass \xe2\x86\x91 by score \xe2\x86\x92", p->ascii, A_BOLD, 0);
    double theta = decide_prob(d->theta_logit);
    for (int r = 0; r < rows; r++) {
        int lo = row_bin_lo(r, rows), hi = row_bin_hi(r, rows);
        int at_theta = theta >= (double)lo / VIEW_DIST_BINS && theta < (double)hi / VIEW_DIST_BINS;
        view_printf(w, y + 1 + r, x, 4, 1, at_theta ? A_BOLD : A_DIM, 0, "%3d%%", 10 * lo);
        for (int s = 0; s < VIEW_DIST_BINS; s++) {
            long c = 0, cm = 0;
            for (int b = lo; b < hi; b++) c += d->hist[b][s];
            cm = max * (hi - lo);
            wchar_t g = shade(c, cm, p->ascii);
            short pair = c > 0 ? view_pair_cells(p, view_level((float)sqrt((double)c / cm)), VIEW_SW_BLANK) : 0;
            view_put(w, y + 1 + r, x + 4 + 2 * s, g, A_NORMAL, pair);
            view_put(w, y + 1 + r, x + 5 + 2 * s, g, A_NORMAL, pair);
        }
    }
    /* 0 under the first score bin, .5 under the sixth, 1 under the last column */
    view_puts(w, y + 1 + rows, x, HIST_W, "    0        .5        1", 1, A_DIM, 0);
}

/* The calibration table: per score bin, the share where the oracle said global. */
static void cal_panel(WINDOW *w, const ViewDist *d, const ViewPalette *p, int y, int x, int rows) {
    view_puts(w, y, x, CAL_W, "calibration: oracle global", p->ascii, A_BOLD, 0);
    int show = rows < VIEW_DIST_BINS ? rows : VIEW_DIST_BINS;
    for (int r = 0; r < show; r++) { /* pooled two bins a row when short */
        int lo = r * VIEW_DIST_BINS / show, hi = (r + 1) * VIEW_DIST_BINS / show;
        long n = 0, g = 0;
        for (int b = lo; b < hi; b++) n += d->cal_n[b], g += d->cal_g[b];
        char line[64];
        int bar = 0;
        if (n > 0) {
            snprintf(line, sizeof line, "%.1f-%.1f %4.0f%% of %-5ld", (double)lo / VIEW_DIST_BINS,
                     (double)hi / VIEW_DIST_BINS, 100.0 * g / n, n);
            bar = (int)(6.0 * g / n + 0.5);
        } else snprintf(line, sizeof line, "%.1f-%.1f    -", (double)lo / VIEW_DIST_BINS, (double)hi / VIEW_DIST_BINS);
        int used = view_puts(w, y + 1 + r, x, CAL_W, line, 1, A_NORMAL, 0);
        for (int b = 0; b < bar && used + b < CAL_W; b++)
            view_put(w, y + 1 + r, x + used + b, p->ascii ? L'#' : L'\u2588', A_NORMAL, 0);
    }
}

/* The ROC's x axis under its plot's columns x+2 … x+width-1: 0 and 1 at its
 * ends, its name between them in the longest form that fits. */
static void roc_axis(WINDOW *w, int y, int x, int width) {
    char axis[256];
    int cols = width - 2 < (int)sizeof axis - 1 ? width - 2 : (int)sizeof axis - 1;
    memset(axis, ' ', (size_t)cols);
    axis[cols] = 0;
    static const char *const names[] = {"false-positive rate", "false pos. rate", "FPR"};
    for (int i = 0; i < 3; i++) {
        int len = (int)strlen(names[i]);
        if (cols < len + 4) continue;
        memcpy(axis + (cols - len) / 2, names[i], (size_t)len);
        break;
    }
    axis[0] = '0', axis[cols - 1] = '1';
    view_puts(w, y, x + 2, cols, axis, 1, A_DIM, 0);
}

/* The ROC: the true-positive rate (up) at each false-positive rate (across), the diagonal dotted. */
static void roc_panel(WINDOW *w, const ViewDist *d, const ViewPalette *p, int y, int x, int width, int rows) {
    char head[64];
    if (isnan(d->auc)) snprintf(head, sizeof head, "ROC: needs both labels");
    else { /* the longest form that fits: a narrow pane cut the AUC mid-number (0.997 read 0.99) */
        const char *dot = p->ascii ? "|" : "\xc2\xb7";
        snprintf(head, sizeof head, "ROC vs oracle %s AUC %.3f", dot, d->auc);
        if (view_text_width(head, p->ascii) > width) snprintf(head, sizeof head, "ROC %s AUC %.3f", dot, d->auc);
        if (view_text_width(head, p->ascii) > width) snprintf(head, sizeof head, "AUC %.3f", d->auc);
    }
    view_puts(w, y, x, width, head, p->ascii, A_BOLD, 0);
    int cols = width - 2;
    if (cols < 2 || rows < 2) return;
    for (int r = 0; r < rows; r++) view_put(w, y + 1 + r, x, r == 0 ? L'1' : r == rows - 1 ? L'0' : L' ', A_DIM, 0);
    int prev = rows - 1;
    for (int c = 0; c < cols; c++) {
        double fpr = (double)c / (cols - 1);
        int diag = (int)((1 - fpr) * (rows - 1) + 0.5);
        view_put(w, y + 1 + diag, x + 2 + c, p->ascii ? L'.' : L'\u00b7', A_DIM, 0);
        if (isnan(d->auc)) continue;
        double tpr = d->roc[(int)(fpr * (VIEW_DIST_ROC - 1) + 0.5)];
        int r = (int)((1 - tpr) * (rows - 1) + 0.5);
        for (int k = r; k <= prev; k++) /* a rise inside one column is drawn whole */
            view_put(w, y + 1 + k, x + 2 + c, p->ascii ? L'*' : L'\u25cf', A_BOLD, 0);
        prev = r;
    }
    roc_axis(w, y + 1 + rows, x, width);
}

void view_draw_dist(WINDOW *w, const ViewDist *d, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    char title[256];
    view_dist_title(d, m, title, sizeof title);
    view_frame_box(w, p, title, 1);
    char lines[VIEW_WHY_LINES][VIEW_WHY_CAP];
    int y = 1, n = view_why_lines(m, wd - 2, lines);
    for (int i = 0; i < n && y < h - 1; i++, y++) view_puts_fit(w, y, 1, wd - 2, lines[i], p->ascii, A_NORMAL, 0);
    int rows = h - 1 - y - 2; /* under the panels' titles, above their axes */
    if (rows > VIEW_DIST_BINS) rows = VIEW_DIST_BINS;
    char note[160] = "";
    if (d->total > 0)
        snprintf(note, sizeof note, "counting: %d of %d positions (Esc stops)", d->done, d->total);
    else if (d->stopped && !d->ready)
        snprintf(note, sizeof note, "count stopped at %d positions: a or d d counts again", d->done);
    else if (!d->ready) snprintf(note, sizeof note, "counting\xe2\x80\xa6");
    else if (d->n == 0)
        snprintf(note, sizeof note, "no cell has both a router score and an oracle label yet: nothing to compare");
    if (note[0] || rows < 2) {
        view_puts_fit(w, y < h - 1 ? y : h - 2, 1, wd - 2, note[0] ? note : "too short for the panels", p->ascii,
                      A_DIM, 0);
        return;
    }
    int x = 1;
    hist_panel(w, d, p, y, x, rows);
    x += HIST_W + 2;
    if (x + CAL_W <= wd - 1) cal_panel(w, d, p, y, x, rows), x += CAL_W + 1;
    if (wd - 1 - x >= 12) roc_panel(w, d, p, y, x, wd - 1 - x, rows);
    char legend[200];
    const StepTrace *t = view_trace(m, m->cursor);
    const char *dot = p->ascii ? "|" : "\xc2\xb7";
    snprintf(legend, sizeof legend, " top lines: L%d H%d at the cursor, pos %d %s a: %s %s Esc/d closes ", m->sel_layer,
             m->sel_head, t ? t->pos : 0, dot, d->pooled ? "this head" : "all heads", dot);
    view_puts_fit(w, h - 1, 2, wd - 4, legend, p->ascii, A_DIM, 0);
}
