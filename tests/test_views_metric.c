/* test_views_metric.c — metric values, swatches, agreement classes, running rates, colour mode. */
#include <math.h>
#include <string.h>

#include "engine/decide.h"
#include "tests/test.h"
#include "views/metric.h"
#include "views/palette.h"

TEST(views_metric_levels_and_missing_values) {
    CHECK_INT(view_level(NAN), VIEW_SW_NONE);
    CHECK_INT(view_level(0.0f), VIEW_SW_LEVEL1);
    CHECK_INT(view_level(0.124f), VIEW_SW_LEVEL1);
    CHECK_INT(view_level(0.126f), VIEW_SW_LEVEL1 + 1);
    CHECK_INT(view_level(1.0f), VIEW_SW_LEVEL1 + VIEW_LEVELS - 1);
    CHECK_INT(view_level(7.0f), VIEW_SW_LEVEL1 + VIEW_LEVELS - 1);
    ViewModel m;
    view_init(&m, 1, 2, NULL);
    StepTrace *t = trace_new(1, 2);
    t->oracle_err[0] = 3.0f; /* rel_err above 1 is clamped for display */
    CHECK_NEAR(view_metric_value(&m, t, 0, VIEW_METRIC_oracle_err), 1.0, 0);
    CHECK(isnan(view_metric_value(&m, t, 1, VIEW_METRIC_oracle_err)));
    CHECK(isnan(view_metric_value(&m, t, 0, VIEW_METRIC_gate)));
    t->gate[1] = 1;
    CHECK_NEAR(view_metric_value(&m, t, 1, VIEW_METRIC_gate), 1.0, 0);
    m.metric = VIEW_METRIC_gate;
    CHECK_INT(view_swatch(&m, t, 0), VIEW_SW_NONE);
    CHECK_INT(view_swatch(&m, t, 1), VIEW_SW_LEVEL1 + VIEW_LEVELS - 1);
    trace_free(t);
    view_free(&m);
}

TEST(views_metric_agreement_four_classes) {
    ViewModel m;
    view_init(&m, 1, 4, NULL);
    m.metric = VIEW_METRIC_AGREE;
    m.hdr.tau = 0.5f;
    m.hdr.theta_logit = decide_theta_logit(0.1);
    StepTrace *t = trace_new(1, 4);
    /* (AHA score, oracle mass): both global, both local, missed, needless */
    float score[4] = {0.9f, 0.2f, 0.3f, 0.7f}, mass[4] = {0.5f, 0.05f, 0.4f, 0.01f};
    for (int c = 0; c < 4; c++) t->score[c] = score[c], t->oracle_logit[c] = (float)decide_theta_logit(mass[c]);
    CHECK_INT(view_swatch(&m, t, 0), VIEW_SW_BOTH_GLOBAL);
    CHECK_INT(view_swatch(&m, t, 1), VIEW_SW_BOTH_LOCAL);
    CHECK_INT(view_swatch(&m, t, 2), VIEW_SW_MISSED_GLOBAL);
    CHECK_INT(view_swatch(&m, t, 3), VIEW_SW_NEEDLESS_GLOBAL);
    /* τ is strict: a score equal to it is local */
    t->score[0] = 0.5f;
    CHECK_INT(view_swatch(&m, t, 0), VIEW_SW_MISSED_GLOBAL);
    /* QAdA as the predictor; unknown where it was not computed */
    m.agree_pred = VIEW_PRED_QADA;
    CHECK_INT(view_swatch(&m, t, 0), VIEW_SW_NONE);
    t->qada_logit[0] = (float)decide_theta_logit(0.3f);
    CHECK_INT(view_swatch(&m, t, 0), VIEW_SW_BOTH_GLOBAL);
    m.agree_pred = VIEW_PRED_GATE;
    t->gate[1] = 1;
    CHECK_INT(view_swatch(&m, t, 1), VIEW_SW_NEEDLESS_GLOBAL);
    trace_free(t);
    view_free(&m);
}

TEST(views_metric_layer_rates_and_totals) {
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    StepTrace *t = trace_new(2, 2);
    for (int p = 0; p < 4; p++) {
        t->pos = p;
        /* layer 0: AHA global at every step on head 0; oracle global on both heads at even steps */
        for (int c = 0; c < 4; c++) {
            t->score[c] = (c == 0) ? 0.9f : 0.1f;
            t->gate[c] = c == 0;
            t->oracle_logit[c] = (float)decide_theta_logit((c < 2 && p % 2 == 0) ? 0.8f : 0.0f);
            t->keys_read[c] = c == 0 ? p + 1 : 1;
        }
        view_push(&m, t, NULL);
    }
    float aha[2], oracle[2];
    view_layer_rates(&m, 3, aha, oracle);
    CHECK_NEAR(aha[0], 0.5, 1e-6);
    CHECK_NEAR(aha[1], 0.0, 1e-6);
    CHECK_NEAR(oracle[0], 0.5, 1e-6);
    CHECK_NEAR(oracle[1], 0.0, 1e-6);
    view_layer_rates(&m, 0, aha, oracle); /* up to the cursor only */
    CHECK_NEAR(oracle[0], 1.0, 1e-6);
    ViewTotals tot;
    view_totals(&m, 3, &tot);
    double g = tot.global_share, k = tot.keys_share;
    CHECK_NEAR(g, 0.25, 1e-9);
    /* keys: head 0 reads all (1+2+3+4), the others 1 each of (1+2+3+4) */
    CHECK_NEAR(k, (10.0 + 3 * 4) / (4 * 10.0), 1e-9);
    CHECK_NEAR(view_global_share(t), 0.25, 1e-6);
    m.tint_share = 1;
    CHECK_INT(view_token_swatch(&m, t), view_level(0.25f));
    trace_free(t);
    view_free(&m);
}

TEST(views_colour_pick_honours_no_color_and_mono) {
    CHECK_INT(view_colour_pick(0, NULL, 1, 256, 65536), VIEW_COLOUR_256);
    CHECK_INT(view_colour_pick(0, "", 1, 256, 65536), VIEW_COLOUR_256); /* empty NO_COLOR is unset */
    CHECK_INT(view_colour_pick(0, "1", 1, 256, 65536), VIEW_COLOUR_NONE);
    CHECK_INT(view_colour_pick(1, NULL, 1, 256, 65536), VIEW_COLOUR_NONE);
    CHECK_INT(view_colour_pick(0, NULL, 1, 8, 64), VIEW_COLOUR_8);
    CHECK_INT(view_colour_pick(0, NULL, 1, 256, 64), VIEW_COLOUR_8); /* too few pairs for the ramp */
    CHECK_INT(view_colour_pick(0, NULL, 1, 8, 16), VIEW_COLOUR_NONE);
    CHECK_INT(view_colour_pick(0, NULL, 0, 0, 0), VIEW_COLOUR_NONE);
    CHECK(view_palette_pairs_needed(VIEW_COLOUR_256) < 256);
    CHECK(view_palette_pairs_needed(VIEW_COLOUR_8) < 64);
}

TEST(views_glyph_ramps_mono_and_ascii) {
    ViewPalette u, a;
    view_palette_init(&u, VIEW_COLOUR_NONE, 0, NULL);
    view_palette_init(&a, VIEW_COLOUR_NONE, 1, NULL);
    /* the lowest level is a faint mark, not the blank of a cell with nothing to show */
    CHECK_INT(view_glyph_shade(&u, VIEW_SW_LEVEL1), 0xb7);
    CHECK_INT(view_glyph_shade(&u, VIEW_SW_NONE), ' ');
    CHECK_INT(view_glyph_shade(&a, VIEW_SW_NONE), ' ');
    CHECK_INT(view_glyph_shade(&u, VIEW_SW_LEVEL1 + 1), 0x2591);
    CHECK_INT(view_glyph_shade(&u, VIEW_SW_LEVEL1 + 4), 0x2592);
    CHECK_INT(view_glyph_shade(&u, VIEW_SW_LEVEL1 + 6), 0x2593);
    CHECK_INT(view_glyph_shade(&u, VIEW_SW_LEVEL1 + 7), 0x2588);
    CHECK_INT(view_glyph_shade(&a, VIEW_SW_LEVEL1), '_');
    CHECK_INT(view_glyph_shade(&a, VIEW_SW_LEVEL1 + 7), '@');
    CHECK_INT(view_glyph_shade(&a, VIEW_SW_MISSED_GLOBAL), 'X');
    CHECK_INT(view_glyph_spark(&u, 0.0f), 0x2581);
    CHECK_INT(view_glyph_spark(&u, 1.0f), 0x2588);
    CHECK_INT(view_glyph_spark(&a, 1.0f), '@');
    CHECK_INT(view_glyph_spark(&u, NAN), ' ');
    CHECK_INT(view_glyph_bar(&u, 0.5f), 0x258c);
    CHECK_INT(view_glyph_bar(&a, 1.0f), '#');
    /* strictly ASCII in ascii mode */
    for (int sw = 0; sw < VIEW_SWATCHES; sw++) CHECK(view_glyph_shade(&a, sw) < 0x80);
}

/* The cumulative counts give what recounting the history gives, also after
 * τ changes (before and after view_stats_sync). */
TEST(views_stats_match_recount_and_follow_tau) {
    ViewModel m;
    view_init(&m, 3, 5, NULL);
    StepTrace *t = trace_new(3, 5);
    for (int p = 0; p < 50; p++) {
        t->pos = p;
        for (int c = 0; c < 15; c++) {
            t->score[c] = (float)((p * 7 + c * 3) % 10) / 10.0f;
            t->gate[c] = t->score[c] > 0.5f;
            t->oracle_logit[c] = (float)decide_theta_logit((float)((p + c) % 4) / 8.0f);
            t->keys_read[c] = (p + c) % 3 ? p + 1 : 1;
        }
        if (p == 10) t->score[2] = NAN; /* falls back to the executed gate */
        view_push(&m, t, NULL);
    }
    trace_free(t);
    CHECK_INT(m.stats.n, 50);
    for (int pass = 0; pass < 2; pass++) {
        for (int upto = 0; upto < 50; upto += 7) {
            float fa[3], fo[3], sa[3], so[3];
            ViewTotals ft, st;
            view_layer_rates(&m, upto, fa, fo);
            view_totals(&m, upto, &ft);
            double fg = ft.global_share, fk = ft.keys_share;
            int n = m.stats.n;
            m.stats.n = 0; /* force the recount */
            view_layer_rates(&m, upto, sa, so);
            view_totals(&m, upto, &st);
            double sg = st.global_share, sk = st.keys_share;
            m.stats.n = n;
            for (int l = 0; l < 3; l++) {
                CHECK_NEAR(fa[l], sa[l], 1e-6);
                CHECK_NEAR(fo[l], so[l], 1e-6);
            }
            CHECK_NEAR(fg, sg, 1e-12);
            CHECK_NEAR(fk, sk, 1e-12);
        }
        float before[3], after[3], o[3];
        view_layer_rates(&m, 49, before, o);
        m.hdr.tau = 0.75f; /* stale counts are not used ... */
        view_layer_rates(&m, 49, after, o);
        CHECK(after[0] < before[0]);
        CHECK_INT(view_stats_sync(&m, NULL), 0); /* ... until synced */
        CHECK(m.stats.tau == 0.75f);
        view_layer_rates(&m, 49, before, o);
        CHECK_NEAR(before[0], after[0], 1e-6);
        m.hdr.tau = 0.5f;
        view_stats_sync(&m, NULL);
    }
    view_free(&m);
}

/* The regime metric: the far scores' σ as σ / √(2 ln n_far), drawn on a
 * 0 … 2 scale so the frozen boundary (1) is the gradient's middle; far_mean
 * has no heatmap and the `m` cycle passes it by. */
TEST(views_metric_regime_ratio_and_boundary) {
    CHECK_NEAR(view_regime(sqrt(2 * log(100.0)), 100), 1.0, 1e-6);
    CHECK_NEAR(view_regime(3.0, 50), 3.0 / sqrt(2 * log(50.0)), 1e-6);
    CHECK(isnan(view_regime(1.0, 1)) && isnan(view_regime(NAN, 100)));
    ViewModel m;
    view_init(&m, 1, 1, NULL);
    StepTrace *t = trace_new(1, 1);
    t->pos = 40, t->n_far = 100, t->far_std[0] = (float)sqrt(2 * log(100.0)), t->far_mean[0] = 2;
    CHECK_NEAR(view_metric_value(&m, t, 0, VIEW_METRIC_far_std), 0.5, 1e-6);
    t->far_std[0] = 100;
    CHECK_NEAR(view_metric_value(&m, t, 0, VIEW_METRIC_far_std), 1.0, 0); /* clamped at 2 */
    CHECK(isnan(view_metric_value(&m, t, 0, VIEW_METRIC_far_mean)));
    CHECK_INT(view_metric_step(VIEW_METRIC_far_std, -1), VIEW_METRIC_qada_rem_bulk_logit);
    trace_free(t);
    view_free(&m);
}

/* Before the first far key (pos < w + S) nothing was decided: the gate
 * metric shows "not computed" there, as the bars say n/a and the inspector
 * "no far keys", even though the trace holds the gate the engine ran. */
TEST(views_metric_gate_without_choice_is_not_painted) {
    ViewModel m;
    view_init(&m, 1, 2, NULL);
    m.metric = VIEW_METRIC_gate;
    StepTrace *t = trace_new(1, 2);
    t->gate[0] = 1, t->gate[1] = 0;
    t->n_far = 0;
    CHECK_INT(view_swatch(&m, t, 0), VIEW_SW_NONE);
    CHECK_INT(view_swatch(&m, t, 1), VIEW_SW_NONE);
    t->n_far = 3; /* with far keys the same gates are drawn */
    CHECK_INT(view_swatch(&m, t, 0), VIEW_SW_LEVEL1 + VIEW_LEVELS - 1);
    CHECK_INT(view_swatch(&m, t, 1), VIEW_SW_LEVEL1);
    t->n_far = 0;
    m.tint_share = 1; /* the share of heads global has no value either */
    CHECK_INT(view_token_swatch(&m, t), VIEW_SW_NONE);
    trace_free(t);
    view_free(&m);
}
