/* flips.h — the same head in the parent and the child run, graphically.
 *
 * After a re-evaluation (`w`, `t`, `T`, `P`, … on a live run, or the replay
 * of a child run once its recorded parent is read) the view holds both
 * runs over the same tokens (m->parent, views/pin.h). `X` lays a map of
 * every head over the middle of the screen, each cell shaded by how often
 * the head's executed gate changed between the parent and this run: the
 * share of the positions both decided (far keys there, t ≥ w + S in both)
 * where one went global and the other local. The arrows move the
 * selection over it, Enter selects the head and closes it, `X` or Esc
 * closes it. The timeline sets the selected head's gate in the parent
 * above its rows in this run (view_draw_parent_row): a row labelled `par`,
 * the parent's gate where the two runs agree, and where they differ `+`
 * (this run went global, the parent local) or `-` (the other way).
 *
 * Everything but the drawing is a pure function of the view model;
 * tests/test_flips.c recounts it.
 */
#ifndef AHASCOPE_VIEW_FLIPS_H
#define AHASCOPE_VIEW_FLIPS_H

#include "views/geom.h"
#include "views/palette.h"
#include "views/view.h"

/* The share of the positions both runs decided for cell where their
 * executed gates differ, over history indices [p0, p1) (clipped to both
 * runs); NAN when no position counts. *n_out (may be NULL) gets how many
 * positions counted. */
double view_flip_share(const ViewModel *m, int cell, int p0, int p1, int *n_out);

/* X: open or close the map; without a parent run, say how to get one. */
void view_flips_toggle(ViewModel *m);

/* A key while the map is open: the arrows (hjkl) move the selection,
 * Enter selects and closes, X and Esc close. 1 when the key was the map's. */
int view_flips_key(ViewModel *m, int ch);

/* Draw the map into w (its window, sized by view_pattern_rect). */
void view_draw_flips(WINDOW *w, const ViewModel *m, const ViewPalette *p);

/* The timeline's row of the selected head's gate in the parent run, on the
 * columns g shows (g->y_par), its flips marked. */
void view_draw_parent_row(WINDOW *w, const ViewModel *m, const ViewPalette *p, const ViewTimeGeom *g);

#endif
