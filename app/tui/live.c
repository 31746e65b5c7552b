/* live.c — a run on the model: open it, take the worker's results each frame, close it.
 *
 * A TUI run on the model: start it, take the worker's results
 * each frame, play and pause (see README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/run_info.h"
#include "app/setup.h"
#include "app/tui/state.h"
#include "engine/cost.h"
#include "views/pin.h"

/* A re-evaluation runs the same tokens: the run it replaces stays at hand
 * as its parent, so the inspector can set the two side by side; a new
 * prompt drops both. */
static void keep_or_clear(Tui *t) {
    /* a run being read to compare with (B's Tab) gives way: the new run's parent is compared */
    if (t->load_parent == 1) t->load_parent = 2, tui_job_cancel(&t->load);
    t->other_run = 0;
    t->parent_run = t->reevaluating ? t->screen_run : 0;
    if (!t->reevaluating) {
        view_drop_parent(&t->m);
        view_clear_history(&t->m);
        return;
    }
    /* the label names the run whose positions are kept: the recorded parent of the
     * child may be a stopped run of the same chain, which D names (worker.h) */
    char label[48] = ""; /* a run not recorded has no id to name */
    if (t->screen_run) snprintf(label, sizeof label, "run %lld", (long long)t->screen_run);
    view_keep_parent(&t->m, label);
}

/* Show the steps the worker finished. A new run keeps the old one on
 * screen until its first step arrives, then replaces it at the same
 * position. */
static void show_steps(Tui *t, TuiTake *k) {
    Err e;
    if (k->new_run) t->new_run_pending = 1;
    if (t->new_run_pending && k->n > 0) {
        t->restore = t->m.follow ? -1 : t->m.cursor;
        keep_or_clear(t);
        t->new_run_pending = 0;
        t->attn_pending = 0;
        /* an ablation's comparison with its parent begins now (ablate.c shows it) */
        const char *more = t->reevaluating && t->ablate_pending ? " \xc2\xb7 comparing with its parent\xe2\x80\xa6 (Esc stops)" : "";
        if (t->reevaluating && k->run_id)
            view_set_status(&t->m, "run %lld: %s%s", (long long)k->run_id, t->reevaluating_what, more);
        else if (t->reevaluating) view_set_status(&t->m, "not recorded: %s%s", t->reevaluating_what, more); /* --no-record: no id */
        t->reevaluating = 0, t->reeval_note[0] = 0;
    }
    for (int i = 0; i < k->n; i++) {
        if (view_push_owned(&t->m, k->traces[i], &e)) view_set_status(&t->m, "%s", e.msg);
        t->dirty = 1;
    }
    free(k->traces);
    if (t->restore >= 0 && t->restore < t->m.n_hist) t->m.cursor = t->restore, t->m.follow = 0, t->restore = -1;
}

/* The header facts of the run on screen. */
static void show_run(Tui *t, const TuiTake *k) {
    ViewHeader *h = &t->m.hdr;
    const AttnConfig *a = &k->attn;
    if (t->new_run_pending) return; /* still showing the previous run */
    /* the run whose positions are shown: after a stopped re-evaluation, its parent's; before
     * the first position, the one being prefilled */
    t->screen_run = !t->db ? 0 : k->shown_run ? k->shown_run : k->run_id;
    snprintf(h->policy, sizeof h->policy, "%s", aha_policy_name(a->policy));
    if (h->window != a->window || h->sinks != a->sinks) t->dirty = 1;
    h->window = a->window, h->sinks = a->sinks;
    /* thresholds that do not change execution are the UI's own (re-thresholded from stored values);
     * while a rescore counts, those in use stay until it is done */
    if (!t->m.rescoring && (h->tau != t->cfg.tau || h->theta_logit != t->cfg.theta_logit))
        h->tau = t->cfg.tau, h->theta_logit = t->cfg.theta_logit, t->dirty = 1;
    h->tok_s = k->tok_s;
    if (t->screen_run) snprintf(h->record, sizeof h->record, "%s run %lld", t->db, (long long)t->screen_run);
    else snprintf(h->record, sizeof h->record, "not recording");
    h->run_id = t->screen_run, h->seed = t->run.seed, h->seed_known = 1; /* a re-evaluation keeps its parent's seed */
}

/* A long prefill on the status line, "prefill 1024/4096 · 63 tok/s",
 * and in the (empty) token pane, redrawn ten times a second (the worker
 * runs it; keys go on being answered), then what it took once it ends. */
static void show_prefill(Tui *t, const TuiTake *k) {
    const char *dot = t->m.ascii ? "-" : "\xc2\xb7";
    double now = clock_now(), secs = k->prefill_s;
    if (k->prefilling) {
        if (t->prefill_on && now - t->prefill_shown < 0.1) return;
        t->prefill_shown = now, t->prefill_on = 1, t->dirty = 1;
        t->m.prefill_done = k->prefill_done, t->m.prefill_total = k->prefill_total;
        t->m.prefill_tok_s = secs > 0 ? k->prefill_done / secs : 0.0;
        view_set_progress(&t->m, "prefill %d/%d %s %.0f tok/s (q quits)", k->prefill_done, k->prefill_total, dot,
                          t->m.prefill_tok_s);
    } else if (t->prefill_on) {
        t->prefill_on = 0, t->dirty = 1;
        view_clear_progress(&t->m);
        t->m.prefill_total = 0;
        if (k->prefill_done == k->prefill_total && t->item_note[0]) view_set_status(&t->m, "%s", t->item_note);
        else if (k->prefill_done == k->prefill_total)
            view_set_status(&t->m, "prefilled %d tokens in %.1f s %s %.0f tok/s", k->prefill_total, secs, dot,
                            secs > 0 ? k->prefill_total / secs : 0.0);
        else
            view_set_status(&t->m, "prefill stopped at %d/%d", k->prefill_done, k->prefill_total);
    }
}

/* A re-evaluation on the status line, "re-evaluating run 1 under ... as
 * run 3: 128 of 200 positions · Esc stops", ten times a second while the
 * parent stays on screen; and what happened to one that was stopped. */
static int show_reeval(Tui *t, const TuiTake *k) {
    const char *dot = t->m.ascii ? "-" : "\xc2\xb7";
    if (k->reeval_stopped) {
        t->prefill_on = 0, t->dirty = 1;
        view_clear_progress(&t->m);
        char kept[64] = "it was not recorded";
        if (k->reeval_run) snprintf(kept, sizeof kept, "run %lld is kept, interrupted", (long long)k->reeval_run);
        if (k->reeval_stopped == 2) { /* a newer setting replaced it: its progress line says so */
            if (k->reeval_run)
                snprintf(t->reeval_note, sizeof t->reeval_note, " (run %lld stopped at %d, kept)",
                         (long long)k->reeval_run, k->reeval_done);
            else snprintf(t->reeval_note, sizeof t->reeval_note, " (the last one stopped at %d)", k->reeval_done);
            view_set_progress(&t->m, "re-evaluation stopped at %d of %d positions: %s; re-evaluating under %s",
                              k->reeval_done, k->reeval_total, kept, t->reevaluating_what);
            return 1;
        }
        tui_reeval_stopped(t);
        view_set_status(&t->m, "re-evaluation stopped at %d of %d positions: %s", k->reeval_done, k->reeval_total,
                        kept);
        return 1;
    }
    if (!k->reevaluating) return 0;
    if (!k->prefilling) { /* computed: its steps say which run it became */
        if (t->prefill_on) view_clear_progress(&t->m), t->dirty = 1;
        return t->prefill_on = 0, 1;
    }
    double now = clock_now();
    if (t->prefill_on && now - t->prefill_shown < 0.1) return 1;
    t->prefill_shown = now, t->prefill_on = 1, t->dirty = 1;
    char as[40] = "", of[40] = ""; /* unrecorded runs have no ids to name */
    if (k->run_id) snprintf(as, sizeof as, " as run %lld", (long long)k->run_id);
    if (k->reeval_parent) snprintf(of, sizeof of, " run %lld", (long long)k->reeval_parent);
    view_set_progress(&t->m, "re-evaluating%s under %s%s: %d of %d positions %s Esc stops%s", of,
                      t->reevaluating_what, as, k->prefill_done, k->prefill_total, dot, t->reeval_note);
    return 1;
}

void tui_take_results(Tui *t) {
    Err e;
    if (t->replay) return;
    TuiTake k;
    tui_worker_take(&t->w, &k, t->attn_buf);
    if (t->m.busy != k.busy) t->m.busy = k.busy, t->dirty = 1;
    if (!show_reeval(t, &k)) show_prefill(t, &k);
    show_steps(t, &k);
    if (k.attn_ready) {
        view_set_attention(&t->m, k.attn_pos, k.attn_layer, k.attn_head, t->attn_buf, k.attn_n, k.attn.window,
                           k.attn.sinks, &e);
        t->attn_pending = 0, t->dirty = 1;
    }
    if (k.message[0]) view_set_status(&t->m, "%s", k.message), t->dirty = 1;
    if (k.finished && t->playing) {
        t->playing = t->m.playing = 0;
        view_set_status(&t->m, "sequence finished");
        t->dirty = 1;
    }
    show_run(t, &k);
    tui_ablate_poll(t);
    int pos, l, hd;
    if (!t->attn_pending && view_attention_wanted(&t->m, &pos, &l, &hd)) {
        tui_worker_request_attention(&t->w, pos, l, hd);
        t->attn_pending = 1;
    }
}

/* The screen's header for the model loaded. */
static void live_header(Tui *t, const AppLoaded *L) {
    const char *slash = strrchr(L->model_path, '/');
    snprintf(t->m.hdr.model, sizeof t->m.hdr.model, "%.95s", slash ? slash + 1 : L->model_path);
    t->m.hdr.ctx_len = L->model.c.seq_len;
    t->m.hdr.weight_bytes = (double)model_decode_bytes(&L->model.c);
    t->m.hdr.kv_bytes_per_pos = (double)cost_kv_bytes(&L->model.c, 1);
    view_set_arch(&t->m.hdr, L->model.arch_name);
    int32_t win[MODEL_MAX_LAYERS]; /* each layer's own window, as the forward pass executes it */
    int n = L->model.c.n_layers < MODEL_MAX_LAYERS ? L->model.c.n_layers : MODEL_MAX_LAYERS;
    for (int l = 0; l < n; l++) win[l] = L->model.layers[l].window;
    t->m.hdr.layers = view_layer_kinds(win, n);
}

int tui_live_open(Tui *t, const TuiOpts *opts, Err *e) {
    t->run = opts->run;
    RunOpts *o = &t->run;
    const char *db = opts->db;
    t->sql_timeout = opts->sql_timeout;
    o->attn.profile = 1;
    /* With no policy or routers asked for, the demo runs AHA on the shipped
     * routers when the model has some (stories260K, w = 16: about a quarter
     * of the heads go global, so there is something to see). */
    static char routers[1100];
    char model[1024];
    if (!o->routers && !o->have_policy && !o->have_window &&
        app_model_path(o->model, model, sizeof model, NULL) == 0 && /* --model stories260K: its routers too */
        app_default_routers(model, routers, sizeof routers) == 0)
        o->routers = routers;
    if (app_load(o, &t->loaded, 1, e)) goto out;
    const AppLoaded *L = t->L = &t->loaded;
    t->db = db;
    t->speed_i = TUI_SPEED_START;
    t->restore = -1;
    if (!o->prompt) o->prompt = "Once upon a time";
    if (!(t->prompt = strdup(o->prompt))) { err_set(e, "out of memory for the prompt"); goto out; }
    if (view_init(&t->m, L->model.c.n_layers, L->model.c.n_heads, e)) goto out;
    if (view_set_marks(&t->m, opts->marks, opts->n_marks, e)) goto out_view;
    TuiWorker *w = &t->w;
    w->model = &L->model, w->tok = &L->tok, w->steps = o->steps, w->steps_given = o->have_steps;
    w->threads = opts->threads, w->attn_top = opts->attn_top;
    w->temperature = o->temperature, w->topp = o->topp, w->seed = o->seed;
    if (app_run_info(o, L, &w->info, e)) goto out_view;
    if (db && !(w->store = store_open(db, STORE_WRITE, 2000, e))) goto out_view;
    live_header(t, L);
    t->cfg = o->attn;
    if (!(t->attn_buf = malloc((size_t)L->model.c.seq_len * sizeof *t->attn_buf))) { err_set(e, "out of memory"); goto out_view; }
    if (tui_worker_start(w, &o->attn, o->prompt, e)) { store_close(w->store, NULL); goto out_view; }
    snprintf(t->item_note, sizeof t->item_note, "%s", opts->item_note ? opts->item_note : "");
    if (t->item_note[0]) view_set_status(&t->m, "%s", t->item_note);
    if (L->warning[0]) view_set_status(&t->m, "warning: %s", L->warning);
    return 0;
out_view:
    free(t->attn_buf);
    view_free(&t->m);
out:
    free(t->prompt);
    app_unload(&t->loaded);
    return -1;
}

void tui_live_close(Tui *t) {
    tui_worker_stop(&t->w);
    tui_free_kept(t);
    for (int i = 0; i < t->n_ablate_maps; i++) free(t->ablate_maps[i]);
    free(t->ablate_maps);
    if (t->ablate) ablate_diff_free(t->ablate), free(t->ablate);
    free(t->attn_buf);
    view_free(&t->m);
    free(t->prompt);
    app_unload(&t->loaded);
}
