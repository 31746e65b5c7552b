/* session.c — one sequence generated or evaluated, a StepTrace per position fed. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kernels.h"

int session_init(Session *s, const Model *m, const Tokenizer *tok, const AttnConfig *a, int steps,
                 float temperature, float topp, uint64_t seed, int n_threads, Err *e) {
    memset(s, 0, sizeof *s);
    s->model = m;
    s->tok = tok;
    s->attn = *a;
    s->stop_id = tok ? tok_stop_id(tok) : m->c.arch == ARCH_LLAMA2C ? TOK_BOS : -1;
    if (aha_check(a, m->c.n_layers, m->c.n_heads, e) != 0) return -1;
    s->steps = (steps <= 0 || steps > m->c.seq_len) ? m->c.seq_len : steps;
    int batch = s->steps < 256 ? s->steps : 256;
    if (fwd_init(&s->rs, &m->c, batch, n_threads, e) != 0) return -1;
    s->chunk = batch;
    size_t V = m->c.vocab_size;
    s->ids = malloc(((size_t)s->steps + 1) * sizeof(int));
    s->prev_logits = malloc(V * sizeof(float));
    s->batch_logits = malloc((size_t)batch * V * sizeof(float));
    if (!s->ids || !s->prev_logits || !s->batch_logits || sampler_init(&s->sampler, (int)V, temperature, topp, seed)) {
        session_free(s);
        return err_set(e, "out of memory for a session of %d steps", s->steps);
    }
    return 0;
}

void session_free(Session *s) {
    fwd_free(&s->rs);
    sampler_free(&s->sampler);
    free(s->ids);
    free(s->prev_logits);
    free(s->batch_logits);
    memset(s, 0, sizeof *s);
}

int session_start_ids(Session *s, const int *ids, int n, Err *e) {
    if (n < 1) return err_set(e, "empty token sequence (need at least BOS)");
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= s->model->c.vocab_size)
            return err_set(e, "token id %d at position %d is outside the vocabulary (%d)", ids[i], i, s->model->c.vocab_size);
    /* llama2.c: with fewer steps than prompt tokens, only the first steps+1 are kept */
    if (n > s->steps + 1) n = s->steps + 1;
    memcpy(s->ids, ids, n * sizeof(int));
    s->n_ids = s->n_prompt = n;
    s->n_fed = 0;
    s->done = 0, s->failed = 0;
    return 0;
}

int session_resume_ids(Session *s, const int *ids, int n, int n_prompt, Err *e) {
    if (session_start_ids(s, ids, n, e)) return -1;
    if (s->n_ids > n_prompt) sampler_skip(&s->sampler, s->n_ids - n_prompt);
    return 0;
}

int session_start_text(Session *s, const char *text, size_t len, Err *e) {
    if (!s->tok) return err_set(e, "no tokenizer loaded");
    if (len > (size_t)64 << 20) return err_set(e, "prompt of %zu bytes is too long", len);
    int *ids = malloc((len + 3) * sizeof(int)), n = 0;
    if (!ids) return err_set(e, "out of memory encoding the prompt");
    int r = tok_encode(s->tok, text, len, 1, 0, ids, (int)len + 3, &n, e);
    if (r == 0 && n == 0) { /* a tokenizer without BOS and an empty prompt: start from end-of-text */
        if (s->stop_id < 0) r = err_set(e, "empty prompt and the tokenizer has neither BOS nor EOS to start from");
        else ids[n++] = s->stop_id;
    }
    /* Fewer steps than the context cut the prompt (session_start_ids), as
     * llama2.c does; only a prompt that would be fed whole must fit. */
    if (r == 0 && n > s->model->c.seq_len && s->steps >= s->model->c.seq_len)
        r = err_set(e, "prompt is %d tokens but the model's context is %d (--steps N below it feeds only the first N+1)",
                    n, s->model->c.seq_len);
    if (r == 0) r = session_start_ids(s, ids, n, e);
    free(ids);
    return r;
}

int session_prompt_pending(const Session *s) {
    int last = s->n_prompt < s->steps ? s->n_prompt : s->steps;
    return last > s->n_fed ? last - s->n_fed : 0;
}

static void fill_token_fields(Session *s, StepTrace *tr, int pos, const float *pred_logits) {
    int prev = pos > 0 ? s->ids[pos - 1] : -1, tok = s->ids[pos];
    tr->pos = pos;
    tr->token = tok;
    tr->is_prompt = pos < s->n_prompt;
    if (pred_logits) k_logit_stats(pred_logits, s->model->c.vocab_size, tok, &tr->logprob, &tr->entropy);
    if (s->tok) tok_piece_printable(s->tok, prev, tok, tr->piece, sizeof tr->piece);
    else tr->piece[0] = '\0';
}

void session_set_progress(Session *s, int chunk, SessionProgress fn, void *user) {
    s->chunk = chunk <= 0 || chunk > s->rs.max_batch ? s->rs.max_batch : chunk;
    s->progress = fn;
    s->progress_user = user;
}

/* Feed T prompt positions from n_fed as one forward call; traces (or NULL)
 * receives them. An abandoned call (rs.stopped) feeds nothing. */
static void prefill_chunk(Session *s, StepTrace **traces, int T) {
    int V = s->model->c.vocab_size, pos0 = s->n_fed;
    double t0 = clock_now();
    fwd_forward(s->model, &s->rs, &s->attn, s->ids + pos0, T, pos0, traces ? s->batch_logits : NULL, traces);
    if (s->rs.stopped) return;
    double per = (clock_now() - t0) * 1e6 / T;
    for (int i = 0; traces && i < T; i++) {
        const float *pred = pos0 + i > 0 ? (i > 0 ? s->batch_logits + (size_t)(i - 1) * V : s->prev_logits) : NULL;
        fill_token_fields(s, traces[i], pos0 + i, pred);
        traces[i]->step_us = per;
    }
    s->n_fed += T;
    memcpy(s->prev_logits, s->rs.logits, V * sizeof(float));
}

/* The progress callback asked between layers (RunState.stop). */
static int stop_between_layers(void *user) {
    Session *s = user;
    return s->progress(s->progress_user, s->progress_done, s->progress_total);
}

int session_prefill(Session *s, StepTrace **traces) {
    int n = s->done ? 0 : session_prompt_pending(s), B = s->chunk, done = 0; /* done: maybe a spoiled cache */
    s->rs.stop = s->progress ? stop_between_layers : NULL;
    s->rs.stop_user = s;
    s->progress_total = n;
    while (done < n && !(s->progress && s->progress(s->progress_user, done, n))) {
        int T = n - done < B ? n - done : B;
        s->progress_done = done;
        prefill_chunk(s, traces ? traces + done : NULL, T);
        if (s->rs.stopped) {
            s->done = 1; /* the cache holds part of the chunk: nothing may be fed on top of it */
            break;
        }
        done += T;
    }
    s->rs.stop = NULL;
    if (s->progress && n > 0 && done == n) s->progress(s->progress_user, n, n);
    if (s->n_fed >= s->steps) s->done = 1; /* a prompt longer than steps: nothing to generate */
    return done;
}

/* Feed ids[n_fed] (already appended), recording it in trace. */
static int feed_one(Session *s, StepTrace *trace) {
    int pos = s->n_fed;
    double t0 = clock_now();
    fwd_forward(s->model, &s->rs, &s->attn, &s->ids[pos], 1, pos, NULL, trace ? &trace : NULL);
    if (trace) {
        fill_token_fields(s, trace, pos, pos > 0 ? s->prev_logits : NULL);
        trace->step_us = (clock_now() - t0) * 1e6;
    }
    memcpy(s->prev_logits, s->rs.logits, s->model->c.vocab_size * sizeof(float));
    s->n_fed++;
    return 1;
}

int session_step(Session *s, StepTrace *trace) {
    if (session_prompt_pending(s) > 0) session_prefill(s, NULL);
    if (s->done || s->n_fed == 0) return 0;
    int token = sampler_sample(&s->sampler, s->prev_logits);
    if (token < 0) {
        s->failed = token, s->done = 1;
        return 0;
    }
    return session_force(s, token, trace);
}

int session_force(Session *s, int token, StepTrace *trace) {
    if (session_prompt_pending(s) > 0) session_prefill(s, NULL);
    if (s->done || token < 0 || token >= s->model->c.vocab_size) return 0;
    s->ids[s->n_ids++] = token;
    /* the token predicted at the last position is kept but never fed */
    if (token == s->stop_id || s->n_fed >= s->steps) {
        s->done = 1;
        return 0;
    }
    return feed_one(s, trace);
}
