/* test_views_keep.c — whole tables kept as text, CSV and SVG (views/keep.h) and the paths to the needle (views/path.h), against a brute force and tests/paths_ref.py.
 *
 * A run of 30 positions on 3 layers x 2 heads, window 4 and one sink, the
 * needle at positions 8-10, each head ranking three far keys a position
 * drawn by a fixed generator (one head of layer 0 always the needle's).
 * The H table's rows against the pane's order and values, the pattern's
 * CSV against the recorded keys recounted here, the text pane as CSV, the
 * SVGs parsed by python3's xml module, and the paths against a brute-force
 * loop over every (hop 1, j, hop 2) that shares no code with path.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/test.h"
#include "tests/views_fixture.h"
#include "views/heads.h"
#include "views/keep.h"
#include "views/path.h"
#include "views/pattern.h"

enum { N_POS = 30, TOP_K = 3, LAYERS = 3, HEADS = 2, WIN = 4, SINKS = 1 };

static unsigned lcg(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 16) & 0x7fff; }

/* Fill m with the run described above, marked. */
static void fill(ViewModel *m) {
    unsigned seed = 11;
    for (int p = 0; p < N_POS; p++) {
        StepTrace *t = trace_new_top(LAYERS, HEADS, TOP_K);
        if (!t) break;
        t->pos = p, t->token = p, t->is_prompt = p < 20;
        snprintf(t->piece, sizeof t->piece, " w%d", p);
        for (int c = 0; c < LAYERS * HEADS; c++) {
            t->gate[c] = (int8_t)(lcg(&seed) % 2);
            int far_hi = p - WIN, n = 0;
            for (int r = 0; r < TOP_K && far_hi >= SINKS; r++) {
                int k = c == 1 && far_hi >= 8 + r ? 8 + r : SINKS + (int)(lcg(&seed) % (unsigned)(far_hi - SINKS + 1));
                int dup = 0;
                for (int i = 0; i < n; i++) dup |= t->top_pos[c * TOP_K + i] == k;
                if (dup) continue;
                t->top_pos[c * TOP_K + n] = k, t->top_w[c * TOP_K + n] = (float)(lcg(&seed) % 1000) / 2500.0f, n++;
            }
        }
        view_push(m, t, NULL);
        trace_free(t);
    }
    ViewMark mk[3] = {{8, VIEW_MARK_NEEDLE}, {9, VIEW_MARK_NEEDLE}, {10, VIEW_MARK_NEEDLE}};
    view_set_marks(m, mk, 3, NULL);
    m->hdr.window = WIN, m->hdr.sinks = SINKS;
    snprintf(m->hdr.model, sizeof m->hdr.model, "fx,\"model\"");
    snprintf(m->hdr.policy, sizeof m->hdr.policy, "aha");
    m->hdr.run_id = 9, m->hdr.seed = 5, m->hdr.seed_known = 1;
    m->cursor = N_POS - 1;
}

static int lines_of(const char *s) {
    int n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

TEST(views_keep_heads_table_is_every_head_in_the_panes_order) {
    ViewModel m;
    CHECK(view_init(&m, LAYERS, HEADS, NULL) == 0);
    fill(&m);
    ViewHeads hs = {.open = 1, .sort = 0, .asc = 0};
    char *csv = view_heads_table(&hs, &m, 1), *txt = view_heads_table(&hs, &m, 0);
    CHECK(csv && txt);
    CHECK_INT(lines_of(csv), 2 + LAYERS * HEADS);
    CHECK_INT(lines_of(txt), 2 + LAYERS * HEADS);
    const char *head = "# ahascope run 9 seed 5 model fx,\"model\" policy aha window 4 sinks 1 tau 0.50 ";
    CHECK_MSG(csv && !strncmp(csv, head, strlen(head)), "%s", csv ? csv : "(null)");
    int order[LAYERS * HEADS];
    view_heads_order(&m, 0, 0, order);
    const char *s = csv ? strchr(strchr(csv, '\n') + 1, '\n') + 1 : NULL;
    CHECK(csv && !strncmp(strchr(csv, '\n') + 1, "rank,layer,head,global_rate,oracle_rate,precision,recall,agree_rate,"
                                                 "needle,needle_mean,question,n\n", 90));
    for (int k = 0; s && *s && k < LAYERS * HEADS; k++, s = strchr(s, '\n') + 1) {
        int rank, l, h, n;
        char rest[512];
        CHECK(sscanf(s, "%d,%d,%d,%511[^\n]", &rank, &l, &h, rest) == 4);
        CHECK_INT(rank, k + 1);
        CHECK_INT(l * HEADS + h, order[k]);
        /* each field against the value the pane draws: a fraction to 1e-6, empty for n/a */
        const char *f = rest;
        for (int col = 0; col < view_heads_sorts(&m); col++) {
            double v = view_heads_value(&m, col, order[k], NULL, NULL);
            if (isnan(v)) CHECK_MSG(*f == ',', "col %d of %s: not empty", col, s);
            else CHECK_MSG(fabs(strtod(f, NULL) - v) < 1e-6, "col %d of %.60s: %f", col, s, v);
            f = strchr(f, ',') + 1;
        }
        view_head_rate(&m, order[k], view_rate_metric(0), &n);
        CHECK_INT(atoi(f), n);
    }
    /* the needle column is the weight at the cursor: head 1 ranks all three needle keys */
    CHECK(txt && strstr(txt, "needle") && strstr(txt, "   1  L"));
    free(csv);
    free(txt);
    view_free(&m);
}

TEST(views_keep_pattern_csv_is_the_recorded_keys_recounted) {
    ViewModel m;
    CHECK(view_init(&m, LAYERS, HEADS, NULL) == 0);
    fill(&m);
    ViewPattern p = {0};
    CHECK(view_pattern_from_recorded(&p, &m, 0, 1, WIN, SINKS, NULL) == 0);
    p.open = 1;
    char *csv = view_pattern_table(&p, &m, 1), *txt = view_pattern_table(&p, &m, 0);
    CHECK(csv && txt);
    /* the recount: every recorded (q, k, w) of L0 H1, the largest per cell */
    static float want[N_POS][N_POS];
    int cells = 0;
    for (int q = 0; q < N_POS; q++)
        for (int k = 0; k < N_POS; k++) want[q][k] = -1;
    for (int q = 0; q < N_POS; q++)
        for (int r = 0; r < TOP_K; r++) {
            int k = m.hist[q]->top_pos[1 * TOP_K + r];
            float w = m.hist[q]->top_w[1 * TOP_K + r];
            if (k >= 0 && !isnan(w) && w > want[q][k]) cells += want[q][k] < 0, want[q][k] = w;
        }
    int seen = 0;
    for (const char *s = csv; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
        int q, k;
        float w;
        if (sscanf(s, "%d,%d,%f", &q, &k, &w) != 3) continue;
        CHECK_MSG(q >= 0 && q < N_POS && k >= 0 && k <= q && fabsf(want[q][k] - w) < 1e-6, "%.40s", s);
        seen++;
    }
    CHECK_INT(seen, cells);
    CHECK(cells > 20);
    CHECK(csv && strstr(csv, "\nquery,key,weight\n") && strstr(csv, "recorded top-k far keys only"));
    CHECK_INT(lines_of(txt), 2 + N_POS); /* the run line, the pattern's line, a row a query */
    CHECK(txt && strstr(txt, "\npos 29 "));
    view_pattern_free(&p);
    free(csv);
    free(txt);
    view_free(&m);
}

TEST(views_keep_text_pane_as_csv_drops_rules_and_quotes) {
    ViewModel m;
    CHECK(view_init(&m, LAYERS, HEADS, NULL) == 0);
    fill(&m);
    CHECK(view_text_table(&m, 1) == NULL); /* no pane open */
    CHECK(view_set_text(&m, "run 9 summary", "", "head   global  note\n-----  ------  ----\nL0 H1  12.5%   a, b\n"
                                                  "L1 H0  n/a     say \"hi\"\n", NULL) == 0);
    char *csv = view_text_table(&m, 1), *txt = view_text_table(&m, 0);
    const char *body = csv ? strstr(csv, "# run 9 summary\n") : NULL;
    CHECK_MSG(body && !strcmp(body + 16, "head,global,note\nL0 H1,12.5%,\"a, b\"\nL1 H0,n/a,\"say \"\"hi\"\"\"\n"), "%s",
              csv ? csv : "(null)");
    CHECK(txt && strstr(txt, "-----  ------  ----\n") && !strncmp(txt, "# ahascope run 9 ", 17));
    free(csv);
    free(txt);
    view_free(&m);
}

/* python3 parses path as XML and prints its root tag and the rects of class cls with their data-attr. */
static char *svg_parse(const char *path, const char *cls, const char *attr) {
    int st;
    return test_runf(&st, "python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
                          "print(r.tag); [print(e.get('%s')) for e in r.iter('{http://www.w3.org/2000/svg}rect') "
                          "if e.get('class') == '%s']\" '%s' 2>&1",
                     attr, cls, path);
}

static void save(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f && text) fputs(text, f);
    if (f) fclose(f);
}

TEST(views_keep_svgs_are_valid_xml_with_a_mark_per_value) {
    if (system("python3 -c 'import xml.etree.ElementTree' 2>/dev/null")) { test_skip("no python3"); return; }
    ViewModel m;
    CHECK(view_init(&m, LAYERS, HEADS, NULL) == 0);
    fill(&m);
    ViewPattern p = {0};
    CHECK(view_pattern_from_recorded(&p, &m, 0, 1, WIN, SINKS, NULL) == 0);
    p.open = 1;
    char path[1100];
    mkdir(test_tmp("keepsvg"), 0700);
    snprintf(path, sizeof path, "%s/pattern.svg", test_tmp("keepsvg"));
    char *svg = view_pattern_svg(&p, &m);
    save(path, svg);
    char *out = svg_parse(path, "cell", "data-w");
    int n = 0;
    double sum = 0, want = 0;
    for (const char *s = out ? strchr(out, '\n') : NULL; s && s[1]; s = strchr(s + 1, '\n')) n++, sum += atof(s + 1);
    for (int i = 0; i < p.nb * p.nb; i++) want += p.w[i] > 0 ? p.w[i] : 0;
    CHECK_MSG(out && !strncmp(out, "{http://www.w3.org/2000/svg}svg\n", 32), "%s", out ? out : "");
    CHECK(n > 20);
    CHECK_NEAR(sum, want, 1e-4);
    free(out), free(svg);
    ViewHeads hs = {.open = 1, .sort = VIEW_HEADS_NEEDLE};
    snprintf(path, sizeof path, "%s/heads.svg", test_tmp("keepsvg"));
    svg = view_heads_svg(&hs, &m);
    save(path, svg);
    out = svg_parse(path, "bar", "data-value");
    n = 0;
    int order[LAYERS * HEADS], known = 0;
    view_heads_order(&m, hs.sort, 0, order); /* n/a last: the bars are the first `known` heads */
    for (int k = 0; k < LAYERS * HEADS; k++) known += !isnan(view_heads_value(&m, hs.sort, order[k], NULL, NULL));
    for (const char *s = out ? strchr(out, '\n') : NULL; s && s[1] && n < known; s = strchr(s + 1, '\n'), n++)
        CHECK_NEAR(atof(s + 1), view_heads_value(&m, hs.sort, order[n], NULL, NULL), 1e-6);
    CHECK_INT(n, known);
    CHECK(known >= 3);
    CHECK(svg && strstr(svg, "fx,&quot;model&quot;")); /* the run line, escaped */
    free(out), free(svg);
    view_pattern_free(&p);
    view_free(&m);
}

/* The brute force: every path answer -> j -> needle, recounted from the traces. */
typedef struct {
    int l1, h1, j, l2, h2;
    double w;
} Path;

static int on_needle(int k) { return k >= 8 && k <= 10; }

static int brute(const ViewModel *m, Path *out, int cap) {
    const StepTrace *a = m->hist[m->cursor];
    int n = 0;
    for (int c1 = 0; c1 < LAYERS * HEADS; c1++)
        for (int r = 0; r < TOP_K; r++) {
            int j = a->top_pos[c1 * TOP_K + r];
            double w1 = a->top_w[c1 * TOP_K + r];
            if (j < 0 || !(w1 > 0)) continue;
            if (on_needle(j)) {
                if (n < cap) out[n++] = (Path){c1 / HEADS, c1 % HEADS, j, -1, -1, w1};
                continue;
            }
            for (int c2 = 0; c2 < (c1 / HEADS) * HEADS; c2++) {
                double w2 = 0;
                for (int r2 = 0; r2 < TOP_K; r2++) {
                    int k = m->hist[j]->top_pos[c2 * TOP_K + r2];
                    if (k >= 0 && k <= j && on_needle(k)) w2 += m->hist[j]->top_w[c2 * TOP_K + r2];
                }
                if (w2 > 0 && n < cap) out[n++] = (Path){c1 / HEADS, c1 % HEADS, j, c2 / HEADS, c2 % HEADS, w1 * w2};
            }
        }
    return n;
}

TEST(views_paths_match_a_brute_force_recount) {
    ViewModel m;
    CHECK(view_init(&m, LAYERS, HEADS, NULL) == 0);
    fill(&m);
    for (int cur = 12; cur < N_POS; cur += 5) {
        m.cursor = cur;
        Path all[512];
        int n = brute(&m, all, 512);
        ViewPaths p;
        view_paths(&m, &p);
        CHECK_INT(p.total, n);
        CHECK_INT(p.n, n < VIEW_PATH_TOP ? n : VIEW_PATH_TOP);
        double last = INFINITY;
        for (int i = 0; i < p.n; i++) {
            const ViewPath *q = &p.top[i];
            CHECK_MSG(q->w <= last, "pos %d: path %d is heavier than the one above", cur, i);
            last = q->w;
            int found = 0, heavier = 0;
            for (int k = 0; k < n; k++) {
                found |= all[k].l1 == q->l1 && all[k].h1 == q->h1 && all[k].j == q->j && all[k].l2 == q->l2 &&
                         all[k].h2 == q->h2 && fabs(all[k].w - q->w) < 1e-9;
                heavier += all[k].w > q->w + 1e-12;
            }
            CHECK_MSG(found, "pos %d: path L%d H%d > %d > L%d H%d %.6f not in the recount", cur, q->l1, q->h1, q->j, q->l2,
                      q->h2, q->w);
            CHECK_MSG(heavier <= i, "pos %d: %d recounted paths outweigh path %d", cur, heavier, i);
            CHECK(q->l2 < q->l1);
        }
        CHECK_MSG(cur < 17 || p.n > 0, "pos %d: no path found", cur);
    }
    ViewPaths p;
    view_paths(&m, &p);
    char *txt = view_paths_text(&m, &p, NULL, "not computed here");
    CHECK_MSG(txt && strstr(txt, "to the needle, pos 8-10 (3 positions)") &&
                  strstr(txt, "(a) product of the recorded top-k weights") && strstr(txt, "a lower bound") &&
                  strstr(txt, "(b) attention rollout: not computed here") && strstr(txt, "rank  hop 1") && strstr(txt, "direct"),
              "%s", txt ? txt : "(null)");
    free(txt);
    view_set_marks(&m, NULL, 0, NULL); /* nothing marked: the view says what to mark */
    view_paths(&m, &p);
    txt = view_paths_text(&m, &p, NULL, "not computed here");
    CHECK_INT(p.n, 0);
    CHECK(txt && strstr(txt, "no needle marked"));
    free(txt);
    view_free(&m);
}

/* (b): the exact paths and the rollout from full rows, against tests/paths_ref.py in float64. */
TEST(views_paths_rollout_matches_the_reference) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy"); return; }
    ViewModel m;
    CHECK(view_init(&m, LAYERS, HEADS, NULL) == 0);
    fill(&m);
    enum { CELLS = LAYERS * HEADS };
    static float w[CELLS * N_POS * N_POS];
    unsigned seed = 3;
    for (int c = 0; c < CELLS; c++) /* softmax rows of random scores, a sharp key now and then */
        for (int q = 0; q < N_POS; q++) {
            double s = 0, e[N_POS];
            for (int k = 0; k <= q; k++) e[k] = exp((double)(lcg(&seed) % 1000) / 250.0), s += e[k];
            for (int k = 0; k < N_POS; k++) w[((size_t)c * N_POS + q) * N_POS + k] = k <= q ? (float)(e[k] / s) : -1;
        }
    char in[1100];
    mkdir(test_tmp("keeproll"), 0700);
    snprintf(in, sizeof in, "%s/rows.json", test_tmp("keeproll"));
    FILE *f = fopen(in, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "{\"layers\": %d, \"heads\": %d, \"n\": %d, \"answer\": %d, \"needle\": [8, 9, 10], \"rows\": [", LAYERS,
            HEADS, N_POS, N_POS - 2);
    for (int i = 0; i < CELLS * N_POS * N_POS; i++) fprintf(f, "%s%.9g", i ? "," : "", (double)w[i]);
    fprintf(f, "]}\n");
    fclose(f);
    m.cursor = N_POS - 2;
    ViewRows rows = {N_POS, w};
    ViewRollout r;
    CHECK(view_rollout(&m, &rows, &r) == 0);
    int st, lines = 0, k = 0;
    char *out = test_runf(&st, "'%s' tests/paths_ref.py '%s'", py, in);
    CHECK_MSG(st == 0, "%s", out ? out : "");
    for (const char *s = out; st == 0 && s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
        int c, n;
        double v;
        if (sscanf(s, "total %lf", &v) == 1) {
            CHECK_NEAR(r.total, v, 1e-6);
            lines++;
        } else if (sscanf(s, "via %d %lf", &c, &v) == 2 && c < CELLS) {
            CHECK_NEAR(r.via[c], v, 1e-6);
            lines++;
        } else if (sscanf(s, "count %d", &n) == 1) {
            CHECK_INT(r.exact.total, n);
            lines++;
        } else if (sscanf(s, "path %lf", &v) == 1 && k < r.exact.n) {
            CHECK_NEAR(r.exact.top[k++].w, v, 1e-6);
            lines++;
        }
    }
    CHECK_INT(lines, 2 + CELLS + VIEW_PATH_TOP);
    CHECK(r.total > 0 && r.total < 1);
    /* rows short of the cursor: no rollout, said as -1 */
    ViewRollout none;
    CHECK(view_rollout(&m, &(ViewRows){N_POS - 5, w}, &none) == -1 && none.via == NULL);
    ViewPaths p;
    view_paths(&m, &p);
    char *txt = view_paths_text(&m, &p, &r, NULL);
    CHECK(txt && strstr(txt, "(b) from full rows") && strstr(txt, "attention rollout (heads averaged") &&
          strstr(txt, "exact paths from the full rows"));
    free(txt);
    view_rollout_free(&r);
    free(out);
    view_free(&m);
}
