/* args.h — flag parsing and error lines shared by the subcommands.
 *
 * Every command's flags are rows of const tables (ArgSpec, below): the
 * parser (args_parse_table) and --help (args_help_table) walk the same
 * rows, so a flag is documented exactly when it is parsed. Shared groups
 * (the model, prompt, sampling, attention policy, head set: ARGS_MODEL …)
 * are tables of RunOpts that the commands list beside their own, so they
 * agree on names, ranges and messages. Values are strict: "12x", "",
 * out-of-range numbers and unknown flags are one-line errors.
 *
 * The error convention, for every command: an error is one line on stderr,
 * "ahascope CMD: message", CMD being the subcommand the user typed (`run`
 * when run hands over to tui or generate); before a command is known the
 * line is "ahascope: message". Messages do not repeat the command. A usage
 * error exits 2: an unknown flag or argument, a flag missing its value or
 * with a malformed or out-of-range one, a required flag missing, flags that
 * conflict — anything the command line alone shows to be wrong (Err.usage,
 * set by err_usage and by every parser here). Any other failure exits 1: a
 * file that cannot be read or written, a bad model, a database error, a
 * value that does not fit the model. Commands return through args_fail().
 * --help prints on stdout and exits 0. Messages quote paths, flag values
 * and fields of files, so every line printed here is escaped by the
 * terminal rule of engine/textout.h (an ESC shows as \x1b, a newline as
 * \n): nothing a file or an argument holds reaches the terminal raw.
 */
#ifndef AHASCOPE_ARGS_H
#define AHASCOPE_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/aha.h"
#include "engine/clock.h" /* clock_now: the commands time what they report by it */
#include "engine/err.h"
#include "engine/headset.h"

typedef struct {
    int argc;
    char **argv;
    int i; /* next index to read */
} Args;

/* The --static-heads forms beyond "l.h,..." and a file of them: a
 * DuoAttention table, the set calibrate picks from recorded runs, the
 * published tables of engine/headtab.h (app/headsets.h reads them all). */
#define APP_DUO_PREFIX "duo:"
#define APP_CALIB_PREFIX "calib:"
#define APP_RETRIEVAL_PREFIX "retrieval-json:"
#define APP_PRULONG_PREFIX "prulong:"
#define APP_MOA_PREFIX "moa:"
#define APP_WINDOWS_PREFIX "windows:"

/* Which form a head-set spec is, by its prefix. */
typedef enum {
    HEADS_LIST, HEADS_DUO, HEADS_CALIB, HEADS_RETRIEVAL, HEADS_PRULONG, HEADS_MOA, HEADS_WINDOWS
} HeadsForm;

/* The form of spec, and in *rest what follows its prefix. */
HeadsForm args_heads_form(const char *spec, const char **rest);

/* Flags of the model, prompt, sampling and attention policy. */
typedef struct {
    const char *model;      /* --model PATH (file or directory) */
    const char *tokenizer;  /* --tokenizer PATH */
    const char *prompt;     /* --prompt TEXT, or the text of --prompt-file once app_load read it */
    const char *prompt_file; /* --prompt-file FILE */
    int have_prompt;
    int steps;              /* --steps N (0: default) */
    int have_steps;         /* --steps was given: a longer prompt is cut to it (app_steps_for) */
    float temperature;      /* --temperature T */
    float topp;             /* --topp P */
    uint64_t seed;          /* --seed S */
    int have_seed;
    AttnConfig attn;        /* --policy --window --sinks --tau --theta --p --profile */
    int have_policy, have_window, have_tau;
    const char *routers;    /* --routers FILE | random[:SEED] */
    const char *static_heads; /* --static-heads l.h,... or FILE or duo:FILE */
    HeadPick static_pick;   /* --budget K|P% or --duo-threshold X: how a duo: table becomes heads */
    int have_budget, have_duo_threshold;
    int context;            /* --context N: cap a Hugging Face model's context (0: default) */
    int chat;               /* --chat: wrap the prompt in the model family's chat format */
    int kv_dtype;           /* --kv-dtype f32|bf16|f16: the KV cache's type (-1: the model's) */
} RunOpts;

/* ---- flag tables ----
 *
 * A command's flags are rows of const tables, one row per flag: its name,
 * the kind of value it takes, where the value goes (an offset into the
 * options struct the table describes), its bounds, the placeholder of its
 * value and its help. args_parse_table reads argv by the rows and
 * args_help_table prints their help lines from the same rows, so a flag
 * cannot be parsed without being documented or documented without being
 * parsed. Errors follow the convention above: "FLAG needs a value",
 * "FLAG: 'x' is not a whole number", "FLAG: N is out of range [lo, hi]". */

typedef enum {
    ARG_FLAG,   /* no value: the int at dst becomes 1 */
    ARG_INT,    /* an int, a whole number in [min, max] */
    ARG_LONG,   /* a long, a whole number in [min, max] */
    ARG_FLOAT,  /* a float, a number in [min, max] */
    ARG_DOUBLE, /* a double, a number in [min, max] */
    ARG_STRING, /* a const char * pointing into argv */
    ARG_CHOICE, /* one of the words of metavar ("main|pattern"): the int at dst gets its index */
    ARG_CUSTOM, /* fn reads it: takes a value iff metavar is set */
} ArgKind;

/* An ARG_CUSTOM row's reader: opts is the table's struct, value NULL for a
 * row without metavar. 0, or -1 with a usage error in e. */
typedef int (*ArgFn)(void *opts, const char *flag, const char *value, Err *e);

typedef struct {
    const char *name;    /* "--runs" */
    ArgKind kind;
    size_t dst;          /* offsetof the destination in the table's struct (ARG_CUSTOM: unused) */
    double min, max;     /* bounds of a number (whole for INT and LONG) */
    const char *metavar; /* the value's placeholder in help ("N"); NULL for ARG_FLAG */
    const char *help;    /* its help: wrapped at 100 columns, "\n" breaks, {lists} expanded (args_expand) */
    size_t also;         /* ARG_ALSO(T, field): an int set to 1 when the flag is given; 0 none */
    ArgFn fn;            /* ARG_CUSTOM's reader */
} ArgSpec;

/* The also of a row: a "given" mark or a mode the flag implies. Offset + 1,
 * so that 0, the default of an initializer, means none. */
#define ARG_ALSO(T, field) (offsetof(T, field) + 1)

/* The rows of one struct's flags, and the heading their help goes under. */
typedef struct {
    const char *title;   /* "policy flags": printed above the rows (with ':'); NULL none */
    const ArgSpec *rows;
    int n;
    size_t size;         /* sizeof the struct the rows' offsets point into */
} ArgsTable;

#define ARGS_TABLE(title, T, rows) {title, rows, (int)(sizeof rows / sizeof rows[0]), sizeof(T)}

/* The shared groups, their rows' offsets into RunOpts: the model, the
 * prompt, sampling, the attention policy and the static head set. */
/* What --model takes, said once for every command's help. */
#define ARGS_MODEL_KINDS \
    "a llama2.c checkpoint, a Hugging Face folder, a GGUF file, a pulled OWNER/NAME[:FILE] or ollama:NAME[:TAG]"

extern const ArgsTable ARGS_MODEL, ARGS_PROMPT, ARGS_SAMPLING, ARGS_POLICY, ARGS_HEADS;

/* What args_parse_table stopped at. */
enum { ARGS_DONE = 0, ARGS_HELP = 1, ARGS_POSITIONAL = 2 };

/* Read flags from a->i on by tables (NULL-terminated), the rows of
 * tables[k] writing into opts[k]; the first table holding a name wins.
 * Returns ARGS_DONE at the end of argv, ARGS_HELP at --help or -h,
 * ARGS_POSITIONAL at an argument that is not a flag ("-" or no leading
 * '-'; a->i left on it, for the caller to take and call again), -1 with a
 * usage error in e for an unknown flag or a bad value. */
int args_parse_table(Args *a, const ArgsTable *const *tables, void *const *opts, Err *e);

/* args_parse_table over argv[1..argc) for a command that takes no
 * positional argument (one is "unexpected argument"): ARGS_DONE,
 * ARGS_HELP, or -1 with e set. */
int args_parse_argv(int argc, char **argv, const ArgsTable *const *tables, void *const *opts, Err *e);

/* Read argv[a->i] if it is a row of tables: 1 consumed (with its value),
 * 0 not one of them (a->i unchanged), -1 with e set on a bad value. */
int args_parse_one(Args *a, const ArgsTable *const *tables, void *const *opts, Err *e);

/* The row of tables named flag, or NULL. */
const ArgSpec *args_find(const ArgsTable *const *tables, const char *flag);

/* Print t's help lines on stdout: the title, then per row "  --name
 * METAVAR" and its help from column 20, wrapped at 100 columns. */
void args_help_table(const ArgsTable *t);

/* args_help_table for each of tables (NULL-terminated). */
void args_help_tables(const ArgsTable *const *tables);

/* Properties of a predictor's row in engine/predictors.h, for lists in
 * --help prose that must follow the list. */
enum {
    ARGS_PRED_POLICY = 1,  /* a --policy */
    ARGS_PRED_THETA = 2,   /* decided on a mass's log-odds against θ */
    ARGS_PRED_SCORED = 4,  /* scored against the oracle */
    ARGS_PRED_LABEL = 8,   /* the oracle itself */
    ARGS_PRED_OURS = 16,   /* this project's, not the paper's */
    ARGS_PRED_SQL = 32,    /* a column of the SQL views */
    ARGS_PRED_FIELD = 256, /* a modifier: write the row's trace field, not its word */
};

/* The words of the predictors that have every property of all and none of
 * none, in the list's order, joined by sep, the last two by last (e.g.
 * ", " and " and "), into buf. */
void args_pred_words(char *buf, size_t cap, unsigned all, unsigned none, const char *sep, const char *last);

/* Copy help text into out (cap bytes), each {list} in it replaced by the
 * predictors it names: {theta} (decided against θ, the oracle included),
 * {estimators} (those scored against the oracle), {ours} (this project's
 * additions), {ours_fields} (their trace fields), {policies} ("a|b|..."),
 * {sql} (the predictors of the SQL views, the oracle label aside).
 * Row help goes through it; prose through args_help_text. */
void args_expand(const char *text, char *out, size_t cap);

/* Print a paragraph of help prose with its {lists} expanded, wrapped at
 * 100 columns, every line indented by indent ("\n" breaks a line). */
void args_help_wrap(const char *text, int indent);

/* Print help prose (and a newline) with its {lists} expanded. */
void args_help_text(const char *text);

/* Defaults: steps 256, temperature 1.0, top-p 0.9, seed from the clock,
 * full policy (aha when routers are given), window 32, the model's KV dtype. */
void runopts_defaults(RunOpts *o);

/* If argv[a->i] is one of the RunOpts flags (a row of the five shared
 * tables), consume it (and its value) and return 1; return 0 if not ours;
 * -1 with e set on a bad value. For a parser that is not a table walk. */
int runopts_parse(RunOpts *o, Args *a, Err *e);

/* Checks across the RunOpts flags once all are read: those the command
 * line alone shows to be wrong (a static policy without its heads, both
 * --prompt and --prompt-file). The
 * rest (routers for aha, ranges against the model) need the model. */
int runopts_check(const RunOpts *o, Err *e);

/* The --help lines of the flag groups runopts_parse reads, each flag with
 * its default, for the commands to print after their own. */
void args_help_model(void);
void args_help_sampling(void);
void args_help_policy(void);

/* The value after flag argv[a->i - 1]; error if missing. */
const char *args_value(Args *a, Err *e);

/* Strict number parsers: the whole string must be a number in [lo, hi]. */
int args_int(const char *flag, const char *s, long lo, long hi, long *out, Err *e);
int args_float(const char *flag, const char *s, double lo, double hi, double *out, Err *e);

/* A budget of heads, "K" (a whole number) or "P%" (0 to 100), for flag. */
int args_budget(const char *flag, const char *s, HeadBudget *out, Err *e);

/* Whether a head-set spec (the value of flag) and the budget or threshold
 * given with it agree: duo: and retrieval-json: need one of the two,
 * calib: a budget, prulong: either or neither (then > 0.5), a list
 * neither. moa: and windows: run their windows and take neither, unless
 * as_set (compare, a ranking): then they need a budget. A usage error
 * otherwise. */
int args_heads_pick(const char *spec, int have_budget, int have_threshold, int as_set, const char *flag, Err *e);

/* One shard of a job split across processes or machines (--shard I/N):
 * item k (a sequence, a prompt line) belongs to shard k mod N. I is
 * 0-based, as Slurm's array task ids are; unsharded is 0/1. */
typedef struct {
    long i, n;
} ArgsShard;

/* Parse "I/N" (0 <= I < N <= 2^20) for flag; a usage error otherwise. */
int args_shard(const char *flag, const char *s, ArgsShard *out, Err *e);

/* True if item k is this shard's (always for 0/1). */
static inline int args_shard_owns(const ArgsShard *s, long k) { return s->n <= 1 || k % s->n == s->i; }

/* True if s is --help or -h. */
int args_is_help(const char *s);

/* Name the subcommand the user typed, once, before running it: the CMD of
 * every error line. */
void args_set_command(const char *name);

/* The usage error for an argument the command does not take: an unknown
 * flag (pointing at --help) or an unexpected positional argument. Returns -1. */
int args_unknown(const char *arg, Err *e);

/* Print a warning, the run going on, as one line on stderr: "ahascope CMD:
 * warning: <msg>", msg escaped for the terminal. */
void args_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same for a note, something the user should know that is no fault:
 * "ahascope CMD: note: <msg>". */
void args_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print e as "ahascope CMD: <msg>" on stderr, msg escaped for the
 * terminal; return the exit status, 2 for a usage error and 1 for a failure. */
int args_fail(const Err *e);

#endif
