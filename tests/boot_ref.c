/* boot_ref.c — eval's intervals recounted by tests/bootstrap_ref.py (boot_ref.h). */
#include "boot_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stats.h"
#include "test.h"

double boot_ref_num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int boot_ref_recount(const cJSON *stats, int n, BootRef *out, int count) {
    const char *py = test_python_numpy(), *in = test_tmp("bootstrap_ref.json");
    if (!py) { test_skip("no python3 with numpy (AHASCOPE_PYTHON)"); return 1; }
    cJSON *j = cJSON_CreateObject(), *idx = cJSON_AddArrayToObject(j, "idx");
    cJSON_AddNumberToObject(j, "n", n);
    cJSON_AddItemToObject(j, "stats", cJSON_Duplicate(stats, 1));
    StatsRng g = stats_rng(STATS_BOOT_SEED);
    for (int b = 0; b < STATS_BOOT_B; b++)
        for (int k = 0; k < n; k++)
            cJSON_AddItemToArray(idx, cJSON_CreateNumber((double)stats_rng_below(&g, (uint64_t)n)));
    char *txt = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    int wrote = txt && test_write_file(in, txt, (long)strlen(txt)) == 0;
    free(txt);
    CHECK_MSG(wrote, "cannot write %s", in);
    if (!wrote) return -1;
    int st;
    char *o = test_runf(&st, "'%s' tests/bootstrap_ref.py '%s' 2>&1", py, in), *p = o;
    CHECK_MSG(st == 0 && o, "bootstrap_ref.py: %s", o ? o : "");
    int got = 0;
    for (; st == 0 && p && got < count; got++) { /* five numbers a line */
        double v[5];
        int k;
        for (k = 0; k < 5; k++) {
            char *end;
            v[k] = strtod(p, &end);
            if (end == p) break;
            p = end;
        }
        if (k < 5) break;
        out[got] = (BootRef){v[0], v[1], v[2], v[3], v[4]};
    }
    CHECK_MSG(got == count, "bootstrap_ref.py gave %d of %d lines: %s", got, count, o ? o : "");
    free(o);
    return st == 0 && got == count ? 0 : -1;
}
