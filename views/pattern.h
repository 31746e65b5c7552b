/* pattern.h — the attention-pattern view: one head's query positions ×
 * key positions over the run so far, drawn over the middle of the screen.
 *
 * The app hands the data over as a square grid of max-pooled weights (bin
 * positions a cell; engine/attn_pattern.h computes it from a live
 * session's cached queries and keys) or has it built from what a run
 * recorded (view_pattern_from_recorded: the top-k far keys of each head,
 * an approximation the title says). The view owns only its zoom and pan.
 * Everything but the drawing is pure: the geometry (view_pattern_geom),
 * each screen cell's pooled value (view_pattern_cell) and each row's mark
 * (view_pattern_row_mark) are what tests/test_pattern.c checks.
 *
 * On screen each cell pools rq query positions × rk key positions, their
 * largest weight (shaded by its square root, so the small weights of a
 * long context still show); + and - halve and double them, the arrows
 * pan. Left of each row: its first position and a mark, g where the head
 * went global at one of its positions, l where it stayed local, - where
 * there was no choice (t < window + sinks). The window's edge is drawn in
 * each row, the sinks on the key axis (and a task item's needle ◆ and
 * question ?, ASCII N and Q), and the cursor token's row is
 * marked, its heaviest keys ranked in it and named on the last line.
 */
#ifndef AHASCOPE_VIEW_PATTERN_H
#define AHASCOPE_VIEW_PATTERN_H

#include "views/palette.h"
#include "views/view.h"

#define VIEW_PATTERN_TOP 5        /* the cursor row's keys named on the last line */
#define VIEW_PATTERN_MAX_CELLS 1024 /* data cells a side at most: longer runs come pooled */
#define VIEW_PATTERN_MAX_CW 3     /* columns a key takes at most when the run is short */

typedef struct ViewPattern {
    int open;
    int layer, head;  /* whose pattern the data is */
    int n;            /* positions covered: queries and keys 0 … n-1 */
    int bin, nb;      /* positions per data cell; cells a side (ceil(n / bin)) */
    float *w;         /* [nb * nb] by query bin: largest weight in the cell, -1 no key (owned) */
    int recorded;     /* built from recorded top-k far keys: the window's keys are not there */
    int unranked;     /* recorded, but the run ranked no far key (recorded without --attn-top) */
    int window, sinks;
    int zoom;         /* 0: the whole run fits; each step halves the positions a cell */
    int q0, k0;       /* pan: the first query and key position shown */
    int focus_q, focus_k; /* what + and - zoom about (view_pattern_focus): the cursor's row, its heaviest key */
    int centred;      /* + or - pressed, no pan since: the geometry centres on the focus, so a
                       * zoom pressed before the data (or the cursor row's keys) arrived still lands there */
} ViewPattern;

/* What the grid and the cursor's line say for a run that ranked no far key. */
#define VIEW_PATTERN_UNRANKED "this run recorded no far keys: record --attn-top K"

/* Where things go inside the pattern's window (border included). */
typedef struct {
    int label_w;        /* position label and mark, left of the grid */
    int gx, gy, gw, gh; /* the grid's room */
    int rq, rk;         /* positions a screen cell pools: query rows, key columns */
    int cw;             /* columns a key column takes: more than 1 when few keys would leave the room empty */
    int q0, k0;         /* first query and key position shown (pan, clamped) */
    int rows, cols;     /* grid rows and columns holding positions */
    int axis_y, info_y; /* the key axis line; the cursor row's line */
} ViewPatternGeom;

/* The overlay's rectangle in a layout: every column, from under the token
 * stream to the legend; w 0 when the screen is too small. */
ViewRect view_pattern_rect(const Layout *lay);

/* Lay the view out in a w × h window. Pure. */
void view_pattern_geom(const ViewPattern *p, int w, int h, ViewPatternGeom *g);

/* The title: "pattern L3 H5 · 1 cell = 4x2 pos, max", then the zoom and,
 * for recorded data, that it is approximate. */
void view_pattern_title(const ViewPattern *p, const ViewPatternGeom *g, char *buf, size_t n);

/* The value of grid cell (row r, column c; on screen at gx + c·cw): the largest weight of the
 * query positions q0 + r·rq … and key positions k0 + c·rk … it pools; -1
 * where no key precedes a query there or the cell lies past the data. */
float view_pattern_cell(const ViewPattern *p, const ViewPatternGeom *g, int r, int c);

/* The mark of query positions [qa, qb) of the pattern's head: 'g' if it
 * went global at any, 'l' if it decided and never went global, '-' if no
 * position had a choice (t < window + sinks), 'f' for a fixed-local head
 * (its layer's own window, views/fixed.h), ' ' when nothing is known. */
char view_pattern_row_mark(const ViewModel *m, int layer, int head, int qa, int qb);

/* The key axis's mark for key positions [k0, k1): ? (ASCII Q) where a task
 * item's question lies, ◆ (ASCII N) where its needle does, else ' '. */
wchar_t view_pattern_axis_mark(const ViewModel *m, int k0, int k1, int ascii);

/* Build the data from the traces m holds: each position's recorded far
 * keys (top_pos/top_w) of (layer, head), pooled as VIEW_PATTERN_MAX_CELLS
 * allows; recorded is set. -1 with e set when out of memory. */
int view_pattern_from_recorded(ViewPattern *p, const ViewModel *m, int layer, int head, int window, int sinks,
                               Err *e);

/* Take over grid w (nb = ceil(n / bin) a side, owned from now on) as the
 * data of (layer, head); the old data is freed. */
void view_pattern_set(ViewPattern *p, int layer, int head, int n, int bin, float *w, int window, int sinks);

/* Positions a data cell pools for a run of n positions, so that no grid
 * holds more than VIEW_PATTERN_MAX_CELLS cells a side. */
int view_pattern_bin(int n);

/* A key while the view is open in a w × h window: + - zoom about
 * (focus_q, focus_k), which stays mid-grid where the run allows (0, 0, the
 * zero value: the top-left), arrows and hjkl pan, Home back to the whole
 * run. Returns 1 when the key was the view's. */
int view_pattern_key(ViewPattern *p, int ch, int w, int h);

/* The key axis's label of key position k: its number, and where a column
 * is one key (rk 1) the token's text after a dot, up to
 * VIEW_PATTERN_AXIS_TEXT columns ("140·The"). Returns its width. */
#define VIEW_PATTERN_AXIS_TEXT 8
int view_pattern_axis_label(const ViewModel *m, const ViewPatternGeom *g, int k, int ascii, char *buf, size_t n);

/* Aim the zoom at the cursor: focus_q its position, focus_k its heaviest
 * key (the exact row when the app handed this head's over, else the
 * recorded top-k; none known: the cursor's own position). */
void view_pattern_focus(ViewPattern *p, const ViewModel *m);

/* 1 when grid cell (r, c) lies in the local set of its rows' queries
 * (keys within `window` of one of them): drawn as the window band where
 * no weight shows there. */
int view_pattern_in_band(const ViewPattern *p, const ViewPatternGeom *g, int r, int c);

/* Free the data and close. */
void view_pattern_free(ViewPattern *p);

/* Draw the view into w (its window, sized by view_pattern_rect). */
void view_draw_pattern(WINDOW *w, const ViewPattern *pt, const ViewModel *m, const ViewPalette *p);

#endif
