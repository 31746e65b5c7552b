/* fixed.h — fixed-local heads as every view counts them: the heads of a
 * layer the architecture windows (gemma2/3, mistral, phi3; StepTrace.
 * layer_window > 0) read only their layer's last W keys, and no router,
 * policy or predictor chooses for them. So they decide nothing: every
 * share, precision, recall and rate a view computes leaves them out, and
 * every decision a view takes of a cell goes through view_decide and
 * view_label here, never straight through engine/decide.h, so that rule is
 * written once. The keys they read still count where the views add up
 * what was read (keys and KV shares): that is memory traffic, not a choice.
 *
 * Header-only (static inline): rates.c, metric.c and the app's counters
 * all sit above it, so it adds no call between the views' files. */
#ifndef AHASCOPE_VIEW_FIXED_H
#define AHASCOPE_VIEW_FIXED_H

#include "engine/decide.h"
#include "engine/trace.h"

/* The architecture's window W of cell's layer when that layer is local
 * (the head is fixed-local), else 0: a global or unknown layer, a trace
 * without layer kinds, a cell out of range. */
static inline int view_fixed_window(const StepTrace *t, int cell) {
    if (!t || !t->layer_window || cell < 0 || cell >= trace_cells(t)) return 0;
    return trace_is_arch_local(t, cell) ? t->layer_window[cell / t->n_heads] : 0;
}

/* 1 if cell of t is a fixed-local head. */
static inline int view_is_fixed(const StepTrace *t, int cell) { return view_fixed_window(t, cell) > 0; }

/* 1 if layer of t is one the architecture windows. */
static inline int view_layer_fixed(const StepTrace *t, int layer) {
    return t && layer >= 0 && layer < t->n_layers && view_is_fixed(t, layer * t->n_heads);
}

/* decide_cell for the views: -1 (no decision, counted nowhere) at a
 * fixed-local head, whatever its fields hold. */
static inline int view_decide(const StepTrace *t, int cell, DecidePred p, float tau, double theta_logit) {
    return view_is_fixed(t, cell) ? -1 : decide_cell(t, cell, p, tau, theta_logit);
}

/* decide_label for the views: the oracle labels no fixed-local head. */
static inline int view_label(const StepTrace *t, int cell, double theta_logit) {
    return view_is_fixed(t, cell) ? -1 : decide_label(t, cell, theta_logit);
}

/* The kinds of a model's layers: how many the architecture windows (and
 * the shortest and longest of their windows) and how many are global. */
typedef struct {
    int n_local, n_global;
    int w_min, w_max; /* 0 without local layers */
} ViewLayerKinds;

/* Count the kinds of n layers whose windows are win (StepTrace.
 * layer_window's meaning: W > 0 local, 0 or -1 global). */
static inline ViewLayerKinds view_layer_kinds(const int32_t *win, int n) {
    ViewLayerKinds k = {0, 0, 0, 0};
    for (int l = 0; win && l < n; l++) {
        if (win[l] <= 0) { k.n_global++; continue; }
        k.n_local++;
        if (!k.w_min || win[l] < k.w_min) k.w_min = win[l];
        if (win[l] > k.w_max) k.w_max = win[l];
    }
    return k;
}

/* The kinds of t's layers (none local for a NULL trace). */
static inline ViewLayerKinds view_trace_kinds(const StepTrace *t) {
    return t ? view_layer_kinds(t->layer_window, t->n_layers) : view_layer_kinds(NULL, 0);
}

#endif
