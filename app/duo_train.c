/* duo_train.c — DuoAttention's gate training (app/duo_train.h) on the
 * router trainer's machinery: TrainState's forward and backward with the
 * gates as its soft mix (engine/train_backward.h), AdamW, and the batches
 * of `train --by-length`. Every step runs the teacher (every head full) for
 * the target distribution, then the mixed model and its backward. */
#include "app/duo_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_forced.h"
#include "app/train_batches.h"
#include "engine/train_adamw.h"
#include "engine/train_backward.h"

typedef struct {
    const Model *m;
    const DuoTrainOpts *o;
    EvalData d;
    LengthOrder order;
    TrainState s;
    TrainConfig teacher, student;
    AdamW opt;
    int B, T, *items, *in, *tg;
    float *tw, *target, *routers, *drouters, *mix, *dmix, *grad;
} Duo;

static int duo_open(Duo *z, const Model *m, const Tokenizer *tok, const DuoTrainOpts *o, Err *e) {
    const Config *c = &m->c;
    memset(z, 0, sizeof *z);
    z->m = m, z->o = o;
    if (eval_data_items(&z->d, tok, o->data, c->seq_len, e)) return -1;
    if (z->d.n < 1) return err_set(e, "%s: no items to train on", o->data);
    z->T = 1;
    for (int i = 0; i < z->d.n; i++)
        if (z->d.len[i] - 1 > z->T) z->T = z->d.len[i] - 1; /* an item of len ids has len-1 targets */
    z->B = o->batch < z->d.n ? o->batch : z->d.n;
    size_t N = (size_t)z->B * z->T, L = c->n_layers, H = c->n_heads, nr = L * H * c->dim;
    z->items = malloc(z->B * sizeof *z->items), z->in = malloc(N * sizeof *z->in), z->tg = malloc(N * sizeof *z->tg);
    z->tw = malloc(N * sizeof *z->tw), z->target = malloc(N * c->vocab_size * sizeof *z->target);
    z->routers = calloc(nr, sizeof(float)), z->drouters = calloc(nr, sizeof(float)); /* unread: the mix decides */
    z->mix = malloc(L * H * sizeof(float)), z->dmix = calloc(L * H, sizeof(float));
    z->grad = malloc(L * c->n_kv_heads * sizeof(float));
    if (!z->items || !z->in || !z->tg || !z->tw || !z->target || !z->routers || !z->drouters || !z->mix || !z->dmix ||
        !z->grad)
        return err_set(e, "out of memory");
    if (length_order_init(&z->order, z->d.len, z->d.n, z->B, o->seed, e) || train_init(&z->s, c, z->B, z->T, e))
        return -1;
    AdamWConfig h = adamw_defaults();
    if (adamw_init(&z->opt, L * c->n_kv_heads, &h, e)) return -1;
    z->teacher = (TrainConfig){z->T, 0, -1.0f, 0.0f, TRAIN_CE};
    z->student = (TrainConfig){o->recent, o->sink, 0.5f, 0.0f, TRAIN_KL};
    z->s.target_w = z->tw, z->s.kl_weighted = 1, z->s.dmix = z->dmix;
    train_flush_subnormals();
    return 0;
}

static void duo_close(Duo *z) {
    train_free(&z->s);
    adamw_free(&z->opt);
    length_order_free(&z->order);
    eval_data_free(&z->d);
    free(z->items), free(z->in), free(z->tg), free(z->tw), free(z->target), free(z->routers), free(z->drouters);
    free(z->mix), free(z->dmix), free(z->grad);
}

/* Step `step`'s items packed at their longest one's length; a target
 * weighs 1 when it is an answer token, 0 elsewhere (the prompt, pads):
 * DuoAttention distils the answer positions only. */
static void fill_batch(Duo *z, long step) {
    if (z->B == z->d.n) /* a batch of every item: each once (a draw would repeat some) */
        for (int b = 0; b < z->B; b++) z->items[b] = b;
    else length_order_pick(&z->order, z->o->seed, step, z->B, z->items);
    int T = 1;
    for (int b = 0; b < z->B; b++)
        if (z->d.len[z->items[b]] - 1 > T) T = z->d.len[z->items[b]] - 1;
    train_set_length(&z->s, T);
    for (int b = 0; b < z->B; b++) {
        int k = z->items[b], len = z->d.len[k];
        const int *seq = z->d.seq[k];
        for (int i = 0; i < T; i++) {
            z->in[b * T + i] = i < len ? seq[i] : seq[len - 1];
            z->tg[b * T + i] = i + 1 < len ? seq[i + 1] : seq[len - 1];
            z->tw[b * T + i] = i + 1 < len && i + 1 >= z->d.answer_from[k] ? 1.0f : 0.0f;
        }
    }
}

/* One step on the gates alpha [L][KV]; the KL and the whole loss out. */
static int duo_step(Duo *z, long step, float *alpha, double *kl, double *loss, Err *e) {
    const Config *c = &z->m->c;
    int L = c->n_layers, H = c->n_heads, KV = c->n_kv_heads, g = H / KV;
    fill_batch(z, step);
    z->s.mix = NULL;
    train_forward(&z->s, &z->m->w, z->routers, &z->teacher, z->in, z->tg, NULL);
    memcpy(z->target, z->s.probs, (size_t)z->s.N * c->vocab_size * sizeof(float));
    for (int i = 0; i < L * H; i++) z->mix[i] = alpha[(i / H) * KV + (i % H) / g]; /* a query head reads its KV head's */
    z->s.mix = z->mix;
    *kl = train_forward(&z->s, &z->m->w, z->routers, &z->student, z->in, z->tg, z->target);
    train_backward(&z->s, &z->m->w, z->routers, z->drouters, NULL);
    z->s.mix = NULL;
    double sum = 0;
    for (int i = 0; i < L * KV; i++) sum += alpha[i];
    *loss = *kl + z->o->lambda * sum;
    if (!isfinite(*loss)) return err_set(e, "duo-train step %ld: the loss is not finite (%g)", step + 1, *loss);
    memset(z->grad, 0, (size_t)L * KV * sizeof(float));
    for (int i = 0; i < L * H; i++) z->grad[(i / H) * KV + (i % H) / g] += z->dmix[i];
    for (int i = 0; i < L * KV; i++) z->grad[i] += (float)z->o->lambda; /* ∂(λ·Σ|α|)/∂α for α ≥ 0 */
    adamw_step(&z->opt, alpha, z->grad, (float)z->o->lr);
    for (int i = 0; i < L * KV; i++) alpha[i] = alpha[i] < 0 ? 0 : alpha[i] > 1 ? 1 : alpha[i];
    return 0;
}

int duo_train(const Model *m, const Tokenizer *tok, const DuoTrainOpts *o, float *alpha, DuoTrainResult *r, Err *e) {
    Duo z;
    memset(r, 0, sizeof *r);
    if (o->recent < 1) return err_set(e, "duo-train: --recent must be at least 1 (the current key)");
    for (int i = 0; i < m->c.n_layers * m->c.n_kv_heads; i++) alpha[i] = 1; /* DuoAttention starts every head full */
    int rc = duo_open(&z, m, tok, o, e);
    long tail = o->steps / 10 > 0 ? o->steps / 10 : 1, counted = 0;
    for (long step = 0; rc == 0 && step < o->steps; step++) {
        double kl, loss;
        rc = duo_step(&z, step, alpha, &kl, &loss, e);
        if (rc == 0 && step >= o->steps - tail) r->last_kl += kl, r->last_loss += loss, counted++;
    }
    if (counted) r->last_kl /= counted, r->last_loss /= counted;
    r->n_items = z.d.n;
    duo_close(&z);
    return rc;
}
