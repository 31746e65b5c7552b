/* yank.c — the text `y` copies out (see yank.h). */
#include "views/yank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/explain.h"
#include "views/paint.h"

/* Columns a recorded or exact "where it looked" line may take: all of it. */
#define YANK_WIDE 100000

char *view_yank_inspector(const ViewModel *m) {
    const StepTrace *t = view_trace(m, m->cursor);
    if (!t) return NULL;
    int cell = m->sel_layer * m->n_heads + m->sel_head;
    char *text = NULL, label[TRACE_PIECE_MAX * 4];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    char model[sizeof m->hdr.model * 4], policy[sizeof m->hdr.policy * 4];
    view_piece_label(t->piece, m->ascii, label, sizeof label);
    /* a replayed file's model name is anybody's text: one line, as the header shows it */
    view_piece_label(m->hdr.model, m->ascii, model, sizeof model);
    view_piece_label(m->hdr.policy, m->ascii, policy, sizeof policy);
    fprintf(f, "L%d H%d @ pos %d \"%s\"\n", m->sel_layer, m->sel_head, t->pos, label);
    fprintf(f, "%s  policy %s  w %d  sinks %d  tau %.2f  theta %.4f (log-odds %.3f)\n", model, policy,
            m->hdr.window, m->hdr.sinks, m->hdr.tau, decide_prob(m->hdr.theta_logit), m->hdr.theta_logit);
    ViewExplain x;
    view_explain(m, t, cell, &x);
    for (int i = 0; i < x.n; i++) fprintf(f, "%s\n", x.line[i]);
    const ViewAttn *at = &m->attn;
    char *where = malloc(4 * VIEW_EXPLAIN_CAP + YANK_WIDE);
    if (where && at->pos == t->pos && at->layer == m->sel_layer && at->head == m->sel_head && at->n > 0) {
        ViewAttnSplit sp;
        view_attn_split(at, &sp);
        view_explain_attn(m, at, &sp, YANK_WIDE, where, 4 * VIEW_EXPLAIN_CAP + YANK_WIDE);
        fprintf(f, "%s\n", where);
    } else if (where && view_explain_recorded(m, t, cell, YANK_WIDE, where, 4 * VIEW_EXPLAIN_CAP + YANK_WIDE)) {
        size_t n = strlen(where);
        if (n > 0 && where[n - 1] != ':') fprintf(f, "%s\n", where); /* a heading with nothing under it says nothing */
    }
    free(where);
    if (fclose(f)) {
        free(text);
        return NULL;
    }
    return text;
}

/* Line i of text (up to its newline) as a new string, or NULL past the end. */
static char *line_copy(const char *text, int i) {
    const char *p = text;
    for (; i > 0 && p; i--) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
    if (!p || !*p) return NULL;
    size_t n = strcspn(p, "\n");
    char *s = malloc(n + 1);
    if (s) memcpy(s, p, n), s[n] = 0;
    return s;
}

char *view_yank_row(const ViewModel *m) {
    if (!m->sql_open || !m->sql_text) return NULL;
    char *row = line_copy(m->sql_text, m->sql_pinned + m->sql_scroll);
    int below = m->sql_pinned ? -1 : view_sql_header_above(m->sql_text, m->sql_scroll); /* a table further down */
    char *head = row && (m->sql_pinned > 0 || below >= 0) ? line_copy(m->sql_text, below >= 0 ? below : 0) : NULL;
    char *s = row ? malloc(strlen(row) + (head ? strlen(head) : 0) + 3) : NULL;
    if (s && head) sprintf(s, "%s\n%s\n", head, row);
    else if (s) sprintf(s, "%s\n", row);
    free(head);
    free(row);
    return s;
}

char *view_yank(const ViewModel *m, const char **what) {
    int row = m->sql_open && m->focus == VIEW_PANE_SQL;
    *what = row ? "row" : "inspector";
    return row ? view_yank_row(m) : view_yank_inspector(m);
}

char *view_yank_clean(const char *text, int ascii) {
    char *out = malloc(2 * strlen(text) + 1); /* a stand-in never takes more than 2 bytes per source byte */
    if (!out) return NULL;
    size_t n = 0;
    for (const char *s = text; *s;) {
        const char *from = s;
        if (*s == '\n' || *s == '\t') { /* the block's own lines and the tables' columns */
            out[n++] = *s++;
            continue;
        }
        int cw;
        wchar_t wc = view_next_glyph(&s, ascii, &cw);
        int control = (unsigned char)*from < 0x20 || *from == 0x7f;
        if (cw == 0) continue; /* zero-width marks: the panes drop them too */
        if (control) n += (size_t)sprintf(out + n, "%s", ascii ? "." : "\xc2\xb7");
        else if (wc == L'?' && *from != '?') out[n++] = '?';
        else memcpy(out + n, from, (size_t)(s - from)), n += (size_t)(s - from);
    }
    out[n] = 0;
    return out;
}
