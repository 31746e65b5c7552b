/* test_session.c — a prefill in chunks gives one batch's results; progress, and stopping it.
 *
 * A session's prefill in chunks: the same results as one
 * batch under every policy, the progress callback's reports, a prefill
 * stopped between chunks and resumed, and one stopped inside a chunk.
 *
 * Tolerance: logits, logprobs and per-head values (masses compared as
 * probabilities) within 1e-4 absolute, the bound test_forward.c holds
 * decode and prefill to; gates and keys read equal. The kernels' blocking
 * follows the rows of a call, so a chunk of 7 sums in another order than
 * one batch (seen 2e-5), and a chunk of 1 takes the decode kernels. */
#include <stdlib.h>
#include <string.h>

#include "engine/decide.h"
#include "engine/routers.h"
#include "engine/session.h"
#include "tests/test.h"
#include "tests/stories.h"

#define N_PROMPT 200 /* under the session's 256-position batch: one call feeds it whole */

static int load_260k(Model *m) {
    Err e;
    if (test_load_stories(m, NULL, &e) == 0) return 0;
    test_fail(__FILE__, __LINE__, "%s", e.msg);
    return -1;
}

/* A fixed prompt: BOS, then ids spread over the vocabulary. */
static void prompt_ids(int *ids, int vocab) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    ids[0] = 1;
    for (int i = 1; i < N_PROMPT; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ids[i] = 3 + (int)(x % (uint64_t)(vocab - 3));
    }
}

typedef struct {
    StepTrace *tr[N_PROMPT];
    float *last;  /* the logits after the prompt [vocab] */
    int fed;
} Prefilled;

/* Prefill the prompt under a in chunks of `chunk` (0: one batch). */
static int prefill(const Model *m, const AttnConfig *a, int chunk, SessionProgress fn, void *user, Prefilled *out) {
    Session s;
    Err e;
    int ids[N_PROMPT];
    prompt_ids(ids, m->c.vocab_size);
    if (session_init(&s, m, NULL, a, m->c.seq_len, 0, 0.9f, 1, 2, &e) || session_start_ids(&s, ids, N_PROMPT, &e)) {
        test_fail(__FILE__, __LINE__, "%s", e.msg);
        return -1;
    }
    session_set_progress(&s, chunk, fn, user);
    for (int i = 0; i < N_PROMPT; i++) out->tr[i] = trace_new(m->c.n_layers, m->c.n_heads);
    out->fed = session_prefill(&s, out->tr);
    out->last = malloc((size_t)m->c.vocab_size * sizeof *out->last);
    memcpy(out->last, s.prev_logits, (size_t)m->c.vocab_size * sizeof *out->last);
    session_free(&s);
    return 0;
}

static void prefilled_free(Prefilled *p) {
    for (int i = 0; i < N_PROMPT; i++) trace_free(p->tr[i]);
    free(p->last);
}

static double worse(double worst, double d) { return isnan(d) || d <= worst ? worst : d; }

/* The largest difference between two prefills (logits, logprobs, per-head
 * values); counts of differing gates and keys read go to *mismatch. */
static double compare(const Prefilled *a, const Prefilled *b, int vocab, int *mismatch) {
    double worst = 0;
    for (int i = 0; i < vocab; i++) worst = worse(worst, fabs(a->last[i] - b->last[i]));
    for (int t = 0; t < N_PROMPT; t++) {
        const StepTrace *x = a->tr[t], *y = b->tr[t];
        worst = worse(worst, fabs(x->logprob - y->logprob));
        worst = worse(worst, fabs(x->entropy - y->entropy));
        *mismatch += x->token != y->token || x->pos != y->pos || (isnan(x->logprob) != isnan(y->logprob));
        for (int i = 0; i < trace_cells(x); i++) {
            *mismatch += x->gate[i] != y->gate[i] || x->keys_read[i] != y->keys_read[i];
            *mismatch += isnan(x->oracle_logit[i]) != isnan(y->oracle_logit[i]);
            worst = worse(worst, fabs(x->score[i] - y->score[i]));
            worst = worse(worst, fabs(decide_prob(x->oracle_logit[i]) - decide_prob(y->oracle_logit[i])));
            worst = worse(worst, fabs(x->oracle_err[i] - y->oracle_err[i]));
            worst = worse(worst, fabs(decide_prob(x->qada_logit[i]) - decide_prob(y->qada_logit[i])));
            worst = worse(worst, fabs(decide_prob(x->qada_bulk_logit[i]) - decide_prob(y->qada_bulk_logit[i])));
            worst = worse(worst, fabs(decide_prob(x->qada_rem_logit[i]) - decide_prob(y->qada_rem_logit[i])));
        }
    }
    return worst;
}

TEST(session_chunked_prefill_matches_one_batch_under_every_policy) {
    SKIP_UNLESS_SHARED();
    Model m;
    if (load_260k(&m)) return;
    Err e;
    Routers r;
    CHECK(router_random(&r, m.c.n_layers, m.c.n_heads, m.c.dim, 3, &e) == 0);
    uint8_t *heads = calloc((size_t)m.c.n_layers * m.c.n_heads, 1);
    heads[1] = heads[m.c.n_heads + 2] = 1;
    static const int CHUNKS[] = {64, 7, 1};
    for (int pol = 0; pol < POLICY_COUNT; pol++)
        for (int profile = 0; profile < 2; profile++) {
            AttnConfig a = aha_defaults();
            a.policy = (Policy)pol, a.profile = profile, a.window = 16, a.sinks = 2, a.p = 0.3f;
            a.routers = r.w, a.static_heads = heads;
            Prefilled one;
            if (prefill(&m, &a, 0, NULL, NULL, &one)) break;
            for (int k = 0; k < 3; k++) {
                Prefilled ch;
                if (prefill(&m, &a, CHUNKS[k], NULL, NULL, &ch)) break;
                int mismatch = 0;
                double worst = compare(&one, &ch, m.c.vocab_size, &mismatch), tol = 1e-4;
                CHECK_INT(ch.fed, N_PROMPT);
                CHECK_MSG(mismatch == 0, "policy %s profile %d chunk %d: %d gates or key counts differ",
                          aha_policy_name(a.policy), profile, CHUNKS[k], mismatch);
                CHECK_MSG(worst <= tol, "policy %s profile %d chunk %d: differs from one batch by %g (tol %g)",
                          aha_policy_name(a.policy), profile, CHUNKS[k], worst, tol);
                prefilled_free(&ch);
            }
            prefilled_free(&one);
        }
    free(heads);
    router_free(&r);
    model_free(&m);
}

typedef struct {
    int calls, n, done[64], total; /* calls, and the counts reported, each once in order */
    int stop_at, stop_call;        /* stop once done reaches stop_at; or at call number stop_call */
} Reports;

static int on_progress(void *user, int done, int total) {
    Reports *r = user;
    r->calls++;
    if ((r->n == 0 || r->done[r->n - 1] != done) && r->n < 64) r->done[r->n++] = done;
    r->total = total;
    return (r->stop_at > 0 && done >= r->stop_at) || r->calls == r->stop_call;
}

TEST(session_prefill_reports_progress_and_stops_between_chunks_or_layers) {
    SKIP_UNLESS_SHARED();
    Model m;
    if (load_260k(&m)) return;
    AttnConfig a = aha_defaults();
    a.profile = 1;
    Reports rep = {0};
    Prefilled all;
    if (prefill(&m, &a, 64, on_progress, &rep, &all)) { model_free(&m); return; }
    /* before the first chunk, after each of the four (64, 128, 192, 200),
     * and between every layer of each chunk with the count unchanged */
    CHECK_INT(rep.n, 5);
    CHECK_INT(rep.calls, 5 + 4 * m.c.n_layers);
    CHECK_INT(rep.total, N_PROMPT);
    int want[] = {0, 64, 128, 192, 200};
    for (int i = 0; i < 5 && i < rep.n; i++) CHECK_INT(rep.done[i], want[i]);

    /* stopped after the second chunk: 128 fed, the rest pending, and
     * resuming gives what one prefill gives */
    Session s;
    Err e;
    int ids[N_PROMPT];
    prompt_ids(ids, m.c.vocab_size);
    CHECK(session_init(&s, &m, NULL, &a, m.c.seq_len, 0, 0.9f, 1, 2, &e) == 0);
    CHECK(session_start_ids(&s, ids, N_PROMPT, &e) == 0);
    Reports stop = {.stop_at = 128};
    session_set_progress(&s, 64, on_progress, &stop);
    StepTrace *tr[N_PROMPT];
    for (int i = 0; i < N_PROMPT; i++) tr[i] = trace_new(m.c.n_layers, m.c.n_heads);
    CHECK_INT(session_prefill(&s, tr), 128);
    CHECK_INT(s.n_fed, 128);
    CHECK_INT(session_prompt_pending(&s), N_PROMPT - 128);
    CHECK_INT(s.done, 0);
    session_set_progress(&s, 64, NULL, NULL);
    CHECK_INT(session_prefill(&s, tr + 128), N_PROMPT - 128);
    double worst = 0;
    for (int i = 0; i < m.c.vocab_size; i++) worst = worse(worst, fabs(s.prev_logits[i] - all.last[i]));
    for (int t = 0; t < N_PROMPT; t++) worst = worse(worst, fabs(tr[t]->logprob - all.tr[t]->logprob));
    CHECK_MSG(worst <= 1e-4, "a resumed prefill differs from one prefill by %g", worst);

    /* stopped inside the second chunk, after two of its layers: that chunk is
     * abandoned (64 fed) and the session is finished, never fed on top of
     * a cache holding part of a chunk */
    CHECK(session_start_ids(&s, ids, N_PROMPT, &e) == 0);
    Reports inside = {.stop_call = 1 + 1 + m.c.n_layers + 1 + 2}; /* 0, chunk 1's layers, 64, before layers 0, 1, 2 */
    session_set_progress(&s, 64, on_progress, &inside);
    CHECK_INT(session_prefill(&s, tr), 64);
    CHECK_INT(s.n_fed, 64);
    CHECK_INT(s.done, 1);
    CHECK_INT(session_prefill(&s, tr), 0);
    CHECK_INT(session_step(&s, NULL), 0);
    CHECK_INT(s.n_fed, 64);
    for (int i = 0; i < N_PROMPT; i++) trace_free(tr[i]);
    session_free(&s);
    prefilled_free(&all);
    model_free(&m);
}
