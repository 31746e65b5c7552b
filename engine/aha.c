/* aha.c — the attention settings (AttnConfig) and the policies' names and parsers. */
#include "aha.h"
#include "decide.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each policy's row of the list (the rows that are policies, in order). */
#define AHA_ROW(ID, word, field, title, brief, spark, thr, policy, dec, ours) PRED_IF(policy, PRED_ROW_##ID, )
static const PredRow ROWS[POLICY_COUNT] = {PREDICTORS(AHA_ROW)};

static const PredInfo *policy_info(Policy p) { return &PRED_INFO[ROWS[p]]; }

AttnConfig aha_defaults(void) {
    AttnConfig a;
    memset(&a, 0, sizeof a);
    a.policy = POLICY_FULL;
    a.window = 32;
    a.sinks = 0;
    a.tau = 0.5f;
    a.theta_logit = decide_theta_logit(0.1);
    a.p = 0.1f;
    a.seed = 1;
    return a;
}

int aha_same_execution(const AttnConfig *a, const AttnConfig *b) {
    if (a->policy != b->policy || a->window != b->window || a->sinks != b->sinks || a->routers != b->routers ||
        a->router_bias != b->router_bias ||
        a->static_heads != b->static_heads || a->head_span != b->head_span || a->model_routers != b->model_routers ||
        a->force != b->force || (a->force && a->force_from != b->force_from) || a->n_windows != b->n_windows ||
        (a->n_windows && memcmp(a->windows, b->windows, (size_t)a->n_windows * sizeof(int))))
        return 0;
    switch (aha_policy_threshold(a->policy)) {
    case PRED_THR_TAU: return a->tau == b->tau;
    case PRED_THR_THETA: return a->theta_logit == b->theta_logit;
    case PRED_THR_P: return a->p == b->p && a->seed == b->seed;
    default: return 1;
    }
}

const char *aha_policy_name(Policy p) { return (p >= 0 && p < POLICY_COUNT) ? policy_info(p)->word : "?"; }

int aha_policy_parse(const char *s, Policy *out, Err *e) {
    for (int i = 0; i < POLICY_COUNT; i++)
        if (!strcmp(s, aha_policy_name((Policy)i))) { *out = (Policy)i; return 0; }
    char names[160];
    aha_policy_list(names, sizeof names, ", ");
    return err_set(e, "unknown policy '%s' (%s)", s, names);
}

void aha_policy_list(char *buf, size_t cap, const char *sep) {
    size_t len = 0;
    if (cap) buf[0] = 0;
    for (int p = 0; p < POLICY_COUNT && len < cap; p++)
        len += snprintf(buf + len, cap - len, "%s%s", p ? sep : "", aha_policy_name((Policy)p));
}

PredThr aha_policy_threshold(Policy p) { return (p >= 0 && p < POLICY_COUNT) ? policy_info(p)->thr : PRED_THR_NONE; }

int aha_check(const AttnConfig *a, int n_layers, int n_heads, Err *e) {
    (void)n_layers; (void)n_heads;
    if (a->window < 1) return err_set(e, "window must be at least 1 (got %d)", a->window);
    if (a->sinks < 0) return err_set(e, "sinks must be >= 0 (got %d)", a->sinks);
    if (!(a->tau >= 0 && a->tau <= 1)) return err_set(e, "tau must be in [0, 1]");
    if (isnan(a->theta_logit)) return err_set(e, "theta must be in [0, 1]");
    if (!(a->p >= 0 && a->p <= 1)) return err_set(e, "p must be in [0, 1]");
    if (a->policy == POLICY_AHA && !a->routers && !a->model_routers)
        return err_set(e, "policy aha needs routers (--routers FILE, or --routers random[:SEED])");
    if (a->policy == POLICY_STATIC && !a->static_heads)
        return err_set(e, "policy static needs a head set (--static-heads l.h,... or a file)");
    for (int k = 0; k < a->n_windows; k++)
        if (!a->windows || a->windows[k] < 1 || (k && a->windows[k] <= a->windows[k - 1]))
            return err_set(e, "a multi-choice router's windows must be increasing whole numbers from 1");
    if (a->n_windows && (!a->routers || a->head_span))
        return err_set(e, a->head_span ? "a multi-choice router chooses each head's window: it cannot run beside "
                                         "per-head windows (moa:, windows:)"
                                       : "a multi-choice router's windows need its routers");
    return 0;
}

int aha_parse_heads(const char *spec, int n_layers, int n_heads, uint8_t **out, Err *e) {
    uint8_t *m = calloc((size_t)n_layers * n_heads, 1);
    if (!m) return err_set(e, "out of memory");
    const char *s = spec;
    while (*s) {
        while (*s == ' ' || *s == '\n' || *s == '\t' || *s == ',') s++;
        if (!*s) break;
        if (*s == '#') { while (*s && *s != '\n') s++; continue; }
        char *end;
        long l = strtol(s, &end, 10);
        if (end == s || *end != '.') { free(m); return err_set(e, "bad head '%.20s' (expected layer.head)", s); }
        s = end + 1;
        long h = strtol(s, &end, 10);
        if (end == s) { free(m); return err_set(e, "bad head '%.20s' (expected layer.head)", s); }
        if (l < 0 || l >= n_layers || h < 0 || h >= n_heads) {
            free(m);
            return err_set(e, "head %ld.%ld out of range (model has %d layers x %d heads)", l, h, n_layers, n_heads);
        }
        m[l * n_heads + h] = 1;
        s = end;
    }
    *out = m;
    return 0;
}
