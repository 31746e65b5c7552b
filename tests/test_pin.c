/* test_pin.c — one head through time and against another, without a terminal.
 *
 * One head through time and against another (views/pin.h):
 * f } { F against a recount from the fixture's own values, the pinned
 * head's and the parent run's lines, where the inspector and the timeline
 * put them, and a frame at 80×24 and 140×45 that shows them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/decide.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/explain.h"
#include "views/geom.h"
#include "views/keymap.h"
#include "views/pin.h"

/* fx_fill's values at θ 0.1 and τ 0.5, straight from fx_value: the gate is
 * score > 0.5, the oracle says needed where its mass > 0.1. */
static int fx_global(int pos, int cell) { return fx_value(pos, cell, 0) > 0.5f; }
static int fx_needed(int pos, int cell) { return fx_value(pos, cell, 1) > 0.1f; }

/* The answer by a plain scan: positions with no choice (listed) never count. */
static int recount(int n, int cell, int from, int dir, int needed, const int *no_choice, int n_nc) {
    for (int i = from + dir; i >= 0 && i < n; i += dir) {
        int skip = 0;
        for (int k = 0; k < n_nc; k++) skip |= no_choice[k] == i;
        if (!skip && fx_global(i, cell) && (!needed || fx_needed(i, cell))) return i;
    }
    return -1;
}

TEST(pin_seek_global_matches_a_recount) {
    ViewModel m;
    view_init(&m, 3, 4, NULL);
    fx_fill(&m, 60);
    static const int no_choice[] = {0, 1, 2, 3, 17, 40}; /* t < w + S, and two more for the rule */
    for (size_t k = 0; k < sizeof no_choice / sizeof no_choice[0]; k++) m.hist[no_choice[k]]->n_far = 0;
    int checked = 0, found = 0;
    for (int cell = 0; cell < 12; cell++)
        for (int from = -1; from <= 60; from++)
            for (int dir = -1; dir <= 1; dir += 2)
                for (int needed = 0; needed < 2; needed++) {
                    if (dir < 0 && from < 0) continue;
                    int want = recount(60, cell, from, dir, needed, no_choice, 6);
                    int got = view_seek_global(&m, cell, from, dir, needed);
                    CHECK_MSG(got == want, "cell %d from %d dir %d needed %d: %d, recount %d", cell, from, dir, needed,
                              got, want);
                    checked++, found += got >= 0;
                }
    CHECK(checked > 2000 && found > checked / 2);
    /* a gate of 1 at a position without far keys decided nothing */
    int c = 0;
    while (c < 12 && !fx_global(17, c)) c++;
    CHECK_MSG(c < 12, "the fixture has a global at pos 17");
    CHECK(view_seek_global(&m, c, 16, 1, 0) != 17);
    view_free(&m);
}

TEST(pin_seek_keys_move_the_cursor_and_say_what_they_found) {
    ViewModel m;
    view_init(&m, 3, 4, NULL);
    fx_fill(&m, 50);
    m.sel_layer = 1, m.sel_head = 2;
    int cell = 6, first = recount(50, cell, -1, 1, 0, NULL, 0);
    CHECK(first >= 0);
    CHECK_INT(view_key(&m, 'f'), VIEW_ACT_NONE);
    CHECK_INT(m.cursor, first);
    CHECK_INT(m.follow, 0);
    char want[160];
    snprintf(want, sizeof want, "L1 H2 first global at pos %d", first);
    CHECK_MSG(!strcmp(m.status, want), "%s", m.status);
    int next = recount(50, cell, first, 1, 0, NULL, 0);
    view_key(&m, '}');
    CHECK_INT(m.cursor, next);
    snprintf(want, sizeof want, "L1 H2 next global at pos %d", next);
    CHECK_MSG(!strcmp(m.status, want), "%s", m.status);
    view_key(&m, '{');
    CHECK_INT(m.cursor, first);
    snprintf(want, sizeof want, "L1 H2 previous global at pos %d", first);
    CHECK_MSG(!strcmp(m.status, want), "%s", m.status);
    view_key(&m, '{'); /* nothing before the first: the cursor stays */
    CHECK_INT(m.cursor, first);
    CHECK_MSG(!strcmp(m.status, "no earlier global for L1 H2"), "%s", m.status);
    int needed = recount(50, cell, first, 1, 1, NULL, 0);
    CHECK(needed > first);
    view_key(&m, 'F');
    CHECK_INT(m.cursor, needed);
    char mass[16];
    view_share_text(mass, sizeof mass, fx_value(needed, cell, 1));
    snprintf(want, sizeof want, "L1 H2 next needed global at pos %d, oracle %s", needed, mass);
    CHECK_MSG(!strcmp(m.status, want), "%s", m.status);
    /* past the last global */
    int last = recount(50, cell, 50, -1, 0, NULL, 0);
    m.cursor = last;
    view_key(&m, '}');
    CHECK_INT(m.cursor, last);
    CHECK_MSG(!strcmp(m.status, "no later global for L1 H2"), "%s", m.status);
    /* the keys are in the one table, so the help lists them */
    CHECK_INT(view_key_command('f'), VIEW_OP_FIRST_GLOBAL);
    CHECK_INT(view_key_command('}'), VIEW_OP_NEXT_GLOBAL);
    CHECK_INT(view_key_command('{'), VIEW_OP_PREV_GLOBAL);
    CHECK_INT(view_key_command('F'), VIEW_OP_NEXT_NEEDED);
    CHECK_INT(view_key_command('x'), VIEW_OP_PIN);
    view_free(&m);
    /* an empty history: said, nothing moves */
    view_init(&m, 3, 4, NULL);
    view_key(&m, 'f');
    CHECK_INT(m.cursor, -1);
    CHECK_MSG(strstr(m.status, "no global for L0 H0") != NULL, "%s", m.status);
    view_free(&m);
}

/* ^ asks when the head first needed its far keys: the oracle decides,
 * whatever the gate did, and the status line names the gate there. */
TEST(pin_first_need_is_the_oracles_first_needed_position) {
    ViewModel m;
    view_init(&m, 3, 4, NULL);
    fx_fill(&m, 50);
    static const int no_choice[] = {0, 1, 2};
    for (size_t k = 0; k < sizeof no_choice / sizeof no_choice[0]; k++) m.hist[no_choice[k]]->n_far = 0;
    int missed_seen = 0;
    for (int cell = 0; cell < 12; cell++) {
        int want = -1;
        for (int i = 3; i < 50 && want < 0; i++)
            if (fx_needed(i, cell)) want = i;
        CHECK_INT(view_seek_needed(&m, cell), want);
        m.sel_layer = cell / 4, m.sel_head = cell % 4, m.cursor = 49;
        CHECK_INT(view_key(&m, '^'), VIEW_ACT_NONE);
        if (want < 0) {
            CHECK_INT(m.cursor, 49);
            CHECK_MSG(strstr(m.status, "never needed the far context"), "%s", m.status);
            continue;
        }
        CHECK_INT(m.cursor, want);
        char mass[16], head[160];
        view_share_text(mass, sizeof mass, decide_prob(m.hist[want]->oracle_logit[cell]));
        snprintf(head, sizeof head, "L%d H%d first needed the far context at pos %d, oracle %s, gate %s", cell / 4,
                 cell % 4, want, mass, fx_global(want, cell) ? "global" : "local (missed)");
        CHECK_MSG(!strcmp(m.status, head), "%s / %s", m.status, head);
        missed_seen += !fx_global(want, cell);
    }
    CHECK_INT(view_key_command('^'), VIEW_OP_FIRST_NEEDED);
    view_free(&m);
    view_init(&m, 3, 4, NULL); /* nothing yet: said, nothing moves */
    view_key(&m, '^');
    CHECK_INT(m.cursor, -1);
    CHECK_MSG(strstr(m.status, "L0 H0 never needed the far context (no positions yet)"), "%s", m.status);
    view_free(&m);
    (void)missed_seen;
}

TEST(pin_x_pins_replaces_and_unpins) {
    ViewModel m;
    view_init(&m, 3, 4, NULL);
    fx_fill(&m, 10);
    CHECK_INT(view_pin_cell(&m), -1);
    m.sel_layer = 2, m.sel_head = 1;
    view_key(&m, 'x');
    CHECK_INT(view_pin_cell(&m), 9);
    CHECK_MSG(strstr(m.status, "pinned L2 H1") != NULL, "%s", m.status);
    m.sel_layer = 0, m.sel_head = 3; /* x on another head pins that one */
    view_key(&m, 'x');
    CHECK_INT(view_pin_cell(&m), 3);
    view_key(&m, 'x'); /* and on the pinned head unpins */
    CHECK_INT(view_pin_cell(&m), -1);
    CHECK_MSG(strstr(m.status, "unpinned L0 H3") != NULL, "%s", m.status);
    view_free(&m);
}

TEST(pin_head_text_states_the_values) {
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    StepTrace *t = trace_new(2, 2);
    t->pos = 30, t->n_far = 10;
    t->gate[1] = 1, t->score[1] = 0.501f, t->oracle_logit[1] = (float)decide_theta_logit(0.21);
    t->gate[2] = 0, t->score[2] = 0.25f; /* no oracle value */
    char buf[200];
    view_head_text(&m, t, 1, VIEW_HEAD_WORDS | VIEW_HEAD_ORACLE, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "global \xc2\xb7 router 0.501 \xc2\xb7 oracle 21% needed"), "%s", buf);
    view_head_text(&m, t, 1, VIEW_HEAD_ORACLE, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "global 0.501 \xc2\xb7 oracle 21%"), "%s", buf);
    view_head_text(&m, t, 2, VIEW_HEAD_WORDS | VIEW_HEAD_ORACLE, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "local \xc2\xb7 router 0.25"), "%s", buf);
    view_head_text(&m, t, 2, 0, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "local 0.25"), "%s", buf);
    t->n_far = 0;
    view_head_text(&m, t, 1, VIEW_HEAD_WORDS, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "no choice"), "%s", buf);
    trace_free(t);
    view_free(&m);
}

TEST(pin_parent_run_changes_hands_and_is_set_beside_this_one) {
    ViewModel m;
    view_init(&m, 2, 3, NULL);
    fx_fill(&m, 12);
    StepTrace *p5 = m.hist[5];
    view_keep_parent(&m, "run 1");
    CHECK_INT(m.n_hist, 0);
    CHECK_INT(m.cursor, -1);
    CHECK_INT(m.parent.n, 12);
    CHECK(m.parent.hist[5] == p5); /* moved, not copied */
    CHECK(view_parent_trace(&m, 12) == NULL && view_parent_trace(&m, -1) == NULL);
    char buf[300];
    CHECK_INT(view_parent_line(&m, 200, buf, sizeof buf), 1);
    CHECK_MSG(!strcmp(buf, "parent run 1: no position yet"), "%s", buf);
    /* the child: the same tokens, the gates flipped at pos 5 */
    fx_fill(&m, 12);
    m.sel_layer = 1, m.sel_head = 0;
    int c = 3;
    m.hist[5]->score[c] = 0.75f, m.parent.hist[5]->score[c] = 0.3f;
    m.hist[5]->gate[c] = 1, m.parent.hist[5]->gate[c] = 0;
    m.cursor = 5;
    CHECK_INT(view_parent_line(&m, 200, buf, sizeof buf), 1);
    CHECK_MSG(!strcmp(buf, "parent run 1: local \xc2\xb7 router 0.30 \xe2\x86\x92 this run: global \xc2\xb7 router 0.75"),
              "%s", buf);
    CHECK_INT(view_parent_line(&m, 40, buf, sizeof buf), 1);
    CHECK_MSG(!strcmp(buf, "parent run 1: local 0.30 \xe2\x86\x92 global 0.75"), "%s", buf);
    CHECK_INT(view_parent_line(&m, 30, buf, sizeof buf), 1);
    CHECK_MSG(!strcmp(buf, "parent: local 0.30 \xe2\x86\x92 now global 0.75"), "%s", buf);
    fx_fill(&m, 1); /* a position the parent never had */
    m.hist[12]->pos = 12;
    m.cursor = 12;
    view_parent_line(&m, 200, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "parent run 1: no position at pos 12"), "%s", buf);
    m.cursor = 4, m.hist[4]->token = 999;
    view_parent_line(&m, 200, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "parent run 1: another token at pos 4"), "%s", buf);
    /* a parent read from a database: begun empty, then filled position by position */
    view_parent_begin(&m, "run 7");
    CHECK_INT(m.parent.n, 0);
    CHECK_INT(view_parent_line(&m, 200, buf, sizeof buf), 0); /* nothing read yet: no line */
    Err e;
    CHECK_INT(view_push_parent(&m, trace_new(2, 3), &e), 0);
    CHECK_INT(view_push_parent(&m, trace_new(3, 2), &e), -1); /* another shape: refused, freed */
    CHECK(strstr(e.msg, "shape") != NULL);
    CHECK_INT(m.parent.n, 1);
    CHECK_INT(view_parent_line(&m, 200, buf, sizeof buf), 1);
    CHECK_MSG(!strcmp(buf, "parent run 7: no position at pos 4"), "%s", buf);
    view_drop_parent(&m);
    CHECK_INT(view_parent_line(&m, 200, buf, sizeof buf), 0);
    CHECK_INT(view_aside_count(&m), 0);
    view_free(&m); /* frees a parent still held too (the sanitizer build checks) */
}

TEST(pin_inspector_and_timeline_make_room) {
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 30);
    ViewInspGeom g;
    view_insp_geom(&m, 41, 8, &g); /* 80×24: the stacked inspector in the bars' place */
    CHECK_INT(g.n_aside, 0);
    int strip = g.y_strip;
    view_key(&m, 'x');
    view_insp_geom(&m, 41, 8, &g);
    CHECK_INT(g.n_aside, 1);
    CHECK_INT(g.y_aside, strip - 1); /* the last predictor's row above the strip */
    CHECK_INT(g.y_strip, strip);
    view_insp_geom(&m, 140, 17, &g); /* room under the axis: above the far list */
    CHECK(g.stacked == 0);
    int list = g.y_strip + 2;
    CHECK_INT(g.y_aside, list);
    CHECK_INT(g.y_list, list + 1);
    CHECK_INT(g.n_aside, 1);
    /* the timeline: the pinned row first, the others a line lower */
    ViewTimeGeom tg;
    view_time_geom(&m, 80, 9, 1, &tg);
    CHECK_INT(tg.y_pin, 1);
    CHECK_INT(tg.y0, 2);
    CHECK_INT(tg.lines, 6);
    Layout lay;
    LayoutOpts o = view_layout_opts(&m);
    view_layout(80, 24, &o, &lay);
    const ViewRect *r = &lay.pane[VIEW_PANE_TIMELINE];
    m.sel_layer = 3, m.sel_head = 3;
    ViewHit h = view_hit(&m, &lay, r->x + 12, r->y + 1);
    CHECK_INT(h.pane, VIEW_PANE_TIMELINE);
    CHECK_INT(h.layer, 0);
    CHECK_INT(h.head, 0);
    view_key(&m, 'x'); /* L3 H3 pinned instead */
    view_key(&m, 'x'); /* and unpinned: the rows take the line back */
    view_time_geom(&m, 80, 9, 1, &tg);
    CHECK_INT(tg.y_pin, 0);
    CHECK_INT(tg.y0, 1);
    view_free(&m);
}

/* A frame of m at cols × rows; 1 if the screen shows every needle. */
static int frame_shows(ViewModel *m, int cols, int rows, const char *const *needles, int n) {
    FxTerm term;
    if (fx_term_open(&term, "xterm-256color", cols, rows) || !term.scr) return 0;
    ViewScreen s;
    Err e;
    int ok = view_screen_init(&s, m, &e) == 0 && view_frame(&s, m, &e) == 0;
    for (int i = 0; ok && i < n; i++)
        if (!fx_contains(curscr, needles[i])) {
            fprintf(stderr, "no '%s' on screen:\n", needles[i]);
            for (int y = 0; y < rows; y++) fprintf(stderr, "%s\n", fx_line(curscr, y));
            ok = 0;
        }
    view_screen_free(&s);
    fx_term_close(&term);
    return ok;
}

TEST(pin_frames_show_the_pinned_head_and_the_parent) {
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 30);
    view_keep_parent(&m, "run 1");
    fx_fill(&m, 30);
    m.colour = VIEW_COLOUR_256;
    m.sel_layer = 2, m.sel_head = 0;
    view_key(&m, 'x');
    m.sel_layer = 1, m.sel_head = 2;
    view_key(&m, '\n');
    static const char *const at80[] = {"timeline \xc2\xb7 pin L2 H0", "\xe2\x94\x82pin ", "pin L2 H0 ", "parent"};
    CHECK(frame_shows(&m, 80, 24, at80, 4));
    static const char *const at140[] = {"timeline \xc2\xb7 pin L2 H0", "pin L2 H0 \xc2\xb7 ",
                                        "parent run 1: ", "this run: "};
    CHECK(frame_shows(&m, 140, 45, at140, 4));
    view_free(&m);
}

/* The timeline's pinned row paints the pinned head's own cells: each one as
 * the palette draws that head's swatch at that position (the gate metric,
 * one position a column), whatever row is selected under it. */
TEST(pin_timeline_row_paints_the_pinned_heads_cells) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 80, 24), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 5, 8, NULL);
    fx_fill(&m, 30);
    m.colour = VIEW_COLOUR_256;
    m.sel_layer = 3, m.sel_head = 5;
    view_key(&m, 'x');
    m.sel_layer = 0, m.sel_head = 1;
    ViewScreen s;
    Err e;
    CHECK_INT(view_screen_init(&s, &m, &e), 0);
    CHECK_INT(view_frame(&s, &m, &e), 0);
    const ViewRect *r = &s.lay.pane[VIEW_PANE_TIMELINE];
    ViewTimeGeom g;
    view_time_geom(&m, r->w, r->h, 1, &g);
    CHECK_INT(g.bin, 1);
    int cell = 3 * 8 + 5, differs = 0;
    for (int c = 0; c < g.n_tok_vis; c++) {
        int pos = g.first_tok + c;
        /* the swatch from the fixture's own value: gate = score > 0.5, level by view_level */
        int sw = view_swatch(&m, m.hist[pos], cell);
        wchar_t want_ch, ch;
        attr_t want_a, a;
        short want_pair, pair;
        view_cell_style(&s.pal, sw, VIEW_SW_BLANK, 0, &want_ch, &want_a, &want_pair);
        fx_cell(curscr, r->y + g.y_pin, r->x + g.x0 + c, &ch, &pair, &a);
        CHECK_MSG(ch == want_ch && pair == want_pair, "pos %d: %lc/%d, want %lc/%d", pos, (wint_t)ch, pair,
                  (wint_t)want_ch, want_pair);
        differs += fx_global(pos, cell) != fx_global(pos, 1); /* the selected head's row would not do */
    }
    CHECK(differs > 0);
    CHECK(strstr(fx_line(curscr, r->y + g.y_pin), "\xe2\x94\x82pin ") != NULL);
    view_screen_free(&s);
    view_free(&m);
    fx_term_close(&term);
}
