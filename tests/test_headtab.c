/* test_headtab.c — the published head tables and per-head windows, each recounted by tests/headtab_ref.py.
 *
 * Every reader (Retrieval-Head JSON, PruLong masks, MoA's JSON and long
 * CSV, tables of windows) is fed a small fixture made here and checked
 * against an independent float64 NumPy reading of the same file; the cuts
 * and the rank correlation too. Then stories260K runs with every head in
 * its own window and the NumPy forward pass with the same windows recounts
 * each token's log-probability and every head's keys read.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/headset.h"
#include "engine/headtab.h"
#include "engine/stats.h"
#include "test.h"

#define L5 5 /* stories260K's shape, which the fixtures follow */
#define H8 8
#define KV4 4

static const HeadShape SHAPE = {L5, H8, KV4, 512};

/* A fixture's path, kept (test_tmp's buffer is reused). */
static const char *fixture(const char *name, const char *text) {
    static char paths[16][1024];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, sizeof paths[0], "%s", test_tmp(name));
    CHECK(test_write_file(p, text, (long)strlen(text)) == 0);
    return p;
}

/* A reproducible number in [0, 1) (an LCG: the fixtures need no quality). */
static double lcg(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (double)(*s >> 8 & 0xffff) / 65536.0;
}

/* headtab_ref.py's JSON answer for the arguments, or NULL (failure recorded). */
static cJSON *numpy(const char *fmt, const char *a, const char *b, const char *c) {
    const char *py = test_python_numpy();
    char args[4096];
    int st;
    snprintf(args, sizeof args, fmt, a, b, c);
    char *out = test_runf(&st, "'%s' tests/headtab_ref.py %s 2>&1", py, args);
    cJSON *j = st == 0 && out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(j, "headtab_ref.py %s: %s", args, out ? out : "");
    free(out);
    return j;
}

static double num_at(const cJSON *j, const char *key, int i) {
    const cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(j, key), i);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* A float array as a JSON file for the reference. */
static const char *json_floats(const char *name, const float *v, int n) {
    char *text = malloc((size_t)n * 24 + 4);
    size_t o = 0;
    o += (size_t)sprintf(text, "[");
    for (int i = 0; i < n; i++) o += (size_t)sprintf(text + o, "%s%.9g", i ? "," : "", v[i]);
    sprintf(text + o, "]");
    const char *p = fixture(name, text);
    free(text);
    return p;
}

/* The map's cells against the reference's "heads" list. */
static void check_cut(const uint8_t *m, const cJSON *ref, int n, const char *what) {
    uint8_t want[L5 * H8] = {0};
    for (const cJSON *x = cJSON_GetObjectItem(ref, "heads") ? cJSON_GetObjectItem(ref, "heads")->child : NULL; x; x = x->next)
        if (x->valueint >= 0 && x->valueint < n) want[x->valueint] = 1;
    for (int c = 0; m && c < n; c++) CHECK_MSG(m[c] == want[c], "%s: cell %d is %d, NumPy says %d", what, c, m[c], want[c]);
}

/* Query-head scores of a table (a KV head's value for its group). */
static void broadcast(const HeadTable *t, float *out) {
    for (int c = 0; c < L5 * H8; c++) out[c] = t->values[(c / H8) * t->n_kv + (c % H8) / (H8 / t->n_kv)];
}

TEST(headtab_retrieval_json_means_and_budget_match_numpy) {
    if (!test_python_numpy()) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    char text[32768];
    size_t o = 0;
    unsigned seed = 7;
    o += (size_t)snprintf(text, sizeof text, "{");
    for (int c = 0; c < L5 * H8; c++) { /* lists of 1 to 5 scores; heads 3 and 11 tie exactly */
        int n = 1 + c % 5;
        o += (size_t)snprintf(text + o, sizeof text - o, "%s\"%d-%d\": [", c ? ", " : "", c / H8, c % H8);
        for (int k = 0; k < n; k++)
            o += (size_t)snprintf(text + o, sizeof text - o, "%s%.6f", k ? ", " : "", c == 11 ? 0.9 : c == 3 ? 0.9 : lcg(&seed));
        o += (size_t)snprintf(text + o, sizeof text - o, "]");
    }
    snprintf(text + o, sizeof text - o, "}\n");
    const char *path = fixture("retrieval.json", text);
    HeadTable t;
    Err e;
    CHECK_MSG(headtab_read_retrieval(path, &SHAPE, &t, &e) == 0, "%s", e.msg);
    cJSON *ref = numpy("retrieval %s 5 8%s%s", path, "", "");
    for (int c = 0; t.values && c < L5 * H8; c++)
        CHECK_MSG(fabs(t.values[c] - num_at(ref, "scores", c)) < 1e-6, "head %d: %g, NumPy %g", c, t.values[c],
                  num_at(ref, "scores", c));
    cJSON_Delete(ref);
    /* the top 10%: four heads, 3 before 11 at their tie */
    const char *scores = json_floats("retrieval_scores.json", t.values, L5 * H8);
    HeadPick pick = {0, {10, 1}, 0};
    uint8_t *m = NULL;
    CHECK(headset_from_table(&t, H8, &pick, &m, &e) == 0);
    ref = numpy("cut %s 4%s%s", scores, "", "");
    check_cut(m, ref, L5 * H8, "retrieval top 10%");
    cJSON_Delete(ref);
    free(m);
    headset_table_free(&t);
}

TEST(headtab_prulong_masks_threshold_and_budget_match_numpy) {
    if (!test_python_numpy()) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    /* soft masks per KV head, some outside [0, 1] as a log-alpha table may be; 0.5 itself is not global */
    const char *path = fixture("prulong.tsv", "# PruLong masks\n1\t0\t0.5\t0.51\n-2.5\t3\t0\t0\n0.2\t0.7\t1\t0.49\n"
                                              "0\t0\t0\t1\n0.6\t0.4\t0.5\t2\n");
    HeadTable t;
    Err e;
    CHECK_MSG(headtab_read_prulong(path, &SHAPE, &t, &e) == 0, "%s", e.msg);
    cJSON *ref = numpy("prulong %s%s%s", path, "", "");
    float q[L5 * H8];
    for (int i = 0; t.values && i < L5 * KV4; i++) CHECK_NEAR(t.values[i], num_at(ref, "values", i), 1e-6);
    cJSON_Delete(ref);
    if (!t.values) return;
    broadcast(&t, q);
    HeadPick half = {1, {0, 0}, 0.5}, six = {0, {6, 0}, 0};
    uint8_t *m = NULL;
    CHECK(headset_from_table(&t, H8, &half, &m, &e) == 0);
    int n = 0;
    for (int c = 0; m && c < L5 * H8; c++) {
        CHECK_MSG(m[c] == (q[c] > 0.5f), "cell %d: %d for mask %g", c, m[c], q[c]);
        n += m[c];
    }
    CHECK_INT(n, 16); /* eight KV heads above 0.5, two query heads each */
    free(m);
    CHECK(headset_from_table(&t, H8, &six, &m, &e) == 0);
    ref = numpy("cut %s 6%s%s", json_floats("prulong_scores.json", q, L5 * H8), "", "");
    check_cut(m, ref, L5 * H8, "prulong top 6");
    cJSON_Delete(ref);
    free(m);
    headset_table_free(&t);
}

/* The spans a reader gave at N keys against the reference's for the file. */
static void check_spans(const char *path, const HeadSpans *sp, const char *what) {
    HeadTable t;
    Err e;
    CHECK(headtab_spans_scores(sp, 512, &t, &e) == 0);
    cJSON *ref = numpy("moa %s 5 8 4 %s%s", path, "512", "");
    for (int c = 0; t.values && c < L5 * H8; c++)
        CHECK_MSG(fabs(t.values[c] - num_at(ref, "spans", c)) < 1e-3, "%s head %d: %g, NumPy %g", what, c, t.values[c],
                  num_at(ref, "spans", c));
    cJSON_Delete(ref);
    headset_table_free(&t);
}

TEST(headtab_moa_json_and_long_csv_spans_match_numpy) {
    if (!test_python_numpy()) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    /* MoA's JSON, a value per KV head, negative alphas as MoA writes them (-1024 with beta 1: N - 1024) */
    char js[4096], csv[16384];
    size_t o = 0, p = 0;
    unsigned seed = 3;
    o += (size_t)snprintf(js, sizeof js, "{\"alphas\": [");
    for (int l = 0; l < L5; l++)
        o += (size_t)snprintf(js + o, sizeof js - o, "%s[0.0, -1024.0, %d, 16]", l ? ", " : "", 64 * l);
    o += (size_t)snprintf(js + o, sizeof js - o, "], \"betas\": [");
    for (int l = 0; l < L5; l++)
        o += (size_t)snprintf(js + o, sizeof js - o, "%s[0.125, 1.0, %.3f, 0]", l ? ", " : "", lcg(&seed));
    snprintf(js + o, sizeof js - o, "]}\n");
    const char *jpath = fixture("moa.json", js);
    /* the long CSV as MoA's repository keeps it: an index column and a plan, a row per query head, rows shuffled */
    p += (size_t)snprintf(csv, sizeof csv, ",plan_id,layer_id,head_id,alpha_value,beta_value\r\n");
    for (int i = 0; i < L5 * H8; i++) {
        int c = (i * 7) % (L5 * H8);
        p += (size_t)snprintf(csv + p, sizeof csv - p, "%d,0,%d,%d,%.1f,%.3f\r\n", i, c / H8, c % H8, c % 3 ? 0.0 : 32.0 * c,
                              lcg(&seed));
    }
    const char *cpath = fixture("moa.csv", csv);
    HeadSpans a, b;
    Err e;
    CHECK_MSG(headtab_read_moa(jpath, &SHAPE, &a, &e) == 0, "%s", e.msg);
    CHECK_MSG(headtab_read_moa(cpath, &SHAPE, &b, &e) == 0, "%s", e.msg);
    if (a.ab) check_spans(jpath, &a, "json");
    if (b.ab) check_spans(cpath, &b, "csv");
    /* a window at position t: alpha + beta (t + 1) rounded half up, from 1 to t + 1 */
    const float ab[][2] = {{0, 0.125f}, {-1024, 1}, {3.5f, 0}, {0, 0.5f}};
    const int t[] = {39, 2000, 100, 0}, want[] = {5, 977, 4, 1};
    for (int i = 0; i < 4; i++) CHECK_INT(headtab_window_at(ab[i], t[i]), want[i]);
    headtab_spans_free(&a);
    headtab_spans_free(&b);
}

TEST(headtab_spearman_matches_numpy_with_ties) {
    if (!test_python_numpy()) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    float a[L5 * H8], b[L5 * H8];
    double x[L5 * H8], y[L5 * H8];
    unsigned seed = 11;
    for (int i = 0; i < L5 * H8; i++) {
        a[i] = (float)floor(lcg(&seed) * 6); /* few values: many ties */
        b[i] = i % 4 ? (float)(a[i] + lcg(&seed) * 3) : (float)(i % 2); /* related, with a 0/1 block */
        x[i] = a[i], y[i] = b[i];
    }
    double rho = stats_spearman(x, y, L5 * H8);
    cJSON *ref = numpy("spearman %s %s%s", json_floats("sp_a.json", a, L5 * H8), json_floats("sp_b.json", b, L5 * H8), "");
    cJSON *r = cJSON_GetObjectItem(ref, "rho");
    CHECK_MSG(cJSON_IsNumber(r) && fabs(rho - r->valuedouble) < 1e-12, "C %.15g, NumPy %.15g", rho, r ? r->valuedouble : NAN);
    cJSON_Delete(ref);
    double c[3] = {1, 1, 1}, d[3] = {1, 2, 3};
    CHECK(isnan(stats_spearman(c, d, 3))); /* a constant side has no ranking */
    CHECK(isnan(stats_spearman(d, d, 1)));
    CHECK_NEAR(stats_spearman(d, d, 3), 1.0, 1e-15);
}

TEST(headtab_hostile_tables_refused_in_one_line) {
    const struct {
        int kind; /* 0 retrieval, 1 prulong, 2 moa, 3 windows */
        const char *name, *text, *needle;
    } bad[] = {
        {0, "r1.json", "[1, 2]", "not a JSON object"},
        {0, "r2.json", "{\"0-0\": [1,", "not valid JSON"},
        {0, "r3.json", "{\"5-0\": [1]}", "key \"5-0\" is not L-H"},
        {0, "r4.json", "{\"0-x\": [1]}", "is not L-H"},
        {0, "r5.json", "{\"0-0\": []}", "not a non-empty list"},
        {0, "r6.json", "{\"0-0\": [1, \"a\"]}", "score 2 is not a number within +-1e+30"},
        {0, "r7.json", "{\"0-0\": [1], \"0-0\": [2]}", "given twice"},
        {0, "r8.json", "{\"0-0\": [1]}", "head 0-1 is missing"},
        {1, "p1.tsv", "1\t0\t1\t0\n", "1 rows, the model has 5 layers"},
        {1, "p2.tsv", "1\t0\t1\n1\t0\t1\n1\t0\t1\n1\t0\t1\n1\t0\t1\n", "3 values a layer"},
        {1, "p3.tsv", "1\t0\tinf\t0\n", "outside"},
        {1, "p4.tsv", "1\t0\tnan\t0\n", "NaN"},
        {2, "m1.json", "{\"alphas\": [[0,0,0,0]]}", "no \"alphas\" and \"betas\""},
        {2, "m2.json", "{\"alphas\": [[0,0,0,0]], \"betas\": [[1,1,1,1]]}", "1 alpha and 1 beta rows"},
        {2, "m3.json", "{\"alphas\": [[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0]], \"betas\": "
                       "[[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,2]]}", "beta 2 is outside [0, 1]"},
        {2, "m4.json", "{\"alphas\": [[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0]], \"betas\": "
                       "[[1,1,1],[1,1,1],[1,1,1],[1,1,1],[1,1,1]]}", "3 values a layer"},
        {2, "m5.csv", "layer,head,alpha\n0,0,1\n", "no column beta"},
        {2, "m6.csv", "layer,head,alpha,beta\n0,0,1,0.5\n0,0,1,0.5\n", "given twice (one plan a file)"},
        {2, "m7.csv", "layer,head,alpha,beta\n0,9,1,0.5\n", "head 9 is not one of the model's 8"},
        {2, "m8.csv", "layer,head,alpha,beta\n0,x,1,0.5\n", "line 2: column 2 is not a number"},
        {2, "m9.csv", "layer,head,alpha,beta\n0,0,1e12,0.5\n", "alpha 1e+12 is not a finite number"},
        {2, "m10.csv", "layer,head,alpha,beta\n0,0,1,0.5\n0,1,1,0.5\n0,2,1,0.5\n0,3,1,0.5\n", "layer 1 head 0 is missing"},
        {2, "m11.csv", "layer,head,alpha,beta\n", "no rows under the header"},
        {2, "m12.csv", "layer,head,alpha,beta\n-1e52,0,1,0.5\n", "layer -1e+52 is not one of the model's 5"},
        {3, "w1.tsv", "1\t2\t3\t4.5\n1\t2\t3\t4\n1\t2\t3\t4\n1\t2\t3\t4\n1\t2\t3\t4\n", "4.5 is not a whole number"},
        {3, "w2.tsv", "1\t2\t3\t0\n1\t2\t3\t4\n1\t2\t3\t4\n1\t2\t3\t4\n1\t2\t3\t4\n", "0 is outside [1, 1.67772e+07]"},
        {3, "w3.tsv", "a\0b\n", "NUL byte"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = bad[i].kind == 3 && strstr(bad[i].name, "w3") ? 4 : strlen(bad[i].text);
        char path[1024];
        snprintf(path, sizeof path, "%s", test_tmp(bad[i].name));
        CHECK(test_write_file(path, bad[i].text, (long)len) == 0);
        HeadTable t = {0};
        HeadSpans s = {0};
        Err e;
        int rc = bad[i].kind == 0   ? headtab_read_retrieval(path, &SHAPE, &t, &e)
                 : bad[i].kind == 1 ? headtab_read_prulong(path, &SHAPE, &t, &e)
                 : bad[i].kind == 2 ? headtab_read_moa(path, &SHAPE, &s, &e)
                                    : headtab_read_windows(path, &SHAPE, &s, &e);
        CHECK_MSG(rc != 0 && !t.values && !s.ab, "%s was read", bad[i].name);
        if (rc == 0) continue;
        CHECK_MSG(!strncmp(e.msg, path, strlen(path)) && strstr(e.msg, bad[i].needle) && !strchr(e.msg, '\n'),
                  "%s: '%s' (wanted '%s' after the path)", bad[i].name, e.msg, bad[i].needle);
    }
}

/* The number after "label: " in text, NAN when absent. */
static double after(const char *text, const char *label) {
    const char *p = text ? strstr(text, label) : NULL;
    return p ? strtod(p + strlen(label), NULL) : NAN;
}

TEST(headtab_compare_heads_a_b_overlap_and_rank_correlation) {
    SKIP_UNLESS_SHARED();
    if (!test_python_numpy()) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    char text[8192];
    size_t o = 0;
    unsigned seed = 5;
    o += (size_t)snprintf(text, sizeof text, "{");
    for (int c = 0; c < L5 * H8; c++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s\"%d-%d\": [%.4f, %.4f]", c ? ", " : "", c / H8, c % H8,
                              lcg(&seed), lcg(&seed));
    snprintf(text + o, sizeof text - o, "}");
    const char *rj = fixture("cmp.json", text);
    const char *pl = fixture("cmp.tsv", "0.9\t0.1\t0.3\t0.8\n0.2\t0.6\t0.4\t0.7\n0.95\t0.05\t0.15\t0.25\n"
                                         "0.35\t0.45\t0.55\t0.65\n0.75\t0.85\t0.01\t0.02\n");
    int st;
    /* --heads A B --budget 10%: the cut after B applies to both */
    char *out = test_runf(&st, "%s compare --model %s --heads retrieval-json:%s prulong:%s --budget 10%% 2>&1", test_bin(),
                          test_stories_model(), rj, pl);
    CHECK_MSG(st == 0 && strstr(out, "A: 4 heads") && strstr(out, "B: 4 heads"), "%s", out ? out : "");
    /* the same recount in NumPy: the scores, the cuts, rho over all and over A or B */
    HeadTable ta, tb;
    Err e;
    CHECK(headtab_read_retrieval(rj, &SHAPE, &ta, &e) == 0 && headtab_read_prulong(pl, &SHAPE, &tb, &e) == 0);
    float qa[L5 * H8], qb[L5 * H8], mask[L5 * H8];
    cJSON *ra = numpy("retrieval %s 5 8%s%s", rj, "", "");
    for (int c = 0; c < L5 * H8; c++) qa[c] = (float)num_at(ra, "scores", c);
    broadcast(&tb, qb);
    const char *fa = json_floats("cmp_a.json", qa, L5 * H8), *fb = json_floats("cmp_b.json", qb, L5 * H8);
    cJSON *ca = numpy("cut %s 4%s%s", fa, "", ""), *cb = numpy("cut %s 4%s%s", fb, "", "");
    memset(mask, 0, sizeof mask);
    for (int k = 0; k < 2; k++)
        for (const cJSON *x = cJSON_GetObjectItem(k ? cb : ca, "heads")->child; x; x = x->next) mask[x->valueint] = 1;
    int uni = 0;
    for (int c = 0; c < L5 * H8; c++) uni += mask[c] > 0;
    cJSON *all = numpy("spearman %s %s%s", fa, fb, ""), *some = numpy("spearman %s %s %s", fa, fb,
                                                                      json_floats("cmp_m.json", mask, L5 * H8));
    CHECK_NEAR(after(out, "spearman (all 40 heads): "), cJSON_GetObjectItem(all, "rho")->valuedouble, 6e-5);
    char label[64];
    snprintf(label, sizeof label, "spearman (the %d heads of A or B): ", uni);
    CHECK_NEAR(after(out, label), cJSON_GetObjectItem(some, "rho")->valuedouble, 6e-5);
    CHECK_NEAR(after(out, "jaccard: "), (8.0 - uni) / uni, 6e-5);
    free(out);
    /* a plain list ranks by its 0/1 membership, and says so */
    out = test_runf(&st, "%s compare --model %s --heads 0.0,4.4 --heads prulong:%s 2>&1", test_bin(), test_stories_model(), pl);
    CHECK_MSG(st == 0 && strstr(out, "spearman (all 40 heads, A as 0/1 membership): ") &&
                  strstr(out, "A: 2 heads") && strstr(out, "B: 18 heads"), "%s", out ? out : "");
    free(out);
    const struct { const char *args; int status; const char *needle; } bad[] = {
        {"--heads 0.1 0.2 0.3", 2, "unexpected argument '0.3'"},
        {"--heads moa:x.json 0.2", 2, "needs --budget"},
        {"--heads 0.1 0.2 --budget 3", 2, "--budget after --heads A B cuts neither set"},
        {"--heads retrieval-json:x.json 0.2", 2, "needs --budget K|P% or --duo-threshold X"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "%s compare --model %s %s", test_bin(), test_stories_model(), bad[i].args);
        CHECK_REFUSAL(cmd, bad[i].status, "ahascope compare: ", bad[i].needle, 1);
    }
    cJSON_Delete(ra), cJSON_Delete(ca), cJSON_Delete(cb), cJSON_Delete(all), cJSON_Delete(some);
    headset_table_free(&ta), headset_table_free(&tb);
}

/* The trace of stories260K under args: its tokens into a file, the lines in *j. */
static int trace_lines(const char *args, const char *tokens, cJSON **j, int cap) {
    int st, n = 0;
    char *out = test_runf(&st, "%s trace --model %s --prompt 'Once upon a time' --steps 40 --seed 3 --window 8 %s 2>&1",
                          test_bin(), test_stories_model(), args);
    CHECK_MSG(st == 0, "%s: %s", args, out ? out : "");
    FILE *f = fopen(tokens, "w");
    for (char *line = st == 0 ? out : NULL, *nl; line && *line && n < cap; line = nl ? nl + 1 : NULL) {
        if ((nl = strchr(line, '\n'))) *nl = 0;
        j[n] = cJSON_Parse(line);
        if (f && j[n]) fprintf(f, "%d\n", cJSON_GetObjectItem(j[n], "token")->valueint);
        n += j[n] != NULL;
    }
    if (f) fclose(f);
    free(out);
    return n;
}

/* Every position's log-probability, keys read per head and KV positions
 * read, against the NumPy forward pass over the same tokens with spans;
 * the largest log-probability gap in *gap. */
static void check_windows(cJSON **j, int n, const char *tokens, const char *spans, double *gap) {
    char model[1024];
    snprintf(model, sizeof model, "%s", test_stories_model());
    cJSON *ref = numpy("windows --model %s --tokens %s --spans %s", model, tokens, spans);
    const cJSON *lp = cJSON_GetObjectItem(ref, "logprob"), *kr = cJSON_GetObjectItem(ref, "keys_read");
    *gap = 0;
    for (int t = 0; ref && t < n; t++) {
        const cJSON *mine = cJSON_GetObjectItem(j[t], "keys_read"), *want = cJSON_GetArrayItem(kr, t);
        for (int c = 0; c < L5 * H8; c++)
            CHECK_MSG(cJSON_GetArrayItem(mine, c)->valueint == cJSON_GetArrayItem(want, c)->valueint,
                      "pos %d head %d: %d keys read, NumPy %d", t, c, cJSON_GetArrayItem(mine, c)->valueint,
                      cJSON_GetArrayItem(want, c)->valueint);
        CHECK_INT(cJSON_GetObjectItem(j[t], "kv_read")->valueint, (int)num_at(ref, "kv_read", t));
        const cJSON *a = cJSON_GetObjectItem(j[t], "logprob"), *b = cJSON_GetArrayItem(lp, t);
        if (cJSON_IsNumber(a) && cJSON_IsNumber(b) && fabs(a->valuedouble - b->valuedouble) > *gap)
            *gap = fabs(a->valuedouble - b->valuedouble);
    }
    cJSON_Delete(ref);
}

TEST(headtab_per_head_windows_recounted_by_numpy) {
    SKIP_UNLESS_SHARED();
    if (!test_python_numpy()) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    /* fixed windows per query head, 1 to 12 keys, and MoA spans per KV head that grow with the context */
    const char *win = fixture("win.tsv", "1\t2\t3\t4\t5\t6\t7\t8\n12\t1\t1\t12\t2\t9\t3\t3\n"
                                         "4\t4\t4\t4\t4\t4\t4\t4\n8\t7\t6\t5\t4\t3\t2\t1\n2\t11\t5\t5\t1\t1\t10\t6\n");
    const char *moa = fixture("win_moa.json", "{\"alphas\": [[2,0,-8,1],[0,0,0,0],[4,4,-2,0],[1,2,3,4],[0,6,0,6]],"
                                               " \"betas\": [[0,0.25,0.5,0.1],[0.5,0.3,0.2,0.1],[0,0.1,1,0.4],"
                                               "[0.2,0.2,0.2,0.2],[1,0,0.6,0]]}");
    const char *forms[] = {"windows", "moa"}, *paths[] = {win, moa};
    for (int f = 0; f < 2; f++) {
        HeadSpans sp;
        Err e;
        CHECK_MSG((f ? headtab_read_moa : headtab_read_windows)(paths[f], &SHAPE, &sp, &e) == 0, "%s", e.msg);
        if (!sp.ab) continue;
        float ab[L5 * H8 * 2];
        memcpy(ab, sp.ab, sizeof ab);
        headtab_spans_free(&sp);
        char *text = malloc(L5 * H8 * 40), tokens[1024], spans[1024], args[2200];
        size_t o = (size_t)sprintf(text, "[");
        for (int c = 0; c < L5 * H8; c++) o += (size_t)sprintf(text + o, "%s[%.9g, %.9g]", c ? "," : "", ab[2 * c], ab[2 * c + 1]);
        sprintf(text + o, "]");
        snprintf(spans, sizeof spans, "%s", fixture(f ? "spans_moa.json" : "spans_win.json", text));
        free(text);
        snprintf(tokens, sizeof tokens, "%s", test_tmp(f ? "tok_moa.txt" : "tok_win.txt"));
        cJSON *j[64] = {0};
        snprintf(args, sizeof args, "--policy static --static-heads %s:%s", forms[f], paths[f]);
        int n = trace_lines(args, tokens, j, 64);
        CHECK_INT(n, 40);
        double gap;
        check_windows(j, n, tokens, spans, &gap);
        CHECK_MSG(gap < 1e-4, "%s: a log-probability %g from NumPy's", forms[f], gap);
        /* the check can fail: NumPy with the shared window 8 is far from what ran */
        const char *shared = fixture("spans_shared.json", "[" /* filled below */ "]");
        char *w8 = malloc(L5 * H8 * 12);
        o = (size_t)sprintf(w8, "[");
        for (int c = 0; c < L5 * H8; c++) o += (size_t)sprintf(w8 + o, "%s[8, 0]", c ? "," : "");
        sprintf(w8 + o, "]");
        CHECK(test_write_file(shared, w8, (long)strlen(w8)) == 0);
        free(w8);
        cJSON *ref = numpy("windows --model %s --tokens %s --spans %s", test_stories_model(), tokens, shared);
        double far = 0;
        for (int t = 1; ref && t < n; t++)
            far = fmax(far, fabs(cJSON_GetObjectItem(j[t], "logprob")->valuedouble - num_at(ref, "logprob", t)));
        CHECK_MSG(far > 0.05, "%s: the shared window gives the same log-probabilities (%g)", forms[f], far);
        cJSON_Delete(ref);
        for (int t = 0; t < n; t++) cJSON_Delete(j[t]);
    }
}

TEST(headtab_per_head_windows_counted_and_misuse_refused) {
    SKIP_UNLESS_SHARED();
    const char *win = fixture("cnt.tsv", "1\t2\t3\t4\n5\t6\t7\t8\n2\t2\t2\t2\n9\t1\t1\t9\n3\t4\t5\t6\n");
    int st;
    /* eval's keys read: every head of every position of two 32-token sequences, sum min(w, t + 1) / sum (t + 1) */
    char *out = test_runf(&st, "%s eval --model %s --self 2 --seq-len 32 --policy local --static-heads windows:%s --json 2>/dev/null",
                          test_bin(), test_stories_model(), win);
    static const int w[L5][KV4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {2, 2, 2, 2}, {9, 1, 1, 9}, {3, 4, 5, 6}};
    double num = 0, den = 0;
    for (int t = 0; t < 32; t++)
        for (int c = 0; c < L5 * H8; c++) num += fmin(w[c / H8][(c % H8) / 2], t + 1), den += t + 1;
    cJSON *j = st == 0 && out ? cJSON_Parse(out) : NULL;
    cJSON *row = cJSON_GetArrayItem(j, 0);
    CHECK_MSG(row, "%s", out ? out : "");
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "keys_read_frac")), num / den, 1e-12);
    CHECK_MSG(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(row, "knob")), "own windows"), "%s", out);
    cJSON_Delete(j);
    free(out);
    /* --match-budget: the table's own row after static, set beside aha by the keys it reads, none global */
    out = test_runf(&st, "%s eval --model %s --routers engine/routers/stories260K_w8.safetensors --match-budget aha --self 2 "
                         "--seq-len 32 --window 8 --static-heads windows:%s --json 2>/dev/null", test_bin(),
                    test_stories_model(), win);
    j = st == 0 && out ? cJSON_Parse(out) : NULL;
    int n = cJSON_GetArraySize(j);
    row = cJSON_GetArrayItem(j, n - 1);
    CHECK_MSG(n > 2 && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(row, "predictor")), "windows") &&
                  !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, n - 2), "predictor")), "static"),
              "%s", out ? out : "");
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "keys_read_frac")), num / den, 1e-12);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "global_share")), 0, 0);
    cJSON_Delete(j);
    free(out);
    const struct { const char *args; int status; const char *needle; } bad[] = {
        {"generate --prompt hi --steps 3 --policy static --static-heads windows:%s --budget 3", 2, "--budget is for"},
        {"generate --prompt hi --steps 3 --policy static --static-heads moa:%s", 1, "line 1: no column layer (or layer_id)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[2400], cmd[4096];
        snprintf(args, sizeof args, bad[i].args, win);
        snprintf(cmd, sizeof cmd, "%s %s --model %s", test_bin(), args, test_stories_model());
        CHECK_REFUSAL(cmd, bad[i].status, "ahascope ", bad[i].needle, 1);
    }
}
