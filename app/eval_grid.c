/* eval_grid.c — accuracy by needle depth and context length, and the
 * effective length (eval_grid.h). Strings are built on open_memstream so
 * the same text can go to stdout or to a file, and to a test unprinted. */
#include "app/eval_grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/plot_budget.h"

double eval_grid_depth(int needle_pos0, int n_tokens) {
    return needle_pos0 < 0 || n_tokens <= 0 ? -1 : (double)needle_pos0 / n_tokens;
}

/* Column of context len in g, added in order when new; -1 when full. */
static int len_column(EvalGrid *g, int len) {
    int c = 0;
    while (c < g->n_lens && g->len[c] < len) c++;
    if (c < g->n_lens && g->len[c] == len) return c;
    if (g->n_lens == EVAL_GRID_MAX_LENS) return -1;
    memmove(&g->len[c + 1], &g->len[c], (size_t)(g->n_lens - c) * sizeof g->len[0]);
    g->len[c] = len, g->n_lens++;
    return c;
}

int eval_grid_make(const int *n_tokens, const double *depth, const double *score, int n, int n_depths, EvalGrid *g,
                   Err *e) {
    memset(g, 0, sizeof *g);
    if (n_depths < 1 || n_depths > EVAL_GRID_MAX_DEPTHS)
        return err_usage(e, "--grid takes 1 to %d depth buckets, not %d", EVAL_GRID_MAX_DEPTHS, n_depths);
    g->n_depths = n_depths;
    for (int i = 0; i < n; i++) /* the columns first: sums then go to fixed places */
        if (depth[i] >= 0 && len_column(g, n_tokens[i]) < 0)
            return err_set(e, "the items have more than %d distinct contexts: the grid takes at most %d",
                           EVAL_GRID_MAX_LENS, EVAL_GRID_MAX_LENS);
    double sum[EVAL_GRID_MAX_DEPTHS][EVAL_GRID_MAX_LENS] = {{0}}, col[EVAL_GRID_MAX_LENS] = {0};
    int col_n[EVAL_GRID_MAX_LENS] = {0};
    for (int i = 0; i < n; i++) {
        if (depth[i] < 0) { g->n_left_out++; continue; }
        int c = len_column(g, n_tokens[i]), d = (int)floor(depth[i] * n_depths);
        d = d < 0 ? 0 : d >= n_depths ? n_depths - 1 : d;
        sum[d][c] += score[i], g->count[d][c]++, col[c] += score[i], col_n[c]++;
    }
    for (int c = 0; c < g->n_lens; c++) {
        g->len_acc[c] = col_n[c] ? col[c] / col_n[c] : NAN;
        for (int d = 0; d < n_depths; d++) g->acc[d][c] = g->count[d][c] ? sum[d][c] / g->count[d][c] : NAN;
    }
    g->effective_len = eval_grid_effective_length(g->len, g->len_acc, g->n_lens);
    return 0;
}

int eval_grid_effective_length(const int *len, const double *acc, int n) {
    if (n < 1 || !(acc[0] > 0)) return -1;
    int best = len[0];
    for (int c = 1; c < n && acc[c] >= EVAL_GRID_KEEP * acc[0]; c++) best = len[c];
    return best;
}

char *eval_grid_text(const char *name, const EvalGrid *g) {
    char *buf = NULL;
    size_t cap = 0;
    FILE *f = open_memstream(&buf, &cap);
    if (!f) return NULL;
    fprintf(f, "%s: accuracy by needle depth (rows) and context (columns)\n%-11s", name, "depth");
    for (int c = 0; c < g->n_lens; c++) fprintf(f, " %7d", g->len[c]);
    fputc('\n', f);
    for (int d = 0; d < g->n_depths; d++) {
        fprintf(f, "%3.0f-%3.0f%%   ", 100.0 * d / g->n_depths, 100.0 * (d + 1) / g->n_depths);
        for (int c = 0; c < g->n_lens; c++)
            if (g->count[d][c]) fprintf(f, " %6.1f%%", 100 * g->acc[d][c]);
            else fprintf(f, " %7s", "-");
        fputc('\n', f);
    }
    fprintf(f, "%-11s", "all");
    for (int c = 0; c < g->n_lens; c++) fprintf(f, " %6.1f%%", 100 * g->len_acc[c]);
    if (g->effective_len >= 0) fprintf(f, "\neffective length: %d tokens", g->effective_len);
    else fprintf(f, "\neffective length: undefined (nothing right at the shortest context)");
    if (g->n_left_out) fprintf(f, "; %d items without a needle left out", g->n_left_out);
    fputc('\n', f);
    fclose(f);
    return buf;
}


#define CELL 36 /* a cell's side in pixels */
#define PAD 60  /* room for a panel's labels */

/* Panel i at (x0, y0): its cells, the context labels under, depths beside. */
static void grid_panel(FILE *f, const char *name, const EvalGrid *g, int x0, int y0) {
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">", x0, y0 - 8);
    plot_xml_text(f, name);
    fprintf(f, " (effective length %d)</text>\n", g->effective_len);
    for (int d = 0; d < g->n_depths; d++) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%.0f%%</text>\n", x0 - 4,
                y0 + d * CELL + CELL / 2 + 4, 100.0 * d / g->n_depths);
        for (int c = 0; c < g->n_lens; c++) {
            double a = g->acc[d][c];
            int shade = g->count[d][c] ? (int)lround(255 * (1 - a)) : 255; /* right: dark green; empty: white */
            fprintf(f, "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
                       "stroke=\"#ccc\" data-depth=\"%d\" data-len=\"%d\" data-acc=\"%.17g\"><title>depth %d, %d tokens: "
                       "%.1f%% of %d</title></rect>\n",
                    x0 + c * CELL, y0 + d * CELL, CELL, CELL, shade, 128 + shade / 2, shade, d, g->len[c],
                    g->count[d][c] ? a : NAN, d, g->len[c], g->count[d][c] ? 100 * a : 0.0, g->count[d][c]);
        }
    }
    for (int c = 0; c < g->n_lens; c++)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%d</text>\n", x0 + c * CELL + CELL / 2,
                y0 + g->n_depths * CELL + 14, g->len[c]);
}

char *eval_grid_svg(const char *const *names, const EvalGrid *grids, int n) {
    char *buf = NULL;
    size_t cap = 0;
    FILE *f = open_memstream(&buf, &cap);
    if (!f) return NULL;
    int pw = PAD, ph = PAD;
    for (int i = 0; i < n; i++) {
        pw = grids[i].n_lens * CELL + 2 * PAD > pw ? grids[i].n_lens * CELL + 2 * PAD : pw;
        ph = grids[i].n_depths * CELL + 2 * PAD > ph ? grids[i].n_depths * CELL + 2 * PAD : ph;
    }
    int cols = n < 3 ? (n > 0 ? n : 1) : 3, rows = (n + cols - 1) / cols;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"8\" y=\"18\" font-size=\"12\">accuracy by needle depth (rows, from the start) and context "
               "(columns, tokens)</text>\n",
            cols * pw, rows * ph + 24);
    for (int i = 0; i < n; i++) grid_panel(f, names[i], &grids[i], (i % cols) * pw + PAD, 24 + (i / cols) * ph + PAD / 2);
    fprintf(f, "</svg>\n");
    fclose(f);
    return buf;
}
