/* test_fit.c — `ahascope fit` and its logistic solver against a NumPy reference.
 *
 * `ahascope fit` and what it stands on: the logistic solver
 * against a float64 NumPy Newton reference (tests/logfit_ref.py), router
 * biases in files (round trip; files without them still load), fitted
 * routers on stories260K against random ones at the same global share,
 * determinism, every Hugging Face architecture, and bad input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_forced.h"
#include "app/fit.h"
#include "engine/decide.h"
#include "engine/forward.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "engine/train_logfit.h"
#include "test.h"
#include "stories.h"

/* A deterministic uniform in [0, 1) (xorshift). */
static double uni(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

enum { LN = 600, LD = 5, LK = 3 };

/* Synthetic heads: labels drawn from a known logistic model (overlapping
 * classes, so the optimum is finite), weights in [0.2, 1.2], some 0. */
static void make_problem(float *x, float *y, float *wt) {
    uint64_t s = 88172645463325252ull;
    for (int i = 0; i < LN; i++) {
        for (int j = 0; j < LD; j++) x[i * LD + j] = (float)(2 * uni(&s) - 1) * (float)(j + 1);
        for (int h = 0; h < LK; h++) {
            double z = 0.3 * h - 0.5;
            for (int j = 0; j < LD; j++) z += x[i * LD + j] * ((j + h) % 3 - 1) * 0.7;
            y[i * LK + h] = uni(&s) < 1 / (1 + exp(-z));
            wt[i * LK + h] = i % 17 == 0 ? 0.0f : (float)(0.2 + uni(&s));
        }
    }
}

/* The solver reaches the float64 Newton optimum in 60 iterations: weights
 * and biases within 1e-5, loss within 1e-9 (float sgemm sums; measured
 * 1.4e-8 on the biases, loss equal to 9 digits). */
TEST(logfit_matches_a_float64_newton_reference) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    static float x[LN * LD], y[LN * LK], wt[LN * LK], w[LK * LD], b[LK];
    make_problem(x, y, wt);
    LogfitProblem p = {LN, LD, LK, x, y, wt, 0.01, 60};
    Err e;
    CHECK_INT(logfit_solve(&p, w, b, &e), 0);
    const char *data = test_tmp("logfit.bin"), *out = test_tmp("logfit_ref.txt");
    FILE *f = fopen(data, "wb");
    int32_t shape[3] = {LN, LD, LK};
    double reg[2] = {p.l2, LOGFIT_BIAS_EPS};
    CHECK(f && fwrite(shape, sizeof shape, 1, f) == 1 && fwrite(reg, sizeof reg, 1, f) == 1 &&
          fwrite(x, sizeof x, 1, f) == 1 && fwrite(y, sizeof y, 1, f) == 1 && fwrite(wt, sizeof wt, 1, f) == 1);
    if (f) fclose(f);
    int st;
    free(test_runf(&st, "'%s' tests/logfit_ref.py '%s' '%s'", py, data, out));
    CHECK_INT(st, 0);
    FILE *r = fopen(out, "r");
    CHECK(r != NULL);
    for (int h = 0; r && h < LK; h++) {
        double loss, rb, rw;
        CHECK_INT(fscanf(r, "%lf %lf", &loss, &rb), 2);
        CHECK_NEAR(b[h], rb, 1e-5);
        for (int j = 0; j < LD; j++) {
            CHECK_INT(fscanf(r, "%lf", &rw), 1);
            CHECK_NEAR(w[h * LD + j], rw, 1e-5);
        }
        CHECK_NEAR(logfit_loss(&p, w + h * LD, b[h], h), loss, 1e-9);
    }
    if (r) fclose(r);
}

/* A head whose labels are all one class stays finite (the bias penalty). */
TEST(logfit_one_class_head_stays_finite) {
    static float x[LN * LD], y[LN * LK], wt[LN * LK], w[LK * LD], b[LK];
    make_problem(x, y, wt);
    for (int i = 0; i < LN; i++) y[i * LK] = 1;
    LogfitProblem p = {LN, LD, LK, x, y, NULL, 1e-3, 30};
    Err e;
    CHECK_INT(logfit_solve(&p, w, b, &e), 0);
    CHECK(isfinite(b[0]) && b[0] > 2);
    LogfitProblem bad = p;
    bad.n = 0;
    CHECK(logfit_solve(&bad, w, b, &e) != 0);
}

TEST(router_bias_round_trips_and_files_without_it_load) {
    SKIP_UNLESS_SHARED();
    Routers r, back, old;
    Err e;
    CHECK_INT(router_random(&r, 2, 3, 4, 7, &e), 0);
    r.b = malloc(6 * sizeof(float));
    for (int i = 0; i < 6; i++) r.b[i] = 0.25f * i - 0.5f;
    const char *path = test_tmp("bias.safetensors");
    const char *k[1] = {"window"}, *v[1] = {"8"};
    CHECK_INT(router_save(&r, path, k, v, 1, &e), 0);
    CHECK_INT(router_load(&back, path, 2, 3, 4, &e), 0);
    CHECK(back.b != NULL && memcmp(back.b, r.b, 6 * sizeof(float)) == 0);
    CHECK(memcmp(back.w, r.w, 24 * sizeof(float)) == 0);
    router_free(&back);
    free(r.b), r.b = NULL; /* written without biases: loads with none */
    CHECK_INT(router_save(&r, path, k, v, 1, &e), 0);
    CHECK_INT(router_load(&back, path, 2, 3, 4, &e), 0);
    CHECK(back.b == NULL);
    router_free(&back);
    router_free(&r);
    CHECK_INT(router_load(&old, "engine/routers/stories260K_w16.safetensors", 5, 8, 64, &e), 0); /* train's file */
    CHECK(old.b == NULL);
    router_free(&old);
}

/* Fit tiny routers on stories260K; returns the exit status. */
static int fit(const char *out, const char *flags) {
    int st;
    free(test_runf(&st, "%s fit --model %s --window 8 --self 16 --seq-len 64 --threads 1 --out %s %s 2>/dev/null",
                   test_bin(), test_stories_model(), out, flags));
    return st;
}

/* Score (with bias) and oracle label (at theta) of every cell with a choice
 * on a fresh sequence; r NULL: the model's own routers (faolmo). Returns the
 * cells counted. */
static int score_cells_at(const Model *m, const Routers *r, int window, double theta, const int *seq, int len,
                          float *sc, int *lab) {
    AttnConfig a = aha_defaults();
    a.policy = POLICY_FULL, a.profile = 1, a.window = window, a.theta_logit = decide_theta_logit(theta);
    if (r) a.routers = r->w, a.router_bias = r->b;
    else a.model_routers = 1;
    RunState s;
    Err e;
    StepTrace *tr[64];
    if (len > 64 || fwd_init(&s, &m->c, len, 1, &e)) return 0;
    for (int i = 0; i < len; i++) tr[i] = trace_new(m->c.n_layers, m->c.n_heads);
    fwd_forward(m, &s, &a, seq, len, 0, NULL, tr);
    int n = 0;
    for (int t = 0; t < len; t++) {
        for (int c = 0; c < trace_cells(tr[t]); c++) {
            int l = decide_label(tr[t], c, a.theta_logit);
            if (l >= 0) sc[n] = tr[t]->score[c], lab[n++] = l;
        }
        trace_free(tr[t]);
    }
    fwd_free(&s);
    return n;
}

static int score_cells(const Model *m, const Routers *r, const int *seq, int len, float *sc, int *lab) {
    return score_cells_at(m, r, 8, 0.1, seq, len, sc, lab);
}

/* Agreement with the labels when the top `share` of scores go global. */
static double agreement_at(const float *sc, const int *lab, int n, double share) {
    int k = (int)lround(share * n), agree = 0;
    for (int i = 0; i < n; i++) {
        int above = 0;
        for (int j = 0; j < n; j++) above += sc[j] > sc[i] || (sc[j] == sc[i] && j < i);
        agree += (above < k) == lab[i];
    }
    return (double)agree / n;
}

TEST(fit_beats_random_routers_at_the_same_share_on_stories260K) {
    SKIP_UNLESS_SHARED();
    const char *out = test_tmp("fit8.safetensors");
    CHECK_INT(fit(out, "--share 0.3 --theta 0.1"), 0); /* labels at the θ this test scores with */
    Model m;
    Routers fitted, rnd;
    Err e;
    CHECK_INT(test_load_stories(&m, NULL, &e), 0);
    CHECK_INT(router_load(&fitted, out, 5, 8, 64, &e), 0);
    CHECK_INT(router_random(&rnd, 5, 8, 64, 3, &e), 0);
    CHECK(fitted.b != NULL && fitted.window == 8 && fitted.tau > 0 && fitted.tau < 1);
    uint64_t s = 12345; /* tokens the fit never saw: a random walk over the vocabulary */
    int seq[64], lab[64 * 40], lab2[64 * 40];
    static float sf[64 * 40], sr[64 * 40];
    seq[0] = 1;
    for (int i = 1; i < 64; i++) seq[i] = 3 + (int)(uni(&s) * 400);
    int n = score_cells(&m, &fitted, seq, 64, sf, lab), n2 = score_cells(&m, &rnd, seq, 64, sr, lab2);
    CHECK(n > 1000 && n == n2);
    double af = agreement_at(sf, lab, n, 0.3), ar = agreement_at(sr, lab, n, 0.3); /* measured 0.737, 0.503 */
    CHECK_MSG(af > ar + 0.1, "fitted agreement %.3f vs random %.3f", af, ar);
    router_free(&fitted), router_free(&rnd), model_free(&m);
}

TEST(fit_is_deterministic_and_writes_its_metadata) {
    SKIP_UNLESS_SHARED();
    const char *a = test_tmp("det_fit_a.safetensors"), *b = test_tmp("det_fit_b.safetensors");
    CHECK_INT(fit(a, "--weight err --iters 10"), 0);
    CHECK_INT(fit(b, "--weight err --iters 10"), 0);
    CHECK(test_same_file(a, b));
    StFile f;
    Err e;
    CHECK_INT(st_open(&f, a, &e), 0);
    const char *obj = st_meta(&f, "objective"), *agree = st_meta(&f, "heldout_agreement"), *w = st_meta(&f, "weight");
    CHECK(obj && !strcmp(obj, "oracle-fit"));
    CHECK(w && !strcmp(w, "err"));
    CHECK(agree && atof(agree) > 0.5 && atof(agree) <= 1);
    CHECK(st_meta(&f, "theta") && st_meta(&f, "share") && st_meta(&f, "data"));
    const char *bal = st_meta(&f, "balance");
    CHECK_MSG(bal && !strcmp(bal, "0.9"), "balance %s", bal ? bal : "(none)"); /* the default */
    st_close(&f);
}

/* The positives' factor leaves them carrying exactly the asked share, and
 * changes nothing when off or when a class is empty. */
TEST(fit_balance_factor_gives_the_positives_their_share) {
    for (int i = 0; i < 3; i++) {
        double pos = (double[]){10, 1, 300}[i], all = 100 + pos, want = (double[]){0.9, 0.5, 0.25}[i];
        double a = fit_balance_factor(pos, all, want);
        CHECK_NEAR(a * pos / (a * pos + all - pos), want, 1e-12);
    }
    CHECK_NEAR(fit_balance_factor(10, 100, 0), 1, 0);
    CHECK_NEAR(fit_balance_factor(0, 100, 0.9), 1, 0);
    CHECK_NEAR(fit_balance_factor(100, 100, 0.9), 1, 0);
}

/* KL of routers on eval's default 8 sequences of 256 tokens with τ chosen
 * to send 27% global, or NAN. */
static double kl_at_share(const char *routers) {
    int st;
    char *out = test_runf(&st, "%s eval --model %s --routers %s --share 0.27 --threads 1 --json 2>/dev/null",
                          test_bin(), test_stories_model(), routers);
    const char *k = out ? strstr(out, "\"kl\": ") : NULL;
    double kl = st == 0 && k ? atof(k + 6) : NAN;
    free(out);
    return kl;
}

/* The default --balance 0.9 fits routers with a lower KL at a matched
 * share than the unweighted fit (measured 0.0115 against 0.0136 here;
 * app/FINDINGS.md compares them at four windows on three samples). */
TEST(fit_balanced_positives_lower_the_kl_at_a_matched_share) {
    SKIP_UNLESS_SHARED();
    const char *bal = test_tmp("bal16.safetensors"), *raw = test_tmp("raw16.safetensors");
    const char *fmt = "%s fit --model %s --window 16 --self 32 --share 0.27 --threads 1 --out %s %s 2>/dev/null";
    const char *m = test_stories_model();
    int st;
    free(test_runf(&st, fmt, test_bin(), m, bal, ""));
    CHECK_INT(st, 0);
    free(test_runf(&st, fmt, test_bin(), m, raw, "--balance 0"));
    CHECK_INT(st, 0);
    double kb = kl_at_share(bal), kr = kl_at_share(raw);
    CHECK_MSG(kb < 0.93 * kr, "KL balanced %.5f, unweighted %.5f", kb, kr);
}

/* Every architecture the engine runs fits, and the routers load with their
 * biases (faolmo too: fitted routers replace the built-in ones). */
TEST(fit_runs_on_every_hugging_face_architecture) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    char dir[600];
    snprintf(dir, sizeof dir, "%s", test_tmp("fit_hf"));
    int st;
    free(test_runf(&st, "'%s' tests/fixtures/hf/make_hf.py '%s' >/dev/null", py, dir));
    CHECK_INT(st, 0);
    const char *archs[] = {"llama", "qwen2", "olmo2", "faolmo", "llama-bf16"};
    for (int i = 0; i < 5; i++) {
        char model[700], out[700];
        snprintf(model, sizeof model, "%s/%s", dir, archs[i]);
        snprintf(out, sizeof out, "%s/%s.safetensors", dir, archs[i]);
        char *log = test_runf(&st, "%s fit --model %s --window 4 --seq-len 32 --self 16 --share 0.5 --out %s 2>&1",
                              test_bin(), model, out);
        CHECK_MSG(st == 0, "%s: %s", archs[i], log ? log : "");
        free(log);
        Model m;
        Routers r;
        Err e;
        CHECK_INT(model_load_hf(&m, model, 0, &e), 0);
        CHECK_INT(router_load(&r, out, m.c.n_layers, m.c.n_heads, m.c.dim, &e), 0);
        CHECK(r.b != NULL && fabsf(r.b[0]) < 100);
        router_free(&r), model_free(&m);
    }
}

TEST(fit_rejects_bad_input) {
    SKIP_UNLESS_SHARED();
    const char *out = test_tmp("bad_fit.safetensors"), *m = test_stories_model();
    const char *bad[] = {"--window 8", "--window 8 --out %s --share 0.2 --tau 0.5", "--window 8 --out %s --weight x",
                         "--window 64 --seq-len 64 --out %s", "--window 8 --out %s --share 2", "--out %s",
                         "--window 8 --out %s --data /nonexistent/file.txt"};
    for (int i = 0; i < 7; i++) {
        char flags[300];
        snprintf(flags, sizeof flags, bad[i], out);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s fit --model %s %s", test_bin(), m, flags);
        CHECK_REFUSAL(cmd, -1, NULL, "ahascope fit:", 1);
    }
    CHECK(test_read_file(out, NULL) == NULL); /* nothing written */
}

/* faolmo ships routers (rows of q_proj); on the tiny fixture, whose router
 * rows are random, routers fitted to the oracle (θ 0.7) agree with it
 * better at the same share, on self-sampled sequences the fit did not see. */
TEST(fit_beats_faolmo_built_in_routers_at_the_same_share) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    char dir[600], model[700], out[700];
    snprintf(dir, sizeof dir, "%s", test_tmp("fit_fa"));
    snprintf(model, sizeof model, "%s/faolmo", dir);
    snprintf(out, sizeof out, "%s/fa.safetensors", dir);
    int st;
    free(test_runf(&st, "'%s' tests/fixtures/hf/make_hf.py '%s' >/dev/null && %s fit --model %s --window 4 "
                        "--seq-len 32 --self 64 --out %s 2>/dev/null", py, dir, test_bin(), model, out));
    CHECK_INT(st, 0);
    Model m;
    Routers r;
    Err e;
    CHECK_INT(model_load_hf(&m, model, 0, &e), 0);
    CHECK_INT(router_load(&r, out, m.c.n_layers, m.c.n_heads, m.c.dim, &e), 0);
    EvalData d; /* sequences like the fit's, from a seed its data does not use */
    CHECK_INT(eval_data_self(&d, &m, NULL, 4, 32, 999, &e), 0);
    int lab[4 * 32 * 64], lab2[4 * 32 * 64], n = 0, n2 = 0, cells = m.c.n_layers * m.c.n_heads;
    static float sf[4 * 32 * 64], sb[4 * 32 * 64];
    CHECK(cells <= 64);
    for (int i = 0; i < d.n && cells <= 64; i++) {
        n += score_cells_at(&m, &r, 4, 0.7, d.seq[i], d.len[i], sf + n, lab + n);
        n2 += score_cells_at(&m, NULL, 4, 0.7, d.seq[i], d.len[i], sb + n2, lab2 + n2);
    }
    eval_data_free(&d);
    CHECK(n > 100 && n == n2);
    int pos = 0;
    for (int i = 0; i < n; i++) pos += lab[i];
    double share = (double)pos / n, af = agreement_at(sf, lab, n, share), ab = agreement_at(sb, lab, n, share);
    /* measured 0.614 vs 0.556 (what a random ranking gets at this share) */
    CHECK_MSG(af > ab + 0.03, "fitted agreement %.3f vs built-in %.3f at share %.3f", af, ab, share);
    router_free(&r), model_free(&m);
}

/* The forward pass adds a layer's biases to its router logits, at every
 * position and head (prefill and decode alike, one code path). */
TEST(router_bias_shifts_every_router_logit_in_the_forward_pass) {
    SKIP_UNLESS_SHARED();
    Model m;
    Routers r;
    Err e;
    CHECK_INT(test_load_stories(&m, NULL, &e), 0);
    CHECK_INT(router_random(&r, 5, 8, 64, 5, &e), 0);
    float b[40];
    for (int i = 0; i < 40; i++) b[i] = 0.05f * i - 1.0f;
    int seq[12] = {1, 365, 1691, 1084, 1576, 679, 362, 612, 1101, 1084, 277, 29892};
    for (int i = 0; i < 12; i++) seq[i] %= m.c.vocab_size;
    StepTrace *plain[12], *biased[12];
    RunState s;
    AttnConfig a = aha_defaults();
    a.policy = POLICY_FULL, a.window = 4, a.routers = r.w;
    for (int i = 0; i < 12; i++) plain[i] = trace_new(5, 8), biased[i] = trace_new(5, 8);
    CHECK_INT(fwd_init(&s, &m.c, 12, 1, &e), 0);
    fwd_forward(&m, &s, &a, seq, 12, 0, NULL, plain);
    a.router_bias = b;
    fwd_forward(&m, &s, &a, seq, 12, 0, NULL, biased);
    for (int t = 0; t < 12; t++)
        for (int c = 0; c < 40; c++) {
            double z0 = log(plain[t]->score[c] / (1 - plain[t]->score[c]));
            double z1 = log(biased[t]->score[c] / (1 - biased[t]->score[c]));
            CHECK_NEAR(z1 - z0, b[c], 1e-4);
        }
    for (int i = 0; i < 12; i++) trace_free(plain[i]), trace_free(biased[i]);
    fwd_free(&s), router_free(&r), model_free(&m);
}
