/* headscore_run.c — `calibrate --method NAME` (app/headscore_run.h): one
 * full-attention pass per unit (a task item, or an induction sequence)
 * with every query kept, so any head's softmax row can be read back, then
 * the unit's value per head from engine/headscore.h, and the table written. */
#include "app/headscore_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/duo_train.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "app/train_run.h"
#include "engine/files.h"
#include "engine/headscore.h"
#include "engine/pool.h"
#include "engine/session.h"
#include "engine/stats.h"
#include "engine/tasks/tasks.h"
#include "engine/textout.h"

static const char *const METHOD_NAMES[] = {"oracle", "retrieval", "induction", "duo-fast", "duo-train", "needle-weight"};

const char *headscore_method_name(CalMethod m) {
    return m >= 0 && m < (int)(sizeof METHOD_NAMES / sizeof *METHOD_NAMES) ? METHOD_NAMES[m] : "?";
}

int headscore_method_parse(const char *s, CalMethod *m, Err *e) {
    for (int i = CAL_RETRIEVAL; i <= CAL_NEEDLE_WEIGHT; i++)
        if (!strcmp(s, METHOD_NAMES[i])) return (*m = (CalMethod)i), 0;
    return err_usage(e, "--method must be retrieval, induction, duo-fast, duo-train or needle-weight, not '%s'", s);
}

/* What every unit's pass needs: the loaded model, the scores being filled
 * (echo beside induction), and one softmax row of scratch. */
typedef struct {
    CalOpts *c;
    AppLoaded L;
    DuoTrainResult duo;  /* duo-train: what its last steps' loss was */
    HeadScores score, echo;
    float *row;
    int n_units;
} Scorer;

/* A session over ids[0..n) fed whole with every query kept, positions for
 * `extra` generated tokens after it. */
static int unit_session(Scorer *z, Session *s, const int *ids, int n, int extra, Err *e) {
    if (session_init(s, &z->L.model, &z->L.tok, &z->c->run.attn, n + extra, 0.0f, 1.0f, 1, pool_default_threads(), e))
        return -1;
    if (fwd_keep_queries(&s->rs, e) || session_start_ids(s, ids, n, e)) {
        session_free(s);
        return -1;
    }
    session_prefill(s, NULL);
    return 0;
}

/* The item's prompt as the session encodes it (BOS added): its length is
 * checked against the item's n_tokens, and every position it names against it. */
static int item_ids(Scorer *z, const TaskItem *it, int k, int **ids, int *n, Err *e) {
    const Config *c = &z->L.model.c;
    size_t len = strlen(it->prompt);
    if (len > (size_t)c->seq_len * 64) return err_set(e, "%s: item %d: the prompt is longer than the context", z->c->data, k + 1);
    if (!(*ids = malloc((len + 3) * sizeof **ids))) return err_set(e, "out of memory");
    if (tok_encode(&z->L.tok, it->prompt, len, 1, 0, *ids, (int)len + 3, n, e)) return err_prefix(e, z->c->data);
    int room = z->c->method == CAL_RETRIEVAL ? z->c->gen : 0;
    if (*n + room > c->seq_len)
        return err_set(e, "%s: item %d: %d ids and %d to generate exceed the context (%d)", z->c->data, k + 1, *n, room,
                       c->seq_len);
    if (it->n_tokens && it->n_tokens != *n)
        return err_set(e, "%s: item %d: the prompt encodes to %d ids, not its n_tokens %d (another tokenizer?)",
                       z->c->data, k + 1, *n, it->n_tokens);
    for (int i = 0; i < it->n_needle_pos; i++)
        if (it->needle_pos[i] >= *n) return err_set(e, "%s: item %d: needle_pos %d is past the prompt", z->c->data, k + 1, it->needle_pos[i]);
    if (it->question_pos >= *n) return err_set(e, "%s: item %d: question_pos %d is past the prompt", z->c->data, k + 1, it->question_pos);
    return 0;
}

/* The needle's positions as a 0/1 mask of n, the prompt's ids and the
 * generated ones a retrieval row reaches (duplicates counted once). */
static uint8_t *needle_mask(const TaskItem *it, int n, int *count) {
    uint8_t *m = calloc((size_t)n, 1);
    *count = 0;
    for (int i = 0; m && i < it->n_needle_pos; i++) *count += !m[it->needle_pos[i]], m[it->needle_pos[i]] = 1;
    return m;
}

/* Retrieval: generate c->gen tokens; each step, every head whose top key
 * is a needle position holding the token just generated copies it. */
static void score_retrieval(Scorer *z, Session *s, const uint8_t *needle, int n_needle, double *u) {
    const Config *c = &z->L.model.c;
    while (session_step(s, NULL)) {
        int p = s->n_fed - 1, q = p - 1; /* the token fed at p was predicted at q */
        for (int l = 0; l < c->n_layers; l++)
            for (int h = 0; h < c->n_heads; h++) {
                fwd_attention_weights(&s->rs, l, h, q, z->row);
                u[l * c->n_heads + h] += headscore_retrieval_step(z->row, q + 1, s->ids, needle, n_needle, s->ids[p]);
            }
    }
}

/* Needle weight: the largest weight a head puts on the needle at any
 * query position from the question to the prompt's end. */
static void score_needle(Scorer *z, Session *s, const TaskItem *it, const uint8_t *needle, double *u) {
    const Config *c = &z->L.model.c;
    for (int q = it->question_pos; q < s->n_fed; q++)
        for (int l = 0; l < c->n_layers; l++)
            for (int h = 0; h < c->n_heads; h++) {
                fwd_attention_weights(&s->rs, l, h, q, z->row);
                double m = headscore_mass_on(z->row, q + 1, needle);
                if (m > u[l * c->n_heads + h]) u[l * c->n_heads + h] = m;
            }
}

/* The RoPE table row a layer's position uses (local layers of a model with
 * their own base read the second set, as the forward pass does). */
static void rope_rows(const Scorer *z, const RunState *rs, int layer, int pos, const float **cs, const float **sn) {
    const Config *c = &z->L.model.c;
    int local = c->rope_local_theta > 0 && z->L.model.layers[layer].window > 0;
    size_t at = (size_t)(pos + (local ? c->seq_len : 0)) * (c->head_size / 2);
    *cs = rs->rope_cos + at, *sn = rs->rope_sin + at;
}

/* The mean over positions 0..n-1 of one head's vectors with their
 * rotation undone; v(i, out) reads position i's rotated vector. */
static void mean_unrotated(const Scorer *z, const RunState *rs, int layer, int n, const float *base, size_t stride,
                           int kvh, float *out, float *tmp, double *acc) {
    const Config *c = &z->L.model.c;
    int hs = c->head_size;
    memset(acc, 0, (size_t)hs * sizeof *acc);
    for (int i = 0; i < n; i++) {
        const float *cs, *sn;
        if (base) memcpy(tmp, base + (size_t)i * stride, (size_t)hs * sizeof *tmp);
        else fwd_kv_get(rs, 0, layer, kvh, i, tmp);
        rope_rows(z, rs, layer, i, &cs, &sn);
        headscore_rope(tmp, hs, c->rope_half, cs, sn, 1);
        for (int j = 0; j < hs; j++) acc[j] += tmp[j];
    }
    for (int j = 0; j < hs; j++) out[j] = (float)(acc[j] / n);
}

/* duo-fast on one layer: the mean key repeated at positions 0..len-1 and
 * rotated, the mean query rotated to len-1, the area under the softmax's
 * cumulative sum. */
static int score_duo_layer(Scorer *z, Session *s, int l, double *u) {
    const Config *c = &z->L.model.c;
    int hs = c->head_size, g = c->n_heads / c->n_kv_heads, len = z->c->duo_len, n = s->n_fed;
    float *keys = malloc((size_t)len * hs * sizeof *keys), *q = malloc((size_t)hs * 2 * sizeof *q), *tmp = q + hs;
    double *acc = malloc((size_t)hs * sizeof *acc);
    if (!keys || !q || !acc) { free(keys), free(q), free(acc); return -1; }
    for (int k = 0; k < c->n_kv_heads; k++) {
        mean_unrotated(z, &s->rs, l, n, NULL, 0, k, keys, tmp, acc);
        for (int i = 1; i < len; i++) memcpy(keys + (size_t)i * hs, keys, (size_t)hs * sizeof *keys);
        for (int i = 0; i < len; i++) {
            const float *cs, *sn;
            rope_rows(z, &s->rs, l, i, &cs, &sn);
            headscore_rope(keys + (size_t)i * hs, hs, c->rope_half, cs, sn, 0);
        }
        for (int h = k * g; h < (k + 1) * g; h++) {
            const float *cs, *sn;
            const float *qs = s->rs.q_cache + (size_t)l * c->seq_len * c->q_dim + (size_t)h * hs;
            mean_unrotated(z, &s->rs, l, n, qs, (size_t)c->q_dim, k, q, tmp, acc);
            rope_rows(z, &s->rs, l, len - 1, &cs, &sn);
            headscore_rope(q, hs, c->rope_half, cs, sn, 0);
            headscore_softmax(q, keys, len, hs, z->row);
            u[l * c->n_heads + h] = headscore_cum_area(z->row, len);
        }
    }
    free(keys), free(q), free(acc);
    return 0;
}

static int score_item(Scorer *z, const TaskItem *it, int k, Err *e) {
    int *ids = NULL, n = 0, n_needle = 0, rc = -1;
    uint8_t *needle = NULL;
    Session s;
    double *u = NULL;
    int extra = z->c->method == CAL_RETRIEVAL ? z->c->gen : 0;
    if (item_ids(z, it, k, &ids, &n, e) || !(needle = needle_mask(it, n + extra, &n_needle))) goto out;
    if (!(u = headscore_unit(&z->score, e)) || unit_session(z, &s, ids, n, extra, e)) goto out;
    if (z->c->method == CAL_RETRIEVAL) score_retrieval(z, &s, needle, n_needle, u);
    else if (z->c->method == CAL_NEEDLE_WEIGHT) score_needle(z, &s, it, needle, u);
    rc = 0;
    for (int l = 0; rc == 0 && z->c->method == CAL_DUO_FAST && l < z->L.model.c.n_layers; l++)
        if (score_duo_layer(z, &s, l, u)) rc = err_set(e, "out of memory");
    if (rc == 0) rc = app_session_error(&s, e);
    session_free(&s);
out:
    if (rc && !e->msg[0]) err_set(e, "out of memory");
    free(ids), free(needle);
    return rc;
}

/* Sequence i of the stream: BOS (as the tokenizer adds it), then `period`
 * ids drawn uniformly from [3, vocab) twice over. */
static int induction_ids(Scorer *z, StatsRng *r, int *ids, Err *e) {
    int n = 0, P = z->c->period, vocab = z->L.model.c.vocab_size, pre[8];
    if (tok_encode(&z->L.tok, "", 0, 1, 0, pre, 8, &n, e)) return -1;
    if (n > 1) return err_set(e, "the tokenizer encodes empty text to %d ids (BOS at most expected)", n);
    memcpy(ids, pre, (size_t)n * sizeof *ids);
    for (int j = 0; j < P; j++) ids[n + j] = ids[n + P + j] = 3 + (int)stats_rng_below(r, (uint64_t)(vocab - 3));
    return n + 2 * P;
}

/* Echo and induction, each the mean over the second block's positions. */
static int score_sequence(Scorer *z, StatsRng *r, Err *e) {
    const Config *c = &z->L.model.c;
    int P = z->c->period, *ids = malloc((size_t)(2 * P + 2) * sizeof *ids), n;
    double *ind = NULL, *echo = NULL;
    Session s;
    if (!ids) return err_set(e, "out of memory");
    if ((n = induction_ids(z, r, ids, e)) < 0 || !(ind = headscore_unit(&z->score, e)) ||
        !(echo = headscore_unit(&z->echo, e)) || unit_session(z, &s, ids, n, 0, e)) {
        free(ids);
        return -1;
    }
    for (int t = n - P; t < n; t++)
        for (int l = 0; l < c->n_layers; l++)
            for (int h = 0; h < c->n_heads; h++) {
                double ec, in;
                fwd_attention_weights(&s.rs, l, h, t, z->row);
                headscore_echo_induction(z->row, t, P, &ec, &in);
                echo[l * c->n_heads + h] += ec / P, ind[l * c->n_heads + h] += in / P;
            }
    int rc = app_session_error(&s, e);
    session_free(&s);
    free(ids);
    return rc;
}

/* duo-train: one unit, every query head's value its KV head's trained gate. */
static int score_duo_train(Scorer *z, Err *e) {
    const CalOpts *c = z->c;
    const Config *m = &z->L.model.c;
    DuoTrainOpts o = {c->data, c->sink, c->recent, c->steps, c->batch, c->lr, c->lambda, (uint64_t)c->seed};
    if (train_model_trainable(&z->L.model, z->L.model_path, e)) return -1;
    float *alpha = malloc((size_t)m->n_layers * m->n_kv_heads * sizeof *alpha);
    if (!alpha) return err_set(e, "out of memory");
    double *u = headscore_unit(&z->score, e);
    int rc = u ? duo_train(&z->L.model, &z->L.tok, &o, alpha, &z->duo, e) : -1;
    for (int i = 0; rc == 0 && i < m->n_layers * m->n_heads; i++)
        u[i] = alpha[(i / m->n_heads) * m->n_kv_heads + (i % m->n_heads) / (m->n_heads / m->n_kv_heads)];
    z->n_units = z->duo.n_items;
    free(alpha);
    return rc;
}

static int score_all(Scorer *z, Err *e) {
    const CalOpts *c = z->c;
    if (c->method == CAL_DUO_TRAIN) return score_duo_train(z, e);
    if (c->method == CAL_INDUCTION) {
        if (z->L.model.c.vocab_size < 4)
            return err_set(e, "induction: a vocabulary of %d ids has none to draw", z->L.model.c.vocab_size);
        if (2 * c->period + 1 > z->L.model.c.seq_len)
            return err_set(e, "--period %d: two blocks and BOS exceed the context (%d)", c->period, z->L.model.c.seq_len);
        StatsRng r = stats_rng((uint64_t)c->seed);
        for (int i = 0; i < c->sequences; i++)
            if (score_sequence(z, &r, e)) return -1;
        z->n_units = c->sequences;
        return 0;
    }
    TaskSet set;
    if (tasks_read_jsonl(c->data, &set, e)) return -1;
    int rc = 0;
    for (int k = 0; rc == 0 && k < set.n; k++) rc = score_item(z, &set.item[k], k, e);
    z->n_units = set.n;
    tasks_free(&set);
    return rc;
}

/* The default form: a row per query head, its score and its KV head's. */
static int write_rows(const Scorer *z, const char *about, Err *e) {
    FileAtomic a;
    FILE *f = file_atomic_open(&a, z->c->out, e);
    if (!f) return -1;
    const HeadScores *s = &z->score;
    int g = s->n_heads / s->n_kv, echo = z->c->method == CAL_INDUCTION;
    fprintf(f, "# %s\nlayer\thead\tkv_head\tscore\tkv_score%s\n", about, echo ? "\techo\techo_kv" : "");
    for (int l = 0; l < s->n_layers; l++)
        for (int h = 0; h < s->n_heads; h++) {
            fprintf(f, "%d\t%d\t%d\t%.6f\t%.6f", l, h, h / g, headscore_mean(s, l, h), headscore_kv(s, l, h / g));
            if (echo) fprintf(f, "\t%.6f\t%.6f", headscore_mean(&z->echo, l, h), headscore_kv(&z->echo, l, h / g));
            fputc('\n', f);
        }
    return file_atomic_commit(&a, e);
}

/* --format json: Retrieval-Head's {"L-H": [a score per unit]}. */
static int write_json(const Scorer *z, Err *e) {
    FileAtomic a;
    FILE *f = file_atomic_open(&a, z->c->out, e);
    if (!f) return -1;
    const HeadScores *s = &z->score;
    size_t row = (size_t)s->n_layers * s->n_heads;
    fputc('{', f);
    for (size_t i = 0; i < row; i++) {
        fprintf(f, "%s\"%zu-%zu\": [", i ? ", " : "", i / s->n_heads, i % s->n_heads);
        for (int u = 0; u < s->n_units; u++) fprintf(f, "%s%.6g", u ? ", " : "", s->v[u * row + i]);
        fputc(']', f);
    }
    fputs("}\n", f);
    return file_atomic_commit(&a, e);
}

/* --format duo: every KV head's score, clipped to [0, 1] as DuoAttention's
 * loader clips (a retrieval score can pass 1 when a needle token is copied
 * more than once). */
static int write_duo(const Scorer *z, const char *about, Err *e) {
    const HeadScores *s = &z->score;
    HeadTable t = {s->n_layers, s->n_kv, malloc((size_t)s->n_layers * s->n_kv * sizeof(float))};
    if (!t.values) return err_set(e, "out of memory");
    for (int l = 0; l < s->n_layers; l++)
        for (int k = 0; k < s->n_kv; k++) t.values[l * s->n_kv + k] = (float)fmin(1.0, fmax(0.0, headscore_kv(s, l, k)));
    int rc = headset_table_write(z->c->out, &t, about, e);
    headset_table_free(&t);
    return rc;
}

/* The comment line every form but json opens with: the method and its settings. */
static void describe(const Scorer *z, char *out, size_t cap) {
    const CalOpts *c = z->c;
    int n = snprintf(out, cap, "calibrate --method %s, model %.400s, ", headscore_method_name(c->method), z->L.model_path);
    if (c->method == CAL_INDUCTION)
        snprintf(out + n, cap - n, "%d sequences of 2 x %d random ids, seed %llu; score = induction, KV = max over group",
                 c->sequences, c->period, (unsigned long long)c->seed);
    else if (c->method == CAL_DUO_FAST)
        snprintf(out + n, cap - n, "data %.400s (%d items), %d positions, KV = mean over group; sink_size %d recent_size %d",
                 c->data, z->n_units, c->duo_len, c->sink, c->recent);
    else if (c->method == CAL_DUO_TRAIN)
        snprintf(out + n, cap - n, "data %.400s (%d items), %d steps of %d, lr %g, lambda %g, seed %ld, last KL %.6g; "
                 "KV = the gate; sink_size %d recent_size %d", c->data, z->n_units, c->steps, c->batch, c->lr, c->lambda,
                 c->seed, z->duo.last_kl, c->sink, c->recent);
    else
        snprintf(out + n, cap - n, "data %.400s (%d items)%s, KV = max over group", c->data, z->n_units,
                 c->method == CAL_RETRIEVAL ? ", greedy" : "");
}

static int scorer_open(Scorer *z, CalOpts *c, Err *e) {
    memset(z, 0, sizeof *z);
    z->c = c;
    c->run.have_policy = 1, c->run.attn.policy = POLICY_FULL; /* the scores read the full model */
    if (app_load(&c->run, &z->L, 1, e)) return -1;
    const Config *m = &z->L.model.c;
    if (c->method == CAL_DUO_FAST && (c->duo_len < 2 || c->duo_len > m->seq_len)) c->duo_len = m->seq_len < 500 ? m->seq_len : 500;
    if (headscore_init(&z->score, m->n_layers, m->n_heads, m->n_kv_heads, e) ||
        headscore_init(&z->echo, m->n_layers, m->n_heads, m->n_kv_heads, e))
        return -1;
    z->score.kv_mean = c->method == CAL_DUO_FAST; /* kvpress averages a group's areas */
    if (!(z->row = malloc((size_t)m->seq_len * sizeof *z->row))) return err_set(e, "out of memory");
    return 0;
}

static void scorer_close(Scorer *z) {
    headscore_free(&z->score), headscore_free(&z->echo);
    free(z->row);
    app_unload(&z->L);
}

/* The head of highest score, for the line on stdout. */
static void report(const Scorer *z) {
    const HeadScores *s = &z->score;
    int bl = 0, bh = 0;
    for (int l = 0; l < s->n_layers; l++)
        for (int h = 0; h < s->n_heads; h++)
            if (headscore_mean(s, l, h) > headscore_mean(s, bl, bh)) bl = l, bh = h;
    char safe[4 * 1024 + 1];
    printf("%s: %d layers x %d heads over %d %s -> %s (highest L%d H%d %.4f)\n", headscore_method_name(z->c->method),
           s->n_layers, s->n_heads, z->n_units, z->c->method == CAL_INDUCTION ? "sequences" : "items",
           textout_term(z->c->out, safe, sizeof safe), bl, bh, headscore_mean(s, bl, bh));
}

int headscore_run(CalOpts *c, Err *e) {
    Scorer z;
    char about[1200];
    e->msg[0] = 0;
    int rc = scorer_open(&z, c, e) || score_all(&z, e) ? -1 : 0;
    if (rc == 0) {
        describe(&z, about, sizeof about);
        rc = c->json ? write_json(&z, e) : c->duo ? write_duo(&z, about, e) : write_rows(&z, about, e);
    }
    if (rc == 0) report(&z);
    scorer_close(&z);
    return rc;
}
