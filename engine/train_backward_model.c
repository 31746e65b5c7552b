/* train_backward_model.c — the whole model's training forward and backward
 * pass, written top to bottom like the math, one primitive per line. */
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "kernels.h"
#include "train_backward.h"

void openblas_set_num_threads(int n); /* OpenBLAS extension, not in cblas.h everywhere */

/* ---- allocation: every float buffer carved from one block ---- */

typedef struct {
    float **p;
    size_t n;
} Carve;

static float *carve_all(Carve *list, int count) {
    size_t total = 0;
    for (int i = 0; i < count; i++) total += list[i].n;
    float *mem = calloc(total, sizeof(float));
    if (!mem) return NULL;
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
    s->T = T;
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
    AttnDims ad = {.B = B, .T = T, .n_kv_heads = c->n_kv_heads, .pool = s->pool};
    list[sizeof list / sizeof list[0] - 1].n = attention_scratch_floats(&ad);
    s->mem = carve_all(list, (int)(sizeof list / sizeof list[0]));
    s->gate = calloc(L * N * H, 1);
    s->inputs = calloc(N, sizeof(int));
    s->targets = calloc(N, sizeof(int));
    if (!s->mem || !s->gate || !s->inputs || !s->targets) {
        train_free(s);
        return err_set(e, "out of memory for training activations (batch %dx%d)", B, T);
    }
    rope_table(s->rope_cos, s->rope_sin, T, c->head_size, c->rope_theta);
    return 0;
}

void train_free(TrainState *s) {
    pool_free(s->pool);
    free(s->mem);
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


/* ---- the products, split over the pool ---- */

/* One product of the pass: out = in·wᵀ (forward), or din += dout·w and
 * dw += doutᵀ·in (backward); a task takes a slice of rows of the output
 * it writes, so the slices never overlap. */
typedef struct {
    float *out, *din, *dw;
    const float *in, *w, *dout;
    int N, n_in, n_out;
} MatJob;

/* [*r0, *r1): task's share of n rows, in blocks of 16 (whole cache lines). */
static void slice(int n, int task, int tasks, int *r0, int *r1) {
    int blocks = (n + 15) / 16;
    *r0 = (int)((long)blocks * task / tasks) * 16;
    *r1 = (int)((long)blocks * (task + 1) / tasks) * 16;
    if (*r1 > n) *r1 = n;
    if (*r0 > n) *r0 = n;
}

static void matmul_fwd_task(void *ctx, int task, int n_tasks) {
    const MatJob *j = ctx;
    int r0, r1;
    slice(j->N, task, n_tasks, &r0, &r1);
    if (r1 > r0) train_matmul_forward(j->out + (size_t)r0 * j->n_out, j->in + (size_t)r0 * j->n_in, j->w, r1 - r0, j->n_in, j->n_out);
}

static void matmul_bwd_task(void *ctx, int task, int n_tasks) {
    const MatJob *j = ctx;
    int r0, r1;
    if (j->din) {
        slice(j->N, task, n_tasks, &r0, &r1);
        if (r1 > r0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, j->n_in, j->n_out, 1.0f,
                        j->dout + (size_t)r0 * j->n_out, j->n_out, j->w, j->n_in, 1.0f, j->din + (size_t)r0 * j->n_in,
                        j->n_in);
    }
    if (j->dw) {
        slice(j->n_out, task, n_tasks, &r0, &r1);
        if (r1 > r0)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1 - r0, j->n_in, j->N, 1.0f, j->dout + r0, j->n_out,
                        j->in, j->n_in, 1.0f, j->dw + (size_t)r0 * j->n_in, j->n_in);
    }
}

static void run(Pool *pool, pool_fn fn, void *ctx) {
    if (pool) pool_run(pool, fn, ctx, pool_threads(pool));
    else fn(ctx, 0, 1);
}

/* train_matmul_forward over the pool. */
static void matmul_forward(const TrainState *s, float *out, const float *in, const float *w, int N, int n_in, int n_out) {
    MatJob j = {.out = out, .in = in, .w = w, .N = N, .n_in = n_in, .n_out = n_out};
    run(s->pool, matmul_fwd_task, &j);
}

/* train_matmul_backward over the pool. */
static void matmul_backward(const TrainState *s, float *din, float *dw, const float *dout, const float *in,
                            const float *w, int N, int n_in, int n_out) {
    MatJob j = {.din = din, .dw = dw, .dout = dout, .in = in, .w = w, .N = N, .n_in = n_in, .n_out = n_out};
    run(s->pool, matmul_bwd_task, &j);
}

/* ---- forward ---- */

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

static AttnActs attn_acts(const LayerActs *a) {
    return (AttnActs){.q = a->q, .k = a->k, .v = a->v, .gate = a->gate, .out = a->att, .o_all = a->o_all,
                      .o_here = a->o_here, .lse_all = a->lse_all, .lse_here = a->lse_here};
}

double train_forward(TrainState *s, const Weights *w, const float *routers, const TrainConfig *tc, const int *inputs,
                     const int *targets, const float *target_probs) {
    const Config *c = &s->c;
    const int N = s->N, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, H = c->n_heads, V = c->vocab_size;
    const size_t dd = (size_t)d * d, dkv = (size_t)kv * d, dh = (size_t)hid * d;
    s->tc = *tc;
    s->target_probs = target_probs;
    memcpy(s->inputs, inputs, (size_t)N * sizeof(int));
    if (targets) memcpy(s->targets, targets, (size_t)N * sizeof(int));
    AttnDims ad = attn_dims(s);
    long global = 0;

    embed_forward(s->res, inputs, w->token_embedding, N, d);                       /* res[0]  [N][d] */
    for (int l = 0; l < c->n_layers; l++) {
        LayerActs a = layer_acts(s, l);
        rmsnorm_forward(a.xn1, a.rstd1, a.res, w->rms_att + (size_t)l * d, N, d);   /* xn1     [N][d] */
        matmul_forward(s, a.q, a.xn1, w->wq + l * dd, N, d, d);                  /* q       [N][d] */
        matmul_forward(s, a.k, a.xn1, w->wk + l * dkv, N, d, kv);                /* k, v    [N][kv] */
        matmul_forward(s, a.v, a.xn1, w->wv + l * dkv, N, d, kv);
        global += train_router_forward(a.r, a.gate, a.xn1, routers + (size_t)l * H * d, /* r, g    [N][H] */
                                       tc->tau, N, d, H);
        rope_forward(a.q, s->rope_cos, s->rope_sin, s->B, s->T, d, c->head_size);
        rope_forward(a.k, s->rope_cos, s->rope_sin, s->B, s->T, kv, c->head_size);
        AttnActs aa = attn_acts(&a);
        attention_forward(&ad, &aa, s->scratch);                                    /* att     [N][d] */
        matmul_forward(s, s->branch, a.att, w->wo + l * dd, N, d, d);            /* att·Woᵀ [N][d] */
        residual_forward(a.res_mid, a.res, s->branch, (size_t)N * d);             /* res_mid [N][d] */
        rmsnorm_forward(a.xn2, a.rstd2, a.res_mid, w->rms_ffn + (size_t)l * d, N, d);
        matmul_forward(s, a.h1, a.xn2, w->w1 + l * dh, N, d, hid);               /* h1, h3  [N][hid] */
        matmul_forward(s, a.h3, a.xn2, w->w3 + l * dh, N, d, hid);
        swiglu_forward(a.hs, a.h1, a.h3, (size_t)N * hid);                          /* hs      [N][hid] */
        matmul_forward(s, s->branch, a.hs, w->w2 + l * dh, N, hid, d);
        residual_forward(a.res_next, a.res_mid, s->branch, (size_t)N * d);        /* res[l+1] */
    }
    float *res_final = s->res + (size_t)c->n_layers * N * d;
    rmsnorm_forward(s->xnf, s->rstdf, res_final, w->rms_final, N, d);              /* xnf     [N][d] */
    matmul_forward(s, s->logits, s->xnf, w->wcls, N, d, V);                      /* logits  [N][V] */
    s->target_w_sum = N;
    if (s->target_w) {
        s->target_w_sum = 0;
        for (int n = 0; n < N; n++) s->target_w_sum += s->target_w[n];
    }
    s->task_loss = tc->objective == TRAIN_KL ? kl_forward(s->probs, s->logits, target_probs, N, V)
                                             : crossentropy_forward(s->probs, s->logits, targets, s->target_w, N, V);

    size_t cells = (size_t)c->n_layers * N * H;
    double sum_r = 0;
    for (size_t i = 0; i < cells; i++) sum_r += s->r[i];
    s->mean_r = sum_r / cells;
    s->global_share = (double)global / cells;
    s->loss = s->task_loss + tc->lambda * s->mean_r;
    return s->loss;
}

/* ---- backward ---- */

void train_backward(TrainState *s, const Weights *w, const float *routers, float *drouters, Grads *g) {
    const Config *c = &s->c;
    const int N = s->N, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, H = c->n_heads, V = c->vocab_size;
    const size_t dd = (size_t)d * d, dkv = (size_t)kv * d, dh = (size_t)hid * d;
    const size_t Nd = (size_t)N * d, Nkv = (size_t)N * kv, Nh = (size_t)N * hid;
    AttnDims ad = attn_dims(s);
    /* each weight gradient is skipped (NULL) when only the routers train */
#define GW(field, off) (g ? g->field + (off) : NULL)
    if (g) memset(g->mem, 0, g->n * sizeof(float));
    memset(drouters, 0, (size_t)c->n_layers * H * d * sizeof(float));
    /* ∂(λ·mean r)/∂r: the mean runs over B·T·L·H cells */
    const float dr_lambda = (float)(s->tc.lambda / ((double)N * c->n_layers * H));

    memset(s->dlogits, 0, (size_t)N * V * sizeof(float));
    if (s->tc.objective == TRAIN_KL) kl_backward(s->dlogits, s->probs, s->target_probs, N, V, 1.0f / N);
    else if (s->target_w_sum > 0)
        crossentropy_backward(s->dlogits, s->probs, s->targets, s->target_w, N, V, (float)(1.0 / s->target_w_sum));
    memset(s->dxn, 0, Nd * sizeof(float));
    matmul_backward(s, s->dxn, GW(wcls, 0), s->dlogits, s->xnf, w->wcls, N, d, V);
    memset(s->dres, 0, Nd * sizeof(float));                                         /* dres = ∂L/∂res[L] */
    rmsnorm_backward(s->dres, GW(rms_final, 0), s->dxn, s->res + (size_t)c->n_layers * Nd, s->rstdf,
                     w->rms_final, N, d);

    for (int l = c->n_layers - 1; l >= 0; l--) {
        LayerActs a = layer_acts(s, l);
        /* res[l+1] = res_mid + hs·W2ᵀ: dres flows to both summands unchanged */
        memset(s->dhs, 0, Nh * sizeof(float));
        matmul_backward(s, s->dhs, GW(w2, l * dh), s->dres, a.hs, w->w2 + l * dh, N, hid, d);
        memset(s->dh1, 0, Nh * sizeof(float));
        memset(s->dh3, 0, Nh * sizeof(float));
        swiglu_backward(s->dh1, s->dh3, s->dhs, a.h1, a.h3, Nh);
        memset(s->dxn, 0, Nd * sizeof(float));
        matmul_backward(s, s->dxn, GW(w1, l * dh), s->dh1, a.xn2, w->w1 + l * dh, N, d, hid);
        matmul_backward(s, s->dxn, GW(w3, l * dh), s->dh3, a.xn2, w->w3 + l * dh, N, d, hid);
        rmsnorm_backward(s->dres, GW(rms_ffn, (size_t)l * d), s->dxn, a.res_mid, a.rstd2,
                         w->rms_ffn + (size_t)l * d, N, d);                          /* dres = ∂L/∂res_mid */

        /* res_mid = res + att·Woᵀ */
        memset(s->dbranch, 0, Nd * sizeof(float));
        matmul_backward(s, s->dbranch, GW(wo, l * dd), s->dres, a.att, w->wo + l * dd, N, d, d);
        memset(s->dq, 0, Nd * sizeof(float));
        memset(s->dk, 0, Nkv * sizeof(float));
        memset(s->dv, 0, Nkv * sizeof(float));
        for (size_t i = 0; i < (size_t)N * H; i++) s->dgate[i] = dr_lambda;
        AttnActs aa = attn_acts(&a);
        attention_backward(&ad, &aa, s->dbranch, s->dq, s->dk, s->dv, s->dgate, s->scratch); /* dgate = ∂L/∂r */
        memset(s->dxn, 0, Nd * sizeof(float));
        train_router_backward(s->dxn, drouters + (size_t)l * H * d, s->dgate, a.r, a.xn1, routers + (size_t)l * H * d,
                              N, d, H);
        rope_backward(s->dq, s->rope_cos, s->rope_sin, s->B, s->T, d, c->head_size);
        rope_backward(s->dk, s->rope_cos, s->rope_sin, s->B, s->T, kv, c->head_size);
        matmul_backward(s, s->dxn, GW(wq, l * dd), s->dq, a.xn1, w->wq + l * dd, N, d, d);
        matmul_backward(s, s->dxn, GW(wk, l * dkv), s->dk, a.xn1, w->wk + l * dkv, N, d, kv);
        matmul_backward(s, s->dxn, GW(wv, l * dkv), s->dv, a.xn1, w->wv + l * dkv, N, d, kv);
        rmsnorm_backward(s->dres, GW(rms_att, (size_t)l * d), s->dxn, a.res, a.rstd1,
                         w->rms_att + (size_t)l * d, N, d);                          /* dres = ∂L/∂res[l] */
    }
    if (g) embed_backward(g->token_embedding, s->dres, s->inputs, N, d);
#undef GW
}
