/* heads_ctl.c — the sorted heads' controller (see heads_ctl.h). */
#include "app/tui/heads_ctl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/keymap.h"
#include "views/needle.h"
#include "views/rates.h"

void tui_heads_close(Tui *t) {
    t->heads.open = 0;
    t->m.heads = NULL;
    t->dirty = 1;
}

void tui_heads_toggle(Tui *t) {
    if (t->heads.open) {
        tui_heads_close(t);
        return;
    }
    t->heads.row = t->heads.top = 0; /* the top of the order, sorted as it was last */
    t->heads.open = 1;
    t->m.heads = &t->heads;
    t->dirty = 1;
}

int tui_heads_key(Tui *t, int ch) {
    if (!t->heads.open || t->m.help_open || ch == KEY_MOUSE || ch == KEY_RESIZE) return 0;
    if (view_key_command(ch) == VIEW_ACT_PATTERN) { /* the pattern is drawn under this pane: show it */
        tui_heads_close(t);
        return t->pat.open; /* else A opens it, as anywhere */
    }
    ViewRect r = view_pattern_rect(&t->scr.lay);
    int cell = -1;
    switch (view_heads_key(&t->heads, &t->m, ch, r.h, &cell)) {
    case VIEW_HEADS_NOT_MINE: return 0;
    case VIEW_HEADS_CLOSE: tui_heads_close(t); return 1;
    case VIEW_HEADS_CHOSEN: {
        ViewModel *m = &t->m;
        m->sel_layer = cell / m->n_heads, m->sel_head = cell % m->n_heads;
        int sort = t->heads.sort, exact;
        double v = view_heads_value(m, sort, cell, NULL, &exact);
        char txt[24];
        if (sort >= VIEW_RATE_COUNT) view_span_weight_text(&(ViewSpanWeight){v, exact, 1}, m->ascii, txt, sizeof txt);
        else if (isnan(v)) snprintf(txt, sizeof txt, "n/a");
        else snprintf(txt, sizeof txt, "%.1f%%", 100 * v);
        tui_heads_close(t);
        view_set_status(m, "L%d H%d selected (%s %s)", m->sel_layer, m->sel_head, view_heads_sort_name(m, sort), txt);
        return 1;
    }
    default: t->dirty = 1; return 1;
    }
}
