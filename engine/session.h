/* session.h — one sequence being generated or evaluated: the model, its
 * tokenizer, the attention settings and sampler, and the tokens so far.
 * Each position fed through the model yields a StepTrace; this is the
 * surface the app, the store and the views are driven from.
 *
 * Positions follow llama2.c: `steps` positions are fed at most; the token
 * predicted at the last one is appended but not fed. Generation also ends
 * when the model emits its stop token (kept in ids): BOS for llama2.c
 * vocabularies, as llama2.c does, the EOS of a tokenizer.json.
 */
#ifndef AHASCOPE_SESSION_H
#define AHASCOPE_SESSION_H

#include "forward.h"
#include "sampler.h"
#include "tokenize/tokenize.h"

/* How far a prefill has come: called before its first chunk (done 0),
 * after each chunk fed (up to done == total), and between the layers of a
 * chunk with done unchanged. A non-zero return stops the prefill: between
 * chunks the positions fed stay fed and the rest stay pending; inside a
 * chunk that chunk is abandoned and the session is finished (done), its
 * cache holding part of it. So a quit waits for one layer, not a chunk.
 * This is how a caller shows progress or cancels a long prompt without
 * the engine knowing of terminals or threads. */
typedef int (*SessionProgress)(void *user, int done, int total);

typedef struct {
    const Model *model;
    const Tokenizer *tok;
    AttnConfig attn;
    RunState rs;
    Sampler sampler;
    int steps;        /* positions to feed at most (<= seq_len) */
    int *ids;         /* [steps + 1] every token: prompt, then generated */
    int n_ids, n_prompt, n_fed;
    int done;         /* no more positions will be fed */
    int failed;       /* SAMPLER_NONFINITE / SAMPLER_OVERFLOW: the last logits could not be sampled, so
                       * generation stopped short (0: it did not) */
    int stop_id;      /* token that ends generation (BOS for llama2.c, EOS for HF; -1 none) */
    float *prev_logits; /* logits that predicted ids[n_fed] (valid when n_fed > 0) */
    float *batch_logits; /* [max_batch][vocab] for prefill traces */
    int chunk;          /* positions a prefill feeds per forward call (1 … rs.max_batch) */
    SessionProgress progress; /* NULL: none */
    void *progress_user;
    int progress_done, progress_total; /* the count a prefill reports between layers */
} Session;

/* Create a session. steps <= 0 or > seq_len means seq_len. Returns 0 on success. */
int session_init(Session *s, const Model *m, const Tokenizer *tok, const AttnConfig *a, int steps,
                 float temperature, float topp, uint64_t seed, int n_threads, Err *e);

/* Free the session (the model and tokenizer are the caller's). */
void session_free(Session *s);

/* Start a new sequence from already-encoded ids (BOS included by the caller). */
int session_start_ids(Session *s, const int *ids, int n, Err *e);

/* Start from ids whose first n_prompt are the prompt and the rest were
 * generated before (a re-evaluation under new settings): the sampler skips
 * the draws those tokens took, so the tokens generated next are the ones a
 * single run would have drawn, and the run stays reproducible from its
 * prompt and seed. */
int session_resume_ids(Session *s, const int *ids, int n, int n_prompt, Err *e);

/* Start a new sequence from text (encoded with BOS). */
int session_start_text(Session *s, const char *text, size_t len, Err *e);

/* Feed every prompt position not yet fed, in batched chunks (see
 * session_set_progress). traces, if not NULL, receives one filled trace per
 * position fed, in order (the caller provides at least
 * session_prompt_pending() of them). Returns the number of positions fed:
 * fewer than were pending when the progress callback stopped it (traces
 * past them hold nothing to use). */
int session_prefill(Session *s, StepTrace **traces);

/* Report prefill progress to fn (NULL: none) and feed chunk positions per
 * forward call (<= 0 or over the session's batch: the whole batch, 256 at
 * most). Smaller chunks report and stop sooner; larger ones run faster.
 * The results do not depend on the chunk (tests/test_session.c). */
void session_set_progress(Session *s, int chunk, SessionProgress fn, void *user);

/* Positions of the prompt still to feed. */
int session_prompt_pending(const Session *s);

/* Choose the next token (sampling from the last logits) and feed it.
 * Returns 1 if a position was fed (trace filled if non-NULL), 0 when the
 * sequence is finished (context or steps reached, or BOS emitted) or when
 * the logits could not be sampled (failed says why; nothing is appended). */
int session_step(Session *s, StepTrace *trace);

/* Teacher forcing: append a given token and feed it, like session_step. */
int session_force(Session *s, int token, StepTrace *trace);

#endif
