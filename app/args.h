/* args.h — flag parsing and error lines shared by the subcommands.
 *
 * Every command walks argv with an Args cursor; shared groups of flags (the
 * model, sampling, attention policy) are parsed by one function each so the
 * commands agree on names, ranges and messages. Values are strict: "12x",
 * "", out-of-range numbers and unknown flags are one-line errors.
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

/* The --static-heads forms beyond "l.h,..." and a file of them:
 * a DuoAttention table, and the set calibrate picks from recorded runs
 * (app/headsets.h reads both). */
#define APP_DUO_PREFIX "duo:"
#define APP_CALIB_PREFIX "calib:"

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

/* Defaults: steps 256, temperature 1.0, top-p 0.9, seed from the clock,
 * full policy (aha when routers are given), window 32, the model's KV dtype. */
void runopts_defaults(RunOpts *o);

/* If argv[a->i] is one of the RunOpts flags, consume it (and its value)
 * and return 1; return 0 if not ours; -1 with e set on a bad value. */
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
 * given with it go together: a duo: table needs one of them, a calib: set a
 * budget, any other spec neither. A usage error otherwise. */
int args_heads_pick(const char *spec, int have_budget, int have_threshold, const char *flag, Err *e);

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

/* Print e as "ahascope CMD: <msg>" on stderr, msg escaped for the
 * terminal; return the exit status, 2 for a usage error and 1 for a failure. */
int args_fail(const Err *e);

#endif
