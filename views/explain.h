/* explain.h — the inspector's verdicts in words: for one (position, head)
 * cell, what each predictor saw, the threshold it compared against, what it
 * decided, and whether that agrees with the oracle. Pure text from the view
 * model's header (τ, θ, policy) and one StepTrace, so it is tested without
 * curses; every decision comes from engine/decide.h, never recomputed here.
 * Also where the head looked: its attention weights (ViewAttn) split into
 * sinks, window and far, with the heaviest far positions and their tokens.
 *
 * ASCII mode (m->ascii) spells τ, θ, ≤ and → out as tau, theta, <= and ->.
 */
#ifndef AHASCOPE_VIEW_EXPLAIN_H
#define AHASCOPE_VIEW_EXPLAIN_H

#include "views/metric.h"

/* One line per predictor, in the inspector's sparkline order, then the
 * executed gate, then the REM-corrected pair (this project's), which the
 * inspector has no sparkline rows for: it draws the first
 * VIEW_EXPLAIN_INSPECTOR lines. A position without far keys has one line. */
enum {
    VIEW_EXPLAIN_ROUTER,
    VIEW_EXPLAIN_ORACLE,
    VIEW_EXPLAIN_QADA,
    VIEW_EXPLAIN_QADA_BULK,
    VIEW_EXPLAIN_GATE,
    VIEW_EXPLAIN_INSPECTOR,
    VIEW_EXPLAIN_QADA_REM = VIEW_EXPLAIN_INSPECTOR,
    VIEW_EXPLAIN_QADA_REM_BULK,
    VIEW_EXPLAIN_LINES
};

#define VIEW_EXPLAIN_CAP 128

typedef struct {
    int n;                                            /* lines filled */
    char line[VIEW_EXPLAIN_LINES][VIEW_EXPLAIN_CAP];  /* UTF-8 (ASCII in ascii mode) */
    char brief[VIEW_EXPLAIN_LINES][VIEW_EXPLAIN_CAP]; /* the same, short enough for a narrow pane */
    int decision[VIEW_EXPLAIN_LINES];                 /* 1 global, 0 local, -1 none */
    /* The agreement ending a line: where it starts in line and in brief (0:
     * none) and its class as a swatch (VIEW_SW_BOTH_GLOBAL …, metric.h), so
     * it can be tinted like the agreement metric's cells. */
    int agree_at[VIEW_EXPLAIN_LINES], brief_agree_at[VIEW_EXPLAIN_LINES], agree_sw[VIEW_EXPLAIN_LINES];
} ViewExplain;

/* Fill out with the verdicts at one cell of t under m's τ and θ, e.g.
 * "router 0.51 > τ 0.50 → global · needed and taken", briefly "AHA 0.51 >
 * τ 0.50 → global · agrees" and "oracle 31% > θ 10% → needed". */
void view_explain(const ViewModel *m, const StepTrace *t, int cell, ViewExplain *out);

/* The agreement of a decision with the oracle's label: for the decision
 * the policy executed "needed and taken", "missed", "needless", "not
 * needed, not taken"; for one that was only computed alongside (executed
 * 0) what it would have done: "needed, would take it", "would miss it",
 * "would be needless", "not needed, would skip it". NULL if either is unknown. */
const char *view_explain_agreement(int decision, int label, int executed);

/* A share p on [0, 1] as a whole percentage, as every pane prints masses:
 * "21%", tails that would round to 0% or 100% as "<1%" and ">99%". */
void view_share_text(char *buf, size_t n, double p);

/* An attention weight with two significant digits however small ("0.41",
 * "0.0031", "2e-07"), so a light far key at long context never reads 0.00. */
void view_weight_text(char *buf, size_t n, double w);

/* A value on [0, 1] (a score, τ, θ) at `digits` decimals, more where
 * that would round it to 0 or 1 ("0.001", "0.9995"), and a tail form
 * past four ("<0.0001", ">0.9999"): a threshold set at 0.001 never reads
 * 0.00. 0, 1 and values outside print at `digits`. */
void view_unit_text(char *buf, size_t n, double v, int digits);

/* "tau 0.50, theta 0.001", or with eq "=" "tau=0.50, theta=0.001": the
 * two thresholds (θ as a probability) in view_unit_text's forms at two
 * decimals, the words every status line and message gives them. */
void view_tau_theta_text(char *buf, size_t n, const char *eq, double tau, double theta);

/* Far positions ranked at most. */
#define VIEW_ATTN_TOP 8

/* Where one head's attention went at one position. */
typedef struct {
    double sinks, window, far; /* mass on each part of the context (sums to the weights' total) */
    int window_start;          /* first window position: pos - window + 1, at least 0 */
    int n_top;                 /* far positions ranked, heaviest first (ties: earlier first) */
    int top_pos[VIEW_ATTN_TOP];
    float top_w[VIEW_ATTN_TOP];
} ViewAttnSplit;

/* Split at's weights by the local set it describes, the engine's local set:
 * positions below at->sinks are sinks, the others from window_start on the
 * window, the rest far. A window of 0 means not known: nothing counts as far. */
void view_attn_split(const ViewAttn *at, ViewAttnSplit *s);

/* "window 79% · far 21% · pos 12 \"Lily\" 0.41 · …" into buf (sinks first
 * when there are any): as many far positions as fit in max_w columns, their
 * text from m's history. */
void view_explain_attn(const ViewModel *m, const ViewAttn *at, const ViewAttnSplit *s, int max_w, char *buf,
                       size_t n);

/* "recorded: far 21% · pos 12 \"Lily\" 0.41 · …": where the head of cell
 * looked at t, from the far positions the run recorded (t->top_k of them;
 * the far share from the oracle's log-odds), for a replay without the
 * model. Returns 0, writing nothing, when t holds none. */
int view_explain_recorded(const ViewModel *m, const StepTrace *t, int cell, int max_w, char *buf, size_t n);

#endif
