/* test_tasks_answer.c — `eval --tasks`'s KL and NLL at the forced answer.
 *
 * `eval --tasks`'s statistics at the forced answer:
 * the KL(full || row) per answer token and the NLL of the whole gold answer,
 * at the positions that predict each of its tokens.
 *
 * The per-item values are held to a path of the test's own (prompt and
 * answer fed in one call through the forward pass, where eval feeds the
 * answer after the prompt, continuing its state), and the intervals to a
 * float64 NumPy recount from the per-item values the JSON lists. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_ref.h"
#include "engine/forward.h"
#include "engine/predictors.h"
#include "engine/tasks/tasks.h"
#include "stories.h"
#include "test.h"

/* The policies `--match-budget` tunes θ for: one row each, from the list. */
static int theta_policies(void) {
    int n = 0;
    for (int i = 0; i < PRED_COUNT; i++) n += PRED_INFO[i].thr == PRED_THR_THETA && PRED_INFO[i].policy;
    return n;
}

/* The answer's numbers for one item as this test counts them: mean KL per
 * answer token of a against full attention, the answer's NLL under a and
 * under full attention. The answer's ids are those of "PROMPT ANSWER" after
 * the prompt's own (BOS first). 0, or -1 with e set. */
static int answer_ref(const Model *m, const Tokenizer *tok, const TaskItem *it, const AttnConfig *a, double *kl,
                      double *nll, double *nll_full, Err *e) {
    size_t lp = strlen(it->prompt), la = strlen(it->answer);
    int cap = (int)(4 * (lp + la) + 16), n = 0, got = 0, V = m->c.vocab_size, rc = -1;
    char *text = malloc(lp + la + 2);
    int *ids = malloc((size_t)cap * sizeof *ids);
    float *lf = NULL, *lq = NULL;
    RunState rs = {0};
    if (!text || !ids) goto out;
    snprintf(text, lp + la + 2, "%s %s", it->prompt, it->answer);
    if (tok_encode(tok, it->prompt, lp, 1, 0, ids, cap, &n, e) ||
        tok_encode(tok, text, lp + la + 1, 1, 0, ids, cap, &got, e))
        goto out;
    lf = malloc((size_t)got * V * sizeof *lf), lq = malloc((size_t)got * V * sizeof *lq);
    if (!lf || !lq || fwd_init(&rs, &m->c, got, 1, e)) goto out;
    AttnConfig full = *a;
    full.policy = POLICY_FULL;
    fwd_forward(m, &rs, &full, ids, got, 0, lf, NULL);
    fwd_reset(&rs);
    fwd_forward(m, &rs, a, ids, got, 0, lq, NULL);
    *kl = *nll = *nll_full = 0;
    for (int t = n - 1; t + 1 < got; t++) { /* position t predicts ids[t + 1], an answer token */
        const float *f = lf + (size_t)t * V, *q = lq + (size_t)t * V;
        double zf = 0, zq = 0, mf = f[0], mq = q[0];
        for (int v = 1; v < V; v++) mf = fmax(mf, f[v]), mq = fmax(mq, q[v]);
        for (int v = 0; v < V; v++) zf += exp(f[v] - mf), zq += exp(q[v] - mq);
        double lzf = mf + log(zf), lzq = mq + log(zq), k = 0;
        for (int v = 0; v < V; v++) k += exp(f[v] - lzf) * ((f[v] - lzf) - (q[v] - lzq));
        *kl += k, *nll -= q[ids[t + 1]] - lzq, *nll_full -= f[ids[t + 1]] - lzf;
    }
    *kl /= got - n;
    rc = 0;
out:
    fwd_free(&rs);
    free(text), free(ids), free(lf), free(lq);
    return rc;
}

/* eval --tasks FILE with flags on stories260K: its --json array (NULL on failure). */
static cJSON *tasks_json(const char *file, const char *flags) {
    int st;
    char *o = test_runf(&st, "%s eval --model '%s' --tasks '%s' --threads 1 --json %s 2>/dev/null", test_bin(),
                        test_stories_model(), file, flags);
    cJSON *a = st == 0 ? cJSON_Parse(o) : NULL;
    CHECK_MSG(a != NULL, "eval --tasks %s: exit %d, %s", flags, st, o ? o : "");
    free(o);
    return a;
}

static double item_of(cJSON *row, const char *key, int k) {
    return cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(row, key), k));
}

/* Executed full attention has no KL at the answer (its two passes differ
 * only in the rounding of the profiled one: 1e-12) and the reference's
 * answer NLL to that rounding; a 4-key window, far shorter than the
 * needle's distance, has KL at every item's answer and its NLL moves. Each
 * item's values are the test's own count of the same positions, to float
 * rounding. */
TEST(tasks_eval_answer_kl_zero_under_full_attention_not_under_a_tiny_window) {
    SKIP_UNLESS_SHARED();
    const char *file = test_tmp("answer.jsonl");
    int st, n = 5;
    char *o = test_runf(&st, "%s tasks --task passkey --context 110 --n %d --seed 8 --model '%s' --out '%s' 2>&1",
                        test_bin(), n, test_stories_model(), file);
    CHECK_MSG(st == 0, "tasks: %s", o);
    free(o);
    cJSON *full = tasks_json(file, "--policy full"), *local = tasks_json(file, "--policy local --window 4");
    cJSON *f1 = cJSON_GetArrayItem(full, 1), *f0 = cJSON_GetArrayItem(full, 0), *l1 = cJSON_GetArrayItem(local, 1);
    CHECK(f0 && f1 && l1);
    if (!f0 || !f1 || !l1) { cJSON_Delete(full), cJSON_Delete(local); return; }
    CHECK(boot_ref_num(f0, "kl_answer") == 0);
    CHECK_MSG(fabs(boot_ref_num(f1, "kl_answer")) < 1e-9, "full's answer KL %.3g", boot_ref_num(f1, "kl_answer"));
    /* the profiled pass's rounding moves an answer's NLL by up to 1e-5 nats of some 50 */
    CHECK_NEAR(boot_ref_num(f1, "nll_answer"), boot_ref_num(f0, "nll_answer"), 1e-6 * boot_ref_num(f0, "nll_answer"));
    CHECK(boot_ref_num(l1, "kl_answer_ci_low") > 0.01);
    CHECK(boot_ref_num(l1, "kl_answer_diff_ci_low") == 0 && boot_ref_num(l1, "kl_answer_diff_ci_high") == 0);
    Model m;
    Tokenizer tok;
    TaskSet set = {0};
    Err e;
    if (test_load_stories(&m, &tok, &e) || tasks_read_jsonl(file, &set, &e)) {
        test_fail(__FILE__, __LINE__, "%s", e.msg);
        return;
    }
    CHECK_INT(set.n, n);
    AttnConfig a = aha_defaults();
    a.policy = POLICY_LOCAL, a.window = 4;
    double moved = 0;
    for (int k = 0; k < set.n && k < n; k++) {
        double kl, nll, nll_full;
        if (answer_ref(&m, &tok, &set.item[k], &a, &kl, &nll, &nll_full, &e)) {
            test_fail(__FILE__, __LINE__, "%s", e.msg);
            break;
        }
        CHECK_MSG(fabs(item_of(f1, "kl_answer_per_item", k)) < 1e-9, "item %d: full's answer KL", k);
        CHECK_MSG(item_of(l1, "kl_answer_per_item", k) > 1e-3, "item %d: local's answer KL %.3g", k,
                  item_of(l1, "kl_answer_per_item", k));
        CHECK_MSG(fabs(item_of(l1, "kl_answer_per_item", k) - kl) <= 1e-5 * fmax(1, kl),
                  "item %d KL: %.9g, test's %.9g", k, item_of(l1, "kl_answer_per_item", k), kl);
        CHECK_MSG(fabs(item_of(l1, "nll_answer_per_item", k) - nll) <= 1e-5 * fmax(1, nll), "item %d NLL: %.9g, test's "
                  "%.9g", k, item_of(l1, "nll_answer_per_item", k), nll);
        CHECK_MSG(fabs(item_of(f0, "nll_answer_per_item", k) - nll_full) <= 1e-5 * fmax(1, nll_full), "item %d full "
                  "NLL: %.9g, test's %.9g", k, item_of(f0, "nll_answer_per_item", k), nll_full);
        moved += fabs(nll - nll_full);
    }
    CHECK_MSG(moved > 0.1, "the window moved the answers' NLL by %.3g nats in all", moved);
    tasks_free(&set);
    tok_free(&tok);
    model_free(&m);
    cJSON_Delete(full), cJSON_Delete(local);
}

/* The answer's intervals under --match-budget, recounted by NumPy from each
 * row's per-item lists: kl_answer and nll_answer with their intervals over
 * items and their differences from aha's (the executed policy's row),
 * paired item by item; full attention's answer NLL with its interval. */
TEST(tasks_eval_answer_intervals_match_numpy_recount) {
    SKIP_UNLESS_SHARED();
    const char *file = test_tmp("answer_ci.jsonl");
    int st, n = 7;
    char *o = test_runf(&st, "%s tasks --task passkey --context 110 --n %d --seed 5 --model '%s' --out '%s' 2>&1",
                        test_bin(), n, test_stories_model(), file);
    CHECK_MSG(st == 0, "tasks: %s", o);
    free(o);
    cJSON *a = tasks_json(file, "--routers random:5 --window 16 --match-budget aha");
    int rows = cJSON_GetArraySize(a), want_rows = 5 + theta_policies();
    CHECK_MSG(rows == want_rows, "%d rows, not %d: full, aha, the θ predictors, random, static, local", rows, want_rows);
    if (rows != want_rows) { cJSON_Delete(a); return; }
    static const char *keys[] = {"kl_answer", "nll_answer"};
    cJSON *stats = cJSON_CreateArray(), *s, *aha = cJSON_GetArrayItem(a, 1);
    cJSON_AddItemToArray(stats, s = cJSON_CreateObject());
    cJSON *full_nll = cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "nll_answer_per_item");
    cJSON_AddItemToObject(s, "x", cJSON_Duplicate(full_nll, 1));
    for (int i = 1; i < rows; i++)
        for (int k = 0; k < 2; k++) {
            char list[40];
            snprintf(list, sizeof list, "%s_per_item", keys[k]);
            cJSON *x = cJSON_GetObjectItem(cJSON_GetArrayItem(a, i), list);
            CHECK_MSG(cJSON_GetArraySize(x) == n, "row %d: %s has %d values", i, list, cJSON_GetArraySize(x));
            cJSON_AddItemToArray(stats, s = cJSON_CreateObject());
            cJSON_AddItemToObject(s, "x", cJSON_Duplicate(x, 1));
            cJSON_AddItemToObject(s, "ref", cJSON_Duplicate(cJSON_GetObjectItem(aha, list), 1));
        }
    BootRef *want = calloc((size_t)(1 + 2 * (rows - 1)), sizeof *want);
    if (want && boot_ref_recount(stats, n, want, 1 + 2 * (rows - 1)) == 0) {
        cJSON *f = cJSON_GetArrayItem(a, 0);
        CHECK_NEAR(boot_ref_num(f, "nll_answer"), want[0].mean, 1e-12 * fmax(1, want[0].mean));
        CHECK_NEAR(boot_ref_num(f, "nll_answer_ci_low"), want[0].lo, 1e-12 * fmax(1, want[0].lo));
        CHECK_NEAR(boot_ref_num(f, "nll_answer_ci_high"), want[0].hi, 1e-12 * fmax(1, want[0].hi));
        for (int i = 1; i < rows; i++)
            for (int k = 0; k < 2; k++) {
                const BootRef *w = &want[1 + 2 * (i - 1) + k];
                const char *suffix[] = {"", "_ci_low", "_ci_high", "_diff_ci_low", "_diff_ci_high"};
                double v[] = {w->mean, w->lo, w->hi, w->dlo, w->dhi};
                for (int j = 0; j < 5; j++) {
                    char key[48];
                    snprintf(key, sizeof key, "%s%s", keys[k], suffix[j]);
                    double got = boot_ref_num(cJSON_GetArrayItem(a, i), key);
                    CHECK_MSG(fabs(got - v[j]) <= 1e-12 * fmax(1, fabs(v[j])), "row %d %s: %.17g, numpy %.17g", i, key,
                              got, v[j]);
                }
                if (i == 1) CHECK(w->dlo == 0 && w->dhi == 0); /* aha against itself */
            }
    }
    free(want);
    cJSON_Delete(stats);
    cJSON_Delete(a);
}
