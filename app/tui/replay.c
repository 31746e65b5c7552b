/* replay.c — a recorded run on the TUI without a model: load it, play it,
 * open another from the run browser, off the UI thread (see tui.h). */
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/tui/state.h"

/* Load every recorded step of run r into the view model. */
static int load_replay(Tui *t, Store *st, const StoreRunInfo *r, Err *e) {
    enum { CHUNK = 64 };
    StepTrace *buf[CHUNK];
    int k = store_run_attn_top(st, r->run_id, e), rc = k < 0 ? -1 : 0;
    for (int i = 0; i < CHUNK; i++) buf[i] = NULL;
    for (int i = 0; i < CHUNK && rc == 0; i++)
        if (!(buf[i] = trace_new_top(r->n_layers, r->n_heads, k)))
            rc = err_set(e, "%s: out of memory for run %lld (%d layers x %d heads)", t->db, (long long)r->run_id,
                         r->n_layers, r->n_heads);
    for (int pos = 0; rc == 0;) {
        int n = store_read_steps(st, r->run_id, pos, CHUNK, buf, e);
        if (n < 0) rc = -1;
        for (int i = 0; i < n && rc == 0; i++) rc = view_push(&t->m, buf[i], e);
        if (n < CHUNK) break;
        pos += n;
    }
    for (int i = 0; i < CHUNK; i++) trace_free(buf[i]);
    return rc;
}

static void replay_header(Tui *t, const StoreRunInfo *r) {
    ViewHeader *h = &t->m.hdr;
    const char *slash = strrchr(r->model, '/');
    snprintf(h->model, sizeof h->model, "%.95s", slash ? slash + 1 : r->model);
    snprintf(h->policy, sizeof h->policy, "%s", r->policy);
    snprintf(h->record, sizeof h->record, "replay %.100s run %lld", t->db, (long long)r->run_id);
    h->window = r->window, h->sinks = r->sinks, h->tau = (float)r->tau, h->theta_logit = r->theta_logit;
    h->ctx_len = r->seq_len;
    h->tok_s = 0;
    snprintf(h->mode, sizeof h->mode, "replay run %lld", (long long)r->run_id);
    h->gates_fixed = 1, h->gate_tau = h->tau, h->gate_theta_logit = h->theta_logit; /* what T and O cannot change */
}

/* What opening a run asks of its job, and what the job hands back. */
typedef struct {
    int64_t id;
    int n_layers, n_heads; /* the screen's shape: a run of another is named, not opened */
    StoreRunInfo info;     /* out: its row (the prompt is heap) */
    StepTrace **traces;    /* out: every recorded step (heap, each owned) */
    int n, cap;
} OpenArg;

static void open_release(void *arg) {
    OpenArg *a = arg;
    for (int i = 0; i < a->n; i++) trace_free(a->traces[i]);
    free(a->traces);
    store_run_info_free(&a->info);
}

/* Room for CHUNK more traces of the run's shape at the end of a->traces. */
static int grow(OpenArg *a, int chunk, int top_k, Err *e) {
    if (a->n + chunk > a->cap) {
        int cap = a->cap ? 2 * a->cap : 256;
        while (cap < a->n + chunk) cap *= 2;
        StepTrace **grown = realloc(a->traces, (size_t)cap * sizeof *grown);
        if (!grown) return err_set(e, "out of memory for run %lld", (long long)a->id);
        a->traces = grown, a->cap = cap;
    }
    for (int i = 0; i < chunk; i++)
        if (!(a->traces[a->n + i] = trace_new_top(a->n_layers, a->n_heads, top_k))) {
            while (i-- > 0) trace_free(a->traces[a->n + i]);
            return err_set(e, "out of memory for run %lld (%d layers x %d heads)", (long long)a->id, a->n_layers,
                           a->n_heads);
        }
    return 0;
}

/* The job: read run a->id whole, a chunk of positions at a time (the
 * count the progress line shows). */
static int open_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    enum { CHUNK = 64 };
    OpenArg *a = tui_job_arg(r);
    (void)out;
    if (store_run_info(st, a->id, &a->info, e)) return -1;
    if (a->info.n_layers != a->n_layers || a->info.n_heads != a->n_heads)
        return err_set(e,
                       "run %lld has %d\xc3\x97%d heads, this screen %d\xc3\x97%d: open it with tui --replay --run %lld",
                       (long long)a->id, a->info.n_layers, a->info.n_heads, a->n_layers, a->n_heads, (long long)a->id);
    int k = store_run_attn_top(st, a->id, e);
    if (k < 0) return -1;
    for (;;) {
        if (grow(a, CHUNK, k, e)) return -1;
        int got = store_read_steps(st, a->id, a->n, CHUNK, &a->traces[a->n], e);
        for (int i = got > 0 ? got : 0; i < CHUNK; i++) trace_free(a->traces[a->n + i]);
        if (got < 0) return -1;
        a->n += got;
        tui_job_count(r, a->n);
        if (got < CHUNK) return 0;
        if (tui_job_cancelled(r)) return err_set(e, "cancelled");
    }
}

/* Open recorded run id on this screen, as a replay: read off this thread. */
void tui_open_run(Tui *t, int64_t id) {
    Err e;
    OpenArg a = {.id = id, .n_layers = t->m.n_layers, .n_heads = t->m.n_heads};
    if (tui_job_start(&t->job, t->db, TUI_PANE_OPEN, open_work, &a, sizeof a, open_release, &e))
        view_set_status(&t->m, "open run: %s", e.msg);
    else view_set_status(&t->m, "loading run %lld\xe2\x80\xa6 (Esc cancels)", (long long)id);
    t->job_shown = 0;
}

/* The run read: it replaces what is on screen. A live TUI pauses and
 * leaves its run recorded as it is. */
void tui_open_done(Tui *t, TuiJobResult *jr) {
    OpenArg *a = jr->arg;
    Err e;
    if (jr->end != TUI_JOB_OK) {
        if (jr->end == TUI_JOB_CANCELLED) view_set_status(&t->m, "opening a run cancelled after %.1f s", jr->secs);
        else view_set_status(&t->m, "%s", jr->msg);
        return;
    }
    if (!t->replay) tui_set_play(t, 0), tui_keep_live(t); /* Esc brings the live run back */
    else view_clear_history(&t->m);
    t->replay = 1, t->replay_run = t->screen_run = a->id, t->playing = t->m.playing = 0, t->new_run_pending = 0;
    int i = 0;
    for (; i < a->n; i++) {
        if (view_push_owned(&t->m, a->traces[i], &e)) break;
        a->traces[i] = NULL;
    }
    replay_header(t, &a->info);
    t->m.cursor = t->m.n_hist > 0 ? 0 : -1, t->m.follow = 0;
    if (i < a->n) view_set_status(&t->m, "%s", e.msg);
    else if (t->from_live)
        view_set_status(&t->m, "replay of run %lld: Esc back to the live run; [ ] Home End move, p plays",
                        (long long)a->id);
    else view_set_status(&t->m, "replay of run %lld: [ ] Home End move, p plays, B another run", (long long)a->id);
}

/* One position per 1/speed seconds; it stops at the end of the recording. */
void tui_replay_advance(Tui *t) {
    double now = clock_now();
    if (now < t->replay_next) return;
    double speed = tui_speed(t);
    t->replay_next = now + (speed > 0 ? 1.0 / speed : 0);
    if (t->m.cursor + 1 < t->m.n_hist) {
        t->m.cursor++;
        t->dirty = 1;
        return;
    }
    t->playing = t->m.playing = 0;
    view_set_status(&t->m, "end of the recorded run");
    t->dirty = 1;
}

int tui_replay_open(Tui *t, const TuiOpts *o, Err *e) {
    const char *db = o->db;
    int64_t run = o->replay_run;
    t->replay = 1, t->db = db, t->restore = -1;
    t->speed_i = TUI_SPEED_START;
    t->sql_timeout = o->sql_timeout;
    Store *st = store_open(db, STORE_READ, 2000, e);
    if (!st) return -1;
    int64_t *ids = NULL;
    int n = run > 0 ? 0 : store_run_ids(st, &ids, e);
    if (run <= 0 && n > 0) run = ids[n - 1];
    free(ids);
    StoreRunInfo r;
    if (n < 0 || (run <= 0 && err_set(e, "%s: no runs recorded", db)) || store_run_info(st, run, &r, e)) {
        store_close(st, NULL);
        return -1;
    }
    t->replay_run = t->screen_run = run;
    int rc = view_init(&t->m, r.n_layers, r.n_heads, e);
    if (rc == 0 && (rc = load_replay(t, st, &r, e)) == 0) {
        replay_header(t, &r); /* copies what it shows: r can go */
        view_set_status(&t->m, "replay of run %lld (%s): [ ] Home End move through its %d positions", (long long)run,
                        r.status, t->m.n_hist);
    } else {
        view_free(&t->m); /* safe on a model view_init refused */
    }
    store_close(st, NULL);
    store_run_info_free(&r);
    return rc;
}

void tui_replay_close(Tui *t) { view_free(&t->m); }
