/* test_tui_numbers.c — `c`, `b ' "`, `y`, `z` and `P` end to end in tmux.
 *
 * The microscope's counting, marking, copying and
 * typed-setting keys end to end in tmux: `c` rates by token type, `b ' "`
 * bookmarks, `y` yanks (the file's content checked), `z` typed τ, θ (as a
 * probability and as log-odds) and window with refusals, and `P`'s policy
 * picker; live on stories260K at 80×24, in a replay, and on a generated
 * 16 × 32-head folder; `c` over a 16 × 32-head run of 3000 positions
 * synthesised into a database, counted while keys are answered, and
 * stopped by Esc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/clock.h"
#include "store/store.h"
#include "tests/store_fixture.h"
#include "tests/test.h"
#include "tests/tmux.h"

/* The TUI on stories260K (greedy), recording into num.db in its directory. */
static int start(Tmux *t, const char *name, int cols, int rows, const char *env) {
    return tmux_open_stories(t, name, cols, rows, env, "--db num.db");
}

/* A key, then a line typed into the editor it opened, then Enter. */
static void type_line(Tmux *t, const char *key, const char *text) {
    char keys[256];
    tmux_keys(t, key);
    snprintf(keys, sizeof keys, "-l \"%s\"", text);
    tmux_keys(t, keys);
    tmux_keys(t, "Enter");
}

/* The file name in the pane's directory, read whole (malloc'd), or NULL. */
static char *read_in(const Tmux *t, const char *name) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", t->dir, name);
    return test_read_file(path, NULL);
}

TEST(tui_token_types_bookmarks_and_yank_at_80x24) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(start(&t, "types80", 80, 24, NULL), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 12; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 16/512", 10);
    tmux_keys(&t, "c");
    TMUX_WAIT(&t, "token types L0 H0", 5);
    TMUX_WAIT(&t, "h_ L0 H0, a_ 40 heads pooled", 3);
    TMUX_WAIT(&t, "generated", 1);
    /* the pane's first row, under its header, yanked to the default file */
    tmux_keys(&t, "y");
    TMUX_WAIT(&t, "yanked the row (2 lines) to ahascope-yank.txt", 3);
    char *f = read_in(&t, "ahascope-yank.txt");
    /* the prompt's 5 positions come before the window fills (w 16): no rate has a choice in it */
    CHECK_MSG(f && !strncmp(f, "type ", 5) && strstr(f, "h_exec") && strstr(f, "\nprompt ") &&
                  strstr(f, "      5      n/a      n/a      n/a      n/a      n/a      n/a\n"),
              "%s", f ? f : "(no file)");
    free(f);
    tmux_keys(&t, "Escape");
    /* bookmarks: two set, jumped between both ways, wrapping */
    tmux_keys(&t, "[");
    tmux_keys(&t, "[");
    tmux_keys(&t, "b");
    TMUX_WAIT(&t, "bookmark at pos 14", 3);
    TMUX_WAIT(&t, "\xe2\x98\x85 bookmark", 2); /* the legend names the glyph the panes draw */
    for (int i = 0; i < 4; i++) tmux_keys(&t, "[");
    tmux_keys(&t, "b");
    TMUX_WAIT(&t, "bookmark at pos 10", 3);
    tmux_keys(&t, "End");
    tmux_keys(&t, "'\"'"); /* the shell's quoting: the key " */
    TMUX_WAIT(&t, "bookmark 2 of 2: pos 14", 3);
    tmux_keys(&t, "\"'\""); /* the key ' */
    TMUX_WAIT(&t, "bookmark 1 of 2: pos 10", 3); /* wrapped round */
    tmux_keys(&t, "b");
    TMUX_WAIT(&t, "bookmark at pos 10 dropped", 3);
    /* the inspector's block at the cursor */
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "inspector", 3);
    tmux_keys(&t, "y");
    TMUX_WAIT(&t, "yanked the inspector", 3);
    f = read_in(&t, "ahascope-yank.txt");
    CHECK_MSG(f && !strncmp(f, "L0 H0 @ pos 10 ", 15) && strstr(f, "tau 0.50") && strstr(f, "no far keys at pos 10"),
              "%s", f ? f : "(no file)");
    free(f);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

TEST(tui_typed_settings_and_policy_picker_at_80x24) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(start(&t, "typed80", 80, 24, NULL), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 20; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 24/512", 10);
    type_line(&t, "z", "tau 0.3");
    TMUX_WAIT(&t, "\xcf\x84 0.30", 10);          /* the header's τ */
    TMUX_WAIT(&t, "run 2: aha", 10);             /* re-evaluated: its line would replace the next answer */
    type_line(&t, "z", "theta 0.9");
    TMUX_WAIT(&t, "theta read as a probability 0.900", 3);
    TMUX_WAIT(&t, "\xce\xb8 0.90", 10);
    type_line(&t, "z", "theta -2.2");
    TMUX_WAIT(&t, "theta read as log-odds -2.20", 3);
    TMUX_WAIT(&t, "\xce\xb8 0.10", 10);
    type_line(&t, "z", "tau 2");
    TMUX_WAIT(&t, "set: tau 2 is out of range (0 to 1)", 3);
    type_line(&t, "z", "window 9999");
    TMUX_WAIT(&t, "set: window 9999 is out of range (1 to 512)", 3);
    type_line(&t, "z", "window 8");
    TMUX_WAIT(&t, "w=8", 10);
    /* the picker: the policy in force highlighted, P moves down, Enter runs it */
    tmux_keys(&t, "P");
    TMUX_WAIT(&t, "> aha", 3);
    tmux_keys(&t, "P");
    tmux_keys(&t, "P");
    TMUX_WAIT(&t, "> local", 3);
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "local, w=8", 10);
    tmux_keys(&t, "P");
    TMUX_WAIT(&t, "> local", 3);
    tmux_keys(&t, "Down");
    TMUX_WAIT(&t, "> oracle", 3);
    tmux_keys(&t, "Escape"); /* nothing changes: the picker closes, local stays (the status line may be the run's) */
    CHECK_MSG(tmux_gone(&t, "> oracle", 3), "Esc left the picker open");
    TMUX_WAIT(&t, " local \xe2\x94\x82", 3);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    /* a replay re-scores a typed tau; a window or a policy needs the model */
    Tmux r;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db num.db", test_bin_abs());
    tmux_open(&r, "typed80r", t.dir, 80, 24, NULL, cmd, 0);
    TMUX_WAIT(&r, "move through its", 10); /* read whole: its line would replace the answer */
    type_line(&r, "z", "tau 0.7");
    TMUX_WAIT(&r, "replay re-scored at tau 0.70", 5);
    type_line(&r, "z", "window 4");
    TMUX_WAIT(&r, "a new window needs the model", 3);
    tmux_keys(&r, "P");
    TMUX_WAIT(&r, "a new policy needs the model", 3);
    tmux_keys(&r, "q");
    TMUX_WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
}

TEST(tui_types_picker_and_yank_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_16x32(&t, "num16x32", 140, 45, "AHASCOPE_YANK=y512.txt", NULL)) return;
    TMUX_WAIT(&t, "policy", 15);
    for (int i = 0; i < 20; i++) tmux_keys(&t, "Space");
    CHECK_MSG(tmux_shows_pos(&t, 31, 30), "the 20 steps never came");
    tmux_keys(&t, "G");
    tmux_keys(&t, "-l \"L15 H31\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "L15 H31", 5);
    tmux_keys(&t, "c");
    TMUX_WAIT(&t, "h_ L15 H31, a_ 512 heads pooled", 10);
    TMUX_WAIT(&t, "token types L15 H31", 2);
    tmux_keys(&t, "Escape");
    tmux_keys(&t, "b");
    TMUX_WAIT(&t, "bookmark at pos", 3);
    tmux_keys(&t, "y");
    TMUX_WAIT(&t, "to y512.txt", 3);
    char *f = read_in(&t, "y512.txt");
    CHECK_MSG(f && !strncmp(f, "L15 H31 @ pos ", 14), "%s", f ? f : "(no file)");
    free(f);
    tmux_keys(&t, "P"); /* no routers here: the picker lists what can run */
    TMUX_WAIT(&t, "> full", 3);
    char *scr = tmux_capture(&t);
    CHECK_MSG(scr && !strstr(scr, "  aha ") && strstr(scr, "  local"), "%s", scr ? scr : "");
    free(scr);
    tmux_keys(&t, "Escape");
    TMUX_WAIT(&t, "policy unchanged: full", 3);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* A 16 x 32-head run of n positions straight into the database at path:
 * every fourth token ",", the next " 12", the others words; gates and
 * oracle values from a hash. 0, or -1 with the test failed. */
static int synth_run(const char *path, int n) {
    enum { SL = 16, SH = 32, SW = 16 };
    Err e;
    test_db_fresh(path);
    Store *s = store_open(path, STORE_WRITE, 2000, &e);
    if (!s) { test_fail(__FILE__, __LINE__, "%s", e.msg); return -1; }
    store_set_commit_every(s, 500);
    StoreRunInfo r;
    memset(&r, 0, sizeof r);
    snprintf(r.model, sizeof r.model, "synthetic-16x32");
    snprintf(r.policy, sizeof r.policy, "aha");
    r.program_version = "test", r.prompt = "synthetic";
    r.n_layers = SL, r.n_heads = SH, r.n_kv_heads = SH, r.seq_len = 4096, r.window = SW, r.steps = n;
    r.tau = 0.5, r.theta_logit = -2.2, r.profile = 1;
    int rc = store_run_begin(s, &r, &e);
    StepTrace *t = trace_new(SL, SH);
    for (int pos = 0; rc == 0 && t && pos < n; pos++) {
        unsigned x = (unsigned)pos * 2246822519u + 7;
        t->pos = pos, t->token = pos % 300, t->is_prompt = pos < 8, t->logprob = -1, t->entropy = 1;
        snprintf(t->piece, sizeof t->piece, "%s", pos % 4 == 0 ? "," : pos % 4 == 1 ? " 12" : " word");
        t->n_far = pos >= SW ? pos - SW + 1 : 0, t->n_kv_heads = SH;
        for (int i = 0; i < SL * SH; i++) {
            x = x * 1664525u + 1013904223u;
            t->gate[i] = (int8_t)(x >> 20 & 1);
            t->score[i] = (float)(x >> 8 & 255) / 255.0f;
            t->oracle_logit[i] = (float)(x >> 4 & 15) - 7.5f;
            t->keys_read[i] = t->gate[i] ? pos + 1 : SW;
        }
        rc = store_write_step(s, r.run_id, t, NULL, &e);
    }
    trace_free(t);
    if (rc == 0) rc = store_flush(s, &e);
    if (rc == 0) rc = store_run_end(s, r.run_id, "done", &e);
    if (rc) test_fail(__FILE__, __LINE__, "%s", e.msg);
    if (store_close(s, &e) && rc == 0) rc = -1, test_fail(__FILE__, __LINE__, "%s", e.msg);
    return rc;
}

/* Seconds until the screen shows a or b, -1 after secs. */
static double wait_either(Tmux *t, const char *a, const char *b, double secs) {
    double t0 = clock_now();
    for (;;) {
        char *s = tmux_capture(t);
        int found = s && (strstr(s, a) || (b && strstr(s, b)));
        free(s);
        if (found) return clock_now() - t0;
        if (clock_now() - t0 > secs) return -1;
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
}

TEST(tui_token_types_of_a_long_run_count_while_keys_answer) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    enum { N = 3000 };
    char db[1100], cmd[1400];
    const char *dir = test_tmp("typeslong");
    int st;
    free(test_runf(&st, "mkdir -p %s", dir));
    snprintf(db, sizeof db, "%s/long.db", dir);
    if (synth_run(db, N)) return;
    Tmux t;
    snprintf(cmd, sizeof cmd, "%s tui --replay --db %s", test_bin_abs(), db);
    CHECK_INT(tmux_open(&t, "typeslong", NULL, 120, 40, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "its 3000 positions", 60);
    /* Esc stops a count under way (or, on a fast machine, finds it done) */
    tmux_keys(&t, "c");
    tmux_keys(&t, "Escape");
    CHECK_MSG(wait_either(&t, "token types: stopped after", "token types L0 H0", 10) >= 0, "c then Esc: nothing");
    tmux_keys(&t, "Escape");
    /* counted whole while the help opens and closes at once */
    double t0 = clock_now();
    tmux_keys(&t, "c");
    tmux_keys(&t, "?");
    double dt = wait_either(&t, "this help; redraw the screen", NULL, 5);
    CHECK_MSG(dt >= 0 && dt < 1.0 * tmux_patience(), "? took %.3f s while counting", dt);
    tmux_keys(&t, "x"); /* closes the help (any key does); the key clears the status line, so the count's
                           own line may be gone: wait for its table */
    TMUX_WAIT(&t, "punctuation       750 ", 60);
    fprintf(stderr, "    counted 3000 positions x 512 heads in %.2f s (? answered in %.3f s)\n", clock_now() - t0, dt);
    /* the rows hold the counts the synthesis made: 750 of each type but words (1500) */
    char *scr = tmux_capture(&t);
    CHECK_MSG(scr && strstr(scr, "punctuation       750 ") && strstr(scr, "numbers           750 ") &&
                  strstr(scr, "words            1500 ") && strstr(scr, "prompt              8 "),
              "%s", scr ? scr : "");
    free(scr);
    tmux_keys(&t, "q q"); /* the text pane open: the first closes it, the second quits */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}
