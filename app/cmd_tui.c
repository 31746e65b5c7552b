/* `ahascope tui` (and `ahascope` alone): step through generation token by
 * token and watch every head choose global or local.
 *
 * Two threads: the engine steps in a TuiWorker (tui_worker.h), this UI
 * thread owns the ViewModel and curses. Each frame it takes the worker's
 * finished traces, draws (one doupdate), and waits at most 20 ms for a key,
 * so keys are answered while a long step runs. Signal handlers only set
 * flags; every way out restores the terminal.
 */
#include <langinfo.h>
#include <math.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "app/tui_sql.h"
#include "app/tui_worker.h"
#include "engine/cost.h"
#include "engine/files.h"
#include "views/explain.h"
#include "views/metric.h"
#include "views/plot.h"
#include "views/screen.h"

/* The handlers only set these. SIGWINCH is handled here rather than by
 * ncurses: a process-wide signal may land in an engine or BLAS thread, and
 * ncurses then learns of it only when a key arrives. The UI loop polls the
 * flag every frame instead. Ctrl-C (g_interrupt) cancels a running SQL
 * query, and quits only when none runs. */
static volatile sig_atomic_t g_quit, g_interrupt, g_winch;

/* The `e` editor takes any prompt a run can begin from whole. */
_Static_assert(VIEW_INPUT_MAX >= APP_PROMPT_FILE_MAX, "the prompt editor must hold a whole --prompt-file");

static void on_winch(int sig) { (void)sig, g_winch = 1; }

/* Follow the terminal's new size (read from the tty) and repaint it all. */
static void follow_resize(void) {
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) resizeterm(ws.ws_row, ws.ws_col);
    clearok(curscr, TRUE);
}

static void on_quit(int sig) {
    if (sig == SIGINT) g_interrupt = 1;
    else g_quit = 1;
}

static const double SPEEDS[] = {0.5, 1, 2, 5, 10, 20, 50, 100, 200, 0}; /* 0: as fast as it goes */
#define N_SPEEDS (int)(sizeof SPEEDS / sizeof SPEEDS[0])

typedef struct {
    ViewModel m;
    ViewScreen scr;
    TuiWorker w;
    TuiSql sql;         /* the `:` query running off this thread, if any */
    double sql_shown;   /* when the progress line was last redrawn */
    double prefill_shown; /* when a long prefill's line was last redrawn */
    int prefill_on;     /* that line is up: say what the prefill took when it ends */
    const AppLoaded *L;
    const char *db;     /* recording target, NULL: not recording */
    int speed_i, playing, dirty, want_sql;
    int attn_pending;   /* an attention request is out */
    int replay;         /* browsing a recorded run: no model, no worker */
    int64_t replay_run;
    double replay_next; /* when a playing replay moves its cursor on */
    AttnConfig cfg;     /* the settings asked for last (the worker may not have started them yet) */
    int restore;        /* cursor to put back once a re-evaluated run reaches it, -1 none */
    int new_run_pending; /* a new run began: the old one stays on screen until its first step */
    int reevaluating;   /* a re-evaluation was asked for: say its run id when it shows */
    char reevaluating_what[160];
    float *attn_buf;    /* [seq_len] attention weights taken from the worker */
    char *prompt;       /* the prompt of the last run begun from text, whole (owned): what `e` edits */
} Tui;

static void tui_help(void) {
    puts("usage: ahascope tui [--prompt TEXT | --prompt-file FILE] [--db FILE | --no-record] [--mono] [--ascii]\n"
         "                    [--threads N] [--sql-timeout S] [sampling flags] [model flags] [policy flags]\n"
         "       ahascope tui --replay [--db FILE] [--run ID] [--mono] [--ascii] [--sql-timeout S]\n"
         "\n"
         "Step through generation token by token and watch every attention head choose global or local.\n"
         "Every predictor is computed at every step (--profile is implied). With no --policy, --window\n"
         "or --routers, a model with shipped routers (stories260K) runs aha on them; others run full.\n"
         "  --prompt TEXT     the text to continue (default \"Once upon a time\"; \"\" starts from BOS alone)\n"
         "  --prompt-file FILE  the prompt is FILE's text, byte for byte (at most 16 MiB, no NUL byte); while a\n"
         "                    prompt of more than 64 tokens is prefilled the status line shows\n"
         "                    \"prefill 1024/4096 · 63 tok/s\" and every key still answers (q stops it)\n"
         "  --progress        accepted so `ahascope run --progress` works on a terminal too (the status\n"
         "                    line shows a long prefill by itself)\n"
         "  --db FILE         record each run into FILE (default ahascope.db in the current directory)\n"
         "  --no-record       record nothing\n"
         "  --mono            shading glyphs only, no colour (also when NO_COLOR is set)\n"
         "  --ascii           no UTF-8\n"
         "  --threads N       worker threads (default: all cores)\n"
         "  --attn-top K      record each head's K heaviest far positions (default 8, 0 none) so a replay\n"
         "                    shows where it looked\n"
         "  --replay          browse a recorded run without a model: --run ID (default the last)\n"
         "  --sql-timeout S   stop a `:` query after S seconds (default 10; Esc or Ctrl-C stops it sooner;\n"
         "                    results keep their first 10000 rows)\n"
         "The keys (? in the TUI lists them all):\n"
         "  space step   p play/pause   +/- speed   arrows/hjkl head   [ ] Home End token   Tab focus\n"
         "  m metric   a agreement predictor   n/N next missed/needless global   Enter inspect head\n"
         "  P policy   w/W window   t/T tau   o/O theta   (re-evaluates the tokens as a new, linked run)\n"
         "  e edit prompt   : read-only SQL   s export   v plots   R summary   D diff   B runs   q quit\n"
         "ahascope with no command opens this screen.");
    args_help_sampling();
    args_help_model();
    args_help_policy();
}

/* Show the steps the worker finished. A new run keeps the old one on
 * screen until its first step arrives, then replaces it at the same
 * position. */
static void show_steps(Tui *t, TuiTake *k) {
    Err e;
    if (k->new_run) t->new_run_pending = 1;
    if (t->new_run_pending && k->n > 0) {
        t->restore = t->m.follow ? -1 : t->m.cursor;
        view_clear_history(&t->m);
        t->new_run_pending = 0;
        t->attn_pending = 0;
        if (t->reevaluating) view_set_status(&t->m, "run %lld: %s", (long long)k->run_id, t->reevaluating_what);
        t->reevaluating = 0;
    }
    for (int i = 0; i < k->n; i++) {
        if (view_push_owned(&t->m, k->traces[i], &e)) view_set_status(&t->m, "%s", e.msg);
        t->dirty = 1;
    }
    free(k->traces);
    if (t->restore >= 0 && t->restore < t->m.n_hist) t->m.cursor = t->restore, t->m.follow = 0, t->restore = -1;
}

/* The header facts of the run on screen. */
static void show_run(Tui *t, const TuiTake *k) {
    ViewHeader *h = &t->m.hdr;
    const AttnConfig *a = &k->attn;
    if (t->new_run_pending) return; /* still showing the previous run */
    snprintf(h->policy, sizeof h->policy, "%s", aha_policy_name(a->policy));
    if (h->window != a->window || h->tau != t->cfg.tau || h->theta_logit != t->cfg.theta_logit) t->dirty = 1;
    /* thresholds that do not change execution are the UI's own (re-thresholded from stored values) */
    h->window = a->window, h->sinks = a->sinks, h->tau = t->cfg.tau, h->theta_logit = t->cfg.theta_logit;
    h->tok_s = k->tok_s;
    if (t->db && k->run_id) snprintf(h->record, sizeof h->record, "%s run %lld", t->db, (long long)k->run_id);
    else snprintf(h->record, sizeof h->record, "not recording");
}

/* A long prefill on the status line, "prefill 1024/4096 · 63 tok/s",
 * and in the (empty) token pane, redrawn ten times a second (the worker
 * runs it; keys go on being answered), then what it took once it ends. */
static void show_prefill(Tui *t, const TuiTake *k) {
    const char *dot = t->m.ascii ? "-" : "\xc2\xb7";
    double now = args_seconds(), secs = k->prefill_s;
    if (k->prefilling) {
        if (t->prefill_on && now - t->prefill_shown < 0.1) return;
        t->prefill_shown = now, t->prefill_on = 1, t->dirty = 1;
        t->m.prefill_done = k->prefill_done, t->m.prefill_total = k->prefill_total;
        t->m.prefill_tok_s = secs > 0 ? k->prefill_done / secs : 0.0;
        view_set_status(&t->m, "prefill %d/%d %s %.0f tok/s (q quits)", k->prefill_done, k->prefill_total, dot,
                        t->m.prefill_tok_s);
    } else if (t->prefill_on) {
        t->prefill_on = 0, t->dirty = 1;
        t->m.prefill_total = 0;
        if (k->prefill_done == k->prefill_total)
            view_set_status(&t->m, "prefilled %d tokens in %.1f s %s %.0f tok/s", k->prefill_total, secs, dot,
                            secs > 0 ? k->prefill_total / secs : 0.0);
        else
            view_set_status(&t->m, "prefill stopped at %d/%d", k->prefill_done, k->prefill_total);
    }
}

/* Take what the worker finished and ask for the attention the view wants. */
static void take_results(Tui *t) {
    Err e;
    if (t->replay) return;
    TuiTake k;
    tui_worker_take(&t->w, &k, t->attn_buf);
    if (t->m.busy != k.busy) t->m.busy = k.busy, t->dirty = 1;
    show_prefill(t, &k);
    show_steps(t, &k);
    if (k.attn_ready) {
        view_set_attention(&t->m, k.attn_pos, k.attn_layer, k.attn_head, t->attn_buf, k.attn_n, k.attn.window,
                           k.attn.sinks, &e);
        t->attn_pending = 0, t->dirty = 1;
    }
    if (k.message[0]) view_set_status(&t->m, "%s", k.message), t->dirty = 1;
    if (k.finished && t->playing) {
        t->playing = t->m.playing = 0;
        view_set_status(&t->m, "sequence finished");
        t->dirty = 1;
    }
    show_run(t, &k);
    int pos, l, hd;
    if (!t->attn_pending && view_attention_wanted(&t->m, &pos, &l, &hd)) {
        tui_worker_request_attention(&t->w, pos, l, hd);
        t->attn_pending = 1;
    }
}

/* Tell the worker to play or pause at the current speed. */
static void set_play(Tui *t, int playing) {
    t->playing = tui_worker_play(&t->w, playing, SPEEDS[t->speed_i]);
    t->m.playing = t->playing;
    t->m.speed = SPEEDS[t->speed_i]; /* 0: as fast as it goes */
}

static void step_once(Tui *t) {
    if (!tui_worker_step(&t->w)) view_set_status(&t->m, "sequence finished: e for a new prompt, or change a setting");
}

/* The next policy that can run on what was loaded. */
static Policy next_policy(const Tui *t, Policy p) {
    for (int i = 0; i < POLICY_COUNT; i++) {
        p = (Policy)((p + 1) % POLICY_COUNT);
        if (p == POLICY_AHA && !t->L->routers.w) continue;
        if (p == POLICY_STATIC && !t->L->static_heads) continue;
        return p;
    }
    return p;
}

/* τ or θ one step up or down (t T o O); 0 if a is neither. */
static int next_threshold(ViewAction a, float *tau, double *theta_logit) {
    switch (a) {
    case VIEW_ACT_TAU_UP: *tau = *tau + 0.05f <= 1.0f ? *tau + 0.05f : 1.0f; return 1;
    case VIEW_ACT_TAU_DOWN: *tau = *tau - 0.05f >= 0.0f ? *tau - 0.05f : 0.0f; return 1;
    case VIEW_ACT_THETA_UP: *theta_logit = decide_theta_logit(fmin(1.0, decide_prob(*theta_logit) + 0.05)); return 1;
    case VIEW_ACT_THETA_DOWN: *theta_logit = decide_theta_logit(fmax(0.0, decide_prob(*theta_logit) - 0.05)); return 1;
    default: return 0;
    }
}

/* Score the stored values of the history at new thresholds. */
static void rescore(Tui *t, float tau, double theta_logit) {
    Err e;
    t->m.hdr.tau = tau, t->m.hdr.theta_logit = theta_logit;
    if (view_stats_sync(&t->m, &e)) view_set_status(&t->m, "%s", e.msg);
    t->dirty = 1;
}

/* P w W t T o O: a changed setting re-runs the same tokens as a new run. */
static void change_setting(Tui *t, ViewAction a) {
    AttnConfig c = t->cfg;
    int seq = t->L->model.c.seq_len;
    switch (a) {
    case VIEW_ACT_CHANGE_POLICY: c.policy = next_policy(t, c.policy); break;
    case VIEW_ACT_WINDOW_UP: c.window = c.window * 2 <= seq ? c.window * 2 : seq; break;
    case VIEW_ACT_WINDOW_DOWN: c.window = c.window / 2 >= 1 ? c.window / 2 : 1; break;
    default:
        if (!next_threshold(a, &c.tau, &c.theta_logit)) return;
    }
    int trained = c.policy == POLICY_AHA && c.routers ? t->L->routers.window : 0;
    const char *note = trained > 0 && trained != c.window ? " (the routers were trained for another w)" : "";
    snprintf(t->reevaluating_what, sizeof t->reevaluating_what, "%s, w=%d, tau=%.2f, theta=%.2f%s",
             aha_policy_name(c.policy), c.window, c.tau, decide_prob(c.theta_logit), note);
    if (!memcmp(&c, &t->cfg, sizeof c)) { /* at a limit: nothing changed, nothing to record */
        view_set_status(&t->m, "unchanged: %s", t->reevaluating_what);
        return;
    }
    int same = aha_same_execution(&c, &t->cfg);
    t->cfg = c;
    if (same) { /* the same branches run: re-threshold the stored values, record nothing */
        rescore(t, c.tau, c.theta_logit);
        view_set_status(&t->m, "re-scored (policy %s runs the same): %s", aha_policy_name(c.policy),
                        t->reevaluating_what);
        return;
    }
    set_play(t, 0);
    tui_worker_restart(&t->w, &c, NULL);
    t->reevaluating = 1;
    view_set_status(&t->m, "re-evaluating under %s", t->reevaluating_what);
}

/* `:` SQL over the current database: started here, run by t->sql on a
 * thread and read-only connection of its own, taken by poll_sql. */
static void run_sql(Tui *t, const char *sql) {
    Err e;
    if (!t->db) { view_set_status(&t->m, "not recording: no database to query"); return; }
    if (tui_sql_start(&t->sql, t->db, sql, &e)) view_set_status(&t->m, "sql: %s", e.msg);
    else view_set_status(&t->m, "sql running\xe2\x80\xa6 (Esc cancels)");
    t->sql_shown = 0;
}

/* The status line's word on a finished query. */
static void sql_status(Tui *t, const TuiSqlResult *r) {
    switch (r->end) {
    case TUI_SQL_OK:
        if (r->capped) view_set_status(&t->m, "sql: first %ld rows only (the row cap), %.2f s", r->rows, r->secs);
        else view_set_status(&t->m, "sql: %ld rows, %.2f s", r->rows, r->secs);
        break;
    case TUI_SQL_CANCELLED: view_set_status(&t->m, "sql cancelled after %.2f s", r->secs); break;
    case TUI_SQL_TIMED_OUT: view_set_status(&t->m, "sql stopped by the %.3g s time limit", t->sql.time_limit); break;
    case TUI_SQL_FAILED: view_set_status(&t->m, "sql failed (see the pane)"); break;
    }
}

/* Each frame: show a running query's progress (redrawn ten times a
 * second), or hand a finished one's result to the SQL pane. */
static void poll_sql(Tui *t) {
    long rows;
    double secs;
    TuiSqlResult r;
    if (tui_sql_progress(&t->sql, &rows, &secs)) {
        if (secs - t->sql_shown < 0.1) return;
        t->sql_shown = secs;
        view_set_status(&t->m, "sql running\xe2\x80\xa6 %ld rows, %.1f s (Esc cancels)", rows, secs);
        t->dirty = 1;
    } else if (tui_sql_take(&t->sql, &r)) {
        Err e;
        view_set_sql(&t->m, r.sql, r.text ? r.text : "", &e);
        sql_status(t, &r);
        tui_sql_result_free(&r);
        t->dirty = 1;
    }
}

static int export_one(Store *st, int64_t run, StoreFormat fmt, const char *path, Err *e) {
    FileAtomic a;
    if (!file_atomic_open(&a, path, e)) return -1;
    if (store_export(st, run, fmt, a.f, e) == 0) return file_atomic_commit(&a, e);
    file_atomic_abort(&a);
    return -1;
}

/* `s`: the current run as ahascope-run<ID>.json and .csv in the current
 * directory (app_export_names: never over another run's export). */
static void export_run(Tui *t) {
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
static void show_plots(Tui *t) {
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
static void show_compare(Tui *t, int diff) {
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
static void show_runs(Tui *t) {
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

static int load_replay(Tui *t, Store *st, const StoreRunInfo *r, Err *e);
static void replay_header(Tui *t, const StoreRunInfo *r);

/* Open recorded run `id` on this screen, as a replay (a live TUI pauses and
 * leaves its run recorded as it is). The screen keeps its shape, so a run of
 * another shape is named, not opened. */
static int open_run(Tui *t, int64_t id, Err *e) {
    StoreRunInfo r;
    Store *st = store_open(t->db, STORE_READ, 2000, e);
    if (!st) return -1;
    int rc = store_run_info(st, id, &r, e);
    if (rc == 0 && (r.n_layers != t->m.n_layers || r.n_heads != t->m.n_heads))
        rc = err_set(e, "run %lld has %d\xc3\x97%d heads, this screen %d\xc3\x97%d: open it with tui --replay --run %lld",
                     (long long)id, r.n_layers, r.n_heads, t->m.n_layers, t->m.n_heads, (long long)id);
    if (rc == 0) {
        if (!t->replay) set_play(t, 0);
        t->replay = 1, t->replay_run = id, t->playing = t->m.playing = 0, t->new_run_pending = 0;
        view_clear_history(&t->m);
        rc = load_replay(t, st, &r, e);
        replay_header(t, &r);
        t->m.cursor = t->m.n_hist > 0 ? 0 : -1, t->m.follow = 0;
    }
    store_run_info_free(&r); /* zeroed first, so safe after a failure too */
    store_close(st, NULL);
    return rc;
}

/* Finish an input line: the prompt restarts, SQL runs. */
static void input_done(Tui *t) {
    if (!strcmp(t->m.input.label, "search")) { /* `/`: the next token holding the text */
        int i = view_find_token(&t->m, t->m.input.text, t->m.cursor);
        if (i < 0) view_set_status(&t->m, "no token holds \"%s\"", t->m.input.text);
        else t->m.cursor = i, t->m.follow = 0, view_set_status(&t->m, "\"%s\" at pos %d", t->m.input.text, i);
        return;
    }
    if (!strcmp(t->m.input.label, "open run")) {
        Err e;
        char *end;
        long long id = strtoll(t->m.input.text, &end, 10);
        if (end == t->m.input.text || *end || id <= 0) view_set_status(&t->m, "not a run id: \"%s\"", t->m.input.text);
        else if (open_run(t, id, &e)) view_set_status(&t->m, "%s", e.msg);
        else view_set_status(&t->m, "replay of run %lld: [ ] Home End move, p plays, B another run", id);
        return;
    }
    if (!strcmp(t->m.input.label, "prompt")) {
        char *p = strdup(t->m.input.text);
        if (!p) { view_set_status(&t->m, "prompt: out of memory for %zu bytes", t->m.input.len); return; }
        free(t->prompt);
        t->prompt = p;
        set_play(t, 0);
        t->m.cursor = -1;
        t->m.follow = 1;
        tui_worker_restart(&t->w, &t->cfg, t->prompt);
    } else {
        run_sql(t, t->m.input.text);
    }
}

/* Replay: the keys that need no engine. Returns 1 to quit. */
static int replay_key(Tui *t, ViewAction a) {
    switch (a) {
    case VIEW_ACT_QUIT: return 1;
    case VIEW_ACT_STEP: view_set_status(&t->m, "end of the recorded run ([ or Home to go back)"); break;
    case VIEW_ACT_PLAY_TOGGLE: /* play the recording: the cursor moves on at the play speed */
        t->playing = t->m.playing = !t->playing;
        if (t->playing && t->m.cursor >= t->m.n_hist - 1) t->m.cursor = 0; /* from the start, at the end */
        t->m.follow = 0, t->m.speed = SPEEDS[t->speed_i], t->replay_next = 0;
        break;
    case VIEW_ACT_SPEED_UP: case VIEW_ACT_SPEED_DOWN:
        t->speed_i = a == VIEW_ACT_SPEED_UP ? (t->speed_i + 1 < N_SPEEDS ? t->speed_i + 1 : t->speed_i)
                                            : (t->speed_i > 0 ? t->speed_i - 1 : 0);
        t->m.speed = SPEEDS[t->speed_i];
        break;
    case VIEW_ACT_SQL_PROMPT: view_input_begin(&t->m, "sql", ""); break;
    case VIEW_ACT_EXPORT: export_run(t); break;
    case VIEW_ACT_PLOTS: show_plots(t); break;
    case VIEW_ACT_SUMMARY: case VIEW_ACT_DIFF: show_compare(t, a == VIEW_ACT_DIFF); break;
    case VIEW_ACT_RUNS: show_runs(t); break;
    case VIEW_ACT_REDRAW: clearok(curscr, TRUE); break;
    case VIEW_ACT_NONE: case VIEW_ACT_MOUSE: break;
    default: {
        float tau = t->m.hdr.tau;
        double theta = t->m.hdr.theta_logit;
        if (next_threshold(a, &tau, &theta)) { /* scores and masses are stored: re-threshold them */
            rescore(t, tau, theta);
            view_set_status(&t->m, "replay re-scored at tau %.2f, theta %.2f (the recorded gates stay)", tau,
                            decide_prob(theta));
            break;
        }
        view_set_status(&t->m, "replay of run %lld: stepping, the policy and the window need the model (run without"
                               " --replay)", (long long)t->replay_run);
    }
    }
    return 0;
}

/* Act on one key; returns 1 to quit. */
static int handle_key(Tui *t, int ch) {
    if (!t->m.input.active && ch == 27 && tui_sql_cancel(&t->sql)) { /* Esc stops a query before closing panes */
        view_set_status(&t->m, "sql cancelling\xe2\x80\xa6");
        return 0;
    }
    if (t->m.input.active) {
        if (view_input_key(&t->m, ch) == VIEW_INPUT_DONE) input_done(t);
        return 0;
    }
    ViewAction a = view_key(&t->m, ch);
    if (a == VIEW_ACT_MOUSE) {
        MEVENT ev;
        a = getmouse(&ev) == OK ? view_mouse(&t->m, &t->scr.lay, ev.x, ev.y, view_mouse_kind(ev.bstate)) : VIEW_ACT_NONE;
    }
    if (t->replay) return replay_key(t, a);
    switch (a) {
    case VIEW_ACT_QUIT: return 1;
    case VIEW_ACT_STEP: step_once(t); break;
    case VIEW_ACT_PLAY_TOGGLE: set_play(t, !t->playing); break;
    case VIEW_ACT_SPEED_UP: t->speed_i = t->speed_i + 1 < N_SPEEDS ? t->speed_i + 1 : t->speed_i; set_play(t, t->playing); break;
    case VIEW_ACT_SPEED_DOWN: t->speed_i = t->speed_i > 0 ? t->speed_i - 1 : 0; set_play(t, t->playing); break;
    case VIEW_ACT_EDIT_PROMPT: view_input_begin(&t->m, "prompt", t->prompt); break;
    case VIEW_ACT_SQL_PROMPT: view_input_begin(&t->m, "sql", ""); break;
    case VIEW_ACT_EXPORT: export_run(t); break;
    case VIEW_ACT_PLOTS: show_plots(t); break;
    case VIEW_ACT_SUMMARY: case VIEW_ACT_DIFF: show_compare(t, a == VIEW_ACT_DIFF); break;
    case VIEW_ACT_RUNS: show_runs(t); break;
    case VIEW_ACT_REDRAW: clearok(curscr, TRUE); break;
    default: change_setting(t, a); break;
    }
    return 0;
}

static void curses_start(Tui *t, int mono, int ascii) {
    signal(SIGWINCH, on_winch);
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    timeout(20);
    mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    /* tmux and screen send Home and End as these whatever TERM says; where
     * the terminal description lacks them, the sequence would arrive split,
     * and its Esc would close the editor and lose the line being edited. */
    define_key("\033[1~", KEY_HOME);
    define_key("\033[4~", KEY_END);
    t->m.ascii = ascii || strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
    t->m.mono = mono || (getenv("NO_COLOR") && *getenv("NO_COLOR"));
    t->m.colour = view_colour_detect(mono);
}

/* A playing replay: the cursor moves on one position per 1/speed seconds,
 * and stops at the end of the recording. */
static void replay_advance(Tui *t) {
    double now = args_seconds();
    if (now < t->replay_next) return;
    double speed = SPEEDS[t->speed_i];
    t->replay_next = now + (speed > 0 ? 1.0 / speed : 0);
    if (t->m.cursor + 1 < t->m.n_hist) {
        t->m.cursor++;
        t->dirty = 1;
        return;
    }
    t->playing = t->m.playing = 0;
    view_set_status(&t->m, "end of the recorded run");
    t->dirty = 1;
}

/* The UI loop: results in, one frame out, one key (or 20 ms) at a time. */
static void ui_loop(Tui *t) {
    Err e;
    t->dirty = 1;
    for (;;) {
        if (g_quit) break;
        if (g_interrupt) {
            g_interrupt = 0;
            if (!tui_sql_cancel(&t->sql)) break;
        }
        if (g_winch) g_winch = 0, follow_resize(), t->dirty = 1;
        take_results(t);
        if (t->replay && t->playing) replay_advance(t);
        poll_sql(t);
        if (t->dirty) {
            if (view_frame(&t->scr, &t->m, &e)) break;
            view_sql_fit(&t->m, &t->scr.lay); /* PgDn pages by what this frame showed */
            t->dirty = view_help_fit(&t->m, &t->scr.lay); /* the help too; hints for a new size redraw */
        }
        int ch = getch();
        if (ch == ERR) continue;
        t->dirty = 1;
        if (ch == KEY_RESIZE) { /* resizeterm's own notice */
            clearok(curscr, TRUE);
            continue;
        }
        /* the "enlarge" screen shows nothing to act on: only quit and redraw work there */
        if (t->scr.lay.too_small && ch != 'q' && ch != 'Q' && ch != 12) continue;
        if (handle_key(t, ch)) break;
    }
}

/* Load every recorded step of run `id` into the view model. */
static int load_replay(Tui *t, Store *st, const StoreRunInfo *r, Err *e) {
    enum { CHUNK = 64 };
    StepTrace *buf[CHUNK];
    int k = store_run_attn_top(st, r->run_id, e), rc = k < 0 ? -1 : 0;
    for (int i = 0; i < CHUNK; i++) buf[i] = NULL;
    for (int i = 0; i < CHUNK && rc == 0; i++)
        if (!(buf[i] = trace_new_top(r->n_layers, r->n_heads, k)))
            rc = err_set(e, "%s: out of memory for run %lld (%d layers x %d heads)", t->db, (long long)r->run_id,
                         r->n_layers, r->n_heads);
    for (int pos = 0; rc == 0;) {
        int n = store_read_steps(st, r->run_id, pos, CHUNK, buf, e);
        if (n < 0) rc = -1;
        for (int i = 0; i < n && rc == 0; i++) rc = view_push(&t->m, buf[i], e);
        if (n < CHUNK) break;
        pos += n;
    }
    for (int i = 0; i < CHUNK; i++) trace_free(buf[i]);
    return rc;
}

static void replay_header(Tui *t, const StoreRunInfo *r) {
    ViewHeader *h = &t->m.hdr;
    const char *slash = strrchr(r->model, '/');
    snprintf(h->model, sizeof h->model, "%.95s", slash ? slash + 1 : r->model);
    snprintf(h->policy, sizeof h->policy, "%s", r->policy);
    snprintf(h->record, sizeof h->record, "replay %.100s run %lld", t->db, (long long)r->run_id);
    h->window = r->window, h->sinks = r->sinks, h->tau = (float)r->tau, h->theta_logit = r->theta_logit;
    h->ctx_len = r->seq_len;
    h->tok_s = 0;
}

/* `--replay`: browse a recorded run (the last one by default) without a model. */
static int run_replay(const char *db, int64_t run, int mono, int ascii, double sql_timeout, Err *e) {
    static Tui t;
    memset(&t, 0, sizeof t);
    t.replay = 1, t.db = db, t.restore = -1;
    t.speed_i = 4; /* 10 positions a second when played */
    t.sql.time_limit = sql_timeout;
    Store *st = store_open(db, STORE_READ, 2000, e);
    if (!st) return -1;
    int64_t *ids = NULL;
    int n = run > 0 ? 0 : store_run_ids(st, &ids, e);
    if (run <= 0 && n > 0) run = ids[n - 1];
    free(ids);
    StoreRunInfo r;
    int rc = -1;
    if (n < 0 || (run <= 0 && err_set(e, "%s: no runs recorded", db)) || store_run_info(st, run, &r, e)) {
        store_close(st, NULL);
        return -1;
    }
    t.replay_run = run;
    if (view_init(&t.m, r.n_layers, r.n_heads, e) == 0 && load_replay(&t, st, &r, e) == 0) {
        replay_header(&t, &r);
        store_close(st, NULL);
        st = NULL;
        view_set_status(&t.m, "replay of run %lld (%s): [ ] Home End move through its %d positions", (long long)run,
                        r.status, t.m.n_hist);
        signal(SIGINT, on_quit);
        signal(SIGTERM, on_quit);
        curses_start(&t, mono, ascii);
        if (view_screen_init(&t.scr, &t.m, e) == 0) {
            ui_loop(&t);
            rc = 0;
            view_screen_free(&t.scr);
        }
        endwin();
        tui_sql_stop(&t.sql);
    }
    store_close(st, NULL);
    store_run_info_free(&r);
    view_free(&t.m);
    return rc;
}

static int run_tui(RunOpts *o, const char *db, int mono, int ascii, int threads, int attn_top, double sql_timeout,
                   Err *e) {
    static Tui t; /* large; one per process */
    AppLoaded L;
    int rc = -1;
    memset(&t, 0, sizeof t);
    t.sql.time_limit = sql_timeout;
    o->attn.profile = 1;
    /* With no policy or routers asked for, the demo runs AHA on the shipped
     * routers when the model has some (stories260K, w = 16: about a quarter
     * of the heads go global, so there is something to see). */
    static char routers[1100];
    char model[1024];
    if (!o->routers && !o->have_policy && !o->have_window &&
        app_model_path(o->model, model, sizeof model, NULL) == 0 && /* --model stories260K: its routers too */
        app_default_routers(model, routers, sizeof routers) == 0)
        o->routers = routers;
    if (app_load(o, &L, 1, e)) goto out;
    t.L = &L;
    t.db = db;
    t.speed_i = 4;
    t.restore = -1;
    if (!o->prompt) o->prompt = "Once upon a time";
    if (!(t.prompt = strdup(o->prompt))) { err_set(e, "out of memory for the prompt"); goto out; }
    if (view_init(&t.m, L.model.c.n_layers, L.model.c.n_heads, e)) goto out;
    TuiWorker *w = &t.w;
    w->model = &L.model, w->tok = &L.tok, w->steps = o->steps, w->steps_given = o->have_steps, w->threads = threads, w->attn_top = attn_top;
    w->temperature = o->temperature, w->topp = o->topp, w->seed = o->seed;
    if (app_run_info(o, &L, &w->info, e)) goto out_view;
    if (db && !(w->store = store_open(db, STORE_WRITE, 2000, e))) goto out_view;
    const char *slash = strrchr(L.model_path, '/');
    snprintf(t.m.hdr.model, sizeof t.m.hdr.model, "%.95s", slash ? slash + 1 : L.model_path);
    t.m.hdr.ctx_len = L.model.c.seq_len;
    t.m.hdr.weight_bytes = (double)model_decode_bytes(&L.model.c);
    t.m.hdr.kv_bytes_per_pos = (double)cost_kv_bytes(&L.model.c, 1);
    t.cfg = o->attn;
    if (!(t.attn_buf = malloc((size_t)L.model.c.seq_len * sizeof *t.attn_buf))) { err_set(e, "out of memory"); goto out_view; }
    if (tui_worker_start(w, &o->attn, o->prompt, e)) { store_close(w->store, NULL); goto out_view; }
    if (L.warning[0]) view_set_status(&t.m, "warning: %s", L.warning);
    signal(SIGINT, on_quit);
    signal(SIGTERM, on_quit);
    curses_start(&t, mono, ascii);
    if (view_screen_init(&t.scr, &t.m, e) == 0) {
        ui_loop(&t);
        rc = 0;
        view_screen_free(&t.scr);
    }
    endwin();
    tui_sql_stop(&t.sql);
    tui_worker_stop(w);
out_view:
    free(t.attn_buf);
    view_free(&t.m);
out:
    free(t.prompt);
    app_unload(&L);
    return rc;
}

int cmd_tui(int argc, char **argv) {
    RunOpts o;
    runopts_defaults(&o);
    Args a = {argc, argv, 1};
    Err e;
    const char *db = "ahascope.db";
    int mono = 0, ascii = 0, replay = 0;
    long threads = pool_default_threads(), run = 0, attn_top = VIEW_ATTN_TOP;
    double sql_timeout = TUI_SQL_TIME_LIMIT;
    while (a.i < argc) {
        const char *f = argv[a.i];
        if (args_is_help(f)) { tui_help(); return 0; }
        int r = runopts_parse(&o, &a, &e);
        if (r < 0) return args_fail(&e);
        if (r > 0) continue;
        a.i++;
        if (!strcmp(f, "--mono")) mono = 1;
        else if (!strcmp(f, "--ascii")) ascii = 1;
        else if (!strcmp(f, "--no-record")) db = NULL;
        else if (!strcmp(f, "--progress")) continue; /* `run` hands generate's flags here on a terminal */
        else if (!strcmp(f, "--replay")) replay = 1;
        else if (!strcmp(f, "--run")) {
            const char *v = args_value(&a, &e);
            if (!v || args_int(f, v, 1, 1L << 62, &run, &e)) return args_fail(&e);
        }
        else if (!strcmp(f, "--sql-timeout")) {
            const char *v = args_value(&a, &e);
            if (!v || args_float(f, v, 0.01, 86400, &sql_timeout, &e)) return args_fail(&e);
        }
        else if (!strcmp(f, "--db")) { if (!(db = args_value(&a, &e))) return args_fail(&e); }
        else if (!strcmp(f, "--threads")) {
            const char *v = args_value(&a, &e);
            if (!v || args_int(f, v, 1, 64, &threads, &e)) return args_fail(&e);
        } else if (!strcmp(f, "--attn-top")) {
            const char *v = args_value(&a, &e);
            if (!v || args_int(f, v, 0, TRACE_TOP_MAX, &attn_top, &e)) return args_fail(&e);
        } else {
            args_unknown(f, &e);
            return args_fail(&e);
        }
    }
    if (replay && !db) { err_usage(&e, "--replay needs --db FILE"); return args_fail(&e); }
    if (!replay && run) { err_usage(&e, "--run ID goes with --replay"); return args_fail(&e); }
    if (!replay && runopts_check(&o, &e)) return args_fail(&e);
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        err_set(&e, "needs a terminal on stdin and stdout (for headless runs use 'ahascope record')");
        return args_fail(&e);
    }
    setlocale(LC_ALL, "");
    if (replay) return run_replay(db, run, mono, ascii, sql_timeout, &e) == 0 ? 0 : args_fail(&e);
    return run_tui(&o, db, mono, ascii, (int)threads, (int)attn_top, sql_timeout, &e) == 0 ? 0 : args_fail(&e);
}
