/* router_why.h — what drove a router's decision: its logit x·w + b split
 * into the input dimensions that moved it most.
 *
 * The AHA router of a head reads the vector x that feeds W_Q at its layer
 * and position and goes global when σ(x·w + b) > τ. Saying "0.54 > 0.50"
 * restates the rule; this says which few dimensions i carried the logit
 * (the largest |x_i·w_i|, signed), what the rest added together, and how
 * large the input itself was (‖x‖): a large logit from a large residual
 * stream reads differently from one carried by a single dimension.
 * Pure arithmetic: sums in double, so the split adds up to the logit.
 */
#ifndef AHASCOPE_ROUTER_WHY_H
#define AHASCOPE_ROUTER_WHY_H

#include "forward.h"

#define ROUTER_WHY_TOP 6 /* dimensions named at most */

/* One dimension's share of the logit. */
typedef struct {
    int dim;
    float x, w;   /* the input and the router weight there */
    double xw;    /* their product: what the dimension added */
} RouterTerm;

typedef struct {
    double logit;       /* Σ x_i·w_i + bias */
    double bias;
    double norm;        /* ‖x‖ */
    int dim;            /* the input's width */
    int n_top;          /* terms named, by |x_i·w_i| descending */
    RouterTerm top[ROUTER_WHY_TOP];
    double rest;        /* what the other dim - n_top dimensions added together */
} RouterWhy;

/* Split x·w + bias over dim dimensions into its k (≤ ROUTER_WHY_TOP)
 * largest terms by magnitude, ties to the lower dimension, and the rest. */
void router_why(const float *x, const float *w, float bias, int dim, int k, RouterWhy *out);

/* The why of head `head` in `layer` at position pos of what s was fed,
 * from the router inputs it kept (fwd_keep_router_history) and the
 * router a runs (a file's vector and bias, or a faolmo model's built-in
 * row). 0; -1 when a has no router; -2 when the input at pos was not kept
 * (not fed, or keeping was off). */
int router_why_at(const Model *m, const RunState *s, const AttnConfig *a, int layer, int head, int pos, int k,
                  RouterWhy *out);

/* The same without kept inputs: feed ids[0 … pos] afresh through a
 * RunState of its own (n_threads, chunks of up to 128 positions, the last
 * ending at pos) under a, and split the router input it reads at (layer,
 * pos). Costs a prefill of pos + 1 tokens and that state's KV cache, and
 * equals the kept input up to the rounding a prefill's chunking brings.
 * 0; -1 when a has no router; -2 with e set when the state cannot be made. */
int router_why_recompute(const Model *m, const AttnConfig *a, const int *ids, int pos, int layer, int head,
                         int n_threads, int k, RouterWhy *out, Err *e);

/* A recompute a chunk at a time, so that the thread feeding it can answer
 * other work between chunks (the TUI's engine thread steps and draws the
 * pattern meanwhile) and stop it part-way. router_why_recompute is begin,
 * steps until done, end. */
typedef struct {
    RunState rs;   /* its own state and KV cache, a chunk of positions wide */
    float *w;      /* the router's vector */
    float bias;
    int pos, layer, head, k;
    int done;      /* positions fed so far, of pos + 1 */
    int ready;     /* rs is initialised */
} RouterWhyFeed;

/* Begin the why of (layer, head) at pos under a: 0; -1 when a has no
 * router; -2 with e set when the state cannot be made. f is then ended. */
int router_why_feed_begin(RouterWhyFeed *f, const Model *m, const AttnConfig *a, int pos, int layer, int head,
                          int n_threads, int k, Err *e);

/* Feed the next chunk of ids (the first ends where the rest are whole
 * chunks up to pos): 1 once pos is fed, *out then the split; 0 while more
 * remain (f->done of f->pos + 1 fed). */
int router_why_feed_step(RouterWhyFeed *f, const Model *m, const AttnConfig *a, const int *ids, RouterWhy *out);

/* Free what begin made (done or stopped part-way). */
void router_why_feed_end(RouterWhyFeed *f);

#endif
