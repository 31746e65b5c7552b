/* test_views_draw.c — drawing into off-screen windows, read back with `mvwin_wch`.
 *
 * Drawing into off-screen windows (newterm on /dev/null): glyphs and colour
 * pairs read back with mvwin_wch, legend text, tokens, header, frames. */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/decide.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/explain.h"
#include "views/geom.h"
#include "views/keymap.h"
#include "views/metric.h"
#include "views/paint.h"
#include "views/yank.h"
#include "views/why.h"

/* A 3-layer × 4-head model with one step: gate global exactly on cells
 * where (layer + head) is even, except cell (2, 3) which is not computed. */
static void gate_model(ViewModel *m, int n_layers) {
    view_init(m, n_layers, 4, NULL);
    StepTrace *t = trace_new(n_layers, 4);
    t->pos = 0;
    snprintf(t->piece, sizeof t->piece, "Hi");
    for (int l = 0; l < n_layers; l++)
        for (int h = 0; h < 4; h++) {
            int c = l * 4 + h;
            t->gate[c] = (l + h) % 2 == 0;
            t->score[c] = t->gate[c] ? 0.9f : 0.1f;
            t->oracle_logit[c] = (float)decide_theta_logit((l == 0) ? 0.5f : 0.0f);
        }
    t->gate[2 * 4 + 3] = -1;
    view_push(m, t, NULL);
    trace_free(t);
}

/* Colour numbers behind a pair. */
static void pair_colours(short pair, short *fg, short *bg) {
    *fg = *bg = -99;
    pair_content(pair, fg, bg);
}

/* Where heatmap cell (layer, head) is drawn in a w×h heatmap window. */
static void cell_at(const ViewModel *m, const ViewPalette *p, int w, int h, int layer, int head, int *y, int *x) {
    ViewHeatGeom g;
    view_heat_geom(m, w, h, p->colour != VIEW_COLOUR_NONE && !p->ascii, &g);
    *x = g.x0 + (head - g.first_head) * (g.cw + g.gap);
    *y = g.y0 + (layer - g.first_layer) / (g.half ? 2 : 1);
}

TEST(views_draw_heatmap_cell_glyph_and_pair_256) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    gate_model(&m, 3);
    m.colour = VIEW_COLOUR_256;
    ViewPalette pal;
    CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL), 0);
    WINDOW *w = newwin(8, 40, 0, 0);
    view_draw_heatmap(w, &m, &pal);
    int y, x;
    wchar_t ch;
    short pair, fg, bg;
    attr_t a;
    cell_at(&m, &pal, 40, 8, 1, 1, &y, &x); /* (1+1) even: global */
    fx_cell(w, y, x, &ch, &pair, &a);
    CHECK_INT(ch, 0x2588); /* █: three layers fit, one per line */
    CHECK_INT(pair, view_pair_cells(&pal, VIEW_SW_LEVEL1 + VIEW_LEVELS - 1, VIEW_SW_LEVEL1 + VIEW_LEVELS - 1));
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, 220); /* the hot end of the ramp */
    cell_at(&m, &pal, 40, 8, 1, 2, &y, &x); /* local */
    fx_cell(w, y, x, &ch, &pair, &a);
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, 54); /* the cold end */
    cell_at(&m, &pal, 40, 8, 2, 3, &y, &x); /* not computed */
    fx_cell(w, y, x, &ch, &pair, &a);
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, 236);
    /* the selected cell (0, 0) is outlined by eighth-blocks either side */
    cell_at(&m, &pal, 40, 8, 0, 0, &y, &x);
    fx_cell(w, y, x - 1, &ch, &pair, &a);
    CHECK_INT(ch, 0x2595);
    ViewHeatGeom g;
    view_heat_geom(&m, 40, 8, 1, &g);
    fx_cell(w, y, x + g.cw, &ch, &pair, &a);
    CHECK_INT(ch, 0x258f);
    CHECK(strstr(fx_line(w, 0), "L0 H0") != NULL);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_draw_heatmap_half_blocks_pair_two_layers) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    gate_model(&m, 16);
    m.colour = VIEW_COLOUR_256;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(11, 40, 0, 0); /* 8 cell lines for 16 layers */
    view_draw_heatmap(w, &m, &pal);
    int y, x;
    wchar_t ch;
    short pair, fg, bg;
    attr_t a;
    cell_at(&m, &pal, 40, 11, 4, 2, &y, &x); /* layer 4 global over layer 5 local */
    CHECK_INT(y, 2 + 2);
    fx_cell(w, y, x, &ch, &pair, &a);
    CHECK_INT(ch, 0x2580); /* ▀ */
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, 220);
    CHECK_INT(bg, 54);
    cell_at(&m, &pal, 40, 11, 4, 3, &y, &x); /* layer 4 local over layer 5 global */
    fx_cell(w, y, x, &ch, &pair, &a);
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, 54);
    CHECK_INT(bg, 220);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_draw_heatmap_8_colours_mono_and_ascii) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm", 100, 30), 0);
    if (!term.scr) return;
    CHECK_INT(view_colour_detect(0), VIEW_COLOUR_8);
    ViewModel m;
    gate_model(&m, 3);
    ViewPalette pal;
    CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_8, 0, NULL), 0);
    WINDOW *w = newwin(8, 40, 0, 0);
    view_draw_heatmap(w, &m, &pal);
    int y, x;
    wchar_t ch;
    short pair, fg, bg;
    attr_t a;
    cell_at(&m, &pal, 40, 8, 0, 0, &y, &x);
    fx_cell(w, y, x, &ch, &pair, &a);
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, COLOR_YELLOW);
    cell_at(&m, &pal, 40, 8, 0, 1, &y, &x);
    fx_cell(w, y, x, &ch, &pair, &a);
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, COLOR_BLUE);

    /* no colour: shading glyphs and pair 0 */
    view_palette_init(&pal, VIEW_COLOUR_NONE, 0, NULL);
    werase(w);
    view_draw_heatmap(w, &m, &pal);
    cell_at(&m, &pal, 40, 8, 1, 1, &y, &x);
    fx_cell(w, y, x, &ch, &pair, &a);
    CHECK_INT(ch, 0x2588);
    CHECK_INT(pair, 0);
    cell_at(&m, &pal, 40, 8, 1, 2, &y, &x);
    fx_cell(w, y, x, &ch, &pair, &a);
    CHECK_INT(ch, 0xb7); /* local: a faint mark, where a cell without a value is blank */
    /* router score 0.9 → level 8 → full shade; ascii → '@' */
    m.metric = VIEW_METRIC_score;
    view_palette_init(&pal, VIEW_COLOUR_NONE, 1, NULL);
    werase(w);
    view_draw_heatmap(w, &m, &pal);
    cell_at(&m, &pal, 40, 8, 1, 1, &y, &x);
    fx_cell(w, y, x, &ch, &pair, &a);
    CHECK_INT(ch, '@');
    fx_cell(w, y, x - 1, &ch, &pair, &a); /* not selected: the gap stays blank */
    CHECK_INT(ch, ' ');
    fx_cell(w, 0, 0, &ch, &pair, &a);
    CHECK_INT(ch, '+'); /* ASCII border */
    for (int yy = 0; yy < 8; yy++)
        for (const char *s = fx_line(w, yy); *s; s++) CHECK_MSG((unsigned char)*s < 0x80, "non-ASCII on line %d", yy);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_draw_legend_follows_metric_cycle) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 120, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    gate_model(&m, 3);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(1, 120, 0, 0);
    char seen[VIEW_METRIC_COUNT][512];
    for (int i = 0; i < VIEW_METRIC_COUNT; i++) { /* every metric, also those the `m` cycle skips */
        m.metric = (ViewMetric)i;
        werase(w);
        view_draw_legend(w, &m, &pal);
        snprintf(seen[i], sizeof seen[i], "%s", fx_line(w, 0));
        CHECK_MSG(strstr(seen[i], view_metric_name(m.metric)) != NULL, "legend '%s' lacks '%s'", seen[i],
                  view_metric_name(m.metric));
    }
    for (int i = 1; i < VIEW_METRIC_COUNT; i++) CHECK(strcmp(seen[i], seen[i - 1]) != 0);
    CHECK(strstr(seen[VIEW_METRIC_gate], "local") && strstr(seen[VIEW_METRIC_gate], "global"));
    CHECK(strstr(seen[VIEW_METRIC_score], "0.50") != NULL); /* τ shown with the score scale */
    CHECK(strstr(seen[VIEW_METRIC_AGREE], "missed global") && strstr(seen[VIEW_METRIC_AGREE], "needless global"));
    CHECK(strstr(seen[VIEW_METRIC_qada_bulk_logit], "ablation") != NULL);
    CHECK_MSG(strstr(seen[VIEW_METRIC_far_std], "above 1 (mid) is the frozen regime") &&
              strstr(seen[VIEW_METRIC_far_std], "0 ") && strstr(seen[VIEW_METRIC_far_std], " 2 "),
              "%s", seen[VIEW_METRIC_far_std]);
    /* the scale's samples carry the ramp's colours, cold to hot */
    m.metric = VIEW_METRIC_score;
    werase(w);
    view_draw_legend(w, &m, &pal);
    const char *line = fx_line(w, 0);
    const char *zero = strstr(line, ": 0 ");
    CHECK(zero != NULL);
    if (zero) {
        int x = view_text_width("", 0);
        for (const char *s = line; s < zero + 4; s++) x += ((unsigned char)*s & 0xc0) != 0x80;
        wchar_t ch;
        short pair, fg, bg;
        attr_t a;
        fx_cell(w, 0, x, &ch, &pair, &a);
        pair_colours(pair, &fg, &bg);
        CHECK_INT(fg, 54);
        fx_cell(w, 0, x + VIEW_LEVELS - 1, &ch, &pair, &a);
        pair_colours(pair, &fg, &bg);
        CHECK_INT(fg, 220);
    }
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_draw_tokens_tint_and_cursor) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 12);
    view_key(&m, KEY_HOME);
    view_key(&m, ']'); /* cursor on " upon" */
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(6, 90, 0, 0);
    view_draw_tokens(w, &m, &pal);
    CHECK(strstr(fx_line(w, 1), "Once upon a time, there was") != NULL);
    CHECK(strstr(fx_line(w, 2), "Once upon a time") != NULL); /* the newline token wrapped */
    wchar_t ch;
    short pair;
    attr_t a;
    fx_cell(w, 1, 1 + 5, &ch, &pair, &a); /* 'u' of " upon" */
    CHECK_INT(ch, 'u');
    CHECK(a & A_REVERSE);
    CHECK_INT(pair, view_pair_token(&pal, view_token_swatch(&m, m.hist[1])));
    fx_cell(w, 1, 1, &ch, &pair, &a); /* "Once": not the cursor, tinted by its own gate */
    CHECK(!(a & A_REVERSE));
    int sw0 = m.hist[0]->gate[0] ? VIEW_SW_LEVEL1 + VIEW_LEVELS - 1 : VIEW_SW_LEVEL1;
    CHECK_INT(pair, view_pair_token(&pal, sw0));
    CHECK(strstr(fx_line(w, 0), "executed gate") != NULL);
    CHECK(strstr(fx_line(w, 0), "3 prompt + 9 generated") != NULL);
    view_key(&m, 'g');
    werase(w);
    view_draw_tokens(w, &m, &pal);
    CHECK(strstr(fx_line(w, 0), "share of heads global") != NULL);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_draw_header_shows_policy_and_settings) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 160, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 5);
    snprintf(m.hdr.model, sizeof m.hdr.model, "stories260K");
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "aha");
    snprintf(m.hdr.record, sizeof m.hdr.record, "ahascope.db run 4");
    m.hdr.window = 128;
    m.hdr.ctx_len = 512;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(1, 160, 0, 0);
    view_draw_header(w, &m, &pal);
    const char *line = fx_line(w, 0);
    CHECK(strstr(line, "stories260K") && strstr(line, "policy aha") && strstr(line, "w 128"));
    CHECK(strstr(line, "pos 4/512") && strstr(line, "ahascope.db run 4"));
    CHECK(strstr(line, "\xcf\x84 0.50") && strstr(line, "\xce\xb8 0.10"));
    ViewTotals tot;
    view_totals(&m, m.cursor, &tot);
    double g = tot.global_share;
    char expect[32];
    snprintf(expect, sizeof expect, "global %.1f%%", 100 * g);
    CHECK(strstr(line, expect) != NULL);
    /* narrow: low-priority fields go; at 80 columns the compact line keeps
     * every setting (policy, window, sinks, τ, θ) and the global share */
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "oracle");
    snprintf(m.hdr.model, sizeof m.hdr.model, "stories260K.bin");
    m.hdr.sinks = 4;
    m.hdr.tok_s = 123.4;
    WINDOW *n = newwin(1, 80, 1, 0);
    view_draw_header(n, &m, &pal);
    line = fx_line(n, 0);
    CHECK_MSG(strstr(line, "oracle") && strstr(line, "w128") && strstr(line, "s4"), "%s", line);
    CHECK_MSG(strstr(line, "\xcf\x84 0.50") && strstr(line, "\xce\xb8 0.10") && strstr(line, "pos 4/512"), "%s", line);
    snprintf(expect, sizeof expect, "glob %.1f%%", 100 * g);
    CHECK_MSG(strstr(line, expect) != NULL, "%s", line);
    CHECK(strstr(line, "ahascope.db") == NULL);
    /* a replay says so first, whatever the width; re-scored, τ shows beside the gates' own thresholds */
    snprintf(m.hdr.mode, sizeof m.hdr.mode, "replay run 4");
    m.hdr.gates_fixed = 1, m.hdr.gate_tau = 0.5f, m.hdr.gate_theta_logit = m.hdr.theta_logit;
    m.hdr.tau = 0.6f;
    werase(n);
    view_draw_header(n, &m, &pal);
    line = fx_line(n, 0);
    CHECK_MSG(strstr(line, "replay run 4") && strstr(line, "\xcf\x84 0.60 \xce\xb8 0.10 (gates 0.50/0.10)"), "%s", line);
    m.hdr.tau = 0.5f; /* back at the recorded thresholds: nothing to add */
    werase(n);
    view_draw_header(n, &m, &pal);
    CHECK_MSG(!strstr(fx_line(n, 0), "gates"), "%s", fx_line(n, 0));
    delwin(n);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_draw_inspector_strip_out_of_window_mass) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 8);
    m.inspector_open = 1;
    float wts[8] = {0.1f, 0.1f, 0.1f, 0.05f, 0.2f, 0.15f, 0.1f, 0.2f};
    /* window 4 at pos 7 keeps 4…7; sink 0 is local too: 1…3 is outside */
    view_set_attention(&m, 7, 0, 0, wts, 8, 4, 1, NULL);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(8, 100, 0, 0);
    view_draw_inspector(w, &m, &pal);
    ViewInspGeom g;
    view_insp_geom(&m, 100, 8, &g);
    /* beside the verdicts: the axis labelled with the window's start and the
     * last position, and where the head looked, heaviest far position first */
    CHECK(strstr(fx_line(w, g.y_strip + 1), "pos     s\xe2\x94\x80\xe2\x94\x80" "4\xe2\x86\x91\xe2\x95\x90\xe2\x95\x90" "7"));
    CHECK(strstr(fx_line(w, g.y_strip + 1), "sinks 10% \xc2\xb7 window 65% \xc2\xb7 far 25% \xc2\xb7 pos 1 \" upon\" 0.10"));
    wchar_t ch;
    short pair;
    attr_t a;
    fx_cell(w, g.y_strip + 1, g.x0 + 4, &ch, &pair, &a);
    CHECK_INT(ch, 0x2191); /* ↑ under position 4, the window's start */
    fx_cell(w, g.y_strip + 1, g.x0, &ch, &pair, &a);
    CHECK_INT(ch, 's');
    fx_cell(w, g.y_strip, g.x0 + 4, &ch, &pair, &a);
    CHECK_INT(ch, 0x2588); /* the largest weight fills its cell */
    /* the score sparkline's value at the cursor */
    char val[16];
    snprintf(val, sizeof val, "%.2f", fx_value(7, 0, 0));
    CHECK(strstr(fx_line(w, g.y_spark), val) != NULL);
    /* stacked (too narrow beside the sparklines): the boundary with its note */
    WINDOW *n = newwin(8, 46, 0, 0);
    view_insp_geom(&m, 46, 8, &g);
    CHECK_INT(g.stacked, 1);
    view_draw_inspector(n, &m, &pal);
    CHECK(fx_contains(n, "window from 4 \xc2\xb7 far 25%")); /* whole percent, as the oracle's line */
    delwin(n);
    /* another head: the strip no longer applies */
    m.sel_head = 1;
    werase(w);
    view_draw_inspector(w, &m, &pal);
    CHECK(fx_contains(w, "not available"));
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_frame_layout_follows_terminal_size) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 60, 20), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 30);
    m.colour = VIEW_COLOUR_256;
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "aha");
    ViewScreen s;
    Err e;
    CHECK_INT(view_screen_init(&s, &m, &e), 0);
    CHECK_INT(view_frame(&s, &m, &e), 0);
    CHECK(fx_contains(curscr, "enlarge to 80\xc3\x97" "24"));
    CHECK_INT(s.lay.too_small, 1);
    resizeterm(30, 100);
    CHECK_INT(view_frame(&s, &m, &e), 0);
    CHECK_INT(s.lay.too_small, 0);
    CHECK(!fx_contains(curscr, "enlarge"));
    CHECK(fx_contains(curscr, "timeline"));
    CHECK(fx_contains(curscr, "policy aha"));
    CHECK(fx_contains(curscr, "executed gate"));
    view_key(&m, 'm');
    CHECK_INT(view_frame(&s, &m, &e), 0);
    CHECK(fx_contains(curscr, "router score"));
    view_key(&m, '?'); /* the help takes every line but the header and the status line */
    CHECK_INT(view_frame(&s, &m, &e), 0);
    CHECK(fx_contains(curscr, "help"));
    CHECK(fx_contains(curscr, "move focus between panes")); /* a first-page row: later rows scroll at 30 lines */
    view_key(&m, 27);
    view_set_sql(&m, "select count(*) from runs", "count(*)\n42", NULL);
    CHECK_INT(view_frame(&s, &m, &e), 0);
    CHECK(!fx_contains(curscr, "move focus between panes"));
    CHECK(fx_contains(curscr, "select count(*) from runs"));
    CHECK(fx_contains(curscr, "42"));
    CHECK(!fx_contains(curscr, "timeline"));
    CHECK(s.win[VIEW_PANE_SQL] != NULL && s.win[VIEW_PANE_TIMELINE] == NULL);
    /* --mono at run time: no colour pairs anywhere on screen */
    m.mono = 1;
    CHECK_INT(view_frame(&s, &m, &e), 0);
    int coloured = 0;
    for (int y = 0; y < 30; y++)
        for (int x = 0; x < 100; x++) {
            wchar_t ch;
            short pair;
            attr_t a;
            fx_cell(curscr, y, x, &ch, &pair, &a);
            coloured += pair != 0;
        }
    CHECK_INT(coloured, 0);
    view_screen_free(&s);
    view_free(&m);
    fx_term_close(&term);
}

/* The status line's bench: a 2×2-head model, the 256-colour palette and a
 * window of one line of 100 columns on a fake terminal. */
typedef struct {
    FxTerm term;
    ViewModel m;
    ViewPalette pal;
    WINDOW *w;
} StatusBench;

/* 0, or -1 when the terminal cannot open (the test then checks nothing more). */
static int status_bench_open(StatusBench *b) {
    CHECK_INT(fx_term_open(&b->term, "xterm-256color", 100, 30), 0);
    if (!b->term.scr) return -1;
    view_init(&b->m, 2, 2, NULL);
    view_palette_init(&b->pal, VIEW_COLOUR_256, 0, NULL);
    b->w = newwin(1, 100, 0, 0);
    return 0;
}

static void status_bench_close(StatusBench *b) {
    delwin(b->w);
    view_free(&b->m);
    fx_term_close(&b->term);
}

/* The status line as it draws now, copied into line. */
static const char *status_now(StatusBench *b, char *line, size_t n) {
    werase(b->w);
    view_draw_status(b->w, &b->m, &b->pal);
    snprintf(line, n, "%s", fx_line(b->w, 0));
    return line;
}

TEST(views_status_line_message_and_keys) {
    StatusBench b;
    if (status_bench_open(&b)) return;
    char line[200];
    CHECK(strstr(status_now(&b, line, sizeof line), "q quit") != NULL);
    CHECK(strstr(line, "paused") != NULL);
    b.m.playing = 1;
    b.m.speed = 4;
    view_set_status(&b.m, "exported run 3 to run3.json");
    CHECK(strstr(status_now(&b, line, sizeof line), "exported run 3 to run3.json") != NULL);
    CHECK(strstr(line, "playing 4/s") != NULL);
    b.m.status[0] = '\0';
    b.m.focus = VIEW_PANE_SQL;
    CHECK(strstr(status_now(&b, line, sizeof line), "scroll") != NULL);
    status_bench_close(&b);
}

/* A job's progress line shows where the key hints would; a key's message
 * goes over it, and the next key clears the message but not the progress,
 * until the job drops it. */
TEST(views_status_line_progress_under_a_keys_message) {
    StatusBench b;
    if (status_bench_open(&b)) return;
    char seen[4][200];
    view_set_progress(&b.m, "loading run 1: %d of %d positions", 10, 4000);
    status_now(&b, seen[0], sizeof seen[0]);
    view_set_status(&b.m, "pinned L0 H0");
    view_set_progress(&b.m, "loading run 1: %d of %d positions", 20, 4000); /* redrawn as the job goes on */
    status_now(&b, seen[1], sizeof seen[1]);
    view_key(&b.m, ']');
    status_now(&b, seen[2], sizeof seen[2]);
    view_clear_progress(&b.m);
    status_now(&b, seen[3], sizeof seen[3]);
    CHECK_MSG(strstr(seen[0], "loading run 1: 10 of 4000") && !strstr(seen[0], "q quit"), "%s", seen[0]);
    CHECK_MSG(strstr(seen[1], "pinned L0 H0") && !strstr(seen[1], "loading"), "%s", seen[1]);
    CHECK_MSG(strstr(seen[2], "loading run 1: 20 of 4000") && !strstr(seen[2], "pinned"), "%s", seen[2]);
    CHECK_MSG(strstr(seen[3], "q quit") && !strstr(seen[3], "loading"), "%s", seen[3]);
    status_bench_close(&b);
}

/* Every pane drawn into windows of awkward sizes: no crash, nothing left
 * half-drawn outside what ncurses can clip. */
TEST(views_draw_survives_tiny_windows) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 16, 16, NULL);
    fx_fill(&m, 40);
    m.inspector_open = 1;
    view_set_sql(&m, "q", "a\tb\nc", NULL);
    float wts[40];
    for (int i = 0; i < 40; i++) wts[i] = 1.0f / 40;
    view_set_attention(&m, 39, 0, 0, wts, 40, 8, 2, NULL);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    static void (*const fns[])(WINDOW *, const ViewModel *, const ViewPalette *) = {
        view_draw_header,    view_draw_tokens, view_draw_heatmap, view_draw_timeline, view_draw_bars,
        view_draw_inspector, view_draw_sql,    view_draw_legend,  view_draw_status,   view_draw_help,
    };
    static const int sizes[][2] = {{1, 1}, {2, 2}, {3, 10}, {1, 40}, {5, 5}, {4, 30}, {12, 7}};
    int drawn = 0;
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            WINDOW *w = newwin(sizes[s][0], sizes[s][1], 0, 0);
            fns[f](w, &m, &pal);
            drawn++;
            delwin(w);
        }
    CHECK_INT(drawn, 70);
    view_free(&m);
    fx_term_close(&term);
}

/* The header says which keys it counts (per query head, per KV head) and
 * splits the cursor step's bytes into weights and KV, with its bounds. */
TEST(views_draw_header_splits_the_steps_bytes) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 250, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 4, NULL); /* 2 layers, 4 query heads over 2 KV heads */
    StepTrace *t = trace_new(2, 4);
    t->pos = 9, t->token = 5, t->n_far = 6, t->n_kv_heads = 2; /* 10 keys: 4 local, 6 far */
    for (int c = 0; c < 8; c++) t->gate[c] = c == 0, t->keys_read[c] = c == 0 ? 10 : 4;
    t->kv_read[0] = 10, t->kv_read[1] = 4, t->kv_read[4] = 4, t->kv_read[5] = 4; /* head 0's KV head reads all */
    view_push(&m, t, NULL);
    trace_free(t);
    m.hdr.weight_bytes = 2e6, m.hdr.kv_bytes_per_pos = 1000;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(1, 250, 0, 0);
    view_draw_header(w, &m, &pal);
    const char *line = fx_line(w, 0);
    /* keys/qh (10 + 7*4) / 80; KV (10 + 3*4) / 40; bytes: 22 positions, bounds 16 and 40 */
    CHECK_MSG(strstr(line, "keys/qh 47.5%") && strstr(line, "KV read 55.0%"), "%s", line);
    CHECK_MSG(strstr(line, "step 2 MB + KV 0.022 MB [0.016..0.04]"), "%s", line);
    CHECK_MSG(strstr(line, "global 12.5%"), "%s", line);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* The inspector at pos 7 of a 2×2 fixture, head (0, 0) set to a global
 * router decision the oracle needed: τ 0.5, θ 10%, policy aha. */
static void verdict_model(ViewModel *m) {
    view_init(m, 2, 2, NULL);
    fx_fill(m, 8);
    m->inspector_open = 1;
    m->hdr.tau = 0.5f;
    m->hdr.theta_logit = decide_theta_logit(0.1);
    snprintf(m->hdr.policy, sizeof m->hdr.policy, "aha");
    StepTrace *t = m->hist[7];
    t->score[0] = 0.51f;
    t->gate[0] = 1;
    t->oracle_logit[0] = (float)decide_theta_logit(0.31);
    t->qada_logit[0] = (float)decide_theta_logit(0.93);
}

TEST(views_draw_inspector_shows_the_verdicts) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    verdict_model(&m);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(8, 100, 0, 0);
    view_draw_inspector(w, &m, &pal);
    ViewInspGeom g;
    view_insp_geom(&m, 100, 8, &g);
    CHECK(g.text_w > 0);
    /* each verdict on its predictor's sparkline row, the gate's beside the strip */
    CHECK(strstr(fx_line(w, g.y_spark), "router 0.51 > \xcf\x84 0.50 \xe2\x86\x92 global \xc2\xb7 needed and taken"));
    CHECK(strstr(fx_line(w, g.y_spark + 1), "oracle: 31% of the mass is outside the window > \xce\xb8 10%"));
    CHECK(strstr(fx_line(w, g.y_spark + 2), "QAdA estimate 93% > \xce\xb8 10% \xe2\x86\x92 global"));
    CHECK(strstr(fx_line(w, g.y_spark + 3), "qada_bulk estimate"));
    CHECK(strstr(fx_line(w, g.y_strip), "executed global under policy aha"));
    wchar_t ch;
    short pair;
    attr_t a;
    fx_cell(w, g.y_spark, g.x_text, &ch, &pair, &a);
    CHECK_INT(ch, 'r');
    CHECK(a & A_BOLD); /* a global verdict stands out */
    /* the agreement tinted like the agreement metric's cells */
    fx_cell(w, g.y_spark, g.x_text + 32, &ch, &pair, &a); /* after "router 0.51 > τ 0.50 → global · " */
    CHECK_INT(ch, 'n');
    CHECK_INT(pair, view_pair_token(&pal, VIEW_SW_BOTH_GLOBAL));
    /* no choice at this position: one line says why */
    m.hist[7]->n_far = 0;
    werase(w);
    view_draw_inspector(w, &m, &pal);
    CHECK(fx_contains(w, "no far keys at pos 7: global and local read the same keys"));
    CHECK(!fx_contains(w, "router 0.51"));
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

TEST(views_draw_inspector_verdicts_narrow_and_ascii) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    verdict_model(&m);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    /* 60 columns: beside the sparklines, the brief forms where the full ones do not fit */
    WINDOW *w = newwin(8, 60, 0, 0);
    view_draw_inspector(w, &m, &pal);
    ViewInspGeom g;
    view_insp_geom(&m, 60, 8, &g);
    CHECK(!g.stacked && g.x_text + g.text_w <= 59);
    CHECK(strstr(fx_line(w, g.y_spark), "AHA 0.51 > \xcf\x84 0.50 \xe2\x86\x92 global \xc2\xb7 agrees"));
    CHECK(strstr(fx_line(w, g.y_spark + 1), "oracle 31% > \xce\xb8 10% \xe2\x86\x92 needed"));
    delwin(w);
    /* 50 columns: even the brief router line is cut, with an ellipsis inside the border */
    w = newwin(8, 50, 0, 0);
    view_draw_inspector(w, &m, &pal);
    view_insp_geom(&m, 50, 8, &g);
    CHECK(!g.stacked);
    CHECK(strstr(fx_line(w, g.y_spark), "AHA 0.51 > \xcf\x84 0.50"));
    CHECK(strstr(fx_line(w, g.y_spark), "\xe2\x80\xa6\xe2\x94\x82") != NULL); /* …│ */
    /* ASCII: τ and θ spelled out, the cut marked with '~' */
    m.ascii = 1;
    view_palette_init(&pal, VIEW_COLOUR_256, 1, NULL);
    werase(w);
    view_draw_inspector(w, &m, &pal);
    CHECK(strstr(fx_line(w, g.y_spark), "AHA 0.51 > tau 0.50"));
    CHECK_MSG(strstr(fx_line(w, g.y_spark), "0.50 ->~") || strstr(fx_line(w, g.y_spark), "global~"), "%s",
              fx_line(w, g.y_spark)); /* cut after a whole word */
    CHECK(strstr(fx_line(w, g.y_spark + 1), "oracle 31% > theta 10%"));
    delwin(w);
    /* 40 columns: stacked, the verdicts take the sparklines' lines */
    m.ascii = 0;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    w = newwin(8, 40, 0, 0);
    view_draw_inspector(w, &m, &pal);
    view_insp_geom(&m, 40, 8, &g);
    CHECK(g.stacked && g.n_text == 4 && g.y_strip == 5 && g.n_tok_vis == 0);
    CHECK(!fx_contains(w, "score"));
    CHECK(strstr(fx_line(w, 1), "\xe2\x94\x82" "AHA 0.51 > \xcf\x84 0.50 \xe2\x86\x92 global \xc2\xb7 agrees"));
    CHECK(strstr(fx_line(w, 4), "q_bulk"));
    CHECK(strstr(fx_line(w, 5), "attn"));
    delwin(w);
    /* a taller stacked pane has room for the executed gate too */
    w = newwin(9, 40, 0, 0);
    view_draw_inspector(w, &m, &pal);
    CHECK(strstr(fx_line(w, 5), "executed global \xc2\xb7 agrees"));
    CHECK(strstr(fx_line(w, 6), "attn"));
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* More positions than strip columns: the axis marks the window's start once,
 * on the column whose bin holds it, and labels the last position. */
TEST(views_draw_inspector_axis_over_binned_positions) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 1, 1, NULL);
    fx_fill(&m, 29);
    m.inspector_open = 1;
    float wts[29];
    for (int i = 0; i < 29; i++) wts[i] = 1.0f / 29;
    view_set_attention(&m, 28, 0, 0, wts, 29, 16, 0, NULL); /* window from 13 */
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(10, 100, 0, 0);
    view_draw_inspector(w, &m, &pal);
    ViewInspGeom g;
    view_insp_geom(&m, 100, 10, &g);
    CHECK(g.n_cols < 29);
    const char *l = fx_line(w, g.y_strip + 1);
    const char *up = strstr(l, "13\xe2\x86\x91");
    CHECK(up != NULL);
    CHECK(up && strstr(up + 5, "\xe2\x86\x91") == NULL); /* one marker */
    CHECK(strstr(l, "28 window 55% \xc2\xb7 far 45%"));
    /* the marker's column sums positions up to and including 13 */
    int col = -1;
    for (int c = 0; c < g.n_cols; c++) {
        wchar_t ch;
        short pair;
        attr_t a;
        fx_cell(w, g.y_strip + 1, g.x0 + c, &ch, &pair, &a);
        if (ch == 0x2191) col = c;
    }
    CHECK(col >= 0 && col * 29 / g.n_cols <= 13 && (col + 1) * 29 / g.n_cols > 13);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* The agreement classes never put red against green, the pair most
 * colour-blind readers cannot tell apart: Okabe–Ito blue, grey,
 * vermillion and reddish purple at 256 colours; blue, cyan, yellow and
 * red at 8. */
TEST(views_agreement_palette_is_colour_blind_safe) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    static const int sw[4] = {VIEW_SW_BOTH_GLOBAL, VIEW_SW_BOTH_LOCAL, VIEW_SW_MISSED_GLOBAL, VIEW_SW_NEEDLESS_GLOBAL};
    static const short want256[4] = {32, 240, 166, 175};
    static const short want8[4] = {COLOR_BLUE, COLOR_CYAN, COLOR_YELLOW, COLOR_RED};
    for (int mode = 0; mode < 2; mode++) {
        ViewPalette pal;
        CHECK_INT(view_palette_init(&pal, mode ? VIEW_COLOUR_8 : VIEW_COLOUR_256, 0, NULL), 0);
        for (int k = 0; k < 4; k++) {
            short fg, bg;
            pair_colours(view_pair_cells(&pal, sw[k], sw[k]), &fg, &bg);
            CHECK_MSG(fg == (mode ? want8[k] : want256[k]), "%s colours, class %d: colour %d", mode ? "8" : "256", k,
                      fg);
            CHECK(fg != COLOR_GREEN && fg != 34 && fg != 196); /* the old green and red */
        }
    }
    fx_term_close(&term);
}

/* `L` turns the timeline into one row per layer, each cell the share of
 * that layer's heads that ran global at the token: all rows visible at
 * once for a 32-layer model, and a click picks the layer. */
TEST(views_timeline_per_layer_view) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 140, 45), 0);
    if (!term.scr) return;
    ViewModel m;
    CHECK_INT(view_init(&m, 32, 32, NULL), 0);
    StepTrace *t = trace_new(32, 32);
    for (int p = 0; p < 20; p++) {
        trace_clear(t);
        t->pos = p, t->token = 1, t->n_far = p; /* position 0: no choice */
        for (int c = 0; c < 32 * 32; c++) t->gate[c] = (c / 32) < 16; /* layers 0-15 all global */
        view_push(&m, t, NULL);
    }
    trace_free(t);
    m.colour = VIEW_COLOUR_256;
    CHECK_INT(view_key(&m, 'L'), VIEW_ACT_NONE);
    CHECK_INT(m.timeline_layers, 1);
    ViewPalette pal;
    CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL), 0);
    WINDOW *w = newwin(40, 140, 0, 0);
    view_draw_timeline(w, &m, &pal);
    CHECK(fx_contains(w, "per layer: share of heads global"));
    ViewTimeGeom g;
    view_time_geom(&m, 140, 40, 1, &g);
    CHECK_INT(g.n_rows_vis, 32);
    CHECK_INT(g.half, 0);
    wchar_t ch;
    short pair, fg, bg;
    attr_t a;
    fx_cell(w, g.y0 + 3, g.x0 + 5, &ch, &pair, &a); /* layer 3: every head global */
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, 220);
    fx_cell(w, g.y0 + 20, g.x0 + 5, &ch, &pair, &a); /* layer 20: none */
    pair_colours(pair, &fg, &bg);
    CHECK_INT(fg, 54);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* Timeline rows say which (layer, head) they are, and the bottom border
 * numbers the positions every ten. */
TEST(views_timeline_labels_rows_and_positions) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 140, 45), 0);
    if (!term.scr) return;
    ViewModel m;
    CHECK_INT(view_init(&m, 32, 32, NULL), 0);
    StepTrace *t = trace_new(32, 32);
    for (int p = 0; p < 35; p++) {
        trace_clear(t);
        t->pos = p, t->n_far = p;
        for (int c = 0; c < 32 * 32; c++) t->gate[c] = c % 3 == 0;
        view_push(&m, t, NULL);
    }
    trace_free(t);
    m.sel_layer = 7, m.sel_head = 20;
    ViewPalette pal;
    CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL), 0);
    WINDOW *w = newwin(20, 140, 0, 0);
    view_draw_timeline(w, &m, &pal);
    CHECK(fx_contains(w, "L7H20") || fx_contains(w, "L7H19")); /* the selected head's line (two rows per line) */
    ViewTimeGeom g;
    view_time_geom(&m, 140, 20, 1, &g);
    char want[16];
    snprintf(want, sizeof want, "L%dH%d", g.first_row / 32, g.first_row % 32);
    CHECK_MSG(fx_contains(w, want), "no label %s", want);
    const char *bottom = fx_line(w, 19);
    CHECK_MSG(strstr(bottom, "10") && strstr(bottom, "20") && strstr(bottom, "30"), "axis: %s", bottom);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* The surprise strip under the token stream: one sparkline column per
 * position (full at 10 nats), the cursor's -log p and entropy beside it; a
 * click on a column selects that position. */
TEST(views_draw_tokens_surprise_strip) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 12);
    for (int i = 0; i < 12; i++) m.hist[i]->logprob = i == 0 ? NAN : -(float)i, m.hist[i]->entropy = 0.25f * i;
    view_key(&m, KEY_HOME);
    for (int i = 0; i < 4; i++) view_key(&m, ']'); /* cursor on position 4 */
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 1 /* ascii */, NULL);
    WINDOW *w = newwin(6, 90, 0, 0);
    view_draw_tokens(w, &m, &pal);
    ViewTokGeom g;
    view_tok_geom(&m, 90, 6, &g);
    CHECK_INT(g.y_strip, 4);
    CHECK_INT(g.ih, 3);
    const char *strip = fx_line(w, g.y_strip);
    CHECK_MSG(strstr(strip, "-log p") && strstr(strip, "pos 4 -log p 4.00 H 1.00"), "strip: '%s'", strip);
    wchar_t ch, ch10;
    short pair;
    attr_t a;
    fx_cell(w, g.y_strip, g.x0 + 0, &ch, &pair, &a); /* position 0: no prediction */
    CHECK_INT(ch, '.');
    fx_cell(w, g.y_strip, g.x0 + 4, &ch, &pair, &a);
    CHECK(a & A_REVERSE); /* the cursor's column */
    CHECK_INT(ch, view_glyph_spark(&pal, 0.4f));
    fx_cell(w, g.y_strip, g.x0 + 10, &ch10, &pair, &a);
    CHECK_INT(ch10, view_glyph_spark(&pal, 1.0f)); /* 10 nats: full */
    Layout lay;
    LayoutOpts o = {2, 2, 0, 0, 0, view_help_count(), 1};
    view_layout(100, 30, &o, &lay);
    const ViewRect *r = &lay.pane[VIEW_PANE_TOKENS];
    view_tok_geom(&m, r->w, r->h, &g);
    ViewHit h = view_hit(&m, &lay, r->x + g.x0 + 7, r->y + g.y_strip);
    CHECK_INT(h.pane, VIEW_PANE_TOKENS);
    CHECK_INT(h.pos, g.first_tok + 7);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* Line 1 of a token pane `cols` wide drawn from m, with its right border
 * checked: the note never runs into it. */
static const char *empty_pane_line(ViewModel *m, const ViewPalette *pal, int cols) {
    WINDOW *w = newwin(6, cols, 0, 0);
    view_draw_tokens(w, m, pal);
    wchar_t ch;
    short pair;
    attr_t a;
    fx_cell(w, 1, cols - 1, &ch, &pair, &a);
    CHECK_MSG(ch == (pal->ascii ? L'|' : L'\u2502'), "%d columns: the right border became %lc", cols, (wint_t)ch);
    const char *line = fx_line(w, 1);
    delwin(w);
    return line;
}

/* While a long prompt is prefilled the empty token pane says how far it
 * is (the longest wording that fits, a bar under it), never "press space";
 * while the first positions are computed it says so; only an idle engine
 * asks for a step. */
TEST(views_draw_tokens_says_a_prefill_is_under_way) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 120, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    ViewPalette pal, asc;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    view_palette_init(&asc, VIEW_COLOUR_NONE, 1, NULL);
    m.busy = 1, m.prefill_done = 1024, m.prefill_total = 4096, m.prefill_tok_s = 63;
    static const struct {
        int cols;
        const char *want;
    } forms[] = {
        {100, "\u2502prefilling the prompt: 1024 of 4096 tokens (25%) \u00b7 63 tok/s \u00b7 about 49 s left \u00b7 q quits "},
        {60, "\u2502prefilling the prompt: 1024 of 4096 tokens (25%) \u00b7 q quits\u2502"}, /* just fits */
        {59, "\u2502prefilling: 1024/4096 (25%) \u00b7 q quits "},
        {30, "\u2502prefilling 1024/4096 "},
        {12, "\u2502prefilling\u2502"},
        {8, "\u2502prefil\u2502"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const char *line = empty_pane_line(&m, &pal, forms[i].cols);
        CHECK_MSG(strstr(line, forms[i].want) == line, "%d columns: '%s'", forms[i].cols, line);
        CHECK_MSG(!strstr(line, "press space"), "%d columns: '%s'", forms[i].cols, line);
    }
    const char *line = empty_pane_line(&m, &asc, 100);
    CHECK_MSG(strstr(line, "|prefilling the prompt: 1024 of 4096 tokens (25%) - 63 tok/s - about 49 s left - q quits"),
              "ascii: '%s'", line);
    WINDOW *w = newwin(6, 100, 0, 0);
    view_draw_tokens(w, &m, &pal);
    wchar_t ch;
    short pair;
    attr_t a;
    fx_cell(w, 2, 1 + 23, &ch, &pair, &a); /* a quarter of the 98 columns done */
    CHECK_INT(ch, 0x2588);
    fx_cell(w, 2, 1 + 24, &ch, &pair, &a);
    CHECK_INT(ch, 0x2591);
    delwin(w);
    m.prefill_done = 0, m.prefill_tok_s = 0; /* the first count: no rate yet */
    line = empty_pane_line(&m, &pal, 100);
    CHECK_MSG(strstr(line, "tokens (0%) \u00b7 q quits") && !strstr(line, "tok/s"), "no rate yet: '%s'", line);
    m.prefill_total = 0; /* a short prompt: no count, but the engine is at work */
    line = empty_pane_line(&m, &pal, 40);
    CHECK_MSG(strstr(line, "(prefilling the prompt\u2026)") && !strstr(line, "press space"), "busy: '%s'", line);
    m.busy = 0;
    line = empty_pane_line(&m, &pal, 40);
    CHECK_MSG(strstr(line, "(no tokens yet: press space to step)"), "idle: '%s'", line);
    m.busy = 1, m.prefill_done = 64, m.prefill_total = 4096; /* a new prompt's prefill behind the old tokens */
    fx_fill(&m, 3);
    line = empty_pane_line(&m, &pal, 100);
    CHECK_MSG(!strstr(line, "prefilling"), "tokens on screen: '%s'", line);
    view_free(&m);
    fx_term_close(&term);
}

/* The editor's text on status line `line`: after "prompt: ", before the
 * play state, without the marks at its edges (… and the bar) or trailing
 * blanks, copied into out. */
static const char *editor_text(const char *line, char *out, size_t n) {
    const char *a = strstr(line, "prompt: "), *b = strstr(line, " paused");
    out[0] = 0;
    if (!a || !b || b < a) return out;
    a += 8;
    if (!strncmp(a, "\xe2\x80\xa6", 3)) a += 3;
    while (b > a && b[-1] == ' ') b--;
    if (b - a >= 3 && (!strncmp(b - 3, "\xe2\x80\xa6", 3) || !strncmp(b - 3, "\xe2\x96\x8f", 3))) b -= 3;
    while (b > a && b[-1] == ' ') b--; /* a wide character that did not fit leaves a blank before the mark */
    snprintf(out, n, "%.*s", (int)(b - a), a);
    return out;
}

/* A line far wider than the status line (a 3 000-byte prompt of one-,
 * two-, three- and four-byte characters, some two columns wide): the part
 * around the cursor shows, whole characters only, marked … where more is
 * hidden, the cursor's character reversed, and the play state keeps its
 * place; at 80 and 160 columns, and in ASCII. */
TEST(views_status_editor_shows_the_part_around_the_cursor) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 160, 30), 0);
    if (!term.scr) return;
    static char text[3100];
    size_t n = 0;
    for (int i = 0; n + 40 < 3000; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%d Zo\xc3\xab \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80 caf\xc3\xa9 ", i);
    text[n++] = '.', text[n] = 0;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    CHECK_INT(view_input_begin(&m, "prompt", text), 0);
    ViewPalette pal, asc;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    view_palette_init(&asc, VIEW_COLOUR_NONE, 1, NULL);
    char shown[1024];
    for (int cols = 80; cols <= 160; cols += 80) {
        WINDOW *w = newwin(1, cols, 0, 0);
        view_input_key(&m, KEY_END);
        view_draw_status(w, &m, &pal);
        const char *line = fx_line(w, 0);
        editor_text(line, shown, sizeof shown);
        size_t k = strlen(shown);
        CHECK_MSG(k > 20 && k < n && !strcmp(text + n - k, shown), "%d columns, at the end: '%s'", cols, line);
        CHECK_MSG(strstr(line, "prompt: \xe2\x80\xa6") && strstr(line, "\xe2\x96\x8f"), "%d columns: '%s'", cols, line);
        CHECK_MSG(strstr(line, " paused "), "%d columns: the play state was overwritten: '%s'", cols, line);
        view_input_key(&m, KEY_HOME);
        werase(w);
        view_draw_status(w, &m, &pal);
        line = fx_line(w, 0);
        editor_text(line, shown, sizeof shown);
        k = strlen(shown);
        CHECK_MSG(k > 20 && !strncmp(text, shown, k) && strstr(line, "\xe2\x80\xa6 paused"), "%d columns, at the start: '%s'", cols, line);
        for (int i = 0; i < 1000; i++) view_input_key(&m, KEY_RIGHT);
        size_t cur = m.input.cur;
        werase(w);
        view_draw_status(w, &m, &pal);
        line = fx_line(w, 0);
        editor_text(line, shown, sizeof shown);
        CHECK_MSG(strlen(shown) > 20 && strstr(text, shown) && strstr(line, "prompt: \xe2\x80\xa6") &&
                      strstr(line, "\xe2\x80\xa6 paused"), "%d columns, mid-line: '%s'", cols, line);
        ViewInputGeom g;
        view_input_geom(&m, cols - 7 - 1 - 1 - 8, 0, &g); /* " paused ", the space before it, " ", "prompt: " */
        CHECK(g.from < cur && cur < g.to && g.more_left && g.more_right);
        wchar_t ch, want;
        short pair;
        attr_t a;
        fx_cell(w, 0, 1 + 8 + g.cursor_x, &ch, &pair, &a);
        mbtowc(&want, text + cur, 4);
        CHECK_MSG(ch == want && (a & A_REVERSE), "%d columns: the cursor's cell holds %lc", cols, (wint_t)ch);
        werase(w);
        view_draw_status(w, &m, &asc);
        line = fx_line(w, 0);
        int high = 0;
        for (const char *c = line; *c; c++) high |= (unsigned char)*c >= 0x80;
        CHECK_MSG(!high && strstr(line, "prompt: <") && strstr(line, "> paused "), "ascii: '%s'", line);
        delwin(w);
    }
    view_free(&m);
    fx_term_close(&term);
}

/* Without colour the token stream's tint is bold and underline: the legend
 * says which is which, in those very attributes; tinting by the share of
 * heads global gets its own scale. */
TEST(views_draw_legend_explains_the_token_tint) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 140, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    gate_model(&m, 3);
    ViewPalette mono, col;
    view_palette_init(&mono, VIEW_COLOUR_NONE, 0, NULL);
    view_palette_init(&col, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(1, 140, 0, 0);
    m.metric = VIEW_METRIC_AGREE;
    view_draw_legend(w, &m, &mono);
    const char *line = fx_line(w, 0);
    const char *at = strstr(line, "missed needless both global");
    CHECK_MSG(at && strstr(line, "tokens: "), "legend: '%s'", line);
    if (at) {
        int x = 0;
        for (const char *s = line; s < at; s++) x += ((unsigned char)*s & 0xc0) != 0x80;
        wchar_t ch;
        short pair;
        attr_t a;
        fx_cell(w, 0, x, &ch, &pair, &a);
        CHECK((a & A_BOLD) && (a & A_UNDERLINE)); /* "missed" drawn as a missed token is */
        fx_cell(w, 0, x + 7, &ch, &pair, &a);
        CHECK(!(a & A_BOLD) && (a & A_UNDERLINE)); /* "needless" */
    }
    m.metric = VIEW_METRIC_score;
    werase(w);
    view_draw_legend(w, &m, &mono);
    CHECK(strstr(fx_line(w, 0), "tokens: bold = upper half") != NULL);
    werase(w);
    view_draw_legend(w, &m, &col); /* colour, tinted by the selected head: the scale says it all */
    CHECK(strstr(fx_line(w, 0), "tokens:") == NULL);
    m.tint_share = 1;
    werase(w);
    view_draw_legend(w, &m, &col);
    CHECK(strstr(fx_line(w, 0), "tokens: share global") != NULL);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* A taller inspector lists the ranked far positions one per line (live:
 * from the attention weights; replay: from what the run recorded), and the
 * layout gives it the lines when there is room. */
TEST(views_draw_inspector_lists_far_positions) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 120, 40), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 8);
    m.inspector_open = 1;
    float wts[8] = {0.1f, 0.1f, 0.1f, 0.05f, 0.2f, 0.15f, 0.1f, 0.2f};
    view_set_attention(&m, 7, 0, 0, wts, 8, 4, 1, NULL); /* far: 1 2 3 */
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(14, 100, 0, 0);
    ViewInspGeom g;
    view_insp_geom(&m, 100, 14, &g);
    CHECK(g.y_list > g.y_strip + 1 && g.n_list >= 4);
    view_draw_inspector(w, &m, &pal);
    CHECK(strstr(fx_line(w, g.y_list), "heaviest far positions:") != NULL);
    CHECK_MSG(strstr(fx_line(w, g.y_list + 1), " 1  pos 1 ") && strstr(fx_line(w, g.y_list + 1), "0.10 "), "'%s'",
              fx_line(w, g.y_list + 1));
    CHECK(strstr(fx_line(w, g.y_list + 3), " 3  pos 3 ") && strstr(fx_line(w, g.y_list + 3), "0.05 "));
    CHECK(strstr(fx_line(w, g.y_list + 4), "pos") == NULL); /* three far keys, three lines */
    /* a replay: no weights, the recorded ranks */
    view_free(&m);
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 7);
    StepTrace *r = trace_new_top(2, 2, 2);
    CHECK(r != NULL);
    if (r) {
        r->pos = 7, r->n_far = 3, r->oracle_logit[0] = 0.0f;
        r->top_pos[0] = 2, r->top_w[0] = 0.3f, r->top_pos[1] = 1, r->top_w[1] = 0.2f;
        view_push(&m, r, NULL);
    }
    m.inspector_open = 1;
    werase(w);
    view_draw_inspector(w, &m, &pal);
    CHECK(fx_contains(w, "recorded: far 50%"));
    CHECK(strstr(fx_line(w, g.y_list), "(recorded)") != NULL);
    CHECK(strstr(fx_line(w, g.y_list + 1), " 1  pos 2 ") != NULL);
    CHECK(strstr(fx_line(w, g.y_list + 2), " 2  pos 1 ") != NULL);
    trace_free(r);
    /* the layout: the band grows past its 8 lines when the screen has room, up to a line per rank
     * and the why block under them (views/why.h) */
    Layout lay;
    LayoutOpts o = {5, 8, 1, 0, 1, view_help_count(), 1};
    view_layout(250, 70, &o, &lay);
    CHECK(lay.pane[VIEW_PANE_INSPECTOR].h > 8 &&
          lay.pane[VIEW_PANE_INSPECTOR].h <= 8 + VIEW_ATTN_TOP + 1 + VIEW_WHY_LINES);
    view_layout(140, 30, &o, &lay);
    CHECK(lay.pane[VIEW_PANE_INSPECTOR].h == 0 || lay.pane[VIEW_PANE_INSPECTOR].h >= 8);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* 1 if a row of the help shows help line b whole: its heading, or its keys
 * and what they do. */
static int help_row_shows(const char *row, const ViewBinding *b) {
    if (!b->label) return strstr(row, b->help) != NULL;
    return (!b->label[0] || strstr(row, b->label)) && (!b->help[0] || strstr(row, b->help));
}

/* Open the help on a cols×rows off-screen terminal and read it off the
 * screen, pressing `key` after each frame until it no longer scrolls: each
 * row must show its line of the key table's help whole, on screen, and
 * every line must come by; the overlay stays inside the screen, above the
 * status line, whose hints say how to scroll when lines are hidden.
 * Returns the frames it took. */
static int read_help(int cols, int rows, int key) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", cols, rows), 0);
    if (!term.scr) return 0;
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 30);
    m.colour = VIEW_COLOUR_256;
    ViewScreen s;
    Err e;
    CHECK_INT(view_screen_init(&s, &m, &e), 0);
    view_key(&m, '?');
    enum { MAX_LINES = 256 };
    int n = view_help_count(), frames = 0, seen = 0;
    char got[MAX_LINES] = {0};
    CHECK(n < MAX_LINES);
    for (int prev = -1; frames <= n && m.help_open && m.help_scroll != prev && n < MAX_LINES; frames++) {
        CHECK_INT(view_frame(&s, &m, &e), 0);
        if (view_help_fit(&m, &s.lay)) CHECK_INT(view_frame(&s, &m, &e), 0); /* as the app: hints for its size */
        const ViewRect *r = &s.lay.help;
        CHECK_MSG(r->x >= 0 && r->y >= 1 && r->x + r->w <= cols && r->y + r->h <= rows - 1,
                  "%dx%d: help at %d,%d %dx%d", cols, rows, r->x, r->y, r->w, r->h);
        ViewHelpGeom g;
        view_help_geom(&m, r->w, r->h, &g);
        int hidden = g.n_rows < n;
        CHECK_MSG(strstr(fx_line(curscr, rows - 1), hidden ? "scroll the help" : "any key") != NULL,
                  "%dx%d status line: %s", cols, rows, fx_line(curscr, rows - 1));
        if (hidden)
            CHECK_MSG(strstr(fx_line(s.help, 0), "lines ") && strstr(fx_line(s.help, r->h - 1), "more "),
                      "%dx%d: no marker of the hidden lines:\n%s\n%s", cols, rows, fx_line(s.help, 0),
                      fx_line(s.help, r->h - 1));
        for (int y = 0; y < g.n_rows && g.first + y < n; y++) {
            const ViewBinding *b = view_help_line(g.first + y);
            int whole = help_row_shows(fx_line(s.help, g.y0 + y), b) &&
                        help_row_shows(fx_line(curscr, r->y + g.y0 + y), b);
            CHECK_MSG(whole, "%dx%d: line %d (%s) not whole in row '%s'", cols, rows, g.first + y, b->help,
                      fx_line(curscr, r->y + g.y0 + y));
            got[g.first + y] |= whole;
        }
        prev = m.help_scroll;
        view_key(&m, key);
    }
    for (int i = 0; i < n && i < MAX_LINES; i++) seen += got[i];
    CHECK_MSG(seen == n, "%dx%d: %d of %d help lines seen", cols, rows, seen, n);
    view_screen_free(&s);
    view_free(&m);
    fx_term_close(&term);
    return frames;
}

/* Every line of the key table's help can be read: all at once on a screen
 * four rows taller than the help (header, status, the help's border), by ↓
 * or PgDn on shorter screens. */
TEST(views_draw_help_every_line_reachable) {
    int n = view_help_count(), page40 = 40 - 4;
    CHECK_INT(read_help(120, n + 4 > 40 ? n + 4 : 40, KEY_DOWN), 1);
    CHECK_INT(read_help(120, 40, KEY_DOWN), n > page40 ? n - page40 + 1 : 1);
    CHECK_INT(read_help(200, 60, KEY_NPAGE), 1);
    int page = 24 - 4; /* the screen but header, status and the help's border */
    CHECK_INT(read_help(80, 24, KEY_DOWN), n - page + 1);
    CHECK_INT(read_help(80, 24, KEY_NPAGE), (n - page + page - 1) / page + 1);
    CHECK(read_help(100, 30, KEY_NPAGE) >= 2);
}

/* At 120×40, or as tall as the whole help needs once it outgrows that,
 * the help's last lines show, the way out among them (the box of old held
 * 24 lines and dropped them). */
TEST(views_draw_help_shows_its_last_lines_at_120x40) {
    FxTerm term;
    int rows = view_help_count() + 4 > 40 ? view_help_count() + 4 : 40; /* header, status, the help's border */
    CHECK_INT(fx_term_open(&term, "xterm-256color", 120, rows), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 10);
    ViewScreen s;
    Err e;
    CHECK_INT(view_screen_init(&s, &m, &e), 0);
    view_key(&m, '?');
    CHECK_INT(view_frame(&s, &m, &e), 0);
    CHECK(fx_contains(curscr, "any key closes"));
    CHECK(fx_contains(curscr, "Esc  q"));
    CHECK(fx_contains(curscr, "close the top pane (one per press); q quits if none"));
    CHECK(fx_contains(curscr, "this project's: qada_bulk qada_rem qada_rem_bulk"));
    CHECK(fx_contains(curscr, view_help_line(view_help_count() - 1)->help));
    CHECK(!fx_contains(curscr, "more \xe2\x86\x93"));
    view_screen_free(&s);
    view_free(&m);
    fx_term_close(&term);
}

/* Every help line fits the help of an 80-column screen, the narrowest there
 * is, in UTF-8 and in ASCII, so none is cut anywhere. */
TEST(views_help_lines_fit_at_80_columns) {
    setlocale(LC_ALL, "C.UTF-8");
    ViewModel m;
    view_init(&m, 1, 1, NULL);
    ViewHelpGeom g;
    view_help_geom(&m, VIEW_HELP_W, 24, &g);
    for (int ascii = 0; ascii <= 1; ascii++)
        for (int i = 0; i < view_help_count(); i++) {
            const ViewBinding *b = view_help_line(i);
            int fits = b->label ? view_text_width(b->label, ascii) <= g.key_w && view_text_width(b->help, ascii) <= g.text_w
                                : view_text_width(b->help, ascii) <= g.head_w;
            CHECK_MSG(fits, "help line %d (%s) is wider than the help%s", i, b->help, ascii ? " in ASCII" : "");
        }
    view_free(&m);
}

/* Below 80×24 the open help waits behind the "enlarge" line and comes back
 * with the screen, its scroll within the new size; drawn into windows down
 * to 1×1, scrolled to its end, it writes only inside them and each row starts
 * its own line. */
TEST(views_draw_help_at_tiny_sizes) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 10);
    ViewScreen s;
    Err e;
    CHECK_INT(view_screen_init(&s, &m, &e), 0);
    view_key(&m, '?');
    view_key(&m, KEY_END); /* size unknown yet: it scrolls */
    static const int tiny[][2] = {{40, 12}, {20, 6}};
    for (int t = 0; t < 2; t++) {
        resizeterm(tiny[t][1], tiny[t][0]);
        CHECK_INT(view_frame(&s, &m, &e), 0);
        view_help_fit(&m, &s.lay);
        CHECK(s.lay.too_small && s.help == NULL && m.help_open);
        CHECK(fx_contains(curscr, "enlarge"));
        CHECK(!fx_contains(curscr, "help"));
    }
    resizeterm(24, 80);
    view_key(&m, KEY_END);
    CHECK_INT(view_frame(&s, &m, &e), 0);
    view_help_fit(&m, &s.lay);
    CHECK_INT(m.help_scroll, view_help_count() - m.help_page);
    CHECK(fx_contains(curscr, "Enter  Esc"));
    view_screen_free(&s);

    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    static const int wins[][2] = {{12, 40}, {6, 20}, {3, 10}, {2, 2}, {1, 1}, {24, 4}};
    for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++) {
        int h = wins[k][0], w = wins[k][1];
        for (m.help_scroll = 0; m.help_scroll <= view_help_count(); m.help_scroll += 7) {
            werase(stdscr);
            wnoutrefresh(stdscr);
            WINDOW *win = newwin(h, w, 5, 9);
            view_draw_help(win, &m, &pal);
            wnoutrefresh(win);
            doupdate();
            int outside = 0;
            for (int y = 0; y < 24; y++)
                for (int x = 0; x < 80; x++) {
                    if (y >= 5 && y < 5 + h && x >= 9 && x < 9 + w) continue;
                    wchar_t ch;
                    short pair;
                    attr_t a;
                    fx_cell(curscr, y, x, &ch, &pair, &a);
                    outside += ch != L' ';
                }
            CHECK_MSG(outside == 0, "%dx%d help: %d cells drawn outside it", w, h, outside);
            ViewHelpGeom g;
            view_help_geom(&m, w, h, &g);
            for (int y = 0; y < g.n_rows && g.first + y < g.n_lines; y++) {
                const ViewBinding *b = view_help_line(g.first + y);
                const char *text = !b->label ? b->help : b->label[0] ? b->label : b->help;
                int x = !b->label ? g.head_x : b->label[0] ? g.key_x : g.text_x;
                int room = !b->label ? g.head_w : b->label[0] ? g.key_w : g.text_w;
                wchar_t want, ch;
                short pair;
                attr_t a;
                CHECK(room <= 0 || x + room <= w - 1);
                if (room < 2 || mbtowc(&want, text, 8) <= 0) continue; /* no room for a character and the … */
                fx_cell(win, g.y0 + y, x, &ch, &pair, &a);
                CHECK_MSG(ch == want, "%dx%d help, row %d: line %d does not start there", w, h, y, g.first + y);
            }
            delwin(win);
        }
    }
    view_free(&m);
    fx_term_close(&term);
}

/* Text cut to fit ends after a whole word, without the separator it would
 * end on, and says so with …: titles, legends and status lines alike. */
TEST(views_draw_cut_text_ends_on_a_word_with_an_ellipsis) {
    const char *s = "global rate by layer, pos 0-44 \xc2\xb7 AHA | oracle";
    CHECK_INT((int)view_fit_words(s, 200, 0), (int)strlen(s));
    CHECK_INT((int)view_fit_words(s, 24, 0), (int)strlen("global rate by layer")); /* not "pos 0-", nor the comma */
    CHECK_INT((int)view_fit_words(s, 35, 0), (int)strlen("global rate by layer, pos 0-44")); /* not " ·" */
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 3);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    view_set_status(&m, "re-evaluating under aha, w=8 (routers trained for w=16), tau=0.50, theta=0.10");
    WINDOW *w = newwin(1, 60, 0, 0);
    view_draw_status(w, &m, &pal);
    const char *line = fx_line(w, 0);
    CHECK_MSG(strstr(line, "w=8 (routers trained for\xe2\x80\xa6") != NULL, "%s", line); /* not "fo" */
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* The bars pane names both columns at any width (80×24 gives it 39
 * columns), and without router scores it does not call the left one AHA. */
TEST(views_draw_bars_title_names_both_columns) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 3, 4, NULL);
    fx_fill(&m, 20);
    m.hdr.theta_logit = decide_theta_logit(0.1);
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "aha");
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    static const int widths[] = {39, 60, 100};
    for (int i = 0; i < 3; i++) {
        WINDOW *w = newwin(7, widths[i], 0, 0);
        view_draw_bars(w, &m, &pal);
        const char *top = fx_line(w, 0);
        CHECK_MSG(strstr(top, "AHA | oracle") && strstr(top, "\xce\xb8 0.10"), "%d: %s", widths[i], top);
        delwin(w);
    }
    /* a rate just short of all reads >99%, as the inspector's shares do; all of them 100% */
    fx_fill(&m, 40); /* 60 positions: 240 cells a layer */
    for (int i = 0; i < m.n_hist; i++)
        for (int c = 0; c < 12; c++) m.hist[i]->oracle_logit[c] = (float)decide_theta_logit(0.9);
    m.hist[0]->oracle_logit[0] = (float)decide_theta_logit(0.01); /* 1 of 240 in L0 not needed */
    m.stats.n = 0; /* the history changed under the counts: count again */
    view_stats_sync(&m, NULL);
    WINDOW *r = newwin(7, 60, 0, 0);
    view_draw_bars(r, &m, &pal);
    CHECK_MSG(strstr(fx_line(r, 1), ">99%") && !strstr(fx_line(r, 1), "100%"), "%s", fx_line(r, 1));
    CHECK_MSG(strstr(fx_line(r, 2), "100%") != NULL, "%s", fx_line(r, 2));
    delwin(r);
    /* policy full without routers: no score anywhere */
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "full");
    for (int i = 0; i < m.n_hist; i++)
        for (int c = 0; c < 12; c++) m.hist[i]->score[c] = NAN;
    view_stats_sync(&m, NULL);
    WINDOW *w = newwin(7, 39, 0, 0);
    view_draw_bars(w, &m, &pal);
    const char *top = fx_line(w, 0);
    CHECK_MSG(!strstr(top, "AHA") && strstr(top, "executed | oracle"), "%s", top);
    delwin(w);
    w = newwin(7, 100, 0, 0);
    view_draw_bars(w, &m, &pal);
    top = fx_line(w, 0);
    CHECK_MSG(!strstr(top, "AHA") && strstr(top, "executed (no routers) | oracle"), "%s", top);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* The timeline's ▲ under the cursor never cuts a position number on the
 * bottom border short ("2▲" for 20): that number is left out instead. */
TEST(views_draw_timeline_cursor_mark_spares_tick_labels) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 40);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(6, 80, 0, 0);
    for (int cur = 19; cur <= 22; cur++) {
        m.cursor = cur;
        werase(w);
        view_draw_timeline(w, &m, &pal);
        const char *bottom = fx_line(w, 5);
        CHECK_MSG(strstr(bottom, "\xe2\x96\xb2") != NULL, "%s", bottom);
        CHECK_MSG(!strstr(bottom, "2\xe2\x96\xb2") && !strstr(bottom, "\xe2\x96\xb2" "0"), "cursor %d: %s", cur, bottom);
        CHECK_MSG(strstr(bottom, "10") && strstr(bottom, "30"), "cursor %d: %s", cur, bottom);
    }
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* Without colour, the legend's "local" sample is the glyph the heatmap
 * draws for a local gate, and a cell without a decision looks different. */
TEST(views_draw_mono_legend_shows_the_glyph_cells_use) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    for (int ascii = 0; ascii <= 1; ascii++) {
        ViewModel m;
        gate_model(&m, 3);
        m.ascii = ascii;
        ViewPalette pal;
        view_palette_init(&pal, VIEW_COLOUR_NONE, ascii, NULL);
        WINDOW *lg = newwin(1, 80, 0, 0), *hm = newwin(8, 40, 1, 0);
        view_draw_legend(lg, &m, &pal);
        view_draw_heatmap(hm, &m, &pal);
        ViewHeatGeom g;
        view_heat_geom(&m, 40, 8, 0, &g);
        wchar_t local, none, sample;
        short pr;
        attr_t at;
        fx_cell(hm, g.y0, g.x0 + 1 * (g.cw + g.gap), &local, &pr, &at);      /* L0 H1: local */
        fx_cell(hm, g.y0 + 2 * g.rh, g.x0 + 3 * (g.cw + g.gap), &none, &pr, &at); /* L2 H3: not computed */
        const char *line = fx_line(lg, 0);
        const char *word = strstr(line, " local");
        CHECK_MSG(word != NULL, "%s", line);
        int col = 0; /* the column of the sample just before " local" */
        for (const char *c = line; c < word; c++) col += ((unsigned char)*c & 0xc0) != 0x80;
        fx_cell(lg, 0, col - 1, &sample, &pr, &at);
        CHECK_MSG(sample == local, "ascii %d: legend %lc, cells %lc", ascii, (wint_t)sample, (wint_t)local);
        CHECK(local != none);
        delwin(lg);
        delwin(hm);
        view_free(&m);
    }
    fx_term_close(&term);
}

/* The compact heatmap (24 layers × 32 heads in the 80×24 pane) says which
 * layers show, numbers its columns with whole numbers (no 0-9 repeating)
 * and marks the selected cell though there is no gap for brackets. */
TEST(views_draw_compact_heatmap_says_what_is_off_screen) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 24, 32, NULL);
    fx_fill(&m, 3);
    m.sel_layer = 13, m.sel_head = 27;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(9, 38, 0, 0);
    view_draw_heatmap(w, &m, &pal);
    ViewHeatGeom g;
    view_heat_geom(&m, 38, 9, 1, &g);
    CHECK(g.n_layers_vis < 24 && g.gap == 0 && g.cw == 1);
    char want[48];
    snprintf(want, sizeof want, "L%d-%d of 24", g.first_layer, g.first_layer + g.n_layers_vis - 1);
    CHECK_MSG(strstr(fx_line(w, 0), want) != NULL, "%s", fx_line(w, 0));
    const char *nums = fx_line(w, 1);
    CHECK_MSG(!strstr(nums, "0123") && strstr(nums, "10") && strstr(nums, "27"), "%s", nums);
    wchar_t ch;
    short pr;
    attr_t at;
    int line = (m.sel_layer - g.first_layer) / 2;
    fx_cell(w, g.y0 + line, g.x0 + (m.sel_head - g.first_head), &ch, &pr, &at);
    CHECK(at & A_UNDERLINE);
    fx_cell(w, g.y0 + line, g.x0 + (m.sel_head - g.first_head) - 1, &ch, &pr, &at);
    CHECK(!(at & A_UNDERLINE));
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* Every row of the inspector reads on one x-axis: the sparklines cover
 * positions 0 … cursor on the attention strip's columns, so the cursor's
 * reversed cell sits over the strip's last column, wherever the cursor is. */
TEST(views_draw_inspector_rows_share_the_strip_axis) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 140, 45), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 1, 1, NULL);
    fx_fill(&m, 60);
    m.hdr.tau = 0.5f;
    m.hdr.theta_logit = decide_theta_logit(0.1);
    m.inspector_open = 1;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    static const int cursors[] = {59, 30, 6};
    for (int k = 0; k < 3; k++) {
        m.cursor = cursors[k];
        int n = m.cursor + 1;
        float wts[60];
        for (int i = 0; i < n; i++) wts[i] = 1.0f / n;
        view_set_attention(&m, m.cursor, 0, 0, wts, n, 4, 0, NULL);
        WINDOW *w = newwin(8, 100, 0, 0);
        view_draw_inspector(w, &m, &pal);
        ViewInspGeom g;
        view_insp_geom(&m, 100, 8, &g);
        CHECK(!g.stacked);
        int cols = n < g.n_cols ? n : g.n_cols, last = -1;
        wchar_t ch;
        short pr;
        attr_t at;
        for (int x = g.x0; x < g.x0 + g.n_cols; x++) {
            fx_cell(w, g.y_spark, x, &ch, &pr, &at);
            if (at & A_REVERSE) last = x;
        }
        CHECK_MSG(last == g.x0 + cols - 1, "cursor %d: reversed at %d, strip ends at %d", m.cursor, last,
                  g.x0 + cols - 1);
        fx_cell(w, g.y_strip, g.x0 + cols - 1, &ch, &pr, &at);
        CHECK(ch != L' ');
        fx_cell(w, g.y_spark, g.x0 + cols, &ch, &pr, &at); /* nothing past the cursor */
        CHECK_INT(ch, L' ');
        delwin(w);
    }
    view_free(&m);
    fx_term_close(&term);
}

/* A re-scored replay at 80 columns and about: the settings that always
 * show (the run, τ and θ beside the gates', pos) show whole; a segment
 * that does not fit is left out, never cut in the middle of a number. */
TEST(views_draw_header_of_a_rescored_replay_is_never_cut_mid_number) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 160, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 5);
    snprintf(m.hdr.model, sizeof m.hdr.model, "stories260K-long-name.bin");
    snprintf(m.hdr.policy, sizeof m.hdr.policy, "oracle");
    snprintf(m.hdr.mode, sizeof m.hdr.mode, "replay run 1234");
    m.hdr.window = 128, m.hdr.sinks = 4, m.hdr.ctx_len = 65536;
    m.hdr.gates_fixed = 1, m.hdr.gate_tau = 0.5f, m.hdr.gate_theta_logit = m.hdr.theta_logit;
    m.hdr.tau = 0.55f;
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    for (int wd = 78; wd <= 90; wd++) {
        WINDOW *n = newwin(1, wd, 1, 0);
        view_draw_header(n, &m, &pal);
        const char *line = fx_line(n, 0);
        CHECK_MSG(strstr(line, "replay run 1234") && strstr(line, "(gates 0.50/0.10)") && strstr(line, "pos 4/65536"),
                  "at %d columns: %s", wd, line);
        delwin(n);
    }
    view_free(&m);
    fx_term_close(&term);
}

/* Bars that show only some layers (beside a compact heatmap) name which, as the heatmap does. */
TEST(views_draw_bars_name_their_layer_range) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 16, 2, NULL);
    fx_fill(&m, 5);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(8, 60, 0, 0);
    view_draw_bars(w, &m, &pal);
    ViewBarsGeom g;
    view_bars_geom(&m, 60, 8, &g);
    CHECK(g.n_layers_vis > 0 && g.n_layers_vis < 16);
    char want[48];
    snprintf(want, sizeof want, "L%d-%d of 16", g.first_layer, g.first_layer + g.n_layers_vis - 1);
    CHECK_MSG(strstr(fx_line(w, 0), want), "title \"%s\" lacks %s", fx_line(w, 0), want);
    WINDOW *all = newwin(40, 60, 0, 0); /* every layer shown: no range to name */
    view_draw_bars(all, &m, &pal);
    CHECK_MSG(!strstr(fx_line(all, 0), "of 16"), "%s", fx_line(all, 0));
    delwin(all);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* A text of several tables (R's summary) scrolled into the second keeps
 * that table's header and rule on top (issue 52: lost at 80×24), and `y`
 * copies the row under it. */
TEST(views_draw_sql_keeps_a_lower_tables_header_when_scrolled) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    char text[4096] = "run 1: policy oracle\n\nreads:\nrun_id  share\n------  -----\n     1   0.67\n\nper head:\n"
                      "layer  head  n\n-----  ----  --\n";
    for (int i = 0; i < 30; i++) snprintf(text + strlen(text), sizeof text - strlen(text), "    %d     %d  35\n", i / 8, i % 8);
    Err e;
    CHECK_INT(view_set_sql(&m, "", text, &e), 0);
    CHECK_INT(m.sql_pinned, 0);
    m.sql_scroll = 20; /* the 11th row of the per-head table */
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(8, 80, 0, 0);
    view_draw_sql(w, &m, &pal);
    CHECK_MSG(strstr(fx_line(w, 1), "layer  head  n") && strstr(fx_line(w, 2), "-----  ----"), "top: %s / %s",
              fx_line(w, 1), fx_line(w, 2));
    CHECK_MSG(strstr(fx_line(w, 3), "    1     2  35"), "first row: %s", fx_line(w, 3));
    char *y = view_yank_row(&m);
    CHECK_MSG(y && !strcmp(y, "layer  head  n\n    1     2  35\n"), "yank: %s", y ? y : "(null)");
    free(y);
    m.sql_scroll = 5; /* on the first table's row: its own header */
    werase(w);
    view_draw_sql(w, &m, &pal);
    CHECK_MSG(strstr(fx_line(w, 1), "run_id  share") && strstr(fx_line(w, 3), "     1   0.67"), "%s / %s",
              fx_line(w, 1), fx_line(w, 3));
    CHECK_INT(view_sql_header_above(text, 7), -1); /* past the blank line after it: no table */
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}

/* A bookmark's note lives with its bookmark: the inspector's title names it at that
 * position only, `'` says it, dropping the bookmark forgets it, and a note is cut at a
 * character's start, never mid-character. */
TEST(views_draw_inspector_title_names_the_cursor_bookmarks_note) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 100, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fx_fill(&m, 8);
    m.inspector_open = 1;
    CHECK_INT(view_bookmark_toggle(&m, 3), 1);
    view_bookmark_note_set(&m, 3, "the dragon");
    view_bookmark_note_set(&m, 5, "no bookmark here"); /* kept nowhere: pos 5 holds no bookmark */
    CHECK(!strcmp(view_bookmark_note(&m, 5), ""));
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(8, 100, 0, 0);
    m.cursor = 3;
    view_draw_inspector(w, &m, &pal);
    CHECK_MSG(strstr(fx_line(w, 0), "@ pos 3 ") && strstr(fx_line(w, 0), "\xe2\x98\x85 bookmark: the dragon"), "%s",
              fx_line(w, 0));
    m.cursor = 7;
    view_bookmark_jump(&m, -1);
    CHECK_MSG(m.cursor == 3 && strstr(m.status, "pos 3: the dragon"), "%d %s", m.cursor, m.status);
    m.cursor = 4;
    werase(w), view_draw_inspector(w, &m, &pal);
    CHECK_MSG(!strstr(fx_line(w, 0), "bookmark:"), "%s", fx_line(w, 0));
    CHECK_INT(view_bookmark_toggle(&m, 3), 0);
    CHECK_INT(view_bookmark_toggle(&m, 3), 1); /* set again: the old note went with the old bookmark */
    CHECK(!strcmp(view_bookmark_note(&m, 3), ""));
    char longer[VIEW_NOTE_MAX + 8];
    memset(longer, 'a', VIEW_NOTE_MAX - 2);
    memcpy(longer + VIEW_NOTE_MAX - 2, "\xe2\x98\x85\xe2\x98\x85", 7); /* a 3-byte character across the limit */
    view_bookmark_note_set(&m, 3, longer);
    CHECK_INT((int)strlen(view_bookmark_note(&m, 3)), VIEW_NOTE_MAX - 2);
    delwin(w);
    view_free(&m);
    fx_term_close(&term);
}
