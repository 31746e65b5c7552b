/* test_headscore.c — calibrate --method's head scores: the row pieces on
 * textbook rows, then every score on stories260K recounted by
 * tests/headscore_ref.py's float64 forward pass, and the table's forms. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_forced.h"
#include "engine/headscore.h"
#include "stories.h"
#include "test.h"

TEST(headscore_row_pieces_textbook_values) {
    const float w[5] = {0.1f, 0.3f, 0.3f, 0.2f, 0.1f};
    CHECK_INT(headscore_top_key(w, 5), 1); /* the first largest, as argmax */
    const int ids[5] = {1, 7, 9, 7, 4};
    const uint8_t needle[5] = {0, 1, 1, 1, 0};
    CHECK_NEAR(headscore_retrieval_step(w, 5, ids, needle, 3, 7), 1.0 / 3, 1e-12);
    CHECK_NEAR(headscore_retrieval_step(w, 5, ids, needle, 3, 9), 0.0, 0); /* top key holds 7, not 9 */
    const uint8_t far[5] = {1, 1, 0, 0, 0};
    CHECK_NEAR(headscore_retrieval_step(w, 5, ids, far, 2, 7), 0.5, 1e-12);
    CHECK_NEAR(headscore_mass_on(w, 5, needle), 0.8, 1e-6);
    double echo, ind;
    headscore_echo_induction(w, 4, 3, &echo, &ind);
    CHECK_NEAR(echo, 0.3, 1e-7);
    CHECK_NEAR(ind, 0.3, 1e-7);
    /* the area: uniform weights give (n + 1) / 2n, all on the first key 1, all on the last 1/n */
    float u[4] = {0.25f, 0.25f, 0.25f, 0.25f}, first[4] = {1, 0, 0, 0}, last[4] = {0, 0, 0, 1};
    CHECK_NEAR(headscore_cum_area(u, 4), 5.0 / 8, 1e-7);
    CHECK_NEAR(headscore_cum_area(first, 4), 1.0, 1e-7);
    CHECK_NEAR(headscore_cum_area(last, 4), 0.25, 1e-7);
}

TEST(headscore_rope_undone_and_groups_reduced) {
    /* a rotation scaled by 2 (an attention factor) applied and undone, both pair layouts */
    const float cs[2] = {2 * cosf(0.7f), 2 * cosf(-1.9f)}, sn[2] = {2 * sinf(0.7f), 2 * sinf(-1.9f)};
    for (int half = 0; half < 2; half++) {
        float v[4] = {1, -2, 3, 0.5f}, o[4];
        memcpy(o, v, sizeof v);
        headscore_rope(v, 4, half, cs, sn, 0);
        CHECK(fabsf(v[0] - o[0]) > 0.1f);
        headscore_rope(v, 4, half, cs, sn, 1);
        for (int j = 0; j < 4; j++) CHECK_NEAR(v[j], o[j], 1e-5);
    }
    HeadScores s;
    Err e;
    CHECK_INT(headscore_init(&s, 1, 4, 2, &e), 0);
    CHECK_INT(headscore_init(&s, 1, 4, 3, &e), -1); /* 4 heads do not group over 3 */
    CHECK_INT(headscore_init(&s, 1, 4, 2, &e), 0);
    double *a = headscore_unit(&s, &e), *b = headscore_unit(&s, &e);
    CHECK(a && b);
    if (a && b) {
        a = s.v; /* b may have moved the rows */
        a[0] = 0.2, a[1] = 0.6, a[2] = 0.1, a[3] = 0.1;
        s.v[4] = 0.4, s.v[5] = 0.2, s.v[6] = 0.3, s.v[7] = 0.1;
        CHECK_NEAR(headscore_mean(&s, 0, 1), 0.4, 1e-12);
        CHECK_NEAR(headscore_kv(&s, 0, 0), 0.4, 1e-12); /* max of 0.3 and 0.4 */
        s.kv_mean = 1;
        CHECK_NEAR(headscore_kv(&s, 0, 0), 0.35, 1e-12);
        CHECK_NEAR(headscore_kv(&s, 0, 1), 0.15, 1e-12);
    }
    headscore_free(&s);
}

/* The fixture items: two passkey items from `tasks`, and for retrieval one
 * story whose second telling the model copies from the first, its needle
 * the whole prompt but BOS (what a 260K-parameter model copies at all). */
static const char *STORY = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
                           "One day, Lily saw a big red ball. Once upon a time, there was a little girl named Lily. "
                           "She loved to";

static const char *story_items(void) {
    Model m;
    Tokenizer tok;
    Err e;
    static char path[1024];
    int ids[256], n = 0;
    if (test_load_stories(&m, &tok, &e)) {
        model_free(&m);
        return NULL;
    }
    int bad = tok_encode(&tok, STORY, strlen(STORY), 1, 0, ids, 256, &n, &e);
    tok_free(&tok);
    model_free(&m);
    if (bad) return NULL;
    char line[4096];
    int o = snprintf(line, sizeof line, "{\"task\": \"passkey\", \"prompt\": \"%s\", \"answer\": \"play\", \"n_tokens\": %d, "
                     "\"question_pos\": %d, \"needle_pos\": [", STORY, n, n - 20);
    for (int i = 1; i < n; i++) o += snprintf(line + o, sizeof line - o, "%s%d", i > 1 ? ", " : "", i);
    snprintf(line + o, sizeof line - o, "]}\n");
    snprintf(path, sizeof path, "%s", test_tmp("story.jsonl"));
    return test_write_file(path, line, (long)strlen(line)) ? NULL : path;
}

static const char *passkey_items(void) {
    static char path[1024];
    int st;
    snprintf(path, sizeof path, "%s", test_tmp("pk.jsonl"));
    free(test_runf(&st, "%s tasks --task passkey --context 96 --n 2 --model %s --out %s", test_bin(), test_stories_model(), path));
    return st == 0 ? path : NULL;
}

/* Run calibrate --method on items (NULL: none) with extra flags, then the
 * reference on the table it wrote, with the same items and flags. */
static void recount(const char *method, const char *items, const char *extra, double tol) {
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    char table[1024];
    int st;
    snprintf(table, sizeof table, "%s", test_tmp("heads.tsv"));
    char *out = test_runf(&st, "%s calibrate --method %s --model %s %s%s %s --out %s 2>&1", test_bin(), method,
                          test_stories_model(), items ? "--data " : "", items ? items : "", extra, table);
    CHECK_MSG(st == 0 && strstr(out, "5 layers x 8 heads"), "calibrate --method %s: %s", method, out ? out : "");
    free(out);
    out = test_runf(&st, "'%s' tests/headscore_ref.py --bin %s --model %s --method %s --table %s --tol %g %s%s %s 2>&1",
                    py, test_bin(), test_stories_model(), method, table, tol, items ? "--items " : "", items ? items : "",
                    extra);
    CHECK_MSG(st == 0, "%s: the reference disagrees:\n%s", method, out ? out : "");
    const char *nz = out ? strstr(out, "nonzero ") : NULL;
    CHECK_MSG(nz && atoi(nz + 8) > 0, "%s: every score is 0, so the recount shows nothing:\n%s", method, out ? out : "");
    free(out);
}

TEST(headscore_retrieval_matches_numpy_recount) {
    SKIP_UNLESS_SHARED();
    const char *items = story_items();
    CHECK(items);
    /* hits are exact events: only the table's six decimals differ */
    if (items) recount("retrieval", items, "--gen 16", 1e-6);
}

TEST(headscore_needle_weight_matches_numpy_recount) {
    SKIP_UNLESS_SHARED();
    const char *items = passkey_items();
    CHECK(items);
    if (items) recount("needle-weight", items, "", 1e-4); /* float32 softmax rows against float64 */
}

TEST(headscore_induction_matches_numpy_recount) {
    SKIP_UNLESS_SHARED();
    recount("induction", NULL, "--sequences 3 --period 20 --seed 7", 1e-4);
}

TEST(headscore_duo_fast_matches_numpy_recount) {
    SKIP_UNLESS_SHARED();
    const char *items = passkey_items();
    CHECK(items);
    if (items) recount("duo-fast", items, "--duo-len 300", 1e-4);
}

static double table_cell(const char *text, int r, int col);

/* The items' training sequences as duo-train encodes them, a line each:
 * where the answer starts, then the ids; NULL when they cannot be made. */
static const char *duo_sequences(const char *items) {
    static char path[1024];
    Model m;
    Tokenizer tok;
    Err e;
    EvalData d;
    if (test_load_stories(&m, &tok, &e)) { model_free(&m); return NULL; }
    int bad = eval_data_items(&d, &tok, items, m.c.seq_len, &e);
    snprintf(path, sizeof path, "%s", test_tmp("duo_seqs.txt"));
    FILE *f = bad ? NULL : fopen(path, "w");
    for (int i = 0; f && i < d.n; i++) {
        fprintf(f, "%d", d.answer_from[i]);
        for (int k = 0; k < d.len[i]; k++) fprintf(f, " %d", d.seq[i][k]);
        fputc('\n', f);
    }
    if (f) fclose(f);
    eval_data_free(&d), tok_free(&tok), model_free(&m);
    return f ? path : NULL;
}

/* Three full-batch steps at a rate large enough for the gates to part:
 * the table against tests/duo_ref.py's gates, whose gradient is one-sided
 * differences of a float64 forward pass (the engine's is the backward). */
TEST(headscore_duo_train_matches_numpy_recount) {
    SKIP_UNLESS_SHARED();
    const char *py = test_python_numpy();
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return; }
    const char *items = passkey_items(), *seqs = items ? duo_sequences(items) : NULL;
    CHECK(items && seqs);
    if (!seqs) return;
    char table[1024];
    int st;
    const char *set = "--sink 2 --recent 8 --steps 3";
    snprintf(table, sizeof table, "%s", test_tmp("duo_train.tsv"));
    char *out = test_runf(&st, "%s calibrate --method duo-train --model %s --data %s %s --batch 2 --lr 0.2 --lambda 0.01 "
                          "--out %s 2>&1", test_bin(), test_stories_model(), items, set, table);
    CHECK_MSG(st == 0 && strstr(out, "5 layers x 8 heads over 2 items"), "calibrate --method duo-train: %s", out ? out : "");
    free(out);
    out = test_runf(&st, "'%s' tests/duo_ref.py --model %s --seqs %s --table %s %s --lr 0.2 --lam 0.01 --tol 2e-5 2>&1", py,
                    test_stories_model(), seqs, table, set);
    CHECK_MSG(st == 0, "duo-train: the reference disagrees:\n%s", out ? out : "");
    const char *sp = out ? strstr(out, "spread ") : NULL;
    CHECK_MSG(sp && atof(sp + 7) > 0.05, "duo-train: the gates did not part, so the recount shows little:\n%s", out ? out : "");
    free(out);
    /* the same run as DuoAttention's table: its values the KV scores, a table --static-heads duo: cuts */
    char duo[1024];
    snprintf(duo, sizeof duo, "%s", test_tmp("duo_train_duo.tsv"));
    free(test_runf(&st, "%s calibrate --method duo-train --model %s --data %s %s --batch 2 --lr 0.2 --lambda 0.01 "
                   "--format duo --out %s", test_bin(), test_stories_model(), items, set, duo));
    CHECK_INT(st, 0);
    char *t = test_read_file(table, NULL), *d = test_read_file(duo, NULL);
    const char *row = d ? strchr(d, '\n') : NULL;
    CHECK(t && row);
    for (int l = 0; t && row && l < 5; l++, row = strchr(row, '\n'))
        for (int k = 0; k < 4; k++) {
            char *end;
            double v = strtod(row + 1, &end);
            CHECK_NEAR(v, table_cell(t, l * 8 + 2 * k, 4), 1e-6);
            row = end;
        }
    free(t), free(d);
    free(test_runf(&st, "%s generate --model %s --prompt Once --steps 8 --policy static --static-heads duo:%s --budget 4",
                   test_bin(), test_stories_model(), duo));
    CHECK_INT(st, 0);
}

/* The value of column col (0-based) of table row r (header skipped). */
static double table_cell(const char *text, int r, int col) {
    const char *p = strstr(text, "kv_score");
    for (int i = 0; p && i <= r; i++) p = strchr(p, '\n'), p = p ? p + 1 : NULL;
    for (int c = 0; p && c < col; c++) p = strchr(p, '\t'), p = p ? p + 1 : NULL;
    return p ? atof(p) : NAN;
}

/* KV head k of layer l's score in a --format heads table of n_kv KV heads
 * (its first query head's row; query heads per KV head g). */
static double kv_cell(const char *text, int l, int k, int n_heads, int g) { return table_cell(text, l * n_heads + k * g, 4); }

/* On the organism (4 layers x 4 heads, no groups), whose copying heads
 * calibrate --method retrieval finds in layer 2: duo-train's highest gate
 * is a head retrieval scores at least half its best, and most gates fall
 * to 0 (the streaming branch serves them). */
TEST(headscore_duo_train_finds_a_retrieval_head_of_the_organism) {
    const char *org = "engine/organism/organism.bin";
    char items[1024], duo[1024], ret[1024];
    int st;
    snprintf(items, sizeof items, "%s", test_tmp("org_pk.jsonl"));
    snprintf(duo, sizeof duo, "%s", test_tmp("org_duo.tsv"));
    snprintf(ret, sizeof ret, "%s", test_tmp("org_ret.tsv"));
    free(test_runf(&st, "%s tasks --task passkey --context 120 --n 8 --seed 5 --model %s --out %s", test_bin(), org, items));
    CHECK_INT(st, 0);
    char *o = test_runf(&st, "%s calibrate --method duo-train --model %s --data %s --sink 4 --recent 16 --steps 40 --batch 2 "
                        "--lr 0.05 --out %s 2>&1", test_bin(), org, items, duo);
    CHECK_MSG(st == 0, "duo-train: %s", o ? o : "");
    free(o);
    free(test_runf(&st, "%s calibrate --method retrieval --gen 6 --model %s --data %s --out %s", test_bin(), org, items, ret));
    CHECK_INT(st, 0);
    char *d = test_read_file(duo, NULL), *r = test_read_file(ret, NULL);
    CHECK(d && r);
    if (d && r) {
        int bl = 0, bk = 0, low = 0;
        double best_ret = 0;
        for (int l = 0; l < 4; l++)
            for (int k = 0; k < 4; k++) {
                if (kv_cell(d, l, k, 4, 1) > kv_cell(d, bl, bk, 4, 1)) bl = l, bk = k;
                low += kv_cell(d, l, k, 4, 1) < 0.1;
                if (kv_cell(r, l, k, 4, 1) > best_ret) best_ret = kv_cell(r, l, k, 4, 1);
            }
        CHECK_MSG(best_ret > 0.1 && kv_cell(r, bl, bk, 4, 1) >= 0.5 * best_ret,
                  "duo-train's highest gate L%d H%d (%.3f) has retrieval score %.3f, the best %.3f", bl, bk,
                  kv_cell(d, bl, bk, 4, 1), kv_cell(r, bl, bk, 4, 1), best_ret);
        CHECK_MSG(low >= 8, "only %d of 16 gates below 0.1: the penalty parts nothing", low);
    }
    free(d), free(r);
}

TEST(headscore_duo_and_json_forms_agree_with_the_table) {
    SKIP_UNLESS_SHARED();
    const char *items = passkey_items();
    CHECK(items);
    if (!items) return;
    char tsv[1024], duo[1024], json[1024];
    snprintf(tsv, sizeof tsv, "%s", test_tmp("nw.tsv"));
    snprintf(duo, sizeof duo, "%s", test_tmp("nw_duo.tsv"));
    snprintf(json, sizeof json, "%s", test_tmp("nw.json"));
    const char *forms[][2] = {{tsv, ""}, {duo, "--format duo"}, {json, "--format json"}};
    int st;
    for (int i = 0; i < 3; i++) {
        free(test_runf(&st, "%s calibrate --method needle-weight --model %s --data %s --out %s %s", test_bin(),
                       test_stories_model(), items, forms[i][0], forms[i][1]));
        CHECK_INT(st, 0);
    }
    char *t = test_read_file(tsv, NULL), *d = test_read_file(duo, NULL);
    cJSON *j = test_read_json(json);
    CHECK(t && d && j);
    if (t && d) {
        /* duo row l, value k is KV head k's score: query heads 2k and 2k + 1 of stories260K's pairs */
        const char *row = strchr(d, '\n') + 1;
        for (int l = 0; l < 5; l++, row = strchr(row, '\n') + 1)
            for (int k = 0; k < 4; k++) {
                char *end;
                const char *p = row;
                for (int c = 0; c < k; c++) p = strchr(p, '\t') + 1;
                CHECK_NEAR(strtod(p, &end), table_cell(t, l * 8 + 2 * k, 4), 1e-6);
            }
    }
    /* json: "L-H" keys, a value per item, their mean the table's score */
    CHECK_INT(cJSON_GetArraySize(j), 40);
    for (int l = 0; t && j && l < 5; l++)
        for (int h = 0; h < 8; h++) {
            char key[32];
            snprintf(key, sizeof key, "%d-%d", l, h);
            cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
            CHECK_MSG(cJSON_GetArraySize(v) == 2, "%s: not a list of 2", key);
            if (cJSON_GetArraySize(v) != 2) continue;
            double mean = (cJSON_GetArrayItem(v, 0)->valuedouble + cJSON_GetArrayItem(v, 1)->valuedouble) / 2;
            CHECK_NEAR(mean, table_cell(t, l * 8 + h, 3), 2e-6);
        }
    free(t), free(d);
    cJSON_Delete(j);
    /* the duo form is what --static-heads duo: reads */
    free(test_runf(&st, "%s generate --model %s --prompt Once --steps 8 --policy static --static-heads duo:%s --budget 4",
                   test_bin(), test_stories_model(), duo));
    CHECK_INT(st, 0);
}

TEST(headscore_refusals) {
    SKIP_UNLESS_SHARED();
    char cmd[4096], bad_items[1024];
    snprintf(bad_items, sizeof bad_items, "%s", test_tmp("bad_n.jsonl"));
    const char *line = "{\"prompt\": \"Once upon a time\", \"answer\": \"x\", \"n_tokens\": 40, \"needle_pos\": [1], "
                       "\"question_pos\": 2}\n";
    test_write_file(bad_items, line, (long)strlen(line));
    const struct { const char *args; int status; const char *needle; } bad[] = {
        {"--method duo-train --data %s --recent 0", 1, "--recent must be at least 1"},
        {"--method retrieval --data x --steps 3", 2, "are duo-train's"},
        {"--method retrieval", 2, "needs --data ITEMS"},
        {"--method induction --data x", 2, "no --data"},
        {"--method retrieval --data x --db y", 2, "no --db, --run or --budget"},
        {"--method fast --data x", 2, "--method must be"},
        {"--method retrieval --data /nonexistent.jsonl", 1, "/nonexistent.jsonl"},
        {"--method needle-weight --data %s", 1, "not its n_tokens 40"},
        {"--method induction --period 300", 1, "exceed the context"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, bad[i].args, bad_items);
        snprintf(cmd, sizeof cmd, "%s calibrate --model %s %s --out %s", test_bin(), test_stories_model(), args,
                 test_tmp("never.tsv"));
        CHECK_REFUSAL(cmd, bad[i].status, "ahascope calibrate: ", bad[i].needle, 1);
    }
    snprintf(cmd, sizeof cmd, "%s calibrate --db x --run 1 --format json --out %s", test_bin(), test_tmp("never.json"));
    CHECK_REFUSAL(cmd, 2, "ahascope calibrate: ", "--format json is for --method", 1);
    snprintf(cmd, sizeof cmd, "%s calibrate --db x --run 1 --budget 2 --data y --out %s", test_bin(), test_tmp("never.txt"));
    CHECK_REFUSAL(cmd, 2, "ahascope calibrate: ", "are for --method", 1);
}
