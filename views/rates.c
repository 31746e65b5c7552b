/* rates.c — the run's per-head rates (see rates.h). */
#include "views/rates.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/fixed.h"

enum { SLOT_GLOBAL, SLOT_ORACLE, SLOT_PRECISION, SLOT_RECALL, SLOT_AGREE };
_Static_assert(DECIDE_EXECUTED < VIEW_PRED_COUNT, "the gate is one of the predictors the agreement compares");

int view_metric_is_rate(ViewMetric k) {
    return k >= VIEW_METRIC_RATE_GLOBAL && k < VIEW_METRIC_RATE_GLOBAL + VIEW_RATE_COUNT;
}

ViewMetric view_rate_metric(int i) { return (ViewMetric)(VIEW_METRIC_RATE_GLOBAL + i); }

const char *view_rate_doc(ViewMetric k) {
#define RATE_DOC(id, title, short_name, doc) doc,
    static const char *const docs[VIEW_RATE_COUNT] = {VIEW_RATE_METRICS(RATE_DOC)};
#undef RATE_DOC
    return view_metric_is_rate(k) ? docs[k - VIEW_METRIC_RATE_GLOBAL] : "";
}

/* The counter rate k uses, the agreement's for predictor p. */
static int slot_of(ViewMetric k, ViewPredictor p) {
    int i = (int)(k - VIEW_METRIC_RATE_GLOBAL);
    return i < SLOT_AGREE ? i : SLOT_AGREE + (int)p;
}

/* The event of counter `slot` from a decision d (the executed gate's for
 * all but the agreement, whose predictor the slot names) and the oracle's
 * label o: the gate, the label, the label where the gate went global
 * (precision), the gate where the label is global (recall), or whether
 * the two agree. */
static int event_of(int slot, int d, int o) {
    switch (slot) {
    case SLOT_GLOBAL: return d;
    case SLOT_ORACLE: return o;
    case SLOT_PRECISION: return d == 1 && o >= 0 ? o : -1;
    case SLOT_RECALL: return o == 1 && d >= 0 ? d : -1;
    default: return d >= 0 && o >= 0 ? d == o : -1;
    }
}

/* The predictor whose decision counter `slot` reads. */
static DecidePred slot_pred(int slot) { return slot < SLOT_AGREE ? DECIDE_EXECUTED : (DecidePred)(slot - SLOT_AGREE); }

static int slot_event(const StepTrace *t, int cell, int slot, float tau, double theta_logit) {
    return event_of(slot, view_decide(t, cell, slot_pred(slot), tau, theta_logit), view_label(t, cell, theta_logit));
}

int view_rate_event(const ViewModel *m, const StepTrace *t, int cell, ViewMetric k) {
    if (!view_metric_is_rate(k)) return -1;
    return slot_event(t, cell, slot_of(k, m->agree_pred), m->hdr.tau, m->hdr.theta_logit);
}

void view_rates_count(const StepTrace *t, float tau, double theta_logit, int32_t *c) {
    if (!decide_has_choice(t)) return; /* no far keys: nothing was decided at any head */
    int cells = trace_cells(t);
    for (int cell = 0; cell < cells; cell++, c += 2 * VIEW_RATE_SLOTS) {
        /* each decision once: the agreement's slots are those of the predictors */
        int o = view_label(t, cell, theta_logit), d[VIEW_PRED_COUNT];
        for (int p = 0; p < VIEW_PRED_COUNT; p++) d[p] = view_decide(t, cell, (DecidePred)p, tau, theta_logit);
        for (int s = 0; s < VIEW_RATE_SLOTS; s++) {
            int ev = event_of(s, d[slot_pred(s)], o);
            if (ev >= 0) c[2 * s] += ev, c[2 * s + 1]++;
        }
    }
}

/* The kept counts answer for the whole history at m's thresholds (an
 * empty history has none: a cleared one leaves its last run's counts
 * until the next position is counted). */
static int counts_cover(const ViewModel *m) {
    const ViewStats *s = &m->stats;
    return s->head && s->n > 0 && s->n == m->n_hist && s->tau == m->hdr.tau && s->theta_logit == m->hdr.theta_logit;
}

/* The span's cached counts answer for positions lo … hi at m's thresholds. */
static int span_cover(const ViewModel *m, int lo, int hi) {
    return m->span.head && m->span.c_gen == m->hist_gen && m->span.c_lo == lo && m->span.c_n == hi - lo + 1 &&
           m->span.c_tau == m->hdr.tau && m->span.c_theta_logit == m->hdr.theta_logit;
}

int view_span_count(ViewModel *m, Err *e) {
    int lo, hi;
    if (!view_span_range(m, m->n_hist - 1, &lo, &hi) || lo > hi || span_cover(m, lo, hi)) return 0;
    size_t cells = (size_t)m->n_layers * m->n_heads;
    if (!m->span.head && !(m->span.head = calloc(cells * VIEW_RATE_SLOTS * 2, sizeof *m->span.head)))
        return err_set(e, "view: out of memory for the span's rates of %zu heads", cells);
    /* the same history, thresholds and start, grown at its end: count only what came */
    int from = m->span.c_gen == m->hist_gen && m->span.c_lo == lo && m->span.c_tau == m->hdr.tau &&
                       m->span.c_theta_logit == m->hdr.theta_logit && lo + m->span.c_n <= hi + 1
                   ? lo + m->span.c_n
                   : lo;
    if (from == lo) memset(m->span.head, 0, cells * VIEW_RATE_SLOTS * 2 * sizeof *m->span.head);
    for (int i = from; i <= hi; i++) view_rates_count(m->hist[i], m->hdr.tau, m->hdr.theta_logit, m->span.head);
    m->span.c_gen = m->hist_gen, m->span.c_lo = lo, m->span.c_n = hi - lo + 1;
    m->span.c_tau = m->hdr.tau, m->span.c_theta_logit = m->hdr.theta_logit;
    return 0;
}

double view_head_rate(const ViewModel *m, int cell, ViewMetric k, int *n) {
    if (n) *n = 0;
    if (!view_metric_is_rate(k) || cell < 0 || cell >= m->n_layers * m->n_heads) return NAN;
    int slot = slot_of(k, m->agree_pred), lo, hi;
    int span = view_span_range(m, m->n_hist - 1, &lo, &hi);
    long ev = 0, cnt = 0;
    const int32_t *kept = span ? (span_cover(m, lo, hi) ? m->span.head : NULL) : (counts_cover(m) ? m->stats.head : NULL);
    if (kept) {
        const int32_t *c = kept + ((size_t)cell * VIEW_RATE_SLOTS + slot) * 2;
        ev = c[0], cnt = c[1];
    } else {
        for (int i = lo; i <= hi; i++) {
            int x = decide_has_choice(m->hist[i]) ? slot_event(m->hist[i], cell, slot, m->hdr.tau, m->hdr.theta_logit)
                                                  : -1;
            if (x >= 0) ev += x, cnt++;
        }
    }
    if (n) *n = (int)cnt;
    return cnt > 0 ? (double)ev / (double)cnt : NAN;
}

const char *view_rate_span(const ViewModel *m, char *buf, size_t n) {
    if (m->span.lo >= 0) snprintf(buf, n, "span %d-%d", m->span.lo, m->span.hi);
    else if (m->n_hist > 0) snprintf(buf, n, "pos 0-%d", m->n_hist - 1);
    else snprintf(buf, n, "no positions yet");
    return buf;
}
