/* eval_report.h — what `eval` and `sweep` share: their options, one
 * evaluated setting (a row of the table), printing and plotting rows. */
#ifndef AHASCOPE_EVAL_REPORT_H
#define AHASCOPE_EVAL_REPORT_H

#include "app/args.h"
#include "app/eval.h"

typedef struct {
    RunOpts o;
    const char *data, *db, *match, *label;
    long self_n, seq_len, max_seqs, threads;
    int json, plot;
    const char *svg;
    double share;   /* eval --share: the aha τ is chosen to give this global share, or NAN */
} EvalOpts;

typedef struct {
    char name[16], knob[48];
    AttnConfig a;
    StoreEval ev;
    EvalSums s;
    const char *calibrated_on; /* the data its settings were fitted on, when not the evaluated data */
    double weight_bytes, kv_pos_bytes; /* a decode step's weights; K+V of one position of one KV head */
} Row;

/* Evaluate row->a on d (recorded into st when set; info is the runs row
 * template) and summarise it into row; matched names a budget target. */
int eval_row(const Loaded *L, const EvalData *d, const EvalOpts *x, Store *st, StoreRunInfo *info, Row *row,
             const char *matched, Err *e);

/* A θ given as log-odds, as the table shows it: "theta=0.1", or by its
 * distance from 1 with the log-odds when close ("theta=1-2.3e-22 (logit 50.1)"). */
void eval_theta_knob(double theta_logit, char *buf, size_t cap);

/* The table (or --json array) of rows; matched: rows 1.. were set to row 0's
 * global share, so say which could not be brought within a point of it.
 * A row calibrated elsewhere says on what. */
void eval_print_rows(const Row *rows, int n, int json, int matched);

/* --svg FILE and --plot: global share (x) against KL (y), one series per
 * predictor name, so the Pareto picture shows who wins at each budget. */
int eval_plot_rows(const Row *rows, int n, const EvalOpts *x, const char *title, Err *e);

#endif
