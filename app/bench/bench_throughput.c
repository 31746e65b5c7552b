/* bench_throughput.c — `bench`'s default mode: prefill and decode tok/s, bytes a step streams, roofline share.
 *
 * `ahascope bench`'s default mode: prefill and decode
 * tok/s of a model, the bytes a decode step streams, the machine's read
 * bandwidth measured in the same run, and roofline_frac, decode's bytes per
 * second against that bandwidth. Each run's decode steps are run again with
 * a bandwidth pass after every step, and each step is set against the
 * faster of the passes either side of it (bench_paired_rooflines); the
 * figure is the median over every step of every run. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "engine/attn_kernels.h"
#include "engine/cost.h"
#include "engine/forward.h"
#include "engine/gemm_half.h"
#include "engine/gemm_q.h"
#include "engine/matvec.h"
#include "engine/mem.h"

/* CPU seconds this process has used, all threads: set against wall time it
 * says whether other jobs on the host took the cores from the decode. */
static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds the hypervisor ran other guests on this machine's vCPUs (the
 * steal column of /proc/stat, all CPUs; 0 when /proc says nothing): a
 * decode that lost its cores to the host, not to this guest's jobs. */
static double steal_seconds(void) {
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                       &v[6], &v[7]) : 0;
    if (f) fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return n == 8 && hz > 0 ? (double)v[7] / hz : 0;
}

/* The paired phase of one run: the run's dec decode steps again, at the
 * same positions (each rewrites the key and value it wrote before), with a
 * bandwidth pass after every step. A step of a 1B-class model lasts ~60 ms
 * and a pass ~5 ms, so each step meets the bandwidth the host gave at that
 * moment: set against passes seconds apart, a decode on a host whose
 * bandwidth moved between 27 and 80 GB/s within a minute measured a
 * roofline of 1.68. secs and bw are scratch of dec and dec + 1. */
static void paired_steps(const Model *m, RunState *s, const BenchOpts *b, const int *ids, BenchStream *st,
                         double bw_before, const Throughput *t, double *secs, double *bw, double *rf) {
    int plen = b->prompt_len, dec = b->decode;
    bw[0] = bw_before;
    for (int i = 0; i < dec; i++) {
        double t0 = clock_now();
        fwd_forward(m, s, &b->attn, &ids[plen + i], 1, plen + i, NULL, NULL);
        secs[i] = clock_now() - t0;
        bw[i + 1] = bench_stream_pass(s->pool, st);
    }
    bench_paired_rooflines(t, secs, bw, dec, rf);
}

static int measure(const Model *m, const BenchOpts *b, Throughput *out, Err *e) {
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
    double *rf = malloc((size_t)R * dec * sizeof(double)), *cpu = malloc(R * sizeof(double)), *stl = malloc(R * sizeof(double));
    double *secs = malloc(dec * sizeof(double)), *pbw = malloc((dec + 1) * sizeof(double));
    if (no_stream || !ids || !pre || !dtk || !bw || !rf || !cpu || !stl || !secs || !pbw) {
        mem_big_free(st.buf); free(ids); free(pre); free(dtk); free(bw); free(rf); free(cpu); free(stl); fwd_free(&s);
        free(secs); free(pbw);
        return err_set(e, "out of memory");
    }
    uint64_t seed = 42;
    bench_random_tokens(ids, plen + dec, c->vocab_size, &seed);
    bench_step_bytes(c, plen, dec, out);
    for (int r = 0; r < R; r++) {
        bw[3 * r] = bench_stream_pass(s.pool, &st);
        double t0 = clock_now();
        fwd_forward(m, &s, &b->attn, ids, plen, 0, NULL, NULL);
        double t1 = clock_now();
        bw[3 * r + 1] = bench_stream_pass(s.pool, &st);
        double t2 = clock_now(), c2 = cpu_seconds(), s2 = steal_seconds();
        for (int i = 0; i < dec; i++) fwd_forward(m, &s, &b->attn, &ids[plen + i], 1, plen + i, NULL, NULL);
        double t3 = clock_now();
        cpu[r] = (cpu_seconds() - c2) / ((t3 - t2) * pool_threads(s.pool));
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        stl[r] = (steal_seconds() - s2) / ((t3 - t2) * (ncpu > 0 ? ncpu : 1));
        bw[3 * r + 2] = bench_stream_pass(s.pool, &st);
        pre[r] = plen / (t1 - t0);
        dtk[r] = dec / (t3 - t2);
        paired_steps(m, &s, b, ids, &st, bw[3 * r + 2], out, secs, pbw, rf + (size_t)r * dec);
    }
    out->prefill_tok_s = bench_median(pre, R);
    out->decode_tok_s = bench_median(dtk, R);
    out->bandwidth_gbs = bench_median(bw, 3 * R);
    bench_set_roofline(out, rf, R * dec);
    out->decode_cpu_share = bench_median(cpu, R);
    out->decode_steal_share = bench_median(stl, R);
    mem_big_free(st.buf); free(ids); free(pre); free(dtk); free(bw); free(rf); free(cpu); free(stl);
    free(secs); free(pbw);
    fwd_free(&s);
    return 0;
}

/* Bytes of this process on 2 MiB pages, anonymous or file-backed (0 if
 * /proc says nothing): how much of the weights the TLB reaches cheaply,
 * which decided whether a folder decoded fast or slow before mem_view_file
 * (engine/PERFORMANCE.md, "Slow invocations"). */
static size_t huge_page_bytes(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb, total = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1 || sscanf(line, "FilePmdMapped: %llu kB", &kb) == 1) total += kb;
    fclose(f);
    return (size_t)total * 1024;
}

/* What a prefill of this model multiplies with: sgemm, or bf16's path
 * ($AHASCOPE_GEMM, already checked by the run that was timed). */
static const char *prefill_kernel(const Config *c) {
    char msg[200];
    int q = model_dtype_is_block(c->dtype) ? gemm_q_from_env(msg, sizeof msg) : GQ_OFF;
    if (q > GQ_OFF && gemm_q_block(model_dtype_ggml(c->dtype)))
        return q == GQ_VNNI ? "gemm_q avx512vnni" : q == GQ_AMX ? "gemm_q amx" : q == GQ_AVX2 ? "gemm_q avx2" : "gemm_q portable";
    int p = c->dtype == DT_BF16 ? gemm_half_from_env(msg, sizeof msg) : GEMM_EXACT;
    return p <= GEMM_EXACT ? "sgemm" : gemm_half_name((GemmPath)p);
}

/* What a decode step of this model multiplies with: forward.c's choice
 * for its main type (AVX-512 VNNI's own kernels, else gemm_q), else the
 * float matvec of the CPU's width. */
static void decode_kernel(const Config *c, char *out, size_t size) {
    char msg[200];
    int ty = model_dtype_is_block(c->dtype) ? model_dtype_ggml(c->dtype) : -1;
    int q = ty >= 0 ? gemm_q_from_env(msg, sizeof msg) : GQ_OFF;
    if (ty >= 0 && mv_q_int8() && mv_q_int8_available(ty)) snprintf(out, size, "mv_q int8 avx512vnni");
    else if (q > GQ_OFF && gemm_q_block(ty)) snprintf(out, size, "gemm_q %s", gemm_q_name((GqPath)q));
    else snprintf(out, size, "%s%s", ty >= 0 ? "mv_q " : "", mv_variant());
}

/* How this model's decode kernels prefetch: f32 rows 4 KiB ahead into L2,
 * half-precision ones as mv_prefetch_kind says for this CPU. */
static const char *prefetch_name(const Config *c) {
    return c->dtype == DT_F32 ? "l2" : mv_prefetch_name(mv_prefetch_kind());
}

static void print_throughput(const BenchOpts *b, const Model *m, const Throughput *t, const CostStep *cs,
                             size_t resident) {
    const Config *c = &m->c;
    char dk[64];
    decode_kernel(c, dk, sizeof dk);
    if (b->json) {
        printf("{\"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f, \"weight_bytes\": %zu, \"kv_bytes\": %zu, "
               "\"bandwidth_gbs\": %.3f, \"roofline_frac\": %.4f, \"roofline_frac_weights\": %.4f, "
               "\"prompt_len\": %d, \"decode\": %d, \"runs\": %d, \"threads\": %d, \"matvec\": \"%s\", \"prefetch\": \"%s\", "
               "\"prefill_kernel\": \"%s\", \"dtype\": \"%s\", \"file_bytes\": %zu, \"resident_bytes\": %zu, "
               "\"huge_page_bytes\": %zu, \"decode_cpu_share\": %.3f, \"decode_steal_share\": %.3f, "
               "\"decode_kernel\": \"%s\", \"attn_kernel\": \"%s\"",
               t->prefill_tok_s, t->decode_tok_s, t->weight_bytes, t->kv_bytes, t->bandwidth_gbs, t->roofline_frac,
               t->roofline_frac_weights, b->prompt_len, b->decode, b->runs, b->threads, mv_variant(), prefetch_name(c), prefill_kernel(c),
               model_dtype_name(c->dtype), m->file_bytes, resident, huge_page_bytes(), t->decode_cpu_share,
               t->decode_steal_share, dk, attn_kernels_name(c->head_size));
        bench_print_cost_json(cs, 1);
        printf("}\n");
        return;
    }
    printf("model           %s (dim %d, hidden %d, %d layers, %d/%d heads, vocab %d, context %d)\n",
           m->path[0] ? m->path : "random weights", c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
           c->vocab_size, c->seq_len);
    printf("prefill         %10.1f tok/s   (%d-token prompt, median of %d runs, %s)\n", t->prefill_tok_s, b->prompt_len,
           b->runs, prefill_kernel(c));
    printf("decode          %10.1f tok/s   (%d tokens after the prompt, %s kernel, prefetch %s, %d threads)\n",
           t->decode_tok_s, b->decode, dk, prefetch_name(c), b->threads);
    printf("kernels         prefill %s, decode %s, attn %s\n", prefill_kernel(c), dk, attn_kernels_name(c->head_size));
    printf("prefill/decode  %10.1fx\n", t->prefill_tok_s / t->decode_tok_s);
    printf("decode CPU      %10.2f of the %d threads' wall time%s\n", t->decode_cpu_share, b->threads,
           t->decode_cpu_share < 0.9 ? " (other jobs took the cores: the figures understate this machine)" : "");
    printf("host steal      %10.2f of the CPUs' time while decoding%s\n", t->decode_steal_share,
           t->decode_steal_share > 0.05 ? " (the hypervisor ran other guests: the figures understate this machine)" : "");
    printf("weight bytes    %10.1f MB per decode step (+ %.1f MB of KV cache at this context)\n", t->weight_bytes / 1e6,
           t->kv_bytes / 1e6);
    printf("bandwidth       %10.2f GB/s (streaming read, median of %d passes between the runs)\n", t->bandwidth_gbs,
           3 * b->runs);
    printf("roofline_frac   %10.3f   (weights + KV; weights only: %.3f; %s weights)\n", t->roofline_frac,
           t->roofline_frac_weights, model_dtype_name(c->dtype));
    if (resident && m->file_bytes)
        printf("resident        %10.1f MB added by the model, file %.1f MB (%.2fx)\n", resident / 1e6, m->file_bytes / 1e6,
               (double)resident / m->file_bytes);
    printf("huge pages      %10.1f MB of the process on 2 MiB pages\n", huge_page_bytes() / 1e6);
    bench_print_cost_text(c, cs);
}

int bench_throughput(const Model *m, const BenchOpts *b, size_t resident, Err *e) {
    Throughput t = {0};
    if (measure(m, b, &t, e) != 0) return -1;
    CostStep cs;
    cost_step(&m->c, bench_cost_position(b), b->attn.window, b->attn.sinks, &cs);
    print_throughput(b, m, &t, &cs, resident);
    return 0;
}
