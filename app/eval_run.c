/* eval_run.c — the evaluations of `ahascope eval` (app/eval_run.h): a
 * policy teacher-forced on held-out sequences, every training-free
 * predictor matched to the AHA routers' global share (the matching
 * app/eval_sets.c uses for task items too), or the table of recorded
 * evaluations. */
#include "app/eval_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_table.h"
#include "app/headsets.h"
#include "app/run_info.h"
#include "engine/files.h"
#include "engine/pool.h"

/* Global share of a setting on the data (no recording): what matching bisects. */
/* The executed global share of a on d, or with keys the share of keys
 * read per query head against full attention's (eval's keys/qh). */
static double metric_of(const AppLoaded *L, const EvalData *d, const EvalOpts *x, const AttnConfig *a, int keys,
                        Err *e) {
    EvalSums s = {.share_only = 1};
    if (eval_policy(&L->model, NULL, a, d, (int)x->threads, NULL, NULL, 0, 0, &s, e)) return NAN;
    if (keys) return s.keys_full > 0 ? s.keys_read / s.keys_full : NAN;
    return s.gate_n > 0 ? s.gate_sum / s.gate_n : NAN;
}

static double share_of(const AppLoaded *L, const EvalData *d, const EvalOpts *x, const AttnConfig *a, Err *e) {
    return metric_of(L, d, x, a, 0, e);
}

/* A bisection's outcome: the knob whose share came nearest the target, and
 * the nearest knobs seen on either side (their shares above and at or below
 * the target), which bracket the step the share jumps over when it cannot
 * land within the tolerance. */
typedef struct {
    double k, share, k_above, share_above, k_below, share_below;
} KnobMatch;

/* The knob whose executed global share is closest to target, bisected in
 * [lo, hi] (the share falls as the knob rises) until within `tol`. */
static int match_knob(const AppLoaded *L, const EvalData *d, const EvalOpts *x, AttnConfig a, double target,
                      double lo, double hi, double tol, void (*set)(AttnConfig *, double), int keys, KnobMatch *m,
                      Err *e) {
    *m = (KnobMatch){.k = lo, .share = NAN, .k_above = NAN, .share_above = NAN, .k_below = NAN, .share_below = NAN};
    double best_gap = INFINITY;
    for (int it = 0; it < 40; it++) {
        double k = 0.5 * (lo + hi);
        set(&a, k);
        double g = metric_of(L, d, x, &a, keys, e);
        if (isnan(g)) return -1;
        if (fabs(g - target) < best_gap) best_gap = fabs(g - target), m->k = k, m->share = g;
        if (best_gap < tol) break;
        if (g > target) lo = k, m->k_above = k, m->share_above = g;
        else hi = k, m->k_below = k, m->share_below = g;
    }
    return 0;
}

static void set_theta(AttnConfig *a, double k) { a->theta_logit = k; }

static void set_tau_logit(AttnConfig *a, double k) { a->tau = (float)(1.0 / (1.0 + exp(-k))); }

/* θ, as log-odds, whose executed global share is closest to target. The
 * estimates are log-odds spread over hundreds of nats (qada_bulk past 50),
 * which no probability θ could reach, so bisect on the log-odds in
 * [-100, 300]; stop within a quarter of a point. */
static double match_theta(const AppLoaded *L, const EvalData *d, const EvalOpts *x, AttnConfig a, double target, Err *e) {
    KnobMatch m;
    return match_knob(L, d, x, a, target, -100, 300, 0.0025, set_theta, 0, &m, e) ? NAN : m.k;
}

/* τ as a float32, as the row runs it, from a bisected log-odds. */
static double tau_at(double k) {
    AttnConfig a;
    set_tau_logit(&a, k);
    return a.tau;
}

/* --share: the aha τ giving that global share on d, bisected on its
 * log-odds (a float τ resolves nothing past ±30); within 0.05 points, as
 * routers are compared at one budget on a few thousand decisions. When no
 * τ lands that near (the share jumps over the target at one τ: decisions
 * are whole cells, and routers can tie), the nearest share reached is
 * used, and stderr says so with the step's two sides. */
int eval_match_tau(const AppLoaded *L, const EvalData *d, EvalOpts *x, Err *e) {
    KnobMatch m;
    const double tol = 0.0005;
    if (match_knob(L, d, x, x->o.attn, x->share, -30, 30, tol, set_tau_logit, x->by_keys, &m, e)) return -1;
    set_tau_logit(&x->o.attn, m.k);
    if (fabs(m.share - x->share) < tol) return 0;
    fprintf(stderr, "note: --%s %.4f%%: no tau lands within %.2f points; the nearest share reached is %.4f%% (tau "
            "%.9g)", x->by_keys ? "keys" : "share", 100 * x->share, 100 * tol, 100 * m.share, x->o.attn.tau);
    if (isfinite(m.share_above) && isfinite(m.share_below))
        fprintf(stderr, ": the share steps from %.4f%% at tau %.9g to %.4f%% at tau %.9g", 100 * m.share_above,
                tau_at(m.k_above), 100 * m.share_below, tau_at(m.k_below));
    fputc('\n', stderr);
    return 0;
}

/* The K heads with the highest oracle rate in counts, K = target × heads. */
static uint8_t *static_heads_for(const long *counts, int cells, double target, int *k_out) {
    uint8_t *map = calloc(cells, 1);
    int k = (int)floor(target * cells + 0.5);
    for (int n = 0; map && n < k; n++) {
        int best = -1;
        double br = -1;
        for (int i = 0; i < cells; i++) {
            double r = counts[2 * i + 1] ? (double)counts[2 * i] / counts[2 * i + 1] : 0;
            if (!map[i] && r > br) br = r, best = i;
        }
        if (best >= 0) map[best] = 1;
    }
    *k_out = k;
    return map;
}

static int calibrate_counts(const AppLoaded *L, const EvalData *cal, const EvalOpts *x, long *counts, Err *e);

/* The static row's heads at the matched share g: the K = g x heads that
 * --static-heads's calibration ranks highest when it was given (*on its
 * spec), else the K of highest oracle rate over an AHA pass on cal. */
static int static_heads_at(const AppLoaded *L, const EvalData *cal, const EvalOpts *x, double g, uint8_t **heads,
                           int *k, const char **on, Err *e) {
    const Config *c = &L->model.c;
    int cells = c->n_layers * c->n_heads;
    if (x->static_rank) {
        *k = (int)floor(g * cells + 0.5), *on = x->static_rank;
        HeadPick pick = {.budget = {.value = *k}};
        AppHeadShape shape = {c->n_layers, c->n_heads, c->n_kv_heads, c->seq_len};
        return app_headset_load(x->static_rank, &pick, &shape, heads, e);
    }
    long *counts = calloc((size_t)cells * 2, sizeof *counts);
    if (!counts) return err_set(e, "out of memory");
    int rc = calibrate_counts(L, cal, x, counts, e);
    if (rc == 0 && !(*heads = static_heads_for(counts, cells, g, k))) rc = err_set(e, "out of memory");
    *on = cal->desc;
    free(counts);
    return rc;
}

/* Per-head oracle counts of an AHA pass over the calibration data cal. */
static int calibrate_counts(const AppLoaded *L, const EvalData *cal, const EvalOpts *x, long *counts, Err *e) {
    EvalSums s = {.head_counts = counts, .ref_theta_logit = x->o.attn.theta_logit, .ref_set = 1};
    AttnConfig a = x->o.attn;
    a.policy = POLICY_AHA;
    return eval_policy(&L->model, NULL, &a, cal, (int)x->threads, NULL, NULL, 0, 0, &s, e);
}

int eval_matched_choose(const AppLoaded *L, const EvalData *c, const EvalData *cal, const EvalOpts *x, EvalRow *rows,
                        uint8_t **heads, double *share, int with_local, Err *e) {
    int cells = L->model.c.n_layers * L->model.c.n_heads, n = 0, k = 0;
    /* per-head windows (--static-heads moa: or windows:) are a row of their own, not every row's */
    AttnConfig base = x->o.attn;
    base.head_span = NULL, base.static_heads = NULL;
    EvalRow *r = &rows[n++];
    snprintf(r->name, sizeof r->name, "aha");
    snprintf(r->knob, sizeof r->knob, "tau=%.3g", x->o.attn.tau);
    if (x->o.attn.n_windows) eval_windows_knob(&x->o.attn, r->knob, sizeof r->knob);
    r->a = base, r->a.policy = POLICY_AHA;
    double g = *share = share_of(L, c, x, &r->a, e);
    if (isnan(g)) return -1;
    for (int q = 0; q < DECIDE_COUNT; q++) { /* the θ predictors in engine/decide.h's order: the oracle last */
        Policy thr;
        Err not_policy;
        if (decide_threshold((DecidePred)q) != PRED_THR_THETA ||
            aha_policy_parse(decide_name((DecidePred)q), &thr, &not_policy))
            continue;
        r = &rows[n++];
        r->a = base, r->a.policy = thr;
        double th = match_theta(L, c, x, r->a, g, e);
        if (isnan(th)) return -1;
        r->a.theta_logit = th;
        snprintf(r->name, sizeof r->name, "%s", aha_policy_name(thr));
        eval_theta_knob(th, r->knob, sizeof r->knob);
    }
    r = &rows[n++];
    r->a = base, r->a.policy = POLICY_RANDOM, r->a.p = (float)g;
    /* p is the expected share; positions before the window is full count
     * too, so correct p by the share it actually gave, a few times */
    for (int it = 0; it < 4; it++) {
        double got = share_of(L, c, x, &r->a, e);
        if (isnan(got)) return -1;
        if (fabs(got - g) < 0.0025 || got <= 0) break;
        r->a.p = (float)fmin(1.0, r->a.p * g / got);
    }
    snprintf(r->name, sizeof r->name, "random");
    snprintf(r->knob, sizeof r->knob, "p=%.4f", r->a.p);
    r = &rows[n++];
    if (static_heads_at(L, cal, x, g, heads, &k, &r->calibrated_on, e)) return -1;
    r->a = base, r->a.policy = POLICY_STATIC, r->a.static_heads = *heads;
    snprintf(r->name, sizeof r->name, "static");
    snprintf(r->knob, sizeof r->knob, "%d/%d heads", k, cells);
    if (x->o.attn.head_span) { /* the heads' own windows: set beside AHA by the keys they read, not a share */
        HeadsForm f = args_heads_form(x->o.static_heads, NULL);
        r = &rows[n++];
        r->a = base, r->a.policy = POLICY_LOCAL, r->a.head_span = x->o.attn.head_span;
        snprintf(r->name, sizeof r->name, "%s", f == HEADS_MOA ? "moa" : "windows");
        snprintf(r->knob, sizeof r->knob, "own windows");
    }
    if (with_local) { /* the streaming arm: the window alone, every budget's floor on the curves */
        r = &rows[n++];
        r->a = base, r->a.policy = POLICY_LOCAL;
        snprintf(r->name, sizeof r->name, "local");
        snprintf(r->knob, sizeof r->knob, "w=%d", r->a.window);
    }
    return n;
}

int eval_matched_rows(const AppLoaded *L, const EvalData *d, const EvalOpts *x, Store *st, StoreRunInfo *info,
                      EvalRow *rows, int n, double share, int answers, Err *e) {
    char matched[64];
    snprintf(matched, sizeof matched, "aha %.4f", share);
    for (int i = 0; i < n; i++)
        if (eval_row(L, d, x, st, info, &rows[i], i && rows[i].a.policy != POLICY_LOCAL ? matched : NULL, e)) return -1;
    eval_rows_intervals(rows, n, d->n, EVAL_CI_KL | (answers ? EVAL_CI_ANSWER : EVAL_CI_NLL));
    return 0;
}

/* --match-budget aha: AHA first, then every predictor at its global share,
 * chosen on d itself; the static heads are ranked on cal, not on d. */
static int run_matched(const AppLoaded *L, const EvalData *d, const EvalData *cal, EvalOpts *x, Store *st,
                       StoreRunInfo *info, Err *e) {
    int rc = -1, n = 0;
    uint8_t *heads = NULL;
    double g = NAN;
    EvalRow *rows = calloc(EVAL_MATCHED_MAX, sizeof *rows);
    EvalSeq *seqs = calloc((size_t)EVAL_MATCHED_MAX * d->n, sizeof *seqs); /* each row's, for intervals */
    if (!rows || !seqs) { err_set(e, "out of memory"); goto out; }
    for (int i = 0; i < EVAL_MATCHED_MAX; i++) rows[i].seqs = seqs + (size_t)i * d->n;
    if ((n = eval_matched_choose(L, d, cal, x, rows, &heads, &g, 0, e)) < 0 ||
        eval_matched_rows(L, d, x, st, info, rows, n, g, 0, e))
        goto out;
    eval_print_rows(rows, n, x->json, 1);
    if (!x->json) printf("oracle labels: out_mass > theta = %.3g for every row\n", decide_prob(x->o.attn.theta_logit));
    rc = eval_plot_rows(rows, n, x, "predictors at the AHA routers' global share", e);
out:
    free(heads), free(rows), free(seqs);
    return rc;
}

int eval_run_policy(EvalOpts *x, Err *e) {
    AppLoaded L;
    EvalData d = {0}, cal = {0};
    Store *st = NULL;
    StoreRunInfo info;
    int rc = -1;
    if (app_load(&x->o, &L, 1, e)) goto out;
    if (!isnan(x->share) && x->o.attn.policy != POLICY_AHA) {
        err_usage(e, "%s chooses the aha routers' tau: it needs the aha policy (--routers FILE)",
                         x->by_keys ? "--keys" : "--share");
        goto out;
    }
    int len = (int)(x->seq_len < L.model.c.seq_len ? x->seq_len : L.model.c.seq_len);
    if (x->seq_len > L.model.c.seq_len) {
        err_set(e, "--seq-len %ld exceeds the model's context (%d)", x->seq_len, L.model.c.seq_len);
        goto out;
    }
    if (x->o.attn.window > L.model.c.seq_len) {
        err_set(e, "window %d is larger than the context (%d)", x->o.attn.window, L.model.c.seq_len);
        goto out;
    }
    if ((x->svg && file_check_output(x->svg, NULL, e)) ||
        (x->db && !(st = store_open(x->db, STORE_WRITE, STORE_BUSY_MS, e))))
        goto out; /* before the data is made: that can take minutes */
    if (eval_opts_data(x, &L, len, &d, e)) goto out;
    x->o.prompt = "";
    if (app_run_info(&x->o, &L, &info, e)) goto out;
    if (x->match && !x->static_rank && /* a given ranking needs no calibration data of eval's own */
        eval_data_calibration(&cal, &d, &L.model, &L.tok, x->data, (int)x->self_n, len, x->o.seed, e))
        goto out;
    if (!isnan(x->share) && eval_match_tau(&L, &d, x, e)) goto out;
    if (x->match) rc = run_matched(&L, &d, &cal, x, st, &info, e);
    else {
        EvalRow row = {.a = x->o.attn};
        snprintf(row.name, sizeof row.name, "%s", aha_policy_name(x->o.attn.policy));
        if (x->o.attn.head_span) snprintf(row.knob, sizeof row.knob, "own windows");
        else if (x->o.attn.n_windows && x->o.attn.policy == POLICY_AHA) eval_windows_knob(&x->o.attn, row.knob, sizeof row.knob);
        else if (isnan(x->share)) snprintf(row.knob, sizeof row.knob, "w=%d", x->o.attn.window);
        else snprintf(row.knob, sizeof row.knob, "w=%d tau=%.4g", x->o.attn.window, x->o.attn.tau);
        if (!(row.seqs = calloc((size_t)d.n, sizeof *row.seqs))) { err_set(e, "out of memory"); goto out; }
        rc = eval_row(&L, &d, x, st, &info, &row, NULL, e);
        if (rc == 0) eval_rows_intervals(&row, 1, d.n, EVAL_CI_NLL); /* not KL's: --from-db could not recount it */
        if (rc == 0) eval_print_rows(&row, 1, x->json, 0);
        if (rc == 0) rc = eval_plot_rows(&row, 1, x, "evaluation", e);
        free(row.seqs);
    }
out:
    if (store_close(st, rc ? NULL : e)) rc = -1;
    eval_data_free(&d);
    eval_data_free(&cal);
    app_unload(&L);
    return rc;
}

/* --from-db: the table of every evaluation in the file, shards combined. */
int eval_run_recorded(EvalOpts *x, Err *e) {
    EvalRow *rows = NULL;
    int n = eval_opts_rows_from_db(x, NULL, &rows, e), rc = n < 0 ? -1 : 0;
    if (rc == 0) eval_print_rows(rows, n, x->json, 0);
    if (rc == 0) rc = eval_plot_rows(rows, n, x, "evaluation", e);
    free(rows);
    return rc;
}

