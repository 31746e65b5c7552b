#include "forward.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "kernels.h"
#include "matvec.h"

void openblas_set_num_threads(int n); /* OpenBLAS extension, not in cblas.h everywhere */

int fwd_init(RunState *s, const Config *c, int max_batch, int n_threads, Err *e) {
    memset(s, 0, sizeof *s);
    s->c = *c;
    if (max_batch < 1) max_batch = 1;
    if (max_batch > c->seq_len) max_batch = c->seq_len;
    s->max_batch = max_batch;
    size_t B = max_batch, d = c->dim, h = c->hidden_dim, hs = c->head_size;
    size_t cache = (size_t)c->n_layers * c->seq_len * c->kv_dim;
    size_t heads_kv = (size_t)c->n_layers * c->n_kv_heads;
    s->x = malloc(B * d * sizeof(float));
    s->xb = malloc(B * d * sizeof(float));
    s->xb2 = malloc(B * d * sizeof(float));
    s->q = malloc(B * d * sizeof(float));
    s->hb = malloc(B * h * sizeof(float));
    s->hb2 = malloc(B * h * sizeof(float));
    s->rlog = malloc(B * c->n_heads * sizeof(float));
    s->logits = malloc((size_t)c->vocab_size * sizeof(float));
    s->key_cache = calloc(cache, sizeof(float));
    s->value_cache = calloc(cache, sizeof(float));
    s->rope_cos = malloc((size_t)c->seq_len * hs / 2 * sizeof(float));
    s->rope_sin = malloc((size_t)c->seq_len * hs / 2 * sizeof(float));
    s->scratch = malloc((size_t)c->n_kv_heads * (2 * c->seq_len + 3 * hs) * sizeof(float));
    s->bulk_m1 = calloc(heads_kv * hs, sizeof(double));
    s->bulk_m2 = calloc(heads_kv * hs * hs, sizeof(double));
    s->bulk_n = calloc(heads_kv, sizeof(int));
    s->bulk_start = calloc(heads_kv, sizeof(int));
    if (!s->x || !s->xb || !s->xb2 || !s->q || !s->hb || !s->hb2 || !s->rlog || !s->logits || !s->key_cache ||
        !s->value_cache || !s->rope_cos || !s->rope_sin || !s->scratch || !s->bulk_m1 || !s->bulk_m2 ||
        !s->bulk_n || !s->bulk_start) {
        fwd_free(s);
        return err_set(e, "out of memory for the run state (context %d, KV cache %zu MB)", c->seq_len,
                       cache * 8 >> 20);
    }
    /* the same float arithmetic as llama2.c, so positions rotate identically */
    for (int t = 0; t < c->seq_len; t++)
        for (int i = 0; i < c->head_size; i += 2) {
            float freq = 1.0f / powf(c->rope_theta, i / (float)c->head_size);
            float val = t * freq;
            s->rope_cos[(size_t)t * hs / 2 + i / 2] = cosf(val);
            s->rope_sin[(size_t)t * hs / 2 + i / 2] = sinf(val);
        }
    openblas_set_num_threads(1);
    s->pool = pool_new(n_threads);
    return 0;
}

void fwd_free(RunState *s) {
    free(s->x); free(s->xb); free(s->xb2); free(s->q); free(s->hb); free(s->hb2); free(s->rlog);
    free(s->logits); free(s->key_cache); free(s->value_cache); free(s->rope_cos); free(s->rope_sin);
    free(s->scratch); free(s->bulk_m1); free(s->bulk_m2); free(s->bulk_n); free(s->bulk_start);
    free(s->q_cache);
    pool_free(s->pool);
    memset(s, 0, sizeof *s);
}

void fwd_reset(RunState *s) {
    size_t heads_kv = (size_t)s->c.n_layers * s->c.n_kv_heads;
    memset(s->bulk_n, 0, heads_kv * sizeof(int));
}

/* ---- matmul: out_k[T][n_k] = in[T][n_in] · W_k[n_k][n_in]ᵀ for up to three
 * matrices sharing one input (q/k/v, gate/up), their rows split over the
 * pool as one job: fewer wake-ups per decode step, even shares per core. */

typedef struct {
    const float *in;
    int T, n_in, n_mats;
    float *out[3];
    const float *w[3];
    int n_out[3];
} MatMul;

static void matmul_rows(const MatMul *mm, int k, int r0, int r1) {
    const float *w = mm->w[k] + (size_t)r0 * mm->n_in;
    if (mm->T == 1)
        mv_f32(mm->out[k] + r0, w, mm->in, r1 - r0, mm->n_in);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mm->T, r1 - r0, mm->n_in, 1.0f, mm->in, mm->n_in, w,
                    mm->n_in, 0.0f, mm->out[k] + r0, mm->n_out[k]);
}

static void matmul_task(void *ctx, int task, int n_tasks) {
    const MatMul *mm = ctx;
    long total = 0;
    for (int k = 0; k < mm->n_mats; k++) total += mm->n_out[k];
    /* this task's share of the concatenated rows, in blocks of 16 */
    long blocks = (total + 15) / 16, lo = blocks * task / n_tasks * 16, hi = blocks * (task + 1) / n_tasks * 16;
    long base = 0;
    for (int k = 0; k < mm->n_mats; base += mm->n_out[k], k++) {
        long r0 = lo > base ? lo - base : 0, r1 = hi - base < mm->n_out[k] ? hi - base : mm->n_out[k];
        if (r0 < r1) matmul_rows(mm, k, (int)r0, (int)r1);
    }
}

static void matmul_run(RunState *s, MatMul *mm) {
    long total = 0;
    for (int k = 0; k < mm->n_mats; k++) total += mm->n_out[k];
    int tasks = pool_threads(s->pool);
    if ((long)mm->T * mm->n_in * total < 32768) tasks = 1; /* not worth a wake-up */
    pool_run(s->pool, matmul_task, mm, tasks);
}

static void matmul(RunState *s, float *out, const float *in, const float *w, int T, int n_in, int n_out) {
    MatMul mm = {.in = in, .T = T, .n_in = n_in, .n_mats = 1, .out = {out}, .w = {w}, .n_out = {n_out}};
    matmul_run(s, &mm);
}

/* ---- attention over the batch, one task per KV head ---- */

typedef struct {
    RunState *s;
    const AttnConfig *a;
    int layer, T, pos0;
    StepTrace **traces;
} AttnJob;

static void gate_rule(const AttnJob *j, int t, int h, float score, AttnHeadIn *in) {
    const AttnConfig *a = j->a;
    int cell = j->layer * j->s->c.n_heads + h;
    in->rule = GATE_FIXED;
    switch (a->policy) {
    case POLICY_AHA: in->gate = score > a->tau; break;
    case POLICY_FULL: in->gate = 1; break;
    case POLICY_LOCAL: in->gate = 0; break;
    case POLICY_STATIC: in->gate = a->static_heads ? a->static_heads[cell] : 0; break;
    case POLICY_RANDOM: in->gate = aha_uniform(a->seed, t, j->layer, h) < a->p; break;
    case POLICY_ORACLE: in->rule = GATE_ORACLE; break;
    case POLICY_QADA: in->rule = GATE_QADA; break;
    case POLICY_QADA_BULK: in->rule = GATE_QADA_BULK; break;
    default: in->gate = 1; break;
    }
}

/* Bring the bulk moments of (layer, kv head) to exactly the far keys of
 * position t, absorbing keys as they leave the window (O(d²) each). */
static void bulk_sync(RunState *s, const AttnConfig *a, int layer, int kvh, int t) {
    const Config *c = &s->c;
    size_t idx = (size_t)layer * c->n_kv_heads + kvh, hs = c->head_size;
    double *m1 = s->bulk_m1 + idx * hs, *m2 = s->bulk_m2 + idx * hs * hs;
    int ns, lo;
    attn_local_set(t, a->window, a->sinks, &ns, &lo);
    int want = lo - ns;
    if (s->bulk_start[idx] != ns || s->bulk_n[idx] > want) {
        memset(m1, 0, hs * sizeof(double));
        memset(m2, 0, hs * hs * sizeof(double));
        s->bulk_n[idx] = 0;
        s->bulk_start[idx] = ns;
    }
    const float *kc = s->key_cache + (size_t)layer * c->seq_len * c->kv_dim + kvh * hs;
    for (int i = ns + s->bulk_n[idx]; i < lo; i++) attn_bulk_absorb(m1, m2, kc + (size_t)i * c->kv_dim, c->head_size);
    s->bulk_n[idx] = want;
}

static void attn_task(void *ctx, int kvh, int n_tasks) {
    (void)n_tasks;
    const AttnJob *j = ctx;
    RunState *s = j->s;
    const Config *c = &s->c;
    const AttnConfig *a = j->a;
    int group = c->n_heads / c->n_kv_heads, hs = c->head_size, l = j->layer;
    int bulk = a->profile || a->policy == POLICY_QADA_BULK;
    size_t loff = (size_t)l * c->seq_len * c->kv_dim;
    size_t idx = (size_t)l * c->n_kv_heads + kvh;
    float *scratch = s->scratch + (size_t)kvh * (2 * c->seq_len + 3 * hs);
    for (int i = 0; i < j->T; i++) {
        int t = j->pos0 + i;
        if (bulk) bulk_sync(s, a, l, kvh, t);
        for (int h = kvh * group; h < (kvh + 1) * group; h++) {
            float score = a->routers ? 1.0f / (1.0f + expf(-s->rlog[(size_t)i * c->n_heads + h])) : NAN;
            AttnHeadIn in = {.q = s->q + (size_t)i * c->dim + h * hs, .k = s->key_cache + loff + kvh * hs,
                             .v = s->value_cache + loff + kvh * hs, .stride = c->kv_dim, .head_size = hs,
                             .t = t, .window = a->window, .sinks = a->sinks, .theta = a->theta,
                             .want_oracle = a->profile, .want_qada = a->profile,
                             .bulk_m1 = bulk ? s->bulk_m1 + idx * hs : NULL,
                             .bulk_m2 = bulk ? s->bulk_m2 + idx * hs * hs : NULL};
            gate_rule(j, t, h, score, &in);
            AttnHeadOut r;
            attn_head_forward(&in, s->xb + (size_t)i * c->dim + h * hs, scratch, &r);
            if (j->traces) {
                StepTrace *tr = j->traces[i];
                int cell = l * c->n_heads + h;
                tr->score[cell] = score;
                tr->gate[cell] = (int8_t)r.gate;
                tr->keys_read[cell] = r.keys_read;
                tr->oracle_mass[cell] = r.oracle_mass;
                tr->oracle_err[cell] = r.oracle_err;
                tr->qada_mass[cell] = r.qada_mass;
                tr->qada_bulk_mass[cell] = r.qada_bulk_mass;
            }
        }
    }
}

static void rope_rows(RunState *s, float *v, int width, int T, int stride, int pos0) {
    int hs = s->c.head_size;
    for (int i = 0; i < T; i++) {
        const float *cs = s->rope_cos + (size_t)(pos0 + i) * hs / 2, *sn = s->rope_sin + (size_t)(pos0 + i) * hs / 2;
        float *row = v + (size_t)i * stride;
        for (int j = 0; j < width; j += 2) {
            float c0 = cs[(j % hs) / 2], s0 = sn[(j % hs) / 2], a = row[j], b = row[j + 1];
            row[j] = a * c0 - b * s0;
            row[j + 1] = a * s0 + b * c0;
        }
    }
}

/* One transformer block over T rows (the math of llama2.c's forward, batched). */
static void layer_forward(const Model *m, RunState *s, const AttnConfig *a, int l, int T, int pos0, StepTrace **tr) {
    const Config *c = &m->c;
    const Weights *w = &m->w;
    int d = c->dim, kv = c->kv_dim, hid = c->hidden_dim;
    size_t dd = (size_t)d * d, dkv = (size_t)d * kv, dh = (size_t)d * hid;
    float *kc = s->key_cache + ((size_t)l * c->seq_len + pos0) * kv;
    float *vc = s->value_cache + ((size_t)l * c->seq_len + pos0) * kv;

    for (int i = 0; i < T; i++) k_rmsnorm(s->xb + (size_t)i * d, s->x + (size_t)i * d, w->rms_att + (size_t)l * d, d);
    MatMul qkv = {.in = s->xb, .T = T, .n_in = d, .n_mats = 3,   /* q [T][dim]; k, v straight into the cache */
                  .out = {s->q, kc, vc}, .w = {w->wq + l * dd, w->wk + l * dkv, w->wv + l * dkv}, .n_out = {d, kv, kv}};
    matmul_run(s, &qkv);
    if (a->routers) matmul(s, s->rlog, s->xb, a->routers + (size_t)l * c->n_heads * d, T, d, c->n_heads);
    rope_rows(s, s->q, d, T, d, pos0);
    rope_rows(s, kc, kv, T, kv, pos0);
    if (s->q_cache) memcpy(s->q_cache + ((size_t)l * c->seq_len + pos0) * d, s->q, (size_t)T * d * sizeof(float));

    AttnJob job = {s, a, l, T, pos0, tr};
    pool_run(s->pool, attn_task, &job, c->n_kv_heads);       /* xb [T][dim] = attention output */

    matmul(s, s->xb2, s->xb, w->wo + l * dd, T, d, d);
    for (size_t i = 0; i < (size_t)T * d; i++) s->x[i] += s->xb2[i];

    for (int i = 0; i < T; i++) k_rmsnorm(s->xb + (size_t)i * d, s->x + (size_t)i * d, w->rms_ffn + (size_t)l * d, d);
    MatMul ffn = {.in = s->xb, .T = T, .n_in = d, .n_mats = 2, .out = {s->hb, s->hb2},
                  .w = {w->w1 + l * dh, w->w3 + l * dh}, .n_out = {hid, hid}};
    matmul_run(s, &ffn);
    k_swiglu(s->hb, s->hb2, T * hid);
    matmul(s, s->xb2, s->hb, w->w2 + l * dh, T, hid, d);
    for (size_t i = 0; i < (size_t)T * d; i++) s->x[i] += s->xb2[i];
}

static void forward_chunk(const Model *m, RunState *s, const AttnConfig *a, const int *tokens, int T, int pos0,
                          float *logits_all, StepTrace **tr) {
    const Config *c = &m->c;
    int d = c->dim;
    for (int i = 0; i < T; i++) memcpy(s->x + (size_t)i * d, m->w.token_embedding + (size_t)tokens[i] * d, d * sizeof(float));
    for (int l = 0; l < c->n_layers; l++) layer_forward(m, s, a, l, T, pos0, tr);
    if (logits_all) {
        for (int i = 0; i < T; i++) k_rmsnorm(s->xb + (size_t)i * d, s->x + (size_t)i * d, m->w.rms_final, d);
        matmul(s, logits_all, s->xb, m->w.wcls, T, d, c->vocab_size);
        memcpy(s->logits, logits_all + (size_t)(T - 1) * c->vocab_size, c->vocab_size * sizeof(float));
    } else {
        k_rmsnorm(s->xb, s->x + (size_t)(T - 1) * d, m->w.rms_final, d);
        matmul(s, s->logits, s->xb, m->w.wcls, 1, d, c->vocab_size);
    }
}

void fwd_forward(const Model *m, RunState *s, const AttnConfig *a, const int *tokens, int n, int pos0,
                 float *logits_all, StepTrace **traces) {
    if (pos0 == 0) fwd_reset(s);
    for (int done = 0; done < n; done += s->max_batch) {
        int T = n - done < s->max_batch ? n - done : s->max_batch;
        if (traces)
            for (int i = 0; i < T; i++) { traces[done + i]->pos = pos0 + done + i; traces[done + i]->token = tokens[done + i]; }
        forward_chunk(m, s, a, tokens + done, T, pos0 + done,
                      logits_all ? logits_all + (size_t)done * m->c.vocab_size : NULL, traces ? traces + done : NULL);
    }
}

int fwd_keep_queries(RunState *s, Err *e) {
    if (s->q_cache) return 0;
    size_t n = (size_t)s->c.n_layers * s->c.seq_len * s->c.dim;
    s->q_cache = calloc(n, sizeof(float));
    if (!s->q_cache) return err_set(e, "out of memory for the query cache (%zu MB)", n * sizeof(float) >> 20);
    return 0;
}

int fwd_attention_weights(const RunState *s, int layer, int head, int pos, float *w) {
    const Config *c = &s->c;
    if (!s->q_cache || layer < 0 || layer >= c->n_layers || head < 0 || head >= c->n_heads || pos < 0 ||
        pos >= c->seq_len)
        return -1;
    int hs = c->head_size, kvh = head / (c->n_heads / c->n_kv_heads);
    const float *q = s->q_cache + ((size_t)layer * c->seq_len + pos) * c->dim + (size_t)head * hs;
    const float *k = s->key_cache + (size_t)layer * c->seq_len * c->kv_dim + (size_t)kvh * hs;
    float scale = 1.0f / sqrtf((float)hs), m = -INFINITY;
    for (int i = 0; i <= pos; i++) {
        float dot = 0;
        for (int j = 0; j < hs; j++) dot += q[j] * k[(size_t)i * c->kv_dim + j];
        w[i] = dot * scale;
        if (w[i] > m) m = w[i];
    }
    double z = 0;
    for (int i = 0; i <= pos; i++) z += (w[i] = expf(w[i] - m));
    for (int i = 0; i <= pos; i++) w[i] = (float)(w[i] / z);
    return 0;
}
