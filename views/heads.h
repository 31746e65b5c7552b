/* heads.h — the heads sorted by a run rate (`H`): one row a head, with its
 * five rates over the run so far (views/rates.h) and the positions its gate
 * decided, drawn over the middle of the screen.
 *
 * The rows are sorted by one rate, highest first or lowest first; heads
 * where that rate is n/a come last either way, and ties keep (layer, head)
 * order, as `ORDER BY rate DESC, layer, head` over the store's views would.
 * The rates come from counts kept as steps arrive, so sorting costs
 * O(heads log heads) a frame however long the run: nothing waits on it.
 * Inside the pane ↑↓ (jk) PgUp PgDn Home End move the highlighted row, 1-5
 * (1-8 with marks) pick the column sorted by, ←→ (hl, < >) the previous / next one, r flips
 * the order (a new order shows from its top), Enter selects the row's head (the app closes the pane), H and
 * Esc close it. Everything but the drawing is pure (tests/test_heads.c).
 */
#ifndef AHASCOPE_VIEW_HEADS_H
#define AHASCOPE_VIEW_HEADS_H

#include "views/palette.h"
#include "views/rates.h"
#include "views/view.h"

typedef struct ViewHeads {
    int open;
    int sort; /* the rate sorted by: 0 … VIEW_RATE_COUNT - 1, VIEW_RATE_METRICS' order */
    int asc;  /* lowest first (else highest first) */
    int row;  /* the highlighted row, 0 the top of the order */
    int top;  /* the first row shown */
} ViewHeads;

/* With a needle or bookmarks marked (views/needle.h) three more columns
 * follow the rates, sortable as 6-8: the weight on the needle at the
 * cursor, its mean over the answer's positions (or over a span chosen
 * between two bookmarks), the weight on the question. */
#define VIEW_HEADS_WEIGHTS 3
#define VIEW_HEADS_NEEDLE VIEW_RATE_COUNT
#define VIEW_HEADS_ANSWER (VIEW_RATE_COUNT + 1)
#define VIEW_HEADS_QUESTION (VIEW_RATE_COUNT + 2)

/* Columns the pane sorts by: the rates, and the weights when marks exist. */
int view_heads_sorts(const ViewModel *m);

/* Head cell's value in column `sort`: a run rate (*n its positions), or a
 * weight on the marks (*exact 0 for a lower bound); NAN when unknown. n and
 * exact may be NULL. */
double view_heads_value(const ViewModel *m, int sort, int cell, int *n, int *exact);

/* What column `sort` holds, as the title names it (column 7 is the
 * bookmarked span's, needle.h's view_weight_span, when there is one). */
const char *view_heads_sort_name(const ViewModel *m, int sort);

/* What view_heads_key did with a key. */
typedef enum { VIEW_HEADS_NOT_MINE, VIEW_HEADS_TAKEN, VIEW_HEADS_CHOSEN, VIEW_HEADS_CLOSE } ViewHeadsKey;

/* Fill order[0 … n_layers·n_heads) with every head's cell index (layer ·
 * n_heads + head), sorted by run rate `sort` as the pane shows them. */
void view_heads_order(const ViewModel *m, int sort, int asc, int *order);

/* Rows of heads a window h lines high shows (border, column names and
 * hint line taken off). */
int view_heads_page(int h);

/* A key while the pane is open in a window h lines high: TAKEN when it
 * moved the row or changed the sort, CHOSEN with *cell the highlighted
 * row's head for Enter, CLOSE for H and Esc, NOT_MINE for any other key
 * (it keeps its meaning). */
ViewHeadsKey view_heads_key(ViewHeads *hs, const ViewModel *m, int ch, int h, int *cell);

/* The pane's title: what it sorts by, which way, over which positions,
 * and whose agreement the last column is. */
void view_heads_title(const ViewHeads *hs, const ViewModel *m, int ascii, char *buf, size_t n);

/* Draw the pane into w (its window: view_pattern_rect's rectangle). */
void view_draw_heads(WINDOW *w, const ViewHeads *hs, const ViewModel *m, const ViewPalette *p);

/* What `y`, `Y` and `S` keep of the pane, the whole table, is views/keep.h's. */

#endif
