/* settings.c — the policy, window and thresholds that re-evaluate or re-score a run (a slice a frame).
 *
 * The policy, window and thresholds of a TUI run: a change
 * that alters what executes re-evaluates the tokens as a new, linked run;
 * one that only re-thresholds stored values re-scores them (see README.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/tui/state.h"
#include "views/explain.h"

/* The next policy that can run on what was loaded. */
static Policy next_policy(const Tui *t, Policy p) {
    for (int i = 0; i < POLICY_COUNT; i++) {
        p = (Policy)((p + 1) % POLICY_COUNT);
        if (tui_policy_runs(t, p)) return p;
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

/* Seconds of the UI thread a frame gives to re-scoring, and the positions
 * counted between two looks at the clock. */
#define RESCORE_FRAME_BUDGET 0.008
enum { RESCORE_SLICE = 32 };

void tui_thresholds(const Tui *t, float *tau, double *theta_logit) {
    const ViewModel *m = &t->m;
    *tau = m->rescoring ? m->rescore.tau : m->hdr.tau;
    *theta_logit = m->rescoring ? m->rescore.theta_logit : m->hdr.theta_logit;
}

void tui_rescore(Tui *t, float tau, double theta_logit, const char *done) {
    snprintf(t->rescore_msg, sizeof t->rescore_msg, "%s", done);
    view_rescore_begin(&t->m, tau, theta_logit);
    t->rescore_shown = 0;
    tui_rescore_poll(t);
}

void tui_rescore_poll(Tui *t) {
    Err e;
    if (!t->m.rescoring) return;
    double t0 = clock_now(), now = t0;
    int rc = 0;
    while (rc == 0 && now - t0 < RESCORE_FRAME_BUDGET) {
        rc = view_rescore_step(&t->m, RESCORE_SLICE, &e);
        now = clock_now();
    }
    t->dirty = 1;
    if (rc != 0) view_clear_progress(&t->m);
    if (rc < 0) view_set_status(&t->m, "re-scoring: %s", e.msg);
    else if (rc > 0) view_set_status(&t->m, "%s", t->rescore_msg);
    else if (now - t->rescore_shown >= 0.1) { /* the progress line ten times a second */
        t->rescore_shown = now;
        char tt[48];
        view_tau_theta_text(tt, sizeof tt, " ", t->m.rescore.tau, decide_prob(t->m.rescore.theta_logit));
        view_set_progress(&t->m, "re-scoring at %s: %d of %d positions (Esc stops)", tt, t->m.rescore.n,
                          t->m.n_hist);
    }
}

int tui_cancel_rescore(Tui *t) {
    if (!t->m.rescoring) return 0;
    view_rescore_cancel(&t->m);
    view_clear_progress(&t->m);
    t->cfg.tau = t->m.hdr.tau, t->cfg.theta_logit = t->m.hdr.theta_logit; /* a live run's settings stay too */
    char tt[48];
    view_tau_theta_text(tt, sizeof tt, " ", t->m.hdr.tau, decide_prob(t->m.hdr.theta_logit));
    view_set_status(&t->m, "re-scoring stopped: %s stay", tt);
    t->dirty = 1;
    return 1;
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
    tui_apply_setting(t, &c);
}

int tui_policy_runs(const Tui *t, Policy p) {
    if (p == POLICY_AHA && !t->L->routers.w) return 0;
    if (p == POLICY_STATIC && !t->L->static_heads) return 0;
    return 1;
}

void tui_replay_rethreshold(Tui *t, float tau, double theta_logit) {
    char done[160], tt[48];
    view_tau_theta_text(tt, sizeof tt, " ", tau, decide_prob(theta_logit));
    snprintf(done, sizeof done, "replay re-scored at %s (the recorded gates stay)", tt);
    tui_rescore(t, tau, theta_logit, done);
}

/* tui_apply_setting's path, a re-evaluation compared with its parent k
 * tokens on when k > 0 (an ablation's). */
static void apply_setting(Tui *t, const AttnConfig *want, int k) {
    AttnConfig c = *want;
    int trained = c.policy == POLICY_AHA && c.routers ? t->L->routers.window : 0;
    char note[48] = ""; /* beside w, so a status line cut at 80 columns still shows it */
    if (trained > 0 && trained != c.window) snprintf(note, sizeof note, " (routers trained for w=%d)", trained);
    char tt[48];
    view_tau_theta_text(tt, sizeof tt, "=", c.tau, decide_prob(c.theta_logit));
    snprintf(t->reevaluating_what, sizeof t->reevaluating_what, "%s, w=%d%s, %s", aha_policy_name(c.policy),
             c.window, note, tt);
    if (!memcmp(&c, &t->cfg, sizeof c)) { /* at a limit: nothing changed, nothing to record */
        view_set_status(&t->m, "unchanged: %s", t->reevaluating_what);
        return;
    }
    int same = aha_same_execution(&c, &t->cfg);
    if (!t->reevaluating) t->reeval_from = t->cfg; /* a second press keeps the settings of the run on screen */
    t->cfg = c;
    if (same) { /* the same branches run: re-threshold the stored values, record nothing */
        char done[sizeof t->rescore_msg];
        snprintf(done, sizeof done, "re-scored (policy %s runs the same): %.150s", aha_policy_name(c.policy),
                 t->reevaluating_what);
        tui_rescore(t, c.tau, c.theta_logit, done);
        return;
    }
    tui_set_play(t, 0);
    if (k > 0) tui_worker_restart_compare(&t->w, &c, k);
    else tui_worker_restart(&t->w, &c, NULL);
    t->ablate_pending = k > 0; /* a newer request replaces the comparison too */
    t->reevaluating = 1;
    view_set_progress(&t->m, "re-evaluating under %s", t->reevaluating_what); /* its progress follows */
}

void tui_apply_setting(Tui *t, const AttnConfig *want) { apply_setting(t, want, 0); }

/* Keep force map f to the session's end (a worker may read it as a parent's
 * settings long after); 0, or -1 (f freed) out of memory. */
static int keep_map(Tui *t, int8_t *f) {
    int8_t **grown = realloc(t->ablate_maps, (size_t)(t->n_ablate_maps + 1) * sizeof *grown);
    if (!grown) return free(f), -1;
    t->ablate_maps = grown;
    t->ablate_maps[t->n_ablate_maps++] = f;
    return 0;
}

void tui_ablate(Tui *t) {
    int nl = t->L->model.c.n_layers, nh = t->L->model.c.n_heads, pos = t->m.cursor;
    if (pos < 0) { view_set_status(&t->m, "ablate: no position yet"); return; }
    int cell = t->m.sel_layer * nh + t->m.sel_head;
    int8_t *f = malloc((size_t)nl * nh);
    if (!f) { view_set_status(&t->m, "ablate: out of memory"); return; }
    memset(f, -1, (size_t)nl * nh);
    f[cell] = t->m.hist[pos]->gate[cell] == 1 ? 0 : 1;
    if (keep_map(t, f)) { view_set_status(&t->m, "ablate: out of memory"); return; }
    AttnConfig c = t->cfg;
    c.force = f, c.force_from = pos;
    apply_setting(t, &c, TUI_ABLATE_CONT);
    snprintf(t->ablate_what, sizeof t->ablate_what, "L%dH%d=%s@%d", t->m.sel_layer, t->m.sel_head,
             f[cell] ? "global" : "local", pos);
    snprintf(t->reevaluating_what, sizeof t->reevaluating_what, "ablate %s", t->ablate_what);
    view_set_progress(&t->m, "re-evaluating under %s", t->reevaluating_what);
}

void tui_reeval_stopped(Tui *t) {
    t->cfg = t->reeval_from;
    t->reevaluating = 0, t->reeval_note[0] = 0, t->ablate_pending = 0;
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
    else if (how == 3) view_set_status(&t->m, "stopping the ablation's comparison with its parent\xe2\x80\xa6");
    return how != 0;
}
