/* eval_forced.c — teacher-forced evaluation of a policy on held-out sequences.
 *
 * Teacher-forced evaluation (see eval_forced.h). Each sequence is fed
 * twice in one batch each: under full attention (the reference
 * distribution) and under the policy (with every predictor profiled). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/args.h"
#include "app/progress.h"
#include "app/eval_forced.h"
#include "app/run_info.h"
#include "engine/files.h"
#include "engine/kernels.h"
#include "engine/session.h"
#include "engine/tasks/tasks.h"

void eval_data_free(EvalData *d) {
    for (int i = 0; d->seq && i < d->n; i++) free(d->seq[i]);
    free(d->seq);
    free(d->len);
    free(d->answer_from);
    memset(d, 0, sizeof *d);
}

static int data_alloc(EvalData *d, int n, Err *e) {
    memset(d, 0, sizeof *d);
    d->seq = calloc(n, sizeof *d->seq);
    d->len = calloc(n, sizeof *d->len);
    return d->seq && d->len ? 0 : err_set(e, "out of memory for the evaluation data");
}

int eval_data_self(EvalData *d, const Model *m, const Tokenizer *tok, int n, int len, uint64_t seed, Err *e) {
    if (data_alloc(d, n, e)) return -1;
    snprintf(d->desc, sizeof d->desc, "self:%d:%d:%llu", n, len, (unsigned long long)seed);
    AttnConfig full = aha_defaults();
    Session s;
    if (session_init(&s, m, tok, &full, len, 1.0f, 1.0f, seed, 1, e)) return -1;
    int bos = 1, rc = 0;
    /* Stories end with BOS long before the context is full: pack samples one
     * after another, each opening with BOS, as the training data was packed. */
    for (int i = 0; i < n && rc == 0; i++) {
        if (!(d->seq[i] = malloc((size_t)len * sizeof(int)))) { rc = err_set(e, "out of memory"); break; }
        int got = 0;
        while (got < len && rc == 0) {
            if ((rc = session_start_ids(&s, &bos, 1, e))) break;
            while (session_step(&s, NULL)) {}
            if ((rc = app_session_error(&s, e))) break;
            int take = s.n_fed < len - got ? s.n_fed : len - got;
            memcpy(d->seq[i] + got, s.ids, (size_t)take * sizeof(int));
            got += take;
        }
        d->len[i] = got;
        d->n = i + 1;
    }
    session_free(&s);
    return rc;
}

/* Sequence k's sampling seed: a function of the evaluation's seed and k
 * alone (a splitmix64 finaliser), never of the sequences sampled before. */
static uint64_t seq_seed(uint64_t seed, uint64_t k) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (k + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) & 0x7fffffffffffffffull;
}

static void desc_add_shard(EvalData *d, const ArgsShard *sh) {
    size_t o = strlen(d->desc);
    if (sh->n > 1) snprintf(d->desc + o, sizeof d->desc - o, EVAL_SHARD_TAG "%ld/%ld", sh->i, sh->n);
}

int eval_data_self_each(EvalData *d, const Model *m, const Tokenizer *tok, int n, int len, uint64_t seed,
                        const ArgsShard *sh, Err *e) {
    int mine = 0;
    for (int k = 0; k < n; k++) mine += args_shard_owns(sh, k);
    if (mine == 0) return err_set(e, "shard %ld/%ld has no sequences: --self %d gives %d", sh->i, sh->n, n, n);
    if (data_alloc(d, mine, e)) return -1;
    snprintf(d->desc, sizeof d->desc, "self:%d:%d:%llu", n, len, (unsigned long long)seed);
    desc_add_shard(d, sh);
    for (int k = 0; k < n; k++) {
        if (!args_shard_owns(sh, k)) continue;
        EvalData one;
        if (eval_data_self(&one, m, tok, 1, len, seq_seed(seed, (uint64_t)k), e)) { eval_data_free(&one); return -1; }
        d->seq[d->n] = one.seq[0], d->len[d->n] = one.len[0], d->n++;
        one.seq[0] = NULL;
        eval_data_free(&one);
    }
    return 0;
}

int eval_data_shard(EvalData *d, const ArgsShard *sh, Err *e) {
    if (sh->n <= 1) return 0;
    int kept = 0, total = d->n;
    for (int k = 0; k < total; k++) {
        if (args_shard_owns(sh, k)) d->seq[kept] = d->seq[k], d->len[kept++] = d->len[k];
        else free(d->seq[k]);
    }
    d->n = kept;
    if (!kept) return err_set(e, "shard %ld/%ld has no sequences: %s gives %d", sh->i, sh->n, d->desc, total);
    desc_add_shard(d, sh);
    return 0;
}

/* 1 when path's first byte that is not white space is '{': JSON lines
 * (task items), not text. An unreadable file is text here; its reader
 * then names the problem. */
static int data_is_jsonl(const char *path) {
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode)) return 0; /* a FIFO would block here: the reader refuses it */
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c;
    do c = fgetc(f);
    while (c == ' ' || c == '\t' || c == '\r' || c == '\n');
    fclose(f);
    return c == '{';
}

int eval_data_file(EvalData *d, const Tokenizer *tok, const char *path, int len, int max_n, Err *e) {
    if (data_is_jsonl(path)) {
        if (eval_data_items(d, tok, path, len, e)) return -1;
        if (d->n > max_n) { /* the first max_n items, as text keeps its first chunks */
            for (int i = max_n; i < d->n; i++) free(d->seq[i]);
            d->n = max_n;
        }
        return 0;
    }
    size_t size = 0;
    char *text = file_read_all(path, "data file", "a text file", 64 << 20, &size, e);
    if (!text) return -1;
    int *ids = malloc((size + 3) * sizeof *ids), n_ids = 0;
    int rc = ids ? tok_encode(tok, text, size, 0, 0, ids, (int)size + 3, &n_ids, e) : err_set(e, "out of memory");
    free(text);
    int per = len - 1, n = n_ids / per < max_n ? n_ids / per : max_n;
    if (rc == 0 && n < 1) rc = err_set(e, "%s: %d tokens, fewer than one sequence of %d", path, n_ids, len);
    if (rc == 0) rc = data_alloc(d, n, e);
    for (int i = 0; rc == 0 && i < n; i++) {
        if (!(d->seq[i] = malloc((size_t)len * sizeof(int)))) { rc = err_set(e, "out of memory"); break; }
        d->seq[i][0] = 1; /* BOS, as every sequence the model saw in training began */
        memcpy(d->seq[i] + 1, ids + (size_t)i * per, (size_t)per * sizeof(int));
        d->len[i] = len;
        d->n = i + 1;
    }
    if (rc == 0) snprintf(d->desc, sizeof d->desc, "%s", path);
    free(ids);
    return rc;
}

int eval_data_items(EvalData *d, const Tokenizer *tok, const char *path, int len, Err *e) {
    TaskSet s;
    memset(d, 0, sizeof *d);
    if (tasks_read_jsonl(path, &s, e)) return -1;
    int rc = data_alloc(d, s.n, e);
    if (rc == 0 && !(d->answer_from = calloc((size_t)(s.n > 0 ? s.n : 1), sizeof(int))))
        rc = err_set(e, "out of memory");
    for (int i = 0; rc == 0 && i < s.n; i++) {
        const TaskItem *it = &s.item[i];
        size_t n = strlen(it->prompt) + strlen(it->answer) + 3;
        char *text = malloc(n);
        int cap = (int)(4 * n + 8), got = 0;
        if (!text || !(d->seq[i] = malloc((size_t)cap * sizeof(int)))) {
            free(text);
            rc = err_set(e, "out of memory");
            break;
        }
        d->n = i + 1;
        snprintf(text, n, "%s %s.", it->prompt, it->answer);
        int prompt_ids = 0;
        rc = tok_encode(tok, it->prompt, strlen(it->prompt), 1, 0, d->seq[i], cap, &prompt_ids, e);
        if (rc == 0) rc = tok_encode(tok, text, strlen(text), 1, 0, d->seq[i], cap, &got, e);
        d->answer_from[i] = prompt_ids;
        free(text);
        if (rc == 0 && got > len)
            rc = err_set(e, "%s: item %d encodes to %d ids with its answer, more than a sequence of %d (--seq-len)",
                         path, i + 1, got, len);
        d->len[i] = got;
    }
    if (rc == 0) snprintf(d->desc, sizeof d->desc, "%.1000s (%d task items)", path, s.n);
    tasks_free(&s);
    return rc;
}

int eval_data_calibration(EvalData *cal, EvalData *d, const Model *m, const Tokenizer *tok, const char *file, int n,
                          int len, uint64_t seed, Err *e) {
    if (!file) return eval_data_self(cal, m, tok, n, len, (seed * 7919 + 31) & 0x7fffffffffffffffull, e);
    if (d->n < 2) return err_set(e, "%s gives %d sequence(s); need at least 2 (a quarter calibrates the baseline)",
                                 d->desc, d->n);
    int k = d->n / 4 > 0 ? d->n / 4 : 1, total = d->n;
    if (data_alloc(cal, k, e)) return -1;
    memcpy(cal->seq, d->seq, (size_t)k * sizeof *d->seq);
    memcpy(cal->len, d->len, (size_t)k * sizeof *d->len);
    cal->n = k;
    d->n = total - k;
    memmove(d->seq, d->seq + k, (size_t)d->n * sizeof *d->seq);
    memmove(d->len, d->len + k, (size_t)d->n * sizeof *d->len);
    snprintf(cal->desc, sizeof cal->desc, "%.900s chunks 1-%d", file, k);
    snprintf(d->desc, sizeof d->desc, "%.900s chunks %d-%d", file, k + 1, total);
    return 0;
}

int train_data_make(EvalData *d, int *n_held, const Model *m, const Tokenizer *tok, const char *file, int n_self,
                    int len, uint64_t seed, Err *e) {
    int rc = !file ? eval_data_self(d, m, tok, n_self, len, seed * 7919 + 17, e)
                   : eval_data_file(d, tok, file, len, 1 << 20, e);
    if (rc) return -1;
    if (d->n < 2) return err_set(e, "%s gives %d sequence(s); need at least 2 (one held out)", d->desc, d->n);
    *n_held = d->n / 8 > 0 ? d->n / 8 : 1;
    return 0;
}

/* log-softmax of a row into out (nats). */
static void log_softmax(const float *x, int V, double *out) {
    double m = x[0], z = 0;
    for (int i = 1; i < V; i++) m = x[i] > m ? x[i] : m;
    for (int i = 0; i < V; i++) z += exp(x[i] - m);
    double lz = m + log(z);
    for (int i = 0; i < V; i++) out[i] = x[i] - lz;
}

double eval_auc(const EvalAuc *a) {
    double below = 0, n_neg = 0, n_pos = 0, wins = 0;
    for (int i = 0; i < EVAL_AUC_BINS; i++) n_neg += a->neg[i];
    for (int i = 0; i < EVAL_AUC_BINS; i++) {
        wins += a->pos[i] * (below + 0.5 * a->neg[i]);
        below += a->neg[i];
        n_pos += a->pos[i];
    }
    return n_pos > 0 && n_neg > 0 ? wins / (n_pos * n_neg) : NAN;
}

void eval_auc_add(EvalAuc *a, DecidePred k, float v, int label) {
    if (isnan(v) || k == DECIDE_EXECUTED) return;
    double x = k == DECIDE_AHA ? log(v) - log1p(-(double)v) : v; /* the score as log-odds: same order */
    double f = (x + EVAL_AUC_RANGE) / (2 * EVAL_AUC_RANGE) * EVAL_AUC_BINS;
    int b = f < 0 ? 0 : f >= EVAL_AUC_BINS - 1 ? EVAL_AUC_BINS - 1 : (int)f;
    if (label) a->pos[b]++;
    else a->neg[b]++;
}

void eval_sums_name(EvalSums *s) {
    for (int k = 0; k < EVAL_N_PRED; k++)
        snprintf(s->score[k].predictor, sizeof s->score[k].predictor, "%s", decide_name((DecidePred)k));
}

void eval_score_step(const StepTrace *t, const AttnConfig *a, EvalSums *s) {
    s->steps++;
    /* the step's KV totals, not per KV head: a trace read back from a
     * database holds only those, and --from-db must sum the same numbers */
    long kv = trace_kv_read_total(t), kv_full = trace_kv_full(t);
    if (kv >= 0 && kv_full >= 0) {
        s->kv_read += kv, s->kv_full += kv_full;
        s->kv_local += (double)(kv_full / (t->pos + 1)) * (t->pos + 1 - (t->n_far > 0 ? t->n_far : 0));
    }
    if (!isnan(t->logprob)) s->lp_sum += t->logprob, s->lp_n++; /* NaN at position 0, and under share_only */
    for (int i = 0; i < trace_cells(t); i++) {
        int g = decide_cell(t, i, DECIDE_EXECUTED, a->tau, a->theta_logit); /* -1 where there was no choice */
        if (g >= 0) s->gate_sum += g, s->gate_n++;
        if (t->keys_read[i] >= 0) s->keys_read += t->keys_read[i], s->keys_full += t->pos + 1;
        int o = decide_label(t, i, s->ref_set ? s->ref_theta_logit : a->theta_logit);
        if (o < 0) continue;
        if (s->head_counts) s->head_counts[2 * i] += o, s->head_counts[2 * i + 1]++;
        for (int k = 0; k < EVAL_N_PRED; k++) {
            decide_tally(&s->score[k].n, decide_cell(t, i, (DecidePred)k, a->tau, a->theta_logit), o);
            if (!s->share_only) eval_auc_add(&s->auc[k], (DecidePred)k, decide_value(t, i, (DecidePred)k), o);
        }
    }
}

typedef struct {
    RunState rs;
    float *lg_full, *lg_pol; /* [len][V] */
    double *lp_full, *lp_pol; /* [V] */
    StepTrace **tr;           /* [len] */
    int cap;
} EvalBufs;

static int bufs_init(EvalBufs *b, const Model *m, int max_len, int threads, Err *e) {
    const Config *c = &m->c;
    memset(b, 0, sizeof *b);
    if (fwd_init(&b->rs, c, max_len < 128 ? max_len : 128, threads, e)) return -1;
    size_t V = (size_t)c->vocab_size;
    b->lg_full = malloc((size_t)max_len * V * sizeof(float));
    b->lg_pol = malloc((size_t)max_len * V * sizeof(float));
    b->lp_full = malloc(V * sizeof(double));
    b->lp_pol = malloc(V * sizeof(double));
    b->tr = calloc(max_len, sizeof *b->tr);
    b->cap = max_len;
    int ok = b->lg_full && b->lg_pol && b->lp_full && b->lp_pol && b->tr;
    for (int i = 0; ok && i < max_len; i++) ok = (b->tr[i] = trace_new(c->n_layers, c->n_heads)) != NULL;
    return ok ? 0 : err_set(e, "out of memory for the evaluation");
}

static void bufs_free(EvalBufs *b) {
    for (int i = 0; b->tr && i < b->cap; i++) trace_free(b->tr[i]);
    free(b->tr), free(b->lg_full), free(b->lg_pol), free(b->lp_full), free(b->lp_pol);
    fwd_free(&b->rs);
}

/* Feed seq[0..from) and then, continuing the same state, seq[from..len)
 * (the forced answer, when from < len): the prompt's logits and traces are
 * those of the prompt fed alone. lg receives every row; traces the prompt's. */
static void feed_split(const Model *m, EvalBufs *b, const AttnConfig *a, const int *seq, int from, int len, float *lg,
                       StepTrace **tr) {
    fwd_reset(&b->rs);
    fwd_forward(m, &b->rs, a, seq, from, 0, lg, tr);
    if (from < len)
        fwd_forward(m, &b->rs, a, seq + from, len - from, from, lg ? lg + (size_t)from * m->c.vocab_size : NULL, NULL);
}

/* One sequence: both passes, the sums, the token fields of the traces.
 * Tokens from index `from` on are a forced answer: the positions that
 * predict them go into q's ans_* only. */
static void eval_sequence(const Model *m, const Tokenizer *tok, const AttnConfig *a, EvalBufs *b, const int *seq,
                          int len, int from, EvalSums *s, EvalSeq *q) {
    int V = m->c.vocab_size;
    AttnConfig full = *a;
    full.policy = POLICY_FULL, full.profile = 0;
    for (int i = 0; i < from; i++) trace_clear(b->tr[i]);
    if (s->share_only) {
        fwd_reset(&b->rs);
        fwd_forward(m, &b->rs, a, seq, from, 0, NULL, b->tr);
        for (int t = 0; t < from; t++) eval_score_step(b->tr[t], a, s);
        return;
    }
    feed_split(m, b, &full, seq, from, len, b->lg_full, NULL);
    feed_split(m, b, a, seq, from, len, b->lg_pol, b->tr);
    double ans_kl = 0, ans_nll = 0, ans_nll_full = 0;
    for (int t = 0; t < len; t++) {
        if (t < from) {
            StepTrace *tr = b->tr[t];
            tr->pos = t, tr->token = seq[t], tr->is_prompt = 1;
            if (tok) tok_piece_printable(tok, t ? seq[t - 1] : -1, seq[t], tr->piece, sizeof tr->piece);
            if (t > 0) k_logit_stats(b->lg_pol + (size_t)(t - 1) * V, V, seq[t], &tr->logprob, &tr->entropy);
            eval_score_step(tr, a, s);
        }
        if (t + 1 >= len) continue;
        log_softmax(b->lg_full + (size_t)t * V, V, b->lp_full);
        log_softmax(b->lg_pol + (size_t)t * V, V, b->lp_pol);
        double kl = 0;
        for (int v = 0; v < V; v++) kl += exp(b->lp_full[v]) * (b->lp_full[v] - b->lp_pol[v]);
        kl = kl > 0 ? kl : 0;
        if (t + 1 >= from) { /* this position predicts an answer token */
            ans_kl += kl, ans_nll -= b->lp_pol[seq[t + 1]], ans_nll_full -= b->lp_full[seq[t + 1]];
            continue;
        }
        s->kl += kl;
        s->nll -= b->lp_pol[seq[t + 1]];
        s->nll_full -= b->lp_full[seq[t + 1]];
        s->n_tokens++;
    }
    if (q && from < len)
        q->ans_kl = ans_kl / (len - from), q->ans_nll = ans_nll, q->ans_nll_full = ans_nll_full;
}

/* One sequence as a run of the evaluation, under a's per-head windows
 * when it has them (the store counts each head's keys read by its own). */
static int record_sequence(Store *st, const StoreRunInfo *info, const AttnConfig *a, int64_t eval_id, EvalBufs *b,
                           int len, Err *e) {
    StoreRunInfo r = *info;
    r.head_span = (float *)a->head_span;
    r.eval_id = eval_id;
    r.steps = len;
    r.created_at[0] = 0;
    if (store_run_begin(st, &r, e)) return -1;
    store_set_commit_every(st, len); /* one transaction per sequence: a sequence is wholly in or not */
    for (int t = 0; t < len; t++)
        if (store_write_step(st, r.run_id, b->tr[t], NULL, e)) return -1;
    store_set_commit_every(st, 1);
    return store_run_end(st, r.run_id, "done", e);
}

int eval_policy(const Model *m, const Tokenizer *tok, const AttnConfig *a, const EvalData *d, int threads, Store *st,
                const StoreRunInfo *info, int64_t eval_id, int progress, EvalSums *out, Err *e) {
    long *heads = out->head_counts;
    double ref = out->ref_theta_logit;
    EvalSeq *seqs = out->seqs;
    int ref_set = out->ref_set, share_only = out->share_only;
    memset(out, 0, sizeof *out);
    out->head_counts = heads, out->ref_theta_logit = ref, out->ref_set = ref_set, out->share_only = share_only;
    out->seqs = seqs;
    eval_sums_name(out);
    int max_len = 1;
    for (int i = 0; i < d->n; i++) max_len = d->len[i] > max_len ? d->len[i] : max_len;
    AttnConfig pa = *a;
    pa.profile = !share_only;
    EvalBufs b;
    int rc = bufs_init(&b, m, max_len, threads, e);
    int tty = progress && isatty(STDERR_FILENO);
    double t0 = clock_now();
    char label[32];
    snprintf(label, sizeof label, "eval %-9s", aha_policy_name(a->policy));
    for (int i = 0; rc == 0 && i < d->n; i++) {
        double kl0 = out->kl, lp0 = out->lp_sum;
        long n0 = out->n_tokens, lpn0 = out->lp_n;
        int from = d->answer_apart ? d->answer_from[i] : d->len[i];
        EvalSeq *q = seqs ? &seqs[i] : NULL;
        if (q) memset(q, 0, sizeof *q);
        eval_sequence(m, tok, &pa, &b, d->seq[i], d->len[i], from, out, q);
        if (q) q->kl = out->n_tokens > n0 ? (out->kl - kl0) / (double)(out->n_tokens - n0) : 0;
        if (q) q->nll = out->lp_n > lpn0 ? -(out->lp_sum - lp0) / (double)(out->lp_n - lpn0) : 0;
        if (st) rc = record_sequence(st, info, a, eval_id, &b, from, e);
        if (progress) progress_count(label, i + 1, d->n, t0, tty);
    }
    bufs_free(&b);
    return rc;
}

void eval_summarise(const EvalSums *s, StoreEval *ev) {
    double n = s->n_tokens > 0 ? (double)s->n_tokens : NAN;
    ev->n_tokens = s->n_tokens;
    ev->perplexity = exp(s->nll / n);
    ev->perplexity_full = exp(s->nll_full / n);
    ev->kl_mean = s->kl / n;
    ev->global_share = s->gate_n > 0 ? s->gate_sum / s->gate_n : NAN;
    ev->keys_read_frac = s->keys_full > 0 ? s->keys_read / s->keys_full : NAN;
    ev->kv_read_frac = s->kv_full > 0 ? s->kv_read / s->kv_full : NAN;
}
