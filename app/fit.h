/* fit.h — `ahascope fit`: AHA routers fitted straight to the oracle's
 * labels, the model frozen and no backward pass through it, so any
 * architecture the forward pass runs can be given routers.
 *
 * The model runs under full attention with the oracle profiled over every
 * sequence; at each position that has far keys, every (layer, head) gives
 * one example: what the router reads there (RunState.router_in) and the
 * label out_mass > θ, weighted by 1 or by the output change going local
 * would cause (oracle_err), the positives then weighted up so they carry
 * --balance of the total (fit_balance_factor). Each layer's heads are
 * then fitted together by L2-regularised logistic regression
 * (engine/train_logfit.h) on the training sequences, and one threshold τ for
 * the whole model is set so that the global share on them is --share (or τ is
 * given). The held-out sequences measure agreement with the oracle.
 *
 * The model pass can be split across processes: each shard writes its
 * examples (fit_shard_write) and one process fits on all of them
 * (fit_routers_from_shards), with the result the unsharded fit's.
 */
#ifndef AHASCOPE_FIT_H
#define AHASCOPE_FIT_H

#include "app/eval_forced.h"
#include "engine/routers.h"

typedef struct {
    int window, sinks;
    double theta_logit;   /* the oracle's label threshold, log-odds */
    double l2;            /* logistic penalty (engine/train_logfit.h) */
    int iters;            /* solver iterations */
    int weight_err;       /* 1: weight each example by oracle_err */
    double balance;       /* share of the training weight the positives carry, or 0: as labelled */
    double share;         /* target global share, or NAN when tau is given */
    double tau;           /* the threshold to use as is, or NAN */
    int threads;
    int progress;         /* a bar on stderr */
} FitConfig;

typedef struct {
    Routers r;            /* fitted weights and biases (r.b always set) */
    double tau;           /* the threshold that hits the share */
    double train_share;   /* global share on the training examples at tau */
    double held_share, held_agree, held_precision, held_recall; /* held-out, against the oracle */
    long n_train, n_held; /* examples (positions with far keys) per (layer, head) */
    long tokens;          /* tokens fed */
    double collect_s, fit_s; /* seconds running the model, seconds fitting */
    int n_layers_no_choice; /* layers without a labelled example (an architecture's local layers): routers 0 */
} FitResult;

/* Fit routers for m on d, whose last n_held sequences are held out.
 * Returns 0, or -1 with e set (out of memory, no position with far keys). */
int fit_routers(const Model *m, const EvalData *d, int n_held, const FitConfig *c, FitResult *out, Err *e);

/* What a shard file of the data pass holds beside its examples: the data
 * it was cut from, which every shard of one fit shares. */
typedef struct {
    char data[1024];        /* the data's desc (eval_forced.h), "self:N:LEN:SEED" or the file */
    int n_seqs, n_held;     /* sequences of the whole data, the last n_held held out */
    uint64_t seed;          /* --seed of the data */
    char model_sha256[65];  /* the model labelled */
    long tokens;            /* tokens fed: this shard's, or all of them once combined */
} FitShardInfo;

/* The data pass of shard sh alone (sequences k with k mod N = I of d):
 * its labelled examples written atomically to path as safetensors
 * (tensors x, y, wt, seq; metadata: c's window, sinks, θ and weighting,
 * info and the shard), for fit_routers_from_shards. Sets *rows. */
int fit_shard_write(const Model *m, const EvalData *d, int n_held, const ArgsShard *sh, const FitConfig *c,
                    FitShardInfo *info, const char *path, long *rows, Err *e);

/* Routers fitted on the shard files paths[0..n) of one data pass: every
 * shard of its N exactly once, each labelled under c's window, sinks, θ
 * and weighting and on the model of SHA-256 model_sha256; the rows merged
 * back in sequence order, so the result is the unsharded fit_routers'
 * bit for bit. Fills info from the files (tokens summed). Every length and
 * count in a file is checked before use; errors name the file. */
int fit_routers_from_shards(const Model *m, const char *const *paths, int n, const FitConfig *c,
                            const char *model_sha256, FitShardInfo *info, FitResult *out, Err *e);

/* The factor on the positives' weights that makes them carry `balance` of
 * the total, when they carry pos of all: 1 when balance is 0 or either
 * class is empty (nothing to balance). */
double fit_balance_factor(double pos, double all, double balance);

/* Free the routers of a result (safe on a zeroed one). */
void fit_result_free(FitResult *r);

#endif
