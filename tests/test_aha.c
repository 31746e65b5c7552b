/* test_aha.c — AHA attention's branches, the oracle and QAdA against brute force.
 *
 * AHA attention: the local/global branches, the oracle and QAdA, checked
 * against brute force on synthetic heads and on stories260K. */
#include <stdlib.h>
#include <string.h>

#include "engine/attn.h"
#include "engine/decide.h"
#include "engine/forward.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "tests/test.h"
#include "tests/stories.h"

static uint64_t rng = 88172645463325252ull;
static float frand(void) { /* uniform [-1, 1) */
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 40) / 8388608.0 - 1.0);
}

typedef struct {
    int hs, n, stride;
    float *q, *k, *v, *scratch;
} Head;

static Head head_new(int hs, int n) {
    Head h = {hs, n, hs, malloc(hs * 4), malloc((size_t)n * hs * 4), malloc((size_t)n * hs * 4), malloc((2 * n + 3 * hs) * 4)};
    for (int i = 0; i < hs; i++) h.q[i] = 2 * frand();
    for (int i = 0; i < n * hs; i++) { h.k[i] = frand(); h.v[i] = frand(); }
    return h;
}

static void head_free(Head *h) { free(h->q); free(h->k); free(h->v); free(h->scratch); }

static AttnHeadIn head_in(const Head *h, int t, int w, int sinks, int gate) {
    return (AttnHeadIn){.q = h->q, .k = h->k, .v = h->v, .stride = h->stride, .head_size = h->hs, .t = t,
                        .window = w, .sinks = sinks, .rule = GATE_FIXED, .gate = gate, .theta_logit = decide_theta_logit(0.1)};
}

TEST(attn_window_one_returns_current_value_exactly) {
    Head h = head_new(8, 20);
    float out[8];
    AttnHeadOut r;
    AttnHeadIn in = head_in(&h, 13, 1, 0, 0);
    attn_head_forward(&in, out, h.scratch, &r);
    CHECK(memcmp(out, h.v + 13 * 8, sizeof out) == 0);
    CHECK_INT(r.keys_read, 1);
    head_free(&h);
}

/* Brute force in double: full softmax over 0..t, local over the local set. */
static void brute(const Head *h, int t, int w, int S, double *mass, double *err, double *ofull) {
    double s[4096], m = -1e300, z = 0, zl = 0, olocal[64] = {0};
    int lo = t - w + 1 < S ? S : t - w + 1;
    for (int i = 0; i <= t; i++) {
        double d = 0;
        for (int j = 0; j < h->hs; j++) d += (double)h->q[j] * h->k[i * h->hs + j];
        s[i] = d / sqrt((double)h->hs);
        if (s[i] > m) m = s[i];
    }
    double far = 0;
    for (int j = 0; j < h->hs; j++) ofull[j] = 0;
    for (int i = 0; i <= t; i++) {
        double e = exp(s[i] - m);
        int local = i < S || i >= lo;
        z += e;
        if (local) zl += e; else far += e;
        for (int j = 0; j < h->hs; j++) {
            ofull[j] += e * h->v[i * h->hs + j];
            if (local) olocal[j] += e * h->v[i * h->hs + j];
        }
    }
    double dn = 0, nn = 0;
    for (int j = 0; j < h->hs; j++) {
        ofull[j] /= z;
        olocal[j] /= zl;
        dn += (ofull[j] - olocal[j]) * (ofull[j] - olocal[j]);
        nn += ofull[j] * ofull[j];
    }
    *mass = far / z;
    *err = sqrt(dn / nn);
}

TEST(attn_oracle_matches_brute_force) {
    Head h = head_new(16, 300);
    int cases[][3] = {{299, 32, 0}, {299, 32, 4}, {100, 7, 2}, {50, 51, 0}, {10, 3, 16}, {0, 1, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int t = cases[c][0], w = cases[c][1], S = cases[c][2];
        double mass, err, ofull[16];
        brute(&h, t, w, S, &mass, &err, ofull);
        float out[16];
        AttnHeadOut r;
        AttnHeadIn in = head_in(&h, t, w, S, 1);
        in.want_oracle = 1;
        attn_head_forward(&in, out, h.scratch, &r);
        int ns = S < t + 1 ? S : t + 1, lo = t - w + 1 < ns ? ns : t - w + 1;
        if (lo > ns) CHECK_NEAR(decide_prob(r.oracle_logit), mass, 1e-6);
        else CHECK(isnan(r.oracle_logit)); /* no far keys: nothing to decide, no mass to estimate */
        CHECK_NEAR(r.oracle_err, err, 1e-5);
        for (int j = 0; j < 16; j++) CHECK_NEAR(out[j], ofull[j], 1e-6);
        CHECK_INT(r.keys_read, t + 1);
        in.gate = 0;
        attn_head_forward(&in, out, h.scratch, &r);
        CHECK_INT(r.keys_read, ns + t - lo + 1); /* the analytic size of the local set */
    }
    head_free(&h);
}

TEST(attn_poisoned_far_keys_do_not_change_local_or_qada) {
    Head h = head_new(16, 200);
    int t = 199, w = 20, S = 3;
    float out1[16], out2[16];
    AttnHeadOut r1, r2;
    AttnHeadIn in = head_in(&h, t, w, S, 0);
    in.want_qada = 1;
    attn_head_forward(&in, out1, h.scratch, &r1);
    for (int i = S; i < t - w + 1; i++)
        for (int j = 0; j < 16; j++) { h.k[i * 16 + j] = NAN; h.v[i * 16 + j] = NAN; }
    attn_head_forward(&in, out2, h.scratch, &r2);
    CHECK(memcmp(out1, out2, sizeof out1) == 0);
    CHECK(isfinite(r2.qada_logit) && r2.qada_logit == r1.qada_logit);
    CHECK_INT(r2.keys_read, S + w);
    head_free(&h);
}

TEST(attn_qada_bulk_estimate_on_gaussian_keys) {
    int hs = 16, n = 6000, w = 64;
    Head h = head_new(hs, n);
    for (int i = 0; i < n * hs; i++) {  /* Gaussian keys via Box–Muller, mean 0.3, sd 0.5 */
        double u1 = (frand() + 1.0) / 2 + 1e-12, u2 = (frand() + 1.0) / 2;
        h.k[i] = (float)(0.3 + 0.5 * sqrt(-2 * log(u1)) * cos(6.283185307 * u2));
    }
    double m1[16] = {0}, *m2 = calloc(hs * hs, sizeof(double));
    int t = n - 1, lo = t - w + 1;
    for (int i = 0; i < lo; i++) attn_bulk_absorb(m1, m2, h.k + i * hs, hs);
    float out[16];
    AttnHeadOut r;
    AttnHeadIn in = head_in(&h, t, w, 0, 0);
    in.want_oracle = 1;
    in.want_qada = 1;
    in.bulk_m1 = m1;
    in.bulk_m2 = m2;
    attn_head_forward(&in, out, h.scratch, &r);
    /* far/local exp-sum ratio: estimate vs exact */
    double exact = exp(r.oracle_logit), est = exp(r.qada_bulk_logit);
    CHECK_MSG(fabs(est / exact - 1) < 0.05, "bulk exp-sum estimate off by %.1f%%", 100 * (est / exact - 1));
    CHECK(isfinite(r.qada_logit));
    free(m2);
    head_free(&h);
}

static Model load_model(void) {
    Model m;
    Err e;
    if (test_load_stories(&m, NULL, &e) != 0) test_fail(__FILE__, __LINE__, "%s", e.msg);
    return m;
}

static const int IDS[] = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267,
                          337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394, 261, 370, 432};
#define N_IDS (int)(sizeof IDS / sizeof IDS[0])

TEST(aha_local_with_window_over_context_equals_full) {
    SKIP_UNLESS_SHARED();
    Model m = load_model();
    RunState a, b;
    Err e;
    fwd_init(&a, &m.c, 8, 2, &e);
    fwd_init(&b, &m.c, 8, 2, &e);
    AttnConfig full = aha_defaults(), local = aha_defaults();
    local.policy = POLICY_LOCAL;
    local.window = N_IDS;
    float worst = 0;
    for (int t = 0; t < N_IDS; t++) {
        fwd_forward(&m, &a, &full, &IDS[t], 1, t, NULL, NULL);
        fwd_forward(&m, &b, &local, &IDS[t], 1, t, NULL, NULL);
        for (int i = 0; i < m.c.vocab_size; i++) worst = fmaxf(worst, fabsf(a.logits[i] - b.logits[i]));
    }
    CHECK_MSG(worst <= 1e-6f, "local (w >= t+1) differs from full by %g", worst);
    fwd_free(&a); fwd_free(&b);
    model_free(&m);
}

TEST(aha_poisoned_cache_local_run_is_unchanged) {
    SKIP_UNLESS_SHARED();
    Model m = load_model();
    RunState s;
    Err e;
    fwd_init(&s, &m.c, 8, 2, &e);
    AttnConfig a = aha_defaults();
    a.policy = POLICY_LOCAL;
    a.window = 6;
    a.sinks = 2;
    StepTrace *tr = trace_new(m.c.n_layers, m.c.n_heads);
    for (int t = 0; t < N_IDS - 1; t++) fwd_forward(&m, &s, &a, &IDS[t], 1, t, NULL, NULL);
    int t = N_IDS - 1;
    float clean[512];
    fwd_forward(&m, &s, &a, &IDS[t], 1, t, NULL, &tr);
    memcpy(clean, s.logits, sizeof clean);
    float nans[64];
    for (int j = 0; j < 64; j++) nans[j] = NAN;
    CHECK(m.c.head_size <= 64);
    for (int l = 0; l < m.c.n_layers; l++)
        for (int h = 0; h < m.c.n_kv_heads; h++)
            for (int i = a.sinks; i < t - a.window + 1; i++) fwd_kv_set(&s, 0, l, h, i, nans), fwd_kv_set(&s, 1, l, h, i, nans);
    fwd_forward(&m, &s, &a, &IDS[t], 1, t, NULL, &tr);
    CHECK(memcmp(clean, s.logits, sizeof clean) == 0);
    for (int i = 0; i < trace_cells(tr); i++) CHECK_INT(tr->keys_read[i], a.sinks + a.window);
    trace_free(tr);
    fwd_free(&s);
    model_free(&m);
}

TEST(aha_prefill_and_decode_agree) {
    SKIP_UNLESS_SHARED();
    Model m = load_model();
    RunState a, b;
    Err e;
    Routers r;
    CHECK(router_random(&r, m.c.n_layers, m.c.n_heads, m.c.dim, 5, &e) == 0);
    fwd_init(&a, &m.c, 64, 2, &e);
    fwd_init(&b, &m.c, 64, 2, &e);
    AttnConfig c = aha_defaults();
    c.policy = POLICY_AHA;
    c.routers = r.w;
    c.window = 8;
    c.sinks = 1;
    c.profile = 1;
    StepTrace *pre[N_IDS], *dec = trace_new(m.c.n_layers, m.c.n_heads);
    for (int i = 0; i < N_IDS; i++) pre[i] = trace_new(m.c.n_layers, m.c.n_heads);
    fwd_forward(&m, &a, &c, IDS, N_IDS, 0, NULL, pre);
    int near_tau = 0, gate_diff = 0;
    float worst = 0;
    for (int t = 0; t < N_IDS; t++) {
        fwd_forward(&m, &b, &c, &IDS[t], 1, t, NULL, &dec);
        for (int i = 0; i < trace_cells(dec); i++) {
            if (fabsf(dec->score[i] - c.tau) < 1e-5f) { near_tau++; continue; }
            gate_diff += dec->gate[i] != pre[t]->gate[i];
            /* masses compared as probabilities, as the tolerance below was set for */
            float d[] = {dec->score[i] - pre[t]->score[i],
                         (float)(decide_prob(dec->oracle_logit[i]) - decide_prob(pre[t]->oracle_logit[i])),
                         dec->oracle_err[i] - pre[t]->oracle_err[i],
                         (float)(decide_prob(dec->qada_logit[i]) - decide_prob(pre[t]->qada_logit[i])),
                         (float)(decide_prob(dec->qada_bulk_logit[i]) - decide_prob(pre[t]->qada_bulk_logit[i]))};
            for (int k = 0; k < 5; k++) worst = fmaxf(worst, isnan(d[k]) ? 0 : fabsf(d[k]));
            CHECK_INT(dec->keys_read[i], pre[t]->keys_read[i]);
        }
    }
    CHECK_INT(gate_diff, 0);
    CHECK_MSG(worst <= 1e-4f, "prefill and decode traces differ by %g", worst);
    for (int i = 0; i < N_IDS; i++) trace_free(pre[i]);
    trace_free(dec);
    router_free(&r);
    fwd_free(&a); fwd_free(&b);
    model_free(&m);
}

TEST(aha_bulk_moments_match_recomputation_after_500_steps) {
    Config c = {.dim = 32, .hidden_dim = 48, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 300, .seq_len = 520};
    Model m;
    RunState s;
    Err e;
    CHECK(model_random(&m, &c, 3, &e) == 0);
    fwd_init(&s, &m.c, 1, 1, &e);
    AttnConfig a = aha_defaults();
    a.profile = 1;
    a.window = 16;
    a.sinks = 2;
    for (int t = 0; t < 500; t++) {
        int tok = (t * 37) % 300;
        fwd_forward(&m, &s, &a, &tok, 1, t, NULL, NULL);
    }
    int hs = m.c.head_size, t = 499, far_hi = t - a.window + 1;
    double worst = 0;
    for (int l = 0; l < c.n_layers; l++)
        for (int kvh = 0; kvh < c.n_kv_heads; kvh++) {
            size_t idx = (size_t)l * c.n_kv_heads + kvh;
            double m1[8] = {0}, m2[64] = {0};
            float key[8];
            for (int i = a.sinks; i < far_hi; i++) {
                fwd_kv_get(&s, 0, l, kvh, i, key);
                attn_bulk_absorb(m1, m2, key, hs);
            }
            CHECK_INT(s.bulk_n[idx], far_hi - a.sinks);
            for (int j = 0; j < hs; j++) worst = fmax(worst, fabs(s.bulk_m1[idx * hs + j] - m1[j]) / (fabs(m1[j]) + 1e-3));
            for (int j = 0; j < hs * hs; j++) worst = fmax(worst, fabs(s.bulk_m2[idx * hs * hs + j] - m2[j]) / (fabs(m2[j]) + 1e-3));
        }
    CHECK_MSG(worst <= 1e-4, "running moments differ from recomputed ones by %g (relative)", worst);
    fwd_free(&s);
    model_free(&m);
}

TEST(router_file_round_trip_and_malformed) {
    Routers r, back;
    Err e;
    CHECK(router_random(&r, 3, 4, 16, 9, &e) == 0);
    const char *keys[] = {"window", "tau", "lambda", "trained_on"}, *vals[] = {"12", "0.5", "0.0003", "test"};
    CHECK(router_save(&r, test_tmp("r.safetensors"), keys, vals, 4, &e) == 0);
    CHECK(router_load(&back, test_tmp("r.safetensors"), 3, 4, 16, &e) == 0);
    CHECK(memcmp(r.w, back.w, 3 * 4 * 16 * sizeof(float)) == 0);
    CHECK_INT(back.window, 12);
    CHECK_NEAR(back.tau, 0.5, 0);
    router_free(&back);
    /* wrong shape for the model, a missing layer, bad metadata */
    CHECK(router_load(&back, test_tmp("r.safetensors"), 3, 8, 16, &e) != 0 && strstr(e.msg, "router.weight"));
    CHECK(router_load(&back, test_tmp("r.safetensors"), 4, 4, 16, &e) != 0 && strstr(e.msg, "model.layers.3"));
    const char *badv[] = {"-3"};
    CHECK(router_save(&r, test_tmp("badwin.safetensors"), keys, badv, 1, &e) == 0);
    CHECK(router_load(&back, test_tmp("badwin.safetensors"), 3, 4, 16, &e) != 0 && strstr(e.msg, "window"));
    long n;
    char *buf = test_read_file(test_tmp("r.safetensors"), &n);
    test_write_file(test_tmp("trunc.safetensors"), buf, n - 10);
    CHECK(router_load(&back, test_tmp("trunc.safetensors"), 3, 4, 16, &e) != 0 && strstr(e.msg, "trunc.safetensors"));
    test_write_file(test_tmp("notjson.safetensors"), "\x08\0\0\0\0\0\0\0not json", 16);
    CHECK(router_load(&back, test_tmp("notjson.safetensors"), 3, 4, 16, &e) != 0);
    uint64_t big = 1 << 20;
    memcpy(buf, &big, 8);
    test_write_file(test_tmp("longhdr.safetensors"), buf, n);
    CHECK(router_load(&back, test_tmp("longhdr.safetensors"), 3, 4, 16, &e) != 0);
    free(buf);
    /* F16 instead of F32 */
    StWriter w;
    st_writer_init(&w);
    int64_t shape[2] = {4, 16};
    uint16_t half[64] = {0};
    for (int l = 0; l < 3; l++) {
        char name[96];
        snprintf(name, sizeof name, "model.layers.%d.self_attn.router.weight", l);
        st_writer_add(&w, name, ST_F16, 2, shape, half, &e);
    }
    CHECK(st_write(&w, test_tmp("f16.safetensors"), &e) == 0);
    st_writer_free(&w);
    CHECK(router_load(&back, test_tmp("f16.safetensors"), 3, 4, 16, &e) != 0 && strstr(e.msg, "F16"));
    router_free(&r);
}

/* GQA: stories260K has 8 query heads over 4 KV heads. With query head 0
 * global and head 1 (same KV head) local, the KV head's far keys are read
 * once: per KV head the traffic is the full context, per query head only
 * head 0 reads far keys. Positions inside the window decide nothing. */
TEST(aha_gqa_kv_reads_count_far_keys_once_per_kv_head) {
    SKIP_UNLESS_SHARED();
    Model m = load_model();
    CHECK_INT(m.c.n_heads / m.c.n_kv_heads, 2);
    RunState s;
    Err e;
    fwd_init(&s, &m.c, 8, 2, &e);
    uint8_t *heads = calloc((size_t)m.c.n_layers * m.c.n_heads, 1);
    heads[0] = 1; /* layer 0, head 0: global; its KV-group partner head 1 local; all else local */
    AttnConfig a = aha_defaults();
    a.policy = POLICY_STATIC, a.static_heads = heads, a.window = 4, a.sinks = 1;
    StepTrace *tr[N_IDS];
    for (int i = 0; i < N_IDS; i++) tr[i] = trace_new(m.c.n_layers, m.c.n_heads);
    fwd_forward(&m, &s, &a, IDS, N_IDS, 0, NULL, tr);
    int H = m.c.n_heads, KV = m.c.n_kv_heads, L = m.c.n_layers, checked = 0;
    for (int t = 0; t < N_IDS; t++) {
        StepTrace *x = tr[t];
        int n_far = attn_n_far(t, a.window, a.sinks), n_local = t + 1 - n_far;
        CHECK_INT(x->n_far, n_far);
        CHECK_INT(x->n_kv_heads, KV);
        CHECK_INT(x->keys_read[0], t + 1);   /* query head 0: all keys */
        CHECK_INT(x->keys_read[1], n_local); /* its partner: the local set */
        CHECK_INT(x->kv_read[0], t + 1);     /* their shared KV head: far keys once */
        CHECK_INT(x->kv_read[1], n_local);   /* KV head 1 (query heads 2, 3): local */
        long kv_sum = 0, q_sum = 0;
        for (int c = 0; c < L * H; c++) q_sum += x->keys_read[c];
        CHECK_INT(trace_kv_read_total(x), (long)(t + 1) + (long)(L * KV - 1) * n_local);
        for (int l = 0; l < L; l++)
            for (int k = 0; k < KV; k++) kv_sum += x->kv_read[l * H + k];
        CHECK_INT(kv_sum, trace_kv_read_total(x));
        CHECK_INT(q_sum, (long)(t + 1) + (long)(L * H - 1) * n_local);
        CHECK_INT(trace_kv_full(x), (long)L * KV * (t + 1));
        /* the executed decision exists only where there were far keys */
        CHECK_INT(decide_cell(x, 0, DECIDE_EXECUTED, 0.5f, 0), n_far > 0 ? 1 : -1);
        CHECK_INT(decide_cell(x, 1, DECIDE_EXECUTED, 0.5f, 0), n_far > 0 ? 0 : -1);
        checked += n_far > 0;
    }
    CHECK(checked > 0 && checked < N_IDS); /* both kinds of position seen */
    for (int i = 0; i < N_IDS; i++) trace_free(tr[i]);
    free(heads);
    fwd_free(&s);
    model_free(&m);
}

/* This project's REM-corrected estimate: the log-normal sum while the far
 * scores' σ ≤ √(2 ln n), μ + σ√(2 ln n) above, the two equal at the
 * boundary; always at or below the plain QAdA estimate. */
TEST(attn_qada_rem_formula_both_branches_and_continuous) {
    const double n = 1000, mu = -0.7, local = 1.25, edge = sqrt(2 * log(n));
    /* below the boundary: the same as QAdA */
    CHECK_NEAR(attn_qada_rem_logit(n, mu, 1.5 * 1.5, local), attn_qada_logit(n, mu, 1.5 * 1.5, local), 1e-6);
    CHECK_NEAR(attn_qada_rem_logit(n, mu, 1.5 * 1.5, local), log(n) + mu + 0.5 * 2.25 - local, 1e-5);
    /* above: the frozen phase, linear in σ, far below QAdA's σ²/2 */
    CHECK_NEAR(attn_qada_rem_logit(n, mu, 6.0 * 6.0, local), mu + 6.0 * edge - local, 1e-5);
    CHECK(attn_qada_rem_logit(n, mu, 36, local) < attn_qada_logit(n, mu, 36, local) - 2); /* 22.3 + μ against 24.9 + μ */
    /* continuous at σ = √(2 ln n): both sides meet ln n + μ + ln n */
    float lo = attn_qada_rem_logit(n, mu, (edge - 1e-6) * (edge - 1e-6), local);
    float hi = attn_qada_rem_logit(n, mu, (edge + 1e-6) * (edge + 1e-6), local);
    CHECK_NEAR(lo, hi, 1e-4);
    CHECK_NEAR(lo, 2 * log(n) + mu - local, 1e-4);
    /* no far keys: nothing to estimate; a negative variance (rounding) is σ 0 */
    CHECK(isnan(attn_qada_rem_logit(0, mu, 1, local)));
    CHECK_NEAR(attn_qada_rem_logit(n, mu, -1e-9, local), log(n) + mu - local, 1e-5);
}
