/* explain.c — the verdicts in words (see explain.h). */
#include "views/explain.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/decide.h"
#include "views/fixed.h"
#include "views/paint.h"

/* The symbols a verdict uses, as Unicode or spelled out for ASCII terminals. */
typedef struct {
    const char *tau, *theta, *le, *to, *dot;
} Glyphs;

static const Glyphs UNI = {"\xcf\x84", "\xce\xb8", "\xe2\x89\xa4", "\xe2\x86\x92", "\xc2\xb7"};
static const Glyphs ASC = {"tau", "theta", "<=", "->", "|"};

const char *view_explain_agreement(int decision, int label, int executed) {
    if (decision < 0 || label < 0) return NULL;
    if (!executed) /* computed beside the policy: what it would have done, not what was done */
        return decision ? (label ? "needed, would take it" : "would be needless")
                        : (label ? "would miss it" : "not needed, would skip it");
    if (decision) return label ? "needed and taken" : "needless";
    return label ? "missed" : "not needed, not taken";
}

/* 1 if m's policy is predictor p, so its decisions are the executed ones. */
static int executes(const ViewModel *m, DecidePred p) {
    DecidePred q;
    return decide_parse(m->hdr.policy, &q) == 0 && q == p;
}

/* Append printf text to a line, truncating at its capacity. */
static void add(char *line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(char *line, const char *fmt, ...) {
    size_t len = strlen(line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + len, VIEW_EXPLAIN_CAP - len, fmt, ap);
    va_end(ap);
}

/* Fewest decimals, from lo to lo + 3, at which v and its threshold print
 * differently (lo when they never do), so a near tie shows why it went the
 * way it did: "0.5002 > τ 0.5000", not "0.50 > τ 0.50". */
static int digits_apart(double v, double thr, int lo) {
    char a[48], b[48];
    for (int d = lo; d <= lo + 3; d++) {
        snprintf(a, sizeof a, "%.*f", d, v);
        snprintf(b, sizeof b, "%.*f", d, thr);
        if (strcmp(a, b)) return d;
    }
    return lo;
}

/* A percentage at d decimals; tails that would round to 0% or 100% say
 * "<" or ">" instead, since the masses live in the tails (log-odds). */
static void pct(char *buf, size_t n, double p, int d) {
    double unit = pow(10, -d);
    /* a mass from finite log-odds is never all of it, even where the double
     * it converts to rounds to exactly 1 */
    if (p > 0 && p < unit / 2) snprintf(buf, n, "<%.*f%%", d, unit);
    else if (p > 100 - unit / 2) snprintf(buf, n, ">%.*f%%", d, 100 - unit);
    else snprintf(buf, n, "%.*f%%", d, p);
}

/* A mass held as log-odds and θ as percentages into a and b, at the
 * fewest decimals that tell them apart. */
static void mass_pcts(double logit, double theta_logit, char *a, char *b, size_t n) {
    double p = 100 * decide_prob(logit), th = 100 * decide_prob(theta_logit);
    int d = digits_apart(p, th, 0);
    pct(a, n, p, d);
    pct(b, n, th, d);
}

/* One verdict, written in both forms: the sentence, e.g. "router 0.51 > τ
 * 0.50 → global · needed and taken", and the brief one for narrow panes,
 * e.g. "AHA 0.51 > τ 0.50 → global · agrees". */
typedef struct {
    const char *name, *brief_name;   /* "oracle:" / "oracle" */
    const char *value, *brief_value; /* "31% of the mass is outside the window" / "31%" */
    const char *sym, *thr, *verdict; /* "θ", "10%", "needed" */
    int d, label;                    /* the decision; the oracle's label (-1: no agreement) */
    int executed;                    /* the policy ran this predictor's decisions */
} Verdict;

/* End line slot with the agreement of decision d with the oracle's label:
 * spelled out in the sentence, one word in the brief form. */
static void put_agreement(ViewExplain *out, int slot, int d, int label, int executed, const Glyphs *g) {
    const char *a = view_explain_agreement(d, label, executed);
    if (!a) return;
    add(out->line[slot], " %s ", g->dot);
    add(out->brief[slot], " %s ", g->dot);
    out->agree_at[slot] = (int)strlen(out->line[slot]);
    out->brief_agree_at[slot] = (int)strlen(out->brief[slot]);
    add(out->line[slot], "%s", a);
    add(out->brief[slot], "%s", d == label ? "agrees" : d ? "needless" : "missed");
    out->agree_sw[slot] = d && label ? VIEW_SW_BOTH_GLOBAL : !d && !label ? VIEW_SW_BOTH_LOCAL
                          : label ? VIEW_SW_MISSED_GLOBAL : VIEW_SW_NEEDLESS_GLOBAL;
}

static void put_verdict(ViewExplain *out, int slot, const Verdict *v, const Glyphs *g) {
    const char *cmp = v->d ? ">" : g->le;
    out->decision[slot] = v->d;
    add(out->line[slot], "%s %s %s %s %s %s %s", v->name, v->value, cmp, v->sym, v->thr, g->to, v->verdict);
    add(out->brief[slot], "%s %s %s %s %s %s %s", v->brief_name, v->brief_value, cmp, v->sym, v->thr, g->to,
        v->verdict);
    put_agreement(out, slot, v->d, v->label, v->executed, g);
}

/* A value that was not there to decide on: the same words in both forms. */
static void put_missing(ViewExplain *out, int slot, const char *name, const char *why) {
    out->decision[slot] = -1;
    add(out->line[slot], "%s: %s", name, why);
    add(out->brief[slot], "%s: %s", name, why);
}

static void router_line(const ViewModel *m, const StepTrace *t, int cell, int label, const Glyphs *g,
                        ViewExplain *out) {
    int d = view_decide(t, cell, DECIDE_AHA, m->hdr.tau, m->hdr.theta_logit);
    if (d < 0) { put_missing(out, VIEW_EXPLAIN_ROUTER, "router", "no score"); return; }
    double s = t->score[cell], tau = m->hdr.tau;
    int k = digits_apart(s, tau, 2);
    char a[48], b[48];
    view_unit_text(a, sizeof a, s, k); /* a score of 0.0003 reads 0.0003, not 0.00 */
    view_unit_text(b, sizeof b, tau, k);
    Verdict v = {"router", decide_title(DECIDE_AHA), a, a, g->tau, b, d ? "global" : "local", d, label,
                 executes(m, DECIDE_AHA)};
    put_verdict(out, VIEW_EXPLAIN_ROUTER, &v, g);
}

static void oracle_line(const ViewModel *m, const StepTrace *t, int cell, const Glyphs *g, ViewExplain *out) {
    int d = view_label(t, cell, m->hdr.theta_logit);
    if (d < 0) { put_missing(out, VIEW_EXPLAIN_ORACLE, "oracle", "not profiled"); return; }
    char a[32], b[32], phrase[96];
    mass_pcts(t->oracle_logit[cell], m->hdr.theta_logit, a, b, sizeof a);
    snprintf(phrase, sizeof phrase, "%s of the mass is outside %s", a,
             m->hdr.sinks > 0 ? "sinks+window" : "the window");
    Verdict v = {"oracle:", "oracle", phrase, a, g->theta, b, d ? "needed" : "not needed", d, -1, 0};
    put_verdict(out, VIEW_EXPLAIN_ORACLE, &v, g);
}

/* A mass estimate's line: "QAdA estimate 93% > θ 10% → global · needless". */
static void estimate_line(const ViewModel *m, const StepTrace *t, int cell, int slot, DecidePred p, int label,
                          const Glyphs *g, ViewExplain *out) {
    int d = view_decide(t, cell, p, m->hdr.tau, m->hdr.theta_logit);
    if (d < 0) { put_missing(out, slot, decide_title(p), "not profiled"); return; }
    char a[32], b[32], name[48];
    mass_pcts(decide_value(t, cell, p), m->hdr.theta_logit, a, b, sizeof a);
    snprintf(name, sizeof name, "%s estimate", decide_title(p));
    /* the brief names are the inspector's row labels, short enough for 40 columns */
    Verdict v = {name, decide_info(p)->brief, a, a, g->theta, b, d ? "global" : "local", d, label, executes(m, p)};
    put_verdict(out, slot, &v, g);
}

static void gate_line(const ViewModel *m, const StepTrace *t, int cell, int label, const Glyphs *g,
                      ViewExplain *out) {
    char *line = out->line[VIEW_EXPLAIN_GATE], *brief = out->brief[VIEW_EXPLAIN_GATE];
    int d = view_decide(t, cell, DECIDE_EXECUTED, m->hdr.tau, m->hdr.theta_logit);
    if (d < 0) { put_missing(out, VIEW_EXPLAIN_GATE, "executed", "not recorded"); return; }
    out->decision[VIEW_EXPLAIN_GATE] = d;
    add(line, "executed %s", d ? "global" : "local");
    add(brief, "executed %s", d ? "global" : "local");
    if (m->hdr.policy[0]) add(line, " under policy %s", m->hdr.policy);
    put_agreement(out, VIEW_EXPLAIN_GATE, d, label, 1, g);
}

/* The counterfactual line of a fixed-local head, when the field list has
 * a counterfactual (metric.h): the mass beyond its window had it seen
 * every key, which the run never executes. Returns the lines added. */
static int counterfactual_line(const ViewModel *m, const StepTrace *t, int cell, int W, int slot, ViewExplain *out) {
    ViewMetric k = view_metric_counterfactual();
    if (k == VIEW_METRIC_COUNT) return 0;
    float v = view_metric_value(m, t, cell, k);
    out->decision[slot] = isnan(v) ? -1 : 0;
    if (isnan(v)) {
        add(out->line[slot], "counterfactual: not profiled (--profile computes it)");
        add(out->brief[slot], "counterfactual: not profiled");
        return 1;
    }
    char a[32];
    pct(a, sizeof a, 100 * v, 0);
    add(out->line[slot], "counterfactual: %s of the mass beyond the layer's window %d if it saw every key %s",
        a, W, "(never executed)");
    add(out->brief[slot], "counterf. %s beyond w %d, never run", a, W);
    return 1;
}

/* A fixed-local head: the architecture's window, not a choice, the keys
 * that window reads, and the counterfactual where there is one. */
static void fixed_lines(const ViewModel *m, const StepTrace *t, int cell, int W, ViewExplain *out) {
    int n = 0, full = t->pos + 1, want = W < full ? W : full;
    out->decision[n] = 0;
    add(out->line[n], "fixed-local: the architecture's window %d (no choice)", W);
    add(out->brief[n++], "fixed-local: window %d, no choice", W);
    out->decision[n] = t->keys_read[cell] < 0 ? -1 : 0;
    if (t->keys_read[cell] < 0) {
        add(out->line[n], "keys read: not recorded (the window reads min(W %d, pos+1 %d) = %d)", W, full, want);
        add(out->brief[n++], "keys: not recorded (window: %d)", want);
    } else if (t->keys_read[cell] == want) {
        add(out->line[n], "keys read %d = min(W %d, pos+1 %d)", want, W, full);
        add(out->brief[n++], "keys %d of %d (window %d)", want, full, W);
    } else { /* the engine read other than its window: show it, never hide it */
        add(out->line[n], "keys read %d, not min(W %d, pos+1 %d) = %d", t->keys_read[cell], W, full, want);
        add(out->brief[n++], "keys %d, window says %d", t->keys_read[cell], want);
    }
    n += counterfactual_line(m, t, cell, W, n, out);
    out->n = n;
}

void view_explain(const ViewModel *m, const StepTrace *t, int cell, ViewExplain *out) {
    memset(out, 0, sizeof *out);
    const Glyphs *g = m->ascii ? &ASC : &UNI;
    int W = view_fixed_window(t, cell);
    if (W > 0) {
        fixed_lines(m, t, cell, W, out);
        return;
    }
    if (!decide_has_choice(t)) {
        out->n = 1;
        out->decision[0] = -1;
        add(out->line[0], "no far keys at pos %d: global and local read the same keys", t->pos);
        add(out->brief[0], "pos %d: no far keys, no choice", t->pos);
        return;
    }
    int label = view_label(t, cell, m->hdr.theta_logit);
    router_line(m, t, cell, label, g, out);
    oracle_line(m, t, cell, g, out);
    estimate_line(m, t, cell, VIEW_EXPLAIN_QADA, DECIDE_QADA, label, g, out);
    estimate_line(m, t, cell, VIEW_EXPLAIN_QADA_BULK, DECIDE_QADA_BULK, label, g, out);
    gate_line(m, t, cell, label, g, out);
    estimate_line(m, t, cell, VIEW_EXPLAIN_QADA_REM, DECIDE_QADA_REM, label, g, out);
    estimate_line(m, t, cell, VIEW_EXPLAIN_QADA_REM_BULK, DECIDE_QADA_REM_BULK, label, g, out);
    out->n = VIEW_EXPLAIN_LINES;
}

/* Insert far position i of weight v into the ranking if it is heavy
 * enough; equal weights keep their order, so earlier positions come first. */
static void rank_far(ViewAttnSplit *s, int i, float v) {
    int k = s->n_top;
    if (k == VIEW_ATTN_TOP) {
        if (!(v > s->top_w[k - 1])) return;
        k--; /* the lightest drops out */
    } else {
        s->n_top++;
    }
    for (; k > 0 && v > s->top_w[k - 1]; k--) {
        s->top_pos[k] = s->top_pos[k - 1];
        s->top_w[k] = s->top_w[k - 1];
    }
    s->top_pos[k] = i;
    s->top_w[k] = v;
}

void view_attn_split(const ViewAttn *at, ViewAttnSplit *s) {
    memset(s, 0, sizeof *s);
    s->window_start = at->window > 0 ? at->pos - at->window + 1 : 0;
    if (s->window_start < 0) s->window_start = 0;
    for (int i = 0; i < at->n; i++) {
        float v = at->w[i];
        if (i < at->sinks) s->sinks += v;
        else if (i >= s->window_start) s->window += v;
        else {
            s->far += v;
            rank_far(s, i, v);
        }
    }
}

void view_share_text(char *buf, size_t n, double p) { pct(buf, n, 100 * p, 0); }

static void share(char *buf, size_t n, double v) { view_share_text(buf, n, v); }

void view_weight_text(char *buf, size_t n, double w) {
    if (!(w > 0) || w >= 0.0095) snprintf(buf, n, "%.2f", w);
    else if (w < 1e-4) snprintf(buf, n, "%.0e", w);
    else snprintf(buf, n, "%.*f", 1 - (int)floor(log10(w)), w);
}

void view_unit_text(char *buf, size_t n, double v, int digits) {
    if (!(v > 0 && v < 1)) { snprintf(buf, n, "%.*f", digits, v); return; }
    double tail = v < 0.5 ? v : 1 - v;
    int k = (int)ceil(-log10(tail) - 1e-9); /* the decimals at which the tail shows */
    if (k < digits) k = digits;
    if (k > 4) snprintf(buf, n, "%s", v < 0.5 ? "<0.0001" : ">0.9999");
    else snprintf(buf, n, "%.*f", k, v);
}

void view_tau_theta_text(char *buf, size_t n, const char *eq, double tau, double theta) {
    char a[16], b[16];
    view_unit_text(a, sizeof a, tau, 2);
    view_unit_text(b, sizeof b, theta, 2);
    snprintf(buf, n, "tau%s%s, theta%s%s", eq, a, eq, b);
}

/* Append " · pos 12 \"Lily\" 0.41" to line if it fits in max_w columns;
 * returns 0 when it did not. */
static int append_far(const ViewModel *m, char *line, size_t cap, int pos, float w, int max_w) {
    const char *dot = m->ascii ? ASC.dot : UNI.dot;
    const StepTrace *t = view_trace(m, pos);
    char label[TRACE_PIECE_MAX * 4] = "", entry[VIEW_EXPLAIN_CAP], wt[16];
    if (t) view_piece_label(t->piece, m->ascii, label, sizeof label);
    view_weight_text(wt, sizeof wt, w);
    snprintf(entry, sizeof entry, " %s pos %d \"%.32s\" %s", dot, pos, label, wt);
    if (view_text_width(line, m->ascii) + view_text_width(entry, m->ascii) > max_w) return 0;
    size_t len = strlen(line), el = strlen(entry);
    if (len + el >= cap) return 0;
    memcpy(line + len, entry, el + 1);
    return 1;
}

void view_explain_attn(const ViewModel *m, const ViewAttn *at, const ViewAttnSplit *s, int max_w, char *buf,
                       size_t n) {
    const char *dot = m->ascii ? ASC.dot : UNI.dot;
    char sk[32], wn[32], fr[32], line[4 * VIEW_EXPLAIN_CAP] = "";
    share(sk, sizeof sk, s->sinks);
    share(wn, sizeof wn, s->window);
    share(fr, sizeof fr, s->far);
    if (at->sinks > 0) add(line, "sinks %s %s ", sk, dot);
    add(line, "window %s %s far %s", wn, dot, fr);
    for (int k = 0; k < s->n_top && append_far(m, line, sizeof line, s->top_pos[k], s->top_w[k], max_w); k++) {}
    snprintf(buf, n, "%s", line);
}

int view_explain_recorded(const ViewModel *m, const StepTrace *t, int cell, int max_w, char *buf, size_t n) {
    if (!t || t->top_k <= 0 || cell < 0 || cell >= trace_cells(t)) return 0;
    const int32_t *pos = t->top_pos + (size_t)cell * t->top_k;
    const float *w = t->top_w + (size_t)cell * t->top_k;
    char fr[32], line[4 * VIEW_EXPLAIN_CAP] = "";
    float logit = t->oracle_logit[cell];
    if (!isnan(logit)) {
        share(fr, sizeof fr, decide_prob(logit));
        add(line, "recorded: far %s", fr);
    } else {
        add(line, "recorded far positions:");
    }
    for (int k = 0; k < t->top_k && pos[k] >= 0 && append_far(m, line, sizeof line, pos[k], w[k], max_w); k++) {}
    snprintf(buf, n, "%s", line);
    return 1;
}
