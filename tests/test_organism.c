/* test_organism.c — the committed organism (engine/organism/) is what
 * app/FINDINGS.md says it is: on a small fixed set of items it has never
 * seen (seeds apart from every training file's), at its full context,
 * full attention answers passkey and multi-key needle items (>= 95%), and
 * a 16-key window, far shorter than the needle distance, falls to chance
 * (a five-digit answer: 1 in 90 000; at most one lucky item allowed). */
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
    o = test_runf(&st, "%s eval --model %s --tasks %s --policy local --window 16 --json 2>/dev/null", test_bin(),
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

TEST(organism_answers_at_full_context_and_fails_with_a_short_window) {
    FILE *f = fopen(ORGANISM, "rb");
    if (!f) { test_skip("no " ORGANISM " in this checkout (make organism trains it)"); return; }
    fclose(f);
    static const char *kinds[] = {"passkey", "multikey"};
    for (int k = 0; k < 2; k++) {
        double full = -1, local = -1;
        if (organism_scores(kinds[k], 1016, 20, 777, &full, &local)) continue;
        CHECK_MSG(full >= 0.95, "%s at 1016: full attention %.2f, below 0.95", kinds[k], full);
        CHECK_MSG(local <= 0.05, "%s at 1016: a 16-key window %.2f, above chance", kinds[k], local);
    }
}
