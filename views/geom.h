/* geom.h — where things sit inside a pane: heatmap cells, timeline rows and
 * columns, wrapped tokens, bar lines, sparkline columns. Pure functions of
 * the view model and the pane size, shared by drawing and hit-testing so a
 * click lands on what was drawn. Coordinates are window-local (0,0 is the
 * pane's top-left corner, on its border).
 */
#ifndef AHASCOPE_VIEW_GEOM_H
#define AHASCOPE_VIEW_GEOM_H

#include "views/view.h"

typedef struct {
    int half;        /* two layers per text line (▀ half-blocks) */
    int cw, gap;     /* columns per head cell; 1 when a gap column separates cells */
    int rh;          /* text lines per layer (1 with half-blocks) */
    int x0, y0;      /* window position of the first visible cell */
    int lines;       /* text lines available for cells */
    int first_layer, n_layers_vis;
    int first_head, n_heads_vis;
} ViewHeatGeom;

typedef struct {
    int half;            /* two (layer, head) rows per text line */
    int x0, y0;          /* window position of the first visible cell */
    int n_cols, lines;   /* token columns and text lines available */
    int bin;             /* positions per column (view_time_bin): 1 until the run outgrows the columns */
    int first_tok, n_tok_vis; /* the first column's first position; columns shown */
    int first_row, n_rows_vis; /* row = layer * n_heads + head (a layer in per-layer mode) */
    int y_pin;           /* the pinned head's row (views/pin.h), above the others; 0: none */
    int y_par;           /* the selected head's row in the parent run (views/flips.h); 0: none */
} ViewTimeGeom;

typedef struct {
    int y0, first_layer, n_layers_vis;
    int rh;             /* lines per layer: more than 1 where the pane has them for every layer */
    int label_w, bar_w; /* "L15 " and each of the two bars */
} ViewBarsGeom;

typedef struct {
    /* sparkline columns: positions 0 … n_pos-1 (the cursor's) in n_tok_vis
     * columns, pooled in even bins (view_bin_lo) when they outnumber them,
     * as the attention strip is */
    int x0, n_cols, first_tok, n_tok_vis, n_pos;
    int y_spark, y_strip;                 /* first sparkline line; attention strip line */
    int x_text, text_w;                   /* verdicts (views/explain.h): beside the sparklines, or stacked */
    int stacked;   /* too narrow for both: the verdicts take the sparklines' lines (n_cols 0) */
    int n_text;    /* verdict lines shown from y_spark on */
    int y_list, n_list; /* the ranked far positions, one per line, under the strip's axis (0: no room) */
    /* The pinned head's and the parent run's lines (views/pin.h): above the
     * far list when it has room, else in place of the last predictors'
     * rows above the strip, which are then not drawn. n_aside 0: none. */
    int y_aside, n_aside;
} ViewInspGeom;

typedef struct {
    int iw, ih;        /* token text: columns and lines (below the top border) */
    int first_pos;     /* the position the text is laid out from (view_tok_first_pos) */
    int first_line;    /* first wrapped line shown, counted from first_pos (the cursor stays in view) */
    int y_strip;       /* the surprise strip's line (-log p per position), 0: not shown */
    int x0, n_cols;    /* strip glyph columns, after its label */
    int first_tok, n_tok_vis;
    int x_text, text_w; /* the cursor's -log p and entropy, right of the strip */
} ViewTokGeom;

typedef struct {
    size_t from, to;      /* bytes of the input line shown: whole characters */
    int more_left, more_right; /* text hidden before / after the span: its edge column holds a mark */
    int text_x;           /* column of byte `from`, after the left mark if any */
    int cursor_x;         /* column of the cursor: on its character, or just past the text at the end */
} ViewInputGeom;

typedef struct {
    int y0, n_rows;     /* first line inside the border; lines shown */
    int first, n_lines; /* the first help line shown; lines in all (view_help_count) */
    int head_x, head_w; /* a section heading */
    int key_x, key_w;   /* a line's keys */
    int text_x, text_w; /* what they do */
} ViewHelpGeom;

/* Token pane geometry in a w×h pane: the wrapped text, and from 3 inner
 * lines up a one-line strip of -log p per position on the last line. */
void view_tok_geom(const ViewModel *m, int w, int h, ViewTokGeom *g);

/* Heatmap geometry in a w×h pane; half_ok allows half-blocks. The visible
 * window of layers/heads follows the selection when not all fit. */
void view_heat_geom(const ViewModel *m, int w, int h, int half_ok, ViewHeatGeom *g);

/* Timeline geometry in a w×h pane: one position a column, scrolling with
 * the cursor, while the run fits; past that, the whole run in bins of
 * view_time_bin positions a column. Rows scroll with the selected head.
 * A pinned head takes the first line, when the pane has three. */
void view_time_geom(const ViewModel *m, int w, int h, int half_ok, ViewTimeGeom *g);

/* Positions a timeline column holds for n_pos positions in n_cols columns:
 * 1 when they fit, else the least power of two that fits them all (a power
 * of two, so a growing run's bins keep their bounds until the next doubling). */
int view_time_bin(int n_pos, int n_cols);

/* Per-layer bars geometry in a w×h pane. */
void view_bars_geom(const ViewModel *m, int w, int h, ViewBarsGeom *g);

/* Cells inside the tiled panes of lay that nothing is drawn on: the
 * heatmap's beyond its labels and cells, the bars' and the timeline's lines
 * below their last layer or row (the timeline's columns fill as the run
 * grows and count as used; the text panes' emptiness is their text's). A
 * pure function of the model's shape and selection, for the layout's tests. */
long view_unused_cells(const ViewModel *m, const Layout *lay, int half_ok);

/* Head inspector geometry in a w×h pane: the verdicts take the right of
 * the pane when it is wide enough, the sparklines and strip what is left;
 * in a narrow pane the verdicts replace the sparklines, above the strip.
 * A pinned head and a parent run get a line each (view_aside_count). */
void view_insp_geom(const ViewModel *m, int w, int h, ViewInspGeom *g);

/* The part of the input line (m->input) shown in `width` columns, the
 * cursor's cell included: all of it when it fits, else whole characters
 * around the cursor, up to a third of the columns after it, with a mark at
 * each edge where text is hidden. Costs O(width), not O(line), so a 16 MiB
 * prompt edits as fast as a short one. */
void view_input_geom(const ViewModel *m, int width, int ascii, ViewInputGeom *g);

/* The `?` help in a w×h window: the key table's help lines from
 * m->help_scroll on, never past the last screenful, keys in a column of
 * their own. */
void view_help_geom(const ViewModel *m, int w, int h, ViewHelpGeom *g);

/* 1 when the open help holds more lines than it shows (or its size is not
 * known yet): the scroll keys then scroll it rather than close it. */
int view_help_scrolls(const ViewModel *m);

/* First of the n positions in column c of n_cols: one position per column
 * when they fit, else even bins. The inspector's rows and strip share it. */
int view_bin_lo(int c, int n, int n_cols);

/* First visible column of a token strip n_cols wide, keeping the cursor in
 * view (centred, or at the right edge when on the newest token). */
int view_first_col(int cursor, int n_total, int n_cols);

/* Lay token i out after position (*x, *y) in a stream iw columns wide: the
 * token starts at (*sx, *sy), is *width columns wide, and (*x, *y) moves past
 * it (to the next line after a newline token). */
void view_tok_place(const ViewModel *m, int i, int iw, int *x, int *y, int *sx, int *sy, int *width);

/* The position a token pane of iw×ih inner cells lays its text out from:
 * 0 while the run holds at most twice the positions the pane has cells,
 * else the start of the block of iw×ih positions before the cursor's, so a
 * frame lays out at most three blocks however long the run, the lines
 * above the cursor stay full, and the text stands still while the cursor
 * moves inside its block. */
int view_tok_first_pos(const ViewModel *m, int iw, int ih);

/* First wrapped line shown in a token pane with iw×ih inner cells, its text
 * laid out from position from, so that the cursor token stays in view. */
int view_tok_first_line(const ViewModel *m, int from, int iw, int ih);

#endif
