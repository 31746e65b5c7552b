/* draw_help.c — the `?` help overlay (see draw.h). */
#include <stdio.h>

#include "views/draw.h"
#include "views/geom.h"
#include "views/keymap.h"
#include "views/paint.h"

/* The keys that scroll the help, as the key table names them ("↑ ↓ PgUp
 * PgDn Home End"): the same commands scroll the text pane. */
static void scroll_keys(char *out, size_t cap) {
    static const int ops[] = {VIEW_OP_UP,        VIEW_OP_DOWN,         VIEW_OP_PAGE_UP,
                              VIEW_OP_PAGE_DOWN, VIEW_OP_CURSOR_FIRST, VIEW_OP_CURSOR_LAST};
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && n < cap; i++) {
        char name[8];
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " " : "", view_key_name(view_command_key(ops[i]), name));
    }
}

/* With lines hidden, the bottom edge says where they are and how to reach
 * them: "more ↓ · ↑ ↓ PgUp PgDn Home End scroll". */
static void draw_footer(WINDOW *w, const ViewHelpGeom *g, const ViewPalette *p, int h, int wd) {
    int above = g->first > 0, below = g->first + g->n_rows < g->n_lines;
    if ((!above && !below) || h < 2 || wd <= 6) return;
    char keys[64], text[128];
    scroll_keys(keys, sizeof keys);
    snprintf(text, sizeof text, " more %s \xc2\xb7 %s scroll ",
             above && below ? "\xe2\x86\x91\xe2\x86\x93" : below ? "\xe2\x86\x93" : "\xe2\x86\x91", keys);
    attr_t fa;
    short fp;
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    view_puts(w, h - 1, 1, wd - 2, text, p->ascii, fa | A_BOLD, fp);
}

/* One help line: a section heading, or keys and what they do. */
static void draw_line(WINDOW *w, int y, const ViewBinding *b, const ViewHelpGeom *g, const ViewPalette *p) {
    attr_t ka, fa;
    short kp, fp;
    view_text_style(p, VIEW_TX_KEY, &ka, &kp);
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    if (!b->label) {
        view_puts_fit(w, y, g->head_x, g->head_w, b->help, p->ascii, fa, fp);
        return;
    }
    view_puts_fit(w, y, g->key_x, g->key_w, b->label, p->ascii, ka, kp);
    view_puts_fit(w, y, g->text_x, g->text_w, b->help, p->ascii, A_NORMAL, 0);
}

void view_draw_help(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    ViewHelpGeom g;
    view_help_geom(m, wd, h, &g);
    char title[96];
    int last = g.first + g.n_rows < g.n_lines ? g.first + g.n_rows : g.n_lines;
    if (last - g.first >= g.n_lines)
        snprintf(title, sizeof title, "help \xc2\xb7 any key closes");
    else if (g.n_rows > 0)
        snprintf(title, sizeof title, "help \xc2\xb7 lines %d-%d of %d \xc2\xb7 other keys close", g.first + 1, last,
                 g.n_lines);
    else
        snprintf(title, sizeof title, "help");
    view_frame_box(w, p, title, 1);
    for (int i = g.first; i < last; i++) draw_line(w, g.y0 + i - g.first, view_help_line(i), &g, p);
    draw_footer(w, &g, p, h, wd);
}
