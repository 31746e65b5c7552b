/* test_flips.c — the same head in the parent and the child run: flip shares, `X`, the `par` row.
 *
 * The same head in the parent and the child run,
 * graphically (views/flips.h): each head's flip share against a plain
 * recount, positions one run did not decide passed over; X, the arrows,
 * Enter and Esc on the map; a frame at 80×24 and 140×45 that shows the
 * map and the timeline's parent row with its flips marked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/flips.h"
#include "views/geom.h"
#include "views/keymap.h"
#include "views/pin.h"

enum { N_POS = 40 };

/* m with a parent run of N_POS positions and this run over the same ones,
 * the gate of cell flipped where (pos + cell) % 5 == 0, and positions 0-2
 * undecided in the parent, 3 in this run. */
static void two_runs(ViewModel *m, int layers, int heads) {
    view_init(m, layers, heads, NULL);
    fx_fill(m, N_POS);
    view_keep_parent(m, "run 1");
    fx_fill(m, N_POS);
    for (int i = 0; i < N_POS; i++)
        for (int c = 0; c < layers * heads; c++)
            if ((i + c) % 5 == 0) m->hist[i]->gate[c] = !m->parent.hist[i]->gate[c];
    for (int i = 0; i < 3; i++) m->parent.hist[i]->n_far = 0;
    m->hist[3]->n_far = 0;
}

TEST(flips_share_matches_a_recount) {
    ViewModel m;
    two_runs(&m, 3, 4);
    for (int c = 0; c < 12; c++)
        for (int p0 = 0; p0 < N_POS; p0 += 7)
            for (int p1 = p0; p1 <= N_POS + 3; p1 += 5) {
                int n = 0, flips = 0;
                for (int i = p0; i < p1 && i < N_POS; i++) {
                    if (i < 4) continue;
                    n++;
                    flips += (i + c) % 5 == 0;
                }
                int got_n;
                double f = view_flip_share(&m, c, p0, p1, &got_n);
                CHECK_INT(got_n, n);
                if (n) CHECK_MSG(fabs(f - (double)flips / n) < 1e-12, "cell %d [%d,%d): %f", c, p0, p1, f);
                else CHECK(isnan(f));
            }
    view_drop_parent(&m);
    CHECK(isnan(view_flip_share(&m, 0, 0, N_POS, NULL))); /* no parent: nothing to compare */
    view_free(&m);
}

TEST(flips_keys_open_move_select_and_close) {
    ViewModel m;
    view_init(&m, 3, 4, NULL);
    fx_fill(&m, 10);
    CHECK_INT(view_key_command('X'), VIEW_OP_FLIPS);
    view_key(&m, 'X'); /* no parent: refused, said how to get one */
    CHECK_INT(m.flips_open, 0);
    CHECK_MSG(strstr(m.status, "no parent run"), "%s", m.status);
    view_free(&m);
    two_runs(&m, 3, 4);
    view_key(&m, 'X');
    CHECK_INT(m.flips_open, 1);
    view_key(&m, KEY_DOWN);
    view_key(&m, KEY_RIGHT);
    view_key(&m, 'l');
    CHECK(m.sel_layer == 1 && m.sel_head == 2);
    view_key(&m, KEY_UP), view_key(&m, KEY_UP); /* stops at the edge */
    CHECK_INT(m.sel_layer, 0);
    int cursor = m.cursor;
    view_key(&m, '\n');
    CHECK_INT(m.flips_open, 0);
    CHECK_INT(m.inspector_open, 0); /* Enter was the map's */
    CHECK_INT(m.cursor, cursor);
    int n;
    double f = view_flip_share(&m, 2, 0, m.n_hist, &n);
    char want[120];
    snprintf(want, sizeof want, "L0 H2 selected: its gate changed at %.1f%% of %d positions", 100 * f, n);
    CHECK_MSG(!strcmp(m.status, want), "%s / %s", m.status, want);
    view_key(&m, 'X');
    view_key(&m, VIEW_KEY_ESC);
    CHECK_INT(m.flips_open, 0);
    view_key(&m, 'X'), view_key(&m, 'X');
    CHECK_INT(m.flips_open, 0);
    view_free(&m);
}

/* A frame of m at cols × rows into lines[] (rows of text); 0 on success. */
static int frame(ViewModel *m, int cols, int rows, char lines[][1024]) {
    FxTerm term;
    if (fx_term_open(&term, "xterm-256color", cols, rows) || !term.scr) return -1;
    ViewScreen s;
    Err e;
    int rc = view_screen_init(&s, m, &e) == 0 && view_frame(&s, m, &e) == 0 ? 0 : -1;
    for (int y = 0; rc == 0 && y < rows; y++) snprintf(lines[y], 1024, "%s", fx_line(curscr, y));
    view_screen_free(&s);
    fx_term_close(&term);
    return rc;
}

static int screen_has(char lines[][1024], int rows, const char *needle) {
    for (int y = 0; y < rows; y++)
        if (strstr(lines[y], needle)) return 1;
    for (int y = 0; y < rows; y++) fprintf(stderr, "%s\n", lines[y]);
    return 0;
}

TEST(flips_frames_show_the_map_and_the_parent_row) {
    static const int sizes[][2] = {{80, 24}, {140, 45}};
    static char lines[45][1024];
    for (int z = 0; z < 2; z++) {
        ViewModel m;
        two_runs(&m, 5, 8);
        m.sel_layer = 1, m.sel_head = 2;
        int cols = sizes[z][0], rows = sizes[z][1];
        /* the timeline: a `par` row whose flips read + or - where the gates differ */
        CHECK_INT(frame(&m, cols, rows, lines), 0);
        CHECK(screen_has(lines, rows, "par run 1"));
        LayoutOpts o = view_layout_opts(&m);
        Layout lay;
        view_layout(cols, rows, &o, &lay);
        const ViewRect *r = &lay.pane[VIEW_PANE_TIMELINE];
        ViewTimeGeom g;
        view_time_geom(&m, r->w, r->h, o.half_blocks, &g);
        CHECK(g.y_par > 0 && g.bin == 1);
        const char *row = lines[r->y + g.y_par];
        CHECK_MSG(strstr(row, "par") != NULL, "%s", row);
        int cell = 1 * 8 + 2, marks = 0;
        for (int c = 0; c < g.n_tok_vis; c++) {
            int i = g.first_tok + c, flip = i >= 4 && (i + cell) % 5 == 0;
            /* the row's text is UTF-8: find column x0 + c by counting characters */
            const char *q = row;
            for (int k = 0; k < r->x + g.x0 + c && *q; k++) {
                q++;
                while ((*q & 0xc0) == 0x80) q++;
            }
            int is_mark = *q == '+' || *q == '-';
            CHECK_MSG(is_mark == flip, "%dx%d: pos %d %s a flip mark (%c)", cols, rows, i, flip ? "lacks" : "has", *q);
            if (flip) {
                int up = m.hist[i]->gate[cell] == 1;
                CHECK_MSG(*q == (up ? '+' : '-'), "pos %d: %c", i, *q);
            }
            marks += is_mark;
        }
        CHECK(marks >= 5);
        /* the map over the middle of the screen, named and keyed */
        view_key(&m, 'X');
        CHECK_INT(frame(&m, cols, rows, lines), 0);
        CHECK(screen_has(lines, rows, "flips vs parent run 1"));
        char sel[64];
        int n;
        double f = view_flip_share(&m, cell, 0, m.n_hist, &n);
        snprintf(sel, sizeof sel, "L1 H2 %.1f%% of %d pos", 100 * f, n);
        CHECK(screen_has(lines, rows, sel));
        CHECK(screen_has(lines, rows, "Enter select"));
        view_free(&m);
    }
}
