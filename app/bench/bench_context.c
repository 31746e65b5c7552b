/* bench_context.c — `bench --context N`: one decode step at position N under a policy, the cache filled at random.
 *
 * `ahascope bench --context N`: the time of one decode
 * step at position N under a policy, the KV cache below N filled with
 * random keys and values (their content does not change the cost), with
 * the keys its gates read and, on request, the full-attention step and
 * the unprofiled step timed in the same run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "engine/cost.h"
#include "engine/forward.h"

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
        double t0 = clock_now();
        fwd_forward(m, s, a, &tok, 1, N, NULL, &tr);
        t[r] = (clock_now() - t0) * 1e3;
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

static int measure(const Model *m, const BenchOpts *b, ContextResult *out, Err *e) {
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

static void print_context(const BenchOpts *b, const Config *c, const ContextResult *r) {
    if (b->json) {
        printf("{\"context\": %d, \"window\": %d, \"policy\": \"%s\", \"step_ms\": %.4f, \"keys_read_frac\": %.4f, "
               "\"global_share\": %.4f",
               b->context, b->attn.window, aha_policy_name(b->attn.policy), r->step_ms, r->keys_read_frac, r->global_share);
        if (!isnan(r->full_ms)) printf(", \"full_step_ms\": %.4f, \"speedup_vs_full\": %.3f", r->full_ms, r->full_ms / r->step_ms);
        if (!isnan(r->plain_ms)) printf(", \"plain_step_ms\": %.4f, \"profile_ratio\": %.3f", r->plain_ms, r->step_ms / r->plain_ms);
        bench_print_cost_json(&r->cost, 0);
        printf(", \"kv_bytes_read\": %zu, \"kv_share_read\": %.6f}\n", r->kv_read, cost_kv_share(&r->cost, r->kv_read));
        return;
    }
    printf("step at position %d, policy %s, window %d%s: %.3f ms (median of %d)\n", b->context,
           aha_policy_name(b->attn.policy), b->attn.window, b->attn.profile ? ", profiled" : "", r->step_ms, b->runs);
    printf("keys_read_frac  %.4f   (keys read per query head; the KV cache's traffic, per KV head, is below)"
           "   global_share %.4f\n", r->keys_read_frac, r->global_share);
    if (!isnan(r->full_ms)) printf("full step       %.3f ms   speedup_vs_full %.2fx\n", r->full_ms, r->full_ms / r->step_ms);
    if (!isnan(r->plain_ms)) printf("unprofiled step %.3f ms   profile_ratio %.2fx\n", r->plain_ms, r->step_ms / r->plain_ms);
    bench_print_cost_text(c, &r->cost);
    printf("  KV read       %12.3f MB   (%.1f%% of the step: this step's gates, per KV head)\n", r->kv_read / 1e6,
           100 * cost_kv_share(&r->cost, r->kv_read));
}

int bench_context(const Model *m, const BenchOpts *b, Err *e) {
    ContextResult r = {0};
    if (measure(m, b, &r, e) != 0) return -1;
    print_context(b, &m->c, &r);
    return 0;
}
