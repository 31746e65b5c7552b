/* aha.h — how attention is routed: the policy that picks each head's
 * branch (global or local) and the settings of the local set and the
 * predictors. The design is described in engine/README.md. */
#ifndef AHASCOPE_AHA_H
#define AHASCOPE_AHA_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "predictors.h"

/* The policies, in engine/predictors.h's order: aha (the learned router,
 * global iff σ(x·w_r) > τ), full and local (every head global, or local),
 * oracle (out_mass > θ, reading the far keys to know), the QAdA family
 * (an estimate > θ), static (a fixed set of global heads) and random
 * (each token-head global with probability p). */
typedef enum {
#define AHA_POLICY_ENUM(ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    PRED_IF(policy, POLICY_##ID, )
    PREDICTORS(AHA_POLICY_ENUM)
#undef AHA_POLICY_ENUM
    POLICY_COUNT
} Policy;

typedef struct {
    Policy policy;
    int window;              /* w ≥ 1: local keys t-w+1 … t */
    int sinks;               /* S ≥ 0: first S positions always in the local set */
    float tau;               /* router threshold (strictly greater is global) */
    double theta_logit;      /* oracle / QAdA threshold θ on out-of-window mass, as log-odds
                                ln(θ / (1 - θ)) (decide_theta_logit): thresholds past what a
                                probability can hold (1 - 1e-20) stay exact */
    float p;                 /* random policy: probability of global */
    uint64_t seed;           /* random policy stream */
    int profile;             /* compute every predictor at every step */
    const float *routers;    /* [n_layers][n_heads][dim] router vectors, or NULL */
    const float *router_bias; /* [n_layers][n_heads] added to the router logits, or NULL (none) */
    int model_routers;       /* 1: the model carries its own routers (faolmo), used when routers is NULL */
    const uint8_t *static_heads; /* [n_layers * n_heads], 1 = global, or NULL */
    const float *head_span;  /* [n_layers * n_heads * 2]: each head's own local window, alpha + beta·(t+1)
                                keys at position t (engine/headtab.h), in place of window; NULL: none */
    const int8_t *force;     /* an ablation: [n_layers * n_heads] 1 global, 0 local, -1 the policy decides,
                                at positions >= force_from (decide_forced); NULL: none */
    int force_from;
    int n_windows;           /* K > 0: routers is a multi-choice router, K + 1 vectors a head
                                ([n_layers][n_heads][K + 1][dim]); under aha each local head reads the
                                window decide_multi picks among windows[0..K); 0: two-way */
    const int *windows;      /* [n_windows] strictly increasing, or NULL */
} AttnConfig;

/* Defaults: full policy, window 32, no sinks, τ 0.5, θ 0.1, p 0.1. */
AttnConfig aha_defaults(void);

/* 1 when a and b execute the same branches on the same tokens: same
 * policy, local set and routers, and the same value of the one threshold
 * the policy uses (τ for aha, θ for oracle and the QAdA policies, p for
 * random). A threshold the policy does not use changes only how the
 * stored values are scored, never what runs. */
int aha_same_execution(const AttnConfig *a, const AttnConfig *b);

/* Name of a policy ("aha", "full", …). */
const char *aha_policy_name(Policy p);

/* Parse a policy name; returns 0 and sets *out, or -1 with an error. */
int aha_policy_parse(const char *s, Policy *out, Err *e);

/* The names of every policy joined by sep into buf (for `--help` and
 * messages that list the choices). */
void aha_policy_list(char *buf, size_t cap, const char *sep);

/* The one setting policy p's decision compares (PRED_THR_TAU for aha,
 * PRED_THR_THETA for the oracle and the QAdA family, PRED_THR_P for random,
 * PRED_THR_NONE otherwise). */
PredThr aha_policy_threshold(Policy p);

/* Check the settings against a model shape (routers present for aha, a
 * head set for static, ranges of w, S, τ, θ, p; a multi-choice router's
 * windows increasing, and not beside per-head spans). Returns 0 if usable. */
int aha_check(const AttnConfig *a, int n_layers, int n_heads, Err *e);

/* Parse "l.h,l.h,…" into a [n_layers*n_heads] 0/1 map (calloc'd). */
int aha_parse_heads(const char *spec, int n_layers, int n_heads, uint8_t **out, Err *e);

#endif
