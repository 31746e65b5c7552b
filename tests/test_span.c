/* test_span.c — a span of positions the rates count, and a run compared with that is not the parent.
 *
 * The span (views/span.h): its keys `(` `)` `*` `|`; every head's five
 * rates over it against a recount written from the fields (the gate, the
 * oracle's log-odds against θ, far keys or not), at new thresholds, after
 * the history is cleared and regrown, and through a rescore; the layers'
 * rates and the header's shares over it against the same recount; the
 * header, the bars, `H` and the `d` pane's title naming it in a frame. And
 * a run held beside this one that was chosen in B (m->parent.other): the
 * common prefix of two texts, the flip shares over it only, and every pane
 * naming it "vs run 3", not "parent". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/clock.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/dist.h"
#include "views/flips.h"
#include "views/heads.h"
#include "views/keymap.h"
#include "views/metric.h"
#include "views/pin.h"
#include "views/rates.h"
#include "views/span.h"

enum { SL = 3, SH = 4, SN = 90, SNO_CHOICE = 5, SPROMPT = 30 };

static double unif(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* Step p: no far keys before SNO_CHOICE, the prompt before SPROMPT; per
 * cell a gate (-1 now and then), a score, the oracle's log-odds (NAN now
 * and then) and the estimates. */
static StepTrace *step(unsigned *s, int p) {
    StepTrace *t = trace_new(SL, SH);
    t->pos = p, t->token = p % 11 + 1, t->is_prompt = p < SPROMPT, t->n_kv_heads = SH;
    t->n_far = p < SNO_CHOICE ? 0 : p - SNO_CHOICE + 1;
    snprintf(t->piece, sizeof t->piece, " w%d", p % 5);
    for (int c = 0; c < SL * SH; c++) {
        double u = unif(s);
        t->gate[c] = (int8_t)(u < 0.08 ? -1 : unif(s) < 0.2 + 0.6 * (c % 4) / 3.0 ? 1 : 0);
        t->score[c] = (float)unif(s);
        t->oracle_logit[c] = unif(s) < 0.15 ? NAN : (float)(6 * unif(s) - 4);
        t->qada_logit[c] = (float)(6 * unif(s) - 4);
        t->qada_bulk_logit[c] = (float)(6 * unif(s) - 4);
        t->qada_rem_logit[c] = (float)(6 * unif(s) - 4);
        t->qada_rem_bulk_logit[c] = (float)(6 * unif(s) - 4);
        t->keys_read[c] = t->gate[c] == 1 ? p + 1 : (p + 1 < 8 ? p + 1 : 8);
    }
    return t;
}

static void fill(ViewModel *m, unsigned seed, int n) {
    for (int p = 0; p < n; p++) view_push_owned(m, step(&seed, p), NULL);
}

/* The recount over history positions lo … hi, from the fields: rate k of
 * cell c (0 global, 1 oracle, 2 precision, 3 recall, 4 the gate's
 * agreement with the oracle), *n the positions it counts. */
static double recount(const ViewModel *m, int c, int k, int lo, int hi, int *n) {
    long g = 0, made = 0, o = 0, lab = 0, tp = 0, fp = 0, fn = 0, same = 0, both = 0;
    for (int i = lo; i <= hi; i++) {
        const StepTrace *t = m->hist[i];
        if (t->n_far == 0) continue;
        int gate = t->gate[c] < 0 ? -1 : t->gate[c] == 1;
        int ol = isnan(t->oracle_logit[c]) ? -1 : (double)t->oracle_logit[c] > m->hdr.theta_logit;
        if (gate >= 0) made++, g += gate;
        if (ol >= 0) lab++, o += ol;
        if (gate >= 0 && ol >= 0) tp += gate && ol, fp += gate && !ol, fn += !gate && ol, both++, same += gate == ol;
    }
    long num[5] = {g, o, tp, tp, same}, den[5] = {made, lab, tp + fp, tp + fn, both};
    *n = (int)den[k];
    return den[k] ? (double)num[k] / den[k] : NAN;
}

/* Every cell's five rates (the agreement's for the gate) over lo … hi. */
static int rates_match(ViewModel *m, int lo, int hi, const char *when) {
    int bad = 0;
    m->agree_pred = VIEW_PRED_GATE;
    for (int c = 0; c < SL * SH; c++)
        for (int k = 0; k < VIEW_RATE_COUNT; k++) {
            int n, want_n;
            double got = view_head_rate(m, c, view_rate_metric(k), &n), want = recount(m, c, k, lo, hi, &want_n);
            int ok = n == want_n && (isnan(want) ? isnan(got) : fabs(got - want) < 1e-12);
            if (!ok && bad++ < 4)
                test_fail(__FILE__, __LINE__, "%s: cell %d rate %d over %d-%d: %g of %d, recount %g of %d", when, c, k,
                          lo, hi, got, n, want, want_n);
        }
    return bad;
}

/* The cursor to history index i. */
static void at(ViewModel *m, int i) { m->cursor = i, m->follow = 0; }

TEST(views_span_keys_set_its_ends_and_clear_it) {
    ViewModel m;
    view_init(&m, SL, SH, NULL);
    view_key(&m, '(');
    CHECK_MSG(strstr(m.status, "no positions yet") != NULL, "%s", m.status);
    fill(&m, 3, SN);
    CHECK_INT(m.span.lo, -1);
    at(&m, 40), view_key(&m, '(');
    CHECK_INT(m.span.lo, 40);
    CHECK_INT(m.span.hi, SN - 1); /* a start alone runs to the last position */
    at(&m, 60), view_key(&m, ')');
    CHECK_INT(m.span.lo, 40);
    CHECK_INT(m.span.hi, 60);
    CHECK_MSG(strstr(m.status, "span 40-60 (21 positions)") != NULL, "%s", m.status);
    at(&m, 20), view_key(&m, ')'); /* an end before the start: from position 0 */
    CHECK_INT(m.span.lo, 0);
    CHECK_INT(m.span.hi, 20);
    at(&m, 70), view_key(&m, '('); /* a start past the end: to the last position */
    CHECK_INT(m.span.lo, 70);
    CHECK_INT(m.span.hi, SN - 1);
    view_key(&m, '|');
    CHECK_INT(m.span.lo, -1);
    CHECK_MSG(strstr(m.status, "span cleared") != NULL, "%s", m.status);
    view_key(&m, '|');
    CHECK_MSG(strstr(m.status, "no span set") != NULL, "%s", m.status);
    /* the help names the keys: one row of the key table */
    int found = 0;
    for (int i = 0; i < view_help_count(); i++) {
        const ViewBinding *b = view_help_line(i);
        found |= b->label && strstr(b->help, "span start / end") != NULL;
    }
    CHECK(found);
    view_free(&m);
}

TEST(views_span_presets_take_the_needle_question_generated_and_bookmarks) {
    ViewModel m;
    view_init(&m, SL, SH, NULL);
    fill(&m, 4, SN);
    view_key(&m, '*'); /* no marks: the generated positions are the only span there is */
    CHECK_INT(m.span.lo, SPROMPT);
    CHECK_INT(m.span.hi, SN - 1);
    CHECK_MSG(strstr(m.status, "the generated positions") != NULL, "%s", m.status);
    ViewMark mk[] = {{12, VIEW_MARK_NEEDLE}, {9, VIEW_MARK_NEEDLE}, {15, VIEW_MARK_NEEDLE}, {26, VIEW_MARK_QUESTION},
                     {28, VIEW_MARK_QUESTION}};
    CHECK_INT(view_set_marks(&m, mk, 5, NULL), 0);
    view_bookmark_toggle(&m, 50), view_bookmark_toggle(&m, 64);
    int want[][2] = {{9, 15}, {26, 28}, {SPROMPT, SN - 1}, {50, 64}, {9, 15}};
    view_key(&m, '|');
    for (int k = 0; k < 5; k++) {
        view_key(&m, '*');
        CHECK_MSG(m.span.lo == want[k][0] && m.span.hi == want[k][1], "press %d: %d-%d, want %d-%d", k + 1, m.span.lo,
                  m.span.hi, want[k][0], want[k][1]);
    }
    view_free(&m);
}

TEST(views_span_rates_match_a_recount) {
    ViewModel m;
    view_init(&m, SL, SH, NULL);
    fill(&m, 7, SN);
    CHECK_INT(rates_match(&m, 0, SN - 1, "no span"), 0);
    CHECK_INT(view_span_set(&m, 20, 55, NULL), 0);
    CHECK_INT(rates_match(&m, 20, 55, "span"), 0);
    CHECK(m.span.head && m.span.c_lo == 20 && m.span.c_n == 36); /* counted once, read O(1) */
    int n_all, n_span;
    view_head_rate(&m, 5, VIEW_METRIC_RATE_GLOBAL, &n_span);
    recount(&m, 5, 0, 0, SN - 1, &n_all);
    CHECK(n_span < n_all && n_span > 20);
    /* new thresholds: recounted as read, then kept again once synced */
    m.hdr.theta_logit = 0.5;
    CHECK_INT(rates_match(&m, 20, 55, "new theta, before the sync"), 0);
    CHECK_INT(view_stats_sync(&m, NULL), 0);
    CHECK_INT(rates_match(&m, 20, 55, "new theta, synced"), 0);
    view_rescore_begin(&m, 0.4f, -1.0);
    while (view_rescore_step(&m, 25, NULL) == 0) {}
    CHECK_INT(rates_match(&m, 20, 55, "rescored"), 0);
    /* the history cleared and regrown (a re-evaluation): the span counts what came of it */
    view_clear_history(&m);
    fill(&m, 11, 40);
    CHECK_INT(rates_match(&m, 20, 39, "regrown to 40"), 0);
    fill(&m, 12, 30); /* positions 40 … 69 of another seed: counted as they arrive */
    for (int i = 40; i < 70; i++) m.hist[i]->pos = i;
    CHECK_INT(rates_match(&m, 20, 55, "regrown past the span"), 0);
    /* a span past the history: nothing counts */
    view_clear_history(&m);
    fill(&m, 13, 10);
    CHECK(isnan(view_head_rate(&m, 3, VIEW_METRIC_RATE_GLOBAL, NULL)));
    view_free(&m);
}

TEST(views_span_layer_rates_and_header_shares_match_a_recount) {
    ViewModel m;
    view_init(&m, SL, SH, NULL);
    fill(&m, 21, SN);
    int lo = 33, hi = 71;
    view_span_set(&m, lo, hi, NULL);
    float aha[SL], orc[SL];
    view_layer_rates_in(&m, lo, hi, aha, orc);
    ViewTotals tot;
    view_totals_in(&m, lo, hi, &tot);
    long all_g = 0, all_n = 0, keys = 0, full = 0;
    for (int l = 0; l < SL; l++) {
        long ga = 0, na = 0, go = 0, no = 0;
        for (int i = lo; i <= hi; i++)
            for (int c = l * SH; c < (l + 1) * SH; c++) {
                const StepTrace *t = m.hist[i];
                keys += t->keys_read[c], full += i + 1;
                if (t->n_far == 0) continue;
                /* AHA's call where a score exists: score > τ */
                na++, ga += t->score[c] > m.hdr.tau;
                if (t->gate[c] >= 0) all_n++, all_g += t->gate[c] == 1;
                if (!isnan(t->oracle_logit[c])) no++, go += (double)t->oracle_logit[c] > m.hdr.theta_logit;
            }
        CHECK_NEAR(aha[l], (double)ga / na, 1e-6);
        CHECK_NEAR(orc[l], (double)go / no, 1e-6);
    }
    CHECK_NEAR(tot.global_share, (double)all_g / all_n, 1e-12);
    CHECK_NEAR(tot.keys_share, (double)keys / full, 1e-12);
    /* the slow path (counts not kept) says the same */
    ViewModel slow = m;
    slow.stats.n = 0;
    float aha2[SL], orc2[SL];
    view_layer_rates_in(&slow, lo, hi, aha2, orc2);
    for (int l = 0; l < SL; l++) { CHECK_NEAR(aha2[l], aha[l], 1e-6); CHECK_NEAR(orc2[l], orc[l], 1e-6); }
    view_free(&m);
}

static int screen_has(char lines[][1024], int rows, const char *needle) {
    for (int y = 0; y < rows; y++)
        if (strstr(lines[y], needle)) return 1;
    for (int y = 0; y < rows; y++) fprintf(stderr, "%s\n", lines[y]);
    return 0;
}

/* A frame of m at cols × rows into lines[]; 0 on success. */
static int frame(ViewModel *m, int cols, int rows, char lines[][1024]) {
    FxTerm term;
    if (fx_term_open(&term, "xterm-256color", cols, rows) || !term.scr) return -1;
    ViewScreen s;
    Err e;
    int rc = view_screen_init(&s, m, &e) == 0 && view_frame(&s, m, &e) == 0 ? 0 : -1;
    for (int y = 0; rc == 0 && y < rows; y++) snprintf(lines[y], 1024, "%s", fx_line(curscr, y));
    view_screen_free(&s);
    fx_term_close(&term);
    return rc;
}

TEST(views_span_named_in_the_header_bars_h_and_d_at_80x24_and_140x45) {
    static const int sizes[][2] = {{80, 24}, {140, 45}};
    static char lines[45][1024];
    for (int z = 0; z < 2; z++) {
        ViewModel m;
        view_init(&m, SL, SH, NULL);
        fill(&m, 5, SN);
        view_span_set(&m, 12, 48, NULL);
        int cols = sizes[z][0], rows = sizes[z][1];
        CHECK_INT(frame(&m, cols, rows, lines), 0);
        CHECK(strstr(lines[0], "span 12-48") != NULL); /* the header, first line */
        CHECK(screen_has(lines, rows, "span 12-48 \xc2\xb7 AHA")); /* the bars' title */
        ViewHeads hs = {.open = 1};
        m.heads = &hs;
        CHECK_INT(frame(&m, cols, rows, lines), 0);
        CHECK(screen_has(lines, rows, "highest first \xc2\xb7 span 12-48"));
        m.heads = NULL;
        ViewDist d = {.open = 1, .ready = 1, .pooled = 1, .span_lo = 12, .span_hi = 48, .n = 7, .auc = NAN};
        char title[200];
        view_dist_title(&d, &m, title, sizeof title);
        CHECK_MSG(strstr(title, "span 12-48 (37 positions)") != NULL, "%s", title);
        view_free(&m);
    }
}

/* Two runs: this one and one chosen in B whose text is the same up to
 * position `common`, and another after it. */
static void other_run(ViewModel *m, int common) {
    view_init(m, SL, SH, NULL);
    fill(m, 31, 50);
    view_keep_parent(m, "run 3");
    m->parent.other = 1;
    fill(m, 32, 60);
    for (int i = common; i < 50; i++) m->hist[i]->token = m->parent.hist[i]->token + 1;
}

TEST(views_other_run_compares_the_common_prefix_and_names_it) {
    ViewModel m;
    other_run(&m, 35);
    CHECK_INT(view_parent_common(&m), 35);
    for (int c = 0; c < SL * SH; c++) { /* flip shares over positions 0-34 only */
        int n = 0, flips = 0, got_n;
        for (int i = 0; i < 35; i++) {
            const StepTrace *a = m.hist[i], *b = m.parent.hist[i];
            if (a->n_far == 0 || b->n_far == 0 || a->gate[c] < 0 || b->gate[c] < 0) continue;
            n++, flips += a->gate[c] != b->gate[c];
        }
        double f = view_flip_share(&m, c, 0, m.n_hist, &got_n);
        CHECK_INT(got_n, n);
        CHECK_NEAR(f, (double)flips / n, 1e-12);
    }
    char buf[300], name[64];
    CHECK(!strcmp(view_parent_name(&m, name, sizeof name), "run 3"));
    at(&m, 10);
    CHECK(view_parent_line(&m, 200, buf, sizeof buf) && !strncmp(buf, "vs run 3: ", 10));
    CHECK_MSG(strstr(buf, "parent") == NULL, "%s", buf);
    at(&m, 40);
    view_parent_line(&m, 200, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "vs run 3: another token at pos 40"), "%s", buf);
    static char lines[45][1024];
    for (int z = 0; z < 2; z++) {
        int cols = z ? 140 : 80, rows = z ? 45 : 24;
        m.flips_open = 0;
        CHECK_INT(frame(&m, cols, rows, lines), 0);
        CHECK(screen_has(lines, rows, "vs run 3"));
        view_key(&m, 'X');
        CHECK_INT(frame(&m, cols, rows, lines), 0);
        CHECK(screen_has(lines, rows, "flips vs run 3 \xc2\xb7 common prefix pos 0-34"));
    }
    /* the parent itself keeps its name */
    m.parent.other = 0;
    CHECK(!strcmp(view_parent_name(&m, name, sizeof name), "parent run 3"));
    view_free(&m);
}

TEST(views_span_over_a_long_512_head_run_is_counted_once) {
    enum { LL = 16, LH = 32, LN = 4096 };
    ViewModel m;
    view_init(&m, LL, LH, NULL);
    StepTrace *t = trace_new(LL, LH);
    for (int p = 0; p < LN; p++) {
        trace_clear(t);
        t->pos = p, t->token = p % 97, t->n_far = p < 16 ? 0 : p - 15;
        for (int c = 0; c < LL * LH; c++) {
            t->gate[c] = (int8_t)((p * 7 + c * 13) % 10 < 3);
            t->score[c] = (float)((p + c) % 100) / 100.f;
            t->oracle_logit[c] = (float)((p * 3 + c) % 9) - 5.f;
        }
        view_push(&m, t, NULL);
    }
    trace_free(t);
    double t0 = clock_now();
    CHECK_INT(view_span_set(&m, 1000, 2999, NULL), 0);
    double set_s = clock_now() - t0;
    t0 = clock_now();
    double sum = 0;
    for (int c = 0; c < LL * LH; c++) /* every head's rate, as a frame of H reads them */
        for (int k = 0; k < VIEW_RATE_COUNT; k++) sum += view_head_rate(&m, c, view_rate_metric(k), NULL);
    double read_s = clock_now() - t0;
    fprintf(stderr, "    span of 2000 positions x 512 heads counted in %.3f s, every rate read in %.5f s ", set_s, read_s);
    CHECK(m.span.c_n == 2000);
    CHECK(!isnan(sum));
    CHECK(read_s < 0.05); /* the kept counts: no recount per read */
    view_free(&m);
}
