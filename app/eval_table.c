/* eval_table.c — what `eval` and `sweep` share: options, one evaluated row, its table and intervals.
 *
 * One evaluated setting (a row of the table), and the
 * table and plots of rows. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_from_db.h"
#include "app/eval_table.h"
#include "app/run_info.h"
#include "engine/cost.h"
#include "engine/stats.h"
#include "engine/textout.h"
#include "views/plot.h"

int eval_opts_shard_check(const EvalOpts *x, Err *e) {
    if (x->from_db && (x->db || x->data || x->shard.n > 1 || x->match))
        return err_usage(e, "--from-db reads a database's recorded evaluations: --db, --data, --shard and "
                            "--match-budget do not apply");
    if (x->shard.n > 1 && x->match)
        return err_usage(e, "--match-budget needs every sequence (it bisects thresholds on the whole data): run it "
                            "unsharded");
    return 0;
}

int eval_opts_data(const EvalOpts *x, const AppLoaded *L, int len, EvalData *d, Err *e) {
    if (!x->data) return eval_data_self_each(d, &L->model, &L->tok, (int)x->self_n, len, x->o.seed, &x->shard, e);
    return eval_data_file(d, &L->tok, x->data, len, (int)x->max_seqs, e) || eval_data_shard(d, &x->shard, e) ? -1 : 0;
}

int eval_opts_rows_from_db(EvalOpts *x, const char *label, EvalRow **rows, Err *e) {
    AppLoaded L;
    StoreRunInfo info;
    x->o.prompt = "";
    x->o.routers = NULL, x->o.attn.policy = POLICY_FULL; /* the rows carry their own; the model is for the bytes */
    int n = app_load(&x->o, &L, 0, e) || app_run_info(&x->o, &L, &info, e)
          ? -1 : eval_from_db_rows(x->from_db, label, &L, info.model_sha256, rows, e);
    app_unload(&L);
    /* The reader hands back each sequence's NLL and leaves the intervals to
     * the table, so calls run one way: the table reads, the reader never
     * calls the table. Each row resamples its own sequences. */
    for (int k = 0; k < n; k++)
        if ((*rows)[k].seqs) eval_rows_intervals(&(*rows)[k], 1, (*rows)[k].ev.n_seqs, EVAL_CI_NLL);
    return n;
}

/* Evaluate one setting (recorded when st is set) and summarise it into row. */
/* The footprint of row->a and of full attention over d's positions: a
 * task item's prompt alone (its answer is forced apart), else the sequence. */
static void eval_row_footprint(const Model *m, const EvalData *d, EvalRow *row) {
    row->kv_held = row->kv_held_full = (CostFootprint){0, 0};
    for (int i = 0; i < d->n; i++)
        cost_footprint_add(m, &row->a, d->answer_apart && d->answer_from ? d->answer_from[i] : d->len[i],
                           &row->kv_held, &row->kv_held_full);
}

int eval_row(const AppLoaded *L, const EvalData *d, const EvalOpts *x, Store *st, StoreRunInfo *info, EvalRow *row,
                    const char *matched, Err *e) {
    StoreEval *ev = &row->ev;
    memset(ev, 0, sizeof *ev);
    snprintf(ev->policy, sizeof ev->policy, "%s", aha_policy_name(row->a.policy));
    snprintf(ev->label, sizeof ev->label, "%s", x->label ? x->label : "");
    snprintf(ev->data, sizeof ev->data, "%s", d->desc);
    snprintf(ev->model, sizeof ev->model, "%s", info->model);
    snprintf(ev->model_sha256, sizeof ev->model_sha256, "%s", info->model_sha256);
    snprintf(ev->routers, sizeof ev->routers, "%s", info->routers);
    snprintf(ev->matched_to, sizeof ev->matched_to, "%s", matched ? matched : "");
    if (row->a.policy == POLICY_STATIC)
        app_heads_text(row->a.static_heads, L->model.c.n_layers, L->model.c.n_heads, ev->static_heads,
                       sizeof ev->static_heads);
    ev->window = row->a.window, ev->sinks = row->a.sinks, ev->tau = row->a.tau, ev->theta_logit = row->a.theta_logit;
    ev->p = row->a.p, ev->n_seqs = d->n;
    int64_t id = 0;
    if (st && store_eval_begin(st, ev, &id, e)) return -1;
    row->s.ref_theta_logit = x->o.attn.theta_logit, row->s.ref_set = 1, row->s.seqs = row->seqs;
    snprintf(info->policy, sizeof info->policy, "%s", ev->policy);
    info->theta_logit = row->a.theta_logit, info->p = row->a.p, info->tau = row->a.tau, info->profile = 1;
    if (eval_policy(&L->model, L->have_tok ? &L->tok : NULL, &row->a, d, (int)x->threads, st, info, id, 1, &row->s, e))
        return -1;
    eval_summarise(&row->s, ev);
    eval_row_footprint(&L->model, d, row);
    row->weight_bytes = (double)model_decode_bytes(&L->model.c);
    row->kv_pos_bytes = (double)cost_kv_bytes(&L->model.c, 1);
    return st ? store_eval_end(st, id, ev, row->s.score, EVAL_N_PRED, e) : 0;
}

/* Where each interval's per-sequence value and its row's EvalCi live:
 * the one list eval_rows_intervals and the printers walk. */
static const struct {
    unsigned bit;
    size_t seq_off, row_off;
} ci_stats[] = {
    {EVAL_CI_KL, offsetof(EvalSeq, kl), offsetof(EvalRow, kl)},
    {EVAL_CI_NLL, offsetof(EvalSeq, nll), offsetof(EvalRow, nll)},
    {EVAL_CI_ANSWER, offsetof(EvalSeq, ans_kl), offsetof(EvalRow, ans_kl)},
    {EVAL_CI_ANSWER, offsetof(EvalSeq, ans_nll), offsetof(EvalRow, ans_nll)},
};

static double seq_at(const EvalSeq *q, size_t off) { return *(const double *)((const char *)q + off); }

void eval_rows_intervals(EvalRow *rows, int n, int n_seqs, unsigned what) {
    double *x = n_seqs > 0 ? malloc(2 * (size_t)n_seqs * sizeof *x) : NULL, *diff = x ? x + n_seqs : NULL;
    for (int i = 0; x && i < n; i++) {
        if (!rows[i].seqs || !rows[0].seqs) continue;
        rows[i].ci |= what;
        for (size_t j = 0; j < sizeof ci_stats / sizeof *ci_stats; j++) {
            if (!(ci_stats[j].bit & what)) continue;
            EvalCi *c = (EvalCi *)((char *)&rows[i] + ci_stats[j].row_off);
            c->mean = 0;
            for (int k = 0; k < n_seqs; k++) {
                x[k] = seq_at(&rows[i].seqs[k], ci_stats[j].seq_off);
                diff[k] = x[k] - seq_at(&rows[0].seqs[k], ci_stats[j].seq_off);
                c->mean += x[k] / n_seqs;
            }
            stats_bootstrap_ci(x, n_seqs, STATS_BOOT_B, STATS_BOOT_SEED, 0.05, &c->ci[0], &c->ci[1]);
            stats_bootstrap_ci(diff, n_seqs, STATS_BOOT_B, STATS_BOOT_SEED, 0.05, &c->diff_ci[0], &c->diff_ci[1]);
        }
    }
    free(x);
}

/* " (excludes 0)" when a difference interval does: the two rows differ. */
static const char *excludes0(const EvalCi *c) { return c->diff_ci[0] > 0 || c->diff_ci[1] < 0 ? " (excludes 0)" : ""; }

/* One block of interval lines: a header before the first row holding bit,
 * then a line per such row (as perplexity, exp of the NLL's, when ppl),
 * the difference from row 0 after row 0. */
static void print_block(const EvalRow *rows, int n, unsigned bit, size_t row_off, const char *header, int ppl) {
    char name[4 * sizeof rows->name];
    int shown = 0;
    for (int i = 0; i < n; i++) {
        if (!(rows[i].ci & bit)) continue;
        if (!shown++) fputs(header, stdout);
        const EvalCi *c = (const EvalCi *)((const char *)&rows[i] + row_off);
        if (ppl) printf("  %-13s %.4f [%.4f, %.4f]", textout_term(rows[i].name, name, sizeof name), exp(c->mean),
                        exp(c->ci[0]), exp(c->ci[1]));
        else printf("  %-13s %.5f [%.5f, %.5f]", textout_term(rows[i].name, name, sizeof name), c->mean, c->ci[0],
                    c->ci[1]);
        if (i > 0)
            printf("  %sdifference [%+.5f, %+.5f]%s", ppl ? "NLL " : "", c->diff_ci[0], c->diff_ci[1], excludes0(c));
        printf("\n");
    }
}

void eval_print_intervals(const EvalRow *rows, int n, const char *unit) {
    char name[4 * sizeof rows->name], h[1024];
    const char *ref = n > 0 ? textout_term(rows[0].name, name, sizeof name) : "";
    if (n == 1) snprintf(h, sizeof h, "KL, mean over %ss and its 95%% bootstrap interval (%d resamples):\n", unit,
                         STATS_BOOT_B);
    else snprintf(h, sizeof h, "KL, mean over %ss and its 95%% bootstrap interval (%d resamples); its difference from "
                  "%s,\npaired %s by %s:\n", unit, STATS_BOOT_B, ref, unit, unit);
    print_block(rows, n, EVAL_CI_KL, offsetof(EvalRow, kl), h, 0);
    int k = snprintf(h, sizeof h, "perplexity: exp of the mean over %ss of each one's mean NLL per token and of its "
                     "95%%\nbootstrap interval's ends (%d resamples)", unit, STATS_BOOT_B);
    if (n == 1) snprintf(h + k, sizeof h - k, ":\n");
    else snprintf(h + k, sizeof h - k, "; its difference in mean NLL (nats) from %s,\npaired %s by %s:\n", ref, unit,
                  unit);
    print_block(rows, n, EVAL_CI_NLL, offsetof(EvalRow, nll), h, 1);
}

void eval_print_answer_intervals(const EvalRow *rows, int n) {
    char name[4 * sizeof rows->name], h[1024];
    const char *ref = n > 0 ? textout_term(rows[0].name, name, sizeof name) : "";
    int k = snprintf(h, sizeof h, "at the forced answer (the positions predicting its tokens), means over items with "
                     "95%%\nbootstrap intervals (%d resamples)", STATS_BOOT_B);
    if (n > 1) k += snprintf(h + k, sizeof h - k, " and differences from %s, paired item by item", ref);
    snprintf(h + k, sizeof h - k, ":\nKL per answer token:\n");
    print_block(rows, n, EVAL_CI_ANSWER, offsetof(EvalRow, ans_kl), h, 0);
    print_block(rows, n, EVAL_CI_ANSWER, offsetof(EvalRow, ans_nll), "NLL of the whole answer (nats):\n", 0);
}

void eval_theta_knob(double l, char *buf, size_t cap) {
    double th = decide_prob(l);
    if (l > 6.9) snprintf(buf, cap, "theta=1-%.2g (logit %.4g)", 1.0 / (1.0 + exp(l)), l); /* 1 - θ, exactly */
    else if (l < -6.9) snprintf(buf, cap, "theta=%.2g (logit %.4g)", th, l);
    else snprintf(buf, cap, "theta=%.3g", th);
}

/* Precision, recall and F1 of the executed gate (the row's policy) against
 * the oracle; NaN where undefined. */
static void eval_prf(const EvalRow *row, double *prec, double *rec, double *f1) {
    DecideRates r = decide_rates(&row->s.score[DECIDE_EXECUTED].n);
    *prec = r.precision, *rec = r.recall, *f1 = r.f1;
}

/* AUC against the oracle of the predictor the row runs (its name: aha,
 * the QAdA family, oracle); NAN for rows without a ranked value (static,
 * random, full, local). */
static double eval_row_auc(const EvalRow *row) {
    DecidePred p;
    return decide_parse(row->name, &p) || p == DECIDE_EXECUTED ? NAN : eval_auc(&row->s.auc[p]);
}

/* A JSON number, or null for NaN and ±Inf (JSON has neither). Every
 * digit of the double: merged shards are compared with the unsharded
 * table to 1e-12, which six decimals would hide. */
static void json_num(const char *key, double v) {
    if (!isfinite(v)) printf(", \"%s\": null", key);
    else printf(", \"%s\": %.17g", key, v);
}

void eval_json_list(const char *key, const EvalSeq *seqs, int n, size_t off) {
    printf(", \"%s\": [", key);
    for (int k = 0; k < n; k++) {
        double v = seq_at(&seqs[k], off);
        if (isfinite(v)) printf("%s%.17g", k ? ", " : "", v);
        else printf("%snull", k ? ", " : "");
    }
    printf("]");
}

/* A JSON string member, valid UTF-8 (engine/textout.h). */
static void json_str(const char *key, const char *v) {
    printf(", \"%s\": ", key);
    textout_json_print(stdout, v);
}

void eval_print_rows(const EvalRow *rows, int n, int json, int matched) {
    double prec, rec, f1;
    if (json) {
        printf("[");
        for (int i = 0; i < n; i++) {
            const StoreEval *v = &rows[i].ev;
            eval_prf(&rows[i], &prec, &rec, &f1);
            printf("%s{\"predictor\": ", i ? ", " : ""); /* eval --db reads the name from a database: quoted by cJSON */
            textout_json_print(stdout, rows[i].name);
            printf(", \"knob\": ");
            textout_json_print(stdout, rows[i].knob);
            json_num("global_share", v->global_share), json_num("keys_read_frac", v->keys_read_frac);
            json_num("kl", v->kl_mean), json_num("perplexity", v->perplexity);
            json_num("perplexity_full", v->perplexity_full);
            json_num("kv_read_frac", v->kv_read_frac), json_num("theta_logit", rows[i].a.theta_logit);
            const EvalSums *s = &rows[i].s;
            double per = s->steps ? rows[i].kv_pos_bytes / s->steps : NAN; /* means over the decode steps */
            json_num("weight_bytes_step", rows[i].weight_bytes), json_num("kv_bytes_step", s->kv_read * per);
            json_num("kv_bytes_step_all_local", s->kv_local * per), json_num("kv_bytes_step_all_global", s->kv_full * per);
            json_num("precision", prec), json_num("recall", rec), json_num("f1", f1);
            json_num("auc", eval_row_auc(&rows[i]));
            const CostFootprint *h = &rows[i].kv_held, *hf = &rows[i].kv_held_full; /* --from-db: not known */
            if (hf->peak > 0) {
                json_num("kv_footprint", h->entry_steps), json_num("kv_footprint_frac", h->entry_steps / hf->entry_steps);
                json_num("kv_prefill_peak", h->peak), json_num("kv_prefill_peak_frac", h->peak / hf->peak);
            }
            if (rows[i].calibrated_on) json_str("calibrated_on", rows[i].calibrated_on);
            const EvalRow *r = &rows[i];
            if (r->ci & EVAL_CI_KL) {
                json_num("kl_seqs", r->kl.mean);
                json_num("kl_ci_low", r->kl.ci[0]), json_num("kl_ci_high", r->kl.ci[1]);
                json_num("kl_diff_ci_low", r->kl.diff_ci[0]), json_num("kl_diff_ci_high", r->kl.diff_ci[1]);
            }
            if (r->ci & EVAL_CI_NLL) {
                json_num("ppl_seqs", exp(r->nll.mean));
                json_num("ppl_ci_low", exp(r->nll.ci[0])), json_num("ppl_ci_high", exp(r->nll.ci[1]));
                if (matched)
                    json_num("nll_diff_ci_low", r->nll.diff_ci[0]), json_num("nll_diff_ci_high", r->nll.diff_ci[1]);
                eval_json_list("nll_per_seq", r->seqs, (int)v->n_seqs, offsetof(EvalSeq, nll));
            }
            printf(", \"n_tokens\": %ld}", v->n_tokens);
        }
        printf("]\n");
        return;
    }
    int wk = 14; /* the setting column fits the longest setting */
    for (int i = 0; i < n; i++) wk = (int)strlen(rows[i].knob) > wk ? (int)strlen(rows[i].knob) : wk;
    printf("%-13s %-*s %8s %8s %8s %9s %10s %9s %9s %9s %9s %7s\n", "predictor", wk, "setting", "global", "keys/qh",
           "KV/kvh", "KV MB", "KL(nats)", "ppl", "precision", "recall", "F1", "AUC");
    char name[4 * sizeof rows->name], knob[4 * sizeof rows->knob]; /* a database's words under eval --db */
    for (int i = 0; i < n; i++) {
        const StoreEval *v = &rows[i].ev;
        eval_prf(&rows[i], &prec, &rec, &f1);
        const EvalSums *s = &rows[i].s;
        printf("%-13s %-*s %7.2f%% %7.2f%% %7.2f%% %9.4g %10.5f %9.4f %9.4f %9.4f %9.4f %7.4f\n",
               textout_term(rows[i].name, name, sizeof name), wk, textout_term(rows[i].knob, knob, sizeof knob),
               100 * v->global_share, 100 * v->keys_read_frac, 100 * v->kv_read_frac,
               s->steps ? s->kv_read * rows[i].kv_pos_bytes / s->steps / 1e6 : NAN, v->kl_mean, v->perplexity, prec,
               rec, f1, eval_row_auc(&rows[i]));
    }
    if (n > 0 && rows[0].s.steps) {
        const EvalRow *r = &rows[0];
        double per = r->kv_pos_bytes / r->s.steps / 1e6;
        printf("bytes a decode step reads, mean over the positions: weights %.4g MB; KV cache %.4g MB all-local .. "
               "%.4g MB all-global (KV MB: each row's)\n", r->weight_bytes / 1e6, r->s.kv_local * per,
               r->s.kv_full * per);
    }
    printf("global: share of decisions (positions with far keys) run global; keys/qh: keys read per query head,\n"
           "KV/kvh: KV positions read per KV head (the memory traffic), both against full attention;\n"
           "AUC: how well the row's predictor ranks the oracle's labels (its value, not its threshold)\n");
    for (int i = 1; matched && i < n; i++)
        if (fabs(rows[i].ev.global_share - rows[0].ev.global_share) > 0.01)
            printf("note: %s could not be brought within 1 point of %.2f%% (its share jumps past it)\n",
                   textout_term(rows[i].name, name, sizeof name), 100 * rows[0].ev.global_share);
    char on[4 * 1024 + 1], data[4 * sizeof rows->ev.data + 1]; /* a router file's words and a path: escaped */
    for (int i = 0; i < n; i++)
        if (rows[i].calibrated_on)
            printf("note: %s was calibrated on %s, not on the evaluated %s\n",
                   textout_term(rows[i].name, name, sizeof name), textout_term(rows[i].calibrated_on, on, sizeof on),
                   textout_term(rows[i].ev.data, data, sizeof data));
    eval_print_intervals(rows, n, "sequence");
    if (n > 0) printf("full attention perplexity on the same tokens: %.4f (%ld tokens)\n", rows[0].ev.perplexity_full,
                      rows[0].ev.n_tokens);
}

/* The series of each predictor name, in order of first appearance, its
 * points copied out contiguously: rows of one name need not be adjacent
 * (a sweep makes them window-major, policies interleaved). */
static int plot_series_of(const EvalRow *rows, int n, PlotPoint *pts, PlotSeries *ser) {
    int ns = 0, o = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < ns && strcmp(ser[k].name, rows[i].name)) k++;
        if (k < ns) continue;
        snprintf(ser[ns].name, sizeof ser[ns].name, "%s", rows[i].name);
        ser[ns].pts = &pts[o];
        for (int j = i; j < n; j++) {
            if (strcmp(rows[j].name, rows[i].name)) continue;
            pts[o].x = rows[j].ev.global_share, pts[o].y = rows[j].ev.kl_mean;
            snprintf(pts[o].label, sizeof pts[o].label, "%s", rows[j].knob);
            o++, ser[ns].n++;
        }
        ns++;
    }
    return ns;
}

int eval_plot_rows(const EvalRow *rows, int n, const EvalOpts *x, const char *title, Err *e) {
    if (!x->svg && !x->plot) return 0;
    PlotPoint *pts = calloc(n, sizeof *pts);
    PlotSeries *ser = calloc(n, sizeof *ser);
    int rc = 0;
    if (!pts || !ser) { free(pts), free(ser); return err_set(e, "out of memory"); }
    int ns = plot_series_of(rows, n, pts, ser);
    PlotSpec spec = {.log_x = 0};
    snprintf(spec.title, sizeof spec.title, "%s", title);
    snprintf(spec.xlabel, sizeof spec.xlabel, "global share");
    snprintf(spec.ylabel, sizeof spec.ylabel, "KL(full || policy), nats/token");
    if (x->svg) rc = plot_svg(x->svg, &spec, ser, ns, e);
    if (rc == 0 && x->plot) plot_text(stdout, &spec, ser, ns, 72, 20);
    free(pts), free(ser);
    return rc;
}

void eval_windows_knob(const AttnConfig *a, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, "windows=");
    for (int k = 0; k < a->n_windows && o < cap; k++) o += (size_t)snprintf(buf + o, cap - o, "%s%d", k ? "," : "", a->windows[k]);
    if (o < cap) snprintf(buf + o, cap - o, " tau=%.4g", a->tau);
}
