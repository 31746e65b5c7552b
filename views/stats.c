/* stats.c — cumulative per-position counts as steps arrive, and their recount at new thresholds.
 *
 * Cumulative per-position counts behind the header's shares and
 * the per-layer bars (see metric.h). Collected when steps arrive, so the
 * drawing side only reads them; a change of thresholds recounts them a
 * slice at a time beside the counts in use (view_rescore_step). */
#include <stdlib.h>
#include <string.h>

#include "views/metric.h"
#include "views/rates.h"

/* Add step t's counts to the cumulative rows prev (NULL at position 0),
 * deciding at m's thresholds. */
static void count_step(const ViewModel *m, const StepTrace *t, const int32_t *prev_l, const double *prev_t,
                       int32_t *lay, double *tot) {
    int L = m->n_layers, H = m->n_heads;
    for (int l = 0; l < L; l++) {
        int32_t *c = lay + 4 * l;
        for (int k = 0; k < 4; k++) c[k] = prev_l ? prev_l[4 * l + k] : 0;
        for (int cell = l * H; cell < (l + 1) * H; cell++) {
            int a = view_aha_decision(m, t, cell), o = view_oracle_decision(m, t, cell);
            if (a >= 0) c[0] += a, c[1]++;
            if (o >= 0) c[2] += o, c[3]++;
        }
    }
    for (int k = 0; k < VIEW_TOTALS; k++) tot[k] = prev_t ? prev_t[k] : 0;
    view_count_step(t, tot);
}

/* Room for n positions' rows, and for the per-head rate counters (one set,
 * for the last position counted). */
static int reserve(ViewStats *s, int n_layers, int n_heads, int n, Err *e) {
    if (!s->head && !(s->head = calloc((size_t)n_layers * n_heads * VIEW_RATE_SLOTS * 2, sizeof *s->head)))
        return err_set(e, "view: out of memory for the rates of %d heads", n_layers * n_heads);
    if (n <= s->cap) return 0;
    int cap = s->cap ? s->cap : 256;
    while (cap < n) cap *= 2;
    int32_t *l = realloc(s->layer, (size_t)cap * n_layers * 4 * sizeof *l);
    if (l) s->layer = l;
    double *t = realloc(s->total, (size_t)cap * VIEW_TOTALS * sizeof *t);
    if (t) s->total = t;
    if (!l || !t) return err_set(e, "view: out of memory for running counts of %d steps", cap);
    s->cap = cap;
    return 0;
}

/* Count positions s->n .. upto-1 of the history into s, deciding as m
 * (whose thresholds are s's) does. */
static int count_into(const ViewModel *m, ViewStats *s, int upto, Err *e) {
    if (reserve(s, m->n_layers, m->n_heads, upto, e)) return -1;
    int L4 = m->n_layers * 4;
    if (s->n == 0) memset(s->head, 0, (size_t)m->n_layers * m->n_heads * VIEW_RATE_SLOTS * 2 * sizeof *s->head);
    for (int i = s->n; i < upto; i++) {
        const int32_t *pl = i ? s->layer + (size_t)(i - 1) * L4 : NULL;
        const double *pt = i ? s->total + (size_t)(i - 1) * VIEW_TOTALS : NULL;
        count_step(m, m->hist[i], pl, pt, s->layer + (size_t)i * L4, s->total + (size_t)i * VIEW_TOTALS);
        view_rates_count(m->hist[i], m->hdr.tau, m->hdr.theta_logit, s->head);
    }
    if (upto > s->n) s->n = upto;
    return 0;
}

int view_stats_sync(ViewModel *m, Err *e) {
    if (m->stats.tau != m->hdr.tau || m->stats.theta_logit != m->hdr.theta_logit || m->stats.n > m->n_hist) {
        m->stats.n = 0;
        m->stats.tau = m->hdr.tau;
        m->stats.theta_logit = m->hdr.theta_logit;
    }
    if (count_into(m, &m->stats, m->n_hist, e)) return -1;
    return view_span_count(m, e);
}

static void stats_release(ViewStats *s) {
    free(s->layer);
    free(s->total);
    free(s->head);
    s->layer = NULL;
    s->total = NULL;
    s->head = NULL;
    s->n = s->cap = 0;
}

void view_stats_free(ViewModel *m) {
    stats_release(&m->stats);
    stats_release(&m->rescore);
    m->rescoring = 0;
}

void view_rescore_begin(ViewModel *m, float tau, double theta_logit) {
    m->rescore.tau = tau, m->rescore.theta_logit = theta_logit;
    m->rescore.n = 0;
    m->rescoring = 1;
}

int view_rescore_step(ViewModel *m, int max_pos, Err *e) {
    if (!m->rescoring) return 1;
    if (m->rescore.n > m->n_hist) m->rescore.n = 0; /* the history was cleared meanwhile */
    int upto = m->n_hist - m->rescore.n > max_pos ? m->rescore.n + max_pos : m->n_hist;
    /* decide as the model will once the new thresholds are in force */
    ViewModel at = *m;
    at.hdr.tau = m->rescore.tau, at.hdr.theta_logit = m->rescore.theta_logit;
    if (count_into(&at, &m->rescore, upto, e)) {
        m->rescoring = 0;
        return -1;
    }
    if (m->rescore.n < m->n_hist) return 0;
    ViewStats done = m->rescore;
    m->rescore = m->stats, m->stats = done;
    m->hdr.tau = done.tau, m->hdr.theta_logit = done.theta_logit;
    m->rescoring = 0;
    return view_span_count(m, e) ? -1 : 1;
}

void view_rescore_cancel(ViewModel *m) { m->rescoring = 0; }
