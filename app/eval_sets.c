/* eval_sets.c — `eval --tasks` over one or several item sets (eval_sets.h):
 * the thresholds chosen once, apart from the scored items when
 * --calibrate-items is given, then every set scored at them and pooled. */
#include "app/eval_sets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_run.h"
#include "app/eval_tasks.h"
#include "app/run_info.h"
#include "engine/files.h"
#include "engine/stats.h"
#include "engine/textout.h"

/* One item set: its file, its items and their prompts as eval's data. */
typedef struct {
    char file[1024];
    TaskSet ts;
    EvalData d;
} EvalSet;

/* --tasks's comma-separated files into names; their count, or -1. */
static int split_sets(const char *list, char names[][1024], Err *e) {
    int n = 0;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == 0 || l >= 1024) return err_usage(e, "--tasks: an empty or over-long file name in '%.200s'", list);
        if (n == EVAL_SETS_MAX) return err_usage(e, "--tasks: at most %d sets", EVAL_SETS_MAX);
        memcpy(names[n], p, l), names[n][l] = 0, n++;
        p = end ? end + 1 : p + l;
    }
    return n ? n : err_usage(e, "--tasks needs a file");
}

/* A set read and made into data, every item within the model's context. */
static int load_set(const AppLoaded *L, const char *file, EvalSet *s, Err *e) {
    snprintf(s->file, sizeof s->file, "%.*s", (int)sizeof s->file - 1, file); /* split_sets bounds it */
    return tasks_read_jsonl(file, &s->ts, e) || eval_tasks_data(&L->tok, &s->ts, file, L->model.c.seq_len, &s->d, e)
               ? -1 : 0;
}

static void free_set(EvalSet *s) {
    eval_data_free(&s->d);
    tasks_free(&s->ts);
}

/* Each item recorded under full attention into --db, for "which heads
 * retrieved the needle". */
static int record_set(const AppLoaded *L, const EvalOpts *x, const EvalSet *s, Err *e) {
    Store *st = store_open(x->db, STORE_WRITE, STORE_BUSY_MS, e);
    if (st) store_set_commit_every(st, 64); /* a prompt's positions in a few transactions, not one each */
    int bad = !st || eval_tasks_record(L, &x->o, &s->ts, s->file, st, (int)x->threads, e);
    if (store_close(st, bad ? NULL : e)) bad = 1;
    return bad ? -1 : 0;
}

/* A calibration item must not be a scored one: its prompt in no set. */
static int check_apart(const EvalSet *cal, const EvalSet *sets, int n_sets, Err *e) {
    for (int k = 0; k < n_sets; k++)
        for (int i = 0; i < sets[k].ts.n; i++)
            for (int j = 0; j < cal->ts.n; j++)
                if (!strcmp(sets[k].ts.item[i].prompt, cal->ts.item[j].prompt))
                    return err_set(e, "%s: item %d is item %d of %s: calibration items must be apart from the scored "
                                   "ones", cal->file, j + 1, i + 1, sets[k].file);
    return 0;
}

/* The rows to score and their settings: the policy alone, or with
 * --match-budget every predictor matched on c. n_rows gets their count. */
static int choose_rows(const AppLoaded *L, EvalData *c, EvalOpts *x, EvalRow *rows, int *n_rows,
                       uint8_t **heads, double *share, EvalData *cal, Err *e) {
    int len = (int)(x->seq_len < L->model.c.seq_len ? x->seq_len : L->model.c.seq_len);
    if (!x->match) {
        rows[0] = (EvalRow){.a = x->o.attn};
        snprintf(rows[0].name, sizeof rows[0].name, "%s", aha_policy_name(x->o.attn.policy));
        if (x->o.attn.head_span) snprintf(rows[0].knob, sizeof rows[0].knob, "own windows");
        else if (x->o.attn.n_windows && x->o.attn.policy == POLICY_AHA)
            eval_windows_knob(&x->o.attn, rows[0].knob, sizeof rows[0].knob);
        else if (isnan(x->share)) snprintf(rows[0].knob, sizeof rows[0].knob, "w=%d", x->o.attn.window);
        else snprintf(rows[0].knob, sizeof rows[0].knob, "w=%d tau=%.4g", x->o.attn.window, x->o.attn.tau);
        *n_rows = 1, *share = NAN;
        return 0;
    }
    /* the static heads are ranked on sampled sequences, or by --static-heads's calibration, never on items;
     * those do not depend on the budget, so every --share budget reuses them */
    if (!x->static_rank && cal->n == 0 &&
        eval_data_calibration(cal, c, &L->model, &L->tok, NULL, (int)x->self_n, len, x->o.seed, e))
        return -1;
    *n_rows = eval_matched_choose(L, c, cal, x, rows, heads, share, 1, e);
    return *n_rows < 0 ? -1 : 0;
}

/* One set scored at the chosen rows' settings; keep its item scores; rep
 * (NULL: none) gathers its grids and budget points. */
static int score_set(const AppLoaded *L, const EvalSet *s, const EvalOpts *x, StoreRunInfo *info,
                     const EvalRow *proto, int n, double share, double *keep, EvalReport *rep, Err *e) {
    EvalRow rows[EVAL_MATCHED_MAX];
    EvalSeq *seqs = calloc((size_t)n * s->d.n, sizeof *seqs);
    if (!seqs) return err_set(e, "out of memory");
    for (int i = 0; i < n; i++) rows[i] = proto[i], rows[i].seqs = seqs + (size_t)i * s->d.n;
    int rc = eval_matched_rows(L, &s->d, x, NULL, info, rows, n, share, 1, e);
    if (rc == 0) rc = eval_tasks_rows(L, &s->ts, rows, n, (int)x->threads, x->json, keep, rep, e);
    free(seqs);
    return rc;
}

/* The pooled table: each row's items of every set together (keep[k] holds
 * set k's (n + 1) x items scores, full attention first). */
static int print_pooled(const EvalSet *sets, int n_sets, double *const *keep, const EvalRow *rows, int n, int json) {
    int total = 0;
    for (int k = 0; k < n_sets; k++) total += sets[k].ts.n;
    double *all = malloc((size_t)total * (n + 1) * sizeof *all);
    if (!all) return -1;
    for (int r = 0, at = 0; r <= n; r++)
        for (int k = 0; k < n_sets; k++, at += sets[k - 1].ts.n)
            memcpy(all + at, keep[k] + (size_t)r * sets[k].ts.n, (size_t)sets[k].ts.n * sizeof *all);
    if (json) printf("], \"pooled\": [");
    else printf("\npooled over %d sets (%d items): accuracy per set, then pooled with its 95%% bootstrap interval "
                "over the items\n", n_sets, total);
    char nm[64], kn[4 * 48 + 1];
    for (int r = 0; r <= n; r++) {
        const char *name = r ? rows[r - 1].name : "full", *knob = r ? rows[r - 1].knob : "reference";
        EvalTaskScore t = eval_tasks_score(all + (size_t)r * total, all, total);
        if (json) {
            printf("%s{\"predictor\": ", r ? ", " : "");
            textout_json_print(stdout, name);
            printf(", \"accuracy\": %.17g, \"ci_low\": %.17g, \"ci_high\": %.17g, \"mcnemar_b\": %ld, \"mcnemar_c\": "
                   "%ld, \"mcnemar_p\": %.17g, \"n_items\": %d, \"set_accuracy\": [", t.accuracy, t.ci_low, t.ci_high,
                   t.mcnemar_b, t.mcnemar_c, t.mcnemar_p, total);
        } else
            printf("%-13s %-30s", textout_term(name, nm, sizeof nm), textout_term(knob, kn, sizeof kn));
        for (int k = 0; k < n_sets; k++) {
            EvalTaskScore s = eval_tasks_score(keep[k] + (size_t)r * sets[k].ts.n, keep[k], sets[k].ts.n);
            if (json) printf("%s%.17g", k ? ", " : "", s.accuracy);
            else printf(" %7.2f%%", 100 * s.accuracy);
        }
        if (json) printf("]}");
        else printf("  pooled %7.2f%% [%6.2f%%, %6.2f%%]  b %ld c %ld p %.4g\n", 100 * t.accuracy, 100 * t.ci_low,
                    100 * t.ci_high, t.mcnemar_b, t.mcnemar_c, t.mcnemar_p);
    }
    if (json) printf("]");
    free(all);
    return 0;
}

/* The calibration prompts drawn with replacement from r: a shallow copy
 * (the sequences stay cal's; free only the three arrays). */
static int resample_data(const EvalData *cal, StatsRng *r, EvalData *out, Err *e) {
    *out = *cal;
    out->seq = malloc((size_t)cal->n * sizeof *out->seq), out->len = malloc((size_t)cal->n * sizeof *out->len);
    out->answer_from = malloc((size_t)cal->n * sizeof *out->answer_from);
    if (!out->seq || !out->len || !out->answer_from) return err_set(e, "out of memory");
    for (int i = 0; i < cal->n; i++) {
        int k = (int)stats_rng_below(r, (uint64_t)cal->n);
        out->seq[i] = cal->seq[k], out->len[i] = cal->len[k], out->answer_from[i] = cal->answer_from[k];
    }
    return 0;
}

/* One resampled choice b: every threshold chosen again on cb, each row's
 * scores over all sets' items into sc[r * total + item]. */
static int choice_once(const AppLoaded *L, const EvalOpts *x, EvalData *cb, EvalData *cal_static, const EvalSet *sets,
                       int n_sets, int n, int total, double *sc, Err *e) {
    EvalOpts xb = *x;
    EvalRow rows[EVAL_MATCHED_MAX];
    uint8_t *heads = NULL;
    double g;
    int rc = !isnan(x->share) ? eval_match_tau(L, cb, &xb, e) : 0;
    rows[0].a = xb.o.attn;
    if (rc == 0 && x->match && eval_matched_choose(L, cb, cal_static, &xb, rows, &heads, &g, 1, e) != n) rc = -1;
    for (int r = 0; rc == 0 && r < n; r++)
        for (int k = 0, at = 0; rc == 0 && k < n_sets; at += sets[k++].ts.n)
            rc = eval_tasks_answer(L, &rows[r].a, &sets[k].ts, (int)x->threads, 0, "", sc + (size_t)r * total + at, e);
    free(heads);
    return rc;
}

/* --choice-resamples N: each row's pooled accuracy interval over N
 * resampled choices, under each ceil(B / N) resamples of the pooled items
 * (the calibration draws first, from stats_rng(STATS_BOOT_SEED + 1), then
 * the items', from stats_rng(STATS_BOOT_SEED + 2), choice after choice),
 * printed with every choice's item scores. */
static int choice_intervals(const AppLoaded *L, const EvalOpts *x, const EvalData *c, EvalData *cal_static,
                            const EvalSet *sets, int n_sets, const EvalRow *rows, int n, Err *e) {
    int N = (int)x->choice_resamples, total = 0, m = (STATS_BOOT_B + N - 1) / N, rc = 0;
    for (int k = 0; k < n_sets; k++) total += sets[k].ts.n;
    double *sc = malloc((size_t)N * n * total * sizeof *sc), *means = malloc((size_t)N * m * sizeof *means);
    StatsRng rc_cal = stats_rng(STATS_BOOT_SEED + 1);
    for (int b = 0; sc && means && rc == 0 && b < N; b++) {
        EvalData cb;
        rc = resample_data(c, &rc_cal, &cb, e);
        if (rc == 0) rc = choice_once(L, x, &cb, cal_static, sets, n_sets, n, total, sc + (size_t)b * n * total, e);
        free(cb.seq), free(cb.len), free(cb.answer_from);
    }
    if (!sc || !means) rc = err_set(e, "out of memory");
    if (rc == 0) printf(x->json ? ", \"choice\": [" : "\naccuracy over %d choices of the thresholds (the calibration "
                        "items resampled), %d resamples of the pooled items each:\n", N, m);
    for (int r = 0; rc == 0 && r < n; r++) {
        StatsRng ri = stats_rng(STATS_BOOT_SEED + 2);
        for (int b = 0; b < N; b++)
            for (int j = 0; j < m; j++) {
                double sum = 0;
                for (int i = 0; i < total; i++) sum += sc[((size_t)b * n + r) * total + stats_rng_below(&ri, (uint64_t)total)];
                means[b * m + j] = sum / total;
            }
        double lo = stats_quantile(means, N * m, 0.025), hi = stats_quantile(means, N * m, 0.975);
        if (!x->json) { printf("  %-13s [%6.2f%%, %6.2f%%]\n", rows[r].name, 100 * lo, 100 * hi); continue; }
        printf("%s{\"predictor\": ", r ? ", " : "");
        textout_json_print(stdout, rows[r].name);
        printf(", \"ci_low\": %.17g, \"ci_high\": %.17g, \"scores\": [", lo, hi);
        for (int b = 0; b < N; b++)
            for (int i = 0; i < total; i++)
                printf("%s%s%.17g%s", i ? "" : b ? ", [" : "[", i ? ", " : "", sc[((size_t)b * n + r) * total + i],
                       i == total - 1 ? "]" : "");
        printf("]}");
    }
    if (rc == 0 && x->json) printf("]");
    free(sc), free(means);
    return rc;
}

/* Every set scored at rows' settings, each printed, then pooled. */
static int score_sets(const AppLoaded *L, const EvalSet *sets, int n_sets, const EvalOpts *x, StoreRunInfo *info,
                      const EvalRow *rows, int n, double share, int obj, EvalReport *rep, Err *e) {
    double *keep[EVAL_SETS_MAX] = {0};
    int rc = 0;
    if (x->json && obj) printf("{\"sets\": [");
    for (int k = 0; k < n_sets && rc == 0; k++) {
        if (obj && !(keep[k] = malloc((size_t)sets[k].ts.n * (n + 1) * sizeof *keep[k])))
            rc = err_set(e, "out of memory");
        if (rc == 0 && obj && x->json) {
            printf("%s{\"file\": ", k ? ", " : "");
            textout_json_print(stdout, sets[k].file);
            printf(", \"rows\": ");
        } else if (rc == 0 && obj) {
            char f[4 * 1024 + 1];
            printf("%sset %d of %d: %s (%d items)\n", k ? "\n" : "", k + 1, n_sets,
                   textout_term(sets[k].file, f, sizeof f), sets[k].ts.n);
        }
        if (rc == 0) rc = score_set(L, &sets[k], x, info, rows, n, share, keep[k], n_sets == 1 ? rep : NULL, e);
        if (rc == 0 && obj && x->json) printf("}");
    }
    if (rc == 0 && obj && print_pooled(sets, n_sets, keep, rows, n, x->json)) rc = err_set(e, "out of memory");
    for (int k = 0; k < n_sets; k++) free(keep[k]);
    return rc;
}

/* What the thresholds were chosen on, said under the text tables. */
static void say_chosen_on(const EvalOpts *x, const EvalData *c, double share, int calibrated) {
    if (x->json || (!x->match && isnan(x->share))) return;
    char on[4 * 1024 + 1];
    if (!calibrated) printf("note: thresholds chosen on the scored items' own prompts (--calibrate-items FILE "
                            "chooses them on items apart)\n");
    else printf("note: thresholds chosen on %s (%d prompts, apart from every scored item)%s", textout_term(c->desc, on,
                sizeof on), c->n, x->match ? "" : "\n");
    if (calibrated && x->match) printf(": the routers' global share there %.4f%%\n", 100 * share);
}

static int usage_checks(const EvalOpts *x, int n_sets, Err *e) {
    if (!isnan(x->share) && x->o.attn.policy != POLICY_AHA)
        return err_usage(e, "%s chooses the aha routers' tau: it needs the aha policy (--routers FILE)",
                         x->by_keys ? "--keys" : "--share");
    if (n_sets > 1 && !x->calibrate_items && (x->match || !isnan(x->share)))
        return err_usage(e, "several sets are scored at one setting: --share and --match-budget need "
                            "--calibrate-items FILE to choose it");
    return 0;
}

/* One budget (x->share, or the routers' own τ): the thresholds chosen on c,
 * every set scored at them and pooled, the choice's interval. */
static int run_budget(const AppLoaded *L, EvalSet *sets, int n_sets, EvalData *c, EvalData *cal, EvalOpts *x,
                      StoreRunInfo *info, EvalReport *rep, Err *e) {
    EvalRow rows[EVAL_MATCHED_MAX];
    uint8_t *heads = NULL;
    double share = NAN;
    int n = 0, rc = -1;
    if (!isnan(x->share) && eval_match_tau(L, c, x, e)) return -1; /* on the prompts, as the budget is matched */
    if (choose_rows(L, c, x, rows, &n, &heads, &share, cal, e)) goto out;
    for (int i = 0; x->calibrate_items && i < n; i++)
        if (!rows[i].calibrated_on && (i > 0 || !isnan(x->share))) rows[i].calibrated_on = c->desc;
    int obj = n_sets > 1 || x->choice_resamples > 0; /* JSON's object form, and a pooled table */
    rc = score_sets(L, sets, n_sets, x, info, rows, n, share, obj, rep, e);
    if (rc == 0 && x->choice_resamples) rc = choice_intervals(L, x, c, cal, sets, n_sets, rows, n, e);
    if (rc == 0 && x->json && obj) printf("}\n");
    if (rc == 0) say_chosen_on(x, c, share, x->calibrate_items != NULL);
out:
    free(heads);
    return rc;
}

int eval_run_tasks(EvalOpts *x, Err *e) {
    char names[EVAL_SETS_MAX][1024];
    AppLoaded L;
    EvalSet *sets = calloc(EVAL_SETS_MAX + 1, sizeof *sets), *cal_set = sets + EVAL_SETS_MAX;
    EvalData cal = {0};
    StoreRunInfo info;
    EvalReport rep = {0};
    int rc = -1, n_sets = split_sets(x->tasks, names, e);
    if (!sets) return err_set(e, "out of memory");
    if (n_sets < 0 || app_load(&x->o, &L, 1, e)) { free(sets); return -1; }
    if (usage_checks(x, n_sets, e)) goto out; /* after the load: routers make the policy aha */
    if (x->o.attn.window > L.model.c.seq_len) {
        err_set(e, "window %d is larger than the context (%d)", x->o.attn.window, L.model.c.seq_len);
        goto out;
    }
    if ((x->svg && file_check_output(x->svg, NULL, e)) || (x->grid_svg && file_check_output(x->grid_svg, NULL, e)))
        goto out;
    for (int k = 0; k < n_sets; k++)
        if (load_set(&L, names[k], &sets[k], e) || (x->db && record_set(&L, x, &sets[k], e))) goto out;
    if (x->calibrate_items && (load_set(&L, x->calibrate_items, cal_set, e) || check_apart(cal_set, sets, n_sets, e)))
        goto out;
    EvalData *c = x->calibrate_items ? &cal_set->d : &sets[0].d;
    x->o.prompt = "";
    if (app_run_info(&x->o, &L, &info, e)) goto out;
    eval_report_init(&rep, &sets[0].ts, x->grid, x->grid_svg);
    int n_budgets = x->n_shares > 1 ? x->n_shares : 1;
    rc = 0;
    for (int b = 0; rc == 0 && b < n_budgets; b++) { /* --share S,S,...: each budget in turn, then the curves */
        if (x->n_shares > 1) {
            x->share = x->shares[b];
            if (!x->json) printf("%sbudget: the routers at %.4g of the decisions global\n", b ? "\n" : "", x->share);
        }
        rc = run_budget(&L, sets, n_sets, c, &cal, x, &info, &rep, e);
        fflush(stdout);
    }
    if (rc == 0 && x->match) rc = eval_report_curves(&rep, x->svg, x->plot, e);
out:
    for (int k = 0; k <= EVAL_SETS_MAX; k++) free_set(&sets[k]);
    free(sets);
    eval_report_free(&rep);
    eval_data_free(&cal);
    app_unload(&L);
    return rc;
}
