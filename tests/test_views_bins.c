/* test_views_bins.c — long runs in the timeline and the token pane: bins, titles, cursor.
 *
 * Long runs in the timeline and the token pane: past
 * what the columns hold, the timeline shows the whole run in bins of a
 * power of two positions (the mean of each, the worst agreement class under
 * the agreement metric), names the bin size in its title, and the cursor,
 * clicks and PgUp/PgDn still land on positions; the token pane lays out
 * only the blocks around the cursor and names the positions it shows; new
 * thresholds re-score the run a slice at a time beside the counts in use.
 * Headless: an off-screen terminal (tests/views_fixture.h). */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tests/views_fixture.h"
#include "views/geom.h"
#include "views/keymap.h"
#include "views/metric.h"
#include "views/palette.h"

/* A run of n positions on 2 x 2 heads: head 0 global at every fourth
 * position, head 1 at every position of even bins of 32, the others never. */
static void fill_pattern(ViewModel *m, int n) {
    StepTrace *t = trace_new(2, 2);
    for (int p = 0; p < n; p++) {
        trace_clear(t);
        t->pos = p, t->token = p % 50;
        snprintf(t->piece, sizeof t->piece, " w%d", p % 50);
        t->gate[0] = p % 4 == 0;
        t->gate[1] = (p / 32) % 2 == 0;
        t->gate[2] = t->gate[3] = 0; /* decided, local (a cleared trace has no decision) */
        for (int c = 0; c < 4; c++) t->oracle_logit[c] = c == 2 && p == 100 ? 5.0f : -5.0f;
        view_push(m, t, NULL);
    }
    trace_free(t);
}

/* The bin size, against its definition: a power of two, the least whose
 * columns hold every position. */
TEST(views_time_bin_is_the_least_power_of_two_that_fits) {
    CHECK_INT(view_time_bin(0, 130), 1);
    CHECK_INT(view_time_bin(130, 130), 1);
    CHECK_INT(view_time_bin(131, 130), 2);
    CHECK_INT(view_time_bin(4096, 130), 32);
    CHECK_INT(view_time_bin(4096, 128), 32); /* exactly full */
    CHECK_INT(view_time_bin(4097, 128), 64);
    CHECK_INT(view_time_bin(32768, 130), 256);
    CHECK_INT(view_time_bin(32768, 0), 1); /* no columns: nothing to bin into */
    for (int n = 1; n < 70000; n += 997)
        for (int cols = 1; cols < 300; cols += 37) {
            int b = view_time_bin(n, cols);
            CHECK_MSG((b & (b - 1)) == 0, "bin %d of %d in %d is not a power of two", b, n, cols);
            CHECK_MSG((long)b * cols >= n, "bin %d leaves %d positions out of %d columns", b, n, cols);
            CHECK_MSG(b == 1 || (long)(b / 2) * cols < n, "bin %d is not the least for %d in %d", b, n, cols);
        }
}

/* A binned cell's value is the mean over its positions (the gate's: the
 * share global); under the agreement metric, the worst class in it. */
TEST(views_timeline_bin_value_is_the_mean_or_the_worst) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    fill_pattern(&m, 4096);
    m.metric = VIEW_METRIC_gate;
    CHECK_INT(view_swatch_bin(&m, 0, 0, 32), view_level(0.25f)); /* one in four */
    CHECK_INT(view_swatch_bin(&m, 0, 0, 32), VIEW_SW_LEVEL1 + 2);
    CHECK_INT(view_swatch_bin(&m, 1, 0, 32), view_level(1.0f));   /* an even bin: all */
    CHECK_INT(view_swatch_bin(&m, 1, 32, 64), view_level(0.0f));  /* an odd one: none */
    CHECK_INT(view_swatch_bin(&m, 1, 16, 48), view_level(0.5f));  /* half of each */
    CHECK_INT(view_swatch_bin(&m, 3, 0, 256), view_level(0.0f));
    CHECK_INT(view_swatch_bin(&m, 0, 4, 5), view_swatch(&m, m.hist[4], 0)); /* one position: its own */
    CHECK_INT(view_swatch_bin(&m, 0, 4090, 4100), view_level(1.0f / 6)); /* cut at the end: 4090-4095, 4092 global */
    /* agreement of the executed gate with the oracle: head 2 is never global, the oracle wants it at 100 */
    m.metric = VIEW_METRIC_AGREE, m.agree_pred = VIEW_PRED_GATE;
    CHECK_INT(view_swatch_bin(&m, 2, 64, 96), VIEW_SW_BOTH_LOCAL);
    CHECK_INT(view_swatch_bin(&m, 2, 96, 128), VIEW_SW_MISSED_GLOBAL);
    CHECK_INT(view_swatch_bin(&m, 1, 0, 32), VIEW_SW_NEEDLESS_GLOBAL);
    view_free(&m);
}

/* The whole run in the pane: bins in the title, the axis numbering the
 * bins' first positions, the cursor's bin marked; a click lands on a bin's
 * first position and PgDn moves a bin. */
TEST(views_timeline_shows_a_long_run_in_bins) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 140, 45), 0);
    if (!term.scr) return;
    const int sizes[3] = {100, 4096, 32768};
    const int bins[3] = {1, 32, 256}; /* 140 columns less the border and the labels: 130 */
    for (int k = 0; k < 3; k++) {
        ViewModel m;
        CHECK_INT(view_init(&m, 2, 2, NULL), 0);
        fill_pattern(&m, sizes[k]);
        m.cursor = sizes[k] * 3 / 4, m.follow = 0;
        ViewTimeGeom g;
        view_time_geom(&m, 140, 12, 0, &g);
        CHECK_INT(g.bin, bins[k]);
        CHECK_INT(g.first_tok, 0);
        CHECK_INT(g.n_tok_vis, (sizes[k] + bins[k] - 1) / bins[k]);
        ViewPalette pal;
        CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL), 0);
        WINDOW *w = newwin(12, 140, 0, 0);
        view_draw_timeline(w, &m, &pal);
        char want[96];
        if (bins[k] > 1) {
            snprintf(want, sizeof want, "pos 0-%d of %d \xc2\xb7 1 col = %d pos (mean)", sizes[k] - 1, sizes[k], bins[k]);
            CHECK_MSG(fx_contains(w, want), "title: %s", fx_line(w, 0));
            snprintf(want, sizeof want, "%d", 10 * bins[k]); /* the axis: the tenth column's first position */
            CHECK_MSG(strstr(fx_line(w, 11), want) != NULL, "axis: %s", fx_line(w, 11));
        } else CHECK_MSG(!fx_contains(w, "1 col ="), "a short run is not binned: %s", fx_line(w, 0));
        wchar_t ch;
        short pair;
        attr_t a;
        fx_cell(w, 11, g.x0 + m.cursor / bins[k], &ch, &pair, &a); /* the cursor's column */
        CHECK_INT(ch, 0x25b2); /* ▲ */
        delwin(w);
        /* a click on column 31 of the pane: that bin's first position */
        Layout lay;
        LayoutOpts lo = view_layout_opts(&m);
        view_layout(140, 45, &lo, &lay);
        const ViewRect *r = &lay.pane[VIEW_PANE_TIMELINE];
        view_time_geom(&m, r->w, r->h, lo.half_blocks, &g);
        ViewHit h = view_hit(&m, &lay, r->x + g.x0 + 31, r->y + g.y0);
        CHECK_INT(h.pane, VIEW_PANE_TIMELINE);
        CHECK_INT(h.pos, 31 * g.bin < sizes[k] ? 31 * g.bin : sizes[k] - 1);
        /* PgDn: a bin when a bin is more than ten positions; ] one position */
        view_time_fit(&m, &lay);
        CHECK_INT(m.time_bin, g.bin);
        int at = m.cursor = 10;
        view_key(&m, KEY_NPAGE);
        CHECK_INT(m.cursor, at + (g.bin > 10 ? g.bin : 10));
        view_key(&m, ']');
        CHECK_INT(m.cursor, at + (g.bin > 10 ? g.bin : 10) + 1);
        view_free(&m);
    }
    fx_term_close(&term);
}

/* The agreement metric's bins say they show the worst class. */
TEST(views_timeline_agreement_bins_say_worst) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 140, 45), 0);
    if (!term.scr) return;
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    fill_pattern(&m, 4096);
    m.metric = VIEW_METRIC_AGREE;
    ViewPalette pal;
    CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL), 0);
    WINDOW *w = newwin(12, 140, 0, 0);
    view_draw_timeline(w, &m, &pal);
    CHECK_MSG(fx_contains(w, "1 col = 32 pos (worst)"), "title: %s", fx_line(w, 0));
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* The token pane of a long run lays out the blocks around the cursor: the
 * cursor's token is drawn, highlighted, and the title names the positions
 * shown; a short run's title names none. */
TEST(views_tokens_window_a_long_run_around_the_cursor) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewPalette pal;
    CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_256, 1, NULL), 0);
    const int sizes[3] = {40, 4096, 32768};
    for (int k = 0; k < 3; k++) {
        ViewModel m;
        CHECK_INT(view_init(&m, 2, 2, NULL), 0);
        fill_pattern(&m, sizes[k]);
        m.cursor = sizes[k] * 2 / 3, m.follow = 0;
        WINDOW *w = newwin(8, 90, 0, 0);
        view_draw_tokens(w, &m, &pal);
        ViewTokGeom g;
        view_tok_geom(&m, 90, 8, &g);
        const char *title = fx_line(w, 0);
        int a = -1, b = -1, n = -1;
        const char *at = strstr(title, "pos ");
        if (sizes[k] <= 2 * g.iw * g.ih) {
            CHECK_INT(g.first_pos, 0);
            CHECK_MSG(at == NULL, "a run the pane can lay out whole names no range: %s", title);
        } else {
            CHECK(g.first_pos > 0 && g.first_pos <= m.cursor);
            CHECK_MSG(at && sscanf(at, "pos %d-%d of %d", &a, &b, &n) == 3, "title: %s", title);
            CHECK_MSG(a <= m.cursor && m.cursor <= b && n == sizes[k], "range %d-%d of %d, cursor %d", a, b, n,
                      m.cursor);
            CHECK(b - a < g.iw * g.ih); /* no more than the pane holds */
        }
        int seen = 0; /* the cursor's token, highlighted, on some line */
        char piece[16];
        snprintf(piece, sizeof piece, "w%d", m.cursor % 50);
        for (int y = 1; y < 1 + g.ih && !seen; y++) {
            const char *line = fx_line(w, y), *p = strstr(line, piece);
            while (p && !seen) {
                wchar_t ch;
                short pair;
                attr_t attr;
                /* the column of p in the line: its byte offset (the pieces are ASCII) */
                fx_cell(w, y, (int)(p - line), &ch, &pair, &attr);
                seen = (attr & A_REVERSE) != 0;
                p = strstr(p + 1, piece);
            }
        }
        CHECK_MSG(seen, "the cursor's token %s is not shown highlighted at %d positions", piece, sizes[k]);
        delwin(w);
        view_free(&m);
    }
    fx_term_close(&term);
}

/* Re-scoring a long run a slice at a time: the thresholds and counts in use
 * stay until the new counts cover the history, then both change at once,
 * to what a recount from scratch at the new thresholds gives; a cancelled
 * rescore leaves them as they were. */
TEST(views_rescore_counts_beside_then_swaps) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    StepTrace *t = trace_new(2, 2);
    for (int p = 0; p < 1000; p++) { /* scores spread over [0, 1): tau decides how many are global */
        trace_clear(t);
        t->pos = p, t->n_far = p;
        for (int c = 0; c < 4; c++) {
            t->score[c] = (float)((p * 7 + c * 13) % 100) / 100.0f;
            t->gate[c] = t->score[c] > 0.5f;
            t->oracle_logit[c] = (float)((p + c) % 9) - 4.0f;
        }
        view_push(&m, t, NULL);
    }
    trace_free(t);
    float tau0 = m.hdr.tau, a0[2], o0[2], a[2], o[2];
    view_layer_rates(&m, 999, a0, o0);
    view_rescore_begin(&m, 0.25f, m.hdr.theta_logit);
    CHECK_INT(view_rescore_step(&m, 300, NULL), 0);
    CHECK_INT(m.rescore.n, 300);
    CHECK_NEAR(m.hdr.tau, tau0, 0); /* still the old thresholds, and their counts */
    view_layer_rates(&m, 999, a, o);
    CHECK_NEAR(a[0], a0[0], 0);
    CHECK_INT(view_rescore_step(&m, 300, NULL), 0);
    CHECK_INT(view_rescore_step(&m, 1000, NULL), 1); /* the last 400: done */
    CHECK_NEAR(m.hdr.tau, 0.25f, 0);
    CHECK_INT(m.rescoring, 0);
    CHECK_INT(m.stats.n, 1000);
    /* the reference: the same history recounted from scratch at tau 0.25 */
    float ra[2], ro[2];
    view_layer_rates(&m, 999, a, o);
    m.stats.n = 0; /* stale counts force view_layer_rates to count every position itself */
    view_layer_rates(&m, 999, ra, ro);
    m.stats.n = 1000;
    for (int l = 0; l < 2; l++) {
        CHECK_NEAR(a[l], ra[l], 1e-6);
        CHECK_NEAR(o[l], ro[l], 1e-6);
    }
    CHECK(a[0] > a0[0]); /* a lower tau: more heads global */
    /* cancelled: nothing changes */
    view_rescore_begin(&m, 0.9f, m.hdr.theta_logit);
    CHECK_INT(view_rescore_step(&m, 10, NULL), 0);
    view_rescore_cancel(&m);
    CHECK_INT(view_rescore_step(&m, 10, NULL), 1); /* none under way */
    CHECK_NEAR(m.hdr.tau, 0.25f, 0);
    float c[2];
    view_layer_rates(&m, 999, c, o);
    CHECK_NEAR(c[0], a[0], 0);
    view_free(&m);
}
