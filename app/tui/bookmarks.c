/* bookmarks.c — `b` and `C`: the cursor's bookmark and its note, kept in the database beside the run.
 *
 * The view keeps the marks it draws and their notes (views/marks.c); this
 * file writes each change to the bookmarks table of the file the run on
 * screen lives in, a live run's or a replay's, on a short connection of its
 * own (the worker's belongs to its thread), so they outlive the session and
 * a replay shows them again (replay.c reads them with the run). A file of
 * schema version 7 or older keeps no bookmarks and is never upgraded for
 * one: its marks stay on screen, and the status line says why.
 *
 * A write that finds the database locked by another process is not lost:
 * it waits in a queue, retried every TUI_MARK_RETRY_S from the frame loop
 * (never blocking a frame for more than an instant), and what is still
 * queued at quit gets one last wait of STORE_BUSY_MS, then a line on stderr
 * each, once the terminal is given back. */
#include <stdio.h>
#include <string.h>

#include "app/tui/state.h"
#include "app/tui/worker.h"

/* The position the cursor's trace stands for, -1 with none. */
static int cursor_pos(const Tui *t) {
    const StepTrace *tr = view_trace(&t->m, t->m.cursor);
    return tr ? tr->pos : -1;
}

/* One write of the queue to the file, waiting busy_ms for a lock: 0, or
 * -1 with e set. A file older than version 8 is refused before it is
 * opened for writing, which would upgrade it. */
static int mark_write(const char *db, const TuiMarkWrite *w, int busy_ms, Err *e) {
    Store *st = store_open(db, STORE_READ, busy_ms, e);
    if (!st) return -1;
    int version = store_version(st);
    store_close(st, NULL);
    if (version < 8)
        return err_set(e, "schema %d keeps no bookmarks, and a replay never upgrades its file", version);
    if (!(st = store_open(db, STORE_WRITE, busy_ms, e))) return -1;
    int rc = w->drop ? store_bookmark_drop(st, w->run, w->pos, e) : store_bookmark_put(st, w->run, w->pos, w->note, e);
    Err ce;
    if (store_close(st, &ce) && rc == 0) rc = -1, *e = ce;
    return rc;
}

/* 1 if e says another connection holds the lock: worth waiting for. */
static int is_busy(const Err *e) { return strstr(e->msg, "locked") || strstr(e->msg, "busy"); }

/* Queue w behind the writes waiting already; 0, or -1 when the queue is full. */
static int enqueue(Tui *t, const TuiMarkWrite *w) {
    if (t->marks_q.n >= TUI_MARK_QUEUE) return -1;
    t->marks_q.w[t->marks_q.n++] = *w;
    t->marks_q.next_try = clock_now() + TUI_MARK_RETRY_S;
    return 0;
}

/* Keep (or, with drop, remove) the bookmark at pos of the run on screen,
 * with note; why says where it stays when it is not kept yet ("" when
 * kept). */
static void keep(Tui *t, int pos, const char *note, int drop, char *why, size_t cap) {
    int64_t run = t->replay ? t->replay_run : tui_worker_run_id(&t->w);
    why[0] = 0;
    if (!t->db || !run) { snprintf(why, cap, " (on screen only: not recording)"); return; }
    TuiMarkWrite w = {.run = run, .pos = pos, .drop = drop};
    snprintf(w.note, sizeof w.note, "%s", note ? note : "");
    Err e;
    if (t->marks_q.n > 0) { /* behind the ones waiting: a drop must not overtake its put */
        if (enqueue(t, &w)) snprintf(why, cap, " (not kept: %d bookmark writes wait already)", TUI_MARK_QUEUE);
        else snprintf(why, cap, " (waiting for the database: kept once it is free)");
        return;
    }
    if (mark_write(t->db, &w, TUI_MARK_WAIT_MS, &e) == 0) return;
    if (!is_busy(&e)) { snprintf(why, cap, " (on screen only: %.150s)", e.msg); return; }
    if (enqueue(t, &w)) snprintf(why, cap, " (not kept: %.150s)", e.msg);
    else snprintf(why, cap, " (the database is locked: kept once it is free, tried every %.2g s)", TUI_MARK_RETRY_S);
}

void tui_bookmarks_poll(Tui *t) {
    if (t->marks_q.n == 0 || clock_now() < t->marks_q.next_try) return;
    Err e;
    int kept = 0;
    while (t->marks_q.n > 0 && mark_write(t->db, &t->marks_q.w[0], TUI_MARK_POLL_MS, &e) == 0) {
        memmove(&t->marks_q.w[0], &t->marks_q.w[1], (size_t)(t->marks_q.n - 1) * sizeof t->marks_q.w[0]);
        t->marks_q.n--, kept++;
    }
    t->marks_q.next_try = clock_now() + TUI_MARK_RETRY_S;
    if (kept) {
        view_set_status(&t->m, "%d bookmark write%s kept, the database free again%s", kept, kept == 1 ? "" : "s",
                        t->marks_q.n ? " (more wait)" : "");
        t->dirty = 1;
    }
}

void tui_bookmarks_flush(Tui *t) {
    Err e;
    for (int i = 0; i < t->marks_q.n; i++) {
        const TuiMarkWrite *w = &t->marks_q.w[i];
        if (mark_write(t->db, w, STORE_BUSY_MS, &e) == 0) continue;
        fprintf(stderr, "ahascope: %s: the bookmark %s run %lld pos %d%s%s%s was not kept: %s\n", t->db,
                w->drop ? "drop of" : "at", (long long)w->run, w->pos, w->note[0] ? " (note \"" : "", w->note,
                w->note[0] ? "\")" : "", e.msg);
    }
    t->marks_q.n = 0;
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
    view_input_begin(&t->m, "note", view_bookmark_note(&t->m, t->m.cursor));
    view_set_status(&t->m, "note for the bookmark at pos %d: type it, Enter keeps it (empty: no note)", pos);
}

void tui_note_done(Tui *t) {
    char why[200];
    const char *text = t->m.input.text;
    view_bookmark_note_set(&t->m, t->note_pos, text);
    keep(t, t->note_pos, text, 0, why, sizeof why);
    if (text[0]) view_set_status(&t->m, "note kept for the bookmark at pos %d: %.200s%s", t->note_pos, text, why);
    else view_set_status(&t->m, "bookmark at pos %d kept without a note%s", t->note_pos, why);
}
