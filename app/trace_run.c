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

/* The run's layer kinds, once (on the first line): layer_kind "global" or
 * "local" and layer_window (0 global, W local) per layer. */
static void add_layer_kinds(cJSON *o, const StepTrace *t) {
    cJSON *kind = cJSON_AddArrayToObject(o, "layer_kind"), *win = cJSON_AddArrayToObject(o, "layer_window");
    for (int l = 0; l < t->n_layers; l++) {
        cJSON_AddItemToArray(kind, cJSON_CreateString(trace_layer_kind(t->layer_window[l])));
        cJSON_AddItemToArray(win, cJSON_CreateNumber(t->layer_window[l] > 0 ? t->layer_window[l] : 0));
    }
}

/* Print one trace as a single JSON line on stdout (first: the run's
 * first line, which also names the layer kinds). */
static int print_trace_line(const StepTrace *t, int first) {
    cJSON *o = cJSON_CreateObject();
    int n = trace_cells(t);
    if (first) add_layer_kinds(o, t);
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
    cJSON *local = cJSON_AddArrayToObject(o, "arch_local"); /* 1: a fixed-local head, no choice */
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(local, cJSON_CreateNumber(trace_is_arch_local(t, i)));
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
    app_window_note(&L, o);
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
    for (int i = 0; i < n; i++) print_trace_line(pre[i], i == 0);
    StepTrace *t = trace_new(c->n_layers, c->n_heads);
    for (int first = n == 0; session_step(&s, t); first = 0) {
        if (print_trace_line(t, first) != 0) break;
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

