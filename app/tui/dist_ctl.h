/* dist_ctl.h — the controller's half of the distributions pane (`d`) and of
 * the "why" block the inspector and the pane show.
 *
 * The counts (TuiDistCount) are pure: one position at a time, the cells
 * that have a router score and an oracle label at θ, binned for the
 * histogram and the calibration, and ranked with eval's own AUC bins
 * (app/eval_forced.h), so the pane's AUC is the one `eval` reports for the
 * same run. A recorded run is counted off the UI thread (a job of its own,
 * job.h, with its progress and Esc); one that was not recorded is counted
 * from the positions on screen, as `v` does. A growing live run is
 * recounted at most once a second.
 *
 * The why: in a live session the worker splits the selected head's router
 * logit at the cursor (engine/router_why.h) on request; a replay says the
 * input is not recorded. */
#ifndef AHASCOPE_TUI_DIST_H
#define AHASCOPE_TUI_DIST_H

#include "app/eval_forced.h"
#include "app/tui/state.h"

typedef struct {
    ViewDist d;  /* the counts as the pane draws them */
    EvalAuc auc; /* the router score's ranking of the oracle's labels */
} TuiDistCount;

/* Start a count: every head (pooled) or (layer, head), labels at θ. */
void tui_dist_count_init(TuiDistCount *c, int pooled, int layer, int head, double theta_logit);

/* Count position t's cells. */
void tui_dist_count_add(TuiDistCount *c, const StepTrace *t);

/* The AUC and the ROC from the counts; the pane's data is then ready. */
void tui_dist_count_finish(TuiDistCount *c);

/* `d`: open the distributions of the selected head, or close them. */
void tui_dist_toggle(Tui *t);

/* A key while the pane is open: `a` pools every head or goes back to the
 * selected one, Esc stops a count under way, else closes. 1 when it was
 * the pane's key. */
int tui_dist_key(Tui *t, int ch);

/* Each frame: take a finished count and its progress; count again when
 * the head, θ or the run changed. Also keeps m->why current while the
 * inspector or the pane shows it. */
void tui_dist_poll(Tui *t);

/* Esc: stop the why being recomputed for a model too large to keep its
 * router inputs, saying so on the status line. 1 if one was under way. */
int tui_why_cancel(Tui *t);

/* Esc on the open pane: stop the count under way, saying so on the status
 * line. 1 if one was under way (the pane then stays open). */
int tui_dist_stop(Tui *t);

/* Stop a count and close the pane (the controller is closing). */
void tui_dist_close(Tui *t);

#endif
