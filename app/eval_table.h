/* eval_table.h — what `eval` and `sweep` share: their options, one
 * evaluated setting (a row of the table), printing and plotting rows. */
#ifndef AHASCOPE_EVAL_TABLE_H
#define AHASCOPE_EVAL_TABLE_H

#include <stddef.h>

#include "app/args.h"
#include "app/eval_forced.h"
#include "engine/cost.h"

/* Most budgets one eval --tasks --share list holds. */
#define EVAL_MAX_SHARES 16

typedef struct {
    RunOpts o;
    const char *data, *db, *match, *label;
    long self_n, seq_len, max_seqs, threads;
    int json, plot;
    const char *svg;
    ArgsShard shard;     /* --shard I/N: this process's sequences (0/1: all) */
    const char *from_db; /* --from-db DB: re-summarise DB's evaluations instead of running any */
    double share;        /* eval --share: the aha τ is chosen to give this global share, or NAN */
    int by_keys;         /* eval --keys: share is a target share of keys read per query head (keys/qh), not of gates */
    double shares[EVAL_MAX_SHARES]; /* eval --tasks --share S,S,...: every budget, in order; share the first */
    int n_shares;
    long grid;           /* eval --tasks --grid N: accuracy by needle depth (N buckets) and context (app/eval_grid.h) */
    const char *grid_svg; /* --grid-svg FILE: the grids as heatmaps */
    const char *tasks;   /* eval --tasks FILE[,FILE...]: score task items by exact match (app/eval_sets.h) */
    const char *calibrate_items; /* --calibrate-items FILE: task items the thresholds are chosen on */
    long choice_resamples;       /* --choice-resamples N: the calibration items resampled N times (0: not) */
    const char *static_rank; /* --match-budget with --static-heads duo:FILE|calib:DB#RUN: the static row's
                              * heads ranked by that calibration instead of eval's own */
} EvalOpts;

/* Refuse what --shard and --from-db cannot be combined with. */
int eval_opts_shard_check(const EvalOpts *x, Err *e);

/* The evaluated data: --data's chunks or --self sequences, this shard's only. */
int eval_opts_data(const EvalOpts *x, const AppLoaded *L, int len, EvalData *d, Err *e);


/* One statistic of a row over sequences (or items), sequences weighted
 * alike: the mean of their values, its 95% bootstrap interval, and the
 * interval of the row's difference from the reference row's (row 0),
 * paired sequence by sequence. */
typedef struct {
    double mean, ci[2], diff_ci[2];
} EvalCi;

/* Which intervals a row holds (EvalRow.ci): they are asked for by what
 * each table can show, and --from-db can recount only the NLL. */
enum {
    EVAL_CI_KL = 1,     /* kl: mean KL per predicted token */
    EVAL_CI_NLL = 2,    /* nll: mean NLL per predicted token, shown as perplexity */
    EVAL_CI_ANSWER = 4, /* ans_kl, ans_nll: at a task item's forced answer */
};

typedef struct {
    char name[16], knob[48];
    AttnConfig a;
    StoreEval ev;
    EvalSums s;
    const char *calibrated_on; /* the data its settings were fitted on, when not the evaluated data */
    double weight_bytes, kv_pos_bytes; /* a decode step's weights; K+V of one position of one KV head */
    EvalSeq *seqs;       /* set by the caller (and freed by it) for intervals: each sequence's numbers */
    unsigned ci;         /* EVAL_CI_* bits: which of the intervals below hold */
    EvalCi kl, nll, ans_kl, ans_nll;
    CostFootprint kv_held, kv_held_full; /* eval_row: the KV footprint (engine/cost.h) over the evaluated
                                          * positions (a task item's prompt), its own and full attention's */
} EvalRow;

/* The bootstrap intervals `what` (EVAL_CI_* bits) of every row that has
 * seqs (filled by eval_row over n_seqs sequences), each with its paired
 * difference from row 0's, so a gap between two predictors says whether
 * it is real. Every interval draws the same resamples (STATS_BOOT_SEED). */
void eval_rows_intervals(EvalRow *rows, int n, int n_seqs, unsigned what);

/* The lines of the KL and perplexity intervals under a table, one per row
 * that has them, differences after row 0; unit names what was resampled
 * ("sequence", "item"). */
void eval_print_intervals(const EvalRow *rows, int n, const char *unit);

/* The lines of the forced answer's intervals (EVAL_CI_ANSWER) under a
 * task table, one per row that has them. */
void eval_print_answer_intervals(const EvalRow *rows, int n);

/* A JSON member `, "key": [...]`: each sequence's value at offset off of
 * EvalSeq, every digit (null where not finite), for pairings and recounts
 * of one's own. */
void eval_json_list(const char *key, const EvalSeq *seqs, int n, size_t off);

/* --from-db: load the model for the byte columns and read DB's rows (label
 * NULL: all) and draw each row's perplexity interval over its sequences;
 * *rows heap. Returns the count or -1. */
int eval_opts_rows_from_db(EvalOpts *x, const char *label, EvalRow **rows, Err *e);

/* Evaluate row->a on d (recorded into st when set; info is the runs row
 * template) and summarise it into row, its KV footprint too (summed over
 * the sequences, the peak the largest); matched names a budget target. */
int eval_row(const AppLoaded *L, const EvalData *d, const EvalOpts *x, Store *st, StoreRunInfo *info, EvalRow *row,
             const char *matched, Err *e);

/* A θ given as log-odds, as the table shows it: "theta=0.1", or by its
 * distance from 1 with the log-odds when close ("theta=1-2.3e-22 (logit 50.1)"). */
void eval_theta_knob(double theta_logit, char *buf, size_t cap);

/* A multi-choice router's row setting: "windows=8,64 tau=0.5". */
void eval_windows_knob(const AttnConfig *a, char *buf, size_t cap);

/* The table (or --json array) of rows; matched: rows 1.. were set to row 0's
 * global share, so say which could not be brought within a point of it.
 * A row calibrated elsewhere says on what. */
void eval_print_rows(const EvalRow *rows, int n, int json, int matched);

/* --svg FILE and --plot: global share (x) against KL (y), one series per
 * predictor name, so the Pareto picture shows who wins at each budget. */
int eval_plot_rows(const EvalRow *rows, int n, const EvalOpts *x, const char *title, Err *e);

#endif
