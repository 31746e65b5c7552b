/* draw.h — one drawing function per pane. Each erases nothing outside its
 * window, draws the whole pane (border and title included) from the view
 * model into the given WINDOW, and never refreshes: view_frame (screen.h)
 * batches every pane with wnoutrefresh and one doupdate. The window's size
 * is the pane's rectangle from view_layout; any size is drawn without
 * writing outside it, so tests can draw into off-screen windows.
 */
#ifndef AHASCOPE_VIEW_DRAW_H
#define AHASCOPE_VIEW_DRAW_H

#include "views/palette.h"
#include "views/view.h"

/* Header line: model, policy, window, sinks, τ, θ, position/context, tok/s,
 * global share and keys read so far, recording target (low-priority fields
 * are dropped when narrow). */
void view_draw_header(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* Token stream: wrapped text, each token tinted by the selected head's
 * metric (or the share of heads global), the cursor token highlighted. */
void view_draw_tokens(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* Layer × head heatmap of the current metric at the cursor token; half-
 * blocks put two layers on a line when rows are short; the selected cell is
 * outlined. */
void view_draw_heatmap(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* Timeline: rows (layer, head), columns tokens around the cursor. */
void view_draw_timeline(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* Per-layer global rate up to the cursor, AHA's bar beside the oracle's. */
void view_draw_bars(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* Head inspector: sparklines of router score, oracle mass, qada, qada_bulk
 * for the selected head, each predictor's verdict at the cursor token with
 * its threshold (views/explain.h), and the attention strip there. */
void view_draw_inspector(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* The text pane (SQL results, plots) under m->sql_title: the pinned header
 * lines, then the rest from line m->sql_scroll, all from column m->sql_hscroll. */
void view_draw_sql(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* One-line legend of the current metric with its colour scale. */
void view_draw_legend(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* Status line: the transient message or the keys that matter now, and the
 * play state. */
void view_draw_status(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* The key bar: the panes' keys and names from the key table (? help,
 * H heads, E every head, A pattern, …, q quit), whole entries that fit the
 * width, the rest dropped from the right (keymap.h, view_keybar_fit). */
void view_draw_keybar(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* The `?` help overlay in its own window: the key table's help lines from
 * m->help_scroll on; where some are hidden, its edges say which lines show
 * and which keys scroll to the rest. */
void view_draw_help(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* The one-line "enlarge to 80×24" message of a too-small terminal. */
void view_draw_too_small(WINDOW *w, const ViewPalette *p, int cols, int rows);

#endif
