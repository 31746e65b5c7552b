/* train_run.c — the runs of `ahascope train` (app/train_run.h).
 *
 * Each step takes a batch of B sequences, computes the loss
 * L = task + λ·mean(r) with the hard gates in the forward pass, gets the
 * router gradients by the straight-through estimator (engine/train_backward.h)
 * and takes an AdamW step on the router vectors (and, with --train all, on
 * a heap copy of every weight). The task is KL from the original model's
 * full-attention distribution (default: AHA should change nothing; the
 * teacher always runs the loaded, untouched weights) or next-token
 * cross-entropy. Batches are a function of (seed, step), so a run resumed
 * from its checkpoint ends where an uninterrupted one does.
 */
#include "app/train_run.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "app/eval_forced.h"
#include "app/train_batches.h"
#include "engine/files.h"
#include "engine/kernels.h"
#include "engine/safetensors.h"
#include "engine/train_adamw.h"
#include "engine/train_backward.h"
#include "engine/train_multi.h"
#include "engine/train_scratch.h"
#include "engine/textout.h"

static volatile sig_atomic_t g_stop; /* Ctrl-C: save a checkpoint and stop */

static void on_int(int sig) { (void)sig, g_stop = 1; }

typedef struct {
    const Model *m;
    TrainOpts *t;
    EvalData data;
    int n_train, n_held, T, B;  /* sequences of T+1 tokens: inputs and next-token targets */
    int n_eval;                 /* sequences evaluate() scores of each set (--eval-seqs, at most n_held) */
    LengthOrder by_len;         /* --by-length: the training items, shortest first */
    int *items;                 /* [B] the items of the batch being filled */
    long long ran;              /* positions the steps of this process ran (B × each step's length) */
    TrainState s;
    TrainConfig tc, teacher;
    float *routers, *drouters, *target; /* [L][H][dim] ×2, [N][vocab] */
    int *in, *tg;                        /* [N] */
    float *tw;                           /* [N] each target's CE weight: --answer-weight on answers, 0 on pads */
    AdamW opt;
    Grads params, grads;  /* --train all: the tuned weights (Grads layout) and their gradients */
    Weights tuned;        /* views into params */
    AdamW opt_w;
    long step, step0;     /* steps done; where this process started */
} Trainer;

/* The weights the student runs: the tuned copy, or the frozen model. */
static const Weights *student(const Trainer *tr) { return tr->t->all ? &tr->tuned : &tr->m->w; }

/* Which sequences a batch holds: the training stream (a hash of seed, step
 * and slot), or held-out / training sequences in order (evaluation). */
enum { BATCH_TRAIN, BATCH_HELD, BATCH_TRAIN_EVAL };

/* The items of batch number `step` of the given kind into tr->items. */
static void pick_items(Trainer *tr, long step, int kind) {
    if (kind == BATCH_TRAIN && tr->t->by_length) {
        length_order_pick(&tr->by_len, tr->t->o.seed, step, tr->B, tr->items);
        return;
    }
    for (int b = 0; b < tr->B; b++) {
        uint64_t h = (tr->t->o.seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(step * 131 + b) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        long slot = (step * tr->B + b) % tr->n_eval; /* held out: n_eval spread over the set; training: the first */
        tr->items[b] = kind == BATCH_HELD ? tr->n_train + (int)(slot * tr->n_held / tr->n_eval)
                     : kind == BATCH_TRAIN_EVAL ? (int)(slot % tr->n_train)
                     : (int)(h % (uint64_t)tr->n_train);
    }
}

/* Batch number `step` of the given kind into tr->in, tr->tg, tr->tw, packed
 * at the length the step runs: --seq-len, or with --by-length its longest
 * item's (a shorter one's padding weighs nothing, so cutting it changes no
 * loss and no gradient). */
static void fill_batch(Trainer *tr, long step, int kind) {
    pick_items(tr, step, kind);
    int T = tr->T;
    if (tr->t->by_length) {
        int longest = 2;
        for (int b = 0; b < tr->B; b++)
            if (tr->data.len[tr->items[b]] > longest) longest = tr->data.len[tr->items[b]];
        T = longest - 1 < tr->T ? longest - 1 : tr->T; /* an item of len ids has len-1 targets */
    }
    train_set_length(&tr->s, T);
    for (int b = 0; b < tr->B; b++) {
        int k = tr->items[b];
        const int *seq = tr->data.seq[k];
        int len = tr->data.len[k];
        const int *from = tr->data.answer_from;
        for (int i = 0; i < T; i++) {
            tr->in[b * T + i] = i < len ? seq[i] : seq[len - 1];
            tr->tg[b * T + i] = i + 1 < len ? seq[i + 1] : seq[len - 1];
            /* a pad predicts nothing; an item's answer counts --answer-weight times */
            tr->tw[b * T + i] = i + 1 >= len ? 0.0f : from && i + 1 >= from[k] ? (float)tr->t->answer_weight : 1.0f;
        }
    }
}

/* Forward (for KL, first the teacher: the loaded model's own weights under
 * full attention, never the tuned copy); returns the loss. */
static double forward(Trainer *tr) {
    if (tr->tc.objective == TRAIN_KL) {
        train_forward(&tr->s, &tr->m->w, tr->routers, &tr->teacher, tr->in, tr->tg, NULL);
        memcpy(tr->target, tr->s.probs, (size_t)tr->s.N * tr->m->c.vocab_size * sizeof(float));
    }
    return train_forward(&tr->s, student(tr), tr->routers, &tr->tc, tr->in, tr->tg,
                         tr->tc.objective == TRAIN_KL ? tr->target : NULL);
}

/* --train all: the heap copy of the weights, their gradients and moments. */
static int init_weights(Trainer *tr, Err *e) {
    const Config *c = &tr->m->c;
    AdamWConfig h = adamw_defaults();
    h.weight_decay = (float)tr->t->weight_decay;
    if (weights_clone(&tr->params, &tr->tuned, c, &tr->m->w, e) || grads_init(&tr->grads, c, e)) return -1;
    return adamw_init(&tr->opt_w, tr->params.n, &h, e);
}

/* Router floats: a vector a head, or K + 1 for a multi-choice router. */
static size_t router_floats(const Config *c, const TrainOpts *t) {
    return (size_t)c->n_layers * c->n_heads * c->dim * (t->n_windows ? t->n_windows + 1 : 1);
}

static int trainer_init(Trainer *tr, const Model *m, TrainOpts *t, Err *e) {
    const Config *c = &m->c;
    memset(tr, 0, sizeof *tr);
    tr->m = m, tr->t = t, tr->T = (int)t->seq_len, tr->B = (int)t->batch;
    tr->tc = (TrainConfig){t->o.attn.window, t->o.attn.sinks, t->o.attn.tau, (float)t->lambda,
                           !strcmp(t->objective, "kl") ? TRAIN_KL : TRAIN_CE};
    if (t->scratch) /* full attention: every head global, the window the whole sequence */
        tr->tc = (TrainConfig){tr->T, 0, -1.0f, 0.0f, TRAIN_CE};
    tr->teacher = tr->tc, tr->teacher.tau = -1, tr->teacher.lambda = 0, tr->teacher.objective = TRAIN_CE;
    size_t nr = router_floats(c, t), N = (size_t)tr->B * tr->T;
    tr->routers = calloc(nr, sizeof(float));
    tr->drouters = calloc(nr, sizeof(float));
    tr->target = malloc(N * c->vocab_size * sizeof(float));
    tr->in = malloc(N * sizeof(int));
    tr->tg = malloc(N * sizeof(int));
    tr->tw = malloc(N * sizeof(float));
    tr->items = malloc((size_t)tr->B * sizeof(int));
    if (!tr->routers || !tr->drouters || !tr->target || !tr->in || !tr->tg || !tr->tw || !tr->items)
        return err_set(e, "out of memory");
    if (train_init(&tr->s, c, tr->B, tr->T, e)) return -1;
    if (t->n_windows && train_multi_init(&tr->s, t->windows, t->n_windows, e)) return -1;
    if (tr->tc.window >= tr->T) train_keep_exponentials(&tr->s);
    tr->s.target_w = tr->tw; /* the weights fill_batch writes (KL's only with --answer-weight) */
    tr->s.kl_weighted = tr->tc.objective == TRAIN_KL && t->have_answer_weight;
    AdamWConfig h = adamw_defaults();
    if (adamw_init(&tr->opt, nr, &h, e)) return -1;
    if (t->all && init_weights(tr, e)) return -1;
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
    adamw_free(&tr->opt_w);
    grads_free(&tr->params);
    grads_free(&tr->grads);
    free(tr->routers), free(tr->drouters), free(tr->target), free(tr->in), free(tr->tg), free(tr->tw), free(tr->items);
    length_order_free(&tr->by_len);
    eval_data_free(&tr->data);
}

/* Checkpoint: routers, AdamW moments (and with --train all the tuned
 * weights and theirs) as F32 tensors; step, seed and mode as metadata. */
static int save_checkpoint(const Trainer *tr, const char *path, Err *e) {
    const Config *c = &tr->m->c;
    int64_t shape[1] = {(int64_t)router_floats(c, tr->t)}, wshape[1] = {(int64_t)tr->params.n};
    char step[32], seed[32];
    StWriter w;
    st_writer_init(&w);
    snprintf(step, sizeof step, "%ld", tr->step);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)tr->t->o.seed);
    int rc = st_writer_add(&w, "routers", ST_F32, 1, shape, tr->routers, e);
    if (rc == 0) rc = st_writer_add(&w, "adam.m", ST_F32, 1, shape, tr->opt.m, e);
    if (rc == 0) rc = st_writer_add(&w, "adam.v", ST_F32, 1, shape, tr->opt.v, e);
    if (rc == 0 && tr->t->all) rc = st_writer_add(&w, "weights", ST_F32, 1, wshape, tr->params.mem, e);
    if (rc == 0 && tr->t->all) rc = st_writer_add(&w, "weights.adam.m", ST_F32, 1, wshape, tr->opt_w.m, e);
    if (rc == 0 && tr->t->all) rc = st_writer_add(&w, "weights.adam.v", ST_F32, 1, wshape, tr->opt_w.v, e);
    if (rc == 0) rc = st_writer_meta(&w, "step", step, e);
    if (rc == 0) rc = st_writer_meta(&w, "seed", seed, e);
    if (rc == 0) rc = st_writer_meta(&w, "train", tr->t->train, e);
    if (rc == 0) rc = st_write(&w, path, e);
    st_writer_free(&w);
    return rc;
}

/* Copy n floats of tensor name from f into dst (shape [n], F32). */
static int load_tensor(const StFile *f, const char *name, float *dst, size_t n, Err *e) {
    int64_t shape[1] = {(int64_t)n};
    const StTensor *t = st_expect(f, name, ST_F32, 1, shape, e);
    if (!t) return -1;
    memcpy(dst, t->data, t->nbytes);
    size_t bad = k_first_nonfinite(dst, n);
    return bad < n ? err_set(e, "%s: tensor '%s' holds %g at element %zu", f->path, name, dst[bad], bad) : 0;
}

static int load_checkpoint(Trainer *tr, const char *path, Err *e) {
    const Config *c = &tr->m->c;
    size_t nr = router_floats(c, tr->t), nw = tr->params.n;
    StFile f;
    if (st_open(&f, path, e)) return -1;
    const char *step = st_meta(&f, "step"), *mode = st_meta(&f, "train");
    if (!mode) mode = "routers"; /* checkpoints from before --train all */
    long k = 0;
    int rc = load_tensor(&f, "routers", tr->routers, nr, e) || load_tensor(&f, "adam.m", tr->opt.m, nr, e) ||
             load_tensor(&f, "adam.v", tr->opt.v, nr, e) ? -1 : 0;
    if (rc == 0 && !step) rc = err_set(e, "%s: not a train checkpoint (no step)", path);
    if (rc == 0) rc = args_int("step", step, 0, 1L << 40, &k, e);
    if (rc == 0 && strcmp(mode, tr->t->train))
        rc = err_set(e, "%s: checkpoint of --train %s; resume it with --train %s", path, mode, mode);
    if (rc == 0 && tr->t->all)
        rc = load_tensor(&f, "weights", tr->params.mem, nw, e) || load_tensor(&f, "weights.adam.m", tr->opt_w.m, nw, e) ||
             load_tensor(&f, "weights.adam.v", tr->opt_w.v, nw, e) ? -1 : 0;
    if (rc == 0) tr->step = tr->step0 = tr->opt.step = tr->opt_w.step = k;
    st_close(&f);
    return rc;
}

/* Task loss and global share, forward only, over n_eval held-out
 * sequences spread over the set (kind BATCH_HELD: all of them unless there
 * are more than --eval-seqs) or the first as many training sequences
 * (BATCH_TRAIN_EVAL). */
static void evaluate(Trainer *tr, int kind, double *loss, double *share) {
    int batches = (tr->n_eval + tr->B - 1) / tr->B;
    double l = 0, g = 0;
    for (int i = 0; i < batches; i++) {
        fill_batch(tr, i, kind);
        forward(tr);
        l += tr->s.task_loss, g += tr->s.global_share;
    }
    *loss = l / batches, *share = g / batches;
}

/* The bar on stderr: redrawn in place on a terminal, every 10% otherwise.
 * tok/s counts the positions the steps of this process ran (B × --seq-len
 * a step; with --by-length B × the step's own length). */
static void progress(const Trainer *tr, double loss, double t0, int last) {
    int tty = isatty(STDERR_FILENO);
    long total = tr->t->steps, done = tr->step, ran = tr->step - tr->step0;
    if (!tty && !last && done % (total / 10 > 0 ? total / 10 : 1)) return;
    double dt = clock_now() - t0, tok_s = dt > 0 ? (double)tr->ran / dt : 0;
    int bar = (int)(20.0 * done / total);
    fprintf(stderr, "%s[%.*s%.*s] step %ld/%ld loss %.5f task %.5f global %5.1f%% %6.0f tok/s ETA %4.0f s%s",
            tty ? "\r" : "", bar, "####################", 20 - bar, "                    ", done, total, loss,
            tr->s.task_loss, 100 * tr->s.global_share, tok_s, ran ? dt / ran * (total - done) : 0,
            tty && !last ? "" : "\n");
}

/* The router file: vectors plus the settings and results as metadata. */
static int save_routers(Trainer *tr, double hl, double hg, double tl, Err *e) {
    const Config *c = &tr->m->c;
    TrainOpts *t = tr->t;
    Routers r = {.w = tr->routers, .n_layers = c->n_layers, .n_heads = c->n_heads, .dim = c->dim,
                 .window = t->o.attn.window, .tau = t->o.attn.tau, .n_windows = t->n_windows};
    memcpy(r.windows, t->windows, sizeof r.windows); /* router_save writes them as metadata windows */
    enum { N_META = 13 };
    char v[N_META][64];
    snprintf(v[0], 64, "%d", t->o.attn.window), snprintf(v[1], 64, "%g", t->o.attn.tau);
    snprintf(v[2], 64, "%g", t->lambda), snprintf(v[3], 64, "%d", t->o.attn.sinks);
    snprintf(v[5], 64, "%.63s", tr->data.desc);
    if (t->have_answer_weight) snprintf(v[4], 64, "%s answer_weight=%.9g", t->objective, t->answer_weight);
    else snprintf(v[4], 64, "%s", t->objective);
    snprintf(v[6], 64, "%ld", tr->step), snprintf(v[7], 64, "%.4f", hg);
    snprintf(v[8], 64, "%.6f", hl), snprintf(v[9], 64, "%llu", (unsigned long long)t->o.seed);
    snprintf(v[10], 64, "%.6f", tl), snprintf(v[11], 64, "%s", t->train);
    snprintf(v[12], 64, "%.63s", t->all ? t->out_model : "");
    /* with --train all the routers belong to the tuned model, named by "model" */
    const char *keys[N_META] = {"window", "tau", "lambda", "sinks", "objective", "data", "steps",
                                "heldout_global_share", "heldout_task_loss", "seed", "train_task_loss", "train",
                                "model"};
    const char *vals[N_META];
    for (int i = 0; i < N_META; i++) vals[i] = v[i];
    return router_save(&r, t->out, keys, vals, t->all ? N_META : N_META - 1, e);
}

/* --train all: the tuned weights as a llama2.c checkpoint, in the input's version. */
static int save_model(const Trainer *tr, Err *e) {
    Model tuned = *tr->m;
    tuned.w = tr->tuned, tuned.file = (MemView){0}, tuned.owned = NULL;
    return model_save(&tuned, tr->t->out_model, tr->m->version == 1 ? 1 : 0, e);
}

/* Stop on a NaN or Inf in the loss or a gradient, before the step writes
 * it into the routers: what follows would be NaN routers saved as if
 * trained, every score "not computed". */
static int check_finite(const Trainer *tr, double loss, Err *e) {
    const char *what = !isfinite(loss) || !isfinite(tr->s.task_loss) ? "the loss"
                     : k_first_nonfinite(tr->drouters, tr->opt.n) < tr->opt.n ? "a router gradient"
                     : tr->t->all && k_first_nonfinite(tr->grads.mem, tr->grads.n) < tr->grads.n ? "a weight gradient"
                     : NULL;
    if (!what) return 0;
    return err_set(e, "step %ld: %s is not finite (loss %g): the model's activations overflow or --lr%s is too "
                      "high; nothing written", tr->step + 1, what, loss, tr->t->all ? " or --lr-model" : "");
}

/* One optimiser step on the batch of tr->step; its loss into *loss. */
static int train_step(Trainer *tr, double *loss_out, Err *e) {
    TrainOpts *t = tr->t;
    long warm = t->steps / 10;
    fill_batch(tr, tr->step, BATCH_TRAIN);
    tr->ran += (long long)tr->s.N;
    double loss = *loss_out = forward(tr);
    train_backward(&tr->s, student(tr), tr->routers, tr->drouters, t->all ? &tr->grads : NULL);
    if (check_finite(tr, loss, e)) return -1;
    float lr = lr_warmup_cosine(tr->step, warm, t->steps, (float)t->lr, (float)t->lr / 10);
    if (!t->scratch) adamw_step(&tr->opt, tr->routers, tr->drouters, lr); /* from scratch: no routers */
    if (t->all) {
        double lm = t->scratch ? t->lr : t->lr_model;
        float lw = lr_warmup_cosine(tr->step, warm, t->steps, (float)lm, (float)lm / 10);
        adamw_step(&tr->opt_w, tr->params.mem, tr->grads.mem, lw);
    }
    tr->step++;
    return 0;
}

/* OpenBLAS falls back to its SSE3 ("Prescott") kernels on x86 CPUs it does
 * not recognise (some virtual machines), which halves training speed: say
 * how to pick the right ones. */
static void blas_note(void) {
#if defined(OPENBLAS_VERSION) && defined(__x86_64__) && defined(__GNUC__)
    const char *core = openblas_get_corename();
    if (core && !strcmp(core, "Prescott") && __builtin_cpu_supports("avx2"))
        fprintf(stderr, "train: note: OpenBLAS did not recognise this CPU and runs its SSE3 kernels; "
                        "OPENBLAS_CORETYPE=%s in the environment makes its matrix products about 4x faster\n",
                __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell");
#endif
}

/* Steps a --curve row averages. */
#define CURVE_EVERY 50

/* --curve: open FILE to append to (a resumed run continues it), with the
 * header when it is new. NULL and an error when it cannot be written. */
static FILE *curve_open(const char *path, Err *e) {
    FILE *f = fopen(path, "a");
    if (!f) return err_set(e, "%s: cannot write the training curve: %s", path, strerror(errno)), NULL;
    if (ftell(f) == 0) fprintf(f, "step\tseq_len\tbatch\tloss\n");
    return f;
}

static int train_loop(Trainer *tr, Err *e) {
    TrainOpts *t = tr->t;
    double t0 = clock_now(), loss = 0, sum = 0;
    int summed = 0;
    FILE *curve = t->curve ? curve_open(t->curve, e) : NULL;
    if (t->curve && !curve) return -1;
    signal(SIGINT, on_int);
    train_flush_subnormals(); /* after the data is sampled, which stays as eval makes it */
    blas_note();
    while (tr->step < t->steps && !g_stop && !(t->stop_after && tr->step >= t->stop_after)) {
        if (train_step(tr, &loss, e)) {
            if (isatty(STDERR_FILENO)) fputc('\n', stderr); /* end the bar's line before the error's */
            if (curve) fclose(curve);
            return -1;
        }
        progress(tr, loss, t0, tr->step == t->steps);
        sum += loss, summed++;
        if (curve && (tr->step % CURVE_EVERY == 0 || tr->step == t->steps)) {
            fprintf(curve, "%ld\t%d\t%d\t%.5f\n", tr->step, tr->T, tr->B, sum / summed);
            fflush(curve);
            sum = 0, summed = 0;
        }
    }
    if (curve && fclose(curve)) return err_set(e, "%s: the training curve could not be written", t->curve);
    if (tr->step < t->steps) { /* interrupted: keep where we are */
        char ck[1100];
        snprintf(ck, sizeof ck, "%s.ckpt", t->out);
        if (save_checkpoint(tr, ck, e)) return -1;
        /* from scratch the weights so far are a model of their own: one can try it while it trains on */
        if (t->scratch && save_model(tr, e)) return -1;
        char safe[4 * sizeof ck], safe_out[4 * 1024 + 1];
        textout_term(ck, safe, sizeof safe);
        fprintf(stderr, "\nstopped at step %ld: checkpoint %s (continue with --resume %s)%s%s\n", tr->step, safe, safe,
                t->scratch ? "; the model so far: " : "", t->scratch ? textout_term(t->out, safe_out, sizeof safe_out) : "");
        return 1;
    }
    double hl, hg, tl, tg;
    evaluate(tr, BATCH_HELD, &hl, &hg);
    evaluate(tr, BATCH_TRAIN_EVAL, &tl, &tg);
    if (!isfinite(hl) || !isfinite(tl) || k_first_nonfinite(tr->routers, tr->opt.n) < tr->opt.n)
        return err_set(e, "the trained routers give a non-finite loss (held-out %g, training %g); nothing written", hl, tl);
    char safe[4 * 1024 + 1]; /* the paths as typed: escaped for the terminal */
    if (t->scratch) {
        if (save_model(tr, e)) return -1;
        printf("%s: trained from scratch, %ld steps: held-out ce %.5f (perplexity %.3f), training ce %.5f\n",
               textout_term(t->out, safe, sizeof safe), tr->step, hl, exp(hl), tl);
        return 0;
    }
    if (t->all && save_model(tr, e)) return -1;
    if (save_routers(tr, hl, hg, tl, e)) return -1;
    char win[96];
    snprintf(win, sizeof win, "window %d", t->o.attn.window);
    for (int k = 0, o = 0; k < t->n_windows; k++) /* a multi-choice router: its windows */
        o += snprintf(win + o, sizeof win - o, "%s%d", k ? "," : "windows ", t->windows[k]);
    printf("%s: %s, lambda %g: held-out global share %.2f%%, %s %.5f\n", textout_term(t->out, safe, sizeof safe), win,
           t->lambda, 100 * hg, t->objective, hl);
    if (t->all) printf("%s: the fine-tuned model (use these routers with it)\n", textout_term(t->out_model, safe, sizeof safe));
    return 0;
}

/* The trainer's sequences (--data, else n_self sampled from the model), a
 * held-out eighth, --by-length's order, and with --resume where it stopped.
 * The sequences are made before trainer_init's buffers, which are sized
 * for the whole context (GBs at a long one): data too short for one
 * sequence is refused first. */
static int trainer_start(Trainer *tr, const Model *m, const Tokenizer *tok, TrainOpts *t, int n_self, Err *e) {
    EvalData d;
    int n_held;
    memset(tr, 0, sizeof *tr);
    if (train_data_make(&d, &n_held, m, tok, t->data, n_self, (int)t->seq_len + 1, t->o.seed, e)) return -1;
    if (trainer_init(tr, m, t, e)) {
        eval_data_free(&d);
        return -1;
    }
    tr->data = d, tr->n_held = n_held;
    tr->n_train = tr->data.n - tr->n_held;
    if (t->have_answer_weight && !tr->data.answer_from)
        return err_usage(e, "--answer-weight weighs task items' answers: --data must be a task file (`ahascope tasks`)");
    tr->n_eval = tr->n_held < t->eval_seqs ? tr->n_held : (int)t->eval_seqs;
    if (t->by_length && length_order_init(&tr->by_len, tr->data.len, tr->n_train, tr->B, t->o.seed, e)) return -1;
    return t->resume ? load_checkpoint(tr, t->resume, e) : 0;
}

/* Refuse an --out-model that is the input checkpoint itself. */
static int check_out_model(const TrainOpts *t, const Model *m, Err *e) {
    struct stat a, b;
    if (!t->all || stat(t->out_model, &a) != 0 || stat(m->path, &b) != 0) return 0;
    if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return err_set(e, "--out-model %s would overwrite the input model", t->out_model);
    return 0;
}

int train_model_trainable(Model *m, const char *path, Err *e) {
    /* the backward pass reads the f32 llama2.c layout: an F32 GGUF llama is rebuilt in it */
    if (m->version == MODEL_VERSION_GGUF && model_to_llama2c(m, e)) return -1;
    if (m->c.arch != ARCH_LLAMA2C)
        return err_set(e, "%s: training needs a llama2.c checkpoint or an F32 GGUF llama; Hugging Face folders are not "
                          "trainable yet", path);
    if (weights_check_finite(&m->w, &m->c, e)) return err_prefix(e, path); /* else every step is NaN */
    return 0;
}

int train_run_routers(TrainOpts *t, Err *e) {
    AppLoaded L;
    Trainer tr;
    int rc = -1;
    memset(&tr, 0, sizeof tr);
    if (app_load(&t->o, &L, 1, e) || train_model_trainable(&L.model, L.model_path, e)) goto out;
    if (t->seq_len + 1 > L.model.c.seq_len) {
        err_set(e, "--seq-len %ld needs %ld positions but the context is %d", t->seq_len, t->seq_len + 1,
                L.model.c.seq_len);
        goto out;
    }
    if (t->o.attn.window > L.model.c.seq_len) { err_set(e, "window larger than the context"); goto out; }
    if (check_out_model(t, &L.model, e) || trainer_start(&tr, &L.model, &L.tok, t, (int)t->self_n, e)) goto out;
    rc = train_loop(&tr, e);
out:
    trainer_free(&tr);
    app_unload(&L);
    return rc;
}

/* The words of --vocab-file, one a line (a trailing CR dropped, blank
 * lines skipped), pointing into *text; NULL-terminated. */
static const char **read_words(const char *path, char **text, int *n, Err *e) {
    size_t size = 0;
    if (!(*text = file_read_all(path, "vocabulary file", "a text file", 1 << 20, &size, e))) return NULL;
    const char **w = calloc(size / 2 + 2, sizeof *w);
    if (!w) { err_set(e, "out of memory"); return NULL; }
    *n = 0;
    for (char *p = *text, *end = *text + size; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p)), *stop = nl ? nl : end;
        if (stop > p && stop[-1] == '\r') stop[-1] = 0;
        *stop = 0;
        if (*p) w[(*n)++] = p;
        p = stop + 1;
    }
    if (*n == 0) { free(w); err_set(e, "%s: no words (one a line)", path); return NULL; }
    return w;
}

/* The tokenizer of a model trained from scratch: --tokenizer, or one
 * generated from --vocab-file (or the default words) written beside --out
 * as tok<V>.bin, where run looks. The vocabulary size goes to *vocab. */
static int scratch_tokenizer(TrainOpts *t, int want_vocab, Tokenizer *tok, char *path, size_t cap, int *vocab, Err *e) {
    if (t->o.tokenizer) {
        snprintf(path, cap, "%s", t->o.tokenizer);
    } else {
        char *text = NULL;
        int n = 0;
        const char **words = t->vocab_file ? read_words(t->vocab_file, &text, &n, e) : NULL;
        if (t->vocab_file && !words) { free(text); return -1; }
        const char *const *list = words ? words : train_vocab_default_words;
        if (!words) while (list[n]) n++;
        int size = want_vocab > 0 ? want_vocab : (train_vocab_count(list, n) + 63) / 64 * 64;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", t->out);
        char *slash = strrchr(dir, '/');
        snprintf(path, cap, "%s/tok%d.bin", slash ? (*slash = 0, dir) : ".", size);
        int rc = train_vocab_write(path, list, n, size, NULL, e);
        free(words), free(text);
        /* a word's error ("word 3 is too long") names the file it came from; the output's names itself */
        if (rc) return t->vocab_file && strncmp(e->msg, path, strlen(path)) ? err_prefix(e, t->vocab_file) : -1;
    }
    if (tok_load(tok, path, 0, e)) return -1;
    *vocab = tok->vocab_size;
    return 0;
}

/* --dims with a vocab of 0 taking the tokenizer's size, checked as bench
 * checks it. */
static int scratch_config(const TrainOpts *t, Config *c, int *want_vocab, int vocab, Err *e) {
    int v[7];
    char extra, dims[256];
    if (sscanf(t->dims, "%d,%d,%d,%d,%d,%d,%d%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &extra) != 7)
        return err_usage(e, "--dims: expected 7 comma-separated integers dim,hidden,layers,heads,kv_heads,vocab,seq_len");
    if (want_vocab) { *want_vocab = v[5]; return 0; }
    if (v[5] != 0 && v[5] != vocab)
        return err_usage(e, "--dims: vocab %d, but the tokenizer has %d pieces (0 takes its size)", v[5], vocab);
    snprintf(dims, sizeof dims, "%d,%d,%d,%d,%d,%d,%d", v[0], v[1], v[2], v[3], v[4], vocab, v[6]);
    BenchOpts b = {.dims = dims};
    return bench_shape_config(&b, c, e);
}

/* --init: the weights a model of exactly --dims's shape already has (a
 * second cycle of training: fresh AdamW moments, its own schedule). */
static int init_model(const TrainOpts *t, Model *m, const Config *c, Err *e) {
    if (model_load(m, t->init, e)) return -1;
    const Config *k = &m->c;
    if (k->dim != c->dim || k->hidden_dim != c->hidden_dim || k->n_layers != c->n_layers || k->n_heads != c->n_heads ||
        k->n_kv_heads != c->n_kv_heads || k->vocab_size != c->vocab_size || k->seq_len != c->seq_len)
        return err_set(e, "%s: --init has dims %d,%d,%d,%d,%d,%d,%d, not the %d,%d,%d,%d,%d,%d,%d of --dims", t->init,
                       k->dim, k->hidden_dim, k->n_layers, k->n_heads, k->n_kv_heads, k->vocab_size, k->seq_len, c->dim,
                       c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len);
    return 0;
}

/* --from-scratch: a random model of --dims and its tokenizer, then the
 * same loop as --train all with full attention and cross-entropy. */
int train_run_scratch(TrainOpts *t, Err *e) {
    Model m;
    Tokenizer tok;
    Trainer tr;
    Config c;
    char tok_path[1100];
    int want = 0, vocab = 0, rc = -1;
    memset(&m, 0, sizeof m), memset(&tok, 0, sizeof tok), memset(&tr, 0, sizeof tr);
    if (scratch_config(t, &c, &want, 0, e) || scratch_tokenizer(t, want, &tok, tok_path, sizeof tok_path, &vocab, e) ||
        scratch_config(t, &c, NULL, vocab, e))
        goto out;
    if (!t->have_seq_len) t->seq_len = c.seq_len - 1;
    if (t->seq_len + 1 > c.seq_len) {
        err_usage(e, "--seq-len %ld needs %ld positions but --dims gives a context of %d", t->seq_len, t->seq_len + 1,
                  c.seq_len);
        goto out;
    }
    if (t->init ? init_model(t, &m, &c, e) : train_model_init(&m, &c, t->o.seed * 0x9E3779B97F4A7C15ull + 3, e))
        goto out;
    if (t->steps == 0) { /* the untrained model and its tokenizer: what a task file is written with */
        char safe[4 * 1024 + 1], safe_tok[4 * sizeof tok_path];
        if (model_save(&m, t->out, 0, e)) goto out;
        printf("%s: the untrained model (0 steps), tokenizer %s\n", textout_term(t->out, safe, sizeof safe),
               textout_term(tok_path, safe_tok, sizeof safe_tok));
        rc = 0;
        goto out;
    }
    if (trainer_start(&tr, &m, &tok, t, 0, e)) goto out;
    char safe[4 * sizeof tok_path];
    fprintf(stderr, "train: from scratch: %zu weights (dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab %d, "
                    "context %d), tokenizer %s, %d training and %d held-out sequences of %ld tokens\n",
            model_n_params(&c), c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len,
            textout_term(tok_path, safe, sizeof safe), tr.n_train, tr.n_held, t->seq_len + 1);
    rc = train_loop(&tr, e);
out:
    trainer_free(&tr);
    tok_free(&tok);
    model_free(&m);
    return rc;
}

