/* metric.h — turning trace values into what a cell shows, and the running
 * rates the header and the bars print. Pure functions of the view model.
 *
 * A "swatch" is a cell's look, independent of the terminal: none (value not
 * computed), one of VIEW_LEVELS gradient levels, or one of the four agreement
 * classes. palette.h maps swatches to colours and glyphs.
 */
#ifndef AHASCOPE_VIEW_METRIC_H
#define AHASCOPE_VIEW_METRIC_H

#include "views/fixed.h"
#include "views/view.h"

#define VIEW_LEVELS 8

enum {
    VIEW_SW_NONE = 0,                 /* not computed (NAN / -1) */
    VIEW_SW_LEVEL1 = 1,               /* levels 1 … VIEW_LEVELS: low … high */
    VIEW_SW_BOTH_GLOBAL = VIEW_LEVELS + 1,
    VIEW_SW_BOTH_LOCAL,
    VIEW_SW_MISSED_GLOBAL,   /* oracle global, predictor local: quality risk */
    VIEW_SW_NEEDLESS_GLOBAL, /* predictor global, oracle local: wasted reads */
    VIEW_SW_FIXED,           /* a fixed-local head (views/fixed.h) under a metric it has no value of */
    VIEW_SW_BLANK,           /* empty screen background (no cell at all) */
    VIEW_SWATCHES
};

/* Long name of a metric, as in the legend ("router score", …). */
const char *view_metric_name(ViewMetric k);

/* Short name of a metric for narrow places ("score", …). */
const char *view_metric_short(ViewMetric k);

/* The metric of the per-head field named `field` (engine/trace.h's
 * list); VIEW_METRIC_COUNT for none. */
ViewMetric view_metric_of_field(const char *field);

/* Name of a predictor compared by the agreement metric ("AHA", …). */
const char *view_pred_name(ViewPredictor p);

/* The metric of the counterfactual field (VIEW_COUNTERFACTUAL_FIELD): the
 * mass a fixed-local head would put beyond its layer's window if it saw
 * every key, computed beside the run and never executed; VIEW_METRIC_COUNT
 * while the field list has no such field. Looked up by name, so the views
 * need nothing but the field's line in engine/trace.h. */
#define VIEW_COUNTERFACTUAL_FIELD "beyond_logit"
ViewMetric view_metric_counterfactual(void);

/* 1 if metric k is drawn at a fixed-local cell where its value exists: a
 * per-head field that is no decision's input (keys read, the
 * counterfactual). The gate, the router score, every predictor's field,
 * the run rates and the agreement draw VIEW_SW_FIXED there, whatever the
 * trace holds. */
int view_metric_fixed_shows(ViewMetric k);

/* Value of metric k at one cell of t, scaled to [0, 1] (rel_err clamped);
 * for a run rate, the event it counts there (1, 0; views/rates.h); NAN when
 * not computed or not counted, and for VIEW_METRIC_AGREE. */
float view_metric_value(const ViewModel *m, const StepTrace *t, int cell, ViewMetric k);

/* The regime of a spread σ of n far scores, σ / √(2 ln n): above 1 the
 * Gaussian sum model counts tail mass n keys never hold. NAN below 2 keys. */
float view_regime(double sigma, int n_far);

/* 1 when the `m` key cycles through metric k; 0 for a field the list marks
 * NONE (not useful as a heatmap). */
int view_metric_cycles(ViewMetric k);

/* The metric after (dir 1) or before (dir -1) k in the `m` cycle. */
ViewMetric view_metric_step(ViewMetric k, int dir);

/* Gradient level 1 … VIEW_LEVELS of a value in [0, 1]; VIEW_SW_NONE for NAN. */
int view_level(float v);

/* Decision of predictor p at one cell: 1 global, 0 local, -1 unknown. */
int view_pred_decision(const ViewModel *m, const StepTrace *t, int cell, ViewPredictor p);

/* The oracle's decision (out_mass > θ): 1, 0, or -1 when not computed. */
int view_oracle_decision(const ViewModel *m, const StepTrace *t, int cell);

/* AHA's decision where the router was evaluated, else the executed gate
 * (what the bars count as "AHA"): 1, 0, or -1 when neither is known. */
int view_aha_decision(const ViewModel *m, const StepTrace *t, int cell);

/* Swatch of one cell under the model's current metric (and predictor);
 * VIEW_SW_FIXED at a fixed-local head unless the metric shows a value
 * there (view_metric_fixed_shows). */
int view_swatch(const ViewModel *m, const StepTrace *t, int cell);

/* Swatch of one heatmap cell at trace t (the cursor's): a run rate's level
 * for its head (views/rates.h), else view_swatch's. */
int view_heat_swatch(const ViewModel *m, const StepTrace *t, int cell);

/* Swatch of one cell over positions p0 .. p1-1 of the history (a timeline
 * bin): the metric's mean over the positions that have it (the gate's: the
 * share of them global); under the agreement metric the worst class any of
 * them shows (missed global, then needless global, both global, both
 * local). A bin of one position is view_swatch's. */
int view_swatch_bin(const ViewModel *m, int cell, int p0, int p1);

/* Fraction of t's heads whose executed gate was global; NAN if none known. */
float view_global_share(const StepTrace *t);

/* Swatch tinting a token: the selected head's metric, or the share of heads
 * global when m->tint_share is set. */
int view_token_swatch(const ViewModel *m, const StepTrace *t);

/* Bring the model's cumulative counts up to date with its history and its
 * current τ/θ (view_push does this; call it after changing hdr.tau or
 * hdr.theta without pushing). Until then rates are computed the slow way. */
int view_stats_sync(ViewModel *m, Err *e);

/* Free the cumulative counts (view_free does this). */
void view_stats_free(ViewModel *m);

/* Begin counting the history at thresholds tau and theta_logit beside the
 * counts in use, which stay in force, with the header's thresholds, until
 * the new counts are done (view_rescore_step): re-scoring a long run then
 * never holds a frame. A rescore under way is replaced. */
void view_rescore_begin(ViewModel *m, float tau, double theta_logit);

/* Count up to max_pos more positions of the rescore under way; once it
 * reaches the end of the history its counts and thresholds replace those in
 * use. 1 when it is done (or none was under way), 0 while positions remain,
 * -1 with e set when out of memory (the rescore is dropped). */
int view_rescore_step(ViewModel *m, int max_pos, Err *e);

/* Drop the rescore under way: the thresholds in use stay. */
void view_rescore_cancel(ViewModel *m);

/* Per-layer global rates over history positions 0 … upto: AHA's decision
 * (router, or the executed gate where no router score exists) and the
 * oracle's. Arrays hold n_layers entries; NAN where nothing is known. */
void view_layer_rates(const ViewModel *m, int upto, float *aha, float *oracle);

/* The same over history positions lo … hi only (a span, views/span.h):
 * a difference of the cumulative counts, O(layers). */
void view_layer_rates_in(const ViewModel *m, int lo, int hi, float *aha, float *oracle);

/* Running totals of one history, over positions 0 … upto; NAN if unknown. */
typedef struct {
    double global_share; /* decisions run global (positions with far keys only, fixed-local heads left out) */
    double keys_share;   /* keys read per query head / full attention (pos + 1 per head); every head's reads,
                            a fixed-local head's window too: that is traffic, not a decision */
    double kv_share;     /* KV positions read per KV head / full attention: the memory traffic */
} ViewTotals;

/* Sums behind ViewTotals: global, decided, keys, keys full, KV, KV full. */
#define VIEW_TOTALS 6

/* Add one step's sums to tot (the cumulative counts and the slow path
 * share it, so they cannot disagree). */
void view_count_step(const StepTrace *t, double tot[VIEW_TOTALS]);

/* The totals of m's history up to position upto. */
void view_totals(const ViewModel *m, int upto, ViewTotals *out);

/* The totals of positions lo … hi only (a span). */
void view_totals_in(const ViewModel *m, int lo, int hi, ViewTotals *out);

#endif
