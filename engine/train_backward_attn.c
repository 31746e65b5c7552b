/* train_backward_attn.c — training's AHA attention: both branches, in blocks of queries, and their backward.
 *
 * AHA attention for training: both branches
 * forward, the executed one backward, and the straight-through router
 * gradient, tiled over query blocks so every product is an sgemm.
 *
 * A branch is the key set [0, ns) ∪ [lo, t]: the global branch is ns = 0,
 * lo = 0 (every key ≤ t), the local one the sinks and window of
 * attn_local_set — the very set the inference kernel reads. For a block of
 * ATTN_TILE queries of one head the scores against every key up to the
 * block's end are one product (S = Q·Kᵀ/√d); each row is then turned into
 * the exponentials of its branch, exp(s − max), with zeros outside it (and
 * above the diagonal), and the outputs are one more product (O = E·V),
 * each output row divided by its sum afterwards: hs divisions a row, not
 * one per key. Zeros cost a little arithmetic in the diagonal block but
 * buy BLAS speed for the rest. The log-sum-exp of each branch is saved and
 * the backward recomputes the scores, one more product but no [T][T]
 * buffers per head; with one branch (the window covers the sequence) and
 * room in AttnActs.pstore, the forward keeps the exponentials there and
 * the backward skips that product and the exponentials.
 *
 * Work is split by (sequence, KV head): a task owns the dk, dv rows of its
 * KV head and the dq rows of its query heads, so no two tasks write the
 * same float and the result does not depend on the thread count. Tasks
 * claim the pairs one at a time.
 */
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "attn.h"
#include "pool.h"
#include "train_backward.h"

enum { ATTN_TILE = 64 }; /* query rows per block */

/* Floats of each of a task's two buffers: a block's scores against T keys,
 * or (the kept backward) a block's rows of head_size. */
static size_t scratch_width(const AttnDims *d) { return (size_t)ATTN_TILE * (d->T > d->head_size ? d->T : d->head_size); }

size_t attention_scratch_floats(const AttnDims *d) {
    int tasks = pool_threads(d->pool);
    return (size_t)tasks * 2 * scratch_width(d);
}

/* Where query block t0 of one head starts in its part of the store: the
 * blocks before it are full, block k holding ATTN_TILE rows of (k+1)·ATTN_TILE
 * keys and one normaliser a row. */
static size_t store_offset(int t0) {
    size_t k = (size_t)t0 / ATTN_TILE;
    return (size_t)ATTN_TILE * ATTN_TILE * k * (k + 1) / 2 + (size_t)ATTN_TILE * k;
}

/* Floats of one head of one sequence in the store. */
static size_t store_head(int T) {
    int last = (T - 1) / ATTN_TILE * ATTN_TILE, rows = T - last;
    return store_offset(last) + (size_t)rows * T + rows;
}

size_t attention_store_floats(const AttnDims *d) { return (size_t)d->B * d->n_heads * store_head(d->T); }

/* x[i] = exp(x[i] − m) for i < n, in float: n = round((x−m)·log2 e) by
 * the 1.5·2²³ rounding trick, the remainder r in ±ln2/2 by a two-part
 * ln 2, e^r by its Taylor series to r⁶ (relative error below 2e-7), times
 * 2ⁿ built in the exponent bits. Branch-free, so the compiler vectorises
 * it; arguments below −87 give 0. */
static inline float exp_one(float x, float m) {
    const float magic = 12582912.0f; /* 1.5·2²³: adding it rounds to an integer */
    float v = x - m;
    float c = v < -87.0f ? -87.0f : v;
    c = c > 88.0f ? 88.0f : c;
    float kr = c * 1.44269504f + magic;
    float k = kr - magic;
    float r = c - k * 0.693145752f - k * 1.42860677e-6f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
                                                 r * (8.33333377e-3f + r * 1.38888892e-3f)))));
    union { float f; uint32_t u; } s = {.f = kr};
    s.u = (s.u - 0x4B400000u + 127u) << 23; /* kr's low mantissa bits hold k (NaN in: NaN out, through p) */
    return v < -87.0f ? 0.0f : p * s.f;
}

/* Sixteen lanes: the sums and maxima below keep sixteen independent chains,
 * which the compiler turns into one vector without reordering any chain. */
enum { LANES = 16 };

__attribute__((target_clones("avx512f", "avx2", "default"))) static void exp_shift(float *x, int n, float m) {
    for (int i = 0; i < n; i++) x[i] = exp_one(x[i], m);
}

/* exp_shift, returning Σ x[i] after it (float lanes, added up in double):
 * a softmax row's exponentials and normaliser in one pass. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static double exp_shift_sum(float *x, int n, float m) {
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) {
            float e = exp_one(x[i + k], m);
            x[i + k] = e;
            acc[k] += e;
        }
    double z = 0;
    for (; i < n; i++) {
        x[i] = exp_one(x[i], m);
        z += x[i];
    }
    for (int k = 0; k < LANES; k++) z += acc[k];
    return z;
}

/* The clones' dispatcher is called from this file only: clang resolves
 * target_clones per translation unit, so other files call this instead. */
void train_exp_shift(float *x, int n, float m) { exp_shift(x, n, m); }

/* max(m, x[0 .. n)). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static float span_max(const float *x, int n, float m) {
    float acc[LANES];
    for (int k = 0; k < LANES; k++) acc[k] = m;
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) acc[k] = x[i + k] > acc[k] ? x[i + k] : acc[k];
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    for (int k = 0; k < LANES; k++) m = acc[k] > m ? acc[k] : m;
    return m;
}

double train_exp_max_sum(float *x, int n, float *max) {
    *max = span_max(x, n, x[0]);
    return exp_shift_sum(x, n, *max);
}

/* dS = P∘(dP − d_o)·scale in place over dp[0 .. n). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void softmax_grad(float *dp, const float *p, int n,
                                                                                     float d_o, float scale) {
    for (int k = 0; k < n; k++) dp[k] = p[k] * (dp[k] - d_o) * scale;
}

/* One head of one sequence: where its queries, keys and values start and
 * the strides between positions. */
typedef struct {
    const float *q, *k, *v;  /* position 0 of the sequence, this head's columns */
    int D, KV, hs;           /* row strides of q and k/v; head size */
    float scale;             /* 1/√head_size */
} HeadMats;

static HeadMats head_mats(const AttnDims *d, const AttnActs *a, int b, int h) {
    int D = d->n_heads * d->head_size, KV = d->n_kv_heads * d->head_size;
    int kvh = h / (d->n_heads / d->n_kv_heads);
    size_t row0 = (size_t)b * d->T;
    return (HeadMats){a->q + row0 * D + (size_t)h * d->head_size, a->k + row0 * KV + (size_t)kvh * d->head_size,
                      a->v + row0 * KV + (size_t)kvh * d->head_size, D, KV, d->head_size,
                      1.0f / sqrtf((float)d->head_size)};
}

/* S[rows][ld] = scale · Q[t0 .. t0+rows) · K[0 .. keys)ᵀ. */
static void tile_scores(const HeadMats *m, int t0, int rows, int keys, float *S, int ld) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, m->hs, m->scale, m->q + (size_t)t0 * m->D, m->D,
                m->k, m->KV, 0.0f, S, ld);
}

/* Forward: row p[from .. keys) := exp(s − m) on the branch [0, ns) ∪
 * [lo, t] of the scores s, m the branch's maximum, zeros elsewhere (from ≤
 * lo, and from = 0 when there are sinks: what is left of from is not
 * written); p may be s. Not normalised: returns the sum z, by which the
 * caller divides the branch's output row instead (hs floats, not keys);
 * *lse = m + log z. */
static double branch_exp(float *p, const float *s, int keys, int t, int ns, int lo, int from, float *lse) {
    if (p != s) {
        memcpy(p, s, (size_t)ns * sizeof(float));
        memcpy(p + lo, s + lo, (size_t)(t + 1 - lo) * sizeof(float));
    }
    float m = span_max(p + lo, t + 1 - lo, span_max(p, ns, -INFINITY));
    int z0 = ns > from ? ns : from;
    memset(p + z0, 0, (size_t)(lo - z0) * sizeof(float));
    memset(p + t + 1, 0, (size_t)(keys - t - 1) * sizeof(float));
    double z = exp_shift_sum(p, ns, m) + exp_shift_sum(p + lo, t + 1 - lo, m);
    *lse = (float)(m + log(z));
    return z;
}

/* Backward: row p[0 .. keys) of scores := the branch's probabilities
 * exp(s − lse) with the saved log-sum-exp, zeros elsewhere. */
static void branch_probs(float *p, int keys, int t, int ns, int lo, float lse) {
    memset(p + ns, 0, (size_t)(lo - ns) * sizeof(float));
    memset(p + t + 1, 0, (size_t)(keys - t - 1) * sizeof(float));
    exp_shift(p, ns, lse);
    exp_shift(p + lo, t + 1 - lo, lse);
}

/* o[rows][hs] (row stride ld) *= inv[row]. */
static void scale_rows(float *o, int ld, int rows, int hs, const float *inv) {
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < hs; k++) o[(size_t)i * ld + k] *= inv[i];
}

/* One attention call: its tasks claim (sequence, KV head) pairs one at a
 * time from `next` (each pair all its query heads), so a thread the host
 * slows takes fewer pairs instead of holding the others up. */
typedef struct {
    const AttnDims *d;
    const AttnActs *a;
    const float *dout;
    float *dq, *dk, *dv, *dgate, *scratch;
    int tasks;
    atomic_int next;
} AttnJob;

/* Forward of query head h of sequence b: both branches' outputs and
 * log-sum-exps, and the executed one copied to out. */
static void head_forward(const AttnJob *j, int b, int h, float *S, float *P) {
    const AttnDims *d = j->d;
    const AttnActs *a = j->a;
    HeadMats m = head_mats(d, a, b, h);
    int T = d->T, H = d->n_heads, hs = d->head_size;
    int one_branch = d->window >= T; /* every window holds the whole prefix: local is global */
    float *store = one_branch && a->pstore ? a->pstore + ((size_t)b * H + h) * store_head(T) : NULL;
    for (int t0 = 0; t0 < T; t0 += ATTN_TILE) {
        int rows = T - t0 < ATTN_TILE ? T - t0 : ATTN_TILE, keys = t0 + rows, ns0, lo_min;
        /* the local branch reads no key before the block's first window start (none with sinks) */
        attn_local_set(t0, d->window, d->sinks, &ns0, &lo_min);
        if (ns0 > 0) lo_min = 0;
        float inv_tile[ATTN_TILE], inv_here[ATTN_TILE], *inv_all = inv_tile;
        if (store) { /* the exponentials stay for the backward, each row's 1/z after them */
            S = store + store_offset(t0);
            inv_all = S + (size_t)rows * keys;
        }
        tile_scores(&m, t0, rows, keys, S, keys);
        for (int i = 0; i < rows; i++) {
            int t = t0 + i, ns, lo;
            size_t n = (size_t)b * T + t;
            attn_local_set(t, d->window, d->sinks, &ns, &lo);
            float *srow = S + (size_t)i * keys;
            if (!one_branch)
                inv_here[i] = (float)(1.0 / branch_exp(P + (size_t)i * keys, srow, keys, t, ns, lo, lo_min,
                                                       &a->lse_here[n * H + h]));
            inv_all[i] = (float)(1.0 / branch_exp(srow, srow, keys, t, 0, 0, 0, &a->lse_all[n * H + h]));
            if (one_branch) a->lse_here[n * H + h] = a->lse_all[n * H + h];
        }
        size_t off = ((size_t)b * T + t0) * m.D + (size_t)h * hs;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, keys, 1.0f, S, keys, m.v, m.KV, 0.0f,
                    a->o_all + off, m.D);
        scale_rows(a->o_all + off, m.D, rows, hs, inv_all);
        if (!one_branch) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, keys - lo_min, 1.0f, P + lo_min, keys,
                        m.v + (size_t)lo_min * m.KV, m.KV, 0.0f, a->o_here + off, m.D);
            scale_rows(a->o_here + off, m.D, rows, hs, inv_here);
        }
        for (int i = 0; i < rows; i++) {
            size_t n = (size_t)b * T + t0 + i, o = n * m.D + (size_t)h * hs;
            if (one_branch) memcpy(a->o_here + o, a->o_all + o, (size_t)hs * sizeof(float));
            if (a->mix)
                for (int k = 0; k < hs; k++) a->out[o + k] = a->mix[h] * a->o_all[o + k] + (1 - a->mix[h]) * a->o_here[o + k];
            else memcpy(a->out + o, (a->gate[n * H + h] ? a->o_all : a->o_here) + o, (size_t)hs * sizeof(float));
        }
    }
}

/* The products of the backward once dS is known (in dS):
 * dQ += dS·K,  dK += dSᵀ·Q (dV is the caller's). */
static void tile_grads(const AttnJob *j, const HeadMats *m, int t0, int rows, int keys, size_t off, size_t kv0,
                       const float *dS) {
    if (j->dq)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, m->hs, keys, 1.0f, dS, keys, m->k, m->KV, 1.0f,
                    j->dq + off, m->D);
    if (j->dk)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, m->hs, rows, 1.0f, dS, keys,
                    m->q + (size_t)t0 * m->D, m->D, 1.0f, j->dk + kv0, m->KV);
}

/* The backward of a one-branch head from the forward's kept exponentials
 * E and normalisers 1/z (P = E/z): dV += Eᵀ·(dO/z), dS = E∘(dP − d_o)·(scale/z);
 * the router gradient ⟨dO, o_all − o_here⟩ is 0. dOz holds ATTN_TILE·hs floats. */
static void head_backward_kept(const AttnJob *j, int b, int h, float *dOz, float *dP) {
    const AttnDims *d = j->d;
    const AttnActs *a = j->a;
    HeadMats m = head_mats(d, a, b, h);
    int T = d->T, H = d->n_heads, hs = d->head_size, kvh = h / (H / d->n_kv_heads);
    size_t kv0 = (size_t)b * T * m.KV + (size_t)kvh * hs;
    const float *store = a->pstore + ((size_t)b * H + h) * store_head(T);
    for (int t0 = 0; t0 < T; t0 += ATTN_TILE) {
        int rows = T - t0 < ATTN_TILE ? T - t0 : ATTN_TILE, keys = t0 + rows;
        size_t off = ((size_t)b * T + t0) * m.D + (size_t)h * hs;
        const float *dO = j->dout + off, *E = store + store_offset(t0), *inv = E + (size_t)rows * keys;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, hs, 1.0f, dO, m.D, m.v, m.KV, 0.0f, dP,
                    keys);
        for (int i = 0; i < rows; i++) {
            const float *g = dO + (size_t)i * m.D, *o = a->o_all + off + (size_t)i * m.D;
            float d_o = 0;
            for (int k = 0; k < hs; k++) {
                d_o += g[k] * o[k];
                dOz[(size_t)i * hs + k] = g[k] * inv[i];
            }
            softmax_grad(dP + (size_t)i * keys, E + (size_t)i * keys, keys, d_o, m.scale * inv[i]);
        }
        if (j->dv)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, hs, rows, 1.0f, E, keys, dOz, hs, 1.0f,
                        j->dv + kv0, m.KV);
        tile_grads(j, &m, t0, rows, keys, off, kv0, dP);
    }
}

/* The router gradient of head h, ⟨dO, o_all − o_here⟩ a row, added to dgate:
 * the STE's ∂L/∂r, and with a mix ∂L/∂α row by row. */
static void head_dgate(const AttnJob *j, int b, int h) {
    const AttnDims *d = j->d;
    const AttnActs *a = j->a;
    int H = d->n_heads, hs = d->head_size, D = H * hs;
    for (int t = 0; t < d->T; t++) {
        size_t n = (size_t)b * d->T + t, o = n * D + (size_t)h * hs;
        float sum = 0;
        for (int k = 0; k < hs; k++) sum += j->dout[o + k] * (a->o_all[o + k] - a->o_here[o + k]);
        j->dgate[n * H + h] += sum;
    }
}

/* Softmax attention backward of one branch of each row, scaled by c (the
 * branch's share of the output), from probabilities recomputed with the
 * saved log-sum-exp: branch 1 global, 0 local, -1 the row's executed one:
 *   dV += c·Pᵀ·dO,  dP = c·dO·Vᵀ,  dS = P∘(dP − c·rowsum(dO∘O))/√d,  dQ += dS·K,  dK += dSᵀ·Q. */
static void branch_backward(const AttnJob *j, int b, int h, float *P, float *dP, int branch, float c) {
    const AttnDims *d = j->d;
    const AttnActs *a = j->a;
    HeadMats m = head_mats(d, a, b, h);
    int T = d->T, H = d->n_heads, hs = d->head_size, kvh = h / (H / d->n_kv_heads);
    size_t kv0 = (size_t)b * T * m.KV + (size_t)kvh * hs;
    for (int t0 = 0; t0 < T; t0 += ATTN_TILE) {
        int rows = T - t0 < ATTN_TILE ? T - t0 : ATTN_TILE, keys = t0 + rows;
        size_t off = ((size_t)b * T + t0) * m.D + (size_t)h * hs;
        const float *dO = j->dout + off;
        tile_scores(&m, t0, rows, keys, P, keys);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, hs, c, dO, m.D, m.v, m.KV, 0.0f, dP, keys);
        for (int i = 0; i < rows; i++) {
            int t = t0 + i, ns = 0, lo = 0;
            size_t n = (size_t)b * T + t, o = n * m.D + (size_t)h * hs;
            const float *g = j->dout + o;
            int global = branch < 0 ? a->gate[n * H + h] : branch;
            if (!global) attn_local_set(t, d->window, d->sinks, &ns, &lo);
            float *p = P + (size_t)i * keys, *dp = dP + (size_t)i * keys;
            branch_probs(p, keys, t, ns, lo, global ? a->lse_all[n * H + h] : a->lse_here[n * H + h]);
            const float *oe = (global ? a->o_all : a->o_here) + o;
            float d_o = 0;
            for (int k = 0; k < hs; k++) d_o += g[k] * oe[k];
            softmax_grad(dp, p, keys, c * d_o, m.scale); /* dS, zero outside the branch */
        }
        if (j->dv)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, hs, rows, c, P, keys, dO, m.D, 1.0f,
                        j->dv + kv0, m.KV);
        tile_grads(j, &m, t0, rows, keys, off, kv0, dP);
    }
}

/* The STE backward (the executed branch of each row gets dO), or with a
 * mix α each branch its share; the router gradient first. */
static void head_backward(const AttnJob *j, int b, int h, float *P, float *dP) {
    const AttnDims *d = j->d;
    const AttnActs *a = j->a;
    if (d->window >= d->T && a->pstore) { /* one branch: α·o + (1−α)·o is o, the gate's gradient 0 */
        head_backward_kept(j, b, h, P, dP);
        return;
    }
    if (j->dgate) head_dgate(j, b, h);
    if (!a->mix) {
        branch_backward(j, b, h, P, dP, -1, 1.0f);
        return;
    }
    if (a->mix[h] != 0) branch_backward(j, b, h, P, dP, 1, a->mix[h]);
    if (a->mix[h] != 1) branch_backward(j, b, h, P, dP, 0, 1 - a->mix[h]);
}

/* Task `task` uses its own scratch for every pair it claims. */
static void attn_task(void *ctx, int task, int n_tasks, int backward) {
    AttnJob *j = ctx;
    const AttnDims *d = j->d;
    (void)n_tasks;
    int group = d->n_heads / d->n_kv_heads, pairs = d->B * d->n_kv_heads;
    float *S = j->scratch + (size_t)task * 2 * scratch_width(d), *P = S + scratch_width(d);
    for (int pair; (pair = atomic_fetch_add(&j->next, 1)) < pairs;) {
        int b = pair / d->n_kv_heads, kvh = pair % d->n_kv_heads;
        for (int h = kvh * group; h < (kvh + 1) * group; h++) {
            if (backward) head_backward(j, b, h, S, P);
            else head_forward(j, b, h, S, P);
        }
    }
}

static void forward_task(void *ctx, int task, int n_tasks) { attn_task(ctx, task, n_tasks, 0); }
static void backward_task(void *ctx, int task, int n_tasks) { attn_task(ctx, task, n_tasks, 1); }

static int job_tasks(const AttnDims *d) {
    int threads = pool_threads(d->pool), pairs = d->B * d->n_kv_heads;
    return threads < pairs ? threads : pairs;
}

void attention_forward(const AttnDims *d, const AttnActs *a, float *scratch) {
    AttnJob j = {.d = d, .a = a, .scratch = scratch, .tasks = job_tasks(d)};
    if (d->pool) pool_run(d->pool, forward_task, &j, j.tasks);
    else forward_task(&j, 0, 1);
}

void attention_backward(const AttnDims *d, const AttnActs *a, const float *dout, float *dq, float *dk, float *dv,
                        float *dgate, float *scratch) {
    AttnJob j = {.d = d, .a = a, .dout = dout, .dq = dq, .dk = dk, .dv = dv, .dgate = dgate, .scratch = scratch,
                 .tasks = job_tasks(d)};
    if (d->pool) pool_run(d->pool, backward_task, &j, j.tasks);
    else backward_task(&j, 0, 1);
}
