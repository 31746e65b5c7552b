/* fit_run.c — `ahascope fit`'s runs (app/fit_run.h): the data labelled by
 * the oracle under full attention, routers fitted to it (app/fit.c), and
 * the router file written with its settings and held-out figures. */
#include "app/fit_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/fit.h"
#include "app/run_info.h"
#include "engine/decide.h"
#include "engine/files.h"
#include "engine/pool.h"
#include "engine/textout.h"

/* The router file: weights, biases, the settings and the held-out figures. */
static int save(const FitOpts *t, const AppLoaded *L, const char *desc, uint64_t seed, FitResult *res, Err *e) {
    enum { N_META = 20 };
    char v[N_META][64];
    const AttnConfig *a = &t->o.attn;
    snprintf(v[0], 64, "%d", a->window), snprintf(v[1], 64, "%.9g", res->tau);
    snprintf(v[2], 64, "%.9g", 1.0 / (1.0 + exp(-a->theta_logit))), snprintf(v[3], 64, "%d", a->sinks);
    snprintf(v[4], 64, "oracle-fit"), snprintf(v[5], 64, "%.63s", desc);
    snprintf(v[6], 64, "%llu", (unsigned long long)seed), snprintf(v[7], 64, "%g", t->l2);
    snprintf(v[8], 64, "%ld", t->iters), snprintf(v[9], 64, "%s", t->weight);
    snprintf(v[10], 64, "%.4f", res->train_share), snprintf(v[11], 64, "%.4f", res->held_share);
    snprintf(v[12], 64, "%.4f", res->held_agree), snprintf(v[13], 64, "%.4f", res->held_precision);
    snprintf(v[14], 64, "%.4f", res->held_recall), snprintf(v[15], 64, "%.63s", L->model_path);
    snprintf(v[16], 64, "%ld", res->tokens), snprintf(v[17], 64, "%g", t->balance);
    snprintf(v[18], 64, "%s", t->o.have_tau ? "" : "share"), snprintf(v[19], 64, "%g", t->o.have_tau ? NAN : t->share);
    const char *keys[N_META] = {"window", "tau", "theta", "sinks", "objective", "data", "seed", "l2", "iters",
                                "weight", "train_global_share", "heldout_global_share", "heldout_agreement",
                                "heldout_precision", "heldout_recall", "model", "tokens", "balance",
                                "threshold_from", "share"};
    const char *vals[N_META];
    for (int i = 0; i < N_META; i++) vals[i] = v[i];
    res->r.window = a->window;
    return router_save(&res->r, t->out, keys, vals, t->o.have_tau ? N_META - 2 : N_META, e);
}

/* The fit's settings from the flags. */
static FitConfig fit_config(const FitOpts *t) {
    FitConfig fc = {t->o.attn.window, t->o.attn.sinks, t->o.attn.theta_logit, t->l2, (int)t->iters,
                    !strcmp(t->weight, "err"), t->balance, t->o.have_tau ? NAN : t->share,
                    t->o.have_tau ? t->o.attn.tau : NAN, (int)t->threads, 1};
    return fc;
}

static void print_result(const FitOpts *t, const FitResult *res) {
    char safe[4 * 1024 + 1]; /* the path as typed: escaped for the terminal */
    printf("%s: window %d, tau %.6g: held-out global share %.2f%%, agreement with the oracle %.2f%% "
           "(precision %.3f, recall %.3f); %ld tokens, %.1f s running the model, %.1f s fitting\n",
           textout_term(t->out, safe, sizeof safe), t->o.attn.window, res->tau, 100 * res->held_share, 100 * res->held_agree, res->held_precision,
           res->held_recall, res->tokens, res->collect_s, res->fit_s);
    if (res->n_layers_no_choice > 0)
        printf("%d of %d layers have no choice to learn (the architecture's local layers): their routers are 0, "
               "not fitted\n", res->n_layers_no_choice, res->r.n_layers);
}

/* --shard I/N: the data pass of this shard's sequences, its examples to --out. */
static int write_shard(const FitOpts *t, const AppLoaded *L, const EvalData *d, int n_held, const FitConfig *fc, Err *e) {
    FitShardInfo info = {.n_seqs = d->n, .n_held = n_held, .seed = t->o.seed};
    StoreRunInfo ri;
    RunOpts o = t->o;
    long rows = 0;
    o.prompt = "";
    snprintf(info.data, sizeof info.data, "%s", d->desc);
    if (app_run_info(&o, L, &ri, e)) return -1;
    snprintf(info.model_sha256, sizeof info.model_sha256, "%s", ri.model_sha256);
    if (fit_shard_write(&L->model, d, n_held, &t->shard, fc, &info, t->out, &rows, e)) return -1;
    char out[4 * 1024 + 1], desc[4 * sizeof d->desc + 1]; /* paths as typed: escaped for the terminal */
    printf("%s: shard %ld/%ld of %s: %ld examples per head from %ld tokens\n", textout_term(t->out, out, sizeof out),
           t->shard.i, t->shard.n, textout_term(d->desc, desc, sizeof desc), rows, info.tokens);
    return 0;
}

int fit_run(FitOpts *t, Err *e) {
    AppLoaded L;
    EvalData d = {0};
    FitResult res = {0};
    int n_held = 0, rc = -1;
    if (app_load(&t->o, &L, t->data != NULL, e)) goto out; /* self-sampled data needs no tokenizer */
    const Config *c = &L.model.c;
    if (t->seq_len > c->seq_len) { err_set(e, "--seq-len %ld exceeds the context (%d)", t->seq_len, c->seq_len); goto out; }
    if (t->o.attn.window >= t->seq_len) {
        err_set(e, "--window %d leaves no far keys in sequences of --seq-len %ld", t->o.attn.window, t->seq_len);
        goto out;
    }
    if (train_data_make(&d, &n_held, &L.model, L.have_tok ? &L.tok : NULL, t->data, (int)t->self_n, (int)t->seq_len, t->o.seed, e)) goto out;
    FitConfig fc = fit_config(t);
    if (t->shard.n > 1) { rc = write_shard(t, &L, &d, n_held, &fc, e); goto out; }
    if (fit_routers(&L.model, &d, n_held, &fc, &res, e) || save(t, &L, d.desc, t->o.seed, &res, e)) goto out;
    print_result(t, &res);
    rc = 0;
out:
    fit_result_free(&res);
    eval_data_free(&d);
    app_unload(&L);
    return rc;
}

/* --from-shards: the fit on every shard's examples, without running the model. */
int fit_run_from_shards(FitOpts *t, Err *e) {
    AppLoaded L;
    FitResult res = {0};
    FitShardInfo info;
    StoreRunInfo ri;
    char list[8192];
    const char *paths[4096];
    int n = 0, rc = -1;
    snprintf(list, sizeof list, "%s", t->from_shards);
    for (char *save_p = NULL, *p = strtok_r(list, ",", &save_p); p; p = strtok_r(NULL, ",", &save_p)) {
        if (n == 4096) return err_usage(e, "--from-shards: more than 4096 files");
        paths[n++] = p;
    }
    t->o.prompt = "";
    FitConfig fc = fit_config(t);
    if (app_load(&t->o, &L, 0, e) || app_run_info(&t->o, &L, &ri, e)) goto out;
    if (fit_routers_from_shards(&L.model, paths, n, &fc, ri.model_sha256, &info, &res, e) ||
        save(t, &L, info.data, info.seed, &res, e))
        goto out;
    print_result(t, &res);
    rc = 0;
out:
    fit_result_free(&res);
    app_unload(&L);
    return rc;
}

