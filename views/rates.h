/* rates.h — the run's head map: each head's rates over the positions of
 * the run so far, the metrics VIEW_RATE_METRICS lists (view.h): the
 * executed gate's global rate, the oracle's, the gate's precision and
 * recall against the oracle, and the compared predictor's agreement with it.
 *
 * Each rate is the mean of an event counted at one (position, head): 1 or
 * 0 where the position counts toward the rate, nothing where it does not
 * (no far keys, t < window + sinks, or a value not computed). The events
 * are engine/decide.h's decisions, so the rates are exactly the store's
 * `head_rates` (global_rate, oracle_rate) and `confusion_head` (precision
 * tp / (tp + fp), recall tp / (tp + fn), agreement (tp + tn) / all) at the
 * same thresholds; NAN (n/a) where nothing counted.
 *
 * The counts are kept per head beside the cumulative counts (ViewStats,
 * stats.c) as steps arrive, and recounted with them at new thresholds, so
 * reading every head's rate costs O(heads) however long the run.
 *
 * The rates are numbers; what a cell looks like is metric.h's, which reads
 * them (view_heat_swatch), so calls run metric -> rates only.
 */
#ifndef AHASCOPE_VIEW_RATES_H
#define AHASCOPE_VIEW_RATES_H

#include <stddef.h>

#include "views/view.h"

#define VIEW_RATE_ONE(id, title, short_name, doc) +1
/* How many run rates there are. */
#define VIEW_RATE_COUNT (0 VIEW_RATE_METRICS(VIEW_RATE_ONE))
/* Counters kept per head: one per rate, the agreement one per predictor
 * it can be compared for (ViewPredictor), so `a` needs no recount. */
#define VIEW_RATE_SLOTS (VIEW_RATE_COUNT - 1 + VIEW_PRED_COUNT)

/* 1 when k is one of the run rates. */
int view_metric_is_rate(ViewMetric k);

/* The run rate of index i (0 … VIEW_RATE_COUNT - 1), in the list's order. */
ViewMetric view_rate_metric(int i);

/* What rate k is, in a few words (the list's last column). */
const char *view_rate_doc(ViewMetric k);

/* The event rate k counts at one cell of t at m's thresholds (the
 * agreement's for m's compared predictor): 1, 0, or -1 where the position
 * does not count toward it. */
int view_rate_event(const ViewModel *m, const StepTrace *t, int cell, ViewMetric k);

/* Add one step's events to per-head counters c ([cell][VIEW_RATE_SLOTS][2]:
 * events, positions counted), deciding at tau and theta_logit. */
void view_rates_count(const StepTrace *t, float tau, double theta_logit, int32_t *c);

/* Rate k of head `cell` over the run so far (every position of m's
 * history, or only the span's while one is set) at m's thresholds; NAN where nothing counted. *n, when not
 * NULL, receives the positions counted. O(1) from the kept counts; a
 * recount of the history when they do not cover it (out of memory). */
double view_head_rate(const ViewModel *m, int cell, ViewMetric k, int *n);

/* The positions the rates cover, as titles name them: "pos 0-44", "span
 * 120-180" while a span is set (views/span.h), or "no positions yet". */
const char *view_rate_span(const ViewModel *m, char *buf, size_t n);

/* Bring the span's per-head counts (m->span.head) up to date with the
 * span, the history and the thresholds: counted once when the span is set
 * and as positions inside it arrive, so reading a rate over it stays O(1).
 * view_stats_sync calls it; 0, or -1 with e set when out of memory (the
 * rates are then recounted each time they are read). */
int view_span_count(ViewModel *m, Err *e);

#endif
