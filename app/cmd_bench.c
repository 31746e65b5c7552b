/* `ahascope bench`: speed figures measured in one run, as medians.
 *
 * Throughput mode: prefill and decode tok/s of a model (a file, or random
 * weights of a named shape), the weight bytes a decode step streams, the
 * machine's read bandwidth measured by the project's own streaming kernel,
 * and roofline_frac = decode tok/s × bytes per step ÷ bandwidth (per run,
 * against the faster of the passes around its decode; then the median).
 * Context mode (--context N): the time of one decode step at position N for
 * a policy, with the KV cache pre-filled with random keys and values.
 * Both modes also give the byte split of a decode step (engine/cost.h):
 * weights, and the KV cache with every head local and every head global;
 * --bytes-only gives that split alone, computed, nothing built or timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/args.h"
#include "app/bench.h"
#include "app/commands.h"
#include "app/setup.h"
#include "engine/cost.h"
#include "engine/forward.h"
#include "engine/matvec.h"
#include "engine/mem.h"
#include "engine/routers.h"
#include "views/screen.h"


static void bench_help(void) {
    puts("usage: ahascope bench [--model PATH | --shape 260K|15M|110M | --dims d,hidden,layers,heads,kv_heads,vocab,seq_len]\n"
         "                      [--prompt-len N] [--decode N] [--runs R] [--json] [--save FILE] [--threads N]\n"
         "                      [--dtype bf16|f16] [--kv-dtype f32|bf16|f16]\n"
         "                      [--context N --window W --policy P [--p P] [--sinks S] [--routers FILE] [--profile]\n"
         "                      [--compare-full]] [--record [--db FILE]] [--tui]\n"
         "                      [--bytes-only [--context N] [--window W] [--sinks S]]\n"
         "\n"
         "Throughput (default): medians over R runs of prefill tok/s (a prompt of N tokens, default 512)\n"
         "and decode tok/s (default 64 tokens), the weight bytes streamed per decode step, the read\n"
         "bandwidth measured by a streaming kernel in the same run, and roofline_frac (each run's decode\n"
         "against the faster of the bandwidth passes just before and after it; the median over runs).\n"
         "--shape/--dims build random weights in memory; --save also writes them as a llama2.c v0 file.\n"
         "Context mode (--context N): median time of one decode step at position N (KV cache filled with\n"
         "random keys/values) under a policy: step_ms, keys_read_frac, and with --compare-full the\n"
         "speedup over the full-attention step measured in the same run.\n"
         "--record [--db FILE]: decision rows/s the store writes into a file database (one transaction\n"
         "per step, and batched), and the cost of recording a --profile run over the same run unrecorded\n"
         "(--prompt-len, default 32 here, then --decode tokens, default 224; medians of --runs pairs).\n"
         "--tui: median time of a full TUI frame (200x60, 16x16 heads, 200 tokens) rendered off-screen;\n"
         "  --tui-heads LxH and --tui-size COLSxROWS change the shape and the screen (and imply --tui).\n"
         "--dtype bf16|f16 with --shape/--dims: the same random model timed in f32 and in bf16/f16, decode\n"
         "steps interleaved one for one: median tok/s of each, the median of the paired steps' ratios and\n"
         "the ratio of the medians (roofline counted in the stored bytes: weights, and the KV cache in its\n"
         "own type). With --model, the resident memory the model adds (resident_mb) against its file size.\n"
         "--kv-dtype f32|bf16|f16: the KV cache's type (default each model's own: f32 for f32 weights,\n"
         "bf16/f16 for half-precision ones).\n"
         "Both modes also print the bytes a decode step reads: the weights, and the KV cache with every\n"
         "head local (the first S sinks + the last W keys, per layer and KV head) and every head global\n"
         "(all N+1 keys), each bound's share of the step, and max_saving = 1 - (weights + all-local KV) /\n"
         "(weights + all-global KV), the most routing can save; context mode adds kv_bytes_read, what the\n"
         "timed step's gates read (a KV head reads all keys if any query head of its group is global).\n"
         "Throughput mode reports them at the middle decode step (position prompt-len + (decode+1)/2 - 1).\n"
         "--bytes-only: that split alone, computed without building or timing anything (any --context N,\n"
         "default as throughput mode; --dtype and --kv-dtype set the stored types of --shape/--dims).\n"
         "Defaults: --window 32 (a faolmo model's own 128), --sinks 0.\n"
         "--json prints one JSON object. Defaults: --shape 110M, --runs 5, --threads all cores.");
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int shape_config(const BenchOpts *b, Config *c, Err *e) {
    memset(c, 0, sizeof *c);
    int v[7];
    if (b->dims) {
        char extra;
        if (sscanf(b->dims, "%d,%d,%d,%d,%d,%d,%d%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &extra) != 7)
            return err_usage(e, "--dims: expected 7 comma-separated integers dim,hidden,layers,heads,kv_heads,vocab,seq_len");
    } else if (!strcmp(b->shape, "260K")) {
        int s[7] = {64, 172, 5, 8, 4, 512, 512}; memcpy(v, s, sizeof s);
    } else if (!strcmp(b->shape, "15M")) {
        int s[7] = {288, 768, 6, 6, 6, 32000, 256}; memcpy(v, s, sizeof s);
    } else if (!strcmp(b->shape, "110M")) {
        int s[7] = {768, 2048, 12, 12, 12, 32000, 1024}; memcpy(v, s, sizeof s);
    } else {
        return err_usage(e, "--shape: unknown shape '%s' (260K, 15M, 110M)", b->shape);
    }
    *c = (Config){.dim = v[0], .hidden_dim = v[1], .n_layers = v[2], .n_heads = v[3], .n_kv_heads = v[4],
                  .vocab_size = v[5], .seq_len = v[6], .shared_classifier = 1, .rope_theta = 10000.0f};
    return model_config_check(c, "--dims", e) ? err_as_usage(e) : 0; /* the flag gave a shape no model has */
}

static void stream_task(void *ctx, int task, int n_tasks) {
    BenchStream *s = ctx;
    size_t lo = s->n * task / n_tasks, hi = s->n * (task + 1) / n_tasks;
    s->sums[task] = mv_stream_sum(s->buf + lo, hi - lo);
}

int bench_stream_init(BenchStream *s) {
    s->n = (size_t)256 << 20 >> 2;
    s->buf = mem_big_alloc(s->n * sizeof(float)); /* the pages the weights it is set against get */
    if (!s->buf) return -1;
    for (size_t i = 0; i < s->n; i++) s->buf[i] = (float)(i & 7);
    return 0;
}

void bench_step_bytes(const Config *c, int plen, int dec, Throughput *t) {
    t->weight_bytes = model_decode_bytes(c);
    t->kv_bytes = model_kv_bytes(c, (size_t)(plen + (dec + 1) / 2)); /* full attention, averaged over the decode */
}

double bench_roofline(const Throughput *t, double tok_s, const double *bw) {
    return tok_s * (double)(t->weight_bytes + t->kv_bytes) / (fmax(bw[1], bw[2]) * 1e9);
}

void bench_set_roofline(Throughput *t, double *rf, int R) {
    t->roofline_frac = bench_median(rf, R);
    t->roofline_frac_weights = t->roofline_frac * t->weight_bytes / (double)(t->weight_bytes + t->kv_bytes);
}

/* The position the byte split is given at: --context, else throughput's
 * middle decode step, whose full-attention KV bytes are its kv_bytes. */
static int cost_position(const BenchOpts *b) {
    return b->context ? b->context : b->prompt_len + (b->decode + 1) / 2 - 1;
}

/* The byte split as `, "key": value` pairs that continue a JSON object;
 * with_position also gives the position and window (context mode has its own). */
static void print_cost_json(const CostStep *s, int with_position) {
    if (with_position) printf(", \"context\": %d, \"window\": %d", s->t, s->window);
    printf(", \"sinks\": %d, \"weight_bytes_step\": %zu, \"kv_bytes_all_local\": %zu, \"kv_bytes_all_global\": %zu, "
           "\"kv_share_all_local\": %.6f, \"kv_share_all_global\": %.6f, \"max_saving\": %.6f",
           s->sinks, s->weight_bytes, s->kv_bytes_local, s->kv_bytes_global, cost_kv_share(s, s->kv_bytes_local),
           cost_kv_share(s, s->kv_bytes_global), cost_max_saving(s));
}

/* The byte split as text: the weights, each bound of the KV cache with its
 * share of the step, and the most routing can save. */
static void print_cost_text(const Config *c, const CostStep *s) {
    printf("step bytes      at position %d (%d keys), window %d, sinks %d; %s weights, %s KV cache\n", s->t, s->t + 1,
           s->window, s->sinks, model_dtype_name(c->dtype), model_dtype_name(c->kv_dtype));
    printf("  weights       %12.3f MB\n", s->weight_bytes / 1e6);
    printf("  KV all local  %12.3f MB   (%.1f%% of the step)\n", s->kv_bytes_local / 1e6,
           100 * cost_kv_share(s, s->kv_bytes_local));
    printf("  KV all global %12.3f MB   (%.1f%% of the step)\n", s->kv_bytes_global / 1e6,
           100 * cost_kv_share(s, s->kv_bytes_global));
    printf("max saving      %12.1f%%    of the step's bytes (every head local against every head global)\n",
           100 * cost_max_saving(s));
}

double bench_stream_pass(Pool *pool, BenchStream *s) {
    double t0 = args_seconds();
    /* 64 chunks of 4 MB claimed as threads free up, as decode claims its
     * slices: with two equal halves, a vCPU the host slowed set the pass's
     * time, and decode then streamed "faster than the machine" (1.2) */
    pool_run(pool, stream_task, s, (int)(sizeof s->sums / sizeof s->sums[0]));
    return s->n * sizeof(float) / (args_seconds() - t0) / 1e9;
}

void bench_random_tokens(int *ids, int n, int vocab, uint64_t *seed) {
    for (int i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = (int)((*seed >> 33) % (uint64_t)vocab);
    }
    ids[0] = 1;
}

static int bench_throughput(const Model *m, const BenchOpts *b, Throughput *out, Err *e) {
    const Config *c = &m->c;
    int plen = b->prompt_len, dec = b->decode, R = b->runs;
    if (plen + dec > c->seq_len)
        return err_set(e, "prompt (%d) + decode (%d) exceed the context (%d)", plen, dec, c->seq_len);
    RunState s;
    if (fwd_init(&s, c, plen, b->threads, e) != 0) return -1;
    BenchStream st;
    int no_stream = bench_stream_init(&st);
    int *ids = malloc((size_t)(plen + dec) * sizeof(int));
    double *pre = malloc(R * sizeof(double)), *dtk = malloc(R * sizeof(double)), *bw = malloc(3 * R * sizeof(double));
    double *rf = malloc(R * sizeof(double));
    if (no_stream || !ids || !pre || !dtk || !bw || !rf) {
        mem_big_free(st.buf); free(ids); free(pre); free(dtk); free(bw); free(rf); fwd_free(&s);
        return err_set(e, "out of memory");
    }
    uint64_t seed = 42;
    bench_random_tokens(ids, plen + dec, c->vocab_size, &seed);
    for (int r = 0; r < R; r++) {
        bw[3 * r] = bench_stream_pass(s.pool, &st);
        double t0 = args_seconds();
        fwd_forward(m, &s, &b->attn, ids, plen, 0, NULL, NULL);
        double t1 = args_seconds();
        bw[3 * r + 1] = bench_stream_pass(s.pool, &st);
        double t2 = args_seconds();
        for (int i = 0; i < dec; i++) fwd_forward(m, &s, &b->attn, &ids[plen + i], 1, plen + i, NULL, NULL);
        double t3 = args_seconds();
        bw[3 * r + 2] = bench_stream_pass(s.pool, &st);
        pre[r] = plen / (t1 - t0);
        dtk[r] = dec / (t3 - t2);
    }
    bench_step_bytes(c, plen, dec, out);
    for (int r = 0; r < R; r++) rf[r] = bench_roofline(out, dtk[r], bw + 3 * r);
    out->prefill_tok_s = bench_median(pre, R);
    out->decode_tok_s = bench_median(dtk, R);
    out->bandwidth_gbs = bench_median(bw, 3 * R);
    bench_set_roofline(out, rf, R);
    mem_big_free(st.buf); free(ids); free(pre); free(dtk); free(bw); free(rf);
    fwd_free(&s);
    return 0;
}

/* Resident set size of this process in bytes (0 if /proc says nothing). */
static size_t resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &pages, &res) != 2) res = 0;
        fclose(f);
    }
    return (size_t)res * 4096;
}

/* What the model itself holds in memory once it has run: the process's
 * resident growth over loading it and feeding 8 tokens (the caller took
 * `before` ahead of the load). */
static size_t model_resident(const Model *m, const BenchOpts *b, size_t before, Err *e) {
    RunState s;
    Config c = m->c; /* the forward pass indexes the cache by the model's own context; untouched pages stay out of RSS */
    if (fwd_init(&s, &c, 8, b->threads, e) != 0) return 0;
    int ids[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < 8; i++) ids[i] %= c.vocab_size;
    fwd_forward(m, &s, &b->attn, ids, 8, 0, NULL, NULL);
    for (int i = 0; i < 4; i++) fwd_forward(m, &s, &b->attn, &ids[i], 1, 8 + i, NULL, NULL);
    size_t after = resident_bytes();
    fwd_free(&s);
    return after > before ? after - before : 0;
}

typedef struct {
    double step_ms, keys_read_frac, global_share, full_ms, plain_ms;
    CostStep cost;       /* the byte split at position N */
    size_t kv_read;      /* KV bytes the timed step's gates read, per KV head */
} ContextResult;


/* Median decode-step time at position N for one policy; the KV cache below
 * N holds random keys and values (their content does not change the cost). */
static double time_step_at(const Model *m, RunState *s, const AttnConfig *a, int N, int runs, double *keys_frac,
                           double *global, uint64_t *kv_pos) {
    const Config *c = &m->c;
    StepTrace *tr = trace_new(c->n_layers, c->n_heads);
    double *t = malloc(runs * sizeof(double));
    int tok = 1;
    fwd_forward(m, s, a, &tok, 1, N, NULL, &tr); /* warm-up: bulk moments catch up once */
    for (int r = 0; r < runs; r++) {
        double t0 = args_seconds();
        fwd_forward(m, s, a, &tok, 1, N, NULL, &tr);
        t[r] = (args_seconds() - t0) * 1e3;
    }
    long keys = 0, g = 0;
    for (int i = 0; i < trace_cells(tr); i++) { keys += tr->keys_read[i]; g += tr->gate[i] == 1; }
    if (keys_frac) *keys_frac = (double)keys / ((double)trace_cells(tr) * (N + 1));
    if (global) *global = (double)g / trace_cells(tr);
    if (kv_pos) *kv_pos = (uint64_t)trace_kv_read_total(tr); /* counted by the engine, per KV head */
    double med = bench_median(t, runs);
    free(t);
    trace_free(tr);
    return med;
}

static int bench_context(const Model *m, const BenchOpts *b, ContextResult *out, Err *e) {
    const Config *c = &m->c;
    if (b->context >= c->seq_len) return err_set(e, "--context %d must be below the model's context (%d)", b->context, c->seq_len);
    if (aha_check(&b->attn, c->n_layers, c->n_heads, e) != 0) return -1;
    RunState s;
    if (fwd_init(&s, c, 1, b->threads, e) != 0) return -1;
    uint64_t seed = 7;
    float *k = s.scratch, *v = s.scratch + c->head_size; /* scratch holds seq_len + 2*head_size floats */
    for (int l = 0; l < c->n_layers; l++)
        for (int h = 0; h < c->n_kv_heads; h++)
            for (int pos = 0; pos < b->context; pos++) {
                for (int j = 0; j < c->head_size; j++) {
                    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                    k[j] = (float)((seed >> 40) & 0xffff) / 32768.0f - 1.0f;
                    v[j] = -k[j];
                }
                fwd_kv_set(&s, 0, l, h, pos, k);
                fwd_kv_set(&s, 1, l, h, pos, v);
            }
    uint64_t kv_pos = 0;
    out->step_ms = time_step_at(m, &s, &b->attn, b->context, b->runs, &out->keys_read_frac, &out->global_share, &kv_pos);
    cost_step(c, b->context, b->attn.window, b->attn.sinks, &out->cost);
    out->kv_read = cost_kv_bytes(c, kv_pos);
    out->full_ms = out->plain_ms = NAN;
    if (b->compare_full) {
        AttnConfig full = b->attn;
        full.policy = POLICY_FULL;
        full.profile = 0;
        out->full_ms = time_step_at(m, &s, &full, b->context, b->runs, NULL, NULL, NULL);
    }
    if (b->attn.profile) { /* what profiling costs over the same policy's plain step */
        AttnConfig plain = b->attn;
        plain.profile = 0;
        out->plain_ms = time_step_at(m, &s, &plain, b->context, b->runs, NULL, NULL, NULL);
    }
    fwd_free(&s);
    return 0;
}

static int parse_bench(int argc, char **argv, BenchOpts *b, Err *e) {
    Args a = {argc, argv, 1};
    RunOpts ro;
    runopts_defaults(&ro);
    *b = (BenchOpts){.shape = "110M", .runs = 5, .threads = pool_default_threads()};
    while (a.i < argc) {
        const char *f = argv[a.i];
        int r = runopts_parse(&ro, &a, e); /* --model and the policy flags */
        if (r < 0) return -1;
        if (r > 0) continue;
        a.i++;
        const char *v = NULL;
        long n;
        int *dst = !strcmp(f, "--prompt-len") ? &b->prompt_len : !strcmp(f, "--decode") ? &b->decode
                 : !strcmp(f, "--runs") ? &b->runs : !strcmp(f, "--context") ? &b->context
                 : !strcmp(f, "--threads") ? &b->threads : NULL;
        if (dst) {
            if (!(v = args_value(&a, e)) || args_int(f, v, dst == &b->prompt_len ? 1 : dst == &b->context ? 1 : 1,
                                                      dst == &b->threads ? 64 : 1 << 20, &n, e)) return -1;
            *dst = (int)n;
        } else if (!strcmp(f, "--shape")) { if (!(b->shape = args_value(&a, e))) return -1; }
        else if (!strcmp(f, "--dims")) { if (!(b->dims = args_value(&a, e))) return -1; }
        else if (!strcmp(f, "--save")) { if (!(b->save = args_value(&a, e))) return -1; }
        else if (!strcmp(f, "--json")) b->json = 1;
        else if (!strcmp(f, "--compare-full")) b->compare_full = 1;
        else if (!strcmp(f, "--tui")) b->tui = 1;
        else if (!strcmp(f, "--tui-heads") || !strcmp(f, "--tui-size")) {
            int heads = !strcmp(f, "--tui-heads"), x = 0, y = 0;
            char end;
            if (!(v = args_value(&a, e))) return -1;
            if (sscanf(v, "%dx%d%c", &x, &y, &end) != 2 || x < 1 || y < 1 || x > 4096 || y > 4096)
                return err_usage(e, "%s: expected %s such as %s (got '%s')", f, heads ? "LAYERSxHEADS" : "COLSxROWS",
                                 heads ? "32x32" : "250x70", v);
            if (heads) b->tui_layers = x, b->tui_heads = y;
            else b->tui_cols = x, b->tui_rows = y;
            b->tui = 1;
        }
        else if (!strcmp(f, "--bytes-only")) b->bytes_only = 1;
        else if (!strcmp(f, "--record")) b->record = 1;
        else if (!strcmp(f, "--db")) { if (!(b->db = args_value(&a, e))) return -1; }
        else if (!strcmp(f, "--dtype")) {
            if (!(v = args_value(&a, e))) return -1;
            if ((b->dtype = model_dtype_parse(v)) < 0)
                return err_usage(e, "--dtype: expected f32, bf16 or f16 (got '%s')", v);
        }
        else return args_unknown(f, e);
    }
    if (!b->prompt_len) b->prompt_len = b->record ? 32 : 512;
    if (!b->decode) b->decode = b->record ? 224 : 64;
    if (ro.context) b->context = ro.context; /* the shared flag parser took it first */
    b->model = ro.model;
    b->routers = ro.routers;
    b->attn = ro.attn, b->have_tau = ro.have_tau, b->have_window = ro.have_window;
    b->kv_dtype = ro.kv_dtype;
    if (b->runs > 1000) return err_usage(e, "--runs %d is too many (max 1000)", b->runs);
    if (b->bytes_only && (b->record || b->tui || b->compare_full || b->save))
        return err_usage(e, "--bytes-only builds and times nothing: it does not go with --record, --tui, --compare-full"
                            " or --save");
    return 0;
}

static void print_throughput(const BenchOpts *b, const Model *m, const Throughput *t, const CostStep *cs,
                             size_t resident) {
    const Config *c = &m->c;
    if (b->json) {
        printf("{\"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f, \"weight_bytes\": %zu, \"kv_bytes\": %zu, "
               "\"bandwidth_gbs\": %.3f, \"roofline_frac\": %.4f, \"roofline_frac_weights\": %.4f, "
               "\"prompt_len\": %d, \"decode\": %d, \"runs\": %d, \"threads\": %d, \"matvec\": \"%s\", "
               "\"dtype\": \"%s\", \"file_bytes\": %zu, \"resident_bytes\": %zu",
               t->prefill_tok_s, t->decode_tok_s, t->weight_bytes, t->kv_bytes, t->bandwidth_gbs, t->roofline_frac,
               t->roofline_frac_weights, b->prompt_len, b->decode, b->runs, b->threads, mv_variant(),
               model_dtype_name(c->dtype), m->file_bytes, resident);
        print_cost_json(cs, 1);
        printf("}\n");
        return;
    }
    printf("model           %s (dim %d, hidden %d, %d layers, %d/%d heads, vocab %d, context %d)\n",
           m->path[0] ? m->path : "random weights", c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
           c->vocab_size, c->seq_len);
    printf("prefill         %10.1f tok/s   (%d-token prompt, median of %d runs)\n", t->prefill_tok_s, b->prompt_len, b->runs);
    printf("decode          %10.1f tok/s   (%d tokens after the prompt, %s kernel, %d threads)\n", t->decode_tok_s,
           b->decode, mv_variant(), b->threads);
    printf("prefill/decode  %10.1fx\n", t->prefill_tok_s / t->decode_tok_s);
    printf("weight bytes    %10.1f MB per decode step (+ %.1f MB of KV cache at this context)\n", t->weight_bytes / 1e6,
           t->kv_bytes / 1e6);
    printf("bandwidth       %10.2f GB/s (streaming read, median of %d passes between the runs)\n", t->bandwidth_gbs,
           3 * b->runs);
    printf("roofline_frac   %10.3f   (weights + KV; weights only: %.3f; %s weights)\n", t->roofline_frac,
           t->roofline_frac_weights, model_dtype_name(c->dtype));
    if (resident && m->file_bytes)
        printf("resident        %10.1f MB added by the model, file %.1f MB (%.2fx)\n", resident / 1e6, m->file_bytes / 1e6,
               (double)resident / m->file_bytes);
    print_cost_text(c, cs);
}

static void print_context(const BenchOpts *b, const Config *c, const ContextResult *r) {
    if (b->json) {
        printf("{\"context\": %d, \"window\": %d, \"policy\": \"%s\", \"step_ms\": %.4f, \"keys_read_frac\": %.4f, "
               "\"global_share\": %.4f",
               b->context, b->attn.window, aha_policy_name(b->attn.policy), r->step_ms, r->keys_read_frac, r->global_share);
        if (!isnan(r->full_ms)) printf(", \"full_step_ms\": %.4f, \"speedup_vs_full\": %.3f", r->full_ms, r->full_ms / r->step_ms);
        if (!isnan(r->plain_ms)) printf(", \"plain_step_ms\": %.4f, \"profile_ratio\": %.3f", r->plain_ms, r->step_ms / r->plain_ms);
        print_cost_json(&r->cost, 0);
        printf(", \"kv_bytes_read\": %zu, \"kv_share_read\": %.6f}\n", r->kv_read, cost_kv_share(&r->cost, r->kv_read));
        return;
    }
    printf("step at position %d, policy %s, window %d%s: %.3f ms (median of %d)\n", b->context,
           aha_policy_name(b->attn.policy), b->attn.window, b->attn.profile ? ", profiled" : "", r->step_ms, b->runs);
    printf("keys_read_frac  %.4f   (keys read per query head; the KV cache's traffic, per KV head, is below)"
           "   global_share %.4f\n", r->keys_read_frac, r->global_share);
    if (!isnan(r->full_ms)) printf("full step       %.3f ms   speedup_vs_full %.2fx\n", r->full_ms, r->full_ms / r->step_ms);
    if (!isnan(r->plain_ms)) printf("unprofiled step %.3f ms   profile_ratio %.2fx\n", r->plain_ms, r->step_ms / r->plain_ms);
    print_cost_text(c, &r->cost);
    printf("  KV read       %12.3f MB   (%.1f%% of the step: this step's gates, per KV head)\n", r->kv_read / 1e6,
           100 * cost_kv_share(&r->cost, r->kv_read));
}

/* Load --model (a bare name is looked up as the default model is; a
 * folder's context is capped just past --context) and take its own window
 * unless --window was given. */
static int load_model(BenchOpts *b, Model *m, Err *e) {
    char path[1024];
    if (app_model_path(b->model, path, sizeof path, e)) return -1;
    int r = model_is_hf_dir(path) ? model_load_hf(m, path, b->context ? b->context + 1 : 0, e) : model_load(m, path, e);
    if (r == 0 && m->default_window > 0 && !b->have_window) b->attn.window = m->default_window;
    return r;
}

/* --bytes-only: the byte split from the config alone, so any shape and
 * position answers at once: --shape/--dims build no weights, and a model
 * file is only mapped. */
static int bench_bytes(BenchOpts *b, Err *e) {
    Model m = {0};
    Config c;
    if (b->model) {
        if (load_model(b, &m, e) != 0) return -1;
        c = m.c;
    } else {
        if (shape_config(b, &c, e) != 0) return -1;
        c.dtype = c.kv_dtype = b->dtype; /* the random model would be built in f32, or converted to --dtype */
    }
    if (b->kv_dtype >= 0) c.kv_dtype = b->kv_dtype;
    CostStep cs;
    cost_step(&c, cost_position(b), b->attn.window, b->attn.sinks, &cs);
    if (b->json) {
        printf("{\"dtype\": \"%s\", \"kv_dtype\": \"%s\"", model_dtype_name(c.dtype), model_dtype_name(c.kv_dtype));
        print_cost_json(&cs, 1);
        printf("}\n");
    } else {
        print_cost_text(&c, &cs);
    }
    model_free(&m);
    return 0;
}

int cmd_bench(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (args_is_help(argv[i])) { bench_help(); return 0; }
    BenchOpts b;
    Err e;
    Model m;
    if (parse_bench(argc, argv, &b, &e) != 0) return args_fail(&e);
    if (b.tui) { /* frames of a synthetic 200-token trace, off-screen */
        double ms;
        int L = b.tui_layers ? b.tui_layers : 16, H = b.tui_heads ? b.tui_heads : 16;
        int cols = b.tui_cols ? b.tui_cols : 200, rows = b.tui_rows ? b.tui_rows : 60;
        if (view_bench_frames(cols, rows, L, H, 200, 50 * b.runs, &ms, &e) != 0) return args_fail(&e);
        if (b.json)
            printf("{\"frame_ms\": %.3f, \"cols\": %d, \"rows\": %d, \"layers\": %d, \"heads\": %d, \"tokens\": 200}\n",
                   ms, cols, rows, L, H);
        else printf("TUI frame (%dx%d, %dx%d heads, 200 tokens, off-screen): %.3f ms median\n", cols, rows, L, H, ms);
        return 0;
    }
    if (b.bytes_only) return bench_bytes(&b, &e) != 0 ? args_fail(&e) : 0;
    size_t before = resident_bytes(), resident = 0;
    if (b.model) {
        if (load_model(&b, &m, &e) != 0) return args_fail(&e);
        if (!b.context && !b.record) resident = model_resident(&m, &b, before, &e);
    } else {
        Config c;
        if (shape_config(&b, &c, &e) != 0 || model_random(&m, &c, 1234, &e) != 0) return args_fail(&e);
        if (b.save && model_save(&m, b.save, 0, &e) != 0) { model_free(&m); return args_fail(&e); }
    }
    if (b.kv_dtype >= 0) m.c.kv_dtype = b.kv_dtype;
    int rc = 0;
    Routers rt = {0};
    if (b.routers) {
        if (router_open(&rt, b.routers, m.c.n_layers, m.c.n_heads, m.c.dim, &e) != 0) { model_free(&m); return args_fail(&e); }
        b.attn.routers = rt.w;
        b.attn.router_bias = rt.b;
        char warn[1200];
        app_router_meta(&rt, b.have_tau, &b.attn, warn, sizeof warn);
    }
    if (b.record) {
        if (bench_record(&m, &b, &e) != 0) rc = args_fail(&e);
    } else if (b.context > 0) {
        ContextResult r = {0};
        if (bench_context(&m, &b, &r, &e) == 0) print_context(&b, &m.c, &r); else rc = args_fail(&e);
    } else {
        if (b.prompt_len + b.decode > m.c.seq_len && !b.model) b.prompt_len = m.c.seq_len - b.decode;
        Throughput t = {0};
        if (b.dtype != DT_F32 && !b.model) {
            if (bench_dtypes(&m, &b, &e) != 0) rc = args_fail(&e);
        } else if (bench_throughput(&m, &b, &t, &e) == 0) {
            CostStep cs;
            cost_step(&m.c, cost_position(&b), b.attn.window, b.attn.sinks, &cs);
            print_throughput(&b, &m, &t, &cs, resident);
        } else {
            rc = args_fail(&e);
        }
    }
    router_free(&rt);
    model_free(&m);
    return rc;
}
