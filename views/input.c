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

ViewInput view_input_key(ViewModel *m, int ch) {
    if (!m->input.active) return VIEW_INPUT_CANCEL;
    char *t = m->input.text;
    size_t n = strlen(t);
    switch (ch) {
    case '\n': case '\r': case KEY_ENTER: m->input.active = 0; return VIEW_INPUT_DONE;
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
