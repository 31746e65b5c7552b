/* train_backward.h — training forward and backward passes (llm.c style)
 * for the llama2.c architecture with AHA routers (engine/README.md,
 * "Sessions, sampling and training").
 *
 * Two levels:
 *   - layer primitives, each a *_forward / *_backward pair over explicit
 *     shapes: N = B·T rows of f32 activations, row-major, matrices
 *     W[out][in] as in the checkpoint;
 *   - the whole model: TrainState keeps every activation of a B×T batch,
 *     train_forward computes the loss, train_backward the gradients of the
 *     routers and, optionally, of every weight tensor.
 *
 * Conventions of the primitives: every *_backward ADDS into the d* buffers
 * it is given (callers zero them first), and a NULL d* buffer is skipped —
 * that is how the base-model weight gradients are left out when only the
 * routers train. The two RoPE functions are the exception: they work in
 * place. The primitives run on the calling thread; the whole-model pass
 * splits its products, element-wise layers and attention over TrainState's
 * pool in work items of fixed size, with OpenBLAS single-threaded inside
 * each (engine/pool.h says why), so its floats do not depend on the
 * thread count.
 *
 * AHA attention computes both branches for every (b, t, head) and selects
 * one with the hard gate g. Its backward follows the straight-through
 * estimator g̃ = g + r − stopgrad(r): the executed branch gets ∂L/∂o, and
 * ∂L/∂r = ⟨∂L/∂o, o_all − o_here⟩ whatever g was.
 */
#ifndef AHASCOPE_TRAIN_BACKWARD_H
#define AHASCOPE_TRAIN_BACKWARD_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "model.h"
#include "pool.h"

/* ---- layer primitives ---------------------------------------------------- */

/* x[N][C] = emb[tokens[n]] (token embedding lookup). */
void embed_forward(float *x, const int *tokens, const float *emb, int N, int C);
/* demb[tokens[n]] += dx[n]. */
void embed_backward(float *demb, const float *dx, const int *tokens, int N, int C);

/* out[N][n_out] = in[N][n_in] · w[n_out][n_in]ᵀ. */
void train_matmul_forward(float *out, const float *in, const float *w, int N, int n_in, int n_out);
/* din[N][n_in] += dout · w; dw[n_out][n_in] += doutᵀ · in. */
void train_matmul_backward(float *din, float *dw, const float *dout, const float *in, const float *w, int N,
                           int n_in, int n_out);

/* out[N][C] = x · rstd · w with rstd[N] = 1/√(mean(x²) + 1e-5), the same
 * float arithmetic as the inference kernel; rstd is kept for the backward. */
void rmsnorm_forward(float *out, float *rstd, const float *x, const float *w, int N, int C);
/* dx[N][C] += ∂/∂x, dw[C] += ∂/∂w of the rmsnorm whose forward saw x, rstd. */
void rmsnorm_backward(float *dx, float *dw, const float *dout, const float *x, const float *rstd, const float *w,
                      int N, int C);

/* dw[i] += ∂/∂w_i of that rmsnorm for columns i in [c0, c1) only, the rows
 * summed in order: threads owning disjoint columns give rmsnorm_backward's
 * very floats. */
void rmsnorm_backward_weight(float *dw, const float *dout, const float *x, const float *rstd, int N, int C, int c0,
                             int c1);

/* RoPE tables cos/sin[T][head_size/2] for positions 0..T-1, computed as the
 * inference forward (engine/forward.c) computes them. */
void rope_table(float *cos_t, float *sin_t, int T, int head_size, float theta);
/* Rotate x[B·T][width] in place, row b·T+t at position t: adjacent pairs
 * (x[2i], x[2i+1]) of each head_size-wide head, as llama2.c does. */
void rope_forward(float *x, const float *cos_t, const float *sin_t, int B, int T, int width, int head_size);
/* Rotate rows [n0, n1) of x[][width] in place, row n at position n % T;
 * inverse rotates by the negative angle (the backward's transpose). */
void rope_rows(float *x, const float *cos_t, const float *sin_t, int T, int n0, int n1, int width, int head_size,
               int inverse);
/* In place: dx holds ∂L/∂(rotated x) on entry and ∂L/∂x on return (the
 * transpose rotation). */
void rope_backward(float *dx, const float *cos_t, const float *sin_t, int B, int T, int width, int head_size);

/* out[n] = silu(h1[n]) · h3[n] (SwiGLU; the sigmoid by train_exp_shift). */
void swiglu_forward(float *out, const float *h1, const float *h3, size_t n);
/* dh1 += dout · h3 · silu'(h1); dh3 += dout · silu(h1). */
void swiglu_backward(float *dh1, float *dh3, const float *dout, const float *h1, const float *h3, size_t n);

/* out[n] = a[n] + b[n] (out may alias a). */
void residual_forward(float *out, const float *a, const float *b, size_t n);
/* da += dout; db += dout. */
void residual_backward(float *da, float *db, const float *dout, size_t n);

/* Routers: r[N][H] = σ(xn[N][C] · wr[H][C]ᵀ), gate = 1[r > tau] decided in
 * log-odds (decide_router_logit, as inference decides). Returns
 * the number of global gates. */
long train_router_forward(float *r, uint8_t *gate, const float *xn, const float *wr, float tau, int N, int C, int H);
/* Given dr[N][H] = ∂L/∂r: dxn += (dr·r(1−r)) · wr; dwr += (dr·r(1−r))ᵀ · xn. */
void train_router_backward(float *dxn, float *dwr, const float *dr, const float *r, const float *xn,
                           const float *wr, int N, int C, int H);

/* The two halves of train_router_backward, for rows and columns split over
 * threads: dxn[N][C] += (dr·r(1−r))·wr, and dwr[h][i] += Σ_n (dr·r(1−r))[n][h]·xn[n][i]
 * for columns i in [c0, c1), the rows summed in order. */
void router_backward_input(float *dxn, const float *dr, const float *r, const float *wr, int N, int C, int H);
void router_backward_weight(float *dwr, const float *dr, const float *r, const float *xn, int N, int C, int H, int c0,
                            int c1);

/* Shape of one AHA attention call (window w ≥ 1 keys including the current
 * one, plus the first `sinks` positions; engine/attn.c attn_local_set). */
typedef struct {
    int B, T;
    int n_heads, n_kv_heads, head_size;
    int window, sinks;
    Pool *pool;  /* splits the (sequence, KV head) pairs; NULL runs them here */
} AttnDims;

/* Inputs and saved outputs of AHA attention; D = n_heads·head_size,
 * KV = n_kv_heads·head_size, query head h reads KV head h / (n_heads/n_kv_heads). */
typedef struct {
    const float *q;          /* [N][D] after RoPE */
    const float *k, *v;      /* [N][KV], k after RoPE */
    const uint8_t *gate;     /* [N][n_heads], 1 = global */
    const float *mix;        /* [n_heads] DuoAttention's gates α: out = α·o_all + (1−α)·o_here; NULL: gate selects */
    float *out;              /* [N][D] the executed branch */
    float *o_all, *o_here;   /* [N][D] the global and the local branch */
    float *lse_all, *lse_here; /* [N][n_heads] log-sum-exp of each branch's scores */
    float *pstore;           /* attention_store_floats, or NULL: see attention_forward */
} AttnActs;

/* Floats of scratch attention_forward and attention_backward need: two
 * query blocks' scores against T keys (or head_size floats a row, if more)
 * per thread of d->pool. */
size_t attention_scratch_floats(const AttnDims *d);

/* x[i] = exp(x[i] − m) for i < n in float (relative error below 2e-7;
 * arguments below −87 give 0), vectorised: softmax rows, SwiGLU. */
void train_exp_shift(float *x, int n, float m);
/* x[i] = exp(x[i] − max x) for i < n ≥ 1, the maximum into *max; returns
 * Σ x[i] after (float lanes added up in double): a softmax row in two
 * vectorised passes. */
double train_exp_max_sum(float *x, int n, float *max);

/* Floats of a->pstore for one call: every query block's exponentials and
 * their rows' normalisers, for each sequence and head (about B·H·T²/2). */
size_t attention_store_floats(const AttnDims *d);

/* Causal attention, both branches for every (b, t, head), the executed one
 * chosen by gate; scratch holds attention_scratch_floats(d). When the window
 * covers the sequence (one branch) and a->pstore is set, the exponentials
 * are kept there and attention_backward reads them instead of recomputing
 * the scores and their exponentials. */
void attention_forward(const AttnDims *d, const AttnActs *a, float *scratch);
/* STE backward: the executed branch's softmax gets dout (into dq, dk, dv);
 * dgate[N][n_heads] += ⟨dout, o_all − o_here⟩, which is ∂L/∂r. With a->mix
 * both branches get their share, α·dout and (1−α)·dout, and dgate summed
 * over the rows is ∂L/∂α. */
void attention_backward(const AttnDims *d, const AttnActs *a, const float *dout, float *dq, float *dk, float *dv,
                        float *dgate, float *scratch);

/* Per row: probs[n] = softmax(logits[n]) and loss[n] = −log probs[n][targets[n]]
 * (p NULL), else KL(p[n] || probs[n]) (0·log 0 = 0), in double. Rows are
 * independent: threads may share them out. */
void loss_rows(double *loss, float *probs, const float *logits, const int *targets, const float *p, int N, int V);
/* Σ w·loss / Σ w over N rows in order (weights NULL: all 1; 0 when every weight is 0). */
double loss_mean(const double *loss, const float *weights, int N);

/* probs[N][V] = softmax(logits); returns the mean over rows of
 * −log probs[target], each row weighted by weights[n] (NULL: all 1), so
 * Σ w·ce / Σ w (0 when every weight is 0). */
double crossentropy_forward(float *probs, const float *logits, const int *targets, const float *weights, int N, int V);
/* dlogits += scale · w[n] · (probs − onehot(target)) (w NULL: 1); scale =
 * ∂L/∂(mean loss) / Σ w. */
void crossentropy_backward(float *dlogits, const float *probs, const int *targets, const float *weights, int N, int V,
                           float scale);

/* probs = softmax(logits); returns the mean over rows of KL(p || probs) for
 * target distributions p[N][V] (self-distillation). */
double kl_forward(float *probs, const float *logits, const float *p, int N, int V);
/* dlogits += scale · (probs − p) (rows of p sum to 1). */
void kl_backward(float *dlogits, const float *probs, const float *p, int N, int V, float scale);

/* Flush subnormal floats to zero in this thread's arithmetic from now on
 * (x86 FTZ and DAZ; threads created later inherit it; elsewhere a no-op).
 * Gradients below 1e-38 carry nothing, but subnormal operands slow the
 * BLAS kernels a hundredfold — a model whose KL is near 0 makes nothing else. */
void train_flush_subnormals(void);

/* ---- the whole model ------------------------------------------------------ */

typedef enum {
    TRAIN_CE, /* cross-entropy against targets[B][T] */
    TRAIN_KL  /* KL(p_full || p_model) against target_probs[B][T][vocab] */
} TrainObjective;

typedef struct {
    int window, sinks;
    float tau;      /* global iff r > tau; tau < 0 makes every head global */
    float lambda;   /* weight of mean(r) in the loss */
    TrainObjective objective;
} TrainConfig;

/* Gradients of every weight tensor, laid out as Weights; when the
 * classifier is shared, wcls == token_embedding (their gradients add). */
typedef struct {
    float *token_embedding, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final, *wcls;
    float *mem;    /* one block holding all of them */
    size_t n;      /* floats in mem (model_n_params) */
} Grads;

/* Bytes at most of attention's kept exponentials (AttnActs.pstore): 142 MB
 * at the organism's shape (B 4, T 1023, 4 × 4 heads). */
#define TRAIN_STORE_MAX ((size_t)512 << 20)

/* Every activation of a B×T batch, layer-major: X[l] is X + l·N·width. */
typedef struct {
    Config c;
    int B, T, N;            /* N = B·T rows: the length the next forward runs (train_set_length) */
    int T_alloc;            /* the T train_init allocated for: T never exceeds it */
    TrainConfig tc;         /* settings of the last forward */
    int *inputs, *targets;  /* [N] copies from the last forward */
    const float *target_w;  /* [N] CE weight of each target, the caller's (NULL: all 1), kept until the backward */
    int kl_weighted;        /* KL's rows weighed by target_w too (Σ w·KL / Σ w); 0: KL over every row alike */
    double target_w_sum;    /* Σ target_w of the last forward (N when NULL) */
    const float *target_probs; /* [N][vocab], the caller's (KL), kept until the backward */
    const float *mix;       /* [L][n_heads] DuoAttention's gates α (the caller's), or NULL: the routers' hard gates */
    float *dmix;            /* [L][n_heads] ∂task/∂α of the last backward when mix is set (the caller's) */
    float *rope_cos, *rope_sin; /* [T][head_size/2] */
    /* per layer */
    float *res;             /* [L+1][N][dim] residual stream entering layer l; res[L] is the final one */
    float *res_mid;         /* [L][N][dim] after the attention residual */
    float *xn1, *rstd1;     /* [L][N][dim], [L][N] attention rmsnorm: feeds W_Q, W_K, W_V, routers */
    float *q, *k, *v;       /* [L][N][dim], [L][N][kv_dim] ×2, after RoPE */
    float *r;               /* [L][N][n_heads] router scores σ(xn1·w_r) */
    uint8_t *gate;          /* [L][N][n_heads] executed gates */
    float *att, *o_all, *o_here; /* [L][N][dim] */
    float *lse_all, *lse_here;   /* [L][N][n_heads] */
    float *xn2, *rstd2;     /* [L][N][dim], [L][N] FFN rmsnorm */
    float *h1, *h3, *hs;    /* [L][N][hidden] w1 out, w3 out, swiglu out */
    /* head */
    float *xnf, *rstdf;     /* [N][dim], [N] */
    float *logits, *probs;  /* [N][vocab] */
    /* gradient buffers, reused across layers */
    float *branch;          /* [N][dim] a block's output before its residual add (forward scratch) */
    float *dres, *dxn, *dbranch, *dq, *dk, *dv, *dh1, *dh3, *dhs, *dgate, *dlogits;
    float *scratch;         /* [attention_scratch_floats] */
    float *pstore;          /* [L][attention_store_floats] when that fits TRAIN_STORE_MAX, else NULL (recompute) */
    double *row_loss;       /* [N] each row's task loss, summed in order after the rows ran in parallel */
    Pool *pool;             /* the threads of products and attention (AHASCOPE_THREADS, else every CPU) */
    struct TrainMulti *multi; /* a multi-choice router's blocks (engine/train_multi.h), or NULL: two-way */
    float *mem;             /* one block holding the floats above */
    /* results of the last forward */
    double loss, task_loss, mean_r, global_share;
} TrainState;

/* Allocate the activations of B sequences of T positions (T ≤ seq_len)
 * and start the pool (OpenBLAS then runs single-threaded in this process).
 * Returns 0 on success. */
int train_init(TrainState *s, const Config *c, int B, int T, Err *e);

/* Run the next forwards on B sequences of T positions, 1 ≤ T ≤ the T
 * train_init allocated for, packed as [B][T]: a batch of short items then
 * costs its own length, not the longest one's. Returns 0, or -1 when T is
 * out of range (the length stays). */
int train_set_length(TrainState *s, int T);

/* Make the pages of the kept exponentials now, for a run whose every step
 * trains with one attention branch (the window covering the sequence);
 * otherwise its first step faults them in (142 MB at the organism's shape). */
void train_keep_exponentials(TrainState *s);

/* Free everything train_init allocated (safe on a zeroed struct). */
void train_free(TrainState *s);

/* Forward pass of B×T tokens (inputs[B][T], ids in range) with routers
 * [n_layers][n_heads][dim]: fills the activations and returns the loss
 * L = task + lambda·mean(r); s->task_loss, s->mean_r and s->global_share
 * (mean g) are set too. With s->multi (train_multi_init) and tau ≥ 0 the
 * routers are [n_layers][n_heads][K + 1][dim] and mean_r is the expected
 * share of keys read (engine/train_multi.h). CE needs targets[B][T]; KL needs target_probs
 * [B][T][vocab], which must stay valid until train_backward — a forward
 * with tau < 0 leaves the full-attention teacher's distribution in s->probs. */
double train_forward(TrainState *s, const Weights *w, const float *routers, const TrainConfig *tc, const int *inputs,
                     const int *targets, const float *target_probs);

/* Backward pass of the last forward: overwrites drouters[n_layers][n_heads]
 * [dim] (multi-choice: [n_layers][n_heads][K + 1][dim]) with ∂L/∂routers (STE), and, if g is non-NULL, every tensor of g
 * with ∂L/∂weights (through the router inputs too); g == NULL skips the
 * weight-gradient products. */
void train_backward(TrainState *s, const Weights *w, const float *routers, float *drouters, Grads *g);

/* Allocate zeroed gradients for a model shape. Returns 0 on success. */
int grads_init(Grads *g, const Config *c, Err *e);

/* Free gradients (safe on a zeroed struct). */
void grads_free(Grads *g);

/* Full fine-tuning: a heap copy of src's weights in a Grads-shaped block p
 * (the gradients' layout, so one AdamW group over p->mem pairs each weight
 * with its gradient), w pointing into it. Free with grads_free. */
int weights_clone(Grads *p, Weights *w, const Config *c, const Weights *src, Err *e);

/* Refuse weights holding NaN or Inf (training on them yields NaN routers
 * that look like "no head ever global"): "weight NAME holds nan at element
 * I". Returns 0 if every element is finite. */
int weights_check_finite(const Weights *w, const Config *c, Err *e);

#endif
