/* yank_ctl.c — `y` (see yank_ctl.h). */
#include "app/tui/yank_ctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Write text to path whole; 0, or -1 with errno's reason in why. */
static int write_file(const char *path, const char *text, char *why, size_t n) {
    FILE *f = fopen(path, "w");
    int ok = f && fputs(text, f) >= 0;
    int saved = errno;
    if (f && fclose(f)) ok = 0, saved = errno;
    if (!ok) snprintf(why, n, "%s", strerror(saved));
    return ok ? 0 : -1;
}

void tui_yank(Tui *t) {
    const char *what = "heads row"; /* the pane on top is what y copies */
    char *text = t->heads.open ? view_heads_yank(&t->heads, &t->m) : view_yank(&t->m, &what);
    if (!text) {
        view_set_status(&t->m, "yank: no %s to copy yet", what);
        return;
    }
    const char *path = tui_yank_path(getenv("AHASCOPE_YANK"));
    char why[128];
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    if (write_file(path, text, why, sizeof why)) {
        view_set_status(&t->m, "yank: cannot write %s: %s", path, why);
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
