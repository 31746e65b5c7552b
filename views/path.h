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
 * Two ways, named on screen. (a) The product of the recorded top-k
 * weights (the trace's far keys, `record --attn-top K`, or the exact row
 * the app handed over for the inspector where it is that head's): a lower
 * bound, since the local set's keys are never ranked and a full list leaves
 * keys out. (b) Where the app has every head's full rows (a live run: the
 * worker computes them from the cached queries and keys, each head as if
 * it went global, engine/attn_pattern.h), the same paths exactly, and
 * attention rollout (Abnar & Zuidema): each layer's rows averaged over its
 * heads, mixed half and half with the identity for the residual stream,
 * multiplied down the layers; the share of the answer's rollout on the
 * marks, and through each head at the answer its row times the rollout of
 * the layers below it. A replay has no queries: the view says so. Pure. */
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

/* Every head's full attention rows over positions 0 … n-1: the weight
 * query q of head cell (layer · n_heads + head) gives key k at
 * w[((size_t)cell * n + q) * n + k] (k > q: none, any value below 0). */
typedef struct {
    int n;
    const float *w;
} ViewRows;

/* (b): the exact paths from full rows, and the rollout. */
typedef struct {
    ViewPaths exact;  /* the same paths as view_paths, from full rows (every key) */
    double total;     /* the answer's rollout on the marks, all layers */
    double *via;      /* [cells] through each head at the answer: its row · the rollout below its layer (owned) */
} ViewRollout;

/* Fill out from rows (which must cover the cursor's position); -1 when
 * they do not, nothing is marked, or memory ran out (out->via NULL). */
int view_rollout(const ViewModel *m, const ViewRows *rows, ViewRollout *out);
void view_rollout_free(ViewRollout *r);

/* The paths as the text pane shows them: a heading saying the method, then
 * a table (columns apart by two spaces or more, so `Y` reads it as CSV);
 * r (may be NULL) adds (b), else `rollout_note` says why (b) is missing.
 * malloc'd; NULL out of memory. */
char *view_paths_text(const ViewModel *m, const ViewPaths *p, const ViewRollout *r, const char *rollout_note);

#endif
