/* test_organism.c — the committed organism scores what app/FINDINGS.md says, on items it never saw.
 *
 * The committed organism (engine/organism/) is what
 * app/FINDINGS.md says it is, on small fixed sets of items it never saw
 * (seed 777; every training file's seed is another): passkey items at six
 * lengths from 77 to 977 tokens, four-key multi-key needle items at 401 and
 * at 1 013 (near its full context) and two-key items at 143, all lengths
 * off the recipe's 21 training lengths, since a model trained on a few
 * lengths can answer at those only. Full attention must answer at least 95%
 * of the passkey items pooled and of the multi-key items pooled (the goal
 * the recipe was written for: 95% on both at the full context), each set at
 * least 90%; an 8-key window, shorter than every needle distance, must fall
 * to chance (a five-digit answer: 1 in 90 000; none right). When these
 * sets were fixed it answered 120 of the 120 passkey items and 59 of the 60
 * multi-key ones (the miss: four keys at 1 013), the local control 2 of 20,
 * and none of any with the window. The local control, which the recipe
 * does not train, is held to the window's chance only: with full attention
 * FINDINGS finds it right at most lengths, not all (161 tokens, this
 * set's, is one it misses). Under the sanitizers (8× slower) one long
 * passkey set of three items stands for them all. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define ORGANISM "engine/organism/organism.bin"

/* The full and local rows' accuracies of `eval --tasks` on n items of
 * `tasks FLAGS` at context, generated with seed; 0, or -1 after a failed
 * check. */
static int organism_scores(const char *flags, int context, int n, int seed, double *full, double *local) {
    char items[1024];
    int st;
    snprintf(items, sizeof items, "%s", test_tmp("items.jsonl"));
    char *o = test_runf(&st, "%s tasks %s --context %d --n %d --seed %d --model %s --out %s 2>&1", test_bin(), flags,
                        context, n, seed, ORGANISM, items);
    CHECK_MSG(st == 0, "tasks: %s", o);
    free(o);
    if (st) return -1;
    /* one thread: its lane has one core, and idle workers waiting on a busy machine took a third of the time */
    o = test_runf(&st, "%s eval --model %s --tasks %s --policy local --window 8 --json --threads 1 2>/dev/null",
                  test_bin(), ORGANISM, items);
    cJSON *j = cJSON_Parse(o ? o : "");
    CHECK_MSG(st == 0 && cJSON_GetArraySize(j) == 2, "eval --tasks: exit %d, %s", st, o ? o : "");
    free(o);
    if (cJSON_GetArraySize(j) != 2) { cJSON_Delete(j); return -1; }
    cJSON *f = cJSON_GetArrayItem(j, 0), *l = cJSON_GetArrayItem(j, 1);
    const char *fp = cJSON_GetStringValue(cJSON_GetObjectItem(f, "predictor"));
    const char *lp = cJSON_GetStringValue(cJSON_GetObjectItem(l, "predictor"));
    CHECK_MSG(fp && !strcmp(fp, "full") && lp && !strcmp(lp, "local"), "rows %s, %s", fp ? fp : "?", lp ? lp : "?");
    *full = cJSON_GetNumberValue(cJSON_GetObjectItem(f, "accuracy"));
    *local = cJSON_GetNumberValue(cJSON_GetObjectItem(l, "accuracy"));
    cJSON_Delete(j);
    return 0;
}

TEST(organism_answers_its_items_and_fails_with_a_short_window) {
    FILE *f = fopen(ORGANISM, "rb");
    if (!f) { test_skip("no " ORGANISM " in this checkout (make organism trains it)"); return; }
    fclose(f);
    /* pool 0: passkey, 1: multi-key needle, -1: the local control (the window's chance only) */
    static const struct { const char *flags; int context, pool; } sets[] = {
        {"--task local", 161, -1},           {"--task passkey", 77, 0},         {"--task passkey", 143, 0},
        {"--task passkey", 233, 0},          {"--task passkey", 401, 0},        {"--task passkey", 613, 0},
        {"--task passkey", 977, 0},          {"--task multikey --keys 2", 143, 1}, {"--task multikey", 401, 1},
        {"--task multikey", 1013, 1}};
    static const char *pool_name[2] = {"passkey", "multi-key needle"};
#ifdef __SANITIZE_ADDRESS__
    /* Under the sanitizers the sets take ten minutes (8× the plain build) and the accuracies are the plain
     * build's to hold: here one long set, a few items, checks that the long path is clean and still right. */
    double full = -1, local = -1;
    if (organism_scores("--task passkey", 977, 3, 777, &full, &local)) return;
    CHECK_MSG(full >= 1 - 1e-9 && local == 0, "passkey at 977: full %.2f, an 8-key window %.2f", full, local);
    (void)pool_name;
    return;
#endif
    double pooled[2] = {0, 0};
    int n_pooled[2] = {0, 0};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        double full = -1, local = -1;
        if (organism_scores(sets[k].flags, sets[k].context, 20, 777, &full, &local)) continue;
        CHECK_MSG(sets[k].pool < 0 || full >= 0.90 - 1e-9, "%s at %d: full attention %.2f, below 0.90", sets[k].flags,
                  sets[k].context, full);
        CHECK_MSG(local == 0, "%s at %d: an 8-key window %.2f, above chance", sets[k].flags, sets[k].context, local);
        if (sets[k].pool >= 0) pooled[sets[k].pool] += full, n_pooled[sets[k].pool]++;
    }
    CHECK_INT(n_pooled[0], 6);
    CHECK_INT(n_pooled[1], 3);
    for (int p = 0; p < 2; p++)
        CHECK_MSG(n_pooled[p] && pooled[p] / n_pooled[p] >= 0.95 - 1e-9, "%s pooled over %d sets: %.3f, below 0.95",
                  pool_name[p], n_pooled[p], n_pooled[p] ? pooled[p] / n_pooled[p] : 0.0);
}
