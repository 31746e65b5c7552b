/* tokstats.c — rates by token type (see tokstats.h). */
#include "views/tokstats.h"

#include <stdlib.h>
#include <string.h>

#include "views/fixed.h"
#include "views/paint.h"

ViewTokKind view_token_kind(const char *piece) {
    const unsigned char *p = (const unsigned char *)piece;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) return VIEW_TOK_SPACE;
    int digit = 0;
    for (; *p; p++) {
        if (*p >= 0x80) {
            /* U+2000-U+206F (E2 80 xx, E2 81 xx): dashes, quotes, ellipsis */
            if (p[0] == 0xe2 && (p[1] == 0x80 || p[1] == 0x81) && p[2]) {
                p += 2;
                continue;
            }
            if (*p >= 0xc0) return VIEW_TOK_WORD; /* a character's lead byte; continuation bytes follow it */
            continue;
        }
        if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') return VIEW_TOK_WORD;
        digit |= *p >= '0' && *p <= '9';
    }
    return digit ? VIEW_TOK_NUMBER : VIEW_TOK_PUNCT;
}

const char *view_token_kind_name(ViewTokKind k) {
    static const char *const NAMES[VIEW_TOK_KINDS] = {"words", "numbers", "punctuation", "whitespace"};
    return k >= 0 && k < VIEW_TOK_KINDS ? NAMES[k] : "?";
}

void view_tokstats_begin(ViewTokStats *s, int n_layers, int n_heads, int layer, int head, DecidePred pred, float tau,
                         double theta_logit) {
    memset(s, 0, sizeof *s);
    s->n_layers = n_layers, s->n_heads = n_heads, s->layer = layer, s->head = head;
    s->pred = pred, s->tau = tau, s->theta_logit = theta_logit;
}

static unsigned hash(const char *p) {
    unsigned h = 2166136261u;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

/* Grow the hash to hold twice the pieces, re-placing them. */
static int rehash(ViewTokStats *s) {
    int n = s->n_slots ? s->n_slots * 2 : 256;
    int *slot = calloc((size_t)n, sizeof *slot);
    if (!slot) return -1;
    for (int i = 0; i < s->n_pieces; i++) {
        unsigned k = hash(s->pieces[i].piece) & (unsigned)(n - 1);
        while (slot[k]) k = (k + 1) & (unsigned)(n - 1);
        slot[k] = i + 1;
    }
    free(s->slot);
    s->slot = slot, s->n_slots = n;
    return 0;
}

/* The piece's entry, made when first seen at pos; NULL out of memory. */
static ViewTokPiece *piece_of(ViewTokStats *s, const char *piece, int pos) {
    if (2 * (s->n_pieces + 1) > s->n_slots && rehash(s)) return NULL;
    unsigned k = hash(piece) & (unsigned)(s->n_slots - 1);
    for (; s->slot[k]; k = (k + 1) & (unsigned)(s->n_slots - 1))
        if (!strcmp(s->pieces[s->slot[k] - 1].piece, piece)) return &s->pieces[s->slot[k] - 1];
    if (s->n_pieces == s->cap_pieces) {
        int cap = s->cap_pieces ? s->cap_pieces * 2 : 64;
        ViewTokPiece *p = realloc(s->pieces, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        s->pieces = p, s->cap_pieces = cap;
    }
    ViewTokPiece *e = &s->pieces[s->n_pieces];
    memset(e, 0, sizeof *e);
    snprintf(e->piece, sizeof e->piece, "%s", piece);
    e->first = pos;
    s->slot[k] = ++s->n_pieces;
    return e;
}

/* One cell's decision, label and agreement into r. */
static void tally(ViewRates *r, const StepTrace *t, int cell, const ViewTokStats *s) {
    int d = view_decide(t, cell, DECIDE_EXECUTED, 0, 0), o = view_label(t, cell, s->theta_logit);
    int p = view_decide(t, cell, s->pred, s->tau, s->theta_logit);
    if (d >= 0) r->global += d, r->decided++;
    if (o >= 0) r->oracle += o, r->labelled++;
    if (p >= 0 && o >= 0) r->agree += p == o, r->compared++;
}

static void add_rates(ViewRates *a, const ViewRates *b) {
    a->global += b->global, a->decided += b->decided, a->oracle += b->oracle, a->labelled += b->labelled;
    a->agree += b->agree, a->compared += b->compared;
}

int view_tokstats_add(ViewTokStats *s, const StepTrace *t) {
    ViewTokPiece *e = piece_of(s, t->piece, t->pos);
    if (!e) return -1;
    ViewRates head = {0}, all = {0};
    int cells = s->n_layers * s->n_heads, sel = s->layer * s->n_heads + s->head;
    for (int c = 0; c < cells; c++) tally(&all, t, c, s);
    tally(&head, t, sel, s);
    int g[2] = {t->is_prompt ? VIEW_TOKS_PROMPT : VIEW_TOKS_GENERATED, VIEW_TOKS_KIND0 + view_token_kind(t->piece)};
    for (int i = 0; i < 2; i++) {
        s->count[g[i]]++;
        add_rates(&s->head_rates[g[i]], &head);
        add_rates(&s->all_rates[g[i]], &all);
    }
    e->n++;
    add_rates(&e->head, &head);
    add_rates(&e->all, &all);
    s->n++;
    return 0;
}

/* " 41.7%", right-aligned in 9 columns, or "n/a". */
static void rate(FILE *f, double num, double den) {
    if (den > 0) fprintf(f, " %7.1f%%", 100 * num / den);
    else fprintf(f, " %8s", "n/a");
}

static void row(FILE *f, const char *name, int n, const ViewRates *h, const ViewRates *a) {
    fprintf(f, "%-14s %6d", name, n);
    rate(f, h->global, h->decided), rate(f, h->oracle, h->labelled), rate(f, h->agree, h->compared);
    rate(f, a->global, a->decided), rate(f, a->oracle, a->labelled), rate(f, a->agree, a->compared);
    fputc('\n', f);
}

static int by_count(const void *x, const void *y) {
    const ViewTokPiece *a = x, *b = y;
    if (a->n != b->n) return a->n < b->n ? 1 : -1;
    return (a->first > b->first) - (a->first < b->first);
}

void view_tokstats_print(const ViewTokStats *s, FILE *f, int top, int ascii) {
    /* h_: the selected head; a_: all heads pooled */
    fprintf(f, "%-14s %6s %8s %8s %8s %8s %8s %8s\n", "type", "tokens", "h_exec", "h_oracle", "h_agree", "a_exec",
            "a_oracle", "a_agree");
    fprintf(f, "%.14s %.6s", "--------------", "------");
    for (int i = 0; i < 6; i++) fprintf(f, " --------");
    fputc('\n', f);
    static const char *const GROUP[2] = {"prompt", "generated"};
    for (int g = 0; g < VIEW_TOKS_GROUPS; g++)
        row(f, g < VIEW_TOKS_KIND0 ? GROUP[g] : view_token_kind_name((ViewTokKind)(g - VIEW_TOKS_KIND0)), s->count[g],
            &s->head_rates[g], &s->all_rates[g]);
    ViewTokPiece *sorted = s->n_pieces ? malloc((size_t)s->n_pieces * sizeof *sorted) : NULL;
    if (!sorted) return;
    memcpy(sorted, s->pieces, (size_t)s->n_pieces * sizeof *sorted);
    qsort(sorted, (size_t)s->n_pieces, sizeof *sorted, by_count);
    for (int i = 0; i < s->n_pieces && i < top; i++) {
        char label[TRACE_PIECE_MAX * 4], name[40];
        view_piece_label(sorted[i].piece, ascii, label, sizeof label);
        snprintf(name, sizeof name, "\"%.10s\"", label);
        row(f, name, sorted[i].n, &sorted[i].head, &sorted[i].all);
    }
    free(sorted);
}

void view_tokstats_free(ViewTokStats *s) {
    free(s->pieces);
    free(s->slot);
    s->pieces = NULL, s->slot = NULL;
    s->n_pieces = s->cap_pieces = s->n_slots = 0;
}
