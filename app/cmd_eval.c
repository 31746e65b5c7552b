/* `ahascope eval`: a policy on held-out sequences, teacher-forced — and with
 * --match-budget aha, every training-free predictor at the AHA routers'
 * global share, side by side. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/eval_table.h"
#include "app/eval_tasks.h"
#include "app/headsets.h"
#include "app/run_info.h"
#include "engine/files.h"
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
    {"--plot", ARG_FLAG, X(plot), .help = "global share against KL, one mark per setting, in the terminal"},
    {"--svg", ARG_STRING, X(svg), .metavar = "FILE", .help = "the same plot as SVG"},
    {"--threads", ARG_LONG, X(threads), 1, 64, "N", .help = "worker threads (default: all cores)"},
};
const ArgsTable EVAL_DATA_FLAGS = ARGS_TABLE(NULL, EvalOpts, EVAL_DATA_ROWS);

static const ArgSpec EVAL_ROWS[] = {
    {"--seed", ARG_CUSTOM, .metavar = "S", .fn = read_seed, .help = "the --self sequences' seed (default 1234)"},
    {"--label", ARG_STRING, X(label), .metavar = "TEXT", .help = "the evals row's label (default empty)"},
    {"--share", ARG_DOUBLE, X(share), 0, 1, "S",
     .help = "aha: choose tau on the evaluated data so the routers' global share is S (within 0.05 points), "
             "overriding --tau and the file's: compares routers at exactly one budget (not with --shard)"},
    {"--match-budget", ARG_STRING, X(match), .metavar = "aha",
     .help = "evaluate the AHA routers, then choose for {estimators} ({ours} this project's) and oracle the theta, "
             "for random the p, and for static the head count that give the same global share on the same data, "
             "and evaluate each (needs --routers; not with --shard); the static heads are ranked on calibration "
             "sequences apart from the evaluated ones: N more sampled with another seed, or the first quarter of "
             "--data's chunks (--static-heads duo:FILE or calib:DB#RUN: ranked by that calibration instead); every "
             "row's KL and perplexity get a 95% bootstrap interval over sequences and one of their difference from "
             "aha's, paired (a single policy's perplexity too)"},
    {"--tasks", ARG_STRING, X(tasks), .metavar = "FILE",
     .help = "score the items of `ahascope tasks` instead: each answered greedily under full attention and under "
             "the policy (with --match-budget aha, every predictor at the routers' global share on the prompts), "
             "exact match, accuracy with its 95% bootstrap interval over items and McNemar's exact test against "
             "full attention, the KL's over items and (matched) its difference from aha's, paired by item, and "
             "the same for the KL and NLL at the gold answer forced after each prompt; with --db each item is "
             "first recorded once under full attention (profiled, 8 far positions per head) over its prompt, as a "
             "run whose origin is FILE#K (K from 0)"},
};
static const ArgsTable EVAL_FLAGS = ARGS_TABLE(NULL, EvalOpts, EVAL_ROWS);

const ArgsTable *const EVAL_TABLES[] = {&EVAL_DATA_FLAGS, &EVAL_FLAGS, &ARGS_MODEL, &ARGS_POLICY, &ARGS_HEADS, NULL};

static void eval_help(void) {
    puts("usage: ahascope eval [--data FILE | --self N] [--seq-len T] [--max-seqs N] [--seed S] [--db FILE]\n"
         "                     [--shard I/N] [--share S] [--match-budget aha] [--label TEXT] [--json] [--plot]\n"
         "                     [--svg FILE] [--threads N] [model flags] [policy flags]\n"
         "       ahascope eval --from-db DB [--json] [--plot] [--svg FILE] [model flags]\n"
         "       ahascope eval --tasks FILE [--db FILE] [--share S] [--match-budget aha] [--json] [--threads N] [model flags]\n"
         "                     [policy flags]\n"
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
    if (x->match && x->o.static_heads) { /* a ranking for the matched static row, its budget set by the match */
        const char *h = x->o.static_heads;
        if (strncmp(h, APP_DUO_PREFIX, strlen(APP_DUO_PREFIX)) && strncmp(h, APP_CALIB_PREFIX, strlen(APP_CALIB_PREFIX)))
            return err_usage(e, "--match-budget ranks the static heads: --static-heads must be duo:FILE or "
                                "calib:DB#RUN, not '%s'", h);
        if (x->o.have_budget || x->o.have_duo_threshold)
            return err_usage(e, "--match-budget sets the static heads' budget: --budget and --duo-threshold do not "
                                "apply");
        x->static_rank = h, x->o.static_heads = NULL;
    }
    if (runopts_check(&x->o, e) || eval_opts_shard_check(x, e)) return -1;
    if (x->match && strcmp(x->match, "aha") != 0) return err_usage(e, "--match-budget takes 'aha' (the routers)");
    if (x->match && !x->o.routers) return err_usage(e, "--match-budget aha needs --routers FILE");
    if (x->tasks && (x->data || x->from_db || x->shard.n > 1 || x->plot || x->svg))
        return err_usage(e, "--tasks scores its own items: --data, --from-db, --shard, --plot and "
                            "--svg do not apply");
    if (!isnan(x->share) && (x->shard.n > 1 || x->from_db)) /* each shard would choose its own τ */
        return err_usage(e, "--share chooses tau on the whole evaluated data: not with --shard or --from-db");
    return 0;
}

/* Global share of a setting on the data (no recording): what matching bisects. */
static double share_of(const AppLoaded *L, const EvalData *d, const EvalOpts *x, const AttnConfig *a, Err *e) {
    EvalSums s = {.share_only = 1};
    if (eval_policy(&L->model, NULL, a, d, (int)x->threads, NULL, NULL, 0, 0, &s, e)) return NAN;
    return s.gate_n > 0 ? s.gate_sum / s.gate_n : NAN;
}

/* The knob whose executed global share is closest to target, bisected in
 * [lo, hi] (the share falls as the knob rises) until within `tol`. */
static double match_knob(const AppLoaded *L, const EvalData *d, const EvalOpts *x, AttnConfig a, double target,
                         double lo, double hi, double tol, void (*set)(AttnConfig *, double), Err *e) {
    double best = lo, best_gap = INFINITY;
    for (int it = 0; it < 40; it++) {
        double k = 0.5 * (lo + hi);
        set(&a, k);
        double g = share_of(L, d, x, &a, e);
        if (isnan(g)) return NAN;
        if (fabs(g - target) < best_gap) best_gap = fabs(g - target), best = k;
        if (best_gap < tol) break;
        if (g > target) lo = k;
        else hi = k;
    }
    return best;
}

static void set_theta(AttnConfig *a, double k) { a->theta_logit = k; }

static void set_tau_logit(AttnConfig *a, double k) { a->tau = (float)(1.0 / (1.0 + exp(-k))); }

/* θ, as log-odds, whose executed global share is closest to target. The
 * estimates are log-odds spread over hundreds of nats (qada_bulk past 50),
 * which no probability θ could reach, so bisect on the log-odds in
 * [-100, 300]; stop within a quarter of a point. */
static double match_theta(const AppLoaded *L, const EvalData *d, const EvalOpts *x, AttnConfig a, double target, Err *e) {
    return match_knob(L, d, x, a, target, -100, 300, 0.0025, set_theta, e);
}

/* --share: the aha τ giving that global share on d, bisected on its
 * log-odds (a float τ resolves nothing past ±30); within 0.05 points, as
 * routers are compared at one budget on a few thousand decisions. */
static int match_tau(const AppLoaded *L, const EvalData *d, EvalOpts *x, Err *e) {
    double k = match_knob(L, d, x, x->o.attn, x->share, -30, 30, 0.0005, set_tau_logit, e);
    if (isnan(k)) return -1;
    set_tau_logit(&x->o.attn, k);
    return 0;
}

/* The K heads with the highest oracle rate in counts, K = target × heads. */
static uint8_t *static_heads_for(const long *counts, int cells, double target, int *k_out) {
    uint8_t *map = calloc(cells, 1);
    int k = (int)floor(target * cells + 0.5);
    for (int n = 0; map && n < k; n++) {
        int best = -1;
        double br = -1;
        for (int i = 0; i < cells; i++) {
            double r = counts[2 * i + 1] ? (double)counts[2 * i] / counts[2 * i + 1] : 0;
            if (!map[i] && r > br) br = r, best = i;
        }
        if (best >= 0) map[best] = 1;
    }
    *k_out = k;
    return map;
}

static int calibrate_counts(const AppLoaded *L, const EvalData *cal, const EvalOpts *x, long *counts, Err *e);

/* The static row's heads at the matched share g: the K = g x heads that
 * --static-heads's calibration ranks highest when it was given (*on its
 * spec), else the K of highest oracle rate over an AHA pass on cal. */
static int static_heads_at(const AppLoaded *L, const EvalData *cal, const EvalOpts *x, double g, uint8_t **heads,
                           int *k, const char **on, Err *e) {
    const Config *c = &L->model.c;
    int cells = c->n_layers * c->n_heads;
    if (x->static_rank) {
        *k = (int)floor(g * cells + 0.5), *on = x->static_rank;
        HeadPick pick = {.budget = {.value = *k}};
        AppHeadShape shape = {c->n_layers, c->n_heads, c->n_kv_heads};
        return app_headset_load(x->static_rank, &pick, &shape, heads, e);
    }
    long *counts = calloc((size_t)cells * 2, sizeof *counts);
    if (!counts) return err_set(e, "out of memory");
    int rc = calibrate_counts(L, cal, x, counts, e);
    if (rc == 0 && !(*heads = static_heads_for(counts, cells, g, k))) rc = err_set(e, "out of memory");
    *on = cal->desc;
    free(counts);
    return rc;
}

/* Per-head oracle counts of an AHA pass over the calibration data cal. */
static int calibrate_counts(const AppLoaded *L, const EvalData *cal, const EvalOpts *x, long *counts, Err *e) {
    EvalSums s = {.head_counts = counts, .ref_theta_logit = x->o.attn.theta_logit, .ref_set = 1};
    AttnConfig a = x->o.attn;
    a.policy = POLICY_AHA;
    return eval_policy(&L->model, NULL, &a, cal, (int)x->threads, NULL, NULL, 0, 0, &s, e);
}

/* --match-budget aha: AHA first, then every predictor at its global share;
 * the static heads are ranked on cal, not on the evaluated d. */
static int run_matched(const AppLoaded *L, const EvalData *d, const EvalData *cal, EvalOpts *x, Store *st,
                       StoreRunInfo *info, const TaskSet *tasks, Err *e) {
    int cells = L->model.c.n_layers * L->model.c.n_heads, rc = -1, n = 0, k = 0;
    uint8_t *heads = NULL;
    EvalRow *rows = calloc(DECIDE_COUNT + 2, sizeof *rows); /* aha, the θ predictors, random, static */
    EvalSeq *seqs = calloc((size_t)(DECIDE_COUNT + 2) * d->n, sizeof *seqs); /* each row's, for intervals */
    if (!rows || !seqs) { err_set(e, "out of memory"); goto out; }
    for (int i = 0; i < DECIDE_COUNT + 2; i++) rows[i].seqs = seqs + (size_t)i * d->n;
    EvalRow *r = &rows[n++];
    snprintf(r->name, sizeof r->name, "aha");
    snprintf(r->knob, sizeof r->knob, "tau=%.3g", x->o.attn.tau);
    r->a = x->o.attn, r->a.policy = POLICY_AHA;
    if (eval_row(L, d, x, st, info, r, NULL, e)) goto out;
    double g = r->ev.global_share;
    char matched[64];
    snprintf(matched, sizeof matched, "aha %.4f", g);
    for (int q = 0; q < DECIDE_COUNT; q++) { /* the θ predictors in engine/decide.h's order: the oracle last */
        Policy thr;
        Err not_policy;
        if (decide_threshold((DecidePred)q) != PRED_THR_THETA ||
            aha_policy_parse(decide_name((DecidePred)q), &thr, &not_policy))
            continue;
        r = &rows[n++];
        r->a = x->o.attn, r->a.policy = thr;
        double th = match_theta(L, d, x, r->a, g, e);
        if (isnan(th)) goto out;
        r->a.theta_logit = th;
        snprintf(r->name, sizeof r->name, "%s", aha_policy_name(thr));
        eval_theta_knob(th, r->knob, sizeof r->knob);
        if (eval_row(L, d, x, st, info, r, matched, e)) goto out;
    }
    r = &rows[n++];
    r->a = x->o.attn, r->a.policy = POLICY_RANDOM, r->a.p = (float)g;
    /* p is the expected share; positions before the window is full count
     * too, so correct p by the share it actually gave, a few times */
    for (int it = 0; it < 4; it++) {
        double got = share_of(L, d, x, &r->a, e);
        if (isnan(got)) goto out;
        if (fabs(got - g) < 0.0025 || got <= 0) break;
        r->a.p = (float)fmin(1.0, r->a.p * g / got);
    }
    snprintf(r->name, sizeof r->name, "random");
    snprintf(r->knob, sizeof r->knob, "p=%.4f", r->a.p);
    if (eval_row(L, d, x, st, info, r, matched, e)) goto out;
    r = &rows[n++];
    if (static_heads_at(L, cal, x, g, &heads, &k, &r->calibrated_on, e)) goto out;
    r->a = x->o.attn, r->a.policy = POLICY_STATIC, r->a.static_heads = heads;
    snprintf(r->name, sizeof r->name, "static");
    snprintf(r->knob, sizeof r->knob, "%d/%d heads", k, cells);
    if (eval_row(L, d, x, st, info, r, matched, e)) goto out;
    eval_rows_intervals(rows, n, d->n, EVAL_CI_KL | (tasks ? EVAL_CI_ANSWER : EVAL_CI_NLL));
    if (tasks) { /* the settings matched on the prompts, now judged by the answers */
        rc = eval_tasks_rows(L, tasks, rows, n, (int)x->threads, x->json, e);
        goto out;
    }
    eval_print_rows(rows, n, x->json, 1);
    if (!x->json) printf("oracle labels: out_mass > theta = %.3g for every row\n", decide_prob(x->o.attn.theta_logit));
    rc = eval_plot_rows(rows, n, x, "predictors at the AHA routers' global share", e);
out:
    free(heads), free(rows), free(seqs);
    return rc;
}

static int run_eval(EvalOpts *x, Err *e) {
    AppLoaded L;
    EvalData d = {0}, cal = {0};
    Store *st = NULL;
    StoreRunInfo info;
    int rc = -1;
    if (app_load(&x->o, &L, 1, e)) goto out;
    if (!isnan(x->share) && x->o.attn.policy != POLICY_AHA) {
        err_usage(e, "--share chooses the aha routers' tau: it needs the aha policy (--routers FILE)");
        goto out;
    }
    int len = (int)(x->seq_len < L.model.c.seq_len ? x->seq_len : L.model.c.seq_len);
    if (x->seq_len > L.model.c.seq_len) {
        err_set(e, "--seq-len %ld exceeds the model's context (%d)", x->seq_len, L.model.c.seq_len);
        goto out;
    }
    if (x->o.attn.window > L.model.c.seq_len) {
        err_set(e, "window %d is larger than the context (%d)", x->o.attn.window, L.model.c.seq_len);
        goto out;
    }
    if ((x->svg && file_check_output(x->svg, NULL, e)) || (x->db && !(st = store_open(x->db, STORE_WRITE, STORE_BUSY_MS, e))))
        goto out; /* before the data is made: that can take minutes */
    if (eval_opts_data(x, &L, len, &d, e)) goto out;
    x->o.prompt = "";
    if (app_run_info(&x->o, &L, &info, e)) goto out;
    if (x->match && !x->static_rank && /* a given ranking needs no calibration data of eval's own */
        eval_data_calibration(&cal, &d, &L.model, &L.tok, x->data, (int)x->self_n, len, x->o.seed, e))
        goto out;
    if (!isnan(x->share) && match_tau(&L, &d, x, e)) goto out;
    if (x->match) rc = run_matched(&L, &d, &cal, x, st, &info, NULL, e);
    else {
        EvalRow row = {.a = x->o.attn};
        snprintf(row.name, sizeof row.name, "%s", aha_policy_name(x->o.attn.policy));
        if (isnan(x->share)) snprintf(row.knob, sizeof row.knob, "w=%d", x->o.attn.window);
        else snprintf(row.knob, sizeof row.knob, "w=%d tau=%.4g", x->o.attn.window, x->o.attn.tau);
        if (!(row.seqs = calloc((size_t)d.n, sizeof *row.seqs))) { err_set(e, "out of memory"); goto out; }
        rc = eval_row(&L, &d, x, st, &info, &row, NULL, e);
        if (rc == 0) eval_rows_intervals(&row, 1, d.n, EVAL_CI_NLL); /* not KL's: --from-db could not recount it */
        if (rc == 0) eval_print_rows(&row, 1, x->json, 0);
        if (rc == 0) rc = eval_plot_rows(&row, 1, x, "evaluation", e);
        free(row.seqs);
    }
out:
    if (store_close(st, rc ? NULL : e)) rc = -1;
    eval_data_free(&d);
    eval_data_free(&cal);
    app_unload(&L);
    return rc;
}

/* --tasks: the items' prompts are the data the policy (or every matched
 * predictor) runs on teacher-forced, then each setting answers them. The
 * static heads of --match-budget are ranked on sampled sequences, or by
 * --static-heads's calibration, never on the items. */
static int run_tasks(EvalOpts *x, Err *e) {
    AppLoaded L;
    TaskSet ts = {0};
    EvalData d = {0}, cal = {0};
    StoreRunInfo info;
    int rc = -1;
    if (app_load(&x->o, &L, 1, e) || tasks_read_jsonl(x->tasks, &ts, e)) goto out;
    int len = (int)(x->seq_len < L.model.c.seq_len ? x->seq_len : L.model.c.seq_len);
    if (x->o.attn.window > L.model.c.seq_len) {
        err_set(e, "window %d is larger than the context (%d)", x->o.attn.window, L.model.c.seq_len);
        goto out;
    }
    if (eval_tasks_data(&L.tok, &ts, x->tasks, &d, e)) goto out;
    for (int i = 0; i < d.n; i++)
        if (d.len[i] > L.model.c.seq_len) {
            err_set(e, "%s: item %d's prompt is %d tokens%s, past the model's context (%d)", x->tasks, i + 1,
                    d.answer_from[i] > L.model.c.seq_len ? d.answer_from[i] : d.len[i],
                    d.answer_from[i] > L.model.c.seq_len ? "" : " with its answer", L.model.c.seq_len);
            goto out;
        }
    if (x->db) { /* each item recorded under full attention, for "which heads retrieved the needle" */
        Store *st = store_open(x->db, STORE_WRITE, STORE_BUSY_MS, e);
        if (st) store_set_commit_every(st, 64); /* a prompt's positions in a few transactions, not one each */
        int bad = !st || eval_tasks_record(&L, &x->o, &ts, x->tasks, st, (int)x->threads, e);
        if (store_close(st, bad ? NULL : e)) bad = 1;
        if (bad) goto out;
    }
    x->o.prompt = "";
    if (app_run_info(&x->o, &L, &info, e)) goto out;
    if (!isnan(x->share) && x->o.attn.policy != POLICY_AHA) {
        err_usage(e, "--share chooses the aha routers' tau: it needs the aha policy (--routers FILE)");
        goto out;
    }
    if (!isnan(x->share) && match_tau(&L, &d, x, e)) goto out; /* on the prompts, as the budget is matched */
    if (x->match) {
        if (!x->static_rank &&
            eval_data_calibration(&cal, &d, &L.model, &L.tok, NULL, (int)x->self_n, len, x->o.seed, e))
            goto out;
        rc = run_matched(&L, &d, &cal, x, NULL, &info, &ts, e);
    } else {
        EvalRow row = {.a = x->o.attn};
        snprintf(row.name, sizeof row.name, "%s", aha_policy_name(x->o.attn.policy));
        if (isnan(x->share)) snprintf(row.knob, sizeof row.knob, "w=%d", x->o.attn.window);
        else snprintf(row.knob, sizeof row.knob, "w=%d tau=%.4g", x->o.attn.window, x->o.attn.tau);
        if (!(row.seqs = calloc((size_t)d.n, sizeof *row.seqs))) { err_set(e, "out of memory"); goto out; }
        rc = eval_row(&L, &d, x, NULL, &info, &row, NULL, e);
        if (rc == 0) eval_rows_intervals(&row, 1, d.n, EVAL_CI_KL | EVAL_CI_ANSWER); /* over items */
        if (rc == 0) rc = eval_tasks_rows(&L, &ts, &row, 1, (int)x->threads, x->json, e);
        free(row.seqs);
    }
out:
    eval_data_free(&d);
    eval_data_free(&cal);
    tasks_free(&ts);
    app_unload(&L);
    return rc;
}

/* --from-db: the table of every evaluation in the file, shards combined. */
static int eval_from_db(EvalOpts *x, Err *e) {
    EvalRow *rows = NULL;
    int n = eval_opts_rows_from_db(x, NULL, &rows, e), rc = n < 0 ? -1 : 0;
    if (rc == 0) eval_print_rows(rows, n, x->json, 0);
    if (rc == 0) rc = eval_plot_rows(rows, n, x, "evaluation", e);
    free(rows);
    return rc;
}

int cmd_eval(int argc, char **argv) {
    static EvalOpts x;
    Err e;
    memset(&x, 0, sizeof x);
    int r = parse(argc, argv, &x, &e);
    if (r == 1) { eval_help(); return 0; }
    if (r < 0 || (x.from_db ? eval_from_db(&x, &e) : x.tasks ? run_tasks(&x, &e) : run_eval(&x, &e)))
        return args_fail(&e);
    return 0;
}
