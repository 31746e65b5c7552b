/* bench_util.c — what the modes share: medians, the bandwidth probe and roofline, prompts, a step's byte split.
 *
 * What every mode of `ahascope bench` shares: medians, the
 * bandwidth probe and the roofline set against it, random prompts, the
 * byte split of a step and its printing, the model to time and what it
 * holds in memory. Nothing here measures a mode or calls one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "app/setup.h"
#include "engine/forward.h"
#include "engine/gemm_half.h"
#include "engine/matvec.h"
#include "engine/mem.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_shape_config(const BenchOpts *b, Config *c, Err *e) {
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
                  .vocab_size = v[5], .seq_len = v[6], .shared_classifier = 1, .rope_theta = 10000.0f,
                  .head_size = b->head_dim};
    if (b->window_layers) {
        char extra;
        int n = sscanf(b->window_layers, "%d,%d%c", &c->sliding_window, &c->window_pattern, &extra);
        if ((n != 1 && n != 2) || c->sliding_window < 1 || (n == 2 && c->window_pattern < 1))
            return err_usage(e, "--window-layers: expected W or W,PATTERN with W, PATTERN >= 1 (got '%s')", b->window_layers);
        if (b->arch != ARCH_MISTRAL && b->arch != ARCH_PHI3 && b->arch != ARCH_GEMMA2 && b->arch != ARCH_GEMMA3)
            return err_usage(e, "--window-layers needs --arch mistral, phi3, gemma2 or gemma3");
        if ((b->arch == ARCH_MISTRAL || b->arch == ARCH_PHI3) && n == 2)
            return err_usage(e, "--window-layers: %s windows every layer (no PATTERN)", model_arch_type(b->arch));
    }
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

int bench_cost_position(const BenchOpts *b) {
    return b->context ? b->context : b->prompt_len + (b->decode + 1) / 2 - 1;
}

void bench_print_cost_json(const CostStep *s, int with_position) {
    if (with_position) printf(", \"context\": %d, \"window\": %d", s->t, s->window);
    printf(", \"sinks\": %d, \"weight_bytes_step\": %zu, \"kv_bytes_all_local\": %zu, \"kv_bytes_all_global\": %zu, "
           "\"kv_share_all_local\": %.6f, \"kv_share_all_global\": %.6f, \"max_saving\": %.6f",
           s->sinks, s->weight_bytes, s->kv_bytes_local, s->kv_bytes_global, cost_kv_share(s, s->kv_bytes_local),
           cost_kv_share(s, s->kv_bytes_global), cost_max_saving(s));
}

void bench_print_cost_text(const Config *c, const CostStep *s) {
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
    double t0 = clock_now();
    /* 64 chunks of 4 MB claimed as threads free up, as decode claims its
     * slices: with two equal halves, a vCPU the host slowed set the pass's
     * time, and decode then streamed "faster than the machine" (1.2) */
    pool_run(pool, stream_task, s, (int)(sizeof s->sums / sizeof s->sums[0]));
    return s->n * sizeof(float) / (clock_now() - t0) / 1e9;
}

void bench_random_tokens(int *ids, int n, int vocab, uint64_t *seed) {
    for (int i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = (int)((*seed >> 33) % (uint64_t)vocab);
    }
    ids[0] = 1;
}

void bench_paired_rooflines(const Throughput *t, const double *secs, const double *bw, int n, double *rf) {
    for (int i = 0; i < n; i++) {
        double pair[3] = {0, bw[i], bw[i + 1]};
        rf[i] = bench_roofline(t, 1.0 / secs[i], pair);
    }
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

int bench_load_model(BenchOpts *b, Model *m, Err *e) {
    char path[1024];
    if (app_model_path(b->model, path, sizeof path, e)) return -1;
    int r = model_is_hf_dir(path) ? model_load_hf(m, path, b->context ? b->context + 1 : 0, e)
            : model_is_gguf(path) ? model_load_gguf(m, path, e) /* its tensors' own types set the bytes read */
                                  : model_load(m, path, e);
    if (r == 0 && m->default_window > 0 && !b->have_window) b->attn.window = m->default_window;
    return r;
}

int bench_open_model(BenchOpts *b, Model *m, Routers *rt, size_t *resident, Err *e) {
    size_t before = resident_bytes();
    *resident = 0;
    memset(rt, 0, sizeof *rt);
    if (b->model) {
        if (bench_load_model(b, m, e) != 0) return -1;
        if (!b->context && !b->record) *resident = model_resident(m, b, before, e);
    } else {
        Config c;
        if (bench_shape_config(b, &c, e) != 0 || model_random_arch(m, &c, b->arch, 1234, e) != 0) return -1;
        if (b->save && model_save(m, b->save, 0, e) != 0) { model_free(m); return -1; }
    }
    if (b->kv_dtype >= 0) m->c.kv_dtype = b->kv_dtype;
    if (m->builtin_routers && !b->routers) { /* faolmo routes itself, as on every command */
        b->attn.model_routers = 1;
        if (!b->have_window) b->attn.window = m->default_window;
    }
    if (b->routers) {
        if (router_open(rt, b->routers, m->c.n_layers, m->c.n_heads, m->c.dim, e) != 0) { model_free(m); return -1; }
        b->attn.routers = rt->w;
        b->attn.router_bias = rt->b;
        b->attn.n_windows = rt->n_windows, b->attn.windows = rt->n_windows ? rt->windows : NULL;
        char warn[1200];
        app_router_meta(rt, b->have_tau, &b->attn, warn, sizeof warn);
    }
    return 0;
}

#define PEAK_REPS 8000000L /* × 16 instructions a thread: 25-60 ms at 2 a cycle */

typedef struct {
    GemmPath path;
    double flops;
} PeakTask;

static void peak_task(void *ctx, int task, int n_tasks) {
    (void)n_tasks;
    PeakTask *p = ctx;
    p[task].flops = gemm_half_peak_flops(p[task].path, PEAK_REPS);
}

double bench_peak_gflops(Pool *pool, GemmPath path) {
    PeakTask t[64];
    int n = pool_threads(pool) < 64 ? pool_threads(pool) : 64;
    for (int i = 0; i < n; i++) t[i] = (PeakTask){path, 0};
    double t0 = clock_now();
    if (pool) pool_run(pool, peak_task, t, n);
    else peak_task(t, 0, 1);
    double dt = clock_now() - t0, flops = 0;
    for (int i = 0; i < n; i++) flops += t[i].flops;
    return flops / dt / 1e9;
}
