/* plot.c — SVG and text charts (see plot.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/files.h"
#include "views/plot.h"

#define W 640
#define H 420
#define ML 70 /* margins: room for tick labels and axis titles */
#define MR 150
#define MT 40
#define MB 50

static const char *const COLOURS[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"};

typedef struct {
    double x0, x1, y0, y1;
    int log_x;
} Range;

static double tx(const Range *r, double x) {
    double a = r->log_x ? log10(x) : x, lo = r->log_x ? log10(r->x0) : r->x0, hi = r->log_x ? log10(r->x1) : r->x1;
    return ML + (hi > lo ? (a - lo) / (hi - lo) : 0.5) * (W - ML - MR);
}

static double ty(const Range *r, double y) {
    return H - MB - (r->y1 > r->y0 ? (y - r->y0) / (r->y1 - r->y0) : 0.5) * (H - MT - MB);
}

static Range range_of(const PlotSpec *spec, const PlotSeries *s, int n) {
    Range r = {INFINITY, -INFINITY, INFINITY, -INFINITY, spec->log_x};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < s[i].n; k++) {
            double x = s[i].pts[k].x, y = s[i].pts[k].y;
            if (!isfinite(x) || !isfinite(y) || (r.log_x && x <= 0)) continue;
            r.x0 = fmin(r.x0, x), r.x1 = fmax(r.x1, x), r.y0 = fmin(r.y0, y), r.y1 = fmax(r.y1, y);
        }
    if (!isfinite(r.x0)) r.x0 = r.log_x ? 1 : 0, r.x1 = r.log_x ? 10 : 1, r.y0 = 0, r.y1 = 1;
    if (r.y0 > 0 && r.y0 < 0.5 * r.y1) r.y0 = 0; /* start at zero when it costs little */
    double pad = (r.y1 - r.y0) * 0.05;
    r.y1 += pad > 0 ? pad : 0.5;
    return r;
}

/* XML text: & < > " escaped, control bytes dropped. */
static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20) fputc(*s, f);
        }
    }
}

static void axes(FILE *f, const PlotSpec *spec, const Range *r) {
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", ML);
    xml_text(f, spec->title);
    fprintf(f, "</text>\n<g stroke=\"#444\" fill=\"none\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
               "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>\n",
            ML, H - MB, W - MR, H - MB, ML, MT, ML, H - MB);
    fprintf(f, "<g font-size=\"11\" fill=\"#222\">\n");
    for (int i = 0; i <= 4; i++) {
        double y = r->y0 + (r->y1 - r->y0) * i / 4;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", ML - 6, ty(r, y) + 4, y);
        double x = r->log_x ? pow(10, log10(r->x0) + (log10(r->x1) - log10(r->x0)) * i / 4) : r->x0 + (r->x1 - r->x0) * i / 4;
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g</text>\n", tx(r, x), H - MB + 16, x);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 12);
    xml_text(f, spec->xlabel);
    fprintf(f, "</text>\n<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">", (MT + H - MB) / 2,
            (MT + H - MB) / 2);
    xml_text(f, spec->ylabel);
    fprintf(f, "</text>\n</g>\n");
}

static void series_svg(FILE *f, const Range *r, const PlotSeries *s, int i) {
    const char *c = COLOURS[i % 7];
    if (s->lines && s->n > 1) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
        for (int k = 0; k < s->n; k++) fprintf(f, "%s%.1f,%.1f", k ? " " : "", tx(r, s->pts[k].x), ty(r, s->pts[k].y));
        fprintf(f, "\"/>\n");
    }
    for (int k = 0; k < s->n; k++) {
        fprintf(f, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>", tx(r, s->pts[k].x),
                ty(r, s->pts[k].y), c);
        xml_text(f, s->name);
        fprintf(f, " ");
        xml_text(f, s->pts[k].label);
        fprintf(f, ": (%.4g, %.4g)</title></circle>\n", s->pts[k].x, s->pts[k].y);
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" font-size=\"12\">",
            W - MR + 12, MT + 18 * i, c, W - MR + 28, MT + 18 * i + 10);
    xml_text(f, s->name);
    fprintf(f, "</text>\n");
}

int plot_svg(const char *path, const PlotSpec *spec, const PlotSeries *s, int n_series, Err *e) {
    FileAtomic out;
    FILE *f = file_atomic_open(&out, path, e);
    if (!f) return -1;
    Range r = range_of(spec, s, n_series);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<rect width=\"%d\" height=\"%d\" "
               "fill=\"white\"/>\n", W, H, W, H, W, H);
    axes(f, spec, &r);
    for (int i = 0; i < n_series; i++) series_svg(f, &r, &s[i], i);
    fprintf(f, "</svg>\n");
    return file_atomic_commit(&out, e);
}

int plot_svg_bars(const char *path, const PlotSpec *spec, const char *const *labels, const double *a,
                  const double *b, int n, const char *legend_a, const char *legend_b, Err *e) {
    FileAtomic out;
    FILE *f = file_atomic_open(&out, path, e);
    if (!f) return -1;
    double top = 0;
    for (int i = 0; i < n; i++) top = fmax(top, fmax(a[i], b ? b[i] : 0));
    Range r = {0, n, 0, top > 0 ? top * 1.05 : 1, 0};
    int wd = W + (n > 40 ? (n - 40) * 12 : 0);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" font-family=\"sans-serif\">\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
            wd, H, wd, H);
    axes(f, spec, &r);
    double slot = (double)(W - ML - MR) / (n > 0 ? n : 1), bw = slot * (b ? 0.4 : 0.8);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < (b ? 2 : 1); k++) {
            double v = k ? b[i] : a[i], x = ML + slot * i + slot * 0.1 + k * bw, y = ty(&r, v);
            fprintf(f, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                    x, y, bw, ty(&r, 0) - y, COLOURS[k]);
            xml_text(f, labels[i]);
            fprintf(f, " %s: %.4g</title></rect>\n", k ? legend_b : legend_a, v);
        }
    const char *leg[2] = {legend_a, legend_b};
    for (int k = 0; k < (b ? 2 : 1); k++) {
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
                   "font-size=\"12\">", W - MR + 12, MT + 18 * k, COLOURS[k], W - MR + 28, MT + 18 * k + 10);
        xml_text(f, leg[k] ? leg[k] : "");
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
    return file_atomic_commit(&out, e);
}

/* A distinct mark per series: the first letter of its name not taken yet. */
static void pick_marks(const PlotSeries *s, int n, char *marks) {
    for (int i = 0; i < n; i++) {
        marks[i] = (char)('0' + i % 10);
        for (const char *c = s[i].name; *c; c++) {
            int taken = *c == ' ' || *c == '_' || *c == '*';
            for (int k = 0; k < i; k++) taken |= marks[k] == *c;
            if (!taken) { marks[i] = *c; break; }
        }
    }
}

void plot_text(FILE *out, const PlotSpec *spec, const PlotSeries *s, int n_series, int cols, int rows) {
    if (cols < 20 || rows < 5 || n_series > 64) return;
    char marks[64];
    pick_marks(s, n_series, marks);
    Range r = range_of(spec, s, n_series);
    int pw = cols - 10, ph = rows - 3;
    char *grid = malloc((size_t)pw * ph);
    if (!grid) return;
    memset(grid, ' ', (size_t)pw * ph);
    for (int i = 0; i < n_series; i++)
        for (int k = 0; k < s[i].n; k++) {
            double fx = (tx(&r, s[i].pts[k].x) - ML) / (W - ML - MR), fy = (H - MB - ty(&r, s[i].pts[k].y)) / (H - MT - MB);
            if (!isfinite(fx) || !isfinite(fy)) continue;
            int gx = (int)lround(fx * (pw - 1)), gy = ph - 1 - (int)lround(fy * (ph - 1));
            if (gx < 0 || gx >= pw || gy < 0 || gy >= ph) continue;
            char *c = &grid[gy * pw + gx], m = marks[i];
            *c = *c == ' ' || *c == m ? m : '*';
        }
    fprintf(out, "%s\n", spec->title);
    for (int y = 0; y < ph; y++) {
        double v = r.y1 - (r.y1 - r.y0) * y / (ph > 1 ? ph - 1 : 1);
        fprintf(out, "%8.3g |%.*s\n", v, pw, grid + (size_t)y * pw);
    }
    fprintf(out, "%8s +", "");
    for (int x = 0; x < pw; x++) fputc('-', out);
    fprintf(out, "\n%9s%-10.3g%*s%10.3g  %s\n", "", r.x0, pw - 20 > 0 ? pw - 20 : 0, "", r.x1, spec->xlabel);
    fprintf(out, "%9s", "");
    for (int i = 0; i < n_series; i++) fprintf(out, "%c=%s  ", marks[i], s[i].name);
    fprintf(out, "(y: %s)\n", spec->ylabel);
    free(grid);
}
