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

typedef struct {
    int pos;                      /* 0-based position in the sequence */
    int token;                    /* token id fed at pos */
    int is_prompt;                /* 1 if the token came from the prompt */
    char piece[TRACE_PIECE_MAX];  /* printable UTF-8 text of the token */
    float logprob;                /* log p(token | tokens < pos), nats; NAN at pos 0 */
    float entropy;                /* entropy of that predicting distribution, nats */
    double step_us;               /* wall time of the step (prefill: share of the batch) */

    int n_layers, n_heads;        /* shape of every per-head array below */
    float *score;                 /* router σ(x·w_r) in [0,1]; NAN without routers */
    int8_t *gate;                 /* executed branch: 1 global, 0 local */
    float *oracle_mass;           /* softmax mass outside the local set (oracle) */
    float *oracle_err;            /* ||o_full - o_local|| / ||o_full|| */
    float *qada_mass;             /* QAdA estimate of oracle_mass, local-key moments */
    float *qada_bulk_mass;        /* same model, exact running bulk moments (ablation) */
    int32_t *keys_read;           /* keys the executed branch read */
} StepTrace;

/* Allocate a trace for a model shape; all per-head values start as "not
 * computed". Returns NULL on allocation failure. */
StepTrace *trace_new(int n_layers, int n_heads);

/* Reset every field of t to "not computed", keeping its shape. */
void trace_clear(StepTrace *t);

/* Copy src into dst; both must have the same shape. */
void trace_copy(StepTrace *dst, const StepTrace *src);

/* Free a trace from trace_new (NULL is fine). */
void trace_free(StepTrace *t);

/* Number of per-head entries (n_layers * n_heads). */
static inline int trace_cells(const StepTrace *t) { return t->n_layers * t->n_heads; }

#endif
