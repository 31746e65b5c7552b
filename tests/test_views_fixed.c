/* test_views_fixed.c — fixed-local heads (a layer the architecture windows,
 * StepTrace.layer_window > 0) in every view, on a synthetic Gemma-3-1B-like
 * trace: 26 layers × 4 heads, 1 KV head, window 512 in 5 of every 6 layers
 * (22 local, 4 global), AHA's window 8.
 *
 * The fixed-local heads of the "adversarial" run hold values that every
 * count would notice if it took them in (gates, scores and oracle masses
 * that agree, miss and waste in turn); the "reference" run holds the same
 * global layers with its local layers' cells left uncomputed and no layer
 * kinds, so decide.h itself leaves them out. Every share, rate, precision,
 * recall, count and seek must read the same on both, and the same as
 * counted here from the fixture's own formulas over the global layers. The
 * "engine" run is what the engine writes (gate -1, predictors NAN, keys
 * read = min(W, pos + 1)). */
#include <locale.h>
#include <math.h>
#include <string.h>

#include "app/tui/dist_ctl.h"
#include "engine/decide.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/explain.h"
#include "views/flips.h"
#include "views/metric.h"
#include "views/paint.h"
#include "views/pattern.h"
#include "views/pin.h"
#include "views/rates.h"
#include "views/tokstats.h"
#include "views/why.h"

enum { FL = 26, FH = 4, FW = 512, AW = 8, FN = 40 };
enum { RUN_ADVERSARIAL, RUN_REFERENCE, RUN_ENGINE };

static int local_layer(int l) { return (l + 1) % 6 != 0; } /* Gemma 3's 5:1 */

/* The global layers' values, a function of (pos, cell) alone. */
static int g_gate(int p, int c) { return (p + c) % 3 == 0; }
static float g_score(int p, int c) { return g_gate(p, c) ? 0.6f + 0.01f * (c % 7) : 0.2f + 0.01f * (p % 5); }
static int g_oracle(int p, int c) { return (p + 2 * c) % 4 == 0; }

/* Sets a per-head field by its name from the field list, so a test can
 * fill a field (the counterfactual) that only some builds have. */
static void set_field(StepTrace *t, const char *field, int cell, double v) {
#define SET_FIELD(name, type, missing, sql, show, title, short_name, doc) \
    if (!strcmp(#name, field)) t->name[cell] = (type)v;
    TRACE_HEAD_FIELDS(SET_FIELD)
#undef SET_FIELD
}

static void fill_cell(StepTrace *t, int run, int p, int l, int c) {
    int keys_local = p + 1 < AW ? p + 1 : AW, keys_fixed = p + 1 < FW ? p + 1 : FW;
    if (!local_layer(l)) {
        t->gate[c] = (int8_t)g_gate(p, c);
        t->score[c] = g_score(p, c);
        t->oracle_logit[c] = g_oracle(p, c) ? 2.0f : -4.0f;
        t->qada_logit[c] = t->qada_bulk_logit[c] = (p % 2) ? 1.0f : -3.0f;
        t->qada_rem_logit[c] = t->qada_rem_bulk_logit[c] = (c % 2) ? 1.0f : -3.0f;
        t->oracle_err[c] = 0.25f;
        t->keys_read[c] = g_gate(p, c) ? p + 1 : keys_local;
        return;
    }
    t->keys_read[c] = keys_fixed; /* the window's keys, in every run */
    if (run != RUN_ADVERSARIAL) return;
    t->gate[c] = (int8_t)(p % 2);
    t->score[c] = p % 2 ? 0.9f : 0.1f;
    t->oracle_logit[c] = (p / 2) % 2 ? 3.0f : -5.0f;
    t->qada_logit[c] = t->qada_bulk_logit[c] = t->qada_rem_logit[c] = t->qada_rem_bulk_logit[c] = 3.0f;
    t->oracle_err[c] = 0.5f;
}

static StepTrace *make_step(int run, int p) {
    StepTrace *t = trace_new(FL, FH);
    t->pos = p;
    t->is_prompt = p < 5;
    snprintf(t->piece, sizeof t->piece, p % 4 == 3 ? "," : p % 4 == 1 ? " 7" : " w%d", p);
    t->n_far = p + 1 > AW ? p + 1 - AW : 0;
    t->n_kv_heads = 1;
    for (int l = 0; l < FL; l++) {
        t->layer_window[l] = run == RUN_REFERENCE ? 0 : local_layer(l) ? FW : 0;
        int kv = 0;
        for (int h = 0; h < FH; h++) {
            fill_cell(t, run, p, l, l * FH + h);
            if (t->keys_read[l * FH + h] > kv) kv = t->keys_read[l * FH + h];
        }
        t->kv_read[l * FH] = kv;
    }
    return t;
}

static void fixed_model(ViewModel *m, int run, int n) {
    view_init(m, FL, FH, NULL);
    snprintf(m->hdr.model, sizeof m->hdr.model, "g3-1b-rand");
    snprintf(m->hdr.policy, sizeof m->hdr.policy, "aha");
    m->hdr.window = AW, m->hdr.ctx_len = 4096, m->hdr.tau = 0.5f, m->hdr.theta_logit = decide_theta_logit(0.1);
    view_set_arch(&m->hdr, "hf-gemma3_text");
    for (int p = 0; p < n; p++) {
        StepTrace *t = make_step(run, p);
        if (p == 0) m->hdr.layers = view_trace_kinds(t);
        view_push(m, t, NULL);
        trace_free(t);
    }
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || fabs(a - b) < 1e-12; }

/* The fixture's own count of the executed global share: global layers,
 * positions with far keys. */
static double expected_global_share(int n) {
    long g = 0, d = 0;
    for (int p = 0; p < n; p++)
        for (int l = 0; l < FL && p + 1 > AW; l++)
            for (int h = 0; h < FH && !local_layer(l); h++) g += g_gate(p, l * FH + h), d++;
    return (double)g / (double)d;
}

TEST(views_fixed_local_counted_in_no_share_rate_or_count) {
    ViewModel adv, ref, eng;
    fixed_model(&adv, RUN_ADVERSARIAL, FN);
    fixed_model(&ref, RUN_REFERENCE, FN);
    fixed_model(&eng, RUN_ENGINE, FN);
    CHECK_INT(ref.hdr.layers.n_local, 0);
    ViewModel *runs[2] = {&adv, &eng};
    for (int r = 0; r < 2; r++) {
        ViewModel *m = runs[r];
        ViewTotals a, b;
        view_totals(m, FN - 1, &a);
        view_totals(&ref, FN - 1, &b);
        CHECK_NEAR(a.global_share, expected_global_share(FN), 1e-12);
        CHECK_NEAR(b.global_share, expected_global_share(FN), 1e-12);
        /* reads are traffic, not decisions: every head's count, the windows' too */
        CHECK(same(a.keys_share, b.keys_share) && same(a.kv_share, b.kv_share));
        float la[FL], lo[FL], ra[FL], ro[FL];
        view_layer_rates(m, FN - 1, la, lo);
        view_layer_rates(&ref, FN - 1, ra, ro);
        for (int l = 0; l < FL; l++) {
            CHECK_MSG(same(la[l], ra[l]) && same(lo[l], ro[l]), "run %d layer %d: %g/%g vs %g/%g", r, l, la[l], lo[l],
                      ra[l], ro[l]);
            if (local_layer(l)) CHECK(isnan(la[l]) && isnan(lo[l]));
        }
        for (int p = 0; p < FN; p++) CHECK(same(view_global_share(m->hist[p]), view_global_share(ref.hist[p])));
        /* every per-head run rate, under every compared predictor: cumulative counts and the slow recount */
        for (int pred = 0; pred < VIEW_PRED_COUNT; pred++) {
            m->agree_pred = ref.agree_pred = (ViewPredictor)pred;
            for (int k = 0; k < VIEW_RATE_COUNT; k++)
                for (int c = 0; c < FL * FH; c++) {
                    int na, nb;
                    double x = view_head_rate(m, c, view_rate_metric(k), &na);
                    double y = view_head_rate(&ref, c, view_rate_metric(k), &nb);
                    CHECK_MSG(same(x, y) && na == nb, "run %d pred %d rate %d cell %d: %g (%d) vs %g (%d)", r, pred,
                              k, c, x, na, y, nb);
                    if (local_layer(c / FH)) CHECK(na == 0 && isnan(x));
                    for (int p = 0; p < FN; p++)
                        CHECK(view_rate_event(m, m->hist[p], c, view_rate_metric(k)) ==
                              view_rate_event(&ref, ref.hist[p], c, view_rate_metric(k)));
                }
        }
        m->agree_pred = ref.agree_pred = VIEW_PRED_GATE;
        float tau = m->hdr.tau;
        m->hdr.tau = ref.hdr.tau = 0.3f; /* the slow path, before the counts follow */
        for (int c = 0; c < FL * FH; c += 5)
            CHECK(same(view_head_rate(m, c, VIEW_METRIC_RATE_PRECISION, NULL),
                       view_head_rate(&ref, c, VIEW_METRIC_RATE_PRECISION, NULL)));
        m->hdr.tau = ref.hdr.tau = tau;
    }
    view_free(&adv);
    view_free(&ref);
    view_free(&eng);
}

/* The token-type rates (`c`), the distributions' counts (`d`) and the
 * flips against a parent (`X`) count no fixed-local head either. */
TEST(views_fixed_local_out_of_tokstats_dist_and_flips) {
    ViewTokStats ta, tr;
    double th = decide_theta_logit(0.1);
    view_tokstats_begin(&ta, FL, FH, 0, 1, DECIDE_AHA, 0.5f, th); /* a fixed-local head selected */
    view_tokstats_begin(&tr, FL, FH, 0, 1, DECIDE_AHA, 0.5f, th);
    TuiDistCount da, dr;
    tui_dist_count_init(&da, 1, 0, 0, th);
    tui_dist_count_init(&dr, 1, 0, 0, th);
    long labelled = 0;
    for (int p = 0; p < FN; p++) {
        StepTrace *a = make_step(RUN_ADVERSARIAL, p), *r = make_step(RUN_REFERENCE, p);
        CHECK_INT(view_tokstats_add(&ta, a), 0);
        CHECK_INT(view_tokstats_add(&tr, r), 0);
        tui_dist_count_add(&da, a);
        tui_dist_count_add(&dr, r);
        labelled += p + 1 > AW ? 4 * FH : 0;
        trace_free(a);
        trace_free(r);
    }
    tui_dist_count_finish(&da);
    tui_dist_count_finish(&dr);
    CHECK_INT(da.d.n, labelled); /* the global layers' cells with far keys, no more */
    CHECK_INT(da.d.n_global, dr.d.n_global);
    for (int g = 0; g < VIEW_TOKS_GROUPS; g++) {
        CHECK(!memcmp(&ta.all_rates[g], &tr.all_rates[g], sizeof ta.all_rates[g]));
        CHECK(ta.head_rates[g].decided == 0 && ta.head_rates[g].labelled == 0 && ta.head_rates[g].compared == 0);
    }
    CHECK(ta.all_rates[VIEW_TOKS_GENERATED].decided > 0);
    view_tokstats_free(&ta);
    view_tokstats_free(&tr);
    /* the parent ran every fixed-local gate the other way: no flip at any of them */
    ViewModel m;
    fixed_model(&m, RUN_ADVERSARIAL, FN);
    view_parent_begin(&m, "run 1");
    for (int p = 0; p < FN; p++) {
        StepTrace *t = make_step(RUN_ADVERSARIAL, p);
        for (int c = 0; c < FL * FH; c++) t->gate[c] = (int8_t)(local_layer(c / FH) ? 1 - t->gate[c] : t->gate[c]);
        CHECK_INT(view_push_parent(&m, t, NULL), 0);
    }
    for (int c = 0; c < FL * FH; c++) {
        int n = -1;
        double s = view_flip_share(&m, c, 0, FN, &n);
        if (local_layer(c / FH)) CHECK_MSG(n == 0 && isnan(s), "cell %d: %d positions, share %g", c, n, s);
        else CHECK_MSG(n == FN - AW && s == 0, "cell %d: %d positions, share %g", c, n, s);
    }
    view_free(&m);
}

/* Seeking globals and disagreements (f, ^, n, N) never stops at a
 * fixed-local head; the pattern's rows mark it 'f'. */
TEST(views_fixed_local_seeks_and_marks_skip_it) {
    ViewModel m;
    fixed_model(&m, RUN_ADVERSARIAL, FN);
    CHECK_INT(view_seek_global(&m, 0, -1, 1, 0), -1);
    CHECK_INT(view_seek_needed(&m, 1), -1);
    CHECK(view_seek_global(&m, 5 * FH, -1, 1, 0) >= 0); /* L5 is global and goes global */
    m.agree_pred = VIEW_PRED_AHA;
    for (int want = 'n'; want <= 'n' + ('N' - 'n'); want += 'N' - 'n') /* n, then N */
        for (int i = 0; i < 12; i++) {
            view_key(&m, want);
            CHECK_MSG(!local_layer(m.sel_layer), "%c stopped at L%d H%d", want, m.sel_layer, m.sel_head);
        }
    CHECK_INT(view_pattern_row_mark(&m, 0, 0, 0, FN), 'f');
    CHECK(view_pattern_row_mark(&m, 5, 0, 0, FN) == 'g');
    view_free(&m);
}

/* Every metric draws the fixed-local swatch at such a cell, except those
 * whose value exists there and is no decision's input (keys read). */
TEST(views_fixed_local_swatch_in_every_metric) {
    ViewModel adv, eng;
    fixed_model(&adv, RUN_ADVERSARIAL, FN);
    fixed_model(&eng, RUN_ENGINE, FN);
    ViewModel *runs[2] = {&adv, &eng};
    for (int r = 0; r < 2; r++) {
        ViewModel *m = runs[r];
        const StepTrace *t = m->hist[FN - 1];
        for (int k = 0; k < VIEW_METRIC_COUNT; k++) {
            m->metric = (ViewMetric)k;
            int sw = view_swatch(m, t, 0), hs = view_heat_swatch(m, t, 0), bin = view_swatch_bin(m, 0, 0, FN);
            float v = view_metric_value(m, t, 0, (ViewMetric)k);
            int shows = view_metric_fixed_shows((ViewMetric)k) && !isnan(v);
            CHECK_MSG(shows ? sw == view_level(v) : sw == VIEW_SW_FIXED, "run %d metric %s: swatch %d", r,
                      view_metric_short((ViewMetric)k), sw);
            CHECK_MSG(hs == sw, "run %d metric %s: heat %d, swatch %d", r, view_metric_short((ViewMetric)k), hs, sw);
            if (!shows) CHECK_MSG(bin == VIEW_SW_FIXED, "run %d metric %s: bin %d", r, view_metric_short((ViewMetric)k), bin);
            /* a global layer's cell is drawn as before */
            CHECK(view_swatch(m, t, 5 * FH) != VIEW_SW_FIXED);
        }
        /* decisions and the run rates show nothing at a fixed-local head, whatever it holds */
        ViewMetric none[] = {VIEW_METRIC_gate, VIEW_METRIC_score, VIEW_METRIC_oracle_logit, VIEW_METRIC_qada_logit,
                             VIEW_METRIC_qada_rem_bulk_logit, VIEW_METRIC_RATE_GLOBAL, VIEW_METRIC_RATE_RECALL,
                             VIEW_METRIC_AGREE};
        for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) CHECK(!view_metric_fixed_shows(none[i]));
        /* keys read: the window reads all pos + 1 keys while pos < 512 */
        m->metric = VIEW_METRIC_keys_read;
        CHECK_INT(view_swatch(m, t, 0), view_level(1.0f));
        m->tint_share = 1;
        CHECK_INT(view_token_swatch(m, t), view_level(view_global_share(adv.hist[FN - 1])));
        m->tint_share = 0;
    }
    view_free(&adv);
    view_free(&eng);
}

/* The inspector's words for a fixed-local head: the architecture's
 * window, the keys it read, the counterfactual (when the field list has
 * one), and the why block and the pinned line likewise. */
TEST(views_fixed_local_explain_pin_and_why) {
    ViewModel m;
    fixed_model(&m, RUN_ENGINE, FN);
    const StepTrace *t = m.hist[FN - 1];
    ViewExplain x;
    view_explain(&m, t, 2, &x);
    CHECK_MSG(!strcmp(x.line[0], "fixed-local: the architecture's window 512 (no choice)"), "%s", x.line[0]);
    CHECK_MSG(!strcmp(x.line[1], "keys read 40 = min(W 512, pos+1 40)"), "%s", x.line[1]);
    for (int i = 0; i < x.n; i++) CHECK(view_text_width(x.brief[i], 0) <= 40);
    ViewMetric cf = view_metric_counterfactual();
    if (cf == VIEW_METRIC_COUNT) {
        CHECK_INT(x.n, 2); /* no counterfactual field in this build: no line for one */
    } else {
        CHECK_INT(x.n, 3);
        CHECK_MSG(strstr(x.line[2], "counterfactual: not profiled") != NULL, "%s", x.line[2]);
        StepTrace *c = trace_new(FL, FH);
        trace_copy(c, t);
        set_field(c, VIEW_COUNTERFACTUAL_FIELD, 2, decide_theta_logit(0.03));
        view_explain(&m, c, 2, &x);
        CHECK_MSG(!strcmp(x.line[2], "counterfactual: 3% of the mass beyond the layer's window 512 if it saw every key "
                                     "(never executed)"), "%s", x.line[2]);
        m.metric = cf; /* the counterfactual metric draws where it has a value, and only there */
        CHECK_INT(view_swatch(&m, c, 2), view_level(0.03f));
        CHECK_INT(view_swatch(&m, c, 3), VIEW_SW_FIXED);
        CHECK_INT(view_swatch(&m, c, 5 * FH), VIEW_SW_NONE);
        m.metric = VIEW_METRIC_gate;
        trace_free(c);
    }
    /* keys that are not the window's are shown as such, never hidden */
    StepTrace *odd = trace_new(FL, FH);
    trace_copy(odd, t);
    odd->keys_read[2] = 7;
    view_explain(&m, odd, 2, &x);
    CHECK_MSG(!strcmp(x.line[1], "keys read 7, not min(W 512, pos+1 40) = 40"), "%s", x.line[1]);
    odd->keys_read[2] = -1;
    view_explain(&m, odd, 2, &x);
    CHECK(strstr(x.line[1], "not recorded") != NULL);
    trace_free(odd);
    /* a global layer's head keeps its verdicts */
    view_explain(&m, t, 5 * FH, &x);
    CHECK(x.n == VIEW_EXPLAIN_LINES && strstr(x.line[VIEW_EXPLAIN_GATE], "executed") != NULL);
    char buf[256];
    view_head_text(&m, t, 2, VIEW_HEAD_WORDS | VIEW_HEAD_ORACLE, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "fixed-local (layer window 512)"), "%s", buf);
    view_head_text(&m, t, 2, 0, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "fixed w512"), "%s", buf);
    m.sel_layer = 0, m.sel_head = 2;
    char lines[VIEW_WHY_LINES][VIEW_WHY_CAP];
    int n = view_why_lines(&m, 200, lines);
    CHECK(n == 1 && strstr(lines[0], "fixed-local: no router") != NULL);
    view_free(&m);
}

TEST(views_fixed_local_arch_name_and_layer_kinds) {
    ViewHeader h;
    memset(&h, 0, sizeof h);
    const char *in[] = {"hf-gemma3_text", "gemma3_text", "hf-mistral", "gguf-gemma2 Q8_0", "phi3", ""};
    const char *out[] = {"gemma3", "gemma3", "mistral", "gemma2", "phi3", ""};
    for (int i = 0; i < 6; i++) {
        view_set_arch(&h, in[i]);
        CHECK_MSG(!strcmp(h.arch, out[i]), "%s -> %s", in[i], h.arch);
    }
    int32_t win[6] = {4096, 0, 4096, -1, 1024, 0};
    ViewLayerKinds k = view_layer_kinds(win, 6);
    CHECK(k.n_local == 3 && k.n_global == 3 && k.w_min == 1024 && k.w_max == 4096);
    k = view_layer_kinds(NULL, 0);
    CHECK(k.n_local == 0 && k.n_global == 0 && k.w_min == 0);
}

/* A frame of m at cols × rows under palette mode c, into curscr; 0 on success. */
static int frame(FxTerm *term, ViewModel *m, int cols, int rows, ViewScreen *s) {
    Err e;
    if (fx_term_open(term, "xterm-256color", cols, rows) || !term->scr) return -1;
    if (view_screen_init(s, m, &e) || view_frame(s, m, &e)) return -1;
    return 0;
}

static void dump(int rows) {
    for (int y = 0; y < rows; y++) fprintf(stderr, "%s\n", fx_line(curscr, y));
}

/* The header says the architecture's layers from 100 columns on, briefly
 * when narrow (at 80 the settings and the global share come first), and that AHA's window (--window) is the global
 * layers' only; an all-global model's header is as before. */
TEST(views_fixed_local_header_at_many_sizes) {
    static const int sizes[][2] = {{80, 24}, {100, 30}, {120, 40}, {160, 45}, {200, 50}, {250, 70}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int cols = sizes[i][0], rows = sizes[i][1];
        ViewModel m;
        fixed_model(&m, RUN_ENGINE, FN);
        m.mono = 1, m.colour = VIEW_COLOUR_NONE;
        FxTerm term;
        ViewScreen s;
        CHECK_INT(frame(&term, &m, cols, rows, &s), 0);
        char line[1024]; /* fx_line's buffer is the next call's */
        snprintf(line, sizeof line, "%s", fx_line(curscr, 0));
        int wide = strstr(line, "gemma3 \xc2\xb7 22 local (w 512) + 4 global layers") != NULL;
        int narrow = strstr(line, "gemma3 22L/w512+4G") != NULL;
        /* at 80 columns the settings and the global share come first */
        CHECK_MSG(wide || narrow || cols < 100, "%dx%d: %s", cols, rows, line);
        CHECK_MSG(strstr(line, wide ? "w 8 (global layers only)" : "w8 (global)"), "%dx%d: %s", cols, rows, line);
        if (cols >= 160) CHECK_MSG(wide, "%dx%d: %s", cols, rows, line);
        CHECK_MSG(view_text_width(line, 0) <= cols, "%dx%d", cols, rows);
        CHECK_MSG(strstr(line, "\xcf\x84 0.50 \xce\xb8 0.10") && strstr(line, "pos 39/4096"), "%dx%d: the settings go: %s",
                  cols, rows, line);
        CHECK_MSG(fx_contains(curscr, "fixed-local"), "%dx%d: no legend or bars word", cols, rows);
        if (!(wide || narrow) && cols >= 100) dump(rows);
        if (cols < 100) CHECK_MSG(strstr(line, "glob "), "%dx%d: %s", cols, rows, line);
        view_screen_free(&s);
        fx_term_close(&term);
        m.hdr.window = 1024; /* AHA's window longer than the layers': nothing to say about --window */
        CHECK_INT(frame(&term, &m, cols, rows, &s), 0);
        CHECK_MSG(!fx_contains(curscr, "(global"), "%dx%d", cols, rows);
        view_screen_free(&s);
        fx_term_close(&term);
        view_free(&m);
        fixed_model(&m, RUN_REFERENCE, FN); /* all global */
        CHECK_INT(frame(&term, &m, cols, rows, &s), 0);
        CHECK_MSG(!strstr(fx_line(curscr, 0), "gemma3") && !fx_contains(curscr, "fixed-local"), "%dx%d: %s", cols, rows,
                  fx_line(curscr, 0));
        view_screen_free(&s);
        fx_term_close(&term);
        view_free(&m);
    }
}

/* Where the heatmap cell (layer, head) is drawn. */
static void cell_at(const ViewModel *m, int half, int w, int h, int layer, int head, int *y, int *x) {
    ViewHeatGeom g;
    view_heat_geom(m, w, h, half, &g);
    *x = g.x0 + (head - g.first_head) * (g.cw + g.gap);
    *y = g.y0 + (layer - g.first_layer) / (g.half ? 2 : 1);
}

/* The heatmap and timeline glyphs (╌, ASCII ~, and its tan in 256
 * colours, a half-block beside a global layer), the legend's words, the
 * inspector's and the bars'. */
TEST(views_fixed_local_drawn_with_its_glyph_colour_and_words) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 160, 60), 0);
    if (!term.scr) return;
    ViewModel m;
    fixed_model(&m, RUN_ENGINE, FN);
    for (int mode = 0; mode < 3; mode++) { /* mono, ascii, 256 colours */
        ViewPalette pal;
        m.ascii = mode == 1;
        CHECK_INT(view_palette_init(&pal, mode == 2 ? VIEW_COLOUR_256 : VIEW_COLOUR_NONE, m.ascii, NULL), 0);
        int half = mode == 2, hh = half ? 16 : 30; /* 16 lines: two layers a line in colour */
        WINDOW *w = newwin(hh, 60, 0, 0);
        view_draw_heatmap(w, &m, &pal);
        int y, x;
        wchar_t ch;
        short pair;
        attr_t a;
        cell_at(&m, half, 60, hh, 0, 1, &y, &x); /* L0 and L1 are both fixed-local */
        fx_cell(w, y, x, &ch, &pair, &a);
        CHECK_MSG(ch == (m.ascii ? L'~' : 0x254c), "mode %d: %lc", mode, (wint_t)ch);
        if (mode == 2) {
            short fg, bg;
            pair_content(pair, &fg, &bg);
            CHECK_INT(fg, 137);
            ViewHeatGeom g;
            view_heat_geom(&m, 60, hh, 1, &g);
            CHECK(g.half);
            cell_at(&m, half, 60, hh, 4, 1, &y, &x); /* L4 fixed-local over L5 global: a half-block */
            fx_cell(w, y, x, &ch, &pair, &a);
            CHECK_INT(ch, 0x2580);
            pair_content(pair, &fg, &bg);
            CHECK_INT(fg, 137);
        }
        cell_at(&m, half, 60, hh, 11, 1, &y, &x); /* L10 over L11 in colour, L11 alone else */
        if (!half) cell_at(&m, half, 60, hh, 5, 1, &y, &x);
        fx_cell(w, y, x, &ch, &pair, &a);
        CHECK(ch != L'~' && ch != 0x254c);
        delwin(w);
        w = newwin(1, 160, 0, 0);
        view_draw_legend(w, &m, &pal);
        CHECK_MSG(strstr(fx_line(w, 0), " fixed-local (layer window 512)") != NULL, "%s", fx_line(w, 0));
        delwin(w);
    }
    m.ascii = 0;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_NONE, 0, NULL);
    m.inspector_open = 1, m.sel_layer = 3, m.sel_head = 2;
    WINDOW *w = newwin(10, 140, 0, 0);
    view_draw_inspector(w, &m, &pal);
    CHECK_MSG(fx_contains(w, "fixed-local: the architecture's window 512 (no choice)"), "%s", fx_line(w, 1));
    CHECK(fx_contains(w, "keys read 40 = min(W 512, pos+1 40)"));
    CHECK(!fx_contains(w, "score ")); /* no sparkline rows: no predictor decides it */
    delwin(w);
    w = newwin(30, 60, 0, 0);
    view_draw_bars(w, &m, &pal);
    CHECK(fx_contains(w, "L0  fixed-local (layer window 512)") && fx_contains(w, "L5 "));
    delwin(w);
    w = newwin(8, 80, 0, 0);
    m.sel_layer = 0, m.sel_head = 0;
    view_draw_timeline(w, &m, &pal);
    ViewTimeGeom g;
    view_time_geom(&m, 80, 8, 0, &g);
    wchar_t ch;
    short pair;
    attr_t a;
    fx_cell(w, g.y0, g.x0 + FN - 1, &ch, &pair, &a);
    CHECK_INT(ch, 0x254c);
    m.timeline_layers = 1;
    view_draw_timeline(w, &m, &pal);
    fx_cell(w, g.y0, g.x0 + FN - 1, &ch, &pair, &a);
    CHECK_INT(ch, 0x254c);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}
