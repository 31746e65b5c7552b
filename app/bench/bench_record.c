/* bench_record.c — `bench --record`: how fast the store writes, and what recording costs a real run.
 *
 * `ahascope bench --record`: how fast the store writes,
 * and what recording costs a real run.
 *
 * Writer speed: synthetic steps of the model's shape (every field set, as
 * under --profile) written into a file database, one transaction per step
 * (the default) and batched 64 steps per transaction; decision rows/s,
 * median of --runs. Cost: the same --profile run (prompt, then decode)
 * without and with recording, their steps interleaved (see measure_cost).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "app/version.h"
#include "engine/forward.h"
#include "store/store.h"

static void fill_synthetic(StepTrace *t, int pos) {
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(pos + 1);
    t->pos = pos, t->token = pos % 500, t->is_prompt = pos < 8;
    snprintf(t->piece, sizeof t->piece, " tok%d", pos);
    t->logprob = -1.5f, t->entropy = 2.0f, t->step_us = 1000;
    for (int i = 0; i < trace_cells(t); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        float u = (float)(x >> 40) / (float)(1 << 24);
        t->score[i] = u, t->gate[i] = u > 0.5f, t->oracle_logit[i] = 8 * u - 4, t->oracle_err[i] = u * 0.5f;
        t->qada_logit[i] = 4 - 8 * u, t->qada_bulk_logit[i] = 30 * u, t->keys_read[i] = pos + 1;
    }
}

static int begin_run(Store *st, const Config *c, const char *what, int64_t *id, Err *e) {
    StoreRunInfo r;
    memset(&r, 0, sizeof r);
    r.program_version = AHASCOPE_VERSION;
    snprintf(r.model, sizeof r.model, "bench");
    snprintf(r.policy, sizeof r.policy, "%s", what);
    r.n_layers = c->n_layers, r.n_heads = c->n_heads, r.dim = c->dim;
    r.prompt = "";
    if (store_run_begin(st, &r, e)) return -1;
    *id = r.run_id;
    return 0;
}

/* Decision rows per second for `steps` synthetic steps. */
static double writer_rows_per_s(Store *st, const Config *c, int steps, int commit_every, Err *e) {
    StepTrace *t = trace_new(c->n_layers, c->n_heads);
    int64_t run;
    double rate = -1;
    if (!t || begin_run(st, c, "writer", &run, e)) goto out;
    store_set_commit_every(st, commit_every);
    double t0 = clock_now();
    for (int p = 0; p < steps; p++) {
        fill_synthetic(t, p);
        if (store_write_step(st, run, t, NULL, e)) goto out;
    }
    if (store_run_end(st, run, "done", e)) goto out;
    rate = (double)steps * trace_cells(t) / (clock_now() - t0);
out:
    store_set_commit_every(st, 1);
    trace_free(t);
    return rate;
}

typedef struct {
    RunState rs;
    StepTrace **pre; /* [prompt_len] */
    StepTrace *step;
} RunBufs;

/* The cost of recording is measured step by step, not run by run: two
 * copies of the same --profile run advance together, one recorded, one not,
 * their decode steps interleaved one for one with the order flipping every
 * step, and the overhead is the median of the paired steps' ratios. Timing
 * the two runs whole and taking each side's median separately once reported
 * -63% (plain 9.3 s, recorded 3.4 s): on this shared host a load that
 * changes mid-measurement lands on one side's median and not the other's,
 * and the writer benchmark's own writeback ran into the first timed runs.
 * Paired steps milliseconds apart see the same machine. */
static int run_bufs_init(RunBufs *rb, const Model *m, const BenchOpts *b, Err *e) {
    const Config *c = &m->c;
    memset(rb, 0, sizeof *rb);
    if (fwd_init(&rb->rs, c, b->prompt_len, b->threads, e)) return -1;
    rb->pre = calloc(b->prompt_len, sizeof *rb->pre);
    rb->step = trace_new(c->n_layers, c->n_heads);
    int ok = rb->pre && rb->step;
    for (int i = 0; ok && i < b->prompt_len; i++) ok = (rb->pre[i] = trace_new(c->n_layers, c->n_heads)) != NULL;
    return ok ? 0 : err_set(e, "out of memory");
}

static void run_bufs_free(RunBufs *rb, int prompt_len) {
    for (int i = 0; rb->pre && i < prompt_len; i++) trace_free(rb->pre[i]);
    free(rb->pre);
    trace_free(rb->step);
    fwd_free(&rb->rs);
}

/* Prefill of one side (recorded when run != 0); seconds, -1 on error. */
static double timed_prefill(const Model *m, const BenchOpts *b, RunBufs *rb, const int *ids, Store *st, int64_t run,
                            Err *e) {
    fwd_reset(&rb->rs);
    double t0 = clock_now();
    fwd_forward(m, &rb->rs, &b->attn, ids, b->prompt_len, 0, NULL, rb->pre);
    for (int i = 0; run && i < b->prompt_len; i++)
        if (store_write_step(st, run, rb->pre[i], NULL, e)) return -1;
    return clock_now() - t0;
}

/* Decode step at pos of one side (recorded when run != 0); seconds. */
static double timed_step(const Model *m, const BenchOpts *b, RunBufs *rb, const int *id, int pos, Store *st,
                         int64_t run, Err *e) {
    double t0 = clock_now();
    fwd_forward(m, &rb->rs, &b->attn, id, 1, pos, NULL, &rb->step);
    if (run && store_write_step(st, run, rb->step, NULL, e)) return -1;
    return clock_now() - t0;
}

/* One round: both sides run the same tokens; whole-run seconds into
 * *plain_s / *rec_s and each decode step's time into plain[i], rec[i]. */
static int paired_round(const Model *m, const BenchOpts *b, RunBufs side[2], const int *ids, Store *st,
                        double *plain, double *rec, double *plain_s, double *rec_s, Err *e) {
    int64_t run;
    if (begin_run(st, &m->c, "recorded", &run, e)) return -1;
    int64_t runs[2] = {0, run}; /* side 0 plain, side 1 recorded */
    double *step[2] = {plain, rec}, total[2];
    for (int k = 0; k < 2; k++)
        if ((total[k] = timed_prefill(m, b, &side[k], ids, st, runs[k], e)) < 0) return -1;
    for (int i = 0; i < b->decode; i++)
        for (int j = 0; j < 2; j++) {
            int k = (i + j) % 2; /* the order flips every step */
            double dt = timed_step(m, b, &side[k], &ids[b->prompt_len + i], b->prompt_len + i, st, runs[k], e);
            if (dt < 0) return -1;
            step[k][i] = dt, total[k] += dt;
        }
    *plain_s = total[0], *rec_s = total[1];
    return store_run_end(st, run, "done", e);
}

double bench_paired_overhead(const double *plain, const double *rec, int n) {
    double *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r || n <= 0) { free(r); return NAN; }
    for (int i = 0; i < n; i++) r[i] = rec[i] / plain[i];
    double med = bench_median(r, n) - 1;
    free(r);
    return med;
}

typedef struct {
    double rows_s, rows_s_batched, plain_s, recorded_s, overhead;
    int steps;
} RecordResult;

/* The cost of recording: --runs paired rounds after one warm-up round. */
static int measure_cost(const Model *m, const BenchOpts *b, Store *st, RecordResult *out, Err *e) {
    int R = b->runs, D = b->decode, n = b->prompt_len + D;
    RunBufs side[2];
    double *plain = calloc((size_t)R * D + 1, sizeof *plain), *rec = calloc((size_t)R * D + 1, sizeof *rec);
    double *tp = calloc(R, sizeof *tp), *tr = calloc(R, sizeof *tr);
    int *ids = malloc((size_t)n * sizeof *ids), rc = -1;
    int ok0 = run_bufs_init(&side[0], m, b, e) == 0, ok1 = ok0 && run_bufs_init(&side[1], m, b, e) == 0;
    if (!ok0 || !ok1 || !plain || !rec || !tp || !tr || !ids) {
        if (ok0 && ok1) err_set(e, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) ids[i] = 1 + (i * 7919) % (m->c.vocab_size - 1);
    double w0, w1; /* warm-up: page in the weights and both KV caches */
    if (paired_round(m, b, side, ids, st, plain, rec, &w0, &w1, e)) goto out;
    for (int r = 0; r < R; r++)
        if (paired_round(m, b, side, ids, st, plain + (size_t)r * D, rec + (size_t)r * D, &tp[r], &tr[r], e)) goto out;
    out->overhead = bench_paired_overhead(plain, rec, R * D);
    out->plain_s = bench_median(tp, R);
    out->recorded_s = bench_median(tr, R);
    out->steps = R * D;
    rc = 0;
out:
    if (ok0) run_bufs_free(&side[0], b->prompt_len);
    if (ok1) run_bufs_free(&side[1], b->prompt_len);
    free(plain), free(rec), free(tp), free(tr), free(ids);
    return rc;
}

/* Writer speed after the cost, so that the writer's megabytes of writeback
 * do not run into the timed steps. */
static int measure(const Model *m, const BenchOpts *b, Store *st, RecordResult *out, Err *e) {
    const Config *c = &m->c;
    int R = b->runs, cells = c->n_layers * c->n_heads;
    int steps = 300000 / cells > 100 ? 300000 / cells : 100;
    if (measure_cost(m, b, st, out, e)) return -1;
    double *w1 = calloc(R, sizeof *w1), *w64 = calloc(R, sizeof *w64);
    int rc = -1;
    if (!w1 || !w64) { err_set(e, "out of memory"); goto out; }
    for (int r = 0; r < R; r++)
        if ((w1[r] = writer_rows_per_s(st, c, steps, 1, e)) < 0 || (w64[r] = writer_rows_per_s(st, c, steps, 64, e)) < 0)
            goto out;
    out->rows_s = bench_median(w1, R);
    out->rows_s_batched = bench_median(w64, R);
    rc = 0;
out:
    free(w1), free(w64);
    return rc;
}

static void print_record(const BenchOpts *b, const Model *m, const RecordResult *r) {
    const Config *c = &m->c;
    int n = b->prompt_len + b->decode;
    double overhead = r->overhead;
    if (b->json) {
        printf("{\"rows_per_s\": %.0f, \"rows_per_s_batched64\": %.0f, \"run_s_plain\": %.4f, \"run_s_recorded\": %.4f, "
               "\"record_overhead\": %.4f, \"positions\": %d, \"prompt_len\": %d, \"decode\": %d, \"layers\": %d, "
               "\"heads\": %d, \"runs\": %d, \"paired_steps\": %d}\n",
               r->rows_s, r->rows_s_batched, r->plain_s, r->recorded_s, overhead, n, b->prompt_len, b->decode,
               c->n_layers, c->n_heads, b->runs, r->steps);
        return;
    }
    printf("writer          %10.0f decision rows/s (one transaction per step, %dx%d heads, median of %d)\n", r->rows_s,
           c->n_layers, c->n_heads, b->runs);
    printf("writer batched  %10.0f decision rows/s (64 steps per transaction)\n", r->rows_s_batched);
    printf("run, plain      %10.3f s   (%d-token prompt + %d decoded, --profile, %.1f tok/s)\n", r->plain_s,
           b->prompt_len, b->decode, n / r->plain_s);
    printf("run, recorded   %10.3f s   (same run, every step committed as produced)\n", r->recorded_s);
    printf("record_overhead %10.2f %%  (median of %d paired decode steps' ratios)\n", 100 * overhead, r->steps);
}

int bench_record(const Model *m, const BenchOpts *b, Err *e) {
    if (b->prompt_len + b->decode > m->c.seq_len)
        return err_set(e, "prompt (%d) + decode (%d) exceed the context (%d)", b->prompt_len, b->decode,
                       m->c.seq_len);
    char dir[256] = "", path[1100];
    if (b->db) snprintf(path, sizeof path, "%s", b->db);
    else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/ahascope-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) return err_set(e, "cannot create a temporary directory in %s", dir);
        snprintf(path, sizeof path, "%s/bench.db", dir);
    }
    Store *st = store_open(path, STORE_WRITE, STORE_BUSY_MS, e);
    RecordResult r;
    int rc = st ? measure(m, b, st, &r, e) : -1;
    if (st && store_close(st, rc ? NULL : e)) rc = -1;
    if (dir[0]) { /* the temporary database goes with its directory */
        const char *suffix[] = {"", "-wal", "-shm"};
        for (int i = 0; i < 3; i++) {
            char p[1200];
            snprintf(p, sizeof p, "%s%s", path, suffix[i]);
            unlink(p);
        }
        rmdir(dir);
    }
    if (rc == 0) print_record(b, m, &r);
    return rc;
}
