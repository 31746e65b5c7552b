/* yank_ctl.c — `y` (see yank_ctl.h). */
#include "app/tui/yank_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/files.h"
#include "views/keep.h"
#include "views/needle.h"
#include "views/path.h"
#include "views/yank.h"

const char *tui_yank_path(const char *env) { return env && *env ? env : "ahascope-yank.txt"; }

char *tui_yank_osc52(const char *text, size_t n) {
    static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *s = malloc(8 + (n + 2) / 3 * 4 + 2);
    if (!s) return NULL;
    char *o = s + sprintf(s, "\033]52;c;");
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)text[i] << 16;
        if (i + 1 < n) v |= (unsigned char)text[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)text[i + 2];
        *o++ = B64[v >> 18 & 63];
        *o++ = B64[v >> 12 & 63];
        *o++ = i + 1 < n ? B64[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? B64[v & 63] : '=';
    }
    *o++ = '\a';
    *o = 0;
    return s;
}

/* Write text to path whole the way every output file is written: a fresh
 * temporary renamed onto it, so a symlink there is replaced, not followed,
 * and a FIFO or device is refused without opening it (never blocks). */
static int write_file(const char *path, const char *text, Err *e) {
    FileAtomic a;
    if (!file_atomic_open(&a, path, e)) return -1;
    if (fputs(text, a.f) >= 0) return file_atomic_commit(&a, e);
    file_atomic_abort(&a);
    return err_set(e, "%s: write failed", path);
}

/* The text pane's summary (R) is copied whole; another text pane's row, as before. */
static int whole_text(const Tui *t) {
    size_t n = strlen(t->m.sql_title);
    return n >= 7 && !strcmp(t->m.sql_title + n - 7, "summary");
}

/* What y (csv 0) or Y (csv 1) copies: the table on top, H over A over a
 * focused text pane; else, as text, the inspector or the pane's row. */
static char *yank_what(Tui *t, int csv, const char **what) {
    const ViewModel *m = &t->m;
    int text_pane = m->sql_open && m->focus == VIEW_PANE_SQL;
    if (t->heads.open) return *what = csv ? "heads table as CSV" : "heads table", view_heads_table(&t->heads, m, csv);
    if (t->pat.open) return *what = csv ? "pattern as CSV" : "pattern's rows", view_pattern_table(&t->pat, m, csv);
    if (text_pane && (csv || whole_text(t)))
        return *what = csv ? "text pane as CSV" : "summary", view_text_table(m, csv);
    if (csv) return *what = NULL, NULL;
    return view_yank(m, what);
}

void tui_yank(Tui *t, int csv) {
    const char *what = "";
    char *raw = yank_what(t, csv, &what);
    char *text = raw ? view_yank_clean(raw, t->m.ascii) : NULL;
    free(raw);
    if (!text && !what) {
        view_set_status(&t->m, "yank: no table to copy as CSV: open H, A or a text pane (y copies the inspector)");
        return;
    }
    if (!text) {
        view_set_status(&t->m, "yank: no %s to copy yet", what);
        return;
    }
    const char *path = tui_yank_path(getenv("AHASCOPE_YANK"));
    Err e;
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    if (write_file(path, text, &e)) {
        view_set_status(&t->m, "yank: %s", e.msg);
        free(text);
        return;
    }
    /* OSC 52 moves no cursor: curses' picture of the screen stays true. A long pattern's CSV
     * would hold the terminal up for seconds (and most terminals cap what they take): file only */
    size_t n = strlen(text);
    char *osc = isatty(STDOUT_FILENO) && n <= TUI_YANK_CLIP_MAX ? tui_yank_osc52(text, n) : NULL;
    if (osc) fputs(osc, stdout), fflush(stdout);
    view_set_status(&t->m, "yanked the %s (%d lines) to %s%s", what, lines, path,
                    osc ? " and the clipboard" : n > TUI_YANK_CLIP_MAX ? " (too long for the clipboard)" : "");
    free(osc);
    free(text);
}

/* Write text to path, or say why not in e. */
static int keep_one(const char *path, char *text, Err *e) {
    if (!text) return err_set(e, "%s: out of memory", path);
    int rc = write_file(path, text, e);
    free(text);
    return rc;
}

void tui_keep_files(Tui *t) {
    const ViewModel *m = &t->m;
    char base[96], csv[128], svg[128], cwd[1024];
    char run[32] = "";
    if (m->hdr.run_id > 0) snprintf(run, sizeof run, "-run%lld", m->hdr.run_id);
    if (t->heads.open) snprintf(base, sizeof base, "ahascope%s-heads", run);
    else if (t->pat.open && t->pat.w)
        snprintf(base, sizeof base, "ahascope%s-L%dH%d-pattern", run, t->pat.layer, t->pat.head);
    else {
        view_set_status(&t->m, "save table: %s", t->pat.open ? "the pattern is not computed yet"
                                                             : "open H (heads) or A (pattern) first");
        return;
    }
    snprintf(csv, sizeof csv, "%s.csv", base);
    snprintf(svg, sizeof svg, "%s.svg", base);
    Err e;
    int heads = t->heads.open;
    if (keep_one(csv, heads ? view_heads_table(&t->heads, m, 1) : view_pattern_table(&t->pat, m, 1), &e) ||
        keep_one(svg, heads ? view_heads_svg(&t->heads, m) : view_pattern_svg(&t->pat, m), &e)) {
        view_set_status(&t->m, "save table: %s", e.msg);
        return;
    }
    view_set_status(&t->m, "saved %s and %s in %s", csv, svg, getcwd(cwd, sizeof cwd) ? cwd : ".");
}

/* Show the paths at the cursor, with (b) from rows when given, else note why not. */
static void show_paths(Tui *t, const ViewRows *rows, const char *note) {
    ViewPaths p;
    ViewRollout r;
    view_paths(&t->m, &p);
    int have = rows && view_rollout(&t->m, rows, &r) == 0;
    char *text = view_paths_text(&t->m, &p, have ? &r : NULL, note);
    Err e;
    if (!text || view_set_text(&t->m, "paths to the needle", "", text, &e))
        view_set_status(&t->m, "paths: %s", text ? e.msg : "out of memory");
    else if (p.n > 0) {
        const ViewPath *q = &p.top[0];
        char hop2[24] = "direct";
        if (q->l2 >= 0) snprintf(hop2, sizeof hop2, "L%d H%d", q->l2, q->h2);
        if (have) /* the rollout first: at 80 columns the status line keeps what it can */
            view_set_status(&t->m, "paths from pos %d: rollout %.3f on the %s; top-k: L%d H%d > %d > %s %.3f", p.pos,
                            r.total, view_mark_name(p.kind), q->l1, q->h1, q->j, hop2, q->w);
        else
            view_set_status(&t->m, "paths from pos %d: L%d H%d > %d > %s %.3f (top-k product, a lower bound)", p.pos,
                            q->l1, q->h1, q->j, hop2, q->w);
    }
    if (have) view_rollout_free(&r);
    free(text);
    t->dirty = 1;
}

void tui_paths(Tui *t) {
    const StepTrace *cur = view_trace(&t->m, t->m.cursor);
    int live = !t->replay && cur && view_weight_kind(&t->m) != VIEW_MARK_NONE;
    show_paths(t, NULL, t->replay ? "needs every head's full rows, which a replay cannot compute (the queries are "
                                    "not recorded): open the run live"
                                  : "computing every head's full rows...");
    t->paths_pending = live;
    if (live) t->paths_pos = cur->pos, tui_worker_request_rows(&t->w, cur->pos + 1);
}

/* Why the worker gave no rows (rc of tui_worker_take_rows). */
static const char *rows_refused(int rc) {
    switch (rc) {
    case -1: return "not computed: this session keeps no queries";
    case -2: return "not computed: every head's full rows would take over 64 MiB (a shorter run or a smaller model)";
    default: return "not computed: out of memory";
    }
}

void tui_paths_poll(Tui *t) {
    float *w = NULL;
    int n, rc;
    if (!t->paths_pending || t->replay || !tui_worker_take_rows(&t->w, &w, &n, &rc)) return;
    t->paths_pending = 0;
    const StepTrace *cur = view_trace(&t->m, t->m.cursor);
    int same = cur && cur->pos == t->paths_pos && t->m.sql_open && !strcmp(t->m.sql_title, "paths to the needle");
    if (same) {
        ViewRows rows = {n, w};
        show_paths(t, rc == 0 ? &rows : NULL, rows_refused(rc));
    }
    free(w);
}
