/* eval_table.h — what `eval` and `sweep` share: their options, one
 * evaluated setting (a row of the table), printing and plotting rows. */
#ifndef AHASCOPE_EVAL_TABLE_H
#define AHASCOPE_EVAL_TABLE_H

#include "app/args.h"
#include "app/eval_forced.h"

typedef struct {
    RunOpts o;
    const char *data, *db, *match, *label;
    long self_n, seq_len, max_seqs, threads;
    int json, plot;
    const char *svg;
    ArgsShard shard;     /* --shard I/N: this process's sequences (0/1: all) */
    const char *from_db; /* --from-db DB: re-summarise DB's evaluations instead of running any */
    double share;        /* eval --share: the aha τ is chosen to give this global share, or NAN */
    const char *tasks;   /* eval --tasks FILE: score task items by exact match (app/eval_tasks.h) */
    const char *static_rank; /* --match-budget with --static-heads duo:FILE|calib:DB#RUN: the static row's
                              * heads ranked by that calibration instead of eval's own */
} EvalOpts;

/* --shard and --from-db, the flags eval and sweep share for evaluations
 * split across machines: consumes flag f's value; 1 if f was one of them,
 * 0 if not, -1 on a bad value. */
int eval_opts_shard_flag(EvalOpts *x, const char *f, Args *a, Err *e);

/* Refuse what --shard and --from-db cannot be combined with. */
int eval_opts_shard_check(const EvalOpts *x, Err *e);

/* The evaluated data: --data's chunks or --self sequences, this shard's only. */
int eval_opts_data(const EvalOpts *x, const AppLoaded *L, int len, EvalData *d, Err *e);


typedef struct {
    char name[16], knob[48];
    AttnConfig a;
    StoreEval ev;
    EvalSums s;
    const char *calibrated_on; /* the data its settings were fitted on, when not the evaluated data */
    double weight_bytes, kv_pos_bytes; /* a decode step's weights; K+V of one position of one KV head */
    double *seq_kl;      /* set by the caller (and freed by it) for intervals: each sequence's KL */
    int has_ci;          /* kl_ci (and kl_diff_ci after row 0) hold 95% bootstrap intervals over sequences */
    double kl_seqs;      /* the mean of the sequences' mean KL per token: the point kl_ci surrounds */
    double kl_ci[2];     /* the mean KL per token, sequences weighted alike */
    double kl_diff_ci[2]; /* this row's KL minus row 0's, paired sequence by sequence */
} EvalRow;

/* --match-budget and --tasks: the bootstrap intervals of every row's KL
 * and of its paired difference from row 0's (rows[i].seq_kl filled by
 * eval_row over n_seqs sequences), so a gap between two predictors says
 * whether it is real. */
void eval_rows_kl_intervals(EvalRow *rows, int n, int n_seqs);

/* The lines of those intervals under a table, one per row that has them;
 * unit names what was resampled ("sequence", "item"). */
void eval_print_kl_intervals(const EvalRow *rows, int n, const char *unit);

/* --from-db: load the model for the byte columns and read DB's rows (label
 * NULL: all); *rows heap. Returns the count or -1. */
int eval_opts_rows_from_db(EvalOpts *x, const char *label, EvalRow **rows, Err *e);

/* Evaluate row->a on d (recorded into st when set; info is the runs row
 * template) and summarise it into row; matched names a budget target. */
int eval_row(const AppLoaded *L, const EvalData *d, const EvalOpts *x, Store *st, StoreRunInfo *info, EvalRow *row,
             const char *matched, Err *e);

/* A θ given as log-odds, as the table shows it: "theta=0.1", or by its
 * distance from 1 with the log-odds when close ("theta=1-2.3e-22 (logit 50.1)"). */
void eval_theta_knob(double theta_logit, char *buf, size_t cap);

/* The table (or --json array) of rows; matched: rows 1.. were set to row 0's
 * global share, so say which could not be brought within a point of it.
 * A row calibrated elsewhere says on what. */
void eval_print_rows(const EvalRow *rows, int n, int json, int matched);

/* --svg FILE and --plot: global share (x) against KL (y), one series per
 * predictor name, so the Pareto picture shows who wins at each budget. */
int eval_plot_rows(const EvalRow *rows, int n, const EvalOpts *x, const char *title, Err *e);

#endif
