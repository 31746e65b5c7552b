/* dist_ctl.c — the distributions pane's controller and the why block's (see dist_ctl.h). */
#include "app/tui/dist_ctl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/clock.h"
#include "views/fixed.h"
#include "views/keymap.h"
#include "views/why.h"

/* A growing run is recounted at most this often, and at most this share of
 * the time (a count that took 2 s waits 10 s), as the pattern view does. */
#define DIST_REFRESH 1.0
#define DIST_SHARE 5.0
/* Positions a recorded count reads a chunk. */
#define DIST_CHUNK 64

void tui_dist_count_init(TuiDistCount *c, int pooled, int layer, int head, double theta_logit) {
    memset(c, 0, sizeof *c);
    c->d.pooled = pooled, c->d.layer = layer, c->d.head = head, c->d.theta_logit = theta_logit;
    c->d.auc = NAN;
    c->d.span_lo = c->d.span_hi = -1;
}

/* One cell: its score and its label, where it has both. */
static void count_cell(TuiDistCount *c, const StepTrace *t, int cell) {
    int o = view_label(t, cell, c->d.theta_logit);
    float v = decide_value(t, cell, DECIDE_AHA);
    if (o < 0 || isnan(v)) return;
    int s = view_dist_bin(v), mb = view_dist_bin(decide_prob(t->oracle_logit[cell]));
    c->d.n++, c->d.n_global += o;
    c->d.hist[mb][s]++;
    c->d.cal_n[s]++, c->d.cal_g[s] += o;
    eval_auc_add(&c->auc, DECIDE_AHA, v, o);
}

void tui_dist_count_add(TuiDistCount *c, const StepTrace *t) {
    if (c->d.pooled)
        for (int i = 0; i < t->n_layers * t->n_heads; i++) count_cell(c, t, i);
    else if (c->d.layer < t->n_layers && c->d.head < t->n_heads)
        count_cell(c, t, c->d.layer * t->n_heads + c->d.head);
    c->d.n_pos = t->pos + 1 > c->d.n_pos ? t->pos + 1 : c->d.n_pos;
}

void tui_dist_count_finish(TuiDistCount *c) {
    double n_pos = 0, n_neg = 0, tp = 0, fp = 0;
    for (int i = 0; i < EVAL_AUC_BINS; i++) n_pos += c->auc.pos[i], n_neg += c->auc.neg[i];
    c->d.auc = eval_auc(&c->auc);
    for (int k = 0; k < VIEW_DIST_ROC; k++) c->d.roc[k] = 0;
    if (n_pos > 0 && n_neg > 0) /* thresholds from the top bin down: each a point (fpr, tpr) */
        for (int i = EVAL_AUC_BINS - 1; i >= 0; i--) {
            tp += c->auc.pos[i], fp += c->auc.neg[i];
            int k = (int)ceil(fp / n_neg * (VIEW_DIST_ROC - 1) - 1e-9);
            if (k < VIEW_DIST_ROC && tp / n_pos > c->d.roc[k]) c->d.roc[k] = (float)(tp / n_pos);
        }
    for (int k = 1; k < VIEW_DIST_ROC; k++) /* the best threshold whose false-positive rate is at most k% */
        if (c->d.roc[k] < c->d.roc[k - 1]) c->d.roc[k] = c->d.roc[k - 1];
    c->d.ready = 1, c->d.done = c->d.total = 0;
}

/* What the recorded count is given, and answers through. */
typedef struct {
    TuiDistCount c;
    int64_t run;
    int lo, n, n_layers, n_heads; /* positions lo … lo + n - 1 */
    int n_hist;                   /* the positions on screen when it began */
} DistArg;

/* The recorded run's positions lo … lo + n - 1, a chunk at a time, on the job's thread. */
static int dist_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    DistArg *a = tui_job_arg(r);
    StepTrace *buf[DIST_CHUNK] = {0};
    int rc = 0, done = 0;
    (void)out;
    for (int i = 0; i < DIST_CHUNK; i++)
        if (!(buf[i] = trace_new(a->n_layers, a->n_heads))) rc = err_set(e, "distributions: out of memory");
    while (rc == 0 && done < a->n && !tui_job_cancelled(r)) {
        int want = a->n - done < DIST_CHUNK ? a->n - done : DIST_CHUNK;
        int got = store_read_steps(st, a->run, a->lo + done, want, buf, e);
        if (got < 0) rc = -1;
        for (int i = 0; i < got; i++) tui_dist_count_add(&a->c, buf[i]);
        if (got > 0) done += got;
        tui_job_count(r, done);
        if (got < want) break;
    }
    if (rc == 0 && tui_job_cancelled(r)) rc = err_set(e, "cancelled");
    if (rc == 0) tui_dist_count_finish(&a->c);
    for (int i = 0; i < DIST_CHUNK; i++) trace_free(buf[i]);
    return rc;
}

/* The counts no longer show what the pane asks for over the run on screen. */
static int dist_stale(const Tui *t, int *grew_only) {
    const ViewDist *d = &t->dist;
    int lo, hi, span = view_span_range(&t->m, t->m.n_hist - 1, &lo, &hi);
    int same = d->ready && d->theta_logit == t->m.hdr.theta_logit &&
               (d->pooled || (d->layer == t->m.sel_layer && d->head == t->m.sel_head)) &&
               d->span_lo == (span ? t->m.span.lo : -1) && d->span_hi == (span ? t->m.span.hi : -1);
    *grew_only = same;
    return !same || d->n_pos != t->m.n_hist;
}

/* Count again: a recorded run off this thread, else the positions on screen here. */
static void dist_start(Tui *t) {
    ViewDist *d = &t->dist;
    int pooled = d->pooled, l = t->m.sel_layer, h = t->m.sel_head, lo, hi;
    int span = view_span_range(&t->m, t->m.n_hist - 1, &lo, &hi); /* a span: only its positions count */
    if (hi < lo) hi = lo - 1;
    t->dist_asked = clock_now();
    if (t->db && t->screen_run) {
        DistArg a = {.run = t->screen_run, .lo = lo, .n = hi - lo + 1, .n_layers = t->m.n_layers,
                     .n_heads = t->m.n_heads, .n_hist = t->m.n_hist};
        tui_dist_count_init(&a.c, pooled, l, h, t->m.hdr.theta_logit);
        if (span) a.c.d.span_lo = t->m.span.lo, a.c.d.span_hi = t->m.span.hi;
        Err e;
        if (tui_job_start(&t->dist_job, t->db, 0, dist_work, &a, sizeof a, NULL, &e)) {
            view_set_status(&t->m, "distributions: %s", e.msg);
            return;
        }
        if (!d->ready || d->pooled != pooled || (!pooled && (d->layer != l || d->head != h))) {
            d->ready = 0, d->layer = l, d->head = h; /* say what is being counted, not the old counts */
        }
        d->done = 0, d->total = hi - lo + 1;
        return;
    }
    TuiDistCount *c = malloc(sizeof *c);
    if (!c) return;
    tui_dist_count_init(c, pooled, l, h, t->m.hdr.theta_logit);
    if (span) c->d.span_lo = t->m.span.lo, c->d.span_hi = t->m.span.hi;
    for (int i = lo; i <= hi; i++) tui_dist_count_add(c, t->m.hist[i]);
    tui_dist_count_finish(c);
    c->d.open = 1, c->d.n_pos = t->m.n_hist;
    *d = c->d;
    free(c);
    t->dist_cost = clock_now() - t->dist_asked;
}

/* A finished recorded count into the pane, or its progress. */
static void dist_take(Tui *t) {
    int kind;
    long count;
    double secs;
    if (tui_job_progress(&t->dist_job, &kind, &count, &secs)) {
        if (t->dist.done != count) t->dist.done = (int)count, t->dirty = 1;
        return;
    }
    TuiJobResult jr;
    if (!tui_job_take(&t->dist_job, &jr)) return;
    DistArg *a = jr.arg;
    if (jr.end == TUI_JOB_OK) {
        a->c.d.open = 1;
        if (a->c.d.span_lo >= 0) a->c.d.n_pos = a->n_hist; /* a span counted: the history it was taken of */
        t->dist = a->c.d;
        t->dist_cost = jr.secs;
    } else {
        t->dist.total = 0;
        if (jr.end == TUI_JOB_FAILED) view_set_status(&t->m, "distributions: %s", jr.msg);
    }
    tui_job_result_free(&jr);
    t->dirty = 1;
}

/* The why of the selected head at the cursor: asked of the worker in a
 * live session (again when the run under it changed: its score no longer
 * matches), said to be live-only in a replay. */
static void why_poll(Tui *t) {
    ViewModel *m = &t->m;
    const StepTrace *cur = view_trace(m, m->cursor);
    if (!cur || !(m->inspector_open || t->dist.open)) return;
    int l = m->sel_layer, h = m->sel_head, cell = l * m->n_heads + h;
    if (view_is_fixed(cur, cell)) return; /* no router decides it: the why line says so (views/why.c) */
    if (t->replay) {
        if (!view_why_current(m) || m->why.state != VIEW_WHY_REPLAY)
            m->why = (ViewWhy){.pos = cur->pos, .layer = l, .head = h, .state = VIEW_WHY_REPLAY}, t->dirty = 1;
        return;
    }
    RouterWhy r;
    int rc, pos, rl, rh;
    if (tui_worker_take_why(&t->w, &r, &rc, &pos, &rl, &rh)) {
        ViewWhy *w = &m->why;
        *w = (ViewWhy){.pos = pos, .layer = rl, .head = rh};
        w->state = rc == 0    ? VIEW_WHY_OK
                   : rc == -1 ? VIEW_WHY_NO_ROUTER
                   : rc == -3 ? VIEW_WHY_NOT_KEPT
                   : rc == -4 ? VIEW_WHY_STOPPED
                              : VIEW_WHY_NONE;
        w->logit = r.logit, w->bias = r.bias, w->norm = r.norm, w->rest = r.rest, w->dim = r.dim;
        w->n_top = rc == 0 ? r.n_top : 0;
        for (int j = 0; j < w->n_top; j++) w->top_dim[j] = r.top[j].dim, w->top_xw[j] = r.top[j].xw;
        t->why_pending = 0, t->dirty = 1;
    }
    int fed, to_feed, fp, fl, fh; /* a recompute under way: its progress in the why line */
    if (tui_worker_why_progress(&t->w, &fed, &to_feed, &fp, &fl, &fh) && m->why.state == VIEW_WHY_PENDING &&
        m->why.pos == fp && m->why.layer == fl && m->why.head == fh && (m->why.fed != fed || m->why.to_feed != to_feed))
        m->why.fed = fed, m->why.to_feed = to_feed, t->dirty = 1;
    const ViewWhy *w = &m->why;
    float score = cur->score[cell];
    /* answered for another run at this position: the score it explains is not the trace's */
    int off = (w->state == VIEW_WHY_OK && (isnan(score) || fabs(1 / (1 + exp(-w->logit)) - score) > 1e-3)) ||
              (w->state == VIEW_WHY_NO_ROUTER && !isnan(score)) || w->state == VIEW_WHY_NONE ||
              w->state == VIEW_WHY_REPLAY;
    if (t->why_pending || (view_why_current(m) && !(off && t->why_n != m->n_hist))) return;
    tui_worker_request_why(&t->w, cur->pos, l, h);
    t->why_pending = 1, t->why_n = m->n_hist;
    if (!view_why_current(m)) m->why = (ViewWhy){.pos = cur->pos, .layer = l, .head = h, .state = VIEW_WHY_PENDING};
}

int tui_why_cancel(Tui *t) {
    int fed, to_feed, pos, l, h;
    if (!tui_worker_why_progress(&t->w, &fed, &to_feed, &pos, &l, &h) || !tui_worker_cancel_why(&t->w)) return 0;
    view_set_status(&t->m, "why L%d H%d @ pos %d: stopped at %d of %d positions", l, h, pos, fed, to_feed);
    return 1;
}

void tui_dist_poll(Tui *t) {
    why_poll(t);
    if (!t->dist.open) return;
    dist_take(t);
    int grew_only;
    int kind;
    long count;
    double secs;
    if (t->dist.stopped || tui_job_progress(&t->dist_job, &kind, &count, &secs) || !dist_stale(t, &grew_only))
        return;
    double wait = DIST_SHARE * t->dist_cost > DIST_REFRESH ? DIST_SHARE * t->dist_cost : DIST_REFRESH;
    if (!grew_only || clock_now() - t->dist_asked >= wait) {
        dist_start(t);
        t->dirty = 1;
    }
}

void tui_dist_toggle(Tui *t) {
    if (t->dist.open) {
        tui_dist_close(t);
        return;
    }
    memset(&t->dist, 0, sizeof t->dist);
    t->dist.open = 1, t->dist.layer = t->m.sel_layer, t->dist.head = t->m.sel_head, t->dist.auc = NAN;
    t->m.dist = &t->dist;
    tui_dist_poll(t);
}

int tui_dist_key(Tui *t, int ch) {
    if (!t->dist.open) return 0;
    if (ch == 'a') { /* the count under way is replaced, its result dropped */
        t->dist.pooled = !t->dist.pooled, t->dist.ready = 0, t->dist.stopped = 0;
        dist_start(t);
        return 1;
    }
    if (view_key_command(ch) == VIEW_OP_CLOSE) {
        if (!tui_dist_stop(t)) tui_dist_close(t);
        return 1;
    }
    /* the pattern and the sorted heads share the middle of the screen with it, drawn under it: their
     * key uncovers the one already open beneath, else opens it */
    int cmd = view_key_command(ch);
    if (cmd == VIEW_ACT_PATTERN || cmd == VIEW_ACT_HEADS) {
        tui_dist_close(t);
        return cmd == VIEW_ACT_PATTERN ? t->pat.open : t->heads.open;
    }
    return 0;
}

int tui_dist_stop(Tui *t) {
    if (!t->dist.open || !tui_job_cancel(&t->dist_job)) return 0;
    view_set_status(&t->m, "distributions: count stopped at %d of %d positions", t->dist.done, t->dist.total);
    t->dist.total = 0, t->dist.stopped = 1; /* not again by itself: `a` or d d counts anew */
    return 1;
}

void tui_dist_close(Tui *t) {
    tui_job_cancel(&t->dist_job);
    t->dist.open = 0, t->dist.total = 0;
    t->m.dist = NULL;
}
