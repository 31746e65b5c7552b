/* test_tui.c — the TUI end to end, driven through tmux: keys in, screen
 * text out (capture-pane), database checked afterwards. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

typedef struct {
    char sock[64];   /* a tmux server of our own, so tests never touch the user's */
    char dir[1024];  /* working directory of the TUI */
} Tmux;

static const char *bin_abs(void) {
    static char path[1100];
    const char *b = getenv("AHASCOPE_BIN");
    if (!b) b = "./ahascope";
    if (b[0] == '/') return b;
    char cwd[1024];
    if (!getcwd(cwd, sizeof cwd)) return b;
    snprintf(path, sizeof path, "%s/%s", cwd, b);
    return path;
}

/* The model by absolute path: the TUI runs in its own directory. */
static const char *model_abs(void) {
    static char path[4096];
    if (!realpath(test_shared("models/stories260K/stories260K.bin"), path)) return "missing-model";
    return path;
}


static int have_tmux(void) {
    int st;
    free(test_runf(&st, "command -v tmux >/dev/null 2>&1"));
    return st == 0;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Start the TUI (extra flags, environment) in a cols×rows tmux pane. When
 * it exits the pane prints "EXITED <status>" and stays, so tests can see it.
 * The short sleep first: a pane tmux has just created may still be cleared
 * by tmux itself after a program has drawn in it. */
static int tmux_start(Tmux *t, const char *name, int cols, int rows, const char *env, const char *flags) {
    snprintf(t->sock, sizeof t->sock, "ahascope-%d-%s", (int)getpid(), name);
    snprintf(t->dir, sizeof t->dir, "%s", test_tmp(name));
    int st;
    free(test_runf(&st, "mkdir -p %s", t->dir));
    free(test_runf(&st,
            "tmux -L %s -f /dev/null new-session -d -x %d -y %d \"cd %s && env TERM=xterm-256color LANG=C.UTF-8 %s %s tui "
            "--model %s --seed 1 --temperature 0 %s; echo EXITED \\$?; sleep 60\"",
            t->sock, cols, rows, t->dir, env ? env : "", bin_abs(), model_abs(), flags ? flags : ""));
    return st;
}

static void tmux_keys(Tmux *t, const char *keys) {
    int st;
    free(test_runf(&st, "tmux -L %s send-keys %s", t->sock, keys));
}

static char *tmux_capture(Tmux *t) {
    int st;
    return test_runf(&st, "tmux -L %s capture-pane -p", t->sock);
}

static int blank(const char *s) {
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\n') return 0;
    return 1;
}

/* Wait until the screen shows `text` (up to secs); returns the screen (or NULL).
 * A pane tmux has just created is sometimes wiped by tmux after the program
 * drew its first frame (a resize to the same size, which the program cannot
 * see); a blank screen is answered with Ctrl-L, the TUI's redraw key. */
static char *tmux_wait(Tmux *t, const char *text, double secs) {
    double start = now(), end = start + secs, last_redraw = start;
    for (;;) {
        char *s = tmux_capture(t);
        if (s && strstr(s, text)) return s;
        if (blank(s) && now() - last_redraw > 1.0) {
            tmux_keys(t, "C-l");
            last_redraw = now();
        }
        if (now() > end) {
            fprintf(stderr, "--- waited for '%s', screen was:\n%s---\n", text, s ? s : "");
            free(s);
            return NULL;
        }
        free(s);
        usleep(30000);
    }
}

static void tmux_stop(Tmux *t) {
    int st;
    free(test_runf(&st, "tmux -L %s kill-server 2>/dev/null", t->sock));
}

#define NEED_TUI()                                                          \
    do {                                                                    \
        SKIP_UNLESS_SHARED();                                               \
        if (!have_tmux()) { test_skip("tmux not installed"); return; }      \
    } while (0)

static int expect(Tmux *t, const char *text, double secs) {
    char *s = tmux_wait(t, text, secs);
    free(s);
    return s != NULL;
}

/* A wait the rest of the test depends on: fail and stop the test at once. */
#define WAIT(t, text, secs)                                                          \
    do {                                                                             \
        if (!expect(t, text, secs)) {                                                \
            test_fail(__FILE__, __LINE__, "screen never showed '%s'", text);         \
            tmux_stop(t);                                                            \
            return;                                                                  \
        }                                                                            \
    } while (0)

static char *query(Tmux *t, const char *sql) {
    int st;
    return test_runf(&st, "%s query --db %s/ahascope.db --csv \"%s\"", bin_abs(), t->dir, sql);
}

TEST(tui_steps_plays_and_quits_cleanly) {
    NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_start(&t, "basic", 120, 40, NULL, "--policy full"), 0);
    WAIT(&t, "pos 4/512", 10);      /* "Once upon a time" and BOS prefilled */
    WAIT(&t, "Once upon a time", 1);
    WAIT(&t, "policy full", 1);
    tmux_keys(&t, "n n Space");
    WAIT(&t, "pos 7/512", 5);
    tmux_keys(&t, "p");
    WAIT(&t, "playing", 2);
    WAIT(&t, "pos 12/512", 5);
    tmux_keys(&t, "p");
    WAIT(&t, "paused", 2);
    tmux_keys(&t, "[ [");
    WAIT(&t, "heads @ pos", 1);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT status, n_tokens >= 13, parent_run_id IS NULL FROM runs");
    CHECK_MSG(r && strstr(r, "done,1,1"), "runs: %s", r);
    free(r);
    tmux_stop(&t);
}

TEST(tui_setting_change_reevaluates_as_linked_run) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "settings", 120, 40, NULL, "--policy full --window 16");
    WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "n n n n n");
    WAIT(&t, "pos 9/512", 5);
    tmux_keys(&t, "w");
    WAIT(&t, "w 8 ", 5);
    tmux_keys(&t, "P");
    WAIT(&t, "policy local", 5);
    WAIT(&t, "pos 9/512", 5); /* same tokens, re-evaluated */
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT run_id, parent_run_id, policy, window, n_tokens FROM runs ORDER BY run_id");
    CHECK_MSG(r && strstr(r, "1,,full,16,10") && strstr(r, "2,1,full,8,10") && strstr(r, "3,2,local,8,10"), "%s", r);
    free(r);
    /* like with like: the re-evaluated runs fed exactly the same tokens */
    r = query(&t, "SELECT COUNT(*) FROM tokens a JOIN tokens b ON b.run_id=3 AND b.pos=a.pos AND b.token_id=a.token_id "
                  "WHERE a.run_id=1");
    CHECK_MSG(r && strstr(r, "\n10"), "%s", r);
    free(r);
    tmux_stop(&t);
}

TEST(tui_sql_prompt_metric_help_and_export) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "sql", 120, 40, NULL, "--policy full");
    WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, ": \"SELECT 40+2 AS answer\" Enter");
    WAIT(&t, "answer", 5);
    WAIT(&t, "42", 1);
    tmux_keys(&t, "Escape : \"DELETE FROM runs\" Enter");
    WAIT(&t, "read-only", 5);
    tmux_keys(&t, "Escape m");
    WAIT(&t, "router score", 3);
    tmux_keys(&t, "m");
    WAIT(&t, "oracle", 3);
    tmux_keys(&t, "?");
    WAIT(&t, "edit prompt", 3);
    tmux_keys(&t, "Escape v");
    WAIT(&t, "per-head global rate", 3);
    tmux_keys(&t, "NPage NPage NPage");
    WAIT(&t, "no recorded evaluations", 3);
    tmux_keys(&t, "Escape s");
    WAIT(&t, "exported run 1", 5);
    char path[1100];
    snprintf(path, sizeof path, "%s/ahascope-run1.json", t.dir);
    CHECK(access(path, R_OK) == 0);
    tmux_keys(&t, "e C-u \"Lily\" Enter");
    WAIT(&t, "Lily", 5);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT prompt FROM runs WHERE run_id=2");
    CHECK_MSG(r && strstr(r, "Lily"), "%s", r);
    free(r);
    tmux_stop(&t);
}

/* An empty prompt starts from BOS alone (not the default "Once upon a
 * time"), and is recorded as given; a model that is not there ends the TUI
 * with one line naming tui and the file, status 1. */
TEST(tui_empty_prompt_and_missing_model) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "empty", 120, 40, NULL, "--policy full --prompt ''");
    WAIT(&t, "1 prompt + 0 generated", 10);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT quote(prompt), (SELECT SUM(is_prompt) FROM tokens), (SELECT token_id FROM tokens WHERE pos=0) "
                        "FROM runs");
    CHECK_MSG(r && strstr(r, "\n'',1,1"), "%s", r);
    free(r);
    tmux_stop(&t);
    tmux_start(&t, "nomodel", 120, 40, NULL, "--model /nonexistent/m.bin");
    WAIT(&t, "EXITED 1", 10);
    char *s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "ahascope tui: /nonexistent/m.bin: cannot open model"), "%s", s);
    free(s);
    tmux_stop(&t);
}

TEST(tui_small_terminal_and_resize) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "small", 60, 20, NULL, "--policy full --no-record");
    WAIT(&t, "enlarge to 80", 10);
    int st;
    free(test_runf(&st, "tmux -L %s resize-window -x 100 -y 30", t.sock));
    WAIT(&t, "policy full", 5);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char path[1100];
    snprintf(path, sizeof path, "%s/ahascope.db", t.dir);
    CHECK(access(path, F_OK) != 0); /* --no-record wrote nothing */
    tmux_stop(&t);
}

TEST(tui_ascii_and_no_color) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "ascii", 100, 30, "NO_COLOR=1", "--ascii --no-record");
    /* no policy asked for: the shipped stories260K routers at w = 16 */
    char *s = tmux_wait(&t, "policy aha | w 16", 10);
    CHECK(s != NULL);
    int high = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) high |= *p >= 0x80;
    CHECK_MSG(!high, "--ascii screen holds non-ASCII bytes");
    free(s);
    int st;
    char *esc = test_runf(&st, "tmux -L %s capture-pane -p -e", t.sock);
    CHECK_MSG(esc && !strstr(esc, "38;5;") && !strstr(esc, "48;5;"), "NO_COLOR screen has colours");
    free(esc);
    tmux_keys(&t, "C-c");
    WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

TEST(tui_answers_keys_while_a_step_is_slow) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "slow", 120, 40, "AHASCOPE_TEST_STEP_DELAY_MS=1500", "--policy full --no-record");
    WAIT(&t, "pos 4/512", 15);
    tmux_keys(&t, "p");
    WAIT(&t, "playing", 3);
    usleep(200000); /* now inside a 1.5 s step */
    double t0 = now();
    tmux_keys(&t, "m");
    WAIT(&t, "router score", 3);
    double dt = now() - t0;
    CHECK_MSG(dt < 0.5, "a key took %.0f ms to show during a slow step", dt * 1e3);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5); /* quits without waiting for the step */
    tmux_stop(&t);
}

TEST(tui_refuses_without_a_terminal) {
    SKIP_UNLESS_SHARED();
    int st;
    char *out = test_runf(&st, "%s tui --model %s --no-record </dev/null", bin_abs(),
                   test_shared("models/stories260K/stories260K.bin"));
    CHECK_INT(st, 1);
    CHECK_MSG(strstr(out, "needs a terminal") != NULL, "%s", out);
    free(out);
    out = test_runf(&st, "%s tui --bogus", bin_abs());
    CHECK(st == 2 && strstr(out, "ahascope tui: unknown flag")); /* a usage error */
    free(out);
    out = test_runf(&st, "%s tui --help", bin_abs());
    CHECK(st == 0 && strstr(out, "usage: ahascope tui"));
    free(out);
}

#include <cjson/cJSON.h>

#include "engine/routers.h"
#include "engine/tokenizer.h"

/* The text of golden ids[from..to) of the first prompt, as the TUI prints it. */
static int golden_text(int from, int to, char *out, size_t cap) {
    char *js = test_read_file(test_shared("golden/stories260K_greedy.json"), NULL);
    cJSON *g = cJSON_Parse(js);
    free(js);
    cJSON *ids = cJSON_GetObjectItem(cJSON_GetArrayItem(g, 0), "ids");
    Tokenizer tok;
    Err e;
    int ok = ids && tok_load(&tok, test_shared("models/stories260K/tok512.bin"), 512, &e) == 0;
    size_t o = 0;
    out[0] = 0;
    for (int i = from; ok && i < to && o + 64 < cap; i++) {
        int prev = cJSON_GetArrayItem(ids, i - 1)->valueint, id = cJSON_GetArrayItem(ids, i)->valueint;
        o += tok_piece_printable(&tok, prev, id, out + o, cap - o);
    }
    if (ok) tok_free(&tok);
    cJSON_Delete(g);
    return ok ? 0 : -1;
}

TEST(tui_golden_text_mouse_resize_and_replay) {
    NEED_TUI();
    char want[256];
    CHECK(golden_text(1, 10, want, sizeof want) == 0); /* prompt, then the first 5 generated tokens */
    Tmux t;
    tmux_start(&t, "golden", 120, 40, NULL, "--policy full --db golden.db");
    WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "n n n n n");
    WAIT(&t, "pos 9/512", 5);
    WAIT(&t, want, 2);
    /* a click on heatmap cell L2 H3 (SGR mouse report, 1-based column 19, row 13) selects it */
    int st;
    free(test_runf(&st, "tmux -L %s send-keys -l \"$(printf '\\033[<0;19;13M')\"", t.sock));
    WAIT(&t, "L2 H3", 3);
    /* a bigger terminal shows the fields a narrow header drops */
    free(test_runf(&st, "tmux -L %s resize-window -x 220 -y 60", t.sock));
    WAIT(&t, "golden.db run 1", 5);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    /* replay: the same tokens, from the database alone */
    Tmux r;
    snprintf(r.sock, sizeof r.sock, "ahascope-%d-replay", (int)getpid());
    snprintf(r.dir, sizeof r.dir, "%s", t.dir);
    free(test_runf(&st, "tmux -L %s -f /dev/null new-session -d -x 220 -y 40 \"cd %s && env TERM=xterm-256color "
                 "LANG=C.UTF-8 %s tui --replay --db golden.db; echo EXITED \\$?; sleep 60\"", r.sock, r.dir, bin_abs()));
    WAIT(&r, "replay golden.db run 1", 10);
    WAIT(&r, want, 2);
    WAIT(&r, "pos 9/512", 1);
    tmux_keys(&r, "n");
    WAIT(&r, "need the model", 3);
    tmux_keys(&r, "q");
    WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
}

/* A replay draws its first frame with no key pressed. It used to stay blank
 * until a key: getch() repainted the untouched-since-initscr stdscr over the
 * frame. No Ctrl-L here (tmux_wait's remedy for tmux's own wipes), so the
 * program starts after the pane has settled. */
TEST(tui_replay_first_frame_without_a_key) {
    NEED_TUI();
    const char *dir = test_tmp("firstframe");
    int st;
    free(test_runf(&st, "mkdir -p %s && cd %s && %s record --db ff.db --model %s --steps 12 --temperature 0", dir, dir,
                   bin_abs(), model_abs()));
    CHECK_MSG(st == 0, "record failed");
    Tmux r;
    snprintf(r.sock, sizeof r.sock, "ahascope-%d-firstframe", (int)getpid());
    snprintf(r.dir, sizeof r.dir, "%s", dir);
    free(test_runf(&st, "tmux -L %s -f /dev/null new-session -d -x 100 -y 30 \"sleep 1; cd %s && env "
                   "TERM=xterm-256color LANG=C.UTF-8 %s tui --replay --db ff.db; sleep 60\"", r.sock, dir, bin_abs()));
    int shown = 0;
    for (double end = now() + 15; !shown && now() < end; usleep(100000)) {
        char *s = tmux_capture(&r);
        shown = s && strstr(s, "ahascope stories260K.bin");
        free(s);
    }
    CHECK_MSG(shown, "the replay stayed blank with no key pressed");
    tmux_keys(&r, "q");
    tmux_stop(&r);
}

/* The token ids of a run, "1,403,…", from `query` (NULL on failure). */
static char *run_tokens(const char *db, int run) {
    int st;
    char *out = test_runf(&st, "%s query --db %s --csv \"SELECT group_concat(token_id) FROM (SELECT token_id FROM tokens "
                        "WHERE run_id=%d ORDER BY pos)\"", bin_abs(), db, run);
    char *nl = out ? strchr(out, '\n') : NULL;
    if (st != 0 || !nl) { free(out); return NULL; }
    memmove(out, nl + 1, strlen(nl + 1) + 1);
    out[strcspn(out, "\r\n")] = 0;
    size_t n = strlen(out);
    if (n >= 2 && out[0] == '"') memmove(out, out + 1, n - 2), out[n - 2] = 0; /* CSV quotes the commas */
    return out;
}

/* A sampled TUI run, re-evaluated midway (w then W: two linked runs, the
 * last under the first's settings) and played to the end, is the run
 * `record` makes from the settings its runs row holds: the re-evaluation
 * goes on drawing where the sampling before it left off, not from the seed
 * afresh. */
TEST(tui_sampled_run_is_reproduced_by_record) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "repro", 120, 40, NULL,
               "--policy full --window 16 --seed 12 --temperature 1.0 --steps 60 --prompt 'Once upon a time'");
    WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "n n n n n n n n n n");
    WAIT(&t, "pos 14/512", 5);
    tmux_keys(&t, "w");
    WAIT(&t, "w 8 ", 5);
    tmux_keys(&t, "W");
    WAIT(&t, "w 16 ", 5);
    WAIT(&t, "pos 14/512", 5);
    tmux_keys(&t, "+ + + + + p"); /* as fast as it goes */
    WAIT(&t, "sequence finished", 20);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char db[1100], rec[1100];
    snprintf(db, sizeof db, "%s/ahascope.db", t.dir);
    snprintf(rec, sizeof rec, "%s/record.db", t.dir);
    int st;
    char *row = test_runf(&st, "%s query --db %s --csv \"SELECT parent_run_id, prompt, policy, window, seed, temperature, topp, "
                        "steps, status FROM runs WHERE run_id=3\"", bin_abs(), db);
    char prompt[64] = "", policy[16] = "", seed[32] = "", status[16] = "";
    int parent = 0, window = 0, steps = 0;
    double temp = 0, topp = 0;
    char *nl = row ? strchr(row, '\n') : NULL;
    int got = nl ? sscanf(nl + 1, "%d,%63[^,],%15[^,],%d,%31[^,],%lf,%lf,%d,%15[a-z]", &parent, prompt, policy, &window,
                          seed, &temp, &topp, &steps, status) : 0;
    CHECK_MSG(got == 9 && parent == 2 && !strcmp(status, "done"), "runs: %s", row);
    free(row);
    char *out = test_runf(&st, "%s record --db %s --model %s --prompt '%s' --policy %s --window %d --seed %s --temperature %.9g "
                        "--topp %.9g --steps %d", bin_abs(), rec, model_abs(), prompt, policy, window, seed, temp, topp, steps);
    CHECK_MSG(st == 0, "%s", out);
    free(out);
    char *tui = run_tokens(db, 3), *again = run_tokens(rec, 1), *first = run_tokens(db, 1);
    CHECK_MSG(tui && again && !strcmp(tui, again), "tui run 3: %s\nrecord:     %s", tui, again);
    /* and the re-evaluated run begins with the first run's tokens */
    CHECK_MSG(tui && first && strlen(first) > 20 && !strncmp(tui, first, strlen(first)), "run 1: %s", first);
    free(tui), free(again), free(first);
    tmux_stop(&t);
}

/* A router file's τ runs the TUI (header, recorded run) and its trained
 * window, when another is asked for, is a warning on the status line. */
TEST(tui_router_file_tau_and_window_warning) {
    NEED_TUI();
    char path[1024];
    snprintf(path, sizeof path, "%s", test_tmp("w8.safetensors"));
    Routers r = {0};
    Err e;
    const char *keys[] = {"window", "tau"}, *vals[] = {"8", "0.7"};
    CHECK(router_random(&r, 5, 8, 64, 5, &e) == 0 && router_save(&r, path, keys, vals, 2, &e) == 0);
    router_free(&r);
    char flags[1100];
    snprintf(flags, sizeof flags, "--routers %s --window 16", path);
    Tmux t;
    tmux_start(&t, "rmeta", 220, 40, "NO_COLOR=1", flags);
    WAIT(&t, "trained for window 8, used here at window 16", 10);
    WAIT(&t, "\xcf\x84 0.70", 5); /* τ */
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char *q = query(&t, "SELECT printf('%.2f', tau), window FROM runs");
    CHECK_MSG(q && strstr(q, "0.70,16"), "%s", q);
    free(q);
    tmux_stop(&t);
}

/* Logits that cannot be sampled stop the TUI's run: the reason on the
 * status line, the run recorded as failed, no garbage token after the prompt. */
TEST(tui_unsampleable_logits_fail_the_run) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "tiny", 160, 40, NULL, "--policy full --temperature 1e-38");
    WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "n");
    WAIT(&t, "position 5: --temperature 1e-38 is too small", 5);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT status, n_tokens FROM runs");
    CHECK_MSG(r && strstr(r, "failed,5"), "%s", r);
    free(r);
    tmux_stop(&t);
}

/* The inspector of the running TUI explains the selected head at the cursor
 * token once it has far keys: each predictor against its threshold, the
 * executed gate, and where the head looked, beside an axis. */
TEST(tui_inspector_explains_the_verdicts) {
    NEED_TUI();
    Tmux t;
    tmux_start(&t, "explain", 100, 30, NULL, "--no-record");
    WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 14; i++) tmux_keys(&t, "n"); /* window 16: far keys from pos 16 on */
    WAIT(&t, "pos 18/512", 10);
    tmux_keys(&t, "Enter");
    WAIT(&t, "inspector \xc2\xb7 L0 H0 @ pos 18", 5);
    WAIT(&t, "\xcf\x84 0.50", 5);                          /* router … τ 0.50 → … */
    WAIT(&t, "of the mass is outside the window", 1);
    WAIT(&t, "QAdA estimate", 1);
    WAIT(&t, "under policy aha", 1);
    WAIT(&t, "far ", 1);                                     /* window …% · far …% */
    /* back before the window filled: nothing was decided there */
    tmux_keys(&t, "[ [ [ [ [ [ [ [ [ [ [ [ [ [ [");
    WAIT(&t, "no far keys at pos 3", 5);
    tmux_keys(&t, "q");
    WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}
