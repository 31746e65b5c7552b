/* keep.c — whole tables as text, CSV and SVG (see keep.h). */
#include "views/keep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/needle.h"
#include "views/paint.h"
#include "views/rates.h"

/* The CSV names of H's columns: the store's words for the rates, then the marks'. */
static const char *const CSV_COLS[] = {"global_rate", "oracle_rate", "precision", "recall",
                                       "agree_rate",  "needle",      "needle_mean", "question"};
static const char *const TEXT_COLS[] = {"global", "oracle", "prec", "recall", "agree", "needle", "answer", "quest"};
_Static_assert(sizeof CSV_COLS / sizeof CSV_COLS[0] == VIEW_RATE_COUNT + VIEW_HEADS_WEIGHTS, "a name per column");

void view_keep_head(const ViewModel *m, char *buf, size_t n) {
    char model[sizeof m->hdr.model * 4], policy[sizeof m->hdr.policy * 4], run[24] = "-", seed[24] = "-";
    view_piece_label(m->hdr.model, 1, model, sizeof model); /* ASCII: a CSV comment line any tool reads */
    view_piece_label(m->hdr.policy, 1, policy, sizeof policy);
    if (m->hdr.run_id > 0) snprintf(run, sizeof run, "%lld", m->hdr.run_id);
    if (m->hdr.seed_known) snprintf(seed, sizeof seed, "%llu", m->hdr.seed);
    const StepTrace *t = view_trace(m, m->cursor);
    snprintf(buf, n, "# ahascope run %s seed %s model %s policy %s window %d sinks %d tau %.2f theta %.4f pos %d", run,
             seed, model, policy, m->hdr.window, m->hdr.sinks, m->hdr.tau, decide_prob(m->hdr.theta_logit),
             t ? t->pos : -1);
}

/* A memory stream headed by the keep line; NULL out of memory. */
static FILE *keep_open(const ViewModel *m, char **text, size_t *len) {
    FILE *f = open_memstream(text, len);
    if (!f) return NULL;
    char head[1024];
    view_keep_head(m, head, sizeof head);
    fprintf(f, "%s\n", head);
    return f;
}

/* Close the stream: only then does *text hold what was written. */
static char *keep_close(FILE *f, char **text) {
    if (fclose(f)) {
        free(*text);
        return NULL;
    }
    return *text;
}

/* One value of H's row as its CSV field (raw fraction) or its text (as the pane prints it). */
static void head_value(const ViewModel *m, int col, int cell, int csv, int *n, char *v, size_t cap) {
    int exact;
    double r = view_heads_value(m, col, cell, n, &exact);
    if (csv) {
        if (isnan(r)) v[0] = 0;
        else snprintf(v, cap, "%.6f", r);
    } else if (col >= VIEW_RATE_COUNT) view_span_weight_text(&(ViewSpanWeight){r, exact, 1}, 1, v, cap);
    else if (isnan(r)) snprintf(v, cap, "n/a");
    else snprintf(v, cap, "%.1f%%", 100.0 * r);
}

char *view_heads_table(const ViewHeads *hs, const ViewModel *m, int csv) {
    int cells = m->n_layers * m->n_heads, cols = view_heads_sorts(m);
    int *order = cells > 0 ? malloc((size_t)cells * sizeof *order) : NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = order ? keep_open(m, &text, &len) : NULL;
    if (!f) { free(order); return NULL; }
    view_heads_order(m, hs->sort, hs->asc, order);
    fprintf(f, csv ? "rank,layer,head" : "rank  head     ");
    for (int i = 0; i < cols; i++) fprintf(f, csv ? ",%s" : " %8s", csv ? CSV_COLS[i] : TEXT_COLS[i]);
    fprintf(f, csv ? ",n\n" : " %8s\n", "n");
    for (int k = 0; k < cells; k++) {
        int cell = order[k], n = 0;
        char name[24];
        snprintf(name, sizeof name, "L%d H%d", cell / m->n_heads, cell % m->n_heads);
        if (csv) fprintf(f, "%d,%d,%d", k + 1, cell / m->n_heads, cell % m->n_heads);
        else fprintf(f, "%4d  %-9s", k + 1, name);
        for (int i = 0; i < cols; i++) {
            char v[32];
            head_value(m, i, cell, csv, i == 0 ? &n : NULL, v, sizeof v);
            fprintf(f, csv ? ",%s" : " %8s", v);
        }
        fprintf(f, csv ? ",%d\n" : " %8d\n", n);
    }
    free(order);
    return keep_close(f, &text);
}

char *view_pattern_table(const ViewPattern *p, const ViewModel *m, int csv) {
    if (!p->open || !p->w) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = keep_open(m, &text, &len);
    if (!f) return NULL;
    fprintf(f, "# pattern L%d H%d: %d positions, %d a cell, largest weight in the cell%s\n", p->layer, p->head, p->n,
            p->bin, p->recorded ? "; recorded top-k far keys only (the window's keys are not there)" : "");
    if (csv) fprintf(f, "query,key,weight\n");
    for (int qi = 0; qi < p->nb; qi++) {
        int q0 = qi * p->bin, q1 = q0 + p->bin < p->n ? q0 + p->bin : p->n;
        if (!csv) fprintf(f, "pos %d %c:", q0, view_pattern_row_mark(m, p->layer, p->head, q0, q1));
        for (int ki = 0; ki < p->nb; ki++) {
            float v = p->w[(size_t)qi * p->nb + ki];
            if (v < 0) continue;
            if (csv) fprintf(f, "%d,%d,%.6f\n", q0, ki * p->bin, v);
            else fprintf(f, " %d:%.3f", ki * p->bin, v);
        }
        if (!csv) fputc('\n', f);
    }
    return keep_close(f, &text);
}

/* A rule of dashes (and spaces or pluses) under a table's header. */
static int is_rule(const char *s, size_t n) {
    int dash = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-') dash = 1;
        else if (s[i] != ' ' && s[i] != '+' && s[i] != '|') return 0;
    }
    return dash;
}

/* One CSV field: quoted where it holds a comma or a quote. */
static void csv_field(FILE *f, const char *s, size_t n) {
    int quote = memchr(s, ',', n) || memchr(s, '"', n);
    if (quote) fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') fputc('"', f);
        fputc(s[i], f);
    }
    if (quote) fputc('"', f);
}

/* A line of the text pane as CSV: columns end at a tab or at two spaces or more. */
static void csv_line(FILE *f, const char *s, size_t n) {
    size_t i = 0;
    while (i < n && s[i] == ' ') i++;
    for (int first = 1; i < n; first = 0) {
        size_t j = i;
        while (j < n && s[j] != '\t' && !(s[j] == ' ' && j + 1 < n && s[j + 1] == ' ')) j++;
        size_t end = j;
        while (end > i && s[end - 1] == ' ') end--;
        if (!first) fputc(',', f);
        csv_field(f, s + i, end - i);
        while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
        i = j;
    }
    fputc('\n', f);
}

char *view_text_table(const ViewModel *m, int csv) {
    if (!m->sql_open || !m->sql_text) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = keep_open(m, &text, &len);
    if (!f) return NULL;
    fprintf(f, "# %s\n", m->sql_title);
    for (const char *p = m->sql_text; *p;) {
        size_t n = strcspn(p, "\n");
        if (!csv) fprintf(f, "%.*s\n", (int)n, p);
        else if (n > 0 && !is_rule(p, n)) csv_line(f, p, n);
        p += n + (p[n] == '\n');
    }
    return keep_close(f, &text);
}

/* text with &, <, > and quotes escaped for XML (any byte under 0x20 dropped). */
static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: if ((unsigned char)*s >= 0x20) fputc(*s, f);
        }
}

static FILE *svg_open(const ViewModel *m, char **text, size_t *len, int w, int h, const char *title) {
    FILE *f = open_memstream(text, len);
    if (!f) return NULL;
    char head[1024];
    view_keep_head(m, head, sizeof head);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n<desc>", w, h, w, h);
    xml_text(f, head + 2);
    fputs("</desc>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"8\" y=\"14\">", f);
    xml_text(f, title);
    fputs("</text>\n<text x=\"8\" y=\"28\" font-size=\"9\">", f);
    xml_text(f, head + 2);
    fputs("</text>\n", f);
    return f;
}

static char *svg_close(FILE *f, char **text) {
    fputs("</svg>\n", f);
    return keep_close(f, text);
}

char *view_pattern_svg(const ViewPattern *p, const ViewModel *m) {
    if (!p->open || !p->w) return NULL;
    int pool = (p->nb + VIEW_KEEP_SVG_CELLS - 1) / VIEW_KEEP_SVG_CELLS, side = (p->nb + pool - 1) / pool;
    int cell = side <= 64 ? 8 : side <= 128 ? 4 : 2, x0 = 40, y0 = 40;
    char title[160], *text = NULL;
    size_t len = 0;
    snprintf(title, sizeof title, "pattern L%d H%d: rows query positions, columns keys, %d positions a cell%s",
             p->layer, p->head, p->bin * pool, p->recorded ? " (recorded top-k far keys)" : "");
    FILE *f = svg_open(m, &text, &len, x0 + side * cell + 20, y0 + side * cell + 20, title);
    if (!f) return NULL;
    fprintf(f, "<g class=\"heatmap\" data-rows=\"%d\" data-cols=\"%d\">\n", side, side);
    for (int r = 0; r < side; r++)
        for (int c = 0; c <= r && c < side; c++) {
            float v = -1;
            for (int i = r * pool; i < (r + 1) * pool && i < p->nb; i++)
                for (int j = c * pool; j < (c + 1) * pool && j < p->nb; j++)
                    if (p->w[(size_t)i * p->nb + j] > v) v = p->w[(size_t)i * p->nb + j];
            if (v <= 0) continue;
            int shade = 255 - (int)lround(255.0 * sqrt(v > 1 ? 1.0 : v));
            fprintf(f, "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
                    "data-q=\"%d\" data-k=\"%d\" data-w=\"%.6f\"/>\n", x0 + c * cell, y0 + r * cell, cell, cell, shade,
                    shade, 255, r * pool * p->bin, c * pool * p->bin, v);
        }
    fprintf(f, "</g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n", x0, y0,
            side * cell, side * cell);
    return svg_close(f, &text);
}

char *view_heads_svg(const ViewHeads *hs, const ViewModel *m) {
    int cells = m->n_layers * m->n_heads, bars = 0;
    int *order = cells > 0 ? malloc((size_t)cells * sizeof *order) : NULL;
    if (!order) return NULL;
    view_heads_order(m, hs->sort, hs->asc, order);
    for (int k = 0; k < cells; k++) bars += !isnan(view_heads_value(m, hs->sort, order[k], NULL, NULL));
    char title[160], *text = NULL;
    size_t len = 0;
    snprintf(title, sizeof title, "heads by %s, %s first (%d n/a left out)", view_heads_sort_name(m, hs->sort),
             hs->asc ? "lowest" : "highest", cells - bars);
    int x0 = 70, y0 = 40, bh = 14, bw = 400;
    FILE *f = svg_open(m, &text, &len, x0 + bw + 80, y0 + bars * bh + 20, title);
    if (!f) { free(order); return NULL; }
    fprintf(f, "<g class=\"bars\" data-column=\"%s\">\n", CSV_COLS[hs->sort]);
    for (int k = 0, y = y0; k < cells; k++) {
        double v = view_heads_value(m, hs->sort, order[k], NULL, NULL);
        if (isnan(v)) continue;
        double cl = v < 0 ? 0 : v > 1 ? 1 : v;
        fprintf(f, "<text x=\"4\" y=\"%d\">L%d H%d</text>\n", y + bh - 3, order[k] / m->n_heads, order[k] % m->n_heads);
        fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"steelblue\" "
                "data-layer=\"%d\" data-head=\"%d\" data-value=\"%.6f\"/>\n", x0, y + 1, cl * bw, bh - 2,
                order[k] / m->n_heads, order[k] % m->n_heads, v);
        fprintf(f, "<text x=\"%.2f\" y=\"%d\">%.3f</text>\n", x0 + cl * bw + 4, y + bh - 3, v);
        y += bh;
    }
    fputs("</g>\n", f);
    free(order);
    return svg_close(f, &text);
}
