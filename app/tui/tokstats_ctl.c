/* tokstats_ctl.c — `c`, counted a slice a frame (see tokstats_ctl.h). */
#include "app/tui/tokstats_ctl.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/clock.h"
#include "views/explain.h"

/* Seconds of a frame given to counting, positions between looks at the
 * clock, and the pieces listed. */
#define TOKSTATS_FRAME_BUDGET 0.008
enum { TOKSTATS_SLICE = 16, TOKSTATS_TOP_PIECES = 20 };

void tui_tokstats_close(Tui *t) {
    if (!t->tokstats) return;
    view_clear_progress(&t->m);
    view_tokstats_free(t->tokstats);
    free(t->tokstats);
    t->tokstats = NULL;
}

int tui_tokstats_cancel(Tui *t) {
    if (!t->tokstats) return 0;
    view_set_status(&t->m, "token types: stopped after %d of %d positions", t->tokstats->n, t->tokstats_total);
    tui_tokstats_close(t);
    t->dirty = 1;
    return 1;
}

void tui_token_stats(Tui *t) {
    const ViewModel *m = &t->m;
    if (m->n_hist <= 0) {
        view_set_status(&t->m, "token types: no positions yet");
        return;
    }
    tui_tokstats_close(t);
    if (!(t->tokstats = malloc(sizeof *t->tokstats))) {
        view_set_status(&t->m, "token types: out of memory");
        return;
    }
    view_tokstats_begin(t->tokstats, m->n_layers, m->n_heads, m->sel_layer, m->sel_head, m->agree_pred, m->hdr.tau,
                        m->hdr.theta_logit);
    int lo, hi; /* a span: only its positions */
    view_span_range(m, m->n_hist - 1, &lo, &hi);
    if (lo > hi) {
        view_set_status(&t->m, "token types: the span holds no position of this run");
        free(t->tokstats), t->tokstats = NULL;
        return;
    }
    t->tokstats_lo = lo, t->tokstats_total = hi - lo + 1, t->tokstats_shown = 0, t->tokstats_first = m->hist[0];
    t->tokstats_run = t->screen_run;
    tui_tokstats_poll(t);
}

/* The count done: its table in the text pane, what it holds on the status line. */
static void finish(Tui *t) {
    const ViewTokStats *s = t->tokstats;
    char *text = NULL, title[64], over[40] = "";
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) view_tokstats_print(s, f, TOKSTATS_TOP_PIECES, t->m.ascii), fclose(f);
    Err e;
    if (t->tokstats_lo > 0 || t->tokstats_total < t->m.n_hist) /* a span: the title says which positions */
        snprintf(over, sizeof over, " \xc2\xb7 span %d-%d", t->tokstats_lo, t->tokstats_lo + t->tokstats_total - 1);
    snprintf(title, sizeof title, "token types L%d H%d%s", s->layer, s->head, over);
    if (!f || view_set_text(&t->m, title, "", text ? text : "", &e))
        view_set_status(&t->m, "token types: out of memory");
    else {
        char th[16];
        view_unit_text(th, sizeof th, decide_prob(s->theta_logit), 2);
        view_set_status(&t->m, "h_ L%d H%d, a_ %d heads pooled \xc2\xb7 %d pos \xc2\xb7 agree: %s vs oracle theta %s",
                        s->layer, s->head, s->n_layers * s->n_heads, s->n, decide_name(s->pred), th);
    }
    free(text);
    tui_tokstats_close(t);
}

void tui_tokstats_poll(Tui *t) {
    ViewTokStats *s = t->tokstats;
    if (!s) return;
    /* a new run (a re-evaluation, a run opened with B) replaced the history under the count */
    if (t->m.n_hist < t->tokstats_lo + t->tokstats_total || t->m.hist[0] != t->tokstats_first || t->screen_run != t->tokstats_run) {
        tui_tokstats_close(t);
        view_set_status(&t->m, "token types: the run on screen changed; c counts it again");
        return;
    }
    double t0 = clock_now(), now = t0;
    while (s->n < t->tokstats_total && now - t0 < TOKSTATS_FRAME_BUDGET) {
        for (int k = 0; k < TOKSTATS_SLICE && s->n < t->tokstats_total; k++)
            if (view_tokstats_add(s, t->m.hist[t->tokstats_lo + s->n])) {
                tui_tokstats_close(t);
                view_set_status(&t->m, "token types: out of memory");
                return;
            }
        now = clock_now();
    }
    t->dirty = 1;
    if (s->n >= t->tokstats_total) finish(t);
    else if (now - t->tokstats_shown >= 0.1) { /* the progress line ten times a second */
        t->tokstats_shown = now;
        view_set_progress(&t->m, "token types: %d of %d positions (Esc stops)", s->n, t->tokstats_total);
    }
}
