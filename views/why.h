/* why.h — what drove one head's decision at one position, in words: the
 * router's logit split into the input dimensions that carried it and the
 * residual stream's norm (m->why, which the app fills in a live session),
 * and oracle_err, how much the head's output changes going local (from the
 * trace). The far keys that held the mass are the inspector's ranked list
 * (explain.h), which the block is drawn with. Pure text, tested without
 * curses; ASCII mode spells ‖x‖, σ, − and · as ||x||, sigma, - and |.
 */
#ifndef AHASCOPE_VIEW_WHY_H
#define AHASCOPE_VIEW_WHY_H

#include "views/explain.h"

#define VIEW_WHY_LINES 3
#define VIEW_WHY_CAP 256

/* Whether m->why explains the selected head at the cursor token. */
int view_why_current(const ViewModel *m);

/* The block's lines for the selected head at the cursor, each at most max_w
 * columns (terms that do not fit are added to the rest): the router's
 * logit, its largest terms, then oracle_err with its meaning. Returns the
 * lines filled (0 without a cursor token). */
int view_why_lines(const ViewModel *m, int max_w, char out[VIEW_WHY_LINES][VIEW_WHY_CAP]);

/* oracle_err in words: "hardly", "slightly", "noticeably", "substantially"
 * or "mostly", by the share of the output's norm going local changes. */
const char *view_why_err_words(double err);

#endif
