/* bookmarks.c — the positions a user bookmarked in the TUI, with their notes, kept beside the run.
 *
 * One row of the bookmarks table (schema version 8) a bookmark, written in
 * a short transaction of its own, so that a bookmark is kept the moment it
 * is set and outlives the session that set it. */
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

/* Whether run_id has a position pos (1), not (0), or SQLite failed (-1, e set). */
static int has_position(Store *s, int64_t run_id, int pos, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT n_tokens FROM runs WHERE run_id=?1", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot read the run", e);
    if (n < 0) return err_set(e, "%s: no run %lld", s->path, (long long)run_id), 0;
    if (pos < 0 || pos >= n)
        return err_set(e, "%s: run %lld has no position %d (%lld recorded)", s->path, (long long)run_id, pos,
                       (long long)n), 0;
    return 1;
}

/* The length of note cut to fit the table's bound at a UTF-8 character's start. */
static int note_len(const char *note) {
    size_t n = strlen(note);
    if (n < STORE_NOTE_MAX) return (int)n;
    n = STORE_NOTE_MAX - 1;
    while (n > 0 && ((unsigned char)note[n] & 0xC0) == 0x80) n--;
    return (int)n;
}

int store_bookmark_put(Store *s, int64_t run_id, int pos, const char *note, Err *e) {
    if (s->mode != STORE_WRITE) return err_set(e, "%s: opened read-only", s->path);
    if (s->version < 8) return err_set(e, "%s: schema version %d keeps no bookmarks", s->path, s->version);
    int has = has_position(s, run_id, pos, e);
    if (has <= 0) return -1;
    sqlite3_stmt *st;
    char now[32];
    store_now(now);
    if (store_prepare(s, "INSERT OR REPLACE INTO bookmarks(run_id, pos, note, created_at) VALUES(?1, ?2, ?3, ?4)", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, pos);
    if (note && *note) sqlite3_bind_text(st, 3, note, note_len(note), SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, now, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_sql_err(s->db, s->path, "cannot keep the bookmark", e);
}

int store_bookmark_drop(Store *s, int64_t run_id, int pos, Err *e) {
    if (s->mode != STORE_WRITE) return err_set(e, "%s: opened read-only", s->path);
    sqlite3_stmt *st;
    if (store_prepare(s, "DELETE FROM bookmarks WHERE run_id=?1 AND pos=?2", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, pos);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_sql_err(s->db, s->path, "cannot drop the bookmark", e);
}

int store_bookmarks(Store *s, int64_t run_id, StoreBookmark **out, Err *e) {
    sqlite3_stmt *st;
    *out = NULL;
    if (store_prepare(s, "SELECT pos, note FROM bookmarks WHERE run_id=?1 ORDER BY pos LIMIT 100000", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            StoreBookmark *more = realloc(*out, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *more);
            if (!more) { rc = SQLITE_NOMEM; break; }
            *out = more;
        }
        (*out)[n].pos = sqlite3_column_int(st, 0);
        store_col_text(st, 1, (*out)[n].note, sizeof (*out)[n].note);
        n++;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return n;
    free(*out), *out = NULL;
    return rc == SQLITE_NOMEM ? err_set(e, "%s: out of memory for bookmarks", s->path)
                              : store_sql_err(s->db, s->path, "cannot read the bookmarks", e);
}
