/* eval_from_db.c — `eval --from-db` and `sweep --from-db`: recorded (and sharded) evaluations re-summarised.
 *
 * A database's evaluations re-summarised, shards combined
 * (see eval_from_db.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_from_db.h"
#include "engine/cost.h"

#define CHUNK 64 /* positions read back at a time */

/* One evaluation as the table shows it: its evals rows (one per shard). */
typedef struct {
    int first;           /* index of its first evals row */
    long n_shards;       /* N of its shards (1: unsharded) */
    unsigned char *seen; /* [n_shards]: which shard has come */
    char base[1024];     /* its data without the shard tag */
} Group;

/* The data of a row without its shard tag, and which shard it is (0/1 when untagged). */
static void data_shard(const char *data, char *base, size_t cap, ArgsShard *sh) {
    const char *tag = strstr(data, EVAL_SHARD_TAG), *next;
    while (tag && (next = strstr(tag + 1, EVAL_SHARD_TAG))) tag = next; /* the last one: a file name may hold it */
    Err ignored;
    sh->i = 0, sh->n = 1;
    if (tag && args_shard("shard", tag + strlen(EVAL_SHARD_TAG), sh, &ignored) == 0) {
        snprintf(base, cap, "%.*s", (int)(tag - data), data);
        return;
    }
    snprintf(base, cap, "%s", data);
}

static int same_num(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Rows a and b are shards of one evaluation: every setting the same. */
static int same_setting(const StoreEval *a, const StoreEval *b) {
    return !strcmp(a->label, b->label) && !strcmp(a->model_sha256, b->model_sha256) && !strcmp(a->policy, b->policy) &&
           a->window == b->window && a->sinks == b->sinks && same_num(a->tau, b->tau) &&
           same_num(a->theta_logit, b->theta_logit) && same_num(a->p, b->p) && !strcmp(a->routers, b->routers) &&
           !strcmp(a->static_heads, b->static_heads);
}

static void groups_free(Group *g, int n) {
    for (int i = 0; g && i < n; i++) free(g[i].seen);
    free(g);
}

/* Sort the rows into evaluations; a shard twice or a shard missing is an error. */
static int group_rows(const char *path, const StoreEvalRow *ev, int n, const char *label, Group **out, Err *e) {
    Group *g = calloc(n > 0 ? n : 1, sizeof *g);
    int ng = 0, skipped = 0;
    if (!g) return err_set(e, "out of memory");
    for (int i = 0; i < n; i++) {
        char base[1024];
        ArgsShard sh;
        if (label && strcmp(ev[i].ev.label, label)) continue;
        if (ev[i].ev.matched_to[0]) { skipped++; continue; }
        data_shard(ev[i].ev.data, base, sizeof base, &sh);
        int k = 0;
        while (k < ng && !(g[k].n_shards == sh.n && !strcmp(g[k].base, base) && same_setting(&ev[g[k].first].ev, &ev[i].ev)))
            k++;
        if (k == ng) {
            g[ng].first = i, g[ng].n_shards = sh.n;
            snprintf(g[ng].base, sizeof g[ng].base, "%s", base);
            if (!(g[ng++].seen = calloc((size_t)sh.n, 1))) { groups_free(g, ng); return err_set(e, "out of memory"); }
        }
        if (g[k].seen[sh.i]++) {
            groups_free(g, ng);
            return err_set(e, "%s: evaluation %lld (%s, %s) repeats shard %ld/%ld: was a shard merged twice?", path,
                           (long long)ev[i].eval_id, ev[i].ev.policy, ev[i].ev.data, sh.i, sh.n);
        }
    }
    for (int k = 0; k < ng; k++)
        for (long s = 0; s < g[k].n_shards; s++)
            if (!g[k].seen[s]) {
                int rc = err_set(e, "%s: evaluation %lld (%s on %s) lacks shard %ld/%ld: merge every shard first", path,
                                 (long long)ev[g[k].first].eval_id, ev[g[k].first].ev.policy, g[k].base, s,
                                 g[k].n_shards);
                groups_free(g, ng);
                return rc;
            }
    if (skipped)
        args_warn("%s: %d matched evaluation(s) (--match-budget) left out: their oracle labels used the AHA row's "
                  "theta, which the file does not keep", path, skipped);
    *out = g;
    return ng;
}

/* Add every recorded position of run to s, scored as a, and the run's KV
 * footprint under a and under full attention to r's (the static policy's
 * heads are not read back, so its footprint stays unknown). */
static int score_run(Store *st, int64_t run, const Model *m, EvalRow *r, EvalSums *s, Err *e) {
    const AttnConfig *a = &r->a;
    const Config *c = &m->c;
    StoreRunInfo info;
    if (store_run_info(st, run, &info, e)) return -1;
    store_run_info_free(&info);
    if (a->policy != POLICY_STATIC) cost_footprint_add(m, a, info.n_tokens, &r->kv_held, &r->kv_held_full);
    if (info.n_layers != c->n_layers || info.n_heads != c->n_heads || strcmp(info.status, "done"))
        return err_set(e, "%s: run %lld is %s with %d x %d heads, not a finished run of the model's %d x %d",
                       store_path(st), (long long)run, info.status, info.n_layers, info.n_heads, c->n_layers, c->n_heads);
    StepTrace *tr[CHUNK] = {0};
    int rc = 0;
    for (int i = 0; i < CHUNK && rc == 0; i++)
        if (!(tr[i] = trace_new(c->n_layers, c->n_heads))) rc = err_set(e, "out of memory");
    for (int pos = 0; rc == 0 && pos < info.n_tokens; pos += CHUNK) {
        int want = info.n_tokens - pos < CHUNK ? info.n_tokens - pos : CHUNK;
        int got = store_read_steps(st, run, pos, want, tr, e);
        if (got >= 0 && got < want)
            rc = err_set(e, "%s: run %lld lacks position %d of its %d", store_path(st), (long long)run, pos + got,
                         info.n_tokens);
        else if (got < 0) rc = -1;
        for (int i = 0; rc == 0 && i < got; i++) eval_score_step(tr[i], a, s);
    }
    for (int i = 0; i < CHUNK; i++) trace_free(tr[i]);
    return rc;
}

/* A sweep's evaluations, whose live table has no intervals (labelled so by sweep). */
static int is_sweep(const StoreEval *ev) { return !strcmp(ev->label, "sweep"); }

/* The θ the oracle's labels were drawn at: a sweep labels every point at
 * the default θ (its --theta list moves the predictors, not the truth),
 * an unmatched eval at its own. */
static double ref_theta(const StoreEval *ev) {
    if (!is_sweep(ev)) return ev->theta_logit;
    RunOpts o;
    runopts_defaults(&o);
    return o.attn.theta_logit;
}

/* The setting column: the eval table's "w=W", a sweep's with its knob. */
static void row_knob(const StoreEval *ev, EvalRow *r) {
    int k = snprintf(r->knob, sizeof r->knob, "w=%d", ev->window);
    if (!is_sweep(ev)) return;
    Policy p = r->a.policy;
    if (p == POLICY_AHA) snprintf(r->knob + k, sizeof r->knob - k, " tau=%g", ev->tau);
    else if (p == POLICY_RANDOM) snprintf(r->knob + k, sizeof r->knob - k, " p=%g", ev->p);
    else if (aha_policy_threshold(p) == PRED_THR_THETA)
        snprintf(r->knob + k, sizeof r->knob - k, " th=%g", decide_prob(ev->theta_logit));
}

/* Sequences of one evaluation, its shards' counts added. */
static int group_seqs(const StoreEvalRow *ev, int n, const Group *g) {
    int total = 0;
    for (int i = g->first; i < n; i++) {
        char base[1024];
        ArgsShard sh;
        data_shard(ev[i].ev.data, base, sizeof base, &sh);
        if (!ev[i].ev.matched_to[0] && sh.n == g->n_shards && !strcmp(base, g->base) &&
            same_setting(&ev[g->first].ev, &ev[i].ev))
            total += ev[i].ev.n_seqs;
    }
    return total;
}

/* One evaluation's row: the sums of its shards' rows and runs, and (into
 * r->seqs when set) each sequence's mean NLL at its unsharded index: run
 * k of shard I/N is sequence I + k·N, as args_shard_owns dealt them. */
static int group_row(Store *st, const StoreEvalRow *ev, int n, const Group *g, const AppLoaded *L, EvalRow *r, Err *e) {
    const StoreEval *v0 = &ev[g->first].ev;
    Err ignored;
    EvalSeq *seqs = r->seqs;
    int total = group_seqs(ev, n, g);
    memset(r, 0, sizeof *r);
    r->seqs = seqs;
    r->ev = *v0;
    snprintf(r->ev.data, sizeof r->ev.data, "%s", g->base);
    snprintf(r->name, sizeof r->name, "%s", v0->policy);
    r->a = aha_defaults();
    if (aha_policy_parse(v0->policy, &r->a.policy, &ignored))
        return err_set(e, "%s: evaluation %lld has an unknown policy '%s'", store_path(st), (long long)ev[g->first].eval_id,
                       v0->policy);
    r->a.window = v0->window, r->a.sinks = v0->sinks, r->a.tau = (float)v0->tau, r->a.theta_logit = v0->theta_logit;
    r->a.p = (float)v0->p;
    row_knob(v0, r);
    EvalSums *s = &r->s;
    eval_sums_name(s);
    s->ref_set = 1, s->ref_theta_logit = ref_theta(v0);
    r->ev.n_seqs = 0;
    for (int i = g->first; i < n; i++) {
        char base[1024];
        ArgsShard sh;
        data_shard(ev[i].ev.data, base, sizeof base, &sh);
        if (ev[i].ev.matched_to[0] || sh.n != g->n_shards || strcmp(base, g->base) || !same_setting(v0, &ev[i].ev))
            continue;
        const StoreEval *v = &ev[i].ev;
        char why[200];
        if (store_check_eval(v, why, sizeof why)) /* a row no evaluation writes: its sums would carry it */
            return err_set(e, "%s: evaluation %lld (%s, %s): %s", store_path(st), (long long)ev[i].eval_id, v->policy,
                           v->data, why);
        double nt = (double)v->n_tokens; /* the sums the means were made of, added exactly across shards */
        s->n_tokens += v->n_tokens, s->kl += nt * v->kl_mean;
        s->nll += nt * log(v->perplexity), s->nll_full += nt * log(v->perplexity_full);
        r->ev.n_seqs += v->n_seqs;
        int64_t *runs = NULL;
        int nr = store_eval_run_ids(st, ev[i].eval_id, &runs, e);
        if (nr >= 0 && nr != v->n_seqs)
            nr = err_set(e, "%s: evaluation %lld has %d runs for its %d sequences", store_path(st),
                         (long long)ev[i].eval_id, nr, v->n_seqs);
        for (int k = 0; nr > 0 && k < nr; k++) {
            double lp0 = s->lp_sum;
            long lpn0 = s->lp_n, at = sh.i + (long)k * sh.n;
            if (score_run(st, runs[k], &L->model, r, s, e)) nr = -1;
            else if (seqs && at >= total)
                nr = err_set(e, "%s: evaluation %lld's shards do not add up to its %d sequences", store_path(st),
                             (long long)ev[i].eval_id, total);
            else if (seqs) seqs[at].nll = s->lp_n > lpn0 ? -(s->lp_sum - lp0) / (double)(s->lp_n - lpn0) : 0;
        }
        free(runs);
        if (nr < 0) return -1;
    }
    eval_summarise(s, &r->ev);
    r->weight_bytes = (double)model_decode_bytes(&L->model.c);
    r->kv_pos_bytes = (double)cost_kv_bytes(&L->model.c, 1);
    return 0;
}

int eval_from_db_rows(const char *path, const char *label, const AppLoaded *L, const char *model_sha256, EvalRow **rows,
                      Err *e) {
    *rows = NULL;
    Store *st = store_open(path, STORE_READ, STORE_BUSY_MS, e);
    if (!st) return -1;
    StoreEvalRow *ev = NULL;
    Group *g = NULL;
    int n = store_evals(st, &ev, e), ng = n < 0 ? -1 : group_rows(path, ev, n, label, &g, e), rc = ng;
    for (int k = 0; rc >= 0 && k < ng; k++)
        if (strcmp(ev[g[k].first].ev.model_sha256, model_sha256))
            rc = err_set(e, "%s: evaluation %lld was of %s (SHA-256 %.12s…), not the model loaded (%.12s…): pass it "
                            "with --model", path, (long long)ev[g[k].first].eval_id, ev[g[k].first].ev.model,
                         ev[g[k].first].ev.model_sha256, model_sha256);
    if (rc == 0) rc = err_set(e, "%s: no finished evaluation%s%s%s", path, label ? " labelled '" : "",
                              label ? label : "", label ? "'" : "");
    size_t n_seqs = 0; /* the rows and every unswept row's sequences, in one block the caller frees */
    for (int k = 0; rc > 0 && k < ng; k++) n_seqs += is_sweep(&ev[g[k].first].ev) ? 0 : group_seqs(ev, n, &g[k]);
    if (rc > 0 && !(*rows = calloc(1, (size_t)ng * sizeof **rows + n_seqs * sizeof(EvalSeq))))
        rc = err_set(e, "out of memory");
    EvalSeq *next = rc > 0 ? (EvalSeq *)(*rows + ng) : NULL;
    for (int k = 0; rc > 0 && k < ng; k++) {
        if (!is_sweep(&ev[g[k].first].ev)) (*rows)[k].seqs = next, next += group_seqs(ev, n, &g[k]);
        if (group_row(st, ev, n, &g[k], L, &(*rows)[k], e)) rc = -1;
    }
    if (rc < 0) free(*rows), *rows = NULL;
    groups_free(g, ng);
    free(ev);
    store_close(st, NULL);
    return rc;
}
