/* ablate_diff.c — the parent's and the ablated child's distributions compared (see ablate_diff.h). */
#include "app/ablate_diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ln Σ exp(l[i]) in double, shifted by the largest logit. */
static double log_sum_exp(const float *l, int v) {
    double mx = -INFINITY, s = 0;
    for (int i = 0; i < v; i++) mx = l[i] > mx ? l[i] : mx;
    for (int i = 0; i < v; i++) s += exp((double)l[i] - mx);
    return mx + log(s);
}

double ablate_kl_logits(const float *lp, const float *lq, int v, int tok, double *nll_p, double *nll_q) {
    double zp = log_sum_exp(lp, v), zq = log_sum_exp(lq, v), kl = 0;
    for (int i = 0; i < v; i++) {
        double a = lp[i] - zp, b = lq[i] - zq; /* ln p(i), ln q(i) */
        if (a > -745) kl += exp(a) * (a - b);  /* p(i) = 0 in double adds nothing */
    }
    if (nll_p) *nll_p = tok >= 0 ? zp - lp[tok] : NAN;
    if (nll_q) *nll_q = tok >= 0 ? zq - lq[tok] : NAN;
    return kl > 0 ? kl : 0; /* rounding can leave -1e-17 where the two agree */
}

void ablate_diff_free(AblateDiff *d) {
    free(d->kl), free(d->nll_parent), free(d->nll_child), free(d->next);
    memset(d, 0, sizeof *d);
}

int ablate_diff_argmax(const AblateDiff *d) {
    int best = -1;
    for (int i = 0; i < d->n - d->from; i++)
        if (isfinite(d->kl[i]) && (best < 0 || d->kl[i] > d->kl[best])) best = i;
    return best < 0 ? -1 : d->from + best;
}

int ablate_diff_cont_split(const AblateDiff *d) {
    int n = d->n_cont[0] < d->n_cont[1] ? d->n_cont[0] : d->n_cont[1];
    for (int i = 0; i < n; i++)
        if (d->cont[0][i] != d->cont[1][i]) return i;
    return d->n_cont[0] == d->n_cont[1] ? -1 : n;
}

/* The caller's stop, as a session's progress callback. */
typedef struct {
    int (*stop)(void *user);
    void *user;
} Stop;

static int on_progress(void *user, int done, int total) {
    const Stop *s = user;
    (void)done, (void)total;
    return s->stop && s->stop(s->user);
}

/* Both sessions under their settings, greedy, prefilled over ids[0 … from]. */
static int open_pair(Session *s, const Model *m, const AttnConfig *const a[2], const int *ids, int from, int threads,
                     Stop *st, Err *e) {
    for (int i = 0; i < 2; i++) {
        if (session_init(&s[i], m, NULL, a[i], m->c.seq_len, 0.0f, 1.0f, 1, threads, e) ||
            session_start_ids(&s[i], ids, from + 1, e))
            return -1;
        session_set_progress(&s[i], 0, on_progress, st);
        if (session_prefill(&s[i], NULL) != from + 1) return 1;
    }
    return 0;
}

static int alloc_diff(AblateDiff *d, int n, int from, int k) {
    size_t c = (size_t)(n - from);
    d->from = from, d->n = n, d->at_from = d->last = -1, d->cont_want = k < ABLATE_CONT_MAX ? k : ABLATE_CONT_MAX;
    d->kl = malloc(c * sizeof *d->kl), d->nll_parent = malloc(c * sizeof *d->nll_parent);
    d->nll_child = malloc(c * sizeof *d->nll_child), d->next = malloc(c * sizeof *d->next);
    return d->kl && d->nll_parent && d->nll_child && d->next ? 0 : -1;
}

/* Positions from … n-1: compare, then feed the run's next token to both. */
static int compare_positions(Session *s, const int *ids, AblateDiff *d, Stop *st) {
    int v = s[0].model->c.vocab_size;
    for (int t = d->from; t < d->n; t++) {
        if (st->stop && st->stop(st->user)) return 1;
        int i = t - d->from, tok = t + 1 < d->n ? ids[t + 1] : -1;
        d->next[i] = tok;
        d->kl[i] = ablate_kl_logits(s[0].prev_logits, s[1].prev_logits, v, tok, &d->nll_parent[i], &d->nll_child[i]);
        d->last = ids[t];
        if (tok >= 0 && (!session_force(&s[0], tok, NULL) || !session_force(&s[1], tok, NULL))) {
            d->n = t + 1; /* the context is full: what could be compared was */
            return 0;
        }
    }
    return 0;
}

/* Up to k greedy tokens from the end, in each session; a session that
 * cannot feed the token it chose still names it. */
static int continue_both(Session *s, AblateDiff *d, Stop *st) {
    for (int i = 0; i < 2; i++) {
        int start = s[i].n_ids;
        while (s[i].n_ids - start < d->cont_want && !s[i].done) {
            if (st->stop && st->stop(st->user)) return 1;
            session_step(&s[i], NULL);
        }
        d->n_cont[i] = s[i].n_ids - start;
        memcpy(d->cont[i], s[i].ids + start, (size_t)d->n_cont[i] * sizeof(int));
    }
    return 0;
}

int ablate_diff_run(const Model *m, const AttnConfig *parent, const AttnConfig *child, const int *ids, int n,
                    int from, int k, int threads, int (*stop)(void *user), void *user, AblateDiff *d, Err *e) {
    memset(d, 0, sizeof *d);
    if (from < 0 || from >= n) return err_set(e, "ablate: position %d is not one of the %d fed", from, n);
    Session s[2];
    memset(s, 0, sizeof s);
    Stop st = {stop, user};
    const AttnConfig *a[2] = {parent, child};
    int rc = alloc_diff(d, n, from, k) ? err_set(e, "ablate: out of memory for %d positions", n - from) : 0;
    if (rc == 0) d->at_from = ids[from], rc = open_pair(s, m, a, ids, from, threads, &st, e);
    if (rc == 0) rc = compare_positions(s, ids, d, &st);
    if (rc == 0) rc = continue_both(s, d, &st);
    session_free(&s[0]), session_free(&s[1]);
    if (rc) ablate_diff_free(d);
    return rc;
}
