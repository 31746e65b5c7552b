/* model.c — the view model's data: traces, selection, modes, SQL text, status; calls only keymap.c and stats.c.
 *
 * The view model's data: history of traces, attention strip, SQL
 * text, status message (see view.h). */
#include "views/view.h"

#include "views/keymap.h"
#include "views/metric.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void view_set_arch(ViewHeader *h, const char *arch) {
    static const char *const prefix[] = {"hf-", "gguf-"};
    for (size_t i = 0; arch && i < sizeof prefix / sizeof prefix[0]; i++)
        if (!strncmp(arch, prefix[i], strlen(prefix[i]))) arch += strlen(prefix[i]);
    snprintf(h->arch, sizeof h->arch, "%s", arch ? arch : "");
    char *cut = strchr(h->arch, ' '); /* a GGUF file's type mix */
    if (cut) *cut = '\0';
    size_t n = strlen(h->arch), k = strlen("_text");
    if (n > k && !strcmp(h->arch + n - k, "_text")) h->arch[n - k] = '\0';
}

int view_init(ViewModel *m, int n_layers, int n_heads, Err *e) {
    memset(m, 0, sizeof *m);
    if (n_layers <= 0 || n_heads <= 0 || n_layers > 4096 || n_heads > 4096)
        return err_set(e, "view: bad model shape %d layers × %d heads", n_layers, n_heads);
    m->n_layers = n_layers;
    m->n_heads = n_heads;
    m->cursor = -1;
    m->follow = 1;
    m->focus = VIEW_PANE_HEATMAP;
    m->text_return = VIEW_PANE_HEATMAP;
    m->time_row0 = m->time_tok0 = -1;
    m->metric = VIEW_METRIC_gate;
    m->agree_pred = VIEW_PRED_AHA;
    m->colour = VIEW_COLOUR_NONE;
    m->hdr.tau = 0.5f;
    m->hdr.theta_logit = decide_theta_logit(0.1);
    m->attn.pos = -1;
    m->pin_layer = m->pin_head = -1;
    m->why.pos = -1;
    m->span.lo = m->span.hi = -1;
    return 0;
}

/* The input line's text, draft and history: freed with the model that
 * owns them, so the editor (input.c) is a client of the model, never the
 * other way round. */
static void input_free(ViewModel *m) {
    free(m->input.text);
    free(m->input.draft);
    for (int i = 0; i < m->input.n_history; i++) free(m->input.history[i].text);
    memset(&m->input, 0, sizeof m->input);
}

void view_free(ViewModel *m) {
    view_clear_history(m);
    view_drop_parent(m);
    free(m->hist);
    free(m->attn.w);
    free(m->marks), free(m->notes);
    free(m->sql_query);
    free(m->sql_text);
    input_free(m);
    view_stats_free(m);
    free(m->span.head);
    memset(m, 0, sizeof *m);
    m->cursor = -1;
}

int view_push(ViewModel *m, const StepTrace *t, Err *e) {
    StepTrace *copy = trace_new_top(t->n_layers, t->n_heads, t->top_k);
    if (!copy) return err_set(e, "view: out of memory for a step");
    trace_copy(copy, t);
    return view_push_owned(m, copy, e);
}

int view_push_owned(ViewModel *m, StepTrace *t, Err *e) {
    if (t->n_layers != m->n_layers || t->n_heads != m->n_heads) {
        err_set(e, "view: trace shape %d×%d does not match the model's %d×%d", t->n_layers, t->n_heads,
                m->n_layers, m->n_heads);
        trace_free(t);
        return -1;
    }
    if (m->n_hist == m->cap_hist) {
        int cap = m->cap_hist ? m->cap_hist * 2 : 256;
        StepTrace **h = realloc(m->hist, (size_t)cap * sizeof *h);
        if (!h) { trace_free(t); return err_set(e, "view: out of memory for %d steps", cap); }
        m->hist = h;
        m->cap_hist = cap;
    }
    m->hist[m->n_hist++] = t;
    if (m->follow || m->cursor < 0) m->cursor = m->n_hist - 1;
    return view_stats_sync(m, e);
}

/* The parent's traces are the model's to free, like its own history, so
 * freeing the model needs no call into pin.c, which sets them aside. */
void view_drop_parent(ViewModel *m) {
    for (int i = 0; i < m->parent.n; i++) trace_free(m->parent.hist[i]);
    free(m->parent.hist);
    m->parent.hist = NULL, m->parent.n = m->parent.cap = 0, m->parent.label[0] = 0, m->parent.other = 0;
}

void view_clear_history(ViewModel *m) {
    for (int i = 0; i < m->n_hist; i++) trace_free(m->hist[i]);
    m->n_hist = 0;
    m->cursor = -1;
    m->follow = 1;
    m->attn.pos = -1;
    m->why.pos = -1;
    m->stats.n = 0;
    m->rescore.n = 0;
    m->hist_gen++;
}

/* 1 if needle matches text at byte at: byte for byte, or ASCII letters in
 * either case when fold. */
static int match_at(const char *text, size_t len, size_t at, const char *needle, size_t nl, int fold) {
    if (at + nl > len) return 0;
    for (size_t k = 0; k < nl; k++) {
        unsigned char a = (unsigned char)text[at + k], b = (unsigned char)needle[k];
        if (a != b && !(fold && a < 0x80 && b < 0x80 && tolower(a) == tolower(b))) return 0;
    }
    return 1;
}

int view_find_text(const ViewModel *m, const char *needle, int from, int dir) {
    size_t nl = needle ? strlen(needle) : 0, len = 0;
    if (!nl || m->n_hist <= 0) return -1;
    int fold = 1; /* case matters only when the needle asks for it with a capital */
    for (size_t k = 0; k < nl; k++) fold &= !isupper((unsigned char)needle[k]);
    size_t *start = malloc(((size_t)m->n_hist + 1) * sizeof *start);
    if (!start) return -1;
    for (int i = 0; i < m->n_hist; i++) start[i] = len, len += strlen(m->hist[i]->piece);
    start[m->n_hist] = len;
    char *text = malloc(len + 1);
    int found = -1;
    if (text) {
        for (int i = 0; i < m->n_hist; i++) memcpy(text + start[i], m->hist[i]->piece, start[i + 1] - start[i]);
        /* the stream as one text: a match may run on across token boundaries;
         * it belongs to the token it starts in */
        for (int k = 1; k <= m->n_hist && found < 0; k++) {
            int i = (((from < 0 && dir > 0 ? -1 : from) + dir * k) % m->n_hist + m->n_hist) % m->n_hist;
            for (size_t at = start[i]; at < start[i + 1] && found < 0; at++)
                if (match_at(text, len, at, needle, nl, fold)) found = i;
        }
    }
    free(text);
    free(start);
    return found;
}

const StepTrace *view_trace(const ViewModel *m, int i) {
    return (i >= 0 && i < m->n_hist) ? m->hist[i] : NULL;
}

int view_set_attention(ViewModel *m, int pos, int layer, int head, const float *w, int n,
                       int window, int sinks, Err *e) {
    if (n < 0) return err_set(e, "view: negative attention length");
    if (n > m->attn.cap) {
        float *p = realloc(m->attn.w, (size_t)n * sizeof *p);
        if (!p) return err_set(e, "view: out of memory for %d attention weights", n);
        m->attn.w = p;
        m->attn.cap = n;
    }
    if (n) memcpy(m->attn.w, w, (size_t)n * sizeof *w);
    m->attn.n = n;
    m->attn.pos = pos;
    m->attn.layer = layer;
    m->attn.head = head;
    m->attn.window = window;
    m->attn.sinks = sinks;
    return 0;
}

int view_attention_wanted(const ViewModel *m, int *pos, int *layer, int *head) {
    const StepTrace *t = view_trace(m, m->cursor);
    if (!m->inspector_open || !t) return 0;
    if (m->attn.pos == t->pos && m->attn.layer == m->sel_layer && m->attn.head == m->sel_head)
        return 0;
    *pos = t->pos;
    *layer = m->sel_layer;
    *head = m->sel_head;
    return 1;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* 1 if the text's second line is a table rule (dashes and spaces only):
 * then its first two lines are the header to keep on screen. */
static int table_header_lines(const char *t) {
    const char *nl = strchr(t, '\n');
    if (!nl || nl[1] != '-') return 0;
    for (const char *p = nl + 1; *p && *p != '\n'; p++)
        if (*p != '-' && *p != ' ') return 0;
    return 2;
}

/* The widest line of t, in characters (UTF-8 continuation bytes not counted). */
static int widest_line(const char *t) {
    int w = 0, best = 0;
    for (; *t; t++) {
        if (*t == '\n') w = 0;
        else if (((unsigned char)*t & 0xC0) != 0x80 && ++w > best) best = w;
    }
    return best;
}

int view_set_sql(ViewModel *m, const char *query, const char *text, Err *e) {
    return view_set_text(m, "sql (read-only)", query, text, e);
}

int view_set_text(ViewModel *m, const char *title, const char *query, const char *text, Err *e) {
    char *q = dup_str(query ? query : "");
    char *t = dup_str(text ? text : "");
    if (!q || !t) {
        free(q);
        free(t);
        return err_set(e, "view: out of memory for the SQL result");
    }
    free(m->sql_query);
    free(m->sql_text);
    m->sql_query = q;
    m->sql_text = t;
    m->sql_lines = 1;
    for (const char *p = t; *p; p++)
        if (*p == '\n' && p[1]) m->sql_lines++;
    m->sql_scroll = m->sql_hscroll = 0;
    m->sql_pinned = table_header_lines(t);
    m->sql_width = widest_line(t);
    snprintf(m->sql_title, sizeof m->sql_title, "%s", title ? title : "");
    m->sql_open = 1;
    if (m->focus != VIEW_PANE_SQL) m->text_return = m->focus;
    m->focus = VIEW_PANE_SQL;
    return 0;
}

void view_sql_fit(ViewModel *m, const Layout *lay) {
    const ViewRect *r = &lay->pane[VIEW_PANE_SQL];
    /* inside the box, below the header: a table's further down, when scrolled into it, takes two lines */
    int head = m->sql_pinned ? m->sql_pinned : m->sql_text && strstr(m->sql_text, "\n--") ? 2 : 0;
    m->sql_page = r->h > 2 + head ? r->h - 2 - head : 0;
    m->sql_cols = r->w > 2 ? r->w - 2 : 0;
}

int view_help_fit(ViewModel *m, const Layout *lay) {
    int page = lay->help.h > 2 ? lay->help.h - 2 : 0, n = view_help_count();
    int changed = page != m->help_page;
    m->help_page = page;
    int last = page > 0 && n > page ? n - page : 0;
    if (m->help_scroll > last) m->help_scroll = last;
    return changed && m->help_open;
}

void view_set_status(ViewModel *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->status, sizeof m->status, fmt, ap);
    va_end(ap);
}

void view_set_progress(ViewModel *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->progress, sizeof m->progress, fmt, ap);
    va_end(ap);
}

void view_clear_progress(ViewModel *m) { m->progress[0] = 0; }

LayoutOpts view_layout_opts(const ViewModel *m) {
    LayoutOpts o = {
        .n_layers = m->n_layers,
        .n_heads = m->n_heads,
        .inspector = m->inspector_open,
        .sql = m->sql_open,
        .half_blocks = !m->ascii && !m->mono && m->colour != VIEW_COLOUR_NONE,
        .help_lines = view_help_count(),
        .keybar = 1,
    };
    return o;
}
