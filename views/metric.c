/* metric.c — metric values, swatches and running rates (see metric.h). */
#include "views/metric.h"
#include "engine/predictors.h"
#include "views/fixed.h"
#include "views/needle.h"
#include "views/rates.h"

#include <math.h>
#include <string.h>

#define METRIC_TITLE(name, type, missing, sql, show, title, short_name, doc) title,
#define METRIC_SHORT(name, type, missing, sql, show, title, short_name, doc) short_name,
#define RATE_TITLE(id, title, short_name, doc) title,
#define RATE_SHORT(id, title, short_name, doc) short_name,

const char *view_metric_name(ViewMetric k) {
    static const char *const names[VIEW_METRIC_COUNT] = {TRACE_HEAD_FIELDS(METRIC_TITLE)
                                                            VIEW_RATE_METRICS(RATE_TITLE) "agreement",
                                                            "weight on the needle"};
    return (k >= 0 && k < VIEW_METRIC_COUNT) ? names[k] : "?";
}

const char *view_metric_short(ViewMetric k) {
    static const char *const names[VIEW_METRIC_COUNT] = {TRACE_HEAD_FIELDS(METRIC_SHORT)
                                                            VIEW_RATE_METRICS(RATE_SHORT) "agree", "needle"};
    return (k >= 0 && k < VIEW_METRIC_COUNT) ? names[k] : "?";
}

ViewMetric view_metric_of_field(const char *field) {
#define METRIC_FIELD(name, type, missing, sql, show, title, short_name, doc) #name,
    static const char *const fields[] = {TRACE_HEAD_FIELDS(METRIC_FIELD)};
#undef METRIC_FIELD
    for (size_t k = 0; field && k < sizeof fields / sizeof fields[0]; k++)
        if (!strcmp(fields[k], field)) return (ViewMetric)k;
    return VIEW_METRIC_COUNT;
}

/* A field's value on [0, 1], by how the field list says to show it. */
static float show_GATE(double v, const StepTrace *t) { (void)t; return v < 0 ? NAN : (float)v; }
static float show_UNIT(double v, const StepTrace *t) { (void)t; return isnan(v) ? NAN : v < 0 ? 0.0f : v > 1 ? 1.0f : (float)v; }
static float show_PROB(double v, const StepTrace *t) { (void)t; return isnan(v) ? NAN : (float)decide_prob(v); } /* log-odds */
static float show_KEYS(double v, const StepTrace *t) { return v < 0 || t->pos < 0 ? NAN : show_UNIT(v / (t->pos + 1), t); }
/* The ratio on a 0 … 2 scale, so the regime boundary sits mid-gradient. */
static float show_REGIME(double v, const StepTrace *t) { return show_UNIT(view_regime(v, t->n_far) / 2, t); }
static float show_NONE(double v, const StepTrace *t) { (void)v, (void)t; return NAN; }

float view_regime(double sigma, int n_far) {
    return isnan(sigma) || n_far < 2 ? NAN : (float)(sigma / sqrt(2 * log((double)n_far)));
}

int view_metric_cycles(ViewMetric k) {
#define METRIC_CYCLES(name, type, missing, sql, show, title, short_name, doc) !!strcmp(#show, "NONE"),
#define RATE_CYCLES(id, title, short_name, doc) 1,
    static const int cycles[VIEW_METRIC_COUNT] = {TRACE_HEAD_FIELDS(METRIC_CYCLES) VIEW_RATE_METRICS(RATE_CYCLES) 1, 1};
#undef METRIC_CYCLES
#undef RATE_CYCLES
    return k >= 0 && k < VIEW_METRIC_COUNT && cycles[k];
}

ViewMetric view_metric_step(ViewMetric k, int dir) {
    for (int i = 0; i < VIEW_METRIC_COUNT; i++) {
        k = (ViewMetric)((k + dir + VIEW_METRIC_COUNT) % VIEW_METRIC_COUNT);
        if (view_metric_cycles(k)) break;
    }
    return k;
}

ViewMetric view_metric_counterfactual(void) { return view_metric_of_field(VIEW_COUNTERFACTUAL_FIELD); }

int view_metric_fixed_shows(ViewMetric k) {
    if (k < 0 || k >= VIEW_METRIC_RATE_GLOBAL || k == VIEW_METRIC_gate) return 0; /* not a field, or the gate */
    for (int i = 0; i < PRED_COUNT; i++) /* the input of any decision: nothing was decided there */
        if (view_metric_of_field(PRED_INFO[i].field) == k) return 0;
    return 1;
}

const char *view_pred_name(ViewPredictor p) { return p >= 0 && p < VIEW_PRED_COUNT ? decide_title(p) : "?"; }

float view_metric_value(const ViewModel *m, const StepTrace *t, int cell, ViewMetric k) {
    if (view_metric_is_rate(k)) { /* the event the rate counts: a bin's mean is the rate over the bin */
        int ev = view_rate_event(m, t, cell, k);
        return ev < 0 ? NAN : (float)ev;
    }
    if (k == VIEW_METRIC_NEEDLE) {
        double w = view_span_weight(m, t, cell, view_weight_kind(m)).w;
        return isnan(w) ? NAN : w > 1 ? 1.0f : (float)w;
    }
    switch (k) {
#define METRIC_VALUE(name, type, missing, sql, show, title, short_name, doc)                                    \
    case VIEW_METRIC_##name: return show_##show((double)t->name[cell], t);
        TRACE_HEAD_FIELDS(METRIC_VALUE)
#undef METRIC_VALUE
    default: return NAN;
    }
}

int view_level(float v) {
    if (isnan(v)) return VIEW_SW_NONE;
    int l = (int)floorf(v * VIEW_LEVELS);
    if (l < 0) l = 0;
    if (l > VIEW_LEVELS - 1) l = VIEW_LEVELS - 1;
    return VIEW_SW_LEVEL1 + l;
}

int view_pred_decision(const ViewModel *m, const StepTrace *t, int cell, ViewPredictor p) {
    return p >= 0 && p < VIEW_PRED_COUNT ? view_decide(t, cell, p, m->hdr.tau, m->hdr.theta_logit) : -1;
}

int view_oracle_decision(const ViewModel *m, const StepTrace *t, int cell) {
    return view_label(t, cell, m->hdr.theta_logit);
}

/* A fixed-local cell's swatch: the metric's level where it shows one
 * there and the value exists, else the fixed-local swatch. */
static int fixed_swatch(const ViewModel *m, const StepTrace *t, int cell) {
    int sw = view_metric_fixed_shows(m->metric) ? view_level(view_metric_value(m, t, cell, m->metric)) : VIEW_SW_NONE;
    return sw == VIEW_SW_NONE ? VIEW_SW_FIXED : sw;
}

int view_swatch(const ViewModel *m, const StepTrace *t, int cell) {
    if (view_is_fixed(t, cell)) return fixed_swatch(m, t, cell);
    /* before the first far key (t < w + S) global and local read the same
     * keys: the recorded gate decided nothing, and is drawn as not computed */
    if (m->metric == VIEW_METRIC_gate && !decide_has_choice(t)) return VIEW_SW_NONE;
    if (m->metric != VIEW_METRIC_AGREE) return view_level(view_metric_value(m, t, cell, m->metric));
    int p = view_pred_decision(m, t, cell, m->agree_pred);
    int o = view_oracle_decision(m, t, cell);
    if (p < 0 || o < 0) return VIEW_SW_NONE;
    if (p && o) return VIEW_SW_BOTH_GLOBAL;
    if (!p && !o) return VIEW_SW_BOTH_LOCAL;
    return o ? VIEW_SW_MISSED_GLOBAL : VIEW_SW_NEEDLESS_GLOBAL;
}

int view_heat_swatch(const ViewModel *m, const StepTrace *t, int cell) {
    if (!t) return VIEW_SW_NONE;
    if (view_is_fixed(t, cell)) return fixed_swatch(m, t, cell); /* counted in no rate */
    if (view_metric_is_rate(m->metric)) return view_level((float)view_head_rate(m, cell, m->metric, NULL));
    return view_swatch(m, t, cell);
}

/* The agreement classes, least to most worth seeing in a bin. */
static int agree_rank(int sw) {
    switch (sw) {
    case VIEW_SW_BOTH_LOCAL: return 1;
    case VIEW_SW_BOTH_GLOBAL: return 2;
    case VIEW_SW_NEEDLESS_GLOBAL: return 3;
    case VIEW_SW_MISSED_GLOBAL: return 4;
    default: return 0;
    }
}

int view_swatch_bin(const ViewModel *m, int cell, int p0, int p1) {
    if (p1 > m->n_hist) p1 = m->n_hist;
    if (p1 - p0 == 1) return view_swatch(m, m->hist[p0], cell);
    /* a layer's kind is the architecture's: the bin's first position says it for all */
    int fixed = p0 < p1 && view_is_fixed(m->hist[p0], cell);
    if (fixed && !view_metric_fixed_shows(m->metric)) return VIEW_SW_FIXED;
    if (m->metric == VIEW_METRIC_AGREE) {
        int worst = VIEW_SW_NONE;
        for (int i = p0; i < p1 && worst != VIEW_SW_MISSED_GLOBAL; i++) {
            int sw = view_swatch(m, m->hist[i], cell);
            if (agree_rank(sw) > agree_rank(worst)) worst = sw;
        }
        return worst;
    }
    double sum = 0;
    int n = 0;
    for (int i = p0; i < p1; i++) {
        float v = view_metric_value(m, m->hist[i], cell, m->metric);
        if (!isnan(v)) sum += v, n++;
    }
    int sw = view_level(n ? (float)(sum / n) : NAN);
    return fixed && sw == VIEW_SW_NONE ? VIEW_SW_FIXED : sw;
}

float view_global_share(const StepTrace *t) {
    double c[VIEW_TOTALS] = {0};
    view_count_step(t, c); /* the one count of executed decisions */
    return c[1] > 0 ? (float)(c[0] / c[1]) : NAN;
}

int view_token_swatch(const ViewModel *m, const StepTrace *t) {
    if (m->tint_share) return view_level(view_global_share(t));
    return view_swatch(m, t, m->sel_layer * m->n_heads + m->sel_head);
}

int view_aha_decision(const ViewModel *m, const StepTrace *t, int cell) {
    int d = view_pred_decision(m, t, cell, VIEW_PRED_AHA);
    return d >= 0 ? d : view_pred_decision(m, t, cell, VIEW_PRED_GATE);
}

/* The cumulative counts answer for position upto when they were made with
 * the current thresholds and reach that far. */
static int stats_cover(const ViewModel *m, int upto) {
    return upto >= 0 && upto < m->stats.n && m->stats.tau == m->hdr.tau && m->stats.theta_logit == m->hdr.theta_logit;
}

static float ratio(double a, double b) { return b > 0 ? (float)(a / b) : NAN; }

void view_layer_rates_in(const ViewModel *m, int lo, int hi, float *aha, float *oracle) {
    int L = m->n_layers, H = m->n_heads;
    if (hi >= m->n_hist) hi = m->n_hist - 1;
    if (lo < 0) lo = 0;
    if (stats_cover(m, hi)) { /* cumulative rows: the range is a difference of two */
        const int32_t *c = m->stats.layer + (size_t)hi * L * 4, *b = lo > 0 ? c - (size_t)(hi - lo + 1) * L * 4 : NULL;
        for (int l = 0; l < L; l++) {
            int32_t d[4];
            for (int k = 0; k < 4; k++) d[k] = c[4 * l + k] - (b ? b[4 * l + k] : 0);
            aha[l] = ratio(d[0], d[1]);
            oracle[l] = ratio(d[2], d[3]);
        }
        return;
    }
    for (int l = 0; l < L; l++) {
        int na = 0, ga = 0, no = 0, go = 0;
        for (int i = lo; i <= hi; i++) {
            const StepTrace *t = m->hist[i];
            for (int c = l * H; c < (l + 1) * H; c++) {
                int a = view_aha_decision(m, t, c), o = view_oracle_decision(m, t, c);
                if (a >= 0) na++, ga += a;
                if (o >= 0) no++, go += o;
            }
        }
        aha[l] = ratio(ga, na);
        oracle[l] = ratio(go, no);
    }
}

void view_layer_rates(const ViewModel *m, int upto, float *aha, float *oracle) {
    view_layer_rates_in(m, 0, upto, aha, oracle);
}

void view_count_step(const StepTrace *t, double tot[VIEW_TOTALS]) {
    int cells = trace_cells(t);
    for (int c = 0; c < cells; c++) {
        int d = view_decide(t, c, DECIDE_EXECUTED, 0, 0); /* -1 where there was no choice */
        if (d >= 0) tot[0] += d, tot[1]++;
        if (t->keys_read[c] >= 0) tot[2] += t->keys_read[c], tot[3] += t->pos + 1;
    }
    long kv = trace_kv_read_total(t), full = trace_kv_full(t);
    if (kv >= 0 && full > 0) tot[4] += (double)kv, tot[5] += (double)full;
}

void view_totals_in(const ViewModel *m, int lo, int hi, ViewTotals *out) {
    double c[VIEW_TOTALS] = {0};
    if (hi >= m->n_hist) hi = m->n_hist - 1;
    if (lo < 0) lo = 0;
    if (stats_cover(m, hi)) {
        for (int k = 0; k < VIEW_TOTALS; k++)
            c[k] = m->stats.total[(size_t)hi * VIEW_TOTALS + k] -
                   (lo > 0 ? m->stats.total[(size_t)(lo - 1) * VIEW_TOTALS + k] : 0);
    } else {
        for (int i = lo; i <= hi; i++) view_count_step(m->hist[i], c);
    }
    out->global_share = c[1] > 0 ? c[0] / c[1] : NAN;
    out->keys_share = c[3] > 0 ? c[2] / c[3] : NAN;
    out->kv_share = c[5] > 0 ? c[4] / c[5] : NAN;
}

void view_totals(const ViewModel *m, int upto, ViewTotals *out) { view_totals_in(m, 0, upto, out); }
