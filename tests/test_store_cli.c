/* test_store_cli.c — the database commands as users run them: kill -9, a reader beside a writer, outputs.
 *
 * The database commands as users run them: kill -9 at
 * random moments, a reader beside a recording writer, read-only query,
 * bad files, --help, and the contracts of their outputs. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/sha256.h"
#include "app/bench/bench.h"
#include "app/version.h"
#include "store/store.h"
#include "test.h"
#include "tests/store_fixture.h"

static char *run(const char *fmt, int *status, ...) __attribute__((format(printf, 1, 3)));
static char *run(const char *fmt, int *status, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, status);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return test_run(cmd, status);
}

/* A random-weight model big enough that a 1024-step run lasts a while,
 * with the stories260K tokenizer (vocab 512). Made once per test run. */
static const char *long_model(void) {
    static char path[1100];
    if (path[0]) return path;
    snprintf(path, sizeof path, "%s", test_tmp("long.bin"));
    int st;
    /* --save-routers makes bench write and time nothing (the same weights, seed 1234): --save
     * alone also ran the throughput benchmark, over a minute of the sanitizer build */
    free(run("%s bench --dims 192,512,4,4,4,512,1024 --save %s --save-routers %s.routers", &st, test_bin(), path, path));
    CHECK_INT(st, 0);
    return path;
}

static void remove_db(const char *db) {
    char p[1100];
    unlink(db);
    snprintf(p, sizeof p, "%s-wal", db), unlink(p);
    snprintf(p, sizeof p, "%s-shm", db), unlink(p);
}

/* Start `ahascope record` into db in the background, stderr to errpath. */
static pid_t spawn_recorder(const char *db, const char *errpath, int steps) {
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    const char *model = long_model(); /* made by the parent, once */
    char tok[1024];
    snprintf(tok, sizeof tok, "%s", test_stories_tokenizer());
    unlink(errpath); /* the parent polls it: no stale lines from the last recorder */
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 1);
        execl(test_bin(), test_bin(), "record", "--db", db, "--model", model, "--tokenizer", tok, "--prompt", "Once upon a time", "--steps", steps_s,
              "--profile", "--threads", "1", "--progress", "--seed", "3", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Last "committed pos P" the recorder printed before it died (-1: none). */
static int last_committed(const char *errpath) {
    char *s = test_read_file(errpath, NULL);
    int last = -1;
    for (char *p = s; p && (p = strstr(p, "committed pos ")); p += 14) last = atoi(p + 14);
    free(s);
    return last;
}

static long long scalar(sqlite3 *h, const char *sql, int64_t run_id) {
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) return -2;
    sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int integrity_ok(const char *db) {
    sqlite3 *h;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    int ok = rc == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
    if (!ok) fprintf(stderr, "integrity_check: %s\n", rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0)
                                                                        : sqlite3_errmsg(h));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return ok;
}

/* Ten kills: each a fresh run killed at a random moment, every one checked;
 * twenty took 110 s of the sanitizer build and a kill more adds no new kind
 * of moment. Two land before the first commit on purpose, and at least six
 * of the ten must land mid-run (the 60% the twenty asked for). */
TEST(store_cli_kill9_ten_times) {
    SKIP_UNLESS_SHARED();
    char db[1024], err[1024]; /* test_tmp's buffers rotate; the loop outlives them */
    snprintf(db, sizeof db, "%s", test_tmp("kill.db"));
    snprintf(err, sizeof err, "%s", test_tmp("kill.err"));
    remove_db(db);
    srand((unsigned)time(NULL));
    /* How long a whole run lasts after its first commit, on this machine and
     * build: the kills land uniformly within 80% of it. A fixed 0.5 s window
     * let half the kills of a fast machine land after the run had ended. */
    char probe_db[1024];
    snprintf(probe_db, sizeof probe_db, "%s", test_tmp("kill-probe.db"));
    remove_db(probe_db);
    pid_t probe = spawn_recorder(probe_db, err, 1024);
    for (int w = 0; w < 2500 && last_committed(err) < 0; w++) usleep(2000);
    double t_first = clock_now();
    int probe_status;
    waitpid(probe, &probe_status, 0);
    long span_us = (long)(0.8e6 * (clock_now() - t_first));
    if (span_us < 20000) span_us = 20000;
    int mid_run = 0;
    int64_t prev_run = 0;
    enum { KILLS = 10 };
    for (int k = 1; k <= KILLS; k++) {
        pid_t pid = spawn_recorder(db, err, 1024);
        /* Random moments within the run, measured from its first commit so a
         * slow start (the sanitizer build) does not push the kill before it;
         * a few kills land before the first commit on purpose. */
        for (int w = 0; k % 5 != 0 && w < 2500 && last_committed(err) < 0; w++) usleep(2000);
        usleep((useconds_t)(rand() % span_us));
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        int last = last_committed(err);
        CHECK_MSG(integrity_ok(db), "kill %d: integrity_check failed", k);
        sqlite3 *h;
        sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
        int64_t run_id = scalar(h, "SELECT MAX(run_id) FROM runs", 0);
        if (run_id <= prev_run) { /* killed before the run row was written: nothing to check */
            sqlite3_close(h);
            continue;
        }
        prev_run = run_id;
        long long n = scalar(h, "SELECT COUNT(*) FROM tokens WHERE run_id=?1", run_id);
        /* a position's decisions are one range of packed keys (store/SCHEMA.md) */
        long long partial = scalar(h, "SELECT COUNT(*) FROM tokens t WHERE run_id=?1 AND (SELECT COUNT(*) FROM decision_bits"
                                      " WHERE k BETWEEN ((t.run_id << 48) | (t.pos << 28)) AND ((t.run_id << 48) | ((t.pos + 1) << 28))"
                                      " - 1) <> 16", run_id);
        long long gaps = scalar(h, "SELECT COUNT(*) - (MAX(pos) + 1) FROM tokens WHERE run_id=?1", run_id);
        sqlite3_close(h);
        CHECK_MSG(n >= last + 1, "kill %d: committed up to %d but %lld rows", k, last, n);
        CHECK_MSG(partial == 0, "kill %d: %lld positions with a partial set of heads", k, partial);
        CHECK_MSG(n == 0 || gaps == 0, "kill %d: positions missing", k);
        Err e;
        Store *s = store_open(db, STORE_READ, 1000, &e);
        CHECK_MSG(s != NULL, "kill %d: %s", k, e.msg);
        StoreRunInfo r;
        if (s && store_run_info(s, run_id, &r, &e) == 0) {
            int done = !strcmp(r.status, "done");
            mid_run += !done;
            CHECK_MSG(done || !strcmp(r.status, "interrupted"), "kill %d: status %s", k, r.status);
            CHECK_MSG(!done || n == 1024, "kill %d: done with %lld positions", k, n);
            store_run_info_free(&r);
        }
        store_close(s, NULL);
    }
    CHECK_MSG(mid_run >= 6, "only %d of %d kills landed mid-run", mid_run, KILLS);
    /* The next writer marks every killed run interrupted in the row itself. */
    int st;
    char *out = run("%s runs --db %s --csv", &st, test_bin(), db);
    CHECK(st == 0 && !strstr(out, "running"));
    free(out);
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    store_close(s, NULL);
    sqlite3 *h;
    sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
    CHECK_INT(scalar(h, "SELECT COUNT(*) FROM runs WHERE status='running'", 0), 0);
    sqlite3_close(h);
}

TEST(store_cli_reader_beside_writer) {
    SKIP_UNLESS_SHARED();
    char db[1024], err[1024];
    snprintf(db, sizeof db, "%s", test_tmp("conc.db"));
    snprintf(err, sizeof err, "%s", test_tmp("conc.err"));
    remove_db(db);
    pid_t pid = spawn_recorder(db, err, 1024);
    int queries = 0, failures = 0, status = 0;
    char last_err[600] = "";
    while (waitpid(pid, &status, WNOHANG) == 0) {
        Err e;
        Store *s = store_open(db, STORE_READ, 2000, &e);
        if (!s) { /* the writer has not created the schema yet */
            if (!strstr(e.msg, "No such file") && !strstr(e.msg, "empty database")) failures++, snprintf(last_err, sizeof last_err, "%s", e.msg);
            continue;
        }
        FILE *f = fopen("/dev/null", "w");
        if (store_query(s, "SELECT COUNT(*) FROM decisions; SELECT * FROM layer_rates; SELECT * FROM token_share"
                           " ORDER BY pos DESC LIMIT 3", STORE_FMT_CSV, f, &e))
            failures++, snprintf(last_err, sizeof last_err, "%s", e.msg);
        fclose(f);
        store_close(s, NULL);
        queries++;
    }
    CHECK_INT(WEXITSTATUS(status), 0);
    CHECK_MSG(failures == 0, "%d of %d queries failed: %s", failures, queries, last_err);
    CHECK_MSG(queries >= 5, "only %d queries ran", queries);
}

TEST(store_cli_record_runs_query_export) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("cli.db");
    remove_db(db);
    const char *m = test_stories_model();
    int st;
    char *out = run("%s record --db %s --model %s --prompt 'Once upon a time' --steps 40 --profile --seed 1 "
                    "--policy qada --window 8", &st, test_bin(), db, m);
    CHECK_MSG(st == 0 && !strcmp(out, "1\n"), "record printed: %s", out);
    free(out);
    out = run("%s record --db %s --model %s --prompt 'Once upon a time' --steps 40 --profile --seed 1 --window 8 "
              "--commit-every 7", &st, test_bin(), db, m);
    CHECK_MSG(st == 0 && !strcmp(out, "2\n"), "record printed: %s", out);
    free(out);
    out = run("%s runs --db %s", &st, test_bin(), db);
    CHECK_MSG(st == 0 && strstr(out, "run_id") && strstr(out, "qada") && strstr(out, "done"), "%s", out);
    int lines = 0;
    for (char *p = out; *p; p++) lines += *p == '\n';
    CHECK_INT(lines, 4); /* header, rule, two runs */
    free(out);
    out = run("%s query --db %s 'SELECT run_id, n_tokens, status FROM runs' --csv", &st, test_bin(), db);
    CHECK_MSG(st == 0 && !strcmp(out, "run_id,n_tokens,status\r\n1,40,done\r\n2,40,done\r\n"), "%s", out);
    free(out);
    out = run("%s query --db %s 'SELECT DISTINCT ahascope_version FROM runs' --csv", &st, test_bin(), db);
    char want[64]; /* the version the app passes the store: the program's own */
    snprintf(want, sizeof want, "ahascope_version\r\n%s\r\n", AHASCOPE_VERSION);
    CHECK_MSG(st == 0 && !strcmp(out, want), "%s", out);
    free(out);
    out = run("%s query --db %s --json 'SELECT COUNT(*) AS n FROM decisions WHERE run_id=1'", &st, test_bin(), db);
    CHECK_MSG(st == 0 && !strcmp(out, "[{\"n\":1600}]\n"), "%s", out);
    free(out);
    out = run("%s export --db %s --run 1 --json --out %s", &st, test_bin(), db, test_tmp("run1.json"));
    CHECK(st == 0);
    free(out);
    char *json = test_read_file(test_tmp("run1.json"), NULL);
    cJSON *j = cJSON_Parse(json);
    CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "decisions")) == 1600);
    CHECK(j && !strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run"), "policy")->valuestring, "qada"));
    cJSON_Delete(j);
    free(json);
    out = run("%s export --db %s --run 2 --csv", &st, test_bin(), db);
    CHECK(st == 0 && strncmp(out, "run_id,pos,token_id,piece", 25) == 0);
    free(out);
    out = run("%s compare --db %s --run 1", &st, test_bin(), db);
    CHECK_MSG(st == 0 && strstr(out, "qada per head") && strstr(out, "precision"), "%s", out);
    free(out);
    out = run("%s compare --db %s --run 1 --run 2", &st, test_bin(), db);
    CHECK_MSG(st == 0 && strstr(out, "tokens:") && strstr(out, "differ"), "%s", out);
    free(out);
    out = run("%s merge --out %s %s %s", &st, test_bin(), test_tmp("merged.db"), db, db);
    CHECK_MSG(st == 0 && strstr(out, "as 3..4"), "%s", out);
    free(out);
}

/* Two runs whose tokens diverge: compare prints the diverging tokens side by side. */
TEST(store_cli_compare_diverging_runs) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("diverge.db");
    remove_db(db);
    const char *m = test_stories_model();
    int st;
    for (int seed = 1; seed <= 2; seed++) {
        char *out = run("%s record --db %s --model %s --prompt 'Once upon a time' --steps 40 --seed %d "
                        "--policy local --window 8", &st, test_bin(), db, m, seed);
        CHECK_MSG(st == 0, "record printed: %s", out);
        free(out);
    }
    char *out = run("%s compare --db %s --run 1 --run 2", &st, test_bin(), db);
    CHECK_MSG(st == 0 && strstr(out, "diverge at position") && strstr(out, "token_a"), "%s", out);
    free(out);
}


/* Compare counts only the positions before the two runs' texts part (the
 * first differing token), so the recounts stop there too. */
#define BEFORE_PARTING                                                                                     \
    " AND t.pos < (SELECT COALESCE(MIN(a.pos), 1 << 30) FROM tokens a JOIN tokens b ON b.run_id=2 AND"   \
    " b.pos=a.pos WHERE a.run_id=1 AND a.token_id<>b.token_id)"
/* Two AHA runs at different windows: compare draws the gate flips per head,
 * and its counts are those an independent query over the file gives. */
TEST(store_cli_compare_maps_gate_flips_per_head) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("flips.db");
    remove_db(db);
    const char *m = test_stories_model();
    int st;
    for (int w = 16; w >= 8; w /= 2) {
        char *out = run("%s record --db %s --model %s --prompt 'Once upon a time' --steps 48 --temperature 0 "
                        "--routers engine/routers/stories260K_w16.safetensors --window %d", &st, test_bin(), db, m, w);
        CHECK_MSG(st == 0, "record printed: %s", out);
        free(out);
    }
    sqlite3 *h;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    static const char *const q[2] = {
        "SELECT SUM(x.gate=1 AND y.gate=0) FROM decisions x JOIN decisions y ON y.run_id=2 AND y.pos=x.pos AND"
        " y.layer=x.layer AND y.head=x.head JOIN tokens t ON t.run_id=x.run_id AND t.pos=x.pos"
        " WHERE x.run_id=?1 AND t.n_far>0" BEFORE_PARTING "",
        "SELECT SUM(x.gate=0 AND y.gate=1) FROM decisions x JOIN decisions y ON y.run_id=2 AND y.pos=x.pos AND"
        " y.layer=x.layer AND y.head=x.head JOIN tokens t ON t.run_id=x.run_id AND t.pos=x.pos"
        " WHERE x.run_id=?1 AND t.n_far>0" BEFORE_PARTING ""};
    long long down = scalar(h, q[0], 1), up = scalar(h, q[1], 1);
    long long l0 = scalar(h, "SELECT SUM(x.gate<>y.gate) FROM decisions x JOIN decisions y ON y.run_id=2 AND"
                             " y.pos=x.pos AND y.layer=x.layer AND y.head=x.head JOIN tokens t ON t.run_id=x.run_id"
                             " AND t.pos=x.pos WHERE x.run_id=?1 AND t.n_far>0" BEFORE_PARTING " AND x.layer=0", 1);
    sqlite3_close(h);
    CHECK(down + up > 0); /* halving the window moves some heads */
    char *out = run("%s compare --db %s --run 1 --run 2", &st, test_bin(), db);
    char want[160];
    snprintf(want, sizeof want, "run 1 -> run 2: %lld global->local (-), %lld local->global (+)", down, up);
    CHECK_MSG(st == 0 && strstr(out, want), "want '%s' in: %s", want, out);
    const char *row = strstr(out, "\nL0   ");
    CHECK_MSG(row != NULL, "%s", out);
    long long d0 = -1, u0 = -1;
    if (row) {
        CHECK_INT((int)strspn(row + 6, ".0123456789"), 8); /* one character per head of stories260K */
        CHECK(sscanf(row + 6 + 8, "  -%lld +%lld", &d0, &u0) == 2);
    }
    CHECK_MSG(d0 + u0 == l0, "layer 0: %lld + %lld flips, the query counts %lld", d0, u0, l0);
    free(out);
}

/* record --attn-top K: each head's K heaviest far positions of its full
 * attention. With K above every n_far the rows rank all far keys, so their
 * weights sum to the far mass the attention kernel measured for the oracle
 * (a separate computation); ranks go heaviest first; only far keys appear;
 * merge carries them; a replay reads them back. */
TEST(store_cli_record_attn_top_ranks_the_far_keys) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("attn_top.db");
    remove_db(db);
    const char *m = test_stories_model();
    int st;
    /* at most 8 far keys anywhere (positions < 19, window 8, sinks 2), so K = 8 ranks them all */
    char *out = run("%s record --db %s --model %s --prompt 'Once upon a time' --steps 12 --temperature 0 --profile"
                    " --policy local --window 8 --sinks 2 --attn-top 8", &st, test_bin(), db, m);
    CHECK_MSG(st == 0, "record printed: %s", out);
    free(out);
    sqlite3 *h;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    /* every (pos, layer, head) with far keys has exactly n_far rows, summing to the far mass */
    long long bad_count = scalar(h, "SELECT COUNT(*) FROM (SELECT a.pos, a.layer, a.head, COUNT(*) AS c, t.n_far"
                                    " FROM attn_top a JOIN tokens t USING(run_id, pos) WHERE a.run_id=?1"
                                    " GROUP BY a.pos, a.layer, a.head) WHERE c <> n_far", 1);
    long long with_far = scalar(h, "SELECT COUNT(*) FROM decided WHERE run_id=?1", 1);
    long long groups = scalar(h, "SELECT COUNT(*) FROM (SELECT 1 FROM attn_top WHERE run_id=?1"
                                 " GROUP BY pos, layer, head)", 1);
    long long mass_off = scalar(h, "SELECT COUNT(*) FROM (SELECT a.pos, a.layer, a.head, SUM(a.weight) AS s"
                                   " FROM attn_top a WHERE a.run_id=?1 GROUP BY a.pos, a.layer, a.head)"
                                   " JOIN masses USING(pos, layer, head) WHERE run_id=?1"
                                   " AND ABS(s - oracle_mass) > 1e-4 + 1e-3 * oracle_mass", 1);
    long long misordered = scalar(h, "SELECT COUNT(*) FROM attn_top a JOIN attn_top b ON b.run_id=a.run_id AND"
                                     " b.pos=a.pos AND b.layer=a.layer AND b.head=a.head AND b.rank=a.rank+1"
                                     " WHERE a.run_id=?1 AND (b.weight > a.weight OR (b.weight = a.weight AND"
                                     " b.key_pos < a.key_pos))", 1);
    long long not_far = scalar(h, "SELECT COUNT(*) FROM attn_top WHERE run_id=?1 AND (key_pos < 2 OR"
                                  " key_pos > pos - 8)", 1);
    sqlite3_close(h);
    CHECK(with_far > 0);
    CHECK_MSG(groups == with_far, "%lld heads ranked, %lld decisions with far keys", groups, with_far);
    CHECK_INT((int)bad_count, 0);
    CHECK_MSG(mass_off == 0, "%lld heads whose ranked weights do not sum to the oracle's far mass", mass_off);
    CHECK_INT((int)misordered, 0);
    CHECK_INT((int)not_far, 0);
    /* merge keeps them, under the new run id */
    const char *merged = test_tmp("attn_top_merged.db");
    remove_db(merged);
    out = run("%s merge --out %s %s %s", &st, test_bin(), merged, db, db);
    CHECK_MSG(st == 0, "%s", out);
    free(out);
    CHECK(sqlite3_open_v2(merged, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    long long n1 = scalar(h, "SELECT COUNT(*) FROM attn_top WHERE run_id=?1", 1);
    long long n2 = scalar(h, "SELECT COUNT(*) FROM attn_top WHERE run_id=?1", 2);
    sqlite3_close(h);
    CHECK(n1 > 0 && n1 == n2);
    /* out of range */
    out = run("%s record --db %s --model %s --steps 4 --attn-top 9", &st, test_bin(), db, m);
    CHECK_MSG(st == 2 && strstr(out, "--attn-top"), "%s", out);
    free(out);
}

/* A command must fail with `status` (1 a failure, 2 a usage error) and one
 * line "ahascope CMD: ..." naming the problem. */
static void expect_fail(int status, const char *args, const char *want) {
    char cmd[4096], prefix[64];
    snprintf(cmd, sizeof cmd, "%s %s", test_bin(), args);
    snprintf(prefix, sizeof prefix, "ahascope %.*s: ", (int)strcspn(args, " "), args);
    CHECK_REFUSAL(cmd, status, prefix, want, 1);
}

TEST(store_cli_bad_files_and_flags) {
    char args[2048];
    const char *txt = test_tmp("text.db");
    const char *text = "just some text, definitely no database header here....\n";
    test_write_file(txt, text, (long)strlen(text));
    const char *cmds[] = {"runs --db %s", "query --db %s 'SELECT 1'", "export --db %s --run 1 --json",
                          "compare --db %s --run 1"};
    for (int i = 0; i < 4; i++) {
        snprintf(args, sizeof args, cmds[i], txt);
        expect_fail(1, args, "not an SQLite database");
        snprintf(args, sizeof args, cmds[i], test_tmp("absent.db"));
        expect_fail(1, args, "No such file");
    }
    const char *db = test_tmp("newer_cli.db");
    remove_db(db);
    sqlite3 *h;
    sqlite3_open(db, &h);
    sqlite3_exec(h, "PRAGMA application_id=1095254355; PRAGMA user_version=8; CREATE TABLE runs(x);", NULL, NULL, NULL);
    sqlite3_close(h);
    snprintf(args, sizeof args, "runs --db %s", db);
    expect_fail(1, args, "newer");
    snprintf(args, sizeof args, "record --db %s --prompt x", db);
    expect_fail(1, args, "newer");
    snprintf(args, sizeof args, "merge --out %s %s", test_tmp("m2.db"), db);
    expect_fail(1, args, "newer");
    /* the command line alone is wrong: usage errors, exit 2, before any file is opened */
    expect_fail(2, "query --db x.db", "no SQL given");
    expect_fail(2, "query 'SELECT 1'", "--db FILE is required");
    expect_fail(2, "runs", "--db FILE is required");
    expect_fail(2, "runs --db x.db extra", "unexpected argument 'extra'");
    expect_fail(2, "export --db x.db --run 1", "--json or --csv");
    expect_fail(2, "export --db x.db --json", "--run");
    expect_fail(2, "export --run 1 --json", "--db FILE is required");
    expect_fail(2, "compare --db x.db", "--run");
    expect_fail(2, "compare --db x.db --run 0", "--run");
    expect_fail(2, "compare --db x.db --run 1 --predictor nope", "unknown predictor 'nope'");
    expect_fail(2, "runs --db x.db --bogus", "unknown flag");
    expect_fail(2, "record --prompt x", "--db FILE is required");
    expect_fail(2, "record --db x.db --commit-every 0", "--commit-every");
    expect_fail(2, "merge x.db", "--out");
    expect_fail(2, "merge --out x.db", "no input");
    const char *names[] = {"record", "runs", "query", "export", "compare", "merge"};
    for (int i = 0; i < 6; i++) {
        int st;
        char *out = run("%s %s --help", &st, test_bin(), names[i]);
        CHECK_MSG(st == 0 && strstr(out, "usage: ahascope"), "%s --help: %s", names[i], out);
        free(out);
    }
}

TEST(store_cli_query_is_read_only) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("ro_cli.db");
    remove_db(db);
    int st;
    free(run("%s record --db %s --model %s --prompt 'Once' --steps 10 --seed 1", &st, test_bin(), db,
             test_stories_model()));
    CHECK_INT(st, 0);
    char sum_before[65], sum_after[65];
    Err e;
    sha256_file(db, sum_before, &e);
    const char *bad[] = {"INSERT INTO tokens VALUES(1,99,1,\"x\",0,0,0,0)", "UPDATE runs SET status=\"failed\"",
                         "DELETE FROM runs", "DROP TABLE decisions", "CREATE TABLE x(y)",
                         "ATTACH DATABASE \"/tmp/ahascope_attack.db\" AS a", "PRAGMA writable_schema=1",
                         "SELECT load_extension(\"libm.so.6\")"};
    for (int i = 0; i < 8; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s query --db %s '%s'", test_bin(), db, bad[i]);
        CHECK_REFUSAL(cmd, 1, "ahascope query: read-only:", NULL, 0);
    }
    sha256_file(db, sum_after, &e);
    CHECK(!strcmp(sum_before, sum_after));
    CHECK(access("/tmp/ahascope_attack.db", F_OK) != 0);
}

TEST(store_cli_disk_full) {
    SKIP_UNLESS_SHARED();
    char db[1024], err[1024];
    snprintf(db, sizeof db, "%s", test_tmp("full_cli.db"));
    snprintf(err, sizeof err, "%s", test_tmp("full_cli.err"));
    remove_db(db);
    int st;
    char *out = run("%s record --db %s --model %s --tokenizer %s --prompt 'Once' --steps 1024 --profile --max-db-mb 0.3 "
                    "--progress --threads 1 2>%s", &st, test_bin(), db, long_model(),
                    test_stories_tokenizer(), err);
    CHECK_INT(st, 1);
    free(out);
    char *msg = test_read_file(err, NULL);
    CHECK_MSG(msg && strstr(msg, "disk full") && strstr(msg, "full_cli.db"), "%s", msg ? msg : "");
    free(msg);
    int last = last_committed(err);
    CHECK(last > 10);
    CHECK(integrity_ok(db));
    out = run("%s query --db %s 'SELECT COUNT(*) FROM tokens' --csv", &st, test_bin(), db);
    char want[64];
    snprintf(want, sizeof want, "COUNT(*)\r\n%d\r\n", last + 1);
    CHECK_MSG(st == 0 && !strcmp(out, want), "%s vs %s", out, want);
    free(out);
    out = run("%s runs --db %s --csv", &st, test_bin(), db);
    CHECK_MSG(st == 0 && (strstr(out, "failed") || strstr(out, "interrupted")), "%s", out);
    free(out);
}

/* A long prompt is written chunk by chunk as it is fed: the first chunk's
 * positions are committed before the second chunk is fed, so the file keeps
 * pace with the engine (it used to receive the whole prompt after the
 * prefill, and hold every position's trace in memory until then). */
TEST(store_cli_record_writes_the_prefill_as_it_is_fed) {
    SKIP_UNLESS_SHARED();
    char db[1024], err[1024], prompt[4096] = "";
    snprintf(db, sizeof db, "%s", test_tmp("prefill_chunks.db"));
    snprintf(err, sizeof err, "%s", test_tmp("prefill_chunks.err"));
    remove_db(db);
    for (int i = 0; i < 60; i++) strcat(prompt, "Lily saw a big red ball. ");
    int st;
    char *out = run("%s record --db %s --model %s --tokenizer %s --prompt '%s' --steps 200 --temperature 0 "
                    "--progress --threads 1 2>%s", &st, test_bin(), db, long_model(), test_stories_tokenizer(),
                    prompt, err);
    CHECK_INT(st, 0);
    free(out);
    char *msg = test_read_file(err, NULL);
    const char *first = msg ? strstr(msg, "committed pos 63\n") : NULL;
    const char *second = msg ? strstr(msg, " 128/200 tok") : NULL;
    CHECK_MSG(first && second && first < second, "%s", msg ? msg : "");
    free(msg);
    out = run("%s query --db %s 'SELECT COUNT(*) FROM tokens' --csv", &st, test_bin(), db);
    CHECK_MSG(st == 0 && !strcmp(out, "COUNT(*)\r\n200\r\n"), "%s", out);
    free(out);
}

TEST(store_cli_bench_record_reports) {
    int st;
    char *out = run("%s bench --record --shape 260K --runs 1 --prompt-len 4 --decode 12 --json --threads 1", &st, test_bin());
    cJSON *j = cJSON_Parse(out);
    CHECK_MSG(st == 0 && j, "%s", out);
    const char *keys[] = {"rows_per_s", "rows_per_s_batched64", "run_s_plain", "run_s_recorded", "record_overhead"};
    for (int i = 0; j && i < 5; i++) CHECK_MSG(cJSON_IsNumber(cJSON_GetObjectItem(j, keys[i])), "missing %s", keys[i]);
    CHECK(j && cJSON_GetObjectItem(j, "rows_per_s")->valuedouble > 1000);
    CHECK(j && cJSON_GetObjectItem(j, "positions")->valueint == 16);
    CHECK(j && cJSON_GetObjectItem(j, "paired_steps")->valueint == 12);
    cJSON_Delete(j);
    free(out);
}

/* The measurement behind `bench --record`'s record_overhead. Three rounds
 * on a host whose load ends mid-measurement: round 0 all loaded, round 1's
 * plain run loaded and its recorded run not, round 2 quiet. Each side's
 * median taken apart gives 3.2 / 10 - 1 = -68%, a figure that cannot be
 * true (recording never speeds a run up), as the old measurement reported;
 * paired ratios give the true 5% (bench pairs steps ms apart). */
TEST(bench_record_overhead_is_paired) {
    double plain[] = {10, 10, 3}, rec[] = {10.5, 3.2, 3.2};
    double ov = bench_paired_overhead(plain, rec, 3);
    CHECK_MSG(ov > 0.04 && ov < 0.06, "overhead %g", ov);
    CHECK(isnan(bench_paired_overhead(plain, rec, 0)));
}

/* compare splits each head's decisions by the far scores' regime (σ above
 * or at most √(2 ln n_far)) and scores qada and qada_bulk on each side; the
 * frozen share it prints is the file's own count. */
TEST(store_cli_compare_splits_qada_by_regime) {
    SKIP_UNLESS_SHARED();
    const char *db = test_tmp("regime.db");
    remove_db(db);
    const char *m = test_stories_model();
    int st;
    char *out = run("%s record --db %s --model %s --steps 60 --temperature 0 --window 8 --profile", &st, test_bin(), db, m);
    CHECK_MSG(st == 0, "record printed: %s", out);
    free(out);
    out = run("%s compare --db %s --run 1", &st, test_bin(), db);
    CHECK_MSG(st == 0 && strstr(out, "by regime of the far scores") && strstr(out, "frozen_share") &&
                  strstr(out, "qada_frozen_p") && strstr(out, "bulk_calm_r"), "%s", out);
    free(out);
    out = run("%s query --db %s --csv \"SELECT ROUND(AVG(d.far_std > SQRT(2 * LN(t.n_far))), 4) AS s FROM decided d"
              " JOIN tokens t USING(run_id, pos) WHERE d.layer = 0 AND d.head = 0 AND t.n_far > 1\"", &st, test_bin(), db);
    CHECK_MSG(st == 0 && strstr(out, "s\r\n"), "%s", out);
    char want[64];
    double share = st == 0 && strstr(out, "s\r\n") ? atof(strstr(out, "s\r\n") + 3) : -1;
    free(out);
    CHECK(share >= 0 && share <= 1);
    out = run("%s compare --db %s --run 1", &st, test_bin(), db);
    snprintf(want, sizeof want, "%g", share);
    const char *regime = out ? strstr(out, "by regime") : NULL;
    CHECK_MSG(regime && strstr(regime, want), "frozen share %s of L0 H0 not in: %s", want, regime ? regime : "");
    free(out);
}

/* tests/fixtures/store/v2.db (an older schema: merge upgrades it in a
 * scratch copy) with its decisions repeated at `copies` later positions,
 * so that merging it takes a while. */
static void old_schema_input(const char *path, int copies) {
    long n;
    char *bytes = test_read_file("tests/fixtures/store/v2.db", &n);
    remove_db(path);
    CHECK(bytes && test_write_file(path, bytes, n) == 0);
    free(bytes);
    sqlite3 *h;
    char sql[1024];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %d)"
             " INSERT INTO decisions SELECT run_id, pos + 24 * i, layer, head, gate, score, oracle_logit, oracle_err,"
             " qada_logit, qada_bulk_logit, keys_read FROM decisions, k;"
             /* and their positions' rows: a position with decisions and no tokens row is refused (merge checks it) */
             " WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %d)"
             " INSERT INTO tokens SELECT run_id, pos + 24 * i, token_id, piece, is_prompt, logprob, entropy, step_us,"
             " n_far, kv_read FROM tokens, k; UPDATE runs SET n_tokens = (SELECT COUNT(*) FROM tokens);"
             " PRAGMA wal_checkpoint(TRUNCATE)", copies, copies);
    CHECK(sqlite3_open(path, &h) == SQLITE_OK && sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
}

/* How many merge scratch files (copies and their -wal, -shm, -journal) dir holds. */
static int scratch_files(const char *dir) {
    int st;
    char *out = run("ls -a %s | grep -c '^ahascope-merge-'", &st, dir);
    int n = out ? atoi(out) : -1;
    free(out);
    return n;
}

/* `ahascope merge --out OUT IN` with TMPDIR=tmpdir, stderr to err. */
static pid_t spawn_merge(const char *out, const char *in, const char *tmpdir, const char *err) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TMPDIR", tmpdir, 1);
        int nul = open("/dev/null", O_WRONLY), fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(nul, 1), dup2(fd, 2);
        execl(test_bin(), test_bin(), "merge", "--out", out, in, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Merging an old-schema input used to ignore Ctrl-C, and SIGTERM left its
 * scratch copy and WAL in $TMPDIR: now either rolls the input back, removes
 * the scratch and exits 130 in one line; kill -9 leaves the scratch, which
 * the next merge removes. The input is byte for byte unchanged each time. */
TEST(store_cli_merge_stops_on_signals_and_cleans_its_scratch) {
    const char *in = test_tmp("merge_big_v2.db"), *tmpdir = test_tmp("merge_tmpdir");
    const char *err = test_tmp("merge_sig.err"), *out = test_tmp("merge_sig_out.db");
    old_schema_input(in, 500);
    int st;
    free(run("mkdir -p %s", &st, tmpdir));
    char before[65], after[65];
    Err e;
    CHECK(sha256_file(in, before, &e) == 0);
    const int sigs[] = {SIGTERM, SIGINT, SIGKILL};
    for (int i = 0; i < 3; i++) {
        remove_db(out);
        pid_t pid = spawn_merge(out, in, tmpdir, err);
        for (double end = clock_now() + 20; scratch_files(tmpdir) == 0 && clock_now() < end;) usleep(10000);
        if (pid > 0) kill(pid, sigs[i]);
        int status = 0;
        waitpid(pid, &status, 0);
        char *msg = test_read_file(err, NULL);
        int lines = 0;
        for (char *p = msg; p && *p; p++) lines += *p == '\n';
        if (sigs[i] == SIGKILL) {
            CHECK_MSG(WIFSIGNALED(status) && scratch_files(tmpdir) > 0, "kill -9: status %d", status);
        } else {
            CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 130, "signal %d: status %d: %s", sigs[i], status, msg);
            CHECK_MSG(lines == 1 && msg && strstr(msg, "ahascope merge: interrupted while merging") && strstr(msg, in),
                      "signal %d: %s", sigs[i], msg);
            CHECK_INT(scratch_files(tmpdir), 0);
        }
        free(msg);
        sqlite3 *h;
        CHECK(sqlite3_open_v2(out, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
        CHECK_INT(scalar(h, "SELECT COUNT(*) FROM runs WHERE ?1 > 0", 1), 0); /* rolled back: nothing half copied */
        sqlite3_close(h);
        CHECK(sha256_file(in, after, &e) == 0 && !strcmp(before, after));
    }
    /* after kill -9, the next merge removes what the dead one left */
    const char *small = test_tmp("merge_small_v2.db");
    old_schema_input(small, 0);
    char *o = run("TMPDIR=%s %s merge --out %s %s", &st, tmpdir, test_bin(), out, small);
    CHECK_MSG(st == 0, "%s", o);
    free(o);
    CHECK_INT(scratch_files(tmpdir), 0);
}

/* Field 22 of /proc/self/stat, this process's start time: what a live
 * merge's scratch name carries beside its pid. */
static long long self_start(void) {
    char *stat = test_read_file("/proc/self/stat", NULL);
    char *p = stat ? strrchr(stat, ')') : NULL;
    long long v = -1;
    int field = 2;
    for (char *tok = p ? strtok(p + 1, " ") : NULL; tok; tok = strtok(NULL, " "))
        if (++field == 22) { v = atoll(tok); break; }
    free(stat);
    return v;
}

/* Scratch files named for a process that is gone are removed by the next
 * merge; those of a live process, and files merely starting alike, stay. */
TEST(store_cli_merge_removes_stale_scratch_of_dead_processes) {
    const char *tmpdir = test_tmp("merge_stale_tmpdir"), *in = test_tmp("merge_stale_v2.db");
    int st;
    free(run("mkdir -p %s", &st, tmpdir));
    old_schema_input(in, 0);
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char stale[3][1200], keep[2][1200];
    const char *side[] = {"", "-wal", "-journal"};
    for (int i = 0; i < 3; i++) {
        snprintf(stale[i], sizeof stale[i], "%s/ahascope-merge-%d-4242-AbCdEf%s", tmpdir, (int)dead, side[i]);
        CHECK(test_write_file(stale[i], "old", 3) == 0);
    }
    snprintf(keep[0], sizeof keep[0], "%s/ahascope-merge-%d-%lld-XyZxYz", tmpdir, (int)getpid(), self_start());
    snprintf(keep[1], sizeof keep[1], "%s/ahascope-merge-notes.txt", tmpdir);
    for (int i = 0; i < 2; i++) CHECK(test_write_file(keep[i], "live", 4) == 0);
    char before[65], after[65];
    Err e;
    CHECK(sha256_file(in, before, &e) == 0);
    char *o = run("TMPDIR=%s %s merge --out %s %s", &st, tmpdir, test_bin(), test_tmp("merge_stale_out.db"), in);
    CHECK_MSG(st == 0, "%s", o);
    free(o);
    for (int i = 0; i < 3; i++) CHECK_MSG(access(stale[i], F_OK) != 0, "%s is still there", stale[i]);
    for (int i = 0; i < 2; i++) CHECK_MSG(access(keep[i], F_OK) == 0, "%s was removed", keep[i]);
    CHECK_INT(scratch_files(tmpdir), 2);
    CHECK(sha256_file(in, after, &e) == 0 && !strcmp(before, after));
}

/* 0 when the rows of db and want's tables are the same sets (step_us aside). */
static long long rows_differ(const char *db, const char *want) {
    sqlite3 *h;
    long long n = -1;
    char sql[1400];
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -1;
    char *att = sqlite3_mprintf("ATTACH %Q AS w", want);
    if (att && sqlite3_exec(h, att, NULL, NULL, NULL) == SQLITE_OK) {
        snprintf(sql, sizeof sql,
                 "SELECT (SELECT COUNT(*) FROM (SELECT * FROM main.decision_bits EXCEPT SELECT * FROM w.decision_bits))"
                 " + (SELECT COUNT(*) FROM (SELECT * FROM w.decision_bits EXCEPT SELECT * FROM main.decision_bits))"
                 " + (SELECT COUNT(*) FROM (SELECT * FROM main.tokens EXCEPT SELECT * FROM w.tokens))"
                 " + (SELECT COUNT(*) FROM (SELECT * FROM w.tokens EXCEPT SELECT * FROM main.tokens))"
                 " + (SELECT COUNT(*) FROM (SELECT * FROM main.head_totals EXCEPT SELECT * FROM w.head_totals))"
                 " + (SELECT COUNT(*) FROM (SELECT * FROM w.head_totals EXCEPT SELECT * FROM main.head_totals))"
                 " + (SELECT COUNT(*) FROM (SELECT n_tokens FROM main.runs EXCEPT SELECT n_tokens FROM w.runs))");
        n = scalar(h, sql, 0);
    }
    sqlite3_free(att);
    sqlite3_close(h);
    return n;
}

/* Issue 53 §5: a writer committing every N steps held its write
 * transaction across the N steps it computed, so another writer of the
 * file waited on the lock until its wait ran out (two of eight profiled
 * recorders failed). Between commits a writer now holds no lock: here a
 * second writer records a whole run while the first is between commits,
 * waiting at most 100 ms (it needs no wait at all), with no clock read;
 * and what the first commits is the rows a writer committing each step
 * writes. */
TEST(store_cli_a_writer_between_commits_holds_no_lock) {
    char db[1024], want[1024];
    snprintf(db, sizeof db, "%s", test_tmp("nolock.db"));
    snprintf(want, sizeof want, "%s", test_tmp("nolock_want.db"));
    remove_db(db);
    test_db_record(want, 2, 3, 9);
    Err e = {0};
    Store *w1 = store_open(db, STORE_WRITE, 2000, &e);
    CHECK_MSG(w1 != NULL, "%s", e.msg);
    if (!w1) return;
    store_set_commit_every(w1, 4);
    StoreRunInfo r1, r2;
    test_run_info(&r1, 2, 3);
    CHECK(store_run_begin(w1, &r1, &e) == 0);
    for (int p = 0; p < 9; p++) {
        StepTrace *t = trace_new(2, 3);
        t->pos = p, t->token = p + 1, t->n_far = p > 4 ? p - 4 : 0, t->n_kv_heads = 3;
        for (int i = 0; i < 6; i++) t->gate[i] = (int8_t)((i + p) % 2), t->score[i] = 0.25f * (i % 4);
        CHECK_MSG(store_write_step(w1, r1.run_id, t, NULL, &e) == 0, "w1: %s", e.msg);
        trace_free(t);
        if (p != 5) continue; /* one step past a commit: the first writer has steps pending */
        Store *w2 = store_open(db, STORE_WRITE, 100, &e);
        CHECK_MSG(w2 != NULL, "second writer: %s", e.msg);
        test_run_info(&r2, 2, 3);
        int ok = w2 && store_run_begin(w2, &r2, &e) == 0;
        StepTrace *u = trace_new(2, 3);
        for (int q = 0; ok && q < 3; q++) u->pos = q, ok = store_write_step(w2, r2.run_id, u, NULL, &e) == 0;
        trace_free(u);
        CHECK_MSG(ok && store_run_end(w2, r2.run_id, "done", &e) == 0, "second writer, between the first's commits: %s",
                  e.msg);
        CHECK(store_close(w2, &e) == 0);
    }
    CHECK(store_run_end(w1, r1.run_id, "done", &e) == 0);
    CHECK(store_close(w1, &e) == 0);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM tokens WHERE run_id = 2"), 3);
    test_db_exec(db, "DELETE FROM decision_bits WHERE k >= 2 << 48; DELETE FROM tokens WHERE run_id = 2;"
                     " DELETE FROM head_totals WHERE run_id = 2; DELETE FROM runs WHERE run_id = 2");
    CHECK_INT(rows_differ(db, want), 0);
}

/* Eight profiled recorders into one file, each committing every 32 steps,
 * all at once: every one finishes (none waits past its lock wait). */
TEST(store_cli_eight_recorders_into_one_file) {
    char db[1024], err[8][1100];
    snprintf(db, sizeof db, "%s", test_tmp("eight.db"));
    remove_db(db);
    const char *model = long_model();
    pid_t pid[8];
    for (int i = 0; i < 8; i++) {
        snprintf(err[i], sizeof err[i], "%s", test_tmp("eight.err"));
        snprintf(err[i] + strlen(err[i]), sizeof err[i] - strlen(err[i]), "%d", i);
        pid[i] = fork();
        if (pid[i] == 0) {
            int fd = open(err[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(fd, 2), dup2(open("/dev/null", O_WRONLY), 1);
            execl(test_bin(), test_bin(), "record", "--db", db, "--model", model, "--tokenizer",
                  test_stories_tokenizer(), "--prompt", "Once upon a time", "--steps", "96", "--profile", "--threads",
                  "1", "--commit-every", "32", "--seed", "3", (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < 8; i++) {
        int st = -1;
        waitpid(pid[i], &st, 0);
        char *why = test_read_file(err[i], NULL);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "recorder %d: status %d: %s", i, st, why ? why : "");
        free(why);
    }
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(*) FROM runs WHERE status = 'done'"), 8);
    CHECK_INT(test_db_scalar(db, "SELECT COUNT(DISTINCT n_tokens) FROM runs"), 1);
    CHECK(integrity_ok(db));
}
