/* typed.c — settings typed as numbers (see typed.h). */
#include "app/tui/typed.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Log-odds beyond which θ means "always" or "never" for every mass a
 * float can hold; a typed value past it is a typing slip. */
#define TYPED_LOGIT_MAX 40.0

static const char *skip_space(const char *s) {
    while (isspace((unsigned char)*s)) s++;
    return s;
}

/* The word at *s (letters only) if it is one of names; *s moves past it. */
static int word_is(const char **s, const char *const *names) {
    const char *p = *s;
    size_t n = 0;
    while (isalpha((unsigned char)p[n])) n++;
    for (; *names; names++)
        if (n == strlen(*names) && !strncasecmp(p, *names, n)) {
            *s = skip_space(p + n);
            return 1;
        }
    return 0;
}

/* A finite number filling the rest of s; 1 and *v, or 0. */
static int number(const char *s, double *v) {
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && !errno && isfinite(*v) && !*skip_space(end);
}

static TuiTyped bad(const char *fmt, const char *arg) {
    TuiTyped g = {.kind = TUI_TYPED_BAD};
    snprintf(g.why, sizeof g.why, fmt, arg);
    return g;
}

TuiTyped tui_typed_parse(const char *s, int max_window) {
    static const char *const TAU[] = {"tau", "t", NULL}, *const THETA[] = {"theta", "o", NULL},
                             *const WINDOW[] = {"window", "w", NULL}, *const LOGIT[] = {"logit", NULL};
    const char *p = skip_space(s ? s : "");
    double v;
    if (word_is(&p, TAU)) {
        if (!number(p, &v)) return bad("set: \"%.60s\" is not a number: write tau 0.42", p);
        if (v < 0 || v > 1) return bad("set: tau %.30s is out of range (0 to 1)", p);
        return (TuiTyped){.kind = TUI_TYPED_TAU, .tau = (float)v};
    }
    if (word_is(&p, THETA)) {
        int logit = word_is(&p, LOGIT);
        if (!number(p, &v)) return bad("set: \"%.60s\" is not a number: write theta 0.9 or theta -2.2", p);
        logit = logit || v < 0 || v > 1;
        if (logit && fabs(v) > TYPED_LOGIT_MAX) return bad("set: theta %.30s is out of range (log-odds -40 to 40)", p);
        return (TuiTyped){
            .kind = TUI_TYPED_THETA, .theta_logit = logit ? v : decide_theta_logit(v), .logit_form = logit};
    }
    if (word_is(&p, WINDOW)) {
        if (!number(p, &v) || v != floor(v)) return bad("set: \"%.60s\" is not a whole number: write window 64", p);
        if (v < 1 || v > max_window) {
            TuiTyped g = {.kind = TUI_TYPED_BAD};
            snprintf(g.why, sizeof g.why, "set: window %.30s is out of range (1 to %d)", p, max_window);
            return g;
        }
        return (TuiTyped){.kind = TUI_TYPED_WINDOW, .window = (int)v};
    }
    return bad("set: \"%.60s\": write tau 0.42, theta 0.9 (or -2.2 log-odds) or window 64", p);
}

/* What the status line says θ was read as. */
static void theta_form(const TuiTyped *g, char *buf, size_t n) {
    if (g->logit_form) snprintf(buf, n, "theta read as log-odds %.2f (probability %.3f)", g->theta_logit,
                                decide_prob(g->theta_logit));
    else snprintf(buf, n, "theta read as a probability %.3f (log-odds %.2f)", decide_prob(g->theta_logit),
                  g->theta_logit);
}

void tui_typed_apply(Tui *t, const char *s) {
    int max_window = t->L ? t->L->model.c.seq_len : t->m.hdr.ctx_len > 0 ? t->m.hdr.ctx_len : 1 << 30;
    TuiTyped g = tui_typed_parse(s, max_window);
    if (g.kind == TUI_TYPED_BAD) {
        view_set_status(&t->m, "%s", g.why);
        return;
    }
    float tau;
    double theta;
    tui_thresholds(t, &tau, &theta);
    AttnConfig c = t->cfg;
    if (g.kind == TUI_TYPED_TAU) tau = c.tau = g.tau;
    if (g.kind == TUI_TYPED_THETA) theta = c.theta_logit = g.theta_logit;
    if (g.kind == TUI_TYPED_WINDOW) c.window = g.window;
    if (t->replay) {
        if (g.kind == TUI_TYPED_WINDOW) {
            view_set_status(&t->m, "replay of run %lld: a new window needs the model (%s)", (long long)t->replay_run,
                            t->from_live ? "Esc: the live run" : "tui without --replay");
            return;
        }
        tui_replay_rethreshold(t, tau, theta);
    } else tui_apply_setting(t, &c);
    if (g.kind != TUI_TYPED_THETA) return;
    /* the form read goes first, now and when a re-score ends: the rest may be cut at 80 columns */
    char form[120], rest[sizeof t->rescore_msg];
    theta_form(&g, form, sizeof form);
    snprintf(rest, sizeof rest, "%s", t->m.status[0] ? t->m.status : t->m.progress); /* what the setting started */
    view_set_status(&t->m, "%.80s; %.110s", form, rest);
    if (t->m.rescoring) {
        snprintf(rest, sizeof rest, "%s", t->rescore_msg);
        snprintf(t->rescore_msg, sizeof t->rescore_msg, "%.80s; %.110s", form, rest);
    }
}
