/* pin.h — one head through time and against another.
 *
 * Through time: `f` puts the cursor on the first position where the
 * selected head's executed gate went global, `}` and `{` on the next and
 * previous one, `F` on the next one the oracle says was needed (its mass
 * outside the window above θ: view_oracle_decision, the rule `n` and `N`
 * compare against), and `^` on the first position the oracle says it
 * needed the far context, whether or not the gate read it. The status line
 * says what was found ("L3 H1 first global at pos 212") or that nothing
 * was ("no later global for L3 H1").
 *
 * Against another: `x` pins the selected head; the inspector then gives it
 * a line with its values at the cursor (`pin L2 H0 · global · router 0.54 ·
 * oracle 21% needed`) and the timeline a row of its own above the others.
 * After a re-evaluation (`w`, `t`, `T`, `P` on a live run) the app keeps the
 * run it came from as the parent (same tokens, other settings), and the
 * inspector sets the selected head's gate and router score there beside
 * this run's (`parent run 1: local · router 0.31 → this run: global ·
 * router 0.54`).
 *
 * Everything but the two drawing functions is a pure function of the view
 * model; tests/test_pin.c recounts them.
 */
#ifndef AHASCOPE_VIEW_PIN_H
#define AHASCOPE_VIEW_PIN_H

#include <stddef.h>

#include "views/geom.h"
#include "views/palette.h"
#include "views/view.h"

/* The history index after (dir 1) or before (dir -1) index from where the
 * executed gate of cell went global, and with needed where the oracle also
 * says the far context was needed; from -1 with dir 1 finds the first. -1
 * when there is none (positions without a choice never count). */
int view_seek_global(const ViewModel *m, int cell, int from, int dir, int needed);

/* The first history index where the oracle says cell needed its far keys
 * (mass outside the window above θ), whatever its gate did; -1 if none. */
int view_seek_needed(const ViewModel *m, int cell);

/* f } { F ^ (op a ViewOp of keymap.h): move the cursor to the selected
 * head's first, next or previous global, its next needed global, or the
 * first position it needed the far context (naming its gate there), and
 * say on the status line what was found, or that nothing was (the cursor
 * then stays). */
void view_seek_op(ViewModel *m, int op);

/* x: pin the selected head; pressed on the pinned head, unpin it. */
void view_pin_toggle(ViewModel *m);

/* The pinned head's cell (layer * n_heads + head), or -1. */
int view_pin_cell(const ViewModel *m);

/* Set the history on screen aside as the parent of the run about to
 * replace it, labelled label ("run 1"; "" for a run not recorded),
 * dropping any parent before; the history is left empty, as
 * view_clear_history leaves it. */
void view_keep_parent(ViewModel *m, const char *label);

/* Begin a parent run read from elsewhere (a replay reads the recorded
 * parent of the run it shows), labelled label, dropping any before; it is
 * empty until view_push_parent appends its positions. */
void view_parent_begin(ViewModel *m, const char *label);

/* Append t (owned from now on, freed even on error) as the parent's next
 * position; -1 with e set on a shape that is not the model's or no memory. */
int view_push_parent(ViewModel *m, StepTrace *t, Err *e);

/* How many positions from 0 hold the same token in this run and the one
 * held beside it (m->parent): all both have for a re-evaluation; for a run
 * chosen in B (m->parent.other) the prefix the two texts share, the only
 * positions X, the `par` row and view_flip_share compare. */
int view_parent_common(const ViewModel *m);

/* The run held beside this one as titles name it: "parent run 1", or
 * "run 3" when it was chosen in B (titles put "vs" before it). */
const char *view_parent_name(const ViewModel *m, char *buf, size_t n);

/* The parent run's trace at history index i, or NULL. */
const StepTrace *view_parent_trace(const ViewModel *m, int i);

/* The forms of view_head_text: with the values' names ("router", "needed")
 * and with the oracle's mass. */
enum { VIEW_HEAD_WORDS = 1, VIEW_HEAD_ORACLE = 2 };

/* One head's decision at t in words: "global · router 0.541 · oracle 21%
 * needed" (form VIEW_HEAD_WORDS | VIEW_HEAD_ORACLE), "global 0.541 ·
 * oracle 21%" (VIEW_HEAD_ORACLE), "global · router 0.541" (VIEW_HEAD_WORDS)
 * or "global 0.541" (0). The score carries the decimals that tell it from
 * τ; a position without far keys reads "no choice", a fixed-local head
 * "fixed-local (layer window 512)" ("fixed w512" without VIEW_HEAD_WORDS),
 * values not computed are left out. */
void view_head_text(const ViewModel *m, const StepTrace *t, int cell, int form, char *buf, size_t n);

/* The inspector line of the pinned head at the cursor, and the line of
 * the selected head in the parent run beside this one: the full form when
 * it fits in max_w columns, else a briefer one. 0 when there is no such
 * line (nothing pinned, no parent). The parent's line gives both runs'
 * oracle mass where it differs (the same tokens, but another local set, or
 * the gates of the layers below changed the stream the head reads),
 * saying which where it fits. */
int view_pin_line(const ViewModel *m, int max_w, char *buf, size_t n);
int view_parent_line(const ViewModel *m, int max_w, char *buf, size_t n);

/* Why a parent's oracle mass differs from its child's, in the parent's
 * line: the same local set read another input (a layer above the first),
 * or the local set itself changed (another window or sinks). */
#define VIEW_PARENT_ORACLE_WHY "gates below changed its input"
#define VIEW_PARENT_ORACLE_WHY_LOCAL "its local set changed"

/* Lines the inspector gives to the pinned head and the parent run (0-2). */
int view_aside_count(const ViewModel *m);

/* 1 if line y of the inspector is one of g's aside lines. */
static inline int view_insp_aside_row(const ViewInspGeom *g, int y) {
    return g->n_aside > 0 && y >= g->y_aside && y < g->y_aside + g->n_aside;
}

/* Draw the inspector's aside lines (geometry g, pane width wd). */
void view_draw_aside(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewInspGeom *g, int wd);

/* Draw the timeline's pinned row, labelled `pin`, on the columns g shows. */
void view_draw_pin_row(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewTimeGeom *g);

#endif
