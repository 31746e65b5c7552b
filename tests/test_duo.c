/* test_duo.c — DuoAttention head tables: reader, writer, cuts, hostile files, `--static-heads duo:FILE`.
 *
 * DuoAttention's head tables: the reader and writer, the cuts
 * by budget and threshold (GQA groups included), hostile files, the
 * Jaccard overlap, and --static-heads duo:FILE on stories260K doing exactly
 * what the equivalent explicit head list does.
 *
 * Every expected head list here is worked out by hand from the table
 * beside it, not by the code under test.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/headset.h"
#include "test.h"

/* "l.h,l.h" of a map, written here so the expectations do not lean on the
 * app's formatter. */
static const char *listed(const uint8_t *m, int n_layers, int n_heads) {
    static char buf[4096];
    size_t o = 0;
    buf[0] = 0;
    for (int c = 0; m && c < n_layers * n_heads; c++)
        if (m[c]) o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d.%d", o ? "," : "", c / n_heads, c % n_heads);
    return buf;
}

/* The head list a table text gives for n_heads query heads under pick. */
static const char *cut(const char *text, int n_heads, HeadPick pick) {
    static Err e; /* its message is what a refusal returns */
    HeadTable t;
    uint8_t *m = NULL;
    if (headset_table_parse(text, strlen(text), &t, &e)) return e.msg;
    int rc = headset_from_table(&t, n_heads, &pick, &m, &e);
    const char *s = rc ? e.msg : listed(m, t.n_layers, n_heads);
    headset_table_free(&t);
    free(m);
    return s;
}

static HeadPick budget(double v, int percent) { return (HeadPick){0, {v, percent}, 0}; }
static HeadPick threshold(double x) { return (HeadPick){1, {0, 0}, x}; }

static const char *write_tmp(const char *name, const char *text) {
    const char *p = test_tmp(name);
    CHECK(test_write_file(p, text, (long)strlen(text)) == 0);
    return p;
}

TEST(duo_table_round_trip_with_gqa_groups) {
    /* 3 layers x 2 KV heads, for a model of 8 query heads: 4 per group */
    float v[6] = {0.25f, 1.0f, 0.0f, 0.5f, 0.123456789f, 0.75f};
    HeadTable t = {3, 2, v}, back;
    Err e;
    char path[1100];
    snprintf(path, sizeof path, "%s", test_tmp("rt.tsv"));
    CHECK(headset_table_write(path, &t, "from a test\nwith a newline", &e) == 0);
    char *text = test_read_file(path, NULL);
    CHECK_MSG(text && !strcmp(text, "# from a test with a newline\n0.250000\t1.000000\n0.000000\t0.500000\n"
                                     "0.123457\t0.750000\n"), "%s", text ? text : "(none)");
    free(text);
    CHECK(headset_table_read(path, 3, 2, &back, &e) == 0);
    CHECK_INT(back.n_layers, 3);
    CHECK_INT(back.n_kv, 2);
    for (int i = 0; back.values && i < 6; i++) CHECK_NEAR(back.values[i], v[i], 5e-7);
    HeadPick p = threshold(0.3);
    uint8_t *m = NULL;
    CHECK(headset_from_table(&back, 8, &p, &m, &e) == 0);
    /* KV head 1 of layer 0 (1.0) and of layers 1 and 2 (0.5, 0.75): query heads 4-7 each */
    CHECK_MSG(!strcmp(listed(m, 3, 8), "0.4,0.5,0.6,0.7,1.4,1.5,1.6,1.7,2.4,2.5,2.6,2.7"), "%s", listed(m, 3, 8));
    free(m);
    headset_table_free(&back);
    /* DuoAttention's own files: CRLF endings, spaces after tabs, comments and blank lines */
    CHECK_MSG(!strcmp(cut("# full_attention_heads\r\n1\t0\r\n\r\n0.0\t 0.9\r\n", 4, threshold(0.5)), "0.0,0.1,1.2,1.3"),
              "%s", cut("# full_attention_heads\r\n1\t0\r\n\r\n0.0\t 0.9\r\n", 4, threshold(0.5)));
}

/* 5 layers x 4 KV heads, as stories260K has (8 query heads: 2 a group). */
static const char *TABLE = "0.9\t0.1\t0.5\t0.5\n"
                           "0\t1\t0.2\t0.3\n"
                           "0.1\t0.1\t0.1\t0.1\n"
                           "0.4\t0.4\t0.6\t0.0\n"
                           "0.0\t0.0\t0.0\t0.95\n";

TEST(duo_budget_takes_the_top_query_heads_ties_to_the_lower_head) {
    /* ranked: 1.2 1.3 (1.0), 4.6 4.7 (0.95), 0.0 0.1 (0.9), 3.4 3.5 (0.6), then 0.5 ties 0.4 0.5 0.6 0.7 */
    const struct { HeadPick pick; const char *want; } cases[] = {
        {budget(4, 0), "1.2,1.3,4.6,4.7"},
        {budget(10, 1), "1.2,1.3,4.6,4.7"},                             /* 10% of 40 */
        {budget(5, 0), "0.0,1.2,1.3,4.6,4.7"},                          /* splits layer 0's group */
        {budget(25, 1), "0.0,0.1,0.4,0.5,1.2,1.3,3.4,3.5,4.6,4.7"},     /* 10 heads: half the 0.5 tie */
        {budget(0, 1), ""},
        {budget(1.2, 1), ""},                                           /* 0.48 heads rounds to 0 ... */
        {budget(1.3, 1), "1.2"},                                        /* ... 0.52 to 1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = cut(TABLE, 8, cases[i].pick);
        CHECK_MSG(!strcmp(got, cases[i].want), "budget %g%s: %s, want %s", cases[i].pick.budget.value,
                  cases[i].pick.budget.percent ? "%" : "", got, cases[i].want);
    }
    CHECK_MSG(strstr(cut(TABLE, 8, budget(41, 0)), "exceeds"), "%s", cut(TABLE, 8, budget(41, 0)));
    CHECK(strlen(cut(TABLE, 8, budget(100, 1))) > 0 && !strcmp(cut(TABLE, 8, budget(40, 0)), cut(TABLE, 8, budget(100, 1))));
    CHECK_MSG(strstr(cut(TABLE, 6, budget(1, 0)), "groups"), "%s", cut(TABLE, 6, budget(1, 0))); /* 6 % 4 */
    HeadBudget b = {12.5, 1};
    CHECK_INT(headset_budget_count(&b, 8), 1); /* 1.0 exactly */
    b.value = 6.25;
    CHECK_INT(headset_budget_count(&b, 8), 1); /* 0.5 rounds up */
    b.value = 6.2;
    CHECK_INT(headset_budget_count(&b, 8), 0);
    b = (HeadBudget){7, 0};
    CHECK_INT(headset_budget_count(&b, 5), 5);
}

TEST(duo_threshold_is_strictly_greater) {
    const struct { double x; const char *want; } cases[] = {
        {0.5, "0.0,0.1,1.2,1.3,3.4,3.5,4.6,4.7"},            /* the 0.5 heads stay local */
        {0.49, "0.0,0.1,0.4,0.5,0.6,0.7,1.2,1.3,3.4,3.5,4.6,4.7"},
        {0.95, "1.2,1.3"},
        {1.0, ""},
        {0.3, "0.0,0.1,0.4,0.5,0.6,0.7,1.2,1.3,3.0,3.1,3.2,3.3,3.4,3.5,4.6,4.7"}, /* 0.3 is not above 0.3 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = cut(TABLE, 8, threshold(cases[i].x));
        CHECK_MSG(!strcmp(got, cases[i].want), "threshold %g: %s, want %s", cases[i].x, got, cases[i].want);
    }
    /* one KV head for 8 query heads: the whole layer moves together */
    CHECK_MSG(!strcmp(cut("0.7\n0.2\n", 8, threshold(0.5)), "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7"), "%s",
              cut("0.7\n0.2\n", 8, threshold(0.5)));
}

/* headset_table_read refuses path with a message holding needle. */
static void refused(const char *path, int layers, int kv, const char *needle) {
    HeadTable t;
    Err e;
    int rc = headset_table_read(path, layers, kv, &t, &e);
    CHECK_MSG(rc != 0 && strstr(e.msg, path) && strstr(e.msg, needle) && !strchr(e.msg, '\n'), "%s: rc %d: %s", needle,
              rc, rc ? e.msg : "accepted");
    if (!rc) headset_table_free(&t);
}

TEST(duo_hostile_tables_are_refused_in_one_line) {
    refused(write_tmp("rows.tsv", "0.1\t0.2\n0.3\t0.4\n"), 3, 2, "2 rows, the model has 3 layers");
    refused(write_tmp("cols.tsv", "0.1\t0.2\t0.3\n0.3\t0.4\t0.5\n"), 2, 2, "3 values a row, the model has 2 KV heads");
    refused(write_tmp("ragged.tsv", "0.1\t0.2\n0.3\n"), 2, 2, "line 2 has 1 values, the rows before it 2");
    refused(write_tmp("big.tsv", "0.1\t1.5\n"), 1, 2, "line 1, value 2: 1.5 is outside [0, 1]");
    refused(write_tmp("neg.tsv", "-0.1\t0.5\n"), 1, 2, "-0.1 is outside [0, 1]");
    refused(write_tmp("nan.tsv", "0.1\tnan\n"), 1, 2, "NaN");
    refused(write_tmp("inf.tsv", "inf\t0.1\n"), 1, 2, "outside [0, 1]");
    refused(write_tmp("word.tsv", "0.1\tabc\n"), 1, 2, "'abc' is not a number");
    refused(write_tmp("empty.tsv", ""), 1, 2, "empty");
    refused(write_tmp("comments.tsv", "# nothing\n\n"), 1, 2, "no rows");
    const char *nul = test_tmp("nul.tsv");
    CHECK(test_write_file(nul, "0.1\t0\0.2\n", 9) == 0);
    refused(nul, 1, 2, "NUL byte");
    char *wide = malloc(4 * 4100 + 2), *w = wide; /* one value more than a row may hold */
    for (int i = 0; wide && i < HEADSET_MAX_KV + 1; i++) w += sprintf(w, "0.5\t");
    if (wide) strcpy(w, "\n");
    refused(write_tmp("wide.tsv", wide ? wide : ""), 1, 2, "more than 4096 values");
    free(wide);
    const char *huge = test_tmp("huge.tsv"); /* sparse: refused by its size before a byte is read */
    FILE *f = fopen(huge, "w");
    CHECK(f && ftruncate(fileno(f), (off_t)HEADSET_MAX_BYTES + 1) == 0);
    if (f) fclose(f);
    refused(huge, 1, 2, "limit");
    const char *dir = test_tmp("dir.tsv");
    mkdir(dir, 0755);
    refused(dir, 1, 2, "directory");
    const char *fifo = test_tmp("fifo.tsv");
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    refused(fifo, 1, 2, "FIFO"); /* refused by its kind, never opened for a read that would block */
    refused(test_tmp("missing.tsv"), 1, 2, "cannot open");
}

TEST(duo_jaccard_textbook_values) {
    const uint8_t a[6] = {1, 1, 1, 1, 0, 0}, b[6] = {0, 0, 1, 1, 1, 1}, none[6] = {0}, one[6] = {0, 1, 0, 0, 0, 0};
    int i, u;
    CHECK_NEAR(headset_jaccard(a, b, 6, &i, &u), 1.0 / 3, 1e-12); /* {0,1,2,3} vs {2,3,4,5}: 2 / 6 */
    CHECK_INT(i, 2);
    CHECK_INT(u, 6);
    CHECK_NEAR(headset_jaccard(a, a, 6, &i, &u), 1.0, 0);
    CHECK_NEAR(headset_jaccard(one, a, 6, &i, &u), 0.25, 1e-12); /* a subset: |A| / |B| */
    CHECK_NEAR(headset_jaccard(one, b, 6, &i, &u), 0.0, 0);      /* disjoint */
    CHECK_INT(u, 5);
    CHECK_NEAR(headset_jaccard(none, a, 6, NULL, NULL), 0.0, 0);
    CHECK_NEAR(headset_jaccard(none, none, 6, &i, &u), 1.0, 0); /* two empty sets are equal */
    CHECK_INT(u, 0);
}

/* The gates of every line `trace` prints for args, joined, with n_far. */
static char *trace_gates(const char *args, int *lines) {
    int st;
    char *out = test_runf(&st, "%s trace --model %s --prompt 'Once upon a time' --steps 24 --temperature 0 --window 4 %s 2>&1",
                          test_bin(), test_stories_model(), args);
    CHECK_MSG(st == 0, "%s: %s", args, out ? out : "");
    size_t cap = 1 << 16, o = 0;
    char *g = calloc(cap, 1);
    *lines = 0;
    for (char *line = out; g && line && *line; (*lines)++) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        cJSON *j = cJSON_Parse(line), *gate = cJSON_GetObjectItem(j, "gate");
        o += (size_t)snprintf(g + o, cap - o, "%d %d:", cJSON_GetObjectItem(j, "token") ? cJSON_GetObjectItem(j, "token")->valueint : -1,
                              cJSON_GetObjectItem(j, "n_far") ? cJSON_GetObjectItem(j, "n_far")->valueint : -1);
        for (cJSON *x = gate ? gate->child : NULL; x && o + 4 < cap; x = x->next) o += (size_t)snprintf(g + o, cap - o, "%d", x->valueint);
        o += (size_t)snprintf(g + o, cap - o, "\n");
        cJSON_Delete(j);
        line = nl ? nl + 1 : NULL;
    }
    free(out);
    return g;
}

TEST(duo_static_heads_run_as_the_explicit_list) {
    SKIP_UNLESS_SHARED();
    const char *tsv = write_tmp("stories.tsv", TABLE);
    const char *list = "0.0,0.1,0.4,0.5,1.2,1.3,3.4,3.5,4.6,4.7"; /* TABLE's top 25%, by hand above */
    char a[2048], b[2048];
    int n1, n2;
    snprintf(a, sizeof a, "--policy static --static-heads duo:%s --budget 25%%", tsv);
    snprintf(b, sizeof b, "--policy static --static-heads %s", list);
    char *g1 = trace_gates(a, &n1), *g2 = trace_gates(b, &n2);
    CHECK_INT(n1, 24); /* --steps 24 positions, the prompt's included */
    CHECK_MSG(g1 && g2 && !strcmp(g1, g2), "duo:\n%s\nlist:\n%s", g1 ? g1 : "", g2 ? g2 : "");
    /* and the gates are the set's: at a position with far keys, exactly its heads global */
    const char *last = g1 ? strrchr(g1, ':') : NULL;
    CHECK_MSG(last && !strncmp(last + 1, "1100110000110000000000000000110000000011", 40), "%s", last ? last : "");
    free(g1);
    free(g2);
    /* threshold 0.5 takes the same set minus the 0.5 heads: 0.4 and 0.5 */
    snprintf(a, sizeof a, "--policy static --static-heads duo:%s --duo-threshold 0.5", tsv);
    snprintf(b, sizeof b, "--policy static --static-heads 0.0,0.1,1.2,1.3,3.4,3.5,4.6,4.7");
    g1 = trace_gates(a, &n1), g2 = trace_gates(b, &n2);
    CHECK_MSG(g1 && g2 && !strcmp(g1, g2), "duo:\n%s\nlist:\n%s", g1 ? g1 : "", g2 ? g2 : "");
    free(g1);
    free(g2);
    /* eval: the same table row through the same evaluation */
    int st;
    const char *ev = "eval --self 2 --seq-len 64 --window 8 --json --policy static";
    char *e1 = test_runf(&st, "%s %s --model %s --static-heads duo:%s --budget 25%% 2>/dev/null", test_bin(), ev,
                         test_stories_model(), tsv);
    CHECK_INT(st, 0);
    char *e2 = test_runf(&st, "%s %s --model %s --static-heads %s 2>/dev/null", test_bin(), ev, test_stories_model(), list);
    CHECK_INT(st, 0);
    cJSON *j1 = e1 ? cJSON_Parse(e1) : NULL, *j2 = e2 ? cJSON_Parse(e2) : NULL;
    const char *keys[] = {"global_share", "perplexity", "kl", "keys_read_frac"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        cJSON *x = cJSON_GetObjectItem(cJSON_GetArrayItem(j1, 0), keys[k]), *y = cJSON_GetObjectItem(cJSON_GetArrayItem(j2, 0), keys[k]);
        CHECK_MSG(cJSON_IsNumber(x) && cJSON_IsNumber(y) && x->valuedouble == y->valuedouble, "%s: %s vs %s", keys[k], e1, e2);
    }
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(j1, 0), "global_share")), 0.25, 1e-12);
    /* sweep's static point is eval's row */
    char *sw = test_runf(&st, "%s sweep --model %s --policy static --window 8 --self 2 --seq-len 64 --json --static-heads "
                              "duo:%s --budget 25%% 2>/dev/null", test_bin(), test_stories_model(), tsv);
    CHECK_INT(st, 0);
    cJSON *js = sw ? cJSON_Parse(sw) : NULL, *row = cJSON_GetArrayItem(cJSON_IsArray(js) ? js : cJSON_GetObjectItem(js, "rows"), 0);
    CHECK_MSG(cJSON_IsNumber(cJSON_GetObjectItem(row, "kl")) &&
                  cJSON_GetObjectItem(row, "kl")->valuedouble == cJSON_GetObjectItem(cJSON_GetArrayItem(j1, 0), "kl")->valuedouble,
              "sweep: %s\neval: %s", sw ? sw : "", e1 ? e1 : "");
    cJSON_Delete(js);
    free(sw);
    cJSON_Delete(j1);
    cJSON_Delete(j2);
    free(e1);
    free(e2);
}

TEST(duo_static_heads_refusals) {
    SKIP_UNLESS_SHARED();
    char cmd[4096];
    const char *m = test_stories_model(), *tsv = write_tmp("ok.tsv", TABLE);
    const char *rows = write_tmp("rows3.tsv", "0.1\t0.2\t0.3\t0.4\n0.1\t0.2\t0.3\t0.4\n0.1\t0.2\t0.3\t0.4\n");
    const struct { const char *args; int status; const char *needle; } bad[] = {
        {"--static-heads duo:%s", 2, "needs --budget K|P% or --duo-threshold X"},
        {"--static-heads duo:%s --budget 10%% --duo-threshold 0.5", 2, "conflict"},
        {"--static-heads 0.1 --duo-threshold 0.5 ", 2, "--duo-threshold is for --static-heads duo:FILE"},
        {"--static-heads 0.1 --budget 3 ", 2, "--budget is for --static-heads duo:FILE"},
        {"--static-heads duo:%s --duo-threshold 1.5", 2, "out of range"},
        {"--static-heads duo:%s --budget 41", 1, "exceeds the model's 40"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, bad[i].args, tsv);
        snprintf(cmd, sizeof cmd, "%s generate --model %s --prompt hi --steps 4 --policy static %s", test_bin(), m, args);
        CHECK_REFUSAL(cmd, bad[i].status, "ahascope generate: ", bad[i].needle, 1);
    }
    snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --prompt hi --steps 4 --policy static --static-heads duo:%s --budget 10%%",
             test_bin(), test_tmp("refused.db"), m, rows);
    CHECK_REFUSAL(cmd, 1, "ahascope record: ", "rows3.tsv: 3 rows, the model has 5 layers", 1);
}

TEST(duo_calibrate_writes_the_max_oracle_rate_per_kv_head) {
    SKIP_UNLESS_SHARED();
    char db[1024], tsv[1024], heads[1024];
    snprintf(db, sizeof db, "%s", test_tmp("duo-cal.db"));
    snprintf(tsv, sizeof tsv, "%s", test_tmp("duo-cal.tsv"));
    snprintf(heads, sizeof heads, "%s", test_tmp("duo-cal.txt"));
    int st;
    for (int i = 0; i < 2; i++) {
        free(test_runf(&st, "%s record --db %s --model %s --prompt 'Once upon a time' --steps 40 --window 8 --profile "
                            "--seed %d 2>&1", test_bin(), db, test_stories_model(), i + 1));
        CHECK_INT(st, 0);
    }
    char *out = test_runf(&st, "%s calibrate --db %s --run 1 --run 2 --format duo --out %s 2>&1", test_bin(), db, tsv);
    CHECK_MSG(st == 0 && strstr(out, "5 layers x 4 KV heads"), "%s", out ? out : "");
    free(out);
    /* the same table recounted in SQL: per KV head (head / 2), the max over its query heads' rates */
    char *want = test_runf(&st, "%s query --db %s --csv \"SELECT printf('%%.6f', MAX(rate)) FROM (SELECT layer, head, "
                                "AVG(oracle_logit > theta_logit) AS rate FROM decisions d JOIN runs r USING(run_id) JOIN "
                                "tokens t USING(run_id, pos) WHERE run_id IN (1,2) AND t.n_far > 0 GROUP BY layer, head) "
                                "GROUP BY layer, head / 2 ORDER BY layer, head / 2\"", test_bin(), db);
    HeadTable t;
    Err e;
    CHECK_MSG(headset_table_read(tsv, 5, 4, &t, &e) == 0, "%s", e.msg);
    char *p = want ? strchr(want, '\n') : NULL;
    int n = 0;
    for (; p && p[1] && n < 20; n++) {
        double v = strtod(p + 1, &p);
        CHECK_MSG(t.values && fabs(t.values[n] - v) < 1e-6, "KV head %d: %g in the table, %g in SQL", n, t.values ? t.values[n] : -1, v);
        p = strchr(p, '\n');
    }
    CHECK_INT(n, 20);
    headset_table_free(&t);
    free(want);
    /* the calib: form is the set calibrate writes */
    free(test_runf(&st, "%s calibrate --db %s --run 1 --run 2 --budget 6 --out %s", test_bin(), db, heads));
    CHECK_INT(st, 0);
    out = test_runf(&st, "%s compare --model %s --heads calib:%s#1,2 --budget 6 --heads %s 2>&1", test_bin(),
                    test_stories_model(), db, heads);
    CHECK_MSG(st == 0 && strstr(out, "A and B: 6  A or B: 6") && strstr(out, "jaccard: 1.0000"), "%s", out ? out : "");
    free(out);
    const struct { const char *args; const char *needle; } bad[] = {
        {"--format duo --budget 3", "takes no --budget"},
        {"--format tsv", "--format must be heads or duo"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "%s calibrate --db %s --run 1 %s --out %s", test_bin(), db, bad[i].args, tsv);
        CHECK_REFUSAL(cmd, 2, "ahascope calibrate: ", bad[i].needle, 1);
    }
}

TEST(duo_compare_prints_the_overlap) {
    SKIP_UNLESS_SHARED();
    const char *tsv = write_tmp("cmp.tsv", TABLE);
    int st;
    /* top 10%: 1.2 1.3 4.6 4.7 against 0.0 1.2 1.3: 2 shared of 5 */
    char *out = test_runf(&st, "%s compare --model %s --heads duo:%s --budget 10%% --heads 0.0,1.2,1.3 2>&1", test_bin(),
                          test_stories_model(), tsv);
    CHECK_MSG(st == 0 && strstr(out, "A: 4 heads") && strstr(out, "B: 3 heads") && strstr(out, "A and B: 2  A or B: 5  of 40 heads") &&
                  strstr(out, "jaccard: 0.4000\n") && strstr(out, "A only: 4.6,4.7\n") && strstr(out, "B only: 0.0\n"),
              "%s", out ? out : "");
    free(out);
    out = test_runf(&st, "%s compare --model %s --heads duo:%s --duo-threshold 0.5 --heads duo:%s --budget 8 2>&1", test_bin(),
                    test_stories_model(), tsv, tsv);
    CHECK_MSG(st == 0 && strstr(out, "jaccard: 1.0000") && strstr(out, "A only: -"), "%s", out ? out : "");
    free(out);
    const struct { const char *args; const char *needle; } bad[] = {
        {"--heads 0.1", "give exactly two --heads"},
        {"--heads 0.1 --heads 0.2 --heads 0.3", "give exactly two --heads"},
        {"--budget 10% --heads 0.1 --heads 0.2", "comes after the --heads"},
        {"--heads 0.1 --budget 3 --heads 0.2", "--budget is for --heads duo:FILE"},
        {"--heads duo:x.tsv --heads 0.2", "needs --budget"},
        {"--heads 0.1 --heads 0.2 --run 1", "unknown flag '--run'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "%s compare %s", test_bin(), bad[i].args);
        CHECK_REFUSAL(cmd, 2, "ahascope compare: ", bad[i].needle, 1);
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s compare --model %s --heads 9.0 --heads 0.1", test_bin(), test_stories_model());
    CHECK_REFUSAL(cmd, 1, "ahascope compare: ", "out of range", 1);
}
