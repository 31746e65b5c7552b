/* pattern_ctl.c — the attention-pattern view's controller (see pattern_ctl.h). */
#include "app/tui/pattern_ctl.h"

#include <stdlib.h>

#include "engine/clock.h"
#include "views/fixed.h"
#include "views/keymap.h"

/* Seconds between two patterns of a live run that only grew, at least; and
 * at least this many times what the last one took, so that on a long run
 * the pattern never takes more than a fifth of the engine thread's time. */
#define TUI_PATTERN_REFRESH 1.0
#define TUI_PATTERN_SHARE 5.0
/* Seconds after which a request the worker never answered (its run was
 * replaced meanwhile) is asked again. */
#define TUI_PATTERN_GIVE_UP 30.0

void tui_pattern_close(Tui *t) {
    view_pattern_free(&t->pat);
    t->m.pattern = NULL;
    t->pat_pending = 0;
}

void tui_pattern_toggle(Tui *t) {
    if (t->pat.open) {
        tui_pattern_close(t);
        return;
    }
    view_pattern_free(&t->pat);
    t->pat.open = 1;
    t->pat.layer = t->m.sel_layer, t->pat.head = t->m.sel_head;
    t->m.pattern = &t->pat;
    tui_pattern_poll(t);
}

int tui_pattern_key(Tui *t, int ch) {
    if (!t->pat.open) return 0;
    if (view_key_command(ch) == VIEW_OP_CLOSE) {
        tui_pattern_close(t);
        return 1;
    }
    ViewRect r = view_pattern_rect(&t->scr.lay);
    view_pattern_focus(&t->pat, &t->m); /* + and - zoom about the cursor's row and its heaviest key */
    return r.w > 0 && view_pattern_key(&t->pat, ch, r.w, r.h);
}

/* The window and sinks the pattern marks for layer: an architecture's local
 * layer reads its own window and keeps no sinks, whatever AHA's window is. */
typedef struct {
    int window, sinks;
} PatternEdge;

static PatternEdge pattern_edge(const Tui *t, int layer) {
    const StepTrace *last = t->m.n_hist > 0 ? t->m.hist[t->m.n_hist - 1] : NULL;
    int w = view_layer_fixed(last, layer) ? view_fixed_window(last, layer * last->n_heads) : 0;
    return w > 0 ? (PatternEdge){w, 0} : (PatternEdge){t->m.hdr.window, t->m.hdr.sinks};
}

/* The data no longer shows the selected head over the run on screen. */
static int stale(const Tui *t) {
    const ViewPattern *p = &t->pat;
    PatternEdge edge = pattern_edge(t, t->m.sel_layer);
    return !p->w || p->layer != t->m.sel_layer || p->head != t->m.sel_head || p->n != t->m.n_hist ||
           p->window != edge.window || p->sinks != edge.sinks;
}

static void poll_replay(Tui *t) {
    if (!stale(t)) return;
    Err e;
    PatternEdge edge = pattern_edge(t, t->m.sel_layer);
    if (view_pattern_from_recorded(&t->pat, &t->m, t->m.sel_layer, t->m.sel_head, edge.window, edge.sinks, &e))
        view_set_status(&t->m, "%s", e.msg);
    t->dirty = 1;
}

static void poll_live(Tui *t) {
    int l, h, n, bin;
    float *grid = tui_worker_take_pattern(&t->w, &l, &h, &n, &bin);
    if (grid) {
        t->pat_pending = 0, t->dirty = 1, t->pat_cost = clock_now() - t->pat_asked;
        PatternEdge edge = pattern_edge(t, l);
        view_pattern_set(&t->pat, l, h, n, bin, grid, edge.window, edge.sinks);
    }
    int n_hist = t->m.n_hist;
    if (t->pat_pending && clock_now() - t->pat_asked > TUI_PATTERN_GIVE_UP) t->pat_pending = 0;
    if (n_hist > 0 && stale(t) && !t->pat_pending) {
        /* a run that only grew waits its turn; a new head or run does not */
        int grew = t->pat.w && t->pat.layer == t->m.sel_layer && t->pat.head == t->m.sel_head;
        double wait = TUI_PATTERN_SHARE * t->pat_cost > TUI_PATTERN_REFRESH ? TUI_PATTERN_SHARE * t->pat_cost
                                                                            : TUI_PATTERN_REFRESH;
        if (!grew || clock_now() - t->pat_asked >= wait) {
            tui_worker_request_pattern(&t->w, t->m.sel_layer, t->m.sel_head, n_hist, view_pattern_bin(n_hist));
            t->pat_pending = 1, t->pat_asked = clock_now();
        }
    }
    /* the cursor's exact row names its heaviest keys */
    const StepTrace *cur = view_trace(&t->m, t->m.cursor);
    const ViewAttn *a = &t->m.attn;
    if (cur && !t->attn_pending && (a->pos != cur->pos || a->layer != t->m.sel_layer || a->head != t->m.sel_head)) {
        tui_worker_request_attention(&t->w, cur->pos, t->m.sel_layer, t->m.sel_head);
        t->attn_pending = 1;
    }
}

void tui_pattern_poll(Tui *t) {
    if (!t->pat.open) return;
    if (t->replay) poll_replay(t);
    else poll_live(t);
    if (t->pat.centred) { /* zoomed: follow the cursor's row, and its heaviest key once its row arrives */
        int q = t->pat.focus_q, k = t->pat.focus_k;
        view_pattern_focus(&t->pat, &t->m);
        if (q != t->pat.focus_q || k != t->pat.focus_k) t->dirty = 1;
    }
}
