/* keys.c — pure key handling (`view_key`), dispatching through the key table.
 *
 * Key and mouse handling: pure functions of the view model that
 * change view state and say what the app must do (see view.h). */
#include "views/allheads.h"
#include "views/flips.h"
#include "views/geom.h"
#include "views/keymap.h"
#include "views/metric.h"
#include "views/pin.h"
#include "views/span.h"
#include "views/tui.h"

enum { PAGE = 10, WHEEL_SQL = 3 };

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Keys move the cursor and the selection; the timeline then follows them
 * again rather than staying where a click left it. */
static void unpin_timeline(ViewModel *m) { m->time_row0 = m->time_tok0 = -1; }

static void move_cursor(ViewModel *m, int to) {
    if (m->n_hist == 0) return;
    m->cursor = clampi(to, 0, m->n_hist - 1);
    m->follow = m->cursor == m->n_hist - 1;
}

/* PgUp/PgDn's cursor step: ten positions, or a timeline bin when the
 * timeline shows bins of more (so each press moves a column). */
static int cursor_page(const ViewModel *m) { return m->time_bin > PAGE ? m->time_bin : PAGE; }

static void select_head(ViewModel *m, int layer, int head) {
    m->sel_layer = clampi(layer, 0, m->n_layers - 1);
    m->sel_head = clampi(head, 0, m->n_heads - 1);
}

/* The timeline lists heads as one sequence of (layer, head) rows. */
static void move_row(ViewModel *m, int d) {
    int rows = m->n_layers * m->n_heads;
    int r = clampi(m->sel_layer * m->n_heads + m->sel_head + d, 0, rows - 1);
    select_head(m, r / m->n_heads, r % m->n_heads);
}

/* Scroll the text pane's rows (below its pinned header). With the pane's
 * size known, the last screenful stays full; PgDn never skips a row. */
static void scroll_sql(ViewModel *m, int d) {
    int body = m->sql_lines - m->sql_pinned;
    int last = m->sql_page > 0 ? body - m->sql_page : body - 1;
    m->sql_scroll = clampi(m->sql_scroll + d, 0, last > 0 ? last : 0);
}

/* One screenful of the text pane (PgUp/PgDn). */
static int sql_page(const ViewModel *m) { return m->sql_page > 0 ? m->sql_page : PAGE; }

/* Scroll the text pane sideways, for results wider than the pane. */
static void hscroll_sql(ViewModel *m, int d) {
    int last = m->sql_cols > 0 ? m->sql_width - m->sql_cols : m->sql_width - 1;
    m->sql_hscroll = clampi(m->sql_hscroll + d * VIEW_SQL_HSTEP, 0, last > 0 ? last : 0);
}

/* A pane can take the focus when it is on screen: the SQL pane replaces the
 * timeline, and at small sizes the inspector replaces the bars. */
static int focusable(const ViewModel *m, ViewPane p) {
    switch (p) {
    case VIEW_PANE_TOKENS:
    case VIEW_PANE_HEATMAP: return 1;
    case VIEW_PANE_TIMELINE: return !m->sql_open;
    case VIEW_PANE_BARS: return !m->inspector_open;
    case VIEW_PANE_INSPECTOR: return m->inspector_open;
    case VIEW_PANE_SQL: return m->sql_open;
    default: return 0;
    }
}

static void cycle_focus(ViewModel *m, int dir) {
    static const ViewPane order[] = {VIEW_PANE_TOKENS, VIEW_PANE_HEATMAP,   VIEW_PANE_TIMELINE,
                                     VIEW_PANE_BARS,   VIEW_PANE_INSPECTOR, VIEW_PANE_SQL};
    int n = (int)(sizeof order / sizeof order[0]), at = 0;
    for (int i = 0; i < n; i++)
        if (order[i] == m->focus) at = i;
    for (int k = 1; k <= n; k++) {
        ViewPane p = order[((at + dir * k) % n + n) % n];
        if (focusable(m, p)) {
            m->focus = p;
            return;
        }
    }
}

/* Arrows and hjkl: what they move depends on the focused pane. */
static void direction(ViewModel *m, int op) {
    int dx = op == VIEW_OP_LEFT ? -1 : op == VIEW_OP_RIGHT ? 1 : 0;
    int dy = op == VIEW_OP_UP ? -1 : op == VIEW_OP_DOWN ? 1 : 0;
    switch (m->focus) {
    case VIEW_PANE_SQL:
        if (dx) hscroll_sql(m, dx);
        else scroll_sql(m, dy);
        break;
    case VIEW_PANE_TIMELINE:
        if (dx) move_cursor(m, m->cursor + dx);
        else move_row(m, dy);
        break;
    case VIEW_PANE_TOKENS:
        if (dx) move_cursor(m, m->cursor + dx);
        else select_head(m, m->sel_layer + dy, m->sel_head);
        break;
    default: select_head(m, m->sel_layer + dy, m->sel_head + dx); break;
    }
}

/* Scroll the help d lines, no further than its last screenful (the last
 * line, while its size is unknown). */
static void scroll_help(ViewModel *m, int d) {
    int n = view_help_count(), last = n - (m->help_page > 0 ? m->help_page : 1);
    m->help_scroll = clampi(m->help_scroll + d, 0, last > 0 ? last : 0);
}

/* While the help holds more lines than it shows, the keys that scroll the
 * text pane scroll it (↑↓ jk, PgUp PgDn, Home End); returns 0 for any other
 * key, which closes it, and for every key when nothing is hidden. */
static int help_scroll_key(ViewModel *m, int ch) {
    if (!view_help_scrolls(m)) return 0;
    int page = m->help_page > 0 ? m->help_page : PAGE, n = view_help_count();
    switch (view_key_command(ch)) {
    case VIEW_OP_UP: scroll_help(m, -1); return 1;
    case VIEW_OP_DOWN: scroll_help(m, 1); return 1;
    case VIEW_OP_PAGE_UP: scroll_help(m, -page); return 1;
    case VIEW_OP_PAGE_DOWN: scroll_help(m, page); return 1;
    case VIEW_OP_CURSOR_FIRST: scroll_help(m, -n); return 1;
    case VIEW_OP_CURSOR_LAST: scroll_help(m, n); return 1;
    default: return 0;
    }
}

/* Closing the text pane gives the focus back to the pane it took it from,
 * so the arrows keep the meaning they had before it opened. */
static void close_overlay(ViewModel *m) {
    if (m->sql_open) {
        m->sql_open = 0;
        if (m->focus == VIEW_PANE_SQL)
            m->focus = focusable(m, m->text_return) ? m->text_return : VIEW_PANE_HEATMAP;
    } else if (m->inspector_open) {
        m->inspector_open = 0;
        if (m->focus == VIEW_PANE_INSPECTOR) m->focus = VIEW_PANE_HEATMAP;
    }
}

static void toggle_inspector(ViewModel *m) {
    m->inspector_open = !m->inspector_open;
    if (m->inspector_open) m->focus = VIEW_PANE_INSPECTOR;
    else if (m->focus == VIEW_PANE_INSPECTOR) m->focus = VIEW_PANE_HEATMAP;
}

/* 1 if the compared predictor disagrees with the oracle at (t, cell) the
 * way `want` names (VIEW_SW_MISSED_GLOBAL or VIEW_SW_NEEDLESS_GLOBAL). */
static int disagrees(const ViewModel *m, const StepTrace *t, int cell, int want) {
    int p = view_pred_decision(m, t, cell, m->agree_pred), o = view_oracle_decision(m, t, cell);
    return p >= 0 && o >= 0 && p != o && (o ? VIEW_SW_MISSED_GLOBAL : VIEW_SW_NEEDLESS_GLOBAL) == want;
}

/* > / <: the next missed (or needless) global of the compared predictor,
 * in reading order from the cursor: later heads at the cursor's position,
 * then each later position (wrapping), the selected head first there. */
static void jump_to_disagreement(ViewModel *m, int want) {
    const char *what = want == VIEW_SW_MISSED_GLOBAL ? "missed" : "needless";
    int cells = m->n_layers * m->n_heads, sel = m->sel_layer * m->n_heads + m->sel_head;
    for (int k = 0; k <= m->n_hist && m->n_hist > 0; k++) {
        int i = (m->cursor + k) % m->n_hist;
        const StepTrace *t = view_trace(m, i);
        for (int j = -1; j < cells; j++) {
            int c = j < 0 ? sel : j;
            if ((k == 0 && c <= sel) || (j >= 0 && c == sel && k > 0) || !disagrees(m, t, c, want)) continue;
            move_cursor(m, i);
            select_head(m, c / m->n_heads, c % m->n_heads);
            m->metric = VIEW_METRIC_AGREE;
            view_set_status(m, "%s global at pos %d, L%dH%d (%s vs oracle)", what, t->pos, c / m->n_heads,
                            c % m->n_heads, view_pred_name(m->agree_pred));
            return;
        }
    }
    view_set_status(m, "no %s global of %s in the history", what, view_pred_name(m->agree_pred));
}

void view_search(ViewModel *m, const char *needle, int dir) {
    /* an empty line after a search repeats it, as n does: the last search stays */
    if (needle != m->search && needle[0]) snprintf(m->search, sizeof m->search, "%s", needle);
    if (!m->search[0]) { view_set_status(m, "no search yet: / searches the tokens"); return; }
    int i = view_find_text(m, m->search, m->cursor, dir);
    if (i < 0) { view_set_status(m, "no match for \"%s\"", m->search); return; }
    move_cursor(m, i);
    char next[8], prev[8]; /* the keys as the table binds them */
    view_set_status(m, "\"%s\" at pos %d (%s next, %s previous)", m->search, i,
                    view_key_name(view_command_key(VIEW_OP_SEARCH_NEXT), next),
                    view_key_name(view_command_key(VIEW_OP_SEARCH_PREV), prev));
}

/* Apply a command that changes only view state. */
static void apply_op(ViewModel *m, int op) {
    switch (op) {
    case VIEW_OP_CURSOR_PREV: move_cursor(m, m->cursor - 1); break;
    case VIEW_OP_CURSOR_NEXT: move_cursor(m, m->cursor + 1); break;
    case VIEW_OP_CURSOR_FIRST: /* in the text pane, as in the help: its first and last lines */
        if (m->focus == VIEW_PANE_SQL) scroll_sql(m, -m->sql_lines);
        else move_cursor(m, 0);
        break;
    case VIEW_OP_CURSOR_LAST:
        if (m->focus == VIEW_PANE_SQL) scroll_sql(m, m->sql_lines);
        else move_cursor(m, m->n_hist - 1);
        break;
    case VIEW_OP_PAGE_UP:
        if (m->focus == VIEW_PANE_SQL) scroll_sql(m, -sql_page(m));
        else move_cursor(m, m->cursor - cursor_page(m));
        break;
    case VIEW_OP_PAGE_DOWN:
        if (m->focus == VIEW_PANE_SQL) scroll_sql(m, sql_page(m));
        else move_cursor(m, m->cursor + cursor_page(m));
        break;
    case VIEW_OP_LEFT: case VIEW_OP_RIGHT: case VIEW_OP_UP: case VIEW_OP_DOWN: direction(m, op); break;
    case VIEW_OP_FOCUS_NEXT: cycle_focus(m, 1); break;
    case VIEW_OP_FOCUS_PREV: cycle_focus(m, -1); break;
    case VIEW_OP_METRIC_NEXT: m->metric = view_metric_step(m->metric, 1); break;
    case VIEW_OP_METRIC_PREV: m->metric = view_metric_step(m->metric, -1); break;
    case VIEW_OP_AGREE_NEXT: /* the first press shows the predictor already chosen */
        if (m->metric == VIEW_METRIC_AGREE || m->metric == VIEW_METRIC_RATE_AGREE)
            m->agree_pred = (ViewPredictor)((m->agree_pred + 1) % VIEW_PRED_COUNT);
        if (m->metric != VIEW_METRIC_RATE_AGREE) m->metric = VIEW_METRIC_AGREE; /* the run's rate: whose it is */
        break;
    case VIEW_OP_NEXT_MISSED: jump_to_disagreement(m, VIEW_SW_MISSED_GLOBAL); break;
    case VIEW_OP_NEXT_NEEDLESS: jump_to_disagreement(m, VIEW_SW_NEEDLESS_GLOBAL); break;
    case VIEW_OP_TINT: m->tint_share = !m->tint_share; break;
    case VIEW_OP_SEARCH: view_input_begin(m, "search", ""); break;
    case VIEW_OP_SEARCH_NEXT: view_search(m, m->search, 1); break;
    case VIEW_OP_SEARCH_PREV: view_search(m, m->search, -1); break;
    case VIEW_OP_TIMELINE_LAYERS: m->timeline_layers = !m->timeline_layers; break;
    case VIEW_OP_HELP: m->help_open = 1, m->help_scroll = 0; break;
    case VIEW_OP_INSPECT: toggle_inspector(m); break;
    case VIEW_OP_CLOSE: close_overlay(m); break;
    case VIEW_OP_FIRST_GLOBAL: case VIEW_OP_NEXT_GLOBAL: case VIEW_OP_PREV_GLOBAL: case VIEW_OP_NEXT_NEEDED:
    case VIEW_OP_FIRST_NEEDED:
        view_seek_op(m, op);
        break;
    case VIEW_OP_PIN: view_pin_toggle(m); break;
    case VIEW_OP_FLIPS: view_flips_toggle(m); break;
    case VIEW_OP_ALLHEADS: view_allheads_toggle(m); break;
    case VIEW_OP_SPAN_START: view_span_at_cursor(m, 0); break;
    case VIEW_OP_SPAN_END: view_span_at_cursor(m, 1); break;
    case VIEW_OP_SPAN_PRESET: view_span_next_preset(m); break;
    case VIEW_OP_SPAN_CLEAR: view_span_clear(m); break;
    case VIEW_OP_BOOKMARK_NEXT: view_bookmark_jump(m, 1); break;
    case VIEW_OP_BOOKMARK_PREV: view_bookmark_jump(m, -1); break;
    default: break;
    }
}

int view_overlay_open(const ViewModel *m) {
    return m->help_open || m->pick.open || m->flips_open || m->allheads_open || m->dist || m->heads || m->pattern ||
           m->sql_open;
}

ViewAction view_key(ViewModel *m, int ch) {
    m->status[0] = '\0';
    if (m->help_open && ch != KEY_MOUSE && ch != KEY_RESIZE) {
        if (help_scroll_key(m, ch)) return VIEW_ACT_NONE;
        m->help_open = 0; /* any other key closes the help, q too: q quits only the main screen */
        return VIEW_ACT_NONE;
    }
    if (ch == KEY_MOUSE) return VIEW_ACT_MOUSE;
    if (view_flips_key(m, ch)) return VIEW_ACT_NONE;
    if (view_allheads_key(m, ch)) return VIEW_ACT_NONE;
    int cmd = view_key_command(ch);
    if (cmd == VIEW_OP_STEP) {
        /* behind the newest step, stepping replays what is already computed */
        if (m->cursor < m->n_hist - 1) {
            move_cursor(m, m->cursor + 1);
            return VIEW_ACT_NONE;
        }
        return VIEW_ACT_STEP;
    }
    if (cmd < VIEW_ACT_COUNT) return (ViewAction)cmd;
    unpin_timeline(m);
    apply_op(m, cmd);
    return VIEW_ACT_NONE;
}

/* A click on the heatmap cell already selected, in half-block mode, picks
 * the other layer of the pair (one text cell shows two layers). */
static void click_heatmap(ViewModel *m, const Layout *lay, const ViewHit *h) {
    const ViewRect *r = &lay->pane[VIEW_PANE_HEATMAP];
    ViewHeatGeom g;
    view_heat_geom(m, r->w, r->h, view_layout_opts(m).half_blocks, &g);
    int layer = h->layer;
    if (g.half && layer == m->sel_layer && h->head == m->sel_head && layer + 1 < m->n_layers) layer++;
    select_head(m, layer, h->head);
}

/* The same for the timeline's head rows: a half-block line shows two heads,
 * so a click on the line whose top head is selected picks the one below. */
static void click_timeline(ViewModel *m, const Layout *lay, const ViewHit *h, int y) {
    const ViewRect *r = &lay->pane[VIEW_PANE_TIMELINE];
    ViewTimeGeom g;
    view_time_geom(m, r->w, r->h, view_layout_opts(m).half_blocks, &g);
    int ly = y - r->y, row = h->layer * m->n_heads + h->head, sel = m->sel_layer * m->n_heads + m->sel_head;
    int own = ly != g.y_pin && ly != g.y_par; /* the pinned and parent rows hold one head each */
    if (g.half && own && !m->timeline_layers && row == sel && row + 1 < g.first_row + g.n_rows_vis) row++;
    else row = -1;
    if (row < 0) select_head(m, h->layer, h->head);
    else select_head(m, row / m->n_heads, row % m->n_heads);
}

/* Keep the timeline's rows and columns where they are drawn now, so a click
 * selects what is under the pointer without the pane scrolling beneath it. */
static void pin_timeline(ViewModel *m, const Layout *lay) {
    const ViewRect *r = &lay->pane[VIEW_PANE_TIMELINE];
    ViewTimeGeom g;
    view_time_geom(m, r->w, r->h, view_layout_opts(m).half_blocks, &g);
    m->time_row0 = g.first_row;
    m->time_tok0 = g.first_tok;
}

ViewAction view_mouse(ViewModel *m, const Layout *lay, int x, int y, ViewMouse kind) {
    if (m->help_open) { /* a click closes it, the wheel scrolls it */
        if (kind == VIEW_MOUSE_CLICK) m->help_open = 0;
        else if (kind == VIEW_MOUSE_WHEEL_UP || kind == VIEW_MOUSE_WHEEL_DOWN)
            scroll_help(m, kind == VIEW_MOUSE_WHEEL_UP ? -WHEEL_SQL : WHEEL_SQL);
        return VIEW_ACT_NONE;
    }
    ViewHit h = view_hit(m, lay, x, y);
    if (h.pane == VIEW_PANE_NONE) return VIEW_ACT_NONE;
    if (kind == VIEW_MOUSE_CLICK) {
        if (focusable(m, h.pane)) m->focus = h.pane;
        if (h.pane == VIEW_PANE_TIMELINE) pin_timeline(m, lay);
        else unpin_timeline(m);
        if (h.pane == VIEW_PANE_HEATMAP && h.layer >= 0) click_heatmap(m, lay, &h);
        else if (h.pane == VIEW_PANE_TIMELINE && h.layer >= 0 && h.head >= 0) click_timeline(m, lay, &h, y);
        else if (h.layer >= 0) select_head(m, h.layer, h.head >= 0 ? h.head : m->sel_head);
        if (h.pos >= 0) move_cursor(m, h.pos);
        return VIEW_ACT_NONE;
    }
    if (kind != VIEW_MOUSE_WHEEL_UP && kind != VIEW_MOUSE_WHEEL_DOWN) return VIEW_ACT_NONE;
    int d = kind == VIEW_MOUSE_WHEEL_UP ? -1 : 1;
    switch (h.pane) {
    case VIEW_PANE_SQL: scroll_sql(m, d * WHEEL_SQL); break;
    case VIEW_PANE_HEATMAP:
    case VIEW_PANE_BARS: select_head(m, m->sel_layer + d, m->sel_head); break;
    case VIEW_PANE_TIMELINE: /* the wheel scrolls the rows under the pointer, as in the text pane */
        unpin_timeline(m);
        if (m->timeline_layers) select_head(m, m->sel_layer + d, m->sel_head);
        else move_row(m, d);
        break;
    default: move_cursor(m, m->cursor + d); break;
    }
    return VIEW_ACT_NONE;
}

ViewMouse view_mouse_kind(unsigned long bstate) {
    if (bstate & BUTTON4_PRESSED) return VIEW_MOUSE_WHEEL_UP;
#ifdef BUTTON5_PRESSED
    if (bstate & BUTTON5_PRESSED) return VIEW_MOUSE_WHEEL_DOWN;
#endif
    if (bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED)) return VIEW_MOUSE_CLICK;
    return VIEW_MOUSE_OTHER;
}
