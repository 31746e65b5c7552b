/* stats.c — cumulative per-position counts behind the header's shares and
 * the per-layer bars (see metric.h). Collected when steps arrive, so the
 * drawing side only reads them. */
#include <stdlib.h>

#include "views/metric.h"

/* Add step t's counts to the cumulative rows prev (NULL at position 0). */
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

static int reserve(ViewModel *m, int n, Err *e) {
    if (n <= m->stats.cap) return 0;
    int cap = m->stats.cap ? m->stats.cap : 256;
    while (cap < n) cap *= 2;
    int32_t *l = realloc(m->stats.layer, (size_t)cap * m->n_layers * 4 * sizeof *l);
    if (l) m->stats.layer = l;
    double *t = realloc(m->stats.total, (size_t)cap * VIEW_TOTALS * sizeof *t);
    if (t) m->stats.total = t;
    if (!l || !t) return err_set(e, "view: out of memory for running counts of %d steps", cap);
    m->stats.cap = cap;
    return 0;
}

int view_stats_sync(ViewModel *m, Err *e) {
    if (m->stats.tau != m->hdr.tau || m->stats.theta_logit != m->hdr.theta_logit || m->stats.n > m->n_hist) {
        m->stats.n = 0;
        m->stats.tau = m->hdr.tau;
        m->stats.theta_logit = m->hdr.theta_logit;
    }
    if (reserve(m, m->n_hist, e)) return -1;
    int L4 = m->n_layers * 4;
    for (int i = m->stats.n; i < m->n_hist; i++) {
        const int32_t *pl = i ? m->stats.layer + (size_t)(i - 1) * L4 : NULL;
        const double *pt = i ? m->stats.total + (size_t)(i - 1) * VIEW_TOTALS : NULL;
        count_step(m, m->hist[i], pl, pt, m->stats.layer + (size_t)i * L4, m->stats.total + (size_t)i * VIEW_TOTALS);
    }
    m->stats.n = m->n_hist;
    return 0;
}

void view_stats_free(ViewModel *m) {
    free(m->stats.layer);
    free(m->stats.total);
    m->stats.layer = NULL;
    m->stats.total = NULL;
    m->stats.n = m->stats.cap = 0;
}
