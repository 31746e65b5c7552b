/* train_backward_model.c — the whole model's training forward and backward over a batch.
 *
 * The whole model's training forward and backward
 * pass: train_forward and train_backward read top to bottom like the math,
 * one pool run a line, and each run's row function lists the primitives a
 * chunk of rows goes through. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cblas.h>

#include "kernels.h"
#include "train_backward.h"
#include "train_multi.h"

void openblas_set_num_threads(int n); /* OpenBLAS extension, not in cblas.h everywhere */

/* ---- allocation: every float buffer carved from one block ---- */

typedef struct {
    float **p;
    size_t n;
} Carve;

/* The block's pages are made now, in one call, not by a fault at each
 * first touch during the first step (190 MB at the organism's shape: 47 000
 * faults, about 4% of a three-step run). A kernel without
 * MADV_POPULATE_WRITE (Linux 5.14) leaves them to the first touch. */
static void populate(float *mem, size_t n) {
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = 4096, lo = ((uintptr_t)mem + page - 1) & ~(page - 1), hi = ((uintptr_t)(mem + n)) & ~(page - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)mem, (void)n;
#endif
}

static float *carve_all(Carve *list, int count) {
    size_t total = 0;
    for (int i = 0; i < count; i++) total += list[i].n;
    float *mem = calloc(total, sizeof(float));
    if (!mem) return NULL;
    populate(mem, total);
    float *p = mem;
    for (int i = 0; i < count; i++) { *list[i].p = p; p += list[i].n; }
    return mem;
}

int train_init(TrainState *s, const Config *c, int B, int T, Err *e) {
    memset(s, 0, sizeof *s);
    if (B < 1 || T < 1 || T > c->seq_len)
        return err_set(e, "training batch %dx%d does not fit (context %d)", B, T, c->seq_len);
    s->c = *c;
    s->B = B;
    s->T = s->T_alloc = T;
    s->N = B * T;
    size_t N = s->N, L = c->n_layers, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, H = c->n_heads,
           V = c->vocab_size, rope = (size_t)T * c->head_size / 2;
    Carve list[] = {
        {&s->rope_cos, rope}, {&s->rope_sin, rope},
        {&s->res, (L + 1) * N * d}, {&s->res_mid, L * N * d}, {&s->xn1, L * N * d}, {&s->rstd1, L * N},
        {&s->q, L * N * d}, {&s->k, L * N * kv}, {&s->v, L * N * kv}, {&s->r, L * N * H},
        {&s->att, L * N * d}, {&s->o_all, L * N * d}, {&s->o_here, L * N * d},
        {&s->lse_all, L * N * H}, {&s->lse_here, L * N * H},
        {&s->xn2, L * N * d}, {&s->rstd2, L * N}, {&s->h1, L * N * hid}, {&s->h3, L * N * hid}, {&s->hs, L * N * hid},
        {&s->xnf, N * d}, {&s->rstdf, N}, {&s->logits, N * V}, {&s->probs, N * V},
        {&s->branch, N * d}, {&s->dres, N * d}, {&s->dxn, N * d}, {&s->dbranch, N * d}, {&s->dq, N * d},
        {&s->dk, N * kv}, {&s->dv, N * kv}, {&s->dh1, N * hid}, {&s->dh3, N * hid}, {&s->dhs, N * hid}, {&s->dgate, N * H},
        {&s->dlogits, N * V}, {&s->scratch, 0},
    };
    openblas_set_num_threads(1);
    s->pool = pool_new(pool_default_threads());
    AttnDims ad = {.B = B, .T = T, .n_heads = c->n_heads, .n_kv_heads = c->n_kv_heads, .head_size = c->head_size,
                   .pool = s->pool};
    list[sizeof list / sizeof list[0] - 1].n = attention_scratch_floats(&ad);
    s->mem = carve_all(list, (int)(sizeof list / sizeof list[0]));
    /* not made now: only training with one attention branch (the window
     * covering the sequence) touches it, on its first step */
    size_t store = L * attention_store_floats(&ad);
    if (store * sizeof(float) <= TRAIN_STORE_MAX) s->pstore = calloc(store, sizeof(float));
    s->gate = calloc(L * N * H, 1);
    s->inputs = calloc(N, sizeof(int));
    s->targets = calloc(N, sizeof(int));
    s->row_loss = calloc(N, sizeof(double));
    if (!s->mem || !s->gate || !s->inputs || !s->targets || !s->row_loss) {
        train_free(s);
        return err_set(e, "out of memory for training activations (batch %dx%d)", B, T);
    }
    rope_table(s->rope_cos, s->rope_sin, T, c->head_size, c->rope_theta);
    return 0;
}

int train_set_length(TrainState *s, int T) {
    if (T < 1 || T > s->T_alloc) return -1;
    s->T = T, s->N = s->B * T; /* every buffer is carved for T_alloc and read through T and N */
    return 0;
}

void train_keep_exponentials(TrainState *s) {
    if (s->pstore) populate(s->pstore, s->c.n_layers * attention_store_floats(&(AttnDims){.B = s->B, .T = s->T,
                                                   .n_heads = s->c.n_heads, .n_kv_heads = s->c.n_kv_heads,
                                                   .head_size = s->c.head_size, .pool = s->pool}));
}

void train_free(TrainState *s) {
    if (s->multi) free(s->multi->mem), free(s->multi->bytes), free(s->multi);
    pool_free(s->pool);
    free(s->mem);
    free(s->row_loss);
    free(s->pstore);
    free(s->gate);
    free(s->inputs);
    free(s->targets);
    memset(s, 0, sizeof *s);
}

int grads_init(Grads *g, const Config *c, Err *e) {
    memset(g, 0, sizeof *g);
    size_t L = c->n_layers, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, V = c->vocab_size;
    Carve list[] = {
        {&g->token_embedding, V * d}, {&g->rms_att, L * d}, {&g->wq, L * d * d}, {&g->wk, L * kv * d},
        {&g->wv, L * kv * d}, {&g->wo, L * d * d}, {&g->rms_ffn, L * d}, {&g->w1, L * hid * d},
        {&g->w2, L * d * hid}, {&g->w3, L * hid * d}, {&g->rms_final, d}, {&g->wcls, V * d},
    };
    int count = (int)(sizeof list / sizeof list[0]) - (c->shared_classifier ? 1 : 0);
    g->mem = carve_all(list, count);
    if (!g->mem) return err_set(e, "out of memory for %zu gradients", model_n_params(c));
    if (c->shared_classifier) g->wcls = g->token_embedding;
    g->n = model_n_params(c);
    return 0;
}

void grads_free(Grads *g) {
    free(g->mem);
    memset(g, 0, sizeof *g);
}

/* The llama2.c tensors of w with their names and element counts, in file
 * order; the classifier only when it is not the embedding. Returns the count. */
typedef struct { const char *name; const float *p; size_t n; } WeightSpan;

static int weight_spans(const Weights *w, const Config *c, WeightSpan t[12]) {
    size_t L = c->n_layers, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, V = c->vocab_size;
    WeightSpan all[12] = {
        {"token_embedding", w->token_embedding, V * d}, {"rms_att", w->rms_att, L * d}, {"wq", w->wq, L * d * d},
        {"wk", w->wk, L * kv * d}, {"wv", w->wv, L * kv * d}, {"wo", w->wo, L * d * d},
        {"rms_ffn", w->rms_ffn, L * d}, {"w1", w->w1, L * hid * d}, {"w2", w->w2, L * d * hid},
        {"w3", w->w3, L * hid * d}, {"rms_final", w->rms_final, d}, {"wcls", w->wcls, V * d},
    };
    memcpy(t, all, sizeof all);
    return c->shared_classifier ? 11 : 12;
}

int weights_clone(Grads *p, Weights *w, const Config *c, const Weights *src, Err *e) {
    if (grads_init(p, c, e)) return -1;
    *w = (Weights){p->token_embedding, p->rms_att, p->wq, p->wk, p->wv, p->wo, p->rms_ffn, p->w1, p->w2, p->w3,
                   p->rms_final, p->wcls};
    WeightSpan from[12], to[12];
    int n = weight_spans(src, c, from);
    weight_spans(w, c, to);
    for (int i = 0; i < n; i++) memcpy((float *)to[i].p, from[i].p, from[i].n * sizeof(float)); /* p's own heap */
    return 0;
}

int weights_check_finite(const Weights *w, const Config *c, Err *e) {
    WeightSpan t[12];
    int n = weight_spans(w, c, t);
    for (int i = 0; i < n; i++) {
        size_t k = k_first_nonfinite(t[i].p, t[i].n);
        if (k < t[i].n) return err_set(e, "weight %s holds %g at element %zu", t[i].name, t[i].p[k], k);
    }
    return 0;
}


/* ---- the pass, split over the pool ----
 *
 * Each layer is a few pool runs. A run's work items are chunks of rows
 * (ROW_CHUNK), doing all a row needs before the next run: a product's rows,
 * then the element-wise layers on those rows while they are in cache (RoPE
 * after Q and K, SwiGLU after W1 and W3, the residual add and the next
 * rmsnorm after Wo and W2, the loss after the classifier). Weight gradients
 * sum over every row, so they read what an earlier run finished: items of
 * DW_CHUNK rows of a weight, and for norm and router vectors blocks of
 * columns. No two items write the same float, every sum over rows runs in
 * row order, and the pool's threads claim items one at a time, so a thread
 * the host slows takes fewer of them instead of holding the others up. */

enum { ROW_CHUNK = 256, DW_CHUNK = 64, COL_CHUNK = 64 };

/* out[r0 .. r1) = in[r0 .. r1)·wᵀ. */
static void rows_out(float *out, const float *in, const float *w, int r0, int r1, int n_in, int n_out) {
    if (r1 > r0) train_matmul_forward(out + (size_t)r0 * n_out, in + (size_t)r0 * n_in, w, r1 - r0, n_in, n_out);
}

/* din[r0 .. r1) = beta·din + dout·w: beta 0 overwrites (no zeroing first), 1 adds. */
static void rows_din(float *din, const float *dout, const float *w, int r0, int r1, int n_in, int n_out, float beta) {
    if (r1 > r0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, n_in, n_out, 1.0f, dout + (size_t)r0 * n_out,
                    n_out, w, n_in, beta, din + (size_t)r0 * n_in, n_in);
}

/* One weight gradient of a run: dw[n_out][n_in] += doutᵀ·in over all N rows. */
typedef struct {
    float *dw;
    const float *dout, *in;
    int n_in, n_out;
} DwProduct;

/* Rows [o0, o1) of p's gradient. */
static void dw_rows(const DwProduct *p, int N, int o0, int o1) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, o1 - o0, p->n_in, N, 1.0f, p->dout + o0, p->n_out, p->in,
                p->n_in, 1.0f, p->dw + (size_t)o0 * p->n_in, p->n_in);
}

/* Per-layer slices of the activations (X + l·N·width). */
typedef struct {
    float *res, *res_next, *res_mid, *xn1, *rstd1, *q, *k, *v, *r, *att, *o_all, *o_here, *lse_all, *lse_here;
    float *xn2, *rstd2, *h1, *h3, *hs;
    uint8_t *gate;
} LayerActs;

static LayerActs layer_acts(const TrainState *s, int l) {
    const Config *c = &s->c;
    size_t N = s->N, d = N * c->dim, kv = N * c->kv_dim, H = N * c->n_heads, hid = N * c->hidden_dim;
    return (LayerActs){
        .res = s->res + l * d, .res_next = s->res + (l + 1) * d, .res_mid = s->res_mid + l * d,
        .xn1 = s->xn1 + l * d, .rstd1 = s->rstd1 + l * N, .q = s->q + l * d, .k = s->k + l * kv,
        .v = s->v + l * kv, .r = s->r + l * H, .att = s->att + l * d, .o_all = s->o_all + l * d,
        .o_here = s->o_here + l * d, .lse_all = s->lse_all + l * H, .lse_here = s->lse_here + l * H,
        .xn2 = s->xn2 + l * d, .rstd2 = s->rstd2 + l * N, .h1 = s->h1 + l * hid, .h3 = s->h3 + l * hid,
        .hs = s->hs + l * hid, .gate = s->gate + l * H};
}

static AttnDims attn_dims(const TrainState *s) {
    const Config *c = &s->c;
    return (AttnDims){.B = s->B, .T = s->T, .n_heads = c->n_heads, .n_kv_heads = c->n_kv_heads,
                      .head_size = c->head_size, .window = s->tc.window, .sinks = s->tc.sinks, .pool = s->pool};
}

static AttnActs attn_acts(const TrainState *s, const LayerActs *a, int l) {
    AttnDims ad = attn_dims(s);
    return (AttnActs){.q = a->q, .k = a->k, .v = a->v, .gate = a->gate,
                      .mix = s->mix ? s->mix + (size_t)l * s->c.n_heads : NULL, .out = a->att, .o_all = a->o_all,
                      .o_here = a->o_here, .lse_all = a->lse_all, .lse_here = a->lse_here,
                      .pstore = s->pstore ? s->pstore + l * attention_store_floats(&ad) : NULL};
}

/* What a run's items read: the state, the weights, one layer, and the
 * run's work. */
typedef struct PassJob PassJob;
struct PassJob {
    TrainState *s;
    const Weights *w;
    const float *wr;       /* this layer's routers [H][dim] */
    float *dwr;            /* their gradient */
    Grads *g;              /* NULL: only the routers train */
    LayerActs a;
    int l;
    float dr_lambda;       /* ∂(λ·mean r)/∂r of one cell */
    const TrainMulti *multi; /* a multi-choice forward or backward, else NULL */
    /* the run */
    void (*rows)(PassJob *j, int r0, int r1);  /* a chunk of rows, or NULL */
    DwProduct dw[3];                           /* weight gradients (dw NULL: none) */
    void (*cols)(PassJob *j, int c0, int c1);  /* norm and router gradients by columns of dim, or NULL */
    atomic_int next;       /* the next item to claim */
    atomic_long global;    /* gates set (router forward) */
};

static void pass_task(void *ctx, int task, int tasks) {
    (void)task, (void)tasks;
    PassJob *j = ctx;
    int N = j->s->N, d = j->s->c.dim, n_rows = j->rows ? (N + ROW_CHUNK - 1) / ROW_CHUNK : 0, n_dw[3], total = n_rows;
    for (int k = 0; k < 3; k++) total += n_dw[k] = j->dw[k].dw ? (j->dw[k].n_out + DW_CHUNK - 1) / DW_CHUNK : 0;
    total += j->cols ? (d + COL_CHUNK - 1) / COL_CHUNK : 0;
    for (int i; (i = atomic_fetch_add(&j->next, 1)) < total;) {
        if (i < n_rows) {
            j->rows(j, i * ROW_CHUNK, i * ROW_CHUNK + ROW_CHUNK < N ? i * ROW_CHUNK + ROW_CHUNK : N);
            continue;
        }
        i -= n_rows;
        int k = 0;
        while (k < 3 && i >= n_dw[k]) i -= n_dw[k++];
        if (k < 3) {
            int o0 = i * DW_CHUNK, o1 = o0 + DW_CHUNK < j->dw[k].n_out ? o0 + DW_CHUNK : j->dw[k].n_out;
            dw_rows(&j->dw[k], N, o0, o1);
        } else {
            j->cols(j, i * COL_CHUNK, i * COL_CHUNK + COL_CHUNK < d ? i * COL_CHUNK + COL_CHUNK : d);
        }
    }
}

/* Run j's items over the pool, then clear the run from j. */
static void pass_run(PassJob *j) {
    atomic_store(&j->next, 0);
    if (j->s->pool) pool_run(j->s->pool, pass_task, j, pool_threads(j->s->pool));
    else pass_task(j, 0, 1);
    j->rows = NULL, j->cols = NULL;
    memset(j->dw, 0, sizeof j->dw);
}

/* The weight gradient dw += doutᵀ·in as item k of the next run (dw NULL: skipped). */
static void pass_dw(PassJob *j, int k, float *dw, const float *dout, const float *in, int n_in, int n_out) {
    j->dw[k] = (DwProduct){dw, dout, in, n_in, n_out};
}

/* The attention block's input of layer l: rows of xn1 = rmsnorm(res). */
static void norm_att_rows(PassJob *j, int l, int r0, int r1) {
    TrainState *s = j->s;
    size_t N = s->N, d = s->c.dim;
    rmsnorm_forward(s->xn1 + l * N * d + r0 * d, s->rstd1 + l * N + r0, s->res + l * N * d + r0 * d,
                    j->w->rms_att + l * d, r1 - r0, (int)d);
}

/* ---- forward ---- */

static void fwd_embed(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    int d = s->c.dim;
    embed_forward(s->res + (size_t)r0 * d, s->inputs + r0, j->w->token_embedding, r1 - r0, d);
    norm_att_rows(j, 0, r0, r1);
}

/* q, k, v, their rotation, the router scores and gates. */
static void fwd_qkv(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const Config *c = &s->c;
    const LayerActs *a = &j->a;
    int d = c->dim, kv = c->kv_dim, H = c->n_heads, l = j->l;
    rows_out(a->q, a->xn1, j->w->wq + (size_t)l * d * d, r0, r1, d, d);
    rows_out(a->k, a->xn1, j->w->wk + (size_t)l * kv * d, r0, r1, d, kv);
    rows_out(a->v, a->xn1, j->w->wv + (size_t)l * kv * d, r0, r1, d, kv);
    rope_rows(a->q, s->rope_cos, s->rope_sin, s->T, r0, r1, d, c->head_size, 0);
    rope_rows(a->k, s->rope_cos, s->rope_sin, s->T, r0, r1, kv, c->head_size, 0);
    if (j->multi) {
        int K = j->multi->K;
        size_t at = (size_t)l * s->N * H + (size_t)r0 * H;
        atomic_fetch_add(&j->global, train_multi_router_forward(j->multi->p + at * (K + 1), j->multi->choice + at,
                                                                a->gate + (size_t)r0 * H, a->xn1 + (size_t)r0 * d,
                                                                j->wr, s->tc.tau, r1 - r0, d, H, K));
        for (size_t i = 0; i < (size_t)(r1 - r0) * H; i++) /* r: the global probability, for what reads it */
            a->r[(size_t)r0 * H + i] = j->multi->p[(at + i) * (K + 1) + K];
        return;
    }
    atomic_fetch_add(&j->global, train_router_forward(a->r + (size_t)r0 * H, a->gate + (size_t)r0 * H,
                                                      a->xn1 + (size_t)r0 * d, j->wr, s->tc.tau, r1 - r0, d, H));
}

/* res_mid = res + att·Woᵀ, xn2 = rmsnorm(res_mid). */
static void fwd_wo(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const LayerActs *a = &j->a;
    size_t d = s->c.dim, o = r0 * d, n = (size_t)(r1 - r0);
    rows_out(s->branch, a->att, j->w->wo + j->l * d * d, r0, r1, (int)d, (int)d);
    residual_forward(a->res_mid + o, a->res + o, s->branch + o, n * d);
    rmsnorm_forward(a->xn2 + o, a->rstd2 + r0, a->res_mid + o, j->w->rms_ffn + j->l * d, (int)n, (int)d);
}

/* hs = silu(xn2·W1ᵀ) ∘ (xn2·W3ᵀ). */
static void fwd_ffn(PassJob *j, int r0, int r1) {
    const Config *c = &j->s->c;
    const LayerActs *a = &j->a;
    size_t d = c->dim, hid = c->hidden_dim;
    rows_out(a->h1, a->xn2, j->w->w1 + j->l * hid * d, r0, r1, (int)d, (int)hid);
    rows_out(a->h3, a->xn2, j->w->w3 + j->l * hid * d, r0, r1, (int)d, (int)hid);
    swiglu_forward(a->hs + r0 * hid, a->h1 + r0 * hid, a->h3 + r0 * hid, (r1 - r0) * hid);
}

/* res[l+1] = res_mid + hs·W2ᵀ, then the next layer's input norm, or after
 * the last layer the final norm, the logits and each row's loss. */
static void fwd_w2(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const Config *c = &s->c;
    const LayerActs *a = &j->a;
    size_t d = c->dim, hid = c->hidden_dim, V = c->vocab_size, o = r0 * d, n = (size_t)(r1 - r0);
    rows_out(s->branch, a->hs, j->w->w2 + j->l * d * hid, r0, r1, (int)hid, (int)d);
    residual_forward(a->res_next + o, a->res_mid + o, s->branch + o, n * d);
    if (j->l + 1 < c->n_layers) { norm_att_rows(j, j->l + 1, r0, r1); return; }
    rmsnorm_forward(s->xnf + o, s->rstdf + r0, a->res_next + o, j->w->rms_final, (int)n, (int)d);
    rows_out(s->logits, s->xnf, j->w->wcls, r0, r1, (int)d, (int)V);
    int kl = s->tc.objective == TRAIN_KL;
    loss_rows(s->row_loss + r0, s->probs + r0 * V, s->logits + r0 * V, kl ? NULL : s->targets + r0,
              kl ? s->target_probs + r0 * V : NULL, (int)n, (int)V);
}

/* The multi-choice blocks a forward with tc uses: none under τ < 0 (every
 * head global, a teacher), where the two-way path is the same attention. */
static const TrainMulti *multi_of(const TrainState *s, const TrainConfig *tc) {
    return s->multi && tc->tau >= 0 ? s->multi : NULL;
}

static MultiActs multi_acts(const TrainState *s, const LayerActs *a, int l) {
    const TrainMulti *m = s->multi;
    size_t N = s->N, H = s->c.n_heads, D = s->c.dim, K = m->K;
    return (MultiActs){.q = a->q, .k = a->k, .v = a->v, .choice = m->choice + l * N * H, .gate = a->gate,
                       .out = a->att, .o_all = a->o_all, .lse_all = a->lse_all, .o_win = m->o_win + l * K * N * D,
                       .lse_win = m->lse_win + l * K * N * H, .tmp = m->tmp, .tmp_dg = m->tmp_dg};
}

/* The sparsity term's mean: over every (layer, row, head), Σ_k p_k·keys_k(t)/(t + 1). */
static double multi_keys_share(const TrainState *s, const TrainMulti *m) {
    size_t N = s->N, H = s->c.n_heads, K = m->K;
    double sum = 0;
    for (int l = 0; l < s->c.n_layers; l++)
        for (size_t n = 0; n < N; n++) {
            int t = (int)(n % s->T);
            for (size_t h = 0; h < H; h++) {
                const float *p = m->p + ((l * N + n) * H + h) * (K + 1);
                for (size_t k = 0; k <= K; k++)
                    sum += p[k] * (double)train_multi_keys(t, m->windows, (int)K, s->tc.sinks, (int)k) / (t + 1);
            }
        }
    return sum / ((double)s->c.n_layers * N * H);
}

double train_forward(TrainState *s, const Weights *w, const float *routers, const TrainConfig *tc, const int *inputs,
                     const int *targets, const float *target_probs) {
    const Config *c = &s->c;
    const int N = s->N, d = c->dim, H = c->n_heads;
    s->tc = *tc;
    s->target_probs = target_probs;
    memcpy(s->inputs, inputs, (size_t)N * sizeof(int));
    if (targets) memcpy(s->targets, targets, (size_t)N * sizeof(int));
    AttnDims ad = attn_dims(s);
    const TrainMulti *mu = multi_of(s, tc);
    size_t nv = mu ? (size_t)mu->K + 1 : 1;          /* router vectors a head */
    PassJob j = {.s = s, .w = w, .multi = mu};

    j.rows = fwd_embed, pass_run(&j);                /* res[0], xn1 */
    for (int l = 0; l < c->n_layers; l++) {
        j.l = l, j.a = layer_acts(s, l), j.wr = routers + (size_t)l * H * nv * d;
        j.rows = fwd_qkv, pass_run(&j);              /* q, k, v (rotated), r, gate (multi: p, choice) */
        if (mu) {
            MultiActs ma = multi_acts(s, &j.a, l);
            train_multi_attention_forward(&ad, mu->windows, mu->K, &ma, s->scratch); /* att */
        } else {
            AttnActs aa = attn_acts(s, &j.a, l);
            attention_forward(&ad, &aa, s->scratch); /* att */
        }
        j.rows = fwd_wo, pass_run(&j);               /* res_mid, xn2 */
        j.rows = fwd_ffn, pass_run(&j);              /* h1, h3, hs */
        j.rows = fwd_w2, pass_run(&j);               /* res[l+1], next xn1 (or xnf, logits, row losses) */
    }
    s->target_w_sum = N;
    if (s->target_w) {
        s->target_w_sum = 0;
        for (int n = 0; n < N; n++) s->target_w_sum += s->target_w[n];
    }
    s->task_loss = loss_mean(s->row_loss, tc->objective == TRAIN_KL && !s->kl_weighted ? NULL : s->target_w, N);

    size_t cells = (size_t)c->n_layers * N * H;
    double sum_r = 0;
    for (size_t i = 0; i < cells && !mu; i++) sum_r += s->r[i];
    s->mean_r = mu ? multi_keys_share(s, mu) : sum_r / cells;
    s->global_share = (double)atomic_load(&j.global) / cells;
    s->loss = s->task_loss + tc->lambda * s->mean_r;
    return s->loss;
}

/* ---- backward ---- */

/* each weight gradient is skipped (NULL) when only the routers train */
#define GW(field, off) (j->g ? j->g->field + (off) : NULL)

/* KL weighed row by row, Σ w·KL / Σ w: row n's dlogits scaled by w[n] / Σ w
 * (none when every weight is 0, as the loss is then 0). */
static void kl_weighted_backward(const TrainState *s, float *dl, int r0, int r1) {
    size_t V = s->c.vocab_size;
    for (int n = r0; n < r1 && s->target_w_sum > 0; n++)
        if (s->target_w[n] != 0)
            kl_backward(dl + (size_t)(n - r0) * V, s->probs + (size_t)n * V, s->target_probs + (size_t)n * V, 1, (int)V,
                        (float)(s->target_w[n] / s->target_w_sum));
}

/* dlogits, then dxn = dlogits·Wcls and dres = ∂L/∂res[L] through the final norm. */
static void bwd_head(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const Config *c = &s->c;
    size_t d = c->dim, V = c->vocab_size, n = (size_t)(r1 - r0);
    float *dl = s->dlogits + r0 * V;
    memset(dl, 0, n * V * sizeof(float));
    if (s->tc.objective == TRAIN_KL && s->kl_weighted && s->target_w)
        kl_weighted_backward(s, dl, r0, r1);
    else if (s->tc.objective == TRAIN_KL)
        kl_backward(dl, s->probs + r0 * V, s->target_probs + r0 * V, (int)n, (int)V, 1.0f / s->N);
    else if (s->target_w_sum > 0)
        crossentropy_backward(dl, s->probs + r0 * V, s->targets + r0, s->target_w ? s->target_w + r0 : NULL, (int)n,
                              (int)V, (float)(1.0 / s->target_w_sum));
    rows_din(s->dxn, s->dlogits, j->w->wcls, r0, r1, (int)d, (int)V, 0.0f);
    memset(s->dres + r0 * d, 0, n * d * sizeof(float));
    rmsnorm_backward(s->dres + r0 * d, NULL, s->dxn + r0 * d, s->res + (size_t)c->n_layers * s->N * d + r0 * d,
                     s->rstdf + r0, j->w->rms_final, (int)n, (int)d);
}

static void bwd_head_cols(PassJob *j, int c0, int c1) {
    TrainState *s = j->s;
    int d = s->c.dim;
    rmsnorm_backward_weight(j->g->rms_final, s->dxn, s->res + (size_t)s->c.n_layers * s->N * d, s->rstdf, s->N, d,
                            c0, c1);
}

/* res[l+1] = res_mid + hs·W2ᵀ: dres flows to both summands unchanged;
 * dhs = dres·W2, then SwiGLU's dh1, dh3. */
static void bwd_w2(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const LayerActs *a = &j->a;
    size_t d = s->c.dim, hid = s->c.hidden_dim, o = r0 * hid, n = (size_t)(r1 - r0) * hid;
    rows_din(s->dhs, s->dres, j->w->w2 + j->l * d * hid, r0, r1, (int)hid, (int)d, 0.0f);
    memset(s->dh1 + o, 0, n * sizeof(float));
    memset(s->dh3 + o, 0, n * sizeof(float));
    swiglu_backward(s->dh1 + o, s->dh3 + o, s->dhs + o, a->h1 + o, a->h3 + o, n);
}

/* dxn = dh1·W1 + dh3·W3, then dres = ∂L/∂res_mid through the FFN norm. */
static void bwd_ffn(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const LayerActs *a = &j->a;
    size_t d = s->c.dim, hid = s->c.hidden_dim, off = j->l * hid * d;
    rows_din(s->dxn, s->dh1, j->w->w1 + off, r0, r1, (int)d, (int)hid, 0.0f);
    rows_din(s->dxn, s->dh3, j->w->w3 + off, r0, r1, (int)d, (int)hid, 1.0f);
    rmsnorm_backward(s->dres + r0 * d, NULL, s->dxn + r0 * d, a->res_mid + r0 * d, a->rstd2 + r0,
                     j->w->rms_ffn + j->l * d, r1 - r0, (int)d);
}

/* res_mid = res + att·Woᵀ: dbranch = dres·Wo; attention's gradients zeroed,
 * dgate starting from the λ term. */
static void bwd_wo(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const Config *c = &s->c;
    size_t d = c->dim, kv = c->kv_dim, H = c->n_heads, n = (size_t)(r1 - r0);
    rows_din(s->dbranch, s->dres, j->w->wo + j->l * d * d, r0, r1, (int)d, (int)d, 0.0f);
    memset(s->dq + r0 * d, 0, n * d * sizeof(float));
    memset(s->dk + r0 * kv, 0, n * kv * sizeof(float));
    memset(s->dv + r0 * kv, 0, n * kv * sizeof(float));
    for (size_t i = r0 * H; i < r1 * H; i++) s->dgate[i] = j->dr_lambda;
}

static void bwd_wo_cols(PassJob *j, int c0, int c1) {
    TrainState *s = j->s;
    int d = s->c.dim;
    rmsnorm_backward_weight(j->g->rms_ffn + (size_t)j->l * d, s->dxn, j->a.res_mid, j->a.rstd2, s->N, d, c0, c1);
}

/* dq, dk back through RoPE; dxn = dq·Wq + dk·Wk + dv·Wv + the routers'
 * share; dres = ∂L/∂res[l] through the attention norm. */
static void bwd_qkv(PassJob *j, int r0, int r1) {
    TrainState *s = j->s;
    const Config *c = &s->c;
    const LayerActs *a = &j->a;
    size_t d = c->dim, kv = c->kv_dim, H = c->n_heads, n = (size_t)(r1 - r0);
    rope_rows(s->dq, s->rope_cos, s->rope_sin, s->T, r0, r1, (int)d, c->head_size, 1);
    rope_rows(s->dk, s->rope_cos, s->rope_sin, s->T, r0, r1, (int)kv, c->head_size, 1);
    rows_din(s->dxn, s->dq, j->w->wq + j->l * d * d, r0, r1, (int)d, (int)d, 0.0f);
    rows_din(s->dxn, s->dk, j->w->wk + j->l * kv * d, r0, r1, (int)d, (int)kv, 1.0f);
    rows_din(s->dxn, s->dv, j->w->wv + j->l * kv * d, r0, r1, (int)d, (int)kv, 1.0f);
    if (j->multi) /* dxn += ∂L/∂z · W_r over the K + 1 logits a head */
        rows_din(s->dxn, j->multi->dp, j->wr, r0, r1, (int)d, (int)H * (j->multi->K + 1), 1.0f);
    else if (!s->mix) /* with DuoAttention's gates the routers decide nothing */
        router_backward_input(s->dxn + r0 * d, s->dgate + r0 * H, a->r + r0 * H, j->wr, (int)n, (int)d, (int)H);
    rmsnorm_backward(s->dres + r0 * d, NULL, s->dxn + r0 * d, a->res + r0 * d, a->rstd1 + r0,
                     j->w->rms_att + j->l * d, (int)n, (int)d);
}

/* The routers' and the attention norm's gradients. */
static void bwd_qkv_cols(PassJob *j, int c0, int c1) {
    TrainState *s = j->s;
    const LayerActs *a = &j->a;
    int d = s->c.dim;
    int n_out = s->c.n_heads * (j->multi ? j->multi->K + 1 : 1);
    if (j->multi) /* dW_r[:, c0:c1] += (∂L/∂z)ᵀ · xn1[:, c0:c1], the rows summed in order */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_out, c1 - c0, s->N, 1.0f, j->multi->dp, n_out,
                    a->xn1 + c0, d, 1.0f, j->dwr + c0, d);
    else router_backward_weight(j->dwr, s->dgate, a->r, a->xn1, s->N, d, s->c.n_heads, c0, c1);
    if (j->g) rmsnorm_backward_weight(j->g->rms_att + (size_t)j->l * d, s->dxn, a->res, a->rstd1, s->N, d, c0, c1);
}

/* DuoAttention's ∂L/∂α of layer l's heads: each row's ⟨dO, o_all − o_here⟩
 * summed in row order (the λ term of bwd_wo is λ·mean r, 0 in their runs). */
static void mix_grad(TrainState *s, int l) {
    int H = s->c.n_heads;
    for (int h = 0; h < H; h++) {
        double sum = 0;
        for (int n = 0; n < s->N; n++) sum += s->dgate[(size_t)n * H + h];
        s->dmix[(size_t)l * H + h] = (float)sum;
    }
}

/* Layer j->l's multi-choice attention backward: dq, dk, dv from the
 * chosen branches, then ∂L/∂p_k = ⟨dO, o_k⟩ plus the sparsity term's
 * λ·keys_k(t)/(t + 1) a cell, through the softmax into ∂L/∂z (mu->dp). */
static void multi_backward(TrainState *s, PassJob *j, const AttnDims *ad) {
    const TrainMulti *mu = j->multi;
    size_t N = s->N, H = s->c.n_heads, K = mu->K;
    MultiActs ma = multi_acts(s, &j->a, j->l);
    train_multi_attention_backward(ad, mu->windows, (int)K, &ma, s->dbranch, s->dq, s->dk, s->dv, mu->dp, s->scratch);
    for (size_t n = 0; n < N; n++) {
        int t = (int)(n % s->T);
        for (size_t k = 0; k <= K; k++) {
            float add = j->dr_lambda * (float)train_multi_keys(t, mu->windows, (int)K, s->tc.sinks, (int)k) / (t + 1);
            for (size_t h = 0; h < H; h++) mu->dp[(n * H + h) * (K + 1) + k] += add;
        }
    }
    train_multi_softmax_backward(mu->dp, mu->p + j->l * N * H * (K + 1), 0, (int)N, (int)H, (int)K);
}

void train_backward(TrainState *s, const Weights *w, const float *routers, float *drouters, Grads *g) {
    const Config *c = &s->c;
    const int N = s->N, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, H = c->n_heads, V = c->vocab_size;
    AttnDims ad = attn_dims(s);
    const TrainMulti *mu = multi_of(s, &s->tc);
    size_t nv = mu ? (size_t)mu->K + 1 : 1;
    if (g) memset(g->mem, 0, g->n * sizeof(float));
    memset(drouters, 0, (size_t)c->n_layers * H * nv * d * sizeof(float));
    /* ∂(λ·mean r)/∂r: the mean runs over B·T·L·H cells */
    PassJob pj = {.s = s, .w = w, .g = g, .dr_lambda = (float)(s->tc.lambda / ((double)N * c->n_layers * H)),
                  .multi = mu}, *j = &pj;

    j->rows = bwd_head, pass_run(j);                 /* dlogits, dxn, dres = ∂L/∂res[L] */
    if (g) {
        pass_dw(j, 0, g->wcls, s->dlogits, s->xnf, d, V);
        j->cols = bwd_head_cols, pass_run(j);        /* dWcls, drms_final */
    }
    for (int l = c->n_layers - 1; l >= 0; l--) {
        const size_t dd = (size_t)d * d, dkv = (size_t)kv * d, dh = (size_t)hid * d;
        LayerActs *a = &j->a;
        j->l = l, *a = layer_acts(s, l), j->wr = routers + (size_t)l * H * nv * d;
        j->dwr = drouters + (size_t)l * H * nv * d;
        pass_dw(j, 0, GW(w2, l * dh), s->dres, a->hs, hid, d);
        j->rows = bwd_w2, pass_run(j);               /* dhs, dh1, dh3; dW2 */
        pass_dw(j, 0, GW(w1, l * dh), s->dh1, a->xn2, d, hid);
        pass_dw(j, 1, GW(w3, l * dh), s->dh3, a->xn2, d, hid);
        j->rows = bwd_ffn, pass_run(j);              /* dxn, dres = ∂L/∂res_mid; dW1, dW3 */
        pass_dw(j, 0, GW(wo, l * dd), s->dres, a->att, d, d);
        j->rows = bwd_wo, j->cols = g ? bwd_wo_cols : NULL, pass_run(j); /* dbranch, dq = dk = dv = 0, dgate = λ term; dWo, drms_ffn */
        if (mu) {
            multi_backward(s, j, &ad);               /* mu->dp = ∂L/∂z */
        } else {
            AttnActs aa = attn_acts(s, a, l);
            attention_backward(&ad, &aa, s->dbranch, s->dq, s->dk, s->dv, s->dgate, s->scratch); /* dgate = ∂L/∂r */
        }
        if (s->mix) mix_grad(s, l);                  /* dmix[l] = Σ over rows of dgate */
        j->rows = bwd_qkv, pass_run(j);              /* dxn, dres = ∂L/∂res[l] */
        pass_dw(j, 0, GW(wq, l * dd), s->dq, a->xn1, d, d);
        pass_dw(j, 1, GW(wk, l * dkv), s->dk, a->xn1, d, kv);
        pass_dw(j, 2, GW(wv, l * dkv), s->dv, a->xn1, d, kv);
        j->cols = bwd_qkv_cols, pass_run(j);         /* dWq, dWk, dWv, drouters, drms_att */
    }
    if (g) embed_backward(g->token_embedding, s->dres, s->inputs, N, d);
}

#undef GW
