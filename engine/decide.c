/* decide.c — the predictors' rules and their scores (see decide.h). */
#include "decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRED_INFO_ROW(ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    {word, #field, title, brief, spark, PRED_THR_##thr, policy, PRED_SCORED_##dec, PRED_LABEL_##dec, ours},
const PredInfo PRED_INFO[PRED_COUNT] = {PREDICTORS(PRED_INFO_ROW)};

void pred_words(char *buf, size_t cap, int policy, int scored, const char *sep) {
    size_t len = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; i < PRED_COUNT && len < cap; i++)
        if ((!policy || PRED_INFO[i].policy) && (!scored || PRED_INFO[i].scored))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? sep : "", PRED_INFO[i].word);
}

/* DecidePred's rows in the list (the scored ones in its order, then the
 * label): decide_cell's threshold is read on every cell, so in one step. */
#define DECIDE_ROW(ID, word, field, title, brief, spark, thr, policy, dec, ours) PRED_ROW_##ID,
static const PredRow ROWS[DECIDE_COUNT] = {DECIDE_PREDICTORS(DECIDE_ROW)};

const PredInfo *decide_info(DecidePred p) { return p >= 0 && p < DECIDE_COUNT ? &PRED_INFO[ROWS[p]] : NULL; }

static const PredInfo *info_or_none(DecidePred p) {
    static const PredInfo none = {"?", "?", "?", "", "", PRED_THR_NONE, 0, 0, 0, 0};
    const PredInfo *r = p >= 0 && p < DECIDE_COUNT ? decide_info(p) : NULL;
    return r ? r : &none;
}

const char *decide_field(DecidePred p) { return info_or_none(p)->field; }

const char *decide_name(DecidePred p) { return info_or_none(p)->word; }

const char *decide_title(DecidePred p) { return info_or_none(p)->title; }

int decide_parse(const char *s, DecidePred *out) {
    for (int p = 0; s && p < DECIDE_COUNT; p++)
        if (!strcmp(s, decide_name((DecidePred)p))) { *out = (DecidePred)p; return 0; }
    return -1;
}

void decide_list(char *buf, size_t cap, int n, const char *sep) {
    size_t len = 0;
    if (cap) buf[0] = 0;
    for (int p = 0; p < n && p < DECIDE_COUNT && len < cap; p++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", p ? sep : "", decide_name((DecidePred)p));
}

/* A uniform in [0,1) hashed from (seed, pos, layer, head), not drawn from a
 * stream: threads, prefill and decode meet the cells in different orders
 * and must still agree. */
static float uniform(uint64_t seed, int pos, int layer, int head) {
    uint64_t z = seed ^ ((uint64_t)(uint32_t)pos << 32) ^ ((uint64_t)(uint32_t)layer << 16) ^ (uint64_t)(uint32_t)head;
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) / 16777216.0f;
}

PredThr decide_threshold(DecidePred p) { return info_or_none(p)->thr; }

int decide_random(uint64_t seed, int pos, int layer, int head, float p) {
    return uniform(seed, pos, layer, head) < p;
}

int decide_cell(const StepTrace *t, int cell, DecidePred p, float tau, double theta_logit) {
    if (!decide_has_choice(t) || trace_is_arch_local(t, cell) || p < 0 || p >= DECIDE_COUNT) return -1;
    float v = decide_value(t, cell, p); /* the one map from predictor to field */
    switch (PRED_INFO[ROWS[p]].thr) {
    case PRED_THR_GATE: return isnan(v) ? -1 : v != 0;
    case PRED_THR_TAU: return decide_router(v, tau);
    default: return decide_logit(v, theta_logit); /* the estimates and the oracle: log-odds against θ */
    }
}

/* A trace field as the value a predictor thresholds: an integer field's
 * missing -1 (the gate's) as NAN, like a float field's. */
static float value_of_int(int v) { return v < 0 ? NAN : (float)v; }
static float value_of_float(float v) { return v; }
#define DECIDE_AS_FLOAT(v) _Generic((v), float: value_of_float, default: value_of_int)(v)

float decide_value(const StepTrace *t, int cell, DecidePred p) {
    switch (p) {
#define DECIDE_VALUE(ID, word, field, title, brief, spark, thr, policy, dec, ours) \
    case DECIDE_##ID: return DECIDE_AS_FLOAT(t->field[cell]);
        DECIDE_PREDICTORS(DECIDE_VALUE)
    default: return NAN;
    }
}

int decide_label(const StepTrace *t, int cell, double theta_logit) {
    return decide_has_choice(t) && !trace_is_arch_local(t, cell) ? decide_logit(t->oracle_logit[cell], theta_logit) : -1;
}

void decide_tally(DecideCounts *c, int pred, int label) {
    if (pred < 0 || label < 0) return;
    if (pred && label) c->tp++;
    else if (pred) c->fp++;
    else if (label) c->fn++;
    else c->tn++;
}

static double share(long a, long b) { return b ? (double)a / b : NAN; }

DecideRates decide_rates(const DecideCounts *c) {
    DecideRates r;
    r.precision = share(c->tp, c->tp + c->fp);
    r.recall = share(c->tp, c->tp + c->fn);
    r.f1 = share(2 * c->tp, 2 * c->tp + c->fp + c->fn);
    r.predicted_rate = share(c->tp + c->fp, c->tp + c->fp + c->fn + c->tn);
    return r;
}

/* One item "L2H1=local" (or "L2=global") into force; 0, or -1 with e set. */
static int force_item(const char *item, int n_layers, int n_heads, int8_t *force, Err *e) {
    int layer, head = -1, used = 0;
    char word[8];
    if (sscanf(item, "L%d%n", &layer, &used) != 1) return err_set(e, "ablate: \"%s\": expected L<layer>[H<head>]=local|global", item);
    if (item[used] == 'H') {
        int more = 0;
        if (sscanf(item + used, "H%d%n", &head, &more) != 1 || head < 0) return err_set(e, "ablate: \"%s\": expected a head after H", item);
        used += more;
    }
    if (item[used] != '=' || sscanf(item + used + 1, "%7s", word) != 1 || (strcmp(word, "local") && strcmp(word, "global")))
        return err_set(e, "ablate: \"%s\": expected =local or =global", item);
    if (layer < 0 || layer >= n_layers) return err_set(e, "ablate: \"%s\": layer %d is not in 0-%d", item, layer, n_layers - 1);
    if (head >= n_heads)
        return err_set(e, "ablate: \"%s\": head %d is not in 0-%d", item, head, n_heads - 1);
    int8_t v = word[0] == 'g';
    for (int h = 0; h < n_heads; h++)
        if (head < 0 || h == head) force[layer * n_heads + h] = v;
    return 0;
}

int decide_force_parse(const char *spec, int n_layers, int n_heads, int8_t *force, int *from, Err *e) {
    char buf[512];
    if (!spec || !*spec) return err_set(e, "ablate: empty (expected e.g. L2H1=local@496)");
    if (strlen(spec) >= sizeof buf) return err_set(e, "ablate: longer than %zu characters", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", spec);
    memset(force, -1, (size_t)n_layers * n_heads);
    *from = 0;
    char *at = strchr(buf, '@');
    if (at) {
        char *end;
        long pos = strtol(at + 1, &end, 10);
        if (end == at + 1 || *end || pos < 0 || pos > 1L << 30) return err_set(e, "ablate: \"%s\": not a position", at + 1);
        *from = (int)pos, *at = 0;
    }
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (force_item(item, n_layers, n_heads, force, e)) return -1;
    return 0;
}

int decide_multi(const float *z, int k, float tau, float *glogit) {
    int best = 0;
    for (int i = 1; i < k; i++)
        if (z[i] > z[best]) best = i; /* strictly: a tie keeps the shorter window */
    *glogit = z[k] - z[best];
    return decide_router_logit(*glogit, tau) == 1 ? k : best;
}

/* Whether every head of layer l is forced to v. */
static int layer_forced(const int8_t *force, int l, int n_heads, int8_t v) {
    for (int h = 0; h < n_heads; h++)
        if (force[l * n_heads + h] != v) return 0;
    return 1;
}

int decide_force_format(const int8_t *force, int from, int n_layers, int n_heads, char *buf, size_t cap) {
    size_t len = 0;
    if (!cap) return -1;
    buf[0] = 0;
    for (int l = 0; force && l < n_layers; l++)
        for (int h = 0; h < n_heads; h++) {
            int8_t v = force[l * n_heads + h];
            if (v < 0) continue;
            int whole = layer_forced(force, l, n_heads, v) && n_heads > 1, k;
            if (whole) k = snprintf(buf + len, cap - len, "%sL%d=%s", len ? "," : "", l, v ? "global" : "local");
            else k = snprintf(buf + len, cap - len, "%sL%dH%d=%s", len ? "," : "", l, h, v ? "global" : "local");
            if (k < 0 || (size_t)k >= cap - len) return buf[0] = 0, -1;
            len += (size_t)k;
            if (whole) break; /* the layer's item names every head */
        }
    if (!len) return 0;
    int k = from > 0 ? snprintf(buf + len, cap - len, "@%d", from) : 0;
    if (k < 0 || (size_t)k >= cap - len) return buf[0] = 0, -1;
    return 0;
}
