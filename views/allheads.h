/* allheads.h — every head at the cursor (`E`): one small row of attention per
 * head for the cursor token, laid out layer × head, so a head that puts its
 * weight on one far key (a retrieval head copying the needle) stands out
 * without guessing which to select. Drawn over the middle of the screen
 * (view_pattern_rect's rectangle); a view-only overlay like `X`'s map.
 *
 * Each strip pools the keys 0 … pos of the cursor token into its columns,
 * a column's shade the largest weight there (by its square root, as the
 * pattern view does). The weights are what the trace holds: each head's
 * top-k far keys, or the exact row the app handed over for the selected
 * head (ViewModel.attn). The local set's keys are never ranked, so columns
 * wholly inside it draw the window band (┆, ASCII :) rather than a weight
 * the view does not know. Arrows (hjkl) move the selected head, [ ] the
 * cursor as anywhere, Enter selects and closes, E and Esc close. Everything
 * but the drawing is pure (tests/test_views_allheads.c). */
#ifndef AHASCOPE_VIEW_ALLHEADS_H
#define AHASCOPE_VIEW_ALLHEADS_H

#include "views/palette.h"
#include "views/view.h"

#define VIEW_ALLHEADS_NONE (-1.0f) /* a strip column with no key, or no weight known */
#define VIEW_ALLHEADS_BAND (-2.0f) /* a column wholly in the local set: its weights are not ranked */

/* Where things go inside the overlay's window (border included). */
typedef struct {
    int label_w;   /* "L15 " left of each layer's row */
    int cw, sw;    /* columns a head takes (its strip and a gap), its strip's */
    int l0, nl;    /* the first layer shown and how many */
    int h0, nh;    /* the first head shown and how many */
    int gy;        /* the line of the first layer's row */
    int lines;     /* lines a layer takes: 2 when every layer fits so, the second naming each head's heaviest key */
} ViewAllHeadsGeom;

/* Lay the overlay out in a w × h window: every head if each gets two
 * columns, else a span of heads round the selected one; the layers that
 * fit, round the selected one. Pure. */
void view_allheads_geom(const ViewModel *m, int w, int h, ViewAllHeadsGeom *g);

/* Head cell's strip at trace t, sw columns over keys 0 … t->pos: out[i]
 * the largest weight in column i, VIEW_ALLHEADS_NONE or VIEW_ALLHEADS_BAND.
 * Returns 1 when the weights are the exact row, 0 recorded top-k. */
int view_allheads_strip(const ViewModel *m, const StepTrace *t, int cell, int sw, float *out);

/* Open or close the overlay. */
void view_allheads_toggle(ViewModel *m);

/* A key while the overlay is open: 1 when it was the overlay's (arrows,
 * Enter, E, Esc), 0 for any other, which keeps its meaning. */
int view_allheads_key(ViewModel *m, int ch);

/* Draw the overlay into w (its window). */
void view_draw_allheads(WINDOW *w, const ViewModel *m, const ViewPalette *p);

#endif
