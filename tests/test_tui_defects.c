/* test_tui_defects.c — issue 52's defects, walked again on the organism and a 16 × 32-head folder.
 *
 * Each defect has its first test on stories260K (tests/README.md, "Issue
 * 52's coverage"). This file repeats them on the organism's passkey item
 * and on a random 16 × 32-head folder, at 80×24 and at 140×45: in one
 * recorded session each and its replay, θ 0.001 in the header and the
 * bars' title (which still said 0.00), `/` Enter repeating the last
 * search, `d`'s class sizes, one Esc back from a run `B` opened, `D` naming the
 * run it has no parent for (live: change a setting; replay: a replay only
 * re-scores), the re-scored replay's header in whole fields, a
 * bookmark and note set in the replay kept in its file,
 * `y` over `H` copying its table, its header kept by PgDn, the status
 * line's hint naming all its sort columns (it said 1-5 over 8), the
 * heatmap's cells as wide with the inspector open at 140x45, no -0.00 in
 * the inspector, the key bar, an odd head clicked and named on the
 * timeline, its bins' means and the inspector's sparklines' (against SQL),
 * the pattern footer's light weights in their tail forms, the `a` help
 * line against its cycle, an oracle_err over 1 said to be clamped; in
 * sessions of their own, setting changes (w, and T under the organism's
 * routers) pressed faster than a re-evaluation's first chunk (no stopped
 * run without positions is ever a parent, `D`'s reads over the positions
 * both runs have while the child is written, θ 0.001 in the status line,
 * which said theta=0.00, X in the child's replay before its parent was
 * read, the parent line's two oracle masses and why they differ) and `--no-record` at θ 0 (`o` at its limit, `s`, `R` and a setting change
 * without a "run 0"); and `d` under the organism's routers (σ's tail
 * form, the histogram's and the ROC's axes, the AUC whole at 80 columns);
 * and a replay of a run recorded without --attn-top, whose empty pattern
 * grid says why.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/decide.h"
#include "tests/store_fixture.h"
#include "tests/test.h"
#include "tests/tmux.h"
#include "views/explain.h"
#include "views/geom.h"
#include "views/pattern.h"
#include "views/pin.h"
#include "views/view.h"

/* TMUX_WAIT for a helper that returns int: -1 after the failure. */
#define TMUX_WAIT_RET(t, text, secs)                                         \
    do {                                                                     \
        if (!tmux_shows(t, text, secs)) {                                    \
            test_fail(__FILE__, __LINE__, "screen never showed '%s'", text); \
            tmux_stop(t);                                                    \
            return -1;                                                       \
        }                                                                    \
    } while (0)

/* The line of the pane's text holding `text`, or NULL (malloc'd). */
static char *line_with(Tmux *t, const char *text) {
    char *scr = tmux_capture(t), *line = NULL;
    const char *at = scr ? strstr(scr, text) : NULL;
    if (at) {
        const char *a = at, *b = strchr(at, '\n');
        while (a > scr && a[-1] != '\n') a--;
        size_t n = b ? (size_t)(b - a) : strlen(a);
        line = malloc(n + 1);
        if (line) memcpy(line, a, n), line[n] = 0;
    }
    free(scr);
    return line;
}

/* The selected heatmap cell's width in blocks on L0's line (between its
 * ▕ ▏ marks), or -1 when that line is not on screen. */
static int selected_cell_width(Tmux *t) {
    char *l = line_with(t, "L0  \xe2\x96\x95");
    const char *a = l ? strstr(l, "L0  \xe2\x96\x95") : NULL;
    int n = -1;
    if (a) {
        a += strlen("L0  \xe2\x96\x95");
        for (n = 0; !strncmp(a, "\xe2\x96\x88", 3); a += 3) n++;
        if (strncmp(a, "\xe2\x96\x8f", 3)) n = -1;
    }
    free(l);
    return n;
}

/* The first row of sql on dir's ahascope.db, n columns into v: 1, or 0 when there is none. */
static int db_row(const char *dir, const char *sql, double *v, int n) {
    char db[1100];
    snprintf(db, sizeof db, "%s/ahascope.db", dir);
    return test_db_rows(db, sql, v, 1, n) == 1;
}

/* The screen's row and column (0-based, a column a character) of text's
 * first occurrence, or -1. */
static int screen_at(Tmux *t, const char *text, int *col) {
    char *scr = tmux_capture(t);
    const char *at = scr ? strstr(scr, text) : NULL;
    int row = -1;
    if (at) {
        row = 0, *col = 0;
        for (const char *c = scr; c < at; c++) {
            if (*c == '\n') row++, *col = 0;
            else if (((unsigned char)*c & 0xC0) != 0x80) (*col)++;
        }
    }
    free(scr);
    return row;
}

/* A left click at the screen's row and column (0-based): SGR mouse reports
 * of the press and its release (ncurses takes a second press without a
 * release between for a drag, not a click). */
static void click(Tmux *t, int row, int col) {
    int st;
    free(test_runf(&st, "tmux -L %s send-keys -l \"$(printf '\\033[<0;%d;%dM\\033[<0;%d;%dm')\"", t->sock, col + 1,
                   row + 1, col + 1, row + 1));
}

/* The cursor moved to pos by `G`. */
static int go_to_pos(Tmux *t, int pos) {
    char go[48];
    snprintf(go, sizeof go, "pos %d", pos);
    tmux_go_to(t, go);
    snprintf(go, sizeof go, "pos %d/", pos);
    TMUX_WAIT_RET(t, go, 10);
    return 0;
}

/* The cursor moved to pos and the selection to L layer H head by `G`. */
static int go_to_cell(Tmux *t, int pos, int layer, int head) {
    char go[48];
    if (go_to_pos(t, pos)) return -1;
    snprintf(go, sizeof go, "L%d H%d", layer, head);
    tmux_go_to(t, go);
    snprintf(go, sizeof go, "\xc2\xb7 L%d H%d", layer, head);
    TMUX_WAIT_RET(t, go, 10);
    return 0;
}

/* An odd head clicked on the timeline (its rows could not be): with L0 H2
 * selected (its line is the next), a click on L0's first line picks L0 H0; where that line holds
 * two heads in half blocks a second click picks the lower, L0 H1, and the
 * line is then named for it (where each head has a line, L0 H1's is
 * clicked). */
static int click_odd_head(Tmux *t, int cols) {
    int pos = tmux_pos(t);
    tmux_go_to(t, "L0 H2");
    TMUX_WAIT_RET(t, "\xc2\xb7 L0 H2", 10);
    int col, row = screen_at(t, "L0H1 ", &col), own = row >= 0;
    if (!own) row = screen_at(t, "L0H0 ", &col);
    CHECK_MSG(row >= 0, "no timeline line of L0 at %d columns", cols);
    if (row < 0) return -1;
    click(t, row, col + 12);
    if (!own) {
        TMUX_WAIT_RET(t, "\xc2\xb7 L0 H0", 10);
        click(t, row, col + 12);
    }
    if (!tmux_shows(t, "\xc2\xb7 L0 H1", 10)) {
        test_fail(__FILE__, __LINE__, "a click on L0's %s timeline line never selected L0 H1 at %d columns",
                  own ? "own" : "half-block", cols);
        return -1;
    }
    return go_to_pos(t, pos); /* the click moved the cursor too: back to where it was */
}

/* The level (0-7) of the spark glyph at s, or -1 (-2: a blank, a bin of no value). */
static int spark_level(const char *s) {
    if (*s == ' ') return -2;
    const unsigned char *u = (const unsigned char *)s;
    return u[0] == 0xE2 && u[1] == 0x96 && u[2] >= 0x81 && u[2] <= 0x88 ? u[2] - 0x81 : -1;
}

/* The inspector's oracle sparkline of L layer H head over positions
 * 0 … n_pos-1, each column a bin's mean (it was the bin's maximum, which
 * saturated a long run): the glyphs read off the screen against the means
 * recounted from the run's rows in dir's database, the bins as the
 * inspector cuts them (view_bin_lo), a level apart only next to a level's
 * edge; and somewhere the maximum would have drawn another glyph. */
static int sparkline_means(Tmux *t, int cols, int layer, int head, int n_pos) {
    char *l = line_with(t, "\xe2\x94\x8c inspector "); /* its width, from its top border */
    const char *a = l ? strstr(l, "\xe2\x94\x8c inspector ") : NULL, *b = a ? strstr(a, "\xe2\x94\x90") : NULL;
    int width = 0;
    for (const char *c = a; b && c <= b; c++) width += ((unsigned char)*c & 0xC0) != 0x80;
    free(l);
    ViewModel vm;
    view_init(&vm, 1, 1, NULL);
    ViewInspGeom g;
    view_insp_geom(&vm, width, 20, &g);
    view_free(&vm);
    l = line_with(t, "\xe2\x94\x82oracle  "); /* the label's column, not a verdict's "oracle 96%" */
    a = l ? strstr(l, "\xe2\x94\x82oracle  ") : NULL;
    if (width > 0 && g.stacked) { /* a narrow inspector gives its lines to the verdicts: no sparklines to bin */
        CHECK_MSG(!a, "a %d-column inspector, stacked, draws a sparkline at %d columns: %s", width, cols, l);
        free(l);
        return 0;
    }
    int lv[1024], n = 0;
    if (a) {
        a += 3; /* the border */
        for (int c = 1; c < g.x0 && *a; c++) a += 1;
        while (n < 1024 && (lv[n] = spark_level(a)) != -1 && strncmp(a, " oracle", 7)) a += lv[n++] == -2 ? 1 : 3;
    }
    free(l);
    CHECK_MSG(n > 0 && n < n_pos, "no binned oracle sparkline at %d columns (%d columns for %d positions)", cols, n,
              n_pos);
    if (n <= 0 || n >= n_pos) return -1;
    char sql[256], db[1100];
    snprintf(sql, sizeof sql, "SELECT oracle_logit FROM decisions WHERE run_id = 1 AND layer = %d AND head = %d"
             " AND pos < %d ORDER BY pos", layer, head, n_pos);
    snprintf(db, sizeof db, "%s/ahascope.db", t->dir);
    double *p = malloc(sizeof *p * (size_t)n_pos);
    int rows = p ? test_db_rows(db, sql, p, n_pos, 1) : -1;
    for (int i = 0; i < rows; i++) p[i] = isnan(p[i]) ? NAN : decide_prob(p[i]);
    CHECK_MSG(rows == n_pos, "%d rows of L%d H%d for %d positions", rows, layer, head, n_pos);
    int bad = 0, apart = 0;
    for (int c = 0; rows == n_pos && c < n; c++) {
        double sum = 0, hi = -1;
        int k = 0;
        for (int i = view_bin_lo(c, n_pos, n); i < view_bin_lo(c + 1, n_pos, n); i++)
            if (!isnan(p[i])) sum += p[i], k++, hi = p[i] > hi ? p[i] : hi;
        double mean = k ? sum / k : NAN;
        int want = k ? (int)floor(mean * 8) : -2, most = k ? (int)floor(hi * 8) : -2;
        want = want > 7 ? 7 : want, most = most > 7 ? 7 : most;
        int edge = k && fabs(mean * 8 - floor(mean * 8 + 0.5)) < 1e-3;
        if (lv[c] != want && !(edge && abs(lv[c] - want) == 1)) {
            if (!bad) test_fail(__FILE__, __LINE__, "column %d of %d of L%d H%d's sparkline at %d columns: level %d, "
                                "the bin's mean %.4f is level %d", c, n, layer, head, cols, lv[c], mean, want);
            bad++;
        }
        apart += most != want;
    }
    free(p);
    CHECK_MSG(apart > 0, "no bin of L%d H%d where the mean and the maximum differ: the test shows nothing", layer,
              head);
    return bad ? -1 : 0;
}

/* The `a` help line names the predictors `a` steps through, in its order:
 * read off `?`, then `a` pressed round the cycle, each press's legend
 * naming the next (QAdA's variants by their suffix, as the help gives
 * them) until it comes back to the first. */
static int agreement_cycle(Tmux *t, int cols) {
    tmux_keys(t, "?");
    TMUX_WAIT_RET(t, "agreement vs oracle: ", 10);
    char *l = line_with(t, "agreement vs oracle: "), names[8][24];
    const char *a = l ? strstr(l, "agreement vs oracle: ") + 21 : NULL;
    int n = 0;
    for (size_t k; a && n < 8; a += k + 1) {
        k = strcspn(a, "/ \xe2");
        snprintf(names[n++], sizeof names[0], "%.*s", (int)(k < 23 ? k : 23), a);
        if (a[k] != '/') break;
    }
    free(l);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "agreement vs oracle: ", 5));
    CHECK_MSG(n >= 2, "the a help line at %d columns names %d predictors", cols, n);
    int first = -1;
    for (int i = 0; n >= 2 && i <= n; i++) {
        tmux_keys(t, "a");
        int want = first < 0 ? -1 : (first + i) % n, seen = -1;
        char name[40] = "";
        for (int tries = 0; tries < 100 * tmux_patience() && (seen < 0 || (want >= 0 && seen != want)); tries++) {
            char *g = line_with(t, "agreement: ");
            const char *b = g ? strstr(g, "agreement: ") + 11 : NULL;
            if (b && !strncmp(b, "qada_", 5)) b += 5;
            size_t k = b ? strcspn(b, " ") : 0;
            snprintf(name, sizeof name, "%.*s", (int)(k < 39 ? k : 39), b ? b : "");
            free(g);
            seen = -1;
            for (int j = 0; j < n; j++)
                if (!strcmp(name, names[j])) seen = j;
            struct timespec ts = {0, 50000000L};
            nanosleep(&ts, NULL);
        }
        if (first < 0) first = seen;
        if (seen < 0 || (want >= 0 && seen != want)) {
            test_fail(__FILE__, __LINE__, "press %d of a at %d columns shows %s; the help's cycle says %s", i + 1,
                      cols, name, want >= 0 ? names[want] : "one of its names");
            return -1;
        }
    }
    return 0;
}

/* An oracle_err over 1 in the run (SQL finds the last): `d`'s why line
 * says the maps clamp it at 1, not a percentage over 100 beside a legend
 * saying "clamped at 1". */
static int oracle_err_over_one(Tmux *t, int cols) {
    double v[4];
    int n = db_row(t->dir, "SELECT pos, layer, head, oracle_err FROM decisions WHERE run_id = 1 AND oracle_err > 1"
                   " ORDER BY pos DESC, oracle_err DESC LIMIT 1", v, 4);
    CHECK_MSG(n, "no oracle_err over 1 in run 1");
    if (!n || go_to_cell(t, (int)v[0], (int)v[1], (int)v[2])) return -1;
    char want[96], pct[32];
    snprintf(want, sizeof want, "oracle_err %.3f, over 1 (the maps clamp it at 1)", v[3]);
    snprintf(pct, sizeof pct, "(%.1f%%)", 100 * v[3]);
    tmux_keys(t, "d");
    TMUX_WAIT_RET(t, want, 20);
    CHECK_MSG(tmux_gone(t, pct, 1), "d gives oracle_err %.3f as %s at %d columns", v[3], pct, cols);
    TMUX_WAIT_RET(t, " cells, ", 30); /* the count done: Esc would stop it first */
    tmux_keys(t, "Escape");
    if (!tmux_gone(t, "distributions \xc2\xb7", 5)) {
        char *scr = tmux_capture(t);
        test_fail(__FILE__, __LINE__, "Esc left d open at %d columns:\n%s", cols, scr ? scr : "");
        free(scr);
    }
    return 0;
}

/* In run 4's replay, the cell SQL finds where the oracle's mass moved most
 * between run 4 and its parent (the same token, both masses between 2% and
 * 98%, where a move shows in whole percents): the inspector's parent line
 * gives both masses, the parent's first, and where the line has room why
 * they differ, the local set when the windows differ (after `w` it blamed
 * the gates below, even at L0), else the gates below. */
static int parent_masses(Tmux *t, int cols, int parent) {
    char sql[1024];
    snprintf(sql, sizeof sql, /* each run's rows materialized first: a join of the view on itself takes minutes */
             "WITH c AS MATERIALIZED (SELECT pos, layer, head, oracle_logit o, local_window w FROM decisions WHERE "
             "run_id = 4 AND oracle_logit BETWEEN -3.9 AND 3.9), p AS MATERIALIZED (SELECT pos, layer, head, "
             "oracle_logit o, local_window w FROM decisions WHERE run_id = %d AND oracle_logit BETWEEN -3.9 AND 3.9) "
             "SELECT c.pos, c.layer, c.head, p.o, c.o, p.w, c.w FROM c JOIN p USING (pos, layer, head) JOIN tokens tc"
             " ON tc.run_id = 4 AND tc.pos = c.pos JOIN tokens tp ON tp.run_id = %d AND tp.pos = c.pos AND "
             "tp.token_id = tc.token_id ORDER BY ABS(c.o - p.o) DESC LIMIT 1", parent, parent);
    double v[7];
    int n = db_row(t->dir, sql, v, 7);
    CHECK_MSG(n, "no cell both run 4 and run %d give a mass", parent);
    if (!n) return -1;
    char ps[16], cs[16], pw[32];
    view_share_text(ps, sizeof ps, decide_prob(v[3]));
    view_share_text(cs, sizeof cs, decide_prob(v[4]));
    CHECK_MSG(strcmp(ps, cs), "the mass moved least where SQL says most: %s in both (L%d H%d pos %d)", ps, (int)v[1],
              (int)v[2], (int)v[0]);
    if (go_to_cell(t, (int)v[0], (int)v[1], (int)v[2])) return -1;
    tmux_keys(t, "Enter");
    snprintf(pw, sizeof pw, "oracle %s", ps);
    TMUX_WAIT_RET(t, pw, 20);
    char *l = line_with(t, pw); /* the briefest form: "parent: oracle 6% → now 94%" */
    const char *a = l ? strstr(l, pw) : NULL, *b = a ? strstr(a + strlen(pw), cs) : NULL;
    char why[96];
    if (v[5] != v[6])
        snprintf(why, sizeof why, "(" VIEW_PARENT_ORACLE_WHY_LOCAL ": w %d \xe2\x86\x92 %d)", (int)v[5], (int)v[6]);
    else snprintf(why, sizeof why, "(%s)", v[1] > 0 ? VIEW_PARENT_ORACLE_WHY : "");
    CHECK_MSG(a && b && strstr(l, "parent") && (cols < 140 || strstr(b, why)),
              "run %d's %s and run 4's %s at L%d H%d pos %d, %s, at %d columns: %s", parent, ps, cs, (int)v[1],
              (int)v[2], (int)v[0], why, cols, l ? l : "(no line)");
    free(l);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "inspector \xc2\xb7", 5));
    return 0;
}

/* `H` over n_heads heads: `y` copies its table whole, not the inspector
 * (the file AHASCOPE_YANK names, yank.txt in the pane's directory), and
 * PgDn keeps its header row on screen. */
static int heads_table(Tmux *t, int cols, int n_heads, int n_sorts) {
    tmux_keys(t, "H");
    TMUX_WAIT_RET(t, "heads by global_rate", 10);
    /* the status line's hint names every sortable column, as the pane's own line does (it said 1-5 over 8) */
    char sort[48];
    snprintf(sort, sizeof sort, "1-%d \xe2\x86\x90\xe2\x86\x92 sort", n_sorts);
    char *scr = tmux_capture(t);
    size_t len = scr ? strlen(scr) : 0;
    while (len && (scr[len - 1] == '\n' || scr[len - 1] == ' ')) scr[--len] = 0;
    const char *last = scr ? strrchr(scr, '\n') : NULL;
    CHECK_MSG(last && strstr(last, sort), "the status line under H at %d columns: %s", cols, last ? last : "");
    free(scr);
    char want[64];
    snprintf(want, sizeof want, "yanked the heads table (%d lines)", n_heads + 2); /* run line, names, heads */
    tmux_keys(t, "y");
    TMUX_WAIT_RET(t, want, 10);
    int st;
    char *txt = test_runf(&st, "head -c 100000 '%s/yank.txt'", t->dir);
    CHECK_MSG(txt && !strncmp(txt, "# ahascope run 1 seed 1 model ", 30) && strstr(txt, "\nrank  head ") &&
                  !strstr(txt, "verdict"),
              "y over H at %d columns: %.300s", cols, txt ? txt : "(none)");
    free(txt);
    tmux_keys(t, "NPage");
    CHECK_MSG(tmux_shows(t, "#  head ", 5), "H lost its header row after PgDn at %d columns", cols);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "heads by global_rate", 5));
    return 0;
}

/* L0 H1, an odd head: the timeline's half-block line names it, with the
 * cursor mark (its rows named only the even heads); then the pattern of
 * a head whose light keys once read 0.00 in the footer. On the organism
 * that is L2 H1, the copying head: 1.00 on the needle's next digit and
 * 0.0013 on the one after. */
static int odd_head_and_footer(Tmux *t, int cols, int organism) {
    char *l;
    if (!organism) { /* played past the timeline's columns: its bins are means, not maxima, and it says so */
        tmux_keys(t, "p");
        if (!tmux_shows_pos(t, 200, 60)) {
            test_fail(__FILE__, __LINE__, "the folder never reached pos 200 at %d columns", cols);
            return -1;
        }
        tmux_keys(t, "p");
        TMUX_WAIT_RET(t, "paused", 10);
        l = line_with(t, "timeline");
        CHECK_MSG(l && strstr(l, " pos (mean)"), "the timeline's title at %d columns: %s", cols, l ? l : "");
        free(l);
    }
    if (click_odd_head(t, cols)) return -1;
    TMUX_WAIT_RET(t, "L0H1", 10);
    l = line_with(t, "L0H1");
    CHECK_MSG(l && strstr(l, "\xe2\x96\xb8"), "the timeline's line of L0H1 has no cursor mark at %d columns: %s", cols,
              l ? l : "");
    free(l);
    int n_pos = tmux_pos(t);
    tmux_keys(t, "Enter"); /* the inspector's sparklines over more positions than columns: means */
    TMUX_WAIT_RET(t, "inspector \xc2\xb7 L0 H1", 10);
    if (sparkline_means(t, cols, 0, 1, n_pos + 1)) return -1;
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "inspector \xc2\xb7", 5));
    if (organism) { /* 506 positions in fewer columns: each a bin's mean, not its maximum, and said so */
        l = line_with(t, "timeline");
        CHECK_MSG(l && strstr(l, " pos (mean)"), "the timeline's title at %d columns: %s", cols, l ? l : "");
        free(l);
        tmux_keys(t, "Down Down");
    }
    tmux_keys(t, "A");
    TMUX_WAIT_RET(t, "heaviest keys: 1:", 20);
    l = line_with(t, "heaviest keys: 1:");
    CHECK_MSG(l && !strstr(l, " 0.00 ") && !strstr(l, " 0.00\xe2\x80\xa6"), "a weight reads 0.00 at %d columns: %s",
              cols, l ? l : "");
    if (organism)
        CHECK_MSG(l && strstr(l, "1:145 \"8\" 1.00 2:146 \"7\" 0.0013"), "L2 H1's footer at %d columns: %s", cols,
                  l ? l : "");
    free(l);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "heaviest keys:", 5));
    return 0;
}

/* The live half: the defects a recorded live run shows. */
static int live_defects(Tmux *t, int cols, int organism) {
    TMUX_WAIT_RET(t, cols >= 140 ? "\xce\xb8 0.001" : "0.001", 15); /* not rounded to 0.00 */
    /* the key bar: the panes in the words the help uses (none at 80x24 on 512 heads, whose timeline
     * is at its minimum there, test_views_keybar.c) */
    char *bar = line_with(t, "? help  H heads");
    CHECK_MSG((!organism && cols < 140) || (bar && strstr(bar, "? help  H heads  E every head  A pattern  d dist  v plots  R summary  D diff") &&
                  (cols < 140 || strstr(bar, "D diff  B runs  : SQL"))),
              "the key bar at %d columns: %s", cols, bar ? bar : "(none)");
    free(bar);
    char *scr = tmux_capture(t); /* nor in the bars' title, in either of its forms */
    CHECK_MSG(scr && (strstr(scr, "oracle \xce\xb8 0.001") || strstr(scr, "oracle (\xce\xb8 0.001)")),
              "the bars' title does not say theta 0.001 at %d columns", cols);
    free(scr);
    if (!organism && cols < 140) { /* beside the compact heatmap of 16 layers, the bars say which they show */
        char *b = line_with(t, "oracle \xce\xb8 0.001");
        CHECK_MSG(b && strstr(b, " L0-"), "the bars' title names no layer range at %d columns: %s", cols, b ? b : "");
        free(b);
    }
    CHECK_MSG(tmux_gone(t, "\xce\xb8 0.00 ", 3), "a pane rounds theta 0.001 to 0.00 at %d columns", cols);
    tmux_keys(t, "/ -l the Enter");
    tmux_keys(t, "/ Enter"); /* an empty line repeats the search */
    CHECK_MSG(tmux_gone(t, "no search yet", 3), "/ Enter after a search said there was none at %d columns", cols);
    tmux_keys(t, "d");
    TMUX_WAIT_RET(t, " cells, ", 20); /* the class sizes beside the AUC */
    TMUX_WAIT_RET(t, " global", 5);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "distributions", 5));
    tmux_keys(t, "B"); /* a run opened from B: one Esc back to the live run, not three */
    TMUX_WAIT_RET(t, "open run:", 10);
    TMUX_WAIT_RET(t, "tokens", 5); /* the list's header */
    tmux_keys(t, "1 Enter");
    TMUX_WAIT_RET(t, "replay of run 1", 30);
    TMUX_WAIT_RET(t, "Esc back to the live run", 5);
    CHECK_MSG(tmux_gone(t, "runs: an id", 3), "Enter left B's list open at %d columns", cols);
    tmux_keys(t, "Escape");
    TMUX_WAIT_RET(t, "back to the live run", 10);
    CHECK_MSG(tmux_gone(t, "replay run", 3), "one Esc did not leave the replay at %d columns", cols);
    tmux_keys(t, "D");
    TMUX_WAIT_RET(t, "run 1 has no parent run (change a setting to make one)", 20);
    if (heads_table(t, cols, organism ? 16 : 512, organism ? 8 : 5)) return -1; /* the item's marks add 3 */
    int before = selected_cell_width(t); /* the inspector takes rows, not the cells' width (6 became 3 at 140x45) */
    tmux_keys(t, "Enter"); /* the inspector: no negative zero (−log p read -0.00) */
    TMUX_WAIT_RET(t, "inspector \xc2\xb7", 10);
    int after = selected_cell_width(t);
    CHECK_MSG(cols < 140 || (before > 0 && after == before), "the selected cell %d blocks wide, %d with the inspector",
              before, after);
    CHECK_MSG(tmux_gone(t, "-0.00", 1) && tmux_gone(t, "\xe2\x88\x92" "0.00", 1), "a -0.00 on screen at %d columns",
              cols);
    tmux_keys(t, "Escape");
    if (odd_head_and_footer(t, cols, organism)) return -1;
    return agreement_cycle(t, cols);
}

/* The replay half, from dir's ahascope.db. */
static void replay_defects(const char *dir, int cols, int rows) {
    Tmux t;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db ahascope.db", test_bin_abs());
    char rname[80];
    const char *slash = strrchr(dir, '/');
    snprintf(rname, sizeof rname, "%.60s_r", slash ? slash + 1 : dir); /* the live session's name */
    CHECK_INT(tmux_open(&t, rname, dir, cols, rows, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "replay of run 1 (done)", 30); /* every position read: the cursor stays where b finds it */
    if (oracle_err_over_one(&t, cols)) return;
    tmux_keys(&t, "D");
    TMUX_WAIT(&t, "it was not re-evaluated from one", 20);
    tmux_keys(&t, "T"); /* re-scored: the header keeps whole fields (it was cut mid-number at 80 columns) */
    TMUX_WAIT(&t, "replay re-scored at tau 0.55", 20);
    char *hdr = tmux_capture(&t);
    char *nl = hdr ? strchr(hdr, '\n') : NULL;
    if (nl) *nl = 0;
    size_t n = hdr ? strlen(hdr) : 0;
    while (n && hdr[n - 1] == ' ') hdr[--n] = 0;
    CHECK_MSG(hdr && strstr(hdr, "\xcf\x84 0.55") &&
                  ((n >= 5 && !strcmp(hdr + n - 5, "/1024")) || (n && hdr[n - 1] == '%')),
              "the re-scored replay's header at %d columns: %s", cols, hdr ? hdr : "");
    free(hdr);
    tmux_keys(&t, "b"); /* a bookmark and its note set in the replay, kept in its file */
    char *scr = tmux_wait(&t, "bookmark at pos ", 5);
    int pos = -1;
    const char *at = scr ? strstr(scr, "bookmark at pos ") : NULL;
    if (at) sscanf(at, "bookmark at pos %d", &pos);
    free(scr);
    tmux_keys(&t, "C");
    TMUX_WAIT(&t, " note: ", 5);
    tmux_keys(&t, "-l \"seen in the replay\"");
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "note kept for the bookmark at pos ", 5);
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
    int st;
    char *r = test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT run_id || ':' || pos || ':' || COALESCE(note, '-')"
                             " FROM bookmarks\"", test_bin_abs(), dir);
    char want[64];
    snprintf(want, sizeof want, "\n1:%d:seen in the replay", pos);
    CHECK_MSG(pos >= 0 && st == 0 && r && strstr(r, want), "the replay's bookmark at %d columns: %s", cols, r ? r : "");
    free(r);
}

static void defects(int organism, int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_model(&t, organism, "def", cols, rows, "AHASCOPE_YANK=yank.txt", "--theta 0.001")) return;
    if (live_defects(&t, cols, organism)) return;
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
    replay_defects(t.dir, cols, rows);
}

TEST(tui_defects_on_a_16x32_head_folder_at_80x24) { defects(0, 80, 24); }

TEST(tui_defects_on_a_16x32_head_folder_at_140x45) { defects(0, 140, 45); }

TEST(tui_defects_on_the_organism_passkey_item_at_80x24) { defects(1, 80, 24); }

TEST(tui_defects_on_the_organism_passkey_item_at_140x45) { defects(1, 140, 45); }

/* The organism under its shipped routers: `extra --policy aha --routers
 * PATH --window 8` into flags, or -1 after a skip (no routers file). */
static int organism_routers(char *flags, size_t n, const char *extra) {
    char routers[1100];
    if (!realpath("engine/organism/routers_w8.safetensors", routers)) {
        test_skip("no engine/organism/routers_w8.safetensors in this checkout");
        return -1;
    }
    snprintf(flags, n, "%s --policy aha --routers '%s' --window 8", extra, routers);
    return 0;
}

/* Each chunk of a re-evaluation slowed, so keys land before its first. */
#define SLOW_REEVAL "AHASCOPE_TEST_REEVAL_DELAY_MS=1500"

/* "run,parent,status,positions" a line for every run of dir's database. */
static char *runs_table(const char *dir) {
    int st;
    return test_runf(&st, "%s query --db %s/ahascope.db --csv \"SELECT r.run_id, r.parent_run_id, r.status, "
                          "(SELECT COUNT(*) FROM tokens k WHERE k.run_id = r.run_id) FROM runs r ORDER BY r.run_id\"",
                     test_bin_abs(), dir);
}

/* The replay of run 4, X its first key: the parent, which a replay reads
 * only for the inspector, is read for X too, and its map opens once it
 * has come (X said "no parent run to compare with" until the inspector
 * had been opened). */
static void flips_before_the_parent_is_read(const char *dir, int cols, int parent) {
    Tmux r;
    char cmd[1200], want[48];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db ahascope.db --run 4", test_bin_abs());
    CHECK_INT(tmux_open(&r, "defx", dir, cols, cols < 140 ? 24 : 45, NULL, cmd, 0), 0);
    TMUX_WAIT(&r, "replay of run 4 (done)", 30);
    tmux_keys(&r, "X");
    snprintf(want, sizeof want, "flips vs parent run %d", parent);
    TMUX_WAIT(&r, want, 20);
    CHECK_MSG(tmux_gone(&r, "no parent run to compare with", 1), "X said run 4 had no parent at %d columns", cols);
    tmux_keys(&r, "Escape");
    CHECK(tmux_gone(&r, want, 5));
    if (parent_masses(&r, cols, parent)) return;
    TMUX_QUIT(&r, 10);
    tmux_stop(&r);
}

/* `w w w` faster than a chunk: run 2 stops before its first and keeps no
 * position, so it is no one's parent; run 3 likewise unless a chunk beat
 * the key. Run 4's parent is the last run before it that has positions, and
 * D names that run and diffs over the positions both have while run 4 is
 * written, as the database says after. The status line gives θ 0.001 as
 * the header does. */
static void quick_setting_changes(Tmux *t, int cols, const char *key, const char *done) {
    tmux_keys(t, key); /* the progress line's count is past 80 columns: its run's number is not */
    TMUX_WAIT(t, "as run 2", 10);
    tmux_keys(t, key);
    TMUX_WAIT(t, "as run 3", 10);
    tmux_keys(t, key);
    TMUX_WAIT(t, "as run 4", 10);
    TMUX_WAIT(t, "theta=0.001", 5); /* not theta=0.00 */
    tmux_keys(t, "D");
    char *s = tmux_wait(t, "run 4 vs its parent ", 20);
    int parent = -1, lo = -1, hi = -1, n = -1;
    const char *at = s ? strstr(s, "run 4 vs its parent ") : NULL;
    if (at) sscanf(at, "run 4 vs its parent %d", &parent);
    const char *over = s ? strstr(s, "diff over positions ") : NULL;
    if (over) sscanf(over, "diff over positions %d-%d: run 4 is still being written (%d of", &lo, &hi, &n);
    CHECK_MSG(!over || (lo == 0 && hi + 1 == n), "D's range while run 4 is written: %d-%d with %d positions in", lo,
              hi, n);
    free(s);
    TMUX_WAIT(t, done, 90); /* the re-evaluation done */
    tmux_keys(t, "Escape");
    TMUX_QUIT(t, 10);
    char *r = runs_table(t->dir);
    int n2 = -1, n3 = -1, p3 = -1, p4 = -1, n1 = -1, n4 = -1;
    const char *a = r ? strstr(r, "\n1,,done,") : NULL, *b = r ? strstr(r, "\n2,1,interrupted,") : NULL;
    const char *c = r ? strstr(r, "\n3,") : NULL, *d = r ? strstr(r, "\n4,") : NULL;
    CHECK_MSG(a && b && c && d && sscanf(a, "\n1,,done,%d", &n1) == 1 && sscanf(b, "\n2,1,interrupted,%d", &n2) == 1 &&
                  sscanf(c, "\n3,%d,interrupted,%d", &p3, &n3) == 2 && sscanf(d, "\n4,%d,done,%d", &p4, &n4) == 2,
              "runs:\n%s", r ? r : "");
    free(r);
    /* each parent the last run before it that kept positions (a chunk may beat a key on a busy host) */
    int want3 = n2 > 0 ? 2 : 1, want4 = n3 > 0 ? 3 : want3;
    CHECK_MSG(p3 == want3 && p4 == want4, "parents: run 3's %d, run 4's %d; positions kept: run 2 %d, run 3 %d", p3,
              p4, n2, n3);
    CHECK_MSG(parent == p4, "D diffed run 4 against run %d, its parent is %d", parent, p4);
    CHECK_MSG(n4 == n1, "run 4 has %d positions, run 1 %d", n4, n1);
    if (p4 > 0) flips_before_the_parent_is_read(t->dir, cols, p4);
}

static void quick_changes(int organism, int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_model(&t, organism, "defw", cols, rows, SLOW_REEVAL, "--theta 0.001")) return;
    quick_setting_changes(&t, cols, "w", "run 4: full, w=");
    tmux_stop(&t);
}

TEST(tui_defects_quick_setting_changes_on_a_16x32_head_folder_at_80x24) { quick_changes(0, 80, 24); }

TEST(tui_defects_quick_setting_changes_on_a_16x32_head_folder_at_140x45) { quick_changes(0, 140, 45); }

/* The issue's own keys: `T T T` under the organism's routers, each τ step
 * a new execution of the AHA policy. */
static void quick_tau_organism(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char flags[1200];
    if (organism_routers(flags, sizeof flags, "--theta 0.001")) return;
    if (tmux_open_model(&t, 1, "deft", cols, rows, SLOW_REEVAL, flags)) return;
    quick_setting_changes(&t, cols, "T", "run 4: aha, w=8");
    tmux_stop(&t);
}

TEST(tui_defects_quick_tau_steps_under_the_organism_routers_at_80x24) { quick_tau_organism(80, 24); }

TEST(tui_defects_quick_tau_steps_under_the_organism_routers_at_140x45) { quick_tau_organism(140, 45); }

TEST(tui_defects_quick_setting_changes_on_the_organism_passkey_item_at_80x24) { quick_changes(1, 80, 24); }

TEST(tui_defects_quick_setting_changes_on_the_organism_passkey_item_at_140x45) { quick_changes(1, 140, 45); }

/* --no-record at θ 0: `o` says θ is at its limit; `s` exports the run on screen (n positions) and `R`
 * summarises it, a setting change says what it ran, and nothing names a
 * "run 0" or refuses for want of a database. */
static void unrecorded(Tmux *t, int n) {
    tmux_keys(t, "o"); /* θ is 0 already: nothing to lower, and it says so (it said re-scored) */
    char *lim = tmux_wait(t, "unchanged: ", 10);
    CHECK_MSG(lim && !strstr(lim, "re-scored"), "o at theta 0:\n%s", lim ? lim : "(no unchanged)");
    free(lim);
    char want[96];
    snprintf(want, sizeof want, "exported the run on screen (not recorded: %d positions)", n);
    tmux_keys(t, "s");
    char *scr = tmux_wait(t, want, 20);
    CHECK_MSG(scr && !strstr(scr, "run 0") && !strstr(scr, "not recording"), "after s:\n%s", scr ? scr : "");
    free(scr);
    char path[1200];
    snprintf(path, sizeof path, "%s/ahascope-unrecorded.json", t->dir);
    int st;
    char *ids = test_runf(&st, "grep -o '\"token_id\":' '%s' | wc -l", path);
    CHECK_MSG(ids && atoi(ids) == n, "%s holds %s token ids, not %d", path, ids ? ids : "no", n);
    free(ids);
    tmux_keys(t, "R");
    scr = tmux_wait(t, "summary (not recorded)", 20);
    CHECK_MSG(scr && !strstr(scr, "run 0"), "after R:\n%s", scr ? scr : "");
    free(scr);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "summary (not recorded)", 5));
    tmux_keys(t, "w");
    scr = tmux_wait(t, "not recorded: full, w=", 30);
    CHECK_MSG(scr && !strstr(scr, "run 0"), "after w:\n%s", scr ? scr : "");
    free(scr);
    TMUX_QUIT(t, 10);
}

/* (The organism's item in its recorded session's command, --no-record added.) */
static void unrecorded_session(int organism, int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32];
    snprintf(name, sizeof name, "defn%s_%d", organism ? "org" : "16x32", cols);
    free(test_runf(NULL, "rm -f '%s'/ahascope-unrecorded.*", test_tmp(name)));
    if (tmux_open_model(&t, organism, "defn", cols, rows, NULL, "--no-record --theta 0")) return;
    unrecorded(&t, organism ? 506 : 12);
    tmux_stop(&t);
}

TEST(tui_defects_norecord_on_a_16x32_head_folder_at_80x24) { unrecorded_session(0, 80, 24); }

TEST(tui_defects_norecord_on_a_16x32_head_folder_at_140x45) { unrecorded_session(0, 140, 45); }

TEST(tui_defects_norecord_on_the_organism_passkey_item_at_80x24) { unrecorded_session(1, 80, 24); }

TEST(tui_defects_norecord_on_the_organism_passkey_item_at_140x45) { unrecorded_session(1, 140, 45); }

/* `d` on the organism under its routers (policy aha, w 8) at the passkey
 * answer: the router's σ in its tail form (logit −5.93 read σ 0.00), the
 * histogram's score axis at full scale (0, .5, 1), the ROC's axis across
 * its plot to 1, and its AUC whole where the pane is narrow (0.997 read
 * 0.99 against the border at 80 columns). */
static void dist_under_routers(int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    char name[32], flags[1200];
    snprintf(name, sizeof name, "defdorg_%d", cols);
    if (organism_routers(flags, sizeof flags, "")) return;
    if (tmux_open_passkey(&t, name, cols, rows, NULL, flags)) return;
    tmux_keys(&t, "d");
    TMUX_WAIT(&t, " cells, ", 20);
    TMUX_WAIT(&t, "\xcf\x83 0.003 ", 10);
    char *l = line_with(&t, "0        .5        1");
    CHECK_MSG(l != NULL, "no full-scale score axis under d at %d columns", cols);
    free(l);
    l = line_with(&t, " rate");
    size_t n = l ? strlen(l) : 0;
    while (n && l[n - 1] == ' ') l[--n] = 0;
    CHECK_MSG(l && n > 4 && !strcmp(l + n - 4, "1\xe2\x94\x82"), "the ROC's axis at %d columns: %s", cols, l ? l : "");
    free(l);
    CHECK_MSG(tmux_gone(&t, "AUC 0.99\xe2\x94\x82", 1), "the ROC's AUC cut at the border at %d columns", cols);
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
}

TEST(tui_defects_dist_under_the_organism_routers_at_80x24) { dist_under_routers(80, 24); }

TEST(tui_defects_dist_under_the_organism_routers_at_140x45) { dist_under_routers(140, 45); }

/* The replay of a run `record` made without --attn-top (it ranks no far
 * key): `A` says why its grid is empty, in the grid and on its last line
 * (it drew an empty grid without a word). */
static void replay_unranked(int organism, int cols, int rows) {
    TMUX_NEED_TUI();
    char name[32], model[4096], dir[1024];
    snprintf(name, sizeof name, "defu%s_%d", organism ? "org" : "16x32", cols);
    snprintf(dir, sizeof dir, "%s", test_tmp(name));
    int st;
    char *o;
    if (organism) {
        if (!realpath("engine/organism/organism.bin", model)) {
            test_skip("no engine/organism/organism.bin in this checkout");
            return;
        }
        o = test_runf(&st, "mkdir -p '%s'", dir);
    } else {
        snprintf(model, sizeof model, "%s/m", dir);
        o = test_runf(&st, "mkdir -p '%s' && %s bench --dims 256,512,16,32,8,512,1024 --save-hf '%s' 2>&1", dir,
                      test_bin_abs(), model);
    }
    free(o);
    o = test_runf(&st, "cd '%s' && %s record --db rec.db --model '%s' --prompt 'Once upon a time' --steps 40 "
                       "--temperature 0 --window 8 2>&1", dir, test_bin_abs(), model);
    CHECK_MSG(st == 0, "record: %s", o ? o : "");
    free(o);
    if (st) return;
    Tmux t;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db rec.db", test_bin_abs());
    CHECK_INT(tmux_open(&t, name, dir, cols, rows, NULL, cmd, 0), 0);
    TMUX_WAIT(&t, "replay of run 1 (done)", 30);
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, VIEW_PATTERN_UNRANKED, 10);
    char *scr = tmux_capture(&t);
    int lines = 0;
    for (const char *a = scr; a && (a = strstr(a, VIEW_PATTERN_UNRANKED)); a++) lines++;
    CHECK_MSG(lines == 2, "the reason on %d lines at %d columns:\n%s", lines, cols, scr ? scr : "");
    free(scr);
    TMUX_QUIT(&t, 10);
    tmux_stop(&t);
}

TEST(tui_defects_replay_without_attn_top_on_the_organism_at_80x24) { replay_unranked(1, 80, 24); }

TEST(tui_defects_replay_without_attn_top_on_the_organism_at_140x45) { replay_unranked(1, 140, 45); }

TEST(tui_defects_replay_without_attn_top_on_a_16x32_head_folder_at_80x24) { replay_unranked(0, 80, 24); }

TEST(tui_defects_replay_without_attn_top_on_a_16x32_head_folder_at_140x45) { replay_unranked(0, 140, 45); }
