/* draw_keybar.c — the key bar: the panes and their keys on one line (see draw.h). */
#include "views/draw.h"
#include "views/keymap.h"
#include "views/paint.h"

void view_draw_keybar(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    (void)h, (void)m;
    attr_t ka, da;
    short kp, dp;
    view_text_style(p, VIEW_TX_KEY, &ka, &kp);
    view_text_style(p, VIEW_TX_DIM, &da, &dp);
    ViewBarEntry e[VIEW_KEYBAR_MAX];
    int n = view_keybar_fit(wd, e);
    char name[8];
    for (int i = 0; i < n; i++) {
        int x = e[i].x + view_puts(w, 0, e[i].x, wd - e[i].x, view_key_name(e[i].key, name), p->ascii, ka, kp);
        view_puts(w, 0, x + 1, wd - x - 1, e[i].word, p->ascii, da, dp);
    }
}
