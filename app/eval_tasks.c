/* eval_tasks.c — task items answered greedily and scored (eval_tasks.h). */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_tasks.h"
#include "app/eval_reports.h"
#include "app/record_prefill.h"
#include "app/progress.h"
#include "app/run_info.h"
#include "engine/session.h"
#include "engine/stats.h"
#include "engine/textout.h"

int eval_tasks_match(const char *gen, size_t n, const char *answer) { return task_match_exact(gen, n, answer); }

/* Ids the answer encodes to on its own (no BOS): A of the rule. */
static int answer_ids(const Tokenizer *tok, const char *answer, int *buf, int cap, Err *e) {
    int n = 0;
    return tok_encode(tok, answer, strlen(answer), 0, 0, buf, cap, &n, e) ? -1 : n;
}

/* Item it answered greedily by s: its score (0 to 1), or -1 on error. */
static double answer_item(Session *s, const TaskItem *it, int *ids, int cap, Err *e) {
    const Tokenizer *tok = s->tok;
    int n = 0, seq = s->model->c.seq_len;
    int a = answer_ids(tok, it->answer, ids, cap, e);
    if (a < 0 || tok_encode(tok, it->prompt, strlen(it->prompt), 1, 0, ids, cap, &n, e)) return -1;
    int budget = task_gen_budget(it->metric, a);
    if (n + budget > seq)
        return err_set(e, "a %d-token prompt and the %d tokens its answer is given do not fit the model's context (%d)",
                       n, budget, seq);
    if (session_start_ids(s, ids, n, e)) return -1;
    if (session_prefill(s, NULL) != n) return err_set(e, "the prefill stopped short");
    while (s->n_ids - n < budget && session_step(s, NULL)) {}
    if (app_session_error(s, e)) return -1;
    char gen[4096];
    size_t g = 0;
    for (int i = n; i < s->n_ids && i < n + budget && s->ids[i] != s->stop_id; i++) {
        size_t l;
        const char *piece = tok_decode(tok, s->ids[i - 1], s->ids[i], &l);
        if (g + l < sizeof gen) memcpy(gen + g, piece, l), g += l;
    }
    return task_score(it->metric, gen, g, it->refs, it->n_refs);
}

int eval_tasks_answer(const AppLoaded *L, const AttnConfig *a, const TaskSet *set, int threads, int progress,
                      const char *name, double *score, Err *e) {
    Session s;
    int cap = 0, rc = 0;
    for (int i = 0; i < set->n; i++) { /* the largest buffer any item's encoding needs */
        int need = (int)(4 * strlen(set->item[i].prompt) + 4 * strlen(set->item[i].answer) + 16);
        if (need > cap) cap = need;
    }
    int *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids) return err_set(e, "out of memory");
    if (session_init(&s, &L->model, &L->tok, a, L->model.c.seq_len, 0.0f, 1.0f, 1, threads, e)) {
        free(ids);
        return -1;
    }
    double t0 = clock_now();
    for (int i = 0; i < set->n && rc == 0; i++) {
        double r = answer_item(&s, &set->item[i], ids, cap, e);
        if (r < 0) {
            char where[32];
            snprintf(where, sizeof where, "item %d", i + 1);
            rc = err_prefix(e, where);
        } else score[i] = r;
        if (progress) progress_count(name, i + 1, set->n, t0, 0);
    }
    session_free(&s);
    free(ids);
    return rc;
}

EvalTaskScore eval_tasks_score(const double *right, const double *full, int n) {
    EvalTaskScore r = {.n_items = n, .accuracy = NAN, .ci_low = NAN, .ci_high = NAN, .mcnemar_p = 1};
    double *x = n > 0 ? malloc((size_t)n * sizeof *x) : NULL;
    if (!x) return r;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        x[i] = right[i], sum += right[i];
        r.mcnemar_b += full[i] == 1 && right[i] != 1;
        r.mcnemar_c += full[i] != 1 && right[i] == 1;
    }
    r.accuracy = sum / n;
    stats_bootstrap_ci(x, n, STATS_BOOT_B, STATS_BOOT_SEED, 0.05, &r.ci_low, &r.ci_high);
    r.mcnemar_p = stats_mcnemar_p(r.mcnemar_b, r.mcnemar_c);
    free(x);
    return r;
}

/* The vocabulary's longest piece in bytes, 0 when it has no list (an HF
 * tokenizer's pieces are its own). */
static int longest_piece(const Tokenizer *tok) {
    int m = 0;
    for (int i = 0; tok->vocab_len && i < tok->vocab_size; i++)
        if (tok->vocab_len[i] > m) m = tok->vocab_len[i];
    return m;
}

/* Item i refused before it is encoded when its own count or its bytes
 * already place it past ctx ids, so a long prompt costs no encoding. */
static int context_first(const TaskItem *it, int i, const char *file, int ctx, int longest, Err *e) {
    size_t lp = strlen(it->prompt);
    if (it->n_tokens > ctx)
        return err_set(e, "%s: item %d gives n_tokens %d, past the model's context (%d)", file, i + 1, it->n_tokens, ctx);
    if (longest > 0 && lp / (size_t)longest > (size_t)ctx)
        return err_set(e, "%s: item %d's prompt is %zu bytes, more than the model's context (%d ids of at most %d bytes) "
                       "holds", file, i + 1, lp, ctx, longest);
    return 0;
}

/* Item i's prompt ids into d->seq[i] and then, past them, its answer's. */
static int item_data(const Tokenizer *tok, const TaskItem *it, int i, const char *file, int ctx, EvalData *d, Err *e) {
    size_t lp = strlen(it->prompt), la = strlen(it->answer);
    int cap = (int)(lp + la + 16), n = 0, got = 0; /* tok_encode's need: a byte an id, BOS and EOS */
    char *text = malloc(lp + la + 2);
    if (!text || !(d->seq[i] = malloc((size_t)cap * sizeof(int)))) {
        free(text);
        return err_set(e, "out of memory");
    }
    if (tok_encode(tok, it->prompt, lp, 1, 0, d->seq[i], cap, &n, e)) { free(text); return -1; }
    if (n > ctx) {
        free(text);
        return err_set(e, "%s: item %d's prompt is %d tokens, past the model's context (%d)", file, i + 1, n, ctx);
    }
    /* the answer as the text goes on, "PROMPT ANSWER" (train's items, without their full stop): its ids
     * after the prompt's, which the whole text must begin with */
    snprintf(text, lp + la + 2, "%s %s", it->prompt, it->answer);
    int *ids = malloc((size_t)cap * sizeof *ids), same = ids != NULL;
    int rc = ids ? tok_encode(tok, text, lp + la + 1, 1, 0, ids, cap, &got, e) : err_set(e, "out of memory");
    free(text);
    for (int k = 0; rc == 0 && same && k < n; k++) same = k < got && ids[k] == d->seq[i][k];
    if (rc == 0 && (!same || got <= n))
        rc = err_set(e, "%s: item %d: the prompt followed by its answer does not encode to the prompt's ids and "
                     "then the answer's", file, i + 1);
    if (rc == 0 && got > ctx)
        rc = err_set(e, "%s: item %d's prompt is %d tokens with its answer, past the model's context (%d)", file, i + 1,
                     got, ctx);
    if (rc == 0) memcpy(d->seq[i], ids, (size_t)got * sizeof *ids);
    free(ids);
    if (rc) return -1;
    d->answer_from[i] = n, d->len[i] = got;
    return 0;
}

int eval_tasks_data(const Tokenizer *tok, const TaskSet *s, const char *file, int ctx, EvalData *d, Err *e) {
    memset(d, 0, sizeof *d);
    snprintf(d->desc, sizeof d->desc, "tasks:%s", file);
    d->answer_apart = 1;
    if (!(d->seq = calloc((size_t)s->n, sizeof *d->seq)) || !(d->len = calloc((size_t)s->n, sizeof *d->len)) ||
        !(d->answer_from = calloc((size_t)s->n, sizeof *d->answer_from)))
        return err_set(e, "out of memory");
    int longest = longest_piece(tok);
    for (int i = 0; i < s->n; i++)
        if (context_first(&s->item[i], i, file, ctx, longest, e)) return -1;
    for (int i = 0; i < s->n; i++, d->n++)
        if (item_data(tok, &s->item[i], i, file, ctx, d, e)) return -1;
    return 0;
}

/* A statistic's mean, interval and paired difference as JSON members
 * key, key_ci_low, key_ci_high, key_diff_ci_low, key_diff_ci_high. */
static void print_json_ci(const char *key, const EvalCi *c) {
    const char *suffix[] = {"", "_ci_low", "_ci_high", "_diff_ci_low", "_diff_ci_high"};
    double v[] = {c->mean, c->ci[0], c->ci[1], c->diff_ci[0], c->diff_ci[1]};
    for (int i = 0; i < 5; i++) {
        if (isfinite(v[i])) printf(", \"%s%s\": %.17g", key, suffix[i], v[i]);
        else printf(", \"%s%s\": null", key, suffix[i]);
    }
}

/* What a printed row reports besides its scores: its KV footprint and
 * full attention's (the fractions' denominators), and its grid or NULL. */
typedef struct {
    CostFootprint kv, kv_full;
    const EvalGrid *grid;
} RowReport;

/* The footprint members of a JSON row. */
static void print_json_footprint(const RowReport *x) {
    double v[] = {x->kv.entry_steps, x->kv.entry_steps / x->kv_full.entry_steps, x->kv.peak,
                  x->kv.peak / x->kv_full.peak};
    const char *k[] = {"kv_footprint", "kv_footprint_frac", "kv_prefill_peak", "kv_prefill_peak_frac"};
    for (int i = 0; i < 4; i++) {
        if (isfinite(v[i])) printf(", \"%s\": %.17g", k[i], v[i]);
        else printf(", \"%s\": null", k[i]);
    }
    if (x->grid) eval_report_json_grid(x->grid);
}

/* The flag and value that rerun setting a exactly (%.9g round-trips a
 * float, %.17g a double): 0 when its policy has no threshold. */
static int rerun_flag(const AttnConfig *a, char *buf, size_t cap) {
    switch (aha_policy_threshold(a->policy)) {
    case PRED_THR_TAU: return snprintf(buf, cap, "--tau %.9g", a->tau) > 0;
    case PRED_THR_THETA: return snprintf(buf, cap, "--theta-logit %.17g", a->theta_logit) > 0;
    case PRED_THR_P: return snprintf(buf, cap, "--p %.9g", a->p) > 0;
    default: return 0;
    }
}

/* The threshold of a row as JSON members tau, theta_logit or p, each at
 * full precision, so a row can be rerun from what it printed. */
static void print_json_threshold(const AttnConfig *a) {
    PredThr t = aha_policy_threshold(a->policy);
    if (t == PRED_THR_TAU) printf(", \"tau\": %.9g", a->tau);
    if (t == PRED_THR_THETA) printf(", \"theta_logit\": %.17g", a->theta_logit);
    if (t == PRED_THR_P) printf(", \"p\": %.9g", a->p);
}

/* One printed row: the setting's name and knob, its teacher-forced sums
 * (NULL for the full-attention reference, whose answer NLL full gives),
 * its score and its items' scores; n_items the count of its per-item values. */
static void print_json_row(int first, const char *name, const char *knob, const EvalRow *r, const EvalTaskScore *t,
                           const EvalCi *full, const EvalSeq *full_seqs, const double *scores, int n_items,
                           const RowReport *x) {
    printf("%s{\"predictor\": ", first ? "" : ", ");
    textout_json_print(stdout, name);
    printf(", \"knob\": ");
    textout_json_print(stdout, knob);
    double v[] = {t->accuracy, t->ci_low, t->ci_high, t->mcnemar_p, r ? r->ev.global_share : 1,
                  r ? r->ev.kv_read_frac : 1, r ? r->ev.kl_mean : 0};
    const char *k[] = {"accuracy", "ci_low", "ci_high", "mcnemar_p", "global_share", "kv_read_frac", "kl"};
    for (int i = 0; i < 7; i++) {
        if (isfinite(v[i])) printf(", \"%s\": %.17g", k[i], v[i]);
        else printf(", \"%s\": null", k[i]);
    }
    if (r && (r->ci & EVAL_CI_KL)) {
        printf(", \"kl_items\": %.17g, \"kl_ci_low\": %.17g, \"kl_ci_high\": %.17g, \"kl_diff_ci_low\": %.17g, "
               "\"kl_diff_ci_high\": %.17g", r->kl.mean, r->kl.ci[0], r->kl.ci[1], r->kl.diff_ci[0], r->kl.diff_ci[1]);
        eval_json_list("kl_per_item", r->seqs, n_items, offsetof(EvalSeq, kl));
    }
    if (r && (r->ci & EVAL_CI_ANSWER)) {
        print_json_ci("kl_answer", &r->ans_kl), print_json_ci("nll_answer", &r->ans_nll);
        eval_json_list("kl_answer_per_item", r->seqs, n_items, offsetof(EvalSeq, ans_kl));
        eval_json_list("nll_answer_per_item", r->seqs, n_items, offsetof(EvalSeq, ans_nll));
    } else if (!r && full) { /* full attention against itself: no KL, and its answer NLL without a difference */
        printf(", \"kl_answer\": 0, \"nll_answer\": %.17g, \"nll_answer_ci_low\": %.17g, "
               "\"nll_answer_ci_high\": %.17g", full->mean, full->ci[0], full->ci[1]);
        eval_json_list("nll_answer_per_item", full_seqs, n_items, offsetof(EvalSeq, ans_nll_full));
    }
    if (r) print_json_threshold(&r->a);
    if (r && r->calibrated_on) {
        printf(", \"calibrated_on\": ");
        textout_json_print(stdout, r->calibrated_on);
    }
    print_json_footprint(x);
    printf(", \"score_per_item\": [");
    for (int i = 0; i < n_items; i++) printf("%s%.17g", i ? ", " : "", scores[i]);
    printf("], \"mcnemar_b\": %ld, \"mcnemar_c\": %ld, \"n_items\": %d}", t->mcnemar_b, t->mcnemar_c, t->n_items);
}

static void print_text_row(const char *name, const char *knob, int wk, const EvalRow *r, const EvalTaskScore *t,
                           const RowReport *x) {
    char nm[64], kn[4 * 48 + 1];
    printf("%-13s %-*s %8.2f%% [%6.2f%%, %6.2f%%] %5ld %5ld %9.4g %7.2f%% %7.2f%% %7.2f%% %7.2f%% %10.5f\n",
           textout_term(name, nm, sizeof nm), wk, textout_term(knob, kn, sizeof kn), 100 * t->accuracy,
           100 * t->ci_low, 100 * t->ci_high, t->mcnemar_b, t->mcnemar_c, t->mcnemar_p,
           100 * (r ? r->ev.global_share : 1), 100 * (r ? r->ev.kv_read_frac : 1),
           100 * x->kv.entry_steps / x->kv_full.entry_steps, 100 * x->kv.peak / x->kv_full.peak, r ? r->ev.kl_mean : 0.0);
}

/* Full attention's NLL of the answers (each row's reference pass gives
 * it; row 0's is taken): its mean over the items and their interval. */
static int full_answer_nll(const EvalSeq *seqs, int n, EvalCi *c) {
    double *x = n > 0 ? malloc((size_t)n * sizeof *x) : NULL;
    if (!x) return -1;
    c->mean = 0;
    for (int k = 0; k < n; k++) x[k] = seqs[k].ans_nll_full, c->mean += x[k] / n;
    stats_bootstrap_ci(x, n, STATS_BOOT_B, STATS_BOOT_SEED, 0.05, &c->ci[0], &c->ci[1]);
    free(x);
    return 0;
}

/* Each printed row's report, x[0] full attention's, x[1 + i] rows[i]'s:
 * footprints, grids into g (when rep asks for them, else x's grid NULL),
 * and rep's budget points; rights[k * s->n] row k's scores. */
static int row_reports(const TaskSet *s, const EvalRow *rows, int n, const double *rights,
                       EvalReport *rep, RowReport *x, EvalGrid *g, Err *e) {
    CostFootprint full = rows[0].kv_held_full;
    for (int k = 0; k <= n; k++) {
        const EvalRow *r = k ? &rows[k - 1] : NULL;
        x[k].kv = r ? r->kv_held : full, x[k].kv_full = full, x[k].grid = NULL;
        if (rep && rep->grid) {
            if (eval_report_grid(rep, s, rights + (size_t)k * s->n, &g[k], e)) return -1;
            x[k].grid = &g[k];
        }
        if (rep && eval_report_add_point(rep, s, r ? r->name : "full", r ? r->ev.global_share : 1,
                                         r ? r->ev.kv_read_frac : 1, rights + (size_t)k * s->n, e))
            return -1;
    }
    return 0;
}

/* --grid's tables after the text table, and --grid-svg's heatmaps. */
static int print_grids(const EvalReport *rep, const EvalRow *rows, int n, const EvalGrid *g, int json, Err *e) {
    const char **names = malloc(((size_t)n + 1) * sizeof *names);
    if (!names) return err_set(e, "out of memory");
    for (int k = 0; k <= n; k++) names[k] = k ? rows[k - 1].name : "full";
    for (int k = 0; !json && k <= n; k++) {
        char *t = eval_grid_text(names[k], &g[k]);
        if (t) printf("\n%s", t);
        free(t);
    }
    int rc = 0;
    if (rep->grid_svg) {
        char *svg = eval_grid_svg(names, g, n + 1);
        rc = eval_report_write_svg(rep->grid_svg, svg, e);
        free(svg);
    }
    free(names);
    return rc;
}

static void print_text_table(const TaskSet *s, const EvalRow *rows, int n, const EvalTaskScore *t, const RowReport *x,
                             const EvalCi *full_ans, int have_full) {
    int wk = 14; /* the setting column fits the longest setting */
    for (int i = 0; i < n; i++) wk = (int)strlen(rows[i].knob) > wk ? (int)strlen(rows[i].knob) : wk;
    printf("%-13s %-*s %9s %18s %5s %5s %9s %8s %8s %8s %8s %10s\n", "predictor", wk, "setting", "accuracy", "95% CI",
           "b", "c", "McNemar p", "global", "KV/kvh", "KV life", "KV peak", "KL(nats)");
    print_text_row("full", "reference", wk, NULL, &t[0], &x[0]);
    for (int i = 0; i < n; i++) print_text_row(rows[i].name, rows[i].knob, wk, &rows[i], &t[1 + i], &x[1 + i]);
    printf("accuracy: the greedy answer's mean score (%d items; each item's metric: exact match, or RULER's\n"
           "share of references found), its 95%% bootstrap interval over items (%d resamples); b: items only\n"
           "full attention got wholly right, c: only the row; McNemar p: exact, two-sided; global, KV/kvh,\n"
           "KL: the teacher-forced pass over the prompts (KL per token); KV life: KV entries held summed over\n"
           "the prompts' steps (entries x lifespan), KV peak: held at a prompt's end (the prefill peak), both\n"
           "against full attention's\n",
           s->n, STATS_BOOT_B);
    eval_print_intervals(rows, n, "item");
    eval_print_answer_intervals(rows, n);
    if (have_full)
        printf("  %-13s %.5f [%.5f, %.5f]  (the reference: full attention)\n", "full", full_ans->mean,
               full_ans->ci[0], full_ans->ci[1]);
    char nm[64], on[4 * 1024 + 1], flag[64];
    for (int i = 0; i < n; i++)
        if (rerun_flag(&rows[i].a, flag, sizeof flag))
            printf("rerun %s: --policy %s %s\n", textout_term(rows[i].name, nm, sizeof nm),
                   aha_policy_name(rows[i].a.policy), flag);
    for (int i = 0; i < n; i++)
        if (rows[i].calibrated_on)
            printf("note: %s was calibrated on %s, not on the items\n", textout_term(rows[i].name, nm, sizeof nm),
                   textout_term(rows[i].calibrated_on, on, sizeof on));
}

int eval_tasks_rows(const AppLoaded *L, const TaskSet *s, const EvalRow *rows, int n, int threads, int json,
                    double *keep, EvalReport *rep, Err *e) {
    double *full = calloc((size_t)s->n, sizeof *full), *right = calloc((size_t)s->n, sizeof *right);
    double *rights = calloc((size_t)s->n * ((size_t)n + 1), sizeof *rights); /* row i's scores at rights[i * s->n] */
    EvalTaskScore *t = calloc((size_t)n + 1, sizeof *t); /* t[0] full attention, t[1 + i] row i */
    RowReport *x = calloc((size_t)n + 1, sizeof *x);
    EvalGrid *g = rep && rep->grid ? calloc((size_t)n + 1, sizeof *g) : NULL;
    int rc = -1;
    if (!full || !right || !t || !rights || !x || (rep && rep->grid && !g)) { err_set(e, "out of memory"); goto out; }
    AttnConfig fa = rows[0].a;
    fa.policy = POLICY_FULL;
    if (eval_tasks_answer(L, &fa, s, threads, 1, "answering (full)", full, e)) goto out;
    t[0] = eval_tasks_score(full, full, s->n);
    memcpy(rights, full, (size_t)s->n * sizeof *full);
    EvalCi full_ans = {.mean = NAN}; /* full attention's answer NLL, from row 0's reference pass */
    int have_full = n > 0 && (rows[0].ci & EVAL_CI_ANSWER) && full_answer_nll(rows[0].seqs, s->n, &full_ans) == 0;
    for (int i = 0; i < n; i++) { /* every row answered before anything is printed: no half a table */
        char label[64];
        snprintf(label, sizeof label, "answering (%s)", rows[i].name);
        if (rows[i].a.policy == POLICY_FULL) memcpy(right, full, (size_t)s->n * sizeof *full);
        else if (eval_tasks_answer(L, &rows[i].a, s, threads, 1, label, right, e)) goto out;
        t[1 + i] = eval_tasks_score(right, full, s->n);
        memcpy(rights + (size_t)(1 + i) * s->n, right, (size_t)s->n * sizeof *right);
    }
    if (row_reports(s, rows, n, rights, rep, x, g, e)) goto out;
    if (json) {
        printf("[");
        print_json_row(1, "full", "reference", NULL, &t[0], have_full ? &full_ans : NULL, rows[0].seqs, rights, s->n,
                       &x[0]);
        for (int i = 0; i < n; i++)
            print_json_row(0, rows[i].name, rows[i].knob, &rows[i], &t[1 + i], NULL, NULL, rights + (size_t)(1 + i) * s->n,
                           s->n, &x[1 + i]);
        printf("]\n");
    } else print_text_table(s, rows, n, t, x, &full_ans, have_full);
    if (keep) memcpy(keep, rights, (size_t)s->n * ((size_t)n + 1) * sizeof *rights);
    rc = g ? print_grids(rep, rows, n, g, json, e) : 0;
out:
    free(full), free(right), free(t), free(rights), free(x), free(g);
    return rc;
}

/* One item's run: the prompt fed whole, every position's trace written
 * as its chunk is fed. */
static int record_item(const AppLoaded *L, RunOpts *o, const TaskItem *it, const char *origin, Store *st, int threads,
                       Err *e) {
    Session s;
    StoreRunInfo info;
    const Config *c = &L->model.c;
    if (session_init(&s, &L->model, &L->tok, &o->attn, c->seq_len, 0.0f, 1.0f, o->seed, threads, e)) return -1;
    int rc = -1, n = 0;
    if (session_start_text(&s, it->prompt, strlen(it->prompt), e)) goto out;
    n = session_prompt_pending(&s);
    o->prompt = it->prompt, o->steps = n;
    if (app_run_info(o, L, &info, e)) goto out;
    snprintf(info.origin, sizeof info.origin, "%s", origin);
    if (store_run_begin(st, &info, e)) goto out;
    int fed = 0, pending = -1;
    int failed = record_prefill(&s, st, info.run_id, EVAL_TASKS_ATTN_TOP, 0, NULL, &fed, &pending, e);
    if (!failed) failed = fed != n ? err_set(e, "the prefill stopped short") : app_session_error(&s, e);
    Err e2; /* after a failed write the status update may fail too: the first error is the one to tell */
    int end = store_run_end(st, info.run_id, failed ? "failed" : "done", failed ? &e2 : e);
    rc = failed || end ? -1 : 0;
out:
    session_free(&s);
    return rc;
}

int eval_tasks_record(const AppLoaded *L, const RunOpts *o, const TaskSet *s, const char *file, Store *st,
                      int threads, Err *e) {
    RunOpts r = *o;
    r.attn.policy = POLICY_FULL, r.attn.profile = 1;
    r.temperature = 0, r.topp = 1;
    double t0 = clock_now();
    for (int i = 0; i < s->n; i++) {
        char origin[1024];
        snprintf(origin, sizeof origin, "%s#%d", file, i);
        if (record_item(L, &r, &s->item[i], origin, st, threads, e)) return err_prefix(e, origin);
        progress_count("recording (full)", i + 1, s->n, t0, 0);
    }
    return 0;
}
