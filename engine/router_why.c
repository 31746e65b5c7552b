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

int router_why_recompute(const Model *m, const AttnConfig *a, const int *ids, int pos, int layer, int head,
                         int n_threads, int k, RouterWhy *out, Err *e) {
    enum { CHUNK = 128 };
    int d = m->c.dim;
    float *x = malloc(2 * (size_t)d * sizeof *x), bias;
    if (!x) return err_set(e, "out of memory"), -2;
    if (fwd_router_row(m, a, layer, head, x + d, &bias)) {
        free(x);
        return -1;
    }
    RunState rs;
    memset(&rs, 0, sizeof rs);
    int rc = fwd_init(&rs, &m->c, CHUNK, n_threads, e) || fwd_keep_router_inputs(&rs, e) ? -2 : 0;
    /* the chunks end at pos, so its row is in the last call's inputs */
    for (int done = 0, first = pos % CHUNK + 1; rc == 0 && done <= pos; done += done ? CHUNK : first)
        fwd_forward(m, &rs, a, ids + done, done ? CHUNK : first, done, NULL, NULL);
    if (rc == 0) {
        int row = pos < CHUNK ? pos : CHUNK - 1;
        router_why(rs.router_in + ((size_t)layer * rs.max_batch + row) * d, x + d, bias, d, k, out);
    }
    fwd_free(&rs);
    free(x);
    return rc;
}
