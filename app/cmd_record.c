/* `ahascope record`: a headless run straight into the database. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/progress.h"
#include "app/record.h"
#include "engine/session.h"

static volatile sig_atomic_t g_stop; /* set by SIGINT/SIGTERM; the loop ends the run cleanly */

static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static void record_help(void) {
    puts("usage: ahascope record --db FILE [--prompt TEXT | --prompt-file FILE] [--commit-every N]\n"
         "                       [--max-db-mb MB] [--progress] [--threads N] [sampling flags] [model flags]\n"
         "                       [policy flags]\n"
         "\n"
         "Run the model and record every position (prompt and generated) into the SQLite database FILE\n"
         "(created if missing): one row per token, one per (token, layer, head). Prints the run id.\n"
         "  --prompt TEXT     the text to continue (default empty: start from BOS alone)\n"
         "  --prompt-file FILE  the prompt is FILE's text, byte for byte (at most 16 MiB, no NUL byte)\n"
         "  --commit-every N  steps per transaction (default 1: each step durable on its own)\n"
         "  --max-db-mb MB    stop with a 'disk full' error if the file would grow past MB (default: no limit)\n"
         "  --progress        a prefill bar on stderr (even when it is not a terminal; on one it shows by\n"
         "                    itself once the prefill runs over 0.5 s), then 'committed pos P' after each commit\n"
         "  --threads N       worker threads (default: all cores)\n"
         "  --attn-top K      also record, per position and head, the K heaviest far positions of its full\n"
         "                    attention (table attn_top; 0 = none, the default; at most 64) so a replay\n"
         "                    shows where each head looked without the model\n"
         "Ctrl-C stops the run (a long prefill at the next layer, dropping the 64-token chunk under way) and\n"
         "marks it interrupted; what was committed stays.\n"
         "Schema and example queries: store/SCHEMA.md.");
    args_help_sampling();
    args_help_model();
    args_help_policy();
}

typedef struct {
    const char *db;
    long commit_every, threads;
    long attn_top; /* far positions ranked per head (0: none) */
    double max_mb;
    int progress;
} RecordOpts;

/* Write steps and say which are durable; returns -1 when the store failed.
 * *pending is the last position written but not yet committed, or -1. */
static int write_steps(Store *st, int64_t run, StepTrace **t, int n, int progress, int *pending, Err *e) {
    for (int i = 0; i < n; i++) {
        int committed = 0;
        if (store_write_step(st, run, t[i], &committed, e)) return -1;
        *pending = committed ? -1 : t[i]->pos;
        if (progress && committed) fprintf(stderr, "committed pos %d\n", t[i]->pos);
    }
    return 0;
}

static int record_session(Session *s, Store *st, int64_t run, const RecordOpts *ro, Err *e) {
    const Config *c = &s->model->c;
    int n = session_prompt_pending(s), rc = -1, pending = -1;
    StepTrace **pre = calloc(n > 0 ? n : 1, sizeof *pre);
    int k = (int)ro->attn_top;
    StepTrace *t = trace_new_top(c->n_layers, c->n_heads, k);
    int ok = pre && t;
    for (int i = 0; ok && i < n; i++) ok = (pre[i] = trace_new_top(c->n_layers, c->n_heads, k)) != NULL;
    if (!ok) { err_set(e, "out of memory"); goto out; }
    int fed = progress_prefill(s, pre, ro->progress, &g_stop); /* fewer than n after Ctrl-C */
    if (write_steps(st, run, pre, fed, ro->progress, &pending, e)) goto out;
    while (!g_stop && session_step(s, t)) {
        if (write_steps(st, run, &t, 1, ro->progress, &pending, e)) goto out;
        trace_clear(t);
    }
    if (store_flush(st, e)) goto out;
    if (ro->progress && pending >= 0) fprintf(stderr, "committed pos %d\n", pending);
    if (app_session_error(s, e)) goto out; /* the run ends failed, not done */
    rc = 0;
out:
    for (int i = 0; pre && i < n; i++) trace_free(pre[i]);
    free(pre);
    trace_free(t);
    return rc;
}

static int run_record(RunOpts *o, const RecordOpts *ro, Err *e) {
    Loaded L;
    Session s;
    StoreRunInfo info;
    int rc = -1, have_session = 0;
    Store *st = store_open(ro->db, STORE_WRITE, 5000, e);
    if (!st) return -1;
    store_set_commit_every(st, (int)ro->commit_every);
    if (store_set_limit(st, (int64_t)(ro->max_mb * 1024 * 1024), e)) goto out_store;
    if (app_load(o, &L, 1, e) != 0) goto out_unload;
    if (session_init(&s, &L.model, &L.tok, &o->attn, o->steps, o->temperature, o->topp, o->seed, (int)ro->threads, e))
        goto out_unload;
    have_session = 1;
    const char *prompt = o->prompt ? o->prompt : "";
    if (session_start_text(&s, prompt, strlen(prompt), e) != 0) goto out_unload;
    if (app_run_info(o, &L, &info, e) || store_run_begin(st, &info, e)) goto out_unload;
    printf("%lld\n", (long long)info.run_id);
    fflush(stdout);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int failed = record_session(&s, st, info.run_id, ro, e);
    Err e2;
    /* After a write failure (disk full) the status update may fail too; the
     * next open for writing marks the run interrupted from its dead pid. */
    store_run_end(st, info.run_id, failed ? "failed" : g_stop ? "interrupted" : "done", &e2);
    rc = failed ? -1 : g_stop ? (err_set(e, "interrupted; run %lld kept what was committed",
                                         (long long)info.run_id), -1) : 0;
out_unload:
    if (have_session) session_free(&s);
    app_unload(&L);
out_store:
    if (store_close(st, rc ? NULL : e) != 0) rc = -1;
    return rc;
}

int cmd_record(int argc, char **argv) {
    RunOpts o;
    runopts_defaults(&o);
    RecordOpts ro = {NULL, 1, pool_default_threads(), 0, 0, 0};
    Args a = {argc, argv, 1};
    Err e;
    while (a.i < argc) {
        const char *f = argv[a.i];
        if (args_is_help(f)) { record_help(); return 0; }
        int r = runopts_parse(&o, &a, &e);
        if (r < 0) return args_fail(&e);
        if (r > 0) continue;
        a.i++;
        const char *v = NULL;
        if (!strcmp(f, "--progress")) { ro.progress = 1; continue; }
        if (!strcmp(f, "--db")) { if (!(ro.db = args_value(&a, &e))) return args_fail(&e); continue; }
        if (!strcmp(f, "--max-db-mb")) {
            if (!(v = args_value(&a, &e)) || args_float(f, v, 0.01, 1e9, &ro.max_mb, &e)) return args_fail(&e);
            continue;
        }
        long *target = !strcmp(f, "--commit-every") ? &ro.commit_every
                       : !strcmp(f, "--threads")    ? &ro.threads
                       : !strcmp(f, "--attn-top")   ? &ro.attn_top
                                                    : NULL;
        if (!target) {
            args_unknown(f, &e);
            return args_fail(&e);
        }
        long lo = target == &ro.attn_top ? 0 : 1;
        long hi = target == &ro.threads ? 64 : target == &ro.attn_top ? TRACE_TOP_MAX : 1L << 30;
        if (!(v = args_value(&a, &e)) || args_int(f, v, lo, hi, target, &e)) return args_fail(&e);
    }
    if (!ro.db) { err_usage(&e, "--db FILE is required"); return args_fail(&e); }
    if (runopts_check(&o, &e)) return args_fail(&e);
    return run_record(&o, &ro, &e) == 0 ? 0 : (g_stop ? (args_fail(&e), 130) : args_fail(&e));
}
