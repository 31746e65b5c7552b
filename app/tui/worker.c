/* worker.c — the engine thread behind the TUI (see worker.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/args.h"
#include "app/progress.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "app/tui/worker.h"
#include "engine/attn_pattern.h"

/* Hand a finished trace to the UI (called with mu held): the trace itself,
 * which the UI then owns; 0, or -1 (the caller keeps it) out of memory. */
static int publish(TuiWorker *w, StepTrace *t) {
    if (w->n_out == w->cap_out) {
        int cap = w->cap_out ? 2 * w->cap_out : 64;
        StepTrace **grown = realloc(w->out, cap * sizeof *grown);
        if (!grown) return -1;
        w->out = grown, w->cap_out = cap;
    }
    w->out[w->n_out++] = t;
    return 0;
}

static void end_run(TuiWorker *w, const char *status) {
    Err e;
    pthread_mutex_lock(&w->mu);
    int64_t run = w->run_id;
    w->run_id = 0;
    pthread_mutex_unlock(&w->mu);
    if (w->store && run) store_run_end(w->store, run, status, &e);
}

/* Record traces from..n-1 of t (the ones before are in the store); a
 * database error stops recording, not the run. */
static void record(TuiWorker *w, StepTrace **t, int from, int n) {
    Err e;
    for (int i = from; w->store && w->run_id && i < n; i++)
        if (store_write_step(w->store, w->run_id, t[i], NULL, &e)) {
            pthread_mutex_lock(&w->mu);
            snprintf(w->message, sizeof w->message, "recording stopped: %s", e.msg);
            pthread_mutex_unlock(&w->mu);
            end_run(w, "failed");
        }
}

/* Record and publish traces, the first `written` of them already recorded.
 * Published traces change owner: their slots in t become NULL. */
static void deliver(TuiWorker *w, StepTrace **t, int n, int written) {
    record(w, t, written, n);
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < n; i++)
        if (publish(w, t[i]) == 0) t[i] = NULL;
    w->shown_run = w->run_id;
    memcpy(w->ids, w->ses.ids, (size_t)w->ses.n_fed * sizeof *w->ids);
    w->n_ids = w->ses.n_fed;
    pthread_mutex_unlock(&w->mu);
}

/* Mark which of traces from..n-1 were prompt tokens: teacher-forced tokens
 * past the original prompt stay generated ones. */
static void mark_prompt(const TuiWorker *w, StepTrace **t, int from, int n) {
    for (int i = from; i < n; i++) t[i]->is_prompt = t[i]->pos < w->n_prompt;
}

/* Begin a run: session under attn, fed from text or from teacher-forced ids.
 * Returns 0, or -1 with e set. Called without mu. */
static int begin(TuiWorker *w, const AttnConfig *attn, const char *prompt, const int *ids, int n_ids, int n_prompt,
                 int64_t parent, Err *e) {
    /* a re-evaluation keeps the positions its parent ran; a new prompt gets its own */
    int steps = w->have_ses ? w->ses.steps : w->steps;
    char warn[200] = "";
    if (prompt) steps = app_steps_for(w->tok, w->model->c.seq_len, prompt, w->steps, w->steps_given, warn, sizeof warn);
    if (w->have_ses) session_free(&w->ses);
    w->have_ses = 0;
    if (session_init(&w->ses, w->model, w->tok, attn, steps, w->temperature, w->topp, w->seed, w->threads, e))
        return -1;
    w->have_ses = 1;
    if (fwd_keep_queries(&w->ses.rs, e)) return -1;
    const Config *c = &w->model->c;
    const char *keep = getenv("AHASCOPE_TEST_WHY_KEEP_MB"); /* test knob: 0 recomputes every why */
    double keep_mb = keep ? atof(keep) : TUI_WHY_KEEP_MB;
    w->why_kept = (double)c->n_layers * c->seq_len * c->dim * sizeof(float) <= keep_mb * 1048576.0;
    if (w->why_kept && fwd_keep_router_history(&w->ses.rs, e)) return -1;
    int rc = prompt ? session_start_text(&w->ses, prompt, strlen(prompt), e)
                    : session_resume_ids(&w->ses, ids, n_ids, n_prompt, e);
    if (rc) return -1;
    StoreRunInfo info = w->info;
    info.steps = w->ses.steps;
    snprintf(info.policy, sizeof info.policy, "%s", aha_policy_name(attn->policy));
    info.window = attn->window, info.sinks = attn->sinks, info.tau = attn->tau, info.theta_logit = attn->theta_logit;
    info.p = attn->p, info.profile = attn->profile, info.parent_run_id = parent;
    info.head_span = (float *)attn->head_span; /* the heads' own windows, borrowed for the runs row */
    /* an ablation child (the `!` key) says what it forced, so runs, B and compare can tell it apart */
    decide_force_format(attn->force, attn->force_from, w->model->c.n_layers, w->model->c.n_heads, info.ablate,
                        sizeof info.ablate);
    if (prompt) info.prompt = (char *)prompt;
    if (w->store && store_run_begin(w->store, &info, e)) {
        w->store = NULL; /* keep running without recording; say so */
        pthread_mutex_lock(&w->mu);
        snprintf(w->message, sizeof w->message, "not recording: %s", e->msg);
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_lock(&w->mu);
    if (warn[0] && !w->message[0]) snprintf(w->message, sizeof w->message, "%s", warn);
    w->run_id = w->store ? info.run_id : 0;
    if (w->run_id) w->last_run = w->run_id;
    w->attn = *attn;
    w->n_prompt = prompt ? w->ses.n_prompt : n_prompt;
    w->finished = 0;
    w->cleared = 1;
    for (int i = 0; i < w->n_out; i++) trace_free(w->out[i]);
    w->n_out = 0;
    pthread_mutex_unlock(&w->mu);
    return 0;
}

/* The test knobs' pause after a chunk (worker-only fields: w->reeval is
 * written on this thread). */
static void chunk_pause(const TuiWorker *w) {
    long ms = w->reeval && w->reeval_delay_ms >= 0 ? w->reeval_delay_ms : w->chunk_delay_ms;
    if (ms > 0) nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Between the chunks and layers of a long prefill (engine thread): publish how far it
 * has come, and stop for a quit or a new prompt, which would throw the
 * rest away. */
static int on_prefill(void *user, int done, int total) {
    TuiWorker *w = user;
    if (w->pre && done > w->pre_written) {
        /* the chunks fed so far go to the store now, so it keeps pace with the
         * engine; the screen gets them all at the end (a re-evaluation's
         * parent stays on it until then) */
        mark_prompt(w, w->pre, w->pre_written, done);
        record(w, w->pre, w->pre_written, done);
        w->pre_written = done;
    }
    if (done > w->prefill_done) chunk_pause(w);
    pthread_mutex_lock(&w->mu);
    w->prefill_done = done, w->prefill_total = total;
    w->prefill_s = clock_now() - w->prefill_t0;
    /* a re-evaluation also stops for Esc, or for a newer request that replaces it */
    int stop = w->quit || (w->restart && w->next_prompt) || (w->reeval && (w->stop_reeval || w->restart));
    pthread_mutex_unlock(&w->mu);
    return stop;
}

/* Prefill the n pending positions into t; a prompt of more than one chunk,
 * or any re-evaluation, reports its progress (and can be stopped). Returns
 * the positions fed. */
static int prefill(TuiWorker *w, StepTrace **t, int n) {
    pthread_mutex_lock(&w->mu);
    int chunked = n > PROGRESS_PREFILL_CHUNK || w->reeval;
    pthread_mutex_unlock(&w->mu);
    if (chunked) {
        pthread_mutex_lock(&w->mu);
        w->prefilling = 1, w->prefill_done = 0, w->prefill_total = n, w->prefill_s = 0;
        w->prefill_t0 = clock_now();
        pthread_mutex_unlock(&w->mu);
        session_set_progress(&w->ses, PROGRESS_PREFILL_CHUNK, on_prefill, w);
        if (w->reeval) chunk_pause(w); /* a test can press a key before the first chunk, too */
    }
    w->pre = t, w->pre_written = 0;
    int fed = session_prefill(&w->ses, t);
    w->pre = NULL;
    session_set_progress(&w->ses, 0, NULL, NULL);
    pthread_mutex_lock(&w->mu);
    w->prefilling = 0;
    pthread_mutex_unlock(&w->mu);
    return fed;
}

/* A re-evaluation stopped after fed of n positions (Esc, or a newer request):
 * the child run keeps the positions it has and ends as interrupted; the
 * parent's tokens and settings stay the worker's, so the next request
 * re-evaluates them again. */
static void keep_stopped_reeval(TuiWorker *w, StepTrace **t, int fed, int n) {
    mark_prompt(w, t, w->pre_written, fed);
    pthread_mutex_lock(&w->mu);
    int64_t run = w->run_id;
    pthread_mutex_unlock(&w->mu);
    record(w, t, w->pre_written, fed);
    end_run(w, "interrupted");
    pthread_mutex_lock(&w->mu);
    w->reeval_stopped = w->restart ? 2 : 1;
    w->stop_reeval = 0;
    w->reeval_done = fed, w->reeval_total = n, w->reeval_run = run;
    /* Esc: the run on screen is the next one's parent again; replaced, the chain of
     * rapid keys goes on through the stopped run (worker.h, lineage) unless it kept
     * no position: a diff against it would compare nothing */
    if (!w->restart || fed == 0) w->last_run = w->reeval_parent;
    w->attn = w->reeval_from;
    w->finished = 1; /* the session now holds the stopped run: the parent cannot grow further here */
    pthread_mutex_unlock(&w->mu);
}

/* Feed the pending prompt (all at once) or one new token. */
static void step(TuiWorker *w) {
    const Config *c = &w->model->c;
    int n = session_prompt_pending(&w->ses);
    if (n > 0) {
        StepTrace **t = calloc(n, sizeof *t);
        int ok = t != NULL;
        for (int i = 0; ok && i < n; i++) ok = (t[i] = trace_new_top(c->n_layers, c->n_heads, w->attn_top)) != NULL;
        double t0 = clock_now();
        int fed = ok ? prefill(w, t, n) : 0;
        pthread_mutex_lock(&w->mu);
        int reeval = w->reeval;
        pthread_mutex_unlock(&w->mu);
        if (ok && fed < n && reeval) keep_stopped_reeval(w, t, fed, n); /* the parent stays on screen */
        else if (ok && fed < n) end_run(w, "interrupted"); /* stopped: nothing of it is shown */
        else if (ok) {
            double dt = clock_now() - t0;
            mark_prompt(w, t, w->pre_written, n);
            deliver(w, t, n, w->pre_written);
            pthread_mutex_lock(&w->mu);
            if (dt > 0) w->tok_s = n / dt;
            pthread_mutex_unlock(&w->mu);
        }
        for (int i = 0; t && i < n; i++) trace_free(t[i]);
        free(t);
        return;
    }
    StepTrace *t = trace_new_top(c->n_layers, c->n_heads, w->attn_top);
    if (!t) return;
    double t0 = clock_now();
    int more = session_step(&w->ses, t);
    double dt = clock_now() - t0;
    if (more) deliver(w, &t, 1, 0); /* t becomes NULL: the UI has it */
    Err e;
    int failed = !more && app_session_error(&w->ses, &e);
    if (failed) end_run(w, "failed"); /* never a finished run of garbage */
    pthread_mutex_lock(&w->mu);
    if (failed) snprintf(w->message, sizeof w->message, "%s", e.msg);
    if (more && dt > 0) w->tok_s = w->tok_s > 0 ? 0.8 * w->tok_s + 0.2 / dt : 1 / dt;
    if (!more) w->finished = 1;
    pthread_mutex_unlock(&w->mu);
    trace_free(t);
}

/* The why of (pos, l, h) answered, for tui_worker_take_why (mu held). */
static void answer_why(TuiWorker *w, const RouterWhy *r, int rc, int pos, int l, int h) {
    w->why = *r, w->why_rc = rc;
    w->why_ready = 1, w->why_rpos = pos, w->why_rlayer = l, w->why_rhead = h;
}

/* Drop the recompute under way, answering that it stopped. */
static void stop_feed(TuiWorker *w) {
    if (!w->why_feeding) return;
    RouterWhy r = {0};
    answer_why(w, &r, -4, w->why_feed.pos, w->why_feed.layer, w->why_feed.head);
    router_why_feed_end(&w->why_feed);
    w->why_feeding = w->why_cancel = 0;
}

/* The comparison's stop: a quit, a newer request, or Esc. The test knobs
 * of a re-evaluation slow each of its looks too (a position, a layer of
 * its prefill), so a test can press Esc while it runs. */
static int diff_stop(void *user) {
    TuiWorker *w = user;
    long ms = w->reeval_delay_ms >= 0 ? w->reeval_delay_ms : w->chunk_delay_ms;
    if (ms > 0) nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
    pthread_mutex_lock(&w->mu);
    int stop = w->quit || w->restart || w->stop_reeval;
    pthread_mutex_unlock(&w->mu);
    return stop;
}

/* The child just re-evaluated (every position of it handed over) against
 * its parent's settings, computed without mu and handed over whole. */
static void compare_child(TuiWorker *w, const AttnConfig *parent, const AttnConfig *child, int k, int64_t parent_run) {
    AblateDiff *d = calloc(1, sizeof *d);
    Err e;
    pthread_mutex_lock(&w->mu);
    w->reeval = 0, w->diffing = 1; /* the child is whole: Esc now stops the comparison alone */
    int64_t run = w->run_id;
    pthread_mutex_unlock(&w->mu);
    int rc = d ? ablate_diff_run(w->model, parent, child, w->ses.ids, w->ses.n_fed, child->force_from, k, w->threads,
                                 diff_stop, w, d, &e)
               : err_set(&e, "out of memory");
    pthread_mutex_lock(&w->mu);
    w->diffing = 0, w->stop_reeval = 0;
    if (rc == 0) {
        if (w->diff) ablate_diff_free(w->diff), free(w->diff);
        w->diff = d, w->diff_run = run, w->diff_parent = parent_run, d = NULL;
    } else if (rc > 0) w->diff_stopped = 1;
    else snprintf(w->message, sizeof w->message, "comparing the ablation: %s", e.msg);
    pthread_mutex_unlock(&w->mu);
    free(d);
}

/* Take a restart request (mu held); run it without mu. */
static void do_restart(TuiWorker *w) {
    stop_feed(w); /* it reads the session about to be replaced */
    w->busy = 1; /* a big prompt takes a while to tokenize, a re-evaluation to compute */
    AttnConfig a = w->next_attn;
    char *prompt = w->next_prompt;
    int *ids = w->next_ids, n = w->n_next_ids, n_prompt = w->next_n_prompt;
    int64_t parent = w->next_reeval ? w->last_run : 0;
    int diff_k = prompt ? 0 : w->next_diff_k;
    AttnConfig from = w->attn;
    w->next_prompt = NULL, w->next_ids = NULL, w->restart = 0, w->next_diff_k = 0;
    w->reeval = !prompt, w->reeval_parent = parent, w->reeval_from = w->attn, w->stop_reeval = 0;
    pthread_mutex_unlock(&w->mu);
    end_run(w, "done");
    Err e;
    if (begin(w, &a, prompt, ids, n, n_prompt, parent, &e)) {
        pthread_mutex_lock(&w->mu);
        snprintf(w->message, sizeof w->message, "%s", e.msg);
        w->finished = 1;
        pthread_mutex_unlock(&w->mu);
    } else if (!prompt) {
        step(w); /* re-evaluate the whole sequence at once: the views compare like with like */
        if (diff_k > 0 && w->ses.n_fed == n && a.force_from < n) compare_child(w, &from, &a, diff_k, parent);
    }
    free(prompt);
    free(ids);
    pthread_mutex_lock(&w->mu);
    w->busy = 0;
    w->reeval = 0;
}

/* Answer an attention-weights request (mu held while reading the request). */
static void do_attention(TuiWorker *w) {
    int pos = w->attn_pos, l = w->attn_layer, h = w->attn_head;
    w->attn_req = 0;
    if (pos >= w->ses.n_fed) return; /* not computed in this session */
    fwd_attention_weights(&w->ses.rs, l, h, pos, w->attn_w);
    w->attn_ready = 1, w->attn_n = pos + 1, w->attn_rpos = pos, w->attn_rlayer = l, w->attn_rhead = h;
}

/* Answer a pattern request: n²/2 dot products, computed with mu released
 * (only this thread touches the session) so the UI's takes never wait. */
static void do_pattern(TuiWorker *w) {
    int l = w->pat_layer, h = w->pat_head, n = w->pat_n, bin = w->pat_bin;
    w->pat_req = 0;
    if (n > w->ses.n_fed) n = w->ses.n_fed;
    if (n < 1) return;
    int nb = attn_pattern_cells(n, bin);
    float *grid = malloc((size_t)nb * nb * sizeof *grid);
    pthread_mutex_unlock(&w->mu);
    int ok = grid && attn_pattern(&w->ses.rs, l, h, n, bin, grid) == 0;
    pthread_mutex_lock(&w->mu);
    if (!ok) { free(grid); return; }
    free(w->pat_w);
    w->pat_w = grid, w->pat_rn = n, w->pat_rbin = bin, w->pat_rlayer = l, w->pat_rhead = h;
}

/* Answer a rows request: every head's pattern at one position a cell,
 * computed with mu released as a pattern is. */
static void do_rows(TuiWorker *w) {
    int n = w->rows_n < w->ses.n_fed ? w->rows_n : w->ses.n_fed, cells = w->model->c.n_layers * w->model->c.n_heads;
    w->rows_req = 0;
    if (n < 1) return;
    size_t each = (size_t)n * n;
    float *rows = each * cells <= TUI_ROWS_MAX_FLOATS ? malloc(each * cells * sizeof *rows) : NULL;
    int rc = each * cells > TUI_ROWS_MAX_FLOATS ? -2 : !rows ? -3 : 0;
    pthread_mutex_unlock(&w->mu);
    for (int c = 0; rc == 0 && c < cells; c++)
        if (attn_pattern(&w->ses.rs, c / w->model->c.n_heads, c % w->model->c.n_heads, n, 1, rows + each * c)) rc = -1;
    pthread_mutex_lock(&w->mu);
    if (rc) free(rows), rows = NULL;
    free(w->rows_w);
    w->rows_w = rows, w->rows_rn = n, w->rows_rc = rc, w->rows_ready = 1;
}

/* Answer a why request: from the kept router inputs, one dot product's
 * terms (cheap enough under mu); or, for a model too large to keep them,
 * begin feeding the tokens up to pos afresh (feed_why), replacing a
 * recompute still under way. */
static void do_why(TuiWorker *w) {
    w->why_req = 0;
    int pos = w->why_pos, l = w->why_layer, h = w->why_head;
    RouterWhy r = {0};
    int rc = -2;
    stop_feed(w);
    if (pos < w->ses.n_fed && w->why_kept) {
        rc = router_why_at(w->model, &w->ses.rs, &w->ses.attn, l, h, pos, ROUTER_WHY_TOP, &r);
    } else if (pos < w->ses.n_fed) {
        Err e;
        rc = router_why_feed_begin(&w->why_feed, w->model, &w->ses.attn, pos, l, h, w->threads, ROUTER_WHY_TOP, &e);
        if (rc == 0) {
            w->why_feeding = 1, w->why_cancel = 0, w->why_fed = 0, w->why_to_feed = pos + 1;
            return;
        }
        if (rc == -2) rc = -3;
    }
    answer_why(w, &r, rc, pos, l, h);
}

/* One chunk of the recompute under way, with mu released (only this thread
 * touches the session and the feed) so that the UI's takes never wait; a
 * chunk's worth of time is the longest a step or a pattern waits for it. */
static void feed_why(TuiWorker *w) {
    if (w->why_cancel) {
        stop_feed(w);
        return;
    }
    RouterWhy r = {0};
    long ms = w->chunk_delay_ms;
    pthread_mutex_unlock(&w->mu);
    if (ms > 0) nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
    int done = router_why_feed_step(&w->why_feed, w->model, &w->ses.attn, w->ses.ids, &r);
    pthread_mutex_lock(&w->mu);
    w->why_fed = w->why_feed.done;
    if (!done) return;
    answer_why(w, &r, 0, w->why_feed.pos, w->why_feed.layer, w->why_feed.head);
    router_why_feed_end(&w->why_feed);
    w->why_feeding = w->why_cancel = 0;
}

static void wait_until(TuiWorker *w, double when) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double left = when - clock_now();
    if (left <= 0) return;
    ts.tv_sec += (time_t)left;
    ts.tv_nsec += (long)((left - (time_t)left) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&w->cv, &w->mu, &ts);
}

static void *worker_main(void *arg) {
    TuiWorker *w = arg;
    double last_step = 0;
    /* Test knobs: pretend every step, or every chunk of a long prefill, is
     * slow (a big model) to check that the UI still answers keys at once
     * and shows what runs meanwhile. */
    const char *delay = getenv("AHASCOPE_TEST_STEP_DELAY_MS"), *chunk = getenv("AHASCOPE_TEST_PREFILL_DELAY_MS");
    long delay_ms = delay ? atol(delay) : 0;
    w->chunk_delay_ms = chunk ? atol(chunk) : 0;
    const char *reeval = getenv("AHASCOPE_TEST_REEVAL_DELAY_MS"); /* the tests of a re-evaluation need no slow prefill */
    w->reeval_delay_ms = reeval ? atol(reeval) : -1;
    pthread_mutex_lock(&w->mu);
    while (!w->quit) {
        if (w->restart) { do_restart(w); continue; }
        if (w->attn_req) { do_attention(w); continue; }
        if (w->pat_req) { do_pattern(w); continue; }
        if (w->rows_req) { do_rows(w); continue; }
        if (w->why_req) { do_why(w); continue; }
        int want = !w->finished && (w->want_steps > 0 || w->playing);
        /* a recompute's chunks take turns with the steps: a step waits for one chunk at most */
        if (w->why_feeding && (!want || !w->why_turn || w->why_cancel)) {
            w->why_turn = 1;
            feed_why(w);
            continue;
        }
        w->why_turn = 0;
        if (!want) { pthread_cond_wait(&w->cv, &w->mu); continue; }
        /* the interval follows the speed asked for now, not the one of the last step */
        double due = last_step + (w->speed > 0 ? 1.0 / w->speed : 0);
        if (w->want_steps == 0 && w->speed > 0 && clock_now() < due) { wait_until(w, due); continue; }
        if (w->want_steps > 0) w->want_steps--;
        last_step = clock_now();
        w->busy = 1;
        pthread_mutex_unlock(&w->mu);
        if (delay_ms > 0) nanosleep(&(struct timespec){delay_ms / 1000, (delay_ms % 1000) * 1000000L}, NULL);
        step(w);
        pthread_mutex_lock(&w->mu);
        w->busy = 0;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int tui_worker_start(TuiWorker *w, const AttnConfig *attn, const char *prompt, Err *e) {
    const Config *c = &w->model->c;
    w->attn_w = malloc((size_t)c->seq_len * sizeof *w->attn_w);
    w->ids = malloc((size_t)(c->seq_len + 1) * sizeof *w->ids);
    if (!w->attn_w || !w->ids) return err_set(e, "out of memory");
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (begin(w, attn, prompt, NULL, 0, 0, 0, e)) return -1;
    w->want_steps = 1; /* the prompt shows at once */
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) return err_set(e, "cannot start the engine thread");
    return 0;
}

/* A restart request (mu held by the caller), comparing k tokens on when k > 0. */
static void ask_restart(TuiWorker *w, const AttnConfig *attn, const char *prompt, int k) {
    free(w->next_prompt);
    free(w->next_ids);
    w->next_prompt = prompt ? strdup(prompt) : NULL;
    w->next_ids = NULL;
    if (!prompt && w->n_ids > 0 && (w->next_ids = malloc((size_t)w->n_ids * sizeof *w->next_ids))) {
        memcpy(w->next_ids, w->ids, (size_t)w->n_ids * sizeof *w->ids);
        w->n_next_ids = w->n_ids;
        w->next_n_prompt = w->n_prompt;
    }
    if (!prompt && !w->next_ids) w->next_prompt = strdup(""); /* nothing fed yet: start afresh */
    w->next_attn = *attn;
    w->next_reeval = !prompt;
    w->restart = 1;
    w->want_steps = prompt ? 1 : 0;
    w->next_diff_k = prompt ? 0 : k;
    pthread_cond_signal(&w->cv);
}

void tui_worker_restart(TuiWorker *w, const AttnConfig *attn, const char *prompt) {
    pthread_mutex_lock(&w->mu);
    ask_restart(w, attn, prompt, 0);
    pthread_mutex_unlock(&w->mu);
}

void tui_worker_restart_compare(TuiWorker *w, const AttnConfig *attn, int k) {
    pthread_mutex_lock(&w->mu);
    ask_restart(w, attn, NULL, k);
    pthread_mutex_unlock(&w->mu);
}

AblateDiff *tui_worker_take_diff(TuiWorker *w, int *stopped, int64_t *run, int64_t *parent) {
    pthread_mutex_lock(&w->mu);
    AblateDiff *d = w->diff;
    *stopped = w->diff_stopped, *run = w->diff_run, *parent = w->diff_parent;
    w->diff = NULL, w->diff_stopped = 0;
    pthread_mutex_unlock(&w->mu);
    return d;
}

int tui_worker_diffing(TuiWorker *w) {
    pthread_mutex_lock(&w->mu);
    int on = w->diffing;
    pthread_mutex_unlock(&w->mu);
    return on;
}

void tui_worker_take(TuiWorker *w, TuiTake *out, float *attn_buf) {
    pthread_mutex_lock(&w->mu);
    out->traces = w->out, out->n = w->n_out; /* the array and its traces change hands */
    w->out = NULL, w->n_out = w->cap_out = 0;
    out->new_run = w->cleared;
    w->cleared = 0;
    out->run_id = w->run_id, out->attn = w->attn, out->finished = w->finished, out->tok_s = w->tok_s;
    out->busy = w->busy || w->restart || (!w->finished && w->want_steps > 0);
    out->prefilling = w->prefilling, out->prefill_done = w->prefill_done, out->prefill_total = w->prefill_total;
    out->prefill_s = w->prefilling ? clock_now() - w->prefill_t0 : w->prefill_s;
    out->reevaluating = w->reeval, out->reeval_parent = w->reeval_parent;
    out->reeval_stopped = w->reeval_stopped, out->reeval_done = w->reeval_done, out->reeval_total = w->reeval_total;
    out->reeval_run = w->reeval_run, out->shown_run = w->shown_run;
    w->reeval_stopped = 0;
    snprintf(out->message, sizeof out->message, "%s", w->message);
    w->message[0] = 0;
    out->attn_ready = w->attn_ready;
    if (w->attn_ready) {
        memcpy(attn_buf, w->attn_w, (size_t)w->attn_n * sizeof *attn_buf);
        out->attn_n = w->attn_n, out->attn_pos = w->attn_rpos, out->attn_layer = w->attn_rlayer;
        out->attn_head = w->attn_rhead;
        w->attn_ready = 0;
    }
    pthread_mutex_unlock(&w->mu);
}

int tui_worker_step(TuiWorker *w) {
    pthread_mutex_lock(&w->mu);
    int more = !w->finished;
    if (more) w->want_steps++;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return more;
}

int tui_worker_play(TuiWorker *w, int playing, double speed) {
    pthread_mutex_lock(&w->mu);
    w->playing = playing && !w->finished;
    w->speed = speed;
    int now = w->playing;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return now;
}

void tui_worker_request_attention(TuiWorker *w, int pos, int layer, int head) {
    pthread_mutex_lock(&w->mu);
    w->attn_req = 1, w->attn_pos = pos, w->attn_layer = layer, w->attn_head = head;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void tui_worker_request_pattern(TuiWorker *w, int layer, int head, int n, int bin) {
    pthread_mutex_lock(&w->mu);
    w->pat_req = 1, w->pat_layer = layer, w->pat_head = head, w->pat_n = n, w->pat_bin = bin;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void tui_worker_request_rows(TuiWorker *w, int n) {
    pthread_mutex_lock(&w->mu);
    w->rows_req = 1, w->rows_n = n, w->rows_ready = 0;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

int tui_worker_take_rows(TuiWorker *w, float **rows, int *n, int *rc) {
    pthread_mutex_lock(&w->mu);
    int ready = w->rows_ready;
    if (ready) *rows = w->rows_w, *n = w->rows_rn, *rc = w->rows_rc, w->rows_w = NULL, w->rows_ready = 0;
    pthread_mutex_unlock(&w->mu);
    return ready;
}

void tui_worker_request_why(TuiWorker *w, int pos, int layer, int head) {
    pthread_mutex_lock(&w->mu);
    w->why_req = 1, w->why_pos = pos, w->why_layer = layer, w->why_head = head;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

int tui_worker_why_progress(TuiWorker *w, int *fed, int *to_feed, int *pos, int *layer, int *head) {
    pthread_mutex_lock(&w->mu);
    int on = w->why_feeding;
    if (on) *fed = w->why_fed, *to_feed = w->why_to_feed, *pos = w->why_feed.pos, *layer = w->why_feed.layer,
            *head = w->why_feed.head;
    pthread_mutex_unlock(&w->mu);
    return on;
}

int tui_worker_cancel_why(TuiWorker *w) {
    pthread_mutex_lock(&w->mu);
    int on = w->why_feeding && !w->why_cancel;
    if (on) w->why_cancel = 1, pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return on;
}

int tui_worker_take_why(TuiWorker *w, RouterWhy *out, int *rc, int *pos, int *layer, int *head) {
    pthread_mutex_lock(&w->mu);
    int ready = w->why_ready;
    if (ready) *out = w->why, *rc = w->why_rc, *pos = w->why_rpos, *layer = w->why_rlayer, *head = w->why_rhead;
    w->why_ready = 0;
    pthread_mutex_unlock(&w->mu);
    return ready;
}

float *tui_worker_take_pattern(TuiWorker *w, int *layer, int *head, int *n, int *bin) {
    pthread_mutex_lock(&w->mu);
    float *grid = w->pat_w;
    *layer = w->pat_rlayer, *head = w->pat_rhead, *n = w->pat_rn, *bin = w->pat_rbin;
    w->pat_w = NULL;
    pthread_mutex_unlock(&w->mu);
    return grid;
}

int tui_worker_stop_reeval(TuiWorker *w) {
    pthread_mutex_lock(&w->mu);
    int running = w->reeval && !w->reeval_stopped, asked = w->restart && w->next_reeval, diffing = w->diffing;
    if (asked) { /* not begun yet: drop the request, nothing was recorded */
        free(w->next_ids), free(w->next_prompt);
        w->next_ids = NULL, w->next_prompt = NULL, w->restart = 0;
    } else if (running || diffing) w->stop_reeval = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return asked ? 2 : running ? 1 : diffing ? 3 : 0;
}

int64_t tui_worker_run_id(TuiWorker *w) {
    pthread_mutex_lock(&w->mu);
    int64_t run = w->run_id;
    pthread_mutex_unlock(&w->mu);
    return run;
}

void tui_worker_stop(TuiWorker *w) {
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    if (w->why_feeding) router_why_feed_end(&w->why_feed);
    end_run(w, "done");
    Err e;
    store_close(w->store, &e);
    w->store = NULL;
    if (w->have_ses) session_free(&w->ses);
    for (int i = 0; i < w->n_out; i++) trace_free(w->out[i]);
    free(w->out);
    free(w->next_prompt);
    free(w->next_ids);
    free(w->attn_w);
    free(w->pat_w);
    if (w->diff) ablate_diff_free(w->diff), free(w->diff);
    free(w->rows_w);
    free(w->ids);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}
