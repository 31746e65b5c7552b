/* test_views_numbers.c — numbers as the panes print them: thresholds, scores, -log p, oracle_err.
 *
 * Each pane prints a value at the decimals that keep it honest: a
 * threshold or score near 0 or 1 never rounds to it (θ 0.001, not 0.00),
 * a rounding never shows a minus sign on a quantity that cannot be
 * negative, and a value the maps clamp says so where it is printed raw. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/decide.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/explain.h"
#include "views/geom.h"
#include "views/why.h"

TEST(views_unit_text_keeps_the_tails) {
    const double v[] = {0.5, 0.1, 0.001, 0.0049, 0.9995, 0.99, 3e-7, 1 - 3e-7, 0, 1};
    const char *want[] = {"0.50", "0.10", "0.001", "0.005", "0.9995", "0.99", "<0.0001", ">0.9999", "0.00", "1.00"};
    for (int i = 0; i < 10; i++) {
        char buf[32];
        view_unit_text(buf, sizeof buf, v[i], 2);
        CHECK_MSG(!strcmp(buf, want[i]), "%g: \"%s\", expected \"%s\"", v[i], buf, want[i]);
    }
}

/* θ = 0.001 in the header, wide and compact; a router score of 0.0003 in the inspector's verdict. */
TEST(views_header_and_router_line_print_small_values) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 160, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 5);
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "aha");
    m.hdr.theta_logit = decide_theta_logit(0.001), m.hdr.tau = 0.5f;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    const int widths[2] = {160, 80};
    for (int i = 0; i < 2; i++) {
        WINDOW *w = newwin(1, widths[i], 0, 0);
        view_draw_header(w, &m, &pal);
        CHECK_MSG(strstr(fx_line(w, 0), "\xce\xb8 0.001"), "%d columns: %s", widths[i], fx_line(w, 0));
        delwin(w);
    }
    StepTrace *t = m.hist[m.cursor];
    t->score[0] = 0.0003f, t->n_far = 10;
    ViewExplain x;
    view_explain(&m, t, 0, &x);
    CHECK_MSG(strstr(x.line[VIEW_EXPLAIN_ROUTER], "router 0.0003 "), "%s", x.line[VIEW_EXPLAIN_ROUTER]);
    t->score[0] = 1e-6f;
    view_explain(&m, t, 0, &x);
    CHECK_MSG(strstr(x.line[VIEW_EXPLAIN_ROUTER], "router <0.0001 "), "%s", x.line[VIEW_EXPLAIN_ROUTER]);
    view_free(&m);
    fx_term_close(&term);
}

/* A certain token: -log p and H at 0 print 0.00, never -0.00. */
TEST(views_tokens_strip_never_prints_minus_zero) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 3);
    for (int i = 0; i < 3; i++) m.hist[i]->logprob = 0.0f, m.hist[i]->entropy = -0.0f;
    m.hist[2]->logprob = 1e-7f; /* a rounding above 0 */
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 1, NULL);
    WINDOW *w = newwin(6, 90, 0, 0);
    view_draw_tokens(w, &m, &pal);
    ViewTokGeom g;
    view_tok_geom(&m, 90, 6, &g);
    const char *strip = fx_line(w, g.y_strip);
    CHECK_MSG(strstr(strip, "-log p 0.00 H 0.00") && !strstr(strip, "-0.00"), "strip: '%s'", strip);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* oracle_err over 1 (the maps clamp it there): the why line says so rather than "192.4%". */
TEST(views_why_oracle_err_over_one_says_it_is_clamped) {
    ViewModel m;
    view_init(&m, 1, 1, NULL);
    fx_fill(&m, 3);
    StepTrace *t = m.hist[m.cursor];
    t->n_far = 10, t->oracle_err[0] = 1.924f;
    char lines[VIEW_WHY_LINES][VIEW_WHY_CAP];
    int n = view_why_lines(&m, 200, lines), seen = 0;
    for (int i = 0; i < n; i++)
        if (strstr(lines[i], "oracle_err 1.924")) {
            seen = 1;
            CHECK_MSG(!strstr(lines[i], "%") && strstr(lines[i], "clamp it at 1"), "%s", lines[i]);
        }
    CHECK_MSG(seen, "no oracle_err line among %d", n);
    t->oracle_err[0] = 0.25f;
    n = view_why_lines(&m, 200, lines), seen = 0;
    for (int i = 0; i < n; i++) seen |= strstr(lines[i], "oracle_err 0.250: ") && strstr(lines[i], "(25.0%)");
    CHECK(seen);
    view_free(&m);
}
