/* test_multi.c — the multi-choice router: global or one of K windows a (token, head).
 *
 * The decision rule case by case; the router file's round trip and its
 * hostile cases (bad counts, windows not increasing, shapes that disagree
 * with the windows, a bias); stories260K run with a multi-choice router
 * against tests/multi_ref.py, a float64 NumPy forward pass that makes the
 * same decisions from the file itself; training's primitives against
 * finite differences of a double reference (the STE as a surrogate whose
 * gates enter as real numbers, as tests/test_backward.c does), the whole
 * model's K = 1 router against the two-way one it equals, and the keys
 * term's gradient; a run recorded with --db, its keys read from SQL
 * against the NumPy recount and eval's own count; the command lines that
 * refuse.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attn.h"
#include "engine/decide.h"
#include "engine/model.h"
#include "engine/routers.h"
#include "engine/safetensors.h"
#include "engine/train_backward.h"
#include "engine/train_multi.h"
#include "engine/trace.h"
#include "store/store.h"
#include "store_fixture.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void) { /* uniform [-1, 1) */
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 40) / 8388608.0 - 1.0);
}

static float *rand_f(size_t n, float scale) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = scale * frand();
    return p;
}

/* ---- the decision rule ---- */

TEST(multi_decide_rule) {
    struct { float z[4]; int k; float tau; int want; } cases[] = {
        {{1, 3, 2}, 2, 0.5f, 1},     /* the best window beats global */
        {{1, 2, 3}, 2, 0.5f, 2},     /* global's logit the largest */
        {{2, 2, 1}, 2, 0.5f, 0},     /* a tie between windows: the shorter */
        {{2, 1, 2}, 2, 0.5f, 0},     /* global tied with the best window: not strictly above, local */
        {{1, 2, 3}, 2, 0.8f, 1},     /* τ 0.8: global needs a margin of logit(0.8) = 1.386 > 1 */
        {{1, 2, 3.5f}, 2, 0.8f, 2},  /* a margin of 1.5 passes it */
        {{5, 6, -9}, 2, 0.0f, 2},    /* τ 0: every head global */
        {{5, 6, 9}, 2, 1.0f, 1},     /* τ 1: none */
        {{0, 4, 1, 3}, 3, 0.5f, 1},  /* three windows: the largest logit's */
        {{0, NAN}, 1, 0.5f, 0},      /* no logit: local, never global */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float g;
        int got = decide_multi(cases[i].z, cases[i].k, cases[i].tau, &g);
        CHECK_MSG(got == cases[i].want, "case %zu: choice %d, expected %d", i, got, cases[i].want);
    }
    float g, z[3] = {1, 3, 2.5f};
    decide_multi(z, 2, 0.5f, &g);
    CHECK_NEAR(g, -0.5, 1e-7); /* the global-against-best-window logit the trace's score is σ of */
}

/* ---- the file ---- */

static const char *tmp_path(const char *name) {
    static char paths[8][1024];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s", test_tmp(name));
    return p;
}

TEST(multi_router_file_round_trip) {
    Routers r, back;
    Err e;
    int w[3] = {2, 6, 40};
    CHECK(router_random_multi(&r, 2, 3, 4, w, 3, 7, &e) == 0);
    const char *path = tmp_path("multi_rt.safetensors");
    const char *keys[] = {"window", "tau"}, *vals[] = {"2", "0.5"};
    CHECK_MSG(router_save(&r, path, keys, vals, 2, &e) == 0, "%s", e.msg);
    CHECK_MSG(router_load(&back, path, 2, 3, 4, &e) == 0, "%s", e.msg);
    CHECK_INT(back.n_windows, 3);
    for (int k = 0; k < 3; k++) CHECK_INT(back.windows[k], w[k]);
    CHECK_INT(back.window, 2);
    CHECK(back.b == NULL);
    CHECK(memcmp(back.w, r.w, (size_t)2 * 3 * 4 * 4 * sizeof(float)) == 0);
    router_free(&back);
    /* the same file read for another shape is refused */
    CHECK(router_load(&back, path, 2, 3, 5, &e) != 0);
    router_free(&r);
    /* a two-way file still reads as one: no windows */
    CHECK(router_random(&r, 2, 3, 4, 7, &e) == 0);
    CHECK(router_save(&r, path, NULL, NULL, 0, &e) == 0);
    CHECK(router_load(&back, path, 2, 3, 4, &e) == 0 && back.n_windows == 0);
    router_free(&back), router_free(&r);
}

/* A file with the given windows metadata (NULL: none) and tensors of
 * `vectors` rows a head (0: the two-way [H, dim]); bias adds one. */
static const char *hostile_file(const char *name, const char *windows, int vectors, int bias) {
    enum { L = 2, H = 3, D = 4 };
    static float data[L * H * 9 * D], b[H];
    const char *path = tmp_path(name);
    StWriter w;
    Err e;
    st_writer_init(&w);
    for (int l = 0; l < L; l++) {
        char n[96];
        snprintf(n, sizeof n, "model.layers.%d.self_attn.router.weight", l);
        int64_t s3[3] = {H, vectors, D}, s2[2] = {H, D};
        CHECK(st_writer_add(&w, n, ST_F32, vectors ? 3 : 2, vectors ? s3 : s2, data, &e) == 0);
        int64_t sb[1] = {H};
        snprintf(n, sizeof n, "model.layers.%d.self_attn.router.bias", l);
        if (bias) CHECK(st_writer_add(&w, n, ST_F32, 1, sb, b, &e) == 0);
    }
    if (windows) CHECK(st_writer_meta(&w, "windows", windows, &e) == 0);
    CHECK_MSG(st_write(&w, path, &e) == 0, "%s", e.msg);
    st_writer_free(&w);
    return path;
}

TEST(multi_router_file_hostile_cases) {
    struct { const char *windows; int vectors, bias; const char *needle; } cases[] = {
        {"6,2", 3, 0, "not increasing"},
        {"4,4", 3, 0, "not increasing"},
        {"0,4", 3, 0, "whole numbers from 1"},
        {"-3", 2, 0, "whole numbers from 1"},
        {"4,", 3, 0, "whole numbers from 1"},
        {"", 1, 0, "whole numbers from 1"},
        {"abc", 2, 0, "whole numbers from 1"},
        {"2,1048577", 3, 0, "whole numbers from 1"},
        {"1,2,3,4,5,6,7,8,9", 9, 0, "more than 8 windows"},
        {"2,6", 2, 0, "names 2 windows"},   /* K + 1 = 3 vectors a head, the file holds 2 */
        {"2,6,9", 3, 0, "names 3 windows"}, /* a count the tensors disagree with */
        {"2,6", 0, 0, "names 2 windows"},   /* a two-way tensor under windows */
        {"2,6", 3, 1, "carries no bias"},
        {NULL, 3, 0, "model.layers.0.self_attn.router.weight"}, /* K + 1 vectors but no windows: a shape error */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "hostile%zu.safetensors", i);
        const char *path = hostile_file(name, cases[i].windows, cases[i].vectors, cases[i].bias);
        Routers r;
        Err e = {0};
        int rc = router_load(&r, path, 2, 3, 4, &e);
        CHECK_MSG(rc != 0, "case %zu (%s): loaded", i, cases[i].windows ? cases[i].windows : "none");
        if (rc == 0) { router_free(&r); continue; }
        CHECK_MSG(strstr(e.msg, cases[i].needle) && strstr(e.msg, path) && !strchr(e.msg, '\n'),
                  "case %zu: '%s' (wanted '%s' naming the file, one line)", i, e.msg, cases[i].needle);
        CHECK_MSG(!e.usage, "case %zu: a bad file is no usage error", i);
    }
}

/* ---- the forward pass against NumPy ---- */

/* stories260K's trace under the routers: each position's line in j[], the tokens into a file. */
static int trace_lines(const char *routers, const char *tokens, cJSON **j, int cap) {
    int st, n = 0;
    char *out = test_runf(&st, "%s trace --model %s --prompt 'Once upon a time' --steps 40 --seed 3 --routers %s 2>&1",
                          test_bin(), test_stories_model(), routers);
    CHECK_MSG(st == 0, "%s", out ? out : "");
    FILE *f = fopen(tokens, "w");
    for (char *line = st == 0 ? out : NULL, *nl; line && *line && n < cap; line = nl ? nl + 1 : NULL) {
        if ((nl = strchr(line, '\n'))) *nl = 0;
        j[n] = cJSON_Parse(line);
        if (f && j[n]) fprintf(f, "%d\n", cJSON_GetObjectItem(j[n], "token")->valueint);
        n += j[n] != NULL;
    }
    if (f) fclose(f);
    free(out);
    return n;
}

/* A random multi-choice router file for stories260K, windows 2 and 6,
 * with logits of a few units so every choice occurs; its cell count, or
 * 0 on failure. */
static int random_multi_file(const char *path) {
    Model m;
    Err e;
    if (model_load(&m, test_stories_model(), &e) != 0) return 0;
    Routers r;
    int w[2] = {2, 6}, cells = m.c.n_layers * m.c.n_heads;
    int ok = router_random_multi(&r, m.c.n_layers, m.c.n_heads, m.c.dim, w, 2, 5, &e) == 0;
    for (size_t i = 0; ok && i < (size_t)cells * 3 * m.c.dim; i++) r.w[i] *= 3;
    ok = ok && router_save(&r, path, NULL, NULL, 0, &e) == 0;
    if (ok) router_free(&r);
    model_free(&m);
    return ok ? cells : 0;
}

TEST(multi_forward_recounted_by_numpy) {
    SKIP_UNLESS_SHARED();
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    const char *path = tmp_path("multi_fwd.safetensors"), *tokens = tmp_path("multi_tok.txt");
    int cells = random_multi_file(path);
    CHECK(cells > 0);
    cJSON *j[64] = {0};
    int n = trace_lines(path, tokens, j, 64);
    CHECK_INT(n, 40);
    int st;
    char *out = test_runf(&st, "'%s' tests/multi_ref.py --model %s --routers %s --tokens %s 2>&1", py,
                          test_stories_model(), path, tokens);
    cJSON *ref = st == 0 && out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(ref, "multi_ref.py: %s", out ? out : "");
    free(out);
    const cJSON *lp = cJSON_GetObjectItem(ref, "logprob"), *kr = cJSON_GetObjectItem(ref, "keys_read"),
                *ch = cJSON_GetObjectItem(ref, "choice");
    int seen[3] = {0}, wrong = 0;
    double gap = 0;
    for (int t = 0; ref && t < n; t++) {
        const cJSON *mine = cJSON_GetObjectItem(j[t], "keys_read"), *want = cJSON_GetArrayItem(kr, t);
        for (int c = 0; c < cells; c++) {
            int a = cJSON_GetArrayItem(mine, c)->valueint, b = cJSON_GetArrayItem(want, c)->valueint;
            wrong += a != b;
            if (t >= 6) seen[cJSON_GetArrayItem(cJSON_GetArrayItem(ch, t), c)->valueint]++;
            CHECK_MSG(a == b, "pos %d head %d: %d keys read, NumPy %d", t, c, a, b);
        }
        const cJSON *a = cJSON_GetObjectItem(j[t], "logprob"), *b = cJSON_GetArrayItem(lp, t);
        if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) gap = fmax(gap, fabs(a->valuedouble - b->valuedouble));
    }
    CHECK_MSG(gap < 1e-4, "a log-probability %g from NumPy's", gap);
    /* the check can fail: every choice occurs where the windows differ */
    CHECK_MSG(seen[0] > 20 && seen[1] > 20 && seen[2] > 20, "choices at t >= 6: w2 %d, w6 %d, global %d", seen[0],
              seen[1], seen[2]);
    CHECK_INT(wrong, 0);
    cJSON_Delete(ref);
    for (int t = 0; t < n; t++) cJSON_Delete(j[t]);
}

/* Recorded with --db (the refusal is gone): each decision's chosen window
 * is kept (local_window), so the keys read that SQL derives per decision
 * equal tests/multi_ref.py's float64 recount on the recorded tokens, the
 * traces read back hold the engine's, and eval --db's decisions, token
 * sums and head totals give eval's own keys_read_frac exactly. */
TEST(multi_recorded_keys_read_equal_the_engine_and_a_numpy_recount) {
    SKIP_UNLESS_SHARED();
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    const char *path = tmp_path("multi_db.safetensors"), *tokens = tmp_path("multi_db_tok.txt");
    const char *db = test_tmp("multi_rec.db"), *db2 = test_tmp("multi_eval.db");
    int cells = random_multi_file(path), st;
    CHECK(cells > 0);
    test_db_fresh(db);
    char *out = test_runf(&st, "%s record --db %s --model %s --prompt 'Once upon a time' --steps 40 --seed 3 --routers %s"
                               " 2>&1", test_bin(), db, test_stories_model(), path);
    CHECK_MSG(st == 0, "record: %s", out ? out : "");
    free(out);
    int n = (int)test_db_scalar(db, "SELECT COUNT(*) FROM tokens WHERE run_id = 1");
    CHECK(n > 20);
    FILE *f = fopen(tokens, "w");
    for (int t = 0; f && t < n; t++) {
        char q[96];
        snprintf(q, sizeof q, "SELECT token_id FROM tokens WHERE run_id = 1 AND pos = %d", t);
        fprintf(f, "%lld\n", test_db_scalar(db, q));
    }
    if (f) fclose(f);
    out = test_runf(&st, "'%s' tests/multi_ref.py --model %s --routers %s --tokens %s 2>&1", py, test_stories_model(),
                    path, tokens);
    cJSON *ref = st == 0 && out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(ref, "multi_ref.py: %s", out ? out : "");
    free(out);
    const cJSON *kr = cJSON_GetObjectItem(ref, "keys_read");
    long want = 0, wrong = 0;
    for (int t = 0; ref && t < n; t++)
        for (int c = 0; c < cells; c++) want += cJSON_GetArrayItem(cJSON_GetArrayItem(kr, t), c)->valueint;
    /* decision by decision: the rows whose SQL count differs from NumPy's */
    for (int t = 0; ref && t < n && !wrong; t++)
        for (int c = 0; c < cells; c++) {
            char q[200];
            snprintf(q, sizeof q, "SELECT keys_read FROM decisions WHERE run_id = 1 AND pos = %d AND layer = %d AND head = %d",
                     t, c / 8, c % 8);
            long a = (long)test_db_scalar(db, q), b = cJSON_GetArrayItem(cJSON_GetArrayItem(kr, t), c)->valueint;
            wrong += a != b;
            CHECK_MSG(a == b, "pos %d head %d: SQL %ld keys read, NumPy %ld", t, c, a, b);
        }
    CHECK_INT(wrong, 0);
    cJSON_Delete(ref);
    CHECK_INT(test_db_scalar(db, "SELECT SUM(keys_read) FROM decisions WHERE run_id = 1"), want);
    CHECK_INT(test_db_scalar(db, "SELECT SUM(keys_read_sum) FROM tokens WHERE run_id = 1"), want);
    /* the count can fail: both windows were chosen, and local_window is what tells them apart */
    CHECK(test_db_scalar(db, "SELECT COUNT(*) FROM decisions WHERE gate = 0 AND local_window = 2 AND pos > 6") > 20);
    CHECK(test_db_scalar(db, "SELECT COUNT(*) FROM decisions WHERE gate = 0 AND local_window = 6 AND pos > 6") > 20);
    Err e;
    Store *s = store_open(db, STORE_READ, 1000, &e);
    CHECK_MSG(s, "%s", e.msg);
    StepTrace *tr = trace_new(5, 8);
    long back = 0;
    for (int t = 0; s && tr && t < n; t++) {
        CHECK_INT(store_read_steps(s, 1, t, 1, &tr, &e), 1);
        for (int c = 0; c < cells; c++) back += tr->keys_read[c];
    }
    CHECK_INT(back, want);
    trace_free(tr);
    if (s) store_close(s, &e);
    /* eval --db: SQL's share of keys is eval's own, which the kernels counted */
    test_db_fresh(db2);
    out = test_runf(&st, "%s eval --model %s --routers %s --self 2 --seq-len 32 --json --db %s 2>/dev/null", test_bin(),
                    test_stories_model(), path, db2);
    cJSON *j = st == 0 && out ? cJSON_Parse(out) : NULL;
    const cJSON *row = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, 0) : j;
    double engine = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "keys_read_frac"));
    CHECK_MSG(j && engine > 0 && engine < 1, "eval: %s", out ? out : "");
    cJSON_Delete(j);
    free(out);
    /* one run a sequence */
    CHECK_INT(test_db_scalar(db2, "SELECT COUNT(*) FROM runs WHERE policy = 'aha' AND eval_id IS NOT NULL"), 2);
    const char *aha = "run_id IN (SELECT run_id FROM runs WHERE policy = 'aha' AND eval_id IS NOT NULL)";
    char q[400];
    snprintf(q, sizeof q, "SELECT SUM(keys_read) FROM decisions WHERE %s", aha);
    long num = (long)test_db_scalar(db2, q);
    snprintf(q, sizeof q, "SELECT SUM(pos + 1) FROM decisions WHERE %s", aha);
    CHECK_NEAR((double)num / (double)test_db_scalar(db2, q), engine, 1e-12);
    snprintf(q, sizeof q, "SELECT SUM(keys_read_sum) FROM tokens WHERE %s", aha);
    CHECK_INT(test_db_scalar(db2, q), num);
    snprintf(q, sizeof q, "SELECT SUM(keys_read) - (SELECT SUM(d.keys_read) FROM decisions d JOIN tokens t USING (run_id, pos)"
                          " WHERE t.n_far > 0 AND d.%s) FROM head_stats WHERE %s", aha, aha);
    CHECK_INT(test_db_scalar(db2, q), 0);
}

/* ---- training: the router's softmax and its product ---- */

typedef struct {
    int N, C, H, K;
    double *x, *w, *c; /* xn[N][C], wr[H(K+1)][C], the loss's weights on p */
} RouterProbe;

/* Σ c·softmax(z) in double, z = x·wᵀ. */
static double router_loss(const RouterProbe *p) {
    int n_out = p->H * (p->K + 1);
    double loss = 0;
    for (int n = 0; n < p->N; n++)
        for (int h = 0; h < p->H; h++) {
            double z[9], m = -INFINITY, s = 0;
            for (int k = 0; k <= p->K; k++) {
                z[k] = 0;
                for (int i = 0; i < p->C; i++) z[k] += p->x[n * p->C + i] * p->w[(h * (p->K + 1) + k) * p->C + i];
                m = fmax(m, z[k]);
            }
            for (int k = 0; k <= p->K; k++) s += exp(z[k] - m);
            for (int k = 0; k <= p->K; k++) loss += p->c[(size_t)n * n_out + h * (p->K + 1) + k] * exp(z[k] - m) / s;
        }
    return loss;
}

/* max |got − central difference| over every entry of param, against the largest difference. */
static double fd_error(const float *got, double *param, size_t n, const RouterProbe *p, double *scale) {
    double worst = 0;
    *scale = 0;
    for (size_t i = 0; i < n; i++) {
        double keep = param[i];
        param[i] = keep + 1e-6;
        double up = router_loss(p);
        param[i] = keep - 1e-6;
        double down = router_loss(p);
        param[i] = keep;
        double fd = (up - down) / 2e-6;
        *scale = fmax(*scale, fabs(fd));
        worst = fmax(worst, fabs(fd - got[i]));
    }
    return worst;
}

TEST(multi_router_backward_matches_differences) {
    enum { N = 7, C = 5, H = 3, K = 2, NO = H * (K + 1) };
    float *x = rand_f(N * C, 1), *w = rand_f(NO * C, 1), *c = rand_f(N * NO, 1), p[N * NO];
    uint8_t choice[N * H], gate[N * H];
    long global = train_multi_router_forward(p, choice, gate, x, w, 0.5f, N, C, H, K);
    RouterProbe pr = {N, C, H, K, malloc(N * C * sizeof(double)), malloc(NO * C * sizeof(double)),
                      malloc(N * NO * sizeof(double))};
    for (int i = 0; i < N * C; i++) pr.x[i] = x[i];
    for (int i = 0; i < NO * C; i++) pr.w[i] = w[i];
    for (int i = 0; i < N * NO; i++) pr.c[i] = c[i];
    long count = 0;
    for (int i = 0; i < N * H; i++) { /* probabilities sum to 1; the choice is decide_multi's on the logits */
        double s = 0, z[K + 1];
        for (int k = 0; k <= K; k++) {
            s += p[i * (K + 1) + k];
            z[k] = 0;
            for (int j = 0; j < C; j++) z[k] += (double)x[i / H * C + j] * w[(i % H * (K + 1) + k) * C + j];
        }
        CHECK_NEAR(s, 1, 1e-6);
        int best = z[1] > z[0];
        int want = z[K] - z[best] > 0 ? K : best;
        CHECK_MSG(choice[i] == want && gate[i] == (want == K), "cell %d: choice %d, want %d", i, choice[i], want);
        count += want == K;
    }
    CHECK_INT(global, count);
    float dz[N * NO], dx[N * C] = {0}, dw[NO * C] = {0};
    memcpy(dz, c, sizeof dz);
    train_multi_softmax_backward(dz, p, 0, N, H, K);
    train_multi_router_backward(dx, dw, dz, x, w, N, C, H, K);
    double scale, err = fd_error(dx, pr.x, N * C, &pr, &scale);
    CHECK_MSG(scale > 1e-3 && err <= 1e-5 * scale + 1e-7, "dx: error %g of %g", err, scale);
    err = fd_error(dw, pr.w, NO * C, &pr, &scale);
    CHECK_MSG(scale > 1e-3 && err <= 1e-5 * scale + 1e-7, "dw: error %g of %g", err, scale);
    free(x), free(w), free(c), free(pr.x), free(pr.w), free(pr.c);
}

/* ---- training: the multi-choice attention ---- */

enum { AB = 2, AT = 11, AH = 4, AKV = 2, AHS = 4, AK = 2, AS = 1 };
static const int AW[AK] = {2, 5};
#define AN (AB * AT)
#define AD (AH * AHS)

typedef struct {
    double q[AN * AD], k[AN * AKV * AHS], v[AN * AKV * AHS], c[AN * AD];
    double g[AN * AH * (AK + 1)]; /* the surrogate's real-valued gates, one-hot at the choice */
} AttnProbe;

/* One head's output at row n over choice kk (AK: every key), in double. */
static void ref_branch(const AttnProbe *p, int n, int h, int kk, double *out) {
    int b = n / AT, t = n % AT, kv = h / (AH / AKV), ns = 0, lo = 0;
    if (kk < AK) attn_local_set(t, AW[kk], AS, &ns, &lo);
    double s[AT], m = -INFINITY, sum = 0;
    for (int i = 0; i <= t; i++) {
        int in = kk == AK || i < ns || i >= lo;
        s[i] = -INFINITY;
        if (!in) continue;
        s[i] = 0;
        for (int j = 0; j < AHS; j++) s[i] += p->q[n * AD + h * AHS + j] * p->k[(b * AT + i) * AKV * AHS + kv * AHS + j];
        s[i] /= sqrt((double)AHS);
        m = fmax(m, s[i]);
    }
    for (int j = 0; j < AHS; j++) out[j] = 0;
    for (int i = 0; i <= t; i++) {
        if (s[i] == -INFINITY) continue;
        double e = exp(s[i] - m);
        sum += e;
        for (int j = 0; j < AHS; j++) out[j] += e * p->v[(b * AT + i) * AKV * AHS + kv * AHS + j];
    }
    for (int j = 0; j < AHS; j++) out[j] /= sum;
}

static double attn_loss(const AttnProbe *p) {
    double loss = 0, o[AHS];
    for (int n = 0; n < AN; n++)
        for (int h = 0; h < AH; h++)
            for (int kk = 0; kk <= AK; kk++) {
                double g = p->g[(n * AH + h) * (AK + 1) + kk];
                if (g == 0) continue;
                ref_branch(p, n, h, kk, o);
                for (int j = 0; j < AHS; j++) loss += g * p->c[n * AD + h * AHS + j] * o[j];
            }
    return loss;
}

static double attn_fd_error(const float *got, double *param, size_t n, AttnProbe *p, double *scale) {
    double worst = 0;
    *scale = 0;
    for (size_t i = 0; i < n; i++) {
        double keep = param[i];
        param[i] = keep + 1e-6;
        double up = attn_loss(p);
        param[i] = keep - 1e-6;
        double down = attn_loss(p);
        param[i] = keep;
        double fd = (up - down) / 2e-6;
        *scale = fmax(*scale, fabs(fd));
        worst = fmax(worst, fabs(fd - got[i]));
    }
    return worst;
}

TEST(multi_attention_forward_and_backward_match_reference) {
    static AttnProbe p;
    float *q = rand_f(AN * AD, 1), *k = rand_f(AN * AKV * AHS, 1), *v = rand_f(AN * AKV * AHS, 1),
          *c = rand_f(AN * AD, 1);
    for (int i = 0; i < AN * AD; i++) p.q[i] = q[i], p.c[i] = c[i];
    for (int i = 0; i < AN * AKV * AHS; i++) p.k[i] = k[i], p.v[i] = v[i];
    uint8_t choice[AN * AH], gate[AN * AH];
    int seen[AK + 1] = {0};
    for (int i = 0; i < AN * AH; i++) {
        choice[i] = (uint8_t)((i * 7 + i / 5) % (AK + 1));
        gate[i] = choice[i] == AK;
        seen[choice[i]]++;
        for (int kk = 0; kk <= AK; kk++) p.g[i * (AK + 1) + kk] = kk == choice[i];
    }
    CHECK(seen[0] && seen[1] && seen[2]);
    AttnDims d = {.B = AB, .T = AT, .n_heads = AH, .n_kv_heads = AKV, .head_size = AHS, .window = 1, .sinks = AS};
    float *scratch = malloc(attention_scratch_floats(&d) * sizeof(float));
    static float out[AN * AD], o_all[AN * AD], lse_all[AN * AH], o_win[AK * AN * AD], lse_win[AK * AN * AH],
        tmp[AN * AD], tmp_dg[AN * AH], dq[AN * AD], dk[AN * AKV * AHS], dv[AN * AKV * AHS], dp[AN * AH * (AK + 1)];
    MultiActs m = {.q = q, .k = k, .v = v, .choice = choice, .gate = gate, .out = out, .o_all = o_all,
                   .lse_all = lse_all, .o_win = o_win, .lse_win = lse_win, .tmp = tmp, .tmp_dg = tmp_dg};
    train_multi_attention_forward(&d, AW, AK, &m, scratch);
    double worst = 0, o[AHS];
    for (int n = 0; n < AN; n++)
        for (int h = 0; h < AH; h++) {
            ref_branch(&p, n, h, choice[n * AH + h], o);
            for (int j = 0; j < AHS; j++) worst = fmax(worst, fabs(out[n * AD + h * AHS + j] - o[j]));
        }
    CHECK_MSG(worst < 1e-5, "the chosen branches: %g from the reference", worst);
    train_multi_attention_backward(&d, AW, AK, &m, c, dq, dk, dv, dp, scratch);
    double scale, err = attn_fd_error(dq, p.q, AN * AD, &p, &scale);
    CHECK_MSG(scale > 1e-3 && err <= 1e-4 * scale, "dq: error %g of %g", err, scale);
    err = attn_fd_error(dk, p.k, AN * AKV * AHS, &p, &scale);
    CHECK_MSG(scale > 1e-3 && err <= 1e-4 * scale, "dk: error %g of %g", err, scale);
    err = attn_fd_error(dv, p.v, AN * AKV * AHS, &p, &scale);
    CHECK_MSG(scale > 1e-3 && err <= 1e-4 * scale, "dv: error %g of %g", err, scale);
    /* the STE's ∂L/∂p_k: the surrogate's derivative along each real-valued gate, chosen or not */
    err = attn_fd_error(dp, p.g, AN * AH * (AK + 1), &p, &scale);
    CHECK_MSG(scale > 1e-3 && err <= 1e-4 * scale, "dp: error %g of %g", err, scale);
    free(q), free(k), free(v), free(c), free(scratch);
}

/* ---- training: the whole model ---- */

typedef struct {
    Model m;
    TrainState s;
    int *in, *tg;
} ModelFix;

static void model_fix(ModelFix *f, int B, int T) {
    Config c = {.dim = 16, .hidden_dim = 24, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 24,
                .seq_len = 64};
    Err e;
    memset(f, 0, sizeof *f);
    CHECK(model_random(&f->m, &c, 21, &e) == 0);
    CHECK(train_init(&f->s, &f->m.c, B, T, &e) == 0);
    f->in = malloc(B * T * sizeof(int)), f->tg = malloc(B * T * sizeof(int));
    for (int i = 0; i < B * T; i++) f->in[i] = (i * 5 + 3) % c.vocab_size, f->tg[i] = (i * 11 + 1) % c.vocab_size;
}

static void model_fix_free(ModelFix *f) {
    train_free(&f->s);
    model_free(&f->m);
    free(f->in), free(f->tg);
}

/* With K = 1 and the window's vector 0, the global probability is σ(x·w):
 * the two-way router of vectors w. The task loss, the gates and ∂L/∂w are
 * the same; ∂L/∂(window's vector) is their negative. */
TEST(multi_model_with_one_window_is_the_two_way_router) {
    ModelFix a, b;
    enum { B = 2, T = 20 };
    model_fix(&a, B, T), model_fix(&b, B, T);
    const Config *c = &a.m.c;
    size_t L = c->n_layers, H = c->n_heads, d = c->dim, nr = L * H * d;
    Err e;
    int w1[1] = {3};
    CHECK(train_multi_init(&b.s, w1, 1, &e) == 0);
    float *two = rand_f(nr, 0.6f), *multi = calloc(2 * nr, sizeof(float)), *d2 = malloc(nr * 4), *dm = malloc(2 * nr * 4);
    for (size_t cell = 0; cell < L * H; cell++) memcpy(multi + (2 * cell + 1) * d, two + cell * d, d * sizeof(float));
    TrainConfig tc = {.window = 3, .sinks = 1, .tau = 0.5f, .lambda = 0, .objective = TRAIN_CE};
    double la = train_forward(&a.s, &a.m.w, two, &tc, a.in, a.tg, NULL);
    double lb = train_forward(&b.s, &b.m.w, multi, &tc, b.in, b.tg, NULL);
    CHECK_NEAR(lb, la, 1e-6 * fabs(la));
    CHECK_NEAR(b.s.global_share, a.s.global_share, 0);
    CHECK(a.s.global_share > 0.1 && a.s.global_share < 0.9);
    CHECK(memcmp(a.s.gate, b.s.gate, L * B * T * H) == 0);
    train_backward(&a.s, &a.m.w, two, d2, NULL);
    train_backward(&b.s, &b.m.w, multi, dm, NULL);
    double worst = 0, scale = 0;
    for (size_t cell = 0; cell < L * H; cell++)
        for (size_t i = 0; i < d; i++) {
            double g = d2[cell * d + i];
            scale = fmax(scale, fabs(g));
            worst = fmax(worst, fabs(dm[(2 * cell + 1) * d + i] - g));
            worst = fmax(worst, fabs(dm[(2 * cell) * d + i] + g));
        }
    CHECK_MSG(scale > 1e-5 && worst <= 1e-4 * scale, "router gradients: %g apart of %g", worst, scale);
    free(two), free(multi), free(d2), free(dm);
    model_fix_free(&a), model_fix_free(&b);
}

/* The sparsity term: mean_r is the expected share of keys read, recounted
 * here from the probabilities; its gradient on the last layer's routers
 * (which nothing downstream of the term reads) is the softmax's. */
TEST(multi_model_keys_term_and_its_gradient) {
    ModelFix f;
    enum { B = 2, T = 16 };
    model_fix(&f, B, T);
    const Config *c = &f.m.c;
    size_t L = c->n_layers, H = c->n_heads, d = c->dim, N = B * T, K = 2, nr = L * H * (K + 1) * d;
    int w[2] = {2, 6};
    Err e;
    CHECK(train_multi_init(&f.s, w, 2, &e) == 0);
    float *r = rand_f(nr, 0.8f), *g0 = malloc(nr * 4), *g1 = malloc(nr * 4);
    TrainConfig tc = {.window = 2, .sinks = 0, .tau = 0.5f, .lambda = 0, .objective = TRAIN_CE};
    train_forward(&f.s, &f.m.w, r, &tc, f.in, f.tg, NULL);
    train_backward(&f.s, &f.m.w, r, g0, NULL);
    tc.lambda = 0.7f;
    double loss = train_forward(&f.s, &f.m.w, r, &tc, f.in, f.tg, NULL);
    train_backward(&f.s, &f.m.w, r, g1, NULL);
    const float *p = f.s.multi->p;
    double share = 0, kappa[3];
    for (size_t l = 0; l < L; l++)
        for (size_t n = 0; n < N; n++) {
            int t = (int)(n % T);
            kappa[0] = (t + 1 < 2 ? t + 1 : 2) / (double)(t + 1), kappa[1] = (t + 1 < 6 ? t + 1 : 6) / (double)(t + 1);
            kappa[2] = 1;
            for (size_t h = 0; h < H; h++)
                for (size_t k = 0; k <= K; k++) share += p[((l * N + n) * H + h) * (K + 1) + k] * kappa[k];
        }
    share /= (double)L * N * H;
    CHECK_NEAR(f.s.mean_r, share, 1e-6);
    CHECK_NEAR(loss, f.s.task_loss + 0.7 * share, 1e-6);
    CHECK(share > 0.3 && share < 0.95);
    /* d(λ·share)/dW_r of the last layer: λ/(L·N·H) Σ_n p_k (κ_k − Σ_j p_j κ_j) xn1[n] */
    size_t l = L - 1;
    double worst = 0, scale = 0;
    for (size_t h = 0; h < H; h++)
        for (size_t k = 0; k <= K; k++)
            for (size_t i = 0; i < d; i++) {
                double want = 0;
                for (size_t n = 0; n < N; n++) {
                    int t = (int)(n % T);
                    kappa[0] = (t + 1 < 2 ? t + 1 : 2) / (double)(t + 1);
                    kappa[1] = (t + 1 < 6 ? t + 1 : 6) / (double)(t + 1), kappa[2] = 1;
                    const float *pc = p + ((l * N + n) * H + h) * (K + 1);
                    double mean = pc[0] * kappa[0] + pc[1] * kappa[1] + pc[2] * kappa[2];
                    want += pc[k] * (kappa[k] - mean) * f.s.xn1[(l * N + n) * d + i];
                }
                want *= 0.7 / ((double)L * N * H);
                size_t at = ((l * H + h) * (K + 1) + k) * d + i;
                scale = fmax(scale, fabs(want));
                worst = fmax(worst, fabs((g1[at] - g0[at]) - want));
            }
    CHECK_MSG(scale > 1e-6 && worst <= 1e-3 * scale, "the keys term's gradient: %g from the recount's %g", worst, scale);
    free(r), free(g0), free(g1);
    model_fix_free(&f);
}

/* ---- the command lines ---- */

TEST(multi_cli_trains_evaluates_and_refuses) {
    SKIP_UNLESS_SHARED();
    const char *out = tmp_path("multi_cli.safetensors"), *m = test_stories_model();
    int st;
    char *txt = test_runf(&st, "%s train --model %s --windows 4,16 --steps 4 --seq-len 32 --batch 2 --self 8 --out %s 2>&1",
                          test_bin(), m, out);
    CHECK_MSG(st == 0 && strstr(txt, "windows 4,16"), "%s", txt ? txt : "");
    free(txt);
    Routers r;
    Err e;
    CHECK_MSG(router_load(&r, out, 5, 8, 64, &e) == 0 && r.n_windows == 2 && r.windows[1] == 16 && r.window == 4,
              "%s", e.msg);
    router_free(&r);
    txt = test_runf(&st, "%s eval --model %s --routers %s --self 2 --seq-len 64 --keys 0.5 --json 2>/dev/null",
                    test_bin(), m, out);
    cJSON *j = st == 0 && txt ? cJSON_Parse(txt) : NULL;
    const cJSON *row = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, 0) : j;
    const cJSON *keys = cJSON_GetObjectItem(row, "keys_read_frac");
    CHECK_MSG(cJSON_IsNumber(keys) && fabs(keys->valuedouble - 0.5) < 0.01, "%s", txt ? txt : "");
    const cJSON *knob = cJSON_GetObjectItem(row, "knob");
    CHECK_MSG(cJSON_IsString(knob) && !strncmp(knob->valuestring, "windows=4,16", 12), "%s", txt ? txt : "");
    cJSON_Delete(j);
    free(txt);
    char cmd[3][2048];
    snprintf(cmd[1], sizeof cmd[1], "%s train --model %s --windows 16,4 --steps 2 --out %s", test_bin(), m,
             test_tmp("x.safetensors"));
    snprintf(cmd[2], sizeof cmd[2], "%s sweep --model %s --routers %s --policy aha --window 4 --self 2 --seq-len 32", test_bin(),
             m, out);
    CHECK_REFUSAL(cmd[1], 2, NULL, "not increasing", 1);
    CHECK_REFUSAL(cmd[2], 2, NULL, "multi-choice router", 1);
    snprintf(cmd[0], sizeof cmd[0], "%s train --model %s --windows 4,16 --window 4 --steps 2 --out %s", test_bin(), m,
             test_tmp("x.safetensors"));
    CHECK_REFUSAL(cmd[0], 2, NULL, "exclude each other", 1);
    snprintf(cmd[0], sizeof cmd[0], "%s eval --model %s --routers %s --keys 0.5 --share 0.2", test_bin(), m, out);
    CHECK_REFUSAL(cmd[0], 2, NULL, "exclude each other", 1);
}
