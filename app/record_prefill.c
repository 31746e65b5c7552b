/* record_prefill.c — a prompt's prefill written chunk by chunk (see record_prefill.h). */
#include <stdio.h>
#include <stdlib.h>

#include "app/progress.h"
#include "app/record_prefill.h"

int record_steps(Store *st, int64_t run, StepTrace **t, int n, int progress, int *pending, Err *e) {
    for (int i = 0; i < n; i++) {
        int committed = 0;
        if (store_write_step(st, run, t[i], &committed, e)) return -1;
        *pending = committed ? -1 : t[i]->pos;
        if (progress && committed) fprintf(stderr, "committed pos %d\n", t[i]->pos);
    }
    return 0;
}

typedef struct {
    Store *st;
    int64_t run;
    int top_k, progress;
    const Config *c;
    int n;        /* positions the prefill feeds */
    int *pending; /* the last position written but not committed, or -1 */
    int failed;   /* a write (or an allocation) failed: e says why */
    Err *e;
} PrefillWrite;

/* Allocate the traces of positions [from, min(from + chunk, n)); 0 or -1. */
static int alloc_chunk(StepTrace **pre, int from, const PrefillWrite *w) {
    for (int i = from; i < w->n && i < from + PROGRESS_PREFILL_CHUNK; i++)
        if (!pre[i] && !(pre[i] = trace_new_top(w->c->n_layers, w->c->n_heads, w->top_k))) return -1;
    return 0;
}

static int write_chunk(void *user, StepTrace **pre, int from, int to) {
    PrefillWrite *w = user;
    int rc = record_steps(w->st, w->run, pre + from, to - from, w->progress, w->pending, w->e);
    for (int i = from; i < to; i++) trace_free(pre[i]), pre[i] = NULL;
    if (rc == 0 && alloc_chunk(pre, to, w)) rc = err_set(w->e, "out of memory");
    w->failed = rc != 0;
    return rc;
}

int record_prefill(Session *s, Store *st, int64_t run, int top_k, int progress, const volatile sig_atomic_t *stop,
                   int *fed, int *pending, Err *e) {
    int n = session_prompt_pending(s);
    PrefillWrite w = {.st = st, .run = run, .top_k = top_k, .progress = progress, .c = &s->model->c, .n = n,
                      .pending = pending, .e = e};
    StepTrace **pre = calloc(n > 0 ? n : 1, sizeof *pre);
    *fed = 0;
    int rc = -1;
    if (!pre || alloc_chunk(pre, 0, &w)) {
        err_set(e, "out of memory");
    } else {
        *fed = progress_prefill_into(s, pre, progress, stop, write_chunk, &w);
        rc = w.failed ? -1 : 0;
    }
    for (int i = 0; pre && i < n; i++) trace_free(pre[i]);
    free(pre);
    return rc;
}
