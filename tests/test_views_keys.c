/* test_views_keys.c — key and mouse handling: view state changes and the actions returned. */
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/draw.h"
#include "views/geom.h"
#include "views/keymap.h"
#include "views/metric.h"

static void model(ViewModel *m, int L, int H, int n) {
    view_init(m, L, H, NULL);
    fx_fill(m, n);
}

TEST(views_keys_move_head_selection_and_clamp) {
    ViewModel m;
    model(&m, 5, 8, 10);
    CHECK_INT(m.focus, VIEW_PANE_HEATMAP);
    CHECK_INT(view_key(&m, 'l'), VIEW_ACT_NONE);
    CHECK_INT(view_key(&m, KEY_RIGHT), VIEW_ACT_NONE);
    CHECK_INT(m.sel_head, 2);
    view_key(&m, 'j');
    view_key(&m, KEY_DOWN);
    CHECK_INT(m.sel_layer, 2);
    for (int i = 0; i < 20; i++) view_key(&m, 'j');
    CHECK_INT(m.sel_layer, 4);
    for (int i = 0; i < 20; i++) view_key(&m, KEY_LEFT);
    CHECK_INT(m.sel_head, 0);
    view_key(&m, 'k');
    CHECK_INT(m.sel_layer, 3);
    view_free(&m);
}

TEST(views_keys_token_cursor_history_and_follow) {
    ViewModel m;
    model(&m, 2, 2, 10);
    CHECK_INT(m.cursor, 9);
    CHECK_INT(m.follow, 1);
    view_key(&m, '[');
    view_key(&m, '[');
    CHECK_INT(m.cursor, 7);
    CHECK_INT(m.follow, 0);
    fx_fill(&m, 1); /* a new step does not move a cursor that is browsing history */
    CHECK_INT(m.n_hist, 11);
    CHECK_INT(m.cursor, 7);
    view_key(&m, KEY_HOME);
    CHECK_INT(m.cursor, 0);
    view_key(&m, '[');
    CHECK_INT(m.cursor, 0);
    /* space behind the newest step replays history instead of stepping */
    CHECK_INT(view_key(&m, ' '), VIEW_ACT_NONE);
    CHECK_INT(m.cursor, 1);
    view_key(&m, KEY_END);
    CHECK_INT(m.cursor, 10);
    CHECK_INT(m.follow, 1);
    CHECK_INT(view_key(&m, ' '), VIEW_ACT_STEP);
    fx_fill(&m, 1);
    CHECK_INT(m.cursor, 11);
    view_key(&m, KEY_PPAGE);
    CHECK_INT(m.cursor, 1);
    view_key(&m, ']');
    CHECK_INT(m.cursor, 2);
    view_free(&m);
}

TEST(views_keys_return_app_actions) {
    ViewModel m;
    model(&m, 2, 2, 3);
    static const struct {
        int ch;
        ViewAction a;
    } map[] = {
        {'p', VIEW_ACT_PLAY_TOGGLE}, {'+', VIEW_ACT_SPEED_UP},      {'-', VIEW_ACT_SPEED_DOWN},
        {'P', VIEW_ACT_CHANGE_POLICY}, {'W', VIEW_ACT_WINDOW_UP},   {'w', VIEW_ACT_WINDOW_DOWN},
        {'T', VIEW_ACT_TAU_UP},      {'t', VIEW_ACT_TAU_DOWN},      {'O', VIEW_ACT_THETA_UP},
        {'o', VIEW_ACT_THETA_DOWN},  {'e', VIEW_ACT_EDIT_PROMPT},   {':', VIEW_ACT_SQL_PROMPT},
        {'s', VIEW_ACT_EXPORT},      {'q', VIEW_ACT_QUIT},          {KEY_MOUSE, VIEW_ACT_MOUSE},
        {12, VIEW_ACT_REDRAW},       {'B', VIEW_ACT_RUNS},          {'R', VIEW_ACT_SUMMARY},
        {'D', VIEW_ACT_DIFF},        {'v', VIEW_ACT_PLOTS},         {'x', VIEW_ACT_NONE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        CHECK_MSG(view_key(&m, map[i].ch) == map[i].a, "key %d gave the wrong action", map[i].ch);
    view_free(&m);
}

TEST(views_keys_metric_cycle_help_and_status) {
    ViewModel m;
    model(&m, 2, 2, 3);
    ViewMetric seen[VIEW_METRIC_COUNT];
    int n = 0; /* the cycle skips far_mean and local_window, fields with no heatmap */
    for (int k = 0; k < VIEW_METRIC_COUNT; k++) n += view_metric_cycles((ViewMetric)k);
    CHECK_INT(n, VIEW_METRIC_COUNT - 2);
    CHECK(!view_metric_cycles(VIEW_METRIC_far_mean) && view_metric_cycles(VIEW_METRIC_far_std));
    CHECK(!view_metric_cycles(VIEW_METRIC_local_window));
    for (int i = 0; i < n; i++) {
        seen[i] = m.metric;
        CHECK(seen[i] != VIEW_METRIC_far_mean && seen[i] != VIEW_METRIC_local_window);
        view_key(&m, 'm');
    }
    CHECK_INT(m.metric, VIEW_METRIC_gate);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) CHECK(seen[i] != seen[j]);
    view_key(&m, 'M');
    CHECK_INT(m.metric, VIEW_METRIC_NEEDLE); /* the cycle's last: the weight on the needle */
    view_key(&m, 'M');
    CHECK_INT(m.metric, VIEW_METRIC_AGREE);
    view_key(&m, 'a');
    CHECK_INT(m.agree_pred, VIEW_PRED_QADA); /* the predictors of engine/decide.h, in its order, from AHA */
    view_key(&m, 'g');
    CHECK_INT(m.tint_share, 1);

    view_key(&m, '?');
    CHECK_INT(m.help_open, 1);
    CHECK_INT(view_key(&m, 'P'), VIEW_ACT_NONE); /* a key on the help only closes it */
    CHECK_INT(m.help_open, 0);
    view_key(&m, '?');
    CHECK_INT(view_key(&m, 'q'), VIEW_ACT_NONE); /* q closes the help: it quits the main screen only */
    CHECK_INT(m.help_open, 0);
    CHECK_INT(view_key(&m, 'q'), VIEW_ACT_QUIT);

    view_set_status(&m, "exported %d rows", 12);
    CHECK(strcmp(m.status, "exported 12 rows") == 0);
    view_key(&m, 'l');
    CHECK_INT(m.status[0], 0);
    view_free(&m);
}

TEST(views_keys_focus_inspector_sql_and_escape) {
    ViewModel m;
    model(&m, 3, 4, 5);
    view_key(&m, '\t');
    CHECK_INT(m.focus, VIEW_PANE_TIMELINE);
    view_key(&m, '\t');
    CHECK_INT(m.focus, VIEW_PANE_BARS);
    view_key(&m, '\t');
    CHECK_INT(m.focus, VIEW_PANE_TOKENS);
    view_key(&m, KEY_BTAB);
    CHECK_INT(m.focus, VIEW_PANE_BARS);
    /* in the timeline, up/down walk (layer, head) rows and left/right the tokens */
    m.focus = VIEW_PANE_TIMELINE;
    view_key(&m, KEY_UP);
    CHECK_INT(m.sel_layer, 0);
    for (int i = 0; i < 5; i++) view_key(&m, 'j');
    CHECK_INT(m.sel_layer, 1);
    CHECK_INT(m.sel_head, 1);
    view_key(&m, 'h');
    CHECK_INT(m.cursor, 3);

    view_key(&m, '\n');
    CHECK_INT(m.inspector_open, 1);
    CHECK_INT(m.focus, VIEW_PANE_INSPECTOR);
    int pos, layer, head;
    CHECK_INT(view_attention_wanted(&m, &pos, &layer, &head), 1);
    CHECK_INT(pos, 3);
    CHECK_INT(layer, 1);
    CHECK_INT(head, 1);
    float w[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    view_set_attention(&m, 3, 1, 1, w, 4, 2, 0, NULL);
    CHECK_INT(view_attention_wanted(&m, &pos, &layer, &head), 0);
    view_key(&m, KEY_RIGHT); /* head 2 now: the strip no longer matches */
    CHECK_INT(view_attention_wanted(&m, &pos, &layer, &head), 1);

    CHECK_INT(view_set_sql(&m, "select 1", "a\nb\nc\nd\n", NULL), 0);
    CHECK_INT(m.sql_open, 1);
    CHECK_INT(m.sql_lines, 4);
    CHECK_INT(m.focus, VIEW_PANE_SQL);
    view_key(&m, 'j');
    view_key(&m, KEY_NPAGE);
    CHECK_INT(m.sql_scroll, 3);
    view_key(&m, 27); /* Esc closes the SQL pane first, then the inspector */
    CHECK_INT(m.sql_open, 0);
    CHECK_INT(m.inspector_open, 1);
    view_key(&m, 27);
    CHECK_INT(m.inspector_open, 0);
    CHECK(m.focus != VIEW_PANE_INSPECTOR && m.focus != VIEW_PANE_SQL);
    view_free(&m);
}

TEST(views_push_rejects_wrong_shape_and_keeps_copies) {
    ViewModel m;
    Err e;
    CHECK(view_init(&m, 0, 3, &e) != 0);
    view_init(&m, 2, 3, NULL);
    StepTrace *t = trace_new(3, 2);
    CHECK(view_push(&m, t, &e) != 0);
    CHECK(strstr(e.msg, "shape") != NULL);
    trace_free(t);
    t = trace_new(2, 3);
    t->pos = 0;
    t->score[4] = 0.75f;
    CHECK_INT(view_push(&m, t, &e), 0);
    t->score[4] = 0.1f; /* the model holds its own copy */
    CHECK_NEAR(view_trace(&m, 0)->score[4], 0.75, 0);
    CHECK(view_trace(&m, 1) == NULL);
    for (int i = 0; i < 600; i++) view_push(&m, t, NULL); /* grows past the first capacity */
    CHECK_INT(m.n_hist, 601);
    view_clear_history(&m);
    CHECK_INT(m.n_hist, 0);
    CHECK_INT(m.cursor, -1);
    trace_free(t);
    view_free(&m);
}

/* Screen position of heatmap cell (layer, head) in layout l. */
static void heat_cell_xy(const ViewModel *m, const Layout *l, int layer, int head, int *x, int *y) {
    const ViewRect *r = &l->pane[VIEW_PANE_HEATMAP];
    ViewHeatGeom g;
    view_heat_geom(m, r->w, r->h, view_layout_opts(m).half_blocks, &g);
    *x = r->x + g.x0 + (head - g.first_head) * (g.cw + g.gap);
    *y = r->y + g.y0 + (layer - g.first_layer) / (g.half ? 2 : 1) * g.rh;
}

TEST(views_mouse_hit_test_heatmap_tokens_timeline) {
    ViewModel m;
    model(&m, 5, 8, 30);
    m.colour = VIEW_COLOUR_256;
    LayoutOpts o = view_layout_opts(&m);
    Layout l;
    view_layout(100, 30, &o, &l);
    int x, y;
    heat_cell_xy(&m, &l, 2, 3, &x, &y);
    ViewHit h = view_hit(&m, &l, x, y);
    CHECK_INT(h.pane, VIEW_PANE_HEATMAP);
    CHECK_INT(h.layer, 2);
    CHECK_INT(h.head, 3);
    m.focus = VIEW_PANE_TOKENS;
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK);
    CHECK_INT(m.sel_layer, 2);
    CHECK_INT(m.sel_head, 3);
    CHECK_INT(m.focus, VIEW_PANE_HEATMAP);
    /* the border and the header select nothing */
    const ViewRect *hm = &l.pane[VIEW_PANE_HEATMAP];
    h = view_hit(&m, &l, hm->x, hm->y);
    CHECK_INT(h.layer, -1);
    h = view_hit(&m, &l, 5, 0);
    CHECK_INT(h.pane, VIEW_PANE_HEADER);

    /* tokens: "Once" starts the stream, " upon" follows at column 4 */
    view_key(&m, KEY_HOME);
    const ViewRect *tk = &l.pane[VIEW_PANE_TOKENS];
    h = view_hit(&m, &l, tk->x + 1 + 5, tk->y + 1);
    CHECK_INT(h.pane, VIEW_PANE_TOKENS);
    CHECK_INT(h.pos, 1);
    view_mouse(&m, &l, tk->x + 1 + 5, tk->y + 1, VIEW_MOUSE_CLICK);
    CHECK_INT(m.cursor, 1);
    CHECK_INT(m.focus, VIEW_PANE_TOKENS);
    CHECK_INT(view_hit(&m, &l, tk->x + tk->w - 2, tk->y + 1).pos, -1); /* past the end of the line */

    /* timeline: column → token, line → (layer, head) row */
    const ViewRect *tl = &l.pane[VIEW_PANE_TIMELINE];
    ViewTimeGeom g;
    view_time_geom(&m, tl->w, tl->h, 1, &g);
    view_mouse(&m, &l, tl->x + g.x0 + 7, tl->y + g.y0 + 2, VIEW_MOUSE_CLICK);
    CHECK_INT(m.cursor, g.first_tok + 7);
    int row = g.first_row + 2 * (g.half ? 2 : 1);
    CHECK_INT(m.sel_layer * m.n_heads + m.sel_head, row);
    /* the wheel over the timeline walks its rows, not the token cursor */
    view_mouse(&m, &l, tl->x + g.x0 + 7, tl->y + g.y0 + 2, VIEW_MOUSE_WHEEL_UP);
    CHECK_INT(m.cursor, g.first_tok + 7);
    CHECK_INT(m.sel_layer * m.n_heads + m.sel_head, row - 1);
    view_mouse(&m, &l, tl->x + g.x0 + 7, tl->y + g.y0 + 2, VIEW_MOUSE_WHEEL_DOWN);
    view_mouse(&m, &l, tl->x + g.x0 + 7, tl->y + g.y0 + 2, VIEW_MOUSE_WHEEL_DOWN);
    CHECK_INT(m.sel_layer * m.n_heads + m.sel_head, row + 1);

    /* bars: a layer's lines (several where the pane has them: a thick bar) */
    const ViewRect *br = &l.pane[VIEW_PANE_BARS];
    ViewBarsGeom bg;
    view_bars_geom(&m, br->w, br->h, &bg);
    view_mouse(&m, &l, br->x + 3, br->y + bg.y0 + 4 * bg.rh + bg.rh - 1, VIEW_MOUSE_CLICK);
    CHECK_INT(m.sel_layer, 4);
    view_mouse(&m, &l, br->x + 3, br->y + bg.y0 + 2 * bg.rh, VIEW_MOUSE_CLICK);
    CHECK_INT(m.sel_layer, 2);
    view_free(&m);
}

/* A click on the timeline selects what is under the pointer and the pane
 * does not scroll: the same point still hits the same row and position. */
TEST(views_mouse_timeline_click_keeps_rows_under_the_pointer) {
    ViewModel m;
    model(&m, 5, 8, 300);
    m.colour = VIEW_COLOUR_256;
    LayoutOpts o = view_layout_opts(&m);
    Layout l;
    view_layout(100, 30, &o, &l);
    const ViewRect *tl = &l.pane[VIEW_PANE_TIMELINE];
    ViewTimeGeom g, g2;
    view_time_geom(&m, tl->w, tl->h, o.half_blocks, &g);
    CHECK(g.n_rows_vis < 40 && g.n_tok_vis < 300); /* both scroll */
    int x = tl->x + g.x0 + 2, y = tl->y + g.y0 + (g.lines - 1);
    ViewHit before = view_hit(&m, &l, x, y);
    CHECK(before.layer >= 0 && before.pos >= 0);
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK);
    CHECK_INT(m.cursor, before.pos);
    CHECK_INT(m.sel_layer, before.layer);
    CHECK_INT(m.sel_head, before.head);
    view_time_geom(&m, tl->w, tl->h, o.half_blocks, &g2);
    CHECK_INT(g2.first_row, g.first_row);
    CHECK_INT(g2.first_tok, g.first_tok);
    ViewHit after = view_hit(&m, &l, x, y);
    CHECK_INT(after.pos, before.pos);
    CHECK_INT(after.head, before.head);
    /* a key gives the timeline back to the cursor: centred again */
    view_key(&m, '[');
    view_time_geom(&m, tl->w, tl->h, o.half_blocks, &g2);
    CHECK_INT(g2.first_tok, view_first_col(m.cursor, m.n_hist, g2.n_cols));
    view_free(&m);
}

/* Closing a text pane gives the focus back to the pane that had it, and
 * Home/End scroll the text pane to its ends as they do in the help. */
TEST(views_keys_text_pane_returns_focus_and_home_end_scroll_it) {
    ViewModel m;
    model(&m, 3, 4, 20);
    m.focus = VIEW_PANE_TOKENS;
    CHECK_INT(view_set_text(&m, "plots", "", "l0\nl1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\n", NULL), 0);
    CHECK_INT(m.focus, VIEW_PANE_SQL);
    m.sql_page = 4;
    view_key(&m, KEY_END);
    CHECK_INT(m.sql_scroll, 8);
    CHECK_INT(m.cursor, 19);
    view_key(&m, KEY_HOME);
    CHECK_INT(m.sql_scroll, 0);
    CHECK_INT(m.cursor, 19); /* the token cursor stayed */
    view_key(&m, 27);
    CHECK_INT(m.focus, VIEW_PANE_TOKENS);
    view_key(&m, KEY_LEFT); /* arrows mean what they meant before: the token cursor */
    CHECK_INT(m.cursor, 18);
    /* from the heatmap, a second pane replacing the first still returns there */
    m.focus = VIEW_PANE_HEATMAP;
    view_set_text(&m, "summary", "", "a\n", NULL);
    view_set_text(&m, "diff", "", "b\n", NULL);
    view_key(&m, 27);
    CHECK_INT(m.focus, VIEW_PANE_HEATMAP);
    view_free(&m);
}

/* The first `a` shows the agreement of the predictor already chosen (AHA);
 * later presses cycle. */
TEST(views_keys_agreement_first_press_shows_aha) {
    ViewModel m;
    model(&m, 2, 2, 3);
    CHECK_INT(m.metric, VIEW_METRIC_gate);
    view_key(&m, 'a');
    CHECK_INT(m.metric, VIEW_METRIC_AGREE);
    CHECK_INT(m.agree_pred, VIEW_PRED_AHA);
    view_key(&m, 'a');
    CHECK_INT(m.agree_pred, VIEW_PRED_QADA);
    view_free(&m);
}

TEST(views_mouse_half_block_click_picks_other_layer_and_sql_wheel) {
    ViewModel m;
    model(&m, 16, 16, 20);
    m.colour = VIEW_COLOUR_256;
    LayoutOpts o = view_layout_opts(&m);
    Layout l;
    view_layout(80, 24, &o, &l);
    int x, y;
    heat_cell_xy(&m, &l, 4, 5, &x, &y);
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK);
    CHECK_INT(m.sel_layer, 4);
    CHECK_INT(m.sel_head, 5);
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK); /* same text cell again: the lower layer */
    CHECK_INT(m.sel_layer, 5);

    view_set_sql(&m, "q", "1\n2\n3\n4\n5\n6\n7\n8", NULL);
    o = view_layout_opts(&m);
    view_layout(80, 24, &o, &l);
    const ViewRect *sq = &l.pane[VIEW_PANE_SQL];
    CHECK(sq->w > 0);
    view_mouse(&m, &l, sq->x + 3, sq->y + 2, VIEW_MOUSE_WHEEL_DOWN);
    CHECK_INT(m.sql_scroll, 3);
    view_mouse(&m, &l, sq->x + 3, sq->y + 2, VIEW_MOUSE_WHEEL_UP);
    CHECK_INT(m.sql_scroll, 0);

    Layout tiny;
    view_layout(40, 10, &o, &tiny);
    CHECK_INT(view_hit(&m, &tiny, 3, 3).pane, VIEW_PANE_NONE);
    m.help_open = 1;
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK); /* a click closes the help, selects nothing */
    CHECK_INT(m.help_open, 0);
    CHECK_INT(m.sel_layer, 5);
    CHECK_INT(view_mouse_kind(BUTTON1_CLICKED), VIEW_MOUSE_CLICK);
    CHECK_INT(view_mouse_kind(BUTTON4_PRESSED), VIEW_MOUSE_WHEEL_UP);
    CHECK_INT(view_mouse_kind(BUTTON5_PRESSED), VIEW_MOUSE_WHEEL_DOWN);
    view_free(&m);
}

static void type(ViewModel *m, const char *s) {
    for (; *s; s++) view_input_key(m, (unsigned char)*s);
}

/* ↑/↓ walk the lines entered before under the same label; ↓ past the
 * newest gives back what was being typed. */
TEST(views_input_history_per_label) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    view_input_begin(&m, "sql", "");
    type(&m, "SELECT 1");
    CHECK_INT(view_input_key(&m, '\n'), VIEW_INPUT_DONE);
    view_input_begin(&m, "prompt", "");
    type(&m, "Once");
    view_input_key(&m, '\n');
    view_input_begin(&m, "sql", "");
    type(&m, "SELECT 2");
    view_input_key(&m, '\n');
    view_input_begin(&m, "sql", "");
    CHECK(!strcmp(m.input.text, ""));
    type(&m, "draft");
    view_input_key(&m, KEY_UP);
    CHECK(!strcmp(m.input.text, "SELECT 2"));
    view_input_key(&m, KEY_UP); /* the prompt line in between is skipped */
    CHECK(!strcmp(m.input.text, "SELECT 1"));
    view_input_key(&m, KEY_UP); /* the oldest stays */
    CHECK(!strcmp(m.input.text, "SELECT 1"));
    view_input_key(&m, KEY_DOWN);
    CHECK(!strcmp(m.input.text, "SELECT 2"));
    view_input_key(&m, KEY_DOWN);
    CHECK(!strcmp(m.input.text, "draft"));
    CHECK_INT(view_input_key(&m, 27), VIEW_INPUT_CANCEL);
    CHECK_INT(m.input.n_history, 3); /* a cancelled line is not remembered */
    view_free(&m);
}

/* The editor holds a line of any length up to VIEW_INPUT_MAX (a prompt
 * file's 16 MiB), not 1023 bytes: typing, ↑ and Enter keep all of it. */
TEST(views_input_holds_a_long_line_whole) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    static char longer[6000];
    size_t n = 0;
    while (n + 40 < 5000) n += (size_t)snprintf(longer + n, sizeof longer - n, "line %zu: Zo\xc3\xab \xe6\xbc\xa2\n", n);
    CHECK_INT(view_input_begin(&m, "prompt", longer), 0);
    CHECK_INT(m.input.len, n);
    CHECK_INT(m.input.cur, n);
    type(&m, " The end.");
    CHECK_INT(view_input_key(&m, '\n'), VIEW_INPUT_DONE);
    CHECK_INT(m.input.len, n + 9);
    CHECK(!strncmp(m.input.text, longer, n) && !strcmp(m.input.text + n, " The end."));
    CHECK_INT(view_input_begin(&m, "prompt", "short"), 0);
    view_input_key(&m, KEY_UP); /* the long line comes back whole */
    CHECK_INT(m.input.len, n + 9);
    view_input_key(&m, KEY_DOWN);
    CHECK(!strcmp(m.input.text, "short"));
    view_free(&m);
}

/* ←/→ step over whole UTF-8 characters (a stray byte alone), Home/End and
 * Ctrl-A/Ctrl-E jump, bytes go in at the cursor, Backspace and Delete take
 * the character before / under it. */
TEST(views_input_cursor_moves_by_characters) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    view_input_begin(&m, "prompt", "a\xf0\x9f\x98\x80" "b\xc3\xa9");  /* a 😀 b é */
    CHECK_INT(m.input.cur, 8);
    view_input_key(&m, KEY_LEFT);
    CHECK_INT(m.input.cur, 6);
    view_input_key(&m, KEY_LEFT);
    CHECK_INT(m.input.cur, 5);
    view_input_key(&m, KEY_LEFT);
    CHECK_INT(m.input.cur, 1);
    view_input_key(&m, KEY_LEFT);
    view_input_key(&m, KEY_LEFT);
    CHECK_INT(m.input.cur, 0);
    view_input_key(&m, KEY_RIGHT);
    view_input_key(&m, KEY_RIGHT);
    CHECK_INT(m.input.cur, 5);
    view_input_key(&m, KEY_BACKSPACE); /* the emoji, all four bytes */
    CHECK(!strcmp(m.input.text, "ab\xc3\xa9"));
    CHECK_INT(m.input.cur, 1);
    type(&m, "\xe6\xbc\xa2"); /* 漢 typed byte by byte, in the middle */
    CHECK(!strcmp(m.input.text, "a\xe6\xbc\xa2" "b\xc3\xa9"));
    CHECK_INT(m.input.cur, 4);
    view_input_key(&m, KEY_DC);
    CHECK(!strcmp(m.input.text, "a\xe6\xbc\xa2\xc3\xa9"));
    view_input_key(&m, KEY_DC);
    view_input_key(&m, KEY_DC); /* at the end: nothing */
    CHECK(!strcmp(m.input.text, "a\xe6\xbc\xa2"));
    view_input_key(&m, 1); /* Ctrl-A */
    type(&m, "<");
    view_input_key(&m, 5); /* Ctrl-E */
    type(&m, ">");
    view_input_key(&m, KEY_HOME);
    view_input_key(&m, KEY_DC);
    view_input_key(&m, KEY_END);
    view_input_key(&m, KEY_BACKSPACE);
    CHECK(!strcmp(m.input.text, "a\xe6\xbc\xa2"));
    view_input_begin(&m, "prompt", "a\x80\x80" "b"); /* stray continuation bytes: one at a time */
    view_input_key(&m, KEY_LEFT);
    view_input_key(&m, KEY_LEFT);
    CHECK_INT(m.input.cur, 2);
    CHECK_INT(view_utf8_prev("a\x80\x80" "b", 2), 1);
    CHECK_INT(view_utf8_next("\xe6\xbc", 2, 0), 1); /* a sequence cut by the end is a stray byte */
    view_input_key(&m, 21); /* Ctrl-U clears */
    CHECK_INT(m.input.len, 0);
    CHECK(!strcmp(m.input.text, ""));
    view_free(&m);
}

/* At VIEW_INPUT_MAX bytes a typed byte is refused and the status line says
 * so; a starting text over it opens no editor and says why. */
TEST(views_input_refuses_past_the_limit) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    char *big = malloc(VIEW_INPUT_MAX + 2);
    if (!big) { test_skip("no memory for a 16 MiB line"); view_free(&m); return; }
    memset(big, 'a', VIEW_INPUT_MAX + 1);
    big[VIEW_INPUT_MAX + 1] = 0;
    CHECK_INT(view_input_begin(&m, "prompt", big), -1);
    CHECK_INT(m.input.active, 0);
    CHECK_MSG(strstr(m.status, "prompt: 16777217 bytes, more than the 16 MiB an input line holds"), "%s", m.status);
    big[VIEW_INPUT_MAX] = 0;
    CHECK_INT(view_input_begin(&m, "prompt", big), 0);
    free(big);
    view_input_key(&m, 'b');
    CHECK_INT(m.input.refused, 1);
    CHECK_INT(m.input.len, VIEW_INPUT_MAX);
    FxTerm term;
    if (fx_term_open(&term, "xterm-256color", 100, 30) == 0 && term.scr) {
        ViewPalette pal;
        view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
        WINDOW *w = newwin(1, 100, 0, 0);
        view_draw_status(w, &m, &pal);
        CHECK_MSG(strstr(fx_line(w, 0), "not added: a line holds 16 MiB at most"), "'%s'", fx_line(w, 0));
        delwin(w);
        fx_term_close(&term);
    }
    view_input_key(&m, KEY_BACKSPACE);
    CHECK_INT(m.input.refused, 0);
    view_input_key(&m, 'b');
    CHECK_INT(m.input.refused, 0);
    CHECK_INT(m.input.len, VIEW_INPUT_MAX);
    CHECK_INT(m.input.text[VIEW_INPUT_MAX - 1], 'b');
    view_free(&m);
}

/* A table keeps its header; PgDn moves by the rows the pane shows and
 * stops at the last full page; ←/→ scroll sideways within the widest line. */
TEST(views_sql_pane_pages_and_scrolls_sideways) {
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    char text[4096] = "n\n---\n";
    for (int i = 1; i <= 25; i++) snprintf(text + strlen(text), sizeof text - strlen(text), "%d\n", i);
    CHECK_INT(view_set_sql(&m, "q", text, NULL), 0);
    CHECK_INT(m.sql_pinned, 2);
    Layout l;
    LayoutOpts o = view_layout_opts(&m);
    view_layout(80, 24, &o, &l);
    view_sql_fit(&m, &l);
    int page = m.sql_page;
    CHECK(page > 0 && page < 25);
    view_key(&m, KEY_NPAGE);
    CHECK_INT(m.sql_scroll, page);
    for (int i = 0; i < 10; i++) view_key(&m, KEY_NPAGE);
    CHECK_INT(m.sql_scroll, 25 - page);
    view_key(&m, KEY_PPAGE);
    CHECK_INT(m.sql_scroll, 25 - 2 * page > 0 ? 25 - 2 * page : 0);
    char wide[300];
    memset(wide, 'x', 200);
    wide[200] = 0;
    CHECK_INT(view_set_text(&m, "plots", "", wide, NULL), 0);
    CHECK_INT(m.sql_pinned, 0);
    CHECK(!strcmp(m.sql_title, "plots"));
    view_sql_fit(&m, &l);
    CHECK_INT(m.sql_cols, 78);
    view_key(&m, 'l');
    CHECK_INT(m.sql_hscroll, VIEW_SQL_HSTEP);
    for (int i = 0; i < 30; i++) view_key(&m, KEY_RIGHT);
    CHECK_INT(m.sql_hscroll, 200 - 78);
    view_key(&m, 'h');
    CHECK_INT(m.sql_hscroll, 200 - 78 - VIEW_SQL_HSTEP);
    view_free(&m);
}

/* `/` opens a search line; the next token holding the text, wrapping
 * round, is where the cursor goes (the app moves it). */
TEST(views_search_finds_the_next_token) {
    ViewModel m;
    CHECK_INT(view_init(&m, 1, 1, NULL), 0);
    static const char *const pieces[] = {"<s>", "Once", " upon", " a", " time", " upon"};
    StepTrace *t = trace_new(1, 1);
    for (int i = 0; i < 6; i++) {
        trace_clear(t);
        t->pos = i;
        snprintf(t->piece, sizeof t->piece, "%s", pieces[i]);
        view_push(&m, t, NULL);
    }
    trace_free(t);
    CHECK_INT(view_find_text(&m, "upon", -1, 1), 2);
    CHECK_INT(view_find_text(&m, "upon", 2, 1), 5);
    CHECK_INT(view_find_text(&m, "upon", 5, 1), 2); /* wraps round */
    CHECK_INT(view_find_text(&m, "dragon", 0, 1), -1);
    CHECK_INT(view_find_text(&m, "", 0, 1), -1);
    /* previous, wrapping the other way */
    CHECK_INT(view_find_text(&m, "upon", 5, -1), 2);
    CHECK_INT(view_find_text(&m, "upon", 2, -1), 5);
    /* across token boundaries, and in any case unless the needle has a capital */
    CHECK_INT(view_find_text(&m, "a ti", 0, 1), 3);
    CHECK_INT(view_find_text(&m, "once upon", -1, 1), 1);
    CHECK_INT(view_find_text(&m, "ONCE", -1, 1), -1);
    CHECK_INT(view_find_text(&m, "Once u", -1, 1), 1);
    CHECK_INT(view_key(&m, '/'), VIEW_ACT_NONE);
    CHECK(m.input.active && !strcmp(m.input.label, "search"));
    view_free(&m);
}

/* The tokens " to" "ys" hold " toys"; `/` finds it, > and < walk the matches. */
TEST(views_search_matches_across_tokens_with_next_and_previous) {
    ViewModel m;
    CHECK_INT(view_init(&m, 1, 1, NULL), 0);
    static const char *const pieces[] = {"She", " loved", " her", " to", "ys", ".", " The", " To", "ys", " were"};
    StepTrace *t = trace_new(1, 1);
    for (int i = 0; i < 10; i++) {
        trace_clear(t);
        t->pos = i;
        snprintf(t->piece, sizeof t->piece, "%s", pieces[i]);
        view_push(&m, t, NULL);
    }
    trace_free(t);
    m.cursor = 0;
    view_search(&m, " toys", 1);
    CHECK_INT(m.cursor, 3);
    CHECK_MSG(strstr(m.status, "\" toys\" at pos 3 (n next, N previous)") != NULL, "%s", m.status);
    view_key(&m, 'n'); /* " To" "ys": case does not matter */
    CHECK_INT(m.cursor, 7);
    view_key(&m, 'n'); /* wraps round */
    CHECK_INT(m.cursor, 3);
    view_key(&m, 'N');
    CHECK_INT(m.cursor, 7);
    view_key(&m, '>'); /* > is the next missed global now, not the next match: none here */
    CHECK_INT(m.cursor, 7);
    CHECK_MSG(strstr(m.status, "no missed global") != NULL, "%s", m.status);
    view_search(&m, "dragon", 1);
    CHECK_INT(m.cursor, 7);
    CHECK_MSG(strstr(m.status, "no match for \"dragon\"") != NULL, "%s", m.status);
    view_search(&m, " toys", 1);
    CHECK_INT(m.cursor, 3);
    view_search(&m, "", 1); /* `/` Enter on an empty line: the last search again, not "no search yet" */
    CHECK_INT(m.cursor, 7);
    CHECK_MSG(strstr(m.status, "\" toys\" at pos 7") != NULL, "%s", m.status);
    view_free(&m);
}

/* Make every cell agree (router and oracle both local), then plant one
 * disagreement: router global where the oracle is local, or the reverse. */
static void agree_all(ViewModel *m) {
    for (int i = 0; i < m->n_hist; i++)
        for (int c = 0; c < m->n_layers * m->n_heads; c++) {
            m->hist[i]->score[c] = 0.1f, m->hist[i]->oracle_logit[c] = -20.0f;
            m->hist[i]->n_far = 4;
        }
}

TEST(views_keys_gt_and_lt_jump_to_the_next_disagreement) {
    ViewModel m;
    model(&m, 3, 4, 12);
    agree_all(&m);
    m.agree_pred = VIEW_PRED_AHA;
    m.hist[8]->oracle_logit[1 * 4 + 2] = 20.0f; /* missed at pos 8, L1H2 */
    m.hist[3]->oracle_logit[0] = 20.0f;          /* missed at pos 3, L0H0: the selected head */
    m.hist[5]->score[2 * 4 + 3] = 0.9f;          /* needless at pos 5, L2H3 */
    view_key(&m, KEY_HOME);
    CHECK_INT(view_key(&m, '>'), VIEW_ACT_NONE);
    CHECK_INT(m.cursor, 3); /* the selected head's own miss comes first */
    CHECK_INT(m.sel_layer, 0);
    CHECK_INT(m.metric, VIEW_METRIC_AGREE);
    CHECK(strstr(m.status, "missed global at pos 3, L0H0") != NULL);
    view_key(&m, '>'); /* none left in L0H0: the next in any head, which is selected */
    CHECK_INT(m.cursor, 8);
    CHECK_INT(m.sel_layer, 1);
    CHECK_INT(m.sel_head, 2);
    view_key(&m, '<');
    CHECK_INT(m.cursor, 5); /* wraps past the end */
    CHECK_INT(m.sel_layer, 2);
    CHECK_INT(m.sel_head, 3);
    CHECK(strstr(m.status, "needless global at pos 5, L2H3") != NULL);
    m.hist[5]->n_far = 0; /* no choice there: not a disagreement */
    view_key(&m, '<');
    CHECK(strstr(m.status, "no needless global") != NULL);
    CHECK_INT(m.cursor, 5);
    view_free(&m);
}

TEST(views_key_table_binds_each_key_once_and_names_every_command) {
    int n;
    const ViewBinding *b = view_bindings(&n);
    CHECK(n > 10);
    int seen[512] = {0};
    for (int r = 0; r < n; r++)
        for (int s = 0; s < VIEW_KEYS_PER_ROW && b[r].key[s]; s++) {
            int k = b[r].key[s] & 511;
            CHECK_MSG(!seen[k], "key %d bound twice", b[r].key[s]);
            seen[k] = 1;
            CHECK_INT(view_key_command(b[r].key[s]), b[r].cmd[s]);
        }
    /* every view operation and every app request a key can make has a key */
    for (int op = VIEW_OP_STEP; op < VIEW_OP_END; op++) CHECK_MSG(view_command_key(op) != 0, "op %d has no key", op);
    for (int a = VIEW_ACT_STEP; a < VIEW_ACT_COUNT; a++) {
        if (a == VIEW_ACT_MOUSE || a == VIEW_ACT_STEP) continue;
        CHECK_MSG(view_command_key(a) != 0, "action %d has no key", a);
    }
    char buf[8];
    CHECK(strcmp(view_key_name(' ', buf), "spc") == 0);
    CHECK(strcmp(view_key_name('n', buf), "n") == 0);
    CHECK(strcmp(view_command_hint(VIEW_OP_NEXT_MISSED), "missed") == 0);
}

/* The help's lines are the key table's rows but the ones that only add keys
 * to the row above; the line editor's keys are among them. */
TEST(views_help_lines_come_from_the_key_table_and_list_the_editor_keys) {
    int n_rows, n = view_help_count();
    const ViewBinding *b = view_bindings(&n_rows);
    int extra = 0;
    for (int r = 0; r < n_rows; r++) extra += b[r].label && !b[r].label[0] && !b[r].help[0];
    CHECK_INT(n, n_rows - extra);
    CHECK(view_help_line(n - 1) != NULL && view_help_line(n) == NULL && view_help_line(-1) == NULL);
    char all[8192] = "";
    for (int i = 0; i < n; i++) {
        const ViewBinding *l = view_help_line(i);
        CHECK_MSG(l->label == NULL || l->label[0] || l->help[0], "help line %d is empty", i);
        size_t k = strlen(all);
        snprintf(all + k, sizeof all - k, "%s %s\n", l->label ? l->label : "", l->help);
    }
    static const char *const editor[] = {"\xe2\x86\x90 \xe2\x86\x92", "Home End", "C-a / C-e", "Bksp", "Del", "C-u",
                                         "\xe2\x86\x91 \xe2\x86\x93", "Enter  Esc", "line editor"};
    for (size_t i = 0; i < sizeof editor / sizeof editor[0]; i++)
        CHECK_MSG(strstr(all, editor[i]) != NULL, "the help does not name '%s'", editor[i]);
    CHECK(strstr(all, "Esc  q close the top pane (one per press); q quits if none") != NULL);
}

/* With more lines than the overlay shows, the keys that scroll the text
 * pane scroll the help, never past its last screenful; any other key closes
 * it (q also quits). When every line shows, every key closes it, as before. */
TEST(views_keys_help_scrolls_then_closes) {
    ViewModel m;
    model(&m, 2, 2, 3);
    LayoutOpts o = view_layout_opts(&m);
    Layout small, big;
    view_layout(80, 24, &o, &small);
    view_layout(200, 60, &o, &big);
    int n = view_help_count();
    view_key(&m, '?');
    CHECK_INT(view_help_fit(&m, &small), 1); /* the open help got a size: hints to redraw */
    CHECK_INT(view_help_fit(&m, &small), 0);
    int page = m.help_page, last = n - page;
    CHECK_MSG(page == small.help.h - 2 && page < n, "page %d of %d lines", page, n);
    CHECK_INT(view_key(&m, KEY_DOWN), VIEW_ACT_NONE);
    CHECK_INT(m.help_open, 1);
    CHECK_INT(m.help_scroll, 1);
    view_key(&m, 'j');
    view_key(&m, 'k');
    view_key(&m, 'k');
    view_key(&m, KEY_UP);
    CHECK_INT(m.help_scroll, 0);
    view_key(&m, KEY_NPAGE);
    CHECK_INT(m.help_scroll, page < last ? page : last);
    view_key(&m, KEY_END);
    CHECK_INT(m.help_scroll, last);
    view_key(&m, KEY_NPAGE);
    view_key(&m, KEY_DOWN);
    CHECK_INT(m.help_scroll, last); /* the last screenful stays full */
    view_key(&m, KEY_PPAGE);
    CHECK_INT(m.help_scroll, last - page > 0 ? last - page : 0);
    view_key(&m, KEY_HOME);
    CHECK_INT(m.help_scroll, 0);
    int x = small.help.x + 2, y = small.help.y + 2;
    view_mouse(&m, &small, x, y, VIEW_MOUSE_WHEEL_DOWN);
    CHECK_INT(m.help_scroll, 3);
    CHECK_INT(m.help_open, 1);
    CHECK_INT(m.cursor, 2); /* the wheel moved nothing behind the help */
    view_key(&m, KEY_END);
    view_help_fit(&m, &big); /* a taller screen: every line shows, the scroll goes back */
    CHECK_INT(m.help_scroll, 0);
    view_help_fit(&m, &small);
    view_key(&m, KEY_END);
    CHECK_INT(view_key(&m, 'P'), VIEW_ACT_NONE); /* any other key closes it and does nothing else */
    CHECK_INT(m.help_open, 0);
    view_key(&m, '?');
    CHECK_INT(m.help_scroll, 0); /* it opens at the top */
    CHECK_INT(view_key(&m, 'q'), VIEW_ACT_NONE); /* q closes it: it quits the main screen only */
    CHECK_INT(m.help_open, 0);
    /* every line shows: the scroll keys close it, as every key did */
    view_help_fit(&m, &big);
    CHECK(big.help.h - 2 >= n);
    static const int keys[] = {KEY_DOWN, KEY_UP, KEY_NPAGE, KEY_PPAGE, KEY_HOME, KEY_END, 'j', 'k', 27, 'x'};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        view_key(&m, '?');
        CHECK_INT(view_key(&m, keys[i]), VIEW_ACT_NONE);
        CHECK_MSG(!m.help_open, "key %d left the help open", keys[i]);
    }
    CHECK_INT(m.sel_layer, 0); /* and acted on nothing behind it */
    CHECK_INT(m.cursor, 2);
    view_free(&m);
}

/* The line of text in `doc` that starts with `start` and the indented lines
 * that continue it (a Markdown bullet), in a static buffer. */
static const char *bullet(const char *doc, const char *start) {
    static char buf[2048];
    const char *p = strstr(doc, start);
    buf[0] = '\0';
    if (!p) return buf;
    const char *q = p;
    while ((q = strchr(q, '\n')) && q[1] == ' ' && q[2] == ' ') q++;
    size_t n = q ? (size_t)(q - p) : strlen(p);
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* README.md's tour names the keys as the key table binds them: the step
 * bullet names only step keys before "steps", and the `m` bullet names
 * every metric the cycle shows, by its short name. */
TEST(views_readme_tour_keys_match_the_key_table) {
    char *doc = test_read_file("README.md", NULL);
    CHECK_MSG(doc != NULL, "README.md not readable from the working directory");
    if (!doc) return;
    const char *b = bullet(doc, "- space ");
    const char *steps = strstr(b, " steps");
    CHECK_MSG(steps != NULL, "no step bullet: %s", b);
    for (const char *p = b; steps && p < steps; p++)
        if (*p == '`' && p[2] == '`') CHECK_MSG(view_key_command(p[1]) == VIEW_OP_STEP, "`%c` does not step", p[1]);
    b = bullet(doc, "- `m` cycles");
    for (int k = 0; k < VIEW_METRIC_COUNT; k++) {
        if (!view_metric_cycles((ViewMetric)k)) continue;
        char want[64];
        snprintf(want, sizeof want, "`%s`", view_metric_short((ViewMetric)k));
        CHECK_MSG(strstr(b, want) != NULL, "the tour's m bullet omits %s: %s", want, b);
    }
    free(doc);
}

/* The `a` help line names the predictors `a` steps through (QAdA's variants by
 * their suffix: bulk for qada_bulk), in its order, no more and no fewer. */
TEST(views_keys_agreement_help_names_its_cycle) {
    ViewModel m;
    model(&m, 2, 2, 3);
    const char *help = NULL;
    for (int i = 0; view_help_line(i); i++)
        if (view_help_line(i)->label && !strcmp(view_help_line(i)->label, "a")) help = view_help_line(i)->help;
    CHECK_MSG(help != NULL, "no help line for a");
    char want[256] = "agreement vs oracle: ";
    m.agree_pred = VIEW_PRED_GATE;
    view_key(&m, 'a'); /* the first press shows the one chosen (gate here) */
    for (int k = 0; k < VIEW_PRED_COUNT; k++) {
        if (k) strcat(want, "/");
        const char *name = view_pred_name(m.agree_pred); /* QAdA's variants by their suffix */
        strcat(want, strncmp(name, "qada_", 5) ? name : name + 5);
        view_key(&m, 'a');
    }
    CHECK_INT(m.agree_pred, VIEW_PRED_GATE);
    CHECK_MSG(help && !strcmp(help, want), "help \"%s\", cycle \"%s\"", help ? help : "", want);
    view_free(&m);
}

/* Half-block timeline lines hold two heads: a second click on a line picks
 * its lower (odd) head, and the line's label then names that head. */
TEST(views_mouse_timeline_odd_heads_are_clicked_and_named) {
    ViewModel m;
    model(&m, 5, 8, 300);
    m.colour = VIEW_COLOUR_256;
    LayoutOpts o = view_layout_opts(&m);
    Layout l;
    view_layout(100, 30, &o, &l);
    const ViewRect *tl = &l.pane[VIEW_PANE_TIMELINE];
    ViewTimeGeom g;
    view_time_geom(&m, tl->w, tl->h, o.half_blocks, &g);
    CHECK_MSG(g.half, "the timeline at 100x30 draws half blocks");
    int x = tl->x + g.x0 + 2, y = tl->y + g.y0 + 1; /* the second line: rows first_row + 2, + 3 */
    int top = g.first_row + 2;
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK);
    CHECK_INT(m.sel_layer * 8 + m.sel_head, top);
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK);
    CHECK_INT(m.sel_layer * 8 + m.sel_head, top + 1);
    CHECK_INT(m.sel_head % 2, 1);
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK); /* and back to the top one */
    CHECK_INT(m.sel_layer * 8 + m.sel_head, top);
    view_mouse(&m, &l, x, y, VIEW_MOUSE_CLICK);
    FxTerm term;
    if (fx_term_open(&term, "xterm-256color", 100, 30) == 0 && term.scr) {
        ViewPalette pal;
        view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
        WINDOW *w = newwin(tl->h, tl->w, 0, 0);
        view_draw_timeline(w, &m, &pal);
        char want[16];
        snprintf(want, sizeof want, "L%dH%d", (top + 1) / 8, (top + 1) % 8);
        const char *line = fx_line(w, g.y0 + 1);
        CHECK_MSG(strstr(line, want), "line holding %s reads \"%s\"", want, line);
        delwin(w);
        fx_term_close(&term);
    }
    view_free(&m);
}
