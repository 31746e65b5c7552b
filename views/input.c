/* input.c — the status line as a one-line editor (prompt, SQL). Pure, like
 * view_key: tests drive it with key codes. */
#include <stdio.h>
#include <string.h>

#include "views/tui.h"
#include "views/view.h"

#define CH_ESC 27
#define CH_CTRL_U 21

void view_input_begin(ViewModel *m, const char *label, const char *text) {
    m->input.active = 1;
    m->input.browse = -1;
    snprintf(m->input.label, sizeof m->input.label, "%s", label);
    snprintf(m->input.text, sizeof m->input.text, "%s", text ? text : "");
    m->status[0] = 0;
}

/* Drop the last UTF-8 character: continuation bytes go with their lead. */
static void backspace(char *s) {
    size_t n = strlen(s);
    while (n > 0 && ((unsigned char)s[n - 1] & 0xC0) == 0x80) n--;
    if (n > 0) n--;
    s[n] = 0;
}

/* Remember a finished line under its label; a repeat of the newest is not
 * stored twice, and the oldest goes when the list is full. */
static void remember(ViewModel *m) {
    int n = m->input.n_history;
    if (!m->input.text[0]) return;
    if (n > 0 && !strcmp(m->input.history[n - 1].text, m->input.text) &&
        !strcmp(m->input.history[n - 1].label, m->input.label))
        return;
    if (n == VIEW_INPUT_HISTORY) {
        memmove(&m->input.history[0], &m->input.history[1], (size_t)(n - 1) * sizeof m->input.history[0]);
        n--;
    }
    snprintf(m->input.history[n].label, sizeof m->input.history[n].label, "%s", m->input.label);
    snprintf(m->input.history[n].text, sizeof m->input.history[n].text, "%s", m->input.text);
    m->input.n_history = n + 1;
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
    if (m->input.browse < 0) snprintf(m->input.draft, sizeof m->input.draft, "%s", m->input.text);
    m->input.browse = i;
    snprintf(m->input.text, sizeof m->input.text, "%s", i >= 0 ? m->input.history[i].text : m->input.draft);
}

ViewInput view_input_key(ViewModel *m, int ch) {
    if (!m->input.active) return VIEW_INPUT_CANCEL;
    char *t = m->input.text;
    size_t n = strlen(t);
    switch (ch) {
    case '\n': case '\r': case KEY_ENTER: m->input.active = 0; remember(m); return VIEW_INPUT_DONE;
    case KEY_UP: browse(m, -1); return VIEW_INPUT_EDITING;
    case KEY_DOWN: if (m->input.browse >= 0) browse(m, 1); return VIEW_INPUT_EDITING;
    case CH_ESC: m->input.active = 0; return VIEW_INPUT_CANCEL;
    case KEY_BACKSPACE: case 127: case 8: backspace(t); return VIEW_INPUT_EDITING;
    case CH_CTRL_U: t[0] = 0; return VIEW_INPUT_EDITING;
    default: break;
    }
    /* printable ASCII and UTF-8 bytes; control keys and KEY_* codes are ignored */
    if (ch >= 0x20 && ch <= 0xFF && ch != 0x7F && n + 1 < sizeof m->input.text) {
        t[n] = (char)ch;
        t[n + 1] = 0;
    }
    return VIEW_INPUT_EDITING;
}
