/* router_why.c — a router logit split into its largest terms (see router_why.h). */
#include "router_why.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Insert term i into top (n held, at most k), kept by |xw| descending;
 * an equal magnitude stays behind the lower dimension already there. */
static int insert(RouterTerm *top, int n, int k, RouterTerm t) {
    int at = n;
    while (at > 0 && fabs(top[at - 1].xw) < fabs(t.xw)) at--;
    if (at >= k) return n;
    for (int j = (n < k ? n : k - 1); j > at; j--) top[j] = top[j - 1];
    top[at] = t;
    return n < k ? n + 1 : k;
}

void router_why(const float *x, const float *w, float bias, int dim, int k, RouterWhy *out) {
    if (k > ROUTER_WHY_TOP) k = ROUTER_WHY_TOP;
    if (k < 0) k = 0;
    double sum = 0, sq = 0, named = 0;
    int n = 0;
    for (int i = 0; i < dim; i++) {
        double xw = (double)x[i] * w[i];
        sum += xw, sq += (double)x[i] * x[i];
        if (k > 0) n = insert(out->top, n, k, (RouterTerm){i, x[i], w[i], xw});
    }
    for (int j = 0; j < n; j++) named += out->top[j].xw;
    out->bias = bias, out->logit = sum + bias, out->norm = sqrt(sq), out->dim = dim;
    out->n_top = n, out->rest = sum - named;
}

int router_why_at(const Model *m, const RunState *s, const AttnConfig *a, int layer, int head, int pos, int k,
                  RouterWhy *out) {
    int d = m->c.dim;
    float *x = malloc(2 * (size_t)d * sizeof *x), bias;
    if (!x) return -2;
    int rc = fwd_router_row(m, a, layer, head, x + d, &bias) ? -1 : fwd_router_input(s, layer, pos, x) ? -2 : 0;
    if (rc == 0) router_why(x, x + d, bias, d, k, out);
    free(x);
    return rc;
}

/* The chunks of a recompute end at pos, so its row is in the last call's inputs. */
enum { FEED_CHUNK = 128 };

int router_why_feed_begin(RouterWhyFeed *f, const Model *m, const AttnConfig *a, int pos, int layer, int head,
                          int n_threads, int k, Err *e) {
    memset(f, 0, sizeof *f);
    f->pos = pos, f->layer = layer, f->head = head, f->k = k;
    if (!(f->w = malloc((size_t)m->c.dim * sizeof *f->w))) return err_set(e, "out of memory"), -2;
    if (fwd_router_row(m, a, layer, head, f->w, &f->bias)) {
        router_why_feed_end(f);
        return -1;
    }
    f->ready = 1; /* fwd_free undoes a part-made state too */
    if (fwd_init(&f->rs, &m->c, FEED_CHUNK, n_threads, e) || fwd_keep_router_inputs(&f->rs, e)) {
        router_why_feed_end(f);
        return -2;
    }
    return 0;
}

int router_why_feed_step(RouterWhyFeed *f, const Model *m, const AttnConfig *a, const int *ids, RouterWhy *out) {
    if (f->done > f->pos) return 1;
    int n = f->done ? FEED_CHUNK : f->pos % FEED_CHUNK + 1;
    fwd_forward(m, &f->rs, a, ids + f->done, n, f->done, NULL, NULL);
    f->done += n;
    if (f->done <= f->pos) return 0;
    int d = m->c.dim, row = f->pos < FEED_CHUNK ? f->pos : FEED_CHUNK - 1;
    router_why(f->rs.router_in + ((size_t)f->layer * f->rs.max_batch + row) * d, f->w, f->bias, d, f->k, out);
    return 1;
}

void router_why_feed_end(RouterWhyFeed *f) {
    if (f->ready) fwd_free(&f->rs);
    free(f->w);
    memset(f, 0, sizeof *f);
}

int router_why_recompute(const Model *m, const AttnConfig *a, const int *ids, int pos, int layer, int head,
                         int n_threads, int k, RouterWhy *out, Err *e) {
    RouterWhyFeed f;
    int rc = router_why_feed_begin(&f, m, a, pos, layer, head, n_threads, k, e);
    if (rc) return rc;
    while (!router_why_feed_step(&f, m, a, ids, out)) {}
    router_why_feed_end(&f);
    return 0;
}
