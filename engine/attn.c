/* attn.c — one head at one position: local and far branches, the gate, the oracle and QAdA. */
#include "attn.h"

#include <math.h>
#include <string.h>

#include "attn_kernels.h"
#include "decide.h"
#include "model.h"

void attn_local_set(int t, int window, int sinks, int *n_sinks, int *win_lo) {
    int ns = sinks < t + 1 ? sinks : t + 1;
    int lo = t - window + 1;
    if (lo < ns) lo = ns;
    *n_sinks = ns;
    *win_lo = lo;
}

void attn_bulk_absorb(double *m1, double *m2, const float *k, int hs) {
    for (int a = 0; a < hs; a++) {
        double ka = k[a];
        m1[a] += ka;
        double *row = m2 + (size_t)a * hs;
        for (int b = 0; b < hs; b++) row[b] += ka * k[b];
    }
}

int attn_n_far(int t, int window, int sinks) {
    int ns, lo;
    attn_local_set(t, window, sinks, &ns, &lo);
    return lo - ns;
}

int attn_kv_read(int t, int window, int sinks, int any_global) {
    return any_global ? t + 1 : t + 1 - attn_n_far(t, window, sinks);
}

float attn_qada_logit(double n_far, double mean_s, double var_s, double log_local) {
    if (n_far <= 0) return NAN;
    if (var_s < 0) var_s = 0;
    return (float)(log(n_far) + mean_s + 0.5 * var_s - log_local);
}

float attn_qada_rem_logit(double n_far, double mean_s, double var_s, double log_local) {
    if (n_far <= 0) return NAN;
    double sd = var_s > 0 ? sqrt(var_s) : 0, edge = sqrt(2 * log(n_far));
    if (sd <= edge) return attn_qada_logit(n_far, mean_s, var_s, log_local);
    return (float)(mean_s + sd * edge - log_local);
}

/* Position pos of a cached key or value array. */
static const void *kv_at(const AttnHeadIn *in, const void *base, int pos) {
    return (const char *)base + (size_t)pos * in->stride * model_dtype_size(in->kv_dtype);
}

/* Scores of keys [lo, hi) into s[], returning their max (-inf if empty). */
static float score_range(const AttnHeadIn *in, int lo, int hi, float *s) {
    if (hi <= lo) return -INFINITY;
    float scale = in->scale > 0 ? in->scale : 1.0f / sqrtf((float)in->head_size);
    float m = attn_scores(s + lo, in->q, kv_at(in, in->k, lo), in->kv_dtype, in->stride, in->head_size, hi - lo, scale);
    if (!(in->softcap > 0)) return m;
    m = -INFINITY; /* capping is monotone, but the max is taken again so it is the capped scores' own */
    for (int i = lo; i < hi; i++) {
        s[i] = in->softcap * tanhf(s[i] / in->softcap);
        if (s[i] > m) m = s[i];
    }
    return m;
}

/* Σ exp(s_i - m) over [lo, hi), accumulating exp(s_i - m)·v_i into acc.
 * s itself is left alone: the oracle and QAdA still read it. */
static double sum_range(const AttnHeadIn *in, int lo, int hi, const float *s, float m, float *acc) {
    if (hi <= lo) return 0;
    return attn_softmax_wsum(acc, s + lo, m, kv_at(in, in->v, lo), in->kv_dtype, in->stride, in->head_size, hi - lo);
}

/* Mean and variance of the scores s[lo, hi) (population moments). */
static void score_moments(const float *s, int lo, int hi, double *mean, double *var) {
    double sum = 0, sq = 0;
    int n = hi - lo;
    for (int i = lo; i < hi; i++) { sum += s[i]; sq += (double)s[i] * s[i]; }
    *mean = sum / n;
    *var = sq / n - *mean * *mean;
}

/* QAdA's bulk model from the window's own scores: mean and variance of
 * s over the window are q·μ/√d and qᵀΣq/d for the window keys' Gaussian.
 * Both estimates that read them (qada, qada_rem) come from one pass. */
static void qada_local(const float *s, int lo, int t, double n_far, double log_local, AttnHeadOut *res) {
    double mean, var;
    score_moments(s, lo, t + 1, &mean, &var);
    res->qada_logit = attn_qada_logit(n_far, mean, var, log_local);
    res->qada_rem_logit = attn_qada_rem_logit(n_far, mean, var, log_local);
#ifdef AHASCOPE_CANARY
    res->canary_logit = res->qada_logit; /* the canary build's field (engine/trace.h) */
#endif
}

/* The far scores' mean q·μ/√d and variance qᵀΣq/d from the running sums
 * of the far keys, then both estimates (qada_bulk, qada_rem_bulk). */
static void qada_bulk(const AttnHeadIn *in, double n_far, double log_local, AttnHeadOut *res) {
    int hs = in->head_size;
    double qm = 0, qMq = 0;
    for (int a = 0; a < hs; a++) {
        qm += in->q[a] * in->bulk_m1[a];
        const double *row = in->bulk_m2 + (size_t)a * hs;
        double r = 0;
        for (int b = 0; b < hs; b++) r += row[b] * in->q[b];
        qMq += in->q[a] * r;
    }
    double mu = qm / n_far; /* q·μ */
    double var = (qMq / n_far - mu * mu) / hs, mean = mu / sqrt((double)hs);
    res->qada_bulk_logit = attn_qada_logit(n_far, mean, var, log_local);
    res->qada_rem_bulk_logit = attn_qada_rem_logit(n_far, mean, var, log_local);
}

/* Plain global attention from the scores s[0..t] and their max m: one
 * softmax, exactly as full attention computes it (a key's score does not
 * depend on the range it was computed in). acc is head_size floats. */
static void global_softmax(const AttnHeadIn *in, float m, const float *s, float *acc, float *out) {
    memset(acc, 0, in->head_size * sizeof(float));
    double z = sum_range(in, 0, in->t + 1, s, m, acc);
    for (int i = 0; i < in->head_size; i++) out[i] = (float)(acc[i] / z);
}

/* The far scores' exact mean and spread, which say whether the Gaussian
 * sum model is in its frozen regime (σ > √(2 ln n_far)). */
static void far_regime(const float *s, int ns, int lo, AttnHeadOut *res) {
    double mean, var;
    score_moments(s, ns, lo, &mean, &var);
    res->far_mean = (float)mean;
    res->far_std = (float)sqrt(var > 0 ? var : 0);
}

/* Rank far position i of weight v into the k slots (heaviest first; an
 * equal weight goes after those already there, so the earlier position
 * comes first). */
static void rank_far(int32_t *pos, float *wt, int k, int i, float v) {
    if (pos[k - 1] >= 0 && !(v > wt[k - 1])) return;
    int r = k - 1;
    for (; r > 0 && (pos[r - 1] < 0 || v > wt[r - 1]); r--) pos[r] = pos[r - 1], wt[r] = wt[r - 1];
    pos[r] = i, wt[r] = v;
}

/* The heaviest far positions by their weight in the full softmax (max m,
 * sum z_full), into in->top_pos / in->top_w. */
static void rank_far_weights(const AttnHeadIn *in, const float *s, int ns, int lo, float m, double z_full) {
    for (int i = ns; i < lo; i++)
        rank_far(in->top_pos, in->top_w, in->top_k, i, (float)(exp((double)s[i] - m) / z_full));
}

static int decide(const AttnHeadIn *in, const AttnHeadOut *r) {
    switch (in->rule) {
#define ATTN_DECIDE(ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    PRED_IF(PRED_THETA_##thr, case GATE_##ID: return decide_logit(r->field, in->theta_logit) == 1;)
        PREDICTORS(ATTN_DECIDE)
#undef ATTN_DECIDE
    default: return in->gate ? 1 : 0;
    }
}

/* A head the architecture windows: the window's softmax is the output, and
 * with want_beyond the keys before it are scored as full attention would
 * score them (same scale and soft-cap), for beyond_logit only: ln(their
 * mass / the window's), NAN while there are none. No choice, so no gate. */
static void arch_local_forward(const AttnHeadIn *in, float *out, float *s, float *acc, AttnHeadOut *res) {
    const int hs = in->head_size, t = in->t;
    int ns, lo;
    attn_local_set(t, in->window, 0, &ns, &lo);
    float m_loc = score_range(in, lo, t + 1, s);
    memset(acc, 0, hs * sizeof(float));
    double z_loc = sum_range(in, lo, t + 1, s, m_loc, acc);
    for (int i = 0; i < hs; i++) out[i] = (float)(acc[i] / z_loc);
    res->gate = -1;
    res->keys_read = t + 1 - lo;
    if (!in->want_beyond || lo == 0) return;
    float m_far = score_range(in, 0, lo, s), *acc_far = acc + hs;
    memset(acc_far, 0, hs * sizeof(float));
    double z_far = sum_range(in, 0, lo, s, m_far, acc_far);
    res->beyond_logit = (float)((m_far + log(z_far)) - (m_loc + log(z_loc)));
}

void attn_head_forward(const AttnHeadIn *in, float *out, float *scratch, AttnHeadOut *res) {
    const int hs = in->head_size, t = in->t;
    float *s = scratch, *acc_loc = scratch + t + 1, *acc_far = acc_loc + hs;
    int ns, lo;
    attn_local_set(t, in->window, in->sinks, &ns, &lo);
    const int n_far = lo - ns, n_local = ns + (t - lo + 1);
#define ATTN_CLEAR(name, type, missing, sql, show, title, short_name, doc) res->name = missing;
    TRACE_HEAD_FIELDS(ATTN_CLEAR) /* what is not computed below stays missing */
#undef ATTN_CLEAR
    res->score = in->score;
    res->keys_read = t + 1;
    if (in->top_k > 0)
        for (int r = 0; r < in->top_k; r++) in->top_pos[r] = -1, in->top_w[r] = NAN;
    if (in->arch_local) {
        res->score = NAN; /* no router decides here */
        arch_local_forward(in, out, s, acc_loc, res);
        return;
    }
    res->local_window = in->window;
    if (in->rule == GATE_FIXED && in->gate && !in->want_oracle && !in->want_qada && !in->bulk_m1 && !in->top_k) {
        /* a global head nobody profiles needs no local softmax */
        res->gate = 1;
        global_softmax(in, score_range(in, 0, t + 1, s), s, acc_loc, out);
        return;
    }

    /* local branch: sinks then window, one softmax */
    float m_loc = fmaxf(score_range(in, 0, ns, s), score_range(in, lo, t + 1, s));
    memset(acc_loc, 0, hs * sizeof(float));
    double z_loc = sum_range(in, 0, ns, s, m_loc, acc_loc) + sum_range(in, lo, t + 1, s, m_loc, acc_loc);
    double log_local = m_loc + log(z_loc);
    if (n_far > 0 && (in->want_qada || in->rule == GATE_QADA || in->rule == GATE_QADA_REM))
        qada_local(s, lo, t, n_far, log_local, res);
    if (n_far > 0 && in->bulk_m1) qada_bulk(in, n_far, log_local, res);

    /* every rule but the oracle can decide before any far key is read */
    int oracle = in->want_oracle || in->rule == GATE_ORACLE;
    res->gate = in->rule == GATE_ORACLE ? 0 : decide(in, res);
    if (res->gate && !oracle && !in->top_k && n_far > 0) {
        global_softmax(in, fmaxf(m_loc, score_range(in, ns, lo, s)), s, acc_loc, out);
        return;
    }
    int need_far = n_far > 0 && (oracle || res->gate || in->top_k > 0);
    double a = 1, b = 0, z_far = 0;
    float m_far = -INFINITY;
    if (need_far) {
        m_far = score_range(in, ns, lo, s);
        memset(acc_far, 0, hs * sizeof(float));
        z_far = sum_range(in, ns, lo, s, m_far, acc_far);
        float m = fmaxf(m_loc, m_far);
        a = exp((double)m_loc - m);
        b = exp((double)m_far - m);
    }
    double z_full = a * z_loc + b * z_far;
    if (in->top_k > 0 && need_far) rank_far_weights(in, s, ns, lo, fmaxf(m_loc, m_far), z_full);
    if (oracle) {
        /* ln(far) - ln(local), each from its own max: exact at any ratio */
        res->oracle_logit = n_far > 0 ? (float)((m_far + log(z_far)) - log_local) : NAN;
        if (n_far > 0) far_regime(s, ns, lo, res);
        double diff = 0, norm = 0;
        for (int i = 0; i < hs; i++) {
            double full = (a * acc_loc[i] + (need_far ? b * acc_far[i] : 0)) / z_full;
            double loc = acc_loc[i] / z_loc;
            diff += (full - loc) * (full - loc);
            norm += full * full;
        }
        res->oracle_err = norm > 0 ? (float)sqrt(diff / norm) : 0.0f;
        if (in->rule == GATE_ORACLE) res->gate = decide(in, res);
    }
    if (res->gate && need_far) {
        for (int i = 0; i < hs; i++) out[i] = (float)((a * acc_loc[i] + b * acc_far[i]) / z_full);
        res->keys_read = t + 1;
    } else {
        for (int i = 0; i < hs; i++) out[i] = (float)(acc_loc[i] / z_loc);
        res->keys_read = res->gate ? t + 1 : n_local;
    }
}
