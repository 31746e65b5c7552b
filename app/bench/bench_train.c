/* bench_train.c — `bench --train`: a training step's speed, as tokens/s and as a share of the cores' peak.
 *
 * `bench --train`: the speed of a training step, as
 * tokens/s and as a share of what the cores can multiply.
 *
 * A step is what `train` runs per batch: forward, backward and AdamW over
 * B × T random tokens. On random weights (--dims, --shape) it is a
 * --from-scratch step: full attention, cross-entropy, every weight. On a
 * --model it is a --train all step: the full-attention teacher's forward,
 * the routed student's forward and backward (KL), AdamW on every weight
 * and on the routers. One untimed step faults the buffers in; each run
 * then times two steps, and right after them the f32 FMA instruction
 * alone on every thread (bench_peak_gflops), so the rate and its peak see
 * the same machine — it is shared and noisy.
 *
 * Useful FLOP per token, llm.c's count: 6 per weight of the products
 * (forward, and both backward products), and causal attention's
 * 4·head_size per key in the forward (scores, values) and 8 in the backward
 * (dP, dV, dQ, dK) over the (T+1)/2 keys a position sees on average; the
 * teacher adds a forward. Recomputed scores, the local branch of a routed
 * head, norms and softmaxes are work but not counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/bench/bench.h"
#include "engine/clock.h"
#include "engine/train_adamw.h"
#include "engine/train_backward.h"

/* Everything one step touches. */
typedef struct {
    TrainState s;
    Grads p, g;            /* the weights being trained (Grads layout) and their gradients */
    Weights w;
    AdamW opt, opt_r;
    float *routers, *drouters, *target; /* [L][H][dim] ×2, [N][V] (teacher, --model) */
    int *in, *tg;
    TrainConfig tc, teacher;
    const Model *m;
    int distill;           /* --model: the --train all step */
} Step;

static void step_free(Step *st) {
    train_free(&st->s);
    grads_free(&st->p), grads_free(&st->g);
    adamw_free(&st->opt), adamw_free(&st->opt_r);
    free(st->routers), free(st->drouters), free(st->target), free(st->in), free(st->tg);
}

static int step_init(Step *st, const Model *m, const BenchOpts *b, int B, int T, Err *e) {
    const Config *c = &m->c;
    memset(st, 0, sizeof *st);
    st->m = m, st->distill = b->model != NULL;
    size_t nr = (size_t)c->n_layers * c->n_heads * c->dim, N = (size_t)B * T;
    AdamWConfig h = adamw_defaults();
    if (train_init(&st->s, c, B, T, e) || weights_clone(&st->p, &st->w, c, &m->w, e) || grads_init(&st->g, c, e) ||
        adamw_init(&st->opt, st->p.n, &h, e) || adamw_init(&st->opt_r, nr, &h, e))
        return -1;
    st->routers = calloc(nr, sizeof(float)), st->drouters = calloc(nr, sizeof(float));
    st->in = malloc(N * sizeof(int)), st->tg = malloc(N * sizeof(int));
    st->target = st->distill ? malloc(N * c->vocab_size * sizeof(float)) : NULL;
    if (!st->routers || !st->drouters || !st->in || !st->tg || (st->distill && !st->target))
        return err_set(e, "out of memory for a training batch of %dx%d", B, T);
    /* small alternating routers: about half the heads go global, as at the start of train */
    for (size_t i = 0; i < nr; i++) st->routers[i] = (i % 3 ? 0.02f : -0.03f);
    uint64_t seed = 99;
    bench_random_tokens(st->in, (int)N, c->vocab_size, &seed);
    for (size_t i = 0; i < N; i++) st->tg[i] = st->in[(i + 1) % N];
    st->tc = st->distill ? (TrainConfig){b->attn.window, b->attn.sinks, 0.5f, 0.02f, TRAIN_KL}
                         : (TrainConfig){T, 0, -1.0f, 0.0f, TRAIN_CE};
    st->teacher = (TrainConfig){b->attn.window, b->attn.sinks, -1.0f, 0.0f, TRAIN_CE};
    if (st->tc.window >= T) train_keep_exponentials(&st->s); /* as train makes them */
    return 0;
}

static void step_run(Step *st) {
    if (st->distill) {
        train_forward(&st->s, &st->m->w, st->routers, &st->teacher, st->in, st->tg, NULL);
        memcpy(st->target, st->s.probs, (size_t)st->s.N * st->m->c.vocab_size * sizeof(float));
    }
    train_forward(&st->s, &st->w, st->routers, &st->tc, st->in, st->tg, st->target);
    train_backward(&st->s, &st->w, st->routers, st->drouters, &st->g);
    adamw_step(&st->opt, st->p.mem, st->g.mem, 1e-4f);
    if (st->distill) adamw_step(&st->opt_r, st->routers, st->drouters, 1e-2f);
}

/* Useful FLOP per token (the header's count). */
static double flops_per_token(const Config *c, int T, int distill) {
    double L = c->n_layers, d = c->dim, q = c->q_dim, kv = c->kv_dim, hid = c->hidden_dim, V = c->vocab_size;
    double mat = L * (d * (q + 2 * kv) + q * d + 3 * d * hid) + V * d;
    double att = L * c->n_heads * c->head_size * (T + 1) / 2.0;
    double f = 6 * mat + 12 * att;
    return distill ? f + 2 * mat + 4 * att : f;
}

enum { STEPS_PER_RUN = 2 };

int bench_train(const Model *m, const BenchOpts *b, Err *e) {
    const Config *c = &m->c;
    if (c->arch != ARCH_LLAMA2C || c->dtype != DT_F32)
        return err_set(e, "--train: training reads f32 llama2.c weights (not %s %s)", model_arch_type(c->arch),
                       model_dtype_name(c->dtype));
    int B = b->train_batch ? b->train_batch : 4, T = b->train_seq ? b->train_seq : c->seq_len - 1;
    if (T + 1 > c->seq_len)
        return err_usage(e, "--seq-len %d needs %d positions but the context is %d", T, T + 1, c->seq_len);
    Step st;
    if (step_init(&st, m, b, B, T, e)) { step_free(&st); return -1; }
    int R = b->runs;
    double *tok = calloc(R, sizeof(double)), *gf = calloc(R, sizeof(double)), *peak = calloc(R, sizeof(double)),
           *frac = calloc(R, sizeof(double));
    if (!tok || !gf || !peak || !frac) { step_free(&st); free(tok), free(gf), free(peak), free(frac); return err_set(e, "out of memory"); }
    double fpt = flops_per_token(c, T, st.distill);
    step_run(&st); /* faults the buffers in */
    for (int r = 0; r < R; r++) {
        double t0 = clock_now();
        for (int k = 0; k < STEPS_PER_RUN; k++) step_run(&st);
        double dt = clock_now() - t0;
        tok[r] = (double)STEPS_PER_RUN * B * T / dt;
        gf[r] = tok[r] * fpt / 1e9;
        peak[r] = bench_peak_gflops(st.s.pool, GEMM_EXACT);
        frac[r] = gf[r] / peak[r];
    }
    int threads = pool_threads(st.s.pool);
    const char *kind = st.distill ? "train all (teacher + routed student, KL)" : "from scratch (full attention, CE)";
    double mt = bench_median(tok, R), mg = bench_median(gf, R), mp = bench_median(peak, R), mf = bench_median(frac, R);
    if (b->json)
        printf("{\"mode\": \"train\", \"step\": \"%s\", \"batch\": %d, \"seq_len\": %d, \"threads\": %d, \"runs\": %d, "
               "\"params\": %zu, \"flops_per_token\": %.0f, \"tok_s\": %.1f, \"gflops\": %.3f, \"peak_gflops\": %.3f, "
               "\"frac_of_peak\": %.4f}\n",
               st.distill ? "train_all" : "from_scratch", B, T, threads, R, model_n_params(c), fpt, mt, mg, mp, mf);
    else
        printf("train step: %s, batch %d x %d tokens, %zu weights (dim %d, %d layers, %d heads, %d kv heads, vocab %d), "
               "%d threads\n"
               "  tok/s            %10.0f   (median of %d runs of %d steps)\n"
               "  GFLOP/s          %10.2f   (%.3g MFLOP a token)\n"
               "  f32 FMA peak     %10.2f   GFLOP/s, every thread, measured after each run\n"
               "  of peak          %9.1f%%\n",
               kind, B, T, model_n_params(c), c->dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, threads,
               mt, R, STEPS_PER_RUN, mg, fpt / 1e6, mp, 100 * mf);
    step_free(&st);
    free(tok), free(gf), free(peak), free(frac);
    return 0;
}
