/* test_pattern.c — the attention-pattern view without a terminal, against a float64 reference.
 *
 * The attention-pattern view without a terminal: the
 * engine's pooled softmax rows against a float64 reference and against
 * fwd_attention_weights; the view's layout and pooling at the screen sizes
 * people use, every cell checked against a direct maximum over the
 * positions it covers; the row marks; the pattern built from recorded far
 * keys; and a drawn frame's title, marks and labels.
 *
 * Tolerance for the engine: 1e-5 absolute on weights in [0, 1] (float
 * dot products of 8-wide heads against a double reference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attn_pattern.h"
#include "engine/session.h"
#include "tests/stories.h"
#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/pattern.h"

#define N_POS 40

/* Softmax row of (layer, head) at q in double, from the kept queries and cached keys. */
static void reference_row(const RunState *rs, int layer, int head, int q, double *row) {
    const Config *c = &rs->c;
    int hs = c->head_size, kvh = head / (c->n_heads / c->n_kv_heads);
    const float *qv = rs->q_cache + ((size_t)layer * c->seq_len + q) * c->q_dim + (size_t)head * hs;
    float *k = malloc((size_t)hs * sizeof *k);
    double mx = -INFINITY, z = 0;
    for (int i = 0; i <= q; i++) {
        fwd_kv_get(rs, 0, layer, kvh, i, k);
        double d = 0;
        for (int j = 0; j < hs; j++) d += (double)qv[j] * k[j];
        row[i] = d / sqrt((double)hs);
        if (row[i] > mx) mx = row[i];
    }
    for (int i = 0; i <= q; i++) z += (row[i] = exp(row[i] - mx));
    for (int i = 0; i <= q; i++) row[i] /= z;
    free(k);
}

TEST(pattern_engine_rows_match_a_float64_reference_pooled_or_not) {
    SKIP_UNLESS_SHARED();
    Model m;
    Err e;
    if (test_load_stories(&m, NULL, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    Session s;
    AttnConfig a = aha_defaults();
    a.window = 8, a.sinks = 1; /* aha_defaults is the full policy: the cache holds every key either way */
    int ids[N_POS];
    for (int i = 0; i < N_POS; i++) ids[i] = i == 0 ? 1 : 3 + (i * 37) % (m.c.vocab_size - 3);
    CHECK_INT(session_init(&s, &m, NULL, &a, m.c.seq_len, 0, 0.9f, 1, 1, &e), 0);
    CHECK_INT(fwd_keep_queries(&s.rs, &e), 0);
    CHECK_INT(session_start_ids(&s, ids, N_POS, &e), 0);
    CHECK_INT(session_prefill(&s, NULL), N_POS);
    double *ref = malloc((size_t)N_POS * N_POS * sizeof *ref);
    float *row = malloc(N_POS * sizeof *row), *grid = malloc((size_t)N_POS * N_POS * sizeof *grid);
    int layers[] = {0, m.c.n_layers - 1}, heads[] = {0, m.c.n_heads - 1};
    for (int li = 0; li < 2; li++) {
        int l = layers[li], h = heads[li];
        for (int q = 0; q < N_POS; q++) reference_row(&s.rs, l, h, q, ref + (size_t)q * N_POS);
        /* exact: every weight, and the row the inspector computes */
        CHECK_INT(attn_pattern(&s.rs, l, h, N_POS, 1, grid), 0);
        for (int q = 0; q < N_POS; q++) {
            fwd_attention_weights(&s.rs, l, h, q, row);
            for (int k = 0; k < N_POS; k++) {
                if (k > q) { CHECK_NEAR(grid[q * N_POS + k], -1, 0); continue; }
                CHECK_NEAR(grid[q * N_POS + k], ref[q * N_POS + k], 1e-5);
                CHECK_NEAR(row[k], ref[q * N_POS + k], 1e-5);
            }
        }
        /* pooled by 3: each cell the largest reference weight of its bin */
        int bin = 3, nb = attn_pattern_cells(N_POS, bin);
        CHECK_INT(nb, 14);
        CHECK_INT(attn_pattern(&s.rs, l, h, N_POS, bin, grid), 0);
        for (int qi = 0; qi < nb; qi++)
            for (int ki = 0; ki < nb; ki++) {
                double best = -1;
                for (int q = qi * bin; q < (qi + 1) * bin && q < N_POS; q++)
                    for (int k = ki * bin; k < (ki + 1) * bin && k <= q; k++)
                        if (ref[q * N_POS + k] > best) best = ref[q * N_POS + k];
                CHECK_NEAR(grid[qi * nb + ki], best, 1e-5);
            }
    }
    /* refused: no such head, more positions than the context, no bin */
    CHECK_INT(attn_pattern(&s.rs, m.c.n_layers, 0, N_POS, 1, grid), -1);
    CHECK_INT(attn_pattern(&s.rs, 0, 0, m.c.seq_len + 1, 1, grid), -1);
    CHECK_INT(attn_pattern(&s.rs, 0, 0, N_POS, 0, grid), -1);
    free(ref), free(row), free(grid);
    session_free(&s);
    model_free(&m);
}

/* A made-up weight, distinct per (q, k), so a wrong cell shows. */
static float weight(int q, int k) { return k > q ? -1 : (float)((q * 31 + k * 17) % 97) / 97.0f; }

/* A pattern over n positions pooled bin at a time, from weight(). */
static void synthetic(ViewPattern *p, int n, int bin) {
    int nb = (n + bin - 1) / bin;
    float *w = malloc((size_t)nb * nb * sizeof *w);
    for (int i = 0; i < nb * nb; i++) w[i] = -1;
    for (int q = 0; q < n; q++)
        for (int k = 0; k <= q; k++)
            if (weight(q, k) > w[(q / bin) * nb + k / bin]) w[(q / bin) * nb + k / bin] = weight(q, k);
    memset(p, 0, sizeof *p);
    p->open = 1;
    view_pattern_set(p, 3, 5, n, bin, w, 16, 4);
}

/* Every shown cell against the maximum of weight() over its positions. */
static void check_cells(const ViewPattern *p, const ViewPatternGeom *g, const char *what) {
    int bad = 0;
    for (int r = 0; r < g->rows; r++)
        for (int c = 0; c < g->cols; c++) {
            float best = -1;
            /* the positions of the cell, widened to whole data bins */
            int qa = (g->q0 + r * g->rq) / p->bin * p->bin, ka = (g->k0 + c * g->rk) / p->bin * p->bin;
            for (int q = qa; q < g->q0 + (r + 1) * g->rq && q < p->n; q++)
                for (int k = ka; k < g->k0 + (c + 1) * g->rk && k < p->n; k++)
                    if (weight(q, k) > best) best = weight(q, k);
            if (view_pattern_cell(p, g, r, c) != best && bad++ < 3)
                test_fail(__FILE__, __LINE__, "%s: cell (%d, %d) = %g, expected %g", what, r, c,
                          view_pattern_cell(p, g, r, c), best);
        }
}

TEST(pattern_layout_and_pooling_at_four_sizes) {
    static const int sizes[][2] = {{80, 24}, {140, 45}, {250, 70}, {40, 12}};
    static const int runs[][2] = {{35, 1}, {300, 1}, {2500, 3}};
    for (int s = 0; s < 4; s++) {
        Layout lay;
        LayoutOpts o = {.n_layers = 16, .n_heads = 32};
        view_layout(sizes[s][0], sizes[s][1], &o, &lay);
        ViewRect r = view_pattern_rect(&lay);
        if (s == 3) { /* below 80×24 the screen says enlarge: no overlay; the layout itself still holds */
            CHECK_INT(r.w, 0);
            r.w = sizes[s][0], r.h = sizes[s][1];
        } else {
            CHECK_INT(r.w, sizes[s][0]);
            CHECK_MSG(r.h >= 5 && r.y >= 1 && r.y + r.h <= sizes[s][1] - 2, "%dx%d: rect y %d h %d", sizes[s][0],
                      sizes[s][1], r.y, r.h);
        }
        for (int k = 0; k < 3; k++) {
            ViewPattern p;
            synthetic(&p, runs[k][0], runs[k][1]);
            char what[64];
            snprintf(what, sizeof what, "%dx%d, %d positions", sizes[s][0], sizes[s][1], p.n);
            ViewPatternGeom g;
            view_pattern_geom(&p, r.w, r.h, &g);
            /* zoom 0: the whole run fits, pooled as little as the room allows */
            CHECK_MSG(g.rows * g.rq >= p.n && g.cols * g.rk >= p.n, "%s: rows %d x %d, cols %d x %d", what, g.rows,
                      g.rq, g.cols, g.rk);
            CHECK_MSG(g.rq % p.bin == 0 && g.rk % p.bin == 0, "%s: pooling %dx%d not whole bins", what, g.rq, g.rk);
            CHECK_MSG(g.rq == p.bin || (g.rq - p.bin) * g.gh < p.n, "%s: rq %d pools more than needed", what, g.rq);
            CHECK_MSG(g.gx + g.cols * g.cw <= r.w - 1 && g.gy + g.rows <= g.axis_y && g.info_y <= r.h - 2,
                      "%s: grid outside the window", what);
            check_cells(&p, &g, what);
            char title[256], want[64];
            view_pattern_title(&p, &g, title, sizeof title);
            snprintf(want, sizeof want, "pattern L3 H5 \xc2\xb7 1 cell = %dx%d pos, max", g.rq, g.rk);
            CHECK_MSG(strstr(title, want), "%s: title \"%s\"", what, title);
            /* zoomed in twice and panned: finer cells, still exact */
            int ch[] = {'+', '+', KEY_DOWN, KEY_RIGHT, KEY_RIGHT};
            for (int i = 0; i < 5; i++) CHECK(view_pattern_key(&p, ch[i], r.w, r.h));
            ViewPatternGeom z;
            view_pattern_geom(&p, r.w, r.h, &z);
            CHECK_MSG(z.rq <= g.rq && z.rk <= g.rk, "%s: zoom made cells larger", what);
            if (g.rq >= 4 * p.bin)
                CHECK_MSG(z.rq * 4 <= g.rq + 3 * p.bin, "%s: rq %d after zoom from %d", what, z.rq, g.rq);
            CHECK_MSG(z.q0 % z.rq == 0 && z.k0 % z.rk == 0, "%s: pan off the cells", what);
            /* where the zoomed run no longer fits, the arrows moved it */
            if (z.gh * z.rq < p.n) CHECK_MSG(z.q0 > 0, "%s: down did not pan", what);
            if ((z.gw / z.cw) * z.rk < p.n) CHECK_MSG(z.k0 > 0, "%s: right did not pan", what);
            check_cells(&p, &z, what);
            view_pattern_title(&p, &z, title, sizeof title);
            CHECK_MSG(p.zoom == 0 || strstr(title, "zoom"), "%s: title \"%s\"", what, title);
            CHECK(view_pattern_key(&p, KEY_HOME, r.w, r.h));
            CHECK_INT(p.zoom, 0);
            CHECK(!view_pattern_key(&p, 'x', r.w, r.h));
            view_pattern_free(&p);
        }
    }
}

/* A model of n positions, window 4 and 1 sink: positions below 5 have no
 * far keys; cell (1, 2) goes global at every position divisible by 7;
 * each records its three earliest keys as far keys with made-up weights. */
static void traces(ViewModel *m, int n) {
    view_init(m, 2, 4, NULL);
    m->hdr.window = 4, m->hdr.sinks = 1;
    for (int p = 0; p < n; p++) {
        StepTrace *t = trace_new_top(2, 4, 3);
        t->pos = p, t->token = p;
        snprintf(t->piece, sizeof t->piece, "w%d", p);
        t->n_far = p < 5 ? 0 : p - 4;
        for (int c = 0; c < 8; c++) {
            t->gate[c] = p < 5 ? 1 : c == 6 && p % 7 == 0;
            for (int r = 0; r < 3; r++) {
                t->top_pos[c * 3 + r] = p >= 5 + r ? r + 1 : -1;
                t->top_w[c * 3 + r] = p >= 5 + r ? weight(p, r + 1) : NAN;
            }
        }
        view_push_owned(m, t, NULL);
    }
}

TEST(pattern_row_marks_global_local_and_no_choice) {
    ViewModel m;
    traces(&m, 30);
    CHECK_INT(view_pattern_row_mark(&m, 1, 2, 0, 5), '-');  /* gates there are no choice, global or not */
    CHECK_INT(view_pattern_row_mark(&m, 1, 2, 5, 7), 'l');
    CHECK_INT(view_pattern_row_mark(&m, 1, 2, 5, 8), 'g');  /* 7 went global */
    CHECK_INT(view_pattern_row_mark(&m, 1, 2, 14, 15), 'g');
    CHECK_INT(view_pattern_row_mark(&m, 1, 1, 5, 30), 'l'); /* another head never did */
    CHECK_INT(view_pattern_row_mark(&m, 1, 2, 3, 6), 'l');  /* a choice made outweighs none */
    CHECK_INT(view_pattern_row_mark(&m, 1, 2, 30, 40), ' '); /* past the run: nothing known */
    view_free(&m);
}

TEST(pattern_from_recorded_far_keys_is_marked_approximate) {
    ViewModel m;
    traces(&m, 30);
    ViewPattern p = {.open = 1};
    Err e;
    CHECK_INT(view_pattern_from_recorded(&p, &m, 1, 2, 4, 1, &e), 0);
    CHECK_INT(p.n, 30);
    CHECK_INT(p.bin, 1);
    CHECK(p.recorded);
    for (int q = 0; q < 30; q++)
        for (int k = 0; k < 30; k++) {
            float want = k >= 1 && k <= 3 && q >= 4 + k ? weight(q, k) : -1; /* only the recorded keys */
            CHECK_NEAR(p.w[q * 30 + k], want, 0);
        }
    ViewPatternGeom g;
    view_pattern_geom(&p, 80, 17, &g);
    char title[256];
    view_pattern_title(&p, &g, title, sizeof title);
    CHECK_MSG(strstr(title, "pattern L1 H2") && strstr(title, "approximate") && strstr(title, "recorded top-k"), "%s",
              title);
    view_pattern_free(&p);
    view_free(&m);
}

TEST(pattern_draws_title_marks_cursor_row_and_named_keys) {
    FxTerm ft;
    if (fx_term_open(&ft, "xterm-256color", 80, 24)) { test_skip("no off-screen terminal"); return; }
    ViewModel m;
    traces(&m, 30);
    m.cursor = 20, m.follow = 0;
    ViewPattern p = {.open = 1};
    Err e;
    CHECK_INT(view_pattern_from_recorded(&p, &m, 1, 2, 4, 1, &e), 0);
    ViewPalette pal;
    CHECK_INT(view_palette_init(&pal, VIEW_COLOUR_NONE, 0, &e), 0);
    WINDOW *w = newwin(19, 80, 0, 0); /* 15 grid rows: 2 positions a row */
    view_draw_pattern(w, &p, &m, &pal);
    CHECK_MSG(strstr(fx_line(w, 0), "pattern L1 H2 \xc2\xb7 1 cell = 2x1 pos, max"), "%s", fx_line(w, 0));
    CHECK_MSG(strstr(fx_line(w, 1), " 0-"), "%s", fx_line(w, 1)); /* positions 0-1: no choice */
    CHECK_MSG(strstr(fx_line(w, 3), " 4l"), "%s", fx_line(w, 3));  /* 4 had no choice, 5 stayed local */
    CHECK_MSG(strstr(fx_line(w, 4), " 6g"), "%s", fx_line(w, 4));  /* 7 went global */
    CHECK_MSG(strstr(fx_line(w, 11), "20g"), "%s", fx_line(w, 11)); /* 21 did */
    /* the cursor's row: its recorded keys ranked in the grid (key k at column gx + k·cw) */
    ViewPatternGeom g;
    view_pattern_geom(&p, 80, 19, &g);
    CHECK_INT(g.cw, 2); /* 30 keys in 74 columns: two a key */
    wchar_t ch;
    short pair;
    attr_t at;
    fx_cell(w, 11, g.gx + 1 * g.cw, &ch, &pair, &at);
    CHECK_MSG(ch == L'1' && (at & A_REVERSE), "rank 1 at key 1: %lc", (wint_t)ch);
    fx_cell(w, 11, g.gx + 3 * g.cw, &ch, &pair, &at);
    CHECK_MSG(ch == L'3', "rank 3 at key 3: %lc", (wint_t)ch);
    CHECK_MSG(strstr(fx_line(w, 16), "key") && strchr(fx_line(w, 16), 's'), "%s", fx_line(w, 16));
    CHECK_MSG(strstr(fx_line(w, 17), "pos 20 \xc2\xab" "w20\xc2\xbb l") &&
                  strstr(fx_line(w, 17), "1:1 \"w1\" ") && strstr(fx_line(w, 17), "2:2 \"w2\""),
              "%s", fx_line(w, 17));
    delwin(w);
    view_pattern_free(&p);
    view_free(&m);
    fx_term_close(&ft);
}
