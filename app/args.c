/* args.c — flag parsing, the shared flag groups and the one error line (see args.h). */
#include "app/args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/decide.h"
#include "engine/model.h"
#include "engine/textout.h"

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
        err_usage(e, "%s needs a value", a->argv[a->i - 1]);
        return NULL;
    }
    return a->argv[a->i++];
}

int args_int(const char *flag, const char *s, long lo, long hi, long *out, Err *e) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno) return err_usage(e, "%s: '%s' is not a whole number", flag, s);
    if (v < lo || v > hi) return err_usage(e, "%s: %ld is out of range [%ld, %ld]", flag, v, lo, hi);
    *out = v;
    return 0;
}

int args_float(const char *flag, const char *s, double lo, double hi, double *out, Err *e) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return err_usage(e, "%s: '%s' is not a number", flag, s);
    if (v < lo || v > hi) return err_usage(e, "%s: %g is out of range [%g, %g]", flag, v, lo, hi);
    *out = v;
    return 0;
}

int args_budget(const char *flag, const char *s, HeadBudget *out, Err *e) {
    size_t len = strlen(s);
    out->percent = len > 1 && s[len - 1] == '%';
    if (!out->percent) {
        long k = 0;
        if (args_int(flag, s, 0, 1 << 20, &k, e)) return -1;
        out->value = (double)k;
        return 0;
    }
    char num[32];
    if (len > sizeof num) return err_usage(e, "%s: '%s' is not a number of heads or a percentage", flag, s);
    snprintf(num, sizeof num, "%.*s", (int)(len - 1), s);
    return args_float(flag, num, 0, 100, &out->value, e);
}

int args_heads_pick(const char *spec, int have_budget, int have_threshold, const char *flag, Err *e) {
    int duo = spec && !strncmp(spec, APP_DUO_PREFIX, strlen(APP_DUO_PREFIX));
    int calib = spec && !strncmp(spec, APP_CALIB_PREFIX, strlen(APP_CALIB_PREFIX));
    if (have_budget && have_threshold) return err_usage(e, "--budget and --duo-threshold conflict: give one");
    if (have_budget && !duo && !calib)
        return err_usage(e, "--budget is for %s duo:FILE or calib:DB#RUN", flag);
    if (have_threshold && !duo) return err_usage(e, "--duo-threshold is for %s duo:FILE", flag);
    if (duo && !have_budget && !have_threshold)
        return err_usage(e, "%s %s needs --budget K|P%% or --duo-threshold X", flag, spec);
    if (calib && !have_budget) return err_usage(e, "%s %s needs --budget K|P%%", flag, spec);
    return 0;
}

int args_shard(const char *flag, const char *s, ArgsShard *out, Err *e) {
    const char *slash = strchr(s, '/');
    char num[32];
    long i = 0, n = 0;
    Err ignored;
    if (!slash || slash - s >= (long)sizeof num)
        return err_usage(e, "%s: '%s' is not I/N (shard I of N, I from 0 to N-1)", flag, s);
    snprintf(num, sizeof num, "%.*s", (int)(slash - s), s);
    if (args_int(flag, num, 0, 1L << 20, &i, &ignored) || args_int(flag, slash + 1, 1, 1L << 20, &n, &ignored))
        return err_usage(e, "%s: '%s' is not I/N (shard I of N, I from 0 to N-1)", flag, s);
    if (i >= n) return err_usage(e, "%s: shard %ld of %ld does not exist (shards are 0 to %ld)", flag, i, n, n - 1);
    out->i = i, out->n = n;
    return 0;
}

int args_is_help(const char *s) { return !strcmp(s, "--help") || !strcmp(s, "-h"); }

int runopts_check(const RunOpts *o, Err *e) {
    if (o->attn.policy == POLICY_STATIC && !o->static_heads)
        return err_usage(e, "policy static needs a head set (--static-heads l.h,... or a file)");
    if (args_heads_pick(o->static_heads, o->have_budget, o->have_duo_threshold, "--static-heads", e))
        return -1;
    if (o->have_prompt && o->prompt_file) return err_usage(e, "--prompt and --prompt-file conflict: give one");
    return 0;
}

void args_help_model(void) {
    puts("model flags:\n"
         "  --model PATH      a llama2.c checkpoint or a Hugging Face folder (default: stories260K from\n"
         "                    $AHASCOPE_MODELS, ../shared/models or the cache, as `ahascope run` finds it)\n"
         "  --tokenizer FILE  default: the folder's tokenizer.json, or tokenizer.bin / tok<vocab>.bin beside\n"
         "                    a checkpoint\n"
         "  --context N       cap a folder's context (default 4096)\n"
         "  --chat            wrap the prompt in the model family's chat format\n"
         "  --kv-dtype f32|bf16|f16  the KV cache's type (default the model's: a bf16 model caches bf16)");
}

void args_help_sampling(void) {
    puts("sampling flags:\n"
         "  --steps N         positions, the prompt's included (default 256; a longer prompt is fed whole and up\n"
         "                    to 256 tokens follow it; capped at the context); a prompt longer than a given N\n"
         "                    is cut to its first N+1 tokens, as llama2.c does, with a warning;\n"
         "                    generation also stops when the model emits BOS\n"
         "  --temperature T   0 = greedy (default 1.0)\n"
         "  --topp P          nucleus mass (default 0.9)\n"
         "  --seed S          same seed, same text (default: the clock)");
}

void args_help_policy(void) {
    char words[160];
    aha_policy_list(words, sizeof words, "|");
    printf("policy flags:\n  --policy %s\n", words);
    puts("                    default full; aha when routers are given or built into the model\n"
         "  --window W        local keys per head (default 32, or the window the routers were trained for)\n"
         "  --sinks S         first S positions always in the local set (default 0)\n"
         "  --tau T           aha: global iff the router's sigmoid > T (default: the router file's, else 0.5)\n"
         "  --theta X         oracle and the QAdA family: global iff out-of-window mass > X (default 0.1)\n"
         "  --theta-logit L   the same threshold as log-odds ln(X/(1-X)), for X a probability cannot hold\n"
         "  --p P             random: probability of global (default 0.1)\n"
         "  --static-heads l.h,...|FILE|duo:FILE|calib:DB#RUN[,RUN...]  static: the global heads (no\n"
         "                    default): a list, a file of one, a DuoAttention table (a row per layer, a\n"
         "                    value in [0, 1] per KV head, for each query head of its group), or the set\n"
         "                    calibrate picks from recorded runs; the last two cut by\n"
         "  --budget K|P%     duo:, calib: the K (or P% of all) query heads of highest value, ties to the\n"
         "                    lower layer.head\n"
         "  --duo-threshold X duo: every query head whose KV head's value is > X\n"
         "  --routers FILE|random[:SEED]  router vectors (safetensors), or random ones (seed 1)\n"
         "  --profile         compute every predictor at every step, whatever the policy");
}

static const char *g_command; /* set once by main before the command runs */

void args_set_command(const char *name) { g_command = name; }

int args_unknown(const char *arg, Err *e) {
    if (arg[0] != '-' || !arg[1]) return err_usage(e, "unexpected argument '%s'", arg);
    if (!g_command) return err_usage(e, "unknown flag '%s' (see ahascope --help)", arg);
    return err_usage(e, "unknown flag '%s' (see ahascope %s --help)", arg, g_command);
}

#define SAY_MAX 1200 /* the longest message printed whole */

/* Print "ahascope CMD: <kind><msg>" on stderr, msg escaped by the terminal
 * rule (engine/textout.h): messages quote paths, flag values and file
 * fields, any of which may hold escape sequences. */
static void say(const char *msg, const char *kind) {
    char safe[4 * SAY_MAX + 1];
    textout_term(msg, safe, sizeof safe);
    if (g_command) fprintf(stderr, "ahascope %s: %s%s\n", g_command, kind, safe);
    else fprintf(stderr, "ahascope: %s%s\n", kind, safe);
}

void args_warn(const char *fmt, ...) {
    char msg[SAY_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    say(msg, "warning: ");
}

int args_fail(const Err *e) {
    say(e->msg, "");
    return e->usage ? 2 : 1;
}

/* The attention-policy flags. Returns 1 consumed, 0 not ours, -1 error. */
static int parse_attn(RunOpts *o, Args *a, const char *f, Err *e) {
    const char *v;
    long n = 0;
    double x = 0;
    if (!strcmp(f, "--profile")) { o->attn.profile = 1; return 1; }
    if (!strcmp(f, "--policy")) {
        if (!(v = args_value(a, e))) return -1;
        if (aha_policy_parse(v, &o->attn.policy, e)) return err_as_usage(e);
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
    if (!strcmp(f, "--theta")) {
        if (!(v = args_value(a, e)) || args_float(f, v, 0, 1, &x, e)) return -1;
        o->attn.theta_logit = decide_theta_logit(x);
        return 1;
    }
    if (!strcmp(f, "--theta-logit")) { /* thresholds a probability cannot hold, e.g. from --match-budget */
        if (!(v = args_value(a, e)) || args_float(f, v, -1e30, 1e30, &x, e)) return -1;
        o->attn.theta_logit = x;
        return 1;
    }
    float *dst = !strcmp(f, "--tau") ? &o->attn.tau : !strcmp(f, "--p") ? &o->attn.p : NULL;
    if (dst) {
        if (!(v = args_value(a, e)) || args_float(f, v, 0, 1, &x, e)) return -1;
        *dst = (float)x;
        if (dst == &o->attn.tau) o->have_tau = 1;
        return 1;
    }
    if (!strcmp(f, "--routers")) {
        const char *r = o->routers = args_value(a, e);
        if (!r) return -1;
        /* the engine checks the seed too, but only after loading the model */
        if (!strncmp(r, "random:", 7) && (!r[7] || strspn(r + 7, "0123456789") != strlen(r + 7)))
            return err_usage(e, "--routers: bad seed in '%s' (random:SEED)", r);
        return 1;
    }
    if (!strcmp(f, "--static-heads")) { return (o->static_heads = args_value(a, e)) ? 1 : -1; }
    if (!strcmp(f, "--budget")) {
        if (!(v = args_value(a, e)) || args_budget(f, v, &o->static_pick.budget, e)) return -1;
        o->static_pick.by_threshold = 0, o->have_budget = 1;
        return 1;
    }
    if (!strcmp(f, "--duo-threshold")) {
        if (!(v = args_value(a, e)) || args_float(f, v, 0, 1, &o->static_pick.threshold, e)) return -1;
        o->static_pick.by_threshold = 1, o->have_duo_threshold = 1;
        return 1;
    }
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
        if ((o->kv_dtype = model_dtype_parse(v)) < 0) return err_usage(e, "--kv-dtype must be f32, bf16 or f16, not \"%s\"", v);
        return 1;
    }
    if (!strcmp(f, "--prompt")) {
        o->have_prompt = 1;
        return (o->prompt = args_value(a, e)) ? 1 : -1;
    }
    if (!strcmp(f, "--prompt-file")) return (o->prompt_file = args_value(a, e)) ? 1 : -1;
    if (!strcmp(f, "--steps")) {
        if (!(v = args_value(a, e)) || args_int(f, v, 1, 1 << 24, &n, e)) return -1;
        o->steps = (int)n;
        o->have_steps = 1;
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
