/* test_views_needle.c — the weight on the needle (views/needle.h) against tests/needle_ref.py, and its drawing.
 *
 * A run of 30 positions on 2 x 2 heads, window 4 and one sink, the needle
 * at positions 8-10 and the question at 14, each head ranking three far
 * keys a position (one head always the needle's, the others keys drawn by
 * a fixed generator, one with lists cut short as when fewer far keys
 * exist). Every position's sum, its exactness and each head's mean over
 * the answer (positions 20-29) must match the float64 reference to 1e-6;
 * the H pane's needle column and the legend must say a lower bound "≥". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/heads.h"
#include "views/metric.h"
#include "views/needle.h"

enum { N_POS = 30, TOP_K = 3, PROMPT = 20, WIN = 4, SINKS = 1 };

static unsigned lcg(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 16) & 0x7fff; }

/* The keys head cell ranks at pos, into keys/w; how many. */
static int ranked(int pos, int cell, unsigned *seed, int *keys, float *w) {
    int far_hi = pos - WIN, n = 0; /* far keys: SINKS … pos - WINDOW */
    if (far_hi < SINKS) return 0;
    for (int r = 0; r < TOP_K && n < far_hi - SINKS + 1; r++) {
        int k = cell == 0 ? 8 + r : SINKS + (int)(lcg(seed) % (unsigned)(far_hi - SINKS + 1));
        if (k > far_hi) continue;
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= keys[i] == k;
        if (dup) continue;
        keys[n] = k, w[n++] = (float)(lcg(seed) % 1000) / 3000.0f;
    }
    if (cell == 3 && n == TOP_K) n--; /* a short list: nothing was left out */
    return n;
}

/* Fill m and write the reference's input to path. */
static void fill(ViewModel *m, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "{\"window\": %d, \"sinks\": %d, \"marks\": [[8,1],[9,1],[10,1],[14,2]], \"prompt\": [", WIN, SINKS);
    for (int p = 0; p < PROMPT; p++) fprintf(f, "%s%d", p ? "," : "", p);
    fprintf(f, "], \"rows\": [");
    unsigned seed = 7;
    int first = 1;
    for (int p = 0; p < N_POS; p++) {
        StepTrace *t = trace_new_top(2, 2, TOP_K);
        if (!t) break;
        t->pos = p, t->token = p, t->is_prompt = p < PROMPT;
        snprintf(t->piece, sizeof t->piece, " w%d", p);
        for (int c = 0; c < 4; c++) {
            int keys[TOP_K];
            float w[TOP_K];
            int n = ranked(p, c, &seed, keys, w);
            fprintf(f, "%s[%d, %d, [", first ? "" : ",", p, c), first = 0;
            for (int r = 0; r < n; r++) {
                t->top_pos[c * TOP_K + r] = keys[r], t->top_w[c * TOP_K + r] = w[r];
                fprintf(f, "%s[%d, %.9g]", r ? "," : "", keys[r], (double)w[r]);
            }
            fprintf(f, "], %d]", TOP_K);
        }
        view_push(m, t, NULL);
        trace_free(t);
    }
    fprintf(f, "]}\n");
    fclose(f);
}

static void mark(ViewModel *m) {
    ViewMark mk[4] = {{8, VIEW_MARK_NEEDLE}, {9, VIEW_MARK_NEEDLE}, {10, VIEW_MARK_NEEDLE}, {14, VIEW_MARK_QUESTION}};
    view_set_marks(m, mk, 4, NULL);
    m->hdr.window = WIN, m->hdr.sinks = SINKS;
}

/* Every line of the reference's output against the view's numbers. */
static void compare(const ViewModel *m, const char *out, ViewMarkKind kind) {
    int lines = 0, lower = 0;
    for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
        int pos, cell, ex;
        double w;
        ViewSpanWeight got;
        if (sscanf(s, "answer %d %lf %d", &cell, &w, &ex) == 3) got = view_span_weight_answer(m, cell, kind, N_POS - 1);
        else if (sscanf(s, "span %d %lf %d", &cell, &w, &ex) == 3) got = view_span_weight_over(m, cell, kind, 16, 27);
        else if (sscanf(s, "%d %d %lf %d", &pos, &cell, &w, &ex) == 4) got = view_span_weight(m, m->hist[pos], cell, kind);
        else continue;
        lines++, lower += !ex;
        CHECK_MSG(fabs(got.w - w) < 1e-6 && got.exact == ex, "%.40s: view %.9f exact %d", s, got.w, got.exact);
    }
    CHECK_INT(lines, N_POS * 4 + 4 + (strstr(out, "span ") ? 4 : 0));
    CHECK_MSG(lower > 0 && lower < lines, "%d of %d lower bounds: the cases are not all covered", lower, lines);
}

TEST(views_needle_weight_matches_the_reference) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy"); return; }
    ViewModel m;
    CHECK_INT(view_init(&m, 2, 2, NULL), 0);
    const char *in = test_tmp("needle_ref.json");
    fill(&m, in);
    mark(&m);
    CHECK_INT(view_weight_kind(&m), VIEW_MARK_NEEDLE);
    int st;
    char *out = test_runf(&st, "'%s' tests/needle_ref.py '%s' 1", py, in);
    CHECK_INT(st, 0);
    compare(&m, out, VIEW_MARK_NEEDLE);
    free(out);
    out = test_runf(&st, "'%s' tests/needle_ref.py '%s' 2", py, in);
    compare(&m, out, VIEW_MARK_QUESTION);
    free(out);
    /* a span chosen between two bookmarks, across the prompt's end */
    int p0 = -1, p1 = -1;
    CHECK_INT(view_weight_span(&m, &p0, &p1), 0);
    view_bookmark_toggle(&m, 16), view_bookmark_toggle(&m, 26);
    CHECK(view_weight_span(&m, &p0, &p1) && p0 == 16 && p1 == 27);
    out = test_runf(&st, "'%s' tests/needle_ref.py '%s' 1 16 27", py, in);
    CHECK(out && strstr(out, "span 3 "));
    compare(&m, out, VIEW_MARK_NEEDLE);
    free(out);
    /* head L0 H0 ranks the needle itself: at pos 25 its sum is exact */
    ViewSpanWeight sw = view_span_weight(&m, m.hist[25], 0, VIEW_MARK_NEEDLE);
    double want = (double)m.hist[25]->top_w[0] + m.hist[25]->top_w[1] + m.hist[25]->top_w[2];
    CHECK(sw.exact && fabs(sw.w - want) < 1e-6);
    view_free(&m);
}

TEST(views_needle_bookmarks_stand_in_and_the_h_pane_says_lower_bound) {
    FxTerm term;
    CHECK_INT(fx_term_open(&term, "xterm-256color", 120, 30), 0);
    if (!term.scr) return;
    ViewModel m;
    view_init(&m, 2, 2, NULL);
    fill(&m, test_tmp("needle_draw.json"));
    CHECK_INT(view_weight_kind(&m), VIEW_MARK_NONE);
    CHECK(isnan(view_metric_value(&m, m.hist[25], 0, VIEW_METRIC_NEEDLE)));
    view_bookmark_toggle(&m, 9); /* a span marked by hand */
    CHECK_INT(view_weight_kind(&m), VIEW_MARK_BOOKMARK);
    float v = view_metric_value(&m, m.hist[25], 0, VIEW_METRIC_NEEDLE);
    CHECK_NEAR(v, m.hist[25]->top_w[1], 1e-6);
    mark(&m);
    m.cursor = 12; /* the needle's last position lies in the window there: a lower bound */
    ViewHeads hs = {1, VIEW_HEADS_NEEDLE, 0, 0, 0};
    m.heads = &hs;
    CHECK_INT(view_heads_sorts(&m), VIEW_RATE_COUNT + VIEW_HEADS_WEIGHTS);
    ViewPalette pal;
    view_palette_init(&pal, VIEW_COLOUR_256, 0, NULL);
    WINDOW *w = newwin(20, 120, 0, 0);
    view_draw_heads(w, &hs, &m, &pal);
    CHECK_MSG(fx_contains(w, "heads by weight on the needle at the cursor"), "title: %s", fx_line(w, 0));
    CHECK_MSG(fx_contains(w, "6:\xe2\x96\xbcneedle") && fx_contains(w, "\xe2\x89\xa5"), "columns: %s / %s",
              fx_line(w, 1), fx_line(w, 2));
    delwin(w);
    fx_term_close(&term);
    view_free(&m);
}
