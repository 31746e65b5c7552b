/* yank_ctl.c — `y` (see yank_ctl.h). */
#include "app/tui/yank_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/files.h"
#include "views/keep.h"
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
    if (text_pane && (csv || whole_text(t))) return *what = csv ? "text pane as CSV" : "summary", view_text_table(m, csv);
    if (csv) return *what = "table as CSV (H, A or a focused text pane: y copies the inspector)", NULL;
    return view_yank(m, what);
}

void tui_yank(Tui *t, int csv) {
    const char *what = "";
    char *raw = yank_what(t, csv, &what);
    char *text = raw ? view_yank_clean(raw, t->m.ascii) : NULL;
    free(raw);
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
    /* OSC 52 moves no cursor: curses' picture of the screen stays true */
    char *osc = isatty(STDOUT_FILENO) ? tui_yank_osc52(text, strlen(text)) : NULL;
    if (osc) fputs(osc, stdout), fflush(stdout);
    view_set_status(&t->m, "yanked the %s (%d lines) to %s%s", what, lines, path, osc ? " and the clipboard" : "");
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
    else if (t->pat.open && t->pat.w) snprintf(base, sizeof base, "ahascope%s-L%dH%d-pattern", run, t->pat.layer, t->pat.head);
    else {
        view_set_status(&t->m, "save table: open H (heads) or A (pattern) first%s", t->pat.open ? ": the pattern is not computed yet" : "");
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

void tui_paths(Tui *t) {
    ViewPaths p;
    view_paths(&t->m, &p);
    char *text = view_paths_text(&t->m, &p);
    Err e;
    if (!text || view_set_text(&t->m, "paths to the needle", "", text, &e))
        view_set_status(&t->m, "paths: %s", text ? e.msg : "out of memory");
    else if (p.n > 0) {
        const ViewPath *q = &p.top[0];
        char hop2[24] = "direct";
        if (q->l2 >= 0) snprintf(hop2, sizeof hop2, "L%d H%d", q->l2, q->h2);
        view_set_status(&t->m, "paths to the %s from pos %d: heaviest L%d H%d > pos %d > %s, %.3f (top-k: a lower bound)",
                        view_mark_name(p.kind), p.pos, q->l1, q->h1, q->j, hop2, q->w);
    }
    free(text);
    t->dirty = 1;
}
