/* attn.h — one attention head at one position, with AHA's two branches.
 *
 * The local set of position t is the sinks [0, min(S, t+1)) plus the window
 * [max(t-w+1, S), t]; every other earlier key is "far". The local branch is
 * computed first whenever something must be decided or measured from it;
 * the far keys are read only when the executed branch is global or when the
 * oracle is asked for (profiling). Softmax partial sums of the two parts
 * combine exactly into full attention, so a global head costs the same as
 * plain attention, and a head fixed global that nobody profiles skips the
 * local softmax altogether.
 */
#ifndef AHASCOPE_ATTN_H
#define AHASCOPE_ATTN_H

#include <stdint.h>

#include "predictors.h"
#include "trace.h"

/* How the executed gate is chosen for this head: GATE_FIXED uses
 * AttnHeadIn.gate, decided before attention; each other rule is a mass
 * estimate of engine/predictors.h (thr THETA), global iff its log-odds >
 * theta_logit, decided here. */
typedef enum {
    GATE_FIXED,
#define ATTN_GATE_ENUM(ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    PRED_IF(PRED_THETA_##thr, GATE_##ID, )
    PREDICTORS(ATTN_GATE_ENUM)
#undef ATTN_GATE_ENUM
} GateRule;

typedef struct {
    const float *q;     /* [head_size], after RoPE */
    const void *k;      /* key cache of this layer and KV head: key i at element i*stride */
    const void *v;      /* value cache, same layout */
    int kv_dtype;       /* DType of the cached elements */
    int stride;         /* elements between positions in the cache (head_size: the cache is head-major) */
    int head_size;
    int t;              /* query position (keys 0..t are valid) */
    int window, sinks;
    float scale;        /* q·k multiplier; 0: 1/√head_size (Gemma: query_pre_attn_scalar^-1/2) */
    float softcap;      /* scores become softcap·tanh(score/softcap) (Gemma 2); 0: none */
    GateRule rule;
    int gate;           /* GATE_FIXED: 1 global, 0 local */
    int arch_local;     /* the architecture windows this layer: the window is read, nothing is decided
                           (gate -1), no predictor runs; rule, gate and the want_ flags but want_beyond
                           are ignored */
    int want_beyond;    /* arch_local: measure beyond_logit, the counterfactual mass before the window
                           (reads every key for the measurement only) */
    double theta_logit; /* θ as log-odds (decide_theta_logit) */
    int want_oracle;    /* compute oracle_logit and oracle_err (reads far keys) */
    int want_qada;      /* compute the local-key QAdA estimates (qada, qada_rem) */
    const double *bulk_m1; /* [head_size] Σ k over the far keys, or NULL */
    const double *bulk_m2; /* [head_size^2] Σ k kᵀ over the far keys */
    float score;        /* the router's score σ(x·w_r) for this head, NAN without routers: passed through */
    int top_k;          /* rank this many far positions by full-attention weight (reads far keys); 0 none */
    int32_t *top_pos;   /* [top_k] out: heaviest first, ties the earlier first; -1 past the last */
    float *top_w;       /* [top_k] out: their full-attention weights; NAN past the last */
} AttnHeadIn;

/* One field per per-head field of the trace, of the same name and type
 * (engine/trace.h's list), so the forward pass copies one into the other
 * through the list and a new field needs no line here: the executed gate,
 * the router score (AttnHeadIn.score, unchanged), the log-odds of the mass
 * outside the local set (exact, and every estimate), the oracle's output
 * error, the keys the executed branch read, and the far keys' score mean
 * and standard deviation. Not computed, or no far keys: the field's
 * missing value. */
typedef struct {
#define ATTN_OUT_FIELD(name, type, missing, sql, show, title, short_name, doc) type name;
    TRACE_HEAD_FIELDS(ATTN_OUT_FIELD)
#undef ATTN_OUT_FIELD
} AttnHeadOut;

/* Attention of one head at one position: writes the executed output to
 * out[head_size]; scratch needs (t+1) + 2*head_size floats. An arch_local
 * head reads its window (keys_read min(window, t+1)), records gate -1 and
 * every predictor's value missing, and with want_beyond beyond_logit. */
void attn_head_forward(const AttnHeadIn *in, float *out, float *scratch, AttnHeadOut *res);

/* Bounds of the local set at position t: sinks [0, *n_sinks) and window
 * [*win_lo, t]; far keys are [*n_sinks, *win_lo). */
void attn_local_set(int t, int window, int sinks, int *n_sinks, int *win_lo);

/* Add key k[head_size] to running bulk moments (m1 += k, m2 += k kᵀ). */
void attn_bulk_absorb(double *m1, double *m2, const float *k, int head_size);

/* Keys outside the local set of position t (0 inside the window: global
 * and local read the same keys, there is no choice to make). */
int attn_n_far(int t, int window, int sinks);

/* KV positions one KV head reads at position t: all t + 1 when any query
 * head of its group is global, else the local set. */
int attn_kv_read(int t, int window, int sinks, int any_global);

/* The QAdA estimate of the far mass as log-odds against the local mass:
 * the log of a log-normal sum of n_far keys whose scores have the given
 * mean and variance, minus the local log-sum-exp. Never saturates. */
float attn_qada_logit(double n_far, double mean_s, double var_s, double log_local);

/* This project's REM-corrected QAdA estimate: the same log-normal sum while
 * σ ≤ √(2 ln n), and μ + σ·√(2 ln n) above, where n Gaussian scores cannot
 * hold the tail the log-normal mean counts (the random-energy model's
 * frozen regime); the two agree at the boundary. Minus log_local. */
float attn_qada_rem_logit(double n_far, double mean_s, double var_s, double log_local);

#endif
