/* test_organism.c — the committed organism (engine/organism/) is what
 * app/FINDINGS.md says it is, on small fixed sets of items it never saw
 * (seeds apart from every training file's): passkey items at six lengths
 * from 77 to 977 tokens and the local control at 161 (it was trained on
 * items of every length up to 504 and of every third, then every, length
 * up to 1 016; a model trained on a few lengths answers at those only, so
 * lengths off any earlier grid are the ones that tell), answered by full
 * attention at least 90% of the time pooled (108 of 120 passkey items; it
 * scored 94.2% when these sets were fixed, FINDINGS 90-98% on 50 items at
 * each of eight lengths; no set under 85%, the local control 95%), while an
 * 8-key window, shorter than every needle distance, falls to chance (a
 * five-digit answer: 1 in 90 000; none of them right). It does not reach
 * the goal the recipe was written for (95% on passkey and multi-key needle
 * items at the full context of 1 024): FINDINGS says so. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define ORGANISM "engine/organism/organism.bin"

/* The full and local rows' accuracies of `eval --tasks` on n items of kind
 * at context, generated with seed; 0, or -1 after a failed check. */
static int organism_scores(const char *kind, int context, int n, int seed, double *full, double *local) {
    char items[1024];
    int st;
    snprintf(items, sizeof items, "%s", test_tmp(kind));
    char *o = test_runf(&st, "%s tasks --task %s --context %d --n %d --seed %d --model %s --out %s 2>&1", test_bin(),
                        kind, context, n, seed, ORGANISM, items);
    CHECK_MSG(st == 0, "tasks: %s", o);
    free(o);
    if (st) return -1;
    o = test_runf(&st, "%s eval --model %s --tasks %s --policy local --window 8 --json 2>/dev/null", test_bin(),
                  ORGANISM, items);
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
    /* each set at least `least`; the passkey sets pooled at least 90% */
    static const struct { const char *kind; int context; double least; } sets[] = {
        {"local", 161, 0.95},   {"passkey", 77, 0.85},  {"passkey", 143, 0.85}, {"passkey", 233, 0.85},
        {"passkey", 401, 0.85}, {"passkey", 613, 0.85}, {"passkey", 977, 0.85}};
    double pooled = 0;
    int n_pooled = 0;
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        double full = -1, local = -1;
        if (organism_scores(sets[k].kind, sets[k].context, 20, 777, &full, &local)) continue;
        CHECK_MSG(full >= sets[k].least - 1e-9, "%s at %d: full attention %.2f, below %.2f", sets[k].kind,
                  sets[k].context, full, sets[k].least);
        CHECK_MSG(local == 0, "%s at %d: an 8-key window %.2f, above chance", sets[k].kind, sets[k].context, local);
        if (!strcmp(sets[k].kind, "passkey")) pooled += full, n_pooled++;
    }
    CHECK_INT(n_pooled, 6);
    CHECK_MSG(n_pooled && pooled / n_pooled >= 0.90 - 1e-9,
              "passkey pooled over six lengths from 77 to 977 tokens: %.3f, below 0.90",
              n_pooled ? pooled / n_pooled : 0.0);
}
