/* test_backward.c — every training backward against finite differences, and AdamW.
 *
 * Training forward/backward (engine/train_backward.h) and AdamW
 * (engine/train_adamw.h).
 *
 * Every *_backward is checked against central differences of an
 * independent double-precision reference of its forward (written here, not
 * shared with the engine). The whole model is checked the same way against
 * a double reference model that implements the STE literally as a
 * surrogate: the gates g are frozen at the training forward's and the
 * router enters as g̃ = g + r − r₀ with r₀ the base point's r, so the
 * surrogate's value is the hard-gated loss and its derivative is the STE
 * gradient (finite differences of the hard-gated loss itself would see
 * only the flat pieces and the jumps).
 *
 * Tolerances. The references and differences are in double (step 1e-6 on
 * O(1) inputs: truncation ~1e-12, rounding ~1e-10), so their error is
 * negligible; what is measured is the f32 arithmetic of the engine, whose
 * gradients carry relative errors of order 1e-7 (unit roundoff 6e-8 times
 * sums of tens of terms, and the cancellation in the softmax backward
 * p·(dp − ⟨p, dp⟩)). A tensor passes when max |analytic − reference| ≤
 * rtol · max |reference| with rtol = 1e-5 for single primitives (worst seen
 * 2e-7) and 1e-4 for the whole model (two layers of rmsnorm, softmax and
 * SwiGLU chained; worst seen 6e-7): margins of 50–150× for other compilers
 * and the sanitizer build, while a wrong index or a missing term errs by
 * O(1) relative to the tensor. BWD_VERBOSE=1 prints the measured ratios.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/forward.h"
#include "engine/kernels.h"
#include "engine/routers.h"
#include "engine/train_adamw.h"
#include "engine/train_backward.h"
#include "tests/test.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float frand(void) { /* uniform [-1, 1) */
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 40) / 8388608.0 - 1.0);
}

static float *rand_f(size_t n, float scale) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = scale * frand();
    return p;
}

static double *to_double(const float *p, size_t n) {
    double *d = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) d[i] = p[i];
    return d;
}

static double dotd(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* ---- finite differences ---- */

typedef double (*LossFn)(void *ctx);

static double central_diff(LossFn f, void *ctx, double *p, double eps) {
    double keep = *p;
    *p = keep + eps;
    double up = f(ctx);
    *p = keep - eps;
    double down = f(ctx);
    *p = keep;
    return (up - down) / (2 * eps);
}

/* Checks the analytic gradient got[n] of the scalar f against central
 * differences over param[n] (every entry, or max_checks spread over it):
 * max |got − fd| ≤ rtol · max |fd|, and the gradient must not vanish. */
static void check_fd(const char *what, const float *got, double *param, size_t n, LossFn f, void *ctx, double rtol,
                     int max_checks) {
    size_t count = n < (size_t)max_checks ? n : (size_t)max_checks;
    double worst = 0, scale = 0;
    size_t worst_i = 0;
    double *fd = malloc(count * sizeof(double));
    size_t *idx = malloc(count * sizeof(size_t));
    for (size_t k = 0; k < count; k++) {
        idx[k] = count == n ? k : (k * n) / count + (size_t)(k * 7) % (n / count);
        fd[k] = central_diff(f, ctx, param + idx[k], 1e-6);
        if (fabs(fd[k]) > scale) scale = fabs(fd[k]);
    }
    for (size_t k = 0; k < count; k++) {
        double err = fabs(got[idx[k]] - fd[k]);
        if (!(err <= worst)) { worst = err; worst_i = idx[k]; }
    }
    CHECK_MSG(scale > 1e-7, "%s: gradient vanishes (max |fd| = %g)", what, scale);
    CHECK_MSG(worst <= rtol * scale, "%s: [%zu] analytic %.9g vs differences, max error %.3g (%.2g of max |grad| %.3g)",
              what, worst_i, got[worst_i], worst, worst / scale, scale);
    if (getenv("BWD_VERBOSE")) printf("  %-28s err/scale %.2e  scale %.3g  (%zu checked)\n", what, worst / scale, scale, count);
    free(fd);
    free(idx);
}

/* ---- double-precision references of the primitives ---- */

static void ref_matmul(double *out, const double *in, const double *w, int N, int n_in, int n_out) {
    for (int n = 0; n < N; n++)
        for (int o = 0; o < n_out; o++) out[(size_t)n * n_out + o] = dotd(in + (size_t)n * n_in, w + (size_t)o * n_in, n_in);
}

static void ref_rmsnorm(double *out, const double *x, const double *w, int N, int C) {
    for (int n = 0; n < N; n++) {
        const double *xr = x + (size_t)n * C;
        double rho = 1 / sqrt(dotd(xr, xr, C) / C + 1e-5);
        for (int i = 0; i < C; i++) out[(size_t)n * C + i] = w[i] * xr[i] * rho;
    }
}

/* Rotation angles as llama2.c computes them (in float, then used exactly),
 * pairs (2i, 2i+1) within each head. */
static void ref_rope(double *x, int B, int T, int width, int hs, float theta) {
    for (int n = 0; n < B * T; n++)
        for (int j = 0; j < width; j += 2) {
            int i = j % hs;
            float freq = 1.0f / powf(theta, i / (float)hs), val = (float)(n % T) * freq;
            double c = cosf(val), s = sinf(val), a = x[(size_t)n * width + j], b = x[(size_t)n * width + j + 1];
            x[(size_t)n * width + j] = a * c - b * s;
            x[(size_t)n * width + j + 1] = a * s + b * c;
        }
}

/* Both branches by brute force; the output mixes them with a real-valued
 * gate gt (the STE surrogate; gt ∈ {0, 1} is the hard select). */
static void ref_attention(double *out, double *o_all, double *o_here, const double *q, const double *k,
                          const double *v, const double *gt, const AttnDims *d) {
    int hs = d->head_size, D = d->n_heads * hs, KV = d->n_kv_heads * hs, group = d->n_heads / d->n_kv_heads;
    double s[256];
    for (int b = 0; b < d->B; b++)
        for (int t = 0; t < d->T; t++)
            for (int h = 0; h < d->n_heads; h++) {
                size_t n = (size_t)b * d->T + t, off = n * D + (size_t)h * hs;
                const double *kb = k + (size_t)b * d->T * KV + (size_t)(h / group) * hs;
                const double *vb = v + (size_t)b * d->T * KV + (size_t)(h / group) * hs;
                double m = -1e300, z_all = 0, z_here = 0;
                for (int j = 0; j <= t; j++) {
                    s[j] = dotd(q + off, kb + (size_t)j * KV, hs) / sqrt((double)hs);
                    if (s[j] > m) m = s[j];
                }
                for (int i = 0; i < hs; i++) o_all[off + i] = o_here[off + i] = 0;
                for (int j = 0; j <= t; j++) {
                    double e = exp(s[j] - m);
                    int local = j < d->sinks || j > t - d->window;
                    z_all += e;
                    if (local) z_here += e;
                    for (int i = 0; i < hs; i++) {
                        o_all[off + i] += e * vb[(size_t)j * KV + i];
                        if (local) o_here[off + i] += e * vb[(size_t)j * KV + i];
                    }
                }
                double g = gt[n * d->n_heads + h];
                for (int i = 0; i < hs; i++) {
                    o_all[off + i] /= z_all;
                    o_here[off + i] /= z_here;
                    out[off + i] = g * o_all[off + i] + (1 - g) * o_here[off + i];
                }
            }
}

static void ref_swiglu(double *out, const double *h1, const double *h3, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = h1[i] / (1 + exp(-h1[i])) * h3[i];
}

static void ref_log_softmax_row(double *lp, const double *logits, int V) {
    double m = logits[0], z = 0;
    for (int i = 1; i < V; i++) if (logits[i] > m) m = logits[i];
    for (int i = 0; i < V; i++) z += exp(logits[i] - m);
    for (int i = 0; i < V; i++) lp[i] = logits[i] - m - log(z);
}

static double ref_ce(const double *logits, const int *targets, int N, int V) {
    double sum = 0, lp[512];
    for (int n = 0; n < N; n++) {
        ref_log_softmax_row(lp, logits + (size_t)n * V, V);
        sum -= lp[targets[n]];
    }
    return sum / N;
}

/* Σ w·KL(p ‖ softmax) / Σ w over the rows (w NULL: all 1). */
static double ref_kl_w(const double *logits, const double *p, const float *w, int N, int V) {
    double sum = 0, wsum = 0, lp[512];
    for (int n = 0; n < N; n++) {
        double wn = w ? w[n] : 1, kl = 0;
        ref_log_softmax_row(lp, logits + (size_t)n * V, V);
        for (int i = 0; i < V; i++) {
            double pi = p[(size_t)n * V + i];
            if (pi > 0) kl += pi * (log(pi) - lp[i]);
        }
        sum += wn * kl, wsum += wn;
    }
    return wsum > 0 ? sum / wsum : 0;
}

static double ref_kl(const double *logits, const double *p, int N, int V) { return ref_kl_w(logits, p, NULL, N, V); }

/* ---- primitives: scalar losses Σ c·op(inputs) for the differences ---- */

typedef struct {
    int B, T, N, C, O, V;
    double *x, *w, *y;        /* the op's inputs (x, and w or a second input y) */
    const double *c;          /* weights of the outputs in the scalar loss */
    const int *targets;
    AttnDims ad;
    double *k, *v, *gt;
    float theta;
} Prim;

static double loss_matmul(void *ctx) {
    Prim *p = ctx;
    double *out = malloc((size_t)p->N * p->O * sizeof(double));
    ref_matmul(out, p->x, p->w, p->N, p->C, p->O);
    double l = dotd(out, p->c, (size_t)p->N * p->O);
    free(out);
    return l;
}

TEST(backward_matmul_matches_differences) {
    int N = 5, C = 7, O = 3;
    float *x = rand_f(N * C, 1), *w = rand_f(O * C, 1), *c = rand_f(N * O, 1);
    float out[15], dx[35] = {0}, dw[21] = {0};
    train_matmul_forward(out, x, w, N, C, O);
    Prim p = {.N = N, .C = C, .O = O, .x = to_double(x, N * C), .w = to_double(w, O * C), .c = to_double(c, N * O)};
    double ref[15];
    ref_matmul(ref, p.x, p.w, N, C, O);
    for (int i = 0; i < N * O; i++) CHECK_NEAR(out[i], ref[i], 1e-5);
    train_matmul_backward(dx, dw, c, x, w, N, C, O);
    check_fd("matmul dx", dx, p.x, N * C, loss_matmul, &p, 1e-5, 1000);
    check_fd("matmul dw", dw, p.w, O * C, loss_matmul, &p, 1e-5, 1000);
    /* the backward adds: a second call doubles, NULL skips */
    float dx2[35];
    memcpy(dx2, dx, sizeof dx);
    train_matmul_backward(dx2, NULL, c, x, w, N, C, O);
    for (int i = 0; i < N * C; i++) CHECK_NEAR(dx2[i], 2 * dx[i], 1e-6);
    free(x); free(w); free(c); free(p.x); free(p.w); free((void *)p.c);
}

static double loss_rmsnorm(void *ctx) {
    Prim *p = ctx;
    double *out = malloc((size_t)p->N * p->C * sizeof(double));
    ref_rmsnorm(out, p->x, p->w, p->N, p->C);
    double l = dotd(out, p->c, (size_t)p->N * p->C);
    free(out);
    return l;
}

TEST(backward_rmsnorm_matches_differences) {
    int N = 4, C = 8;
    float *x = rand_f(N * C, 2), *w = rand_f(C, 1), *c = rand_f(N * C, 1);
    float out[32], rstd[4], dx[32] = {0}, dw[8] = {0}, ink[32];
    rmsnorm_forward(out, rstd, x, w, N, C);
    for (int n = 0; n < N; n++) k_rmsnorm(ink + n * C, x + n * C, w, C);
    CHECK(memcmp(out, ink, sizeof out) == 0); /* bit-identical to the inference kernel */
    Prim p = {.N = N, .C = C, .x = to_double(x, N * C), .w = to_double(w, C), .c = to_double(c, N * C)};
    rmsnorm_backward(dx, dw, c, x, rstd, w, N, C);
    check_fd("rmsnorm dx", dx, p.x, N * C, loss_rmsnorm, &p, 1e-5, 1000);
    check_fd("rmsnorm dw", dw, p.w, C, loss_rmsnorm, &p, 1e-5, 1000);
    free(x); free(w); free(c); free(p.x); free(p.w); free((void *)p.c);
}

static double loss_rope(void *ctx) {
    Prim *p = ctx;
    size_t n = (size_t)p->N * p->C;
    double *y = malloc(n * sizeof(double));
    memcpy(y, p->x, n * sizeof(double));
    ref_rope(y, p->B, p->T, p->C, p->O, p->theta);
    double l = dotd(y, p->c, n);
    free(y);
    return l;
}

TEST(backward_rope_matches_differences_and_inference_table) {
    int B = 2, T = 5, hs = 6, width = 2 * hs, N = B * T;
    float *x = rand_f(N * width, 1), *c = rand_f(N * width, 1), cs[5 * 3], sn[5 * 3];
    rope_table(cs, sn, T, hs, 10000.0f);
    /* the table is the inference forward's, to the bit */
    Config cfg = {.dim = 12, .hidden_dim = 8, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2, .vocab_size = 8,
                  .seq_len = T, .rope_theta = 10000.0f};
    Model m;
    RunState rs;
    Err e;
    CHECK(model_random(&m, &cfg, 1, &e) == 0);
    CHECK(fwd_init(&rs, &m.c, 1, 1, &e) == 0);
    CHECK(memcmp(cs, rs.rope_cos, sizeof cs) == 0 && memcmp(sn, rs.rope_sin, sizeof sn) == 0);
    fwd_free(&rs);
    model_free(&m);

    Prim p = {.B = B, .T = T, .N = N, .C = width, .O = hs, .theta = 10000.0f, .x = to_double(x, N * width),
              .c = to_double(c, N * width)};
    float *y = malloc(N * width * sizeof(float));
    memcpy(y, x, N * width * sizeof(float));
    rope_forward(y, cs, sn, B, T, width, hs);
    double *ref = to_double(x, N * width);
    ref_rope(ref, B, T, width, hs, 10000.0f);
    for (int i = 0; i < N * width; i++) CHECK_NEAR(y[i], ref[i], 1e-6);
    float *dx = malloc(N * width * sizeof(float));
    memcpy(dx, c, N * width * sizeof(float));
    rope_backward(dx, cs, sn, B, T, width, hs);
    check_fd("rope dx", dx, p.x, N * width, loss_rope, &p, 1e-5, 1000);
    free(x); free(c); free(y); free(dx); free(ref); free(p.x); free((void *)p.c);
}

static double loss_attention(void *ctx) {
    Prim *p = ctx;
    size_t nD = (size_t)p->N * p->ad.n_heads * p->ad.head_size;
    double *out = malloc(3 * nD * sizeof(double));
    ref_attention(out, out + nD, out + 2 * nD, p->x, p->k, p->v, p->gt, &p->ad);
    double l = dotd(out, p->c, nD);
    free(out);
    return l;
}

TEST(backward_attention_gqa_window_sinks_matches_differences) {
    AttnDims ad = {.B = 2, .T = 9, .n_heads = 4, .n_kv_heads = 2, .head_size = 4, .window = 3, .sinks = 2};
    int N = ad.B * ad.T, H = ad.n_heads, D = H * ad.head_size, KV = ad.n_kv_heads * ad.head_size;
    float *q = rand_f(N * D, 1.5f), *k = rand_f(N * KV, 1.5f), *v = rand_f(N * KV, 1), *c = rand_f(N * D, 1);
    uint8_t *gate = malloc(N * H);
    int n_global = 0, n_local_far = 0;
    for (int i = 0; i < N * H; i++) {
        gate[i] = frand() > 0;
        int t = (i / H) % ad.T;
        n_global += gate[i];
        n_local_far += !gate[i] && t >= ad.window + ad.sinks; /* a local head that really skips keys */
    }
    CHECK(n_global > 0 && n_local_far > 0);
    float *buf = calloc((size_t)N * (3 * D + 2 * H), sizeof(float)), *scratch = malloc(attention_scratch_floats(&ad) * sizeof(float));
    AttnActs a = {.q = q, .k = k, .v = v, .gate = gate, .out = buf, .o_all = buf + N * D, .o_here = buf + 2 * N * D,
                  .lse_all = buf + 3 * N * D, .lse_here = buf + 3 * N * D + N * H};
    attention_forward(&ad, &a, scratch);

    Prim p = {.N = N, .ad = ad, .x = to_double(q, N * D), .k = to_double(k, N * KV), .v = to_double(v, N * KV),
              .c = to_double(c, N * D), .gt = malloc(N * H * sizeof(double))};
    for (int i = 0; i < N * H; i++) p.gt[i] = gate[i];
    double *ref = malloc(3 * N * D * sizeof(double));
    ref_attention(ref, ref + N * D, ref + 2 * N * D, p.x, p.k, p.v, p.gt, &ad);
    for (int i = 0; i < 3 * N * D; i++) CHECK_NEAR(buf[i], ref[i], 1e-5);

    float *dq = calloc(N * D, 4), *dk = calloc(N * KV, 4), *dv = calloc(N * KV, 4), *dg = calloc(N * H, 4);
    attention_backward(&ad, &a, c, dq, dk, dv, dg, scratch);
    check_fd("attention dq", dq, p.x, N * D, loss_attention, &p, 1e-5, 1000);
    check_fd("attention dk", dk, p.k, N * KV, loss_attention, &p, 1e-5, 1000);
    check_fd("attention dv", dv, p.v, N * KV, loss_attention, &p, 1e-5, 1000);
    /* the STE gradient is the derivative along a real-valued gate */
    check_fd("attention dgate (STE)", dg, p.gt, N * H, loss_attention, &p, 1e-5, 1000);
    for (int i = 0; i < N * H; i++)
        if ((i / H) % ad.T < ad.window) CHECK_NEAR(dg[i], 0, 1e-6); /* nothing is far yet: both branches agree */
    free(q); free(k); free(v); free(c); free(gate); free(buf); free(scratch); free(dq); free(dk); free(dv); free(dg); free(ref);
    free(p.x); free(p.k); free(p.v); free((void *)p.c); free(p.gt);
}

/* The tiled attention over several query blocks (T = 150: two full blocks
 * and a partial one), a pool of two threads against none, GQA, window,
 * with and without sinks: outputs against the double reference, gradients against its
 * differences, and the same floats whatever the thread count. */
static void check_tiled_attention(int sinks) {
    AttnDims ad = {.B = 2, .T = 150, .n_heads = 4, .n_kv_heads = 2, .head_size = 8, .window = 20, .sinks = sinks};
    int N = ad.B * ad.T, H = ad.n_heads, D = H * ad.head_size, KV = ad.n_kv_heads * ad.head_size;
    float *q = rand_f(N * D, 1.5f), *k = rand_f(N * KV, 1.5f), *v = rand_f(N * KV, 1), *c = rand_f(N * D, 1);
    uint8_t *gate = malloc(N * H);
    for (int i = 0; i < N * H; i++) gate[i] = frand() > 0;
    size_t nb = (size_t)N * (3 * D + 2 * H);
    float *buf[2], *dq[2], *dk[2], *dv[2], *dg[2];
    for (int run = 0; run < 2; run++) {
        AttnDims d = ad;
        d.pool = run ? pool_new(2) : NULL;
        float *scratch = malloc(attention_scratch_floats(&d) * sizeof(float));
        buf[run] = calloc(nb, sizeof(float));
        dq[run] = calloc(N * D, 4), dk[run] = calloc(N * KV, 4), dv[run] = calloc(N * KV, 4), dg[run] = calloc(N * H, 4);
        AttnActs a = {.q = q, .k = k, .v = v, .gate = gate, .out = buf[run], .o_all = buf[run] + N * D,
                      .o_here = buf[run] + 2 * N * D, .lse_all = buf[run] + 3 * N * D,
                      .lse_here = buf[run] + 3 * N * D + N * H};
        attention_forward(&d, &a, scratch);
        attention_backward(&d, &a, c, dq[run], dk[run], dv[run], dg[run], scratch);
        free(scratch);
        pool_free(d.pool);
    }
    CHECK(memcmp(buf[0], buf[1], nb * sizeof(float)) == 0);
    CHECK(memcmp(dq[0], dq[1], (size_t)N * D * 4) == 0 && memcmp(dk[0], dk[1], (size_t)N * KV * 4) == 0);
    CHECK(memcmp(dv[0], dv[1], (size_t)N * KV * 4) == 0 && memcmp(dg[0], dg[1], (size_t)N * H * 4) == 0);

    Prim p = {.N = N, .ad = ad, .x = to_double(q, N * D), .k = to_double(k, N * KV), .v = to_double(v, N * KV),
              .c = to_double(c, N * D), .gt = malloc(N * H * sizeof(double))};
    for (int i = 0; i < N * H; i++) p.gt[i] = gate[i];
    double *ref = malloc(3 * N * D * sizeof(double));
    ref_attention(ref, ref + N * D, ref + 2 * N * D, p.x, p.k, p.v, p.gt, &ad);
    for (int i = 0; i < 3 * N * D; i++) CHECK_NEAR(buf[1][i], ref[i], 1e-5);
    check_fd("tiled attention dq", dq[1], p.x, N * D, loss_attention, &p, 1e-5, 80);
    check_fd("tiled attention dk", dk[1], p.k, N * KV, loss_attention, &p, 1e-5, 80);
    check_fd("tiled attention dv", dv[1], p.v, N * KV, loss_attention, &p, 1e-5, 80);
    check_fd("tiled attention dgate (STE)", dg[1], p.gt, N * H, loss_attention, &p, 1e-5, 80);
    for (int run = 0; run < 2; run++) { free(buf[run]); free(dq[run]); free(dk[run]); free(dv[run]); free(dg[run]); }
    free(q); free(k); free(v); free(c); free(gate); free(ref);
    free(p.x); free(p.k); free(p.v); free((void *)p.c); free(p.gt);
}

TEST(backward_attention_across_tiles_and_threads_matches_reference) {
    check_tiled_attention(1);
    check_tiled_attention(0); /* no sinks: the local products skip the keys before the block's first window */
}

/* DuoAttention's mix: the reference with every row of head h gated by α[h]. */
typedef struct {
    Prim p;
    double alpha[8];
} MixPrim;

static double loss_attention_mix(void *ctx) {
    MixPrim *m = ctx;
    for (int i = 0; i < m->p.N * m->p.ad.n_heads; i++) m->p.gt[i] = m->alpha[i % m->p.ad.n_heads];
    return loss_attention(&m->p);
}

/* Gates α strictly inside (0, 1), and 0 and 1 (one branch's product
 * skipped): outputs against the reference, dq, dk, dv against its
 * differences, and Σ_rows dgate against the derivative along α. */
TEST(backward_attention_duo_mix_matches_differences) {
    AttnDims ad = {.B = 2, .T = 70, .n_heads = 4, .n_kv_heads = 2, .head_size = 4, .window = 5, .sinks = 2};
    int N = ad.B * ad.T, H = ad.n_heads, D = H * ad.head_size, KV = ad.n_kv_heads * ad.head_size;
    float *q = rand_f(N * D, 1.5f), *k = rand_f(N * KV, 1.5f), *v = rand_f(N * KV, 1), *c = rand_f(N * D, 1);
    const float mix[4] = {0.3f, 1.0f, 0.0f, 0.75f};
    uint8_t *gate = calloc(N * H, 1); /* ignored with a mix */
    float *buf = calloc((size_t)N * (3 * D + 2 * H), sizeof(float)), *scratch = malloc(attention_scratch_floats(&ad) * sizeof(float));
    AttnActs a = {.q = q, .k = k, .v = v, .gate = gate, .mix = mix, .out = buf, .o_all = buf + N * D,
                  .o_here = buf + 2 * N * D, .lse_all = buf + 3 * N * D, .lse_here = buf + 3 * N * D + N * H};
    attention_forward(&ad, &a, scratch);
    MixPrim m = {.p = {.N = N, .ad = ad, .x = to_double(q, N * D), .k = to_double(k, N * KV), .v = to_double(v, N * KV),
                       .c = to_double(c, N * D), .gt = malloc(N * H * sizeof(double))}};
    for (int h = 0; h < H; h++) m.alpha[h] = mix[h];
    double *ref = malloc(3 * N * D * sizeof(double));
    loss_attention_mix(&m); /* fills gt */
    ref_attention(ref, ref + N * D, ref + 2 * N * D, m.p.x, m.p.k, m.p.v, m.p.gt, &ad);
    for (int i = 0; i < 3 * N * D; i++) CHECK_NEAR(buf[i], ref[i], 1e-5);
    float *dq = calloc(N * D, 4), *dk = calloc(N * KV, 4), *dv = calloc(N * KV, 4), *dg = calloc(N * H, 4);
    attention_backward(&ad, &a, c, dq, dk, dv, dg, scratch);
    check_fd("duo mix dq", dq, m.p.x, N * D, loss_attention_mix, &m, 1e-5, 300);
    check_fd("duo mix dk", dk, m.p.k, N * KV, loss_attention_mix, &m, 1e-5, 300);
    check_fd("duo mix dv", dv, m.p.v, N * KV, loss_attention_mix, &m, 1e-5, 300);
    float dalpha[4] = {0};
    for (int i = 0; i < N * H; i++) dalpha[i % H] += dg[i];
    check_fd("duo mix dalpha", dalpha, m.alpha, H, loss_attention_mix, &m, 1e-5, H);
    free(q); free(k); free(v); free(c); free(gate); free(buf); free(scratch); free(dq); free(dk); free(dv); free(dg); free(ref);
    free(m.p.x); free(m.p.k); free(m.p.v); free((void *)m.p.c); free(m.p.gt);
}

/* train_exp_shift against libm's double exp, relative, over the range
 * softmax rows and sigmoids meet, and its floor. */
TEST(backward_exp_shift_matches_libm) {
    enum { n = 2001 };
    float x[n];
    for (int i = 0; i < n; i++) x[i] = -90.0f + 178.0f * i / (n - 1);
    float y[n];
    memcpy(y, x, sizeof y);
    train_exp_shift(y, n, 0.5f);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double want = exp((double)(x[i] - 0.5f)); /* the argument as float subtraction rounds it */
        if (x[i] - 0.5f < -87.0f) { CHECK(y[i] == 0); continue; }
        double rel = fabs(y[i] - want) / want;
        worst = rel > worst ? rel : worst;
    }
    CHECK_MSG(worst < 4e-7, "train_exp_shift relative error %g", worst);
}

static double loss_swiglu(void *ctx) {
    Prim *p = ctx;
    double *out = malloc((size_t)p->N * sizeof(double));
    ref_swiglu(out, p->x, p->y, p->N);
    double l = dotd(out, p->c, p->N);
    free(out);
    return l;
}

TEST(backward_swiglu_matches_differences) {
    int n = 40;
    float *h1 = rand_f(n, 4), *h3 = rand_f(n, 2), *c = rand_f(n, 1), out[40], ink[40], dh1[40] = {0}, dh3[40] = {0};
    swiglu_forward(out, h1, h3, n);
    memcpy(ink, h1, sizeof ink);
    k_swiglu(ink, h3, n);
    /* the sigmoid is train_exp_shift's, not libm's: within a few units of roundoff */
    for (int i = 0; i < n; i++) CHECK_NEAR(out[i], ink[i], 1e-6 * (fabsf(ink[i]) + 1e-6));
    swiglu_backward(dh1, dh3, c, h1, h3, n);
    Prim p = {.N = n, .x = to_double(h1, n), .y = to_double(h3, n), .c = to_double(c, n)};
    check_fd("swiglu dh1", dh1, p.x, n, loss_swiglu, &p, 1e-5, 1000);
    check_fd("swiglu dh3", dh3, p.y, n, loss_swiglu, &p, 1e-5, 1000);
    free(h1); free(h3); free(c); free(p.x); free(p.y); free((void *)p.c);
}

TEST(backward_residual_and_embedding_are_exact) {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {.5f, -1, 0, 2, 1, 1}, out[6], da[6] = {0}, db[6] = {1, 1, 1, 1, 1, 1};
    residual_forward(out, a, b, 6);
    for (int i = 0; i < 6; i++) CHECK(out[i] == a[i] + b[i]);
    residual_backward(da, db, b, 6);
    for (int i = 0; i < 6; i++) CHECK(da[i] == b[i] && db[i] == 1 + b[i]);
    /* a token seen twice gathers both rows' gradients */
    float emb[4 * 2] = {0, 1, 10, 11, 20, 21, 30, 31}, x[3 * 2], demb[8] = {0}, dx[6] = {1, 2, 3, 4, 5, 6};
    int tok[3] = {2, 0, 2};
    embed_forward(x, tok, emb, 3, 2);
    CHECK(x[0] == 20 && x[3] == 1 && x[5] == 21);
    embed_backward(demb, dx, tok, 3, 2);
    float want[8] = {3, 4, 0, 0, 6, 8, 0, 0};
    CHECK(memcmp(demb, want, sizeof want) == 0);
}

static double loss_router(void *ctx) {
    Prim *p = ctx;
    double *lg = malloc((size_t)p->N * p->O * sizeof(double));
    ref_matmul(lg, p->x, p->w, p->N, p->C, p->O);
    double l = 0;
    for (int i = 0; i < p->N * p->O; i++) l += p->c[i] / (1 + exp(-lg[i]));
    free(lg);
    return l;
}

TEST(backward_router_matches_differences) {
    int N = 6, C = 8, H = 3;
    float *x = rand_f(N * C, 1), *w = rand_f(H * C, 0.6f), *c = rand_f(N * H, 1), r[18], dx[48] = {0}, dw[24] = {0};
    uint8_t gate[18];
    long global = train_router_forward(r, gate, x, w, 0.5f, N, C, H);
    long count = 0;
    for (int i = 0; i < N * H; i++) { CHECK(gate[i] == (r[i] > 0.5f)); count += gate[i]; }
    CHECK_INT(global, count);
    train_router_backward(dx, dw, c, r, x, w, N, C, H);
    Prim p = {.N = N, .C = C, .O = H, .x = to_double(x, N * C), .w = to_double(w, H * C), .c = to_double(c, N * H)};
    check_fd("router dx", dx, p.x, N * C, loss_router, &p, 1e-5, 1000);
    check_fd("router dw", dw, p.w, H * C, loss_router, &p, 1e-5, 1000);
    free(x); free(w); free(c); free(p.x); free(p.w); free((void *)p.c);
}

static double loss_ce(void *ctx) {
    Prim *p = ctx;
    return ref_ce(p->x, p->targets, p->N, p->V);
}

/* Weighted cross-entropy in float64, independently: Σ w·(−log p) / Σ w. */
static const float *g_ce_weights;
static double loss_ce_weighted(void *ctx) {
    Prim *p = ctx;
    double sum = 0, wsum = 0, lp[512];
    for (int n = 0; n < p->N; n++) {
        ref_log_softmax_row(lp, p->x + (size_t)n * p->V, p->V);
        sum -= g_ce_weights[n] * lp[p->targets[n]], wsum += g_ce_weights[n];
    }
    return sum / wsum;
}

static double loss_kl(void *ctx) {
    Prim *p = ctx;
    return ref_kl(p->x, p->y, p->N, p->V);
}

/* Rows of a random distribution (softmax of scaled noise), some entries 0. */
static float *rand_probs(int N, int V, float sharpness) {
    float *p = rand_f((size_t)N * V, sharpness);
    for (int n = 0; n < N; n++) {
        float *row = p + (size_t)n * V, m = row[0];
        for (int i = 1; i < V; i++) m = fmaxf(m, row[i]);
        double z = 0;
        for (int i = 0; i < V; i++) z += row[i] = expf(row[i] - m);
        for (int i = 0; i < V; i++) row[i] = (float)(row[i] / z);
    }
    return p;
}

TEST(backward_crossentropy_and_kl_match_differences) {
    int N = 5, V = 11;
    float *logits = rand_f(N * V, 3), probs[55], dl[55] = {0};
    int targets[5] = {0, 10, 3, 3, 7};
    double ce = crossentropy_forward(probs, logits, targets, NULL, N, V);
    Prim p = {.N = N, .V = V, .x = to_double(logits, N * V), .targets = targets};
    CHECK_NEAR(ce, ref_ce(p.x, targets, N, V), 1e-6);
    crossentropy_backward(dl, probs, targets, NULL, N, V, 1.0f / N);
    check_fd("cross-entropy dlogits", dl, p.x, N * V, loss_ce, &p, 1e-5, 1000);

    /* weighted: a row of weight 0 (a pad) adds nothing, a heavy one counts more */
    static const float wts[5] = {1, 0, 40, 1, 2.5f};
    float dlw[55] = {0};
    g_ce_weights = wts;
    double cew = crossentropy_forward(probs, logits, targets, wts, N, V);
    CHECK_NEAR(cew, loss_ce_weighted(&p), 1e-6);
    crossentropy_backward(dlw, probs, targets, wts, N, V, 1.0f / 44.5f);
    check_fd("weighted cross-entropy dlogits", dlw, p.x, N * V, loss_ce_weighted, &p, 1e-5, 1000);
    for (int i = 0; i < V; i++) CHECK(dlw[V + i] == 0); /* the weight-0 row */

    float *target = rand_probs(N, V, 4);
    target[3] = 0; /* 0·log 0 terms */
    double sum = 0;
    for (int i = 0; i < V; i++) sum += target[i];
    for (int i = 0; i < V; i++) target[i] = (float)(target[i] / sum);
    double kl = kl_forward(probs, logits, target, N, V);
    p.y = to_double(target, N * V);
    CHECK_NEAR(kl, ref_kl(p.x, p.y, N, V), 1e-6);
    CHECK(kl > 0);
    memset(dl, 0, sizeof dl);
    kl_backward(dl, probs, target, N, V, 1.0f / N);
    check_fd("KL dlogits", dl, p.x, N * V, loss_kl, &p, 1e-5, 1000);
    /* KL of a distribution to itself is 0 with a zero gradient */
    memset(dl, 0, sizeof dl);
    float self[55];
    memcpy(self, probs, sizeof self);
    CHECK_NEAR(kl_forward(probs, logits, self, N, V), 0, 1e-6);
    kl_backward(dl, probs, self, N, V, 1.0f / N);
    for (int i = 0; i < N * V; i++) CHECK_NEAR(dl[i], 0, 1e-9);
    free(logits); free(target); free(p.x); free(p.y);
}

/* ---- the whole model in double, gates frozen, STE as a surrogate ---- */

typedef struct {
    Config c;
    int B, T, N;
    TrainConfig tc;
    double *emb, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final, *wcls, *routers;
    const int *inputs, *targets;
    const double *target_probs;  /* [N][vocab] (KL) */
    const float *kl_w;           /* [N] KL's row weights (--answer-weight), or NULL: rows alike */
    const uint8_t *gates;        /* [L][N][H] the training forward's gates, frozen */
    double *r0;                  /* [L][N][H] r at the base point: stopgrad(r) */
    int have_r0;                 /* 0: the next evaluation records r0 */
    double *probe;               /* [L][N][dim] added to each attention output, or NULL */
    double *mix;                 /* [L][H] DuoAttention's gates replacing g̃, or NULL */
    double *rec_xn1, *rec_r, *rec_oall, *rec_ohere; /* the last evaluation's activations, per layer */
} RefModel;

static void ref_model_init(RefModel *rm, const Model *m, const float *routers, const TrainState *s,
                           const double *target_probs) {
    const Config *c = &m->c;
    size_t L = c->n_layers, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, V = c->vocab_size, N = s->N,
           H = c->n_heads;
    memset(rm, 0, sizeof *rm);
    rm->c = *c;
    rm->B = s->B; rm->T = s->T; rm->N = s->N;
    rm->tc = s->tc;
    rm->emb = to_double(m->w.token_embedding, V * d);
    rm->rms_att = to_double(m->w.rms_att, L * d);
    rm->wq = to_double(m->w.wq, L * d * d);
    rm->wk = to_double(m->w.wk, L * kv * d);
    rm->wv = to_double(m->w.wv, L * kv * d);
    rm->wo = to_double(m->w.wo, L * d * d);
    rm->rms_ffn = to_double(m->w.rms_ffn, L * d);
    rm->w1 = to_double(m->w.w1, L * hid * d);
    rm->w2 = to_double(m->w.w2, L * d * hid);
    rm->w3 = to_double(m->w.w3, L * hid * d);
    rm->rms_final = to_double(m->w.rms_final, d);
    rm->wcls = c->shared_classifier ? rm->emb : to_double(m->w.wcls, V * d); /* tied: one tensor, two uses */
    rm->routers = to_double(routers, L * H * d);
    rm->inputs = s->inputs;
    rm->targets = s->targets;
    rm->target_probs = target_probs;
    rm->kl_w = s->kl_weighted ? s->target_w : NULL;
    rm->gates = s->gate;
    rm->r0 = malloc(L * N * H * sizeof(double));
    rm->rec_xn1 = malloc(L * N * d * sizeof(double));
    rm->rec_r = malloc(L * N * H * sizeof(double));
    rm->rec_oall = malloc(L * N * d * sizeof(double));
    rm->rec_ohere = malloc(L * N * d * sizeof(double));
}

static void ref_model_free(RefModel *rm) {
    double *p[] = {rm->emb, rm->rms_att, rm->wq, rm->wk, rm->wv, rm->wo, rm->rms_ffn, rm->w1, rm->w2, rm->w3,
                   rm->rms_final, rm->routers, rm->r0, rm->rec_xn1, rm->rec_r, rm->rec_oall, rm->rec_ohere, rm->probe};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    if (!rm->c.shared_classifier) free(rm->wcls);
}

/* L = task + λ·mean(r), the attention of layer l mixing its branches with
 * g̃ = g + r − r0 (r0 recorded by the first evaluation). */
static double ref_model_loss(void *ctx) {
    RefModel *m = ctx;
    const Config *c = &m->c;
    int N = m->N, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, H = c->n_heads, V = c->vocab_size, L = c->n_layers;
    size_t Nd = (size_t)N * d, NH = (size_t)N * H;
    double *x = malloc(Nd * sizeof(double)), *xn = malloc(Nd * sizeof(double)), *q = malloc(Nd * sizeof(double));
    double *k = malloc((size_t)N * kv * sizeof(double)), *v = malloc((size_t)N * kv * sizeof(double));
    double *r = malloc(NH * sizeof(double)), *gt = malloc(NH * sizeof(double)), *att = malloc(Nd * sizeof(double));
    double *tmp = malloc(Nd * sizeof(double)), *h1 = malloc((size_t)N * hid * sizeof(double));
    double *h3 = malloc((size_t)N * hid * sizeof(double)), *logits = malloc((size_t)N * V * sizeof(double));
    AttnDims ad = {.B = m->B, .T = m->T, .n_heads = H, .n_kv_heads = c->n_kv_heads, .head_size = c->head_size,
                   .window = m->tc.window, .sinks = m->tc.sinks};
    double sum_r = 0;
    for (int n = 0; n < N; n++) memcpy(x + (size_t)n * d, m->emb + (size_t)m->inputs[n] * d, d * sizeof(double));
    for (int l = 0; l < L; l++) {
        ref_rmsnorm(xn, x, m->rms_att + (size_t)l * d, N, d);
        ref_matmul(q, xn, m->wq + (size_t)l * d * d, N, d, d);
        ref_matmul(k, xn, m->wk + (size_t)l * kv * d, N, d, kv);
        ref_matmul(v, xn, m->wv + (size_t)l * kv * d, N, d, kv);
        ref_matmul(r, xn, m->routers + (size_t)l * H * d, N, d, H);
        double *r0 = m->r0 + l * NH;
        for (size_t i = 0; i < NH; i++) {
            r[i] = 1 / (1 + exp(-r[i]));
            if (!m->have_r0) r0[i] = r[i];
            gt[i] = m->mix ? m->mix[(size_t)l * H + i % H] : m->gates[l * NH + i] + (r[i] - r0[i]);
            sum_r += r[i];
        }
        ref_rope(q, m->B, m->T, d, c->head_size, c->rope_theta);
        ref_rope(k, m->B, m->T, kv, c->head_size, c->rope_theta);
        ref_attention(att, m->rec_oall + l * Nd, m->rec_ohere + l * Nd, q, k, v, gt, &ad);
        if (m->probe)
            for (size_t i = 0; i < Nd; i++) att[i] += m->probe[l * Nd + i];
        memcpy(m->rec_xn1 + l * Nd, xn, Nd * sizeof(double));
        memcpy(m->rec_r + l * NH, r, NH * sizeof(double));
        ref_matmul(tmp, att, m->wo + (size_t)l * d * d, N, d, d);
        for (size_t i = 0; i < Nd; i++) x[i] += tmp[i];
        ref_rmsnorm(xn, x, m->rms_ffn + (size_t)l * d, N, d);
        ref_matmul(h1, xn, m->w1 + (size_t)l * hid * d, N, d, hid);
        ref_matmul(h3, xn, m->w3 + (size_t)l * hid * d, N, d, hid);
        ref_swiglu(h1, h1, h3, (size_t)N * hid);
        ref_matmul(tmp, h1, m->w2 + (size_t)l * d * hid, N, hid, d);
        for (size_t i = 0; i < Nd; i++) x[i] += tmp[i];
    }
    m->have_r0 = 1;
    ref_rmsnorm(xn, x, m->rms_final, N, d);
    ref_matmul(logits, xn, m->wcls, N, d, V);
    double task = m->tc.objective == TRAIN_KL ? ref_kl_w(logits, m->target_probs, m->kl_w, N, V)
                                              : ref_ce(logits, m->targets, N, V);
    free(x); free(xn); free(q); free(k); free(v); free(r); free(gt); free(att); free(tmp); free(h1); free(h3);
    free(logits);
    return task + m->tc.lambda * sum_r / ((double)L * NH);
}

/* A tiny GQA model, its routers, a batch and a trained-style setting. */
typedef struct {
    Model m;
    Routers r;
    TrainState s;
    TrainConfig tc;
    int *inputs, *targets;
    float *target_probs;
    double *target_probs_d;
} Fixture;

static void fixture_init(Fixture *f, int shared, TrainObjective obj, int B, int T, uint64_t seed) {
    Config c = {.dim = 16, .hidden_dim = 24, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 24,
                .seq_len = T > 80 ? T : 80, .shared_classifier = shared};
    Err e;
    memset(f, 0, sizeof *f);
    CHECK(model_random(&f->m, &c, seed, &e) == 0);
    CHECK(router_random(&f->r, c.n_layers, c.n_heads, c.dim, seed + 1, &e) == 0);
    /* norms away from 1 so their gradients are not special */
    for (int i = 0; i < c.n_layers * c.dim; i++) {
        ((float *)f->m.w.rms_att)[i] = 1 + 0.3f * frand();
        ((float *)f->m.w.rms_ffn)[i] = 1 + 0.3f * frand();
    }
    for (int i = 0; i < c.dim; i++) ((float *)f->m.w.rms_final)[i] = 1 + 0.3f * frand();
    CHECK(train_init(&f->s, &f->m.c, B, T, &e) == 0);
    f->tc = (TrainConfig){.window = 3, .sinks = 1, .tau = 0.5f, .lambda = 0.05f, .objective = obj};
    int N = B * T;
    f->inputs = malloc(N * sizeof(int));
    f->targets = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        f->inputs[i] = (int)((frand() + 1) * 0.5f * c.vocab_size) % c.vocab_size;
        f->targets[i] = (int)((frand() + 1) * 0.5f * c.vocab_size) % c.vocab_size;
    }
    f->inputs[1] = f->inputs[3]; /* a repeated token: its embedding row gathers two gradients */
    f->target_probs = rand_probs(N, c.vocab_size, 3);
    f->target_probs_d = to_double(f->target_probs, (size_t)N * c.vocab_size);
}

static void fixture_free(Fixture *f) {
    train_free(&f->s);
    router_free(&f->r);
    model_free(&f->m);
    free(f->inputs); free(f->targets); free(f->target_probs); free(f->target_probs_d);
}

static double fixture_forward(Fixture *f) {
    return train_forward(&f->s, &f->m.w, f->r.w, &f->tc, f->inputs, f->targets, f->target_probs);
}

/* Both gates occur, and some local head at a position with far keys. */
static int both_gates_present(const TrainState *s) {
    int H = s->c.n_heads, global = 0, local_far = 0;
    for (size_t i = 0; i < (size_t)s->c.n_layers * s->N * H; i++) {
        int t = (int)(i / H % s->N) % s->T;
        global += s->gate[i];
        local_far += !s->gate[i] && t >= s->tc.window + s->tc.sinks;
    }
    return global > 0 && local_far > 0;
}

/* one_branch: the window covers the sequence, every head global (as
 * --from-scratch trains), so the backward reads the exponentials the
 * forward kept instead of recomputing them. */
static void check_model_gradients_w(int shared, TrainObjective obj, int B, int T, int one_branch, const float *kl_w) {
    Fixture f;
    fixture_init(&f, shared, obj, B, T, shared ? 11 : 12);
    const Config *c = &f.m.c;
    if (one_branch) f.tc.window = T, f.tc.sinks = 0, f.tc.tau = -1;
    if (kl_w) f.s.target_w = kl_w, f.s.kl_weighted = 1;
    double loss = fixture_forward(&f);
    if (one_branch) CHECK(f.s.pstore != NULL && f.s.global_share == 1);
    else CHECK(both_gates_present(&f.s));
    Grads g;
    Err e;
    CHECK(grads_init(&g, c, &e) == 0);
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim;
    float *dr = malloc(nr * sizeof(float));
    train_backward(&f.s, &f.m.w, f.r.w, dr, &g);

    RefModel rm;
    ref_model_init(&rm, &f.m, f.r.w, &f.s, f.target_probs_d);
    double ref = ref_model_loss(&rm); /* records r0 */
    CHECK_MSG(fabs(loss - ref) <= 1e-5 * fabs(ref), "training loss %.9g, reference %.9g", loss, ref);
    size_t L = c->n_layers, d = c->dim, kv = c->kv_dim, hid = c->hidden_dim, V = c->vocab_size;
    struct { const char *name; const float *got; double *ref; size_t n; } t[] = {
        {"routers", dr, rm.routers, nr},           {"token_embedding", g.token_embedding, rm.emb, V * d},
        {"rms_att", g.rms_att, rm.rms_att, L * d}, {"wq", g.wq, rm.wq, L * d * d},
        {"wk", g.wk, rm.wk, L * kv * d},           {"wv", g.wv, rm.wv, L * kv * d},
        {"wo", g.wo, rm.wo, L * d * d},            {"rms_ffn", g.rms_ffn, rm.rms_ffn, L * d},
        {"w1", g.w1, rm.w1, L * hid * d},          {"w2", g.w2, rm.w2, L * d * hid},
        {"w3", g.w3, rm.w3, L * hid * d},          {"rms_final", g.rms_final, rm.rms_final, d},
        {"wcls", g.wcls, rm.wcls, V * d},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0] - (shared ? 1 : 0); i++) {
        char what[64];
        snprintf(what, sizeof what, "model %s%s %s", shared ? "tied" : "untied", obj == TRAIN_KL ? " KL" : " CE",
                 t[i].name);
        check_fd(what, t[i].got, t[i].ref, t[i].n, ref_model_loss, &rm, 1e-4, i == 0 ? 1000 : 60);
    }
    ref_model_free(&rm);
    free(dr);
    grads_free(&g);
    fixture_free(&f);
}

static void check_model_gradients_at(int shared, TrainObjective obj, int B, int T, int one_branch) {
    check_model_gradients_w(shared, obj, B, T, one_branch, NULL);
}

static void check_model_gradients(int shared, TrainObjective obj, int B, int T) {
    check_model_gradients_at(shared, obj, B, T, 0);
}

/* DuoAttention's gates through the whole model: the KL over answer-style
 * weighted rows against the double reference mixing each head by its α,
 * and ∂L/∂α and a weight's gradient against its differences. */
TEST(backward_model_duo_mix_gradients_match_reference) {
    Fixture f;
    fixture_init(&f, 0, TRAIN_KL, 2, 90, 13);
    const Config *c = &f.m.c;
    int LH = c->n_layers * c->n_heads;
    float mix[8], dmix[8], w[180];
    for (int i = 0; i < LH; i++) mix[i] = i % 3 == 0 ? 1.0f : 0.2f + 0.1f * (float)i;
    for (int i = 0; i < 180; i++) w[i] = i % 90 >= 80; /* the last rows of each sequence, as answers */
    f.tc.lambda = 0;
    f.s.mix = mix, f.s.dmix = dmix, f.s.target_w = w, f.s.kl_weighted = 1;
    double loss = fixture_forward(&f);
    Grads g;
    Err e;
    CHECK(grads_init(&g, c, &e) == 0);
    float *dr = malloc((size_t)LH * c->dim * sizeof(float));
    train_backward(&f.s, &f.m.w, f.r.w, dr, &g);
    RefModel rm;
    ref_model_init(&rm, &f.m, f.r.w, &f.s, f.target_probs_d);
    rm.mix = to_double(mix, LH);
    double ref = ref_model_loss(&rm);
    CHECK_MSG(fabs(loss - ref) <= 1e-5 * fabs(ref), "mixed training loss %.9g, reference %.9g", loss, ref);
    check_fd("model duo dmix", dmix, rm.mix, LH, ref_model_loss, &rm, 1e-4, LH);
    check_fd("model duo wq", g.wq, rm.wq, (size_t)c->n_layers * c->dim * c->dim, ref_model_loss, &rm, 1e-4, 60);
    free(rm.mix);
    ref_model_free(&rm);
    free(dr);
    grads_free(&g);
    fixture_free(&f);
}

TEST(backward_model_gradients_untied_ce_match_ste_reference) { check_model_gradients(0, TRAIN_CE, 2, 7); }

TEST(backward_model_gradients_tied_kl_match_ste_reference) { check_model_gradients(1, TRAIN_KL, 2, 7); }

/* train --answer-weight on the KL objective: Σ w·KL / Σ w with each
 * sequence's last two positions an answer (w = 4), one pad (w = 0) and the
 * rest 1, against the float64 reference's weighted KL, every weight's
 * gradient and the routers'. */
TEST(backward_model_gradients_answer_weighted_kl_match_ste_reference) {
    float w[2 * 7];
    for (int i = 0; i < 14; i++) w[i] = i % 7 >= 5 ? 4.0f : 1.0f;
    w[13] = 0; /* the second sequence's last position a pad */
    check_model_gradients_w(0, TRAIN_KL, 2, 7, 0, w);
}

/* Three sequences of 70 positions: attention's query blocks of 64 end
 * inside a sequence, and the products split their rows over the pool. */
TEST(backward_model_gradients_batched_across_tiles_match_ste_reference) { check_model_gradients(0, TRAIN_CE, 3, 70); }

/* Full attention over 70 positions (two query blocks, the second partial):
 * the backward from the forward's kept exponentials. */
TEST(backward_model_gradients_one_branch_from_kept_exponentials_match_reference) {
    check_model_gradients_at(0, TRAIN_CE, 2, 70, 1);
    check_model_gradients_at(1, TRAIN_KL, 2, 9, 1);
}

/* Gradients of one full-attention step with the forward's kept
 * exponentials and with them recomputed: within 1e-5 of the largest. */
static void check_kept_against_recomputed(const Config *shape, int B, int T, uint64_t seed) {
    Model m;
    Routers r;
    TrainState s;
    Err e;
    CHECK(model_random(&m, shape, seed, &e) == 0);
    const Config *c = &m.c; /* with head_size and kv_dim filled in */
    CHECK(router_random(&r, c->n_layers, c->n_heads, c->dim, seed + 1, &e) == 0);
    CHECK(train_init(&s, c, B, T, &e) == 0);
    TrainConfig tc = {.window = T, .sinks = 0, .tau = -1, .lambda = 0.05f, .objective = TRAIN_CE};
    int N = B * T, *in = malloc(N * sizeof(int)), *tg = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) in[i] = (i * 7 + 3) % c->vocab_size, tg[i] = (i * 5 + 1) % c->vocab_size;
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim;
    Grads g[2];
    float *dr[2], *kept = s.pstore;
    CHECK(kept != NULL);
    for (int run = 0; run < 2; run++) {
        s.pstore = run ? NULL : kept;
        CHECK(grads_init(&g[run], c, &e) == 0);
        dr[run] = malloc(nr * sizeof(float));
        train_forward(&s, &m.w, r.w, &tc, in, tg, NULL);
        train_backward(&s, &m.w, r.w, dr[run], &g[run]);
    }
    s.pstore = kept;
    double worst = 0, top = 0;
    for (size_t i = 0; i < g[0].n; i++) {
        worst = fmax(worst, fabs(g[0].mem[i] - g[1].mem[i]));
        top = fmax(top, fabs(g[1].mem[i]));
    }
    CHECK(top > 0);
    CHECK_MSG(worst <= 1e-5 * top, "kept and recomputed gradients differ by %g of %g (T %d)", worst, top, T);
    for (int run = 0; run < 2; run++) grads_free(&g[run]), free(dr[run]);
    free(in), free(tg);
    train_free(&s);
    router_free(&r);
    model_free(&m);
}

/* The kept exponentials give the gradients recomputing them gives: two
 * query blocks (the second partial), and a head wider than the sequence
 * (the backward's scratch then holds a block's head_size-wide rows). */
TEST(backward_kept_exponentials_equal_recomputed_ones) {
    Config c = {.dim = 16, .hidden_dim = 24, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 24,
                .seq_len = 80};
    check_kept_against_recomputed(&c, 2, 70, 71);
    Config wide = {.dim = 128, .hidden_dim = 24, .n_layers = 1, .n_heads = 1, .n_kv_heads = 1, .vocab_size = 24,
                   .seq_len = 80};
    check_kept_against_recomputed(&wide, 2, 5, 72);
}

/* The router gradient is Σ_tokens (⟨∂L/∂o, o_all − o_here⟩ + λ/(B·T·L·H))·r(1−r)·x,
 * with ∂L/∂o measured by differences on a probe added to the attention
 * output and o_all, o_here, r, x from the reference — nothing taken from
 * the engine's backward. */
TEST(backward_router_gradient_is_the_ste_formula) {
    Fixture f;
    fixture_init(&f, 0, TRAIN_CE, 2, 6, 21);
    const Config *c = &f.m.c;
    fixture_forward(&f);
    size_t L = c->n_layers, H = c->n_heads, d = c->dim, hsz = c->head_size, N = f.s.N, Nd = N * d;
    float *dr = malloc(L * H * d * sizeof(float));
    train_backward(&f.s, &f.m.w, f.r.w, dr, NULL);
    RefModel rm;
    ref_model_init(&rm, &f.m, f.r.w, &f.s, NULL);
    rm.probe = calloc(L * Nd, sizeof(double));
    ref_model_loss(&rm);
    double *dO = malloc(L * Nd * sizeof(double));
    for (size_t i = 0; i < L * Nd; i++) dO[i] = central_diff(ref_model_loss, &rm, rm.probe + i, 1e-6);
    ref_model_loss(&rm); /* leave the records at the base point */
    double worst = 0, scale = 0, lam = f.tc.lambda / ((double)N * L * H);
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < H; h++)
            for (size_t j = 0; j < d; j++) {
                double sum = 0;
                for (size_t n = 0; n < N; n++) {
                    size_t off = l * Nd + n * d + h * hsz, cell = (l * N + n) * H + h;
                    double delta = 0;
                    for (size_t i = 0; i < hsz; i++) delta += dO[off + i] * (rm.rec_oall[off + i] - rm.rec_ohere[off + i]);
                    double r = rm.rec_r[cell];
                    sum += (delta + lam) * r * (1 - r) * rm.rec_xn1[l * Nd + n * d + j];
                }
                scale = fmax(scale, fabs(sum));
                worst = fmax(worst, fabs(sum - dr[(l * H + h) * d + j]));
            }
    CHECK(scale > 1e-4);
    CHECK_MSG(worst <= 1e-4 * scale, "router gradient differs from the STE formula by %g (scale %g)", worst, scale);
    if (getenv("BWD_VERBOSE")) printf("  STE formula err/scale %.2e\n", worst / scale);
    ref_model_free(&rm);
    free(dO);
    free(dr);
    fixture_free(&f);
}

/* The λ term alone: grad(λ) − grad(0) = λ/(B·T·L·H) · Σ_tokens r(1−r)·x in
 * the last layer. (An earlier layer's routers also move later layers' r
 * through the residual stream, so there the λ term has more paths.) */
TEST(backward_lambda_term_adds_its_mean_share) {
    Fixture f;
    fixture_init(&f, 0, TRAIN_CE, 2, 5, 31);
    const Config *c = &f.m.c;
    size_t L = c->n_layers, H = c->n_heads, d = c->dim, N = f.s.N, nr = L * H * d;
    float *g0 = malloc(nr * sizeof(float)), *g1 = malloc(nr * sizeof(float));
    f.tc.lambda = 0;
    double l0 = fixture_forward(&f);
    train_backward(&f.s, &f.m.w, f.r.w, g0, NULL);
    f.tc.lambda = 2;
    double l1 = fixture_forward(&f);
    CHECK_NEAR(l1 - l0, 2 * f.s.mean_r, 1e-6);
    train_backward(&f.s, &f.m.w, f.r.w, g1, NULL);
    double worst = 0, scale = 0;
    size_t l = L - 1;
    for (size_t h = 0; h < H; h++)
        for (size_t j = 0; j < d; j++) {
            double sum = 0;
            for (size_t n = 0; n < N; n++) {
                double r = f.s.r[(l * N + n) * H + h];
                sum += r * (1 - r) * f.s.xn1[(l * N + n) * d + j];
            }
            sum *= 2.0 / ((double)N * L * H);
            size_t i = (l * H + h) * d + j;
            scale = fmax(scale, fabs(sum));
            worst = fmax(worst, fabs((g1[i] - g0[i]) - sum));
        }
    CHECK_MSG(worst <= 1e-5 * scale + 1e-7, "λ term off by %g (scale %g)", worst, scale);
    free(g0); free(g1);
    fixture_free(&f);
}

/* The training forward runs the inference model: same logits (prefill of
 * each sequence with policy aha and the same routers), same router scores
 * and gates, and with τ < 0 the full-attention policy. */
TEST(backward_training_forward_equals_inference_forward) {
    Fixture f;
    fixture_init(&f, 0, TRAIN_CE, 2, 12, 41);
    f.tc.window = 4;
    f.tc.sinks = 2;
    f.tc.lambda = 0;
    const Config *c = &f.m.c;
    int T = f.s.T, V = c->vocab_size, cells = c->n_layers * c->n_heads, N = f.s.N, H = c->n_heads;
    RunState rs;
    Err e;
    CHECK(fwd_init(&rs, c, T, 1, &e) == 0);
    StepTrace *tr[12];
    for (int i = 0; i < T; i++) tr[i] = trace_new(c->n_layers, c->n_heads);
    float *logits = malloc((size_t)T * V * sizeof(float));
    for (int pass = 0; pass < 2; pass++) {
        AttnConfig a = aha_defaults();
        a.policy = pass == 0 ? POLICY_AHA : POLICY_FULL;
        a.routers = f.r.w;
        a.window = f.tc.window;
        a.sinks = f.tc.sinks;
        f.tc.tau = pass == 0 ? 0.5f : -1.0f;
        fixture_forward(&f);
        if (pass == 0) CHECK(both_gates_present(&f.s));
        else CHECK_NEAR(f.s.global_share, 1, 0);
        double worst = 0, worst_r = 0, ce = 0;
        int gate_diff = 0, near_tau = 0;
        for (int b = 0; b < f.s.B; b++) {
            fwd_forward(&f.m, &rs, &a, f.inputs + b * T, T, 0, logits, tr);
            for (int t = 0; t < T; t++) {
                int n = b * T + t;
                for (int i = 0; i < V; i++)
                    worst = fmax(worst, fabs(logits[(size_t)t * V + i] - f.s.logits[(size_t)n * V + i]));
                float lp;
                k_logit_stats(logits + (size_t)t * V, V, f.targets[n], &lp, NULL);
                ce -= lp;
                for (int cell = 0; cell < cells; cell++) {
                    int l = cell / H, h = cell % H;
                    size_t si = ((size_t)l * N + n) * H + h;
                    worst_r = fmax(worst_r, fabs(tr[t]->score[cell] - f.s.r[si]));
                    if (fabsf(tr[t]->score[cell] - f.tc.tau) < 1e-5f) { near_tau++; continue; }
                    gate_diff += tr[t]->gate[cell] != f.s.gate[si];
                }
            }
        }
        CHECK_MSG(worst <= 1e-4, "%s: training logits differ from inference by %g", aha_policy_name(a.policy), worst);
        CHECK_MSG(worst_r <= 1e-5, "router scores differ by %g", worst_r);
        CHECK_INT(gate_diff, 0);
        CHECK(near_tau == 0); /* a score this close to τ would make the comparison a coin toss */
        CHECK_NEAR(f.s.task_loss, ce / N, 1e-5);
    }
    for (int i = 0; i < T; i++) trace_free(tr[i]);
    free(logits);
    fwd_free(&rs);
    fixture_free(&f);
}

/* Router-only training skips the weight products but not the router
 * gradients, and everything is deterministic to the bit. */
TEST(backward_router_only_matches_full_backward_and_repeats) {
    Fixture f;
    fixture_init(&f, 1, TRAIN_KL, 2, 8, 51);
    const Config *c = &f.m.c;
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim;
    float *a = malloc(nr * sizeof(float)), *b = malloc(nr * sizeof(float));
    Grads g1, g2;
    Err e;
    CHECK(grads_init(&g1, c, &e) == 0 && grads_init(&g2, c, &e) == 0);
    CHECK(g1.wcls == g1.token_embedding && g1.n == model_n_params(c));
    double l1 = fixture_forward(&f);
    train_backward(&f.s, &f.m.w, f.r.w, a, &g1);
    train_backward(&f.s, &f.m.w, f.r.w, b, NULL);
    CHECK(memcmp(a, b, nr * sizeof(float)) == 0);
    memset(b, 0x7f, nr * sizeof(float)); /* the backward overwrites, it does not add */
    double l2 = fixture_forward(&f);
    train_backward(&f.s, &f.m.w, f.r.w, b, &g2);
    CHECK(l1 == l2);
    CHECK(memcmp(a, b, nr * sizeof(float)) == 0);
    CHECK(memcmp(g1.mem, g2.mem, g1.n * sizeof(float)) == 0);
    free(a); free(b);
    grads_free(&g1); grads_free(&g2);
    fixture_free(&f);
}

/* A step's work is cut into items of fixed size (row chunks, slices of
 * weight gradients, attention's (sequence, KV head) pairs) whatever the
 * thread count, so one thread and three give the same floats: 4 × 70 rows
 * make two row chunks and eight pairs, two query blocks per sequence. */
TEST(backward_model_step_is_the_same_on_one_thread_and_three) {
    Fixture f;
    fixture_init(&f, 0, TRAIN_CE, 4, 70, 61);
    const Config *c = &f.m.c;
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim;
    const char *was = getenv("AHASCOPE_THREADS");
    char keep[32] = "";
    if (was) snprintf(keep, sizeof keep, "%s", was);
    TrainState s[2];
    Grads g[2];
    float *dr[2];
    double loss[2];
    Err e;
    for (int run = 0; run < 2; run++) {
        setenv("AHASCOPE_THREADS", run ? "3" : "1", 1);
        CHECK(train_init(&s[run], c, 4, 70, &e) == 0);
        CHECK_INT(pool_threads(s[run].pool), run ? 3 : 1);
        CHECK(grads_init(&g[run], c, &e) == 0);
        dr[run] = malloc(nr * sizeof(float));
        loss[run] = train_forward(&s[run], &f.m.w, f.r.w, &f.tc, f.inputs, f.targets, NULL);
        train_backward(&s[run], &f.m.w, f.r.w, dr[run], &g[run]);
    }
    if (was) setenv("AHASCOPE_THREADS", keep, 1);
    else unsetenv("AHASCOPE_THREADS");
    CHECK(both_gates_present(&s[1]));
    CHECK(loss[0] == loss[1]);
    CHECK(memcmp(s[0].att, s[1].att, (size_t)c->n_layers * s[0].N * c->dim * sizeof(float)) == 0);
    CHECK(memcmp(dr[0], dr[1], nr * sizeof(float)) == 0);
    CHECK(memcmp(g[0].mem, g[1].mem, g[0].n * sizeof(float)) == 0);
    for (int run = 0; run < 2; run++) {
        train_free(&s[run]);
        grads_free(&g[run]);
        free(dr[run]);
    }
    fixture_free(&f);
}

/* One forward and backward of states[i] on [B][T] inputs, targets and CE
 * weights (NULL: all 1): the loss, and the gradients into g and dr. */
static double step_grads(TrainState *s, const Fixture *f, const TrainConfig *tc, const int *in, const int *tg,
                         const float *w, Grads *g, float *dr) {
    s->target_w = w;
    double loss = train_forward(s, &f->m.w, f->r.w, tc, in, tg, NULL);
    train_backward(s, &f->m.w, f->r.w, dr, g);
    return loss;
}

/* Rows [0, T) of each of B sequences of stride `from`, packed at stride T. */
static int *repack(const int *x, int B, int from, int T) {
    int *y = malloc((size_t)B * T * sizeof(int));
    for (int b = 0; b < B; b++) memcpy(y + (size_t)b * T, x + (size_t)b * from, (size_t)T * sizeof(int));
    return y;
}

/* A state carved for 70 positions and set to 37 computes what a state made
 * for 37 does, bit for bit, under AHA's two branches and under full
 * attention from the kept exponentials; set back to 70 it is the state it
 * was. Lengths outside 1..70 are refused. */
TEST(backward_a_shorter_length_is_a_state_of_that_length) {
    Fixture f;
    fixture_init(&f, 0, TRAIN_CE, 3, 70, 83);
    const Config *c = &f.m.c;
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim;
    Err e;
    int *in = repack(f.inputs, 3, 70, 37), *tg = repack(f.targets, 3, 70, 37);
    CHECK_INT(train_set_length(&f.s, 0), -1);
    CHECK_INT(train_set_length(&f.s, 71), -1);
    CHECK_INT(f.s.T, 70);
    TrainConfig full = {.window = 70, .sinks = 0, .tau = -1, .lambda = 0, .objective = TRAIN_CE};
    const TrainConfig *tcs[2] = {&f.tc, &full};
    for (int k = 0; k < 2; k++) {
        TrainState exact;
        Grads g[3];
        float *dr[3];
        double loss[3];
        CHECK(train_init(&exact, c, 3, 37, &e) == 0);
        for (int i = 0; i < 3; i++) {
            CHECK(grads_init(&g[i], c, &e) == 0);
            dr[i] = malloc(nr * sizeof(float));
        }
        CHECK_INT(train_set_length(&f.s, 37), 0);
        loss[0] = step_grads(&f.s, &f, tcs[k], in, tg, NULL, &g[0], dr[0]);
        loss[1] = step_grads(&exact, &f, tcs[k], in, tg, NULL, &g[1], dr[1]);
        CHECK_MSG(loss[0] == loss[1], "loss %.9g set to 37, %.9g made for 37 (%s)", loss[0], loss[1], k ? "full" : "aha");
        CHECK(memcmp(dr[0], dr[1], nr * sizeof(float)) == 0);
        CHECK(memcmp(g[0].mem, g[1].mem, g[0].n * sizeof(float)) == 0);
        /* back to 70: the whole fixture again, as a fresh state of 70 computes it */
        TrainState whole;
        CHECK(train_init(&whole, c, 3, 70, &e) == 0);
        CHECK_INT(train_set_length(&f.s, 70), 0);
        for (int i = 0; i < 2; i++) memset(g[i].mem, 0, g[i].n * sizeof(float));
        loss[0] = step_grads(&f.s, &f, tcs[k], f.inputs, f.targets, NULL, &g[0], dr[0]);
        loss[2] = step_grads(&whole, &f, tcs[k], f.inputs, f.targets, NULL, &g[2], dr[2]);
        CHECK(loss[0] == loss[2]);
        CHECK(memcmp(g[0].mem, g[2].mem, g[0].n * sizeof(float)) == 0);
        for (int i = 0; i < 3; i++) grads_free(&g[i]), free(dr[i]);
        train_free(&exact), train_free(&whole);
    }
    free(in), free(tg);
    fixture_free(&f);
}

/* Positions whose targets weigh 0 (an item's padding) change neither the
 * loss nor a gradient: two items of 30 and 37 positions padded to 70 give
 * what they give run at 37, within float rounding (1e-6 of the loss, 1e-5
 * of the largest gradient). This is what lets `train --by-length` cut the
 * padding. */
TEST(backward_padding_that_weighs_nothing_changes_nothing) {
    Fixture f;
    fixture_init(&f, 0, TRAIN_CE, 2, 70, 89);
    const Config *c = &f.m.c;
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim;
    Err e;
    const int len[2] = {30, 37};
    float w70[140], w37[74];
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < 70; i++) w70[b * 70 + i] = i < len[b] ? (i % 5 ? 1.0f : 10.0f) : 0.0f;
        for (int i = 0; i < 37; i++) w37[b * 37 + i] = w70[b * 70 + i];
    }
    int *in = repack(f.inputs, 2, 70, 37), *tg = repack(f.targets, 2, 70, 37);
    TrainState cut;
    Grads g[2];
    float *dr[2];
    CHECK(train_init(&cut, c, 2, 37, &e) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK(grads_init(&g[i], c, &e) == 0);
        dr[i] = malloc(nr * sizeof(float));
    }
    TrainConfig tc = f.tc;
    tc.lambda = 0; /* the global-share term averages over every position, padding too */
    double l70 = step_grads(&f.s, &f, &tc, f.inputs, f.targets, w70, &g[0], dr[0]);
    double l37 = step_grads(&cut, &f, &tc, in, tg, w37, &g[1], dr[1]);
    CHECK_MSG(fabs(l70 - l37) <= 1e-6 * fabs(l37), "loss %.9g padded, %.9g cut", l70, l37);
    double worst = 0, top = 0;
    for (size_t i = 0; i < g[0].n; i++) worst = fmax(worst, fabs(g[0].mem[i] - g[1].mem[i])), top = fmax(top, fabs(g[1].mem[i]));
    for (size_t i = 0; i < nr; i++) worst = fmax(worst, fabs(dr[0][i] - dr[1][i])), top = fmax(top, fabs(dr[1][i]));
    CHECK(top > 0);
    CHECK_MSG(worst <= 1e-5 * top, "padded and cut gradients differ by %g of %g", worst, top);
    for (int i = 0; i < 2; i++) grads_free(&g[i]), free(dr[i]);
    train_free(&cut);
    free(in), free(tg);
    fixture_free(&f);
}

/* ---- AdamW ---- */

TEST(backward_adamw_matches_scalar_reference) {
    AdamWConfig h = adamw_defaults();
    CHECK(h.beta1 == 0.9f && h.beta2 == 0.999f && h.eps == 1e-8f && h.weight_decay == 0);
    h.weight_decay = 0.1f;
    AdamW o;
    Err e;
    CHECK(adamw_init(&o, 3, &h, &e) == 0);
    float p[3] = {1, -2, 0.5f};
    double pr[3] = {1, -2, 0.5}, m[3] = {0}, v[3] = {0};
    for (int step = 1; step <= 5; step++) {
        float g[3] = {0.3f * step, -1, step % 2 ? 2e-3f : -4};
        float lr = 0.01f * step;
        adamw_step(&o, p, g, lr);
        for (int i = 0; i < 3; i++) {
            m[i] = 0.9 * m[i] + 0.1 * g[i];
            v[i] = 0.999 * v[i] + 0.001 * (double)g[i] * g[i];
            double mh = m[i] / (1 - pow(0.9, step)), vh = v[i] / (1 - pow(0.999, step));
            pr[i] -= lr * (mh / (sqrt(vh) + 1e-8) + 0.1 * pr[i]);
        }
    }
    for (int i = 0; i < 3; i++) CHECK_NEAR(p[i], pr[i], 1e-6);
    CHECK_INT(o.step, 5);
    adamw_free(&o);
    /* bias correction: the first step moves every weight by lr against its gradient's sign */
    h = adamw_defaults();
    CHECK(adamw_init(&o, 2, &h, &e) == 0);
    float q[2] = {0, 0}, gq[2] = {5, -0.01f};
    adamw_step(&o, q, gq, 0.1f);
    CHECK_NEAR(q[0], -0.1, 1e-6);
    CHECK_NEAR(q[1], 0.1, 1e-5);
    adamw_free(&o);
}

TEST(backward_lr_warmup_cosine_schedule) {
    CHECK_NEAR(lr_warmup_cosine(0, 10, 110, 1e-3f, 1e-4f), 1e-4, 1e-9);
    CHECK_NEAR(lr_warmup_cosine(4, 10, 110, 1e-3f, 1e-4f), 5e-4, 1e-9);
    CHECK_NEAR(lr_warmup_cosine(9, 10, 110, 1e-3f, 1e-4f), 1e-3, 1e-9);
    CHECK_NEAR(lr_warmup_cosine(10, 10, 110, 1e-3f, 1e-4f), 1e-3, 1e-9);
    CHECK_NEAR(lr_warmup_cosine(60, 10, 110, 1e-3f, 1e-4f), 5.5e-4, 1e-9);
    CHECK_NEAR(lr_warmup_cosine(110, 10, 110, 1e-3f, 1e-4f), 1e-4, 1e-9);
    CHECK_NEAR(lr_warmup_cosine(500, 10, 110, 1e-3f, 1e-4f), 1e-4, 1e-9);
    CHECK_NEAR(lr_warmup_cosine(0, 0, 100, 2, 0), 2, 1e-6); /* no warm-up */
    float prev = 1;
    for (long s = 10; s <= 110; s++) {
        float lr = lr_warmup_cosine(s, 10, 110, 1e-3f, 1e-4f);
        CHECK(lr <= prev);
        prev = lr;
    }
}

/* ---- behaviour: a few router-only AdamW steps ---- */

typedef struct {
    Fixture f;
    float *teacher;  /* [N][vocab] full-attention distribution */
    float *dr;
    AdamW opt;
} RouterRun;

/* emb_offset is added to coordinate 0 of every token embedding: a component
 * all residual vectors share, as real language models' residual streams do. */
static void router_run_init(RouterRun *rr, float lambda, float emb_offset) {
    Fixture *f = &rr->f;
    fixture_init(f, 0, TRAIN_KL, 4, 16, 61);
    const Config *c = &f->m.c;
    for (int t = 0; t < c->vocab_size; t++) ((float *)f->m.w.token_embedding)[(size_t)t * c->dim] += emb_offset;
    size_t nv = (size_t)f->s.N * c->vocab_size, nr = (size_t)c->n_layers * c->n_heads * c->dim;
    f->tc = (TrainConfig){.window = 2, .sinks = 0, .tau = -1, .lambda = 0, .objective = TRAIN_CE};
    fixture_forward(f); /* the full-attention teacher */
    rr->teacher = malloc(nv * sizeof(float));
    memcpy(rr->teacher, f->s.probs, nv * sizeof(float));
    f->tc = (TrainConfig){.window = 2, .sinks = 0, .tau = 0.5f, .lambda = lambda, .objective = TRAIN_KL};
    rr->dr = malloc(nr * sizeof(float));
    AdamWConfig h = adamw_defaults();
    Err e;
    CHECK(adamw_init(&rr->opt, nr, &h, &e) == 0);
}

static double router_run_step(RouterRun *rr, float lr) {
    Fixture *f = &rr->f;
    double loss = train_forward(&f->s, &f->m.w, f->r.w, &f->tc, f->inputs, NULL, rr->teacher);
    train_backward(&f->s, &f->m.w, f->r.w, rr->dr, NULL);
    adamw_step(&rr->opt, f->r.w, rr->dr, lr);
    return loss;
}

static void router_run_free(RouterRun *rr) {
    free(rr->teacher);
    free(rr->dr);
    adamw_free(&rr->opt);
    fixture_free(&rr->f);
}

TEST(backward_router_steps_lower_the_distillation_loss) {
    RouterRun rr;
    router_run_init(&rr, 0, 0);
    double first = router_run_step(&rr, 0.1f), share0 = rr.f.s.global_share;
    CHECK(first > 1e-3 && share0 > 0.05 && share0 < 0.95);
    for (int i = 0; i < 15; i++) router_run_step(&rr, 0.1f);
    double last = router_run_step(&rr, 0.1f);
    if (getenv("BWD_VERBOSE")) printf("  KL %.4g -> %.4g, global share %.2f -> %.2f\n", first, last, share0, rr.f.s.global_share);
    CHECK_MSG(last < 0.5 * first, "distillation loss %g -> %g", first, last);
    router_run_free(&rr);
}

/* Routers have no bias, so mean(r) can be driven to 0 only if some w makes
 * x·w < 0 for every token: on a random model the inputs surround the origin
 * and the share stalls near 0.1; with a shared component it reaches 0. */
TEST(backward_large_lambda_drives_global_share_to_zero) {
    RouterRun rr;
    router_run_init(&rr, 1.0f, 3.0f);
    router_run_step(&rr, 0.1f);
    double share0 = rr.f.s.global_share;
    for (int i = 0; i < 25; i++) router_run_step(&rr, 0.1f);
    router_run_step(&rr, 0.1f);
    if (getenv("BWD_VERBOSE")) printf("  global share %.3f -> %.3f\n", share0, rr.f.s.global_share);
    CHECK(share0 > 0.05);
    CHECK_MSG(rr.f.s.global_share < 0.02, "global share %g -> %g", share0, rr.f.s.global_share);
    router_run_free(&rr);
}

/* Pages of [p, p + bytes) resident now, and how many there are. */
static size_t resident_pages(const void *p, size_t bytes, size_t *total) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = ((uintptr_t)p + page - 1) & ~(page - 1),
              hi = ((uintptr_t)p + bytes) & ~(page - 1);
    size_t n = hi > lo ? (hi - lo) / page : 0, in = 0;
    unsigned char *v = malloc(n ? n : 1);
    if (v && n && mincore((void *)lo, hi - lo, v) == 0)
        for (size_t i = 0; i < n; i++) in += v[i] & 1;
    free(v);
    *total = n;
    return in;
}

/* train_keep_exponentials makes the kept exponentials' pages before the
 * first step, which otherwise faults them in (a few per cent of a short
 * run at the organism's shape); a kernel without MADV_POPULATE_WRITE skips. */
TEST(backward_kept_exponentials_pages_made_before_the_first_step) {
#ifndef MADV_POPULATE_WRITE
    test_skip("this system has no MADV_POPULATE_WRITE");
#else
    void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int ok = probe != MAP_FAILED && madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
    if (probe != MAP_FAILED) munmap(probe, 4096);
    if (!ok) { test_skip("the kernel refuses MADV_POPULATE_WRITE (Linux < 5.14)"); return; }
    Config c = {.dim = 64, .hidden_dim = 96, .n_layers = 2, .n_heads = 4, .n_kv_heads = 4, .vocab_size = 32,
                .seq_len = 256};
    c.head_size = c.dim / c.n_heads, c.kv_dim = c.dim;
    TrainState s;
    Err e;
    CHECK(train_init(&s, &c, 4, 256, &e) == 0);
    CHECK(s.pstore != NULL);
    if (!s.pstore) { train_free(&s); return; }
    AttnDims ad = {.B = 4, .T = 256, .n_heads = 4, .n_kv_heads = 4, .head_size = c.head_size, .pool = s.pool};
    size_t bytes = c.n_layers * attention_store_floats(&ad) * sizeof(float), total;
    size_t before = resident_pages(s.pstore, bytes, &total);
    CHECK_MSG(total > 64 && before < total / 2, "%zu of %zu pages resident before", before, total);
    train_keep_exponentials(&s);
    size_t after = resident_pages(s.pstore, bytes, &total);
    CHECK_MSG(after == total, "%zu of %zu pages resident after", after, total);
    train_free(&s);
#endif
}

/* Four query blocks (the last partial) of one full-attention step: the
 * kept exponentials' layout, block k holding rows against (k+1) blocks of
 * keys, is where a long sequence could go wrong that two blocks do not
 * reach; and the training forward there gives inference's logits. */
TEST(backward_kept_exponentials_across_four_tiles) {
    Config c = {.dim = 16, .hidden_dim = 24, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 24,
                .seq_len = 256};
    check_kept_against_recomputed(&c, 2, 250, 71);
}

TEST(backward_long_training_forward_equals_inference_forward) {
    static const int Ts[] = {70, 130, 250};
    for (int ti = 0; ti < 3; ti++) {
        Fixture f;
        fixture_init(&f, 0, TRAIN_CE, 1, Ts[ti], 41);
        f.tc.window = Ts[ti], f.tc.sinks = 0, f.tc.lambda = 0, f.tc.tau = -1.0f; /* full attention: one branch */
        const Config *c = &f.m.c;
        int T = f.s.T, V = c->vocab_size;
        RunState rs;
        Err e;
        CHECK(fwd_init(&rs, c, T, 1, &e) == 0);
        StepTrace **tr = malloc((size_t)T * sizeof *tr);
        for (int i = 0; i < T; i++) tr[i] = trace_new(c->n_layers, c->n_heads);
        float *logits = malloc((size_t)T * V * sizeof(float));
        AttnConfig a = aha_defaults();
        a.policy = POLICY_FULL;
        fixture_forward(&f);
        CHECK(f.s.pstore != NULL);
        fwd_forward(&f.m, &rs, &a, f.inputs, T, 0, logits, tr);
        double worst = 0;
        int at = -1;
        for (int t = 0; t < T; t++)
            for (int i = 0; i < V; i++) {
                double d = fabs(logits[(size_t)t * V + i] - f.s.logits[(size_t)t * V + i]);
                if (d > worst) worst = d, at = t;
            }
        CHECK_MSG(worst < 1e-4, "T %d: logits differ by %g at position %d", T, worst, at);
        for (int i = 0; i < T; i++) trace_free(tr[i]);
        free(tr), free(logits);
        fwd_free(&rs);
        fixture_free(&f);
    }
}
