/* train_multi.h — training's multi-choice router (engine/README.md, "The
 * multi-choice router"): per (row, head), global or one of K windows
 * w_1 < … < w_K, picked by K + 1 logits.
 *
 * The router's K + 1 logits z = xn·W_rᵀ (W_r [H][K + 1][C]) give
 * probabilities p = softmax(z) and a hard choice c (decide_multi at τ).
 * The forward runs the choice's branch; the backward is the two-way
 * router's straight-through estimator widened: the output counts as
 * Σ_k (1[c = k] + p_k − stopgrad(p_k))·o_k, so the chosen branch gets
 * ∂L/∂o and ∂L/∂p_k = ⟨∂L/∂o, o_k⟩ for every k, whatever ran. The
 * sparsity term is λ·mean over cells of Σ_k p_k·keys_k(t)/(t + 1), the
 * expected share of keys read (keys_k the window's local set with its
 * sinks, global t + 1), so the trade-off is priced in keys.
 *
 * Conventions as train_backward.h's: *_backward adds into its d* buffers;
 * the primitives run on the calling thread but the attention calls, which
 * split over d->pool as attention_forward does. Every buffer is laid out
 * for N rows of the current length; TrainMulti's per-layer blocks are
 * carved for the longest batch.
 */
#ifndef AHASCOPE_TRAIN_MULTI_H
#define AHASCOPE_TRAIN_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "train_backward.h"

/* Keys choice k reads at position t: window windows[k]'s local set with
 * the first `sinks` positions (attn_local_set), or all t + 1 for k = K. */
int train_multi_keys(int t, const int *windows, int K, int sinks, int k);

/* p[N][H][K + 1] = softmax(xn[N][C]·wr[H·(K + 1)][C]ᵀ) per head,
 * choice[N][H] = decide_multi of the logits at tau (tau < 0: every head
 * global), gate[N][H] = 1[choice = K]. Returns the number of global choices. */
long train_multi_router_forward(float *p, uint8_t *choice, uint8_t *gate, const float *xn, const float *wr, float tau,
                                int N, int C, int H, int K);

/* In place: dp[N][H][K + 1] = ∂L/∂p on entry, ∂L/∂z on return (softmax's
 * Jacobian: p_j·(dp_j − Σ_i p_i·dp_i)), for rows [n0, n1). */
void train_multi_softmax_backward(float *dp, const float *p, int n0, int n1, int H, int K);

/* With dz = ∂L/∂z from train_multi_softmax_backward: dxn[N][C] += dz·wr
 * and dwr[H·(K + 1)][C] += dzᵀ·xn (either may be NULL). */
void train_multi_router_backward(float *dxn, float *dwr, const float *dz, const float *xn, const float *wr, int N,
                                 int C, int H, int K);

/* The branches of one layer's multi-choice attention. D = n_heads·head_size. */
typedef struct {
    const float *q, *k, *v;  /* as AttnActs */
    const uint8_t *choice;   /* [N][H] 0 … K−1 a window, K global */
    const uint8_t *gate;     /* [N][H] 1[choice = K] */
    float *out;              /* [N][D] the chosen branch */
    float *o_all, *lse_all;  /* [N][D], [N][H] the global branch */
    float *o_win, *lse_win;  /* [K][N][D], [K][N][H] each window's local branch */
    float *tmp;              /* [N][D] scratch */
    float *tmp_dg;           /* [N][H] scratch */
} MultiActs;

/* Both kinds of branch for every (row, head): the global one and each
 * window's local one (attention_forward once per window, d->window
 * replaced), then out = the chosen one. scratch as attention_forward's. */
void train_multi_attention_forward(const AttnDims *d, const int *windows, int K, const MultiActs *m, float *scratch);

/* The chosen branch's softmax gets dout (into dq, dk, dv, added); dp[N][H]
 * [K + 1] is overwritten with ⟨dout, o_k⟩ of every branch k (the STE's
 * ∂L/∂p_k before the sparsity term). */
void train_multi_attention_backward(const AttnDims *d, const int *windows, int K, const MultiActs *m,
                                    const float *dout, float *dq, float *dk, float *dv, float *dp, float *scratch);

/* A TrainState's multi-choice blocks (train_multi_init). */
typedef struct TrainMulti {
    int K, windows[8];
    float *p;         /* [L][N][H][K + 1] router probabilities */
    uint8_t *choice;  /* [L][N][H] */
    float *o_win;     /* [L][K][N][D] */
    float *lse_win;   /* [L][K][N][H] */
    float *dp;        /* [N][H][K + 1] ∂L/∂p, then ∂L/∂z */
    float *tmp;       /* [N][D] */
    float *tmp_dg;    /* [N][H] */
    float *mem;
    uint8_t *bytes;
} TrainMulti;

/* Make s's forwards with τ ≥ 0 multi-choice over windows[0..K) (1 ≤ K ≤ 8,
 * increasing): routers become [L][H][K + 1][dim]. Forwards with τ < 0
 * (every head global: a teacher) stay two-way, the routers unread. Freed
 * by train_free. Returns 0, or -1 with e set. */
int train_multi_init(TrainState *s, const int *windows, int K, Err *e);

#endif
