/* fit.c — routers fitted to the oracle's labels (see fit.h). */
#include "app/fit.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "engine/attn.h"
#include "engine/decide.h"
#include "engine/forward.h"
#include "engine/kernels.h"
#include "engine/logfit.h"

/* One example per position with far keys, per layer: what the router read
 * and, per head, the oracle's label and its weight. Rows from training
 * sequences come first. */
typedef struct {
    int L, H, d;
    long cap, rows, n_train;
    float *x;          /* [L][cap][d] */
    float *y, *wt;     /* [L][cap][H]: label 1, 0 or -1 (unknown, weight 0); weight */
} Examples;

static void examples_free(Examples *x) { free(x->x), free(x->y), free(x->wt); }

/* Positions of a sequence of len tokens whose heads have a choice. */
static long choice_rows(int len, const FitConfig *c) {
    long n = 0;
    for (int t = 0; t < len; t++) n += attn_n_far(t, c->window, c->sinks) > 0;
    return n;
}

static int examples_init(Examples *x, const Model *m, const EvalData *d, int n_held, const FitConfig *c, Err *e) {
    memset(x, 0, sizeof *x);
    x->L = m->c.n_layers, x->H = m->c.n_heads, x->d = m->c.dim;
    for (int i = 0; i < d->n; i++) {
        long k = choice_rows(d->len[i], c);
        x->cap += k;
        if (i < d->n - n_held) x->n_train += k;
    }
    if (x->n_train < 1 || x->cap == x->n_train)
        return err_set(e, "%s: no position beyond window %d in the %s sequences: nothing to fit or hold out", d->desc,
                       c->window, x->n_train < 1 ? "training" : "held-out");
    size_t cells = (size_t)x->L * x->cap;
    x->x = malloc(cells * x->d * sizeof(float));
    x->y = malloc(cells * x->H * sizeof(float));
    x->wt = malloc(cells * x->H * sizeof(float));
    if (!x->x || !x->y || !x->wt)
        return err_set(e, "out of memory for the fit's examples (%zu MB)", cells * (x->d + 2 * x->H) * 4 >> 20);
    return 0;
}

/* The rows of the T positions just fed (traces tr, router inputs in rs). */
static void take_rows(Examples *x, const RunState *rs, StepTrace **tr, int T, const FitConfig *c) {
    for (int i = 0; i < T; i++) {
        if (tr[i]->n_far <= 0) continue;
        long row = x->rows++;
        for (int l = 0; l < x->L; l++) {
            size_t at = (size_t)l * x->cap + row;
            memcpy(x->x + at * x->d, rs->router_in + ((size_t)l * rs->max_batch + i) * x->d, x->d * sizeof(float));
            for (int h = 0; h < x->H; h++) {
                int cell = l * x->H + h, lab = decide_label(tr[i], cell, c->theta_logit);
                float err = tr[i]->oracle_err[cell];
                x->y[at * x->H + h] = (float)lab; /* -1 (unknown) has weight 0 */
                x->wt[at * x->H + h] = lab < 0 ? 0.0f : !c->weight_err ? 1.0f : isfinite(err) ? err : 0.0f;
            }
        }
    }
}

/* Run every sequence under full attention with the oracle profiled. */
static int collect(Examples *x, const Model *m, const EvalData *d, const FitConfig *c, Err *e) {
    AttnConfig a = aha_defaults();
    a.policy = POLICY_FULL, a.profile = 1, a.window = c->window, a.sinks = c->sinks, a.theta_logit = c->theta_logit;
    int max_len = 1;
    for (int i = 0; i < d->n; i++) max_len = d->len[i] > max_len ? d->len[i] : max_len;
    RunState rs;
    int B = max_len < 128 ? max_len : 128, rc = fwd_init(&rs, &m->c, B, c->threads, e);
    if (rc == 0) rc = fwd_keep_router_inputs(&rs, e);
    StepTrace **tr = calloc((size_t)rs.max_batch, sizeof *tr);
    for (int i = 0; rc == 0 && i < rs.max_batch; i++)
        if (!tr || !(tr[i] = trace_new(m->c.n_layers, m->c.n_heads))) rc = err_set(e, "out of memory for the traces");
    double t0 = args_seconds();
    int tty = c->progress && isatty(STDERR_FILENO);
    for (int i = 0; rc == 0 && i < d->n; i++) {
        for (int done = 0; done < d->len[i]; done += rs.max_batch) {
            int T = d->len[i] - done < rs.max_batch ? d->len[i] - done : rs.max_batch;
            for (int k = 0; k < T; k++) trace_clear(tr[k]);
            fwd_forward(m, &rs, &a, d->seq[i] + done, T, done, NULL, tr);
            take_rows(x, &rs, tr, T, c);
        }
        if (c->progress && (tty || i + 1 == d->n)) {
            double dt = args_seconds() - t0;
            fprintf(stderr, "%sfit: oracle labels [%d/%d] %5.1f s, ETA %4.0f s%s", tty ? "\r" : "", i + 1, d->n, dt,
                    dt / (i + 1) * (d->n - i - 1), tty && i + 1 < d->n ? "" : "\n");
        }
    }
    for (int i = 0; tr && i < rs.max_batch; i++) trace_free(tr[i]);
    free(tr);
    fwd_free(&rs);
    return rc;
}

/* --weight err: oracle_err is tiny where the far keys barely matter; scale
 * each layer's weights to mean 1 over its training examples, so --l2 means
 * the same with and without weights. */
static void normalise_weights(Examples *x) {
    for (int l = 0; l < x->L; l++) {
        float *w = x->wt + (size_t)l * x->cap * x->H;
        double sum = 0;
        long n = 0;
        for (size_t i = 0; i < (size_t)x->n_train * x->H; i++) sum += w[i], n += w[i] > 0;
        if (sum <= 0) continue;
        float s = (float)(n / sum);
        for (size_t i = 0; i < (size_t)x->rows * x->H; i++) w[i] *= s;
    }
}

double fit_balance_factor(double pos, double all, double balance) {
    if (!(balance > 0 && balance < 1) || !(pos > 0) || !(all > pos)) return 1;
    return balance * (all - pos) / (pos * (1 - balance));
}

/* --balance: at θ = 0.7 a tenth of the cells are positive while the share
 * sends a quarter or more global, so τ cuts the fitted scores deep in their
 * tail, where an unweighted fit spends little effort. Weighting the
 * positives up (one factor for the model, from the training rows) moves
 * the fit's attention to where τ cuts: on stories260K it cut the KL at a
 * matched share in 11 of 12 (window, sample) cells (app/FINDINGS.md). */
static void balance_weights(Examples *x, double balance) {
    double pos = 0, all = 0;
    for (int l = 0; l < x->L; l++)
        for (size_t i = 0; i < (size_t)x->n_train * x->H; i++) {
            size_t at = (size_t)l * x->cap * x->H + i;
            all += x->wt[at], pos += x->y[at] > 0 ? x->wt[at] : 0;
        }
    float a = (float)fit_balance_factor(pos, all, balance);
    for (size_t i = 0; i < (size_t)x->L * x->cap * x->H; i++)
        if (x->y[i] > 0) x->wt[i] *= a;
}

static int fit_layers(const Examples *x, const FitConfig *c, Routers *r, Err *e) {
    double t0 = args_seconds();
    int tty = c->progress && isatty(STDERR_FILENO);
    for (int l = 0; l < x->L; l++) {
        size_t at = (size_t)l * x->cap;
        LogfitProblem p = {(int)x->n_train, x->d, x->H, x->x + at * x->d, x->y + at * x->H, x->wt + at * x->H, c->l2,
                           c->iters};
        if (logfit_solve(&p, r->w + (size_t)l * x->H * x->d, r->b + (size_t)l * x->H, e)) return -1;
        if (c->progress && (tty || l + 1 == x->L)) {
            double dt = args_seconds() - t0;
            fprintf(stderr, "%sfit: logistic fit layer [%d/%d] %5.1f s, ETA %4.0f s%s", tty ? "\r" : "", l + 1, x->L,
                    dt, dt / (l + 1) * (x->L - l - 1), tty && l + 1 < x->L ? "" : "\n");
        }
    }
    return 0;
}

/* z [L][rows][H]: every example's router logit. */
static float *logits(const Examples *x, const Routers *r) {
    float *z = malloc((size_t)x->L * x->rows * x->H * sizeof(float));
    for (int l = 0; z && l < x->L; l++) {
        float *zl = z + (size_t)l * x->rows * x->H;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)x->rows, x->H, x->d, 1.0f,
                    x->x + (size_t)l * x->cap * x->d, x->d, r->w + (size_t)l * x->H * x->d, x->d, 0.0f, zl, x->H);
        for (size_t i = 0; i < (size_t)x->rows; i++)
            for (int h = 0; h < x->H; h++) zl[i * x->H + h] += r->b[l * x->H + h];
    }
    return z;
}

static int desc_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

/* The logit threshold that sends `share` of the training cells global:
 * midway between the last cell in and the first out. */
static int share_threshold(const Examples *x, const float *z, double share, double *out, Err *e) {
    size_t per = (size_t)x->n_train * x->H, n = (size_t)x->L * per;
    float *v = malloc(n * sizeof(float));
    if (!v) return err_set(e, "out of memory for the threshold");
    for (int l = 0; l < x->L; l++) memcpy(v + l * per, z + (size_t)l * x->rows * x->H, per * sizeof(float));
    qsort(v, n, sizeof *v, desc_float);
    size_t k = (size_t)llround(share * (double)n);
    *out = k == 0 ? v[0] + 1.0 : k >= n ? v[n - 1] - 1.0 : 0.5 * ((double)v[k - 1] + v[k]);
    free(v);
    return 0;
}

/* Shares at threshold t on the training rows and agreement with the oracle
 * on the held-out rows. */
static void measure(const Examples *x, const float *z, double t, FitResult *out) {
    DecideCounts held = {0};
    long tr_global = 0, tr_n = 0;
    for (int l = 0; l < x->L; l++)
        for (long i = 0; i < x->rows; i++)
            for (int h = 0; h < x->H; h++) {
                size_t at = ((size_t)l * x->rows + i) * x->H + h, ex = ((size_t)l * x->cap + i) * x->H + h;
                int g = z[at] > t;
                if (i < x->n_train) tr_global += g, tr_n++;
                else decide_tally(&held, g, (int)x->y[ex]);
            }
    DecideRates rt = decide_rates(&held);
    long n = held.tp + held.fp + held.fn + held.tn;
    out->train_share = tr_n ? (double)tr_global / tr_n : NAN;
    out->held_share = rt.predicted_rate;
    out->held_agree = n ? (double)(held.tp + held.tn) / n : NAN;
    out->held_precision = rt.precision, out->held_recall = rt.recall;
}

static int threshold_and_measure(const Examples *x, const FitConfig *c, FitResult *out, Err *e) {
    float *z = logits(x, &out->r);
    if (!z) return err_set(e, "out of memory for the router logits");
    double t = 0;
    int rc = isnan(c->tau) ? share_threshold(x, z, c->share, &t, e) : 0;
    if (!isnan(c->tau)) t = log(c->tau / (1 - c->tau));
    if (rc == 0) {
        out->tau = 1.0 / (1.0 + exp(-t));
        measure(x, z, t, out);
    }
    free(z);
    return rc;
}

int fit_routers(const Model *m, const EvalData *d, int n_held, const FitConfig *c, FitResult *out, Err *e) {
    memset(out, 0, sizeof *out);
    Examples x;
    int rc = examples_init(&x, m, d, n_held, c, e);
    double t0 = args_seconds();
    if (rc == 0) rc = collect(&x, m, d, c, e);
    out->collect_s = args_seconds() - t0;
    for (int i = 0; i < d->n; i++) out->tokens += d->len[i];
    if (rc == 0 && c->weight_err) normalise_weights(&x);
    if (rc == 0) balance_weights(&x, c->balance);
    if (rc == 0 && (rc = router_random(&out->r, x.L, x.H, x.d, 0, e)) == 0) /* the shape; the fit overwrites it */
        if (!(out->r.b = calloc((size_t)x.L * x.H, sizeof(float)))) rc = err_set(e, "out of memory for routers");
    t0 = args_seconds();
    openblas_set_num_threads(c->threads > 0 ? c->threads : 1); /* the forward pass asked for 1 */
    if (rc == 0) rc = fit_layers(&x, c, &out->r, e);
    size_t nw = (size_t)x.L * x.H * x.d, nb = (size_t)x.L * x.H;
    if (rc == 0 && (k_first_nonfinite(out->r.w, nw) < nw || k_first_nonfinite(out->r.b, nb) < nb))
        rc = err_set(e, "%s: the fitted routers are not finite (the model's activations overflow?); nothing written",
                     d->desc);
    if (rc == 0) rc = threshold_and_measure(&x, c, out, e);
    out->fit_s = args_seconds() - t0;
    out->n_train = x.n_train, out->n_held = x.rows - x.n_train;
    examples_free(&x);
    return rc;
}

void fit_result_free(FitResult *r) { router_free(&r->r); }
