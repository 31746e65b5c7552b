/* bench_long.c — `bench --long`: what a long recorded run costs in the database and in reads over it.
 *
 * `ahascope bench --long`: what a long recorded run costs
 * in the database and in the time of the reads made over it.
 *
 * A random-weights model (fixed seed) runs a prompt of --long-tokens
 * random ids (fixed seed) and records it twice, each into a fresh
 * database of a scratch directory: as the TUI records by default
 * (--profile, the top APP_TUI_ATTN_TOP far positions of every head, then a
 * child run of the same tokens with another window, as a `w` press makes)
 * and as `record --profile` does without --attn-top. It prints the bytes
 * per decision of each file, the reads' medians over --runs (summary,
 * head rates, diff against the child, the first replay frame) and the
 * share recording adds to a step, beside the goals the storage work aims
 * at, and how long a key waits on the TUI's UI thread while R's summary
 * and D's diff run beside it as pane jobs. These are the figures that work is
 * measured by.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "app/commands.h"
#include "app/tui/job.h"
#include "app/version.h"
#include "engine/forward.h"
#include "store/store.h"
#include "views/explain.h"
#include "views/screen.h"

/* Positions fed to the model per call: the prompt is prefilled in chunks,
 * and each chunk is one paired measurement of the recording's cost. */
#define LONG_CHUNK 64

/* The goals of the storage work, printed beside today's figures. */
#define GOAL_BPD_TOP 100.0     /* B/decision, recorded with the attention top-k */
#define GOAL_BPD_PROFILE 64.0  /* B/decision, record --profile */
#define GOAL_READ_S BENCH_GOAL_READ_S /* summary, head rates, diff, first frame at 1 M decisions */
#define GOAL_OVERHEAD 0.05     /* recording's share of a step at the 1B-class shape */
#define GOAL_KEY_MS 50.0       /* the longest a key waits while a pane job runs */

typedef struct {
    long decisions;             /* count(*) of the first run's decisions (TUI-style file) */
    long decisions_profile;     /* the same in the record --profile file */
    double bpd, bpd_profile;    /* bytes per decision of each file */
    long long db_bytes, db_bytes_profile;
    double compare_s, head_rates_s, diff_s, first_frame_s;
    double step_ms_plain, step_ms_recorded, overhead;            /* TUI-style recording */
    double step_ms_plain_profile, step_ms_recorded_profile, overhead_profile; /* record --profile */
    /* a key on the UI thread (handled, its frame drawn): median with nothing running, median, 99th
     * percentile and longest while R's summary and D's diff run as pane jobs, the keys pressed then,
     * and the two jobs' time */
    double key_idle_ms, key_median_ms, key_p99_ms, key_max_ms, key_job_s;
    int key_presses;
} LongResult;

static long long file_bytes(const char *path, const char *suffix) {
    char p[400];
    struct stat sb;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return stat(p, &sb) == 0 ? (long long)sb.st_size : 0;
}

/* The database and its WAL: what the run takes on disk once closed. */
static long long db_bytes(const char *path) { return file_bytes(path, "") + file_bytes(path, "-wal"); }

/* Everything one recording needs: the forward state and a chunk of traces. */
typedef struct {
    RunState rs;
    StepTrace *tr[LONG_CHUNK];
} LongBufs;

static int bufs_init(LongBufs *lb, const Config *c, int top_k, int threads, Err *e) {
    memset(lb, 0, sizeof *lb);
    if (fwd_init(&lb->rs, c, LONG_CHUNK, threads, e)) return -1;
    for (int i = 0; i < LONG_CHUNK; i++)
        if (!(lb->tr[i] = trace_new_top(c->n_layers, c->n_heads, top_k))) return err_set(e, "out of memory");
    return 0;
}

static void bufs_free(LongBufs *lb) {
    for (int i = 0; i < LONG_CHUNK; i++) trace_free(lb->tr[i]);
    fwd_free(&lb->rs);
}

void bench_long_run_info(StoreRunInfo *r, const char *model, const Config *c, const AttnConfig *attn, int64_t parent,
                         int n) {
    memset(r, 0, sizeof *r);
    r->program_version = AHASCOPE_VERSION;
    snprintf(r->model, sizeof r->model, "%s", model);
    snprintf(r->policy, sizeof r->policy, "%s", aha_policy_name(attn->policy));
    r->n_layers = c->n_layers, r->n_heads = c->n_heads, r->n_kv_heads = c->n_kv_heads, r->dim = c->dim;
    r->seq_len = c->seq_len, r->vocab_size = c->vocab_size;
    r->window = attn->window, r->sinks = attn->sinks, r->tau = attn->tau, r->theta_logit = attn->theta_logit;
    r->p = attn->p, r->profile = attn->profile, r->parent_run_id = parent, r->steps = n;
    r->prompt = "";
}

/* Run and record the prompt as one run of st (a child of parent when
 * parent > 0); plain[i] and rec[i] get chunk i's compute time and compute
 * plus write time per position, in seconds. */
static int record_run(const Model *m, const BenchOpts *b, Store *st, const AttnConfig *attn, int top_k,
                      const int *ids, int64_t parent, int64_t *run, double *plain, double *rec, Err *e) {
    const Config *c = &m->c;
    int n = b->long_tokens, rc = -1;
    LongBufs lb;
    StoreRunInfo r;
    bench_long_run_info(&r, "bench-long", c, attn, parent, n);
    if (bufs_init(&lb, c, top_k, b->threads, e) || store_run_begin(st, &r, e)) goto out;
    *run = r.run_id;
    for (int pos = 0, k = 0; pos < n; pos += LONG_CHUNK, k++) {
        int len = n - pos < LONG_CHUNK ? n - pos : LONG_CHUNK;
        double t0 = clock_now();
        fwd_forward(m, &lb.rs, attn, ids + pos, len, pos, NULL, lb.tr);
        double t1 = clock_now();
        for (int i = 0; i < len; i++)
            if (store_write_step(st, r.run_id, lb.tr[i], NULL, e)) goto out;
        double t2 = clock_now();
        if (plain) plain[k] = (t1 - t0) / len, rec[k] = (t2 - t0) / len;
    }
    rc = store_run_end(st, r.run_id, "done", e);
out:
    bufs_free(&lb);
    return rc;
}

/* count(*) of a run's decisions, through the store's read-only query. */
static long count_decisions(Store *st, int64_t run, Err *e) {
    char sql[128], *buf = NULL;
    size_t len = 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM decisions WHERE run_id = %lld", (long long)run);
    FILE *f = open_memstream(&buf, &len);
    if (!f) return err_set(e, "out of memory");
    int rc = store_query(st, sql, STORE_FMT_CSV, f, e);
    fclose(f);
    const char *nl = buf ? strchr(buf, '\n') : NULL; /* past the header line */
    long count = rc == 0 && nl ? strtol(nl + 1, NULL, 10) : -1;
    free(buf);
    if (rc == 0 && count < 0) err_set(e, "no count of run %lld's decisions", (long long)run);
    return count;
}

/* Record one file's first run (with its chunk timings) and count it.
 * Closes the store, so the WAL is checkpointed, and measures the file
 * with the run alone in it. */
static int record_file(const Model *m, const BenchOpts *b, const char *path, const AttnConfig *attn, int top_k,
                       const int *ids, double *plain, double *rec, long *decisions, long long *bytes, Err *e) {
    Store *st = store_open(path, STORE_WRITE, 5000, e);
    int64_t run = 0;
    if (!st) return -1;
    int rc = record_run(m, b, st, attn, top_k, ids, 0, &run, plain, rec, e);
    if (store_close(st, rc ? NULL : e)) rc = -1;
    *bytes = db_bytes(path);
    if (rc || !(st = store_open(path, STORE_READ, 5000, e))) return -1; /* queries run read-only */
    if ((*decisions = count_decisions(st, run, e)) < 0) rc = -1;
    if (store_close(st, rc ? NULL : e)) rc = -1;
    return rc;
}

/* The child run a `w` press makes: the same tokens under another window. */
static int record_child(const Model *m, const BenchOpts *b, const char *path, const AttnConfig *attn, int top_k,
                        const int *ids, Err *e) {
    Store *st = store_open(path, STORE_WRITE, 5000, e);
    if (!st) return -1;
    AttnConfig child = *attn;
    child.window = attn->window * 2;
    int64_t run;
    int rc = record_run(m, b, st, &child, top_k, ids, 1, &run, NULL, NULL, e);
    if (store_close(st, rc ? NULL : e)) rc = -1;
    return rc;
}

/* The first frame of a replay: the run's row, then its first chunk of
 * steps read into traces of the recorded top-k, as replay.c loads it. */
static int first_frame(Store *st, int64_t run, Err *e) {
    enum { CHUNK = 64 };
    StoreRunInfo r;
    StepTrace *buf[CHUNK] = {0};
    if (store_run_info(st, run, &r, e)) return -1;
    int k = store_run_attn_top(st, run, e), rc = k < 0 ? -1 : 0;
    for (int i = 0; i < CHUNK && rc == 0; i++)
        if (!(buf[i] = trace_new_top(r.n_layers, r.n_heads, k))) rc = err_set(e, "out of memory");
    if (rc == 0 && store_read_steps(st, run, 0, CHUNK, buf, e) < 0) rc = -1;
    for (int i = 0; i < CHUNK; i++) trace_free(buf[i]);
    store_run_info_free(&r);
    return rc;
}

int bench_long_reads(const BenchOpts *b, const char *path, BenchLongReads *out, Err *e) {
    int R = b->runs, rc = -1;
    double *t = calloc((size_t)R * 4, sizeof *t);
    FILE *null = fopen("/dev/null", "w");
    Store *st = store_open(path, STORE_READ, 5000, e);
    if (!t || !null) { err_set(e, "out of memory or no /dev/null"); goto out; }
    if (!st) goto out;
    for (int r = 0; r < R; r++) {
        double t0 = clock_now();
        if (store_compare(st, 1, 0, NULL, null, e)) goto out;
        double t1 = clock_now();
        if (store_query(st, "SELECT * FROM head_rates WHERE run_id = 1", STORE_FMT_CSV, null, e)) goto out;
        double t2 = clock_now();
        if (store_compare(st, 1, 2, NULL, null, e)) goto out;
        double t3 = clock_now();
        if (first_frame(st, 1, e)) goto out;
        double t4 = clock_now();
        t[r] = t1 - t0, t[R + r] = t2 - t1, t[2 * R + r] = t3 - t2, t[3 * R + r] = t4 - t3;
    }
    out->compare_s = bench_median(t, R), out->head_rates_s = bench_median(t + R, R);
    out->diff_s = bench_median(t + 2 * R, R), out->first_frame_s = bench_median(t + 3 * R, R);
    rc = 0;
out:
    if (st && store_close(st, rc ? NULL : e)) rc = -1;
    if (null) fclose(null);
    free(t);
    return rc;
}

/* The reads of run 1 into the result: the summary and the diff as
 * `compare` prints them, the head_rates view as a user's query reads it,
 * and a replay's first frame. */
static int time_reads(const BenchOpts *b, const char *path, LongResult *out, Err *e) {
    BenchLongReads r;
    if (bench_long_reads(b, path, &r, e)) return -1;
    out->compare_s = r.compare_s, out->head_rates_s = r.head_rates_s;
    out->diff_s = r.diff_s, out->first_frame_s = r.first_frame_s;
    return 0;
}

/* R's job, as the TUI runs it: the run's summary over the job's connection. */
static int summary_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    return store_compare(st, *(int64_t *)tui_job_arg(r), 0, NULL, out, e);
}

/* D's job: the diff of run 1 against its child, run 2 (the longest read). */
static int diff_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    (void)r;
    return store_compare(st, 1, 2, NULL, out, e);
}

/* Read run `run` of the file at db into m, as a replay shows it. */
static int load_view(ViewModel *m, const char *db, int64_t run, Err *e) {
    enum { CHUNK = 64 };
    StoreRunInfo r;
    Store *st = store_open(db, STORE_READ, 5000, e);
    if (!st) return -1;
    if (store_run_info(st, run, &r, e)) {
        store_close(st, NULL);
        return -1;
    }
    int k = store_run_attn_top(st, run, e), rc = k < 0 || view_init(m, r.n_layers, r.n_heads, e) ? -1 : 0;
    StepTrace *buf[CHUNK] = {0};
    for (int i = 0; i < CHUNK && rc == 0; i++)
        if (!(buf[i] = trace_new_top(r.n_layers, r.n_heads, k))) rc = err_set(e, "out of memory");
    for (int pos = 0, got = CHUNK; rc == 0 && got == CHUNK; pos += got) {
        got = store_read_steps(st, run, pos, CHUNK, buf, e);
        for (int i = 0; i < got && rc == 0; i++) rc = view_push(m, buf[i], e);
        if (got < 0) rc = -1;
    }
    for (int i = 0; i < CHUNK; i++) trace_free(buf[i]);
    store_run_info_free(&r);
    store_close(st, NULL);
    m->colour = VIEW_COLOUR_256;
    return rc;
}

/* Press ? and x (the help opened and closed) every 20 ms, a user's pace,
 * each answered as the UI loop answers a key: the key, then the frame it
 * asks for. Until n are timed or, with a job, the job ends. */
static int press_keys(ViewScreen *s, ViewModel *m, TuiJob *job, double *ms, int n, int *got, Err *e) {
    int kind;
    long count;
    double secs;
    *got = 0;
    while (*got < n && (!job || tui_job_progress(job, &kind, &count, &secs))) {
        double t0 = clock_now();
        view_key(m, *got % 2 ? 'x' : '?');
        if (view_frame(s, m, e)) return -1;
        ms[(*got)++] = 1e3 * (clock_now() - t0);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* The job run to its end, its seconds added to the result's; how it ended. */
static int job_finish(TuiJob *job, LongResult *out, Err *e) {
    int kind, rc = 0;
    long count;
    double secs;
    while (tui_job_progress(job, &kind, &count, &secs)) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    TuiJobResult jr;
    if (tui_job_take(job, &jr)) {
        out->key_job_s += jr.secs;
        if (jr.end != TUI_JOB_OK) rc = err_set(e, "a read as a pane job failed: %s", jr.msg);
        tui_job_result_free(&jr);
    }
    return rc;
}

/* How long a key waits on the TUI's UI thread while R and D run: run 1 of
 * db drawn on an off-screen 140x45 terminal, keys pressed 50 times with
 * nothing running, then for as long as R's summary and then D's diff with
 * the child run on a job's thread (app/tui/job.h) beside it, as the TUI
 * runs them. */
static int key_wait(const char *db, LongResult *out, Err *e) {
    enum { MAXK = 1 << 16, IDLE = 50 };
    int64_t run = 1;
    ViewModel m;
    memset(&m, 0, sizeof m);
    TuiJob job = {0};
    double *ms = calloc(MAXK, sizeof *ms);
    FILE *o = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = NULL;
    ViewScreen s;
    int have_s = 0, n = 0;
    int rc = (!ms || !o || !in) ? err_set(e, "cannot open /dev/null or allocate") : 0;
    if (!rc) rc = load_view(&m, db, run, e);
    if (!rc && !(scr = newterm("xterm-256color", o, in)) && !(scr = newterm("xterm", o, in)))
        rc = err_set(e, "no terminfo entry for xterm-256color or xterm");
    if (!rc) {
        resizeterm(45, 140);
        have_s = (rc = view_screen_init(&s, &m, e)) == 0;
    }
    if (!rc) rc = press_keys(&s, &m, NULL, ms, IDLE, &n, e);
    if (!rc) out->key_idle_ms = bench_median(ms, n);
    TuiJobWork works[2] = {summary_work, diff_work};
    int timed = 0;
    for (int w = 0; w < 2 && !rc; w++) {
        int got = 0;
        rc = tui_job_start(&job, db, w, works[w], &run, sizeof run, NULL, e);
        if (!rc) rc = press_keys(&s, &m, &job, ms + timed, MAXK - timed, &got, e);
        if (!rc) rc = job_finish(&job, out, e);
        timed += got;
    }
    if (!rc) {
        n = timed;
        out->key_presses = n;
        for (int i = 0; i < n; i++) out->key_max_ms = ms[i] > out->key_max_ms ? ms[i] : out->key_max_ms;
        out->key_median_ms = n ? bench_median(ms, n) : 0; /* sorts ms */
        out->key_p99_ms = n ? ms[(int)ceil(0.99 * n) - 1] : 0; /* nearest rank */
    }
    tui_job_stop(&job);
    if (have_s) view_screen_free(&s);
    if (scr) {
        endwin();
        delscreen(scr);
    }
    view_free(&m);
    free(ms);
    if (o) fclose(o);
    if (in) fclose(in);
    return rc;
}

/* Median per-position times of the chunks: compute alone and recorded. */
static void set_cost(const double *plain, const double *rec, int n, double *ms_plain, double *ms_rec, double *ovh) {
    double *v = malloc((size_t)n * sizeof *v);
    *ovh = bench_paired_overhead(plain, rec, n);
    if (!v) return;
    memcpy(v, plain, (size_t)n * sizeof *v);
    *ms_plain = 1e3 * bench_median(v, n);
    memcpy(v, rec, (size_t)n * sizeof *v);
    *ms_rec = 1e3 * bench_median(v, n);
    free(v);
}

static int measure(const Model *m, const BenchOpts *b, const BenchScratch *sc, LongResult *out, Err *e) {
    const char *tui = bench_scratch_file(sc, 0), *profile = bench_scratch_file(sc, 1);
    int n = b->long_tokens, chunks = (n + LONG_CHUNK - 1) / LONG_CHUNK, rc = -1;
    int *ids = malloc((size_t)n * sizeof *ids);
    double *plain = calloc((size_t)chunks * 3, sizeof *plain), *rec = plain + chunks, *rec_p = rec + chunks;
    double *plain_p = calloc((size_t)chunks, sizeof *plain_p);
    if (!ids || !plain || !plain_p) { err_set(e, "out of memory"); goto out; }
    uint64_t seed = 42;
    bench_random_tokens(ids, n, m->c.vocab_size, &seed);
    AttnConfig attn = b->attn;
    attn.profile = 1; /* the TUI always profiles; so does record --profile */
    if (record_file(m, b, tui, &attn, APP_TUI_ATTN_TOP, ids, plain, rec, &out->decisions, &out->db_bytes, e) ||
        record_child(m, b, tui, &attn, APP_TUI_ATTN_TOP, ids, e) ||
        record_file(m, b, profile, &attn, 0, ids, plain_p, rec_p, &out->decisions_profile, &out->db_bytes_profile,
                    e))
        goto out;
    out->bpd = out->decisions ? (double)out->db_bytes / out->decisions : 0;
    out->bpd_profile = out->decisions_profile ? (double)out->db_bytes_profile / out->decisions_profile : 0;
    set_cost(plain, rec, chunks, &out->step_ms_plain, &out->step_ms_recorded, &out->overhead);
    set_cost(plain_p, rec_p, chunks, &out->step_ms_plain_profile, &out->step_ms_recorded_profile, &out->overhead_profile);
    rc = time_reads(b, tui, out, e);
    if (rc == 0) rc = key_wait(tui, out, e);
out:
    free(ids), free(plain), free(plain_p);
    return rc;
}

static void print_json(const BenchOpts *b, const Config *c, const LongResult *r) {
    printf("{\"tokens\": %d, \"layers\": %d, \"heads\": %d, \"dim\": %d, \"attn_top\": %d, \"runs\": %d, "
           "\"decisions\": %ld, \"decisions_profile\": %ld, \"db_bytes\": %lld, \"db_bytes_profile\": %lld, "
           "\"bytes_per_decision\": %.2f, \"bytes_per_decision_profile\": %.2f, "
           "\"compare_s\": %.4f, \"head_rates_s\": %.4f, \"diff_s\": %.4f, \"first_frame_s\": %.4f, "
           "\"step_ms_plain\": %.4f, \"step_ms_recorded\": %.4f, \"record_overhead\": %.4f, "
           "\"step_ms_plain_profile\": %.4f, \"step_ms_recorded_profile\": %.4f, \"record_overhead_profile\": %.4f, "
           "\"key_wait_idle_ms\": %.3f, \"key_wait_ms\": %.3f, \"key_wait_p99_ms\": %.3f, \"key_wait_max_ms\": %.3f, "
           "\"key_presses\": %d, "
           "\"key_job_s\": %.3f, "
           "\"goal_bytes_per_decision\": %.0f, \"goal_bytes_per_decision_profile\": %.0f, \"goal_read_s\": %.1f, "
           "\"goal_record_overhead\": %.2f, \"goal_key_wait_ms\": %.0f}\n",
           b->long_tokens, c->n_layers, c->n_heads, c->dim, APP_TUI_ATTN_TOP, b->runs, r->decisions,
           r->decisions_profile, r->db_bytes, r->db_bytes_profile, r->bpd, r->bpd_profile, r->compare_s,
           r->head_rates_s, r->diff_s, r->first_frame_s, r->step_ms_plain, r->step_ms_recorded, r->overhead,
           r->step_ms_plain_profile, r->step_ms_recorded_profile, r->overhead_profile, r->key_idle_ms, r->key_median_ms,
           r->key_p99_ms, r->key_max_ms, r->key_presses, r->key_job_s, GOAL_BPD_TOP, GOAL_BPD_PROFILE, GOAL_READ_S, GOAL_OVERHEAD,
           GOAL_KEY_MS);
}

static void print_text(const BenchOpts *b, const Config *c, const LongResult *r) {
    printf("long run        %d tokens, %d layers x %d heads (dim %d): %ld decisions a run\n", b->long_tokens,
           c->n_layers, c->n_heads, c->dim, r->decisions);
    printf("                %-10s %-10s %s\n", "value", "goal", "");
    printf("B/decision TUI  %-10.1f <= %-7.0f (--profile, attention top %d; %lld bytes)\n", r->bpd, GOAL_BPD_TOP,
           APP_TUI_ATTN_TOP, r->db_bytes);
    printf("B/decision rec  %-10.1f <= %-7.0f (record --profile; %lld bytes)\n", r->bpd_profile, GOAL_BPD_PROFILE,
           r->db_bytes_profile);
    printf("compare         %-10.3f <= %-7.1f s (summary of the run; median of %d)\n", r->compare_s, GOAL_READ_S,
           b->runs);
    printf("head_rates      %-10.3f <= %-7.1f s\n", r->head_rates_s, GOAL_READ_S);
    printf("diff            %-10.3f <= %-7.1f s (against its child, window x2)\n", r->diff_s, GOAL_READ_S);
    printf("first frame     %-10.3f <= %-7.1f s (run info + the first %d steps)\n", r->first_frame_s, GOAL_READ_S,
           64);
    printf("record cost TUI %-10.2f <= %-7.0f %% (step %.3f ms, recorded %.3f ms; median of paired chunks)\n",
           100 * r->overhead, 100 * GOAL_OVERHEAD, r->step_ms_plain, r->step_ms_recorded);
    printf("record cost rec %-10.2f <= %-7.0f %% (step %.3f ms, recorded %.3f ms)\n", 100 * r->overhead_profile,
           100 * GOAL_OVERHEAD, r->step_ms_plain_profile, r->step_ms_recorded_profile);
    printf("key wait        %-10.2f <= %-7.0f ms (longest, UI thread, while R and D run %.1f s: median %.2f ms, 99th"
           " percentile %.2f ms over %d keys; %.2f ms idle)\n",
           r->key_max_ms, GOAL_KEY_MS, r->key_job_s, r->key_median_ms, r->key_p99_ms, r->key_presses, r->key_idle_ms);
    printf("(the read goals are at 1 M decisions, <= 2 s at 10 M; the cost goal at the 1B-class shape)\n");
}

int bench_long(const Model *m, const BenchOpts *b, Err *e) {
    if (b->long_tokens > m->c.seq_len)
        return err_usage(e, "--long-tokens %d exceeds the model's context (%d)", b->long_tokens, m->c.seq_len);
    static const char *const names[] = {"tui.db", "profile.db"};
    BenchScratch s;
    if (bench_scratch_open(&s, names, 2, e)) return -1;
    LongResult r;
    memset(&r, 0, sizeof r);
    int rc = measure(m, b, &s, &r, e);
    bench_scratch_close(&s);
    if (rc == 0) (b->json ? print_json : print_text)(b, &m->c, &r);
    return rc;
}
