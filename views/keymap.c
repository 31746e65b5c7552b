/* keymap.c — the TUI's one key table (see keymap.h). */
#include <stdio.h>
#include <string.h>

#include "views/keymap.h"
#include "views/tui.h"

#define K(...) {__VA_ARGS__}
#define SECTION(text) {NULL, text, {0}, {0}, {NULL}, {{0}}}
#define NOTE(label, text) {label, text, {0}, {0}, {NULL}, {{0}}}
/* The words of the predictor rows marked ours (engine/predictors.h). */
#define KEYMAP_OURS(ID, word, field, title, brief, spark, thr, policy, dec, ours) PRED_IF(ours, " " word)

static const ViewBinding BINDINGS[] = {
    SECTION("stepping"),
    {"spc", "step one token (replays history when behind)", K(' '), K(VIEW_OP_STEP), K("step"), {{0}}},
    {"p  + -", "play / pause, play speed", K('p', '+', '=', '-'),
     K(VIEW_ACT_PLAY_TOGGLE, VIEW_ACT_SPEED_UP, VIEW_ACT_SPEED_UP, VIEW_ACT_SPEED_DOWN), K("play"), {{0}}},
    {"[ ] Home End", "move the token cursor through history", K('[', ']', KEY_HOME, KEY_END),
     K(VIEW_OP_CURSOR_PREV, VIEW_OP_CURSOR_NEXT, VIEW_OP_CURSOR_FIRST, VIEW_OP_CURSOR_LAST), K(NULL, NULL), {{0}}},
    {"PgUp PgDn", "cursor 10 tokens or a bin (SQL pane: a page)", K(KEY_PPAGE, KEY_NPAGE),
     K(VIEW_OP_PAGE_UP, VIEW_OP_PAGE_DOWN), K(NULL), {{0}}},
    {"> <", "next missed / needless global (compared predictor)", K('>', '<'),
     K(VIEW_OP_NEXT_MISSED, VIEW_OP_NEXT_NEEDLESS), K("missed", "needless"), {{0}}},
    {"f { } F ^", "first, prev, next global; F: needed; ^: first need", K('f', '{', '}', 'F'),
     K(VIEW_OP_FIRST_GLOBAL, VIEW_OP_PREV_GLOBAL, VIEW_OP_NEXT_GLOBAL, VIEW_OP_NEXT_NEEDED),
     K("first global", NULL, "next global", "needed"), {{0}}},
    {"", "", K('^'), K(VIEW_OP_FIRST_NEEDED), K("first need"), {{0}}},
    SECTION("selection and view"),
    {"arrows hjkl", "move the head selection (focused pane)", K(KEY_LEFT, KEY_RIGHT, KEY_UP, KEY_DOWN),
     K(VIEW_OP_LEFT, VIEW_OP_RIGHT, VIEW_OP_UP, VIEW_OP_DOWN), K(NULL), {{0}}},
    {"", "", K('h', 'l', 'k', 'j'), K(VIEW_OP_LEFT, VIEW_OP_RIGHT, VIEW_OP_UP, VIEW_OP_DOWN), K(NULL), {{0}}},
    {"Tab S-Tab", "move focus between panes", K(VIEW_KEY_TAB, KEY_BTAB), K(VIEW_OP_FOCUS_NEXT, VIEW_OP_FOCUS_PREV),
     K("focus"), {{0}}},
    {"Enter", "open / close the head inspector", K('\n', '\r', KEY_ENTER),
     K(VIEW_OP_INSPECT, VIEW_OP_INSPECT, VIEW_OP_INSPECT), K("inspect"), {{0}}},
    {"m M", "next / previous metric", K('m', 'M'), K(VIEW_OP_METRIC_NEXT, VIEW_OP_METRIC_PREV), K("metric"), {{0}}},
    {"a", "agreement vs oracle: gate/AHA/QAdA/bulk/rem/rem_bulk", K('a'), K(VIEW_OP_AGREE_NEXT), K(NULL), {{0}}},
    {"g  L", "tint by share global; timeline per layer", K('g', 'L'), K(VIEW_OP_TINT, VIEW_OP_TIMELINE_LAYERS),
     K(NULL, NULL), {{0}}},
    {"/  n N", "search the tokens' text; next / previous match", K('/', 'n', 'N'),
     K(VIEW_OP_SEARCH, VIEW_OP_SEARCH_NEXT, VIEW_OP_SEARCH_PREV), K("find", "next match", "previous match"), {{0}}},
    {"G  A", "go to L15 H31, 15.31, pos N or text; pattern (+ - zoom)", K('G', 'A'),
     K(VIEW_ACT_GOTO, VIEW_ACT_PATTERN), K("go to", "pattern"), .bar = {{0}, {4, "pattern"}}},
    NOTE("mouse", "click a head or token; wheel scrolls"),
    {"H", "heads by a run rate (1-5 sort) or marks' weight (6-8)", K('H'), K(VIEW_ACT_HEADS), K("heads"),
     .bar = {{2, "heads"}}},
    {"( ) * |", "span start / end; * needle/question/gen; | clear", K('(', ')', '*', '|'),
     K(VIEW_OP_SPAN_START, VIEW_OP_SPAN_END, VIEW_OP_SPAN_PRESET, VIEW_OP_SPAN_CLEAR), K(NULL), {{0}}},
    {"x  X", "pin the selected head (again: unpin); X: flips vs parent", K('x', 'X'), K(VIEW_OP_PIN, VIEW_OP_FLIPS),
     K("pin", "flips"), .bar = {{0}, {11, "flips"}}},
    SECTION("settings (re-run teacher-forced as a linked run)"),
    {"P", "policy picker (P again: next, Enter: run it)", K('P'), K(VIEW_ACT_CHANGE_POLICY), K("policy"), {{0}}},
    {"w W  t T", "window, tau: lower / raise", K('w', 'W', 't', 'T'),
     K(VIEW_ACT_WINDOW_DOWN, VIEW_ACT_WINDOW_UP, VIEW_ACT_TAU_DOWN, VIEW_ACT_TAU_UP), K(NULL), {{0}}},
    {"o O", "theta (oracle and QAdA): lower / raise", K('o', 'O'), K(VIEW_ACT_THETA_DOWN, VIEW_ACT_THETA_UP),
     K(NULL), {{0}}},
    {"z", "type: tau 0.4, theta 0.9 or -2.2 log-odds, window 64", K('z'), K(VIEW_ACT_TYPE_SETTING),
     K("set"), {{0}}},
    {"!", "ablate: force the head the other way from the cursor on", K('!'), K(VIEW_ACT_ABLATE), K("ablate"), {{0}}},
    SECTION("other"),
    {"e  :  s", "edit prompt, read-only SQL, export run", K('e', ':', 's'),
     K(VIEW_ACT_EDIT_PROMPT, VIEW_ACT_SQL_PROMPT, VIEW_ACT_EXPORT), K(NULL, "sql"), .bar = {{0}, {10, "SQL"}}},
    /* two notes a line, so that at 120x40 the help still shows every line */
    NOTE("Esc  C-c", "stop a running : query; SQL pane: hl \xe2\x86\x90\xe2\x86\x92 sideways"),
    {"v  R  D  B", "plots; run summary; diff vs parent; runs", K('v', 'R', 'D', 'B'),
     K(VIEW_ACT_PLOTS, VIEW_ACT_SUMMARY, VIEW_ACT_DIFF, VIEW_ACT_RUNS), K(NULL),
     .bar = {{6, "plots"}, {7, "summary"}, {8, "diff"}, {9, "runs"}}},
    {"d", "distributions: score vs oracle (a: all heads)", K('d'), K(VIEW_ACT_DIST), K("dist"),
     .bar = {{5, "dist"}}},
    {"?  C-l", "this help; redraw the screen", K('?', VIEW_KEY_CTRL_L), K(VIEW_OP_HELP, VIEW_ACT_REDRAW), K("help"),
     .bar = {{1, "help"}}},
    {"Esc  q", "close the top pane (one per press); q quits if none", K(VIEW_KEY_ESC, 'q'),
     K(VIEW_OP_CLOSE, VIEW_ACT_QUIT), K("close", "quit"), .bar = {{0}, {13, "quit"}}},
    NOTE("ours", "this project's:" PREDICTORS(KEYMAP_OURS)),
    {"c", "rates by token type: prompt, words, numbers, pieces", K('c'), K(VIEW_ACT_TOKEN_STATS), K("types"),
     .bar = {{12, "types"}}},
    {"b C ' \"", "bookmark the cursor, C its note; next / previous", K('b', 'C', '\'', '"'),
     K(VIEW_ACT_BOOKMARK, VIEW_ACT_NOTE, VIEW_OP_BOOKMARK_NEXT, VIEW_OP_BOOKMARK_PREV), K(NULL), {{0}}},
    {"y Y S", "yank text, CSV (H A R: whole table); S: H/A files", K('y', 'Y', 'S'),
     K(VIEW_ACT_YANK, VIEW_ACT_YANK_CSV, VIEW_ACT_KEEP_FILES), K("yank", "yank csv", "save table"), {{0}}},
    {"E", "every head at the cursor, a row each (Enter selects)", K('E'), K(VIEW_OP_ALLHEADS), K("every head"),
     .bar = {{3, "every head"}}},
    {"&", "path to the needle: answer > j > needle, per head", K('&'), K(VIEW_ACT_PATHS), K("paths"), {{0}}},
    NOTE("needle", "weight on the needle: m's last metric; H 6-8"),
    /* The editor answers these itself (view_input_key): help lines only. */
    SECTION("the line editor (e prompt, : SQL, / search, G go-to, z, B run)"),
    NOTE("\xe2\x86\x90 \xe2\x86\x92", "move the cursor by a character"),
    NOTE("Home End", "to the start / end of the line (also C-a / C-e)"),
    NOTE("Bksp  Del", "remove the character before / under the cursor"),
    NOTE("C-u", "clear the line"),
    NOTE("\xe2\x86\x91 \xe2\x86\x93", "earlier lines of the same kind: older / newer"),
    NOTE("Enter  Esc", "run the prompt, query, search or run id; cancel"),
    NOTE("Tab", "in B's line: compare with that run (D, X, par)"),
};

#undef K
#undef SECTION
#undef NOTE

const ViewBinding *view_bindings(int *n) {
    *n = (int)(sizeof BINDINGS / sizeof BINDINGS[0]);
    return BINDINGS;
}

/* A row that only adds keys to the row above (empty label and help) has no
 * help line of its own. */
static int has_help_line(const ViewBinding *b) { return !b->label || b->label[0] || b->help[0]; }

int view_help_count(void) {
    int n = 0;
    for (size_t r = 0; r < sizeof BINDINGS / sizeof BINDINGS[0]; r++) n += has_help_line(&BINDINGS[r]);
    return n;
}

const ViewBinding *view_help_line(int i) {
    for (size_t r = 0; r < sizeof BINDINGS / sizeof BINDINGS[0] && i >= 0; r++)
        if (has_help_line(&BINDINGS[r]) && i-- == 0) return &BINDINGS[r];
    return NULL;
}

/* Find the row and slot binding key ch (or, with ch 0, command cmd). */
static int find(int ch, int cmd, int *row, int *slot) {
    int n = (int)(sizeof BINDINGS / sizeof BINDINGS[0]);
    for (int r = 0; r < n; r++)
        for (int s = 0; s < VIEW_KEYS_PER_ROW && BINDINGS[r].key[s]; s++)
            if (ch ? BINDINGS[r].key[s] == ch : BINDINGS[r].cmd[s] == cmd) {
                *row = r;
                *slot = s;
                return 1;
            }
    return 0;
}

int view_key_command(int ch) {
    int r, s;
    return ch && find(ch, 0, &r, &s) ? BINDINGS[r].cmd[s] : VIEW_ACT_NONE;
}

int view_command_key(int cmd) {
    int r, s;
    return find(0, cmd, &r, &s) ? BINDINGS[r].key[s] : 0;
}

const char *view_command_hint(int cmd) {
    int r, s;
    return find(0, cmd, &r, &s) ? BINDINGS[r].hint[s] : NULL;
}

/* The slot holding place `at` on the key bar, or NULL past the last one. */
static const ViewBinding *bar_slot(int at, int *slot) {
    for (size_t r = 0; r < sizeof BINDINGS / sizeof BINDINGS[0]; r++)
        for (int s = 0; s < VIEW_KEYS_PER_ROW; s++)
            if (BINDINGS[r].key[s] && BINDINGS[r].bar[s].at == at) {
                *slot = s;
                return &BINDINGS[r];
            }
    return NULL;
}

int view_keybar_fit(int width, ViewBarEntry out[VIEW_KEYBAR_MAX]) {
    int n = 0, x = 1, s;
    char name[8];
    for (const ViewBinding *b; n < VIEW_KEYBAR_MAX && (b = bar_slot(n + 1, &s)); n++) {
        int need = (int)(strlen(view_key_name(b->key[s], name)) + 1 + strlen(b->bar[s].word));
        if (x + need > width - 1) break; /* a column spare at the right edge, as on the status line */
        out[n] = (ViewBarEntry){b->key[s], b->bar[s].word, x};
        x += need + 2;
    }
    return n;
}

const char *view_key_name(int ch, char buf[8]) {
    switch (ch) {
    case ' ': return "spc";
    case '\n': case '\r': case KEY_ENTER: return "Enter";
    case VIEW_KEY_TAB: return "Tab";
    case KEY_BTAB: return "S-Tab";
    case VIEW_KEY_ESC: return "Esc";
    case VIEW_KEY_CTRL_L: return "C-l";
    case KEY_HOME: return "Home";
    case KEY_END: return "End";
    case KEY_PPAGE: return "PgUp";
    case KEY_NPAGE: return "PgDn";
    case KEY_LEFT: return "\xe2\x86\x90";
    case KEY_RIGHT: return "\xe2\x86\x92";
    case KEY_UP: return "\xe2\x86\x91";
    case KEY_DOWN: return "\xe2\x86\x93";
    default: break;
    }
    if (ch > ' ' && ch < VIEW_KEY_DEL) snprintf(buf, 8, "%c", ch);
    else snprintf(buf, 8, "#%d", ch & 0xffff);
    return buf;
}
