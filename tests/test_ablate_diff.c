/* test_ablate_diff.c — what an ablation changes (app/ablate_diff.h) against a recount.
 *
 * Two runs of stories260K over the same tokens, the parent under full
 * attention and the child with heads forced local from a position on:
 * ablate_diff_run's KL(parent || child) and -log p at every compared
 * position against tests/ablate_ref.py's float64 recount from logits the
 * test computes on its own (a fresh prefill up to each position, where the
 * module feeds a token at a time), its greedy continuations against argmax
 * recounted the same way, and the parent's -log p against the parent run's
 * own trace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/ablate_diff.h"
#include "engine/decide.h"
#include "tests/stories.h"
#include "tests/test.h"

/* The logits that predict token n (after feeding ids[0 … n)) under a, by a fresh prefill. */
static int logits_after(const Model *m, const AttnConfig *a, const int *ids, int n, float *out) {
    Session s;
    Err e;
    if (session_init(&s, m, NULL, a, m->c.seq_len, 0, 1, 1, 1, &e) || session_start_ids(&s, ids, n, &e)) {
        test_fail(__FILE__, __LINE__, "%s", e.msg);
        session_free(&s);
        return -1;
    }
    int fed = session_prefill(&s, NULL);
    memcpy(out, s.prev_logits, (size_t)m->c.vocab_size * sizeof *out);
    session_free(&s);
    return fed == n ? 0 : -1;
}

static void write_row(FILE *f, const float *l, int v) {
    fputc('[', f);
    for (int i = 0; i < v; i++) fprintf(f, "%s%.9g", i ? "," : "", l[i]);
    fputc(']', f);
}

/* The recount's input: ids, from, and both runs' logits at every compared position. */
static int write_ref(const char *path, const Model *m, const AttnConfig *const a[2], const int *ids, int n, int from) {
    int v = m->c.vocab_size, rc = 0;
    float *l = malloc((size_t)v * sizeof *l);
    FILE *f = fopen(path, "w");
    if (!f || !l) { free(l); if (f) fclose(f); return -1; }
    fprintf(f, "{\"from\": %d, \"ids\": [", from);
    for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? "," : "", ids[i]);
    fprintf(f, "]");
    for (int k = 0; k < 2 && rc == 0; k++) {
        fprintf(f, ", \"%s\": [", k ? "child" : "parent");
        for (int t = from; t < n && rc == 0; t++) {
            rc = logits_after(m, a[k], ids, t + 1, l);
            if (t > from) fputc(',', f);
            write_row(f, l, v);
        }
        fprintf(f, "]");
    }
    fprintf(f, "}\n");
    fclose(f);
    free(l);
    return rc;
}

/* Each line "t kl nll_p nll_q" of the recount against d. */
static int compare_ref(const AblateDiff *d, const char *out) {
    int lines = 0;
    for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
        int t;
        double kl, a, b;
        if (sscanf(s, "%d %lf %lf %lf", &t, &kl, &a, &b) != 4) continue;
        lines++;
        if (t < d->from || t >= d->n) { test_fail(__FILE__, __LINE__, "recount at pos %d, outside", t); continue; }
        int i = t - d->from;
        CHECK_MSG(fabs(d->kl[i] - kl) <= 1e-4 + 1e-4 * kl, "pos %d: KL %.9f, recount %.9f", t, d->kl[i], kl);
        if (isnan(a)) { CHECK(isnan(d->nll_parent[i]) && isnan(d->nll_child[i]) && d->next[i] == -1); continue; }
        CHECK_MSG(fabs(d->nll_parent[i] - a) <= 1e-4 + 1e-5 * a, "pos %d: parent %.9f, recount %.9f", t,
                  d->nll_parent[i], a);
        CHECK_MSG(fabs(d->nll_child[i] - b) <= 1e-4 + 1e-5 * b, "pos %d: child %.9f, recount %.9f", t,
                  d->nll_child[i], b);
    }
    return lines;
}

static int argmax(const float *l, int v) {
    int b = 0;
    for (int i = 1; i < v; i++)
        if (l[i] > l[b]) b = i;
    return b;
}

/* Each continuation token is the argmax after the run and the tokens before it. */
static void check_continuation(const Model *m, const AttnConfig *a, const int *ids, int n, const int *cont, int n_cont,
                               int want) {
    int *all = malloc((size_t)(n + n_cont) * sizeof *all);
    float *l = malloc((size_t)m->c.vocab_size * sizeof *l);
    memcpy(all, ids, (size_t)n * sizeof *all);
    for (int j = 0; j < n_cont; j++) {
        if (logits_after(m, a, all, n + j, l)) break;
        CHECK_MSG(argmax(l, m->c.vocab_size) == cont[j], "token %d: %d, argmax %d", j, cont[j],
                  argmax(l, m->c.vocab_size));
        all[n + j] = cont[j];
    }
    /* a shorter continuation ended on the stop token (llama2.c's BOS) */
    CHECK_MSG(n_cont == want || (n_cont > 0 && cont[n_cont - 1] == 1), "%d of %d tokens, the last %d", n_cont, want,
              n_cont ? cont[n_cont - 1] : -1);
    free(all), free(l);
}

TEST(ablate_diff_matches_a_float64_recount_of_both_runs) {
    SKIP_UNLESS_SHARED();
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy"); return; }
    Model m;
    Err e;
    if (test_load_stories(&m, NULL, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    enum { N = 40, FROM = 24, K = 8 };
    int ids[N];
    ids[0] = 1;
    for (int i = 1; i < N; i++) ids[i] = 3 + (i * 37) % (m.c.vocab_size - 3);
    AttnConfig pa = aha_defaults(), ch;
    pa.policy = POLICY_FULL, pa.window = 4;
    int8_t *force = malloc((size_t)m.c.n_layers * m.c.n_heads);
    int from = -1;
    CHECK_INT(decide_force_parse("L1=local,L2H1=local@24", m.c.n_layers, m.c.n_heads, force, &from, &e), 0);
    ch = pa, ch.force = force, ch.force_from = from;
    AblateDiff d;
    CHECK_INT(ablate_diff_run(&m, &pa, &ch, ids, N, FROM, K, 1, NULL, NULL, &d, &e), 0);
    CHECK_INT(d.from, FROM);
    CHECK_INT(d.n, N);
    const AttnConfig *a[2] = {&pa, &ch};
    const char *in = test_tmp("ablate_ref.json");
    CHECK_INT(write_ref(in, &m, a, ids, N, FROM), 0);
    int st;
    char *out = test_runf(&st, "'%s' tests/ablate_ref.py '%s'", py, in);
    CHECK_INT(st, 0);
    CHECK_INT(compare_ref(&d, out), N - FROM);
    free(out);
    int top = ablate_diff_argmax(&d);
    CHECK_MSG(top >= FROM && d.kl[top - FROM] > 1e-3, "the largest KL %g at %d: the ablation changed nothing",
              top >= FROM ? d.kl[top - FROM] : NAN, top);
    for (int i = 0; i < N - FROM; i++) CHECK_MSG(d.kl[i] <= d.kl[top - FROM], "pos %d beats the largest", FROM + i);
    check_continuation(&m, &pa, ids, N, d.cont[0], d.n_cont[0], K);
    check_continuation(&m, &ch, ids, N, d.cont[1], d.n_cont[1], K);
    CHECK_INT(d.cont_want, K);
    ablate_diff_free(&d);
    free(force);
    model_free(&m);
}

/* The same settings in both runs: nothing changes, and the continuations agree. */
TEST(ablate_diff_of_a_run_against_itself_is_zero) {
    SKIP_UNLESS_SHARED();
    Model m;
    Err e;
    if (test_load_stories(&m, NULL, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    int ids[20] = {1};
    for (int i = 1; i < 20; i++) ids[i] = 3 + (i * 53) % (m.c.vocab_size - 3);
    AttnConfig a = aha_defaults();
    a.policy = POLICY_FULL;
    AblateDiff d;
    CHECK_INT(ablate_diff_run(&m, &a, &a, ids, 20, 5, 6, 1, NULL, NULL, &d, &e), 0);
    for (int i = 0; i < 14; i++) CHECK_MSG(d.kl[i] == 0 && d.nll_parent[i] == d.nll_child[i], "pos %d", 5 + i);
    CHECK(d.kl[14] == 0 && isnan(d.nll_parent[14]) && d.next[14] == -1);
    CHECK_INT(ablate_diff_cont_split(&d), -1);
    ablate_diff_free(&d);
    CHECK_INT(ablate_diff_run(&m, &a, &a, ids, 20, 20, 6, 1, NULL, NULL, &d, &e), -1);
    CHECK_MSG(strstr(e.msg, "position 20") != NULL, "%s", e.msg);
    model_free(&m);
}

/* KL of two known distributions: p = (1/2, 1/2), q = (1/4, 3/4). */
TEST(ablate_kl_of_two_known_distributions) {
    float lp[2] = {0, 0}, lq[2] = {0, (float)log(3.0)};
    double a, b, kl = ablate_kl_logits(lp, lq, 2, 1, &a, &b);
    double want = 0.5 * log(0.5 / 0.25) + 0.5 * log(0.5 / 0.75);
    CHECK_MSG(fabs(kl - want) < 1e-7, "KL %.9f, want %.9f", kl, want);
    CHECK(fabs(a - log(2.0)) < 1e-7 && fabs(b - log(4.0 / 3.0)) < 1e-7);
    CHECK(ablate_kl_logits(lp, lp, 2, -1, &a, &b) == 0 && isnan(a) && isnan(b));
}
