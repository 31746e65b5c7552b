/* test_tui_span.c — a span's rates and a run chosen in B to compare with, end to end in tmux.
 *
 * Live on stories260K at 80×24 and 140×45: a span set with `(` and `)`
 * shows in the header, and `H`'s top rows over it are those of an SQL
 * recount over the recorded run's `decided` rows in the span (`ahascope
 * query`); `c` and `d` name it. Then a run chosen in B with Tab (run 1,
 * the grandparent of run 3 on screen): D, X, the inspector and the
 * timeline's row say "vs run 1", and Tab on an empty line goes back to the
 * parent. On a 16 × 32-head folder at 140×45: a run of another prompt
 * chosen in B, which X compares over the common prefix only, saying so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test.h"
#include "tests/tmux.h"

enum { ROWS = 5 };

typedef struct {
    int layer, head;
    double rate;
} Row;

/* H's first n rows and their global rate (column 0). */
static int read_rows(Tmux *t, Row *rows, int n) {
    char *scr = tmux_capture(t);
    int got = 0;
    for (int k = 0; scr && k < n; k++) {
        char rank[16];
        snprintf(rank, sizeof rank, "%4d  L", k + 1);
        const char *at = strstr(scr, rank);
        if (!at || sscanf(at + 6, "L%d H%d %lf%%", &rows[k].layer, &rows[k].head, &rows[k].rate) != 3) break;
        got++;
    }
    if (got < n) fprintf(stderr, "%s\n", scr ? scr : "(no screen)");
    free(scr);
    return got;
}

/* The recount: each head's executed global rate over the decided rows of
 * positions lo … hi of run 1, ordered as H orders them. */
static int query_rows(const char *dir, const char *db, int lo, int hi, Row *rows, int n) {
    int st, got = 0;
    char *out = test_runf(&st,
                          "cd %s && %s query --db %s --csv \"SELECT layer, head, 100.0 * SUM(gate) / COUNT(gate)"
                          " FROM decided WHERE run_id = 1 AND pos BETWEEN %d AND %d GROUP BY layer, head"
                          " HAVING COUNT(gate) > 0 ORDER BY SUM(gate) * 1.0 / COUNT(gate) DESC, layer, head"
                          " LIMIT %d\" 2>&1",
                          dir, test_bin_abs(), db, lo, hi, n);
    const char *line = out ? strchr(out, '\n') : NULL;
    while (st == 0 && line && got < n &&
           sscanf(line + 1, "%d,%d,%lf", &rows[got].layer, &rows[got].head, &rows[got].rate) == 3) {
        got++;
        line = strchr(line + 1, '\n');
    }
    if (got < n) fprintf(stderr, "query: %s\n", out ? out : "(nothing)");
    free(out);
    return got;
}

/* 1 once the screen's first line (the header) holds text, within secs. */
static int header_has(Tmux *t, const char *text, double secs) {
    for (int i = 0; i < secs * 10 * tmux_patience(); i++) {
        char *scr = tmux_capture(t), *nl = scr ? strchr(scr, '\n') : NULL;
        if (nl) *nl = 0;
        int there = scr && strstr(scr, text);
        free(scr);
        if (there) return 1;
        struct timespec ts = {0, 100000000L}; /* a tenth of a second */
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void span_h_matches_sql(int cols, int rows) {
    char name[32];
    snprintf(name, sizeof name, "span%d", cols);
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, name, cols, rows, NULL, "--db span.db"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 40; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 44/512", 20);
    tmux_go_to(&t, "pos 20");
    TMUX_WAIT(&t, "pos 20/512", 5);
    tmux_keys(&t, "'('"); /* quoted: the keys pass through a shell */
    TMUX_WAIT(&t, "span 20-44", 3);
    tmux_go_to(&t, "pos 35");
    TMUX_WAIT(&t, "pos 35/512", 5);
    tmux_keys(&t, "')'");
    TMUX_WAIT(&t, "span 20-35 (16 positions", 3); /* the status line */
    CHECK(header_has(&t, "span 20-35", 3));
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by global_rate, highest first \xc2\xb7 span 20-35", 3);
    Row live[ROWS], stored[ROWS];
    CHECK_INT(read_rows(&t, live, ROWS), ROWS);
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "heads by global_rate", 3));
    tmux_keys(&t, "d");
    TMUX_WAIT(&t, "span 20-35 (16 positions)", 5); /* the distributions' title */
    tmux_keys(&t, "Escape");
    tmux_keys(&t, "c");
    TMUX_WAIT(&t, "token types L0 H0 \xc2\xb7 span 20-35", 10);
    tmux_keys(&t, "Escape");
    tmux_keys(&t, "'|'");
    TMUX_WAIT(&t, "span cleared", 3);
    CHECK(!header_has(&t, "span 20-35", 0.5));
    TMUX_QUIT(&t, 10); /* q closes the pane on top first */
    tmux_stop(&t);
    CHECK_INT(query_rows(t.dir, "span.db", 20, 35, stored, ROWS), ROWS);
    Row whole[ROWS]; /* the span counts differently from the whole run, or the check below proves little */
    CHECK_INT(query_rows(t.dir, "span.db", 0, 44, whole, ROWS), ROWS);
    int differ = 0;
    for (int k = 0; k < ROWS; k++)
        differ |= whole[k].layer != stored[k].layer || whole[k].head != stored[k].head || whole[k].rate != stored[k].rate;
    CHECK(differ && stored[0].rate > 0);
    for (int k = 0; k < ROWS; k++)
        CHECK_MSG(live[k].layer == stored[k].layer && live[k].head == stored[k].head &&
                      live[k].rate > stored[k].rate - 0.051 && live[k].rate < stored[k].rate + 0.051,
                  "%dx%d row %d: L%d H%d %.1f%%, decided L%d H%d %.3f%%", cols, rows, k + 1, live[k].layer,
                  live[k].head, live[k].rate, stored[k].layer, stored[k].head, stored[k].rate);
}

TEST(tui_span_h_matches_sql_over_decided_at_80x24) {
    TMUX_NEED_TUI();
    span_h_matches_sql(80, 24);
}

TEST(tui_span_h_matches_sql_over_decided_at_140x45) {
    TMUX_NEED_TUI();
    span_h_matches_sql(140, 45);
}

/* B, the run id typed, Tab. */
static void compare_with(Tmux *t, const char *id) {
    tmux_keys(t, "B");
    TMUX_WAIT(t, "open run:", 10);
    if (id[0]) {
        char keys[64];
        snprintf(keys, sizeof keys, "-l \"%s\"", id);
        tmux_keys(t, keys);
    }
    tmux_keys(t, "Tab");
}

TEST(tui_d_and_x_against_a_run_chosen_in_b_at_80x24) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "cmp80", 80, 24, NULL, "--db cmp.db"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 26; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 30/512", 20);
    tmux_keys(&t, "w"); /* run 2, a child of run 1; then run 3, a child of run 2 */
    TMUX_WAIT(&t, "run 2: ", 30);
    tmux_keys(&t, "W");
    TMUX_WAIT(&t, "run 3: ", 30);
    TMUX_WAIT(&t, "par run 2", 10);
    compare_with(&t, "1");
    TMUX_WAIT(&t, "comparing with run 1", 5);
    TMUX_WAIT(&t, "vs run 1", 20); /* the timeline's row, once run 1 is read */
    CHECK(tmux_gone(&t, "par run 2", 3));
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "vs run 1: ", 5); /* the inspector's line */
    tmux_keys(&t, "X");
    TMUX_WAIT(&t, "flips vs run 1 \xc2\xb7 L0 H0 ", 5);
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "flips vs run 1", 3));
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 3 vs run 1", 15);
    TMUX_WAIT(&t, "tokens: identical", 5); /* compare's text: the same tokens */
    tmux_keys(&t, "Escape");
    /* the B list shows each run's settings */
    tmux_keys(&t, "B");
    TMUX_WAIT(&t, "open run:", 10);
    TMUX_WAIT(&t, "theta", 3);
    TMUX_WAIT(&t, "routers", 3);
    tmux_keys(&t, "Tab"); /* an empty line: the parent again */
    TMUX_WAIT(&t, "comparing with the parent, run 2, again", 5);
    TMUX_WAIT(&t, "par run 2", 20); /* the timeline's row, once run 2 is read again */
    TMUX_WAIT(&t, "\xe2\x94\x82parent: ", 5); /* the inspector's line, brief at 80 columns */
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 3 vs its parent 2", 15);
    tmux_keys(&t, "Escape");
    compare_with(&t, "3"); /* the run on screen itself */
    TMUX_WAIT(&t, "run 3 is the run on screen", 5);
    compare_with(&t, "x1");
    TMUX_WAIT(&t, "not a run id: \"x1\"", 5);
    TMUX_QUIT(&t, 10); /* q closes the pane on top first */
    tmux_stop(&t);
}

TEST(tui_x_over_the_common_prefix_of_another_prompt_on_a_16x32_folder) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_16x32(&t, "cmp16x32", 140, 45, NULL, "--db cmp.db"))
        return;
    TMUX_WAIT(&t, "policy", 15);
    for (int i = 0; i < 16; i++) tmux_keys(&t, "Space");
    CHECK(tmux_shows_pos(&t, 16, 30));
    tmux_keys(&t, "e");
    tmux_keys(&t, "C-u");
    tmux_keys(&t, "-l \"Once upon a hill\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "Once upon a hill", 30);
    /* the new prompt prefilled, run 2 on screen: "pos >= 11" held already at pos 16, and B then
     * found run 1 still on screen now and then (it said so, rightly) */
    TMUX_WAIT(&t, "pos 11/1024", 30);
    compare_with(&t, "1");
    /* (the status line may already tell of run 2's prefill: the row proves the choice) */
    TMUX_WAIT(&t, "vs run 1", 20);
    tmux_keys(&t, "X");
    TMUX_WAIT(&t, "flips vs run 1 \xc2\xb7 common prefix pos 0-", 10);
    tmux_keys(&t, "Escape");
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "run 2 vs run 1", 20);
    TMUX_WAIT(&t, "tokens: diverge at position", 5);
    TMUX_QUIT(&t, 10); /* q closes the pane on top first */
    tmux_stop(&t);
}

static void span_of_a_task_item_at(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_passkey(&t, cols < 100 ? "span_pk80" : "span_pk", cols, rows, NULL, "")) return;
    tmux_keys(&t, "'*'"); /* the needle's statements: pos 139-152 */
    TMUX_WAIT(&t, "span 139-152 (14 positions, the needle's positions)", 5);
    CHECK(header_has(&t, "span 139-152", 3));
    tmux_keys(&t, "'*'");
    TMUX_WAIT(&t, "span 494-494 (1 position, the question's positions)", 5);
    tmux_keys(&t, "'*'"); /* the answer generated so far */
    TMUX_WAIT(&t, "the generated positions)", 5);
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by global_rate, highest first \xc2\xb7 span ", 5);
    tmux_keys(&t, "Escape '|' q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

TEST(tui_span_takes_the_needle_question_and_answer_of_a_task_item) { span_of_a_task_item_at(140, 45); }

TEST(tui_span_takes_the_needle_question_and_answer_of_a_task_item_at_80x24) { span_of_a_task_item_at(80, 24); }
