/* train_multi.c — training's multi-choice router and attention (engine/train_multi.h). */
#include "train_multi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "attn.h"
#include "decide.h"

int train_multi_keys(int t, const int *windows, int K, int sinks, int k) {
    if (k >= K) return t + 1;
    int ns, lo;
    attn_local_set(t, windows[k], sinks, &ns, &lo);
    return ns + (t - lo + 1);
}

long train_multi_router_forward(float *p, uint8_t *choice, uint8_t *gate, const float *xn, const float *wr, float tau,
                                int N, int C, int H, int K) {
    int n_out = H * (K + 1);
    train_matmul_forward(p, xn, wr, N, C, n_out); /* the logits, then softmax in place */
    long global = 0;
    for (size_t c = 0; c < (size_t)N * H; c++) {
        float *z = p + c * (K + 1), g;
        int k = decide_multi(z, K, tau, &g);
        choice[c] = (uint8_t)k, gate[c] = k == K;
        global += k == K;
        float m = z[0];
        for (int i = 1; i <= K; i++) m = z[i] > m ? z[i] : m;
        double sum = 0;
        for (int i = 0; i <= K; i++) sum += z[i] = expf(z[i] - m);
        for (int i = 0; i <= K; i++) z[i] = (float)(z[i] / sum);
    }
    return global;
}

void train_multi_softmax_backward(float *dp, const float *p, int n0, int n1, int H, int K) {
    for (size_t c = (size_t)n0 * H; c < (size_t)n1 * H; c++) {
        float *g = dp + c * (K + 1);
        const float *q = p + c * (K + 1);
        double dot = 0;
        for (int i = 0; i <= K; i++) dot += (double)q[i] * g[i];
        for (int i = 0; i <= K; i++) g[i] = (float)(q[i] * (g[i] - dot));
    }
}

void train_multi_router_backward(float *dxn, float *dwr, const float *dz, const float *xn, const float *wr, int N,
                                 int C, int H, int K) {
    int n_out = H * (K + 1);
    if (dxn) cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, n_out, 1.0f, dz, n_out, wr, C, 1.0f, dxn, C);
    if (dwr) cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_out, C, N, 1.0f, dz, n_out, xn, C, 1.0f, dwr, C);
}

/* Window k's call of the two-way attention: its local branch into the
 * k-th block, the global branch into o_all (the same every call). */
static AttnActs window_acts(const AttnDims *d, const MultiActs *m, int k) {
    size_t N = (size_t)d->B * d->T, D = (size_t)d->n_heads * d->head_size;
    return (AttnActs){.q = m->q, .k = m->k, .v = m->v, .gate = m->gate, .out = m->tmp, .o_all = m->o_all,
                      .o_here = m->o_win + k * N * D, .lse_all = m->lse_all,
                      .lse_here = m->lse_win + k * N * d->n_heads};
}

void train_multi_attention_forward(const AttnDims *d, const int *windows, int K, const MultiActs *m, float *scratch) {
    size_t N = (size_t)d->B * d->T, H = d->n_heads, hs = d->head_size, D = H * hs;
    for (int k = 0; k < K; k++) {
        AttnDims dk = *d;
        dk.window = windows[k];
        AttnActs a = window_acts(d, m, k);
        attention_forward(&dk, &a, scratch);
    }
    for (size_t n = 0; n < N; n++)
        for (size_t h = 0; h < H; h++) {
            int c = m->choice[n * H + h];
            const float *src = c == K ? m->o_all : m->o_win + (size_t)c * N * D;
            memcpy(m->out + n * D + h * hs, src + n * D + h * hs, hs * sizeof(float));
        }
}

/* ⟨dout, o⟩ over one head's slice. */
static float slice_dot(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return (float)s;
}

void train_multi_attention_backward(const AttnDims *d, const int *windows, int K, const MultiActs *m,
                                    const float *dout, float *dq, float *dk, float *dv, float *dp, float *scratch) {
    size_t N = (size_t)d->B * d->T, H = d->n_heads, hs = d->head_size, D = H * hs;
    /* call k carries the rows that chose window k, and call 0 the global
     * ones too: every other row's dout is 0 there, so adds nothing */
    for (int k = 0; k < K; k++) {
        for (size_t n = 0; n < N; n++)
            for (size_t h = 0; h < H; h++) {
                int c = m->choice[n * H + h], mine = c == k || (k == 0 && c == K);
                float *to = m->tmp + n * D + h * hs;
                if (mine) memcpy(to, dout + n * D + h * hs, hs * sizeof(float));
                else memset(to, 0, hs * sizeof(float));
            }
        memset(m->tmp_dg, 0, N * H * sizeof(float));
        AttnDims dk_ = *d;
        dk_.window = windows[k];
        AttnActs a = window_acts(d, m, k);
        a.out = NULL; /* the backward reads the branches, not the executed copy */
        attention_backward(&dk_, &a, m->tmp, dq, dk, dv, m->tmp_dg, scratch);
    }
    for (size_t n = 0; n < N; n++)
        for (size_t h = 0; h < H; h++) {
            const float *g = dout + n * D + h * hs;
            float *to = dp + (n * H + h) * (K + 1);
            for (int k = 0; k < K; k++) to[k] = slice_dot(g, m->o_win + (size_t)k * N * D + n * D + h * hs, hs);
            to[K] = slice_dot(g, m->o_all + n * D + h * hs, hs);
        }
}

int train_multi_init(TrainState *s, const int *windows, int K, Err *e) {
    if (K < 1 || K > 8) return err_set(e, "a multi-choice router has 1 to 8 windows (got %d)", K);
    for (int k = 0; k < K; k++)
        if (windows[k] < 1 || (k && windows[k] <= windows[k - 1]))
            return err_set(e, "a multi-choice router's windows must be increasing whole numbers from 1");
    TrainMulti *m = calloc(1, sizeof *m);
    if (!m) return err_set(e, "out of memory");
    size_t L = s->c.n_layers, N = (size_t)s->B * s->T_alloc, H = s->c.n_heads, D = (size_t)s->c.dim;
    size_t n_p = L * N * H * (K + 1), n_o = L * K * N * D, n_l = L * K * N * H, n_dp = N * H * (K + 1);
    m->K = K;
    memcpy(m->windows, windows, (size_t)K * sizeof(int));
    m->mem = calloc(n_p + n_o + n_l + n_dp + N * D + N * H, sizeof(float));
    m->bytes = calloc(L * N * H, 1);
    if (!m->mem || !m->bytes) {
        free(m->mem), free(m->bytes), free(m);
        return err_set(e, "out of memory for the multi-choice router's branches");
    }
    m->p = m->mem, m->o_win = m->p + n_p, m->lse_win = m->o_win + n_o, m->dp = m->lse_win + n_l;
    m->tmp = m->dp + n_dp, m->tmp_dg = m->tmp + N * D;
    m->choice = m->bytes;
    s->multi = m;
    return 0;
}
