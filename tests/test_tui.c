/* test_tui.c — the TUI end to end through tmux, the database checked afterwards.
 *
 * The TUI end to end, driven through tmux: keys in, screen
 * text out (capture-pane), database checked afterwards. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "views/geom.h"
#include "views/keymap.h"
#include "views/layout.h"
#include "test.h"
#include "tmux.h"

static char *query(Tmux *t, const char *sql) {
    int st;
    return test_runf(&st, "%s query --db %s/ahascope.db --csv \"%s\"", test_bin_abs(), t->dir, sql);
}

TEST(tui_steps_plays_and_quits_cleanly) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "basic", 120, 40, NULL, "--policy full"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);      /* "Once upon a time" and BOS prefilled */
    TMUX_WAIT(&t, "Once upon a time", 1);
    TMUX_WAIT(&t, "policy full", 1);
    tmux_keys(&t, "Space Space Space");
    TMUX_WAIT(&t, "pos 7/512", 5);
    tmux_keys(&t, "p");
    TMUX_WAIT(&t, "playing", 2);
    CHECK_MSG(tmux_shows_pos(&t, 12, 5), "playing never reached position 12");
    tmux_keys(&t, "p");
    TMUX_WAIT(&t, "paused", 2);
    tmux_keys(&t, "[ [");
    TMUX_WAIT(&t, "heads @ pos", 1);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT status, n_tokens >= 13, parent_run_id IS NULL FROM runs");
    CHECK_MSG(r && strstr(r, "done,1,1"), "runs: %s", r);
    free(r);
    tmux_stop(&t);
}

TEST(tui_setting_change_reevaluates_as_linked_run) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "settings", 120, 40, NULL, "--policy full --window 16");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "Space Space Space Space Space");
    TMUX_WAIT(&t, "pos 9/512", 5);
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "w 8 ", 5);
    tmux_keys(&t, "P P Enter"); /* the picker opens on full; P again moves down to local */
    TMUX_WAIT(&t, "policy local", 5);
    TMUX_WAIT(&t, "pos 9/512", 5); /* same tokens, re-evaluated */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
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
    TMUX_NEED_TUI();
    Tmux t;
    /* tall enough for the whole help: 120x40 until it outgrew 36 lines */
    int rows = view_help_count() + 4 > 40 ? view_help_count() + 4 : 40;
    tmux_open_stories(&t, "sql", 120, rows, NULL, "--policy full");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, ": \"SELECT 40+2 AS answer\" Enter");
    TMUX_WAIT(&t, "answer", 5);
    TMUX_WAIT(&t, "42", 1);
    tmux_keys(&t, "Escape : \"DELETE FROM runs\" Enter");
    TMUX_WAIT(&t, "read-only", 5);
    tmux_keys(&t, "Escape m");
    TMUX_WAIT(&t, "router score", 3);
    tmux_keys(&t, "m");
    TMUX_WAIT(&t, "oracle", 3);
    tmux_keys(&t, "?");
    TMUX_WAIT(&t, "edit prompt", 3);
    /* on a screen four rows taller than the help, the whole help shows, down to the key table's last line */
    TMUX_WAIT(&t, view_help_line(view_help_count() - 1)->help, 1);
    char *help = tmux_capture(&t);
    CHECK_MSG(help && strstr(help, "Esc  q") && strstr(help, "close the top pane (one per press); q quits if none") &&
                  strstr(help, "any key closes") && !strstr(help, "more \xe2\x86\x93"),
              "the help at 120x%d:\n%s", rows, help ? help : "");
    free(help);
    tmux_keys(&t, "Escape v");
    TMUX_WAIT(&t, "per-head global rate", 3);
    tmux_keys(&t, "NPage NPage NPage");
    TMUX_WAIT(&t, "no recorded evaluations", 3);
    tmux_keys(&t, "Escape s");
    TMUX_WAIT(&t, "exported run 1", 5);
    char path[1100];
    snprintf(path, sizeof path, "%s/ahascope-run1.json", t.dir);
    CHECK(access(path, R_OK) == 0);
    tmux_keys(&t, "e C-u \"Lily\" Enter");
    TMUX_WAIT(&t, "Lily", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT prompt FROM runs WHERE run_id=2");
    CHECK_MSG(r && strstr(r, "Lily"), "%s", r);
    free(r);
    tmux_stop(&t);
}

/* An empty prompt starts from BOS alone (not the default "Once upon a
 * time"), and is recorded as given; a model that is not there ends the TUI
 * with one line naming tui and the file, status 1. */
TEST(tui_empty_prompt_and_missing_model) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "empty", 120, 40, NULL, "--policy full --prompt ''");
    TMUX_WAIT(&t, "1 prompt + 0 generated", 10);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT quote(prompt), (SELECT SUM(is_prompt) FROM tokens), (SELECT token_id FROM tokens WHERE pos=0) "
                        "FROM runs");
    CHECK_MSG(r && strstr(r, "\n'',1,1"), "%s", r);
    free(r);
    tmux_stop(&t);
    tmux_open_stories(&t, "nomodel", 120, 40, NULL, "--model /nonexistent/m.bin");
    TMUX_WAIT(&t, "EXITED 1", 10);
    char *s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "ahascope tui: /nonexistent/m.bin: cannot open model"), "%s", s);
    free(s);
    tmux_stop(&t);
}

TEST(tui_small_terminal_and_resize) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "small", 60, 20, NULL, "--policy full --no-record");
    TMUX_WAIT(&t, "enlarge to 80", 10);
    tmux_keys(&t, "P p"); /* on the "enlarge" screen keys do nothing: no policy change, no play */
    usleep(300000);
    int st;
    free(test_runf(&st, "tmux -L %s resize-window -x 100 -y 30", t.sock));
    TMUX_WAIT(&t, "policy full", 5);
    char *s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "paused") && !strstr(s, "re-evaluating"), "keys acted on the enlarge screen:\n%s", s);
    free(s);
    /* at 100x30 the help scrolls: End brings its last line, another key closes it */
    tmux_keys(&t, "?");
    TMUX_WAIT(&t, "more \xe2\x86\x93", 3);
    TMUX_WAIT(&t, "scroll the help", 1);
    tmux_keys(&t, "End");
    TMUX_WAIT(&t, view_help_line(view_help_count() - 1)->help, 3);
    TMUX_WAIT(&t, "more \xe2\x86\x91", 1);
    tmux_keys(&t, "x");
    TMUX_WAIT(&t, "arrows head", 3); /* the status line's hints for the panes again */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char path[1100];
    snprintf(path, sizeof path, "%s/ahascope.db", t.dir);
    CHECK(access(path, F_OK) != 0); /* --no-record wrote nothing */
    tmux_stop(&t);
}

TEST(tui_ascii_and_no_color) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "ascii", 100, 30, "NO_COLOR=1", "--ascii --no-record");
    /* no policy asked for: the shipped stories260K routers at w = 16 */
    char *s = tmux_wait(&t, "pos 4/512", 10);
    /* the full header, or the compact one where the global share would not fit beside it */
    CHECK_MSG(s && (strstr(s, "policy aha | w 16") || strstr(s, "aha | w16 |") || strstr(s, "|aha|w16|")), "%s",
              s ? s : "");
    int high = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) high |= *p >= 0x80;
    CHECK_MSG(!high, "--ascii screen holds non-ASCII bytes");
    free(s);
    int st;
    char *esc = test_runf(&st, "tmux -L %s capture-pane -p -e", t.sock);
    CHECK_MSG(esc && !strstr(esc, "38;5;") && !strstr(esc, "48;5;"), "NO_COLOR screen has colours");
    free(esc);
    tmux_keys(&t, "C-c");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

TEST(tui_answers_keys_while_a_step_is_slow) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "slow", 120, 40, "AHASCOPE_TEST_STEP_DELAY_MS=1500", "--policy full --no-record");
    TMUX_WAIT(&t, "(prefilling the prompt", 15); /* the first step is under way: not "press space" */
    TMUX_WAIT(&t, "pos 4/512", 15);
    tmux_keys(&t, "p");
    TMUX_WAIT(&t, "playing", 3);
    usleep(200000); /* now inside a 1.5 s step */
    double t0 = clock_now();
    tmux_keys(&t, "m");
    TMUX_WAIT(&t, "router score", 3);
    double dt = clock_now() - t0;
    CHECK_MSG(dt < 0.5 * tmux_patience(), "a key took %.0f ms to show during a slow step", dt * 1e3);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5); /* quits without waiting for the step */
    tmux_stop(&t);
}

TEST(tui_refuses_without_a_terminal) {
    SKIP_UNLESS_SHARED();
    int st;
    char *out = test_runf(&st, "%s tui --model %s --no-record </dev/null", test_bin_abs(),
                   test_stories_model());
    CHECK_INT(st, 1);
    CHECK_MSG(strstr(out, "needs a terminal") != NULL, "%s", out);
    free(out);
    out = test_runf(&st, "%s tui --bogus", test_bin_abs());
    CHECK(st == 2 && strstr(out, "ahascope tui: unknown flag")); /* a usage error */
    free(out);
    out = test_runf(&st, "%s tui --help", test_bin_abs());
    CHECK(st == 0 && strstr(out, "usage: ahascope tui"));
    free(out);
}

#include <cjson/cJSON.h>

#include "engine/routers.h"
#include "engine/tokenize/tokenize.h"

/* The text of golden ids[from..to) of the first prompt, as the TUI prints it. */
static int golden_text(int from, int to, char *out, size_t cap) {
    char *js = test_read_file(test_shared("golden/stories260K_greedy.json"), NULL);
    cJSON *g = cJSON_Parse(js);
    free(js);
    cJSON *ids = cJSON_GetObjectItem(cJSON_GetArrayItem(g, 0), "ids");
    Tokenizer tok;
    Err e;
    int ok = ids && tok_load(&tok, test_stories_tokenizer(), 512, &e) == 0;
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
    TMUX_NEED_TUI();
    char want[256];
    CHECK(golden_text(1, 10, want, sizeof want) == 0); /* prompt, then the first 5 generated tokens */
    Tmux t;
    tmux_open_stories(&t, "golden", 120, 40, NULL, "--policy full --db golden.db");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "Space Space Space Space Space");
    TMUX_WAIT(&t, "pos 9/512", 5);
    TMUX_WAIT(&t, want, 2);
    /* a click on heatmap cell L2 H3 (an SGR mouse report, 1-based) selects it; where the cell is
     * comes from the same layout and geometry the TUI draws with */
    ViewModel vm;
    view_init(&vm, 5, 8, NULL);
    LayoutOpts lo = {5, 8, 0, 0, 1, view_help_count(), 1};
    Layout lay;
    view_layout(120, 40, &lo, &lay);
    const ViewRect *hr = &lay.pane[VIEW_PANE_HEATMAP];
    ViewHeatGeom hg;
    view_heat_geom(&vm, hr->w, hr->h, 1, &hg);
    int cx = hr->x + hg.x0 + 3 * (hg.cw + hg.gap) + 1, cy = hr->y + hg.y0 + 2 * hg.rh + 1;
    view_free(&vm);
    int st;
    free(test_runf(&st, "tmux -L %s send-keys -l \"$(printf '\\033[<0;%d;%dM')\"", t.sock, cx, cy));
    TMUX_WAIT(&t, "L2 H3", 3);
    /* a bigger terminal shows the fields a narrow header drops */
    free(test_runf(&st, "tmux -L %s resize-window -x 220 -y 60", t.sock));
    TMUX_WAIT(&t, "golden.db run 1", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    /* replay: the same tokens, from the database alone */
    Tmux r;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db golden.db", test_bin_abs());
    tmux_open(&r, "replay", t.dir, 220, 40, NULL, cmd, 0);
    TMUX_WAIT(&r, "replay golden.db run 1", 10);
    TMUX_WAIT(&r, want, 2);
    TMUX_WAIT(&r, "pos 9/512", 1);
    tmux_keys(&r, "Space");
    TMUX_WAIT(&r, "end of the recorded run", 3);
    tmux_keys(&r, "w");
    TMUX_WAIT(&r, "a new window needs the model", 3);
    TMUX_WAIT(&r, "replay run 1", 1); /* after keys, the header still says it is a recording */
    tmux_keys(&r, "q");
    TMUX_WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
}

/* A replay draws its first frame with no key pressed. It used to stay blank
 * until a key: getch() repainted the untouched-since-initscr stdscr over the
 * frame. No Ctrl-L here (tmux_wait's remedy for tmux's own wipes), so the
 * program starts after the pane has settled. */
TEST(tui_replay_first_frame_without_a_key) {
    TMUX_NEED_TUI();
    const char *dir = test_tmp("firstframe");
    int st;
    free(test_runf(&st, "mkdir -p %s && cd %s && %s record --db ff.db --model %s --steps 12 --temperature 0", dir, dir,
                   test_bin_abs(), test_stories_model()));
    CHECK_MSG(st == 0, "record failed");
    Tmux r;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db ff.db", test_bin_abs());
    tmux_open(&r, "firstframe", dir, 100, 30, NULL, cmd, 1);
    int shown = 0;
    for (double end = clock_now() + 15; !shown && clock_now() < end; usleep(100000)) {
        char *s = tmux_capture(&r);
        shown = s && strstr(s, "ahascope replay run 1 \xe2\x94\x82 stories260K.bin"); /* a replay says so first */
        free(s);
    }
    CHECK_MSG(shown, "the replay stayed blank with no key pressed");
    tmux_keys(&r, "p"); /* a replay plays: the cursor runs through the recording */
    CHECK(tmux_shows(&r, "playing 10/s", 3));
    CHECK(tmux_shows(&r, "end of the recorded run", 5));
    tmux_keys(&r, "o"); /* θ from the stored masses, no model needed */
    CHECK(tmux_shows(&r, "replay re-scored at tau 0.50, theta 0.05", 5));
    CHECK(tmux_shows(&r, "\xce\xb8 0.05 (gates", 2)); /* the gates were recorded at θ 0.10 */
    CHECK(tmux_shows(&r, "0.50/0.10)", 1));
    tmux_keys(&r, "q");
    tmux_stop(&r);
}

/* The token ids of a run, "1,403,…", from `query` (NULL on failure). */
static char *run_tokens(const char *db, int run) {
    int st;
    char *out = test_runf(&st, "%s query --db %s --csv \"SELECT group_concat(token_id) FROM (SELECT token_id FROM tokens "
                        "WHERE run_id=%d ORDER BY pos)\"", test_bin_abs(), db, run);
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
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "repro", 120, 40, NULL,
               "--policy full --window 16 --seed 12 --temperature 1.0 --steps 60 --prompt 'Once upon a time'");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space");
    TMUX_WAIT(&t, "pos 14/512", 5);
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "w 8 ", 5);
    tmux_keys(&t, "W");
    TMUX_WAIT(&t, "w 16 ", 5);
    TMUX_WAIT(&t, "pos 14/512", 5);
    tmux_keys(&t, "+ + + + + p"); /* as fast as it goes */
    TMUX_WAIT(&t, "sequence finished", 20);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char db[1100], rec[1100];
    snprintf(db, sizeof db, "%s/ahascope.db", t.dir);
    snprintf(rec, sizeof rec, "%s/record.db", t.dir);
    int st;
    char *row = test_runf(&st, "%s query --db %s --csv \"SELECT parent_run_id, prompt, policy, window, seed, temperature, topp, "
                        "steps, status FROM runs WHERE run_id=3\"", test_bin_abs(), db);
    char prompt[64] = "", policy[16] = "", seed[32] = "", status[16] = "";
    int parent = 0, window = 0, steps = 0;
    double temp = 0, topp = 0;
    char *nl = row ? strchr(row, '\n') : NULL;
    int got = nl ? sscanf(nl + 1, "%d,%63[^,],%15[^,],%d,%31[^,],%lf,%lf,%d,%15[a-z]", &parent, prompt, policy, &window,
                          seed, &temp, &topp, &steps, status) : 0;
    CHECK_MSG(got == 9 && parent == 2 && !strcmp(status, "done"), "runs: %s", row);
    free(row);
    char *out = test_runf(&st, "%s record --db %s --model %s --prompt '%s' --policy %s --window %d --seed %s --temperature %.9g "
                        "--topp %.9g --steps %d", test_bin_abs(), rec, test_stories_model(), prompt, policy, window, seed, temp, topp, steps);
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
    TMUX_NEED_TUI();
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
    tmux_open_stories(&t, "rmeta", 220, 40, "NO_COLOR=1", flags);
    TMUX_WAIT(&t, "trained for window 8, used here at window 16", 10);
    TMUX_WAIT(&t, "\xcf\x84 0.70", 5); /* τ */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *q = query(&t, "SELECT printf('%.2f', tau), window FROM runs");
    CHECK_MSG(q && strstr(q, "0.70,16"), "%s", q);
    free(q);
    tmux_stop(&t);
}

/* Logits that cannot be sampled stop the TUI's run: the reason on the
 * status line, the run recorded as failed, no garbage token after the prompt. */
TEST(tui_unsampleable_logits_fail_the_run) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "tiny", 160, 40, NULL, "--policy full --temperature 1e-38");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "position 5: --temperature 1e-38 is too small", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT status, n_tokens FROM runs");
    CHECK_MSG(r && strstr(r, "failed,5"), "%s", r);
    free(r);
    tmux_stop(&t);
}

/* ---- the SQL pane ---- */

#define ENDLESS_COUNT "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"

/* Seconds until the screen shows text (a large number if it never does). */
static double time_until(Tmux *t, const char *text, double secs) {
    double t0 = clock_now();
    return tmux_shows(t, text, secs) ? clock_now() - t0 : 1e9;
}

/* An endless query runs off the UI thread: the progress shows, keys are
 * answered meanwhile, and Esc or Ctrl-C stop it at once (Ctrl-C quits only
 * when no query runs). Today's UI froze until SIGKILL. */
TEST(tui_sql_runs_off_the_ui_thread_and_cancels) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "sqlcancel", 120, 40, NULL, "--policy full");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, ": \"" ENDLESS_COUNT "\" Enter");
    TMUX_WAIT(&t, "Esc cancels", 3);
    tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 5/512", 5); /* the engine and the keys go on meanwhile */
    TMUX_WAIT(&t, "rows, ", 3);    /* "sql running… 0 rows, 1.2 s" */
    tmux_keys(&t, "Escape");
    double dt = time_until(&t, "cancelled after", 3);
    CHECK_MSG(dt < 1.0 * tmux_patience(), "Esc took %.2f s to cancel", dt); /* 100 ms in the app; tmux polling and load on top */
    tmux_keys(&t, ": \"" ENDLESS_COUNT "\" Enter");
    TMUX_WAIT(&t, "Esc cancels", 3);
    tmux_keys(&t, "C-c");
    dt = time_until(&t, "cancelled after", 3);
    CHECK_MSG(dt < 1.0 * tmux_patience(), "Ctrl-C took %.2f s to cancel", dt);
    tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 6/512", 5); /* still running: Ctrl-C stopped the query, not the TUI */
    tmux_keys(&t, "Escape q"); /* the text pane open: q would close it */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* A query stops at the time limit (--sql-timeout), and an endless result
 * keeps its first 10000 rows and says so. */
TEST(tui_sql_time_limit_and_row_cap) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "sqllimit", 120, 40, NULL, "--policy full --sql-timeout 1");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, ": \"" ENDLESS_COUNT "\" Enter");
    TMUX_WAIT(&t, "stopped by the 1 s time limit", 6);
    tmux_keys(&t, ": \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x AS n FROM c\" Enter");
    TMUX_WAIT(&t, "first 10000 rows only", 10);
    TMUX_WAIT(&t, "lines 1-", 1);
    tmux_keys(&t, "Escape q"); /* the text pane open: q would close it */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* DROP TABLE is refused by its own name (it was "DELETE is not allowed"). */
TEST(tui_sql_refusal_names_the_statement) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "sqldrop", 120, 40, NULL, "--policy full");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, ": \"DROP TABLE runs\" Enter");
    TMUX_WAIT(&t, "DROP TABLE is not allowed", 5);
    tmux_keys(&t, "Escape q"); /* the text pane open: q would close it */
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT COUNT(*) FROM runs");
    CHECK_MSG(r && strstr(r, "\n1"), "%s", r);
    free(r);
    tmux_stop(&t);
}

/* `:` starts empty (typing used to append to the last query); ↑/↓ walk
 * the queries entered before. */
TEST(tui_sql_prompt_starts_empty_with_history) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "sqlhist", 120, 40, NULL, "--policy full");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, ": \"SELECT 1 AS first\" Enter");
    TMUX_WAIT(&t, "of 1 \xc2\xb7 SELECT 1 AS first", 5);
    tmux_keys(&t, ": \"SELECT 2 AS second\" Enter");
    TMUX_WAIT(&t, "of 1 \xc2\xb7 SELECT 2 AS second", 5);
    tmux_keys(&t, ": Up Up");
    TMUX_WAIT(&t, "sql: SELECT 1 AS first", 3);
    tmux_keys(&t, "Down");
    TMUX_WAIT(&t, "sql: SELECT 2 AS second", 3);
    tmux_keys(&t, "Up Enter");
    TMUX_WAIT(&t, "of 1 \xc2\xb7 SELECT 1 AS first", 5);
    tmux_keys(&t, "Escape q"); /* the text pane open: q would close it */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* A prompt longer than the 1023 bytes the `e` editor once held: about 350
 * stories260K tokens of its 512, some of its characters two bytes long. */
static size_t long_edit_prompt(char *out, size_t cap) {
    size_t n = 0;
    for (int i = 0; n < 1040; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s", i % 5 ? "Once upon a time, there was a little girl named Lily. "
                                                            : "Zo\xc3\xab ate a cake. ");
    n += (size_t)snprintf(out + n, cap - n, "Then they went home.");
    return n;
}

/* Upper-case hex of n bytes, as SQLite's hex() writes them. */
static void to_hex(const char *s, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02X", (unsigned char)s[i]);
    out[2 * n] = 0;
}

/* `e` on a prompt file of more than 1024 bytes: the editor holds all of it
 * (it kept 1023 bytes and ran those), shows its end, and after Home its
 * start; text typed at both ends makes the new run's prompt byte for byte,
 * and `e` then shows that whole prompt. */
TEST(tui_edit_prompt_keeps_a_long_prompt_whole) {
    TMUX_NEED_TUI();
    static char text[1400], want[1500], hex[3000], flags[1300];
    size_t n = long_edit_prompt(text, sizeof text);
    const char *path = test_tmp("editlong.txt");
    CHECK(n > 1024);
    CHECK_INT(test_write_file(path, text, (long)n), 0);
    snprintf(flags, sizeof flags, "--policy full --steps 512 --prompt-file %s", path);
    Tmux t;
    tmux_open_stories(&t, "editlong", 120, 40, NULL, flags);
    TMUX_WAIT(&t, " prompt + 0 generated", 15);
    tmux_keys(&t, "e");
    TMUX_WAIT(&t, "went home.\xe2\x96\x8f", 3);                    /* the end, the cursor after it */
    TMUX_WAIT(&t, "prompt: \xe2\x80\xa6", 1);                       /* its start hidden, and marked */
    tmux_keys(&t, "Home");
    TMUX_WAIT(&t, "prompt: Zo\xc3\xab ate a cake", 3);
    tmux_keys(&t, "\"Long ago. \" End \" The end.\" Enter");
    TMUX_WAIT(&t, "went home. The end. ", 15);                     /* the new run's tokens, not the editor */
    tmux_keys(&t, "Home");                                     /* the token cursor to the first */
    TMUX_WAIT(&t, "\n\xe2\x94\x82Long ago. Zo", 5);
    tmux_keys(&t, "e");
    TMUX_WAIT(&t, "home. The end.\xe2\x96\x8f", 3);
    tmux_keys(&t, "Home");
    TMUX_WAIT(&t, "prompt: Long ago. Zo\xc3\xab", 3);
    tmux_keys(&t, "Escape q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    size_t k = (size_t)snprintf(want, sizeof want, "Long ago. %s The end.", text);
    char *r = query(&t, "SELECT run_id, hex(prompt) FROM runs ORDER BY run_id");
    to_hex(text, n, hex);
    CHECK_MSG(r && strstr(r, "\n1,") && strstr(r, hex), "run 1 is not the prompt file's text:\n%s", r ? r : "");
    to_hex(want, k, hex);
    CHECK_MSG(r && strstr(r, "\n2,") && strstr(r, hex), "run 2 is not the edited prompt, whole:\n%s", r ? r : "");
    free(r);
}

/* The numbers of the "rowNNN" cells on screen: lowest and highest. */
static int rows_shown(const char *s, int *lo, int *hi) {
    int n = 0;
    *lo = 1 << 30, *hi = -1;
    for (const char *p = s; p && (p = strstr(p, "row")); p += 3) {
        int v;
        if (sscanf(p + 3, "%3d", &v) == 1 && p[3] >= '0' && p[3] <= '9') {
            if (v < *lo) *lo = v;
            if (v > *hi) *hi = v;
            n++;
        }
    }
    return n;
}

/* The rows shown once the pane settles: captured until two in a row agree
 * and hold want_lo (0: any) at the top, for up to 5 s; a capture can catch a
 * frame half drawn. The last capture goes to *s (malloc'd). */
static int rows_settled(Tmux *t, int want_lo, int *lo, int *hi, char **s) {
    int n = 0, plo = -2, phi = -2;
    *s = NULL;
    for (int tries = 0; tries < 25; tries++) {
        if (tries) usleep(200000);
        free(*s);
        *s = tmux_capture(t);
        n = rows_shown(*s, lo, hi);
        if (*lo == plo && *hi == phi && (!want_lo || *lo == want_lo) && strstr(*s, "hdrcol")) break;
        plo = *lo, phi = *hi;
    }
    return n;
}

/* The header row stays while PgDn/PgUp move by exactly the rows shown
 * (80×24: the pane shows fewer than 10 rows, which PgDn used to skip);
 * ←/→ and h/l scroll a wide result sideways. */
TEST(tui_sql_pane_pages_keeps_header_and_scrolls_sideways) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "sqlpage", 80, 24, NULL, "--policy full");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, ": \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<300) "
                  "SELECT printf('row%03d', x) AS hdrcol FROM c\" Enter");
    TMUX_WAIT(&t, "row001", 5);
    char *s;
    int lo, hi, lo2, hi2;
    int n = rows_settled(&t, 1, &lo, &hi, &s);
    CHECK_MSG(n > 3 && lo == 1 && hi == n, "first page: %d rows, %d-%d\n%s", n, lo, hi, s);
    free(s);
    tmux_keys(&t, "NPage");
    char want[32];
    snprintf(want, sizeof want, "row%03d", hi + 1);
    TMUX_WAIT(&t, want, 5);
    rows_settled(&t, hi + 1, &lo2, &hi2, &s);
    CHECK_MSG(lo2 == hi + 1 && hi2 == 2 * hi, "after PgDn: %d-%d (page of %d)\n%s", lo2, hi2, hi, s);
    CHECK_MSG(strstr(s, "hdrcol"), "the header scrolled away:\n%s", s);
    free(s);
    tmux_keys(&t, "NPage PPage");
    TMUX_WAIT(&t, want, 5);
    rows_settled(&t, hi + 1, &lo2, &hi2, &s);
    CHECK_MSG(lo2 == hi + 1, "after PgDn PgUp: from %d\n%s", lo2, s);
    free(s);
    char sql[700] = "SELECT 0 AS c00";
    for (int i = 1; i <= 40; i++) snprintf(sql + strlen(sql), sizeof sql - strlen(sql), ", %d AS c%02d", i, i);
    char keys[800];
    snprintf(keys, sizeof keys, ": \"%s\" Enter", sql);
    tmux_keys(&t, keys);
    TMUX_WAIT(&t, "sql: 1 rows", 5); /* not "c00": the editor line shows the query while it is typed */
    s = tmux_capture(&t);
    CHECK_MSG(s && !strstr(s, "c40") && strstr(s, "cols 1-78 of 203"), "%s", s);
    free(s);
    tmux_keys(&t, "l l l l l l l l Right Right Right Right Right Right Right Right");
    TMUX_WAIT(&t, "c40", 3);
    s = tmux_capture(&t);
    CHECK_MSG(s && !strstr(s, "c00") && strstr(s, "cols 126-203 of 203"), "%s", s);
    free(s);
    tmux_keys(&t, "Left h");
    TMUX_WAIT(&t, "cols 110-187 of 203", 3);
    tmux_keys(&t, "Escape q"); /* the text pane open: q would close it */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* `v` shows the plots under their own title, not "sql (read-only)". */
TEST(tui_plots_pane_has_its_own_title) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "plotstitle", 120, 40, NULL, "--policy full --no-record");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "v");
    TMUX_WAIT(&t, "per-head global rate", 5);
    char *s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "plots \xc2\xb7 lines 1-") && !strstr(s, "sql (read-only)"), "%s", s);
    free(s);
    tmux_keys(&t, "Escape q"); /* the text pane open: q would close it */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* Setting keys faster than the model re-evaluates: one chain of the runs
 * that kept positions, each the child of the one before, however fast the
 * keys come; a run stopped before it kept any is a leaf, never a parent
 * (the next run is its sibling). */
TEST(tui_fast_setting_keys_keep_one_lineage) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "lineage", 120, 40, "AHASCOPE_TEST_STEP_DELAY_MS=300", "--policy full --window 16");
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 6; i++) { /* w W w W w W: three every ~0.2 s, the rest at once */
        tmux_keys(&t, i % 2 ? "W" : "w");
        if (i < 3) usleep(200000);
    }
    TMUX_WAIT(&t, "w 16 ", 10);
    usleep(2500000); /* let the last re-evaluation finish */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    /* among the runs with positions, every one after the first has the one before it as parent and none has
     * two such children; no run without positions is anyone's parent */
    char *r = query(&t, "WITH k AS (SELECT run_id, parent_run_id, LAG(run_id) OVER (ORDER BY run_id) AS prev FROM runs"
                        " WHERE n_tokens > 0) SELECT COUNT(*), SUM(parent_run_id IS NULL), SUM(parent_run_id = prev),"
                        " (SELECT COUNT(*) FROM (SELECT parent_run_id FROM k WHERE parent_run_id IS NOT NULL"
                        " GROUP BY parent_run_id HAVING COUNT(*) > 1)), (SELECT COUNT(*) FROM runs c JOIN runs p"
                        " ON c.parent_run_id = p.run_id WHERE p.n_tokens = 0) FROM k");
    int n = 0, roots = -1, chained = -1, forks = -1, empty_parents = -1;
    CHECK_MSG(r && sscanf(strchr(r, '\n') ? strchr(r, '\n') + 1 : "", "%d,%d,%d,%d,%d", &n, &roots, &chained, &forks,
                          &empty_parents) == 5, "%s", r);
    CHECK_MSG(n >= 2 && roots == 1 && chained == n - 1 && forks == 0 && empty_parents == 0,
              "runs with positions %d, roots %d, chained %d, forks %d, runs without positions as parents %d", n, roots,
              chained, forks, empty_parents);
    free(r);
    tmux_stop(&t);
}

/* A key at a limit changes nothing and records nothing; a threshold the
 * policy does not use re-scores the stored values without a new run. */
TEST(tui_records_a_run_only_when_execution_changes) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "limits", 120, 40, NULL, "--policy full --window 1");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "w");                  /* already 1 */
    TMUX_WAIT(&t, "unchanged", 5);
    tmux_keys(&t, "o o t");              /* θ and τ: policy full uses neither */
    TMUX_WAIT(&t, "re-scored", 5);
    TMUX_WAIT(&t, "oracle \xce\xb8 <0.0001", 5); /* the bars' title shows the new θ, in its tail form */
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT COUNT(*) FROM runs");
    CHECK_MSG(r && strchr(r, '\n') && atoi(strchr(r, '\n') + 1) == 1, "runs: %s", r);
    free(r);
    tmux_stop(&t);
}

/* A re-evaluation keeps the old run on screen until its first step, then
 * names the new run; "playing" goes off at the end; top speed reads as such. */
TEST(tui_reevaluation_keeps_the_screen_and_names_the_run) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "keep", 120, 40, "AHASCOPE_TEST_STEP_DELAY_MS=1500", "--policy full --window 16 --steps 8");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "w");
    usleep(500000); /* inside the new run's slow first step */
    char *s = tmux_capture(&t);
    CHECK_MSG(s && !strstr(s, "no tokens yet") && strstr(s, "pos 4/512"), "%s", s);
    free(s);
    TMUX_WAIT(&t, "run 2: full, w=8", 10);
    tmux_keys(&t, "+ + + + + + + + + +"); /* to the top speed */
    tmux_keys(&t, "p");
    TMUX_WAIT(&t, "sequence finished", 20);
    s = tmux_capture(&t);
    CHECK_MSG(s && !strstr(s, "playing") && !strstr(s, "e+0"), "%s", s);
    free(s);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* The inspector of the running TUI explains the selected head at the cursor
 * token once it has far keys: each predictor against its threshold, the
 * executed gate, and where the head looked, beside an axis. */
TEST(tui_inspector_explains_the_verdicts) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "explain", 100, 30, NULL, "--no-record");
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 14; i++) tmux_keys(&t, "Space"); /* window 16: far keys from pos 16 on */
    TMUX_WAIT(&t, "pos 18/512", 10);
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "inspector \xc2\xb7 L0 H0 @ pos 18", 5);
    TMUX_WAIT(&t, "\xcf\x84 0.50", 5);                          /* router … τ 0.50 → … */
    TMUX_WAIT(&t, "of the mass is outside the window", 1);
    TMUX_WAIT(&t, "QAdA estimate", 1);
    TMUX_WAIT(&t, "under policy aha", 1);
    TMUX_WAIT(&t, "far ", 1);                                     /* window …% · far …% */
    /* back before the window filled: nothing was decided there */
    tmux_keys(&t, "[ [ [ [ [ [ [ [ [ [ [ [ [ [ [");
    TMUX_WAIT(&t, "no far keys at pos 3", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* A new play speed applies at once: at 0.5 steps/s the next step is 2 s
 * away; raised to 20 steps/s, steps follow within a second instead of
 * after the old interval. */
TEST(tui_speed_change_applies_at_once) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "speed", 120, 40, NULL, "--policy full --no-record");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "- - - - - - - - - -"); /* the slowest: 0.5 steps/s */
    tmux_keys(&t, "p");
    TMUX_WAIT(&t, "playing 0.5/s", 3);
    TMUX_WAIT(&t, "pos 5/512", 3); /* the first step comes at once, the next 2 s later */
    tmux_keys(&t, "+ + + + +"); /* 20 steps/s */
    double t0 = clock_now(), dt = 99;
    while (clock_now() - t0 < 5) { /* until the header shows pos 9 or later (at 20/s each shows only 50 ms) */
        char *scr = tmux_capture(&t), *at = scr ? strstr(scr, "pos ") : NULL;
        int pos = at ? atoi(at + 4) : 0;
        free(scr);
        if (pos >= 9) { dt = clock_now() - t0; break; }
        usleep(20000);
    }
    CHECK_MSG(dt < 1.2 * tmux_patience(), "at 20 steps/s, 4 steps took %.2f s: the old 2 s interval was waited out", dt);
    TMUX_WAIT(&t, "playing 20/s", 2);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* `R` summarises the run on screen and `D` diffs it against its parent,
 * in the text pane (compare's numbers, on one screen). */
TEST(tui_run_summary_and_diff_against_the_parent) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "summary", 140, 45, NULL, "--policy full --window 16");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space Space Space Space Space Space Space");
    TMUX_WAIT(&t, "pos 20/512", 10);
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 1 has no parent run", 5);
    tmux_keys(&t, "R");
    TMUX_WAIT(&t, "run 1 summary", 5);
    TMUX_WAIT(&t, "every predictor vs the oracle", 2);
    TMUX_WAIT(&t, "kv_per_kv_head", 2);
    tmux_keys(&t, "Escape");
    tmux_keys(&t, "w");
    TMUX_WAIT(&t, "run 2: full, w=8", 10);
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 2 vs its parent 1", 5);
    TMUX_WAIT(&t, "gate flips per head", 2);
    TMUX_WAIT(&t, "agree on 100.00%", 2); /* full at both windows: every head global in both */
    tmux_keys(&t, "Escape q"); /* the text pane open: q would close it */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* The shapes people open, end to end: a random-weight 16-layer model with
 * 32 heads per layer (8 KV heads), saved by `bench --save`, run with random
 * routers at 140x45 (every layer and head in the heatmap, the per-layer
 * timeline one key away) and at 80x24. */
TEST(tui_sixteen_by_thirty_two_heads_end_to_end) {
    TMUX_NEED_TUI();
    int st;
    const char *dir = test_tmp("shape1632");
    free(test_runf(&st, "mkdir -p %s && %s bench --dims 64,128,16,32,8,512,256 --save %s/m.bin --runs 1 --prompt-len 2"
                        " --decode 2", dir, test_bin_abs(), dir));
    CHECK_MSG(st == 0, "bench --save failed");
    char tok[4096];
    if (!realpath(test_stories_tokenizer(), tok)) snprintf(tok, sizeof tok, "missing-tokenizer");
    static const int sizes[][2] = {{140, 45}, {80, 24}};
    for (int k = 0; k < 2; k++) {
        Tmux t;
        char name[32], cmd[8192];
        snprintf(name, sizeof name, "shape%d", k);
        snprintf(cmd, sizeof cmd, "%s tui --model m.bin --tokenizer %s --routers random:3 --window 8 --no-record",
                 test_bin_abs(), tok);
        tmux_open(&t, name, dir, sizes[k][0], sizes[k][1], NULL, cmd, 0);
        TMUX_WAIT(&t, "policy aha", 10);
        tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space Space Space");
        TMUX_WAIT(&t, "pos 16/256", 10);
        if (k == 0) {
            TMUX_WAIT(&t, "L15 ", 2);       /* the last layer's row in the heatmap */
            TMUX_WAIT(&t, " 31 ", 2);       /* the last head's column label */
            tmux_keys(&t, "L");
            TMUX_WAIT(&t, "per layer: share of heads global", 3);
        } else {
            TMUX_WAIT(&t, "heads @ pos 16", 2);
        }
        tmux_keys(&t, "q");
        TMUX_WAIT(&t, "EXITED 0", 5);
        tmux_stop(&t);
    }
}

/* `/` searches the token stream and moves the cursor to the match. */
TEST(tui_search_moves_the_cursor) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "search", 120, 40, NULL, "--policy full --no-record");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "/ u p o n Enter");
    TMUX_WAIT(&t, "\"upon\" at pos 2", 5);
    TMUX_WAIT(&t, "heads @ pos 2", 2);
    tmux_keys(&t, "/ d r a g o n Enter");
    TMUX_WAIT(&t, "no match for \"dragon\"", 5);
    /* across tokens and in any case: "Once upon" spans three tokens */
    tmux_keys(&t, "/ o n c e Space u p o n Enter");
    TMUX_WAIT(&t, "\"once upon\" at pos 1", 5);
    /* "n" is in "Once" (1) and " upon" (2): n and N walk the matches */
    tmux_keys(&t, "/ n Enter");
    TMUX_WAIT(&t, "\"n\" at pos 2", 5);
    tmux_keys(&t, "n");
    TMUX_WAIT(&t, "\"n\" at pos 1", 5); /* wrapped round */
    tmux_keys(&t, "N");
    TMUX_WAIT(&t, "\"n\" at pos 2", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* > / < jump to the compared predictor's next missed / needless global,
 * B lists the runs and opens one as a replay, and the surprise strip shows
 * the cursor's -log p: at 80x24 and at 140x45. */
TEST(tui_jumps_to_disagreements_browses_runs_and_shows_surprise) {
    TMUX_NEED_TUI();
    static const int size[2][2] = {{80, 24}, {140, 45}};
    for (int s = 0; s < 2; s++) {
        Tmux t;
        tmux_open_stories(&t, s ? "jump140" : "jump80", size[s][0], size[s][1], NULL, "");
        TMUX_WAIT(&t, "pos 4/512", 10);
        tmux_keys(&t, "+ +"); /* 50 steps a second, not 10: 1 s to position 60, not 6 */
        tmux_keys(&t, "p");
        CHECK_MSG(tmux_shows_pos(&t, 60, 20), "playing never reached position 60");
        tmux_keys(&t, "p");
        TMUX_WAIT(&t, "paused", 5);
        tmux_keys(&t, "Home \\>");
        TMUX_WAIT(&t, "missed global at pos", 5);
        TMUX_WAIT(&t, "AHA vs oracle", 2);
        tmux_keys(&t, "\\<");
        TMUX_WAIT(&t, "needless global at pos", 5);
        if (s == 1) TMUX_WAIT(&t, "log p", 2); /* the strip has room from 3 token lines up */
        tmux_keys(&t, "w");
        TMUX_WAIT(&t, "run 2:", 10);
        /* the re-evaluation's last word would otherwise land on the replay's line, on a busy machine */
        CHECK_MSG(tmux_gone(&t, "re-evaluating", 30), "the re-evaluation did not end");
        tmux_keys(&t, "B");
        TMUX_WAIT(&t, "open run:", 5);
        TMUX_WAIT(&t, "tokens", 2); /* the list's header */
        tmux_keys(&t, "1 Enter");
        /* the load's last word: Esc would stop the load while it runs (the sanitizer build loads slowly),
         * and a status set meanwhile (w's below) would hide its progress line, which a wait cannot then see */
        TMUX_WAIT(&t, "replay of run 1", 30);
        TMUX_WAIT(&t, "Esc back to the live run", 1);
        CHECK_MSG(tmux_gone(&t, "runs: an id", 2), "Enter left the run list open"); /* it has done its work */
        tmux_keys(&t, "w"); /* a replay opened from a live session says how to get back, not "--replay" */
        TMUX_WAIT(&t, "(Esc: the live run)", 3);
        tmux_keys(&t, "Escape"); /* with no pane open, one Esc leaves the replay */
        TMUX_WAIT(&t, "back to the live run", 10);
        char *live = tmux_capture(&t);
        CHECK_MSG(live && !strstr(live, "replay run"), "%s", live ? live : ""); /* the header: live again */
        free(live);
        tmux_keys(&t, "End Space"); /* the live run steps on from where it was left (60 or later) */
        CHECK_MSG(tmux_shows_pos(&t, 61, 10), "the live run did not step on");
        tmux_keys(&t, "B");
        TMUX_WAIT(&t, "open run:", 5);
        tmux_keys(&t, "9 9 Enter");
        TMUX_WAIT(&t, "no run 99", 5);
        tmux_keys(&t, "q");
        TMUX_WAIT(&t, "EXITED 0", 5);
        tmux_stop(&t);
    }
}

/* A run recorded by the TUI (which ranks each head's far positions by
 * default) explains itself in a replay, with no model: the inspector shows
 * the far share and the heaviest far positions with their text. */
TEST(tui_replay_explains_where_heads_looked_without_the_model) {
    TMUX_NEED_TUI();
    Tmux t;
    tmux_open_stories(&t, "replaytop", 140, 45, NULL, "--window 8");
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "+ +"); /* 50 steps a second, not 10 */
    tmux_keys(&t, "p");
    CHECK_MSG(tmux_shows_pos(&t, 30, 20), "playing never reached position 30");
    tmux_keys(&t, "p q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    Tmux r;
    tmux_open_stories(&r, "replaytop", 140, 45, NULL, "--replay");
    TMUX_WAIT(&r, "replay of run 1", 10);
    tmux_keys(&r, "End Enter");
    TMUX_WAIT(&r, "inspector", 5);
    char *scr = tmux_wait(&r, "recorded: far ", 5);
    const char *line = scr ? strstr(scr, "recorded: far ") : NULL;
    CHECK_MSG(line && strstr(line, " pos ") && strchr(line, '"'), "%s", scr ? scr : "(no screen)");
    free(scr);
    tmux_keys(&r, "q");
    TMUX_WAIT(&r, "EXITED 0", 5);
    tmux_stop(&r);
}

/* ---- generated Hugging Face folders at the shapes people open ------------- */

/* Start `ahascope tui ARGS` in dir (which holds the database) in a cols×rows pane. */
static int tmux_start_in(Tmux *t, const char *name, const char *dir, int cols, int rows, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s tui --seed 1 --temperature 0 --window 8 %s", test_bin_abs(), args);
    return tmux_open(t, name, dir, cols, rows, NULL, cmd, 0);
}

/* `bench --arch ARCH --dims DIMS --save-hf DIR/m --save-routers DIR/r.st` in a fresh DIR. */
static const char *make_hf_folder(const char *name, const char *arch, const char *dims) {
    const char *dir = test_tmp(name);
    int st;
    char *out = test_runf(&st, "mkdir -p %s && %s bench --arch %s --dims %s --dtype bf16 --save-hf %s/m "
                               "--save-routers %s/r.st 2>&1", dir, test_bin_abs(), arch, dims, dir, dir);
    if (st != 0) test_fail(__FILE__, __LINE__, "bench --save-hf: %s", out ? out : "");
    free(out);
    return st == 0 ? dir : NULL;
}

/* Every heatmap row label L0, L<step>, … up to last layer starts a screen line
 * (the bars pane has the same labels, but never at the left edge). */
static int heatmap_rows_shown(const char *scr, int n_layers, int step) {
    for (int l = 0; l < n_layers; l += step) {
        char label[32];
        snprintf(label, sizeof label, "\n\xe2\x94\x82L%d ", l);
        if (!strstr(scr, label)) return 0;
    }
    return 1;
}

/* The large screen of a generated folder: all layers in the heatmap, the
 * last heads labelled, the timeline scrolled to the last layer, the
 * inspector's verdicts there; then the recorded run's shape. */
static void hf_shape_large(const char *dir, const char *name, int L, int H, int KV, int dim, int step, const char *arch) {
    Tmux t;
    tmux_start_in(&t, name, dir, 140, 45, "--model m --routers r.st");
    TMUX_WAIT(&t, "policy aha", 10);
    tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space Space Space");
    TMUX_WAIT(&t, "pos 23/256", 10);
    char *scr = tmux_capture(&t), want[64];
    CHECK_MSG(scr && heatmap_rows_shown(scr, L, step), "not every layer in the heatmap:\n%s", scr ? scr : "");
    snprintf(want, sizeof want, " %d ", H - 1);
    CHECK_MSG(scr && strstr(scr, want), "head %d not labelled:\n%s", H - 1, scr ? scr : "");
    free(scr);
    snprintf(want, sizeof want, "of %d \xe2\x94\x80", L * H);
    TMUX_WAIT(&t, want, 2);                                   /* timeline: heads a-b of L·H */
    TMUX_WAIT(&t, "L0H0", 1);
    tmux_keys(&t, "Tab Tab");                            /* focus: the timeline */
    for (int i = 0; i < L + 4; i++) tmux_keys(&t, "j");
    snprintf(want, sizeof want, "L%dH0", L - 1);
    TMUX_WAIT(&t, want, 5);
    tmux_keys(&t, "Enter");
    snprintf(want, sizeof want, "inspector \xc2\xb7 L%d H0 @ pos 23", L - 1);
    TMUX_WAIT(&t, want, 5);
    TMUX_WAIT(&t, "\xcf\x84 0.50 \xe2\x86\x92 ", 2);        /* router … τ 0.50 → local/global */
    TMUX_WAIT(&t, "under policy aha", 1);
    TMUX_WAIT(&t, "log p", 1);                                /* the surprise strip under the tokens */
    tmux_keys(&t, "Escape \\>");                           /* AHA vs oracle: the next missed global */
    char *jump = tmux_wait(&t, "(AHA vs oracle)", 3);     /* "missed global at pos P, L#H# (AHA vs oracle)" */
    if (!jump) TMUX_WAIT(&t, "no missed global of AHA", 3);   /* or none in the history */
    free(jump);
    tmux_keys(&t, "R");
    TMUX_WAIT(&t, "1 summary", 5); /* the pane title "run 1 summary", not the key bar's "R summary" */
    tmux_keys(&t, "Escape B");                           /* the run browser */
    TMUX_WAIT(&t, "open run:", 5);
    tmux_keys(&t, "Escape Escape q"); /* the editor, then the run list, then quit */
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    char *r = query(&t, "SELECT arch, n_layers, n_heads, n_kv_heads, dim, vocab_size, status FROM runs");
    snprintf(want, sizeof want, "hf-%s,%d,%d,%d,%d,512,done", arch, L, H, KV, dim);
    CHECK_MSG(r && strstr(r, want), "runs: %s (want %s)", r, want);
    free(r);
    r = query(&t, "SELECT COUNT(DISTINCT layer), COUNT(DISTINCT head), COUNT(*) = (SELECT n_tokens FROM runs) * "
                  "COUNT(DISTINCT layer) * COUNT(DISTINCT head) FROM decisions");
    snprintf(want, sizeof want, "%d,%d,1", L, H);
    CHECK_MSG(r && strstr(r, want), "decisions: %s (want %s)", r, want);
    free(r);
}

/* 80×24: the heatmap scrolls to the last layer and head, and the inspector
 * stacks its verdicts beside it. */
static void hf_shape_small(const char *dir, const char *name, int L, int H) {
    Tmux t;
    tmux_start_in(&t, name, dir, 80, 24, "--model m --routers r.st --no-record");
    TMUX_WAIT(&t, "policy aha", 10);
    for (int i = 0; i < L + 4; i++) tmux_keys(&t, "j");
    for (int i = 0; i < H + 4; i++) tmux_keys(&t, "l");
    char want[64];
    snprintf(want, sizeof want, "\xc2\xb7 L%d H%d ", L - 1, H - 1);
    TMUX_WAIT(&t, want, 5);                                   /* heatmap title: the selection */
    snprintf(want, sizeof want, "-%d of %d", L - 1, L);
    if (L > 16) TMUX_WAIT(&t, want, 2);                       /* and which layers show, when not all do */
    snprintf(want, sizeof want, "\n\xe2\x94\x82L%d ", (L - 1) / 2 * 2);
    TMUX_WAIT(&t, want, 2);                                   /* its row is on screen */
    TMUX_WAIT(&t, "AHA | oracle \xce\xb8 0.10", 2);          /* the bars name both columns at 80 columns */
    tmux_keys(&t, "Enter");
    snprintf(want, sizeof want, "inspector \xc2\xb7 L%d H%d", L - 1, H - 1);
    TMUX_WAIT(&t, want, 5);
    TMUX_WAIT(&t, "\xcf\x84 0.50 \xe2\x86\x92 ", 2);
    tmux_keys(&t, "Escape q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* A 16-layer × 32-head llama folder (head size 4, 8 KV heads, bf16) with
 * random routers, written by `bench --save-hf`, at 140×45 and 80×24. */
TEST(tui_hf_llama_sixteen_by_thirty_two_heads) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    const char *dir = make_hf_folder("hf1632", "llama", "128,256,16,32,8,512,256");
    if (!dir) return;
    char d[1024];
    snprintf(d, sizeof d, "%s", dir);
    hf_shape_large(d, "hf1632big", 16, 32, 8, 128, 1, "llama");
    hf_shape_small(d, "hf1632small", 16, 32);
    /* policy full without routers: the bars count executed gates and say so;
     * 32 one-column heads are numbered 0 5 10 …, never 0-9 over and over */
    Tmux t;
    tmux_start_in(&t, "hf1632full", d, 80, 24, "--model m --policy full --no-record");
    TMUX_WAIT(&t, "policy full", 10);
    TMUX_WAIT(&t, "executed | oracle", 5);
    char *scr = tmux_capture(&t);
    CHECK_MSG(scr && !strstr(scr, "AHA") && !strstr(scr, "0123456789") && strstr(scr, "0    5    10"), "%s",
              scr ? scr : "");
    free(scr);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}

/* A 24-layer × 14-head qwen2 folder (head size 4, 2 KV heads): the heatmap
 * packs two layers per row (labels L0, L2, …, L22). */
TEST(tui_hf_qwen2_twenty_four_by_fourteen_heads) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    const char *dir = make_hf_folder("hf2414", "qwen2", "56,112,24,14,2,512,256");
    if (!dir) return;
    char d[1024];
    snprintf(d, sizeof d, "%s", dir);
    hf_shape_large(d, "hf2414big", 24, 14, 2, 56, 2, "qwen2");
    hf_shape_small(d, "hf2414small", 24, 14);
}

/* A prompt of about 2400 tokens (4000 bytes of words) for the 4096-context
 * folder below, written to path. */
static int write_long_prompt(const char *path) {
    static const char *WORDS[] = {"the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "ran", "far", "away"};
    char text[4200];
    size_t n = 0;
    uint32_t x = 2463534242u;
    while (n + 8 < 4000) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", n ? " " : "", WORDS[x % 12]);
    }
    return test_write_file(path, text, (long)n);
}

/* Flags of the TUI on the long prompt: all 4096 positions may be fed, or
 * (steps 0) the default, which feeds all of a prompt longer than 256. */
static const char *long_prompt_flags(const char *dir, int steps) {
    static char flags[3000];
    snprintf(flags, sizeof flags, "--model %s/m --prompt-file %s/prompt.txt --no-record", dir, dir);
    if (steps) snprintf(flags + strlen(flags), sizeof flags - strlen(flags), " --steps %d", steps);
    return flags;
}

/* Each 64-token chunk of a prefill 40 ms slower (about 1.4 s for the long
 * prompt), so the checks made during it never race its end. */
#define SLOW_CHUNKS "AHASCOPE_TEST_PREFILL_DELAY_MS=40"

/* The token pane's first line on screen s (between the borders of the
 * line after its title), in a static buffer; "" when not found. */
static const char *token_pane_line(const char *s) {
    static char line[1024];
    const char *title = s ? strstr(s, "tokens: ") : NULL;
    const char *a = title ? strchr(title, '\n') : NULL;
    const char *b = a ? strchr(a + 1, '\n') : NULL;
    line[0] = 0;
    if (a && b && b - a < (long)sizeof line) snprintf(line, sizeof line, "%.*s", (int)(b - a - 1), a + 1);
    return line;
}

/* The token pane during the prefill: the count in words, not "press space". */
static void check_prefill_pane(Tmux *t, const char *when) {
    char *s = tmux_wait(t, "prefilling the prompt: ", 2);
    const char *line = token_pane_line(s);
    CHECK_MSG(strstr(line, "\xe2\x94\x82prefilling the prompt: ") == line && strstr(line, " tokens (") &&
                  strstr(line, "q quits") && !strstr(s, "press space"),
              "%s, the token pane says: '%s'\n%s", when, line, s ? s : "");
    free(s);
}

/* A long prompt on a 4096-context folder: the status line counts the
 * prefill and so does the empty token pane, keys answer meanwhile (? draws
 * the help, a resize redraws), it says what the prefill took; and q in the
 * middle of one quits at once (within one layer of the 64-token chunk under
 * way, not the prompt). */
TEST(tui_long_prompt_shows_prefill_progress_and_quits_during_it) {
    TMUX_NEED_TUI();
    const char *dir = make_hf_folder("long4k", "llama", "64,128,4,4,4,512,4096");
    if (!dir) return;
    char d[1024], prompt[1100];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(prompt, sizeof prompt, "%s/prompt.txt", d);
    CHECK_INT(write_long_prompt(prompt), 0);
    Tmux t;
    tmux_open_stories(&t, "longp", 120, 40, SLOW_CHUNKS, long_prompt_flags(d, 4096));
    TMUX_WAIT(&t, " tok/s (q quits)", 30);
    check_prefill_pane(&t, "at 120x40");
    tmux_keys(&t, "?"); /* the help's title, whole or scrolling: "help · any key closes", "help · lines 1-36 …" */
    TMUX_WAIT(&t, "help \xc2\xb7 ", 2);
    char *s = tmux_wait(&t, "(q quits)", 2); /* the key cleared the status line; the next count redraws it */
    CHECK_MSG(s && strstr(s, "help \xc2\xb7 "), "help did not draw during the prefill:\n%s", s ? s : "");
    free(s);
    tmux_keys(&t, "Escape"); /* the help over the token pane closes */
    int st;
    free(test_runf(&st, "tmux -L %s resize-window -x 100 -y 30", t.sock));
    TMUX_WAIT(&t, "policy ", 3); /* redrawn at the new size */
    check_prefill_pane(&t, "at 100x30");
    TMUX_WAIT(&t, "prefilled 2", 120);
    s = tmux_capture(&t);
    CHECK_MSG(s && strstr(s, "pos 2") && strstr(s, "tok/s"), "no positions after the prefill:\n%s", s ? s : "");
    CHECK_MSG(s && !strstr(s, "prefilling the prompt") && !strstr(s, "press space") && strstr(token_pane_line(s), "the"),
              "the token pane after the prefill:\n%s", s ? s : "");
    free(s);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);

    tmux_open_stories(&t, "longq", 120, 40, SLOW_CHUNKS, long_prompt_flags(d, 0));
    TMUX_WAIT(&t, " tok/s (q quits)", 30);
    s = tmux_capture(&t);
    int during = s && strstr(s, "(q quits)") != NULL, done = 0, total = 0;
    /* without --steps the whole prompt is fed, not its first 257 tokens */
    const char *count = s ? strstr(s, "prefilling the prompt: ") : NULL;
    CHECK_MSG(count && sscanf(count, "prefilling the prompt: %d of %d tokens", &done, &total) == 2 && total > 1000,
              "without --steps: %d of %d tokens\n%s", done, total, s ? s : "");
    free(s);
    double t0 = clock_now();
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    double dt = clock_now() - t0;
    CHECK(during);
    CHECK_MSG(dt < 2.0 * tmux_patience(), "q took %.2f s to quit during the prefill", dt);
    tmux_stop(&t);
}

/* A quantised GGUF file opens in the TUI as any model does: a random
 * 4-layer llama folder written by convert --to gguf at q4_0 (its matrices
 * stay in Q4_0 blocks, engine/matvec_q.c), stepped under QAdA, its heatmap 4 x 8, its
 * run recorded with the file's architecture and type mix. */
TEST(tui_opens_a_quantised_gguf) {
    TMUX_NEED_TUI();
    Tmux t;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", test_tmp("qgguf"));
    int st;
    char *out = test_runf(&st, "mkdir -p %s && cd %s && %s bench --dims 256,512,4,8,4,512,1024 --save-hf m >/dev/null && "
                          "%s convert --to gguf --model m --out m.gguf --type q4_0 --tokenizer %s 2>&1",
                          dir, dir, test_bin_abs(), test_bin_abs(), test_stories_tokenizer());
    CHECK_MSG(st == 0 && out && strstr(out, "Q4_0"), "convert: %s", out ? out : "");
    free(out);
    if (st) return;
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "%s tui --model m.gguf --seed 1 --temperature 0 --window 8 --policy qada", test_bin_abs());
    CHECK_INT(tmux_open(&t, "qgguf", dir, 120, 40, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "pos 4/1024", 10);
    TMUX_WAIT(&t, "Once upon a time", 1);
    TMUX_WAIT(&t, "L3 ", 1); /* the heatmap's last layer row */
    TMUX_WAIT(&t, "policy qada", 1);
    tmux_keys(&t, "Space Space");
    TMUX_WAIT(&t, "pos 6/1024", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    char *r = query(&t, "SELECT arch, n_layers, n_heads, n_tokens >= 7 FROM runs");
    CHECK_MSG(r && strstr(r, "gguf-llama Q4_0,4,8,1"), "runs: %s", r ? r : "");
    free(r);
    tmux_stop(&t);
}

/* `D` on the replay of a run without a parent: the status line says how
 * a child is made (a live run's settings), not "change a setting", which a
 * replay only re-scores. */
TEST(tui_replay_diff_without_a_parent_says_how_one_is_made) {
    TMUX_NEED_TUI();
    const char *dir = test_tmp("replaynoparent");
    int st;
    free(test_runf(&st, "mkdir -p %s && cd %s && %s record --db np.db --model %s --steps 6 --temperature 0", dir, dir,
                   test_bin_abs(), test_stories_model()));
    CHECK_INT(st, 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db np.db", test_bin_abs());
    Tmux t;
    CHECK_INT(tmux_open(&t, "replaynoparent", dir, 140, 40, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "replay of run 1", 10);
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 1 has no parent run (it was not re-evaluated from one", 10);
    CHECK(tmux_gone(&t, "change a setting to make one", 1));
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}
