/* bench_long_synth.c — `bench --long --synthetic`: the same reads over a database written without a model.
 *
 * `ahascope bench --long --synthetic`: the reads of
 * `bench --long` over a database written without a model.
 *
 * A model-written 10 M-decision database takes over an hour to record on
 * two cores, nearly all of it the forward pass; the reads' speed depends on
 * the rows, not on where their values came from. So this mode writes, with
 * fixed seeds, a parent run of --long-tokens positions and a child run of
 * the same tokens (window doubled, one gate in FLIP_PER flipped) straight
 * from synthetic step traces through the store's own writer, each field
 * set as a --profile recording sets it and the attention top-k of the TUI,
 * then times the same reads as `bench --long` (summary, head rates, diff,
 * first replay frame).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/bench/bench.h"
#include "app/commands.h"
#include "engine/attn.h"
#include "engine/clock.h"
#include "store/store.h"

/* One child gate in FLIP_PER differs from its parent's. */
#define FLIP_PER 100

/* A 64-bit mix of x (splitmix64's finaliser): every field of every cell
 * drawn from it, so a rerun writes the same bytes. */
static uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A uniform in [0, 1) with 24 random bits, from draw k of cell c at pos
 * of stream s. */
static float draw(uint64_t s, int pos, int c, int k) {
    uint64_t x = mix(s ^ mix((uint64_t)pos << 32 ^ (uint64_t)c << 4 ^ (uint64_t)k));
    return (float)(x >> 40) / (float)(1 << 24);
}

/* Step pos of run `child` (0 the parent): every per-head field a profiled
 * step has, full float32 mantissas like a model's, the parent's gates
 * global with probability 0.3 and the child's flipped from them in one
 * cell of FLIP_PER; the top-k of every head among its far positions. */
static void fill_step(StepTrace *t, int pos, int child, int window, int sinks, int n_kv_heads) {
    const uint64_t gates = 0xA5A5, fields = child ? 0xC417D : 0x9A2E7;
    trace_clear(t);
    t->pos = pos, t->token = (int)(mix((uint64_t)pos) % 500), t->is_prompt = 1;
    snprintf(t->piece, sizeof t->piece, " t%d", t->token);
    t->logprob = pos ? -4 * draw(fields, pos, -1, 0) : NAN;
    t->entropy = 3 * draw(fields, pos, -1, 1);
    t->step_us = 1000;
    t->n_far = attn_n_far(pos, window, sinks);
    t->n_kv_heads = n_kv_heads;
    int ns, lo;
    attn_local_set(pos, window, sinks, &ns, &lo);
    for (int c = 0; c < trace_cells(t); c++) {
        int g = draw(gates, pos, c, 0) < 0.3f;
        if (child && draw(gates, pos, c, 1) < 1.0f / FLIP_PER) g = !g;
        t->gate[c] = (int8_t)g;
        t->keys_read[c] = g ? pos + 1 : ns + pos - lo + 1;
        t->score[c] = draw(fields, pos, c, 2);
        if (t->n_far > 0) {
            t->oracle_logit[c] = 16 * draw(fields, pos, c, 3) - 8;
            t->qada_logit[c] = 16 * draw(fields, pos, c, 4) - 8;
            t->qada_bulk_logit[c] = 40 * draw(fields, pos, c, 5) - 20;
            t->qada_rem_logit[c] = 16 * draw(fields, pos, c, 6) - 8;
            t->qada_rem_bulk_logit[c] = 16 * draw(fields, pos, c, 7) - 8;
            t->far_mean[c] = 4 * draw(fields, pos, c, 8) - 2;
            t->far_std[c] = 3 * draw(fields, pos, c, 9);
        }
        t->oracle_err[c] = draw(fields, pos, c, 10);
        for (int r = 0; r < t->top_k && r < t->n_far; r++) {
            t->top_pos[c * t->top_k + r] = ns + (int)(draw(fields, pos, c, 11 + r) * (float)(lo - ns));
            t->top_w[c * t->top_k + r] = draw(fields, pos, c, 20 + r) / (float)(r + 1);
        }
    }
    /* a KV head reads all pos + 1 keys when any query head of its group went global */
    int group = t->n_heads / t->n_kv_heads;
    for (int l = 0; l < t->n_layers; l++)
        for (int k = 0; k < t->n_kv_heads; k++) {
            int any = 0;
            for (int h = k * group; h < (k + 1) * group; h++) any |= t->gate[l * t->n_heads + h];
            t->kv_read[l * t->n_heads + k] = any ? pos + 1 : ns + pos - lo + 1;
        }
}

/* Write run `child` (the parent first, then its child) of n positions
 * into path; *secs gets the writing time. */
static int write_run(const Config *c, const AttnConfig *attn, int n, int child, const char *path, double *secs,
                     Err *e) {
    Store *st = store_open(path, STORE_WRITE, 5000, e);
    if (!st) return -1;
    StoreRunInfo r;
    bench_long_run_info(&r, "bench-long-synthetic", c, attn, child ? 1 : 0, n);
    r.window = attn->window * (child ? 2 : 1), r.profile = 1; /* every field set, as --profile */
    StepTrace *t = trace_new_top(c->n_layers, c->n_heads, APP_TUI_ATTN_TOP);
    int rc = !t ? err_set(e, "out of memory") : store_run_begin(st, &r, e);
    double t0 = clock_now();
    for (int pos = 0; pos < n && rc == 0; pos++) {
        fill_step(t, pos, child, r.window, r.sinks, c->n_kv_heads);
        rc = store_write_step(st, r.run_id, t, NULL, e);
    }
    if (rc == 0) rc = store_run_end(st, r.run_id, "done", e);
    *secs = clock_now() - t0;
    trace_free(t);
    if (store_close(st, rc ? NULL : e)) rc = -1;
    return rc;
}

static long long file_size(const char *path, const char *suffix) {
    char p[400];
    struct stat sb;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return stat(p, &sb) == 0 ? (long long)sb.st_size : 0;
}

static void print_result(const BenchOpts *b, const Config *c, long decisions, long long bytes, const double *write_s,
                         const BenchLongReads *r) {
    double bpd = decisions ? (double)bytes / decisions : 0;
    if (b->json) {
        printf("{\"synthetic\": 1, \"tokens\": %d, \"layers\": %d, \"heads\": %d, \"attn_top\": %d, \"runs\": %d, "
               "\"flip_share\": %.4f, \"decisions\": %ld, \"db_bytes\": %lld, \"bytes_per_decision\": %.2f, "
               "\"write_s\": %.3f, \"write_child_s\": %.3f, \"compare_s\": %.4f, \"head_rates_s\": %.4f, "
               "\"diff_s\": %.4f, \"first_frame_s\": %.4f, \"goal_read_s\": %.1f}\n",
               b->long_tokens, c->n_layers, c->n_heads, APP_TUI_ATTN_TOP, b->runs, 1.0 / FLIP_PER, decisions, bytes,
               bpd, write_s[0], write_s[1], r->compare_s, r->head_rates_s, r->diff_s, r->first_frame_s,
               BENCH_GOAL_READ_S);
        return;
    }
    printf("long run        %d tokens, %d layers x %d heads, synthetic (no model): %ld decisions a run\n",
           b->long_tokens, c->n_layers, c->n_heads, decisions);
    printf("                %-10s %-10s %s\n", "value", "goal", "");
    printf("B/decision TUI  %-10.1f <= %-7.0f (--profile, attention top %d, the parent alone; %lld bytes)\n", bpd,
           100.0, APP_TUI_ATTN_TOP, bytes);
    printf("written in      %-10.2f s (the parent; its child %.2f s, window x2, 1 gate in %d flipped)\n", write_s[0],
           write_s[1], FLIP_PER);
    printf("compare         %-10.3f <= %-7.1f s (summary of the run; median of %d)\n", r->compare_s,
           BENCH_GOAL_READ_S, b->runs);
    printf("head_rates      %-10.3f <= %-7.1f s\n", r->head_rates_s, BENCH_GOAL_READ_S);
    printf("diff            %-10.3f <= %-7.1f s (against its child)\n", r->diff_s, BENCH_GOAL_READ_S);
    printf("first frame     %-10.3f <= %-7.1f s (run info + the first %d steps)\n", r->first_frame_s,
           BENCH_GOAL_READ_S, 64);
    printf("(the read goals are at 1 M decisions, <= 2 s at 10 M)\n");
}

int bench_long_synthetic(const BenchOpts *b, Err *e) {
    Config c;
    if (bench_shape_config(b, &c, e)) return -1;
    if (b->long_tokens > c.seq_len)
        return err_usage(e, "--long-tokens %d exceeds the shape's context (%d)", b->long_tokens, c.seq_len);
    char path[300];
    BenchScratch sc;
    struct stat sb;
    if (b->db && (stat(b->db, &sb) == 0 || strlen(b->db) >= sizeof path))
        return err_usage(e, "--db %s: %s", b->db, strlen(b->db) >= sizeof path ? "path too long"
                                                    : "exists; --synthetic writes runs 1 and 2 of a new file");
    static const char *const names[] = {"synthetic.db"};
    if (b->db) snprintf(path, sizeof path, "%s", b->db);
    else if (bench_scratch_open(&sc, names, 1, e)) return -1;
    else snprintf(path, sizeof path, "%s", bench_scratch_file(&sc, 0));
    double write_s[2] = {0, 0};
    BenchLongReads r;
    int rc = write_run(&c, &b->attn, b->long_tokens, 0, path, &write_s[0], e);
    long long bytes = file_size(path, "") + file_size(path, "-wal"); /* the parent alone, checkpointed on close */
    if (rc == 0) rc = write_run(&c, &b->attn, b->long_tokens, 1, path, &write_s[1], e);
    if (rc == 0) rc = bench_long_reads(b, path, &r, e);
    if (!b->db) bench_scratch_close(&sc); /* the file of --db is kept, to be read again */
    if (rc == 0) print_result(b, &c, (long)b->long_tokens * c.n_layers * c.n_heads, bytes, write_s, &r);
    return rc;
}
