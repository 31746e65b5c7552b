/* plot_budget.c — score-against-budget curves as SVG and text
 * (plot_budget.h). Both axes are fixed at 0 to 1 (shares and accuracies),
 * so panels, budgets and runs compare by eye. */
#include "app/plot_budget.h"

#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const COLOURS[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#17becf", "#e377c2", "#7f7f7f", "#bcbd22",
                                      "#000000", "#aec7e8"}; /* as many as eval's arms: full, 9 matched, local */
#define N_COLOURS ((int)(sizeof COLOURS / sizeof COLOURS[0]))
#define MAX_ARMS 32

static const char *const ROW_X[2] = {"global share", "keys read (KV/kvh)"};

/* The arms in order of first appearance; returns their count (at most MAX_ARMS). */
static int arms_of(const BudgetPoint *p, int n, const char **arm) {
    int na = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < na && strcmp(arm[k], p[i].arm)) k++;
        if (k == na && na < MAX_ARMS) arm[na++] = p[i].arm;
    }
    return na;
}

static double point_x(const BudgetPoint *p, int row) { return row ? p->keys : p->share; }

/* Indices of arm's points drawable on (panel, row), in order of x: count. */
static int arm_points(const BudgetPoint *p, int n, const char *arm, int panel, int row, int *idx) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(p[i].arm, arm) || !isfinite(p[i].acc[panel]) || !isfinite(point_x(&p[i], row))) continue;
        int j = m++;
        while (j > 0 && point_x(&p[idx[j - 1]], row) > point_x(&p[i], row)) idx[j] = idx[j - 1], j--;
        idx[j] = i;
    }
    return m;
}

void plot_xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
}

#define PW 260 /* a panel's plot area */
#define PH 180
#define ML 50
#define MT 40
#define GAP_X 30
#define GAP_Y 60

static void svg_panel(FILE *f, const char *name, int panel, int row, int x0, int y0, const BudgetPoint *p, int n,
                      const char **arm, int na, int *idx) {
    fprintf(f, "<g><text x=\"%d\" y=\"%d\" font-size=\"12\" font-weight=\"bold\">", x0, y0 - 8);
    plot_xml_text(f, name);
    fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", x0, y0,
            PW, PH);
    for (int t = 0; t <= 4; t++)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%d%%</text>"
                   "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%d%%</text>\n",
                x0 - 4, y0 + PH - PH * t / 4 + 4, 25 * t, x0 + PW * t / 4, y0 + PH + 14, 25 * t);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n", x0 + PW / 2, y0 + PH + 28,
            ROW_X[row]);
    for (int a = 0; a < na; a++) {
        int m = arm_points(p, n, arm[a], panel, row, idx);
        const char *c = COLOURS[a % N_COLOURS];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
        for (int k = 0; k < m; k++)
            fprintf(f, "%s%.2f,%.2f", k ? " " : "", x0 + PW * point_x(&p[idx[k]], row), y0 + PH * (1 - p[idx[k]].acc[panel]));
        fprintf(f, "\"/>\n");
        for (int k = 0; k < m; k++) {
            const BudgetPoint *q = &p[idx[k]];
            fprintf(f, "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\" data-arm=\"", x0 + PW * point_x(q, row),
                    y0 + PH * (1 - q->acc[panel]), c);
            plot_xml_text(f, q->arm);
            fprintf(f, "\" data-panel=\"%d\" data-row=\"%d\" data-x=\"%.17g\" data-y=\"%.17g\"><title>", panel, row,
                    point_x(q, row), q->acc[panel]);
            plot_xml_text(f, q->arm);
            fprintf(f, ": %.1f%% at %.1f%%</title></circle>\n", 100 * q->acc[panel], 100 * point_x(q, row));
        }
    }
    fprintf(f, "</g>\n");
}

char *plot_budget_svg(const char *title, const char *const *panels, int n_panels, const BudgetPoint *p, int n) {
    if (n_panels < 1 || n_panels > PLOT_BUDGET_MAX_PANELS || n < 0) return NULL;
    const char *arm[MAX_ARMS];
    int na = arms_of(p, n, arm), *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    char *buf = NULL;
    size_t cap = 0;
    FILE *f = idx ? open_memstream(&buf, &cap) : NULL;
    if (!f) { free(idx); return NULL; }
    int w = ML + n_panels * (PW + GAP_X) + 140, h = MT + 2 * (PH + GAP_Y) + 10;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", w, h);
    plot_xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"12\" y=\"%d\" font-size=\"11\" transform=\"rotate(-90 12 %d)\">accuracy</text>\n",
            MT + PH, MT + PH);
    for (int row = 0; row < 2; row++)
        for (int k = 0; k < n_panels; k++)
            svg_panel(f, panels[k], k, row, ML + k * (PW + GAP_X), MT + 10 + row * (PH + GAP_Y), p, n, arm, na, idx);
    for (int a = 0; a < na; a++) {
        int x = ML + n_panels * (PW + GAP_X), y = MT + 10 + 18 * a;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
                   "font-size=\"12\">", x, y, COLOURS[a % N_COLOURS], x + 16, y + 10);
        plot_xml_text(f, arm[a]);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
    fclose(f);
    free(idx);
    return buf;
}

/* A distinct letter per arm: the first of its name not taken yet, else a digit. */
static void arm_marks(const char **arm, int na, char *mark) {
    for (int a = 0; a < na; a++) {
        mark[a] = (char)('0' + a % 10);
        for (const char *c = arm[a]; *c; c++) {
            int taken = !((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'));
            for (int k = 0; k < a; k++) taken |= mark[k] == *c;
            if (!taken) { mark[a] = *c; break; }
        }
    }
}

enum { CELL_EMPTY = 0, CELL_DOT = 1, CELL_MANY = 2, CELL_MARK = 3 }; /* CELL_MARK + a: arm a's mark */

/* Cell (gx, gy) of a pw x ph area for the point (x, y) in [0, 1]^2. */
static void cell_of(double x, double y, int pw, int ph, int *gx, int *gy) {
    *gx = (int)lround(fmin(1, fmax(0, x)) * (pw - 1));
    *gy = ph - 1 - (int)lround(fmin(1, fmax(0, y)) * (ph - 1));
}

/* One panel's plot area: every arm's segments dotted, then its marks. */
static void text_area(int *g, int pw, int ph, int panel, int row, const BudgetPoint *p, int n, const char **arm, int na,
                      int *idx) {
    for (int a = 0; a < na; a++) {
        int m = arm_points(p, n, arm[a], panel, row, idx);
        for (int k = 0; k + 1 < m; k++) {
            const BudgetPoint *u = &p[idx[k]], *v = &p[idx[k + 1]];
            int steps = 2 * (pw + ph);
            for (int s = 1; s < steps; s++) {
                double t = (double)s / steps;
                int gx, gy;
                cell_of(point_x(u, row) + t * (point_x(v, row) - point_x(u, row)),
                        u->acc[panel] + t * (v->acc[panel] - u->acc[panel]), pw, ph, &gx, &gy);
                if (g[gy * pw + gx] == CELL_EMPTY) g[gy * pw + gx] = CELL_DOT;
            }
        }
    }
    for (int a = 0; a < na; a++) {
        int m = arm_points(p, n, arm[a], panel, row, idx);
        for (int k = 0; k < m; k++) {
            int gx, gy;
            cell_of(point_x(&p[idx[k]], row), p[idx[k]].acc[panel], pw, ph, &gx, &gy);
            int *c = &g[gy * pw + gx];
            *c = *c < CELL_MARK || *c == CELL_MARK + a ? CELL_MARK + a : CELL_MANY;
        }
    }
}

static void text_panel(FILE *f, const char *name, int panel, int row, int cols, int rows, const BudgetPoint *p, int n,
                       const char **arm, const char *mark, int na, int *idx, int *g, int ascii) {
    int pw = cols - 6, ph = rows - 3; /* "100% |" to the left, the axis and its labels below */
    memset(g, 0, (size_t)pw * ph * sizeof *g);
    text_area(g, pw, ph, panel, row, p, n, arm, na, idx);
    fprintf(f, "%s (x: %s)\n", name, ROW_X[row]);
    for (int y = 0; y < ph; y++) {
        if (y == 0) fprintf(f, "100%%");
        else if (y == ph / 2) fprintf(f, " 50%%");
        else fprintf(f, "    ");
        fputs(ascii ? " |" : " \xe2\x94\x82", f);
        for (int x = 0; x < pw; x++) {
            int c = g[y * pw + x];
            if (c == CELL_EMPTY) fputc(' ', f);
            else if (c == CELL_DOT) fputs(ascii ? "." : "\xc2\xb7", f);
            else if (c == CELL_MANY) fputc('*', f);
            else fputc(mark[c - CELL_MARK], f);
        }
        fputc('\n', f);
    }
    fputs(ascii ? "  0% +" : "  0% \xe2\x94\x94", f);
    for (int x = 0; x < pw; x++) fputs(ascii ? "-" : "\xe2\x94\x80", f);
    fprintf(f, "\n      0%%%*s100%%\n", pw - 6 > 0 ? pw - 6 : 0, "");
}

char *plot_budget_text(const char *title, const char *const *panels, int n_panels, const BudgetPoint *p, int n,
                       int cols, int rows, int ascii) {
    if (n_panels < 1 || n_panels > PLOT_BUDGET_MAX_PANELS || n < 0 || cols < 24 || rows < 8 || cols > 400 || rows > 200)
        return NULL;
    const char *arm[MAX_ARMS];
    char mark[MAX_ARMS];
    int na = arms_of(p, n, arm);
    arm_marks(arm, na, mark);
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx), *g = malloc((size_t)cols * rows * sizeof *g);
    char *buf = NULL;
    size_t cap = 0;
    FILE *f = idx && g ? open_memstream(&buf, &cap) : NULL;
    if (!f) { free(idx), free(g); return NULL; }
    fprintf(f, "%s\n", title);
    for (int row = 0; row < 2; row++)
        for (int k = 0; k < n_panels; k++) text_panel(f, panels[k], k, row, cols, rows, p, n, arm, mark, na, idx, g, ascii);
    fprintf(f, "marks:");
    for (int a = 0; a < na; a++) fprintf(f, "  %c %s", mark[a], arm[a]);
    fprintf(f, "  (* several)\n");
    fclose(f);
    free(idx), free(g);
    return buf;
}

int plot_budget_ascii(void) {
    const char *env = getenv("AHASCOPE_ASCII");
    if (env && *env && strcmp(env, "0")) return 1;
    const char *old = setlocale(LC_CTYPE, NULL);
    char keep[64];
    snprintf(keep, sizeof keep, "%s", old ? old : "C");
    setlocale(LC_CTYPE, ""); /* the environment's, to read its character set, then put back */
    int utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    setlocale(LC_CTYPE, keep);
    return !utf8;
}
