/* test_dist.c — the distributions pane's counts and the why block's words, against a recount.
 *
 * The distributions pane's counts and the why block's words:
 * the histogram, calibration, ROC and AUC of random traces against a
 * recount that ranks every pair of cells and scans every threshold; the
 * router's split in words, narrowed, in ASCII, and its states. */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/tui/dist_ctl.h"
#include "engine/decide.h"
#include "engine/stats.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/paint.h"
#include "views/why.h"

enum { NL = 3, NH = 4, NPOS = 60 };

static double unit(StatsRng *g) { return (double)(stats_rng_next(g) >> 11) / 9007199254740992.0; }

/* Random traces: scores (some NaN), masses as log-odds (some NaN), the
 * first positions without far keys; scores on a coarse grid make ties. */
static void make_traces(StepTrace **tr) {
    StatsRng g = stats_rng(11);
    for (int p = 0; p < NPOS; p++) {
        tr[p] = trace_new(NL, NH);
        tr[p]->pos = p, tr[p]->n_far = p < 5 ? 0 : p - 4;
        for (int i = 0; i < NL * NH; i++) {
            double u = unit(&g), v = unit(&g);
            tr[p]->score[i] = u < 0.05 ? NAN : (float)(floor(v * 40) / 40);
            double mass = 0.02 + 0.9 * unit(&g) * (0.3 + 0.7 * v); /* related to the score, noisily */
            tr[p]->oracle_logit[i] = unit(&g) < 0.05 ? NAN : (float)log(mass / (1 - mass));
        }
    }
}

/* The AUC bin eval uses for a score, recomputed: log-odds over ±64 nats in 2048 bins. */
static int auc_bin(float s) {
    double x = log((double)s) - log1p(-(double)s), f = (x + 64) / 128 * 2048;
    return f < 0 ? 0 : f >= 2047 ? 2047 : (int)f;
}

TEST(dist_counts_match_an_independent_recount) {
    StepTrace *tr[NPOS];
    make_traces(tr);
    double theta = decide_theta_logit(0.3);
    for (int pooled = 0; pooled < 2; pooled++) {
        TuiDistCount *c = calloc(1, sizeof *c);
        tui_dist_count_init(c, pooled, 2, 1, theta);
        for (int p = 0; p < NPOS; p++) tui_dist_count_add(c, tr[p]);
        tui_dist_count_finish(c);
        /* the recount: every cell in scope with a score, a mass and far keys */
        long hist[10][10] = {{0}}, cal_n[10] = {0}, cal_g[10] = {0}, n = 0, ng = 0;
        static int bin[NPOS * NL * NH], lab[NPOS * NL * NH];
        for (int p = 0; p < NPOS; p++)
            for (int i = 0; i < NL * NH; i++) {
                if (!pooled && i != 2 * NH + 1) continue;
                float s = tr[p]->score[i], o = tr[p]->oracle_logit[i];
                if (tr[p]->n_far == 0 || isnan(s) || isnan(o)) continue;
                double mass = 1 / (1 + exp(-(double)o));
                int sb = (int)((double)s * 10), mb = (int)(mass * 10); /* in double: 0.7f is below 0.7 */
                sb = sb > 9 ? 9 : sb, mb = mb > 9 ? 9 : mb;
                int label = o > theta;
                hist[mb][sb]++, cal_n[sb]++, cal_g[sb] += label;
                bin[n] = auc_bin(s), lab[n] = label, n++, ng += label;
            }
        CHECK_MSG(n > (pooled ? 400 : 30), "too few cells to test: %ld", n);
        CHECK_INT(c->d.n, n);
        CHECK_INT(c->d.n_global, ng);
        CHECK_INT(c->d.n_pos, NPOS);
        CHECK(memcmp(hist, c->d.hist, sizeof hist) == 0);
        CHECK(memcmp(cal_n, c->d.cal_n, sizeof cal_n) == 0 && memcmp(cal_g, c->d.cal_g, sizeof cal_g) == 0);
        /* AUC: every (positive, negative) pair, ties in a bin half */
        double wins = 0, pairs = 0;
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++)
                if (lab[i] && !lab[j]) pairs++, wins += bin[i] > bin[j] ? 1 : bin[i] == bin[j] ? 0.5 : 0;
        CHECK_NEAR(c->d.auc, wins / pairs, 1e-12);
        CHECK(c->d.auc > 0.5); /* the masses follow the scores */
        /* ROC: at each false-positive rate, the best threshold's true-positive rate */
        for (int k = 0; k < VIEW_DIST_ROC; k++) {
            double best = 0;
            for (int b = 0; b <= 2048; b++) {
                double tp = 0, fp = 0;
                for (long i = 0; i < n; i++)
                    if (bin[i] >= b) tp += lab[i], fp += !lab[i];
                if (fp / (n - ng) <= k / 100.0 + 1e-12 && tp / ng > best) best = tp / ng;
            }
            CHECK_MSG(fabs(c->d.roc[k] - best) < 1e-6, "roc at %d%%: %g, recount %g", k, c->d.roc[k], best);
        }
        CHECK_NEAR(c->d.roc[VIEW_DIST_ROC - 1], 1, 0);
        free(c);
    }
    for (int p = 0; p < NPOS; p++) trace_free(tr[p]);
}

TEST(dist_auc_is_nan_without_both_labels_and_a_run_without_scores_counts_nothing) {
    StepTrace *t = trace_new(1, 1);
    t->pos = 9, t->n_far = 3, t->score[0] = 0.7f, t->oracle_logit[0] = 2;
    TuiDistCount c;
    tui_dist_count_init(&c, 0, 0, 0, 0);
    tui_dist_count_add(&c, t);
    tui_dist_count_finish(&c);
    CHECK_INT(c.d.n, 1);
    CHECK(isnan(c.d.auc) && c.d.ready);
    t->score[0] = NAN;
    tui_dist_count_init(&c, 1, 0, 0, 0);
    tui_dist_count_add(&c, t);
    tui_dist_count_finish(&c);
    CHECK_INT(c.d.n, 0);
    trace_free(t);
}

/* A model of 2 × 2 heads at 8 positions, cursor on the last, L1 H0 selected. */
static void why_model(ViewModel *m) {
    view_init(m, 2, 2, NULL);
    fx_fill(m, 8);
    m->cursor = 7, m->sel_layer = 1, m->sel_head = 0;
}

TEST(why_words_the_router_split_and_oracle_err) {
    setlocale(LC_ALL, "C.UTF-8"); /* widths of ·, − and σ, as the TUI measures them */
    ViewModel m;
    why_model(&m);
    char l[VIEW_WHY_LINES][VIEW_WHY_CAP];
    const StepTrace *t = view_trace(&m, 7);
    CHECK(t != NULL);
    if (!t) return;
    int n = view_why_lines(&m, 200, l);
    CHECK_INT(n, 2);
    CHECK_MSG(strstr(l[0], "not known yet") != NULL, "%s", l[0]);
    m.why = (ViewWhy){.pos = t->pos, .layer = 1, .head = 0, .state = VIEW_WHY_OK, .logit = 0.16, .bias = -0.1,
                      .norm = 8.125, .rest = -0.13, .dim = 64, .n_top = 3, .top_dim = {12, 3, 40},
                      .top_xw = {0.41, -0.22, 0.2}};
    n = view_why_lines(&m, 200, l);
    CHECK_INT(n, 3);
    CHECK_MSG(strstr(l[0], "router logit +0.16 \xe2\x86\x92 \xcf\x83 0.54") && strstr(l[0], "8.12 over 64 dims") &&
                  strstr(l[0], "bias \xe2\x88\x92" "0.10"),
              "%s", l[0]);
    CHECK_MSG(strstr(l[1], "d12 +0.41 \xc2\xb7 d3 \xe2\x88\x92" "0.22 \xc2\xb7 d40 +0.20 \xc2\xb7 "
                           "rest \xe2\x88\x92" "0.13 (61 dims)"),
              "%s", l[1]);
    m.why.logit = -5.93; /* σ 0.0027: in its tail form, not 0.00 (the organism's L0 H0 at its passkey answer) */
    view_why_lines(&m, 200, l);
    CHECK_MSG(strstr(l[0], "router logit \xe2\x88\x92" "5.93 \xe2\x86\x92 \xcf\x83 0.003 "), "%s", l[0]);
    m.why.logit = 0.16;
    /* narrow: the terms that do not fit join the rest (-0.13 + 0.20 = +0.07) */
    n = view_why_lines(&m, 57, l);
    CHECK_MSG(strstr(l[1], "d3 \xe2\x88\x92" "0.22 \xc2\xb7 rest +0.07 (62 dims)") && !strstr(l[1], "d40"), "%s",
              l[1]);
    CHECK(view_text_width(l[1], 0) <= 57);
    /* oracle_err, from the trace, with its words */
    double err = t->oracle_err[1 * 2 + 0];
    char want[64];
    snprintf(want, sizeof want, "oracle_err %.3f: going local changes this head's output %s", err,
             view_why_err_words(err));
    CHECK_MSG(strstr(l[2], want) != NULL, "%s / %s", l[2], want);
    CHECK(!strcmp(view_why_err_words(0.005), "hardly") && !strcmp(view_why_err_words(0.03), "slightly") &&
          !strcmp(view_why_err_words(0.1), "noticeably") && !strcmp(view_why_err_words(0.3), "substantially") &&
          !strcmp(view_why_err_words(0.7), "mostly"));
    /* ASCII */
    m.ascii = 1;
    view_why_lines(&m, 200, l);
    CHECK_MSG(strstr(l[0], "router logit +0.16 -> sigma 0.54 | ||x|| 8.12 over 64 dims | bias -0.10") &&
                  strstr(l[1], "x.w by dim: d12 +0.41 | d3 -0.22"),
              "%s / %s", l[0], l[1]);
    m.ascii = 0;
    /* another head, or a replay: no stale terms */
    m.sel_head = 1;
    view_why_lines(&m, 200, l);
    CHECK(strstr(l[0], "not known yet") != NULL);
    m.sel_head = 0, m.why.state = VIEW_WHY_REPLAY;
    view_why_lines(&m, 200, l);
    CHECK(strstr(l[0], "live sessions only") != NULL);
    m.why.state = VIEW_WHY_NO_ROUTER;
    view_why_lines(&m, 200, l);
    CHECK(strstr(l[0], "router: none in this run") != NULL);
    view_free(&m);
}
