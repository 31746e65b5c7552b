/* test_reports.c — eval --tasks's reports: the score-against-budget charts
 * (app/plot_budget.h) read back from their SVG and counted in their text,
 * the depth x context grid and effective length (app/eval_grid.h), and the
 * KV footprint (engine/cost.h), recounted in float64 by tests/reports_ref.py. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/eval_grid.h"
#include "app/plot_budget.h"
#include "tests/test.h"

/* Three arms at two budgets on two panels (a task and the average). */
static int sample_points(BudgetPoint *p) {
    static const char *arms[] = {"aha", "random", "local"};
    int n = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++, n++) {
            memset(&p[n], 0, sizeof p[n]);
            snprintf(p[n].arm, sizeof p[n].arm, "%s", arms[a]);
            p[n].share = a == 2 ? 0 : 0.1 + 0.4 * b + 0.01 * a, p[n].keys = 0.2 + 0.3 * b + 0.05 * a;
            p[n].acc[0] = 0.25 * a + 0.2 * b, p[n].acc[1] = 0.5 * p[n].acc[0] + 0.125;
        }
    return n;
}

/* The value of attribute name in the tag starting at tag, or NAN. */
static double attr(const char *tag, const char *name) {
    char key[40];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *end = strchr(tag, '>'), *at = strstr(tag, key);
    return at && end && at < end ? strtod(at + strlen(key), NULL) : NAN;
}

TEST(eval_reports_budget_svg_points_read_back) {
    BudgetPoint p[6];
    int n = sample_points(p);
    const char *panels[] = {"passkey", "average"};
    char *svg = plot_budget_svg("t", panels, 2, p, n);
    CHECK(svg != NULL);
    if (!svg) return;
    int found = 0, lines = 0;
    for (const char *c = strstr(svg, "<polyline"); c; c = strstr(c + 1, "<polyline")) lines++;
    CHECK_INT(lines, 3 * 2 * 2); /* an arm a panel a row */
    for (const char *c = strstr(svg, "<circle class=\"pt\""); c; c = strstr(c + 1, "<circle class=\"pt\"")) {
        const char *arm = strstr(c, "data-arm=\"") + 10;
        int panel = (int)attr(c, "data-panel"), row = (int)attr(c, "data-row"), match = 0;
        double x = attr(c, "data-x"), y = attr(c, "data-y");
        for (int i = 0; i < n; i++)
            match += !strncmp(arm, p[i].arm, strlen(p[i].arm)) && arm[strlen(p[i].arm)] == '"' &&
                     x == (row ? p[i].keys : p[i].share) && y == p[i].acc[panel];
        CHECK_MSG(match == 1, "point %s panel %d row %d (%g, %g) matches %d rows", arm, panel, row, x, y, match);
        /* its place: inside its panel's box, higher for a better accuracy */
        double cy = attr(c, "cy");
        CHECK_MSG(cy > 0 && cy < attr(svg + 40, "height"), "cy %g outside the picture", cy);
        found++;
    }
    CHECK_INT(found, n * 2 * 2);
    CHECK(attr(strstr(svg, "<svg"), "width") > 2 * 260);
    free(svg);
    CHECK(plot_budget_svg("t", panels, 0, p, n) == NULL);
    CHECK(plot_budget_svg("t", panels, PLOT_BUDGET_MAX_PANELS + 1, p, n) == NULL);
}

/* Lines of text from s, each counted in characters (UTF-8 sequences as one). */
static int count_chars(const char *s, size_t len) {
    int n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

TEST(eval_reports_budget_text_sizes_and_glyphs) {
    BudgetPoint p[6];
    int n = sample_points(p);
    const char *panels[] = {"passkey", "average"};
    for (int ascii = 0; ascii <= 1; ascii++) {
        char *t = plot_budget_text("title", panels, 2, p, n, 40, 10, ascii);
        CHECK(t != NULL);
        if (!t) continue;
        int lines = 0, wide = 0, marks[3] = {0};
        for (const char *l = t; *l;) {
            const char *end = strchr(l, '\n');
            size_t len = end ? (size_t)(end - l) : strlen(l);
            int chars = count_chars(l, len);
            if (len > 5 && (l[5] == '|' || !strncmp(l + 5, "\xe2\x94\x82", 3))) { /* a plot line: exactly cols */
                CHECK_MSG(chars == 40, "a plot line of %d characters: %.*s", chars, (int)len, l);
                for (size_t k = 6; k < len; k++) marks[0] += l[k] == 'a', marks[1] += l[k] == 'r', marks[2] += l[k] == 'l';
            }
            for (size_t k = 0; k < len; k++) wide |= (unsigned char)l[k] >= 0x80;
            lines++;
            l = end ? end + 1 : l + len;
        }
        CHECK_INT(lines, 1 + 4 * (1 + 10 - 1) + 1); /* title, 4 panels of a name and rows - 1 lines, the key */
        CHECK_MSG(wide == !ascii, "ascii %d: non-ASCII bytes %d", ascii, wide);
        /* aha and random two points each on each of the four charts; local's two share x = 0 on the share row */
        CHECK_MSG(marks[0] >= 4 * 2 - 2 && marks[1] >= 4 * 2 - 2 && marks[2] >= 4, "marks a %d r %d l %d", marks[0],
                  marks[1], marks[2]);
        free(t);
    }
    CHECK(plot_budget_text("t", panels, 2, p, n, 10, 10, 1) == NULL);
}

TEST(eval_reports_grid_effective_length_rule) {
    int len[] = {100, 200, 300, 400};
    double keep[] = {0.8, 0.7, 0.68, 0.9}, fall[] = {0.8, 0.67, 0.9, 0.9}, none[] = {0, 0.5, 0.5, 0.5};
    CHECK_INT(eval_grid_effective_length(len, keep, 4), 400); /* 0.68 = 0.85 x 0.8: kept */
    CHECK_INT(eval_grid_effective_length(len, fall, 4), 100); /* the first fall ends it, later rises do not count */
    CHECK_INT(eval_grid_effective_length(len, none, 4), -1);
    CHECK_INT(eval_grid_effective_length(len, keep, 0), -1);
    int n_tokens[] = {300, 100, 100, 300, 200};
    double depth[] = {0.1, 0.99, 0.5, -1, 0.0}, score[] = {1, 0.5, 1, 1, 0};
    EvalGrid g;
    Err e;
    CHECK(eval_grid_make(n_tokens, depth, score, 5, 2, &g, &e) == 0);
    CHECK_INT(g.n_lens, 3);
    CHECK_INT(g.len[0], 100);
    CHECK_INT(g.len[2], 300);
    CHECK_INT(g.count[1][0], 2);
    CHECK_NEAR(g.acc[1][0], 0.75, 1e-15); /* depth 0.5 goes to the upper half */
    CHECK_INT(g.count[0][2], 1);
    CHECK_INT(g.n_left_out, 1);
    CHECK(isnan(g.acc[1][2]));
    CHECK_INT(g.effective_len, 100); /* 200 scores 0 */
    char *t = eval_grid_text("p", &g), *svg = eval_grid_svg((const char *[]){"p"}, &g, 1);
    CHECK(t && strstr(t, "effective length: 100 tokens"));
    int cells = 0;
    for (const char *c = svg ? strstr(svg, "class=\"cell\"") : NULL; c; c = strstr(c + 1, "class=\"cell\"")) cells++;
    CHECK_INT(cells, 2 * 3);
    CHECK(svg && strstr(svg, "data-depth=\"1\" data-len=\"100\" data-acc=\"0.75\""));
    free(t), free(svg);
    CHECK(eval_grid_make(n_tokens, depth, score, 5, 0, &g, &e) != 0);
    CHECK(eval_grid_make(n_tokens, depth, score, 5, EVAL_GRID_MAX_DEPTHS + 1, &g, &e) != 0);
}

/* An eval --tasks --grid N --json run on ITEMS, recounted by reports_ref.py. */
static void recount(const char *py, const char *items, const char *flags, int kv_heads, int window, int depths) {
    const char *out = test_tmp("grid.json");
    int st;
    char *o = test_runf(&st, "%s eval --model engine/organism/organism.bin --tasks '%s' %s --grid %d --threads 1 "
                             "--json 2>&1 > '%s'", test_bin(), items, flags, depths, out);
    CHECK_MSG(st == 0, "eval %s: %s", flags, o);
    free(o);
    o = test_runf(&st, "'%s' tests/reports_ref.py '%s' '%s' %d %d 0 %d 2>&1", py, items, out, kv_heads, window, depths);
    CHECK_MSG(st == 0 && strstr(o, "2 rows recounted, 0 disagreements"), "%s: %s", flags, o);
    free(o);
}

/* The organism answers these (full attention 100%), the oracle at θ 0.97
 * some: a grid with right and wrong cells, an empty one, and lengths. */
TEST(eval_reports_grid_and_footprint_match_numpy_recount) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    const char *items = test_tmp("grid.jsonl");
    int st;
    char *o = test_runf(&st, "M=engine/organism/organism.bin; for a in 'passkey 120' 'local 120' 'passkey 150'; do "
                             "set -- $a; %s tasks --task $1 --context $2 --n 4 --seed 42 --model $M --out '%s'.$1$2 "
                             "|| exit 1; cat '%s'.$1$2 >> '%s'; done 2>&1", test_bin(), items, items, items);
    CHECK_MSG(st == 0, "tasks: %s", o);
    free(o);
    recount(py, items, "--policy oracle --theta 0.97 --window 8", 16, 8, 3);
    recount(py, items, "--policy local --window 16", 16, 16, 3);
    cJSON *j = test_read_json(test_tmp("grid.json")); /* the local run: its footprint is its window's */
    double f = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 1), "kv_prefill_peak"));
    CHECK_MSG(f == 16 * 16, "local's prefill peak %g, not 16 KV heads x 16 positions", f);
    cJSON_Delete(j);
}

/* eval --tasks --match-budget --svg: one point per printed row, panel and
 * row of panels, at the row's own global share, KV/kvh and accuracy; the
 * arms include random and local. */
TEST(eval_reports_eval_budget_svg_holds_every_row) {
    SKIP_UNLESS_SHARED();
    const char *items = test_tmp("budget.jsonl"), *svg = test_tmp("budget.svg"), *js = test_tmp("budget.json");
    int st;
    char *o = test_runf(&st, "%s tasks --task passkey --context 96 --n 3 --seed 5 --out '%s' 2>&1 && %s eval --tasks '%s' "
                             "--routers random:5 --window 16 --match-budget aha --threads 1 --svg '%s' --json > '%s' "
                             "2>/dev/null", test_bin(), items, test_bin(), items, svg, js);
    CHECK_MSG(st == 0, "eval --svg: %s", o);
    free(o);
    cJSON *rows = test_read_json(js), *r;
    char *text = test_read_file(svg, NULL);
    CHECK(rows && text);
    if (!rows || !text) { cJSON_Delete(rows), free(text); return; }
    int n = 0, pts = 0, local = 0, random = 0;
    for (const char *c = strstr(text, "class=\"pt\""); c; c = strstr(c + 1, "class=\"pt\"")) pts++;
    cJSON_ArrayForEach(r, rows) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(r, "predictor"));
        double x[2] = {cJSON_GetNumberValue(cJSON_GetObjectItem(r, "global_share")),
                       cJSON_GetNumberValue(cJSON_GetObjectItem(r, "kv_read_frac"))};
        double y = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "accuracy"));
        local += !strcmp(name, "local"), random += !strcmp(name, "random");
        for (int row = 0; row < 2; row++) {
            char want[160];
            snprintf(want, sizeof want, "data-arm=\"%s\" data-panel=\"0\" data-row=\"%d\" data-x=\"%.17g\" data-y=\"%.17g\"",
                     name, row, x[row], y);
            CHECK_MSG(strstr(text, want) != NULL, "no point %s", want);
        }
        n++;
    }
    CHECK_MSG(local == 1 && random == 1, "local %d, random %d rows", local, random);
    CHECK_INT(pts, n * 2 * 2); /* passkey and the average, two rows */
    cJSON_Delete(rows), free(text);
}

TEST(eval_reports_eval_refuses_bad_report_flags) {
    SKIP_UNLESS_SHARED();
    static const struct { const char *flags, *needle; } bad[] = {
        {"--tasks X --grid 0", "--grid"},
        {"--tasks X --grid 21", "--grid"},
        {"--tasks X --grid-svg g.svg", "give --grid N"},
        {"--tasks X --plot", "--match-budget"},
        {"--self 2 --grid 3", "--tasks's"},
        {"--tasks X --share 0.1,x --routers random", "--share"},
        {"--tasks X --share 0.1,,0.2 --routers random", "--share"},
        {"--tasks X --share 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0 --routers random", "at most 16"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "%s eval %s", test_bin(), bad[i].flags);
        CHECK_REFUSAL(cmd, 2, "ahascope eval: ", bad[i].needle, 1);
    }
}

/* The terminal chart's switch: AHASCOPE_ASCII, then the locale's character set. */
TEST(eval_reports_budget_text_ascii_switch) {
    const char *old = getenv("AHASCOPE_ASCII"), *lc = getenv("LC_ALL");
    char keep[256] = "", keep_lc[256] = "";
    if (old) snprintf(keep, sizeof keep, "%s", old);
    if (lc) snprintf(keep_lc, sizeof keep_lc, "%s", lc);
    setenv("AHASCOPE_ASCII", "1", 1);
    CHECK_INT(plot_budget_ascii(), 1);
    setenv("AHASCOPE_ASCII", "0", 1);
    setenv("LC_ALL", "C", 1); /* the C locale's set is ASCII */
    CHECK_INT(plot_budget_ascii(), 1);
    if (old) setenv("AHASCOPE_ASCII", keep, 1);
    else unsetenv("AHASCOPE_ASCII");
    if (lc) setenv("LC_ALL", keep_lc, 1);
    else unsetenv("LC_ALL");
}
