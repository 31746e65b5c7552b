/* panes.c — the text pane's plots, summary, diff, run list and export as jobs.
 *
 * What the TUI puts in its scrollable text pane (the plots,
 * a run's summary or diff, the run browser) and the export of the run on
 * screen (see README.md). Each is a job (job.h): it reads the database on a
 * thread and read-only connection of its own, never the worker's writer,
 * and the UI thread only starts it, shows its progress, and takes its
 * result into the pane. One job at a time: a new one (or a `:` query)
 * replaces the one running. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/run_info.h"
#include "app/tui/state.h"
#include "engine/files.h"
#include "views/explain.h"
#include "views/fixed.h"
#include "views/plot.h"

/* What a pane job is given, and what it says back: its pane's title, the
 * status line, whether the run browser should ask for an id. */
typedef struct {
    int64_t run;        /* the run on screen */
    int n;              /* plots: the positions on screen */
    int diff;           /* summary or diff: diff against the parent */
    int64_t other;      /* diff: against this run instead (chosen in B), 0: the parent */
    int width;          /* run list: the text pane's width, which its prompt column fills */
    int replay;         /* the run on screen is a replay: no setting it changes makes a child */
    int n_layers, n_heads;
    double theta_logit; /* plots: the θ the oracle's labels are read at */
    char title[96];     /* out: the pane's title; "" shows no pane */
    char status[2600];  /* out: the status line; "" says what was computed */
    int ask_run;        /* out: the run list is up, ask for the one to open */
} PaneArg;

/* The progress line's name of what each job computes. */
static const char *pane_what(int kind) {
    switch (kind) {
    case TUI_PANE_SQL: return "sql";
    case TUI_PANE_SUMMARY: return "the run summary";
    case TUI_PANE_DIFF: return "the diff with the parent run";
    case TUI_PANE_PLOTS: return "the plots";
    case TUI_PANE_RUNS: return "the run list";
    default: return "the export";
    }
}

/* What the progress line says a job is doing. */
static const char *pane_doing(int kind) {
    switch (kind) {
    case TUI_PANE_EXPORT: return "writing";
    default: return "computing";
    }
}

/* Start a pane job, its progress line at once. */
static void start_pane(Tui *t, TuiPane kind, TuiJobWork work, const PaneArg *a) {
    Err e;
    if (tui_job_start(&t->job, t->db, kind, work, a, sizeof *a, NULL, &e)) {
        view_set_status(&t->m, "%s: %s", pane_what(kind), e.msg);
        return;
    }
    view_set_progress(&t->m, "%s %s\xe2\x80\xa6 (Esc cancels)", pane_doing(kind), pane_what(kind));
    t->job_shown = 0;
}

/* The run on screen (0: none recorded): a replay's, or the worker's. */
static int64_t run_on_screen(Tui *t) { return t->replay ? t->replay_run : tui_worker_run_id(&t->w); }

static int export_one(Store *st, int64_t run, StoreFormat fmt, const char *path, Err *e) {
    FileAtomic a;
    if (!file_atomic_open(&a, path, e)) return -1;
    if (store_export(st, run, fmt, a.f, e) == 0) return file_atomic_commit(&a, e);
    file_atomic_abort(&a);
    return -1;
}

/* The export job: ahascope-run<ID>.json and .csv in the current directory
 * (app_export_names: never over another run's export). */
static int export_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    PaneArg *a = tui_job_arg(r);
    char js[1100], cs[1100], cwd[1024];
    (void)out;
    if (app_export_names(st, a->run, ".", js, cs, sizeof js, e) || export_one(st, a->run, STORE_FMT_JSON, js, e) ||
        export_one(st, a->run, STORE_FMT_CSV, cs, e)) {
        snprintf(a->status, sizeof a->status, "export failed: %s", e->msg);
        return 0;
    }
    snprintf(a->status, sizeof a->status, "exported run %lld to %s and .csv in %s", (long long)a->run, js + 2,
             getcwd(cwd, sizeof cwd) ? cwd : ".");
    return 0;
}

/* A run that was not recorded (--no-record), for `s` and `R`: its positions
 * copied off the screen and its runs row, which the job writes into a
 * scratch database of its own (removed when it ends), then exports or
 * summarises as it would a recorded run. */
typedef struct {
    PaneArg pane;      /* first: pane_done reads the result as a PaneArg */
    StepTrace **tr;    /* the positions on screen (copies, heap) */
    int n;
    StoreRunInfo info; /* the runs row; its prompt is heap */
} MemArg;

static void mem_release(void *arg) {
    MemArg *a = arg;
    for (int i = 0; a->tr && i < a->n; i++) trace_free(a->tr[i]);
    free(a->tr), free(a->info.prompt);
    a->tr = NULL, a->info.prompt = NULL;
}

/* The positions on screen and the settings they ran under, copied for a
 * job; 0, or -1 out of memory (nothing left to free). */
static int mem_arg(Tui *t, MemArg *a) {
    memset(a, 0, sizeof *a);
    a->info = t->w.info; /* the worker's template: read-only once it started */
    const AttnConfig *c = &t->cfg;
    snprintf(a->info.policy, sizeof a->info.policy, "%s", aha_policy_name(c->policy));
    a->info.window = c->window, a->info.sinks = c->sinks, a->info.tau = c->tau, a->info.theta_logit = c->theta_logit;
    a->info.p = c->p, a->info.profile = c->profile, a->info.parent_run_id = 0, a->info.steps = t->m.n_hist;
    a->info.prompt = strdup(t->prompt ? t->prompt : "");
    a->tr = calloc((size_t)t->m.n_hist + 1, sizeof *a->tr);
    int ok = a->info.prompt && a->tr;
    for (int i = 0; ok && i < t->m.n_hist; i++) {
        const StepTrace *h = t->m.hist[i];
        ok = (a->tr[i] = trace_new_top(h->n_layers, h->n_heads, h->top_k)) != NULL;
        if (ok) trace_copy(a->tr[i], h), a->n = i + 1;
    }
    if (!ok) mem_release(a);
    return ok ? 0 : -1;
}

/* Remove the scratch directory and whatever SQLite left in it. */
static void mem_remove(const char *dir) {
    DIR *d = opendir(dir);
    char path[1400];
    for (struct dirent *en; d && (en = readdir(d));) {
        if (!strcmp(en->d_name, ".") || !strcmp(en->d_name, "..")) continue;
        snprintf(path, sizeof path, "%.1100s/%.255s", dir, en->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* The copied run written into a scratch database in dir (made here); the
 * store open on it, or NULL with e set (dir then removed, or never made). */
static Store *mem_store(TuiJobRun *r, MemArg *a, char *dir, size_t cap, Err *e) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/ahascope-unrecorded-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) return err_set(e, "no scratch directory for a run not recorded: %s", dir), NULL;
    char path[1200];
    snprintf(path, sizeof path, "%.1100s/run.db", dir);
    Store *st = store_open(path, STORE_WRITE, STORE_BUSY_MS, e);
    int rc = st ? store_run_begin(st, &a->info, e) : -1;
    for (int i = 0; rc == 0 && i < a->n && !tui_job_cancelled(r); i++) {
        rc = store_write_step(st, a->info.run_id, a->tr[i], NULL, e);
        tui_job_count(r, i + 1);
    }
    if (rc == 0 && tui_job_cancelled(r)) rc = err_set(e, "cancelled");
    if (rc == 0) rc = store_run_end(st, a->info.run_id, "done", e);
    if (rc == 0) return st;
    store_close(st, NULL);
    mem_remove(dir);
    return NULL;
}

/* ./ahascope-unrecorded.json and .csv, or -2, -3 … : never over a file there. */
static int mem_export_names(char *js, char *cs, size_t cap, Err *e) {
    struct stat sb;
    for (int k = 1; k < 1000; k++) {
        char tail[16] = "";
        if (k > 1) snprintf(tail, sizeof tail, "-%d", k);
        snprintf(js, cap, "./ahascope-unrecorded%s.json", tail);
        snprintf(cs, cap, "./ahascope-unrecorded%s.csv", tail);
        if (stat(js, &sb) != 0 && stat(cs, &sb) != 0) return 0;
    }
    return err_set(e, "999 exports of runs not recorded are here already");
}

/* A message about the scratch database's run as the user knows it: the
 * scratch path and the run's id there named as "the run on screen". */
static void mem_words(char *msg, size_t cap, int64_t run) {
    char id[32], out[600];
    const char *at = strstr(msg, "/run.db: ");
    const char *src = at ? at + 9 : msg;
    snprintf(id, sizeof id, "run %lld", (long long)run);
    size_t o = 0, n = strlen(id);
    while (*src && o + 20 < sizeof out) {
        if (!strncmp(src, id, n) && (src[n] < '0' || src[n] > '9')) {
            o += (size_t)snprintf(out + o, sizeof out - o, "the run on screen");
            src += n;
        } else out[o++] = *src++;
    }
    out[o] = 0;
    size_t keep = o < cap ? o : cap - 1;
    memcpy(msg, out, keep), msg[keep] = 0;
}

/* compare's summary of the scratch run, its first line ("run 1: policy …")
 * saying that the run was not recorded. */
static int mem_summary(Store *st, int64_t run, FILE *out, Err *e) {
    char *text = NULL, id[32];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return err_set(e, "out of memory");
    int rc = store_compare(st, run, 0, NULL, f, e);
    fclose(f);
    int n = snprintf(id, sizeof id, "run %lld: ", (long long)run);
    if (rc == 0 && text && !strncmp(text, id, (size_t)n)) fprintf(out, "not recorded: %s", text + n);
    else if (rc == 0 && text) fputs(text, out);
    free(text);
    return rc;
}

/* `s` or `R` of a run not recorded: the scratch database, then the export
 * or compare's summary of its one run. */
static int mem_work(TuiJobRun *r, Store *none, FILE *out, Err *e) {
    MemArg *a = tui_job_arg(r);
    char dir[1100], js[1100], cs[1100], cwd[1024];
    (void)none;
    Store *st = mem_store(r, a, dir, sizeof dir, e);
    if (!st && !tui_job_cancelled(r)) mem_words(e->msg, sizeof e->msg, a->info.run_id);
    if (!st) return tui_job_cancelled(r) ? -1 : (snprintf(a->pane.status, sizeof a->pane.status, "%s", e->msg), 0);
    int rc = 0;
    if (a->pane.diff < 0) { /* the export */
        if (mem_export_names(js, cs, sizeof js, e) || export_one(st, a->info.run_id, STORE_FMT_JSON, js, e) ||
            export_one(st, a->info.run_id, STORE_FMT_CSV, cs, e)) {
            mem_words(e->msg, sizeof e->msg, a->info.run_id);
            snprintf(a->pane.status, sizeof a->pane.status, "export failed: %s", e->msg);
        }
        else
            snprintf(a->pane.status, sizeof a->pane.status,
                     "exported the run on screen (not recorded: %d positions) to %s and .csv in %s", a->n, js + 2,
                     getcwd(cwd, sizeof cwd) ? cwd : ".");
    } else if ((rc = mem_summary(st, a->info.run_id, out, e)) == 0) {
        snprintf(a->pane.title, sizeof a->pane.title, "summary (not recorded)");
    } else if (!tui_job_cancelled(r)) { /* said on the status line, the pane left as it is */
        mem_words(e->msg, sizeof e->msg, a->info.run_id);
        snprintf(a->pane.status, sizeof a->pane.status, "%s", e->msg);
        rc = 0;
    }
    store_close(st, NULL);
    mem_remove(dir);
    return rc;
}

/* Start `s` (diff -1) or `R` (diff 0) on the run on screen, not recorded. */
static void start_mem(Tui *t, TuiPane kind, int diff) {
    MemArg a;
    Err e;
    if (t->replay || t->m.n_hist == 0) { view_set_status(&t->m, "no positions on screen yet"); return; }
    if (mem_arg(t, &a)) { view_set_status(&t->m, "%s: out of memory", pane_what(kind)); return; }
    a.pane.diff = diff;
    if (tui_job_start_own(&t->job, kind, mem_work, &a, sizeof a, mem_release, &e)) {
        view_set_status(&t->m, "%s: %s", pane_what(kind), e.msg);
        return;
    }
    view_set_progress(&t->m, "%s %s of the run not recorded\xe2\x80\xa6 (Esc cancels)", pane_doing(kind),
                      pane_what(kind));
    t->job_shown = 0;
}

/* `s`: the current run as JSON and CSV, written off this thread. */
void tui_export_run(Tui *t) {
    PaneArg a = {.run = run_on_screen(t)};
    if (!t->db && !t->replay) { start_mem(t, TUI_PANE_EXPORT, -1); return; }
    if (!t->db || !a.run) { view_set_status(&t->m, "not recording: nothing to export"); return; }
    start_pane(t, TUI_PANE_EXPORT, export_work, &a);
}

/* Per-head counts of the executed gate and the oracle's label at θ:
 * [4 * cell] global, decided, oracle global, oracle labelled. */
static void count_head_rates(const StepTrace *tr, int cells, double theta_logit, double *g) {
    for (int c = 0; c < cells; c++) {
        int d = view_decide(tr, c, DECIDE_EXECUTED, 0, 0); /* -1 where there was no choice */
        if (d >= 0) g[4 * c] += d, g[4 * c + 1]++;
        int o = view_label(tr, c, theta_logit);
        if (o >= 0) g[4 * c + 2] += o, g[4 * c + 3]++;
    }
}

/* A rate of num in den as the bars pane prints one: "n/a" with nothing counted. */
static void rate_text(char *buf, size_t n, double num, double den) {
    if (den > 0) snprintf(buf, n, "%5.1f%%", 100 * num / den);
    else snprintf(buf, n, "%6s", "n/a");
}

/* Per-head global rates, executed beside the oracle, over the positions
 * where there was a choice (the n - decided before the first far key
 * decided nothing, and count in no rate). */
static void print_head_rates(FILE *f, const double *g, int n_layers, int n_heads, int n, double theta_logit) {
    int decided = 0;
    for (int c = 0; c < n_layers * n_heads; c++)
        if (g[4 * c + 1] > decided) decided = (int)g[4 * c + 1];
    char th[16];
    view_unit_text(th, sizeof th, decide_prob(theta_logit), 2);
    fprintf(f, "per-head global rate over %d decided positions (of %d): executed (#) and oracle at theta %s (+)\n",
            decided, n, th);
    for (int c = 0; c < n_layers * n_heads; c++) {
        double a = g[4 * c + 1] ? g[4 * c] / g[4 * c + 1] : 0, o = g[4 * c + 3] ? g[4 * c + 2] / g[4 * c + 3] : 0;
        char bar[41], at[16], ot[16];
        for (int k = 0; k < 40; k++) bar[k] = k < (int)(a * 40 + 0.5) ? '#' : k < (int)(o * 40 + 0.5) ? '+' : ' ';
        bar[40] = 0;
        rate_text(at, sizeof at, g[4 * c], g[4 * c + 1]);
        rate_text(ot, sizeof ot, g[4 * c + 2], g[4 * c + 3]);
        fprintf(f, "L%-2d H%-2d |%s| %s  oracle %s\n", c / n_heads, c % n_heads, bar, at, ot);
    }
}

/* The history on screen, counted here: a run that was not recorded. */
static void plot_head_rates_shown(const Tui *t, FILE *f) {
    const ViewModel *m = &t->m;
    int cells = m->n_layers * m->n_heads;
    double *g = calloc(cells * 4, sizeof *g);
    if (!g) return;
    for (int i = 0; i < m->n_hist; i++) count_head_rates(m->hist[i], cells, m->hdr.theta_logit, g);
    print_head_rates(f, g, m->n_layers, m->n_heads, m->n_hist, m->hdr.theta_logit);
    free(g);
}

/* The same counts from the recorded run, a chunk of positions at a time
 * (the count the progress line shows), on the job's thread. */
static int plot_head_rates_recorded(TuiJobRun *r, Store *st, const PaneArg *a, FILE *f, Err *e) {
    enum { CHUNK = 64 };
    int cells = a->n_layers * a->n_heads, rc = 0, done = 0, got = 0;
    double *g = calloc((size_t)cells * 4, sizeof *g);
    StepTrace *buf[CHUNK] = {0};
    for (int i = 0; g && i < CHUNK; i++)
        if (!(buf[i] = trace_new(a->n_layers, a->n_heads))) break;
    if (!g || !buf[CHUNK - 1]) rc = err_set(e, "out of memory");
    while (rc == 0 && done < a->n && !tui_job_cancelled(r)) {
        int want = a->n - done < CHUNK ? a->n - done : CHUNK;
        if ((got = store_read_steps(st, a->run, done, want, buf, e)) < 0) rc = -1;
        for (int i = 0; i < got; i++) count_head_rates(buf[i], cells, a->theta_logit, g);
        if (got > 0) done += got;
        tui_job_count(r, done);
        if (got < want) break;
    }
    if (rc == 0 && tui_job_cancelled(r)) rc = err_set(e, "cancelled");
    if (rc == 0) print_head_rates(f, g, a->n_layers, a->n_heads, done, a->theta_logit);
    for (int i = 0; i < CHUNK; i++) trace_free(buf[i]);
    free(g);
    return rc;
}

/* Recorded evaluations of the current database (eval / sweep) as a scatter. */
static void plot_evals(Store *st, FILE *f) {
    enum { MAXP = 256, MAXS = 8 };
    Err e;
    char *text = NULL;
    size_t len = 0;
    FILE *q = open_memstream(&text, &len);
    int ok = st && q && store_query(st, "SELECT policy, global_share, kl_mean FROM evals WHERE kl_mean IS NOT NULL",
                                    STORE_FMT_CSV, q, &e) == 0;
    if (q) fclose(q);
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

/* The plots job: the recorded run's per-head rates, then the evaluations. */
static int plots_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    PaneArg *a = tui_job_arg(r);
    if (plot_head_rates_recorded(r, st, a, out, e)) return -1;
    plot_evals(st, out);
    snprintf(a->title, sizeof a->title, "plots");
    return 0;
}

/* `v`: the plots, as text in the scrollable pane. A recorded run is read
 * back off this thread; one that was not recorded is counted here. */
void tui_show_plots(Tui *t) {
    if (t->db && t->screen_run && t->m.n_hist > 0) {
        PaneArg a = {.run = t->screen_run, .n = t->m.n_hist, .n_layers = t->m.n_layers, .n_heads = t->m.n_heads,
                     .theta_logit = t->m.hdr.theta_logit};
        start_pane(t, TUI_PANE_PLOTS, plots_work, &a);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    plot_head_rates_shown(t, f);
    plot_evals(NULL, f);
    fclose(f);
    Err e;
    view_set_text(&t->m, "plots", "", text ? text : "", &e);
    free(text);
}

/* The status line's word on a run still being written, "" when it is not. */
static int writing_status(Store *st, int64_t run, char *buf, size_t cap, Err *e) {
    StoreRunProgress p;
    if (store_run_progress(st, run, &p, e)) return -1;
    store_run_writing_line(run, &p, buf, cap);
    return 0;
}

/* The status line's word on a diff against a child still being written:
 * which positions it covers ("" when the child is whole). */
static void partial_status(Store *st, PaneArg *a, int64_t parent, Err *e) {
    StoreRunProgress c, p;
    if (store_run_progress(st, a->run, &c, e) || store_run_progress(st, parent, &p, e)) return;
    if (!c.writing || c.n_tokens >= p.n_tokens) return;
    if (c.n_tokens > 0)
        snprintf(a->status, sizeof a->status, "diff over positions 0-%d: run %lld is still being written (%d of %d)",
                 c.n_tokens - 1, (long long)a->run, c.n_tokens, p.n_tokens);
    else snprintf(a->status, sizeof a->status, "nothing to diff yet: run %lld is still being written (0 of %d)",
                  (long long)a->run, p.n_tokens);
}

/* The status line's word on a diff of two runs whose texts part: the
 * flips are counted only before it (store_texts_part), "" when they do not. */
static void parted_status(Store *st, PaneArg *a, int64_t other, Err *e) {
    int parted, part = store_texts_part(st, other, a->run, &parted, e);
    if (part < 0 || !parted) return;
    if (part > 0)
        snprintf(a->status, sizeof a->status, "run %lld vs run %lld: compared over positions 0-%d, where the texts part",
                 (long long)a->run, (long long)other, part - 1);
    else snprintf(a->status, sizeof a->status, "run %lld vs run %lld: nothing compared, the texts part at position 0",
                  (long long)a->run, (long long)other);
}

/* The summary and diff job: `compare`'s text. A diff against a run still
 * being written covers the positions both have, and the status line says
 * which. */
static int compare_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    PaneArg *a = tui_job_arg(r);
    int diff = a->diff;
    StoreRunInfo info;
    if (store_run_info(st, a->run, &info, e)) return -1;
    int64_t parent = a->other ? a->other : info.parent_run_id;
    store_run_info_free(&info);
    if (diff && !parent) { /* a replay only re-scores: a child comes from a live run's settings */
        snprintf(a->status, sizeof a->status, "run %lld has no parent run (%s)", (long long)a->run,
                 a->replay ? "it was not re-evaluated from one; a live run's P, w, t makes a child"
                           : "change a setting to make one");
        return 0;
    }
    if (store_compare(st, diff ? parent : a->run, diff ? a->run : 0, NULL, out, e)) {
        if (tui_job_cancelled(r)) return -1;
        fprintf(out, "error: %s\n", e->msg);
    }
    if (diff) {
        partial_status(st, a, parent, e);
        if (!a->status[0]) parted_status(st, a, parent, e);
    } else if (writing_status(st, a->run, a->status, sizeof a->status, e)) a->status[0] = 0;
    if (diff && a->other) snprintf(a->title, sizeof a->title, "run %lld vs run %lld", (long long)a->run, (long long)parent);
    else if (diff)
        snprintf(a->title, sizeof a->title, "run %lld vs its parent %lld", (long long)a->run, (long long)parent);
    else snprintf(a->title, sizeof a->title, "run %lld summary", (long long)a->run);
    if (diff && a->other && !a->status[0]) /* named: D is against a run chosen in B, not the parent */
        snprintf(a->status, sizeof a->status, "run %lld vs run %lld (chosen in B; Tab on an empty B line: the parent)",
                 (long long)a->run, (long long)parent);
    return 0;
}

/* `R` (diff 0) the run on screen summarised, or `D` (diff 1) where it
 * differs from its parent: `compare`'s text in the scrollable pane. */
void tui_show_compare(Tui *t, int diff) {
    PaneArg a = {.run = run_on_screen(t), .diff = diff, .replay = t->replay, .other = diff ? t->other_run : 0};
    if (!t->db && !t->replay && !diff) { start_mem(t, TUI_PANE_SUMMARY, 0); return; }
    if (!t->db && diff && !t->replay) {
        view_set_status(&t->m, "not recording: D diffs two recorded runs (X and the inspector's par row show the flips)");
        return;
    }
    if (!t->db || !a.run) { view_set_status(&t->m, "not recording: nothing to summarise"); return; }
    start_pane(t, diff ? TUI_PANE_DIFF : TUI_PANE_SUMMARY, compare_work, &a);
}

/* The run list's columns: each run's settings (policy, w, τ, θ, sinks, the
 * routers' file name), the wide set where the pane has room for it. */
static const char *runs_sql(int wide) {
    static const char *const SQL[2] = {
        "SELECT run_id AS run, parent_run_id AS parent, policy, window AS w, printf('%.2f', tau) AS tau,"
        " printf('%.3g', theta) AS theta, sinks AS s, COALESCE(substr(replace(routers, rtrim(routers,"
        " replace(routers, '/', '')), ''), 1, 14), '-') AS routers, n_tokens AS tokens, COALESCE(ablate, '') AS ablate,"
        " replace(prompt, char(10), ' ') AS prompt FROM runs ORDER BY run_id DESC LIMIT 1000",
        "SELECT run_id AS run, parent_run_id AS parent, status, policy, window AS w, printf('%.2f', tau) AS tau,"
        " printf('%.3g', theta) AS theta, sinks, COALESCE(substr(replace(routers, rtrim(routers,"
        " replace(routers, '/', '')), ''), 1, 24), '-') AS routers, n_tokens AS tokens,"
        " n_layers || 'x' || n_heads AS heads, COALESCE(ablate, '') AS ablate, replace(prompt, char(10), ' ') AS prompt"
        " FROM runs ORDER BY run_id DESC LIMIT 1000"};
    return SQL[wide];
}

/* Copy text to out with each line of its first block (the table, up to
 * the first empty line) cut to width characters: the prompt, last, gives
 * way so every run's settings show. */
static void fit_table(const char *text, int width, FILE *out) {
    int in_table = 1;
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l), cut = len;
        if (len == 0) in_table = 0;
        if (in_table) { /* count characters, not bytes: a prompt may hold any UTF-8 */
            int chars = 0;
            for (size_t i = 0; i < len; i++)
                if (((unsigned char)l[i] & 0xC0) != 0x80 && chars++ == width) { cut = i; break; }
        }
        fwrite(l, 1, cut, out);
        fputc('\n', out);
        if (!nl) break;
        l = nl + 1;
    }
}

/* The run list job: newest first, then the runs still being written. */
static int runs_work(TuiJobRun *r, Store *st, FILE *out, Err *e) {
    PaneArg *a = tui_job_arg(r);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return err_set(e, "out of memory");
    int rc = store_query(st, runs_sql(a->width >= 120), STORE_FMT_TABLE, f, e) || store_print_writing(st, f, e);
    fclose(f);
    if (rc == 0) fit_table(text ? text : "", a->width > 20 ? a->width - 2 : 18, out);
    free(text);
    if (rc) return -1;
    snprintf(a->title, sizeof a->title, "runs: an id, Enter opens, Tab compares");
    a->ask_run = 1;
    return 0;
}

/* `B`: the database's runs in the text pane; the status line asks for the
 * one to open. */
void tui_show_runs(Tui *t) {
    PaneArg a = {.width = t->scr.lay.cols};
    if (!t->db) { view_set_status(&t->m, "not recording: no runs to browse"); return; }
    start_pane(t, TUI_PANE_RUNS, runs_work, &a);
}

/* A finished pane job: its text in the pane, its word on the status line. */
static void pane_done(Tui *t, TuiJobResult *jr) {
    Err e;
    PaneArg *a = jr->arg;
    const char *what = pane_what(jr->kind);
    view_clear_progress(&t->m);
    if (jr->end == TUI_JOB_CANCELLED) {
        view_set_status(&t->m, "%s cancelled after %.1f s", what, jr->secs);
        return;
    }
    if (jr->end == TUI_JOB_FAILED) {
        if (jr->kind == TUI_PANE_RUNS) view_set_status(&t->m, "runs: %s", jr->msg);
        else view_set_status(&t->m, "%s", jr->msg);
        return;
    }
    if (a->title[0]) view_set_text(&t->m, a->title, "", jr->text ? jr->text : "", &e);
    if (a->status[0]) view_set_status(&t->m, "%s", a->status);
    else view_set_status(&t->m, "%s: %.1f s", a->title[0] ? a->title : what, jr->secs);
    if (a->ask_run && !t->m.input.active) view_input_begin(&t->m, "open run", "");
}

void tui_poll_job(Tui *t) {
    int kind;
    long count;
    double secs;
    TuiJobResult jr;
    if (tui_job_progress(&t->job, &kind, &count, &secs)) {
        if (secs - t->job_shown < 0.1) return; /* the progress line is redrawn ten times a second */
        t->job_shown = secs;
        if (kind == TUI_PANE_SQL)
            view_set_progress(&t->m, "sql running\xe2\x80\xa6 %ld rows, %.1f s (Esc cancels)", count, secs);
        else if (count > 0)
            view_set_progress(&t->m, "%s %s\xe2\x80\xa6 %ld positions, %.1f s (Esc cancels)", pane_doing(kind),
                              pane_what(kind), count, secs);
        else view_set_progress(&t->m, "%s %s\xe2\x80\xa6 %.1f s (Esc cancels)", pane_doing(kind), pane_what(kind), secs);
        t->dirty = 1;
    } else if (tui_job_take(&t->job, &jr)) {
        if (jr.kind == TUI_PANE_SQL) tui_sql_done(t, &jr);
        else pane_done(t, &jr);
        tui_job_result_free(&jr);
        t->dirty = 1;
    }
}

int tui_cancel_job(Tui *t) {
    int kind;
    long count;
    double secs;
    if (!tui_job_progress(&t->job, &kind, &count, &secs) || !tui_job_cancel(&t->job))
        return tui_cancel_load(t) || tui_cancel_rescore(t);
    if (kind == TUI_PANE_SQL) view_set_progress(&t->m, "sql cancelling\xe2\x80\xa6");
    else view_set_progress(&t->m, "cancelling %s\xe2\x80\xa6", pane_what(kind));
    return 1;
}
