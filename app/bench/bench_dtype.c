/* bench_dtype.c — `bench --dtype bf16` or `f16`: the same random model in f32 and in a half dtype, timed in one run.
 *
 * `ahascope bench --dtype bf16|f16`: the same random model
 * in f32 and in a half dtype, timed in one run.
 *
 * The host this runs on is shared, and its load moves in phases of seconds:
 * timing one dtype's whole run and then the other's paired them poorly (on
 * one noisy evening the per-round ratios of the 110M shape spread from 1.0
 * to 2.7). So both models keep a run state side by side and their decode
 * steps alternate one for one, the order flipping every step; each dtype's
 * speed is its median step, and the ratio the median of the paired steps'
 * ratios. Prefills alternate by round. Bandwidth passes sit between the
 * phases of every round; each round's decode is set against the faster
 * of the passes around it (the bandwidth the machine offered then: a pass
 * caught in a slow phase once put decode above 1), and roofline_frac is
 * the median over rounds.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "engine/forward.h"
#include "engine/mem.h"

typedef struct {
    const Model *m;
    RunState s;
    double *pre;          /* [runs] prefill tok/s */
    double *step;         /* [runs * decode] seconds per decode step */
    Throughput t;
} Side;

/* Medians of one side's samples into its Throughput; roofline_frac is the
 * median over rounds of bench_roofline, as in plain throughput mode (one
 * median over the whole run once put a decode against a slow phase it did
 * not see: roofline_frac 1.6). rf is scratch for R values. */
static void side_summary(Side *d, const BenchOpts *b, const double *bw, double *rf) {
    const Config *c = &d->m->c;
    Throughput *t = &d->t;
    int R = b->runs, dec = b->decode;
    bench_step_bytes(c, b->prompt_len, dec, t);
    for (int r = 0; r < R; r++) /* sorts each round's steps in place; the run's median is unchanged */
        rf[r] = bench_roofline(t, 1.0 / bench_median(d->step + (size_t)r * dec, dec), bw + 3 * r);
    bench_set_roofline(t, rf, R);
    t->prefill_tok_s = bench_median(d->pre, R);
    t->decode_tok_s = 1.0 / bench_median(d->step, R * dec);
}

static void print_dtypes(const BenchOpts *b, const Side d[2], double ratio) {
    const Throughput *t32 = &d[0].t, *th = &d[1].t;
    const char *hn = model_dtype_name(b->dtype), *kv32 = model_dtype_name(d[0].m->c.kv_dtype),
               *kvh = model_dtype_name(d[1].m->c.kv_dtype);
    double of_medians = th->decode_tok_s / t32->decode_tok_s;
    if (b->json) {
        printf("{\"f32\": {\"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f, \"weight_bytes\": %zu, \"kv_bytes\": %zu, "
               "\"kv_dtype\": \"%s\", \"roofline_frac\": %.4f}, "
               "\"%s\": {\"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f, \"weight_bytes\": %zu, \"kv_bytes\": %zu, "
               "\"kv_dtype\": \"%s\", \"roofline_frac\": %.4f, "
               "\"roofline_frac_weights\": %.4f}, \"bandwidth_gbs\": %.3f, \"decode_ratio\": %.3f, "
               "\"decode_ratio_of_medians\": %.3f, \"runs\": %d, \"steps\": %d}\n",
               t32->prefill_tok_s, t32->decode_tok_s, t32->weight_bytes, t32->kv_bytes, kv32, t32->roofline_frac, hn,
               th->prefill_tok_s, th->decode_tok_s, th->weight_bytes, th->kv_bytes, kvh, th->roofline_frac,
               th->roofline_frac_weights, th->bandwidth_gbs, ratio, of_medians, b->runs, b->runs * b->decode);
        return;
    }
    printf("%-5s prefill %8.1f tok/s  decode %7.1f tok/s  %6.1f MB/step (kv %s)  roofline_frac %.3f\n", "f32",
           t32->prefill_tok_s, t32->decode_tok_s, (t32->weight_bytes + t32->kv_bytes) / 1e6, kv32, t32->roofline_frac);
    printf("%-5s prefill %8.1f tok/s  decode %7.1f tok/s  %6.1f MB/step (kv %s)  roofline_frac %.3f (weights only %.3f)\n",
           hn, th->prefill_tok_s, th->decode_tok_s, (th->weight_bytes + th->kv_bytes) / 1e6, kvh, th->roofline_frac,
           th->roofline_frac_weights);
    printf("bandwidth %.2f GB/s; %s decode / f32 decode = %.2fx (median of %d paired steps over %d rounds; "
           "ratio of medians %.2fx)\n",
           th->bandwidth_gbs, hn, ratio, b->runs * b->decode, b->runs, of_medians);
}

/* One round: prefills in turn, then the decode steps interleaved; the
 * paired ratios go to ratio[0..decode). */
static void dtype_round(Side d[2], const BenchOpts *b, const int *ids, int r, BenchStream *st, double *bw,
                        double *ratio) {
    int plen = b->prompt_len;
    bw[0] = bench_stream_pass(d[0].s.pool, st);
    for (int j = 0; j < 2; j++) {
        Side *x = &d[(j + r) % 2];
        double t0 = clock_now();
        fwd_forward(x->m, &x->s, &b->attn, ids, plen, 0, NULL, NULL);
        x->pre[r] = plen / (clock_now() - t0);
    }
    bw[1] = bench_stream_pass(d[0].s.pool, st);
    for (int i = 0; i < b->decode; i++) {
        size_t k = (size_t)r * b->decode + i;
        for (int j = 0; j < 2; j++) {
            Side *x = &d[(i + j) % 2];
            double t0 = clock_now();
            fwd_forward(x->m, &x->s, &b->attn, &ids[plen + i], 1, plen + i, NULL, NULL);
            x->step[k] = clock_now() - t0;
        }
        ratio[i] = d[0].step[k] / d[1].step[k];
    }
    bw[2] = bench_stream_pass(d[0].s.pool, st);
}

int bench_dtypes(const Model *m32, const BenchOpts *b, Err *e) {
    const Config *c = &m32->c;
    int R = b->runs, plen = b->prompt_len, dec = b->decode;
    if (plen < 1 || dec < 1 || plen + dec > c->seq_len)
        return err_set(e, "prompt (%d) + decode (%d) must fit the context (%d), each at least 1", plen, dec,
                       c->seq_len);
    Model mh;
    if (model_random(&mh, c, 1234, e) != 0) return -1;
    if (model_to_half(&mh, b->dtype, e) != 0) { model_free(&mh); return -1; }
    if (b->kv_dtype >= 0) mh.c.kv_dtype = b->kv_dtype;
    Side d[2] = {{.m = m32}, {.m = &mh}};
    int rc = fwd_init(&d[0].s, c, plen, b->threads, e);
    if (rc == 0 && fwd_init(&d[1].s, &mh.c, plen, b->threads, e) != 0) { fwd_free(&d[0].s); rc = -1; }
    if (rc != 0) { model_free(&mh); return -1; }
    size_t steps = (size_t)R * dec;
    BenchStream st;
    int no_stream = bench_stream_init(&st);
    int *ids = malloc((size_t)(plen + dec) * sizeof(int));
    double *bw = malloc(3 * (size_t)R * sizeof(double)), *ratio = malloc(steps * sizeof(double));
    for (int k = 0; k < 2; k++) {
        d[k].pre = malloc(R * sizeof(double));
        d[k].step = malloc(steps * sizeof(double));
    }
    if (!no_stream && ids && bw && ratio && d[0].pre && d[0].step && d[1].pre && d[1].step) {
        uint64_t seed = 42;
        bench_random_tokens(ids, plen + dec, c->vocab_size, &seed);
        for (int r = 0; r < R; r++) dtype_round(d, b, ids, r, &st, bw + 3 * r, ratio + (size_t)r * dec);
        double paired = bench_median(ratio, (int)steps);
        for (int k = 0; k < 2; k++) side_summary(&d[k], b, bw, ratio); /* ratio is free now: scratch */
        double bw_gbs = bench_median(bw, 3 * R);                       /* sorts bw: after the rounds' use */
        d[0].t.bandwidth_gbs = d[1].t.bandwidth_gbs = bw_gbs;
        print_dtypes(b, d, paired);
    } else {
        rc = err_set(e, "out of memory");
    }
    for (int k = 0; k < 2; k++) { free(d[k].pre); free(d[k].step); fwd_free(&d[k].s); }
    mem_big_free(st.buf); free(ids); free(bw); free(ratio);
    model_free(&mh);
    return rc;
}
