/* yank_ctl.c — `y` (see yank_ctl.h). */
#include "app/tui/yank_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/files.h"
#include "views/yank.h"

const char *tui_yank_path(const char *env) { return env && *env ? env : "ahascope-yank.txt"; }

char *tui_yank_osc52(const char *text, size_t n) {
    static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *s = malloc(8 + (n + 2) / 3 * 4 + 2);
    if (!s) return NULL;
    char *o = s + sprintf(s, "\033]52;c;");
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)text[i] << 16;
        if (i + 1 < n) v |= (unsigned char)text[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)text[i + 2];
        *o++ = B64[v >> 18 & 63];
        *o++ = B64[v >> 12 & 63];
        *o++ = i + 1 < n ? B64[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? B64[v & 63] : '=';
    }
    *o++ = '\a';
    *o = 0;
    return s;
}

/* Write text to path whole the way every output file is written: a fresh
 * temporary renamed onto it, so a symlink there is replaced, not followed,
 * and a FIFO or device is refused without opening it (never blocks). */
static int write_file(const char *path, const char *text, Err *e) {
    FileAtomic a;
    if (!file_atomic_open(&a, path, e)) return -1;
    if (fputs(text, a.f) >= 0) return file_atomic_commit(&a, e);
    file_atomic_abort(&a);
    return err_set(e, "%s: write failed", path);
}

void tui_yank(Tui *t) {
    const char *what = "heads row"; /* the pane on top is what y copies */
    char *raw = t->heads.open ? view_heads_yank(&t->heads, &t->m) : view_yank(&t->m, &what);
    char *text = raw ? view_yank_clean(raw, t->m.ascii) : NULL;
    free(raw);
    if (!text) {
        view_set_status(&t->m, "yank: no %s to copy yet", what);
        return;
    }
    const char *path = tui_yank_path(getenv("AHASCOPE_YANK"));
    Err e;
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    if (write_file(path, text, &e)) {
        view_set_status(&t->m, "yank: %s", e.msg);
        free(text);
        return;
    }
    /* OSC 52 moves no cursor: curses' picture of the screen stays true */
    char *osc = isatty(STDOUT_FILENO) ? tui_yank_osc52(text, strlen(text)) : NULL;
    if (osc) fputs(osc, stdout), fflush(stdout);
    view_set_status(&t->m, "yanked the %s (%d lines) to %s%s", what, lines, path, osc ? " and the clipboard" : "");
    free(osc);
    free(text);
}
