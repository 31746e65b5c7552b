/* eval_reports.c — footprint, grid and curves of `eval --tasks`
 * (eval_reports.h): the items' numbers gathered into the pure modules'
 * inputs, and their strings written out. */
#include "app/eval_reports.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/files.h"

void eval_report_init(EvalReport *r, const TaskSet *s, long grid, const char *grid_svg) {
    memset(r, 0, sizeof *r);
    r->grid = grid, r->grid_svg = grid_svg;
    for (int k = 0; k < TASK_COUNT && r->n_panels < PLOT_BUDGET_MAX_PANELS - 1; k++)
        for (int i = 0; i < s->n; i++)
            if (s->item[i].kind == (TaskKind)k) {
                r->kind[r->n_panels] = (TaskKind)k, r->panel[r->n_panels++] = task_name((TaskKind)k);
                break;
            }
    r->panel[r->n_panels++] = "average";
}

void eval_report_free(EvalReport *r) {
    free(r->pts);
    r->pts = NULL, r->n_pts = r->cap_pts = 0;
}

int eval_report_add_point(EvalReport *r, const TaskSet *s, const char *arm, double share, double keys,
                          const double *scores, Err *e) {
    if (r->n_pts == r->cap_pts) {
        int cap = r->cap_pts ? 2 * r->cap_pts : 16;
        BudgetPoint *p = realloc(r->pts, (size_t)cap * sizeof *p);
        if (!p) return err_set(e, "out of memory");
        r->pts = p, r->cap_pts = cap;
    }
    BudgetPoint *p = &r->pts[r->n_pts++];
    memset(p, 0, sizeof *p);
    snprintf(p->arm, sizeof p->arm, "%s", arm);
    p->share = share, p->keys = keys;
    int kinds = r->n_panels - 1;
    double mean = 0;
    for (int k = 0; k < kinds; k++) {
        double sum = 0;
        int n = 0;
        for (int i = 0; i < s->n; i++)
            if (s->item[i].kind == r->kind[k]) sum += scores[i], n++;
        p->acc[k] = n ? sum / n : NAN;
        mean += p->acc[k] / kinds;
    }
    p->acc[kinds] = mean;
    return 0;
}

int eval_report_grid(const EvalReport *r, const TaskSet *s, const double *scores, EvalGrid *g, Err *e) {
    int *len = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *len);
    double *depth = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *depth);
    int rc = len && depth ? 0 : err_set(e, "out of memory");
    for (int i = 0; rc == 0 && i < s->n; i++) {
        const TaskItem *it = &s->item[i];
        len[i] = it->n_tokens;
        depth[i] = eval_grid_depth(it->n_needle_pos > 0 ? it->needle_pos[0] : -1, it->n_tokens);
    }
    if (rc == 0) rc = eval_grid_make(len, depth, scores, s->n, (int)r->grid, g, e);
    free(len), free(depth);
    return rc;
}

/* A JSON number, null where not finite. */
static void num(double v) {
    if (isfinite(v)) printf("%.17g", v);
    else printf("null");
}

void eval_report_json_grid(const EvalGrid *g) {
    printf(", \"effective_length\": ");
    num(g->effective_len >= 0 ? g->effective_len : NAN);
    printf(", \"grid\": {\"depths\": %d, \"lens\": [", g->n_depths);
    for (int c = 0; c < g->n_lens; c++) printf("%s%d", c ? ", " : "", g->len[c]);
    printf("], \"acc\": [");
    for (int d = 0; d < g->n_depths; d++) {
        printf("%s[", d ? ", " : "");
        for (int c = 0; c < g->n_lens; c++) printf("%s", c ? ", " : ""), num(g->acc[d][c]);
        printf("]");
    }
    printf("], \"count\": [");
    for (int d = 0; d < g->n_depths; d++) {
        printf("%s[", d ? ", " : "");
        for (int c = 0; c < g->n_lens; c++) printf("%s%d", c ? ", " : "", g->count[d][c]);
        printf("]");
    }
    printf("], \"left_out\": %d}", g->n_left_out);
}

int eval_report_write_svg(const char *path, const char *svg, Err *e) {
    if (!svg) return err_set(e, "out of memory");
    FileAtomic out;
    FILE *f = file_atomic_open(&out, path, e);
    if (!f) return -1;
    fputs(svg, f);
    return file_atomic_commit(&out, e);
}

int eval_report_curves(const EvalReport *r, const char *svg, int plot, Err *e) {
    const char *title = "task accuracy against the budget: every predictor, random and local";
    if (svg) {
        char *s = plot_budget_svg(title, r->panel, r->n_panels, r->pts, r->n_pts);
        int rc = eval_report_write_svg(svg, s, e);
        free(s);
        if (rc) return -1;
    }
    if (plot) {
        char *t = plot_budget_text(title, r->panel, r->n_panels, r->pts, r->n_pts, 64, 14, plot_budget_ascii());
        if (!t) return err_set(e, "out of memory");
        fputs(t, stdout);
        free(t);
    }
    return 0;
}
