/* test_calibrate.c — the static head set from recorded oracle rates. */
#include <stdlib.h>
#include <string.h>

#include "test.h"

static char *run(const char *cmd, int *st) { return test_run(cmd, st); }

TEST(calibrate_picks_top_oracle_heads) {
    SKIP_UNLESS_SHARED();
    char db[1024], heads[1024], cmd[4096], model[1024];
    snprintf(db, sizeof db, "%s", test_tmp("cal.db"));
    snprintf(heads, sizeof heads, "%s", test_tmp("heads.txt"));
    snprintf(model, sizeof model, "%s", test_stories_model());
    int st;
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --prompt 'Once upon a time' --steps 60 --window 8 "
                                  "--profile --seed %d", test_bin(), db, model, i + 1);
        free(run(cmd, &st));
        CHECK_INT(st, 0);
    }
    snprintf(cmd, sizeof cmd, "%s record --db %s --model %s --prompt 'x' --steps 10", test_bin(), db, model);
    free(run(cmd, &st)); /* run 3: no oracle values */
    snprintf(cmd, sizeof cmd, "%s calibrate --db %s --run 1 --run 2 --budget 3 --out %s", test_bin(), db, heads);
    char *out = run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "3 of 40 heads"), "%s", out);
    free(out);
    /* the same three heads, recounted independently in SQL */
    snprintf(cmd, sizeof cmd, "%s query --db %s --csv \"SELECT layer || '.' || head FROM decisions d JOIN runs r "
                              "USING(run_id) JOIN tokens t USING(run_id, pos) WHERE run_id IN (1,2) AND t.n_far > 0 "
                              "GROUP BY layer, head ORDER BY AVG(oracle_logit > theta_logit) DESC, layer, head LIMIT 3\"", test_bin(), db);
    char *want = run(cmd, &st);
    char *got = test_read_file(heads, NULL);
    char *line = want ? strchr(want, '\n') : NULL; /* skip the CSV header */
    int n = 0;
    for (char *p = line ? line + 1 : NULL; p && *p; n++) {
        char *end = strstr(p, "\r\n");
        if (!end) break;
        *end = 0;
        char needle[32];
        snprintf(needle, sizeof needle, "\n%s  #", p);
        CHECK_MSG(got && strstr(got, needle), "head %s missing from:\n%s", p, got ? got : "");
        p = end + 2;
    }
    CHECK_INT(n, 3);
    free(want);
    free(got);
    snprintf(cmd, sizeof cmd, "%s generate --model %s --policy static --static-heads %s --steps 12 --prompt Once --ids",
             test_bin(), model, heads);
    free(run(cmd, &st));
    CHECK_INT(st, 0);
    snprintf(cmd, sizeof cmd, "%s calibrate --db %s --run 1 --budget 25%% --out %s", test_bin(), db, heads);
    out = run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "10 of 40"), "%s", out);
    free(out);
    /* what the runs say fails (1); what the command line alone shows is usage (2) */
    const struct { const char *args, *needle; int status; } bad[] = {
        {"--run 3 --budget 2", "no oracle values", 1},
        {"--run 1 --budget 41", "exceeds the 40 heads", 1},
        {"--run 9 --budget 2", "no run 9", 1},
        {"--run 1 --budget 101%", "out of range", 2},
        {"--run 1 --budget 2x", "not a whole number", 2},
        {"--budget 2", "required", 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s calibrate --db %s %s --out %s", test_bin(), db, bad[i].args, heads);
        out = run(cmd, &st);
        CHECK_MSG(st == bad[i].status && strstr(out, bad[i].needle) && !strncmp(out, "ahascope calibrate: ", 20),
                  "%s -> %d %s", bad[i].args, st, out);
        free(out);
    }
}
