/* layout.h — where each pane of the TUI goes, as a pure function of the
 * terminal size and a few options. Drawing, mouse hit-tests and the tests all
 * call the same function, so what is drawn and what is clicked agree.
 *
 * Screen, top to bottom:  header (1 line) · token stream · a middle band with
 * the layer×head heatmap on the left and the per-layer bars on the right ·
 * the head inspector band (when open and there is room; otherwise it takes
 * the bars' place) · the timeline (or the SQL result pane when open) ·
 * the metric legend (1 line) · the key bar (1 line, taken from the timeline
 * while the timeline keeps its minimum height: a tiny screen drops it first)
 * · the status line (1 line). Tiled panes never
 * overlap and together cover the whole screen; the help overlay is the one
 * rectangle drawn on top of the others.
 */
#ifndef AHASCOPE_VIEW_LAYOUT_H
#define AHASCOPE_VIEW_LAYOUT_H

#define VIEW_MIN_COLS 80
#define VIEW_MIN_ROWS 24

/* The help overlay's width: the most the minimum screen leaves it, on
 * every screen, so a help line that fits there fits everywhere. */
#define VIEW_HELP_W (VIEW_MIN_COLS - 4)

/* The heatmap's cells, shared by the layout (which sizes its pane) and the
 * geometry inside it (views/geom.h). Cells grow with the terminal: up to
 * VIEW_HEAT_MAX_CW columns and VIEW_HEAT_MAX_RH lines per head cell. */
#define VIEW_HEAT_LABEL_W 4 /* "L15 " left of the cells */
#define VIEW_HEAT_MAX_CW 12
#define VIEW_HEAT_MAX_RH 8

typedef enum {
    VIEW_PANE_HEADER,
    VIEW_PANE_TOKENS,
    VIEW_PANE_HEATMAP,
    VIEW_PANE_BARS,
    VIEW_PANE_INSPECTOR,
    VIEW_PANE_TIMELINE,
    VIEW_PANE_SQL,
    VIEW_PANE_LEGEND,
    VIEW_PANE_STATUS,
    VIEW_PANE_KEYBAR, /* the panes and their keys, one line over the status line */
    VIEW_PANE_COUNT,
    VIEW_PANE_NONE = -1
} ViewPane;

/* A rectangle in screen cells; w or h of 0 means "not shown". */
typedef struct {
    int x, y, w, h;
} ViewRect;

typedef struct {
    int n_layers, n_heads; /* model shape: sizes the heatmap */
    int inspector;         /* head inspector open */
    int sql;               /* SQL result pane open (takes the timeline's place) */
    int half_blocks;       /* ▀ cells are available (UTF-8 and colour) */
    int help_lines;        /* lines of the `?` help (the key table's view_help_count): the
                              overlay's height inside its border. Handed in, so the layout
                              stays a function of its inputs and reads no table */
    int keybar;            /* a line for the key bar (view_layout_opts: always) */
} LayoutOpts;

typedef struct {
    int cols, rows;
    int too_small;                  /* below VIEW_MIN_COLS × VIEW_MIN_ROWS: nothing else set */
    ViewRect pane[VIEW_PANE_COUNT]; /* tiled panes; hidden ones are all zero */
    ViewRect help;                  /* the help overlay, centred over the rest: its help_lines
                                       inside its border, or rows - 2 lines */
} Layout;

/* Compute the pane rectangles for a cols×rows terminal. Pure: same inputs,
 * same output; never fails (a terminal below the minimum sets too_small). */
void view_layout(int cols, int rows, const LayoutOpts *opts, Layout *out);

/* 1 if the rectangle is shown and (x, y) lies inside it. */
int view_rect_has(const ViewRect *r, int x, int y);

/* Short name of a pane ("heatmap", …) for titles and messages. */
const char *view_pane_name(ViewPane p);

#endif
