/* test_tui_numbers.c — the microscope's counting, marking, copying and
 * typed-setting keys end to end in tmux: `c` rates by token type, `b ' "`
 * bookmarks, `y` yanks (the file's content checked), `z` typed τ, θ (as a
 * probability and as log-odds) and window with refusals, and `P`'s policy
 * picker; live on stories260K at 80×24, in a replay, and on a generated
 * 16 × 32-head folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test.h"
#include "tests/tmux.h"

static const char *model_abs(void) {
    static char path[4096];
    if (!realpath(test_stories_model(), path)) return "missing-model";
    return path;
}

/* The TUI on stories260K (greedy), recording into num.db in its directory. */
static int start(Tmux *t, const char *name, int cols, int rows, const char *env) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s tui --model %s --seed 1 --temperature 0 --db num.db", test_bin_abs(), model_abs());
    return tmux_open(t, name, NULL, cols, rows, env, cmd, 0);
}

/* A key, then a line typed into the editor it opened, then Enter. */
static void type_line(Tmux *t, const char *key, const char *text) {
    char keys[256];
    tmux_keys(t, key);
    snprintf(keys, sizeof keys, "-l \"%s\"", text);
    tmux_keys(t, keys);
    tmux_keys(t, "Enter");
}

/* 1 once the screen no longer shows text, within secs. */
static int gone(Tmux *t, const char *text, double secs) {
    for (int i = 0; i < secs * 10; i++) {
        char *scr = tmux_capture(t);
        int there = scr && strstr(scr, text);
        free(scr);
        if (!there) return 1;
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
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
    CHECK_MSG(gone(&t, "> oracle", 3), "Esc left the picker open");
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
    const char *dir = test_tmp("num16x32");
    int st;
    char *out = test_runf(&st, "mkdir -p %s && %s bench --dims 256,512,16,32,8,512,1024 --save-hf %s/m 2>&1", dir,
                          test_bin_abs(), dir);
    CHECK_MSG(st == 0, "bench --save-hf: %s", out ? out : "");
    free(out);
    if (st) return;
    Tmux t;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --model m --seed 1 --temperature 0 --window 8", test_bin_abs());
    tmux_open(&t, "num16x32", dir, 140, 45, "AHASCOPE_YANK=y512.txt", cmd, 0);
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
