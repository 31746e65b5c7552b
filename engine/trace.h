/* trace.h — StepTrace, the per-step record: the one contract between the
 * engine (which fills it), the store (which records it) and the views
 * (which draw it). Neither consumer ever looks into engine internals.
 *
 * A StepTrace describes one position fed through the model:
 *   - the token at that position and how likely the model found it
 *     (logprob/entropy of the distribution that predicted it, NAN at pos 0
 *     or whenever no prediction was available);
 *   - per (layer, head), layer-major (index = layer * n_heads + head), what
 *     the attention of that head did while processing the token.
 * Values that were not computed are NAN (floats) or -1 (ints).
 */
#ifndef AHASCOPE_TRACE_H
#define AHASCOPE_TRACE_H

#include <stdint.h>

#define TRACE_PIECE_MAX 64 /* bytes kept of a token's text, NUL included */

/* The per-head fields of a trace, one list. Everything that stores, reads,
 * exports or shows a per-head value is generated from it: the arrays of
 * StepTrace, trace_new/clear/copy, the `decisions` table's columns, the
 * writer's binding and the reader's columns, JSON/CSV export and merge.
 * Adding a field is adding a line here (and a line in store/SCHEMA.md);
 * a field goes at the end, since a migrated database appends its column
 * (store/schema.c).
 *
 *   X(name, C type, missing value, SQL type, how a view shows it, long name, short name, meaning)
 *
 * "How a view shows it" maps the value onto [0, 1] for a heatmap (views/metric.c):
 * GATE 0/1, UNIT as is (clamped), PROB log-odds as a probability, KEYS as
 * a fraction of the pos + 1 keys there are, REGIME a spread σ as
 * σ / √(2 ln n_far) (above 1 is the frozen regime, see engine/README.md),
 * NONE not as a heatmap (the `m` cycle skips it). The list's order is the
 * order the TUI's `m` key cycles the metrics in.
 *
 * A missing value means "not computed" and is NULL in the database. The
 * three estimates of the mass outside the local set are log-odds,
 * ln(far mass / local mass): a float probability rounds to exactly 1 above
 * log-odds ~16.6, and ranking and thresholding need the tail. Probabilities
 * are derived from them for people (decide_prob, the `masses` view).
 *
 * beyond_logit is a counterfactual: on a layer the architecture windows
 * (layer_window > 0), the log-odds of the mass full attention over every
 * key would put before the window, against the mass inside it. It is
 * measured (with --profile) and never executed: the head reads only its
 * window, and the model was trained so. NAN on every other head and while
 * no key lies beyond the window.
 *
 * local_window is the window w of the local set (sinks, then the last w
 * keys) the head read or would read at this position: the run's shared
 * window, the head's span (moa:/windows:) or, under a multi-choice router,
 * the window it chose for this (token, head), which nothing else records.
 * It is kept so keys read can be counted from a database exactly; -1 on a
 * fixed-local head (its layer's window is the run's) and when not known. */
#define TRACE_HEAD_FIELDS(X)                                                                                     \
    X(gate, int8_t, -1, INTEGER, GATE, "executed gate", "gate", "executed branch: 1 global, 0 local")            \
    X(score, float, NAN, REAL, UNIT, "router score", "score", "router score sigma(x.w_r) in [0,1]")              \
    X(oracle_logit, float, NAN, REAL, PROB, "oracle out_mass", "out_mass",                                       \
      "ln(softmax mass outside the local set / mass inside), exact")                                             \
    X(oracle_err, float, NAN, REAL, UNIT, "oracle rel_err", "rel_err", "||o_full - o_local|| / ||o_full||")      \
    X(qada_logit, float, NAN, REAL, PROB, "QAdA estimate", "qada", "QAdA estimate of oracle_logit, window keys")  \
    X(qada_bulk_logit, float, NAN, REAL, PROB, "qada_bulk estimate (ablation)", "qada_bulk",                     \
      "the same model from exact far-key moments (ablation)")                                                    \
    X(keys_read, int32_t, -1, INTEGER, KEYS, "keys read / (pos+1)", "keys", "keys this query head's branch read") \
    X(qada_rem_logit, float, NAN, REAL, PROB, "qada_rem estimate (REM-corrected)", "qada_rem",                   \
      "REM-corrected QAdA from window keys (this project's)")                                                    \
    X(qada_rem_bulk_logit, float, NAN, REAL, PROB, "qada_rem_bulk estimate (REM-corrected)", "qada_rem_bulk",   \
      "REM-corrected QAdA from exact far-key moments (this project's)")                                          \
    X(far_mean, float, NAN, REAL, NONE, "far score mean", "far_mean", "mean of the far keys' q.k/sqrt(d), exact")  \
    X(far_std, float, NAN, REAL, REGIME, "far-score regime", "regime",                              \
      "std of the far keys' q.k/sqrt(d), exact; shown as sigma/sqrt(2 ln n_far)")                                \
    X(beyond_logit, float, NAN, REAL, PROB, "counterfactual mass beyond the layer's window", "beyond",             \
      "fixed-local heads, --profile: ln(full-attention mass before the layer's window / inside), never executed")  \
    X(local_window, int32_t, -1, INTEGER, NONE, "window of the local branch", "local_window",                     \
      "the window this head's local branch reads here: the run's, its span's, or its multi-choice router's choice") \
    TRACE_CANARY_FIELD(X)

/* The canary build (make test-canary, -DAHASCOPE_CANARY) appends one field,
 * as a contributor would: it proves that the store, the views and every
 * reader take a new field without a schema version. Its value is QAdA's
 * estimate again (engine/attn.c), so the tests know what it must hold. */
#ifdef AHASCOPE_CANARY
#define TRACE_CANARY_FIELD(X) \
    X(canary_logit, float, NAN, REAL, PROB, "canary estimate", "canary", "the canary build's field: qada_logit again")
#else
#define TRACE_CANARY_FIELD(X)
#endif

typedef struct {
    int pos;                      /* 0-based position in the sequence */
    int token;                    /* token id fed at pos */
    int is_prompt;                /* 1 if the token came from the prompt */
    char piece[TRACE_PIECE_MAX];  /* printable UTF-8 text of the token */
    float logprob;                /* log p(token | tokens < pos), nats; NAN at pos 0 */
    float entropy;                /* entropy of that predicting distribution, nats */
    double step_us;               /* wall time of the step (prefill: share of the batch) */
    int n_far;                    /* keys outside the local set at pos (same for every head);
                                     0: no choice, global and local read the same keys; -1 unknown */

    int n_layers, n_heads;        /* shape of every per-head array below */
    int n_kv_heads;               /* KV heads per layer (GQA: fewer than n_heads); -1 unknown */
    /* Each layer's attention kind as the architecture makes it, n_layers
     * entries: 0 global (every key, so AHA and the predictors decide there),
     * W > 0 local with window W (gemma2/3, mistral, phi3: every head reads
     * only its last W keys, self included; no choice exists, so such heads
     * are "fixed-local" and count in no share, precision or recall);
     * -1 unknown (read as global). trace_is_arch_local says it per head.
     * A fixed-local head's gate is -1 (nothing was chosen), its score and
     * every predictor's value NAN, its keys_read min(W, pos + 1), and
     * beyond_logit its counterfactual when profiled. */
    int32_t *layer_window;
#define TRACE_DECLARE(name, type, missing, sql, show, title, short_name, doc) type *name;
    TRACE_HEAD_FIELDS(TRACE_DECLARE)
#undef TRACE_DECLARE
    /* KV positions read per (layer, KV head), at [layer * n_heads + kv_head]
     * (entries past n_kv_heads stay -1): a KV head's far keys are read once
     * when any query head of its group is global. -1 not computed. A
     * trace read back from a database holds the step's total in entry 0. */
    int32_t *kv_read;
    /* Where each head looked beyond its local set: the top_k heaviest far
     * positions of its full attention at pos, heaviest first (ties: the
     * earlier position first), at [cell * top_k + rank]; top_pos -1 and
     * top_w NAN past the last (fewer far keys) or when not computed.
     * top_k 0: none recorded (trace_new_top asks for them). */
    int top_k;
    int32_t *top_pos;
    float *top_w;
} StepTrace;

/* Most far positions a trace ranks per head. */
#define TRACE_TOP_MAX 64

/* Allocate a trace for a model shape; all per-head values start as "not
 * computed". Returns NULL on allocation failure. */
StepTrace *trace_new(int n_layers, int n_heads);

/* The same with room for the top_k heaviest far positions of each head
 * (0 … TRACE_TOP_MAX); NULL on allocation failure or a bad top_k. */
StepTrace *trace_new_top(int n_layers, int n_heads, int top_k);

/* Reset every field of t to "not computed", keeping its shape. */
void trace_clear(StepTrace *t);

/* Copy src into dst; both must have the same shape and top_k. */
void trace_copy(StepTrace *dst, const StepTrace *src);

/* Free a trace from trace_new (NULL is fine). */
void trace_free(StepTrace *t);

/* Number of per-head entries (n_layers * n_heads). */
static inline int trace_cells(const StepTrace *t) { return t->n_layers * t->n_heads; }

/* 1 if the architecture makes head cell's layer local (layer_window > 0). */
static inline int trace_is_arch_local(const StepTrace *t, int cell) { return t->layer_window[cell / t->n_heads] > 0; }

/* A layer's kind as the trace JSON and the store name it: "local" for a
 * window W > 0, "global" otherwise (unknown reads as global). */
static inline const char *trace_layer_kind(int32_t window) { return window > 0 ? "local" : "global"; }

/* KV positions the step read, summed over layers and KV heads; -1 if none
 * was recorded. */
long trace_kv_read_total(const StepTrace *t);

/* KV positions full attention reads at this step (every layer and KV
 * head, pos + 1 each); -1 if the KV head count is unknown. */
long trace_kv_full(const StepTrace *t);

#endif
