/* test_tui_keep.c — `y`, `Y`, `S` and `&` end to end in tmux: whole tables kept, and the paths to the needle.
 *
 * On stories260K recorded into a database at 80x24: `y` over `H` copies
 * the whole table (not the inspector, the defect of issue 52), `Y` its CSV,
 * whose rates are the store's head_rates (`ahascope query`); `S` writes
 * the CSV and an SVG (parsed by python3's xml module) without following a
 * symlink in its place; the pattern (`A`) and the run summary (`R`) the
 * same, and again at 140x45; the replay's pattern, saved by `S`, is
 * attn_top's rows cell for cell. On the organism's passkey item at 140x45 and 80x24, `&` lists the
 * paths from the answer's second digit to the needle: L2 H1 reading the
 * needle's next digit directly, and paths through a second hop below it,
 * from the recorded top-k (a) and, once the worker's full rows come, from
 * those rows with the rollout (b). `S` over `H` and `A` again on the
 * organism's passkey item and on a 16 × 32-head folder at both sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/test.h"
#include "tests/tmux.h"

/* The whole file at dir/name (malloc'd; NULL if absent). */
static char *slurp(const char *dir, const char *name) {
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = NULL;
    size_t cap = 0, n = 0, k;
    do {
        if (n + 4096 + 1 > cap) s = realloc(s, cap = 2 * cap + 8192);
        k = fread(s + n, 1, 4096, f);
        n += k;
    } while (k > 0 && s);
    fclose(f);
    if (s) s[n] = 0;
    return s;
}

/* Every head's global_rate and n of the CSV against head_rates over run 1,
 * n_heads rows (layers × heads). */
static void csv_is_head_rates(const char *csv, const char *db, int n_heads) {
    int st, rows = 0;
    char *out = test_runf(&st, "%s query --db %s --csv \"SELECT layer, head, global_rate, n FROM head_rates WHERE "
                               "run_id = 1\" 2>&1", test_bin_abs(), db);
    CHECK_MSG(st == 0 && out, "query: %s", out ? out : "");
    for (const char *s = csv ? strstr(csv, "\nrank,layer,head,") : NULL; s; s = strchr(s + 1, '\n')) {
        int rank, l, h, n;
        double g;
        if (sscanf(s + 1, "%d,%d,%d,%lf", &rank, &l, &h, &g) != 4) continue;
        const char *end = strchr(s + 1, '\n'), *f = end ? end : s + strlen(s);
        while (f > s && f[-1] != ',') f--; /* n is the row's last field */
        n = atoi(f);
        char want[64];
        snprintf(want, sizeof want, "\n%d,%d,", l, h);
        const char *row = out ? strstr(out, want) : NULL;
        double sg = -1;
        int sn = -1;
        if (row) sscanf(row + strlen(want), "%lf,%d", &sg, &sn);
        CHECK_MSG(row && fabs(sg - g) < 1e-5 && sn == n, "L%d H%d: CSV %.6f n %d, head_rates %.6f n %d", l, h, g, n, sg,
                  sn);
        rows++;
    }
    CHECK_INT(rows, n_heads);
    free(out);
}

/* python3's xml module parses dir/name as SVG and counts its rects of class cls. */
static int svg_rects(const char *dir, const char *name, const char *cls) {
    int st;
    char *out = test_runf(&st, "cd '%s' && python3 -c \"import xml.etree.ElementTree as E; r = E.parse('%s').getroot(); "
                               "assert r.tag == '{http://www.w3.org/2000/svg}svg'; print(sum(1 for e in "
                               "r.iter('{http://www.w3.org/2000/svg}rect') if e.get('class') == '%s'))\" 2>&1",
                          dir, name, cls);
    int n = st == 0 && out ? atoi(out) : -1;
    CHECK_MSG(n > 0, "%s: %s", name, out ? out : "");
    free(out);
    return n;
}

/* The replay of run 1: its pattern (L0 H0) saved by S, built from the
 * recorded far keys, is attn_top's rows read with SQL. */
static void replay_pattern_is_attn_top(const char *dir) {
    Tmux r;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s tui --replay --db keep.db", test_bin_abs());
    CHECK_INT(tmux_open(&r, "keepreplay", dir, 80, 24, NULL, cmd, 0), 0);
    TMUX_WAIT(&r, "replay", 15);
    TMUX_WAIT(&r, "replay of run 1 (done)", 30); /* every position loaded */
    tmux_keys(&r, "A");
    TMUX_WAIT(&r, "pattern L0 H0", 15);
    int saved = 0;
    for (int i = 0; i < 30 && !saved; i++)
        tmux_keys(&r, "S"), saved = tmux_shows(&r, "saved ahascope-run1-L0H0-pattern.csv", 1);
    TMUX_WAIT(&r, "saved ahascope-run1-L0H0-pattern.csv", 10);
    TMUX_QUIT(&r, 15); /* q closes the pane on top first */
    tmux_stop(&r);
    int st, rows = 0;
    char *sql = test_runf(&st, "cd '%s' && %s query --db keep.db --csv \"SELECT pos, key_pos, MAX(weight) FROM attn_top "
                               "WHERE run_id = 1 AND layer = 0 AND head = 0 GROUP BY pos, key_pos\" 2>&1",
                          dir, test_bin_abs());
    char *csv = slurp(dir, "ahascope-run1-L0H0-pattern.csv");
    CHECK_MSG(csv && strstr(csv, "recorded top-k far keys only"), "%.300s", csv ? csv : "(none)");
    const char *s = csv ? strstr(csv, "\nquery,key,weight\n") : NULL;
    for (s = s ? strchr(s + 1, '\n') : NULL; s && s[1]; s = strchr(s + 1, '\n')) {
        int q, k;
        double w, sw = -1;
        if (sscanf(s + 1, "%d,%d,%lf", &q, &k, &w) != 3) continue;
        char want[48];
        snprintf(want, sizeof want, "\n%d,%d,", q, k);
        const char *row = sql ? strstr(sql, want) : NULL;
        if (row) sw = atof(row + strlen(want));
        CHECK_MSG(row && fabs(sw - w) < 2e-6, "pattern %d,%d %.6f, attn_top %.6f", q, k, w, sw);
        rows++;
    }
    int sql_rows = -1; /* the header line aside */
    for (const char *p = sql; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) sql_rows++;
    CHECK_MSG(rows > 30 && rows == sql_rows, "%d pattern cells, %d attn_top rows", rows, sql_rows);
    free(sql), free(csv);
}

/* y, Y, S over H, A and R at cols x rows (the replay's pattern checked once). */
static void keep_tables(const char *name, int cols, int rows, int replay) {
    Tmux t;
    CHECK_INT(tmux_open_stories(&t, name, cols, rows, "AHASCOPE_YANK=yank.txt", "--db keep.db"), 0);
    char db[1200], link[1200], precious[1200];
    snprintf(db, sizeof db, "%s/keep.db", t.dir);
    TMUX_WAIT(&t, "pos 4/512", 10);
    tmux_keys(&t, "+ + p");
    if (!tmux_shows_pos(&t, 40, 40)) { test_fail(__FILE__, __LINE__, "never reached pos 40"); tmux_stop(&t); return; }
    tmux_keys(&t, "p");
    TMUX_WAIT(&t, "paused", 10);
    /* a symlink where S writes: replaced, its target untouched */
    snprintf(precious, sizeof precious, "%s/precious", t.dir);
    snprintf(link, sizeof link, "%s/ahascope-run1-heads.svg", t.dir);
    FILE *f = fopen(precious, "w");
    if (f) fputs("keep me\n", f), fclose(f);
    CHECK(symlink(precious, link) == 0);
    tmux_keys(&t, "H");
    TMUX_WAIT(&t, "heads by global_rate", 10);
    tmux_keys(&t, "y");
    TMUX_WAIT(&t, "yanked the heads table (42 lines)", 10); /* run line, names, 40 heads */
    char *txt = slurp(t.dir, "yank.txt");
    CHECK_MSG(txt && !strncmp(txt, "# ahascope run 1 seed 1 model ", 30) && strstr(txt, "\nrank  head ") &&
                  !strstr(txt, "verdict"),
              "%s", txt ? txt : "(none)");
    free(txt);
    tmux_keys(&t, "Y");
    TMUX_WAIT(&t, "yanked the heads table as CSV", 10);
    tmux_keys(&t, "S");
    TMUX_WAIT(&t, "saved ahascope-run1-heads.csv and ahascope-run1-heads.svg", 10);
    char *csv = slurp(t.dir, "ahascope-run1-heads.csv"), *ycsv = slurp(t.dir, "yank.txt"), *kept = slurp(t.dir, "precious");
    CHECK_MSG(kept && !strcmp(kept, "keep me\n"), "the link's target was written: %s", kept ? kept : "(gone)");
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode));
    CHECK_MSG(csv && ycsv && !strcmp(csv, ycsv), "S's CSV is Y's");
    CHECK(svg_rects(t.dir, "ahascope-run1-heads.svg", "bar") > 20);
    /* the pattern of the selected head: its rows, its CSV and SVG */
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "heads by global_rate", 5));
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, "pattern L0 H0", 15);
    /* the grid comes from the worker a moment after the title: y until it is there */
    int yanked = 0;
    for (int i = 0; i < 30 && !yanked; i++) tmux_keys(&t, "y"), yanked = tmux_shows(&t, "yanked the pattern's rows", 1);
    TMUX_WAIT(&t, "yanked the pattern's rows", 10);
    tmux_keys(&t, "S");
    TMUX_WAIT(&t, "saved ahascope-run1-L0H0-pattern.csv", 10);
    char *pcsv = slurp(t.dir, "ahascope-run1-L0H0-pattern.csv");
    CHECK_MSG(pcsv && strstr(pcsv, "\nquery,key,weight\n0,0,1.000000\n"), "%.300s", pcsv ? pcsv : "(none)");
    CHECK(svg_rects(t.dir, "ahascope-run1-L0H0-pattern.svg", "cell") > 40);
    free(pcsv);
    /* the run summary: y copies it whole, Y as CSV */
    tmux_keys(&t, "Escape");
    CHECK(tmux_gone(&t, "pattern L0 H0", 5));
    tmux_keys(&t, "R");
    TMUX_WAIT(&t, "run 1 summary", 20);
    tmux_keys(&t, "y");
    TMUX_WAIT(&t, "yanked the summary", 10);
    txt = slurp(t.dir, "yank.txt");
    CHECK_MSG(txt && strstr(txt, "\n# run 1 summary\n") && strchr(strstr(txt, "summary\n") + 8, '\n'), "%s",
              txt ? txt : "(none)");
    free(txt);
    tmux_keys(&t, "Y");
    TMUX_WAIT(&t, "yanked the text pane as CSV", 10);
    TMUX_QUIT(&t, 15); /* q closes the pane on top first */
    tmux_stop(&t);
    csv_is_head_rates(csv, db, 5 * 8); /* stories260K: 5 layers x 8 heads */
    free(csv), free(ycsv), free(kept);
    if (replay) replay_pattern_is_attn_top(t.dir);
}

TEST(tui_keep_tables_yanked_and_saved_match_the_store) {
    TMUX_NEED_TUI();
    keep_tables("keep80", 80, 24, 1);
}

TEST(tui_keep_tables_at_140x45) {
    TMUX_NEED_TUI();
    keep_tables("keep140", 140, 45, 0);
}

/* The organism's passkey item two steps into the answer: `&` shows the
 * copying head reading the needle's next digit, and two-hop paths. */
TEST(tui_keep_paths_to_the_needle_on_the_organism) {
    TMUX_NEED_TUI();
    const int size[2][2] = {{140, 45}, {80, 24}};
    for (int k = 0; k < 2; k++) {
        Tmux t;
        if (tmux_open_passkey(&t, k ? "paths80" : "paths140", size[k][0], size[k][1], NULL, NULL)) return;
        tmux_keys(&t, "\"&\""); /* quoted: the keys pass through a shell */
        TMUX_WAIT(&t, "paths from pos 505: L2 H1 > 145 > direct", 15);
        TMUX_WAIT(&t, "(a) product of the recorded top-k weights", 5);
        TMUX_WAIT(&t, "paths from pos 505: rollout 0.", 60); /* (b): the worker's full rows came */
        if (k == 0) TMUX_WAIT(&t, "L2 H1     145  8", 5);
        /* Y: the paths as CSV, a two-hop row among them */
        tmux_keys(&t, "Y");
        TMUX_WAIT(&t, "yanked the text pane as CSV", 10);
        char *csv = slurp(t.dir, "ahascope-yank.txt");
        CHECK_MSG(csv && strstr(csv, "\nrank,hop 1,j,token,w1,hop 2,w2,path\n1,L2 H1,145,8,"), "%.600s",
                  csv ? csv : "(none)");
        int two_hop = 0;
        for (const char *s = csv ? strstr(csv, "\n1,L2 H1") : NULL; s; s = strchr(s + 1, '\n')) {
            char h1[16], h2[16];
            int rank, j, l1, l2;
            if (sscanf(s + 1, "%d,%15[^,],%d,%*[^,],%*f,%15[^,]", &rank, h1, &j, h2) == 4 && strcmp(h2, "direct") &&
                sscanf(h1, "L%d", &l1) == 1 && sscanf(h2, "L%d", &l2) == 1)
                two_hop += l2 < l1;
        }
        CHECK_MSG(two_hop > 0, "no two-hop path: %.800s", csv ? csv : "");
        /* (b): the rollout's share and the exact paths, where the window's keys count too */
        const char *b = csv ? strstr(csv, "attention rollout (heads averaged, half identity for the residual): ") : NULL;
        double total = b ? atof(strchr(b, ':') + 2) : -1;
        CHECK_MSG(total > 0 && total < 1, "rollout %f: %.300s", total, b ? b : "(none)");
        CHECK_MSG(csv && strstr(csv, "\nhead,via\n") && strstr(csv, "exact paths from the full rows: "), "%.2000s",
                  csv ? csv : "");
        const char *exact = csv ? strstr(csv, "exact paths from the full rows: ") : NULL;
        CHECK_MSG(exact && strstr(exact, "\n1,L2 H1,145,8,"), "%.600s", exact ? exact : "(none)");
        free(csv);
        TMUX_QUIT(&t, 15); /* q closes the pane on top first */
        tmux_stop(&t);
    }
}

/* `S` over `H` then `A` in a recorded session whose database is
 * dir/ahascope.db: the heads' CSV is head_rates, row for row (n_heads
 * of them), both SVGs parse; the pattern's CSV holds the row of the
 * position on screen, `pos`, and on the organism (L2 H1) that row puts
 * weight 1.00 on the needle's next digit, pos 145. */
static void save_tables(Tmux *t, int n_heads, int pos, int organism) {
    tmux_keys(t, "H");
    TMUX_WAIT(t, "heads by global_rate", 10);
    tmux_keys(t, "S");
    TMUX_WAIT(t, "saved ahascope-run1-heads.csv and ahascope-run1-heads.svg", 10);
    char db[1200];
    snprintf(db, sizeof db, "%s/ahascope.db", t->dir);
    char *csv = slurp(t->dir, "ahascope-run1-heads.csv");
    csv_is_head_rates(csv, db, n_heads);
    free(csv);
    CHECK(svg_rects(t->dir, "ahascope-run1-heads.svg", "bar") > 0);
    tmux_keys(t, "Escape");
    CHECK(tmux_gone(t, "heads by global_rate", 5));
    const char *head = organism ? "L2H1" : "L0H0";
    if (organism) tmux_keys(t, "Down Down Right");
    tmux_keys(t, "A");
    TMUX_WAIT(t, organism ? "pattern L2 H1" : "pattern L0 H0", 15);
    char want[96], file[64];
    snprintf(file, sizeof file, "ahascope-run1-%s-pattern.csv", head);
    snprintf(want, sizeof want, "saved %s", file);
    int saved = 0; /* the grid comes from the worker a moment after the title */
    for (int i = 0; i < 30 && !saved; i++) tmux_keys(t, "S"), saved = tmux_shows(t, want, 1);
    TMUX_WAIT(t, want, 10);
    char *p = slurp(t->dir, file);
    snprintf(want, sizeof want, "\n%d,", pos);
    const char *row = p ? strstr(p, want) : NULL;
    CHECK_MSG(row, "%s has no row of pos %d: %.300s", file, pos, p ? p : "(none)");
    if (organism) {
        snprintf(want, sizeof want, "\n%d,145,", pos);
        const char *r = p ? strstr(p, want) : NULL;
        CHECK_MSG(r && atof(r + strlen(want)) > 0.99, "%s: L2 H1's weight on pos 145 at %d: %.80s", file, pos,
                  r ? r : "(no row)");
    }
    free(p);
    snprintf(file, sizeof file, "ahascope-run1-%s-pattern.svg", head);
    CHECK(svg_rects(t->dir, file, "cell") > 40);
    TMUX_QUIT(t, 15); /* q closes the pane on top first */
}

static void save_tables_on(int organism, int cols, int rows) {
    TMUX_NEED_TUI();
    Tmux t;
    if (tmux_open_model(&t, organism, "save", cols, rows, NULL, NULL)) return;
    if (organism) save_tables(&t, 4 * 4, 505, 1);
    else save_tables(&t, 16 * 32, 11, 0);
    tmux_stop(&t);
}

TEST(tui_keep_save_tables_on_the_organism_passkey_item_at_80x24) { save_tables_on(1, 80, 24); }

TEST(tui_keep_save_tables_on_the_organism_passkey_item_at_140x45) { save_tables_on(1, 140, 45); }

TEST(tui_keep_save_tables_on_a_16x32_head_folder_at_80x24) { save_tables_on(0, 80, 24); }

TEST(tui_keep_save_tables_on_a_16x32_head_folder_at_140x45) { save_tables_on(0, 140, 45); }
