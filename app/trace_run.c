/* trace_run.c — `ahascope trace`'s run (app/trace_run.h): the model run
 * and each position fed printed as one JSON line. */
#include "app/trace_run.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/progress.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "engine/session.h"
#include "engine/textout.h"

/* Seven significant digits: what a float holds, without 17-digit noise. */
static cJSON *num_or_null(double v) {
    if (isnan(v) || isinf(v)) return cJSON_CreateNull();
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", v);
    return cJSON_CreateRaw(buf);
}

/* A per-head value as JSON, by its SQL type in the field list: null
 * where not computed. */
static cJSON *json_REAL(double v) { return num_or_null(v); }
static cJSON *json_INTEGER(long v) { return v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v); }

/* Print one trace as a single JSON line on stdout. */
static int print_trace_line(const StepTrace *t) {
    cJSON *o = cJSON_CreateObject();
    int n = trace_cells(t);
    cJSON_AddNumberToObject(o, "pos", t->pos);
    cJSON_AddNumberToObject(o, "token", t->token);
    textout_json_add(o, "piece", t->piece, strlen(t->piece));
    cJSON_AddItemToObject(o, "logprob", num_or_null(t->logprob));
    cJSON_AddItemToObject(o, "entropy", num_or_null(t->entropy));
    cJSON_AddNumberToObject(o, "step_us", round(t->step_us * 10) / 10);
    cJSON_AddItemToObject(o, "n_far", json_INTEGER(t->n_far));
    cJSON_AddItemToObject(o, "kv_read", json_INTEGER(trace_kv_read_total(t)));
#define TRACE_JSON(name, type, missing, sql, show, title, short_name, doc)                                                              \
    {                                                                                                          \
        cJSON *a = cJSON_AddArrayToObject(o, #name);                                                           \
        for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, json_##sql(t->name[i]));                            \
    }
    TRACE_HEAD_FIELDS(TRACE_JSON)
#undef TRACE_JSON
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) return -1;
    textout_json_write(stdout, s);
    int ok = puts("") >= 0;
    free(s);
    return ok ? 0 : -1;
}

int trace_run(RunOpts *o, int progress, Err *e) {
    AppLoaded L;
    Session s;
    int rc = -1;
    StepTrace **pre = NULL;
    if (app_load(o, &L, 1, e) != 0) goto out;
    const Config *c = &L.model.c;
    const char *prompt = o->prompt ? o->prompt : "";
    o->steps = app_cli_steps(o, &L, prompt);
    if (session_init(&s, &L.model, &L.tok, &o->attn, o->steps, o->temperature, o->topp, o->seed, pool_default_threads(), e))
        goto out;
    if (session_start_text(&s, prompt, strlen(prompt), e) != 0) goto out_session;
    int n = session_prompt_pending(&s);
    pre = calloc(n, sizeof *pre);
    for (int i = 0; pre && i < n; i++) pre[i] = trace_new(c->n_layers, c->n_heads);
    progress_prefill(&s, pre, progress, NULL);
    for (int i = 0; i < n; i++) print_trace_line(pre[i]);
    StepTrace *t = trace_new(c->n_layers, c->n_heads);
    while (session_step(&s, t)) {
        if (print_trace_line(t) != 0) break;
        trace_clear(t);
    }
    trace_free(t);
    rc = fflush(stdout) == 0 ? app_session_error(&s, e) : err_set(e, "cannot write to stdout");
out_session:
    session_free(&s);
out:
    if (pre)
        for (int i = 0; i < n; i++) trace_free(pre[i]);
    free(pre);
    app_unload(&L);
    return rc;
}

