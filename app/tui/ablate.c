/* ablate.c — what an ablation (`!`) changed: its comparison with the parent in the text pane.
 *
 * The worker compares the ablated child with its parent once the child's
 * positions are all on screen (ablate_diff.h defines every number); this
 * file shows its progress, then writes the comparison as text: the start
 * position and the one after it, the largest KL, the two greedy
 * continuations side by side, and every position from the start in a
 * table. The views get only that text (view_set_text) and a status line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/tui/state.h"

/* A token's text, quoted and on one line (newline and tab spelt out). */
static void piece_text(const Tokenizer *tok, int prev, int id, char *buf, size_t cap) {
    char raw[TRACE_PIECE_MAX];
    if (!tok || id < 0) raw[0] = 0;
    else tok_piece_printable(tok, prev, id, raw, sizeof raw);
    size_t o = 0;
    if (cap < 8) { buf[0] = 0; return; }
    buf[o++] = '"';
    for (const char *c = raw; *c && o + 4 < cap; c++) {
        if (*c == '\n' || *c == '\t') buf[o++] = '\\', buf[o++] = *c == '\n' ? 'n' : 't';
        else buf[o++] = *c;
    }
    buf[o++] = '"', buf[o] = 0;
}

/* The run's token at position t + 1 as text (the one predicted at t). */
static void next_text(const AblateDiff *d, const Tokenizer *tok, int t, char *buf, size_t cap) {
    int i = t - d->from;
    if (d->next[i] < 0) snprintf(buf, cap, "(end)");
    else piece_text(tok, i ? d->next[i - 1] : d->at_from, d->next[i], buf, cap);
}

/* One position's numbers, as the summary lines give them: the KL first, so
 * an 80-column pane shows it whole. */
static void position_line(FILE *f, const AblateDiff *d, const Tokenizer *tok, const char *label, int t) {
    int i = t - d->from;
    char nx[96];
    next_text(d, tok, t, nx, sizeof nx);
    fprintf(f, "%-5s pos %d -> %-.14s  KL %.4f", label, t, nx, d->kl[i]);
    if (!isnan(d->nll_parent[i]))
        fprintf(f, "  -log p parent %.3f child %.3f (%+.3f)", d->nll_parent[i], d->nll_child[i],
                d->nll_child[i] - d->nll_parent[i]);
    fputc('\n', f);
}

/* A continuation's text, its pieces joined on one line (malloc'd). */
static char *cont_text(const AblateDiff *d, const Tokenizer *tok, int which, int prev) {
    size_t cap = (size_t)ABLATE_CONT_MAX * (TRACE_PIECE_MAX + 4) + 8, o = 0;
    char *s = malloc(cap), raw[TRACE_PIECE_MAX];
    if (!s) return NULL;
    for (int i = 0; i < d->n_cont[which]; i++) {
        int id = d->cont[which][i];
        if (tok) tok_piece_printable(tok, i ? d->cont[which][i - 1] : prev, id, raw, sizeof raw);
        else snprintf(raw, sizeof raw, "%d ", id);
        for (const char *c = raw; *c && o + 3 < cap; c++) {
            if (*c == '\n') s[o++] = '\\', s[o++] = 'n';
            else s[o++] = *c == '\t' ? ' ' : *c;
        }
    }
    s[o] = 0;
    return s;
}

/* Bytes of s that hold at most w characters (UTF-8), and those characters' count. */
static size_t take_chars(const char *s, int w, int *got) {
    size_t b = 0;
    int n = 0;
    while (s[b] && n < w) {
        b++;
        while ((s[b] & 0xC0) == 0x80) b++;
        n++;
    }
    *got = n;
    return b;
}

/* The two continuations in two columns of cw characters, wrapped. */
static void side_by_side(FILE *f, const char *a, const char *b, int cw) {
    fprintf(f, "%-*s | %s\n", cw, "parent", "child");
    while (*a || *b) {
        int na, nb;
        size_t ba = take_chars(a, cw, &na), bb = take_chars(b, cw, &nb);
        fprintf(f, "%.*s%*s | %.*s\n", (int)ba, a, cw - na, "", (int)bb, b);
        a += ba, b += bb;
    }
}

/* The continuations: the same, or where they part and both in full. */
static void continuations(FILE *f, const AblateDiff *d, const Tokenizer *tok, int cols) {
    int split = ablate_diff_cont_split(d), prev = d->last;
    if (split < 0) {
        fprintf(f, "the continuation is unchanged for %d tokens (greedy, from pos %d)\n", d->n_cont[0], d->n);
        return;
    }
    fprintf(f, "the greedy continuation from pos %d changes at its token %d of %d (pos %d):\n", d->n, split + 1,
            d->cont_want, d->n + split);
    char *a = cont_text(d, tok, 0, prev), *b = cont_text(d, tok, 1, prev);
    int cw = (cols - 2 - 3) / 2; /* the pane's borders, then " | " */
    if (a && b) side_by_side(f, a, b, cw < 10 ? 10 : cw);
    free(a), free(b);
}

/* Every compared position, a row each under a header the pane keeps in view. */
static void position_table(FILE *f, const AblateDiff *d, const Tokenizer *tok) {
    fprintf(f, "%6s  %-14s %13s %13s %13s %11s\n", "pos", "next token", "-log p parent", "-log p child",
            "child-parent", "KL");
    fprintf(f, "------  -------------- ------------- ------------- ------------- -----------\n");
    for (int t = d->from; t < d->n; t++) {
        int i = t - d->from;
        char nx[96];
        next_text(d, tok, t, nx, sizeof nx);
        if (isnan(d->nll_parent[i]))
            fprintf(f, "%6d  %-14.14s %13s %13s %13s %11.4f\n", t, nx, "", "", "", d->kl[i]);
        else
            fprintf(f, "%6d  %-14.14s %13.4f %13.4f %+13.4f %11.4f\n", t, nx, d->nll_parent[i], d->nll_child[i],
                    d->nll_child[i] - d->nll_parent[i], d->kl[i]);
    }
}

/* The status line's summary: the start's numbers, the largest KL, the continuation. */
static void summary(const AblateDiff *d, char *line, size_t cap) {
    int i = 0, top = ablate_diff_argmax(d), split = ablate_diff_cont_split(d);
    size_t o = strlen(line);
    o += (size_t)snprintf(line + o, o < cap ? cap - o : 0, " \xc2\xb7 pos %d: KL %.4f", d->from, d->kl[i]);
    if (!isnan(d->nll_parent[i]) && o < cap)
        o += (size_t)snprintf(line + o, cap - o, ", -log p %.2f->%.2f", d->nll_parent[i], d->nll_child[i]);
    if (top >= 0 && o < cap) o += (size_t)snprintf(line + o, cap - o, " \xc2\xb7 max KL %.4f @%d", d->kl[top - d->from], top);
    if (o < cap) {
        if (split < 0) snprintf(line + o, cap - o, " \xc2\xb7 continuation unchanged");
        else snprintf(line + o, cap - o, " \xc2\xb7 continuation changes at +%d", split + 1);
    }
}

/* The comparison's text for a pane cols wide (heap), and its one-line
 * summary appended to line; NULL out of memory. */
static char *ablate_text(const AblateDiff *d, const Tokenizer *tok, const char *what, int cols, char *line, size_t cap) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    fprintf(f, "ablate %s against its parent, from pos %d on\n", what, d->from);
    fprintf(f, "KL(parent||child) of the next-token distributions, -log p of the next token; nats\n");
    position_line(f, d, tok, "start", d->from);
    if (d->from + 1 < d->n) position_line(f, d, tok, "after", d->from + 1);
    int top = ablate_diff_argmax(d);
    if (top >= 0) fprintf(f, "largest KL %.4f at pos %d (of %d-%d)\n", d->kl[top - d->from], top, d->from, d->n - 1);
    fputc('\n', f);
    continuations(f, d, tok, cols);
    fputc('\n', f);
    position_table(f, d, tok);
    fclose(f);
    if (line && cap) summary(d, line, cap);
    return text;
}

/* The comparison that came: kept, in the pane, summed up on the status line. */
static void show(Tui *t, AblateDiff *d, int64_t run, int64_t parent) {
    Err e;
    if (t->ablate) ablate_diff_free(t->ablate), free(t->ablate);
    t->ablate = d, t->ablate_run = run, t->ablate_parent = parent;
    char line[400], title[sizeof t->m.sql_title];
    if (run) snprintf(line, sizeof line, "run %lld: ablate %s", (long long)run, t->ablate_what);
    else snprintf(line, sizeof line, "not recorded: ablate %s", t->ablate_what);
    if (run && parent) snprintf(title, sizeof title, "ablate: run %lld vs run %lld", (long long)run, (long long)parent);
    else snprintf(title, sizeof title, "ablate vs its parent");
    int cols = t->scr.lay.cols > 0 ? t->scr.lay.cols : VIEW_MIN_COLS;
    char *text = ablate_text(d, &t->L->tok, t->ablate_what, cols, line, sizeof line);
    if (!text) { view_set_status(&t->m, "ablate: out of memory for the comparison"); return; }
    if (view_set_text(&t->m, title, "", text, &e)) view_set_status(&t->m, "%s", e.msg);
    else view_set_status(&t->m, "%s", line);
    free(text);
}

void tui_ablate_poll(Tui *t) {
    int stopped;
    int64_t run, parent;
    int on = tui_worker_diffing(&t->w);
    if (on && !t->ablate_shown) {
        view_set_progress(&t->m, "comparing ablate %s with its parent: next-token distributions, %d greedy tokens "
                                 "(Esc stops)", t->ablate_what, TUI_ABLATE_CONT);
        t->ablate_shown = 1, t->dirty = 1;
    }
    AblateDiff *d = tui_worker_take_diff(&t->w, &stopped, &run, &parent);
    if (t->ablate_shown && (d || stopped || !on)) view_clear_progress(&t->m), t->ablate_shown = 0, t->dirty = 1;
    if (d || stopped) t->ablate_pending = 0;
    if (stopped && !d) view_set_status(&t->m, "ablate %s: its comparison with the parent was stopped", t->ablate_what);
    if (d) show(t, d, run, parent), t->dirty = 1;
}
