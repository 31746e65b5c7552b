/* sweep_run.c — the settings `ahascope sweep` evaluates (app/sweep_run.h):
 * policies × windows × thresholds on the same held-out data, every point
 * recorded, then the Pareto front of global share against KL, and with
 * several windows the curve of how much global attention each still needs. */
#include "app/sweep_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_table.h"
#include "app/run_info.h"
#include "engine/files.h"
#include "engine/pool.h"
#include "views/plot.h"

/* A comma-separated list of numbers, at most MAX_LIST, for flag. */
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
        if (rt->n_windows) /* its windows are its own: a sweep over --window means nothing to it */
            return err_usage(e, "%s: a multi-choice router (metadata windows) is not swept; use eval, with --keys for "
                                "a budget", rt->desc);
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

int sweep_run(SweepOpts *w, Err *e) {
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
    if ((x->svg && file_check_output(x->svg, NULL, e)) ||
        (x->db && !(st = store_open(x->db, STORE_WRITE, STORE_BUSY_MS, e))))
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
int sweep_run_recorded(SweepOpts *w, Err *e) {
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

