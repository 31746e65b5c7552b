/* draw_header.c — the header line (see draw.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "views/draw.h"
#include "views/explain.h"
#include "views/paint.h"

enum { SEG_MAX = 16, SEG_LEN = 96 };

typedef struct {
    char text[SEG_LEN];
    int prio; /* lower survives longer when the line is too narrow */
    int keep;
} Seg;

typedef struct {
    Seg seg[SEG_MAX];
    int n;
    int kinds; /* the compact layer kinds' segment, which closer separators may keep; -1 none */
} SegList;

static void add(SegList *l, int prio, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(SegList *l, int prio, const char *fmt, ...) {
    if (l->n == SEG_MAX) return;
    Seg *s = &l->seg[l->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->text, sizeof s->text, fmt, ap);
    va_end(ap);
    s->prio = prio;
    s->keep = 1;
}

/* Megabytes, with the precision a header has room for. */
static double mb(double bytes) { return bytes / 1e6; }

/* The step at the cursor: weights + the KV bytes it read per KV head, and
 * the KV bytes of all-local and all-global at this position. */
static void add_bytes(SegList *l, const ViewHeader *h, const StepTrace *t) {
    if (!t || h->weight_bytes <= 0 || h->kv_bytes_per_pos <= 0 || t->n_kv_heads <= 0 || t->n_far < 0) return;
    long kv = trace_kv_read_total(t), full = trace_kv_full(t);
    if (kv < 0 || full <= 0) return;
    double per = (double)t->n_layers * t->n_kv_heads, local = per * (t->pos + 1 - t->n_far) * h->kv_bytes_per_pos;
    add(l, 7, "step %.3g MB + KV %.3g MB [%.3g..%.3g]", mb(h->weight_bytes), mb(kv * h->kv_bytes_per_pos), mb(local),
        mb(full * h->kv_bytes_per_pos));
}

/* The model's name as the compact header shows it: no extension, at most
 * 16 columns. */
static void short_model(const char *model, char *out, size_t n) {
    snprintf(out, n, "%.16s", model);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = '\0';
}

/* "gemma3 · 22 local (w 512) + 4 global layers" (compact "gemma3
 * 22L/w512+4G") where the architecture windows some layers; nothing for
 * an all-global model. */
static void add_layers(SegList *l, const ViewHeader *h, int ascii, int compact) {
    const ViewLayerKinds *k = &h->layers;
    if (k->n_local <= 0) return;
    const char *dot = ascii ? "-" : "\xc2\xb7", *arch = h->arch[0] ? h->arch : "model";
    char w[32];
    if (k->w_min == k->w_max) snprintf(w, sizeof w, compact ? "w%d" : "w %d", k->w_min);
    else snprintf(w, sizeof w, compact ? "w%d-%d" : "w %d-%d", k->w_min, k->w_max);
    if (k->n_global == 0 && compact) add(l, 2, "%s all %dL %s", arch, k->n_local, w);
    else if (k->n_global == 0) add(l, 1, "%s %s all %d layers local (%s)", arch, dot, k->n_local, w);
    else if (compact) add(l, 2, "%s %dL/%s+%dG", arch, k->n_local, w, k->n_global); /* yields to the settings */
    else add(l, 1, "%s %s %d local (%s) + %d global layers", arch, dot, k->n_local, w, k->n_global);
    if (compact) l->kinds = l->n - 1;
}

/* AHA's window, and where the architecture's is longer, that it applies to
 * the global layers only (the local ones read their own). */
static void add_window(SegList *l, const ViewHeader *h, int compact) {
    const ViewLayerKinds *k = &h->layers;
    const char *only = k->n_local > 0 && k->n_global > 0 && k->w_min > h->window
                           ? (compact ? " (global)" : " (global layers only)")
                           : "";
    add(l, 1, compact ? "w%d%s" : "w %d%s", h->window, only);
}

/* The segments; compact spells them shorter ("aha", "w16", "s4") so that
 * at 80 columns every setting still shows. */
static void collect(const ViewModel *m, const ViewPalette *p, SegList *l, int compact) {
    const ViewHeader *h = &m->hdr;
    const StepTrace *t = view_trace(m, m->cursor);
    int a = p->ascii;
    ViewTotals tot;
    int lo, hi, span = view_span_range(m, m->cursor, &lo, &hi); /* a span: its shares, not the run's to the cursor */
    view_totals_in(m, lo, hi, &tot);
    char name[24];
    short_model(h->model[0] ? h->model : "(no model)", name, sizeof name);
    if (h->mode[0]) add(l, 0, "%s", h->mode); /* a recording, not the model running: never dropped */
    /* a replay's mode names its run, which names the model: compact, the name may go first */
    add(l, compact && h->mode[0] ? 1 : 0, "%s", !compact ? (h->model[0] ? h->model : "(no model)") : name);
    add_layers(l, h, a, compact);
    add(l, 0, compact ? "%s" : "policy %s", h->policy[0] ? h->policy : "?");
    add_window(l, h, compact);
    /* sinks change what is local: a setting to show when there are any */
    add(l, h->sinks > 0 ? 1 : 4, compact ? "s%d" : "sinks %d", h->sinks);
    const char *tau = a ? "tau" : "\xcf\x84", *theta = a ? "theta" : "\xce\xb8";
    char tv[16], thv[16], gtv[16], gthv[16]; /* θ 0.001 reads 0.001, not 0.00 */
    view_unit_text(tv, sizeof tv, h->tau, 2);
    view_unit_text(thv, sizeof thv, decide_prob(h->theta_logit), 2);
    view_unit_text(gtv, sizeof gtv, h->gate_tau, 2);
    view_unit_text(gthv, sizeof gthv, decide_prob(h->gate_theta_logit), 2);
    if (h->gates_fixed && (h->gate_tau != h->tau || h->gate_theta_logit != h->theta_logit))
        /* a replay re-scored: the recorded gates were decided at other thresholds, and the gate metric shows those */
        add(l, 0, compact ? "%s %s %s %s (gates %s/%s)" : "%s %s %s %s (gates at %s/%s)", tau, tv, theta, thv, gtv,
            gthv);
    else add(l, 1, "%s %s %s %s", tau, tv, theta, thv);
    if (h->ctx_len > 0) add(l, 0, "pos %d/%d", t ? t->pos : 0, h->ctx_len);
    else add(l, 0, "pos %d", t ? t->pos : 0);
    if (span) add(l, 0, "span %d-%d", m->span.lo, m->span.hi); /* what every share beside it counts: never dropped */
    if (h->tok_s > 0) add(l, 5, "%.1f tok/s", h->tok_s);
    if (!isnan(tot.global_share)) add(l, 1, compact ? "glob %.1f%%" : "global %.1f%%", 100 * tot.global_share);
    /* keys per query head; KV per KV head, what memory traffic follows */
    if (!isnan(tot.keys_share)) add(l, 3, "keys/qh %.1f%%", 100 * tot.keys_share);
    if (!isnan(tot.kv_share)) add(l, 2, compact ? "KV %.1f%%" : "KV read %.1f%%", 100 * tot.kv_share);
    add_bytes(l, h, t);
    if (h->record[0]) add(l, 6, "rec %s", h->record);
}

/* 1 if every segment of priority up to prio fits in width. */
static int fits_prio(const SegList *l, int width, int sep_w, int ascii, int prio) {
    int total = 0;
    for (int i = 0; i < l->n; i++)
        if (l->seg[i].prio <= prio) total += view_text_width(l->seg[i].text, ascii) + (total ? sep_w : 0);
    return total <= width;
}

/* 1 if segment i survives fit (below) in width with separators sep_w
 * wide; 0 when it is dropped or i is -1. */
static void fit(SegList *l, int width, int sep_w, int ascii);
static int survives(const SegList *l, int i, int width, int sep_w, int ascii) {
    if (i < 0) return 0;
    SegList c = *l;
    fit(&c, width, sep_w, ascii);
    return c.seg[i].keep;
}

/* Drop the lowest-priority segments (latest first) until the line fits. */
static void fit(SegList *l, int width, int sep_w, int ascii) {
    for (;;) {
        int total = 0, worst = -1;
        for (int i = 0; i < l->n; i++) {
            if (!l->seg[i].keep) continue;
            total += view_text_width(l->seg[i].text, ascii) + (total ? sep_w : 0);
            if (worst < 0 || l->seg[i].prio >= l->seg[worst].prio) worst = i;
        }
        if (total <= width || worst < 0 || l->seg[worst].prio == 0) return;
        l->seg[worst].keep = 0;
    }
}

void view_draw_header(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    int h, wd;
    getmaxyx(w, h, wd);
    (void)h;
    attr_t a;
    short pair;
    view_text_style(p, VIEW_TX_HEADER, &a, &pair);
    view_fill(w, 0, 0, wd, L' ', a, pair);
    int x = view_puts(w, 0, 0, wd, " ahascope ", 1, a | A_BOLD, pair);
    const char *sep = p->ascii ? " | " : " \xe2\x94\x82 ";
    SegList l = {.n = 0, .kinds = -1};
    collect(m, p, &l, 0);
    if (!fits_prio(&l, wd - x - 1, 3, p->ascii, 1)) { /* the settings would not all show: the compact line */
        l.n = 0, l.kinds = -1;
        collect(m, p, &l, 1);
        int k = l.kinds, room = wd - x - 1; /* the layer kinds: closer separators may keep them too */
        if (!fits_prio(&l, room, 3, p->ascii, 1) ||
            (!survives(&l, k, room, 3, p->ascii) && survives(&l, k, room, 1, p->ascii)))
            sep = p->ascii ? "|" : "\xe2\x94\x82"; /* and closer */
    }
    fit(&l, wd - x - 1, view_text_width(sep, p->ascii), p->ascii);
    int first = 1;
    for (int i = 0; i < l.n && x < wd; i++) {
        if (!l.seg[i].keep) continue;
        int need = view_text_width(l.seg[i].text, p->ascii) + (first ? 0 : view_text_width(sep, p->ascii));
        if (x + need > wd) continue; /* whole or not at all: a number cut short reads as another number */
        if (!first) x += view_puts(w, 0, x, wd - x, sep, p->ascii, a & ~A_BOLD, pair);
        x += view_puts(w, 0, x, wd - x, l.seg[i].text, p->ascii, a & ~A_BOLD, pair);
        first = 0;
    }
}
