/* args.c — flag parsing, the shared flag groups and the one error line (see args.h). */
#include "app/args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/decide.h"
#include "engine/model.h"
#include "engine/predictors.h"
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

HeadsForm args_heads_form(const char *spec, const char **rest) {
    static const struct { const char *prefix; HeadsForm form; } forms[] = {
        {APP_DUO_PREFIX, HEADS_DUO},         {APP_CALIB_PREFIX, HEADS_CALIB}, {APP_RETRIEVAL_PREFIX, HEADS_RETRIEVAL},
        {APP_PRULONG_PREFIX, HEADS_PRULONG}, {APP_MOA_PREFIX, HEADS_MOA},     {APP_WINDOWS_PREFIX, HEADS_WINDOWS},
    };
    for (size_t i = 0; spec && i < sizeof forms / sizeof forms[0]; i++) {
        size_t n = strlen(forms[i].prefix);
        if (!strncmp(spec, forms[i].prefix, n)) {
            if (rest) *rest = spec + n;
            return forms[i].form;
        }
    }
    if (rest) *rest = spec;
    return HEADS_LIST;
}

int args_heads_pick(const char *spec, int have_budget, int have_threshold, int as_set, const char *flag, Err *e) {
    const char *rest = NULL;
    HeadsForm f = args_heads_form(spec, &rest);
    if (f != HEADS_LIST && !*rest) /* else the reader's error names an empty path: ": cannot open" */
        return err_usage(e, "%s %s names no file: write %s%s", flag, spec, spec, f == HEADS_CALIB ? "DB#RUN" : "FILE");
    int spans = f == HEADS_MOA || f == HEADS_WINDOWS, scored = f == HEADS_DUO || f == HEADS_RETRIEVAL;
    if (have_budget && have_threshold) return err_usage(e, "--budget and --duo-threshold conflict: give one");
    if (have_budget && (f == HEADS_LIST || (spans && !as_set)))
        return err_usage(e, "--budget is for %s duo:FILE or calib:DB#RUN (or retrieval-json:, prulong:)", flag);
    if (have_threshold && !scored && f != HEADS_PRULONG)
        return err_usage(e, "--duo-threshold is for %s duo:FILE (or retrieval-json:, prulong:)", flag);
    if (scored && !have_budget && !have_threshold)
        return err_usage(e, "%s %s needs --budget K|P%% or --duo-threshold X", flag, spec);
    if ((f == HEADS_CALIB || (spans && as_set)) && !have_budget) return err_usage(e, "%s %s needs --budget K|P%%", flag, spec);
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
    if (args_heads_pick(o->static_heads, o->have_budget, o->have_duo_threshold, 0, "--static-heads", e))
        return -1;
    if (o->have_prompt && o->prompt_file) return err_usage(e, "--prompt and --prompt-file conflict: give one");
    return 0;
}

void args_help_model(void) { args_help_table(&ARGS_MODEL); }

void args_help_sampling(void) { args_help_table(&ARGS_SAMPLING); }

void args_help_policy(void) {
    args_help_table(&ARGS_POLICY);
    args_help_table(&ARGS_HEADS);
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

/* say() with the message formatted from a va_list: warnings and notes differ only in their kind. */
static void vsay(const char *kind, const char *fmt, va_list ap) {
    char msg[SAY_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    say(msg, kind);
}

void args_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay("warning: ", fmt, ap);
    va_end(ap);
}

void args_note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay("note: ", fmt, ap);
    va_end(ap);
}

int args_fail(const Err *e) {
    say(e->msg, "");
    return e->usage ? 2 : 1;
}

/* ---- the shared groups' rows ---- */

static int read_kv_dtype(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag;
    RunOpts *o = opts;
    if ((o->kv_dtype = model_dtype_parse(v)) < 0) return err_usage(e, "--kv-dtype must be f32, bf16 or f16, not \"%s\"", v);
    return 0;
}

static int read_seed(void *opts, const char *flag, const char *v, Err *e) {
    long n = 0;
    if (args_int(flag, v, 0, 0x7fffffffffffffffL, &n, e)) return -1;
    ((RunOpts *)opts)->seed = (uint64_t)n;
    return 0;
}

static int read_policy(void *opts, const char *flag, const char *v, Err *e) {
    (void)flag;
    return aha_policy_parse(v, &((RunOpts *)opts)->attn.policy, e) ? err_as_usage(e) : 0;
}

/* θ given as a probability is kept as its log-odds, as attention compares it. */
static int read_theta(void *opts, const char *flag, const char *v, Err *e) {
    double x = 0;
    if (args_float(flag, v, 0, 1, &x, e)) return -1;
    ((RunOpts *)opts)->attn.theta_logit = decide_theta_logit(x);
    return 0;
}

static int read_routers(void *opts, const char *flag, const char *r, Err *e) {
    (void)flag;
    /* the engine checks the seed too, but only after loading the model */
    if (!strncmp(r, "random:", 7) && (!r[7] || strspn(r + 7, "0123456789") != strlen(r + 7)))
        return err_usage(e, "--routers: bad seed in '%s' (random:SEED)", r);
    ((RunOpts *)opts)->routers = r;
    return 0;
}

static int read_budget(void *opts, const char *flag, const char *v, Err *e) {
    RunOpts *o = opts;
    if (args_budget(flag, v, &o->static_pick.budget, e)) return -1;
    o->static_pick.by_threshold = 0;
    return 0;
}

static int read_duo_threshold(void *opts, const char *flag, const char *v, Err *e) {
    RunOpts *o = opts;
    if (args_float(flag, v, 0, 1, &o->static_pick.threshold, e)) return -1;
    o->static_pick.by_threshold = 1;
    return 0;
}

#define RO(field) offsetof(RunOpts, field)
#define RO_ALSO(field) ARG_ALSO(RunOpts, field)

static const ArgSpec MODEL_ROWS[] = {
    {"--model", ARG_STRING, RO(model), .metavar = "PATH",
     .help = ARGS_MODEL_KINDS " (default: stories260K from $AHASCOPE_MODELS, "
             "../shared/models or the cache, as `ahascope run` finds it)"},
    {"--tokenizer", ARG_STRING, RO(tokenizer), .metavar = "FILE",
     .help = "default: the folder's tokenizer.json, or tokenizer.bin / tok<vocab>.bin beside a checkpoint"},
    {"--context", ARG_INT, RO(context), 1, 1 << 20, "N", .help = "cap a folder's or a GGUF's context (default 4096)"},
    {"--chat", ARG_FLAG, RO(chat), .help = "wrap the prompt in the model family's chat format"},
    {"--kv-dtype", ARG_CUSTOM, .metavar = "f32|bf16|f16", .fn = read_kv_dtype,
     .help = "the KV cache's type (default the model's: a bf16 model caches bf16)"},
};
const ArgsTable ARGS_MODEL = ARGS_TABLE("model flags", RunOpts, MODEL_ROWS);

static const ArgSpec PROMPT_ROWS[] = {
    {"--prompt", ARG_STRING, RO(prompt), .metavar = "TEXT", .also = RO_ALSO(have_prompt),
     .help = "the text to continue (default empty: generation starts from BOS alone)"},
    {"--prompt-file", ARG_STRING, RO(prompt_file), .metavar = "FILE",
     .help = "the prompt is FILE's text, byte for byte (at most 16 MiB, no NUL byte)"},
};
const ArgsTable ARGS_PROMPT = ARGS_TABLE(NULL, RunOpts, PROMPT_ROWS);

static const ArgSpec SAMPLING_ROWS[] = {
    {"--steps", ARG_INT, RO(steps), 1, 1 << 24, "N", .also = RO_ALSO(have_steps),
     .help = "positions, the prompt's included (default 256; a longer prompt is fed whole and up to 256 tokens "
             "follow it; capped at the context); a prompt longer than a given N is cut to its first N+1 tokens, "
             "as llama2.c does, with a warning; generation also stops when the model emits BOS"},
    {"--temperature", ARG_FLOAT, RO(temperature), 0, 100, "T", .help = "0 = greedy (default 1.0)"},
    {"--topp", ARG_FLOAT, RO(topp), 0, 1, "P", .help = "nucleus mass (default 0.9)"},
    {"--seed", ARG_CUSTOM, .metavar = "S", .also = RO_ALSO(have_seed), .fn = read_seed,
     .help = "same seed, same text (default: the clock)"},
};
const ArgsTable ARGS_SAMPLING = ARGS_TABLE("sampling flags", RunOpts, SAMPLING_ROWS);

/* The --policy words from engine/predictors.h at compile time: "|aha|full...", shown from its second byte. */
#define POLICY_WORD(ID, word, field, title, brief, spark, thr, policy, ...) PRED_IF(policy, "|" word)
static const char POLICY_WORDS[] = "" PREDICTORS(POLICY_WORD);
#undef POLICY_WORD

static const ArgSpec POLICY_ROWS[] = {
    {"--policy", ARG_CUSTOM, .metavar = POLICY_WORDS + 1, .also = RO_ALSO(have_policy), .fn = read_policy,
     .help = "default full; aha when routers are given or built into the model"},
    {"--window", ARG_INT, RO(attn.window), 1, 1 << 20, "W", .also = RO_ALSO(have_window),
     .help = "local keys per head (default 32, or the window the routers were trained for)"},
    {"--sinks", ARG_INT, RO(attn.sinks), 0, 1 << 20, "S", .help = "first S positions always in the local set (default 0)"},
    {"--tau", ARG_FLOAT, RO(attn.tau), 0, 1, "T", .also = RO_ALSO(have_tau),
     .help = "aha: global iff the router's sigmoid > T (default: the router file's, else 0.5)"},
    {"--theta", ARG_CUSTOM, .metavar = "X", .fn = read_theta,
     .help = "oracle and the QAdA family: global iff out-of-window mass > X (default 0.1)"},
    /* thresholds a probability cannot hold, e.g. from --match-budget */
    {"--theta-logit", ARG_DOUBLE, RO(attn.theta_logit), -1e30, 1e30, "L",
     .help = "the same threshold as log-odds ln(X/(1-X)), for X a probability cannot hold"},
    {"--p", ARG_FLOAT, RO(attn.p), 0, 1, "P", .help = "random: probability of global (default 0.1)"},
    {"--routers", ARG_CUSTOM, .metavar = "FILE|random[:SEED]", .fn = read_routers,
     .help = "router vectors (safetensors), or random ones (seed 1)"},
    {"--profile", ARG_FLAG, RO(attn.profile), .help = "compute every predictor at every step, whatever the policy"},
};
const ArgsTable ARGS_POLICY = ARGS_TABLE("policy flags", RunOpts, POLICY_ROWS);

static const ArgSpec HEADS_ROWS[] = {
    {"--static-heads", ARG_STRING, RO(static_heads),
     .metavar = "l.h,...|FILE|duo:FILE|retrieval-json:FILE|prulong:FILE|moa:FILE|windows:FILE|calib:DB#RUN[,RUN...]",
     .help = "static: the global heads (no default): a list, a file of one, a DuoAttention table (a row per "
             "layer, a value in [0, 1] per KV head, for each query head of its group), Retrieval-Head JSON "
             "(mean scores), PruLong masks (> 0.5 global), or the set calibrate picks from recorded runs; "
             "moa: (alpha + beta*N) and windows: give each head its own local window instead. Cut by"},
    {"--budget", ARG_CUSTOM, .metavar = "K|P%", .also = RO_ALSO(have_budget), .fn = read_budget,
     .help = "duo:, retrieval-json:, prulong:, calib: the K (or P% of all) query heads of highest value, ties to "
             "the lower layer.head"},
    {"--duo-threshold", ARG_CUSTOM, .metavar = "X", .also = RO_ALSO(have_duo_threshold), .fn = read_duo_threshold,
     .help = "duo:, retrieval-json:, prulong: every query head whose value is > X"},
};
const ArgsTable ARGS_HEADS = ARGS_TABLE(NULL, RunOpts, HEADS_ROWS);

int runopts_parse(RunOpts *o, Args *a, Err *e) {
    static const ArgsTable *const groups[] = {&ARGS_MODEL, &ARGS_PROMPT, &ARGS_SAMPLING, &ARGS_POLICY, &ARGS_HEADS,
                                              NULL};
    void *const opts[] = {o, o, o, o, o};
    return args_parse_one(a, groups, opts, e);
}

/* ---- the table walker ---- */

const ArgSpec *args_find(const ArgsTable *const *tables, const char *flag) {
    for (int k = 0; tables[k]; k++)
        for (int r = 0; r < tables[k]->n; r++)
            if (!strcmp(tables[k]->rows[r].name, flag)) return &tables[k]->rows[r];
    return NULL;
}

/* The index of word v among the '|'-separated words of list, or -1. */
static int choice_index(const char *list, const char *v) {
    size_t n = strlen(v);
    for (int i = 0; *list; i++) {
        size_t w = strcspn(list, "|");
        if (w == n && !strncmp(list, v, n)) return i;
        list += w + (list[w] == '|');
    }
    return -1;
}

/* "a, b or c" of a "a|b|c" list, for a choice's error. */
static void choice_prose(const char *list, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; *list && k < cap; i++) {
        size_t w = strcspn(list, "|");
        const char *sep = !i ? "" : list[w] ? ", " : " or ";
        k += snprintf(buf + k, cap - k, "%s%.*s", sep, (int)w, list);
        list += w + (list[w] == '|');
    }
}

/* Store value v of row s into the struct at base. */
static int store_value(const ArgSpec *s, char *base, const char *v, Err *e) {
    long n = 0;
    double x = 0;
    switch (s->kind) {
    case ARG_FLAG: *(int *)(base + s->dst) = 1; return 0;
    case ARG_STRING: *(const char **)(base + s->dst) = v; return 0;
    case ARG_CUSTOM: return s->fn(base, s->name, v, e);
    case ARG_INT:
    case ARG_LONG:;
        /* bounds past a long's (a seed's 2^63 - 1 as a double) are its own */
        long lo = s->min <= -9.2e18 ? LONG_MIN : (long)s->min, hi = s->max >= 9.2e18 ? LONG_MAX : (long)s->max;
        if (args_int(s->name, v, lo, hi, &n, e)) return -1;
        if (s->kind == ARG_INT) *(int *)(base + s->dst) = (int)n;
        else *(long *)(base + s->dst) = n;
        return 0;
    case ARG_FLOAT:
    case ARG_DOUBLE:
        if (args_float(s->name, v, s->min, s->max, &x, e)) return -1;
        if (s->kind == ARG_FLOAT) *(float *)(base + s->dst) = (float)x;
        else *(double *)(base + s->dst) = x;
        return 0;
    case ARG_CHOICE: {
        int i = choice_index(s->metavar, v);
        char words[256];
        choice_prose(s->metavar, words, sizeof words);
        if (i < 0) return err_usage(e, "%s: expected %s (got '%s')", s->name, words, v);
        *(int *)(base + s->dst) = i;
        return 0;
    }
    }
    return err_usage(e, "%s: a row of no kind", s->name);
}

int args_parse_one(Args *a, const ArgsTable *const *tables, void *const *opts, Err *e) {
    const char *f = a->argv[a->i];
    for (int k = 0; tables[k]; k++)
        for (int r = 0; r < tables[k]->n; r++) {
            const ArgSpec *s = &tables[k]->rows[r];
            if (strcmp(s->name, f)) continue;
            a->i++;
            const char *v = NULL;
            if (s->kind != ARG_FLAG && (s->kind != ARG_CUSTOM || s->metavar) && !(v = args_value(a, e))) return -1;
            if (store_value(s, opts[k], v, e)) return -1;
            if (s->also) *(int *)((char *)opts[k] + s->also - 1) = 1;
            return 1;
        }
    return 0;
}

int args_parse_table(Args *a, const ArgsTable *const *tables, void *const *opts, Err *e) {
    while (a->i < a->argc) {
        const char *f = a->argv[a->i];
        if (args_is_help(f)) return ARGS_HELP;
        if (f[0] != '-' || !f[1]) return ARGS_POSITIONAL;
        int r = args_parse_one(a, tables, opts, e);
        if (r < 0) return -1;
        if (r == 0) return args_unknown(f, e);
    }
    return ARGS_DONE;
}

int args_parse_argv(int argc, char **argv, const ArgsTable *const *tables, void *const *opts, Err *e) {
    Args a = {argc, argv, 1};
    int r = args_parse_table(&a, tables, opts, e);
    return r == ARGS_POSITIONAL ? args_unknown(argv[a.i], e) : r;
}

#define HELP_COL 20   /* where a row's help starts */
#define HELP_WIDTH 100 /* where it wraps */

/* Print text from column col, wrapped at HELP_WIDTH, breaking at "\n" too;
 * at is the column the cursor is at. */
static void print_wrapped(const char *text, int at, int col) {
    int fresh = 1; /* no word on this line yet */
    while (*text) {
        if (*text == '\n') { printf("\n%*s", col, ""), at = col, fresh = 1, text++; continue; }
        size_t w = strcspn(text, " \n");
        if (!fresh && at + 1 + (int)w > HELP_WIDTH) printf("\n%*s", col, ""), at = col;
        else if (!fresh) putchar(' '), at++;
        fresh = 0;
        printf("%.*s", (int)w, text);
        at += (int)w;
        text += w;
        text += strspn(text, " ");
    }
    putchar('\n');
}

void args_help_table(const ArgsTable *t) {
    if (t->title) printf("%s:\n", t->title);
    for (int r = 0; r < t->n; r++) {
        const ArgSpec *s = &t->rows[r];
        char text[4096];
        int at = printf("  %s%s%s", s->name, s->metavar ? " " : "", s->metavar ? s->metavar : "");
        at += printf("%*s", at < HELP_COL - 1 ? HELP_COL - at : 2, "");
        args_expand(s->help ? s->help : "", text, sizeof text);
        print_wrapped(text, at, HELP_COL);
    }
}

void args_help_wrap(const char *text, int indent) {
    size_t cap = strlen(text) + 4096;
    char *out = malloc(cap);
    printf("%*s", indent, "");
    if (out) args_expand(text, out, cap);
    print_wrapped(out ? out : text, indent, indent);
    free(out);
}

void args_help_text(const char *text) {
    size_t cap = strlen(text) + 4096;
    char *out = malloc(cap);
    if (!out) { puts(text); return; } /* the lists unexpanded beat no help */
    args_expand(text, out, cap);
    puts(out);
    free(out);
}

void args_help_tables(const ArgsTable *const *tables) {
    for (int k = 0; tables[k]; k++) args_help_table(tables[k]);
}

/* ---- the predictors' words ---- */

/* The properties args_pred_words selects by, of row i of the list. */
static unsigned pred_props(int i) {
    const PredInfo *r = &PRED_INFO[i];
    return (r->policy ? ARGS_PRED_POLICY : 0u) | (r->thr == PRED_THR_THETA ? ARGS_PRED_THETA : 0u) |
           (r->scored ? ARGS_PRED_SCORED : 0u) | (r->label ? ARGS_PRED_LABEL : 0u) | (r->ours ? ARGS_PRED_OURS : 0u) |
           (r->scored || r->label ? ARGS_PRED_SQL : 0u); /* the store keeps every scored one and the label */
}

void args_pred_words(char *buf, size_t cap, unsigned all, unsigned none, const char *sep, const char *last) {
    const char *pick[PRED_COUNT];
    int n = 0;
    size_t k = 0;
    unsigned mask = all & ~(unsigned)ARGS_PRED_FIELD;
    for (int i = 0; i < PRED_COUNT; i++)
        if ((pred_props(i) & mask) == mask && !(pred_props(i) & none))
            pick[n++] = all & ARGS_PRED_FIELD ? PRED_INFO[i].field : PRED_INFO[i].word;
    buf[0] = 0;
    for (int i = 0; i < n && k < cap; i++)
        k += snprintf(buf + k, cap - k, "%s%s", !i ? "" : i == n - 1 ? last : sep, pick[i]);
}

/* The lists {name} stands for in help text: the predictors with these
 * properties, so that prose naming them follows engine/predictors.h. */
static const struct {
    const char *name;
    unsigned all, none;
    const char *sep, *last;
} PRED_LISTS[] = {
    {"{theta}", ARGS_PRED_THETA, 0, ", ", " and "},
    {"{estimators}", ARGS_PRED_THETA | ARGS_PRED_SCORED, 0, ", ", " and "},
    {"{ours}", ARGS_PRED_OURS, 0, ", ", " and "},
    {"{ours_fields}", ARGS_PRED_OURS | ARGS_PRED_FIELD, 0, ", ", " and "},
    {"{policies}", ARGS_PRED_POLICY, 0, "|", "|"},
    {"{sql}", ARGS_PRED_SQL, ARGS_PRED_LABEL, ", ", " or "}, /* the label is not a --predictor */
};

void args_expand(const char *text, char *out, size_t cap) {
    size_t k = 0;
    if (!cap) return;
    while (*text && k + 1 < cap) {
        size_t t = 0, n = 0;
        while (*text == '{' && t < sizeof PRED_LISTS / sizeof PRED_LISTS[0] &&
               strncmp(text, PRED_LISTS[t].name, n = strlen(PRED_LISTS[t].name)))
            t++;
        if (*text != '{' || t == sizeof PRED_LISTS / sizeof PRED_LISTS[0]) { out[k++] = *text++; continue; }
        args_pred_words(out + k, cap - k, PRED_LISTS[t].all, PRED_LISTS[t].none, PRED_LISTS[t].sep, PRED_LISTS[t].last);
        k += strlen(out + k);
        text += n;
    }
    out[k] = 0;
}
