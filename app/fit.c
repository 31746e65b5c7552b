/* fit.c — routers fitted to the oracle's labels (see fit.h). */
#include "app/fit.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/progress.h"
#include "engine/attn.h"
#include "engine/decide.h"
#include "engine/forward.h"
#include "engine/kernels.h"
#include "engine/safetensors.h"
#include "engine/train_logfit.h"

/* One example per position with far keys, per layer: what the router read
 * and, per head, the oracle's label and its weight. Rows from training
 * sequences come first. */
typedef struct {
    int L, H, d;
    long cap, rows, n_train;
    float *x;          /* [L][cap][d] */
    float *y, *wt;     /* [L][cap][H]: label 1, 0 or -1 (unknown, weight 0); weight */
    int32_t *seq;      /* [cap]: the sequence each row came from (what a shard file keeps to merge by) */
} Examples;

static void examples_free(Examples *x) { free(x->x), free(x->y), free(x->wt), free(x->seq); }

static int examples_alloc(Examples *x, Err *e) {
    size_t cells = (size_t)x->L * x->cap;
    x->x = malloc(cells * x->d * sizeof(float));
    x->y = malloc(cells * x->H * sizeof(float));
    x->wt = malloc(cells * x->H * sizeof(float));
    x->seq = malloc((size_t)x->cap * sizeof *x->seq);
    if (!x->x || !x->y || !x->wt || !x->seq)
        return err_set(e, "out of memory for the fit's examples (%zu MB)", cells * (x->d + 2 * x->H) * 4 >> 20);
    return 0;
}

/* Positions of a sequence of len tokens whose heads have a choice. */
static long choice_rows(int len, const FitConfig *c) {
    long n = 0;
    for (int t = 0; t < len; t++) n += attn_n_far(t, c->window, c->sinks) > 0;
    return n;
}

/* Room for the rows of shard sh's sequences of d (every sequence for 0/1). */
static int examples_init(Examples *x, const Model *m, const EvalData *d, int n_held, const ArgsShard *sh,
                         const FitConfig *c, Err *e) {
    memset(x, 0, sizeof *x);
    x->L = m->c.n_layers, x->H = m->c.n_heads, x->d = m->c.dim;
    for (int i = 0; i < d->n; i++) {
        if (!args_shard_owns(sh, i)) continue;
        long k = choice_rows(d->len[i], c);
        x->cap += k;
        if (i < d->n - n_held) x->n_train += k;
    }
    if (sh->n <= 1 && (x->n_train < 1 || x->cap == x->n_train))
        return err_set(e, "%s: no position beyond window %d in the %s sequences: nothing to fit or hold out", d->desc,
                       c->window, x->n_train < 1 ? "training" : "held-out");
    if (x->cap < 1) return err_set(e, "%s: shard %ld/%ld has no position beyond window %d", d->desc, sh->i, sh->n, c->window);
    return examples_alloc(x, e);
}

/* The rows of the T positions just fed (traces tr, router inputs in rs). */
static void take_rows(Examples *x, const RunState *rs, StepTrace **tr, int T, int seq, const FitConfig *c) {
    for (int i = 0; i < T; i++) {
        if (tr[i]->n_far <= 0) continue;
        long row = x->rows++;
        x->seq[row] = seq;
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

/* Run shard sh's sequences under full attention with the oracle profiled. */
static int collect(Examples *x, const Model *m, const EvalData *d, const ArgsShard *sh, const FitConfig *c, Err *e) {
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
    double t0 = clock_now();
    int tty = c->progress && isatty(STDERR_FILENO);
    for (int i = 0; rc == 0 && i < d->n; i++) {
        if (!args_shard_owns(sh, i)) continue;
        for (int done = 0; done < d->len[i]; done += rs.max_batch) {
            int T = d->len[i] - done < rs.max_batch ? d->len[i] - done : rs.max_batch;
            for (int k = 0; k < T; k++) trace_clear(tr[k]);
            fwd_forward(m, &rs, &a, d->seq[i] + done, T, done, NULL, tr);
            take_rows(x, &rs, tr, T, i, c);
        }
        if (c->progress) progress_count("fit: oracle labels", i + 1, d->n, t0, tty);
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

/* 1 if no training example of layer l carries weight: every label unknown, as on
 * an architecture's local layers, where no head has a choice to learn. */
static int layer_has_no_choice(const Examples *x, int l) {
    const float *w = x->wt + (size_t)l * x->cap * x->H;
    for (size_t i = 0; i < (size_t)x->n_train * x->H; i++)
        if (w[i] > 0) return 0;
    return 1;
}

/* Each layer's logistic fit; a layer with no choice keeps weights and bias 0
 * (counted in *n_skipped) rather than a solve over nothing. */
static int fit_layers(const Examples *x, const FitConfig *c, Routers *r, int *n_skipped, Err *e) {
    double t0 = clock_now();
    int tty = c->progress && isatty(STDERR_FILENO);
    *n_skipped = 0;
    for (int l = 0; l < x->L; l++) {
        size_t at = (size_t)l * x->cap;
        if (layer_has_no_choice(x, l)) { /* router_random filled the shape: clear it */
            memset(r->w + (size_t)l * x->H * x->d, 0, (size_t)x->H * x->d * sizeof(float));
            ++*n_skipped;
            continue;
        }
        LogfitProblem p = {(int)x->n_train, x->d, x->H, x->x + at * x->d, x->y + at * x->H, x->wt + at * x->H, c->l2,
                           c->iters};
        if (logfit_solve(&p, r->w + (size_t)l * x->H * x->d, r->b + (size_t)l * x->H, e)) return -1;
        if (c->progress) progress_count("fit: logistic fit layer", l + 1, x->L, t0, tty);
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

double fit_balance_factor(double pos, double all, double balance) {
    if (!(balance > 0 && balance < 1) || !(pos > 0) || !(all > pos)) return 1;
    return balance * (all - pos) / (pos * (1 - balance));
}

/* --balance: on stories260K at θ = 0.7 and w = 16 a tenth of the cells are
 * positive while the share sends 27% global, so τ cuts the fitted scores in
 * their tail, where an unweighted fit spends little effort. Weighting the
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

/* Routers from collected examples: weights normalised and balanced, each layer fitted,
 * the threshold set and the held-out rows measured. */
static int fit_examples(Examples *x, const FitConfig *c, const char *desc, FitResult *out, Err *e) {
    double t0 = clock_now();
    int rc = 0;
    if (c->weight_err) normalise_weights(x);
    balance_weights(x, c->balance);
    if ((rc = router_random(&out->r, x->L, x->H, x->d, 0, e)) == 0) /* the shape; the fit overwrites it */
        if (!(out->r.b = calloc((size_t)x->L * x->H, sizeof(float)))) rc = err_set(e, "out of memory for routers");
    openblas_set_num_threads(c->threads > 0 ? c->threads : 1); /* the forward pass asked for 1 */
    if (rc == 0) rc = fit_layers(x, c, &out->r, &out->n_layers_no_choice, e);
    size_t nw = (size_t)x->L * x->H * x->d, nb = (size_t)x->L * x->H;
    if (rc == 0 && (k_first_nonfinite(out->r.w, nw) < nw || k_first_nonfinite(out->r.b, nb) < nb))
        rc = err_set(e, "%s: the fitted routers are not finite (the model's activations overflow?); nothing written",
                     desc);
    if (rc == 0) rc = threshold_and_measure(x, c, out, e);
    out->fit_s = clock_now() - t0;
    out->n_train = x->n_train, out->n_held = x->rows - x->n_train;
    return rc;
}

int fit_routers(const Model *m, const EvalData *d, int n_held, const FitConfig *c, FitResult *out, Err *e) {
    memset(out, 0, sizeof *out);
    Examples x;
    ArgsShard all = {0, 1};
    int rc = examples_init(&x, m, d, n_held, &all, c, e);
    double t0 = clock_now();
    if (rc == 0) rc = collect(&x, m, d, &all, c, e);
    out->collect_s = clock_now() - t0;
    for (int i = 0; i < d->n; i++) out->tokens += d->len[i];
    if (rc == 0) rc = fit_examples(&x, c, d->desc, out, e);
    examples_free(&x);
    return rc;
}

/* ---- the data pass in shards ---- */

#define SHARD_FORMAT "ahascope-fit-examples"
enum { SHARD_N_META = 12 };
static const char *const SHARD_KEYS[SHARD_N_META] = {"format", "shard", "window", "sinks", "theta_logit", "weight",
                                                     "data", "n_seqs", "n_held", "seed", "model_sha256", "tokens"};

/* A shard file's metadata as text, in SHARD_KEYS order. The labelling
 * settings are spelt exactly so that the combining run can compare them. */
static void shard_meta(const FitConfig *c, const FitShardInfo *in, const ArgsShard *sh, char v[][1100]) {
    snprintf(v[0], 1100, SHARD_FORMAT), snprintf(v[1], 1100, "%ld/%ld", sh->i, sh->n);
    snprintf(v[2], 1100, "%d", c->window), snprintf(v[3], 1100, "%d", c->sinks);
    snprintf(v[4], 1100, "%.17g", c->theta_logit), snprintf(v[5], 1100, "%s", c->weight_err ? "err" : "none");
    snprintf(v[6], 1100, "%s", in->data), snprintf(v[7], 1100, "%d", in->n_seqs);
    snprintf(v[8], 1100, "%d", in->n_held), snprintf(v[9], 1100, "%llu", (unsigned long long)in->seed);
    snprintf(v[10], 1100, "%s", in->model_sha256), snprintf(v[11], 1100, "%ld", in->tokens);
}

static int shard_save(const Examples *x, const FitConfig *c, const FitShardInfo *in, const ArgsShard *sh,
                      const char *path, Err *e) {
    char v[SHARD_N_META][1100];
    shard_meta(c, in, sh, v);
    StWriter w;
    st_writer_init(&w);
    int64_t sx[3] = {x->L, x->rows, x->d}, sy[3] = {x->L, x->rows, x->H}, ss[1] = {x->rows};
    int rc = st_writer_add(&w, "x", ST_F32, 3, sx, x->x, e);
    if (rc == 0) rc = st_writer_add(&w, "y", ST_F32, 3, sy, x->y, e);
    if (rc == 0) rc = st_writer_add(&w, "wt", ST_F32, 3, sy, x->wt, e);
    if (rc == 0) rc = st_writer_add(&w, "seq", ST_I32, 1, ss, x->seq, e);
    for (int i = 0; rc == 0 && i < SHARD_N_META; i++) rc = st_writer_meta(&w, SHARD_KEYS[i], v[i], e);
    if (rc == 0) rc = st_write(&w, path, e);
    st_writer_free(&w);
    return rc;
}

int fit_shard_write(const Model *m, const EvalData *d, int n_held, const ArgsShard *sh, const FitConfig *c,
                    FitShardInfo *info, const char *path, long *rows, Err *e) {
    Examples x;
    int rc = examples_init(&x, m, d, n_held, sh, c, e);
    if (rc == 0) rc = collect(&x, m, d, sh, c, e);
    info->tokens = 0;
    for (int i = 0; i < d->n; i++) info->tokens += args_shard_owns(sh, i) ? d->len[i] : 0;
    if (rc == 0 && x.rows != x.cap) rc = err_set(e, "%s: %ld rows collected, %ld expected", d->desc, x.rows, x.cap);
    if (rc == 0) rc = shard_save(&x, c, info, sh, path, e);
    *rows = x.rows;
    examples_free(&x);
    return rc;
}

/* One shard file opened and checked: its shard, rows and tensors. */
typedef struct {
    StFile f;
    ArgsShard sh;
    long rows;
    const float *x, *y, *wt;
    const int32_t *seq;
} ShardIn;

/* A whole number of metadata key in [lo, hi]; an error naming the file otherwise. */
static int meta_long(const StFile *f, const char *key, long lo, long hi, long *out, Err *e) {
    const char *v = st_meta(f, key);
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || n < lo || n > hi)
        return err_set(e, "%s: metadata %s is %s%s%s, not a whole number from %ld to %ld", f->path, key,
                       v ? "'" : "missing", v ? v : "", v ? "'" : "", lo, hi);
    *out = n;
    return 0;
}

/* The file's metadata against what this fit expects (want, in SHARD_KEYS order; shard and tokens differ). */
static int shard_check_meta(const ShardIn *s, char want[][1100], Err *e) {
    for (int i = 0; i < SHARD_N_META; i++) {
        const char *v = st_meta(&s->f, SHARD_KEYS[i]);
        if (i == 1 || i == SHARD_N_META - 1 || (v && !strcmp(v, want[i]))) continue;
        if (i == 0) return err_set(e, "%s: not a fit shard file (fit --shard I/N writes them)", s->f.path);
        return err_set(e, "%s: %s is '%s', but this fit's is '%s' (every shard and the combining fit need the same "
                          "flags and data)", s->f.path, SHARD_KEYS[i], v ? v : "(missing)", want[i]);
    }
    return 0;
}

/* The tensors: x [L][rows][d], y and wt [L][rows][H], seq [rows], every
 * value in range (labels -1/0/1, weights finite and >= 0, sequences this
 * shard's, in order). */
static int shard_check_rows(ShardIn *s, const Model *m, int n_seqs, Err *e) {
    const StTensor *sq = st_expect(&s->f, "seq", ST_I32, -1, NULL, e);
    if (!sq) return -1;
    if (sq->ndim != 1 || sq->shape[0] < 1 || sq->shape[0] > (1L << 28))
        return err_set(e, "%s: seq must hold 1 to 2^28 rows", s->f.path);
    s->rows = (long)sq->shape[0], s->seq = sq->data;
    int64_t sx[3] = {m->c.n_layers, s->rows, m->c.dim}, sy[3] = {m->c.n_layers, s->rows, m->c.n_heads};
    const StTensor *tx = st_expect(&s->f, "x", ST_F32, 3, sx, e), *ty = tx ? st_expect(&s->f, "y", ST_F32, 3, sy, e) : NULL;
    const StTensor *tw = ty ? st_expect(&s->f, "wt", ST_F32, 3, sy, e) : NULL;
    if (!tw) return -1;
    if (((uintptr_t)sq->data | (uintptr_t)tx->data | (uintptr_t)ty->data | (uintptr_t)tw->data) % 4)
        return err_set(e, "%s: a tensor is not aligned to 4 bytes (not written by fit --shard)", s->f.path);
    s->x = tx->data, s->y = ty->data, s->wt = tw->data;
    for (long r = 0; r < s->rows; r++)
        if (s->seq[r] < 0 || s->seq[r] >= n_seqs || s->seq[r] % s->sh.n != s->sh.i || (r && s->seq[r] < s->seq[r - 1]))
            return err_set(e, "%s: row %ld's sequence %d is not one of shard %ld/%ld's in order", s->f.path, r,
                           s->seq[r], s->sh.i, s->sh.n);
    size_t n = (size_t)m->c.n_layers * s->rows * m->c.n_heads;
    for (size_t i = 0; i < n; i++)
        if ((s->y[i] != -1 && s->y[i] != 0 && s->y[i] != 1) || !(s->wt[i] >= 0 && isfinite(s->wt[i])))
            return err_set(e, "%s: example %zu has label %g and weight %g (labels are -1, 0, 1; weights >= 0)",
                           s->f.path, i, s->y[i], s->wt[i]);
    return 0;
}

/* Open shard file path and check it against want (metadata) and the model. */
static int shard_open(ShardIn *s, const char *path, const Model *m, char want[][1100], int n_seqs, Err *e) {
    memset(s, 0, sizeof *s);
    if (st_open(&s->f, path, e)) return -1;
    Err ignored;
    const char *sh = st_meta(&s->f, "shard");
    if (shard_check_meta(s, want, e)) return -1;
    if (!sh || args_shard("shard", sh, &s->sh, &ignored))
        return err_set(e, "%s: metadata shard is '%s', not I/N", path, sh ? sh : "(missing)");
    return shard_check_rows(s, m, n_seqs, e);
}

/* The data the first file names: what every other file must name too. */
static int shard_first_info(const char *path, FitShardInfo *in, Err *e) {
    StFile f;
    long n_seqs = 0, n_held = 0;
    if (st_open(&f, path, e)) return -1;
    const char *data = st_meta(&f, "data"), *seed = st_meta(&f, "seed"), *format = st_meta(&f, "format");
    int rc = !data || !seed || !format || strcmp(format, SHARD_FORMAT)
           ? err_set(e, "%s: not a fit shard file (fit --shard I/N writes them)", path) : 0;
    if (rc == 0) rc = meta_long(&f, "n_seqs", 2, 1 << 20, &n_seqs, e) || meta_long(&f, "n_held", 1, n_seqs - 1, &n_held, e);
    if (rc == 0) {
        snprintf(in->data, sizeof in->data, "%s", data);
        in->n_seqs = (int)n_seqs, in->n_held = (int)n_held, in->seed = strtoull(seed, NULL, 10);
    }
    st_close(&f);
    return rc ? -1 : 0;
}

/* Copy row src of shard s to row dst of x, every layer. */
static void copy_row(Examples *x, long dst, const ShardIn *s, long src) {
    for (int l = 0; l < x->L; l++) {
        size_t to = (size_t)l * x->cap + dst, from = (size_t)l * s->rows + src;
        memcpy(x->x + to * x->d, s->x + from * x->d, x->d * sizeof(float));
        memcpy(x->y + to * x->H, s->y + from * x->H, x->H * sizeof(float));
        memcpy(x->wt + to * x->H, s->wt + from * x->H, x->H * sizeof(float));
    }
    x->seq[dst] = s->seq[src];
}

/* The shards' rows in sequence order, as the unsharded collect made them. */
static int shards_merge(Examples *x, const Model *m, ShardIn *in, int n, const FitShardInfo *info, const char *label,
                        Err *e) {
    memset(x, 0, sizeof *x);
    x->L = m->c.n_layers, x->H = m->c.n_heads, x->d = m->c.dim;
    for (int i = 0; i < n; i++) x->cap += in[i].rows;
    if (examples_alloc(x, e)) return -1;
    long *at = calloc((size_t)n, sizeof *at);
    ShardIn **of = calloc((size_t)n, sizeof *of); /* the file of each shard index */
    if (!at || !of) return free(at), free(of), err_set(e, "out of memory");
    for (int i = 0; i < n; i++) of[in[i].sh.i] = &in[i];
    for (int k = 0; k < info->n_seqs; k++) {
        ShardIn *s = of[k % n];
        long *c = &at[s - in];
        for (; *c < s->rows && s->seq[*c] == k; (*c)++) {
            if (k < info->n_seqs - info->n_held) x->n_train++;
            copy_row(x, x->rows++, s, *c);
        }
    }
    free(at), free(of);
    if (x->n_train < 1 || x->rows == x->n_train)
        return err_set(e, "%s: no position beyond the window in the %s sequences", label,
                       x->n_train < 1 ? "training" : "held-out");
    return 0;
}

/* Open every file, check it, and place each shard once. */
static int shards_open(ShardIn *in, const char *const *paths, int n, const Model *m, char want[][1100],
                       const FitShardInfo *info, Err *e) {
    unsigned char *seen = calloc((size_t)n, 1);
    if (!seen) return err_set(e, "out of memory");
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        if ((rc = shard_open(&in[i], paths[i], m, want, info->n_seqs, e))) break;
        if (in[i].sh.n != n)
            rc = err_set(e, "%s: shard %ld/%ld, but %d files were given: every shard of N is needed", paths[i],
                         in[i].sh.i, in[i].sh.n, n);
        else if (seen[in[i].sh.i]++)
            rc = err_set(e, "%s: shard %ld/%ld was given twice", paths[i], in[i].sh.i, in[i].sh.n);
    }
    free(seen);
    return rc;
}

int fit_routers_from_shards(const Model *m, const char *const *paths, int n, const FitConfig *c,
                            const char *model_sha256, FitShardInfo *info, FitResult *out, Err *e) {
    memset(out, 0, sizeof *out);
    memset(info, 0, sizeof *info);
    if (n < 1 || n > 4096) return err_set(e, "%d shard files: give 1 to 4096", n);
    if (shard_first_info(paths[0], info, e)) return -1;
    snprintf(info->model_sha256, sizeof info->model_sha256, "%s", model_sha256);
    char want[SHARD_N_META][1100];
    ArgsShard any = {0, 1};
    shard_meta(c, info, &any, want);
    ShardIn *in = calloc((size_t)n, sizeof *in);
    Examples x = {0};
    int rc = in ? shards_open(in, paths, n, m, want, info, e) : err_set(e, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        long t = 0;
        rc = meta_long(&in[i].f, "tokens", 0, 1L << 40, &t, e);
        info->tokens += t;
    }
    /* what a fit on the merged examples names when it fails: the files given, not the data
     * string the shards were cut from (a path on another machine, perhaps) */
    char label[1400];
    if (n == 1) snprintf(label, sizeof label, "%.1100s (a shard of %.200s)", paths[0], info->data);
    else snprintf(label, sizeof label, "%.600s ... %.600s (%d shards of %.150s)", paths[0], paths[n - 1], n, info->data);
    if (rc == 0) rc = shards_merge(&x, m, in, n, info, label, e);
    if (rc == 0) rc = fit_examples(&x, c, label, out, e);
    for (int i = 0; in && i < n; i++) st_close(&in[i].f);
    free(in);
    examples_free(&x);
    out->tokens = info->tokens;
    return rc;
}

void fit_result_free(FitResult *r) { router_free(&r->r); }
