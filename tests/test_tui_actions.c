/* test_tui_actions.c — the action table in a replay without a terminal, and every bound key named.
 *
 * The TUI's one action table (app/tui/actions.c)
 * without a terminal: what each key does in a replay, where no model and
 * no worker exist, and the control keys' names in the key table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/tui/state.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/keymap.h"
#include "views/yank.h"

/* A replay of run 7 with n positions and no database, cursor at the end. */
static Tui *replay_of(int n) {
    Tui *t = calloc(1, sizeof *t);
    if (!t || view_init(&t->m, 2, 2, NULL)) abort();
    fx_fill(&t->m, n);
    t->replay = 1, t->replay_run = 7, t->restore = -1, t->speed_i = TUI_SPEED_START;
    t->m.hdr.tau = 0.5f;
    return t;
}

static void replay_free(Tui *t) {
    view_free(&t->m);
    free(t);
}

/* The status line after key ch, which must not quit. */
static const char *after(Tui *t, int ch) {
    CHECK_INT(tui_key(t, ch), 0);
    return t->m.status;
}

TEST(tui_actions_replay_says_what_needs_the_model) {
    Tui *t = replay_of(5);
    /* each key names what needs the model; stepping does not (space moves through the recording) */
    const int keys[] = {'P', 'w', 'W', 'e'};
    const char *what[] = {"a new policy", "a new window", "a new window", "a new prompt"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char why[160];
        snprintf(why, sizeof why, "replay of run 7: %s needs the model (tui without --replay)", what[i]);
        const char *s = after(t, keys[i]);
        CHECK_MSG(!strcmp(s, why), "key %c in a replay: \"%s\"", keys[i], s);
    }
    CHECK_INT(t->m.input.active, 0); /* `e` opened no editor */
    CHECK_MSG(!strcmp(after(t, ' '), "end of the recorded run ([ or Home to go back)"), "space: %s", t->m.status);
    replay_free(t);
}

TEST(tui_actions_replay_rescores_plays_and_quits) {
    Tui *t = replay_of(5);
    const char *s = after(t, 't');
    CHECK_MSG(strstr(s, "replay re-scored at tau 0.45, theta ") && strstr(s, "(the recorded gates stay)"), "t: %s", s);
    CHECK_NEAR(t->m.hdr.tau, 0.45, 1e-6);
    after(t, 'T');
    CHECK_NEAR(t->m.hdr.tau, 0.5, 1e-6);
    after(t, 'p'); /* at the end, play starts over from the first position */
    CHECK_INT(t->playing, 1);
    CHECK_INT(t->m.cursor, 0);
    after(t, '+');
    CHECK_INT(t->speed_i, TUI_SPEED_START + 1);
    CHECK_NEAR(t->m.speed, tui_speed(t), 0);
    after(t, 'p');
    CHECK_INT(t->playing, 0);
    CHECK_INT(tui_key(t, 'q'), 1);
    replay_free(t);
}

/* `o` at θ 0 (and `T` at τ 1): the limit, said so; nothing is re-scored. */
TEST(tui_actions_replay_threshold_at_its_limit_is_unchanged) {
    Tui *t = replay_of(5);
    t->m.hdr.theta_logit = decide_theta_logit(0.0);
    const char *s = after(t, 'o');
    CHECK_MSG(strstr(s, "unchanged: ") && !strstr(s, "re-scored"), "o at theta 0: %s", s);
    CHECK_INT(t->m.rescoring, 0);
    t->m.hdr.theta_logit = decide_theta_logit(0.1), t->m.hdr.tau = 1.0f;
    s = after(t, 'T');
    CHECK_MSG(strstr(s, "unchanged: tau 1.00") && !strstr(s, "re-scored"), "T at tau 1: %s", s);
    replay_free(t);
}

TEST(tui_actions_replay_without_a_database) {
    Tui *t = replay_of(3);
    CHECK_MSG(!strcmp(after(t, 's'), "not recording: nothing to export"), "s: %s", t->m.status);
    CHECK_MSG(!strcmp(after(t, 'R'), "not recording: nothing to summarise"), "R: %s", t->m.status);
    CHECK_MSG(!strcmp(after(t, 'B'), "not recording: no runs to browse"), "B: %s", t->m.status);
    after(t, ':');
    CHECK_INT(t->m.input.active, 1);
    CHECK_MSG(!strcmp(t->m.input.label, "sql"), "label %s", t->m.input.label);
    CHECK_MSG(!strcmp(after(t, '\n'), "not recording: no database to query"), "Enter: %s", t->m.status);
    after(t, VIEW_KEY_ESC); /* no query runs: Esc closes (nothing open) and says nothing */
    CHECK_MSG(!strcmp(t->m.status, ""), "Esc: %s", t->m.status);
    replay_free(t);
}

TEST(tui_actions_control_keys_are_named_in_the_key_table) {
    char buf[8];
    CHECK_INT(view_key_command(VIEW_KEY_ESC), VIEW_OP_CLOSE);
    CHECK_INT(view_key_command(VIEW_KEY_CTRL_L), VIEW_ACT_REDRAW);
    CHECK_INT(view_key_command(VIEW_KEY_TAB), VIEW_OP_FOCUS_NEXT);
    CHECK_MSG(!strcmp(view_key_name(VIEW_KEY_ESC, buf), "Esc"), "Esc: %s", buf);
    CHECK_MSG(!strcmp(view_key_name(VIEW_KEY_CTRL_L, buf), "C-l"), "C-l: %s", buf);
    int n;
    const ViewBinding *b = view_bindings(&n);
    for (int r = 0; r < n; r++) /* every bound key has a name the hints can print */
        for (int s = 0; s < VIEW_KEYS_PER_ROW && b[r].key[s]; s++)
            CHECK_MSG(view_key_name(b[r].key[s], buf)[0] != '#', "key %d of row \"%s\" has no name", b[r].key[s],
                      b[r].label ? b[r].label : "");
}

/* A recorded run opened (B) from a live session sets the live positions
 * aside: the keys that need the model point back to it, not to --replay,
 * and Esc brings the live run back as it was left. */
TEST(tui_actions_replay_from_live_returns_with_esc) {
    Tui *t = replay_of(6); /* the live session's six positions */
    t->replay = 0;
    snprintf(t->m.hdr.policy, sizeof t->m.hdr.policy, "aha");
    t->m.cursor = 4;
    const StepTrace *fourth = t->m.hist[4];
    tui_keep_live(t);
    CHECK_INT(t->m.n_hist, 0);
    t->replay = 1;
    fx_fill(&t->m, 3); /* the recording */
    snprintf(t->m.hdr.mode, sizeof t->m.hdr.mode, "replay run 7");
    CHECK_MSG(!strcmp(after(t, 'w'), "replay of run 7: a new window needs the model (Esc: the live run)"), "w: %s",
              t->m.status);
    after(t, '\n'); /* the inspector open: Esc closes it first */
    CHECK_INT(t->m.inspector_open, 1);
    after(t, VIEW_KEY_ESC);
    CHECK_INT(t->replay, 1);
    /* so with the pattern or the distributions open (Esc went back to the live run over them) */
    t->pat.open = 1;
    after(t, VIEW_KEY_ESC);
    CHECK_INT(t->pat.open, 0);
    CHECK_INT(t->replay, 1);
    t->dist.open = 1;
    after(t, VIEW_KEY_ESC);
    CHECK_INT(t->dist.open, 0);
    CHECK_INT(t->replay, 1);
    CHECK_MSG(!strcmp(after(t, VIEW_KEY_ESC), "back to the live run: space steps, p plays"), "Esc: %s", t->m.status);
    CHECK_INT(t->replay, 0);
    CHECK_INT(t->m.n_hist, 6);
    CHECK_INT(t->m.cursor, 4);
    CHECK(t->m.hist[4] == fourth);
    CHECK_MSG(!strcmp(t->m.hdr.mode, "") && !strcmp(t->m.hdr.policy, "aha"), "mode %s", t->m.hdr.mode);
    after(t, VIEW_KEY_ESC); /* live: Esc does nothing more */
    CHECK_INT(t->m.n_hist, 6);
    tui_free_kept(t);
    replay_free(t);
}

/* `v` counts its rates over the positions where there was a choice and
 * says how many those are; a head with nothing decided reads n/a, as the
 * bars pane prints it, not 0.0%. */
TEST(tui_actions_plots_count_decided_positions) {
    Tui *t = replay_of(6);
    for (int i = 0; i < 3; i++) t->m.hist[i]->n_far = 0;      /* before the first far key */
    for (int i = 3; i < 6; i++) t->m.hist[i]->gate[0] = -1;   /* L0 H0's gate not recorded */
    t->m.hdr.theta_logit = decide_theta_logit(0.1);
    after(t, 'v');
    const char *text = t->m.sql_text ? t->m.sql_text : "";
    CHECK_MSG(strstr(text, "over 3 decided positions (of 6)") != NULL, "%s", text);
    const char *l0h0 = strstr(text, "L0  H0 ");
    CHECK_MSG(l0h0 && strstr(l0h0, "|    n/a  oracle") && l0h0 < strstr(text, "L0  H1 "), "%s", text);
    CHECK_MSG(!strstr(text, "L0  H1 ") || !strstr(strstr(text, "L0  H1 "), "n/a  oracle"), "%s", text);
    replay_free(t);
}

/* `y` while the heads pane (H) is open copies its whole table, not the
 * inspector, headed by the run's line; `Y` the same as CSV (issue 52 §8). */
TEST(tui_actions_yank_over_the_heads_pane_copies_its_table) {
    Tui *t = replay_of(5);
    char path[1100];
    const char *dir = test_tmp("yankheads");
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/yank.txt", dir);
    setenv("AHASCOPE_YANK", path, 1);
    t->m.hdr.run_id = 7, t->m.hdr.seed = 42, t->m.hdr.seed_known = 1;
    t->heads.open = 1, t->heads.row = 0;
    const char *s = after(t, 'y');
    CHECK_MSG(strstr(s, "yanked the heads table (6 lines)"), "y over H: %s", s); /* run line, names, 4 heads */
    FILE *f = fopen(path, "r");
    char line[256] = "";
    CHECK(f && fgets(line, sizeof line, f) && !strncmp(line, "# ahascope run 7 seed 42 ", 25));
    CHECK(f && fgets(line, sizeof line, f) && !strncmp(line, "rank  head ", 11));
    CHECK(f && fgets(line, sizeof line, f) && strstr(line, "   1  L"));
    if (f) fclose(f);
    s = after(t, 'Y');
    CHECK_MSG(strstr(s, "yanked the heads table as CSV (6 lines)"), "Y over H: %s", s);
    f = fopen(path, "r");
    CHECK(f && fgets(line, sizeof line, f) && line[0] == '#');
    CHECK(f && fgets(line, sizeof line, f) && !strncmp(line, "rank,layer,head,global_rate,", 28));
    if (f) fclose(f);
    t->heads.open = 0; /* no table on top: Y says what it copies, y the inspector */
    s = after(t, 'Y');
    CHECK_MSG(strstr(s, "yank: no table to copy as CSV: open H, A or a text pane"), "Y over nothing: %s", s);
    CHECK_MSG(strstr(after(t, 'y'), "yanked the inspector"), "y: %s", t->m.status);
    unsetenv("AHASCOPE_YANK");
    replay_free(t);
}

/* `&` in a replay: (a) from the recorded top-k, and (b) said to need a live run. */
TEST(tui_actions_paths_in_a_replay_say_the_rollout_needs_the_model) {
    Tui *t = replay_of(5);
    after(t, '&');
    CHECK_MSG(t->m.sql_open && strstr(t->m.sql_text, "no needle marked"), "%s", t->m.sql_text ? t->m.sql_text : "");
    ViewMark mk[1] = {{1, VIEW_MARK_NEEDLE}};
    view_set_marks(&t->m, mk, 1, NULL);
    after(t, '&');
    CHECK_MSG(strstr(t->m.sql_text, "(b) attention rollout: needs every head's full rows, which a replay cannot") &&
                  strstr(t->m.sql_text, "(a) product of the recorded top-k weights") && !strcmp(t->m.sql_title, "paths to the needle"),
              "%s", t->m.sql_text);
    CHECK_INT(t->paths_pending, 0);
    replay_free(t);
}

/* `S` with nothing to save says what to open; with H open it writes the
 * CSV and the SVG in the current directory, and a FIFO there is refused
 * at once (the UI never waits on a reader). */
TEST(tui_actions_save_table_writes_csv_and_svg_or_says_why_not) {
    Tui *t = replay_of(5);
    char cwd[1024], fifo[1200];
    const char *dir = test_tmp("savetable");
    mkdir(dir, 0700);
    CHECK(getcwd(cwd, sizeof cwd) != NULL && chdir(dir) == 0);
    CHECK_MSG(!strcmp(after(t, 'S'), "save table: open H (heads) or A (pattern) first"), "%s", t->m.status);
    t->m.hdr.run_id = 7;
    t->heads.open = 1;
    const char *s = after(t, 'S');
    CHECK_MSG(strstr(s, "saved ahascope-run7-heads.csv and ahascope-run7-heads.svg in "), "%s", s);
    struct stat st;
    CHECK(stat("ahascope-run7-heads.csv", &st) == 0 && st.st_size > 0);
    CHECK(stat("ahascope-run7-heads.svg", &st) == 0 && st.st_size > 0);
    snprintf(fifo, sizeof fifo, "%s/ahascope-run7-heads.csv", dir);
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    s = after(t, 'S');
    CHECK_MSG(strstr(s, "save table: ") && strstr(s, "not a regular file"), "S into a FIFO: %s", s);
    CHECK(chdir(cwd) == 0);
    replay_free(t);
}

/* The whole file at path (at most 4 KiB) into buf. */
static const char *slurp(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "rb");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    if (f) fclose(f);
    buf[k] = 0;
    return buf;
}

/* Issue 53 §2: a replayed run's model name ending a bracketed paste and
 * running a command reaches neither the file nor the clipboard raw. */
TEST(tui_actions_yank_escapes_what_it_copies) {
    Tui *t = replay_of(5);
    char path[1100], buf[4096];
    const char *dir = test_tmp("yankesc");
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/yank.txt", dir);
    setenv("AHASCOPE_YANK", path, 1);
    snprintf(t->m.hdr.model, sizeof t->m.hdr.model, "m\033[201~\ntouch /tmp/pwned\n\x9b\x07");
    const char *s = after(t, 'y');
    CHECK_MSG(strstr(s, "yanked the inspector"), "y: %s", s);
    slurp(path, buf, sizeof buf);
    CHECK_MSG(!strchr(buf, '\033') && !strchr(buf, '\a') && !strchr(buf, '\x9b'), "raw controls yanked: %s", buf);
    const char *line2 = strchr(buf, '\n');
    CHECK_MSG(line2 && !strncmp(line2 + 1, "m", 1) && strstr(line2, "[201~") &&
                  strchr(line2 + 1, '\n') > strstr(line2, "policy"),
              "the model's newlines must not break the settings line: %s", buf);
    char *c = view_yank_clean("a\tb\nc\033d\r\x7f", 1);
    CHECK_MSG(c && !strcmp(c, "a\tb\nc.d.."), "clean: %s", c ? c : "(null)");
    free(c);
    unsetenv("AHASCOPE_YANK");
    replay_free(t);
}

/* The yank file as a symlink is replaced, its target untouched; as a
 * FIFO it is refused at once (the UI never waits on a reader). */
TEST(tui_actions_yank_never_follows_a_link_nor_waits_on_a_fifo) {
    Tui *t = replay_of(5);
    char path[1100], target[1100], buf[4096];
    const char *dir = test_tmp("yanklink");
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/yank.txt", dir);
    snprintf(target, sizeof target, "%s/precious", dir);
    FILE *f = fopen(target, "w");
    if (f) fputs("keep me\n", f), fclose(f);
    unlink(path);
    CHECK(symlink(target, path) == 0);
    setenv("AHASCOPE_YANK", path, 1);
    const char *s = after(t, 'y');
    CHECK_MSG(strstr(s, "yanked the inspector"), "y over a symlink: %s", s);
    CHECK_MSG(!strcmp(slurp(target, buf, sizeof buf), "keep me\n"), "the link's target was overwritten: %s", buf);
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    unlink(path);
    CHECK(mkfifo(path, 0600) == 0);
    s = after(t, 'y');
    CHECK_MSG(strstr(s, "yank: ") && strstr(s, "not a regular file"), "y into a FIFO: %s", s);
    unsetenv("AHASCOPE_YANK");
    replay_free(t);
}

/* `B`'s run id past what a number holds is refused, not turned into another run's. */
TEST(tui_actions_open_run_refuses_an_id_out_of_range) {
    Tui *t = replay_of(3);
    view_input_begin(&t->m, "open run", "");
    for (const char *p = "99999999999999999999"; *p; p++) after(t, *p);
    const char *s = after(t, '\n');
    CHECK_MSG(!strcmp(s, "not a run id: \"99999999999999999999\" is out of range"), "B 9…9: %s", s);
    CHECK_INT(t->replay_run, 7);
    replay_free(t);
}

/* Bracketed paste: a pasted Esc, `q` and Enter are text in the editor, and do nothing without one. */
TEST(tui_actions_bracketed_paste_is_text_not_keys) {
    Tui *t = replay_of(3);
    view_input_begin(&t->m, "search", "a");
    const int paste[] = {TUI_KEY_PASTE_BEGIN, VIEW_KEY_ESC, 'q', '\n', 'x', KEY_UP, '\t', 'y', TUI_KEY_PASTE_END};
    for (size_t i = 0; i < sizeof paste / sizeof paste[0]; i++) CHECK_INT(tui_key(t, paste[i]), 0);
    CHECK_INT(t->m.input.active, 1);
    CHECK_MSG(!strcmp(t->m.input.text, "aq x y"), "pasted line: \"%s\"", t->m.input.text);
    after(t, VIEW_KEY_ESC); /* after the paste, Esc is the key again */
    CHECK_INT(t->m.input.active, 0);
    int cursor = t->m.cursor;
    for (size_t i = 0; i < sizeof paste / sizeof paste[0]; i++) CHECK_INT(tui_key(t, paste[i]), 0);
    CHECK_INT(t->m.cursor, cursor);
    CHECK_MSG(strstr(t->m.status, "paste ignored"), "paste with no editor: %s", t->m.status);
    replay_free(t);
}

/* `B`'s id answered: the run list closes, so the one Esc the replay's status line offers goes back. */
TEST(tui_actions_open_run_closes_the_run_list) {
    Tui *t = replay_of(3);
    Err e;
    CHECK_INT(view_set_text(&t->m, "runs: type an id, Enter", "", "run\n---\n1\n", &e), 0);
    view_input_begin(&t->m, "open run", "");
    after(t, '1');
    after(t, '\n');
    CHECK_INT(t->m.sql_open, 0);
    CHECK_MSG(t->m.focus != VIEW_PANE_SQL, "focus %d", t->m.focus);
    tui_job_stop(&t->load); /* the load it started (it fails: no database) */
    replay_free(t);
}

/* Every pane open at once, as they stack: the text pane, the pattern, the sorted heads, the
 * distributions, every head, the flips map and the help, over the inspector. */
static void open_every_pane(Tui *t) {
    t->m.inspector_open = 1;
    view_set_sql(&t->m, "select 1", "1\n1", NULL);
    t->pat.open = 1, t->m.pattern = &t->pat;
    t->heads.open = 1, t->m.heads = &t->heads;
    t->dist.open = 1, t->m.dist = &t->dist;
    t->m.allheads_open = 1;
    t->m.flips_open = 1;
    t->m.help_open = 1;
}

/* Which panes are still open, top first, as letters: ?XEdHA: then i for the inspector. */
static const char *still_open(const Tui *t, char buf[16]) {
    int n = 0;
    if (t->m.help_open) buf[n++] = '?';
    if (t->m.flips_open) buf[n++] = 'X';
    if (t->m.allheads_open) buf[n++] = 'E';
    if (t->dist.open || t->m.dist) buf[n++] = 'd';
    if (t->heads.open || t->m.heads) buf[n++] = 'H';
    if (t->pat.open || t->m.pattern) buf[n++] = 'A';
    if (t->m.sql_open) buf[n++] = ':';
    if (t->m.inspector_open) buf[n++] = 'i';
    buf[n] = 0;
    return buf;
}

TEST(tui_actions_esc_and_q_close_the_top_pane_first) {
    static const char *const after_each[] = {"XEdHA:i", "EdHA:i", "dHA:i", "HA:i", "A:i", ":i", "i"};
    char buf[16];
    for (int key = 0; key < 2; key++) { /* Esc, then q */
        Tui *t = replay_of(5);
        open_every_pane(t);
        CHECK_INT(view_overlay_open(&t->m), 1);
        for (int i = 0; i < 7; i++) {
            CHECK_INT(tui_key(t, key ? 'q' : VIEW_KEY_ESC), 0); /* never quits while a pane is open */
            CHECK_MSG(!strcmp(still_open(t, buf), after_each[i]), "%s press %d: open '%s', expected '%s'",
                      key ? "q" : "Esc", i + 1, buf, after_each[i]);
        }
        CHECK_INT(view_overlay_open(&t->m), 0);
        if (key) {
            CHECK_INT(tui_key(t, 'q'), 1); /* the inspector is the main screen's: q quits */
        } else {
            CHECK_INT(tui_key(t, VIEW_KEY_ESC), 0); /* Esc closes the inspector last */
            CHECK_MSG(!strcmp(still_open(t, buf), ""), "after the last Esc: '%s'", buf);
            CHECK_INT(tui_key(t, VIEW_KEY_ESC), 0); /* nothing left: nothing happens */
            CHECK_INT(tui_key(t, 'q'), 1);
        }
        replay_free(t);
    }
    /* a line editor takes q as text */
    Tui *t = replay_of(5);
    CHECK_INT(tui_key(t, '/'), 0);
    CHECK_INT(tui_key(t, 'q'), 0);
    CHECK_MSG(t->m.input.active && !strcmp(t->m.input.text, "q"), "the search line holds '%s'", t->m.input.text);
    CHECK_INT(tui_key(t, VIEW_KEY_ESC), 0);
    CHECK_INT(t->m.input.active, 0);
    /* the help alone: q closes it and stays */
    CHECK_INT(tui_key(t, '?'), 0);
    CHECK_INT(t->m.help_open, 1);
    CHECK_INT(tui_key(t, 'q'), 0);
    CHECK_INT(t->m.help_open, 0);
    CHECK_INT(tui_key(t, 'q'), 1);
    replay_free(t);
}
