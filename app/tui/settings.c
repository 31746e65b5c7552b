/* settings.c — the policy, window and thresholds of a TUI run: a change
 * that alters what executes re-evaluates the tokens as a new, linked run;
 * one that only re-thresholds stored values re-scores them (see tui.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/tui/state.h"

/* The next policy that can run on what was loaded. */
static Policy next_policy(const Tui *t, Policy p) {
    for (int i = 0; i < POLICY_COUNT; i++) {
        p = (Policy)((p + 1) % POLICY_COUNT);
        if (p == POLICY_AHA && !t->L->routers.w) continue;
        if (p == POLICY_STATIC && !t->L->static_heads) continue;
        return p;
    }
    return p;
}

int tui_next_threshold(ViewAction a, float *tau, double *theta_logit) {
    switch (a) {
    case VIEW_ACT_TAU_UP: *tau = *tau + 0.05f <= 1.0f ? *tau + 0.05f : 1.0f; return 1;
    case VIEW_ACT_TAU_DOWN: *tau = *tau - 0.05f >= 0.0f ? *tau - 0.05f : 0.0f; return 1;
    case VIEW_ACT_THETA_UP: *theta_logit = decide_theta_logit(fmin(1.0, decide_prob(*theta_logit) + 0.05)); return 1;
    case VIEW_ACT_THETA_DOWN: *theta_logit = decide_theta_logit(fmax(0.0, decide_prob(*theta_logit) - 0.05)); return 1;
    default: return 0;
    }
}

void tui_rescore(Tui *t, float tau, double theta_logit) {
    Err e;
    t->m.hdr.tau = tau, t->m.hdr.theta_logit = theta_logit;
    if (view_stats_sync(&t->m, &e)) view_set_status(&t->m, "%s", e.msg);
    t->dirty = 1;
}

void tui_change_setting(Tui *t, ViewAction a) {
    AttnConfig c = t->cfg;
    int seq = t->L->model.c.seq_len;
    switch (a) {
    case VIEW_ACT_CHANGE_POLICY: c.policy = next_policy(t, c.policy); break;
    case VIEW_ACT_WINDOW_UP: c.window = c.window * 2 <= seq ? c.window * 2 : seq; break;
    case VIEW_ACT_WINDOW_DOWN: c.window = c.window / 2 >= 1 ? c.window / 2 : 1; break;
    default:
        if (!tui_next_threshold(a, &c.tau, &c.theta_logit)) return;
    }
    int trained = c.policy == POLICY_AHA && c.routers ? t->L->routers.window : 0;
    char note[48] = ""; /* beside w, so a status line cut at 80 columns still shows it */
    if (trained > 0 && trained != c.window) snprintf(note, sizeof note, " (routers trained for w=%d)", trained);
    snprintf(t->reevaluating_what, sizeof t->reevaluating_what, "%s, w=%d%s, tau=%.2f, theta=%.2f",
             aha_policy_name(c.policy), c.window, note, c.tau, decide_prob(c.theta_logit));
    if (!memcmp(&c, &t->cfg, sizeof c)) { /* at a limit: nothing changed, nothing to record */
        view_set_status(&t->m, "unchanged: %s", t->reevaluating_what);
        return;
    }
    int same = aha_same_execution(&c, &t->cfg);
    if (!t->reevaluating) t->reeval_from = t->cfg; /* a second press keeps the settings of the run on screen */
    t->cfg = c;
    if (same) { /* the same branches run: re-threshold the stored values, record nothing */
        tui_rescore(t, c.tau, c.theta_logit);
        view_set_status(&t->m, "re-scored (policy %s runs the same): %s", aha_policy_name(c.policy),
                        t->reevaluating_what);
        return;
    }
    tui_set_play(t, 0);
    tui_worker_restart(&t->w, &c, NULL);
    t->reevaluating = 1;
    view_set_status(&t->m, "re-evaluating under %s", t->reevaluating_what);
}

void tui_reeval_stopped(Tui *t) {
    t->cfg = t->reeval_from;
    t->reevaluating = 0, t->reeval_note[0] = 0;
    t->new_run_pending = 0; /* no step of the stopped run comes: the parent stays */
    t->m.hdr.tau = t->cfg.tau, t->m.hdr.theta_logit = t->cfg.theta_logit;
}

int tui_stop_reeval(Tui *t) {
    if (t->replay) return 0;
    int how = tui_worker_stop_reeval(&t->w);
    if (how == 2) {
        tui_reeval_stopped(t);
        view_set_status(&t->m, "re-evaluation cancelled before it began: nothing recorded");
    } else if (how == 1) view_set_status(&t->m, "stopping the re-evaluation\xe2\x80\xa6");
    return how != 0;
}
