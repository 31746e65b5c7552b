/* draw_sql.c — the read-only SQL result pane (see draw.h). */
#include <stdio.h>
#include <string.h>

#include "views/draw.h"
#include "views/paint.h"

void view_draw_sql(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    char title[200];
    int first = m->sql_scroll, last = first + h - 3;
    if (last >= m->sql_lines) last = m->sql_lines - 1;
    snprintf(title, sizeof title, "sql (read-only) \xc2\xb7 lines %d-%d of %d \xc2\xb7 %.120s", first + 1, last + 1,
             m->sql_lines, m->sql_query ? m->sql_query : "");
    view_frame_box(w, p, title, m->focus == VIEW_PANE_SQL);
    const char *s = m->sql_text ? m->sql_text : "";
    for (int line = 0; *s && line < first; line++) {
        const char *nl = strchr(s, '\n');
        s = nl ? nl + 1 : s + strlen(s);
    }
    char buf[1024];
    for (int y = 1; y < h - 1 && *s; y++) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if (buf[i] == '\t' || buf[i] == '\r') buf[i] = ' ';
        view_puts(w, y, 1, wd - 2, buf, p->ascii, A_NORMAL, 0);
        s = nl ? nl + 1 : s + len;
    }
}
