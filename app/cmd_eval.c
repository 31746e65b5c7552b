/* `ahascope eval`: a policy on held-out sequences, teacher-forced — and with
 * --match-budget aha, every training-free predictor at the AHA routers'
 * global share, side by side. This file reads the flags by their table and
 * checks them; app/eval_run.h evaluates. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/eval_table.h"
#include "app/eval_run.h"
#include "app/eval_sets.h"
#include "engine/pool.h"

static int read_shard(void *opts, const char *flag, const char *v, Err *e) {
    return args_shard(flag, v, &((EvalOpts *)opts)->shard, e);
}

/* --self's seed: a RunOpts seed, read as the sampling flags read it. */
static int read_seed(void *opts, const char *flag, const char *v, Err *e) {
    long n = 0;
    if (args_int(flag, v, 0, 0x7fffffffffffffffL, &n, e)) return -1;
    ((EvalOpts *)opts)->o.seed = (uint64_t)n;
    return 0;
}

/* --share S[,S...]: one budget, or with --tasks several, each in [0, 1]. */
static int read_shares(void *opts, const char *flag, const char *v, Err *e) {
    EvalOpts *x = opts;
    if (x->by_keys) return err_usage(e, "--keys and --share exclude each other (one budget)");
    x->n_shares = 0;
    for (const char *p = v; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char one[64];
        double s = 0;
        if (x->n_shares == EVAL_MAX_SHARES) return err_usage(e, "%s takes at most %d budgets", flag, EVAL_MAX_SHARES);
        snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), p);
        if (args_float(flag, one, 0, 1, &s, e)) return -1;
        x->shares[x->n_shares++] = s;
        p += len + (end != NULL);
    }
    if (x->n_shares == 0) return err_usage(e, "%s needs a share from 0 to 1", flag);
    x->share = x->shares[0];
    return 0;
}

/* --keys F: --share's search, on the share of keys read per query head. */
static int read_keys(void *opts, const char *flag, const char *v, Err *e) {
    EvalOpts *x = opts;
    double f = 0;
    if (x->n_shares && !x->by_keys) return err_usage(e, "--keys and --share exclude each other (one budget)");
    if (args_float(flag, v, 0, 1, &f, e)) return -1;
    x->share = x->shares[0] = f, x->n_shares = 1, x->by_keys = 1;
    return 0;
}

#define X(field) offsetof(EvalOpts, field)

/* The held-out data and the output, as eval and sweep read them. */
static const ArgSpec EVAL_DATA_ROWS[] = {
    {"--self", ARG_LONG, X(self_n), 1, 1 << 20, "N",
     .help = "N sequences sampled from the model at temperature 1 with full attention (default 8; eval's --seed, "
             "default 1234, so they are not a training stream)"},
    {"--data", ARG_STRING, X(data), .metavar = "FILE",
     .help = "a text file cut into --seq-len chunks (default 256, at most the context), at most --max-seqs of them "
             "(default 1000)"},
    {"--seq-len", ARG_LONG, X(seq_len), 2, 1 << 20, "T", .help = "tokens a sequence (default 256)"},
    {"--max-seqs", ARG_LONG, X(max_seqs), 1, 1 << 20, "N", .help = "--data's chunks at most (default 1000)"},
    {"--db", ARG_STRING, X(db), .metavar = "FILE",
     .help = "record one run per sequence and the summary in the `evals` table (default: none)"},
    {"--shard", ARG_CUSTOM, .metavar = "I/N", .fn = read_shard,
     .help = "evaluate only shard I of N (I from 0 to N-1): sequence k when k mod N = I, the same tokens as "
             "unsharded; with --db each shard writes its own file, `merge` joins them and --from-db prints the "
             "unsharded table"},
    {"--from-db", ARG_STRING, X(from_db), .metavar = "DB",
     .help = "run nothing: re-summarise the evaluations recorded in DB (merged shards combined into one row each); "
             "the model flags name the model they were run on (for the byte columns)"},
    {"--json", ARG_FLAG, X(json), .help = "print the rows as JSON"},
    {"--plot", ARG_FLAG, X(plot),
     .help = "global share against KL, one mark per setting, in the terminal (--tasks --match-budget aha: accuracy "
             "against global share and keys read, every predictor, random and local, a panel per task and the "
             "average; ASCII under AHASCOPE_ASCII or a non-UTF-8 locale)"},
    {"--svg", ARG_STRING, X(svg), .metavar = "FILE", .help = "the same plot as SVG"},
    {"--threads", ARG_LONG, X(threads), 1, 64, "N", .help = "worker threads (default: all cores)"},
};
const ArgsTable EVAL_DATA_FLAGS = ARGS_TABLE(NULL, EvalOpts, EVAL_DATA_ROWS);

static const ArgSpec EVAL_ROWS[] = {
    {"--seed", ARG_CUSTOM, .metavar = "S", .fn = read_seed, .help = "the --self sequences' seed (default 1234)"},
    {"--label", ARG_STRING, X(label), .metavar = "TEXT", .help = "the evals row's label (default empty)"},
    {"--share", ARG_CUSTOM, .metavar = "S[,S...]", .fn = read_shares,
     .help = "aha: choose tau on the evaluated data so the routers' global share is S (within 0.05 points; when the "
             "share steps over S at one tau, the nearest share reached, said on stderr with the step's two sides), "
             "overriding --tau and the file's: compares routers at exactly one budget (not with --shard); with "
             "--tasks a list runs each budget in turn (at most 16), --json then printing one array a line"},
    {"--keys", ARG_CUSTOM, .metavar = "F", .fn = read_keys,
     .help = "aha: as --share, but tau is chosen so the keys read per query head (keys/qh) are the share F of full "
             "attention's (within 0.05 points): routers of other windows, or a multi-choice router, at matched keys "
             "read; with --match-budget aha the other rows then match the routers' global share"},
    {"--match-budget", ARG_STRING, X(match), .metavar = "aha",
     .help = "evaluate the AHA routers, then choose for {estimators} ({ours} this project's) and oracle the theta, "
             "for random the p, and for static the head count that give the same global share on the same data, "
             "and evaluate each (needs --routers; not with --shard); the static heads are ranked on calibration "
             "sequences apart from the evaluated ones: N more sampled with another seed, or the first quarter of "
             "--data's chunks (--static-heads duo:FILE or calib:DB#RUN: ranked by that calibration instead); every "
             "row's KL and perplexity get a 95% bootstrap interval over sequences and one of their difference from "
             "aha's, paired (a single policy's perplexity too)"},
    {"--calibrate-items", ARG_STRING, X(calibrate_items), .metavar = "FILE",
     .help = "--tasks: choose the thresholds (--share's tau, --match-budget's theta, p and head count) on this task "
             "file's prompts, apart from the scored items (an item of it that is also scored is an error), so a "
             "matched row is not tuned on what it is scored on (default: on the scored items themselves)"},
    {"--choice-resamples", ARG_LONG, X(choice_resamples), 1, 1000, "N",
     .help = "with --calibrate-items: an accuracy interval that covers the thresholds' choice too: N times the "
             "calibration items resampled with replacement and every threshold chosen again, all scored items "
             "answered at each choice, and the pooled items resampled under each (costs N more matchings)"},
    {"--tasks", ARG_STRING, X(tasks), .metavar = "FILE[,FILE...]",
     .help = "score the items of `ahascope tasks` instead: each answered greedily under full attention and under "
             "the policy (with --match-budget aha, every predictor at the routers' global share on the prompts), "
             "exact match, accuracy with its 95% bootstrap interval over items and McNemar's exact test against "
             "full attention, the KL's over items and (matched) its difference from aha's, paired by item, and "
             "the same for the KL and NLL at the gold answer forced after each prompt; with --db each item is "
             "first recorded once under full attention (profiled, 8 far positions per head) over its prompt, as a "
             "run whose origin is FILE#K (K from 0); several files (sets drawn apart, at most 16) are each scored at "
             "one setting and printed set by set, then pooled over all their items (with --share or --match-budget "
             "they need --calibrate-items)"},
    {"--grid", ARG_LONG, X(grid), 1, 20, "N",
     .help = "--tasks: each row's accuracy by needle depth (N buckets of the first needle token's place) and "
             "context (each distinct length), with its effective length: the longest context before the first "
             "whose accuracy falls below 85% of the shortest context's"},
    {"--grid-svg", ARG_STRING, X(grid_svg), .metavar = "FILE", .help = "--grid's tables as SVG heatmaps"},
};
static const ArgsTable EVAL_FLAGS = ARGS_TABLE(NULL, EvalOpts, EVAL_ROWS);

const ArgsTable *const EVAL_TABLES[] = {&EVAL_DATA_FLAGS, &EVAL_FLAGS, &ARGS_MODEL, &ARGS_POLICY, &ARGS_HEADS, NULL};

static void eval_help(void) {
    puts("usage: ahascope eval [--data FILE | --self N] [--seq-len T] [--max-seqs N] [--seed S] [--db FILE]\n"
         "                     [--shard I/N] [--share S] [--match-budget aha] [--label TEXT] [--json] [--plot]\n"
         "                     [--svg FILE] [--threads N] [model flags] [policy flags]\n"
         "       ahascope eval --from-db DB [--json] [--plot] [--svg FILE] [model flags]\n"
         "       ahascope eval --tasks FILE[,FILE...] [--calibrate-items FILE] [--db FILE] [--share S[,S...]]\n"
         "                     [--match-budget aha] [--json] [--plot] [--svg FILE] [--grid N] [--grid-svg FILE]\n"
         "                     [--threads N] [model flags] [policy flags]\n"
         "\n"
         "Teacher-forced over held-out sequences: perplexity, mean KL(full || policy) per token, global\n"
         "share, keys-read fraction, and each predictor's precision / recall / F1 against the oracle,\n"
         "with the AUC of its value's ranking of the oracle's labels.\n"
         "The policy evaluated is --policy (default full, or aha when --routers is given).\n"
         "--from-db DB re-summarises every evaluation DB holds (eval --db, sweep --db) into this table.\n"
         "A progress bar goes to stderr.");
    args_help_tables(EVAL_TABLES);
}

/* Flags of eval. Returns 1 on --help, 0 parsed, -1 error. */
static int parse(int argc, char **argv, EvalOpts *x, Err *e) {
    runopts_defaults(&x->o);
    x->o.seed = 1234;
    x->self_n = 8, x->seq_len = 256, x->max_seqs = 1000, x->threads = pool_default_threads();
    x->share = NAN;
    void *const opts[] = {x, x, &x->o, &x->o, &x->o};
    int r = args_parse_argv(argc, argv, EVAL_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
    HeadsForm own = args_heads_form(x->o.static_heads, NULL);
    if (x->match && x->o.static_heads && own != HEADS_MOA && own != HEADS_WINDOWS) {
        /* a ranking for the matched static row, its budget set by the match (own windows add a row instead) */
        const char *h = x->o.static_heads;
        HeadsForm f = own;
        if (f != HEADS_DUO && f != HEADS_CALIB && f != HEADS_RETRIEVAL && f != HEADS_PRULONG)
            return err_usage(e, "--match-budget ranks the static heads: --static-heads must be duo:FILE or "
                                "calib:DB#RUN (or retrieval-json:FILE, prulong:FILE), not '%s'", h);
        if (x->o.have_budget || x->o.have_duo_threshold)
            return err_usage(e, "--match-budget sets the static heads' budget: --budget and --duo-threshold do not "
                                "apply");
        x->static_rank = h, x->o.static_heads = NULL;
    }
    if (runopts_check(&x->o, e) || eval_opts_shard_check(x, e)) return -1;
    if (x->match && strcmp(x->match, "aha") != 0) return err_usage(e, "--match-budget takes 'aha' (the routers)");
    if (x->match && !x->o.routers) return err_usage(e, "--match-budget aha needs --routers FILE");
    if (x->tasks && (x->data || x->from_db || x->shard.n > 1))
        return err_usage(e, "--tasks scores its own items: --data, --from-db and --shard do not apply");
    if (x->tasks && (x->plot || x->svg) && !x->match)
        return err_usage(e, "--tasks draws its accuracy against the budget with --match-budget aha: --plot and "
                            "--svg need it");
    if (!x->tasks && (x->grid || x->grid_svg || x->n_shares > 1))
        return err_usage(e, "--grid, --grid-svg and a list of --share budgets are --tasks's");
    if (x->grid_svg && !x->grid) return err_usage(e, "--grid-svg draws --grid's tables: give --grid N");
    if (x->choice_resamples && !x->calibrate_items)
        return err_usage(e, "--choice-resamples resamples the calibration items: it needs --calibrate-items FILE");
    if (x->calibrate_items && !x->tasks)
        return err_usage(e, "--calibrate-items chooses thresholds on task items: it needs --tasks");
    if (x->tasks && strchr(x->tasks, ',') && (x->plot || x->svg || x->grid))
        return err_usage(e, "--plot, --svg and --grid draw one set of items: give --tasks one file");
    if (!isnan(x->share) && (x->shard.n > 1 || x->from_db)) /* each shard would choose its own τ */
        return err_usage(e, "--share chooses tau on the whole evaluated data: not with --shard or --from-db");
    return 0;
}

int cmd_eval(int argc, char **argv) {
    static EvalOpts x;
    Err e;
    memset(&x, 0, sizeof x);
    int r = parse(argc, argv, &x, &e);
    if (r == 1) { eval_help(); return 0; }
    if (r < 0 || (x.from_db ? eval_run_recorded(&x, &e) : x.tasks ? eval_run_tasks(&x, &e) : eval_run_policy(&x, &e)))
        return args_fail(&e);
    return 0;
}
