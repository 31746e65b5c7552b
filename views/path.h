/* path.h — which path carried the value: from the answer position (the
 * cursor), the routes answer → j → the needle through one intermediate
 * position j, head by head.
 *
 * Hop 1 is a head (l1, h1) at the answer position putting weight w1 on key
 * j; hop 2 a head (l2, h2) of an earlier layer (l2 < l1: what reaches
 * layer l1's input at j was written below it) putting weight w2 on the
 * marked positions (the needle, else the bookmarks) at j. The path's weight
 * is w1 · w2. Where j is itself on the needle the path is one hop (l2 -1,
 * w2 1): the head read the value there directly.
 *
 * The weights are the product of the recorded top-k weights (the trace's
 * far keys, `record --attn-top K`, or the exact row the app handed over for
 * the inspector where it is that head's): a lower bound, since the local
 * set's keys are never ranked and a full list leaves keys out. Attention
 * rollout would need every head's full rows at every position, which the
 * trace does not keep: the view says so rather than guess. Pure. */
#ifndef AHASCOPE_VIEW_PATH_H
#define AHASCOPE_VIEW_PATH_H

#include "views/view.h"

#define VIEW_PATH_TOP 12 /* paths listed, heaviest first */

typedef struct {
    int l1, h1;       /* hop 1: the head at the answer position */
    int j;            /* the position it reads */
    int l2, h2;       /* hop 2: the head at j reading the marks; -1 where j is marked (one hop) */
    double w1, w2, w; /* hop 1's weight on j, hop 2's on the marks, their product */
} ViewPath;

typedef struct {
    int pos;                    /* the answer position; -1 nothing under the cursor */
    ViewMarkKind kind;          /* what the paths end on; NONE: no needle and no bookmark */
    int n;                      /* paths found (at most VIEW_PATH_TOP kept) */
    ViewPath top[VIEW_PATH_TOP];
    int total;                  /* paths with a weight above 0, kept or not */
} ViewPaths;

/* Every path from the cursor's position to the marks, the heaviest
 * VIEW_PATH_TOP kept (ties: hop 1's head, then j, then hop 2's head). */
void view_paths(const ViewModel *m, ViewPaths *out);

/* The paths as the text pane shows them: a heading saying the method, then
 * a table (columns apart by two spaces or more, so `Y` reads it as CSV).
 * malloc'd; NULL out of memory. */
char *view_paths_text(const ViewModel *m, const ViewPaths *p);

#endif
