/* test_views_explain.c — the inspector's verdict lines for each predictor and threshold.
 *
 * The inspector's verdict lines (views/explain.h): each predictor global
 * and local with its threshold, a value equal to its threshold (local:
 * every rule is strict), values not computed, a position with no choice,
 * ASCII spelling and the tails of the mass estimates. */
#include <math.h>
#include <string.h>

#include "engine/decide.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/explain.h"
#include "views/paint.h"
#include "views/pin.h"

/* One layer, one head at pos 40 with far keys; τ 0.5, θ 10%, policy aha. */
static StepTrace *one_cell(ViewModel *m) {
    view_init(m, 1, 1, NULL);
    m->hdr.tau = 0.5f;
    m->hdr.theta_logit = decide_theta_logit(0.1);
    snprintf(m->hdr.policy, sizeof m->hdr.policy, "aha");
    StepTrace *t = trace_new(1, 1);
    t->pos = 40;
    t->n_far = 24;
    return t;
}

static void set_masses(StepTrace *t, double oracle, double qada, double bulk) {
    t->oracle_logit[0] = (float)decide_theta_logit(oracle);
    t->qada_logit[0] = (float)decide_theta_logit(qada);
    t->qada_bulk_logit[0] = (float)decide_theta_logit(bulk);
}

#define CHECK_STR(got, want) CHECK_MSG(!strcmp(got, want), "\"%s\", expected \"%s\"", got, want)

#define CHECK_LINE(x, i, want)                                                                                  \
    CHECK_MSG(!strcmp((x).line[i], want), "line %d: \"%s\", expected \"%s\"", i, (x).line[i], want)

TEST(views_explain_global_verdicts_with_thresholds) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    t->score[0] = 0.51f;
    t->gate[0] = 1;
    set_masses(t, 0.31, 0.93, 0.05);
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_INT(x.n, VIEW_EXPLAIN_LINES);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router 0.51 > \xcf\x84 0.50 \xe2\x86\x92 global \xc2\xb7 needed and taken");
    CHECK_LINE(x, VIEW_EXPLAIN_ORACLE,
               "oracle: 31% of the mass is outside the window > \xce\xb8 10% \xe2\x86\x92 needed");
    /* QAdA was computed beside AHA, not executed: what it would have done */
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 93% > \xce\xb8 10% \xe2\x86\x92 global \xc2\xb7 needed, would take it");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA_BULK,
               "qada_bulk estimate 5% \xe2\x89\xa4 \xce\xb8 10% \xe2\x86\x92 local \xc2\xb7 would miss it");
    CHECK_LINE(x, VIEW_EXPLAIN_GATE, "executed global under policy aha \xc2\xb7 needed and taken");
    for (int i = 0; i < VIEW_EXPLAIN_LINES; i++) /* the REM pair was not given values here */
        CHECK_INT(x.decision[i], i == VIEW_EXPLAIN_QADA_REM || i == VIEW_EXPLAIN_QADA_REM_BULK ? -1
                                 : i != VIEW_EXPLAIN_QADA_BULK);
    /* where each agreement starts, and its class */
    CHECK(!strcmp(x.line[VIEW_EXPLAIN_ROUTER] + x.agree_at[VIEW_EXPLAIN_ROUTER], "needed and taken"));
    CHECK(!strcmp(x.brief[VIEW_EXPLAIN_ROUTER] + x.brief_agree_at[VIEW_EXPLAIN_ROUTER], "agrees"));
    CHECK_INT(x.agree_sw[VIEW_EXPLAIN_ROUTER], VIEW_SW_BOTH_GLOBAL);
    CHECK(!strcmp(x.brief[VIEW_EXPLAIN_QADA_BULK] + x.brief_agree_at[VIEW_EXPLAIN_QADA_BULK], "missed"));
    CHECK_INT(x.agree_sw[VIEW_EXPLAIN_QADA_BULK], VIEW_SW_MISSED_GLOBAL);
    CHECK_INT(x.agree_at[VIEW_EXPLAIN_ORACLE], 0); /* the oracle is the label itself */
    trace_free(t);
    view_free(&m);
}

TEST(views_explain_local_verdicts_and_needless) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    t->score[0] = 0.3f;
    t->gate[0] = 0;
    set_masses(t, 0.02, 0.4, 0.01);
    m.hdr.sinks = 4;
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER,
               "router 0.30 \xe2\x89\xa4 \xcf\x84 0.50 \xe2\x86\x92 local \xc2\xb7 not needed, not taken");
    CHECK_LINE(x, VIEW_EXPLAIN_ORACLE,
               "oracle: 2% of the mass is outside sinks+window \xe2\x89\xa4 \xce\xb8 10% \xe2\x86\x92 not needed");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 40% > \xce\xb8 10% \xe2\x86\x92 global \xc2\xb7 would be needless");
    CHECK_LINE(x, VIEW_EXPLAIN_GATE, "executed local under policy aha \xc2\xb7 not needed, not taken");
    CHECK_INT(x.decision[VIEW_EXPLAIN_ORACLE], 0);
    trace_free(t);
    view_free(&m);
}

TEST(views_explain_equal_to_threshold_is_local) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    t->score[0] = 0.5f;
    set_masses(t, 0.1, 0.1, 0.1);
    /* θ exactly as the trace holds it, so the oracle's mass equals θ */
    m.hdr.theta_logit = (double)t->oracle_logit[0];
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router 0.50 \xe2\x89\xa4 \xcf\x84 0.50 \xe2\x86\x92 local \xc2\xb7 not needed, not taken");
    CHECK_LINE(x, VIEW_EXPLAIN_ORACLE,
               "oracle: 10% of the mass is outside the window \xe2\x89\xa4 \xce\xb8 10% \xe2\x86\x92 not needed");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 10% \xe2\x89\xa4 \xce\xb8 10% \xe2\x86\x92 local \xc2\xb7 not needed, would skip it");
    for (int i = 0; i < VIEW_EXPLAIN_GATE; i++) CHECK_INT(x.decision[i], 0);
    /* just above: enough decimals to show why it is global */
    t->score[0] = 0.501f;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router 0.501 > \xcf\x84 0.500 \xe2\x86\x92 global \xc2\xb7 needless");
    trace_free(t);
    view_free(&m);
}

TEST(views_explain_missing_values) {
    ViewModel m;
    StepTrace *t = one_cell(&m); /* nothing computed: no router, not profiled, no gate */
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router: no score");
    CHECK_LINE(x, VIEW_EXPLAIN_ORACLE, "oracle: not profiled");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA: not profiled");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA_BULK, "qada_bulk: not profiled");
    CHECK_LINE(x, VIEW_EXPLAIN_GATE, "executed: not recorded");
    for (int i = 0; i < VIEW_EXPLAIN_LINES; i++) CHECK_INT(x.decision[i], -1);
    /* a router without a profiled oracle: the verdict, no agreement */
    t->score[0] = 0.7f;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router 0.70 > \xcf\x84 0.50 \xe2\x86\x92 global");
    trace_free(t);
    view_free(&m);
}

TEST(views_explain_no_choice_without_far_keys) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    t->pos = 7;
    t->n_far = 0;
    t->score[0] = 0.9f;
    set_masses(t, 0.5, 0.5, 0.5);
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_INT(x.n, 1);
    CHECK_LINE(x, 0, "no far keys at pos 7: global and local read the same keys");
    CHECK_INT(x.decision[0], -1);
    trace_free(t);
    view_free(&m);
}

TEST(views_explain_ascii_spells_thresholds_out) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    m.ascii = 1;
    t->score[0] = 0.51f;
    t->gate[0] = 1;
    set_masses(t, 0.31, 0.05, 0.93);
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router 0.51 > tau 0.50 -> global | needed and taken");
    CHECK_LINE(x, VIEW_EXPLAIN_ORACLE, "oracle: 31% of the mass is outside the window > theta 10% -> needed");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 5% <= theta 10% -> local | would miss it");
    for (int i = 0; i < x.n; i++)
        for (const char *c = x.line[i]; *c; c++) CHECK_MSG((unsigned char)*c < 0x80, "non-ASCII in \"%s\"", x.line[i]);
    trace_free(t);
    view_free(&m);
}

TEST(views_explain_tails_and_near_ties_of_the_masses) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    t->oracle_logit[0] = -30.0f;  /* ~1e-13 of the mass: not "0%" */
    t->qada_logit[0] = 30.0f;     /* all but ~1e-13: not "100%" */
    t->qada_bulk_logit[0] = (float)decide_theta_logit(0.1004);
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ORACLE,
               "oracle: <1% of the mass is outside the window \xe2\x89\xa4 \xce\xb8 10% \xe2\x86\x92 not needed");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate >99% > \xce\xb8 10% \xe2\x86\x92 global \xc2\xb7 would be needless");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA_BULK,
               "qada_bulk estimate 10.04% > \xce\xb8 10.00% \xe2\x86\x92 global \xc2\xb7 would be needless");
    /* a mass so close to all of it that its probability rounds to 1.0 still reads >99% */
    t->qada_logit[0] = 60.0f;
    CHECK(decide_prob(60.0) == 1.0);
    view_explain(&m, t, 0, &x);
    CHECK_MSG(strstr(x.line[VIEW_EXPLAIN_QADA], ">99%") && !strstr(x.line[VIEW_EXPLAIN_QADA], "100%"), "%s",
              x.line[VIEW_EXPLAIN_QADA]);
    CHECK_MSG(strstr(x.brief[VIEW_EXPLAIN_QADA], "QAdA >99%") != NULL, "%s", x.brief[VIEW_EXPLAIN_QADA]);
    CHECK(view_explain_agreement(1, -1, 1) == NULL);
    CHECK(!strcmp(view_explain_agreement(0, 1, 1), "missed"));
    CHECK(!strcmp(view_explain_agreement(0, 1, 0), "would miss it"));
    trace_free(t);
    view_free(&m);
}

/* Characters of UTF-8 text (every one used here is one column wide). */
static int chars(const char *s) {
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

TEST(views_explain_brief_forms_for_narrow_panes) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    t->score[0] = 0.51f;
    t->gate[0] = 1;
    set_masses(t, 0.31, 0.05, 0.93);
    m.hdr.theta_logit = decide_theta_logit(0.5); /* θ 50%: the oracle says not needed */
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router 0.51 > \xcf\x84 0.50 \xe2\x86\x92 global \xc2\xb7 needless");
    CHECK_MSG(!strcmp(x.brief[VIEW_EXPLAIN_ORACLE], "oracle 31% \xe2\x89\xa4 \xce\xb8 50% \xe2\x86\x92 not needed"),
              "%s", x.brief[VIEW_EXPLAIN_ORACLE]);
    CHECK_MSG(!strcmp(x.brief[VIEW_EXPLAIN_QADA], "QAdA 5% \xe2\x89\xa4 \xce\xb8 50% \xe2\x86\x92 local \xc2\xb7 agrees"),
              "%s", x.brief[VIEW_EXPLAIN_QADA]);
    CHECK_MSG(!strcmp(x.brief[VIEW_EXPLAIN_QADA_BULK],
                      "q_bulk 93% > \xce\xb8 50% \xe2\x86\x92 global \xc2\xb7 needless"),
              "%s", x.brief[VIEW_EXPLAIN_QADA_BULK]);
    CHECK_MSG(!strcmp(x.brief[VIEW_EXPLAIN_GATE], "executed global \xc2\xb7 needless"), "%s", x.brief[VIEW_EXPLAIN_GATE]);
    for (int i = 0; i < VIEW_EXPLAIN_LINES; i++) CHECK(chars(x.brief[i]) <= 39); /* a 41-column pane */
    /* missing values and no choice have brief forms too */
    t->score[0] = NAN;
    view_explain(&m, t, 0, &x);
    CHECK(!strcmp(x.brief[VIEW_EXPLAIN_ROUTER], "router: no score"));
    t->n_far = 0;
    view_explain(&m, t, 0, &x);
    CHECK(!strcmp(x.brief[0], "pos 40: no far keys, no choice"));
    trace_free(t);
    view_free(&m);
}

/* Weights of pos 9 over 0 … 9 with 1 sink and a window of 4 (6 … 9). */
static void attn_fixture(ViewAttn *at, float *w) {
    static const float wts[10] = {0.20f, 0.02f, 0.15f, 0.03f, 0.15f, 0.05f, 0.1f, 0.1f, 0.1f, 0.1f};
    memcpy(w, wts, sizeof wts);
    *at = (ViewAttn){.pos = 9, .layer = 0, .head = 0, .n = 10, .w = w, .cap = 10, .window = 4, .sinks = 1};
}

TEST(views_explain_attention_split_and_top_far) {
    float w[10];
    ViewAttn at;
    attn_fixture(&at, w);
    ViewAttnSplit s;
    view_attn_split(&at, &s);
    CHECK_INT(s.window_start, 6);
    CHECK_NEAR(s.sinks, 0.20, 1e-6);
    CHECK_NEAR(s.window, 0.40, 1e-6);
    CHECK_NEAR(s.far, 0.40, 1e-6);
    CHECK_INT(s.n_top, 5); /* far: 1 … 5 */
    /* heaviest first; 2 and 4 tie at 0.15, the earlier first */
    int want[5] = {2, 4, 5, 3, 1};
    for (int k = 0; k < 5; k++) CHECK_INT(s.top_pos[k], want[k]);
    /* no window (0): every key is local, nothing far */
    at.window = 0;
    view_attn_split(&at, &s);
    CHECK_INT(s.n_top, 0);
    CHECK_NEAR(s.far, 0, 0);
    /* more far positions than the ranking holds: the heaviest are kept */
    float many[40];
    for (int i = 0; i < 40; i++) many[i] = (float)(i % 10) / 100.0f;
    ViewAttn big = {.pos = 39, .n = 40, .w = many, .cap = 40, .window = 4, .sinks = 0};
    view_attn_split(&big, &s);
    CHECK_INT(s.n_top, VIEW_ATTN_TOP);
    CHECK_INT(s.top_pos[0], 9);
    for (int k = 0; k < VIEW_ATTN_TOP; k++) CHECK(s.top_w[k] >= 0.07f);
}

TEST(views_explain_attention_text_fits_its_width) {
    ViewModel m;
    view_init(&m, 1, 1, NULL);
    StepTrace *t = trace_new(1, 1);
    static const char *const words[10] = {"<s>", "Once", " upon", " a", " time", " Lily", ",", " she", " saw", "\n"};
    for (int p = 0; p < 10; p++) {
        t->pos = p;
        snprintf(t->piece, sizeof t->piece, "%s", words[p]);
        view_push(&m, t, NULL);
    }
    float w[10];
    ViewAttn at;
    attn_fixture(&at, w);
    ViewAttnSplit s;
    view_attn_split(&at, &s);
    char buf[256];
    view_explain_attn(&m, &at, &s, 200, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "sinks 20% \xc2\xb7 window 40% \xc2\xb7 far 40% \xc2\xb7 pos 2 \" upon\" 0.15 \xc2\xb7 "
                           "pos 4 \" time\" 0.15 \xc2\xb7 pos 5 \" Lily\" 0.05 \xc2\xb7 pos 3 \" a\" 0.03 \xc2\xb7 "
                           "pos 1 \"Once\" 0.02"),
              "got \"%s\"", buf);
    /* narrow: whole entries only */
    view_explain_attn(&m, &at, &s, 60, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "sinks 20% \xc2\xb7 window 40% \xc2\xb7 far 40% \xc2\xb7 pos 2 \" upon\" 0.15"), "got \"%s\"",
              buf);
    /* no sinks configured: no sinks part; ASCII separators */
    at.sinks = 0;
    m.ascii = 1;
    view_attn_split(&at, &s);
    view_explain_attn(&m, &at, &s, 40, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "window 40% | far 60% | pos 0 \"<s>\" 0.20"), "got \"%s\"", buf);
    trace_free(t);
    view_free(&m);
}

/* Only the predictor the policy runs is "taken": under policy qada the
 * QAdA line says "needed and taken" and the router's says what it would
 * have done; under policy full no predictor line claims to have acted. */
TEST(views_explain_only_the_executed_predictor_is_taken) {
    ViewModel m;
    StepTrace *t = one_cell(&m);
    t->score[0] = 0.51f;
    t->gate[0] = 1;
    set_masses(t, 0.31, 0.93, 0.05);
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "qada");
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 93% > \xce\xb8 10% \xe2\x86\x92 global \xc2\xb7 needed and taken");
    CHECK_LINE(x, VIEW_EXPLAIN_ROUTER, "router 0.51 > \xcf\x84 0.50 \xe2\x86\x92 global \xc2\xb7 needed, would take it");
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "full");
    view_explain(&m, t, 0, &x);
    for (int i = 0; i < VIEW_EXPLAIN_LINES; i++)
        if (i != VIEW_EXPLAIN_GATE) CHECK_MSG(!strstr(x.line[i], "taken"), "line %d: %s", i, x.line[i]);
    CHECK_LINE(x, VIEW_EXPLAIN_GATE, "executed global under policy full \xc2\xb7 needed and taken");
    trace_free(t);
    view_free(&m);
}

/* Shares print as whole percentages with the tails marked, and weights keep
 * two significant digits however light, as the far positions at long
 * context are. */
TEST(views_explain_share_and_weight_text) {
    char b[32];
    view_share_text(b, sizeof b, 0.2054);
    CHECK_STR(b, "21%"); /* as the oracle's line rounds the same mass */
    view_share_text(b, sizeof b, 1.0);
    CHECK_STR(b, ">99%");
    view_share_text(b, sizeof b, 0.9996);
    CHECK_STR(b, ">99%");
    view_share_text(b, sizeof b, 0.001);
    CHECK_STR(b, "<1%");
    view_weight_text(b, sizeof b, 0.41);
    CHECK_STR(b, "0.41");
    view_weight_text(b, sizeof b, 0.0031);
    CHECK_STR(b, "0.0031");
    view_weight_text(b, sizeof b, 0.00042);
    CHECK_STR(b, "0.00042");
    view_weight_text(b, sizeof b, 2.2e-7);
    CHECK_STR(b, "2e-07");
    view_weight_text(b, sizeof b, 0);
    CHECK_STR(b, "0.00");
    char tt[48]; /* the status lines' thresholds: θ 0.001 said "theta=0.00" after w or T */
    view_tau_theta_text(tt, sizeof tt, "=", 0.5, 0.001);
    CHECK_STR(tt, "tau=0.50, theta=0.001");
    view_tau_theta_text(tt, sizeof tt, " ", 1 - 1.6e-5, 0.1);
    CHECK_STR(tt, "tau >0.9999, theta 0.10");
}

/* The parent run's line in the inspector: where the oracle's mass at the
 * head differs between the runs (the same tokens, but the layers below
 * gated differently, so the head reads another residual stream) it gives
 * both masses and says why, in every form that fits; where it agrees it
 * is left out, as before. Where the local set changed (another window, it
 * said "gates below" of L0 H0 after `w`), that is the reason. */
TEST(views_parent_line_shows_both_oracle_masses_where_they_differ) {
    ViewModel m;
    view_init(&m, 2, 3, NULL);
    fx_fill(&m, 12);
    view_keep_parent(&m, "run 1");
    fx_fill(&m, 12);
    m.sel_layer = 1, m.sel_head = 0, m.cursor = 5;
    int c = 3;
    m.parent.hist[5]->oracle_logit[c] = (float)decide_theta_logit(0.21);
    m.hist[5]->oracle_logit[c] = (float)decide_theta_logit(0.34);
    char buf[300];
    CHECK_INT(view_parent_line(&m, 250, buf, sizeof buf), 1);
    CHECK_MSG(strstr(buf, "oracle 21%") && strstr(buf, "oracle 34%") && strstr(buf, VIEW_PARENT_ORACLE_WHY), "%s", buf);
    CHECK_MSG(strstr(buf, "parent run 1: ") == buf, "%s", buf);
    CHECK_INT(view_parent_line(&m, 70, buf, sizeof buf), 1);
    CHECK_MSG(strstr(buf, "21%") && strstr(buf, "34%") && view_text_width(buf, 0) <= 70, "%s", buf);
    CHECK_INT(view_parent_line(&m, 38, buf, sizeof buf), 1); /* 80x24's inspector: the masses alone still fit */
    CHECK_MSG(strstr(buf, "oracle 21%") && strstr(buf, "34%") && view_text_width(buf, 0) <= 38, "%s", buf);
    /* another window: the local set moved the mass, at any layer, whatever the gates below did */
    m.parent.hist[5]->local_window[c] = 32, m.hist[5]->local_window[c] = 16;
    CHECK_INT(view_parent_line(&m, 250, buf, sizeof buf), 1);
    CHECK_MSG(strstr(buf, "(" VIEW_PARENT_ORACLE_WHY_LOCAL ": w 32 \xe2\x86\x92 16)") &&
                  !strstr(buf, VIEW_PARENT_ORACLE_WHY), "%s", buf);
    m.parent.hist[5]->local_window[c] = m.hist[5]->local_window[c] = 16; /* the same window, other sinks */
    m.parent.hist[5]->n_far = 2, m.hist[5]->n_far = 3;
    CHECK_INT(view_parent_line(&m, 250, buf, sizeof buf), 1);
    CHECK_MSG(strstr(buf, "(" VIEW_PARENT_ORACLE_WHY_LOCAL ": 2 \xe2\x86\x92 3 far keys)"), "%s", buf);
    m.parent.hist[5]->n_far = m.hist[5]->n_far; /* the first layer, the same local set: no reason to give */
    m.sel_layer = 0, m.parent.hist[5]->oracle_logit[0] = (float)decide_theta_logit(0.21);
    m.hist[5]->oracle_logit[0] = (float)decide_theta_logit(0.34);
    CHECK_INT(view_parent_line(&m, 250, buf, sizeof buf), 1);
    CHECK_MSG(strstr(buf, "oracle 34%") && !strstr(buf, "(") , "%s", buf);
    m.sel_layer = 1;
    m.hist[5]->oracle_logit[c] = m.parent.hist[5]->oracle_logit[c]; /* agreeing: no oracle, no why */
    CHECK_INT(view_parent_line(&m, 250, buf, sizeof buf), 1);
    CHECK_MSG(!strstr(buf, "oracle") && !strstr(buf, VIEW_PARENT_ORACLE_WHY), "%s", buf);
    view_free(&m);
}
