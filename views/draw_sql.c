/* draw_sql.c — the text pane: SQL results and plots (see draw.h). */
#include <stdio.h>
#include <string.h>

#include "views/draw.h"
#include "views/paint.h"

/* The start of line `n` of s (or its end when s has fewer lines). */
static const char *line_at(const char *s, int n) {
    for (int line = 0; *s && line < n; line++) {
        const char *nl = strchr(s, '\n');
        s = nl ? nl + 1 : s + strlen(s);
    }
    return s;
}

/* 1 if line s (up to its newline) is a table's rule: dashes and spaces, a dash first. */
static int is_rule(const char *s) {
    if (*s != '-') return 0;
    for (; *s && *s != '\n'; s++)
        if (*s != '-' && *s != ' ') return 0;
    return 1;
}

int view_sql_header_above(const char *text, int top) {
    int hdr = -1, i = 0;
    for (const char *s = text; *s && i < top; i++) {
        const char *nl = strchr(s, '\n');
        if (!nl) break;
        if (nl == s) hdr = -1; /* a blank line ends the table */
        else if (is_rule(nl + 1)) hdr = i;
        s = nl + 1;
    }
    return hdr >= 0 && hdr + 2 <= top ? hdr : -1;
}

/* Draw the line at s from character column `skip` on; returns the next line. */
static const char *draw_line(WINDOW *w, int y, int wd, const char *s, int skip, const ViewPalette *p, attr_t a) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    const char *next = nl ? nl + 1 : s + len;
    size_t i = 0;
    for (int c = 0; i < len && c < skip; c++) /* skip whole UTF-8 characters */
        do i++; while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80);
    char buf[1024];
    size_t n = len - i < sizeof buf - 1 ? len - i : sizeof buf - 1;
    memcpy(buf, s + i, n);
    buf[n] = '\0';
    for (size_t k = 0; k < n; k++)
        if (buf[k] == '\t' || buf[k] == '\r') buf[k] = ' ';
    view_puts(w, y, 1, wd - 2, buf, p->ascii, a, 0);
    return next;
}

/* "sql (read-only) · lines 1-20 of 120 · cols 9-86 of 200 · SELECT …" */
static void title(char *out, size_t cap, const ViewModel *m, int rows, int cols) {
    int body = m->sql_lines - m->sql_pinned;
    int first = body > 0 ? m->sql_scroll + 1 : 0, last = m->sql_scroll + rows < body ? m->sql_scroll + rows : body;
    int n = snprintf(out, cap, "%s \xc2\xb7 lines %d-%d of %d", m->sql_title, first, last, body);
    if (m->sql_width > cols && n > 0 && (size_t)n < cap) {
        int right = m->sql_hscroll + cols < m->sql_width ? m->sql_hscroll + cols : m->sql_width;
        n += snprintf(out + n, cap - n, " \xc2\xb7 cols %d-%d of %d (\xe2\x86\x90\xe2\x86\x92)", m->sql_hscroll + 1,
                      right, m->sql_width);
    }
    if (m->sql_query && m->sql_query[0] && n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - n, " \xc2\xb7 %.120s", m->sql_query);
}

void view_draw_sql(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    int pinned = m->sql_pinned < h - 2 ? m->sql_pinned : (h > 2 ? h - 2 : 0);
    char t[300];
    title(t, sizeof t, m, h - 2 - pinned, wd - 2);
    view_frame_box(w, p, t, m->focus == VIEW_PANE_SQL);
    const char *s = m->sql_text ? m->sql_text : "";
    int y = 1;
    for (; y < 1 + pinned && *s; y++) s = draw_line(w, y, wd, s, m->sql_hscroll, p, A_BOLD);
    /* scrolled into a table further down: its header and rule stay on top, as the first table's do */
    int hdr = pinned ? -1 : view_sql_header_above(s, m->sql_scroll);
    if (hdr >= 0 && h - 2 > 3) {
        const char *hs = line_at(s, hdr);
        for (int k = 0; k < 2; k++, y++) hs = draw_line(w, y, wd, hs, m->sql_hscroll, p, A_BOLD);
    }
    s = line_at(s, m->sql_scroll);
    for (; y < h - 1 && *s; y++) s = draw_line(w, y, wd, s, m->sql_hscroll, p, A_NORMAL);
}
