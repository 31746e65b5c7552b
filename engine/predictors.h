/* predictors.h — every predictor and policy ahascope knows, one list.
 *
 * What names, parses or lists a predictor comes from PREDICTORS: at compile
 * time the enums and switches that need one name per row (Policy in
 * engine/aha.h, DecidePred in engine/decide.h, GateRule in engine/attn.h,
 * the forward pass's rules, decide_value); at run time PRED_INFO, the rows
 * as plain data, which everything else reads (names, parsers, `--help`
 * lists, the TUI's labels and sparklines, the legend's note). A database
 * keeps the predictors it was written with as rows of its own
 * (store/SCHEMA.md), so nothing here is frozen by a schema version. What a
 * predictor computes is not here: see "Adding a predictor" in
 * engine/README.md.
 *
 *   X(ID, word, field, title, brief, spark, thr, policy, dec, ours)
 *
 *   ID         enum suffix: POLICY_ID, DECIDE_ID, GATE_ID
 *   word       its name everywhere: --policy, --predictor, the SQL, eval_scores
 *   field      the per-head field of engine/trace.h its decision thresholds
 *              (none for a policy whose inputs a trace does not hold)
 *   title      its label in the TUI; brief: the inspector's short row label
 *   spark      the label of its sparkline in the inspector ("" for none)
 *   thr        what its decision compares (PredThr): GATE the executed gate
 *              itself, TAU the router score against τ, THETA a mass's log-odds
 *              against logit(θ) (decided inside attention: a GateRule), P a
 *              uniform against p, NONE nothing (full, local, static)
 *   policy     1: a --policy (in Policy, in this order)
 *   dec        YES: scored against the oracle (in DecidePred, in this order);
 *              LABEL: the oracle itself, last in DecidePred; NO: executed-only
 *              (scored as the `executed` gate of a run under that policy)
 *   ours       1: this project's addition, not the paper's (the help's note)
 *
 * The order is the policies' order (--help, the TUI's `p` cycle); DecidePred
 * takes the scored ones in this order, then the label. */
#ifndef AHASCOPE_PREDICTORS_H
#define AHASCOPE_PREDICTORS_H

#include <stddef.h>

/* The rows, each through M(X, row…): PREDICTORS hands every row to X;
 * other selections of the rows (DECIDE_PREDICTORS) pass their own M. */
#define PRED_TABLE(M, X)                                                                                      \
    M(X, EXECUTED, "executed", gate, "gate", "", "", GATE, 0, YES, 0)                                         \
    M(X, AHA, "aha", score, "AHA", "", "score", TAU, 1, YES, 0)                                               \
    M(X, FULL, "full", none, "full", "", "", NONE, 1, NO, 0)                                                  \
    M(X, LOCAL, "local", none, "local", "", "", NONE, 1, NO, 0)                                               \
    M(X, ORACLE, "oracle", oracle_logit, "oracle", "", "oracle", THETA, 1, LABEL, 0)                          \
    M(X, QADA, "qada", qada_logit, "QAdA", "QAdA", "qada", THETA, 1, YES, 0)                                  \
    M(X, QADA_BULK, "qada_bulk", qada_bulk_logit, "qada_bulk", "q_bulk", "q_bulk", THETA, 1, YES, 1)          \
    M(X, QADA_REM, "qada_rem", qada_rem_logit, "qada_rem", "q_rem", "", THETA, 1, YES, 1)                     \
    M(X, QADA_REM_BULK, "qada_rem_bulk", qada_rem_bulk_logit, "qada_rem_bulk", "q_rem_b", "", THETA, 1, YES, 1) \
    M(X, STATIC, "static", none, "static", "", "", NONE, 1, NO, 0)                                            \
    M(X, RANDOM, "random", none, "random", "", "", P, 1, NO, 0)                                               \
    PRED_CANARY_ROW(M, X)

/* The canary build's extra predictor (see TRACE_CANARY_FIELD in
 * engine/trace.h): scored, not a policy, thresholding the canary field. */
#ifdef AHASCOPE_CANARY
#define PRED_CANARY_ROW(M, X) M(X, CANARY, "canary", canary_logit, "canary", "canary", "", THETA, 0, YES, 1)
#else
#define PRED_CANARY_ROW(M, X)
#endif

#define PRED_ROW(X, ...) X(__VA_ARGS__)
#define PREDICTORS(X) PRED_TABLE(PRED_ROW, X)

/* What a predictor's decision compares (the list's thr column). */
typedef enum { PRED_THR_NONE, PRED_THR_GATE, PRED_THR_TAU, PRED_THR_THETA, PRED_THR_P } PredThr;

/* PRED_IF(c, ...): the arguments after c when c expands to 1, nothing when
 * it expands to 0; how the generators pick their rows of the list. */
#define PRED_IF(c, ...) PRED_IF_I(c, __VA_ARGS__)
#define PRED_IF_I(c, ...) PRED_IF_##c(__VA_ARGS__)
#define PRED_IF_0(...)
#define PRED_IF_1(...) __VA_ARGS__

/* The dec and thr columns' tokens as 0/1 conditions for PRED_IF. */
#define PRED_SCORED_YES 1
#define PRED_SCORED_LABEL 0
#define PRED_SCORED_NO 0
#define PRED_LABEL_YES 0
#define PRED_LABEL_LABEL 1
#define PRED_LABEL_NO 0
#define PRED_THETA_THETA 1
#define PRED_THETA_GATE 0
#define PRED_THETA_TAU 0
#define PRED_THETA_P 0
#define PRED_THETA_NONE 0

/* One row of the list as data, for code that reads it at run time. */
typedef struct {
    const char *word, *field, *title, *brief, *spark;
    PredThr thr;
    int policy, scored, label, ours;
} PredInfo;

/* Each row's place in the list: PRED_ROW_ID. */
typedef enum {
#define PRED_ROW_ENUM(ID, word, field, title, brief, spark, thr, policy, dec, ours) PRED_ROW_##ID,
    PREDICTORS(PRED_ROW_ENUM)
#undef PRED_ROW_ENUM
    PRED_COUNT
} PredRow;

/* The rows, in the list's order (engine/decide.c holds them). */
extern const PredInfo PRED_INFO[PRED_COUNT];

/* The words of the rows with `policy` (1: the policies; 0: all), or those
 * scored against the oracle (scored 1), joined by sep into buf (cap bytes):
 * what `--help` and error messages list. */
void pred_words(char *buf, size_t cap, int policy, int scored, const char *sep);

#endif
