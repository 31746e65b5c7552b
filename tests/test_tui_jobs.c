/* test_tui_jobs.c — the TUI never waits for a read of a whole run.
 *
 * The TUI never waits for a read of a whole run: on a
 * large run synthesised straight into the database (no model), opening it,
 * `R`, `D`, `v`, `B` and re-scoring at a new tau compute off the UI thread
 * (or a slice a frame) while keys are answered at once, show their
 * progress, and stop on Esc; the key waits are measured and printed. A run
 * of 4000 positions also shows whole in the timeline, in bins.
 *
 * The TUI runs through tests/tmux.h, on `tui --replay` instead of on a model. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "test.h"
#include "tests/store_fixture.h"
#include "tests/tmux.h"

/* The shape people open: 16 layers x 32 heads, two thousand positions;
 * the long test's run is twice that. */
enum { L = 16, H = 32, N_PARENT = 2000, N_CHILD = 1124, N_LONG = 4000, N_LONG_CHILD = 1000, WINDOW = 16 };

/* Seconds a key may take to show, tmux's own round trip included (send-keys
 * and capture-pane are processes of their own: 20-60 ms with nothing
 * running). The median over a test's presses is held to KEY_WAIT_MEDIAN;
 * any one press to KEY_WAIT_WORST, for the machine's bad moments (400 ms
 * seen with the sanitizer suite beside it). The UI blocked on the read took
 * over 5 s, so both still tell the two apart; the waits are printed. */
#define KEY_WAIT_MEDIAN 0.25
#define KEY_WAIT_WORST (1.0 * tmux_patience())

/* The waits a test measured, for their median. */
typedef struct {
    double v[64];
    int n;
    double worst;
} Waits;

static double waits_median(const Waits *w) {
    double s[64];
    int n = w->n;
    memcpy(s, w->v, sizeof s);
    for (int i = 1; i < n; i++) /* insertion sort: a few dozen values */
        for (int k = i; k > 0 && s[k - 1] > s[k]; k--) {
            double x = s[k];
            s[k] = s[k - 1], s[k - 1] = x;
        }
    return n ? (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : 0;
}

/* Seconds until the screen shows text (gone: until it no longer does),
 * polled as fast as tmux answers; -1 after secs. */
static double screen_wait(Tmux *t, const char *text, int gone, double secs) {
    double t0 = clock_now();
    for (;;) {
        char *s = tmux_capture(t);
        int found = s && strstr(s, text);
        double dt = clock_now() - t0;
        if (found != gone) {
            free(s);
            return dt;
        }
        if (dt > secs) {
            fprintf(stderr, "--- waited %s '%s', screen was:\n%s---\n", gone ? "for the end of" : "for", text,
                    s ? s : "");
            free(s);
            return -1;
        }
        free(s);
        usleep(5000);
    }
}

/* Wait until the screen shows a or b; 1 if it did within secs. */
static int wait_either(Tmux *t, const char *a, const char *b, double secs) {
    for (double end = clock_now() + secs; clock_now() < end; usleep(10000)) {
        char *s = tmux_capture(t);
        int found = s && (strstr(s, a) || strstr(s, b));
        free(s);
        if (found) return 1;
    }
    char *s = tmux_capture(t);
    fprintf(stderr, "--- waited for '%s' or '%s', screen was:\n%s---\n", a, b, s ? s : "");
    free(s);
    return 0;
}

#define WAIT(t, text, secs)                                                           \
    do {                                                                              \
        if (screen_wait(t, text, 0, secs) < 0) {                                      \
            test_fail(__FILE__, __LINE__, "screen never showed '%s'", text);          \
            tmux_stop(t);                                                             \
            return;                                                                   \
        }                                                                             \
    } while (0)

/* Press keys and time how long the screen takes to show (or drop) text;
 * the wait is kept in w (a miss counts as 5 s). */
static double key_wait(Tmux *t, const char *keys, const char *text, int gone, Waits *w) {
    double t0 = clock_now();
    tmux_keys(t, keys);
    double dt = screen_wait(t, text, gone, 5) < 0 ? 5 : clock_now() - t0; /* send-keys and capture included */
    if (dt > w->worst) w->worst = dt;
    if (w->n < 64) w->v[w->n++] = dt;
    return dt < 5 ? dt : -1;
}

#define HELP_TEXT "this help; redraw the screen"

/* `?` opens the help and any key closes it, each answered in time. */
#define HELP_ROUND_TRIP(t, w, when)                                                                   \
    do {                                                                                              \
        double dt_ = key_wait(t, "?", HELP_TEXT, 0, w);                                               \
        CHECK_MSG(dt_ >= 0 && dt_ <= KEY_WAIT_WORST, "? %s answered in %.3f s", when, dt_);           \
        dt_ = key_wait(t, "x", HELP_TEXT, 1, w);                                                      \
        CHECK_MSG(dt_ >= 0 && dt_ <= KEY_WAIT_WORST, "closing the help %s took %.3f s", when, dt_);   \
    } while (0)

/* A step of random-looking gates and oracle values on every head. */
static void fill_step(StepTrace *t, int pos, unsigned salt) {
    unsigned x = (unsigned)pos * 2654435761u + salt;
    t->pos = pos, t->token = 5 + pos % 300, t->is_prompt = pos < 8;
    snprintf(t->piece, sizeof t->piece, " t%d", pos % 300);
    t->logprob = pos ? -1.5f : NAN, t->entropy = 2, t->step_us = 100;
    t->n_far = pos >= WINDOW ? pos - WINDOW + 1 : 0, t->n_kv_heads = H;
    for (int i = 0; i < L * H; i++) {
        x = x * 1103515245u + 12345u;
        t->gate[i] = (int8_t)(x >> 16 & 1);
        t->score[i] = (float)(x >> 8 & 255) / 255.0f;
        t->oracle_logit[i] = (float)(x >> 4 & 15) - 7.5f;
        t->keys_read[i] = t->gate[i] ? pos + 1 : (pos + 1 < WINDOW ? pos + 1 : WINDOW);
    }
}

/* Write n positions of a run of `steps` (its parent, or 0) in batches;
 * left 'running' (this process is its live writer) unless done. */
static int64_t write_run(Store *s, int64_t parent, int n, int steps, unsigned salt, int done) {
    Err e;
    StoreRunInfo r;
    memset(&r, 0, sizeof r);
    snprintf(r.model, sizeof r.model, "synthetic-16x32");
    r.program_version = "test";
    snprintf(r.policy, sizeof r.policy, "aha");
    r.n_layers = L, r.n_heads = H, r.n_kv_heads = H, r.seq_len = 4096, r.window = WINDOW, r.steps = steps;
    r.tau = 0.5, r.theta_logit = -2.2, r.profile = 1, r.parent_run_id = parent, r.prompt = "synthetic";
    if (store_run_begin(s, &r, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return 0; }
    StepTrace *t = trace_new(L, H);
    for (int pos = 0; t && pos < n; pos++) {
        fill_step(t, pos, salt);
        if (store_write_step(s, r.run_id, t, NULL, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); break; }
    }
    trace_free(t);
    if (store_flush(s, &e)) test_fail(__FILE__, __LINE__, "%s", e.msg);
    if (done && store_run_end(s, r.run_id, "done", &e)) test_fail(__FILE__, __LINE__, "%s", e.msg);
    return r.run_id;
}

/* The database: run 1 of n_parent positions, done; run 2 re-evaluating
 * it, n_child positions in, done when child_done, else still running
 * (the returned writer must then stay open). */
static Store *big_db(const char *path, int n_parent, int n_child, int child_done) {
    Err e;
    test_db_fresh(path);
    Store *s = store_open(path, STORE_WRITE, 2000, &e);
    if (!s) { test_fail(__FILE__, __LINE__, "%s", e.msg); return NULL; }
    store_set_commit_every(s, 200);
    double t0 = clock_now();
    int64_t parent = write_run(s, 0, n_parent, n_parent, 1, 1);
    write_run(s, parent, n_child, n_parent, 2, child_done);
    fprintf(stderr, "    synthesised %d decisions in %.1f s\n", (n_parent + n_child) * L * H, clock_now() - t0);
    return s;
}

TEST(tui_jobs_keys_answered_while_a_large_run_is_summarised_and_diffed) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    const char *dir = test_tmp("jobs");
    int st;
    free(test_runf(&st, "mkdir -p %s", dir));
    char db[1100], cmd[2400];
    snprintf(db, sizeof db, "%s/big.db", dir);
    Store *writer = big_db(db, N_PARENT, N_CHILD, 0); /* kept open: run 2's writer stays alive */
    if (!writer) return;
    Tmux t;
    snprintf(cmd, sizeof cmd, "%s tui --replay --db %s --run 2", test_bin_abs(), db);
    CHECK_INT(tmux_open(&t, "jobs", dir, 140, 45, NULL, cmd, 0), 0);
    WAIT(&t, "replay of run 2", 60);
    Waits w = {0};
    double dt;

    /* R, then at once ? : the help shows while the summary computes */
    tmux_keys(&t, "R");
    HELP_ROUND_TRIP(&t, &w, "after R");
    CHECK(wait_either(&t, "computing the run summary", "run 2 summary", 2)); /* the progress line, or the result */

    /* D replaces R; the same keys, answered as fast */
    tmux_keys(&t, "D");
    HELP_ROUND_TRIP(&t, &w, "after D");
    /* the D pane has the focus (its arrows scroll it): go to L1 H0 instead */
    dt = key_wait(&t, "G 1.0 Enter", "\xc2\xb7 L1 H0", 0, &w);
    CHECK_MSG(dt >= 0 && dt <= KEY_WAIT_WORST, "go to L1 H0 after D answered in %.3f s", dt);
    CHECK(wait_either(&t, "computing the diff with the parent run", "diff over positions 0-1123", 2));
    char *s = tmux_capture(&t);
    int computing = s && strstr(s, "computing the diff with the parent run");
    free(s);
    if (computing) { /* Esc stops it, unless it ends between the look and the key */
        double t0 = clock_now();
        tmux_keys(&t, "Escape");
        int ok = wait_either(&t, "the diff with the parent run cancelled after", "diff over positions 0-1123", 5);
        dt = clock_now() - t0;
        if (dt > w.worst) w.worst = dt;
        CHECK_MSG(ok && dt <= KEY_WAIT_WORST, "Esc answered in %.3f s", dt);
    }

    /* v: the per-head rates are read back from the database off the UI thread too */
    tmux_keys(&t, "v");
    dt = key_wait(&t, "?", HELP_TEXT, 0, &w);
    CHECK_MSG(dt >= 0 && dt <= KEY_WAIT_WORST, "? after v answered in %.3f s", dt);
    tmux_keys(&t, "x");
    WAIT(&t, "decided positions (of 1124)", 60);

    /* B: the run list says run 2 is still being written */
    tmux_keys(&t, "B");
    WAIT(&t, "run 2 is being written: 1124 of 2000 positions", 30);
    WAIT(&t, "open run:", 5);
    tmux_keys(&t, "Escape");

    /* D to the end: the diff covers the positions both runs have, and says so */
    tmux_keys(&t, "D");
    WAIT(&t, "computing the diff with the parent run", 5);
    WAIT(&t, "diff over positions 0-1123: run 2 is still being written", 600);

    /* B, then open run 1: its 2000 positions load off the UI thread too */
    tmux_keys(&t, "B");
    WAIT(&t, "open run:", 30);
    tmux_keys(&t, "1 Enter");
    dt = key_wait(&t, "?", HELP_TEXT, 0, &w);
    CHECK_MSG(dt >= 0 && dt <= KEY_WAIT_WORST, "? while run 1 loads answered in %.3f s", dt);
    tmux_keys(&t, "x");
    WAIT(&t, "replay of run 1", 60);
    WAIT(&t, "pos 0/4096", 5);
    fprintf(stderr, "    key wait over %d presses: median %.0f ms, longest %.0f ms\n", w.n, waits_median(&w) * 1e3,
            w.worst * 1e3);
    CHECK_MSG(waits_median(&w) <= KEY_WAIT_MEDIAN, "median key wait %.3f s", waits_median(&w));
    CHECK_MSG(w.worst <= KEY_WAIT_WORST, "longest key wait %.3f s", w.worst);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
    store_close(writer, NULL);
}

/* Does the screen show text now? */
static int shows_now(Tmux *t, const char *text) {
    char *s = tmux_capture(t);
    int found = s && strstr(s, text);
    free(s);
    return found;
}

/* A run twice as long (2 M decisions) and a finished child of a quarter of
 * it: `tui --replay` draws its first frame at once and fills in ("loading
 * run 1: X of 4000 positions"), keys are answered while it loads, while R
 * summarises it and while D diffs the child against it, Esc stops each,
 * and a new tau re-scores the whole run. The timeline shows the run whole,
 * 32 positions a column, the cursor still moving one at a time. The key
 * waits with nothing running are measured too, to set those under load
 * beside tmux's own round trip. */
TEST(tui_jobs_long_run_loads_and_answers_keys_while_jobs_run) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    const char *dir = test_tmp("jobs_long");
    int st;
    free(test_runf(&st, "mkdir -p %s", dir));
    char db[1100], cmd[2400];
    snprintf(db, sizeof db, "%s/long.db", dir);
    Store *writer = big_db(db, N_LONG, N_LONG_CHILD, 1);
    if (!writer || store_close(writer, NULL)) return;
    Tmux t;
    snprintf(cmd, sizeof cmd, "%s tui --replay --db %s --run 1", test_bin_abs(), db);
    double t0 = clock_now();
    CHECK_INT(tmux_open(&t, "jobs_long", dir, 140, 45, NULL, cmd, 0), 0);
    /* the first frame, at once: the run's row and its first positions, the rest coming */
    WAIT(&t, "loading run 1:", 5);
    double first = clock_now() - t0;
    fprintf(stderr, "    first frame after %.0f ms\n", first * 1e3);
    CHECK_MSG(first < 3 * tmux_patience(), "the first frame took %.1f s", first);
    CHECK(shows_now(&t, "of 4000 positions"));
    Waits load = {0}, idle = {0}, busy = {0};
    HELP_ROUND_TRIP(&t, &load, "while the run loads");
    /* What a key says stays over the load's progress line, which is redrawn
     * ten times a second, until the next key; then the progress shows again.
     * (It once overwrote the key's word within 0.1 s.) */
    int loading = shows_now(&t, "loading run 1:");
    tmux_keys(&t, "x");
    WAIT(&t, "pinned L0 H0", 2);
    usleep(400 * 1000);
    char *now = tmux_capture(&t);
    CHECK_MSG(now && strstr(now, "pinned L0 H0"), "x's word was gone 0.4 s after it showed (loading: %d):\n%s",
              loading, now ? now : "");
    free(now);
    tmux_keys(&t, "x");
    WAIT(&t, "unpinned L0 H0", 2);
    HELP_ROUND_TRIP(&t, &load, "while the run loads");
    /* a finished load does not talk over a key's word: it has its own only
     * if it ended after the help closed, and then the timeline shows it whole */
    if (!shows_now(&t, "loading run 1:") && !shows_now(&t, "replay of run 1 (done)"))
        fprintf(stderr, "    note: the load ended while x's word showed\n");
    else {
        WAIT(&t, "replay of run 1 (done)", 60);
        WAIT(&t, "its 4000 positions", 1);
    }
    /* the whole run in the timeline, 32 positions a column; the token pane names what it shows */
    WAIT(&t, "pos 0-3999 of 4000 \xc2\xb7 1 col = 32 pos (mean)", 1);
    char *scr = tmux_capture(&t);
    const char *range = scr ? strstr(scr, "generated \xc2\xb7 pos ") : NULL;
    int a = -1, b = -1;
    /* no multibyte character in the format: under the C.UTF-8 locale other
     * tests set, sscanf matches none */
    const char *nums = range ? strstr(range, " pos ") : NULL;
    CHECK_MSG(nums && sscanf(nums, " pos %d-%d of 4000", &a, &b) == 2 && b == 3999 && a > 0,
              "token pane title: %.80s", range ? range : "(none)");
    free(scr);
    /* the cursor moves a position at a time, PgUp a column's worth */
    WAIT(&t, "pos 3999/4096", 1);
    tmux_keys(&t, "PPage");
    WAIT(&t, "pos 3967/4096", 2);
    tmux_keys(&t, "]");
    WAIT(&t, "pos 3968/4096", 2);
    for (int i = 0; i < 5; i++) HELP_ROUND_TRIP(&t, &idle, "with nothing running");

    /* R over its 2 M decisions, and D of the child (opened from B) against it:
     * keys answered meanwhile, Esc stops each */
    const char *keys[2] = {"R", "D"}, *what[2] = {"the run summary", "the diff with the parent run"};
    const char *finished[2] = {"run 1 summary", "run 2 vs its parent 1"};
    for (int k = 0; k < 2; k++) {
        char computing[80], cancelled[96];
        snprintf(computing, sizeof computing, "computing %s", what[k]);
        snprintf(cancelled, sizeof cancelled, "%s cancelled after", what[k]);
        if (k == 1) { /* the child, from the run browser */
            tmux_keys(&t, "B");
            WAIT(&t, "open run:", 30);
            tmux_keys(&t, "2 Enter");
            WAIT(&t, "replay of run 2: ", 30);
        }
        tmux_keys(&t, keys[k]);
        WAIT(&t, computing, 2);
        for (int i = 0; i < 4; i++) HELP_ROUND_TRIP(&t, &busy, k == 0 ? "while R computes" : "while D computes");
        if (shows_now(&t, computing)) {
            /* the job may end between the look and the key (the summary reads
             * the stored totals in milliseconds): its result answers too */
            double t0 = clock_now();
            tmux_keys(&t, "Escape");
            int ok = wait_either(&t, cancelled, finished[k], 5);
            double dt = clock_now() - t0;
            if (dt > busy.worst) busy.worst = dt;
            CHECK_MSG(ok && dt <= KEY_WAIT_WORST, "Esc stopping %s answered in %.3f s", what[k], dt);
        } else fprintf(stderr, "    note: %s finished before Esc\n", what[k]);
    }

    /* t: tau one step down re-scores every recorded decision, a slice a frame */
    tmux_keys(&t, "t");
    /* its own status line, unless a diff that finished just before Esc
     * posts its line after it: then the header's new tau, and no re-scoring
     * progress line left, say it is done */
    int rescored = screen_wait(&t, "replay re-scored at tau 0.45", 0, 60) >= 0 ||
                   (shows_now(&t, "run 2 vs its parent 1") && !shows_now(&t, "re-scoring at tau"));
    CHECK_MSG(rescored, "the re-score at tau 0.45 never finished");
    WAIT(&t, "\xcf\x84 0.45", 1);

    double mi = waits_median(&idle), mb = waits_median(&busy), ml = waits_median(&load);
    fprintf(stderr, "    key wait medians: idle %.0f ms, loading %.0f ms, R/D computing %.0f ms (+%.0f ms over idle);"
            " longest %.0f ms\n", mi * 1e3, ml * 1e3, mb * 1e3, (mb - mi) * 1e3, busy.worst * 1e3);
    CHECK_MSG(mb <= KEY_WAIT_MEDIAN, "median key wait while R/D compute %.3f s", mb);
    CHECK_MSG(busy.worst <= KEY_WAIT_WORST, "longest key wait while R/D compute %.3f s", busy.worst);
    tmux_keys(&t, "q q"); /* the diff pane open: the first closes it, the second quits */
    WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}
