/* The inspector's verdict lines (views/explain.h): each predictor global
 * and local with its threshold, a value equal to its threshold (local:
 * every rule is strict), values not computed, a position with no choice,
 * ASCII spelling and the tails of the mass estimates. */
#include <math.h>
#include <string.h>

#include "engine/decide.h"
#include "tests/test.h"
#include "views/explain.h"

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
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 93% > \xce\xb8 10% \xe2\x86\x92 global \xc2\xb7 needed and taken");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA_BULK,
               "qada_bulk estimate 5% \xe2\x89\xa4 \xce\xb8 10% \xe2\x86\x92 local \xc2\xb7 missed");
    CHECK_LINE(x, VIEW_EXPLAIN_GATE, "executed global under policy aha \xc2\xb7 needed and taken");
    for (int i = 0; i < VIEW_EXPLAIN_LINES; i++) CHECK_INT(x.decision[i], i != VIEW_EXPLAIN_QADA_BULK);
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
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 40% > \xce\xb8 10% \xe2\x86\x92 global \xc2\xb7 needless");
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
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 10% \xe2\x89\xa4 \xce\xb8 10% \xe2\x86\x92 local \xc2\xb7 not needed, not taken");
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
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate 5% <= theta 10% -> local | missed");
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
    CHECK_LINE(x, VIEW_EXPLAIN_QADA, "QAdA estimate >99% > \xce\xb8 10% \xe2\x86\x92 global \xc2\xb7 needless");
    CHECK_LINE(x, VIEW_EXPLAIN_QADA_BULK,
               "qada_bulk estimate 10.04% > \xce\xb8 10.00% \xe2\x86\x92 global \xc2\xb7 needless");
    CHECK(view_explain_agreement(1, -1) == NULL);
    CHECK(!strcmp(view_explain_agreement(0, 1), "missed"));
    trace_free(t);
    view_free(&m);
}
