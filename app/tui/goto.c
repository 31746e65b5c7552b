/* goto.c — the go-to parser and the move (see goto.h). */
#include "app/tui/goto.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *skip_space(const char *s) {
    while (isspace((unsigned char)*s)) s++;
    return s;
}

/* A decimal number at *s (no sign); 1 and *s past it, or 0. Values past
 * INT_MAX read as INT_MAX: out of range either way. */
static int number(const char **s, int *v) {
    const char *p = *s;
    if (!isdigit((unsigned char)*p)) return 0;
    long long x = 0;
    while (isdigit((unsigned char)*p)) {
        if (x < INT_MAX) x = x * 10 + (*p - '0');
        p++;
    }
    *v = x > INT_MAX ? INT_MAX : (int)x;
    *s = p;
    return 1;
}

/* "L15 H31", "l15h31", "L15, H31": after the L; *rest past it. */
static int head_lh(const char *p, int *l, int *h, const char **rest) {
    if (!number(&p, l)) return 0;
    p = skip_space(p);
    if (*p == ',') p = skip_space(p + 1);
    if (*p != 'H' && *p != 'h') return 0;
    p++;
    if (!number(&p, h)) return 0;
    *rest = skip_space(p);
    return 1;
}

/* "15.31"; *rest past it. */
static int head_dot(const char *p, int *l, int *h, const char **rest) {
    if (!number(&p, l) || *p++ != '.' || !number(&p, h)) return 0;
    *rest = skip_space(p);
    return 1;
}

/* 1 if s begins the position form: "pos" then a space, a digit or the end. */
static int is_pos_form(const char *s) {
    return !strncasecmp(s, "pos", 3) && (isspace((unsigned char)s[3]) || isdigit((unsigned char)s[3]) || !s[3]);
}

/* The position form at s ("pos 1200"): TUI_GOTO_POS, or TUI_GOTO_BAD
 * naming what is wrong (whole names the typed line). */
static TuiGoto parse_pos(const char *s, const char *whole, int n_pos) {
    TuiGoto g = {.kind = TUI_GOTO_BAD};
    const char *p = skip_space(s + 3);
    int pos;
    if (!number(&p, &pos) || *skip_space(p)) {
        snprintf(g.why, sizeof g.why, "go to: \"%.60s\" is not a position: write pos 1200", whole);
        return g;
    }
    if (pos >= n_pos) {
        if (n_pos > 0) snprintf(g.why, sizeof g.why, "go to: no pos %d (positions 0-%d)", pos, n_pos - 1);
        else snprintf(g.why, sizeof g.why, "go to: no pos %d (no positions yet)", pos);
        return g;
    }
    return (TuiGoto){.kind = TUI_GOTO_POS, .pos = pos};
}

TuiGoto tui_goto_parse(const char *s, int n_layers, int n_heads, int n_pos) {
    TuiGoto g = {.kind = TUI_GOTO_BAD};
    s = skip_space(s ? s : "");
    if (!*s) {
        snprintf(g.why, sizeof g.why, "go to: type L15 H31, 15.31, pos 1200, L15 H31 pos 1200 or a token's text");
        return g;
    }
    int l, h;
    const char *rest = "";
    int lh = (*s == 'L' || *s == 'l') && isdigit((unsigned char)s[1]);
    if (lh || isdigit((unsigned char)*s)) {
        if ((lh ? head_lh(s + 1, &l, &h, &rest) : head_dot(s, &l, &h, &rest)) && (!*rest || is_pos_form(rest))) {
            if (l >= n_layers || h >= n_heads) {
                snprintf(g.why, sizeof g.why, "go to: no head L%d H%d (the model has L0-L%d, H0-H%d)", l, h,
                         n_layers - 1, n_heads - 1);
                return g;
            }
            TuiGoto at = {.kind = TUI_GOTO_POS, .pos = -1};
            if (*rest) at = parse_pos(rest, s, n_pos); /* a head at a position: "L15 H31 pos 1200" */
            if (at.kind == TUI_GOTO_BAD) return at;
            return (TuiGoto){.kind = TUI_GOTO_HEAD, .layer = l, .head = h, .pos = at.pos};
        }
        if (lh) {
            snprintf(g.why, sizeof g.why, "go to: \"%.60s\" is not a head: write L15 H31 or 15.31", s);
            return g;
        }
        /* a bare number is a token's text ("1200" in the prompt) unless it began a head */
        const char *p = s;
        if (number(&p, &l) && *p == '.') {
            snprintf(g.why, sizeof g.why, "go to: \"%.60s\" is not a head: write 15.31", s);
            return g;
        }
    }
    if (is_pos_form(s)) return parse_pos(s, s, n_pos);
    return (TuiGoto){.kind = TUI_GOTO_TEXT};
}

/* 1 if the text from byte `at` of position i's token on begins with needle. */
static int matches_at(const ViewModel *m, int i, const char *at, const char *needle) {
    const char *piece = at;
    i++;
    for (const char *n = needle; *n; n++, piece++) {
        while (!*piece) {
            if (i >= m->n_hist) return 0;
            piece = m->hist[i++]->piece;
        }
        if (tolower((unsigned char)*piece) != tolower((unsigned char)*n)) return 0;
    }
    return 1;
}

int tui_goto_find_text(const ViewModel *m, const char *needle, int from) {
    if (!needle || !*needle || m->n_hist <= 0) return -1;
    for (int k = 1; k <= m->n_hist; k++) {
        int i = ((from + k) % m->n_hist + m->n_hist) % m->n_hist;
        for (const char *at = m->hist[i]->piece; *at; at++)
            if (matches_at(m, i, at, needle)) return i;
    }
    return -1;
}

int tui_goto_apply(ViewModel *m, const char *s) {
    TuiGoto g = tui_goto_parse(s, m->n_layers, m->n_heads, m->n_hist);
    switch (g.kind) {
    case TUI_GOTO_HEAD:
        m->sel_layer = g.layer, m->sel_head = g.head;
        if (g.pos < 0) {
            view_set_status(m, "L%d H%d", g.layer, g.head);
            return 1;
        }
        /* a head at a position asks about one decision: the inspector explains it */
        m->cursor = g.pos, m->follow = 0;
        m->inspector_open = 1;
        if (m->focus == VIEW_PANE_BARS) m->focus = VIEW_PANE_INSPECTOR; /* the inspector takes the bars' place */
        view_set_status(m, "L%d H%d @ pos %d", g.layer, g.head, g.pos);
        return 1;
    case TUI_GOTO_POS:
        m->cursor = g.pos, m->follow = 0;
        view_set_status(m, "pos %d", g.pos);
        return 1;
    case TUI_GOTO_TEXT: {
        const char *t = skip_space(s);
        int i = tui_goto_find_text(m, t, m->cursor);
        if (i < 0) {
            view_set_status(m, "go to: no token text holds \"%.60s\"", t);
            return 0;
        }
        m->cursor = i, m->follow = 0;
        view_set_status(m, "\"%.60s\" at pos %d", t, i);
        return 1;
    }
    default:
        view_set_status(m, "%s", g.why);
        return 0;
    }
}

/* The n-th whitespace-separated field of line (up to its end) into out. */
static int field(const char *line, int n, char *out, size_t cap) {
    const char *p = line;
    for (int i = 0;; i++) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p || *p == '\n') return 0;
        const char *b = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
        if (i == n) {
            snprintf(out, cap, "%.*s", (int)(p - b), b);
            return 1;
        }
    }
}

/* The index of the field named name in header, or -1. */
static int column(const char *header, const char *name) {
    char f[64];
    for (int i = 0; field(header, i, f, sizeof f); i++)
        if (!strcasecmp(f, name)) return i;
    return -1;
}

static int field_int(const char *row, int col, int *v) {
    char f[64];
    const char *p = f;
    return col >= 0 && field(row, col, f, sizeof f) && number(&p, v) && !*p;
}

/* "L3 H5", "L3H5" anywhere in row; "pos 12" (or "@ 12" after it). */
static int scan_row(const char *row, int *layer, int *head, int *pos) {
    int found = 0;
    for (const char *p = row; *p && *p != '\n' && !found; p++) {
        if ((p != row && isalnum((unsigned char)p[-1])) || (*p != 'L' && *p != 'l')) continue;
        const char *q = p + 1;
        if (!number(&q, layer)) continue;
        q = skip_space(q);
        if ((*q == 'H' || *q == 'h') && (q++, number(&q, head))) found = 1;
    }
    if (!found) return 0;
    for (const char *p = row; *p && *p != '\n'; p++)
        if (!strncasecmp(p, "pos", 3) && (p == row || !isalnum((unsigned char)p[-1]))) {
            const char *q = skip_space(p + 3);
            if (number(&q, pos)) return 1;
        }
    return 1;
}

int tui_goto_row(const char *header, const char *row, int *layer, int *head, int *pos) {
    *pos = -1;
    if (header) {
        int cl = column(header, "layer"), ch = column(header, "head");
        if (field_int(row, cl, layer) && field_int(row, ch, head)) {
            if (!field_int(row, column(header, "pos"), pos)) *pos = -1;
            return 1;
        }
    }
    return scan_row(row, layer, head, pos);
}

/* The start of line i of text, or NULL past its end. */
static const char *line_at(const char *text, int i) {
    for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (i-- == 0) return *p ? p : NULL;
    return NULL;
}

/* 1 if line is a table's rule: dashes and spaces only, a dash first. */
static int is_rule(const char *line) {
    if (*line != '-') return 0;
    for (; *line && *line != '\n'; line++)
        if (*line != '-' && *line != ' ') return 0;
    return 1;
}

int tui_goto_text_row(ViewModel *m) {
    if (!m->sql_text) return 0;
    int i = m->sql_pinned + m->sql_scroll;
    const char *row = line_at(m->sql_text, i), *header = NULL;
    if (!row) return 0;
    /* the table the row belongs to: the nearest rule above it, its header above that */
    for (int k = i - 1; k >= 1 && !header; k--) {
        const char *l = line_at(m->sql_text, k);
        if (!*l || *l == '\n') break; /* a blank line ends a table */
        if (is_rule(l)) header = line_at(m->sql_text, k - 1);
    }
    int layer, head, pos;
    if (!tui_goto_row(header, row, &layer, &head, &pos) || layer >= m->n_layers || head >= m->n_heads) return 0;
    m->sel_layer = layer, m->sel_head = head;
    if (pos >= 0 && pos < m->n_hist) {
        m->cursor = pos, m->follow = 0;
        view_set_status(m, "L%d H%d @ pos %d (the pane's first row)", layer, head, pos);
    } else view_set_status(m, "L%d H%d (the pane's first row)", layer, head);
    return 1;
}
