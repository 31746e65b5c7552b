/* eval_forced.h — teacher-forced evaluation of an attention policy on
 * held-out sequences (and the making of those sequences): quality against full attention, how much went global, and how
 * well each predictor matches the oracle. Shared by `eval` and `sweep`. */
#ifndef AHASCOPE_EVAL_FORCED_H
#define AHASCOPE_EVAL_FORCED_H

#include "app/args.h"
#include "app/setup.h"
#include "store/store.h"

/* Held-out token sequences, each starting with BOS. */
typedef struct {
    int **seq;
    int *len;
    int *answer_from; /* task items: where each answer begins (its first id's index); NULL for text */
    int answer_apart; /* eval --tasks: the positions predicting answer_from… are the forced answer's, kept
                       * out of every statistic of the prompt and summed apart (EvalSeq's ans_*) */
    int n;
    char desc[1024]; /* "self:N:LEN:SEED" or the data file */
} EvalData;

/* N sequences of len tokens sampled from the model itself (temperature 1,
 * full attention, seed) as one stream, each sequence going on from the
 * sampler state the one before left: the data of train, fit and the
 * calibration sequences, kept so that their routers stay reproducible. */
int eval_data_self(EvalData *d, const Model *m, const Tokenizer *tok, int n, int len, uint64_t seed, Err *e);

/* A text file encoded with the tokenizer and cut into chunks of len tokens
 * (BOS + len-1), at most max_n chunks; or, when its first character is
 * '{', task items (eval_data_items), at most max_n. Errors name the file
 * (empty, too short, an item longer than len). */
int eval_data_file(EvalData *d, const Tokenizer *tok, const char *path, int len, int max_n, Err *e);

/* Task items (a JSON-lines file `ahascope tasks` wrote) as training
 * sequences, one an item: BOS, the prompt, a space, the answer and a full
 * stop, so the model learns to answer where eval asks and to end the
 * answer there; answer_from[i] is the number of ids the prompt alone
 * encodes to (BOS included), where the answer's targets begin. Sequences
 * are as long as their items (at most len; a longer item is an error
 * naming it); train pads a shorter one. */
int eval_data_items(EvalData *d, const Tokenizer *tok, const char *path, int len, Err *e);

/* What eval and sweep evaluate from the model itself: n sequences of len
 * tokens, sequence k sampled alone (temperature 1, full attention, BOS-led
 * samples packed) with a seed mixed from (seed, k) only, so that each shard
 * of sh (args_shard_owns) samples just its own sequences, token for token
 * as an unsharded run does. The desc is "self:N:LEN:SEED", plus " shard I/N". */
int eval_data_self_each(EvalData *d, const Model *m, const Tokenizer *tok, int n, int len, uint64_t seed,
                        const ArgsShard *sh, Err *e);

/* Keep only shard sh's sequences of d (k mod N = I, k counted from 0 in
 * d's order) and say so in its desc; an empty shard is an error naming it. */
int eval_data_shard(EvalData *d, const ArgsShard *sh, Err *e);

/* The shard suffix descs carry (" shard I/N"): eval --from-db strips it to
 * group a sharded evaluation's rows again. */
#define EVAL_SHARD_TAG " shard "

void eval_data_free(EvalData *d);

/* Sequences to calibrate a baseline on (the static heads of
 * --match-budget), none of them evaluated, so the baseline is not fitted to
 * its own test. Self data (file NULL): n more sampled with the seed
 * seed * 7919 + 31, which no evaluation or training stream of this family
 * uses. A file: the first quarter of d's chunks (at least one, and one must
 * remain), moved out of d; both descs then name their chunks. */
int eval_data_calibration(EvalData *cal, EvalData *d, const Model *m, const Tokenizer *tok, const char *file, int n,
                          int len, uint64_t seed, Err *e);

/* The data `ahascope train` learns from: the text file when file is set (task
 * items when its first character is '{'), else
 * n_self sequences sampled from the model with a seed derived from the run's
 * seed. The last *n_held sequences (1 in 8, at least 1) are held out; the
 * shipped-routers test regenerates them through this function. */
int train_data_make(EvalData *d, int *n_held, const Model *m, const Tokenizer *tok, const char *file, int n_self,
                    int len, uint64_t seed, Err *e);

#define EVAL_N_PRED DECIDE_COUNT /* score[k] is predictor k of engine/decide.h */

/* How well a predictor's value ranks the oracle's labels: counts of
 * positive and negative labels per bin of the value (router scores as
 * log-odds, like the estimates), EVAL_AUC_BINS bins over ±EVAL_AUC_RANGE
 * nats, the tails in the end bins. Values within one bin count as ties. */
#define EVAL_AUC_BINS 2048
#define EVAL_AUC_RANGE 64.0
typedef struct {
    int32_t pos[EVAL_AUC_BINS], neg[EVAL_AUC_BINS];
} EvalAuc;

/* Area under the ROC curve of a: the chance a positive outranks a negative
 * (ties half); NAN without both labels. */
double eval_auc(const EvalAuc *a);

/* Add one (value, label) pair of predictor k to a's ranking counts (the
 * router score as log-odds; NAN values and the executed gate are left
 * out): what eval_score_step does for each labelled cell, and the TUI's
 * distributions pane, so the two AUCs are one computation. */
void eval_auc_add(EvalAuc *a, DecidePred k, float v, int label);

/* One sequence's (or task item's) own numbers: what intervals over
 * sequences resample, sequences weighted alike. */
typedef struct {
    double kl;           /* mean KL(full || policy) per predicted token */
    double nll;          /* mean NLL per predicted token, from the traces' log-probabilities: what a
                          * database keeps, so --from-db recounts it to the bit */
    double ans_kl;       /* answer_apart: mean KL per token of the forced answer (at the positions
                          * predicting each), */
    double ans_nll;      /* the whole answer's NLL under the policy (nats: -log P(answer | prompt)), */
    double ans_nll_full; /* and under full attention */
} EvalSeq;

typedef struct {
    long n_tokens;               /* predicted tokens (positions 1 … len-1) */
    double nll, nll_full, kl;    /* sums over predicted tokens, nats */
    double gate_sum, gate_n;     /* executed gates, at positions with a choice (far keys exist) */
    double keys_read, keys_full; /* keys read per query head vs full attention */
    double kv_read, kv_full;     /* KV positions read per KV head vs full attention: the memory traffic */
    double kv_local;             /* KV positions an all-local step would read (the lower bound) */
    long steps;                  /* positions those sums are over */
    StoreScore score[EVAL_N_PRED];
    EvalAuc auc[EVAL_N_PRED];    /* each predictor's ranking against the labels (not the executed gate) */
    long *head_counts;           /* optional, the caller's [n_layers*n_heads][2]: oracle global, known */
    double lp_sum;               /* the traces' log-probabilities summed (positions 1 …), */
    long lp_n;                   /* over this many positions: a sequence's mean NLL is cut from them */
    EvalSeq *seqs;               /* optional, the caller's [d->n]: each sequence's numbers (kept like head_counts) */
    int share_only;              /* only the global share is wanted (threshold search): skip the
                                  * full-attention pass and the profiling, about 3x less work */
    int ref_set;                 /* 1: label with ref_theta_logit, not the policy's θ. A matched */
    double ref_theta_logit;      /* predictor moves its own θ, the ground truth must stay put. */
} EvalSums;

/* Policy a on every sequence (out is reset, except head_counts, which is
 * added to when set, seqs, filled when set, ref_set/ref_theta_logit and share_only); with st non-NULL each sequence is recorded
 * as a run (info is the row template, eval_id its evaluation). progress
 * prints a bar on stderr. With d->answer_apart each item's prompt is fed
 * alone and its answer then continues the same state, so every statistic
 * of the prompt is what the prompt alone gives, and the answer costs no
 * second pass over it (share_only feeds the prompt only). */
int eval_policy(const Model *m, const Tokenizer *tok, const AttnConfig *a, const EvalData *d, int threads, Store *st,
                const StoreRunInfo *info, int64_t eval_id, int progress, EvalSums *out, Err *e);

/* Name each score of s after its predictor (engine/decide.h order). */
void eval_sums_name(EvalSums *s);

/* Add one position's decisions to s: shares, reads, each predictor's
 * confusion and ranking against the oracle (labels at s->ref_theta_logit
 * when ref_set), and its log-probability. eval_policy calls it on live
 * traces, --from-db on traces read back from a database. */
void eval_score_step(const StepTrace *t, const AttnConfig *a, EvalSums *s);

/* The summary numbers of sums into ev (perplexities, mean KL, shares). */
void eval_summarise(const EvalSums *s, StoreEval *ev);

#endif
