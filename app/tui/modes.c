/* modes.c — the live run set aside while a recorded run opened with `B` is browsed.
 *
 * A live session that opens a recorded run (B) keeps its own
 * positions aside and gets them back with Esc, so browsing a recording
 * never ends the live run (see state.h). */
#include <stdlib.h>

#include "app/tui/state.h"
#include "views/pin.h"

void tui_keep_live(Tui *t) {
    ViewModel *m = &t->m;
    t->kept.hist = m->hist, t->kept.n_hist = m->n_hist, t->kept.cap_hist = m->cap_hist;
    t->kept.cursor = m->cursor, t->kept.follow = m->follow;
    t->kept.hdr = m->hdr;
    t->kept.screen_run = t->screen_run;
    t->kept.parent_run = t->parent_run;
    t->kept.marks = m->marks, t->kept.n_marks = m->n_marks;
    t->kept.notes = m->notes, t->kept.n_notes = m->n_notes;
    m->marks = NULL, m->n_marks = 0, m->notes = NULL, m->n_notes = 0;
    t->from_live = 1;
    /* the model starts an empty history of its own for the recording */
    m->hist = NULL, m->n_hist = m->cap_hist = 0, m->cursor = -1, m->follow = 1;
    m->attn.pos = -1, m->stats.n = 0;
    m->hist_gen++; /* what was counted over the live history (a span's rates) is not the recording's */
}

int tui_back_to_live(Tui *t) {
    if (!t->from_live) return 0;
    Err e;
    ViewModel *m = &t->m;
    if (t->load_parent) t->load_parent = 2, tui_job_cancel(&t->load); /* the replay's parent: what comes is dropped */
    view_drop_parent(m);
    view_clear_history(m);
    free(m->hist);
    m->hist = t->kept.hist, m->n_hist = t->kept.n_hist, m->cap_hist = t->kept.cap_hist;
    m->cursor = t->kept.cursor, m->follow = t->kept.follow;
    m->hdr = t->kept.hdr;
    free(m->marks), free(m->notes);
    m->marks = t->kept.marks, m->n_marks = t->kept.n_marks;
    m->notes = t->kept.notes, m->n_notes = t->kept.n_notes;
    t->kept.marks = NULL, t->kept.n_marks = 0, t->kept.notes = NULL, t->kept.n_notes = 0;
    t->screen_run = t->kept.screen_run;
    t->parent_run = t->kept.parent_run, t->other_run = 0; /* its parent was set aside with the replay: Tab reads it back */
    t->replay = 0, t->from_live = 0, t->playing = m->playing = 0;
    t->kept.hist = NULL, t->kept.n_hist = t->kept.cap_hist = 0;
    if (view_stats_sync(m, &e)) view_set_status(m, "%s", e.msg);
    else view_set_status(m, "back to the live run: space steps, p plays");
    t->dirty = 1;
    return 1;
}

void tui_free_kept(Tui *t) {
    for (int i = 0; i < t->kept.n_hist; i++) trace_free(t->kept.hist[i]);
    free(t->kept.hist);
    free(t->kept.marks), free(t->kept.notes);
    t->kept.marks = NULL, t->kept.n_marks = 0, t->kept.notes = NULL, t->kept.n_notes = 0;
    t->kept.hist = NULL, t->kept.n_hist = t->kept.cap_hist = 0, t->from_live = 0;
}
