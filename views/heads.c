/* heads.c — the heads sorted by a run rate (`H`): their order, its keys, its drawing.
 *
 * The heads sorted by a run rate: order, keys, drawing (see
 * heads.h). */
#include "views/heads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/keymap.h"
#include "views/needle.h"
#include "views/paint.h"
#include "views/rates.h"

#define DOT "\xc2\xb7"
#define COL_W 9 /* a rate's column: "  100.0%", "  1:▼recall" */

/* The columns: the five run rates, then the weights on the marks (needle.h). */
static const char *const COLUMNS[] = {"global", "oracle", "prec", "recall", "agree", "needle", "answer", "quest"};
_Static_assert(sizeof COLUMNS / sizeof COLUMNS[0] == VIEW_RATE_COUNT + VIEW_HEADS_WEIGHTS, "a name per column");

/* A weight's column is one wider: "≥1.00" under "6:▼needle" keeps a space before it. */
static int col_w(int i) { return i < VIEW_RATE_COUNT ? COL_W : COL_W + 1; }

typedef struct {
    double rate;
    int cell;
    int desc;
} Ranked;

/* n/a last, then the rate in the asked direction, then (layer, head). */
static int by_rate(const void *pa, const void *pb) {
    const Ranked *a = pa, *b = pb;
    int na = isnan(a->rate), nb = isnan(b->rate);
    if (na != nb) return na - nb;
    if (!na && a->rate != b->rate) return (a->rate < b->rate) == a->desc ? 1 : -1;
    return a->cell - b->cell;
}

int view_heads_sorts(const ViewModel *m) {
    return VIEW_RATE_COUNT + (view_weight_kind(m) != VIEW_MARK_NONE ? VIEW_HEADS_WEIGHTS : 0);
}

double view_heads_value(const ViewModel *m, int sort, int cell, int *n, int *exact) {
    if (exact) *exact = 1;
    if (sort < VIEW_RATE_COUNT) return view_head_rate(m, cell, view_rate_metric(sort), n);
    ViewMarkKind kind = sort == VIEW_HEADS_QUESTION ? VIEW_MARK_QUESTION : view_weight_kind(m);
    int p0, p1;
    ViewSpanWeight sw = sort != VIEW_HEADS_ANSWER ? view_span_weight(m, view_trace(m, m->cursor), cell, kind)
                        : view_weight_span(m, &p0, &p1) ? view_span_weight_over(m, cell, kind, p0, p1)
                                                        : view_span_weight_answer(m, cell, kind, m->cursor);
    if (n) *n = sw.n;
    if (exact) *exact = sw.exact;
    return sw.w;
}

const char *view_heads_sort_name(const ViewModel *m, int sort) {
    int p0, p1;
    switch (sort) {
    case VIEW_HEADS_NEEDLE: return "weight on the needle at the cursor";
    case VIEW_HEADS_ANSWER:
        return view_weight_span(m, &p0, &p1) ? "weight on the needle over the bookmarked span"
                                             : "weight on the needle over the answer";
    case VIEW_HEADS_QUESTION: return "weight on the question at the cursor";
    default: return view_metric_short(view_rate_metric(sort));
    }
}

void view_heads_order(const ViewModel *m, int sort, int asc, int *order) {
    int cells = m->n_layers * m->n_heads;
    Ranked *r = malloc((size_t)cells * sizeof *r);
    if (!r) { /* out of memory: the heads in (layer, head) order, still every one */
        for (int c = 0; c < cells; c++) order[c] = c;
        return;
    }
    for (int c = 0; c < cells; c++) r[c] = (Ranked){view_heads_value(m, sort, c, NULL, NULL), c, !asc};
    qsort(r, (size_t)cells, sizeof *r, by_rate);
    for (int c = 0; c < cells; c++) order[c] = r[c].cell;
    free(r);
}

int view_heads_page(int h) { return h > 4 ? h - 3 : 1; }

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Keep the row in range and on screen. */
static void settle(ViewHeads *hs, int cells, int page) {
    hs->row = clampi(hs->row, 0, cells - 1);
    if (hs->row < hs->top) hs->top = hs->row;
    if (hs->row >= hs->top + page) hs->top = hs->row - page + 1;
    hs->top = clampi(hs->top, 0, cells > page ? cells - page : 0);
}

/* A new order starts at its top: the row the highlight was on now holds another head. */
static void sort_by(ViewHeads *hs, int sort, int asc) {
    hs->sort = sort, hs->asc = asc;
    hs->row = hs->top = 0;
}

ViewHeadsKey view_heads_key(ViewHeads *hs, const ViewModel *m, int ch, int h, int *cell) {
    int cells = m->n_layers * m->n_heads, page = view_heads_page(h), sorts = view_heads_sorts(m);
    int cmd = view_key_command(ch);
    if (cmd == VIEW_OP_CLOSE || cmd == VIEW_ACT_HEADS) return VIEW_HEADS_CLOSE;
    switch (ch) {
    case KEY_UP: case 'k': hs->row--; break;
    case KEY_DOWN: case 'j': hs->row++; break;
    case KEY_PPAGE: hs->row -= page; break;
    case KEY_NPAGE: hs->row += page; break;
    case KEY_HOME: hs->row = 0; break;
    case KEY_END: hs->row = cells - 1; break;
    case KEY_LEFT: case 'h': sort_by(hs, (hs->sort + sorts - 1) % sorts, hs->asc); break;
    case KEY_RIGHT: case 'l': sort_by(hs, (hs->sort + 1) % sorts, hs->asc); break;
    case 'r': sort_by(hs, hs->sort, !hs->asc); break;
    case '\n': case '\r': case KEY_ENTER: {
        int *order = malloc((size_t)cells * sizeof *order);
        if (!order) return VIEW_HEADS_TAKEN;
        view_heads_order(m, hs->sort, hs->asc, order);
        *cell = order[clampi(hs->row, 0, cells - 1)];
        free(order);
        return VIEW_HEADS_CHOSEN;
    }
    default:
        if (ch >= '1' && ch < '1' + sorts) sort_by(hs, ch - '1', hs->asc);
        else return VIEW_HEADS_NOT_MINE;
    }
    settle(hs, cells, page);
    return VIEW_HEADS_TAKEN;
}

void view_heads_title(const ViewHeads *hs, const ViewModel *m, int ascii, char *buf, size_t n) {
    const char *dot = ascii ? "|" : DOT;
    char span[32];
    snprintf(buf, n, "heads by %s, %s first %s %s %s agree: %s vs oracle",
             view_heads_sort_name(m, hs->sort), hs->asc ? "lowest" : "highest", dot,
             view_rate_span(m, span, sizeof span), dot, view_pred_name(m->agree_pred));
}

/* The column names, the sorted one marked with the order's arrow. */
static void column_names(WINDOW *w, const ViewHeads *hs, const ViewModel *m, const ViewPalette *p, int wd) {
    int x = 1 + view_puts(w, 1, 1, wd - 2, "    #  head     ", p->ascii, A_DIM, 0), sorts = view_heads_sorts(m);
    for (int i = 0; i < sorts && x < wd - 1; i++) {
        char col[32];
        const char *arrow = i != hs->sort ? ""
                            : p->ascii    ? (hs->asc ? "^" : "v")
                                          : (hs->asc ? "\xe2\x96\xb2" : "\xe2\x96\xbc");
        int p0, p1;
        snprintf(col, sizeof col, "%d:%s%s", i + 1, arrow,
                 i == VIEW_HEADS_ANSWER && view_weight_span(m, &p0, &p1) ? "span" : COLUMNS[i]);
        int pad = col_w(i) - view_text_width(col, p->ascii);
        x += view_printf(w, 1, x, wd - 1 - x, p->ascii, i == hs->sort ? A_BOLD : A_DIM, 0, "%*s%s", pad > 0 ? pad : 0,
                         "", col);
    }
    view_printf(w, 1, x, wd - 1 - x, p->ascii, A_DIM, 0, "%8s", "n");
}

/* One head's row: rank, name, its five rates (n/a where none), positions decided. */
static void head_row(WINDOW *w, const ViewHeads *hs, const ViewModel *m, const ViewPalette *p, int y, int rank,
                     int cell, int wd) {
    int hi = rank == hs->row, sel = cell == m->sel_layer * m->n_heads + m->sel_head;
    attr_t base = hi ? A_REVERSE : A_NORMAL;
    view_fill(w, y, 1, wd - 2, L' ', base, 0);
    const char *mark = sel ? (p->ascii ? ">" : "\xe2\x96\xb8") : " ";
    int x = 1 + view_printf(w, y, 1, wd - 2, p->ascii, base, 0, "%s%4d  ", mark, rank + 1);
    char name[24];
    snprintf(name, sizeof name, "L%d H%d", cell / m->n_heads, cell % m->n_heads);
    x += view_printf(w, y, x, wd - 1 - x, p->ascii, base | A_BOLD, 0, "%-9s", name);
    int n = 0, sorts = view_heads_sorts(m);
    for (int i = 0; i < sorts && x < wd - 1; i++) {
        char v[24];
        int exact;
        double r = view_heads_value(m, i, cell, i == 0 ? &n : NULL, &exact);
        attr_t a = base | (i == hs->sort ? A_BOLD : 0) | (isnan(r) ? A_DIM : 0);
        if (i >= VIEW_RATE_COUNT) view_span_weight_text(&(ViewSpanWeight){r, exact, 1}, p->ascii, v, sizeof v);
        else if (isnan(r)) snprintf(v, sizeof v, "n/a");
        else snprintf(v, sizeof v, "%.1f%%", 100.0 * r);
        int pad = col_w(i) - view_text_width(v, p->ascii);
        x += view_printf(w, y, x, wd - 1 - x, p->ascii, a, 0, "%*s%s", pad > 0 ? pad : 0, "", v);
    }
    view_printf(w, y, x, wd - 1 - x, p->ascii, base | A_DIM, 0, "%8d", n);
}

void view_draw_heads(WINDOW *w, const ViewHeads *hs, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    char title[200];
    view_heads_title(hs, m, p->ascii, title, sizeof title);
    view_frame_box(w, p, title, 1);
    int cells = m->n_layers * m->n_heads, page = view_heads_page(h);
    int *order = malloc((size_t)cells * sizeof *order);
    if (!order) return;
    view_heads_order(m, hs->sort, hs->asc, order);
    column_names(w, hs, m, p, wd);
    for (int k = 0; k < page && hs->top + k < cells && 2 + k < h - 1; k++)
        head_row(w, hs, m, p, 2 + k, hs->top + k, order[hs->top + k], wd);
    free(order);
    char keys[160];
    snprintf(keys, sizeof keys,
             p->ascii ? " up/down row | 1-%d left/right sort | r reverse | Enter select | Esc q close "
                      : " \xe2\x86\x91\xe2\x86\x93 row " DOT " 1-%d \xe2\x86\x90\xe2\x86\x92 sort " DOT
                        " r reverse " DOT " Enter select " DOT " Esc q close ",
             view_heads_sorts(m));
    view_puts_fit(w, h - 1, 2, wd - 4, keys, p->ascii, A_DIM, 0);
}
