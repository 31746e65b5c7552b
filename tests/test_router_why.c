/* test_router_why.c — the router's logit split into its largest terms, against a float64 recount.
 *
 * The router's logit split into its largest terms:
 * against a float64 recount that sorts every term (random vectors, ties,
 * k past the width), and against the scores a session's traces carry
 * (the kept router inputs at every layer and position, prefill and decode). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/router_why.h"
#include "engine/routers.h"
#include "engine/session.h"
#include "engine/stats.h"
#include "tests/stories.h"
#include "tests/test.h"

static double mag_of[4096];

static int by_magnitude(const void *a, const void *b) {
    int i = *(const int *)a, j = *(const int *)b;
    double x = fabs(mag_of[i]), y = fabs(mag_of[j]);
    return x > y ? -1 : x < y ? 1 : i - j;
}

/* The split recounted: every product, sorted, the first k named. */
static void check_against_sort(const float *x, const float *w, float bias, int dim, int k) {
    RouterWhy r;
    router_why(x, w, bias, dim, k, &r);
    int idx[4096];
    double total = 0, sq = 0;
    for (int i = 0; i < dim; i++) {
        mag_of[i] = (double)x[i] * (double)w[i], idx[i] = i;
        total += mag_of[i], sq += (double)x[i] * x[i];
    }
    qsort(idx, dim, sizeof *idx, by_magnitude);
    int want = k < dim ? k : dim;
    if (want > ROUTER_WHY_TOP) want = ROUTER_WHY_TOP;
    CHECK_INT(r.n_top, want);
    double named = 0;
    for (int j = 0; j < r.n_top && j < want; j++) {
        CHECK_INT(r.top[j].dim, idx[j]);
        CHECK_NEAR(r.top[j].xw, mag_of[idx[j]], 1e-12);
        CHECK(r.top[j].x == x[idx[j]] && r.top[j].w == w[idx[j]]);
        named += mag_of[idx[j]];
    }
    CHECK_NEAR(r.logit, total + bias, 1e-9);
    CHECK_NEAR(r.rest, total - named, 1e-9);
    CHECK_NEAR(r.norm, sqrt(sq), 1e-9);
    CHECK_NEAR(r.bias, bias, 0);
    CHECK_INT(r.dim, dim);
}

static double uniform(StatsRng *g) { return (double)(stats_rng_next(g) >> 11) / 9007199254740992.0; }

TEST(router_why_splits_the_logit_like_a_float64_recount) {
    StatsRng g = stats_rng(7);
    float x[512], w[512];
    static const int DIMS[] = {1, 3, 6, 7, 64, 512}, KS[] = {0, 1, 3, 6, 9};
    for (size_t di = 0; di < sizeof DIMS / sizeof DIMS[0]; di++)
        for (size_t ki = 0; ki < sizeof KS / sizeof KS[0]; ki++) {
            for (int i = 0; i < DIMS[di]; i++) x[i] = (float)(uniform(&g) * 4 - 2), w[i] = (float)(uniform(&g) - 0.5);
            check_against_sort(x, w, (float)(uniform(&g) - 0.5), DIMS[di], KS[ki]);
        }
    /* ties in magnitude, of both signs: the lower dimension first */
    for (int i = 0; i < 8; i++) x[i] = 1, w[i] = i % 2 ? -0.5f : 0.5f;
    x[5] = 3;
    check_against_sort(x, w, 0, 8, 4);
    RouterWhy r;
    router_why(x, w, 0, 8, 4, &r);
    CHECK_INT(r.top[0].dim, 5);
    CHECK_INT(r.top[1].dim, 0);
    CHECK_INT(r.top[2].dim, 1);
    CHECK(r.top[0].xw < 0); /* signed: dimension 5 pulled towards local */
}

/* Every (position, layer, head) of a prompt and a few decode steps: σ of
 * the recounted logit is the score the trace carries. */
TEST(router_why_at_matches_the_traced_scores) {
    SKIP_UNLESS_SHARED();
    Model m;
    Tokenizer tok;
    Err e;
    if (test_load_stories(&m, &tok, &e)) { CHECK_MSG(0, "%s", e.msg); return; }
    Routers rt;
    CHECK(router_random(&rt, m.c.n_layers, m.c.n_heads, m.c.dim, 5, &e) == 0);
    float *bias = malloc((size_t)m.c.n_layers * m.c.n_heads * sizeof *bias);
    for (int i = 0; i < m.c.n_layers * m.c.n_heads; i++) bias[i] = 0.1f * (i % 5) - 0.2f;
    AttnConfig a = aha_defaults(), none_cfg = aha_defaults();
    a.routers = rt.w, a.router_bias = bias, a.window = 8, a.sinks = 1;
    Session s;
    CHECK(session_init(&s, &m, &tok, &a, 300, 0, 1, 1, 1, &e) == 0);
    CHECK(fwd_keep_router_history(&s.rs, &e) == 0);
    RouterWhy r;
    CHECK_INT(router_why_at(&m, &s.rs, &s.attn, 0, 0, 0, 3, &r), -2); /* nothing fed yet */
    char prompt[2048] = ""; /* past 128 tokens: a recount's prefill takes two chunks */
    for (int i = 0; i < 14; i++) strcat(prompt, "Once upon a time, there was a little girl. ");
    CHECK(session_start_text(&s, prompt, strlen(prompt), &e) == 0);
    int n = session_prompt_pending(&s);
    CHECK_MSG(n > 130 && n + 4 <= 256, "the prompt is %d tokens", n);
    StepTrace *tr[256];
    for (int i = 0; i < n + 4; i++) tr[i] = trace_new(m.c.n_layers, m.c.n_heads);
    CHECK_INT(session_prefill(&s, tr), n);
    for (int i = 0; i < 4; i++) CHECK_INT(session_step(&s, tr[n + i]), 1);
    double worst = 0;
    for (int p = 0; p < n + 4; p++)
        for (int l = 0; l < m.c.n_layers; l++)
            for (int h = 0; h < m.c.n_heads; h++) {
                CHECK_INT(router_why_at(&m, &s.rs, &s.attn, l, h, p, 3, &r), 0);
                double score = 1 / (1 + exp(-r.logit)), d = fabs(score - tr[p]->score[l * m.c.n_heads + h]);
                if (d > worst) worst = d;
                CHECK(r.n_top == 3 && fabs(r.top[0].xw) >= fabs(r.top[2].xw));
            }
    CHECK_MSG(worst < 1e-5, "sigma(logit) differs from the traced score by %g", worst);
    /* recomputed by a prefill of its own, as for a model too large to keep
     * them: the same split but for a prefill's rounding (one chunk, and two
     * whose second ends at pos) */
    for (int p = 0; p < n + 4; p += 23)
        for (int l = 0; l < m.c.n_layers; l += 2) {
            RouterWhy k, re;
            CHECK_INT(router_why_at(&m, &s.rs, &s.attn, l, 3, p, 3, &k), 0);
            CHECK_INT(router_why_recompute(&m, &s.attn, s.ids, p, l, 3, 1, 3, &re, &e), 0);
            CHECK_MSG(fabs(k.logit - re.logit) < 1e-4 && fabs(k.norm - re.norm) < 1e-4 * k.norm &&
                          k.top[0].dim == re.top[0].dim,
                      "pos %d L%d: kept %g, recomputed %g", p, l, k.logit, re.logit);
        }
    /* a chunk at a time: progress after each, the same split at the end,
     * and stopped part-way its state freed (the sanitizer build checks) */
    {
        int p = n + 3;
        RouterWhyFeed f;
        RouterWhy whole, fed;
        CHECK_INT(router_why_recompute(&m, &s.attn, s.ids, p, 1, 3, 1, 3, &whole, &e), 0);
        CHECK_INT(router_why_feed_begin(&f, &m, &s.attn, p, 1, 3, 1, 3, &e), 0);
        int chunks = 0, last = 0;
        while (!router_why_feed_step(&f, &m, &s.attn, s.ids, &fed)) {
            CHECK(f.done > last && f.done <= p);
            last = f.done, chunks++;
        }
        CHECK_INT(f.done, p + 1);
        CHECK_MSG(chunks == p / 128, "%d chunks before the last for pos %d", chunks, p);
        CHECK(fed.logit == whole.logit && fed.norm == whole.norm && fed.top[0].dim == whole.top[0].dim);
        router_why_feed_end(&f);
        CHECK_INT(router_why_feed_begin(&f, &m, &s.attn, p, 0, 0, 1, 3, &e), 0);
        CHECK_INT(router_why_feed_step(&f, &m, &s.attn, s.ids, &fed), 0);
        router_why_feed_end(&f);
        CHECK_INT(router_why_feed_begin(&f, &m, &none_cfg, p, 0, 0, 1, 3, &e), -1);
    }
    CHECK_INT(router_why_recompute(&m, &none_cfg, s.ids, 2, 0, 0, 1, 3, &r, &e), -1);
    CHECK_INT(router_why_at(&m, &s.rs, &s.attn, 0, 0, n + 4, 3, &r), -2); /* not fed */
    CHECK_INT(router_why_at(&m, &s.rs, &none_cfg, 0, 0, 0, 3, &r), -1);  /* no router */
    for (int i = 0; i < n + 4; i++) trace_free(tr[i]);
    session_free(&s);
    free(bias);
    router_free(&rt);
    tok_free(&tok);
    model_free(&m);
}
