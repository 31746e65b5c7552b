/* test_router_meta.c — a router file's τ is the one applied unless `--tau` is given; a foreign window is said.
 *
 * A router file's metadata at work: its τ is the one
 * applied and recorded unless --tau is given, and a window other than the
 * one it was trained for is said on stderr. */
#include <stdlib.h>
#include <string.h>

#include "engine/routers.h"
#include "test.h"


/* Random routers for stories260K saved with metadata window 8, tau 0.7. */
static const char *routers_w8_tau07(void) {
    static char path[1024];
    snprintf(path, sizeof path, "%s", test_tmp("w8_tau07.safetensors"));
    Routers r = {0};
    Err e;
    const char *keys[] = {"window", "tau"}, *vals[] = {"8", "0.7"};
    CHECK(router_random(&r, 5, 8, 64, 5, &e) == 0);
    CHECK(router_save(&r, path, keys, vals, 2, &e) == 0);
    router_free(&r);
    return path;
}

/* The single value of a query (first data line of --csv), or "" */
static char *one(const char *db, const char *sql) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s query --db %s --csv \"%s\"", test_bin(), db, sql);
    int st;
    char *out = test_run(cmd, &st);
    char *nl = out ? strchr(out, '\n') : NULL;
    if (!nl) { free(out); return strdup(""); }
    memmove(out, nl + 1, strlen(nl + 1) + 1);
    out[strcspn(out, "\r\n")] = 0;
    return out;
}

/* Record with extra flags into a fresh db; returns stderr+stdout, status in *st. */
static char *record(const char *db, const char *flags, int *st) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "rm -f %s; %s record --db %s --model %s --prompt 'Once upon a time' --steps 24 "
                              "--temperature 0 --profile %s 2>&1 >/dev/null", db, test_bin(), db, test_stories_model(), flags);
    return test_run(cmd, st);
}

TEST(router_file_tau_is_applied_and_recorded) {
    SKIP_UNLESS_SHARED();
    const char *rt = routers_w8_tau07(), *db = test_tmp("tau.db");
    char flags[1200];
    int st;
    snprintf(flags, sizeof flags, "--routers %s", rt);
    char *err = record(db, flags, &st);
    CHECK_MSG(st == 0 && err[0] == 0, "status %d: %s", st, err); /* window 8 from the file: no warning */
    free(err);
    char *v = one(db, "SELECT printf('%.3f %d', tau, window) FROM runs");
    CHECK_MSG(!strcmp(v, "0.700 8"), "runs: %s", v);
    free(v);
    /* the gates follow 0.7, and some scores lie between 0.5 and 0.7, so 0.5 would have differed */
    v = one(db, "SELECT SUM(gate != (score > 0.7)), SUM(score > 0.5 AND score <= 0.7) > 0 FROM decisions");
    CHECK_MSG(!strcmp(v, "0,1"), "gates against tau 0.7: %s", v);
    free(v);
    snprintf(flags, sizeof flags, "--routers %s --tau 0.3", rt); /* --tau wins */
    free(record(db, flags, &st));
    v = one(db, "SELECT printf('%.3f', tau) || ' ' || (SELECT SUM(gate != (score > 0.3)) FROM decisions) FROM runs");
    CHECK_MSG(st == 0 && !strcmp(v, "0.300 0"), "runs: %s", v);
    free(v);
}

TEST(router_window_mismatch_warns) {
    SKIP_UNLESS_SHARED();
    const char *rt = routers_w8_tau07(), *db = test_tmp("warn.db");
    char flags[1200], want[1200], cmd[4096];
    int st;
    snprintf(flags, sizeof flags, "--routers %s --window 16", rt);
    char *err = record(db, flags, &st);
    snprintf(want, sizeof want, "ahascope record: warning: %s was trained for window 8, used here at window 16\n", rt);
    CHECK_MSG(st == 0 && !strcmp(err, want), "status %d: %s", st, err); /* one line, and the run goes on */
    free(err);
    char *v = one(db, "SELECT status, window FROM runs");
    CHECK_MSG(!strcmp(v, "done,16"), "%s", v);
    free(v);
    /* eval says it too; sweep once per window that differs, and applies the file's τ */
    snprintf(cmd, sizeof cmd, "%s eval --model %s --routers %s --window 32 --self 1 --seq-len 16 2>&1 >/dev/null",
             test_bin(), test_stories_model(), rt);
    err = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(err, "ahascope eval: warning:") && strstr(err, "used here at window 32"), "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd, "rm -f %s; %s sweep --model %s --policy aha --routers %s --window 8,16 --self 1 "
                              "--seq-len 16 --db %s 2>&1 >/dev/null", db, test_bin(), test_stories_model(), rt, db);
    err = test_run(cmd, &st);
    const char *w16 = strstr(err, "used here at window 16");
    CHECK_MSG(st == 0 && w16 && !strstr(err, "at window 8\n") && !strstr(w16 + 1, "warning"), "%s", err);
    free(err);
    v = one(db, "SELECT group_concat(printf('%.3f', tau)) FROM evals");
    CHECK_MSG(!strcmp(v, "\"0.700,0.700\""), "evals tau: %s", v);
    free(v);
}
