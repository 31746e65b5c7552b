/* train_backward_attn.c — AHA attention for training: both branches
 * forward, the executed one backward, and the straight-through router
 * gradient.
 *
 * A branch is the key set [0, ns) ∪ [lo, t]: the global branch is ns = 0,
 * lo = 0 (every key ≤ t), the local one the sinks and window of
 * attn_local_set — the very set the inference kernel reads. Only the
 * log-sum-exp of each branch is saved; the backward recomputes the scores,
 * which costs one more q·k pass but no [T][T] buffers per head.
 */
#include <math.h>
#include <string.h>

#include "attn.h"
#include "train_backward.h"

/* Rows of query head h (or KV head kvh) of sequence b, position t. */
typedef struct {
    const float *q;     /* [head_size] */
    const float *k, *v; /* position 0 of the sequence; key j at k + j·kv_stride */
    int kv_stride, hs;
    float scale;        /* 1/√head_size */
} HeadView;

static HeadView head_view(const AttnDims *d, const AttnActs *a, int b, int h, int t) {
    int D = d->n_heads * d->head_size, KV = d->n_kv_heads * d->head_size;
    int kvh = h / (d->n_heads / d->n_kv_heads);
    size_t row0 = (size_t)b * d->T;
    return (HeadView){.q = a->q + (row0 + t) * D + (size_t)h * d->head_size,
                      .k = a->k + row0 * KV + (size_t)kvh * d->head_size,
                      .v = a->v + row0 * KV + (size_t)kvh * d->head_size,
                      .kv_stride = KV, .hs = d->head_size, .scale = 1.0f / sqrtf((float)d->head_size)};
}

static float dot(const float *x, const float *y, int n) {
    float s = 0;
    for (int i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* s[j] = q·k_j/√d for j in [0, t]. */
static void head_scores(const HeadView *hv, int t, float *s) {
    for (int j = 0; j <= t; j++) s[j] = hv->scale * dot(hv->q, hv->k + (size_t)j * hv->kv_stride, hv->hs);
}

static int in_branch(int j, int ns, int lo) { return j < ns || j >= lo; }

/* o = Σ softmax(s)_j v_j over the branch; returns its log-sum-exp. */
static float branch_forward(const HeadView *hv, const float *s, int t, int ns, int lo, float *o) {
    float m = -INFINITY;
    for (int j = 0; j <= t; j++)
        if (in_branch(j, ns, lo) && s[j] > m) m = s[j];
    double z = 0;
    memset(o, 0, (size_t)hv->hs * sizeof(float));
    for (int j = 0; j <= t; j++) {
        if (!in_branch(j, ns, lo)) continue;
        float e = expf(s[j] - m);
        z += e;
        const float *vj = hv->v + (size_t)j * hv->kv_stride;
        for (int i = 0; i < hv->hs; i++) o[i] += e * vj[i];
    }
    for (int i = 0; i < hv->hs; i++) o[i] = (float)(o[i] / z);
    return (float)(m + log(z));
}

void attention_forward(const AttnDims *d, const AttnActs *a, float *scratch) {
    int D = d->n_heads * d->head_size, H = d->n_heads, hs = d->head_size;
    for (int b = 0; b < d->B; b++)
        for (int t = 0; t < d->T; t++) {
            size_t n = (size_t)b * d->T + t;
            int ns, lo;
            attn_local_set(t, d->window, d->sinks, &ns, &lo);
            for (int h = 0; h < H; h++) {
                HeadView hv = head_view(d, a, b, h, t);
                size_t off = n * D + (size_t)h * hs;
                head_scores(&hv, t, scratch);
                a->lse_all[n * H + h] = branch_forward(&hv, scratch, t, 0, 0, a->o_all + off);
                a->lse_here[n * H + h] = branch_forward(&hv, scratch, t, ns, lo, a->o_here + off);
                const float *src = a->gate[n * H + h] ? a->o_all : a->o_here;
                memcpy(a->out + off, src + off, (size_t)hs * sizeof(float));
            }
        }
}

/* Softmax attention backward over one branch, probabilities recomputed
 * from the scores s and the saved log-sum-exp:
 *   dv_j += p_j·do,  ds_j = p_j·(do·v_j − do·o),  dq += ds_j·k_j/√d,  dk_j += ds_j·q/√d. */
static void branch_backward(const HeadView *hv, const float *s, int t, int ns, int lo, float lse, const float *o,
                            const float *dout, float *dq, float *dk, float *dv) {
    float d_o = dot(dout, o, hv->hs);
    for (int j = 0; j <= t; j++) {
        if (!in_branch(j, ns, lo)) continue;
        const float *kj = hv->k + (size_t)j * hv->kv_stride, *vj = hv->v + (size_t)j * hv->kv_stride;
        float p = expf(s[j] - lse);
        float ds = p * (dot(dout, vj, hv->hs) - d_o) * hv->scale;
        if (dv) {
            float *dvj = dv + (size_t)j * hv->kv_stride;
            for (int i = 0; i < hv->hs; i++) dvj[i] += p * dout[i];
        }
        if (dk) {
            float *dkj = dk + (size_t)j * hv->kv_stride;
            for (int i = 0; i < hv->hs; i++) dkj[i] += ds * hv->q[i];
        }
        if (dq)
            for (int i = 0; i < hv->hs; i++) dq[i] += ds * kj[i];
    }
}

void attention_backward(const AttnDims *d, const AttnActs *a, const float *dout, float *dq, float *dk, float *dv,
                        float *dgate, float *scratch) {
    int D = d->n_heads * d->head_size, KV = d->n_kv_heads * d->head_size, H = d->n_heads, hs = d->head_size;
    for (int b = 0; b < d->B; b++)
        for (int t = 0; t < d->T; t++) {
            size_t n = (size_t)b * d->T + t, row0 = (size_t)b * d->T;
            int ns, lo;
            attn_local_set(t, d->window, d->sinks, &ns, &lo);
            for (int h = 0; h < H; h++) {
                size_t off = n * D + (size_t)h * hs;
                const float *g = dout + off;
                /* STE: o = g̃·o_all + (1−g̃)·o_here, so ∂L/∂g̃ = ⟨g, o_all − o_here⟩ */
                if (dgate) {
                    float sum = 0;
                    for (int i = 0; i < hs; i++) sum += g[i] * (a->o_all[off + i] - a->o_here[off + i]);
                    dgate[n * H + h] += sum;
                }
                HeadView hv = head_view(d, a, b, h, t);
                size_t kvoff = row0 * KV + (size_t)(h / (H / d->n_kv_heads)) * hs;
                float *dqh = dq ? dq + off : NULL, *dkh = dk ? dk + kvoff : NULL, *dvh = dv ? dv + kvoff : NULL;
                head_scores(&hv, t, scratch);
                if (a->gate[n * H + h])
                    branch_backward(&hv, scratch, t, 0, 0, a->lse_all[n * H + h], a->o_all + off, g, dqh, dkh, dvh);
                else
                    branch_backward(&hv, scratch, t, ns, lo, a->lse_here[n * H + h], a->o_here + off, g, dqh, dkh,
                                    dvh);
            }
        }
}
