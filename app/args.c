#include "app/args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/model.h"

void runopts_defaults(RunOpts *o) {
    memset(o, 0, sizeof *o);
    o->steps = 256;
    o->temperature = 1.0f;
    o->topp = 0.9f;
    o->seed = (uint64_t)time(NULL);
    o->attn = aha_defaults();
    o->kv_dtype = -1;
}

const char *args_value(Args *a, Err *e) {
    if (a->i >= a->argc) {
        err_set(e, "%s: %s needs a value", a->cmd, a->argv[a->i - 1]);
        return NULL;
    }
    return a->argv[a->i++];
}

int args_int(const char *flag, const char *s, long lo, long hi, long *out, Err *e) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno) return err_set(e, "%s: '%s' is not a whole number", flag, s);
    if (v < lo || v > hi) return err_set(e, "%s: %ld is out of range [%ld, %ld]", flag, v, lo, hi);
    *out = v;
    return 0;
}

int args_float(const char *flag, const char *s, double lo, double hi, double *out, Err *e) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return err_set(e, "%s: '%s' is not a number", flag, s);
    if (v < lo || v > hi) return err_set(e, "%s: %g is out of range [%g, %g]", flag, v, lo, hi);
    *out = v;
    return 0;
}

double args_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int args_is_help(const char *s) { return !strcmp(s, "--help") || !strcmp(s, "-h"); }

int args_fail(const Err *e) {
    fprintf(stderr, "ahascope: %s\n", e->msg);
    return 1;
}

/* The attention-policy flags. Returns 1 consumed, 0 not ours, -1 error. */
static int parse_attn(RunOpts *o, Args *a, const char *f, Err *e) {
    const char *v;
    long n = 0;
    double x = 0;
    if (!strcmp(f, "--profile")) { o->attn.profile = 1; return 1; }
    if (!strcmp(f, "--policy")) {
        if (!(v = args_value(a, e)) || aha_policy_parse(v, &o->attn.policy, e)) return -1;
        o->have_policy = 1;
        return 1;
    }
    if (!strcmp(f, "--window")) {
        if (!(v = args_value(a, e)) || args_int(f, v, 1, 1 << 20, &n, e)) return -1;
        o->attn.window = (int)n;
        o->have_window = 1;
        return 1;
    }
    if (!strcmp(f, "--sinks")) {
        if (!(v = args_value(a, e)) || args_int(f, v, 0, 1 << 20, &n, e)) return -1;
        o->attn.sinks = (int)n;
        return 1;
    }
    float *dst = !strcmp(f, "--tau") ? &o->attn.tau : !strcmp(f, "--theta") ? &o->attn.theta
               : !strcmp(f, "--p") ? &o->attn.p : NULL;
    if (dst) {
        if (!(v = args_value(a, e)) || args_float(f, v, 0, 1, &x, e)) return -1;
        *dst = (float)x;
        return 1;
    }
    if (!strcmp(f, "--routers")) { return (o->routers = args_value(a, e)) ? 1 : -1; }
    if (!strcmp(f, "--static-heads")) { return (o->static_heads = args_value(a, e)) ? 1 : -1; }
    return 0;
}

int runopts_parse(RunOpts *o, Args *a, Err *e) {
    const char *f = a->argv[a->i], *v;
    long n = 0;
    double x = 0;
    a->i++;
    if (!strcmp(f, "--model")) return (o->model = args_value(a, e)) ? 1 : -1;
    if (!strcmp(f, "--tokenizer")) return (o->tokenizer = args_value(a, e)) ? 1 : -1;
    if (!strcmp(f, "--context")) {
        if (!(v = args_value(a, e)) || args_int(f, v, 1, 1 << 20, &n, e)) return -1;
        o->context = (int)n;
        return 1;
    }
    if (!strcmp(f, "--chat")) { o->chat = 1; return 1; }
    if (!strcmp(f, "--kv-dtype")) {
        if (!(v = args_value(a, e))) return -1;
        if ((o->kv_dtype = model_dtype_parse(v)) < 0) return err_set(e, "%s: --kv-dtype must be f32, bf16 or f16, not \"%s\"", a->cmd, v);
        return 1;
    }
    if (!strcmp(f, "--prompt")) {
        o->have_prompt = 1;
        return (o->prompt = args_value(a, e)) ? 1 : -1;
    }
    if (!strcmp(f, "--steps")) {
        if (!(v = args_value(a, e)) || args_int(f, v, 1, 1 << 24, &n, e)) return -1;
        o->steps = (int)n;
        return 1;
    }
    if (!strcmp(f, "--temperature")) {
        if (!(v = args_value(a, e)) || args_float(f, v, 0, 100, &x, e)) return -1;
        o->temperature = (float)x;
        return 1;
    }
    if (!strcmp(f, "--topp")) {
        if (!(v = args_value(a, e)) || args_float(f, v, 0, 1, &x, e)) return -1;
        o->topp = (float)x;
        return 1;
    }
    if (!strcmp(f, "--seed")) {
        if (!(v = args_value(a, e)) || args_int(f, v, 0, 0x7fffffffffffffffL, &n, e)) return -1;
        o->seed = (uint64_t)n;
        o->have_seed = 1;
        return 1;
    }
    int r = parse_attn(o, a, f, e);
    if (r == 0) a->i--; /* not ours: leave it for the command */
    return r;
}
