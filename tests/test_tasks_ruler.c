/* test_tasks_ruler.c — RULER's tasks (engine/tasks/ruler.c): `tasks --list`,
 * items that fill the context exactly and whose references a Python
 * recount (tests/ruler_ref.py) finds in the prompt text alone, the two
 * metrics against that script's re-implementation of RULER's
 * string_match_all and string_match_part, eval scoring a file by each
 * item's metric, and the refusals.
 *
 * The fixtures are made here: items drawn by task_make under the organism's
 * tokenizer (in the repository) and the shared Llama-2 one, predictions
 * written from their references (perfect, partial, wrong, case changed). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tasks/tasks.h"
#include "tests/tasks_fixture.h"
#include "test.h"

/* Python's lines for a file, or NULL (skipped) without a python3. */
static char *ruler_py(const char *verb, const char *path) {
    const char *py = test_python_numpy();
    if (!py) return NULL;
    int st;
    char *o = test_runf(&st, "'%s' tests/ruler_ref.py %s '%s' 2>&1", py, verb, path);
    CHECK_MSG(st == 0, "ruler_ref.py %s: %s", verb, o ? o : "");
    if (st) { free(o); return NULL; }
    return o;
}


/* References each RULER kind's items hold. */
static int refs_of(TaskKind k) {
    switch (k) {
    case TASK_NIAH_MULTIVALUE: case TASK_NIAH_MULTIQUERY: return 4;
    case TASK_VT: return 5;
    case TASK_CWE: return 10;
    case TASK_FWE: return 3;
    default: return 1;
    }
}

/* One item's checks by the tokenizer that made it: exactly context ids,
 * every run of needle positions decoding to text holding a needle (none
 * for cwe and fwe), the question's first token, and the references in the
 * answer. */
static void check_item(const Tokenizer *tok, const TaskItem *it, int context) {
    int cap = (int)(4 * strlen(it->prompt) + 8), n = 0;
    int *ids = malloc((size_t)cap * sizeof *ids);
    Err e;
    CHECK_MSG(ids && tok_encode(tok, it->prompt, strlen(it->prompt), 1, 0, ids, cap, &n, &e) == 0, "encode");
    CHECK_INT(n, context);
    CHECK_INT(it->n_tokens, context);
    CHECK_INT(it->metric, TASK_METRIC_ALL);
    CHECK_INT(it->n_refs, refs_of(it->kind));
    for (int i = 0; i < it->n_refs; i++) CHECK_MSG(strstr(it->answer, it->refs[i]), "%s: '%s' not in the answer", task_name(it->kind), it->refs[i]);
    int list = it->kind == TASK_CWE || it->kind == TASK_FWE;
    CHECK_MSG(list ? it->n_needle_pos == 0 : it->n_needle_pos > 0, "%s: %d needle positions", task_name(it->kind), it->n_needle_pos);
    int runs = 0;
    for (int a = 0; ids && a < it->n_needle_pos; runs++) {
        int b = a + 1;
        while (b < it->n_needle_pos && it->needle_pos[b] == it->needle_pos[b - 1] + 1) b++;
        char *s = tasks_fixture_decode_span(tok, ids, it->needle_pos[a], it->needle_pos[b - 1] + 1);
        CHECK_MSG(s && runs < it->n_needles && strstr(s, it->needles[runs]), "%s: needle run %d is '%s'",
                  task_name(it->kind), runs, s ? s : "");
        free(s);
        a = b;
    }
    CHECK_INT(runs, it->n_needles);
    if (ids && it->question_pos > 0 && it->question_pos < n) {
        char *q = tasks_fixture_decode_span(tok, ids, it->question_pos, n);
        const char *t = q + strspn(q, " ");
        CHECK_MSG(!strncmp(t, "Which", 5) || !strncmp(t, "Question:", 9), "%s: the question reads '%.40s'",
                  task_name(it->kind), t);
        free(q);
    } else CHECK_MSG(0, "question_pos %d out of the prompt", it->question_pos);
    free(ids);
}

/* Every RULER kind's items at the contexts given, checked, written, then
 * recounted by Python; returns the items made. */
static int make_recount(const Tokenizer *tok, const int *contexts, int n_ctx, int per, const char *file) {
    int made = 0;
    for (int k = 0; k < TASK_COUNT; k++) {
        if (!task_is_ruler((TaskKind)k)) continue;
        for (int c = 0; c < n_ctx; c++) {
            TaskItem items[4];
            int n = 0;
            Err e;
            for (; n < per; n++) {
                TaskSpec spec = {(TaskKind)k, contexts[c], 0, 0, (uint64_t)(20 + c), 0};
                if (task_make(tok, &spec, n, &items[n], &e)) {
                    test_fail(__FILE__, __LINE__, "%s at %d: %s", task_name((TaskKind)k), contexts[c], e.msg);
                    break;
                }
                check_item(tok, &items[n], contexts[c]);
            }
            if (n > 1) CHECK(strcmp(items[0].prompt, items[1].prompt) != 0);
            TaskItem again;
            TaskSpec spec = {(TaskKind)k, contexts[c], 0, 0, (uint64_t)(20 + c), 0};
            if (n > 0 && task_make(tok, &spec, 0, &again, &e) == 0) {
                CHECK_MSG(!strcmp(again.prompt, items[0].prompt), "%s: the same item twice differs", task_name((TaskKind)k));
                task_item_free(&again);
            }
            if (n == per && tasks_write_jsonl(file, items, n, &e) == 0) {
                char *o = ruler_py("recount", file);
                int lines = 0;
                for (char *l = o, *nl; l && *l; l = nl + 1, lines++) {
                    if (!(nl = strchr(l, '\n'))) break;
                    *nl = 0;
                    CHECK_MSG(!strcmp(l, "ok"), "%s at %d, item %d: %s", task_name((TaskKind)k), contexts[c], lines, l);
                }
                if (o) CHECK_INT(lines, n);
                free(o);
            }
            made += n;
            for (int i = 0; i < n; i++) task_item_free(&items[i]);
        }
    }
    return made;
}

TEST(tasks_ruler_items_fill_the_context_and_python_recounts_their_references) {
    Tokenizer tok;
    Err e;
    memset(&tok, 0, sizeof tok);
    if (tok_load(&tok, "engine/organism/tok512.bin", 512, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    static const int ctx[] = {1500, 2203};
    CHECK_INT(make_recount(&tok, ctx, 2, 2, test_tmp("r512.jsonl")), 11 * 2 * 2);
    tok_free(&tok);
}

/* The Llama-2 tokenizer (whole words a token or two): short contexts, and
 * one past 4096 where cwe repeats its words 30 and 3 times. */
TEST(tasks_ruler_items_under_llama2_tokenizer_short_and_past_4096) {
    SKIP_UNLESS_SHARED();
    Tokenizer tok;
    Err e;
    memset(&tok, 0, sizeof tok);
    if (tok_load(&tok, test_shared("models/llama2-tokenizer.bin"), 32000, &e)) {
        test_fail(__FILE__, __LINE__, "%s", e.msg);
        return;
    }
    static const int ctx[] = {800, 4500};
    CHECK_INT(make_recount(&tok, ctx, 2, 1, test_tmp("rl2.jsonl")), 11 * 2);
    tok_free(&tok);
}

/* Predictions made from an item's references: the answer itself, upper
 * case, the references in reverse joined by " and ", the first half of
 * them, one of them with its last character changed, nothing, a wrong
 * sentence, and the answer buried in other text. */
static int predictions(const TaskItem *it, char out[][1024]) {
    int n = 0;
    snprintf(out[n++], 1024, " %s", it->answer);
    snprintf(out[n], 1024, " %s.", it->answer);
    for (char *p = out[n++]; *p; p++) *p = (char)toupper((unsigned char)*p);
    size_t o = 0;
    out[n][0] = 0;
    for (int i = it->n_refs - 1; i >= 0; i--) o += (size_t)snprintf(out[n] + o, 1024 - o, "%s%s", i < it->n_refs - 1 ? " and " : "", it->refs[i]);
    n++;
    o = 0, out[n][0] = 0;
    for (int i = 0; i < (it->n_refs + 1) / 2; i++) o += (size_t)snprintf(out[n] + o, 1024 - o, " %s,", it->refs[i]);
    n++;
    snprintf(out[n], 1024, "%s", it->answer);
    char *hit = strstr(out[n], it->refs[0]);
    if (hit) hit[strlen(it->refs[0]) - 1] ^= 1; /* '7' -> '6', 'a' -> '`': that one reference is gone */
    n++;
    snprintf(out[n++], 1024, "%s", "");
    snprintf(out[n++], 1024, "%s", " I do not know the answer.");
    snprintf(out[n++], 1024, " Well, as the text says: %s, and that is all.", it->answer);
    return n;
}

TEST(tasks_ruler_scores_equal_python_string_match_all_and_part) {
    Tokenizer tok;
    Err e;
    memset(&tok, 0, sizeof tok);
    if (tok_load(&tok, "engine/organism/tok512.bin", 512, &e)) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    cJSON *root = cJSON_CreateObject(), *cases = cJSON_AddArrayToObject(root, "cases");
    double mine[256][2];
    int n = 0;
    for (int k = 0; k < TASK_COUNT; k++) {
        if (!task_is_ruler((TaskKind)k)) continue;
        TaskItem it;
        if (task_make(&tok, &(TaskSpec){(TaskKind)k, 1500, 0, 0, 9, 0}, 0, &it, &e)) {
            test_fail(__FILE__, __LINE__, "%s: %s", task_name((TaskKind)k), e.msg);
            continue;
        }
        char pred[9][1024];
        int np = predictions(&it, pred);
        for (int p = 0; p < np && n < 256; p++, n++) {
            cJSON *c = cJSON_CreateObject(), *refs = cJSON_AddArrayToObject(c, "refs");
            cJSON_AddStringToObject(c, "pred", pred[p]);
            for (int i = 0; i < it.n_refs; i++) cJSON_AddItemToArray(refs, cJSON_CreateString(it.refs[i]));
            cJSON_AddItemToArray(cases, c);
            mine[n][0] = task_score(TASK_METRIC_ALL, pred[p], strlen(pred[p]), it.refs, it.n_refs);
            mine[n][1] = task_score(TASK_METRIC_PART, pred[p], strlen(pred[p]), it.refs, it.n_refs);
            /* what the cases are made to be, known without the script */
            if (p <= 2 || p == 7) CHECK_MSG(mine[n][0] == 1, "%s case %d: all %g", task_name((TaskKind)k), p, mine[n][0]);
            if (p == 5 || p == 6) CHECK_MSG(mine[n][0] == 0 && mine[n][1] == 0, "%s case %d scored", task_name((TaskKind)k), p);
            if (p == 3) CHECK_NEAR(mine[n][0], (double)((it.n_refs + 1) / 2) / it.n_refs, 1e-15);
            if (p == 4) CHECK_NEAR(mine[n][0], (double)(it.n_refs - 1) / it.n_refs, 1e-15);
            if (p == 4) CHECK_INT(mine[n][1], it.n_refs > 1);
        }
        task_item_free(&it);
    }
    static const struct { const char *pred; const char *refs[3]; } hand[] = {
        {"PARIS and Lyonnaise", {"Paris", "lyon", NULL}}, {"ab", {"abc", NULL}}, {"x", {"x", "y", "z"}},
        {"The answer: ZEBRA-QUARTZ", {"zebra-quartz", "zebra-quartz", NULL}}, {"\xc3\x89t\xc3\xa9 abc", {"abc", "ABD", NULL}},
    };
    for (size_t h = 0; h < sizeof hand / sizeof hand[0]; h++, n++) {
        cJSON *c = cJSON_CreateObject(), *refs = cJSON_AddArrayToObject(c, "refs");
        char *r[3];
        int nr = 0;
        for (; nr < 3 && hand[h].refs[nr]; nr++) r[nr] = (char *)hand[h].refs[nr], cJSON_AddItemToArray(refs, cJSON_CreateString(r[nr]));
        cJSON_AddStringToObject(c, "pred", hand[h].pred);
        cJSON_AddItemToArray(cases, c);
        mine[n][0] = task_score(TASK_METRIC_ALL, hand[h].pred, strlen(hand[h].pred), r, nr);
        mine[n][1] = task_score(TASK_METRIC_PART, hand[h].pred, strlen(hand[h].pred), r, nr);
    }
    CHECK_NEAR(mine[n - 5][0], 1, 0);
    CHECK_NEAR(mine[n - 3][0], 1.0 / 3, 1e-15);
    CHECK_NEAR(mine[n - 1][0], 0.5, 0);
    char *text = cJSON_PrintUnformatted(root);
    const char *file = test_tmp("scores.json");
    test_write_file(file, text, (long)strlen(text));
    free(text);
    cJSON_Delete(root);
    char *o = ruler_py("score", file);
    double sum[2] = {0, 0};
    int line = 0;
    for (char *l = o; o && l && *l && line <= n; line++) {
        double a, p;
        CHECK_MSG(sscanf(l, "%lf %lf", &a, &p) == 2, "line %d: '%.40s'", line, l);
        if (line < n) {
            CHECK_MSG(a == mine[line][0] && p == mine[line][1], "case %d: all %.17g part %.17g, Python %.17g %.17g",
                      line, mine[line][0], mine[line][1], a, p);
            sum[0] += mine[line][0], sum[1] += mine[line][1];
        } else {
            CHECK_NEAR(a, sum[0] / n, 1e-12);
            CHECK_NEAR(p, sum[1] / n, 1e-12);
        }
        l = strchr(l, '\n');
        if (l) l++;
    }
    if (o) CHECK_INT(line, n + 1);
    free(o);
    tok_free(&tok);
}

TEST(tasks_ruler_list_names_every_kind_with_its_metric) {
    int st;
    char *o = test_runf(&st, "%s tasks --list", test_bin());
    CHECK_INT(st, 0);
    static const char *ruler[] = {"niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
                                  "niah_multikey_2", "niah_multikey_3", "niah_multivalue", "niah_multiquery",
                                  "vt", "cwe", "fwe"};
    int lines = 0;
    for (const char *l = o; o && *l; lines++) {
        const char *nl = strchr(l, '\n');
        if (!nl) break;
        l = nl + 1;
    }
    CHECK_INT(lines, TASK_COUNT + 2);
    for (size_t i = 0; o && i < sizeof ruler / sizeof ruler[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "\n%-16s all   RULER ", ruler[i]);
        CHECK_MSG(strstr(o, want) != NULL, "no line '%s'", want + 1); /* the first line is passkey: every RULER line follows a newline */
    }
    for (int k = 0; o && k < TASK_COUNT; k++) {
        char want[64];
        snprintf(want, sizeof want, "%-16s %-5s ", task_name((TaskKind)k), task_metric_name(task_metric((TaskKind)k)));
        CHECK_MSG(strstr(o, want) != NULL, "no line '%s'", want);
    }
    CHECK(o && strstr(o, "qa_1") && strstr(o, "not offered"));
    free(o);
}

/* Items of hand-written references on stories260K's own greedy
 * continuation: eval scores each by its metric, its accuracy their mean. */
TEST(tasks_ruler_eval_scores_each_item_by_its_metric) {
    SKIP_UNLESS_SHARED();
    const char *prompt = "Once upon a time, there was a little";
    int st;
    char *g = test_runf(&st, "%s generate --model '%s' --prompt '%s' --temperature 0 --steps 24 2>/dev/null", test_bin(),
                        test_stories_model(), prompt);
    CHECK_MSG(st == 0 && g && !strncmp(g, prompt, strlen(prompt)), "generate: %s", g ? g : "");
    if (st || !g || strncmp(g, prompt, strlen(prompt))) { free(g); return; }
    char w1[64] = "", w2[64] = "", up[64];
    sscanf(g + strlen(prompt), " %63[A-Za-z] %63[A-Za-z]", w1, w2);
    free(g);
    CHECK_MSG(*w1 && *w2, "no two words in the continuation");
    for (size_t i = 0; i <= strlen(w1); i++) up[i] = (char)toupper((unsigned char)w1[i]);
    const char *file = test_tmp("hand_ruler.jsonl");
    FILE *f = fopen(file, "w");
    if (!f) { CHECK(0); return; }
    const char *rows[][3] = {{up, "zebra-quartz", "all"}, {up, "zebra-quartz", "part"}, {"zebra-quartz", NULL, "all"},
                             {w1, w2, "all"}};
    static const double want[] = {0.5, 1, 0, 1};
    for (int i = 0; i < 4; i++) {
        fprintf(f, "{\"prompt\": \"%s\", \"answer\": \"x\", \"answers\": [\"%s\"", prompt, rows[i][0]);
        if (rows[i][1]) fprintf(f, ", \"%s\"", rows[i][1]);
        fprintf(f, "], \"metric\": \"%s\", \"needle_pos\": [1], \"question_pos\": 2}\n", rows[i][2]);
    }
    fclose(f);
    char *out = test_runf(&st, "%s eval --model '%s' --tasks '%s' --policy full --threads 1 --json 2>/dev/null",
                          test_bin(), test_stories_model(), file);
    CHECK_INT(st, 0);
    cJSON *a = cJSON_Parse(out ? out : "");
    cJSON *full = cJSON_GetArrayItem(a, 0), *per = cJSON_GetObjectItem(full, "score_per_item");
    CHECK_MSG(cJSON_GetArraySize(per) == 4, "score_per_item: %s", out ? out : "");
    double sum = 0;
    for (int i = 0; i < 4 && cJSON_GetArraySize(per) == 4; i++) {
        double v = cJSON_GetArrayItem(per, i)->valuedouble;
        CHECK_MSG(v == want[i], "item %d (%s, %s): %g, not %g", i, rows[i][0], rows[i][2], v, want[i]);
        sum += v;
    }
    CHECK_NEAR(cJSON_GetObjectItem(full, "accuracy")->valuedouble, sum / 4, 1e-12);
    CHECK_NEAR(cJSON_GetObjectItem(full, "accuracy")->valuedouble, 0.625, 1e-12);
    cJSON_Delete(a);
    free(out);
}

TEST(tasks_ruler_refusals_name_the_problem) {
    static const struct { const char *args, *needle; int status; } t[] = {
        {"--task cwe --context 300 --n 1", "too short for cwe", 1},
        {"--task fwe --context 40 --n 1", "too short for fwe", 1},
        {"--task niah_single_1 --context 30 --n 1", "too short for niah_single_1", 1},
        {"--task niah_single_1 --context 400 --n 1 --key-letters 2", "--key-letters", 2},
        {"--task vt --context 400 --n 1 --keys 3", "--keys", 2},
        {"--task niah_multikey_1 --context 400 --n 1 --reask 2", "--reask", 2},
        {"--task niah_multivalue --context 1016 --n 1", "at most --context", 2},
        {"--task niah_single_4 --context 400 --n 1", "tasks --list", 2},
    };
    char cmd[2048];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s tasks %s --model engine/organism/organism.bin --out '%s'", test_bin(), t[i].args,
                 test_tmp("refused.jsonl"));
        CHECK_REFUSAL(cmd, t[i].status, "ahascope tasks: ", t[i].needle, 1);
    }
    static const struct { const char *text, *needle; } files[] = {
        {"{\"prompt\": \"a\", \"answer\": \"b\", \"answers\": \"b\", \"needle_pos\": [1], \"question_pos\": 1}\n", "line 1: bad answers"},
        {"{\"prompt\": \"a\", \"answer\": \"b\", \"answers\": [], \"needle_pos\": [1], \"question_pos\": 1}\n", "bad answers"},
        {"{\"prompt\": \"a\", \"answer\": \"b\", \"answers\": [\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\"], "
         "\"needle_pos\": [1], \"question_pos\": 1}\n", "1 to 10 strings"},
        {"{\"prompt\": \"a\", \"answer\": \"b\", \"answers\": [\"\"], \"needle_pos\": [1], \"question_pos\": 1}\n", "answers holds"},
        {"{\"prompt\": \"a\", \"answer\": \"b\", \"metric\": \"fuzzy\", \"needle_pos\": [1], \"question_pos\": 1}\n", "bad metric"},
    };
    const char *bad = test_tmp("bad_ruler.jsonl");
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        test_write_file(bad, files[i].text, (long)strlen(files[i].text));
        snprintf(cmd, sizeof cmd, "%s eval --model engine/organism/organism.bin --tasks '%s' --policy full", test_bin(), bad);
        CHECK_REFUSAL(cmd, 1, "ahascope eval: ", files[i].needle, 1);
    }
}
