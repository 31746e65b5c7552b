/* `ahascope sweep`: many settings on the same held-out data — policies ×
 * windows × thresholds — every point recorded, then the Pareto front of
 * global share against KL, and with several windows the curve of how much
 * global attention each window still needs. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/commands.h"
#include "app/eval_table.h"
#include "app/run_info.h"
#include "engine/files.h"
#include "engine/pool.h"
#include "views/plot.h"

#define MAX_LIST 32

typedef struct {
    EvalOpts x;
    const char *policies, *windows, *thetas, *taus, *ps;
} SweepOpts;

#define W(field) offsetof(SweepOpts, field)

static const ArgSpec SWEEP_ROWS[] = {
    {"--model", ARG_STRING, W(x.o.model), .metavar = "PATH", .help = "as the model flags of `ahascope eval`"},
    {"--tokenizer", ARG_STRING, W(x.o.tokenizer), .metavar = "PATH", .help = "as the model flags of `ahascope eval`"},
    {"--policy", ARG_STRING, W(policies), .metavar = "P[,P...]", .help = "the policies: {policies}"},
    {"--window", ARG_STRING, W(windows), .metavar = "W[,W...]",
     .help = "local keys per head; 8,16,32,64,128,256 with --policy oracle,aha gives the curve of global need "
             "against window"},
    {"--theta", ARG_STRING, W(thetas), .metavar = "X[,X...]", .help = "the thresholds of {theta} (default 0.1)"},
    {"--tau", ARG_STRING, W(taus), .metavar = "T[,T...]", .help = "aha's (default the router file's, else 0.5)"},
    {"--p", ARG_STRING, W(ps), .metavar = "P[,P...]", .help = "random's (default 0.1)"},
    {"--routers", ARG_STRING, W(x.o.routers), .metavar = "FILE|TEMPLATE",
     .help = "may contain {w}, replaced by each window (routers trained per window), e.g. "
             "engine/routers/stories260K_w{w}.safetensors"},
};
static const ArgsTable SWEEP_FLAGS = ARGS_TABLE(NULL, SweepOpts, SWEEP_ROWS);

const ArgsTable *const SWEEP_TABLES[] = {&SWEEP_FLAGS, &EVAL_DATA_FLAGS, &ARGS_HEADS, NULL};

static void sweep_help(void) {
    puts("usage: ahascope sweep [--model PATH] --policy P[,P...] --window W[,W...] [--theta X[,X...]] [--tau T[,T...]]\n"
         "                      [--p P[,P...]] [--routers FILE|TEMPLATE] [--data FILE | --self N] [--seq-len T]\n"
         "                      [--max-seqs N] [--tokenizer PATH] [--db FILE] [--plot] [--svg FILE] [--json]\n"
         "                      [--threads N] [--shard I/N]\n"
         "       ahascope sweep --from-db DB [--model PATH] [--json] [--plot] [--svg FILE]\n"
         "\n"
         "Evaluate every combination on the same held-out sequences (as `ahascope eval`), print each point\n"
         "and the Pareto front of global share against KL(full || policy). Lists are comma-separated.");
    args_help_text("--theta applies to {theta}; --tau to aha; --p to random.\n"
                   "--static-heads is the head set of policy static, in any form `eval` takes (l.h,..., FILE,\n"
                   "duo:FILE with --budget or --duo-threshold, calib:DB#RUN with --budget).\n"
                   "--svg FILE writes the Pareto scatter; with several windows also FILE without .svg + -windows.svg.\n"
                   "Every point is recorded with --db (an `evals` row each, label 'sweep'), each shard into its own\n"
                   "--db. --from-db DB: the table, front and window curves of the sweep points recorded in DB, the\n"
                   "shards of each point combined as one unsharded run (the setting column names every point's knob).\n"
                   "Defaults as `ahascope eval`: theta 0.1, tau the router file's (else 0.5), p 0.1, --self 8, --seq-len 256,\n"
                   "--max-seqs 1000. Routers used at a window other than their file's `window` are a warning on stderr.");
    args_help_tables(SWEEP_TABLES);
}

static int parse_list(const char *flag, const char *s, double *v, int *n, Err *e) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LIST) return err_usage(e, "%s has more than %d values", flag, MAX_LIST);
        if (args_float(flag, t, -1e9, 1e9, &v[(*n)++], e)) return -1;
    }
    return *n ? 0 : err_usage(e, "%s is empty", flag);
}

static int parse(int argc, char **argv, SweepOpts *w, Err *e) {
    EvalOpts *x = &w->x;
    runopts_defaults(&x->o);
    x->o.seed = 1234, x->self_n = 8, x->seq_len = 256, x->max_seqs = 1000, x->threads = pool_default_threads();
    void *const opts[] = {w, x, &x->o};
    int r = args_parse_argv(argc, argv, SWEEP_TABLES, opts, e);
    if (r != ARGS_DONE) return r;
    x->label = "sweep";
    if (eval_opts_shard_check(x, e)) return -1;
    if (args_heads_pick(x->o.static_heads, x->o.have_budget, x->o.have_duo_threshold, "--static-heads", e)) return -1;
    if (x->from_db && (w->policies || w->windows || w->thetas || w->taus || w->ps || x->o.routers))
        return err_usage(e, "--from-db re-summarises the recorded points: --policy, --window, --theta, --tau, --p and "
                            "--routers do not apply");
    if (!x->from_db && (!w->policies || !w->windows)) return err_usage(e, "--policy and --window are required");
    return 0;
}

/* Routers for one window: the template with {w} replaced, loaded fresh. */
static int routers_for(const char *tmpl, int window, const Config *c, Routers *r, Err *e) {
    router_free(r);
    return router_open_for(r, tmpl, window, c->n_layers, c->n_heads, c->dim, e);
}

/* Every window's routers, loaded and dropped before any work, so that a
 * missing file is named now, not after the windows before it have run. */
static int check_routers(const char *tmpl, const double *win, int n_win, const Config *c, Err *e) {
    if (!tmpl) return err_usage(e, "policy aha needs --routers FILE (or a {w} template)");
    Routers r = {0};
    for (int i = 0; i < n_win; i++)
        if (routers_for(tmpl, (int)win[i], c, &r, e)) return -1;
    router_free(&r);
    return 0;
}

typedef struct {
    EvalRow *rows;
    int n, cap;
} Rows;

static EvalRow *add_row(Rows *rs, Err *e) {
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 16;
        EvalRow *g = realloc(rs->rows, cap * sizeof *g);
        if (!g) { err_set(e, "out of memory"); return NULL; }
        rs->rows = g, rs->cap = cap;
    }
    EvalRow *r = &rs->rows[rs->n++];
    memset(r, 0, sizeof *r);
    return r;
}

/* Every knob value of one policy at one window. */
static int sweep_policy(SweepOpts *w, const AppLoaded *L, const EvalData *d, Store *st, StoreRunInfo *info, Policy p,
                        int window, Routers *rt, Rows *rs, Err *e) {
    double v[MAX_LIST] = {NAN};
    int n = 1;
    const char *list = p == POLICY_AHA ? w->taus : p == POLICY_RANDOM ? w->ps
                     : aha_policy_threshold(p) == PRED_THR_THETA ? w->thetas : NULL;
    if (list && parse_list(p == POLICY_AHA ? "--tau" : p == POLICY_RANDOM ? "--p" : "--theta", list, v, &n, e)) return -1;
    AttnConfig base = w->x.o.attn;
    base.policy = p, base.window = window;
    if (p == POLICY_AHA) {
        char warn[1200];
        if (!w->x.o.routers) return err_usage(e, "policy aha needs --routers FILE (or a {w} template)");
        if (routers_for(w->x.o.routers, window, &L->model.c, rt, e)) return -1;
        snprintf(info->routers, sizeof info->routers, "%s", rt->desc);
        app_router_meta(rt, w->taus != NULL, &base, warn, sizeof warn); /* the file's τ without --tau */
    }
    for (int i = 0; i < n; i++) {
        EvalRow *r = add_row(rs, e);
        if (!r) return -1;
        r->a = base, r->a.routers = rt->w, r->a.router_bias = rt->b;
        snprintf(r->name, sizeof r->name, "%s", aha_policy_name(p));
        int k = snprintf(r->knob, sizeof r->knob, "w=%d", window);
        if (!isnan(v[i])) {
            if (p == POLICY_AHA || p == POLICY_RANDOM) *(p == POLICY_AHA ? &r->a.tau : &r->a.p) = (float)v[i];
            else r->a.theta_logit = decide_theta_logit(v[i]);
            snprintf(r->knob + k, sizeof r->knob - k, " %s=%g", p == POLICY_AHA ? "tau" : p == POLICY_RANDOM ? "p" : "th", v[i]);
        }
        info->window = window;
        if (eval_row(L, d, &w->x, st, info, r, NULL, e)) return -1;
    }
    return 0;
}

/* Pareto front: no other point has a lower (or equal) share and a lower KL. */
static void print_front(const Rows *rs) {
    printf("\nPareto front (global share vs KL, lower is better in both):\n");
    for (int i = 0; i < rs->n; i++) {
        const StoreEval *a = &rs->rows[i].ev;
        int dominated = 0;
        for (int j = 0; j < rs->n && !dominated; j++) {
            const StoreEval *b = &rs->rows[j].ev;
            dominated = j != i && b->global_share <= a->global_share && b->kl_mean <= a->kl_mean &&
                        (b->global_share < a->global_share || b->kl_mean < a->kl_mean);
        }
        if (!dominated)
            printf("  %-10s %-18s global %6.2f%%  KL %.5f  ppl %.4f\n", rs->rows[i].name, rs->rows[i].knob,
                   100 * a->global_share, a->kl_mean, a->perplexity);
    }
}

/* Rows grouped by setting apart from the window: one curve each. */
static int window_curves(const Rows *rs, const EvalOpts *x, int n_windows, Err *e) {
    if (n_windows < 2) return 0;
    PlotPoint *pts = calloc(rs->n, sizeof *pts);
    PlotSeries *ser = calloc(rs->n, sizeof *ser);
    int ns = 0, rc = 0;
    if (!pts || !ser) { free(pts), free(ser); return err_set(e, "out of memory"); }
    printf("\nglobal share by window:\n");
    for (int i = 0; i < rs->n; i++) {
        const EvalRow *r = &rs->rows[i];
        const char *rest = strchr(r->knob, ' ');
        char key[32];
        snprintf(key, sizeof key, "%s%s", r->name, rest ? rest : "");
        int k = 0;
        while (k < ns && strcmp(ser[k].name, key)) k++;
        if (k == ns) snprintf(ser[ns].name, sizeof ser[ns].name, "%s", key), ser[ns].lines = 1, ns++;
        ser[k].n++;
        printf("  %-22s w=%-5d global %6.2f%%  keys/qh %6.2f%%  KV/kvh %6.2f%%  KL %.5f\n", key, r->a.window,
               100 * r->ev.global_share, 100 * r->ev.keys_read_frac, 100 * r->ev.kv_read_frac, r->ev.kl_mean);
    }
    /* points grouped by series, in window order (rows were made window-major) */
    int o = 0;
    for (int k = 0; k < ns; k++) {
        ser[k].pts = &pts[o];
        for (int i = 0, m = 0; i < rs->n && m < ser[k].n; i++) {
            const EvalRow *r = &rs->rows[i];
            const char *rest = strchr(r->knob, ' ');
            char key[32];
            snprintf(key, sizeof key, "%s%s", r->name, rest ? rest : "");
            if (strcmp(key, ser[k].name)) continue;
            pts[o].x = r->a.window, pts[o].y = r->ev.global_share;
            snprintf(pts[o].label, sizeof pts[o].label, "w=%d", r->a.window);
            o++, m++;
        }
    }
    PlotSpec spec = {.log_x = 1};
    snprintf(spec.title, sizeof spec.title, "global share needed as the window grows");
    snprintf(spec.xlabel, sizeof spec.xlabel, "window (keys, log scale)");
    snprintf(spec.ylabel, sizeof spec.ylabel, "global share");
    if (x->plot) plot_text(stdout, &spec, ser, ns, 72, 18);
    if (x->svg) {
        char path[1100];
        size_t len = strlen(x->svg);
        int strip = len > 4 && !strcmp(x->svg + len - 4, ".svg") ? 4 : 0;
        snprintf(path, sizeof path, "%.*s-windows.svg", (int)(len - strip), x->svg);
        rc = plot_svg(path, &spec, ser, ns, e);
    }
    free(pts), free(ser);
    return rc;
}

static int run_sweep(SweepOpts *w, Err *e) {
    EvalOpts *x = &w->x;
    AppLoaded L;
    EvalData d = {0};
    Store *st = NULL;
    StoreRunInfo info;
    Rows rs = {0};
    Routers rt = {0};
    double win[MAX_LIST];
    int n_win = 0, rc = -1;
    char pol_buf[256];
    const char *tmpl = x->o.routers;
    x->o.routers = NULL; /* loaded per window below */
    if (parse_list("--window", w->windows, win, &n_win, e) || app_load(&x->o, &L, 1, e)) goto out;
    x->o.routers = tmpl;
    for (int i = 0; i < n_win; i++)
        if (win[i] < 1 || win[i] > L.model.c.seq_len || win[i] != floor(win[i])) {
            err_set(e, "window %g must be a whole number from 1 to the context (%d)", win[i], L.model.c.seq_len);
            goto out;
        }
    if (x->seq_len > L.model.c.seq_len) {
        err_set(e, "--seq-len %ld exceeds the model's context (%d)", x->seq_len, L.model.c.seq_len);
        goto out;
    }
    snprintf(pol_buf, sizeof pol_buf, "%s", w->policies); /* refuse before any work, not after it */
    for (char *save = NULL, *t = strtok_r(pol_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        Policy p;
        if (aha_policy_parse(t, &p, e)) { err_as_usage(e); goto out; }
        if (p == POLICY_STATIC && !L.static_heads) {
            err_usage(e, "policy static needs --static-heads (a list, a file, duo:FILE or calib:DB#RUN)");
            goto out;
        }
        if (p == POLICY_AHA && check_routers(tmpl, win, n_win, &L.model.c, e)) goto out;
    }
    if ((x->svg && file_check_output(x->svg, NULL, e)) || (x->db && !(st = store_open(x->db, STORE_WRITE, STORE_BUSY_MS, e))))
        goto out;
    if (eval_opts_data(x, &L, (int)x->seq_len, &d, e)) goto out;
    x->o.prompt = "";
    if (app_run_info(&x->o, &L, &info, e)) goto out;
    for (int i = 0; i < n_win; i++) {
        snprintf(pol_buf, sizeof pol_buf, "%s", w->policies);
        for (char *save = NULL, *t = strtok_r(pol_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            Policy p;
            if (aha_policy_parse(t, &p, e)) goto out;
            if (sweep_policy(w, &L, &d, st, &info, p, (int)win[i], &rt, &rs, e)) goto out;
        }
    }
    eval_print_rows(rs.rows, rs.n, x->json, 0);
    if (!x->json) print_front(&rs);
    rc = eval_plot_rows(rs.rows, rs.n, x, "sweep: global share against KL", e);
    if (rc == 0 && !x->json) rc = window_curves(&rs, x, n_win, e);
out:
    if (store_close(st, rc ? NULL : e)) rc = -1;
    router_free(&rt);
    free(rs.rows);
    eval_data_free(&d);
    app_unload(&L);
    return rc;
}

/* --from-db: the sweep's points recorded in the file (label 'sweep'),
 * shards combined, with its front and window curves. */
static int sweep_from_db(SweepOpts *w, Err *e) {
    Rows rs = {0};
    int n = eval_opts_rows_from_db(&w->x, "sweep", &rs.rows, e), n_win = 0, rc = n < 0 ? -1 : 0;
    rs.n = rs.cap = n > 0 ? n : 0;
    for (int i = 0; i < rs.n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= rs.rows[j].a.window == rs.rows[i].a.window;
        n_win += !seen;
    }
    if (rc == 0) eval_print_rows(rs.rows, rs.n, w->x.json, 0);
    if (rc == 0 && !w->x.json) print_front(&rs);
    if (rc == 0) rc = eval_plot_rows(rs.rows, rs.n, &w->x, "sweep: global share against KL", e);
    if (rc == 0 && !w->x.json) rc = window_curves(&rs, &w->x, n_win, e);
    free(rs.rows);
    return rc;
}

int cmd_sweep(int argc, char **argv) {
    static SweepOpts w;
    Err e;
    memset(&w, 0, sizeof w);
    int r = parse(argc, argv, &w, &e);
    if (r == 1) { sweep_help(); return 0; }
    if (r < 0 || (w.x.from_db ? sweep_from_db(&w, &e) : run_sweep(&w, &e))) return args_fail(&e);
    return 0;
}
