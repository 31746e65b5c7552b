/* input.c — the status line's one-line editor (`e`, `:`, `/`, `G`, `z`, `B`).
 *
 * The status line as a one-line editor (prompt, SQL, search, run
 * id). Pure, like view_key: tests drive it with key codes. The line is
 * allocated, up to VIEW_INPUT_MAX bytes, so a prompt read from a file is
 * edited whole, and the cursor steps over whole UTF-8 characters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/keymap.h"
#include "views/tui.h"
#include "views/view.h"

#define HISTORY_BYTES ((size_t)64 << 20) /* what the remembered lines may hold together */

static int is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

size_t view_utf8_next(const char *t, size_t len, size_t at) {
    if (at >= len) return len;
    unsigned char c = (unsigned char)t[at];
    size_t n = c >= 0xF0 && c < 0xF8 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (c >= 0xF8 || at + n > len) return at + 1;
    for (size_t k = 1; k < n; k++)
        if (!is_cont((unsigned char)t[at + k])) return at + 1;
    return at + n;
}

size_t view_utf8_prev(const char *t, size_t at) {
    if (at == 0) return 0;
    size_t s = at - 1;
    while (s > 0 && at - s < 4 && is_cont((unsigned char)t[s])) s--;
    return view_utf8_next(t, at, s) == at ? s : at - 1; /* a stray continuation byte stands alone */
}

/* Room for need bytes and a NUL; 0, or -1 out of memory. */
static int reserve(ViewModel *m, size_t need) {
    if (need < m->input.cap) return 0;
    size_t cap = m->input.cap ? m->input.cap : 256;
    while (cap <= need) cap *= 2;
    char *t = realloc(m->input.text, cap);
    if (!t) return -1;
    m->input.text = t, m->input.cap = cap;
    return 0;
}

/* The line becomes s (n bytes), the cursor at its end. */
static int set_text(ViewModel *m, const char *s, size_t n) {
    if (reserve(m, n)) return -1;
    memmove(m->input.text, s, n);
    m->input.text[n] = 0;
    m->input.len = m->input.cur = n;
    return 0;
}

static char *dup_line(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n), d[n] = 0;
    return d;
}

int view_input_begin(ViewModel *m, const char *label, const char *text) {
    size_t n = text ? strlen(text) : 0;
    if (n > VIEW_INPUT_MAX) {
        view_set_status(m, "%s: %zu bytes, more than the %zu MiB an input line holds", label, n,
                        VIEW_INPUT_MAX >> 20);
        return -1;
    }
    if (set_text(m, text ? text : "", n)) {
        view_set_status(m, "%s: out of memory for %zu bytes", label, n);
        return -1;
    }
    m->input.active = 1;
    m->input.browse = -1;
    m->input.refused = 0;
    snprintf(m->input.label, sizeof m->input.label, "%s", label);
    m->status[0] = 0;
    return 0;
}

static void drop_oldest(ViewModel *m) {
    free(m->input.history[0].text);
    m->input.n_history--;
    memmove(&m->input.history[0], &m->input.history[1], (size_t)m->input.n_history * sizeof m->input.history[0]);
}

static size_t history_bytes(const ViewModel *m) {
    size_t n = 0;
    for (int i = 0; i < m->input.n_history; i++) n += strlen(m->input.history[i].text);
    return n;
}

/* Remember a finished line under its label; a repeat of the newest is not
 * stored twice, and the oldest go when the list is full or holds too much
 * (a line that cannot be copied is just not remembered). */
static void remember(ViewModel *m) {
    int n = m->input.n_history;
    if (!m->input.len) return;
    if (n > 0 && !strcmp(m->input.history[n - 1].text, m->input.text) &&
        !strcmp(m->input.history[n - 1].label, m->input.label))
        return;
    char *copy = dup_line(m->input.text, m->input.len);
    if (!copy) return;
    if (n == VIEW_INPUT_HISTORY) drop_oldest(m), n--;
    snprintf(m->input.history[n].label, sizeof m->input.history[n].label, "%s", m->input.label);
    m->input.history[n].text = copy;
    m->input.n_history = n + 1;
    while (m->input.n_history > 1 && history_bytes(m) > HISTORY_BYTES) drop_oldest(m);
}

/* The next entry from `from` in direction dir (-1 older, +1 newer) with
 * the current label; -1 when there is none that way. */
static int history_next(const ViewModel *m, int from, int dir) {
    for (int i = from + dir; i >= 0 && i < m->input.n_history; i += dir)
        if (!strcmp(m->input.history[i].label, m->input.label)) return i;
    return -1;
}

/* ↑ (dir -1) and ↓ (+1): show an earlier line; ↓ past the newest gives
 * back the line that was being typed. */
static void browse(ViewModel *m, int dir) {
    int from = m->input.browse < 0 ? m->input.n_history : m->input.browse;
    int i = history_next(m, from, dir);
    if (i < 0 && dir < 0) return; /* already at the oldest */
    if (m->input.browse < 0) {
        char *d = dup_line(m->input.text, m->input.len);
        if (!d) return; /* without a copy the line being typed would be lost */
        free(m->input.draft);
        m->input.draft = d;
    }
    const char *s = i >= 0 ? m->input.history[i].text : m->input.draft;
    if (set_text(m, s, strlen(s))) return;
    m->input.browse = i;
}

/* Put byte c in at the cursor. */
static void insert(ViewModel *m, char c) {
    if (m->input.len >= VIEW_INPUT_MAX) { m->input.refused = 1; return; }
    if (reserve(m, m->input.len + 1)) { m->input.refused = 2; return; }
    char *t = m->input.text + m->input.cur;
    memmove(t + 1, t, m->input.len - m->input.cur + 1);
    *t = c;
    m->input.len++, m->input.cur++;
}

/* Remove bytes [a, b); the cursor goes to a. */
static void cut(ViewModel *m, size_t a, size_t b) {
    memmove(m->input.text + a, m->input.text + b, m->input.len - b + 1);
    m->input.len -= b - a;
    m->input.cur = a;
}

/* Keys that move the cursor or delete; 0 if ch is none of them. */
static int edit_key(ViewModel *m, int ch) {
    const char *t = m->input.text;
    size_t len = m->input.len, cur = m->input.cur;
    switch (ch) {
    case KEY_LEFT: m->input.cur = view_utf8_prev(t, cur); return 1;
    case KEY_RIGHT: m->input.cur = view_utf8_next(t, len, cur); return 1;
    case KEY_HOME: case VIEW_KEY_CTRL_A: m->input.cur = 0; return 1;
    case KEY_END: case VIEW_KEY_CTRL_E: m->input.cur = len; return 1;
    case KEY_BACKSPACE: case VIEW_KEY_DEL: case VIEW_KEY_CTRL_H: cut(m, view_utf8_prev(t, cur), cur); return 1;
    case KEY_DC: cut(m, cur, view_utf8_next(t, len, cur)); return 1;
    case VIEW_KEY_CTRL_U: cut(m, 0, len); return 1;
    default: return 0;
    }
}

ViewInput view_input_key(ViewModel *m, int ch) {
    if (!m->input.active) return VIEW_INPUT_CANCEL;
    m->input.refused = 0;
    switch (ch) {
    case '\n': case '\r': case KEY_ENTER: m->input.active = 0; remember(m); return VIEW_INPUT_DONE;
    case KEY_UP: browse(m, -1); return VIEW_INPUT_EDITING;
    case KEY_DOWN: if (m->input.browse >= 0) browse(m, 1); return VIEW_INPUT_EDITING;
    case VIEW_KEY_ESC: m->input.active = 0; return VIEW_INPUT_CANCEL;
    default: break;
    }
    if (edit_key(m, ch)) return VIEW_INPUT_EDITING;
    /* printable ASCII and UTF-8 bytes; other control keys and KEY_* codes are ignored */
    if (ch >= 0x20 && ch <= 0xFF && ch != 0x7F) insert(m, (char)ch);
    return VIEW_INPUT_EDITING;
}

void view_input_paste(ViewModel *m, int ch) {
    if (!m->input.active) return;
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    if (ch >= 0x20 && ch <= 0xFF && ch != 0x7F) insert(m, (char)ch);
}
