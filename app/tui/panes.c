/* panes.c — what the TUI puts in its scrollable text pane (the plots,
 * a run's summary or diff, the run browser) and the export of the run on
 * screen (see tui.h). Each opens its own read-only connection: the
 * worker's writer is never touched from this thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/run_info.h"
#include "app/tui/state.h"
#include "engine/files.h"
#include "views/plot.h"

static int export_one(Store *st, int64_t run, StoreFormat fmt, const char *path, Err *e) {
    FileAtomic a;
    if (!file_atomic_open(&a, path, e)) return -1;
    if (store_export(st, run, fmt, a.f, e) == 0) return file_atomic_commit(&a, e);
    file_atomic_abort(&a);
    return -1;
}

/* `s`: the current run as ahascope-run<ID>.json and .csv in the current
 * directory (app_export_names: never over another run's export). */
void tui_export_run(Tui *t) {
    int64_t run = t->replay_run;
    if (!t->replay) run = tui_worker_run_id(&t->w);
    if (!t->db || !run) { view_set_status(&t->m, "not recording: nothing to export"); return; }
    Err e;
    char js[1100], cs[1100], cwd[1024];
    Store *st = store_open(t->db, STORE_READ, 500, &e);
    if (st && app_export_names(st, run, ".", js, cs, sizeof js, &e) == 0 &&
        export_one(st, run, STORE_FMT_JSON, js, &e) == 0 && export_one(st, run, STORE_FMT_CSV, cs, &e) == 0)
        view_set_status(&t->m, "exported run %lld to %s and .csv in %s", (long long)run, js + 2,
                        getcwd(cwd, sizeof cwd) ? cwd : ".");
    else view_set_status(&t->m, "export failed: %s", e.msg);
    store_close(st, NULL);
}

/* Per-head global rates of the history so far, executed beside the oracle. */
static void plot_head_rates(const Tui *t, FILE *f) {
    const ViewModel *m = &t->m;
    int cells = m->n_layers * m->n_heads;
    double *g = calloc(cells * 4, sizeof *g);
    if (!g) return;
    for (int i = 0; i < m->n_hist; i++) {
        const StepTrace *tr = m->hist[i];
        for (int c = 0; c < cells; c++) {
            int d = decide_cell(tr, c, DECIDE_EXECUTED, 0, 0); /* -1 where there was no choice */
            if (d >= 0) g[4 * c] += d, g[4 * c + 1]++;
            int o = decide_label(tr, c, m->hdr.theta_logit);
            if (o >= 0) g[4 * c + 2] += o, g[4 * c + 3]++;
        }
    }
    fprintf(f, "per-head global rate over %d positions: executed (#) and oracle at theta %.2f (+)\n", m->n_hist,
            decide_prob(m->hdr.theta_logit));
    for (int c = 0; c < cells; c++) {
        double a = g[4 * c + 1] ? g[4 * c] / g[4 * c + 1] : 0, o = g[4 * c + 3] ? g[4 * c + 2] / g[4 * c + 3] : 0;
        char bar[41];
        for (int k = 0; k < 40; k++) bar[k] = k < (int)(a * 40 + 0.5) ? '#' : k < (int)(o * 40 + 0.5) ? '+' : ' ';
        bar[40] = 0;
        fprintf(f, "L%-2d H%-2d |%s| %5.1f%%  oracle %5.1f%%\n", c / m->n_heads, c % m->n_heads, bar, 100 * a, 100 * o);
    }
    free(g);
}

/* Recorded evaluations of the current database (eval / sweep) as a scatter. */
static void plot_evals(const Tui *t, FILE *f) {
    enum { MAXP = 256, MAXS = 8 };
    Err e;
    Store *st = t->db ? store_open(t->db, STORE_READ, 500, &e) : NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *q = open_memstream(&text, &len);
    int ok = st && q && store_query(st, "SELECT policy, global_share, kl_mean FROM evals WHERE kl_mean IS NOT NULL",
                                    STORE_FMT_CSV, q, &e) == 0;
    if (q) fclose(q);
    store_close(st, NULL);
    PlotPoint raw[MAXP], pts[MAXP];
    int which[MAXP], np = 0, ns = 0;
    PlotSeries ser[MAXS];
    memset(ser, 0, sizeof ser);
    for (char *line = ok && text ? strstr(text, "\r\n") : NULL; line && np < MAXP; line = strstr(line + 2, "\r\n")) {
        char pol[16];
        double x, y;
        if (sscanf(line + 2, "%15[^,],%lf,%lf", pol, &x, &y) != 3) continue;
        int k = 0;
        while (k < ns && strcmp(ser[k].name, pol)) k++;
        if (k == MAXS) continue;
        if (k == ns) snprintf(ser[ns++].name, sizeof ser[0].name, "%s", pol);
        raw[np] = (PlotPoint){x, y, ""}, which[np++] = k;
    }
    free(text);
    if (np == 0) { fprintf(f, "\nno recorded evaluations in this database (ahascope eval/sweep --db)\n"); return; }
    int o = 0; /* plot_text wants each series' points together */
    for (int k = 0; k < ns; k++) {
        ser[k].pts = &pts[o];
        for (int i = 0; i < np; i++)
            if (which[i] == k) pts[o++] = raw[i], ser[k].n++;
    }
    PlotSpec spec = {.log_x = 0};
    snprintf(spec.title, sizeof spec.title, "recorded evaluations: global share against KL");
    snprintf(spec.xlabel, sizeof spec.xlabel, "global share");
    snprintf(spec.ylabel, sizeof spec.ylabel, "KL nats/token");
    fprintf(f, "\n");
    plot_text(f, &spec, ser, ns, 72, 18);
}

/* `v`: the plots, as text in the scrollable pane. */
void tui_show_plots(Tui *t) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    plot_head_rates(t, f);
    plot_evals(t, f);
    fclose(f);
    Err e;
    view_set_text(&t->m, "plots", "", text ? text : "", &e);
    free(text);
}

/* `R` (diff 0) the run on screen summarised, or `D` (diff 1) where it
 * differs from its parent: `compare`'s text in the scrollable pane. */
void tui_show_compare(Tui *t, int diff) {
    int64_t run = t->replay ? t->replay_run : tui_worker_run_id(&t->w);
    if (!t->db || !run) { view_set_status(&t->m, "not recording: nothing to summarise"); return; }
    Err e;
    StoreRunInfo r;
    char *text = NULL, title[64];
    size_t len = 0;
    Store *st = store_open(t->db, STORE_READ, 500, &e);
    int ok = st && store_run_info(st, run, &r, &e) == 0;
    int64_t parent = ok ? r.parent_run_id : 0;
    if (ok) store_run_info_free(&r);
    if (ok && diff && !parent) {
        view_set_status(&t->m, "run %lld has no parent run (change a setting to make one)", (long long)run);
        store_close(st, NULL);
        return;
    }
    FILE *f = ok ? open_memstream(&text, &len) : NULL;
    if (f && store_compare(st, diff ? parent : run, diff ? run : 0, NULL, f, &e)) fprintf(f, "error: %s\n", e.msg);
    if (f) fclose(f);
    store_close(st, NULL);
    if (!ok) { view_set_status(&t->m, "%s", e.msg); return; }
    if (diff) snprintf(title, sizeof title, "run %lld vs its parent %lld", (long long)run, (long long)parent);
    else snprintf(title, sizeof title, "run %lld summary", (long long)run);
    view_set_text(&t->m, title, "", text ? text : "", &e);
    free(text);
}

/* `B`: the database's runs in the text pane, newest first; the status
 * line asks for the one to open. */
void tui_show_runs(Tui *t) {
    static const char *const LIST =
        "SELECT run_id AS run, parent_run_id AS parent, status, policy, window AS w, n_tokens AS tokens,"
        " n_layers || 'x' || n_heads AS heads, substr(replace(prompt, char(10), ' '), 1, 48) AS prompt"
        " FROM runs ORDER BY run_id DESC LIMIT 1000";
    if (!t->db) { view_set_status(&t->m, "not recording: no runs to browse"); return; }
    Err e;
    char *text = NULL;
    size_t len = 0;
    Store *st = store_open(t->db, STORE_READ, 500, &e);
    FILE *f = st ? open_memstream(&text, &len) : NULL;
    int rc = f ? store_query(st, LIST, STORE_FMT_TABLE, f, &e) : -1;
    if (f) fclose(f);
    store_close(st, NULL);
    if (rc == 0) view_set_text(&t->m, "runs: type an id, Enter", "", text ? text : "", &e);
    free(text);
    if (rc) { view_set_status(&t->m, "runs: %s", e.msg); return; }
    view_input_begin(&t->m, "open run", "");
}
