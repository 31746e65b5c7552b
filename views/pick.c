/* pick.c — the picker (`P`'s policy list): its keys, its rectangle over the heatmap, its drawing.
 *
 * The picker: a small list chosen from with the keys (see
 * view.h) and drawn over the heatmap (see pick.h). */
#include "views/pick.h"

#include <stdio.h>
#include <string.h>

#include "views/keymap.h"
#include "views/paint.h"

void view_pick_open(ViewModel *m, const char *title, const char *const *items, int n, int sel) {
    if (n > VIEW_PICK_MAX) n = VIEW_PICK_MAX;
    snprintf(m->pick.title, sizeof m->pick.title, "%s", title);
    for (int i = 0; i < n; i++) snprintf(m->pick.item[i], sizeof m->pick.item[i], "%s", items[i]);
    m->pick.n = n;
    m->pick.sel = sel >= 0 && sel < n ? sel : 0;
    m->pick.open = n > 0;
}

ViewPick view_pick_key(ViewModel *m, int ch, int again) {
    int n = m->pick.n > 0 ? m->pick.n : 1, cmd = view_key_command(ch);
    if (cmd == VIEW_OP_CLOSE || cmd == VIEW_ACT_QUIT) {
        m->pick.open = 0;
        return VIEW_PICK_CANCELLED;
    }
    if (cmd == VIEW_OP_INSPECT) { /* Enter */
        m->pick.open = 0;
        return VIEW_PICK_CHOSEN;
    }
    if (ch == again || ch == KEY_DOWN || ch == 'j') m->pick.sel = (m->pick.sel + 1) % n;
    else if (ch == KEY_UP || ch == 'k') m->pick.sel = (m->pick.sel + n - 1) % n;
    return VIEW_PICK_MOVED;
}

/* The widest of the title and the items, in columns. */
static int widest(const ViewModel *m) {
    int w = (int)strlen(m->pick.title) + 2;
    for (int i = 0; i < m->pick.n; i++)
        if ((int)strlen(m->pick.item[i]) + 4 > w) w = (int)strlen(m->pick.item[i]) + 4;
    return w;
}

ViewRect view_pick_rect(const ViewModel *m, const Layout *lay) {
    ViewRect r = {0, 0, 0, 0};
    if (!m->pick.open || lay->too_small) return r;
    const ViewRect *hm = &lay->pane[VIEW_PANE_HEATMAP];
    r.x = hm->w > 0 ? hm->x : 0;
    r.y = hm->w > 0 ? hm->y : 1;
    r.w = widest(m) + 2;
    r.h = m->pick.n + 2;
    if (r.x + r.w > lay->cols) r.x = lay->cols - r.w;
    if (r.y + r.h > lay->rows - 1) r.y = lay->rows - 1 - r.h; /* above the status line */
    if (r.x < 0 || r.y < 0) r = (ViewRect){0, 0, 0, 0};
    return r;
}

void view_draw_pick(const ViewModel *m, const Layout *lay, const ViewPalette *p) {
    ViewRect r = view_pick_rect(m, lay);
    if (r.w <= 0) return;
    WINDOW *w = newwin(r.h, r.w, r.y, r.x);
    if (!w) return;
    werase(w);
    view_frame_box(w, p, m->pick.title, 1);
    for (int i = 0; i < m->pick.n; i++) {
        int on = i == m->pick.sel;
        view_printf(w, 1 + i, 1, r.w - 2, p->ascii, on ? A_REVERSE | A_BOLD : A_NORMAL, 0, "%s %-*s", on ? ">" : " ",
                    r.w - 4, m->pick.item[i]);
    }
    wnoutrefresh(w);
    delwin(w);
}
