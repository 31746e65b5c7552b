/* test_tui_reeval.c — a settings change on a long live run: progress, keys, Esc, a second change.
 *
 * A settings change on a long live run: the
 * re-evaluation counts its positions on the status line while keys are
 * answered, Esc stops it between chunks (the child run kept, interrupted,
 * the parent still on screen), and a second press during one replaces it.
 *
 * The TUI runs on stories260K through tests/tmux.h; each 64-position chunk
 * is made slower with AHASCOPE_TEST_PREFILL_DELAY_MS so the checks made
 * during a re-evaluation never race its end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tests/tmux.h"

/* Each chunk of a prefill or re-evaluation 1.5 s slower: about 6 s for the
 * 250 positions below, long enough to read the progress and press a key. */
#define SLOW_CHUNKS "AHASCOPE_TEST_PREFILL_DELAY_MS=1500"
/* The same for a re-evaluation's chunks only: the first prefill, which the
 * re-evaluation tests only wait for, goes at full speed (6 s less each). */
#define SLOW_REEVAL "AHASCOPE_TEST_REEVAL_DELAY_MS=1500"

/* The TUI on stories260K (greedy, full attention, w 16, recorded) on a
 * prompt of `reps` sentences (about 12 tokens each), env its test knob. */
static int start_reps(Tmux *t, const char *name, const char *env, int reps) {
    static char model[4096], cmd[16384];
    if (!realpath(test_stories_model(), model)) snprintf(model, sizeof model, "missing-model");
    int n = snprintf(cmd, sizeof cmd, "%s tui --model %s --seed 1 --temperature 0 --policy full --window 16 --prompt '",
                     test_bin_abs(), model);
    for (int i = 0; i < reps; i++) n += snprintf(cmd + n, sizeof cmd - n, "Once upon a time there was a little dog. ");
    snprintf(cmd + n, sizeof cmd - n, "'");
    return tmux_open(t, name, NULL, 160, 40, env, cmd, 0);
}

/* That TUI on about 250 tokens: the run a re-evaluation has to redo. */
static int start_long(Tmux *t, const char *name, const char *env) { return start_reps(t, name, env, 20); }

static char *query(Tmux *t, const char *sql) {
    int st;
    return test_runf(&st, "%s query --db %s/ahascope.db --csv \"%s\"", test_bin_abs(), t->dir, sql);
}

/* The positions recorded for each run, "run,parent,status,window,positions" a line. */
static char *runs_table(Tmux *t) {
    return query(t, "SELECT r.run_id, r.parent_run_id, r.status, r.window, (SELECT COUNT(*) FROM tokens k WHERE "
                    "k.run_id = r.run_id) FROM runs r ORDER BY r.run_id");
}

/* `w` on a run of 250 positions: the status line counts the re-evaluation,
 * Esc stops it after its first chunk; the child run is kept as interrupted
 * with fewer positions than its parent, which stays on screen (w 16). */
TEST(tui_reeval_shows_progress_and_esc_stops_it) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(start_long(&t, "reeval_esc", SLOW_REEVAL), 0);
    TMUX_WAIT(&t, "prefilled ", 60);
    CHECK_MSG(tmux_shows_pos(&t, 200, 10), "the prompt's positions never showed"); /* shown after the count ends */
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "re-evaluating run 1 under full, w=8", 5);
    TMUX_WAIT(&t, "as run 2: 64 of ", 10);
    char *s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "positions \xc2\xb7 Esc stops"), "the progress line:\n%s", s ? s : "");
    free(s);
    tmux_keys(&t, "?"); /* keys are answered during it: the help's title, whole or scrolling */
    TMUX_WAIT(&t, "help \xc2\xb7 ", 2);
    /* Esc stops what runs before it closes a pane (views/README.md): the help stays open. On a quiet
     * machine the progress line outlived the first Esc and the test read it as the help closing first */
    tmux_keys(&t, "Escape");
    TMUX_WAIT(&t, "re-evaluation stopped at ", 5);
    tmux_keys(&t, "Escape"); /* then closes the help */
    CHECK_MSG(tmux_gone(&t, "help \xc2\xb7 ", 5), "the second Esc left the help open");
    s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "run 2 is kept, interrupted") && strstr(s, "w 16 "), "after Esc:\n%s", s ? s : "");
    free(s);
    tmux_keys(&t, "[ [");
    TMUX_WAIT(&t, "heads @ pos", 2); /* the parent is still there to browse */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = runs_table(&t);
    int n1 = 0, n2 = 0;
    const char *a = r ? strstr(r, "\n1,,done,16,") : NULL, *b = r ? strstr(r, "\n2,1,interrupted,8,") : NULL;
    CHECK_MSG(a && b && sscanf(a, "\n1,,done,16,%d", &n1) == 1 && sscanf(b, "\n2,1,interrupted,8,%d", &n2) == 1,
              "runs:\n%s", r ? r : "");
    CHECK_MSG(n1 > 200 && n2 >= 64 && n2 < n1, "the parent has %d positions, the stopped child %d", n1, n2);
    free(r);
    tmux_stop(&t);
}

/* The store keeps pace with a long prefill: the chunks fed are in the
 * database while later ones are still being computed (the whole prompt
 * used to be written after its prefill, so the screen said "prefilling"
 * for as long again while the store caught up). */
TEST(tui_prefill_is_recorded_as_it_is_fed) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(start_long(&t, "prefill_rec", SLOW_CHUNKS), 0);
    TMUX_WAIT(&t, "prefill 128/", 30);
    char *q = query(&t, "SELECT COUNT(*) FROM tokens WHERE run_id = 1");
    int n = -1;
    CHECK_MSG(q && sscanf(q, "COUNT(*)\r\n%d", &n) == 1 && n >= 64, "positions in the store mid-prefill: %s",
              q ? q : "");
    free(q);
    char *s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "prefill") && !strstr(s, "prefilled "), "the prefill had ended:\n%s", s ? s : "");
    free(s);
    TMUX_WAIT(&t, "prefilled ", 30);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    q = query(&t, "SELECT COUNT(*) = n_tokens FROM tokens JOIN runs USING(run_id) WHERE run_id = 1");
    CHECK_MSG(q && strstr(q, "\r\n1\r\n"), "positions against n_tokens: %s", q ? q : "");
    free(q);
    tmux_stop(&t);
}

/* A second settings press during a re-evaluation stops it (kept,
 * interrupted) and re-evaluates the tokens on screen under the newer
 * settings, the stopped run its parent (one chain), with all its positions. */
TEST(tui_reeval_second_press_replaces_the_running_one) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(start_long(&t, "reeval_twice", SLOW_REEVAL), 0);
    TMUX_WAIT(&t, "prefilled ", 60);
    CHECK_MSG(tmux_shows_pos(&t, 200, 10), "the prompt's positions never showed"); /* shown after the count ends */
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "as run 2: 64 of ", 10);
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "re-evaluating run 2 under full, w=4, tau=0.50, theta=0.10 as run 3: ", 5);
    TMUX_WAIT(&t, "Esc stops (run 2 stopped at ", 5);
    TMUX_WAIT(&t, "run 3: full, w=4", 30);
    TMUX_WAIT(&t, "w 4 ", 2);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = runs_table(&t);
    int n1 = 0, n2 = 0, n3 = 0;
    const char *a = r ? strstr(r, "\n1,,done,16,") : NULL, *b = r ? strstr(r, "\n2,1,interrupted,8,") : NULL;
    const char *c = r ? strstr(r, "\n3,2,done,4,") : NULL;
    CHECK_MSG(a && b && c && sscanf(a, "\n1,,done,16,%d", &n1) == 1 && sscanf(b, "\n2,1,interrupted,8,%d", &n2) == 1 &&
                  sscanf(c, "\n3,2,done,4,%d", &n3) == 1,
              "runs:\n%s", r ? r : "");
    CHECK_MSG(n2 < n1 && n3 == n1, "positions: parent %d, stopped %d, replacing %d", n1, n2, n3);
    free(r);
    tmux_stop(&t);
}

/* `w w w` pressed quickly: the second press stops run 2 before its first
 * chunk, so run 2 keeps no position and is no parent (run 3's is run 1);
 * the third stops run 3 after a chunk, which stays in the chain (run 4's
 * parent). The inspector names the run whose positions it holds, run 1,
 * and D the recorded parent it diffs against, run 3. */
TEST(tui_reeval_stopped_run_without_positions_is_no_parent) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(start_reps(&t, "reeval_empty", SLOW_REEVAL, 16), 0);
    TMUX_WAIT(&t, "policy", 30);
    CHECK_MSG(tmux_shows_pos(&t, 150, 30), "the prompt's positions never showed");
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "as run 2: 0 of ", 10);
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "re-evaluating run 1 under full, w=4, tau=0.50, theta=0.10 as run 3: ", 10);
    TMUX_WAIT(&t, "as run 3: 64 of ", 10);
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "re-evaluating run 3 under full, w=2", 10);
    TMUX_WAIT(&t, "run 4: full, w=2", 30);
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "parent run 1", 5);
    CHECK_MSG(tmux_gone(&t, "parent run 3", 1), "the inspector names a run whose positions it does not hold");
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 4 vs its parent 3", 10);
    tmux_keys(&t, "Escape");
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = runs_table(&t);
    int n1 = 0, n3 = 0, n4 = 0;
    const char *a = r ? strstr(r, "\n1,,done,16,") : NULL, *b = r ? strstr(r, "\n2,1,interrupted,8,0\r") : NULL;
    const char *c = r ? strstr(r, "\n3,1,interrupted,4,") : NULL, *d = r ? strstr(r, "\n4,3,done,2,") : NULL;
    CHECK_MSG(a && b && c && d && sscanf(a, "\n1,,done,16,%d", &n1) == 1 &&
                  sscanf(c, "\n3,1,interrupted,4,%d", &n3) == 1 && sscanf(d, "\n4,3,done,2,%d", &n4) == 1,
              "runs:\n%s", r ? r : "");
    CHECK_MSG(n3 > 0 && n3 < n1 && n4 == n1, "positions: run 1 %d, run 3 %d, run 4 %d", n1, n3, n4);
    free(r);
    tmux_stop(&t);
}
