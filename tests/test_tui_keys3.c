/* test_tui_keys3.c — four questions of a head, each answered in at most three steps from every screen.
 *
 * The microscope's promise, end to end in tmux: four
 * questions a researcher asks of a head, each answered in at most three
 * steps from every screen the TUI has, at 80×24, on stories260K and on a
 * generated 16 × 32-head folder.
 *
 * The questions and their answers on screen:
 *   heads   which heads go global most       `H`: the heads sorted by global rate
 *   why     why did L? H? go global at pos t, and did it need to
 *                                            `G L1 H2 pos 30`: the inspector on that decision
 *   need    where did this head first need the far context
 *                                            `^`: the position, the oracle's mass, the gate
 *   pattern what is its attention pattern    `A`: the pattern view of the head
 * A step is one key, except that `G` with its typed text and Enter is one
 * step: the text is the question's own data (which head, which position),
 * not a way there (views/README.md, "Three keys from anywhere"). Every
 * screen is opened from the main one, the question's steps pressed, the
 * answer awaited, and every pane closed again before the next. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test.h"
#include "tests/tmux.h"

enum { N_SCREENS = 10, N_QUESTIONS = 4, MAX_STEPS = 3 };

/* A screen: how it opens from the main one (its steps, NULL for none) and
 * what shows once it is open and its job, if any, is done ('|' between
 * alternatives): a job's last word on the status line would replace the
 * question's answer there. */
typedef struct {
    const char *name, *open, *shows;
} Screen;

static const Screen SCREENS[N_SCREENS] = {
    {"main", NULL, "ahascope"},
    {"v", "v", "plots: "}, /* the text panes: the status line's word when their job is done */
    {"R", "R", "is being written: "},
    {"D", "D", "vs its parent 1: |diff over positions"}, /* the child may lag a position behind */
    {":", ":SELECT upper('shown here') AS x", "sql: 1 rows"},
    {"?", "?", "move focus between panes"},
    {"pattern", "A", "pattern L"},
    {"H", "H", "heads by"},
    {"d", "d", " positions \xc2\xb7 "}, /* its title once counted */
    {"c", "c", "heads pooled"},
};

/* The steps of each question from each screen, '|' between steps: "Esc"
 * is Escape, "@text" types a go-to (G, the text, Enter), anything else is
 * one key as tmux names it. Columns: heads, why, need, pattern. $H is the
 * head asked about, $P its position. */
static const char *const STEPS[N_SCREENS][N_QUESTIONS] = {
    /* main    */ {"H", "@$H pos $P", "^", "A"},
    /* v       */ {"H", "@$H pos $P", "^", "A"},
    /* R       */ {"H", "@$H pos $P", "^", "A"},
    /* D       */ {"H", "@$H pos $P", "^", "A"},
    /* :       */ {"H", "@$H pos $P", "^", "A"},
    /* ?       */ {"Esc|H", "Esc|@$H pos $P", "Esc|^", "Esc|A"},
    /* pattern */ {"H", "Esc|@$H pos $P", "^", ""},
    /* H       */ {"", "Esc|@$H pos $P", "^", "A"},
    /* d       */ {"H", "Esc|@$H pos $P", "^", "A"},
    /* c       */ {"H", "@$H pos $P", "^", "A"},
};

/* Steps in a STEPS entry: '|'-separated, "" none. */
static int count_steps(const char *s) {
    if (!*s) return 0;
    int n = 1;
    for (; *s; s++) n += *s == '|';
    return n;
}

/* s with $H and $P replaced by head ("L1 H2") and pos. */
static void expand(const char *s, const char *head, int pos, char *out, size_t n) {
    size_t o = 0;
    for (; *s && o + 1 < n; s++) {
        if (s[0] == '$' && (s[1] == 'H' || s[1] == 'P')) {
            int k = s[1] == 'H' ? snprintf(out + o, n - o, "%s", head) : snprintf(out + o, n - o, "%d", pos);
            o += k > 0 ? (size_t)k : 0;
            if (o >= n) o = n - 1;
            s++;
        } else out[o++] = *s;
    }
    out[o] = 0;
}

/* Press one step: "Esc", "@go-to text", ":query text" or a key. */
static void press(Tmux *t, const char *step) {
    char keys[300];
    if (!strcmp(step, "Esc")) tmux_keys(t, "Escape");
    else if (step[0] == '@') tmux_go_to(t, step + 1);
    else if (step[0] == ':' && step[1]) {
        tmux_keys(t, ":");
        snprintf(keys, sizeof keys, "-l \"%s\"", step + 1);
        tmux_keys(t, keys);
        tmux_keys(t, "Enter");
    } else {
        snprintf(keys, sizeof keys, "-l \"%s\"", step);
        tmux_keys(t, keys);
    }
}

/* Press the '|'-separated steps of s. */
static void press_all(Tmux *t, const char *s, const char *head, int pos) {
    char buf[300];
    expand(s, head, pos, buf, sizeof buf);
    for (char *step = strtok(buf, "|"); step; step = strtok(NULL, "|")) press(t, step);
}

/* 1 once the screen shows one of the '|'-separated texts of spec within
 * secs (all: none of them, with gone). */
static int shows_any(Tmux *t, const char *spec, double secs, int gone) {
    for (int i = 0; i <= secs * 10; i++) {
        char *scr = tmux_capture(t), buf[128];
        int any = 0;
        snprintf(buf, sizeof buf, "%s", spec);
        for (char *s = strtok(buf, "|"); s && scr; s = strtok(NULL, "|")) any |= strstr(scr, s) != NULL;
        if (any != gone) {
            free(scr);
            return 1;
        }
        if (i * 10 >= secs * 100) fprintf(stderr, "--- waited for %s'%s', screen was:\n%s---\n", gone ? "no " : "", spec,
                                          scr ? scr : "");
        free(scr);
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    return 0;
}

/* Close whatever is open: each Esc closes one pane or overlay. */
static void back_to_main(Tmux *t) {
    for (int i = 0; i < 5; i++) tmux_keys(t, "Escape");
}

/* The position named after "first needed the far context at pos " on the
 * screen within secs, or -2 for "never needed", -1 for neither. */
static int need_answer(Tmux *t, double secs) {
    char *scr = NULL;
    int pos = -1;
    for (int i = 0; i < secs * 10 && pos == -1; i++) {
        free(scr);
        scr = tmux_capture(t);
        const char *at = scr ? strstr(scr, "first needed the far context at pos ") : NULL;
        if (at) sscanf(at + strlen("first needed the far context at pos "), "%d", &pos);
        else if (scr && strstr(scr, "never needed the far context")) pos = -2;
        else nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    if (pos == -1) fprintf(stderr, "%s\n", scr ? scr : "(no screen)");
    free(scr);
    return pos;
}

/* Every question from every screen on the running TUI t, about head
 * ("L1 H2") at pos. The answer to "need" (the same from everywhere) goes
 * to *need. */
static void ask_everything(Tmux *t, const char *head, int pos, int *need) {
    char why_title[96], pattern_title[64];
    snprintf(why_title, sizeof why_title, "inspector \xc2\xb7 %s @ pos %d", head, pos);
    snprintf(pattern_title, sizeof pattern_title, "pattern %s", head);
    *need = -1;
    for (int s = 0; s < N_SCREENS; s++)
        for (int q = 0; q < N_QUESTIONS; q++) {
            const Screen *sc = &SCREENS[s];
            int steps = count_steps(STEPS[s][q]);
            CHECK_MSG(steps <= MAX_STEPS, "%s from %s takes %d steps", "question", sc->name, steps);
            back_to_main(t);
            /* all gone, so that what the screen shows next is its own and its job's last word is said */
            if (!tmux_gone(t, why_title, 3) || !tmux_gone(t, "heads by", 3) || !tmux_gone(t, pattern_title, 3) ||
                (s > 0 && !shows_any(t, sc->shows, 3, 1))) {
                char *scr = tmux_capture(t);
                CHECK_MSG(0, "%s: the panes of the last question did not close:\n%s", sc->name, scr ? scr : "");
                free(scr);
                return;
            }
            if (sc->open) press_all(t, sc->open, head, pos);
            if (!shows_any(t, sc->shows, 15, 0)) {
                CHECK_MSG(0, "screen %s never showed '%s'", sc->name, sc->shows);
                continue;
            }
            press_all(t, STEPS[s][q], head, pos);
            switch (q) {
            case 0:
                CHECK_MSG(tmux_shows(t, "heads by global_rate, highest first", 5), "heads from %s", sc->name);
                CHECK_MSG(tmux_shows(t, "   1  L", 1) || tmux_shows(t, "   1 \xe2\x96\xb8L", 1), "heads' first row from %s",
                          sc->name);
                break;
            case 1: {
                CHECK_MSG(tmux_shows(t, why_title, 5), "why from %s", sc->name);
                char *scr = tmux_capture(t); /* the oracle's verdict says whether the far keys were needed */
                CHECK_MSG(scr && strstr(scr, "oracle") && strstr(scr, "needed"), "why from %s:\n%s", sc->name,
                          scr ? scr : "");
                free(scr);
                break;
            }
            case 2: {
                int p = need_answer(t, 5);
                CHECK_MSG(p != -1, "need from %s", sc->name);
                if (*need == -1) *need = p;
                CHECK_MSG(p == *need, "need from %s: pos %d, elsewhere %d", sc->name, p, *need);
                break;
            }
            default: CHECK_MSG(tmux_shows(t, pattern_title, 5), "pattern from %s", sc->name); break;
            }
        }
    back_to_main(t);
}

TEST(tui_keys3_from_every_screen_at_80x24) {
    TMUX_NEED_TUI();
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, "keys3", 80, 24, NULL, "--db keys.db"), 0);
    TMUX_WAIT(&t, "pos 4/512", 10);
    for (int i = 0; i < 36; i++) tmux_keys(&t, "Space");
    TMUX_WAIT(&t, "pos 40/512", 15);
    tmux_keys(&t, "T"); /* a child run, so that D has a parent to compare with */
    TMUX_WAIT(&t, "run 2: aha", 20);
    TMUX_WAIT(&t, "\xcf\x84 0.55", 30); /* the re-evaluation done: the header shows its τ */
    TMUX_WAIT(&t, "pos 40/512", 30);
    tmux_go_to(&t, "L1 H2");
    int need;
    ask_everything(&t, "L1 H2", 30, &need);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
    /* ^'s answer, against the recorded run read back with SQL */
    int st, want = -1;
    char *out = test_runf(&st,
                          "cd %s && %s query --db keys.db --csv \"SELECT min(pos) FROM decided WHERE run_id = 2 AND"
                          " layer = 1 AND head = 2 AND oracle_logit > theta_logit\" 2>&1",
                          t.dir, test_bin_abs());
    const char *nl = out ? strchr(out, '\n') : NULL;
    if (st || !nl || sscanf(nl + 1, "%d", &want) != 1) want = -2; /* NULL: never needed */
    free(out);
    CHECK_MSG(need == want, "^ said pos %d, SQL %d", need, want);
}

TEST(tui_keys3_from_every_screen_on_a_16x32_head_folder) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_16x32(&t, "keys3_16x32", 80, 24, NULL, "--db keys.db")) return;
    TMUX_WAIT(&t, "policy", 15);
    for (int i = 0; i < 40; i++) tmux_keys(&t, "Space");
    CHECK(tmux_shows_pos(&t, 40, 30));
    tmux_keys(&t, "w"); /* a child run at a smaller window, so that D has a parent */
    TMUX_WAIT(&t, "run 2: ", 30);
    TMUX_WAIT(&t, "w 4 \xe2\x94\x82", 60); /* the re-evaluation done: the header shows its window */
    CHECK(tmux_shows_pos(&t, 40, 30));
    tmux_go_to(&t, "L15 H31");
    int need;
    ask_everything(&t, "L15 H31", 30, &need);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 5);
    tmux_stop(&t);
}
