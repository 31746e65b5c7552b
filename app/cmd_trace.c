/* `ahascope trace --jsonl`: the per-step trace as JSON lines, one object per
 * position fed, so any tool can read every head's decision without SQLite. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/progress.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "engine/session.h"
#include "engine/textout.h"

static void trace_help(void) {
    puts("usage: ahascope trace [--prompt TEXT | --prompt-file FILE] [--jsonl] [--progress] [sampling flags]\n"
         "                      [model flags] [policy flags]\n"
         "\n"
         "Run the model and print one JSON object per position fed (prompt and generated):\n"
         "  pos, token, piece, logprob, entropy, step_us, and per (layer, head) flat arrays of\n"
         "  n_layers*n_heads numbers in layer-major order: score, gate, oracle_logit, oracle_err,\n"
         "  qada_logit, qada_bulk_logit, keys_read, qada_rem_logit, qada_rem_bulk_logit (REM-corrected\n"
         "  QAdA, this project's), far_mean, far_std (the far scores' exact moments; null where a\n"
         "  value was not computed); the\n"
         "  *_logit values are ln(mass outside the local set / mass inside); n_far (keys outside the\n"
         "  local set: 0 means no choice) and kv_read (KV positions read per KV head, summed).\n"
         "logprob/entropy describe the distribution that predicted the token (null at position 0).\n"
         "Lines are valid UTF-8: a piece that is not (a byte-fallback token, e.g. one byte of an emoji)\n"
         "is written with U+FFFD, and piece_hex (only then) holds its raw bytes as hex.\n"
         "  --prompt TEXT     the text to continue (default empty: start from BOS alone)\n"
         "  --prompt-file FILE  the prompt is FILE's text, byte for byte (at most 16 MiB, no NUL byte)\n"
         "  --jsonl           JSON lines, the one format there is (the default)\n"
         "  --progress        a prefill bar on stderr even when it is not a terminal (on one it shows by\n"
         "                    itself once the prefill runs over 0.5 s)");
    args_help_sampling();
    args_help_model();
    args_help_policy();
}

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

static int run_trace(RunOpts *o, int progress, Err *e) {
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

int cmd_trace(int argc, char **argv) {
    RunOpts o;
    runopts_defaults(&o);
    Args a = {argc, argv, 1};
    Err e;
    int progress = 0;
    while (a.i < argc) {
        const char *f = argv[a.i];
        if (args_is_help(f)) { trace_help(); return 0; }
        int r = runopts_parse(&o, &a, &e);
        if (r < 0) return args_fail(&e);
        if (r > 0) continue;
        a.i++;
        if (!strcmp(f, "--jsonl")) continue;
        if (!strcmp(f, "--progress")) { progress = 1; continue; }
        args_unknown(f, &e);
        return args_fail(&e);
    }
    return runopts_check(&o, &e) == 0 && run_trace(&o, progress, &e) == 0 ? 0 : args_fail(&e);
}
