/* forward.h — the transformer forward pass with AHA attention.
 *
 * One entry point feeds n tokens at positions pos0 … pos0+n-1: n = 1 is a
 * decode step (matrix–vector), n > 1 a batched prefill (matrix–matrix,
 * causal attention inside the batch). Both run the same per-head attention
 * (attn.h), so they make the same decisions for the same tokens.
 */
#ifndef AHASCOPE_FORWARD_H
#define AHASCOPE_FORWARD_H

#include "aha.h"
#include "gemm_half.h"
#include "gemm_q.h"
#include "matvec.h"
#include "model.h"
#include "pool.h"
#include "trace.h"

typedef struct {
    Config c;
    int max_batch;        /* rows a single forward call processes at most */
    /* activations, [max_batch][width] */
    float *x;             /* residual stream [B][dim] */
    float *xb;            /* [B][max(dim, q_dim)]: normed input, then attention output */
    float *xb2;           /* [B][dim] */
    float *q;             /* [B][q_dim] */
    float *hb, *hb2;      /* [B][hidden] */
    float *rlog;          /* router logits [B][n_heads] */
    float *rmulti;        /* a multi-choice router's logits [B][n_heads][K + 1], K ≤ ROUTER_MAX_WINDOWS */
    uint8_t *rwin;        /* [B][n_heads] the window decide_multi picked, an index into AttnConfig.windows */
    float *logits;        /* [vocab]: the last row's logits */
    void *key_cache;      /* [layer][kv_head][seq_len][head_size] of c.kv_dtype, after RoPE: each head's keys one stream */
    void *value_cache;    /* [layer][kv_head][seq_len][head_size] of c.kv_dtype */
    float *kv_new;        /* [2][B][kv_dim]: this call's keys, then values, before they enter the cache */
    float *rope_cos, *rope_sin; /* [seq_len][head_size/2] */
    float *scratch;       /* per KV head: seq_len + 2*head_size floats */
    double *bulk_m1;      /* per (layer, KV head): Σ k over absorbed far keys [head_size] */
    double *bulk_m2;      /* per (layer, KV head): Σ k kᵀ [head_size^2] */
    int *bulk_n;          /* keys absorbed per (layer, KV head) */
    int *bulk_start;      /* sink count the moments were built for */
    float *q_cache;       /* [layer][seq_len][q_dim] queries after RoPE, or NULL (fwd_keep_queries) */
    float *router_in;     /* [layer][max_batch][dim]: the last call's router inputs, or NULL (fwd_keep_router_inputs) */
    float *router_hist;   /* [layer][seq_len][dim]: every position's router input, or NULL (fwd_keep_router_history) */
    int router_hist_n;    /* positions 0 … router_hist_n-1 of it hold the last inputs fed */
    float *tiles;         /* per pool task: half-precision rows widened for a prefill sgemm */
    size_t tile_floats;   /* floats per task in tiles (0 for f32 models) */
    GemmPath gemm;        /* how a prefill multiplies bf16 weights (fwd_set_gemm; default $AHASCOPE_GEMM, else AMX or exact) */
    uint16_t *x_bf16;     /* [pad32(B)][pad32(max in)]: a prefill product's input rounded for the bf16 paths, or NULL */
    GqPath gemm_q;        /* how products of quantised rows run ($AHASCOPE_GEMMQ, else the CPU's best) */
    void *xq;             /* gemm_q_x_bytes(B, max in): a product's input rounded to int8, or NULL */
    MvqX *mvx;            /* a decode step's product input rounded once for mv_q's integer path, or NULL */
    const char *packed;   /* the model's packed matrices (Model.packed) for this forward call, or NULL */
    size_t packed_bytes;
    int n_tiles;
    Pool *pool;
    /* Asked before each layer of a call; non-zero abandons the call there
     * (stopped is set), leaving part of it in the KV cache and the bulk
     * moments: the caller must not feed on from that state. NULL: never.
     * This is how a long prefill chunk is cut short for a quit. */
    int (*stop)(void *user);
    void *stop_user;
    int stopped;          /* the last fwd_forward call was abandoned */
} RunState;

/* Allocate buffers for a model shape; max_batch bounds a prefill chunk,
 * n_threads the parallelism (<= 1: single-threaded). Returns 0 on success. */
int fwd_init(RunState *s, const Config *c, int max_batch, int n_threads, Err *e);

/* Multiply a prefill's bf16 weights by path from now on (GEMM_EXACT: widened
 * to f32, as decode reads them). Returns 0, or -1 when the machine cannot
 * run path or the model has no bf16 weights to use it on. */
int fwd_set_gemm(RunState *s, GemmPath path);

/* out[T][n_out] = in[T][n_in] · w[n_out][n_in]ᵀ exactly as a layer of a
 * prefill multiplies (the pool's threads, s's bf16 path; T ≤ max_batch,
 * n_in no wider than the shape's widest input): `bench --gemm` times it. */
void fwd_matmul(RunState *s, float *out, const float *in, Mat w, int T, int n_in, int n_out);

/* Free everything fwd_init allocated (safe on a zeroed struct). */
void fwd_free(RunState *s);

/* Forget the running bulk moments (a new sequence starts). */
void fwd_reset(RunState *s);

/* Feed tokens[0..n) at positions pos0 … pos0+n-1 (all < seq_len, ids in
 * range: the caller checks). Prefills in chunks of max_batch; s->stop may
 * abandon the call between layers (s->stopped says so). If
 * logits_all is non-NULL it receives n rows of vocab logits; s->logits
 * always ends with the last row's. traces, if non-NULL, holds n traces whose
 * per-head fields are filled (pos and token too). */
void fwd_forward(const Model *m, RunState *s, const AttnConfig *a, const int *tokens, int n, int pos0,
                 float *logits_all, StepTrace **traces);

/* Where the cached key (value = 0) or value (value = 1) of one KV head at
 * one position lives: head_size elements of c.kv_dtype, followed by the
 * same head's next position. */
void *fwd_kv_at(const RunState *s, int value, int layer, int kvh, int pos);

/* Read that key or value as head_size floats. */
void fwd_kv_get(const RunState *s, int value, int layer, int kvh, int pos, float *out);

/* Store head_size floats as that key or value, rounded to c.kv_dtype
 * (NaN and infinities survive the rounding). */
void fwd_kv_set(RunState *s, int value, int layer, int kvh, int pos, const float *in);

/* Keep every position's queries from now on, so the attention weights of
 * any past position can be looked at again (the TUI's inspector). */
int fwd_keep_queries(RunState *s, Err *e);

/* Keep, from now on, what the router reads at every layer (the normed
 * input, or the raw stream where the block has no pre-norm) in
 * s->router_in; row i is position pos0 + i of the last chunk fed, so a
 * caller that wants every row feeds at most max_batch tokens a call. Off by
 * default: normal runs copy nothing. Returns 0, or -1 out of memory. */
int fwd_keep_router_inputs(RunState *s, Err *e);

/* Keep, from now on, every position's router input at every layer (what
 * fwd_keep_router_inputs keeps for the last chunk only), so the router's
 * decision at any past position can be explained (router_why.h). It costs
 * n_layers × seq_len × dim floats, reserved at once and touched as
 * positions arrive: the caller decides whether the model is small enough.
 * Returns 0, or -1 out of memory. */
int fwd_keep_router_history(RunState *s, Err *e);

/* The router input kept for (layer, pos) into x[dim]; -1 when it was not
 * kept or pos was not fed. */
int fwd_router_input(const RunState *s, int layer, int pos, float *x);

/* Head `head`'s router vector in `layer` into w[dim] and its bias (0 when
 * it has none): a's router file, else the model's built-in rows (faolmo).
 * -1 when neither routes, or for a multi-choice router (K + 1 vectors a head). */
int fwd_router_row(const Model *m, const AttnConfig *a, int layer, int head, float *w, float *bias);

/* Full-attention softmax weights w[0..pos] of query head `head` in `layer`
 * at position pos, from the kept queries and the KV cache; what the head
 * would attend to if it went global. -1 without kept queries or out of range. */
int fwd_attention_weights(const RunState *s, int layer, int head, int pos, float *w);


#endif
