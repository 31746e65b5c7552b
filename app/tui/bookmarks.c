/* bookmarks.c — `b` and `C`: the cursor's bookmark and its note, kept in the database beside the run.
 *
 * The view keeps the marks it draws (views/marks.c); this file writes each
 * change of a live run's bookmarks to the bookmarks table at once, on a
 * short connection of its own (the worker's belongs to its thread), so
 * they outlive the session and a replay shows them again (replay.c reads
 * them with the run). A replay only shows them: it never writes its file. */
#include <stdio.h>
#include <string.h>

#include "app/tui/state.h"
#include "app/tui/worker.h"

/* The position the cursor's trace stands for, -1 with none. */
static int cursor_pos(const Tui *t) {
    const StepTrace *tr = view_trace(&t->m, t->m.cursor);
    return tr ? tr->pos : -1;
}

/* Keep (or, with drop, remove) the bookmark at pos of the run on screen,
 * with note; why says where it stays when it cannot be kept ("" when
 * kept). */
static void keep(Tui *t, int pos, const char *note, int drop, char *why, size_t cap) {
    int64_t run = t->replay ? 0 : tui_worker_run_id(&t->w);
    why[0] = 0;
    if (t->replay) { snprintf(why, cap, " (on screen only: a replay writes nothing)"); return; }
    if (!t->db || !run) { snprintf(why, cap, " (on screen only: not recording)"); return; }
    Err e;
    Store *st = store_open(t->db, STORE_WRITE, 500, &e);
    int rc = !st ? -1 : drop ? store_bookmark_drop(st, run, pos, &e) : store_bookmark_put(st, run, pos, note, &e);
    Err ce;
    if (st && store_close(st, &ce) && rc == 0) rc = -1, e = ce;
    if (rc) snprintf(why, cap, " (not kept: %.150s)", e.msg);
}

/* The bookmark's status line, the view's own, with where it is kept. */
static void say_kept(Tui *t, const char *why) {
    if (!why[0]) return;
    char line[sizeof t->m.status + 256]; /* view_set_status cuts it to the status line's size */
    snprintf(line, sizeof line, "%.*s%.200s", (int)sizeof t->m.status, t->m.status, why);
    view_set_status(&t->m, "%s", line);
}

void tui_bookmark(Tui *t) {
    int pos = cursor_pos(t), r = view_bookmark_toggle(&t->m, t->m.cursor);
    if (r < 0 || pos < 0) return;
    char why[200];
    keep(t, pos, NULL, r == 0, why, sizeof why);
    say_kept(t, why);
}

void tui_bookmark_note(Tui *t) {
    int pos = cursor_pos(t);
    if (pos < 0) { view_set_status(&t->m, "note: no token under the cursor yet"); return; }
    if (view_mark_at(&t->m, t->m.cursor) != VIEW_MARK_BOOKMARK && view_bookmark_toggle(&t->m, t->m.cursor) != 1) return;
    t->note_pos = pos;
    view_input_begin(&t->m, "note", "");
    view_set_status(&t->m, "note for the bookmark at pos %d: type it, Enter keeps it (empty: no note)", pos);
}

void tui_note_done(Tui *t) {
    char why[200];
    const char *text = t->m.input.text;
    keep(t, t->note_pos, text, 0, why, sizeof why);
    if (text[0]) view_set_status(&t->m, "note kept for the bookmark at pos %d: %.200s%s", t->note_pos, text, why);
    else view_set_status(&t->m, "bookmark at pos %d kept without a note%s", t->note_pos, why);
}
