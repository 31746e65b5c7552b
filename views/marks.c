/* marks.c — marked positions: a task item's needle and question (the app's), the user's bookmarks (`b`).
 *
 * Marked positions, a task item's needle and question and the
 * user's bookmarks (see view.h): kept sorted by position, then kind, so a
 * frame finds a position's mark by bisection. */
#include <stdlib.h>
#include <string.h>

#include "views/keymap.h"
#include "views/view.h"

static int by_pos(const void *a, const void *b) {
    const ViewMark *x = a, *y = b;
    return x->pos != y->pos ? (x->pos > y->pos) - (x->pos < y->pos) : (int)x->kind - (int)y->kind;
}

int view_set_marks(ViewModel *m, const ViewMark *marks, int n, Err *e) {
    ViewMark *c = NULL;
    if (n > 0 && !(c = malloc((size_t)n * sizeof *c))) return err_set(e, "out of memory for %d marks", n);
    if (n > 0) memcpy(c, marks, (size_t)n * sizeof *c), qsort(c, (size_t)n, sizeof *c, by_pos);
    int k = 0; /* one mark per position: the last of a run, the strongest after the sort */
    for (int i = 0; i < n; i++) {
        if (k > 0 && c[k - 1].pos == c[i].pos) k--;
        c[k++] = c[i];
    }
    free(m->marks), free(m->notes);
    m->marks = c, m->n_marks = k, m->notes = NULL, m->n_notes = 0;
    return 0;
}

/* The first mark at or after pos (n_marks if none). */
static int first_from(const ViewModel *m, int pos) {
    int lo = 0, hi = m->n_marks;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->marks[mid].pos < pos) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

ViewMarkKind view_mark_at(const ViewModel *m, int pos) { return view_mark_in(m, pos, pos + 1); }

ViewMarkKind view_mark_in(const ViewModel *m, int p0, int p1) {
    ViewMarkKind k = VIEW_MARK_NONE;
    for (int i = first_from(m, p0); i < m->n_marks && m->marks[i].pos < p1; i++)
        if (m->marks[i].kind > k) k = m->marks[i].kind;
    return k;
}

wchar_t view_mark_glyph(ViewMarkKind k, int ascii) {
    if (k == VIEW_MARK_NEEDLE) return ascii ? L'*' : L'\u25c6';
    if (k == VIEW_MARK_BOOKMARK) return ascii ? L'!' : L'\u2605';
    return k == VIEW_MARK_QUESTION ? L'?' : L' ';
}

const char *view_mark_name(ViewMarkKind k) {
    switch (k) {
    case VIEW_MARK_NEEDLE: return "needle";
    case VIEW_MARK_QUESTION: return "question";
    case VIEW_MARK_BOOKMARK: return "bookmark";
    default: return "";
    }
}
int view_has_mark(const ViewModel *m, ViewMarkKind k) {
    for (int i = 0; i < m->n_marks; i++)
        if (m->marks[i].kind == k) return 1;
    return 0;
}

/* The index of pos's bookmark in m->marks, or -1. */
static int bookmark_index(const ViewModel *m, int pos) {
    for (int i = first_from(m, pos); i < m->n_marks && m->marks[i].pos == pos; i++)
        if (m->marks[i].kind == VIEW_MARK_BOOKMARK) return i;
    return -1;
}

/* The index of pos's note in m->notes, or -1. */
static int note_index(const ViewModel *m, int pos) {
    for (int i = 0; i < m->n_notes; i++)
        if (m->notes[i].pos == pos) return i;
    return -1;
}

/* Forget pos's note, if it has one. */
static void note_drop(ViewModel *m, int pos) {
    int at = note_index(m, pos);
    if (at >= 0) m->notes[at] = m->notes[--m->n_notes];
}

int view_bookmark_toggle(ViewModel *m, int pos) {
    if (!view_trace(m, pos)) {
        view_set_status(m, "bookmark: no token under the cursor yet");
        return -1;
    }
    int at = bookmark_index(m, pos);
    if (at >= 0) {
        memmove(&m->marks[at], &m->marks[at + 1], (size_t)(m->n_marks - at - 1) * sizeof *m->marks);
        m->n_marks--;
        note_drop(m, pos);
        view_set_status(m, "bookmark at pos %d dropped", pos);
        return 0;
    }
    ViewMark *c = realloc(m->marks, (size_t)(m->n_marks + 1) * sizeof *c);
    if (!c) {
        view_set_status(m, "bookmark: out of memory");
        return -1;
    }
    m->marks = c;
    /* after any other mark of pos: the bookmark is the strongest kind */
    int i = first_from(m, pos + 1);
    memmove(&c[i + 1], &c[i], (size_t)(m->n_marks - i) * sizeof *c);
    c[i] = (ViewMark){pos, VIEW_MARK_BOOKMARK};
    m->n_marks++;
    char keys[2][8];
    view_set_status(m, "bookmark at pos %d (%s %s: next / previous bookmark)", pos,
                    view_key_name(view_command_key(VIEW_OP_BOOKMARK_NEXT), keys[0]),
                    view_key_name(view_command_key(VIEW_OP_BOOKMARK_PREV), keys[1]));
    return 1;
}

int view_bookmark_next(const ViewModel *m, int from, int dir) {
    int best = -1, wrap = -1; /* the nearest past from; failing that, the farthest the other way round */
    for (int i = 0; i < m->n_marks; i++) {
        if (m->marks[i].kind != VIEW_MARK_BOOKMARK) continue;
        int p = m->marks[i].pos;
        if (dir > 0 ? p > from : p < from) {
            if (best < 0 || (dir > 0 ? p < best : p > best)) best = p;
        } else if (wrap < 0 || (dir > 0 ? p < wrap : p > wrap)) wrap = p;
    }
    return best >= 0 ? best : wrap;
}

void view_bookmark_note_set(ViewModel *m, int pos, const char *note) {
    size_t n = note ? strlen(note) : 0;
    if (bookmark_index(m, pos) < 0) return;
    if (n == 0) { note_drop(m, pos); return; }
    int at = note_index(m, pos);
    if (at < 0) {
        ViewNote *c = realloc(m->notes, (size_t)(m->n_notes + 1) * sizeof *c);
        if (!c) return; /* the note stays unshown; the store keeps it */
        m->notes = c, at = m->n_notes++;
        m->notes[at].pos = pos;
    }
    if (n >= VIEW_NOTE_MAX) /* back to a character's first byte */
        for (n = VIEW_NOTE_MAX - 1; n > 0 && ((unsigned char)note[n] & 0xC0) == 0x80; n--) {}
    memcpy(m->notes[at].text, note, n);
    m->notes[at].text[n] = 0;
}

const char *view_bookmark_note(const ViewModel *m, int pos) {
    int at = bookmark_index(m, pos) < 0 ? -1 : note_index(m, pos);
    return at >= 0 ? m->notes[at].text : "";
}

void view_bookmark_jump(ViewModel *m, int dir) {
    int p = view_bookmark_next(m, m->cursor, dir), k = 0, n = 0;
    if (p < 0 || p >= m->n_hist) {
        char key[8];
        view_set_status(m, "no bookmarks: %s marks the cursor's position",
                        view_key_name(view_command_key(VIEW_ACT_BOOKMARK), key));
        return;
    }
    for (int i = 0; i < m->n_marks; i++)
        if (m->marks[i].kind == VIEW_MARK_BOOKMARK) n++, k += m->marks[i].pos <= p;
    m->cursor = p, m->follow = 0;
    const char *note = view_bookmark_note(m, p);
    view_set_status(m, "bookmark %d of %d: pos %d%s%.300s", k, n, p, note[0] ? ": " : "", note);
}

