/* predictors.h — every predictor and policy ahascope knows, one list.
 *
 * Everything that names, parses, lists or stores a predictor is generated
 * from PREDICTORS: the Policy enum (engine/aha.h), DecidePred
 * (engine/decide.h), GateRule (engine/attn.h), their name tables, parsers
 * and lists of words (`--help`, error messages), the TUI's labels
 * (views/explain.c), and the predictor columns of the SQL views
 * (store/schema.c) and compare's order (store/compare.c). What a predictor
 * computes is not here: see "Adding a predictor" in engine/README.md.
 *
 *   X(ID, word, field, title, brief, thr, policy, dec, ours, sql, sql_names)
 *
 *   ID         enum suffix: POLICY_ID, DECIDE_ID, GATE_ID
 *   word       its name everywhere: --policy, --predictor, the SQL, eval_scores
 *   field      the per-head field of engine/trace.h its decision thresholds
 *              (none for a policy whose inputs a trace does not hold)
 *   title      its label in the TUI; brief: the inspector's short row label
 *   thr        what its decision compares (PredThr): GATE the executed gate
 *              itself, TAU the router score against τ, THETA a mass's log-odds
 *              against logit(θ) (decided inside attention: a GateRule), P a
 *              uniform against p, NONE nothing (full, local, static)
 *   policy     1: a --policy (in Policy, in this order)
 *   dec        YES: scored against the oracle (in DecidePred, in this order);
 *              LABEL: the oracle itself, last in DecidePred; NO: executed-only
 *              (scored as the `executed` gate of a run under that policy)
 *   ours       1: this project's addition, not the paper's
 *   sql        where the SQL views' lists of columns put it: SAME line as the
 *              one before, WRAP onto a new line, NO not in the views;
 *              sql_names: the same for the `predictions` view's list of
 *              names (FIRST opens it). These line breaks are schema version
 *              3's, frozen: a database's stored view text is compared with
 *              this version's byte for byte. A new predictor is NO in both
 *              until a schema version adds it to the views.
 *
 * The order is the policies' order (--help, the TUI's `p` cycle); DecidePred
 * takes the scored ones in this order, then the label. */
#ifndef AHASCOPE_PREDICTORS_H
#define AHASCOPE_PREDICTORS_H

/* The rows, each through M(X, row…): PREDICTORS hands every row to X;
 * other orders and selections of the rows (DECIDE_PREDICTORS) pass their
 * own M. */
#define PRED_TABLE(M, X)                                                                                      \
    M(X, EXECUTED, "executed", gate, "gate", "", GATE, 0, YES, 0, SAME, FIRST)                                 \
    M(X, AHA, "aha", score, "AHA", "", TAU, 1, YES, 0, SAME, SAME)                                             \
    M(X, FULL, "full", none, "full", "", NONE, 1, NO, 0, NO, NO)                                               \
    M(X, LOCAL, "local", none, "local", "", NONE, 1, NO, 0, NO, NO)                                            \
    M(X, ORACLE, "oracle", oracle_logit, "oracle", "", THETA, 1, LABEL, 0, SAME, NO)                           \
    M(X, QADA, "qada", qada_logit, "QAdA", "QAdA", THETA, 1, YES, 0, WRAP, SAME)                               \
    M(X, QADA_BULK, "qada_bulk", qada_bulk_logit, "qada_bulk", "q_bulk", THETA, 1, YES, 1, SAME, WRAP)         \
    M(X, QADA_REM, "qada_rem", qada_rem_logit, "qada_rem", "q_rem", THETA, 1, YES, 1, WRAP, SAME)              \
    M(X, QADA_REM_BULK, "qada_rem_bulk", qada_rem_bulk_logit, "qada_rem_bulk", "q_rem_b", THETA, 1, YES, 1,    \
      WRAP, SAME)                                                                                              \
    M(X, STATIC, "static", none, "static", "", NONE, 1, NO, 0, NO, NO)                                         \
    M(X, RANDOM, "random", none, "random", "", P, 1, NO, 0, NO, NO)                                          \
    PRED_CANARY_ROW(M, X)

/* The canary build's extra predictor (see TRACE_CANARY_FIELD in
 * engine/trace.h): scored, not a policy, thresholding the canary field. */
#ifdef AHASCOPE_CANARY
#define PRED_CANARY_ROW(M, X) M(X, CANARY, "canary", canary_logit, "canary", "canary", THETA, 0, YES, 1, NO, NO)
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

/* The columns' tokens as 0/1 conditions for PRED_IF. */
#define PRED_SCORED_YES 1
#define PRED_SCORED_LABEL 0
#define PRED_SCORED_NO 0
#define PRED_LABEL_YES 0
#define PRED_LABEL_LABEL 1
#define PRED_LABEL_NO 0
#define PRED_IN_SQL_SAME 1
#define PRED_IN_SQL_WRAP 1
#define PRED_IN_SQL_NO 0
#define PRED_OUT_SQL_SAME 0
#define PRED_OUT_SQL_WRAP 0
#define PRED_OUT_SQL_NO 1
#define PRED_THETA_THETA 1
#define PRED_THETA_GATE 0
#define PRED_THETA_TAU 0
#define PRED_THETA_P 0
#define PRED_THETA_NONE 0

/* The text before a predictor in one of the SQL views' lists: a space on
 * the same line, or a new line with the list's indent. */
#define PRED_SQL_SEP_SAME(indent) " "
#define PRED_SQL_SEP_WRAP(indent) "\n" indent
#define PRED_SQL_SEP(layout, indent) PRED_SQL_SEP_##layout(indent)

#endif
