/* ablate_diff.h — what an ablation changes: the parent's and the ablated
 * child's next-token distributions over the same tokens, and their greedy
 * continuations.
 *
 * The traces record only the log-probability of the token that came, so
 * the distributions are recomputed here: two sessions of the model, one
 * under the parent's settings and one under the child's (the same settings
 * with a head forced from `from` on), fed the same tokens. Positions before
 * `from` are identical in both and are fed as one prefill; from `from` on
 * the two are fed a token at a time and compared at every position.
 *
 * At position t (from ≤ t < n) the distributions are p (parent) and q
 * (child) over the vocabulary, each the softmax of that position's logits,
 * the distribution predicting token t+1. Defined once, here:
 *   KL(parent ‖ child) at t = Σ_v p(v) (ln p(v) − ln q(v)), in nats (natural log);
 *   −log p under the parent = −ln p(ids[t+1]), under the child −ln q(ids[t+1]),
 *   in nats, and NAN at the last position n−1, whose next token is not one
 *   of the run's.
 * Then both sessions generate up to k tokens greedily (argmax) from the end,
 * the ablation still in force in the child's. */
#ifndef AHASCOPE_APP_ABLATE_DIFF_H
#define AHASCOPE_APP_ABLATE_DIFF_H

#include "engine/session.h"

/* The most continuation tokens compared. */
#define ABLATE_CONT_MAX 64

typedef struct {
    int from, n;          /* positions from … n-1 are compared; n tokens were fed */
    double *kl;           /* [n - from]: KL(parent ‖ child) at position from + i, nats */
    double *nll_parent;   /* [n - from]: −ln p of token from + i + 1 under the parent, nats (NAN at n-1) */
    double *nll_child;    /* the same under the child */
    int *next;            /* [n - from]: that token's id (-1 at n-1) */
    int at_from, last;    /* the run's tokens at from and at n-1 (what a piece's text follows) */
    int n_cont[2];        /* continuation tokens generated: [0] parent, [1] child */
    int cont[2][ABLATE_CONT_MAX];
    int cont_want;        /* the k asked for (after the cap) */
} AblateDiff;

/* Compare parent and child on ids[0 … n) from position from (0 ≤ from < n)
 * and generate k (≤ ABLATE_CONT_MAX) greedy tokens each; stop, if not
 * NULL, is asked between positions (and between a prefill's layers) and a
 * non-zero answer abandons the comparison. 0, 1 when stopped (d then holds
 * nothing), or -1 with e set. d is freed with ablate_diff_free either way. */
int ablate_diff_run(const Model *m, const AttnConfig *parent, const AttnConfig *child, const int *ids, int n,
                    int from, int k, int threads, int (*stop)(void *user), void *user, AblateDiff *d, Err *e);

/* Free what ablate_diff_run filled (a zeroed d is fine). */
void ablate_diff_free(AblateDiff *d);

/* The position from … n-1 with the largest KL (the first of equals); -1 when
 * none is finite. */
int ablate_diff_argmax(const AblateDiff *d);

/* The first continuation index where parent and child differ (a shorter
 * one differs where it ended); -1 when they are the same. */
int ablate_diff_cont_split(const AblateDiff *d);

/* KL(p ‖ q) in nats of the softmaxes of two logit vectors of length v, and
 * −ln of token `tok` under each (tok < 0: not wanted), in double precision. */
double ablate_kl_logits(const float *lp, const float *lq, int v, int tok, double *nll_p, double *nll_q);

#endif
