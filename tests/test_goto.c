/* test_goto.c — the go-to parser and the move it makes on a view model.
 *
 * The go-to parser (valid forms, out of range, garbage) and
 * the move it makes on a view model: a head, a position, a token's text
 * across token boundaries and case; a refusal moves nothing. */
#include <string.h>

#include "app/tui/goto.h"
#include "tests/test.h"
#include "tests/views_fixture.h"

TEST(goto_parses_heads_positions_and_text) {
    static const struct { const char *in; int l, h; } heads[] = {
        {"L15 H31", 15, 31}, {"l15 h31", 15, 31}, {"L15H31", 15, 31}, {" L15, H31 ", 15, 31},
        {"15.31", 15, 31},   {"0.0", 0, 0},       {"L0 H7", 0, 7},
    };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        TuiGoto g = tui_goto_parse(heads[i].in, 16, 32, 2000);
        CHECK_MSG(g.kind == TUI_GOTO_HEAD && g.layer == heads[i].l && g.head == heads[i].h, "\"%s\": kind %d L%d H%d",
                  heads[i].in, g.kind, g.layer, g.head);
    }
    static const struct { const char *in; int pos; } pos[] = {{"pos 1200", 1200}, {"POS 0", 0}, {"pos1999", 1999}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
        TuiGoto g = tui_goto_parse(pos[i].in, 16, 32, 2000);
        CHECK_MSG(g.kind == TUI_GOTO_POS && g.pos == pos[i].pos, "\"%s\": kind %d pos %d", pos[i].in, g.kind, g.pos);
    }
    static const char *text[] = {"Lily", " toys", "1200", "position", "hello world"};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        CHECK_MSG(tui_goto_parse(text[i], 16, 32, 2000).kind == TUI_GOTO_TEXT, "\"%s\" is text", text[i]);
}

TEST(goto_refuses_out_of_range_and_garbage_saying_why) {
    static const struct { const char *in, *why; } bad[] = {
        {"L16 H0", "no head L16 H0 (the model has L0-L15, H0-H31)"},
        {"15.32", "no head L15 H32"},
        {"L99999999999 H1", "no head L2147483647 H1"},
        {"pos 2000", "no pos 2000 (positions 0-1999)"},
        {"pos 99999999999999", "no pos 2147483647"},
        {"pos x", "is not a position"},
        {"pos 12 13", "is not a position"},
        {"L15", "is not a head"},
        {"L15 H", "is not a head"},
        {"L15 Hx", "is not a head"},
        {"15.", "is not a head"},
        {"15.x", "is not a head"},
        {"", "type L15 H31, 15.31, pos 1200"},
        {"   ", "type L15 H31"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TuiGoto g = tui_goto_parse(bad[i].in, 16, 32, 2000);
        CHECK_MSG(g.kind == TUI_GOTO_BAD && strstr(g.why, bad[i].why) && !strchr(g.why, '\n'),
                  "\"%s\": kind %d \"%s\"", bad[i].in, g.kind, g.why);
    }
    CHECK(strstr(tui_goto_parse("pos 0", 16, 32, 0).why, "no positions yet"));
}

TEST(goto_moves_selection_cursor_or_nothing) {
    ViewModel m;
    CHECK_INT(view_init(&m, 4, 8, NULL), 0);
    fx_fill(&m, 24); /* "Once upon a time, there was\n" three times */
    m.cursor = 2, m.follow = 1;
    CHECK(tui_goto_apply(&m, "L3 H7"));
    CHECK_INT(m.sel_layer, 3);
    CHECK_INT(m.sel_head, 7);
    CHECK_MSG(!strcmp(m.status, "L3 H7"), "%s", m.status);
    CHECK(tui_goto_apply(&m, "pos 12"));
    CHECK_INT(m.cursor, 12);
    CHECK_INT(m.follow, 0);
    /* text: forward from the cursor, case-insensitive, across tokens, wrapping */
    CHECK(tui_goto_apply(&m, "UPON A"));
    CHECK_INT(m.cursor, 17);
    CHECK(tui_goto_apply(&m, "e, th"));  /* " time" "," " there": begins inside " time" */
    CHECK_INT(m.cursor, 19);
    CHECK_INT(tui_goto_find_text(&m, "once upon", 3), 8);
    CHECK_INT(tui_goto_find_text(&m, "once upon", 17), 0); /* wraps round */
    CHECK_INT(tui_goto_find_text(&m, "was\nonce", 0), 6);
    CHECK_INT(tui_goto_find_text(&m, "nowhere", 3), -1);
    CHECK_INT(tui_goto_find_text(&m, "", 3), -1);
    /* refusals move nothing and say why */
    int cur = m.cursor;
    CHECK(!tui_goto_apply(&m, "L4 H0"));
    CHECK(!tui_goto_apply(&m, "pos 24"));
    CHECK_MSG(strstr(m.status, "no pos 24"), "%s", m.status);
    CHECK(!tui_goto_apply(&m, "zebra"));
    CHECK_MSG(strstr(m.status, "zebra"), "%s", m.status);
    CHECK_INT(m.cursor, cur);
    CHECK_INT(m.sel_layer, 3);
    CHECK_INT(m.sel_head, 7);
    view_free(&m);
}

/* A head and a position at once name one decision: both move, and the
 * inspector opens on it, so "why did it go global there" is one go-to. */
TEST(goto_head_at_a_position_opens_the_inspector) {
    static const struct { const char *in; int l, h, pos; } ok[] = {
        {"L15 H31 pos 1200", 15, 31, 1200}, {"15.31 pos 7", 15, 31, 7}, {"l0h1 POS0", 0, 1, 0}, {"L2,H3  pos  12 ", 2, 3, 12}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        TuiGoto g = tui_goto_parse(ok[i].in, 16, 32, 2000);
        CHECK_MSG(g.kind == TUI_GOTO_HEAD && g.layer == ok[i].l && g.head == ok[i].h && g.pos == ok[i].pos,
                  "\"%s\": kind %d L%d H%d pos %d", ok[i].in, g.kind, g.layer, g.head, g.pos);
    }
    CHECK_INT(tui_goto_parse("L15 H31", 16, 32, 2000).pos, -1);
    static const struct { const char *in, *why; } bad[] = {
        {"L15 H31 pos 2000", "no pos 2000"}, {"L15 H31 pos", "is not a position"}, {"L15 H31 pos x", "is not a position"},
        {"L16 H0 pos 3", "no head L16 H0"}, {"L15 H31 junk", "is not a head"}, {"15.31 junk", "is not a head"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TuiGoto g = tui_goto_parse(bad[i].in, 16, 32, 2000);
        CHECK_MSG(g.kind == TUI_GOTO_BAD && strstr(g.why, bad[i].why), "\"%s\": kind %d \"%s\"", bad[i].in, g.kind,
                  g.why);
    }
    ViewModel m;
    CHECK_INT(view_init(&m, 4, 8, NULL), 0);
    fx_fill(&m, 24);
    m.cursor = 23, m.follow = 1, m.focus = VIEW_PANE_BARS;
    CHECK(tui_goto_apply(&m, "L3 H5 pos 9"));
    CHECK(m.sel_layer == 3 && m.sel_head == 5 && m.cursor == 9 && !m.follow);
    CHECK_INT(m.inspector_open, 1);
    CHECK_INT(m.focus, VIEW_PANE_INSPECTOR); /* the bars it replaces cannot keep the focus */
    CHECK_MSG(!strcmp(m.status, "L3 H5 @ pos 9"), "%s", m.status);
    m.focus = VIEW_PANE_SQL;
    CHECK(tui_goto_apply(&m, "1.2 pos 4"));
    CHECK(m.inspector_open && m.cursor == 4 && m.focus == VIEW_PANE_SQL); /* an open text pane keeps its keys */
    CHECK(!tui_goto_apply(&m, "L0 H0 pos 24")); /* refused: nothing moves */
    CHECK(m.sel_layer == 1 && m.sel_head == 2 && m.cursor == 4);
    view_free(&m);
}

TEST(goto_reads_the_head_a_text_pane_row_names) {
    int l, h, p;
    /* a table: its columns by name, wherever they stand */
    CHECK(tui_goto_row("run_id  pos  layer  head  gate", "     1   12      3     5     1", &l, &h, &p));
    CHECK(l == 3 && h == 5 && p == 12);
    CHECK(tui_goto_row("layer head n tp", "    2    7 29 12", &l, &h, &p));
    CHECK(l == 2 && h == 7 && p == -1);
    /* text rows: the plots' and a diff's */
    CHECK(tui_goto_row(NULL, "L10 H3  |####++++   |  40.8%  oracle  49.0%", &l, &h, &p));
    CHECK(l == 10 && h == 3 && p == -1);
    CHECK(tui_goto_row("pos  token", "gate flip at pos 41: L1H6 local -> global", &l, &h, &p));
    CHECK(l == 1 && h == 6 && p == 41);
    /* no head: a header without the columns and a row without L? H? */
    CHECK(!tui_goto_row("predictor n tp", "aha 1960 431", &l, &h, &p));
    CHECK(!tui_goto_row(NULL, "Lily went to the park", &l, &h, &p));
    CHECK(!tui_goto_row(NULL, "MODEL H5", &l, &h, &p));

    /* on the model: the first row under the pinned header, in range or nothing moves */
    ViewModel m;
    CHECK_INT(view_init(&m, 4, 8, NULL), 0);
    fx_fill(&m, 24);
    const char *table = "layer  head  pos\n-----  ----  ---\n    3     5   12\n    9     1    2\n";
    CHECK_INT(view_set_sql(&m, "q", table, NULL), 0);
    CHECK(tui_goto_text_row(&m));
    CHECK(m.sel_layer == 3 && m.sel_head == 5 && m.cursor == 12);
    CHECK_MSG(strstr(m.status, "L3 H5 @ pos 12"), "%s", m.status);
    m.sql_scroll = 1; /* L9 is out of range */
    CHECK(!tui_goto_text_row(&m));
    CHECK(m.sel_layer == 3 && m.sel_head == 5 && m.cursor == 12);
    view_free(&m);
}
