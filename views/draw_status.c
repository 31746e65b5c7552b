/* draw_status.c — the status line and the too-small message (see draw.h). */
#include <stdio.h>
#include <string.h>

#include "views/draw.h"
#include "views/geom.h"
#include "views/heads.h"
#include "views/keymap.h"
#include "views/paint.h"

/* Keys worth showing now, as "key label" pairs, most specific first. Keys
 * and words come from the key table (keymap.h); only the arrows, whose
 * meaning follows the focused pane or the open help, the keys that close
 * the help, and play/pause are worded here. */
/* The sorted heads' column keys as their pane's own line gives them: the
 * rates, and the weights on the marks when there are marks (views/heads.h). */
static const char *sort_keys(const ViewModel *m) {
    static const char *const keys[] = {"1 \xe2\x86\x90\xe2\x86\x92", "1-2 \xe2\x86\x90\xe2\x86\x92",
                                       "1-3 \xe2\x86\x90\xe2\x86\x92", "1-4 \xe2\x86\x90\xe2\x86\x92",
                                       "1-5 \xe2\x86\x90\xe2\x86\x92", "1-6 \xe2\x86\x90\xe2\x86\x92",
                                       "1-7 \xe2\x86\x90\xe2\x86\x92", "1-8 \xe2\x86\x90\xe2\x86\x92",
                                       "1-9 \xe2\x86\x90\xe2\x86\x92"};
    int n = view_heads_sorts(m);
    return keys[n < 1 ? 0 : n > 9 ? 8 : n - 1];
}

static int hints(const ViewModel *m, const char **out, int max, char names[][8]) {
    int n = 0, k = 0;
#define HINT(key, label) \
    do { if (n + 2 <= max && (label)) { out[n++] = (key); out[n++] = (label); } } while (0)
#define HINT_CMD(cmd) HINT(view_key_name(view_command_key(cmd), names[k++]), view_command_hint(cmd))
    if (m->help_open) { /* it covers the panes: a key scrolls it or closes it */
        int scrolls = view_help_scrolls(m);
        if (scrolls) HINT("\xe2\x86\x91\xe2\x86\x93 PgUp PgDn", "scroll the help");
        HINT(scrolls ? "other keys" : "any key", scrolls ? "close it" : "closes it");
        return n;
    }
    if (m->heads) { /* the sorted heads take the arrows and Enter while they are open */
        HINT("\xe2\x86\x91\xe2\x86\x93", "row");
        HINT(sort_keys(m), "sort");
        HINT("r", "reverse");
        HINT("Enter", "select");
        HINT("Esc q", "close");
        HINT_CMD(VIEW_OP_STEP);
        HINT_CMD(VIEW_ACT_YANK); /* the whole table kept (views/keep.h): last, a narrow line keeps the keys above */
        HINT_CMD(VIEW_ACT_YANK_CSV);
        HINT_CMD(VIEW_ACT_KEEP_FILES);
        return n;
    }
    if (m->pick.open) { /* it holds the keyboard until it closes */
        HINT("\xe2\x86\x91\xe2\x86\x93", "move");
        HINT("Enter", "choose");
        HINT("Esc q", "cancel");
        return n;
    }
    switch (m->focus) {
    case VIEW_PANE_SQL:
        HINT("\xe2\x86\x91\xe2\x86\x93 PgDn", "scroll");
        if (m->sql_width > m->sql_cols && m->sql_cols > 0) HINT("\xe2\x86\x90\xe2\x86\x92", "sideways");
        HINT_CMD(VIEW_OP_CLOSE);
        HINT_CMD(VIEW_ACT_YANK);
        break;
    case VIEW_PANE_TIMELINE: HINT("\xe2\x86\x90\xe2\x86\x92", "token"); HINT("\xe2\x86\x91\xe2\x86\x93", "head"); break;
    case VIEW_PANE_TOKENS: HINT("\xe2\x86\x90\xe2\x86\x92", "token"); HINT("\xe2\x86\x91\xe2\x86\x93", "layer"); break;
    default: HINT("arrows", "head"); HINT("[ ]", "token"); break;
    }
    HINT_CMD(VIEW_OP_STEP); /* in a replay, through the recording */
    HINT(view_key_name(view_command_key(VIEW_ACT_PLAY_TOGGLE), names[k++]), m->playing ? "pause" : "play");
    HINT_CMD(VIEW_OP_METRIC_NEXT);
    HINT_CMD(VIEW_OP_HELP);
    /* over a pane q closes it: it quits the main screen only */
    HINT(view_key_name(view_command_key(VIEW_ACT_QUIT), names[k++]), view_overlay_open(m) ? "close" : "quit");
    if (m->inspector_open) HINT("Esc", "close inspector");
    else HINT_CMD(VIEW_OP_INSPECT);
    if (m->metric == VIEW_METRIC_AGREE) {
        HINT_CMD(VIEW_OP_NEXT_MISSED);
        HINT_CMD(VIEW_OP_NEXT_NEEDLESS);
    }
    if (m->inspector_open) { /* the selected head through time, and beside another */
        HINT_CMD(VIEW_OP_FIRST_GLOBAL);
        HINT_CMD(VIEW_OP_NEXT_GLOBAL);
        HINT_CMD(VIEW_OP_NEXT_NEEDED);
        HINT_CMD(VIEW_OP_PIN);
    }
    HINT_CMD(VIEW_OP_FOCUS_NEXT);
    HINT_CMD(VIEW_ACT_SQL_PROMPT);
    HINT_CMD(VIEW_OP_SEARCH);
    if (m->inspector_open) HINT_CMD(VIEW_ACT_YANK); /* last: a narrow line keeps the keys above */
#undef HINT_CMD
#undef HINT
    return n;
}

/* The editor: its label, then the part of the line around the cursor
 * (view_input_geom), the cursor's character reversed or a bar past the
 * end, and … (ASCII < >) at an edge where more of the line is hidden. */
static void draw_input(WINDOW *w, const ViewModel *m, const ViewPalette *p, int x, int limit) {
    attr_t sa, ka;
    short sp, kp;
    view_text_style(p, VIEW_TX_STATUS, &sa, &sp);
    view_text_style(p, VIEW_TX_KEY, &ka, &kp);
    x += view_printf(w, 0, x, limit - x, p->ascii, ka, kp, "%s: ", m->input.label);
    ViewInputGeom g;
    view_input_geom(m, limit - x, p->ascii, &g);
    const char *t = m->input.text;
    int col = x + g.text_x, cw;
    for (size_t at = g.from; at < g.to; at = view_utf8_next(t, m->input.len, at)) {
        const char *s = t + at;
        wchar_t wc = view_next_glyph(&s, p->ascii, &cw);
        if (cw == 0) continue; /* a combining mark would need the cell before */
        view_put(w, 0, col, wc, at == m->input.cur ? sa | A_REVERSE : sa, sp);
        col += cw;
    }
    if (g.more_left) view_put(w, 0, x, p->ascii ? L'<' : L'\u2026', sa | A_DIM, sp);
    if (g.more_right) view_put(w, 0, limit - 1, p->ascii ? L'>' : L'\u2026', sa | A_DIM, sp);
    if (m->input.cur >= m->input.len) view_put(w, 0, x + g.cursor_x, p->ascii ? L'_' : L'\u258f', sa | A_BLINK, sp);
}

/* Why the editor's last byte was not added, where the play state goes. */
static int refusal(const ViewModel *m, const ViewPalette *p, char *buf, size_t n) {
    if (m->input.refused == 1) snprintf(buf, n, "not added: a line holds %zu MiB at most ", VIEW_INPUT_MAX >> 20);
    else snprintf(buf, n, "not added: out of memory ");
    return view_text_width(buf, p->ascii);
}

static int play_state(const ViewModel *m, const ViewPalette *p, char *buf, size_t n) {
    const char *play = p->ascii ? ">" : "\xe2\x96\xb6";
    if (m->playing && m->speed > 0) snprintf(buf, n, "%s playing %g/s ", play, m->speed);
    else if (m->playing) snprintf(buf, n, "%s playing at full speed ", play);
    else snprintf(buf, n, "paused ");
    return view_text_width(buf, p->ascii);
}

void view_draw_status(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    (void)h;
    attr_t sa, ka, ma;
    short sp, kp, mp;
    view_text_style(p, VIEW_TX_STATUS, &sa, &sp);
    view_text_style(p, VIEW_TX_KEY, &ka, &kp);
    view_text_style(p, VIEW_TX_MSG, &ma, &mp);
    view_fill(w, 0, 0, wd, L' ', sa, sp);
    char right[64];
    int refused = m->input.active && m->input.refused;
    int rw = refused ? refusal(m, p, right, sizeof right) : play_state(m, p, right, sizeof right);
    int limit = wd - rw - 1;
    int x = 1;
    if (m->input.active) {
        draw_input(w, m, p, x, limit);
    } else if (m->status[0] || m->progress[0]) { /* what a key said goes over a job's progress */
        x += view_puts_fit(w, 0, x, limit - x, m->status[0] ? m->status : m->progress, p->ascii, ma, mp);
    } else {
        const char *hs[32];
        char names[24][8]; /* one per HINT_CMD below, at most 18 */
        int n = hints(m, hs, 32, names);
        for (int i = 0; i + 1 < n; i += 2) {
            int need = view_text_width(hs[i], p->ascii) + view_text_width(hs[i + 1], p->ascii) + 3;
            if (x + need > limit) break;
            x += view_puts(w, 0, x, limit - x, hs[i], p->ascii, ka, kp);
            x += view_printf(w, 0, x, limit - x, p->ascii, sa, sp, " %s  ", hs[i + 1]);
        }
    }
    if (rw < wd) view_puts(w, 0, wd - rw, rw, right, p->ascii, refused ? ma : sa | A_BOLD, refused ? mp : sp);
}

void view_draw_too_small(WINDOW *w, const ViewPalette *p, int cols, int rows) {
    int h, wd;
    getmaxyx(w, h, wd);
    (void)h;
    char msg[96];
    snprintf(msg, sizeof msg, "enlarge to %d\xc3\x97%d (now %d\xc3\x97%d)", VIEW_MIN_COLS, VIEW_MIN_ROWS, cols,
             rows);
    int mw = view_text_width(msg, p->ascii);
    int x = mw < wd ? (wd - mw) / 2 : 0;
    view_puts(w, 0, x, wd - x, msg, p->ascii, A_BOLD, 0);
}
