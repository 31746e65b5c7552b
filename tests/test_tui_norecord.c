/* test_tui_norecord.c — a TUI run without a database (--no-record) never names a "run 0".
 *
 * Runs that are not recorded have no ids: a setting change (`T`, a new
 * τ under the router) re-evaluates and says what it ran, not "run 0". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

TEST(tui_norecord_setting_change_names_no_run_0) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "norecord", 100, 30, NULL, "--no-record"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "T");
    char *s = tmux_wait(&t, "not recorded: aha", 20);
    CHECK_MSG(s != NULL, "no \"not recorded: aha\" after T");
    CHECK_MSG(!s || !strstr(s, "run 0"), "the screen names run 0:\n%s", s ? s : "");
    free(s);
    TMUX_QUIT(&t, 5); /* q closes the pane on top first */
    tmux_stop(&t);
}

/* A file's text (malloc'd), or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* How many times needle occurs in s. */
static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s ? strstr(s, needle) : NULL; p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* `s` and `R` without a database: the run on screen is exported and
 * summarised from memory (a scratch database the job removes), and nothing
 * names a "run 0" or refuses with "not recording". */
TEST(tui_norecord_exports_and_summarises_the_run_on_screen) {
    TMUX_NEED_TUI();
    Tmux t;
    char env[1200], scratch[1100];
    snprintf(scratch, sizeof scratch, "%s", test_tmp("norecord_s/scratch"));
    free(test_runf(NULL, "rm -rf '%s' && mkdir -p '%s'", scratch, scratch));
    snprintf(env, sizeof env, "TMPDIR=%s", scratch);
    CHECK_INT(tmux_open_stories(&t, "norecord_s", 100, 30, env, "--no-record"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 20; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 24/512", 10);
    tmux_keys(&t, "s");
    char *scr = tmux_wait(&t, "exported the run on screen (not recorded: 25 positions) to ahascope-unrecorded.json", 20);
    CHECK_MSG(scr && !strstr(scr, "run 0") && !strstr(scr, "not recording"), "after s:\n%s", scr ? scr : "");
    free(scr);
    char path[1200];
    snprintf(path, sizeof path, "%s/ahascope-unrecorded.json", t.dir);
    char *js = slurp(path);
    CHECK_MSG(js && strstr(js, "\"prompt\":\"Once upon a time\""), "%s: no run row with the prompt", path);
    CHECK_INT(count(js, "\"token_id\":"), 25);
    free(js);
    snprintf(path, sizeof path, "%s/ahascope-unrecorded.csv", t.dir);
    char *cs = slurp(path);
    CHECK_INT(count(cs, "\n1,"), 25 * 40); /* a row per (position, layer, head) of the 5 x 8 heads */
    free(cs);
    tmux_keys(&t, "R");
    scr = tmux_wait(&t, "not recorded: policy aha, window 16", 20);
    CHECK_MSG(scr && strstr(scr, "summary (not recorded)") && !strstr(scr, "run 0"), "after R:\n%s", scr ? scr : "");
    free(scr);
    TMUX_QUIT(&t, 5); /* q closes the pane on top first */
    char *left = test_runf(NULL, "ls -A '%s'", scratch);
    CHECK_MSG(left && !left[0], "the scratch databases stayed: %s", left ? left : "");
    free(left);
    tmux_stop(&t);
}
