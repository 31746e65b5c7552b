/* replay.c — a recorded run: open, play, open another, and its load a chunk at a time.
 *
 * A recorded run on the TUI without a model: load it, play it,
 * open another from the run browser (see README.md).
 *
 * A run is read on a job's thread (job.h) a chunk of positions at a time,
 * and each chunk is handed to the UI thread as it comes (tui_job_put): the
 * first frame draws at once, says "loading run N: X of Y positions", and
 * fills in; the keys work meanwhile and Esc stops the read, keeping what
 * came. The UI pushes at most a frame's budget of chunks at a time. */
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/tui/state.h"
#include "views/pin.h"

/* Positions a load reads at once: one piece handed over. */
enum { LOAD_CHUNK = 64 };

/* Seconds of the UI thread a frame gives to pushing loaded positions. */
#define LOAD_FRAME_BUDGET 0.008

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
    view_set_arch(h, r->arch);
    h->layers = view_layer_kinds(NULL, 0); /* the run's first position says them (load_push) */
    h->run_id = r->run_id, h->seed = r->seed, h->seed_known = 1; /* what a kept table is headed with */
}

/* What a load asks of its job. */
typedef struct {
    int64_t id;
    int n_layers, n_heads; /* the screen's shape: a run of another is named, not opened */
} LoadArg;

/* One piece of a load: the run's row (first piece only), then a chunk of
 * its positions in order. */
typedef struct {
    int has_info;
    StoreRunInfo info;
    StoreBookmark *marks; /* the run's bookmarks (first piece only) */
    int n_marks;
    int n;
    StepTrace *tr[LOAD_CHUNK];
} LoadPart;

static void part_free(void *p) {
    LoadPart *lp = p;
    for (int i = 0; i < lp->n; i++) trace_free(lp->tr[i]);
    if (lp->has_info) store_run_info_free(&lp->info);
    free(lp->marks);
    free(lp);
}

/* A piece with room for a chunk of the run's shape. */
static LoadPart *part_new(const LoadArg *a, int top_k, Err *e) {
    LoadPart *p = calloc(1, sizeof *p);
    for (int i = 0; p && i < LOAD_CHUNK; i++)
        if (!(p->tr[i] = trace_new_top(a->n_layers, a->n_heads, top_k))) {
            p->n = i;
            part_free(p);
            p = NULL;
        }
    if (!p) err_set(e, "out of memory for run %lld (%d layers x %d heads)", (long long)a->id, a->n_layers, a->n_heads);
    else p->n = LOAD_CHUNK;
    return p;
}

/* The job: the run's row, then its positions a chunk at a time, each handed
 * over as read (the count the progress line shows). */
static int load_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    LoadArg *a = tui_job_arg(r);
    (void)out;
    LoadPart *first = calloc(1, sizeof *first);
    if (!first) return err_set(e, "out of memory");
    first->has_info = 1;
    if (store_run_info(st, a->id, &first->info, e)) {
        free(first);
        return -1;
    }
    if (first->info.n_layers != a->n_layers || first->info.n_heads != a->n_heads) {
        err_set(e, "run %lld has %d\xc3\x97%d heads, this screen %d\xc3\x97%d: open it with tui --replay --run %lld",
                (long long)a->id, first->info.n_layers, first->info.n_heads, a->n_layers, a->n_heads,
                (long long)a->id);
        part_free(first);
        return -1;
    }
    first->n_marks = store_bookmarks(st, a->id, &first->marks, e);
    if (first->n_marks < 0) {
        part_free(first);
        return -1;
    }
    if (tui_job_put(r, first, part_free)) return err_set(e, "out of memory");
    int k = store_run_attn_top(st, a->id, e);
    if (k < 0) return -1;
    for (long done = 0;;) {
        if (tui_job_cancelled(r)) return err_set(e, "cancelled");
        LoadPart *p = part_new(a, k, e);
        if (!p) return -1;
        int got = store_read_steps(st, a->id, (int)done, LOAD_CHUNK, p->tr, e);
        for (int i = got > 0 ? got : 0; i < LOAD_CHUNK; i++) trace_free(p->tr[i]), p->tr[i] = NULL;
        p->n = got > 0 ? got : 0;
        if (got < 0) {
            part_free(p);
            return -1;
        }
        if (got == 0) part_free(p);
        else if (tui_job_put(r, p, part_free)) return err_set(e, "out of memory");
        done += got;
        tui_job_count(r, done);
        if (got < LOAD_CHUNK) return 0;
    }
}

/* Start reading run id onto this screen (first: the `--replay` run itself). */
static int load_start(Tui *t, int64_t id, int first, Err *e) {
    LoadArg a = {.id = id, .n_layers = t->m.n_layers, .n_heads = t->m.n_heads};
    if (tui_job_start(&t->load, t->db, TUI_PANE_OPEN, load_work, &a, sizeof a, NULL, e)) return -1;
    t->load_run = id, t->load_first = first, t->load_total = 0, t->load_shown = 0, t->load_began = 0;
    t->load_parent = 0, t->parent_next = 0;
    return 0;
}

/* The run on screen is loaded and the inspector, which shows it, is open:
 * read the run's recorded parent, if it has one, so the inspector can set
 * the selected head in both side by side. Only then, so a replay never
 * reads a second run no one looks at, nor slows the panes' jobs for it; and
 * quietly: the status line keeps what it says about the run on screen. */
static int parent_read_start(Tui *t) {
    int64_t parent = t->parent_next;
    int kind;
    long count;
    double secs;
    if (!parent || tui_job_progress(&t->load, &kind, &count, &secs)) return -1;
    LoadArg a = {.id = parent, .n_layers = t->m.n_layers, .n_heads = t->m.n_heads};
    Err e;
    if (tui_job_start(&t->load, t->db, TUI_PANE_OPEN, load_work, &a, sizeof a, NULL, &e)) return -1;
    t->load_parent = 1, t->parent_next = 0, t->load_run = parent;
    return 0;
}

static void load_parent_start(Tui *t) {
    if (t->m.inspector_open) parent_read_start(t);
}

int tui_flips_wait(Tui *t) {
    int kind;
    long count;
    double secs;
    int reading = t->load_parent == 1 && tui_job_progress(&t->load, &kind, &count, &secs);
    /* else a pending parent with nothing of it here yet: read it now (parent_read_start refuses while a load runs) */
    if (!reading && (t->m.parent.n > 0 || parent_read_start(t))) return 0;
    t->flips_on_read = 1, t->dirty = 1;
    view_set_status(&t->m, "reading run %lld back to compare with (%d positions so far): X opens once it has come",
                    (long long)t->load_run, t->m.parent.n);
    return 1;
}

/* A piece of the parent's load: its row names it, its positions go to
 * the model's parent run. */
static int parent_push(Tui *t, LoadPart *p) {
    Err e;
    if (p->has_info) {
        char label[48];
        snprintf(label, sizeof label, "run %lld", (long long)p->info.run_id);
        view_parent_begin(&t->m, label);
        t->m.parent.other = t->other_run != 0; /* chosen in B: its panes say "vs run N" */
    }
    for (int i = 0; i < p->n; i++) {
        StepTrace *tr = p->tr[i];
        p->tr[i] = NULL;
        if (view_push_parent(&t->m, tr, &e)) {
            view_drop_parent(&t->m);
            return -1;
        }
    }
    p->n = 0;
    return 0;
}

void tui_open_run(Tui *t, int64_t id) {
    Err e;
    if (load_start(t, id, 0, &e)) view_set_status(&t->m, "open run: %s", e.msg);
    else view_set_progress(&t->m, "loading run %lld\xe2\x80\xa6 (Esc cancels)", (long long)id);
}

/* The run's bookmarks (kept beside it by `b`) as the screen's marks, in
 * place of the marks before (a live run's are set aside with it). */
static void show_bookmarks(Tui *t, const LoadPart *p) {
    if (p->n_marks <= 0) return; /* the screen holds no marks: the live run's were set aside with it */
    ViewMark *m = p->n_marks > 0 ? malloc((size_t)p->n_marks * sizeof *m) : NULL;
    int n = m ? p->n_marks : 0;
    for (int i = 0; i < n; i++) m[i] = (ViewMark){p->marks[i].pos, VIEW_MARK_BOOKMARK};
    Err e;
    if (view_set_marks(&t->m, m, n, &e)) view_set_status(&t->m, "bookmarks: %s", e.msg);
    for (int i = 0; i < n; i++) view_bookmark_note_set(&t->m, p->marks[i].pos, p->marks[i].note);
    free(m);
}

/* The run's row came: what is on screen gives way to it. A live TUI pauses
 * and leaves its run recorded as it is. */
static void load_began(Tui *t, LoadPart *p) {
    if (!t->replay) tui_set_play(t, 0), tui_keep_live(t); /* Esc brings the live run back */
    t->replay = 1, t->replay_run = t->screen_run = p->info.run_id, t->playing = t->m.playing = 0;
    t->new_run_pending = 0;
    view_rescore_cancel(&t->m);
    view_clear_history(&t->m);
    view_drop_parent(&t->m); /* the parent of a live re-evaluation is not this run's */
    t->parent_next = t->parent_run = p->info.parent_run_id; /* read once this run is */
    t->other_run = 0;
    replay_header(t, &p->info);
    show_bookmarks(t, p);
    /* the `--replay` run opens at its last position, as it always has (the
     * cursor follows the positions in until a key moves it); another opened
     * from B at its first */
    t->m.follow = t->load_first;
    t->load_total = p->info.n_tokens;
    snprintf(t->load_status, sizeof t->load_status, "%s", p->info.status);
    t->load_began = 1;
}

/* Push the positions of one piece; 0, or -1 with the status line set. */
static int load_push(Tui *t, LoadPart *p) {
    Err e;
    int rc = 0;
    for (int i = 0; i < p->n; i++) {
        StepTrace *tr = p->tr[i];
        p->tr[i] = NULL;
        if (rc == 0 && t->m.n_hist == 0) t->m.hdr.layers = view_trace_kinds(tr); /* the layers as the run read them */
        if (rc == 0 && view_push_owned(&t->m, tr, &e)) rc = -1, view_set_status(&t->m, "%s", e.msg);
        else if (rc) trace_free(tr);
    }
    p->n = 0;
    return rc;
}

/* The status line's word on a finished (or stopped) load. A finished one
 * does not talk over what a key said meanwhile (a key pressed as the last
 * positions came in): it only replaces its own progress line. */
static void load_done(Tui *t, const TuiJobResult *jr) {
    long long id = (long long)t->load_run;
    view_clear_progress(&t->m);
    if (jr->end == TUI_JOB_OK && t->m.status[0]) return;
    if (jr->end == TUI_JOB_CANCELLED && t->load_began)
        view_set_status(&t->m, "loading run %lld stopped at %d of %d positions: those are shown", id, t->m.n_hist,
                        t->load_total > t->m.n_hist ? t->load_total : t->m.n_hist);
    else if (jr->end == TUI_JOB_CANCELLED) view_set_status(&t->m, "opening a run cancelled after %.1f s", jr->secs);
    else if (jr->end == TUI_JOB_FAILED) view_set_status(&t->m, "%s", jr->msg);
    else if (t->load_first)
        view_set_status(&t->m, "replay of run %lld (%s): [ ] Home End move through its %d positions", id,
                        t->load_status, t->m.n_hist);
    else if (t->from_live) /* each Esc closes one pane first: say how many it takes */
        view_set_status(&t->m, "replay of run %lld: %s back to the live run; [ ] Home End move, p plays", id,
                        t->m.inspector_open || t->m.sql_open ? "Esc closes the pane, Esc again" : "Esc");
    else view_set_status(&t->m, "replay of run %lld: [ ] Home End move, p plays, B another run", id);
}

void tui_poll_load(Tui *t) {
    double t0 = clock_now();
    int took = 0;
    LoadPart *p;
    while (clock_now() - t0 < LOAD_FRAME_BUDGET && (p = tui_job_take_part(&t->load))) {
        if (t->load_parent) {
            if (t->load_parent == 1 && parent_push(t, p)) tui_job_cancel(&t->load);
        } else {
            if (p->has_info) load_began(t, p);
            if (load_push(t, p)) tui_job_cancel(&t->load);
        }
        part_free(p);
        took = 1;
    }
    if (took) t->dirty = 1;
    TuiJobResult jr;
    int kind;
    long count;
    double secs;
    if (t->load_parent) { /* quiet: only its end matters, and only when it failed */
        if (!tui_job_progress(&t->load, &kind, &count, &secs) && tui_job_take(&t->load, &jr)) {
            if (jr.end != TUI_JOB_OK && t->load_parent == 1) view_drop_parent(&t->m);
            if (t->flips_on_read && jr.end == TUI_JOB_OK && t->load_parent == 1 && t->m.parent.n > 0) {
                t->m.flips_open = 1; /* the X asked for while it came */
                view_set_status(&t->m, "run %lld read back: %d positions to compare with", (long long)t->load_run,
                                t->m.parent.n);
            }
            t->flips_on_read = 0;
            if (jr.end == TUI_JOB_FAILED)
                view_set_status(&t->m, "%s: %s", t->other_run ? "the run to compare with" : "the parent run", jr.msg);
            if (jr.end == TUI_JOB_FAILED) t->other_run = 0; /* D compares with the parent again, as X and par do */
            tui_job_result_free(&jr);
            t->load_parent = 0, t->dirty = 1;
        }
        return;
    }
    if (tui_job_progress(&t->load, &kind, &count, &secs) || took) {
        double now = clock_now();
        if (!t->load_began || now - t->load_shown < 0.1) return; /* ten times a second */
        t->load_shown = now;
        int total = t->load_total > t->m.n_hist ? t->load_total : t->m.n_hist;
        view_set_progress(&t->m, "loading run %lld: %d of %d positions (Esc stops)", (long long)t->load_run,
                          t->m.n_hist, total);
        t->dirty = 1;
    } else if (tui_job_take(&t->load, &jr)) {
        load_done(t, &jr);
        if (jr.end != TUI_JOB_OK) t->parent_next = 0;
        tui_job_result_free(&jr);
        t->dirty = 1;
    } else {
        load_parent_start(t);
    }
}

int tui_loading(const Tui *t) {
    int kind;
    long count;
    double secs;
    return !t->load_parent && tui_job_progress(&t->load, &kind, &count, &secs);
}

int tui_cancel_load(Tui *t) {
    if (t->load_parent) { /* Esc closes what the user sees; the parent's read goes on */
        return 0;
    }
    if (!tui_job_cancel(&t->load)) return 0;
    view_set_progress(&t->m, "stopping the load of run %lld\xe2\x80\xa6", (long long)t->load_run);
    return 1;
}

void tui_compare_with(Tui *t, int64_t id) {
    int64_t want = id ? id : t->parent_run;
    Err e;
    if (!t->db) {
        view_set_status(&t->m, "not recording: no runs to compare with");
        return;
    }
    if (tui_loading(t)) {
        view_set_status(&t->m, "run %lld is still loading: compare once it is on screen", (long long)t->load_run);
        return;
    }
    if (want && want == t->screen_run) {
        view_set_status(&t->m, "run %lld is the run on screen: Tab another run's id", (long long)want);
        return;
    }
    if (!want) { /* back to the parent, and there is none */
        if (t->load_parent == 1) t->load_parent = 2, tui_job_cancel(&t->load);
        if (t->other_run) view_drop_parent(&t->m);
        t->other_run = 0, t->dirty = 1;
        view_set_status(&t->m, "the run on screen has no parent: nothing to compare with");
        return;
    }
    LoadArg a = {.id = want, .n_layers = t->m.n_layers, .n_heads = t->m.n_heads};
    if (tui_job_start(&t->load, t->db, TUI_PANE_OPEN, load_work, &a, sizeof a, NULL, &e)) {
        view_set_status(&t->m, "compare: %s", e.msg);
        return;
    }
    t->load_parent = 1, t->parent_next = 0, t->load_run = want;
    t->other_run = want == t->parent_run ? 0 : want;
    view_drop_parent(&t->m); /* what D, X and `par` show is the new run's once it comes */
    if (t->other_run)
        view_set_status(&t->m, "comparing with run %lld: D, X and the par row show it (Tab on an empty line: the parent)",
                        (long long)want);
    else view_set_status(&t->m, "comparing with the parent, run %lld, again", (long long)want);
    t->dirty = 1;
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
    if (tui_loading(t)) return; /* more positions are coming */
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
    store_close(st, NULL);
    t->replay_run = t->screen_run = run;
    int rc = view_init(&t->m, r.n_layers, r.n_heads, e);
    if (rc == 0) {
        replay_header(t, &r); /* copies what it shows: r can go */
        /* the run is read off the UI thread: the first frame draws at once */
        rc = load_start(t, run, 1, e);
        if (rc == 0)
            view_set_progress(&t->m, "loading run %lld: 0 of %d positions (Esc stops)", (long long)run, r.n_tokens);
        else view_free(&t->m);
    }
    store_run_info_free(&r);
    return rc;
}

void tui_replay_close(Tui *t) {
    tui_job_stop(&t->load);
    view_free(&t->m);
}
