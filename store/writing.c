/* writing.c — runs still being written: how far they are, and the line that says so.
 *
 * Runs still being written: how far they are, and the line
 * that says so wherever such a run is shown (`runs`, `compare`, the TUI). */
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

/* The positions a run will have. The runs row keeps no target length; a
 * re-evaluation (a run with a parent) feeds exactly the tokens its parent
 * had when it began, and the parent ended then, so its n_tokens is the
 * target. A run of its own generates until its steps, the context or a
 * BOS: no fixed target. */
static int run_target(Store *s, int64_t parent, int *target, Err *e) {
    *target = 0;
    if (parent <= 0) return 0;
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT n_tokens FROM runs WHERE run_id=?1", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, parent);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *target = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot read the parent run", e);
    return 0;
}

int store_run_progress(Store *s, int64_t run_id, StoreRunProgress *p, Err *e) {
    sqlite3_stmt *st;
    memset(p, 0, sizeof *p);
    if (store_prepare(s, "SELECT ahascope_status(status, writer_host, writer_pid, writer_start), n_tokens,"
                         " parent_run_id FROM runs WHERE run_id=?1", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    int64_t parent = 0;
    if (rc == SQLITE_ROW) {
        store_col_text(st, 0, p->status, sizeof p->status);
        p->n_tokens = sqlite3_column_int(st, 1);
        parent = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return err_set(e, "%s: no run %lld", s->path, (long long)run_id);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "cannot read the run", e);
    p->writing = strcmp(p->status, "running") == 0;
    return run_target(s, parent, &p->target, e);
}

int store_run_writing_line(int64_t run_id, const StoreRunProgress *p, char *buf, size_t cap) {
    if (cap) buf[0] = 0;
    if (!p->writing) return 0;
    if (p->target > p->n_tokens)
        snprintf(buf, cap, "run %lld is being written: %d of %d positions", (long long)run_id, p->n_tokens, p->target);
    else snprintf(buf, cap, "run %lld is being written: %d positions so far", (long long)run_id, p->n_tokens);
    return 1;
}

int store_print_writing(Store *s, FILE *out, Err *e) {
    int64_t *ids = NULL;
    int n = 0, cap = 0, rc;
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT run_id FROM runs WHERE status='running' ORDER BY run_id", &st, e)) return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            int64_t *grown = realloc(ids, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *ids);
            if (!grown) { rc = SQLITE_NOMEM; break; }
            ids = grown;
        }
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) { free(ids); return store_sql_err(s->db, s->path, "cannot list runs", e); }
    int fail = 0;
    for (int i = 0; i < n && !fail; i++) {
        StoreRunProgress p;
        char line[160];
        fail = store_run_progress(s, ids[i], &p, e);
        if (!fail && store_run_writing_line(ids[i], &p, line, sizeof line)) fprintf(out, "%s\n", line);
    }
    free(ids);
    return fail ? -1 : 0;
}
