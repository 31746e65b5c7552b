/* record_run.c — `ahascope record`'s runs (app/record_run.h): each prompt
 * run headless and every position written into the database as it goes. */
#include "app/record_run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/progress.h"
#include "app/record_prefill.h"
#include "app/run_info.h"
#include "engine/session.h"
#include "store/store.h"

static volatile sig_atomic_t g_stop; /* set by SIGINT/SIGTERM; the loop ends the run cleanly */

static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static int record_session(Session *s, Store *st, int64_t run, const RecordOpts *ro, Err *e) {
    const Config *c = &s->model->c;
    int rc = -1, fed, pending = -1;
    StepTrace *t = trace_new_top(c->n_layers, c->n_heads, (int)ro->attn_top);
    if (!t) { err_set(e, "out of memory"); goto out; }
    /* stops early on Ctrl-C */
    if (record_prefill(s, st, run, (int)ro->attn_top, ro->progress, &g_stop, &fed, &pending, e)) goto out;
    while (!g_stop && session_step(s, t)) {
        if (record_steps(st, run, &t, 1, ro->progress, &pending, e)) goto out;
        trace_clear(t);
    }
    if (store_flush(st, e)) goto out;
    if (ro->progress && pending >= 0) fprintf(stderr, "committed pos %d\n", pending);
    if (app_session_error(s, e)) goto out; /* the run ends failed, not done */
    rc = 0;
out:
    trace_free(t);
    return rc;
}

/* One prompt recorded as one run: the run `record --prompt TEXT` makes. */
static int record_prompt(RunOpts *o, AppLoaded *L, Store *st, const char *prompt, const RecordOpts *ro, Err *e) {
    Session s;
    StoreRunInfo info;
    int given = o->steps; /* each prompt of --prompts from the steps asked for; the run records what ran */
    o->steps = app_cli_steps(o, L, prompt);
    if (session_init(&s, &L->model, &L->tok, &o->attn, o->steps, o->temperature, o->topp, o->seed, (int)ro->threads, e)) {
        o->steps = given;
        return -1;
    }
    int rc = -1;
    o->prompt = prompt;
    if (session_start_text(&s, prompt, strlen(prompt), e) != 0) goto out;
    if (app_run_info(o, L, &info, e) || store_run_begin(st, &info, e)) goto out;
    printf("%lld\n", (long long)info.run_id);
    fflush(stdout);
    int failed = record_session(&s, st, info.run_id, ro, e);
    Err e2;
    /* After a write failure (disk full) the status update may fail too; the
     * next open for writing marks the run interrupted from its dead pid. */
    store_run_end(st, info.run_id, failed ? "failed" : g_stop ? "interrupted" : "done", &e2);
    rc = failed ? -1 : g_stop ? (err_set(e, "interrupted; run %lld kept what was committed",
                                         (long long)info.run_id), -1) : 0;
out:
    session_free(&s);
    o->steps = given;
    return rc;
}

int record_run(RunOpts *o, const RecordOpts *ro, int *stopped, Err *e) {
    *stopped = 0;
    AppLoaded L;
    AppPrompts pr = {0};
    int rc = -1;
    if (ro->prompts && app_prompts_read(ro->prompts, &pr, e)) return -1;
    Store *st = store_open(ro->db, STORE_WRITE, STORE_BUSY_MS, e);
    if (!st) return app_prompts_free(&pr), -1;
    store_set_commit_every(st, (int)ro->commit_every);
    if (store_set_limit(st, (int64_t)(ro->max_mb * 1024 * 1024), e)) goto out_store;
    if (app_load(o, &L, 1, e) != 0) goto out_unload;
    app_window_note(&L, o);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (!ro->prompts) rc = record_prompt(o, &L, st, o->prompt ? o->prompt : "", ro, e);
    else {
        rc = 0;
        for (int i = 0; rc == 0 && !g_stop && i < pr.n; i++)
            if (args_shard_owns(&ro->shard, pr.line[i] - 1)) rc = record_prompt(o, &L, st, pr.text[i], ro, e);
    }
out_unload:
    app_unload(&L);
out_store:
    if (store_close(st, rc ? NULL : e) != 0) rc = -1;
    app_prompts_free(&pr);
    *stopped = g_stop != 0;
    return rc;
}

