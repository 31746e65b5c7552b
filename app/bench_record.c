/* bench_record.c — `ahascope bench --record`: how fast the store writes,
 * and what recording costs a real run.
 *
 * Writer speed: synthetic steps of the model's shape (every field set, as
 * under --profile) written into a file database, one transaction per step
 * (the default) and batched 64 steps per transaction; decision rows/s,
 * median of --runs. Cost: the same --profile run (prompt, then decode)
 * timed without and with recording, alternating so drift hits both alike;
 * overhead = median recorded time / median plain time - 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/args.h"
#include "app/bench.h"
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
        t->score[i] = u, t->gate[i] = u > 0.5f, t->oracle_mass[i] = u * u, t->oracle_err[i] = u * 0.5f;
        t->qada_mass[i] = 1 - u, t->qada_bulk_mass[i] = u * 0.9f, t->keys_read[i] = pos + 1;
    }
}

static int begin_run(Store *st, const Config *c, const char *what, int64_t *id, Err *e) {
    StoreRunInfo r;
    memset(&r, 0, sizeof r);
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
    double t0 = args_seconds();
    for (int p = 0; p < steps; p++) {
        fill_synthetic(t, p);
        if (store_write_step(st, run, t, NULL, e)) goto out;
    }
    if (store_run_end(st, run, "done", e)) goto out;
    rate = (double)steps * trace_cells(t) / (args_seconds() - t0);
out:
    store_set_commit_every(st, 1);
    trace_free(t);
    return rate;
}

typedef struct {
    RunState rs;
    StepTrace **pre; /* [prompt_len] */
    StepTrace *step;
    int *ids;        /* [prompt_len + decode] */
} RunBufs;

/* One --profile run: batched prompt, then decode one token at a time; with
 * st non-NULL every step is recorded as it is produced. Returns seconds. */
static double timed_run(const Model *m, const BenchOpts *b, RunBufs *rb, Store *st, Err *e) {
    int P = b->prompt_len, D = b->decode;
    int64_t run = 0;
    if (st && begin_run(st, &m->c, "recorded", &run, e)) return -1;
    fwd_reset(&rb->rs);
    double t0 = args_seconds();
    fwd_forward(m, &rb->rs, &b->attn, rb->ids, P, 0, NULL, rb->pre);
    for (int i = 0; st && i < P; i++)
        if (store_write_step(st, run, rb->pre[i], NULL, e)) return -1;
    for (int i = 0; i < D; i++) {
        fwd_forward(m, &rb->rs, &b->attn, &rb->ids[P + i], 1, P + i, NULL, &rb->step);
        if (st && store_write_step(st, run, rb->step, NULL, e)) return -1;
    }
    double dt = args_seconds() - t0;
    if (st && store_run_end(st, run, "done", e)) return -1;
    return dt;
}

static int run_bufs_init(RunBufs *rb, const Model *m, const BenchOpts *b, Err *e) {
    const Config *c = &m->c;
    memset(rb, 0, sizeof *rb);
    if (fwd_init(&rb->rs, c, b->prompt_len, b->threads, e)) return -1;
    rb->pre = calloc(b->prompt_len, sizeof *rb->pre);
    rb->ids = malloc((size_t)(b->prompt_len + b->decode) * sizeof *rb->ids);
    rb->step = trace_new(c->n_layers, c->n_heads);
    int ok = rb->pre && rb->ids && rb->step;
    for (int i = 0; ok && i < b->prompt_len; i++) ok = (rb->pre[i] = trace_new(c->n_layers, c->n_heads)) != NULL;
    for (int i = 0; ok && i < b->prompt_len + b->decode; i++) rb->ids[i] = 1 + (i * 7919) % (c->vocab_size - 1);
    return ok ? 0 : err_set(e, "out of memory");
}

static void run_bufs_free(RunBufs *rb, int prompt_len) {
    for (int i = 0; rb->pre && i < prompt_len; i++) trace_free(rb->pre[i]);
    free(rb->pre);
    free(rb->ids);
    trace_free(rb->step);
    fwd_free(&rb->rs);
}

typedef struct {
    double rows_s, rows_s_batched, plain_s, recorded_s;
} RecordResult;

static int measure(const Model *m, const BenchOpts *b, Store *st, RecordResult *out, Err *e) {
    const Config *c = &m->c;
    int R = b->runs, cells = c->n_layers * c->n_heads;
    int steps = 300000 / cells > 100 ? 300000 / cells : 100;
    double *w1 = calloc(R, sizeof *w1), *w64 = calloc(R, sizeof *w64);
    double *plain = calloc(R, sizeof *plain), *rec = calloc(R, sizeof *rec);
    RunBufs rb;
    int rc = -1;
    if (!w1 || !w64 || !plain || !rec) { err_set(e, "out of memory"); goto out; }
    for (int r = 0; r < R; r++)
        if ((w1[r] = writer_rows_per_s(st, c, steps, 1, e)) < 0 || (w64[r] = writer_rows_per_s(st, c, steps, 64, e)) < 0)
            goto out;
    if (run_bufs_init(&rb, m, b, e)) { run_bufs_free(&rb, b->prompt_len); goto out; }
    timed_run(m, b, &rb, NULL, e); /* warm-up: page in the weights */
    for (int r = 0; r < R && rc != -2; r++) {
        int rec_first = r % 2; /* alternate the order so drift favours neither */
        double a = timed_run(m, b, &rb, rec_first ? st : NULL, e);
        double z = timed_run(m, b, &rb, rec_first ? NULL : st, e);
        if (a < 0 || z < 0) rc = -2;
        plain[r] = rec_first ? z : a;
        rec[r] = rec_first ? a : z;
    }
    run_bufs_free(&rb, b->prompt_len);
    if (rc == -2) { rc = -1; goto out; }
    out->rows_s = bench_median(w1, R);
    out->rows_s_batched = bench_median(w64, R);
    out->plain_s = bench_median(plain, R);
    out->recorded_s = bench_median(rec, R);
    rc = 0;
out:
    free(w1), free(w64), free(plain), free(rec);
    return rc;
}

static void print_record(const BenchOpts *b, const Model *m, const RecordResult *r) {
    const Config *c = &m->c;
    int n = b->prompt_len + b->decode;
    double overhead = r->recorded_s / r->plain_s - 1;
    if (b->json) {
        printf("{\"rows_per_s\": %.0f, \"rows_per_s_batched64\": %.0f, \"run_s_plain\": %.4f, \"run_s_recorded\": %.4f, "
               "\"record_overhead\": %.4f, \"positions\": %d, \"prompt_len\": %d, \"decode\": %d, \"layers\": %d, "
               "\"heads\": %d, \"runs\": %d}\n",
               r->rows_s, r->rows_s_batched, r->plain_s, r->recorded_s, overhead, n, b->prompt_len, b->decode,
               c->n_layers, c->n_heads, b->runs);
        return;
    }
    printf("writer          %10.0f decision rows/s (one transaction per step, %dx%d heads, median of %d)\n", r->rows_s,
           c->n_layers, c->n_heads, b->runs);
    printf("writer batched  %10.0f decision rows/s (64 steps per transaction)\n", r->rows_s_batched);
    printf("run, plain      %10.3f s   (%d-token prompt + %d decoded, --profile, %.1f tok/s)\n", r->plain_s,
           b->prompt_len, b->decode, n / r->plain_s);
    printf("run, recorded   %10.3f s   (same run, every step committed as produced)\n", r->recorded_s);
    printf("record_overhead %10.2f %%\n", 100 * overhead);
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
    Store *st = store_open(path, STORE_WRITE, 5000, e);
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
