/* train_backward.c — the layer primitives of training (all but attention). */
#include "train_backward.h"

#include <cblas.h>
#include <math.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "decide.h"

void train_flush_subnormals(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8000u | 0x0040u); /* FTZ: results; DAZ: operands */
#endif
}

void embed_forward(float *x, const int *tokens, const float *emb, int N, int C) {
    for (int n = 0; n < N; n++) memcpy(x + (size_t)n * C, emb + (size_t)tokens[n] * C, (size_t)C * sizeof(float));
}

void embed_backward(float *demb, const float *dx, const int *tokens, int N, int C) {
    if (!demb) return;
    for (int n = 0; n < N; n++) {
        float *row = demb + (size_t)tokens[n] * C;
        const float *g = dx + (size_t)n * C;
        for (int i = 0; i < C; i++) row[i] += g[i];
    }
}

void train_matmul_forward(float *out, const float *in, const float *w, int N, int n_in, int n_out) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, n_out, n_in, 1.0f, in, n_in, w, n_in, 0.0f, out, n_out);
}

void train_matmul_backward(float *din, float *dw, const float *dout, const float *in, const float *w, int N,
                           int n_in, int n_out) {
    if (din)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, n_in, n_out, 1.0f, dout, n_out, w, n_in, 1.0f, din,
                    n_in);
    if (dw)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_out, n_in, N, 1.0f, dout, n_out, in, n_in, 1.0f, dw,
                    n_in);
}

void rmsnorm_forward(float *out, float *rstd, const float *x, const float *w, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float *xr = x + (size_t)n * C;
        float *o = out + (size_t)n * C;
        float ss = 0;
        for (int i = 0; i < C; i++) ss += xr[i] * xr[i];
        ss = 1.0f / sqrtf(ss / C + 1e-5f);
        for (int i = 0; i < C; i++) o[i] = w[i] * (ss * xr[i]);
        rstd[n] = ss;
    }
}

/* y_i = w_i·x_i·ρ with ρ = (mean x² + ε)^(−1/2), ∂ρ/∂x_j = −ρ³·x_j/C, so
 * ∂L/∂x_j = ρ·w_j·dy_j − ρ³·x_j/C · Σ_i dy_i·w_i·x_i. */
void rmsnorm_backward(float *dx, float *dw, const float *dout, const float *x, const float *rstd, const float *w,
                      int N, int C) {
    if (dx)
        for (int n = 0; n < N; n++) {
            const float *xr = x + (size_t)n * C, *dy = dout + (size_t)n * C;
            float rho = rstd[n];
            double dot = 0;
            for (int i = 0; i < C; i++) dot += (double)dy[i] * w[i] * xr[i];
            float k = (float)(dot * rho * rho * rho / C);
            for (int i = 0; i < C; i++) dx[(size_t)n * C + i] += rho * w[i] * dy[i] - k * xr[i];
        }
    if (dw) rmsnorm_backward_weight(dw, dout, x, rstd, N, C, 0, C);
}

void rmsnorm_backward_weight(float *dw, const float *dout, const float *x, const float *rstd, int N, int C, int c0,
                             int c1) {
    for (int n = 0; n < N; n++) {
        const float *xr = x + (size_t)n * C, *dy = dout + (size_t)n * C;
        for (int i = c0; i < c1; i++) dw[i] += dy[i] * xr[i] * rstd[n];
    }
}

void rope_table(float *cos_t, float *sin_t, int T, int head_size, float theta) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < head_size; i += 2) {
            float freq = 1.0f / powf(theta, i / (float)head_size);
            float val = t * freq;
            cos_t[(size_t)t * head_size / 2 + i / 2] = cosf(val);
            sin_t[(size_t)t * head_size / 2 + i / 2] = sinf(val);
        }
}

void rope_rows(float *x, const float *cos_t, const float *sin_t, int T, int n0, int n1, int width, int head_size,
               int inverse) {
    float dir = inverse ? -1.0f : 1.0f; /* the transpose rotates by the negative angle */
    for (int n = n0; n < n1; n++) {
        int t = n % T;
        const float *cs = cos_t + (size_t)t * head_size / 2, *sn = sin_t + (size_t)t * head_size / 2;
        float *row = x + (size_t)n * width;
        for (int j = 0; j < width; j += 2) {
            float c = cs[(j % head_size) / 2], s = dir * sn[(j % head_size) / 2], a = row[j], b = row[j + 1];
            row[j] = a * c - b * s;
            row[j + 1] = a * s + b * c;
        }
    }
}

void rope_forward(float *x, const float *cos_t, const float *sin_t, int B, int T, int width, int head_size) {
    rope_rows(x, cos_t, sin_t, T, 0, B * T, width, head_size, 0);
}

void rope_backward(float *dx, const float *cos_t, const float *sin_t, int B, int T, int width, int head_size) {
    rope_rows(dx, cos_t, sin_t, T, 0, B * T, width, head_size, 1);
}

/* SwiGLU in chunks of this many elements: the sigmoids' exponentials go
 * through one vectorised call per chunk, on the stack. */
enum { SWIGLU_CHUNK = 256 };

/* e[i] = σ(h1[i]) for i < n ≤ SWIGLU_CHUNK. */
static void sigmoid_chunk(float *e, const float *h1, size_t n) {
    for (size_t i = 0; i < n; i++) e[i] = -h1[i];
    train_exp_shift(e, (int)n, 0.0f);
    for (size_t i = 0; i < n; i++) e[i] = 1.0f / (1.0f + e[i]);
}

void swiglu_forward(float *out, const float *h1, const float *h3, size_t n) {
    float sg[SWIGLU_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += SWIGLU_CHUNK) {
        size_t m = n - i0 < SWIGLU_CHUNK ? n - i0 : SWIGLU_CHUNK;
        sigmoid_chunk(sg, h1 + i0, m);
        for (size_t i = 0; i < m; i++) out[i0 + i] = h1[i0 + i] * sg[i] * h3[i0 + i];
    }
}

/* silu(v) = v·σ(v), silu'(v) = σ(v)·(1 + v·(1 − σ(v))). */
void swiglu_backward(float *dh1, float *dh3, const float *dout, const float *h1, const float *h3, size_t n) {
    float sg[SWIGLU_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += SWIGLU_CHUNK) {
        size_t m = n - i0 < SWIGLU_CHUNK ? n - i0 : SWIGLU_CHUNK;
        sigmoid_chunk(sg, h1 + i0, m);
        for (size_t k = 0; k < m; k++) {
            size_t i = i0 + k;
            float v = h1[i], g = sg[k];
            if (dh1) dh1[i] += dout[i] * h3[i] * g * (1.0f + v * (1.0f - g));
            if (dh3) dh3[i] += dout[i] * v * g;
        }
    }
}

void residual_forward(float *out, const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void residual_backward(float *da, float *db, const float *dout, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (da) da[i] += dout[i];
        if (db) db[i] += dout[i];
    }
}

long train_router_forward(float *r, uint8_t *gate, const float *xn, const float *wr, float tau, int N, int C, int H) {
    train_matmul_forward(r, xn, wr, N, C, H);
    long global = 0;
    for (size_t i = 0; i < (size_t)N * H; i++) {
        gate[i] = decide_router_logit(r[i], tau) == 1; /* as the inference forward decides and scores a head */
        r[i] = 1.0f / (1.0f + expf(-r[i]));
        global += gate[i];
    }
    return global;
}

/* H is a handful of heads: plain loops beat two skinny GEMMs and need no
 * buffer for the logit gradients, recomputed in each half. */
void router_backward_input(float *dxn, const float *dr, const float *r, const float *wr, int N, int C, int H) {
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            float rv = r[(size_t)n * H + h], dl = dr[(size_t)n * H + h] * rv * (1.0f - rv);
            const float *wh = wr + (size_t)h * C;
            for (int i = 0; i < C; i++) dxn[(size_t)n * C + i] += dl * wh[i];
        }
}

void router_backward_weight(float *dwr, const float *dr, const float *r, const float *xn, int N, int C, int H, int c0,
                            int c1) {
    for (int n = 0; n < N; n++) {
        const float *x = xn + (size_t)n * C;
        for (int h = 0; h < H; h++) {
            float rv = r[(size_t)n * H + h], dl = dr[(size_t)n * H + h] * rv * (1.0f - rv);
            for (int i = c0; i < c1; i++) dwr[(size_t)h * C + i] += dl * x[i];
        }
    }
}

void train_router_backward(float *dxn, float *dwr, const float *dr, const float *r, const float *xn,
                           const float *wr, int N, int C, int H) {
    if (dxn) router_backward_input(dxn, dr, r, wr, N, C, H);
    if (dwr) router_backward_weight(dwr, dr, r, xn, N, C, H, 0, C);
}

/* Softmax of one row (float exponentials, summed in double); returns
 * log Σ exp(logits) (for the losses). */
static double softmax_row(float *probs, const float *logits, int V) {
    float m;
    memcpy(probs, logits, (size_t)V * sizeof(float));
    double z = train_exp_max_sum(probs, V, &m);
    float inv = (float)(1.0 / z);
    for (int i = 0; i < V; i++) probs[i] *= inv;
    return m + log(z);
}

void loss_rows(double *loss, float *probs, const float *logits, const int *targets, const float *p, int N, int V) {
    for (int n = 0; n < N; n++) {
        const float *l = logits + (size_t)n * V;
        double lse = softmax_row(probs + (size_t)n * V, l, V), sum = 0;
        if (!p) { loss[n] = lse - l[targets[n]]; continue; }
        const float *pr = p + (size_t)n * V;
        for (int i = 0; i < V; i++)
            if (pr[i] > 0) sum += pr[i] * (log((double)pr[i]) - ((double)l[i] - lse)); /* 0·log 0 = 0 */
        loss[n] = sum;
    }
}

/* Adds Σ w·loss over the rows with w ≠ 0 to *sum and Σ w to *wsum (w NULL: all 1). */
static void loss_weigh(const double *loss, const float *weights, int N, double *sum, double *wsum) {
    for (int n = 0; n < N; n++) {
        double w = weights ? weights[n] : 1;
        if (w != 0) *sum += w * loss[n];
        *wsum += w;
    }
}

double loss_mean(const double *loss, const float *weights, int N) {
    double sum = 0, wsum = 0;
    loss_weigh(loss, weights, N, &sum, &wsum);
    return wsum > 0 ? sum / wsum : 0;
}

/* loss_rows a block of rows at a time, on the stack. */
enum { LOSS_BLOCK = 64 };

double crossentropy_forward(float *probs, const float *logits, const int *targets, const float *weights, int N, int V) {
    double sum = 0, wsum = 0, loss[LOSS_BLOCK];
    for (int n0 = 0; n0 < N; n0 += LOSS_BLOCK) {
        int m = N - n0 < LOSS_BLOCK ? N - n0 : LOSS_BLOCK;
        loss_rows(loss, probs + (size_t)n0 * V, logits + (size_t)n0 * V, targets + n0, NULL, m, V);
        loss_weigh(loss, weights ? weights + n0 : NULL, m, &sum, &wsum);
    }
    return wsum > 0 ? sum / wsum : 0;
}

void crossentropy_backward(float *dlogits, const float *probs, const int *targets, const float *weights, int N, int V,
                           float scale) {
    for (int n = 0; n < N; n++) {
        float *d = dlogits + (size_t)n * V, s = scale * (weights ? weights[n] : 1);
        const float *p = probs + (size_t)n * V;
        if (s == 0) continue;
        for (int i = 0; i < V; i++) d[i] += s * p[i];
        d[targets[n]] -= s;
    }
}

double kl_forward(float *probs, const float *logits, const float *p, int N, int V) {
    double sum = 0, loss[LOSS_BLOCK];
    for (int n0 = 0; n0 < N; n0 += LOSS_BLOCK) {
        int m = N - n0 < LOSS_BLOCK ? N - n0 : LOSS_BLOCK;
        loss_rows(loss, probs + (size_t)n0 * V, logits + (size_t)n0 * V, NULL, p + (size_t)n0 * V, m, V);
        for (int i = 0; i < m; i++) sum += loss[i];
    }
    return sum / N;
}

void kl_backward(float *dlogits, const float *probs, const float *p, int N, int V, float scale) {
    for (size_t i = 0; i < (size_t)N * V; i++) dlogits[i] += scale * (probs[i] - p[i]);
}
