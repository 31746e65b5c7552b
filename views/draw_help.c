/* draw_help.c — the `?` help overlay (see draw.h). */
#include "views/draw.h"
#include "views/keymap.h"
#include "views/paint.h"

void view_draw_help(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    (void)m;
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    view_frame_box(w, p, "help \xc2\xb7 any key closes", 1);
    attr_t ka, fa;
    short kp, fp;
    view_text_style(p, VIEW_TX_KEY, &ka, &kp);
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    int n, y = 1, kw = 15;
    const ViewBinding *b = view_bindings(&n);
    for (int i = 0; i < n && y < h - 1; i++) {
        if (!b[i].label) {
            view_puts(w, y++, 2, wd - 4, b[i].help, p->ascii, fa, fp);
            continue;
        }
        if (!b[i].help[0] && !b[i].label[0]) continue; /* a second row of keys the line above explains */
        view_puts(w, y, 3, kw, b[i].label, p->ascii, ka, kp);
        view_puts(w, y++, 3 + kw + 1, wd - kw - 5, b[i].help, p->ascii, A_NORMAL, 0);
    }
}
