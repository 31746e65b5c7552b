/* decide.h — the one definition of every decision ahascope scores: which
 * predictors are scored (engine/predictors.h's, in one order), what each says at
 * one (position, layer, head) cell of a StepTrace, the oracle's label, the
 * confusion counts against it, and precision / recall / F1.
 *
 * Every rule is "global iff value > threshold", strictly; a value that was
 * not computed (NAN, or a gate of -1) gives no decision (-1), and such a
 * cell is left out of every count. So is every cell of a position with no
 * far keys (t < window + sinks): global and local read the same keys there,
 * so nothing was decided. Nor is any cell of a layer the architecture
 * windows (trace_is_arch_local): no choice exists there at all. Mass estimates are compared in log space: the
 * trace holds log-odds ln(far/local) and θ is turned into log-odds once
 * (decide_theta_logit), so a threshold can sit anywhere in the tail. The forward pass executes the same
 * rules (decide_router, decide_logit, decide_static, decide_random), so what
 * a run did and what is scored afterwards cannot drift apart.
 *
 * The SQL views of the store (store/schema.c, store/calibrate.c) mirror
 * these rules in SQL; tests/test_decide.c checks them cell for cell against
 * this module on a recorded run. Change a rule here and there together. */
#ifndef AHASCOPE_DECIDE_H
#define AHASCOPE_DECIDE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "predictors.h"
#include "trace.h"

/* The predictors scored against the oracle, from engine/predictors.h, in
 * the list's order, then the oracle (the label). Static head sets,
 * random, full and local are executed-only: they are scored as
 * DECIDE_EXECUTED of a run under that policy, since a trace does not hold
 * their inputs. */
#define DECIDE_SCORED_ROW(X, ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    PRED_IF(PRED_SCORED_##dec, X(ID, word, field, title, brief, spark, thr, policy, dec, ours))
#define DECIDE_LABEL(X, ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    PRED_IF(PRED_LABEL_##dec, X(ID, word, field, title, brief, spark, thr, policy, dec, ours))
/* The scored rows, in DecidePred's order; then all its rows. */
#define DECIDE_SCORED(X) PRED_TABLE(DECIDE_SCORED_ROW, X)
#define DECIDE_PREDICTORS(X) DECIDE_SCORED(X) PRED_TABLE(DECIDE_LABEL, X)

typedef enum {
#define DECIDE_ENUM(ID, word, field, title, brief, spark, thr, policy, dec, ours) DECIDE_##ID,
    DECIDE_PREDICTORS(DECIDE_ENUM)
#undef DECIDE_ENUM
    DECIDE_COUNT
} DecidePred;

/* The predictors scored against the oracle, the first of DecidePred: every
 * one but the oracle, which is the label. The store keeps them all (a
 * file lists its own, store/SCHEMA.md), so all are in the SQL views. */
#define DECIDE_N_SQL DECIDE_ORACLE

/* Predictor p's row of engine/predictors.h's list (PRED_INFO); NULL out
 * of range. */
const PredInfo *decide_info(DecidePred p);

/* Name of a predictor as stored and typed ("executed", "aha", "qada", …,
 * "oracle"); "?" out of range. */
const char *decide_name(DecidePred p);

/* Name of a predictor as the TUI shows it ("gate", "AHA", "QAdA", …). */
const char *decide_title(DecidePred p);

/* The per-head field of engine/trace.h that predictor p's rule compares
 * ("gate", "score", "qada_logit", …); "?" out of range. */
const char *decide_field(DecidePred p);

/* Parse a predictor name; returns 0 and sets *out, or -1 if unknown. */
int decide_parse(const char *s, DecidePred *out);

/* The names of the first n predictors joined by sep into buf (for
 * messages and `--help` texts that list the choices). */
void decide_list(char *buf, size_t cap, int n, const char *sep);

/* What predictor p's decision compares: PRED_THR_GATE, PRED_THR_TAU or
 * PRED_THR_THETA. */
PredThr decide_threshold(DecidePred p);

/* The rule behind every threshold: 1 if v > threshold, 0 if not, -1 when v
 * was not computed (NAN). */
static inline int decide_above(float v, float threshold) { return isnan(v) ? -1 : v > threshold; }

/* The router's decision from a recorded score: σ(x·w_r) > τ, both float32
 * (a trace keeps the score, not its logit). */
static inline int decide_router(float score, float tau) { return decide_above(score, tau); }

/* The router's decision as executed: its logit x·w_r against logit(τ) in
 * double. Near τ = 1 a float32 sigmoid moves in steps of 1e-7, 0.004 in
 * log-odds at τ = 1 - 1.6e-5, which would decide a band of logits wrongly;
 * a recorded score can be that step off the executed gate there. */
static inline int decide_router_logit(float logit, float tau) {
    double t = tau <= 0 ? -INFINITY : tau >= 1 ? INFINITY : log((double)tau) - log1p(-(double)tau); /* τ < 0: all */
    return isnan(logit) ? -1 : logit > t;
}

/* A multi-choice router's decision (engine/README.md, "The multi-choice
 * router") from its K + 1 logits z (the K windows', then global's): global
 * when z_K − max_{k<K} z_k, written to *glogit, passes τ as a two-way
 * router's logit does (decide_router_logit: τ 0.5 is the plain argmax);
 * else the window of the largest z_k, ties to the shorter. Returns the
 * choice, 0 … K−1 a window, K global. */
int decide_multi(const float *z, int k, float tau, float *glogit);

/* θ, a share of attention mass in [0, 1], as log-odds ln(θ / (1 - θ)):
 * -inf at 0 (every far mass counts), +inf at 1 (none does). */
static inline double decide_theta_logit(double theta) { return log(theta) - log1p(-theta); }

/* The probability a log-odds value stands for: 1 / (1 + e^-x), for people
 * (it rounds to 1 above ~37 in double). */
static inline double decide_prob(double logit) { return 1.0 / (1.0 + exp(-logit)); }

/* The decision of a mass estimate (oracle and the QAdA family) held as
 * log-odds: mass > θ, i.e. logit > logit(θ). */
static inline int decide_logit(float logit, double theta_logit) { return isnan(logit) ? -1 : logit > theta_logit; }

/* A static head set's decision: the head's entry of the 0/1 map (local
 * without a map). */
static inline int decide_static(const uint8_t *heads, int cell) { return heads ? heads[cell] != 0 : 0; }

/* An ablation's forced decision at cell and position t: force[cell] (1
 * global, 0 local) from position from on; -1 (the policy decides) before
 * it, for an unforced cell (-1) or without a force map. */
static inline int decide_forced(const int8_t *force, int from, int t, int cell) {
    return force && t >= from && force[cell] >= 0 ? force[cell] : -1;
}

/* Parse an ablation, "L2H1=local@496": comma-separated items L<l>H<h> (a
 * head) or L<l> (every head of the layer), each =local or =global, then an
 * optional @POS, the first position forced (0 without). force (n_layers *
 * n_heads entries) gets -1 everywhere but the named cells; a later item
 * overrides an earlier one. Returns 0, or -1 with e naming the bad part. */
int decide_force_parse(const char *spec, int n_layers, int n_heads, int8_t *force, int *from, Err *e);

/* The ablation force (n_layers * n_heads entries, -1 unforced) and from as
 * decide_force_parse's text, which parses back to the same map: a layer
 * whose heads are all forced one way as L<l>=…, other cells as L<l>H<h>=…,
 * then @from when from > 0; "" for no forced cell (or force NULL).
 * Returns 0, or -1 with buf "" when it does not fit cap bytes. */
int decide_force_format(const int8_t *force, int from, int n_layers, int n_heads, char *buf, size_t cap);

/* The random policy's decision: a uniform drawn from (seed, pos, layer,
 * head) below p. */
int decide_random(uint64_t seed, int pos, int layer, int head, float p);

/* 1 when position t of the trace had far keys, so its heads made a choice;
 * 0 when it had none (t < window + sinks). An unknown n_far counts as a
 * choice. */
static inline int decide_has_choice(const StepTrace *t) { return t->n_far != 0; }

/* Decision of predictor p at one cell of t: 1 global, 0 local, -1 unknown,
 * no choice at this position, or a fixed-local head (its layer windowed by
 * the architecture). */
int decide_cell(const StepTrace *t, int cell, DecidePred p, float tau, double theta_logit);

/* The value predictor p thresholds at one cell, for ranking: the gate,
 * the router score, or the log-odds of a mass estimate; NAN when not
 * computed. */
float decide_value(const StepTrace *t, int cell, DecidePred p);

/* The oracle's label at one cell (oracle_logit > logit(θ)): 1, 0, or -1
 * unknown or no choice. */
int decide_label(const StepTrace *t, int cell, double theta_logit);

/* Confusion of a predictor against the oracle's labels. */
typedef struct {
    long tp, fp, fn, tn;
} DecideCounts;

/* Count one (decision, label) pair; either unknown (-1) counts nothing. */
void decide_tally(DecideCounts *c, int pred, int label);

/* What a confusion says; NAN where the denominator is 0 (a predictor that
 * never says global has no precision), which becomes JSON null, SQL NULL. */
typedef struct {
    double precision, recall, f1;
    double predicted_rate; /* share of counted cells predicted global */
} DecideRates;

/* Precision, recall, F1 and predicted rate of c. */
DecideRates decide_rates(const DecideCounts *c);

#endif
