/* `ahascope train`: learn AHA routers for a model whose weights stay frozen.
 *
 * Each step takes a batch of B sequences, computes the loss
 * L = task + λ·mean(r) with the hard gates in the forward pass, gets the
 * router gradients by the straight-through estimator (engine/backward.h)
 * and takes an AdamW step on the router vectors only. The task is KL from
 * the model's own full-attention distribution (default: AHA should change
 * nothing) or next-token cross-entropy. Batches are a function of (seed,
 * step), so a run resumed from its checkpoint ends where an uninterrupted
 * one does.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/eval.h"
#include "engine/adamw.h"
#include "engine/backward.h"
#include "engine/safetensors.h"

static volatile sig_atomic_t g_stop; /* Ctrl-C: save a checkpoint and stop */

static void on_int(int sig) { (void)sig, g_stop = 1; }

static void train_help(void) {
    puts("usage: ahascope train [--model M] --window W [--lambda L] [--tau T] [--sinks S] [--steps N] [--batch B]\n"
         "                      [--seq-len T] [--lr LR] [--data FILE | --self N] [--objective kl|ce] [--train routers]\n"
         "                      [--seed S] [--resume CKPT] [--stop-after K] --out FILE\n"
         "\n"
         "Learn one router vector per head (global iff sigmoid(x.w) > tau) with the base model frozen,\n"
         "by the straight-through estimator, loss = task + lambda * mean(r) over tokens, layers, heads.\n"
         "  --objective kl  KL(full-attention distribution || AHA distribution): AHA should change\n"
         "                  nothing (default); ce: next-token cross-entropy\n"
         "  --self N        N sequences sampled from the model itself (default 64), 1 in 8 held out;\n"
         "  --data FILE     or a text file cut into --seq-len chunks\n"
         "  defaults: lambda 0.02, tau 0.5, sinks 0, steps 300, batch 8, seq-len 128, lr 0.02 (AdamW,\n"
         "  10% warm-up, cosine to lr/10), seed 1\n"
         "Writes FILE (router safetensors with metadata: window, tau, lambda, sinks, objective, data, steps,\n"
         "held-out global share and loss). Ctrl-C (or --stop-after K) writes FILE.ckpt, which --resume\n"
         "continues. A progress bar goes to stderr. --train all (full fine-tuning) is not available yet.");
}

typedef struct {
    RunOpts o;
    const char *out, *data, *resume, *objective, *train;
    long steps, batch, seq_len, self_n, stop_after;
    double lambda, lr;
} TrainOpts;

static int parse(int argc, char **argv, TrainOpts *t, Err *e) {
    runopts_defaults(&t->o);
    t->o.seed = 1, t->o.attn.window = 0;
    t->steps = 300, t->batch = 8, t->seq_len = 128, t->self_n = 64, t->lambda = 0.02, t->lr = 0.02;
    t->objective = "kl", t->train = "routers";
    Args a = {argc, argv, 1, "train"};
    while (a.i < argc) {
        const char *f = argv[a.i];
        if (args_is_help(f)) return 1;
        /* --steps here counts optimiser steps, not generated positions */
        int r = !strcmp(f, "--steps") ? 0 : runopts_parse(&t->o, &a, e);
        if (r < 0) return -1;
        if (r > 0) continue;
        a.i++;
        const char **str = !strcmp(f, "--out") ? &t->out : !strcmp(f, "--data") ? &t->data
                         : !strcmp(f, "--resume") ? &t->resume : !strcmp(f, "--objective") ? &t->objective
                         : !strcmp(f, "--train") ? &t->train : NULL;
        long *num = !strcmp(f, "--steps") ? &t->steps : !strcmp(f, "--batch") ? &t->batch
                  : !strcmp(f, "--seq-len") ? &t->seq_len : !strcmp(f, "--self") ? &t->self_n
                  : !strcmp(f, "--stop-after") ? &t->stop_after : NULL;
        double *real = !strcmp(f, "--lambda") ? &t->lambda : !strcmp(f, "--lr") ? &t->lr : NULL;
        const char *v = NULL;
        if (str) { if (!(*str = args_value(&a, e))) return -1; }
        else if (num) { if (!(v = args_value(&a, e)) || args_int(f, v, num == &t->seq_len ? 2 : 1, 1 << 20, num, e)) return -1; }
        else if (real) { if (!(v = args_value(&a, e)) || args_float(f, v, real == &t->lr ? 1e-9 : 0, 1e3, real, e)) return -1; }
        else return err_set(e, "train: unknown flag '%s' (see ahascope train --help)", f);
    }
    if (!t->out) return err_set(e, "train: --out FILE is required");
    if (!t->o.have_window) return err_set(e, "train: --window W is required");
    if (strcmp(t->objective, "kl") && strcmp(t->objective, "ce")) return err_set(e, "train: --objective is kl or ce");
    if (!strcmp(t->train, "all")) return err_set(e, "train: --train all (full fine-tuning) is not available yet; use routers");
    if (strcmp(t->train, "routers")) return err_set(e, "train: --train is routers (or all)");
    if (t->o.routers) return err_set(e, "train: --routers is not an input here (see --resume)");
    return 0;
}

typedef struct {
    const Model *m;
    TrainOpts *t;
    EvalData data;
    int n_train, n_held, T, B;  /* sequences of T+1 tokens: inputs and next-token targets */
    TrainState s;
    TrainConfig tc, teacher;
    float *routers, *drouters, *target; /* [L][H][dim] ×2, [N][vocab] */
    int *in, *tg;                        /* [N] */
    AdamW opt;
    long step;
} Trainer;

/* Batch of `step`: sequence indices from a hash of (seed, step, slot). */
static void fill_batch(Trainer *tr, long step, int held) {
    for (int b = 0; b < tr->B; b++) {
        uint64_t h = (tr->t->o.seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(step * 131 + b) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        int k = held ? tr->n_train + (int)((step * tr->B + b) % tr->n_held) : (int)(h % (uint64_t)tr->n_train);
        const int *seq = tr->data.seq[k];
        int len = tr->data.len[k];
        for (int i = 0; i < tr->T; i++) {
            tr->in[b * tr->T + i] = i < len ? seq[i] : seq[len - 1];
            tr->tg[b * tr->T + i] = i + 1 < len ? seq[i + 1] : seq[len - 1];
        }
    }
}

/* Forward (with the full-attention teacher first for KL); returns the loss. */
static double forward(Trainer *tr) {
    const Weights *w = &tr->m->w;
    if (tr->tc.objective == TRAIN_KL) {
        train_forward(&tr->s, w, tr->routers, &tr->teacher, tr->in, tr->tg, NULL);
        memcpy(tr->target, tr->s.probs, (size_t)tr->s.N * tr->m->c.vocab_size * sizeof(float));
    }
    return train_forward(&tr->s, w, tr->routers, &tr->tc, tr->in, tr->tg, tr->tc.objective == TRAIN_KL ? tr->target : NULL);
}

static int trainer_init(Trainer *tr, const Model *m, TrainOpts *t, Err *e) {
    const Config *c = &m->c;
    memset(tr, 0, sizeof *tr);
    tr->m = m, tr->t = t, tr->T = (int)t->seq_len, tr->B = (int)t->batch;
    tr->tc = (TrainConfig){t->o.attn.window, t->o.attn.sinks, t->o.attn.tau, (float)t->lambda,
                           !strcmp(t->objective, "kl") ? TRAIN_KL : TRAIN_CE};
    tr->teacher = tr->tc, tr->teacher.tau = -1, tr->teacher.lambda = 0, tr->teacher.objective = TRAIN_CE;
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim, N = (size_t)tr->B * tr->T;
    tr->routers = calloc(nr, sizeof(float));
    tr->drouters = calloc(nr, sizeof(float));
    tr->target = malloc(N * c->vocab_size * sizeof(float));
    tr->in = malloc(N * sizeof(int));
    tr->tg = malloc(N * sizeof(int));
    if (!tr->routers || !tr->drouters || !tr->target || !tr->in || !tr->tg) return err_set(e, "train: out of memory");
    if (train_init(&tr->s, c, tr->B, tr->T, e)) return -1;
    AdamWConfig h = adamw_defaults();
    if (adamw_init(&tr->opt, nr, &h, e)) return -1;
    /* Small random routers: scores start near 0.5, so about half the heads
     * go global and both branches get gradient from the first step. */
    uint64_t s = t->o.seed * 0x2545F4914F6CDD1Dull + 7;
    for (size_t i = 0; i < nr; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        tr->routers[i] = ((float)(s >> 40) / (float)(1 << 24) - 0.5f) * 0.2f / sqrtf((float)c->dim);
    }
    return 0;
}

static void trainer_free(Trainer *tr) {
    train_free(&tr->s);
    adamw_free(&tr->opt);
    free(tr->routers), free(tr->drouters), free(tr->target), free(tr->in), free(tr->tg);
    eval_data_free(&tr->data);
}

/* Checkpoint: routers and AdamW moments as F32 tensors, the step as metadata. */
static int save_checkpoint(const Trainer *tr, const char *path, Err *e) {
    const Config *c = &tr->m->c;
    int64_t shape[1] = {(int64_t)c->n_layers * c->n_heads * c->dim};
    char step[32], seed[32];
    StWriter w;
    st_writer_init(&w);
    snprintf(step, sizeof step, "%ld", tr->step);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)tr->t->o.seed);
    int rc = st_writer_add(&w, "routers", ST_F32, 1, shape, tr->routers, e);
    if (rc == 0) rc = st_writer_add(&w, "adam.m", ST_F32, 1, shape, tr->opt.m, e);
    if (rc == 0) rc = st_writer_add(&w, "adam.v", ST_F32, 1, shape, tr->opt.v, e);
    if (rc == 0) rc = st_writer_meta(&w, "step", step, e);
    if (rc == 0) rc = st_writer_meta(&w, "seed", seed, e);
    if (rc == 0) rc = st_write(&w, path, e);
    st_writer_free(&w);
    return rc;
}

static int load_checkpoint(Trainer *tr, const char *path, Err *e) {
    const Config *c = &tr->m->c;
    int64_t shape[1] = {(int64_t)c->n_layers * c->n_heads * c->dim};
    StFile f;
    if (st_open(&f, path, e)) return -1;
    const StTensor *r = st_expect(&f, "routers", ST_F32, 1, shape, e);
    const StTensor *m = r ? st_expect(&f, "adam.m", ST_F32, 1, shape, e) : NULL;
    const StTensor *v = m ? st_expect(&f, "adam.v", ST_F32, 1, shape, e) : NULL;
    const char *step = st_meta(&f, "step");
    long k;
    int rc = v && step && args_int("step", step, 0, 1L << 40, &k, e) == 0 ? 0 : -1;
    if (rc == 0) {
        memcpy(tr->routers, r->data, r->nbytes), memcpy(tr->opt.m, m->data, m->nbytes), memcpy(tr->opt.v, v->data, v->nbytes);
        tr->step = tr->opt.step = k;
    } else if (v && !step) {
        err_set(e, "%s: not a train checkpoint (no step)", path);
    }
    st_close(&f);
    return rc;
}

/* Held-out loss and global share (forward only, every held-out sequence once). */
static void held_out(Trainer *tr, double *loss, double *share) {
    int batches = (tr->n_held + tr->B - 1) / tr->B;
    double l = 0, g = 0;
    for (int i = 0; i < batches; i++) {
        fill_batch(tr, i, 1);
        forward(tr);
        l += tr->s.task_loss, g += tr->s.global_share;
    }
    *loss = l / batches, *share = g / batches;
}

static void progress(const Trainer *tr, double loss, double t0, int last) {
    int tty = isatty(STDERR_FILENO);
    long total = tr->t->steps, done = tr->step;
    if (!tty && !last && done % (total / 10 > 0 ? total / 10 : 1)) return;
    double dt = args_seconds() - t0, tok_s = dt > 0 ? (double)done * tr->B * tr->T / dt : 0;
    int bar = (int)(20.0 * done / total);
    fprintf(stderr, "%s[%.*s%.*s] step %ld/%ld loss %.5f task %.5f global %5.1f%% %6.0f tok/s ETA %4.0f s%s",
            tty ? "\r" : "", bar, "####################", 20 - bar, "                    ", done, total, loss,
            tr->s.task_loss, 100 * tr->s.global_share, tok_s, done ? dt / done * (total - done) : 0, tty && !last ? "" : "\n");
}

static int save_routers(Trainer *tr, double hl, double hg, Err *e) {
    const Config *c = &tr->m->c;
    TrainOpts *t = tr->t;
    Routers r = {tr->routers, c->n_layers, c->n_heads, c->dim, t->o.attn.window, t->o.attn.tau, ""};
    char v[10][64];
    snprintf(v[0], 64, "%d", t->o.attn.window), snprintf(v[1], 64, "%g", t->o.attn.tau);
    snprintf(v[2], 64, "%g", t->lambda), snprintf(v[3], 64, "%d", t->o.attn.sinks);
    snprintf(v[4], 64, "%s", t->objective), snprintf(v[5], 64, "%.63s", tr->data.desc);
    snprintf(v[6], 64, "%ld", tr->step), snprintf(v[7], 64, "%.4f", hg);
    snprintf(v[8], 64, "%.6f", hl), snprintf(v[9], 64, "%llu", (unsigned long long)t->o.seed);
    const char *keys[] = {"window", "tau", "lambda", "sinks", "objective", "data", "steps", "heldout_global_share",
                          "heldout_task_loss", "seed"};
    const char *vals[10];
    for (int i = 0; i < 10; i++) vals[i] = v[i];
    return router_save(&r, t->out, keys, vals, 10, e);
}

static int train_loop(Trainer *tr, Err *e) {
    TrainOpts *t = tr->t;
    size_t nr = (size_t)tr->m->c.n_layers * tr->m->c.n_heads * tr->m->c.dim;
    double t0 = args_seconds(), loss = 0;
    long warm = t->steps / 10;
    signal(SIGINT, on_int);
    while (tr->step < t->steps && !g_stop && !(t->stop_after && tr->step >= t->stop_after)) {
        fill_batch(tr, tr->step, 0);
        loss = forward(tr);
        train_backward(&tr->s, &tr->m->w, tr->routers, tr->drouters, NULL);
        float lr = lr_warmup_cosine(tr->step, warm, t->steps, (float)t->lr, (float)t->lr / 10);
        adamw_step(&tr->opt, tr->routers, tr->drouters, lr);
        tr->step++;
        progress(tr, loss, t0, tr->step == t->steps);
    }
    (void)nr;
    if (tr->step < t->steps) { /* interrupted: keep where we are */
        char ck[1100];
        snprintf(ck, sizeof ck, "%s.ckpt", t->out);
        if (save_checkpoint(tr, ck, e)) return -1;
        fprintf(stderr, "\nstopped at step %ld: checkpoint %s (continue with --resume %s)\n", tr->step, ck, ck);
        return 1;
    }
    double hl, hg;
    held_out(tr, &hl, &hg);
    if (save_routers(tr, hl, hg, e)) return -1;
    printf("%s: window %d, lambda %g: held-out global share %.2f%%, %s %.5f\n", t->out, t->o.attn.window, t->lambda,
           100 * hg, t->objective, hl);
    return 0;
}

static int run_train(TrainOpts *t, Err *e) {
    Loaded L;
    Trainer tr;
    int rc = -1;
    memset(&tr, 0, sizeof tr);
    if (app_load(&t->o, &L, 1, e)) goto out;
    if (t->seq_len + 1 > L.model.c.seq_len) {
        err_set(e, "train: --seq-len %ld needs %ld positions but the context is %d", t->seq_len, t->seq_len + 1,
                L.model.c.seq_len);
        goto out;
    }
    if (t->o.attn.window > L.model.c.seq_len) { err_set(e, "train: window larger than the context"); goto out; }
    if (trainer_init(&tr, &L.model, t, e)) goto out;
    int len = (int)t->seq_len + 1;
    if (t->data ? eval_data_file(&tr.data, &L.tok, t->data, len, 1 << 20, e)
                : eval_data_self(&tr.data, &L.model, &L.tok, (int)t->self_n, len, t->o.seed * 7919 + 17, e))
        goto out;
    if (tr.data.n < 2) { err_set(e, "train: %s gives %d sequence(s); need at least 2 (one held out)", tr.data.desc, tr.data.n); goto out; }
    tr.n_held = tr.data.n / 8 > 0 ? tr.data.n / 8 : 1;
    tr.n_train = tr.data.n - tr.n_held;
    if (t->resume && load_checkpoint(&tr, t->resume, e)) goto out;
    rc = train_loop(&tr, e);
out:
    trainer_free(&tr);
    app_unload(&L);
    return rc;
}

int cmd_train(int argc, char **argv) {
    static TrainOpts t;
    Err e;
    memset(&t, 0, sizeof t);
    int r = parse(argc, argv, &t, &e);
    if (r == 1) { train_help(); return 0; }
    if (r < 0) return args_fail(&e);
    r = run_train(&t, &e);
    return r < 0 ? args_fail(&e) : r == 1 ? 130 : 0;
}
